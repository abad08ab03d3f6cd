#include "e2e/model/reference.hpp"

#include <cmath>

namespace zeropp::e2e {

ReferenceTrainer::ReferenceTrainer(Backend& backend, const ReferenceConfig& cfg, const DataSource& data)
    : backend_(&backend),
      cfg_(cfg),
      data_(&data),
      model_(backend, cfg.model, chunk_spec_for_stage(cfg.model, 0, 1, cfg.micro_batch, cfg.microbatches)),
      optim_(backend, cfg.optim, model_.layout(), 0, model_.layout().numel()) {
  model_.allocate_parameters();
  model_.init_parameters(cfg.seed);
}

StepResult ReferenceTrainer::step() {
  model_.zero_gradients();
  double loss = 0.0;
  for (int g = 0; g < cfg_.microbatches; ++g) {
    const TokenBatch batch = data_->batch(iteration_, g, cfg_.microbatches, cfg_.micro_batch, cfg_.model.T);
    model_.forward(g, batch, Tensor{}, cfg_.stash);
    if (cfg_.stash == StashMode::recompute) model_.recompute(g);
    loss += model_.loss(g);
    if (cfg_.fused_backward) {
      model_.backward(g, Tensor{});
    } else {
      model_.backward_input(g, Tensor{});
      model_.backward_weight(g);
    }
  }
  StepResult r;
  r.loss = loss / cfg_.microbatches;
  const double sum_sq = model_.grad_sum_squares();
  r.grad_norm = std::sqrt(sum_sq);
  r.clip_scale = clip_scale(sum_sq, cfg_.optim.grad_clip);
  ++iteration_;
  optim_.step(model_.parameters(), model_.gradients(), static_cast<int>(iteration_), r.clip_scale);
  return r;
}

std::vector<float> ReferenceTrainer::host_parameters() const {
  std::vector<float> out(static_cast<std::size_t>(model_.layout().numel()));
  backend_->copy_to_host(out.data(), model_.parameters());
  return out;
}

std::vector<float> ReferenceTrainer::host_gradients() const {
  std::vector<float> out(static_cast<std::size_t>(model_.layout().numel()));
  backend_->copy_to_host(out.data(), model_.gradients());
  return out;
}

}  // namespace zeropp::e2e
