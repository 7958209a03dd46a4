"""Chapter 2: both sizing regimes side by side, memoised (each search takes seconds; the chapter,
its explore panel and the decomposition ask for the same searches several times)."""

from __future__ import annotations

from intelligence_per_dollar.model import efficiency
from intelligence_per_dollar.model.training.context import MAX_SEQ_LEN, PRECISIONS, check_int
from intelligence_per_dollar.model.training.sizing import (GLOBAL_BATCH_TOKENS, THROUGHPUT_SEQS_PER_GPU,
                                                             Deadline, check_budget, batch_tokens,
                                                             gpus_for_deadline, gpus_for_deadline_throughput,
                                                             workload_target)
from intelligence_per_dollar.model.training.stack import MODERN, Stack
from intelligence_per_dollar.sources import hardware, models

__all__ = ["REGIMES", "deadline", "deadline_if_cached", "deadline_table", "ratio_regime"]

#: The two ways of sizing a cluster for a deadline. ``batch-limited``: a fixed global batch
#: (:data:`GLOBAL_BATCH_TOKENS`), :func:`gpus_for_deadline`. ``throughput``: the batch grows with
#: the cluster (:data:`THROUGHPUT_SEQS_PER_GPU` sequences per GPU per step), so the count is the
#: token rate over a per-GPU throughput, :func:`gpus_for_deadline_throughput`; this is how vendor
#: sizing divides a FLOP budget by per-GPU throughput.
REGIMES = ("batch-limited", "throughput")

_DEADLINES: dict[tuple, Deadline] = {}


def _deadline_key(model, accelerator, precision, tokens, days, seq_len, global_batch_tokens, regime, seqs_per_gpu,
                  scenario, stack) -> tuple:
    if regime not in REGIMES:
        raise ValueError(f"regime={regime!r} is not allowed; allowed: {', '.join(REGIMES)}")
    stack = MODERN if stack is None else stack
    if not isinstance(stack, Stack):
        raise ValueError(f"stack={stack!r} must be a training Stack (e.g. training.STACKS['modern'])")
    acc = accelerator if isinstance(accelerator, hardware.Accelerator) else hardware.get(accelerator)
    if precision not in PRECISIONS:
        raise ValueError(f"precision={precision!r} is not allowed; allowed: {', '.join(PRECISIONS)}")
    if scenario not in efficiency.SCENARIOS:
        raise ValueError(f"scenario={scenario!r} is not allowed; allowed: {', '.join(efficiency.SCENARIOS)}")
    tokens, days, seq_len = workload_target(tokens, days, seq_len)
    tokens, days = check_budget(tokens, days)
    seq_len = check_int("seq_len", seq_len, 1, MAX_SEQ_LEN)
    gbt = spg = None
    if regime == "batch-limited":
        gbt = batch_tokens(seq_len, GLOBAL_BATCH_TOKENS["central"] if global_batch_tokens is None
                           else global_batch_tokens)
    else:
        spg = check_int("seqs_per_gpu", seqs_per_gpu, 1, 2**16)
    return (models.spec(model), acc, precision, tokens, days, seq_len, gbt, regime, spg, scenario, stack)


def deadline(model, accelerator, precision: str = "fp4", *, tokens: float | None = None, days: float | None = None,
             seq_len: int | None = None, global_batch_tokens: float | None = None, regime: str = "batch-limited",
             seqs_per_gpu: int = THROUGHPUT_SEQS_PER_GPU, scenario: str = "central",
             stack: Stack | None = None) -> Deadline:
    """:func:`gpus_for_deadline` (``regime="batch-limited"``, the global batch rounded to whole
    sequences, central by default) or :func:`gpus_for_deadline_throughput` (``"throughput"``),
    memoised on all arguments (``stack``: the software stack and the knobs on it, default
    :data:`~.stack.MODERN`). ``accelerator`` is a catalogue id or an
    :class:`~intelligence_per_dollar.sources.hardware.Accelerator`; a precision the chip lacks
    falls back to the next wider one. Same answers as the uncached calls."""
    key = _deadline_key(model, accelerator, precision, tokens, days, seq_len, global_batch_tokens, regime,
                        seqs_per_gpu, scenario, stack)
    hit = _DEADLINES.get(key)
    if hit is not None:
        return hit
    spec, acc, _, tokens, days, seq_len, gbt, _, spg, _, stack = key
    fb = not acc.supports(precision)
    if regime == "batch-limited":
        d = gpus_for_deadline(spec, acc, precision, tokens=tokens, days=days, seq_len=seq_len,
                              global_batch_tokens=gbt, scenario=scenario, fallback=fb, stack=stack)
    else:
        d = gpus_for_deadline_throughput(spec, acc, precision, tokens=tokens, days=days, seq_len=seq_len,
                                         seqs_per_gpu=spg, scenario=scenario, fallback=fb, stack=stack)
    _DEADLINES[key] = d
    return d


def deadline_if_cached(model, accelerator, precision: str = "fp4", **kw) -> Deadline | None:
    """The memoised :func:`deadline` for these arguments if it was already computed, else None
    (instant; the explore panel uses it to show exact searches where it has them)."""
    unknown = sorted(set(kw) - {"tokens", "days", "seq_len", "global_batch_tokens", "regime", "seqs_per_gpu",
                                "scenario", "stack"})
    if unknown:
        raise ValueError(f"deadline_if_cached got unknown keyword(s) {', '.join(unknown)}")
    return _DEADLINES.get(_deadline_key(model, accelerator, precision, kw.get("tokens"), kw.get("days"),
                                        kw.get("seq_len"), kw.get("global_batch_tokens"),
                                        kw.get("regime", "batch-limited"),
                                        kw.get("seqs_per_gpu", THROUGHPUT_SEQS_PER_GPU), kw.get("scenario", "central"),
                                        kw.get("stack")))


def _row(accelerator: str, acc, regime: str, d: Deadline) -> dict:
    e = d.estimate
    return {"accelerator": accelerator, "regime": regime, "gpus": d.gpus, "racks": d.racks,
            "domain": acc.scaleup_domain_gpus, "gpus_in_use": d.gpus_in_use,
            "precision_run": e.precision if e else None, "mfu": e.mfu if e else None, "days_needed": d.days_needed,
            "step_time_s": e.step_time_s if e else None,
            "global_batch_tokens": (e.tokens_per_s * e.step_time_s) if e else None,
            "parallelism": dict(e.parallelism) if e else None, "feasible": d.feasible, "message": d.message,
            "deadline": d}


def deadline_table(model, accelerators, precision: str = "fp4", *, baseline: str,
                           tokens: float | None = None, days: float | None = None, seq_len: int | None = None,
                           global_batch_tokens: float | None = None, regimes=REGIMES,
                           seqs_per_gpu: int = THROUGHPUT_SEQS_PER_GPU, scenario: str = "central",
                           stack: Stack | None = None) -> list[dict]:
    """The memoised :func:`deadline` of each accelerator in each regime of :data:`REGIMES`: one
    dict per (accelerator, regime), the accelerator id under ``accelerator``, with ``gpus``,
    ``racks``, ``gpus_in_use``, ``mfu``, ``step_time_s``, the global batch in tokens the chosen
    layout runs, and ``ratio_to_baseline`` within the regime."""
    out = []
    for regime in regimes:
        rows = []
        for accelerator in accelerators:
            d = deadline(model, accelerator, precision, tokens=tokens, days=days, seq_len=seq_len,
                         global_batch_tokens=global_batch_tokens, regime=regime, seqs_per_gpu=seqs_per_gpu,
                         scenario=scenario, stack=stack)
            rows.append(_row(accelerator, hardware.get(accelerator), regime, d))
        base = next((r["gpus"] for r in rows if r["accelerator"] == baseline), None)
        for r in rows:
            r["ratio_to_baseline"] = (r["gpus"] / base) if (r["gpus"] and base) else None
        out += rows
    return out


def ratio_regime(model, new: str, old: str, precision: str = "fp4", *, regime: str = "batch-limited", **kw) -> dict:
    """GPUs new / GPUs old in ``regime`` (memoised; None where either cannot meet the deadline)."""
    d_old = deadline(model, old, precision, regime=regime, **kw)
    d_new = deadline(model, new, precision, regime=regime, **kw)
    r = (d_new.gpus / d_old.gpus) if (d_new.gpus and d_old.gpus) else None
    return {"gpus_old": d_old.gpus, "gpus_new": d_new.gpus, "ratio": r,
            "mfu_old": d_old.estimate.mfu if d_old.estimate else None,
            "mfu_new": d_new.estimate.mfu if d_new.estimate else None}
