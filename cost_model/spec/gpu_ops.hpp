#pragma once
// The GPU's operation table: what each kind of operation reaches on one GPU of a cluster, every entry with where
// its number comes from (nominal: a datasheet or whitepaper figure; published: others' measurements, cited beside
// the value in the profile; measured: measured on the machine itself and committed with the machine stated). The
// time model prices its operations from these entries (analytic/time_model.hpp, analytic/contention.hpp,
// analytic/tp_overlap.hpp), so that two GPUs differ in the model only where their entries differ.
//
// JSON (cluster profiles, key "gpu"): every entry {"value": number, "provenance": "nominal|published|measured"};
// the attention table {"provenance": ..., "points": [{"head_dim", "seq_len", "forward", "backward"}, ...]}.
// Every entry is optional; an absent one is unknown (value 0), and what the model then does is said per entry.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zeropp {

// Where a profile's numbers come from, for its collectives (link rates, latencies, collective fits), its GEMMs
// (gemm_efficiency, gemm_table) and each entry of its operation table. nominal: spec-sheet rates and assumed
// efficiencies; published: others' measurements (nccl-tests figures, kernel benchmarks from papers, issues and
// repositories), cited in the file's comments; calibrated: fitted by `zeropp calibrate` from measurements on the
// machine itself; measured: measured on the machine itself and committed as data with the machine stated.
enum class Provenance { nominal, published, calibrated, measured };

// FlashAttention's achieved / peak FLOP/s, on the FLOPs its kernels execute as its authors count them (Dao 2023
// and Shah et al. 2024, section 4.1): forward 4 s^2 head_dim heads per sequence, halved with a causal mask; the
// backward 2.5x the forward (5 matmuls against 2: it recomputes Q K^T). The defaults are FlashAttention-2 on an
// A100 (configs/clusters/dgx-a100-80gb.json gives the source); a profile states its own.
struct FlashEfficiency {
  double forward = 0.6;
  double backward = 0.5;

  friend bool operator==(const FlashEfficiency&, const FlashEfficiency&) = default;
};

struct OpEntry {
  double value = 0;  // 0: unknown (absent from the profile)
  Provenance provenance = Provenance::nominal;
  bool known() const { return value > 0; }

  friend bool operator==(const OpEntry&, const OpEntry&) = default;
};

// FlashAttention's achieved / peak FLOP/s at one head dimension and sequence length, on the FLOPs its kernels
// execute as its authors count them (analytic/flops.hpp: causal half, backward 2.5x the forward).
struct AttentionPoint {
  double head_dim = 0;
  double seq_len = 0;
  double forward = 0;
  double backward = 0;

  friend bool operator==(const AttentionPoint&, const AttentionPoint&) = default;
};

struct AttentionTable {
  Provenance provenance = Provenance::published;
  std::vector<AttentionPoint> points;  // in increasing (head_dim, seq_len)

  friend bool operator==(const AttentionTable&, const AttentionTable&) = default;
};

struct GpuOps {
  // Streaming multiprocessors. Unknown: communication kernels that take SMs cannot be priced, so
  // TransformerEngine's userbuffers overlap is refused on this profile.
  OpEntry sm_count;
  // CUDA compute capability (8.0 A100, 9.0 H100/H200, 10.0 B200/GB200). CUDA multicast objects, which
  // TransformerEngine's userbuffers need, start at 9.0. Unknown: treated as below 9.0.
  OpEntry compute_capability;
  // The fraction by which compute slows while an NCCL kernel (collective or send/recv) runs beside it on the same
  // GPU: it takes SMs and HBM bandwidth (analytic/contention.hpp). Unknown: 0, overlap is free on this profile.
  OpEntry nccl_contention;
  // Largest achievable bf16/fp16 matmul rate over the dense peak (the best shape of a sweep: Maximum Achievable
  // Matmul FLOPS). Unknown: the profile's gemm_efficiency (or gemm_table) prices every GEMM as before.
  OpEntry matmul_efficiency;
  // The same for FP8 GEMMs (E4M3/E5M2 inputs, bf16 output, fp32 accumulation) over the dense FP8 peak
  // (cluster.peak_tflops.fp8), from published FP8 kernel figures (the profile cites them). Unknown: FP8 training is
  // refused on this profile (spec/fp8.hpp).
  OpEntry fp8_matmul_efficiency;
  // The output tile of the matmul kernels whose tile and wave quantization prices a GEMM's shape (rows x cols of
  // the output per thread block, one block per SM at a time). Unknown: no quantization.
  OpEntry gemm_tile_rows;
  OpEntry gemm_tile_cols;
  // Achievable fraction of the HBM datasheet bandwidth for streaming kernels (norms, activations, adds, softmax,
  // cross-entropy, the optimizer step). Unknown: 1 (the datasheet rate).
  OpEntry hbm_efficiency;
  // Board power limit, watts: listed (`zeropp clusters`), not used; the achievable rates above were measured at it.
  OpEntry power_limit_w;
  // FlashAttention by head dimension and sequence length. Empty: the profile's flash_attention_efficiency.
  AttentionTable attention;

  friend bool operator==(const GpuOps&, const GpuOps&) = default;
};

// "gpu": {...} -> GpuOps; throws SpecError naming "<field>.<entry>[.value|.provenance]" for unknown entries, wrong
// types, values out of range and attention points out of order.
GpuOps gpu_ops_from_json(const nlohmann::json&, const std::string& field);
nlohmann::json to_json(const GpuOps&);  // only the known entries
void validate(const GpuOps&, const std::string& field);

// The attention kernel's efficiency at (head_dim, seq_len): the table's points interpolated linearly in log2 of
// the sequence length at the nearest head dimension listed (clamped at the ends). Requires a non-empty table.
FlashEfficiency attention_efficiency(const AttentionTable&, double head_dim, double seq_len);

}  // namespace zeropp
