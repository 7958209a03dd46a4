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

from intelligence_per_dollar.views import palette

#: Width of every chart: the width of the column it sits in (the book's text column, a
#: JupyterLab output area), so that no chart is clipped at a narrow window.
CHART_WIDTH = "container"

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
    """HTML snippet that draws one Vega-Lite ``spec`` with the page's bundle (SVG renderer).

    A chart as wide as its column (width ``"container"``) is drawn once the page has laid out
    (the ``load`` event; at once in a live notebook), and redrawn when its column changes width
    (Vega-Lite resizes on the window's ``resize`` event, which a ResizeObserver raises), so it
    never runs past the column's edge.
    """
    div_id = div_id or f"ipd-chart-{next(_counter)}-{uuid.uuid4().hex[:8]}"
    payload = json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")
    return (
        f'<div class="ipd-chart" id="{html.escape(div_id)}"></div>\n'
        "<script>(function(){var spec=" + payload + ";var n=0;var id='" + div_id + "';"
        "function watch(){var d=document.getElementById(id);if(!d||!window.ResizeObserver){return;}var w=d.clientWidth;"
        "new ResizeObserver(function(){if(d.clientWidth!==w){w=d.clientWidth;"
        "window.dispatchEvent(new Event('resize'));}}).observe(d);}"
        "function go(){if(window.vegaEmbed){window.vegaEmbed('#'+id,spec,"
        "{actions:false,renderer:'svg'}).then(watch).catch(function(e){var d=document.getElementById(id);"
        "if(d){d.textContent='chart error: '+e;}console.error(e);});}"
        "else if(n++<200){setTimeout(go,25);}}"
        "if(document.readyState==='complete'){go();}else{window.addEventListener('load',go);}})();</script>"
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
            "view": {"continuousWidth": 480, "continuousHeight": 300, "stroke": None},
            "range": {"category": list(palette.SEQUENCE)},
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "gridColor": "#e6e6e6", "labelLimit": 260,
                     "titleLimit": 0},
            # Legends below the plot (the column is narrow), whole labels, never cut ("as..." for "assumption").
            "legend": {"labelFontSize": 11, "titleFontSize": 12, "orient": "bottom", "direction": "horizontal",
                       "columns": 3, "labelLimit": 0, "titleLimit": 0, "symbolLimit": 0},
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


def si_scale(values, unit: str) -> tuple[float, str]:
    """``(divisor, label)`` that puts ``values`` (in base SI ``unit``, e.g. ``"B/s"``) in a
    physical unit with an SI prefix chosen from their largest magnitude: bytes/s become TB/s,
    FLOP/s PFLOP/s, so that no axis reads 1e+17 or 3,000,000,000,000."""
    finite = [abs(float(v)) for v in values if v is not None and pd.notna(v)]
    top = max(finite) if finite else 0.0
    for scale, prefix in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if top >= scale:
            return scale, f"{prefix}{unit}"
    return 1.0, unit


def _in_unit(df: pd.DataFrame, col: str, unit: str | None, title: str
             ) -> tuple[pd.DataFrame, str, str, float]:
    """``df`` with ``col`` rescaled to a prefixed ``unit`` (a new column), that column's name,
    the axis title with the unit and the divisor; unchanged when ``unit`` is None."""
    if unit is None:
        return df, col, title, 1.0
    scale, label = si_scale(df[col], unit)
    name = f"{col} ({label})"
    return df.assign(**{name: df[col] / scale}), name, f"{title} ({label})" if title else label, scale


def _color(df: pd.DataFrame, field: str, **kwargs) -> alt.Color:
    return palette.color(field, df[field], **kwargs)


def _field(name: str) -> str:
    """A column name as a Vega-Lite field (brackets, dots and colons escaped)."""
    return "".join("\\" + ch if ch in ".[]:" else ch for ch in name)


def grouped_bars(df: pd.DataFrame, *, x: str, y: str, color: str, title: str, y_title: str,
                 sort: list[str] | None = None, tooltip: list[str] | None = None,
                 log: bool = False, y_unit: str | None = None) -> alt.Chart:
    """Bars of ``y`` per ``x`` grouped by ``color`` (e.g. headline vs dense per accelerator).

    With ``log=True`` the values are drawn as dots (bars have no meaningful base on a log
    axis). ``y_unit`` (e.g. ``"FLOP/s"``) rescales ``y`` to a prefixed unit named in the axis
    title. Clicking the legend highlights one group.
    """
    _check_columns(df, (x, y, color), "grouped_bars")
    df, y, y_title, _ = _in_unit(df, y, y_unit, y_title)
    sel = alt.selection_point(fields=[color], bind="legend")
    base = alt.Chart(df, title=title)
    chart = base.mark_point(filled=True, size=110) if log else base.mark_bar()
    return chart.properties(width=CHART_WIDTH).encode(
        x=alt.X(f"{x}:N", sort=sort or palette.order(df[x]), title=None, axis=alt.Axis(labelAngle=-30)),
        xOffset=alt.XOffset(f"{color}:N", sort=palette.order(df[color])),
        y=alt.Y(f"{_field(y)}:Q", title=y_title, scale=alt.Scale(type="log") if log else alt.Scale()),
        color=_color(df, color),
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.25)),
        tooltip=tooltip or [x, color, alt.Tooltip(f"{_field(y)}:Q", format=",.3~g", title=y_title)],
    ).add_params(sel)


def bars(df: pd.DataFrame, *, x: str, y: str, title: str, y_title: str, color: str | None = None,
         sort: list[str] | None = None, tooltip: list[str] | None = None, label_format: str = ",.3~g",
         highlight: str | None = None, y_unit: str | None = None) -> alt.LayerChart:
    """One bar per category with the value printed on top. ``highlight`` names a bar to mark;
    ``y_unit`` (e.g. ``"B/s"``) rescales ``y`` to a prefixed unit named in the axis title."""
    _check_columns(df, (x, y), "bars")
    df, y, y_title, _ = _in_unit(df, y, y_unit, y_title)
    base = alt.Chart(df, title=title).encode(
        x=alt.X(f"{x}:N", sort=sort, title=None, axis=alt.Axis(labelAngle=-30)),
        y=alt.Y(f"{_field(y)}:Q", title=y_title),
        tooltip=tooltip or [x, alt.Tooltip(f"{_field(y)}:Q", format=label_format, title=y_title)],
    )
    if color:
        fill = _color(df, color)
    elif highlight is not None:
        fill = alt.condition(alt.datum[x] == highlight, alt.value(palette.HIGHLIGHT), alt.value(palette.MUTED))
    else:
        fill = alt.value(palette.MUTED)
    base = base.properties(width=CHART_WIDTH)
    bar = base.mark_bar().encode(color=fill)
    text = base.mark_text(dy=-6, fontSize=10).encode(text=alt.Text(f"{_field(y)}:Q", format=label_format))
    return bar + text


def roofline(curves: pd.DataFrame, *, title: str) -> alt.Chart:
    """Roofline lines (``intensity_flop_per_byte`` vs ``flop_per_s`` per ``accelerator``), log-log,
    attainable compute in TFLOP/s. Clicking the legend picks which accelerator's roof is emphasised.
    """
    _check_columns(curves, ("accelerator", "intensity_flop_per_byte", "flop_per_s"), "roofline")
    d = curves.assign(tflop_per_s=curves["flop_per_s"] / 1e12)
    pick = alt.selection_point(fields=["accelerator"], bind="legend")
    return (
        alt.Chart(d, title=title)
        .mark_line()
        .encode(
            x=alt.X("intensity_flop_per_byte:Q", scale=alt.Scale(type="log"), title="arithmetic intensity (FLOP/byte)",
                    axis=alt.Axis(format=",~g")),
            y=alt.Y("tflop_per_s:Q", scale=alt.Scale(type="log"), title="attainable TFLOP/s", axis=alt.Axis(format=",~g")),
            color=_color(d, "accelerator", title=None),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.2)),
            tooltip=["accelerator", alt.Tooltip("intensity_flop_per_byte:Q", format=",.0f", title="FLOP/byte"),
                     alt.Tooltip("tflop_per_s:Q", format=",.4~g", title="TFLOP/s")],
        )
        .add_params(pick)
        .properties(width=CHART_WIDTH)
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
        x=alt.X(f"{x}:Q", title=x_title, scale=sx, axis=alt.Axis(format=",~g") if log_x else alt.Axis()),
        y=alt.Y(f"{y}:Q", title=y_title, scale=sy, axis=alt.Axis(format=",~g") if log_y else alt.Axis()),
        color=_color(df, color),
        opacity=alt.condition(sel, alt.value(0.9), alt.value(0.15)),
        tooltip=tooltip or [color, x, y],
    ).add_params(sel).properties(width=CHART_WIDTH)
    if not identity:
        return pts
    lo = float(min(df[x].min(), df[y].min()))
    hi = float(max(df[x].max(), df[y].max()))
    line = alt.Chart(pd.DataFrame({x: [lo, hi], y: [lo, hi]})).mark_line(strokeDash=[4, 4], color="grey").encode(
        x=f"{x}:Q", y=f"{y}:Q")
    return line + pts


def line_xy(df: pd.DataFrame, *, x: str, y: str, color: str, title: str, x_title: str, y_title: str,
            log_x: bool = False, log_y: bool = False, tooltip: list[str] | None = None,
            points: bool = True, rule_y: float | None = None, rule_label: str | None = None,
            y_unit: str | None = None) -> alt.Chart:
    """Lines of ``y`` against ``x`` per ``color``; optional horizontal reference line (in the
    units of ``y``); ``y_unit`` rescales ``y`` to a prefixed unit named in the axis title."""
    _check_columns(df, (x, y, color), "line_xy")
    df, y_name, y_title, scale = _in_unit(df, y, y_unit, y_title)
    sx = alt.Scale(type="log") if log_x else alt.Scale(zero=False)
    sy = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    sel = alt.selection_point(fields=[color], bind="legend")
    chart = alt.Chart(df, title=title).mark_line(point=points).encode(
        x=alt.X(f"{x}:Q", title=x_title, scale=sx, axis=alt.Axis(format=",~g") if log_x else alt.Axis()),
        y=alt.Y(f"{_field(y_name)}:Q", title=y_title, scale=sy, axis=alt.Axis(format=",~g") if log_y else alt.Axis()),
        color=_color(df, color),
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.2)),
        tooltip=tooltip or [color, x, alt.Tooltip(f"{_field(y_name)}:Q", format=",.4~g", title=y_title)],
    ).add_params(sel).properties(width=CHART_WIDTH)
    if rule_y is None:
        return chart
    rule = alt.Chart(pd.DataFrame({"y": [rule_y / scale], "label": [rule_label or ""]})).mark_rule(
        strokeDash=[6, 3], color=palette.REFERENCE).encode(y="y:Q", tooltip=["label"])
    return chart + rule
