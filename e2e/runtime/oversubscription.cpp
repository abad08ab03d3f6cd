#include "e2e/runtime/oversubscription.hpp"

#include <sched.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "e2e/comm/gather.hpp"
#ifdef ZEROPP_HAVE_CUDA
#include "cuda_util/local_device.hpp"
#endif

namespace zeropp::e2e {
namespace {

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "?";
  return name;
}

// The CPUs this process may run on, as a space-separated list ("0 1"); all online CPUs when unknown.
std::string cpu_list() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::string out;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) out += std::to_string(c) + " ";
    return out;
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (long c = 0; c < online; ++c) out += std::to_string(c) + " ";
  return out;
}

int visible_gpus() {
#ifdef ZEROPP_HAVE_CUDA
  return cuda_util::device_count();
#else
  return 0;
#endif
}

}  // namespace

std::optional<std::string> oversubscription(Communicator& world, bool gpu_backend, int threads_per_rank) {
  // "host|gpus|cpu cpu ..." per rank.
  const std::string mine = fmt::format("{}|{}|{}", host_name(), visible_gpus(), cpu_list());
  const std::vector<std::string> all = all_gather_strings(world, mine);
  struct Host {
    int ranks = 0;
    int gpus = 0;
    std::set<int> cpus;
  };
  std::map<std::string, Host> hosts;
  for (const std::string& line : all) {
    const auto a = line.find('|'), b = line.find('|', a + 1);
    Host& h = hosts[line.substr(0, a)];
    ++h.ranks;
    h.gpus = std::max(h.gpus, std::stoi(line.substr(a + 1, b - a - 1)));
    std::istringstream cpus(line.substr(b + 1));
    for (int c; cpus >> c;) h.cpus.insert(c);
  }
  std::optional<std::string> worst;
  double worst_ratio = 1.0;
  for (const auto& [name, h] : hosts) {
    const int threads = h.ranks * std::max(1, threads_per_rank);
    const int units = gpu_backend ? h.gpus : static_cast<int>(h.cpus.size());
    const double ratio = units > 0 ? static_cast<double>(gpu_backend ? h.ranks : threads) / units : INFINITY;
    if (ratio <= worst_ratio) continue;
    worst_ratio = ratio;
    worst = gpu_backend ? fmt::format("{} ranks share {} GPU(s) on host {}", h.ranks, h.gpus, name)
                        : fmt::format("{} ranks ({} thread(s) each) share {} core(s) on host {}", h.ranks,
                                      std::max(1, threads_per_rank), h.cpus.size(), name);
  }
  return worst;
}

}  // namespace zeropp::e2e
