#pragma once
// The divisors of n in increasing order: the candidate sizes of a parallel dimension (tp, pp, dp, z, B).
#include <vector>

namespace zeropp::analytic {

inline std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

}  // namespace zeropp::analytic
