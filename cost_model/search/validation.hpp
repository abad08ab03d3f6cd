#pragma once
// Predictions against published measurements: configs/validation/*.json. Each row is a published run (model,
// parallel layout, batch) and its measured throughput; the model predicts the same run on ONE cluster profile
// named by the file, with nothing fitted per row, through the executor every command uses
// (simulated_estimate.hpp: the schedule simulator), so a fitted value is fitted with that executor.
// A row's dp_overlap is the plan's parallel.overlap_grad_reduce.
//
// The profile's gemm_efficiency is the one scalar no datasheet gives (achieved / peak of the GEMMs; here it also
// absorbs what the model leaves out: kernel launch gaps, HBM below its datasheet rate). run_cross_validation fits
// ONE value for all rows (minimising the mean |error|) and reports leave-one-out errors: row k predicted with the
// value fitted on the other rows. Those are the figures a `--check` holds to, because they are predictions.
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
  model,          // model FLOPs only (3 forward-equivalents, no recomputation): MFU x peak, Megatron-Core's README
};

struct ValidationRow {
  std::string name;
  Plan plan;                    // the published run as a plan on the file's cluster profile
  double published_tflops = 0;  // achieved TFLOP/s per GPU as published (FLOPs as the set counts them)
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
  double profile_efficiency = 0;  // gemm_efficiency of the profile as given
  ScalarFit fit;                  // one gemm_efficiency fitted on every row, and its in-sample mean |error|
  double loo_mean_abs_error = 0;
  double loo_max_abs_error = 0;
};

// configs/validation/<name>.json or a path. Throws SpecError naming "validation.rows[i].<field>".
ValidationReport load_validation(const std::string& name_or_path);
ValidationReport load_validation_json(const nlohmann::json&, const std::string& source_name);
// Predicts every row on the profile as given and fills the errors.
void run_validation(ValidationReport&);
// Achieved TFLOP/s per GPU (the paper's count) the model predicts for a row with the profile's gemm_efficiency
// replaced by `gemm_efficiency`.
double predict_tflops(const ValidationRow& row, double gemm_efficiency);
// The efficiency search of a validation fit: every grid point is a simulation of every row (tens of ms for the
// 1T row's 512 micro-batches x 64 stages), so a 0.019-wide grid over [0.05, 1], refined by golden section to
// 1e-6: the fitted value to the four digits printed, at a quarter of the default grid's simulations.
inline constexpr ScalarFitOptions kValidationFit{0.05, 1.0, 50, 1e-6};
// Fits one gemm_efficiency on all rows and runs leave-one-out. Throws SpecError("validation.cluster.gemm_table")
// when the profile has a GEMM table for the rows' dtype (gemm_efficiency would then not be used).
void run_cross_validation(ValidationReport&, const ScalarFitOptions& = kValidationFit);
// The validation sets shipped under configs/validation/ (names, sorted).
std::vector<std::string> validation_sets();

}  // namespace zeropp::search
