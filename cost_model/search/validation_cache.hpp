#pragma once
// The validation sets that speak for an experiment's GPU, and their leave-one-out errors without re-running the
// leave-one-out fits each time a report is written.
//
// A set belongs to a GPU when its cluster profile (configs/validation/<set>.json, "cluster") describes the same
// device: same kind, same dense peak for every dtype the set's profile states, same memory per GPU. A profile
// calibrated on a zoo base keeps those, so a user's `my-h100.json` finds the H100 set.
//
// Leave-one-out (run_cross_validation) simulates every row tens of times (90 s for Narayanan's set on the
// development machine). Its result is cached in <cache_dir>/<set>.json under a key: a hash (FNV-1a 64) of the
// set file's bytes, its cluster profile as the model reads it (to_json), and the set's in-sample predictions
// (run_validation at the profile's own gemm_efficiency, printed to 9 significant digits, one simulation per
// row). A change to the set, the profile or the model's predictions for those runs gives another key: the cache
// is then stale, the leave-one-out runs again and the file is rewritten. refresh forces the run.
#include <filesystem>
#include <string>
#include <vector>

#include "cost_model/search/validation.hpp"
#include "cost_model/spec/cluster_spec.hpp"

namespace zeropp::search {

// Same device kind, peaks of the dtypes both state, and memory per GPU.
bool same_gpu(const ClusterSpec& a, const ClusterSpec& b);

// The shipped sets (validation_sets()) whose profile is the GPU of `cluster`, in name order.
std::vector<std::string> validation_sets_for(const ClusterSpec& cluster);

struct CachedValidation {
  ValidationReport report;  // run_validation and run_cross_validation filled (from the cache or a new run)
  std::string name;         // the set's name (or path) as given
  std::string key;          // the input hash, 16 hex digits
  bool from_cache = false;
  std::string note;  // what happened to the cache ("written to ...", "stale: recomputed", "not writable: ...")
};

// Loads `set`, predicts its rows, and fills its leave-one-out errors from <cache_dir>/<stem>.json when the key
// matches (unless refresh), else runs them and writes that file (atomically; an unwritable cache_dir only
// costs the time, and says so in `note`). An empty cache_dir: no cache.
CachedValidation cross_validated(const std::string& set, const std::filesystem::path& cache_dir, bool refresh);

}  // namespace zeropp::search
