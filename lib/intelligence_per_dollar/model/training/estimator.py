"""The API contract of issue 3: :func:`estimate` predicts the step time, throughput, MFU and
memory of training a model on a GPU count, with the parallel layout fixed, partly fixed or
searched. MFU is never an input: it comes out of the shapes, the calibrated efficiency curves
(:mod:`intelligence_per_dollar.model.efficiency`) and the collective costs
(:mod:`intelligence_per_dollar.model.collectives`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from intelligence_per_dollar.model import architecture
from intelligence_per_dollar.model.training import exact
from intelligence_per_dollar.model.training.context import (PARALLELISM_KEYS, RECOMPUTE, Context, check_int,
                                                            make_context)
from intelligence_per_dollar.model.training.search import STATED_MEMORY_TOLERANCE, choose, choose_stated, job_domain
from intelligence_per_dollar.model.training.stack import Stack

__all__ = ["MAX_GPUS", "Estimate", "make_estimate", "estimate"]

#: Largest GPU count the model takes (far beyond any cluster; keeps every search bounded).
MAX_GPUS = 2**24


@dataclass(frozen=True)
class Estimate:
    """One configuration's predicted performance (SI units).

    ``gpus``: the GPUs allocated; ``gpus_in_use``: those the layout runs on (the rest idle).
    ``tokens_per_s_per_gpu`` is per GPU *allocated* (what an owner of the allocation gets);
    ``model_flops_per_s_per_gpu`` and ``mfu`` are per GPU *in use* (how well the job runs).
    ``memory_fits`` is False when a stated layout was predicted although the memory model puts it
    over the usable HBM (within :data:`~.search.STATED_MEMORY_TOLERANCE`; the run is taken to have
    used memory savings the model does not count)."""

    step_time_s: float
    tokens_per_s_per_gpu: float
    model_flops_per_s_per_gpu: float
    mfu: float
    memory_per_gpu_bytes: float
    memory_breakdown_bytes: Mapping[str, float]
    parallelism: Mapping[str, object]
    time_breakdown_s: Mapping[str, float]
    gpus: int
    accelerator: str
    precision: str
    model_flops_per_token: float
    configurations_evaluated: int = 1
    gpus_in_use: int | None = None
    memory_fits: bool = True

    def __post_init__(self):
        if self.gpus_in_use is None:
            object.__setattr__(self, "gpus_in_use", self.gpus)

    @property
    def tokens_per_s(self) -> float:
        """Tokens per second of the whole job."""
        return self.tokens_per_s_per_gpu * self.gpus


def _fixed_values(par: Mapping) -> dict:
    """The fixed parallelism keys as integers (recompute as its index), each value checked."""
    unknown = sorted(set(par) - set(PARALLELISM_KEYS))
    if unknown:
        raise ValueError(f"parallelism has unknown key(s) {', '.join(map(repr, unknown))}; "
                         f"allowed: {', '.join(PARALLELISM_KEYS)}")
    fixed = {}
    for k, val in par.items():
        if k == "recompute":
            if val not in RECOMPUTE:
                raise ValueError(f"parallelism['recompute']={val!r} is not allowed; allowed: {', '.join(RECOMPUTE)}")
            fixed[k] = RECOMPUTE.index(val)
            continue
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < (0 if k == "zero" else 1):
            raise ValueError(f"parallelism[{k!r}]={val!r} must be an integer >= {0 if k == 'zero' else 1}")
        if k == "zero" and val > 3:
            raise ValueError(f"parallelism['zero']={val!r} must be 0, 1, 2 or 3")
        fixed[k] = int(val)
    return fixed


def _check_against_model(ctx: Context, gpus: int, fixed: Mapping) -> None:
    """Raise ``ValueError`` naming the constraint the fixed keys break (heads, experts, products, batch)."""
    s = ctx.s
    if "tp" in fixed and s.heads % fixed["tp"]:
        raise ValueError(f"parallelism['tp']={fixed['tp']} does not divide model heads={s.heads}")
    if "ep" in fixed and s.experts and s.experts % fixed["ep"]:
        raise ValueError(f"parallelism['ep']={fixed['ep']} does not divide model experts={s.experts}")
    if "ep" in fixed and not s.experts and fixed["ep"] != 1:
        raise ValueError(f"parallelism['ep']={fixed['ep']} needs a mixture-of-experts model (experts=0)")
    prod_keys = [k for k in ("tp", "pp", "cp", "dp") if k in fixed]
    if len(prod_keys) == 4 and fixed["tp"] * fixed["pp"] * fixed["cp"] * fixed["dp"] != gpus:
        raise ValueError(f"tp x pp x cp x dp = {fixed['tp']} x {fixed['pp']} x {fixed['cp']} x {fixed['dp']} = "
                         f"{fixed['tp'] * fixed['pp'] * fixed['cp'] * fixed['dp']} does not equal gpus={gpus}")
    prod = math.prod(fixed[k] for k in prod_keys)
    if prod > gpus:
        raise ValueError(f"the product of {', '.join(prod_keys)} ({prod}) exceeds gpus={gpus}")
    if all(k in fixed for k in ("tp", "cp", "dp", "ep")) and (fixed["tp"] * fixed["cp"] * fixed["dp"]) % fixed["ep"]:
        raise ValueError(f"parallelism['ep']={fixed['ep']} must divide tp x cp x dp = "
                         f"{fixed['tp'] * fixed['cp'] * fixed['dp']} (experts are carved out of those ranks)")
    if "pp" in fixed and fixed["pp"] > s.layers:
        raise ValueError(f"parallelism['pp']={fixed['pp']} exceeds the model's layers={s.layers}")
    if "dp" in fixed and "microbatch" in fixed and ctx.batch_seqs % (fixed["dp"] * fixed["microbatch"]):
        raise ValueError(f"global batch of {ctx.batch_seqs} sequences is not divisible by dp x microbatch = "
                         f"{fixed['dp'] * fixed['microbatch']}")


def make_estimate(ctx: Context, c, r, i: int, gpus: int, n: int, gpus_allocated: int | None = None,
                  memory_fits: bool = True) -> Estimate:
    """The :class:`Estimate` of candidate ``i`` of candidates ``c`` with results ``r`` (of ``n``
    evaluated), running on ``gpus`` GPUs of ``gpus_allocated`` (default: the same)."""
    step = float(r["step_time_s"][i])
    tokens = ctx.batch_seqs * ctx.seq_len
    alloc = gpus if gpus_allocated is None else gpus_allocated
    tps = tokens / step / alloc
    f_tok = float(architecture.training_flops_per_token(ctx.s, ctx.seq_len, causal=True))
    mflops = tokens / step / gpus * f_tok
    shape = c["tp"].shape
    par = {k: int(c[k][i]) for k in ("tp", "pp", "dp", "cp", "ep", "microbatch", "interleave")}
    par["recompute"] = RECOMPUTE[int(c["recompute"][i])]
    par["zero"] = int(c["zero"][i])
    mem = {k: float(np.broadcast_to(r[k + "_bytes"], shape)[i]) for k in ("weights", "gradients", "optimizer",
                                                                          "activations")}
    tb = {k: float(np.broadcast_to(r[k], shape)[i]) for k in
          ("pipeline_s", "bubble_s", "dp_exposed_s", "optimizer_s", "microbatch_s", "tp_comm_per_layer_s",
           "ep_a2a_per_layer_s")}
    # one step = (micro-batches + bubble) x micro-batch time, split by part, + DP + optimizer
    slots = float(np.broadcast_to(r["microbatches"], shape)[i]) + tb["bubble_s"] / max(tb["microbatch_s"], 1e-30)
    for k, val in r["microbatch_parts_s"].items():
        tb["step_" + k + "_s"] = float(np.broadcast_to(val, shape)[i]) * slots
    return Estimate(step_time_s=step, tokens_per_s_per_gpu=tps, model_flops_per_s_per_gpu=mflops,
                    mfu=mflops / ctx.peak, memory_per_gpu_bytes=float(r["memory_per_gpu_bytes"][i]),
                    memory_breakdown_bytes=mem, parallelism=par, time_breakdown_s=tb, gpus=alloc,
                    accelerator=ctx.acc.id, precision=ctx.precision, model_flops_per_token=f_tok,
                    configurations_evaluated=n, gpus_in_use=gpus, memory_fits=bool(memory_fits))


def estimate(model, accelerator: str, gpus: int, precision: str = "bf16", seq_len: int = 4096,
             global_batch_tokens: float = 4 * 2**20, parallelism: Mapping | None = None, *,
             stack: Stack | None = None, scenario: str = "central", fallback: bool = False,
             all_gpus: bool = False, power_cap_w: float | None = None,
             gpu_speed_cv: float | None = None, document_tokens: float | None = None) -> Estimate:
    """Predicted step time, throughput, MFU and memory of training ``model`` on ``gpus`` GPUs.

    ``accelerator``: a catalogue id or an :class:`~intelligence_per_dollar.sources.hardware.Accelerator`.
    ``parallelism``: None to search, or a dict fixing any of :data:`PARALLELISM_KEYS` (keys left
    out are searched). The search may leave GPUs idle when a layout on fewer of them is faster
    (a scheduler would; :func:`~.exact.fastest`), so more GPUs never lower the best throughput;
    ``all_gpus=True`` insists on every GPU (a measured run's layout). ``power_cap_w``: the board
    power limit the GPUs run at, in ``(0, rated power]`` (None: the rated limit); a lower limit
    lowers the sustained clock of compute-bound kernels (:func:`~.context.power_capped_ceilings`).
    ``gpu_speed_cv``: the chip-to-chip spread of the sustained clock in the fleet, which the step waits for
    (:func:`~.pipeline.slowest_gpu_s`; None: the sourced assumption for ``scenario``, 0: identical GPUs).
    ``document_tokens``: the length of the documents packed into each sequence when attention is masked to each
    document (packed fine-tuning samples, document masking; the token-weighted mean ``E[l^2] / E[l]``), which
    shortens the flash-attention span (:func:`~.compute.attention_span`); None: one document per sequence.
    Raises ``ValueError``
    naming the constraint for unknown keys, impossible parallelism (products, divisibility) or a
    configuration that does not fit in HBM. A layout stated in full (tp, pp, cp and dp fixed, as for
    a run that really ran) is refused only beyond :data:`~.search.STATED_MEMORY_TOLERANCE` over the
    usable HBM; within it the estimate carries ``memory_fits=False``.
    """
    gpus = check_int("gpus", gpus, 1, MAX_GPUS)
    if not isinstance(all_gpus, (bool, np.bool_)):
        raise ValueError(f"all_gpus={all_gpus!r} must be True or False")
    ctx = make_context(model, accelerator, precision, seq_len, global_batch_tokens, stack, scenario, fallback,
                       power_cap_w, gpu_speed_cv, document_tokens)
    if parallelism is not None and not isinstance(parallelism, Mapping):
        raise ValueError(f"parallelism={parallelism!r} must be None or a dict")
    fixed = _fixed_values(parallelism or {})
    _check_against_model(ctx, gpus, fixed)
    job = job_domain(ctx, gpus)
    memory_fits = True
    if all(k in fixed for k in ("tp", "pp", "cp", "dp")):
        i, c, r, n, memory_fits = choose_stated(job, gpus, fixed, STATED_MEMORY_TOLERANCE[scenario])
        in_use = gpus
    elif all_gpus:
        i, c, r, n = choose(job, gpus, fixed)
        in_use = gpus
    else:
        found, n, r = exact.fastest(ctx, gpus, fixed, block=job.domain if job.domain != ctx.domain else None)
        i = None
        if found is not None:
            job, c, r, i, in_use = found.ctx, found.c, found.r, found.i, found.gpus_in_use
        elif n:
            r = {"memory_per_gpu_bytes": np.asarray([r["min_memory_bytes"]]), "usable_bytes": r["usable_bytes"]}
    ctx = job
    if n == 0:
        raise ValueError(f"no valid parallelism for gpus={gpus} with {fixed or 'no fixed keys'}: check that "
                         f"tp divides heads={ctx.s.heads}, tp x pp x cp x dp <= gpus, the global batch of "
                         f"{ctx.batch_seqs} sequences divides by dp x microbatch (and by pp when interleaved), "
                         f"and ep divides experts={ctx.s.experts} and tp x cp x dp")
    if i is None:
        j = int(np.argmin(r["memory_per_gpu_bytes"]))
        if "host_fits" in r and not np.any(r["host_fits"]):
            k = int(np.argmin(r["host_offload_bytes"]))
            raise ValueError(f"does not fit in host memory: the offloaded activations (Stack moe_activation_offload) "
                             f"need {r['host_offload_bytes'][k] / 1e9:.1f} GB per GPU, but {ctx.acc.id} has "
                             f"{(ctx.acc.host_memory_bytes or 0) / 1e9:.0f} GB of host memory per GPU")
        raise ValueError(f"does not fit in memory: the smallest configuration needs "
                         f"{r['memory_per_gpu_bytes'][j] / 1e9:.1f} GB per GPU, but {ctx.acc.id} has "
                         f"{ctx.acc.memory_capacity_bytes / 1e9:.0f} GB of HBM ({r['usable_bytes'] / 1e9:.0f} GB usable)")
    return make_estimate(ctx, c, r, i, in_use, n, gpus_allocated=gpus, memory_fits=memory_fits)
