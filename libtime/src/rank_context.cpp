// Datatype sizes and communicator members, learnt from one rank's calls in order.
#include "encore/rank_context.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// Counts and sizes come from the trace, which may be damaged: arithmetic on them saturates
// (sizes, unsigned) or gives up (element counts: the size stays unknown) instead of overflowing.
std::uint64_t clamp(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? ~std::uint64_t{0} : r;
}

std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? ~std::uint64_t{0} : r;
}

// The sum of the entries, saturated at int64's bounds, negative totals as 0 (a negative count
// only lowers a total, as MPI would refuse it anyway).
std::uint64_t sum(const std::vector<std::int64_t>& v) {
  std::int64_t s = 0;
  for (const auto x : v)
    if (__builtin_add_overflow(s, x, &s)) s = x < 0 ? INT64_MIN : INT64_MAX;
  return clamp(s);
}

std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Elements of one dimension of a darray that land on process coordinate `coord` (none where
// the arguments are not a valid distribution; nullopt where they overflow).
std::optional<std::int64_t> darray_local(std::int64_t gsize, std::int64_t distrib,
                                         std::int64_t darg, std::int64_t psize,
                                         std::int64_t coord) {
  if (distrib != kDistributeBlock && distrib != kDistributeCyclic) return gsize;  // NONE
  if (psize <= 0 || coord < 0 || coord >= psize || gsize < 0) return 0;
  if (distrib == kDistributeBlock) {
    const std::int64_t b =
        darg == kDistributeDefaultArg ? gsize / psize + (gsize % psize != 0) : darg;
    if (b <= 0) return 0;
    const auto start = checked_mul(coord, b);
    if (!start) return std::nullopt;
    return std::clamp<std::int64_t>(gsize - *start, 0, b);
  }
  const std::int64_t b = darg == kDistributeDefaultArg ? 1 : darg;
  if (b <= 0) return 0;
  const auto round = checked_mul(b, psize);
  const auto start = checked_mul(coord, b);
  if (!round || !start) return std::nullopt;
  const std::int64_t full = gsize / *round;  // complete rounds
  const std::int64_t rest = gsize - full * *round;
  const auto whole = checked_mul(full, b);
  if (!whole) return std::nullopt;
  return *whole + std::clamp<std::int64_t>(rest - *start, 0, b);
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

namespace {

// Size of a predefined datatype, by its index among the predefined handles.
std::optional<std::uint64_t> predefined_size(const PredefinedHandle& h) {
  const std::string_view name = h.name;
  // MPICH's pair types are not builtin handles; their sizes are the sums of their members.
  if (name == "MPI_FLOAT_INT") return 8;
  if (name == "MPI_DOUBLE_INT") return 12;
  if (name == "MPI_LONG_INT") return 12;
  if (name == "MPI_SHORT_INT") return 6;
  if (name == "MPI_LONG_DOUBLE_INT") return 20;
  // Builtin handles carry their size in bits 8-15 (MPICH's handle layout).
  const auto v = static_cast<std::uint64_t>(h.value);
  if ((v >> 30) != 1) return std::nullopt;  // not a builtin handle
  return (v >> 8) & 0xff;
}

// Worked out once: every collective's size asks for one.
const std::vector<std::optional<std::uint64_t>>& predefined_sizes() {
  static const std::vector<std::optional<std::uint64_t>> sizes = [] {
    std::vector<std::optional<std::uint64_t>> v;
    for (const auto& h : predefined_handles(HandleKind::datatype)) v.push_back(predefined_size(h));
    return v;
  }();
  return sizes;
}

}  // namespace

std::optional<std::uint64_t> RankContext::type_size(std::uint64_t id) const {
  if (id >= event_format::kFirstDynamicId) {
    const auto it = type_sizes_.find(id);
    if (it == type_sizes_.end()) return std::nullopt;
    return it->second;
  }
  if (id < event_format::kFirstPredefinedId) return std::nullopt;
  const auto& sizes = predefined_sizes();
  const std::size_t i = id - event_format::kFirstPredefinedId;
  return i < sizes.size() ? sizes[i] : std::nullopt;
}

const CommInfo* RankContext::comm(std::uint64_t id) const {
  const auto it = comms_.find(id);
  return it == comms_.end() ? nullptr : &it->second;
}

const CommInfo* RankContext::group(std::uint64_t id) const {
  const auto it = groups_.find(id);
  return it == groups_.end() ? nullptr : &it->second;
}

namespace {

// Per function id: whether observe() can learn anything from it (a modelled function with a
// constructor or destructor argument, or a datatype constructor). Most calls of a trace are
// none of these, and observe() is called for every event by the fit.
const std::vector<bool>& learns_from() {
  static const std::vector<bool> table = [] {
    const auto fns = function_table();
    std::vector<bool> v(fns.size(), false);
    for (std::size_t i = 0; i < fns.size(); ++i) {
      const FunctionInfo& f = fns[i];
      if (!f.modelled) continue;
      bool any = f.category == Category::datatype;
      for (const auto& p : f.params)
        any = any || p.role == Role::comm_out || p.role == Role::group_out ||
              p.role == Role::comm_free || p.role == Role::group_free ||
              p.role == Role::datatype_free;
      v[i] = any;
    }
    return v;
  }();
  return table;
}

}  // namespace

void RankContext::observe(const Event& e) {
  if (e.rc != 0) return;
  const auto& learns = learns_from();
  if (e.function >= learns.size() || !learns[e.function]) return;
  const FunctionInfo& f = e.info();
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
    elements = checked_mul(scalar("count"), scalar("blocklength"));
    if (!elements) return;
  } else if (name == "Type_indexed" || name == "Type_hindexed" || name == "Type_create_hindexed") {
    const std::uint64_t n = sum(list("array_of_blocklengths"));
    if (n > static_cast<std::uint64_t>(INT64_MAX)) return;
    elements = static_cast<std::int64_t>(n);
  } else if (name == "Type_create_subarray") {
    std::optional<std::int64_t> n = 1;
    for (const auto s : list("array_of_subsizes"))
      if (n) n = checked_mul(*n, s);
    if (!n) return;
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
      std::optional<std::int64_t> n = 1;
      for (std::size_t d = 0; d < nd && n; ++d) {
        const auto local = darray_local(gsizes[d], distribs[d], dargs[d], psizes[d], coord[d]);
        n = local ? checked_mul(*n, *local) : std::nullopt;
      }
      if (!n) return;
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
      bytes = sat_add(bytes, sat_mul(clamp(lengths[i]), *s));
    }
    if (lengths.size() == types.size()) type_sizes_[id] = bytes;
    return;
  }
  if (elements && old) type_sizes_[id] = sat_mul(clamp(*elements), *old);
}

namespace {

// How message_bytes reads one function's arguments, worked out once per function id from the
// (constant) function table with the name rules below, so that a call costs a few indexed
// loads instead of comparisons of parameter and function names (about 1100 instructions per
// collective before).
enum class Sizing : std::uint8_t {
  nothing,     // not modelled, or a category that moves nothing message_bytes counts
  completion,  // Wait*, Test*: the payloads, else the statuses
  send,        // sent: the hashes, else count x datatype
  sendrecv,    // sent as send (sendcount x sendtype unless _replace); received as recv
  recv,        // Recv, Mrecv: the payloads, else the statuses
  unknown,     // a neighbourhood collective: known = false
  coll,        // a collective: Formula
};
enum class Formula : std::uint8_t {
  none,  // a collective moving nothing counted here (Barrier, and the names below miss)
  bcast,
  reduce,
  allreduce,  // Allreduce, Scan, Exscan, Reduce_local
  gather,
  gatherv,
  scatter,
  scatterv,
  allgather,
  allgatherv,
  alltoall,
  alltoallv,
  alltoallw,
  reduce_scatter,
  reduce_scatter_block,
};
constexpr std::uint16_t kNoParam = 0xFFFF;
// Parameters message_bytes reads, by name; kNoParam where the function has none.
enum Param : std::uint8_t {
  kCount,
  kDatatype,
  kSendcount,
  kSendtype,
  kRecvcount,
  kRecvtype,
  kSendcounts,
  kRecvcounts,
  kSendtypes,
  kRecvtypes,
  kRoot,
  kComm,
  kParams
};
constexpr std::array<std::string_view, kParams> kParamNames = {
    "count",      "datatype",   "sendcount", "sendtype",  "recvcount", "recvtype",
    "sendcounts", "recvcounts", "sendtypes", "recvtypes", "root",      "comm"};

struct SizingRule {
  Sizing sizing = Sizing::nothing;
  Formula formula = Formula::none;
  bool reduce_local = false;  // the one collective that needs no communicator
  std::array<std::uint16_t, kParams> at{};
};

SizingRule make_rule(const FunctionInfo& f) {
  SizingRule r;
  for (std::size_t k = 0; k < kParams; ++k) {
    r.at[k] = kNoParam;
    for (std::size_t i = 0; i < f.params.size() && i < kNoParam; ++i)
      if (kParamNames[k] == f.params[i].name) {
        r.at[k] = static_cast<std::uint16_t>(i);
        break;
      }
  }
  if (!f.modelled) return r;
  std::string_view name = strip(f.name);
  if (f.category == Category::completion) {
    r.sizing = Sizing::completion;
    return r;
  }
  if (f.category == Category::p2p) {
    const bool is_persistent = name.size() > 5 && name.substr(name.size() - 5) == "_init";
    if (name.find("send") != std::string_view::npos ||
        name.find("Send") != std::string_view::npos) {
      if (name.rfind("Sendrecv", 0) == 0) {
        r.sizing = Sizing::sendrecv;
        if (name == "Sendrecv_replace") {  // one buffer: count and datatype
          r.at[kSendcount] = r.at[kCount];
          r.at[kSendtype] = r.at[kDatatype];
        }
      } else {
        r.sizing = Sizing::send;
      }
    } else if (!is_persistent && (name == "Recv" || name == "Mrecv")) {
      r.sizing = Sizing::recv;
    }
    return r;
  }
  if (f.category != Category::collective) return r;
  std::string blocking;  // nonblocking: same buffers ("Iallreduce" -> "Allreduce")
  if (name.size() > 1 && name[0] == 'I' && name[1] >= 'a' && name[1] <= 'z') {
    blocking.assign(name.substr(1));
    blocking[0] = static_cast<char>(blocking[0] - 'a' + 'A');
    name = blocking;
  }
  if (name.size() > 5 && name.substr(name.size() - 5) == "_init") name.remove_suffix(5);
  if (name.rfind("Neighbor_", 0) == 0) {
    r.sizing = Sizing::unknown;
    return r;
  }
  r.sizing = Sizing::coll;
  r.reduce_local = name == "Reduce_local";
  struct Entry {
    std::string_view name;
    Formula formula;
  };
  static constexpr Entry kFormulas[] = {{"Bcast", Formula::bcast},
                                        {"Reduce", Formula::reduce},
                                        {"Allreduce", Formula::allreduce},
                                        {"Scan", Formula::allreduce},
                                        {"Exscan", Formula::allreduce},
                                        {"Reduce_local", Formula::allreduce},
                                        {"Gather", Formula::gather},
                                        {"Gatherv", Formula::gatherv},
                                        {"Scatter", Formula::scatter},
                                        {"Scatterv", Formula::scatterv},
                                        {"Allgather", Formula::allgather},
                                        {"Allgatherv", Formula::allgatherv},
                                        {"Alltoall", Formula::alltoall},
                                        {"Alltoallv", Formula::alltoallv},
                                        {"Alltoallw", Formula::alltoallw},
                                        {"Reduce_scatter", Formula::reduce_scatter},
                                        {"Reduce_scatter_block", Formula::reduce_scatter_block}};
  for (const auto& x : kFormulas)
    if (x.name == name) r.formula = x.formula;
  return r;
}

const std::vector<SizingRule>& sizing_rules() {
  static const std::vector<SizingRule> rules = [] {
    std::vector<SizingRule> t;
    for (const auto& f : function_table()) t.push_back(make_rule(f));
    return t;
  }();
  return rules;
}

}  // namespace

MessageBytes message_bytes(const RankContext& ctx, const Event& e) {
  MessageBytes m;
  const auto& rules = sizing_rules();
  if (e.function >= rules.size() || e.rc != 0) return m;
  const SizingRule& rule = rules[e.function];
  if (rule.sizing == Sizing::nothing) return m;
  const auto arg = [&e, &rule](Param p) -> const ArgValue* {
    const std::size_t i = rule.at[p];
    return i < e.args.size() ? &e.args[i] : nullptr;  // kNoParam is never below the size
  };
  auto size_of = [&](Param count, Param type) -> std::uint64_t {
    const ArgValue* c = arg(count);
    const ArgValue* t = arg(type);
    if (!c || !t) return 0;
    const auto s = ctx.type_size(static_cast<std::uint64_t>(t->scalar));
    if (!s) {
      m.known = false;
      return 0;
    }
    if (c->list.empty()) return sat_mul(clamp(c->scalar), *s);
    return sat_mul(sum(c->list), *s);
  };
  const auto payload = [&e] {
    std::uint64_t n = 0;
    for (const auto& p : e.payloads) n += p.bytes;
    return n;
  };
  const auto hashed = [&e] {
    std::uint64_t n = 0;
    for (const auto& h : e.send_hashes) n += h.bytes;
    return n;
  };
  const auto received = [&e, &payload] {
    if (!e.payloads.empty()) return payload();
    std::uint64_t n = 0;
    const std::size_t params = e.info().params.size();
    // Not stale ones; nor a cancelled receive's, which received nothing (captures before
    // session 26 kept the count its status still held).
    for (std::size_t i = 0; i < params && i < e.args.size(); ++i)
      for (const auto& s : e.args[i].statuses)
        if (!(s.bits & event_format::kStatusCancelled)) n += s.bytes;
    return n;
  };
  switch (rule.sizing) {
    case Sizing::nothing:
      return m;
    case Sizing::completion:
    case Sizing::recv:
      m.received = received();
      return m;
    case Sizing::send:
      m.sent = !e.send_hashes.empty() ? hashed() : size_of(kCount, kDatatype);
      return m;
    case Sizing::sendrecv:
      m.sent = !e.send_hashes.empty() ? hashed() : size_of(kSendcount, kSendtype);
      m.received = received();
      return m;
    case Sizing::unknown:
      m.known = false;
      return m;
    case Sizing::coll:
      break;
  }
  const ArgValue* comm_arg = arg(kComm);
  const CommInfo* comm =
      comm_arg ? ctx.comm(static_cast<std::uint64_t>(comm_arg->scalar)) : nullptr;
  if (!comm && !rule.reduce_local) {
    m.known = false;
    return m;
  }
  const std::uint64_t n = comm ? clamp(comm->size()) : 1;
  const ArgValue* root_arg = arg(kRoot);
  const bool root = root_arg && comm && root_arg->scalar == comm->rank;
  switch (rule.formula) {
    case Formula::none:
      break;
    case Formula::bcast:
      (root ? m.sent : m.received) = size_of(kCount, kDatatype);
      break;
    case Formula::reduce:
      m.sent = size_of(kCount, kDatatype);
      if (root) m.received = m.sent;
      break;
    case Formula::allreduce:
      m.sent = m.received = size_of(kCount, kDatatype);
      break;
    case Formula::gather:
    case Formula::gatherv:
      m.sent = size_of(kSendcount, kSendtype);
      if (root)
        m.received = rule.formula == Formula::gather ? sat_mul(n, size_of(kRecvcount, kRecvtype))
                                                     : size_of(kRecvcounts, kRecvtype);
      break;
    case Formula::scatter:
    case Formula::scatterv:
      m.received = size_of(kRecvcount, kRecvtype);
      if (root)
        m.sent = rule.formula == Formula::scatter ? sat_mul(n, size_of(kSendcount, kSendtype))
                                                  : size_of(kSendcounts, kSendtype);
      break;
    case Formula::allgather:
      m.sent = size_of(kSendcount, kSendtype);
      m.received = sat_mul(n, size_of(kRecvcount, kRecvtype));
      break;
    case Formula::allgatherv:
      m.sent = size_of(kSendcount, kSendtype);
      m.received = size_of(kRecvcounts, kRecvtype);
      break;
    case Formula::alltoall:
      m.sent = sat_mul(n, size_of(kSendcount, kSendtype));
      m.received = sat_mul(n, size_of(kRecvcount, kRecvtype));
      break;
    case Formula::alltoallv:
      m.sent = size_of(kSendcounts, kSendtype);
      m.received = size_of(kRecvcounts, kRecvtype);
      break;
    case Formula::alltoallw: {
      auto w = [&](Param counts, Param types) {
        const ArgValue* c = arg(counts);
        const ArgValue* t = arg(types);
        std::uint64_t bytes = 0;
        for (std::size_t i = 0; c && t && i < c->list.size() && i < t->list.size(); ++i) {
          const auto s = ctx.type_size(static_cast<std::uint64_t>(t->list[i]));
          if (!s)
            m.known = false;
          else
            bytes = sat_add(bytes, sat_mul(clamp(c->list[i]), *s));
        }
        return bytes;
      };
      m.sent = w(kSendcounts, kSendtypes);
      m.received = w(kRecvcounts, kRecvtypes);
      break;
    }
    case Formula::reduce_scatter: {
      m.sent = size_of(kRecvcounts, kDatatype);
      const ArgValue* c = arg(kRecvcounts);
      const ArgValue* t = arg(kDatatype);
      const auto s = t ? ctx.type_size(static_cast<std::uint64_t>(t->scalar)) : std::nullopt;
      if (c && s && comm->rank >= 0 && static_cast<std::size_t>(comm->rank) < c->list.size())
        m.received = sat_mul(clamp(c->list[static_cast<std::size_t>(comm->rank)]), *s);
      break;
    }
    case Formula::reduce_scatter_block:
      m.received = size_of(kRecvcount, kDatatype);
      m.sent = sat_mul(n, m.received);
      break;
  }
  return m;
}

}  // namespace encore
