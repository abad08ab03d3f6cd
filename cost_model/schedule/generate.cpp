// generate(): checks (kind, p, v, B, U) against each schedule's rules and dispatches to its generator.
#include <string>

#include "cost_model/schedule/budget.hpp"
#include "cost_model/schedule/generators.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::schedule {
namespace detail {

Program empty_program(const ScheduleConfig& cfg) {
  Program program;
  program.pp = cfg.pp;
  program.v = cfg.v;
  program.microbatches = cfg.microbatches;
  program.unit = cfg.kind == ScheduleKind::zeropp ? (cfg.unit == 0 ? cfg.microbatches : cfg.unit) : 0;
  program.ranks.resize(static_cast<std::size_t>(cfg.pp));
  return program;
}

}  // namespace detail

namespace {

[[noreturn]] void reject(const ScheduleConfig& cfg, const std::string& rule) {
  throw std::invalid_argument("schedule " + zeropp::to_string(cfg.kind) + ": " + rule);
}

bool has_chunks(ScheduleKind kind) {
  return kind == ScheduleKind::interleaved || kind == ScheduleKind::bfs || kind == ScheduleKind::zeropp;
}

// The zero-bubble schedules exist only because B and W are separate tasks: a fused backward would leave
// nothing to fill the bubbles with.
bool needs_split_backward(ScheduleKind kind) { return kind == ScheduleKind::zb_h1 || kind == ScheduleKind::zb_h2; }

void check(const ScheduleConfig& cfg) {
  if (cfg.pp < 1) reject(cfg, "pp=" + std::to_string(cfg.pp) + " must be >= 1");
  if (cfg.v < 1) reject(cfg, "v=" + std::to_string(cfg.v) + " must be >= 1");
  if (cfg.microbatches < 1) reject(cfg, "microbatches=" + std::to_string(cfg.microbatches) + " must be >= 1");
  if (cfg.only_rank >= cfg.pp) reject(cfg, "only_rank=" + std::to_string(cfg.only_rank) + " must be < pp");
  if (!has_chunks(cfg.kind) && cfg.v != 1) {
    reject(cfg, "v=" + std::to_string(cfg.v) +
                    " must be 1: the schedule runs one chunk per rank (use interleaved, bfs or zeropp for v > 1)");
  }
  if (needs_split_backward(cfg.kind) && !cfg.split_backward) {
    reject(cfg, "split_backward=false is not allowed: the schedule places W separately from B");
  }
  // Only ZeroPP has scheduling units; other schedules ignore `unit` (their Program::unit is 0), so a caller may
  // pass ParallelSpec::unit through unconditionally.
  if (cfg.kind == ScheduleKind::zeropp) {
    if (cfg.unit < 0 || cfg.unit > cfg.microbatches) {
      reject(cfg, "unit=" + std::to_string(cfg.unit) + " must be in 1..microbatches=" +
                      std::to_string(cfg.microbatches) + " (0 means one unit of all micro-batches)");
    }
  }
  // The memory budget of a program (budget.hpp), checked before anything is allocated; it also keeps every
  // action index far inside an int. lower() checks the larger lowered program the same way.
  if (!within_action_budget(cfg.pp, cfg.v, cfg.microbatches, /*lowered=*/false))
    reject(cfg, over_budget_message(cfg.pp, cfg.v, cfg.microbatches, /*lowered=*/false));
}

}  // namespace

Program generate(const ScheduleConfig& cfg) {
  check(cfg);
  switch (cfg.kind) {
    case ScheduleKind::gpipe:
      return detail::generate_gpipe(cfg);
    case ScheduleKind::one_f_one_b:
      return detail::generate_one_f_one_b(cfg);
    case ScheduleKind::interleaved:
      return detail::generate_interleaved(cfg);
    case ScheduleKind::bfs:
      return detail::generate_bfs(cfg);
    case ScheduleKind::zb_h1:
      return detail::generate_zb_h1(cfg);
    case ScheduleKind::zb_h2:
      return detail::generate_zb_h2(cfg);
    case ScheduleKind::zeropp:
      return detail::generate_zeropp(cfg);
  }
  throw std::invalid_argument("schedule: unknown ScheduleKind value " + std::to_string(static_cast<int>(cfg.kind)));
}

}  // namespace zeropp::schedule
