#pragma once
// GEMM efficiency as a function of FLOPs, per dtype: the ClusterSpec::gemm_table the time model reads through
// analytic::gemm_efficiency (piecewise-linear in log FLOPs, clamped at the ends).
//
// Measured GEMMs are grouped into bins of FLOPs no wider than a factor `bin_ratio` (GEMMs of one layer's F, B
// and W passes have equal FLOPs and share a bin); a bin's point is at the geometric mean of its FLOPs with the
// efficiency of its total work over its total time (a time-weighted mean, which is what sums of GEMM times need).
#include <string>
#include <vector>

#include "cost_model/spec/cluster_spec.hpp"

namespace zeropp::calibrate {

struct GemmSample {
  std::string name;    // the benchmark, for reports
  std::string group;   // the size it belongs to ("h:512/tokens:2048", "s:128/d:64"): held out together
  std::string pass;    // "F", "B", "W" for a layer's linears; the shape name otherwise
  double flop = 0;     // 2*m*n*k
  double seconds = 0;  // measured time per GEMM
};

// Throws SpecError(field) for an empty sample list, non-positive values, or an efficiency above 1 (the peak in
// the base cluster is then wrong: field names that peak).
std::vector<GemmEfficiencyPoint> fit_gemm_table(const std::vector<GemmSample>& samples, double peak,
                                                const std::string& field, const std::string& peak_field,
                                                double bin_ratio = 2.0);

}  // namespace zeropp::calibrate
