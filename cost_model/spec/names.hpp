#pragma once
// String names of the spec enums, one table each, used by JSON I/O, the CLI and printed output.
// from_string throws SpecError(field, "... must be one of ...") for an unknown name.
#include <string>
#include <string_view>

#include "cost_model/spec/cluster_spec.hpp"
#include "cost_model/spec/model_spec.hpp"
#include "cost_model/spec/parallel_spec.hpp"

namespace zeropp {

std::string to_string(Dtype);
std::string to_string(Device);  // "gpu", "cpu"
std::string to_string(MlpKind);
std::string to_string(AttentionKind);  // "flash", "unfused"
std::string to_string(Strategy);       // "3d", "zero3", "1f1b_zero1", "zero3_pp", "zeropp_a", "zeropp_b"
std::string to_string(ScheduleKind);   // "gpipe", "1f1b", "interleaved", "bfs", "zb_h1", "zb_h2", "zeropp"
std::string to_string(Recompute);      // "none", "selective", "full"
std::string to_string(GradReduce);     // "per_unit", "per_w"
std::string to_string(CpKind);         // "ring", "ulysses"
std::string to_string(Framework);      // "megatron", "deepspeed", "fsdp2", "zeropp", "fsdp1"
std::string to_string(Provenance);     // "nominal", "published", "calibrated", "measured"
std::string to_string(TpCommOverlap);  // "none", "userbuffers", "async_tp"
std::string to_string(TransformerImpl);  // "transformer_engine", "local"
std::string to_string(Fp8Recipe);      // "te_delayed", "te_current", "torchao_tensorwise", "torchao_rowwise"
std::string to_string(AttentionKernel);  // "flash2", "flash3", "cudnn", "unfused"

Dtype dtype_from_string(std::string_view, const std::string& field);
Device device_from_string(std::string_view, const std::string& field);
MlpKind mlp_from_string(std::string_view, const std::string& field);
AttentionKind attention_from_string(std::string_view, const std::string& field);
Strategy strategy_from_string(std::string_view, const std::string& field);
ScheduleKind schedule_from_string(std::string_view, const std::string& field);
Recompute recompute_from_string(std::string_view, const std::string& field);
GradReduce grad_reduce_from_string(std::string_view, const std::string& field);
CpKind cp_kind_from_string(std::string_view, const std::string& field);
Framework framework_from_string(std::string_view, const std::string& field);
Provenance provenance_from_string(std::string_view, const std::string& field);
TpCommOverlap tp_comm_overlap_from_string(std::string_view, const std::string& field);
TransformerImpl transformer_impl_from_string(std::string_view, const std::string& field);
Fp8Recipe fp8_recipe_from_string(std::string_view, const std::string& field);
AttentionKernel attention_kernel_from_string(std::string_view, const std::string& field);

}  // namespace zeropp
