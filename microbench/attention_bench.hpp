#pragma once
// The attention core of the trainer's backend (e2e Backend::flash_attention_forward/backward: causal, grouped-query
// heads, packed qkv rows, lse saved), forward and backward, at one shape per case. On the CUDA backend this is the
// kernel the trainer's Llama layers run (tensor-core FlashAttention-2 for heads of 16..128, flash_tc.cu), measured
// alone so it can be set beside PyTorch's SDPA at the same shape (scripts/device/sdpa_bench.py).
//
// The same core unfused (Backend::grouped_attention_forward/backward: batched Q K^T, the causal softmax kernel over
// the materialised s x s scores, batched P V, and their backward), which the trainer's GPT layers run: the cost
// model prices it as GEMMs plus the scores' bytes (analytic/time_model.cpp), and this case measures both together.
//
// A backend may have several flash kernels: each can also be measured by name (FlashKernelRun), beside the backend's
// own choice, so that one run compares them at the same shape (zeropp-bench-cuda: mma.sync, WMMA and scalar,
// microbench/cuda/register.cpp).
//
// Names: attention/trainer/<dtype>/<flash|flash-KERNEL|unfused>/F|B/h:H/a:A/kv:KV/s:S/b:B (h = a d), as the CPU-only
// suite of microbench/cpu/attention_bench.hpp names its MHA cases, plus the kv heads. Counters:
//   flop, FLOP/s        the convention of the other zeropp-bench suites (layer_pass_flop, cpu/attention_bench):
//                       the attention core as the cost model counts it, forward 4 b s^2 h, backward 8 b s^2 h
//                       (not halved for the causal mask);
//   flop_causal, FLOP/s_causal  what a causal kernel executes, as scripts/device/sdpa_bench.py's "causal"
//                       figures and the backend's own profile (CudaBackend::flash_attention_*) count it: forward
//                       2 b s^2 h (half of 4 b s^2 h), backward 2.5x that (5 matmuls against 2; Dao 2023,
//                       section 4), so the CUDA numbers sit directly beside PyTorch SDPA's at the same shape.
// The backward time includes the delta = rowsum(dout * out) kernel, as the trainer's backward does.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "e2e/backend/backend.hpp"

namespace zeropp::microbench {

// One flash kernel of a backend, called in place of Backend::flash_attention_forward/backward with the benchmark's
// buffers (same arguments; the backward also gets a delta scratch of B NH T fp32).
struct FlashKernelRun {
  std::string name;  // in the benchmark's name: flash-<name>
  std::function<void(e2e::Backend&, e2e::Tensor out, e2e::Tensor lse, e2e::Tensor qkv, int B, int T, int NH, int KVH,
                     int hs)>
      forward;
  std::function<void(e2e::Backend&, e2e::Tensor dqkv, e2e::Tensor delta, e2e::Tensor dout, e2e::Tensor out,
                     e2e::Tensor lse, e2e::Tensor qkv, int B, int T, int NH, int KVH, int hs)>
      backward;
};

struct AttentionCase {
  long s = 0, heads = 0, kv_heads = 0, head_dim = 0, b = 0;
  bool unfused = false;  // the materialised scores (grouped_attention_*) instead of the flash kernels
  std::shared_ptr<const FlashKernelRun> kernel;  // flash: this kernel instead of the backend's choice
  std::string name(const std::string& dtype, bool backward) const;
};

// The cases: heads[i] query heads over kv_heads[i] key/value heads (kv_heads empty: as many as heads), each at
// sequence length s, head dimension d and micro-batch b, flash (unfused = false). Throws std::invalid_argument (naming the
// --zeropp_attention_* flag) when the lists differ in length or a kv count does not divide its heads.
std::vector<AttentionCase> attention_cases(const std::vector<long>& heads, const std::vector<long>& kv_heads, long s,
                                           long d, long b);

// The kernels of `available` that `names` (--zeropp_attention_kernels) names, in that order; std::invalid_argument
// naming the flag, the backend and its choices for a name it does not have.
std::vector<std::shared_ptr<const FlashKernelRun>> select_flash_kernels(
    const std::vector<std::shared_ptr<const FlashKernelRun>>& available, const std::vector<std::string>& names,
    const std::string& backend);

// FLOPs of one pass as above: the zeropp-bench count (causal = false) or the executed causal count (true).
double attention_flop(const AttentionCase& c, bool backward, bool causal);

// Times one pass on `backend` (max over the ranks of `comm`): inputs uniform in [-1, 1), outputs checked finite
// after the warm-up; counters flop and FLOP/s.
void bench_attention(benchmark::State& state, const std::string& backend, const AttentionCase& c, bool backward,
                     MPI_Comm comm);

}  // namespace zeropp::microbench
