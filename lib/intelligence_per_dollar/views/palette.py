"""One colour per thing, in every chart of the book: accelerators, the systems built on them,
verdicts, and a neutral sequence for everything else; and one order for legends.

A system takes the colour of its accelerator (GB200-NVL72 is GB200's blue wherever it appears),
so a reader can follow one chip from chapter 1 to chapter 4. The two chips the book compares most
(GB200 and VR200) get the two most distinct hues, blue and orange. Colours are Tableau 10/20
hues, readable by most colour-blind readers when paired with the legend's labels.

:func:`color` is what chart builders call: given the values a colour channel takes, it returns an
``alt.Color`` whose scale fixes these colours and lists the legend in a sensible order
(catalogue order for hardware, numbers by value: 200, 400, 800, 1600, not 1600, 200, ...).
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

import altair as alt

#: Colour of each accelerator id of data/hardware/accelerators.csv, in catalogue (release) order.
ACCELERATOR_COLOURS: Mapping[str, str] = {
    "A100-40GB": "#d7b5a6",   # light brown
    "A100-80GB": "#9c755f",   # brown
    "H100-SXM": "#79706e",    # dark grey
    "H100-PCIe": "#b6992d",   # olive
    "H800": "#bab0ac",        # light grey
    "H100-NVL": "#f1ce63",    # yellow
    "H20": "#d4a6c8",         # light purple
    "GH200-96GB": "#d37295",  # dark pink
    "H200": "#b07aa1",        # purple
    "GH200-144GB": "#fabfd2",  # light pink
    "H200-NVL": "#a0cbe8",    # light blue
    "B200": "#76b7b2",        # teal
    "GB200": "#4e79a7",       # blue
    "B300": "#8cd17d",        # light green
    "GB300": "#59a14f",       # green
    "VR200": "#f28e2b",       # orange
    "Rubin-Ultra": "#e15759",  # red
}

#: Colour of each verdict of the claims ledger (analysis.claims.verdicts), in reading order.
VERDICT_COLOURS: Mapping[str, str] = {
    "supported": "#59a14f",
    "supported only if": "#edc948",
    "not reproduced": "#f28e2b",
    "contradicted": "#e15759",
    "cannot be checked": "#bab0ac",
}

#: Colours for series that are neither hardware nor verdicts (stages, parts, regimes ...).
SEQUENCE = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#e15759", "#9c755f",
            "#ff9da7", "#bab0ac")

#: Two-end colours (low/high of a tornado, before/after): blue and orange.
LOW, HIGH = "#4e79a7", "#f28e2b"
#: Reference lines (claims, "as claimed") and annotations.
REFERENCE = "#333333"
#: The highlighted bar of a single-series chart, and the others.
HIGHLIGHT, MUTED = "#f28e2b", "#4e79a7"


def _system_accelerators() -> dict[str, str]:
    from intelligence_per_dollar.sources import hardware

    return {sid: spec.accelerator for sid, spec in hardware.systems().items()}


def system_colours() -> dict[str, str]:
    """Colour of each system id of data/hardware/systems.csv: its accelerator's colour."""
    return {sid: ACCELERATOR_COLOURS[acc] for sid, acc in _system_accelerators().items()
            if acc in ACCELERATOR_COLOURS}


def hardware_colours() -> dict[str, str]:
    """Accelerators then systems, each id with its colour (catalogue order)."""
    return {**ACCELERATOR_COLOURS, **system_colours()}


def _natural_key(value) -> tuple:
    """Sort key that orders embedded numbers by value: 'k=5' < 'k=20', '200' < '1600'."""
    parts = re.split(r"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)", str(value))
    return tuple((0, float(p)) if i % 2 else (1, p.lower()) for i, p in enumerate(parts) if p != "")


def order(values: Iterable) -> list:
    """The distinct ``values`` in the book's legend order: hardware ids in catalogue order,
    verdicts in reading order, anything else by natural order (numbers by value)."""
    seen = list(dict.fromkeys(v for v in values if v is not None))
    known = {**hardware_colours(), **VERDICT_COLOURS}
    if seen and all(v in known for v in seen):
        rank = {k: i for i, k in enumerate(known)}
        return sorted(seen, key=lambda v: rank[v])
    return sorted(seen, key=_natural_key)


def colours_for(values: Iterable, sort: Iterable | None = None) -> tuple[list, list[str]]:
    """``(domain, range)`` for a colour scale over ``values``: fixed colours for hardware ids and
    verdicts, :data:`SEQUENCE` in legend order (or in the order ``sort`` gives) for anything else."""
    domain = order(values)
    if sort is not None:
        first = [v for v in sort if v in set(domain)]
        domain = first + [v for v in domain if v not in set(first)]
    known = {**hardware_colours(), **VERDICT_COLOURS}
    if domain and all(v in known for v in domain):
        return domain, [known[v] for v in domain]
    if len(domain) > len(SEQUENCE):
        raise ValueError(f"values has {len(domain)} distinct series; the palette has {len(SEQUENCE)}: "
                         "group them or pick fewer")
    return domain, list(SEQUENCE[:len(domain)])


def color(field: str, values: Iterable, *, title: str | None = None, legend: bool = True,
          sort: Iterable | None = None) -> alt.Color:
    """An ``alt.Color`` on nominal ``field`` with the book's colours and legend order for ``values``
    (the values the field takes in the chart's data); ``sort`` puts the values it lists first."""
    domain, rng = colours_for(values, sort)
    kwargs = {} if legend else {"legend": None}
    return alt.Color(f"{field}:N", title=title, scale=alt.Scale(domain=domain, range=rng), sort=domain, **kwargs)
