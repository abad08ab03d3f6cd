#include "cost_model/search/search_budget.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cost_model/schedule/budget.hpp"
#include "cost_model/spec/error.hpp"

namespace zeropp::search {
namespace {

// Peak-RSS growth per plan, measured with /usr/bin/time (maximum resident set) on `zeropp search --model gpt3-13b
// --cluster dgx-a100-80gb --gpus 8 --top 1 --format json`, 2026-11-26 at wt-speed (issue 20's families in the
// space; main's binary gives the same in closed form, 286,400 / 979,964 kB): simulating, between global batch 512
// (106,014 plans, 62,920 kB) and 2048 (341,064 plans, 193,256 kB), 568 bytes per plan (the entries, group members,
// visiting order, and the share of simulated candidates); with --closed-form, between 1024 (185,523 plans,
// 286,456 kB) and 4096 (648,669 plans, 981,508 kB), 1537 (every plan keeps its estimates); with --closed-form
// --csv, 312,204 and 1,071,064 kB, 1678 (a record of every plan and its CSV row on top). Before the last families
// (same commands, 80,178 -> 281,256 plans): 552, 715 and 1378.
constexpr std::int64_t kEntryBytes = 568;
constexpr std::int64_t kEvaluatedBytes = 1537 - 568;
constexpr std::int64_t kRecordBytes = 1678 - 1537;

// 1234567 -> "1,234,567": counts that the eye must compare with the budget.
std::string grouped(double value) {
  const std::string digits = fmt::format("{:.0f}", value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::int64_t bytes_per_plan(const SearchOptions& options) {
  std::int64_t bytes = kEntryBytes;
  if (!options.simulate || options.exhaustive) bytes += kEvaluatedBytes;
  if (options.keep_all) bytes += kRecordBytes;
  return bytes;
}

SearchSize search_size(const Experiment& ex, const SearchOptions& options) {
  SearchSize size;
  SpaceOptions space = options.space;
  space.filter = nullptr;  // an upper bound: what the filter keeps is known only plan by plan
  const auto choices = static_cast<std::int64_t>(recompute_choices(ex).size());
  for_each_layout(ex, space, [&](Plan& plan, int units) {
    const ParallelSpec& p = plan.parallel;
    const std::int64_t plans = std::int64_t{units} * choices;
    size.plans += plans;
    if (p.schedule == ScheduleKind::zeropp) {
      size.zeropp_plans += plans;
      size.largest_micro_batches = std::max(size.largest_micro_batches, p.micro_batches);
    }
    // Within the action budget (space.hpp leaves larger programs out), so the bound is exact in 64 bits.
    const std::int64_t actions = schedule::action_bound(p.pp, p.v, p.micro_batches);
    size.largest_program = std::max(size.largest_program, actions);
    size.actions += static_cast<double>(actions) * static_cast<double>(plans);
  });
  size.bytes = static_cast<double>(size.plans) * static_cast<double>(bytes_per_plan(options));
  return size;
}

void check_search_budget(const Experiment& ex, const SearchOptions& options) {
  const SearchSize size = search_size(ex, options);
  const bool simulating = options.simulate;
  const bool too_much_work = simulating && size.actions > static_cast<double>(kMaxSearchActions);
  const bool too_large = size.plans > kMaxSearchPlans || size.bytes > static_cast<double>(kMaxSearchBytes);
  if (!too_much_work && !too_large) return;
  const std::string why =
      2 * size.zeropp_plans > size.plans
          ? fmt::format(
                " ({}% of them zeropp_a/zeropp_b plans: every unit U in 1..B, with B up to {})",
                static_cast<int>(100.0 * static_cast<double>(size.zeropp_plans) / static_cast<double>(size.plans)),
                size.largest_micro_batches)
          : "";
  const std::string actions = simulating ? fmt::format(" / {} actions to simulate at most", grouped(size.actions)) : "";
  const std::string budget_actions =
      simulating ? fmt::format(" / {} actions", grouped(static_cast<double>(kMaxSearchActions))) : "";
  throw SpecError(
      "search", fmt::format("--global-batch {} on {} GPUs would make {} plans{}{} and {:.1f} GB of search state, over "
                            "the search's budget of {} plans{} / {:.1f} GB; narrow with a smaller --global-batch or "
                            "without the strategies zeropp_a,zeropp_b (--strategies){}",
                            ex.global_batch, ex.gpus, grouped(static_cast<double>(size.plans)), why, actions,
                            size.bytes / 1e9, grouped(static_cast<double>(kMaxSearchPlans)), budget_actions,
                            static_cast<double>(kMaxSearchBytes) / 1e9,
                            too_much_work && !too_large ? ", or rank in closed form (--closed-form)" : ""));
}

}  // namespace zeropp::search
