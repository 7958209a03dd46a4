"""Serving layouts: which (tp, dp, ep, pp) a deployment may use, and the Pareto envelope over them.

:func:`intelligence_per_dollar.model.inference.frontier` and ``estimate`` search every layout
:func:`candidates` lists when the caller fixes none: attention tensor parallelism inside the
NVLink domain, attention data parallelism (``dp`` ranks, each with its own sequences and KV
cache) and expert parallelism over the whole replica, which may span NVLink domains (DeepEP's
inter-node all-to-all; DeepSeek-V3 arXiv 2412.19437 section 3.4 serves decode on EP320), and
pipeline parallelism across nodes (``pp`` stages of ``tp x dp`` GPUs, :mod:`serving_pipeline`): the
search adds ``pp > 1`` where each stage fills whole NVLink domains ("the tensor parallel size is
the number of GPUs you want to use in each node, and the pipeline parallel size is the number of
nodes", vLLM docs, *Distributed inference and serving*), which is what serves a model whose weights
do not fit in one domain (Llama 3.1 405B in BF16 on two 8-GPU H100 nodes: TP8 x PP2). A caller's
``pp`` is honoured inside a domain too, and a caller's ``tp`` across whole domains (SGLang's and vLLM's
documented ``--tp 16`` over two 8-GPU nodes; its all-reduce crosses the NICs,
:func:`serving_kernels.tp_all_reduce_s`): the search never picks it.

**Why MLA models want attention-DP + EP.** MLA's KV cache is one latent per token shared by all
heads (DeepSeek-V2, arXiv 2405.04434 section 2.1.2), so tensor parallelism cannot shard it: a TP
group of ``tp`` GPUs stores every sequence's latent ``tp`` times and each GPU reads all of it
(:func:`serving_kernels.kv_shards`). With attention DP each GPU holds and reads only its own
sequences, so DP + EP fits ``tp`` times the batch; with the KV replication priced, the search
picks TP at one to a few sequences per GPU (weights dominate: TensorRT-LLM's DeepSeek-R1
min-latency setting is TP8) and DP + EP at load (its max-throughput setting, and SGLang's), with
nothing passed by hand. Checked in ``tests/unit/test_serving_layouts.py``.

:func:`pareto_mask` keeps the points no other point beats on both per-user speed and output
tokens/s per GPU (the throughput-interactivity envelope), so the frontier has no dominated points
and per-user speed falls monotonically along it as throughput rises.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from intelligence_per_dollar.model import architecture
from intelligence_per_dollar.model import serving_kernels as kern
from intelligence_per_dollar.sources import checks

__all__ = ["PARALLELISM_KEYS", "candidates", "check_parallelism", "pareto_mask"]

#: tp: attention tensor parallelism; dp: attention data-parallel ranks in one pipeline stage; ep: expert
#: parallelism (1 = experts tensor-split over the stage, ``tp*dp`` = one expert group per GPU, a divisor between:
#: ``E/ep`` experts per GPU, each split over ``tp*dp/ep`` GPUs); pp:
#: pipeline stages (a replica is ``tp*dp*pp`` GPUs).
PARALLELISM_KEYS = ("tp", "dp", "ep", "pp")


def candidates(ctx: kern.Context, gpus: int, fixed: Mapping | None = None) -> dict[str, np.ndarray]:
    """Valid (tp, dp, ep, pp, replicas) for ``gpus`` GPUs: tp within the NVLink domain dividing the heads
    (or across whole domains when the caller fixes it: SGLang's and vLLM's ``--tp 16`` over two 8-GPU nodes),
    dp attention ranks per stage, ep = 1 or the whole stage for MoE models (1 for dense; with tp and dp fixed, a
    caller's hybrid ep that divides the stage and the experts too, :func:`_expert_parallel_sizes`), pp stages of at
    least one layer each whose ``tp dp`` GPUs fill whole NVLink domains (any pp the caller fixes)."""
    s = ctx.s
    fixed = dict(fixed or {})
    out = {k: [] for k in ("tp", "dp", "ep", "pp", "replicas")}
    divs = kern.divisors(gpus)
    tps = [tp for tp in divs if (tp <= ctx.domain or tp == fixed.get("tp")) and s.heads % tp == 0]
    for r in divs:                                    # GPUs per replica
        for tp in tps:
            if r % tp:
                continue
            for pp in kern.divisors(r // tp):
                st = r // pp                          # GPUs per stage: tp x dp
                if pp > 1 and (pp > s.layers or ("pp" not in fixed and st % ctx.domain)):
                    continue
                for ep in _expert_parallel_sizes(s, st, fixed):
                    cand = {"tp": tp, "dp": st // tp, "ep": ep, "pp": pp, "replicas": gpus // r}
                    if any(k in fixed and fixed[k] != cand[k] for k in PARALLELISM_KEYS):
                        continue
                    for k2, v in cand.items():
                        out[k2].append(v)
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def _expert_parallel_sizes(s, stage_gpus: int, fixed: Mapping) -> list[int]:
    """The expert-parallel sizes a stage of ``stage_gpus`` GPUs may use: 1 (every expert split over the stage) and the
    whole stage (one expert group per GPU) for a MoE model, plus a hybrid size the caller fixes together with the
    stage itself (``tp`` and ``dp``) that divides both the stage and the expert count (TensorRT-LLM's
    ``moe_expert_parallel_size`` x ``moe_tensor_parallel_size`` = the stage, e.g. TP8 with EP4: each GPU holds
    ``E/4`` experts, each split over 2 GPUs). The search itself lists only the two pure layouts, and an ``ep`` fixed
    without ``tp`` and ``dp`` keeps its pure meaning (a whole stage of ``ep`` GPUs)."""
    if not architecture.is_moe(s):
        return [1]
    sizes = {1, stage_gpus}
    ep = fixed.get("ep")
    if (ep and "tp" in fixed and "dp" in fixed and fixed["tp"] * fixed["dp"] == stage_gpus
            and stage_gpus % ep == 0 and s.experts % ep == 0):
        sizes.add(ep)
    return sorted(sizes)


def check_parallelism(ctx: kern.Context, gpus: int, par: Mapping) -> dict:
    """The caller's fixed layout keys, validated (``ValueError`` naming the key and the constraint)."""
    unknown = sorted(set(par) - set(PARALLELISM_KEYS))
    if unknown:
        raise ValueError(f"parallelism has unknown key(s) {', '.join(map(repr, unknown))}; "
                         f"allowed: {', '.join(PARALLELISM_KEYS)}")
    fixed = {k: checks.positive_int(f"parallelism[{k!r}]", v) for k, v in par.items()}
    s = ctx.s
    if "tp" in fixed:
        if s.heads % fixed["tp"]:
            raise ValueError(f"parallelism['tp']={fixed['tp']} does not divide the model's heads={s.heads}")
        if fixed["tp"] > ctx.domain and fixed["tp"] % ctx.domain:
            raise ValueError(f"parallelism['tp']={fixed['tp']} exceeds the NVLink domain of {ctx.acc.id} "
                             f"({ctx.domain} GPUs) without filling whole domains: tensor parallelism across "
                             f"domains must be a multiple of {ctx.domain}")
    r = fixed.get("tp", 1) * fixed.get("dp", 1)
    if gpus % r:
        raise ValueError(f"tp x dp = {r} does not divide gpus={gpus}")
    if "pp" in fixed:
        if fixed["pp"] > s.layers:
            raise ValueError(f"parallelism['pp']={fixed['pp']} exceeds the model's layers={s.layers}; allowed: "
                             f"1 to {s.layers} pipeline stages of at least one whole layer")
        if (gpus // r) % fixed["pp"]:
            raise ValueError(f"parallelism['pp']={fixed['pp']} must divide gpus / (tp x dp) = {gpus} / {r} = "
                             f"{gpus // r}")
    if "ep" in fixed and fixed["ep"] != 1:
        if not architecture.is_moe(s):
            raise ValueError(f"parallelism['ep']={fixed['ep']} needs a mixture-of-experts model (experts=0)")
        if "tp" in fixed and "dp" in fixed and r % fixed["ep"]:
            raise ValueError(f"parallelism['ep']={fixed['ep']} must divide tp x dp = {r} (1: experts split over the "
                             f"stage; {r}: one expert group per GPU; between: each expert split over "
                             f"tp x dp / ep GPUs)")
        if fixed["ep"] < r and s.experts % fixed["ep"]:
            raise ValueError(f"parallelism['ep']={fixed['ep']} (between 1 and tp x dp = {r}, each expert split over "
                             f"tp x dp / ep GPUs) does not divide the model's experts={s.experts}")
    return fixed


def pareto_mask(speed, throughput) -> np.ndarray:
    """Points on the upper-right envelope of (per-user speed, throughput per GPU).

    A point is kept unless another is at least as good on both and better on one. Sorted by speed
    (descending, ties by throughput descending), a point survives iff its throughput beats every
    faster point's: one pass, O(n log n). Of exact duplicates the first is kept.
    """
    u = np.asarray(speed, float).ravel()
    t = np.asarray(throughput, float).ravel()
    if u.shape != t.shape:
        raise ValueError(f"speed and throughput must have the same shape, got {u.shape} and {t.shape}")
    order = np.lexsort((-t, -u))
    best = np.maximum.accumulate(np.concatenate(([-np.inf], t[order])))[:-1]
    keep = np.zeros(u.shape, bool)
    keep[order] = t[order] > best
    return keep
