// Table-driven decoding of one event; the exact mirror of libdump's generated shims.
#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "decode_fast.hpp"

#include "encore/error.hpp"
#include "encore/event_format.hpp"
#include "encore/event_reader.hpp"
#include "encore/role_coding.hpp"

namespace encore {
namespace {

using event_format::Extra;

// Arrays in a trace are as long as the program's; this bound only stops garbage lengths from
// allocating without limit (an event is never larger than its chunk anyway).
std::uint64_t checked_length(ByteReader& in, std::uint64_t n) {
  if (n > in.remaining()) throw Error("array length " + std::to_string(n) + " exceeds the chunk");
  return n;
}

void read_members(ByteReader& in, std::vector<std::int64_t>& out) {
  const auto n = checked_length(in, in.read_uvarint());
  out.resize(n);
  std::int64_t prev = -1;
  for (auto& m : out) {
    // Deltas from a damaged chunk may add up past int64: wrapped (defined), then refused as
    // no world rank (members are world ranks, or -1 for MPI_UNDEFINED).
    prev = static_cast<std::int64_t>(static_cast<std::uint64_t>(prev) +
                                     static_cast<std::uint64_t>(in.read_svarint()));
    if (prev < -1 || prev > std::int64_t{UINT32_MAX})
      throw Error("communicator member " + std::to_string(prev) + " is not a world rank");
    m = prev;
  }
}

StatusRecord read_status(ByteReader& in) {
  StatusRecord s;
  s.bits = static_cast<std::uint8_t>(in.read_uvarint());
  s.source = in.read_svarint();
  s.tag = in.read_svarint();
  s.bytes = in.read_uvarint();
  s.error = in.read_svarint();
  return s;
}

RequestRef read_request(ByteReader& in, std::uint16_t thread, std::uint64_t index) {
  RequestRef r;
  const std::uint64_t v = in.read_uvarint();
  if (v == 0) return r;
  r.null = false;
  if ((v & 1) == 0) {
    if ((v >> 1) > index) throw Error("request refers to an event before the stream start");
    r.thread = thread;
    r.event = index - (v >> 1);
  } else {
    r.thread = static_cast<std::uint16_t>(in.read_uvarint());
    r.event = in.read_uvarint();
  }
  return r;
}

// One parameter to read: where it goes and how it is coded. Opaque parameters have no step.
struct Step {
  std::uint16_t param;
  Coding coding;
};

// Each function's steps, worked out once from the table, for the generic path (the generated
// decoders follow the same order): the first `inputs` steps are the inputs in parameter order,
// the rest the outputs (read only when the call succeeded). `unset` lists the parameters no
// step fills (opaque ones), which decode as absent.
struct Plan {
  std::uint16_t params = 0;
  std::size_t inputs = 0;
  std::vector<Step> steps;
  std::vector<std::uint16_t> unset;
};

struct Plans {
  std::vector<Plan> by_id;
};

const Plans& plans() {
  static const Plans table = [] {
    Plans t;
    for (const FunctionInfo& f : function_table()) {
      Plan plan;
      std::vector<Step> inputs, outputs;
      plan.params = static_cast<std::uint16_t>(f.params.size());
      for (std::size_t i = 0; i < f.params.size(); ++i) {
        const Role role = f.params[i].role;
        const auto param = static_cast<std::uint16_t>(i);
        if (!f.modelled || role == Role::opaque) {
          plan.unset.push_back(param);
          continue;
        }
        (is_output(role) ? outputs : inputs).push_back({param, coding_of(role)});
      }
      plan.inputs = inputs.size();
      plan.steps = std::move(inputs);
      plan.steps.insert(plan.steps.end(), outputs.begin(), outputs.end());
      t.by_id.push_back(std::move(plan));
    }
    return t;
  }();
  return table;
}

// Any coding; `a` starts clean but for a stale scalar (see reset_args).
void read_arg(ByteReader& in, Coding coding, ArgValue& a, const Event& ev) {
  a.present = true;
  a.scalar = 0;
  switch (coding) {
    case Coding::nothing:
      break;
    case Coding::id:
      a.scalar = static_cast<std::int64_t>(in.read_uvarint());
      break;
    case Coding::value:
      a.scalar = in.read_svarint();
      break;
    case Coding::values: {
      const auto n = checked_length(in, in.read_uvarint());
      a.list.resize(n);
      for (auto& v : a.list) v = in.read_svarint();
      break;
    }
    case Coding::ids: {
      const auto n = checked_length(in, in.read_uvarint());
      a.list.resize(n);
      for (auto& v : a.list) v = static_cast<std::int64_t>(in.read_uvarint());
      break;
    }
    case Coding::new_comm:
      a.scalar = static_cast<std::int64_t>(in.read_uvarint());
      if (a.scalar != event_format::kNullId) {
        a.flags = in.read_uvarint();
        read_members(in, a.list);
        if (a.flags & 1) read_members(in, a.remote);
      }
      break;
    case Coding::new_group:
      a.scalar = static_cast<std::int64_t>(in.read_uvarint());
      if (a.scalar != event_format::kNullId) read_members(in, a.list);
      break;
    case Coding::request:
      a.requests.push_back(read_request(in, ev.thread, ev.index));
      break;
    case Coding::requests: {
      const auto n = checked_length(in, in.read_uvarint());
      for (std::uint64_t i = 0; i < n; ++i)
        a.requests.push_back(read_request(in, ev.thread, ev.index));
      break;
    }
    case Coding::status:
      a.statuses.push_back(read_status(in));
      break;
    case Coding::statuses: {
      // Grown as read, not sized up front: a status takes 5 bytes or more but 40 in memory.
      const auto n = checked_length(in, in.read_uvarint());
      for (std::uint64_t i = 0; i < n; ++i) a.statuses.push_back(read_status(in));
      break;
    }
    case Coding::text: {
      const auto n = checked_length(in, in.read_uvarint());
      const auto bytes = in.read_bytes(n);
      a.text.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      break;
    }
    case Coding::real:
      a.real = in.read_f64();
      break;
  }
}

// One side of a neighbours extra: uvarint n, n svarint ranks, n svarint weights if weighted.
void read_neighbour_side(ByteReader& in, bool weighted, std::vector<std::int64_t>& ranks,
                         std::vector<std::int64_t>& weights) {
  ranks.resize(checked_length(in, in.read_uvarint()));
  for (auto& r : ranks) r = in.read_svarint();
  weights.resize(weighted ? ranks.size() : 0);
  for (auto& w : weights) w = in.read_svarint();
}

void read_extras(ByteReader& in, std::uint64_t& payload_offset, Event& ev) {
  for (;;) {
    const auto tag = static_cast<Extra>(in.read_uvarint());
    switch (tag) {
      case Extra::end:
        return;
      case Extra::payload: {
        PayloadRef p;
        p.slot = in.read_uvarint();
        p.datatype = in.read_uvarint();
        p.count = in.read_uvarint();
        p.bytes = in.read_uvarint();
        p.offset = payload_offset;
        payload_offset += p.bytes;
        ev.payloads.push_back(p);
        break;
      }
      case Extra::send_hash: {
        SendHash h;
        h.hash = in.read_u64();
        h.bytes = in.read_uvarint();
        ev.send_hashes.push_back(h);
        break;
      }
      case Extra::datatype_signature: {
        DatatypeSignature s;
        s.datatype = in.read_uvarint();
        s.size = in.read_uvarint();
        const auto n = checked_length(in, in.read_uvarint());
        for (std::uint64_t i = 0; i < n; ++i) {
          const auto size = static_cast<std::uint32_t>(in.read_uvarint());
          s.runs.emplace_back(size, in.read_uvarint());
        }
        ev.signatures.push_back(std::move(s));
        break;
      }
      case Extra::callsite:
        ev.callsite = in.read_uvarint();
        break;
      case Extra::counters: {
        const auto n = checked_length(in, in.read_uvarint());
        ev.counters.resize(n);
        for (auto& c : ev.counters) c = in.read_uvarint();
        break;
      }
      case Extra::stall:
        ev.stall_ns += in.read_uvarint();
        break;
      case Extra::attribute:
        ev.attribute = in.read_svarint();
        break;
      case Extra::neighbours: {
        NeighbourLists& n = ev.neighbours.emplace();
        n.weighted = (in.read_uvarint() & event_format::kNeighboursWeighted) != 0;
        read_neighbour_side(in, n.weighted, n.sources, n.source_weights);
        read_neighbour_side(in, n.weighted, n.destinations, n.dest_weights);
        break;
      }
      case Extra::first_read:
        ev.first_read_ns += in.read_uvarint();
        break;
      case Extra::contribution_hash: {
        SendHash h;
        h.hash = in.read_u64();
        h.bytes = in.read_uvarint();
        ev.contribution_hashes.push_back(h);
        break;
      }
      default:
        throw Error("unknown extra tag " + std::to_string(static_cast<unsigned>(tag)));
    }
  }
}

[[gnu::noinline]] void clear_rare_extras(Event& ev) {
  ev.signatures.clear();
  ev.counters.clear();
  ev.attribute.reset();
  ev.neighbours.reset();
  ev.first_read_ns = 0;
  ev.contribution_hashes.clear();
}

// The extras a point-to-point call carries, and the others only when some were read.
[[gnu::always_inline]] inline void clear_extras(Event& ev) {
  ev.payloads.clear();
  ev.send_hashes.clear();
  ev.callsite.reset();
  ev.stall_ns = 0;
  if (ev.stale & decode::kRareExtrasStale) clear_rare_extras(ev);
  ev.stale &= ~(decode::kExtrasStale | decode::kRareExtrasStale);
}

// The generic path, for what the generated decoders leave (a run of ids and values near the end
// of the body): `steps` read one by one, each scalar bounds-checked. Returns where the body goes
// on.
const std::byte* read_steps(const Step* step, std::size_t n, const decode::Body& b,
                            const std::byte* in, Event& ev) {
  for (const Step* const last = step + n; step != last; ++step) {
    ArgValue& a = ev.args[step->param];
    if (step->coding == Coding::nothing) {
      decode::set_nothing(a);
    } else if (step->coding == Coding::id) {
      decode::set_id(a, decode::uv_checked(in, b));
    } else if (step->coding == Coding::value) {
      decode::set_value(a, decode::uv_checked(in, b));
    } else {
      in = decode::read_checked(b, in, step->param, step->coding, ev);
    }
  }
  return in;
}

const std::byte* decode_args_generic(const decode::Body& b, const std::byte* in, bool ok,
                                     Event& ev) {
  const Plan& plan = plans().by_id[ev.function];
  decode::reset_args(ev, plan.params);
  ArgValue* const args = ev.args.data();
  for (const std::uint16_t i : plan.unset) decode::set_absent(args[i]);
  in = read_steps(plan.steps.data(), ok ? plan.steps.size() : plan.inputs, b, in, ev);
  if (!ok) {
    for (std::size_t i = plan.inputs; i < plan.steps.size(); ++i)
      decode::set_absent(args[plan.steps[i].param]);
  }
  return in;
}

// Extras through the ByteReader from p (a tag), to the end tag included.
const std::byte* read_extras_checked(const decode::Body& b, const std::byte* p,
                                     std::uint64_t& payload_offset, Event& ev) {
  ev.stale |= decode::kRareExtrasStale;
  ByteReader local = b.reader;  // in registers, unlike the column reader
  local.seek(static_cast<std::size_t>(p - b.base));
  read_extras(local, payload_offset, ev);
  return b.base + local.position();
}

// The extras a point-to-point call carries (payload, send hash, call site, stall) read
// unchecked while the body has room for the largest of them; the rest, and anything near the
// end of the body, through read_extras.
[[gnu::always_inline]] inline const std::byte* read_extras_fast(const decode::Body& b,
                                                                const std::byte* p,
                                                                std::uint64_t& payload_offset,
                                                                Event& ev) {
  using decode::uv;
  constexpr std::ptrdiff_t kRoom = 5 * kMaxVarintBytes + 8;
  for (;;) {
    if (b.end - p < kRoom) return read_extras_checked(b, p, payload_offset, ev);
    const std::byte* const tag_at = p;
    switch (static_cast<Extra>(uv(p, b))) {
      case Extra::end:
        return p;
      case Extra::payload: {
        PayloadRef r;
        r.slot = uv(p, b);
        r.datatype = uv(p, b);
        r.count = uv(p, b);
        r.bytes = uv(p, b);
        r.offset = payload_offset;
        payload_offset += r.bytes;
        ev.payloads.push_back(r);
        break;
      }
      case Extra::send_hash: {
        SendHash h;
        h.hash = load_le<std::uint64_t>(p);
        p += 8;
        h.bytes = uv(p, b);
        ev.send_hashes.push_back(h);
        break;
      }
      case Extra::callsite:
        ev.callsite = uv(p, b);
        break;
      case Extra::stall:
        ev.stall_ns += uv(p, b);
        break;
      default:
        return read_extras_checked(b, tag_at, payload_offset, ev);
    }
  }
}

// A request reference the body has room for (3 varints).
[[gnu::always_inline]] inline RequestRef request_at(const std::byte*& p, const decode::Body& b,
                                                    const Event& ev) {
  RequestRef r;
  const std::uint64_t v = decode::uv(p, b);
  if (v == 0) return r;
  r.null = false;
  if ((v & 1) == 0) {
    if ((v >> 1) > ev.index) throw Error("request refers to an event before the stream start");
    r.thread = ev.thread;
    r.event = ev.index - (v >> 1);
  } else {
    r.thread = static_cast<std::uint16_t>(decode::uv(p, b));
    r.event = decode::uv(p, b);
  }
  return r;
}

// A status the body has room for (5 varints).
[[gnu::always_inline]] inline StatusRecord status_at(const std::byte*& p, const decode::Body& b) {
  StatusRecord s;
  s.bits = static_cast<std::uint8_t>(decode::uv(p, b));
  s.source = zigzag_decode(decode::uv(p, b));
  s.tag = zigzag_decode(decode::uv(p, b));
  s.bytes = decode::uv(p, b);
  s.error = zigzag_decode(decode::uv(p, b));
  return s;
}

constexpr std::ptrdiff_t kVarintRoom = kMaxVarintBytes;
constexpr std::ptrdiff_t kRequestRoom = 3 * kVarintRoom;
constexpr std::ptrdiff_t kStatusRoom = 5 * kMaxVarintBytes;

// A list argument about to be filled: present, and marked for clearing by a later event.
ArgValue& begin_list(std::uint64_t& stale_mask, Event& ev, std::uint16_t param) {
  if (param < decode::kTrackedArgs) stale_mask |= std::uint64_t{1} << param;
  ArgValue& a = ev.args[param];
  decode::set_nothing(a);
  return a;
}

}  // namespace

namespace decode {

Varint uvarint_slow(const Body& b, const std::byte* p) {
  b.reader.seek(static_cast<std::size_t>(p - b.base));
  const std::uint64_t v = b.reader.read_uvarint();
  return {v, b.base + b.reader.position()};
}

Varint uvarint_long(const std::byte* p) noexcept {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < kMaxVarintBytes; ++i) {
    const std::uint64_t byte = byte_at(p + i);
    if (i == kMaxVarintBytes - 1 && byte > 1) break;  // wider than 64 bits
    v |= (byte & 0x7fu) << (7 * i);
    if (byte < 0x80) return {v, p + i + 1};
  }
  return {0, nullptr};
}

void reset_args(Event& ev, std::size_t n) {
  if (ev.args.size() < n) ev.args.resize(n);
  if (n >= kTrackedArgs) {  // no such function today; clear all rather than track
    for (std::size_t i = 0; i < n; ++i) ev.args[i].clear();
    ev.stale &= kExtrasStale | kRareExtrasStale;
    ev.stale_requests = ev.stale_statuses = 0;
    return;
  }
  const std::uint64_t mask = (std::uint64_t{1} << n) - 1;
  for (std::uint64_t bits = ev.stale & mask; bits != 0; bits &= bits - 1)
    ev.args[std::countr_zero(bits)].clear();
  ev.stale &= ~mask;
  clear_lists(ev, mask);
}

void clear_lists(Event& ev, std::uint64_t mask) {
  ArgValue* const args = ev.args.data();
  for (std::uint64_t bits = ev.stale_requests & mask; bits != 0; bits &= bits - 1)
    args[std::countr_zero(bits)].requests.clear();
  for (std::uint64_t bits = ev.stale_statuses & mask; bits != 0; bits &= bits - 1)
    args[std::countr_zero(bits)].statuses.clear();
  ev.stale_requests &= ~mask;
  ev.stale_statuses &= ~mask;
}

const std::byte* read_checked(const Body& b, const std::byte* p, std::uint16_t param, Coding coding,
                              Event& ev) {
  mark_stale(ev, param);
  ByteReader local = b.reader;  // in registers, unlike the column reader
  local.seek(static_cast<std::size_t>(p - b.base));
  read_arg(local, coding, ev.args[param], ev);
  return b.base + local.position();
}

[[gnu::noinline]] const std::byte* read_request(const Body& b, const std::byte* p,
                                                std::uint16_t param, Event& ev) {
  if (b.end - p < kRequestRoom) return read_checked(b, p, param, Coding::request, ev);
  begin_list(ev.stale_requests, ev, param).requests.push_back(request_at(p, b, ev));
  return p;
}

[[gnu::noinline]] const std::byte* read_status(const Body& b, const std::byte* p,
                                               std::uint16_t param, Event& ev) {
  if (b.end - p < kStatusRoom) return read_checked(b, p, param, Coding::status, ev);
  begin_list(ev.stale_statuses, ev, param).statuses.push_back(status_at(p, b));
  return p;
}

// Arrays: unchecked when the body has room for n of the largest element. That also bounds the
// memory they take by the chunk's size; anything else (a bad length included, for its message)
// goes through read_checked from the start of the argument.
[[gnu::noinline]] const std::byte* read_requests(const Body& b, const std::byte* p,
                                                 std::uint16_t param, Event& ev) {
  const std::byte* q = p;
  if (b.end - q < kVarintRoom) return read_checked(b, p, param, Coding::requests, ev);
  const std::uint64_t n = uv(q, b);
  const auto room = static_cast<std::uint64_t>(b.end - q);
  if (n > room || n * kRequestRoom > room) return read_checked(b, p, param, Coding::requests, ev);
  auto& list = begin_list(ev.stale_requests, ev, param).requests;
  if (list.capacity() < n) list.reserve(n);
  const std::uint16_t thread = ev.thread;
  const std::uint64_t index = ev.index;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t v = uv(q, b);
    if (v == 0) {
      list.push_back(RequestRef{});
    } else if ((v & 1) == 0) {
      if ((v >> 1) > index) throw Error("request refers to an event before the stream start");
      list.push_back(RequestRef{false, thread, index - (v >> 1)});
    } else {
      const auto t = static_cast<std::uint16_t>(uv(q, b));
      list.push_back(RequestRef{false, t, uv(q, b)});
    }
  }
  return q;
}

[[gnu::noinline]] const std::byte* read_statuses(const Body& b, const std::byte* p,
                                                 std::uint16_t param, Event& ev) {
  const std::byte* q = p;
  if (b.end - q < kVarintRoom) return read_checked(b, p, param, Coding::statuses, ev);
  const std::uint64_t n = uv(q, b);
  const auto room = static_cast<std::uint64_t>(b.end - q);
  if (n > room || n * kStatusRoom > room) return read_checked(b, p, param, Coding::statuses, ev);
  auto& list = begin_list(ev.stale_statuses, ev, param).statuses;
  if (list.capacity() < n) list.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) list.push_back(status_at(q, b));
  return q;
}

}  // namespace decode
}  // namespace encore

#include "event_decode_cases.inc"

namespace encore {
namespace {

template <bool kGenerated>
void decode_one(EventColumns& columns, std::uint64_t prev_end_ns, std::uint64_t& payload_offset,
                Event& ev) {
  const std::uint64_t gap = columns.gap.read_uvarint();
  const std::uint64_t duration = columns.duration_reader().read_uvarint();
  const std::uint64_t overhead = columns.overhead_reader().read_uvarint();
  ByteReader& reader = columns.body;
  const std::byte* const base = reader.bytes().data();
  const decode::Body b{reader, base, base + reader.bytes().size()};
  const std::byte* in = base + reader.position();
  const std::uint64_t head = decode::uv_checked(in, b);
  const auto id = head >> event_format::kHeadFlagBits;
  if (id >= fn::kCount)
    throw Error("unknown MPI function id " + std::to_string(id) + " (trace from another MPI?)");
  const std::int64_t rc =
      (head & event_format::kHasError) ? zigzag_decode(decode::uv_checked(in, b)) : 0;
  ev.function = static_cast<std::uint16_t>(id);
  ev.start_ns = prev_end_ns + gap;
  ev.end_ns = ev.start_ns + duration;
  ev.overhead_ns = overhead;
  ev.rc = rc;
  if (ev.stale & decode::kExtrasStale) clear_extras(ev);
  if (kGenerated) decode::clear_all_lists(ev);
  const std::byte* after =
      kGenerated ? decode::decode_args(static_cast<unsigned>(id), b, in, rc == 0, ev) : nullptr;
  if (after == nullptr) after = decode_args_generic(b, in, rc == 0, ev);
  if (head & event_format::kHasExtras) {
    ev.stale |= decode::kExtrasStale;
    after = kGenerated ? read_extras_fast(b, after, payload_offset, ev)
                       : read_extras_checked(b, after, payload_offset, ev);
  }
  reader.seek(static_cast<std::size_t>(after - base));
}

// A time column's uvarint with room for the longest, one and two bytes inline.
[[gnu::always_inline]] inline std::uint64_t time_uv(const std::byte*& p, ByteReader& column) {
  return decode::uv_or(p, [&column](const std::byte* q) {
    const std::byte* const base = column.bytes().data();
    return decode::uvarint_slow(decode::Body{column, base, base + column.bytes().size()}, q);
  });
}

bool has_room(const std::byte* p, const std::byte* end) {
  return end - p >= static_cast<std::ptrdiff_t>(kMaxVarintBytes);
}

}  // namespace

EventColumns EventColumns::of(std::span<const std::byte> chunk) {
  // The generic path's table is built with the first chunk (a replay reads it at start-up),
  // not by the first event near a chunk's end: in a replay, that is a call of the program
  // (some 700 k instructions).
  (void)plans();
  EventColumns c;
  ByteReader whole(chunk);
  const auto layout = whole.read_u8();
  if (layout == event_format::kInterleavedTimes) {
    c.interleaved = true;
    c.gap = ByteReader(whole.read_bytes(whole.read_uvarint()));
  } else if (layout == event_format::kSplitTimes) {
    const auto n_gap = whole.read_uvarint();
    const auto n_duration = whole.read_uvarint();
    const auto n_overhead = whole.read_uvarint();
    c.gap = ByteReader(whole.read_bytes(n_gap));
    c.duration = ByteReader(whole.read_bytes(n_duration));
    c.overhead = ByteReader(whole.read_bytes(n_overhead));
  } else {
    throw Error("unknown events chunk layout " + std::to_string(layout));
  }
  c.body = ByteReader(whole.rest());
  return c;
}

void decode_event(EventColumns& columns, std::uint64_t prev_end_ns, std::uint64_t& payload_offset,
                  Event& ev) {
  decode_one<true>(columns, prev_end_ns, payload_offset, ev);
}

void decode_event_generic(EventColumns& columns, std::uint64_t prev_end_ns,
                          std::uint64_t& payload_offset, Event& ev) {
  decode_one<false>(columns, prev_end_ns, payload_offset, ev);
}

// The hot path of every reader of events: the generated decoders inline here and the columns
// are walked with bare pointers. The time columns' room is checked once per budget of events
// (refill_budget); a repeat, an unknown function id (both heads decode above fn::kCount),
// anything near a column's end and interleaved chunks go through next_slow, on the column
// readers (checked, with their messages).
bool RankEventReader::next(Event& out) {
  if (left_in_chunk_ == 0 && !next_chunk()) return false;
  ThreadPos& pos = *pos_;
  // Read before the stores into `out`, which the compiler must assume may alias them.
  const std::uint64_t index = pos.index;
  const std::uint64_t prev_end = pos.end_ns;
  out.thread = thread_;
  out.index = index;
  const std::byte* const body_start = body_.p;
  bool repeat = false;
  try {
    bool fast = (times_budget_ != 0 || refill_budget()) && has_room(body_.p, body_.end);
    if (fast) {
      const std::byte* const base = columns_.body.bytes().data();
      const decode::Body b{columns_.body, base, body_.end};
      const std::byte* in = body_.p;
      const std::uint64_t head = decode::uv(in, b);
      const auto id = head >> event_format::kHeadFlagBits;
      if (id < fn::kCount) [[likely]] {
        --times_budget_;
        const std::uint64_t gap = time_uv(gap_.p, columns_.gap);
        const std::uint64_t duration = time_uv(duration_.p, columns_.duration);
        const std::uint64_t overhead = time_uv(overhead_.p, columns_.overhead);
        const std::int64_t rc =
            (head & event_format::kHasError) ? zigzag_decode(decode::uv_checked(in, b)) : 0;
        out.function = static_cast<std::uint16_t>(id);
        out.start_ns = prev_end + gap;
        out.end_ns = prev_end + gap + duration;
        out.overhead_ns = overhead;
        out.rc = rc;
        if (out.stale & decode::kExtrasStale) clear_extras(out);
        decode::clear_all_lists(out);
        const std::byte* after =
            decode::decode_args(static_cast<unsigned>(id), b, in, rc == 0, out);
        if (after == nullptr) after = decode_args_generic(b, in, rc == 0, out);
        if (head & event_format::kHasExtras) {
          out.stale |= decode::kExtrasStale;
          extras_p_ = after;
          after = read_extras_fast(b, after, pos.payload, out);
        }
        body_.p = after;
      } else {
        fast = false;
      }
    }
    if (!fast) repeat = next_slow(out);
  } catch (const Error& e) {
    return fail(e);
  }
  if (repeat) {
    last_body_ = {};  // a repeat has no body of its own: consumers that copy bodies re-encode it
  } else {
    // Format 1.2: a repeated poll copies the event before it (event_repeat.hpp).
    if (left_in_chunk_ > 1 && RepeatExpander::at_repeat(body_.p, body_.end)) repeats_.keep(out);
    last_body_ = {body_start, body_.p};
  }
  pos.overhead += out.overhead_ns;
  out.raw_start_ns = out.start_ns + pos.overhead;
  pos.end_ns = out.end_ns;
  pos.index = index + 1;
  if (--left_in_chunk_ == 0) check_chunk_end();
  return true;
}

bool RankEventReader::refill_budget() {
  if (!split_) return false;
  const auto room = [](const Cursor& c) { return static_cast<std::size_t>(c.end - c.p); };
  const std::size_t least = std::min({room(gap_), room(duration_), room(overhead_)});
  // Each event takes at most kMaxVarintBytes of each column.
  times_budget_ =
      static_cast<std::uint32_t>(std::min<std::size_t>(least / kMaxVarintBytes, left_in_chunk_));
  return times_budget_ != 0;
}

bool RankEventReader::next_slow(Event& out) {
  extras_p_ = nullptr;  // not known for events decoded this way
  if (RepeatExpander::at_repeat(body_.p, body_.end)) {
    expand_repeat(out);
    return true;
  }
  decode_checked(out);
  return false;
}

}  // namespace encore
