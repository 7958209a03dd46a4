"""One row of the ledger while it is computed (:class:`Row`), and what every row shares (:class:`Context`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from intelligence_per_dollar.analysis.claims.definitions import Claim
from intelligence_per_dollar.analysis.claims.verdicts import Verdict
from intelligence_per_dollar.sources import assumptions as assumption_files


@dataclass(frozen=True)
class Context:
    """Inputs shared by the rows of one ledger."""

    recs: Mapping[str, assumption_files.Assumption]
    n: int
    seed: int
    training_precision: str
    training_range: bool

    @property
    def mc_label(self) -> str:
        return f"Monte Carlo p5/p50/p95 (n={self.n:,}, seed {self.seed})"


@dataclass
class Row:
    """A claim, the book's interval and estimate text, and the verdict (``cannot be checked`` until decided)."""

    claim: Claim
    p5: float = float("nan")
    p50: float = float("nan")
    p95: float = float("nan")
    interval: str = ""
    estimate: str = ""
    deciding: str = ""
    detail: str = ""
    verdict: Verdict = field(default_factory=lambda: Verdict("cannot be checked"))

    def as_dict(self) -> dict:
        """The row in the ledger's columns (:data:`definitions.COLUMNS`)."""
        c = self.claim
        return {"id": c.id, "claim": c.claim, "source": c.provenance.source_url, "claimed": c.claimed_value,
                "rule": c.rule, "estimate": self.estimate,
                "p5": self.p5, "p50": self.p50, "p95": self.p95, "unit": c.unit, "interval": self.interval,
                "verdict": self.verdict.verdict, "condition": self.verdict.condition,
                "deciding_assumption": self.deciding, "section": c.section, "link": c.link, "detail": self.detail}
