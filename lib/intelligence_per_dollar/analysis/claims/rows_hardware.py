"""Ledger rows checked against the hardware catalogue (chapter 1): headline FP4 ratios and the
Vera Rubin NVL72 rack's GPU and CPU counts."""

from __future__ import annotations

from intelligence_per_dollar.analysis import hardware_tables
from intelligence_per_dollar.analysis.claims.definitions import CANDIDATE_SYSTEM, Claim
from intelligence_per_dollar.analysis.claims.row import Context, Row
from intelligence_per_dollar.analysis.claims.verdicts import Verdict, decide
from intelligence_per_dollar.sources import hardware


def headline_row(c: Claim, ctx: Context, new: str, old: str) -> Row:
    """Headline over headline FP4 of accelerators ``new`` and ``old``, with the dense ratio beside it."""
    rec = hardware_tables.reconcile_headlines(new, old, "fp4")
    by = dict(zip(rec["comparison"], rec["ratio"]))
    head = float(by["headline vs headline"])
    dense = float(by["dense vs dense"]) if "dense vs dense" in by else None
    a, b = hardware.get(new), hardware.get(old)
    row = Row(c, p5=head, p50=head, p95=head, interval="catalogue values (no range)",
              deciding=f"what each headline counts: {new} '{a.headline_counts}', {old} '{b.headline_counts}'")
    row.estimate = f"{head:.2f}x headline; {dense:.2f}x dense" if dense else f"{head:.2f}x headline"
    row.detail = (f"{new} {a.headline_flop_per_s / 1e15:g} PF headline, {a.fp4_dense_flop_per_s / 1e15:g} PF dense; "
                  f"{old} {b.headline_flop_per_s / 1e15:g} PF headline, {b.fp4_dense_flop_per_s / 1e15:g} PF dense")
    row.verdict = decide(c.rule, c.claimed_value, head, head, head, c.tolerance, dense_ratio=dense)
    return row


def rack_row(c: Claim, ctx: Context) -> Row:
    """GPUs (and CPUs, half as many) in one Vera Rubin NVL72, from the system catalogue."""
    s = hardware.get_system(CANDIDATE_SYSTEM)
    gpus, cpus = float(s.gpus), float(s.cpus or 0)
    row = Row(c, p5=gpus, p50=gpus, p95=gpus, interval="catalogue values (no range)",
              deciding="none: a specification, checked against NVIDIA's page")
    row.estimate = f"{gpus:.0f} GPUs, {cpus:.0f} CPUs"
    row.detail = f"GPUs from {s.provenance['gpus'].source_url}; CPUs from {s.provenance['cpus'].source_url}"
    v = decide("equals", c.claimed_value, gpus, gpus, gpus, c.tolerance)
    if v.verdict == "supported" and abs(cpus - c.claimed_value / 2) > 1e-9:
        v = Verdict("contradicted")
    row.verdict = v
    return row
