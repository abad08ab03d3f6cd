#include "cost_model/calibrate/optimizer_fit.hpp"

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"

namespace zeropp::calibrate {

double fit_optimizer_rate(const std::vector<OptimizerSample>& samples, const std::string& field) {
  if (samples.empty()) throw SpecError(field, field + ": no optimizer results to fit");
  double sum = 0, sum_squares = 0;
  for (const auto& s : samples) {
    if (!(s.params > 0) || !(s.seconds > 0)) {
      throw SpecError(field, fmt::format("{}: an optimizer result needs params > 0 and time > 0 (got {} params in "
                                         "{} s)",
                                         field, s.params, s.seconds));
    }
    const double r = s.params / s.seconds;  // this sample's rate
    sum += r;
    sum_squares += r * r;
  }
  return sum_squares / sum;  // 1 / x
}

}  // namespace zeropp::calibrate
