#!/usr/bin/env bash
# The README's main command: build Encore, record the halo2d example on 4 ranks, show what the
# trace holds (`encore check`, `encore stats`), then replay rank 0 alone, without mpiexec, and
# compare its output with the real run's; then predict a 2-rank run from one replayed rank.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh
build=${ENCORE_BUILD_DIR:-build}
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" -j "$(nproc)" --target encore encore_dump encore_replay_mpich_abi example_halo2d
encore="$build/tools/encore/encore"
trace=${ENCORE_DEMO_TRACE:-demo-trace}

echo "== Recording examples/halo2d.c on 4 ranks into $trace/"
"$encore" record -o "$trace" --force -- mpiexec -n 4 "$build/examples/example_halo2d" | tee "$trace.out"
echo
echo "== encore check $trace"
"$encore" check "$trace"
echo
echo "== encore stats $trace"
"$encore" stats "$trace"

echo
echo "== encore replay --rank 0 $trace -- $build/examples/example_halo2d   (alone, no mpiexec)"
"$encore" replay --rank 0 --wtime recorded "$trace" -- "$build/examples/example_halo2d" | tee "$trace.replay.out"
if cmp -s "$trace.out" "$trace.replay.out"; then
  echo "== the replayed rank printed exactly what the real run printed"
else
  echo "== the replayed output differs from the real run:" >&2
  diff "$trace.out" "$trace.replay.out" >&2
  exit 1
fi

echo
# Prediction wants one rank per core (with more ranks than cores MPICH's busy polling makes the
# recorded waits meaningless), so it gets its own 2-rank recording.
pred_trace="$trace-2ranks"
profile="$pred_trace.rank0"
rm -rf "$profile" "$pred_trace.predicted"
echo "== Recording halo2d (512x512, 200 iterations) on 2 ranks into $pred_trace/, replaying rank 0"
echo "   alone with a profile (encore replay -o), then predicting the whole run (encore predict)"
"$encore" record -o "$pred_trace" --force -- mpiexec -n 2 "$build/examples/example_halo2d" 512 200 > /dev/null
"$encore" replay --rank 0 --wtime recorded -o "$profile" "$pred_trace" -- "$build/examples/example_halo2d" 512 200 > /dev/null
"$encore" predict "$pred_trace" --replay "$profile" -o "$pred_trace.predicted"
echo "== 'predicted total' is the prediction from rank 0's replay (rank 1 inferred from it), next to"
echo "   the recorded run's measured time (capture overhead removed)"
