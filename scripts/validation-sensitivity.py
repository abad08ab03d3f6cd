#!/usr/bin/python3
"""Sensitivity of a validation set to what its table does not say.

The published tables give the layout (tp, pp, dp, batch) but not the micro-batch size, the interleaving or every
overlap flag: configs/validation/*.json state an assumption for each. This script re-runs `zeropp validate` with
each assumption changed, and prints the fitted gemm_efficiency and the in-sample and leave-one-out errors, so a
reader can see how much the conclusions rest on the guesses.

    scripts/validation-sensitivity.py [--zeropp build/cost_model/zeropp] [--set megatron_core_h100]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_set(name):
    path = os.path.join(ROOT, "configs", "validation", name + ".json")
    with open(path) as f:
        return json.loads("\n".join(line for line in f if not line.lstrip().startswith("//")))


def set_rows(key, value):
    def change(d):
        for r in d["rows"]:
            r[key] = value
    return change


def one_layer_per_chunk_where_odd(d):
    """Interleave down to one layer per chunk where the layers per pipeline rank admit no even split."""
    for r in d["rows"]:
        per_rank = r["layers"] // r["pp"]
        if r["pp"] > 1 and per_rank % 2:
            r["v"] = per_rank


def parallel_key(key, value):
    def change(d):
        d.setdefault("parallel", {})[key] = value
    return change


VARIANTS = {
    "megatron_core_h100": [
        ("as stated (b 1, v 2 where L/pp even)", lambda d: None),
        ("v 1 everywhere", set_rows("v", 1)),
        ("one layer per chunk where L/pp is odd", one_layer_per_chunk_where_odd),
        ("micro-batch 2", set_rows("micro_batch", 2)),
        ("selective recompute", lambda d: d.__setitem__("recompute", "selective")),
        ("no --tp-comm-overlap", parallel_key("tp_comm_overlap", False)),
        ("no --overlap-param-gather", parallel_key("overlap_param_gather", False)),
    ],
    "narayanan2021": [
        ("as stated (the released scripts' layouts)", lambda d: None),
        ("v 1 everywhere", set_rows("v", 1)),
    ],
}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--zeropp", default=os.path.join(ROOT, "build", "cost_model", "zeropp"))
    p.add_argument("--set", dest="name", default="megatron_core_h100", choices=sorted(VARIANTS))
    a = p.parse_args()
    base = load_set(a.name)
    print(f"{a.name}: zeropp validate on each variant (gemm_efficiency refitted on all rows each time)")
    print(f"{'variant':44s} {'fit':>7s} {'in-sample':>10s} {'LOO mean':>9s} {'LOO max':>8s}")
    with tempfile.TemporaryDirectory() as tmp:
        for label, change in VARIANTS[a.name]:
            d = json.loads(json.dumps(base))
            change(d)
            path = os.path.join(tmp, "set.json")
            with open(path, "w") as f:
                json.dump(d, f)
            run = subprocess.run([a.zeropp, "validate", "--set", path, "--format", "json"], capture_output=True,
                                 text=True, check=False)
            if run.returncode:
                print(f"{label:44s} refused: {run.stderr.strip()}")
                continue
            j = json.loads(run.stdout)
            print(f"{label:44s} {j['fit']['gemm_efficiency']:7.4f} {100 * j['fit']['mean_abs_error']:9.1f}% "
                  f"{100 * j['loo']['mean_abs_error']:8.1f}% {100 * j['loo']['max_abs_error']:7.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
