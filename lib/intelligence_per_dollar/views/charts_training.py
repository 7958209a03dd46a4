"""Chart builders for chapter 2 (training). Tidy DataFrames in, Altair charts out; no model logic.

They follow :mod:`intelligence_per_dollar.views.charts` (theme, width, offline renderer).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from intelligence_per_dollar.views import palette
from intelligence_per_dollar.views.charts import CHART_WIDTH, _check_columns

__all__ = ["decomposition_bars", "memory_stacked", "predicted_vs_measured", "time_stacked",
           "regime_bars", "sensitivity_dots", "ratio_distribution", "driver_bars"]


def decomposition_bars(df: pd.DataFrame, *, title: str, claim: float = 0.25) -> alt.LayerChart:
    """One bar per step of the ratio decomposition: the cumulative GPU ratio new/old after it,
    with the claimed ratio drawn as a dashed rule. Columns: ``step``, ``ratio_to_old``, ``factor``."""
    _check_columns(df, ("step", "ratio_to_old", "factor"), "decomposition_bars")
    order = list(df["step"])
    base = alt.Chart(df, title=title).encode(
        x=alt.X("step:N", sort=order, title=None, axis=alt.Axis(labelAngle=-25)),
        y=alt.Y("ratio_to_old:Q", title="GPUs needed, relative to the baseline", scale=alt.Scale(domain=[0, 1.05])),
        tooltip=["step", alt.Tooltip("ratio_to_old:Q", format=".3f"), alt.Tooltip("factor:Q", format=".3f")],
    ).properties(width=CHART_WIDTH)
    bars = base.mark_bar(color=palette.MUTED)
    text = base.mark_text(dy=-6, fontSize=10).encode(text=alt.Text("ratio_to_old:Q", format=".2f"))
    rule = alt.Chart(pd.DataFrame({"y": [claim], "label": [f"claimed {claim:g}"]})).mark_rule(
        strokeDash=[6, 3], color=palette.REFERENCE).encode(y="y:Q", tooltip=["label"])
    return bars + text + rule


def regime_bars(df: pd.DataFrame, *, title: str, order=None) -> alt.LayerChart:
    """GPUs needed per accelerator, one bar per sizing regime side by side, labelled, on a linear
    axis from zero (a bar on a log axis has no base: it would draw with zero height).
    Columns: ``accelerator``, ``regime``, ``gpus`` (rows without GPUs are left out)."""
    _check_columns(df, ("accelerator", "regime", "gpus"), "regime_bars")
    d = df.dropna(subset=["gpus"])
    base = alt.Chart(d, title=title).encode(
        x=alt.X("accelerator:N", sort=list(order) if order is not None else palette.order(d["accelerator"]),
                title=None, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("regime:N", sort=palette.order(d["regime"])),
        y=alt.Y("gpus:Q", title="GPUs", scale=alt.Scale(zero=True), axis=alt.Axis(format="~s")),
        color=palette.color("regime", d["regime"]),
        tooltip=["accelerator", "regime", alt.Tooltip("gpus:Q", format=",.0f")],
    ).properties(width=CHART_WIDTH)
    return base.mark_bar() + base.mark_text(dy=-6, fontSize=9).encode(text=alt.Text("gpus:Q", format=".3~s"))


def sensitivity_dots(df: pd.DataFrame, *, title: str, claim: float = 0.25, central: float | None = None
                     ) -> alt.LayerChart:
    """One row per swept parameter, a dot per value at the GPU ratio it gives (columns
    ``parameter``, ``label``, ``ratio``, ``regime``), the claimed ratio as a dashed rule and the
    central ratio (if given) as a dotted one: dots left of the dashed rule are where the claim holds."""
    _check_columns(df, ("parameter", "label", "ratio", "regime"), "sensitivity_dots")
    d = df.dropna(subset=["ratio"])
    hi = max(float(d["ratio"].max()) if len(d) else 0.5, claim) * 1.15
    base = alt.Chart(d, title=title).encode(
        y=alt.Y("parameter:N", title=None, sort=list(dict.fromkeys(d["parameter"]))),
        x=alt.X("ratio:Q", title="GPUs needed: Vera Rubin / GB200", scale=alt.Scale(domain=[0, hi])),
        color=palette.color("regime", d["regime"]),
        tooltip=["parameter", "label", "regime", alt.Tooltip("ratio:Q", format=".3f")],
    ).properties(width=CHART_WIDTH)
    dots = base.mark_circle(size=90, opacity=0.85)
    text = base.mark_text(dy=-10, fontSize=9).encode(text="label:N")
    rules = pd.DataFrame({"x": [claim] + ([central] if central is not None else []),
                          "label": [f"claimed {claim:g}"] + (["central"] if central is not None else [])})
    claim_rule = alt.Chart(rules.iloc[:1]).mark_rule(strokeDash=[6, 3], color="black").encode(
        x="x:Q", tooltip=["label"])
    out = dots + text + claim_rule
    if central is not None:
        out = out + alt.Chart(rules.iloc[1:]).mark_rule(strokeDash=[2, 2], color="grey").encode(
            x="x:Q", tooltip=["label"])
    return out


def memory_stacked(df: pd.DataFrame, *, title: str) -> alt.LayerChart:
    """Stacked bars of memory per GPU by part (columns ``accelerator``, ``part``, ``bytes``) in GB,
    with each accelerator's usable HBM (column ``usable_bytes``) as a tick."""
    _check_columns(df, ("accelerator", "part", "bytes", "usable_bytes"), "memory_stacked")
    d = df.assign(gb=df["bytes"] / 1e9, usable_gb=df["usable_bytes"] / 1e9)
    d = d[d["gb"] > 0]   # a part a layout does not hold (e.g. no optimizer shard) draws no zero-height bar
    x = alt.X("accelerator:N", title=None, sort=palette.order(d["accelerator"]), axis=alt.Axis(labelAngle=0))
    bars = alt.Chart(d, title=title).mark_bar().encode(
        x=x, y=alt.Y("sum(gb):Q", title="memory per GPU (GB)"),
        color=palette.color("part", d["part"]),
        tooltip=["accelerator", "part", alt.Tooltip("gb:Q", format=",.1f", title="GB")],
    ).properties(width=CHART_WIDTH)
    cap = d.drop_duplicates("accelerator")
    ticks = alt.Chart(cap).mark_tick(color=palette.REFERENCE, thickness=2, size=40).encode(
        x=x, y="usable_gb:Q", tooltip=[alt.Tooltip("usable_gb:Q", title="usable HBM (GB)", format=",.0f")])
    return bars + ticks


def time_stacked(df: pd.DataFrame, *, title: str) -> alt.Chart:
    """Stacked bars of the share of step time by part (columns ``accelerator``, ``part``, ``share``)."""
    _check_columns(df, ("accelerator", "part", "share"), "time_stacked")
    df = df[df["share"] > 0]   # a part that takes no time draws no zero-height bar
    return alt.Chart(df, title=title).mark_bar().encode(
        x=alt.X("accelerator:N", title=None, sort=palette.order(df["accelerator"]), axis=alt.Axis(labelAngle=0)),
        y=alt.Y("sum(share):Q", title="share of the step time", axis=alt.Axis(format="%")),
        color=palette.color("part", df["part"]),
        tooltip=["accelerator", "part", alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=CHART_WIDTH)


def predicted_vs_measured(df: pd.DataFrame, *, title: str) -> alt.LayerChart:
    """Predicted / measured per case (log y), coloured by framework family, with 1 and +-10% bands;
    refused cases (no prediction) are left out. Columns: ``case``, ``group``, ``family``, ``measured``,
    ``predicted``, ``error``, ``unit``."""
    _check_columns(df, ("case", "group", "family", "measured", "predicted", "error", "unit"), "predicted_vs_measured")
    d = df[df["predicted"].notna()].assign(ratio=lambda x: x["predicted"] / x["measured"])
    # the cases in table order by their position, a number: a nominal axis sorted by the list of case names compiles
    # to one nested conditional per case, which Vega's expression parser could not hold past ~1,350 cases (its call
    # stack overflowed and the chart stayed blank)
    d = d.assign(position=range(len(d)))
    # at least 0.4-2.5, widened to every case: a fixed domain drew the cases off by 10x or more above the plot
    domain = [min(0.4, float(d["ratio"].min())), max(2.5, float(d["ratio"].max()))] if len(d) else [0.4, 2.5]
    sel = alt.selection_point(fields=["family"], bind="legend")
    pts = alt.Chart(d, title=title).mark_circle(size=70).encode(
        x=alt.X("position:Q", title=None, scale=alt.Scale(domain=[-1, max(len(d), 1)], nice=False, zero=False),
                axis=alt.Axis(labels=False, ticks=False, grid=False)),
        y=alt.Y("ratio:Q", title="predicted / measured", scale=alt.Scale(type="log", domain=domain)),
        color=palette.color("family", d["family"]),
        opacity=alt.condition(sel, alt.value(0.9), alt.value(0.15)),
        tooltip=["case", "group", "family", "unit", alt.Tooltip("measured:Q", format=",.4~g"),
                 alt.Tooltip("predicted:Q", format=",.4~g"), alt.Tooltip("error:Q", format="+.1%")],
    ).add_params(sel).properties(width=CHART_WIDTH)
    band = pd.DataFrame({"y": [0.9, 1.0, 1.1], "label": ["-10%", "exact", "+10%"]})
    rules = alt.Chart(band).mark_rule(strokeDash=[4, 4], color="grey").encode(y="y:Q", tooltip=["label"])
    return rules + pts


def ratio_distribution(df: pd.DataFrame, *, title: str, bar: float, claim: float = 0.25) -> alt.LayerChart:
    """Histogram of the sampled GPU ratio (columns ``ratio``, ``regime``; samples with an
    unbounded ratio are left out), stacked by regime, with the claimed ratio (dashed) and the
    largest ratio that still reproduces it (dotted): samples left of the dotted rule meet the claim."""
    _check_columns(df, ("ratio", "regime"), "ratio_distribution")
    d = df[pd.to_numeric(df["ratio"]).between(0, float("inf"), inclusive="left")]
    bars = alt.Chart(d, title=title).mark_bar(opacity=0.85).encode(
        x=alt.X("ratio:Q", bin=alt.Bin(step=0.02), title="GPUs needed: Vera Rubin / GB200"),
        y=alt.Y("count():Q", title="samples", stack=True),
        color=palette.color("regime", d["regime"]),
        tooltip=["regime", alt.Tooltip("count():Q", title="samples")],
    ).properties(width=CHART_WIDTH)
    rules = pd.DataFrame({"x": [claim, bar], "label": [f"claimed {claim:g}", f"reproduces it up to {bar:.3g}"],
                          "dash": ["claimed", "bar"]})
    rule = alt.Chart(rules).mark_rule(color=palette.REFERENCE).encode(
        x="x:Q", tooltip=["label"],
        strokeDash=alt.StrokeDash("dash:N", scale=alt.Scale(domain=["claimed", "bar"], range=[[6, 3], [2, 2]]),
                                  legend=None))
    return bars + rule


def driver_bars(df: pd.DataFrame, *, title: str) -> alt.LayerChart:
    """Global sensitivity: one horizontal bar per sampled assumption at its partial rank
    correlation with the GPU ratio (columns ``label``, ``prcc``), strongest first; right of zero,
    raising the assumption raises the ratio (fewer GPUs saved)."""
    _check_columns(df, ("label", "prcc"), "driver_bars")
    d = df.dropna(subset=["prcc"]).assign(direction=lambda x: ["raises the ratio" if v > 0 else "lowers the ratio"
                                                               for v in x["prcc"]])
    base = alt.Chart(d, title=title).encode(
        y=alt.Y("label:N", sort=list(d["label"]), title=None),
        x=alt.X("prcc:Q", title="partial rank correlation with the GPU ratio", scale=alt.Scale(domain=[-1, 1])),
        tooltip=["label", alt.Tooltip("prcc:Q", format="+.2f")],
    ).properties(width=CHART_WIDTH)
    bars = base.mark_bar().encode(color=palette.color("direction", d["direction"], legend=False))
    text = base.mark_text(align="left", dx=4, fontSize=9).encode(text=alt.Text("prcc:Q", format="+.2f"))
    return bars + text
