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
them, :func:`output_tokens_per_s` times them with the model's own iteration time. Engines with chunked
prefill (vLLM V1, SGLang, the ``physics`` scheduler) admit prompts piece by piece instead, the decode
tokens first and prompt pieces of at most ``prefill_chunk_tokens`` in the rest of the budget
(:func:`_chunked_phases`), so a prompt longer than the budget never stalls the decoding batch.

**Requests that arrive at a rate.** vLLM's ``benchmark_serving.py`` (``vllm bench serve``) and SGLang's
``bench_serving`` send a finite run's prompts all at once only at ``--request-rate inf``; at a finite rate they send
them as a Poisson stream ("we use Poisson process or gamma distribution to synthesize the request arrival times",
burstiness 1: exponential gaps) and report the output tokens over the time from the first request sent to the last
token. A run of ``N`` requests at ``r`` per second cannot end before its last request arrives, about ``N / r``
seconds in, and it ramps up as the requests come rather than from a full queue. :func:`arriving_output_tokens_per_s`
times such a run with the open-loop engine simulation of :mod:`serving_arrivals` (FIFO admission up to the batch, the
decode tokens first and prompt pieces in the rest of the budget, each iteration from the serving model), for exactly
the run's requests and no warm start.
"""

from __future__ import annotations

import heapq
import math
from typing import Callable

import numpy as np

from intelligence_per_dollar.model import serving_arrivals as arrivals
from intelligence_per_dollar.model import serving_kernels as kern
from intelligence_per_dollar.model import serving_lengths as lengths
from intelligence_per_dollar.model import serving_offload as offl
from intelligence_per_dollar.model import serving_schedulers as sched
from intelligence_per_dollar.sources import checks

__all__ = ["phases", "output_tokens_per_s", "arriving_output_tokens_per_s", "check_requests", "check_request_rate",
           "slot_lengths", "output_tokens_per_s_per_gpu"]


def phases(isl: int, osl: int, requests: int, batch: int, tokens: int, lengths=None, piece: float = math.inf):
    """(iterations, decode sequences, prefill tokens, mean decode context) arrays, one row per phase,
    of one rank serving ``requests`` requests of ``isl`` + ``osl`` tokens queued at once with at most
    ``batch`` sequences and ``tokens`` tokens per iteration (see the module docstring). ``lengths``: each
    request's output length in admission order (None: all ``osl``); a request of length ``L`` whose prompt
    completes at ``a`` frees its slot at ``a + L``. ``piece``: inf (default) admits prompts whole, so
    ``tokens`` must hold one; a finite piece is a chunked-prefill engine (:func:`_chunked_phases`)."""
    isl, osl, requests = (checks.positive_int(k, v) for k, v in (("isl", isl), ("osl", osl), ("requests", requests)))
    batch = checks.positive_int("batch", batch, whole_floats=True)
    piece = checks.positive_number("piece", piece, allow_inf=True)
    todo = _lengths(lengths, osl, requests)
    if math.isfinite(piece):
        return _chunked_phases(isl, requests, batch, checks.positive_int("tokens", tokens, whole_floats=True),
                               todo, piece)
    tokens = checks.integer("tokens", tokens, low=isl, whole_floats=True)      # a prompt must fit in one iteration (no chunking)
    ends: list[tuple[int, int]] = []           # heap of (iteration the slot frees, admission iteration)
    rows, i, nxt, run, sum_a = [], 0, 0, 0, 0
    while nxt < requests or run:
        run, sum_a = _free_finished(ends, i, run, sum_a)
        k = min(requests - nxt, batch - run, (tokens - run) // isl)
        context = isl + i - sum_a / run if run else 0.0
        if k > 0:
            rows.append((1, run, k * isl, context))
            for length in todo[nxt:nxt + k]:
                heapq.heappush(ends, (i + int(length), i))
            nxt, run, sum_a, i = nxt + k, run + k, sum_a + k * i, i + 1
        elif run:
            i = _decode_stretch(rows, ends, i, run, context)
    return _phase_arrays(rows)


def _free_finished(ends: list, i: int, run: int, sum_a: int) -> tuple[int, int]:
    """Pop the sequences whose slot frees by iteration ``i`` (``a + L``) from the heap ``ends``; returns the running
    count and the sum of their first-token iterations."""
    while ends and ends[0][0] <= i:
        _, a = heapq.heappop(ends)
        run, sum_a = run - 1, sum_a - a
    return run, sum_a


def _decode_stretch(rows: list, ends: list, i: int, run: int, context: float) -> int:
    """Append the decode-only phase from iteration ``i`` to the next completion, timed at its mean context (the
    context grows by one token per iteration); returns the iteration it ends at."""
    m = ends[0][0] - i
    rows.append((m, run, 0, context + (m - 1) / 2.0))
    return i + m


def _phase_arrays(rows: list):
    """(iterations, decode sequences, prefill tokens, mean decode context) arrays of the phase rows."""
    m, d, p, x = (np.array(v, float) for v in zip(*rows))
    return m, d, p, x


def _chunked_phases(isl: int, requests: int, batch: int, tokens: int, todo: np.ndarray, piece: float):
    """:func:`phases` of a chunked-prefill engine: vLLM V1's scheduler (vllm/v1/core/sched/scheduler.py,
    ``schedule``) gives every running sequence its decode token first, then spends what is left of the
    ``max_num_batched_tokens`` budget on prompts in admission order, cutting the last one (chunked prefill is
    always on in V1); SGLang's ``chunked_prefill_size`` does the same per prompt piece. So at iteration ``i``
    with ``D`` sequences decoding, prompts admitted up to ``batch`` sequences (a prompt holds its slot from
    admission) take ``min(left of the prompt, piece)`` tokens each until ``tokens - D`` are spent; a prompt
    whose last piece runs at ``i`` emits its first token there (the whole-prompt rule, piece by piece). A
    prompt longer than the budget no longer stalls every decoding sequence until the batch drains, which is
    what the whole-prompt rule would do (it admits nothing while ``D + ISL > tokens``)."""
    ends: list[tuple[int, int]] = []           # heap of (iteration the slot frees, first-token iteration)
    pending: list[float] = []                  # prompt tokens still to prefill, admission order
    rows, i, nxt, run, sum_a = [], 0, 0, 0, 0
    while nxt < requests or run or pending:
        run, sum_a = _free_finished(ends, i, run, sum_a)
        admit = min(requests - nxt, batch - run - len(pending))
        pending.extend([float(isl)] * max(admit, 0))
        nxt += max(admit, 0)
        room = tokens - run
        context = isl + i - sum_a / run if run else 0.0
        if pending and room > 0:
            spent = 0.0
            for j, left in enumerate(pending):
                take = min(left, piece, room - spent)
                if take <= 0:
                    break
                pending[j] = left - take
                spent += take
            # prompts of one length finish in admission order (an earlier one never has more left than a later one)
            done = next((j for j, left in enumerate(pending) if left > 0), len(pending))
            rows.append((1, run, spent, context))
            for length in todo[nxt - len(pending):nxt - len(pending) + done]:
                heapq.heappush(ends, (i + int(length), i))
            del pending[:done]
            run, sum_a, i = run + done, sum_a + done * i, i + 1
        elif run:
            i = _decode_stretch(rows, ends, i, run, context)
    return _phase_arrays(rows)


def _lengths(lengths, osl: int, requests: int) -> np.ndarray:
    """The output length of each request (``osl`` for all when None), checked: ``requests`` whole numbers >= 1."""
    if lengths is None:
        return np.full(requests, osl, dtype=np.int64)
    x = np.asarray(lengths)
    if x.shape != (requests,) or not np.issubdtype(x.dtype, np.integer) or x.min() < 1:
        raise ValueError(f"lengths must be {requests} whole numbers >= 1 (one output length per request), "
                         f"got shape {x.shape} and dtype {x.dtype}")
    return x


def output_tokens_per_s(step_s: Callable, isl: int, osl: int, requests: int, batch: int, tokens: int,
                        lengths=None, piece: float = math.inf) -> float:
    """Output tokens per second of one rank over the whole finite run (:func:`phases`), each phase
    timed by ``step_s(decode sequences, prefill tokens, mean context)`` (arrays, seconds per iteration)."""
    m, d, p, x = phases(isl, osl, requests, batch, tokens, lengths, piece)
    wall = float(np.sum(m * np.asarray(step_s(d, p, x), float)))
    if not (wall > 0 and math.isfinite(wall)):
        raise ValueError(f"step_s gave a total wall time of {wall} s; iteration times must be positive and finite")
    return float(_lengths(lengths, osl, requests).sum()) / wall


def arriving_output_tokens_per_s(step_s: Callable, isl: int, osl: int, requests: int, batch: int, tokens: float,
                                 rate_per_s: float, context: float, lengths=None, piece: float = math.inf,
                                 dispatch_ranks: int = 1) -> float:
    """Output tokens per second of one rank over a finite run whose ``requests`` requests of ``isl`` + ``osl`` tokens
    arrive as a Poisson stream at ``rate_per_s`` (module docstring), from the first request sent (time 0) to the last
    token: :func:`serving_arrivals.simulate` with at most ``batch`` sequences and ``tokens`` tokens per iteration,
    each iteration ``step_s(decode sequences, prefill tokens, context)`` (arrays, seconds) at the run's mean decode
    ``context``, tabulated (:func:`serving_arrivals.tabulate`). ``lengths``: each request's output length (None: all
    ``osl``); ``piece``: inf runs prompts whole, a finite piece is chunked prefill; ``dispatch_ranks``: the ranks a
    balancing dispatcher deals one stream among (:func:`serving_arrivals.arrival_times`)."""
    isl, osl, requests = (checks.positive_int(k, v) for k, v in (("isl", isl), ("osl", osl), ("requests", requests)))
    batch = checks.positive_int("batch", batch, whole_floats=True)
    out = _lengths(lengths, osl, requests).astype(float)
    x = checks.positive_number("context", context)
    table = arrivals.tabulate(lambda d, p: step_s(d, p, np.full(np.shape(d), x)), batch, tokens)
    sim = arrivals.simulate(table, rate_per_s, float(isl), out, batch, tokens, piece, dispatch_ranks=dispatch_ranks)
    return float(out.sum() / np.max(sim["finish_s"]))


def check_request_rate(request_rate_per_s, requests) -> float | None:
    """``request_rate_per_s``: None or inf (a finite run's requests all queued at once) or the positive rate at which
    they arrive (a Poisson stream, :func:`arriving_output_tokens_per_s`), which needs the run's ``requests``."""
    if request_rate_per_s is None:
        return None
    rate = checks.positive_number("request_rate_per_s", request_rate_per_s, allow_inf=True)
    if math.isinf(rate):
        return None
    if requests is None:
        raise ValueError(f"request_rate_per_s={request_rate_per_s!r} needs requests (the finite run's request count; "
                         f"a stream without an end is serving_slo.best_under_slo(arrivals='poisson')); allowed: "
                         f"requests set, or request_rate_per_s None or inf")
    return rate


def check_requests(requests, ctx) -> int | None:
    """``requests``: None (the steady state) or a positive whole number of requests of a finite run, which
    needs ``aggregated`` mode. A scheduler that runs prompts whole (``trtllm-bench``, vLLM v0.5) already needs a token
    budget that holds one (:func:`serving_schedulers.check_limits`); chunked prefill admits them in pieces."""
    if requests is None:
        return None
    requests = checks.positive_int("requests", requests)
    if ctx.mode != "aggregated":
        raise ValueError(f"requests={requests} (a finite offline benchmark) needs mode='aggregated', "
                         f"not mode={ctx.mode!r}")
    return requests


def slot_lengths(ctx, n: int):
    """Output lengths of the ``n`` requests one slot serves, in admission order: None when every request has
    ``OSL``, else ``n`` quantiles of the length distribution in a well-mixed order (:mod:`serving_lengths`)."""
    if lengths.single_length(ctx.osl_cv, ctx.osl_dataset):
        return None
    return lengths.lengths(ctx.osl, ctx.osl_cv, ctx.osl_max, n, ctx.osl_dataset)[lengths.admission_order(n)]


def output_tokens_per_s_per_gpu(ctx, c, batch, requests: int, ok, gpu_step_s: Callable,
                                request_rate_per_s: float | None = None) -> np.ndarray:
    """Output tokens/s per GPU of layouts ``c`` (arrays ``tp``, ``dp``, ``ep``, ``replicas``, optional
    ``pp``) serving a finite run of ``requests`` requests (-inf where ``ok`` is False). ``batch``: most
    sequences over all GPUs (memory, ``max_batch_size``, a concurrency limit); ``max_num_tokens`` from
    :func:`serving_schedulers.limits`. The requests are spread evenly over the attention ranks' micro-batch
    slots (``replicas x dp x pp``) that hold a sequence (all of them unless ``batch`` is smaller); the slot with
    ``ceil(requests / busy slots)`` sets the wall time. Each
    iteration takes ``max(GPU, host)``: ``gpu_step_s(ctx, tp, dp, ep, b, decode, prefill, context, pp=pp)``
    is the serving model's iteration of the slowest pipeline stage (:func:`inference._gpu_step_s`), the host
    time counts every scheduled sequence (:func:`serving_kernels.host_time_s`), and no iteration is shorter than
    the host-link stream of its offloaded weights (``offload``, :mod:`serving_offload`); a slot's micro-batch
    advances once every ``pp`` stage iterations (:mod:`serving_pipeline`). ``request_rate_per_s``: None, the requests
    queued at once (:func:`output_tokens_per_s`), or the rate at which they arrive, dealt out in turn to the busy
    slots (:func:`arriving_output_tokens_per_s`)."""
    tokens = sched.limits(ctx, c["tp"], c["dp"], c.get("pp", 1.0))[1]
    # prompts whole (trtllm-bench, vLLM v0.5) or in pieces of at most prefill_chunk_tokens (chunked prefill)
    piece = math.inf if sched.whole_prompts(ctx.scheduler) else ctx.prefill_chunk_tokens
    out = np.full(np.shape(c["tp"]), -np.inf)
    for j in np.flatnonzero(ok):
        tp, dp, ep, rep = (float(c[k][j]) for k in ("tp", "dp", "ep", "replicas"))
        pp = float(c["pp"][j]) if "pp" in c else 1.0
        off = float(np.broadcast_to(c.get("offload", 0.0), np.shape(c["tp"]))[j])
        t_stream = float(offl.stream_s(ctx, tp, tp * dp, pp, off, ctx.host_link_efficiency))
        # a concurrency below the slots (``batch``) leaves some slots idle: the requests spread over the busy ones
        active = max(min(rep * dp * pp, math.floor(batch[j])), 1)
        n = math.ceil(requests / active)

        busy = float(sched.slot_occupancy(active, rep, dp, pp)[1])   # idle ranks' experts carry nothing

        def step(d, p, x, tp=tp, dp=dp, ep=ep, pp=pp, t_stream=t_stream, busy=busy):
            t_host = kern.host_time_s(d + p / ctx.isl, ctx.host_step_s, ctx.host_per_sequence_s)
            t_gpu = np.maximum(gpu_step_s(ctx, tp, dp, ep, d, d, p, x, pp=pp, busy=busy)[0], t_stream)   # offload
            return pp * kern.iteration_s(ctx, t_gpu, t_host)

        slot_batch = max(math.floor(batch[j] / active), 1)
        if request_rate_per_s is None:
            per_rank = output_tokens_per_s(step, ctx.isl, ctx.osl, n, slot_batch, tokens[j], slot_lengths(ctx, n),
                                           piece)
        else:
            per_rank = arriving_output_tokens_per_s(step, ctx.isl, ctx.osl, n, slot_batch, tokens[j],
                                                    request_rate_per_s / active, ctx.isl + ctx.decode_position_tokens,
                                                    slot_lengths(ctx, n), piece, dispatch_ranks=int(active))
        out[j] = per_rank * requests / n / (tp * dp * rep * pp)
    return out
