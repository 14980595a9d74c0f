// Definitions the OTF2 exporter collects while it reads the ranks and writes at the end:
// location ids, the string table, and communicators matched across ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <otf2/otf2.h>

namespace encore::exporter {

// Thread 0 of rank r is location r (the usual convention); thread t > 0 is (t << 32) | r.
inline OTF2_LocationRef otf2_location_id(std::uint32_t rank, std::uint16_t thread) {
  return (static_cast<std::uint64_t>(thread) << 32) | rank;
}

using Otf2Check = std::function<void(OTF2_ErrorCode)>;

// Strings get refs in the order they are asked for; write() emits them all.
class Otf2Strings {
 public:
  OTF2_StringRef ref(const std::string& s);
  void write(OTF2_GlobalDefWriter* g, const Otf2Check& check) const;

 private:
  std::unordered_map<std::string, OTF2_StringRef> refs_;
  std::vector<std::string> strings_;
};

// Global communicators: 0 is MPI_COMM_WORLD, 1 MPI_COMM_SELF, then one per distinct
// (members, k) pair: the k-th communicator with these members (world ranks) a rank created.
class Otf2Comms {
 public:
  explicit Otf2Comms(std::uint32_t nprocs);
  OTF2_CommRef world() const { return 0; }
  OTF2_CommRef self() const { return 1; }
  OTF2_CommRef find_or_add(const std::vector<std::int64_t>& members, int k);
  std::size_t size() const { return comms_.size(); }
  std::string name(std::size_t i) const;
  // Groups (all locations; each communicator's members as world ranks) and communicators.
  void write(OTF2_GlobalDefWriter* g, std::uint32_t nprocs,
             const std::vector<OTF2_StringRef>& names, OTF2_StringRef empty,
             const Otf2Check& check) const;

 private:
  std::vector<std::vector<std::int64_t>> comms_;  // members, world and self included
  std::map<std::pair<std::vector<std::int64_t>, int>, OTF2_CommRef> index_;
};

}  // namespace encore::exporter
