"""Our semantic overlay on mpi.h: what each parameter of each MPI function means.

mpi.h says only C types. Recording and replay need to know which argument is a receive buffer, a
peer rank, a request that a call completes, how long an array is... Most of that follows from
MPICH's consistent parameter names, so it is inferred by rules below; the exceptions are listed
explicitly. Functions not matched by MODELLED are recorded as "opaque": function, times and return
code only, and `encore stats` lists them as coverage gaps.

Each parameter gets (role, length, flags):
  role   - one of ROLES (the C++ enum encore::Role mirrors it, in this order)
  length - for arrays: how many elements, as a LenKind name plus an argument
  flags  - "root_only": significant only at the root of a rooted collective
"""
import re

ROLES = [
    "opaque",        # not recorded
    "buf_in", "buf_out", "buf_inout",  # a buffer: recorded as a flag (normal/IN_PLACE/BOTTOM/NULL)
    "count", "peer", "root", "tag", "value",  # int or MPI_Count inputs
    "aint",          # MPI_Aint / MPI_Offset inputs
    "int_out", "aint_out",  # scalar outputs, recorded after the call
    "int_array", "int_array_out", "aint_array", "aint_array_out",
    "comm", "comm_out", "comm_free",
    "group", "group_out", "group_free",
    "datatype", "datatype_out", "datatype_inout", "datatype_free", "datatype_array",
    "op", "op_out", "op_free",
    "handle", "handle_out", "handle_free",  # info, errhandler, win, file, message, session
    "request", "request_out", "request_inout", "request_array",
    "status_in", "status_out", "status_array",
    "string_in", "string_out",
    "ret_double", "ret_aint",
]

LEN_KINDS = [
    "none",
    "param",         # value of another int parameter
    "param_deref",   # value an int* parameter points to after the call (e.g. *outcount)
    "param_times3",  # 3 * value of another parameter (MPI_Group_range_incl ranges)
    "send_peers",    # comm size (intracomm) / remote size (intercomm) / out-degree (neighborhood)
    "recv_peers",    # comm size (intracomm) / remote size (intercomm) / in-degree (neighborhood)
    "comm_size",     # local group size
    "cart_ndims",    # the Cartesian communicator's number of dimensions
    "graph_edges",   # index[nnodes-1] of MPI_Graph_create/map
    "param_sum",     # sum of another int array parameter (dist graph destinations)
    "flag_count",    # value of a count parameter if *flag is true after the call, else 0
]

# Functions whose semantics we model (regexes on the name, without the _c large-count suffix).
MODELLED = [
    r"MPI_(Send|Bsend|Ssend|Rsend|Isend|Ibsend|Issend|Irsend)(_init)?", r"MPI_(Recv|Irecv)(_init)?",
    r"MPI_(Sendrecv|Isendrecv)(_replace)?", r"MPI_(Probe|Iprobe|Mprobe|Improbe|Mrecv|Imrecv)", r"MPI_Cancel", r"MPI_Request_(free|get_status)",
    r"MPI_(Wait|Test)(all|any|some)?", r"MPI_Start(all)?", r"MPI_Test_cancelled",
    r"MPI_Buffer_(attach|detach)",
    r"MPI_I?(Barrier|Bcast|Reduce|Allreduce|Gather|Gatherv|Scatter|Scatterv|Allgather|Allgatherv"
    r"|Alltoall|Alltoallv|Alltoallw|Reduce_scatter|Reduce_scatter_block|Scan|Exscan)(_init)?",
    r"MPI_I?[Bb]arrier(_init)?", r"MPI_I?(bcast|reduce|allreduce|gather|gatherv|scatter|scatterv"
    r"|allgather|allgatherv|alltoall|alltoallv|alltoallw|reduce_scatter|reduce_scatter_block|scan"
    r"|exscan)",
    r"MPI_I?[Nn]eighbor_(allgather|allgatherv|alltoall|alltoallv|alltoallw)(_init)?",
    r"MPI_Reduce_local", r"MPI_Op_(create|free|commutative)", r"MPI_Comm_get_parent",
    r"MPI_Comm_(dup|dup_with_info|idup|idup_with_info|split|split_type|create|create_group"
    r"|free|rank|size|remote_size|remote_group|group|compare|test_inter|set_name|get_name"
    r"|set_attr|get_attr|delete_attr|create_keyval|free_keyval|set_errhandler|get_errhandler"
    r"|set_info|get_info|call_errhandler|create_errhandler|disconnect)",
    r"MPI_Intercomm_(create|merge)", r"MPI_Group_\w+",
    r"MPI_(Cart|Graph|Dist_graph)_\w+", r"MPI_(Cartdim|Graphdims)_get", r"MPI_Topo_test",
    r"MPI_Dims_create",
    r"MPI_Type_\w+", r"MPI_(Un)?[Pp]ack(_size|_external|_external_size)?",
    r"MPI_Get_(count|elements|elements_x|address|processor_name|library_version|version)",
    r"MPI_Address", r"MPI_Aint_(add|diff)",
    r"MPI_(Attr|Keyval)_\w+",
    r"MPI_W(time|tick)", r"MPI_Init(_thread)?", r"MPI_Finalize", r"MPI_(Initialized|Finalized)",
    r"MPI_Abort", r"MPI_Query_thread", r"MPI_Is_thread_main", r"MPI_Pcontrol",
    r"MPI_Error_(class|string)", r"MPI_Add_error_(class|code|string)",
    r"MPI_Errhandler_(create|free|get|set)", r"MPI_Info_\w+",
    r"MPI_Status_set_(cancelled|elements|elements_x)",
    r"MPI_Alloc_mem", r"MPI_Free_mem",
]

# Functions not modelled even though a MODELLED pattern matches them (they need machinery that
# later issues bring: RMA windows, MPI-IO, sessions, partitioned communication).
NOT_MODELLED = {
    "MPI_Type_get_contents_c",
}

# Shims written by hand in libdump (the generator emits no body for them).
HAND_WRITTEN_SHIMS = {
    "MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Abort", "MPI_Pcontrol",
}

_PEERS = {"dest", "source", "target_rank"}
_TAGS = {"tag", "sendtag", "recvtag"}
_COUNTS = {"count", "sendcount", "recvcount", "incount", "outcount", "insize", "outsize",
           "partitions", "blocklength", "maxprocs", "n"}
_SEND_ARRAYS = {"sendcounts", "sdispls", "sendtypes"}
_RECV_ARRAYS = {"recvcounts", "rdispls", "recvtypes", "displs"}
_INOUT_REQUEST_FUNCS = re.compile(r"MPI_(Wait|Test|Start|Cancel|Request_free)")

# Explicit array lengths: (function regex, parameter) -> (LenKind, other parameter).
_LENGTHS = [
    (r"MPI_(Wait|Test)(all|any)", "array_of_requests", ("param", "count")),
    (r"MPI_(Wait|Test)all", "array_of_statuses", ("param", "count")),
    (r"MPI_Testall", "array_of_statuses", ("flag_count", "count")),
    (r"MPI_(Wait|Test)some", "array_of_requests", ("param", "incount")),
    (r"MPI_(Wait|Test)some", "array_of_indices", ("param_deref", "outcount")),
    (r"MPI_(Wait|Test)some", "array_of_statuses", ("param_deref", "outcount")),
    (r"MPI_Startall", "array_of_requests", ("param", "count")),
    (r"MPI_Scatterv", "displs", ("send_peers", "")),
    (r"MPI_Reduce_scatter(_init)?", "recvcounts", ("comm_size", "")),
    (r"MPI_Cart_create|MPI_Cart_map", "dims", ("param", "ndims")),
    (r"MPI_Cart_create|MPI_Cart_map", "periods", ("param", "ndims")),
    (r"MPI_Cart_get", "*", ("param", "maxdims")),
    (r"MPI_Cart_coords", "coords", ("param", "maxdims")),
    (r"MPI_Cart_rank", "coords", ("cart_ndims", "")),
    (r"MPI_Cart_sub", "remain_dims", ("cart_ndims", "")),
    (r"MPI_Dims_create", "dims", ("param", "ndims")),
    (r"MPI_Graph_(create|map)", "indx", ("param", "nnodes")),
    (r"MPI_Graph_(create|map)", "edges", ("graph_edges", "indx")),
    (r"MPI_Graph_get", "indx", ("param", "maxindex")),
    (r"MPI_Graph_get", "edges", ("param", "maxedges")),
    (r"MPI_Graph_neighbors", "neighbors", ("param", "maxneighbors")),
    (r"MPI_Dist_graph_create", "sources", ("param", "n")),
    (r"MPI_Dist_graph_create", "degrees", ("param", "n")),
    (r"MPI_Dist_graph_create", "destinations", ("param_sum", "degrees")),
    (r"MPI_Dist_graph_create", "weights", ("param_sum", "degrees")),
    (r"MPI_Dist_graph_create_adjacent", "sources", ("param", "indegree")),
    (r"MPI_Dist_graph_create_adjacent", "sourceweights", ("param", "indegree")),
    (r"MPI_Dist_graph_create_adjacent", "destinations", ("param", "outdegree")),
    (r"MPI_Dist_graph_create_adjacent", "destweights", ("param", "outdegree")),
    (r"MPI_Dist_graph_neighbors", "sources", ("param", "maxindegree")),
    (r"MPI_Dist_graph_neighbors", "sourceweights", ("param", "maxindegree")),
    (r"MPI_Dist_graph_neighbors", "destinations", ("param", "maxoutdegree")),
    (r"MPI_Dist_graph_neighbors", "destweights", ("param", "maxoutdegree")),
    (r"MPI_Group_(incl|excl|translate_ranks)", "*", ("param", "n")),
    (r"MPI_Group_range_(incl|excl)", "ranges", ("param_times3", "n")),
    (r"MPI_Type_create_(subarray|darray)", "*", ("param", "ndims")),
    (r"MPI_Type_\w+", "*", ("param", "count")),
]

# Parameters significant only at the root of a rooted collective (garbage elsewhere).
_ROOT_ONLY = [
    (r"MPI_I?[Gg]ather(_init)?", {"recvbuf", "recvcount", "recvtype"}),
    (r"MPI_I?[Gg]atherv(_init)?", {"recvbuf", "recvcounts", "displs", "recvtype"}),
    (r"MPI_I?[Ss]catter(_init)?", {"sendbuf", "sendcount", "sendtype"}),
    (r"MPI_I?[Ss]catterv(_init)?", {"sendbuf", "sendcounts", "displs", "sendtype"}),
    (r"MPI_I?[Rr]educe(_init)?", {"recvbuf"}),
]

# Calls after which libdump must do more than encode arguments: (function regex, pre, post).
# The expressions are C++ in the generated shim, where `c` is the call being recorded and the
# parameters have their C names; `<param>_in` is the value of an in/out handle before the call.
HOOKS = [
    (r"MPI_(Send|Bsend|Ssend|Rsend)", None, "c.hash_send(buf, count, datatype, dest);"),
    (r"MPI_(Isend|Ibsend|Issend|Irsend)", None, "c.hash_send(buf, count, datatype, dest);"),
    (r"MPI_(Send|Bsend|Ssend|Rsend)_init", None,
     "c.track_persistent_send(*request, buf, count, datatype, dest);"),
    (r"MPI_Recv", None, "c.capture_message(buf, count, datatype, status);"),
    # The receive of the message a blocking probe found will not wait (LightCall::recv_call).
    (r"MPI_Probe", None, "c.message_found();"),
    (r"MPI_Mrecv", None, "c.capture_message(buf, count, datatype, status);"),
    (r"MPI_Irecv", None, "c.track_message(*request, buf, count, datatype, false);"),
    (r"MPI_Imrecv", None, "c.track_message(*request, buf, count, datatype, false);"),
    (r"MPI_Recv_init", None, "c.track_message(*request, buf, count, datatype, true);"),
    (r"MPI_Sendrecv", None, "c.hash_send(sendbuf, sendcount, sendtype, dest); "
     "c.capture_message(recvbuf, recvcount, recvtype, status);"),
    (r"MPI_Sendrecv_replace", "c.hash_send_before(buf, count, datatype, dest);",
     "c.capture_message(buf, count, datatype, status);"),
    (r"MPI_Isendrecv", None, "c.hash_send(sendbuf, sendcount, sendtype, dest); "
     "c.track_sendrecv(*request, recvbuf, recvcount, recvtype);"),
    (r"MPI_Isendrecv_replace", "c.hash_send_before(buf, count, datatype, dest);",
     "c.track_sendrecv(*request, buf, count, datatype);"),
    (r"MPI_Wait", None, "c.complete_one(request_in, status);"),
    (r"MPI_Test", None, "if (*flag) c.complete_one(request_in, status);"),
    (r"MPI_Waitall", None, "c.complete_all(count, array_of_requests_in, array_of_statuses);"),
    (r"MPI_Testall", None,
     "if (*flag) c.complete_all(count, array_of_requests_in, array_of_statuses);"),
    (r"MPI_Waitany", None, "c.complete_index(array_of_requests_in, *indx, status);"),
    (r"MPI_Testany", None, "if (*flag) c.complete_index(array_of_requests_in, *indx, status);"),
    (r"MPI_(Wait|Test)some", None,
     "c.complete_some(array_of_requests_in, incount, *outcount, array_of_indices, "
     "array_of_statuses);"),
    # A persistent collective's contribution is hashed before the start: in place, the call
    # may overwrite it.
    (r"MPI_Start", "c.start_contributions(&request_in, 1);", "c.start(request_in);"),
    (r"MPI_Startall", "c.start_contributions(array_of_requests_in, count);",
     "c.start_all(count, array_of_requests_in);"),
    (r"MPI_Request_free", None, "c.release(request_in);"),
    (r"MPI_Request_get_status", None, "if (*flag) c.peek_request(request, status);"),
    (r"MPI_Type_commit", None, "c.define_datatype(datatype_in);"),
    (r"MPI_Comm_get_attr", None, "c.attribute_value(comm_keyval, attribute_val, *flag);"),
    (r"MPI_Attr_get", None, "c.attribute_value(keyval, attribute_val, *flag);"),
    (r"MPI_Dist_graph_create", None, "c.neighbours(*comm_dist_graph);"),
]

# Statuses of completion calls are encoded knowing which request they belong to: MPI defines
# source, tag and count only for receives, and nothing while a test says "not yet".
STATUS_ENCODERS = {
    # A probe that found nothing leaves the status untouched: stale memory, not recorded.
    # A probe completes no request: MPI does not define its status's cancelled bit.
    "MPI_Iprobe": "c.put_status(*flag ? status : nullptr, status_user == MPI_STATUS_IGNORE, "
                  "false);",
    "MPI_Improbe": "c.put_status(*flag ? status : nullptr, status_user == MPI_STATUS_IGNORE, "
                   "false);",
    "MPI_Wait": "c.put_completion_status(status, status_user == MPI_STATUS_IGNORE, request_in);",
    "MPI_Test": "c.put_completion_status(*flag ? status : nullptr, "
                "status_user == MPI_STATUS_IGNORE, request_in);",
    "MPI_Request_get_status": "c.put_completion_status(*flag ? status : nullptr, "
                              "status_user == MPI_STATUS_IGNORE, request);",
    "MPI_Waitany": "c.put_completion_status_at(status, status_user == MPI_STATUS_IGNORE, "
                   "array_of_requests_in, *indx);",
    "MPI_Testany": "c.put_completion_status_at(*flag ? status : nullptr, "
                   "status_user == MPI_STATUS_IGNORE, array_of_requests_in, *indx);",
    "MPI_Waitall": "c.put_completion_statuses(array_of_statuses, {len}, "
                   "array_of_statuses_user == MPI_STATUSES_IGNORE, array_of_requests_in, count, "
                   "nullptr);",
    # Testall that found some request not done leaves every status undefined: none recorded.
    "MPI_Testall": "c.put_completion_statuses(array_of_statuses, *flag ? {len} : 0, "
                   "array_of_statuses_user == MPI_STATUSES_IGNORE, array_of_requests_in, count, "
                   "nullptr);",
    "MPI_Waitsome": "c.put_completion_statuses(array_of_statuses, {len}, "
                    "array_of_statuses_user == MPI_STATUSES_IGNORE, array_of_requests_in, "
                    "incount, array_of_indices);",
    "MPI_Testsome": "c.put_completion_statuses(array_of_statuses, {len}, "
                    "array_of_statuses_user == MPI_STATUSES_IGNORE, array_of_requests_in, "
                    "incount, array_of_indices);",
}


def status_encoder(name):
    return STATUS_ENCODERS.get(base_name(name))


# Light calls with a lean path (LightCall, libdump/src/light_call.hpp): the shim records a
# send or receive of a few bytes of a contiguous type, a query, a nonblocking send of a
# contiguous type or a nonblocking receive without a Call.
LIGHT_CALLS = {"MPI_Send": "send", "MPI_Recv": "recv", "MPI_Get_count": "query",
               "MPI_Get_elements": "query", "MPI_Type_size": "query", "MPI_Isend": "isend",
               "MPI_Irecv": "irecv"}
# A light query's input status (None: it has none) and its int result (LightCall::query
# encodes them as the Call path does).
LIGHT_QUERIES = {"MPI_Get_count": ("status", "count"), "MPI_Get_elements": ("status", "count"),
                 "MPI_Type_size": (None, "size")}
# Polls whose lean run ends with a poll that found something, recorded the same way
# (LightCall::probe): the found message's status is all it adds. Such a poll that continues no
# run takes the lean path too (LeanPoll::opens): when it fails, LightCall::probe encodes it in
# place as the template of a new run.
LIGHT_FOUND_POLLS = {"MPI_Iprobe"}


# Polls that come in runs of identical failed calls (format 1.2, Call::repeat_poll, LeanPoll):
# when the call found nothing, and two words (plus, for the array forms, the request array as
# the caller passed it) that determine its arguments exactly, statuses ignored or not
# included. The words are taken before the PMPI call, from the caller's arguments.
_IGNORED = "(status_user == MPI_STATUS_IGNORE)"
_ALL_IGNORED = "(array_of_statuses_user == MPI_STATUSES_IGNORE)"
POLL_REPEATS = {
    "MPI_Iprobe": ("!*flag", "Call::poll_pair(source, tag)",
                   f"Call::poll_pair(comm, {_IGNORED})", None),
    "MPI_Improbe": ("!*flag", "Call::poll_pair(source, tag)",
                    f"Call::poll_pair(comm, {_IGNORED})", None),
    "MPI_Test": ("!*flag", "Call::poll_pair(request_in, 0)", _IGNORED, None),
    "MPI_Testany": ("!*flag", "Call::poll_pair(count, 0)", _IGNORED,
                    ("array_of_requests", "count")),
    "MPI_Testall": ("!*flag", "Call::poll_pair(count, 0)", _ALL_IGNORED,
                    ("array_of_requests", "count")),
    "MPI_Testsome": ("*outcount == 0", "Call::poll_pair(incount, 0)", _ALL_IGNORED,
                     ("array_of_requests", "incount")),
}


def poll_repeat(name):
    return POLL_REPEATS.get(name)


# Receive layouts of collectives, as C++ expressions building an encore::dump::RecvLayout.
_COLL_LAYOUTS = {
    "Bcast": "layout::bcast(c, buffer, count, datatype, root, comm)",
    "Reduce": "layout::at_root(c, recvbuf, count, datatype, root, comm)",
    "Allreduce": "layout::whole(c, recvbuf, count, datatype)",
    "Scan": "layout::whole(c, recvbuf, count, datatype)",
    "Exscan": "layout::exscan(c, recvbuf, count, datatype, comm)",
    "Reduce_scatter_block": "layout::whole(c, recvbuf, recvcount, datatype)",
    "Reduce_scatter": "layout::mine(c, recvbuf, recvcounts, datatype, comm)",
    "Gather": "layout::gather(c, recvbuf, recvcount, recvtype, root, comm)",
    "Gatherv": "layout::gatherv(c, recvbuf, recvcounts, displs, recvtype, root, comm)",
    "Scatter": "layout::whole(c, recvbuf, recvcount, recvtype)",
    "Scatterv": "layout::whole(c, recvbuf, recvcount, recvtype)",
    "Allgather": "layout::blocks(c, recvbuf, recvcount, recvtype, comm, false)",
    "Allgatherv": "layout::blocks_v(c, recvbuf, recvcounts, displs, recvtype, comm, false)",
    "Alltoall": "layout::blocks(c, recvbuf, recvcount, recvtype, comm, false)",
    "Alltoallv": "layout::blocks_v(c, recvbuf, recvcounts, rdispls, recvtype, comm, false)",
    "Alltoallw": "layout::blocks_w(c, recvbuf, recvcounts, rdispls, recvtypes, comm, false)",
    "Neighbor_allgather": "layout::blocks(c, recvbuf, recvcount, recvtype, comm, true)",
    "Neighbor_allgatherv": "layout::blocks_v(c, recvbuf, recvcounts, displs, recvtype, comm, true)",
    "Neighbor_alltoall": "layout::blocks(c, recvbuf, recvcount, recvtype, comm, true)",
    "Neighbor_alltoallv": "layout::blocks_v(c, recvbuf, recvcounts, rdispls, recvtype, comm, true)",
    "Neighbor_alltoallw": "layout::blocks_w(c, recvbuf, recvcounts, rdispls, recvtypes, comm, true)",
}


# What each collective hands over as this rank's input (collective_contribution.hpp), hashed by
# libdump and checked by libreplay: (call in encore::contribution, the parameter whose
# MPI_IN_PLACE makes the input part of the receive buffer, which the call overwrites, so
# libdump hashes it before the call; None when that cannot happen or leaves nothing to hash).
_CONTRIBUTIONS = {
    "Bcast": ("bcast(X, buffer, count, datatype, root, comm)", None),
    "Reduce": ("reduce(X, sendbuf, recvbuf, count, datatype, root, comm)", "sendbuf"),
    "Allreduce": ("reduction(X, sendbuf, recvbuf, count, datatype)", "sendbuf"),
    "Scan": ("reduction(X, sendbuf, recvbuf, count, datatype)", "sendbuf"),
    "Exscan": ("reduction(X, sendbuf, recvbuf, count, datatype)", "sendbuf"),
    "Reduce_scatter_block": ("reduce_scatter_block(X, sendbuf, recvbuf, recvcount, datatype, comm)",
                             "sendbuf"),
    "Reduce_scatter": ("reduce_scatter(X, sendbuf, recvbuf, recvcounts, datatype, comm)", "sendbuf"),
    "Gather": ("gather(X, sendbuf, sendcount, sendtype, root, comm)", None),
    "Gatherv": ("gather(X, sendbuf, sendcount, sendtype, root, comm)", None),
    "Scatter": ("scatter(X, sendbuf, sendcount, sendtype, root, comm)", None),
    "Scatterv": ("scatterv(X, sendbuf, sendcounts, displs, sendtype, root, comm)", None),
    "Allgather": ("allgather(X, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)",
                  "sendbuf"),
    "Allgatherv": ("allgatherv(X, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, "
                   "recvtype, comm)", "sendbuf"),
    "Alltoall": ("alltoall(X, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)",
                 "sendbuf"),
    "Alltoallv": ("alltoallv(X, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, "
                  "rdispls, recvtype, comm)", "sendbuf"),
    "Alltoallw": ("alltoallw(X, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, "
                  "rdispls, recvtypes, comm)", "sendbuf"),
    "Neighbor_allgather": ("neighbor_allgather(X, sendbuf, sendcount, sendtype)", None),
    "Neighbor_allgatherv": ("neighbor_allgather(X, sendbuf, sendcount, sendtype)", None),
    "Neighbor_alltoall": ("neighbor_alltoall(X, sendbuf, sendcount, sendtype, comm)", None),
    "Neighbor_alltoallv": ("neighbor_alltoallv(X, sendbuf, sendcounts, sdispls, sendtype, comm)",
                           None),
    "Neighbor_alltoallw": ("neighbor_alltoallw(X, sendbuf, sendcounts, sdispls, sendtypes, comm)",
                           None),
}


def contribution(name, ctx):
    """(C++ expression of the call's contribution blocks with context `ctx`, in-place parameter
    or None) for a collective that has one, else None."""
    coll = collective_kind(name)
    if not coll or coll[0] not in _CONTRIBUTIONS:
        return None
    expr, in_place = _CONTRIBUTIONS[coll[0]]
    return ("contribution::" + expr.replace("X,", ctx + ",", 1), in_place)


def base_name(name):
    return name[:-2] if name.endswith("_c") else name


def is_modelled(name):
    if name in NOT_MODELLED:
        return False
    base = base_name(name)
    return any(re.fullmatch(p, base) for p in MODELLED)


def collective_kind(name):
    """('Gatherv', 'blocking'|'nonblocking'|'persistent') for a collective, else None."""
    base = base_name(name)[4:]
    mode = "blocking"
    if base.endswith("_init"):
        base, mode = base[:-5], "persistent"
    elif base.startswith("I") and base[1:2].islower():
        base, mode = base[1].upper() + base[2:], "nonblocking"
    if base == "barrier" or base == "Barrier":
        return ("Barrier", mode)
    if base in _COLL_LAYOUTS:
        return (base, mode)
    return None


def category(name):
    base = base_name(name)
    if not is_modelled(name):
        return "opaque"
    if collective_kind(name):
        return "collective"
    for cat, pattern in [
        ("p2p", r"MPI_(I|B|S|R|Ib|Is|Ir|M|Im)?([Ss]end|[Rr]ecv|[Pp]robe|[Ss]endrecv)(_replace|_init)?"),
        ("completion", r"MPI_(Wait|Test|Start|Cancel|Request_)\w*"),
        ("communicator", r"MPI_(Comm|Intercomm|Group|Cart|Graph|Dist_graph|Topo|Dims)\w*"),
        ("datatype", r"MPI_(Type|Pack|Unpack|Get_count|Get_elements|Get_address|Address|Aint)\w*"),
        ("time", r"MPI_W(time|tick)"),
        ("environment", r"MPI_\w+"),
    ]:
        if re.fullmatch(pattern, base):
            return cat
    return "environment"


def _length(fname, pname):
    base = base_name(fname)
    special = special_lengths(fname, pname)
    if special:
        return special
    for pattern, param, spec in _LENGTHS:
        if re.fullmatch(pattern, base) and param in ("*", pname):
            return spec
    if pname in _SEND_ARRAYS:
        return ("send_peers", "")
    if pname in _RECV_ARRAYS:
        return ("recv_peers", "")
    raise ValueError(f"{fname}: no length rule for array parameter {pname}")


def _handle_role(kind, fname, pname, pointer):
    """Role of a handle parameter of type `kind` (MPI_Comm, ...); `pointer` for MPI_X *."""
    base = base_name(fname)
    frees = re.fullmatch(r"MPI_(Comm_free|Comm_disconnect|Group_free|Type_free|Op_free"
                         r"|Info_free|Errhandler_free|Win_free|File_close|Session_finalize)", base)
    family = {"MPI_Comm": "comm", "MPI_Group": "group", "MPI_Datatype": "datatype",
              "MPI_Op": "op"}.get(kind, "handle")
    if not pointer:
        return family
    if frees:
        return family + "_free"
    if base == "MPI_Type_commit":
        return "datatype_inout"
    if kind == "MPI_Message" and re.fullmatch(r"MPI_(Mrecv|Imrecv)", base):
        return "handle_free"
    return family + "_out"


def param_role(fname, param):
    """(role, (len_kind, len_param), flags) of one parameter."""
    t, n = param.ctype, param.name
    base = base_name(fname)
    none = ("none", "")
    flags = []
    for pattern, names in _ROOT_ONLY:
        if re.fullmatch(pattern, base) and n in names:
            flags.append("root_only")
    handle = re.fullmatch(r"(const )?(MPI_(Comm|Group|Datatype|Op|Info|Errhandler|Win|File"
                          r"|Message|Session))( \*)?", t)
    if handle:
        return (_handle_role(handle.group(2), fname, n, bool(handle.group(4))), none, flags)
    if re.fullmatch(r"(const )?MPI_Datatype\[\]", t):
        if base == "MPI_Type_get_contents":
            return ("opaque", none, flags)
        return ("datatype_array", _length(fname, n), flags)
    if t == "MPI_Request *":
        return ("request_inout" if _INOUT_REQUEST_FUNCS.match(base) else "request_out", none, flags)
    if t == "MPI_Request":
        return ("request", none, flags)
    if t == "MPI_Request[]":
        return ("request_array", _length(fname, n), flags)
    if t == "MPI_Status *":
        if base.startswith("MPI_Status_set"):
            return ("opaque", none, flags)
        return ("status_out", none, flags)
    if t == "const MPI_Status *":
        return ("status_in", none, flags)
    if t == "MPI_Status[]":
        return ("status_array", _length(fname, n), flags)
    if t in ("void *", "const void *"):
        if n in ("sendbuf", "inbuf") or (n == "buf" and "send" in base.lower()
                                          and "recv" not in base.lower()):
            return ("buf_in", none, flags)
        if n in ("recvbuf", "outbuf") or (n == "buf" and re.search("recv|Recv", base)):
            return ("buf_inout" if "replace" in base else "buf_out", none, flags)
        if n in ("buffer", "inoutbuf"):
            return ("buf_inout", none, flags)
        return ("opaque", none, flags)
    if t in ("int", "const int", "MPI_Count", "MPI_Fint"):
        if n in _PEERS:
            return ("peer", none, flags)
        if n == "root":
            return ("root", none, flags)
        if n in _TAGS:
            return ("tag", none, flags)
        if n in _COUNTS:
            return ("count", none, flags)
        return ("value", none, flags)
    if t in ("MPI_Aint", "MPI_Offset"):
        return ("aint", none, flags)
    if t == "int *":
        return ("int_out", none, flags)
    if t in ("MPI_Aint *", "MPI_Count *", "MPI_Offset *"):
        return ("aint_out", none, flags)
    if t in ("const int[]", "int[]"):
        out = t == "int[]" and not re.fullmatch(
            r"MPI_(Waitall|Startall|Type_hindexed|Type_struct|Group_range_\w+)", base)
        if base == "MPI_Dims_create":
            out = True
        return ("int_array_out" if out else "int_array", _length(fname, n), flags)
    if t == "int[][3]":
        return ("int_array", _length(fname, n), flags)
    if t in ("const MPI_Aint[]", "MPI_Aint[]", "const MPI_Count[]", "MPI_Count[]"):
        if base == "MPI_Type_get_contents":
            return ("aint_array_out", ("param", "max_addresses"), flags)
        return ("aint_array", _length(fname, n), flags)
    if t in ("const char *", "const char[]"):
        return ("string_in", none, flags)
    if t == "char *":
        return ("string_out", none, flags)
    return ("opaque", none, flags)


def special_lengths(fname, pname):
    """Type_get_contents' output arrays take their lengths from the max_ parameters."""
    if base_name(fname) == "MPI_Type_get_contents" and pname == "array_of_integers":
        return ("param", "max_integers")
    return None


def hooks(name):
    """(pre, post) C++ statements for the shim, or (None, None)."""
    base = base_name(name)
    for pattern, pre, post in HOOKS:
        if re.fullmatch(pattern, base):
            return (pre, post)
    coll = collective_kind(name)
    if coll and coll[0] in _COLL_LAYOUTS:
        layout = _COLL_LAYOUTS[coll[0]]
        pre, hashed = _contribution_hooks(name, coll[1])
        if coll[1] == "blocking":
            # One block needs no layout vector (an allocation per call).
            if layout.startswith("layout::whole(c, "):
                return (pre, f"{hashed}c.capture_whole({layout[len('layout::whole(c, '):]};")
            return (pre, f"{hashed}c.capture({layout});")
        persistent = "true" if coll[1] == "persistent" else "false"
        return (pre, f"{hashed}c.track_collective(*request, {layout}, {persistent});")
    return (None, None)


def _contribution_hooks(name, mode):
    """(pre statement or None, post statement prefix) hashing a collective's contribution: at
    the call (blocking, nonblocking: before it when in place, as the call overwrites that input),
    or kept with the request and hashed at each MPI_Start (persistent)."""
    contrib = contribution(name, "ctx")
    if not contrib:
        return (None, "")
    expr, in_place = contrib
    scope = "{ CallComms ctx{c}; "
    if mode == "persistent":
        return (None, f"{scope}c.track_contribution(*request, {expr}); }} ")
    if not in_place:
        return (None, f"{scope}c.contribute({expr}); }} ")
    return (f"if ({in_place} == MPI_IN_PLACE) {scope}c.contribute_before({expr}); }}",
            f"if ({in_place} != MPI_IN_PLACE) {scope}c.contribute({expr}); }} ")
