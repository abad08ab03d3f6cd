#include "cost_model/search/validation.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "cost_model/analytic/estimate.hpp"
#include "cost_model/analytic/flops.hpp"
#include "cost_model/search/simulated_estimate.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/json_reader.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/printable.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {

namespace {

namespace fs = std::filesystem;

// Rejects keys outside `allowed` and returns the object (a typo in a published row must not pass silently).
const nlohmann::json& strict_object(const nlohmann::json& j, const std::string& path,
                                    std::initializer_list<std::string_view> allowed) {
  if (!j.is_object()) throw SpecError(path, fmt::format("{} must be a JSON object", path));
  for (const auto& item : j.items())
    if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end())
      throw SpecError(path + "." + item.key(), fmt::format("{}.{}: unknown key", path, item.key()));
  return j;
}

const nlohmann::json& required(const nlohmann::json& j, const std::string& path, const char* key) {
  if (!j.contains(key)) throw SpecError(path + "." + key, fmt::format("{}.{} is required", path, key));
  return j.at(key);
}

// An int in 1..INT_MAX: a larger value is refused, never truncated (the model's own limits apply afterwards).
int positive_int(const nlohmann::json& j, const std::string& path, const char* key) {
  const auto& v = required(j, path, key);
  if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > std::numeric_limits<int>::max())
    throw SpecError(path + "." + key, fmt::format("{}.{}={} must be a positive integer up to {}", path, key, v.dump(),
                                                  std::numeric_limits<int>::max()));
  return v.get<int>();
}

double positive_number(const nlohmann::json& j, const std::string& path, const char* key) {
  const auto& v = required(j, path, key);
  if (!v.is_number() || !(v.get<double>() > 0))
    throw SpecError(path + "." + key, fmt::format("{}.{} must be a positive number", path, key));
  return v.get<double>();
}

// A published throughput, TFLOP/s per GPU: the bound of a cluster's peak (cluster_json.cpp), a typo guard.
constexpr NumberRange kPublishedTflops{0, 1e6};

bool boolean_value(const nlohmann::json& j, const std::string& path, const char* key) {
  const auto& v = required(j, path, key);
  if (!v.is_boolean()) throw SpecError(path + "." + key, fmt::format("{}.{} must be true or false", path, key));
  return v.get<bool>();
}

std::string string_value(const nlohmann::json& j, const std::string& path, const char* key) {
  const auto& v = required(j, path, key);
  if (!v.is_string()) throw SpecError(path + "." + key, fmt::format("{}.{} must be a string", path, key));
  return v.get<std::string>();
}

fs::path validation_dir() { return configs_dir() / "validation"; }

}  // namespace

ValidationReport load_validation_json(const nlohmann::json& j, const std::string& source_name) {
  const std::string root = "validation";
  strict_object(j, root,
                {"source", "cluster", "seq_len", "vocab", "dtype", "recompute", "published_flops", "strategy", "model",
                 "parallel", "rows"});
  ValidationReport report;
  report.source = j.contains("source") ? string_value(j, root, "source") : source_name;
  check_printable(root + ".source", report.source);  // printed as the table's title
  report.cluster = string_value(j, root, "cluster");
  const ClusterSpec node_profile = load_cluster(report.cluster);
  const int seq_len = positive_int(j, root, "seq_len");
  const int vocab = positive_int(j, root, "vocab");
  const Dtype dtype = dtype_from_string(string_value(j, root, "dtype"), root + ".dtype");
  const Recompute recompute = recompute_from_string(string_value(j, root, "recompute"), root + ".recompute");
  if (j.contains("published_flops")) {
    const std::string flops = string_value(j, root, "published_flops");
    if (flops == "model")
      report.flops = PublishedFlops::model;
    else if (flops == "tokens")
      report.flops = PublishedFlops::tokens;
    else if (flops != "narayanan2021")
      throw SpecError(
          root + ".published_flops",
          fmt::format("{}.published_flops=\"{}\" must be one of narayanan2021, model, tokens", root, printable(flops)));
  }
  // The strategy every row runs: Megatron's 3D (tp, pp, v per row), or pure ZeRO-3 / FSDP over all the row's GPUs
  // (z = a node, dp = the nodes; tp = pp = 1).
  const Strategy strategy = j.contains("strategy")
                                ? strategy_from_string(string_value(j, root, "strategy"), root + ".strategy")
                                : Strategy::three_d;
  if (strategy != Strategy::three_d && strategy != Strategy::zero3)
    throw SpecError(root + ".strategy", fmt::format("{}.strategy={} must be 3d or zero3", root, to_string(strategy)));
  // The layer every row shares (default: the GPT layer of 2021: gelu MLP, tied embedding, learned positions).
  ModelSpec layer;
  layer.mlp = MlpKind::gelu;
  layer.tied_embedding = true;
  layer.learned_positions = true;
  if (j.contains("model")) {
    const std::string path = root + ".model";
    const auto& m =
        strict_object(j.at("model"), path, {"mlp", "attention", "tied_embedding", "learned_positions", "dropout"});
    if (m.contains("mlp")) layer.mlp = mlp_from_string(string_value(m, path, "mlp"), path + ".mlp");
    if (m.contains("attention"))
      layer.attention = attention_from_string(string_value(m, path, "attention"), path + ".attention");
    if (m.contains("tied_embedding")) layer.tied_embedding = boolean_value(m, path, "tied_embedding");
    if (m.contains("learned_positions")) layer.learned_positions = boolean_value(m, path, "learned_positions");
    if (m.contains("dropout")) layer.dropout = boolean_value(m, path, "dropout");
  }
  // What every row's plan shares (default: Megatron-LM of 2021: no distributed optimizer, no SP).
  ParallelSpec shared;
  shared.zero_stage = 0;
  bool shared_tp_overlap = false;  // the framework's own overlap (framework.hpp) where tp > 1 with SP
  if (j.contains("parallel")) {
    const std::string path = root + ".parallel";
    const auto& p = strict_object(
        j.at("parallel"), path,
        {"zero_stage", "sequence_parallel", "tp_comm_overlap", "overlap_param_gather", "framework", "reduce_dtype",
         "attention_kernel", "grad_accumulation_fusion", "transformer_impl"});
    if (p.contains("zero_stage")) {
      const auto& v = p.at("zero_stage");
      if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 1)
        throw SpecError(path + ".zero_stage", fmt::format("{}.zero_stage={} must be 0 or 1", path, v.dump()));
      shared.zero_stage = v.get<int>();
    }
    if (p.contains("sequence_parallel")) shared.sequence_parallel = boolean_value(p, path, "sequence_parallel");
    if (p.contains("tp_comm_overlap")) shared_tp_overlap = boolean_value(p, path, "tp_comm_overlap");
    if (p.contains("overlap_param_gather"))
      shared.overlap_param_gather = boolean_value(p, path, "overlap_param_gather");
    if (p.contains("framework"))
      shared.framework = framework_from_string(string_value(p, path, "framework"), path + ".framework");
    if (p.contains("reduce_dtype"))
      shared.reduce_dtype = dtype_from_string(string_value(p, path, "reduce_dtype"), path + ".reduce_dtype");
    // The kernel the set's runs ran (the set file quotes its source); absent: the framework's on the GPU.
    if (p.contains("attention_kernel"))
      shared.attention_kernel =
          attention_kernel_from_string(string_value(p, path, "attention_kernel"), path + ".attention_kernel");
    // As the set's runs ran (Megatron-LM's --gradient-accumulation-fusion; the set file quotes its source).
    if (p.contains("grad_accumulation_fusion"))
      shared.grad_accumulation_fusion = boolean_value(p, path, "grad_accumulation_fusion");
    // Megatron-LM's --transformer-impl (the set file quotes its source); absent: transformer_engine.
    if (p.contains("transformer_impl"))
      shared.transformer_impl =
          transformer_impl_from_string(string_value(p, path, "transformer_impl"), path + ".transformer_impl");
  }

  const auto& rows = required(j, root, "rows");
  if (!rows.is_array() || rows.empty()) throw SpecError(root + ".rows", "validation.rows must be a non-empty array");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string path = fmt::format("{}.rows[{}]", root, i);
    const auto& r = strict_object(rows[i], path,
                                  {"name",
                                   "params_b",
                                   "heads",
                                   "hidden",
                                   "layers",
                                   "seq_len",
                                   "tp",
                                   "pp",
                                   "dp",
                                   "gpus",
                                   "global_batch",
                                   "micro_batch",
                                   "grad_accum",
                                   "v",
                                   "recompute",
                                   "dp_overlap",
                                   "tflops_per_gpu",
                                   "tokens_per_s_per_gpu",
                                   "percent_of_peak",
                                   "mfu_percent"});
    ValidationRow row;
    row.name = string_value(r, path, "name");
    check_printable(path + ".name", row.name);  // the table prints it
    ModelSpec& m = row.plan.model;
    m = layer;
    m.name = row.name;
    m.layers = positive_int(r, path, "layers");
    m.hidden = positive_int(r, path, "hidden");
    m.heads = positive_int(r, path, "heads");
    m.seq_len = r.contains("seq_len") ? positive_int(r, path, "seq_len") : seq_len;
    m.vocab = vocab;

    const int gpus = positive_int(r, path, "gpus");
    ClusterSpec& c = row.plan.cluster;
    c = node_profile;  // one profile for every row; only the node count follows the published run
    if (gpus % c.gpus_per_node != 0)
      throw SpecError(path + ".gpus", fmt::format("{}.gpus={} is not a multiple of {}.gpus_per_node={}", path, gpus,
                                                  report.cluster, c.gpus_per_node));
    c.nodes = gpus / c.gpus_per_node;

    ParallelSpec& p = row.plan.parallel;
    p = shared;
    p.strategy = strategy;
    const bool zero3 = strategy == Strategy::zero3;
    p.tp = zero3 ? 1 : positive_int(r, path, "tp");
    p.pp = zero3 ? 1 : positive_int(r, path, "pp");
    p.v = zero3 ? 1 : positive_int(r, path, "v");
    if (zero3 && (r.contains("tp") || r.contains("pp") || r.contains("v")))
      throw SpecError(path,
                      fmt::format("{}: a zero3 set's rows give no tp, pp or v (each GPU holds the whole layer)", path));
    // Pure ZeRO-3: one shard group of all the GPUs, written as a node (z) times the nodes (dp).
    p.z = zero3 ? std::min(gpus, c.gpus_per_node) : 1;
    if (zero3) p.zero_stage = 3;
    const long long inner = 1LL * p.tp * p.pp * p.z;
    if (gpus % inner != 0)
      throw SpecError(path + ".gpus", fmt::format("{}.gpus={} is not a multiple of tp*pp*z={}", path, gpus, inner));
    p.dp = static_cast<int>(gpus / inner);
    if (r.contains("dp") && positive_int(r, path, "dp") != p.dp)
      throw SpecError(path + ".dp", fmt::format("{}.dp={} disagrees with gpus/(tp*pp)={}", path, r.at("dp").dump(), p.dp));
    p.schedule = p.v > 1 ? ScheduleKind::interleaved : ScheduleKind::one_f_one_b;
    p.micro_batch = positive_int(r, path, "micro_batch");
    const int global_batch = positive_int(r, path, "global_batch");
    const long long per_step = 1LL * p.micro_batch * p.dp * p.z;
    if (global_batch % per_step != 0)
      throw SpecError(path + ".global_batch", fmt::format("{}.global_batch={} is not a multiple of micro_batch*dp={}",
                                                          path, global_batch, per_step));
    p.micro_batches = static_cast<int>(global_batch / per_step);
    if (r.contains("grad_accum") && positive_int(r, path, "grad_accum") != p.micro_batches)
      throw SpecError(path + ".grad_accum",
                      fmt::format("{}.grad_accum={} disagrees with global_batch/(micro_batch*gpus)={}", path,
                                  r.at("grad_accum").dump(), p.micro_batches));
    p.unit = p.micro_batches;
    p.recompute = r.contains("recompute")
                      ? recompute_from_string(string_value(r, path, "recompute"), path + ".recompute")
                      : recompute;
    p.sequence_parallel = shared.sequence_parallel && p.tp > 1;
    // Megatron's flag needs SP and tp > 1.
    p.tp_comm_overlap =
        shared_tp_overlap && p.sequence_parallel ? framework_tp_overlap(framework_of(p)) : TpCommOverlap::none;
    p.dtype = dtype;
    p.overlap_grad_reduce = zero3 && !r.contains("dp_overlap") ? true : boolean_value(r, path, "dp_overlap");
    const char* metric = report.flops == PublishedFlops::tokens ? "tokens_per_s_per_gpu" : "tflops_per_gpu";
    row.published_tflops = positive_number(r, path, metric);
    row.flops = report.flops;
    check_number(path, metric, row.published_tflops,
                 report.flops == PublishedFlops::tokens ? NumberRange{0, 1e12} : kPublishedTflops);
    validate(row.plan);
    report.rows.push_back(std::move(row));
  }
  return report;
}

ValidationReport load_validation(const std::string& name_or_path) {
  fs::path path = name_or_path;
  std::error_code ec;  // a name the file system rejects is a set that does not exist, not an exception
  if (!fs::exists(path, ec)) path = validation_dir() / (name_or_path + ".json");
  if (!fs::is_regular_file(path, ec)) {
    const auto known = validation_sets();
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw SpecError("validation", fmt::format("no validation set \"{}\" (known: {})", name_or_path, list));
  }
  return load_validation_json(read_json_file(path), path.string());
}

namespace {

// The row timed by the executor every command uses (simulated_estimate: the schedule simulator).
double predict_plan_tflops(const Plan& plan, PublishedFlops counted) {
  analytic::EstimateOptions options;
  options.validate = false;  // checked when the row was loaded
  const analytic::Estimate est = simulated_estimate(plan, options).estimate;
  // Throughput as the set counts it, over the same GPUs.
  const double per_gpu_second = 1.0 / (est.time_s.iteration * plan.parallel.world());
  switch (counted) {
    case PublishedFlops::tokens:
      return static_cast<double>(plan.parallel.global_batch()) * plan.model.seq_len * per_gpu_second;
    case PublishedFlops::model:
      return analytic::model_flops_per_iteration(plan.model, plan.parallel.global_batch()) * per_gpu_second / 1e12;
    case PublishedFlops::narayanan2021:
      break;
  }
  return analytic::narayanan_flops_per_iteration(plan.model, plan.parallel.global_batch()) * per_gpu_second / 1e12;
}

}  // namespace

bool fits_kernel_efficiency(const Plan& plan) {
  const auto table = plan.cluster.gemm_table.find(plan.parallel.dtype);
  const bool calibrated = table != plan.cluster.gemm_table.end() && !table->second.empty();
  return !calibrated && plan.cluster.gpu && plan.cluster.gpu->matmul_efficiency.known();
}

double fitted_value(const Plan& plan) {
  return fits_kernel_efficiency(plan) ? kernel_efficiency(plan.parallel) : plan.cluster.gemm_efficiency;
}

double predict_tflops(const ValidationRow& row, double value) {
  Plan plan = row.plan;
  if (fits_kernel_efficiency(plan))
    plan.parallel.kernel_efficiency = value;
  else
    plan.cluster.gemm_efficiency = value;
  return predict_plan_tflops(plan, row.flops);
}

namespace {
// What the set's leave-one-out refits, by the rows' framework: named in run_validation too, so a report whose
// leave-one-out part comes from the cache (validation_cache.cpp) names the same scalar as one that ran it.
void name_fitted_scalar(ValidationReport& report) {
  if (report.rows.empty()) return;
  report.fitted = fits_kernel_efficiency(report.rows.front().plan) ? "kernel_efficiency" : "gemm_efficiency";
}
}  // namespace

void run_validation(ValidationReport& report) {
  name_fitted_scalar(report);
  double sum = 0, worst = 0;
  for (ValidationRow& row : report.rows) {
    row.predicted_tflops = predict_plan_tflops(row.plan, report.flops);
    row.error = (row.predicted_tflops - row.published_tflops) / row.published_tflops;
    sum += std::abs(row.error);
    worst = std::max(worst, std::abs(row.error));
  }
  report.mean_abs_error = report.rows.empty() ? 0 : sum / report.rows.size();
  report.max_abs_error = worst;
}

void run_cross_validation(ValidationReport& report, const ScalarFitOptions& options) {
  if (report.rows.empty()) throw SpecError("validation.rows", "validation.rows is empty");
  for (const ValidationRow& row : report.rows) {
    const auto table = row.plan.cluster.gemm_table.find(row.plan.parallel.dtype);
    if (table != row.plan.cluster.gemm_table.end() && !table->second.empty())
      throw SpecError("validation.cluster.gemm_table",
                      fmt::format("{} has a gemm_table for {}, which overrides gemm_efficiency: there is no single "
                                  "efficiency to fit",
                                  report.cluster, to_string(row.plan.parallel.dtype)));
  }
  name_fitted_scalar(report);
  report.profile_efficiency = fitted_value(report.rows.front().plan);
  std::vector<double> published;
  for (const ValidationRow& row : report.rows) published.push_back(row.published_tflops);
  const CrossValidation cv = leave_one_out(
      [&report](std::size_t i, double x) { return predict_tflops(report.rows[i], x); }, published, options);
  report.fit = cv.all;
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    report.rows[i].loo_efficiency = cv.loo_value[i];
    report.rows[i].loo_predicted_tflops = cv.loo_predicted[i];
    report.rows[i].loo_error = cv.loo_error[i];
  }
  report.loo_mean_abs_error = cv.loo_mean_abs_error;
  report.loo_max_abs_error = cv.loo_max_abs_error;
  report.cross_validated = true;
}

FrameworkFit fit_framework(const std::vector<ValidationReport>& sets, const ScalarFitOptions& options) {
  if (sets.size() < 2) throw SpecError("validation", "a framework fit needs at least two validation sets");
  for (const ValidationReport& set : sets)
    for (const ValidationRow& row : set.rows)
      if (!fits_kernel_efficiency(row.plan))
        throw SpecError("validation.cluster", fmt::format("{} ({}): the cluster has no operation table "
                                                          "(gpu.matmul_efficiency): no kernel_efficiency to fit",
                                                          set.source, set.cluster));
  // Every row of the chosen sets, as one list.
  const auto fit_on = [&](std::optional<std::size_t> skip_set) {
    std::vector<const ValidationRow*> rows;
    for (std::size_t s = 0; s < sets.size(); ++s)
      if (!skip_set || *skip_set != s)
        for (const ValidationRow& row : sets[s].rows) rows.push_back(&row);
    std::vector<double> published;
    for (const ValidationRow* row : rows) published.push_back(row->published_tflops);
    return analytic::fit_scalar([&rows](std::size_t i, double x) { return predict_tflops(*rows[i], x); }, published,
                                options);
  };
  FrameworkFit out;
  out.all = fit_on(std::nullopt);
  for (std::size_t s = 0; s < sets.size(); ++s) {
    SetTransfer t;
    t.set = sets[s].source;
    t.value = fit_on(s).value;
    for (const ValidationRow& row : sets[s].rows) {
      const double error = std::abs(predict_tflops(row, t.value) / row.published_tflops - 1);
      t.mean_abs_error += error / sets[s].rows.size();
      t.max_abs_error = std::max(t.max_abs_error, error);
    }
    out.leave_one_set_out.push_back(t);
  }
  return out;
}

std::vector<std::string> validation_sets() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(validation_dir(), ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace zeropp::search
