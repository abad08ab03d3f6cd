"""(a) Throughput per GPU of every strategy's best plan across model sizes and GPU counts.

Input: several `zeropp compare --model M --cluster C --gpus N --global-batch G --format json` outputs (make_all.sh
runs the grid). One panel per model, model TFLOP/s per GPU (MFU x the cluster's dense peak: the model's FLOPs
only, so recomputation does not count as throughput) against the GPU count; a strategy with no plan that fits in
memory at some count has no point there. With executed FLOPs instead, a plan whose exposed communication hides
a full recompute shows a jump in "TFLOP/s" at an unchanged iteration time.
"""
import collections

from common import STRATEGY_COLORS, STRATEGY_LABELS, apply_style, load_json, parser, plt, save

MARKERS = {"3d": "o", "zeropp_a": "s", "zeropp_b": "D", "1f1b_zero1": "^", "bfs_zero1": "v", "zb_h1_zero1": "<",
           "zb_h2_zero1": ">", "zero3": "x", "zero3_pp": "+"}


def main():
    p = parser(__doc__)
    p.add_argument("--compare", nargs="+", required=True, help="zeropp compare --format json outputs")
    p.add_argument("--name", default="throughput_scaling")
    p.add_argument("--cluster", required=True, help="zeropp clusters NAME --format json (for the dense peak)")
    p.add_argument("--note", default="", help="extra caption text, e.g. how the global batch was chosen")
    a = p.parse_args()
    apply_style()
    peaks = load_json(a.cluster)["clusters"][0]["peak_tflops"]
    # series[model][row] = [(gpus, model TFLOP/s per GPU)]
    series = collections.defaultdict(lambda: collections.defaultdict(list))
    cluster = set()
    batch_note = {}
    for f in a.compare:
        d = load_json(f)
        e = d["experiment"]
        cluster.add(e["cluster"])
        batch_note[(e["model"], e["gpus"])] = e["global_batch"]
        for r in d["strategies"]:
            est = r.get("estimate") or {}
            if r.get("found") and est.get("feasible"):
                series[e["model"]][r["row"]].append((e["gpus"], est["throughput"]["mfu"] * peaks[e["dtype"]]))
    models = sorted(series, key=lambda m: float(m.split("-")[-1].rstrip("bB")) if m.split("-")[-1][:-1]
                    .replace(".", "").isdigit() else 0)
    cols = 2
    nrows = (len(models) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(3.5, 1.55 * nrows + 0.9), sharex=True, sharey=True,
                             squeeze=False)
    rows_seen = []
    for ax, m in zip(axes.flat, models):
        for row in STRATEGY_LABELS:
            pts = sorted(series[m].get(row, []))
            if not pts:
                continue
            if row not in rows_seen:
                rows_seen.append(row)
            ax.plot([g for g, _ in pts], [t for _, t in pts], marker=MARKERS.get(row, "o"), ms=3, lw=1,
                    color=STRATEGY_COLORS[row], label=STRATEGY_LABELS[row])
        ax.set_title(m, pad=2)
        ax.set_xscale("log", base=2)
        gpus = sorted({n for _, n in batch_note})
        ax.set_xticks(gpus, [str(n) for n in gpus], rotation=90)
        ax.minorticks_off()
    for ax in axes.flat[len(models):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("GPUs")
    for ax in axes[:, 0]:
        ax.set_ylabel("model TFLOP/s per GPU")
    handles, labels = [], []
    for ax in axes.flat:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    order = sorted(range(len(labels)), key=lambda i: list(STRATEGY_LABELS.values()).index(labels[i]))
    fig.legend([handles[i] for i in order], [labels[i] for i in order], loc="lower center",
               bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False, columnspacing=0.8, handlelength=1.5)
    fig.tight_layout(h_pad=0.4, w_pad=0.4)
    # One line per fact, so the caption never makes the figure wider than the column.
    note = (f"{', '.join(sorted(cluster))}, best plan per strategy within memory\nno point: no plan of that "
            f"strategy fits" + (f"\n{a.note}" if a.note else ""))
    fig.text(0.5, -0.01, note, ha="center", va="top", fontsize=8)
    save(fig, a.out, a.name)


if __name__ == "__main__":
    main()
