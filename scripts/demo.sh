#!/usr/bin/env bash
# The README's main command: build Encore, record the halo2d example on 4 ranks, and show what
# the trace holds (`encore check` and `encore stats`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh
build=${ENCORE_BUILD_DIR:-build}
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" -j "$(nproc)" --target encore encore_dump example_halo2d
encore="$build/tools/encore/encore"
trace=${ENCORE_DEMO_TRACE:-demo-trace}

echo "== Recording examples/halo2d.c on 4 ranks into $trace/"
"$encore" record -o "$trace" --force -- mpiexec -n 4 "$build/examples/example_halo2d"
echo
echo "== encore check $trace"
"$encore" check "$trace"
echo
echo "== encore stats $trace"
"$encore" stats "$trace"
