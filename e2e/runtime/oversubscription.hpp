#pragma once
// Whether the job's ranks outnumber the cores (CPU backend) or GPUs (CUDA backend) they run on. Measured times of
// an oversubscribed job include waiting for a core (or a GPU shared by several ranks), which the cost model does not
// price, so `zeropp-train --compare-model` says so beside its comparison.
#include <optional>
#include <string>

#include "e2e/comm/communicator.hpp"

namespace zeropp::e2e {

// Collective over `world`. Every rank reports its host name, the CPUs it may run on (its affinity mask) and, with
// the CUDA backend, the GPUs it sees; per host, the ranks are compared with the union of their CPUs times
// `threads_per_rank` (CPU backend) or with the GPUs (CUDA). Returns, on every rank, one line naming the worst host
// ("4 ranks (1 thread each) share 2 cores on host x"), or nullopt when no host is oversubscribed.
std::optional<std::string> oversubscription(Communicator& world, bool gpu_backend, int threads_per_rank);

}  // namespace zeropp::e2e
