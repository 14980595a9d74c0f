// Datatype sizes and communicator members, learnt from one rank's calls in order.
#include "encore/rank_context.hpp"

#include <algorithm>
#include <string>

#include "encore/event_format.hpp"

namespace encore {
namespace {

// MPICH's values (mpi.h): the trace comes from the MPI the table was generated from.
constexpr std::int64_t kDistributeBlock = 121;
constexpr std::int64_t kDistributeCyclic = 122;
constexpr std::int64_t kDistributeDefaultArg = -49767;

std::string_view strip(std::string_view name) {
  if (name.rfind("MPI_", 0) == 0) name.remove_prefix(4);
  if (name.size() > 2 && name.substr(name.size() - 2) == "_c") name.remove_suffix(2);
  return name;
}

std::int64_t sum(const std::vector<std::int64_t>& v) {
  std::int64_t s = 0;
  for (const auto x : v) s += x;
  return s;
}

std::uint64_t clamp(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

// Elements of one dimension of a darray that land on process coordinate `coord`.
std::int64_t darray_local(std::int64_t gsize, std::int64_t distrib, std::int64_t darg,
                          std::int64_t psize, std::int64_t coord) {
  if (distrib == kDistributeBlock) {
    const std::int64_t b = darg == kDistributeDefaultArg ? (gsize + psize - 1) / psize : darg;
    return std::clamp<std::int64_t>(gsize - coord * b, 0, b);
  }
  if (distrib == kDistributeCyclic) {
    const std::int64_t b = darg == kDistributeDefaultArg ? 1 : darg;
    if (b <= 0 || psize <= 0) return 0;
    const std::int64_t full = gsize / (b * psize);  // complete rounds
    const std::int64_t rest = gsize - full * b * psize;
    return full * b + std::clamp<std::int64_t>(rest - coord * b, 0, b);
  }
  return gsize;  // MPI_DISTRIBUTE_NONE
}

}  // namespace

const ArgValue* find_arg(const Event& e, std::string_view name) {
  const auto& params = e.info().params;
  for (std::size_t i = 0; i < params.size() && i < e.args.size(); ++i)
    if (name == params[i].name) return &e.args[i];
  return nullptr;
}

RankContext::RankContext(std::uint32_t world_rank, std::uint32_t world_size)
    : world_rank_(world_rank), world_size_(world_size) {
  const auto comms = predefined_handles(HandleKind::comm);
  for (std::size_t i = 0; i < comms.size(); ++i) {
    CommInfo c;
    if (std::string_view(comms[i].name) == "MPI_COMM_WORLD") {
      for (std::uint32_t r = 0; r < world_size; ++r) c.members.push_back(r);
      c.rank = world_rank;
    } else if (std::string_view(comms[i].name) == "MPI_COMM_SELF") {
      c.members.push_back(world_rank);
      c.rank = 0;
    } else {
      continue;
    }
    comms_.emplace(event_format::kFirstPredefinedId + i, std::move(c));
  }
}

std::optional<std::uint64_t> RankContext::type_size(std::uint64_t id) const {
  if (id >= event_format::kFirstDynamicId) {
    const auto it = type_sizes_.find(id);
    if (it == type_sizes_.end()) return std::nullopt;
    return it->second;
  }
  if (id < event_format::kFirstPredefinedId) return std::nullopt;
  const auto types = predefined_handles(HandleKind::datatype);
  const std::size_t i = id - event_format::kFirstPredefinedId;
  if (i >= types.size()) return std::nullopt;
  const std::string_view name = types[i].name;
  // MPICH's pair types are not builtin handles; their sizes are the sums of their members.
  if (name == "MPI_FLOAT_INT") return 8;
  if (name == "MPI_DOUBLE_INT") return 12;
  if (name == "MPI_LONG_INT") return 12;
  if (name == "MPI_SHORT_INT") return 6;
  if (name == "MPI_LONG_DOUBLE_INT") return 20;
  // Builtin handles carry their size in bits 8-15 (MPICH's handle layout).
  const auto v = static_cast<std::uint64_t>(types[i].value);
  if ((v >> 30) != 1) return std::nullopt;  // not a builtin handle
  return (v >> 8) & 0xff;
}

const CommInfo* RankContext::comm(std::uint64_t id) const {
  const auto it = comms_.find(id);
  return it == comms_.end() ? nullptr : &it->second;
}

const CommInfo* RankContext::group(std::uint64_t id) const {
  const auto it = groups_.find(id);
  return it == groups_.end() ? nullptr : &it->second;
}

void RankContext::observe(const Event& e) {
  if (e.rc != 0) return;
  const FunctionInfo& f = e.info();
  if (!f.modelled) return;
  for (std::size_t i = 0; i < f.params.size() && i < e.args.size(); ++i) {
    const ArgValue& a = e.args[i];
    switch (f.params[i].role) {
      case Role::comm_out:
        if (a.present && a.scalar != event_format::kNullId) {
          CommInfo c;
          c.members = a.list;
          c.remote = a.remote;
          c.inter = (a.flags & 1) != 0;
          const auto me = std::find(c.members.begin(), c.members.end(), world_rank_);
          c.rank = me == c.members.end() ? -1 : me - c.members.begin();
          comms_[static_cast<std::uint64_t>(a.scalar)] = std::move(c);
        }
        break;
      case Role::group_out:
        if (a.present && a.scalar != event_format::kNullId) {
          CommInfo g;
          g.members = a.list;
          const auto me = std::find(g.members.begin(), g.members.end(), world_rank_);
          g.rank = me == g.members.end() ? -1 : me - g.members.begin();
          groups_[static_cast<std::uint64_t>(a.scalar)] = std::move(g);
        }
        break;
      case Role::comm_free:
        comms_.erase(static_cast<std::uint64_t>(a.scalar));
        break;
      case Role::group_free:
        groups_.erase(static_cast<std::uint64_t>(a.scalar));
        break;
      case Role::datatype_free:
        type_sizes_.erase(static_cast<std::uint64_t>(a.scalar));
        break;
      default:
        break;
    }
  }
  if (f.category == Category::datatype) observe_type(e, strip(f.name));
}

void RankContext::observe_type(const Event& e, std::string_view name) {
  const ArgValue* out = find_arg(e, "newtype");
  if (!out || !out->present) return;
  const auto id = static_cast<std::uint64_t>(out->scalar);
  auto scalar = [&e](std::string_view n) -> std::int64_t {
    const ArgValue* a = find_arg(e, n);
    return a ? a->scalar : 0;
  };
  auto list = [&e](std::string_view n) -> const std::vector<std::int64_t>& {
    static const std::vector<std::int64_t> none;
    const ArgValue* a = find_arg(e, n);
    return a ? a->list : none;
  };
  const ArgValue* old_arg = find_arg(e, "oldtype");
  const auto old = old_arg ? type_size(static_cast<std::uint64_t>(old_arg->scalar)) : std::nullopt;
  std::optional<std::int64_t> elements;  // of oldtype
  if (name == "Type_contiguous") {
    elements = scalar("count");
  } else if (name == "Type_vector" || name == "Type_hvector" || name == "Type_create_hvector" ||
             name == "Type_create_indexed_block" || name == "Type_create_hindexed_block") {
    elements = scalar("count") * scalar("blocklength");
  } else if (name == "Type_indexed" || name == "Type_hindexed" || name == "Type_create_hindexed") {
    elements = sum(list("array_of_blocklengths"));
  } else if (name == "Type_create_subarray") {
    std::int64_t n = 1;
    for (const auto s : list("array_of_subsizes")) n *= s;
    elements = n;
  } else if (name == "Type_create_darray") {
    const auto& gsizes = list("array_of_gsizes");
    const auto& distribs = list("array_of_distribs");
    const auto& dargs = list("array_of_dargs");
    const auto& psizes = list("array_of_psizes");
    const std::size_t nd = gsizes.size();
    if (distribs.size() == nd && dargs.size() == nd && psizes.size() == nd) {
      // Process coordinates: row-major over psizes whatever the array order (MPI 4.1 4.1.4).
      std::int64_t r = scalar("rank");
      std::vector<std::int64_t> coord(nd);
      for (std::size_t d = nd; d-- > 0;) {
        coord[d] = psizes[d] > 0 ? r % psizes[d] : 0;
        r = psizes[d] > 0 ? r / psizes[d] : 0;
      }
      std::int64_t n = 1;
      for (std::size_t d = 0; d < nd; ++d)
        n *= darray_local(gsizes[d], distribs[d], dargs[d], psizes[d], coord[d]);
      elements = n;
    }
  } else if (name == "Type_create_resized" || name == "Type_dup") {
    elements = 1;
  } else if (name == "Type_create_struct" || name == "Type_struct") {
    const auto& lengths = list("array_of_blocklengths");
    const auto& types = list("array_of_types");
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < lengths.size() && i < types.size(); ++i) {
      const auto s = type_size(static_cast<std::uint64_t>(types[i]));
      if (!s) return;
      bytes += clamp(lengths[i]) * *s;
    }
    if (lengths.size() == types.size()) type_sizes_[id] = bytes;
    return;
  }
  if (elements && old) type_sizes_[id] = clamp(*elements) * *old;
}

MessageBytes message_bytes(const RankContext& ctx, const Event& e) {
  MessageBytes m;
  const FunctionInfo& f = e.info();
  if (!f.modelled || e.rc != 0) return m;
  std::string_view name = strip(f.name);
  auto size_of = [&](std::string_view count, std::string_view type) -> std::uint64_t {
    const ArgValue* c = find_arg(e, count);
    const ArgValue* t = find_arg(e, type);
    if (!c || !t) return 0;
    const auto s = ctx.type_size(static_cast<std::uint64_t>(t->scalar));
    if (!s) {
      m.known = false;
      return 0;
    }
    if (c->list.empty()) return clamp(c->scalar) * *s;
    return clamp(sum(c->list)) * *s;
  };
  std::uint64_t payload = 0;
  for (const auto& p : e.payloads) payload += p.bytes;
  std::uint64_t hashed = 0;
  for (const auto& h : e.send_hashes) hashed += h.bytes;
  auto status_bytes = [&e, &f]() {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < f.params.size() && i < e.args.size(); ++i)  // not stale ones
      for (const auto& s : e.args[i].statuses) n += s.bytes;
    return n;
  };
  if (f.category == Category::completion) {
    m.received = !e.payloads.empty() ? payload : status_bytes();
    return m;
  }
  if (f.category == Category::p2p) {
    const bool is_persistent = name.size() > 5 && name.substr(name.size() - 5) == "_init";
    if (name.find("send") != std::string_view::npos ||
        name.find("Send") != std::string_view::npos) {
      if (name.rfind("Sendrecv", 0) == 0) {
        m.sent = !e.send_hashes.empty()       ? hashed
                 : name == "Sendrecv_replace" ? size_of("count", "datatype")
                                              : size_of("sendcount", "sendtype");
        m.received = !e.payloads.empty() ? payload : status_bytes();
      } else {
        m.sent = !e.send_hashes.empty() ? hashed : size_of("count", "datatype");
      }
    } else if (!is_persistent && (name == "Recv" || name == "Mrecv")) {
      m.received = !e.payloads.empty() ? payload : status_bytes();
    }
    return m;
  }
  if (f.category != Category::collective) return m;
  std::string blocking;  // nonblocking: same buffers ("Iallreduce" -> "Allreduce")
  if (name.size() > 1 && name[0] == 'I' && name[1] >= 'a' && name[1] <= 'z') {
    blocking.assign(name.substr(1));
    blocking[0] = static_cast<char>(blocking[0] - 'a' + 'A');
    name = blocking;
  }
  if (name.size() > 5 && name.substr(name.size() - 5) == "_init") name.remove_suffix(5);
  if (name.rfind("Neighbor_", 0) == 0) {
    m.known = false;
    return m;
  }
  const ArgValue* comm_arg = find_arg(e, "comm");
  const CommInfo* comm =
      comm_arg ? ctx.comm(static_cast<std::uint64_t>(comm_arg->scalar)) : nullptr;
  if (!comm && name != "Reduce_local") {
    m.known = false;
    return m;
  }
  const std::uint64_t n = comm ? clamp(comm->size()) : 1;
  const ArgValue* root_arg = find_arg(e, "root");
  const bool root = root_arg && comm && root_arg->scalar == comm->rank;
  if (name == "Bcast") {
    (root ? m.sent : m.received) = size_of("count", "datatype");
  } else if (name == "Reduce") {
    m.sent = size_of("count", "datatype");
    if (root) m.received = m.sent;
  } else if (name == "Allreduce" || name == "Scan" || name == "Exscan" || name == "Reduce_local") {
    m.sent = m.received = size_of("count", "datatype");
  } else if (name == "Gather" || name == "Gatherv") {
    m.sent = size_of("sendcount", "sendtype");
    if (root)
      m.received = (name == "Gather" ? n : 1) *
                   size_of(name == "Gather" ? "recvcount" : "recvcounts", "recvtype");
  } else if (name == "Scatter" || name == "Scatterv") {
    m.received = size_of("recvcount", "recvtype");
    if (root)
      m.sent = (name == "Scatter" ? n : 1) *
               size_of(name == "Scatter" ? "sendcount" : "sendcounts", "sendtype");
  } else if (name == "Allgather") {
    m.sent = size_of("sendcount", "sendtype");
    m.received = n * size_of("recvcount", "recvtype");
  } else if (name == "Allgatherv") {
    m.sent = size_of("sendcount", "sendtype");
    m.received = size_of("recvcounts", "recvtype");
  } else if (name == "Alltoall") {
    m.sent = n * size_of("sendcount", "sendtype");
    m.received = n * size_of("recvcount", "recvtype");
  } else if (name == "Alltoallv") {
    m.sent = size_of("sendcounts", "sendtype");
    m.received = size_of("recvcounts", "recvtype");
  } else if (name == "Alltoallw") {
    auto w = [&](std::string_view counts, std::string_view types) {
      const ArgValue* c = find_arg(e, counts);
      const ArgValue* t = find_arg(e, types);
      std::uint64_t bytes = 0;
      for (std::size_t i = 0; c && t && i < c->list.size() && i < t->list.size(); ++i) {
        const auto s = ctx.type_size(static_cast<std::uint64_t>(t->list[i]));
        if (!s)
          m.known = false;
        else
          bytes += clamp(c->list[i]) * *s;
      }
      return bytes;
    };
    m.sent = w("sendcounts", "sendtypes");
    m.received = w("recvcounts", "recvtypes");
  } else if (name == "Reduce_scatter") {
    m.sent = size_of("recvcounts", "datatype");
    const ArgValue* c = find_arg(e, "recvcounts");
    const ArgValue* t = find_arg(e, "datatype");
    const auto s = t ? ctx.type_size(static_cast<std::uint64_t>(t->scalar)) : std::nullopt;
    if (c && s && comm->rank >= 0 && static_cast<std::size_t>(comm->rank) < c->list.size())
      m.received = clamp(c->list[static_cast<std::size_t>(comm->rank)]) * *s;
  } else if (name == "Reduce_scatter_block") {
    m.received = size_of("recvcount", "datatype");
    m.sent = n * m.received;
  }
  return m;
}

}  // namespace encore
