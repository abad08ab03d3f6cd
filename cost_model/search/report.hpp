#pragma once
// Machine-readable search results (`zeropp search --format json`).
#include <nlohmann/json.hpp>

#include "cost_model/search/search.hpp"

namespace zeropp::search {

// {"ranked_by", "pruning_rule", "counts": {enumerated, rejected, fits_closed_form, candidates, simulated, pruned,
//  over_memory, feasible}, "top": [plan...] (the first `top` ranked), "strategies": [{strategy, enumerated,
//  fits_closed_form, feasible, best: plan | null, note}], "why": {dominant, versus: [...], missing: [...]},
//  "fastest_infeasible", "closest_infeasible": {plan, reason} | null}; a plan is {rank?, strategy, plan (one
//  line), parallel (to_json(ParallelSpec)), simulated, closed_form_iteration_s, time_s: {iteration, compute,
//  comm_exposed, bubble, exposed: {tp, pp, zero, dp}}, peak_memory_bytes, throughput: {tokens_per_s,
//  tflops_per_gpu, mfu}}. Times in seconds, memory in bytes.
nlohmann::json to_json(const Candidate&);
nlohmann::json to_json(const SearchResult&, int top);

}  // namespace zeropp::search
