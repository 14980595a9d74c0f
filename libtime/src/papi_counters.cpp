#include "encore/papi_counters.hpp"

#include <pthread.h>

#include <algorithm>

#include <papi.h>

namespace encore {
namespace {

unsigned long thread_id() { return static_cast<unsigned long>(pthread_self()); }

std::string component_reasons() {
  std::string why;
  for (int i = 0; i < PAPI_num_components(); ++i) {
    const PAPI_component_info_t* c = PAPI_get_component_info(i);
    if (c && c->disabled && c->name[0] && std::string(c->name).rfind("perf_event", 0) == 0) {
      if (!why.empty()) why += "; ";
      why +=
          std::string(c->name) + ": " + (c->disabled_reason[0] ? c->disabled_reason : "disabled");
    }
  }
  return why;
}

}  // namespace

CounterSetup setup_counters(const std::vector<std::string>& events) {
  CounterSetup s;
  const int v = PAPI_library_init(PAPI_VER_CURRENT);
  if (v != PAPI_VER_CURRENT) {
    s.reason = std::string("PAPI_library_init failed: ") + PAPI_strerror(v);
    return s;
  }
  PAPI_thread_init(thread_id);
  if (const PAPI_hw_info_t* hw = PAPI_get_hardware_info()) {
    s.cpu_model = hw->model_string;
    s.cpu_mhz =
        hw->cpu_max_mhz > 0 ? static_cast<double>(hw->cpu_max_mhz) : static_cast<double>(hw->mhz);
  }
  if (events.empty()) {
    s.reason = "no PAPI events requested";
    return s;
  }
  for (const auto& name : events) {
    int code = 0;
    if (PAPI_event_name_to_code(name.c_str(), &code) != PAPI_OK) {
      s.reason = "unknown PAPI event " + name;
      return s;
    }
    if (PAPI_query_event(code) != PAPI_OK) {
      const std::string comp = component_reasons();
      s.reason =
          name + " is not available on this machine" + (comp.empty() ? "" : " (" + comp + ")");
      return s;
    }
  }
  // The events exist: see whether they can be counted together.
  ThreadCounters probe;
  if (!probe.start(events)) {
    s.reason = "PAPI cannot count " + events.front() +
               (events.size() > 1 ? " and the others together" : "");
    const std::string comp = component_reasons();
    if (!comp.empty()) s.reason += " (" + comp + ")";
    return s;
  }
  s.available = true;
  return s;
}

ThreadCounters::~ThreadCounters() {
  if (eventset_ < 0) return;
  std::vector<long long> ignore(now_.size());
  PAPI_stop(eventset_, ignore.data());
  PAPI_cleanup_eventset(eventset_);
  PAPI_destroy_eventset(&eventset_);
}

bool ThreadCounters::start(const std::vector<std::string>& events) {
  int set = PAPI_NULL;
  if (PAPI_create_eventset(&set) != PAPI_OK) return false;
  for (const auto& name : events) {
    int code = 0;
    if (PAPI_event_name_to_code(name.c_str(), &code) != PAPI_OK ||
        PAPI_add_event(set, code) != PAPI_OK) {
      PAPI_cleanup_eventset(set);
      PAPI_destroy_eventset(&set);
      return false;
    }
  }
  if (PAPI_start(set) != PAPI_OK) {
    PAPI_cleanup_eventset(set);
    PAPI_destroy_eventset(&set);
    return false;
  }
  eventset_ = set;
  at_start_.assign(events.size(), 0);
  now_.assign(events.size(), 0);
  return true;
}

void ThreadCounters::read_segment(std::vector<long long>& deltas) {
  deltas.resize(now_.size());
  if (eventset_ < 0 || PAPI_read(eventset_, now_.data()) != PAPI_OK) {
    std::fill(deltas.begin(), deltas.end(), 0);
    return;
  }
  for (std::size_t i = 0; i < now_.size(); ++i) deltas[i] = now_[i] - at_start_[i];
}

void ThreadCounters::mark_segment_start() {
  if (eventset_ >= 0) PAPI_read(eventset_, at_start_.data());
}

std::vector<std::string> split_event_list(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (auto name = list.substr(0, comma); !name.empty()) out.emplace_back(name);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return out;
}

}  // namespace encore
