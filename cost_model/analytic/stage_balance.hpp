#pragma once
// How much of a regular pipeline rank's layer work each PP rank does under a plan's split of the layers
// (spec/stage_layout.hpp), for the closed-form timing (time_model.hpp): a rank's share is its layers over v chunks
// of `layers_per_chunk` (ActionCosts::layers_per_chunk, the largest virtual stage). Every share is 1 with an even
// split, so the closed form is unchanged there. The middle ranks (1..pp-2) all hold the same layers.
#include "cost_model/spec/stage_layout.hpp"

namespace zeropp::analytic {

struct RankShares {
  int pp = 1;
  double first = 1, middle = 1, last = 1;
  // Mean share of the pp - 1 ranks other than `slowest` (0, 1 for a middle rank, or pp - 1): with stages of
  // different lengths the fill and drain of a pipeline last the other stages' times (1F1B: the iteration is
  // (B - 1) x the slowest stage + the sum of all stages), so the closed-form bubble scales with this mean.
  double others(int slowest) const;
};

RankShares rank_shares(const StageLayout& layout, int layers_per_chunk);

// Virtual stage vs's layers over `layers_per_chunk`: what scales a regular chunk's per-layer seconds to the stage
// (costs_from_plan). Exactly 1 when the stage holds layers_per_chunk layers.
double stage_share(const StageLayout& layout, int vs, int layers_per_chunk);

}  // namespace zeropp::analytic
