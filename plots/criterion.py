"""(c) The criterion map: ZeroPP/TP per-layer communication ratio over hidden size h and tokens per unit s*U*b.

ZeroPP gathers a layer's 12h^2 parameters twice and reduce-scatters their gradients once per unit of U micro-batches
(36h^2/U elements per micro-batch); Megatron TP moves 8sbh. Ratio = 36h^2/U / (8sbh) = 9h / (2sUb): ZeroPP moves
less above the line 2sUb = 9h (shared/DESIGN.md section 4).

The time-based boundary on a cluster (--boundary): `zeropp criterion --cluster C` on one model per hidden size h
(same s and b in every file) reports `time.parity_unit`, the real U at which ZeroPP's exposed communication (what
the compute of U micro-batches does not hide) equals TP's; the curve is s * parity_unit * b over h, and ZeroPP
exposes less above it. Zoo models are marked at U*b = 1 (rings) and, with `zeropp criterion --cluster` outputs
(--criterion), at the time-based smallest integer U (dots): the U at which ZeroPP exposes less on that cluster.

Inputs: `zeropp models --format json`; `zeropp criterion --model M --cluster C --format json` files for the zoo
models (--criterion) and for the boundary grid (--boundary).
"""
import math

import matplotlib.colors as mcolors
import matplotlib.patheffects as patheffects
import numpy as np

from common import apply_style, load_json, parser, plt, save

FAMILIES = [("gpt3", "GPT-3", "o", "#1f77b4"), ("llama2", "Llama 2", "s", "#2ca02c"),
            ("megatron", "Megatron", "^", "#9467bd")]


def family(name):
    for prefix, label, marker, color in FAMILIES:
        if name.startswith(prefix):
            return label, marker, color
    return "other", "D", "gray"


def boundary_curve(paths):
    """Per cluster: sorted (h, s*U*b at equal exposure) and the (s, b) they hold fixed, from criterion outputs."""
    curves = {}
    for path in paths:
        c = load_json(path)
        t = c.get("time")
        if not t or "parity_unit" not in t:
            raise SystemExit(f"criterion.py: {path}: no time.parity_unit; run zeropp criterion with --cluster")
        # The integer boundary the model searches for must sit just above the real one: min_unit = floor(U*) + 1.
        if t["min_unit"] is not None and t["min_unit"] != math.floor(t["parity_unit"]) + 1:
            raise SystemExit(f"criterion.py: {path}: min_unit {t['min_unit']} disagrees with parity_unit "
                             f"{t['parity_unit']:.4g}")
        curve = curves.setdefault(t["cluster"], {"sb": set(), "points": []})
        curve["sb"].add((c["s"], c["b"]))
        curve["points"].append((c["h"], c["s"] * c["b"] * t["parity_unit"]))
    for cluster, curve in curves.items():
        if len(curve["sb"]) != 1:
            raise SystemExit(f"criterion.py: --boundary files for {cluster} mix (s, b) pairs {sorted(curve['sb'])}")
        curve["points"].sort()
    return curves


def draw_map(m, out, name="criterion_map"):
    """The criterion map of one model on one cluster (`zeropp criterion --map`, criterion_map.json): the byte
    boundary of the model's own layer family (3P/(8h) tokens per unit, P its parameters: 4.5h for GPT's 12h^2) and
    the time-based one on the cluster (s*b*U*), over h; the model at U*b = 1 (ring), at its smallest U by bytes
    (square) and by time (dot)."""
    pts = m["points"]
    h = np.array([p["h"] for p in pts], dtype=float)
    byte_t = np.array([p["byte_tokens"] for p in pts])
    time_t = np.array([p["time_tokens"] for p in pts])
    s, b = m["s"], m["b"]
    k = m["layer_params_per_h2"]
    lowest = min(list(time_t) + list(byte_t) + [s * b]) / 1.5
    tokens = np.logspace(np.log2(2 ** math.floor(np.log2(lowest))), 20, 200, base=2)
    hh = np.logspace(np.log10(h[0]), np.log10(h[-1]), 200)
    H, T = np.meshgrid(hh, tokens)
    # ZeroPP / TP bytes per layer: 3P/U / (8sbh) = (3k/8) h / (sUb), with P = k h^2 of the model's layer.
    ratio = (3 * k / 8) * H / T
    fig, ax = plt.subplots(figsize=(3.3, 3.0))
    ax.grid(False)
    mesh = ax.pcolormesh(H, T, ratio, norm=mcolors.LogNorm(vmin=1 / 64, vmax=64), cmap="RdBu_r", shading="auto",
                         rasterized=True)
    fig.colorbar(mesh, ax=ax, pad=0.02).set_label(f"ZeroPP / TP bytes per layer ({k:.3g}h² params)")
    ax.plot(h, byte_t, "k-", lw=1.5, label="bytes equal, 2sUb = 3P/(4h)")
    rule = "sp+ov" if m.get("tp_comm_overlap") else "sp" if m.get("sequence_parallel") else "nosp"
    ax.plot(h, time_t, "w-", lw=2.8, solid_capstyle="butt")
    ax.plot(h, time_t, "k--", lw=1.3, label=f"time equal on {m['cluster']} (TP {rule}, s={s}, b={b})")
    ax.scatter(m["h"], s * b, marker="o", facecolors="none", edgecolors="#d62728", s=40, zorder=3,
               label=f"{m['model']}, U = 1")
    ax.scatter(m["h"], s * b * m["byte_min_unit"], marker="s", color="#d62728", s=14, zorder=4,
               label=f"smallest U by bytes: {m['byte_min_unit']}")
    if m.get("time_min_unit") is not None:
        ax.scatter(m["h"], s * b * m["time_min_unit"], marker="o", color="black", s=10, zorder=4,
                   label=f"smallest U by time: {m['time_min_unit']}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlim(hh[0], hh[-1])
    ax.set_ylim(tokens[0], tokens[-1])
    ax.set_xlabel("hidden size h of the model's layer family")
    ax.set_ylabel("tokens per scheduling unit s·U·b")
    fig.legend(loc="lower center", bbox_to_anchor=(0.5, 0.98), ncol=1, frameon=False, handletextpad=0.3,
               handlelength=1.6, fontsize=7)
    save(fig, out, name)


def main():
    p = parser(__doc__)
    p.add_argument("--map", help="criterion_map.json of one model and cluster (zeropp criterion --map): draws it alone")
    p.add_argument("--models", help="zeropp models --format json output")
    p.add_argument("--criterion", nargs="*", default=[], help="zeropp criterion --cluster ... --format json outputs")
    p.add_argument("--boundary", nargs="*", default=[],
                   help="zeropp criterion --cluster C --format json outputs, one per hidden size, same s and b")
    p.add_argument("--name", default="criterion_map")
    a = p.parse_args()
    apply_style()
    if a.map:
        draw_map(load_json(a.map), a.out, a.name)
        return
    if not a.models:
        raise SystemExit("criterion.py: give --models (the zoo map) or --map (one model's)")
    models = load_json(a.models)["models"]
    crits = [load_json(f) for f in a.criterion]
    curves = boundary_curve(a.boundary)

    h = np.logspace(np.log10(1024), np.log10(32768), 200)
    lowest = min([pt[1] for c in curves.values() for pt in c["points"]] + [512.0])
    tokens = np.logspace(np.log2(2 ** math.floor(np.log2(lowest / 1.2))), 20, 200, base=2)  # s*U*b
    H, T = np.meshgrid(h, tokens)
    ratio = 9 * H / (2 * T)

    fig, ax = plt.subplots(figsize=(3.3, 3.0))
    ax.grid(False)
    norm = mcolors.LogNorm(vmin=1 / 64, vmax=64)
    mesh = ax.pcolormesh(H, T, ratio, norm=norm, cmap="RdBu_r", shading="auto", rasterized=True)
    cbar = fig.colorbar(mesh, ax=ax, pad=0.02)
    cbar.set_label("ZeroPP / TP bytes per layer, 9h/(2sUb)")
    ax.plot(h, 4.5 * h, "k-", lw=1.5, label="bytes equal, 2sUb = 9h")
    ax.text(1150, 4.5 * 1150 * 10, "ZeroPP moves\nfewer bytes", ha="left", va="bottom", fontsize=8)
    ax.text(30000, 4.5 * 30000 / 4, "ZeroPP moves\nmore bytes", ha="right", va="top", fontsize=8)
    for (cluster, curve), style in zip(curves.items(), ["--", ":", "-."]):
        (s, b), = curve["sb"]
        ch, ct = zip(*curve["points"])
        # A white band under the line and a white halo around its label keep both readable on the dark end of the
        # colour scale; the label goes below the line, clear of the zoo markers above it.
        ax.plot(ch, ct, "w-", lw=2.8, solid_capstyle="butt")
        ax.plot(ch, ct, "k", ls=style, lw=1.3, label=f"time equal (s={s}, b={b})")
        ax.annotate(f"time equal on\n{cluster}", (ch[-1], ct[-1]), textcoords="offset points", xytext=(-2, -4),
                    ha="right", va="top", fontsize=8,
                    path_effects=[patheffects.withStroke(linewidth=2.5, foreground="white")])

    seen = set()
    for m in models:
        label, marker, color = family(m["name"])
        ax.scatter(m["hidden"], m["seq_len"], marker=marker, facecolors="none", edgecolors=color, s=40, zorder=3,
                   linewidths=1.0, label=f"{label}, U·b = 1" if label not in seen else None)
        seen.add(label)
    cluster = None
    for c in crits:
        t = c.get("time")
        if not t or t.get("min_unit") is None:
            continue
        cluster = t["cluster"]
        label, marker, color = family(c["model"])
        ax.scatter(c["h"], c["s"] * t["min_unit"] * c["b"], marker=marker, color=color, s=8, zorder=4,
                   linewidths=0)
    if cluster:
        where = "" if cluster in curves else f", {cluster}"  # the curve's label names the cluster otherwise
        ax.scatter([], [], marker="o", color="gray", s=8, label=f"smallest U by time{where}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlim(h[0], h[-1])
    ax.set_ylim(tokens[0], tokens[-1])
    ax.set_xlabel("hidden size h (elements)")
    ax.set_ylabel("tokens per scheduling unit s·U·b")
    ax.grid(False)
    fig.legend(loc="lower center", bbox_to_anchor=(0.5, 0.98), ncol=2, frameon=False, columnspacing=0.6,
               handletextpad=0.3, handlelength=1.6)
    save(fig, a.out, a.name)


if __name__ == "__main__":
    main()
