#pragma once
// Where a world rank sits, as the trainer sees it: its tensor-parallel rank, its index in the ZeRO-3 shard group,
// its CP rank, pipeline rank and data-parallel index. All of it derives from the plan's rank grid
// (cost_model/spec/rank_grid.hpp: tp, cp, z, dp_shard, dp, pp inner to outer, Megatron-Core's order), the one the
// cost model prices its groups from, so the trainer's groups are the ranks the model prices.
// z ranks run different micro-batches (each is its own pipeline); tp and cp ranks share them.
#include "cost_model/spec/parallel_spec.hpp"
#include "cost_model/spec/rank_grid.hpp"

namespace zeropp::e2e {

struct RankCoords {
  int tp = 0;  // tensor-parallel rank
  int z = 0;   // index in the ZeRO-3 shard group
  int cp = 0;  // context-parallel rank
  int pp = 0;  // pipeline rank
  int dp = 0;  // index among the data-parallel replicas
};

class RankLayout {
 public:
  // z: the ZeRO-3 shard group. std::invalid_argument for a size < 1.
  RankLayout(int tp, int z, int pp, int dp, int cp = 1);
  explicit RankLayout(const ParallelSpec& p) : RankLayout(p.tp, p.z, p.pp, p.dp, p.cp) {}
  // The layout the runtime executes a plan on: its rank grid, whose zero3 shard group spans z*dp_shard GPUs of
  // the data-parallel dimension (every one for pure ZeRO-3, spec/strategy.hpp): they form the shard group
  // (z = z*dp_shard) and the dp/dp_shard replicas the dp dimension. With tp > 1 (FSDP + TP) each TP rank's shard
  // group holds the ranks of the same TP rank.
  static RankLayout for_plan(const ParallelSpec& p);
  // The grid dimensions of the ZeRO-3 shard group.
  static constexpr GridMask kShardMask = kGridZ | kGridDpShard;

  int tp() const { return grid_.size(GridDim::tp); }
  int z() const { return grid_.size(kShardMask); }
  int cp() const { return grid_.size(GridDim::cp); }
  int pp() const { return grid_.size(GridDim::pp); }
  int dp() const { return grid_.size(GridDim::dp); }
  int world() const { return grid_.world(); }
  const RankGrid& grid() const { return grid_; }

  RankCoords coords(int world_rank) const;  // std::out_of_range outside the world
  int world_rank(const RankCoords&) const;

  // Colors for Communicator::split (ranks with equal color share a group; the coordinate orders them inside it).
  int tp_color(const RankCoords& c) const { return grid_.color(kGridTp, world_rank(c)); }
  int z_color(const RankCoords& c) const { return shard_color(c); }  // the ZeRO-3 shard group (key: shard_index)
  int cp_color(const RankCoords& c) const { return grid_.color(kGridCp, world_rank(c)); }
  int pp_color(const RankCoords& c) const { return grid_.color(kGridPp, world_rank(c)); }
  int dp_color(const RankCoords& c) const { return grid_.color(sync_mask(), world_rank(c)); }  // key: sync_index

  // CP ranks hold the same parameters, and join either of the two groups that hold copies (spec/strategy.hpp):
  // pure ZeRO-3 shards over z*cp*dp_shard (torchtitan's FSDP mesh over dp_shard x cp), every other strategy syncs
  // gradients over dp x cp (Megatron's data-parallel group with context parallelism). Without CP they are the
  // z (kShardMask) and dp groups. A rank's z coordinate (its pipeline) leaves the CP rank out.
  GridMask shard_mask() const { return cp_shards_ ? kShardMask | kGridCp : kShardMask; }
  GridMask sync_mask() const { return cp_shards_ ? kGridDp : kGridDp | kGridCp; }
  int shard_size() const { return grid_.size(shard_mask()); }
  int shard_index(const RankCoords& c) const { return grid_.index(shard_mask(), world_rank(c)); }
  int shard_color(const RankCoords& c) const { return grid_.color(shard_mask(), world_rank(c)); }
  int sync_size() const { return grid_.size(sync_mask()); }
  int sync_index(const RankCoords& c) const { return grid_.index(sync_mask(), world_rank(c)); }

  // Pipelines are numbered dp_index * z + z_index; tp and cp ranks of one pipeline share its index.
  int pipelines() const { return z() * dp(); }
  int pipeline(const RankCoords& c) const { return c.dp * z() + c.z; }

 private:
  RankLayout(const RankGrid& grid, bool cp_shards)
      : grid_(grid), cp_shards_(cp_shards && grid.size(GridDim::cp) > 1) {}
  RankGrid grid_;
  bool cp_shards_ = false;  // the ZeRO-3 shard group spans the CP ranks (pure ZeRO-3 with cp > 1)
};

}  // namespace zeropp::e2e
