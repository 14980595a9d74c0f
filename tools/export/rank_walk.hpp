// The event loop the otf2 and dumpi exporters share: every rank of a trace in turn, its
// events in file order through the streaming reader (one chunk in memory), a progress bar on
// a terminal, and a problem line for a rank whose stream is cut or damaged (what could be read
// of it is still exported).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "encore/event.hpp"
#include "encore/manifest.hpp"
#include "encore/rank_context.hpp"

namespace encore::exporter {

struct RankWalk {
  // Called before the first event of each rank, for each event, and after its last event.
  // `ctx` has already observed `ev` (so it knows a communicator or type `ev` creates).
  std::function<void(std::uint32_t rank)> begin_rank = [](std::uint32_t) {};
  std::function<void(std::uint32_t rank, const Event& ev, const RankContext& ctx)> event;
  std::function<void(std::uint32_t rank)> end_rank = [](std::uint32_t) {};
};

// Walks the trace at `trace` (whose manifest is `manifest`); returns the number of events.
// A rank whose stream is cut or damaged adds one line to `problems` (its events up to there
// are walked). Throws Error if a stream cannot be opened.
std::uint64_t walk_ranks(const std::filesystem::path& trace, const Manifest& manifest,
                         bool progress, const RankWalk& walk, std::vector<std::string>& problems);

// Loads TRACE/manifest.json and checks that the streams of every rank it lists are there
// (throws Error). A replay profile lists only the replayed rank(s); walk_ranks walks those.
Manifest load_trace(const std::filesystem::path& trace);

// Makes `out` an empty directory: creates it, or accepts an existing empty one. Throws Error
// naming `out` if it exists and is not an empty directory, or cannot be created.
void prepare_output_dir(const std::filesystem::path& out);

}  // namespace encore::exporter
