#include "exporters.hpp"

#include "encore/error.hpp"

namespace encore::exporter {

ExportStats export_simgrid(const std::filesystem::path&, const std::filesystem::path&,
                           const ExportOptions&) {
  throw Error("export to simgrid is not implemented yet");
}

}  // namespace encore::exporter
