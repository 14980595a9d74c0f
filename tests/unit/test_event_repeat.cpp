// Repeated failed polls (format 1.2): a body of the repeat head alone reads back as a copy of
// the thread's previous event, with its own index and times and the same request references;
// a repeat with nothing before it in its chunk is reported as damage, not guessed.
#include <vector>

#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/event_format.hpp"
#include "encore/event_reader.hpp"
#include "encore/rank_trace_writer.hpp"

namespace encore {
namespace {

using EventRepeat = TempDirTest;

Event make(std::uint16_t f, std::uint64_t start) {
  Event e;
  e.function = f;
  e.args.resize(function_table()[f].params.size());
  for (auto& a : e.args) a.present = true;
  e.start_ns = start;
  e.end_ns = start + 10;
  return e;
}

ArgValue& arg(Event& e, Role role) {
  const auto params = function_table()[e.function].params;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].role == role) return e.args[i];
  throw std::logic_error("no such role");
}

const std::vector<std::byte> kRepeat = {std::byte{event_format::kRepeatHead0},
                                        std::byte{event_format::kRepeatHead1}};

// Irecv #0, Test #1 of its request (nothing found), three repeats #2..#4, Barrier #5.
void write_polls(const std::filesystem::path& dir, std::size_t chunk_events) {
  RankWriterOptions o;
  o.chunk_events = chunk_events;
  RankTraceWriter w(dir / "rank-00000.events", dir / "rank-00000.payload", 0, o);
  w.write(make(fn::Irecv, 100));
  Event test = make(fn::Test, 200);
  arg(test, Role::request_inout).requests = {RequestRef{false, 0, 0}};
  arg(test, Role::status_out).statuses = {StatusRecord{1, 0, 0, 0, 0}};
  w.write(test);
  for (std::uint64_t k = 0; k < 3; ++k)
    w.write_body(0, 300 + 100 * k, 305 + 100 * k + k, 7 + k, kRepeat);
  w.write(make(fn::Barrier, 700));
  w.close();
}

TEST_F(EventRepeat, EachRepeatIsAnEventOfItsOwn) {
  write_polls(dir_, 4096);
  RankEventReader r(dir_ / "rank-00000.events");
  std::vector<Event> got;
  std::vector<std::size_t> body_sizes;
  Event e;
  while (r.next(e)) {
    got.push_back(e);
    body_sizes.push_back(r.last_body().size());
  }
  EXPECT_TRUE(r.complete()) << r.problem();
  ASSERT_EQ(got.size(), 6u);
  for (std::uint64_t i = 2; i < 5; ++i) {
    const Event& p = got[i];
    EXPECT_EQ(p.function, fn::Test);
    EXPECT_EQ(p.index, i);
    EXPECT_EQ(p.start_ns, 300 + 100 * (i - 2));
    EXPECT_EQ(p.end_ns, 305 + 100 * (i - 2) + (i - 2));
    EXPECT_EQ(p.overhead_ns, 7 + (i - 2));
    // The Irecv at #0, not #0 shifted by the repeat's own index.
    const auto& req = arg(got[i], Role::request_inout).requests;
    ASSERT_EQ(req.size(), 1u);
    EXPECT_FALSE(req[0].null);
    EXPECT_EQ(req[0].event, 0u);
    EXPECT_EQ(arg(got[i], Role::status_out).statuses.at(0).bits, 1);
    EXPECT_EQ(body_sizes[i], 0u);  // no bytes of its own to copy into a derived trace
  }
  EXPECT_GT(body_sizes[1], 2u);
  EXPECT_EQ(got[5].function, fn::Barrier);
  EXPECT_EQ(got[5].index, 5u);
  EXPECT_EQ(got[5].start_ns, 700u);
}

TEST_F(EventRepeat, RepeatOpeningAChunkIsDamage) {
  write_polls(dir_, 3);  // the second chunk starts with the second repeat
  RankEventReader r(dir_ / "rank-00000.events");
  Event e;
  std::uint64_t n = 0;
  while (r.next(e)) ++n;
  EXPECT_EQ(n, 3u);  // the first chunk, whole
  EXPECT_NE(r.problem().find("chunk 1, event 3: repeated poll with no event before it"),
            std::string::npos)
      << r.problem();
}

}  // namespace
}  // namespace encore
