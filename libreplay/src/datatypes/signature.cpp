#include "signature.hpp"

#include "datatype_error.hpp"
#include "predefined.hpp"

namespace encore::replay {
namespace {

std::uint64_t unit_bytes(const SigItem& it) {
  return it.sub ? it.sub->bytes : static_cast<std::uint64_t>(find_predefined(it.basic)->size);
}
std::uint64_t unit_elements(const SigItem& it) { return it.sub ? it.sub->elements : 1; }

void push_run(std::vector<SignatureRun>& out, std::uint32_t size, std::uint64_t repeat) {
  if (repeat == 0) return;
  if (!out.empty() && out.back().elem_size == size)
    out.back().repeat += repeat;
  else
    out.push_back({size, repeat});
}

// Appends the runs of `times` passes over `s`. A pass is expanded once; repeating it only
// multiplies when the pass is a single run (a vector of doubles stays one run).
bool runs_of(const SigNode& s, std::uint64_t times, std::vector<SignatureRun>& out,
             std::size_t max_runs) {
  std::vector<SignatureRun> pass;
  for (const SigItem& it : s.items) {
    if (it.sub) {
      if (!runs_of(*it.sub, it.repeat, pass, max_runs)) return false;
    } else {
      const Predefined* p = find_predefined(it.basic);
      const auto size = static_cast<std::uint32_t>(p->size);
      const bool halves = p->ext32 == Ext32::swap_halves || p->ext32 == Ext32::long_double_cx;
      if (halves)
        push_run(pass, size / 2, it.repeat * 2);
      else
        push_run(pass, size, it.repeat);
    }
    if (pass.size() > max_runs) return false;
  }
  if (pass.size() == 1) {
    push_run(out, pass[0].elem_size, pass[0].repeat * times);
  } else {
    for (std::uint64_t t = 0; t < times; ++t) {
      for (const SignatureRun& r : pass) push_run(out, r.elem_size, r.repeat);
      if (out.size() > max_runs) return false;
    }
  }
  return out.size() <= max_runs;
}

}  // namespace

Signature predefined_signature(MPI_Datatype predefined) {
  const Predefined* p = find_predefined(predefined);
  if (!p || p->size == 0) return nullptr;
  SignatureBuilder b;
  for (MPI_Datatype part : p->parts) {
    if (part == MPI_DATATYPE_NULL) continue;
    auto node = std::make_shared<SigNode>();
    node->items.push_back({part, nullptr, 1});
    node->bytes = static_cast<std::uint64_t>(find_predefined(part)->size);
    node->elements = 1;
    b.add(node, 1);
  }
  return b.build();
}

void SignatureBuilder::add_item(const SigItem& item) {
  if (item.repeat == 0) return;
  if (!items_.empty() && items_.back().basic == item.basic && items_.back().sub == item.sub) {
    items_.back().repeat += item.repeat;
    return;
  }
  items_.push_back(item);
}

void SignatureBuilder::add(const Signature& s, std::uint64_t times) {
  if (!s || times == 0) return;
  if (s->items.size() == 1) {
    SigItem it = s->items[0];
    it.repeat *= times;
    add_item(it);
  } else {
    add_item({MPI_DATATYPE_NULL, s, times});
  }
}

Signature SignatureBuilder::build() {
  if (items_.empty()) return nullptr;
  auto node = std::make_shared<SigNode>();
  for (const SigItem& it : items_) {
    node->bytes += unit_bytes(it) * it.repeat;
    node->elements += unit_elements(it) * it.repeat;
  }
  node->items = std::move(items_);
  items_.clear();
  return node;
}

Signature repeat_signature(const Signature& s, std::uint64_t times) {
  SignatureBuilder b;
  b.add(s, times);
  return b.build();
}

MPI_Count count_elements(const Signature& s, MPI_Count bytes) {
  if (bytes < 0) throw DatatypeError("negative byte count");
  if (!s) return bytes == 0 ? 0 : MPI_UNDEFINED;
  auto rem = static_cast<std::uint64_t>(bytes);
  std::uint64_t elements = (rem / s->bytes) * s->elements;
  rem %= s->bytes;
  const SigNode* node = s.get();
  while (rem > 0) {
    const SigNode* next = nullptr;
    for (const SigItem& it : node->items) {
      const std::uint64_t ub = unit_bytes(it), total = ub * it.repeat;
      if (rem >= total) {
        rem -= total;
        elements += unit_elements(it) * it.repeat;
        continue;
      }
      elements += (rem / ub) * unit_elements(it);
      rem %= ub;
      if (rem == 0) break;
      if (!it.sub) return MPI_UNDEFINED;  // ends inside a basic element
      next = it.sub.get();
      break;
    }
    if (!next) break;
    node = next;
  }
  return static_cast<MPI_Count>(elements);
}

bool signature_runs(const Signature& s, std::vector<SignatureRun>& out, std::size_t max_runs) {
  out.clear();
  return !s || runs_of(*s, 1, out, max_runs);
}

}  // namespace encore::replay
