#!/usr/bin/env python3
"""Causal attention forward and backward through PyTorch's scaled_dot_product_attention at the shapes of
zeropp-bench's model list (--zeropp_list_shapes: one rank's heads and kv heads at tp, micro-batch b, the model's s
and head dimension), per SDPA backend: flash (FlashAttention-2 in PyTorch), cudnn (cuDNN's fused attention) and
default (what PyTorch picks). GQA through enable_gqa where kv heads < heads.

FLOPs (the attention core only, as the FlashAttention papers count them): forward 4 * b * heads * s^2 * d, backward
2.5x that (Dao 2023, section 4: 5 matmuls against 2), halved for the causal mask (the work a causal kernel skips);
both the executed (causal) rate and the full-count rate are written. Timing: CUDA events around --repetitions calls
queued back to back after warm-up (the mean per call: the host runs ahead of the GPU as in a training step, so the
host's dispatch is hidden wherever the kernel takes longer), which the rates use; and, for comparison, the median of
single calls each between its own events after a synchronisation (`*_isolated_ms`), which includes the host's
dispatch of each call (Python, SDPA's backend choice, autograd): tens of microseconds, which the first H100 and H200
runs (results/measured/*/torch-sdpa.json, single calls only) carried at their small shapes. Inputs uniform in
[-1, 1) (never zeros); outputs checked finite, and each backend's forward compared with the default one on the
first shape (relative error, bf16: a few 1e-3).

Exits 0 with a message where PyTorch or a GPU is absent.
Usage: sdpa_bench.py --shapes SHAPES.json [--json OUT] [--repetitions 5] [--backends flash,cudnn,default]
"""
import argparse
import json
import statistics
import sys
import time


def time_ms(torch, fn, repetitions, warmup=2):
    """(queued, isolated): the mean per call of `repetitions` calls queued between one pair of events, and the median
    of single calls each timed alone after a synchronisation."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repetitions):
        fn()
    stop.record()
    stop.synchronize()
    queued = start.elapsed_time(stop) / repetitions
    times = []
    for _ in range(repetitions):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return queued, statistics.median(times)


def measure(torch, shape, backend, repetitions):
    F = torch.nn.functional
    from torch.nn.attention import SDPBackend, sdpa_kernel
    b, h, kv, s, d = shape["batch"], shape["heads"], shape["kv_heads"], shape["seq"], shape["head_dim"]
    gen = torch.Generator(device="cuda").manual_seed(1)

    def uniform(*size):
        return (torch.rand(size, device="cuda", generator=gen) * 2 - 1).to(torch.bfloat16).requires_grad_()

    q, k, v = uniform(b, h, s, d), uniform(b, kv, s, d), uniform(b, kv, s, d)
    kernels = {"flash": [SDPBackend.FLASH_ATTENTION], "cudnn": [SDPBackend.CUDNN_ATTENTION],
               "default": None}[backend]
    gqa = {"enable_gqa": True} if kv != h else {}

    def forward():
        if kernels is None:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, **gqa)
        with sdpa_kernel(kernels):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, **gqa)

    out = forward()
    if not torch.isfinite(out.float()).all():
        raise RuntimeError("non-finite attention output")
    dout = torch.rand_like(out) * 2 - 1
    fwd_ms, fwd_isolated_ms = time_ms(torch, forward, repetitions)

    def backward():
        q.grad = k.grad = v.grad = None
        o = forward()
        o.backward(dout)

    fwd_bwd_ms, fwd_bwd_isolated_ms = time_ms(torch, backward, repetitions)
    if not all(torch.isfinite(t.grad.float()).all() for t in (q, k, v)):
        raise RuntimeError("non-finite attention gradient")
    full_fwd = 4.0 * b * h * s * s * d
    causal_fwd, causal_bwd = full_fwd / 2, 2.5 * full_fwd / 2
    bwd_ms = max(fwd_bwd_ms - fwd_ms, 1e-9)
    return out.detach(), {
        "forward_ms": fwd_ms, "backward_ms": bwd_ms, "forward_backward_ms": fwd_bwd_ms,
        "forward_tflops_causal": causal_fwd / fwd_ms / 1e9, "backward_tflops_causal": causal_bwd / bwd_ms / 1e9,
        "forward_tflops_full_count": full_fwd / fwd_ms / 1e9,
        "flop_forward_causal": causal_fwd, "flop_backward_causal": causal_bwd,
        "forward_isolated_ms": fwd_isolated_ms, "forward_backward_isolated_ms": fwd_bwd_isolated_ms,
        "timing": "queued",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", required=True, help="zeropp-bench --zeropp_list_shapes output")
    ap.add_argument("--json")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--backends", default="flash,cudnn,default")
    args = ap.parse_args()
    try:
        with open(args.shapes) as f:
            shapes = json.load(f)["attention"]
    except (OSError, ValueError, KeyError) as e:
        print(f"sdpa_bench: {args.shapes}: no attention shapes ({e})", file=sys.stderr)
        return 1
    try:
        import torch
    except ImportError:
        print("sdpa_bench: PyTorch is not installed; nothing measured")
        return 0
    if not torch.cuda.is_available():
        print("sdpa_bench: no CUDA GPU visible to PyTorch; nothing measured")
        return 0
    results = []
    reference = None
    for i, shape in enumerate(shapes):
        for backend in [x for x in args.backends.split(",") if x]:
            row = {"case": shape["case"], "backend": backend, **{k: shape[k] for k in
                   ("model", "tp", "b", "batch", "heads", "kv_heads", "seq", "head_dim")}}
            try:
                out, r = measure(torch, shape, backend, args.repetitions)
                row.update(r)
                if i == 0:
                    if backend == "default":
                        reference = out.float()
                    row["_out"] = out
                print(f"{shape['case']:42s} {backend:8s} fwd {r['forward_ms']:8.3f} ms "
                      f"{r['forward_tflops_causal']:6.1f} "
                      f"TFLOP/s  bwd {r['backward_ms']:8.3f} ms {r['backward_tflops_causal']:6.1f} TFLOP/s")
            except Exception as e:  # a backend that does not take this shape (or is not built in) says why
                row["error"] = f"{type(e).__name__}: {e}"[:400]
                print(f"{shape['case']:42s} {backend:8s} error: {row['error'][:120]}")
            results.append(row)
            torch.cuda.empty_cache()
    for row in results:
        out = row.pop("_out", None)
        if out is not None and reference is not None:
            row["relative_error_vs_default"] = float((out.float() - reference).norm() / reference.norm())
    if args.json:
        doc = {"schema": 1, "tool": "scripts/device/sdpa_bench.py", "torch": torch.__version__,
               "device": torch.cuda.get_device_name(), "results": results, "time_unix": time.time()}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
