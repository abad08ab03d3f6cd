#include "e2e/runtime/rank_groups.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace zeropp::e2e {

RankGroups RankGroups::split(Communicator& world, const RankLayout& layout) {
  if (world.size() != layout.world())
    throw std::invalid_argument(
        fmt::format("world size {} differs from the layout's {}", world.size(), layout.world()));
  RankGroups g;
  g.world = &world;
  const RankCoords c = layout.coords(world.rank());
  g.coords = c;
  g.pp = world.split(layout.pp_color(c), c.pp, "pp");
  g.tp = world.split(layout.tp_color(c), c.tp, "tp");
  g.z = world.split(layout.z_color(c), layout.shard_index(c), "z");
  g.cp = world.split(layout.cp_color(c), c.cp, "cp");
  g.dp = world.split(layout.dp_color(c), layout.sync_index(c), "dp");
  // Members: pipeline ranks 0 and pp-1, one group for each tp rank, CP rank and dp index (tp ranks hold different
  // wte shards, or identical ones); the ZeRO-3 ranks of both stages join one group (each contributes a disjoint
  // shard). The group over pp and the shard dimensions of the grid, its middle pipeline ranks left out.
  const bool member = c.pp == 0 || c.pp == layout.pp() - 1;
  const GridMask embed_mask = kGridPp | RankLayout::kShardMask;
  const RankGrid& grid = layout.grid();
  const int groups = grid.world() / grid.size(embed_mask);
  const int color = member ? grid.color(embed_mask, world.rank()) : groups + world.rank();
  g.embed = world.split(color, world.rank(), "embed");
  return g;
}

nlohmann::json RankGroups::stats_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const Communicator* comm : {world, pp.get(), tp.get(), z.get(), cp.get(), dp.get(), embed.get()}) {
    if (comm == nullptr) continue;
    nlohmann::json s = comm->stats().to_json();
    if (!s.empty()) out[comm->group()] = std::move(s);
  }
  return out;
}

void RankGroups::reset_stats() {
  for (Communicator* comm : {world, pp.get(), tp.get(), z.get(), cp.get(), dp.get(), embed.get()})
    if (comm != nullptr) comm->stats().reset();
}

}  // namespace zeropp::e2e
