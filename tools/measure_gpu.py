"""Measure one GPU's inference and MoE ceilings for the book's models (the project's own script).

Complements data/measurements/h200-2026-11-29/ (made by its measure.py: GEMMs, HBM, attention,
dense training steps) with what the inference and MoE models need:

- ``grouped_gemm.csv``: expert GEMMs as a batched product (balanced routing), forward, by expert
  count, tokens per expert and FFN size: the efficiency of small expert matrices.
- ``moe_layer.csv``: one MoE MLP layer, forward + backward, batched experts vs a per-expert loop.
- ``decode_attention.csv``: single-token attention against a KV cache (GQA), by batch and context:
  the memory-bound attention of decode.
- ``decode_step.csv``: whole decode steps of a Llama-3-8B-shaped model (random weights, BF16,
  CUDA-graph replay), by batch size, with a KV cache of the given context.
- ``prefill.csv``: prefill of the same model by prompt length (time to first token).
- ``moe_decode_step.csv``: whole decode steps of a Qwen3-30B-A3B-shaped MoE (random weights,
  BF16, learned-router top-8 of 128 experts through ``torch._grouped_mm``, CUDA-graph replay).
- ``env.txt``: versions and device.

Usage (on a machine with a CUDA GPU):  OUT=/some/dir python tools/measure_gpu.py [--quick] [--moe-only]
Each figure is the mean of repeated runs after warm-up, timed with CUDA events. Random data.
"""

from __future__ import annotations

import csv
import math
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", "/tmp/out")
QUICK = "--quick" in sys.argv
DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")
DT = torch.bfloat16 if DEV.type == "cuda" else torch.float32
os.makedirs(OUT, exist_ok=True)


def sync():
    if DEV.type == "cuda":
        torch.cuda.synchronize()


def bench(fn, min_ms: float = 40.0, warmup: int = 3) -> float:
    """Mean seconds per call of ``fn`` (CUDA events on GPU, perf_counter on CPU)."""
    for _ in range(warmup):
        fn()
    sync()
    if DEV.type != "cuda":
        t0 = time.perf_counter(); fn(); return time.perf_counter() - t0
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); fn(); e.record(); sync()
    one = max(s.elapsed_time(e), 1e-3)
    n = max(3, min(100, int(min_ms / one)))
    s.record()
    for _ in range(n):
        fn()
    e.record(); sync()
    return s.elapsed_time(e) / n / 1e3


def write(name, rows):
    if not rows:
        return
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader(); w.writerows(rows)
    print(f"wrote {name}: {len(rows)} rows", flush=True)


def env():
    with open(os.path.join(OUT, "env.txt"), "w") as f:
        f.write(f"torch {torch.__version__} cuda {torch.version.cuda}\n")
        if DEV.type == "cuda":
            p = torch.cuda.get_device_properties(0)
            f.write(f"device {p.name} sms {p.multi_processor_count} mem_bytes {p.total_memory}\n")
            try:
                f.write(subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,power.limit,clocks.max.sm",
                                        "--format=csv"], capture_output=True, text=True).stdout)
            except OSError:
                pass


def grouped_gemm():
    """Expert FFN GEMMs as bmm: E experts, t tokens each, (t, d) x (d, f)."""
    rows = []
    d = 4096 if not QUICK else 256
    for f_ in ((512, 1024, 2048, 4096, 8192) if not QUICK else (128,)):
        for t in ((64, 256, 1024, 4096) if not QUICK else (32,)):
            e = max(1, min(64, int(2**28 // (t * d))) if not QUICK else 4)
            x = torch.randn(e, t, d, device=DEV, dtype=DT)
            w = torch.randn(e, d, f_, device=DEV, dtype=DT) * 0.02
            sec = bench(lambda: torch.bmm(x, w))
            flop = 2.0 * e * t * d * f_
            byts = 2.0 * (e * t * d + e * d * f_ + e * t * f_)
            rows.append(dict(experts=e, tokens_per_expert=t, d_model=d, expert_ffn=f_, seconds=sec,
                             tflops=flop / sec / 1e12, gbytes_per_s=byts / sec / 1e9))
            del x, w
    write("grouped_gemm.csv", rows)


def moe_layer():
    """One MoE MLP (SwiGLU experts, top-k routing, balanced), forward+backward; batched vs loop."""
    rows = []
    cfgs = [(2048, 1408, 64, 8, 16384), (4096, 2048, 64, 8, 16384), (4096, 8192, 8, 2, 16384), (7168, 2048, 256, 8, 16384)]
    if QUICK:
        cfgs = [(128, 64, 8, 2, 256)]
    for d, f_, e, k, tokens in cfgs:
        tpe = tokens * k // e
        wg = (torch.randn(e, d, f_, device=DEV, dtype=DT) * 0.02).requires_grad_()
        wu = (torch.randn(e, d, f_, device=DEV, dtype=DT) * 0.02).requires_grad_()
        wd = (torch.randn(e, f_, d, device=DEV, dtype=DT) * 0.02).requires_grad_()
        router = (torch.randn(d, e, device=DEV, dtype=DT) * 0.02).requires_grad_()
        x = torch.randn(tokens, d, device=DEV, dtype=DT, requires_grad=True)

        def batched():
            logits = x @ router
            top = torch.topk(logits, k, dim=-1)
            # balanced dispatch: a fixed permutation standing in for the all-to-all / sort
            idx = torch.arange(tokens * k, device=DEV) % tokens
            xe = x[idx].view(e, tpe, d)
            h = F.silu(torch.bmm(xe, wg)) * torch.bmm(xe, wu)
            y = torch.bmm(h, wd).view(tokens * k, d)
            out = torch.zeros_like(x).index_add_(0, idx, y) * top.values.mean()
            out.float().sum().backward()

        def looped():
            logits = x @ router
            top = torch.topk(logits, k, dim=-1)
            idx = torch.arange(tokens * k, device=DEV) % tokens
            xs = x[idx].view(e, tpe, d)
            ys = [(F.silu(xs[i] @ wg[i]) * (xs[i] @ wu[i])) @ wd[i] for i in range(e)]
            out = torch.zeros_like(x).index_add_(0, idx, torch.cat(ys)) * top.values.mean()
            out.float().sum().backward()

        flop = 3 * (2.0 * tokens * k * d * f_ * 3 + 2.0 * tokens * d * e)  # fwd + 2x bwd
        for name, fn in (("batched", batched), ("loop", looped)):
            sec = bench(fn, min_ms=60)
            rows.append(dict(impl=name, d_model=d, expert_ffn=f_, experts=e, top_k=k, tokens=tokens,
                             seconds=sec, model_tflops=flop / sec / 1e12))
        del wg, wu, wd, router, x
        if DEV.type == "cuda":
            torch.cuda.empty_cache()
    write("moe_layer.csv", rows)


def decode_attention():
    """q: (B, 32, 1, 128) against K/V: (B, 8, L, 128), GQA; bytes = K + V read once."""
    rows = []
    hq, hkv, hd = 32, 8, 128
    grid = [(b, L) for b in (8, 32, 128) for L in (1024, 4096, 16384)] if not QUICK else [(2, 64)]
    for b, L in grid:
        if b * L * hkv * hd * 2 * 2 > 40e9:
            continue
        q = torch.randn(b, hq, 1, hd, device=DEV, dtype=DT)
        kk = torch.randn(b, hkv, L, hd, device=DEV, dtype=DT)
        vv = torch.randn(b, hkv, L, hd, device=DEV, dtype=DT)
        sec = bench(lambda: F.scaled_dot_product_attention(q, kk, vv, enable_gqa=True))
        kv_bytes = 2.0 * b * hkv * L * hd * kk.element_size()
        rows.append(dict(batch=b, context=L, q_heads=hq, kv_heads=hkv, head_dim=hd, seconds=sec,
                         kv_gbytes_per_s=kv_bytes / sec / 1e9))
        del q, kk, vv
    write("decode_attention.csv", rows)


class Model:
    """A Llama-3-8B-shaped decoder (random weights): 32 layers, d 4096, GQA 32/8, SwiGLU 14336."""

    def __init__(self, layers=32, d=4096, hq=32, hkv=8, ffn=14336, vocab=128256):
        if QUICK:
            layers, d, hq, hkv, ffn, vocab = 2, 256, 4, 2, 512, 1000
        self.layers, self.d, self.hq, self.hkv, self.hd, self.ffn, self.vocab = layers, d, hq, hkv, d // hq, ffn, vocab
        mk = lambda *s: torch.randn(*s, device=DEV, dtype=DT) * 0.02
        self.w = [dict(qkv=mk(d, (hq + 2 * hkv) * self.hd), o=mk(hq * self.hd, d), gu=mk(d, 2 * ffn), dn=mk(ffn, d))
                  for _ in range(layers)]
        self.head = mk(d, vocab)

    def params(self):
        per = sum(v.numel() for v in self.w[0].values())
        return per * self.layers + self.head.numel() + self.vocab * self.d

    def layer(self, x, w, k_cache=None, v_cache=None, causal=False):
        b, s, _ = x.shape
        h = F.rms_norm(x, (self.d,))
        qkv = h @ w["qkv"]
        q, k, v = qkv.split([self.hq * self.hd, self.hkv * self.hd, self.hkv * self.hd], dim=-1)
        q = q.view(b, s, self.hq, self.hd).transpose(1, 2)
        k = k.view(b, s, self.hkv, self.hd).transpose(1, 2)
        v = v.view(b, s, self.hkv, self.hd).transpose(1, 2)
        if k_cache is not None:  # decode: write the new token into the last slot, attend to all
            k_cache[:, :, -1:] = k
            v_cache[:, :, -1:] = v
            k, v = k_cache, v_cache
        a = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        x = x + a.transpose(1, 2).reshape(b, s, -1) @ w["o"]
        h = F.rms_norm(x, (self.d,))
        g, u = (h @ w["gu"]).chunk(2, dim=-1)
        return x + (F.silu(g) * u) @ w["dn"]


def decode_step():
    rows = []
    torch.manual_seed(0)
    m = Model()
    ctx = 2048 if not QUICK else 32
    for b in ((1, 8, 32, 64, 128, 256) if not QUICK else (1, 2)):
        kc = [torch.zeros(b, m.hkv, ctx, m.hd, device=DEV, dtype=DT) for _ in range(m.layers)]
        vc = [torch.zeros(b, m.hkv, ctx, m.hd, device=DEV, dtype=DT) for _ in range(m.layers)]
        x = torch.randn(b, 1, m.d, device=DEV, dtype=DT)

        def step():
            h = x
            for i, w in enumerate(m.w):
                h = m.layer(h, w, kc[i], vc[i])
            return F.rms_norm(h, (m.d,)) @ m.head

        fn = step
        if DEV.type == "cuda":
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(2):
                    step()
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                step()
            fn = g.replay
        sec = bench(fn, min_ms=80)
        weight_bytes = m.params() * 2.0
        kv_bytes = 2.0 * b * m.layers * m.hkv * ctx * m.hd * 2
        rows.append(dict(model="llama3-8b-shape", batch=b, context=ctx, seconds=sec, tokens_per_s=b / sec,
                         weight_bytes=weight_bytes, kv_bytes=kv_bytes,
                         effective_gbytes_per_s=(weight_bytes + kv_bytes) / sec / 1e9))
        del kc, vc
        if DEV.type == "cuda":
            torch.cuda.empty_cache()
    write("decode_step.csv", rows)
    return m


def prefill(m):
    rows = []
    for s_len in ((512, 2048, 8192) if not QUICK else (16,)):
        x = torch.randn(1, s_len, m.d, device=DEV, dtype=DT)

        def run():
            h = x
            for w in m.w:
                h = m.layer(h, w, causal=True)
            return F.rms_norm(h[:, -1:], (m.d,)) @ m.head

        with torch.no_grad():
            sec = bench(run, min_ms=60)
        flop = 2.0 * (m.params() - m.vocab * m.d - m.head.numel()) * s_len + 2.0 * m.d * m.vocab \
            + m.layers * 2.0 * 2 * s_len * s_len * m.hq * m.hd / 2
        rows.append(dict(model="llama3-8b-shape", prompt_tokens=s_len, seconds=sec, tflops=flop / sec / 1e12))
    write("prefill.csv", rows)


class MoEModel:
    """A Qwen3-30B-A3B-shaped MoE decoder (random weights): 48 layers, d 2048, GQA 32/4 x 128,
    128 experts top-8 of width 768, vocab 151,936 (Qwen3 technical report, Table 1)."""

    def __init__(self, layers=48, d=2048, hq=32, hkv=4, hd=128, experts=128, top_k=8, ffn=768, vocab=151936):
        if QUICK:
            layers, d, hq, hkv, hd, experts, top_k, ffn, vocab = 2, 64, 4, 2, 16, 8, 2, 32, 1000
        self.layers, self.d, self.hq, self.hkv, self.hd = layers, d, hq, hkv, hd
        self.e, self.k, self.ffn, self.vocab = experts, top_k, ffn, vocab
        mk = lambda *s: torch.randn(*s, device=DEV, dtype=DT) * 0.02
        self.w = [dict(qkv=mk(d, (hq + 2 * hkv) * hd), o=mk(hq * hd, d), router=mk(d, experts),
                       gu=mk(experts, d, 2 * ffn), dn=mk(experts, ffn, d)) for _ in range(layers)]
        self.head = mk(d, vocab)

    def params(self):
        per = sum(v.numel() for v in self.w[0].values())
        return per * self.layers + 2 * self.head.numel()

    def active_params(self):
        w = self.w[0]
        per = w["qkv"].numel() + w["o"].numel() + w["router"].numel() + self.k * 3 * self.d * self.ffn
        return per * self.layers + 2 * self.head.numel()

    def moe(self, h, w):
        b = h.shape[0]
        logits = h @ w["router"]
        top = torch.topk(logits.float(), self.k, dim=-1)
        gates = torch.softmax(top.values, dim=-1).to(h.dtype).flatten()
        flat = top.indices.flatten()
        order = torch.argsort(flat)
        src = order // self.k
        counts = torch.zeros(self.e, device=h.device, dtype=torch.int32).scatter_add_(
            0, flat.int(), torch.ones_like(flat, dtype=torch.int32))
        offs = torch.cumsum(counts, 0).int()
        xs = h[src]
        gu = torch._grouped_mm(xs, w["gu"], offs=offs)
        g, u = gu.chunk(2, dim=-1)
        y = torch._grouped_mm((F.silu(g) * u).contiguous(), w["dn"], offs=offs) * gates[order].unsqueeze(-1)
        return torch.zeros_like(h).index_add_(0, src, y)

    def layer(self, x, w, k_cache, v_cache):
        b = x.shape[0]
        h = F.rms_norm(x, (self.d,))
        q, k, v = (h @ w["qkv"]).split([self.hq * self.hd, self.hkv * self.hd, self.hkv * self.hd], dim=-1)
        q = q.view(b, 1, self.hq, self.hd).transpose(1, 2)
        k_cache[:, :, -1:] = k.view(b, 1, self.hkv, self.hd).transpose(1, 2)
        v_cache[:, :, -1:] = v.view(b, 1, self.hkv, self.hd).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k_cache, v_cache, enable_gqa=True)
        x = x + a.transpose(1, 2).reshape(b, -1) @ w["o"]
        return x + self.moe(F.rms_norm(x, (self.d,)), w)


def moe_decode_step():
    rows = []
    torch.manual_seed(0)
    m = MoEModel()
    ctx = 1024 if not QUICK else 16
    for b in ((1, 8, 32, 128, 256, 512) if not QUICK else (1, 4)):
        try:
            rows.append(_moe_decode_one(m, b, ctx))
        except torch.OutOfMemoryError as ex:  # keep the rows measured so far
            print(f"moe decode batch {b}: out of memory ({str(ex)[:80]})", flush=True)
        if DEV.type == "cuda":
            torch.cuda.empty_cache()
    write("moe_decode_step.csv", rows)


def _moe_decode_one(m, b, ctx):
    if True:
        kc = [torch.zeros(b, m.hkv, ctx, m.hd, device=DEV, dtype=DT) for _ in range(m.layers)]
        vc = [torch.zeros(b, m.hkv, ctx, m.hd, device=DEV, dtype=DT) for _ in range(m.layers)]
        x = torch.randn(b, m.d, device=DEV, dtype=DT)

        def step():
            h = x
            for i, w in enumerate(m.w):
                h = m.layer(h, w, kc[i], vc[i])
            return F.rms_norm(h, (m.d,)) @ m.head

        fn, graphed = step, False
        if DEV.type == "cuda":
            try:
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):
                    for _ in range(2):
                        step()
                torch.cuda.current_stream().wait_stream(s)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    step()
                fn, graphed = g.replay, True
            except Exception as ex:  # noqa: BLE001 - record eager timing instead
                print("moe graph capture failed:", repr(ex)[:200], flush=True)
        sec = bench(fn, min_ms=80)
        return dict(model="qwen3-30b-a3b-shape", batch=b, context=ctx, seconds=sec, tokens_per_s=b / sec,
                    total_params=m.params(), active_params=m.active_params(), cuda_graph=graphed,
                    kv_bytes=2.0 * b * m.layers * m.hkv * ctx * m.hd * 2)


if __name__ == "__main__":
    t0 = time.time()
    env()
    if "--moe-only" in sys.argv:
        with torch.no_grad():
            moe_decode_step()
        print(f"done in {time.time() - t0:.0f} s", flush=True)
        sys.exit(0)
    with torch.no_grad():
        grouped_gemm()
        decode_attention()
    moe_layer()
    with torch.no_grad():
        model = decode_step()
        prefill(model)
        del model
        moe_decode_step()
    print(f"done in {time.time() - t0:.0f} s", flush=True)
