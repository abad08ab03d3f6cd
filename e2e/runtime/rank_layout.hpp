#pragma once
// Where a world rank sits in the (dp, pp, cp, inner) grid. The intra-node dimension (tp or z; never both > 1) is
// innermost so its groups sit inside one node, then cp (next to TP, as in Megatron's tp-cp-dp-pp order), then pp,
// then dp:
//   world = ((dp_index * pp + pp_index) * cp + cp_index) * inner + inner_index.
// z ranks run different micro-batches (each is its own pipeline); tp and cp ranks share them. The gradient sync
// ("dp") group spans dp x cp: CP ranks hold the same parameters (Megatron's data-parallel group with CP).
#include "cost_model/spec/parallel_spec.hpp"

namespace zeropp::e2e {

struct RankCoords {
  int inner = 0;  // index in the tp or z group
  int pp = 0;     // pipeline rank
  int dp = 0;     // index across nodes
  int cp = 0;     // index in the context-parallel group
};

class RankLayout {
 public:
  RankLayout(int tp, int z, int pp, int dp, int cp = 1);  // throws std::invalid_argument when tp > 1 and z > 1
  explicit RankLayout(const ParallelSpec& p) : RankLayout(p.tp, p.z, p.pp, p.dp, p.cp) {}
  // The layout the runtime executes a plan on: the plan's own, except that pure ZeRO-3 shards over every
  // data-parallel GPU (spec/strategy.hpp), so its z*dp GPUs form one inner group (z = z*dp, dp = 1).
  static RankLayout for_plan(const ParallelSpec& p);

  int tp() const { return tp_; }
  int z() const { return z_; }
  int pp() const { return pp_; }
  int dp() const { return dp_; }
  int cp() const { return cp_; }
  int inner() const { return tp_ * z_; }  // one of them is 1
  int world() const { return inner() * cp_ * pp_ * dp_; }
  // The gradient sync group: dp x cp ranks, and this rank's index in it.
  int dp_cp() const { return dp_ * cp_; }
  int dp_cp_index(const RankCoords& c) const { return c.dp * cp_ + c.cp; }

  RankCoords coords(int world_rank) const;
  int world_rank(const RankCoords&) const;

  // Colors for Communicator::split (ranks with equal color share a group; key orders them inside it).
  int pp_color(const RankCoords& c) const { return (c.dp * cp_ + c.cp) * inner() + c.inner; }
  int inner_color(const RankCoords& c) const { return (c.dp * pp_ + c.pp) * cp_ + c.cp; }
  int dp_color(const RankCoords& c) const { return c.pp * inner() + c.inner; }  // key: dp_cp_index
  int cp_color(const RankCoords& c) const { return (c.dp * pp_ + c.pp) * inner() + c.inner; }

  // Pipelines are numbered dp_index * z + z_index; tp ranks of one pipeline share its index.
  int pipelines() const { return z_ * dp_; }
  int pipeline(const RankCoords& c) const { return c.dp * z_ + (z_ > 1 ? c.inner : 0); }

 private:
  int tp_, z_, pp_, dp_, cp_;
};

}  // namespace zeropp::e2e
