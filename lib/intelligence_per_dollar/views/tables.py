"""How the book's tables read: headers in words with their units, values rounded for reading
(PFLOP/s, TB/s, GB, USD M, %), booleans as words, and long tables moved to the appendix.

:func:`table_html` turns a DataFrame into the HTML the chapters show (:func:`notebook.show_table`
calls it). A column whose name ends in a unit (``_flop_per_s``, ``_bytes_per_s``, ``_bytes``,
``_w``, ``_usd``, ``_s``, ``_share`` ...) is scaled to one SI prefix for the whole column, and its
header names the unit once: ``hbm_bytes_per_s`` reads "HBM bandwidth (TB/s)" with cells "8",
"22", not "8000000000000.000000". A format the caller gives for a column wins over the rules.
"""

from __future__ import annotations

import html
import math
import re
from typing import Callable, Mapping

import pandas as pd

#: Headers for the book's common column names (anything else: words from the name).
LABELS: Mapping[str, str] = {
    "hbm_bytes_per_s": "HBM bandwidth", "hbm_bytes": "HBM", "dense_flop_per_s": "dense compute",
    "headline_flop_per_s": "headline", "headline_fp4_flop_per_s": "headline FP4",
    "scaleup_bytes_per_s_one_way": "scale-up bandwidth, one way", "scaleup_domain_gpus": "scale-up domain, GPUs",
    "power_w": "power", "system_power_w": "system power", "flop_per_s_per_w": "compute per watt",
    "dense_x_baseline": "dense vs baseline", "hbm_bw_x_baseline": "HBM bandwidth vs baseline",
    "headline_over_dense": "headline / dense", "flop_per_s_per_usd": "compute per dollar",
    "price_usd": "price", "price_low_usd": "price, low", "price_high_usd": "price, high",
    "deciding_assumption": "what would change the verdict", "deciding": "deciding assumption",
    "usd_per_gpu_hour": "USD per GPU-hour", "gpus_in_use": "GPUs in use",
}

#: Words written differently in headers.
_WORDS = {"usd": "USD", "gpu": "GPU", "gpus": "GPUs", "cpu": "CPU", "cpus": "CPUs", "hbm": "HBM", "mfu": "MFU",
          "flop": "FLOP", "kv": "KV", "rl": "RL", "mtok": "Mtok", "tco": "TCO", "ttft": "TTFT", "nic": "NIC",
          "p5": "p5", "p50": "p50", "p95": "p95", "fp4": "FP4", "fp8": "FP8", "bf16": "BF16", "tf32": "TF32", "fp64": "FP64", "fp16": "FP16", "url": "URL",
          "pue": "PUE", "wacc": "WACC", "mc": "MC", "scaleup": "scale-up", "scaleout": "scale-out"}

#: Name suffix -> (unit in the header, SI-scaled, what the cells are).
_UNITS = (
    ("_flop_per_s_per_w", ("FLOP/s/W", True)), ("_flop_per_s_per_usd", ("FLOP/s/$", True)),
    ("_flop_per_s", ("FLOP/s", True)), ("_bytes_per_s_one_way", ("B/s", True)),
    ("_bytes_per_s_bidirectional", ("B/s", True)), ("_bytes_per_s", ("B/s", True)),
    ("_bytes", ("B", True)),
    ("_tokens_per_s", ("tokens/s", False)), ("_w", ("W", True)),
    ("_usd", ("USD", False)), ("_s", ("s", False)),
)
_PLAIN_UNITS = {"flop_per_s": ("FLOP/s", True), "bytes": ("B", True), "seconds": ("s", False)}
_PERCENT = re.compile(r"(^|_)(share|fraction|error|probability|rate|utilisation|efficiency)($|_)")
_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def words(name: str) -> str:
    """A column or assumption name in words: ``usd_per_gpu_hour`` -> ``USD per GPU hour``."""
    if name in LABELS:
        return LABELS[name]
    parts = re.split(r"[_\s]+", str(name).strip("_"))
    return re.sub(r" per s\b", "/s", " ".join(_WORDS.get(p.lower(), p) for p in parts if p))


#: Trailing qualifiers after a unit (``flop_per_s_per_usd_low``): kept in the header's words.
_QUALIFIERS = ("_low", "_high", "_central", "_p5", "_p50", "_p95", "_min", "_max")


def _unit_of(col: str) -> tuple[str, str, bool] | None:
    """``(stem, unit, si_scaled)`` when ``col`` ends in a unit the book knows (before a qualifier
    such as ``_low``, which joins the stem)."""
    for q in _QUALIFIERS:
        if col.endswith(q) and len(col) > len(q):
            inner = _unit_of(col[: -len(q)])
            if inner is not None:
                stem = inner[0] or col[: -len(q)]
                return f"{LABELS.get(stem, stem)}{q}", inner[1], inner[2]
    if col in _PLAIN_UNITS:
        unit, scaled = _PLAIN_UNITS[col]
        return "", unit, scaled
    for suffix, (unit, scaled) in _UNITS:
        if col.endswith(suffix) or col == suffix[1:]:
            return col[: -len(suffix)], unit, scaled
    return None


def _finite(s: pd.Series) -> list[float]:
    out = []
    for v in s:
        if isinstance(v, (bool,)) or v is None:
            continue
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f):
            out.append(f)
    return out


def _sig(v: float, digits: int = 3) -> str:
    """``v`` to ``digits`` significant digits, thousands separated, no exponent below 1e15."""
    if v == 0:
        return "0"
    mag = math.floor(math.log10(abs(v)))
    decimals = max(digits - 1 - mag, 0)
    if decimals > 6:
        return f"{v:.{digits}g}"
    text = f"{v:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _number(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return f"{int(v):,}"
    return _sig(float(v))


def _scaled(values: list[float], unit: str) -> tuple[float, str]:
    """The SI prefix for a column: chosen by its median magnitude, so small and large rows both read."""
    mags = sorted(abs(v) for v in values if v)
    top = mags[len(mags) // 2] if mags else 0.0
    if unit == "USD":
        return (1e6, "USD M") if top >= 1e6 else (1.0, "USD")
    if unit == "B" and top >= 1e9:
        return 1e9, "GB"
    if unit == "W" and top < 1e4:
        return 1.0, "W"
    for scale, prefix in _PREFIXES:
        if top >= scale:
            return scale, f"{prefix}{unit}"
    return 1.0, unit


def column_format(col: str, s: pd.Series) -> tuple[str, Callable[[object], str]]:
    """Header and cell formatter the book uses for column ``col`` with values ``s``."""
    vals = _finite(s)
    if s.dtype == bool or (len(s) and all(isinstance(v, bool) for v in s.dropna())):
        return words(col), lambda v: "yes" if v is True or v == 1 else "no" if v is False or v == 0 else str(v)
    unit = _unit_of(col) if vals and len(vals) == len(s.dropna()) else None
    if unit is not None:
        stem, base, si_scaled = unit
        scale, label = _scaled(vals, base) if si_scaled or base == "USD" else (1.0, base)
        head = LABELS.get(col) or words(stem) or words(col)
        if base == "USD" and scale == 1.0:
            fmt = (lambda v: f"${float(v):,.2f}") if max(map(abs, vals)) < 100 else (lambda v: f"${float(v):,.0f}")
            return f"{head} (USD)", _nan_safe(fmt)
        return f"{head} ({label})", _nan_safe(lambda v: _sig(float(v) / scale))
    if vals and len(vals) == len(s.dropna()) and _PERCENT.search(col) and max(map(abs, vals)) <= 1.5:
        return f"{words(col)} (%)", _nan_safe(lambda v: f"{100 * float(v):.1f}")
    if vals and len(vals) == len(s.dropna()) and col.lower() in ("year", "years"):
        return words(col), _nan_safe(lambda v: str(int(float(v))))
    if vals and len(vals) == len(s.dropna()):
        return words(col), _nan_safe(_number)
    return words(col), lambda v: "—" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


def _nan_safe(fn: Callable[[object], str]) -> Callable[[object], str]:
    def f(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "—"
        return fn(v)
    return f


def _apply(fmt, v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return fmt(v) if callable(fmt) else fmt.format(v)


def table_html(df: pd.DataFrame, formats: Mapping[str, object] | None = None, *, caption: str | None = None,
               escape: bool = False, classes: str = "") -> str:
    """``df`` as the book's HTML table: readable headers with units, formatted cells, no index.
    ``formats`` maps a column to a format string (``'{:.3g}'``) or a callable; such a column keeps
    a header in words without a unit (its cells carry their own). Cells are raw HTML (links)
    unless ``escape``; ``classes`` are added to the table's class."""
    formats = dict(formats or {})
    heads, cells = [], []
    for col in df.columns:
        if col in formats:
            heads.append(_formatted_header(str(col)))
            fmt = formats[col]
            cells.append([_apply(fmt, v) for v in df[col]])
        else:
            head, fmt = column_format(str(col), df[col])
            heads.append(head)
            cells.append([fmt(v) for v in df[col]])
    esc = html.escape if escape else str
    numeric = [all(re.fullmatch(r"[-+$]?[\d,.]+[x%]?|—", c or "—") for c in col) for col in cells]
    # Identifiers (one short word per cell, such as GB200-NVL72) never break inside.
    ident = [not n and all(len(c) <= 16 and " " not in c and "<" not in c for c in col)
             for col, n in zip(cells, numeric)]
    cls = ["num" if n else "id" if i else "" for n, i in zip(numeric, ident)]
    rows = []
    for r in range(len(df)):
        tds = "".join(f"<td class='{k}'>{esc(c[r])}</td>" if k else f"<td>{esc(c[r])}</td>"
                      for c, k in zip(cells, cls))
        rows.append(f"<tr>{tds}</tr>")
    ths = "".join(f"<th class='num'>{html.escape(h)}</th>" if n else f"<th>{html.escape(h)}</th>"
                  for h, n in zip(heads, numeric))
    cap = f"<caption>{caption_html('Table', caption)}</caption>" if caption else ""
    return (f"<table class='ipd-table {html.escape(classes)}'>{cap}<thead><tr>{ths}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _formatted_header(col: str) -> str:
    """Header of a column the caller formats: words, with a unit that the cells do not carry
    (seconds, USD) in parentheses; SI-prefixed units are left to the caller's cells."""
    unit = _unit_of(col)
    if unit is None or unit[2]:
        return words(col)
    stem, base, _ = unit
    return f"{LABELS.get(col) or words(stem) or words(col)} ({base})"


def caption_html(kind: str, text: str) -> str:
    """A caption with a number slot the book build fills ("Figure 2.3."); the text stays as given."""
    return f"<span class='ipd-num' data-kind='{html.escape(kind)}'></span> {text}"


def provenance_summary(prov: pd.DataFrame, by: str = "accelerator") -> pd.DataFrame:
    """One row per ``by`` of a provenance table (columns ``by``, ``used``, ``kind``): how many
    values the book uses, how many of them of each kind, and how many alternatives it set aside."""
    for col in (by, "used", "kind"):
        if col not in prov.columns:
            raise ValueError(f"prov lacks column {col!r}; has {list(prov.columns)}")
    used = prov[prov["used"].astype(bool)]
    kinds = pd.crosstab(used[by], used["kind"])
    out = pd.DataFrame({by: list(dict.fromkeys(prov[by]))})
    out["values used"] = out[by].map(used.groupby(by).size()).fillna(0).astype(int)
    for kind in kinds.columns:
        out[kind] = out[by].map(kinds[kind]).fillna(0).astype(int)
    out["alternatives set aside"] = out[by].map(prov[~prov["used"].astype(bool)].groupby(by).size()).fillna(0).astype(int)
    return out


def value_with_unit(field: str, value) -> str:
    """``value`` of a data field named with its unit, in words: ``('hbm_bytes_per_s', 8e12)`` -> ``'8 TB/s'``."""
    unit = _unit_of(field)
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if field.lower() in ("year", "years"):
        return str(int(v)) if math.isfinite(v) else str(value)
    if unit is None or not math.isfinite(v):
        return _number(v)
    _, base, si_scaled = unit
    scale, label = _scaled([v], base) if si_scaled or base == "USD" else (1.0, base)
    return f"{_sig(v / scale)} {label}"


def link(url: str) -> str:
    """A source as a short link: the host name for web pages, the path for files of the project."""
    text = url.split("/")[2].removeprefix("www.") if url.startswith("http") and url.count("/") >= 2 else url
    return f"<a href='{html.escape(url, quote=True)}'>{html.escape(text)}</a>" if url.startswith("http") else \
        html.escape(url)


def provenance_view(prov: pd.DataFrame) -> pd.DataFrame:
    """A provenance table as the book shows it: values with their units, sources as short links."""
    out = prov.copy()
    if {"field", "value"} <= set(out.columns):
        out["value"] = [value_with_unit(f, v) for f, v in zip(out["field"], out["value"])]
        out["field"] = [words(f) for f in out["field"]]
    if "source_url" in out.columns:
        out = out.rename(columns={"source_url": "source"})
        out["source"] = [link(u) for u in out["source"]]
    return out


def quantity(value, unit: str) -> str:
    """``value`` in base SI ``unit`` with an SI prefix: ``quantity(7.87e14, 'FLOP/s') == '787 TFLOP/s'``."""
    v = float(value)
    if not math.isfinite(v):
        return "—"
    scale, label = _scaled([v], unit)
    return f"{_sig(v / scale)} {label}"


def with_row_units(df: pd.DataFrame, cols, unit: str = "unit") -> pd.DataFrame:
    """``df`` with each of ``cols`` written with the unit of its row (column ``unit``, then dropped)."""
    out = df.copy()
    for c in cols:
        out[c] = [quantity(v, u) for v, u in zip(df[c], df[unit])]
    return out.drop(columns=[unit])
