// copy_body_new_extras: a recorded body copied into a profile keeps every argument and the
// send hashes and call site, loses payloads, signatures, counters, stalls and first reads,
// gains new counters; bytes it cannot split are refused, for the caller to encode instead.
#include <vector>

#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/event_body.hpp"
#include "encore/event_format.hpp"
#include "encore/event_reader.hpp"
#include "encore/rank_trace_writer.hpp"

namespace encore {
namespace {

class EventBodyTest : public TempDirTest {};

// Events of every function with a spread of extras; arguments left at their defaults except
// what the encoder needs (one request, one status where the role wants exactly one).
std::vector<Event> sample_events() {
  std::vector<Event> out;
  const auto table = function_table();
  std::uint64_t now = 0;
  for (std::size_t id = 0; id < table.size(); ++id) {
    Event e;
    e.function = static_cast<std::uint16_t>(id);
    e.index = out.size();
    e.start_ns = now + 5;
    e.end_ns = e.start_ns + id;
    now = e.end_ns;
    e.rc = id % 13 == 0 ? 17 : 0;
    e.args.resize(table[id].params.size());
    for (std::size_t i = 0; i < table[id].params.size(); ++i) {
      ArgValue& a = e.args[i];
      a.present = true;
      a.scalar = static_cast<std::int64_t>(id + i) % 300;
      const Role role = table[id].params[i].role;
      if (role == Role::request || role == Role::request_inout) a.requests = {RequestRef{}};
      if (role == Role::status_in || role == Role::status_out)
        a.statuses = {StatusRecord{0, 1, 2, 300, 0}};
    }
    if (id % 4 == 0) {
      e.signatures.push_back({1030, 12, {{4, 2}, {8, 1}}});
      e.payloads.push_back({0, 1030, 2, 0, 0});  // 0 bytes: no payload stream needed
      e.payloads.push_back({1, 2, 1, 0, 0});
    }
    if (id % 6 == 0) e.send_hashes.push_back({0xfedcba9876543210ULL ^ id, 200 + id});
    // Kept like send hashes (format 1.4).
    if (id % 10 == 0) e.contribution_hashes.push_back({0x1111222233334444ULL ^ id, 64});
    if (id % 3 == 0) e.callsite = id * 1000;
    if (id % 5 == 0) e.counters = {1, 1u << 20, id};
    if (id % 7 == 0) e.stall_ns = 12345;
    if (id % 8 == 0) e.first_read_ns = 777000 + id;  // beside payloads (format 1.3)
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::byte> encoded(const Event& e) {
  std::vector<std::byte> b;
  encode_event_body(e, b);
  return b;
}

TEST_F(EventBodyTest, CopiedBodiesDecodeAsTheEventWithNewExtras) {
  const auto events = sample_events();
  {
    RankTraceWriter w(dir_ / "in.events", dir_ / "in.payload", 0);
    for (const auto& e : events) w.write(e);
    w.close();
  }
  RankEventReader in(dir_ / "in.events");
  std::vector<Event> expected;
  {
    RankTraceWriter w(dir_ / "out.events", dir_ / "out.payload", 0);
    Event ev;
    std::vector<std::byte> body;
    std::uint64_t t = 0;
    while (in.next(ev)) {
      const std::vector<std::uint64_t> counters =
          ev.index % 2 ? std::vector<std::uint64_t>{} : std::vector<std::uint64_t>{ev.index, 7};
      body.clear();
      ASSERT_TRUE(copy_body_new_extras(in.last_body(), ev, counters, body))
          << function_table()[ev.function].name;
      t += 3;
      w.write_body(ev.thread, t, t, 1, body);
      Event want = ev;
      want.payloads.clear();
      want.signatures.clear();
      want.stall_ns = 0;
      want.first_read_ns = 0;
      want.counters = counters;
      expected.push_back(std::move(want));
    }
    ASSERT_TRUE(in.complete()) << in.problem();
    w.close();
  }
  ASSERT_EQ(expected.size(), events.size());
  RankEventReader out(dir_ / "out.events");
  Event ev;
  std::size_t n = 0;
  while (out.next(ev)) {
    ASSERT_LT(n, expected.size());
    SCOPED_TRACE(function_table()[ev.function].name);
    EXPECT_EQ(encoded(ev), encoded(expected[n]));
    EXPECT_TRUE(ev.payloads.empty());
    EXPECT_EQ(ev.start_ns, 3 * (n + 1));
    EXPECT_EQ(ev.overhead_ns, 1u);
    ++n;
  }
  EXPECT_TRUE(out.complete()) << out.problem();
  EXPECT_EQ(n, events.size());
}

TEST_F(EventBodyTest, ReaderSaysWhereTheExtrasStart) {
  // The reader knows where a body's extras start (when it decoded the event the fast way);
  // copying the bytes before them is the event without any extra, and for a receive the same
  // bytes as dropping its payload references.
  const auto events = sample_events();
  {
    RankTraceWriter w(dir_ / "in.events", dir_ / "in.payload", 0);
    for (const auto& e : events) w.write(e);
    Event recv;
    recv.function = fn::Recv;
    recv.args.resize(recv.info().params.size());
    for (auto& a : recv.args) a.present = true;
    recv.args[6].statuses.resize(1);
    recv.payloads = {{0, 7, 300, 0, 0}};
    // Several: the last events of a chunk are decoded the checked way.
    for (std::size_t k = 0; k < 40; ++k) {
      recv.index = events.size() + k;
      recv.start_ns = recv.end_ns = events.back().end_ns + 10 * (k + 1);
      w.write(recv);
    }
    w.close();
  }
  RankEventReader in(dir_ / "in.events");
  Event ev;
  std::size_t with_extras = 0, receives = 0;
  while (in.next(ev)) {
    SCOPED_TRACE(function_table()[ev.function].name);
    const auto body = in.last_body();
    const bool has = (static_cast<std::uint8_t>(body[0]) & event_format::kHasExtras) != 0;
    const std::size_t at = in.last_extras_at();
    if (!has) {
      EXPECT_EQ(at, 0u);
    }
    if (at == 0) continue;  // none, or decoded the checked way (not known): the general path
    ++with_extras;
    ASSERT_LT(at, body.size());
    Event bare = ev;
    bare.payloads.clear();
    bare.send_hashes.clear();
    bare.signatures.clear();
    bare.callsite.reset();
    bare.counters.clear();
    bare.stall_ns = 0;
    bare.first_read_ns = 0;
    bare.contribution_hashes.clear();
    bare.attribute.reset();
    bare.neighbours.reset();
    std::vector<std::byte> out(body.size(), std::byte{0x42});
    ASSERT_EQ(copy_body_drop_extras(body, at, out.data()), at);
    out.resize(at);
    EXPECT_EQ(out, encoded(bare));
    if (ev.function == fn::Recv && ev.signatures.empty() && ev.send_hashes.empty() &&
        !ev.callsite && ev.counters.empty() && ev.stall_ns == 0 && ev.first_read_ns == 0) {
      ++receives;
      std::vector<std::byte> refs(body.size());
      ASSERT_EQ(copy_body_drop_payload_refs(body, ev, refs.data()), at);
      refs.resize(at);
      EXPECT_EQ(refs, out);
    }
  }
  EXPECT_TRUE(in.complete()) << in.problem();
  EXPECT_GT(with_extras, events.size() / 4);
  EXPECT_GE(receives, 1u);
}

TEST_F(EventBodyTest, BodiesNotLaidOutAsTheEventSaysAreRefused) {
  Event e;
  e.function = fn::Barrier;
  e.args.resize(e.info().params.size());
  e.args[0].present = true;
  e.args[0].scalar = 2;
  e.callsite = 5;
  std::vector<std::byte> body = encoded(e);
  std::vector<std::byte> out{std::byte{0x42}};
  // Nothing to drop or add: copied as it is.
  ASSERT_TRUE(copy_body_new_extras(body, e, {}, out));
  EXPECT_EQ(std::vector<std::byte>(out.begin() + 1, out.end()), body);
  // With counters to add the extras are split where the event says they start. The call
  // site as a two-byte varint (0x85 0x00) still decodes to 5, but that split no longer
  // holds: refused, nothing appended.
  const std::uint64_t c[] = {7};
  out.assign(1, std::byte{0x42});
  ASSERT_TRUE(copy_body_new_extras(body, e, c, out));
  Event with = e;
  with.counters = {7};
  EXPECT_EQ(std::vector<std::byte>(out.begin() + 1, out.end()), encoded(with));
  ASSERT_EQ(body[body.size() - 2], std::byte{5});
  body[body.size() - 2] = std::byte{0x85};
  body.insert(body.end() - 1, std::byte{0});
  out.assign(1, std::byte{0x42});
  EXPECT_FALSE(copy_body_new_extras(body, e, c, out));
  EXPECT_EQ(out.size(), 1u);
  // An unknown extra tag, a body cut short: refused.
  body = encoded(e);
  body[body.size() - 3] = std::byte{100};
  EXPECT_FALSE(copy_body_new_extras(body, e, c, out));
  EXPECT_FALSE(copy_body_new_extras(std::span(body).first(1), e, {}, out));
  EXPECT_EQ(out.size(), 1u);
  // More kept extras than the copy has room to note (an MPI_Alltoallv's contribution blocks,
  // format 1.4) with a payload to drop: refused, for the caller to encode the event.
  Event many = e;
  many.payloads.push_back({0, 2, 1, 0, 0});
  for (std::uint64_t i = 0; i < 9; ++i) many.contribution_hashes.push_back({i, 64});
  EXPECT_FALSE(copy_body_new_extras(encoded(many), many, {}, out));
  many.contribution_hashes.resize(7);  // with the call site, eight: copied, payload dropped
  ASSERT_TRUE(copy_body_new_extras(encoded(many), many, {}, out));
  Event kept = many;
  kept.payloads.clear();
  EXPECT_EQ(std::vector<std::byte>(out.begin() + 1, out.end()), encoded(kept));
}

TEST_F(EventBodyTest, ExtrasFlagFollowsWhatIsLeft) {
  Event e;
  e.function = fn::Barrier;
  e.args.resize(e.info().params.size());
  e.args[0].present = true;
  e.args[0].scalar = 2;
  e.stall_ns = 9;        // dropped: nothing left, so no extras at all
  e.first_read_ns = 12;  // likewise (format 1.3)
  std::vector<std::byte> out;
  ASSERT_TRUE(copy_body_new_extras(encoded(e), e, {}, out));
  Event plain = e;
  plain.stall_ns = 0;
  plain.first_read_ns = 0;
  EXPECT_EQ(out, encoded(plain));
  EXPECT_EQ(static_cast<std::uint8_t>(out[0]) & event_format::kHasExtras, 0);
  // No extras recorded, counters added: the flag is set and the counters follow.
  out.clear();
  const std::uint64_t c[] = {300, 4};
  ASSERT_TRUE(copy_body_new_extras(encoded(plain), plain, c, out));
  plain.counters = {300, 4};
  EXPECT_EQ(out, encoded(plain));
}

TEST_F(EventBodyTest, ReceivesDropTheirPayloadReferences) {
  Event e;
  e.function = fn::Recv;
  e.args.resize(e.info().params.size());
  for (auto& a : e.args) a.present = true;
  e.args[1].scalar = 300;
  e.args[6].statuses.resize(1);  // the status  // count: a two-byte varint
  // Two references, one with a field of several bytes: each is checked where it must be.
  e.payloads = {{0, 7, 300, 2400, 0}, {1, 7, 1, 8, 2400}};
  const std::vector<std::byte> body = encoded(e);
  Event expected = e;
  expected.payloads.clear();
  std::vector<std::byte> out(body.size(), std::byte{0x42});
  const std::size_t n = copy_body_drop_payload_refs(body, e, out.data());
  ASSERT_GT(n, 0u);
  out.resize(n);
  EXPECT_EQ(out, encoded(expected));  // the extras flag cleared with the references
  // The same bytes as the general path gives.
  std::vector<std::byte> general;
  ASSERT_TRUE(copy_body_new_extras(body, e, {}, general));
  EXPECT_EQ(out, general);
  // A reference written with a longer varint than needed (0x88 0x00 still decodes to 8), or an
  // extra that is not a payload reference: refused, for the general path to handle.
  std::vector<std::byte> longer = body;
  ASSERT_EQ(longer[longer.size() - 2], std::byte{8});
  longer[longer.size() - 2] = std::byte{0x88};
  longer.insert(longer.end() - 1, std::byte{0});
  EXPECT_EQ(copy_body_drop_payload_refs(longer, e, out.data()), 0u);
  Event hashed = e;
  hashed.payloads.pop_back();
  hashed.send_hashes = {{1, 8}};
  EXPECT_EQ(copy_body_drop_payload_refs(encoded(hashed), e, out.data()), 0u);
  // No extras at all: nothing to drop here.
  EXPECT_EQ(copy_body_drop_payload_refs(encoded(expected), e, out.data()), 0u);
}

TEST_F(EventBodyTest, OneReferenceOfEveryLengthIsDropped) {
  // One reference (the usual receive) is compared whole: 6 bytes and up, across the 8- and
  // 16-byte compares and past them.
  const PayloadRef refs[] = {{0, 2, 1, 8, 0},
                             {0, 7, 300, 2400, 0},
                             {0, 200, 1, 1 << 20, 0},
                             {0, 7, 1u << 30, 1ull << 40, 0},
                             {3, 300, 1u << 30, 1ull << 50, 0}};
  for (const PayloadRef& ref : refs) {
    Event e;
    e.function = fn::Recv;
    e.args.resize(e.info().params.size());
    for (auto& a : e.args) a.present = true;
    e.args[6].statuses.resize(1);
    e.payloads = {ref};
    const std::vector<std::byte> body = encoded(e);
    SCOPED_TRACE(ref.bytes);
    Event expected = e;
    expected.payloads.clear();
    std::vector<std::byte> out(body.size(), std::byte{0x42});
    const std::size_t n = copy_body_drop_payload_refs(body, e, out.data());
    ASSERT_GT(n, 0u);
    out.resize(n);
    EXPECT_EQ(out, encoded(expected));
    // Each byte of the reference changed, and the end tag: refused.
    const std::size_t refs_bytes = body.size() - n;
    for (std::size_t k = 1; k <= refs_bytes; ++k) {
      std::vector<std::byte> bad = body;
      bad[bad.size() - k] ^= std::byte{0x01};
      EXPECT_EQ(copy_body_drop_payload_refs(bad, e, out.data()), 0u) << "byte " << k;
    }
    // The byte count as a longer varint than needed: refused.
    std::vector<std::byte> longer = body;
    const auto last = static_cast<std::uint8_t>(longer[longer.size() - 2]);
    longer[longer.size() - 2] = static_cast<std::byte>(last | 0x80);
    longer.insert(longer.end() - 1, std::byte{0});
    EXPECT_EQ(copy_body_drop_payload_refs(longer, e, out.data()), 0u);
  }
}

}  // namespace
}  // namespace encore
