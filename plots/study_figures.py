"""The figures of one study report, drawn for its experiment from the data `zeropp report` writes into the
report's figure folder (cost_model/search/study_figures.hpp): figures.json lists them.

memory_breakdown  memory.py's draw_memory over memory.json (every row's simulated peak by part, and when);
schedule_gantt    gantt.py over gantt-trace.json (the best ZeroPP plan's simulated timeline: its ZeRO-3 gathers and
                  reduce-scatters on the collective row);
criterion_map     criterion.py's draw_map over criterion_map.json (the model's own map on the cluster);
validation        predicted_vs_measured.py's validation over validation-<set>.json (the GPU's sets).
One Python process draws them all (matplotlib is imported once).
"""
import os
import textwrap

from matplotlib.patches import Patch

import common
import gantt
from common import GIB, apply_style, load_json, parser, plt, save
from criterion import draw_map
from memory import draw_memory
from predicted_vs_measured import validation


def draw_gantt(trace, title, out):
    """The whole iteration, and below it a zoom on the first reduce-scatter (or gather) where the ZeRO-3 traffic of
    a z > 1 plan is wide enough to see."""
    events = gantt.load_events(trace, None)
    ranks = len({e[0] for e in events})
    window = gantt.zoom_window(events)
    panels = [(None, textwrap.fill(title, 60))]
    if window:
        panels.append((window, f"zoom: {1e3 * window[0]:.1f} to {1e3 * window[1]:.1f} ms"))
    height = len(panels) * (0.55 * ranks + 0.5) + 0.9
    fig, axes = plt.subplots(len(panels), 1, figsize=(3.5, height), squeeze=False)
    fig.subplots_adjust(hspace=0.5)
    used = set()
    for ax, (w, t) in zip(axes[:, 0], panels):
        used |= gantt.draw(ax, events, t, w)
    axes[-1, 0].set_xlabel("time (s)")
    names = {"P2P": "send/recv", "UNSHARD": "ZeRO-3 gather", "REDUCE": "reduce-scatter", "DP": "DP sync",
             "OPT": "optimizer", "RESHARD": "free"}
    handles = [Patch(color=c, label=names.get(k, k)) for k, c in gantt.KIND_COLORS.items() if k in used]
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(handles), 4),
               frameon=False, columnspacing=0.8, handlelength=1.2)
    fig.text(0.0, -0.04, "per rank: compute row; thin rows: collectives (ZeRO-3, DP), then send/recv",
             ha="left", va="top", fontsize=7)
    save(fig, out, "schedule_gantt")


def main():
    p = parser(__doc__)
    p.add_argument("--data", required=True, help="the report's figure folder (holds figures.json)")
    p.add_argument("--svg", action="store_true", help="SVG beside each PNG (slower)")
    a = p.parse_args()
    common.FORMATS = ["png", "svg"] if a.svg else ["png"]
    apply_style()
    d = a.data
    manifest = load_json(os.path.join(d, "figures.json"))
    if manifest.get("memory"):
        m = load_json(os.path.join(d, manifest["memory"]))
        e = m["experiment"]
        draw_memory(m["rows"], m["memory_bytes"] / GIB,
                    f"{e['model']}, {e['gpus']} GPUs, {e['cluster']}, global batch {e['global_batch']}", a.out)
    if manifest.get("gantt"):
        draw_gantt(os.path.join(d, manifest["gantt"]["trace"]), manifest["gantt"]["title"], a.out)
    if manifest.get("criterion_map"):
        draw_map(load_json(os.path.join(d, manifest["criterion_map"])), a.out)
    if manifest.get("validation"):
        validation([os.path.join(d, f) for f in manifest["validation"]], a.out)


if __name__ == "__main__":
    main()
