// SST-DUMPI's binary trace format, as its reader (sst-dumpi dumpi/common: io.c, iodefs.h,
// dumpiio.c, funclabels.h, constants.h) defines it: the numbers and layouts the dumpi exporter
// writes, and a buffered big-endian file writer. doc/dumpi-export.md describes the layout.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace encore::exporter::dumpi {

inline constexpr std::uint64_t kHeadMagic = 0xffaadd44554d5049ull;  // at offset 0 and in the index
inline constexpr std::uint64_t kFootMagic = 0xf007fee7ull;          // starts the footer
inline constexpr std::uint8_t kVersion[3] = {0, 6, 9};  // newest layout rules of the reader

// Function labels (dumpi_function): a record starts with one as u16.
enum Label : std::uint16_t {
  Send = 0,
  Recv = 1,
  Bsend = 3,
  Ssend = 4,
  Rsend = 5,
  Isend = 8,
  Ibsend = 9,
  Issend = 10,
  Irsend = 11,
  Irecv = 12,
  Wait = 13,
  Test = 14,
  Request_free = 15,
  Waitany = 16,
  Testany = 17,
  Waitall = 18,
  Testall = 19,
  Waitsome = 20,
  Testsome = 21,
  Iprobe = 22,
  Probe = 23,
  Cancel = 24,
  Send_init = 26,
  Bsend_init = 27,
  Ssend_init = 28,
  Rsend_init = 29,
  Recv_init = 30,
  Start = 31,
  Startall = 32,
  Sendrecv = 33,
  Sendrecv_replace = 34,
  Barrier = 52,
  Bcast = 53,
  Gather = 54,
  Gatherv = 55,
  Scatter = 56,
  Scatterv = 57,
  Allgather = 58,
  Allgatherv = 59,
  Alltoall = 60,
  Alltoallv = 61,
  Reduce = 62,
  Allreduce = 65,
  Reduce_scatter = 66,
  Scan = 67,
  Comm_size = 81,
  Comm_rank = 82,
  Comm_dup = 84,
  Comm_split = 86,
  Comm_free = 87,
  Wtime = 122,
  Init = 124,
  Finalize = 125,
  Exscan = 156,
  Init_thread = 171,
  kAllFunctions = 290,  // the footer holds kAllFunctions + 1 counts of each kind
  kEndOfStream = 293,   // written before the header: ends the record stream
};

// Config mask bits (settings.h): which optional parts every record of ours carries.
inline constexpr std::uint8_t kStatuses = 0x03;  // DUMPI_ENABLE: statuses are written
inline constexpr std::uint8_t kWallTime = 0x08;  // DUMPI_TIME_WALL
inline constexpr std::uint8_t kThreadId = 0x40;
inline constexpr std::uint8_t kPerfInfo = 0x80;

// Native ids (constants.h); user-created objects are numbered from the kFirstUser* values.
inline constexpr std::int32_t kAnySource = -1, kAnyTag = -1, kRoot = -2;
inline constexpr std::uint16_t kCommNull = 1, kCommWorld = 2, kCommSelf = 3, kFirstUserComm = 4;
inline constexpr std::uint16_t kDatatypeError = 0, kDatatypeNull = 1, kFirstUserDatatype = 28;
inline constexpr std::uint8_t kOpNull = 14, kFirstUserOp = 15;
inline constexpr std::int32_t kRequestNull = 1, kFirstUserRequest = 2;

// DUMPI's predefined datatypes by MPI name, in dumpi_native_datatypes order from id 2.
inline constexpr std::string_view kDatatypeNames[] = {"MPI_CHAR",
                                                      "MPI_SIGNED_CHAR",
                                                      "MPI_UNSIGNED_CHAR",
                                                      "MPI_BYTE",
                                                      "MPI_WCHAR",
                                                      "MPI_SHORT",
                                                      "MPI_UNSIGNED_SHORT",
                                                      "MPI_INT",
                                                      "MPI_UNSIGNED",
                                                      "MPI_LONG",
                                                      "MPI_UNSIGNED_LONG",
                                                      "MPI_FLOAT",
                                                      "MPI_DOUBLE",
                                                      "MPI_LONG_DOUBLE",
                                                      "MPI_LONG_LONG_INT",
                                                      "MPI_UNSIGNED_LONG_LONG",
                                                      "MPI_LONG_LONG",
                                                      "MPI_PACKED",
                                                      "MPI_LB",
                                                      "MPI_UB",
                                                      "MPI_FLOAT_INT",
                                                      "MPI_DOUBLE_INT",
                                                      "MPI_LONG_INT",
                                                      "MPI_SHORT_INT",
                                                      "MPI_2INT",
                                                      "MPI_LONG_DOUBLE_INT"};
// DUMPI's predefined reduction operations by MPI name, from id 1 (MPI_OP_NULL is 14).
inline constexpr std::string_view kOpNames[] = {
    "MPI_MAX", "MPI_MIN",  "MPI_SUM",  "MPI_PROD",   "MPI_LAND",   "MPI_BAND",   "MPI_LOR",
    "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE"};

// Appends big-endian fields to a 1 MiB buffer written to `path` when full. Throws Error
// naming the file on a write failure.
class BigEndianFile {
 public:
  explicit BigEndianFile(std::filesystem::path path);
  ~BigEndianFile();
  BigEndianFile(const BigEndianFile&) = delete;
  BigEndianFile& operator=(const BigEndianFile&) = delete;

  void u8(std::uint8_t v) {
    buf_.push_back(v);
    maybe_flush();
  }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void i32(std::int64_t v) { u32(static_cast<std::uint32_t>(static_cast<std::int32_t>(v))); }
  void string(std::string_view s);  // u16 length, bytes (cut at 65535)
  std::uint64_t tell() const { return flushed_ + buf_.size(); }
  void close();

 private:
  void put(std::uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) buf_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    maybe_flush();
  }
  void maybe_flush() {
    if (buf_.size() >= (1u << 20)) flush();
  }
  void flush();

  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::vector<std::uint8_t> buf_;
  std::uint64_t flushed_ = 0;
};

}  // namespace encore::exporter::dumpi
