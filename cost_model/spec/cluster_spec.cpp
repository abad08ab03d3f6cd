#include "cost_model/spec/cluster_spec.hpp"

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp {

double ClusterSpec::peak(Dtype d) const {
  const auto it = peak_flops.find(d);
  if (it == peak_flops.end()) {
    const std::string field = "cluster.peak_tflops." + to_string(d);
    throw SpecError(field, fmt::format("{} is not given for cluster \"{}\"", field, name));
  }
  return it->second;
}

}  // namespace zeropp
