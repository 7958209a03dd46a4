"""Kernel-level profile of the measured decode steps (tools/measure_gpu.py models) on a CUDA GPU.

Writes $OUT/profile_kernels.csv (per config and kernel name: launches per step, GPU us per step) and
$OUT/profile_summary.csv (wall time per step under CUDA-graph replay, kernels per step, sum of kernel
durations, idle gaps), plus a graph-replayed chain of tiny kernels (the per-kernel floor).
Usage: OUT=/dir python tools/profile_moe_decode.py   (H200 run of 2026-11-30: data/measurements/h200-2026-11-30-profile/)
"""
import csv, os, sys, time
import torch
import torch.nn.functional as F
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import measure_gpu as mg  # noqa: E402
from torch.profiler import profile, ProfilerActivity  # noqa: E402

OUT = os.environ.get("OUT", "/tmp/out")
DEV = torch.device("cuda")
T0 = time.time()
summ, kern = [], []


def graph_of(fn):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g


def prof(cfg, fn, reps=3):
    wall = mg.bench(fn, min_ms=60)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    ev = [e for e in p.events() if str(getattr(e, "device_type", "")).endswith("CUDA")]
    ev.sort(key=lambda e: e.time_range.start)
    busy = sum(e.time_range.end - e.time_range.start for e in ev) / reps
    span = (ev[-1].time_range.end - ev[0].time_range.start) / reps if ev else float("nan")
    agg = {}
    for e in ev:
        a = agg.setdefault(e.name[:140], [0, 0.0])
        a[0] += 1; a[1] += e.time_range.end - e.time_range.start
    for n, (c, t) in sorted(agg.items(), key=lambda x: -x[1][1]):
        kern.append(dict(cfg=cfg, kernel=n, per_step=c / reps, us_per_step=t / reps))
    summ.append(dict(cfg=cfg, wall_ms=wall * 1e3, kernels_per_step=len(ev) / reps, busy_ms=busy / 1e3,
                     span_ms=span / 1e3))
    print(summ[-1], f"t={time.time() - T0:.0f}s", flush=True)


def write():
    for name, rows in (("profile_summary.csv", summ), ("profile_kernels.csv", kern)):
        if rows:
            with open(os.path.join(OUT, name), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0])); w.writeheader(); w.writerows(rows)


with torch.no_grad():
    # 1. the floor: a graph of N dependent tiny kernels
    for n_el in (1, 65536):
        x = torch.zeros(n_el, device=DEV, dtype=torch.bfloat16)
        def chain():
            y = x
            for _ in range(1000):
                y = y + 1
            return y
        g = graph_of(chain)
        sec = mg.bench(g.replay, min_ms=60)
        summ.append(dict(cfg=f"chain1000-add-{n_el}", wall_ms=sec * 1e3, kernels_per_step=1000, busy_ms=float("nan"),
                         span_ms=float("nan")))
        print(summ[-1], flush=True)
    write()
    # 2. dense Llama-8B shape decode
    m = mg.Model()
    for b in (1, 64):
        ctx = 2048
        kc = [torch.zeros(b, m.hkv, ctx, m.hd, device=DEV, dtype=mg.DT) for _ in range(m.layers)]
        vc = [torch.zeros(b, m.hkv, ctx, m.hd, device=DEV, dtype=mg.DT) for _ in range(m.layers)]
        x = torch.randn(b, 1, m.d, device=DEV, dtype=mg.DT)
        def step():
            h = x
            for i, w in enumerate(m.w):
                h = m.layer(h, w, kc[i], vc[i])
            return F.rms_norm(h, (m.d,)) @ m.head
        prof(f"dense-b{b}", graph_of(step).replay)
        del kc, vc; torch.cuda.empty_cache()
    del m; torch.cuda.empty_cache(); write()
    # 3. MoE Qwen3-30B-A3B shape decode
    m = mg.MoEModel()
    for b in (1, 8, 32, 128, 512):
        ctx = 1024
        kc = [torch.zeros(b, m.hkv, ctx, m.hd, device=DEV, dtype=mg.DT) for _ in range(m.layers)]
        vc = [torch.zeros(b, m.hkv, ctx, m.hd, device=DEV, dtype=mg.DT) for _ in range(m.layers)]
        x = torch.randn(b, m.d, device=DEV, dtype=mg.DT)
        def step():
            h = x
            for i, w in enumerate(m.w):
                h = m.layer(h, w, kc[i], vc[i])
            return F.rms_norm(h, (m.d,)) @ m.head
        prof(f"moe-b{b}", graph_of(step).replay)
        del kc, vc; torch.cuda.empty_cache(); write()
print(f"done in {time.time() - T0:.0f} s")
