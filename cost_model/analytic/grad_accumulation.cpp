#include "cost_model/analytic/grad_accumulation.hpp"

#include <algorithm>

#include "cost_model/analytic/comm_volume.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {

namespace {

// Per element: what the first micro-batch of a window and each later one cost (grad_accumulation.hpp).
struct FirstLater {
  double first = 0, later = 0;
  double average(double windows, double micro_batches) const {
    return (windows * first + (micro_batches - windows) * later) / micro_batches;
  }
};

// PyTorch's AccumulateGrad into a gradient of e bytes, or a wider accumulator of g bytes beside it (DeepSpeed's
// grad_accum: the cast's temporary, then an add).
FirstLater autograd_kernel(double e, double g) {
  if (g == e) return {0, 3 * e};
  return {e + g, e + 4 * g};
}

}  // namespace

GradReductions grad_reductions(const ParallelSpec& p) { return grad_reductions(p, data_parallel_sync(p)); }

GradReductions grad_reductions(const ParallelSpec& p, const DataParallelSync& sync) {
  if (sync.gather == ParamGather::none || sync.shard_group <= 1) return {1, false};
  switch (sync.gather) {
    case ParamGather::per_micro_batch:
      return {p.micro_batches, true};
    case ParamGather::per_unit: {
      if (p.grad_reduce == GradReduce::per_w) return {p.micro_batches, true};
      const int unit = p.unit > 0 ? std::min(p.unit, p.micro_batches) : p.micro_batches;
      return {unit_count(p.micro_batches, unit), true};
    }
    case ParamGather::per_iteration:
      return {1, true};
    case ParamGather::none:
      break;
  }
  return {1, false};
}

bool grad_reductions_depend_on_unit(const ParallelSpec& p) {
  const DataParallelSync sync = data_parallel_sync(p);
  return sync.gather == ParamGather::per_unit && sync.shard_group > 1 && p.grad_reduce == GradReduce::per_unit;
}

GradAccumulation grad_accumulation(const ParallelSpec& p) {
  return grad_accumulation(p, data_parallel_sync(p), framework_precision(p));
}

GradAccumulation grad_accumulation(const ParallelSpec& p, const DataParallelSync& sync,
                                   const FrameworkPrecision& precision) {
  const double e = element_bytes(p.dtype), g = element_bytes(precision.grads), r = element_bytes(precision.reduce);
  const double B = p.micro_batches;
  const GradReductions reductions = grad_reductions(p, sync);
  const double R = reductions.count;
  const double shard = std::max(1, sync.shard_group);
  GradAccumulation out;
  out.layer_store = out.head_store = e;
  FirstLater kernel;  // the unsharded windows
  bool shard_here = false;  // the shard's additions priced here (not on a reduce-scatter stream)
  switch (framework_of(p)) {
    case Framework::megatron:
      out.reset = g;
      shard_here = true;
      if (grad_accumulation_fusion(p)) {
        out.layer_store = FirstLater{g, 2 * g}.average(R, B);
        out.head_store = 2 * g;
      } else {
        kernel = {e + 2 * g, e + 2 * g};
      }
      break;
    case Framework::deepspeed:
      // ZeRO-3 (R = B) reduces each micro-batch's gradient as it comes: nothing accumulates unsharded.
      if (R < B || !reductions.into_shard) kernel = autograd_kernel(e, g);
      break;
    case Framework::zeropp:
      shard_here = true;
      kernel = autograd_kernel(e, g);
      break;
    case Framework::fsdp2:
      // Under PP the sync is off until the last micro-batch; without PP every micro-batch is reduced (R = B).
      if (R < B) kernel = r == e ? autograd_kernel(e, e) : FirstLater{e + r, e + 2 * r};
      break;
    case Framework::fsdp1:
      if (R < B) kernel = autograd_kernel(e, e);
      break;
  }
  // A window of one micro-batch accumulates nothing (its gradient goes straight to the reduction), except into an
  // accumulator the framework keeps (Megatron's main_grad, DeepSpeed's grad_accum: their `first` is a real kernel).
  out.kernel = kernel.average(R, B);
  if (shard_here && reductions.into_shard) out.kernel += (R - 1) / B * 3 * g / shard;
  return out;
}

}  // namespace zeropp::analytic
