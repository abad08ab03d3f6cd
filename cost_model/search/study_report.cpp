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
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {
namespace {

bool fits(const CompareRow& r) { return r.found && r.estimate.estimate.feasible; }
bool is_zeropp(const CompareRow& r) { return zeropp::is_zeropp(r.spec.strategy); }
bool is_pp_baseline(const CompareRow& r) {
  return r.spec.strategy == Strategy::pp_zero1 || r.spec.strategy == Strategy::zero3_pp;
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

struct FigureSpec {
  const char* name;
  const char* caption;
  bool default_only;  // drawn from the default experiment only
};

// The figures plots/make_all.sh writes (their --name defaults) and what each shows.
const FigureSpec kFigures[] = {
    {"memory_breakdown",
     "memory per GPU of every strategy's chosen plan, by part, against the GPU limit (model output for the default "
     "experiment, `zeropp compare`)",
     true},
    {"throughput_scaling",
     "throughput per GPU of every strategy across model sizes and GPU counts (model output, `zeropp compare`, on "
     "the cluster plots/make_all.sh was run for; default dgx-a100-80gb)",
     false},
    {"criterion_map",
     "ZeroPP / TP communication ratio, the 2sUb = 9h line and the time-based boundary, zoo models marked (model "
     "output, `zeropp criterion`)",
     false},
    {"schedule_gantt",
     "the ZeroPP plan of results/loop (pp 2, v 2, U 4, B 8): simulated with the trainer's measured action costs, "
     "beside a measured `zeropp-train` trace on the development CPU",
     false},
    {"validation",
     "predicted vs published TFLOP/s per GPU (published: Narayanan et al. 2021 on A100s) with the error band", false},
    {"loop_prediction",
     "predicted vs measured trainer iteration time (measured: `zeropp-train` on the development CPU, results/loop)",
     false},
};

std::vector<StudyFigure> find_figures(const Experiment& ex, const StudyOptions& options) {
  std::vector<StudyFigure> out;
  const std::filesystem::path dir = options.results_dir / "figures";
  std::filesystem::path base = options.output_path.parent_path();
  if (base.empty()) base = ".";
  std::error_code ec;
  for (const FigureSpec& f : kFigures) {
    if (f.default_only && ex.name != default_experiment_name()) continue;
    const std::filesystem::path png = dir / (std::string(f.name) + ".png");
    if (!std::filesystem::is_regular_file(png, ec)) continue;
    const std::filesystem::path rel =
        std::filesystem::weakly_canonical(png, ec).lexically_relative(std::filesystem::weakly_canonical(base, ec));
    out.push_back({f.name, f.caption, (rel.empty() ? png : rel).generic_string()});
  }
  return out;
}

nlohmann::json optional_index(const StudyReport& r, int i) {
  return i < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.rows[i].spec.name);
}

nlohmann::json optional_number(double x) { return x > 0 ? nlohmann::json(x) : nlohmann::json(nullptr); }

}  // namespace

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
  r.experiment = experiment;
  r.command = options.command;
  r.run_cost = options.run_cost;
  // One search for the table and the criterion's verdict, as `zeropp compare` and `zeropp criterion` run it.
  const std::vector<CompareRowSpec> specs = select_rows(experiment, {});
  const SearchResult searched = run_search(experiment, search_options(specs, options.compare));
  r.rows = rows_of(searched, specs);
  r.winner = fastest(r.rows, [](const CompareRow&) { return true; });
  r.best_zeropp = fastest(r.rows, is_zeropp);
  r.three_d = fastest(r.rows, [](const CompareRow& row) { return row.spec.strategy == Strategy::three_d; });
  r.best_pp = fastest(r.rows, is_pp_baseline);

  // The criterion at the b and U of the winning ZeroPP plan; when no ZeroPP plan fits, of the zeropp_b row's
  // closest plan (what `zeropp criterion --experiment` takes), so the section still says where the line lies.
  int crit = r.best_zeropp;
  if (crit < 0)
    for (int i = 0; i < static_cast<int>(r.rows.size()); ++i)
      if (r.rows[i].found && r.rows[i].spec.strategy == Strategy::zeropp_b) crit = i;
  if (crit >= 0) {
    const ParallelSpec& p = r.rows[crit].plan.parallel;
    r.have_criterion = true;
    r.criterion_index = crit;
    r.criterion_row = r.rows[crit].spec.name;
    r.criterion_b = p.micro_batch;
    r.criterion_unit = p.unit;
    r.criterion = analytic::criterion({experiment.model.hidden, experiment.model.seq_len, p.micro_batch, p.unit});
    r.criterion_time =
        analytic::criterion_time(experiment.model, experiment.cluster, p.micro_batch, p.unit, experiment.dtype);
    r.criterion_verdict = criterion_verdict(searched).paragraph;
  }
  if (r.best_zeropp >= 0) r.timeline = timeline_of(r.rows[r.best_zeropp], options.grid_width);

  if (!options.validation_set.empty()) {
    r.validation = search::load_validation(options.validation_set);
    search::run_validation(r.validation);
    search::run_cross_validation(r.validation);
    r.have_validation = true;
  }
  r.loop_dir = options.results_dir / "loop";
  r.loop = load_loop_runs(r.loop_dir);
  r.figures = find_figures(experiment, options);
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
                     {"dtype", to_string(ex.dtype)},
                     {"gpu_memory_bytes", ex.cluster.memory_bytes}};
  j["verdict"] = {{"winner", optional_index(r, r.winner)},
                  {"best_zeropp", optional_index(r, r.best_zeropp)},
                  {"three_d", optional_index(r, r.three_d)},
                  {"best_pp", optional_index(r, r.best_pp)},
                  {"zeropp_vs_3d", optional_number(speedup(r, r.best_zeropp, r.three_d))},
                  {"zeropp_vs_best_pp", optional_number(speedup(r, r.best_zeropp, r.best_pp))},
                  {"zeropp_peak_memory_bytes",
                   r.best_zeropp < 0 ? nlohmann::json(nullptr)
                                     : nlohmann::json(r.rows[r.best_zeropp].estimate.estimate.memory_bytes.peak)}};
  nlohmann::json rows = nlohmann::json::array();
  for (int i = 0; i < static_cast<int>(r.rows.size()); ++i) {
    const CompareRow& row = r.rows[i];
    nlohmann::json x = {{"row", row.spec.name}, {"strategy", to_string(row.spec.strategy)}, {"found", row.found}};
    if (!row.found) {
      x["note"] = row.note;
    } else {
      x["feasible"] = row.estimate.estimate.feasible;
      x["plan"] = describe_plan(row.plan.parallel);
      x["parallel"] = to_json(row.plan.parallel);
      x["estimate"] = to_json(row.estimate);
      x["speedup_vs_3d"] = fits(row) ? optional_number(speedup(r, i, r.three_d)) : nlohmann::json(nullptr);
      if (const auto c = row_run_cost(r, i)) x["run"] = analytic::to_json(*c);
    }
    rows.push_back(x);
  }
  j["strategies"] = rows;

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

  j["validation"] = nullptr;
  if (r.have_validation) {
    const search::ValidationReport& v = r.validation;
    j["validation"] = {{"source", v.source},
                       {"cluster", v.cluster},
                       {"rows", v.rows.size()},
                       {"mean_abs_error", v.mean_abs_error},
                       {"max_abs_error", v.max_abs_error},
                       {"loo", {{"mean_abs_error", v.loo_mean_abs_error}, {"max_abs_error", v.loo_max_abs_error}}}};
  }

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

  nlohmann::json figures = nlohmann::json::array();
  for (const StudyFigure& f : r.figures)
    figures.push_back({{"name", f.name}, {"caption", f.caption}, {"link", f.link}});
  j["figures"] = figures;
  return j;
}

}  // namespace zeropp::search
