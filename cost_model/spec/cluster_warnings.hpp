#pragma once
// Cluster values that are valid but implausible in the units the keys state: what a unit mix-up produces.
//   intra.bandwidth_GBps above 900 (NVLink 5, the fastest GPU link shipping, per direction): a bidirectional
//     figure (NVLink 4 is sold as "900 GB/s", 450 each way) or one in Gb/s;
//   intra.bandwidth_GBps of 600 on an A100-class GPU or 900 on an H100-class one (by its bf16 peak): NVLink 3's or
//     4's bidirectional marketing figure, twice the per-direction rate the key wants;
//   inter.bandwidth_GBps of 100, 200, 400 or 800: a NIC's rate in Gb/s (400 Gb/s = 50 GB/s);
//   memory_gib of 80, 141, 180 or 192: a size sold in GB, which is neither the GiB the key wants nor, in general,
//     what the GPU reports (H100 "80 GB" reports 79.65 GiB, H200 "141 GB" 140.4 GiB, B200 "180 GB" 179.06 GiB).
// They warn instead of failing: the figure may be right (an 800 Gb/s NIC really is 100 GB/s). The checks read the
// values as written: memory_mib (nvidia-smi's figure) is exact by construction, so 81920 MiB (the A100 80GB's
// 80 GiB) does not warn where "memory_gib": 80 does.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zeropp {

// One line per implausible value of a cluster object that cluster_from_json accepted, naming `<field>.<key>`,
// the value and the likely mix-up.
std::vector<std::string> cluster_warnings(const nlohmann::json& cluster, const std::string& field = "cluster");

// True for a memory size in GiB that equals a marketing figure in GB (the list above).
bool is_marketing_memory_gib(double gib);

}  // namespace zeropp
