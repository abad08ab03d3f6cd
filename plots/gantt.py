"""(d) Gantt timelines of pipeline schedules from Chrome traces, panels stacked on one time axis.

Input: Chrome trace JSON as written by `zeropp schedule --trace` (simulated) and `zeropp-train --trace` (measured):
traceEvents with ph "X", pid = pipeline rank, tid = stream (0 compute; others p2p and collectives), ts/dur in us.
Per rank, one row for compute and one thin row for every communication stream together. A measured trace that
holds several iterations (args.step) is cut to one step (--step, default the last: past the first, warm-up,
iteration), shifted to start at 0.

The footnote gives the last panel's mean F+B+W time per micro-batch on each virtual stage (names like "3F0" carry
the stage), because a simulation run with one cost per action kind gives every stage the same cost: when a stage is
slower in the measurement (the last one holds the LM head and the loss), the ranks that wait for it idle in the
measured panel but not in the simulated one.
"""
import collections
import re

from matplotlib.patches import Patch

from common import apply_style, load_json, parser, plt, save

KIND_COLORS = collections.OrderedDict([
    ("F", "#4c72b0"), ("B", "#55a868"), ("W", "#dd8452"), ("BW", "#2a9d8f"), ("R", "#8c8c8c"),
    ("UNSHARD", "#c44e52"), ("REDUCE", "#937860"), ("DP", "#da8bc3"), ("OPT", "#333333"), ("P2P", "#8172b3"),
])


def kind(cat):
    if cat.startswith(("SEND", "RECV")):
        return "P2P"
    if cat.startswith("OPT"):
        return "OPT"
    for k in KIND_COLORS:
        if cat.startswith(k) and k not in ("B", "W", "F"):
            return k
    return cat if cat in KIND_COLORS else "R" if cat.startswith("R") else cat


def load_events(path, step):
    d = load_json(path)
    events = [e for e in (d["traceEvents"] if isinstance(d, dict) else d) if e.get("ph") == "X"]
    steps = sorted({e.get("args", {}).get("step") for e in events} - {None})
    if steps:
        want = steps[-1] if step is None else step
        events = [e for e in events if e.get("args", {}).get("step") == want]
    t0 = min(e["ts"] for e in events)
    return [(e["pid"], e["tid"], (e["ts"] - t0) * 1e-6, e["dur"] * 1e-6, e.get("cat", e["name"]), e["name"])
            for e in events]


def stage_compute(events):
    """Mean seconds of F + B + W (or BW) per micro-batch on each virtual stage, from action names like '3F0'."""
    total = collections.defaultdict(float)
    mbs = collections.defaultdict(set)
    for _, tid, _, dur, cat, name in events:
        m = re.fullmatch(r"(\d+)(F|B|W|BW)(\d+)", name)
        if tid == 0 and m:
            total[int(m.group(1))] += dur
            mbs[int(m.group(1))].add(int(m.group(3)))
    return {st: total[st] / len(mbs[st]) for st in sorted(total)}


def draw(ax, events, title):
    ranks = sorted({e[0] for e in events})
    used = set()
    ticks, labels = [], []
    for i, r in enumerate(ranks):
        y = -i * 1.5  # compute row at y, communication row just below
        for pid, tid, ts, dur, cat, _ in events:
            if pid != r or dur <= 0:
                continue
            k = kind(cat)
            used.add(k)
            color = KIND_COLORS.get(k, "#bbbbbb")
            if tid == 0:
                ax.broken_barh([(ts, dur)], (y - 0.4, 0.8), facecolors=color, edgecolors="white", linewidth=0.3)
            else:
                ax.broken_barh([(ts, dur)], (y - 0.95, 0.35), facecolors=color, edgecolors="none")
        ticks.append(y)
        labels.append(f"rank {r}")
    ax.set_yticks(ticks, labels)
    ax.set_title(title, loc="left", pad=2)
    ax.grid(axis="y", visible=False)
    return used


def main():
    p = parser(__doc__)
    p.add_argument("--trace", action="append", required=True, help="Chrome trace JSON (repeat for more panels)")
    p.add_argument("--title", action="append", default=[], help="panel title, one per --trace")
    p.add_argument("--step", type=int, help="iteration to show from a multi-step trace (default the last)")
    p.add_argument("--name", default="schedule_gantt")
    a = p.parse_args()
    apply_style()
    panels = [load_events(t, a.step) for t in a.trace]
    heights = [len({e[0] for e in ev}) for ev in panels]
    height = 0.45 * sum(heights) + 0.9 * len(panels) + 0.4  # inches
    fig, axes = plt.subplots(len(panels), 1, figsize=(3.3, height), sharex=True,
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    fig.subplots_adjust(top=1 - 0.45 / height)  # room above the first panel's title for one legend row
    used = set()
    for ax, ev, i in zip(axes[:, 0], panels, range(len(panels))):
        used |= draw(ax, ev, a.title[i] if i < len(a.title) else a.trace[i])
    axes[-1, 0].set_xlabel("time (s)")
    handles = [Patch(color=c, label=k if k != "P2P" else "send/recv") for k, c in KIND_COLORS.items() if k in used]
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(handles), 5),
               frameon=False, columnspacing=0.8, handlelength=1.2)
    per_stage = stage_compute(panels[-1])
    note = "thin bars: communication streams"
    if len(set(round(v, 4) for v in per_stage.values())) > 1:
        note += "\nF+B+W per micro-batch in the last panel, by stage:\n" + ", ".join(
            f"{st}: {1e3 * v:.0f} ms" for st, v in per_stage.items())
    fig.text(0.0, -0.01, note, ha="left", va="top", fontsize=8)
    save(fig, a.out, a.name)


if __name__ == "__main__":
    main()
