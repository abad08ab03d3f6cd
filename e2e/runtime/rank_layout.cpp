#include "e2e/runtime/rank_layout.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "cost_model/spec/strategy.hpp"

namespace zeropp::e2e {

RankLayout::RankLayout(int tp, int z, int pp, int dp, int cp) : grid_(1, 1, 1, 1, 1, 1) {
  if (tp < 1 || z < 1 || pp < 1 || dp < 1 || cp < 1)
    throw std::invalid_argument(
        fmt::format("rank layout: tp={} z={} pp={} dp={} cp={} must all be >= 1", tp, z, pp, dp, cp));
  grid_ = RankGrid(tp, cp, z, 1, dp, pp);
}

RankLayout RankLayout::for_plan(const ParallelSpec& p) {
  return RankLayout(RankGrid::of(p), data_parallel_sync(p).shard_spans_dp);
}

RankCoords RankLayout::coords(int r) const {
  const GridCoords g = grid_.coords(r);
  return RankCoords{g[GridDim::tp], grid_.index(kShardMask, r), g[GridDim::cp], g[GridDim::pp], g[GridDim::dp]};
}

int RankLayout::world_rank(const RankCoords& c) const {
  if (c.z < 0 || c.z >= z()) throw std::out_of_range(fmt::format("rank layout: z index {} outside [0, {})", c.z, z()));
  GridCoords g;
  const int z = grid_.size(GridDim::z);
  g[GridDim::tp] = c.tp;
  g[GridDim::z] = c.z % z;
  g[GridDim::dp_shard] = c.z / z;
  g[GridDim::cp] = c.cp;
  g[GridDim::dp] = c.dp;
  g[GridDim::pp] = c.pp;
  return grid_.rank(g);
}

}  // namespace zeropp::e2e
