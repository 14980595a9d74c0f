#include "exporters.hpp"

namespace encore::exporter {

const std::vector<Format>& formats() {
  static const std::vector<Format> all = {
      {"simgrid", "SimGrid SMPI time-independent traces (smpirun -replay)", &export_simgrid},
      {"otf2", "OTF2 archive (Score-P, Vampir, otf2-print)", &export_otf2},
      {"dumpi", "SST/macro DUMPI (.bin per rank and .meta)", &export_dumpi},
      {"chrome", "Chrome trace-event JSON (Perfetto, chrome://tracing)", &export_chrome},
  };
  return all;
}

}  // namespace encore::exporter
