// encore simulate: not implemented yet (this file is a placeholder the simulate work replaces).
#include "common.hpp"

namespace encore::tool {

Subcommand add_simulate(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("simulate", "(not implemented yet)");
  app->allow_extras();
  return {app, [] () -> int { throw ExitError(kExitUsage, "encore simulate is not implemented yet"); }};
}

}  // namespace encore::tool
