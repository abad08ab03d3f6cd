#include "cost_model/analytic/contention.hpp"

#include <algorithm>

namespace zeropp::analytic {

namespace {

double sm_share(const ClusterSpec& cluster, int sms) {
  if (!cluster.gpu || !cluster.gpu->sm_count.known()) return 0;
  return std::min(0.99, sms / cluster.gpu->sm_count.value);
}

}  // namespace

double contention_share(const ClusterSpec& cluster, CommKernel kernel) {
  switch (kernel) {
    case CommKernel::nccl:
      return cluster.gpu ? cluster.gpu->nccl_contention.value : 0.0;
    case CommKernel::userbuffers:
      return sm_share(cluster, kUserbuffersSms);
    case CommKernel::ring_exchange:
      return sm_share(cluster, kRingExchangeSms);
    case CommKernel::symmetric_memory:
      return 0;
  }
  return 0;
}

double contention_seconds(const ClusterSpec& cluster, CommKernel kernel, double overlap) {
  return contention_share(cluster, kernel) * std::max(0.0, overlap);
}

double with_sm_margin(const ClusterSpec& cluster, CommKernel kernel, double seconds) {
  return seconds / (1 - contention_share(cluster, kernel));
}

}  // namespace zeropp::analytic
