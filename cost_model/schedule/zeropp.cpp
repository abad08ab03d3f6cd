// The ZeroPP schedule as the authors' implementation runs it (DESIGN.md section 5). Rank r of p, v chunks per
// rank (chunk c of rank r is virtual stage c*p + r), B micro-batches cut into units of U (the last unit holds
// the rest). Per unit of u micro-batches (n = u*v steps each way):
//   forward step k  -> chunk floor(k/u),       micro-batch unit_start + k mod u
//   backward step k -> chunk v-1-floor(k/u),   micro-batch unit_start + k mod u
//   warm-up = min(2(p-1-r) + (v-1)u, n) forwards, then n - warm-up pairs (F, B), then the remaining Bs.
// W deferral (per-rank LIFO stack), in the steady phase only (the authors' _run_1f1b_loop_with_overlap): after a
// last-chunk B (k < u) its W runs at once only when k > 2r; at k = u-1 up to 2(p-1-r) more Ws are popped; after
// any other chunk's B the W runs at once. In the cool-down (the Bs left after the last F) every B is followed by
// one W popped from the stack, i.e. its own (the authors' cool-down loop pops after every B). What is left on the
// stack runs at the end of the unit, filling the drain bubble. Units run one after another through the same
// program. Recompute: every chunk but the last chunk of the last rank, whose B follows its F at once.
//
// With this order the steady pairs always work on the last chunk (both F and B), so the chunks a rank touches
// in a unit run 0, 1, ..., v-1 (forwards) then v-1, ..., 0 (backwards): 2v-1 chunk activations, which is what
// lower()'s per-unit gather cache counts on.
#include <algorithm>
#include <vector>

#include "cost_model/schedule/generators.hpp"

namespace zeropp::schedule::detail {

Program generate_zeropp(const ScheduleConfig& cfg) {
  const int p = cfg.pp;
  const int v = cfg.v;
  const int total = cfg.microbatches;
  const int unit = cfg.unit == 0 ? total : cfg.unit;
  Program program = empty_program(cfg);
  std::vector<Action> stack;  // deferred Ws, LIFO
  for (int r = 0; r < p; ++r) {
    if (!wanted(cfg, r)) continue;
    RankProgram& out = program.ranks[r];
    out.reserve(static_cast<std::size_t>(v) * total * 4);
    Emitter emit(out, cfg);
    const auto pop_w = [&] {
      const Action w = stack.back();
      stack.pop_back();
      emit.backward_weight(w.stage, w.microbatch);
    };
    for (int start = 0; start < total; start += unit) {
      const int u = std::min(unit, total - start);
      const int n = u * v;
      const auto fwd = [&](int k) { emit.forward((k / u) * p + r, start + k % u); };
      const auto bwd = [&](int k, bool steady) {
        const int chunk = v - 1 - k / u;
        const int stage = chunk * p + r;
        const int mb = start + k % u;
        emit.backward_input(stage, mb);
        if (!emit.split()) return;
        if (chunk != v - 1 || !steady) {
          emit.backward_weight(stage, mb);
          return;
        }
        stack.push_back({ActionType::W, stage, mb});
        if (k > 2 * r) pop_w();
        if (k == u - 1) {
          for (int extra = 0; extra < 2 * (p - 1 - r) && !stack.empty(); ++extra) pop_w();
        }
      };
      const int warmup = std::min(2 * (p - 1 - r) + (v - 1) * u, n);
      for (int k = 0; k < warmup; ++k) fwd(k);
      for (int i = 0; i < n - warmup; ++i) {
        fwd(warmup + i);
        bwd(i, /*steady=*/true);
      }
      for (int i = n - warmup; i < n; ++i) bwd(i, /*steady=*/false);
      while (!stack.empty()) pop_w();
    }
  }
  return program;
}

}  // namespace zeropp::schedule::detail
