"""Finite offline benchmarks: ``N`` uniform requests queued at once, throughput = output tokens / wall time.

The steady state of :mod:`intelligence_per_dollar.model.inference` (Eq. 1) holds a full batch forever.
A real offline benchmark serves a *finite* dataset: TensorRT-LLM's performance overview runs
``trtllm-bench throughput`` on 3,000 requests at 1024/1024 (and 1000/1000), 1,500 at 8192/1024 and
1024/8192, 1,000 at 32768/1024 and 1024/32768, all queued "in rapid succession", and reports total
output tokens over total wall time (docs/source/developer-guide/perf-overview.md at commit 03e27c7,
"Preparing a Dataset"; the 1000/1000 count from the same table in earlier revisions). When the
requests are not many more than the batch that fits, the run is mostly a ramp (prompts admitted a
few per iteration within the token budget), a short full batch and a drain, and the steady state
over-predicts it.

**The iterations** (one attention rank; ranks of uniform requests stay in step). TensorRT-LLM's
``MicroBatchScheduler`` (cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp, ``operator()``)
walks the active requests oldest first: each running sequence costs one token of
``max_num_tokens``; without chunked prefill (trtllm-bench's default) a waiting prompt is admitted
whole only if its ``ISL`` tokens still fit, and at most ``max_batch_size`` requests (running plus
new) are scheduled. So at iteration ``i`` with ``D`` sequences decoding and ``q`` waiting, ``k =
min(q, B - D, floor((M - D) / ISL))`` prompts are prefilled (each emits its first token); a request
admitted at ``a`` decodes at ``a + 1 .. a + OSL - 1`` with ``ISL + (i - a)`` tokens of context and
frees its slot at ``a + OSL``. Requests have one length, so cohorts finish in admission order and
the schedule is a sequence of *phases*: single admission iterations and decode-only stretches
between two events (an admission or a completion), over which the context grows linearly -- each
stretch is timed at its mean context (exact for a step affine in context). :func:`phases` builds
them, :func:`output_tokens_per_s` times them with the model's own iteration time.
"""

from __future__ import annotations

import collections
import math
from typing import Callable

import numpy as np

from intelligence_per_dollar.model import serving_kernels as kern
from intelligence_per_dollar.model import serving_offload as offl
from intelligence_per_dollar.model import serving_schedulers as sched
from intelligence_per_dollar.sources import checks

__all__ = ["phases", "output_tokens_per_s", "check_requests", "output_tokens_per_s_per_gpu"]


def phases(isl: int, osl: int, requests: int, batch: int, tokens: int):
    """(iterations, decode sequences, prefill tokens, mean decode context) arrays, one row per phase,
    of one rank serving ``requests`` requests of ``isl`` + ``osl`` tokens queued at once with at most
    ``batch`` sequences and ``tokens`` tokens per iteration (see the module docstring)."""
    isl, osl, requests = (checks.positive_int(k, v) for k, v in (("isl", isl), ("osl", osl), ("requests", requests)))
    batch = checks.positive_int("batch", batch, whole_floats=True)
    tokens = checks.integer("tokens", tokens, low=isl, whole_floats=True)      # a prompt must fit in one iteration (no chunking)
    cohorts = collections.deque()              # (admission iteration, requests) in admission order
    rows, i, queue, run, sum_a = [], 0, requests, 0, 0
    while queue or run:
        while cohorts and cohorts[0][0] + osl <= i:             # finished at a + OSL - 1
            a, n = cohorts.popleft()
            run, sum_a = run - n, sum_a - n * a
        k = min(queue, batch - run, (tokens - run) // isl)
        context = isl + i - sum_a / run if run else 0.0
        if k > 0:
            rows.append((1, run, k * isl, context))
            cohorts.append((i, k))
            queue, run, sum_a, i = queue - k, run + k, sum_a + k * i, i + 1
        elif run:                                                # decode until the next completion
            m = cohorts[0][0] + osl - i
            rows.append((m, run, 0, context + (m - 1) / 2.0))
            i += m
    m, d, p, x = (np.array(v, float) for v in zip(*rows))
    return m, d, p, x


def output_tokens_per_s(step_s: Callable, isl: int, osl: int, requests: int, batch: int, tokens: int) -> float:
    """Output tokens per second of one rank over the whole finite run (:func:`phases`), each phase
    timed by ``step_s(decode sequences, prefill tokens, mean context)`` (arrays, seconds per iteration)."""
    m, d, p, x = phases(isl, osl, requests, batch, tokens)
    wall = float(np.sum(m * np.asarray(step_s(d, p, x), float)))
    if not (wall > 0 and math.isfinite(wall)):
        raise ValueError(f"step_s gave a total wall time of {wall} s; iteration times must be positive and finite")
    return requests * osl / wall


def check_requests(requests, ctx) -> int | None:
    """``requests``: None (the steady state) or a positive whole number of requests of a finite run,
    which needs the ``trtllm-bench`` scheduler (whole-prompt admission) and ``aggregated`` mode."""
    if requests is None:
        return None
    requests = checks.positive_int("requests", requests)
    if not sched.is_trtllm_bench(ctx.scheduler) or ctx.mode != "aggregated":
        raise ValueError(f"requests={requests} (a finite offline benchmark) needs scheduler='trtllm-bench' and "
                         f"mode='aggregated', not scheduler={ctx.scheduler!r}, mode={ctx.mode!r}")
    return requests


def output_tokens_per_s_per_gpu(ctx, c, batch, requests: int, ok, gpu_step_s: Callable) -> np.ndarray:
    """Output tokens/s per GPU of layouts ``c`` (arrays ``tp``, ``dp``, ``ep``, ``replicas``, optional
    ``pp``) serving a finite run of ``requests`` requests (-inf where ``ok`` is False). ``batch``: most
    sequences over all GPUs (memory, ``max_batch_size``, a concurrency limit); ``max_num_tokens`` from
    :func:`serving_schedulers.limits`. The requests are spread evenly over the attention ranks' micro-batch
    slots (``replicas x dp x pp``); the slot with ``ceil(requests / slots)`` sets the wall time. Each
    iteration takes ``max(GPU, host)``: ``gpu_step_s(ctx, tp, dp, ep, b, decode, prefill, context, pp=pp)``
    is the serving model's iteration of the slowest pipeline stage (:func:`inference._gpu_step_s`), the host
    time counts every scheduled sequence (:func:`serving_kernels.host_time_s`), and no iteration is shorter than
    the host-link stream of its offloaded weights (``offload``, :mod:`serving_offload`); a slot's micro-batch
    advances once every ``pp`` stage iterations (:mod:`serving_pipeline`)."""
    tokens = sched.limits(ctx, c["tp"], c["dp"], c.get("pp", 1.0))[1]
    out = np.full(np.shape(c["tp"]), -np.inf)
    for j in np.flatnonzero(ok):
        tp, dp, ep, rep = (float(c[k][j]) for k in ("tp", "dp", "ep", "replicas"))
        pp = float(c["pp"][j]) if "pp" in c else 1.0
        off = float(np.broadcast_to(c.get("offload", 0.0), np.shape(c["tp"]))[j])
        t_stream = float(offl.stream_s(ctx, tp, tp * dp, pp, off, ctx.host_link_efficiency))
        n = math.ceil(requests / (rep * dp * pp))

        def step(d, p, x, tp=tp, dp=dp, ep=ep, pp=pp, t_stream=t_stream):
            t_host = kern.host_time_s(d + p / ctx.isl, ctx.host_step_s, ctx.host_per_sequence_s)
            t_gpu = np.maximum(gpu_step_s(ctx, tp, dp, ep, d, d, p, x, pp=pp)[0], t_stream)   # offloaded weights
            return pp * np.maximum(t_gpu, t_host)

        slot_batch = max(math.floor(batch[j] / (rep * dp * pp)), 1)
        per_rank = output_tokens_per_s(step, ctx.isl, ctx.osl, n, slot_batch, tokens[j])
        out[j] = per_rank * requests / n / (tp * dp * rep * pp)
    return out
