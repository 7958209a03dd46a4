"""Exact layout searches over the GPUs a job uses, fast: the fastest layout on an allocation
(:func:`fastest`, idle GPUs allowed) and the fewest racks that meet a step-time limit
(:func:`fewest_racks`, the deadline inversion).

Neither assumes that anything rises monotonically with the GPU count (it does not: a count
whose factors do not suit the batch, the heads or the layers forces a poor layout). A job runs
on whole scale-up domains, all their GPUs or a :data:`~.search.JOB_BLOCK_GPUS` block of each
(or, smaller than a domain, on part of one; or on exactly the GPUs allocated); the rest idle.
Both searches look at every *base layout* ``(tp, pp, cp, dp)`` of such a job that fits the
allocation and evaluate in full every one that a lower bound on its step time cannot rule out:

    t_step >= (B s / (dp cp)) x ceil(L / pp) x c(tp, cp)

``B s / (dp cp)`` is the tokens one pipeline rank processes per step (any micro-batch size),
``ceil(L / pp)`` the fewest layers on the busiest stage, and ``c(tp, cp)`` the time per token
and layer of the layer's kernels alone (GEMMs, attention core, memory-bound traffic) at the
largest micro-batch and expert-parallel size, where each kernel's time per token is smallest
(the roofline-plus-overhead curves of :mod:`intelligence_per_dollar.model.efficiency` never
get slower per token as a kernel grows; tile padding is left out). Collectives, the bubble,
recompute, the LM head, data parallelism and the optimizer only add to it. A base layout whose
bound exceeds the limit (or the best step found) cannot win, so skipping it is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np

from intelligence_per_dollar.model import architecture
from intelligence_per_dollar.model.training import compute, memory, pipeline
from intelligence_per_dollar.model.training.context import Context, layout
from intelligence_per_dollar.model.training.evaluator import evaluate
from intelligence_per_dollar.model.training.search import JOB_BLOCK_GPUS, axis_values, complete, divisors

__all__ = ["Found", "placements", "token_layer_bound_s", "fastest", "fewest_racks"]

#: Base layouts evaluated per numpy pass (each expands to a few hundred full configurations):
#: the first pass takes the fewest, each next one twice as many, up to the most.
CHUNK_BASES = (8, 400)


@dataclass(frozen=True, eq=False)
class Found:
    """One search's winner: the context it ran in (its ``domain`` is the placement's GPUs per
    scale-up domain), its candidate arrays and results, its index, the GPUs it uses and the
    racks they occupy; ``evaluated`` counts the configurations evaluated in full."""

    ctx: Context
    c: Mapping[str, np.ndarray]
    r: Mapping[str, np.ndarray]
    i: int
    gpus_in_use: int
    racks: int
    evaluated: int


def placements(domain: int) -> tuple[int, ...]:
    """GPUs per scale-up domain a job may use: the whole domain first, then its job blocks."""
    return (domain,) + tuple(p for p in JOB_BLOCK_GPUS.get(domain, ()) if p != domain)


def token_layer_bound_s(ctx: Context, tp, cp, microbatch) -> tuple[np.ndarray, np.ndarray]:
    """Lower bounds on the time per token of any configuration with tensor parallelism ``tp``,
    context parallelism ``cp`` and micro-batch ``microbatch`` (arrays): of one layer (averaged
    over dense and MoE layers; its kernels forward and backward at the largest EP size, no
    communication, no recompute) and of the LM head."""
    tp, cp, mb = (np.asarray(x, float) for x in (tp, cp, microbatch))
    ones = np.ones_like(tp)
    ep = float(max(axis_values(ctx, 1, {})["ep"]))
    lay = layout(ctx, {"tp": tp, "pp": ones, "dp": ones, "cp": cp, "ep": ep * ones, "microbatch": mb,
                       "interleave": ones, "recompute": 0 * ones, "zero": ones})
    s = ctx.s
    l_moe = architecture.moe_layers(s)
    core_f, core_b = compute.attention_core_s(ctx, lay)
    act_dense, act_moe = memory.activations_per_token(ctx, lay)
    attn = compute.attention_gemm_s(ctx, lay)
    total = 0.0
    for n_layers, ffn, act, moe in ((s.layers - l_moe, compute.dense_ffn_gemm_s(ctx, lay), act_dense, False),
                                    (l_moe, compute.moe_ffn_gemm_s(ctx, lay, m_tile=1), act_moe, True)):
        if n_layers:
            mem_f, mem_b = compute.memory_bound_s(ctx, lay, act.per_gpu, moe)
            total = total + n_layers * (3 * (attn + ffn) + core_f + core_b + mem_f + mem_b)
    return total / s.layers / lay.tokens, compute.lm_head_s(ctx, lay) / lay.tokens


def _bases(ctx: Context, per: int, gpus_max: int, fixed: Mapping) -> dict[str, np.ndarray]:
    """Base layouts (tp, pp, cp, dp, gpus) on domains of ``per`` GPUs using at most ``gpus_max``
    GPUs: TP divides the heads and the domain (or the job is smaller than one domain), PP at most
    the layers, dp divides the batch; keys in ``fixed`` take their one value."""
    s = ctx.s
    axes = {"tp": [t for t in range(1, per + 1) if s.heads % t == 0 and (s.kv_heads % t == 0 or t % s.kv_heads == 0)],
            "pp": list(range(1, s.layers + 1)),
            "cp": axis_values(ctx, 1, {})["cp"], "dp": divisors(ctx.batch_seqs)}
    for k in axes:
        if k in fixed:
            axes[k] = [fixed[k]]
    mesh = np.meshgrid(*(np.asarray(axes[k], np.int64) for k in ("tp", "pp", "cp", "dp")), indexing="ij")
    tp, pp, cp, dp = (m.ravel() for m in mesh)
    g = tp * pp * cp * dp
    # a stated TP may span whole domains (its all-reduce then runs hierarchically, inside and across them)
    across = (tp % per == 0) if "tp" in fixed else np.zeros_like(tp, dtype=bool)
    ok = (g <= gpus_max) & ((per % tp == 0) | (g < per) | across)
    return {"tp": tp[ok], "pp": pp[ok], "cp": cp[ok], "dp": dp[ok], "gpus": g[ok]}


def _lower_bounds(ctx: Context, b: Mapping[str, np.ndarray]) -> np.ndarray:
    """A lower bound on the step time of each base layout: over the micro-batch sizes it admits,
    ``(m + bubble) x t_microbatch`` with the bubble at the deepest interleave allowed and the
    micro-batch time at least :func:`token_layer_bound_s` times its tokens and the busiest
    stage's fewest layers, plus the LM head where it always sits on the last stage."""
    L = ctx.s.layers
    bound = np.full(len(b["tp"]), np.inf)
    v_all = np.asarray(axis_values(ctx, 1, {})["interleave"])
    for mb in axis_values(ctx, 1, {})["microbatch"]:
        ok = ctx.batch_seqs % (b["dp"] * mb) == 0
        m = ctx.batch_seqs // (b["dp"] * mb)
        pairs, inv = np.unique(np.stack([b["tp"], b["cp"]]), axis=1, return_inverse=True)
        layer_tok, head_tok = token_layer_bound_s(ctx, pairs[0], pairs[1], mb * np.ones(pairs.shape[1]))
        layer_tok, head_tok = layer_tok[inv.ravel()], head_tok[inv.ravel()]
        pp = b["pp"]
        interleaved = (pp > 1) & (m % np.maximum(pp, 1) == 0)
        v_max = np.where(interleaved, np.max(np.where(pp[:, None] * v_all[None, :] <= L + 2, v_all[None, :], 1),
                                             axis=1), 1)
        slots = pipeline.bubble_slots(ctx.stack.pipeline_schedule, pp, v_max)
        tokens = mb * ctx.seq_len / b["cp"]
        # a split that moves layers off the last stage may hide the head: no head in the bound then
        st = ctx.stack
        head_free = st.balanced_head_split or st.embedding_and_loss_in_split or st.cost_balanced_split
        t_mb = tokens * (np.ceil(L / pp) * layer_tok + (0.0 if head_free else head_tok))
        bound = np.where(ok, np.minimum(bound, (m + slots) * t_mb), bound)
    return bound


def _options(ctx: Context, allowed, fixed: Mapping) -> list[tuple[Context, dict[str, np.ndarray]]]:
    """Per placement: its context and base layouts, with ``racks`` and ``bound_s``, kept where
    ``allowed(per, gpus, racks)`` holds."""
    out = []
    for per in placements(ctx.domain):
        c2 = replace(ctx, domain=per)
        b = _bases(c2, per, allowed.gpus_max, fixed)
        racks = -(-b["gpus"] // per)
        keep = (b["gpus"] % per == 0) | (b["gpus"] < per) | ((per == ctx.domain) & (b["gpus"] == allowed.gpus))
        keep &= allowed(per, b["gpus"], racks)
        b = {k: v[keep] for k, v in b.items()}
        b["racks"] = racks[keep]
        b["bound_s"] = _lower_bounds(c2, b)
        out.append((c2, b))
    return out


def _evaluate_bases(ctx: Context, b: Mapping[str, np.ndarray], idx: np.ndarray, fixed: Mapping):
    """Full candidates of base layouts ``idx`` of ``b`` (arrays, with ``racks`` and ``gpus``
    carried along) and their results; None if none is valid."""
    grid = axis_values(ctx, 1, fixed)
    base = {k: b[k][idx] for k in ("tp", "pp", "cp", "dp")}
    base["_racks"], base["_gpus"] = b["racks"][idx], b["gpus"][idx]
    c = complete(ctx, base, grid)
    if not len(c["tp"]):
        return None
    return c, evaluate(ctx, c)


class _Allocation:
    """Which base layouts an allocation admits: ``racks`` whole domains, or ``gpus`` GPUs of
    ``domain``-GPU domains (whole domains plus a part-used one; with ``block``, ``gpus`` is a
    whole number of ``block``-GPU groups, one per domain, and only such groups are used)."""

    def __init__(self, domain: int, gpus: int | None = None, racks: int | None = None, block: int | None = None):
        self.domain, self.gpus, self.racks, self.block = domain, gpus, racks, block
        self.gpus_max = gpus if gpus is not None else racks * domain

    def __call__(self, per, gpus, racks):
        if self.racks is not None:
            return racks <= self.racks
        if self.block is not None:
            return (per != self.domain) & (per <= self.block) & (racks <= self.gpus // self.block)
        whole, rest = divmod(self.gpus, self.domain)
        return (per == self.domain) | (racks <= whole + (rest >= per))


def fastest(ctx: Context, gpus: int, fixed: Mapping, block: int | None = None) -> tuple[Found | None, int, dict]:
    """The fastest fitting configuration on an allocation of ``gpus`` GPUs (scale-up domains of
    ``ctx.domain``; with ``block``, ``gpus / block`` groups of ``block`` GPUs, one per domain)
    using any number of them. Returns ``(found or None, configurations evaluated,
    {"min_memory_bytes", "usable_bytes"} of what was evaluated)``."""
    alloc = _Allocation(ctx.domain, gpus=gpus, block=block)
    opts = _options(ctx, alloc, fixed)
    order = sorted(((float(bd), j, k) for j, (_, b) in enumerate(opts) for k, bd in enumerate(b["bound_s"])))
    best, best_t, n, mem = None, np.inf, 0, {"min_memory_bytes": np.inf, "usable_bytes": None}
    start, size = 0, CHUNK_BASES[0]
    while start < len(order):
        chunk = order[start:start + size]
        start, size = start + size, min(2 * size, CHUNK_BASES[1])
        if chunk[0][0] >= best_t:
            break
        for j, (c2, b) in enumerate(opts):
            idx = np.asarray([k for _, jj, k in chunk if jj == j], np.int64)
            got = _evaluate_bases(c2, b, idx, fixed) if len(idx) else None
            if got is None:
                continue
            c, r = got
            n += len(c["tp"])
            mem["min_memory_bytes"] = min(mem["min_memory_bytes"], float(np.min(r["memory_per_gpu_bytes"])))
            mem["usable_bytes"] = float(r["usable_bytes"])
            t = np.where(r["fits"], r["step_time_s"], np.inf)
            i = int(np.argmin(t))
            if t[i] < best_t:
                best_t = float(t[i])
                best = (c2, c, r, i)
    if best is None:
        return None, n, mem
    c2, c, r, i = best
    return Found(c2, c, r, i, int(c["_gpus"][i]), int(c["_racks"][i]), n), n, mem


def fewest_racks(ctx: Context, step_limit_s: float, max_racks: int) -> Found | None:
    """Fewest scale-up domains (at most ``max_racks``) on which some configuration, using any
    of their GPUs, fits and takes at most ``step_limit_s`` per step; the fastest such
    configuration on that many domains. None if there is none."""
    opts = _options(ctx, _Allocation(ctx.domain, racks=max_racks), {})
    for _, b in opts:
        keep = b["bound_s"] <= step_limit_s * (1 + 1e-9)
        for k in list(b):
            b[k] = b[k][keep]
    order = sorted((int(rk), j, k) for j, (_, b) in enumerate(opts) for k, rk in enumerate(b["racks"]))
    n, start = 0, 0
    while start < len(order):
        stop = min(start + CHUNK_BASES[1], len(order))
        while stop < len(order) and order[stop][0] == order[stop - 1][0]:
            stop += 1                      # whole rack counts per chunk
        chunk = order[start:stop]
        start = stop
        best = None
        for j, (c2, b) in enumerate(opts):
            idx = np.asarray([k for _, jj, k in chunk if jj == j], np.int64)
            got = _evaluate_bases(c2, b, idx, {}) if len(idx) else None
            if got is None:
                continue
            c, r = got
            n += len(c["tp"])
            ok = r["fits"] & (r["step_time_s"] <= step_limit_s)
            if not ok.any():
                continue
            racks = np.where(ok, c["_racks"], np.iinfo(np.int64).max)
            fewest = racks.min()
            t = np.where(ok & (racks == fewest), r["step_time_s"], np.inf)
            i = int(np.argmin(t))
            key = (int(fewest), float(t[i]))
            if best is None or key < best[0]:
                best = (key, c2, c, r, i)
        if best is not None:
            _, c2, c, r, i = best
            return Found(c2, c, r, i, int(c["_gpus"][i]), int(c["_racks"][i]), n)
    return None
