// The encoding of one MPI call inside an events chunk. Shared by the writer (libdump) and the
// decoder (libtime); doc/trace-format.md ("Event encoding") is the prose version.
//
// An event is, in order:
//   gap       uvarint ns from the previous event's corrected end to this event's corrected start
//   duration  uvarint ns, corrected end - corrected start
//   overhead  uvarint ns of tool time charged before this call (the previous call's post-work
//             and this call's pre-work); corrected times already exclude it
//   (the three above live in the chunk's time columns, the rest in its body column)
//   head      uvarint, always written as exactly 2 bytes: (function id << 2) | flags
//   rc        svarint, only if flags & kHasError
//   in-args   every parameter whose role is an input, in table order (see put rules below)
//   out-args  only if rc == MPI_SUCCESS: every output role, in table order
//   extras    only if flags & kHasExtras: (tag uvarint, body)* then tag 0
//
// Corrected times: start = previous end + gap, end = start + duration, from `base` in the
// chunk header (the end of the event before the chunk; 0 for a thread's first chunk).
// Raw (uncorrected) times: add the running sum of `overhead` over the thread's events so far.
//
// Roles (encore::Role), by encoding:
//   buf_in/out/inout      uvarint BufFlag
//   count/peer/root/tag/int/aint, int_out/aint_out, ret_aint     svarint
//   int_array(_out), aint_array(_out)   uvarint n, then n svarints
//   comm/group/datatype/op/handle, *_free, datatype_inout        uvarint stable id
//   comm_out        uvarint id; if id != 0: uvarint flags (bit 0 intercommunicator), uvarint
//                   size, size svarints (world rank deltas, first from -1... see put_members);
//                   if intercommunicator: uvarint remote size and its member deltas
//   group_out       uvarint id; if id != 0: uvarint size and member deltas (as comm_out)
//   datatype_out, op_out, handle_out    uvarint id
//   datatype_array  uvarint n, then n uvarint ids
//   request, request_inout   RequestRef;  request_array: uvarint n, then n RequestRefs
//   request_out     nothing: a request's id is the index of the event that created it
//   status_in/out   Status;  status_array: uvarint n, then n Statuses
//   string_in/out   uvarint length, bytes
//   ret_double      8 bytes little-endian IEEE double
//   opaque          nothing
// Member deltas: each member's world rank minus the previous member's (the first minus -1),
// as svarint; a member outside MPI_COMM_WORLD is recorded as world rank -1.
#pragma once

#include <cstddef>
#include <cstdint>

namespace encore::event_format {

// An events chunk is laid out in columns: the timing fields of its events are noise that
// compresses best on its own, each field apart. The chunk starts with a uvarint layout:
//   kInterleavedTimes: uvarint n, then n bytes of (gap, duration, overhead) per event, then
//                      the bodies (what a crash handler writes: it cannot rearrange)
//   kSplitTimes:       uvarint n_gap, n_duration, n_overhead, the three columns, the bodies
// A body is everything of an event but its three timing fields, in the order listed below.
inline constexpr std::uint8_t kInterleavedTimes = 0;
inline constexpr std::uint8_t kSplitTimes = 1;

inline constexpr unsigned kHeadFlagBits = 2;
inline constexpr std::uint8_t kHasError = 1;   // rc != MPI_SUCCESS follows
inline constexpr std::uint8_t kHasExtras = 2;  // an extras list follows the arguments
inline constexpr std::uint32_t kMaxFunctionId = (1u << (14 - kHeadFlagBits)) - 1;

// Writes a head as its two bytes: a uvarint always of exactly 2 bytes, even where one would do,
// so that libdump can set the flags after the arguments are written, in place.
inline void write_head(std::uint32_t head, std::byte* out) noexcept {
  out[0] = static_cast<std::byte>((head & 0x7f) | 0x80);
  out[1] = static_cast<std::byte>(head >> 7);
}

// Since 1.2: a failed poll (MPI_Iprobe, MPI_Improbe, MPI_Test, MPI_Testany, MPI_Testall or
// MPI_Testsome that found nothing) with the same function and arguments as the thread's
// previous event in the same chunk has a body of this head alone (function id kRepeatId, no
// flags): it decodes to a copy of that event (request references naming the same requests),
// with its own index and its own times from the columns.
inline constexpr std::uint32_t kRepeatId = kMaxFunctionId;
inline constexpr std::uint32_t kRepeatHead = kRepeatId << kHeadFlagBits;
inline constexpr std::uint8_t kRepeatHead0 = (kRepeatHead & 0x7f) | 0x80;  // its two bytes
inline constexpr std::uint8_t kRepeatHead1 = kRepeatHead >> 7;

// A buffer argument: the address itself means nothing on another machine.
enum class BufFlag : std::uint8_t { normal = 0, in_place = 1, bottom = 2, null = 3, absent = 4 };

// Stable handle ids: 0 is the null handle, 1 a handle the tool could not identify,
// 2 + i the i-th predefined handle of its kind (encore::predefined_handles), and ids from
// kFirstDynamicId on are handed out in creation order and never reused within a rank.
inline constexpr std::uint32_t kNullId = 0;
inline constexpr std::uint32_t kUnknownId = 1;
inline constexpr std::uint32_t kFirstPredefinedId = 2;
inline constexpr std::uint32_t kFirstDynamicId = 1024;

// RequestRef: uvarint r. r == 0: MPI_REQUEST_NULL or a request the tool did not create.
// r even: the request was created by this thread's event (current index - r/2).
// r odd: created by another thread: uvarint thread and uvarint event index follow.

// Status: uvarint bits (kStatusIgnored: the program passed MPI_STATUS(ES)_IGNORE and the tool
// used its own; kStatusCancelled), svarint source, svarint tag, uvarint count in bytes,
// svarint error.
inline constexpr std::uint8_t kStatusIgnored = 1;
inline constexpr std::uint8_t kStatusCancelled = 2;

// Extras, tag then body.
enum class Extra : std::uint8_t {
  end = 0,
  // Bytes appended to the payload stream: uvarint slot (request array index for Wait*/Test*,
  // else 0), uvarint datatype id, uvarint element count, uvarint byte length. The bytes are
  // the received data packed in type-signature order.
  payload = 1,
  // XXH3-64 of the sent data packed in type-signature order: 8 bytes LE, uvarint byte length.
  send_hash = 2,
  // A datatype's element-size signature (for byte-order conversion): uvarint datatype id,
  // uvarint size in bytes, uvarint run count, then (uvarint element size, uvarint repeat)
  // per run. Written before the first payload that uses the datatype. A run count of 0 means
  // the signature could not be determined (the payload cannot be converted).
  datatype_signature = 3,
  // Call-site id: uvarint (its frames are in the rank's call-site table).
  callsite = 4,
  // PAPI counter deltas over the compute segment before this call: uvarint n, n uvarints.
  counters = 5,
  // The application waited for trace buffer space during this call: uvarint ns.
  stall = 6,
  // Since 1.1. MPI_Comm_get_attr / MPI_Attr_get of a predefined key (MPI_TAG_UB, ...) that has
  // a value: svarint, the int the returned pointer points to.
  attribute = 7,
  // Since 1.1. MPI_Dist_graph_create: the rank's neighbours in the new communicator, from
  // MPI_Dist_graph_neighbors: uvarint flags (bit 0: weighted), uvarint indegree, that many
  // svarint sources and, if weighted, as many svarint weights; then the same for outdegree
  // and the destinations.
  neighbours = 8,
  // Since 1.3. A call that received 64 KiB or more of contiguous bytes: uvarint ns of its
  // duration that was the first read of those bytes on this core (the capture reads them
  // before copying them; see doc/trace-format.md). Part of the call's duration, not of the
  // transfer: models add it after the transfer ends, fits leave it out.
  first_read = 9,
  // Since 1.4. One block of a collective's contribution (what this rank hands the collective as
  // its input: the send buffer, or with MPI_IN_PLACE the input part of the receive buffer):
  // XXH3-64 of it packed in type-signature order, 8 bytes LE, then uvarint byte length. One
  // per non-empty block, in the order doc/trace-format.md gives; on MPI_Start(all) for a
  // persistent collective. Kept apart from send_hash: it is not a message to one peer.
  contribution_hash = 10,
};

inline constexpr std::uint8_t kNeighboursWeighted = 1;

}  // namespace encore::event_format
