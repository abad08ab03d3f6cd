#pragma once
// Small experiments for the search tests.
#include "cost_model/spec/config.hpp"

namespace zeropp::search::testing {

// A 4-layer GPT small enough to enumerate by hand: h = 256, a = 8 (every tp in 1..8 divides heads and ffn).
inline ModelSpec tiny_model() {
  ModelSpec m;
  m.name = "tiny";
  m.layers = 4;
  m.hidden = 256;
  m.heads = 8;
  m.seq_len = 128;
  m.vocab = 1000;
  return m;
}

// One DGX A100 node (8 GPUs), global batch 16.
inline Experiment tiny_experiment() {
  Experiment ex;
  ex.name = "tiny";
  ex.model = tiny_model();
  ex.cluster = load_cluster("dgx-a100-80gb");
  ex.gpus = 8;
  ex.global_batch = 16;
  return ex;
}

inline Experiment experiment(const std::string& model, int gpus, long long global_batch) {
  Experiment ex;
  ex.name = model;
  ex.model = load_model(model);
  ex.cluster = load_cluster("dgx-a100-80gb");
  ex.gpus = gpus;
  ex.global_batch = global_batch;
  return ex;
}

}  // namespace zeropp::search::testing
