// The `logged` model (see loggps_engine.hpp): every call keeps its recorded duration.
#include <algorithm>

#include "call_class.hpp"

#include "encore/predict/loggps_engine.hpp"

namespace encore::predict {

std::int64_t solo_cost(const Event& ev, const RankContext& ctx, const LogGPSParams& p) {
  const CallClass& cls = classify(ev.function);
  const std::int64_t d = static_cast<std::int64_t>(ev.end_ns - ev.start_ns);
  switch (cls.op) {
    case Op::local:
      return d;
    case Op::wait:
    case Op::test:
      return 0;
    case Op::recv:
    case Op::irecv:
      return p.overhead_ns();
    case Op::send:
    case Op::isend:
      // What message_bytes finds for a successful point-to-point send whose data was hashed.
      if (ev.rc == 0 && !ev.send_hashes.empty() && ev.info().modelled &&
          ev.info().category == Category::p2p) {
        std::uint64_t sent = 0;
        for (const auto& h : ev.send_hashes) sent += h.bytes;
        return p.overhead_ns() + p.transfer_ns(sent);
      }
      [[fallthrough]];
    default: {
      const MessageBytes mb = message_bytes(ctx, ev);
      return p.overhead_ns() + p.transfer_ns(mb.sent + mb.received);
    }
  }
}

EngineStats run_logged(std::vector<std::unique_ptr<RankFeed>>& feeds, const LogGPSParams& params,
                       PredictSink& sink) {
  EngineStats stats;
  Event ev;
  for (std::uint32_t r = 0; r < feeds.size(); ++r) {
    RankContext ctx(r, static_cast<std::uint32_t>(feeds.size()));
    std::int64_t t = 0, compute = 0;
    while (feeds[r]->next(ev, compute)) {
      const std::int64_t start = t + compute;
      const std::int64_t d = static_cast<std::int64_t>(ev.end_ns - ev.start_ns);
      const std::int64_t wait = std::clamp<std::int64_t>(d - solo_cost(ev, ctx, params), 0, d);
      if (shapes_context(ev)) ctx.observe(ev);
      sink.on_event(r, ev, compute, start, start + d, wait);
      t = start + d;
      ++stats.events;
    }
  }
  return stats;
}

}  // namespace encore::predict
