"""Explore panel for chapter 3: where one RL step's time goes, and what it costs.

Controls: accelerator, group size, mean rollout length, async depth and fleet split. Each change
calls :func:`post_training.workload_step` on the book's RL workload
(:func:`intelligence_per_dollar.sources.workloads.rl`; cached sub-models make it sub-millisecond after
warm-up). The chapter notebook and the dashboard build the same panel.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping

import pandas as pd

from intelligence_per_dollar.model import post_training
from intelligence_per_dollar.sources import workloads
from intelligence_per_dollar.views import charts_post_training, widgets


def compute(accelerator: str, group_size: int, output_tokens_mean: float, async_depth: int, rollout_fraction: float,
            *, workload: workloads.RLWorkload | None = None, step_kw: Mapping[str, object] | None = None,
            usd_overrides: Mapping[str, float] | None = None):
    """One RL step of ``workload`` (default: the book's) with the panel's settings.

    ``step_kw`` overrides any other :func:`post_training.rl_step` argument (e.g. the chapter's
    ``rollout_efficiency``); the generation cap is raised to the mean rollout length when needed.
    """
    w = workload if workload is not None else workloads.rl()
    w = dataclasses.replace(w, rollout_fraction=float(rollout_fraction))
    kw = dict(step_kw or {})
    kw.update(group_size=int(group_size), output_tokens_mean=float(output_tokens_mean), async_depth=int(async_depth),
              max_output_tokens=max(int(kw.get("max_output_tokens", w.max_output_tokens)), int(output_tokens_mean)))
    return post_training.workload_step(accelerator, w, usd_overrides=usd_overrides, **kw)


def render(s):
    head = pd.DataFrame([{"step (s)": s.step_time_s, "cost (USD)": s.cost_usd,
                          "USD per B tokens": s.usd_per_billion_tokens,
                          **{f"{k} share": v for k, v in s.shares.items()}}])
    bars = pd.DataFrame([{"step": "this step", "stage": k, "seconds": v} for k, v in s.stage_times_s.items()])
    chart = charts_post_training.stacked_bars(bars, x="step", y="seconds", color="stage", title="RL step breakdown",
                                              y_title="seconds")
    return head, chart


def panel(accelerators=None, *, group_size: int | None = None, output_tokens_mean: float | None = None,
          async_depth: int | None = None, rollout_fraction: float | None = None, **fixed) -> widgets.Explorer:
    """Controls: accelerator, group size, mean output tokens, async depth, rollout share of the fleet.

    Initial values default to the book's RL workload; ``fixed`` (workload, step_kw, usd_overrides)
    passes through to :func:`compute` unchanged.
    """
    w = fixed.get("workload") or workloads.rl()
    accelerators = list(accelerators if accelerators is not None else w.accelerators)
    controls = {
        "accelerator": widgets.dropdown("accelerator", accelerators, accelerators[0]),
        "group_size": widgets.slider("group size", group_size if group_size is not None else w.group_size,
                                     1, 64, 1, integer=True),
        "output_tokens_mean": widgets.log_slider("mean output tokens", output_tokens_mean if output_tokens_mean
                                                 is not None else w.output_tokens_mean, 500, 32000),
        "async_depth": widgets.slider("async depth", async_depth if async_depth is not None else w.async_depth,
                                      0, 4, 1, integer=True),
        "rollout_fraction": widgets.slider("rollout share", rollout_fraction if rollout_fraction is not None
                                           else w.rollout_fraction, 0.125, 0.875, 0.125),
    }
    return widgets.explore(controls, lambda **kw: compute(**kw, **fixed), render, title="RL step explorer")
