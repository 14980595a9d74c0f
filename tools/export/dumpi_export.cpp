#include "encore/error.hpp"
#include "exporters.hpp"

namespace encore::exporter {

ExportStats export_dumpi(const std::filesystem::path&, const std::filesystem::path&,
                        const ExportOptions&) {
  throw Error("export to dumpi is not implemented yet");
}

}  // namespace encore::exporter
