"""What every stage of the evaluator reads: the per-run :class:`Context` (model, accelerator,
precision, batch, links, stack) and the per-candidate :class:`Layout` arrays derived once from the
candidate configurations (tokens per micro-batch, micro-batches, layers per stage, placement)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np

from intelligence_per_dollar.model import collectives, efficiency, peaks
from intelligence_per_dollar.model.training.stack import STACKS, Stack, default_stack
from intelligence_per_dollar.sources import assumptions, hardware, models

__all__ = ["PRECISIONS", "RECOMPUTE", "PARALLELISM_KEYS", "ACTIVATION_BYTES", "MAX_SEQ_LEN", "MAX_BATCH_TOKENS",
           "Context", "Layout", "check_int", "check_number", "make_context", "scaled_ceilings", "ceiling_scale_range",
           "power_capped_ceilings", "layout", "format_layout", "MAX_GPU_SPEED_CV", "busiest_rank_load"]

PRECISIONS = ("bf16", "fp8", "fp4")
#: Recompute modes, by index in the candidate arrays: 0 none, 1 selective, 2 full, 3 partial.
RECOMPUTE = ("none", "selective", "full", "partial")
PARALLELISM_KEYS = ("tp", "pp", "dp", "cp", "ep", "microbatch", "interleave", "recompute", "zero")
#: Bytes of a stored activation element (BF16/FP16), Korthikanti et al. 2022 section 4.1.
ACTIVATION_BYTES = 2.0


@dataclass(frozen=True)
class Context:
    """One run's fixed quantities: the model, the accelerator and its efficiency ceilings, the
    precision the tensor cores run (after any fallback) and its peak, the global batch in
    sequences, the software stack and the scale-up / scale-out links."""

    s: models.ModelSpec
    acc: hardware.Accelerator
    ceil: efficiency.Ceilings
    precision: str
    peak: float
    bf16_peak: float
    op_bytes: float
    seq_len: int
    batch_seqs: int
    stack: Stack
    scaleup: collectives.Link
    scaleout: collectives.Link
    domain: int
    kernel_floor_s: float                  # fixed time of one dependent non-GEMM kernel (compute.kernel_floors_s)
    nongemm_kernels: float                 # non-GEMM kernels in one layer's forward (backward: twice)
    moe_nongemm_kernels: float             # extra ones in a MoE layer's forward
    host_link_bytes_per_s: float = 0.0     # achieved CPU-GPU copy rate, one direction (0: no host link)
    gpu_speed_cv: float = 0.0              # chip-to-chip clock spread (pipeline.slowest_gpu_s); make_context sets it
    document_tokens: float = 0.0           # packed documents' length (compute.attention_span); 0: one per sequence

    @property
    def hbm_effective_bytes_per_s(self) -> float:
        """HBM bandwidth a memory-bound kernel reaches (the ceiling's fraction of the peak)."""
        return self.acc.hbm_bytes_per_s * self.ceil.hbm_fraction

    @property
    def low_precision(self) -> bool:
        """Do the GEMMs run in FP8 or FP4 (with casts around them)?"""
        return self.precision in ("fp8", "fp4")


#: Largest sequence length and global batch (tokens) the model accepts: far beyond any run, small
#: enough that every count stays an exact integer in float64.
MAX_SEQ_LEN = 2**24
MAX_BATCH_TOKENS = 2**50


def check_int(name: str, value, lo: int, hi: int | None = None) -> int:
    """``value`` as an ``int`` if it is an integer (Python or NumPy, not a bool) in ``[lo, hi]``,
    else ``ValueError`` naming the parameter, its value and what is allowed."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < lo or (hi is not None and value > hi):
        allowed = f"an integer >= {lo}" + (f" and <= {hi:,}" if hi is not None else "")
        raise ValueError(f"{name}={value!r} must be {allowed}")
    return int(value)


def check_number(name: str, value, lo: float, hi: float, *, lo_open: bool = False) -> float:
    """``value`` as a ``float`` if it is a finite real number (not a bool) in ``[lo, hi]``
    (``(lo, hi]`` with ``lo_open``), else ``ValueError`` naming the parameter, value and range."""
    ok = (not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, float, np.integer, np.floating))
          and np.isfinite(value) and (value > lo if lo_open else value >= lo) and value <= hi)
    if not ok:
        raise ValueError(f"{name}={value!r} must be a finite number in {'(' if lo_open else '['}{lo:g}, {hi:g}]")
    return float(value)


def _check_batch(seq_len, global_batch_tokens) -> float:
    seq_len = check_int("seq_len", seq_len, 1, MAX_SEQ_LEN)
    global_batch_tokens = check_number("global_batch_tokens", global_batch_tokens, seq_len, MAX_BATCH_TOKENS)
    batch = global_batch_tokens / seq_len
    if abs(batch - round(batch)) > 1e-9 * batch:
        raise ValueError(f"global_batch_tokens={global_batch_tokens!r} must be a whole number of "
                         f"sequences of seq_len={seq_len}")
    return batch


def slow_end(scenario: str) -> str:
    """The end of a low/central/high assumption that makes the ``scenario`` run slowest where a larger value slows
    it (the low scenario is the slow one: it takes the high value)."""
    return {"low": "high", "central": "central", "high": "low"}[scenario]


#: Largest chip-to-chip spread of the sustained clock a caller may give (``gpu_speed_cv``): 20%, ten times the
#: assumption's high value, already far beyond any fleet Sinha et al. 2022 measured.
MAX_GPU_SPEED_CV = 0.2


def make_context(model, accelerator, precision, seq_len, global_batch_tokens, stack, scenario,
                 fallback, power_cap_w=None, gpu_speed_cv=None, document_tokens=None) -> Context:
    """The :class:`Context` of one run. ``accelerator`` is a catalogue id or an
    :class:`~intelligence_per_dollar.sources.hardware.Accelerator`; a precision its tensor cores
    lack raises ``ValueError`` unless ``fallback`` (then it runs at the next wider precision).
    ``stack`` None: the stack a current framework uses for the model (:func:`~.stack.default_stack`).
    ``power_cap_w``: the board power limit the GPUs run at (None: the rated ``acc.power_w``;
    :func:`power_capped_ceilings`). ``gpu_speed_cv``: the chip-to-chip spread of the sustained clock in the
    caller's fleet (:func:`~.pipeline.slowest_gpu_s`; None: ``gpu_speed_cv`` of data/assumptions/training.csv for
    ``scenario``; 0: identical GPUs), in ``[0, MAX_GPU_SPEED_CV]``. ``document_tokens``: the length of the documents
    packed into each sequence with attention masked to stay inside each one (the token-weighted mean,
    ``E[l^2] / E[l]``; :func:`~.compute.attention_span`), in ``[1, MAX_SEQ_LEN]``; None: one document per sequence."""
    s = models.spec(model)
    acc = accelerator if isinstance(accelerator, hardware.Accelerator) else hardware.get(accelerator)
    precision = hardware.precision_id(precision, "precision", PRECISIONS)
    if not acc.supports(precision) and not fallback:
        have = [p for p in PRECISIONS if acc.supports(p)]
        raise ValueError(f"precision={precision!r} is not supported by the tensor cores of accelerator "
                         f"{acc.id!r} (it has {', '.join(have)}); pass fallback=True to run it at the "
                         f"next wider precision")
    peak = peaks.dense_flop_per_s(acc, precision, fallback=fallback)
    run_precision = precision
    if not acc.supports(precision):
        run_precision = next(p for p in hardware.PRECISIONS[hardware.PRECISIONS.index(precision):]
                             if acc.supports(p))
    batch = _check_batch(seq_len, global_batch_tokens)
    stack = default_stack(s) if stack is None else stack
    if isinstance(stack, str):
        if stack not in STACKS:
            raise ValueError(f"stack={stack!r} is not a named stack; allowed: {', '.join(STACKS)}, or a training Stack")
        stack = STACKS[stack]
    if not isinstance(stack, Stack):
        raise ValueError(f"stack={stack!r} must be a training Stack or the name of a preset "
                         f"({', '.join(STACKS)})")
    ceil = power_capped_ceilings(scaled_ceilings(efficiency.ceilings(acc, scenario), stack.ceiling_scale), acc,
                                 power_cap_w, scenario)
    up = collectives.Link(acc.scaleup_bytes_per_s_one_way, ceil.scaleup_efficiency, ceil.scaleup_latency_s)
    out_bw = acc.scaleout_bytes_per_s or acc.scaleup_bytes_per_s_one_way / 18
    out = collectives.Link(out_bw, ceil.scaleout_efficiency, ceil.scaleout_latency_s)
    op_bytes = hardware.BYTES_PER_ELEMENT[run_precision]
    # host_link_efficiency (data/assumptions/inference.csv): measured host-to-GPU copy rate over the link's rate
    host_bw = (acc.host_link_bytes_per_s or 0.0) * getattr(assumptions.assumptions("inference.csv")["host_link_efficiency"],
                                                            scenario)
    # kernel_floor_s (inference.csv, measured on the project's H200) and the layer's non-GEMM kernel counts
    # (training.csv): compute.memory_bound_s adds the floor once per non-GEMM kernel to the byte-timed traffic
    a = assumptions.assumptions("training.csv")
    floor = getattr(assumptions.assumptions("inference.csv")["kernel_floor_s"], scenario)
    # gpu_speed_cv (training.csv): the low (slow) scenario takes the wide spread
    if gpu_speed_cv is None:
        spread = getattr(a["gpu_speed_cv"], slow_end(scenario))
    else:
        spread = check_number("gpu_speed_cv", gpu_speed_cv, 0.0, MAX_GPU_SPEED_CV)
    docs = 0.0 if document_tokens is None else check_number("document_tokens", document_tokens, 1.0, MAX_SEQ_LEN)
    return Context(s, acc, ceil, run_precision, peak if acc.supports(precision) else
                   peaks.dense_flop_per_s(acc, run_precision), acc.bf16_dense_flop_per_s, op_bytes,
                   int(seq_len), int(round(batch)), stack, up, out, int(acc.scaleup_domain_gpus),
                   kernel_floor_s=floor, nongemm_kernels=getattr(a["nongemm_kernels_per_layer"], scenario),
                   moe_nongemm_kernels=getattr(a["moe_nongemm_kernels_per_layer"], scenario),
                   host_link_bytes_per_s=host_bw, gpu_speed_cv=spread, document_tokens=docs)


def scaled_ceilings(ceil: efficiency.Ceilings, scale: float) -> efficiency.Ceilings:
    """``ceil`` with the sustained GEMM and attention fractions times ``scale``
    (:attr:`Stack.ceiling_scale`); ``ValueError`` if a fraction would exceed 1."""
    if scale == 1.0:
        return ceil
    out = replace(ceil, gemm_burst_fraction_bf16=ceil.gemm_burst_fraction_bf16 * scale,
                  attention_fraction_bf16=ceil.attention_fraction_bf16 * scale)
    worst = max(out.gemm_fraction(p) for p in PRECISIONS) / out.power_throttle
    if max(worst, out.attention_fraction_bf16) > 1.0:
        raise ValueError(f"Stack ceiling_scale={scale!r} lifts a burst efficiency ceiling of {ceil.accelerator} "
                         f"above 1 (largest allowed: {scale / max(worst, out.attention_fraction_bf16):.3f})")
    return out


def power_capped_ceilings(ceil: efficiency.Ceilings, acc: hardware.Accelerator, power_cap_w,
                          scenario: str) -> efficiency.Ceilings:
    """``ceil`` with the power-throttle factor (sustained over burst GEMM and attention rate at the
    rated limit) times the sustained clock at ``power_cap_w`` over that at ``acc.power_w``
    (:func:`~intelligence_per_dollar.model.peaks.sustained_clock_scale`, parameters
    ``power_static_fraction`` and ``dvfs_power_exponent`` of ``data/assumptions/training.csv``; the
    low scenario pairs the high static share with the low exponent, the most throttling). Only the
    compute-bound ceilings move: HBM-bound kernels keep their rate (Ujeniya et al. 2026, arXiv
    2604.11391: Triad throughput barely changes with the cap). None: ``ceil`` unchanged."""
    if power_cap_w is None:
        return ceil
    if isinstance(power_cap_w, (bool, np.bool_)) or not isinstance(power_cap_w, (int, float, np.integer, np.floating)) \
            or not 0 < power_cap_w <= acc.power_w:
        raise ValueError(f"power_cap_w={power_cap_w!r} must be None or a number in (0, {acc.power_w:g}] W "
                         f"(the rated board power of {acc.id})")
    a = assumptions.assumptions("training.csv")
    scale = peaks.sustained_clock_scale(float(power_cap_w), acc.power_w,
                                        getattr(a["power_static_fraction"], slow_end(scenario)),
                                        getattr(a["dvfs_power_exponent"], scenario))
    return replace(ceil, power_throttle=ceil.power_throttle * scale)


def ceiling_scale_range(accelerator) -> dict[str, float]:
    """Low/central/high :attr:`Stack.ceiling_scale` of an accelerator: its catalogued
    ``gemm_burst_fraction_bf16`` low and high (data/efficiency/ceilings.csv) over the central."""
    c = {sc: efficiency.ceilings(accelerator, sc).gemm_burst_fraction_bf16 for sc in efficiency.SCENARIOS}
    return {sc: c[sc] / c["central"] for sc in efficiency.SCENARIOS}


@dataclass(frozen=True, eq=False)
class Layout:
    """Arrays over the candidate configurations (one element each), as floats: the parallel
    sizes and what follows from them before any time or memory is computed.

    ``tokens``: tokens per micro-batch per TP group, ``microbatch x seq_len / cp``;
    ``microbatches``: micro-batches per pipeline per step, ``batch / (dp x microbatch)``;
    ``layers_per_chunk``: layers of one virtual stage, ``ceil(L / (pp v))`` (uneven splits are
    allowed, Megatron-Core ``pipeline_model_parallel_layout``); ``layers_per_stage``: the busiest
    rank's layers, ``v`` chunks; ``domain_block``: ranks of one stage's block sharing a scale-up
    domain (the whole stage when the job fits in one domain). Ranks are numbered tp fastest, then cp, dp (ep carved out of tp x cp x dp), then pp
    (Megatron-Core order tp-cp-ep-dp-pp); a group that does not tile the domain straddles two,
    and its slowest member sees only ``gcd(group, domain)`` peers on NVLink.
    """

    tp: np.ndarray
    pp: np.ndarray
    dp: np.ndarray
    cp: np.ndarray
    ep: np.ndarray
    microbatch: np.ndarray
    interleave: np.ndarray
    recompute: np.ndarray
    zero: np.ndarray
    tokens: np.ndarray
    microbatches: np.ndarray
    layers_per_chunk: np.ndarray
    layers_per_stage: np.ndarray
    domain_block: np.ndarray

    uniform_etp: bool = False

    @property
    def etp(self) -> np.ndarray:
        """Expert tensor parallelism: 1 where the experts are spread over an EP group, the TP size where there is no
        expert parallelism (``ep == 1``; :func:`.memory.params_per_gpu` says why) or where the stack splits the experts
        over TP whatever the EP (``uniform_etp``, :attr:`.stack.Stack.uniform_expert_tp`)."""
        return np.where((self.ep == 1) | self.uniform_etp, self.tp, 1.0)


def busiest_rank_load(ctx: Context, lay: Layout):
    """Tokens on the busiest expert-parallel rank over the mean (``Stack.moe_load_factor``), where there is more than
    one rank: with ``ep == 1`` every expert sits on each GPU, which routes all of its own tokens whatever their split
    over the experts, so the rank's load is the mean (1)."""
    return np.where(lay.ep > 1, ctx.stack.moe_load_factor, 1.0)


def layout(ctx: Context, c: Mapping[str, np.ndarray]) -> Layout:
    """The :class:`Layout` of candidate arrays ``c`` (keys :data:`PARALLELISM_KEYS`; recompute as
    an index into :data:`RECOMPUTE`)."""
    tp, pp, dp, cp, ep = (np.asarray(c[k], float) for k in ("tp", "pp", "dp", "cp", "ep"))
    mb, v, rc, zero = (np.asarray(c[k], float) for k in ("microbatch", "interleave", "recompute", "zero"))
    n_vs = np.ceil(ctx.s.layers / (pp * v))
    stage = (tp * cp * dp).astype(np.int64)
    # a job inside one domain (e.g. 64 GPUs of an NVL72 rack) has its whole stage on NVLink
    block = np.where(stage * pp <= ctx.domain, stage, np.gcd(stage, int(ctx.domain)))
    return Layout(tp, pp, dp, cp, ep, mb, v, rc, zero, tokens=mb * ctx.seq_len / cp,
                  microbatches=ctx.batch_seqs / (dp * mb), layers_per_chunk=n_vs, layers_per_stage=n_vs * v,
                  domain_block=block, uniform_etp=bool(ctx.stack.uniform_expert_tp))


def format_layout(parallelism: dict | None) -> str:
    """A parallel layout in one short line, e.g. ``TP2 PP14x6 CP16 EP128 DP512 mb1 sel-rc Z1``."""
    if not parallelism:
        return "—"
    p = parallelism
    pp = f"PP{p.get('pp', 1)}" + (f"x{p['interleave']}" if p.get("interleave", 1) > 1 else "")
    rc = {"none": "no-rc", "selective": "sel-rc", "partial": "part-rc", "full": "full-rc"}.get(p.get("recompute"), "")
    return " ".join(x for x in (f"TP{p.get('tp', 1)}", pp, f"CP{p.get('cp', 1)}", f"EP{p.get('ep', 1)}",
                                f"DP{p.get('dp', 1)}", f"mb{p.get('microbatch', 1)}", rc,
                                f"Z{p['zero']}" if "zero" in p else "") if x)
