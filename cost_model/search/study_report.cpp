#include "cost_model/search/study_report.hpp"

#include <fmt/format.h>

#include "cost_model/analytic/criterion_json.hpp"
#include "cost_model/schedule/generate.hpp"
#include "cost_model/schedule/plan_program.hpp"
#include "cost_model/search/criterion_verdict.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/simulate/ascii_grid.hpp"
#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/simulate/simulator.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/fp8.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/provenance.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {
namespace {

bool fits(const CompareRow& r) { return r.found && r.estimate.estimate.feasible; }
bool is_zeropp(const CompareRow& r) { return zeropp::is_zeropp(r.spec.strategy); }
bool has_cp(const CompareRow& r) { return r.spec.cp == SizeClass::more; }
bool is_pp_baseline(const CompareRow& r) {
  return (r.spec.strategy == Strategy::pp_zero1 || r.spec.strategy == Strategy::zero3_pp) && !has_cp(r);
}

// Index of the fastest row that fits among those `keep` accepts (ties: the first, i.e. the compare order).
template <class Keep>
int fastest(const std::vector<CompareRow>& rows, Keep keep) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    if (!fits(rows[i]) || !keep(rows[i])) continue;
    if (best < 0 || rows[i].estimate.estimate.time_s.iteration < rows[best].estimate.estimate.time_s.iteration)
      best = i;
  }
  return best;
}

// The winning ZeroPP plan's program, simulated with the costs that priced it in the table.
StudyTimeline timeline_of(const CompareRow& row, int width) {
  StudyTimeline t;
  t.present = true;
  t.row = row.spec.name;
  t.parallel = row.plan.parallel;
  const schedule::Program program = schedule::program_for(row.plan);
  const simulate::SimResult sim = simulate::simulate(program, simulate::costs_from_plan(row.plan));
  simulate::GridOptions grid;
  grid.max_width = width;
  t.grid = simulate::ascii_grid(program, sim, grid);
  t.makespan_s = sim.makespan;
  t.bubble_fraction = sim.bubble_fraction();
  t.peak_activation_microbatches = sim.peak_activation_microbatches();
  return t;
}

// The validation sets of the experiment's GPU (or those asked for), their leave-one-out errors (cached), and the
// verdict's error band from them.
void validate_for_gpu(StudyReport& r, const StudyOptions& options) {
  std::vector<std::string> sets = options.validation_sets;
  if (sets.empty() && options.auto_validation_sets) {
    sets = validation_sets_for(r.experiment.cluster);
    if (sets.empty())
      r.validation_notes.push_back(fmt::format(
          "no published validation set is for this GPU (`{}`: {:g} TFLOP/s {}, {:.1f} GiB): the model's figures "
          "for it are not checked against any published run",
          r.experiment.cluster.name, r.experiment.cluster.peak(r.experiment.dtype) / 1e12,
          dtype_label(r.experiment.dtype, r.experiment.fp8),
          r.experiment.cluster.memory_bytes / (1024.0 * 1024 * 1024)));
  }
  for (const std::string& set : sets) {
    CachedValidation c = cross_validated(set, options.validation_cache, options.revalidate);
    if (!same_gpu(load_cluster(c.report.cluster), r.experiment.cluster))
      r.validation_notes.push_back(fmt::format("set {} is for another GPU ({}) than the experiment's (`{}`)", set,
                                               c.report.cluster, r.experiment.cluster.name));
    if (!c.note.empty()) r.validation_notes.push_back(fmt::format("{}: {}", set, c.note));
    r.validations.push_back(std::move(c));
  }
  r.have_validation = !r.validations.empty();
  for (const CachedValidation& c : r.validations) {
    if (!same_gpu(load_cluster(c.report.cluster), r.experiment.cluster)) continue;
    r.band.present = true;
    r.band.typical = std::max(r.band.typical, c.report.loo_mean_abs_error);
    r.band.worst = std::max(r.band.worst, c.report.loo_max_abs_error);
    r.band.sets += (r.band.sets.empty() ? "" : ", ") + c.name;
  }
}

// How FLOPs are counted: the estimate's own convention (analytic/estimate.hpp, Throughput) and each validation
// set's (its published_flops).
std::string flop_convention(const StudyReport& r) {
  const ClusterSpec& c = r.experiment.cluster;
  std::string text = fmt::format(
      "TFLOP/s per GPU counts the FLOPs the plan executes (model FLOPs plus the recomputation its schedule runs); "
      "MFU counts model FLOPs only (no recomputation) over iteration time x GPUs x the dense {} peak of {:g} "
      "TFLOP/s per GPU (analytic/estimate.hpp, Throughput). A multiply-add is 2 FLOPs; attention counts the full "
      "s x s score matrix, as Megatron-LM does.",
      dtype_label(r.experiment.dtype, r.experiment.fp8), c.peak(r.experiment.dtype) / 1e12);
  for (const CachedValidation& v : r.validations)
    text += fmt::format(" The {} set's published TFLOP/s per GPU count {}.", v.name,
                        v.report.flops == PublishedFlops::model
                            ? "model FLOPs (MFU x peak, no recomputation), as MFU here"
                            : "Narayanan et al. 2021's eq. 3 (four forward-equivalents per layer, recomputation "
                              "included), which `zeropp validate` reproduces for that set");
  return text;
}

nlohmann::json optional_index(const StudyReport& r, int i) {
  return i < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.rows[i].spec.name);
}

nlohmann::json optional_number(double x) { return x > 0 ? nlohmann::json(x) : nlohmann::json(nullptr); }

}  // namespace

std::pair<double, double> ratio_band(double ratio, double e) {
  if (!(e > 0) || e >= 1) return {ratio, ratio};
  return {ratio * (1 - e) / (1 + e), ratio * (1 + e) / (1 - e)};
}

double speedup(const StudyReport& r, int a, int b) {
  if (a < 0 || b < 0) return 0;
  return r.rows[b].estimate.estimate.time_s.iteration / r.rows[a].estimate.estimate.time_s.iteration;
}

std::optional<analytic::RunCost> row_run_cost(const StudyReport& r, int i) {
  if (!r.run_cost || i < 0 || !fits(r.rows[i])) return std::nullopt;
  return analytic::run_cost(r.rows[i].plan, r.rows[i].estimate.estimate.time_s.iteration, *r.run_cost);
}

StudyReport build_study_report(const Experiment& experiment, const StudyOptions& options) {
  validate(experiment);
  StudyReport r;
  r.nominal_warning = nominal_warning(experiment.cluster, experiment.dtype);
  r.experiment = experiment;
  r.command = options.command;
  r.run_cost = options.run_cost;
  // One search for the table and the criterion's verdict, as `zeropp compare` and `zeropp criterion` run it.
  const std::vector<CompareRowSpec> specs = select_rows(experiment, {});
  const SearchResult searched = run_search(experiment, search_options(specs, options.compare));
  const std::vector<CompareRow> all = rows_of(searched, specs);
  r.rows = present_rows(all);
  r.absent_rows = absent_variants(experiment, all, searched.options.space.min_cp_tokens);
  r.winner = fastest(r.rows, [](const CompareRow&) { return true; });
  r.best_zeropp = fastest(r.rows, [](const CompareRow& row) { return is_zeropp(row) && !has_cp(row); });
  r.three_d = fastest(r.rows, [](const CompareRow& row) { return row.spec.name == "3d"; });
  r.best_pp = fastest(r.rows, is_pp_baseline);
  r.best_rival = fastest(r.rows, [](const CompareRow& row) { return !is_zeropp(row); });
  r.best_zeropp_cp = fastest(r.rows, [](const CompareRow& row) { return is_zeropp(row) && has_cp(row); });
  r.best_rival_cp = fastest(r.rows, [](const CompareRow& row) { return !is_zeropp(row) && has_cp(row); });

  // The criterion at the b and U of the winning ZeroPP plan; when no ZeroPP plan fits, of the zeropp_b row's
  // closest plan (what `zeropp criterion --experiment` takes), so the section still says where the line lies.
  int crit = r.best_zeropp;
  if (crit < 0)
    for (int i = 0; i < static_cast<int>(r.rows.size()); ++i)
      if (r.rows[i].found && r.rows[i].spec.name == "zeropp_b") crit = i;
  if (crit >= 0) {
    const ParallelSpec& p = r.rows[crit].plan.parallel;
    r.have_criterion = true;
    r.criterion_index = crit;
    r.criterion_row = r.rows[crit].spec.name;
    r.criterion_b = p.micro_batch;
    r.criterion_unit = p.unit;
    r.criterion = analytic::criterion(analytic::criterion_input(experiment.model, p.micro_batch, p.unit));
    // The TP rule of the plan TP is compared with: the best 3D plan's (as `zeropp criterion --experiment`).
    CriterionVerdict verdict = criterion_verdict(searched);
    judge_fp8(experiment, search_options(specs, options.compare), verdict);  // whether FP8 changes the answer
    r.criterion_tp_rule = verdict.tp_rule;
    if (!verdict.found) {
      r.criterion_tp_rule = tp_rule_of(std::nullopt);
      if (r.three_d >= 0) {
        const ParallelSpec& t = r.rows[r.three_d].plan.parallel;
        r.criterion_tp_rule = {.sequence_parallel = t.sequence_parallel,
                               .tp_comm_overlap = t.tp_comm_overlap != TpCommOverlap::none};
      }
    }
    r.criterion_time = analytic::criterion_time(experiment.model, experiment.cluster, p.micro_batch, p.unit,
                                                experiment.dtype, r.criterion_tp_rule);
    r.criterion_verdict = verdict.paragraph;
    if (experiment.cluster.gpus_per_node > 1) {
      try {
        r.criterion_map = search::criterion_map(experiment.model, experiment.cluster, p.micro_batch, experiment.dtype,
                                                r.criterion_tp_rule);
      } catch (const SpecError&) {
        // A model with no TP layout over the node (heads not divisible by its GPUs) has no time-based map.
      }
    }
  }
  if (r.best_zeropp >= 0) r.timeline = timeline_of(r.rows[r.best_zeropp], options.grid_width);

  validate_for_gpu(r, options);
  r.flop_convention = flop_convention(r);
  r.loop_dir = options.results_dir / "loop";
  r.loop = load_loop_runs(r.loop_dir);
  r.measured = load_measured_gpus(options.results_dir / "measured");
  return r;
}

nlohmann::json to_json(const StudyReport& r) {
  const Experiment& ex = r.experiment;
  nlohmann::json j;
  j["experiment"] = {{"name", ex.name},
                     {"model", ex.model.name},
                     {"cluster", ex.cluster.name},
                     {"gpus", ex.gpus},
                     {"global_batch", ex.global_batch},
                     {"seq_len", ex.model.seq_len},
                     {"dtype", dtype_label(ex.dtype, ex.fp8)},
                     {"gpu_memory_bytes", ex.cluster.memory_bytes}};
  j["verdict"] = {{"winner", optional_index(r, r.winner)},
                  {"best_zeropp", optional_index(r, r.best_zeropp)},
                  {"three_d", optional_index(r, r.three_d)},
                  {"best_pp", optional_index(r, r.best_pp)},
                  {"zeropp_vs_3d", optional_number(speedup(r, r.best_zeropp, r.three_d))},
                  {"zeropp_vs_best_pp", optional_number(speedup(r, r.best_zeropp, r.best_pp))},
                  {"best_rival", optional_index(r, r.best_rival)},
                  {"zeropp_vs_best_rival", optional_number(speedup(r, r.best_zeropp, r.best_rival))},
                  {"best_zeropp_cp", optional_index(r, r.best_zeropp_cp)},
                  {"best_rival_cp", optional_index(r, r.best_rival_cp)},
                  {"zeropp_cp_vs_best_rival_cp", optional_number(speedup(r, r.best_zeropp_cp, r.best_rival_cp))},
                  {"zeropp_peak_memory_bytes",
                   r.best_zeropp < 0 ? nlohmann::json(nullptr)
                                     : nlohmann::json(r.rows[r.best_zeropp].estimate.estimate.memory_bytes.peak)}};
  nlohmann::json rows = nlohmann::json::array();
  for (int i = 0; i < static_cast<int>(r.rows.size()); ++i) {
    const CompareRow& row = r.rows[i];
    nlohmann::json x = {{"row", row.spec.name},
                        {"strategy", to_string(row.spec.strategy)},
                        {"family", describe_family(row.spec)},
                        {"found", row.found}};
    if (!row.found) {
      x["note"] = row.note;
    } else {
      x["feasible"] = row.estimate.estimate.feasible;
      x["plan"] = describe_plan(row.plan.parallel);
      x["tp"] = row.plan.parallel.tp;
      x["cp"] = row.plan.parallel.cp;
      x["parallel"] = to_json(row.plan.parallel);
      x["estimate"] = to_json(row.estimate);
      x["speedup_vs_3d"] = fits(row) ? optional_number(speedup(r, i, r.three_d)) : nlohmann::json(nullptr);
      if (const auto c = row_run_cost(r, i)) x["run"] = analytic::to_json(*c);
    }
    rows.push_back(x);
  }
  j["strategies"] = rows;
  j["absent_rows"] = r.absent_rows;

  j["criterion"] = nullptr;
  if (r.have_criterion) {
    const analytic::Criterion& c = r.criterion;
    const analytic::CriterionTime& t = r.criterion_time;
    j["criterion"] = analytic::to_json(c);
    j["criterion"].update({{"row", r.criterion_row},
                           {"b", r.criterion_b},
                           {"U", r.criterion_unit},
                           {"h", ex.model.hidden},
                           {"s", ex.model.seq_len},
                           {"time", analytic::to_json(t, ex.cluster.name)},
                           {"verdict", r.criterion_verdict}});
  }

  j["timeline"] = nullptr;
  if (r.timeline.present) {
    j["timeline"] = {{"row", r.timeline.row},
                     {"plan", describe_plan(r.timeline.parallel)},
                     {"makespan_s", r.timeline.makespan_s},
                     {"bubble_fraction", r.timeline.bubble_fraction},
                     {"peak_activation_microbatches", r.timeline.peak_activation_microbatches},
                     {"grid", r.timeline.grid}};
  }

  j["validation"] = nlohmann::json::array();
  for (const CachedValidation& c : r.validations) {
    const search::ValidationReport& v = c.report;
    j["validation"].push_back(
        {{"set", c.name},
         {"source", v.source},
         {"cluster", v.cluster},
         {"flops", v.flops == PublishedFlops::model ? "model" : "narayanan2021"},
         {"rows", v.rows.size()},
         {"mean_abs_error", v.mean_abs_error},
         {"max_abs_error", v.max_abs_error},
         {"loo", {{"mean_abs_error", v.loo_mean_abs_error}, {"max_abs_error", v.loo_max_abs_error}}},
         {"from_cache", c.from_cache},
         {"key", c.key}});
  }
  j["validation_notes"] = r.validation_notes;
  j["error_band"] = nullptr;
  if (r.band.present) {
    j["error_band"] = {{"typical", r.band.typical}, {"worst", r.band.worst}, {"sets", r.band.sets}};
    if (r.best_zeropp >= 0 && r.three_d >= 0) {
      const double x = speedup(r, r.best_zeropp, r.three_d);
      const auto [tlo, thi] = ratio_band(x, r.band.typical);
      const auto [wlo, whi] = ratio_band(x, r.band.worst);
      j["error_band"]["zeropp_vs_3d"] = {{"typical", {tlo, thi}}, {"worst", {wlo, whi}}};
    }
  }
  j["nominal_warning"] = r.nominal_warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.nominal_warning);
  j["flop_convention"] = r.flop_convention;
  j["criterion_map"] = r.criterion_map ? to_json(*r.criterion_map) : nlohmann::json(nullptr);

  nlohmann::json loop = nlohmann::json::array();
  for (const LoopRun& run : r.loop)
    loop.push_back({{"file", run.file},
                    {"plan", run.plan},
                    {"backend", run.backend},
                    {"world", run.world},
                    {"costs", run.costs},
                    {"measured_iteration_s", run.measured_s},
                    {"predicted_iteration_s", run.predicted_s},
                    {"relative_error", run.error}});
  j["loop_dir"] = r.loop_dir.generic_string();
  j["loop"] = loop;
  nlohmann::json measured = nlohmann::json::array();
  for (const MeasuredGpu& g : r.measured) {
    nlohmann::json steps = nlohmann::json::array(), trainer = nlohmann::json::array();
    for (const MeasuredStep& s : g.steps)
      steps.push_back({{"who", s.who},
                       {"step_s", s.step_s},
                       {"tokens_per_s", s.tokens_per_s},
                       {"mfu", s.mfu},
                       {"peak_memory_gib", s.peak_memory_gib}});
    for (const LoopRun& run : g.trainer)
      trainer.push_back({{"file", run.file},
                         {"plan", run.plan},
                         {"costs", run.costs},
                         {"measured_iteration_s", run.measured_s},
                         {"predicted_iteration_s", run.predicted_s},
                         {"relative_error", run.error}});
    measured.push_back({{"folder", g.folder},
                        {"gpu", g.gpu},
                        {"driver", g.driver},
                        {"steps", steps},
                        {"trainer", trainer},
                        {"mfu_over_torch_eager", g.mfu_over_torch_eager ? nlohmann::json(*g.mfu_over_torch_eager)
                                                                         : nlohmann::json(nullptr)},
                        {"flash_mfu_over_torch_eager", g.flash_mfu_over_torch_eager
                                                           ? nlohmann::json(*g.flash_mfu_over_torch_eager)
                                                           : nlohmann::json(nullptr)}});
  }
  j["measured_gpus"] = measured;

  nlohmann::json figures = nlohmann::json::array();
  for (const StudyFigure& f : r.figures)
    figures.push_back({{"name", f.name}, {"caption", f.caption}, {"link", f.link}});
  j["figures"] = figures;
  j["figures_note"] = r.figures_note;
  return j;
}

}  // namespace zeropp::search
