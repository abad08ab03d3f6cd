"""(e) Predicted vs measured, two figures.

validation: `zeropp validate --format json` rows, published (Narayanan et al. 2021 Table 1) vs predicted TFLOP/s per
GPU, with the y = x line and a +-10% band.
loop_prediction: `zeropp-train` results (results/loop/*.json with model_comparison), measured iteration time vs the
simulator's prediction, from the calibrated profile ("analytic" costs) and from the measured per-action costs.
"""
import os

import numpy as np

from common import apply_style, load_json, parser, plt, save


def validation(path, out):
    d = load_json(path)
    rows = d["rows"]
    pub = np.array([r["published_tflops_per_gpu"] for r in rows])
    pred = np.array([r["predicted_tflops_per_gpu"] for r in rows])
    fig, ax = plt.subplots(figsize=(3.2, 3.0))
    lo, hi = 0.9 * min(pub.min(), pred.min()), 1.04 * max(pub.max(), pred.max())
    x = np.linspace(lo, hi, 2)
    ax.fill_between(x, 0.9 * x, 1.1 * x, color="gray", alpha=0.2, label="±10%")
    ax.plot(x, x, "k-", lw=1, label="y = x")
    ax.scatter(pub, pred, s=14, color="#d62728", zorder=3,
               label=f"Table 1, mean |err| {100 * d['mean_abs_error']:.1f}%")
    # Points crowd between 135 and 145 TFLOP/s: put names alternately left and right, in order of prediction.
    for i, k in enumerate(np.argsort(pred)):
        right = i % 2 == 0
        ax.annotate(rows[k]["name"], (pub[k], pred[k]), textcoords="offset points", xytext=(4 if right else -4, 0),
                    ha="left" if right else "right", va="center", fontsize=8)
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("published TFLOP/s per GPU")
    ax.set_ylabel("predicted TFLOP/s per GPU")
    ax.set_title(f"Narayanan 2021 Table 1 on {d['cluster']}")
    ax.legend(loc="lower right", framealpha=0.95)
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
        if key != "measured":
            for bar, p, v in zip(bars, plans, vals):
                if np.isfinite(v):
                    err = 100 * runs[p][key + " error"]  # against that run's own measured time
                    ax.text(bar.get_x() + width / 2, 0.97 * v, f"{err:+.1f}%", ha="center", va="top", fontsize=8,
                            color="white")
    ax.set_xticks(x, [p.upper() if p == "1f1b" else "ZeroPP" if p == "zeropp" else p for p in plans])
    ax.set_ylabel("iteration time (s)")
    top = max(v for r in runs.values() for v in r.values())
    ax.set_ylim(0, top * 1.4)
    ax.legend(loc="upper left", frameon=False)
    ax.set_title("zeropp-train, 2 MPI ranks (CPU); % = error")
    ax.grid(axis="x", visible=False)
    save(fig, out, "loop_prediction")


def main():
    p = parser(__doc__)
    p.add_argument("--validate", help="zeropp validate --format json output")
    p.add_argument("--runs", nargs="*", default=[], help="zeropp-train result JSON files")
    a = p.parse_args()
    apply_style()
    if a.validate:
        validation(a.validate, a.out)
    if a.runs:
        loop(a.runs, a.out)


if __name__ == "__main__":
    main()
