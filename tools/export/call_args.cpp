#include "call_args.hpp"

namespace encore::exporter {

const ArgValue* recorded_arg(const Event& e, std::string_view name) {
  const auto params = e.info().params;
  for (std::size_t i = 0; i < params.size() && i < e.args.size(); ++i)
    if (name == params[i].name) return e.args[i].present ? &e.args[i] : nullptr;
  return nullptr;
}

}  // namespace encore::exporter
