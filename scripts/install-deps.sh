#!/usr/bin/env bash
# Install every build/test dependency of Encore from Debian 12 (bookworm) packages.
#
#   scripts/install-deps.sh          install what is missing (as root), or print the
#                                    sudo command and exit 1 (as a regular user)
#   scripts/install-deps.sh --list   print the package list and exit
#   scripts/install-deps.sh --check  report what is missing, install nothing (exit 1 if any)
#
# Idempotent and silent when everything is already installed.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake pkg-config python3 git gfortran
  # MPI (MPICH: the function table is generated from its mpi.h)
  mpich libmpich-dev
  # libraries linked by libtime / libdump / libreplay / tools
  libpapi-dev papi-tools
  libzstd-dev zstd
  libunwind-dev
  libxxhash-dev
  nlohmann-json3-dev
  libcli11-dev
  libfmt-dev
  # tests and benchmarks
  googletest libgtest-dev libgmock-dev
  libbenchmark-dev
  # formatting / static analysis
  clang-format clang-tidy
  # consumers of Encore's output: SimGrid/SMPI (smpirun is in libsimgrid-dev), OTF2
  libsimgrid-dev
  libotf2-trace-dev otf2-tools python3-otf2
  # headless browser (+ fonts: --no-install-recommends skips them) for the visual test
  chromium fonts-liberation
)

mode=install
case "${1:-}" in
  "") ;;
  --list) printf '%s\n' "${PACKAGES[@]}"; exit 0 ;;
  --check) mode=check ;;
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install-deps.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps.sh: dpkg-query not found; this script supports Debian 12 only." >&2
  echo "Needed packages: ${PACKAGES[*]}" >&2
  exit 1
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
  # "ii " = installed; anything else (absent, rc = removed with config left, half-installed...)
  if [[ "$status" != ii* ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

if [[ "$mode" == check ]]; then
  echo "install-deps.sh: missing Debian packages: ${missing[*]}" >&2
  exit 1
fi

if [[ "$(id -u)" -ne 0 ]]; then
  echo "install-deps.sh: missing Debian packages. Install them with:" >&2
  echo "  sudo apt-get update" >&2
  echo "  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Wait for a concurrent apt/dpkg run instead of failing on its lock.
apt_opts=(-q -o DPkg::Lock::Timeout=600)
apt-get "${apt_opts[@]}" update
apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}" </dev/null
