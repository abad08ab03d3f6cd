#pragma once
// Which of the model's link levels a measured collective describes, from the hosts its ranks ran on
// (docs/multi-node.md, "What a run over several hosts measures").
//
// The model has two levels (analytic/collectives.hpp): `intra`, a group inside one node, and `inter`, a group
// that crosses nodes, priced per GPU at its own NIC's rate (ClusterSpec::inter: one NIC per GPU). A ring over
// H hosts with r ranks on each crosses the network on H of its r*H edges and NVLink on the others; NCCL runs one
// such ring per channel, spread over the host's NICs, so each host's network traffic is busbw x t bytes, shared
// by the r NICs of its r GPUs. So:
//   - one host:                 intra, as measured;
//   - one rank per host (r = 1): inter, as measured: every edge is a network edge, the model's inter group;
//   - r > 1 ranks on each host:  inter, derived: per-GPU bus bandwidth = measured busbw / r, when the network
//     bounds the ring (its busbw clearly below what the same collective reaches inside a node: below
//     kNetworkBoundShare of the intra figure) and the result is a plausible NIC rate (at most kNicSlack x the
//     profile's inter link). The latency stays the measured per-step alpha (the slowest step of a pipelined ring
//     is its network step). The measured table is not kept: it describes groups of that host layout, which the
//     model's inter groups (one GPU per node) are not;
//   - anything else (hosts with different rank counts, a busbw near the NVLink figure, a per-GPU rate above the
//     NIC's): ambiguous, refused with the run to make instead (one GPU per node).
#include <string>

namespace zeropp::calibrate {

// Of the intra figure: above it, NVLink may be what bounds the ring, and busbw / r would understate the network.
inline constexpr double kNetworkBoundShare = 0.9;
// Of the profile's inter link (the NIC's rate): above it, the ring did not send busbw x t bytes through r NICs
// (NCCL's tree or NVLS-tree all-reduce, SHARP in the switches, or fewer ranks than NICs in use).
inline constexpr double kNicSlack = 1.05;

struct HostLayout {
  int hosts = 1;
  int ranks_per_host = 1;  // 0: hosts hold different numbers of ranks
  bool known = true;       // false: the results do not say (Google Benchmark JSON of another program)
  friend bool operator==(const HostLayout&, const HostLayout&) = default;
};

// What the inter fit of one collective becomes: its bandwidth divided by `divisor` (1: as measured), and a note
// for people saying what was derived from what.
struct InterMapping {
  double divisor = 1;
  bool keep_table = true;
  std::string note;  // empty when nothing was derived
};

// `what` names the fit ("inter/all_reduce") and `sources` its files, for messages. busbw: the fitted bus
// bandwidth of the run as measured (bytes/s); intra_busbw: what the same collective reaches inside a node (the
// calibration's own intra fit, else the profile's); nic: the profile's inter link bandwidth. Throws SpecError
// naming `field` when the mapping is ambiguous, with the run that is not.
InterMapping map_inter_run(const std::string& what, const std::string& field, const std::string& sources,
                           const HostLayout& layout, double busbw, double intra_busbw, double nic);

}  // namespace zeropp::calibrate
