// ZB-H1 (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", handcrafted schedule 1). Same warm-up and the same
// at-most-p in-flight micro-batches as 1F1B, but B and W are separate and rank r runs each W r steps late:
//   warm-up  F(0..w-1), w = min(p-1-r, B)
//   steady   F(w+i), B(i), W(i-r)      (W only when i >= r)
//   cooldown B(i), W(i-r)
//   tail     the last min(r, B) Ws
// Downstream ranks run B sooner than in 1F1B (a B waits only for the next stage's B, never its W) and the r
// deferred Ws fill the drain bubble, so with free communication the idle time of every rank is
// (p-1)(F+B-W) instead of 1F1B's (p-1)(F+B+W). Checked by the simulator's tests.
#include <algorithm>

#include "cost_model/schedule/generators.hpp"

namespace zeropp::schedule::detail {

Program generate_zb_h1(const ScheduleConfig& cfg) {
  const int p = cfg.pp;
  const int n = cfg.microbatches;
  Program program = empty_program(cfg);
  for (int r = 0; r < p; ++r) {
    if (!wanted(cfg, r)) continue;
    RankProgram& out = program.ranks[r];
    out.reserve(static_cast<std::size_t>(n) * 4);
    Emitter emit(out, cfg);
    const int lag = r;
    const auto backward = [&](int i) {
      emit.backward_input(r, i);
      if (i >= lag) emit.backward_weight(r, i - lag);
    };
    const int warmup = std::min(p - 1 - r, n);
    for (int m = 0; m < warmup; ++m) emit.forward(r, m);
    for (int i = 0; i < n - warmup; ++i) {
      emit.forward(r, warmup + i);
      backward(i);
    }
    for (int i = n - warmup; i < n; ++i) backward(i);
    for (int m = std::max(0, n - lag); m < n; ++m) emit.backward_weight(r, m);
  }
  return program;
}

}  // namespace zeropp::schedule::detail
