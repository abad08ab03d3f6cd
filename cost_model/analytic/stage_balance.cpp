#include "cost_model/analytic/stage_balance.hpp"

namespace zeropp::analytic {

double RankShares::others(int slowest) const {
  if (pp < 2) return 1;
  const double all = first + last + (pp - 2) * middle;
  const double own = slowest == 0 ? first : slowest == pp - 1 ? last : middle;
  return (all - own) / (pp - 1);
}

RankShares rank_shares(const StageLayout& layout, int layers_per_chunk) {
  RankShares k;
  k.pp = layout.pp;
  if (layout.even()) return k;  // exactly 1 everywhere
  const double regular = static_cast<double>(layout.v) * layers_per_chunk;
  k.first = layout.rank_layers(0) / regular;
  k.last = layout.rank_layers(layout.pp - 1) / regular;
  k.middle = layout.pp > 2 ? layout.rank_layers(1) / regular : k.first;
  return k;
}

double stage_share(const StageLayout& layout, int vs, int layers_per_chunk) {
  const int layers = layout.stage_layers(vs);
  return layers == layers_per_chunk ? 1.0 : static_cast<double>(layers) / layers_per_chunk;
}

}  // namespace zeropp::analytic
