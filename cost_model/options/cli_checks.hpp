#pragma once
// Command-line options of the tools (zeropp, zeropp-train, zeropp-train-bench): CLI11 validators whose messages
// are one readable line, and one line for any parse error.
//   --gpus 0          ->  zeropp: error: --gpus: 0 is not in 1..16777216 (see --help)
//   --tolerance nan   ->  zeropp: error: --tolerance: nan must be a finite number in (0, 10] (see --help)
// CLI11's own numeric validators let NaN through (every comparison with it is false) and print their ranges as
// "0.000000 to 1.797e308" on two lines; these do neither. The range rule is spec/limits.hpp's, shared with the
// config readers.
#include <cstdio>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cost_model/spec/limits.hpp"

namespace zeropp::cli_checks {

// A real number in `range`, written in decimal or scientific notation (15e12): NaN, infinities, values outside
// the range and hexadecimal (0x10, which strtod reads as 16) are refused.
CLI::Validator number_in(const NumberRange& range);
// An integer in lo..hi (decimal; no fraction, no exponent).
CLI::Validator integer_in(long long lo, long long hi);
// A path to write an output to: not empty (`--csv ""` was once ignored in silence). What it may name is
// spec/atomic_file.hpp's rule, checked when the command runs.
CLI::Validator output_path();

// Parses the command line. On --help (or a help-all request) prints the help as CLI11 does and returns 0; on any
// other parse error writes "<program>: error: <message> (see --help)" to `errors` on one line, control characters
// escaped, and returns 2; returns -1 when parsing succeeded. `errors` = nullptr parses silently, help included
// (all MPI ranks but one).
int parse(CLI::App& app, int argc, char** argv, std::string_view program, std::FILE* errors = stderr);

}  // namespace zeropp::cli_checks
