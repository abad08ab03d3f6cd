#include "cost_model/search/stage_splits.hpp"

#include <algorithm>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/stage_layout.hpp"

namespace zeropp::search {
namespace {

bool same_stages(const StageLayout& a, const StageLayout& b) {
  for (int vs = 0; vs < a.stages(); ++vs)
    if (a.stage_layers(vs) != b.stage_layers(vs)) return false;
  return true;
}

}  // namespace

std::vector<StageSplit> stage_splits(int layers, int pp, int v) {
  ModelSpec m;
  m.layers = layers;
  ParallelSpec p;
  p.pp = pp;
  p.v = v;
  std::vector<StageSplit> out;
  std::vector<StageLayout> seen;
  const auto add = [&](StageSplit s) {
    p.first_stage_layers = s.first_stage_layers;
    p.last_stage_layers = s.last_stage_layers;
    StageLayout l;
    try {
      l = stage_layout(m, p);
    } catch (const SpecError&) {
      return;  // the split does not exist for (L, pp, v)
    }
    for (const StageLayout& k : seen)
      if (same_stages(k, l)) return;
    seen.push_back(l);
    out.push_back(s);
  };
  add({});
  if (pp < 2 || layers % v != 0) return out;  // explicit counts are multiples of v, and so is their sum
  const auto round_up = [v](int n) { return (n + v - 1) / v * v; };
  if (pp == 2) {
    const int half = round_up((layers + 1) / 2);
    for (int first : {half, half + v})
      if (first < layers) add({first, layers - first});
    return out;
  }
  const int m0 = round_up((layers + pp - 1) / pp);
  for (int middle : {m0, m0 + v}) {
    const long long rest = layers - static_cast<long long>(pp - 2) * middle;
    if (rest < 2LL * v) break;  // each end holds at least v layers
    const int first = round_up(static_cast<int>((rest + 1) / 2));
    const int last = static_cast<int>(rest) - first;
    if (first > middle || last < v) continue;
    add({first, last});
  }
  return out;
}

}  // namespace zeropp::search
