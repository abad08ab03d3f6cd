#pragma once
// A terminal picture of a simulated run, like the classic pipeline diagrams: one row per rank, one cell per time
// bucket, each cell naming the compute action that runs in the middle of the bucket ("F3" = forward of
// micro-batch 3, "B3" input gradient (or fused backward), "W3" weight gradient, "R3" recompute, "O" optimizer
// step, "." idle). With v > 1 chunks, odd chunks print in lower case (f3, b3, w3), as diagrams colour them.
#include <string>

#include "cost_model/schedule/action.hpp"
#include "cost_model/simulate/simulator.hpp"

namespace zeropp::simulate {

struct GridOptions {
  int max_width = 160;  // characters per row at most; buckets grow to fit
};

std::string ascii_grid(const schedule::Program&, const SimResult&, const GridOptions& = {});

}  // namespace zeropp::simulate
