#include "cost_model/analytic/op_time.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cost_model/analytic/params.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::analytic {

namespace {

// The shortest slice of the k dimension a split-K GEMM gives one thread block: 4 k-blocks of 64, the depth of
// CUTLASS's multistage pipeline (3-4 stages of a 64-deep k-block on Ampere and Hopper; CUTLASS docs,
// efficient_gemm.md, "Parallelized Reductions: split-K" and the kStages of its default sm80/sm90 configurations).
constexpr double kMinSplitK = 256;

// Useful outputs over computed ones for tiles of rows x cols, times the share of SM slots the waves fill. A GEMM
// with fewer tiles than SMs is split along k (split-K / stream-K, as cuBLAS does for such shapes) into as many
// slices as fill the waves best, each at least kMinSplitK deep.
double utilization_for(double m, double n, double k, double count, double rows, double cols, double sms) {
  const double tiles_m = std::ceil(m / rows), tiles_n = std::ceil(n / cols);
  const double tile = (m * n) / (tiles_m * rows * tiles_n * cols);
  const double tiles = tiles_m * tiles_n * count;
  const double max_split = std::max(1.0, std::floor(k / kMinSplitK));
  double wave = 0;
  for (double split = 1; split <= max_split && split * tiles <= 4 * sms; ++split) {
    const double blocks = split * tiles;
    wave = std::max(wave, blocks / (std::ceil(blocks / sms) * sms));
  }
  if (wave == 0) wave = tiles / (std::ceil(tiles / sms) * sms);  // already several waves: no split
  return tile * wave;
}

// The rate memory-bound kernels stream at: memory_bandwidth x hbm_efficiency (memory_time).
double hbm_rate(const ClusterSpec& cluster) {
  const double efficiency =
      cluster.gpu && cluster.gpu->hbm_efficiency.known() ? cluster.gpu->hbm_efficiency.value : 1.0;
  return cluster.memory_bandwidth * efficiency;
}

bool has_table(const ClusterSpec& c, Dtype dtype) {
  const auto it = c.gemm_table.find(dtype);
  return it != c.gemm_table.end() && !it->second.empty();
}

}  // namespace

double gemm_utilization(const ClusterSpec& cluster, double m, double n, double k, double count) {
  if (!cluster.gpu || !cluster.gpu->gemm_tile_rows.known() || !cluster.gpu->sm_count.known()) return 1;
  const double r = cluster.gpu->gemm_tile_rows.value, c = cluster.gpu->gemm_tile_cols.value;
  const double sms = cluster.gpu->sm_count.value;
  return std::max(utilization_for(m, n, k, count, r, c, sms), utilization_for(m, n, k, count, c, r, sms));
}

bool gemm_traffic_priced(const ClusterSpec& cluster, Dtype dtype) {
  return !has_table(cluster, dtype) && cluster.gpu && cluster.gpu->matmul_efficiency.known();
}

double gemm_time(const ClusterSpec& cluster, Dtype dtype, const Gemm& g) {
  return GemmPricer(cluster, dtype).seconds(g);
}

GemmPricer::GemmPricer(const ClusterSpec& cluster, Dtype dtype)
    : cluster_(cluster), dtype_(dtype), element_bytes_(element_bytes(dtype)) {
  if (const auto it = cluster.peak_flops.find(dtype); it != cluster.peak_flops.end()) peak_ = &it->second;
  if (const auto it = cluster.gemm_table.find(dtype); it != cluster.gemm_table.end() && !it->second.empty())
    table_ = &it->second;
  traffic_priced_ = gemm_traffic_priced(cluster, dtype);
  if (peak_ && !table_ && !traffic_priced_) {
    flat_ = true;
    flat_rate_ = *peak_ * cluster.gemm_efficiency;
  }
  if (cluster.memory_bandwidth > 0) {
    has_hbm_rate_ = true;
    hbm_rate_ = hbm_rate(cluster);
  }
}

double GemmPricer::shaped_seconds(const Gemm& g) const {
  const double peak = peak_ ? *peak_ : cluster_.peak(dtype_);
  if (!traffic_priced_) {
    const double efficiency = table_ ? table_gemm_efficiency(*table_, g.flops_each()) : cluster_.gemm_efficiency;
    return g.flops() / (peak * efficiency);
  }
  const double compute =
      g.flops() / (peak * cluster_.gpu->matmul_efficiency.value * gemm_utilization(cluster_, g.m, g.n, g.k, g.count));
  const double e = element_bytes_ * g.count;
  // A weight gradient accumulated in place moves its accumulator's bytes (flops.hpp, Gemm::store_bytes).
  const double store = (g.store_bytes > 0 ? g.store_bytes : element_bytes_) * g.count;
  return gemm_roofline(cluster_, compute, e * (g.m * g.k + g.k * g.n), store * g.m * g.n);
}

double gemm_roofline(const ClusterSpec& cluster, double compute, double read_bytes, double store_bytes) {
  const double reads = memory_time(cluster, read_bytes), store = memory_time(cluster, store_bytes);
  // 0 when unknown: the store overlaps the main loop as the reads do.
  const double exposed = cluster.gpu ? cluster.gpu->gemm_epilogue_exposed.value : 0;
  return std::max(compute, reads + (1 - exposed) * store) + exposed * store;
}

double memory_time(const ClusterSpec& cluster, double bytes) {
  return cluster.memory_bandwidth > 0 ? bytes / hbm_rate(cluster) : 0;
}

FlashEfficiency attention_rate(const ClusterSpec& cluster, const ModelSpec& model, AttentionKernel kernel) {
  if (!cluster.gpu || cluster.gpu->attention.empty()) return cluster.flash_attention_efficiency;
  const auto it = cluster.gpu->attention.find(kernel);
  if (it == cluster.gpu->attention.end())
    throw SpecError("parallel.attention_kernel",
                    fmt::format("parallel.attention_kernel={}: cluster {} publishes no figures for it (gpu.attention)",
                                to_string(kernel), cluster.name));
  const auto peak = cluster.peak_flops.find(Dtype::bf16);
  if (peak == cluster.peak_flops.end())
    throw SpecError("cluster.peak_tflops.bf16",
                    fmt::format("cluster {}: gpu.attention figures need peak_tflops.bf16", cluster.name));
  return attention_efficiency(it->second, peak->second / 1e12, model.head_dim(), model.seq_len, true);
}

}  // namespace zeropp::analytic
