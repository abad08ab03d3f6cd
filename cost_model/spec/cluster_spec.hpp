#pragma once
// ClusterSpec: the machines. Bandwidths are per GPU, in bytes/s; latencies in seconds; peaks in FLOP/s.
// A group of GPUs inside one node talks over `intra` (NVLink); a group that crosses nodes over `inter`
// (the NIC each GPU has). Optional calibrated tables (from `zeropp calibrate`) refine both.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost_model/spec/gpu_ops.hpp"

namespace zeropp {

enum class Dtype { bf16, fp16, fp32 };

// What one "GPU" of a profile is. A CPU profile (one MPI rank per core; `zeropp-bench --zeropp_cpu_profile`)
// states a peak that a core can beat (a guest OS shows the base clock, the core runs at its boost clock), so
// calibration raises such a peak to the rate a GEMM reached; a GPU's peak is a spec-sheet figure, and a GEMM
// above it is a unit error there (cost_model/calibrate/calibrate.hpp).
enum class Device { gpu, cpu };

struct LinkSpec {
  double bandwidth = 0;  // bytes/s per GPU, one direction (the beta of the alpha-beta model)
  double latency = 0;    // seconds per message step (alpha)

  friend bool operator==(const LinkSpec&, const LinkSpec&) = default;
};

// One size range of a piecewise alpha-beta fit: buffers of at most max_bytes bytes (and more than the previous
// segment's max_bytes).
struct CollectiveSegment {
  double max_bytes = 0;  // full buffer M, bytes
  double latency = 0;    // seconds (alpha per step)
  double bandwidth = 0;  // bytes/s (bus bandwidth)

  friend bool operator==(const CollectiveSegment&, const CollectiveSegment&) = default;
};

// One measured size of a collective: the time of one operation on a full buffer of `bytes` bytes.
struct CollectiveTablePoint {
  double bytes = 0;    // full buffer M, bytes
  double seconds = 0;  // time per operation

  friend bool operator==(const CollectiveTablePoint&, const CollectiveTablePoint&) = default;
};

// A fitted alpha-beta line for one collective on one link level (from microbenchmarks).
struct CollectiveFit {
  double latency = 0;    // seconds (alpha per step)
  double bandwidth = 0;  // bytes/s (beta, bus bandwidth in nccl-tests' sense)
  // Optional: where one line cannot fit every size (MPI over shared memory peaks at a cache-sized buffer and
  // slows 3-5x above it), one line per size range, in increasing max_bytes. A buffer of M bytes uses the first
  // segment with M <= max_bytes, the last one above them all; latency/bandwidth above are then only the
  // single-line summary. Empty: the single line for every size.
  std::vector<CollectiveSegment> segments;
  // Optional: the measured times themselves, in increasing bytes, for groups of exactly table_ranks GPUs (the
  // group the benchmark ran). Such a group's time is the alpha-beta line through the two neighbouring sizes
  // (a line per pair of measured sizes), which follows the protocol and cache regimes that a few lines fitted
  // over many sizes miss; above the largest size at its bus bandwidth, below the smallest by the fit above.
  // Other group sizes use the fit. Empty: no table.
  std::vector<CollectiveTablePoint> table;
  int table_ranks = 0;

  friend bool operator==(const CollectiveFit&, const CollectiveFit&) = default;
};

// GEMM efficiency as a function of shape: achieved / peak, looked up by the GEMM's FLOPs
// (piecewise-linear in log FLOPs between measured points; clamped outside).
struct GemmEfficiencyPoint {
  double flops = 0;       // 2*m*n*k of the measured GEMM
  double efficiency = 0;  // achieved FLOP/s / peak FLOP/s

  friend bool operator==(const GemmEfficiencyPoint&, const GemmEfficiencyPoint&) = default;
};

// One entry of a profile whose provenance differs from its group's (ClusterProvenance::gemm or ::collectives):
// what `zeropp calibrate` measured on top of a base, and the files it was measured from.
struct EntryProvenance {
  Provenance provenance = Provenance::calibrated;
  std::string source;  // "all_reduce-1n.txt", or what was derived and from what

  friend bool operator==(const EntryProvenance&, const EntryProvenance&) = default;
};

struct ClusterProvenance {
  // The defaults of the entries not listed in `entries`: every link and collective figure, every GEMM figure.
  Provenance gemm = Provenance::nominal;
  Provenance collectives = Provenance::nominal;
  // Per entry, where it was measured (spec/provenance.hpp names the keys: "intra", "inter",
  // "collectives.<level>.<collective>", "gemm_table.<dtype>", "gemm_efficiency", "memory_bandwidth",
  // "optimizer_rate", "peak_tflops.<dtype>"). Empty for a profile made by hand.
  std::map<std::string, EntryProvenance> entries;
  std::string base;  // the profile calibrate started from, whose values the entries not listed keep

  friend bool operator==(const ClusterProvenance&, const ClusterProvenance&) = default;
};

struct ClusterSpec {
  std::string name;
  Device device = Device::gpu;
  int nodes = 1;
  int gpus_per_node = 8;
  std::map<Dtype, double> peak_flops;  // dense peak per GPU per dtype
  // Dense FP8 peak per GPU, FLOP/s; 0 = not stated. The peak of FP8 training's linear-layer GEMMs (spec/fp8.hpp,
  // analytic/fp8_cost.hpp); FP8 is not a Dtype: an FP8 plan keeps bf16 everywhere else.
  double fp8_peak_flops = 0;
  double memory_bytes = 0;  // per GPU
  // HBM bandwidth per GPU, bytes/s (spec sheet). Times the memory-bound kernels of a layer (norms, softmax,
  // dropout, activation, residual adds) in the analytic time model; 0 = unknown, those kernels cost nothing.
  double memory_bandwidth = 0;
  // Parameters the optimizer step updates per second per GPU (calibrated from the trainer's AdamW; 0 = unknown,
  // the step is then priced as memory-bound). On a GPU AdamW streams its ~30 bytes per parameter at HBM speed;
  // on a CPU core its square root and division per element make it compute-bound, several times slower.
  double optimizer_rate = 0;
  LinkSpec intra;  // NVLink / NVSwitch, per GPU
  LinkSpec inter;  // network, per GPU (one NIC per GPU)
  // Fraction of peak a large, well-shaped GEMM reaches; used when no calibrated table is given.
  double gemm_efficiency = 0.75;
  // The fused attention kernel of models with attention "flash" (it is not a cuBLAS GEMM: own rate).
  FlashEfficiency flash_attention_efficiency;
  // Calibrated refinements, empty unless the profile came from `zeropp calibrate`.
  // Keys: "intra"/"inter" -> collective name ("all_reduce", "all_gather", "reduce_scatter", "send_recv").
  std::map<std::string, std::map<std::string, CollectiveFit>> collectives;
  std::map<Dtype, std::vector<GemmEfficiencyPoint>> gemm_table;
  ClusterProvenance provenance;
  // The GPU's operation table (gpu_ops.hpp); absent for CPU profiles and profiles written before it existed.
  std::optional<GpuOps> gpu;

  int world() const { return nodes * gpus_per_node; }  // exact once validate() accepted it (limits.hpp)
  double peak(Dtype d) const;                          // throws SpecError("cluster.peak_tflops.<dtype>") when missing

  friend bool operator==(const ClusterSpec&, const ClusterSpec&) = default;
};

}  // namespace zeropp
