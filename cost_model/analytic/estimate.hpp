#pragma once
// One plan, evaluated: communication bytes, memory, time, throughput and whether it fits in memory.
// `estimate` validates the plan (SpecError on bad input); a plan that does not fit in GPU memory is a result
// (feasible = false, over_by_bytes > 0), not an error.
//
// Closed forms by default. The schedule simulator plugs in through EstimateOptions::pipeline: it receives the
// same per-action cost table (time_model.hpp) and returns bubble, exposed communication and, when it tracks
// memory over time, the peak, which then replaces the closed-form peak.
#include <functional>

#include <nlohmann/json.hpp>

#include "cost_model/analytic/comm_volume.hpp"
#include "cost_model/analytic/memory.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::analytic {

struct Throughput {
  double tokens_per_s = 0;
  // The FLOP convention: analytic/flops.hpp.
  double tflops_per_gpu = 0;  // executed FLOPs (what the kernels run, recomputation included) per GPU, TFLOP/s
  double mfu = 0;             // model FLOPs, causal attention, no recomputation / (time x GPUs x dense peak)
  double mfu_full_attention = 0;  // the same with the full s x s attention count (PaLM, Megatron, torchtitan)
};

struct Estimate {
  CommBytes comm_bytes;      // bytes sent per GPU per iteration (busiest PP rank)
  MemoryBytes memory_bytes;  // per GPU (PP rank with the highest peak)
  PipelineTiming time_s;     // seconds per iteration, split
  Throughput throughput;
  bool feasible = true;      // peak <= cluster memory
  double over_by_bytes = 0;  // peak - cluster memory when infeasible, else 0
};

using PipelineModel = std::function<PipelineTiming(const Plan&, const ActionCosts&)>;

struct EstimateOptions {
  PipelineModel pipeline;  // empty: closed_form_timing
  bool validate = true;    // false skips validate(plan) (callers that built the plan from checked pieces)
};

Estimate estimate(const Plan& plan, const EstimateOptions& options = {});

// {"comm_bytes": {tp, pp, dp, zero, total}, "memory_bytes": {params, grads, optimizer, activations, buffers,
//  peak}, "time_s": {compute, comm_exposed, bubble, iteration, exposed: {tp, pp, zero, dp}},
//  "throughput": {tokens_per_s, tflops_per_gpu, mfu, mfu_full_attention}, "feasible", "over_by_bytes"}
nlohmann::json to_json(const Estimate&);

}  // namespace zeropp::analytic
