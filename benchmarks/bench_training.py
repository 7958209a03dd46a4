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
    settings) and a first visit to a setting read from the cached sweep of the panel's grid
    (a one-setting table stands in for the warmed grid, in a temporary cache directory)."""
    import tempfile

    from intelligence_per_dollar.analysis import sweeps
    from intelligence_per_dollar.analysis import training as at
    from intelligence_per_dollar.views import widgets_training as wt

    out = {}
    training.deadline(at.panel_model(wt.TOTAL_PARAMS, 5e11), "VR200", "fp4", days=30.0)   # exact, memoised
    t0 = time.perf_counter()
    for _ in range(repeats):
        wt.compute(5e11, "fp4", "VR200", 30, accelerators=("VR200",))
    out["exact search (memoised)"] = (time.perf_counter() - t0) / repeats * 1e3
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["IPD_SWEEP_CACHE"] = tmp
        spec = wt.grid_spec(accelerators=("VR200",))
        sweeps.store(spec, sweeps.draw(spec).assign(gpus=720, racks=10))
        wt._grid_table.cache_clear()
        t0 = time.perf_counter()
        wt.compute(5e11, "fp4", "VR200", 70, accelerators=("VR200",))
        out["first visit, cached grid"] = (time.perf_counter() - t0) * 1e3
        wt._grid_table.cache_clear()
        del os.environ["IPD_SWEEP_CACHE"]
    return out


def _bisection_racks(ctx, tokens: float, days: float, max_racks: int = 20000):
    """The search before issue 11, for comparison: doubling then bisection over racks, every GPU
    of each rack (or a 64-GPU block) in use, as if feasibility rose monotonically with racks."""
    from dataclasses import replace

    from intelligence_per_dollar.model.training import search

    def ok(racks):
        for per in training.JOB_BLOCK_GPUS.get(ctx.domain, (ctx.domain,)):
            c2 = replace(ctx, domain=per)
            i, c, r, n = search.choose(c2, racks * per, {})
            if i is not None and r["step_time_s"][i] <= days * 86400 * ctx.batch_seqs * ctx.seq_len / tokens:
                return True
        return False
    lo, hi = 0, 1
    while hi <= max_racks and not ok(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def search_speed(active: float = 5e11) -> None:
    """Time of one batch-limited deadline search on the 10T MoE: the old bisection (wrong answer)
    and the exact search (true minimum), for GB200 and VR200."""
    model = architecture.from_total_active(WORKLOAD.total_params, active)
    gbt = training.batch_tokens(WORKLOAD.seq_len, training.GLOBAL_BATCH_TOKENS["central"])
    for accelerator in ("GB200", "VR200"):
        ctx = training.make_context(model, accelerator, "fp4", WORKLOAD.seq_len, gbt, None, "central", False)
        t0 = time.perf_counter()
        old = _bisection_racks(ctx, WORKLOAD.tokens, WORKLOAD.days)
        t1 = time.perf_counter()
        d = training.gpus_for_deadline(model, accelerator, "fp4", global_batch_tokens=gbt)
        t2 = time.perf_counter()
        print(f"  {accelerator}: bisection {old} racks in {t1 - t0:.2f} s; exact {d.racks} racks "
              f"({d.gpus:,} GPUs, {d.gpus_in_use:,} in use, {d.estimate.configurations_evaluated:,} configurations "
              f"evaluated) in {t2 - t1:.2f} s")


def main() -> None:
    rate, n = configs_per_second()
    print(f"evaluate(): {n} candidate configurations, {rate:,.0f} configurations/s on one core "
          f"(target >= 150,000; Calculon ~150-185/s)")
    print("explore panel compute per change (target < 20 ms): "
          + ", ".join(f"{k} {v:.2f} ms" for k, v in widget_ms().items()))
    print("deadline search, 10T / 0.5T-active MoE, central batch, fp4 (before: bisection; after: exact):")
    search_speed()
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
                print(f"  {accelerator:9s} {prec}: {d.gpus:>8,d} GPUs ({d.racks} domains, {d.gpus_in_use:,} in use), "
                      f"MFU {e.mfu:.3f}, "
                      f"step {e.step_time_s:.1f} s, {e.parallelism}  search {dt:.2f} s")
            else:
                print(f"  {accelerator:9s} {prec}: {d.message}  search {dt:.2f} s")


if __name__ == "__main__":
    main()
