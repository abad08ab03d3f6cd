// The one-scalar fit and its leave-one-out cross-validation, on predictors whose answers are known by hand.
#include "cost_model/analytic/scalar_fit.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "cost_model/spec/error.hpp"

namespace zeropp::analytic {
namespace {

// Two rows, published 1 and 1, predictions x and 2x. E(x) = (|x - 1| + |2x - 1|) / 2 falls with slope -3/2 below
// x = 1/2 and rises with slope +1/2 between 1/2 and 1: minimum at x = 1/2, E = 1/4.
// Leave row 0 out: 2x = 1 gives x = 1/2, row 0 predicted 1/2, error -1/2.
// Leave row 1 out: x = 1, row 1 predicted 2, error +1. LOO mean 3/4, max 1.
TEST(ScalarFit, HandSolvedTwoRows) {
  const RowPredictor f = [](std::size_t i, double x) { return i == 0 ? x : 2 * x; };
  const std::vector<double> y{1, 1};
  const ScalarFit fit = fit_scalar(f, y, {.lo = 0.1, .hi = 1.5});
  EXPECT_NEAR(fit.value, 0.5, 1e-6);
  EXPECT_NEAR(fit.mean_abs_error, 0.25, 1e-6);
  const CrossValidation cv = leave_one_out(f, y, {.lo = 0.1, .hi = 1.5});
  EXPECT_NEAR(cv.all.value, 0.5, 1e-6);
  ASSERT_EQ(cv.loo_value.size(), 2u);
  EXPECT_NEAR(cv.loo_value[0], 0.5, 1e-6);
  EXPECT_NEAR(cv.loo_error[0], -0.5, 1e-6);
  EXPECT_NEAR(cv.loo_value[1], 1.0, 1e-6);
  EXPECT_NEAR(cv.loo_predicted[1], 2.0, 1e-5);
  EXPECT_NEAR(cv.loo_error[1], 1.0, 1e-5);
  EXPECT_NEAR(cv.loo_mean_abs_error, 0.75, 1e-5);
  EXPECT_NEAR(cv.loo_max_abs_error, 1.0, 1e-5);
}

// Synthetic rows shaped like the cost model: time = compute / x + fixed, throughput = work / time. Published values
// generated with x = 0.6 must give back 0.6 in-sample and in every fold, with zero error.
TEST(ScalarFit, RecoversTheTrueValueOnSyntheticRows) {
  const std::vector<double> work{10, 20, 30, 40, 50}, compute{1, 1.5, 2, 2.5, 3}, fixed{0.1, 0.4, 0.2, 0.8, 0.3};
  const RowPredictor f = [&](std::size_t i, double x) { return work[i] / (compute[i] / x + fixed[i]); };
  std::vector<double> y;
  for (std::size_t i = 0; i < work.size(); ++i) y.push_back(f(i, 0.6));
  const CrossValidation cv = leave_one_out(f, y);
  EXPECT_NEAR(cv.all.value, 0.6, 1e-6);
  EXPECT_LT(cv.all.mean_abs_error, 1e-6);
  for (std::size_t i = 0; i < y.size(); ++i) {
    EXPECT_NEAR(cv.loo_value[i], 0.6, 1e-6);
    EXPECT_LT(std::abs(cv.loo_error[i]), 1e-6);
  }
  EXPECT_LT(cv.loo_max_abs_error, 1e-6);
}

// Noise on one row: the fit (a median-like minimiser of absolute errors) ignores the outlier in-sample, and the
// outlier's own leave-one-out error is its full deviation.
TEST(ScalarFit, AnOutlierShowsUpInItsOwnFold) {
  const RowPredictor f = [](std::size_t, double x) { return 100 * x; };
  const std::vector<double> y{60, 60, 60, 60, 90};  // truth x = 0.6; the last row is 50% high
  const CrossValidation cv = leave_one_out(f, y);
  EXPECT_NEAR(cv.all.value, 0.6, 1e-6);
  EXPECT_NEAR(cv.loo_value[4], 0.6, 1e-6);
  EXPECT_NEAR(cv.loo_error[4], 60.0 / 90 - 1, 1e-6);
  EXPECT_NEAR(cv.loo_max_abs_error, 1.0 / 3, 1e-6);
}

TEST(ScalarFit, BadInputsNameTheRule) {
  const RowPredictor f = [](std::size_t, double x) { return x; };
  EXPECT_THROW(fit_scalar(f, {}), SpecError);
  EXPECT_THROW(fit_scalar(f, {1.0}, {}, 0), SpecError);  // the only row skipped
  EXPECT_THROW(fit_scalar(f, {0.0}), SpecError);
  EXPECT_THROW(fit_scalar(f, {1.0}, {.lo = 1, .hi = 0.5}), SpecError);
  EXPECT_THROW(leave_one_out(f, {1.0}), SpecError);
  try {
    fit_scalar(f, {1.0, -2.0});
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "fit.published");
  }
}

}  // namespace
}  // namespace zeropp::analytic
