#include "encore/rank_list.hpp"

#include <charconv>
#include <limits>

namespace encore {

namespace {

bool parse_rank(std::string_view text, long long& out) {
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && at == end && out >= 0 && out <= std::numeric_limits<int>::max();
}

}  // namespace

std::string RankList::parse(std::string_view text, RankList& out) {
  out = RankList{};
  if (text == "all") return {};
  out.all_ = false;
  if (text == "none") return {};
  while (true) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const auto dash = item.find('-');
    long long lo = 0;
    long long hi = 0;
    const bool ok = dash == std::string_view::npos ? parse_rank(item, lo) && (hi = lo, true)
                                                   : parse_rank(item.substr(0, dash), lo) &&
                                                         parse_rank(item.substr(dash + 1), hi);
    if (!ok)
      return "\"" + std::string(item) +
             "\" is not a rank (0 to 2147483647) or a range of them; expected all, none or a "
             "list such as 0,2-5";
    if (lo > hi) return "range " + std::string(item) + " ends before it starts";
    out.ranges_.emplace_back(lo, hi);
    if (comma == std::string_view::npos) return {};
    text.remove_prefix(comma + 1);
  }
}

bool RankList::contains(long long rank) const noexcept {
  if (all_) return true;
  for (const auto& [lo, hi] : ranges_)
    if (rank >= lo && rank <= hi) return true;
  return false;
}

}  // namespace encore
