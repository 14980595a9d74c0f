// The ranks whose received data a capture records (ENCORE_PAYLOAD_RANKS, --payload-ranks):
// "all", "none", or ranks and ranges such as "0,2-5". One parser for libdump, which records
// by it, the tools, which check it before a run, and libreplay, which refuses a rank the
// trace holds no received data of.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace encore {

class RankList {
 public:
  // Empty: the text is valid (and `out` holds it); else why not, in a few words.
  static std::string parse(std::string_view text, RankList& out);
  bool contains(long long rank) const noexcept;

 private:
  bool all_ = true;
  std::vector<std::pair<long long, long long>> ranges_;  // inclusive, 0 <= lo <= hi
};

}  // namespace encore
