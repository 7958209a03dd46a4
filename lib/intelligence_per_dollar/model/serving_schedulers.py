"""Serving schedulers: how many sequences a rank may hold and how prompts reach the iterations.

:func:`intelligence_per_dollar.model.inference.estimate` and ``frontier`` take ``scheduler``:

* ``"physics"`` (default, engine-agnostic): the batch is limited by memory (weights, KV cache of
  whole sequences, reserved at admission as TensorRT-LLM's default policy does, workspace) and by the engines'
  default scheduler limits (:data:`ENGINE_DEFAULT_LIMITS`: at most 2,048 running sequences per scheduling rank
  and 8,192 tokens per iteration, so a steady state holds at most ``8192 / (1 + ISL/OSL)`` sequences);
  prompts arrive in pieces of at most ``prefill_chunk_tokens`` (``data/assumptions/inference.csv``). Every request has the same ISL and OSL, so attention
  data-parallel ranks that started together finish and admit requests in the same iterations: they
  prefill together.
* ``"trtllm-bench"``: TensorRT-LLM's offline benchmark. When the caller gives no
  ``--max_batch_size`` / ``--max_num_tokens``, ``trtllm-bench throughput`` sizes them itself
  (:func:`trtllm_bench_limits`) and schedules prompts whole (chunked prefill off). Its synthetic
  datasets have ``--input-stdev 0 --output-stdev 0`` (perf-overview.md), so ranks stay in step.
  Its decode-only iterations replay a CUDA graph captured for the next of
  :data:`TRTLLM_BENCH_GRAPH_BATCH_SIZES` (:func:`graph_padded_tokens`): the PyTorch backend that
  ``trtllm-bench`` runs since v0.19, with the performance overview's ``cuda_graph_config``.
* ``"trtllm-bench-engine"``: the same benchmark on the TensorRT-engine flow of v0.17 and earlier
  (``trtllm-bench build``; the C++ runtime pads no CUDA graphs, and its host time per running sequence is the C++
  runtime's, ``cpp_runtime_host_per_sequence_s``, not the PyTorch backend's ``host_per_sequence_s``).
* ``"trtllm-engine"``: TensorRT-LLM's C++ executor serving TensorRT engines, as NVIDIA's MLPerf Inference harness
  runs Llama 2 70B, Llama 3.1 405B and Mixtral 8x7B (v4.1 to v6.0, Server, Interactive and Offline): chunked context
  on (``prefill_chunk_tokens`` pieces within the token budget), TensorRT-LLM's default limits unless the run states
  its own, no CUDA graphs, the C++ runtime's host time per sequence overlapped with the GPU, and the executor loop's
  host time in series with each iteration (``cpp_executor_layer_s`` per layer, :func:`serving_kernels.iteration_s`):
  the harness runs with ``enable_trt_overlap`` and ``use_graphs`` off. ``trtllm-bench-engine`` pays the same loop.
* ``"unsynchronised-adp"``: each attention-DP rank admits prompts on its own, as an engine does for
  workloads of varied lengths without a balancing scheduler (TensorRT-LLM's round-robin baseline;
  ``attention_dp_config.enable_balance`` is off by default in ``tensorrt_llm/llmapi/llm_args.py``). It
  changes MoE models only: a dense model's ``dp`` ranks share no layer, so none waits for another.
* ``"vllm-v0.5"``: vLLM before v0.6 (v0.5.x, mid-2024) served through its OpenAI API server
  (``benchmark_serving.py``). It had no overlap scheduler: its host work (gathering the last step's outputs,
  scheduling, preparing inputs, and the API server streaming every token) ran in series with the GPU
  (:func:`serving_kernels.iteration_s`) and costs ``vllm_v05_engine_per_sequence_s`` +
  ``vllm_v05_api_server_per_sequence_s`` per running sequence and iteration (``data/assumptions/
  inference.csv``, derived from the v0.6.0 release blog's profile of v0.5.3). Its defaults: ``max_num_seqs``
  256 and, with chunked prefill off, whole prompts (:data:`VLLM_V05_DEFAULT_LIMITS`).
* ``"vllm-v0.5-offline"``: the same engine driven in-process (``benchmark_throughput.py``, the ``LLM`` class):
  no API server, so only the engine's per-sequence host time.
* ``"vllm-v0.6"``: vLLM's V0 engine from v0.6 (September 2024) served through its API server: asynchronous output
  processing and multi-step scheduling put its host work under the GPU's (``max(GPU, host)``, as an overlap
  engine's), but it keeps V0's defaults, 256 running sequences and, with chunked prefill off (V0 turned it on only
  past 32K of context), whole prompts (:data:`VLLM_V05_DEFAULT_LIMITS`).
* ``"vllm-v1"``: vLLM's V1 engine (v0.8 to v0.13) served through ``vllm serve``, scheduling synchronously (its
  default until v0.14.0, vllm-project/vllm PR 27614): ``schedule()``, input preparation, the sampled tokens'
  copy to the CPU and ``update_from_output`` run between GPU iterations, so an iteration takes ``GPU + host``
  with ``vllm_v1_host_step_s`` + ``vllm_v1_host_per_sequence_s`` per running sequence (``data/assumptions/
  inference.csv``). Its batch limits are the API server's defaults for the device (:func:`vllm_v1_limits`),
  and chunked prefill is always on, a prompt taking as much of the iteration's token budget as is left
  (no per-prompt piece limit: ``long_prefill_token_threshold`` 0).
* ``"vllm-v1-async"``: the same engine with ``--async-scheduling`` (the default from v0.14.0): the host work
  of the next iteration runs under the GPU's (``max(GPU, host)``), the same limits.

**KV cache capacity.** How many sequences fit depends on when the engine takes KV blocks
(``kv_allocation``, :func:`kv_on_demand`). TensorRT-LLM's default capacity policy, ``GUARANTEED_NO_EVICT``, admits a
request only with blocks reserved for its prompt and its whole output, "to guarantee that a started request is
never paused" (TensorRT-LLM docs, performance tuning guide, "Useful Runtime Options", Capacity Scheduler Policy;
NVIDIA Dynamo's scheduler mocker: "TRT-LLM ``GUARANTEED_NO_EVICT`` reserves prompt plus maximum output and forbids
preemption", ``dynamo-mocker`` ``src/scheduler/vllm/AGENTS.md``): ``trtllm-bench`` runs it, its batch heuristic
sizes the batch for ``ISL + OSL`` per request (:func:`trtllm_bench_limits`), and the ``physics`` default keeps it
with TensorRT-LLM's other defaults (``kv_allocation="reserve"``). Other engines take blocks as tokens arrive
(``"on-demand"``, the vLLM schedulers' default): vLLM "admits based on the current known sequence and permits
decode-time preemption" (the same mocker; PagedAttention, Kwon et al. 2023, sections 4.2 and 4.5) and
TensorRT-LLM's ``MAX_UTILIZATION`` packs "as many requests as possible ... at the risk of having to pause
requests" -- the policy NVIDIA's MLPerf Inference harness sets for its LLMs (``'batch_scheduler_policy':
'max_util'`` in the closed/NVIDIA configs: DeepSeek-R1's of v5.1, configs/B200-SXM-180GBx8/Offline/deepseek-r1.py,
and v6.0, configs/B300-SXM-270GBx8/Server/deepseek-r1.py, and the GPT-J, Mixtral and Llama 3.1 405B base configs;
the MLPerf rows of ``data/runs/inference_runs.csv`` that ran it state ``kv_allocation`` on-demand). A full batch
of such an engine holds each sequence's prompt and the tokens it has generated so far, ``ISL`` plus the mean
position of a running sequence (:func:`serving_lengths.in_flight_position_tokens`: ``OSL / 2`` with one length,
``E[L^2] / (2 E[L])`` when lengths vary), not its final length: up to twice the sequences of a reserving engine
when outputs are long and varied (DeepSeek-R1's reasoning outputs, cv 1.1). The preemptions that hold it there
are left out (they recompute a paused sequence's tokens, little beside the decode of a full batch). SGLang lies
between the two (it admits against a share of its running requests' remaining output and retracts requests when
memory runs out); its rows keep the reserving default.

**Attention-DP imbalance.** With attention data parallelism every rank runs its own attention,
dense layers and norms, but the MoE layers (all-to-all, experts) synchronise all ranks every
layer, so an iteration lasts as long as its busiest rank: ``time_i = max_m time_{i,m}``
(TensorRT-LLM tech blog 10, "ADP Balance Strategy", Mathematical Modeling; measured balance
ratio mean/max tokens 54% for DeepSeek-V3 on 8 GB200 with round-robin admission, 88% with
``enable_balance``, 1.33x throughput). Each rank receives prompts as a Poisson stream of
``lam = prefill tokens / prompt piece`` pieces per iteration, at most ``cap`` per iteration (the
``max_num_tokens`` budget left after the decode tokens); :func:`busiest_rank_pieces` gives the
distribution of the busiest rank's pieces over ``n`` independent ranks (``n = 1`` when ranks
prefill together, as with uniform lengths or ``attention_dp_config.enable_balance``). The busiest rank's attention and dense work carries its pieces; the experts and
the all-to-all carry the mean of all ranks.
"""

from __future__ import annotations

import math

import numpy as np

from intelligence_per_dollar.model import architecture
from intelligence_per_dollar.model import serving_kernels as kern
from intelligence_per_dollar.sources import checks, hardware

__all__ = ["SCHEDULERS", "TRTLLM_BENCH_GRAPH_BATCH_SIZES", "MANY_PIECES", "TRTLLM_BENCH_KV_FRACTION",
           "TRTLLM_DEFAULT_LIMITS", "ENGINE_DEFAULT_LIMITS", "VLLM_V05_DEFAULT_LIMITS", "check_scheduler", "check_limits",
           "VLLM_V1_LARGE_LIMITS", "VLLM_V1_SMALL_LIMITS", "VLLM_V1_LARGE_MEMORY_BYTES", "vllm_v1_limits",
           "is_trtllm_bench", "is_vllm_v05", "is_vllm_v0", "is_vllm_v1", "host_in_series", "cpp_executor", "default_limits",
           "whole_prompts", "kv_on_demand", "KV_ALLOCATIONS",
           "graph_padded_tokens", "graph_replay", "graph_cap", "slot_occupancy", "adp_balanced", "finetune_setting",
           "trtllm_bench_limits", "busiest_rank_pieces", "pieces_needed", "limits"]

#: When an engine takes a sequence's KV blocks (:func:`kv_on_demand`).
KV_ALLOCATIONS = ("reserve", "on-demand")
SCHEDULERS = ("physics", "trtllm-bench", "trtllm-bench-engine", "trtllm-engine", "unsynchronised-adp", "vllm-v0.5",
              "vllm-v0.5-offline", "vllm-v0.6", "vllm-v1", "vllm-v1-async")
#: CUDA-graph batch sizes of TensorRT-LLM's performance-overview runs, with ``enable_padding: true``
#: (``llm_options.yml`` of docs/source/performance/perf-overview.md at v0.20 ab4143e and v1.0 00f3768,
#: docs/source/developer-guide/perf-overview.md at 03e27c7: "Starting with v0.19, testing was performed
#: using the PyTorch backend"). The PyTorch backend replays a captured graph only for an iteration without
#: context requests, and pads its batch with dummy requests up to the next captured size: "if the batch
#: size does not match any captured size, the runtime pads it up to the nearest larger captured size,
#: running the model over some empty slots. The wasted computation is proportional to the gap"
#: (TensorRT-LLM tech blog 20, "Tuning CUDA Graph Batch Sizes for Higher Output Throughput": filling the
#: gaps above 128 measured up to 1.3x output throughput on 4 GB200 in aggregated serving).
TRTLLM_BENCH_GRAPH_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024, 2048, 4096, 8192)

#: ``--kv_cache_free_gpu_mem_fraction`` of the perf-overview runs ("In many cases, we also use a
#: higher KV cache percentage by setting 0.95", TensorRT-LLM docs/source/developer-guide/
#: perf-overview.md at 03e27c7); trtllm-bench passes it to the heuristic.
TRTLLM_BENCH_KV_FRACTION = 0.95
#: (max_batch_size, max_num_tokens) when the checkpoint's quantisation is not one the heuristic
#: knows (``TUNED_QUANTS`` = NVFP4, FP8, FP8 block scales, none; e.g. GPT-OSS's MXFP4):
#: ``BuildConfig`` defaults (tensorrt_llm/bench/build/build.py, tensorrt_llm/builder.py).
TRTLLM_DEFAULT_LIMITS = (2048, 8192)
#: (max running sequences per scheduling rank, max tokens per iteration) of a serving engine left at
#: its defaults, used by the ``physics`` scheduler: TensorRT-LLM ``LlmArgs``/``trtllm-serve``
#: ``max_batch_size`` 2048 and ``max_num_tokens`` 8192 (tensorrt_llm/llmapi/llm_args.py,
#: tensorrt_llm/builder.py ``BuildConfig``). vLLM and SGLang cap lower by default (vLLM V1
#: ``max_num_seqs`` 256-1024, ``max_num_batched_tokens`` 2048-16384 by GPU memory, vllm/engine/
#: arg_utils.py; SGLang ``chunked_prefill_size`` 8192), so these are the most generous engine defaults:
#: a batch beyond them is one no engine runs without being told to.
ENGINE_DEFAULT_LIMITS = TRTLLM_DEFAULT_LIMITS
#: (max_num_seqs, max_num_batched_tokens) of vLLM v0.5 left at its defaults (vllm/engine/arg_utils.py v0.5.4:
#: ``max_num_seqs`` 256; with chunked prefill off, ``max_num_batched_tokens`` = ``max(max_model_len, 2048)``:
#: a whole prompt per prefill iteration; 32,768 is the context of the models its benchmarks served). V0 kept them
#: through v0.6 (``EngineArgs.max_num_seqs = 256``; chunked prefill on by default only past 32K of context).
VLLM_V05_DEFAULT_LIMITS = (256, 32768)
#: (max_num_seqs, max_num_batched_tokens) of vLLM's V1 API server left at its defaults, by device
#: (``vllm/engine/arg_utils.py`` ``_set_default_args_v1`` / ``get_batch_defaults``, v0.9 onwards): a GPU with at
#: least :data:`VLLM_V1_LARGE_MEMORY_BYTES` of memory that is not an A100 gets the large pair (vllm-project/vllm
#: PR 12369 raised the H100/H200 token budget, PR 16158 kept ``max_num_seqs`` 1024 only there, PR 17073 extended
#: both to every GPU of >= 70 GiB, and PR 17885 took the A100 out again: "Setting large max_num_batched_tokens for
#: A100 reduces throughput"); any other gets the small one (V0's 256 sequences, a 2,048-token budget).
VLLM_V1_LARGE_LIMITS, VLLM_V1_SMALL_LIMITS = (1024, 8192), (256, 2048)
VLLM_V1_LARGE_MEMORY_BYTES = 70 * 1024.0 ** 3
#: Prompt pieces per rank and iteration above which the busiest rank is taken to carry the mean
#: (Poisson: relative spread 1/sqrt(lam) < 18%; keeps the distribution short).
MANY_PIECES = 30.0
_GIB = 1024.0 ** 3
_CAP_BATCH, _CAP_TOKENS = 4096, 32768


def check_scheduler(scheduler: str) -> str:
    return checks.choice("scheduler", scheduler, SCHEDULERS)


def check_limits(max_batch_size, max_num_tokens, isl: int, scheduler: str) -> tuple[int | None, int | None]:
    """The caller's scheduler limits (``--max_batch_size``: running sequences per attention rank,
    ``--max_num_tokens``: tokens per iteration), each None (the engine's default or trtllm-bench's
    heuristic) or a positive whole number. Whole-prompt schedulers (``trtllm-bench``, chunked
    prefill off) admit a prompt only if all its ``isl`` tokens fit in one iteration, so there
    ``max_num_tokens`` must be at least ``isl``."""
    bs = None if max_batch_size is None else checks.positive_int("max_batch_size", max_batch_size)
    tok = None if max_num_tokens is None else checks.positive_int("max_num_tokens", max_num_tokens)
    if tok is not None and whole_prompts(scheduler) and tok < isl:
        raise ValueError(f"max_num_tokens={tok} is below input_tokens={isl}: scheduler={scheduler!r} schedules "
                         f"prompts whole (no chunked prefill), so no request could ever start")
    return bs, tok


def is_trtllm_bench(scheduler: str) -> bool:
    return scheduler.startswith("trtllm-bench")


def is_vllm_v05(scheduler: str) -> bool:
    """vLLM before v0.6: host work in series with the GPU (:func:`serving_kernels.iteration_s`)."""
    return scheduler.startswith("vllm-v0.5")


def is_vllm_v0(scheduler: str) -> bool:
    """vLLM's V0 engine (v0.5, v0.6): V0's default limits and whole prompts (:data:`VLLM_V05_DEFAULT_LIMITS`)."""
    return is_vllm_v05(scheduler) or scheduler == "vllm-v0.6"


def is_vllm_v1(scheduler: str) -> bool:
    """vLLM's V1 engine, synchronous (``vllm-v1``) or with async scheduling (``vllm-v1-async``)."""
    return scheduler.startswith("vllm-v1")


def cpp_executor(scheduler: str) -> bool:
    """Whether TensorRT-LLM's C++ executor runs the engine (the TensorRT-engine flow): its host time per sequence
    is the C++ runtime's, and its loop leaves host time in series with each GPU iteration
    (``cpp_executor_layer_s`` per layer)."""
    return scheduler in ("trtllm-bench-engine", "trtllm-engine")


def host_in_series(scheduler: str) -> bool:
    """Whether the engine's host work runs between GPU iterations (:func:`serving_kernels.iteration_s`):
    vLLM before v0.6, and vLLM V1 scheduling synchronously."""
    return is_vllm_v05(scheduler) or scheduler == "vllm-v1"


def vllm_v1_limits(acc: hardware.Accelerator) -> tuple[int, int]:
    """vLLM V1's default (``max_num_seqs``, ``max_num_batched_tokens``) for its API server on ``acc``
    (:data:`VLLM_V1_LARGE_LIMITS` on a device of at least :data:`VLLM_V1_LARGE_MEMORY_BYTES` that is not an A100,
    else :data:`VLLM_V1_SMALL_LIMITS`). The memory is the driver's total, as vLLM reads it."""
    large = acc.memory_capacity_bytes >= VLLM_V1_LARGE_MEMORY_BYTES and "a100" not in acc.id.lower()
    return VLLM_V1_LARGE_LIMITS if large else VLLM_V1_SMALL_LIMITS


def default_limits(scheduler: str, acc: hardware.Accelerator) -> tuple[int, int]:
    """The engine's own (running sequences per rank, tokens per iteration) when the caller sets neither."""
    if is_vllm_v0(scheduler):
        return VLLM_V05_DEFAULT_LIMITS
    if is_vllm_v1(scheduler):
        return vllm_v1_limits(acc)
    return ENGINE_DEFAULT_LIMITS


def kv_on_demand(scheduler: str, kv_allocation: str | None = None) -> bool:
    """Whether the engine allocates KV blocks as tokens arrive (``kv_allocation="on-demand"``: vLLM,
    TensorRT-LLM's ``MAX_UTILIZATION``) rather than reserving a request's prompt and whole output when it admits it
    (``"reserve"``: TensorRT-LLM's default ``GUARANTEED_NO_EVICT``); module docstring, "KV cache capacity".
    ``kv_allocation`` None: the scheduler's own, on demand for the vLLM engines and reserved for the others
    (``trtllm-bench`` runs TensorRT-LLM's default, and ``physics`` takes TensorRT-LLM's defaults throughout)."""
    if kv_allocation is None:
        return is_vllm_v0(scheduler) or is_vllm_v1(scheduler)
    return checks.choice("kv_allocation", kv_allocation, KV_ALLOCATIONS) == "on-demand"


def whole_prompts(scheduler: str) -> bool:
    """Whether the scheduler runs every prompt whole in one iteration (chunked prefill off)."""
    return is_trtllm_bench(scheduler) or is_vllm_v0(scheduler)


def graph_padded_tokens(scheduler: str, decode_tokens, prefill_tokens, cap=np.inf, replay=None):
    """Decode tokens per attention rank that an iteration's GEMMs, collectives and elementwise kernels process.

    Under ``trtllm-bench`` an iteration with no prompt tokens (``prefill_tokens`` 0) replays the CUDA graph of
    the next captured batch size: :data:`TRTLLM_BENCH_GRAPH_BATCH_SIZES` up to ``cap``, the largest pure-decode
    batch the executor admits (``min(max_batch_size, max_num_tokens)`` per rank, :func:`graph_cap`), which
    TensorRT-LLM adds as the last size when the list runs past it (``_filter_cuda_graph_batch_sizes``,
    tensorrt_llm/_torch/pyexecutor/model_engine.py: "padding to max_cuda_graph_bs is acceptable"). The dummy
    requests that fill it run every linear layer, the router, the experts and the collectives, but hold one
    token of KV cache, so the attention core still reads only the real sequences' context (the caller keeps
    ``decode_tokens`` for it). Iterations that prefill run eagerly on the real batch; other schedulers pad
    nothing (engines left at their defaults capture fine-grained sizes or run eagerly). ``replay``: the
    :func:`graph_replay` mask of the same arguments, when the caller has it already."""
    d = np.asarray(decode_tokens, float)
    if scheduler != "trtllm-bench":
        return d
    sizes = np.asarray(TRTLLM_BENCH_GRAPH_BATCH_SIZES, float)
    cap = np.asarray(cap, float)
    whole = np.ceil(d - 1e-9)                           # a mean batch of 640.2 sequences fills 641 slots
    nxt = np.minimum(sizes[np.minimum(np.searchsorted(sizes, whole), sizes.size - 1)], cap)
    replay = graph_replay(scheduler, d, prefill_tokens, cap) if replay is None else replay
    return np.where(replay, np.maximum(nxt, d), d)


def graph_replay(scheduler: str, decode_tokens, prefill_tokens, cap=np.inf):
    """Whether an iteration replays a captured CUDA graph (:func:`graph_padded_tokens`): ``trtllm-bench``, no
    prompt tokens, and a batch no larger than the largest graph. Its GEMMs then run a fixed, captured number of
    rows (a mask over the arguments)."""
    d = np.asarray(decode_tokens, float)
    if scheduler != "trtllm-bench":
        return np.zeros(d.shape, bool)
    whole = np.ceil(d - 1e-9)
    largest = np.minimum(float(TRTLLM_BENCH_GRAPH_BATCH_SIZES[-1]), np.asarray(cap, float))
    return (np.asarray(prefill_tokens, float) == 0.0) & (d > 0.0) & (whole <= largest)


def slot_occupancy(sequences, replicas, dp, pp=1.0):
    """(sequences on a busy attention rank and micro-batch slot, share of a busy replica's slots in use) for
    ``sequences`` in flight: they spread over the replicas, then over a replica's ``dp x pp`` slots; with fewer
    sequences than that, a busy slot holds a whole sequence and the others idle (their experts carry nothing)."""
    n = np.asarray(sequences, float)
    per_slot = np.where(n > 0.0, np.maximum(n / replicas, 1.0), 0.0) / (np.asarray(dp, float) * pp)
    return np.where(per_slot > 0.0, np.maximum(per_slot, 1.0), per_slot), np.where(per_slot > 0.0,
                                                                                   np.minimum(per_slot, 1.0), 1.0)


def graph_cap(ctx, tp, dp, pp=1.0):
    """The largest CUDA-graph batch of a pure-decode iteration per attention rank: ``min(max_batch_size,
    max_num_tokens)`` of :func:`limits` under ``trtllm-bench`` (no draft tokens), else unbounded."""
    if ctx.scheduler != "trtllm-bench":
        return np.inf
    seqs, tokens = limits(ctx, tp, dp, pp)
    return np.minimum(seqs, tokens)


def adp_balanced(scheduler: str) -> bool:
    """Attention-DP ranks prefill in the same iterations (uniform lengths, or ``enable_balance``)."""
    return scheduler != "unsynchronised-adp"


def finetune_setting(requests: float, isl: int, osl: int, pp: int = 1) -> tuple[int, int]:
    """trtllm-bench's rounding of the KV-capacity estimate into (max_batch_size, max_num_tokens).

    ``tensorrt_llm/bench/build/tuning.py`` (``finetune_setting``): batch capped at 4096 and split over
    the ``pp`` pipeline stages' micro-batches (``min(requests, 4096) / pp_size``), tokens at
    ``min(batch (1 + ISL/OSL), 32768)``; the batch rounded up to 32 (at least 64) below 256, to
    128 below 1024, else to 256; tokens rounded up to 256 (at least 2048) below 4096, to 512
    below 8192, else to 1024.
    """
    raw_bs = min(requests, _CAP_BATCH) / checks.positive_int("pp", pp)
    raw_tok = min(raw_bs * (1.0 + isl / osl), _CAP_TOKENS)
    return (_round_up(raw_bs, ((256, 32, 64), (1024, 128, 0), (math.inf, 256, 0))),
            _round_up(raw_tok, ((4096, 256, 2048), (8192, 512, 0), (math.inf, 1024, 0))))


def _round_up(x: float, bands) -> int:
    """``x`` rounded up to the step of the first band ``(below, step, at_least)`` it falls under."""
    below, step, at_least = next(b for b in bands if x < b[0])
    return int(max(at_least, step * math.ceil(x / step)))


def trtllm_bench_limits(s, acc: hardware.Accelerator, weight_bytes: float, kv_bytes_per_elem: float,
                        isl: int, osl: int, tp: int, dp: int, pp: int = 1) -> tuple[int, int]:
    """(max_batch_size per scheduling rank, max_num_tokens per iteration) trtllm-bench picks.

    ``tensorrt_llm/bench/tuning/heuristics.py`` (``calc_engine_setting``): KV per token in GiB is
    ``layers (kv_lora_rank + rope) b_kv`` for MLA, else ``2 layers max(tp_flag, kv_heads) head_dim
    b_kv``; with attention DP (``dp > 1``) each rank has the memory of its ``pp`` stages' GPUs and
    ``checkpoint / tp_flag`` of the weights, else ``tp_flag x pp`` GPUs and the whole checkpoint (``tp_flag`` = trtllm-bench's
    ``--tp``, the GPUs of a pipeline stage; ``n_gpus = tp_size x pp_size`` in ``calc_engine_setting``); requests = ``(memory - weights) x 0.95 / (KV per token x
    (ISL + OSL))``, rounded by :func:`finetune_setting`. Chunked prefill is off, so
    ``max_num_tokens`` is raised to ``ISL + max_batch_size`` (tensorrt_llm/bench/benchmark/utils/
    general.py, ``get_settings``). Checkpoints whose quantisation the heuristic does not know (MXFP4
    experts) get :data:`TRTLLM_DEFAULT_LIMITS`. ``weight_bytes``: the whole checkpoint in bytes.
    """
    r = tp * dp
    pp = checks.positive_int("pp", pp)
    if s.expert_weight_precision:
        bs, tok = TRTLLM_DEFAULT_LIMITS
    else:
        if architecture.is_mla(s):
            per_token = s.layers * (s.kv_lora_rank + architecture.rope_head_dim(s)) * kv_bytes_per_elem
        else:
            per_token = 2 * s.layers * max(r, s.kv_heads) * architecture.head_dim(s) * kv_bytes_per_elem
        # nvml total in GiB (H200: 143,771 MiB = 140.4 GiB); without a driver figure the marketed GB is GiB-like
        device_gib = acc.device_memory_bytes / _GIB if acc.device_memory_bytes else acc.hbm_bytes / 1e9
        memory, engine = ((device_gib * pp, weight_bytes / r / _GIB) if dp > 1
                          else (device_gib * r * pp, weight_bytes / _GIB))
        requests = max(memory - engine, 0.0) * TRTLLM_BENCH_KV_FRACTION / (per_token / _GIB * (isl + osl))
        bs, tok = finetune_setting(requests, isl, osl, pp)
    return bs, max(tok, isl + bs)


def busiest_rank_pieces(lam, ranks, cap, pieces: int):
    """Distribution of the prompt pieces the busiest of ``ranks`` attention ranks carries in one
    iteration, and the factor that keeps the mean prompt work.

    Each rank's pieces are Poisson(``lam``) clipped at ``cap`` (the token budget); clipping moves
    work to later iterations, so the work of a carried piece is scaled by ``lam / mean(clipped)``.
    With ``n`` independent ranks ``P(max <= j) = F(j)^n``. Returns ``(probs, scale)``: ``probs``
    has ``pieces`` rows (``P(max = j)`` for j = 0 .. pieces-1, broadcast over ``lam``).
    """
    lam = np.asarray(lam, float)
    cap = np.broadcast_to(np.asarray(cap, float), lam.shape)
    n = np.asarray(ranks, float)
    pmf, cdf, mean, prev = np.exp(-lam), np.zeros_like(lam), np.zeros_like(lam), np.zeros_like(lam)
    probs = []
    for j in range(pieces):
        q = np.where(j < cap, pmf, np.where(j == cap, 1.0 - cdf, 0.0))   # clipped pmf
        cdf = cdf + q
        mean = mean + j * q
        now = cdf ** n
        probs.append(now - prev)
        prev = now
        pmf = pmf * lam / (j + 1)
    scale = np.where(mean > 0, lam / np.maximum(mean, 1e-300), 1.0)
    return np.stack(probs), scale


def pieces_needed(lam, cap) -> int:
    """Rows :func:`busiest_rank_pieces` needs: past the cap or the Poisson tail (mean + 8 sd + 8)."""
    lam_max = float(np.max(lam, initial=0.0))
    return int(min(float(np.max(cap, initial=0.0)) + 1, math.ceil(lam_max + 8 * math.sqrt(lam_max) + 8)))


def limits(ctx, tp, dp, pp=1.0):
    """(max sequences per attention rank and micro-batch, max tokens per iteration) arrays for layouts
    ``tp``, ``dp``, ``pp``
    under ``ctx.scheduler`` (a :class:`serving_kernels.Context`). The caller's ``max_batch_size`` /
    ``max_num_tokens`` where given (trtllm-bench ``get_settings``, tensorrt_llm/bench/benchmark/utils/
    general.py: both given are used as they are, with no heuristic and no ``ISL + batch`` raise), else
    :func:`trtllm_bench_limits` per distinct layout (trtllm-bench) or the engine's :func:`default_limits`."""
    tp, dp, pp = np.broadcast_arrays(np.asarray(tp, float), np.asarray(dp, float), np.asarray(pp, float))
    given = ctx.max_batch_size, ctx.max_num_tokens
    if not is_trtllm_bench(ctx.scheduler) or None not in given:
        default = default_limits(ctx.scheduler, ctx.acc)
        return tuple(np.full(tp.shape, float(v if v is not None else d)) for v, d in zip(given, default))
    bs, tok = _trtllm_bench_heuristic(ctx, tp, dp, pp)
    return (bs if given[0] is None else np.full(tp.shape, float(given[0])),
            tok if given[1] is None else np.full(tp.shape, float(given[1])))


def _trtllm_bench_heuristic(ctx, tp, dp, pp):
    """:func:`trtllm_bench_limits` per distinct layout of the arrays ``tp``, ``dp``, ``pp``."""
    P = ctx.params
    ckpt = (kern.dense_weight_bytes(ctx) + P["expert_total"] * ctx.expert_bytes
            + P["embedding"] * kern.EMBEDDING_BYTES)
    kv_elem = ctx.kv_bytes_per_token / architecture.kv_cache_bytes_per_token(ctx.s, 1.0)
    keys = list(zip(tp.ravel().tolist(), dp.ravel().tolist(), pp.ravel().tolist()))
    out = {(t, d, q): trtllm_bench_limits(ctx.s, ctx.acc, ckpt, kv_elem, ctx.isl, ctx.osl, int(t), int(d), int(q))
           for t, d, q in set(keys)}
    bs = np.array([out[k][0] for k in keys], float).reshape(tp.shape)
    tok = np.array([out[k][1] for k in keys], float).reshape(tp.shape)
    return bs, tok
