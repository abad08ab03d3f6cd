// GPipe: every rank runs all B forwards, then all B backwards (in micro-batch order, like
// torch.distributed.pipelining's ScheduleGPipe). Peak in-flight micro-batches: B on every rank.
#include "cost_model/schedule/generators.hpp"

namespace zeropp::schedule::detail {

Program generate_gpipe(const ScheduleConfig& cfg) {
  Program program = empty_program(cfg);
  for (int r = 0; r < cfg.pp; ++r) {
    if (!wanted(cfg, r)) continue;
    RankProgram& out = program.ranks[r];
    out.reserve(static_cast<std::size_t>(cfg.microbatches) * 4);
    // The last stage's B(0) waits for all B forwards, so its activations are not fresh: it recomputes too.
    Emitter emit(out, cfg);
    for (int m = 0; m < cfg.microbatches; ++m) emit.forward(r, m);
    for (int m = 0; m < cfg.microbatches; ++m) emit.backward(r, m);
  }
  return program;
}

}  // namespace zeropp::schedule::detail
