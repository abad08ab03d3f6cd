// Fuzz target of the HuggingFace config importer (cost_model/spec/hf_config.hpp) with a training sequence length,
// as `--model config.json --seq S` gives it. The input is "<S>\n<config.json>": a first line that reads whole as a
// decimal integer is S (any value, negative and huge ones included: --seq's own check is the CLI's, the importer
// must still refuse what it cannot take); otherwise S = 0 (max_position_embeddings) and the whole input is the
// config. A config that maps is then validated and its parameters counted, as every command does next.
// Bad input must end in SpecError; anything else escaping (another exception, a crash, a sanitizer report) is a
// finding. Built as the libFuzzer binary zeropp-fuzz-hf (clang, ZEROPP_FUZZ) and, everywhere, with corpus_main.cpp
// as the CTest test fuzz.hf_corpus over tests/fuzz/corpus/hf (docs/fuzz.md).
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cost_model/analytic/params.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/diagnostics.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/hf_config.hpp"
#include "cost_model/spec/json_reader.hpp"
#include "cost_model/spec/model_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zeropp;
  static const bool quiet = [] {
    set_diagnostic_sink([](DiagnosticKind, const std::string&) {});  // notes name the sequence length: no output
    return true;
  }();
  (void)quiet;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  long long seq = 0;
  if (const auto newline = text.find('\n'); newline != std::string_view::npos) {
    const std::string_view first = text.substr(0, newline);
    const auto [end, ec] = std::from_chars(first.data(), first.data() + first.size(), seq);
    if (ec == std::errc() && end == first.data() + first.size() && !first.empty())
      text.remove_prefix(newline + 1);
    else
      seq = 0;
  }
  // --seq is an int: what does not fit is the CLI's to refuse; the importer gets the values an int can hold.
  if (seq < INT32_MIN || seq > INT32_MAX) seq = seq < 0 ? INT32_MIN : INT32_MAX;
  try {
    const nlohmann::json j = parse_json_with_comments(text, "fuzz-input.json");
    if (!is_hf_config(j)) return 0;
    const ModelSpec m = model_from_hf_json(j, "fuzz", "fuzz-input.json", static_cast<int>(seq));
    validate(m);
    analytic::total_params(m);
  } catch (const SpecError&) {
  }
  return 0;
}
