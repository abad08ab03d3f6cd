// `zeropp models [NAME|PATH ...] [--seq S]`: the model zoo (or the given models, HuggingFace config.json files
// included) as a table or JSON, with each model's parameter count.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cost_model/analytic/params.hpp"
#include "cost_model/cli/command.hpp"
#include "cost_model/cli/experiment_args.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::cli {
namespace {

// The zoo reads best family by family, smallest first: by the name's prefix ("gpt3", "llama2", "megatron"), then
// by L*h^2, which orders models by their transformer parameters (12*L*h^2 for a GELU MLP).
void sort_by_family_and_size(std::vector<ModelSpec>& models) {
  const auto family = [](const ModelSpec& m) { return m.name.substr(0, m.name.find('-')); };
  const auto size = [](const ModelSpec& m) { return 1.0 * m.layers * m.hidden * m.hidden; };
  std::stable_sort(models.begin(), models.end(), [&](const ModelSpec& a, const ModelSpec& b) {
    return family(a) != family(b) ? family(a) < family(b) : size(a) < size(b);
  });
}

// "8.03 B", "124.44 M": the unique parameters (analytic::total_params; a tied head counts once).
std::string params_text(const ModelSpec& m) {
  const double n = static_cast<double>(analytic::total_params(m));
  return n >= 1e9 ? fmt::format("{:.2f} B", n / 1e9) : fmt::format("{:.2f} M", n / 1e6);
}

void print_table(const std::vector<ModelSpec>& models) {
  std::size_t width = 18;  // the name column, wider for a longer name
  for (const ModelSpec& m : models) width = std::max(width, m.name.size());
  constexpr std::string_view row = "{:<{}} {:>4} {:>6} {:>4} {:>4} {:>6} {:>6} {:>6} {:<6} {:<9} {:<6} {:<9} {:>10}\n";
  std::cout << fmt::format(row, "model", width, "L", "h", "a", "kv", "ffn", "s", "V", "mlp", "attention", "tied",
                           "positions", "params");
  for (const ModelSpec& m : models)
    std::cout << fmt::format(row, m.name, width, m.layers, m.hidden, m.heads, m.kv_heads_or_heads(), m.ffn(), m.seq_len,
                             m.vocab, to_string(m.mlp), to_string(m.attention_kind()), m.tied_embedding ? "yes" : "no",
                             m.learned_positions ? "learned" : "rotary", params_text(m));
}

void print_json(const std::vector<ModelSpec>& models) {
  nlohmann::json list = nlohmann::json::array();
  for (const ModelSpec& m : models) {
    nlohmann::json entry = to_json(m);
    // Resolved sizes, so readers need not re-implement the defaults, and the parameter count (the one key that is
    // not a model key: drop it to use the entry as a model config).
    entry["kv_heads"] = m.kv_heads_or_heads();
    entry["ffn_hidden"] = m.ffn();
    entry["attention"] = to_string(m.attention_kind());
    entry["dropout"] = m.has_dropout();
    entry["params"] = analytic::total_params(m);
    list.push_back(entry);
  }
  std::cout << nlohmann::json{{"schema", kSchemaVersion}, {"command", "models"}, {"models", list}}.dump(2) << "\n";
}

const bool registered = register_command({
    "models",
    "List the model zoo (configs/models), or the given zoo names or JSON files, with resolved sizes",
    [](CLI::App& sub) -> std::function<int()> {
      auto names = std::make_shared<std::vector<std::string>>();
      auto format = std::make_shared<Format>(Format::table);
      auto seq = std::make_shared<int>(0);
      sub.add_option("models", *names,
                     "Zoo names or paths to model JSON files or HuggingFace config.json files (default: the whole "
                     "zoo)");
      add_seq_option(sub, *seq);
      add_format_option(sub, *format);
      return [names, format, seq] {
        std::vector<ModelSpec> models;
        for (const auto& name : names->empty() ? zoo_models() : *names)
          models.push_back(load_model(name, {.seq_len = *seq}));
        if (names->empty()) sort_by_family_and_size(models);
        if (*format == Format::json)
          print_json(models);
        else
          print_table(models);
        return 0;
      };
    },
});

}  // namespace
}  // namespace zeropp::cli
