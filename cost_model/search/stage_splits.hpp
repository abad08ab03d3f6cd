#pragma once
// The splits of the layers over a pipeline that the search tries (spec/stage_layout.hpp), for L layers on pp
// ranks of v chunks each. A split costs the slowest stage's time in every steady-state step and sets the first
// rank's activation memory (it holds the most micro-batches in flight) and the last rank's compute (it runs the
// LM head), so the splits that matter are:
//   default    parallel.first/last_stage_layers absent: even when pp v | L, else Megatron's with the embedding and
//              the loss counted as layers (a first and a last stage one layer lighter), when that exists;
//   balanced   the explicit split (first, middle x (pp-2), last) with the fewest layers on its heaviest stage:
//              middle m0 = ceil(L/(pp v)) v, the rest R = L - (pp-2) m0 shared by the ends, the first taking the
//              larger half (R/(2v) rounded up, times v: the last also runs the head);
//   lighter    the same with middle m0 + v: the ends shed layers to the middle ranks;
//   with pp = 2 (no middle) first = ceil(L/(2v)) v and the same + v, the last taking the rest.
// Every explicit split obeys Megatron's rules (multiples of v, each end holding v..middle layers); a split that
// lays out the same layers per virtual stage as one before it is left out (the balanced split of an even L is
// the even split).
#include <utility>
#include <vector>

namespace zeropp::search {

struct StageSplit {
  int first_stage_layers = 0;  // 0: the default split
  int last_stage_layers = 0;
};

// The splits above that exist for (L, pp, v), default first; empty when none does. pp, v >= 1.
std::vector<StageSplit> stage_splits(int layers, int pp, int v);

}  // namespace zeropp::search
