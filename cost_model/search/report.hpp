#pragma once
// Machine-readable search results (`zeropp search --format json`).
#include <nlohmann/json.hpp>

#include "cost_model/search/search.hpp"

namespace zeropp::search {

// {"ranked_by", "pruning_rule", "tie_rule", "counts": {enumerated, rejected, over_memory_bound, simulated, pruned,
//  over_memory, feasible}, "top": [plan...] (the first `top` ranked), "strategies": [{strategy, enumerated,
//  simulated, feasible, best: plan | null, closest_infeasible, note, schedules: [{schedule, enumerated,
//  simulated, feasible, best, closest_infeasible}]}], "why": {dominant, versus: [{label, plan, delta_s,
//  slowdown, main_difference, delta_by_part_s: {part: s}, peak_memory_delta_bytes}], missing: [...]},
//  "fastest_infeasible", "closest_infeasible": {plan, reason} | null}; a plan is {rank?, strategy, plan (one
//  line), parallel (to_json(ParallelSpec)), simulated, closed_form_iteration_s, bounds: {time_s, memory_bytes},
//  time_s: {iteration, compute,
//  comm_exposed, bubble, exposed: {tp, pp, zero, dp}}, peak_memory_bytes, throughput: {tokens_per_s,
//  tflops_per_gpu, mfu, mfu_full_attention}}. Times in seconds, memory in bytes.
nlohmann::json to_json(const Candidate&);
nlohmann::json to_json(const SearchResult&, int top);

}  // namespace zeropp::search
