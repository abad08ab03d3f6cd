"""(f) GEMM microbenchmark: achieved FLOP/s vs GEMM size per layer GEMM, with the calibrated efficiency curve.

Points: `zeropp-bench` Google Benchmark JSON (results/loop/bench.json), gemm/* rows: median FLOP/s over the
repetitions of each shape, bars min-max, one colour per layer GEMM (qkv, attention output, MLP up/down, attention
score/context), marker by pass (F, B input grad, W weight grad). Line: the profile's gemm_table (efficiency vs
2mnk, piecewise linear in log FLOPs, clamped outside; cost_model/spec/cluster_spec.hpp) times its peak_tflops.
`zeropp calibrate` stores the bare GEMM fit times the layer factor it fits on the trainer's layer passes (the
profile's "GEMM table x F in the layer" comment); when that comment is there, the bare fit (table / F), the curve
to compare with these points, is drawn too.
"""
import collections
import re

import numpy as np

from common import apply_style, load_json, parser, plt, save

FAMILIES = [("qkv", "QKV proj.", "#1f77b4"), ("attn_out", "attn. out proj.", "#ff7f0e"),
            ("mlp_up", "MLP up", "#2ca02c"), ("mlp_down", "MLP down", "#d62728"),
            ("attn_score", "attn. scores", "#9467bd"), ("attn_context", "attn. context", "#8c564b")]
PASS_MARKERS = {"F": "o", "B": "s", "W": "^"}


def table_flops(points, peak, x):
    """The profile's curve: efficiency interpolated linearly in log(FLOPs), clamped to the end points."""
    f = np.log([p["flops"] for p in points])
    e = [p["efficiency"] for p in points]
    return np.interp(np.log(x), f, e) * peak


def main():
    p = parser(__doc__)
    p.add_argument("--bench", required=True, help="zeropp-bench Google Benchmark JSON")
    p.add_argument("--profile", required=True, help="calibrated cluster JSON with gemm_table")
    p.add_argument("--dtype", default="fp32")
    p.add_argument("--name", default="gemm_flops")
    a = p.parse_args()
    apply_style()
    bench = load_json(a.bench)
    profile = load_json(a.profile)
    reps = collections.defaultdict(list)
    flop = {}
    for b in bench["benchmarks"]:
        parts = b["name"].split("/")
        if b.get("run_type") != "iteration" or parts[0] != "gemm" or parts[2] != a.dtype:
            continue
        shape = "/".join(parts[3:parts.index(next(x for x in parts if x.startswith("iterations")))])
        reps[shape].append(b["FLOP/s"])
        flop[shape] = b["flop"]
    fig, ax = plt.subplots(figsize=(3.4, 2.8))
    for key, label, color in FAMILIES:
        for ps, marker in PASS_MARKERS.items():
            shapes = [s for s in reps if s.split("/")[0] in (key, f"{key}_{ps}")]
            shapes = [s for s in shapes if s.split("/")[0] == f"{key}_{ps}" or (s.split("/")[0] == key and ps == "F")]
            if not shapes:
                continue
            x = np.array([flop[s] for s in shapes])
            v = [np.array(reps[s]) / 1e9 for s in shapes]
            med = np.array([np.median(r) for r in v])
            err = [med - [r.min() for r in v], [r.max() for r in v] - med]
            ax.errorbar(x, med, yerr=err, fmt=marker, ms=3, color=color, mfc="none" if ps != "F" else color,
                        elinewidth=0.7, label=label if ps == "F" else None)
    points = profile["gemm_table"][a.dtype]
    peak = profile["peak_tflops"][a.dtype] * 1e3  # GFLOP/s
    xs = np.logspace(np.log10(min(flop.values())), np.log10(max(flop.values())), 200)
    ax.plot(xs, table_flops(points, peak, xs), "k-", lw=1.2, label="profile gemm_table (in a layer)")
    with open(a.profile) as f:
        layer = re.search(r"GEMM table x ([0-9.]+) in the layer", f.read())
    if layer:
        scale = float(layer.group(1))
        ax.plot(xs, table_flops(points, peak, xs) / scale, "k--", lw=1.2, label=f"bare GEMM fit (table / {scale:g})")
    ax.axhline(peak, color="gray", ls=":", lw=1)
    ax.annotate(f"peak {peak:g} GFLOP/s", (xs[0], peak), textcoords="offset points", xytext=(2, 1.5),
                va="bottom", ha="left", color="gray")
    for ps, marker in PASS_MARKERS.items():
        ax.plot([], [], marker, color="black", ms=3, mfc="black" if ps == "F" else "none", label=f"pass {ps}")
    ax.set_xscale("log")
    ax.set_ylim(0, peak * 1.15)
    ax.set_xlabel("GEMM size 2mnk (FLOP)")
    ax.set_ylabel(f"achieved GFLOP/s ({a.dtype})")
    ax.set_title(f"{profile.get('name', '')}: Eigen GEMMs, one core", pad=2)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.08), ncol=2, frameon=False, columnspacing=0.8)
    save(fig, a.out, a.name)


if __name__ == "__main__":
    main()
