// The writer's encoder of a light record's body, inline for the chunk builder's loop: the
// fields of a light body are varints that are nearly always under 0x80 (ids, peers, tags,
// counts of a few elements, statuses, at most 256 bytes); then each is one byte, and the body
// is two or three 8-byte stores of fields shifted into place (the stores may write past the
// body, never past kLightBodyMax). A body with any larger field is written by the general
// encoder (encode_light_body_inline), which gives the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "light_record.hpp"

#include "encore/byte_order.hpp"
#include "encore/event_format.hpp"
#include "encore/varint.hpp"

namespace encore::dump {

// encode_light_body_inline, out of line: the fast paths then need few registers.
std::size_t encode_light_body_general(const LightTimes& r, std::byte* out) noexcept;

namespace light_body {

namespace ef = event_format;

// The two bytes of an event head (ef::write_head) as one little-endian value.
constexpr std::uint64_t head16(std::uint32_t head) noexcept {
  return ((head & 0x7f) | 0x80) | std::uint64_t{head >> 7} << 8;
}

// An MPI_Send: buffer flag, count, datatype, peer, tag, communicator; the send hash (tag, 8
// bytes, byte count) and the extras' end.
[[gnu::always_inline]] inline std::size_t encode_send(const LightTimes& r, std::byte* out,
                                                      bool extra, std::uint64_t head,
                                                      std::uint64_t args,
                                                      std::uint64_t any) noexcept {
  if ((any | (extra ? r.bytes : 0)) >= 0x80) [[unlikely]]
    return encode_light_body_general(r, out);
  store_le(out, head | args);
  if (!extra) return 8;
  out[8] = static_cast<std::byte>(ef::Extra::send_hash);
  store_le(out + 9, (r.flags & LightTimes::kUnhashed) ? light_send_hash(r.word, r.bytes) : r.word);
  store_le(out + 17, static_cast<std::uint16_t>(r.bytes));  // and the end, 0
  return 19;
}

// The status of a receive or a probe: bits, source, tag, bytes, error 0 (five bytes); `any`
// is or'ed with each field.
[[gnu::always_inline]] inline std::uint64_t status_bytes(const LightTimes& r,
                                                         std::uint64_t& any) noexcept {
  const std::uint64_t source = zigzag_encode(static_cast<std::int32_t>(r.word & 0xffffffff));
  const std::uint64_t tag = zigzag_encode(static_cast<std::int32_t>(r.word >> 32));
  any |= source | tag | r.bytes;
  return static_cast<std::uint64_t>(r.bits >> 4) | source << 8 | tag << 16 |
         std::uint64_t{r.bytes} << 24;
}

// An MPI_Recv: the arguments as a send's, the status, the payload extra (tag, slot 0,
// datatype, elements, bytes) and the extras' end.
[[gnu::always_inline]] inline std::size_t encode_recv(const LightTimes& r, std::byte* out,
                                                      bool extra, std::uint64_t head,
                                                      std::uint64_t args,
                                                      std::uint64_t any) noexcept {
  any |= extra ? r.elems : 0;
  const std::uint64_t status = status_bytes(r, any);
  if (any >= 0x80) [[unlikely]]
    return encode_light_body_general(r, out);
  store_le(out, head | args);
  store_le(out + 8, status | std::uint64_t{static_cast<std::uint8_t>(ef::Extra::payload)} << 40 |
                        std::uint64_t{r.type_id} << 56);
  if (!extra) return 13;
  store_le(out + 16, r.elems | r.bytes << 8);  // and the end, 0
  return 19;
}

// An MPI_Iprobe that found its message: source, tag, communicator, flag, the status.
[[gnu::always_inline]] inline std::size_t encode_probe(const LightTimes& r, std::byte* out,
                                                       std::uint64_t head) noexcept {
  const std::uint64_t peer = zigzag_encode(r.peer);
  const std::uint64_t tag = zigzag_encode(r.tag);
  const std::uint64_t flag = zigzag_encode(r.count);
  std::uint64_t any = peer | tag | r.comm_id | flag;
  const std::uint64_t status = status_bytes(r, any);
  if (any >= 0x80) [[unlikely]]
    return encode_light_body_general(r, out);
  store_le(out, head | peer << 16 | tag << 24 | std::uint64_t{r.comm_id} << 32 | flag << 40 |
                    status << 48);
  store_le(out + 8, status >> 16);
  return 11;
}

}  // namespace light_body

// encode_light_body, inline (the chunk builder's).
__attribute__((always_inline)) inline std::size_t encode_light_body_fast(const LightTimes& r,
                                                                         std::byte* out) noexcept {
  namespace lb = light_body;
  namespace ef = event_format;
  const bool extra = (r.flags & LightTimes::kExtra) != 0;
  const std::uint64_t head =
      lb::head16(std::uint32_t{r.fn} << ef::kHeadFlagBits | (extra ? ef::kHasExtras : 0));
  if (r.kind == LightTimes::probe) [[unlikely]]
    return extra ? encode_light_body_general(r, out) : lb::encode_probe(r, out, head);
  // The arguments of a send or a receive, each in its byte when each is under 0x80 (the
  // buffer flag always is).
  const std::uint64_t count = zigzag_encode(r.count);
  const std::uint64_t peer = zigzag_encode(r.peer);
  const std::uint64_t tag = zigzag_encode(r.tag);
  const std::uint64_t any = count | r.type_id | peer | tag | r.comm_id;
  const std::uint64_t args = std::uint64_t{r.bits & 0xfu} << 16 | count << 24 |
                             std::uint64_t{r.type_id} << 32 | peer << 40 | tag << 48 |
                             std::uint64_t{r.comm_id} << 56;
  return r.kind == LightTimes::send ? lb::encode_send(r, out, extra, head, args, any)
                                    : lb::encode_recv(r, out, extra, head, args, any);
}

}  // namespace encore::dump
