// Recorded event bodies copied into derived traces with new extras (event_format.hpp).
#include "encore/event_body.hpp"

#include <cstring>

#include "encore/event_format.hpp"
#include "encore/varint.hpp"

namespace encore {
namespace {

using event_format::Extra;

std::size_t extra_size(const Event& ev) {
  std::size_t n = 1;  // the end tag
  for (const auto& s : ev.signatures) {
    n += 1 + uvarint_size(s.datatype) + uvarint_size(s.size) + uvarint_size(s.runs.size());
    for (const auto& [size, repeat] : s.runs) n += uvarint_size(size) + uvarint_size(repeat);
  }
  for (const auto& p : ev.payloads)
    n += 1 + uvarint_size(p.slot) + uvarint_size(p.datatype) + uvarint_size(p.count) +
         uvarint_size(p.bytes);
  for (const auto& h : ev.send_hashes) n += 1 + 8 + uvarint_size(h.bytes);
  for (const auto& h : ev.contribution_hashes) n += 1 + 8 + uvarint_size(h.bytes);
  if (ev.callsite) n += 1 + uvarint_size(*ev.callsite);
  if (!ev.counters.empty()) {
    n += 1 + uvarint_size(ev.counters.size());
    for (const auto c : ev.counters) n += uvarint_size(c);
  }
  if (ev.stall_ns != 0) n += 1 + uvarint_size(ev.stall_ns);
  if (ev.first_read_ns != 0) n += 1 + uvarint_size(ev.first_read_ns);
  return n;
}

// Walks the extras without decoding them; `skip` fails past the end or on a runaway varint.
class ExtrasWalk {
 public:
  ExtrasWalk(std::span<const std::byte> b, std::size_t at) : b_(b), pos_(at) {}
  bool skip(std::size_t varints) {
    for (std::size_t i = 0; i < varints; ++i) {
      std::size_t len = 0;
      for (;;) {
        if (pos_ >= b_.size() || ++len > kMaxVarintBytes) return false;
        if ((static_cast<std::uint8_t>(b_[pos_++]) & 0x80) == 0) break;
      }
    }
    return true;
  }
  bool value(std::uint64_t& v) {
    const std::size_t at = pos_;
    if (!skip(1)) return false;
    v = 0;
    for (std::size_t i = at; i < pos_; ++i)
      v |= std::uint64_t{static_cast<std::uint8_t>(b_[i]) & 0x7fu} << (7 * (i - at));
    return true;
  }
  // Tags are below 0x80: one byte.
  bool tag(std::uint64_t& t) {
    if (pos_ >= b_.size() || (static_cast<std::uint8_t>(b_[pos_]) & 0x80) != 0) return false;
    t = static_cast<std::uint8_t>(b_[pos_++]);
    return true;
  }
  bool bytes(std::size_t n) {
    if (n > b_.size() - pos_) return false;
    pos_ += n;
    return true;
  }
  std::size_t pos() const { return pos_; }

 private:
  std::span<const std::byte> b_;
  std::size_t pos_;
};

// Bytes of v as a uvarint: one compare for the usual one-byte fields.
std::size_t varint_bytes(std::uint64_t v) { return v < 0x80 ? 1 : uvarint_size(v); }

// True when the n bytes at p are one varint: continuation bits on all but the last byte.
bool one_varint(const std::byte* p, std::size_t n) {
  for (std::size_t i = 0; i + 1 < n; ++i)
    if ((static_cast<std::uint8_t>(p[i]) & 0x80) == 0) return false;
  return (static_cast<std::uint8_t>(p[n - 1]) & 0x80) == 0;
}

// Where the extras start in a body whose extras are ev's payload references alone, written
// with the shortest varints; 0 if they are not. Each field is checked where its shortest
// encoding must be (a replayed receive runs this: no general walk).
// The same for the usual receive, one reference: its shortest encoding is built and compared
// with the body's end as a whole (the fields' values are the ones decoded from those bytes,
// so the bytes match exactly when they were written shortest).
std::size_t one_payload_ref_start(std::span<const std::byte> body, const PayloadRef& p) {
  std::byte want[2 + 4 * kMaxVarintBytes];
  std::size_t n = 0;
  want[n++] = static_cast<std::byte>(Extra::payload);
  n += encode_uvarint(p.slot, want + n);
  n += encode_uvarint(p.datatype, want + n);
  n += encode_uvarint(p.count, want + n);
  n += encode_uvarint(p.bytes, want + n);
  want[n++] = static_cast<std::byte>(Extra::end);
  if (n + 2 > body.size()) return 0;  // the 2-byte head comes first
  const std::byte* tail = body.data() + (body.size() - n);
  // Two overlapping 4- or 8-byte compares cover the 6 to 16 bytes of the usual reference.
  const auto same = [&](std::size_t k) {
    std::uint64_t a = 0, b = 0, c = 0, d = 0;
    std::memcpy(&a, tail, k);
    std::memcpy(&b, want, k);
    std::memcpy(&c, tail + n - k, k);
    std::memcpy(&d, want + n - k, k);
    return a == b && c == d;
  };
  const bool match = n <= 8 ? same(4) : n <= 16 ? same(8) : std::memcmp(tail, want, n) == 0;
  return match ? body.size() - n : 0;
}

std::size_t payload_refs_start(std::span<const std::byte> body, const Event& ev) {
  if (ev.payloads.size() == 1) return one_payload_ref_start(body, ev.payloads.front());
  std::size_t extras = 1;
  for (const auto& p : ev.payloads)
    extras += 1 + varint_bytes(p.slot) + varint_bytes(p.datatype) + varint_bytes(p.count) +
              varint_bytes(p.bytes);
  if (extras > body.size() - 2) return 0;
  const std::byte* q = body.data() + (body.size() - extras);
  const auto field = [&q](std::uint64_t v) {
    const std::size_t n = varint_bytes(v);
    const bool ok = one_varint(q, n);
    q += n;
    return ok;
  };
  for (const auto& p : ev.payloads) {
    if (static_cast<Extra>(*q++) != Extra::payload) return 0;
    // All four always: their lengths add up to `extras`, so q stays inside the body.
    if (!(field(p.slot) & field(p.datatype) & field(p.count) & field(p.bytes))) return 0;
  }
  if (static_cast<Extra>(*q) != Extra::end) return 0;
  return body.size() - extras;
}

}  // namespace

std::size_t copy_body_drop_payload_refs(std::span<const std::byte> body, const Event& ev,
                                        std::byte* out) {
  if (body.size() < 2 || !(static_cast<std::uint8_t>(body[0]) & event_format::kHasExtras)) return 0;
  const std::size_t args_end = payload_refs_start(body, ev);
  if (args_end == 0) return 0;
  copy_short(out, body.data(), args_end);
  out[0] = static_cast<std::byte>(static_cast<std::uint8_t>(out[0]) & ~event_format::kHasExtras);
  return args_end;
}

bool copy_body_new_extras(std::span<const std::byte> body, const Event& ev,
                          std::span<const std::uint64_t> counters, std::vector<std::byte>& out) {
  const std::size_t start = out.size();
  out.resize(start + copy_body_bound(body.size(), counters.size()));
  const std::size_t n = copy_body_new_extras(body, ev, counters, out.data() + start);
  out.resize(start + n);
  return n > 0;
}

std::size_t copy_body_new_extras(std::span<const std::byte> body, const Event& ev,
                                 std::span<const std::uint64_t> counters, std::byte* out) {
  if (body.size() < 2) return 0;
  // Nothing to drop and nothing to add (a send, a query): the body as it is. Whatever extras
  // it has decode to send hashes and the call site only (or to empty counters or stall).
  if (counters.empty() && ev.payloads.empty() && ev.signatures.empty() && ev.counters.empty() &&
      ev.stall_ns == 0 && ev.first_read_ns == 0) {
    copy_short(out, body.data(), body.size());
    return body.size();
  }
  const auto flags = static_cast<std::uint8_t>(body[0]) & ((1u << event_format::kHeadFlagBits) - 1);
  // Received data references only, to drop, and nothing to add (a replayed receive): the
  // arguments with the extras flag cleared, once the references are seen to end the body
  // (else, e.g. varints longer than needed, the general walk below).
  if (counters.empty() && ev.signatures.empty() && ev.send_hashes.empty() && !ev.callsite &&
      ev.contribution_hashes.empty() && ev.counters.empty() && ev.stall_ns == 0 &&
      ev.first_read_ns == 0 && (flags & event_format::kHasExtras)) {
    if (const std::size_t args_end = payload_refs_start(body, ev); args_end > 0) {
      copy_short(out, body.data(), args_end);
      out[0] =
          static_cast<std::byte>(static_cast<std::uint8_t>(out[0]) & ~event_format::kHasExtras);
      return args_end;
    }
  }
  std::size_t args_end = body.size();
  // Kept extras (send and contribution hashes, call site) as [begin, end) ranges of `body`: at
  // most a few (more, e.g. an MPI_Alltoallv's blocks: 0, the caller encodes the Event).
  std::size_t kept[8][2];
  std::size_t n_kept = 0;
  if (flags & event_format::kHasExtras) {
    const std::size_t extras = extra_size(ev);
    if (extras > body.size() - 2) return 0;
    args_end = body.size() - extras;
    ExtrasWalk w(body, args_end);
    std::size_t payloads = 0, hashes = 0, signatures = 0, callsites = 0, counter_sets = 0,
                stalls = 0, first_reads = 0, contributions = 0;
    for (;;) {
      const std::size_t item = w.pos();
      std::uint64_t tag = 0;
      if (!w.tag(tag)) return 0;
      bool ok = true;
      bool keep = false;
      switch (static_cast<Extra>(tag)) {
        case Extra::end:
          if (w.pos() != body.size() || payloads != ev.payloads.size() ||
              hashes != ev.send_hashes.size() || signatures != ev.signatures.size() ||
              callsites != (ev.callsite ? 1u : 0u) ||
              counter_sets != (ev.counters.empty() ? 0u : 1u) ||
              stalls != (ev.stall_ns != 0 ? 1u : 0u) ||
              first_reads != (ev.first_read_ns != 0 ? 1u : 0u) ||
              contributions != ev.contribution_hashes.size())
            return 0;
          break;
        case Extra::payload:
          ++payloads;
          ok = w.skip(4);
          break;
        case Extra::send_hash:
          ++hashes;
          keep = true;
          ok = w.bytes(8) && w.skip(1);
          break;
        case Extra::datatype_signature: {
          ++signatures;
          std::uint64_t runs = 0;
          ok = w.skip(2) && w.value(runs) && runs <= body.size() && w.skip(2 * runs);
          break;
        }
        case Extra::callsite:
          ++callsites;
          keep = true;
          ok = w.skip(1);
          break;
        case Extra::counters: {
          ++counter_sets;
          std::uint64_t n = 0;
          ok = w.value(n) && n <= body.size() && w.skip(n);
          break;
        }
        case Extra::stall:
          ++stalls;
          ok = w.skip(1);
          break;
        case Extra::first_read:  // the capture's, not the derived trace's: dropped
          ++first_reads;
          ok = w.skip(1);
          break;
        case Extra::contribution_hash:
          ++contributions;
          keep = true;
          ok = w.bytes(8) && w.skip(1);
          break;
        default:
          return 0;
      }
      if (!ok) return 0;
      if (static_cast<Extra>(tag) == Extra::end) break;
      if (keep) {
        if (n_kept == std::size(kept)) return 0;
        kept[n_kept][0] = item;
        kept[n_kept][1] = w.pos();
        ++n_kept;
      }
    }
  }
  // Plain copies into the caller's room: this runs once per replayed call.
  const bool extras = n_kept > 0 || !counters.empty();
  std::byte* p = out;
  std::memcpy(p, body.data(), args_end);
  p += args_end;
  const auto head = static_cast<std::uint8_t>(out[0]);
  out[0] = static_cast<std::byte>((head & ~event_format::kHasExtras) |
                                  (extras ? event_format::kHasExtras : 0));
  if (extras) {
    for (std::size_t i = 0; i < n_kept; ++i) {
      std::memcpy(p, body.data() + kept[i][0], kept[i][1] - kept[i][0]);
      p += kept[i][1] - kept[i][0];
    }
    if (!counters.empty()) {
      *p++ = static_cast<std::byte>(Extra::counters);
      p += encode_uvarint(counters.size(), p);
      for (const auto c : counters) p += encode_uvarint(c, p);
    }
    *p++ = static_cast<std::byte>(Extra::end);
  }
  return static_cast<std::size_t>(p - out);
}

}  // namespace encore
