#include "cancelled_requests.hpp"

#include "call_args.hpp"

namespace encore::exporter {

void CancelledRequests::observe(const Event& e) {
  switch (e.function) {
    case fn::Start:
    case fn::Startall: {
      const ArgValue* reqs = recorded_arg(e, "array_of_requests");
      if (!reqs) reqs = recorded_arg(e, "request");
      if (reqs && e.rc == 0)
        for (const auto& r : reqs->requests)
          if (!r.null) started_[request_key(r)] = event_key(e);
      return;
    }
    case fn::Request_free: {
      const ArgValue* req = recorded_arg(e, "request");
      if (req && !req->requests.empty()) started_.erase(request_key(req->requests[0]));
      return;
    }
    default:
      break;
  }
  if (e.rc != 0 || e.info().category != Category::completion) return;
  for_each_completed(e, [&](const RequestRef& r, const StatusRecord* st) {
    if (r.null || !was_cancelled(st)) return;
    const std::uint64_t key = request_key(r);
    const auto start = started_.find(key);
    cancelled_.insert({start != started_.end() ? start->second : key, key});
  });
}

bool CancelledRequests::contains(const Event& posting, const RequestRef& r) const {
  return !cancelled_.empty() && !r.null &&
         cancelled_.count({event_key(posting), request_key(r)}) != 0;
}

}  // namespace encore::exporter
