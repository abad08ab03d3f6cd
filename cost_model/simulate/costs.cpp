#include "cost_model/simulate/costs.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <string_view>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/limits.hpp"

namespace zeropp::simulate {

double StageCost::compute_seconds(schedule::ActionType type) const {
  using schedule::ActionType;
  switch (type) {
    case ActionType::F:
      return f;
    case ActionType::B:
      return b;
    case ActionType::W:
      return w;
    case ActionType::BW:
      return bw;
    case ActionType::RECOMPUTE:
      return recompute;
    default:
      return 0;
  }
}

ActionCosts ActionCosts::uniform(int pp, int v, double f, double b, double w, double comm) {
  if (pp < 1) throw SpecError("pp", "pp=" + std::to_string(pp) + " must be >= 1");
  if (v < 1) throw SpecError("chunks", "chunks=" + std::to_string(v) + " must be >= 1");
  StageCost stage;
  stage.f = f;
  stage.b = b;
  stage.w = w;
  stage.bw = b + w;
  stage.recompute = f;
  for (CommCost* c : {&stage.send_f, &stage.send_b, &stage.unshard, &stage.reduce_grad, &stage.dp_sync}) {
    c->seconds = comm;
  }
  stage.activation_bytes = 1;
  stage.recompute_bytes = 1;
  ActionCosts costs;
  costs.stages.assign(static_cast<std::size_t>(pp) * v, stage);
  costs.static_bytes.assign(pp, 0.0);
  costs.opt_step.assign(pp, CommCost{comm, 0});
  return costs;
}

namespace {

void check_value(double x, const std::string& field) {
  if (!std::isfinite(x) || x < 0) {
    throw SpecError(field, field + "=" + std::to_string(x) + " must be a finite number >= 0");
  }
}

}  // namespace

void ActionCosts::check(const schedule::Program& program) const {
  if (stage_count() != program.stages()) {
    throw SpecError("costs.stages", "the cost table has " + std::to_string(stage_count()) +
                                        " stages but the program has pp*v=" + std::to_string(program.stages()));
  }
  if (static_cast<int>(static_bytes.size()) != program.pp || static_cast<int>(opt_step.size()) != program.pp) {
    throw SpecError("costs.ranks",
                    "static_bytes and opt_step need one entry per rank (pp=" + std::to_string(program.pp) + ")");
  }
  check_value(contention, "costs.contention");
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const StageCost& c = stages[s];
    const std::string p = "costs.stages[" + std::to_string(s) + "].";
    check_value(c.f, p + "f");
    check_value(c.b, p + "b");
    check_value(c.w, p + "w");
    check_value(c.bw, p + "bw");
    check_value(c.recompute, p + "recompute");
    for (auto [comm, name] : {std::pair{&c.send_f, "send_f"},
                              {&c.send_b, "send_b"},
                              {&c.unshard, "unshard"},
                              {&c.reduce_grad, "reduce_grad"},
                              {&c.dp_sync, "dp_sync"}}) {
      check_value(comm->seconds, p + name + ".seconds");
      check_value(comm->bytes, p + name + ".bytes");
    }
    check_value(c.activation_bytes, p + "activation_bytes");
    check_value(c.checkpoint_bytes, p + "checkpoint_bytes");
    check_value(c.recompute_bytes, p + "recompute_bytes");
    check_value(c.w_buffer_bytes, p + "w_buffer_bytes");
    check_value(c.gathered_param_bytes, p + "gathered_param_bytes");
    check_value(c.grad_buffer_bytes, p + "grad_buffer_bytes");
    if (c.dp_sync_buckets < 1) {
      throw SpecError(p + "dp_sync_buckets", p + "dp_sync_buckets=" + std::to_string(c.dp_sync_buckets) +
                                                 " must be at least 1");
    }
  }
  for (std::size_t r = 0; r < static_bytes.size(); ++r) {
    check_value(static_bytes[r], "costs.static_bytes[" + std::to_string(r) + "]");
    check_value(opt_step[r].seconds, "costs.opt_step[" + std::to_string(r) + "].seconds");
    check_value(opt_step[r].bytes, "costs.opt_step[" + std::to_string(r) + "].bytes");
  }
}

ActionCosts parse_uniform_costs(const std::string& text, int pp, int v) {
  std::map<std::string, double> values;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      throw SpecError("costs", "'" + std::string(item) + "' is not KEY=SECONDS");
    }
    const std::string key(item.substr(0, eq));
    const std::string number(item.substr(eq + 1));
    char* end = nullptr;
    const double x = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(x) || x < 0) {
      throw SpecError("costs." + key, "'" + number + "' must be a number of seconds >= 0");
    }
    // At most a billion seconds per action, so sums over millions of actions stay finite (1e308 did not).
    check_number("costs", key, x, NumberRange{0, 1e9, false});
    static const char* const known[] = {"F", "B", "W", "BW", "R", "P2P", "UNSHARD", "REDUCE", "DP", "OPT"};
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) {
      throw SpecError("costs." + key,
                      "unknown key '" + key + "'; keys are F, B, W, BW, R, P2P, UNSHARD, REDUCE, DP, OPT");
    }
    if (!values.emplace(key, x).second) throw SpecError("costs." + key, "'" + key + "' is given twice");
  }
  auto get = [&](const char* key, double fallback) {
    auto it = values.find(key);
    return it == values.end() ? fallback : it->second;
  };
  const double f = get("F", 1), b = get("B", 1), w = get("W", 1);
  ActionCosts costs = ActionCosts::uniform(pp, v, f, b, w, 0);
  const double unshard = get("UNSHARD", 0);
  for (StageCost& s : costs.stages) {
    s.bw = get("BW", b + w);
    s.recompute = get("R", f);
    s.send_f.seconds = s.send_b.seconds = get("P2P", 0);
    s.unshard.seconds = unshard;
    s.reduce_grad.seconds = get("REDUCE", unshard);
    s.dp_sync.seconds = get("DP", 0);
  }
  for (CommCost& o : costs.opt_step) o.seconds = get("OPT", 0);
  return costs;
}

}  // namespace zeropp::simulate
