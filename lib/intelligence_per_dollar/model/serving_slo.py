"""Serving held to a latency target (a service-level objective): the best point of the frontier that meets it.

Benchmarks such as MLPerf Inference's Server scenario report the highest load whose p99 time to first token (TTFT)
and time per output token (TPOT) stay under limits; :func:`best_under_slo` reads the model the same way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from intelligence_per_dollar.model import inference
from intelligence_per_dollar.sources import checks

__all__ = ["best_under_slo"]


def best_under_slo(model, accelerator: str, gpus: int, precision: str = "fp8", input_tokens: int = 1000,
                   output_tokens: int = 1000, *, max_tpot_s: float | None = None, max_ttft_s: float | None = None,
                   **frontier_kwargs) -> pd.Series:
    """The highest-throughput point of :func:`inference.frontier` that meets a latency target (a service-level
    objective): time per output token ``1 / tokens_per_s_per_user <= max_tpot_s`` and ``ttft_s <= max_ttft_s``
    (either may be None). This is how a latency-bounded benchmark is read (MLPerf Inference's Server scenario:
    the highest load whose p99 TTFT and TPOT stay under the limits). The model's latencies are those of the
    steady state (a mean: no queueing, no percentile), so a p99 limit is met here a little more easily than in
    a run. ``frontier_kwargs`` go to :func:`inference.frontier` (``parallelism``, ``kv_precision``, ``scheduler``, ...).
    ``ValueError`` when no point meets the target, naming the fastest per-user speed and the lowest TTFT reached.
    """
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
    return g.loc[g["output_tokens_per_s_per_gpu"].idxmax()]
