"""Chapter 1's findings: the seed's headline comparisons reconciled with like-for-like ones, rack
against rack, per dollar, and what the measured GPU delivers.

The seed compares Rubin with Blackwell ("50 PF FP4 vs 20") and Rubin Ultra with Rubin ("doubles
that to 100"); :data:`SEED_NEW`, :data:`SEED_OLD` and :data:`SEED_ULTRA` are the catalogue ids of
those chips and :data:`SEED_NEW_SYSTEM` / :data:`SEED_OLD_SYSTEM` their racks. Tables come from
:mod:`intelligence_per_dollar.analysis.hardware_tables`; rows are looked up by key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from intelligence_per_dollar.analysis import hardware_tables
from intelligence_per_dollar.model import economics
from intelligence_per_dollar.sources import hardware

SEED_NEW, SEED_OLD, SEED_ULTRA = "VR200", "GB200", "Rubin-Ultra"
SEED_NEW_SYSTEM, SEED_OLD_SYSTEM = "Vera-Rubin-NVL72", "GB200-NVL72"
#: The precision of the seed's headline figures.
SEED_PRECISION = "fp4"
HEADLINE, DENSE = "headline vs headline", "dense vs dense"


@dataclass(frozen=True)
class Reconciled:
    """A headline comparison and the like-for-like one of the same chips."""

    new: str
    old: str
    table: pd.DataFrame

    def ratio(self, comparison: str) -> float | None:
        """Ratio of ``comparison`` (:data:`HEADLINE`, :data:`DENSE` ...), None where the chips lack it."""
        by = dict(zip(self.table["comparison"], self.table["ratio"]))
        return float(by[comparison]) if comparison in by else None


def seed_comparisons(baseline: str) -> tuple[Reconciled, Reconciled]:
    """(Rubin vs Blackwell, Rubin Ultra vs Rubin) at the seed's precision. The Blackwell side is
    ``baseline`` when it has that precision, else :data:`SEED_OLD`."""
    old = baseline if hardware.get(baseline).supports(SEED_PRECISION) else SEED_OLD
    return (Reconciled(SEED_NEW, old, hardware_tables.reconcile_headlines(SEED_NEW, old, SEED_PRECISION)),
            Reconciled(SEED_ULTRA, SEED_NEW, hardware_tables.reconcile_headlines(SEED_ULTRA, SEED_NEW, SEED_PRECISION)))


def system_ratio(table: pd.DataFrame, column: str, new: str = SEED_NEW_SYSTEM, old: str = SEED_OLD_SYSTEM
                 ) -> float | None:
    """``column`` of system ``new`` over system ``old`` in a per-system table (None if either is absent)."""
    by = table.set_index("system")[column]
    return float(by[new] / by[old]) if {new, old} <= set(by.index) else None


def system_prices() -> dict[str, tuple[float, float, float]]:
    """``{system: (low, central, high) USD}`` of the analysts' estimates in ``data/prices/prices.csv``."""
    from intelligence_per_dollar.sources import assumptions

    recs = assumptions.prices()
    out = {}
    for system in hardware.systems():
        a = recs.get(economics.price_key(system))
        if a is not None:
            out[system] = (a.low, a.central, a.high)
    return out


@dataclass(frozen=True)
class Measured:
    """What the measured GPU delivers, as fractions of its datasheet, and its clock under load."""

    accelerator: str
    best_bf16_gemm_fraction: float
    sustained_bf16_fraction: float
    hbm_fraction: float
    peak_clock_mhz: float
    settled_clock_mhz: float     # median over the second half of the power test


def measured(mvd: pd.DataFrame, power: pd.DataFrame, accelerator: str) -> Measured:
    """:class:`Measured` of :func:`hardware_tables.measured_vs_datasheet` and the power trace."""
    def ratio(prefix: str) -> float:
        (v,) = mvd.loc[mvd["what"].str.startswith(prefix), "ratio"]
        return float(v)

    late = power[power["t_s"] >= power["t_s"].max() / 2]
    return Measured(accelerator, ratio("best bf16"), ratio("sustained"), ratio("HBM"),
                    float(power["sm_mhz"].max()), float(late["sm_mhz"].median()))


def ridge_point(comparison: pd.DataFrame, accelerator: str) -> float:
    """Ridge point (FLOP per HBM byte) of ``accelerator`` in a comparison table."""
    return float(comparison.set_index("accelerator").loc[accelerator, "ridge_flop_per_byte"])
