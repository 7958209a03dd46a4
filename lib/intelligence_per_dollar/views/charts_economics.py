"""Chart builders for chapter 4 and the claims ledger (tidy DataFrames in, Altair charts out).

Same conventions as :mod:`.charts`: width :data:`charts.CHART_WIDTH`, the book's palette, legend
click to highlight, and no model computation here. Interactive parts are Vega-Lite parameters
(sliders bound with ``alt.binding_range``), so they keep working in the static book without a
kernel.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from intelligence_per_dollar.views import palette, tables
from intelligence_per_dollar.views.charts import CHART_WIDTH, _check_columns

#: Labels of the $/GPU-hour components (economics.BUILDUP_COMPONENTS).
COMPONENT_LABELS = {"it_capital": "IT capital (depreciation + return)", "facility_capital": "facility capital",
                    "colocation": "colocation rent", "power": "power", "operations": "operations"}


def buildup_bars(buildup: pd.DataFrame, market: pd.DataFrame | None = None, *, title: str,
                 sort: list[str] | None = None) -> alt.LayerChart | alt.Chart:
    """Stacked $/GPU-hour build-up per system, with market rates beside it.

    ``buildup``: long table (system, component, usd_per_gpu_hour), e.g. economics.buildup_table.
    ``market`` (optional): system, kind (e.g. "rental", "owner TCO (SemiAnalysis)"), low,
    central, high: drawn as ticks with a low-high rule.
    """
    _check_columns(buildup, ("system", "component", "usd_per_gpu_hour"), "buildup_bars")
    df = buildup[buildup["usd_per_gpu_hour"] > 0].copy()
    df["part"] = df["component"].map(COMPONENT_LABELS).fillna(df["component"])
    order = [COMPONENT_LABELS[k] for k in COMPONENT_LABELS if COMPONENT_LABELS[k] in set(df["part"])]
    df["order"] = df["part"].map({p: i for i, p in enumerate(order)})
    sel = alt.selection_point(fields=["part"], bind="legend")
    x = alt.X("system:N", sort=sort, title=None, axis=alt.Axis(labelAngle=-30))
    bars = alt.Chart(df, title=title).mark_bar(size=28).encode(
        x=x, y=alt.Y("sum(usd_per_gpu_hour):Q", title="USD per utilised GPU-hour"),
        color=palette.color("part", df["part"], sort=order, title="first principles"),
        order=alt.Order("order:Q"),
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.25)),
        tooltip=["system", "part", alt.Tooltip("usd_per_gpu_hour:Q", format="$.2f")],
    ).add_params(sel).properties(width=CHART_WIDTH)
    if market is None or market.empty:
        return bars
    _check_columns(market, ("system", "kind", "low", "central", "high"), "buildup_bars market")
    shape = alt.Shape("kind:N", title="market", scale=alt.Scale(range=["diamond", "triangle-up", "square"]))
    rule = alt.Chart(market).mark_rule(strokeWidth=2, color="black").encode(
        x=x, y="low:Q", y2="high:Q", xOffset=alt.XOffset("kind:N"))
    pts = alt.Chart(market).mark_point(filled=True, size=90, color="black").encode(
        x=x, y="central:Q", shape=shape, xOffset=alt.XOffset("kind:N"),
        tooltip=["system", "kind", alt.Tooltip("low:Q", format="$.2f"), alt.Tooltip("central:Q", format="$.2f"),
                 alt.Tooltip("high:Q", format="$.2f")])
    return alt.layer(bars, rule, pts).resolve_scale(color="independent")


def cost_vs_reliability(curves: pd.DataFrame, *, title: str, p_start: float = 0.95, p_min: float | None = None,
                        p_max: float = 1.0, step: float = 0.001, series: str = "series",
                        y_title: str = "USD per successful task (log)") -> alt.LayerChart:
    """Cost per successful task against per-step reliability p, one line per ``series``.

    A slider (a Vega-Lite parameter bound to ``alt.binding_range``) moves a vertical rule to a
    chosen p and labels each line's cost there, so the static page stays interactive.
    ``curves``: columns p, usd_per_success, and ``series``; ``p`` on a grid of step ``step``.
    """
    _check_columns(curves, ("p", "usd_per_success", series), "cost_vs_reliability")
    df = curves[pd.notna(curves["usd_per_success"])].copy()
    df = df[df["usd_per_success"] < float("inf")]
    lo = float(df["p"].min()) if p_min is None else p_min
    p_param = alt.param(name="p_step", value=p_start,
                        bind=alt.binding_range(min=lo, max=p_max, step=step, name="per-step reliability p "))
    sel = alt.selection_point(fields=[series], bind="legend")
    base = alt.Chart(df, title=title)
    lines = base.mark_line().encode(
        x=alt.X("p:Q", title="per-step reliability p", scale=alt.Scale(domain=[lo, p_max])),
        y=alt.Y("usd_per_success:Q", title=y_title, scale=alt.Scale(type="log")),
        color=palette.color(series, df[series]),
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.15)),
        tooltip=[series, alt.Tooltip("p:Q", format=".3f"), alt.Tooltip("usd_per_success:Q", format="$,.3~g")],
    ).add_params(sel).properties(width=CHART_WIDTH)
    rule = base.mark_rule(strokeDash=[4, 3], color="grey").encode(x="p_rule:Q").transform_calculate(
        p_rule="p_step").transform_aggregate(n="count()", groupby=["p_rule"])
    near = f"abs(datum.p - p_step) < {step / 2 + 1e-12}"
    dots = base.mark_point(filled=True, size=60).encode(
        x="p:Q", y="usd_per_success:Q", color=palette.color(series, df[series]),
        tooltip=[series, alt.Tooltip("p:Q", format=".3f"), alt.Tooltip("usd_per_success:Q", format="$,.3~g")],
    ).transform_filter(near)
    labels = base.mark_text(align="left", dx=6, dy=-6, fontSize=10).encode(
        x="p:Q", y="usd_per_success:Q", text=alt.Text("usd_per_success:Q", format="$,.3~g"),
        color=palette.color(series, df[series]),
    ).transform_filter(near)
    return alt.layer(lines, rule, dots, labels).add_params(p_param)


def interval_points(df: pd.DataFrame, *, x: str, title: str, x_title: str, y: str = "label",
                    color: str | None = None, log: bool = False, sort: list[str] | None = None,
                    fmt: str = ",.3~g", rule_x: float | None = None, rule_label: str = "") -> alt.LayerChart:
    """Median with a p5-p95 error bar per row (columns ``p5``, ``p50``, ``p95``), one row per ``y``."""
    _check_columns(df, (y, "p5", "p50", "p95"), "interval_points")
    scale = alt.Scale(type="log") if log else alt.Scale(zero=False)
    enc_color = palette.color(color, df[color]) if color else alt.value(palette.MUTED)
    yy = alt.Y(f"{y}:N", sort=sort, title=None)
    base = alt.Chart(df, title=title)
    bar = base.mark_rule(strokeWidth=3).encode(
        y=yy, x=alt.X("p5:Q", title=x_title, scale=scale), x2="p95:Q", color=enc_color)
    pt = base.mark_point(filled=True, size=90).encode(
        y=yy, x="p50:Q", color=enc_color,
        tooltip=[y, alt.Tooltip("p5:Q", format=fmt), alt.Tooltip("p50:Q", format=fmt), alt.Tooltip("p95:Q", format=fmt)])
    text = base.mark_text(align="left", dx=8, dy=-8, fontSize=10).encode(
        y=yy, x="p50:Q", text=alt.Text("p50:Q", format=fmt))
    layers = [bar, pt, text]
    if rule_x is not None:
        layers.append(alt.Chart(pd.DataFrame({"x": [rule_x], "label": [rule_label]})).mark_rule(
            strokeDash=[6, 3], color="black").encode(x="x:Q", tooltip=["label"]))
    return alt.layer(*layers).properties(width=CHART_WIDTH)


def break_even(df: pd.DataFrame, *, title: str, analyst_low: float, analyst_high: float,
               analyst_label: str = "analysts' estimate") -> alt.LayerChart:
    """Break-even rack price per use (rows: ``use``, ``p5``, ``p50``, ``p95`` in USD) against the
    analysts' price band (shaded)."""
    _check_columns(df, ("use", "p5", "p50", "p95"), "break_even")
    d = df.assign(p5_m=df["p5"] / 1e6, p50_m=df["p50"] / 1e6, p95_m=df["p95"] / 1e6)
    band = alt.Chart(pd.DataFrame({"lo": [analyst_low / 1e6], "hi": [analyst_high / 1e6],
                                   "label": [analyst_label]})).mark_rect(opacity=0.18, color=palette.HIGHLIGHT).encode(
        x="lo:Q", x2="hi:Q", tooltip=["label", alt.Tooltip("lo:Q", format="$.2f"), alt.Tooltip("hi:Q", format="$.2f")])
    band_text = alt.Chart(pd.DataFrame({"lo": [analyst_low / 1e6], "label": [analyst_label]})).mark_text(
        align="left", dx=3, dy=-4, baseline="bottom", fontSize=10, color=palette.HIGHLIGHT).encode(
        x="lo:Q", y=alt.value(0), text="label:N")
    yy = alt.Y("use:N", sort=list(d["use"]), title=None)
    bar = alt.Chart(d, title=title).mark_rule(strokeWidth=3, color=palette.MUTED).encode(
        y=yy, x=alt.X("p5_m:Q", title="Vera Rubin NVL72 rack price at which it costs the same as GB200 NVL72 (USD M)",
                      scale=alt.Scale(zero=True)), x2="p95_m:Q")
    pt = alt.Chart(d).mark_point(filled=True, size=100, color=palette.MUTED).encode(
        y=yy, x="p50_m:Q", tooltip=["use", alt.Tooltip("p5_m:Q", format="$.2f"), alt.Tooltip("p50_m:Q", format="$.2f"),
                                    alt.Tooltip("p95_m:Q", format="$.2f")])
    text = alt.Chart(d).mark_text(align="left", dx=8, dy=-8, fontSize=10).encode(
        y=yy, x="p50_m:Q", text=alt.Text("p50_m:Q", format="$.1f"))
    return alt.layer(band, band_text, bar, pt, text).properties(width=CHART_WIDTH)


def tornado(df: pd.DataFrame, *, title: str, x_title: str, top: int = 10, fmt: str = ",.3~g",
            x_scale: float = 1.0) -> alt.LayerChart:
    """Tornado: for each assumption (uncertainty.tornado rows), a bar from the output at its low
    value to the output at its high value, ranked by swing; the central output as a rule.
    Outputs are divided by ``x_scale`` (1e6 for USD M); assumption names are shown in words;
    assumptions that do not move the output (zero swing: a bar with no width) are left out."""
    _check_columns(df, ("name", "output_at_low", "output_at_high", "output_central", "swing"), "tornado")
    if not x_scale > 0:
        raise ValueError(f"x_scale={x_scale!r} must be a positive number")
    d = df[df["swing"] > 0].head(top).copy()
    d["name"] = [tables.words(n) for n in d["name"]]
    for col in ("output_at_low", "output_at_high", "output_central"):
        d[col] = d[col] / x_scale
    long = pd.concat([
        d.assign(end="at low", value=d["output_at_low"], setting=d["low"] if "low" in d else None),
        d.assign(end="at high", value=d["output_at_high"], setting=d["high"] if "high" in d else None),
    ], ignore_index=True)
    long["base"] = float(d["output_central"].iloc[0]) if len(d) else 0.0
    long = long[long["value"] != long["base"]]   # an end that does not move the output draws no bar
    order = list(d["name"])
    yy = alt.Y("name:N", sort=order, title=None)
    bars = alt.Chart(long, title=title).mark_bar(height=14).encode(
        y=yy, x=alt.X("value:Q", title=x_title, scale=alt.Scale(zero=False)), x2="base:Q",
        color=alt.Color("end:N", title="assumption", scale=alt.Scale(domain=["at low", "at high"],
                                                                     range=[palette.LOW, palette.HIGH])),
        tooltip=["name", "end", alt.Tooltip("setting:Q", format=",.4~g"), alt.Tooltip("value:Q", format=fmt)])
    rule = alt.Chart(pd.DataFrame({"x": [float(d["output_central"].iloc[0]) if len(d) else 0.0]})).mark_rule(
        color=palette.REFERENCE).encode(x="x:Q")
    return alt.layer(bars, rule).properties(width=CHART_WIDTH)


def top_assumption(df: pd.DataFrame) -> str:
    """The assumption of a tornado table (uncertainty.tornado rows) with the largest swing, in words."""
    _check_columns(df, ("name", "swing"), "top_assumption")
    if df.empty:
        raise ValueError("df has no rows: a tornado needs at least one assumption")
    return tables.words(df.loc[df["swing"].idxmax(), "name"])


def verdict_bars(counts: dict[str, int], *, title: str) -> alt.LayerChart:
    """How many claims got each verdict (a verdict no claim got keeps its row and its 0, with no bar)."""
    df = pd.DataFrame({"verdict": list(counts), "claims": list(counts.values())})
    base = alt.Chart(df, title=title).encode(
        y=alt.Y("verdict:N", sort=palette.order(df["verdict"]), title=None),
        x=alt.X("claims:Q", title="claims", axis=alt.Axis(tickMinStep=1, format="d")))
    bar = base.mark_bar().transform_filter("datum.claims > 0").encode(
        color=palette.color("verdict", df["verdict"], legend=False), tooltip=["verdict", "claims"])
    text = base.mark_text(align="left", dx=4).encode(text="claims:Q")
    return (bar + text).properties(width=CHART_WIDTH, height=120)


__all__ = ["buildup_bars", "cost_vs_reliability", "interval_points", "break_even", "tornado", "top_assumption",
           "verdict_bars", "COMPONENT_LABELS"]
