"""Small presentation helpers for the chapters: number formatting, Markdown, recorded results.

``record(name, values)`` displays the chapter's headline numbers under a dedicated MIME type
(:data:`RECORD_MIME`). The static book ignores it; tests, the CLI and ``ipd compare`` read the
executed notebooks' records instead of scraping HTML.
"""

from __future__ import annotations

import json
import math
from typing import Mapping

import pandas as pd

RECORD_MIME = "application/vnd.ipd.record+json"

_SI = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def si(value: float | None, unit: str = "", digits: int = 3) -> str:
    """Format ``value`` with an SI prefix: ``si(2.5e15, 'FLOP/s') == '2.5 PFLOP/s'``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    v = float(value)
    for scale, prefix in _SI:
        if abs(v) >= scale:
            return f"{v / scale:.{digits}g} {prefix}{unit}"
    return f"{v:.{digits}g} {unit}".strip()


def md(text: str):
    """Display Markdown (used for sentences that quote computed numbers)."""
    from IPython.display import Markdown, display

    display(Markdown(text))


def _jsonable(v):
    if isinstance(v, (bool, str)) or v is None:
        return v
    if isinstance(v, (int,)):
        return int(v)
    if isinstance(v, float) or hasattr(v, "__float__"):
        f = float(v)
        if not math.isfinite(f):
            raise ValueError(f"recorded value {v!r} is not finite")
        return f
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    raise ValueError(f"cannot record value of type {type(v).__name__}")


def record(name: str, values: Mapping[str, object]) -> None:
    """Display ``values`` (numbers, strings, nested dicts/lists) as this chapter's record ``name``."""
    from IPython.display import display

    payload = {"name": name, "values": _jsonable(dict(values))}
    display({RECORD_MIME: payload, "text/plain": f"record {name}: " + json.dumps(payload["values"])[:200]},
            raw=True)


def read_records(nb_path) -> dict[str, dict]:
    """All records displayed in an executed notebook: ``{name: values}``."""
    import nbformat

    nb = nbformat.read(str(nb_path), as_version=4)
    out: dict[str, dict] = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            if RECORD_MIME in data:
                rec = data[RECORD_MIME]
                if isinstance(rec, str):
                    rec = json.loads(rec)
                out[rec["name"]] = rec["values"]
    return out


#: MIME type of a long table's full version: the static book collects these into its appendix page.
APPENDIX_MIME = "application/vnd.ipd.appendix+json"


def show_table(df: pd.DataFrame, formats: Mapping[str, object] | None = None, *, caption: str | None = None,
               appendix: str | None = None, summary: pd.DataFrame | None = None,
               summary_formats: Mapping[str, object] | None = None):
    """Display ``df`` as the book's table (:func:`views.tables.table_html`: headers in words with
    units, values rounded, booleans as words). ``formats`` maps a column to a format string
    (``'{:.3g}'``) or a callable.

    A long table goes to the appendix: with ``appendix`` (its title) the chapter shows ``summary``
    (or, without one, the first rows) and a link, and the full table is displayed under
    :data:`APPENDIX_MIME` for the book build to put on the appendix page.
    """
    from IPython.display import HTML, display

    from intelligence_per_dollar.views import tables

    if appendix is None:
        display(HTML(tables.table_html(df, formats, caption=caption)))
        return
    anchor = appendix_anchor(appendix)
    shown = summary if summary is not None else df.head(10)
    note = (f"{caption + ' ' if caption else ''}The full table ({len(df):,} rows) is in the "
            f"<a href='../appendix.html#{anchor}'>appendix: {appendix}</a>.")
    display(HTML(tables.table_html(shown, summary_formats if summary is not None else formats, caption=note)))
    full = tables.table_html(df, formats)
    display({APPENDIX_MIME: {"title": appendix, "anchor": anchor, "rows": int(len(df)), "html": full},
             "text/plain": f"[appendix table: {appendix}, {len(df)} rows]"}, raw=True)


def appendix_anchor(title: str) -> str:
    """The id of an appendix table's section (what Sphinx makes of its heading)."""
    from docutils.nodes import make_id

    return make_id(title)


def figure(chart, caption: str):
    """Display ``chart`` with a caption that states its takeaway; the book numbers it ("Figure 2.3.")."""
    from IPython.display import HTML, display

    from intelligence_per_dollar.views import tables

    display(chart)
    display(HTML(f"<p class='ipd-caption'>{tables.caption_html('Figure', caption)}</p>"))
