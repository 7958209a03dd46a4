"""Chapter 4's tables, each headline with a Monte Carlo interval: USD per GPU-hour, cost per
resolved task by system and by model quality, the Vera Rubin NVL72 break-even rack price by use,
and the lifecycle cost per resolved task.

A system on which a chapter's model cannot run (the model does not fit its GPUs, or a precision
it lacks) keeps its row: the numbers are NaN and ``note`` says why ("cannot be checked: ...").
"""

from __future__ import annotations

import math
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis.claims.definitions import CANDIDATE_SYSTEM, REFERENCE_SYSTEM
from intelligence_per_dollar.analysis.claims.intervals import mc_interval
from intelligence_per_dollar.analysis.claims.pretraining import training_gpu_ratio, training_tokens_per_s_per_gpu
from intelligence_per_dollar.analysis.claims.rl import rl_campaign, rl_fleet, rl_gpu_hour_ratio
from intelligence_per_dollar.analysis.claims.serving import (BLOG_SERVING_MODEL, serving_frontier,
                                                             serving_throughput_ratio, serving_usd_per_mtok)
from intelligence_per_dollar.analysis.claims.tasks import swe_task_cost
from intelligence_per_dollar.model import economics
from intelligence_per_dollar.sources import hardware, models, workloads
from intelligence_per_dollar.sources import assumptions as assumption_files

_INTERVAL = ("p5", "p50", "p95", "central")
#: Columns of :func:`task_cost_by_system` and :func:`lifecycle_table` (also when every system fails).
TASK_COST_COLUMNS = ("system", "output_usd_per_mtok", *(f"usd_per_success_{k}" for k in _INTERVAL),
                     "tasks_per_usd_p5", "tasks_per_usd_p50", "tasks_per_usd_p95", "deciding", "note")
LIFECYCLE_COLUMNS = ("system", "pretraining_gpu_hours", "post_training_gpu_hours", "campaign_usd_p50",
                     "campaign_usd_p5", "campaign_usd_p95", *_INTERVAL, "deciding", "note")


def _cannot(ex: Exception) -> str:
    return f"cannot be checked: {ex}"


def gpu_hour_intervals(recs: Mapping[str, assumption_files.Assumption], systems, n: int, seed: int) -> pd.DataFrame:
    """USD per utilised GPU-hour of each system from first principles, with its interval."""
    rows = []
    for system in systems:
        d = mc_interval(lambda v, s_=system: economics.system_usd_per_gpu_hour(v, s_), recs, n, seed)
        rows.append({"system": system, **d})
    return pd.DataFrame(rows)


def _task_cost_row(recs, system: str, model: str, n: int, seed: int) -> dict:
    def cost(v):
        return swe_task_cost(v, serving_usd_per_mtok(v, model, system)).usd_per_success

    c = mc_interval(cost, recs, n, seed)
    price = float(serving_usd_per_mtok(assumption_files.centrals(recs), model, system))
    return {"system": system, "output_usd_per_mtok": price, **{f"usd_per_success_{k}": c[k] for k in _INTERVAL},
            "tasks_per_usd_p5": 1 / c["p95"], "tasks_per_usd_p50": 1 / c["p50"], "tasks_per_usd_p95": 1 / c["p5"],
            "deciding": c["deciding"], "note": ""}


def task_cost_by_system(recs: Mapping[str, assumption_files.Assumption], systems, n: int, seed: int,
                          model: str | None = None) -> pd.DataFrame:
    """Cost per resolved SWE task and successful tasks per USD for ``model`` served on each system.

    ``model``: a catalogue name (default: the serving workload's). Token prices come from chapter
    3's frontier at the assumed interactivity and each system's first-principles $/GPU-hour.
    """
    model = model or workloads.serving().model
    rows = []
    for system in systems:
        try:
            serving_frontier(model, system)
        except ValueError as ex:
            rows.append({"system": system, "note": _cannot(ex)})
            continue
        rows.append(_task_cost_row(recs, system, model, n, seed))
    return pd.DataFrame(rows, columns=list(TASK_COST_COLUMNS))


#: Resolve rates of illustrative weaker agents, shown beside the assumption's low/central/high
#: (the seed's 71.7% and its range) to show how cost per resolved task falls with quality.
WEAKER_AGENT_RESOLVE_RATES = (0.5, 0.6)


def resolve_rate_grid(recs: Mapping[str, assumption_files.Assumption]) -> tuple[float, ...]:
    """The weaker agents' rates plus the low/central/high of ``swe_bench_verified_resolve_rate``."""
    a = recs["swe_bench_verified_resolve_rate"]
    return tuple(sorted({*WEAKER_AGENT_RESOLVE_RATES, a.low, a.central, a.high}))


def task_cost_by_quality(recs: Mapping[str, assumption_files.Assumption], system: str, n: int, seed: int,
                         model: str | None = None, resolve_rates=None) -> pd.DataFrame:
    """Cost per resolved SWE task on ``system`` at several resolve rates (model quality), with intervals.

    ``model``: a catalogue name (default: the serving workload's); ``resolve_rates`` default to
    :func:`resolve_rate_grid`.
    """
    model = model or workloads.serving().model
    resolve_rates = resolve_rate_grid(recs) if resolve_rates is None else resolve_rates
    rows = []
    for rate in resolve_rates:
        sub = assumption_files.with_overrides(recs, {"swe_bench_verified_resolve_rate": float(rate)})
        d = mc_interval(lambda v: swe_task_cost(v, serving_usd_per_mtok(v, model, system)).usd_per_success,
                        sub, n, seed)
        rows.append({"resolve_rate": float(rate), **d})
    return pd.DataFrame(rows)


def _uses(cen: Mapping[str, float], training_precision: str | None) -> list[tuple[str, str, float, str]]:
    """(key, use, GPU-hour ratio, how) of each use of a Vera Rubin NVL72 rack: training, serving, RL."""
    tw, rw = workloads.training(), workloads.rl()
    ref_acc = hardware.get_system(REFERENCE_SYSTEM).accelerator
    cand_acc = hardware.get_system(CANDIDATE_SYSTEM).accelerator
    r_train, _, _ = training_gpu_ratio(cen[tw.active_params_assumption], training_precision)
    serve_b = models.published(BLOG_SERVING_MODEL).total_params
    policy_b = models.published(rw.policy).total_params
    rollout, trainer = rl_fleet()
    return [
        ("training", f"{tw.total_params / 1e12:g}T training target (chapter 2)", r_train,
         f"{tw.reference_accelerator} GPUs / {tw.candidate_accelerator} GPUs for {tw.tokens / 1e12:g}T tokens "
         f"in {tw.days:g} days"),
        ("serving", f"serving a {serve_b / 1e12:.0f}T MoE (chapter 3)", serving_throughput_ratio(cen),
         f"output tokens/s per GPU at {cen['serving_interactivity_tokens_per_s_per_user']:g} tokens/s per user"),
        ("rl", f"RL campaign, {policy_b / 1e9:.0f}B MoE (chapter 3)", rl_gpu_hour_ratio(ref_acc, cand_acc),
         f"RL step time on {rollout} + {trainer} GPUs"),
    ]


def break_even_table(recs: Mapping[str, assumption_files.Assumption], n: int, seed: int, *,
                     training_precision: str | None = None) -> pd.DataFrame:
    """Vera Rubin NVL72 break-even rack price for three uses (``key``: training, serving, rl): the 10T
    training target, serving and an RL campaign, each with its GPU-hour ratio and a Monte Carlo
    interval. A use without a finite positive ratio has NaN prices and says so in ``how``."""
    names = {k: a for k, a in recs.items() if not k.startswith(CANDIDATE_SYSTEM)}
    rows = []
    for key, use, ratio, how in _uses(assumption_files.centrals(recs), training_precision):
        if not (math.isfinite(ratio) and ratio > 0):
            rows.append({"key": key, "use": use, "gpu_hour_ratio": ratio, "p5": np.nan, "p50": np.nan, "p95": np.nan,
                         "central": np.nan, "deciding": "", "how": how + " (no finite ratio)"})
            continue
        d = mc_interval(lambda v, r_=ratio: economics.system_break_even_price_usd(
            v, CANDIDATE_SYSTEM, REFERENCE_SYSTEM, r_), names, n, seed)
        rows.append({"key": key, "use": use, "gpu_hour_ratio": ratio, **d, "how": how})
    return pd.DataFrame(rows)


def _lifecycle_cost(system: str, model: str, pretraining_tokens: float) -> tuple[float, float, Callable]:
    """(pretraining GPU-hours, post-training GPU-hours, campaign USD as a function of values) on ``system``."""
    accelerator = hardware.get_system(system).accelerator
    pretraining_gpu_hours = pretraining_tokens / training_tokens_per_s_per_gpu(model, system) / economics.S_PER_HOUR
    camp = rl_campaign(accelerator)
    cpu_usd = camp.step.cost_breakdown_usd["sandbox_cpus"] * camp.steps

    def campaign_usd(v):
        return (pretraining_gpu_hours + camp.gpu_hours) * economics.system_usd_per_gpu_hour(v, system) + cpu_usd

    return pretraining_gpu_hours, camp.gpu_hours, campaign_usd


def lifecycle_table(recs: Mapping[str, assumption_files.Assumption], systems, n: int, seed: int,
                    model: str | None = None, pretraining_tokens: float | None = None) -> pd.DataFrame:
    """Lifecycle USD per resolved task: serving + (pretraining + post-training) amortised over the
    successes of the model's life, per system (train, post-train and serve on the same system).

    Pretraining GPU-hours = tokens / chapter 2's training tokens/s per GPU / 3600; post-training is
    chapter 3's campaign of the RL workload on the system's accelerator (its GPU-hours, and its
    sandbox CPUs at chapter 3's price). GPU-hours are priced at the system's first-principles
    $/GPU-hour. ``model``: a catalogue name (default: the serving workload's); ``pretraining_tokens``
    defaults to the serving workload's (the tokens its model was pretrained on).
    """
    model = model or workloads.serving().model
    if pretraining_tokens is None:
        pretraining_tokens = workloads.serving().pretraining_tokens
    rows = []
    for system in systems:
        try:
            serving_frontier(model, system)
            pre_gpu_hours, post_gpu_hours, campaign_usd = _lifecycle_cost(system, model, pretraining_tokens)
        except ValueError as ex:
            rows.append({"system": system, "note": _cannot(ex)})
            continue

        def per_success(v, s_=system, c_=campaign_usd):
            tc = swe_task_cost(v, serving_usd_per_mtok(v, model, s_))
            return economics.lifecycle_usd_per_success(tc.usd_per_success, c_(v), v["lifetime_tasks_served"],
                                                       tc.success_probability)

        d = mc_interval(per_success, recs, n, seed)
        camp = mc_interval(campaign_usd, recs, n, seed)
        rows.append({"system": system, "pretraining_gpu_hours": pre_gpu_hours, "post_training_gpu_hours": post_gpu_hours,
                     "campaign_usd_p50": camp["p50"], "campaign_usd_p5": camp["p5"], "campaign_usd_p95": camp["p95"],
                     **d, "note": ""})
    return pd.DataFrame(rows, columns=list(LIFECYCLE_COLUMNS))
