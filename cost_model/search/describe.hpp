#pragma once
// Words for search results: a plan on one line, why a plan does not fit, what dominates an iteration and why
// the best plan beats the runner-up and the best plan of every other strategy.
#include <string>
#include <vector>

#include "cost_model/analytic/estimate.hpp"
#include "cost_model/search/search.hpp"

namespace zeropp::search {

// "zeropp_b z=8 pp=4 dp=2 v=2 zeropp b=1 B=32 U=8 recompute=none"; tp shown for 3D, U for ZeroPP only; the ZeRO
// stage (zero=0|1) where the strategy allows both, "sp=off" for tp > 1 without sequence parallelism, "tp_overlap"
// with tp_comm_overlap.
std::string describe_plan(const ParallelSpec&);
// The TP communication of a plan for table columns: "sp" (sequence parallel), "sp+ov" (and tp_comm_overlap),
// "nosp"; "-" without tp.
std::string tp_comm_label(const ParallelSpec&);

// "peak 96.1 GiB > 80.0 GiB by 16.1 GiB; optimizer 55.0 GiB, params 9.2 GiB, ..." (largest part first).
std::string memory_reason(const analytic::Estimate&, double memory_bytes);

// The parts of an iteration: compute, the exposed communication of each kind, bubble (seconds).
struct TimeShare {
  std::string name;  // "compute", "bubble", "exposed {tp, pp, zero, dp} comm"
  double seconds = 0;
};
std::vector<TimeShare> time_parts(const analytic::PipelineTiming&);
// The largest part and its share of the iteration: "compute (71% of 1.234 s)".
std::string dominant_part(const analytic::PipelineTiming&);

// The best plan against another: how much slower the other is and which part accounts for most of it.
struct Versus {
  std::string label;  // "runner-up" or "best zero3"
  Candidate other;
  double delta_s = 0;           // other - best iteration time
  double slowdown = 0;          // other / best iteration time
  std::string main_difference;  // "bubble +0.210 s"
  std::vector<TimeShare> deltas;  // per part of time_parts: other - best seconds
  double peak_delta_bytes = 0;    // other - best peak memory
};

struct Explanation {
  bool any = false;
  std::string dominant;              // of the best plan
  std::vector<Versus> versus;        // runner-up, then the best of each other strategy (unless it is the runner-up)
  std::vector<std::string> missing;  // "zero3: none of its 120 plans fits in memory"
};
Explanation explain(const SearchResult&);

}  // namespace zeropp::search
