#pragma once
// The Mann-Whitney U test (Wilcoxon rank-sum), one-sided, for the performance regression check: are the current
// run's normalized times stochastically larger than the baseline's? Rank-based, so one descheduled repetition
// moves one rank, not the mean; no normality assumed (benchmark times are skewed to the right).
#include <vector>

namespace zeropp::regression {

struct RankTest {
  double u = 0;       // U of the second sample: pairs (x, y) with y > x, ties counting 1/2
  double p = 1;       // one-sided p-value, P(U >= observed) under "same distribution"
  bool exact = true;  // exact null distribution (no ties, small samples) or normal approximation
};

// H1: values in `y` tend to be larger than values in `x`. Exact when there are no ties and both samples have at
// most kExactLimit values; otherwise the normal approximation with tie and continuity corrections.
RankTest mann_whitney_greater(const std::vector<double>& x, const std::vector<double>& y);

inline constexpr int kExactLimit = 50;

// The number of arrangements of m x-values and n y-values with U = u, for u = 0..m*n (the exact null
// distribution is this count over C(m+n, m)). Doubles: C(100, 50) ~ 1e29 overflows 64-bit integers.
std::vector<double> u_counts(int m, int n);

// The smallest one-sided p-value samples of these sizes can give (complete separation): 1 / C(m+n, m).
double min_p_value(int m, int n);

// The median (mean of the middle two for an even count). Throws std::invalid_argument on an empty input.
double median(std::vector<double> values);

}  // namespace zeropp::regression
