"""Reads the MPI API out of an installed MPICH mpi.h: function prototypes and predefined handles.

Only what the compiler would see matters, so comments are stripped and prototypes are parsed
from their declarations; PMPI_/QMPI_ variants and typedefs are skipped.
"""
import dataclasses
import pathlib
import re
import subprocess


@dataclasses.dataclass
class Param:
    name: str
    ctype: str  # C type with the declarator's array part folded in, e.g. "const int[]"
    decl: str  # the declaration as it must appear in a shim's parameter list


@dataclasses.dataclass
class Function:
    name: str
    ret: str
    params: list
    variadic: bool = False
    has_pmpi: bool = True  # a PMPI_ twin exists, so a shim can forward to it


_PROTO = re.compile(
    r"^([A-Za-z_][\w \*]*?)\b(MPIX?_\w+)\s*\(([^;{]*?)\)\s*"
    r"(?:(?:MPICH|ROMIO)_\w+(?:\([^)]*\))?\s*)*;",
    re.M)
_HANDLE = re.compile(
    r"^#define\s+(MPIX?_\w+)\s+\(?\((MPI_[A-Za-z]+)\)\s*\(?(0x[0-9a-fA-F]+|0)\)?\)?\s*$", re.M)


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _parse_param(raw, index):
    decl = " ".join(raw.split())
    if decl in ("void", ""):
        return None
    m = re.match(r"^(.*?)(\w+)((?:\[\w*\])*)$", decl)
    if not m or not m.group(1).strip():
        # Unnamed parameter: give it a name so the shim can forward it.
        name = f"arg{index}"
        return Param(name, decl, f"{decl} {name}")
    base, name, dims = m.group(1).strip(), m.group(2), m.group(3)
    ctype = base + ("[]" * dims.count("[") if dims else "")
    if dims.count("[") == 2:
        ctype = base + "[][3]"
    return Param(name, ctype, decl)


def read_functions(include_dir):
    """All MPI_/MPIX_ functions declared by mpi.h (through mpi_proto.h and mpio.h)."""
    include_dir = pathlib.Path(include_dir)
    text = ""
    for header in ("mpi.h", "mpi_proto.h", "mpio.h"):
        path = include_dir / header
        if path.exists():
            text += _strip_comments(path.read_text()) + "\n"
    pmpi = set(re.findall(r"\bPMPIX?_\w+(?=\s*\()", text))
    functions = {}
    for ret, name, params in _PROTO.findall(text):
        ret = " ".join(ret.split())
        if ret.startswith("typedef") or name in functions:
            continue
        parts = [p for p in params.split(",")]
        variadic = any(p.strip() == "..." for p in parts)
        plist = []
        for i, p in enumerate(parts):
            if p.strip() == "...":
                continue
            param = _parse_param(p, i)
            if param:
                plist.append(param)
        functions[name] = Function(name, ret, plist, variadic, "P" + name in pmpi)
    return [functions[k] for k in sorted(functions)]


def read_handles(include_dir):
    """Predefined handle constants: {handle C type: [(name, value)]}, in header order."""
    text = _strip_comments((pathlib.Path(include_dir) / "mpi.h").read_text())
    handles = {}
    for name, ctype, value in _HANDLE.findall(text):
        handles.setdefault(ctype, []).append((name, int(value, 16) if value != "0" else 0))
    return handles


def defined_symbols(library):
    """Names of the functions a shared library defines (from nm -D)."""
    out = subprocess.run(["nm", "-D", "--defined-only", str(library)], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def read_macros(include_dir):
    """Names mpi.h #defines (a few declared functions are also macros, e.g. MPI_DUP_FN)."""
    text = _strip_comments((pathlib.Path(include_dir) / "mpi.h").read_text())
    return set(re.findall(r"^#\s*define\s+(\w+)", text, re.M))
