#include "exporters.hpp"

#include "encore/error.hpp"

namespace encore::exporter {

ExportStats export_chrome(const std::filesystem::path&, const std::filesystem::path&,
                          const ExportOptions&) {
  throw Error("export to chrome is not implemented yet");
}

}  // namespace encore::exporter
