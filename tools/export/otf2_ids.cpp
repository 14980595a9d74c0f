#include "otf2_ids.hpp"

#include <fmt/format.h>

namespace encore::exporter {

OTF2_StringRef Otf2Strings::ref(const std::string& s) {
  auto [it, fresh] = refs_.try_emplace(s, static_cast<OTF2_StringRef>(strings_.size()));
  if (fresh) strings_.push_back(s);
  return it->second;
}

void Otf2Strings::write(OTF2_GlobalDefWriter* g, const Otf2Check& check) const {
  for (std::size_t i = 0; i < strings_.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(i), strings_[i].c_str()));
}

Otf2Comms::Otf2Comms(std::uint32_t nprocs) {
  std::vector<std::int64_t> all(nprocs);
  for (std::uint32_t r = 0; r < nprocs; ++r) all[r] = r;
  comms_.push_back(std::move(all));
  comms_.emplace_back();  // MPI_COMM_SELF: a COMM_SELF group, no members
}

OTF2_CommRef Otf2Comms::find_or_add(const std::vector<std::int64_t>& members, int k) {
  auto [it, fresh] = index_.try_emplace({members, k}, static_cast<OTF2_CommRef>(comms_.size()));
  if (fresh) comms_.push_back(members);
  return it->second;
}

std::string Otf2Comms::name(std::size_t i) const {
  if (i == 0) return "MPI_COMM_WORLD";
  if (i == 1) return "MPI_COMM_SELF";
  return fmt::format("comm {} ({} ranks)", i, comms_[i].size());
}

void Otf2Comms::write(OTF2_GlobalDefWriter* g, std::uint32_t nprocs,
                      const std::vector<OTF2_StringRef>& names, OTF2_StringRef empty,
                      const Otf2Check& check) const {
  // Group 0: every rank's main location, in rank order; communicator groups index into it.
  std::vector<std::uint64_t> locations(nprocs);
  for (std::uint32_t r = 0; r < nprocs; ++r) locations[r] = r;
  check(OTF2_GlobalDefWriter_WriteGroup(g, 0, empty, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, nprocs,
                                        locations.data()));
  for (std::size_t i = 0; i < comms_.size(); ++i) {
    std::vector<std::uint64_t> members;
    for (const std::int64_t m : comms_[i])
      if (m >= 0 && m < nprocs) members.push_back(static_cast<std::uint64_t>(m));
    const auto group = static_cast<OTF2_GroupRef>(i + 1);
    check(OTF2_GlobalDefWriter_WriteGroup(
        g, group, empty, i == 1 ? OTF2_GROUP_TYPE_COMM_SELF : OTF2_GROUP_TYPE_COMM_GROUP,
        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(members.size()),
        members.data()));
  }
  for (std::size_t i = 0; i < comms_.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteComm(g, static_cast<OTF2_CommRef>(i), names[i],
                                         static_cast<OTF2_GroupRef>(i + 1), OTF2_UNDEFINED_COMM,
                                         OTF2_COMM_FLAG_NONE));
}

}  // namespace encore::exporter
