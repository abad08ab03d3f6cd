#pragma once
// Schedule generators (compute actions only) and lowering (adds p2p and ZeRO-3 / DP communication actions).
// The contract shared by the simulator (cost_model/simulate) and the trainer's runtime (e2e/).
#include <stdexcept>
#include <string>

#include "cost_model/schedule/action.hpp"
#include "cost_model/spec/parallel_spec.hpp"

namespace zeropp::schedule {

struct ScheduleConfig {
  ScheduleKind kind = ScheduleKind::one_f_one_b;
  int pp = 1;                  // p
  int v = 1;                   // chunks per rank (interleaved, bfs, zeropp)
  int microbatches = 1;        // B
  int unit = 0;                // U (zeropp); 0 = B (one unit)
  bool split_backward = true;  // emit B and W separately (false: fused BW where the schedule allows)
  bool recompute = false;      // emit RECOMPUTE before B per the schedule's rule
  // >= 0: generate only this rank's program (the others stay empty), for a caller that looks at one rank at a
  // time (search/bounds.cpp); every rank's program depends on (kind, p, v, B, U) and its rank alone.
  int only_rank = -1;
};

// When a stage's parameters are all-gathered in the ZeRO-3 group and freed again.
enum class ShardPolicy {
  none,            // parameters replicated (or TP-sharded): no UNSHARD/RESHARD
  per_microbatch,  // naive ZeRO-3 under PP: gather before every F/B, free after
  per_unit,        // ZeroPP: gather on first use of a chunk, keep while it stays active, free on chunk switch
  per_iteration,   // gather once, keep until the end of the iteration (torchtitan's default under PP)
};

struct LoweringOptions {
  bool p2p = true;  // SEND_/RECV_ between neighbouring stages
  ShardPolicy shard = ShardPolicy::none;
  GradReduce grad_reduce = GradReduce::per_unit;  // REDUCE_GRAD per unit or after every W (when sharded)
  bool dp_sync = false;                           // DP_SYNC per stage at the end of the iteration
  bool dp_sync_overlap = true;  // DP_SYNC right after the stage's last W (overlaps the rest of the backward);
                                // false: every DP_SYNC after the rank's last compute action
  bool opt_step = true;         // OPT_STEP at the end of every rank's program
  // Check the compute-only input with validate_program first (a broken input reported by its own rule). The
  // search's hot path (program_for) skips it for the generators' own programs, which the schedule tests validate
  // for every schedule over grids of (p, v, B, U) (tests/schedule/property_grid_test.cpp).
  bool check_input = true;
};

// Throws std::invalid_argument naming the parameter and the rule for invalid (kind, p, v, B, U).
Program generate(const ScheduleConfig&);
Program lower(const Program& compute_only, const LoweringOptions&);

// A broken program: which rank, which action (index into the rank's program), which rule.
class ProgramError : public std::runtime_error {
 public:
  ProgramError(int rank, int index, const std::string& message)
      : std::runtime_error(message), rank_(rank), index_(index) {}
  int rank() const { return rank_; }
  int index() const { return index_; }

 private:
  int rank_;
  int index_;
};

struct ValidateOptions {
  bool require_w = true;  // every (stage, mb) needs a W (or a BW)
};
// Checks DESIGN.md section 6's rules; throws ProgramError on the first violation.
void validate_program(const Program&, const ValidateOptions& = {});

}  // namespace zeropp::schedule
