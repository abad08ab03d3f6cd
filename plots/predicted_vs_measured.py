"""(e) Predicted vs measured, two figures.

validation: `zeropp validate --format json` rows of every validation set given (Narayanan et al. 2021 Table 1 on
A100, Megatron-Core's H100 weak-scaling table), one panel each: published vs predicted TFLOP/s per GPU, with the
y = x line and a +-10% band; the legend gives the in-sample and leave-one-out errors.
loop_prediction: `zeropp-train` results (results/loop/*.json with model_comparison), measured iteration time vs the
simulator's prediction, from the calibrated profile ("analytic" costs) and from the measured per-action costs.
"""
import os

import numpy as np
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from common import apply_style, load_json, parser, plt, save

MARKER_AREA = 14  # points^2, scatter's s


def place_labels(fig, ax, xs, ys, names):
    """Names beside points that crowd (135-145 TFLOP/s): each takes the first of a few offsets, right or left of its
    point, whose box overlaps no label placed so far and no other point."""
    renderer = fig.canvas.get_renderer()
    pts = ax.transData.transform(np.column_stack([xs, ys]))
    half = (np.sqrt(MARKER_AREA) / 2 + 1) * fig.dpi / 72  # marker radius plus a point, in pixels
    marks = [Bbox.from_extents(px - half, py - half, px + half, py + half) for px, py in pts]
    taken = []
    offsets = [(4, 0), (-4, 0), (5, 9), (-5, 9), (5, -9), (-5, -9), (5, 15), (-5, 15), (5, -15), (-5, -15)]

    def clear(box, own):
        return not any(box.overlaps(t) for t in taken) and not any(
            box.overlaps(m) for i, m in enumerate(marks) if i != own)

    for i in np.argsort(ys):
        for dx, dy in offsets:
            # A label off its point's row gets a leader line, so it cannot be read as a neighbour's.
            leader = dict(arrowstyle="-", lw=0.5, color="0.3", shrinkA=0, shrinkB=2) if dy else None
            t = ax.annotate(names[i], (xs[i], ys[i]), textcoords="offset points", xytext=(dx, dy),
                            ha="left" if dx > 0 else "right", va="center", fontsize=8, arrowprops=leader)
            t.update_positions(renderer)
            box = Text.get_window_extent(t, renderer).expanded(1.02, 1.0)  # the text alone, not its leader
            if clear(box, i) or (dx, dy) == offsets[-1]:
                taken.append(box)
                break
            t.remove()


TITLES = {"narayanan2021": "Narayanan 2021 Table 1", "megatron_core_h100": "Megatron-Core H100 table"}


def validation_panel(fig, ax, d):
    rows = d["rows"]
    pub = np.array([r["published_tflops_per_gpu"] for r in rows])
    pred = np.array([r["predicted_tflops_per_gpu"] for r in rows])
    lo, hi = 0.85 * min(pub.min(), pred.min()), 1.08 * max(pub.max(), pred.max())
    x = np.linspace(lo, hi, 2)
    ax.fill_between(x, 0.9 * x, 1.1 * x, color="gray", alpha=0.2, label="±10%")
    ax.plot(x, x, "k-", lw=1, label="y = x")
    loo = d.get("loo", {})
    ax.scatter(pub, pred, s=MARKER_AREA, color="#d62728", zorder=3,
               label=f"mean |err| {100 * d['mean_abs_error']:.1f}%"
                     + (f", LOO {100 * loo['mean_abs_error']:.1f}% / max {100 * loo['max_abs_error']:.1f}%"
                        if loo else ""))
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    place_labels(fig, ax, pub, pred, [r["name"] for r in rows])
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("published TFLOP/s per GPU")
    ax.set_ylabel("predicted TFLOP/s per GPU")
    ax.set_title(f"{TITLES.get(d['set'], d['set'])} on {d['cluster']}", fontsize=8)
    ax.legend(loc="upper left", framealpha=0.95, fontsize=6)  # above y = 1.1x: empty unless a row misses by >10%


def validation(paths, out):
    sets = [load_json(p) for p in paths]
    fig, axes = plt.subplots(1, len(sets), figsize=(3.6 * len(sets), 3.1), squeeze=False)
    fig.subplots_adjust(wspace=0.45)
    for ax, d in zip(axes[0], sets):
        validation_panel(fig, ax, d)
    save(fig, out, "validation")


def loop(paths, out):
    runs = {}
    for p in paths:
        d = load_json(p)
        if not isinstance(d, dict) or "model_comparison" not in d:
            continue
        stem = os.path.basename(p)[: -len(".json")]
        plan = stem.replace("-measured-costs", "")
        mc = d["model_comparison"]
        r = runs.setdefault(plan, {})
        key = "measured costs" if mc["costs"] == "measured" else "profile"
        if key == "profile":  # the measured-costs file is a second run of the same plan; show the first's time
            r["measured"] = mc["measured_iteration_s"]
        else:  # ... and mark the second run's own measured time on its bar
            r["second run"] = mc["measured_iteration_s"]
        r[key] = mc["predicted_iteration_s"]
        r[key + " error"] = mc["iteration_relative_error"]
    plans = sorted(runs)
    series = [("measured", "measured", "#555555"), ("profile", "predicted, calibrated profile", "#1f77b4"),
              ("measured costs", "predicted, measured action costs", "#ff7f0e")]
    fig, ax = plt.subplots(figsize=(3.3, 2.6))
    width = 0.27
    x = np.arange(len(plans))
    for i, (key, label, color) in enumerate(series):
        vals = np.array([runs[p].get(key, np.nan) for p in plans])
        bars = ax.bar(x + (i - 1) * width, vals, width, color=color, label=label)
        if key == "measured costs":
            own = [runs[p].get("second run", np.nan) for p in plans]
            left = np.array([b.get_x() for b in bars])
            ax.hlines(own, left, left + width, colors="black", lw=1.2, label="measured, in that second run")
        if key != "measured":
            for bar, p, v in zip(bars, plans, vals):
                if np.isfinite(v):
                    err = 100 * runs[p][key + " error"]  # against that run's own measured time
                    # Upright inside the bar's top: side by side, horizontal labels would touch at 8 pt.
                    ax.annotate(f"{err:+.1f}%", (bar.get_x() + width / 2, v), textcoords="offset points",
                                xytext=(0, -3), ha="center", va="top", rotation=90, fontsize=8, color="white")
    ax.set_xticks(x, [p.upper() if p == "1f1b" else "ZeroPP" if p == "zeropp" else p for p in plans])
    ax.set_ylabel("iteration time (s)")
    top = max(v for r in runs.values() for k, v in r.items() if not k.endswith("error"))
    ax.set_ylim(0, top * 1.08)
    # Above the axes, clear of the bars.
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), frameon=False, borderaxespad=0.2,
              title="zeropp-train, 2 MPI ranks (CPU); % = error vs that run", title_fontsize=8, alignment="left")
    ax.grid(axis="x", visible=False)
    save(fig, out, "loop_prediction")


def main():
    p = parser(__doc__)
    p.add_argument("--validate", nargs="*", default=[], help="zeropp validate --format json outputs, one per set")
    p.add_argument("--runs", nargs="*", default=[], help="zeropp-train result JSON files")
    a = p.parse_args()
    apply_style()
    if a.validate:
        validation(a.validate, a.out)
    if a.runs:
        loop(a.runs, a.out)


if __name__ == "__main__":
    main()
