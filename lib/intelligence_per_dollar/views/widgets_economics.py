"""Explore panel for chapter 4: rack price, per-step reliability, task steps and utilisation.

:func:`compute` is a thin, fast call into :mod:`.economics` (well under 20 ms): the serving
throughput that prices tokens and the GPU-hour ratios are looked up once, when the panel is
built (:func:`inputs`), because they come from chapters 2-3's searches, which take seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.views import charts, widgets
from intelligence_per_dollar.analysis import claims
from intelligence_per_dollar.model import economics
from intelligence_per_dollar.sources import workloads
from intelligence_per_dollar.sources import assumptions as assumption_files

SYSTEMS = (claims.REFERENCE_SYSTEM, claims.CANDIDATE_SYSTEM)


@dataclass(frozen=True)
class Inputs:
    """What the panel holds fixed: central assumptions, and per-system throughputs from chapters 2-3."""

    values: Mapping[str, float]
    output_tokens_per_s_per_gpu: Mapping[str, float]
    serving_ratio: float
    model: str


def inputs(assumption_overrides=None, model: str | None = None) -> Inputs:
    """Central assumptions and the chapter-3 serving throughput of catalogue ``model`` (default: the
    serving workload's) on each system."""
    model = model or workloads.serving().model
    recs = claims.all_assumptions(assumption_overrides)
    v = assumption_files.centrals(recs)
    u = v["serving_interactivity_tokens_per_s_per_user"]
    tps = {s: float(claims.throughput_at_interactivity(claims.serving_frontier(model, s), u)) for s in SYSTEMS}
    ratio = tps[SYSTEMS[1]] / tps[SYSTEMS[0]] if tps[SYSTEMS[0]] > 0 else float("nan")
    return Inputs(v, tps, ratio, model)


def compute(vr_rack_price_musd: float, step_success_probability: float, steps: int, utilisation: float,
            *, inp: Inputs) -> dict:
    """$/GPU-hour, $/Mtok, cost per successful task (p, k) and the serving break-even price."""
    v = dict(inp.values)
    v["utilisation"] = utilisation
    v[economics.price_key(SYSTEMS[1])] = vr_rack_price_musd * 1e6
    rows = []
    ps = np.linspace(max(0.5, step_success_probability - 0.1), 1.0, 41)
    curves = []
    for s in SYSTEMS:
        c = float(economics.system_usd_per_gpu_hour(v, s))
        tps = inp.output_tokens_per_s_per_gpu[s]
        price = float(claims.usd_per_mtok(c, tps)) if np.isfinite(tps) else float("inf")
        task = claims.task_kwargs(v, price)
        tc = economics.agentic_task_cost(step_success_probability, steps, **task)
        rows.append({"system": s, "USD/GPU-h": c, "USD/Mtok out": price, "P(task succeeds)": float(tc.success_probability),
                     "USD per success": float(tc.usd_per_success),
                     "successes per USD": float(economics.successful_tasks_per_usd(tc.usd_per_success))})
        curve = economics.cost_per_successful_task(ps, steps, **task)
        curves.append(pd.DataFrame({"system": s, "p": ps, "usd_per_success": curve}))
    be = float("nan")
    if np.isfinite(inp.serving_ratio):
        be = float(economics.system_break_even_price_usd(v, SYSTEMS[1], SYSTEMS[0], inp.serving_ratio))
    return {"table": pd.DataFrame(rows), "curves": pd.concat(curves, ignore_index=True),
            "break_even_usd": be, "p": step_success_probability}


def render(result: dict):
    curves = result["curves"]
    curves = curves[np.isfinite(curves["usd_per_success"])]
    chart = charts.line_xy(curves, x="p", y="usd_per_success", color="system", points=False, log_y=True,
                           title="Cost per successful task against per-step reliability",
                           x_title="per-step reliability p", y_title="USD per success (log)")
    table = result["table"].copy()
    be = result["break_even_usd"]
    note = (f"<p>Serving break-even: Vera Rubin NVL72 costs the same per token as GB200 NVL72 at a rack price of "
            f"<b>${be / 1e6:,.1f}M</b>.</p>" if np.isfinite(be) else "")
    html = table.to_html(index=False, border=0, classes="ipd-headline", float_format=lambda x: f"{x:,.4g}") + note
    return html, chart


def panel(inp: Inputs | None = None, *, vr_rack_price_musd: float = 7.8, step_success_probability: float = 0.95,
          steps: int = 5, utilisation: float = 0.85) -> widgets.Explorer:
    """Controls: Vera Rubin NVL72 rack price, per-step reliability, steps per task, utilisation."""
    inp = inp or inputs()
    controls = {
        "vr_rack_price_musd": widgets.slider("VR NVL72 rack price (USD M)", vr_rack_price_musd, 2.0, 20.0, 0.1),
        "step_success_probability": widgets.slider("per-step reliability p", step_success_probability, 0.5, 1.0,
                                                   0.005),
        "steps": widgets.slider("steps per task k", steps, 1, 100, 1, integer=True),
        "utilisation": widgets.slider("utilisation", utilisation, 0.1, 1.0, 0.01),
    }
    return widgets.explore(controls, lambda **kw: compute(**kw, inp=inp), render,
                           title="Intelligence per dollar: price, reliability, steps, utilisation")


__all__ = ["Inputs", "inputs", "compute", "render", "panel"]
