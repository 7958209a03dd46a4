"""Chapter 4's and the ledger chapter's computed sentences."""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis import economics_findings as ef


def setup(n_assumptions: int, n: int, seed: int, systems) -> str:
    return (f"{n_assumptions} ranged assumptions; {n:,} Monte Carlo samples, seed {seed}; "
            f"systems: {', '.join(systems)}")


def gpu_hour(g: ef.GpuHour, gph: pd.DataFrame) -> str:
    """Worked number of section 4.1: one system's GPU-hour, built up."""
    i = gph.set_index("system").loc[g.system]
    b = g.breakdown
    return (f"**Worked number** ({g.system}, central assumptions): a ${g.rack_price_usd / 1e6:.2f}M rack is "
            f"${g.price_per_gpu_usd:,.0f} per GPU; capital ${b['it_capital']:.2f}, facility "
            f"${b['facility_capital']:.2f}, power ${b['power']:.2f} and operations ${b['operations']:.2f} make "
            f"**${b['total']:.2f} per utilised GPU-hour** (interval ${i['p5']:.2f} to ${i['p95']:.2f}; "
            f"the assumption that moves it most is `{i['deciding']}`).")


def gpu_hour_takeaway(gph: pd.DataFrame, central: Mapping[str, float], candidate: str, reference: str) -> str:
    """Takeaway of section 4.1: owning vs renting, and the candidate's GPU-hour against the reference's."""
    from intelligence_per_dollar.model import economics

    p50 = gph.set_index("system")["p50"]
    text = ("**Takeaway.** Owning costs less than renting (rental carries a margin and unsold capacity), and "
            "the first-principles figure sits between SemiAnalysis's hyperscale owner cost and on-demand rental. ")
    if {candidate, reference} <= set(p50.index):
        rack = central[economics.price_key(candidate)] / central[economics.price_key(reference)]
        text += (f"Capital dominates: a Vera Rubin GPU-hour costs about {p50[candidate] / p50[reference]:.1f}x a "
                 f"GB200 one because the rack is estimated at about {rack:.1f}x the price. ")
    return text + "Utilisation and useful life move the answer most."


def workflow(w: ef.Workflow, p: float, k: int) -> str:
    """Worked number of section 4.3: one attempt vs a reliable rollback."""
    return (f"**Worked number.** At p = {p} and k = {k}, one attempt succeeds {w.success_no_retry:.1%} of the time; "
            f"a reliable rollback lifts that to {w.success_rollback:.1%} and cuts the cost per success from "
            f"${w.usd_per_success_no_retry:.4f} to ${w.usd_per_success_rollback:.4f}.")


def engineer_value(value: Mapping[str, float]) -> str:
    """Section 4.3: what an engineer's time per issue is worth."""
    return (f"An engineer's time per SWE-bench Verified issue is worth **${value['p50']:.0f}** "
            f"(${value['p5']:.0f} to ${value['p95']:.0f}); the agent's cost per resolved issue is cents to dollars. "
            f"The value per task is set by the human time it replaces, not by the token price.")


def analysts(low: float, high: float) -> str:
    return f"${low / 1e6:.1f}-{high / 1e6:.1f}M"


def break_even_takeaway(low: float, high: float) -> str:
    """Takeaway of section 4.5, against the analysts' price range."""
    return (f"**Takeaway.** Where the break-even price sits above the analysts' {analysts(low, high)}, the GPU saving "
            f"is a real procurement saving; where it sits below, the faster rack costs more per unit of work. The "
            f"GPU-hour ratio of each use, not the peak FLOP ratio, decides.")


def serving_claim(row: Mapping[str, object]) -> str:
    """Section 4.6: the ledger's estimate of the serving-cost claim."""
    return (f"**Book's estimate:** {row['estimate']} lower cost per million tokens at the best operating point; "
            f"verdict **{row['verdict']}** {row['condition']}. {row['detail']}.")


def mlperf_racks(t: pd.DataFrame, reference: str, candidate: str) -> str:
    """Section 4.6: the measured rack comparison (:func:`claims.serving.mlperf_rack_comparison`)."""
    if t.empty:
        return "**Measured.** No MLPerf round has both racks on the same benchmark."
    lo, hi = t["cost_ratio"].min(), t["cost_ratio"].max()
    th = ", ".join(f"{r['scenario']} {r['throughput_ratio']:.1f}x" for r in t.to_dict("records"))
    pw = f"{t['per_watt_ratio'].min():.2f}x to {t['per_watt_ratio'].max():.2f}x"
    return (f"**Measured.** In MLPerf Inference v6.1 a whole {candidate} rack (a preview system) served DeepSeek-R1 at "
            f"{th} the output tokens per GPU of a {reference} rack in the same round ({pw} per GPU watt at the "
            f"catalogue's power limits). At each system's cost per GPU-hour above, that is **{lo:.1f}x to {hi:.1f}x** "
            f"lower cost per million tokens, not 10x. These points are another model and other interactivities than "
            f"the "
            f"blog's (its 10x is for Kimi-K2-Thinking at a chosen interactivity), and the racks did not run alike: "
            f"the Interactive cells of the older racks state three MTP drafts, the preview rack's configuration is "
            f"unpublished, and its Server and Interactive values count tokens over MLCommons' new harness's "
            f"LoadGen-style "
            f"window (over the whole Server run, 17% fewer). The model predicted the preview rack's cells blind before "
            f"they joined its tables (chapter 3's validation, set 38 of data/runs/HELD_OUT.md)."
            + _drafts_caveat(t, reference))


def _drafts_caveat(t: pd.DataFrame, reference: str) -> str:
    """The ledger's frontier serves without speculative decoding; a measured Interactive cell of the reference rack
    with stated drafts shows what drafting buys it."""
    inter = t[(t["scenario"] == "Interactive") & ~t["speculative_tokens"].str.startswith("none")]
    if inter.empty:
        return ""
    r = inter.iloc[0]
    return (f" The ledger's estimate above serves both racks without speculative decoding. With three MTP drafts the "
            f"{reference} rack held a 15 ms p99 time per output token (99% of queries at 67 tokens/s per user or more) "
            f"at "
            f"{r[f'{reference} tokens/s/GPU']:,.0f} tokens/s per GPU, an interactivity where a frontier without drafts "
            f"leaves it little: the ledger's \"up to\" ratio is widest exactly where the reference's drafts are left "
            f"out.")


def closing(be: pd.DataFrame, low: float, high: float, gph: pd.DataFrame, reference: str, candidate: str) -> str:
    """Closing note: break-even per use against the analysts, and the GPU-hour costs."""
    gi = gph.set_index("system")
    uses = "; ".join(f"**{r['use']}**: break-even ${r['p50'] / 1e6:.1f}M ({r['p5'] / 1e6:.1f}-{r['p95'] / 1e6:.1f}M) at "
                     f"a {r['gpu_hour_ratio']:.2f}x GPU-hour ratio" for r in be.to_dict("records")
                     if np.isfinite(r["p50"]))
    return (uses + f", against analysts' {analysts(low, high)}. "
            + f"A GB200 NVL72 GPU-hour costs ${gi.loc[reference, 'p50']:.2f} (${gi.loc[reference, 'p5']:.2f}-"
              f"{gi.loc[reference, 'p95']:.2f}) to own; Vera Rubin ${gi.loc[candidate, 'p50']:.2f}.")


def verdicts(ledger: pd.DataFrame, width: int = 90) -> str:
    """The ledger as a Markdown list: claim (shortened to ``width``), estimate, verdict, deciding assumption."""
    def item(r):
        claim = r["claim"][:width] + ("…" if len(r["claim"]) > width else "")
        cond = (" " + r["condition"]) if r["verdict"] == "supported only if" else ""
        deciding = f" (deciding: {r['deciding_assumption']})" if r["deciding_assumption"] else ""
        return f"- **{claim}** — {r['estimate'] or 'no estimate'}: *{r['verdict']}*{cond}{deciding}."
    return "\n".join(item(r) for r in ledger.to_dict("records"))
