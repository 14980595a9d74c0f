// Exporters: an Encore trace (captured, replayed or predicted) written in another tool's
// format. Each format lives in its own file; all of them stream rank by rank, so memory
// stays bounded whatever the trace length.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace encore::exporter {

struct ExportOptions {
  // SimGrid: compute segments become `compute FLOPS` at this host speed, or `sleep SECONDS`.
  double host_flops = 1e9;
  bool compute_as_sleep = false;
  bool progress = false;  // a progress bar on stderr (set when stderr is a terminal)
};

struct ExportStats {
  std::uint64_t events = 0;                  // MPI calls read from the trace
  std::uint64_t records = 0;                 // records / actions / trace events written
  std::vector<std::filesystem::path> files;  // the main files written (index, archive, ...)
  std::vector<std::string> notes;            // what could not be expressed in the format, once each
  // A rank whose stream is cut or damaged, one line each (exported up to there): the trace
  // has a problem, so the command exits 1 after writing what it could.
  std::vector<std::string> problems;
};

// Each throws encore::Error (one line naming what and where) on unreadable input or on a
// failure to write `out`.
ExportStats export_chrome(const std::filesystem::path& trace, const std::filesystem::path& out,
                          const ExportOptions& options);
ExportStats export_simgrid(const std::filesystem::path& trace, const std::filesystem::path& out,
                           const ExportOptions& options);
ExportStats export_otf2(const std::filesystem::path& trace, const std::filesystem::path& out,
                        const ExportOptions& options);
ExportStats export_dumpi(const std::filesystem::path& trace, const std::filesystem::path& out,
                         const ExportOptions& options);

struct Format {
  std::string_view name;
  std::string_view description;
  ExportStats (*run)(const std::filesystem::path&, const std::filesystem::path&,
                     const ExportOptions&);
};
// Every format `encore export --to` knows, in the order --help lists them.
const std::vector<Format>& formats();

}  // namespace encore::exporter
