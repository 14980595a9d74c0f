#include "matched_messages.hpp"

#include "call_args.hpp"

namespace encore::exporter {

std::optional<MatchedMessage> MatchedMessages::observe(const Event& e) {
  if (e.rc != 0) return std::nullopt;
  switch (e.function) {
    case fn::Mprobe:
    case fn::Improbe: {
      if (e.function == fn::Improbe && scalar_arg(e, "flag", 0) == 0) return std::nullopt;
      const ArgValue* message = recorded_arg(e, "message");
      const ArgValue* status = recorded_arg(e, "status");
      if (!message || !status || status->statuses.empty()) return std::nullopt;
      const StatusRecord& st = status->statuses[0];
      if (st.source < 0) return std::nullopt;  // MPI_PROC_NULL: MPI_MESSAGE_NO_PROC
      probed_[message->scalar] = {scalar_arg(e, "comm", 0), st.source, st.tag};
      return std::nullopt;
    }
    case fn::Mrecv:
    case fn::Mrecv_c:
    case fn::Imrecv:
    case fn::Imrecv_c: {
      const ArgValue* message = recorded_arg(e, "message");
      if (!message) return std::nullopt;
      const auto it = probed_.find(message->scalar);
      if (it == probed_.end()) return std::nullopt;
      MatchedMessage m = it->second;
      probed_.erase(it);
      if (const ArgValue* st = recorded_arg(e, "status");
          st && !st->statuses.empty() && st->statuses[0].source >= 0) {
        m.source = st->statuses[0].source;
        m.tag = st->statuses[0].tag;
      }
      return m;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace encore::exporter
