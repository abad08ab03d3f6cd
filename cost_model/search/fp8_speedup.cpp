#include "cost_model/search/fp8_speedup.hpp"

#include <fmt/format.h>

#include "cost_model/search/validation.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/json_reader.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::search {

Fp8SpeedupReport run_fp8_speedup(const std::string& path) {
  const nlohmann::json file = read_json_file(path);
  if (!file.is_object() || !file.contains("fp8_recipe") || !file.at("fp8_recipe").is_string() ||
      !file.contains("rows") || !file.at("rows").is_array())
    throw SpecError("fp8_speedup", fmt::format("{}: needs fp8_recipe (a string) and rows (an array)", path));
  Fp8SpeedupReport out;
  out.recipe = fp8_recipe_from_string(file.at("fp8_recipe").get<std::string>(), "fp8_speedup.fp8_recipe");
  // The same runs as a bf16 validation set of tokens per second.
  nlohmann::json set = file;
  set.erase("fp8_recipe");
  set["dtype"] = "bf16";
  set["published_flops"] = "tokens";
  std::vector<std::pair<double, double>> published;
  for (std::size_t i = 0; i < set["rows"].size(); ++i) {
    nlohmann::json& row = set["rows"][i];
    const std::string at = fmt::format("fp8_speedup.rows[{}]", i);
    for (const char* key : {"bf16_tokens_per_s_per_gpu", "fp8_tokens_per_s_per_gpu"})
      if (!row.contains(key) || !row.at(key).is_number() || !(row.at(key).get<double>() > 0))
        throw SpecError(at + "." + key, fmt::format("{}.{} must be a positive number", at, key));
    published.emplace_back(row.at("bf16_tokens_per_s_per_gpu").get<double>(),
                           row.at("fp8_tokens_per_s_per_gpu").get<double>());
    row["tokens_per_s_per_gpu"] = row.at("bf16_tokens_per_s_per_gpu");
    row.erase("bf16_tokens_per_s_per_gpu");
    row.erase("fp8_tokens_per_s_per_gpu");
  }
  ValidationReport bf16 = load_validation_json(set, path);
  out.source = bf16.source;
  ValidationReport fp8 = bf16;
  for (ValidationRow& row : fp8.rows) {
    row.plan.parallel.fp8 = true;
    row.plan.parallel.fp8_recipe = out.recipe;
    validate(row.plan);
  }
  run_validation(bf16);
  run_validation(fp8);
  for (std::size_t i = 0; i < bf16.rows.size(); ++i)
    out.pairs.push_back({bf16.rows[i].name, published[i].first, published[i].second, bf16.rows[i].predicted_tflops,
                         fp8.rows[i].predicted_tflops});
  return out;
}

}  // namespace zeropp::search
