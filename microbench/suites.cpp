#include "microbench/suites.hpp"

#include <algorithm>
#include <cmath>

namespace zeropp::microbench {

std::vector<std::size_t> collective_sizes(const Options& options) {
  std::vector<std::size_t> sizes;
  for (std::size_t s = options.coll_min_bytes; s <= options.coll_max_bytes; s *= options.coll_step) {
    sizes.push_back(s);
  }
  return sizes;
}

// About 20 ms of work per timed iteration at ~50 GFLOP/s (a CPU core); a GPU simply runs more per iteration.
int inner_repeats_for_flop(double flop) {
  return static_cast<int>(std::clamp(std::ceil(1e9 / flop), 1.0, 1000.0));
}

// About 16 MiB moved per timed iteration, at most 200 operations.
int inner_repeats_for_bytes(double bytes) {
  return static_cast<int>(std::clamp(std::ceil(16.0 * (1 << 20) / bytes), 1.0, 200.0));
}

}  // namespace zeropp::microbench
