"""Inverting the step time: the smallest cluster that trains a token budget by a deadline, in
the two sizing regimes, and the throughput curve the explore panel reads.

* :func:`gpus_for_deadline` -- fixed global batch (the latency / strong-scaling regime): more
  GPUs mean fewer micro-batches each, until the batch runs out.
* :func:`gpus_for_deadline_throughput` -- the batch grows with the cluster (weak scaling), so the
  count is the token rate over a per-GPU throughput, as vendor sizing divides a FLOP budget.

Token budget, deadline and sequence length default to the book's training workload
(:func:`intelligence_per_dollar.sources.workloads.training`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from intelligence_per_dollar.model.training import exact
from intelligence_per_dollar.model.training.context import (MAX_BATCH_TOKENS, MAX_SEQ_LEN, Context, check_int,
                                                            check_number, make_context)
from intelligence_per_dollar.model.training.estimator import Estimate, make_estimate
from intelligence_per_dollar.model.training.search import JOB_BLOCK_GPUS, choose
from intelligence_per_dollar.model.training.stack import MODERN, Stack
from intelligence_per_dollar.sources import workloads

__all__ = ["GLOBAL_BATCH_TOKENS", "THROUGHPUT_SEQS_PER_GPU", "Deadline", "workload_target", "check_budget", "batch_tokens",
           "headline_stack",
           "best_for_domains", "gpus_for_deadline", "gpus_for_deadline_throughput", "throughput_curve"]

SECONDS_PER_DAY = 86400.0

#: Global batch in tokens for a 100T-token frontier MoE run, low / central / high (an assumption,
#: stated openly). Low: what today's frontier MoE runs use, DeepSeek-V3 ramps to 15,360 x 4,096
#: = 63 M tokens (arXiv 2412.19437, section 4.2) and Kimi K2 trains at 67 M (arXiv 2507.20534,
#: section 3.4); Llama 3 405B used 16 M (arXiv 2407.21783, section 3.4.1). Central: the critical
#: batch grows with the data a run sees, roughly as D^0.5 (Zhang et al. 2024, "How Does Critical
#: Batch Size Scale in Pre-training?", arXiv 2410.21676), so DeepSeek-V3's 63 M at 14.8T tokens
#: becomes ~164 M at 100T. High: 256 Mi tokens, the same scaling with a 1.5x margin.
GLOBAL_BATCH_TOKENS = {"low": 64 * 2**20, "central": 20480 * 8192, "high": 256 * 2**20}

#: Sequences per GPU per optimizer step in the throughput regime (:func:`gpus_for_deadline_throughput`):
#: 8 x 8192 = 65,536 tokens per GPU per step, twice DeepSeek-V3's 30,700 (15,360 x 4,096 tokens
#: on 2,048 H800s) and enough that the pipeline bubble and per-step collectives amortise (a
#: stated rule, not a fit: tests check that doubling it changes the GPU count by little).
THROUGHPUT_SEQS_PER_GPU = 8


@dataclass(frozen=True)
class Deadline:
    """Smallest whole-rack GPU count meeting a token budget within a deadline: ``gpus``
    allocated (``racks`` whole scale-up domains), ``gpus_in_use`` by the chosen layout."""

    gpus: int | None
    racks: int | None
    estimate: Estimate | None
    days_needed: float | None
    feasible: bool
    message: str
    gpus_in_use: int | None = None


def workload_target(tokens: float | None, days: float | None, seq_len: int | None) -> tuple[float, float, int]:
    """``(tokens, days, seq_len)`` with each None taken from the training workload."""
    w = workloads.training()
    return (w.tokens if tokens is None else tokens, w.days if days is None else days,
            w.seq_len if seq_len is None else seq_len)


#: Largest token budget (1e20) and deadline (100 years) a search takes.
MAX_TOKENS, MAX_DAYS = 1e20, 36500.0
#: Largest number of scale-up domains a search may consider.
MAX_RACKS = 10**6


def check_budget(tokens, days) -> tuple[float, float]:
    return (check_number("tokens", tokens, 0.0, MAX_TOKENS, lo_open=True),
            check_number("days", days, 0.0, MAX_DAYS, lo_open=True))


def batch_tokens(seq_len: int, global_batch_tokens: float) -> int:
    """``global_batch_tokens`` rounded to a whole number of ``seq_len`` sequences (at least one)."""
    seq_len = check_int("seq_len", seq_len, 1, MAX_SEQ_LEN)
    global_batch_tokens = check_number("global_batch_tokens", global_batch_tokens, 0.0, MAX_BATCH_TOKENS,
                                       lo_open=True)
    return int(max(1, round(global_batch_tokens / seq_len)) * seq_len)


def best_for_domains(ctx: Context, domains: int, seqs_per_gpu: int | None = None) -> Estimate | None:
    """Fastest fitting estimate on ``domains`` whole scale-up domains (None if nothing fits).
    With a fixed global batch, any number of their GPUs may run the job (:func:`~.exact.fastest`:
    whole domains, :data:`~.search.JOB_BLOCK_GPUS` blocks, a part-used last domain). With
    ``seqs_per_gpu`` (throughput regime) every domain runs all its GPUs or a block of them and the
    global batch is that many sequences per GPU in use."""
    alloc = int(domains) * ctx.domain
    if seqs_per_gpu is None:
        found, n, _ = exact.fastest(ctx, alloc, {})
        if found is None:
            return None
        return make_estimate(found.ctx, found.c, found.r, found.i, found.gpus_in_use, n, gpus_allocated=alloc)
    best = None
    for per in JOB_BLOCK_GPUS.get(ctx.domain, (ctx.domain,)):
        g = int(domains) * per
        c2 = replace(ctx, domain=per, batch_seqs=int(seqs_per_gpu) * g)
        i, c, r, n = choose(c2, g, {})
        if i is None:
            continue
        e = make_estimate(c2, c, r, i, g, n, gpus_allocated=alloc)
        if best is None or e.tokens_per_s > best.tokens_per_s:
            best = e
    return best


def _days_needed(tokens: float, e: Estimate) -> float:
    return tokens / e.tokens_per_s / SECONDS_PER_DAY


def headline_stack(stack: Stack | None) -> Stack:
    """The stack the sizing searches run when the caller names none: :data:`~.stack.MODERN`, the
    book's headline stack, kept explicit (``estimate`` alone defaults to
    :func:`~.stack.default_stack`, what a current framework runs for the model type)."""
    return MODERN if stack is None else stack


def gpus_for_deadline(model, accelerator: str, precision: str = "bf16", tokens: float | None = None,
                      days: float | None = None, seq_len: int | None = None, global_batch_tokens: float | None = None,
                      *, stack: Stack | None = None, scenario: str = "central", fallback: bool = False,
                      max_racks: int = 20000) -> Deadline:
    """Smallest number of whole scale-up domains ("racks") whose GPUs train ``tokens`` in ``days``.

    ``global_batch_tokens`` defaults to the central assumption :data:`GLOBAL_BATCH_TOKENS`
    (rounded to whole sequences); the answer depends strongly on it (chapter 2). With a fixed
    batch the deadline is a step-time limit; the search (:func:`~.exact.fewest_racks`) returns
    the true minimum: it does not assume that more racks are always faster (they are not: a
    count whose factors suit neither the batch nor the layers forces poor layouts), and the
    layout may leave GPUs idle. Returns a :class:`Deadline` (``gpus`` allocated, ``gpus_in_use``
    by the layout); ``feasible`` is False (with the reason) when nothing fits.
    """
    tokens, days, seq_len = workload_target(tokens, days, seq_len)
    tokens, days = check_budget(tokens, days)
    max_racks = check_int("max_racks", max_racks, 1, MAX_RACKS)
    gbt = batch_tokens(seq_len, GLOBAL_BATCH_TOKENS["central"]) if global_batch_tokens is None else global_batch_tokens
    ctx = make_context(model, accelerator, precision, seq_len, gbt, headline_stack(stack), scenario, fallback)
    gbt = ctx.batch_seqs * ctx.seq_len
    domain = ctx.domain
    found = exact.fewest_racks(ctx, days * SECONDS_PER_DAY * gbt / tokens, max_racks)
    if found is None:
        msg = (f"nothing fits: no layout on up to {max_racks} racks of {domain} {ctx.acc.id} GPUs trains "
               f"{tokens:.3g} tokens in {days} days (global batch {gbt:.3g} tokens, seq {seq_len}, {precision})")
        return Deadline(None, None, None, None, False, msg)
    racks = found.racks
    e = make_estimate(found.ctx, found.c, found.r, found.i, found.gpus_in_use, found.evaluated,
                      gpus_allocated=racks * domain)
    used = "" if e.gpus_in_use == racks * domain else f", {e.gpus_in_use} of them in use"
    return Deadline(racks * domain, racks, e, _days_needed(tokens, e), True,
                    f"{racks * domain} GPUs ({racks} x {domain}{used}) train {tokens:.3g} tokens in "
                    f"{_days_needed(tokens, e):.1f} days", e.gpus_in_use)


def _racks_needed(rate: float, e: Estimate, ref: int) -> int:
    """Domains needed for ``rate`` tokens/s at the per-domain throughput ``e`` reached on ``ref`` domains."""
    return max(1, math.ceil(rate / (e.tokens_per_s / ref) - 1e-9))


def _reference_layout(base: Context, rate: float, seqs_per_gpu: int, max_racks: int):
    """``(ref, estimate)``: the best layout on ``ref`` domains, ``ref`` a power of two near the
    need (from 8 up until the model fits, then up to three re-evaluations at the power of two
    nearest the need); ``(ref, None)`` if nothing fits on up to ``max_racks`` domains."""
    ref, e = 8, None
    while ref <= max_racks:
        e = best_for_domains(base, ref, seqs_per_gpu)
        if e is not None:
            break
        ref *= 2
    if e is None:
        return ref, None
    for _ in range(3):
        want = 2 ** max(0, round(math.log2(_racks_needed(rate, e, ref))))
        if want == ref or want > max_racks:
            break
        e2 = best_for_domains(base, want, seqs_per_gpu)
        if e2 is None:
            break
        ref, e = want, e2
    return ref, e


def gpus_for_deadline_throughput(model, accelerator: str, precision: str = "bf16", tokens: float | None = None,
                                 days: float | None = None, seq_len: int | None = None, *,
                                 seqs_per_gpu: int = THROUGHPUT_SEQS_PER_GPU, stack: Stack | None = None,
                                 scenario: str = "central", fallback: bool = False,
                                 max_racks: int = 200000) -> Deadline:
    """GPUs needed when the global batch is *not* binding (the throughput regime).

    Rule: the global batch grows with the cluster, ``seqs_per_gpu`` sequences of ``seq_len`` per
    GPU in use per step, so every cluster size gets the same work per GPU per step and the
    per-GPU throughput is (nearly) independent of the cluster size (weak scaling). The per-GPU
    throughput is measured (by the full layout search) on the power-of-two number of scale-up
    domains nearest the need, whose sizes factor cleanly into TP x PP x CP x DP (an arbitrary
    count such as 979 racks = 11 x 89 would force absurd layouts), and the answer is the token
    rate over that per-GPU throughput (per GPU owned, idle spares included), rounded up to whole
    domains. ``estimate`` is the reference layout; ``days_needed`` is at the rounded count.
    Compare :func:`gpus_for_deadline` (fixed global batch: the latency / strong-scaling regime).
    """
    tokens, days, seq_len = workload_target(tokens, days, seq_len)
    tokens, days = check_budget(tokens, days)
    seqs_per_gpu = check_int("seqs_per_gpu", seqs_per_gpu, 1, 2**16)
    max_racks = check_int("max_racks", max_racks, 1, MAX_RACKS)
    base = make_context(model, accelerator, precision, seq_len, seq_len, headline_stack(stack), scenario, fallback)
    domain = base.domain
    rate = tokens / (days * SECONDS_PER_DAY)
    ref, e = _reference_layout(base, rate, seqs_per_gpu, max_racks)
    if e is None:
        return Deadline(None, None, None, None, False,
                        f"nothing fits: {base.acc.id} cannot hold the model on up to {max_racks} domains")
    racks = _racks_needed(rate, e, ref)
    if racks > max_racks:
        return Deadline(None, None, None, None, False,
                        f"nothing fits: {tokens:.3g} tokens in {days} days needs more than {max_racks} "
                        f"domains of {base.acc.id}")
    per_gpu = e.tokens_per_s / (ref * domain)     # per GPU owned, idle ones included
    need = tokens / (per_gpu * racks * domain) / SECONDS_PER_DAY
    return Deadline(racks * domain, racks, e, need, True,
                    f"{racks * domain} GPUs ({racks} x {domain}) train {tokens:.3g} tokens in {need:.1f} days at "
                    f"the per-GPU throughput of {ref} domains ({e.gpus_in_use} GPUs in use) with {seqs_per_gpu} "
                    f"sequences per GPU per step", racks * e.gpus_in_use // ref)


def throughput_curve(model, accelerator, precision: str, seq_len: int, global_batch_tokens: float, racks, *,
                     stack: Stack | None = None, scenario: str = "central", fallback: bool = False) -> dict:
    """Best cluster tokens/s for each number of racks (scale-up domains) in ``racks``.

    Returns arrays ``racks``, ``gpus``, ``tokens_per_s`` (NaN where no configuration fits or is
    valid) and ``mfu``, and the ``domain`` size; the explore panel reads deadlines off it
    (:mod:`intelligence_per_dollar.views.widgets_training`).
    """
    ctx = make_context(model, accelerator, precision, seq_len, batch_tokens(seq_len, global_batch_tokens),
                       headline_stack(stack),
                       scenario, fallback)
    racks = np.asarray(racks, dtype=np.int64)
    tps = np.full(len(racks), np.nan)
    mfu = np.full(len(racks), np.nan)
    for j, r in enumerate(racks):
        e = best_for_domains(ctx, int(r))
        if e is not None:
            tps[j] = e.tokens_per_s
            mfu[j] = e.mfu
    return {"racks": racks, "gpus": racks * ctx.domain, "tokens_per_s": tps, "mfu": mfu, "domain": ctx.domain}
