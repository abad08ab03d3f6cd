#pragma once
// Predictions against published measurements: configs/validation/*.json. Each row is a published run (model,
// parallel layout, batch) and its measured throughput; the model predicts the same run on ONE cluster profile
// named by the file, with nothing fitted per row.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_model/spec/config.hpp"

namespace zeropp::analytic {

struct ValidationRow {
  std::string name;
  Plan plan;                       // the published run as a plan on the file's cluster profile
  bool dp_overlap = true;          // gradient all-reduce overlapped with the backward (PyTorch DDP) or not
  double published_tflops = 0;     // achieved TFLOP/s per GPU as published (FLOPs incl. recompute)
  double predicted_tflops = 0;     // filled by run_validation
  double error = 0;                // (predicted - published) / published
};

struct ValidationReport {
  std::string source;
  std::string cluster;
  std::vector<ValidationRow> rows;
  double mean_abs_error = 0;  // mean of |error|
  double max_abs_error = 0;
};

// configs/validation/<name>.json or a path. Throws SpecError naming "validation.rows[i].<field>".
ValidationReport load_validation(const std::string& name_or_path);
ValidationReport load_validation_json(const nlohmann::json&, const std::string& source_name);
// Predicts every row and fills the errors.
void run_validation(ValidationReport&);
// The validation sets shipped under configs/validation/ (names, sorted).
std::vector<std::string> validation_sets();

}  // namespace zeropp::analytic
