// Reading and atomically replacing manifest.json files.
#include "encore/manifest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <fstream>
#include <string>

#include "encore/error.hpp"
#include "encore/json_file.hpp"
#include "encore/rank_list.hpp"
#include "encore/stream_file.hpp"

namespace encore {

std::vector<std::string> process_command_line() {
  std::vector<std::string> args;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

std::int64_t unix_time_ns() noexcept {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

std::string iso_utc(std::int64_t unix_ns) {
  const std::time_t secs = unix_ns / 1'000'000'000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Manifest load_manifest(const std::filesystem::path& path) {
  return manifest_from_json(read_json_file(path), path.string());
}

void save_manifest(const Manifest& m, const std::filesystem::path& path) {
  const std::string name = path.string();
  const nlohmann::json doc = manifest_to_json(m);
  manifest_from_json(doc, name);  // never write a manifest we would refuse to load
  const std::string text = doc.dump(2) + "\n";

  // Same directory as the target, so rename() is atomic.
  const std::string tmp = name + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(format_in(tmp, "cannot create: " + errno_text(errno)));
  int err = write_fully(fd, std::as_bytes(std::span(text)));
  const char* step = "write failed";
  if (err == 0 && ::fsync(fd) != 0) {
    err = errno;
    step = "fsync failed";
  }
  if (::close(fd) != 0 && err == 0 && errno != EINTR) {
    err = errno;
    step = "close failed";
  }
  if (err == 0 && ::rename(tmp.c_str(), name.c_str()) != 0) {
    err = errno;
    step = "rename failed";
  }
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw Error(format_in(name, std::string(step) + ": " + errno_text(err)));
  }
}

std::int64_t RankInfo::offset_at(std::int64_t local_ns) const noexcept {
  if (!sync_init || !sync_end || sync_end->at_ns <= sync_init->at_ns) return clock_offset_ns;
  const auto t0 = static_cast<std::int64_t>(sync_init->at_ns);
  const auto t1 = static_cast<std::int64_t>(sync_end->at_ns);
  if (local_ns <= t0) return sync_init->offset_ns;
  if (local_ns >= t1) return sync_end->offset_ns;
  // The drift is some ppm of the run: a double's 53 bits hold the product exactly enough.
  const double f = static_cast<double>(local_ns - t0) / static_cast<double>(t1 - t0);
  const auto drift = static_cast<double>(sync_end->offset_ns - sync_init->offset_ns);
  return sync_init->offset_ns + static_cast<std::int64_t>(std::llround(f * drift));
}

std::int64_t RankInfo::lowest_offset() const noexcept {
  if (!sync_init || !sync_end || sync_end->at_ns <= sync_init->at_ns) return clock_offset_ns;
  return std::min(sync_init->offset_ns, sync_end->offset_ns);
}

bool records_payload_of(const Manifest& m, std::uint32_t rank) {
  const auto it = m.options.find("payload_ranks");
  if (it == m.options.end() || !it->is_string()) return true;
  RankList list;
  return !RankList::parse(it->get<std::string>(), list).empty() || list.contains(rank);
}

}  // namespace encore
