#pragma once
// From a Plan to the per-rank programs both executors run: the simulator (cost_model/simulate) prices them, the
// trainer's runtime (e2e/runtime) executes them. One schedule IR, two executors: what a plan means for its
// program (which schedule, which ZeRO-3 gathers, how gradients are synchronised) is decided here, from the
// strategy's facts (spec/strategy.hpp), and nowhere else. Per strategy:
//   3d, 1f1b_zero1   the plan's schedule (1f1b, interleaved, gpipe, bfs, zb_h1, zb_h2); parameters replicated in
//                    the pipeline; DP_SYNC across the z*dp replicas: reduce-scatter (zero_stage 1) or all-reduce.
//   zeropp_a/_b      the zeropp schedule with unit U; UNSHARD/RESHARD per unit in the z group; REDUCE_GRAD per
//                    unit or per W (parallel.grad_reduce); DP_SYNC of the shard across dp: all-reduce (A) or
//                    reduce-scatter with a parameter all-gather after the step (B).
//   zero3_pp, zero3  the plan's schedule; UNSHARD/RESHARD around every micro-batch's F and B, REDUCE_GRAD after
//                    every W (naive ZeRO-3); zero3 (pp = 1) shards over all z*dp GPUs and has no DP_SYNC (HSDP:
//                    a DP_SYNC after the last W, which the simulator's per-layer expansion places after every
//                    micro-batch's reduce-scatter, as FSDP2 all-reduces them).
//   zero3, pp > 1    FSDP2 under PP: the plan's schedule; UNSHARD before a chunk's first use, RESHARD after its last
//                    (ShardPolicy::per_iteration), one REDUCE_GRAD after the chunk's last W; HSDP: DP_SYNC after it.
// Recompute: RECOMPUTE actions when parallel.recompute is not none; the backward is split into B and W for the
// zero-bubble schedules and ZeroPP.
#include "cost_model/schedule/generate.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/stage_layout.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::schedule {

ScheduleConfig schedule_for(const Plan&);
LoweringOptions lowering_for(const Plan&);

struct PlanProgram {
  Program program;  // generated and lowered
  ScheduleConfig schedule;
  LoweringOptions lowering;
  DataParallelSync data_parallel;  // the shard group and the DP sync the program's actions stand for
  StageLayout layout;              // which layers each virtual stage holds (spec/stage_layout.hpp)
};

// The plan's program, generated and lowered, for a plan already validated (the search's hot path).
Program program_for(const Plan&);

// Validates the plan's split (validate(ParallelSpec) and the layers' split over the stages: SpecError naming
// parallel.<field>), then generates and lowers its program (std::invalid_argument from the generator for an
// impossible schedule shape).
PlanProgram build_plan_program(const Plan&);

}  // namespace zeropp::schedule
