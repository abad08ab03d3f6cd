"""Shared helpers for the zeropp figure scripts: paper-column style, argument parsing, JSON loading, saving."""
import argparse
import json
import os
import re

import matplotlib

matplotlib.use("Agg")  # headless: figures are files, never windows
import matplotlib.pyplot as plt  # noqa: E402

COLUMN_WIDTH_IN = 3.5  # one column of a two-column paper
GIB = 2.0**30

# One colour per strategy row of `zeropp compare`, fixed so every figure agrees.
STRATEGY_COLORS = {
    "3d": "#1f77b4", "zero3": "#ff7f0e", "1f1b_zero1": "#2ca02c", "zb_h1_zero1": "#98df8a",
    "zb_h2_zero1": "#17becf", "bfs_zero1": "#9467bd", "zero3_pp": "#8c564b",
    "zeropp_a": "#d62728", "zeropp_b": "#e377c2",
}
STRATEGY_LABELS = {
    "3d": "3D", "zero3": "ZeRO-3", "1f1b_zero1": "1F1B+Z1", "zb_h1_zero1": "ZB-H1+Z1",
    "zb_h2_zero1": "ZB-H2+Z1", "bfs_zero1": "BFS+Z1", "zero3_pp": "ZeRO-3+PP",
    "zeropp_a": "ZeroPP A", "zeropp_b": "ZeroPP B",
}


def apply_style():
    """Fonts of at least 8 pt so a 3.5-inch-wide figure stays readable when printed."""
    plt.rcParams.update({
        "font.size": 8, "axes.labelsize": 8, "axes.titlesize": 8, "legend.fontsize": 8,
        "xtick.labelsize": 8, "ytick.labelsize": 8, "figure.dpi": 100, "savefig.dpi": 300,
        "savefig.bbox": "tight", "axes.grid": True, "grid.alpha": 0.3, "lines.linewidth": 1.2,
    })


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", default="results/figures", help="output folder for PNG and SVG (default results/figures)")
    return p


def load_json(path):
    """Reads JSON; strips whole-line // comments, which the repository's config files carry."""
    with open(path) as f:
        text = f.read()
    return json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE))


# What save() writes; study_figures.py (run by `zeropp report`) keeps to PNG unless asked for SVG too.
FORMATS = ["png", "svg"]


def save(fig, out_dir, name):
    os.makedirs(out_dir, exist_ok=True)
    for ext in FORMATS:
        fig.savefig(os.path.join(out_dir, f"{name}.{ext}"))
    plt.close(fig)
    print(os.path.join(out_dir, name) + ".{" + ",".join(FORMATS) + "}")
