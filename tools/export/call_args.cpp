#include "call_args.hpp"

#include <cstring>
#include <string>

namespace encore::exporter {

const ArgValue* find_arg(const Event& e, std::string_view name) {
  const auto params = e.info().params;
  for (std::size_t i = 0; i < params.size() && i < e.args.size(); ++i)
    if (name == params[i].name) return e.args[i].present ? &e.args[i] : nullptr;
  return nullptr;
}

std::uint64_t world_comm_id() {
  static const std::uint64_t id = [] {
    const auto comms = predefined_handles(HandleKind::comm);
    for (std::size_t i = 0; i < comms.size(); ++i)
      if (std::strcmp(comms[i].name, "MPI_COMM_WORLD") == 0) return 2 + i;
    return std::size_t{0};
  }();
  return id;
}

}  // namespace encore::exporter
