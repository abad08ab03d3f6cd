"""(b) Per-GPU memory of every strategy's chosen plan at its simulated peak, by part, against the GPU's memory.

Bars and peaks come from one executor, the schedule simulator: each bar is the row's `peak_breakdown` (what the
simulator held at the peak on the pipeline rank where it is highest: parameters, gradients and optimizer states,
activations, the layer being recomputed, deferred-W buffers, gathered ZeRO-3 parameters, unsharded gradients),
so its top is the peak `zeropp compare` prints. Above each bar: the rank and when the peak occurs (the share of
the iteration that has passed, and the action that reached it).

Input: `zeropp compare --format json` (rows' estimate.peak_breakdown) and `zeropp clusters NAME --format json`
(memory_gib, or memory_mib); or, from `zeropp report`, its figure folder's memory.json (study_figures.py).
"""
import numpy as np

from common import GIB, STRATEGY_LABELS, apply_style, load_json, parser, plt, save

PARTS = [("params", "parameters", "#4c72b0"), ("grads", "gradients", "#55a868"),
         ("optimizer", "optimizer states", "#c44e52"), ("activations", "activations", "#8172b2"),
         ("recompute", "recomputed layer", "#64b5cd"), ("w_buffers", "deferred-W buffers", "#8c8c8c"),
         ("gathered_params", "gathered params (ZeRO-3)", "#ccb974"), ("grad_buffers", "unsharded grads", "#da8bc3")]


def draw_memory(rows, limit_gib, title, out, name="memory_breakdown"):
    """rows: [{"row", "peak_breakdown": {"rank", "fraction_of_iteration", "action", "bytes": {...}}}]."""
    rows = [r for r in rows if r.get("peak_breakdown")]
    labels = [STRATEGY_LABELS.get(r["row"], r["row"]) for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(3.5, 3.5))
    bottom = np.zeros(len(rows))
    used = []
    for key, text, color in PARTS:
        vals = np.array([r["peak_breakdown"]["bytes"].get(key, 0.0) / GIB for r in rows])
        if not vals.any():
            continue
        ax.bar(x, vals, bottom=bottom, color=color, label=text, width=0.7)
        bottom += vals
        used.append(key)
    peaks = np.array([r["peak_breakdown"]["bytes"]["total"] / GIB for r in rows])
    if len(rows) and not np.allclose(bottom, peaks, rtol=1e-9, atol=1e-9):
        raise SystemExit("memory.py: the parts of a peak_breakdown do not add up to its total")
    ax.scatter(x, peaks, marker="_", s=120, color="black", zorder=3, label="simulated peak")
    for xi, r, top in zip(x, rows, peaks):
        p = r["peak_breakdown"]
        ax.annotate(f"r{p['rank']} {100 * p['fraction_of_iteration']:.0f}% {p['action']}", (xi, top),
                    textcoords="offset points", xytext=(0, 2), ha="center", va="bottom", rotation=90, fontsize=6)
    ax.axhline(limit_gib, color="red", ls="--", lw=1)
    ax.text(-0.5, limit_gib, f" GPU memory {limit_gib:.4g} GiB", color="red", ha="left", va="bottom")
    ax.set_xticks(x, labels, rotation=45, ha="right")
    ax.set_ylabel("memory per GPU at the simulated peak (GiB)")
    ax.set_ylim(0, max([limit_gib] + list(peaks)) * 1.5)  # room for the labels above the bars
    ax.legend(ncol=2, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False, title=title, fontsize=7)
    ax.grid(axis="x", visible=False)
    fig.text(0.0, -0.12, "above each bar: pipeline rank, share of the iteration passed, action at the peak",
             ha="left", va="top", fontsize=6)
    save(fig, out, name)


def main():
    p = parser(__doc__)
    p.add_argument("--compare", required=True, help="zeropp compare --format json output")
    p.add_argument("--cluster", required=True, help="zeropp clusters NAME --format json output")
    p.add_argument("--name", default="memory_breakdown")
    a = p.parse_args()
    apply_style()
    cmp_ = load_json(a.compare)
    cluster = load_json(a.cluster)["clusters"][0]
    rows = [{"row": r["row"], "peak_breakdown": r["estimate"].get("peak_breakdown")}
            for r in cmp_["strategies"] if r.get("found")]
    # A profile states its memory in GiB or, where the GiB figure looks like a GB one (80), in MiB as nvidia-smi
    # prints it.
    limit = cluster["memory_gib"] if "memory_gib" in cluster else cluster["memory_mib"] / 1024
    e = cmp_["experiment"]
    draw_memory(rows, limit, f"{e['model']}, {e['gpus']} GPUs, {e['cluster']}, global batch {e['global_batch']}",
                a.out, a.name)


if __name__ == "__main__":
    main()
