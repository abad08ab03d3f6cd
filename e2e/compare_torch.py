#!/usr/bin/env python3
"""The trainer's GPT and training step in PyTorch, to measure zeropp-train's CUDA backend against it on the same GPU.

Model (as e2e/model, DESIGN.md section 7): token + learned position embedding, L pre-LN blocks (causal multi-head
attention, GELU-tanh MLP with ffn = 4h, biases everywhere), final LayerNorm, LM head tied to the token embedding,
mean cross-entropy. Step: B micro-batches of b sequences (gradient accumulation), global-norm clipping at 1.0,
AdamW (lr 1e-3, betas 0.9/0.95, eps 1e-8, weight decay 0.1 on 2-D weights only), as e2e/optim/adamw.hpp.
Precision: fp32 parameters and AdamW state with bf16 autocast (PyTorch's usual mixed precision; zeropp keeps
fp32 master weights beside bf16 copies). Attention: F.scaled_dot_product_attention (PyTorch's default path,
fused/flash) or, with --attention math, the explicit softmax(QK^T)V that zeropp's backend runs.

Reports, for eager and torch.compile: step time (median over --steps after --warmup), tokens/s, model TFLOP/s,
MFU against --peak (989e12: H100 SXM dense bf16), peak memory (torch.cuda.max_memory_allocated). Model FLOPs per
step (no recompute), DESIGN.md section 4: B * (L * 3 * (24 b s h^2 + 4 b s^2 h) + 3 * 2 b s h V).

Exits 0 with a message where PyTorch or a CUDA GPU is absent.
Usage: python3 e2e/compare_torch.py [--layers 24 --hidden 2048 --heads 16 --seq 2048 --vocab 50257]
                                    [--micro-batch 1 --micro-batches 8] [--modes eager,compile] [--json OUT]
"""
import argparse
import json
import math
import statistics
import sys
import time


def model_flops_per_step(L, h, s, V, b, B):
    layer = 3 * (24 * b * s * h * h + 4 * b * s * s * h)
    head = 3 * 2 * b * s * h * V
    return B * (L * layer + head)


def build(torch, args):
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self, h, heads):
            super().__init__()
            self.heads = heads
            self.ln1 = nn.LayerNorm(h, eps=1e-5)
            self.qkv = nn.Linear(h, 3 * h)
            self.proj = nn.Linear(h, h)
            self.ln2 = nn.LayerNorm(h, eps=1e-5)
            self.fc = nn.Linear(h, 4 * h)
            self.fcproj = nn.Linear(4 * h, h)

        def attention(self, x):
            b, s, h = x.shape
            q, k, v = self.qkv(x).split(h, dim=2)
            q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
            if args.attention == "sdpa":
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                scores = (q @ k.transpose(-2, -1)) / math.sqrt(h // self.heads)
                mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
                y = scores.masked_fill(mask, float("-inf")).softmax(dim=-1) @ v
            return self.proj(y.transpose(1, 2).reshape(b, s, h))

        def forward(self, x):
            x = x + self.attention(self.ln1(x))
            return x + self.fcproj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(args.vocab, args.hidden)
            self.wpe = nn.Embedding(args.seq, args.hidden)
            self.blocks = nn.ModuleList(Block(args.hidden, args.heads) for _ in range(args.layers))
            self.lnf = nn.LayerNorm(args.hidden, eps=1e-5)
            self.apply(self.gpt2_init)

        @staticmethod
        def gpt2_init(m):
            # GPT-2's initialisation, as zeropp's trainer draws it (e2e/model/init.cpp): weights N(0, 0.02), the two
            # residual projections N(0, 0.02 / sqrt(2 L)), biases 0. PyTorch's defaults (N(0, 1) embeddings, tied to
            # the head) start the loss near 170 instead of ln V; the time per step does not depend on it.
            if isinstance(m, (nn.Linear, nn.Embedding)):
                residual = isinstance(m, nn.Linear) and m.out_features == args.hidden  # proj and fcproj
                std = 0.02 / math.sqrt(2 * args.layers) if residual else 0.02
                nn.init.normal_(m.weight, mean=0.0, std=std)
                if isinstance(m, nn.Linear) and m.bias is not None:
                    nn.init.zeros_(m.bias)

        def forward(self, tokens, targets):
            pos = torch.arange(tokens.shape[1], device=tokens.device)
            x = self.wte(tokens) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            logits = self.lnf(x) @ self.wte.weight.t()  # tied LM head
            return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))

    return GPT()


def measure(torch, args, mode):
    torch.manual_seed(args.seed)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    model = build(torch, args).cuda()
    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    fwd = torch.compile(model) if mode == "compile" else model
    gen = torch.Generator(device="cuda").manual_seed(args.seed)

    def step():
        for _ in range(args.micro_batches):
            data = torch.randint(0, args.vocab, (args.micro_batch, args.seq + 1), device="cuda", generator=gen)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = fwd(data[:, :-1], data[:, 1:]) / args.micro_batches
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(args.steps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        loss = step()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3)
    t = statistics.median(times)
    tokens = args.micro_batch * args.micro_batches * args.seq
    flops = model_flops_per_step(args.layers, args.hidden, args.seq, args.vocab, args.micro_batch, args.micro_batches)
    result = {
        "mode": mode,
        "step_seconds_median": t,
        "step_seconds": times,
        "tokens_per_second": tokens / t,
        "model_flops_per_step": flops,
        "model_tflops_per_second": flops / t / 1e12,
        "mfu": flops / t / args.peak,
        "peak_memory_bytes": torch.cuda.max_memory_allocated(),
        "last_loss": float(loss.item()) * args.micro_batches,
    }
    del model, opt, fwd
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--micro-batch", type=int, default=1, help="b")
    ap.add_argument("--micro-batches", type=int, default=8, help="B (gradient accumulation steps)")
    ap.add_argument("--attention", choices=("sdpa", "math"), default="sdpa")
    ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--peak", type=float, default=989e12, help="dense bf16 peak FLOP/s (H100 SXM: 989e12)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("compare_torch: PyTorch is not installed; nothing measured")
        return 0
    if not torch.cuda.is_available():
        print("compare_torch: no CUDA GPU visible to PyTorch; nothing measured")
        return 0
    results = []
    for mode in [m for m in args.modes.split(",") if m]:
        if mode not in ("eager", "compile"):
            print(f"compare_torch: unknown mode {mode!r} (eager, compile)", file=sys.stderr)
            return 2
        r = measure(torch, args, mode)
        results.append(r)
        print(f"{mode:8s} step {r['step_seconds_median'] * 1e3:9.1f} ms  {r['tokens_per_second']:10.0f} tokens/s  "
              f"{r['model_tflops_per_second']:6.1f} TFLOP/s  MFU {100 * r['mfu']:5.1f}%  "
              f"peak {r['peak_memory_bytes'] / 2**30:6.2f} GiB")
    if args.json:
        doc = {"schema": 1, "tool": "e2e/compare_torch.py", "torch": torch.__version__,
               "device": torch.cuda.get_device_name(), "config": vars(args), "results": results,
               "time_unix": time.time()}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
