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
  if (g.count <= 0 || g.flops_each() <= 0) return 0;
  const double peak = cluster.peak(dtype);
  if (!gemm_traffic_priced(cluster, dtype))
    return g.flops() / (peak * gemm_efficiency(cluster, dtype, g.flops_each()));
  const double compute =
      g.flops() / (peak * cluster.gpu->matmul_efficiency.value * gemm_utilization(cluster, g.m, g.n, g.k, g.count));
  const double e = element_bytes(dtype) * g.count;
  return gemm_roofline(cluster, compute, e * (g.m * g.k + g.k * g.n), e * g.m * g.n);
}

double gemm_roofline(const ClusterSpec& cluster, double compute, double read_bytes, double store_bytes) {
  const double reads = memory_time(cluster, read_bytes), store = memory_time(cluster, store_bytes);
  // 0 when unknown: the store overlaps the main loop as the reads do.
  const double exposed = cluster.gpu ? cluster.gpu->gemm_epilogue_exposed.value : 0;
  return std::max(compute, reads + (1 - exposed) * store) + exposed * store;
}

double memory_time(const ClusterSpec& cluster, double bytes) {
  if (cluster.memory_bandwidth <= 0) return 0;
  const double efficiency =
      cluster.gpu && cluster.gpu->hbm_efficiency.known() ? cluster.gpu->hbm_efficiency.value : 1.0;
  return bytes / (cluster.memory_bandwidth * efficiency);
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
