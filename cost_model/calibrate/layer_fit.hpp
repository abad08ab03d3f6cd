#pragma once
// The memory-bound part of a layer, fitted to the trainer's own block passes ("layer/<backend>/<dtype>/<F|B|W>/
// h:../a:../s:../b:.." from zeropp-bench, microbench/layer_bench.hpp).
//
// The time model (cost_model/analytic/time_model.hpp) prices a layer pass as its GEMMs (FLOPs over peak times
// the GEMM table's efficiency) plus its memory-bound kernels' bytes over cluster.memory_bandwidth. The GEMM table
// comes from bare GEMMs run alone; inside the trainer the same GEMMs run slower (their operands come from the
// layer's other kernels, not from a warm cache, and the other rank competes for the shared cache and memory).
// Two unknowns are left, both linear: per pass t = g(pass) * u + bytes(pass) * x, with g the table's GEMM time,
// u = 1 / (in-layer GEMM rate / table rate) and x = 1 / bandwidth, fitted by least squares on the relative error
// over the F, B and W passes (W has GEMMs only, so it pins u; F and B then give x).
#include <string>
#include <vector>

#include "cost_model/spec/cluster_spec.hpp"

namespace zeropp::calibrate {

struct LayerSample {
  std::string name;  // the benchmark, for reports
  std::string pass;  // "F", "B" or "W"
  int h = 0, a = 0, s = 0, b = 0;
  double seconds = 0;         // measured time of one pass of one block
  std::string group() const;  // "h:512/a:8/s:256/b:1": the passes of one shape are held out together
};

// The time model's seconds for one pass of one layer of `sample`'s shape on `cluster` in `dtype` (the
// analytic::action_costs of a one-layer, one-stage plan).
double predict_layer_seconds(const LayerSample& sample, const ClusterSpec& cluster, Dtype dtype);

struct LayerFit {
  double gemm_scale = 1;  // multiplies the GEMM table's efficiencies (1/u); an efficiency above 1 is capped at 1
  double bandwidth = 0;   // bytes/s; 0 when the GEMMs alone already account for the measured time
  bool clamped = false;   // the unconstrained fit asked for a negative kernel time: refitted with bandwidth 0
  bool bandwidth_capped = false;  // it asked for more than the base profile's memory bandwidth: held at that
};

// `cluster` with the fit applied: the dtype's gemm_table scaled (gemm_efficiency when it has none), memory_bandwidth
// set.
ClusterSpec apply_layer_fit(const ClusterSpec& cluster, Dtype dtype, const LayerFit& fit);

// Throws SpecError(field) when no sample is an F or B pass, there is no W pass, or a sample has a non-positive
// time or shape.
LayerFit fit_layer_passes(const std::vector<LayerSample>& samples, const ClusterSpec& cluster, Dtype dtype,
                          const std::string& field);

}  // namespace zeropp::calibrate
