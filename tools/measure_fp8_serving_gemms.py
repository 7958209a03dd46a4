"""Measure FP8 GEMM rates at two serving shapes the model is least sure of (issue 12 leads 1 and 2).

1. ``moe_fp8.csv``: Mixtral 8x7B's expert GEMMs in FP8 (E4M3, BF16 output) on one GPU, as MLPerf's prefill-heavy
   mix feeds them: ``tokens`` tokens per iteration, top-2 of 8 experts, so ``rows = tokens x 2 / 8`` rows per expert
   (balanced). Each expert runs FC1 (gate and up, 4,096 -> 2 x 14,336) and FC2 (14,336 -> 4,096). Two ways:
   ``loop`` (eight ``torch._scaled_mm`` calls per GEMM, tensor-wise scales, replayed as one CUDA graph) and
   ``grouped`` (one ``torch._scaled_grouped_mm`` per GEMM, row-wise scales), where the installed PyTorch has it.
2. ``dense_fp8.csv``: the four GEMMs of one Llama 3.1 405B layer per GPU at tensor parallelism 8 (QKV 16,384 ->
   2,304, attention output 2,048 -> 16,384, gate/up 16,384 -> 13,312, down 6,656 -> 16,384) for a prefill piece of
   ``m`` rows (MLPerf's 405B Server runs 2,560-token pieces on Hopper), ``torch._scaled_mm``, CUDA-graph replay.
3. ``sustained_fp8.csv``: two of those GEMMs replayed back to back for ``SUSTAIN_S`` seconds (default 6), the rate
   of the last fifth against the short burst, and the SM clock, power and temperature read right after.

Each figure is the mean over CUDA-graph replays after warm-up, timed with CUDA events; random data; FLOPs are
``2 m n k``. Usage on a CUDA machine: ``OUT=/some/dir python3 tools/measure_fp8_serving_gemms.py``.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time

import torch

OUT = os.environ.get("OUT", "/tmp/out")
os.makedirs(OUT, exist_ok=True)
DEV = torch.device("cuda")
FP8 = torch.float8_e4m3fn
T0 = time.time()


def graph_time_s(fn, min_s: float = 0.05) -> float:
    """Mean seconds of ``fn`` replayed as a CUDA graph (warm-up outside the capture)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    g.replay(); torch.cuda.synchronize()
    a.record(); g.replay(); b.record(); torch.cuda.synchronize()
    one = max(a.elapsed_time(b) / 1e3, 1e-6)
    n = max(5, min(400, int(min_s / one)))
    a.record()
    for _ in range(n):
        g.replay()
    b.record(); torch.cuda.synchronize()
    return a.elapsed_time(b) / 1e3 / n


def fp8(shape, scale=0.05):
    return (torch.randn(*shape, device=DEV) * scale).to(FP8)


ONE = torch.ones((), device=DEV, dtype=torch.float32)


def scaled_mm(a, w_t):
    """``a`` [m, k] row-major FP8 times ``w_t`` [k, n] column-major FP8 (a weight [n, k] transposed)."""
    return torch._scaled_mm(a, w_t, scale_a=ONE, scale_b=ONE, out_dtype=torch.bfloat16)


def moe(rows_list, experts=8, d=4096, f=14336):
    recs = []
    w1 = [fp8((2 * f, d)) for _ in range(experts)]        # gate + up, [n, k]
    w2 = [fp8((d, f)) for _ in range(experts)]            # down
    have_grouped = hasattr(torch, "_scaled_grouped_mm")
    if have_grouped:
        w1g = torch.stack(w1)                              # [E, 2f, d]
        w2g = torch.stack(w2)                              # [E, d, f]
    for rows in rows_list:
        x1 = [fp8((rows, d)) for _ in range(experts)]
        x2 = [fp8((rows, f)) for _ in range(experts)]
        for name, xs, ws, n, k in (("fc1", x1, w1, 2 * f, d), ("fc2", x2, w2, d, f)):
            flops = 2.0 * rows * n * k * experts
            t = graph_time_s(lambda: [scaled_mm(x, w.t()) for x, w in zip(xs, ws)])
            recs.append({"gemm": name, "method": "loop", "experts": experts, "rows_per_expert": rows, "n": n, "k": k,
                         "seconds": t, "tflops": flops / t / 1e12, "note": ""})
            if have_grouped:
                a = torch.cat(xs)                          # [E rows, k]
                wg = (w1g if name == "fc1" else w2g).transpose(-2, -1)   # [E, k, n] column-major
                offs = torch.arange(1, experts + 1, device=DEV, dtype=torch.int32) * rows
                sa = torch.ones(a.shape[0], device=DEV, dtype=torch.float32)
                sb = torch.ones(experts, n, device=DEV, dtype=torch.float32)
                try:
                    t = graph_time_s(lambda: torch._scaled_grouped_mm(a, wg, sa, sb, offs=offs,
                                                                      out_dtype=torch.bfloat16))
                    recs.append({"gemm": name, "method": "grouped", "experts": experts, "rows_per_expert": rows,
                                 "n": n, "k": k, "seconds": t, "tflops": flops / t / 1e12, "note": ""})
                except Exception as exc:                    # noqa: BLE001 - recorded, not hidden
                    recs.append({"gemm": name, "method": "grouped", "experts": experts, "rows_per_expert": rows,
                                 "n": n, "k": k, "seconds": "", "tflops": "", "note": repr(exc)[:200]})
        print(f"[{time.time() - T0:5.1f}s] moe rows {rows}: " + ", ".join(
            f"{r['gemm']}/{r['method']} {r['tflops'] if r['tflops'] == '' else round(r['tflops'])}"
            for r in recs if r["rows_per_expert"] == rows), flush=True)
    return recs


def dense(ms):
    shapes = {"qkv": (2304, 16384), "attn_out": (16384, 2048), "gate_up": (13312, 16384), "down": (16384, 6656)}
    ws = {k: fp8(v) for k, v in shapes.items()}
    recs = []
    for m in ms:
        xs = {k: fp8((m, v[1])) for k, v in shapes.items()}
        total_flops, total_s = 0.0, 0.0
        for k, (n, kk) in shapes.items():
            t = graph_time_s(lambda: scaled_mm(xs[k], ws[k].t()))
            f = 2.0 * m * n * kk
            total_flops, total_s = total_flops + f, total_s + t
            recs.append({"gemm": k, "m": m, "n": n, "k": kk, "seconds": t, "tflops": f / t / 1e12})
        t = graph_time_s(lambda: [scaled_mm(xs[k], ws[k].t()) for k in shapes])
        recs.append({"gemm": "layer", "m": m, "n": "", "k": "", "seconds": t, "tflops": total_flops / t / 1e12})
        print(f"[{time.time() - T0:5.1f}s] dense m {m}: " + ", ".join(
            f"{r['gemm']} {round(r['tflops'])}" for r in recs if r["m"] == m), flush=True)
    return recs


def sustained(seconds: float = 6.0):
    """Rate over ``seconds`` of back-to-back replays (the board's power limit and clocks settle), for the 405B
    gate/up GEMM at m = 2,560 and Mixtral's grouped FC1 at 2,048 rows per expert, with the SM clock and power
    nvidia-smi reads right after."""
    recs = []
    d, f, e, rows = 4096, 14336, 8, 2048
    x, w = fp8((2560, 16384)), fp8((13312, 16384))
    xs, ws = [fp8((rows, d)) for _ in range(e)], [fp8((2 * f, d)) for _ in range(e)]
    cases = {"dense_gate_up_m2560": (lambda: scaled_mm(x, w.t()), 2.0 * 2560 * 13312 * 16384),
             "moe_fc1_loop_rows2048": (lambda: [scaled_mm(a, b.t()) for a, b in zip(xs, ws)],
                                       2.0 * rows * 2 * f * d * e)}
    for name, (fn, flops) in cases.items():
        one = graph_time_s(fn)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        n = max(10, int(seconds / one))
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        tail = max(5, n // 5)
        for _ in range(n - tail):
            g.replay()
        a.record()
        for _ in range(tail):
            g.replay()
        b.record(); torch.cuda.synchronize()
        t = a.elapsed_time(b) / 1e3 / tail
        smi = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
        recs.append({"case": name, "short_tflops": flops / one / 1e12, "sustained_tflops": flops / t / 1e12,
                     "seconds_run": n * one, "after_run_sm_clock_power_temp": smi})
        print(f"[{time.time() - T0:5.1f}s] sustained {name}: {recs[-1]}", flush=True)
    return recs


def write(name, recs):
    if not recs:
        return
    with open(os.path.join(OUT, name), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(recs[0]))
        w.writeheader()
        w.writerows(recs)


def main():
    with open(os.path.join(OUT, "env.txt"), "w") as fh:
        fh.write(f"torch {torch.__version__} cuda {torch.version.cuda}\n{torch.cuda.get_device_name()}\n"
                 f"scaled_grouped_mm {hasattr(torch, '_scaled_grouped_mm')}\n")
        try:
            fh.write(subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,power.limit,clocks.max.sm",
                                     "--format=csv"], capture_output=True, text=True, timeout=20).stdout)
        except Exception as exc:                            # noqa: BLE001
            fh.write(f"nvidia-smi: {exc!r}\n")
    torch.manual_seed(0)
    write("dense_fp8.csv", dense([512, 1024, 2560, 4096, 8192]))
    write("moe_fp8.csv", moe([128, 256, 512, 1024, 2048, 4096]))
    write("sustained_fp8.csv", sustained(float(os.environ.get("SUSTAIN_S", "6"))))
    print(f"done in {time.time() - T0:.1f}s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
