"""Agentic tasks priced in tokens (chapter 4): a SWE-bench-Verified-like task, the value of a
resolved issue, and the seed's five-tool-call workflow under each retry policy.

Every function is vectorised over a mapping of (sampled or central) assumption values, so the
same call gives a central number and a Monte Carlo interval.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.model import economics


def task_kwargs(values: Mapping[str, object], output_usd_per_mtok, **policy) -> dict:
    """Keyword arguments of :func:`economics.agentic_task_cost` from assumption values and a token price."""
    price = np.asarray(output_usd_per_mtok, dtype=float)
    kw = dict(prefix_tokens=values["prefix_tokens"], output_tokens_per_step=values["output_tokens_per_step"],
              tool_result_tokens_per_step=values["tool_result_tokens_per_step"],
              context_retention_fraction=values["context_retention_fraction"],
              input_usd_per_mtok=price * np.asarray(values["input_over_output_token_cost"], dtype=float),
              output_usd_per_mtok=price)
    kw.update(policy)
    return kw


def swe_task_cost(values: Mapping[str, object], output_usd_per_mtok) -> economics.TaskCost:
    """A SWE-bench-Verified-like task: k steps, per-step p = resolve_rate**(1/k), tokens priced."""
    k = np.rint(np.asarray(values["swe_agent_steps"], dtype=float))
    p = economics.implied_step_success_probability(values["swe_bench_verified_resolve_rate"], k)
    return economics.agentic_task_cost(p, k, **task_kwargs(values, output_usd_per_mtok))


def engineer_usd_per_issue(values: Mapping[str, object]) -> np.ndarray:
    """Value of one resolved issue: an engineer's loaded cost per hour x hours per issue."""
    return (economics._arr("engineer_cost_usd_per_hour", values["engineer_cost_usd_per_hour"], low=0.0)
            * economics._arr("engineer_hours_per_issue", values["engineer_hours_per_issue"], low=0.0))


def policy_table(values: Mapping[str, object], output_usd_per_mtok: float, p: float, k: int) -> pd.DataFrame:
    """The seed's five-tool-call workflow under each retry policy: success rate, cost per task and
    per success (central values)."""
    rows = []
    for label, pol in (("one attempt, failure found at the end", dict(retry_policy="none")),
                       ("one attempt, stop at the first failed step", dict(retry_policy="none", detect_failures=True)),
                       (f"retry the whole task (up to {int(values['max_task_attempts'])} attempts)",
                        dict(retry_policy="task", max_retries=int(values["max_task_attempts"]) - 1)),
                       (f"reliable rollback: retry a failed step (up to {int(values['max_step_retries'])} retries)",
                        dict(retry_policy="step", max_retries=int(values["max_step_retries"])))):
        tc = economics.agentic_task_cost(p, k, **task_kwargs(values, output_usd_per_mtok, **pol))
        rows.append({"policy": label, "success_probability": float(tc.success_probability),
                     "usd_per_task": float(tc.usd_per_task), "usd_per_success": float(tc.usd_per_success),
                     "tasks_per_usd": float(economics.successful_tasks_per_usd(tc.usd_per_success))})
    return pd.DataFrame(rows)
