#pragma once
// The rank grid: where each GPU of a plan sits, defined once. The cost model prices each group on the link its
// members share (analytic/collectives.hpp) and the trainer splits its communicators (e2e/runtime/rank_layout.hpp),
// both from this grid, so the two cannot disagree on which ranks form a group.
//
// Dimensions, inner (consecutive ranks) to outer:
//   tp        tensor parallelism
//   cp        context parallelism
//   z         the ZeRO-3 group of z GPUs (ZeroPP, zero3_pp, zero3's z)
//   dp_shard  the part of the data-parallel dimension a zero3 (FSDP) shard group spans: dp_shard of the dp groups
//             (HSDP), all of them for plain FSDP; 1 for every other strategy
//   dp        the data-parallel replicas (HSDP's replicate dimension; the whole dp dimension for the others)
//   pp        pipeline parallelism, outermost
// rank = tp_i + tp*(cp_i + cp*(z_i + z*(dp_shard_i + dp_shard*(dp_i + dp*pp_i)))): a rank's coordinates in mixed
// radix, the first dimension fastest. Ranks are numbered node-major (node k holds ranks [k*g, (k+1)*g) for g GPUs
// per node), so the inner dimensions stay inside a node.
//
// The order is the frameworks' (pp outermost, the data-parallel dimensions between CP and PP):
//   Megatron-Core   parallel_state.py, RankGenerator(order="tp-cp-ep-dp-pp") (initialize_model_parallel's default);
//                   a group is the ranks that differ only in the dimensions of a token ("tp-dp"):
//                   generate_masked_orthogonal_rank_groups. z and dp_shard sit where Megatron's dp is (both are
//                   data-parallel dimensions).
//   torchtitan      parallel_dims.py: the device mesh ["pp", "dp_replicate", "dp_shard", "cp", "tp"], outer to
//                   inner (init_device_mesh is row-major): its dp_shard inside dp_replicate as here.
//   DeepSpeed       runtime/pipe/topology.py, PipeModelDataParallelTopology: axes ["pipe", "data", "model"], the
//                   last fastest.
//   InternEvo       (the ZeroPP authors' training code) internlm/core/context/process_group_initializer.py: TP
//                   groups consecutive ranks (Initializer_Tensor), data-parallel groups TP-strided within one
//                   pipeline stage's world/pp ranks (Initializer_Data), pipeline groups world/pp apart
//                   (Initializer_Pipeline: pp outermost), and the zero1 group, which shards the parameters
//                   ZeRO-3-style when zero1.fsdp is set, is zero1_size consecutive data-parallel ranks
//                   (Initializer_Zero1): ZeroPP's z inside its dp, as here.
#include <array>
#include <vector>

#include "cost_model/spec/parallel_spec.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp {

enum class GridDim { tp, cp, z, dp_shard, dp, pp };
inline constexpr int kGridDims = 6;

// A set of dimensions (Megatron's token "tp-dp"): the group of a rank over it is the ranks whose coordinates
// differ from the rank's only in those dimensions.
using GridMask = unsigned;
constexpr GridMask grid_mask(GridDim d) { return 1u << static_cast<unsigned>(d); }
inline constexpr GridMask kGridTp = grid_mask(GridDim::tp);
inline constexpr GridMask kGridCp = grid_mask(GridDim::cp);
inline constexpr GridMask kGridZ = grid_mask(GridDim::z);
inline constexpr GridMask kGridDpShard = grid_mask(GridDim::dp_shard);
inline constexpr GridMask kGridDp = grid_mask(GridDim::dp);
inline constexpr GridMask kGridPp = grid_mask(GridDim::pp);
// ParallelSpec's dp dimension (dp_shard x the replicas), and every data-parallel copy of a stage (with CP).
inline constexpr GridMask kGridSpecDp = kGridDpShard | kGridDp;
inline constexpr GridMask kGridDataParallel = kGridCp | kGridZ | kGridDpShard | kGridDp;

// A group as the link model sees it: `size` ranks, `stride` apart when the group is one dimension. A group over
// several dimensions is described by the block of ranks it occupies, size * stride = the outermost dimension's
// size * stride (so the group crosses nodes exactly when that block exceeds a node, for power-of-two sizes).
struct GridGroup {
  int size = 1;
  int stride = 1;
};

struct GridCoords {
  std::array<int, kGridDims> at{};
  int& operator[](GridDim d) { return at[static_cast<std::size_t>(d)]; }
  int operator[](GridDim d) const { return at[static_cast<std::size_t>(d)]; }
  friend bool operator==(const GridCoords&, const GridCoords&) = default;
};

class RankGrid {
 public:
  // Sizes of the dimensions, each >= 1 (std::invalid_argument otherwise).
  // Inline, as of() and group(): a plan evaluation builds a grid for every group it prices.
  RankGrid(int tp, int cp, int z, int dp_shard, int dp, int pp) : size_{tp, cp, z, dp_shard, dp, pp} {
    long long world = 1;
    for (std::size_t d = 0; d < kGridDims; ++d) {
      const int n = size_[d];
      if (n < 1) bad_size(static_cast<int>(d), n);
      stride_[d] = static_cast<int>(world);
      world *= n;
      if (world > (1LL << 30)) too_large(world);
    }
    world_ = static_cast<int>(world);
  }
  // The grid of a plan: dp_shard = spec/strategy.hpp's dp_shard_of for zero3 (whose shard group is z*cp*dp_shard),
  // 1 for the other strategies; the replicas dp/dp_shard.
  static RankGrid of(const ParallelSpec& p) {
    const int shard = p.strategy == Strategy::zero3 ? dp_shard_of(p) : 1;
    if (shard < 1 || p.dp % shard != 0) bad_shard(shard, p.dp);
    return RankGrid(p.tp, p.cp, p.z, shard, p.dp / shard, p.pp);
  }

  int size(GridDim d) const { return size_[static_cast<std::size_t>(d)]; }
  int stride(GridDim d) const { return stride_[static_cast<std::size_t>(d)]; }
  int size(GridMask mask) const {  // product of the sizes
    int n = 1;
    for (std::size_t d = 0; d < kGridDims; ++d)
      if ((mask >> d) & 1u) n *= size_[d];
    return n;
  }
  int world() const { return world_; }

  GridCoords coords(int rank) const;  // std::out_of_range outside [0, world)
  int rank(const GridCoords&) const;  // std::out_of_range for a coordinate outside its dimension

  // The ranks of `rank`'s group over `mask`, by position in the group (the masked coordinates in mixed radix,
  // inner first: ascending ranks).
  std::vector<int> members(GridMask mask, int rank) const;
  // Every group over `mask`, as Megatron's RankGenerator.get_ranks(token): groups by their first rank.
  std::vector<std::vector<int>> groups(GridMask mask) const;
  // Communicator::split's color and key: the index of `rank`'s group in groups(mask), and its position in it.
  int color(GridMask mask, int rank) const;
  int index(GridMask mask, int rank) const;
  // The link model's view of a group over `mask` (GridGroup above); {1, 1} when it has one rank.
  GridGroup group(GridMask mask) const {
    const int n = size(mask);
    if (n == 1) return GridGroup{};
    std::size_t outer = 0;
    for (std::size_t d = 0; d < kGridDims; ++d)
      if (((mask >> d) & 1u) && size_[d] > 1) outer = d;
    // size_[outer] * stride_[outer] is the block the group occupies; it is a multiple of n (every masked
    // dimension's size divides it), so the stride is whole.
    return GridGroup{n, size_[outer] * stride_[outer] / n};
  }

 private:
  // The errors of the constructor and of(), out of line (std::invalid_argument).
  [[noreturn]] static void bad_size(int dim, int n);
  [[noreturn]] static void too_large(long long world);
  [[noreturn]] static void bad_shard(int shard, int dp);

  std::array<int, kGridDims> size_{}, stride_{};
  int world_ = 1;
};

}  // namespace zeropp
