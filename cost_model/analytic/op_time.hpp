#pragma once
// Seconds of one operation on one GPU, from the GPU's operation table (spec/gpu_ops.hpp) where the profile has one,
// else from the profile's older scalars (gemm_efficiency or a calibrated gemm_table, flash_attention_efficiency,
// memory_bandwidth at its datasheet rate). The time model (time_model.hpp) prices every GEMM, attention kernel and
// memory-bound kernel through here, so two GPUs differ only through their entries.
//
// A GEMM of an m x n output (count of them, batched), k deep, e bytes per element:
//   compute   2mnk count / (peak x matmul_efficiency x utilization), where utilization is the tile and wave
//             quantization of the matmul kernel (NVIDIA, "Matrix Multiplication Background User's Guide", Deep
//             Learning Performance documentation: tile quantization, wave quantization): the output is cut into
//             gemm_tile_rows x gemm_tile_cols tiles (the better of the two orientations), tiles run one per SM per
//             wave, so utilization = useful outputs / (tiles x tile size) x tiles / (waves x sm_count); a GEMM of
//             fewer tiles than SMs is split along k (split-K, slices of at least 256) to fill the waves;
//   memory    (e (mk + kn) + o mn) count / (HBM bandwidth x hbm_efficiency): a GEMM cannot beat reading its
//             operands and writing its output once (the roofline: small-k GEMMs of tensor-parallel shards are bound
//             here); o = e, or the bytes a weight gradient accumulated in place moves per element (Gemm::store_bytes:
//             Megatron's fp32 main_grad read and written, 8; grad_accumulation.hpp);
//   time      the larger of the two; where the profile says a share x of the output store is exposed
//             (gpu.gemm_epilogue_exposed: the epilogue writes a tile after its main loop), the larger of compute
//             and the reads with the rest of the store, plus x of the store: max(compute, reads + (1 - x) store)
//             + x store. On the H100 measurement (results/measured/h100-80gb-hbm3, 433 GEMM shapes) GEMMs of
//             small k (512-1280) take their compute plus their store, not the larger of the two.
// matmul_efficiency is the largest rate a matmul sweep reaches (MAMF: it already includes the clock the GPU holds
// at its power limit), so a well-shaped large GEMM runs at it and a badly shaped one below.
// A calibrated gemm_table for the dtype (measured on the machine) takes precedence over the operation table.
#include "cost_model/analytic/flops.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::analytic {

// Tile and wave quantization of an m x n output k deep (count of them) on the profile's GPU: in (0, 1]; 1 without
// tiles.
double gemm_utilization(const ClusterSpec& cluster, double m, double n, double k, double count);

// Whether gemm_time prices a GEMM in `dtype` by its roofline (the operation table's path), so that the time of
// reading its operands and writing its output is part of the GEMM's own time; false on the scalar and calibrated
// table paths (a rate per FLOP only).
bool gemm_traffic_priced(const ClusterSpec& cluster, Dtype dtype);

// Seconds of the GEMM g (all g.count of them) in `dtype`.
double gemm_time(const ClusterSpec& cluster, Dtype dtype, const Gemm& g);

// Seconds of a GEMM whose main loop computes for `compute` seconds, reading `read_bytes` of operands and storing
// `store_bytes` of output: the roofline above, with the profile's exposed share of the store (gemm_epilogue_exposed).
double gemm_roofline(const ClusterSpec& cluster, double compute, double read_bytes, double store_bytes);

// gemm_time for one cluster and dtype with its lookups (peak, tables, operation-table entries) done once: a plan
// evaluation prices some twenty GEMMs with the same ones. seconds(g) is gemm_time(cluster, dtype, g) bit for bit
// (the same operations in the same order). Holds a reference: the cluster must outlive it.
class GemmPricer {
 public:
  GemmPricer(const ClusterSpec& cluster, Dtype dtype);
  double seconds(const Gemm& g) const {
    if (g.count <= 0 || g.flops_each() <= 0) return 0;
    // One rate for every GEMM (the profile's gemm_efficiency): peak x efficiency, the product gemm_time divides by.
    if (flat_) return g.flops() / flat_rate_;
    return shaped_seconds(g);
  }
  double memory_seconds(double bytes) const { return has_hbm_rate_ ? bytes / hbm_rate_ : 0; }  // memory_time

 private:
  double shaped_seconds(const Gemm& g) const;  // by a table or the operation table

  const ClusterSpec& cluster_;
  Dtype dtype_;
  const double* peak_ = nullptr;                             // null: not given (seconds throws, as peak() does)
  const std::vector<GemmEfficiencyPoint>* table_ = nullptr;  // the calibrated table for dtype, if any
  bool traffic_priced_ = false;                              // gemm_traffic_priced(cluster, dtype)
  double element_bytes_ = 0;
  bool flat_ = false;          // peak given, no table, not traffic-priced: every GEMM at flat_rate_
  double flat_rate_ = 0;       // peak x gemm_efficiency
  bool has_hbm_rate_ = false;  // memory_bandwidth given (memory_time is 0 without it)
  double hbm_rate_ = 0;        // memory_bandwidth x hbm_efficiency
};

// Seconds a memory-bound kernel takes to read and write `bytes`: at memory_bandwidth x hbm_efficiency; 0 when the
// profile does not know its HBM bandwidth.
double memory_time(const ClusterSpec& cluster, double bytes);

// The rate of the fused attention kernel `kernel` (flash2, flash3, cudnn) for a model's head dimension and
// sequence length, causal (every model here is a decoder): the operation table's figures for that kernel over the
// profile's bf16 peak (gpu_ops.hpp, attention_efficiency), else, on a profile without figures, its
// flash_attention_efficiency for every fused kernel. A kernel the table lacks is refused before pricing
// (spec/attention_kernel.hpp); asked anyway, it throws SpecError.
FlashEfficiency attention_rate(const ClusterSpec& cluster, const ModelSpec& model, AttentionKernel kernel);

}  // namespace zeropp::analytic
