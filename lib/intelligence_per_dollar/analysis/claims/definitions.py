"""What the ledger checks: the claims file read into :class:`Claim` records, the systems compared,
and the ranged assumptions every estimate samples.

Each claim (the quote, its primary source, the number it asserts, the rule that judges it and the
tolerance) is a row of ``data/claims/claims.csv``; nothing here is typed in.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from intelligence_per_dollar.model import economics
from intelligence_per_dollar.sources import io
from intelligence_per_dollar.sources import assumptions as assumption_files

VERDICTS = ("supported", "supported only if", "not reproduced", "contradicted", "cannot be checked")
RULES = ("at_least", "at_most", "up_to", "equals", "headline", "price_below", "unverifiable")
#: Columns of :func:`ledger.ledger`, in order.
COLUMNS = ("id", "claim", "source", "claimed", "rule", "estimate", "p5", "p50", "p95", "unit", "interval", "verdict",
           "condition", "deciding_assumption", "section", "link", "detail")

#: Systems (rack ids of data/hardware/systems.csv) the claims compare: Vera Rubin NVL72 against GB200 NVL72.
REFERENCE_SYSTEM = "GB200-NVL72"
CANDIDATE_SYSTEM = "Vera-Rubin-NVL72"

_CLAIM_COLUMNS = ("id", "claim", "source_url", "date_read", "kind", "claimed_value", "unit", "rule", "tolerance",
                  "chapter", "section", "note")


@dataclass(frozen=True)
class Claim:
    """One quantitative claim as its source states it, and how the book judges it."""

    id: str
    claim: str
    claimed_value: float
    unit: str
    rule: str
    tolerance: float
    chapter: str
    section: str
    provenance: io.Provenance
    row: int = 0

    @property
    def link(self) -> str:
        """Relative link to the book's section that computes the estimate (Sphinx's anchor)."""
        return section_link(self.chapter, self.section)


def section_link(chapter: str, section: str = "") -> str:
    """``nbs/<chapter>.html#<anchor>``; the anchor is docutils' id of the heading text.

    Sphinx makes a section id with :func:`docutils.nodes.make_id` (lower case, runs of other
    characters to ``-``, leading digits and punctuation dropped), so the link is computed from
    the same heading text the notebook shows.
    """
    from docutils.nodes import make_id

    page = f"nbs/{chapter}.html"
    return f"{page}#{make_id(section)}" if section else page


def _claim(path: Path, row: int, rec: Mapping[str, str], seen: Mapping[str, Claim]) -> Claim:
    cid = rec["id"]
    if not cid:
        raise io.DataError(f"{path}, row {row}, column 'id': empty")
    if cid in seen:
        raise io.DataError(f"{path}, row {row}, column 'id': duplicate id '{cid}'")
    if not rec["claim"]:
        raise io.DataError(f"{path}, row {row}, column 'claim': empty")
    if rec["rule"] not in RULES:
        raise io.DataError(f"{path}, row {row}, column 'rule': '{rec['rule']}' is not one of {', '.join(RULES)}")
    value = io.parse_float(path, row, "claimed_value", rec["claimed_value"])
    tol = io.parse_float(path, row, "tolerance", rec["tolerance"], positive=True)
    prov = io.check_provenance(path, row, rec)
    return Claim(cid, rec["claim"], value, rec["unit"], rec["rule"], tol, rec["chapter"], rec["section"], prov, row)


def parse_claims(path: Path) -> Mapping[str, Claim]:
    """Read and validate a claims file; problems raise :class:`io.DataError` naming row and column."""
    path = Path(path)
    out: dict[str, Claim] = {}
    for row, rec in io.read_rows(path, _CLAIM_COLUMNS):
        c = _claim(path, row, rec, out)
        out[c.id] = c
    return MappingProxyType(out)


@functools.lru_cache(maxsize=4)
def _claims_cached(data_dir: str) -> Mapping[str, Claim]:
    return parse_claims(io.data_path("claims", "claims.csv"))


def claims() -> Mapping[str, Claim]:
    """The claims in ``data/claims/claims.csv`` keyed by id."""
    return _claims_cached(str(io.data_dir()))


def workload_assumptions() -> Mapping[str, assumption_files.Assumption]:
    """``data/assumptions/workloads.csv``: what the claims leave unstated (active parameters ...)."""
    return assumption_files.assumptions("workloads.csv")


def all_assumptions(overrides: Mapping[str, object] | None = None) -> dict[str, assumption_files.Assumption]:
    """Every ranged input of the ledger and chapter 4 (economics, tasks, prices, workloads)."""
    recs = {**assumption_files.book_assumptions(), **workload_assumptions()}
    return assumption_files.with_overrides(recs, overrides)


def overrides(rack_prices_usd: Mapping[str, float] | None = None, **named) -> dict[str, object]:
    """Assumption overrides from chapter parameters: ``None`` keeps the data's range.

    ``rack_prices_usd`` maps a system (e.g. ``"Vera-Rubin-NVL72"``) to a fixed price; every other
    keyword is an assumption name (e.g. ``pue=1.3``).
    """
    out: dict[str, object] = {k: v for k, v in named.items() if v is not None}
    for system, price in dict(rack_prices_usd or {}).items():
        out[economics.price_key(system)] = price
    return out
