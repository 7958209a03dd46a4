"""Time 100,000 Monte Carlo samples of two headline functions (target: under 2 s each).

Run: python benchmarks/bench_uncertainty.py [n] [seed]
Prints the wall time of sampling + evaluation and the (p5, p50, p95) it produced.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from intelligence_per_dollar.model import economics as e
from intelligence_per_dollar.model import uncertainty as u
from intelligence_per_dollar.sources import assumptions as sa


def gb200_usd_per_gpu_hour(v):
    """GB200 NVL72 USD per GPU-hour, its rack price sampled from data/prices/prices.csv."""
    return e.system_usd_per_gpu_hour(v, "GB200-NVL72")


def vr_break_even_rack_usd(v):
    """Vera Rubin NVL72 break-even rack price if it needs 1/4 the GPU-hours of GB200 NVL72."""
    return e.system_break_even_price_usd(v, "Vera-Rubin-NVL72", "GB200-NVL72", 4.0)


def swe_usd_per_success(v):
    return e.cost_per_successful_task(
        v["step_success_probability"], np.rint(v["swe_agent_steps"]),
        prefix_tokens=v["prefix_tokens"], output_tokens_per_step=v["output_tokens_per_step"],
        tool_result_tokens_per_step=v["tool_result_tokens_per_step"],
        context_retention_fraction=v["context_retention_fraction"],
        input_usd_per_mtok=0.5, output_usd_per_mtok=2.0)


def main(n: int = 100_000, seed: int = 2026) -> None:
    econ, tasks = sa.book_assumptions(), sa.task_assumptions()
    for label, fn, recs in [("GB200 USD/GPU-hour", gb200_usd_per_gpu_hour, econ),
                            ("VR NVL72 break-even rack USD", vr_break_even_rack_usd, econ),
                            ("SWE task USD/success", swe_usd_per_success, tasks)]:
        t0 = time.perf_counter()
        r = u.run(fn, recs, n, seed)
        dt = time.perf_counter() - t0
        print(f"{label:32s} n={n:,} seed={seed}: {dt:6.3f} s  "
              f"p5={r.p5:,.4g} p50={r.p50:,.4g} p95={r.p95:,.4g}  {'OK' if dt < 2 else 'SLOW'}")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(*args)
