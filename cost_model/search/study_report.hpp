#pragma once
// The study report (`zeropp report`): one experiment's answer in one Markdown file, made of what the other
// commands compute, by the same library calls:
//   verdict and table   compare_rows (compare.hpp): every row at its best plan within memory, simulated;
//   criterion           analytic::criterion / criterion_time with b and U of the winning ZeroPP plan;
//   timeline            the winning ZeroPP plan's program, simulated with costs_from_plan (the same run that
//                       priced it in the table), drawn by simulate::ascii_grid;
//   model vs measured   the validation sets of the experiment's GPU (validation_cache.hpp: published runs, their
//                       leave-one-out errors cached by input hash), which also give the verdict its error band,
//                       and the trainer runs in <results>/loop (load_loop_runs);
//   figures             drawn for this experiment into the report's figure folder (study_figures.hpp): the
//                       simulated peak memory by part, the best ZeroPP plan's timeline, the criterion map of its
//                       model and cluster, the validation sets; linked when drawn.
// A profile with nominal figures gets a warning at the top (spec/provenance.hpp).
// Model output and measurements are kept apart in the text: every measured number says where it was measured.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_model/analytic/criterion.hpp"
#include "cost_model/analytic/run_cost.hpp"
#include "cost_model/search/compare.hpp"
#include "cost_model/search/criterion_map.hpp"
#include "cost_model/search/loop_runs.hpp"
#include "cost_model/search/measured_gpu.hpp"
#include "cost_model/search/validation.hpp"
#include "cost_model/search/validation_cache.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::search {

struct StudyOptions {
  std::filesystem::path results_dir;  // where loop/ is looked for
  std::filesystem::path output_path;  // the Markdown file; figure links are relative to its folder
  // The validation sets: empty with auto_validation_sets the sets of the experiment's GPU
  // (validation_sets_for); empty without it, none.
  std::vector<std::string> validation_sets;
  bool auto_validation_sets = true;
  std::filesystem::path validation_cache;  // where leave-one-out results are cached (empty: not cached)
  bool revalidate = false;                 // run the leave-one-out fits even when the cache is current
  int grid_width = 150;                    // characters per row of the timeline grid
  CompareOptions compare;
  std::string command;                               // the command line that writes this report, quoted in its header
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

// The verdict's error band: the leave-one-out errors of the validation sets of the experiment's GPU, the model's
// own prediction errors on published runs of that GPU. A ratio r of two predicted times is read as lying in
// [r (1-e)/(1+e), r (1+e)/(1-e)] for e the typical (mean) and the worst (max) error: conservative, since two
// plans predicted by the same model err in the same direction more often than not.
struct ErrorBand {
  bool present = false;
  double typical = 0;  // the largest leave-one-out mean |error| among the sets
  double worst = 0;    // the largest leave-one-out |error| of any row
  std::string sets;    // their names
};
// {lo, hi} of a ratio under error e.
std::pair<double, double> ratio_band(double ratio, double e);

struct StudyReport {
  Experiment experiment;
  std::string nominal_warning;           // spec/provenance.hpp's nominal_warning for the cluster, empty when none
  std::string command;                   // StudyOptions::command
  std::vector<CompareRow> rows;          // compare's rows as it shows them (present_rows)
  std::vector<std::string> absent_rows;  // why variant rows are left out (absent_variants)
  std::optional<analytic::RunCostOptions> run_cost;  // StudyOptions::run_cost
  // Indices into rows, -1 when there is none: the fastest row that fits; the fastest ZeroPP row without CP that
  // fits (zeropp_a, zeropp_b); the 3d row (cp = 1) when it fits; the fastest pipeline baseline without CP that
  // fits (the pp_zero1 rows: 1F1B, ZB-H1, ZB-H2, BFS with ZeRO-1, and naive ZeRO-3 + PP); the fastest row that is
  // not ZeroPP (FSDP + TP and the CP rows included: what ZeroPP must beat); the fastest ZeroPP row with CP
  // (zeropp_a_cp, zeropp_b_cp) and the fastest other row with CP (3d_cp, zero3_cp, ...).
  int winner = -1, best_zeropp = -1, three_d = -1, best_pp = -1, best_rival = -1, best_zeropp_cp = -1,
      best_rival_cp = -1;

  bool have_criterion = false;  // needs a ZeroPP plan (best_zeropp, else the closest zeropp row)
  int criterion_index = -1;     // the row b and U come from
  std::string criterion_row;
  int criterion_b = 0, criterion_unit = 0;
  analytic::Criterion criterion;
  analytic::CriterionTime criterion_time;
  std::string criterion_verdict;  // criterion_verdict(...).paragraph: what `zeropp criterion --experiment` prints

  analytic::CriterionTpRule criterion_tp_rule;  // the TP rule the time-based answer used (the best 3D plan's)
  std::optional<CriterionMap> criterion_map;    // the model's criterion map on the cluster

  StudyTimeline timeline;
  bool have_validation = false;  // at least one set
  std::vector<CachedValidation> validations;
  std::vector<std::string> validation_notes;  // sets asked for that do not match the GPU, cache notes
  ErrorBand band;
  std::filesystem::path loop_dir;
  std::vector<LoopRun> loop;
  std::vector<MeasuredGpu> measured;  // <results>/measured/<gpu>/: the trainer and PyTorch on a real GPU
  std::vector<StudyFigure> figures;  // set by whoever draws them (the CLI: study_figures.hpp), empty otherwise
  std::string figures_note;          // why there are none, or how they were drawn
  std::string flop_convention;       // how the table's TFLOP/s and MFU count FLOPs, and how each set counts them
};

// Throws SpecError for an invalid experiment (validate(experiment)) or validation set.
StudyReport build_study_report(const Experiment&, const StudyOptions&);

// The whole run's cost at row i's plan (report.run_cost), when there is one and the plan fits.
std::optional<analytic::RunCost> row_run_cost(const StudyReport&, int i);

// time(b) / time(a): how many times faster row a is than row b (both must fit); 0 when either index is -1.
double speedup(const StudyReport&, int a, int b);

std::string to_markdown(const StudyReport&);

// {"experiment": {name, model, cluster, gpus, global_batch, dtype, gpu_memory_bytes},
//  "verdict": {winner, best_zeropp, three_d, best_pp, best_rival, best_zeropp_cp, best_rival_cp (row names or
//              null), zeropp_vs_3d, zeropp_vs_best_pp, zeropp_vs_best_rival, zeropp_cp_vs_best_rival_cp (speedups
//              or null),
//              zeropp_peak_memory_bytes}, "absent_rows": [line],
//  "strategies": [{row, strategy, found, feasible, parallel, estimate, speedup_vs_3d} | {row, found, note}],
//  "criterion": {row, b, U, h, s, lhs, rhs, holds, zeropp_bytes_per_layer, zeropp_per_w_bytes_per_layer,
//                tp_bytes_per_layer, min_unit, min_unit_per_w, time: {cluster, group, compute_s, tp_exposed_s,
//                zeropp_comm_s, zeropp_exposed_s, holds, min_unit}, verdict: paragraph} | null,
//  "timeline": {row, plan, makespan_s, bubble_fraction, peak_activation_microbatches, grid} | null,
//  "validation": [{set, source, cluster, flops, rows, mean_abs_error, max_abs_error, loo: {mean_abs_error,
//                 max_abs_error}, from_cache, key}],
//  "error_band": {typical, worst, sets, zeropp_vs_3d: {typical: [lo, hi], worst: [lo, hi]}} | null,
//  "nominal_warning": text | null, "flop_convention": text,
//  "loop_dir", "loop": [{file, plan, backend, world, costs, measured_iteration_s, predicted_iteration_s,
//  relative_error}], "figures": [{name, caption, link}]}. Seconds, bytes.
nlohmann::json to_json(const StudyReport&);

}  // namespace zeropp::search
