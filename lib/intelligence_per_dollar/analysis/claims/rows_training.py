"""Ledger rows from chapter 2's 10T training target: the "one-quarter the GPUs" claim, and the
break-even rack price that turns that GPU ratio into a procurement saving."""

from __future__ import annotations

import math

from intelligence_per_dollar.analysis.claims.definitions import CANDIDATE_SYSTEM, REFERENCE_SYSTEM, Claim
from intelligence_per_dollar.analysis.claims.intervals import interval_text, mc
from intelligence_per_dollar.analysis.claims.pretraining import training_gpu_ratio
from intelligence_per_dollar.analysis.claims.row import Context, Row
from intelligence_per_dollar.analysis.claims.verdicts import Verdict, decide
from intelligence_per_dollar.analysis.sweeps import gpu_ratio
from intelligence_per_dollar.model import economics
from intelligence_per_dollar.sources import io, workloads


def _claim_as_workload_states(c: Claim) -> tuple[float, float]:
    """(claimed reference/candidate GPU ratio, tolerance) from :func:`workloads.training`, which must
    agree with the claims file's row (one claim, one number)."""
    w = workloads.training()
    claimed, tol = 1.0 / w.claimed_gpu_ratio, w.claim_tolerance
    if not (math.isclose(claimed, c.claimed_value) and math.isclose(tol, c.tolerance)):
        raise io.DataError(f"data/claims/claims.csv row {c.row} ('{c.id}'): claimed_value={c.claimed_value:g}, "
                           f"tolerance={c.tolerance:g} disagree with data/workloads/workloads.csv '{w.name}': "
                           f"1/claimed_gpu_ratio={claimed:g}, claim_tolerance={tol:g}")
    return claimed, tol


def _side(d) -> str:
    if not d.feasible:
        return f"no feasible GPU count ({d.message})"
    return f"{d.gpus:,} GPUs ({d.racks} racks, MFU {d.estimate.mfu:.1%}, {d.days_needed:.1f} days)"


def _inverse(v: float) -> float:
    """1 / v, with 1 / 0 = +inf (a reference that cannot meet the deadline) and 1 / inf = 0."""
    return math.inf if v == 0 else 1.0 / v


def _joint(ctx: Context, claimed_gpu_ratio: float, tolerance: float) -> gpu_ratio.RatioUncertainty:
    """The joint sweep of chapter 2 (cached), with the ledger's active-parameter range and precision."""
    w = workloads.training()
    s = gpu_ratio.spec(active_params=ctx.recs[w.active_params_assumption], precision=ctx.training_precision)
    return gpu_ratio.summarise(gpu_ratio.table(s), s, claimed_gpu_ratio, tolerance)


def training_row(c: Claim, ctx: Context) -> Row:
    """Reference GPUs over candidate GPUs for the 10T target in the claim's regime: the central
    case, and the joint interval of chapter 2's sweep (every deciding assumption sampled together,
    the model's validated error included; :mod:`intelligence_per_dollar.analysis.sweeps.gpu_ratio`)."""
    w = workloads.training()
    claimed, tol = _claim_as_workload_states(c)
    a = ctx.recs[w.active_params_assumption]
    r_c, ref, cand = training_gpu_ratio(a.central, ctx.training_precision)
    row = Row(c, deciding=f"{w.active_params_assumption} (NVIDIA states none)")
    if math.isnan(r_c):
        row.detail = f"{ref.message}; {cand.message}"
        row.verdict = Verdict("cannot be checked", f"{CANDIDATE_SYSTEM} cannot meet the deadline in chapter 2's model")
        return row
    row.detail = (f"{w.claim_regime} regime, central assumptions: {REFERENCE_SYSTEM}: {_side(ref)}; "
                  f"{CANDIDATE_SYSTEM}: {_side(cand)}; {ctx.training_precision}, {w.tokens / 1e12:g}T tokens, "
                  f"{w.days:g} days")
    if not ctx.training_range:
        row.p5 = row.p50 = row.p95 = float(r_c)
        row.interval = f"central assumptions only ({w.claim_regime} regime)"
        row.estimate = interval_text(row.p5, row.p50, row.p95) + "x"
        row.verdict = decide(c.rule, claimed, row.p5, row.p50, row.p95, tol)
        return row
    u = _joint(ctx, w.claimed_gpu_ratio, tol)
    # the sweep's ratio is candidate / reference GPUs; the ledger states the claim as its inverse
    row.p5, row.p50, row.p95 = (_inverse(v) for v in (u.p95, u.p50, u.p5))
    row.interval = (f"joint sweep of chapter 2: {u.samples} samples of {len(u.drivers)} assumptions drawn together "
                    f"(model error included), p5-p95; central case {r_c:.2f}x")
    row.estimate = interval_text(row.p5, row.p50, row.p95) + "x"
    row.deciding = ", ".join(u.top(2))
    row.verdict = decide(c.rule, claimed, row.p5, row.p50, row.p95, tol, condition=gpu_ratio.condition(u))
    return row


def break_even_row(c: Claim, ctx: Context) -> Row:
    """Candidate rack price at which the 10T target costs the same on both systems, against analysts' prices."""
    recs = ctx.recs
    a = recs[workloads.training().active_params_assumption]
    ratio, _, _ = training_gpu_ratio(a.central, ctx.training_precision)
    row = Row(c, interval=ctx.mc_label)
    if not math.isfinite(ratio):
        row.detail = ("chapter 2 finds no feasible configuration for "
                      + (CANDIDATE_SYSTEM if math.isnan(ratio) else REFERENCE_SYSTEM) + "; no finite GPU ratio to price")
        row.verdict = Verdict("cannot be checked", row.detail)
        return row

    def fn(v):
        return economics.system_break_even_price_usd(v, CANDIDATE_SYSTEM, REFERENCE_SYSTEM, ratio)

    sub = {k: recs[k] for k in recs if not k.startswith(CANDIDATE_SYSTEM)}
    r, top = mc(fn, sub, ctx.n, ctx.seed)
    row.p5, row.p50, row.p95 = r.p5, r.p50, r.p95
    row.deciding = top
    row.estimate = f"break-even {interval_text(r.p5, r.p50, r.p95, 'USD')} per rack"
    price = recs[economics.price_key(CANDIDATE_SYSTEM)]
    row.detail = (f"GPU ratio {ratio:.2f}x from chapter 2 (central active parameters), {REFERENCE_SYSTEM} at "
                  f"${recs[economics.price_key(REFERENCE_SYSTEM)].central / 1e6:.2f}M; analysts put the "
                  f"{CANDIDATE_SYSTEM} rack at ${price.low / 1e6:.1f}-{price.high / 1e6:.1f}M")
    row.verdict = decide(c.rule, price.central, r.p5, r.p50, r.p95, c.tolerance, price_low=price.low,
                         price_high=price.high)
    return row
