// PAPI counters per compute segment (between two MPI calls). Each thread reads its event set
// when it enters an MPI call (the segment that just ended) and when it leaves (the next one
// starts). Where counters are unavailable (many VMs have none), the tool (capture in libdump,
// replay in libreplay) warns once, naming PAPI's reason, and goes on without them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace encore {

struct CounterSetup {
  bool available = false;
  std::string reason;  // why not, in PAPI's words
  std::string cpu_model;
  double cpu_mhz = 0;
};

// Initialises PAPI and checks every requested event name. Call once per process.
CounterSetup setup_counters(const std::vector<std::string>& events);

// One thread's event set; inert when counters are unavailable.
class ThreadCounters {
 public:
  ThreadCounters() = default;
  ~ThreadCounters();
  ThreadCounters(const ThreadCounters&) = delete;
  ThreadCounters& operator=(const ThreadCounters&) = delete;

  // Creates and starts the thread's event set. False if PAPI refuses.
  bool start(const std::vector<std::string>& events);
  bool active() const noexcept { return eventset_ >= 0; }
  // Counts since the last mark_segment_start(), into `deltas`.
  void read_segment(std::vector<long long>& deltas);
  void mark_segment_start();

 private:
  int eventset_ = -1;
  std::vector<long long> at_start_;
  std::vector<long long> now_;
};

// "PAPI_TOT_INS,PAPI_TOT_CYC" (ENCORE_PAPI_EVENTS) -> the names; empty items are skipped.
std::vector<std::string> split_event_list(std::string_view list);

}  // namespace encore
