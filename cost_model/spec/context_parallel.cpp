#include "cost_model/spec/context_parallel.hpp"

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp {

ModelSpec cp_rank_model(const ModelSpec& model, int cp) {
  if (cp <= 1) return model;
  ModelSpec local = model;
  local.seq_len = model.seq_len / cp;  // exact once validate_context_parallel accepted the plan
  return local;
}

void validate_context_parallel(const ModelSpec& m, const ParallelSpec& p) {
  if (p.cp <= 1) return;
  const std::string field = "parallel.cp";
  if (m.attention_kind() != AttentionKind::flash)
    throw SpecError(field, fmt::format("parallel.cp={} needs model.attention=flash: context parallelism runs in the "
                                       "fused attention kernel (Transformer Engine's), not the unfused one",
                                       p.cp));
  if (p.cp_kind == CpKind::ring) {
    if (m.seq_len % (2 * p.cp) != 0)
      throw SpecError(field, fmt::format("parallel.cp={} does not split model.seq_len={} into 2*cp={} chunks (ring "
                                         "attention's causal load balancing gives each CP rank two)",
                                         p.cp, m.seq_len, 2 * p.cp));
    return;
  }
  if (m.seq_len % p.cp != 0)
    throw SpecError(field, fmt::format("parallel.cp={} does not divide model.seq_len={}", p.cp, m.seq_len));
  // tp divides both (validate(Plan) checks it first); Ulysses hands each CP rank whole heads.
  const int heads = m.heads / p.tp, kv_heads = m.kv_heads_or_heads() / p.tp;
  if (heads % p.cp != 0 || kv_heads % p.cp != 0)
    throw SpecError(field, fmt::format("parallel.cp={} does not divide the {} heads and {} key/value heads of a TP "
                                       "rank (parallel.cp_kind=ulysses moves whole heads)",
                                       p.cp, heads, kv_heads));
}

}  // namespace zeropp
