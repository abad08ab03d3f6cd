#include "e2e/model/flops.hpp"

#include "cost_model/analytic/flops.hpp"

namespace zeropp::e2e {

// The cost model's counting (cost_model/analytic/flops.hpp), so measured TFLOP/s and predicted times share a
// numerator.
GptFlops microbatch_flops(const GptConfig& g, int b, int blocks, bool with_head) {
  const ModelSpec m = to_model_spec(g);
  const analytic::PassFlops layer = analytic::layer_flops(m, b);
  GptFlops f;
  f.forward = blocks * layer.f;
  f.backward_input = blocks * layer.b;
  f.backward_weight = blocks * layer.w;
  if (with_head) {
    const analytic::PassFlops head = analytic::lm_head_flops(m, b);
    f.forward += head.f;
    f.backward_input += head.b;
    f.backward_weight += head.w;
  }
  return f;
}

double iteration_flops(const GptConfig& g, int b, std::int64_t M) {
  return static_cast<double>(M) * microbatch_flops(g, b, g.L, true).total();
}

}  // namespace zeropp::e2e
