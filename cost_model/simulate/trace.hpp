#pragma once
// Chrome trace JSON of a simulated run (opens in Perfetto and chrome://tracing): one process per pipeline rank,
// one thread per stream, one complete event ("ph":"X") per action named by its IR text ("2F0", "1UNSHARD"),
// plus a memory counter per rank when the result carries a memory timeline. Times in microseconds.
#include <filesystem>
#include <string>

#include "cost_model/schedule/action.hpp"
#include "cost_model/simulate/simulator.hpp"

namespace zeropp::simulate {

std::string chrome_trace_json(const schedule::Program&, const SimResult&);

// Writes chrome_trace_json to `path` atomically (a temporary file in the same directory, then a rename), so a
// reader never sees half a trace. Throws SpecError("trace", ...) when the file cannot be written.
void write_chrome_trace(const std::filesystem::path& path, const schedule::Program&, const SimResult&);

}  // namespace zeropp::simulate
