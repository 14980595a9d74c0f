// LogGPS parameters (Alexandrov et al.; the PerWiz seed's Table 5 lists how each is measured):
// L latency, o CPU overhead per message, g gap between message injections, G time per byte,
// S the size above which a send waits for its receive (rendezvous). Times in ns. Our addition:
// gamma, the CPU time per byte a reduction (Reduce, Allreduce, Scan...) spends combining what it
// received, which no message parameter holds; and gamma_nonblocking, the same for the
// nonblocking reductions (Iallreduce...), which MPICH runs through its schedule engine with
// buffers and loops of their own (collectives example, plain runs: an 8 MB Iallreduce implied
// 0.94 ns/B where the Allreduce implied 1.34).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace encore::predict {

// A non-negative time in ns rounded to the nearest: adding 0.5 and truncating, as llround
// does for x >= 0 (apart from x a hair below n + 0.5), without its libm call, which cost the
// loggps engine 4 % of its instructions per event (bench_predict_speed under callgrind).
inline std::int64_t round_ns(double x) {
  return static_cast<std::int64_t>(x + 0.5);  // NOLINT(bugprone-incorrect-roundings): x >= 0
}

// G for messages of at least `from` bytes (LogGPS with a piecewise G: MPICH's large-message
// shared-memory path moves bytes at another rate than its eager path).
struct SizeClassG {
  std::uint64_t from = 0;
  double G = 0;  // ns per byte
};

struct LogGPSParams {
  double L = 150;                           // ns
  double o = 150;                           // ns
  double g = 0;                             // ns
  double G = 0.1;                           // ns per byte
  std::uint64_t S = 65536;                  // bytes: messages larger than S use rendezvous
  double gamma = 0;                         // ns per byte combined by a reduction
  std::optional<double> gamma_nonblocking;  // ns per byte, nonblocking reductions; unset: gamma
  // ns per byte, the blocking reductions of one kind ("reduce", "allreduce", "reduce_scatter",
  // "scan"; collectives.hpp's to_string): MPICH runs each by its own algorithm with its own
  // buffers, and the example's Reduce (int64 sum into a fresh buffer) combined at about twice
  // its Allreduce's rate. A kind not named takes gamma.
  std::map<std::string, double, std::less<>> gamma_by_kind;
  std::vector<SizeClassG> G_classes;  // ascending `from`; below the first, G
  std::string source = "defaults";    // "defaults", "fit from TRACE", or the file read

  // G for a message of `bytes`: the last class starting at or below it, else G.
  double G_for(std::uint64_t bytes) const {
    double per_byte = G;
    for (const SizeClassG& c : G_classes) {
      if (c.from > bytes) break;
      per_byte = c.G;
    }
    return per_byte;
  }
  // Time to push `bytes` into the network after the overhead: (bytes - 1) * G, 0 for empty.
  // Rounded to ns (all values are non-negative).
  std::int64_t transfer_ns(std::uint64_t bytes) const {
    return bytes == 0 ? 0 : round_ns(static_cast<double>(bytes - 1) * G_for(bytes));
  }
  // Time to combine `bytes` received into a reduction's buffer (a nonblocking reduction's
  // at gamma_nonblocking where it was fitted or given).
  double gamma_for(bool nonblocking) const {
    return nonblocking && gamma_nonblocking ? *gamma_nonblocking : gamma;
  }
  // The gamma of a reduction of kind `kind` (a CollKind's name): gamma_nonblocking for a
  // nonblocking one where set, else the kind's own where fitted or given, else gamma.
  double gamma_for(std::string_view kind, bool nonblocking) const {
    if (nonblocking && gamma_nonblocking) return *gamma_nonblocking;
    const auto it = gamma_by_kind.find(kind);
    return it == gamma_by_kind.end() ? gamma : it->second;
  }
  std::int64_t reduce_ns(std::uint64_t bytes, bool nonblocking = false) const {
    return round_ns(static_cast<double>(bytes) * gamma_for(nonblocking));
  }
  std::int64_t overhead_ns() const { return round_ns(o); }
  std::int64_t latency_ns() const { return round_ns(L); }
  bool rendezvous(std::uint64_t bytes) const { return bytes > S; }
};

nlohmann::json to_json(const LogGPSParams& p);
// {"L": ns, "o": ns, "g": ns, "G": ns per byte, "S": bytes, "gamma": ns per byte,
// "gamma_nonblocking": ns per byte (written only when set), "gamma_by_kind": {"reduce": ns
// per byte, ...} (written only when set; the keys reduce, allreduce, reduce_scatter, scan),
// "G_classes":
// [{"from": bytes, "G": ns per byte}...]}; missing keys keep their defaults. Throws Error naming
// `source` and the key on a bad value.
LogGPSParams params_from_json(const nlohmann::json& j, const std::string& source);
LogGPSParams load_params(const std::filesystem::path& file);

}  // namespace encore::predict
