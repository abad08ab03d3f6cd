#include "e2e/runtime/rank_layout.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "cost_model/spec/strategy.hpp"

namespace zeropp::e2e {

RankLayout::RankLayout(int tp, int z, int pp, int dp, int cp) : grid_(1, 1, 1, 1, 1, 1), tp_(tp), z_(z) {
  if (tp < 1 || z < 1 || pp < 1 || dp < 1 || cp < 1)
    throw std::invalid_argument(
        fmt::format("rank layout: tp={} z={} pp={} dp={} cp={} must all be >= 1", tp, z, pp, dp, cp));
  if (tp > 1 && z > 1)
    throw std::invalid_argument(fmt::format("rank layout: tp={} and z={} cannot both exceed 1", tp, z));
  grid_ = RankGrid(tp, cp, z, 1, dp, pp);
}

RankLayout RankLayout::for_plan(const ParallelSpec& p) {
  const RankGrid grid = RankGrid::of(p);
  const int z = grid.size(kGridZ | kGridDpShard);
  if (p.tp > 1 && z > 1)
    throw std::invalid_argument(fmt::format("rank layout: tp={} and a shard group of {} cannot both exceed 1", p.tp, z));
  return RankLayout(grid, p.tp, z, data_parallel_sync(p).shard_spans_dp);
}

RankCoords RankLayout::coords(int r) const {
  const GridCoords g = grid_.coords(r);
  return RankCoords{grid_.index(inner_mask(), r), g[GridDim::cp], g[GridDim::pp], g[GridDim::dp]};
}

int RankLayout::world_rank(const RankCoords& c) const {
  if (c.inner < 0 || c.inner >= inner())
    throw std::out_of_range(fmt::format("rank layout: inner index {} outside [0, {})", c.inner, inner()));
  GridCoords g;
  g[GridDim::tp] = tp_ > 1 ? c.inner : 0;
  const int z = grid_.size(GridDim::z);
  g[GridDim::z] = tp_ > 1 ? 0 : c.inner % z;
  g[GridDim::dp_shard] = tp_ > 1 ? 0 : c.inner / z;
  g[GridDim::cp] = c.cp;
  g[GridDim::dp] = c.dp;
  g[GridDim::pp] = c.pp;
  return grid_.rank(g);
}

}  // namespace zeropp::e2e
