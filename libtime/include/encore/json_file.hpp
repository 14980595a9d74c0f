// Reading JSON that comes with a trace (manifests, call-site tables, replay profiles, --params
// files) without trusting it: its size and nesting are bounded before nlohmann sees it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

namespace encore {

// Encore writes at most 4 levels. nlohmann copies, compares and dumps recursively, so a deeply
// nested document overflows the stack long after it parsed.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Far above any manifest or call-site table Encore writes; refused before anything is read.
inline constexpr std::uint64_t kMaxJsonFileBytes = std::uint64_t{64} << 20;

// Parses `text`, read from `name`. Throws Error "<name>: nesting deeper than 64 at offset N" or
// "<name>: invalid JSON at offset N".
nlohmann::json parse_json(std::string_view text, std::string_view name);

// Reads and parses a file with parse_json. Only a regular file of at most kMaxJsonFileBytes is
// read (a FIFO named by a trace would block the open forever); every failure is an Error
// naming the file.
nlohmann::json read_json_file(const std::filesystem::path& path);

}  // namespace encore
