#include "e2e/runtime/rank_layout.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "cost_model/spec/strategy.hpp"

namespace zeropp::e2e {

RankLayout::RankLayout(int tp, int z, int pp, int dp, int cp) : tp_(tp), z_(z), pp_(pp), dp_(dp), cp_(cp) {
  if (tp < 1 || z < 1 || pp < 1 || dp < 1 || cp < 1)
    throw std::invalid_argument(
        fmt::format("rank layout: tp={} z={} pp={} dp={} cp={} must all be >= 1", tp, z, pp, dp, cp));
  if (tp > 1 && z > 1)
    throw std::invalid_argument(fmt::format("rank layout: tp={} and z={} cannot both exceed 1", tp, z));
}

RankLayout RankLayout::for_plan(const ParallelSpec& p) {
  if (data_parallel_sync(p).shard_spans_dp) {
    if (p.cp > 1)  // the trainer refuses it first (gpt_config.cpp); the z*cp*dp shard group is not built here
      throw std::invalid_argument("rank layout: ZeRO-3 sharded over dp with cp > 1 is not laid out");
    return RankLayout(p.tp, p.z * p.dp, p.pp, 1);
  }
  return RankLayout(p);
}

RankCoords RankLayout::coords(int r) const {
  if (r < 0 || r >= world()) throw std::out_of_range(fmt::format("rank layout: rank {} outside world {}", r, world()));
  const int above_cp = r / (inner() * cp_);
  return RankCoords{r % inner(), above_cp % pp_, above_cp / pp_, (r / inner()) % cp_};
}

int RankLayout::world_rank(const RankCoords& c) const {
  return ((c.dp * pp_ + c.pp) * cp_ + c.cp) * inner() + c.inner;
}

}  // namespace zeropp::e2e
