#pragma once
// The modelled FP8-over-BF16 speedup against published pairs of the same run with and without FP8
// (configs/validation/fp8_speedup/*.json). A pair file is a validation set (search/validation.hpp) whose rows carry
// both throughputs (bf16_tokens_per_s_per_gpu, fp8_tokens_per_s_per_gpu) and names the FP8 recipe (fp8_recipe):
// each row is predicted twice by the validation executor on the file's profile as it is, nothing fitted, once in
// bf16 and once with FP8 linear layers, and the ratio of the two is compared with the published ratio.
#include <string>
#include <vector>

#include "cost_model/spec/config.hpp"

namespace zeropp::search {

struct Fp8SpeedupPair {
  std::string name;
  double published_bf16 = 0, published_fp8 = 0;  // tokens per second per GPU as published
  double predicted_bf16 = 0, predicted_fp8 = 0;  // as the model predicts them
  double published_ratio() const { return published_fp8 / published_bf16; }
  double predicted_ratio() const { return predicted_fp8 / predicted_bf16; }
};

struct Fp8SpeedupReport {
  std::string source;
  Fp8Recipe recipe = Fp8Recipe::te_delayed;
  std::vector<Fp8SpeedupPair> pairs;
};

// Loads and predicts a pair file. Throws SpecError naming the field for a malformed file.
Fp8SpeedupReport run_fp8_speedup(const std::string& path);

}  // namespace zeropp::search
