"""ipywidgets "explore" panels: controls bound to the chapters' lib functions.

One engine, :func:`explore`, serves every chapter and the Voila dashboard: a set of controls,
a ``compute`` function that calls the lib (pure, fast: it runs on every change), and a
``render`` function that turns its result into a headline table and a chart. A change to any
control recomputes and redraws. The chart library is loaded once per page by
:func:`intelligence_per_dollar.views.charts.enable`, so each redraw puts only a small embed snippet
into the output area (large HTML inside an ``ipywidgets.Output`` can hang Voila).

Chapter panels are small functions that choose controls and call :func:`explore`; the chapter
notebook and the dashboard call the same function, so one control set drives both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import ipywidgets as w
import numpy as np

_STYLE = {"description_width": "initial"}
_LAYOUT = w.Layout(width="320px")


def slider(description: str, value: float, low: float, high: float, step: float, *,
           fmt: str = ".3g", integer: bool = False) -> w.ValueWidget:
    """A float (or int) slider with a typed readout. A chapter parameter outside the control's range
    starts the slider at the nearest end, snapped to the step (the chapter itself used the value)."""
    if not (low < high and step > 0 and np.isfinite(value)):
        raise ValueError(f"slider {description!r}: need low < high, step > 0 and a finite value; "
                         f"got value={value!r}, [{low}, {high}], step={step!r}")
    value = min(max(low + round((value - low) / step) * step, low), high)
    value = int(value) if integer else float(value)
    cls = w.IntSlider if integer else w.FloatSlider
    kwargs = dict(value=value, min=low, max=high, step=step, description=description, style=_STYLE,
                  layout=_LAYOUT, continuous_update=False, readout=True)
    if not integer:
        kwargs["readout_format"] = fmt
    return cls(**kwargs)


def log_slider(description: str, value: float, low: float, high: float, *, fmt: str = ".3g") -> w.ValueWidget:
    """A slider on a log scale (for quantities spanning decades, e.g. parameters or prices)."""
    if not (0 < low < high and value > 0 and np.isfinite(value)):
        raise ValueError(f"log_slider {description!r}: value={value!r} must be a positive finite number "
                         f"and 0 < low < high (got [{low}, {high}])")
    value = min(max(value, low), high)   # outside the range: start at the nearest end
    return w.FloatLogSlider(value=value, base=10, min=_log10(low), max=_log10(high), step=0.01,
                            description=description, style=_STYLE, layout=_LAYOUT, continuous_update=False,
                            readout_format=fmt)


def dropdown(description: str, options, value=None) -> w.ValueWidget:
    opts = list(options)
    if value is not None and value not in [o[1] if isinstance(o, tuple) else o for o in opts]:
        raise ValueError(f"dropdown {description!r}: value={value!r} is not among the options")
    return w.Dropdown(options=opts, value=value if value is not None else None if not opts else
                      (opts[0][1] if isinstance(opts[0], tuple) else opts[0]),
                      description=description, style=_STYLE, layout=_LAYOUT)


def multi(description: str, options, value) -> w.ValueWidget:
    """Pick several options (e.g. accelerators to compare)."""
    return w.SelectMultiple(options=list(options), value=tuple(value), description=description, style=_STYLE,
                            layout=w.Layout(width="320px", height="110px"))


def toggle(description: str, options, value=None) -> w.ValueWidget:
    opts = list(options)
    return w.ToggleButtons(options=opts, value=value if value is not None else opts[0], description=description,
                           style={"description_width": "initial", "button_width": "70px"})


def _log10(x: float) -> float:
    import math

    return math.log10(x)


@dataclass
class Explorer:
    """A live panel. ``widget`` is what to display; ``result`` is the latest computed value."""

    controls: Mapping[str, w.ValueWidget]
    compute: Callable[..., Any]
    render: Callable[[Any], tuple[Any, Any]]
    widget: w.Widget
    headline: w.HTML
    chart_out: w.Output
    status: w.HTML
    result: Any = None
    _chart: Any = None
    compute_s: float = 0.0
    history: list[float] = field(default_factory=list)

    def values(self) -> dict[str, Any]:
        return {k: (list(c.value) if isinstance(c.value, tuple) else c.value) for k, c in self.controls.items()}

    def update(self, *_: Any) -> None:
        """Recompute from the controls and redraw the headline table and the chart."""
        t0 = time.perf_counter()
        try:
            self.result = self.compute(**self.values())
        except ValueError as ex:  # a combination the model rejects: say why, keep the last chart
            self.compute_s = time.perf_counter() - t0
            self.status.value = f"<span style='color:#b00'>Not possible: {_escape(str(ex))}</span>"
            return
        self.compute_s = time.perf_counter() - t0
        self.history.append(self.compute_s)
        table, chart = self.render(self.result)
        self._chart = chart
        self.headline.value = _table_html(table)
        self.status.value = f"<span style='color:#777'>model call {self.compute_s * 1e3:.1f} ms</span>"
        self.chart_out.clear_output(wait=True)
        if chart is not None and _in_kernel():
            with self.chart_out:
                from IPython.display import display

                display(chart)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The live widget, plus a static HTML snapshot (headline table and chart as they are now)
        for places without a kernel, such as the static book."""
        data = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        if isinstance(data, tuple):
            data = data[0]
        data = dict(data)
        data["text/html"] = self.snapshot_html()
        data.setdefault("text/plain", f"<explore panel: {', '.join(self.controls)}>")
        return data

    def snapshot_html(self) -> str:
        """The panel's current state as static HTML (controls listed with their values)."""
        from intelligence_per_dollar.views import charts

        settings = ", ".join(f"{getattr(c, 'description', k) or k} = {_fmt_value(c.value)}"
                             for k, c in self.controls.items())
        parts = [f"<div class='ipd-explore-snapshot'><p><i>Interactive in JupyterLab or the Voila dashboard "
                 f"(<code>make explore</code>); shown here at {_escape(settings)}.</i></p>", self.headline.value]
        if self._chart is not None:
            parts.append(charts.embed_html(self._chart.to_dict()))
        parts.append("</div>")
        return "\n".join(parts)


def _fmt_value(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(map(str, v)) + "]"
    return str(v)


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None


def _escape(s: str) -> str:
    import html

    return html.escape(s)


def _table_html(table) -> str:
    import pandas as pd

    if table is None:
        return ""
    if isinstance(table, str):
        return table
    if isinstance(table, pd.DataFrame):
        from intelligence_per_dollar.views import tables

        return tables.table_html(table, escape=True, classes="ipd-headline")
    raise ValueError(f"render must return a DataFrame, an HTML string or None as the table, not {type(table).__name__}")


def explore(controls: Mapping[str, w.ValueWidget], compute: Callable[..., Any],
            render: Callable[[Any], tuple[Any, Any]], *, title: str = "") -> Explorer:
    """Bind ``controls`` to ``compute(**values)`` and show ``render(result) -> (table, chart)``.

    ``compute`` must be a pure, fast lib call (the benchmark asserts < 20 ms per change).
    A ``ValueError`` from ``compute`` (an impossible combination) is shown beside the controls
    and the previous result stays on screen.
    """
    if not controls:
        raise ValueError("explore needs at least one control")
    headline = w.HTML()
    status = w.HTML()
    chart_out = w.Output()
    box = w.VBox([
        w.HTML(f"<b>{_escape(title)}</b>") if title else w.HTML(),
        w.GridBox(list(controls.values()), layout=w.Layout(grid_template_columns="repeat(2, 330px)")),
        status, headline, chart_out,
    ])
    ex = Explorer(controls=controls, compute=compute, render=render, widget=box, headline=headline,
                  chart_out=chart_out, status=status)
    for c in controls.values():
        c.observe(ex.update, names="value")
    ex.update()
    return ex
