"""One step of reinforcement-learning post-training, from first principles: rollouts, environment,
trainer, weight sync, synchronous vs asynchronous, fleet split and campaign cost.

**Rollouts are inference** (:mod:`.inference`). ``N = prompts x group_size`` sequences of
``input_tokens`` prompt tokens generate outputs whose lengths follow a lognormal distribution with
mean ``L_mean`` and log-standard-deviation ``sigma`` (reasoning traces have a long right tail), capped
at ``max_output_tokens``. The longest of ``N`` is the ``N/(N+1)`` quantile,
``L_max = min(cap, L_mean exp(-sigma^2/2 + sigma z))`` with ``z = Phi^-1(N/(N+1))``.

A decode iteration of a memory-bound server costs ``t(b) = a + c b`` for ``b`` sequences per rank
(``a``: weights and fixed launches; ``c``: one sequence's KV read and its share of the GEMMs); both are
read off :func:`inference.evaluate` at two batch sizes. As sequences finish the batch shrinks, so the
whole generation costs exactly

    t_gen = a L_max + c N L_mean / ranks                                        (1)

(sum over iterations ``j`` of ``a + c n(j)`` with ``n(j) = N P(L > j)``, and ``sum_j P(L > j) = L_mean``):
the ``a L_max`` term is the **straggler tax** of synchronous RL, the reason published systems spend
70-90% of the step generating (``shared/facts/post-training.md``). When ``N`` exceeds what fits (``M``),
the fixed term repeats per wave: ``a max(L_max, N L_mean / M)``.

**Environment.** Each rollout needs ``sandbox_cpu_s`` CPU-seconds of tool execution and reward
checking; ``sandbox_cpus`` CPUs of relative speed ``cpu_speed_factor`` (1.3 = the seed's "Vera +30%"
scenario) work alongside generation, so the stage takes ``max(t_gen, N s_cpu / (C f))`` plus the
final reward check of the last rollout.

**Trainer.** :func:`training.estimate` times one optimizer step over the ``N`` sequences on the
trainer GPUs (its parallelism search). GRPO adds forward passes of the reference policy and of the
old policy (log-probabilities); PPO adds a critic (forward and backward) and its value forward
(Ouyang et al. 2022; Shao et al. 2024, GRPO, arXiv 2402.03300). A forward pass is 1/3 of a
forward+backward (Kaplan et al. 2020's 2N vs 6N).

**Weight sync** (:func:`weight_sync_time_s`): the trainer's parameters converted to the rollout
precision and pushed over the NICs; see its docstring.

**Sync vs async.** Synchronous: ``t = t_rollout + t_train + t_sync``. Asynchronous with ``k >= 1``
steps of staleness (rollouts for step i+1 are generated while step i trains; a rollout may straddle
up to ``k`` policy versions): the straggler tax is amortised over ``k + 1`` steps and the stages
overlap, ``t = max(t_rollout(k), t_train) + t_sync``, never slower than synchronous.

**Cost** = (rollout GPUs + trainer GPUs) x t x $/GPU-h + sandbox CPUs x t x $/CPU-h.

**Inputs.** :func:`rl_step` takes every workload quantity explicitly (it keeps defaults only for the
physics: weight-sync efficiency and latency, the sync schedule). The book's workload is one record,
:func:`intelligence_per_dollar.sources.workloads.rl` (``data/workloads/workloads.csv``);
:func:`workload_inputs` turns it into :func:`rl_step`'s arguments for one accelerator (owner $/GPU-h,
the central rollout derate and CPU price of ``data/assumptions/post_training.csv``) and
:func:`workload_step` runs it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Mapping

import numpy as np

from intelligence_per_dollar.model import architecture, inference, serving_context, training, uncertainty
from intelligence_per_dollar.sources import assumptions as assumption_files
from intelligence_per_dollar.sources import checks, hardware, models, workloads

__all__ = ["ALGORITHMS", "SCHEDULES", "RLStep", "rl_step", "weight_sync_time_s", "campaign", "best_split",
           "longest_rollout_tokens", "assumptions", "owner_usd_per_gpu_hour", "split_gpus", "workload_inputs",
           "workload_step"]

ALGORITHMS = workloads.RL_ALGORITHMS
SCHEDULES = ("p2p", "broadcast")
#: Extra passes per algorithm, in units of the policy's forward+backward: (critic fwd+bwd, forwards)
#: GRPO: reference-policy and old-policy log-prob forwards. PPO: + critic update and its value forward.
_EXTRA = {"grpo": (0.0, 2.0), "ppo": (1.0, 3.0)}



def owner_usd_per_gpu_hour(accelerator: str, overrides: Mapping[str, float] | None = None) -> float:
    """$/GPU-hour for ``accelerator``: an override, else the owner-cost reference row of
    ``data/assumptions/economics.csv`` (SemiAnalysis AI Cloud TCO via InferenceX)."""
    if overrides and accelerator in overrides:
        return checks.non_negative_number(f"usd_overrides[{accelerator!r}]", overrides[accelerator])
    key = f"owner_usd_per_gpu_hour_reference_{accelerator}"
    econ = assumption_files.assumptions()
    if key not in econ:
        raise ValueError(f"no owner $/GPU-hour for accelerator {accelerator!r} in data/assumptions/economics.csv; "
                         f"pass usd_overrides={{'{accelerator}': ...}}")
    return econ[key].central


def split_gpus(fleet_gpus: int, rollout_fraction: float, group: int = 8) -> tuple[int, int]:
    """Rollout and trainer GPUs for a fleet split, in whole ``group``-GPU nodes, each side >= 1 group."""
    group = checks.positive_int("group", group)
    checks.integer("fleet_gpus", fleet_gpus, low=2 * group)
    checks.fraction("rollout_fraction", rollout_fraction)
    rollout = int(round(fleet_gpus * rollout_fraction / group)) * group
    rollout = min(max(rollout, group), fleet_gpus - group)
    return rollout, fleet_gpus - rollout


def assumptions() -> Mapping[str, assumption_files.Assumption]:
    """``data/assumptions/post_training.csv`` (low/central/high with provenance)."""
    return assumption_files.assumptions("post_training.csv")


def longest_rollout_tokens(n_rollouts, mean_tokens, sigma, cap_tokens):
    """Longest of ``n`` lognormal output lengths (mean ``mean_tokens``, log-sd ``sigma``), capped:
    ``mean exp(-sigma^2/2 + sigma z_n)`` with ``z_n`` the expected largest of ``n`` standard normal draws
    (:func:`uncertainty.expected_max_standard_normal`, Blom's ``(n - 0.375) / (n + 0.25)`` quantile; the length is
    monotone in the draw, so this is the length at the expected largest draw). ``n``: whole numbers >= 1."""
    z = uncertainty.expected_max_standard_normal(n_rollouts)
    return np.minimum(cap_tokens, mean_tokens * np.exp(-0.5 * sigma ** 2 + sigma * np.asarray(z)))


def _truncated_mean(mean_tokens, sigma, cap_tokens):
    """Mean of min(L, cap) for lognormal L (the cap truncates the tail the trainer sees)."""
    mu = math.log(mean_tokens) - 0.5 * sigma ** 2
    if sigma == 0:
        return min(mean_tokens, cap_tokens)
    nd = NormalDist()
    a = (math.log(cap_tokens) - mu) / sigma
    return mean_tokens * nd.cdf(a - sigma) + cap_tokens * (1.0 - nd.cdf(a))


# ---------------------------------------------------------------------------------------------
# weight sync
# ---------------------------------------------------------------------------------------------

#: Most pipeline buckets of a weight sync (each pays one latency).
MAX_BUCKETS = 10**6


def weight_sync_time_s(params, *, senders: int, receivers: int, receiver_shard_gpus: int,
                       link_bytes_per_s: float, efficiency: float = 0.9, latency_s: float = 10e-6,
                       src_bytes_per_param: float = 2.0, dst_bytes_per_param: float = 1.0,
                       schedule: str = "p2p", host_link_bytes_per_s: float | None = None,
                       buckets: int = 64, convert_bytes_per_s: float | None = None) -> float:
    """Seconds to push updated weights from the trainer to every rollout GPU.

    ``params`` parameters are held by ``senders`` trainer GPUs in ``src_bytes_per_param`` (BF16: 2)
    and needed by ``receivers`` rollout GPUs in ``dst_bytes_per_param`` (FP8: 1, NVFP4: 0.5625),
    each rollout replica being ``receiver_shard_gpus`` GPUs that split the model between them.
    ``link_bytes_per_s`` is one direction of a GPU's link (its scale-out NIC), achieved at
    ``efficiency``.

    * ``p2p`` (static point-to-point schedule, one-sided RDMA WRITE; Perplexity 2025): every rollout
      GPU receives only its shard, ``S_r = P b_dst / shard``; the senders together send
      ``replicas x P b_dst`` and each first gathers its share of full tensors (FSDP ``full_tensor``,
      ``P b_src / senders``) and converts it (``convert_bytes_per_s``, HBM-bound, default none).
    * ``broadcast`` (checkpoint-engine, Moonshot 2025): every rollout GPU receives the *whole*
      checkpoint ``P b_dst`` and keeps its shard; each bucket enters the GPUs from host memory, so the
      per-GPU ingest rate is ``min(link, host_link) x efficiency``.

    Stages are pipelined over ``buckets`` buckets: ``t = max(stage) + (sum - max) / buckets``
    (the classic pipeline fill), plus one latency per bucket.
    """
    P = checks.positive_number("params", params)
    senders, receivers, receiver_shard_gpus = (
        checks.integer(name, v, low=1, high=inference.MAX_GPUS)
        for name, v in (("senders", senders), ("receivers", receivers), ("receiver_shard_gpus", receiver_shard_gpus)))
    buckets = checks.integer("buckets", buckets, low=1, high=MAX_BUCKETS)
    link_bytes_per_s = checks.positive_number("link_bytes_per_s", link_bytes_per_s)
    efficiency = checks.fraction("efficiency", efficiency, low_open=True)
    latency_s = checks.non_negative_number("latency_s", latency_s)
    src_bytes_per_param = checks.positive_number("src_bytes_per_param", src_bytes_per_param)
    dst_bytes_per_param = checks.positive_number("dst_bytes_per_param", dst_bytes_per_param)
    checks.choice("schedule", schedule, SCHEDULES)
    if receivers % receiver_shard_gpus:
        raise ValueError(f"receiver_shard_gpus={receiver_shard_gpus} must divide receivers={receivers}")
    if host_link_bytes_per_s is not None:
        host_link_bytes_per_s = checks.positive_number("host_link_bytes_per_s", host_link_bytes_per_s)
    if convert_bytes_per_s is not None:
        convert_bytes_per_s = checks.positive_number("convert_bytes_per_s", convert_bytes_per_s)
    P = np.float64(P)  # float64 scalars: extreme inputs give inf (refused below), not ZeroDivisionError
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        link = link_bytes_per_s * efficiency
        if schedule == "broadcast":
            rate = min(link_bytes_per_s, host_link_bytes_per_s or link_bytes_per_s) * efficiency
            stages = [P * dst_bytes_per_param / rate]
        else:
            replicas = receivers // receiver_shard_gpus
            recv = P * dst_bytes_per_param / receiver_shard_gpus / link
            send = replicas * P * dst_bytes_per_param / senders / link
            gather = P * src_bytes_per_param / senders / link
            stages = [max(recv, send), gather]
            if convert_bytes_per_s:
                stages.append(P * (src_bytes_per_param + dst_bytes_per_param) / senders / convert_bytes_per_s)
            if host_link_bytes_per_s:
                stages.append(P * src_bytes_per_param / senders / (host_link_bytes_per_s * efficiency))
        t = max(stages) + (sum(stages) - max(stages)) / buckets + buckets * latency_s
    if not math.isfinite(t):
        raise ValueError(f"the weight-sync time overflows for params={params!r}, link_bytes_per_s={link_bytes_per_s!r} "
                         f"(values at the float64 limits); allowed: inputs whose time is a finite number")
    return float(t)


# ---------------------------------------------------------------------------------------------
# the RL step
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RLStep:
    """One RL step: stage times (s), cost (USD) and shares, plus what produced them."""

    step_time_s: float
    stage_times_s: Mapping[str, float]      # generation, environment (exposed), training, weight_sync
    shares: Mapping[str, float]             # fraction of the step each stage occupies (sums to 1)
    cost_usd: float
    cost_breakdown_usd: Mapping[str, float]  # rollout_gpus, trainer_gpus, sandbox_cpus
    usd_per_billion_tokens: float           # per billion generated (RL) tokens
    generated_tokens: float
    rollouts: int
    rollout_gpus: int
    trainer_gpus: int
    longest_rollout_tokens: float
    rollout_tokens_per_s_per_gpu: float
    mode: str
    details: Mapping[str, float]


@functools.lru_cache(maxsize=512)
def _decode_coefficients(spec, accelerator, gpus, precision, isl, osl, efficiency_):
    """Per valid single-stage rollout layout, arrays (a, c, M, ranks, t_prefill_per_seq, [tp, dp, ep]): iteration
    time ``a + c b`` per rank (a line through the step at one sequence per rank and at the most that
    fit), the most sequences that fit, the attention ranks and the batched prefill time per prompt.
    :func:`rl_step` picks the layout that finishes the rollouts first: the one that serves the most
    tokens/s at full load can be a poor one for the long tail (decoded at a small batch, where ``a``
    binds), e.g. attention DP over 32 GPUs with its collectives."""
    agg = serving_context.context(spec, accelerator, precision, isl, osl, None, "aggregated", "central")
    c = inference.candidates(agg, gpus, {"pp": 1})       # the rollout model below is single-stage
    ctx = serving_context.context(spec, accelerator, precision, isl, osl, None, "decode", "central")
    mc = inference.max_concurrency(ctx, c)
    ranks = c["replicas"] * c["dp"]
    ok = mc >= ranks
    if not ok.any():
        raise ValueError(inference._no_fit_message(ctx, gpus, c) + " (rollout fleet)")
    c = {k: v[ok] for k, v in c.items()}
    mc, ranks = mc[ok], ranks[ok]
    b_full = mc / ranks
    t1 = inference.evaluate(ctx, {**c, "concurrency": ranks})["step_s"]
    tf = inference.evaluate(ctx, {**c, "concurrency": ranks * b_full})["step_s"]
    slope = np.maximum((tf - t1) / np.maximum(b_full - 1.0, 1.0), 0.0)
    a = np.maximum(t1 - slope, 0.0)
    pctx = serving_context.context(spec, accelerator, precision, isl, 1, None, "prefill", "central")
    t_pre = inference.evaluate(pctx, {**c, "concurrency": ranks * 8})["step_s"] / 8.0   # per prompt per rank, batched
    out = (a / efficiency_, slope / efficiency_, mc, ranks, t_pre / efficiency_,
           np.stack([c["tp"], c["dp"], c["ep"]], axis=1))
    for v in out:                     # cached: read-only, so no caller can change what the next one gets
        v.setflags(write=False)
    return out


@functools.lru_cache(maxsize=512)
def _train_time(spec, accelerator, gpus, precision, seq_len, batch_seqs):
    e = training.estimate(spec, accelerator, gpus, precision, seq_len=seq_len, global_batch_tokens=batch_seqs * seq_len)
    return e.step_time_s


#: Most rollouts per step (prompts x group size): a bound on the workload, well inside the draws
#: :func:`uncertainty.expected_max_standard_normal` takes (its quantile ``(n - 0.375) / (n + 0.25)`` stays below 1).
MAX_ROLLOUTS = 10**9


def _check_step(*, algorithm, rollout_shard_gpus, **values) -> None:
    """Every scalar argument of :func:`rl_step`: counts, sizes, prices and factors."""
    for name in ("rollout_gpus", "trainer_gpus"):
        checks.integer(name, values[name], low=1, high=inference.MAX_GPUS)
    for name in ("prompts", "group_size", "input_tokens", "max_output_tokens", "sandbox_cpus"):
        checks.positive_int(name, values[name])
    checks.non_negative_int("async_depth", values["async_depth"])
    checks.number("output_tokens_mean", values["output_tokens_mean"], low=1)
    checks.number("output_tokens_sigma", values["output_tokens_sigma"], low=0, high=3)
    for name in ("sandbox_cpu_s", "cpu_usd_per_hour", "usd_per_gpu_hour"):
        checks.non_negative_number(name, values[name])
    checks.positive_number("cpu_speed_factor", values["cpu_speed_factor"])
    checks.fraction("rollout_efficiency", values["rollout_efficiency"], low_open=True)
    checks.choice("algorithm", algorithm, ALGORITHMS)
    if rollout_shard_gpus is not None:
        checks.positive_int("rollout_shard_gpus", rollout_shard_gpus)
    if values["output_tokens_mean"] > values["max_output_tokens"]:
        raise ValueError(f"output_tokens_mean={values['output_tokens_mean']!r} exceeds "
                         f"max_output_tokens={values['max_output_tokens']}; allowed: <= max_output_tokens")
    n = int(values["prompts"]) * int(values["group_size"])
    if n > MAX_ROLLOUTS:
        raise ValueError(f"prompts x group_size = {n:,} rollouts is out of range; allowed: <= {MAX_ROLLOUTS:,}")


def _trainer_seq_len(trainer_seq_len, input_tokens, mean_output_tokens) -> int:
    """The trainer's sequence length: ``trainer_seq_len``, or the power of two that holds a prompt
    and a mean (capped) output. A shorter one would train fewer tokens than the rollouts made."""
    need = input_tokens + mean_output_tokens
    if trainer_seq_len is None:
        return 2 ** math.ceil(math.log2(need))
    seq = checks.positive_int("trainer_seq_len", trainer_seq_len)
    if seq < need:
        raise ValueError(f"trainer_seq_len={trainer_seq_len!r} is shorter than a mean rollout "
                         f"(input_tokens {input_tokens:,} + mean output {mean_output_tokens:,.0f} tokens); "
                         f"allowed: an integer >= {math.ceil(need):,}, or None (the next power of two)")
    return seq


def rl_step(model: models.ModelSpec | Mapping, accelerator: str, rollout_gpus: int, trainer_gpus: int, *,
            prompts: int, group_size: int, input_tokens: int, output_tokens_mean: float, output_tokens_sigma: float,
            max_output_tokens: int, sandbox_cpu_s: float, sandbox_cpus: int, algorithm: str, async_depth: int,
            rollout_precision: str, trainer_precision: str, usd_per_gpu_hour: float, cpu_usd_per_hour: float,
            rollout_efficiency: float, cpu_speed_factor: float = 1.0, sync_schedule: str = "p2p",
            sync_efficiency: float = 0.9, sync_latency_s: float = 10e-6, rollout_shard_gpus: int | None = None,
            trainer_seq_len: int | None = None) -> RLStep:
    """Time, cost and stage shares of one RL step (see the module docstring for the equations).

    The workload arguments have no defaults: :func:`workload_inputs` gives the book's
    (``RLWorkload.step_kwargs()`` plus prices and derate). ``rollout_efficiency`` derates the
    inference model's roofline-based rollout speed (1 = as predicted;
    ``data/assumptions/post_training.csv`` gives the measured/predicted ratio the validation table
    shows for MoE serving). ``async_depth`` 0 = synchronous. ``trainer_seq_len`` (None: the power of
    two that holds a prompt and a mean output) must hold a mean rollout, else ``ValueError``.
    """
    s = models.spec(model)
    acc = hardware.get(accelerator)
    _check_step(rollout_gpus=rollout_gpus, trainer_gpus=trainer_gpus, prompts=prompts, group_size=group_size,
                input_tokens=input_tokens, max_output_tokens=max_output_tokens, sandbox_cpus=sandbox_cpus,
                async_depth=async_depth, output_tokens_mean=output_tokens_mean,
                output_tokens_sigma=output_tokens_sigma, sandbox_cpu_s=sandbox_cpu_s,
                cpu_usd_per_hour=cpu_usd_per_hour, cpu_speed_factor=cpu_speed_factor,
                usd_per_gpu_hour=usd_per_gpu_hour, rollout_efficiency=rollout_efficiency, algorithm=algorithm,
                rollout_shard_gpus=rollout_shard_gpus)
    n = int(prompts * group_size)
    mean_eff = _truncated_mean(output_tokens_mean, output_tokens_sigma, max_output_tokens)
    seq = _trainer_seq_len(trainer_seq_len, input_tokens, mean_eff)
    l_max = float(longest_rollout_tokens(n, output_tokens_mean, output_tokens_sigma, max_output_tokens))
    osl = int(round(mean_eff))
    a_all, c_all, m_all, ranks_all, t_pre_all, lay_all = _decode_coefficients(
        s, acc.id, int(rollout_gpus), rollout_precision, int(input_tokens), max(osl, 1), float(rollout_efficiency))
    # prefill of all prompts (batched, compute-bound), then eq. (1), for every layout: the fastest is used
    k = int(async_depth)
    tail = l_max if k == 0 else l_max / (k + 1)
    waves_all = np.maximum(1.0, n / m_all)
    fixed_all = np.where(waves_all > 1, np.maximum(tail, n * mean_eff / m_all), tail)
    t_prefill_all = t_pre_all * n / ranks_all
    t_gen_all = t_prefill_all + a_all * fixed_all + c_all * n * mean_eff / ranks_all
    j = int(np.argmin(t_gen_all))
    a, c, M, t_prefill = (float(v[j]) for v in (a_all, c_all, m_all, t_prefill_all))
    t_gen = float(t_gen_all[j])
    # environment: sandboxes work alongside generation; the last reward check is exposed
    t_env_total = n * sandbox_cpu_s / (sandbox_cpus * cpu_speed_factor)
    t_env_tail = min(sandbox_cpu_s / cpu_speed_factor, sandbox_cpu_s)
    t_roll_stage = max(t_gen, t_env_total) + (t_env_tail if k == 0 else 0.0)
    t_env_exposed = t_roll_stage - t_gen
    # trainer: policy fwd+bwd over all sequences, + algorithm's extra passes
    t_policy = _train_time(s, acc.id, int(trainer_gpus), trainer_precision, seq, n)
    critic, fwds = _EXTRA[algorithm]
    t_train = t_policy * (1.0 + critic + fwds / 3.0)
    # weight sync: BF16 trainer -> rollout precision over the NICs
    shard = int(rollout_shard_gpus or _min_shard(s, acc, rollout_precision, rollout_gpus))
    t_sync = weight_sync_time_s(architecture.total_params(s), senders=int(trainer_gpus), receivers=int(rollout_gpus),
                                receiver_shard_gpus=shard, link_bytes_per_s=acc.scaleout_bytes_per_s,
                                efficiency=sync_efficiency, latency_s=sync_latency_s,
                                dst_bytes_per_param=hardware.BYTES_PER_ELEMENT[rollout_precision], schedule=sync_schedule)
    if k == 0:
        step = t_roll_stage + t_train + t_sync
        stages = {"generation": t_gen, "environment": t_env_exposed, "training": t_train, "weight_sync": t_sync}
    else:
        step = max(t_roll_stage, t_train) + t_sync
        # shares of the critical path: the longer of rollout/training, then sync
        if t_roll_stage >= t_train:
            stages = {"generation": t_gen, "environment": t_env_exposed, "training": 0.0, "weight_sync": t_sync}
        else:
            stages = {"generation": 0.0, "environment": 0.0, "training": t_train, "weight_sync": t_sync}
    hours = step / 3600.0
    cost = {"rollout_gpus": rollout_gpus * hours * usd_per_gpu_hour, "trainer_gpus": trainer_gpus * hours * usd_per_gpu_hour,
            "sandbox_cpus": sandbox_cpus * hours * cpu_usd_per_hour}
    total = sum(cost.values())
    tokens = n * mean_eff
    return RLStep(step_time_s=step, stage_times_s=stages, shares={k_: v / step for k_, v in stages.items()},
                  cost_usd=total, cost_breakdown_usd=cost, usd_per_billion_tokens=total / tokens * 1e9,
                  generated_tokens=tokens, rollouts=n, rollout_gpus=int(rollout_gpus), trainer_gpus=int(trainer_gpus),
                  longest_rollout_tokens=l_max, rollout_tokens_per_s_per_gpu=tokens / t_gen / rollout_gpus,
                  mode="sync" if k == 0 else f"async-{k}",
                  details={"t_rollout_stage_s": t_roll_stage, "t_train_s": t_train, "t_env_total_s": t_env_total,
                           "t_prefill_s": t_prefill, "a_s": a, "c_s": c, "max_concurrency": M,
                           "mean_output_tokens": mean_eff, "shard_gpus": shard, "t_policy_s": t_policy,
                           **{f"rollout_{k}": float(v) for k, v in zip(("tp", "dp", "ep"), lay_all[j])}})


def _min_shard(s, acc, precision, rollout_gpus):
    """Smallest power-of-two replica whose weights take at most half of each GPU's HBM."""
    w = architecture.total_params(s) * hardware.BYTES_PER_ELEMENT[precision]
    g = 1
    while g < rollout_gpus and w / g > 0.5 * acc.memory_capacity_bytes:
        g *= 2
    while rollout_gpus % g:
        g //= 2
    return max(g, 1)


def best_split(model, accelerator: str, gpus: int, fractions=None, **kw):
    """Evaluate rollout/trainer splits of a fixed fleet; returns a DataFrame sorted by fraction with
    step time, cost and a ``best`` flag (lowest cost per step among the splits that run)."""
    import pandas as pd

    checks.integer("gpus", gpus, low=2)
    dom = int(hardware.get(accelerator).scaleup_domain_gpus)
    fracs = fractions if fractions is not None else np.arange(1, 16) / 16.0
    rows = []
    for f in fracs:
        checks.fraction("fraction", f, low_open=True)
        unit = min(dom, 8)                 # whole 8-GPU groups (a rollout replica or a trainer node)
        r_g = int(round(gpus * f / unit)) * unit
        t_g = gpus - r_g
        if r_g < 1 or t_g < 1:
            continue
        try:
            st = rl_step(model, accelerator, r_g, t_g, **kw)
        except ValueError as ex:
            rows.append({"rollout_fraction": r_g / gpus, "rollout_gpus": r_g, "trainer_gpus": t_g, "step_time_s": np.nan,
                         "cost_usd": np.nan, "note": str(ex)[:120]})
            continue
        rows.append({"rollout_fraction": r_g / gpus, "rollout_gpus": r_g, "trainer_gpus": t_g,
                     "step_time_s": st.step_time_s, "cost_usd": st.cost_usd,
                     **{f"{k}_s": v for k, v in st.stage_times_s.items()}, "note": ""})
    df = pd.DataFrame(rows).drop_duplicates("rollout_gpus").reset_index(drop=True)
    ok = df["cost_usd"].notna()
    df["best"] = False
    if ok.any():
        df.loc[df.loc[ok, "cost_usd"].idxmin(), "best"] = True
    return df


@dataclass(frozen=True)
class Campaign:
    steps: int
    step: RLStep
    days: float
    cost_usd: float
    gpu_hours: float
    generated_tokens: float


def campaign(model, accelerator: str, rollout_gpus: int, trainer_gpus: int, steps: int, **kw) -> Campaign:
    """A post-training campaign of ``steps`` identical RL steps: wall-clock days, USD, GPU-hours, tokens."""
    checks.positive_int("steps", steps)
    st = rl_step(model, accelerator, rollout_gpus, trainer_gpus, **kw)
    secs = st.step_time_s * steps
    return Campaign(int(steps), st, secs / 86400.0, st.cost_usd * steps,
                    (rollout_gpus + trainer_gpus) * secs / 3600.0, st.generated_tokens * steps)


# ---------------------------------------------------------------------------------------------
# the book's workload
# ---------------------------------------------------------------------------------------------

def workload_inputs(workload: workloads.RLWorkload, accelerator: str,
                    usd_overrides: Mapping[str, float] | None = None) -> dict[str, object]:
    """Every workload, price and derate argument of :func:`rl_step` for ``workload`` on ``accelerator``.

    The workload's fields (:meth:`RLWorkload.step_kwargs`), its sandbox CPU factor where the host CPU
    is Vera (:meth:`RLWorkload.cpu_speed_factor_on`), the owner $/GPU-hour
    (:func:`owner_usd_per_gpu_hour`) and the central ``cpu_usd_per_hour`` and ``rollout_efficiency`` of
    ``data/assumptions/post_training.csv``.
    """
    a = assumptions()
    return {**workload.step_kwargs(), "cpu_speed_factor": workload.cpu_speed_factor_on(accelerator),
            "usd_per_gpu_hour": owner_usd_per_gpu_hour(accelerator, usd_overrides),
            "cpu_usd_per_hour": a["cpu_usd_per_hour"].central, "rollout_efficiency": a["rollout_efficiency"].central}


def workload_step(accelerator: str, workload: workloads.RLWorkload | None = None, *,
                  usd_overrides: Mapping[str, float] | None = None, **overrides) -> RLStep:
    """:func:`rl_step` of ``workload`` (default: the book's, :func:`workloads.rl`) on ``accelerator``.

    The policy comes from the models catalogue, the fleet is split with :func:`split_gpus`;
    ``overrides`` replace any :func:`rl_step` keyword argument.
    """
    w = workload if workload is not None else workloads.rl()
    rollout, trainer = split_gpus(w.fleet_gpus, w.rollout_fraction)
    kw = {**workload_inputs(w, accelerator, usd_overrides), **overrides}
    return rl_step(models.get(w.policy), accelerator, rollout, trainer, **kw)
