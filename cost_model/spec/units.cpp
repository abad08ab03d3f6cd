#include "cost_model/spec/units.hpp"

#include <cmath>
#include <limits>

namespace zeropp::detail {

double from_unit(double json_value, Unit unit) {
  return unit.divide ? json_value / unit.per_unit : json_value * unit.per_unit;
}

double to_unit(double si, Unit unit) {
  const double guess = unit.divide ? si * unit.per_unit : si / unit.per_unit;
  if (from_unit(guess, unit) == si) return guess;
  // The conversion back rounds once more; one of the guess's neighbours may land exactly on `si`.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double up = guess, down = guess;
  for (int step = 0; step < 4; ++step) {
    up = std::nextafter(up, kInf);
    down = std::nextafter(down, -kInf);
    if (from_unit(up, unit) == si) return up;
    if (from_unit(down, unit) == si) return down;
  }
  return guess;
}

}  // namespace zeropp::detail
