#!/usr/bin/env bash
# The README's main command: build Encore, record the halo2d example on 4 ranks, show what the
# trace holds (`encore check`, `encore stats`), then replay rank 0 alone, without mpiexec, and
# compare its output with the real run's; then predict a 2-rank run from one replayed rank and
# compare the predicted loop time with plain runs'.
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
# recorded waits meaningless), so it gets its own 2-rank recording. What is compared: halo2d's
# own timer around its iterations (rank 0's MPI_Wtime before and after the loop, printed as
# "time"), in plain runs without Encore, and the time between the same two MPI_Wtime calls of
# rank 0 in the predicted trace. Long enough (about half a second) that start-up and one-off
# hiccups do not decide it; the plain runs are timed right before the replay, on the machine
# in the same state, and their spread is printed: a prediction cannot be closer than that (other
# work on the machine slows the plain runs, whose ranks poll while they wait, far more than the
# replay, whose stalls the prediction leaves out).
pred_trace="$trace-2ranks"
profile="$pred_trace.rank0"
predicted="$pred_trace.predicted"
args=(1024 1000)
rm -rf "$profile" "$predicted"
echo "== Recording halo2d (${args[0]}x${args[0]}, ${args[1]} iterations) on 2 ranks into $pred_trace/"
"$encore" record -o "$pred_trace" --force -- mpiexec -bind-to core -n 2 "$build/examples/example_halo2d" "${args[@]}" > /dev/null
runs=5
echo "== Timing $runs plain runs of it (no Encore): halo2d prints its iterations' time"
plain=()
for _ in $(seq "$runs"); do
  plain+=("$(mpiexec -bind-to core -n 2 "$build/examples/example_halo2d" "${args[@]}" | awk '$1 == "time" {print $2}')")
done
echo "== Replaying rank 0 alone with a profile (encore replay -o), then predicting the whole run"
echo "   from it (encore predict; rank 1's compute inferred from rank 0's)"
"$encore" replay --rank 0 --wtime recorded -o "$profile" "$pred_trace" -- "$build/examples/example_halo2d" "${args[@]}" > /dev/null
"$encore" predict "$pred_trace" --replay "$profile" -o "$predicted"
# Rank 0's two MPI_Wtime calls in the predicted trace (their predicted start, in ms).
predicted_s=$("$encore" show --rank 0 "$predicted" | awk '$4 == "MPI_Wtime" {t[n++] = $5}
  END {if (n == 2) printf "%.6f", (t[1] - t[0]) / 1000}')
if [[ -z "$predicted_s" || $(printf '%s\n' "${plain[@]}" | grep -c .) -ne $runs ]]; then
  echo "== cannot compare: the predicted trace or a plain run lacks halo2d's two timer reads" >&2
  exit 1
fi
read -r median lo hi < <(printf '%s\n' "${plain[@]}" | sort -g | awk '{v[NR] = $1}
  END {print v[int((NR + 1) / 2)], v[1], v[NR]}')
echo "== halo2d's iterations: predicted $predicted_s s; measured in plain runs $median s (median of"
echo "   $runs, spread $lo .. $hi s): $(awk -v p="$predicted_s" -v m="$median" \
  'BEGIN {printf "%+.1f %%", 100 * (p - m) / m}') from the median"
