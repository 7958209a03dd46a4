"""Serving held to a latency target (a service-level objective): the best point of the frontier that meets it.

Benchmarks such as MLPerf Inference's Server scenario report the highest load whose p99 time to first token (TTFT)
and time per output token (TPOT) stay under limits; :func:`best_under_slo` reads the model the same way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from intelligence_per_dollar.model import inference
from intelligence_per_dollar.model import serving_arrivals as arrivals_model
from intelligence_per_dollar.sources import checks

__all__ = ["best_under_slo", "ARRIVALS", "DISPATCH", "POISSON_LAYOUTS"]

#: How requests reach the server: ``steady`` (the closed frontier: a fixed number in flight, the limits read against
#: its mean latencies) or ``poisson`` (an open Poisson stream, the limits read at a percentile; :mod:`serving_arrivals`).
ARRIVALS = ("steady", "poisson")
#: How a Poisson stream is shared among the attention ranks (``arrivals="poisson"``): ``balanced``, a dispatcher that
#: deals the requests out in turn (:func:`serving_arrivals.arrival_times`: what NVIDIA's MLPerf harness and serving
#: routers that send each request to the least loaded engine do), or ``random``, each rank an independent Poisson
#: stream (a router that picks engines at random).
DISPATCH = ("balanced", "random")
#: Layouts simulated under Poisson arrivals: the best this many by their closed-system throughput under the limits.
POISSON_LAYOUTS = 3


def best_under_slo(model, accelerator: str, gpus: int, precision: str = "fp8", input_tokens: int = 1000,
                   output_tokens: int = 1000, *, max_tpot_s: float | None = None, max_ttft_s: float | None = None,
                   arrivals: str = "steady", percentile: float = 0.99, dispatch: str = "balanced",
                   **frontier_kwargs) -> pd.Series:
    """The highest-throughput point of :func:`inference.frontier` that meets a latency target (a service-level
    objective): time per output token ``1 / tokens_per_s_per_user <= max_tpot_s`` and ``ttft_s <= max_ttft_s``
    (either may be None). This is how a latency-bounded benchmark is read (MLPerf Inference's Server scenario:
    the highest load whose p99 TTFT and TPOT stay under the limits). The model's latencies are those of the
    steady state (a mean: no queueing, no percentile), so a p99 limit is met here a little more easily than in
    a run. ``frontier_kwargs`` go to :func:`inference.frontier` (``parallelism``, ``kv_precision``, ``scheduler``, ...).
    ``ValueError`` when no point meets the target, naming the fastest per-user speed and the lowest TTFT reached.

    ``arrivals="poisson"`` reads the limits as a benchmark with random arrivals does (MLPerf's Server scenario: Poisson
    queries, limits on the ``percentile`` of each query's TTFT and TPOT): the :data:`POISSON_LAYOUTS` best layouts
    (one pipeline stage, no host offload) that meet the limits in the steady state are each simulated under Poisson
    arrivals (:func:`serving_arrivals.max_rate`; ``dispatch``, :data:`DISPATCH`, says how the stream reaches the
    attention ranks), and the row is the layout with the highest rate that meets them at
    the percentile: ``output_tokens_per_s_per_gpu`` that rate's output, ``concurrency`` its mean sequences in flight,
    ``tokens_per_s_per_user`` / ``step_time_s`` from its mean TPOT, ``ttft_s`` and ``tpot_percentile_s`` the
    percentiles, ``arrival_rate_per_s`` the requests per second of all replicas, ``memory_per_gpu_bytes`` at the
    mean concurrency. Each layout's steady best under the limits bounds its Poisson rate from above, so a layout whose
    bound is at or below the best rate already found is not simulated (nor are the ones after it).
    """
    checks.choice("arrivals", arrivals, ARRIVALS)
    checks.choice("dispatch", dispatch, DISPATCH)
    checks.fraction("percentile", percentile, low_open=True)
    mode = frontier_kwargs.get("mode", "aggregated")
    if arrivals == "poisson" and (mode != "aggregated" or output_tokens < 2):
        raise ValueError(f"arrivals='poisson' simulates aggregated serving with outputs of two tokens or more, got "
                         f"mode={mode!r}, output_tokens={output_tokens!r}; allowed: mode='aggregated' and "
                         f"output_tokens >= 2, or arrivals='steady'")
    limits = {k: (None if v is None else checks.positive_number(k, v))
              for k, v in (("max_tpot_s", max_tpot_s), ("max_ttft_s", max_ttft_s))}
    for k in ("concurrency", "envelope"):
        if k in frontier_kwargs:
            raise ValueError(f"{k}={frontier_kwargs[k]!r}: best_under_slo searches every layout and concurrency "
                             f"itself; allowed: leave {k} out")
    if frontier_kwargs.get("mode", "aggregated") == "prefill" and limits["max_tpot_s"] is not None:
        raise ValueError(f"max_tpot_s={max_tpot_s!r} has no meaning for mode='prefill' (one output token); "
                         f"allowed: None, or mode 'aggregated' / 'decode'")
    # every (layout, concurrency) point, not the envelope: a point off the envelope may meet a TTFT target
    f = inference.frontier(model, accelerator, gpus, precision, input_tokens, output_tokens, envelope=False,
                           **frontier_kwargs)
    ok = np.ones(len(f), bool)
    if limits["max_tpot_s"] is not None:
        ok &= 1.0 / f["tokens_per_s_per_user"].to_numpy() <= limits["max_tpot_s"]
    if limits["max_ttft_s"] is not None:
        ok &= f["ttft_s"].to_numpy() <= limits["max_ttft_s"]
    if not ok.any():
        raise ValueError(f"no serving point of {gpus} {accelerator} GPUs meets max_tpot_s={max_tpot_s!r}, "
                         f"max_ttft_s={max_ttft_s!r}: the fastest reaches {1.0 / f['tokens_per_s_per_user'].max():.4g} s "
                         f"per output token and the lowest TTFT is {f['ttft_s'].min():.4g} s; allowed: targets at or "
                         f"above those")
    g = f[ok]
    if arrivals == "steady":
        return g.loc[g["output_tokens_per_s_per_gpu"].idxmax()]
    return _best_under_poisson(model, accelerator, gpus, precision, input_tokens, output_tokens, g, limits,
                               percentile, frontier_kwargs, dispatch)


def _best_under_poisson(model, accelerator, gpus, precision, input_tokens, output_tokens, g, limits, percentile,
                        kwargs, dispatch="balanced") -> pd.Series:
    """:func:`best_under_slo` under Poisson arrivals (its docstring): the steady points that meet the limits ``g``
    pick the layouts to simulate, and each layout's best of them bounds its rate from above."""
    keys = list(inference.PARALLELISM_KEYS)
    g = g[(g["pp"] == 1) & (g["offload"] == 0)]
    if g.empty:
        raise ValueError(f"arrivals='poisson' simulates single-stage layouts without host offload, and none of "
                         f"{gpus} {accelerator} GPUs meets max_tpot_s={limits['max_tpot_s']!r}, "
                         f"max_ttft_s={limits['max_ttft_s']!r} in the steady state; allowed: arrivals='steady'")
    top = (g.sort_values("output_tokens_per_s_per_gpu", ascending=False).drop_duplicates(keys)
           .head(POISSON_LAYOUTS))
    ctx_kwargs = {k: v for k, v in kwargs.items() if k not in ("parallelism", "points")}
    ctx = inference.serving_context(model, accelerator, gpus, precision, input_tokens, output_tokens, **ctx_kwargs)
    best = None
    best_rate_per_gpu = 0.0                           # requests/s per GPU of the best layout simulated so far
    for _, row in top.iterrows():
        tp, dp, ep, rep = (int(row[k]) for k in ("tp", "dp", "ep", "replicas"))
        ranks = rep * dp                               # attention ranks, each simulated alike (serving_arrivals)
        # the steady state under the same limits bounds the open system (p99 >= mean; a wandering occupancy only adds)
        rate_hi = float(row["output_tokens_per_s_per_gpu"]) * tp / ctx.osl
        if best is not None and rate_hi / tp <= best_rate_per_gpu:
            break       # this layout cannot beat the best, and the rest of ``top`` (lower steady bests) neither
        layout = {k: np.array([float(row[k])]) for k in ("tp", "dp", "ep", "pp", "replicas", "offload")}
        seqs = float(inference.max_concurrency(ctx, layout, steady=False)[0]) / ranks
        r = arrivals_model.max_rate(ctx, tp, dp, ep, rate_hi, max_ttft_s=limits["max_ttft_s"],
                                    max_tpot_s=limits["max_tpot_s"], percentile=percentile, max_sequences=seqs,
                                    dispatch_ranks=ranks if dispatch == "balanced" else 1)
        if r["rate_per_s"] <= 0.0:
            continue
        out = row.copy()
        out["output_tokens_per_s_per_gpu"] = r["output_tokens_per_s"] / tp
        out["concurrency"] = r["mean_running"] * ranks
        out["tokens_per_s_per_user"] = 1.0 / r["mean_tpot_s"]
        out["step_time_s"] = r["mean_tpot_s"]
        out["ttft_s"] = r["ttft_s"]
        out["tpot_percentile_s"] = r["tpot_s"]
        out["arrival_rate_per_s"] = r["rate_per_s"] * ranks
        at = {**layout, "concurrency": np.array([max(round(out["concurrency"]), ranks)], float)}
        out["memory_per_gpu_bytes"] = float(inference.evaluate(ctx, at)["memory_per_gpu_bytes"][0])
        if best is None or out["output_tokens_per_s_per_gpu"] > best["output_tokens_per_s_per_gpu"]:
            best, best_rate_per_gpu = out, r["rate_per_s"] / tp
    if best is None:
        raise ValueError(f"under Poisson arrivals no layout of {gpus} {accelerator} GPUs keeps the "
                         f"p{percentile * 100:g} TTFT / TPOT under max_ttft_s={limits['max_ttft_s']!r}, "
                         f"max_tpot_s={limits['max_tpot_s']!r}, even at a trickle of requests; allowed: looser limits "
                         f"or a lower percentile")
    return best
