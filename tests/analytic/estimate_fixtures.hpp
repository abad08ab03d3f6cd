#pragma once
// Hand-written clusters and plans for the time-model, estimate and strategy tests (independent of the zoo).
#include "cost_model/spec/config.hpp"
#include "formulas_models.hpp"

namespace zeropp::test {

// Round numbers so that expected values can be derived by hand: 100 TFLOP/s, efficiency 0.5,
// NVLink 100 GB/s with 1 us, network 10 GB/s with 10 us, 80 GiB, no HBM term unless set.
inline ClusterSpec round_cluster(int nodes = 4, int gpus_per_node = 8) {
  ClusterSpec c;
  c.name = "round";
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.peak_flops[Dtype::bf16] = 100e12;
  c.peak_flops[Dtype::fp16] = 100e12;
  c.memory_bytes = 80.0 * (1ull << 30);
  c.intra = {100e9, 1e-6};
  c.inter = {10e9, 10e-6};
  c.gemm_efficiency = 0.5;
  return c;
}

inline Plan plan_of(const ModelSpec& model, const ClusterSpec& cluster, ParallelSpec parallel) {
  Plan p;
  p.model = model;
  p.cluster = cluster;
  p.parallel = parallel;
  return p;
}

}  // namespace zeropp::test
