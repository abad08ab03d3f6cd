#pragma once
// Internal to the schedule module: one generator per schedule (one .cpp each) and the small emitter they share.
// generate() (generate.cpp) validates the configuration before it calls any of these, so they may assume
// p >= 1, v >= 1, B >= 1 and 1 <= U <= B.
#include "cost_model/schedule/generate.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::schedule::detail {

// Appends compute actions to one rank's program and applies the two knobs every schedule shares:
// fused vs split backward, and the recompute rule.
class Emitter {
 public:
  // Which stages recompute is the schedule's (spec/strategy.hpp, recomputes_last_stage): every stage in
  // Megatron-LM's schedules, every stage but the last in ZeroPP's.
  Emitter(RankProgram& out, const ScheduleConfig& cfg)
      : out_(out),
        split_(cfg.split_backward),
        recompute_(cfg.recompute),
        last_stage_(cfg.pp * cfg.v - 1),
        recompute_last_(recomputes_last_stage(cfg.kind)) {}

  void forward(int stage, int mb) { out_.push_back({ActionType::F, stage, mb}); }
  // The input-gradient half: [RECOMPUTE] B, or [RECOMPUTE] BW when the backward is fused.
  void backward_input(int stage, int mb) {
    if (recompute_ && (stage != last_stage_ || recompute_last_)) {
      out_.push_back({ActionType::RECOMPUTE, stage, mb});
    }
    out_.push_back({split_ ? ActionType::B : ActionType::BW, stage, mb});
  }
  // The weight-gradient half; nothing when the backward is fused (BW already did it).
  void backward_weight(int stage, int mb) {
    if (split_) out_.push_back({ActionType::W, stage, mb});
  }
  // A whole backward with its W at once.
  void backward(int stage, int mb) {
    backward_input(stage, mb);
    backward_weight(stage, mb);
  }
  bool split() const { return split_; }

 private:
  RankProgram& out_;
  bool split_;
  bool recompute_;
  int last_stage_;
  bool recompute_last_;
};

// An empty program of the configuration's shape.
Program empty_program(const ScheduleConfig& cfg);
// Whether the generator should emit rank r's program (ScheduleConfig::only_rank).
inline bool wanted(const ScheduleConfig& cfg, int r) { return cfg.only_rank < 0 || cfg.only_rank == r; }

Program generate_gpipe(const ScheduleConfig&);
Program generate_one_f_one_b(const ScheduleConfig&);
Program generate_interleaved(const ScheduleConfig&);
Program generate_bfs(const ScheduleConfig&);
Program generate_zb_h1(const ScheduleConfig&);
Program generate_zb_h2(const ScheduleConfig&);
Program generate_zeropp(const ScheduleConfig&);

}  // namespace zeropp::schedule::detail
