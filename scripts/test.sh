#!/usr/bin/env bash
# The README's test command: install the dependencies, build everything with warnings as
# errors, and run the whole suite (unit tests in parallel, MPI integration tests one at a time).
#   scripts/test.sh [extra ctest arguments, e.g. -R capture]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh
build=${ENCORE_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DENCORE_WERROR=ON
cmake --build "$build" -j "$(nproc)"
cd "$build"
ctest --output-on-failure -j "$(nproc)" --timeout 900 "$@"
