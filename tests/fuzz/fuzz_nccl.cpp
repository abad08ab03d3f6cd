// Fuzz target of `zeropp calibrate` on nccl-tests output: the reader (cost_model/calibrate/nccl_tests.hpp) and,
// for what it reads, the calibration fit on a GPU base cluster (cost_model/calibrate/calibrate.hpp), whose
// profile is then validated as the CLI does before writing it. An input whose first line starts with "#!zeropp"
// takes options from that line's words, as calibrate's flags give them: "skip" (--skip-unreadable-rows), a
// collective name (--collective: all_reduce, all_gather, reduce_scatter, send_recv), "intra" or "inter" (--link);
// the rest is the nccl-tests output. Bad input must end in SpecError; anything else escaping (another exception,
// a crash, a sanitizer report) is a finding. Built as the libFuzzer binary zeropp-fuzz-nccl (clang, ZEROPP_FUZZ)
// and, everywhere, with corpus_main.cpp as the CTest test fuzz.nccl_corpus over tests/fuzz/corpus/nccl.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/calibrate/calibrate.hpp"
#include "cost_model/calibrate/nccl_tests.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/diagnostics.hpp"
#include "cost_model/spec/error.hpp"

namespace {

// Reads the options line's words into `o`.
void read_options(std::string_view line, zeropp::calibrate::NcclTestsOptions& o) {
  while (!line.empty()) {
    const auto space = line.find(' ');
    const std::string_view word = line.substr(0, space);
    line = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    if (word == "skip") {
      o.skip_unreadable_rows = true;
    } else if (word == "intra" || word == "inter") {
      o.link = std::string(word);
    } else if (const auto c = zeropp::analytic::collective_from_name(word)) {
      o.collective = c;
      o.check_collective = true;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zeropp;
  static const ClusterSpec base = [] {
    set_diagnostic_sink([](DiagnosticKind, const std::string&) {});
    return load_cluster("dgx-h100");  // a GPU cluster, the kind nccl-tests results calibrate
  }();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  calibrate::NcclTestsOptions options;
  constexpr std::string_view kOptions = "#!zeropp";
  if (text.starts_with(kOptions)) {
    const auto newline = text.find('\n');
    read_options(text.substr(kOptions.size(), newline - kOptions.size()), options);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
  }
  try {
    const calibrate::BenchResults results = calibrate::parse_nccl_tests(text, "fuzz-input.txt", options);
    const calibrate::Calibration c = calibrate::calibrate(results, base, {.name = "fuzz"});
    validate(c.profile, "profile");
    c.worst_held_out_error();
  } catch (const SpecError&) {
  }
  return 0;
}
