// 1F1B (PipeDream-Flush / Megatron's non-interleaved schedule). Rank r runs w = min(p-1-r, B) warm-up forwards,
// then B-w steady pairs of one forward and one backward, then the w remaining backwards. At most p-r
// micro-batches are in flight on rank r. With a split backward each B is followed by its W at once, so the
// bubble is (p-1)(F+B+W) as in the fused schedule.
#include <algorithm>

#include "cost_model/schedule/generators.hpp"

namespace zeropp::schedule::detail {

Program generate_one_f_one_b(const ScheduleConfig& cfg) {
  const int p = cfg.pp;
  const int n = cfg.microbatches;
  Program program = empty_program(cfg);
  for (int r = 0; r < p; ++r) {
    if (!wanted(cfg, r)) continue;
    RankProgram& out = program.ranks[r];
    out.reserve(static_cast<std::size_t>(n) * 4);
    Emitter emit(out, cfg);
    const int warmup = std::min(p - 1 - r, n);
    for (int m = 0; m < warmup; ++m) emit.forward(r, m);
    for (int i = 0; i < n - warmup; ++i) {
      emit.forward(r, warmup + i);
      emit.backward(r, i);
    }
    for (int i = n - warmup; i < n; ++i) emit.backward(r, i);
  }
  return program;
}

}  // namespace zeropp::schedule::detail
