// Everything one application thread records: its current event and payload segments, the
// segments it sealed and the writer has not drained yet, and its position in the stream.
#pragma once

#include <x86intrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <vector>

#include "counters.hpp"
#include "raw_times.hpp"
#include "request_table.hpp"
#include "segment.hpp"
#include "segment_pool.hpp"

#include "encore/event_format.hpp"

namespace encore::dump {

class ThreadStream {
 public:
  ThreadStream(std::uint16_t index, SegmentPool& pool);
  ThreadStream(const ThreadStream&) = delete;
  ThreadStream& operator=(const ThreadStream&) = delete;

  std::uint16_t index() const noexcept { return index_; }
  // Called after a segment is sealed, so the writer drains it now rather than at its next
  // periodic wake (the application may be about to wait for that memory).
  std::function<void()> on_seal;
  // Called once a payload segment is half full, so the writer prepares the next one
  // (SegmentPool::prepare) before the thread needs it.
  std::function<void()> on_half;
  // Called from the kHelpFrom-th lean poll of a run on (Recorder::register_thread). Not
  // sooner: a wait of a few polls ends while a step runs, and the step then delays finding the
  // message (from the 2nd poll on, the polling loop ran 1.06x slower than with no help at all
  // in the fast state; from the 64th, 0.98x, the long waits keeping the help).
  std::function<void()> on_wait;
  static constexpr std::uint64_t kHelpFrom = 64;
  // A light MPI_Recv helps (LightCall::recv_call) when the thread has published at least
  // kRecvHelpFrom events since it last did: events_total() when it last helped, or when a probe
  // last found a message (LightCall::probe: the receive that follows will not wait, and its
  // look would be one more MPICH probe on the message's path).
  static constexpr std::uint64_t kRecvHelpFrom = 2;
  std::uint64_t recv_helped_at = 0;
  Segment* current_events() const noexcept { return ev_; }

  // Producer side ---------------------------------------------------------------------------
  // Appends one event (its raw times and its encoded body) and publishes it.
  void append_event(const RawTimes& times, std::span<const std::byte> body) {
    if (!times_fit() || ev_used_ + body.size() > ev_->body_capacity()) roll_events(body.size());
    std::memcpy(ev_->times_data() + ev_times_, &times, sizeof times);
    std::memcpy(ev_->body_data() + ev_used_, body.data(), body.size());
    commit_in_place(body.size());
  }
  // Encoding in place: a call writes its body straight into the current events segment, past
  // the published mark (the writer never reads there), and its raw times likewise into the
  // times region, and commits them without a copy.
  // The segment's regions are cached here (set_events) so the per-call checks read no Segment.
  std::byte* body_cursor() noexcept { return body_ ? body_ + ev_used_ : nullptr; }
  std::size_t body_room() const noexcept { return body_cap_ - ev_used_; }
  bool times_fit() const noexcept { return ev_times_ + sizeof(RawTimes) <= times_cap_; }
  // Where the next event's times go (when times_fit()).
  RawTimes* times_cursor() noexcept { return reinterpret_cast<RawTimes*>(times_ + ev_times_); }
  // Commits the body already at body_cursor() (`body` bytes) and the times at times_cursor().
  void commit_in_place(std::size_t body) noexcept {
    ev_times_ += sizeof(RawTimes);
    ev_used_ += body;
    ++events_;
    ev_->publish({ev_used_, events_, payload_, ev_times_});
  }

  // Light calls (LightCall): a LightTimes record in the times region and nothing in the body
  // region (the writer encodes the body). After lean_fold().
  bool light_fits() const noexcept { return ev_times_ + kLightTimesBytes <= times_cap_; }
  std::byte* light_cursor() noexcept { return times_ + ev_times_; }
  void commit_light() noexcept {
    ev_times_ += kLightTimesBytes;
    ++events_;
    ev_->publish({ev_used_, events_, payload_, ev_times_});
  }
  // Whether `n` payload bytes fit the current payload segment (no roll, hence no stall).
  // Up to half the segment until on_half has been called (the light path leaves to the Call
  // path, which calls it, once a segment).
  bool payload_fits(std::size_t n) const noexcept { return pl_used_ + n <= pl_room_; }

  // Appends payload bytes; returns where they start in the payload stream.
  std::uint64_t append_payload(std::span<const std::byte> bytes) {
    if (pl_used_ + bytes.size() > pl_room_) [[unlikely]]
      return append_payload_past_room(bytes);
    return append_payload_here(bytes);
  }
  // Publishes `n` payload bytes written in place at the segment's end.
  void commit_payload(std::size_t n) noexcept {
    pl_used_ += n;
    payload_ += n;
    pl_->publish({pl_used_, 0, payload_, 0});
  }
  // Appends bytes that fit the current segment.
  __attribute__((always_inline)) std::uint64_t append_payload_here(
      std::span<const std::byte> bytes) noexcept {
    const std::uint64_t at = payload_;
    std::byte* to = pl_->data() + pl_used_;
    const std::size_t n = bytes.size();
    if (n >= 8 && n <= 16) {
      // A light receive: two overlapping 8-byte moves, not a call into the library.
      std::memcpy(to, bytes.data(), 8);
      std::memcpy(to + n - 8, bytes.data() + n - 8, 8);
    } else {
      std::memcpy(to, bytes.data(), n);
    }
    commit_payload(n);
    return at;
  }

  // Lean polls (Call's LeanPoll) ----------------------------------------------------------
  // A run of failed polls, once its template or a repeat is committed in place, may continue
  // without a Call: the next identical poll of this thread checks the key, times the PMPI call
  // and appends a LeanTimes record and a repeat head, published with one store. Any other
  // event of the thread ends the run (events() moves past `at`); so does a full segment.
  static constexpr std::int64_t kLeanRequests = 8;  // longer request arrays take the Call path
  static constexpr unsigned kLeanSampleEvery = 64;  // one lean poll in 64 measures its tail
  struct LeanRun {
    std::uint64_t at = ~std::uint64_t{0};  // events() while the run may go on, else ~0
    std::uint64_t flags = 0;               // of every record: kLean | the repeat's flags
    std::uint64_t word = 0;                // Segment::run_word of the run's start
    std::uint64_t n = 0;                   // polls appended, not yet counted in events()
    std::uint64_t room = 0;                // polls the segment has room for
    std::atomic<std::uint64_t>* run = nullptr;
    std::byte* times = nullptr;  // the run's first record
    std::byte* body = nullptr;   // its first repeat head
    // poll_requests, copied inline: the poll's check reads no heap vector.
    std::int64_t nreq = 0;
    MPI_Request req[kLeanRequests] = {};
    unsigned calls = 63;  // lean polls since the last sampled one (the first is sampled)
    // The writer's state after the run's last poll, when this thread knows it (lean_append):
    bool timed = false;         // the previous event is a poll of this run
    std::uint64_t last_t2 = 0;  // its PMPI end, ns
    std::uint64_t next_t3 = 0;  // when its tool work is taken to have ended, ns
  };
  LeanRun lean;
  // The lean polls' tail samples and their median, as the writer's TimeEncoder keeps them (it
  // takes the same samples from the same records, in the same order).
  TimeEncoder::Tails lean_tails;
  // The sampled lean polls' pre-work alone (entry to t1, lean_sample_end), for lean_help.
  TimeEncoder::Tails lean_prologues;
  const Clock* clock = nullptr;  // the rank's (Recorder::register_thread)
  // What one read of the clock costs, in ticks (Clock::read_cost_ticks): a lean poll's sample
  // reads it once more than the polls it stands for (lean_append).
  std::uint64_t read_cost_ticks = 0;
  bool lean_allowed = false;   // TSC clock, no per-call extras (Recorder::register_thread)
  bool light_allowed = false;  // lean_allowed and plain: the light calls' lean path
  // TSC clock, no PAPI counters, not MPI_THREAD_MULTIPLE: a Call's begin() and end() read the
  // TSC and nothing else (Recorder::register_thread).
  bool plain = false;
  // Every event gets extras (PAPI counters, call sites): commit_work() stays true, so a
  // commit tests one flag for all the work it may have to add.
  void set_extras_every_call(bool on) noexcept {
    extras_every_call_ = on;
    commit_work_ = commit_work_ || on;
  }

  // Whether the next lean poll is sampled (lean_append): it then also reads the clock on
  // entry, so that its sample includes the pre-work before t1 (LeanPoll).
  __attribute__((always_inline)) bool lean_samples_next() const noexcept {
    return lean.calls >= kLeanSampleEvery - 1;
  }
  // Whether this poll continues the thread's open run (the Call-free path may take it).
  __attribute__((always_inline)) bool lean_continues(std::uint64_t fn, std::uint64_t a,
                                                     std::uint64_t b) const noexcept {
    return lean.at == events_ && poll_key.fn == fn && poll_key.a == a && poll_key.b == b &&
           !in_tool;
  }
  __attribute__((always_inline)) bool lean_continues(std::uint64_t fn, std::uint64_t a,
                                                     std::uint64_t b, const MPI_Request* r,
                                                     std::int64_t n) const noexcept {
    if (!lean_continues(fn, a, b) || n != lean.nreq) return false;
    for (std::int64_t i = 0; i < n; ++i)
      if (r[i] != lean.req[i]) return false;
    return true;
  }
  // Appends the poll timed t1..t2 to the run and publishes it. The stream's own counts catch
  // up at its next Call (lean_fold): a lean poll only writes its record and the run's word.
  // A failed poll is time the thread spends waiting, so it also does the writer's arithmetic
  // (the three timing fields in ns, LeanTimes with kLeanTimed), which the writer, on a node
  // whose ranks hold every core, would take from some rank's time. It can from the run's
  // second poll on: the first one's tail estimate is the light calls' median, the writer's.
  // `t0`, on a sampled poll (lean_samples_next()), is the clock read at its entry, else 0.
  __attribute__((always_inline)) void lean_append(std::uint64_t t1, std::uint64_t t2,
                                                  std::uint64_t t0 = 0) noexcept {
    const std::uint64_t n = lean.n;
    std::byte* at = lean.times + n * kLeanTimesBytes;
    std::uint64_t flags = lean.flags;
    lean.body[n * kLeanBodyBytes] = std::byte{event_format::kRepeatHead0};
    lean.body[n * kLeanBodyBytes + 1] = std::byte{event_format::kRepeatHead1};
    lean.n = n + 1;
    if (n + 1 == lean.room) [[unlikely]]
      lean.at = ~std::uint64_t{0};
    // The tail is measured on one lean poll in 64 (as on light calls, Call::finish_light),
    // counted apart from the light calls: with one count, a program whose polling runs are
    // 64 calls long would sample the same call of each run, never a lean poll.
    if (++lean.calls >= kLeanSampleEvery) [[unlikely]] {
      lean.calls = 0;
      flags |= RawTimes::kLeanSample;
      const std::uint64_t t3 = lean_sample_end(t0, t1, t2);
      std::memcpy(at + 8, &t1, 8);
      std::memcpy(at + 16, &t2, 8);
      std::memcpy(at + 24, &t3, 8);
      lean_follow(t2, t3, true);
    } else if (lean.timed) [[likely]] {
      // TimeEncoder's arithmetic for a lean poll after a lean poll (raw_times.cpp): the
      // previous tail ends at the estimate or this start, whichever is first.
      const std::uint64_t n1 = clock->to_ns(t1);
      const std::uint64_t n2 = clock->to_ns(t2);
      const std::uint64_t t3 = std::min(lean.next_t3, n1);
      const std::uint64_t gap = n1 - t3;
      const std::uint64_t dur = n2 - n1;
      const std::uint64_t overhead = t3 - lean.last_t2;
      // A step back of the clock (n1 before the previous end, n2 before n1) wraps a field
      // around: such a poll, like one with a field of 4 s or more, is left to the writer.
      if (((gap | dur | overhead) >> 32) == 0) [[likely]] {
        const std::uint64_t word = gap | dur << 32;
        std::memcpy(at + 8, &word, 8);
        std::memcpy(at + 16, &overhead, 8);
        flags |= RawTimes::kLeanTimed;
        lean.last_t2 = n2;
        lean.next_t3 = n2 + lean_tails.median;
      } else {
        std::memcpy(at + 8, &t1, 8);
        std::memcpy(at + 16, &t2, 8);
        lean_follow(t2, 0, false);
      }
    } else {
      std::memcpy(at + 8, &t1, 8);
      std::memcpy(at + 16, &t2, 8);
      lean_follow(t2, 0, false);
    }
    std::memcpy(at, &flags, 8);
    lean.run->store(lean.word + n + 1, std::memory_order_release);
    // Still waiting: a slice of the writer's work on this thread's records (TraceWriter::help).
    if (n + 1 >= kHelpFrom && on_wait) [[unlikely]]
      lean_help();
    in_tool = false;
  }
  // The end of a sampled lean poll's tool work, as the writer is to charge it. A sample
  // stands for the tool's time between two polls of the run (the median of the samples is
  // charged to the others), which is the previous poll's tail and this one's pre-work (its
  // entry, the key compare, the read of t1). So the sample first does the arithmetic of a
  // timed poll (below), which it does not need, then reads the clock, and moves that end on
  // by its own pre-work (t1 - t0), less the one read (of t0) that the other polls do not
  // make. Without both, the samples held neither, and every gap between two polls kept that
  // part of the tool's time (bench/poll_gaps.py: about 10 ns a poll on session 22's host).
  std::uint64_t lean_sample_end(std::uint64_t t0, std::uint64_t t1, std::uint64_t t2) noexcept {
    if (lean.timed && clock) {
      const std::uint64_t n1 = clock->to_ns(t1);
      const std::uint64_t n2 = clock->to_ns(t2);
      const std::uint64_t t3 = std::min(lean.next_t3, n1);
      std::uint64_t word = (n1 - t3) | (n2 - n1) << 32;
      std::uint64_t overhead = t3 - lean.last_t2;
      asm volatile("" : "+r"(word), "+r"(overhead));  // computed for its time only
    }
    std::uint64_t end = __rdtsc();
    if (t0 != 0 && clock) {
      const std::uint64_t pre = t1 > t0 + read_cost_ticks ? t1 - t0 - read_cost_ticks : 0;
      end += pre;
      lean_prologues.add(clock->duration_ns(pre));
    }
    return end;
  }
  // A help step's time is the tool's: the next poll, when this thread times it (kLeanTimed,
  // the common case), is charged the tail up to the step's end, read here, and then the
  // median of the sampled polls' pre-work. A step's cost depends on what there is to encode
  // (one new event, eight, or the lock taken), so no estimate charged to every poll holds:
  // a mean charged flat is cut at each cheap step's next start and leaves the costly ones'
  // excess in their gaps (a third of it charged, on a one-rank polling loop). Without it
  // every poll of a long wait kept its step in its gap (about 25 ns a poll there: session
  // 22). One clock read a poll, in waits of 64 polls or more. A poll the writer times instead
  // (a sample, a run's end) is charged the lean tail alone, as before.
  void lean_help() noexcept {
    on_wait();
    if (lean.timed)
      lean.next_t3 = std::max(lean.next_t3, clock->to_ns(__rdtsc()) + lean_prologues.median);
  }
  // Counts the run's polls in the stream (its next Call does this before anything else).
  __attribute__((always_inline)) void lean_fold() noexcept {
    events_ += lean.n;
    ev_times_ += lean.n * kLeanTimesBytes;
    ev_used_ += lean.n * kLeanBodyBytes;
    lean.n = 0;
  }
  // Opens a run after a failed poll committed in place (the template, or a repeat), keyed by
  // poll_key and poll_flags, if the thread may and the segment has room.
  void lean_open(const MPI_Request* r, std::int64_t n) noexcept;
  // After a poll whose record the writer times (the run's first, a sample, a value out of
  // range): the writer's state after it, t3 the poll's own tail end when `sampled`.
  void lean_follow(std::uint64_t t2, std::uint64_t t3, bool sampled) noexcept;
  // Makes the failed poll just committed in place (its body `len` bytes at body offset `at`)
  // the template of a run keyed by its function, `a`, `b` and request array, and opens the
  // run's lean path (Call::finish_poll, and LightCall::probe for a run's first MPI_Iprobe).
  void start_poll_run(std::uint64_t fn, std::uint64_t a, std::uint64_t b, std::size_t len,
                      std::size_t at, const MPI_Request* r, std::int64_t n) {
    poll_key = {fn, a, b};
    poll_at = events_;
    poll_flags = RawTimes::kRepeat | std::uint64_t{len} << RawTimes::kRepeatLenShift |
                 std::uint64_t{at} << RawTimes::kRepeatAtShift;
    if (n > 0)
      poll_requests.assign(r, r + n);
    else
      poll_requests.clear();
    lean_open(r, n);
  }

  std::uint64_t events() const noexcept { return events_; }  // after lean_fold()
  // From another thread, once this one is quiescent (finalize, exit): with an unfolded run.
  std::uint64_t events_total() const noexcept { return events_ + lean.n; }
  std::size_t body_offset() const noexcept { return ev_used_; }  // of the next event's body
  std::uint64_t payload_bytes() const noexcept { return payload_; }
  // Whether the call being committed has more to add than its arguments: send hashes taken
  // out of line, a stall, a first read.
  bool commit_work() const noexcept { return commit_work_; }
  std::uint64_t take_stall_ns() noexcept {
    auto s = stall_ns_;
    stall_ns_ = 0;
    return s;
  }
  // The first read of the call's received bytes (Call::end_after_first_read), in ns of its
  // duration; commit() emits the sum as one extra.
  void add_first_read_ns(std::uint64_t ns) noexcept {
    first_read_ns_ += ns;
    commit_work_ = true;
  }
  std::uint64_t take_first_read_ns() noexcept {
    auto n = first_read_ns_;
    first_read_ns_ = 0;
    return n;
  }
  // A send or contribution hash taken out of line, for the call being recorded (commit() emits
  // it).
  void add_send_hash(std::uint64_t hash, std::uint64_t bytes,
                     event_format::Extra tag = event_format::Extra::send_hash) {
    send_hashes.push_back({hash, bytes, tag});
    commit_work_ = true;
  }
  // commit_extras() took the send hashes, the stall and the first read (emit_send_hashes,
  // take_stall_ns, take_first_read_ns).
  void clear_commit_work() noexcept { commit_work_ = extras_every_call_; }
  std::uint64_t total_stall_ns() const noexcept { return total_stall_ns_; }

  // Seals the current segments so the writer drains everything (finalize, abort).
  void seal_all();

  // Writer side -----------------------------------------------------------------------------
  // Segments in stream order: sealed ones first, then the current one (may still grow).
  struct Pending {
    std::vector<Segment*> sealed_events;
    std::vector<Segment*> sealed_payload;
    Segment* current_events = nullptr;
    Segment* current_payload = nullptr;
    // The current events segment's published mark when the snapshot was taken. Draining events
    // only up to it keeps every event chunk's payload among the segments listed here (the
    // thread publishes payload before the event naming it): an events mark read later could
    // name payload the writer has not drained yet, and a rank killed in between would leave
    // events on disk whose data is not.
    Mark current_events_upto{};
    // Whether the thread will soon want another segment of the kind: it sealed one, or has
    // filled half of its current one (the writer then has SegmentPool::prepare make one).
    bool wants_more(StreamKind kind) const;
  };
  Pending pending();

  // Hot-path state kept with the stream (owned by the application thread) --------------------
  bool in_tool = false;
  unsigned light_calls = 0;  // light calls since the last one whose tool time was measured
  // A segment was sealed since the last measured tail: on_seal woke the writer and yielded to it,
  // so the call that sealed must measure its tail (the writer's drain is then overhead, not
  // the next compute segment's time), as a heavy call does.
  bool sealed = false;
  // The previous call's tool end, when measured: it goes into the next call's RawTimes.
  std::uint64_t prev_t3 = 0;
  std::uint64_t prev_flags = 0;
  std::vector<std::byte> scratch;                // the event being encoded
  std::vector<std::byte> pack_buf;               // packing non-contiguous data
  std::vector<unsigned char> status_scratch;     // MPI_Status storage for *_IGNORE arrays
  MPI_Status* scratch_statuses(std::int64_t n);  // at least n of them, at least one
  std::vector<int> request_scratch;              // request handles before a completion call
  std::vector<RequestInfo*> resolved;            // a request array's requests (Call::resolve)
  struct PendingHash {
    std::uint64_t hash;
    std::uint64_t bytes;
    event_format::Extra tag;  // send_hash or contribution_hash
  };
  std::vector<PendingHash> send_hashes;  // of the call being recorded
  // Runs of identical failed polls (Call::repeat_poll): the last failed poll's function and
  // arguments, events() right after it (a repeat must come next), the flags its repeats'
  // RawTimes carry (where the template is), and a Test{any,all,some}'s request array.
  struct PollKey {
    std::uint64_t fn = 0, a = 0, b = 0;
  };
  PollKey poll_key;
  std::uint64_t poll_at = ~std::uint64_t{0};
  std::uint64_t poll_flags = 0;
  std::vector<MPI_Request> poll_requests;
  ThreadCounters counters;  // PAPI, when enabled
  std::vector<long long> counter_deltas;

 private:
  // Past the room: a segment's half (on_half), or its end (a roll).
  std::uint64_t append_payload_past_room(std::span<const std::byte> bytes);
  std::uint64_t append_payload_split(std::span<const std::byte> bytes);
  void roll_events(std::size_t need);
  void roll_payload();
  void seal(Segment* s, bool events);
  void set_events(Segment* s) noexcept;

  std::uint16_t index_;
  SegmentPool& pool_;
  Segment* ev_ = nullptr;
  Segment* pl_ = nullptr;
  std::size_t ev_used_ = 0;   // body bytes in ev_
  std::size_t ev_times_ = 0;  // times bytes in ev_
  std::size_t pl_used_ = 0;
  std::size_t pl_room_ = 0;  // half of pl_'s capacity until on_half is called, then all of it
  std::uint64_t events_ = 0;
  std::uint64_t payload_ = 0;
  std::uint64_t stall_ns_ = 0;
  std::uint64_t total_stall_ns_ = 0;
  std::uint64_t first_read_ns_ = 0;
  bool commit_work_ = false;  // send_hashes, stall_ns_ or first_read_ns_ to add at the next commit
  bool extras_every_call_ = false;
  // ev_'s regions (null and 0 without a segment): what the per-call checks read.
  std::byte* body_ = nullptr;
  std::byte* times_ = nullptr;
  std::size_t body_cap_ = 0;
  std::size_t times_cap_ = 0;

  std::mutex mu_;  // guards the sealed queues and the current pointers seen by the writer
  std::deque<Segment*> sealed_events_;
  std::deque<Segment*> sealed_payload_;
};

}  // namespace encore::dump
