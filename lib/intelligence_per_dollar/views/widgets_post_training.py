"""Explore panel for chapter 3: where one RL step's time goes, and what it costs.

Controls: platform, group size, mean rollout length, async depth and fleet split. Each change
calls :func:`post_training.rl_step` (cached sub-models make it sub-millisecond after warm-up).
The chapter notebook and the dashboard build the same panel.
"""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from intelligence_per_dollar.views import charts_post_training, widgets
from intelligence_per_dollar.model import post_training

DEFAULT_STEP = dict(prompts=256, input_tokens=2048, output_tokens_sigma=0.8, max_output_tokens=32768,
                    sandbox_cpu_s=30.0, sandbox_cpus=4096, algorithm="grpo", rollout_precision="fp4",
                    trainer_precision="bf16")


def compute(platform: str, group_size: int, output_tokens_mean: float, async_depth: int, rollout_fraction: float, *,
            policy: str = "nemotron-3-ultra-class", fleet_gpus: int = 288, cpu_speed_factor: float = 1.3,
            step_kw: Mapping[str, object] | None = None, usd_overrides: Mapping[str, float] | None = None):
    """One RL step for the panel's settings (Vera's CPU factor applies on VR200 only)."""
    rollout, trainer = post_training.split_gpus(int(fleet_gpus), float(rollout_fraction))
    kw = dict(DEFAULT_STEP)
    kw.update(step_kw or {})
    kw.update(group_size=int(group_size), output_tokens_mean=float(output_tokens_mean))
    kw["max_output_tokens"] = max(int(kw["max_output_tokens"]), int(output_tokens_mean))
    if "rollout_efficiency" not in kw:
        kw["rollout_efficiency"] = post_training.assumptions()["rollout_efficiency"].central
    if "cpu_usd_per_hour" not in kw:
        kw["cpu_usd_per_hour"] = post_training.assumptions()["cpu_usd_per_hour"].central
    return post_training.rl_step(post_training.policy_model(policy), platform, rollout, trainer,
                                 async_depth=int(async_depth),
                                 cpu_speed_factor=cpu_speed_factor if platform == "VR200" else 1.0,
                                 usd_per_gpu_hour=post_training.owner_usd_per_gpu_hour(platform, usd_overrides), **kw)


def render(s):
    head = pd.DataFrame([{"step (s)": s.step_time_s, "cost (USD)": s.cost_usd,
                          "USD per B tokens": s.usd_per_billion_tokens,
                          **{f"{k} share": v for k, v in s.shares.items()}}])
    bars = pd.DataFrame([{"step": "this step", "stage": k, "seconds": v} for k, v in s.stage_times_s.items()])
    chart = charts_post_training.stacked_bars(bars, x="step", y="seconds", color="stage", title="RL step breakdown",
                                              y_title="seconds")
    return head, chart


def panel(platforms=("GB200", "VR200"), *, group_size: int = 16, output_tokens_mean: float = 8000.0,
          async_depth: int = 0, rollout_fraction: float = 0.5, **fixed) -> widgets.Explorer:
    """Controls: platform, group size, mean output tokens, async depth, rollout share of the fleet.

    ``fixed`` (policy, fleet_gpus, cpu_speed_factor, step_kw, usd_overrides) passes through to
    :func:`compute` unchanged.
    """
    platforms = list(platforms)
    controls = {
        "platform": widgets.dropdown("platform", platforms, platforms[0]),
        "group_size": widgets.slider("group size", group_size, 1, 64, 1, integer=True),
        "output_tokens_mean": widgets.log_slider("mean output tokens", output_tokens_mean, 500, 32000),
        "async_depth": widgets.slider("async depth", async_depth, 0, 4, 1, integer=True),
        "rollout_fraction": widgets.slider("rollout share", rollout_fraction, 0.125, 0.875, 0.125),
    }
    return widgets.explore(controls, lambda **kw: compute(**kw, **fixed), render, title="RL step explorer")
