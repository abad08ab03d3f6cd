#pragma once
// The study report (`zeropp report`): one experiment's answer in one Markdown file, made of what the other
// commands compute, by the same library calls:
//   verdict and table   compare_rows (compare.hpp): every row at its best plan within memory, simulated;
//   criterion           analytic::criterion / criterion_time with b and U of the winning ZeroPP plan;
//   timeline            the winning ZeroPP plan's program, simulated with costs_from_plan (the same run that
//                       priced it in the table), drawn by simulate::ascii_grid;
//   model vs measured   analytic validation (published runs, leave-one-out) and the trainer runs in
//                       <results>/loop (load_loop_runs);
//   figures             <results>/figures/*.png made by plots/make_all.sh, linked when present.
// Model output and measurements are kept apart in the text: every measured number says where it was measured.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_model/analytic/criterion.hpp"
#include "cost_model/analytic/run_cost.hpp"
#include "cost_model/search/compare.hpp"
#include "cost_model/search/loop_runs.hpp"
#include "cost_model/search/validation.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::search {

struct StudyOptions {
  std::filesystem::path results_dir;             // where loop/ and figures/ are looked for
  std::filesystem::path output_path;             // the Markdown file; figure links are relative to its folder
  std::string validation_set = "narayanan2021";  // empty: no validation section
  int grid_width = 150;                          // characters per row of the timeline grid
  CompareOptions compare;
  std::string command;  // the command line that writes this report, quoted in its header
  std::optional<analytic::RunCostOptions> run_cost;  // --tokens: a "training run" table per row
};

struct StudyTimeline {
  bool present = false;
  std::string row;  // "zeropp_b"
  ParallelSpec parallel;
  std::string grid;  // simulate::ascii_grid of the whole iteration
  double makespan_s = 0;
  double bubble_fraction = 0;                     // idle share of ranks x makespan
  std::vector<int> peak_activation_microbatches;  // per PP rank
};

struct StudyFigure {
  std::string name;     // "criterion_map"
  std::string caption;  // what it shows and where its numbers come from
  std::string link;     // path of the PNG relative to the report's folder ('/'-separated)
};

struct StudyReport {
  Experiment experiment;
  std::string command;  // StudyOptions::command
  std::vector<CompareRow> rows;
  std::optional<analytic::RunCostOptions> run_cost;  // StudyOptions::run_cost
  // Indices into rows, -1 when there is none: the fastest row that fits; the fastest ZeroPP row that fits
  // (zeropp_a, zeropp_b); the 3d row when it fits; the fastest pipeline baseline that fits (the pp_zero1 rows:
  // 1F1B, ZB-H1, ZB-H2, BFS with ZeRO-1, and naive ZeRO-3 + PP).
  int winner = -1, best_zeropp = -1, three_d = -1, best_pp = -1;

  bool have_criterion = false;  // needs a ZeroPP plan (best_zeropp, else the closest zeropp row)
  int criterion_index = -1;     // the row b and U come from
  std::string criterion_row;
  int criterion_b = 0, criterion_unit = 0;
  analytic::Criterion criterion;
  analytic::CriterionTime criterion_time;
  std::string criterion_verdict;  // criterion_verdict(...).paragraph: what `zeropp criterion --experiment` prints

  StudyTimeline timeline;
  bool have_validation = false;
  search::ValidationReport validation;
  std::filesystem::path loop_dir;
  std::vector<LoopRun> loop;
  std::vector<StudyFigure> figures;
};

// Throws SpecError for an invalid experiment (validate(experiment)) or validation set.
StudyReport build_study_report(const Experiment&, const StudyOptions&);

// The whole run's cost at row i's plan (report.run_cost), when there is one and the plan fits.
std::optional<analytic::RunCost> row_run_cost(const StudyReport&, int i);

// time(b) / time(a): how many times faster row a is than row b (both must fit); 0 when either index is -1.
double speedup(const StudyReport&, int a, int b);

std::string to_markdown(const StudyReport&);

// {"experiment": {name, model, cluster, gpus, global_batch, dtype, gpu_memory_bytes},
//  "verdict": {winner, best_zeropp, three_d, best_pp (row names or null), zeropp_vs_3d, zeropp_vs_best_pp
//              (speedups or null), zeropp_peak_memory_bytes},
//  "strategies": [{row, strategy, found, feasible, parallel, estimate, speedup_vs_3d} | {row, found, note}],
//  "criterion": {row, b, U, h, s, lhs, rhs, holds, zeropp_bytes_per_layer, zeropp_per_w_bytes_per_layer,
//                tp_bytes_per_layer, min_unit, min_unit_per_w, time: {cluster, group, compute_s, tp_exposed_s,
//                zeropp_comm_s, zeropp_exposed_s, holds, min_unit}, verdict: paragraph} | null,
//  "timeline": {row, plan, makespan_s, bubble_fraction, peak_activation_microbatches, grid} | null,
//  "validation": {source, cluster, rows, mean_abs_error, max_abs_error, loo: {mean_abs_error,
//                 max_abs_error}} | null,
//  "loop_dir", "loop": [{file, plan, backend, world, costs, measured_iteration_s, predicted_iteration_s,
//  relative_error}], "figures": [{name, caption, link}]}. Seconds, bytes.
nlohmann::json to_json(const StudyReport&);

}  // namespace zeropp::search
