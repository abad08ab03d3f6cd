"""(c) The criterion map: ZeroPP/TP per-layer communication ratio over hidden size h and tokens per unit s*U*b.

ZeroPP gathers a layer's 12h^2 parameters twice and reduce-scatters their gradients once per unit of U micro-batches
(36h^2/U elements per micro-batch); Megatron TP moves 8sbh. Ratio = 36h^2/U / (8sbh) = 9h / (2sUb): ZeroPP moves
less above the line 2sUb = 9h (shared/DESIGN.md section 4). Zoo models are marked at U*b = 1 (hollow) and, when
`zeropp criterion --cluster` outputs are given, at the time-based smallest U (filled): the U at which ZeroPP's
exposed communication no longer exceeds TP's on that cluster.

Inputs: `zeropp models --format json`; optionally `zeropp criterion --model M --cluster C --format json` files.
"""
import matplotlib.colors as mcolors
import numpy as np

from common import apply_style, load_json, parser, plt, save

FAMILIES = [("gpt3", "GPT-3", "o", "#1f77b4"), ("llama2", "Llama 2", "s", "#2ca02c"),
            ("megatron", "Megatron", "^", "#9467bd")]


def family(name):
    for prefix, label, marker, color in FAMILIES:
        if name.startswith(prefix):
            return label, marker, color
    return "other", "D", "gray"


def main():
    p = parser(__doc__)
    p.add_argument("--models", required=True, help="zeropp models --format json output")
    p.add_argument("--criterion", nargs="*", default=[], help="zeropp criterion --cluster ... --format json outputs")
    p.add_argument("--name", default="criterion_map")
    a = p.parse_args()
    apply_style()
    models = load_json(a.models)["models"]
    crits = [load_json(f) for f in a.criterion]

    h = np.logspace(np.log10(1024), np.log10(32768), 200)
    tokens = np.logspace(np.log10(512), np.log10(2**20), 200)  # s*U*b
    H, T = np.meshgrid(h, tokens)
    ratio = 9 * H / (2 * T)

    fig, ax = plt.subplots(figsize=(3.2, 3.0))
    ax.grid(False)
    norm = mcolors.LogNorm(vmin=1 / 64, vmax=64)
    mesh = ax.pcolormesh(H, T, ratio, norm=norm, cmap="RdBu_r", shading="auto", rasterized=True)
    cbar = fig.colorbar(mesh, ax=ax, pad=0.02)
    cbar.set_label("ZeroPP / TP bytes per layer, 9h/(2sUb)")
    ax.plot(h, 4.5 * h, "k-", lw=1.5, label="2sUb = 9h")
    ax.text(1300, 4.5 * 1300 * 8, "ZeroPP moves less", ha="left", va="bottom", fontsize=8)
    ax.text(30000, 4.5 * 30000 / 3, "ZeroPP\nmoves more", ha="right", va="top", fontsize=8)

    seen = set()
    for m in models:
        label, marker, color = family(m["name"])
        ax.scatter(m["hidden"], m["seq_len"], marker=marker, facecolors="none", edgecolors=color, s=22, zorder=3,
                   label=f"{label} (U·b=1)" if label not in seen else None)
        seen.add(label)
    cluster = None
    for c in crits:
        t = c.get("time")
        if not t or t.get("min_unit") is None:
            continue
        cluster = t["cluster"]
        label, marker, color = family(c["model"])
        ax.scatter(c["h"], c["s"] * t["min_unit"] * c["b"], marker=marker, color=color, s=22, zorder=4)
    if cluster:
        ax.scatter([], [], marker="o", color="gray", s=22, label=f"min U by time, {cluster}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlim(h[0], h[-1])
    ax.set_ylim(tokens[0], tokens[-1])
    ax.set_xlabel("hidden size h (elements)")
    ax.set_ylabel("tokens per scheduling unit s·U·b")
    ax.grid(False)
    fig.legend(loc="lower center", bbox_to_anchor=(0.5, 0.98), ncol=2, frameon=False, columnspacing=0.6,
               handletextpad=0.3)
    save(fig, a.out, a.name)


if __name__ == "__main__":
    main()
