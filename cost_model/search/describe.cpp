#include "cost_model/search/describe.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

std::string describe_plan(const ParallelSpec& p) {
  std::string out = to_string(p.strategy);
  if (p.tp > 1) out += fmt::format(" tp={}", p.tp);
  if (p.z > 1) out += fmt::format(" z={}", p.z);
  if (p.cp > 1) out += fmt::format(" cp={}{}", p.cp, p.cp_kind == CpKind::ulysses ? " ulysses" : "");
  out += fmt::format(" pp={} dp={}", p.pp, p.dp);
  if (p.dp_shard > 0) out += fmt::format(" dp_shard={}", p.dp_shard);  // HSDP
  if (p.first_stage_layers > 0) out += fmt::format(" first={}", p.first_stage_layers);
  if (p.last_stage_layers > 0) out += fmt::format(" last={}", p.last_stage_layers);
  // The choices the search makes beyond the split, shown where the strategy has a choice.
  const StrategyTraits& t = traits(p.strategy);
  if (t.min_zero_stage != t.max_zero_stage) out += fmt::format(" zero={}", p.zero_stage);
  if (p.tp > 1 && !p.sequence_parallel) out += " sp=off";
  if (p.tp_comm_overlap != TpCommOverlap::none) out += " tp_overlap=" + to_string(p.tp_comm_overlap);
  if (p.fp8_all_gather) out += " fp8_all_gather";
  if (p.v > 1) out += fmt::format(" v={}", p.v);
  out += fmt::format(" {} b={} B={}", to_string(p.schedule), p.micro_batch, p.micro_batches);
  if (is_zeropp(p.strategy)) out += fmt::format(" U={}", p.unit);
  out += fmt::format(" recompute={}", to_string(p.recompute));
  return out;
}

std::string tp_comm_label(const ParallelSpec& p) {
  if (p.tp == 1) return "-";
  return p.sequence_parallel ? (p.tp_comm_overlap != TpCommOverlap::none ? "sp+ov" : "sp") : "nosp";
}

std::string memory_reason(const analytic::Estimate& e, double memory_bytes) {
  const analytic::MemoryBytes& m = e.memory_bytes;
  std::vector<std::pair<std::string, double>> parts = {{"optimizer", m.optimizer},
                                                       {"params", m.params},
                                                       {"grads", m.grads},
                                                       {"activations", m.activations},
                                                       {"buffers", m.buffers}};
  std::stable_sort(parts.begin(), parts.end(), [](auto& a, auto& b) { return a.second > b.second; });
  std::string out = fmt::format("peak {:.1f} GiB > {:.1f} GiB of GPU memory by {:.1f} GiB (GiB = 2^30 B)",
                                m.peak / kGiB, memory_bytes / kGiB, (m.peak - memory_bytes) / kGiB);
  const double parts_sum = m.optimizer + m.params + m.grads + m.activations + m.buffers;
  out += parts_sum < 0.999 * m.peak || parts_sum > 1.001 * m.peak ? "; simulated peak, closed-form parts:" : ";";
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += fmt::format("{} {} {:.1f} GiB", i == 0 ? "" : ",", parts[i].first, parts[i].second / kGiB);
  return out;
}

std::vector<TimeShare> time_parts(const analytic::PipelineTiming& t) {
  return {{"compute", t.compute},
          {"bubble", t.bubble},
          {"exposed tp comm", t.tp_exposed},
          {"exposed pp comm", t.pp_exposed},
          {"exposed zero comm", t.zero_exposed},
          {"exposed dp comm", t.dp_exposed}};
}

std::string dominant_part(const analytic::PipelineTiming& t) {
  const auto parts = time_parts(t);
  const auto top = std::max_element(parts.begin(), parts.end(),
                                    [](const TimeShare& a, const TimeShare& b) { return a.seconds < b.seconds; });
  const double share = t.iteration > 0 ? top->seconds / t.iteration : 0;
  return fmt::format("{} ({:.0f}% of {:.3f} s; compute {:.3f} s, exposed comm {:.3f} s, bubble {:.3f} s)", top->name,
                     100 * share, t.iteration, t.compute, t.comm_exposed, t.bubble);
}

namespace {

Versus versus(const std::string& label, const Candidate& best, const Candidate& other) {
  Versus v;
  v.label = label;
  v.other = other;
  const auto& bt = best.estimate.time_s;
  const auto& ot = other.estimate.time_s;
  v.delta_s = ot.iteration - bt.iteration;
  v.slowdown = bt.iteration > 0 ? ot.iteration / bt.iteration : 0;
  const auto bp = time_parts(bt), op = time_parts(ot);
  std::size_t k = 0;
  for (std::size_t i = 1; i < bp.size(); ++i)
    if (op[i].seconds - bp[i].seconds > op[k].seconds - bp[k].seconds) k = i;
  v.main_difference = fmt::format("{} {:+.3f} s", bp[k].name, op[k].seconds - bp[k].seconds);
  for (std::size_t i = 0; i < bp.size(); ++i) v.deltas.push_back({bp[i].name, op[i].seconds - bp[i].seconds});
  v.peak_delta_bytes = other.estimate.memory_bytes.peak - best.estimate.memory_bytes.peak;
  return v;
}

}  // namespace

Explanation explain(const SearchResult& r) {
  Explanation e;
  if (r.ranked.empty()) return e;
  e.any = true;
  const Candidate& best = r.ranked.front();
  e.dominant = dominant_part(best.estimate.time_s);
  if (r.ranked.size() > 1) e.versus.push_back(versus("runner-up", best, r.ranked[1]));
  for (const StrategySummary& s : r.strategies) {
    if (s.strategy == best.parallel.strategy) continue;
    if (s.best && r.ranked.size() > 1 && s.best->parallel == r.ranked[1].parallel) continue;  // the runner-up
    if (s.best)
      e.versus.push_back(versus("best " + to_string(s.strategy), best, *s.best));
    else
      e.missing.push_back(s.closest.any ? fmt::format("{}: {}; closest {}", to_string(s.strategy), s.note,
                                                      s.closest.reason)
                                        : fmt::format("{}: {}", to_string(s.strategy), s.note));
  }
  return e;
}

}  // namespace zeropp::search
