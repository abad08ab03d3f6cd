#pragma once
// Where a world rank sits, as the trainer sees it: its index in the intra-node group (tp, or the ZeRO-3 shard
// group), its CP rank, pipeline rank and data-parallel index. All of it derives from the plan's rank grid
// (cost_model/spec/rank_grid.hpp: tp, cp, z, dp_shard, dp, pp inner to outer, Megatron-Core's order), the one the
// cost model prices its groups from, so the trainer's groups are the ranks the model prices.
// z ranks run different micro-batches (each is its own pipeline); tp and cp ranks share them.
#include "cost_model/spec/parallel_spec.hpp"
#include "cost_model/spec/rank_grid.hpp"

namespace zeropp::e2e {

struct RankCoords {
  int inner = 0;  // index in the tp or z group
  int cp = 0;     // context-parallel rank
  int pp = 0;     // pipeline rank
  int dp = 0;     // index among the data-parallel replicas
};

class RankLayout {
 public:
  // throws std::invalid_argument when tp > 1 and z > 1, or a size < 1
  RankLayout(int tp, int z, int pp, int dp, int cp = 1);
  explicit RankLayout(const ParallelSpec& p) : RankLayout(p.tp, p.z, p.pp, p.dp, p.cp) {}
  // The layout the runtime executes a plan on: its rank grid, whose zero3 shard group spans z*dp_shard GPUs of
  // the data-parallel dimension (every one for pure ZeRO-3, spec/strategy.hpp): they form the inner group
  // (z = z*dp_shard) and the dp/dp_shard replicas the dp dimension.
  static RankLayout for_plan(const ParallelSpec& p);

  int tp() const { return tp_; }
  int z() const { return z_; }
  int cp() const { return grid_.size(GridDim::cp); }
  int pp() const { return grid_.size(GridDim::pp); }
  int dp() const { return grid_.size(GridDim::dp); }
  int inner() const { return tp_ * z_; }  // one of them is 1
  int world() const { return grid_.world(); }
  const RankGrid& grid() const { return grid_; }
  // The grid dimensions of the inner group: tp, or the ZeRO-3 shard group (z and dp_shard).
  GridMask inner_mask() const { return tp_ > 1 ? kGridTp : kGridZ | kGridDpShard; }

  RankCoords coords(int world_rank) const;  // std::out_of_range outside the world
  int world_rank(const RankCoords&) const;

  // Colors for Communicator::split (ranks with equal color share a group; the coordinate orders them inside it).
  int pp_color(const RankCoords& c) const { return grid_.color(kGridPp, world_rank(c)); }
  int inner_color(const RankCoords& c) const { return grid_.color(inner_mask(), world_rank(c)); }
  int cp_color(const RankCoords& c) const { return grid_.color(kGridCp, world_rank(c)); }
  // CP ranks hold the same parameters, and join either of the two groups that hold copies (spec/strategy.hpp):
  // pure ZeRO-3 shards over z*cp*dp_shard (torchtitan's FSDP mesh over dp_shard x cp), every other strategy syncs
  // gradients over dp x cp (Megatron's data-parallel group with context parallelism). Without CP the shard group
  // is the inner group and the sync group the dp group.
  GridMask shard_mask() const { return cp_shards_ ? kGridZ | kGridDpShard | kGridCp : inner_mask(); }
  GridMask sync_mask() const { return cp_shards_ ? kGridDp : kGridDp | kGridCp; }
  int shard_size() const { return grid_.size(shard_mask()); }
  int shard_index(const RankCoords& c) const { return grid_.index(shard_mask(), world_rank(c)); }
  int shard_color(const RankCoords& c) const { return grid_.color(shard_mask(), world_rank(c)); }
  int sync_size() const { return grid_.size(sync_mask()); }
  int sync_index(const RankCoords& c) const { return grid_.index(sync_mask(), world_rank(c)); }
  int dp_color(const RankCoords& c) const { return grid_.color(sync_mask(), world_rank(c)); }
  bool cp_shards() const { return cp_shards_; }

  // Pipelines are numbered dp_index * z + z_index; tp and cp ranks of one pipeline share its index.
  int pipelines() const { return z_ * dp(); }
  int pipeline(const RankCoords& c) const { return c.dp * z_ + (z_ > 1 ? c.inner : 0); }

 private:
  RankLayout(const RankGrid& grid, int tp, int z, bool cp_shards)
      : grid_(grid), tp_(tp), z_(z), cp_shards_(cp_shards && grid.size(GridDim::cp) > 1) {}
  RankGrid grid_;
  int tp_, z_;               // z: the inner ZeRO-3 group, z * dp_shard of the grid
  bool cp_shards_ = false;   // the ZeRO-3 shard group spans the CP ranks (pure ZeRO-3 with cp > 1)
};

}  // namespace zeropp::e2e
