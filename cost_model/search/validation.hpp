#pragma once
// Predictions against published measurements: configs/validation/*.json. Each row is a published run (model,
// parallel layout, batch) and its measured throughput; the model predicts the same run on ONE cluster profile
// named by the file, with nothing fitted per row, through the executor every command uses
// (simulated_estimate.hpp: the schedule simulator), so a fitted value is fitted with that executor.
// A row's dp_overlap is the plan's parallel.overlap_grad_reduce.
//
// The one fitted scalar: on a profile with an operation table (spec/gpu_ops.hpp), the framework's kernel efficiency
// (spec/framework.hpp: the share of the table's rates the framework sustains over a training step); on an older
// profile, its gemm_efficiency (achieved / peak of the GEMMs, absorbing what the model leaves out).
// run_cross_validation fits ONE value for all rows (minimising the mean |error|) and reports leave-one-out errors:
// row k predicted with the value fitted on the other rows. Those are the figures a `--check` holds to, because they
// are predictions. fit_framework fits one value on several sets together and reports each set predicted with the
// value fitted on the others (leave-one-set-out): whether the fit transfers across GPUs and model sizes.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_model/analytic/scalar_fit.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::search {

using analytic::CrossValidation;
using analytic::ScalarFit;
using analytic::ScalarFitOptions;

// How a published set counts the FLOPs of its "TFLOP/s per GPU".
enum class PublishedFlops {
  narayanan2021,  // Narayanan et al. 2021, eq. 3: four forward-equivalents per layer (recomputation included)
  model,          // model FLOPs only (3 forward-equivalents, no recomputation, full s x s attention): MFU x peak,
                  // Megatron-Core's README (Megatron-LM's num_floating_point_operations counts so)
  tokens,         // not FLOPs: tokens per second per GPU as published (the rows' tokens_per_s_per_gpu)
};

struct ValidationRow {
  std::string name;
  Plan plan;                    // the published run as a plan on the file's cluster profile
  double published_tflops = 0;  // achieved TFLOP/s per GPU as published (FLOPs as the set counts them), or tokens/s
  PublishedFlops flops = PublishedFlops::narayanan2021;  // how (the set's)
  double predicted_tflops = 0;  // filled by run_validation
  double error = 0;             // (predicted - published) / published
  // Filled by run_cross_validation: gemm_efficiency fitted on the other rows, and this row predicted with it.
  double loo_efficiency = 0;
  double loo_predicted_tflops = 0;
  double loo_error = 0;
};

struct ValidationReport {
  std::string source;
  PublishedFlops flops = PublishedFlops::narayanan2021;
  std::string cluster;
  std::vector<ValidationRow> rows;
  double mean_abs_error = 0;  // mean of |error|
  double max_abs_error = 0;
  // Filled by run_cross_validation.
  bool cross_validated = false;
  std::string fitted = "gemm_efficiency";  // what is fitted: "gemm_efficiency" or "kernel_efficiency"
  double profile_efficiency = 0;           // its value as given (the profile's, or the framework's)
  ScalarFit fit;                  // one gemm_efficiency fitted on every row, and its in-sample mean |error|
  double loo_mean_abs_error = 0;
  double loo_max_abs_error = 0;
};

// configs/validation/<name>.json or a path. Throws SpecError naming "validation.rows[i].<field>".
ValidationReport load_validation(const std::string& name_or_path);
ValidationReport load_validation_json(const nlohmann::json&, const std::string& source_name);
// Predicts every row on the profile as given and fills the errors.
void run_validation(ValidationReport&);
// Achieved TFLOP/s per GPU (the set's count) the model predicts for a row with the fitted scalar (kernel_efficiency
// or gemm_efficiency, as above) replaced by `value`.
double predict_tflops(const ValidationRow& row, double value);
// Whether a row's fitted scalar is the framework's kernel_efficiency (a profile with an operation table).
bool fits_kernel_efficiency(const Plan& plan);

// The efficiency search of a validation fit: every grid point is a simulation of every row (tens of ms for the
// 1T row's 512 micro-batches x 64 stages), so a 0.019-wide grid over [0.05, 1], refined by golden section to
// 1e-6: the fitted value to the four digits printed, at a quarter of the default grid's simulations.
inline constexpr ScalarFitOptions kValidationFit{0.05, 1.0, 50, 1e-6};
// Fits one gemm_efficiency on all rows and runs leave-one-out. Throws SpecError("validation.cluster.gemm_table")
// when the profile has a GEMM table for the rows' dtype (gemm_efficiency would then not be used).
void run_cross_validation(ValidationReport&, const ScalarFitOptions& = kValidationFit);
// One value fitted on several sets together, and each set predicted with the value fitted on the others.
struct SetTransfer {
  std::string set;
  double value = 0;                              // fitted on the other sets
  double mean_abs_error = 0, max_abs_error = 0;  // this set's rows predicted with it
};
struct FrameworkFit {
  ScalarFit all;  // fitted on every row of every set
  std::vector<SetTransfer> leave_one_set_out;
};
// Throws SpecError when fewer than two sets are given or a set fits gemm_efficiency (no operation table).
FrameworkFit fit_framework(const std::vector<ValidationReport>& sets, const ScalarFitOptions& = kValidationFit);
// The validation sets shipped under configs/validation/ (names, sorted).
std::vector<std::string> validation_sets();

}  // namespace zeropp::search
