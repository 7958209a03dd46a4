"""Ledger rows from chapter 4: the SWE-bench Verified score and what a resolved issue is worth,
and NVIDIA's "up to 10x lower cost per million tokens"."""

from __future__ import annotations

import numpy as np

from intelligence_per_dollar.analysis.claims.definitions import CANDIDATE_SYSTEM, REFERENCE_SYSTEM, Claim
from intelligence_per_dollar.analysis.claims.intervals import interval_text, mc
from intelligence_per_dollar.analysis.claims.row import Context, Row
from intelligence_per_dollar.analysis.claims.serving import (BLOG_SERVING_MODEL, serving_cost_ratio_curve,
                                                             serving_usd_per_mtok)
from intelligence_per_dollar.analysis.claims.tasks import engineer_usd_per_issue, swe_task_cost
from intelligence_per_dollar.analysis.claims.verdicts import decide
from intelligence_per_dollar.model import economics, uncertainty
from intelligence_per_dollar.sources import assumptions as assumption_files
from intelligence_per_dollar.sources import models, workloads


def swe_rate_row(c: Claim, ctx: Context) -> Row:
    """Unverifiable score; the estimate is the per-step reliability it implies over k agent steps."""
    recs = ctx.recs

    def fn(v):
        return economics.implied_step_success_probability(v["swe_bench_verified_resolve_rate"],
                                                          np.rint(v["swe_agent_steps"]))

    names = ["swe_bench_verified_resolve_rate", "swe_agent_steps"]
    r, top = mc(fn, {k: recs[k] for k in names}, ctx.n, ctx.seed)
    row = Row(c, p5=r.p5, p50=r.p50, p95=r.p95, interval=ctx.mc_label, deciding=top)
    row.estimate = f"implies per-step reliability {interval_text(r.p5, r.p50, r.p95)}"
    steps = recs["swe_agent_steps"]
    row.detail = (f"p = {recs['swe_bench_verified_resolve_rate'].central:g}^(1/k) over k = "
                  f"{steps.low:g}-{steps.high:g} agent steps; the resolve rate itself is an input")
    row.verdict = decide(c.rule, c.claimed_value, r.p5, r.p50, r.p95)
    return row


def swe_value_row(c: Claim, ctx: Context) -> Row:
    """Value of the engineer time a resolved issue saves over the agent's cost per resolved issue."""
    recs = ctx.recs
    model = workloads.serving().model

    def cost(v):
        return swe_task_cost(v, serving_usd_per_mtok(v, model, REFERENCE_SYSTEM)).usd_per_success

    def multiple(v):
        return engineer_usd_per_issue(v) / cost(v)

    r, top = mc(multiple, recs, ctx.n, ctx.seed)
    rc = uncertainty.run(cost, recs, ctx.n, ctx.seed, log_uniform="auto")
    row = Row(c, p5=r.p5, p50=r.p50, p95=r.p95, interval=ctx.mc_label, deciding=top)
    row.estimate = f"{interval_text(r.p5, r.p50, r.p95)}x the agent's cost"
    row.detail = (f"agent cost per resolved issue {interval_text(rc.p5, rc.p50, rc.p95)} USD "
                  f"({model}-class model served on {REFERENCE_SYSTEM}); engineer time per issue "
                  f"{recs['engineer_hours_per_issue'].central:g} h at ${recs['engineer_cost_usd_per_hour'].central:g}/h")
    row.verdict = decide(c.rule, c.claimed_value, r.p5, r.p50, r.p95, c.tolerance, condition=f"{top} is favourable")
    return row


def _serving_detail(best_tput: float, best_u: float, cost_ratio: float) -> str:
    w = workloads.serving()
    size = models.published(BLOG_SERVING_MODEL).total_params
    return (f"{BLOG_SERVING_MODEL}-class {size / 1e12:.0f}T MoE, {w.precision}, {w.output_tokens:,} output tokens: "
            f"{CANDIDATE_SYSTEM} serves {best_tput:.2f}x the tokens/s per GPU at {best_u:.0f} tokens/s per user "
            f"(its best point), at {cost_ratio:.2f}x the {REFERENCE_SYSTEM} cost per GPU-hour inverse; the "
            f"throughput ratio comes from chapter 3's frontier, the interval from prices")


def inference_row(c: Claim, ctx: Context) -> Row:
    """Reference over candidate USD per Mtok at the candidate's best interactivity level."""
    recs = ctx.recs
    row = Row(c, interval=f"Monte Carlo p5/p50/p95 of the best point (n={ctx.n:,}, seed {ctx.seed})")
    cur = serving_cost_ratio_curve(assumption_files.centrals(recs))
    thr = cur.pivot(index="tokens_per_s_per_user", columns="system", values="output_tokens_per_s_per_gpu")
    ok = (thr[REFERENCE_SYSTEM] > 0) & (thr[CANDIDATE_SYSTEM] > 0)
    if not ok.any():
        row.detail = "no interactivity level that both systems reach"
        row.verdict = decide(c.rule, c.claimed_value, float("nan"), float("nan"), float("nan"))
        return row
    tput_ratio = (thr[CANDIDATE_SYSTEM] / thr[REFERENCE_SYSTEM])[ok]
    best_u, best_tput = float(tput_ratio.idxmax()), float(tput_ratio.max())

    def fn(v):
        return best_tput * economics.system_usd_per_gpu_hour(v, REFERENCE_SYSTEM) \
            / economics.system_usd_per_gpu_hour(v, CANDIDATE_SYSTEM)

    r, top = mc(fn, recs, ctx.n, ctx.seed)
    row.p5, row.p50, row.p95 = r.p5, r.p50, r.p95
    row.deciding = top
    row.estimate = f"{interval_text(r.p5, r.p50, r.p95)}x at best"
    row.detail = _serving_detail(best_tput, best_u, float(fn(assumption_files.centrals(recs))) / best_tput)
    row.verdict = decide(c.rule, c.claimed_value, r.p5, r.p50, r.p95, c.tolerance,
                         condition=f"{top} is at its favourable end")
    return row
