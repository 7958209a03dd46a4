"""Altair chart builders and the offline renderer, with one theme for the whole book.

Offline rendering: Altair's default HTML renderer loads Vega from a CDN (a blank chart offline),
and its "inline" template breaks with two charts on one page. :func:`enable` registers the
``ipd`` renderer instead: it emits the Vega/Vega-Lite/Vega-Embed bundle from
``vl_convert.javascript_bundle()`` **once per page** (:func:`load_js`) and a small embed
snippet per chart. The same output works in JupyterLab (trusted notebooks), Voila and the
static Jupyter Book, and makes zero network requests.

Chart builders take tidy pandas DataFrames and return ``alt.Chart`` objects; they never compute
model quantities.
"""

from __future__ import annotations

import functools
import html
import itertools
import json
import uuid

import altair as alt
import pandas as pd

#: Colours for series (accelerators, systems), stable across chapters (colour-blind-safe Tableau 10 order).
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")

#: Width in pixels of every chart's plotting area: fits the book's text column.
CHART_WIDTH = 480

_counter = itertools.count()
_state = {"bundle_emitted": False}


@functools.lru_cache(maxsize=1)
def javascript_bundle() -> str:
    """Vega + Vega-Lite + Vega-Embed as one self-contained script (about 0.9 MB)."""
    import vl_convert

    return vl_convert.javascript_bundle()


def _bundle_html() -> str:
    # Guard so that a page which shows the bundle twice (re-executed cell) defines it once; the
    # function scope keeps the bundle's top-level names (e.g. `_`) from clashing with the page's.
    js = javascript_bundle().replace("</script", "<\\/script")
    return ("<script>if(!window.__ipdVega){window.__ipdVega=true;(function(){\n" + js + "\n})();}</script>")


def load_js() -> None:
    """Display the chart library once for this page (kernel). Safe to call repeatedly."""
    from IPython.display import HTML, display

    if not _state["bundle_emitted"]:
        display(HTML(_bundle_html()))
        _state["bundle_emitted"] = True


def embed_html(spec: dict, *, div_id: str | None = None) -> str:
    """HTML snippet that draws one Vega-Lite ``spec`` with the page's bundle (SVG renderer)."""
    div_id = div_id or f"ipd-chart-{next(_counter)}-{uuid.uuid4().hex[:8]}"
    payload = json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")
    return (
        f'<div class="ipd-chart" id="{html.escape(div_id)}"></div>\n'
        "<script>(function(){var spec=" + payload + ";var n=0;"
        "function go(){if(window.vegaEmbed){window.vegaEmbed('#" + div_id + "',spec,"
        "{actions:false,renderer:'svg'}).catch(function(e){var d=document.getElementById('" + div_id + "');"
        "if(d){d.textContent='chart error: '+e;}console.error(e);});}"
        "else if(n++<200){setTimeout(go,25);}}go();})();</script>"
    )


def _renderer(spec: dict, **_kwargs) -> dict:
    text = embed_html(spec)
    if not _state["bundle_emitted"]:
        text = _bundle_html() + "\n" + text
        _state["bundle_emitted"] = True
    return {"text/html": text, "text/plain": "<Vega-Lite chart>"}


def _theme() -> dict:
    return {
        "config": {
            "view": {"continuousWidth": CHART_WIDTH, "continuousHeight": 300, "stroke": None},
            "range": {"category": list(PALETTE)},
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "gridColor": "#e6e6e6"},
            "legend": {"labelFontSize": 11, "titleFontSize": 12},
            "title": {"fontSize": 14, "anchor": "start"},
            "font": "Helvetica, Arial, sans-serif",
        }
    }


def enable() -> None:
    """Register the offline renderer and the book theme, and load the chart library once."""
    alt.renderers.register("ipd", _renderer)
    alt.renderers.enable("ipd")
    alt.theme.register("ipd", enable=True)(_theme)
    alt.data_transformers.disable_max_rows()
    try:
        get_ipython()  # type: ignore[name-defined]  # noqa: F821
    except NameError:
        return
    load_js()


# ---------------------------------------------------------------------------------------------
# Chart builders (tidy DataFrames in, charts out).
# ---------------------------------------------------------------------------------------------

def _check_columns(df: pd.DataFrame, cols: tuple[str, ...], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: data lacks column(s) {missing}; has {list(df.columns)}")


def grouped_bars(df: pd.DataFrame, *, x: str, y: str, color: str, title: str, y_title: str,
                 sort: list[str] | None = None, tooltip: list[str] | None = None,
                 log: bool = False) -> alt.Chart:
    """Bars of ``y`` per ``x`` grouped by ``color`` (e.g. headline vs dense per accelerator).

    With ``log=True`` the values are drawn as dots (bars have no meaningful base on a log
    axis). Clicking the legend highlights one group.
    """
    _check_columns(df, (x, y, color), "grouped_bars")
    sel = alt.selection_point(fields=[color], bind="legend")
    base = alt.Chart(df, title=title)
    chart = base.mark_point(filled=True, size=110) if log else base.mark_bar()
    return chart.properties(width=CHART_WIDTH).encode(
        x=alt.X(f"{x}:N", sort=sort, title=None, axis=alt.Axis(labelAngle=-30)),
        xOffset=alt.XOffset(f"{color}:N"),
        y=alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(type="log") if log else alt.Scale()),
        color=alt.Color(f"{color}:N", title=None),
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.25)),
        tooltip=tooltip or [x, color, alt.Tooltip(f"{y}:Q", format=",.3~g")],
    ).add_params(sel)


def bars(df: pd.DataFrame, *, x: str, y: str, title: str, y_title: str, color: str | None = None,
         sort: list[str] | None = None, tooltip: list[str] | None = None, label_format: str = ",.3~g",
         highlight: str | None = None) -> alt.LayerChart:
    """One bar per category with the value printed on top. ``highlight`` names a bar to mark."""
    _check_columns(df, (x, y), "bars")
    base = alt.Chart(df, title=title).encode(
        x=alt.X(f"{x}:N", sort=sort, title=None, axis=alt.Axis(labelAngle=-30)),
        y=alt.Y(f"{y}:Q", title=y_title),
        tooltip=tooltip or [x, alt.Tooltip(f"{y}:Q", format=label_format)],
    )
    if color:
        fill = alt.Color(f"{color}:N", title=None)
    elif highlight is not None:
        fill = alt.condition(alt.datum[x] == highlight, alt.value(PALETTE[1]), alt.value(PALETTE[0]))
    else:
        fill = alt.value(PALETTE[0])
    base = base.properties(width=CHART_WIDTH)
    bar = base.mark_bar().encode(color=fill)
    text = base.mark_text(dy=-6, fontSize=10).encode(text=alt.Text(f"{y}:Q", format=label_format))
    return bar + text


def roofline(curves: pd.DataFrame, *, title: str) -> alt.Chart:
    """Roofline lines (``intensity_flop_per_byte`` vs ``flop_per_s`` per ``accelerator``), log-log.

    Clicking the legend picks which accelerator's roof is emphasised.
    """
    _check_columns(curves, ("accelerator", "intensity_flop_per_byte", "flop_per_s"), "roofline")
    pick = alt.selection_point(fields=["accelerator"], bind="legend")
    return (
        alt.Chart(curves, title=title)
        .mark_line()
        .encode(
            x=alt.X("intensity_flop_per_byte:Q", scale=alt.Scale(type="log"), title="arithmetic intensity (FLOP/byte)"),
            y=alt.Y("flop_per_s:Q", scale=alt.Scale(type="log"), title="attainable FLOP/s"),
            color=alt.Color("accelerator:N", title=None),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.2)),
            tooltip=["accelerator", alt.Tooltip("intensity_flop_per_byte:Q", format=",.0f"),
                     alt.Tooltip("flop_per_s:Q", format=".3~s")],
        )
        .add_params(pick)
    )


def scatter_xy(df: pd.DataFrame, *, x: str, y: str, color: str, title: str, x_title: str, y_title: str,
               tooltip: list[str] | None = None, log_x: bool = False, log_y: bool = False,
               identity: bool = False) -> alt.LayerChart | alt.Chart:
    """Points of ``y`` against ``x`` coloured by ``color``; ``identity`` adds the y = x line."""
    _check_columns(df, (x, y, color), "scatter_xy")
    sx = alt.Scale(type="log") if log_x else alt.Scale(zero=False)
    sy = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    sel = alt.selection_point(fields=[color], bind="legend")
    pts = alt.Chart(df, title=title).mark_circle(size=70).encode(
        x=alt.X(f"{x}:Q", title=x_title, scale=sx), y=alt.Y(f"{y}:Q", title=y_title, scale=sy),
        color=alt.Color(f"{color}:N", title=None),
        opacity=alt.condition(sel, alt.value(0.9), alt.value(0.15)),
        tooltip=tooltip or [color, x, y],
    ).add_params(sel)
    if not identity:
        return pts
    lo = float(min(df[x].min(), df[y].min()))
    hi = float(max(df[x].max(), df[y].max()))
    line = alt.Chart(pd.DataFrame({x: [lo, hi], y: [lo, hi]})).mark_line(strokeDash=[4, 4], color="grey").encode(
        x=f"{x}:Q", y=f"{y}:Q")
    return line + pts


def line_xy(df: pd.DataFrame, *, x: str, y: str, color: str, title: str, x_title: str, y_title: str,
            log_x: bool = False, log_y: bool = False, tooltip: list[str] | None = None,
            points: bool = True, rule_y: float | None = None, rule_label: str | None = None) -> alt.Chart:
    """Lines of ``y`` against ``x`` per ``color``; optional horizontal reference line."""
    _check_columns(df, (x, y, color), "line_xy")
    sx = alt.Scale(type="log") if log_x else alt.Scale(zero=False)
    sy = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    sel = alt.selection_point(fields=[color], bind="legend")
    chart = alt.Chart(df, title=title).mark_line(point=points).encode(
        x=alt.X(f"{x}:Q", title=x_title, scale=sx), y=alt.Y(f"{y}:Q", title=y_title, scale=sy),
        color=alt.Color(f"{color}:N", title=None),
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.2)),
        tooltip=tooltip or [color, x, y],
    ).add_params(sel)
    if rule_y is None:
        return chart
    rule = alt.Chart(pd.DataFrame({"y": [rule_y], "label": [rule_label or ""]})).mark_rule(
        strokeDash=[6, 3], color="black").encode(y="y:Q", tooltip=["label"])
    return chart + rule
