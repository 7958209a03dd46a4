"""Chapter 2's "explore" panel: how many GPUs per accelerator for a chosen active-parameter count,
precision, deadline and sizing regime, for the book's training workload
(:func:`intelligence_per_dollar.sources.workloads.training`: a 10T-total MoE, 100T tokens,
sequences of 8,192 tokens).

Every number the panel shows is an exact layout search
(:func:`intelligence_per_dollar.analysis.training.panel_point`, the chapter's own
:func:`intelligence_per_dollar.model.training.deadline`), so at the chapter's settings it shows
the chapter's numbers to the GPU. Answers come from, in order: the searches this process already
ran (the chapter's headline fills them), the on-disk sweep cache of the panel's whole grid
(:func:`grid_spec`; fill it once with ``sweeps.run(grid_spec())`` or ``ipd sweep``, then every
control change reads it in milliseconds), else the search itself (about a second per
accelerator, then memoised).
"""

from __future__ import annotations

import functools

import pandas as pd

from intelligence_per_dollar.analysis import sweeps
from intelligence_per_dollar.analysis import training as at
from intelligence_per_dollar.model import training
from intelligence_per_dollar.sources import assumptions, workloads
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
#: the deadline slider's values (days); the cached grid holds every one of them
DAYS_GRID = tuple(range(10, 121, 10))
#: sweep name of the panel's grid in the on-disk cache
GRID_NAME = "explore-training"


def grid_spec(batch_tokens: float = CENTRAL_BATCH, accelerators=ACCELERATORS, active=ACTIVE_CENTRAL):
    """The sweep of every panel setting (active parameters, precision, accelerator, deadline,
    regime) at the global batch ``batch_tokens``: run it once (``sweeps.run``) to warm the cache."""
    return sweeps.spec_from_dict({
        "name": GRID_NAME, "function": "intelligence_per_dollar.analysis.training:panel_point", "method": "grid",
        "fixed": {"batch_tokens": float(batch_tokens)},
        "parameters": {"active": {"values": sorted({float(a) for a in ACTIVE_GRID} | {float(active)})},
                       "precision": {"values": list(PRECISIONS)}, "accelerator": {"values": list(accelerators)},
                       "days": {"values": [float(d) for d in DAYS_GRID]}, "regime": {"values": list(REGIMES)}}})


@functools.lru_cache(maxsize=8)
def _grid_table(batch_tokens: float, accelerators: tuple, active: float) -> dict:
    """``{(active, precision, accelerator, days, regime): row}`` of the cached grid ({} if cold)."""
    table = sweeps.cached(grid_spec(batch_tokens, accelerators, active))
    if table is None:
        return {}
    keys = zip(table["active"], table["precision"], table["accelerator"], table["days"], table["regime"])
    return {(float(a), p, acc, float(d), g): row for (a, p, acc, d, g), row in
            zip(keys, table[["gpus", "racks"]].to_dict("records"))}


def _count(v) -> int | None:
    return None if v is None or v != v else int(v)


def compute(active: float, precision: str, accelerator: str, days: float, regime: str = "batch-limited",
            batch_tokens: float = CENTRAL_BATCH, accelerators=ACCELERATORS) -> dict:
    """GPUs per accelerator for the deadline, each an exact search (``method`` says where it came
    from: this process, the cached grid, or a search run now); the accelerator id is under
    ``accelerator``."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision={precision!r} is not allowed; allowed: {', '.join(PRECISIONS)}")
    if accelerator not in accelerators:
        raise ValueError(f"accelerator={accelerator!r} is not allowed; allowed: {', '.join(accelerators)}")
    if regime not in REGIMES:
        raise ValueError(f"regime={regime!r} is not allowed; allowed: {', '.join(REGIMES)}")
    if not (isinstance(days, (int, float)) and not isinstance(days, bool) and 0 < days <= 3650):
        raise ValueError(f"days={days!r} must be a number in (0, 3650]")
    if not (isinstance(active, (int, float)) and not isinstance(active, bool) and 0 < active <= TOTAL_PARAMS):
        raise ValueError(f"active={active!r} must be a positive number of parameters up to {TOTAL_PARAMS:g}")
    model = at.panel_model(TOTAL_PARAMS, float(active))
    grid = _grid_table(float(batch_tokens), tuple(accelerators), float(active))
    rows = []
    for a in accelerators:
        d = training.deadline_if_cached(model, a, precision, tokens=TOKENS, days=float(days), seq_len=SEQ_LEN,
                                        global_batch_tokens=batch_tokens, regime=regime)
        hit = grid.get((float(active), precision, a, float(days), regime))
        if d is not None:
            gpus, racks, method = d.gpus, d.racks, "exact search"
        elif hit is not None:
            gpus, racks, method = _count(hit["gpus"]), _count(hit["racks"]), "exact search (cached grid)"
        else:
            p = at.panel_point(float(active), precision, a, float(days), regime, float(batch_tokens))
            gpus, racks, method = p["gpus"], p["racks"], "exact search (run now)"
        rows.append({"accelerator": a, "gpus": gpus, "racks_or_nodes": racks, "method": method})
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
                   regime: str = "batch-limited", batch_tokens: float = CENTRAL_BATCH,
                   accelerators=ACCELERATORS):
    """The explore panel: active parameters, precision, accelerator, deadline and sizing regime.
    ``accelerator`` is the accelerator shown first
    and ``accelerators`` those compared (chapter 2 passes them by these names); ``batch_tokens``
    (the batch-limited regime's global batch) follows the chapter."""
    accelerators = tuple(accelerators)
    grid = sorted(set(ACTIVE_GRID) | {float(active)})
    fn = functools.partial(compute, batch_tokens=batch_tokens, accelerators=accelerators)
    fn(active=float(active), precision=precision, accelerator=accelerator, days=days, regime=regime)   # warm-up
    controls = {
        "active": w.dropdown("active parameters", [(f"{a / 1e12:g} T", a) for a in grid], float(active)),
        "precision": w.toggle("precision", PRECISIONS, precision),
        "accelerator": w.dropdown("accelerator", accelerators, accelerator),
        "days": w.slider("deadline (days)", days, DAYS_GRID[0], DAYS_GRID[-1], DAYS_GRID[1] - DAYS_GRID[0],
                         fmt=".0f"),
        "regime": w.toggle("sizing regime", REGIMES, regime),
    }
    return w.explore(controls, fn, render,
                     title=f"How many GPUs? ({TOTAL_PARAMS / 1e12:g}T-total MoE, {TOKENS / 1e12:g}T tokens)")


#: short alias used by the chapters and the dashboard
panel = training_panel
