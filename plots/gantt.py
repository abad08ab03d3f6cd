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
    ("RESHARD", "#bbbbbb"),
])
# Rows of a rank: compute (tid 0), then its collectives (intra/inter-node streams, tid 3 and 4: ZeRO-3 gathers and
# reduce-scatters, DP sync), then its p2p streams (tid 1 and 2). Offsets below the rank's compute row.
COLLECTIVE_TIDS = (3, 4)


def kind(cat):
    """The colour key of an action kind: its IR name without stage and micro-batch ("REDUCE_GRAD", "SEND_F")."""
    if cat.startswith(("SEND", "RECV")):
        return "P2P"
    for prefix, k in (("OPT", "OPT"), ("UNSHARD", "UNSHARD"), ("REDUCE", "REDUCE"), ("DP", "DP"),
                      ("RESHARD", "RESHARD"), ("RECOMPUTE", "R")):
        if cat.startswith(prefix):
            return k
    return cat if cat in KIND_COLORS else "R" if cat == "R" else cat


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


def draw(ax, events, title, window=None):
    """One panel: per rank a compute row, a thin collectives row (ZeRO-3 gathers and reduce-scatters, DP sync) and a
    thin p2p row; window = (t0, t1) in seconds shows that span only."""
    ranks = sorted({e[0] for e in events})
    used = set()
    ticks, labels = [], []
    # One broken_barh (one collection) per rank, row and kind: thousands of actions draw in a second, where a call
    # per action took tens of seconds.
    bars = collections.defaultdict(list)
    for pid, tid, ts, dur, cat, _ in events:
        if dur <= 0 or (window and (ts + dur < window[0] or ts > window[1])):
            continue
        row = 0 if tid == 0 else 1 if tid in COLLECTIVE_TIDS else 2
        bars[(pid, row, kind(cat))].append((ts, dur))
    for i, r in enumerate(ranks):
        y = -i * 1.9  # compute row at y, collectives and p2p just below
        for (pid, row, k), spans in bars.items():
            if pid != r:
                continue
            used.add(k)
            color = KIND_COLORS.get(k, "#bbbbbb")
            if row == 0:
                ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=color, edgecolors="white", linewidth=0.3)
            else:
                ax.broken_barh(spans, (y - 0.55 - 0.4 * row, 0.32), facecolors=color, edgecolors="none")
        ticks.append(y)
        labels.append(f"rank {r}")
    ax.set_yticks(ticks, labels)
    ax.set_title(title, loc="left", pad=2)
    ax.grid(axis="y", visible=False)
    if window:
        ax.set_xlim(*window)
    return used


def zoom_window(events):
    """A span around the first reduce-scatter of rank 0 (else its second gather), about a dozen compute actions
    wide: where a ZeroPP plan's ZeRO-3 traffic is visible beside the compute it overlaps."""
    coll = [e for e in events if e[0] == 0 and kind(e[4]) in ("REDUCE", "UNSHARD") and e[3] > 0]
    compute = sorted(e[3] for e in events if e[1] == 0 and e[3] > 0)
    if not coll or not compute:
        return None
    reduces = [e for e in coll if kind(e[4]) == "REDUCE"]
    at = (reduces[0] if reduces else sorted(coll, key=lambda e: e[2])[min(1, len(coll) - 1)])
    width = 12 * compute[len(compute) // 2] + at[3]
    return (max(0.0, at[2] - width / 2), at[2] + width / 2)


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
