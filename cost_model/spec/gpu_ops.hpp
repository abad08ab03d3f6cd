#pragma once
// The GPU's operation table: what each kind of operation reaches on one GPU of a cluster, every entry with where
// its number comes from (nominal: a datasheet or whitepaper figure; published: others' measurements, cited beside
// the value in the profile; measured: measured on the machine itself and committed with the machine stated). The
// time model prices its operations from these entries (analytic/time_model.hpp, analytic/contention.hpp,
// analytic/tp_overlap.hpp), so that two GPUs differ in the model only where their entries differ.
//
// JSON (cluster profiles, key "gpu"): every entry {"value": number, "provenance": "nominal|published|measured"};
// the attention table one object per kernel, {"flash2"|"flash3"|"cudnn": {"provenance": ..., "forward": [points],
// "backward": [points]}}, each point {"head_dim", "seq_len", "causal", "tflops"[, "provenance"]}: a kernel's published
// (or measured) TFLOP/s at that shape, as its source prints it; a point without its own provenance has its table's
// (a table may mix measured points with published ones where the measurement has none).
// Every entry is optional; an absent one is unknown (value 0), and what the model then does is said per entry.
#include <map>
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

// The kernel that runs the attention core (softmax(QK^T)V) of a plan (spec/attention_kernel.hpp says which one each
// framework runs on which GPU):
//   flash2   FlashAttention-2 (Dao 2023, arXiv 2307.08691; the flash-attn 2.x package, PyTorch SDPA's flash backend)
//   flash3   FlashAttention-3 (Shah et al. 2024, arXiv 2407.08608): Hopper only (compute capability 9.0)
//   cudnn    cuDNN's fused flash attention (TransformerEngine's FusedAttention, PyTorch SDPA's cuDNN backend)
//   unfused  the s x s scores written to memory by two batched GEMMs and a (fused) softmax: Megatron-LM 2021-2022
//            (model attention "unfused"); it has no table: its GEMMs are priced as GEMMs.
enum class AttentionKernel { flash2, flash3, cudnn, unfused };

// One published figure of an attention kernel: TFLOP/s at (head_dim, seq_len), with or without the causal mask, on
// the FLOPs the kernel executes as FlashAttention's authors count them (Dao 2023 and Shah et al. 2024, section
// 4.1): forward 4 s^2 head_dim heads per sequence, halved with the causal mask; backward 2.5x the forward.
struct AttentionPoint {
  double head_dim = 0;
  double seq_len = 0;
  bool causal = false;
  double tflops = 0;
  Provenance provenance = Provenance::published;  // the point's own; in JSON its table's unless it states one

  friend bool operator==(const AttentionPoint&, const AttentionPoint&) = default;
};

// One kernel's figures on this GPU, forward and backward, each in increasing (causal, head_dim, seq_len).
// provenance: that of the points that do not state their own.
struct AttentionTable {
  Provenance provenance = Provenance::published;
  std::vector<AttentionPoint> forward;
  std::vector<AttentionPoint> backward;

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
  // The share of a GEMM's output store (m n elements written to HBM) that is not hidden behind its main loop: the
  // epilogue of a tile that writes its output after its last MMA (CUTLASS's Hopper "cooperative" kernels; the
  // "ping-pong" ones overlap one tile's epilogue with another's main loop). A GEMM then takes the larger of its
  // compute and its operand reads, plus this share of its output store, instead of the larger of its compute and
  // all its traffic (analytic/op_time.hpp). Unknown: 0, the store overlaps like the reads.
  OpEntry gemm_epilogue_exposed;
  // Achievable fraction of the HBM datasheet bandwidth for streaming kernels (norms, activations, adds, softmax,
  // cross-entropy, the optimizer step). Unknown: 1 (the datasheet rate).
  OpEntry hbm_efficiency;
  // Board power limit, watts: listed (`zeropp clusters`), not used; the achievable rates above were measured at it.
  OpEntry power_limit_w;
  // The fused attention kernels' figures by head dimension, sequence length and mask, one table per kernel. A kernel
  // absent from a profile that has some: refused on it (spec/attention_kernel.hpp). None at all: the profile's
  // flash_attention_efficiency prices every fused kernel.
  std::map<AttentionKernel, AttentionTable> attention;

  friend bool operator==(const GpuOps&, const GpuOps&) = default;
};

// "gpu": {...} -> GpuOps; throws SpecError naming "<field>.<entry>[.value|.provenance]" for unknown entries, wrong
// types, values out of range and attention points out of order.
GpuOps gpu_ops_from_json(const nlohmann::json&, const std::string& field);
nlohmann::json to_json(const GpuOps&);  // only the known entries
void validate(const GpuOps&, const std::string& field);

// A kernel's TFLOP/s at (head_dim, seq_len, causal) from one list of points (forward or backward): the points with
// that mask (the other mask's when the list has none), at the listed head dimension nearest in log2 (96 sits
// between 64 and 128; a tie takes the smaller), interpolated linearly in log2 of the sequence length between the
// two listed lengths around it, clamped to the first and last. Requires a non-empty list.
double attention_tflops(const std::vector<AttentionPoint>&, double head_dim, double seq_len, bool causal);

// A kernel's efficiency (TFLOP/s over `peak_tflops`) at (head_dim, seq_len, causal), forward and backward. The
// backward with the causal mask, where the table lists the backward without it only (the FlashAttention-3 paper
// publishes no causal backward): the unmasked backward times what the mask costs the forward at the same shape
// (forward causal / forward not causal), an assumption: the mask skips the same blocks both ways.
FlashEfficiency attention_efficiency(const AttentionTable&, double peak_tflops, double head_dim, double seq_len,
                                     bool causal);

}  // namespace zeropp
