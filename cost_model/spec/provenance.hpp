#pragma once
// Where each figure of a cluster profile comes from (ClusterProvenance), entry by entry, and the warning every
// command prints for a profile whose figures are nominal.
//
// Entry keys, the profile's JSON paths: "intra", "inter" (the bare links), "collectives.<level>.<collective>",
// "gemm_table.<dtype>", "gemm_efficiency", "memory_bandwidth", "optimizer_rate", "peak_tflops.<dtype>". An entry
// listed in provenance.entries has its own provenance; the others have their group's default: the links and
// collectives provenance.collectives, the GEMM figures provenance.gemm, the rest (spec-sheet figures) nominal.
#include <string>
#include <string_view>
#include <vector>

#include "cost_model/spec/cluster_spec.hpp"

namespace zeropp {

std::string collective_entry(std::string_view level, std::string_view collective);  // "collectives.intra.all_reduce"
std::string gemm_table_entry(Dtype);                                                // "gemm_table.bf16"

Provenance provenance_of(const ClusterSpec&, const std::string& entry);
// "calibrated (all_reduce-1n.txt)", "published (base dgx-h100)", "nominal".
std::string provenance_text(const ClusterSpec&, const std::string& entry);

// The entry the model prices a collective on one level with: collectives.<level>.<c> when the profile has it,
// else the bare link ("intra" / "inter"), as analytic::collective_time chooses.
std::string used_collective_entry(const ClusterSpec&, std::string_view level, std::string_view collective);
// The entry GEMMs of a dtype are priced with: its gemm_table, else gemm_efficiency.
std::string used_gemm_entry(const ClusterSpec&, Dtype);

// The provenances of what the model uses of the profile for one group: "collectives" (every collective on every
// level the cluster has) or "gemm" (the GEMM entry of each dtype with a peak), joined as "calibrated+published".
std::string provenance_summary(const ClusterSpec&, std::string_view group);

// One line when the GEMM figures the model uses for `dtype`, or its collectives, are nominal (a spec-sheet peak
// times an assumed efficiency, raw link rates): such a profile's times are not comparable with those of a fitted
// or calibrated one. Empty otherwise.
std::string nominal_warning(const ClusterSpec&, Dtype);

}  // namespace zeropp
