#include "cost_model/calibrate/host_layout.hpp"

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"

namespace zeropp::calibrate {

InterMapping map_inter_run(const std::string& what, const std::string& field, const std::string& sources,
                           const HostLayout& layout, double busbw, double intra_busbw, double nic) {
  const std::string one_per_node =
      "run it with one GPU per node (mpirun -np H -N 1 ... -g 1, or srun --ntasks-per-node=1): every edge of that "
      "ring is a network edge, which is what the model's inter level prices";
  // One rank per host, or one host (inter named by --link): what was measured is the level's figure.
  if (!layout.known || layout.ranks_per_host == 1 || layout.hosts <= 1) return {};
  if (layout.ranks_per_host == 0) {
    throw SpecError(field, fmt::format("{} ({}): the hosts ran different numbers of ranks, so what the ring crossed "
                                       "is not known; {}",
                                       what, sources, one_per_node));
  }
  const int r = layout.ranks_per_host;
  if (!(busbw < kNetworkBoundShare * intra_busbw)) {
    throw SpecError(
        field,
        fmt::format("{} ({}): a ring over {} hosts of {} GPUs reached {:.4g} GB/s bus bandwidth, near the {:.4g} "
                    "GB/s this collective reaches inside a node, so NVLink may bound it and busbw/{} would not "
                    "be the network's rate; {}",
                    what, sources, layout.hosts, r, busbw / 1e9, intra_busbw / 1e9, r, one_per_node));
  }
  const double per_gpu = busbw / r;
  if (nic > 0 && per_gpu > kNicSlack * nic) {
    throw SpecError(field,
                    fmt::format("{} ({}): busbw {:.4g} GB/s over {} GPUs per host gives {:.4g} GB/s per GPU, above the "
                                "profile's NIC rate inter.bandwidth_GBps={:.4g}: the ring did not cross the network as "
                                "assumed (NCCL's tree or NVLS all-reduce, SHARP, or NICs shared); {}",
                                what, sources, busbw / 1e9, r, per_gpu / 1e9, nic / 1e9, one_per_node));
  }
  InterMapping m;
  m.divisor = r;
  m.keep_table = false;
  m.note = fmt::format(
      "{}: derived from a ring over {} hosts of {} GPUs ({}): its busbw {:.4g} GB/s is each host's network traffic, "
      "shared by {} NICs: {:.4g} GB/s per GPU (network-bound: below {:.0f}% of the intra figure {:.4g} GB/s); "
      "latency as measured; its measured table is not kept (it describes that host layout only)",
      what, layout.hosts, r, sources, busbw / 1e9, r, per_gpu / 1e9, 100 * kNetworkBoundShare, intra_busbw / 1e9);
  return m;
}

}  // namespace zeropp::calibrate
