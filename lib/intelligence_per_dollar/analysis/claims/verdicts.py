"""Verdict rules: from the book's interval (p5, p50, p95) to *supported*, *supported only if*,
*not reproduced*, *contradicted* or *cannot be checked*.

*Not reproduced* and *contradicted* differ in what the evidence excludes: a claim is *not
reproduced* when the book's central estimate (p50) misses it but the interval still reaches it
(the claim needs the assumptions at one end of their ranges), and *contradicted* only when the
whole interval misses it.

Rules (``rule`` column of ``data/claims/claims.csv``; c = claimed value, t = tolerance, p5/p50/p95
the book's interval, bar = :func:`claim_bar`):

* ``at_least`` (the quantity is c or more; bar = c / (1 + t)): *supported* if p5 >= bar;
  *supported only if* p50 >= bar (the condition says where the deciding assumption must sit);
  *not reproduced* if p50 < bar <= p95; *contradicted* if p95 < bar.
* ``at_most`` (bar = c (1 + t)): the mirror image: *supported* if p95 <= bar; *supported only if*
  p50 <= bar; *not reproduced* if p5 <= bar < p50; *contradicted* if p5 > bar.
* ``up_to`` ("up to c", a best case; bar = c / (1 + t)): judged on the best operating point:
  *supported* if its p50 >= bar; *supported only if* if only p95 reaches it; *contradicted* if
  p95 < bar.
* ``equals``: *supported* if every value of the interval is within t of c, else *contradicted*.
* ``headline``: a ratio of vendor headline figures. *Supported* if the catalogue's headline
  ratio is within t of c and the like-for-like (dense) ratio is too; *supported only if* the
  figures are read as headlines when the dense ratio differs; *contradicted* if the headline
  ratio itself differs.
* ``price_below``: the GPU saving is a procurement saving only if the rack costs less than the
  break-even price: *supported* if the analysts' high price < p5 of the break-even price;
  *contradicted* if their low price > p95; otherwise *supported only if* the rack costs less than
  the p50 break-even.
* ``unverifiable``: no primary source and nothing the book can measure: *cannot be checked*,
  whatever the estimate (which then shows what the claim would change).

An interval with a NaN is *cannot be checked* ("the book has no estimate").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from intelligence_per_dollar.analysis.claims.definitions import RULES

#: One-sided rules and the side of the bar an estimate must be on.
_AT_LEAST_SIDE = ("at_least", "up_to")


@dataclass(frozen=True)
class Verdict:
    verdict: str
    condition: str = ""


def claim_bar(claimed: float, tolerance: float, rule: str) -> float:
    """The value an estimate must reach for a one-sided claim ("approximately c") to count as met.

    ``at_least``/``up_to``: c / (1 + t); ``at_most``: c (1 + t). The tolerance is a factor, so a claim
    and its inverse set the same bar: "one-quarter the GPUs" (candidate/reference <= 0.25 x 1.1)
    and "4x fewer GPUs" (reference/candidate >= 4 / 1.1) are met by exactly the same fleets.
    """
    if tolerance < 0 or not math.isfinite(tolerance):
        raise ValueError(f"parameter tolerance={tolerance!r} is not allowed; expected a finite number >= 0")
    if rule in _AT_LEAST_SIDE:
        return claimed / (1.0 + tolerance)
    if rule == "at_most":
        return claimed * (1.0 + tolerance)
    raise ValueError(f"parameter rule={rule!r} is not allowed; allowed: at_least, up_to, at_most")


def meets_claim(value: float | None, claimed: float, tolerance: float, rule: str) -> bool:
    """Does ``value`` meet the one-sided claim ``claimed`` within ``tolerance`` (:func:`claim_bar`)?

    ``None`` or NaN (no estimate) does not. Chapter 2 ("approximately one-quarter", ``at_most``)
    and the ledger (:func:`decide`) both judge through this bar.
    """
    bar = claim_bar(claimed, tolerance, rule)
    if value is None or math.isnan(value):
        return False
    return value >= bar if rule in _AT_LEAST_SIDE else value <= bar


def _one_sided(rule: str, claimed: float, t: float, p5: float, p50: float, p95: float, condition: str) -> Verdict:
    if rule == "up_to":
        if meets_claim(p50, claimed, t, rule):
            return Verdict("supported")
        if meets_claim(p95, claimed, t, rule):
            return Verdict("supported only if", condition)
        return Verdict("contradicted")
    best, worst = (p95, p5) if rule == "at_least" else (p5, p95)
    if meets_claim(worst, claimed, t, rule):
        return Verdict("supported")
    if not meets_claim(best, claimed, t, rule):
        return Verdict("contradicted")
    if meets_claim(p50, claimed, t, rule):
        return Verdict("supported only if", condition)
    return Verdict("not reproduced", condition)


def _headline(claimed: float, t: float, p50: float, condition: str, dense_ratio: float | None) -> Verdict:
    if abs(p50 - claimed) > t * abs(claimed):
        return Verdict("contradicted")
    if dense_ratio is not None and abs(dense_ratio - claimed) > t * abs(claimed):
        return Verdict("supported only if", condition or
                       f"both figures are read as vendor headlines; like for like (dense) the ratio is "
                       f"{dense_ratio:.2f}x")
    return Verdict("supported")


def _price_below(claimed: float, p5: float, p50: float, p95: float, condition: str, price_low: float | None,
                 price_high: float | None) -> Verdict:
    lo = claimed if price_low is None else price_low
    hi = claimed if price_high is None else price_high
    if hi < p5:
        return Verdict("supported")
    if lo > p95:
        return Verdict("contradicted")
    return Verdict("supported only if", condition or f"the rack costs less than ${p50 / 1e6:.1f}M")


def decide(rule: str, claimed: float, p5: float, p50: float, p95: float, tolerance: float = 0.0, *,
           condition: str = "", dense_ratio: float | None = None, price_low: float | None = None,
           price_high: float | None = None) -> Verdict:
    """The verdict on a claim from the book's interval; the rules are in the module docstring.

    ``condition`` completes "supported only if ..." (the deciding assumption and where it must
    sit). ``dense_ratio`` is the like-for-like ratio for ``headline`` claims; ``price_low`` and
    ``price_high`` the analysts' price range for ``price_below`` claims.
    """
    if rule not in RULES:
        raise ValueError(f"parameter rule={rule!r} is not allowed; allowed: {', '.join(RULES)}")
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (p5, p50, p95)):
        return Verdict("cannot be checked", "the book has no estimate")
    if not p5 <= p50 <= p95:
        raise ValueError(f"interval p5={p5!r}, p50={p50!r}, p95={p95!r} is not ordered")
    t = float(tolerance)
    if rule == "unverifiable":
        return Verdict("cannot be checked", condition or "no primary source, and nothing the book can measure")
    if rule in ("at_least", "at_most", "up_to"):
        return _one_sided(rule, claimed, t, p5, p50, p95, condition)
    if rule == "equals":
        ok = all(abs(v - claimed) <= t * abs(claimed) + 1e-12 for v in (p5, p50, p95))
        return Verdict("supported" if ok else "contradicted")
    if rule == "headline":
        return _headline(claimed, t, p50, condition, dense_ratio)
    return _price_below(claimed, p5, p50, p95, condition, price_low, price_high)
