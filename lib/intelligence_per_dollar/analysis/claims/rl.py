"""Chapter 3 for the ledger and chapter 4: the RL step and campaign of the RL workload, and the
weight-sync time of the published case the "under two seconds" claim quotes.

The RL step is exactly chapter 3's, :func:`post_training.workload_step`: the workload's policy,
fleet split and step settings (:func:`workloads.rl`), the central rollout efficiency and CPU price
of ``data/assumptions/post_training.csv``, the owner $/GPU-hour of the accelerator, and Vera's
sandbox CPU speed where the workload says the host CPU is Vera.
"""

from __future__ import annotations

import functools

import pandas as pd

from intelligence_per_dollar.analysis import validation_weight_sync
from intelligence_per_dollar.model import post_training
from intelligence_per_dollar.sources import models, runs, workloads

#: The published weight-sync figure of ``data/runs/weight_sync_runs.csv`` the claim quotes (Perplexity, Kimi-K2).
WEIGHT_SYNC_CASE = "pplx-kimi-k2"


def rl_fleet() -> tuple[int, int]:
    """(rollout GPUs, trainer GPUs) of the RL workload's fleet split."""
    w = workloads.rl()
    return post_training.split_gpus(w.fleet_gpus, w.rollout_fraction)


@functools.lru_cache(maxsize=32)
def _rl_step(accelerator: str, cpu_speed_factor: float | None) -> post_training.RLStep:
    extra = {} if cpu_speed_factor is None else {"cpu_speed_factor": cpu_speed_factor}
    return post_training.workload_step(accelerator, **extra)


def rl_step(accelerator: str, cpu_speed_factor: float | None = None) -> post_training.RLStep:
    """Chapter 3's RL step of the RL workload on ``accelerator`` (cached).

    ``cpu_speed_factor`` defaults to the workload's for that accelerator (Vera's where its host is Vera).
    """
    return _rl_step(accelerator, None if cpu_speed_factor is None else float(cpu_speed_factor))


@functools.lru_cache(maxsize=16)
def rl_campaign(accelerator: str) -> post_training.Campaign:
    """Chapter 3's :func:`post_training.campaign` of the RL workload on ``accelerator`` (cached)."""
    w = workloads.rl()
    rollout, trainer = rl_fleet()
    return post_training.campaign(models.get(w.policy), accelerator, rollout, trainer, w.campaign_steps,
                                  **post_training.workload_inputs(w, accelerator))


def rl_gpu_hour_ratio(reference_accelerator: str, candidate_accelerator: str) -> float:
    """Reference over candidate GPU-hours of an RL campaign: the ratio of :func:`rl_step` times
    (the same fleet on both, so GPU-hours scale with step time)."""
    return rl_step(reference_accelerator).step_time_s / rl_step(candidate_accelerator).step_time_s


def weight_sync_case() -> dict:
    """The published weight-sync run the claim quotes (:data:`WEIGHT_SYNC_CASE`)."""
    for r in runs.weight_sync_runs(post_training.SCHEDULES):
        if r["id"] == WEIGHT_SYNC_CASE:
            return r
    raise ValueError(f"weight-sync case {WEIGHT_SYNC_CASE!r} is not in data/runs/weight_sync_runs.csv")


def weight_sync_range() -> pd.DataFrame:
    """Chapter 3's predicted time of :func:`weight_sync_case` at the low, central and high
    ``weight_sync_efficiency`` of ``data/assumptions/post_training.csv``.

    Columns: end (low/central/high), efficiency, seconds.
    """
    a = post_training.assumptions()["weight_sync_efficiency"]
    rows = []
    for end, eff in (("low", a.low), ("central", a.central), ("high", a.high)):
        t = validation_weight_sync.weight_sync_table(eff).set_index("case").loc[WEIGHT_SYNC_CASE, "predicted"]
        rows.append({"end": end, "efficiency": eff, "seconds": float(t)})
    return pd.DataFrame(rows)
