#include "encore/event_text.hpp"

#include <array>

#include <fmt/format.h>
#include <mpi.h>

#include "encore/event_format.hpp"

namespace encore {
namespace {

using event_format::BufFlag;

constexpr std::size_t kMaxItems = 8;  // arrays are abbreviated after this many items

std::string_view kind_prefix(HandleKind kind) {
  switch (kind) {
    case HandleKind::comm:
      return "comm";
    case HandleKind::group:
      return "group";
    case HandleKind::datatype:
      return "type";
    case HandleKind::op:
      return "op";
    case HandleKind::info:
      return "info";
    case HandleKind::errhandler:
      return "errhandler";
    case HandleKind::win:
      return "win";
    case HandleKind::file:
      return "file";
    case HandleKind::message:
      return "message";
    case HandleKind::session:
      return "session";
    case HandleKind::request:
      return "request";
  }
  return "handle";
}

std::string_view null_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::comm:
      return "MPI_COMM_NULL";
    case HandleKind::group:
      return "MPI_GROUP_NULL";
    case HandleKind::datatype:
      return "MPI_DATATYPE_NULL";
    case HandleKind::op:
      return "MPI_OP_NULL";
    case HandleKind::info:
      return "MPI_INFO_NULL";
    case HandleKind::errhandler:
      return "MPI_ERRHANDLER_NULL";
    case HandleKind::win:
      return "MPI_WIN_NULL";
    case HandleKind::file:
      return "MPI_FILE_NULL";
    case HandleKind::message:
      return "MPI_MESSAGE_NULL";
    case HandleKind::session:
      return "MPI_SESSION_NULL";
    case HandleKind::request:
      return "MPI_REQUEST_NULL";
  }
  return "NULL";
}

std::string peer_name(std::int64_t v) {
  if (v == MPI_PROC_NULL) return "MPI_PROC_NULL";
  if (v == MPI_ANY_SOURCE) return "MPI_ANY_SOURCE";
  if (v == MPI_ROOT) return "MPI_ROOT";
  return std::to_string(v);
}

std::string tag_name(std::int64_t v) {
  if (v == MPI_ANY_TAG) return "MPI_ANY_TAG";
  return std::to_string(v);
}

std::string value_name(std::int64_t v) {
  if (v == MPI_UNDEFINED) return "MPI_UNDEFINED";
  return std::to_string(v);
}

// "[a,b,c,...+12]" from a list rendered item by item.
template <class List, class Render>
std::string list_text(const List& list, Render render) {
  std::string out = "[";
  std::size_t i = 0;
  for (const auto& item : list) {
    if (i == kMaxItems) {
      out += fmt::format(",...+{}", list.size() - kMaxItems);
      break;
    }
    if (i > 0) out += ',';
    out += render(item);
    ++i;
  }
  out += ']';
  return out;
}

std::string quote_text(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out + '"';
}

// MPI sets MPI_ERROR only in statuses returned by multiple-completion calls (Waitall, ...):
// elsewhere the field holds whatever the program's status held, so it is not shown.
std::string status_text(const StatusRecord& s, bool with_error) {
  std::string out = (s.bits & event_format::kStatusIgnored) ? "IGNORE{" : "{";
  out += fmt::format("src={} tag={} {}B", peer_name(s.source), tag_name(s.tag), s.bytes);
  if (with_error && s.error != 0) out += fmt::format(" err={}", s.error);
  if (s.bits & event_format::kStatusCancelled) out += " cancelled";
  return out + '}';
}

std::string request_text(const RequestRef& r, const Event& ev) {
  if (r.null) return "MPI_REQUEST_NULL";
  if (r.thread != ev.thread) return fmt::format("req@t{}#{}", r.thread, r.event);
  return fmt::format("req@#{}", r.event);
}

std::string members_text(const std::vector<std::int64_t>& members) {
  return list_text(members,
                   [](std::int64_t m) { return m < 0 ? std::string("?") : std::to_string(m); });
}

// The text of one argument, or empty if it is not worth showing.
std::string arg_text(const ParamInfo& p, const ArgValue& a, const Event& ev) {
  switch (p.role) {
    case Role::opaque:
      return {};
    case Role::buf_in:
    case Role::buf_out:
    case Role::buf_inout:
      switch (static_cast<BufFlag>(a.scalar)) {
        case BufFlag::in_place:
          return "MPI_IN_PLACE";
        case BufFlag::bottom:
          return "MPI_BOTTOM";
        case BufFlag::absent:
          return "(absent)";
        default:
          return {};
      }
    case Role::count:
    case Role::aint:
    case Role::int_out:
    case Role::aint_out:
    case Role::ret_aint:
      return std::to_string(a.scalar);
    case Role::value:
      return value_name(a.scalar);
    case Role::peer:
    case Role::root:
      return peer_name(a.scalar);
    case Role::tag:
      return tag_name(a.scalar);
    case Role::int_array:
    case Role::int_array_out:
    case Role::aint_array:
    case Role::aint_array_out:
      return list_text(a.list, [](std::int64_t v) { return std::to_string(v); });
    case Role::datatype_array:
      return list_text(a.list, [](std::int64_t v) { return handle_name(HandleKind::datatype, v); });
    case Role::comm:
    case Role::comm_free:
    case Role::group:
    case Role::group_free:
    case Role::datatype:
    case Role::datatype_out:
    case Role::datatype_inout:
    case Role::datatype_free:
    case Role::op:
    case Role::op_out:
    case Role::op_free:
    case Role::handle:
    case Role::handle_out:
    case Role::handle_free:
      return handle_name(p.handle_kind, a.scalar);
    case Role::comm_out: {
      std::string out = handle_name(HandleKind::comm, a.scalar);
      if (a.scalar != event_format::kNullId) {
        out += members_text(a.list);
        if (a.flags & 1) out += "<->" + members_text(a.remote);
      }
      return out;
    }
    case Role::group_out: {
      std::string out = handle_name(HandleKind::group, a.scalar);
      if (a.scalar != event_format::kNullId) out += members_text(a.list);
      return out;
    }
    case Role::request_out:
      return fmt::format("req@#{}", ev.index);
    case Role::request:
    case Role::request_inout:
      return a.requests.empty() ? std::string("?") : request_text(a.requests.front(), ev);
    case Role::request_array:
      return list_text(a.requests, [&](const RequestRef& r) { return request_text(r, ev); });
    case Role::status_in:
    case Role::status_out:
      return a.statuses.empty() ? std::string("?") : status_text(a.statuses.front(), false);
    case Role::status_array:
      return list_text(a.statuses, [](const StatusRecord& st) { return status_text(st, true); });
    case Role::string_in:
    case Role::string_out:
      return quote_text(a.text);
    case Role::ret_double:
      return fmt::format("{:.9g}", a.real);
  }
  return {};
}

}  // namespace

std::string handle_name(HandleKind kind, std::int64_t id) {
  if (id == event_format::kNullId) return std::string(null_name(kind));
  if (id == event_format::kUnknownId) return fmt::format("{}#?", kind_prefix(kind));
  if (id >= static_cast<std::int64_t>(event_format::kFirstPredefinedId) &&
      id < static_cast<std::int64_t>(event_format::kFirstDynamicId)) {
    const auto predefined = predefined_handles(kind);
    const auto i = static_cast<std::size_t>(id - event_format::kFirstPredefinedId);
    if (i < predefined.size()) return predefined[i].name;
  }
  return fmt::format("{}#{}", kind_prefix(kind), id);
}

std::string describe_args(const Event& ev) {
  const FunctionInfo& f = ev.info();
  std::string out;
  const auto add = [&](std::string_view piece) {
    if (!out.empty()) out += ' ';
    out += piece;
  };
  if (!f.modelled) add("(opaque)");
  for (std::size_t i = 0; i < f.params.size() && i < ev.args.size(); ++i) {
    const ParamInfo& p = f.params[i];
    const ArgValue& a = ev.args[i];
    if (!a.present && p.role != Role::request_out) continue;
    if (p.role == Role::request_out && ev.rc != 0) continue;
    const std::string text = arg_text(p, a, ev);
    if (text.empty()) continue;
    if (p.role == Role::ret_aint || p.role == Role::ret_double)
      add("-> " + text);
    else
      add(fmt::format("{}={}", p.name, text));
  }
  if (ev.rc != 0) add(fmt::format("rc={}", ev.rc));
  if (!ev.payloads.empty()) {
    // Slots (request array indices) only matter for completion calls such as MPI_Waitall.
    bool slots = false;
    for (const PayloadRef& p : ev.payloads) slots = slots || p.slot != 0;
    std::string recv = "recv";
    for (std::size_t i = 0; i < ev.payloads.size(); ++i) {
      const PayloadRef& p = ev.payloads[i];
      recv += i == 0 ? " " : "+";
      if (slots) recv += fmt::format("[{}]", p.slot);
      recv += fmt::format("{}B", p.bytes);
    }
    add(recv);
  }
  for (const SendHash& h : ev.send_hashes)
    add(fmt::format("sent {}B hash={:016x}", h.bytes, h.hash));
  for (const SendHash& h : ev.contribution_hashes)
    add(fmt::format("contributed {}B hash={:016x}", h.bytes, h.hash));
  if (ev.attribute) add(fmt::format("value={}", *ev.attribute));
  if (const auto& n = ev.neighbours) {
    const auto ints = [](const std::vector<std::int64_t>& v) {
      return list_text(v, [](std::int64_t x) { return std::to_string(x); });
    };
    add("in=" + ints(n->sources) + " out=" + ints(n->destinations));
    if (n->weighted)
      add("in_weights=" + ints(n->source_weights) + " out_weights=" + ints(n->dest_weights));
  }
  if (ev.callsite) add(fmt::format("site={}", *ev.callsite));
  if (ev.stall_ns != 0) add(fmt::format("stall={}", format_duration(ev.stall_ns)));
  if (ev.first_read_ns != 0) add(fmt::format("first_read={}", format_duration(ev.first_read_ns)));
  if (!ev.counters.empty())
    add("counters=" + list_text(ev.counters, [](std::uint64_t c) { return std::to_string(c); }));
  return out;
}

std::string describe_event(std::uint32_t rank, const Event& ev) {
  std::string line =
      fmt::format("r{} t{} #{} {}  {:.6f} ms +{}", rank, ev.thread, ev.index, ev.info().name,
                  static_cast<double>(ev.start_ns) / 1e6, format_duration(ev.end_ns - ev.start_ns));
  const std::string args = describe_args(ev);
  if (!args.empty()) line += "  " + args;
  return line;
}

std::string hex_dump(std::span<const std::byte> bytes, std::string_view indent) {
  std::string out;
  for (std::size_t row = 0; row < bytes.size(); row += 16) {
    out += fmt::format("{}{:04x} ", indent, row);
    std::string ascii;
    for (std::size_t k = 0; k < 16; ++k) {
      if (row + k < bytes.size()) {
        const auto b = std::to_integer<unsigned>(bytes[row + k]);
        out += fmt::format(" {:02x}", b);
        ascii += b >= 0x20 && b < 0x7f ? static_cast<char>(b) : '.';
      } else {
        out += "   ";
      }
    }
    out += fmt::format("  |{}|\n", ascii);
  }
  return out;
}

std::string format_duration(std::uint64_t ns) {
  const auto d = static_cast<double>(ns);
  if (ns < 1000) return fmt::format("{}ns", ns);
  if (ns < 1'000'000) return fmt::format("{:.{}f}us", d / 1e3, d < 1e4 ? 2 : d < 1e5 ? 1 : 0);
  if (ns < 1'000'000'000) return fmt::format("{:.{}f}ms", d / 1e6, d < 1e7 ? 2 : d < 1e8 ? 1 : 0);
  return fmt::format("{:.3f}s", d / 1e9);
}

std::string format_bytes(std::uint64_t bytes) {
  const auto b = static_cast<double>(bytes);
  if (bytes < 10'000) return fmt::format("{}B", bytes);
  if (bytes < 10'000ull << 10) return fmt::format("{:.1f}KiB", b / 1024);
  if (bytes < 10'000ull << 20) return fmt::format("{:.1f}MiB", b / (1024.0 * 1024));
  return fmt::format("{:.1f}GiB", b / (1024.0 * 1024 * 1024));
}

}  // namespace encore
