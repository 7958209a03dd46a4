"""Serving layouts: which (tp, dp, ep) a deployment may use, and the Pareto envelope over them.

:func:`intelligence_per_dollar.model.inference.frontier` and ``estimate`` search every layout
:func:`candidates` lists when the caller fixes none: attention tensor parallelism inside the
NVLink domain, attention data parallelism (``dp`` ranks, each with its own sequences and KV
cache) and expert parallelism over the whole replica, which may span NVLink domains (DeepEP's
inter-node all-to-all; DeepSeek-V3 arXiv 2412.19437 section 3.4 serves decode on EP320).

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

#: tp: attention tensor parallelism; dp: attention data-parallel ranks in one replica; ep: expert
#: parallelism (1 = experts tensor-split over the replica, ``tp*dp`` = one expert group per GPU).
PARALLELISM_KEYS = ("tp", "dp", "ep")


def candidates(ctx: kern.Context, gpus: int, fixed: Mapping | None = None) -> dict[str, np.ndarray]:
    """Valid (tp, dp, ep, replicas) for ``gpus`` GPUs: tp within the NVLink domain dividing the heads,
    dp attention ranks per replica, ep = 1 or the whole replica for MoE models (1 for dense)."""
    s = ctx.s
    fixed = dict(fixed or {})
    out = {k: [] for k in ("tp", "dp", "ep", "replicas")}
    divs = kern.divisors(gpus)
    tps = [tp for tp in divs if tp <= ctx.domain and s.heads % tp == 0]
    for r in divs:
        for tp in tps:
            if r % tp:
                continue
            dp = r // tp
            eps = [1, r] if architecture.is_moe(s) and r > 1 else [1]
            for ep in sorted(set(eps)):
                cand = {"tp": tp, "dp": dp, "ep": ep, "replicas": gpus // r}
                if any(k in fixed and fixed[k] != cand[k] for k in PARALLELISM_KEYS):
                    continue
                for k2, v in cand.items():
                    out[k2].append(v)
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


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
        if fixed["tp"] > ctx.domain:
            raise ValueError(f"parallelism['tp']={fixed['tp']} exceeds the NVLink domain of {ctx.acc.id} "
                             f"({ctx.domain} GPUs)")
    r = fixed.get("tp", 1) * fixed.get("dp", 1)
    if gpus % r:
        raise ValueError(f"tp x dp = {r} does not divide gpus={gpus}")
    if "ep" in fixed and fixed["ep"] != 1:
        if not architecture.is_moe(s):
            raise ValueError(f"parallelism['ep']={fixed['ep']} needs a mixture-of-experts model (experts=0)")
        if "tp" in fixed and "dp" in fixed and fixed["ep"] != r:
            raise ValueError(f"parallelism['ep']={fixed['ep']} must be 1 or tp x dp = {r} (one expert group per GPU)")
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
