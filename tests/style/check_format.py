"""Every C and C++ source of the project (not examples/, whose C keeps its own tutorial layout)
is as the committed .clang-format lays it out. Skipped (exit 77) without Debian 12's
clang-format 14, since other versions lay some constructs out differently."""
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUFFIXES = {".c", ".h", ".cpp", ".hpp"}
SKIP_DIRS = {"examples", "build", ".git"}


def sources():
    try:
        listed = subprocess.run(["git", "-C", str(ROOT), "ls-files"], check=True,
                                capture_output=True, text=True).stdout.split()
        paths = [ROOT / p for p in listed]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk the tree
        paths = [p for p in ROOT.rglob("*") if p.is_file()]
    return sorted(p for p in paths
                  if p.suffix in SUFFIXES and p.exists()
                  and not SKIP_DIRS & set(p.relative_to(ROOT).parts[:1]))


def main():
    tool = shutil.which("clang-format")
    if tool is None:
        print("skipped: no clang-format on PATH")
        return 77
    version = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    major = re.search(r"version (\d+)", version)
    if not major or major.group(1) != "14":
        print(f"skipped: needs clang-format 14 (Debian 12), found: {version.strip()}")
        return 77
    files = sources()
    if not files:
        print(f"error: no sources found under {ROOT}")
        return 1
    p = subprocess.run([tool, "--dry-run", "--Werror", *map(str, files)], capture_output=True,
                       text=True)
    bad = sorted({line.split(":")[0] for line in p.stderr.splitlines() if ": error:" in line})
    for f in bad:
        print(f"not formatted: {pathlib.Path(f).relative_to(ROOT)} "
              f"(clang-format -i {pathlib.Path(f).relative_to(ROOT)})")
    if p.returncode != 0 and not bad:
        print(p.stderr.strip())
    print(f"{len(files)} files checked, {len(bad)} not formatted")
    return 1 if p.returncode != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
