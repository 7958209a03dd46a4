"""Benchmark of the training search: configurations evaluated per second (one core) and the time
of the full search for the 10T-parameter MoE target on each accelerator.

Run: ``python benchmarks/bench_training.py`` (set OMP_NUM_THREADS=1 etc. for one core; done below).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402

from intelligence_per_dollar.model import architecture, training  # noqa: E402
from intelligence_per_dollar.sources import workloads  # noqa: E402

WORKLOAD = workloads.training()
TARGET = architecture.from_total_active(WORKLOAD.total_params, 1e12)
ACCELERATORS = (("GB200", "fp4"), ("GB300", "fp4"), ("VR200", "fp4"), ("H100-SXM", "fp8"))


def configs_per_second(accelerator="GB200", precision="fp4", gpus=72 * 512, repeats=3) -> tuple[float, int]:
    ctx = training.make_context(TARGET, accelerator, precision, WORKLOAD.seq_len, training.GLOBAL_BATCH_TOKENS["central"],
                                None, "central", False)
    c = training.candidates(ctx, gpus)
    n = len(c["tp"])
    training.evaluate(ctx, c)  # warm caches
    t0 = time.perf_counter()
    for _ in range(repeats):
        training.evaluate(ctx, c)
    dt = (time.perf_counter() - t0) / repeats
    return n / dt, n


def widget_ms(repeats=50) -> dict[str, float]:
    """Explore-panel compute per change after warm-up: the memoised exact search (the chapter's
    settings) and the batch-limited curve reading (other settings)."""
    from intelligence_per_dollar.views import widgets_training as wt

    out = {}
    training.deadline(wt._model(5e11), "VR200", "fp4", days=30.0)                     # exact, memoised
    wt.curves(5e11, "fp4", accelerators=("VR200",))
    for label, days in (("exact search", 30), ("curve reading", 45)):
        wt.compute(5e11, "fp4", "VR200", days, accelerators=("VR200",))
        t0 = time.perf_counter()
        for _ in range(repeats):
            wt.compute(5e11, "fp4", "VR200", days, accelerators=("VR200",))
        out[label] = (time.perf_counter() - t0) / repeats * 1e3
    return out


def main() -> None:
    rate, n = configs_per_second()
    print(f"evaluate(): {n} candidate configurations, {rate:,.0f} configurations/s on one core "
          f"(target >= 150,000; Calculon ~150-185/s)")
    print("explore panel compute per change (target < 20 ms): "
          + ", ".join(f"{k} {v:.2f} ms" for k, v in widget_ms().items()))
    print(f"global batch (central): {training.GLOBAL_BATCH_TOKENS['central'] / 1e6:.0f} M tokens")
    print(f"{WORKLOAD.total_params / 1e12:g}T-total / {architecture.active_params(TARGET) / 1e12:.2f}T-active MoE, "
          f"{WORKLOAD.tokens / 1e12:g}T tokens, {WORKLOAD.days:g} days, seq {WORKLOAD.seq_len}:")
    for regime in training.REGIMES:
        print(f" {regime} regime:")
        for accelerator, prec in ACCELERATORS:
            t0 = time.perf_counter()
            d = training.deadline(TARGET, accelerator, prec, regime=regime)
            dt = time.perf_counter() - t0
            if d.feasible:
                e = d.estimate
                print(f"  {accelerator:9s} {prec}: {d.gpus:>8,d} GPUs ({d.racks} domains), MFU {e.mfu:.3f}, "
                      f"step {e.step_time_s:.1f} s, {e.parallelism}  search {dt:.2f} s")
            else:
                print(f"  {accelerator:9s} {prec}: {d.message}  search {dt:.2f} s")


if __name__ == "__main__":
    main()
