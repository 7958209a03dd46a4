"""Chapter 4's (and the ledger chapter's) findings, read from the tables of
:mod:`intelligence_per_dollar.analysis.claims` by key: the GPU-hour build-up of one system, the
seed's workflow with and without rollback, a ledger row, the tornado inputs, and the headline
numbers with intervals that the ledger chapter lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis import claims
from intelligence_per_dollar.model import economics, uncertainty
from intelligence_per_dollar.sources import hardware

#: Rows of :func:`claims.policy_table`, by the start of their label.
NO_RETRY = "one attempt, failure found at the end"
ROLLBACK = "reliable rollback"
#: The break-even use whose tornado chapter 4 shows.
TORNADO_USE = "serving"


@dataclass(frozen=True)
class GpuHour:
    """One system's rack price, price per GPU and cost build-up at the central assumptions."""

    system: str
    rack_price_usd: float
    gpus: int
    breakdown: Mapping[str, float]

    @property
    def price_per_gpu_usd(self) -> float:
        return self.rack_price_usd / self.gpus


def gpu_hour(central: Mapping[str, float], system: str) -> GpuHour:
    """:class:`GpuHour` of ``system`` (:func:`economics.system_usd_per_gpu_hour` with its breakdown)."""
    b = economics.system_usd_per_gpu_hour(central, system, breakdown=True)
    return GpuHour(system, float(central[economics.price_key(system)]), int(hardware.get_system(system).gpus),
                   {k: float(v) for k, v in b.items()})


def policy_row(pol: pd.DataFrame, label_start: str) -> dict:
    """The row of :func:`claims.policy_table` whose policy label starts with ``label_start``."""
    (row,) = pol[pol["policy"].str.startswith(label_start)].to_dict("records")
    return row


@dataclass(frozen=True)
class Workflow:
    """The seed's workflow with one attempt and with a reliable rollback."""

    success_no_retry: float
    success_rollback: float
    usd_per_success_no_retry: float
    usd_per_success_rollback: float


def workflow(pol: pd.DataFrame) -> Workflow:
    """:class:`Workflow` of :func:`claims.policy_table`."""
    a, b = policy_row(pol, NO_RETRY), policy_row(pol, ROLLBACK)
    return Workflow(a["success_probability"], b["success_probability"], a["usd_per_success"], b["usd_per_success"])


def ledger_row(ledger: pd.DataFrame, claim_id: str) -> dict:
    """One claim's row of :func:`claims.ledger`."""
    return ledger.set_index("id").loc[claim_id].to_dict() | {"id": claim_id}


def break_even_row(be: pd.DataFrame, key: str) -> dict:
    """One use (``training``, ``serving``, ``rl``) of :func:`claims.break_even_table`."""
    return be.set_index("key").loc[key].to_dict() | {"key": key}


def break_even_tornado(recs: Mapping[str, object], be: pd.DataFrame, use: str = TORNADO_USE) -> pd.DataFrame:
    """Swing of the candidate's break-even price for ``use`` over each assumption's range (the
    candidate's own price excluded)."""
    ratio = float(break_even_row(be, use)["gpu_hour_ratio"])
    return uncertainty.tornado(
        lambda v: economics.system_break_even_price_usd(v, claims.CANDIDATE_SYSTEM, claims.REFERENCE_SYSTEM, ratio),
        {k: a for k, a in recs.items() if not k.startswith(claims.CANDIDATE_SYSTEM)})


def task_cost_tornado(recs: Mapping[str, object], model: str, system: str) -> pd.DataFrame:
    """Swing of the USD per resolved SWE task on ``system`` over each assumption's range."""
    return uncertainty.tornado(
        lambda v: claims.swe_task_cost(v, claims.serving_usd_per_mtok(v, model, system)).usd_per_success, recs)


def _chapter(link: str) -> str:
    return link.split("/")[1].split(".")[0]


def headline_intervals(ledger: pd.DataFrame, gph: pd.DataFrame, be: pd.DataFrame, mc_samples: int) -> pd.DataFrame:
    """Every headline number of chapters 2-4 with its 5th/50th/95th percentiles: the ledger's
    estimates (headline-ratio rows excluded), USD per GPU-hour per system, and the break-even
    rack price per use."""
    mc = f"Monte Carlo (n={int(mc_samples):,})"
    rows = [{"headline": r["id"].replace("_", " "), "chapter": _chapter(r["link"]), "p5": r["p5"], "p50": r["p50"],
             "p95": r["p95"], "unit": r["unit"], "interval": r["interval"]}
            for r in ledger.to_dict("records") if np.isfinite(float(r["p50"])) and r["rule"] != "headline"]
    rows += [{"headline": f"USD per GPU-hour, {r['system']}", "chapter": "04_intelligence_per_dollar", "p5": r["p5"],
              "p50": r["p50"], "p95": r["p95"], "unit": "USD/GPU-h", "interval": mc} for r in gph.to_dict("records")]
    rows += [{"headline": f"break-even VR NVL72 price, {r['use']}", "chapter": "04_intelligence_per_dollar",
              "p5": r["p5"], "p50": r["p50"], "p95": r["p95"], "unit": "USD per rack", "interval": mc}
             for r in be.to_dict("records") if np.isfinite(r["p50"])]
    return pd.DataFrame(rows)


#: Per-step reliabilities the cost-vs-reliability chart spans, and the task lengths beside the chapter's.
RELIABILITY_GRID = np.round(np.arange(0.80, 1.0001, 0.001), 3)
LONG_TASK_STEPS = (20, 50)


def reliability_curves(central: Mapping[str, float], output_usd_per_mtok: float, task_steps: int) -> pd.DataFrame:
    """Cost per successful task vs per-step reliability for one step, the chapter's ``task_steps``,
    and :data:`LONG_TASK_STEPS` (:func:`economics.reliability_curves`)."""
    return economics.reliability_curves(RELIABILITY_GRID, [1, task_steps, *LONG_TASK_STEPS],
                                        **claims.task_kwargs(central, output_usd_per_mtok))
