// Fuzz target of the loaders that read user files: the bytes go through the checked JSON reader
// (cost_model/spec/json_reader.hpp) and, when they parse, to every loader as a whole document: model, cluster,
// parallel spec, plan, experiment, validation data and benchmark results (what `zeropp calibrate` reads); the
// raw bytes also go to the nccl-tests reader, `zeropp calibrate`'s other input.
// Bad input must end in SpecError; anything else escaping (another exception, a crash, a sanitizer report) is a
// finding. Built as the libFuzzer binary zeropp-fuzz-config (clang, ZEROPP_FUZZ) and, everywhere, with
// corpus_main.cpp as a CTest test over the seed corpus (docs/fuzz.md).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cost_model/calibrate/bench_results.hpp"
#include "cost_model/calibrate/nccl_tests.hpp"
#include "cost_model/search/validation.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/json_reader.hpp"

namespace {

template <typename Load>
void load_or_spec_error(Load&& load) {
  try {
    load();
  } catch (const zeropp::SpecError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zeropp;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  load_or_spec_error([&] { calibrate::parse_nccl_tests(text, "fuzz-input.txt", {}); });
  nlohmann::json j;
  try {
    j = parse_json_with_comments(text, "fuzz-input.json");
  } catch (const SpecError&) {
    return 0;
  }
  // Plans and experiments name their model and cluster by zoo name or path: relative to the working directory.
  load_or_spec_error([&] { model_from_json(j); });
  load_or_spec_error([&] { cluster_from_json(j); });
  load_or_spec_error([&] { parallel_from_json(j); });
  load_or_spec_error([&] { plan_from_json(j); });
  load_or_spec_error([&] { experiment_from_json(j); });
  load_or_spec_error([&] { search::load_validation_json(j, "fuzz-input.json"); });
  load_or_spec_error([&] { calibrate::parse_bench_results(j, "fuzz-input.json"); });
  return 0;
}
