#include "cost_model/spec/stage_layout.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"

namespace zeropp {

namespace {

// Layers of one row of chunks (chunk c of every rank): the layers of the stages c*pp .. c*pp+pp-1 before cuts.
int row_layers(const StageLayout& l) {
  if (l.pp == 1) return l.first_chunk;
  return l.first_chunk + l.last_chunk + (l.pp - 2) * l.middle_chunk;
}

// A given count of the explicit split (first_stage_layers or last_stage_layers).
void check_given(const std::string& field, const char* key, int count, const ModelSpec& m, const ParallelSpec& p) {
  const std::string name = field + "." + key;
  if (count < 1) throw SpecError(name, fmt::format("{}={} must be >= 1: a pipeline stage needs a layer", name, count));
  if (p.pp < 2)
    throw SpecError(name, fmt::format("{}={} needs {}.pp >= 2 (a pipeline with a first and a last stage)", name, count,
                                      field));
  if (count >= m.layers)
    throw SpecError(name, fmt::format("{}={} leaves no layer for the other {} pipeline stage(s) of model.layers={}",
                                      name, count, p.pp - 1, m.layers));
  if (count % p.v != 0)
    throw SpecError(name, fmt::format("{}={} is not a multiple of {}.v={}: each of the stage's chunks holds the "
                                      "same number of layers",
                                      name, count, field, p.v));
}

StageLayout explicit_layout(const ModelSpec& m, const ParallelSpec& p, const std::string& field) {
  const int first = p.first_stage_layers, last = p.last_stage_layers;
  if (first > 0) check_given(field, "first_stage_layers", first, m, p);
  if (last > 0) check_given(field, "last_stage_layers", last, m, p);
  const std::string key = field + (first > 0 ? ".first_stage_layers" : ".last_stage_layers");
  const int given = (first > 0) + (last > 0);
  const int rest = m.layers - first - last;
  const int others = p.pp - given;
  const std::string counts = first > 0 && last > 0
                                 ? fmt::format("{0}.first_stage_layers + {0}.last_stage_layers = {1} + {2}", field,
                                               first, last)
                                 : fmt::format("{}={}", key, first > 0 ? first : last);
  if (others == 0 && rest != 0)
    throw SpecError(key, fmt::format("{} must equal model.layers={} when {}.pp=2 (no other stage)", counts, m.layers,
                                     field));
  if (others > 0 && rest < others * p.v)
    throw SpecError(key, fmt::format("{} leaves {} of model.layers={} for the other {} pipeline stage(s): a stage "
                                     "would be empty",
                                     counts, std::max(rest, 0), m.layers, others));
  if (others > 0 && rest % others != 0)
    throw SpecError(key, fmt::format("{} leaves {} layers, which the other {} pipeline stage(s) cannot share evenly",
                                     counts, rest, others));
  if (others > 0 && (rest / others) % p.v != 0)
    throw SpecError(key, fmt::format("{} leaves {} layers per other pipeline stage, not a multiple of {}.v={}", counts,
                                     rest / others, field, p.v));
  const int share = others > 0 ? rest / others / p.v : 0;
  StageLayout l;
  l.kind = LayoutKind::explicit_counts;
  l.pp = p.pp;
  l.v = p.v;
  l.middle_chunk = share;
  l.first_chunk = first > 0 ? first / p.v : share;
  l.last_chunk = last > 0 ? last / p.v : share;
  return l;
}

}  // namespace

int StageLayout::first_layer(int vs) const {
  const int c = vs / pp, r = vs % pp;
  int n = c * row_layers(*this);
  for (int k = 0; k < r; ++k) n += chunk_layers(k);
  return vs > 0 ? n - first_cut : n;
}

int StageLayout::max_stage_layers() const {
  int n = 0;
  for (int r : {0, std::min(1, pp - 1), pp - 1}) {
    n = std::max(n, chunk_layers(r) - (v == 1 && r == 0 ? first_cut : 0) - (v == 1 && r == pp - 1 ? last_cut : 0));
  }
  return n;
}

int StageLayout::total_layers() const { return v * row_layers(*this) - first_cut - last_cut; }

StageLayout uneven_stage_layout(const ModelSpec& m, const ParallelSpec& p, std::string_view field_name) {
  const std::string field(field_name);
  if (p.pp < 1 || p.v < 1)
    throw SpecError(field + (p.pp < 1 ? ".pp" : ".v"), fmt::format("{0}.pp={1} and {0}.v={2} must be >= 1", field,
                                                                   p.pp, p.v));
  if (p.first_stage_layers != 0 || p.last_stage_layers != 0) return explicit_layout(m, p, field);
  const long long stages = 1LL * p.pp * p.v;
  if (m.layers % stages == 0) return even_layout(m.layers, p.pp, p.v);
  // Megatron's accounting for the embedding and the loss: pp | L + 2, and v | (L + 2)/pp.
  const int counted = m.layers + 2;
  if (p.pp >= 2 && counted % stages == 0) {
    // Megatron lets the first (last) virtual stage hold only the embedding (the loss) when a chunk is one layer;
    // the trainer runs chunks of at least one layer (e2e/model/chunk.hpp), so the cost model refuses it too.
    if (counted / stages < 2)
      throw SpecError(field + (p.v > 1 ? ".v" : ".pp"),
                      fmt::format("{0}.pp*{0}.v={1}*{2}={3} stages over model.layers+2={4} (the embedding and the loss "
                                  "counted as layers) leave the first and the last stage without a transformer layer: "
                                  "every stage holds at least one",
                                  field, p.pp, p.v, stages, counted));
    StageLayout l = even_layout(counted, p.pp, p.v);
    l.kind = LayoutKind::accounted;
    l.first_cut = l.last_cut = 1;
    return l;
  }
  const std::string hint = fmt::format(
      " (nor model.layers+2={} with the embedding and the loss counted as layers): set {}.first_stage_layers and/or "
      "{}.last_stage_layers",
      counted, field, field);
  if (p.v == 1)
    throw SpecError(field + ".pp", fmt::format("{}.pp={} does not divide model.layers={}{}", field, p.pp, m.layers,
                                               p.pp >= 2 ? hint : ""));
  throw SpecError(field + ".v", fmt::format("{0}.pp*{0}.v={1}*{2}={3} does not divide model.layers={4}{5}", field, p.pp,
                                            p.v, stages, m.layers, p.pp >= 2 ? hint : ""));
}

std::string describe(const StageLayout& l) {
  // Per virtual stage, in stage order (chunk c of rank r is stage c*pp + r), runs of equal counts collapsed.
  std::string out;
  int run = 0, value = -1;
  const auto flush = [&]() {
    if (run == 0) return;
    if (!out.empty()) out += ", ";
    out += run == 1 ? fmt::format("{}", value) : fmt::format("{} x {}", value, run);
  };
  for (int vs = 0; vs < l.stages(); ++vs) {
    const int n = l.stage_layers(vs);
    if (n != value) {
      flush();
      value = n;
      run = 0;
    }
    ++run;
  }
  flush();
  switch (l.kind) {
    case LayoutKind::even:
      return "even: " + out;
    case LayoutKind::accounted:
      return "embedding and loss counted: " + out;
    case LayoutKind::explicit_counts:
      return "first/last stage layers: " + out;
  }
  return out;
}

}  // namespace zeropp
