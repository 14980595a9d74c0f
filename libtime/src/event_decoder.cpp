// Table-driven decoding of one event; the exact mirror of libdump's generated shims.
#include <algorithm>
#include <bit>
#include <string>
#include <vector>

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
    prev += in.read_svarint();
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
  std::uint8_t zigzag = 0;  // 1 for Coding::value: the shift that undoes zigzag
  std::uint8_t run = 0;     // ids and values from this step on (0: not one)
};

constexpr bool is_scalar(Coding c) noexcept { return c == Coding::id || c == Coding::value; }

// Counts the runs of ids and values: the decoder reads a run without bounds checks when the
// body has room for all of it (kMaxVarintBytes each).
void mark_runs(std::vector<Step>& steps) {
  std::uint8_t run = 0;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    run = is_scalar(it->coding) ? static_cast<std::uint8_t>(std::min(run + 1, 255)) : 0;
    it->run = run;
    it->zigzag = it->coding == Coding::value ? 1 : 0;
  }
}

// Each function's steps, worked out once from the table: the first `inputs` steps are the
// inputs in parameter order, the rest the outputs (read only when the call succeeded). Saves
// the per-parameter role dispatch. `unset` lists the parameters no step fills (opaque ones),
// which decode as absent.
struct Plan {
  std::uint16_t params = 0;
  std::size_t inputs = 0;
  std::vector<Step> steps;
  std::vector<std::uint16_t> unset;
};

constexpr unsigned kExtrasBit = 63;  // in Event::stale
constexpr std::uint64_t kExtrasStale = std::uint64_t{1} << kExtrasBit;

struct Plans {
  std::vector<Plan> by_id;
  std::uint16_t max_params = 0;
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
      // Runs stop where the outputs start: those are not read after a failed call.
      mark_runs(inputs);
      mark_runs(outputs);
      plan.inputs = inputs.size();
      plan.steps = std::move(inputs);
      plan.steps.insert(plan.steps.end(), outputs.begin(), outputs.end());
      t.max_params = std::max(t.max_params, plan.params);
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
      default:
        throw Error("unknown extra tag " + std::to_string(static_cast<unsigned>(tag)));
    }
  }
}

// The body column is walked with a bare pointer that the decoding loop keeps in a register,
// where a ByteReader's position would be reloaded after every store into the Event (a
// std::size_t may alias an Event field). Anything but a one- or two-byte varint goes to the
// ByteReader, with its checks and messages; the pointer goes by value so it never escapes.
struct Varint {
  std::uint64_t value;
  const std::byte* next;
};

[[gnu::noinline]] Varint uvarint_slow(ByteReader& r, const std::byte* base, const std::byte* p) {
  r.seek(static_cast<std::size_t>(p - base));
  const std::uint64_t v = r.read_uvarint();
  return {v, base + r.position()};
}

void clear_arg(ArgValue& a) {
  a.present = false;
  a.scalar = 0;
  a.real = 0;
  a.flags = 0;
  a.list.clear();
  a.remote.clear();
  a.requests.clear();
  a.statuses.clear();
  a.text.clear();
}

// Makes args[0, n) hold nothing but possibly stale present/scalar fields (which every step
// and the unset list overwrite). Only the entries marked stale are cleared: the vectors are
// reused between events, never shrunk, so decoding allocates nothing in the steady state.
void reset_args(Event& ev, std::size_t n) {
  if (ev.args.size() < n) ev.args.resize(n);
  if (n >= kExtrasBit) {  // no such function today; clear all rather than track
    for (std::size_t i = 0; i < n; ++i) clear_arg(ev.args[i]);
    return;
  }
  const std::uint64_t mask = (std::uint64_t{1} << n) - 1;
  for (std::uint64_t bits = ev.stale & mask; bits != 0; bits &= bits - 1)
    clear_arg(ev.args[static_cast<std::size_t>(std::countr_zero(bits))]);
  ev.stale &= ~mask;
}

void clear_extras(Event& ev) {
  ev.payloads.clear();
  ev.send_hashes.clear();
  ev.signatures.clear();
  ev.callsite.reset();
  ev.counters.clear();
  ev.stall_ns = 0;
  ev.attribute.reset();
  ev.neighbours.reset();
  ev.stale &= ~kExtrasStale;
}

// Any coding but id, value and nothing, through the ByteReader; marks the argument stale. Returns
// where the body goes on.
[[gnu::noinline]] const std::byte* read_other(ByteReader& r, const std::byte* base,
                                              const std::byte* p, Step step, Event& ev) {
  ArgValue& a = ev.args[step.param];
  if (step.param < kExtrasBit) ev.stale |= std::uint64_t{1} << step.param;
  ByteReader local = r;  // in registers, unlike the column reader
  local.seek(static_cast<std::size_t>(p - base));
  read_arg(local, step.coding, a, ev);
  return base + local.position();
}

// Stores a decoded id or value (zigzag undone for values, without a branch).
inline void set_scalar(ArgValue& a, const Step& step, std::uint64_t v) {
  a.present = true;
  a.scalar = static_cast<std::int64_t>((v >> step.zigzag) ^ (~(v & step.zigzag) + 1));
}

// Reads `steps` from the body at `in`; returns where the body goes on.
const std::byte* read_steps(const Step* step, std::size_t n, ByteReader& reader,
                            const std::byte* base, const std::byte* in, const std::byte* end,
                            Event& ev) {
  ArgValue* const args = ev.args.data();
  const Step* const last = step + n;
  while (step != last) {
    if (step->run == 0) {
      if (step->coding == Coding::nothing) {
        args[step->param].present = true;
        args[step->param].scalar = 0;
      } else {
        in = read_other(reader, base, in, *step, ev);
      }
      ++step;
      continue;
    }
    std::size_t run = step->run;
    if (static_cast<std::size_t>(end - in) < kMaxVarintBytes * run) run = 0;
    if (run == 0) {
      // Near the end of the body: one at a time, bounds-checked.
      std::uint64_t v = 0;
      if (in != end && static_cast<std::uint8_t>(in[0]) < 0x80) {
        v = static_cast<std::uint8_t>(in[0]);
        in += 1;
      } else {
        const Varint slow = uvarint_slow(reader, base, in);
        v = slow.value;
        in = slow.next;
      }
      set_scalar(args[step->param], *step, v);
      ++step;
      continue;
    }
    // A run of ids and values with room for all of it: no bounds checks.
    for (const Step* stop = step + run; step != stop; ++step) {
      std::uint64_t v = static_cast<std::uint8_t>(in[0]);
      if (v < 0x80) {
        in += 1;
      } else if (static_cast<std::uint8_t>(in[1]) < 0x80) {
        v = (v & 0x7fu) | (std::uint64_t{static_cast<std::uint8_t>(in[1])} << 7);
        in += 2;
      } else {
        const Varint slow = uvarint_slow(reader, base, in);
        v = slow.value;
        in = slow.next;
      }
      set_scalar(args[step->param], *step, v);
    }
  }
  return in;
}

}  // namespace

EventColumns EventColumns::of(std::span<const std::byte> chunk) {
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
  const std::uint64_t gap = columns.gap.read_uvarint();
  const std::uint64_t duration = columns.duration_reader().read_uvarint();
  const std::uint64_t overhead = columns.overhead_reader().read_uvarint();
  ByteReader& reader = columns.body;
  const std::byte* const base = reader.bytes().data();
  const std::byte* in = base + reader.position();
  const std::byte* const end = base + reader.bytes().size();
  // One- and two-byte varints inline (the head is always two bytes); the rest out of line.
  const auto uvarint = [&]() -> std::uint64_t {
    if (end - in >= 2) {
      const auto b0 = static_cast<std::uint8_t>(in[0]);
      if (b0 < 0x80) {
        in += 1;
        return b0;
      }
      const auto b1 = static_cast<std::uint8_t>(in[1]);
      if (b1 < 0x80) {
        in += 2;
        return (b0 & 0x7fu) | (std::uint64_t{b1} << 7);
      }
    }
    const Varint v = uvarint_slow(reader, base, in);
    in = v.next;
    return v.value;
  };
  const std::uint64_t head = uvarint();
  const auto id = head >> event_format::kHeadFlagBits;
  const Plans& all = plans();
  if (id >= all.by_id.size())
    throw Error("unknown MPI function id " + std::to_string(id) + " (trace from another MPI?)");
  const Plan& plan = all.by_id[id];
  const std::int64_t rc = (head & event_format::kHasError) ? zigzag_decode(uvarint()) : 0;
  ev.function = static_cast<std::uint16_t>(id);
  ev.start_ns = prev_end_ns + gap;
  ev.end_ns = ev.start_ns + duration;
  ev.overhead_ns = overhead;
  ev.rc = rc;
  reset_args(ev, plan.params);
  if (ev.stale & kExtrasStale) clear_extras(ev);
  ArgValue* const args = ev.args.data();
  for (const std::uint16_t i : plan.unset) {
    args[i].present = false;
    args[i].scalar = 0;
  }
  if (rc == 0) {
    in = read_steps(plan.steps.data(), plan.steps.size(), reader, base, in, end, ev);
  } else {
    in = read_steps(plan.steps.data(), plan.inputs, reader, base, in, end, ev);
    for (std::size_t i = plan.inputs; i < plan.steps.size(); ++i) {
      args[plan.steps[i].param].present = false;
      args[plan.steps[i].param].scalar = 0;
    }
  }
  ByteReader local = reader;  // in registers, unlike the column reader
  local.seek(static_cast<std::size_t>(in - base));
  if (head & event_format::kHasExtras) {
    ev.stale |= kExtrasStale;
    read_extras(local, payload_offset, ev);
  }
  reader = local;
}

}  // namespace encore
