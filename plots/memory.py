"""(b) Stacked per-GPU memory breakdown of every strategy's best plan against the GPU's memory.

Input: `zeropp compare --format json` (rows' estimate.memory_bytes.{params,grads,optimizer,activations,buffers,peak})
and `zeropp clusters NAME --format json` (memory_gib, or memory_mib).
"""
import numpy as np

from common import GIB, STRATEGY_LABELS, apply_style, load_json, parser, plt, save

PARTS = [("params", "parameters"), ("grads", "gradients"), ("optimizer", "optimizer states"),
         ("activations", "activations"), ("buffers", "buffers (gathered params)")]
PART_COLORS = ["#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974"]


def main():
    p = parser(__doc__)
    p.add_argument("--compare", required=True, help="zeropp compare --format json output")
    p.add_argument("--cluster", required=True, help="zeropp clusters NAME --format json output")
    p.add_argument("--name", default="memory_breakdown")
    a = p.parse_args()
    apply_style()
    cmp_ = load_json(a.compare)
    cluster = load_json(a.cluster)["clusters"][0]
    rows = [r for r in cmp_["strategies"] if r.get("found")]
    labels = [STRATEGY_LABELS.get(r["row"], r["row"]) for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(3.5, 3.3))
    bottom = np.zeros(len(rows))
    for (key, text), color in zip(PARTS, PART_COLORS):
        vals = np.array([r["estimate"]["memory_bytes"].get(key, 0.0) / GIB for r in rows])
        ax.bar(x, vals, bottom=bottom, color=color, label=text, width=0.7)
        bottom += vals
    # The simulator's peak is the authority (parts peak at different times), so mark it separately.
    peaks = np.array([r["estimate"]["memory_bytes"]["peak"] / GIB for r in rows])
    ax.scatter(x, peaks, marker="_", s=120, color="black", zorder=3, label="simulated peak")
    # A profile states its memory in GiB or, where the GiB figure looks like a GB one (80), in MiB as nvidia-smi
    # prints it.
    limit = cluster["memory_gib"] if "memory_gib" in cluster else cluster["memory_mib"] / 1024
    ax.axhline(limit, color="red", ls="--", lw=1)
    # Label at the left end: peaks near the limit (a plan that just fits) sit at the right in `compare` order.
    ax.text(-0.5, limit, f" GPU memory {limit:g} GiB", color="red", ha="left", va="bottom")
    ax.set_xticks(x, labels, rotation=45, ha="right")
    ax.set_ylabel("memory per GPU (GiB)")
    e = cmp_["experiment"]
    ax.set_ylim(0, max(limit, bottom.max(), peaks.max()) * 1.12)
    # Legend above the axes so no bar or the limit line hides behind it.
    ax.legend(ncol=2, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False,
              title=f"{e['model']}, {e['gpus']} GPUs, {e['cluster']}, global batch {e['global_batch']}")
    ax.grid(axis="x", visible=False)
    save(fig, a.out, a.name)


if __name__ == "__main__":
    main()
