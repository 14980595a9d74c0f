// encore predict: not implemented yet (this file is a placeholder the predict work replaces).
#include "common.hpp"

namespace encore::tool {

Subcommand add_predict(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("predict", "(not implemented yet)");
  app->allow_extras();
  return {app, [] () -> int { throw ExitError(kExitUsage, "encore predict is not implemented yet"); }};
}

}  // namespace encore::tool
