// Megatron-LM's interleaved 1F1B (Narayanan et al. 2021; megatron/core/pipeline_parallel/schedules.py). The
// micro-batches are taken in groups of p; inside a group every micro-batch runs through chunk 0, then chunk 1,
// ... . Forward step k of rank r runs entry k of that table; backward step k runs the same entry with the
// chunk mirrored (v-1-c). Rank r runs
//   warm-up = min(2(p-1-r) + (v-1)p, v*B)
// forwards, then pairs of one forward and one backward, then the remaining backwards. Peak in-flight chunk
// micro-batches: warm-up + 1 = (v-1)p + 2(p-1-r) + 1 (DESIGN.md section 4).
//
// B not a multiple of p: the schedule is generated for B rounded up to a multiple of p and the actions of the
// padding micro-batches are dropped. Dropping every action of a micro-batch keeps a deadlock-free order
// deadlock-free (dependencies never cross micro-batches, so the old execution order restricted to the kept
// actions is still an execution). Megatron's own ragged form, a short last group with the same warm-up,
// deadlocks for some shapes (e.g. p=4, v=3, B=5: rank 0 waits in F(8,4) for rank 3, which waits in B(7,0) for
// rank 0's B(8,0) that comes after that F), so it is not used.
#include <algorithm>
#include <utility>
#include <vector>

#include "cost_model/schedule/generators.hpp"

namespace zeropp::schedule::detail {
namespace {

// (chunk, micro-batch) of every forward step, in order, for n a multiple of p.
std::vector<std::pair<int, int>> schedule_table(int p, int v, int n) {
  std::vector<std::pair<int, int>> table;
  table.reserve(static_cast<std::size_t>(v) * n);
  for (int first = 0; first < n; first += p) {
    for (int c = 0; c < v; ++c) {
      for (int m = first; m < first + p; ++m) table.emplace_back(c, m);
    }
  }
  return table;
}

}  // namespace

Program generate_interleaved(const ScheduleConfig& cfg) {
  const int p = cfg.pp;
  const int v = cfg.v;
  const int n = cfg.microbatches;
  const int padded = (n + p - 1) / p * p;
  const int total = v * padded;
  const auto table = schedule_table(p, v, padded);
  Program program = empty_program(cfg);
  for (int r = 0; r < p; ++r) {
    if (!wanted(cfg, r)) continue;
    RankProgram& out = program.ranks[r];
    out.reserve(static_cast<std::size_t>(v) * n * 4);
    Emitter emit(out, cfg);
    const auto fwd = [&](int k) {
      if (table[k].second < n) emit.forward(table[k].first * p + r, table[k].second);
    };
    const auto bwd = [&](int k) {
      if (table[k].second < n) emit.backward((v - 1 - table[k].first) * p + r, table[k].second);
    };
    const int warmup = std::min(2 * (p - 1 - r) + (v - 1) * p, total);
    for (int k = 0; k < warmup; ++k) fwd(k);
    for (int i = 0; i < total - warmup; ++i) {
      fwd(warmup + i);
      bwd(i);
    }
    for (int i = total - warmup; i < total; ++i) bwd(i);
  }
  return program;
}

}  // namespace zeropp::schedule::detail
