#pragma once
// `zeropp criterion --experiment`: the byte criterion 2sUb > 9h, the time-based answer on the experiment's
// cluster and the simulated search, reconciled in one paragraph for the search's winning ZeroPP plan.
//
// The plan is the fastest plan of compare's zeropp_a and zeropp_b rows (hybrid A or B, cp = 1) that fits, from
// the same search as `compare` (compare.hpp); b and U are its own. Both criteria predict whether ZeroPP beats
// tensor parallelism; the search answers it by simulation: the winning ZeroPP plan against the 3d row (cp = 1).
// Then whether context parallelism changes that answer: where the space has CP plans, ZeroPP's best and 3D's best
// with CP allowed on both sides (the strategies' bests), and the best CP plan of any row; where it has none, why
// (compare.hpp, cp_absent_reason). Then whether FP8 training (spec/fp8.hpp) changes it (judge_fp8): the same search
// in the other precision (FP8 for a bf16 experiment, bf16 for an FP8 one), ZeroPP's best against 3D's best there;
// or why FP8 is not in question on the cluster (no FP8 peak or no published FP8 GEMM rate).
// The paragraph says which of the two answers the search followed (agreed with) and why the other one missed:
//   - the byte count ignores bandwidth and overlap; the time-based answer weighs them (one layer, U micro-batches);
//   - both look at one layer's TP-vs-ZeRO-3 exchange only; the simulated iteration also has the bubble, the DP
//     sync, recompute and the micro-batch the memory allows: the component that differs most is named.
#include <optional>
#include <string>

#include "cost_model/analytic/criterion.hpp"
#include "cost_model/search/search.hpp"

namespace zeropp::search {

struct CriterionVerdict {
  bool found = false;                // a ZeroPP plan fits (else `paragraph` says why not)
  Candidate zeropp;                  // the winning ZeroPP plan
  std::optional<Candidate> three_d;  // the search's best 3D plan, if one fits
  analytic::Criterion bytes;         // at the plan's b and U
  analytic::CriterionTime time;      // on the experiment's cluster, z = tp = the plan's z
  // The TP rule of the time-based answer: the best 3D plan's (sequence parallelism, --tp-comm-overlap), so the
  // answer grants TP what the plan it is compared with has; without a 3D plan, the best the space allows.
  analytic::CriterionTpRule tp_rule;
  bool search_prefers_zeropp = false;  // zeropp faster than three_d (true when no 3D plan fits)
  bool bytes_agree = false, time_agree = false;
  std::string followed;  // "both", "time-based", "byte criterion", "neither"
  // Context parallelism.
  bool cp_in_space = false;                          // some row with cp > 1 has plans
  std::optional<Candidate> best_cp;                  // the fastest plan with cp > 1 that fits, of any row
  std::string best_cp_row;                           // its row
  std::optional<Candidate> zeropp_any, three_d_any;  // ZeroPP's and 3D's best with CP allowed (any cp)
  bool cp_changes_answer = false;                    // ZeroPP vs 3D with CP allowed differs from the answer at cp = 1
  std::string cp_sentence;                           // the paragraph's last sentences, on CP
  // FP8 (judge_fp8): the other precision's ZeroPP and 3D bests, and whether the answer differs there.
  bool fp8_in_question = false;
  std::optional<Candidate> other_zeropp, other_three_d;
  bool fp8_changes_answer = false;
  std::string fp8_sentence;
  std::string paragraph;                             // the reconciliation, one paragraph
};

// `result` must come from compare's search (compare.hpp, search_options): its rows are families of it (a row it
// does not have counts as a row with no plan).
CriterionVerdict criterion_verdict(const SearchResult& result);

// Appends the FP8 sentence to v.paragraph: runs `options`' search of `ex` in the other precision (ex.fp8 flipped,
// each plan's framework's recipe, or ex's) when the cluster can run FP8, and says whether ZeroPP vs 3D (cp = 1)
// changes; else why FP8 is not in question.
void judge_fp8(const Experiment& ex, const SearchOptions& options, CriterionVerdict& v);

// The TP rule of a 3D plan (its sequence_parallel and tp_comm_overlap); without one, overlap on (the best TP
// communication the plan space has).
analytic::CriterionTpRule tp_rule_of(const std::optional<Candidate>& three_d);
// "TP with overlapped communication (sp+ov)", "TP with sequence parallelism (sp)", "TP (nosp)".
std::string tp_rule_text(const analytic::CriterionTpRule&);

}  // namespace zeropp::search
