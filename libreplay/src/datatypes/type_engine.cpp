#include "type_engine.hpp"

#include <cstdio>
#include <cstring>
#include <string>

#include "array_types.hpp"
#include "external32.hpp"
#include "type_builders.hpp"

namespace encore::replay {
namespace {

// Handles are never reused; the last one keeps MPICH's datatype kind bits (0x8c......).
constexpr std::uint32_t kMaxHandles = 0x8fffffffu - 0x8c100000u;

std::string hex(MPI_Datatype t) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(t));
  return buf;
}

[[noreturn]] void reject(const std::string& what) { throw DatatypeError(what); }

void check_count(MPI_Count v, const char* what, const char* fn) {
  if (v < 0) reject(std::string(fn) + ": negative " + what + " " + std::to_string(v));
}

// Buffer addresses with MPI semantics: displacements may be negative and the buffer may be
// MPI_BOTTOM (null), so offsets are applied as integers, not pointer arithmetic.
std::byte* at(void* base, MPI_Aint off) {
  return reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(base) +
                                      static_cast<std::uintptr_t>(off));
}

std::vector<MPI_Aint> widen(const int* v, int n) { return {v, v + n}; }

}  // namespace

TypeEngine::TypeEngine() {
  for (const Predefined* p = predefined_begin(); p != predefined_end(); ++p) {
    Entry e;
    e.node = build_predefined(*p);
    e.predefined = true;
    table_.emplace(p->handle, std::move(e));
    committed_.insert(p->handle);
  }
}

const TypeEngine::CacheSlot& TypeEngine::lookup(MPI_Datatype type) const {
  CacheSlot& s = slot(type);
  if (s.entry && s.type == type) return s;
  const auto it = table_.find(type);
  if (it != table_.end()) {
    const TypeNode& n = *it->second.node;
    s.type = type;
    s.entry = &it->second;
    s.committed = committed_.count(type) != 0;
    s.single_block = n.single_block();
    s.contiguous = n.contiguous();
    s.size = n.bounds.size;
    s.block_disp = n.single_block() ? n.program[0].disp : 0;
    s.true_lb = n.bounds.true_lb;
    return s;
  }
  if (type == MPI_DATATYPE_NULL) reject("invalid datatype MPI_DATATYPE_NULL");
  if (static_cast<std::uint32_t>(type) - static_cast<std::uint32_t>(kFirstHandle) < next_)
    reject("datatype " + hex(type) + " was freed");
  reject("invalid datatype handle " + hex(type));
}

const TypeNode& TypeEngine::committed_node(MPI_Datatype type, const char* what) const {
  const CacheSlot& s = lookup(type);
  const TypeNode& n = *s.entry->node;
  if (!s.committed)
    reject(std::string(what) + ": datatype " + hex(type) + " has not been committed");
  return n;
}

bool TypeEngine::is_committed(MPI_Datatype type) const {
  entry(type);
  return committed_.count(type) != 0;
}

bool TypeEngine::is_predefined(MPI_Datatype type) const { return entry(type).predefined; }

MPI_Datatype TypeEngine::add(NewNode node, Contents contents, std::vector<NodePtr> children) {
  if (next_ >= kMaxHandles) reject("out of datatype handles");
  const auto handle = static_cast<MPI_Datatype>(static_cast<std::uint32_t>(kFirstHandle) + next_);
  ++next_;
  node->contents = std::move(contents);
  node->children = std::move(children);
  Entry e;
  e.node = std::move(node);
  table_.emplace(handle, std::move(e));
  return handle;
}

MPI_Datatype TypeEngine::add_simple(NewNode node, int combiner, std::vector<int> ints,
                                    std::vector<MPI_Aint> addrs, MPI_Datatype oldtype) {
  const Entry& old = entry(oldtype);
  Contents c{combiner, std::move(ints), std::move(addrs), {oldtype}};
  return add(std::move(node), std::move(c), {old.predefined ? nullptr : old.node});
}

// --- constructors

MPI_Datatype TypeEngine::contiguous(int count, MPI_Datatype oldtype) {
  check_count(count, "count", "MPI_Type_contiguous");
  const TypeNode& old = node(oldtype);
  return add_simple(build_contiguous(count, old), MPI_COMBINER_CONTIGUOUS, {count}, {}, oldtype);
}

MPI_Datatype TypeEngine::vector(int count, int blocklength, int stride, MPI_Datatype oldtype) {
  check_count(count, "count", "MPI_Type_vector");
  check_count(blocklength, "blocklength", "MPI_Type_vector");
  const TypeNode& old = node(oldtype);
  return add_simple(build_vector(count, blocklength, stride, false, old), MPI_COMBINER_VECTOR,
                    {count, blocklength, stride}, {}, oldtype);
}

MPI_Datatype TypeEngine::hvector(int count, int blocklength, MPI_Aint stride,
                                 MPI_Datatype oldtype) {
  check_count(count, "count", "MPI_Type_create_hvector");
  check_count(blocklength, "blocklength", "MPI_Type_create_hvector");
  const TypeNode& old = node(oldtype);
  return add_simple(build_vector(count, blocklength, stride, true, old), MPI_COMBINER_HVECTOR,
                    {count, blocklength}, {stride}, oldtype);
}

MPI_Datatype TypeEngine::indexed(int count, const int* blocklengths, const int* displacements,
                                 MPI_Datatype oldtype) {
  check_count(count, "count", "MPI_Type_indexed");
  for (int i = 0; i < count; ++i) check_count(blocklengths[i], "blocklength", "MPI_Type_indexed");
  const TypeNode& old = node(oldtype);
  const auto bls = widen(blocklengths, count), ds = widen(displacements, count);
  std::vector<int> ints{count};
  ints.insert(ints.end(), blocklengths, blocklengths + count);
  ints.insert(ints.end(), displacements, displacements + count);
  return add_simple(build_indexed(count, bls.data(), ds.data(), false, old), MPI_COMBINER_INDEXED,
                    std::move(ints), {}, oldtype);
}

MPI_Datatype TypeEngine::hindexed(int count, const int* blocklengths, const MPI_Aint* displacements,
                                  MPI_Datatype oldtype) {
  check_count(count, "count", "MPI_Type_create_hindexed");
  for (int i = 0; i < count; ++i)
    check_count(blocklengths[i], "blocklength", "MPI_Type_create_hindexed");
  const TypeNode& old = node(oldtype);
  const auto bls = widen(blocklengths, count);
  std::vector<int> ints{count};
  ints.insert(ints.end(), blocklengths, blocklengths + count);
  return add_simple(build_indexed(count, bls.data(), displacements, true, old),
                    MPI_COMBINER_HINDEXED, std::move(ints), {displacements, displacements + count},
                    oldtype);
}

MPI_Datatype TypeEngine::indexed_block(int count, int blocklength, const int* displacements,
                                       MPI_Datatype oldtype) {
  check_count(count, "count", "MPI_Type_create_indexed_block");
  check_count(blocklength, "blocklength", "MPI_Type_create_indexed_block");
  const TypeNode& old = node(oldtype);
  const auto ds = widen(displacements, count);
  std::vector<int> ints{count, blocklength};
  ints.insert(ints.end(), displacements, displacements + count);
  return add_simple(build_blockindexed(count, blocklength, ds.data(), false, old),
                    MPI_COMBINER_INDEXED_BLOCK, std::move(ints), {}, oldtype);
}

MPI_Datatype TypeEngine::hindexed_block(int count, int blocklength, const MPI_Aint* displacements,
                                        MPI_Datatype oldtype) {
  check_count(count, "count", "MPI_Type_create_hindexed_block");
  check_count(blocklength, "blocklength", "MPI_Type_create_hindexed_block");
  const TypeNode& old = node(oldtype);
  return add_simple(build_blockindexed(count, blocklength, displacements, true, old),
                    MPI_COMBINER_HINDEXED_BLOCK, {count, blocklength},
                    {displacements, displacements + count}, oldtype);
}

MPI_Datatype TypeEngine::create_struct(int count, const int* blocklengths,
                                       const MPI_Aint* displacements, const MPI_Datatype* types) {
  check_count(count, "count", "MPI_Type_create_struct");
  std::vector<const TypeNode*> olds;
  std::vector<NodePtr> children;
  for (int i = 0; i < count; ++i) {
    check_count(blocklengths[i], "blocklength", "MPI_Type_create_struct");
    const Entry& e = entry(types[i]);
    olds.push_back(e.node.get());
    children.push_back(e.predefined ? nullptr : e.node);
  }
  const auto bls = widen(blocklengths, count);
  std::vector<int> ints{count};
  ints.insert(ints.end(), blocklengths, blocklengths + count);
  Contents c{MPI_COMBINER_STRUCT,
             std::move(ints),
             {displacements, displacements + count},
             {types, types + count}};
  return add(build_struct(count, bls.data(), displacements, olds.data()), std::move(c),
             std::move(children));
}

MPI_Datatype TypeEngine::subarray(int ndims, const int* sizes, const int* subsizes,
                                  const int* starts, int order, MPI_Datatype oldtype) {
  const TypeNode& old = node(oldtype);
  NewNode n = build_subarray(ndims, sizes, subsizes, starts, order, old);
  std::vector<int> ints{ndims};
  for (const int* a : {sizes, subsizes, starts}) ints.insert(ints.end(), a, a + ndims);
  ints.push_back(order);
  return add_simple(std::move(n), MPI_COMBINER_SUBARRAY, std::move(ints), {}, oldtype);
}

MPI_Datatype TypeEngine::darray(int size, int rank, int ndims, const int* gsizes,
                                const int* distribs, const int* dargs, const int* psizes, int order,
                                MPI_Datatype oldtype) {
  const TypeNode& old = node(oldtype);
  NewNode n = build_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old);
  std::vector<int> ints{size, rank, ndims};
  for (const int* a : {gsizes, distribs, dargs, psizes}) ints.insert(ints.end(), a, a + ndims);
  ints.push_back(order);
  return add_simple(std::move(n), MPI_COMBINER_DARRAY, std::move(ints), {}, oldtype);
}

MPI_Datatype TypeEngine::resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent) {
  const TypeNode& old = node(oldtype);
  return add_simple(build_resized(old, lb, extent), MPI_COMBINER_RESIZED, {}, {lb, extent},
                    oldtype);
}

MPI_Datatype TypeEngine::dup(MPI_Datatype oldtype) {
  const TypeNode& old = node(oldtype);
  const bool committed = committed_.count(oldtype) != 0;
  const MPI_Datatype t = add_simple(build_dup(old), MPI_COMBINER_DUP, {}, {}, oldtype);
  if (committed) committed_.insert(t);
  return t;
}

void TypeEngine::commit(MPI_Datatype type) {
  entry(type);
  committed_.insert(type);
  forget(type);
}

void TypeEngine::free(MPI_Datatype& type) {
  if (entry(type).predefined) reject("cannot free predefined datatype " + hex(type));
  const auto it = table_.find(type);
  forget(type);
  if (--it->second.refs == 0) table_.erase(it);
  type = MPI_DATATYPE_NULL;
}

// --- queries

MPI_Count TypeEngine::size(MPI_Datatype type) const { return node(type).bounds.size; }

TypeEngine::Extent TypeEngine::extent(MPI_Datatype type) const {
  const Bounds& b = node(type).bounds;
  return {b.lb, b.extent()};
}

TypeEngine::Extent TypeEngine::true_extent(MPI_Datatype type) const {
  const Bounds& b = node(type).bounds;
  return {b.true_lb, b.true_ub - b.true_lb};
}

TypeEngine::Envelope TypeEngine::envelope(MPI_Datatype type) const {
  const Contents& c = node(type).contents;
  return {static_cast<int>(c.ints.size()), static_cast<int>(c.addrs.size()),
          static_cast<int>(c.types.size()), c.combiner};
}

Contents TypeEngine::contents(MPI_Datatype type) {
  const TypeNode& n = node(type);
  if (n.contents.combiner == MPI_COMBINER_NAMED)
    reject("MPI_Type_get_contents: datatype " + hex(type) + " is predefined");
  for (std::size_t i = 0; i < n.contents.types.size(); ++i) {
    if (!n.children[i]) continue;  // predefined
    auto [it, fresh] = table_.try_emplace(n.contents.types[i]);
    if (fresh)
      it->second.node = n.children[i];  // freed by the application: revived
    else
      ++it->second.refs;
  }
  return n.contents;
}

MPI_Count TypeEngine::get_elements(MPI_Datatype type, MPI_Count bytes) const {
  return count_elements(node(type).signature, bytes);
}

MPI_Count TypeEngine::get_count(MPI_Datatype type, MPI_Count bytes) const {
  const MPI_Count size = node(type).bounds.size;
  if (bytes < 0) reject("MPI_Get_count: negative byte count");
  if (size == 0) return 0;
  return bytes % size == 0 ? bytes / size : MPI_UNDEFINED;
}

std::vector<SignatureRun> TypeEngine::signature(MPI_Datatype type, std::size_t max_runs) const {
  std::vector<SignatureRun> runs;
  if (!signature_runs(node(type).signature, runs, max_runs)) runs.clear();
  return runs;
}

bool TypeEngine::is_contiguous(MPI_Datatype type, MPI_Count count) const {
  const TypeNode& n = node(type);
  return n.bounds.size == 0 || (count <= 1 ? n.single_block() : n.contiguous());
}

// --- data movement

MPI_Count TypeEngine::pack_size(MPI_Count count, MPI_Datatype type) const {
  check_count(count, "count", "MPI_Pack_size");
  return count * node(type).bounds.size;
}

// Copies `bytes` bytes (at most count elements) between the typed buffer at `base` and the
// packed buffer, in signature order.
MPI_Count TypeEngine::copy_blocks(const TypeNode& n, std::byte* base, MPI_Count count,
                                  std::byte* packed, MPI_Count bytes, bool to_packed) const {
  const MPI_Aint size = n.bounds.size, extent = n.bounds.extent();
  if (size == 0 || count == 0 || bytes == 0) return 0;
  if (n.contiguous() || (count == 1 && n.single_block())) {  // one memcpy
    std::byte* data = at(base, n.program[0].disp);
    if (to_packed)
      std::memcpy(packed, data, static_cast<std::size_t>(bytes));
    else
      std::memcpy(data, packed, static_cast<std::size_t>(bytes));
    return bytes;
  }
  // One loop per direction: the copy is then a plain move for the common block sizes.
  std::byte* cursor = packed;
  MPI_Aint budget = bytes;
  if (to_packed) {
    auto gather = [&](MPI_Aint off, MPI_Aint len) {
      std::memcpy(cursor, at(base, off), static_cast<std::size_t>(len));
      cursor += len;
    };
    for (MPI_Count i = 0; i < count && budget > 0; ++i)
      budget = for_each_block(n.program, i * extent, budget, gather);
  } else {
    auto scatter = [&](MPI_Aint off, MPI_Aint len) {
      std::memcpy(at(base, off), cursor, static_cast<std::size_t>(len));
      cursor += len;
    };
    for (MPI_Count i = 0; i < count && budget > 0; ++i)
      budget = for_each_block(n.program, i * extent, budget, scatter);
  }
  return bytes - budget;
}

MPI_Count TypeEngine::pack(const void* inbuf, MPI_Count count, MPI_Datatype type,
                           std::byte* out) const {
  check_count(count, "count", "MPI_Pack");
  const TypeNode& n = committed_node(type, "MPI_Pack");
  return copy_blocks(n, static_cast<std::byte*>(const_cast<void*>(inbuf)), count, out,
                     count * n.bounds.size, true);
}

MPI_Count TypeEngine::unpack(const std::byte* in, MPI_Count count, MPI_Datatype type,
                             void* outbuf) const {
  check_count(count, "count", "MPI_Unpack");
  const TypeNode& n = committed_node(type, "MPI_Unpack");
  return copy_blocks(n, static_cast<std::byte*>(outbuf), count, const_cast<std::byte*>(in),
                     count * n.bounds.size, false);
}

MPI_Count TypeEngine::unpack_bytes(const std::byte* in, MPI_Count bytes, MPI_Count count,
                                   MPI_Datatype type, void* outbuf) const {
  check_count(count, "count", "MPI_Unpack");
  check_count(bytes, "byte count", "MPI_Unpack");
  const TypeNode& n = committed_node(type, "MPI_Unpack");
  if (bytes > count * n.bounds.size)
    reject("message of " + std::to_string(bytes) + " bytes is longer than " +
           std::to_string(count) + " elements of datatype " + hex(type) + " (" +
           std::to_string(count * n.bounds.size) + " bytes)");
  return copy_blocks(n, static_cast<std::byte*>(outbuf), count, const_cast<std::byte*>(in), bytes,
                     false);
}

MPI_Count TypeEngine::pack_external_size(MPI_Count count, MPI_Datatype type) const {
  check_count(count, "count", "MPI_Pack_external_size");
  return count * external32_size(node(type).signature);
}

MPI_Count TypeEngine::pack_external(const void* inbuf, MPI_Count count, MPI_Datatype type,
                                    std::byte* out) const {
  check_count(count, "count", "MPI_Pack_external");
  const TypeNode& n = committed_node(type, "MPI_Pack_external");
  const MPI_Count ext = count * external32_size(n.signature);  // rejects unsupported types
  std::vector<std::byte> native(static_cast<std::size_t>(count * n.bounds.size));
  pack(inbuf, count, type, native.data());
  native_to_external32(n.signature, count, native.data(), out);
  return ext;
}

MPI_Count TypeEngine::unpack_external(const std::byte* in, MPI_Count count, MPI_Datatype type,
                                      void* outbuf) const {
  check_count(count, "count", "MPI_Unpack_external");
  const TypeNode& n = committed_node(type, "MPI_Unpack_external");
  const MPI_Count ext = count * external32_size(n.signature);
  std::vector<std::byte> native(static_cast<std::size_t>(count * n.bounds.size));
  external32_to_native(n.signature, count, in, native.data());
  unpack(native.data(), count, type, outbuf);
  return ext;
}

}  // namespace encore::replay
