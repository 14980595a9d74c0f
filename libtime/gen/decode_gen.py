#!/usr/bin/env python3
"""Generates libtime's straight-line event decoders from the MPI function table.

  decode_gen.py --mpi-include DIR --output INC

One `switch` on the function id with, per function, the exact sequence of its parameters'
codings: no step list is interpreted per event. Functions whose codings follow the same sequence
share one case. The helpers the cases call are in libtime/src/decode_fast.hpp; anything but ids,
values, requests and statuses goes through the checked generic reader (event_decoder.cpp).
"""
import argparse
import sys

import mpi_header
import mpi_table

# The role -> coding grouping of encore/role_coding.hpp; the generated file static_asserts that
# both agree for every role, so they cannot drift apart.
_CODING = {
    "opaque": "nothing", "request_out": "nothing",
    "buf_in": "id", "buf_out": "id", "buf_inout": "id", "comm": "id", "comm_free": "id",
    "group": "id", "group_free": "id", "datatype": "id", "datatype_out": "id",
    "datatype_inout": "id", "datatype_free": "id", "op": "id", "op_out": "id", "op_free": "id",
    "handle": "id", "handle_out": "id", "handle_free": "id",
    "count": "value", "peer": "value", "root": "value", "tag": "value", "value": "value",
    "aint": "value", "int_out": "value", "aint_out": "value", "ret_aint": "value",
    "int_array": "values", "int_array_out": "values", "aint_array": "values",
    "aint_array_out": "values", "datatype_array": "ids", "comm_out": "new_comm",
    "group_out": "new_group", "request": "request", "request_inout": "request",
    "request_array": "requests", "status_in": "status", "status_out": "status",
    "status_array": "statuses", "string_in": "text", "string_out": "text", "ret_double": "real",
}
_SCALAR = {"id", "value"}
_MAX_VARINT = 10


def plan(modelled, params):
    """(n params, [(param, coding)] inputs, [(param, coding)] outputs, [unset params])."""
    ins, outs, unset = [], [], []
    for i, (_, role, _, _) in enumerate(params):
        if not modelled or role == "opaque":
            unset.append(i)
        else:
            (outs if role in mpi_table._OUT_ROLES else ins).append((i, _CODING[role]))
    return len(params), ins, outs, unset


def emit_steps(steps, indent):
    """Straight-line reads; each run of ids and values is preceded by one room check (the run
    reads unchecked), whose failure sends the event to the checked generic path."""
    lines = []
    i = 0
    while i < len(steps):
        param, coding = steps[i]
        if coding in _SCALAR:
            j = i
            while j < len(steps) and steps[j][1] in _SCALAR:
                j += 1
            lines.append(f"{indent}if (b.end - p < {_MAX_VARINT * (j - i)}) return nullptr;")
            # Up to 8 at a time: all one byte (one test), else each varint on its own.
            for k in range(i, j, 8):
                run = steps[k:min(j, k + 8)]
                lines.append(f"{indent}if (one_byte_run(p, {len(run)})) {{")
                for n, (param, coding) in enumerate(run):
                    setter = "set_id" if coding == "id" else "set_value"
                    lines.append(f"{indent}  {setter}(a[{param}], byte_at(p + {n}));")
                lines.append(f"{indent}  p += {len(run)};")
                lines.append(f"{indent}}} else {{")
                for param, coding in run:
                    setter = "set_id" if coding == "id" else "set_value"
                    lines.append(f"{indent}  {setter}(a[{param}], uv(p, b));")
                lines.append(f"{indent}}}")
            i = j
            continue
        if coding == "nothing":
            lines.append(f"{indent}set_nothing(a[{param}]);")
        elif coding in ("requests", "statuses"):
            # An empty array (one zero byte: MPI_STATUSES_IGNORE, count 0) costs no call.
            lines.append(f"{indent}if (p != b.end && *p == std::byte{{0}}) {{ set_nothing(a[{param}]); ++p; }}")
            lines.append(f"{indent}else {{ p = read_{coding}(b, p, {param}, ev); }}")
        elif coding == "status":
            lines.append(f"{indent}p = read_status(b, p, {param}, ev);")
        elif coding == "request":
            lines.append(f"{indent}p = read_request(b, p, {param}, ev);")
        else:
            lines.append(f"{indent}p = read_checked(b, p, {param}, Coding::{coding}, ev);")
        i += 1
    return lines


def emit_case(shape):
    n, ins, outs, unset = shape
    body = [f"      prepare_args(ev, {n});"]
    if n:
        body.append("      [[maybe_unused]] ArgValue* const a = ev.args.data();")
    for u in unset:
        body.append(f"      set_absent(a[{u}]);")
    body += emit_steps(ins, "      ")
    if outs:
        absent = " ".join(f"set_absent(a[{o}]);" for o, _ in outs)
        body.append(f"      if (!ok) {{ {absent} return p; }}")
        body += emit_steps(outs, "      ")
    body.append("      return p;")
    return body


def emit(described):
    cases = {}  # shape -> [function enum names]
    for f, modelled, _, params in described:
        shape = plan(modelled, params)
        key = (shape[0], tuple(shape[1]), tuple(shape[2]), tuple(shape[3]))
        cases.setdefault(key, []).append(mpi_table.enum_name(f.name))
    out = ["// Generated by libtime/gen/decode_gen.py from the MPI function table: do not edit.",
           "// One straight-line decoder per function's sequence of parameter codings; included",
           "// by event_decoder.cpp after decode_fast.hpp, inlined into RankEventReader::next.",
           "#pragma once", "", "namespace encore::decode {", ""]
    for role, coding in _CODING.items():
        out.append(f"static_assert(coding_of(Role::{role}) == Coding::{coding});")
    for role, _ in _CODING.items():
        out.append(f"static_assert(is_output(Role::{role}) == "
                   f"{'true' if role in mpi_table._OUT_ROLES else 'false'});")
    out += ["", "[[gnu::always_inline]] inline const std::byte* decode_args(unsigned id, const Body& b,",
            "                                                       const std::byte* p, bool ok,",
            "                                                       Event& ev) {",
            "  switch (id) {"]
    for key, names in cases.items():
        for name in names:
            out.append(f"    case fn::{name}:")
        out.append("    {")
        out += emit_case(key)
        out.append("    }")
    out += ["    default:", "      return nullptr;", "  }", "}", "", "}  // namespace encore::decode",
            ""]
    return "\n".join(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mpi-include", required=True)
    ap.add_argument("--output", required=True)
    args = ap.parse_args(argv)
    functions = mpi_header.read_functions(args.mpi_include)
    if not functions:
        sys.exit(f"decode_gen.py: no MPI functions found under {args.mpi_include}")
    missing = set(mpi_table.overlay.ROLES) - set(_CODING)
    if missing:
        sys.exit(f"decode_gen.py: no coding for roles {sorted(missing)} (see role_coding.hpp)")
    mpi_table.write_if_changed(args.output, emit(mpi_table.describe(functions)))


if __name__ == "__main__":
    main(sys.argv[1:])
