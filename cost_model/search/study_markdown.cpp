// to_markdown(StudyReport): the study report as Markdown. Every number here comes from the StudyReport; this file
// only words and formats it. Model output and measurements are labelled as such where they appear.
#include <string>

#include <fmt/format.h>

#include "cost_model/analytic/flops.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/search/criterion_verdict.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/search/study_report.hpp"
#include "cost_model/spec/fp8.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/provenance.hpp"

namespace zeropp::search {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const analytic::Estimate& est(const StudyReport& r, int i) { return r.rows[i].estimate.estimate; }

std::string percent_faster(double speedup) { return fmt::format("{:+.1f}%", 100 * (speedup - 1)); }

// describe_plan without its leading strategy name (the compare row names it): "z=8 pp=4 dp=2 v=2 zeropp b=1 ...".
std::string layout_text(const ParallelSpec& p) {
  const std::string text = describe_plan(p);
  const auto space = text.find(' ');
  return space == std::string::npos ? text : text.substr(space + 1);
}

// "`zeropp_b` (z=8 pp=4 ..., 1.234 s)"; "by the closed form" after the time when the row was not simulated.
std::string row_label(const StudyReport& r, int i) {
  return fmt::format("`{}` ({}, {:.3f} s{})", r.rows[i].spec.name, layout_text(r.rows[i].plan.parallel),
                     est(r, i).time_s.iteration, r.rows[i].estimate.simulated ? "" : " by the closed form");
}

void experiment_section(std::string& md, const StudyReport& r) {
  const Experiment& ex = r.experiment;
  const ModelSpec& m = ex.model;
  const ClusterSpec& c = ex.cluster;
  md += "## Experiment\n\n";
  md += fmt::format("- Model `{}`: L = {}, h = {}, a = {}, s = {}, V = {}; {:.2f} B parameters.\n", m.name, m.layers,
                    m.hidden, m.heads, m.seq_len, m.vocab, analytic::total_params(m) / 1e9);
  md += fmt::format(
      "- Cluster `{}`: {} GPUs per node, {:.0f} GiB and {:.0f} TFLOP/s dense {} per GPU; per GPU {:.0f} GB/s "
      "intra-node, {:.1f} GB/s inter-node (GB = 1e9, one direction).\n",
      c.name, c.gpus_per_node, c.memory_bytes / kGiB, c.peak(ex.dtype) / 1e12, dtype_label(ex.dtype, ex.fp8),
      c.intra.bandwidth / 1e9, c.inter.bandwidth / 1e9);
  md += fmt::format(
      "- Cluster figures: collectives {}, GEMM {} (nominal: spec sheets and assumed efficiencies; "
      "published: others' measurements; calibrated: fitted on the machine by `zeropp calibrate`; "
      "`zeropp clusters {}` lists each entry's).\n",
      provenance_summary(c, "collectives"), provenance_summary(c, "gemm"), c.name);
  const int nodes = (ex.gpus + c.gpus_per_node - 1) / c.gpus_per_node;
  md += fmt::format("- {} GPUs ({} node{}), global batch {} sequences x {} tokens = {} tokens per iteration, {}.\n\n",
                    ex.gpus, nodes, nodes == 1 ? "" : "s", ex.global_batch, m.seq_len,
                    ex.global_batch * static_cast<long long>(m.seq_len), dtype_label(ex.dtype, ex.fp8));
}

// "- Error band of ZeroPP vs 3D: ..." from the validation sets' leave-one-out errors (StudyReport::band).
void band_line(std::string& md, const StudyReport& r, const std::string& what, int a, int b) {
  if (!r.band.present || a < 0 || b < 0) return;
  const double x = speedup(r, a, b);
  const auto [tlo, thi] = ratio_band(x, r.band.typical);
  const auto [wlo, whi] = ratio_band(x, r.band.worst);
  const char* verdict = (tlo > 1 || thi < 1) ? (wlo > 1 || whi < 1 ? "beyond even the worst error"
                                                                   : "beyond the typical error, not the worst")
                                             : "within the typical error: the model cannot tell them apart";
  md += fmt::format(
      "- Error band of {} {:.2f}x: {:.2f}x to {:.2f}x at the typical error ({:.1f}%), {:.2f}x to {:.2f}x "
      "at the worst ({:.1f}%): **{}**.\n",
      what, x, tlo, thi, 100 * r.band.typical, wlo, whi, 100 * r.band.worst, verdict);
}

void band_note(std::string& md, const StudyReport& r) {
  if (r.band.present) {
    md += fmt::format(
        "The error band: each predicted time may be off by the model's leave-one-out error on the published runs "
        "of this GPU ({}: typical = the set's mean |error|, worst = its largest), so a ratio r of two times lies in "
        "[r(1-e)/(1+e), r(1+e)/(1-e)]. That is conservative: two plans timed by the same model tend to err the "
        "same way.\n\n",
        r.band.sets);
  } else {
    md +=
        "**No error band**: no published validation set is for this GPU, so the model's error on it is not "
        "known.\n\n";
  }
}

// The fastest row after the winner that fits (another strategy row), -1 when none.
int runner_up(const StudyReport& r) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(r.rows.size()); ++i) {
    if (i == r.winner || !r.rows[i].found || !r.rows[i].estimate.estimate.feasible) continue;
    if (best < 0 || est(r, i).time_s.iteration < est(r, best).time_s.iteration) best = i;
  }
  return best;
}

void verdict_section(std::string& md, const StudyReport& r) {
  const double limit = r.experiment.cluster.memory_bytes;
  md += "## Verdict\n\n";
  if (r.winner < 0) {
    md += "No strategy fits in memory for this experiment: every row of the table below is over the GPU's limit.\n\n";
    return;
  }
  const auto& w = est(r, r.winner);
  md += fmt::format(
      "**Fastest plan: {}** — {:.1f} TFLOP/s per GPU, MFU {:.1f}% (full-attention count {:.1f}%), peak {:.1f} GiB of "
      "{:.0f} GiB.\n\n",
      row_label(r, r.winner), w.throughput.tflops_per_gpu, 100 * w.throughput.mfu,
      100 * w.throughput.mfu_full_attention, w.memory_bytes.peak / kGiB, limit / kGiB);
  if (const int second = runner_up(r); second >= 0) {
    md += fmt::format("- Next fastest: {}.\n", row_label(r, second));
    band_line(md, r, fmt::format("the winner vs `{}`", r.rows[second].spec.name), r.winner, second);
    md += "\n";
  }
  if (r.best_zeropp < 0) {
    md += "No ZeroPP plan without context parallelism fits in memory here.\n\n";
    band_note(md, r);
    return;
  }
  const auto& z = est(r, r.best_zeropp);
  if (r.winner == r.best_zeropp_cp)
    md += fmt::format("ZeroPP with context parallelism wins here; without CP its best plan {} is {:.2f}x slower.\n\n",
                      row_label(r, r.best_zeropp), z.time_s.iteration / w.time_s.iteration);
  else if (r.best_zeropp != r.winner)
    md += fmt::format("ZeroPP does not win here; its best plan {} is {:.2f}x slower than the winner.\n\n",
                      row_label(r, r.best_zeropp), z.time_s.iteration / w.time_s.iteration);
  md += fmt::format("Best ZeroPP plan {}, peak {:.1f} GiB of {:.0f} GiB:\n\n", row_label(r, r.best_zeropp),
                    z.memory_bytes.peak / kGiB, limit / kGiB);
  if (r.three_d >= 0) {
    const double x = speedup(r, r.best_zeropp, r.three_d);
    md += fmt::format("- vs 3D (TP + PP + DP) {}: {:.2f}x, {} throughput; 3D peak {:.1f} GiB.\n",
                      row_label(r, r.three_d), x, percent_faster(x), est(r, r.three_d).memory_bytes.peak / kGiB);
    band_line(md, r, "ZeroPP vs 3D", r.best_zeropp, r.three_d);
  } else {
    md += "- vs 3D: no 3D plan fits in memory.\n";
  }
  if (r.best_pp >= 0) {
    const double x = speedup(r, r.best_zeropp, r.best_pp);
    md += fmt::format("- vs the best pipeline baseline without TP {}: {:.2f}x, {} throughput; its peak {:.1f} GiB.\n",
                      row_label(r, r.best_pp), x, percent_faster(x), est(r, r.best_pp).memory_bytes.peak / kGiB);
    band_line(md, r, "ZeroPP vs the best pipeline baseline", r.best_zeropp, r.best_pp);
  } else {
    md += "- vs the pipeline baselines (1F1B / ZB / BFS + ZeRO-1, naive ZeRO-3 + PP): none fits in memory.\n";
  }
  if (r.best_rival >= 0) {
    const double x = speedup(r, r.best_zeropp, r.best_rival);
    md += fmt::format(
        "- vs the best plan of every other row (3D and the pipelines, pure ZeRO-3, FSDP + TP, and context "
        "parallelism where the space has it) {}: {:.2f}x, {} throughput: ZeroPP without CP {}.\n",
        row_label(r, r.best_rival), x, percent_faster(x), x >= 1 ? "is ahead of all of them" : "is behind it");
    if (r.best_rival != r.three_d && r.best_rival != r.best_pp)
      band_line(md, r, fmt::format("ZeroPP vs `{}`", r.rows[r.best_rival].spec.name), r.best_zeropp, r.best_rival);
  }
  if (r.best_zeropp_cp >= 0 && r.best_rival_cp >= 0) {
    const double x = speedup(r, r.best_zeropp_cp, r.best_rival_cp);
    md += fmt::format(
        "- With context parallelism on both sides: ZeroPP's best plan with CP {} against the best CP plan of the "
        "other strategies {}: {:.2f}x, {} throughput.\n",
        row_label(r, r.best_zeropp_cp), row_label(r, r.best_rival_cp), x, percent_faster(x));
  } else if (r.best_rival_cp >= 0) {
    md += fmt::format("- With context parallelism: the best CP plan is {}; no ZeroPP plan with CP fits.\n",
                      row_label(r, r.best_rival_cp));
  } else if (r.best_zeropp_cp >= 0) {
    md += fmt::format("- With context parallelism: ZeroPP's best plan with CP is {}; no other plan with CP fits.\n",
                      row_label(r, r.best_zeropp_cp));
  }
  for (const std::string& line : r.absent_rows) md += fmt::format("- {}.\n", line);
  md += "\n";
  band_note(md, r);
}

void table_section(std::string& md, const StudyReport& r) {
  md += "### Every strategy at its best plan within memory\n\n";
  md +=
      "| strategy | tp | cp | pp | dp | z | schedule | v | b | B | U | recompute | iter s | TFLOP/s/GPU | MFU (full) | "
      "peak GiB | sent GB | vs 3D |\n";
  md += "|---|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|\n";
  for (int i = 0; i < static_cast<int>(r.rows.size()); ++i) {
    const CompareRow& row = r.rows[i];
    if (!row.found) {
      md += fmt::format("| {} | {} |", row.spec.name, row.note);
      for (int cell = 2; cell < 18; ++cell) md += " |";
      md += "\n";
      continue;
    }
    const ParallelSpec& p = row.plan.parallel;
    const auto& e = row.estimate.estimate;
    std::string vs = "-";
    if (e.feasible && r.three_d >= 0) vs = fmt::format("{:.2f}x", speedup(r, i, r.three_d));
    std::string peak = fmt::format("{:.1f}", e.memory_bytes.peak / kGiB);
    if (!e.feasible) peak += fmt::format(" (over by {:.1f})", e.over_by_bytes / kGiB);
    const bool bold = i == r.winner;
    // A row that does not fit shows its least-memory plan: its time and throughput say nothing (compare.cpp).
    const auto when_fits = [&](std::string text) { return e.feasible ? text : std::string("-"); };
    md += fmt::format(
        "| {}{}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
        bold ? "**" : "", row.spec.name, bold ? "**" : "", p.tp, p.cp, p.pp, p.dp, p.z, to_string(p.schedule), p.v,
        p.micro_batch, p.micro_batches, p.unit, to_string(p.recompute),
        when_fits(fmt::format("{:.3f}{}", e.time_s.iteration, row.estimate.simulated ? "" : " (cf)")),
        when_fits(fmt::format("{:.1f}", e.throughput.tflops_per_gpu)),
        when_fits(fmt::format("{:.1f}% ({:.1f}%)", 100 * e.throughput.mfu, 100 * e.throughput.mfu_full_attention)),
        peak, when_fits(fmt::format("{:.2f}", e.comm_bytes.total / 1e9)), vs);
  }
  md +=
      "\nModel output (`zeropp compare`): iteration time and peak memory from the schedule simulator with analytic "
      "costs on the cluster profile; (cf): the closed form's time, the row was not simulated. ";
  md += analytic::kFlopConventionNote;
  md +=
      " sent GB: bytes sent per GPU per iteration (GB = 1e9); GiB = 2^30 bytes. B is micro-batches per pipeline; "
      "3d, zero3 (tp = 1), the pipeline rows and zeropp_a/b have no context parallelism (cp = 1), fsdp_tp is ZeRO-3 "
      "with tp > 1 (FSDP2 + TP), hsdp ZeRO-3 sharded over part of dp and replicated across the rest (FSDP2's HSDP), "
      "fsdp_pp and fsdp_tp_pp ZeRO-3 under a pipeline without and with TP (torchtitan's 3-D), a _cp row its "
      "strategy with cp > 1; vs 3D is against the 3d row; every plan in the experiment's dtype (fp8: linear layers "
      "in FP8, spec/fp8.hpp); the winner is in bold. A row that does not fit shows the plan that misses memory by "
      "least, with its memory only.\n\n";
}

// The simulated peak of each row by part, and when it occurs (PeakBreakdown): the memory figure's numbers.
void peak_section(std::string& md, const StudyReport& r) {
  md += "### Peak memory by part, and when it occurs\n\n";
  md +=
      "| strategy | peak GiB | params | grads | optimizer | activations | recompute | W buffers | gathered | "
      "grad buffers | rank | when |\n";
  md += "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n";
  for (const CompareRow& row : r.rows) {
    if (!row.found || !row.estimate.peak) continue;
    const PeakBreakdown& p = *row.estimate.peak;
    md += fmt::format(
        "| {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {} | {:.0f}% into "
        "the iteration, {} |\n",
        row.spec.name, p.total / kGiB, p.params / kGiB, p.grads / kGiB, p.optimizer / kGiB, p.activations / kGiB,
        p.recompute / kGiB, p.w_buffers / kGiB, p.gathered_params / kGiB, p.grad_buffers / kGiB, p.rank,
        p.makespan_s > 0 ? 100 * p.time_s / p.makespan_s : 0.0, p.when);
  }
  md +=
      "\nModel output: the schedule simulator's memory at its peak on the pipeline rank where it is highest (the "
      "same run as the table; GiB = 2^30 bytes); the parts add up to the peak. Activations include the "
      "checkpoints of recomputed micro-batches; recompute is the one layer rebuilt at a time.\n\n";
}

void run_cost_section(std::string& md, const StudyReport& r) {
  if (!r.run_cost) return;
  const analytic::RunCostOptions& o = *r.run_cost;
  md += fmt::format("### Training run of {:.4g} tokens\n\n", o.tokens);
  md += o.price_per_gpu_hour ? "| strategy | iterations | days | GPU-hours | cost |\n|---|--:|--:|--:|--:|\n"
                             : "| strategy | iterations | days | GPU-hours |\n|---|--:|--:|--:|\n";
  for (int i = 0; i < static_cast<int>(r.rows.size()); ++i) {
    const auto c = row_run_cost(r, i);
    if (!c) {
      md += fmt::format("| {} | - | - | - |{}\n", r.rows[i].spec.name, o.price_per_gpu_hour ? " - |" : "");
      continue;
    }
    md += fmt::format("| {} | {} | {:.2f} | {} |{}\n", r.rows[i].spec.name, analytic::grouped_number(c->iterations),
                      c->days, analytic::grouped_number(c->gpu_hours),
                      c->cost ? fmt::format(" {} |", analytic::grouped_number(*c->cost)) : "");
  }
  md += fmt::format(
      "\nModel output: whole iterations of {} sequences x {} tokens at each row's simulated iteration time, steady "
      "state (no start-up, checkpoints, evaluation, failures or restarts){}.\n\n",
      r.experiment.global_batch, r.experiment.model.seq_len,
      o.price_per_gpu_hour ? fmt::format("; cost = GPU-hours x {:g} per GPU-hour", *o.price_per_gpu_hour) : "");
}

void criterion_section(std::string& md, const StudyReport& r) {
  md += "## Criterion: does ZeroPP move fewer bytes than tensor parallelism?\n\n";
  if (!r.have_criterion) {
    md += "No ZeroPP layout exists for this experiment, so there is no b and U to test.\n\n";
    return;
  }
  const analytic::Criterion& c = r.criterion;
  const analytic::CriterionTime& t = r.criterion_time;
  const ModelSpec& m = r.experiment.model;
  const bool fits = r.rows[r.criterion_index].estimate.estimate.feasible;
  md += fmt::format(
      "At b = {} and U = {} of the `{}` plan above{} (model output; `zeropp criterion --model {} --micro-batch {} "
      "--unit {} --cluster {}{}`):\n\n",
      r.criterion_b, r.criterion_unit, r.criterion_row, fits ? "" : ", which does not fit in memory", m.name,
      r.criterion_b, r.criterion_unit, r.experiment.cluster.name,
      r.criterion_tp_rule.tp_comm_overlap     ? " --tp-comm-overlap"
      : r.criterion_tp_rule.sequence_parallel ? " --sequence-parallel"
                                              : "");
  const double h2 = static_cast<double>(m.hidden) * m.hidden;
  md += fmt::format(
      "- The model's own layer holds P = {:.0f} parameters = {:.4g} h² (its attention with its key/value heads, its "
      "MLP, biases and norms as it has them; GPT's layer is 12 h² + 13 h), so ZeroPP moves 3P/U and TP 8sbh elements "
      "per layer per micro-batch, and ZeroPP moves "
      "fewer when 2·s·U·b > 3P/(4h) (9h for P = 12h²; docs/criterion.md derives it).\n",
      c.layer_params, c.layer_params / h2);
  md += fmt::format("- 2·s·U·b = 2·{}·{}·{} = {:.0f} vs 3P/(4h) = {:.0f} (the paper's 9·h = {:.0f}): **{}**.\n",
                    m.seq_len, r.criterion_unit, r.criterion_b, c.lhs, c.rhs, c.rhs_gpt,
                    c.holds ? "holds, ZeroPP moves fewer bytes than TP" : "does not hold, TP moves fewer bytes");
  md += fmt::format(
      "- Bytes per layer per micro-batch (16-bit, ring factor omitted): ZeroPP {:.4g} (gradients reduced once per "
      "unit, the paper) or {:.4g} (reduced in every W, the authors' code); TP {:.4g}.\n",
      c.zeropp_bytes_per_layer, c.zeropp_per_w_bytes_per_layer, c.tp_bytes_per_layer);
  md += fmt::format("- Smallest U for which it holds at b = {}: {} (per-W reduction: {}).\n", r.criterion_b, c.min_unit,
                    c.min_unit_per_w ? std::to_string(*c.min_unit_per_w) : "none");
  md += fmt::format(
      "- Time-based on `{}` (TP over {} GPUs with {}, the rule of the 3D plan it is compared with, vs ZeroPP z = {}, "
      "one layer, U micro-batches of work per GPU): compute "
      "{:.3f} ms; TP exposed {:.3f} ms; ZeroPP gathers + reduce-scatter {:.3f} ms, exposed after prefetch {:.3f} ms: "
      "**{}**; smallest U where ZeroPP exposes less: {}.\n\n",
      r.experiment.cluster.name, t.group, tp_rule_text(r.criterion_tp_rule), t.group, 1e3 * t.compute_s,
      1e3 * t.tp_exposed_s, 1e3 * t.zeropp_comm_s, 1e3 * t.zeropp_exposed_s,
      t.holds ? "ZeroPP exposes less" : "TP exposes less", t.min_unit ? std::to_string(*t.min_unit) : "none");
  if (!r.criterion_verdict.empty()) md += r.criterion_verdict + "\n\n";
}

void timeline_section(std::string& md, const StudyReport& r) {
  md += "## Schedule timeline of the best ZeroPP plan\n\n";
  if (!r.timeline.present) {
    md += "No ZeroPP plan fits in memory, so there is no timeline to show.\n\n";
    return;
  }
  const StudyTimeline& t = r.timeline;
  md += fmt::format(
      "`{}` ({}), simulated with the same costs as the table (model output). One row per PP rank; F forward, "
      "B input gradient, W weight gradient, R recompute, O optimizer step, `.` idle or communicating; "
      "odd chunks lower case; the number is the micro-batch.\n\n",
      t.row, layout_text(t.parallel));
  md += "```\n" + t.grid;
  if (!t.grid.empty() && t.grid.back() != '\n') md += "\n";
  md += "```\n\n";
  std::string peaks;
  for (int p : t.peak_activation_microbatches) peaks += (peaks.empty() ? "" : ", ") + std::to_string(p);
  md += fmt::format(
      "Makespan {:.3f} s (the iteration time above); bubble {:.1f}% (idle share of ranks x makespan); "
      "peak in-flight micro-batches per rank: {}.\n\n",
      t.makespan_s, 100 * t.bubble_fraction, peaks);
}

// The trainer and PyTorch measured on a real GPU (results/measured/<gpu>/), and the model's prediction of the
// trainer's step there.
void measured_gpu_section(std::string& md, const StudyReport& r) {
  for (const MeasuredGpu& g : r.measured) {
    md += fmt::format(
        "**Measured on {}** (driver {}, power limit {}; `results/measured/{}/`, written by scripts/device/run.sh on "
        "a lent machine and scripts/device/import.py). GPT-3 1.3B on this one GPU, bf16, 8 micro-batches of one "
        "2048-token sequence per step; MFU is model FLOPs (full s x s attention) over the dense bf16 peak "
        "(scripts/device/summarize.py), the same formula for every row.\n\n",
        g.gpu.empty() ? "a GPU" : g.gpu, g.driver.empty() ? "?" : g.driver,
        g.power_limit.empty() ? "?" : g.power_limit, g.folder);
    if (!g.steps.empty()) {
      md += "| implementation | step s | tokens/s | MFU | peak memory GiB |\n|---|--:|--:|--:|--:|\n";
      for (const MeasuredStep& s : g.steps)
        md += fmt::format("| {} | {:.3f} | {:.0f} | {:.1f}% | {:.1f} |\n", s.who, s.step_s, s.tokens_per_s,
                          100 * s.mfu, s.peak_memory_gib);
      md += "\n";
    }
    if (g.mfu_over_torch_eager)
      md += fmt::format(
          "zeropp-train's MFU over PyTorch eager's: {:.2f} with materialised attention{} (the goal of issue 23: at "
          "least 0.8).\n\n",
          *g.mfu_over_torch_eager,
          g.flash_mfu_over_torch_eager ? fmt::format(", {:.2f} with its flash attention", *g.flash_mfu_over_torch_eager)
                                       : std::string());
    if (!g.trainer.empty()) {
      md += "The model's prediction of the trainer's measured step (`zeropp-train --compare-model`, on this GPU):\n\n";
      md += "| result | plan | measured s | predicted s | error | prediction's costs |\n|---|---|--:|--:|--:|---|\n";
      for (const LoopRun& run : g.trainer)
        md += fmt::format("| {} | {} | {:.3f} | {:.3f} | {:+.1f}% | {} |\n", run.file, run.plan, run.measured_s,
                          run.predicted_s, 100 * run.error, run.costs);
      md += "\n";
    }
  }
}

void validation_section(std::string& md, const StudyReport& r) {
  md += "## How model and measurement agree\n\n";
  for (const std::string& note : r.validation_notes) md += "- " + note + ".\n";
  if (!r.validation_notes.empty()) md += "\n";
  for (const CachedValidation& cached : r.validations) {
    const search::ValidationReport& v = cached.report;
    md += fmt::format(
        "**Published runs: {}** (`zeropp validate --set {}`). Measured: {} ({} runs, the authors' published "
        "numbers, not measured here). Model output: the same runs predicted on the cluster profile `{}`, nothing "
        "fitted per row.\n\n",
        cached.name, cached.name, v.source, v.rows.size(), v.cluster);
    md += "| model | GPUs | tp | pp | dp | published TFLOP/s | predicted | error | leave-one-out error |\n";
    md += "|---|--:|--:|--:|--:|--:|--:|--:|--:|\n";
    for (const auto& row : v.rows) {
      const ParallelSpec& p = row.plan.parallel;
      md +=
          fmt::format("| {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {:+.1f}% | {:+.1f}% |\n", row.name, p.world(), p.tp,
                      p.pp, p.dp, row.published_tflops, row.predicted_tflops, 100 * row.error, 100 * row.loo_error);
    }
    md += fmt::format(
        "\nAs given ({} {:.4f}): mean |error| {:.1f}%, max {:.1f}%. Leave-one-out (the one fitted scalar, {}, "
        "refitted without the row it predicts): mean |error| {:.1f}%, max {:.1f}%.\n\n",
        v.fitted, v.profile_efficiency, 100 * v.mean_abs_error, 100 * v.max_abs_error, v.fitted,
        100 * v.loo_mean_abs_error, 100 * v.loo_max_abs_error);
  }
  md += "**FLOP convention.** " + r.flop_convention + "\n\n";
  md += "**Trainer runs** (`zeropp-train --compare-model`, written by scripts/loop.sh). ";
  if (r.loop.empty()) {
    md += "None found in `results/loop/`; scripts/loop.sh writes them.\n\n";
    return;
  }
  md +=
      "Measured: the trainer's mean iteration time on the machine named in results/loop/README.md (backend and MPI "
      "ranks below). Model output: the simulator's time for the same program, with the action costs named in the "
      "last column (`analytic`: the calibrated cluster profile, a prediction; `measured`: the trainer's own mean "
      "action costs, which tests the schedule's composition only).\n\n";
  md += "| result | plan | measured on | measured s | predicted s | error | prediction's costs |\n";
  md += "|---|---|---|--:|--:|--:|---|\n";
  bool any_gpu = false;
  for (const LoopRun& run : r.loop) {
    any_gpu = any_gpu || run.backend == "cuda";
    md += fmt::format("| {} | {} | {}, {} ranks | {:.3f} | {:.3f} | {:+.1f}% | {} |\n", run.file, run.plan, run.backend,
                      run.world, run.measured_s, run.predicted_s, 100 * run.error, run.costs);
  }
  any_gpu = any_gpu || !r.measured.empty();
  md += any_gpu ? "\n" : "\nNone of these runs is on a GPU: the GPU-scale numbers above are model output only.\n\n";
  measured_gpu_section(md, r);
}

void figures_section(std::string& md, const StudyReport& r) {
  md += "## Figures\n\n";
  if (!r.figures_note.empty()) md += r.figures_note + "\n\n";
  if (r.figures.empty()) return;
  for (const StudyFigure& f : r.figures)
    md += fmt::format("- `{}`: {}.\n\n  ![{}]({})\n\n", f.name, f.caption, f.name, f.link);
}

}  // namespace

std::string to_markdown(const StudyReport& r) {
  std::string md = fmt::format("# Study report: {}\n\n", r.experiment.name);
  if (!r.nominal_warning.empty()) md += fmt::format("> **WARNING — nominal profile.** The {}.\n\n", r.nominal_warning);
  md += fmt::format(
      "Written by `{}`. Iteration times, memory and throughput are the model's output "
      "(analytic costs, schedule simulator) unless a line says measured; the measured numbers are in the last "
      "section, with where they were measured.\n\n",
      r.command.empty() ? "zeropp report --experiment " + r.experiment.name : r.command);
  experiment_section(md, r);
  verdict_section(md, r);
  table_section(md, r);
  peak_section(md, r);
  run_cost_section(md, r);
  criterion_section(md, r);
  timeline_section(md, r);
  validation_section(md, r);
  figures_section(md, r);
  return md;
}

}  // namespace zeropp::search
