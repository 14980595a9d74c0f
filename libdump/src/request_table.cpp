#include "request_table.hpp"

namespace encore::dump {

RequestTable::Entry& RequestTable::entry(MPI_Request r) noexcept {
  // Fibonacci hashing: MPICH's handle values differ in their low bits (the object's index).
  const std::size_t mask = index_.size() - 1;
  std::size_t i = (static_cast<std::uint32_t>(r) * 0x9E3779B1u) >> shift_;
  while (index_[i].used && index_[i].handle != r) i = (i + 1) & mask;
  return index_[i];
}

void RequestTable::grow() {
  std::vector<Entry> old(index_.size() * 2);
  old.swap(index_);
  --shift_;
  for (const Entry& e : old) {
    if (!e.used) continue;
    Entry& moved = entry(e.handle);
    moved = e;
    for (Node* n = moved.oldest; n; n = n->next) n->home = &moved;
  }
}

RequestInfo& RequestTable::add(MPI_Request r) {
  Entry* e = &entry(r);
  if (!e->used) {
    if (2 * (used_ + 1) > index_.size()) {
      grow();
      e = &entry(r);
    }
    *e = {r, true, nullptr, nullptr};
    ++used_;
  }
  Node* n;
  if (free_) {
    n = free_;
    free_ = n->next;
    // A recycled node starts as a new one, every field of it (its layout keeps its capacity).
    RecvLayout layout = std::move(n->layout);
    layout.clear();
    static_cast<RequestInfo&>(*n) = RequestInfo{};
    n->layout = std::move(layout);
  } else {
    n = &nodes_.emplace_back();
  }
  n->home = e;
  n->live = true;
  n->claimed = 0;
  n->next = nullptr;
  n->prev = e->newest;
  if (e->newest)
    e->newest->next = n;
  else
    e->oldest = n;
  e->newest = n;
  return *n;
}

RequestInfo* RequestTable::newest(MPI_Request r) { return entry(r).newest; }

RequestInfo* RequestTable::find(RequestSlot slot) {
  if (slot.handle == MPI_REQUEST_NULL) return nullptr;
  Node* n = entry(slot.handle).oldest;
  for (std::size_t k = slot.occurrence; n && k; --k) n = n->next;
  return n;
}

void RequestTable::resolve(const MPI_Request* r, std::size_t n, RequestInfo** out) {
  // Each appearance takes the oldest request of its value that no earlier appearance in this
  // array took: nodes remember the pass that claimed them.
  const std::uint64_t stamp = ++stamp_;
  for (std::size_t i = 0; i < n; ++i) {
    Node* node = nullptr;
    if (r[i] != MPI_REQUEST_NULL) {
      node = entry(r[i]).oldest;
      while (node && node->claimed == stamp) node = node->next;
      if (node) node->claimed = stamp;
    }
    out[i] = node;
  }
}

void RequestTable::retire(RequestInfo* info) noexcept {
  Node* n = static_cast<Node*>(info);
  if (!n || !n->live) return;
  n->live = false;
  if (n->prev)
    n->prev->next = n->next;
  else
    n->home->oldest = n->next;
  if (n->next)
    n->next->prev = n->prev;
  else
    n->home->newest = n->prev;
  n->next = free_;
  free_ = n;
}

void RequestTable::retire(std::span<const RequestSlot> done) {
  std::vector<RequestInfo*> found;
  found.reserve(done.size());
  for (const RequestSlot& s : done) found.push_back(find(s));
  for (RequestInfo* info : found) retire(info);
}

}  // namespace encore::dump
