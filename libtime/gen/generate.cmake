# The MPI function table is generated from the installed mpi.h plus our semantic overlay
# (mpi_overlay.py). Included from libtime/CMakeLists.txt so the outputs belong to that
# directory. libdump's shims come from the same generator (see libdump/CMakeLists.txt).
set(ENCORE_GEN_DIR ${CMAKE_CURRENT_BINARY_DIR}/gen)
set(ENCORE_GENERATOR ${CMAKE_CURRENT_SOURCE_DIR}/gen/mpi_table.py)
set(ENCORE_GENERATOR_INPUTS ${ENCORE_GENERATOR} ${CMAKE_CURRENT_SOURCE_DIR}/gen/mpi_overlay.py
    ${CMAKE_CURRENT_SOURCE_DIR}/gen/mpi_header.py ${CMAKE_CURRENT_SOURCE_DIR}/gen/replay_shims.py
    ${ENCORE_MPI_H}/mpi.h)
add_custom_command(
  OUTPUT ${ENCORE_GEN_DIR}/include/encore/mpi_table.hpp ${ENCORE_GEN_DIR}/mpi_table.cpp
  COMMAND Python3::Interpreter ${ENCORE_GENERATOR} --mpi-include ${ENCORE_MPI_H}
          --table-header ${ENCORE_GEN_DIR}/include/encore/mpi_table.hpp
          --table-source ${ENCORE_GEN_DIR}/mpi_table.cpp
  DEPENDS ${ENCORE_GENERATOR_INPUTS}
  COMMENT "Generating the MPI function table from ${ENCORE_MPI_H}/mpi.h")

set(ENCORE_GENERATED_INCLUDE_DIR ${ENCORE_GEN_DIR}/include)
set(ENCORE_MPI_TABLE_SOURCES ${ENCORE_GEN_DIR}/mpi_table.cpp)
# libdump and the packaging need these too.
foreach(var ENCORE_GENERATED_INCLUDE_DIR ENCORE_GENERATOR ENCORE_GENERATOR_INPUTS)
  set(${var} ${${var}} PARENT_SCOPE)
endforeach()

# Straight-line event decoders, one per function's sequence of parameter codings.
add_custom_command(
  OUTPUT ${ENCORE_GEN_DIR}/decode/event_decode_cases.inc
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/gen/decode_gen.py
          --mpi-include ${ENCORE_MPI_H} --output ${ENCORE_GEN_DIR}/decode/event_decode_cases.inc
  DEPENDS ${ENCORE_GENERATOR_INPUTS} ${CMAKE_CURRENT_SOURCE_DIR}/gen/decode_gen.py
  COMMENT "Generating the event decoders from ${ENCORE_MPI_H}/mpi.h")
set(ENCORE_DECODER_SOURCES ${ENCORE_GEN_DIR}/decode/event_decode_cases.inc)
set(ENCORE_DECODER_INCLUDE_DIR ${ENCORE_GEN_DIR}/decode)
