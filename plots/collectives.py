"""(f) Collective microbenchmark curves: bus bandwidth vs buffer size, measured points and the calibrated fit.

Points: `zeropp-bench` Google Benchmark JSON (results/loop/bench.json): median busbw of each size, bars from the
slowest to the fastest repetition. Lines: the profile's piecewise alpha-beta fit (collectives.<level>.<name>.segments
of a calibrated cluster JSON such as configs/clusters/local-cpu.json), turned into busbw the way nccl-tests defines it:
  t(M) = steps*alpha + M*factor/beta,   busbw = M*factor/t,
with steps, factor = 2(n-1), 2(n-1)/n (all-reduce); n-1, (n-1)/n (all-gather, reduce-scatter); 1, 1 (send/recv).
A buffer of M bytes uses the first segment with M <= max_bytes, the last above them all (as cost_model/analytic does).
The profile also keeps the measured medians as a table (collectives.<level>.<name>.table), which the time model
uses for groups of the benchmark's size: for those, the model's curve runs through the points themselves, and
the lines are what other group sizes get.
"""
import collections

import numpy as np

from common import apply_style, load_json, parser, plt, save

COLLECTIVES = [("all_reduce", "all-reduce", "#1f77b4"), ("all_gather", "all-gather", "#2ca02c"),
               ("reduce_scatter", "reduce-scatter", "#d62728"), ("send_recv", "send/recv", "#9467bd")]


def steps_factor(name, n):
    if name == "all_reduce":
        return 2 * (n - 1), 2 * (n - 1) / n
    if name in ("all_gather", "reduce_scatter"):
        return n - 1, (n - 1) / n
    return 1, 1.0


def fit_busbw(fit, name, n, sizes):
    steps, factor = steps_factor(name, n)
    segments = fit.get("segments") or [{"latency_us": fit["latency_us"], "bandwidth_GBps": fit["bandwidth_GBps"],
                                        "max_bytes": float("inf")}]
    out = []
    for m in sizes:
        seg = next((s for s in segments if m <= s["max_bytes"]), segments[-1])
        t = steps * seg["latency_us"] * 1e-6 + m * factor / (seg["bandwidth_GBps"] * 1e9)
        out.append(m * factor / t / 1e9)
    return np.array(out)


def size_label(m, _pos):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if m >= scale:
            return f"{m / scale:g} {unit}"
    return f"{m:g} B"


def main():
    p = parser(__doc__)
    p.add_argument("--bench", required=True, help="zeropp-bench Google Benchmark JSON")
    p.add_argument("--profile", required=True, help="calibrated cluster JSON with collectives segments")
    p.add_argument("--level", default="intra", help="intra or inter (default intra)")
    p.add_argument("--name", default="collectives_busbw")
    a = p.parse_args()
    apply_style()
    bench = load_json(a.bench)
    profile = load_json(a.profile)
    fits = profile["collectives"][a.level]
    # Repetitions of one (collective, size): run_type "iteration" rows, one per repetition.
    reps = collections.defaultdict(list)
    ranks = {}
    for b in bench["benchmarks"]:
        parts = b["name"].split("/")
        if b.get("run_type") != "iteration" or parts[0] not in fits or f"/{a.level}/" not in b["name"]:
            continue
        reps[(parts[0], b["bytes"])].append(b["busbw_GBps"])
        ranks[parts[0]] = int(b["ranks"])
    fig, ax = plt.subplots(figsize=(3.4, 2.8))
    for name, label, color in COLLECTIVES:
        sizes = sorted(m for (c, m) in reps if c == name)
        if not sizes:
            continue
        vals = [np.array(reps[(name, m)]) for m in sizes]
        med = np.array([np.median(v) for v in vals])
        lo = med - np.array([v.min() for v in vals])
        hi = np.array([v.max() for v in vals]) - med
        ax.errorbar(sizes, med, yerr=[lo, hi], fmt="o", ms=2.5, color=color, elinewidth=0.8, label=f"{label}")
        grid = np.logspace(np.log10(sizes[0]), np.log10(sizes[-1]), 300)
        ax.plot(grid, fit_busbw(fits[name], name, ranks[name], grid), "-", color=color, lw=1)
    ax.plot([], [], "k-", lw=1, label="piecewise alpha-beta fit")
    ax.plot([], [], "ko", ms=2.5, label="measured (median, min-max)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("buffer size M (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    n = sorted(set(ranks.values()))
    ax.set_title(f"{profile.get('name', '')}: {a.level}, {'/'.join(map(str, n))} ranks, MPI", pad=2)
    ax.set_xticks([2.0**k for k in range(10, 27, 4)])
    ax.xaxis.set_major_formatter(plt.FuncFormatter(size_label))
    # Above the axes: every corner inside holds data.
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.08), ncol=2, frameon=False, columnspacing=0.8)
    save(fig, a.out, a.name)


if __name__ == "__main__":
    main()
