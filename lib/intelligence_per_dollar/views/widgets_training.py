"""Chapter 2's "explore" panel: how many GPUs per accelerator for a chosen active-parameter count,
precision, deadline and sizing regime, for the book's training workload
(:func:`intelligence_per_dollar.sources.workloads.training`: a 10T-total MoE, 100T tokens,
sequences of 8,192 tokens).

The model call behind every control change must take < 20 ms. Where the exact deadline search
for a control setting has already run (:func:`intelligence_per_dollar.model.training.deadline` is
memoised, so the chapter's own headline searches fill it),
the panel shows that exact answer, so at the chapter's settings it agrees with the chapter's
headline to the GPU. Elsewhere it reads a cached approximation, marked as such:

* batch-limited regime (fixed global batch): each accelerator's best cluster throughput on a
  geometric grid of cluster sizes (:data:`GPU_GRID`, :func:`curves`), linearly interpolated
  between grid points and rounded up to whole racks;
* throughput regime (batch grows with the cluster): the per-GPU throughput of one exact search
  at :data:`REFERENCE_DAYS` days, scaled to the deadline (the regime's per-GPU throughput is
  independent of the cluster size up to the power-of-two reference layout).

The first visit of a new (active, precision) pair computes its curves or reference searches
(about a second per accelerator).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from intelligence_per_dollar.model import architecture, training
from intelligence_per_dollar.sources import assumptions, hardware, workloads
from intelligence_per_dollar.views import widgets as w

ACCELERATORS = ("GB200", "GB300", "VR200", "H100-SXM")
ACTIVE_GRID = (0.25e12, 0.5e12, 1e12, 2e12)
PRECISIONS = ("fp4", "fp8")
REGIMES = training.REGIMES
WORKLOAD = workloads.training()
TOTAL_PARAMS = WORKLOAD.total_params
TOKENS = WORKLOAD.tokens
SEQ_LEN = WORKLOAD.seq_len
#: the panel's first active-parameter count: the central of the workload's ranged assumption
ACTIVE_CENTRAL = assumptions.assumptions("workloads.csv")[WORKLOAD.active_params_assumption].central
CENTRAL_BATCH = training.GLOBAL_BATCH_TOKENS["central"]
#: cluster sizes on which the batch-limited curves are evaluated, in GPUs: 72 x {4, 5, 6, 7} x 2^j
#: from 16 to 16,384 racks (1,152 to ~1.2M GPUs), four points per doubling. Sizes with small
#: prime factors only: an arbitrary rack count (e.g. 181 = a prime) forces lopsided TP x PP x DP
#: layouts, which would make the curve dip between its neighbours.
GPU_GRID = tuple(sorted({72 * m * 2 ** j for j in range(2, 12) for m in (4, 5, 6, 7)
                         if 16 <= m * 2 ** j <= 16384}))
#: largest ratio of neighbouring sizes in :data:`GPU_GRID`, quoted by the chapter
GRID_STEP = max(b / a for a, b in zip(GPU_GRID, GPU_GRID[1:]))
#: deadline of the exact throughput-regime search that other deadlines are scaled from
REFERENCE_DAYS = WORKLOAD.days


@functools.lru_cache(maxsize=64)
def _model(active: float):
    return architecture.from_total_active(TOTAL_PARAMS, active)


def curves(active: float, precision: str, batch_tokens: float = CENTRAL_BATCH, accelerators=ACCELERATORS) -> dict:
    """Batch-limited throughput curves of each accelerator for the 10T MoE with ``active`` active
    parameters (cached per argument values)."""
    return _curves(float(active), precision, float(batch_tokens), tuple(accelerators))


@functools.lru_cache(maxsize=64)
def _curves(active: float, precision: str, batch_tokens: float, accelerators: tuple) -> dict:
    model = _model(active)
    out = {}
    for accelerator in accelerators:
        acc = hardware.get(accelerator)
        racks = np.unique(np.maximum(1, np.round(np.asarray(GPU_GRID) / acc.scaleup_domain_gpus)).astype(int))
        out[accelerator] = training.throughput_curve(model, accelerator, precision, SEQ_LEN,
                                                     training.batch_tokens(SEQ_LEN, batch_tokens), racks,
                                                     fallback=not acc.supports(precision))
    return out


@functools.lru_cache(maxsize=256)
def _throughput_reference(active: float, precision: str, accelerator: str) -> float | None:
    """Tokens/s per rack owned in the throughput regime (exact search at :data:`REFERENCE_DAYS`)."""
    d = training.deadline(_model(float(active)), accelerator, precision, tokens=TOKENS, days=REFERENCE_DAYS,
                          seq_len=SEQ_LEN, regime="throughput")
    if not d.feasible:
        return None
    return TOKENS / (d.days_needed * 86400.0) / d.racks


def _interp_racks(curve, rate: float) -> float | None:
    tps = np.nan_to_num(np.asarray(curve["tokens_per_s"], dtype=float), nan=0.0)
    racks = np.asarray(curve["racks"], dtype=float)
    ok = tps >= rate
    if not ok.any():
        return None
    j = int(np.argmax(ok))
    if j == 0 or tps[j - 1] <= 0:
        return float(racks[j])
    r = racks[j - 1] + (rate - tps[j - 1]) / (tps[j] - tps[j - 1]) * (racks[j] - racks[j - 1])
    return float(max(racks[j - 1] + 1, math.ceil(r - 1e-9)))


def compute(active: float, precision: str, accelerator: str, days: float, regime: str = "batch-limited",
            batch_tokens: float = CENTRAL_BATCH, accelerators=ACCELERATORS) -> dict:
    """GPUs per accelerator for the deadline: the exact search where memoised, else the cached
    approximation (fast after a first visit). Each row says which (``method``);
    the accelerator id is under ``accelerator``."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision={precision!r} is not allowed; allowed: {', '.join(PRECISIONS)}")
    if accelerator not in accelerators:
        raise ValueError(f"accelerator={accelerator!r} is not allowed; allowed: {', '.join(accelerators)}")
    if regime not in REGIMES:
        raise ValueError(f"regime={regime!r} is not allowed; allowed: {', '.join(REGIMES)}")
    if not (isinstance(days, (int, float)) and not isinstance(days, bool) and days > 0):
        raise ValueError(f"days={days!r} must be a positive number")
    if not (isinstance(active, (int, float)) and 0 < active <= TOTAL_PARAMS):
        raise ValueError(f"active={active!r} must be a positive number of parameters up to {TOTAL_PARAMS:g}")
    model = _model(float(active))
    rate = TOKENS / (days * 86400.0)
    rows = []
    for a in accelerators:
        dom = hardware.get(a).scaleup_domain_gpus
        d = training.deadline_if_cached(model, a, precision, tokens=TOKENS, days=float(days), seq_len=SEQ_LEN,
                                        global_batch_tokens=batch_tokens, regime=regime)
        if d is not None:
            racks, method = d.racks, "exact search"
        elif regime == "batch-limited":
            racks = _interp_racks(curves(active, precision, batch_tokens, accelerators)[a], rate)
            method = f"curve ({GRID_STEP:.2f}x grid, interpolated)"
        else:
            per_rack = _throughput_reference(float(active), precision, a)
            racks = None if per_rack is None else max(1, math.ceil(rate / per_rack - 1e-9))
            method = f"scaled from the {REFERENCE_DAYS:g}-day search"
        rows.append({"accelerator": a, "gpus": None if racks is None else int(racks * dom),
                     "racks_or_nodes": None if racks is None else int(racks), "method": method})
    ref = WORKLOAD.reference_accelerator
    base = next((x["gpus"] for x in rows if x["accelerator"] == ref), None)
    for x in rows:
        x[f"ratio_to_{ref}"] = (x["gpus"] / base) if (x["gpus"] and base) else None
    return {"active": float(active), "precision": precision, "accelerator": accelerator, "days": days,
            "regime": regime, "rows": rows}


def render(res: dict):
    from intelligence_per_dollar.views import charts

    df = pd.DataFrame(res["rows"])
    table = df.assign(gpus=df["gpus"].map(lambda v: "nothing fits" if v is None or v != v else f"{int(v):,}"))
    plot = df.dropna(subset=["gpus"])
    chart = charts.bars(plot, x="accelerator", y="gpus", highlight=res["accelerator"], y_title="GPUs",
                        title=f"GPUs to train {TOKENS / 1e12:g}T tokens in {res['days']:.0f} days "
                              f"({res['active'] / 1e12:g}T active, {res['precision']}, {res['regime']})"
                        ) if len(plot) else None
    return table, chart


def training_panel(active: float = ACTIVE_CENTRAL, precision: str = WORKLOAD.precision,
                   accelerator: str = WORKLOAD.candidate_accelerator, days: float = WORKLOAD.days,
                   regime: str = "batch-limited", batch_tokens: float = CENTRAL_BATCH, accelerators=ACCELERATORS):
    """The explore panel: active parameters, precision, accelerator, deadline and sizing regime.
    ``accelerator`` is the accelerator shown first and ``accelerators`` those compared (chapter 2 passes
    them by these names); ``batch_tokens`` (the batch-limited regime's global batch) follows the chapter."""
    accelerators = tuple(accelerators)
    grid = sorted(set(ACTIVE_GRID) | {float(active)})
    fn = functools.partial(compute, batch_tokens=batch_tokens, accelerators=accelerators)
    fn(active=float(active), precision=precision, accelerator=accelerator, days=days, regime=regime)   # warm-up
    controls = {
        "active": w.dropdown("active parameters", [(f"{a / 1e12:g} T", a) for a in grid], float(active)),
        "precision": w.toggle("precision", PRECISIONS, precision),
        "accelerator": w.dropdown("accelerator", accelerators, accelerator),
        "days": w.slider("deadline (days)", days, 10, 120, 5, fmt=".0f"),
        "regime": w.toggle("sizing regime", REGIMES, regime),
    }
    return w.explore(controls, fn, render,
                     title=f"How many GPUs? ({TOTAL_PARAMS / 1e12:g}T-total MoE, {TOKENS / 1e12:g}T tokens)")


#: short alias used by the chapters and the dashboard
panel = training_panel
