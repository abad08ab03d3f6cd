// One name table per spec enum. The JSON configs, the CLI and every printed table use these names, so a value
// printed by one command can be pasted into a config or another command unchanged.
#include "cost_model/spec/names.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"

namespace zeropp {
namespace {

template <typename E, std::size_t N>
using Table = std::array<std::pair<E, std::string_view>, N>;

constexpr Table<Dtype, 3> kDtypes{{{Dtype::bf16, "bf16"}, {Dtype::fp16, "fp16"}, {Dtype::fp32, "fp32"}}};

constexpr Table<Device, 2> kDevices{{{Device::gpu, "gpu"}, {Device::cpu, "cpu"}}};

constexpr Table<MlpKind, 2> kMlps{{{MlpKind::gelu, "gelu"}, {MlpKind::swiglu, "swiglu"}}};

constexpr Table<AttentionKind, 2> kAttentions{{{AttentionKind::flash, "flash"}, {AttentionKind::unfused, "unfused"}}};

constexpr Table<Strategy, 6> kStrategies{{{Strategy::three_d, "3d"},
                                          {Strategy::zero3, "zero3"},
                                          {Strategy::pp_zero1, "1f1b_zero1"},
                                          {Strategy::zero3_pp, "zero3_pp"},
                                          {Strategy::zeropp_a, "zeropp_a"},
                                          {Strategy::zeropp_b, "zeropp_b"}}};

constexpr Table<ScheduleKind, 7> kSchedules{{{ScheduleKind::gpipe, "gpipe"},
                                             {ScheduleKind::one_f_one_b, "1f1b"},
                                             {ScheduleKind::interleaved, "interleaved"},
                                             {ScheduleKind::bfs, "bfs"},
                                             {ScheduleKind::zb_h1, "zb_h1"},
                                             {ScheduleKind::zb_h2, "zb_h2"},
                                             {ScheduleKind::zeropp, "zeropp"}}};

constexpr Table<Recompute, 3> kRecomputes{
    {{Recompute::none, "none"}, {Recompute::selective, "selective"}, {Recompute::full, "full"}}};

constexpr Table<GradReduce, 2> kGradReduces{{{GradReduce::per_unit, "per_unit"}, {GradReduce::per_w, "per_w"}}};

constexpr Table<CpKind, 2> kCpKinds{{{CpKind::ring, "ring"}, {CpKind::ulysses, "ulysses"}}};

constexpr Table<Framework, 5> kFrameworks{{{Framework::megatron, "megatron"},
                                           {Framework::deepspeed, "deepspeed"},
                                           {Framework::fsdp2, "fsdp2"},
                                           {Framework::zeropp, "zeropp"},
                                           {Framework::fsdp1, "fsdp1"}}};

constexpr Table<Provenance, 4> kProvenances{{{Provenance::nominal, "nominal"},
                                             {Provenance::published, "published"},
                                             {Provenance::calibrated, "calibrated"},
                                             {Provenance::measured, "measured"}}};

constexpr Table<TpCommOverlap, 3> kTpCommOverlaps{{{TpCommOverlap::none, "none"},
                                                   {TpCommOverlap::userbuffers, "userbuffers"},
                                                   {TpCommOverlap::async_tp, "async_tp"}}};

constexpr Table<TransformerImpl, 2> kTransformerImpls{
    {{TransformerImpl::transformer_engine, "transformer_engine"}, {TransformerImpl::local, "local"}}};

constexpr Table<AttentionKernel, 4> kAttentionKernels{{{AttentionKernel::flash2, "flash2"},
                                                        {AttentionKernel::flash3, "flash3"},
                                                        {AttentionKernel::cudnn, "cudnn"},
                                                        {AttentionKernel::unfused, "unfused"}}};

constexpr Table<Fp8Recipe, 4> kFp8Recipes{{{Fp8Recipe::te_delayed, "te_delayed"},
                                           {Fp8Recipe::te_current, "te_current"},
                                           {Fp8Recipe::torchao_tensorwise, "torchao_tensorwise"},
                                           {Fp8Recipe::torchao_rowwise, "torchao_rowwise"}}};

template <typename E, std::size_t N>
std::string name_of(const Table<E, N>& table, E value) {
  for (const auto& [e, name] : table)
    if (e == value) return std::string(name);
  return fmt::format("<invalid {}>", static_cast<int>(value));  // only reachable through a bad cast
}

template <typename E, std::size_t N>
E parse(const Table<E, N>& table, std::string_view text, const std::string& field) {
  for (const auto& [e, name] : table)
    if (name == text) return e;
  std::string allowed;
  for (const auto& [e, name] : table) allowed += (allowed.empty() ? "" : ", ") + std::string(name);
  throw SpecError(field, fmt::format("{}=\"{}\" must be one of {}", field, text, allowed));
}

}  // namespace

std::string to_string(Dtype v) { return name_of(kDtypes, v); }
std::string to_string(Device v) { return name_of(kDevices, v); }
std::string to_string(MlpKind v) { return name_of(kMlps, v); }
std::string to_string(AttentionKind v) { return name_of(kAttentions, v); }
std::string to_string(Strategy v) { return name_of(kStrategies, v); }
std::string to_string(ScheduleKind v) { return name_of(kSchedules, v); }
std::string to_string(Recompute v) { return name_of(kRecomputes, v); }
std::string to_string(GradReduce v) { return name_of(kGradReduces, v); }
std::string to_string(CpKind v) { return name_of(kCpKinds, v); }
std::string to_string(Framework v) { return name_of(kFrameworks, v); }
std::string to_string(Provenance v) { return name_of(kProvenances, v); }
std::string to_string(TpCommOverlap v) { return name_of(kTpCommOverlaps, v); }
std::string to_string(TransformerImpl v) { return name_of(kTransformerImpls, v); }
std::string to_string(Fp8Recipe v) { return name_of(kFp8Recipes, v); }
std::string to_string(AttentionKernel v) { return name_of(kAttentionKernels, v); }

Dtype dtype_from_string(std::string_view s, const std::string& field) { return parse(kDtypes, s, field); }
Device device_from_string(std::string_view s, const std::string& field) { return parse(kDevices, s, field); }
MlpKind mlp_from_string(std::string_view s, const std::string& field) { return parse(kMlps, s, field); }
AttentionKind attention_from_string(std::string_view s, const std::string& field) {
  return parse(kAttentions, s, field);
}
Strategy strategy_from_string(std::string_view s, const std::string& field) { return parse(kStrategies, s, field); }
ScheduleKind schedule_from_string(std::string_view s, const std::string& field) { return parse(kSchedules, s, field); }
Recompute recompute_from_string(std::string_view s, const std::string& field) { return parse(kRecomputes, s, field); }
GradReduce grad_reduce_from_string(std::string_view s, const std::string& field) {
  return parse(kGradReduces, s, field);
}
CpKind cp_kind_from_string(std::string_view s, const std::string& field) { return parse(kCpKinds, s, field); }
Framework framework_from_string(std::string_view s, const std::string& field) { return parse(kFrameworks, s, field); }
Provenance provenance_from_string(std::string_view s, const std::string& field) {
  return parse(kProvenances, s, field);
}
TpCommOverlap tp_comm_overlap_from_string(std::string_view s, const std::string& field) {
  return parse(kTpCommOverlaps, s, field);
}
TransformerImpl transformer_impl_from_string(std::string_view s, const std::string& field) {
  return parse(kTransformerImpls, s, field);
}
Fp8Recipe fp8_recipe_from_string(std::string_view s, const std::string& field) { return parse(kFp8Recipes, s, field); }
AttentionKernel attention_kernel_from_string(std::string_view s, const std::string& field) {
  return parse(kAttentionKernels, s, field);
}

}  // namespace zeropp
