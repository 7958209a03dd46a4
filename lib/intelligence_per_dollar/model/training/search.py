"""The layout search: every valid parallel configuration for a GPU count, as candidate arrays
(:func:`candidates`), and the fastest one that fits (:func:`choose`).

The search covers TP x PP x interleave x DP x EP x CP x micro-batch x recompute x ZeRO in a few
numpy passes (:func:`~.evaluate.evaluate` takes all candidates at once).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Mapping

import numpy as np

from intelligence_per_dollar.model.training.context import RECOMPUTE, Context
from intelligence_per_dollar.model.training.evaluator import evaluate

__all__ = ["JOB_BLOCK_GPUS", "STATED_MEMORY_TOLERANCE", "divisors", "axis_values", "candidates", "complete",
           "job_domain", "choose", "choose_stated"]

#: How far over the usable HBM the memory model may put a layout the caller states (a run that
#: really ran) before it is refused, low/central/high. The memory model counts what Megatron-Core
#: keeps (BF16 weights, FP32 gradients and Adam master + moments, FP32 logits and their gradient);
#: frameworks save memory it does not see: BF16 optimizer states (pure-BF16 Adam in FSDP2 when the
#: model is loaded in BF16), cross entropy without the FP32 upcast (NeMo AutoModel's
#: ``MaskedCrossEntropy(fp32_upcast=False)``), expandable allocator segments, offload. Derived from
#: the measured runs: torchtitan's reported peaks are 15% below to 25% above the model's
#: (tests/unit/test_validation_training.py), and runs that really ran on 80 GB GPUs need up to 1.27x
#: the usable HBM in the model (data/runs/README.md, "memory of runs that ran"). The search, which
#: proposes layouts, never uses it: only a stated layout is given the benefit of the doubt.
STATED_MEMORY_TOLERANCE = {"low": 0.15, "central": 0.30, "high": 0.40}

#: GPUs of one scale-up domain a job may use, by domain size. NVL72 racks are scheduled as
#: blocks of 16 of their 18 compute trays (64 GPUs; Slurm topology/block ``--segment=16``,
#: the usual GB200 NVL72 practice, keeping two trays as hot spares), and NVIDIA's own NVL72
#: training benchmarks run on power-of-two GPU counts (Megatron-Bridge performance summary:
#: 64, 128, 256 GPUs). A 64-GPU block lets the batch, expert parallelism and data parallelism
#: factor evenly (72 = 8 x 9 forces a factor 9 into TP or PP). The deadline inversion counts
#: whole domains either way and takes the faster use.
JOB_BLOCK_GPUS = {72: (72, 64)}


def divisors(n: int, cap: int | None = None) -> list[int]:
    out = [k for k in range(1, int(math.isqrt(n)) + 1) if n % k == 0]
    out = sorted(set(out + [n // k for k in out]))
    return [k for k in out if cap is None or k <= cap]


def _cross(c: dict[str, np.ndarray], key: str, values) -> dict[str, np.ndarray]:
    """Cartesian product of the candidate arrays ``c`` with ``values`` for ``key``."""
    vals = np.asarray(list(values), dtype=np.int64)
    n = len(next(iter(c.values())))
    out = {k: np.repeat(a, len(vals)) for k, a in c.items()}
    out[key] = np.tile(vals, n)
    return out


def _keep(c: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, np.ndarray]:
    return {k: a[ok] for k, a in c.items()}


def axis_values(ctx: Context, gpus: int, fixed: Mapping) -> dict[str, list[int]]:
    """Values each axis may take: TP divides the heads (and the KV heads, or is a multiple of
    them) and never straddles scale-up domains; PP at most the layers; CP splits the sequence
    into 2 cp chunks (load-balanced causal ring); keys in ``fixed`` take their one value."""
    s = ctx.s
    grid = {
        "tp": [t for t in divisors(gpus, ctx.domain) if s.heads % t == 0
               and (s.kv_heads % t == 0 or t % s.kv_heads == 0) and (ctx.domain % t == 0 or gpus < ctx.domain)],
        "pp": [q for q in divisors(gpus) if q <= s.layers],
        "cp": [c for c in (1, 2, 4, 8, 16, 32) if ctx.seq_len % (2 * c) == 0 or c == 1],
        "interleave": [1, 2, 3, 4, 6, 8],
        "microbatch": [1, 2, 4, 8],
        "ep": divisors(s.experts) if s.experts else [1],
        "recompute": list(range(len(RECOMPUTE))),
        "zero": [1, 3],
    }
    for k, val in fixed.items():
        if k in grid:
            grid[k] = [val]
    return grid


def candidates(ctx: Context, gpus: int, fixed: Mapping | None = None) -> dict[str, np.ndarray]:
    """All valid configurations (arrays) for ``gpus`` GPUs, honouring the ``fixed`` keys.

    Built one axis at a time, each product filtered at once (tp x pp x cp first, whose product
    must divide ``gpus`` and leave a data-parallel size that divides the batch), so the arrays
    never hold the full cartesian product of invalid combinations.
    """
    fixed = dict(fixed or {})
    grid = axis_values(ctx, gpus, fixed)
    c = {"tp": np.asarray(grid["tp"], np.int64)}
    c = _cross(c, "pp", grid["pp"])
    c = _cross(c, "cp", grid["cp"])
    c = _keep(c, gpus % (c["tp"] * c["pp"] * c["cp"]) == 0)
    c["dp"] = gpus // (c["tp"] * c["pp"] * c["cp"])
    ok = (ctx.batch_seqs % c["dp"] == 0)
    if "dp" in fixed:
        ok &= c["dp"] == fixed["dp"]
    return complete(ctx, _keep(c, ok), grid)


def complete(ctx: Context, c: Mapping[str, np.ndarray], grid: Mapping[str, list[int]]) -> dict[str, np.ndarray]:
    """Cross base layouts ``c`` (arrays tp, pp, cp, dp whose dp divides the batch) with the
    micro-batch, interleave, EP, ZeRO and recompute values of ``grid`` (see :func:`candidates`),
    keeping the valid combinations."""
    s = ctx.s
    c = _cross(dict(c), "microbatch", grid["microbatch"])
    c = _keep(c, ctx.batch_seqs % (c["dp"] * c["microbatch"]) == 0)
    m = ctx.batch_seqs // (c["dp"] * c["microbatch"])
    c["_m"] = m
    c = _cross(c, "interleave", grid["interleave"])
    v, pp = c["interleave"], c["pp"]
    ok = (v == 1) | ((pp > 1) & (c["_m"] % np.maximum(pp, 1) == 0))
    # a virtual stage may hold the embedding or the loss instead of a layer (Megatron-Core
    # account_for_embedding/loss_in_pipeline_split), so pp x v may exceed the layers by 2;
    # uneven splits need no divisibility: Megatron-Core's pipeline_model_parallel_layout places
    # any number of layers on each (virtual) stage, so pp x v need not divide the layers
    ok &= pp * v <= s.layers + 2
    c = _keep(c, ok)
    c = _cross(c, "ep", grid["ep"])
    # EP is carved out of the TP x CP x DP ranks; with the experts split over TP, out of one TP rank's DP x CP peers
    ep_peers = c["cp"] * c["dp"] * (1 if ctx.stack.uniform_expert_tp else c["tp"])
    c = _keep(c, ep_peers % c["ep"] == 0)
    c = _cross(c, "zero", grid["zero"])
    c = _keep(c, (c["zero"] != 3) | (c["pp"] == 1))
    c = _cross(c, "recompute", grid["recompute"])
    c.pop("_m")
    return c


def job_domain(ctx: Context, gpus: int) -> Context:
    """The scale-up domain a ``gpus``-GPU job actually sees: a :data:`JOB_BLOCK_GPUS` block when
    the job is a whole number of such blocks but not of full domains (e.g. 256 GPUs on NVL72
    racks run as 4 x 64)."""
    if gpus <= ctx.domain or gpus % ctx.domain == 0:
        return ctx
    for per in JOB_BLOCK_GPUS.get(ctx.domain, ()):
        if per != ctx.domain and gpus % per == 0:
            return replace(ctx, domain=per)
    return ctx


def choose(ctx: Context, gpus: int, fixed: Mapping):
    """Evaluate every candidate; return ``(index of the fastest that fits or None, candidates,
    results, number of candidates)``."""
    c = candidates(ctx, gpus, fixed)
    n = len(c["tp"])
    if n == 0:
        return None, c, None, 0
    r = evaluate(ctx, c)
    t = np.where(r["fits"], r["step_time_s"], np.inf)
    i = int(np.argmin(t))
    return (i if np.isfinite(t[i]) else None), c, r, n


def choose_stated(ctx: Context, gpus: int, fixed: Mapping, tolerance: float):
    """:func:`choose` for a layout the caller states: when none of its candidates fits, the fastest
    whose memory is within ``(1 + tolerance)`` x the usable HBM (:data:`STATED_MEMORY_TOLERANCE`) and whose
    offloaded activations fit the host memory.
    Returns ``(index or None, candidates, results, number of candidates, memory fits)``."""
    i, c, r, n = choose(ctx, gpus, fixed)
    if i is not None or n == 0:
        return i, c, r, n, True
    near = (r["memory_per_gpu_bytes"] <= r["usable_bytes"] * (1.0 + tolerance)) & r["host_fits"]
    t = np.where(near, r["step_time_s"], np.inf)
    j = int(np.argmin(t))
    return (j if np.isfinite(t[j]) else None), c, r, n, False
