"""Chapter 3's computed sentences (:mod:`intelligence_per_dollar.analysis.post_training` results)."""

from __future__ import annotations

from typing import Mapping

from intelligence_per_dollar.analysis import post_training as ap
from intelligence_per_dollar.model import architecture
from intelligence_per_dollar.views.notebook import si


def setup(workload, model, rollout_gpus: int, trainer_gpus: int) -> str:
    """One line: the policy's size and the fleet."""
    return (f"Policy {workload.policy}: {si(architecture.total_params(model), 'params')} total, "
            f"{si(architecture.active_params(model), 'params')} active; fleet {workload.fleet_gpus} GPUs = "
            f"{rollout_gpus} rollout + {trainer_gpus} trainer; accelerators {list(workload.accelerators)}.")


def frontier(peak: Mapping[str, float], reference: str, candidate: str, rollout_efficiency: float) -> str:
    """Takeaway of section 3.1: the peak decode throughput ratio and the derate."""
    return (f"**Takeaway.** At peak load {candidate} generates **{peak[candidate] / peak[reference]:.1f}x** the tokens "
            f"per GPU of {reference} for this policy (HBM bandwidth and capacity, not FLOP/s, set decode). The "
            f"roofline is an upper bound: the validation below shows measured MoE serving at roughly "
            f"{rollout_efficiency:.0%} of it, which is the derate the RL model applies by default.")


def _near_target(value: float, target: float) -> str:
    """``value`` as a percentage with one decimal, or two where one would print the target itself (15.05% against a
    15% target reads "15.05%", not "15.0%, above the 15% target")."""
    return f"{value:.2%}" if round(value, 3) == round(target, 3) and value != target else f"{value:.1%}"


def inference_validation(f: ap.InferenceFindings) -> str:
    """Takeaway of the serving validation: where the model is close, where it over-predicts, and how
    close it is when called as a user calls it."""
    above = f.median_abs > ap.TARGET_MEDIAN_ABS_ERROR
    return (f"**Takeaway.** Dense FP8 serving on Hopper is predicted within a median **{f.dense_hopper_median_abs:.0%}**; "
            f"the decode-like BF16 GEMMs within {f.skinny_bf16_max_abs:.0%}. MoE serving at max load is over-predicted "
            f"by a median **{f.moe_median:+.0%}** and Blackwell FP4 by {f.blackwell_fp4_median:+.0%}, although the model "
            f"now carries measured expert-load skew, attention-DP layouts, host time, engine batch limits, the "
            f"benchmarks' finite datasets, the CUDA-graph batch sizes TensorRT-LLM's benchmark pads its decode-only "
            f"iterations up to (tech blog 20), the published efficiency of grouped GEMMs near their ridge point "
            f"(DeepGEMM) and of fused NVFP4 MoE kernels (the FP8 tensor rate and, on Blackwell, their faster weight "
            f"stream, FlashInfer), attention kept at the release precision in NVFP4 MoE checkpoints (ModelOpt), the "
            f"compute slowdown beside an overlapped collective, the whole row tiles a dense GEMM computes (half a "
            f"128-row tile per iteration on average), Blackwell Ultra's dense NVFP4 GEMMs at twice its FP8 rate, as "
            f"on Blackwell (the engines' kernels do not reach its 3x specification; FlashInfer PR 2303), and serves "
            f"the prefill instances SGLang ran with expert weights in Grace memory, and runs Hopper's grouped FP8 "
            f"expert GEMMs at the 0.75 of the dense rate measured on our H200 (DeepGEMM's block-scaled kernels for the "
            f"DeepSeek family excepted): what is left is the GPU time of MoE iterations at short lengths (permute, "
            f"finalize and the dispatch at one to two thousand tokens), which needs a measurement. The overall median "
            f"|error| is {_near_target(f.median_abs, ap.TARGET_MEDIAN_ABS_ERROR)}, "
            + (f"above the {ap.TARGET_MEDIAN_ABS_ERROR:.0%} target: this is a known gap, not hidden by fitting. "
               if above else f"within the {ap.TARGET_MEDIAN_ABS_ERROR:.0%} target. ")
            + f"Called as a user calls it (the frontier with every default, its highest throughput) the model is off by "
            f"a median **{_near_target(f.user_median_abs, ap.TARGET_MEDIAN_ABS_ERROR)}** on the {f.user_cases} max-load "
            f"cases ({'above' if f.user_median_abs > ap.TARGET_MEDIAN_ABS_ERROR else 'within'} the "
            f"{ap.TARGET_MEDIAN_ABS_ERROR:.0%} target), {f.user_over_2x} of them by more than 2x: the stated layout, KV "
            f"precision and finite dataset of each benchmark are information a user does not pass"
            + (f". The frontier is a steady state: the {f.user_steady_cases} runs long enough to be one (no request "
               f"count stated, MLPerf Offline's among them) are off by a median **{f.user_steady_median_abs:.0%}**, the "
               f"{f.user_finite_cases} finite runs (a stated number of requests queued at once, which ramp, fill and "
               f"drain) by {f.user_finite_median_abs:.0%}, and by {f.user_finite_requests_median_abs:.0%} when the "
               f"user states the count too (`estimate(..., requests=N)`, layouts still searched)"
               if f.user_steady_cases and f.user_finite_cases else "")
            + f". FP8 skinny GEMMs are timed with ~{f.fp8_skinny_floor_s * 1e6:.0f} us of PyTorch "
            f"dispatch that CUDA-graph decode does not pay."
            + (f" On the {f.mlperf_cases} MLPerf Inference runs (v4.1-v5.1, NVIDIA, judged before they joined the table) "
               f"the Offline (max-load) median is **{f.mlperf_offline_median_abs:.0%}**, the worst "
               f"{f.mlperf_offline_worst_case} at {f.mlperf_offline_worst_error:+.0%}; the Server and Interactive runs "
               f"are read as the benchmark runs them, queries arriving as a Poisson stream (dealt out to the engine "
               f"instances in turn, as NVIDIA's harness does) with limits on each query's "
               f"p99 TTFT and TPOT (`serving_arrivals` simulates the engine's iterations under that stream, "
               f"`serving_slo.best_under_slo(arrivals='poisson')`), and are off by a median "
               f"{f.mlperf_server_median_abs:.0%}. Random arrivals matter most where prompts are long: Llama 3.1 405B's "
               f"prompts (476 to 19,988 tokens, mean 9,429) make the iterations that carry them long and queue for the "
               f"token budget, which the steady state's mean latencies missed (its first seven Server and Interactive "
               f"runs were +24% to +86% against means; at the p99 its {f.long_prompt_slo_cases} runs now lie between "
               f"{f.long_prompt_slo_min_error:+.0%} and {f.long_prompt_slo_max_error:+.0%}, the low end "
               f"{f.long_prompt_slo_min_case}, where the p99 TTFT binds and the model's Hopper prefill is slow). "
               f"The harness serves Llama 2 70B, Llama 3.1 405B and Mixtral through TensorRT-LLM's C++ executor, whose "
               f"loop runs between iterations (`scheduler` `trtllm-engine`): without it the Interactive runs' "
               f"iterations came out 11-23% short at the measured load. The v5.1 DeepSeek-R1 misses are the steady "
               f"iteration itself. The "
               f"DeepSeek-R1 runs carry "
               f"their dataset's spread of output lengths (per-sample reference lengths, clipped at the 20,000-token "
               f"cap): a full batch holds long reasoning outputs in proportion to their length, so a running sequence "
               f"reads and holds about twice the KV cache of a fixed-length run with the same mean "
               f"(`serving_lengths`). How many such sequences fit depends on when the engine takes KV blocks "
               f"(`kv_allocation`): TensorRT-LLM's default reserves each request's prompt and whole output at "
               f"admission, but NVIDIA's harness sets `'batch_scheduler_policy': 'max_util'` and takes blocks as "
               f"tokens arrive, as vLLM does, so a full batch holds each output at its current length, about half "
               f"its final one"
               + (f"; read that way the {f.dsr1_v60_offline_cases} MLPerf v6.0 DeepSeek-R1 Offline runs lie between "
                  f"{f.dsr1_v60_offline_min_error:+.0%} and {f.dsr1_v60_offline_max_error:+.0%} (-7% to -17% "
                  f"with reservations), while v5.1's, a year's older software on the same B200s, stay far above."
                  if f.dsr1_v60_offline_cases else ".")
               if f.mlperf_cases else ""))


def operating_points(ops) -> str:
    """Takeaway of the operating-point check (:func:`validation_inference.operating_point_table`): the model's
    iteration at each run's measured load against the log's mean TPOT, Server and Interactive loads apart."""
    done = ops[ops["refused"] == ""]
    if done.empty:
        return "**Takeaway.** No operating point could be predicted."
    inter = done["scenario"] == "Interactive"
    worst = done.loc[done["error"].abs().idxmax()]
    parts = [f"**Takeaway.** Over {len(done)} runs the model's iteration at the measured load is off by a median "
             f"**{done['error'].abs().median():.0%}** ({done['error'].median():+.0%} signed: negative is an iteration "
             f"too short)."]
    for label, rows in (("Server", done[~inter]), ("Interactive", done[inter])):
        if not rows.empty:
            parts.append(f"At the {label} loads ({len(rows)} run{'s' if len(rows) != 1 else ''}, "
                         f"{rows['in_flight_per_gpu'].min():,.0f} to "
                         f"{rows['in_flight_per_gpu'].max():,.0f} queries in flight per GPU) it ranges from "
                         f"{rows['error'].min():+.0%} to {rows['error'].max():+.0%}.")
    parts.append(f"The furthest is {worst['case']} ({worst['model']} on {worst['accelerator']}, "
                 f"{worst['error']:+.0%}). A run whose iteration is right but whose rate is not points at the latency "
                 f"search; a run whose iteration is off explains its rate's miss without it.")
    refused = ops[ops["refused"] != ""]
    if not refused.empty:
        parts.append(f"{len(refused)} run{'s' if len(refused) > 1 else ''} held more queries than the model's memory "
                     f"model fits ({', '.join(refused['case'])}).")
    return " ".join(parts)


def speculative(spec) -> str:
    """Takeaway of the speculative-decoding check (:func:`validation_inference.speculative_table`): the speedups over
    the same run without drafts, and the drafted runs' throughput."""
    if spec.empty:
        return "**Takeaway.** No measured run with speculative decoding is in the table."
    pairs = spec.dropna(subset=["speedup_error"])
    drafted = spec[spec["speculative_tokens"] > 0]
    parts = ["**Takeaway.**"]
    if not pairs.empty:
        parts.append(f"Over {len(pairs)} measured speedups from drafting ({pairs['speculative_tokens'].min()} to "
                     f"{pairs['speculative_tokens'].max()} tokens) the model's speedup is off by at most "
                     f"**{pairs['speedup_error'].abs().max():.1%}** "
                     f"(measured {pairs['measured_speedup'].min():.2f}x to "
                     f"{pairs['measured_speedup'].max():.2f}x): with the acceptance given, the cost of verifying the "
                     f"drafts and running the drafter is right, including where more drafts stop paying.")
    lat = drafted[drafted["measured_speedup"].isna()]
    if not lat.empty:
        parts.append(f"The {len(lat)} latency-limited runs that state their drafts land within "
                     f"{lat['error'].abs().max():.0%} of their measured throughput; without speculative decoding the "
                     f"model meets their time per output token only at a trickle.")
    return " ".join(parts)


def rl_step(accelerator: str, s, total_params: float) -> str:
    """Worked number and takeaway of section 3.2 for one accelerator's step ``s``."""
    lo, hi = ap.PUBLISHED_GENERATION_SHARE
    gen = s.shares["generation"]
    return (f"**Worked number ({accelerator}).** {s.rollouts:,} rollouts of mean {s.details['mean_output_tokens']:,.0f} "
            f"tokens; the longest is {s.longest_rollout_tokens:,.0f}. Decode costs a = {s.details['a_s'] * 1e3:.1f} ms "
            f"per iteration plus c = {s.details['c_s'] * 1e6:.0f} us per sequence, so the straggler tax alone is "
            f"{s.details['a_s'] * s.longest_rollout_tokens:,.0f} s of a {s.stage_times_s['generation']:,.0f} s "
            f"generation. **Takeaway.** Generation takes **{gen:.0%}** of the step (published systems report "
            f"{lo * 100:.0f}-{hi:.0%}: OpenRLHF, APRIL, RollPacker; "
            + ("in line" if gen >= lo else
               f"below that here because the trainer of a {si(total_params)}-parameter model is slow too")
            + f"); weight sync is a rounding error at {s.stage_times_s['weight_sync']:.1f} s.")


def best_split(fraction: Mapping[str, float]) -> str:
    """Takeaway of section 3.3: the cheapest rollout share per accelerator."""
    return (f"**Takeaway.** The cheapest split puts "
            f"{', '.join(f'{v:.0%} of the GPUs on rollouts on {k}' for k, v in fraction.items())}. Generation is bound "
            f"by HBM bandwidth (and the straggler) and training by FLOP/s, so the split follows each accelerator's "
            f"balance of the two; too few trainers and the trainer becomes the step, too few generators and the "
            f"straggler tax grows.")


def weight_sync(f: ap.SyncFindings) -> str:
    """Takeaway of section 3.4: what Perplexity's and checkpoint-engine's figures require."""
    p, c = f.perplexity, f.checkpoint_engine
    shard = int(p["receiver_shard_gpus"])
    nics = " and ".join(f"{t:.2f} s at {g:,} Gb/s" for g, t in f.fastest_nics(shard))
    return (f"**Takeaway.** Perplexity's {p['measured_s']:g} s holds from first principles (predicted "
            f"{f.perplexity_predicted_s:.2f} s) *if* each inference GPU has a {p['link_bytes_per_s'] * 8 / 1e9:.0f} Gb/s "
            f"NIC run near line rate and each {shard}-GPU replica receives only its 1/{shard} shard "
            f"({si(p['params'] * p['dst_bytes_per_param'] / shard, 'B')}) while {int(p['senders'])} trainers send in "
            f"parallel: the time is one shard over one NIC. Checkpoint-engine's ~{c['measured_s']:.0f} s is what you "
            f"get when every GPU ingests the *whole* {si(c['params'] * c['dst_bytes_per_param'], 'B')} checkpoint "
            f"through its PCIe host link (~{c['host_link_bytes_per_s'] / 1e9:.0f} GB/s): median error "
            f"{f.checkpoint_engine_median_abs_error:.0%}. With {shard}-GPU replicas the same {si(p['params'])} model "
            f"needs {nics} per GPU with the p2p schedule: sync is not the bottleneck of an RL step that lasts minutes.")


def vera(workload, light_gain: float, heavy_gain: float) -> str:
    """Takeaway of section 3.5: what a faster sandbox CPU saves, light and heavy."""
    return (f"**Takeaway.** With {workload.sandbox_cpu_s:g} CPU-s per rollout on {workload.sandbox_cpus:,} CPUs the "
            f"sandboxes finish while the GPUs still generate, and Vera's {workload.cpu_speed_factor - 1:+.0%} saves "
            f"**{light_gain:.1%}** of the step. With {ap.HEAVY_SANDBOX_MULTIPLIER}x heavier environments (repository "
            f"test suites) they bind and Vera saves **{heavy_gain:.0%}**: the claim matters exactly where CPUs, not "
            f"GPUs, are the bottleneck, and adding CPUs buys the same.")


def campaign(camp: Mapping, inputs: Mapping[str, dict], reference: str, candidate: str) -> str:
    """Takeaway of section 3.6: days and dollars of one campaign on two accelerators."""
    r, c = camp[reference], camp[candidate]
    cost_ratio = r.cost_usd / c.cost_usd
    return (f"**Takeaway.** {r.steps:,} steps take {r.days:.1f} days and ${r.cost_usd / 1e6:.2f}M on {reference} versus "
            f"{c.days:.1f} days and ${c.cost_usd / 1e6:.2f}M on {candidate}: {candidate} is "
            f"**{r.days / c.days:.1f}x faster** on the same number of GPUs, and "
            f"{'cheaper' if cost_ratio > 1 else 'dearer'} by {abs(cost_ratio - 1):.0%} at owner costs of "
            f"${inputs[reference]['usd_per_gpu_hour']:.2f} vs ${inputs[candidate]['usd_per_gpu_hour']:.2f} per GPU-hour: "
            f"the speed-up is largely paid for by the higher cost per GPU-hour, so intelligence per dollar improves far "
            f"less than intelligence per day.")


def async_depth(accelerator: str, sync_s: float, async1_s: float) -> str:
    """Takeaway of section 3.7: what one step of staleness saves."""
    return (f"**Takeaway.** One step of staleness cuts the {accelerator} step from {sync_s:,.0f} s to {async1_s:,.0f} s "
            f"(**{1 - async1_s / sync_s:.0%}**): overlap hides the shorter of generation and training, and the "
            f"straggler tax is shared.")


def step_title(workload, rollout_gpus: int, trainer_gpus: int) -> str:
    """Title of the stage chart of section 3.2."""
    mode = "synchronous" if workload.async_depth == 0 else f"async-{workload.async_depth}"
    return (f"One {mode} {workload.algorithm.upper()} step ({workload.prompts} x {workload.group_size} rollouts, "
            f"{rollout_gpus}+{trainer_gpus} GPUs)")
