"""Chapter 2's computed sentences (:mod:`intelligence_per_dollar.analysis.training` results)."""

from __future__ import annotations

import math
from typing import Mapping

import pandas as pd

from intelligence_per_dollar.analysis import outliers
from intelligence_per_dollar.analysis import training as at
from intelligence_per_dollar.analysis.claims import intervals
from intelligence_per_dollar.analysis.sweeps import gpu_ratio
from intelligence_per_dollar.model import architecture
from intelligence_per_dollar.sources.hardware import Accelerator
from intelligence_per_dollar.views.notebook import si

#: A decomposition share below this is "a minor part".
MINOR_SHARE = 0.1
#: Memory "binds" when the fullest chosen layout fills more than this fraction of usable HBM.
MEMORY_BINDS_FILL = 0.8
#: GEMM time "sets the pace" when it is at least this share of the step in some layout.
GEMM_SETS_PACE = 0.5
#: Peak FLOP/s "explains most of the gain" from this share of log(ratio) up.
MOST = 0.5
#: The batch of regime (b) is "beyond" the critical-batch estimate above this multiple of it.
BEYOND_CRITICAL_BATCH = 1.5


def workload(total_params: float, active_params: float, tokens: float, days: float, precision: str, seq_len: int,
             global_batch: str, global_batch_tokens: float) -> str:
    """One line stating the chapter's workload."""
    return (f"{si(total_params)} total / {si(active_params)} active, {si(tokens)} tokens in {days:g} days, "
            f"{precision}, seq {seq_len}, global batch {si(global_batch_tokens)} tokens ({global_batch}).")


def peak_gap(gap: at.PeakGap, claimed_ratio: float) -> str:
    """How much of the claimed GPU saving the dense peak alone covers."""
    extra = gap.extra_needed(claimed_ratio)
    return (f"Per GPU, the dense {gap.precision} peak rises {gap.ratio:.2f}x from {gap.baseline} to {gap.challenger} "
            f"({si(gap.baseline_flop_per_s, 'FLOP/s')} to {si(gap.challenger_flop_per_s, 'FLOP/s')}, chapter 1), "
            f"so a {1 / claimed_ratio:g}x saving in GPUs "
            + (f"needs a further {extra - 1:.0%} from somewhere else: utilisation, memory capacity or the network."
               if extra > 1 else f"is already covered by the peak alone ({1 / gap.ratio:.2f} of the GPUs)."))


def flop_budget(model, budget: at.FlopBudget, gap: at.PeakGap) -> str:
    """The derived architecture's proportions, then the worked FLOP budget of section 2.1."""
    gpus_at_peak = budget.required_flop_per_s / gap.baseline_flop_per_s
    return (f"The rules give d_model/layers = {model.d_model / model.layers:.0f}, top-{model.top_k} routed of "
            f"{model.experts} experts + {model.shared_experts} shared, expert FFN "
            f"{model.expert_d_ff / model.d_model:.2f} d_model, {model.dense_layers} leading dense layer(s) and "
            f"{model.kv_heads} KV heads of {architecture.head_dim(model)}.\n\n"
            f"**Worked number.** The derived model has {si(budget.total_params)} parameters, "
            f"{si(budget.active_params)} active ({budget.active_params / budget.total_params:.1%}). Training costs "
            f"{si(budget.flop_per_token, 'FLOP')} per token ({budget.over_6n:.2f}x 6N), "
            f"{si(budget.total_flop, 'FLOP')} in all, so the cluster must sustain "
            f"**{si(budget.required_flop_per_s, 'FLOP/s')}** of model FLOP/s for {budget.days:g} days: "
            f"{gpus_at_peak:,.0f} {gap.baseline} at 100% of the dense {gap.precision} peak, before any inefficiency.")


def global_batch(table: pd.DataFrame, tokens: float, days: float, chosen: str, chosen_tokens: float) -> str:
    """Worked number of section 2.2: the step time each global-batch assumption allows."""
    b = table.set_index("assumption")
    return (f"**Worked number.** At the low batch ({si(b.loc['low', 'tokens_per_step'])} tokens, what today's "
            f"frontier MoE runs use) {si(tokens)} tokens in {days:g} days need a step every "
            f"**{b.loc['low', 'max_step_time_s']:.1f} s**; the central batch "
            f"({si(b.loc['central', 'tokens_per_step'])} tokens, sourced in `training.GLOBAL_BATCH_TOKENS`) allows "
            f"{b.loc['central', 'max_step_time_s']:.1f} s and the high one {b.loc['high', 'max_step_time_s']:.1f} s. "
            f"This chapter runs the **{chosen}** batch ({si(chosen_tokens)} tokens).")


def headline_caption(tokens: float, days: float, precision: str) -> str:
    return f"GPUs to train {si(tokens)} tokens in {days:g} days ({precision}), both sizing regimes"


def headline_title(total_params: float, tokens: float, days: float) -> str:
    return f"GPUs needed, {si(total_params)}-parameter MoE, {si(tokens)} tokens, {days:g} days"


def gpu_count(v) -> str:
    """A GPU count in a table cell ("nothing fits" where the deadline cannot be met)."""
    return "nothing fits" if v is None or v != v else f"{int(v):,}"


def dash_si(v) -> str:
    """A quantity with an SI prefix in a table cell, "—" where there is none."""
    return "—" if v is None or v != v else si(v)


def side_by_side_formats(columns) -> dict:
    """Cell formats of :meth:`at.Headline.side_by_side`."""
    return {c: ("{:.3f}" if c.startswith("mfu") else "{:.2f}" if c.startswith("step") else gpu_count)
            for c in columns if c != "accelerator"}


def dash_int(v) -> str:
    """A whole number in a table cell, "—" where there is none."""
    return "—" if v is None or v != v else f"{int(v):,}"


def _regime(head: at.Headline, regime: str, claimed_ratio: float, tolerance: float) -> str:
    r = head.ratio(regime)
    if r is None:
        return (f"In the {regime} regime {', '.join(head.cannot_meet(regime))} cannot meet the deadline, "
                f"so there is no ratio.")
    b, c = head.row(regime, head.baseline), head.row(regime, head.challenger)
    return (f"In the **{regime}** regime {head.challenger} needs **{c['gpus']:,} GPUs** ({c['racks']:,} racks, MFU "
            f"{c['mfu']:.3f}, {c['step_time_s']:.1f} s steps) against {head.baseline}'s **{b['gpus']:,}** "
            f"({b['racks']:,} racks, MFU {b['mfu']:.3f}, {b['step_time_s']:.1f} s steps): a ratio of **{r:.3f}**, which "
            + ("**reproduces**" if at.reproduces(r, claimed_ratio, tolerance) else "does **not** reproduce")
            + f" the claimed {claimed_ratio:g} (tolerance +{tolerance:.0%}); "
            + f"{head.baseline}/{head.challenger} = {1 / r:.2f}x.")


def regimes(head: at.Headline, gap: at.PeakGap, claimed_ratio: float, tolerance: float) -> str:
    """Worked number of section 2.3: both regimes' GPU counts and ratios against the claim."""
    unfit = head.unfit()
    return ("**Worked number.** " + " ".join(_regime(head, g, claimed_ratio, tolerance) for g in at.REGIMES)
            + f" The peak alone would give {1 / gap.ratio:.3f}."
            + (f" {', '.join(unfit)}: nothing fits within the rack limit in at least one regime." if unfit else ""))


def claim_regime(head: at.Headline, claimed_ratio: float, tolerance: float, global_batch: str) -> str:
    """Which regime the claim assumes, and what that regime costs in batch size."""
    g, r = at.CLAIM_REGIME, head.ratio(at.CLAIM_REGIME)
    closer = head.closest_regime(claimed_ratio)
    mult = head.batch_multiples(g)
    tb, tc = head.row(g, head.baseline), head.row(g, head.challenger)
    text = (f"**Which regime does the claim assume?** A vendor sizes a cluster by dividing the FLOP budget by "
            f"per-GPU throughput, which is regime (b), **{g}**: there {head.challenger}/{head.baseline} = ")
    if r:
        text += f"**{r:.3f}**, so the claim " + (
            "is reproduced" if at.reproduces(r, claimed_ratio, tolerance)
            else f"is **not** reproduced ({r / claimed_ratio:.2f}x the claimed ratio)")
    else:
        text += "undefined (an accelerator cannot meet the deadline)"
    text += ". " + (f"Regime (b) has the ratio closer to {claimed_ratio:g}. " if closer == g else
                    f"Regime (a), {at.BATCH_LIMITED}, has the ratio closer to {claimed_ratio:g}. "
                    if closer == at.BATCH_LIMITED else "")
    if len(mult) == 2:
        lo, hi = min(mult.values()), max(mult.values())
        text += (f"The price of regime (b) is the batch: {head.baseline}'s layout steps "
                 f"{si(tb['global_batch_tokens'])} tokens at a time and {head.challenger}'s "
                 f"{si(tc['global_batch_tokens'])}, {lo:.0f}-{hi:.0f}x the {global_batch} batch of section 2.2, "
                 + ("beyond" if lo > BEYOND_CRITICAL_BATCH else "close to")
                 + " what the critical-batch estimate supports.")
    return text


def decomposition(f: at.DecompositionFindings, regime: str, gap: at.PeakGap) -> str:
    """Worked number of section 2.4: each swap's share of the ratio, and why the peak swap gives less."""
    return (f"**Worked number.** The full swap gives {f.total_ratio:.3f} ({regime} regime). Of its logarithm, "
            + ", ".join(f"{s} explains {f.shares[s]:.0%} (x{f.factors[s]:.2f})" for s in f.shares)
            + f". Measured against the claim, log(ratio)/log({f.claimed_ratio:g}) = **{f.claimed_fraction:.0%}** of "
            f"the claimed saving is reproduced. The peak-FLOP/s swap alone gives x{f.peak_swap_factor:.2f}, not the "
            f"x{1 / gap.ratio:.2f} a {gap.ratio:.1f}x faster peak would, because MFU falls from {f.baseline_mfu:.3f} "
            f"to {f.peak_swap_mfu:.3f}: the GEMMs speed up, the memory-bound kernels and collectives do not.")


def decomposition_takeaway(f: at.DecompositionFindings, old: Accelerator, new: Accelerator) -> str:
    """Takeaway of section 2.4: the attribute groups ranked, with the two chips' figures."""
    (first, s1), (second, s2) = f.ranked()[:2]
    mem = f.share("memory capacity")
    return (f"**Takeaway.** The largest part is **{first}** ({s1:.0%}), then {second} ({s2:.0%}). HBM bandwidth "
            f"({old.hbm_bytes_per_s / 1e12:.0f} vs {new.hbm_bytes_per_s / 1e12:.0f} TB/s) carries "
            f"{f.share('HBM bandwidth'):.0%}, NVLink and the NICs ({old.scaleup_bytes_per_s_bidirectional / 1e12:.1f} "
            f"vs {new.scaleup_bytes_per_s_bidirectional / 1e12:.1f} TB/s per GPU, "
            f"{old.scaleout_bytes_per_s * 8 / 1e9:.0f} vs {new.scaleout_bytes_per_s * 8 / 1e9:.0f} Gb/s) "
            f"{f.share('scale-up and scale-out links'):.0%}, and memory capacity ({old.hbm_bytes / 1e9:.0f} vs "
            f"{new.hbm_bytes / 1e9:.0f} GB) {mem:.0%}, "
            + ("a minor part." if abs(mem) < MINOR_SHARE else
               "a material part (fewer pipeline stages or less recompute).")
            + (" Peak FLOP/s explains less than half of the gain." if f.share(at.PEAK_STEP) < MOST else
               " Peak FLOP/s explains most of the gain."))


_LABEL = {"active parameters": si, "global batch": si, "sequence length": "{:,}".format,
          "deadline (days)": "{:g}".format, "precision": str}


def sensitivity_label(parameter: str, value) -> str:
    """How a sensitivity point names its changed value ("central" for the central case)."""
    return "central" if value is None or value != value else _LABEL[parameter](value)


def sensitivity_view(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`at.sensitivity_table` as the chapter shows it: a ``label`` per point."""
    label = [sensitivity_label(p, v) for p, v in zip(table["parameter"], table["value"])]
    return table.assign(label=label)[["parameter", "label", "regime", "ratio", "gpus_old", "gpus_new",
                                      "mfu_old", "mfu_new"]]


def _move(r: Mapping, claimed_ratio: float) -> str:
    label = sensitivity_label(r["parameter"], r["value"])
    if r["ratio"] is None or r["ratio"] != r["ratio"] or r["central"] is None:
        return f"{r['parameter']} at {label}: no ratio (an accelerator cannot meet the deadline)"
    towards = abs(r["ratio"] - claimed_ratio) < abs(r["central"] - claimed_ratio)
    return (f"{r['parameter']} at {label} ({r['regime']}) moves the ratio from {r['central']:.3f} to "
            f"**{r['ratio']:.3f}** ({'towards' if towards else 'away from'} {claimed_ratio:g})")


def sensitivity(f: at.SensitivityFindings, claimed_ratio: float, tolerance: float) -> str:
    """Worked number of section 2.5: the grid, the range of the ratio, the largest moves."""
    return (f"**Worked number.** Grid: {f.points} points, each one assumption changed from the central case "
            f"({', '.join(f.parameters)}). The ratio ranges from {f.ratio_min:.3f} to {f.ratio_max:.3f}; it "
            f"reproduces the claimed {claimed_ratio:g} (within +{tolerance:.0%}) at **{len(f.holds)} of {f.rows}** "
            f"points. Largest moves: "
            + "; ".join(_move(r, claimed_ratio) for r in f.largest_moves.to_dict("records")) + ".")


def sensitivity_takeaway(f: at.SensitivityFindings, claimed_ratio: float) -> str:
    """Takeaway of section 2.5: where, if anywhere, the claim holds on the grid."""
    if f.holds.empty:
        c = f.closest
        return (f"**Takeaway.** No single assumption on this grid brings the ratio to {claimed_ratio:g}; the closest "
                f"is {c['parameter']} at {sensitivity_label(c['parameter'], c['value'])} ({f.ratio_min:.3f}). One "
                f"quarter needs several favourable assumptions at once, or an advantage the model does not see.")
    where = ", ".join(f"{p} = {sensitivity_label(p, v)} ({g})"
                      for p, v, g in zip(f.holds["parameter"], f.holds["value"], f.holds["regime"]))
    return f"**Takeaway.** The claim holds at {where}: it is a statement about a particular operating point."


def layouts(f: at.LayoutFindings) -> str:
    """Worked number of section 2.6: HBM fill and where the step time goes."""
    return (f"**Worked number.** The chosen layouts fill {f.fill_min:.0%}-{f.fill_max:.0%} of usable HBM, "
            f"activations being {f.activation_share_min:.0%}-{f.activation_share_max:.0%} of it. The largest part "
            "of the step is " + "; ".join(f"{p}: {part} ({s:.0%})" for p, (part, s) in f.largest_part.items())
            + f". Matrix multiplications take {f.gemm_share_min:.0%}-{f.gemm_share_max:.0%} of the step.")


def layouts_takeaway(f: at.LayoutFindings) -> str:
    """Takeaway of section 2.6: does memory bind, does the peak set the pace."""
    return ("**Takeaway.** " + (
        "Memory binds: the search fills HBM (with activations, recompute traded for speed), so capacity changes "
        "the layout. " if f.fill_max > MEMORY_BINDS_FILL else "Memory does not bind at these cluster sizes. ")
        + ("Most of the step is not GEMM time, so bandwidth (HBM, NVLink) matters as much as the peak."
           if f.gemm_share_max < GEMM_SETS_PACE else "Most of the step is GEMM time, so the peak FLOP/s sets the pace."))


def validation(f: at.ValidationFindings) -> str:
    """Worked number of section 2.7: errors against the targets."""
    met = f.korthikanti_mean <= at.TARGET_KORTHIKANTI_MEAN_ABS_ERROR
    return (f"**Worked number.** Korthikanti et al. Table 5: mean |error| **{f.korthikanti_mean:.1%}** (target "
            f"{at.TARGET_KORTHIKANTI_MEAN_ABS_ERROR:.0%}, {'met' if met else 'missed'}; Calculon "
            f"{at.CALCULON_KORTHIKANTI_MEAN_ABS_ERROR:.2%}), max "
            f"{f.korthikanti_max:.1%}. All other cases: median |error| **{f.others_median:.1%}** (target "
            f"{at.TARGET_OTHERS_MEDIAN_ABS_ERROR:.0%}) over {f.others_count} cases, {f.others_within_target:.0%} of "
            f"them within {at.TARGET_OTHERS_MEDIAN_ABS_ERROR:.0%}: **{f.dev_median:.1%}** on the cases the model was "
            f"built on and **{f.held_out_median:.1%}** on the {f.held_out_count} runs it was judged on before they "
            f"joined the table (`data/runs/HELD_OUT.md`).")


def validation_takeaway(f: at.ValidationFindings) -> str:
    """Takeaway of section 2.7: the well-predicted groups and the largest errors."""
    w = f.worst
    return (f"**Takeaway.** Groups with median |error| ≤ {at.GOOD_GROUP_MEDIAN_ABS_ERROR:.0%}: "
            f"{', '.join(f.good_groups) if f.good_groups else 'none'}. The largest errors: "
            + "; ".join(f"{c} ({g}, {e:+.0%} in {u})" for c, g, e, u in zip(w["case"], w["group"], w["error"], w["unit"]))
            + ". Their groups' medians: " + ", ".join(f"{g} {f.group_median[g]:.0%}" for g in dict.fromkeys(w["group"]))
            + ".")


def memory_validation(f: at.MemoryValidationFindings) -> str:
    """Worked number of the memory check: |error| overall and by what the sources measured."""
    parts = "; ".join(f"{m}: {int(c)} rows, median {med:+.0%} (|error| {a:.0%})"
                      for m, c, med, a in zip(f.by_metric["metric"], f.by_metric["cases"], f.by_metric["median"],
                                              f.by_metric["median_abs"]))
    return (f"**Worked number.** {f.count} runs state their memory per GPU; the model's memory at the stated layout "
            f"is within a median **{f.median_abs:.0%}** of it, below it in {f.under_share:.0%} of the rows. By what "
            f"the source measured: {parts}.")


def memory_validation_takeaway(f: at.MemoryValidationFindings) -> str:
    """Takeaway of the memory check: what the misses say, and the runs the model would refuse."""
    w = f.worst
    worst = "; ".join(f"{c} ({m}: {mb / 1e9:.0f} GB measured, {pb / 1e9:.0f} GB predicted)"
                      for c, m, mb, pb in zip(w["case"], w["metric"], w["measured_bytes"], w["predicted_bytes"]))
    refused = (f" It puts {len(f.refused_that_ran)} of these layouts over the usable HBM although they ran: "
               + ", ".join(f.refused_that_ran) + "." if f.refused_that_ran else
               " Every layout here fits the usable HBM in the model, as it did on the GPUs.")
    return ("**Takeaway.** The allocator's reserved bytes and the device's used memory exceed what a step allocates "
            "(cached free blocks, the CUDA context, NCCL buffers), so a model of the bytes a step needs should sit a "
            "little under them; the memory model is a sizing check (does a layout fit, how much recompute it needs), "
            f"not an allocator simulation, and misses by tens of per cent where the sources count more. Largest "
            f"misses: {worst}." + refused)


#: A family of the bias table is named in the prose from this many cases (fewer: too few to say where it leans).
BIAS_MIN_CASES = 10


def bias(t: pd.DataFrame, within: float = 0.10) -> str:
    """Takeaway of the bias table (``analysis.validation.bias_table``): the families of at least
    :data:`BIAS_MIN_CASES` cases the model is most optimistic and most pessimistic about, and those it leans on
    by less than ``within`` either way."""
    big = t[t["cases"] >= BIAS_MIN_CASES]
    if big.empty:
        raise ValueError(f"no family of the bias table has {BIAS_MIN_CASES} cases or more; largest: "
                         f"{int(t['cases'].max()) if len(t) else 0}")

    def name(r) -> str:
        return f"{r['family']}, {r['architecture']}, {r['generation']} ({r['lean']:+.0%} over {int(r['cases'])})"

    hi, lo = big.loc[big["lean"].idxmax()], big.loc[big["lean"].idxmin()]
    even = big[big["lean"].abs() < within]
    return (f"**Takeaway.** Positive leans mean the model predicts those runs faster than they ran. Of the families "
            f"with {BIAS_MIN_CASES} cases or more, it is most optimistic about {name(hi)} and "
            + (f"most pessimistic about {name(lo)}. " if lo["lean"] < 0 else f"least optimistic about {name(lo)}. ")
            + (f"It leans less than {within:.0%} either way on " + "; ".join(name(r) for _, r in even.iterrows()) + ". "
               if len(even) else "")
            + "A user sizing a run in an optimistic family should read the estimate as a lower bound on time.")


def beyond_factor(beyond: Mapping[str, pd.DataFrame], what: str) -> str:
    """Worked number of the cases off by more than :data:`outliers.FACTOR` (``beyond``: named
    :func:`outliers.beyond_factor_table` results, e.g. "stated layouts" / "as a user"), ``what`` naming the cases
    ("serving", "training"): how many, and how many of them the measured data puts down to something other than the
    hardware's physics."""
    if not beyond:
        raise ValueError("beyond is empty; pass at least one named beyond_factor_table result")
    finite, peer, rest = outliers.REASONS
    parts, explained = [], False
    for name, t in beyond.items():
        label = name[:1].upper() + name[1:]
        n = len(t)
        if n == 0:
            parts.append(f"{label}, none")
            continue
        counts = t["reason"].value_counts()
        bits = []
        if counts.get(finite, 0):
            bits.append(f"{counts[finite]} are finite benchmarks whose request count, given to the same call, brings "
                        f"it within {outliers.FACTOR:g}x")
        if counts.get(peer, 0):
            why = "" if explained else " (the hardware does better; the gap is the software or the setup of that run)"
            bits.append(f"{counts[peer]} have a run of the same workload measured at least "
                        f"{outliers.FASTER_PEER_RATIO:g}x faster{why}")
            explained = True
        bits.append(f"**{counts.get(rest, 0)}** have neither")
        parts.append(f"{label}, {n} cases: " + "; ".join(bits))
    return (f"**Off by more than {outliers.FACTOR:g}x.** The {what} cases the model misses by more than a factor of "
            f"{outliers.FACTOR:g}, and what the measured data says about them: " + ". ".join(parts) + ". Issue 12's "
            f"target is that no unseen run be off by more than {outliers.FACTOR:g}x; the cases with neither "
            f"explanation are the misses left to work on.")


def held_out_sets(t, table: str, label: str) -> str:
    """Worked number of the held-out-sets table (``analysis.validation.held_out_sets_table``) for one ``table``:
    the range and median of the sets' blind medians, the same groups now, and the latest set."""
    rows = t[t["table"] == table].sort_values("set")
    if rows.empty:
        raise ValueError(f"table={table!r} has no held-out set; tables present: {', '.join(sorted(set(t['table'])))}")
    blind, now, last = rows["blind_median"], rows["median_now"], rows.iloc[-1]
    return (f"**Worked number.** {label}: over {len(rows)} held-out sets the median |error| when each was first "
            f"predicted ran from {blind.min():.0%} to {blind.max():.0%} (median of the sets {blind.median():.0%}); "
            f"on the same groups now, {now.min():.0%} to {now.max():.0%} (median {now.median():.0%}). The latest, "
            f"set {int(last['set'])}, was **{last['blind_median']:.1%}** blind over {int(last['cases_blind'])} "
            f"run{'' if int(last['cases_blind']) == 1 else 's'}.")


def panel(rows, head: at.Headline, days_grid) -> str:
    """What the explore panel (its result ``rows``) shows at the chapter's settings, and where its
    other answers come from."""
    shown = {r["accelerator"]: r for r in rows}[head.challenger]
    agrees = head.agrees(at.gpus_by_accelerator(rows))
    return (f"At the chapter's settings the panel shows the **{shown['method']}** for {head.challenger} "
            f"({gpu_count(shown['gpus'])} GPUs), "
            + ("the same counts as section 2.3 for every accelerator." if agrees else
               "**different** counts from section 2.3.")
            + f" Every setting is an exact layout search: deadlines from {days_grid[0]} to {days_grid[-1]} days "
            f"are read from the cached sweep of the panel's grid when it has run, else searched on first visit.")


# --------------------------------------------------------------------------- joint uncertainty (section 2.8)


def _r(v: float) -> str:
    return intervals.fmt(v)


def error_pairs(pairs: pd.DataFrame, sigma: float) -> str:
    """The model's error on measured cross-accelerator ratios, in one paragraph."""
    worst = pairs.loc[pairs["error_factor"].map(lambda e: abs(math.log(e))).idxmax()]
    return (f"Across {len(pairs)} pairs of measured runs that differ only in the accelerator, the predicted "
            f"throughput ratio misses the measured one by a factor of {pairs['error_factor'].min():.2f} to "
            f"{pairs['error_factor'].max():.2f} (worst: {worst['new']} over {worst['old']}, predicted "
            f"{worst['predicted_ratio']:.2f}x, measured {worst['measured_ratio']:.2f}x). The sweep multiplies each "
            f"modelled GPU ratio by a log-normal error with median 1 and sigma {sigma:.3f}, the root mean square "
            f"of the log errors: a p5-p95 factor of {math.exp(-1.645 * sigma):.2f}-{math.exp(1.645 * sigma):.2f}.")


def joint_uncertainty(u: gpu_ratio.RatioUncertainty, wall_s: float | None) -> str:
    """The ratio's joint distribution (with and without the model's error), per regime, and how
    many samples reproduce the claim."""
    regimes = "; ".join(f"{g} {_r(p50)} ({_r(p5)}-{_r(p95)})" for g, (p5, p50, p95) in u.by_regime.items())
    unbounded = ""
    if u.candidate_infeasible or u.reference_infeasible:
        unbounded = (f" In {u.reference_infeasible} samples GB200 cannot meet the deadline at any size (ratio 0) "
                     f"and in {u.candidate_infeasible} Vera Rubin cannot (ratio unbounded), all in the "
                     f"batch-limited regime where a small global batch caps the usable GPUs.")
    timing = f" The cold sweep took {wall_s:.0f} s here; the book reads it from the cache." if wall_s else ""
    return (f"**Worked number.** Over {u.samples} joint samples the GPU ratio is **{_r(u.p50)} (p5 {_r(u.p5)} to "
            f"p95 {_r(u.p95)})** with the model's validated error, {_r(u.model_p50)} ({_r(u.model_p5)}-"
            f"{_r(u.model_p95)}) from the model alone. By regime: {regimes}. {u.share_meeting:.0%} of the samples "
            f"reproduce the claim (ratio at or below {u.bar:.3g}, the ledger's rule), "
            f"{u.share_meeting_model:.0%} without the model error.{unbounded}{timing}")


def drivers(u: gpu_ratio.RatioUncertainty) -> str:
    """The strongest drivers of the ratio (partial rank correlation) in one sentence."""
    top = u.drivers.head(3)
    parts = [f"{lab} ({p:+.2f})" for lab, p in zip(top["label"], top["prcc"])]
    weak = u.drivers[u.drivers["abs_prcc"] < 0.2]["label"]
    return (f"Ranked by partial rank correlation with the ratio (others held fixed), the drivers are "
            f"{', '.join(parts)}. " + (f"Barely moving it: {', '.join(weak)}." if len(weak) else ""))


def what_must_hold(u: gpu_ratio.RatioUncertainty, v) -> str:
    """Where the claim holds in the sampled space, and the verdict the ledger gives."""
    held = "; ".join(gpu_ratio.conditions(u)) if u.share_meeting > 0 else "no sample reaches it"
    return (f"**What would have to be true.** Among the samples that reproduce one quarter: {held}. "
            f"On this interval the ledger's verdict is *{v.verdict}*: "
            + {"supported": "even the p95 reaches the claim.",
               "supported only if": "the median reaches the claim, the p95 does not.",
               "not reproduced": "the median misses the claim but the interval still reaches it, so the evidence "
                                 "does not contradict it.",
               "contradicted": "the whole interval misses the claim."}.get(v.verdict, v.condition))
