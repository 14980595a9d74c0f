// Messages matched by MPI_Mprobe or MPI_Improbe, from the probe to the MPI_Mrecv or MPI_Imrecv
// that receives them: a matched receive names only the message, so the exporters take its
// communicator, source and tag from the probe. Holds only the messages probed and not yet
// received.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "encore/event.hpp"

namespace encore::exporter {

struct MatchedMessage {
  std::int64_t comm = 0;    // the communicator's id in the trace
  std::int64_t source = 0;  // rank in comm (in its remote group for an intercommunicator)
  std::int64_t tag = 0;
};

class MatchedMessages {
 public:
  // Call for every event of a rank, in stream order (all threads: a message probed on one
  // thread may be received on another). For a successful MPI_Mrecv or MPI_Imrecv, returns the
  // message it received (source and tag from the Mrecv's status when recorded, else from the
  // probe's); nullopt for any other call, for MPI_MESSAGE_NO_PROC (a probe of MPI_PROC_NULL:
  // nothing is received) and for a message whose probe is not in the trace.
  std::optional<MatchedMessage> observe(const Event& e);

 private:
  std::unordered_map<std::int64_t, MatchedMessage> probed_;  // by message id
};

}  // namespace encore::exporter
