// Table-driven encoding of one event body: the exact inverse of event_decoder.cpp, for the
// writers that start from decoded Events (replay profile, predictor, test traces).
#include <string>

#include "encore/error.hpp"
#include "encore/event_format.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/role_coding.hpp"
#include "encore/varint.hpp"

namespace encore {
namespace {

using event_format::Extra;

void put_members(ByteWriter& w, const std::vector<std::int64_t>& members) {
  w.put_uvarint(members.size());
  std::int64_t prev = -1;
  for (const std::int64_t m : members) {
    w.put_svarint(m - prev);
    prev = m;
  }
}

void put_status(ByteWriter& w, const StatusRecord& s) {
  w.put_uvarint(s.bits);
  w.put_svarint(s.source);
  w.put_svarint(s.tag);
  w.put_uvarint(s.bytes);
  w.put_svarint(s.error);
}

void put_request(ByteWriter& w, const RequestRef& r, const Event& ev) {
  if (r.null) {
    w.put_uvarint(0);
  } else if (r.thread == ev.thread && r.event < ev.index) {  // distance 0 would read as null
    w.put_uvarint((ev.index - r.event) << 1);
  } else {
    w.put_uvarint(1);
    w.put_uvarint(r.thread);
    w.put_uvarint(r.event);
  }
}

template <class T>
const T& single(const std::vector<T>& v, const char* what, const FunctionInfo& f) {
  if (v.size() != 1)
    throw Error(std::string(f.name) + ": expected exactly one " + what + " argument value");
  return v.front();
}

void put_arg(ByteWriter& w, Role role, const ArgValue& a, const Event& ev, const FunctionInfo& f) {
  switch (coding_of(role)) {
    case Coding::nothing:
      break;
    case Coding::id:
      w.put_uvarint(static_cast<std::uint64_t>(a.scalar));
      break;
    case Coding::value:
      w.put_svarint(a.scalar);
      break;
    case Coding::values:
      w.put_uvarint(a.list.size());
      for (const auto v : a.list) w.put_svarint(v);
      break;
    case Coding::ids:
      w.put_uvarint(a.list.size());
      for (const auto v : a.list) w.put_uvarint(static_cast<std::uint64_t>(v));
      break;
    case Coding::new_comm:
      w.put_uvarint(static_cast<std::uint64_t>(a.scalar));
      if (a.scalar != event_format::kNullId) {
        w.put_uvarint(a.flags);
        put_members(w, a.list);
        if (a.flags & 1) put_members(w, a.remote);
      }
      break;
    case Coding::new_group:
      w.put_uvarint(static_cast<std::uint64_t>(a.scalar));
      if (a.scalar != event_format::kNullId) put_members(w, a.list);
      break;
    case Coding::request:
      put_request(w, single(a.requests, "request", f), ev);
      break;
    case Coding::requests:
      w.put_uvarint(a.requests.size());
      for (const auto& r : a.requests) put_request(w, r, ev);
      break;
    case Coding::status:
      put_status(w, single(a.statuses, "status", f));
      break;
    case Coding::statuses:
      w.put_uvarint(a.statuses.size());
      for (const auto& st : a.statuses) put_status(w, st);
      break;
    case Coding::text:
      w.put_uvarint(a.text.size());
      w.put_bytes({reinterpret_cast<const std::byte*>(a.text.data()), a.text.size()});
      break;
    case Coding::real:
      w.put_f64(a.real);
      break;
  }
}

bool has_extras(const Event& e) {
  return !e.payloads.empty() || !e.send_hashes.empty() || !e.signatures.empty() ||
         e.callsite.has_value() || !e.counters.empty() || e.stall_ns != 0 ||
         e.attribute.has_value() || e.neighbours.has_value() || e.first_read_ns != 0 ||
         !e.contribution_hashes.empty();
}

void put_extras(ByteWriter& w, const Event& e) {
  auto tag = [&w](Extra t) { w.put_uvarint(static_cast<std::uint8_t>(t)); };
  // Signatures first: each must precede the first payload that uses its datatype.
  for (const auto& s : e.signatures) {
    tag(Extra::datatype_signature);
    w.put_uvarint(s.datatype);
    w.put_uvarint(s.size);
    w.put_uvarint(s.runs.size());
    for (const auto& [size, repeat] : s.runs) {
      w.put_uvarint(size);
      w.put_uvarint(repeat);
    }
  }
  for (const auto& p : e.payloads) {
    tag(Extra::payload);
    w.put_uvarint(p.slot);
    w.put_uvarint(p.datatype);
    w.put_uvarint(p.count);
    w.put_uvarint(p.bytes);
  }
  for (const auto& h : e.send_hashes) {
    tag(Extra::send_hash);
    w.put_u64(h.hash);
    w.put_uvarint(h.bytes);
  }
  if (e.callsite) {
    tag(Extra::callsite);
    w.put_uvarint(*e.callsite);
  }
  if (!e.counters.empty()) {
    tag(Extra::counters);
    w.put_uvarint(e.counters.size());
    for (const auto c : e.counters) w.put_uvarint(c);
  }
  if (e.stall_ns != 0) {
    tag(Extra::stall);
    w.put_uvarint(e.stall_ns);
  }
  if (e.first_read_ns != 0) {
    tag(Extra::first_read);
    w.put_uvarint(e.first_read_ns);
  }
  for (const auto& h : e.contribution_hashes) {
    tag(Extra::contribution_hash);
    w.put_u64(h.hash);
    w.put_uvarint(h.bytes);
  }
  if (e.attribute) {
    tag(Extra::attribute);
    w.put_svarint(*e.attribute);
  }
  if (const auto& n = e.neighbours) {
    tag(Extra::neighbours);
    w.put_uvarint(n->weighted ? event_format::kNeighboursWeighted : 0);
    const auto side = [&](const std::vector<std::int64_t>& ranks,
                          const std::vector<std::int64_t>& weights) {
      w.put_uvarint(ranks.size());
      for (const auto r : ranks) w.put_svarint(r);
      for (std::size_t i = 0; n->weighted && i < ranks.size(); ++i)
        w.put_svarint(i < weights.size() ? weights[i] : 0);
    };
    side(n->sources, n->source_weights);
    side(n->destinations, n->dest_weights);
  }
  tag(Extra::end);
}

}  // namespace

void encode_event_body(const Event& e, std::vector<std::byte>& out) {
  const auto table = function_table();
  if (e.function >= table.size() || e.function > event_format::kMaxFunctionId)
    throw Error("cannot encode an event of unknown function id " + std::to_string(e.function));
  const FunctionInfo& f = table[e.function];
  if (f.modelled && e.args.size() < f.params.size())
    throw Error(std::string(f.name) + ": event has " + std::to_string(e.args.size()) +
                " argument values for " + std::to_string(f.params.size()) + " parameters");
  ByteWriter w(out);
  const bool extras = has_extras(e);
  const std::uint64_t head = (std::uint64_t{e.function} << event_format::kHeadFlagBits) |
                             (e.rc != 0 ? event_format::kHasError : 0) |
                             (extras ? event_format::kHasExtras : 0);
  std::byte two[2];
  event_format::write_head(static_cast<std::uint32_t>(head), two);
  w.put_bytes(two);
  if (e.rc != 0) w.put_svarint(e.rc);
  if (f.modelled) {
    for (std::size_t i = 0; i < f.params.size(); ++i)
      if (!is_output(f.params[i].role)) put_arg(w, f.params[i].role, e.args[i], e, f);
    if (e.rc == 0) {
      for (std::size_t i = 0; i < f.params.size(); ++i)
        if (is_output(f.params[i].role)) put_arg(w, f.params[i].role, e.args[i], e, f);
    }
  }
  if (extras) put_extras(w, e);
}

}  // namespace encore
