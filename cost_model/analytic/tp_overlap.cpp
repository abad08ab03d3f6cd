#include "cost_model/analytic/tp_overlap.hpp"

#include <algorithm>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/analytic/contention.hpp"
#include "cost_model/analytic/op_time.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {

namespace {

// TransformerEngine's pipelined GEMM -> reduce-scatter: num_splits of the default config for the "pipeline" method.
constexpr int kPipelineSplits = 4;

// The chunks of a GEMM cut along its rows (the tokens: what the sequence-parallel collectives split).
Gemm rows_chunk(const Gemm& g, int chunks) { return Gemm{g.m / chunks, g.n, g.k, g.count}; }
// The backward GEMMs (flops.hpp): the input gradient keeps the token rows, the weight gradient contracts over them.
Gemm dgrad(const Gemm& g) { return dgrad_gemm(g); }

struct Pricing {
  const ClusterSpec& cluster;
  const std::function<double(const Gemm&)>& gemm_seconds;
  Group group;
  int tp = 1;
  double bytes = 0;           // b*s*h elements, in bytes (the full buffer)
  double all_gather = 0;      // one sequence-parallel all-gather of b*s*h (seconds)
  double reduce_scatter = 0;  // one reduce-scatter of b*s*h

  // A collective issued asynchronously beside a GEMM of `g` seconds: what outlasts the GEMM, plus the GEMM's
  // slowdown by the NCCL kernel over the time both run.
  double nccl_beside(double comm, double g) const {
    return std::max(0.0, comm - g) + contention_seconds(cluster, CommKernel::nccl, std::min(comm, g));
  }

  // AG -> GEMM decomposed per rank (TE ring exchange, or PyTorch's pulled shards): tp GEMM chunks, the transfer of
  // chunk i+1 (one ring step) beside chunk i's GEMM. Added seconds: chunking (tp smaller GEMMs against one), the
  // steps that outlast their chunk, and the contention of the transfer kernel.
  double all_gather_into(const Gemm& gemm, CommKernel kernel) const {
    const double whole = gemm_seconds(gemm);
    const double chunk = gemm_seconds(rows_chunk(gemm, tp));
    const double step = all_gather / (tp - 1);
    const double steps = tp - 1;
    return tp * chunk - whole + steps * std::max(0.0, step - chunk) +
           contention_seconds(cluster, kernel, steps * std::min(step, chunk));
  }

  // TE's pipelined GEMM -> RS: 4 chunks on sm_count - 16 SMs, each chunk's RS (16 SMs) beside the next chunk, the
  // last one exposed (at every SM, UB_MAX_SM).
  double userbuffers_pipeline(const Gemm& gemm) const {
    const double whole = gemm_seconds(gemm);
    const double chunk =
        with_sm_margin(cluster, CommKernel::userbuffers, gemm_seconds(rows_chunk(gemm, kPipelineSplits)));
    const double rs =
        collective_time(cluster, Collective::reduce_scatter, group.size, group.stride, bytes / kPipelineSplits);
    return kPipelineSplits * chunk - whole + (kPipelineSplits - 1) * std::max(0.0, rs - chunk) + rs;
  }

  // TE's bulk overlap: the whole collective beside the whole GEMM, which runs on sm_count - 16 SMs.
  double userbuffers_bulk(const Gemm& gemm, double comm) const {
    const double whole = gemm_seconds(gemm);
    const double slowed = with_sm_margin(cluster, CommKernel::userbuffers, whole);
    return slowed - whole + std::max(0.0, comm - slowed);
  }

  // PyTorch's fused matmul -> RS: tp chunks, each partial sum pushed to its owner by copy engine beside the next
  // chunk; the last push and the reduction of the tp partials received (read tp chunks of bytes/tp, write one:
  // memory-bound at the HBM rate) exposed.
  double matmul_into_reduce_scatter(const Gemm& gemm) const {
    const double whole = gemm_seconds(gemm);
    const double chunk = gemm_seconds(rows_chunk(gemm, tp));
    const double step = reduce_scatter / (tp - 1);
    const double reduce = memory_time(cluster, (tp + 1.0) / tp * bytes);
    return tp * chunk - whole + (tp - 1) * std::max(0.0, step - chunk) + step + reduce;
  }
};

}  // namespace

TpLayerSeconds tp_layer_seconds(const Plan& plan, const ModelSpec& model, const LayerGemms& gemms,
                                const std::function<double(const Gemm&)>& gemm_seconds, double wgrad_store) {
  // The weight-gradient GEMMs as the W action prices them (accumulating in place where the framework does).
  const auto wgrad = [wgrad_store](const Gemm& g) { return wgrad_gemm(g, wgrad_store); };
  const ParallelSpec& par = plan.parallel;
  if (par.tp <= 1) return {};
  const Group g = tp_group(par);
  const double bytes = static_cast<double>(par.micro_batch) * model.seq_len * model.hidden * element_bytes(par.dtype);
  if (!par.sequence_parallel) {
    const double all_reduce = collective_time(plan.cluster, Collective::all_reduce, g.size, g.stride, bytes);
    return {2 * all_reduce, 2 * all_reduce};
  }
  Pricing p{plan.cluster,
            gemm_seconds,
            g,
            par.tp,
            bytes,
            collective_time(plan.cluster, Collective::all_gather, g.size, g.stride, bytes),
            collective_time(plan.cluster, Collective::reduce_scatter, g.size, g.stride, bytes)};
  const Gemm& qkv = gemms.gemm[LayerGemms::qkv];
  const Gemm& proj = gemms.gemm[LayerGemms::proj];
  const Gemm& up = gemms.gemm[LayerGemms::up];
  const Gemm& down = gemms.gemm[LayerGemms::down];
  const double ag = p.all_gather, rs = p.reduce_scatter;
  switch (par.tp_comm_overlap) {
    case TpCommOverlap::none: {
      const double forward = 2 * ag + 2 * rs;
      if (framework_of(par) != Framework::megatron) return {forward, 2 * ag + 2 * rs};
      const double column_backward =
          p.nccl_beside(ag, gemm_seconds(dgrad(qkv))) + p.nccl_beside(rs, gemm_seconds(wgrad(qkv))) +
          p.nccl_beside(ag, gemm_seconds(dgrad(up))) + p.nccl_beside(rs, gemm_seconds(wgrad(up)));
      return {forward, 2 * ag + column_backward};
    }
    case TpCommOverlap::userbuffers: {
      const double forward = p.all_gather_into(qkv, CommKernel::ring_exchange) + p.userbuffers_pipeline(proj) +
                             p.all_gather_into(up, CommKernel::ring_exchange) + p.userbuffers_pipeline(down);
      const double backward = p.all_gather_into(dgrad(proj), CommKernel::ring_exchange) +
                              p.all_gather_into(dgrad(down), CommKernel::ring_exchange) +
                              p.userbuffers_bulk(dgrad(qkv), ag) + p.userbuffers_bulk(wgrad(qkv), rs) +
                              p.userbuffers_bulk(dgrad(up), ag) + p.userbuffers_bulk(wgrad(up), rs);
      return {forward, backward};
    }
    case TpCommOverlap::async_tp: {
      const double forward = p.all_gather_into(qkv, CommKernel::symmetric_memory) + p.matmul_into_reduce_scatter(proj) +
                             p.all_gather_into(up, CommKernel::symmetric_memory) + p.matmul_into_reduce_scatter(down);
      const double backward = p.all_gather_into(dgrad(proj), CommKernel::symmetric_memory) +
                              p.all_gather_into(dgrad(down), CommKernel::symmetric_memory) +
                              p.matmul_into_reduce_scatter(dgrad(qkv)) + p.matmul_into_reduce_scatter(dgrad(up));
      return {forward, backward};
    }
  }
  return {};
}

}  // namespace zeropp::analytic
