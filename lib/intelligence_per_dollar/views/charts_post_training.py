"""Chart builders for chapter 3 (post-training), in the book's theme (see :mod:`.charts`).

Builders take tidy DataFrames and return Altair charts; they compute no model quantities.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from intelligence_per_dollar.views import palette
from intelligence_per_dollar.views.charts import CHART_WIDTH, _check_columns


def stacked_bars(df: pd.DataFrame, *, x: str, y: str, color: str, title: str, y_title: str,
                 sort: list[str] | None = None, stack_order: list[str] | None = None,
                 tooltip: list | None = None) -> alt.Chart:
    """One bar per ``x`` made of ``color`` segments of height ``y`` (e.g. RL step time by stage)."""
    _check_columns(df, (x, y, color), "stacked_bars")
    sel = alt.selection_point(fields=[color], bind="legend")
    domain, _ = palette.colours_for(df[color], stack_order)
    df = df.assign(_stack=df[color].map({v: i for i, v in enumerate(domain)}))
    return alt.Chart(df, title=title).mark_bar().properties(width=CHART_WIDTH).encode(
        x=alt.X(f"{x}:N", sort=sort, title=None, axis=alt.Axis(labelAngle=-20)),
        y=alt.Y(f"{y}:Q", title=y_title, stack="zero"),
        color=palette.color(color, df[color], sort=stack_order),
        order=alt.Order("_stack:Q"),
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.3)),
        tooltip=tooltip or [x, color, alt.Tooltip(f"{y}:Q", format=",.3~g")],
    ).add_params(sel)


def frontier(df: pd.DataFrame, *, x: str = "tokens_per_s_per_user", y: str = "output_tokens_per_s_per_gpu",
             color: str = "system", title: str, x_title: str = "tokens/s per user (interactivity)",
             y_title: str = "output tokens/s per GPU (throughput)") -> alt.Chart:
    """Throughput-interactivity frontiers, log-log, one line per ``color``, with $/Mtok in the tooltip."""
    _check_columns(df, (x, y, color), "frontier")
    tips = [color, alt.Tooltip(f"{x}:Q", format=",.3~g"), alt.Tooltip(f"{y}:Q", format=",.4~g")]
    for extra in ("concurrency", "usd_per_mtok", "ttft_s"):
        if extra in df.columns:
            tips.append(alt.Tooltip(f"{extra}:Q", format=",.3~g"))
    sel = alt.selection_point(fields=[color], bind="legend")
    return alt.Chart(df, title=title).mark_line(point=False).properties(width=CHART_WIDTH).encode(
        x=alt.X(f"{x}:Q", title=x_title, scale=alt.Scale(type="log"), axis=alt.Axis(format=",~g")),
        y=alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(type="log"), axis=alt.Axis(format=",~g")),
        color=palette.color(color, df[color]),
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.2)),
        tooltip=tips,
    ).add_params(sel)
