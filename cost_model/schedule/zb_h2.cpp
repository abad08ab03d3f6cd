// ZB-H2 (Qi et al. 2024, handcrafted schedule 2): more warm-up forwards (at most 2p-1 micro-batches in flight on
// rank 0) so that no rank waits in the steady phase, and rank r runs each W 2r steps late:
//   warm-up  F(0..w-1), w = min(2(p-1-r)+1, B)
//   steady   B(i), W(i-2r), F(w+i)     (W only when i >= 2r)
//   cooldown B(i), W(i-2r)
//   tail     the last min(2r, B) Ws
// The warm-up of rank r ends exactly when its first B can start (F chain r+m, B chain back from the last rank),
// and the 2r deferred Ws fill the drain. With free communication and B >= 2p-1 micro-batches, rank 0 idles
// (p-1)(F+B-2W) between its first and last action; the makespan exceeds the per-rank work by
// (p-1)·max(F, F+B-2W), since the last rank cannot start before (p-1)F.
// With fewer than 2p-1 micro-batches the extra warm-up cannot be filled: rank 0 would hold all B forwards and
// wait for the whole pipeline's backward, slower than ZB-H1 (p 8, B 8, unit costs: 34 vs 31). ZB-H2 then falls
// back to ZB-H1's program, so it is never slower than ZB-H1 for the same plan.
#include <algorithm>

#include "cost_model/schedule/generators.hpp"

namespace zeropp::schedule::detail {

Program generate_zb_h2(const ScheduleConfig& cfg) {
  const int p = cfg.pp;
  const int n = cfg.microbatches;
  if (n < 2 * p - 1) return generate_zb_h1(cfg);
  Program program = empty_program(cfg);
  for (int r = 0; r < p; ++r) {
    if (!wanted(cfg, r)) continue;
    RankProgram& out = program.ranks[r];
    out.reserve(static_cast<std::size_t>(n) * 4);
    Emitter emit(out, cfg);
    const int lag = 2 * r;
    const auto backward = [&](int i) {
      emit.backward_input(r, i);
      if (i >= lag) emit.backward_weight(r, i - lag);
    };
    const int warmup = std::min(2 * (p - 1 - r) + 1, n);
    for (int m = 0; m < warmup; ++m) emit.forward(r, m);
    for (int i = 0; i < n - warmup; ++i) {
      backward(i);
      emit.forward(r, warmup + i);
    }
    for (int i = n - warmup; i < n; ++i) backward(i);
    for (int m = std::max(0, n - lag); m < n; ++m) emit.backward_weight(r, m);
  }
  return program;
}

}  // namespace zeropp::schedule::detail
