// LogGPS with a piecewise G: the parameters' size classes (transfer time, JSON), the engine
// using them, and the fit finding a rendezvous class's G from a hand-made capture.
#include "predict_capture.hpp"
#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/error.hpp"
#include "encore/manifest.hpp"
#include "encore/predict/fit.hpp"
#include "encore/predict/loggps_engine.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

using namespace encore::testing;
using predict::LogGPSParams;

LogGPSParams params() {
  LogGPSParams p;
  p.L = 1000;
  p.o = 100;
  p.G = 1;
  p.S = 1000;
  p.G_classes = {{2000, 0.5}};
  return p;
}

TEST(PredictSizeClasses, TransferUsesTheClassOfTheSize) {
  const LogGPSParams p = params();
  EXPECT_EQ(p.transfer_ns(1000), 999);   // below the class: G
  EXPECT_EQ(p.transfer_ns(1999), 1998);  // still below
  EXPECT_EQ(p.transfer_ns(3001), 1500);  // (n-1) * 0.5
}

TEST(PredictSizeClasses, JsonRoundTripAndBadClassesAreNamed) {
  const LogGPSParams back = predict::params_from_json(predict::to_json(params()), "p.json");
  ASSERT_EQ(back.G_classes.size(), 1u);
  EXPECT_EQ(back.G_classes[0].from, 2000u);
  EXPECT_EQ(back.G_classes[0].G, 0.5);
  EXPECT_FALSE(predict::to_json(LogGPSParams{}).contains("G_classes"));
  const auto cls = [](std::int64_t from, double g) {
    return nlohmann::json{{"from", from}, {"G", g}};
  };
  nlohmann::json descending;
  descending["G_classes"] = nlohmann::json::array({cls(10, 1), cls(5, 1)});
  try {
    predict::params_from_json(descending, "p.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("p.json: G_classes[1]"), std::string::npos) << e.what();
  }
  nlohmann::json negative;
  negative["G_classes"] = nlohmann::json::array({cls(-1, 1)});
  EXPECT_THROW(predict::params_from_json(negative, "p.json"), Error);
}

TEST(PredictSizeClasses, EngineTimesARendezvousWithItsClass) {
  // 3001 B, the receive waiting: handshake at 0+100+1000, send done +1000+100+1500 = 3700,
  // receive L+o later: 4800 (with the base G it would be 6300).
  auto f = feeds({{{send(fn::Send, 1, 0, 3001)}}, {{recv(fn::Recv, 0, 0, 0, 3001)}}});
  KeepSink sink;
  predict::run_loggps(f, params(), sink);
  EXPECT_EQ(sink.calls[0][0].end, 3700);
  EXPECT_EQ(sink.calls[1][0].end, 4800);
}

class PredictFitClasses : public TempDirTest {};

TEST_F(PredictFitClasses, RendezvousPairsGiveTheirClassItsOwnG) {
  // Rank 0: sends of 8 and 512 B lasting 100 ns (o 100, G 0), then 100001 B. Rank 1 waits
  // for the 8 B one, which ends 1200 after the send began (2o + L: L 1000), and for the big
  // one, which ends 3o + 3L + 100000 * 0.25 = 28300 after it began: G 0.25 from 65537 B.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(send(fn::Send, 1, 0, 8), 100), 1'010'500},
              {timed(send(fn::Send, 1, 1, 512), 100), 1'020'600},
              {timed(send(fn::Send, 1, 2, 100001), 30000), 1'030'700},
              {timed(call(fn::Finalize), 100), 1'070'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 1700), 1'010'000},
              {timed(recv(fn::Recv, 0, 2, 0, 100001), 29000), 1'030'000},
              {timed(call(fn::Finalize), 100), 1'070'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_DOUBLE_EQ(f.params.o, 100);
  EXPECT_DOUBLE_EQ(f.params.G, 0);
  EXPECT_DOUBLE_EQ(f.params.L, 1000);
  ASSERT_EQ(f.params.G_classes.size(), 1u);
  EXPECT_EQ(f.params.G_classes[0].from, 65537u);
  EXPECT_DOUBLE_EQ(f.params.G_classes[0].G, 0.25);
  EXPECT_EQ(f.large_pairs, 1u);
  EXPECT_NE(predict::describe(f).find("G 0.2500 ns/B from 65537 B"), std::string::npos)
      << predict::describe(f);
}

}  // namespace
}  // namespace encore
