// Looped breadth-first (Lamy-Poirier, "Breadth-First Pipeline Parallelism"): rank r runs all B micro-batches
// through its chunk 0 (virtual stage r), then through chunk 1 (stage p + r), ...; then the backwards in reverse:
// chunk v-1 first, micro-batches from last to first (as torch.distributed.pipelining's ScheduleLoopedBFS).
// Every rank holds all v*B chunk activations at its peak, like GPipe.
#include "cost_model/schedule/generators.hpp"

namespace zeropp::schedule::detail {

Program generate_bfs(const ScheduleConfig& cfg) {
  const int p = cfg.pp;
  const int n = cfg.microbatches;
  Program program = empty_program(cfg);
  for (int r = 0; r < p; ++r) {
    if (!wanted(cfg, r)) continue;
    RankProgram& out = program.ranks[r];
    out.reserve(static_cast<std::size_t>(cfg.v) * n * 4);
    Emitter emit(out, cfg);
    for (int c = 0; c < cfg.v; ++c) {
      for (int m = 0; m < n; ++m) emit.forward(c * p + r, m);
    }
    for (int c = cfg.v - 1; c >= 0; --c) {
      for (int m = n - 1; m >= 0; --m) emit.backward(c * p + r, m);
    }
  }
  return program;
}

}  // namespace zeropp::schedule::detail
