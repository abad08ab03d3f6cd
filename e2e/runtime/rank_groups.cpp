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
  const std::string inner_name = layout.tp() > 1 ? "tp" : "z";
  g.pp = world.split(layout.pp_color(c), c.pp, "pp");
  g.inner = world.split(layout.inner_color(c), c.inner, inner_name);
  g.cp = world.split(layout.cp_color(c), c.cp, "cp");
  g.dp = world.split(layout.dp_color(c), layout.sync_index(c), "dp");
  if (layout.cp_shards()) {
    g.shard_own = world.split(layout.shard_color(c), layout.shard_index(c), "z_cp");
    g.shard = g.shard_own.get();
  } else {
    g.shard = g.inner.get();
  }
  // Members: pipeline ranks 0 and pp-1, one group for each tp index, CP rank and dp index (tp ranks hold
  // identical wte gradients); the ZeRO-3 ranks of both stages join one group (each contributes a disjoint shard).
  // The group over pp and the shard dimensions of the grid, its middle pipeline ranks left out.
  const bool member = c.pp == 0 || c.pp == layout.pp() - 1;
  const GridMask embed_mask = kGridPp | (layout.tp() > 1 ? 0u : layout.inner_mask());
  const RankGrid& grid = layout.grid();
  const int groups = grid.world() / grid.size(embed_mask);
  const int color = member ? grid.color(embed_mask, world.rank()) : groups + world.rank();
  g.embed = world.split(color, world.rank(), "embed");
  return g;
}

nlohmann::json RankGroups::stats_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const Communicator* comm : {world, pp.get(), inner.get(), cp.get(), dp.get(), shard_own.get(), embed.get()}) {
    if (comm == nullptr) continue;
    nlohmann::json s = comm->stats().to_json();
    if (!s.empty()) out[comm->group()] = std::move(s);
  }
  return out;
}

void RankGroups::reset_stats() {
  for (Communicator* comm : {world, pp.get(), inner.get(), cp.get(), dp.get(), shard_own.get(), embed.get()})
    if (comm != nullptr) comm->stats().reset();
}

}  // namespace zeropp::e2e
