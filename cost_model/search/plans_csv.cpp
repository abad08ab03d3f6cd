#include "cost_model/search/plans_csv.hpp"

#include <fmt/format.h>

#include "cost_model/spec/names.hpp"

namespace zeropp::search {
namespace {

const char* fate_name(PlanFate f) {
  switch (f) {
    case PlanFate::rejected:
      return "rejected";
    case PlanFate::over_memory_bound:
      return "over_memory_bound";
    case PlanFate::pruned_by_time:
      return "pruned_by_time";
    case PlanFate::simulated:
      return "simulated";
  }
  return "";
}

}  // namespace

std::string plans_csv(const SearchResult& r) {
  std::string out =
      "index,strategy,tp,z,cp,cp_kind,pp,dp,dp_shard,zero_stage,sequence_parallel,schedule,v,b,B,U,recompute,"
      "first_stage_layers,last_stage_layers,fate,time_bound_s,"
      "memory_bound_bytes,executor,iteration_s,compute_s,exposed_tp_s,exposed_pp_s,exposed_zero_s,exposed_dp_s,"
      "bubble_s,peak_memory_bytes,feasible,closed_form_iteration_s\n";
  for (std::size_t i = 0; i < r.all.size(); ++i) {
    const PlanRecord& rec = r.all[i];
    const ParallelSpec& p = rec.parallel;
    // first/last_stage_layers: 0 when the plan takes the default split (even, or Megatron's accounted one).
    // dp_shard: 0 unless HSDP (every dp group shards).
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.9g},{:.9g}", i,
                       to_string(p.strategy), p.tp, p.z, p.cp, p.cp > 1 ? to_string(p.cp_kind) : "-", p.pp, p.dp,
                       p.dp_shard, p.zero_stage, p.sequence_parallel ? 1 : 0, to_string(p.schedule), p.v, p.micro_batch,
                       p.micro_batches, p.unit, to_string(p.recompute), p.first_stage_layers, p.last_stage_layers,
                       fate_name(rec.fate), rec.bounds.time_s, rec.bounds.memory_bytes);
    if (rec.result) {
      const analytic::Estimate& e = rec.result->estimate;
      const auto& t = e.time_s;
      out += fmt::format(",{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{},{:.9g}\n",
                         rec.result->simulated ? "simulator" : "closed_form", t.iteration, t.compute, t.tp_exposed,
                         t.pp_exposed, t.zero_exposed, t.dp_exposed, t.bubble, e.memory_bytes.peak, e.feasible ? 1 : 0,
                         rec.result->closed_form_iteration);
    } else {
      out += ",,,,,,,,,,,\n";
    }
  }
  return out;
}

}  // namespace zeropp::search
