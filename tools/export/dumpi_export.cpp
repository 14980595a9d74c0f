// encore export --to dumpi: SST-DUMPI traces (OUT/encore-NNNN.bin per rank, OUT/encore.meta)
// that SST/macro's parsedumpi and sst-dumpi's tools read. Each rank is written as its events
// are read (a 1 MiB buffer); the small tables (handle numbers, type sizes, call counts) go
// after the records. doc/dumpi-export.md says where every field comes from.
#include <array>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include "call_kinds.hpp"
#include "dumpi_format.hpp"
#include "exporters.hpp"
#include "matched_messages.hpp"
#include "rank_walk.hpp"
#include <fmt/format.h>
#include <mpi.h>

#include "encore/error.hpp"

namespace encore::exporter {
namespace {

namespace d = dumpi;

const std::map<std::string_view, d::Label>& labels() {
  static const std::map<std::string_view, d::Label> m = {
      {"Send", d::Send},
      {"Recv", d::Recv},
      {"Bsend", d::Bsend},
      {"Ssend", d::Ssend},
      {"Rsend", d::Rsend},
      {"Isend", d::Isend},
      {"Ibsend", d::Ibsend},
      {"Issend", d::Issend},
      {"Irsend", d::Irsend},
      {"Irecv", d::Irecv},
      {"Wait", d::Wait},
      {"Test", d::Test},
      {"Request_free", d::Request_free},
      {"Waitany", d::Waitany},
      {"Testany", d::Testany},
      {"Waitall", d::Waitall},
      {"Testall", d::Testall},
      {"Waitsome", d::Waitsome},
      {"Testsome", d::Testsome},
      {"Iprobe", d::Iprobe},
      {"Probe", d::Probe},
      // DUMPI has no matched probes: the probe, then the receive of the message it matched.
      {"Improbe", d::Iprobe},
      {"Mprobe", d::Probe},
      {"Imrecv", d::Irecv},
      {"Mrecv", d::Recv},
      {"Cancel", d::Cancel},
      {"Send_init", d::Send_init},
      {"Bsend_init", d::Bsend_init},
      {"Ssend_init", d::Ssend_init},
      {"Rsend_init", d::Rsend_init},
      {"Recv_init", d::Recv_init},
      {"Start", d::Start},
      {"Startall", d::Startall},
      {"Sendrecv", d::Sendrecv},
      {"Sendrecv_replace", d::Sendrecv_replace},
      {"Barrier", d::Barrier},
      {"Bcast", d::Bcast},
      {"Gather", d::Gather},
      {"Gatherv", d::Gatherv},
      {"Scatter", d::Scatter},
      {"Scatterv", d::Scatterv},
      {"Allgather", d::Allgather},
      {"Allgatherv", d::Allgatherv},
      {"Alltoall", d::Alltoall},
      {"Alltoallv", d::Alltoallv},
      {"Reduce", d::Reduce},
      {"Allreduce", d::Allreduce},
      {"Reduce_scatter", d::Reduce_scatter},
      {"Scan", d::Scan},
      {"Exscan", d::Exscan},
      {"Comm_size", d::Comm_size},
      {"Comm_rank", d::Comm_rank},
      {"Comm_dup", d::Comm_dup},
      {"Comm_split", d::Comm_split},
      {"Comm_free", d::Comm_free},
      {"Wtime", d::Wtime},
      {"Init", d::Init},
      {"Finalize", d::Finalize},
      {"Init_thread", d::Init_thread},
  };
  return m;
}

// Size in bytes of a predefined datatype: MPICH keeps it in bits 8..15 of a builtin handle;
// the pair types (direct handles) have the sizes of their two members.
std::uint32_t predefined_size(const PredefinedHandle& h) {
  static const std::map<std::string_view, std::uint32_t> pairs = {
      {"MPI_FLOAT_INT", 8}, {"MPI_DOUBLE_INT", 12}, {"MPI_LONG_INT", 12},
      {"MPI_SHORT_INT", 6}, {"MPI_2INT", 8},        {"MPI_LONG_DOUBLE_INT", 20}};
  const auto it = pairs.find(h.name);
  if (it != pairs.end()) return it->second;
  const auto v = static_cast<std::uint32_t>(h.value);
  return (v >> 30) == 1 ? (v >> 8) & 0xff : 0;  // HANDLE_KIND_BUILTIN is 1 in bits 30..31
}

template <std::size_t N>
int index_of(const std::string_view (&names)[N], std::string_view name) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<int>(i);
  return -1;
}

class RankWriter {
 public:
  RankWriter(const std::filesystem::path& file, std::uint32_t rank, const Manifest& m,
             std::int64_t shift, ExportStats& stats, std::set<std::string>& noted,
             std::map<std::uint16_t, std::uint64_t>& skipped)
      : out_(file),
        rank_(rank),
        manifest_(m),
        stats_(stats),
        noted_(noted),
        skipped_(skipped),
        info_(*m.rank_info(rank)),
        shift_ns_(shift) {
    counts_.fill(0);
    if (m.papi.available) counters_ = m.papi.requested.size();
    out_.u64(d::kHeadMagic);
    body_ = out_.tell();
    out_.u32(0);  // cpu_time_offset: no CPU times are written
    out_.u32(0);  // wall_time_offset: wall times are seconds from the trace's zero
    for (const auto& h : predefined_handles(HandleKind::datatype)) {  // the whole native table
      const int native = index_of(d::kDatatypeNames, h.name);
      if (native >= 0) dt_sizes_[static_cast<std::size_t>(native) + 2] = predefined_size(h);
    }
    comms_[world_comm_id()] = d::kCommWorld;
    comms_[self_comm_id()] = d::kCommSelf;
  }

  void event(const Event& ev, const RankContext& ctx) {
    ctx_ = &ctx;
    const CallClass& c = classify(ev.function);
    for (const auto& s : ev.signatures) type_sizes_[static_cast<std::int64_t>(s.datatype)] = s.size;
    accumulate(ev);
    new_comms(ev);
    matched_ = messages_.observe(ev);
    const auto it = labels().find(c.base);
    if (it == labels().end() || ev.rc != MPI_SUCCESS) {
      skipped_[ev.function]++;
      // A request no record creates (Iallreduce...) reads as MPI_REQUEST_NULL in Wait/Test.
      for (const auto& p : ev.info().params)
        if (p.role == Role::request_out)
          requests_[request_key(RequestRef{false, ev.thread, ev.index})] = d::kRequestNull;
      return;
    }
    write(it->second, c, ev);
  }

  void finish() {
    out_.u16(d::kEndOfStream);
    const std::uint64_t header = out_.tell();
    for (const auto v : d::kVersion) out_.u8(v);
    out_.u64(static_cast<std::uint64_t>(manifest_.start_time_unix_ns / 1000000000));
    out_.string(manifest_.rank_info(rank_)->host);
    out_.string("encore");  // the trace does not record the user
    out_.u32(0);            // mesh coordinates: none
    out_.u32(0);            // mesh size: none
    const std::uint64_t footer = out_.tell();
    out_.u64(d::kFootMagic);
    for (const auto n : counts_) out_.u32(n);
    for (std::size_t i = 0; i < counts_.size(); ++i) out_.u32(0);  // ignored calls: none
    const std::uint64_t keyval = out_.tell();
    out_.u32(0);
    const std::uint64_t perflbl = out_.tell();
    out_.u32(static_cast<std::uint32_t>(counters_));
    for (std::size_t i = 0; i < counters_; ++i) out_.string(manifest_.papi.requested[i]);
    const std::uint64_t addrlbl = out_.tell();
    out_.u32(0);  // function addresses: none
    const std::uint64_t sizelbl = out_.tell();
    out_.u32(static_cast<std::uint32_t>(dt_sizes_.size()));
    for (std::size_t i = 0; i < dt_sizes_.size(); ++i) {
      const auto src = dt_source_.find(static_cast<std::uint16_t>(i));
      std::uint32_t size = dt_sizes_[i];
      if (src != dt_source_.end()) {
        const auto known = type_sizes_.find(src->second);
        if (known != type_sizes_.end()) size = static_cast<std::uint32_t>(known->second);
      }
      out_.u32(size);
    }
    for (const std::uint64_t v :
         {d::kHeadMagic, sizelbl, addrlbl, perflbl, header, body_, footer, keyval})
      out_.u64(v);
    out_.close();
  }

  std::uint64_t records() const { return records_; }

 private:
  void note(const std::string& text) {
    if (noted_.insert(text).second) stats_.notes.push_back(text);
  }

  void accumulate(const Event& ev) {
    if (!counters_ || ev.counters.size() != counters_) return;
    auto& acc = perf_[ev.thread];
    acc.resize(counters_, 0);
    for (std::size_t i = 0; i < counters_; ++i) acc[i] += ev.counters[i];
  }

  // --- handle numbers ---------------------------------------------------------------------
  std::uint16_t comm(std::int64_t id) {
    if (id == 0) return d::kCommNull;
    const auto it = comms_.find(id);
    if (it != comms_.end()) return it->second;
    note("a communicator the trace did not see created is written as MPI_COMM_WORLD");
    return d::kCommWorld;
  }
  // Every communicator a call creates gets the next number, whether or not the call itself
  // has a DUMPI record (Cart_create, Comm_create...): later calls on it need one.
  void new_comms(const Event& ev) {
    const auto params = ev.info().params;
    for (std::size_t i = 0; i < params.size() && i < ev.args.size(); ++i) {
      if (params[i].role != Role::comm_out || !ev.args[i].present || ev.args[i].scalar == 0)
        continue;
      comms_[ev.args[i].scalar] = next_comm_++;
      if (next_comm_ == 0) note("more than 65531 communicators: DUMPI's 16-bit ids wrap");
    }
  }
  std::uint16_t datatype(std::int64_t id) {
    if (id == 0) return d::kDatatypeNull;
    if (id == 1) return d::kDatatypeError;
    const auto it = datatypes_.find(id);
    if (it != datatypes_.end()) return it->second;
    std::uint16_t dumpi_id = 0;
    std::uint32_t size = 0;
    const auto predefined = predefined_handles(HandleKind::datatype);
    if (id >= 2 && static_cast<std::size_t>(id - 2) < predefined.size()) {
      const auto& h = predefined[static_cast<std::size_t>(id - 2)];
      size = predefined_size(h);
      const int native = index_of(d::kDatatypeNames, h.name);
      if (native >= 0) dumpi_id = static_cast<std::uint16_t>(native + 2);
    }
    if (dumpi_id == 0) {
      dumpi_id = next_datatype_++;
      dt_source_[dumpi_id] = id;
    }
    if (const auto known = ctx_->type_size(static_cast<std::uint64_t>(id))) {
      size = static_cast<std::uint32_t>(*known);
      type_sizes_[id] = *known;
    }
    if (dt_sizes_.size() <= dumpi_id) dt_sizes_.resize(dumpi_id + 1u, 0);
    dt_sizes_[dumpi_id] = size;
    datatypes_[id] = dumpi_id;
    return dumpi_id;
  }
  std::uint8_t op(std::int64_t id) {
    if (id == 0) return d::kOpNull;
    const auto it = ops_.find(id);
    if (it != ops_.end()) return it->second;
    std::uint8_t dumpi_id = 0;
    const auto predefined = predefined_handles(HandleKind::op);
    if (id >= 2 && static_cast<std::size_t>(id - 2) < predefined.size()) {
      const int native = index_of(d::kOpNames, predefined[static_cast<std::size_t>(id - 2)].name);
      if (native >= 0) dumpi_id = static_cast<std::uint8_t>(native + 1);
    }
    if (dumpi_id == 0) dumpi_id = next_op_++;
    ops_[id] = dumpi_id;
    return dumpi_id;
  }
  // Every request Encore names (by its creating event) gets a number of its own.
  std::int32_t request(const RequestRef& r) {
    if (r.null) return d::kRequestNull;
    const auto key = request_key(r);
    const auto it = requests_.find(key);
    if (it != requests_.end()) return it->second;
    const std::int32_t id = next_request_++;
    requests_[key] = id;
    return id;
  }

  static std::int64_t peer_value(std::int64_t v) {
    if (v == MPI_ANY_SOURCE) return d::kAnySource;
    if (v == MPI_ROOT) return d::kRoot;
    return v;
  }
  static std::int64_t tag_value(std::int64_t v) { return v == MPI_ANY_TAG ? d::kAnyTag : v; }

  // --- records ----------------------------------------------------------------------------
  void begin(d::Label label, const Event& ev) {
    const bool perf = counters_ > 0;
    out_.u16(label);
    out_.u8(d::kStatuses | d::kWallTime | d::kThreadId | (perf ? d::kPerfInfo : 0));
    out_.u16(ev.thread);
    time(ev.start_ns);
    time(ev.end_ns);
    if (perf) {
      auto& acc = perf_[ev.thread];
      acc.resize(counters_, 0);
      out_.u8(static_cast<std::uint8_t>(counters_));
      for (const auto v : acc) {  // only compute segments are counted: in == out
        out_.u64(v);
        out_.u64(v);
      }
    }
    counts_[label]++;
    ++records_;
  }
  void time(std::uint64_t ns) {
    const auto local = static_cast<std::int64_t>(ns);
    const auto t = static_cast<std::uint64_t>(local + info_.offset_at(local) + shift_ns_);
    const std::uint64_t sec = t / 1000000000;
    if (sec > 0xffff) note("times past 65535 s wrap (DUMPI stores 16-bit seconds)");
    out_.u16(static_cast<std::uint16_t>(sec));
    out_.u32(static_cast<std::uint32_t>(t % 1000000000));
  }
  void status(const StatusRecord* s) {
    if (!s) {
      out_.u32(0);  // like MPI_STATUS_IGNORE
      return;
    }
    out_.u32(1);
    status_body(*s);
  }
  void status_body(const StatusRecord& s) {
    if (s.bytes > 0x7fffffff) note("status byte counts above 2^31-1 are cut (DUMPI's are 32-bit)");
    out_.i32(static_cast<std::int64_t>(std::min<std::uint64_t>(s.bytes, 0x7fffffff)));
    out_.i32(s.source);
    out_.u8(s.bits & 2 ? 1 : 0);  // cancelled
    out_.u8(static_cast<std::uint8_t>(s.error));
    out_.i32(s.tag);
  }
  void statuses(const ArgValue* a) {
    if (!a) {
      out_.u32(0);
      return;
    }
    out_.u32(static_cast<std::uint32_t>(a->statuses.size()));
    for (const auto& s : a->statuses) status_body(s);
  }
  void int_array(const ArgValue* a) {
    const std::size_t n = a ? a->list.size() : 0;
    out_.u32(static_cast<std::uint32_t>(n));
    for (std::size_t i = 0; i < n; ++i) out_.i32(a->list[i]);
  }
  void requests(const ArgValue* a) {
    const std::size_t n = a ? a->requests.size() : 0;
    out_.u32(static_cast<std::uint32_t>(n));
    for (std::size_t i = 0; i < n; ++i) out_.i32(request(a->requests[i]));
  }
  const StatusRecord* one_status(const Event& ev) {
    const ArgValue* s = role_arg(ev, Role::status_out);
    return s && !s->statuses.empty() ? &s->statuses[0] : nullptr;
  }
  // The status of a Test/Testany/Iprobe only when its flag (the nth int output) is set: MPI
  // leaves it undefined otherwise.
  const StatusRecord* flagged(const Event& ev, int nth) {
    return scalar(ev, Role::int_out, nth) != 0 ? one_status(ev) : nullptr;
  }
  std::int64_t scalar(const Event& ev, Role role, int nth = 0) {
    return role_scalar(ev, role, nth, 0);
  }

  void write(d::Label label, const CallClass& c, const Event& ev) {
    const std::int64_t comm_id = scalar(ev, Role::comm);
    const CommInfo* cm = ctx_->comm(static_cast<std::uint64_t>(comm_id));
    const std::int64_t my_rank = cm ? cm->rank : 0;
    const std::int64_t comm_size = cm ? cm->size() : 0;
    switch (c.kind) {
      case CallKind::send:
      case CallKind::recv:
      case CallKind::mrecv:
      case CallKind::isend:
      case CallKind::irecv:
      case CallKind::imrecv:
      case CallKind::send_init:
      case CallKind::recv_init: {
        // Mrecv, Imrecv: a Recv, Irecv of the message the probe matched (the probe's
        // communicator, the message's source and tag); MPI_MESSAGE_NO_PROC is MPI_PROC_NULL.
        const bool matched = c.kind == CallKind::mrecv || c.kind == CallKind::imrecv;
        const bool blocking =
            c.kind == CallKind::send || c.kind == CallKind::recv || c.kind == CallKind::mrecv;
        if (matched && matched_)
          note(
              "MPI_Mprobe/MPI_Improbe and MPI_Mrecv/MPI_Imrecv are written as Probe/Iprobe and "
              "Recv/Irecv of the matched message's source and tag (DUMPI has no records for "
              "them)");
        const std::int64_t peer = matched ? (matched_ ? matched_->source : MPI_PROC_NULL)
                                          : role_scalar(ev, Role::peer, 0, MPI_PROC_NULL);
        if (peer == MPI_PROC_NULL) {  // DUMPI has no MPI_PROC_NULL: the call moves nothing
          note("calls with MPI_PROC_NULL peers are left out (DUMPI has no MPI_PROC_NULL)");
          if (!blocking)
            requests_[request_key(RequestRef{false, ev.thread, ev.index})] = d::kRequestNull;
          return;
        }
        begin(label, ev);
        out_.i32(scalar(ev, Role::count));
        out_.u16(datatype(scalar(ev, Role::datatype)));
        out_.i32(peer_value(peer));
        out_.i32(tag_value(matched ? matched_->tag : scalar(ev, Role::tag)));
        out_.u16(comm(matched ? matched_->comm : comm_id));
        if (c.kind == CallKind::recv || c.kind == CallKind::mrecv) status(one_status(ev));
        if (!blocking) {
          const RequestRef self{false, ev.thread, ev.index};
          if (c.kind == CallKind::send_init || c.kind == CallKind::recv_init)
            persistent_.insert(request_key(self));
          out_.i32(request(self));
        }
        return;
      }
      case CallKind::sendrecv:
        sendrecv(label, ev, comm_id);
        return;
      default:
        break;
    }
    if ((label == d::Probe || label == d::Iprobe) &&
        role_scalar(ev, Role::peer, 0, MPI_PROC_NULL) == MPI_PROC_NULL) {
      note("calls with MPI_PROC_NULL peers are left out (DUMPI has no MPI_PROC_NULL)");
      return;  // it would read as a probe of MPI_ANY_SOURCE
    }
    begin(label, ev);
    switch (label) {
      case d::Wait:
      case d::Test:
      case d::Request_free:
      case d::Cancel:
      case d::Start: {
        const ArgValue* r = role_arg(ev, Role::request_inout);
        out_.i32(r && !r->requests.empty() ? request(r->requests[0]) : d::kRequestNull);
        if (label == d::Test) out_.i32(scalar(ev, Role::int_out));
        if (label == d::Wait) status(one_status(ev));
        if (label == d::Test) status(flagged(ev, 0));
        if (label == d::Request_free) forget(r);
        break;
      }
      case d::Waitany:
      case d::Testany:
        out_.i32(scalar(ev, Role::count));
        requests(role_arg(ev, Role::request_array));
        out_.i32(scalar(ev, Role::int_out, 0));
        if (label == d::Testany) out_.i32(scalar(ev, Role::int_out, 1));
        status(label == d::Testany ? flagged(ev, 1) : one_status(ev));
        break;
      case d::Waitall:
      case d::Testall:
        out_.i32(scalar(ev, Role::count));
        requests(role_arg(ev, Role::request_array));
        if (label == d::Testall) out_.i32(scalar(ev, Role::int_out));
        statuses(role_arg(ev, Role::status_array));
        break;
      case d::Waitsome:
      case d::Testsome:
        out_.i32(scalar(ev, Role::count));
        requests(role_arg(ev, Role::request_array));
        out_.i32(scalar(ev, Role::int_out));
        int_array(role_arg(ev, Role::int_array_out));
        statuses(role_arg(ev, Role::status_array));
        break;
      case d::Startall:
        out_.i32(scalar(ev, Role::count));
        requests(role_arg(ev, Role::request_array));
        break;
      case d::Probe:
      case d::Iprobe:
        out_.i32(peer_value(scalar(ev, Role::peer)));
        out_.i32(tag_value(scalar(ev, Role::tag)));
        out_.u16(comm(comm_id));
        if (label == d::Iprobe) out_.i32(scalar(ev, Role::int_out));
        status(label == d::Iprobe ? flagged(ev, 0) : one_status(ev));
        break;
      case d::Barrier:
        out_.u16(comm(comm_id));
        break;
      case d::Bcast:
        out_.i32(scalar(ev, Role::count));
        out_.u16(datatype(scalar(ev, Role::datatype)));
        out_.i32(scalar(ev, Role::root));
        out_.u16(comm(comm_id));
        break;
      case d::Gather: {
        const std::int64_t root = scalar(ev, Role::root);
        out_.i32(my_rank);
        out_.i32(scalar(ev, Role::count, 0));
        out_.u16(datatype(scalar(ev, Role::datatype, 0)));
        out_.i32(root);
        out_.u16(comm(comm_id));
        if (my_rank == root) {
          out_.i32(scalar(ev, Role::count, 1));
          out_.u16(datatype(scalar(ev, Role::datatype, 1)));
        }
        break;
      }
      case d::Gatherv: {
        const std::int64_t root = scalar(ev, Role::root);
        out_.i32(my_rank);
        out_.i32(comm_size);
        out_.i32(scalar(ev, Role::count, 0));
        out_.u16(datatype(scalar(ev, Role::datatype, 0)));
        out_.i32(root);
        out_.u16(comm(comm_id));
        if (my_rank == root) {
          int_array(role_arg(ev, Role::int_array, 0));
          int_array(role_arg(ev, Role::int_array, 1));
        }
        out_.u16(datatype(scalar(ev, Role::datatype, 1)));
        break;
      }
      case d::Scatter: {
        const std::int64_t root = scalar(ev, Role::root);
        out_.i32(my_rank);
        out_.i32(scalar(ev, Role::count, 1));
        out_.u16(datatype(scalar(ev, Role::datatype, 1)));
        out_.i32(root);
        out_.u16(comm(comm_id));
        if (my_rank == root) {
          out_.i32(scalar(ev, Role::count, 0));
          out_.u16(datatype(scalar(ev, Role::datatype, 0)));
        }
        break;
      }
      case d::Scatterv: {
        const std::int64_t root = scalar(ev, Role::root);
        out_.i32(my_rank);
        out_.i32(comm_size);
        out_.u16(datatype(scalar(ev, Role::datatype, 0)));
        out_.i32(scalar(ev, Role::count, 0));
        out_.u16(datatype(scalar(ev, Role::datatype, 1)));
        out_.i32(root);
        out_.u16(comm(comm_id));
        if (my_rank == root) {
          int_array(role_arg(ev, Role::int_array, 0));
          int_array(role_arg(ev, Role::int_array, 1));
        }
        break;
      }
      case d::Allgather:
      case d::Alltoall:
        out_.i32(scalar(ev, Role::count, 0));
        out_.u16(datatype(scalar(ev, Role::datatype, 0)));
        out_.i32(scalar(ev, Role::count, 1));
        out_.u16(datatype(scalar(ev, Role::datatype, 1)));
        out_.u16(comm(comm_id));
        break;
      case d::Allgatherv:
        out_.i32(comm_size);
        out_.i32(scalar(ev, Role::count, 0));
        out_.u16(datatype(scalar(ev, Role::datatype, 0)));
        int_array(role_arg(ev, Role::int_array, 0));
        int_array(role_arg(ev, Role::int_array, 1));
        out_.u16(datatype(scalar(ev, Role::datatype, 1)));
        out_.u16(comm(comm_id));
        break;
      case d::Alltoallv:
        out_.i32(comm_size);
        int_array(role_arg(ev, Role::int_array, 0));
        int_array(role_arg(ev, Role::int_array, 1));
        out_.u16(datatype(scalar(ev, Role::datatype, 0)));
        int_array(role_arg(ev, Role::int_array, 2));
        int_array(role_arg(ev, Role::int_array, 3));
        out_.u16(datatype(scalar(ev, Role::datatype, 1)));
        out_.u16(comm(comm_id));
        break;
      case d::Reduce:
      case d::Allreduce:
      case d::Scan:
      case d::Exscan:
        out_.i32(scalar(ev, Role::count));
        out_.u16(datatype(scalar(ev, Role::datatype)));
        out_.u8(op(scalar(ev, Role::op)));
        if (label == d::Reduce) out_.i32(scalar(ev, Role::root));
        out_.u16(comm(comm_id));
        break;
      case d::Reduce_scatter:
        out_.i32(comm_size);
        int_array(role_arg(ev, Role::int_array));
        out_.u16(datatype(scalar(ev, Role::datatype)));
        out_.u8(op(scalar(ev, Role::op)));
        out_.u16(comm(comm_id));
        break;
      case d::Comm_size:
      case d::Comm_rank:
        out_.u16(comm(comm_id));
        out_.i32(scalar(ev, Role::int_out));
        break;
      case d::Comm_dup:
      case d::Comm_split: {
        out_.u16(comm(comm_id));
        if (label == d::Comm_split) {
          out_.i32(scalar(ev, Role::value, 0));
          out_.i32(scalar(ev, Role::value, 1));
        }
        const ArgValue* created = role_arg(ev, Role::comm_out);
        out_.u16(comm(created ? created->scalar : 0));
        break;
      }
      case d::Comm_free:
        out_.u16(comm(scalar(ev, Role::comm_free)));
        break;
      case d::Init:
      case d::Init_thread:
        out_.u32(static_cast<std::uint32_t>(manifest_.command.size()));
        for (const auto& arg : manifest_.command) {
          out_.u32(static_cast<std::uint32_t>(arg.size()));
          for (const char ch : arg) out_.u8(static_cast<std::uint8_t>(ch));
        }
        if (label == d::Init_thread) {
          out_.u8(static_cast<std::uint8_t>(scalar(ev, Role::value)));
          out_.u8(static_cast<std::uint8_t>(scalar(ev, Role::int_out, 1)));
        }
        break;
      default:  // Wtime, Finalize: the record alone
        break;
    }
    if (c.kind == CallKind::completion) forget_completed(ev);
  }

  // Sendrecv with MPI_PROC_NULL on one side is written as the Recv or Send it amounts to.
  void sendrecv(d::Label label, const Event& ev, std::int64_t comm_id) {
    const std::int64_t dest = role_scalar(ev, Role::peer, 0, MPI_PROC_NULL);
    const std::int64_t source = role_scalar(ev, Role::peer, 1, MPI_PROC_NULL);
    const bool replace = label == d::Sendrecv_replace;
    if (dest == MPI_PROC_NULL || source == MPI_PROC_NULL) {
      note("calls with MPI_PROC_NULL peers are left out (DUMPI has no MPI_PROC_NULL)");
      if (dest == MPI_PROC_NULL && source == MPI_PROC_NULL) return;
      const bool send = source == MPI_PROC_NULL;
      const int side = send || replace ? 0 : 1;
      begin(send ? d::Send : d::Recv, ev);
      out_.i32(scalar(ev, Role::count, side));
      out_.u16(datatype(scalar(ev, Role::datatype, side)));
      out_.i32(peer_value(send ? dest : source));
      out_.i32(tag_value(scalar(ev, Role::tag, send ? 0 : 1)));
      out_.u16(comm(comm_id));
      if (!send) status(one_status(ev));
      return;
    }
    begin(label, ev);
    out_.i32(scalar(ev, Role::count, 0));
    out_.u16(datatype(scalar(ev, Role::datatype, 0)));
    out_.i32(peer_value(dest));
    out_.i32(tag_value(scalar(ev, Role::tag, 0)));
    if (!replace) {
      out_.i32(scalar(ev, Role::count, 1));
      out_.u16(datatype(scalar(ev, Role::datatype, 1)));
    }
    out_.i32(peer_value(source));
    out_.i32(tag_value(scalar(ev, Role::tag, 1)));
    out_.u16(comm(comm_id));
    status(one_status(ev));
  }

  // Completed nonpersistent requests leave the table, so it holds only outstanding ones.
  void forget_completed(const Event& ev) {
    completed_requests(ev, completed_);
    for (const auto& done : completed_) {
      const auto key = request_key(done.request);
      if (!persistent_.count(key)) requests_.erase(key);
    }
  }
  void forget(const ArgValue* r) {
    if (r && !r->requests.empty() && !r->requests[0].null) {
      requests_.erase(request_key(r->requests[0]));
      persistent_.erase(request_key(r->requests[0]));
    }
  }

  d::BigEndianFile out_;
  std::uint32_t rank_;
  const Manifest& manifest_;
  ExportStats& stats_;
  std::set<std::string>& noted_;
  std::map<std::uint16_t, std::uint64_t>& skipped_;  // calls not written, by function
  const RankInfo& info_;                             // its clock offset
  std::int64_t shift_ns_;
  std::uint64_t body_ = 0;
  const RankContext* ctx_ = nullptr;
  std::uint64_t records_ = 0;
  std::size_t counters_ = 0;
  std::array<std::uint32_t, d::kAllFunctions + 1> counts_{};
  std::set<std::uint64_t> persistent_;  // requests made by *_init
  std::unordered_map<std::uint16_t, std::vector<std::uint64_t>> perf_;
  std::unordered_map<std::int64_t, std::uint16_t> comms_;
  std::unordered_map<std::int64_t, std::uint16_t> datatypes_;
  std::unordered_map<std::int64_t, std::uint64_t> type_sizes_;  // from type signatures
  std::map<std::uint16_t, std::int64_t> dt_source_;             // user DUMPI id -> Encore id
  std::vector<std::uint32_t> dt_sizes_ = std::vector<std::uint32_t>(d::kFirstUserDatatype, 0);
  std::unordered_map<std::int64_t, std::uint8_t> ops_;
  std::unordered_map<std::uint64_t, std::int32_t> requests_;
  MatchedMessages messages_;
  std::optional<MatchedMessage> matched_;  // what the current call received, if an Mrecv
  std::vector<Completed> completed_;
  std::uint16_t next_comm_ = d::kFirstUserComm;
  std::uint16_t next_datatype_ = d::kFirstUserDatatype;
  std::uint8_t next_op_ = d::kFirstUserOp;
  std::int32_t next_request_ = d::kFirstUserRequest;
};

}  // namespace

ExportStats export_dumpi(const std::filesystem::path& trace, const std::filesystem::path& out,
                         const ExportOptions& options) {
  ExportStats stats;
  const Manifest manifest = load_trace(trace);
  prepare_output_dir(out);
  std::int64_t shift = 0;  // so that no rank's time is negative on rank 0's timeline
  for (const auto& r : manifest.ranks) shift = std::max(shift, -r.lowest_offset());
  std::set<std::string> noted;
  std::map<std::uint16_t, std::uint64_t> skipped;
  std::unique_ptr<RankWriter> writer;
  RankWalk walk;
  walk.begin_rank = [&](std::uint32_t rank) {
    writer = std::make_unique<RankWriter>(out / fmt::format("encore-{:04}.bin", rank), rank,
                                          manifest, shift, stats, noted, skipped);
  };
  walk.event = [&](std::uint32_t, const Event& ev, const RankContext& ctx) {
    writer->event(ev, ctx);
  };
  walk.end_rank = [&](std::uint32_t) {
    writer->finish();
    stats.records += writer->records();
    writer.reset();
  };
  stats.events = walk_ranks(trace, manifest, options.progress, walk, stats.problems);
  if (manifest.ranks.size() != manifest.nprocs)
    stats.notes.push_back(
        fmt::format("the trace holds {} of {} ranks: only their .bin files are "
                    "written",
                    manifest.ranks.size(), manifest.nprocs));
  for (const auto& [function, n] : skipped)
    stats.notes.push_back(
        fmt::format("{}: {} calls not written (no DUMPI record for it, or failed)",
                    function_table()[function].name, n));

  const auto meta_path = out / "encore.meta";
  std::ofstream meta(meta_path);
  meta << "hostname=" << (manifest.ranks.empty() ? "" : manifest.ranks[0].host) << '\n'
       << "numprocs=" << manifest.nprocs << '\n'
       << "username=encore\n"
       << "startime=" << manifest.start_time_unix_ns / 1000000000 << '\n'
       << "fileprefix=encore\n"
       << "version=" << int{d::kVersion[0]} << "\nsubversion=" << int{d::kVersion[1]}
       << "\nsubsubversion=" << int{d::kVersion[2]} << '\n';
  meta.close();
  if (!meta) throw Error(format_in(meta_path.string(), "write failed"));
  stats.files.push_back(meta_path);
  return stats;
}

}  // namespace encore::exporter
