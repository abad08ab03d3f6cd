#!/usr/bin/env python3
"""Writes the nccl-tests outputs of this folder (README.md says what each is for).

Synthetic: no GPU ran. Each time is the alpha-beta ring model t = steps(c, n) * alpha + S * busbw_factor(c, n) / beta
(cost_model/analytic/collectives.hpp) with the alpha and beta stated below, so a test can check that `zeropp calibrate`
recovers them. Everything else is printed with the printf formats of the nccl-tests version each file imitates
(NVIDIA/nccl-tests src/common.cu and src/util.cu at the tags named), sizes and counts as its <collective>.cu computes
them. The malformed files are copies of the good ones with one defect each.

    python3 tests/data/nccl-tests/make_files.py   # rewrites the .txt files next to this script
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
H100 = "NVIDIA H100 80GB HBM3"


def float_str(value, width):
    """nccl-tests >= 2.17 getFloatStr: 2 decimals, fewer when the width would overflow, else exponent notation."""
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        s = fmt % (width, value)
        if len(s) <= width:
            return s
    return ("%*.1e" if width >= 7 else "%*.0e") % (width, value)


def time_str_213(us):
    """nccl-tests 2.13 .. 2.16: %7.0f from 10 ms, %7.1f from 100 us, else %7.2f."""
    return "%7.0f" % us if us >= 10000 else "%7.1f" % us if us >= 100 else "%7.2f" % us


def time_str_old(us):
    """Before 2.13: the same with strict comparisons."""
    return "%7.0f" % us if us > 10000 else "%7.1f" % us if us > 100 else "%7.2f" % us


FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
          "reduce_scatter": lambda n: (n - 1) / n, "send_recv": lambda n: 1.0}
STEPS = {"all_reduce": lambda n: 2 * (n - 1), "all_gather": lambda n: n - 1,
         "reduce_scatter": lambda n: n - 1, "send_recv": lambda n: 1}


def model_us(c, n, size, alpha_us, beta_gbps):
    return STEPS[c](n) * alpha_us + size * FACTOR[c](n) / (beta_gbps * 1e3)


def sizes(lo, hi):
    s = lo
    while s <= hi:
        yield s
        s *= 2


def device_lines(hosts, gpus_per_host, name, style, one_process=False):
    """One line per GPU; one_process: a single process drives them all (nccl-tests -g 8)."""
    out, rank = [], 0
    for h in hosts:
        for d in range(gpus_per_host):
            pid = 41000 + (0 if one_process else 37 * rank)
            if style == "new":  # 2.17 on: PCI domain:bus:device
                bus = "[%04x:%02x:%02x]" % (0, 0x18 + 0x1a * d, 0)
                out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d %s %s" % (rank, 0, pid, h, d, bus, name))
            elif style == "2.13":
                out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s"
                           % (rank, 0, pid, h, d, 0x18 + 0x1a * d, name))
            else:  # before 2.13: no group
                out.append("#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s"
                           % (rank, pid, h, d, 0x18 + 0x1a * d, name))
            rank += 1
    return out


def new_table(c, n, requested, typ, op, alpha_us, beta_gbps, in_place_scale):
    """Rows of nccl-tests >= 2.17 (writeBenchmarkLinePreamble + writeBenchmarkLineBody twice)."""
    rows, bws = [], []
    for req in requested:
        count = req // 4
        if c == "all_gather":  # base = (count/nranks) & -(16/eltSize)
            base = (count // n) & ~3
            size, param = base * n * 4, base
        else:
            size, param = count * 4, count
        line = "%12li  %12li  %8s  %6s  %6s" % (size, param, typ, op, "%6i" % -1)
        for scale in (1.0, in_place_scale):
            us = model_us(c, n, size, alpha_us, beta_gbps) * scale if size else 5.12 * scale
            alg = size / 1e9 / (us * 1e-6)
            bus = alg * FACTOR[c](n)
            bws.append(bus)
            line += "  %7s  %6s  %6s  %6g" % (float_str(us, 7), float_str(alg, 6), float_str(bus, 6), 0)
        rows.append(line)
    return rows, sum(bws) / len(bws)


def new_header():
    """writeResultHeader of nccl-tests >= 2.17, without timestamps or per-iteration columns."""
    blank = ("", "", "", "", "")
    return ["#",
            "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " % blank,
            "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " % (
                "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                "#wrong"),
            "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " % (
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "")]


def new_footer(program, avg):
    """writeResultFooter of nccl-tests >= 2.17 (no -G check of the average)."""
    return ["# %-20s : %d %s" % ("Out of bounds values", 0, "OK"), "# %-20s : %g " % ("Avg bus bandwidth", avg), "#",
            "# Collective test concluded: %s" % program, "#"]


def write(name, lines):
    with open(os.path.join(HERE, name), "w") as f:
        f.write("\n".join(lines) + "\n")


def all_reduce_8gpu():
    """2.19.6 layout; 8 H100 on one host; alpha 1.2 us per step, busbw 360 GB/s; -b 8 -e 8G -f 2."""
    rows, avg = new_table("all_reduce", 8, sizes(8, 8 << 30), "float", "sum", 1.2, 360.0, 1.004)
    head = ["# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807",
            "# Collective test starting: all_reduce_perf",
            "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 "
            "validation: 1 graph: 0 unalign: 0",
            "#", "# Using devices"] + device_lines(["dgx-h100-01"], 8, H100, "new") + [
            "NCCL version 2.28.7+cuda13.0"] + new_header()
    foot = new_footer("all_reduce_perf", avg)
    write("all_reduce_8gpu.txt", head + rows + foot)
    # Defects, one per file.
    write("all_reduce_truncated.txt", head + rows[:12] + [rows[12][:62]])
    wrong = list(rows)
    wrong[14] = wrong[14][:-6] + "%6g" % 12
    failed = "# %-20s : %d %s" % ("Out of bounds values", 12, "FAILED")
    write("all_reduce_wrong.txt", head + wrong + [failed] + foot[1:])
    no_header = [l for l in head if not l.startswith("#  Rank") and "nThread" not in l]
    write("all_reduce_no_header.txt", no_header + rows + foot)


def all_gather_2hosts():
    """2.18.3 layout under mpirun --tag-output, NCCL INFO lines between; 2 hosts x 8 H100 (16 ranks); alpha 6 us per
    step, busbw 45 GB/s; -b 64 -e 1G -f 2 (the two smallest sizes are below one 16-byte slice per rank: size 0)."""
    rows, avg = new_table("all_gather", 16, sizes(64, 1 << 30), "float", "none", 6.0, 45.0, 0.998)
    head = ["# nccl-tests version 2.18.3 nccl-headers=23003 nccl-library=23003",
            "# Collective test starting: all_gather_perf",
            "# nThread 1 nGpus 1 minBytes 64 maxBytes 1073741824 step: 2(factor) warmup iters: 1 iters: 20 "
            "agg iters: 1 "
            "validation: 1 graph: 0 unalign: 0",
            "#", "# Using devices"] + device_lines(["node-a01", "node-a02"], 8, H100, "new")
    info = ["node-a01:41000:41000 [0] NCCL INFO Bootstrap: Using ibp26s0:10.10.1.1<0>",
            "node-a01:41000:41000 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB ; "
            "OOB ibp26s0:10.10.1.1<0>",
            "node-a01:41000:41077 [0] NCCL INFO comm 0x5581 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0"]
    table = new_header()
    foot = new_footer("all_gather_perf", avg)
    channel = "node-a01:41000:41090 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"
    body = head + info + table + rows[:6] + [channel] + rows[6:] + foot
    write("all_gather_2hosts.txt", ["[1,0]<stdout>:" + l for l in body])


def reduce_scatter_8gpu():
    """2.13.9 layout (no program line: the collective is inferred); 8 H100 on one host; alpha 1.5 us per step,
    busbw 340 GB/s; -b 1K -e 512M -f 2."""
    n, rows, bws = 8, [], []
    for req in sizes(1024, 512 << 20):
        count = req // 4
        base = (count // (4 * n)) * 4
        size = base * n * 4
        line = "%12li  %12li  %8s  %6s  %6s" % (size, base, "float", "sum", "%6i" % -1)
        for scale in (1.0, 1.003):
            us = model_us("reduce_scatter", n, size, 1.5, 340.0) * scale
            alg = size / 1e9 / (us * 1e-6)
            bus = alg * FACTOR["reduce_scatter"](n)
            bws.append(bus)
            line += "  %7s  %6.2f  %6.2f  %5g" % (time_str_213(us), alg, bus, 0)
        rows.append(line)
    head = ["# nThread 1 nGpus 8 minBytes 1024 maxBytes 536870912 step: 2(factor) warmup iters: 5 iters: 20 "
            "agg iters: 1 "
            "validation: 1 graph: 0",
            "#", "# Using devices"] + device_lines(["dgx-h100-03"], 8, H100, "2.13", one_process=True) + [
            "#",
            "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
            % ("", "", "", "", ""),
            "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s" % (
                "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                "#wrong"),
            "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % (
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "")]
    foot = ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : %g " % (sum(bws) / len(bws)), "#"]
    write("reduce_scatter_8gpu.txt", head + rows + foot)


def sendrecv_2gpu():
    """Layout before 2.13 (sendrecv.cu's own header: no redop or root, an "error" column with the largest deviation,
    device lines without a group; no program line, and its columns cannot tell it from all_gather_perf: it needs
    --collective send_recv); 2 H100 of one host; alpha 4 us, bandwidth 370 GB/s; -b 1K -e 1G -f 2."""
    rows, bws = [], []
    for size in sizes(1024, 1 << 30):
        line = "%12li  %12li  %8s" % (size, size // 4, "float")
        for scale in (1.0, 1.002):
            us = model_us("send_recv", 2, size, 4.0, 370.0) * scale
            alg = size / 1e9 / (us * 1e-6)
            bws.append(alg)
            line += "  %7s  %6.2f  %6.2f  %5.0e" % (time_str_old(us), alg, alg, 0.0)
        rows.append(line)
    head = ["# nThread 1 nGpus 1 minBytes 1024 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 "
            "validation: 1 ",
            "#", "# Using devices"] + device_lines(["dgx-h100-02"], 2, H100, "old") + [
            "#",
            "# %10s  %12s  %8s            out-of-place                       in-place          " % ("", "", ""),
            "# %10s  %12s  %8s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % (
                "size", "count", "type", "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"),
            "# %10s  %12s  %8s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % (
                "(B)", "(elements)", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "")]
    foot = ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : %g " % (sum(bws) / len(bws)), "#"]
    write("sendrecv_2gpu.txt", head + rows + foot)


def all_reduce_hosts(name, hosts, per_host, alpha_us, busbw_gbps):
    """2.19.6 layout, one rank per GPU on the hosts given (per_host: GPUs on each); -b 8 -e 8G -f 2. The runs of a
    multi-host calibration (docs/multi-node.md, "What a run over several hosts measures")."""
    n = sum(per_host)
    rows, avg = new_table("all_reduce", n, sizes(8, 8 << 30), "float", "sum", alpha_us, busbw_gbps, 1.003)
    devices, rank = [], 0
    for h, count in zip(hosts, per_host):
        for line in device_lines([h], count, H100, "new"):
            devices.append(line.replace("Rank %2d" % int(line.split()[2]), "Rank %2d" % rank, 1))
            rank += 1
    head = ["# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807",
            "# Collective test starting: all_reduce_perf",
            "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 "
            "validation: 1 graph: 0 unalign: 0",
            "#", "# Using devices"] + devices + ["NCCL version 2.28.7+cuda13.0"] + new_header()
    write(name, head + rows + new_footer("all_reduce_perf", avg))


if __name__ == "__main__":
    all_reduce_8gpu()
    all_gather_2hosts()
    reduce_scatter_8gpu()
    sendrecv_2gpu()
    # 2 hosts x 8 H100, as cluster teams run it: busbw 346.7 GB/s (the hosts' network traffic; issue 21's example).
    all_reduce_hosts("all_reduce_2hosts_8gpu.txt", ["node-b01", "node-b02"], [8, 8], 8.0, 346.7)
    # 4 hosts x 1 H100: every ring edge crosses the network; busbw 45 GB/s is one GPU's NIC.
    all_reduce_hosts("all_reduce_4hosts_1gpu.txt", ["node-c01", "node-c02", "node-c03", "node-c04"], [1, 1, 1, 1],
                     14.0, 45.0)
    # 8 GPUs on one host and 4 on another: what the ring crossed is not known.
    all_reduce_hosts("all_reduce_uneven_hosts.txt", ["node-d01", "node-d02"], [8, 4], 8.0, 300.0)
