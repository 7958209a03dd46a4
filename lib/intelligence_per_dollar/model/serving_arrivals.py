"""Open-loop serving: requests that arrive on their own (a Poisson stream), read at a latency percentile.

The frontier (:func:`inference.frontier`) is a *closed* system: a fixed number of sequences in flight, each finished
request replaced at once, every iteration the mean one. A latency-bounded benchmark is *open*: MLPerf Inference's
Server scenario sends queries as a Poisson process and reports the highest rate whose 99th-percentile time to first
token (TTFT) and time per output token (TPOT, ``(latency - TTFT) / (tokens - 1)`` per query) stay under limits
(MLPerf Inference rules, "Server" scenario and the LLM latency constraints). Under random arrivals the number of
sequences in flight wanders (for independent requests it is Poisson about its mean, M/G/inf; Kleinrock 1975,
*Queueing Systems* Vol. I, section 3.5), iterations that carry a new prompt are longer than decode-only ones, and
prompts that arrive together queue for the iteration's token budget. Because the iteration time grows faster than
linearly near the batch the GPU can hold, these fluctuations lengthen the *mean* TPOT and spread the percentiles:
at the rate where the closed system's mean TPOT meets a limit, the open system's p99 does not.

:func:`simulate` runs one attention rank as an engine does (FIFO admission up to its sequence limit; each iteration decodes
one token of every running sequence and prefills waiting prompts, first come first served, in pieces of at most
``prefill_chunk_tokens`` within the ``max_num_tokens`` budget left after the decode tokens, or whole where the
scheduler runs prompts whole), with each iteration's time from the serving model itself (:func:`iteration_table`:
the same kernels, collectives and host time as :func:`inference.evaluate`, tabulated over decode sequences and prompt
tokens). Runs of decode-only iterations between events are advanced in one step (their time is constant), so a
simulation costs a few operations per request, not per token. :func:`max_rate` finds the highest arrival rate whose
percentiles meet the limits. The unit simulated is one *attention rank* (a replica's ``tp`` GPUs, or one of its ``dp``
attention-data-parallel ranks, which hold their own sequences and admit their own requests): every rank of every
replica receives an equal share of the arrivals, either dealt out in turn by a balancing dispatcher (the ranks' gaps
are then Erlang, :func:`arrival_times`; NVIDIA's MLPerf harness sends each query to the least loaded engine) or at
random (each rank a Poisson stream of its own), and the ranks of a replica, which step
together through its MoE layers, are taken to carry equal loads (the closed model's busiest-rank spread is not
repeated here).
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from intelligence_per_dollar.model import inference as inf
from intelligence_per_dollar.model import serving_kernels as kern
from intelligence_per_dollar.model import serving_lengths as lengths
from intelligence_per_dollar.model import serving_schedulers as sched
from intelligence_per_dollar.sources import checks, workloads

__all__ = ["IterationTable", "iteration_table", "tabulate", "simulate", "window", "latency_percentiles",
           "steady_in_flight", "request_lengths", "max_rate", "arrival_times", "SIM_REQUESTS", "WARMUP_SHARE"]

#: New requests per simulation (after the warm ones): the percentiles are read over 70% of them (:func:`window`), 3,500
#: requests, 35 above a p99. Seeds move a p99-limited rate by a few per cent at this size (2,000 gave up to +-10%).
SIM_REQUESTS = 5000
#: Share of the new requests dropped at the end (they finish while the arrivals stop, on a draining server); half of
#: it is dropped at the start (the arrivals settling in around the warm start).
WARMUP_SHARE = 0.2
_DECODE_POINTS, _PREFILL_POINTS = 40, 24


@dataclass(frozen=True)
class IterationTable:
    """Iteration time of one attention rank over a grid of decode sequences and prompt tokens (bilinear between)."""

    decode: np.ndarray        # decode sequences in the iteration (one attention rank), ascending from 0
    prefill: np.ndarray       # prompt tokens in the iteration (one attention rank), ascending from 0
    step_s: np.ndarray        # shape (len(decode), len(prefill))

    _grid: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # plain lists for the per-iteration lookups (bisect on a list beats numpy's searchsorted on one scalar)
        object.__setattr__(self, "_grid", (self.decode.tolist(), self.prefill.tolist(), self.step_s.tolist()))

    def __call__(self, decode: float, prefill: float) -> float:
        d, p, s = self._grid
        i = min(max(bisect.bisect_right(d, decode) - 1, 0), len(d) - 2)
        j = min(max(bisect.bisect_right(p, prefill) - 1, 0), len(p) - 2)
        x = (decode - d[i]) / (d[i + 1] - d[i])
        y = (prefill - p[j]) / (p[j + 1] - p[j])
        return float((1 - x) * (1 - y) * s[i][j] + x * (1 - y) * s[i + 1][j] + (1 - x) * y * s[i][j + 1]
                     + x * y * s[i + 1][j + 1])


def iteration_table(ctx: kern.Context, tp: int, dp: int, ep: int, max_sequences: float,
                    max_tokens: float) -> IterationTable:
    """Iteration seconds of an attention rank (``tp`` GPUs of a replica of ``tp x dp``, expert parallelism ``ep``,
    one pipeline stage; every rank carrying the same) holding ``decode`` running sequences and prefilling ``prefill``
    prompt tokens: :func:`inference._gpu_step_s` (every layer and the LM head at the case's mean decode context) with
    the host time (:func:`serving_kernels.iteration_s`). Grid: 0 to ``max_sequences`` decode sequences and 0 to
    ``max_tokens`` prompt tokens, geometrically spaced (the time is smooth and nearly linear in each)."""
    def step_s(D, P):
        full = np.ones_like(D)
        gpu = inf._gpu_step_s(ctx, tp * full, dp * full, ep * full, D, D, P, ctx.isl + ctx.decode_position_tokens)[0]
        return kern.iteration_s(ctx, gpu, kern.host_time_s(D, ctx.host_step_s, ctx.host_per_sequence_s))

    return tabulate(step_s, max_sequences, max_tokens)


def tabulate(step_s, max_sequences: float, max_tokens: float) -> IterationTable:
    """An :class:`IterationTable` of ``step_s(decode sequences, prompt tokens)`` (arrays in, seconds out) over 0 to
    ``max_sequences`` decode sequences and 0 to ``max_tokens`` prompt tokens, geometrically spaced (the time is smooth
    and nearly linear in each)."""
    dec = np.unique(np.concatenate([[0.0], np.geomspace(1.0, max(max_sequences, 2.0), _DECODE_POINTS)]))
    pre = np.unique(np.concatenate([[0.0], np.geomspace(1.0, max(max_tokens, 2.0), _PREFILL_POINTS)]))
    D, P = np.meshgrid(dec, pre, indexing="ij")
    t = np.asarray(step_s(D, P), float)
    if t.shape != D.shape or not np.all(np.isfinite(t)) or t.min() <= 0:
        raise ValueError(f"step_s must give a positive finite time for every grid point of shape {D.shape}, got "
                         f"{checks.short(t)}")
    return IterationTable(dec, pre, t)


def _checked(rate_per_s, input_tokens, output_tokens, max_sequences, max_num_tokens, prefill_piece):
    """:func:`simulate`'s arguments, validated: (rate, output lengths, input lengths as long, sequence cap,
    token budget, prefill piece)."""
    rate = checks.positive_number("rate_per_s", rate_per_s)
    out = np.asarray(output_tokens, float)
    if out.ndim != 1 or out.size == 0 or not np.all(np.isfinite(out)) or out.min() < 1:
        raise ValueError(f"output_tokens must be a non-empty 1-D array of finite lengths >= 1, got "
                         f"{checks.short(output_tokens)}")
    ins = np.broadcast_to(np.asarray(input_tokens, float), (out.size,)).astype(float)
    if not np.all(np.isfinite(ins)) or ins.min() < 1:
        raise ValueError(f"input_tokens must be finite lengths >= 1 (one, or one per request), got "
                         f"{checks.short(input_tokens)}")
    cap = checks.positive_int("max_sequences", max_sequences)
    budget = checks.positive_number("max_num_tokens", max_num_tokens)
    piece = checks.positive_number("prefill_piece", prefill_piece, allow_inf=True)
    if not np.isfinite(piece) and budget < ins.max():
        raise ValueError(f"max_num_tokens={budget!r} is below the longest prompt ({ins.max():g} input tokens): "
                         f"whole prompts (prefill_piece=inf) would never fit; allowed: max_num_tokens >= "
                         f"{ins.max():g}, or a finite prefill_piece")
    return rate, out, ins, cap, budget, piece


def _prefill_takes(prefilling, pre_left: list[float], room: float, want_max: float,
                   whole: bool) -> list[tuple[int, float]]:
    """The prompt tokens one iteration prefills: (request, tokens) in admission order, within ``room`` tokens, at
    most ``want_max`` per prompt; ``whole``: first come first served, a prompt that does not fit stops the queue."""
    takes, left = [], room
    for i in prefilling:
        want = min(pre_left[i], want_max)
        if whole:
            if want > left:
                break
            take = want
        else:
            take = min(left, want)
            if take <= 0.0:
                break
        takes.append((i, take))
        left -= take
    return takes


def simulate(step: IterationTable, rate_per_s: float, input_tokens, output_tokens, max_sequences: int,
             max_num_tokens: float, prefill_piece: float, seed: int = 0, warm: int = 0,
             dispatch_ranks: int = 1, accepted_tokens: float = 1.0,
             tokens_per_decode: float = 1.0) -> dict[str, np.ndarray]:
    """One attention rank under Poisson arrivals at ``rate_per_s``: per request (in arrival order) ``arrival_s``,
    ``admit_s`` (when the engine took it in), ``ttft_s`` and ``tpot_s`` (NaN for one-token outputs), ``finish_s``.

    ``output_tokens``: each request's output length (whole tokens >= 1; the requests are as many); ``input_tokens``:
    each request's prompt length (an array as long, or one length for all); ``max_sequences``: running sequences the
    engine admits (later arrivals wait, first in first out); ``max_num_tokens``: tokens per iteration (decode tokens
    first, prompt pieces of at most ``prefill_piece`` tokens in the rest; ``inf`` piece: prompts whole, a prompt
    starting only when all of it fits). The arrivals are a fixed seeded sequence scaled by ``1 / rate_per_s``, so
    percentiles change smoothly with the rate. ``warm``: the first ``warm`` requests are already decoding at time 0,
    each part way through its output (uniformly), so the run starts near its steady occupancy instead of ramping up
    from an empty server (their latencies are returned as NaN). ``dispatch_ranks``: the attention ranks a balancing
    dispatcher deals one Poisson stream among (:func:`arrival_times`; 1: this rank receives a Poisson stream of its
    own). ``accepted_tokens``: output tokens a decoding sequence emits per iteration (speculative decoding: the
    accepted drafts and the target's own token, :func:`serving_context.speculation`; 1 without), and
    ``tokens_per_decode`` the tokens of the budget each decoding sequence takes (its last token and its drafts).

    The engine's state is two queues: the admitted prompts still prefilling (first in, first out) and the decoding
    sequences in a heap keyed by the decode iteration at which each finishes (every decoding sequence advances
    ``accepted_tokens`` tokens per iteration), so an iteration costs a few operations on the prompts it touches, not
    on every sequence."""
    rate, out, ins, cap, budget, piece = _checked(rate_per_s, input_tokens, output_tokens, max_sequences,
                                                  max_num_tokens, prefill_piece)
    per_iter = checks.number("accepted_tokens", accepted_tokens, low=1.0)
    q = checks.number("tokens_per_decode", tokens_per_decode, low=1.0)
    n, whole = out.size, not np.isfinite(piece)
    warm = min(checks.integer("warm", warm, low=0), n, cap)
    arrive = np.zeros(n)
    arrive[warm:] = arrival_times(rate, n - warm, dispatch_ranks, seed)
    warm_left = np.ceil(np.random.default_rng(seed + 1).uniform(0.0, 1.0, warm) * out[:warm])
    arrive_l, out_l = arrive.tolist(), out.tolist()
    pre_left = ins.tolist()
    admit = [0.0] * n
    first = [math.nan] * n
    finish = [math.nan] * n
    want_max = min(piece, budget)
    # decoding sequences: (decode iteration at which the last token comes, request); a warm one finishes at once
    # when its draw left no token (it is then done at the first iteration, as every finished sequence)
    decoding = [(float(k) / per_iter, i) for i, k in enumerate(warm_left.tolist())]
    heapq.heapify(decoding)
    prefilling: deque[int] = deque()           # admitted, prompt not done, in admission (= arrival) order
    done_decodes = 0.0                         # decode iterations so far (each decoding sequence advances one token)
    nxt = warm                                 # next request not yet admitted (arrivals are in order)
    t = 0.0
    while nxt < n or decoding or prefilling:
        while nxt < n and len(decoding) + len(prefilling) < cap and arrive_l[nxt] <= t:
            prefilling.append(nxt)
            admit[nxt] = t
            nxt += 1
        if not decoding and not prefilling:
            t = max(t, arrive_l[nxt])
            continue
        nd = len(decoding)
        room = budget - nd * q
        takes = _prefill_takes(prefilling, pre_left, room, want_max, whole) if prefilling and room > 0 else []
        tokens = float(sum(a for _, a in takes))
        dt = step(nd, tokens)
        k = 1
        if tokens == 0.0 and not prefilling and nd:
            # a run of identical decode-only iterations: jump to the next finish or the next admission
            k = max(int(decoding[0][0] - done_decodes), 1)
            if nxt < n and nd < cap:
                k = min(k, max(int(np.ceil((arrive_l[nxt] - t) / dt)), 1))
        t += k * dt
        if nd:
            done_decodes += k
        while decoding and decoding[0][0] <= done_decodes:
            finish[heapq.heappop(decoding)[1]] = t
        for i, a in takes:
            pre_left[i] -= a
            if pre_left[i] <= 0:
                if prefilling[0] == i:
                    prefilling.popleft()
                else:                          # a short prompt behind one cut to a piece
                    prefilling.remove(i)
                first[i] = t                   # the prefill iteration emits the first token
                if out_l[i] <= 1.0:
                    finish[i] = t
                else:
                    heapq.heappush(decoding, (done_decodes + (out_l[i] - 1.0) / per_iter, i))
    first_a, finish_a, admit_a = np.array(first), np.array(finish), np.array(admit)
    ttft = first_a - arrive
    tpot = np.where(out > 1, (finish_a - first_a) / np.maximum(out - 1.0, 1.0), np.nan)
    ttft[:warm], tpot[:warm] = np.nan, np.nan
    return {"arrival_s": arrive, "admit_s": admit_a, "ttft_s": ttft, "tpot_s": tpot, "finish_s": finish_a,
            "warm": warm}


def arrival_times(rate_per_s: float, n: int, dispatch_ranks: int = 1, seed: int = 0) -> np.ndarray:
    """Arrival times (s) of ``n`` requests at one attention rank receiving ``rate_per_s`` on average.

    ``dispatch_ranks`` 1: a Poisson stream (exponential gaps; a rank fed at random, or the only rank). ``k > 1``: the
    rank is one of ``k`` that a balancing dispatcher feeds from one Poisson stream of ``k x rate_per_s``, each taking
    every ``k``-th request in turn, so its gaps are sums of ``k`` exponential gaps (Erlang-``k``, coefficient of
    variation ``1 / sqrt(k)``; Kleinrock 1975, *Queueing Systems* Vol. I, section 4.3, the method of stages). NVIDIA's
    MLPerf Inference LLM harness, which every MLPerf Server / Interactive run on NVIDIA GPUs uses, sends each query to
    the engine instance with the fewest outstanding requests (``traffic_distribution_policy = "load_balancing"`` for
    the Server scenario, closed/NVIDIA/code/llmlib/config.py of mlcommons/inference_results_v5.1; v6.0 configs set
    ``isl_load_balancing``, the least queued prompt tokens): when the instances hold similar loads that deals the
    queries out in turn, and it is at least as even as turn-taking over longer spans, so turn-taking is the
    conservative reading. The gaps are a fixed seeded sequence scaled by ``1 / rate_per_s``."""
    rate = checks.positive_number("rate_per_s", rate_per_s)
    k = checks.positive_int("dispatch_ranks", dispatch_ranks)
    gaps = np.random.default_rng(seed).exponential(1.0, (checks.integer("n", n, low=0), k)).sum(axis=1) / k
    return np.cumsum(gaps) / rate


def window(sim: dict[str, np.ndarray]) -> slice:
    """The requests a simulation is read over: those that arrived after the warm ones, less the first
    :data:`WARMUP_SHARE` / 2 (the arrivals settling in) and the last :data:`WARMUP_SHARE` (they finish while the
    arrivals stop, on a draining server)."""
    warm, n = int(sim["warm"]), sim["ttft_s"].size
    new = n - warm
    lo, hi = warm + int(new * WARMUP_SHARE / 2), warm + int(new * (1.0 - WARMUP_SHARE))
    return slice(lo, max(hi, lo + 1))


def latency_percentiles(sim: dict[str, np.ndarray], percentile: float) -> tuple[float, float]:
    """(TTFT, TPOT) at ``percentile`` (a fraction, e.g. 0.99) over the requests of a simulation's :func:`window`."""
    q = checks.fraction("percentile", percentile) * 100.0
    mid = window(sim)
    tpot = sim["tpot_s"][mid]
    tpot = tpot[np.isfinite(tpot)]
    return float(np.percentile(sim["ttft_s"][mid], q)), float(np.percentile(tpot, q)) if tpot.size else 0.0


def steady_in_flight(step: IterationTable, rate_per_s: float, input_tokens: int, mean_output_tokens: float,
                     max_sequences: int, accepted_tokens: float = 1.0) -> float:
    """Sequences in flight at ``rate_per_s`` in the steady state (Little's law, ``L = rate x (osl / a) x t(L)`` with
    ``a`` the tokens a sequence emits per iteration, ``accepted_tokens``, and the iteration ``t`` carrying
    ``L x a x ISL / OSL`` prompt tokens; fixed-point iteration from below), or ``inf`` when no occupancy up to
    ``max_sequences`` keeps up with the arrivals (an open system above its capacity)."""
    rate = checks.positive_number("rate_per_s", rate_per_s)
    a = checks.number("accepted_tokens", accepted_tokens, low=1.0)
    share = input_tokens / mean_output_tokens * a
    iterations = mean_output_tokens / a

    def t(L):
        return step(L, L * share)

    if rate * iterations * t(max_sequences) >= max_sequences:
        return np.inf
    L = 0.0
    for _ in range(200):
        nxt = rate * iterations * t(L)
        if abs(nxt - L) <= 1e-6 * max(nxt, 1.0):
            return nxt
        L = nxt
    return L


def request_lengths(ctx: kern.Context, n: int = SIM_REQUESTS, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(prompt, output) lengths of ``n`` requests in a fixed shuffled order: the outputs from the case's length
    distribution (:func:`serving_lengths.lengths`: one length, a log-normal of ``output_tokens_cv``, or a dataset's
    own lengths rescaled to ``OSL``); the prompts from the same dataset's prompt lengths rescaled to mean ``ISL``
    where the case names one (MLPerf's 405B prompts run from 476 to 19,988 tokens about a mean of 9,429), else ``ISL``
    each."""
    n = checks.positive_int("n", n)
    rng = np.random.default_rng(seed)
    out = lengths.lengths(ctx.osl, ctx.osl_cv, ctx.osl_max, n, ctx.osl_dataset).astype(float)
    out = out[rng.permutation(n)]
    if ctx.osl_dataset is None:
        return np.full(n, float(ctx.isl)), out
    sample = np.asarray(workloads.length_sample(ctx.osl_dataset)[0], float)
    ins = np.maximum(np.rint(sample[rng.integers(0, sample.size, n)] * ctx.isl / sample.mean()), 1.0)
    return ins, out


def max_rate(ctx: kern.Context, tp: int, dp: int, ep: int, rate_hi_per_s: float, *, max_ttft_s: float | None,
             max_tpot_s: float | None, percentile: float = 0.99, max_sequences: float | None = None,
             steps: int = 9, dispatch_ranks: int = 1) -> dict[str, float]:
    """The highest Poisson arrival rate one attention rank of a ``tp x dp`` replica (:func:`iteration_table`)
    sustains with its TTFT and TPOT at ``percentile`` under the limits (None: no limit), by bisection on
    ``(0, rate_hi_per_s]`` (``steps`` halvings: 0.2% of the bracket at 9). ``rate_hi_per_s``: an upper bracket (the
    closed system's best rate per rank under the same limits). ``max_sequences``: the rank's running-sequence limit
    (memory; the scheduler's limit applies as well). ``dispatch_ranks``: the ranks one balancing dispatcher feeds
    in turn (:func:`arrival_times`). Aggregated serving only (prompts and outputs on the same rank),
    with outputs of at least two tokens (a TPOT).

    Returns ``rate_per_s`` (requests/s; 0 when even a trickle misses a limit), ``output_tokens_per_s`` (the rate times
    the mean output), the percentiles ``ttft_s`` / ``tpot_s``, the mean TPOT ``mean_tpot_s`` and ``mean_running``,
    the sequences the engine holds on average (admitted, not yet finished: Little's law), at that rate."""
    if ctx.mode != "aggregated":
        raise ValueError(f"mode={ctx.mode!r}: Poisson arrivals are simulated for aggregated serving (each rank "
                         f"prefills and decodes its own requests); allowed: mode='aggregated'")
    if ctx.osl < 2:
        raise ValueError(f"output_tokens={ctx.osl}: a time per output token needs at least two output tokens; "
                         f"allowed: output_tokens >= 2")
    hi = checks.positive_number("rate_hi_per_s", rate_hi_per_s)
    seqs, budget = (float(np.ravel(v)[0]) for v in sched.limits(ctx, tp, dp))
    limit = np.inf if max_sequences is None else checks.positive_number("max_sequences", max_sequences,
                                                                       allow_inf=True)
    cap = max(int(min(seqs, limit)), 1)
    ins, out = request_lengths(ctx)
    table = iteration_table(ctx, tp, dp, ep, cap, budget)

    def run(rate):
        L = steady_in_flight(table, rate, ctx.isl, float(out.mean()), cap, ctx.accepted_tokens)
        if not np.isfinite(L):          # above the rank's capacity: the queue grows without bound
            return False, {}
        warm = int(round(L))
        sim = simulate(table, rate, np.concatenate([np.resize(ins, warm), ins]),
                       np.concatenate([np.resize(out, warm), out]), cap, budget, ctx.prefill_chunk_tokens, warm=warm,
                       dispatch_ranks=dispatch_ranks, accepted_tokens=ctx.accepted_tokens,
                       tokens_per_decode=ctx.verify_tokens)
        ttft, tpot = latency_percentiles(sim, percentile)
        good = (max_ttft_s is None or ttft <= max_ttft_s) and (max_tpot_s is None or tpot <= max_tpot_s)
        mid = window(sim)
        stats = {"rate_per_s": rate, "output_tokens_per_s": rate * float(out.mean()), "ttft_s": ttft, "tpot_s": tpot,
                 "mean_tpot_s": float(np.nanmean(sim["tpot_s"][mid])),
                 "mean_running": rate * float(np.mean(sim["finish_s"][mid] - sim["admit_s"][mid]))}
        return good, stats

    lo = 0.0
    best = {"rate_per_s": 0.0, "output_tokens_per_s": 0.0, "ttft_s": np.nan, "tpot_s": np.nan,
            "mean_tpot_s": np.nan, "mean_running": 0.0}
    good, stats = run(hi)
    if good:
        return stats
    for _ in range(checks.positive_int("steps", steps)):
        mid = 0.5 * (lo + hi)
        good, stats = run(mid)
        if good:
            lo, best = mid, stats
        else:
            hi = mid
    return best
