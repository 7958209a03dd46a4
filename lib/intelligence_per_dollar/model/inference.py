"""Inference serving from first principles: prefill, decode, KV capacity, the throughput-interactivity
frontier, time to first token, $/Mtok and tokens/s per MW.

**The serving step.** A continuous-batching server (Yu et al. 2022, "Orca", OSDI'22; vLLM/SGLang/
TensorRT-LLM in-flight batching) runs *iterations*. In the steady state of a replica that keeps
``b`` sequences decoding per attention rank, each iteration produces one token for each of the
``b`` sequences and also prefills the prompts of the requests that replace finished ones: ``b``
requests finish every ``OSL`` iterations, so each iteration carries on average
``b * ISL / OSL`` prompt tokens (chunked prefill, Agrawal et al. 2024, "Sarathi-Serve", OSDI'24).
The tokens through the weight matrices per iteration are therefore

    T = b (1 + ISL / OSL)                                                         (1)

which is exactly TensorRT-LLM's own ``max_num_tokens`` sizing rule for its throughput benchmark
(``tensorrt_llm/bench/build/tuning.py``: ``max_batch_size * (1 + isl / osl)``).

**Time of one iteration** is the sum of its kernels, each capped by the roofline that binds
(Williams, Waterman & Patterson 2009), timed in :mod:`intelligence_per_dollar.model.serving_kernels`:

* matrix products (projections, FFNs, experts, LM head): :func:`efficiency.gemm_time_s`, i.e.
  ``max(2 m n k / (peak f_gemm), bytes / (hbm f_hbm)) + t_kernel`` with the calibrated H200-family
  ceilings. With few tokens the weight bytes bind (decode is memory-bound); with many the FLOPs do
  (prefill is compute-bound). The tensor cores compute whole row tiles of ``dense_tile_rows`` (128: TensorRT-LLM's
  NVFP4 and Hopper CUTLASS GEMMs run 128-row CTAs; NVIDIA's "Tile Quantization"; fewer rows run a smaller,
  autotuned tile): an iteration's row count changes from one iteration to the next, so its mean pays half a tile
  (:func:`efficiency.padded_rows`: 63.5 rows above 128, e.g. 8% of the compute at 800 rows, 32% at 200), and a
  replayed CUDA graph's fixed batch pads to its next whole tile. Only the compute roof sees it: a decode GEMM of a
  few rows stays on the weight stream.
* mixture-of-experts layers read only the experts the batch touches. With ``T`` tokens routed
  top-``k`` over ``E`` experts uniformly, the expected number of distinct experts touched is
  ``E (1 - (1 - k/E)^T)`` (occupancy of ``T k`` draws; e.g. Fedus et al. 2022's capacity
  analysis). Grouped GEMMs process each expert's rows in tiles of ``moe_tile_rows``; the expected
  padded rows per expert are ``max(t phi, lambda + t/2 (1 - exp(-2 lambda / t)))`` with ``lambda =
  T k / E`` and ``phi`` the touched fraction (a partly filled last tile wastes t/2 rows on average).
  This reproduces the measured H200 grouped GEMMs (``h200-grouped-gemm`` validation group: 64
  tokens per expert on the memory roof, >= 256 on the compute roof, median error 2%).
  The busiest expert-parallel rank sets the pace (``ep_load_imbalance``): expert popularity
  skew (``expert_load_cv``) plus the multinomial noise of a finite batch, ``1 + sqrt(2 ln ep)
  sqrt(cv^2 ep / E + ep / R)`` times the mean rows.
* decode attention reads each sequence's KV cache once per iteration: ``b x context x KV bytes per
  token`` at ``hbm f_hbm``, or its FLOPs at the flash-attention rate if those bind (MLA with weight
  absorption is compute-heavy: per head ``2 ctx (2 c + r)`` FLOPs, DeepSeek-V2 arXiv 2405.04434
  section 2.1.3 and Appendix C).
* prefill attention: causal flash attention FLOPs at the calibrated :func:`efficiency.attention_time_s`.
* elementwise kernels (norms, activation, RoPE, residuals, quantisation): memory-bound traffic of
  about ``10 d + 3 d_ff / tp`` BF16 values per token and layer (each norm reads and writes ``d``,
  residual adds read ``2d`` and write ``d``, the activation reads ``2 d_ff`` and writes ``d_ff``),
  plus a floor per kernel.
* **the per-kernel floor.** Every dependent kernel costs at least ``kernel_floor_s`` (~2.8 us on H200 under
  CUDA-graph replay); non-GEMM kernels are counted per layer by implementation (``engine``: 8, plus 12 per MoE
  layer; the unfused ``pytorch`` reference measured on our H200: 12 and 12 + 23). Calibrated on the dense
  Llama-8B-shape decode at batch 1 and checked, not fitted, on the MoE decode.
* **grouped (MoE) GEMMs** (:func:`serving_kernels.grouped_gemm_s`): pointer-array kernels whose weight stream runs
  at ``grouped_gemm_hbm_efficiency`` (0.7) of the dense rate, with a fixed ``grouped_gemm_launch_s`` (~10 us) per
  launch (measured on our H200: 47/194/379/410/408 us per layer at batch 1/8/32/128/512, modelled 46/185/377/428/
  428). Near the ridge point (a few hundred rows per expert) compute and stream combine as a 2-norm rather than the
  max (``grouped_gemm_overlap_norm``, fitted to DeepGEMM's published H800 grouped GEMMs: 47% of peak at 256 rows
  per expert where the max roofline says 62%).
* **the top-k combine**: a gather-reduce at HBM speed (engines) or BF16 atomics (``scatter_add_rate``, PyTorch).
* collectives: two tensor-parallel all-reduces per layer (Shoeybi et al. 2019, Megatron-LM), and
  for expert parallelism a dispatch and a combine all-to-all per MoE layer (DeepEP / Rajbhandari
  et al. 2022, DeepSpeed-MoE); across NVLink domains a token crosses the NIC once per distinct
  remote domain (``ep_all_to_all_s``). ``comm_overlap=True`` (two-batch overlap) hides them
  behind compute, which they slow while they run (:func:`collectives.overlap_exposed_s`): the layer
  takes ``compute + max(comm - compute, comm x sigma / (1 + sigma))`` instead of the sum. For a dense model
  ``comm_overlap=True`` is a GEMM + all-reduce fusion (TensorRT-LLM's ``gemm_allreduce_plugin``, "the GEMM +
  AllReduce kernel fusion plugin", tensorrt_llm/plugin/plugin.py, which NVIDIA's MLPerf H200 Llama 3.1 405B configs
  set): each all-reduce runs beside the GEMM that produces its input (the attention output projection, the FFN's
  down projection), with the same contention.

**Host overhead.** Each iteration also costs host (CPU) time, ``host_step_s + host_per_sequence_s x b``
(``data/assumptions/inference.csv``), overlapped with the GPU: an iteration takes ``max(GPU, host)``, which
binds only for small models at very large batch (e.g. Qwen3-30B-A3B at ~1,500 sequences on one B200). TensorRT-LLM's
C++ runtime (``scheduler="trtllm-bench-engine"``, and ``"trtllm-engine"`` as NVIDIA's MLPerf harness serves with it)
costs ``cpp_runtime_host_per_sequence_s`` per sequence instead, and its executor loop adds ``cpp_executor_layer_s`` per
layer and iteration in series with the GPU (no overlap, no CUDA graphs).
vLLM before v0.6 had no overlap scheduler (``scheduler="vllm-v0.5"`` / ``"vllm-v0.5-offline"``): its iteration
takes ``GPU + host``, with a per-sequence host time derived from vLLM's own profile of v0.5.3
(:func:`serving_kernels.iteration_s`), which is why 8 GPUs at TP8 served Mistral-7B only 1.3x faster than one.
vLLM's V1 engine (v0.8 to v0.13) also runs its host work in series unless ``--async-scheduling`` is set
(``scheduler="vllm-v1"``; ``"vllm-v1-async"`` with it), at a smaller per-sequence cost, and caps the batch at its
API server's defaults for the device (1,024 sequences and 8,192 tokens per iteration on a GPU of >= 70 GiB that
is not an A100, else 256 and 2,048: :func:`serving_schedulers.vllm_v1_limits`).

**Finite benchmarks** (``requests``): ramp, batch and drain of that many queued requests (:mod:`serving_benchmarks`).
**CUDA-graph padding** (``scheduler="trtllm-bench"``): a decode-only iteration replays the graph of the next captured
batch size, its linear layers, experts and collectives working on the padding too
(:func:`serving_schedulers.graph_padded_tokens`). **Idle ranks**: with fewer sequences than attention ranks x
micro-batches, a busy rank holds a whole sequence and the others wait (throughput counts only the busy share).

**Pipeline parallelism** (``pp``): stages of whole layers, ``pp`` micro-batches in flight (:mod:`serving_pipeline`).
**Host offload** (``weight_offload``): part of the layer weights streamed from host memory (:mod:`serving_offload`).
**Output lengths that vary** (``output_tokens_cv``, ``output_tokens_max``, or a public dataset's own per-request
lengths, ``output_dataset``): a full batch holds long requests in proportion to their length, so the decode context
and the KV cache per sequence grow, and a finite run ends on its longest requests (:mod:`serving_lengths`).

**Speculative decoding** (``speculative_tokens`` k, ``accepted_tokens`` a): each iteration the target model runs
each decoding sequence's last token and its k drafts (``k + 1`` rows through every GEMM and collective, ``k + 1``
queries over the same KV cache), a one-layer drafter then proposes the next k one after the other
(:func:`_draft_s`: DeepSeek's MTP module, one layer and the shared head per draft), and a sequence emits ``a`` tokens
(1 to ``k + 1``; Leviathan et al. 2023): per-user speed ``a / t_iteration``, its requests replaced ``a`` times as
often. Checked on TensorRT-LLM's measured DeepSeek-R1 MTP table (tech blog 1: TPS/user with 1-5 drafts over none)
and MLPerf Inference v6.1's DeepSeek-R1 Interactive runs (TPOT 15 ms, MTP 3).

**Capacity.** Weights per GPU (dense weights split by TP and replicated across attention-DP ranks, experts split
across the replica), the KV cache of every running sequence (its prompt and its whole output where the engine
reserves blocks at admission, ``ISL + OSL``: TensorRT-LLM's GUARANTEED_NO_EVICT, ``trtllm-bench`` and the
``physics`` default; its prompt and the tokens generated so far where blocks are allocated as tokens arrive,
``ISL + OSL / 2`` on average: vLLM, TensorRT-LLM's MAX_UTILIZATION; ``kv_allocation``, :mod:`serving_schedulers`,
"KV cache capacity") and an activation workspace must fit in the driver's device memory x
``serving_memory_fraction`` (0.9: vLLM's and TensorRT-LLM's defaults). KV bytes per token:
:func:`architecture.kv_cache_bytes_per_token`; GQA shards its KV heads across TP ranks, MLA's latent is replicated
across them (why MLA models serve with attention DP).

**Outputs.** Per-user speed ``1 / t_iteration``; output tokens/s per GPU ``concurrency / (t_iteration x
gpus)``; TTFT is one iteration carrying a whole prompt next to the decode batch (no queueing); $/Mtok =
$/GPU-hour / 3600 / (tokens/s per GPU) x 1e6; tokens/s per MW = tokens/s per GPU / (W per GPU) x 1e6. All
is vectorised over concurrency and parallelism (numpy); assumptions that are not hardware facts (tile rows,
kernels per layer) live in ``data/assumptions/inference.csv``.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.model import architecture, collectives, efficiency
from intelligence_per_dollar.model import serving_benchmarks as bench
from intelligence_per_dollar.model import serving_context as sctx
from intelligence_per_dollar.model import serving_kernels as kern, serving_layouts as layouts, serving_pipeline as pipe
from intelligence_per_dollar.model import serving_offload as offl
from intelligence_per_dollar.model.serving_estimate import Estimate, tokens_per_s_per_mw, usd_per_mtok
from intelligence_per_dollar.model import serving_schedulers as sched
from intelligence_per_dollar.model.serving_context import IMPLEMENTATIONS, MAX_GPUS, MODES, PRECISIONS
from intelligence_per_dollar.model.serving_layouts import PARALLELISM_KEYS, candidates
from intelligence_per_dollar.sources import checks, hardware

__all__ = ["PRECISIONS", "MODES", "IMPLEMENTATIONS", "PARALLELISM_KEYS", "FRONTIER_COLUMNS", "MAX_CONCURRENCY",
           "Estimate", "estimate", "frontier", "evaluate", "candidates", "max_concurrency", "usd_per_mtok",
           "tokens_per_s_per_mw", "serving_context"]



# ---------------------------------------------------------------------------------------------
# the vectorised evaluator: token mix -> layer stages -> step -> host -> memory
# ---------------------------------------------------------------------------------------------

def _token_mix(ctx: kern.Context, b):
    """(decode sequences, prefill tokens, mean decode context) per attention rank per iteration (Eq. 1); the context
    is ``ISL`` plus the mean position of a running sequence (``OSL / 2``, more when lengths vary: serving_lengths).
    With speculative decoding each sequence emits ``accepted_tokens`` per iteration, so its requests finish and are
    replaced that much sooner: ``b x accepted x ISL / OSL`` prompt tokens per iteration."""
    isl, osl = ctx.isl, ctx.osl
    if ctx.mode == "aggregated":
        return b, b * ctx.accepted_tokens * isl / osl, isl + ctx.decode_position_tokens
    if ctx.mode == "decode":
        return b, 0.0 * b, isl + ctx.decode_position_tokens
    return 0.0 * b, b * isl, 0.0        # prefill: b prompts per iteration, one output token each


def _layer_times(ctx: kern.Context, tp, dp, ep, decode_tokens, prefill_tokens, context, moe_prefill=None,
                 d_run=None, moe_decode=None, rows_fixed=False, queries=None):
    """(dense layer s, MoE layer s, parts of the repeated layer) for one iteration's token mix.

    ``decode_tokens`` (and ``d_run``, ``moe_decode``) count decoding sequences; each runs ``queries`` tokens through
    the layer (default ``ctx.verify_tokens``: its last token and the drafts it verifies under speculative decoding,
    1 without; a draft layer runs 1).

    ``prefill_tokens``: on the busiest attention rank (it paces attention and the dense layers);
    ``moe_prefill``: the ranks' mean (what the experts and the all-to-all carry; default the same).
    ``d_run``: the decode tokens the linear layers and collectives process (a padded CUDA graph,
    :func:`serving_schedulers.graph_padded_tokens`; default ``decode_tokens``); ``moe_decode``: the ranks'
    mean of them (idle ranks carry none; default ``d_run``). ``rows_fixed``: the iteration replays a captured CUDA
    graph, so its dense GEMMs run a fixed number of rows (:func:`serving_kernels.gemm_s`).
    """
    s, P, d = ctx.s, ctx.params, ctx.s.d_model
    q = float(ctx.verify_tokens if queries is None else queries)
    d_run = decode_tokens if d_run is None else d_run
    T = d_run * q + prefill_tokens                    # tokens per attention rank the GEMMs and collectives see
    T_moe = (d_run if moe_decode is None else moe_decode) * q + (prefill_tokens if moe_prefill is None else moe_prefill)
    t_proj = kern.gemm_s(ctx, T, P["attention"] / d / tp, d, attention=True, fixed_rows=rows_fixed)
    t_core = kern.attention_core_s(ctx, tp, decode_tokens, prefill_tokens, context, q)
    t_tp = kern.tp_all_reduce_s(ctx, T, tp)
    t_dense_ffn = kern.ffn_s(ctx, s.d_ff, T, tp, rows_fixed)
    t_ew_dense = kern.dense_elementwise_s(ctx, T, tp)
    dense_comm = t_tp
    if ctx.comm_overlap and not architecture.is_moe(s):
        # a GEMM + all-reduce fusion (TensorRT-LLM's gemm_allreduce_plugin): each of the two all-reduces runs beside
        # the GEMM that produces its input, the attention output projection and the FFN's down projection
        t_out = t_proj * (s.heads * architecture.head_dim(s) * d) / P["attention"]
        t_down = t_dense_ffn / (3.0 if s.gated_ffn else 2.0)
        slow = ctx.ceil.overlap_compute_slowdown
        dense_comm = (collectives.overlap_exposed_s(t_tp / 2.0, t_out, slow)
                      + collectives.overlap_exposed_s(t_tp / 2.0, t_down, slow))
    dense_layer = t_proj + t_core + dense_comm + t_dense_ffn + t_ew_dense
    if not architecture.is_moe(s):
        return dense_layer, dense_layer, {"gemm": t_proj + t_dense_ffn, "attention": t_core,
                                          "comm": t_tp, "other": t_ew_dense}
    t_experts = kern.moe_experts_s(ctx, T_moe, tp, dp, ep)
    t_router = kern.gemm_s(ctx, T / tp, s.experts, d, head=True, fixed_rows=rows_fixed)
    t_shared = (kern.ffn_s(ctx, s.shared_experts * s.expert_d_ff, T, tp, rows_fixed) if s.shared_experts
                else 0.0 * T)
    t_moe_comm = kern.moe_dispatch_s(ctx, T_moe, tp, dp, ep)
    t_ew_moe = kern.moe_elementwise_s(ctx, T, T_moe * dp / ep, tp * dp / ep, tp)   # the rows this GPU's expert shards see
    t_compute = t_proj + t_core + t_experts + t_router + t_shared + t_ew_moe
    # two-batch overlap (SGLang/DeepEP) hides the collectives behind the other micro-batch's compute, which they slow
    t_comm = t_tp + t_moe_comm
    moe_layer = t_compute + (collectives.overlap_exposed_s(t_comm, t_compute, ctx.ceil.overlap_compute_slowdown)
                             if ctx.comm_overlap else t_comm)
    parts = {"gemm": t_proj + t_experts + t_router + t_shared, "attention": t_core,
             "comm": t_tp + t_moe_comm, "other": t_ew_moe}
    return dense_layer, moe_layer, parts


def _gpu_step_s(ctx: kern.Context, tp, dp, ep, b, decode_tokens, prefill_tokens, context, moe_prefill=None, pp=1.0,
                through=False, busy=1.0):
    """GPU time of one iteration of the slowest of ``pp`` pipeline stages (one stage: every layer plus the LM
    head) and its send to the next (``through``: one pass through all stages, :mod:`serving_pipeline`); also
    the layer times and the head. ``busy``: the share of a replica's attention ranks that hold sequences (the
    experts carry only theirs)."""
    s = ctx.s
    # a decode-only iteration replays the CUDA graph of the next captured batch size (serving_schedulers)
    prompt = prefill_tokens + (0.0 if moe_prefill is None else moe_prefill)
    cap = sched.graph_cap(ctx, tp, dp, pp)
    replay = sched.graph_replay(ctx.scheduler, decode_tokens, prompt, cap)
    d_run = sched.graph_padded_tokens(ctx.scheduler, decode_tokens, prompt, cap, replay)
    t_dense, t_moe, parts = _layer_times(ctx, tp, dp, ep, decode_tokens, prefill_tokens, context, moe_prefill,
                                         d_run, d_run * busy, replay)
    head_tokens = d_run * ctx.verify_tokens + (b if ctx.mode == "prefill" else 0.0 * b)
    t_head = kern.gemm_s(ctx, np.maximum(head_tokens, 1.0), s.vocab / tp, s.d_model, head=True, fixed_rows=replay)
    t_head = t_head + _draft_s(ctx, tp, dp, ep, decode_tokens, context, d_run, busy, replay)
    send = pipe.stage_send_s(ctx, decode_tokens * ctx.verify_tokens + prefill_tokens, tp, dp, pp)
    if through:
        return pipe.through_stages_s(s, pp, t_dense, t_moe, t_head) + (pp - 1.0) * send, t_dense, parts, t_head
    return pipe.slowest_stage_s(s, pp, t_dense, t_moe, t_head) + send, t_dense, parts, t_head


def _draft_s(ctx: kern.Context, tp, dp, ep, decode_tokens, context, d_run, busy, rows_fixed):
    """Drafting ``spec_tokens`` tokens per decoding sequence on the last stage, after the target model: each draft
    runs one layer of the model's own kind (the MoE layer of a MoE model) for one token per sequence, the projection
    of its input (``2 d -> d``) and the shared LM head, one draft after the other. This is DeepSeek-V3's multi-token
    prediction module run autoregressively (DeepSeek-V3 report, arXiv 2412.19437, section 2.2: one transformer block,
    a ``2d x d`` projection, the shared embedding and output head; TensorRT-LLM tech blog 2, "MTP Eagle": "call the
    same MTP module forward K times to get K new draft tokens"), and the shape of one-layer draft heads (EAGLE).
    0 without speculative decoding or in a prefill instance."""
    k = ctx.spec_tokens
    if not k or ctx.mode == "prefill":
        return 0.0 * np.asarray(d_run, float)
    s, d = ctx.s, ctx.s.d_model
    t_dense, t_moe, _ = _layer_times(ctx, tp, dp, ep, decode_tokens, 0.0 * d_run, context, 0.0 * d_run, d_run,
                                     d_run * busy, rows_fixed, queries=1.0)
    rows = np.maximum(d_run, 1.0)
    t_proj = kern.gemm_s(ctx, rows, d / tp, 2 * d, fixed_rows=rows_fixed)
    t_head = kern.gemm_s(ctx, rows, s.vocab / tp, d, head=True, fixed_rows=rows_fixed)
    return k * ((t_moe if architecture.is_moe(s) else t_dense) + t_proj + t_head)


def _gemm_attribution_s(ctx: kern.Context, parts, t_dense, t_head):
    """GEMM seconds per step: the MoE layers' GEMMs, the head, and (MoE models) the leading dense
    layers' whole time less their attention, communication and elementwise parts."""
    s = ctx.s
    if not architecture.is_moe(s):
        return float(s.layers) * parts["gemm"] + t_head
    L_moe = architecture.moe_layers(s)
    L_dense = s.layers - L_moe
    out = L_moe * parts["gemm"] + t_head
    if L_dense:
        out = out + L_dense * t_dense - L_dense * (parts["attention"] + parts["comm"] + parts["other"])
    return out


def _aggregated_step(ctx: kern.Context, tp, dp, ep, b, dec, pre, context, t_host, pp=1.0, t_floor=0.0, busy=1.0):
    """Expected iteration when prompts arrive whole (or in ``prefill_chunk_tokens`` pieces) and the
    busiest attention rank paces it (:mod:`serving_schedulers`): returns (step, GPU step, parts,
    dense layer, head), each the mean over how many pieces the busiest rank carries. ``t_floor``: the
    least GPU time of an iteration (the host-link stream of offloaded weights); ``busy``: as in :func:`_gpu_step_s`."""
    piece = min(float(ctx.isl), ctx.prefill_chunk_tokens)
    lam = pre / piece
    many = lam > sched.MANY_PIECES                     # many pieces per iteration: the mean is exact enough
    lam = np.where(many, 0.0, lam)
    cap = np.maximum(np.floor((sched.limits(ctx, tp, dp, pp)[1] - dec * ctx.verify_tokens) / piece), 1.0)
    # ranks wait for the busiest only where MoE layers synchronise them; a dense model's dp ranks step on their own
    ranks = np.ones_like(dp) if sched.adp_balanced(ctx.scheduler) or not architecture.is_moe(ctx.s) else dp
    probs, scale = sched.busiest_rank_pieces(lam, ranks, cap, sched.pieces_needed(lam, cap))
    acc = [0.0, 0.0, {}, 0.0, 0.0]
    for j, p in enumerate(probs):
        busiest = np.where(many, pre, j * piece * scale)
        p = np.where(many, float(j == 0), p)
        moe = np.where(ranks > 1, (busiest + (dp - 1) * pre) / dp, busiest)
        g, d, pr, h = _gpu_step_s(ctx, tp, dp, ep, b, dec, busiest + 0 * pre, context, moe, pp, busy=busy)
        g = np.maximum(g, t_floor)                     # offloaded weights stream in no faster (serving_offload)
        acc[0], acc[1], acc[3], acc[4] = acc[0] + p * kern.iteration_s(ctx, g, t_host), acc[1] + p * g, acc[3] + p * d, acc[4] + p * h
        acc[2] = {k: acc[2].get(k, 0.0) + p * v for k, v in pr.items()}
    return tuple(acc)


def evaluate(ctx: kern.Context, c: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Iteration time, throughput and memory of configurations ``c`` (broadcastable arrays
    ``tp``, ``dp``, ``ep``, ``replicas``, optional ``pp`` and ``concurrency`` = sequences in flight over all GPUs).

    Returns arrays: ``step_s`` and its parts, ``output_tokens_per_s_per_gpu``,
    ``tokens_per_s_per_user``, ``ttft_s``, ``memory_per_gpu_bytes``, ``fits``.
    """
    s = ctx.s
    tp, dp, ep, rep, conc = (np.asarray(c[k], float) for k in ("tp", "dp", "ep", "replicas", "concurrency"))
    pp = np.asarray(c.get("pp", 1.0), float)              # pipeline stages (serving_pipeline)
    off = np.asarray(c.get("offload", 0.0), float)        # share of layer weights in host memory (serving_offload)
    r = tp * dp                                           # GPUs per pipeline stage (the replica: r x pp)
    t_stream = offl.stream_s(ctx, tp, r, pp, off, ctx.host_link_efficiency)
    # sequences per attention rank and micro-batch (whole ones on a busy rank) and the busy share of a replica's
    # slots (serving_schedulers.slot_occupancy); only the busy slots of all replicas emit tokens
    b, busy = sched.slot_occupancy(conc, rep, dp, pp)
    emitting = busy * np.minimum(conc / rep, 1.0)         # busy slots of the replicas that hold any sequence
    dec, pre, context = _token_mix(ctx, b)
    # host work per iteration, overlapped with the GPU's previous iteration (the slower one paces) or, on an
    # engine without an overlap scheduler (vllm-v0.5), in series with it (serving_kernels.iteration_s)
    t_host = kern.host_time_s(b, ctx.host_step_s, ctx.host_per_sequence_s)
    if ctx.mode == "aggregated":
        t_step, t_gpu, parts, t_dense, t_head = _aggregated_step(ctx, tp, dp, ep, b, dec, pre, context, t_host, pp,
                                                                 t_stream, busy)
    else:
        t_gpu, t_dense, parts, t_head = _gpu_step_s(ctx, tp, dp, ep, b, dec, pre, context, pp=pp, busy=busy)
        t_gpu = np.maximum(t_gpu, t_stream)
        t_step = kern.iteration_s(ctx, t_gpu, t_host)
    # TTFT: one iteration that carries a whole prompt next to the decode batch, through every stage
    ttft_pre = np.maximum(pre, ctx.isl) if ctx.mode != "prefill" else pre
    t_ttft_gpu = _gpu_step_s(ctx, tp, dp, ep, b, dec, ttft_pre, context, pp=pp, through=True, busy=busy)[0]
    t_ttft = kern.iteration_s(ctx, np.maximum(t_ttft_gpu, pp * t_stream), t_host)
    w, kv, work = pipe.memory_bytes(ctx, tp, r, b, dec, pre, pp)
    w = w + offl.staged_weight_bytes(ctx, tp, r, pp, off)
    mem = w + kv + work
    usable = ctx.acc.memory_capacity_bytes * ctx.memory_fraction
    # output tokens per attention rank and iteration: accepted_tokens per decoding sequence (1 without drafts);
    # prefill: one per prompt
    tokens_per_step = dec * ctx.accepted_tokens if ctx.mode != "prefill" else b
    L = float(s.layers)
    return {"step_s": t_step, "ttft_s": t_ttft, "gpu_step_s": t_gpu + 0 * t_step, "host_s": t_host + 0 * t_step,
            "output_tokens_per_s_per_gpu": tokens_per_step * emitting * dp / (t_step * r * pp),
            "tokens_per_s_per_user": np.where(ctx.mode == "prefill", ctx.isl, ctx.accepted_tokens) / (pp * t_step),
            "memory_per_gpu_bytes": mem, "weights_bytes": w + 0 * mem,
            "kv_cache_bytes": kv + 0 * mem, "workspace_bytes": work + 0 * mem, "usable_bytes": usable,
            "fits": (mem <= usable) & offl.host_fits(ctx, tp, r, pp, off), "sequences_per_rank": b,
            "offload": off + 0 * mem, "stream_s": t_stream + 0 * mem,
            "gemm_s": _gemm_attribution_s(ctx, parts, t_dense, t_head),
            "attention_s": L * parts["attention"], "comm_s": L * parts["comm"], "other_s": L * parts["other"]}


# ---------------------------------------------------------------------------------------------
# candidates, capacity, API
# ---------------------------------------------------------------------------------------------

def max_concurrency(ctx: kern.Context, c: Mapping[str, np.ndarray], steady: bool = True) -> np.ndarray:
    """Largest concurrency (sequences over all GPUs) whose weights, KV cache and workspace fit (memory is
    affine in the sequences per rank ``b``: evaluated at b = 0 and 1) and that the scheduler admits
    (:func:`serving_schedulers.limits`: sequences per rank and tokens per iteration: ``b (1 + ISL/OSL)`` in an
    aggregated steady state, Eq. 1; ``b ISL`` in prefill, at least one prompt) and offloaded weights fit the host."""
    base = {k: np.asarray(v, float) for k, v in c.items()}
    tp, pp = base["tp"], base.get("pp", 1.0)
    ranks = base["replicas"] * base["dp"] * pp                          # micro-batch slots: b sequences each
    m0 = evaluate(ctx, {**base, "concurrency": 0.0 * ranks})
    m1 = evaluate(ctx, {**base, "concurrency": ranks})
    slope = m1["memory_per_gpu_bytes"] - m0["memory_per_gpu_bytes"]
    b = np.floor((m0["usable_bytes"] - m0["memory_per_gpu_bytes"]) / slope)
    seqs, tokens = sched.limits(ctx, tp, base["dp"], pp)
    b = np.where(offl.host_fits(ctx, tp, tp * base["dp"], pp, base.get("offload", 0.0)), np.minimum(b, seqs), 0.0)
    per_seq = {"prefill": ctx.isl, "aggregated": ctx.verify_tokens + ctx.accepted_tokens * ctx.isl / ctx.osl
               if steady else 0.0}.get(ctx.mode, 0.0)
    b = np.minimum(b, np.maximum(np.floor(tokens / per_seq), 1.0)) if per_seq else b
    return np.maximum(b, 0.0) * ranks


def _setup(model, accelerator, gpus, precision, input_tokens, output_tokens, parallelism, kv_precision, mode, scenario,
           comm_overlap=False, implementation="engine", scheduler="physics", limits=(None, None), weight_offload=False,
           output_spread=(0.0, None, None), kv_allocation=None, speculative=(0, None)):
    gpus = checks.integer("gpus", gpus, low=1, high=MAX_GPUS)
    precision = hardware.precision_id(precision, "precision", sctx.PRECISIONS)
    kv_precision = None if kv_precision is None else hardware.precision_id(kv_precision, "kv_precision", sctx.PRECISIONS)
    checks.choice("scenario", scenario, efficiency.SCENARIOS)
    checks.boolean("comm_overlap", comm_overlap)
    ctx = sctx.context(model, accelerator, precision, input_tokens, output_tokens, kv_precision, mode, scenario, comm_overlap,
                       implementation, scheduler, limits, weight_offload, output_spread, kv_allocation, speculative)
    if parallelism is not None and not isinstance(parallelism, Mapping):
        raise ValueError(f"parallelism={parallelism!r} must be None or a dict of {', '.join(PARALLELISM_KEYS)}")
    fixed = layouts.check_parallelism(ctx, gpus, parallelism or {})
    c = candidates(ctx, gpus, fixed)
    if len(c["tp"]) == 0:
        raise ValueError(f"no valid parallelism for gpus={gpus} with {fixed}: tp must divide heads={ctx.s.heads} "
                         f"and fit in the NVLink domain ({ctx.domain}; a tp you fix may span whole domains), "
                         f"tp x dp x pp must divide gpus, and an ep you fix must be 1 or tp x dp (with tp and dp "
                         f"both fixed, also a divisor of tp x dp and of the experts)")
    return gpus, ctx, offl.with_offload(ctx, c, lambda cand: max_concurrency(ctx, cand).max() >= 1)


def serving_context(model, accelerator: str, gpus: int, precision: str = "fp8", input_tokens: int = 1000,
                    output_tokens: int = 1000, *, kv_precision: str | None = None, mode: str = "aggregated",
                    scenario: str = "central", comm_overlap: bool = False, implementation: str = "engine",
                    scheduler: str = "physics", max_batch_size: int | None = None, max_num_tokens: int | None = None,
                    weight_offload: bool | float | None = None, output_tokens_cv: float = 0.0,
                    output_tokens_max: int | None = None, output_dataset: str | None = None,
                    kv_allocation: str | None = None, speculative_tokens: int = 0,
                    accepted_tokens: float | None = None) -> kern.Context:
    """The validated per-case context :func:`frontier` evaluates with the same arguments (for callers that run the
    iteration model themselves, :mod:`serving_arrivals`)."""
    return _setup(model, accelerator, gpus, precision, input_tokens, output_tokens, None, kv_precision, mode, scenario,
                  comm_overlap, implementation, scheduler, (max_batch_size, max_num_tokens), weight_offload,
                  (output_tokens_cv, output_tokens_max, output_dataset), kv_allocation,
                  (speculative_tokens, accepted_tokens))[1]


def _no_fit_message(ctx, gpus, c):
    """Why nothing (or not the concurrency asked for) fits: the weights, or the KV cache."""
    mc = max_concurrency(ctx, c)
    ranks = c["replicas"] * c["dp"] * c["pp"]
    m0 = evaluate(ctx, {**c, "concurrency": 0.0 * ranks})
    off = np.asarray(c.get("offload", 0.0 * c["tp"]), float)
    host_ok = offl.host_fits(ctx, c["tp"], c["tp"] * c["dp"], c["pp"], off)    # offloads the host cannot hold: out
    usable, hbm = float(m0["usable_bytes"]) / 1e9, ctx.acc.memory_capacity_bytes / 1e9
    if mc.max() >= 1:
        return (f"the KV cache does not fit: at most {int(mc.max())} sequences of {ctx.isl}+{ctx.osl} tokens fit on "
                f"{gpus} {ctx.acc.id} GPUs ({ctx.kv_bytes_per_token / 1e3:.1f} kB of KV cache per token)")
    if np.where(host_ok, m0["weights_bytes"], np.inf).min() > m0["usable_bytes"]:
        whole = m0["weights_bytes"] - offl.staged_weight_bytes(ctx, c["tp"], c["tp"] * c["dp"], c["pp"], off)
        return (f"the weights do not fit: the smallest configuration needs {whole.min() / 1e9:.1f} GB of "
                f"weights per GPU before any KV cache, but {ctx.acc.id} has {hbm:.0f} GB of HBM "
                f"({usable:.0f} GB usable) on {gpus} GPUs"
                + offl.no_fit_hint(ctx.acc, ctx.weight_offload, bool(np.any(host_ok & (off > 0)))))
    m1 = evaluate(ctx, {**c, "concurrency": ranks})
    k = int(np.argmin(np.where(host_ok, m1["memory_per_gpu_bytes"], np.inf)))
    return (f"the KV cache does not fit: the weights fit ({m1['weights_bytes'][k] / 1e9:.1f} GB per GPU) but one "
            f"sequence of {ctx.isl}+{ctx.osl} tokens per attention rank needs {m1['kv_cache_bytes'][k] / 1e9:.1f} GB "
            f"of KV cache and {m1['workspace_bytes'][k] / 1e9:.1f} GB of activations per GPU; {ctx.acc.id} has "
            f"{usable:.0f} GB usable of {hbm:.0f} GB on {gpus} GPUs")


def estimate(model, accelerator: str, gpus: int, precision: str = "fp8", input_tokens: int = 1000,
             output_tokens: int = 1000, concurrency: float | None = None, parallelism: Mapping | None = None, *,
             kv_precision: str | None = None, mode: str = "aggregated", scenario: str = "central",
             comm_overlap: bool = False, implementation: str = "engine", scheduler: str = "physics",
             requests: int | None = None, max_batch_size: int | None = None,
             max_num_tokens: int | None = None, weight_offload: bool | float | None = None,
             output_tokens_cv: float = 0.0, output_tokens_max: int | None = None,
             output_dataset: str | None = None, kv_allocation: str | None = None, speculative_tokens: int = 0,
             accepted_tokens: float | None = None, request_rate_per_s: float | None = None) -> Estimate:
    """Throughput, interactivity, TTFT and memory of serving ``model`` on ``gpus`` GPUs of ``accelerator`` (an
    accelerator id, or a system id of ``data/hardware/systems.csv``, which brings that system's NVLink domain and
    topology: ``HGX-H100-4GPU``, four H100 wired directly with no NVSwitch; :func:`serving_kernels.scaleup_share`).

    ``concurrency``: sequences in flight over all ``gpus`` (None: the most that fit, i.e. a
    max-throughput offline benchmark). ``parallelism``: None to choose the fastest valid
    (tp, dp, ep, pp), or a dict fixing some of them. ``kv_precision`` None: what engines pick
    (:func:`serving_context.default_kv_precision`). Raises ``ValueError`` naming the constraint: unknown precision,
    impossible parallelism, weights or KV cache that do not fit. ``requests`` (trtllm-bench): tokens/s per GPU
    of a finite run (:func:`serving_benchmarks.output_tokens_per_s_per_gpu`); other fields: the steady state.
    ``request_rate_per_s`` (with ``requests``): the rate at which the finite run's requests arrive, a Poisson stream
    as ``vllm bench serve`` / SGLang's ``bench_serving`` send them at ``--request-rate`` (None or inf: all at once;
    :func:`serving_benchmarks.arriving_output_tokens_per_s`).
    ``max_batch_size`` (sequences per attention rank) / ``max_num_tokens`` (per iteration): the engine's
    scheduler limits when set (None: :func:`serving_schedulers.limits`' defaults). ``weight_offload``: layer weights
    streamed from host memory (:mod:`serving_offload`; None: only if nothing fits otherwise and the host link is
    NVLink-C2C; True: searched on any host link; a number in (0, 1]: that share; False: never).
    ``output_tokens_cv`` / ``output_tokens_max``: how much output lengths vary around ``output_tokens`` and their
    cap (:mod:`serving_lengths`; 0 / None: every request has ``output_tokens``). ``output_dataset``: a dataset
    whose own per-request lengths vary instead: any file of ``data/workloads/lengths/`` by name (``"sharegpt-vllm"``:
    ShareGPT as ``vllm bench serve`` samples it; ``"mlperf-deepseek-r1"``), rescaled to mean ``output_tokens``;
    ``output_tokens_cv`` must then stay 0. ``kv_allocation``: when the engine takes a sequence's KV blocks,
    ``"reserve"`` (its prompt and whole output at admission: TensorRT-LLM's default GUARANTEED_NO_EVICT) or
    ``"on-demand"`` (as tokens arrive: vLLM, TensorRT-LLM's MAX_UTILIZATION), which sets how many sequences fit
    (None: the scheduler's own, :func:`serving_schedulers.kv_on_demand`). ``speculative_tokens``: draft tokens per
    sequence and iteration (speculative decoding with a one-layer drafter such as DeepSeek's MTP module; 0: none);
    ``accepted_tokens``: the mean tokens a sequence emits per iteration, ``1 + `` the accepted drafts (None: the
    measured DeepSeek-R1 MTP acceptance of ``data/assumptions/inference.csv`` for ``speculative_tokens`` 1-5)."""
    gpus, ctx, c = _setup(model, accelerator, gpus, precision, input_tokens, output_tokens, parallelism,
                          kv_precision, mode, scenario, comm_overlap, implementation, scheduler,
                          (max_batch_size, max_num_tokens), weight_offload,
                          (output_tokens_cv, output_tokens_max, output_dataset), kv_allocation,
                          (speculative_tokens, accepted_tokens))
    if requests is not None and ctx.spec_tokens:
        raise ValueError(f"requests={requests!r} with speculative_tokens={ctx.spec_tokens}: the finite benchmark's "
                         f"ramp and drain (serving_benchmarks) advance one token per iteration; allowed: requests=None "
                         f"(the steady state) or speculative_tokens=0")
    requests = bench.check_requests(requests, ctx)
    rate = bench.check_request_rate(request_rate_per_s, requests)
    mc = max_concurrency(ctx, c)
    if concurrency is None:
        conc = mc
        if mc.max() < 1:
            raise ValueError(_no_fit_message(ctx, gpus, c))
    else:
        conc = np.full_like(c["tp"], checks.number("concurrency", concurrency, low=1, high=MAX_CONCURRENCY))
    r = evaluate(ctx, {**c, "concurrency": conc})
    ok = r["fits"] & (conc >= c["replicas"] * c["dp"] * c["pp"] * (1.0 if concurrency is None else 0.0)) & (mc >= 1)
    if not ok.any():
        raise ValueError(_no_fit_message(ctx, gpus, c) + (f"; concurrency={concurrency} asked for more"
                                                          if concurrency is not None else ""))
    score = np.where(ok, r["output_tokens_per_s_per_gpu"], -np.inf) if requests is None else \
        bench.output_tokens_per_s_per_gpu(ctx, c, np.minimum(max_concurrency(ctx, c, steady=False), conc if concurrency
                                                             else np.inf), requests, ok, _gpu_step_s, rate)
    i = int(np.argmax(score))
    pick = {k: float(np.broadcast_to(v, c["tp"].shape)[i]) for k, v in r.items()}
    par = {k: int(c[k][i]) for k in ("tp", "dp", "ep", "pp", "replicas")}
    return Estimate(
        output_tokens_per_s_per_gpu=float(score[i]),
        tokens_per_s_per_user=pick["tokens_per_s_per_user"], ttft_s=pick["ttft_s"], step_time_s=pick["step_s"],
        memory_per_gpu_bytes=pick["memory_per_gpu_bytes"],
        memory_breakdown_bytes={k: pick[k + "_bytes"] for k in ("weights", "kv_cache", "workspace")},
        time_breakdown_s={k: pick[k + "_s"] for k in ("gemm", "attention", "comm", "other", "stream")},
        parallelism=par, concurrency=float(np.broadcast_to(conc, c["tp"].shape)[i]), max_concurrency=float(mc[i]),
        gpus=gpus, accelerator=ctx.acc.id, precision=ctx.precision, input_tokens=ctx.isl, output_tokens=ctx.osl,
        mode=mode, power_w_per_gpu=ctx.acc.power_w, weight_offload_fraction=pick["offload"])


#: Most concurrencies :func:`frontier` spreads by itself (``points``).
MAX_POINTS = 1024
#: Most sequences in flight a caller may ask for (over all GPUs): 2^40, far beyond any engine's batch, small enough
#: that the token counts and KV bytes it implies stay finite in float64.
MAX_CONCURRENCY = 2.0**40

FRONTIER_COLUMNS = ("concurrency", "output_tokens_per_s_per_gpu", "tokens_per_s_per_user", "ttft_s",
                    "memory_per_gpu_bytes", "step_time_s", "fits", "tp", "dp", "ep", "pp", "replicas", "offload")


def frontier(model, accelerator: str, gpus: int, precision: str = "fp8", input_tokens: int = 1000,
             output_tokens: int = 1000, concurrency=None, parallelism: Mapping | None = None, *,
             kv_precision: str | None = None, mode: str = "aggregated", scenario: str = "central",
             comm_overlap: bool = False, points: int = 64, implementation: str = "engine",
             scheduler: str = "physics", max_batch_size: int | None = None, max_num_tokens: int | None = None,
             envelope: bool = True, weight_offload: bool | float | None = None, output_tokens_cv: float = 0.0,
             output_tokens_max: int | None = None, output_dataset: str | None = None,
             kv_allocation: str | None = None, speculative_tokens: int = 0, accepted_tokens: float | None = None):
    """The throughput-interactivity frontier (``envelope=False``: every layout and concurrency that fits,
    before the Pareto envelope is taken, for filters on other axes such as TTFT, :mod:`serving_slo`).

    ``concurrency`` None: every valid layout (or those ``parallelism`` allows) is evaluated at
    ``points`` log-spaced concurrencies from one sequence per attention rank up to the most that
    fit, plus its own most-that-fit point, and the Pareto envelope of all of them is returned
    (:func:`serving_layouts.pareto_mask`): no row is beaten on both per-user speed and tokens/s per
    GPU by another, rows run from the most interactive to the highest throughput, each with the
    layout that reaches it (``tp``, ``dp``, ``ep``, ``pp``, ``replicas``). ``concurrency`` an array: one
    row per concurrency with its fastest valid layout; rows that do not fit keep ``fits=False``
    and NaN metrics. Columns: :data:`FRONTIER_COLUMNS` (``offload``: the share of the layer weights streamed from
    host memory). ``max_batch_size``, ``max_num_tokens``, ``weight_offload``, ``output_tokens_cv``,
    ``output_tokens_max``, ``output_dataset``, ``kv_allocation``, ``speculative_tokens``, ``accepted_tokens``: as in
    :func:`estimate`.
    """
    gpus, ctx, c = _setup(model, accelerator, gpus, precision, input_tokens, output_tokens, parallelism,
                          kv_precision, mode, scenario, comm_overlap, implementation, scheduler,
                          (max_batch_size, max_num_tokens), weight_offload,
                          (output_tokens_cv, output_tokens_max, output_dataset), kv_allocation,
                          (speculative_tokens, accepted_tokens))
    checks.boolean("envelope", envelope)
    mc = max_concurrency(ctx, c)
    if mc.max() < 1:
        raise ValueError(_no_fit_message(ctx, gpus, c))
    if concurrency is None:
        checks.integer("points", points, low=2, high=MAX_POINTS)
        lo = float((c["replicas"] * c["dp"] * c["pp"]).min())
        conc = np.unique(np.round(np.geomspace(lo, max(lo, mc.max()), points)))
    else:
        conc = np.atleast_1d(checks.array("concurrency", concurrency, low=1, high=MAX_CONCURRENCY))
        if conc.ndim != 1:
            raise ValueError(f"concurrency={concurrency!r} must be a number or a 1-D array of numbers")
    n, m = len(c["tp"]), len(conc)
    grid = {k: np.repeat(v[:, None], m, axis=1) for k, v in c.items()}
    grid["concurrency"] = np.broadcast_to(conc[None, :], (n, m))
    if concurrency is None:          # every layout's own most-that-fit point is a candidate too
        grid = {k: np.concatenate([v, c[k][:, None] if k != "concurrency" else mc[:, None]], axis=1)
                for k, v in grid.items()}
        m += 1
    r = evaluate(ctx, grid)
    ok = r["fits"] & (grid["concurrency"] >= grid["replicas"] * grid["dp"] * grid["pp"])
    cols = {"concurrency": grid["concurrency"], "output_tokens_per_s_per_gpu": r["output_tokens_per_s_per_gpu"],
            "tokens_per_s_per_user": r["tokens_per_s_per_user"], "ttft_s": r["ttft_s"],
            "memory_per_gpu_bytes": r["memory_per_gpu_bytes"], "step_time_s": r["step_s"],
            **{k: grid[k] for k in ("tp", "dp", "ep", "pp", "replicas", "offload")}}
    cols = {k: np.broadcast_to(v, (n, m)).astype(float) for k, v in cols.items()}
    if concurrency is None:
        # the Pareto envelope over layouts and concurrencies (serving_layouts.pareto_mask)
        i, j = np.nonzero(ok)
        keep = layouts.pareto_mask(cols["tokens_per_s_per_user"][i, j], cols["output_tokens_per_s_per_gpu"][i, j])
        i, j = (i[keep], j[keep]) if envelope else (i, j)
        order = np.lexsort((cols["output_tokens_per_s_per_gpu"][i, j], -cols["tokens_per_s_per_user"][i, j]))
        i, j = i[order], j[order]
        df = pd.DataFrame({k: v[i, j] for k, v in cols.items()})
        df.insert(df.columns.get_loc("step_time_s") + 1, "fits", True)
        return df[list(FRONTIER_COLUMNS)]
    score = np.where(ok, r["output_tokens_per_s_per_gpu"], -np.inf)
    best = np.argmax(score, axis=0)
    at = np.arange(m)
    fits = ok[best, at]
    df = pd.DataFrame({k: np.where(fits, v[best, at], np.nan) for k, v in cols.items()})
    df["concurrency"] = conc
    df.insert(df.columns.get_loc("step_time_s") + 1, "fits", fits)
    return df
