#pragma once
// The optimizer step's rate from the trainer's OPT_STEP benchmarks ("optimizer/<backend>/<dtype>/params:P"):
// t = P / rate, one rate in parameters per second per GPU (ClusterSpec::optimizer_rate). The step is a
// streaming pass over P elements of four arrays with no reuse, so it has no size-dependent efficiency to model
// beyond a constant per-element cost; the calibration's held-out sizes check that.
#include <string>
#include <vector>

namespace zeropp::calibrate {

struct OptimizerSample {
  double params = 0;   // P, parameters updated
  double seconds = 0;  // measured time of one step
};

// Least squares on the relative error, sum ((P_i / rate - t_i) / t_i)^2, whose minimum is closed-form in
// x = 1 / rate: x = sum(P_i / t_i) / sum((P_i / t_i)^2). Throws SpecError(field) without samples or with a
// non-positive size or time.
double fit_optimizer_rate(const std::vector<OptimizerSample>& samples, const std::string& field);

}  // namespace zeropp::calibrate
