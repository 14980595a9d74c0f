"""libreplay's generated entry points: for every function of mpi.h, MPI_X and PMPI_X.

Each body takes the next recorded event of the rank (encore::replay::Step), checks the call's
inputs against it role by role (a mismatch is a divergence), and gives back what the recorded
call returned: output arguments, statuses, received data, the return code. What a role does is
in libreplay/src/step.hpp; the few calls that need more than that have hooks below.
"""
import re

import mpi_overlay as overlay

# Calls written by hand in libreplay (they start or end the replay, or are variadic).
HAND_WRITTEN = {
    "MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Abort", "MPI_Pcontrol",
    "MPI_Initialized", "MPI_Finalized", "MPI_Wtime", "MPI_Wtick",
}

def _type(call):
    return f"s.new_type(newtype, [&](TypeEngine& e) {{ return e.{call}; }});"


# Extra statements after the outputs are written (`s` is the step; parameters by C name).
# Payload fills mirror libdump's captures; completions mirror its request bookkeeping.
REPLAY_HOOKS = [
    (r"MPI_(Send|Bsend|Ssend|Rsend|Isend|Ibsend|Issend|Irsend)", "s.check_send(buf, count, datatype, dest);"),
    (r"MPI_(Send|Bsend|Ssend|Rsend)_init", "s.track_persistent_send(*request, buf, count, datatype, dest);"),
    (r"MPI_(Recv|Mrecv)", "s.fill_message(buf, count, datatype);"),
    (r"MPI_(Irecv|Imrecv)", "s.track_message(*request, buf, count, datatype, false);"),
    (r"MPI_Recv_init", "s.track_message(*request, buf, count, datatype, true);"),
    (r"MPI_Sendrecv", "s.check_send(sendbuf, sendcount, sendtype, dest); "
                      "s.fill_message(recvbuf, recvcount, recvtype);"),
    (r"MPI_Sendrecv_replace", "s.fill_message(buf, count, datatype);"),
    (r"MPI_Isendrecv", "s.check_send(sendbuf, sendcount, sendtype, dest); "
                       "s.track_message(*request, recvbuf, recvcount, recvtype, false);"),
    (r"MPI_Isendrecv_replace", "s.track_message(*request, buf, count, datatype, false);"),
    (r"MPI_(Wait|Test)", "s.complete_one(request);"),
    (r"MPI_(Wait|Test)all", "s.complete_all(count, array_of_requests);"),
    (r"MPI_(Wait|Test)any", "s.complete_index(array_of_requests, *indx);"),
    (r"MPI_(Wait|Test)some", "s.complete_some(array_of_requests, *outcount, array_of_indices);"),
    (r"MPI_Start", "s.start(*request);"),
    (r"MPI_Startall", "s.start_all(count, array_of_requests);"),
    (r"MPI_Request_free", "s.release(request);"),
    (r"MPI_Request_get_status", "s.peek_request(request);"),
    (r"MPI_Get_address|MPI_Address", "*address = reinterpret_cast<MPI_Aint>(location);"),
    # Process topologies, for the receive layouts of neighbourhood collectives.
    (r"MPI_Cart_create", "rtopo::cart(s, *comm_cart, ndims);"),
    (r"MPI_Cart_sub", "rtopo::cart_sub(s, comm, remain_dims, *newcomm);"),
    (r"MPI_Graph_create", "rtopo::graph(s, *comm_graph, nnodes, indx);"),
    (r"MPI_Dist_graph_create", "rtopo::dist_graph(s, *comm_dist_graph);"),
    (r"MPI_Dist_graph_create_adjacent",
     "rtopo::degrees(s, *comm_dist_graph, indegree, outdegree);"),
    (r"MPI_Dist_graph_neighbors_count", "rtopo::degrees(s, comm, *indegree, *outdegree);"),
    (r"MPI_Comm_i?dup(_with_info)?", "rtopo::inherit(s, comm, *newcomm); "
                                    "rattr::copy(comm, *newcomm);"),
    # Attribute values are not in the record: answered by libreplay (replay_attributes.hpp).
    (r"MPI_Comm_get_attr", "rattr::get(s, comm, comm_keyval, attribute_val, *flag);"),
    (r"MPI_Attr_get", "rattr::get(s, comm, keyval, attribute_val, *flag);"),
    (r"MPI_Comm_set_attr", "rattr::set(comm, comm_keyval, attribute_val);"),
    (r"MPI_Type_get_attr", "rattr::get_type(s, datatype, type_keyval, attribute_val, *flag);"),
    (r"MPI_Type_set_attr", "rattr::set(datatype, type_keyval, attribute_val);"),
    (r"MPI_Type_delete_attr", "rattr::erase(datatype, type_keyval);"),
    (r"MPI_Comm_create_keyval", "rattr::keyval_created(*comm_keyval, "
     "reinterpret_cast<void*>(comm_copy_attr_fn), reinterpret_cast<void*>(comm_delete_attr_fn), "
     "extra_state);"),
    (r"MPI_Keyval_create", "rattr::keyval_created(*keyval, reinterpret_cast<void*>(copy_fn), "
     "reinterpret_cast<void*>(delete_fn), extra_state);"),
    (r"MPI_Type_create_keyval", "rattr::keyval_created(*type_keyval, "
     "reinterpret_cast<void*>(type_copy_attr_fn), reinterpret_cast<void*>(type_delete_attr_fn), "
     "extra_state);"),
    (r"MPI_Attr_put", "rattr::set(comm, keyval, attribute_val);"),
    (r"MPI_Comm_delete_attr", "rattr::erase(comm, comm_keyval);"),
    (r"MPI_Attr_delete", "rattr::erase(comm, keyval);"),
    (r"MPI_Add_error_class", "rattr::error_class_added(*errorclass);"),
    # Derived datatypes are built by libreplay's engine, from the same arguments.
    (r"MPI_Type_contiguous", _type("contiguous(count, oldtype)")),
    (r"MPI_Type_create_f90_real", _type("dup(f90::real(p, r))")),
    (r"MPI_Type_create_f90_complex", _type("dup(f90::complex(p, r))")),
    (r"MPI_Type_create_f90_integer", _type("dup(f90::integer(r))")),
    (r"MPI_Type_vector", _type("vector(count, blocklength, stride, oldtype)")),
    (r"MPI_Type_(create_)?hvector", _type("hvector(count, blocklength, stride, oldtype)")),
    (r"MPI_Type_indexed", _type("indexed(count, array_of_blocklengths, array_of_displacements, "
                                "oldtype)")),
    (r"MPI_Type_(create_)?hindexed", _type("hindexed(count, array_of_blocklengths, "
                                           "array_of_displacements, oldtype)")),
    (r"MPI_Type_create_indexed_block", _type("indexed_block(count, blocklength, "
                                             "array_of_displacements, oldtype)")),
    (r"MPI_Type_create_hindexed_block", _type("hindexed_block(count, blocklength, "
                                              "array_of_displacements, oldtype)")),
    (r"MPI_Type_(create_)?struct", _type("create_struct(count, array_of_blocklengths, "
                                         "array_of_displacements, array_of_types)")),
    (r"MPI_Type_create_subarray", _type("subarray(ndims, array_of_sizes, array_of_subsizes, "
                                        "array_of_starts, order, oldtype)")),
    (r"MPI_Type_create_darray", _type("darray(size, rank, ndims, array_of_gsizes, "
                                      "array_of_distribs, array_of_dargs, array_of_psizes, order, "
                                      "oldtype)")),
    (r"MPI_Type_create_resized", _type("resized(oldtype, lb, extent)")),
    (r"MPI_Type_dup", _type("dup(oldtype)") + " rattr::copy(oldtype, *newtype);"),
    (r"MPI_Type_get_extent(_x)?", "s.local_extent(datatype, lb, extent, false);"),
    (r"MPI_Type_get_true_extent(_x)?", "s.local_extent(datatype, true_lb, true_extent, true);"),
    (r"MPI_Type_get_contents", "s.local_contents(datatype, max_integers, max_addresses, "
     "max_datatypes, array_of_integers, array_of_addresses, array_of_datatypes);"),
    # Packing is done here, on this machine's memory, at the position the recorded call used.
    (r"MPI_Pack", "s.local_pack(inbuf, incount, datatype, outbuf, *position);"),
    (r"MPI_Unpack", "s.local_unpack(inbuf, *position, outbuf, outcount, datatype);"),
    # Local computations and memory, done here as the program asked.
    (r"MPI_Op_create", "s.user_op_created(*op, user_fn);"),
    (r"MPI_Reduce_local", "s.reduce_local(inbuf, inoutbuf, count, datatype, op);"),
    (r"MPI_Alloc_mem", "s.alloc_mem(size, baseptr);"),
    (r"MPI_Free_mem", "s.free_mem(base);"),
    (r"MPI_Buffer_attach", "s.attach_buffer(buffer);"),
    (r"MPI_Buffer_detach", "s.detach_buffer(buffer_addr);"),
    (r"MPI_Pack_external", "s.local_pack(inbuf, incount, datatype, outbuf, *position, true);"),
    (r"MPI_Unpack_external",
     "s.local_unpack(inbuf, *position, outbuf, outcount, datatype, true);"),
]

# Calls computed on this machine instead of returned from the log (their results are addresses
# or memory, which differ between machines).
LOCAL_RESULT = {
    "MPI_Aint_add": "return s.local(base + disp);",
    "MPI_Aint_diff": "return s.local(addr1 - addr2);",
}


# Byte displacements that may be absolute addresses (from MPI_Get_address, used with
# MPI_BOTTOM), and the addresses MPI_Aint_add and MPI_Aint_diff take: where the program's
# memory lies moves from run to run (address-space randomisation), so these are not compared
# with the recording. What a type built from them carries, its signature, is checked where the
# type is used (its size and element sizes against the recorded messages).
ADDRESS_ARGS = [
    (r"MPI_Type_(create_)?(hindexed|hindexed_block|struct)(_c)?",
     {"array_of_displacements", "array_of_indices"}),
    (r"MPI_Aint_add", {"base"}),
    (r"MPI_Aint_diff", {"addr1", "addr2"}),
]


def _address_arg(fname, pname):
    return any(re.fullmatch(pattern, fname) and pname in names for pattern, names in ADDRESS_ARGS)


# MPI_Aint byte displacements of the w-collectives, relative to their buffer: absolute
# addresses where the buffer is MPI_BOTTOM, so compared with the recording only where it is not.
BOTTOM_RELATIVE = [
    (r"MPI_(Alltoallw|Ialltoallw|Alltoallw_init|Neighbor_alltoallw|Ineighbor_alltoallw"
     r"|Neighbor_alltoallw_init)(_c)?",
     {"sdispls": "sendbuf", "rdispls": "recvbuf"}),
]


def _bottom_relative(fname, p):
    if "MPI_Aint" not in p.decl:
        return None
    for pattern, names in BOTTOM_RELATIVE:
        if re.fullmatch(pattern, fname) and p.name in names:
            return names[p.name]
    return None


def hook(name):
    base = overlay.base_name(name)
    for pattern, stmt in REPLAY_HOOKS:
        if re.fullmatch(pattern, base):
            if name.endswith("_c") and "new_type" in stmt:
                # Large-count constructors narrow their MPI_Count arguments for the same engine.
                return re.sub(r"e\.(\w+)\(", r"large::\1(e, ", stmt)
            return stmt
    coll = overlay.collective_kind(name)
    if coll and coll[0] in overlay._COLL_LAYOUTS:
        layout = overlay._COLL_LAYOUTS[coll[0]].replace("layout::", "rlayout::").replace("(c,", "(s,")
        # The contribution first: in place it is the receive buffer, which the fill overwrites.
        contrib = overlay.contribution(name, "ctx")
        check = ""
        if contrib:
            call = "track_contribution(*request, " if coll[1] == "persistent" else "check_contribution("
            check = f"{{ StepComms ctx{{s}}; s.{call}{contrib[0]}); }} "
        if coll[1] == "blocking":
            return f"{check}s.fill({layout});"
        persistent = "true" if coll[1] == "persistent" else "false"
        return f"{check}s.track_collective(*request, {layout}, {persistent});"
    return None


def _in_stmt(i, p, role, flags=()):
    n = p.name
    # <false>: the parameter is never root-only, so the step need not look its flags up.
    t = "" if "root_only" in flags else "<false>"
    if role.startswith("buf_"):
        return f"s.in_buf{t}({i}, {n});"
    if role in ("count", "peer", "root", "tag", "value", "aint"):
        return f"s.in_value{t}({i}, {n});"
    if role == "comm":
        return f"s.in_comm{t}({i}, {n});"
    if role == "datatype":
        return f"s.in_datatype{t}({i}, {n});"
    if role == "op":
        return f"s.in_op({i}, {n});"
    # The handle freed is an input too: compared before check(), freed after it.
    if role == "comm_free":
        return f"s.in_freed_comm({i}, {n});"
    if role == "datatype_free":
        return f"s.in_freed_datatype({i}, {n});"
    if role in ("int_array", "aint_array"):
        ptr = f"&{n}[0][0]" if p.ctype.endswith("[][3]") else n
        return f"s.in_values({i}, {ptr});"
    if role == "datatype_array":
        return f"s.in_datatypes({i}, {n});"
    return None  # groups, other handles, requests, statuses, strings: not compared


def _out_stmt(i, p, role):
    n = p.name
    return {
        "int_out": f"s.out_value({i}, {n});",
        "aint_out": f"s.out_value({i}, {n});",
        "int_array_out": f"s.out_values({i}, {n});",
        "aint_array_out": f"s.out_values({i}, {n});",
        "comm_out": f"s.out_comm({i}, {n});",
        "group_out": f"s.out_group({i}, {n});",
        "datatype_out": f"s.out_datatype({i}, {n});",
        "op_out": f"s.out_op({i}, {n});",
        "handle_out": f"s.out_handle({i}, {n});",
        "request_out": f"s.out_request({i}, {n});",
        "status_out": f"s.out_status({i}, {n});",
        "status_array": f"s.out_statuses({i}, {n});",
        "string_out": f"s.out_string({i}, {n});",
    }.get(role)


def _free_stmt(i, p, role):
    n = p.name
    return {
        "comm_free": f"s.free_comm({i}, {n});",
        "group_free": f"s.free_group({i}, {n});",
        "datatype_free": f"s.free_datatype({i}, {n});",
        "op_free": f"s.free_op({i}, {n});",
        "handle_free": f"s.free_handle({i}, {n});",
        "datatype_inout": f"s.commit_datatype({i}, *{n});",
    }.get(role)


def emit_replay_shim(f, modelled, params, enum_name):
    decls = [p.decl for p, *_ in params if p]
    sig = ", ".join(decls) or "void"
    ret = f.ret
    fid = f"fn::{enum_name(f.name)}"
    body = [f'extern "C" ENCORE_EXPORT {ret} {f.name}({sig}) {{']
    body.append(f"  encore::replay::Step s({fid});")
    if not modelled:
        body.append("  s.unsupported();")
    else:
        frees = []
        for i, (p, role, _lens, flags) in enumerate(params):
            if p is None:
                continue
            if not _address_arg(f.name, p.name) and (stmt := _in_stmt(i, p, role, flags)):
                if buf := _bottom_relative(f.name, p):
                    stmt = f"if ({buf} != MPI_BOTTOM) {stmt}"
                body.append(f"  {stmt}")
            if stmt := _free_stmt(i, p, role):
                frees.append(f"  {stmt}")
        body.append("  s.check();")
        # Frees run attribute delete callbacks: only once the call is known not to diverge.
        body += frees
        if f.name in LOCAL_RESULT:
            body.append(f"  {LOCAL_RESULT[f.name]}")
            body.append("}")
            return "\n".join(body) + "\n" + _alias(f, sig)
        outs = [_out_stmt(i, p, role) for i, (p, role, *_r) in enumerate(params) if p]
        outs = [o for o in outs if o]
        extra = hook(f.name)
        if outs or extra:
            body.append("  if (s.ok()) {")
            body += [f"    {o}" for o in outs]
            if extra:
                body.append(f"    {extra}")
            body.append("  }")
    if ret == "int":
        body.append("  return s.rc();")
    elif ret == "double":
        body.append("  return s.ret_double();")
    elif "*" in ret or ret == "MPI_File":
        body.append(f"  return reinterpret_cast<{ret}>(static_cast<std::intptr_t>(s.ret_value()));")
    else:
        body.append(f"  return static_cast<{ret}>(s.ret_value());")
    body.append("}")
    return "\n".join(body) + "\n" + _alias(f, sig)


def _alias(f, sig):
    return (f'extern "C" ENCORE_EXPORT {f.ret} P{f.name}({sig}) '
            f'__attribute__((alias("{f.name}")));')


def emit_replay_shims(described, enum_name, macros):
    out = ["// Generated by libtime/gen/mpi_table.py from the installed mpi.h: do not edit.",
           "// libreplay's MPI: every MPI_X and PMPI_X of mpi.h, answered from the log.",
           "#include <mpi.h>", '#include "step.hpp"', '#include "datatypes/f90_types.hpp"', '#include "datatypes/large_count.hpp"', '#include "replay_layout.hpp"', '#include "replay_topology.hpp"', '#include "replay_attributes.hpp"', "",
           "using namespace encore;", "using namespace encore::replay;", "",
           '#define ENCORE_EXPORT __attribute__((visibility("default")))', "",
           '#pragma GCC diagnostic ignored "-Wunused-parameter"',
           '#pragma GCC diagnostic ignored "-Wattribute-alias"', ""]
    for f, modelled, cat, params in described:
        if f.name in HAND_WRITTEN or f.variadic or f.name in macros:
            continue  # MPI_DUP_FN and the like are macros for MPICH-internal callbacks
        out.append(emit_replay_shim(f, modelled, params, enum_name))
        out.append("")
    return "\n".join(out)
