#pragma once
// `zeropp calibrate`: from microbenchmark results to a cluster profile. The profile is the base with what was
// measured put in: each fit replaces its own entry (a collective on one link level, a dtype's GEMM table, the
// memory bandwidth, the optimizer rate), which ClusterProvenance::entries then marks calibrated with its files;
// every entry not measured keeps the base's value and provenance (spec/provenance.hpp).
//   - Collectives: one alpha-beta fit per (link level, collective) from "<collective>/<backend>/<level>/bytes:S"
//     results (alpha_beta_fit.hpp), piecewise by size range where one line misses by more than 5%
//     (piecewise_fit.hpp) -> profile.collectives[level][collective], plus the measured times as its table
//     (CollectiveFit::table, a line through each pair of neighbouring sizes) for groups of the benchmark's size:
//     held-out sizes are scored on that table built without them. The single-line send_recv fit of a level is
//     also the profile's bare link (intra / inter): a point-to-point message is alpha + M/beta. A run over
//     several hosts is mapped to the inter level by what its ring crossed (host_layout.hpp: as measured with one
//     GPU per host, per-GPU busbw / r with r > 1 per host, refused where that is ambiguous).
//   - GEMMs: one efficiency table per dtype from "gemm/<backend>/<dtype>/..." results (gemm_fit.hpp), against
//     the base cluster's peak for that dtype -> profile.gemm_table[dtype]. A GEMM above that peak is an error
//     for a GPU profile (the peak or a unit is wrong); a CPU profile's peak (device "cpu") is raised to the
//     fastest GEMM instead, with a warning (Calibration::warnings).
//   - Layers: the memory bandwidth of the time model's memory-bound kernels, from the trainer's block passes
//     "layer/<backend>/<dtype>/<F|B|W>/h:../a:../s:../b:.." priced with that GEMM table (layer_fit.hpp) ->
//     profile.memory_bandwidth. Held out: whole layer shapes, scored per pass (F, B, W) against the time model.
//   - Optimizer: the trainer's OPT_STEP rate from "optimizer/<backend>/<dtype>/params:P" (optimizer_fit.hpp) ->
//     profile.optimizer_rate (parameters per second), which OPT_STEP uses where it is slower than memory-bound.
// Quality: every fit is first made without a held-out third of its sizes (every third size in increasing order,
// never the smallest or the largest, so nothing is extrapolated) and scored on them; the profile then uses all
// points. Errors are relative: |predicted - measured| / measured of the time.
//   - a collective's sizes are its buffer sizes S;
//   - a GEMM "size" is one benchmark size group (a layer's h and s*b, or an attention s and d): all its GEMMs
//     are held out together and scored per pass, as the time model uses them: the sum of the four linears' F
//     (or B, or W) GEMMs of a layer, the attention GEMMs of one head. The fit rms/max columns still score every
//     single GEMM of the final fit, so the scatter at equal FLOPs shows.
#include <string>
#include <vector>

#include "cost_model/calibrate/bench_results.hpp"
#include "cost_model/spec/cluster_spec.hpp"

namespace zeropp::calibrate {

struct FitReport {
  std::string what;          // "intra/all_reduce", "gemm/fp32"
  std::size_t points = 0;    // measured sizes used by the final fit
  std::size_t held_out = 0;  // of which held out in the quality check
  double fit_rms_error = 0;  // final fit, over all its points
  double fit_max_error = 0;
  double held_out_max_error = 0;  // fit without the held-out points, scored on them
  double held_out_mean_error = 0;
  std::string parameters;  // the fitted values, for people
};

struct HeldOutPoint {
  std::string what;                    // the fit it belongs to
  std::string label;                   // the benchmark
  double measured = 0, predicted = 0;  // seconds
  double error() const;                // |predicted - measured| / measured
};

struct Calibration {
  ClusterSpec profile;
  std::vector<FitReport> fits;
  std::vector<HeldOutPoint> held_out;
  std::vector<std::string> notes;  // skipped or ignored results, clamped latencies
  // What changed a stated figure of the base cluster (a CPU peak raised to a measured GEMM rate): the CLI prints
  // each on stderr and writes it into the profile's header.
  std::vector<std::string> warnings;
  double worst_held_out_error() const;
};

// Indices of the held-out points among n sorted ones: every third from index 1, never the first or the last.
std::vector<bool> held_out_mask(std::size_t n);

// Throws SpecError for results that name a dtype, level or collective wrongly or miss the counters the fit
// needs, and when nothing at all can be fitted.
// Collectives outside [min_bytes, max_bytes] are left out of the fits (MPI over shared memory is not one
// alpha-beta line from 1 KiB to 64 MiB; fit the range a workload uses).
struct CalibrateOptions {
  std::string name;  // the profile's name
  double min_bytes = 0;
  double max_bytes = 1e300;
};

Calibration calibrate(const BenchResults& results, const ClusterSpec& base, const CalibrateOptions& options);

}  // namespace zeropp::calibrate
