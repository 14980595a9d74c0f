#!/usr/bin/env bash
# Builds the consumers in this directory against an installed Encore and runs them.
#
#   tests/packaging/run.sh PREFIX [WORKDIR]
#
# PREFIX is what `cmake --install <build> --prefix PREFIX` installed into. Checks:
#   1. find_package(Encore REQUIRED) + encore::time from a separate CMake project;
#   2. pkg-config --cflags --libs encore-time (and encore-dump / encore-replay when installed).
# Exits non-zero on the first failure.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 PREFIX [WORKDIR]" >&2
  exit 2
fi
prefix=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $# -eq 2 ]]; then
  work=$2
  mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/encore-packaging.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
jobs=$(nproc 2>/dev/null || echo 2)

echo "== packaging test: CMake consumer against $prefix"
# CMAKE_PREFIX_PATH only: a system-wide Encore must not be picked up instead.
cmake -S "$here" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
  -DCMAKE_BUILD_TYPE=Release
cmake --build "$work/cmake-build" -j"$jobs"
"$work/cmake-build/consumer"
if [[ -x "$work/cmake-build/consumer_replay" ]]; then
  "$work/cmake-build/consumer_replay"
fi

echo "== packaging test: pkg-config consumer"
pcdirs=()
for d in "$prefix"/lib*/pkgconfig "$prefix"/lib/*/pkgconfig "$prefix"/share/pkgconfig; do
  [[ -f "$d/encore-time.pc" ]] && pcdirs+=("$d")
done
if [[ ${#pcdirs[@]} -eq 0 ]]; then
  echo "FAIL: no encore-time.pc under $prefix" >&2
  exit 1
fi
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(IFS=:; echo "${pcdirs[*]}")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
for pc in encore-time encore-dump encore-replay; do
  if pkg-config --exists "$pc" || [[ $pc == encore-time ]]; then
    pkg-config --print-errors --validate "$pc"
    echo "$pc $(pkg-config --modversion "$pc"): $(pkg-config --cflags --libs "$pc")"
  fi
done
# The flags must point into PREFIX (relocatable .pc files), not at the configure-time prefix.
if ! pkg-config --cflags encore-time | grep -q -- "-I$prefix/"; then
  if [[ "$(pkg-config --variable=includedir encore-time)" != "$prefix"/* ]]; then
    echo "FAIL: encore-time.pc does not point into $prefix" >&2
    exit 1
  fi
fi
# shellcheck disable=SC2046  # word splitting of the flags is intended
c++ -std=c++20 -o "$work/pkgconfig_consumer" "$here/pkgconfig_consumer.cpp" \
  $(pkg-config --cflags --libs encore-time)
"$work/pkgconfig_consumer"
if pkg-config --exists encore-dump; then
  # Link-time interposition: the recorder's flags come before the MPI library.
  # shellcheck disable=SC2046
  c++ -std=c++20 -o "$work/pkgconfig_mpi_consumer" "$here/mpi_consumer.cpp" \
    $(pkg-config --cflags --libs encore-dump)
  echo "encore-dump: MPI program linked"
fi

echo "== packaging test: OK"
