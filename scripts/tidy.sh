#!/usr/bin/env bash
# clang-tidy with the committed .clang-tidy over Encore's C++ sources, one file per job over
# `nproc` jobs: fails on any error-level diagnostic (the WarningsAsErrors checks, bugprone-*
# and performance-*, or a source clang cannot compile); the other checks are advisory, counted
# in the summary and kept in the log. The CI runs it after scripts/test.sh, on build/.
#
#   scripts/tidy.sh [BUILD_DIR]   BUILD_DIR: a configured and built tree (default build/, or
#                                 $ENCORE_BUILD_DIR; relative to the repository's root); its
#                                 compile_commands.json says how each file compiles, and the
#                                 generated sources must exist
#   ENCORE_TIDY_JOBS=N            parallel clang-tidy runs (default: nproc)
#
# Checked: every .cpp of libtime/, libdump/, libreplay/, tools/, tests/ and bench/ in the
# compilation database, and the generated ones in BUILD_DIR (the function table, the capture
# and replay shims). Not checked: the C sources (examples/, tests/programs/*.c, bench's probes;
# the config is for C++), and headers except through the files that include them (the config's
# HeaderFilterRegex picks ours). About 9 minutes on 2 cores. Prints one summary line (files,
# errors, advisory warnings, time) and each error; the full output goes to
# BUILD_DIR/clang-tidy.log. Exit status: 0 clean, 1 errors, 2 cannot run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
build=${1:-${ENCORE_BUILD_DIR:-build}}
jobs=${ENCORE_TIDY_JOBS:-$(nproc)}

if [[ ! -f "$build/compile_commands.json" ]]; then
  echo "tidy.sh: no $build/compile_commands.json: configure and build first (scripts/test.sh)" >&2
  exit 2
fi
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [[ -z "$tidy" ]]; then
  echo "tidy.sh: clang-tidy not found (scripts/install-deps.sh installs Debian's clang-tidy)" >&2
  exit 2
fi
build=$(cd "$build" && pwd)
log="$build/clang-tidy.log"
work=$(mktemp -d "${TMPDIR:-/tmp}/encore-tidy.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A compilation database of our C++ files, one entry each: CMake lists a file once per target
# that compiles it (libdump's sources are in the library and in the unit tests), and
# clang-tidy would check it once per entry.
python3 - "$build/compile_commands.json" "$root" "$build" "$work/compile_commands.json" <<'EOF'
import json, os, sys
db, root, build, out = sys.argv[1:]
ours = ("libtime/", "libdump/", "libreplay/", "tools/", "tests/", "bench/")
seen, keep = set(), []
for e in json.load(open(db)):
    f = os.path.normpath(os.path.join(e["directory"], e["file"]))
    if not f.endswith(".cpp") or f in seen:
        continue
    # Relative to the build tree first: it may lie inside the source tree (build/).
    rel = os.path.relpath(f, build)
    if rel.startswith(".."):
        rel = os.path.relpath(f, root)
    if rel.startswith(ours):
        seen.add(f)
        keep.append(dict(e, file=f))
json.dump(keep, open(out, "w"), indent=1)
EOF
mapfile -t files < <(python3 -c 'import json, sys
for e in json.load(open(sys.argv[1])): print(e["file"])' "$work/compile_commands.json")
if ((${#files[@]} == 0)); then
  echo "tidy.sh: no C++ sources of ours in $build/compile_commands.json" >&2
  exit 2
fi

# One job per file; its output in $work/N.out, its exit status in $work/N.rc. The config is
# named explicitly: a build tree outside the sources has no .clang-tidy above its generated
# files. -Wno-error: a -DENCORE_WERROR=ON build's -Werror would make clang's own warnings
# errors here; the compiler's warnings are the build's business.
export ENCORE_TIDY="$tidy" ENCORE_TIDY_DB="$work" ENCORE_TIDY_CONFIG="$root/.clang-tidy"
start=$SECONDS
for i in "${!files[@]}"; do printf '%s %s\0' "$i" "${files[$i]}"; done |
  xargs -0 -P "$jobs" -n 1 bash -c '
    n=${1%% *} f=${1#* }
    rc=0
    "$ENCORE_TIDY" -p "$ENCORE_TIDY_DB" --config-file="$ENCORE_TIDY_CONFIG" --quiet \
      --extra-arg=-Wno-error "$f" >"$ENCORE_TIDY_DB/$n.out" 2>&1 || rc=$?
    echo "$rc" >"$ENCORE_TIDY_DB/$n.rc"' _
elapsed=$((SECONDS - start))

# The diagnostics, each once (a header's come again with every file that includes it): the
# errors printed with their source lines and notes, the warnings counted.
: >"$log"
failed=0
for i in "${!files[@]}"; do
  {
    echo "== ${files[$i]} (exit $(cat "$work/$i.rc" 2>/dev/null || echo '?'))"
    cat "$work/$i.out" 2>/dev/null || true
  } >>"$log"
  rc=$(cat "$work/$i.rc" 2>/dev/null || echo 255)
  # clang-tidy exits 1 on errors and on a file it cannot compile; anything else is a crash.
  if [[ "$rc" != 0 && "$rc" != 1 ]]; then
    echo "tidy.sh: clang-tidy failed on ${files[$i]} (exit $rc); see $log" >&2
    failed=$((failed + 1))
  fi
done
summary=$(python3 - "$log" <<'EOF'
import re, sys
head = re.compile(r"^(\S.*?):\d+:\d+: (error|warning|note): ")
errors, warnings, block, seen = [], set(), None, set()
def flush():
    if block and block[0] not in seen:
        seen.add(block[0])
        errors.append(block)
for line in open(sys.argv[1], errors="replace"):
    line = line.rstrip("\n")
    m = head.match(line)
    if m and m.group(2) != "note":
        flush()
        block = None
        if m.group(2) == "error":
            block = [line]
        else:
            warnings.add(line)
    elif line.startswith(("== ", "Error while processing", "Suppressed ")) or \
            re.match(r"\d+ (warning|error)s? (generated|and|treated)", line):
        flush()
        block = None
    elif block is not None:
        block.append(line)
flush()
for b in errors:
    print("\n".join(b), file=sys.stderr)
print(len(errors), len(warnings))
EOF
)
read -r errors warnings <<<"$summary"
echo "clang-tidy: ${#files[@]} files checked, $errors errors, $warnings advisory warnings," \
  "${elapsed} s on $jobs jobs (full output: $log)"
if ((errors > 0 || failed > 0)); then
  exit 1
fi
