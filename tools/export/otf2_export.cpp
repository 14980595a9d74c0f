#include "encore/error.hpp"
#include "exporters.hpp"

namespace encore::exporter {

ExportStats export_otf2(const std::filesystem::path&, const std::filesystem::path&,
                        const ExportOptions&) {
  throw Error("export to otf2 is not implemented yet");
}

}  // namespace encore::exporter
