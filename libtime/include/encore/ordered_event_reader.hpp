// One rank's events in the order its threads made the calls. A rank whose MPI calls come from
// several threads (MPI_THREAD_SERIALIZED or MULTIPLE) has one stream per thread, and their
// chunks reach the file in flush order, not call order; this reader merges them by start time
// (the raw clock, which all threads of a rank share). A first pass over the chunk headers
// (headers only: cheap) counts each thread's events, so the merge knows which threads still
// have events to come and never waits for a thread that is done. A one-thread rank is passed
// through as it is read. Memory: the events between the threads' chunks in the file.
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <span>
#include <string>

#include "encore/event_reader.hpp"

namespace encore {

class OrderedEventReader {
 public:
  // Throws Error if the file is missing or its header is bad.
  explicit OrderedEventReader(const std::filesystem::path& events_file);

  // The next event in call order, or false at the end of what can be read. Inline: a replay
  // calls it for every MPI call, and a one-thread rank (the usual) is passed straight through.
  bool next(Event& out) { return single_ ? reader_.next(out) : next_merged(out); }
  bool complete() const noexcept { return reader_.complete(); }
  const std::string& problem() const noexcept { return reader_.problem(); }
  std::size_t threads() const noexcept { return remaining_.size(); }
  // The encoded body of the event next() just gave (valid until the next call), when it came
  // straight from the file (one thread); empty when it was held back for the merge.
  std::span<const std::byte> last_body() const noexcept {
    return single_ ? reader_.last_body() : std::span<const std::byte>{};
  }
  // RankEventReader::last_extras_at() of that body (0 when there is none).
  std::size_t last_extras_at() const noexcept { return single_ ? reader_.last_extras_at() : 0; }

 private:
  bool next_merged(Event& out);  // several threads: merged by start time

  RankEventReader reader_;
  std::map<std::uint16_t, std::uint64_t> remaining_;  // events of each thread not read yet
  std::map<std::uint16_t, std::deque<Event>> buffered_;
  bool exhausted_ = false;
  bool single_ = true;  // one thread (or none) has events: remaining_.size() <= 1
};

}  // namespace encore
