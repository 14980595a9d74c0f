// How a parameter of each role is laid out in an event body (the table in event_format.hpp):
// the one grouping the encoder and the decoder both follow.
#pragma once

#include <cstdint>

#include "encore/mpi_table.hpp"

namespace encore {

enum class Coding : std::uint8_t {
  nothing,    // opaque, request_out (the request is the event itself)
  id,         // uvarint: buffer flag or stable handle id
  value,      // svarint
  values,     // uvarint n, n svarints
  ids,        // uvarint n, n uvarint ids
  new_comm,   // id, then flags and members (and remote members) unless null
  new_group,  // id, then members unless null
  request,    // one RequestRef
  requests,   // uvarint n, n RequestRefs
  status,     // one Status
  statuses,   // uvarint n, n Statuses
  text,       // uvarint length, bytes
  real,       // 8 bytes little-endian IEEE double
};

constexpr Coding coding_of(Role role) noexcept {
  switch (role) {
    case Role::opaque:
    case Role::request_out:
      return Coding::nothing;
    case Role::buf_in:
    case Role::buf_out:
    case Role::buf_inout:
    case Role::comm:
    case Role::comm_free:
    case Role::group:
    case Role::group_free:
    case Role::datatype:
    case Role::datatype_out:
    case Role::datatype_inout:
    case Role::datatype_free:
    case Role::op:
    case Role::op_out:
    case Role::op_free:
    case Role::handle:
    case Role::handle_out:
    case Role::handle_free:
      return Coding::id;
    case Role::count:
    case Role::peer:
    case Role::root:
    case Role::tag:
    case Role::value:
    case Role::aint:
    case Role::int_out:
    case Role::aint_out:
    case Role::ret_aint:
      return Coding::value;
    case Role::int_array:
    case Role::int_array_out:
    case Role::aint_array:
    case Role::aint_array_out:
      return Coding::values;
    case Role::datatype_array:
      return Coding::ids;
    case Role::comm_out:
      return Coding::new_comm;
    case Role::group_out:
      return Coding::new_group;
    case Role::request:
    case Role::request_inout:
      return Coding::request;
    case Role::request_array:
      return Coding::requests;
    case Role::status_in:
    case Role::status_out:
      return Coding::status;
    case Role::status_array:
      return Coding::statuses;
    case Role::string_in:
    case Role::string_out:
      return Coding::text;
    case Role::ret_double:
      return Coding::real;
  }
  return Coding::nothing;
}

}  // namespace encore
