"""Explore panel for chapter 1: like-for-like accelerator comparison."""

from __future__ import annotations

import pandas as pd

from intelligence_per_dollar.analysis import hardware_tables
from intelligence_per_dollar.sources import hardware
from intelligence_per_dollar.views import charts, widgets

DEFAULT_ACCELERATORS = ("H100-SXM", "H200", "B200", "GB200", "B300", "GB300", "VR200", "Rubin-Ultra")


def compute(precision: str, baseline: str, accelerators: list[str]) -> pd.DataFrame:
    """The like-for-like table for the panel (a thin call into :mod:`hardware_tables`)."""
    if not accelerators:
        raise ValueError("parameter accelerators is empty; pick at least one accelerator")
    ids = list(dict.fromkeys(list(accelerators) + [baseline]))
    return hardware_tables.comparison_table(ids, precision, baseline)


def render(df: pd.DataFrame):
    """The panel's table (ratios against the baseline) and its bar chart of dense FLOP/s."""
    table = df[["accelerator", "dense_flop_per_s", "native", "dense_x_baseline", "hbm_bw_x_baseline",
                "per_w_x_baseline", "ridge_flop_per_byte"]].rename(columns={
                    "dense_flop_per_s": "dense FLOP/s", "dense_x_baseline": "x baseline (FLOP/s)",
                    "hbm_bw_x_baseline": "x baseline (HBM B/s)", "per_w_x_baseline": "x baseline (per W)",
                    "ridge_flop_per_byte": "ridge FLOP/B"})
    chart = charts.bars(df, x="accelerator", y="dense_x_baseline", sort=list(df["accelerator"]),
                        title="Dense FLOP/s per GPU relative to the baseline", y_title="x baseline",
                        label_format=".2f")
    return table, chart


def panel(precision: str = "fp4", baseline: str = "GB200", accelerators=DEFAULT_ACCELERATORS) -> widgets.Explorer:
    """Controls: precision, baseline and the accelerators compared."""
    ids = list(hardware.accelerators())
    controls = {
        "precision": widgets.toggle("precision", ["fp4", "fp8", "bf16"], precision),
        "baseline": widgets.dropdown("baseline", ids, baseline),
        "accelerators": widgets.multi("accelerators", ids, accelerators),
    }
    return widgets.explore(controls, compute, render, title="Hardware, like for like")
