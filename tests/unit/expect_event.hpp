// GoogleTest checks that two decoded events hold the same values, field by field: every field
// of the Event, every argument of its function (the first params.size() entries of args) and
// every element of its lists and extras.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "encore/event.hpp"

namespace encore {

inline void expect_same_arg(const ArgValue& x, const ArgValue& y) {
  EXPECT_EQ(x.present, y.present);
  EXPECT_EQ(x.scalar, y.scalar);
  EXPECT_EQ(x.real, y.real);
  EXPECT_EQ(x.flags, y.flags);
  EXPECT_EQ(x.list, y.list);
  EXPECT_EQ(x.remote, y.remote);
  EXPECT_EQ(x.text, y.text);
  ASSERT_EQ(x.requests.size(), y.requests.size());
  for (std::size_t k = 0; k < x.requests.size(); ++k) {
    EXPECT_EQ(x.requests[k].null, y.requests[k].null) << "request " << k;
    EXPECT_EQ(x.requests[k].thread, y.requests[k].thread) << "request " << k;
    EXPECT_EQ(x.requests[k].event, y.requests[k].event) << "request " << k;
  }
  ASSERT_EQ(x.statuses.size(), y.statuses.size());
  for (std::size_t k = 0; k < x.statuses.size(); ++k) {
    EXPECT_EQ(x.statuses[k].bits, y.statuses[k].bits) << "status " << k;
    EXPECT_EQ(x.statuses[k].source, y.statuses[k].source) << "status " << k;
    EXPECT_EQ(x.statuses[k].tag, y.statuses[k].tag) << "status " << k;
    EXPECT_EQ(x.statuses[k].bytes, y.statuses[k].bytes) << "status " << k;
    EXPECT_EQ(x.statuses[k].error, y.statuses[k].error) << "status " << k;
  }
}

// What a hand-built reference event cannot hold as the reader gives it back: a writer fills in
// the uncorrected start and the payload offsets, and does not encode the outputs of a failed
// call or any argument of an opaque (unmodelled) function.
struct BuiltReference {
  bool value = false;
};

// `a` is the reference (its function names the arguments to compare), `b` the event checked.
// With `built`, `a` was built by hand and written: the fields above are not compared.
inline void expect_same_event(const Event& a, const Event& b, BuiltReference built = {}) {
  ASSERT_EQ(a.function, b.function) << "event " << a.index;
  const FunctionInfo& f = a.info();
  SCOPED_TRACE(std::string(f.name) + " #" + std::to_string(a.index));
  EXPECT_EQ(a.thread, b.thread);
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.overhead_ns, b.overhead_ns);
  if (!built.value) {
    EXPECT_EQ(a.raw_start_ns, b.raw_start_ns);
  }
  EXPECT_EQ(a.rc, b.rc);
  if (!built.value || f.modelled) {
    ASSERT_GE(a.args.size(), f.params.size());
    ASSERT_GE(b.args.size(), f.params.size());
    for (std::size_t i = 0; i < f.params.size(); ++i) {
      if (built.value && a.rc != 0 && is_output(f.params[i].role)) continue;
      SCOPED_TRACE(f.params[i].name);
      expect_same_arg(a.args[i], b.args[i]);
    }
  }
  ASSERT_EQ(a.payloads.size(), b.payloads.size());
  for (std::size_t k = 0; k < a.payloads.size(); ++k) {
    EXPECT_EQ(a.payloads[k].slot, b.payloads[k].slot);
    EXPECT_EQ(a.payloads[k].datatype, b.payloads[k].datatype);
    EXPECT_EQ(a.payloads[k].count, b.payloads[k].count);
    EXPECT_EQ(a.payloads[k].bytes, b.payloads[k].bytes);
    if (!built.value) {
      EXPECT_EQ(a.payloads[k].offset, b.payloads[k].offset);
    }
  }
  ASSERT_EQ(a.send_hashes.size(), b.send_hashes.size());
  for (std::size_t k = 0; k < a.send_hashes.size(); ++k) {
    EXPECT_EQ(a.send_hashes[k].hash, b.send_hashes[k].hash);
    EXPECT_EQ(a.send_hashes[k].bytes, b.send_hashes[k].bytes);
  }
  ASSERT_EQ(a.contribution_hashes.size(), b.contribution_hashes.size());
  for (std::size_t k = 0; k < a.contribution_hashes.size(); ++k) {
    EXPECT_EQ(a.contribution_hashes[k].hash, b.contribution_hashes[k].hash);
    EXPECT_EQ(a.contribution_hashes[k].bytes, b.contribution_hashes[k].bytes);
  }
  ASSERT_EQ(a.signatures.size(), b.signatures.size());
  for (std::size_t k = 0; k < a.signatures.size(); ++k) {
    EXPECT_EQ(a.signatures[k].datatype, b.signatures[k].datatype);
    EXPECT_EQ(a.signatures[k].size, b.signatures[k].size);
    EXPECT_EQ(a.signatures[k].runs, b.signatures[k].runs);
  }
  EXPECT_EQ(a.callsite, b.callsite);
  EXPECT_EQ(a.counters, b.counters);
  EXPECT_EQ(a.stall_ns, b.stall_ns);
  EXPECT_EQ(a.first_read_ns, b.first_read_ns);
  EXPECT_EQ(a.attribute, b.attribute);
  ASSERT_EQ(a.neighbours.has_value(), b.neighbours.has_value());
  if (a.neighbours) {
    EXPECT_EQ(a.neighbours->weighted, b.neighbours->weighted);
    EXPECT_EQ(a.neighbours->sources, b.neighbours->sources);
    EXPECT_EQ(a.neighbours->source_weights, b.neighbours->source_weights);
    EXPECT_EQ(a.neighbours->destinations, b.neighbours->destinations);
    EXPECT_EQ(a.neighbours->dest_weights, b.neighbours->dest_weights);
  }
}

}  // namespace encore
