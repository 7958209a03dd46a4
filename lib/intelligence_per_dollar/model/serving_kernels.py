"""The kernels of one serving iteration, timed one stage at a time (vectorised over configurations).

:func:`intelligence_per_dollar.model.inference.evaluate` adds these stages up per layer; the
model and its sources are described in :mod:`intelligence_per_dollar.model.inference`. Every
stage takes the static :class:`Context` of a (model, accelerator, precision, lengths) case and
numpy arrays of the parallelism (``tp``, ``dp``, ``ep``) and of the tokens per attention rank;
it returns seconds per layer (or per step for the host), broadcast over those arrays.

* closed forms: :func:`expected_experts_touched`, :func:`padded_rows_per_expert`,
  :func:`ep_load_imbalance`, :func:`host_time_s`;
* matrix products: :func:`gemm_s` (dense, on the calibrated roofline) and :func:`grouped_gemm_s`
  (pointer-array MoE GEMMs);
* attention: :func:`decode_attention_s` (KV reads or absorbed-MLA FLOPs), :func:`prefill_attention_s`
  (causal flash attention) and :func:`kv_write_s`, joined in :func:`attention_core_s`;
* FFNs: :func:`ffn_s` (dense and shared experts), :func:`moe_experts_s` (touched experts, padded
  tiles, the busiest expert-parallel rank);
* elementwise work and kernel floors: :func:`dense_elementwise_s`, :func:`moe_elementwise_s`;
* communication: :func:`tp_all_reduce_s`, :func:`moe_dispatch_s` (expert-parallel all-to-all or
  the attention-DP gather/scatter) built on :func:`ep_all_to_all_s`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from intelligence_per_dollar.model import architecture, collectives, efficiency, peaks
from intelligence_per_dollar.model import serving_lengths as lengths
from intelligence_per_dollar.sources import checks, hardware, models

__all__ = ["ACTIVATION_BYTES", "HEAD_BYTES", "EMBEDDING_BYTES", "Context", "expected_experts_touched",
           "padded_rows_per_expert", "ep_load_imbalance", "host_time_s", "gemm_s", "grouped_gemm_s", "kv_shards",
           "kv_tokens_per_layer", "attention_extra_bytes", "dense_weight_bytes", "decode_attention_flops_per_token", "decode_attention_s", "prefill_attention_s", "kv_write_s",
           "attention_core_s", "tp_all_reduce_s", "ffn_s", "dense_elementwise_s", "moe_experts_s",
           "ep_all_to_all_s", "moe_dispatch_s", "moe_elementwise_s"]

#: Activations move in BF16 between kernels; expert dispatch in the weights' precision when that
#: is FP8 (DeepEP dispatches FP8, combines BF16).
ACTIVATION_BYTES = 2.0
#: The LM head (output projection) stays in BF16 in FP8/FP4 checkpoints (ModelOpt, DeepSeek-V3).
HEAD_BYTES = 2.0
#: Embedding tables are stored in BF16.
EMBEDDING_BYTES = 2.0


@dataclass(frozen=True)
class Context:
    """What one serving case fixes: model, accelerator, ceilings, precisions, lengths, links and
    the serving assumptions of ``data/assumptions/inference.csv`` (built by ``inference._context``)."""

    s: models.ModelSpec
    acc: hardware.Accelerator
    ceil: efficiency.Ceilings
    precision: str           # precision asked for: the routed experts' storage (and the rest: dense_weight_precision)
    run_precision: str       # tensor-core precision the dense (non-expert) GEMMs run at
    w_bytes: float           # bytes per dense (non-expert) weight value
    kv_bytes_per_token: float
    peak: float
    bf16_peak: float
    scaleup: collectives.Link
    scaleout: collectives.Link
    domain: int
    isl: int
    osl: int
    mode: str
    moe_tile_rows: float     # row tile of the grouped expert GEMMs (moe_tile_rows)
    kernels_per_layer: float
    comm_overlap: bool
    implementation: str = "engine"
    kernel_floor_s: float = 0.0
    moe_kernels_per_layer: float = 0.0
    grouped_gemm_hbm_efficiency: float = 1.0
    grouped_gemm_launch_s: float = 0.0
    scatter_add_rate: float = 0.0      # values/s of an atomic top-k combine; 0: gather-reduce at HBM speed
    expert_skew_cv: float = 0.0
    host_step_s: float = 0.0
    host_per_sequence_s: float = 0.0
    params: Mapping[str, float] = field(default_factory=dict)
    expert_w_bytes: float = 0.0        # routed-expert weight bytes per value (0: ``w_bytes``)
    kv_block_tokens: float = 1.0       # paged KV cache: tokens per block
    expert_weight_only: bool = False   # experts stored narrower than the tensor cores run: W4A16 at BF16
    expert_run_precision: str = ""     # tensor-core precision of the routed experts ("": ``run_precision``)
    expert_peak: float = 0.0           # dense peak at that precision, FLOP/s (0: ``peak``)
    attention_run_precision: str = ""  # tensor-core precision of the attention projections ("": ``run_precision``)
    attention_peak: float = 0.0        # dense peak at that precision, FLOP/s
    attention_w_bytes: float = 0.0     # bytes per attention-projection weight value (0: ``w_bytes``)
    prefill_chunk_tokens: float = np.inf   # largest prompt piece one iteration schedules
    scheduler: str = "physics"         # serving_schedulers.SCHEDULERS
    max_batch_size: int | None = None  # the engine's max running sequences per rank, if set (None: its default)
    max_num_tokens: int | None = None  # the engine's max tokens per iteration, if set (None: its default)
    weight_offload: bool | float | None = False   # serving_offload: None auto, True search, a share, False never
    host_link_efficiency: float = 1.0  # achieved host-to-GPU copy rate over the link's rate
    memory_fraction: float = 0.90      # share of the device memory the engine fills (serving_memory_fraction)
    osl_cv: float = 0.0                # coefficient of variation of the output lengths (serving_lengths)
    osl_max: int | None = None         # the output-length cap (None: none)
    osl_dataset: str | None = None     # a dataset whose own output lengths vary (serving_lengths; None: log-normal)
    dense_tile_rows: float = 1.0       # row tile of the dense GEMMs (dense_tile_rows; 1: no tile padding)
    host_serial: bool = False          # host work runs between GPU iterations, not under them (vllm-v0.5, vllm-v1)
    host_serial_step_s: float = 0.0    # host time per iteration in series with the GPU (a C++ executor's loop)
    kv_on_demand: bool = False         # KV blocks allocated as tokens arrive, not reserved for the whole output
    spec_tokens: int = 0               # draft tokens per sequence and iteration (speculative decoding; 0: none)
    accepted_tokens: float = 1.0       # mean tokens a decoding sequence emits per iteration (1 without drafts)
    scaleup_mesh: bool = False         # the domain's GPUs wired to each other directly, no NVSwitch (scaleup_share)

    @property
    def verify_tokens(self) -> int:
        """Tokens of each decoding sequence the target model runs per iteration: its last token and the
        ``spec_tokens`` drafts it verifies (TensorRT-LLM tech blog 2, "Attention for MTP": "for MTP, there will be
        K+1 input tokens" in the generation phase)."""
        return 1 + self.spec_tokens

    @property
    def decode_position_tokens(self) -> float:
        """Mean tokens generated so far by a running sequence (``OSL / 2`` with one length; serving_lengths)."""
        return lengths.in_flight_position_tokens(self.osl, self.osl_cv, self.osl_max, self.osl_dataset)

    @property
    def reserved_output_tokens(self) -> float:
        """Output tokens of KV cache the memory accounting gives a running sequence
        (:func:`serving_schedulers.kv_on_demand`): where the engine reserves blocks for a request's whole
        output when it admits it, the output it comes to hold (``E[L^2] / E[L]``, ``OSL`` with one length); where
        it allocates blocks as tokens arrive, the output it holds now, on average over a full batch
        (:attr:`decode_position_tokens`, ``OSL / 2`` with one length)."""
        if self.kv_on_demand:
            return self.decode_position_tokens
        return lengths.in_flight_final_tokens(self.osl, self.osl_cv, self.osl_max, self.osl_dataset)

    @property
    def expert_bytes(self) -> float:
        """Bytes per routed-expert weight: the checkpoint's expert precision where it fixes one."""
        return self.expert_w_bytes or self.w_bytes

    @property
    def hbm_bytes_per_s_achieved(self) -> float:
        """Achieved HBM bandwidth, B/s: datasheet x the calibrated ``hbm_fraction``."""
        return self.acc.hbm_bytes_per_s * self.ceil.hbm_fraction

    @property
    def gated(self) -> int:
        """Weight matrices per FFN input side: 3 with a gated (SwiGLU) FFN, else 2."""
        return 3 if self.s.gated_ffn else 2


#: Catalogue fields the serving model needs: the BF16 peak (attention) and a link to time collectives.
_NEEDED_FIELDS = ("bf16_dense_flop_per_s",)
_LINK_FIELDS = ("scaleup_bytes_per_s_bidirectional", "scaleout_bytes_per_s")


def check_catalogue_fields(acc: hardware.Accelerator) -> None:
    """``ValueError`` naming the catalogue figures ``acc`` lacks (Rubin Ultra's are unpublished)."""
    missing = [f for f in _NEEDED_FIELDS if getattr(acc, f) is None]
    if all(getattr(acc, f) is None for f in _LINK_FIELDS):
        missing += list(_LINK_FIELDS)
    if missing:
        usable = [a.id for a in hardware.accelerators().values()
                  if all(getattr(a, f) is not None for f in _NEEDED_FIELDS)
                  and any(getattr(a, f) is not None for f in _LINK_FIELDS)]
        raise ValueError(f"accelerator={acc.id!r} cannot be served by this model: data/hardware/accelerators.csv "
                         f"has no {', '.join(missing)} for it (not published); allowed: {', '.join(usable)}")


def divisors(n: int) -> list[int]:
    """The divisors of ``n`` in ascending order, from its prime factorisation (trial division up
    to sqrt(n): 31,623 steps at most for n <= :data:`serving_context.MAX_GPUS`)."""
    factors: dict[int, int] = {}
    m, p = n, 2
    while p * p <= m:
        while m % p == 0:
            factors[p] = factors.get(p, 0) + 1
            m //= p
        p += 1 if p == 2 else 2
    if m > 1:
        factors[m] = factors.get(m, 0) + 1
    divs = [1]
    for prime, power in factors.items():
        divs = [d * prime ** e for d in divs for e in range(power + 1)]
    return sorted(divs)


# ---------------------------------------------------------------------------------------------
# closed-form pieces
# ---------------------------------------------------------------------------------------------

def expected_experts_touched(tokens, experts: int, top_k: int):
    """Expected distinct experts hit by ``tokens`` tokens routed top-``k`` of ``E`` uniformly.

    ``E (1 - (1 - k/E)^T)``: each expert is missed by one token with probability ``1 - k/E``.
    """
    experts = checks.positive_int("experts", experts)
    top_k = checks.integer("top_k", top_k, low=1, high=experts)
    t = checks.array_at_least("tokens", tokens)
    return experts * (1.0 - np.power(1.0 - top_k / experts, t))


def padded_rows_per_expert(tokens, experts: int, top_k: int, tile_rows: float):
    """Expected rows one expert's grouped-GEMM processes, its last tile padded.

    ``lambda = T k / E`` rows arrive on average; an expert with any rows runs at least one tile
    (``t phi``, ``phi`` the touched fraction); a busy one wastes half a tile on average
    (``lambda + t/2``), blended smoothly by ``(1 - exp(-2 lambda / t))``.
    """
    phi = expected_experts_touched(tokens, experts, top_k) / experts
    lam = np.asarray(tokens, dtype=float) * top_k / experts
    t = checks.positive_number("tile_rows", tile_rows)
    return np.maximum(t * phi, lam + 0.5 * t * (1.0 - np.exp(-2.0 * lam / t)))


def ep_load_imbalance(routed_rows, experts: int, ep, cv: float):
    """Expected busiest-rank load over the mean load of ``ep`` expert-parallel ranks.

    Two sources, added in variance: (i) expert popularity is not uniform: per-expert loads have a
    coefficient of variation ``cv`` across experts (``data/assumptions/inference.csv``
    ``expert_load_cv``; the reason DeepSeek's EPLB and SGLang's large-EP deployment replicate hot
    experts, lmsys.org/blog/2025-05-05-large-scale-ep). A rank holding ``E/ep`` experts sums their
    loads, so its cv is ``cv / sqrt(E/ep)`` (``cv sqrt(ep/E)``). (ii) sampling noise of a finite
    batch: ``R`` routed rows spread over ``ep`` ranks give a multinomial count of mean ``R/ep``
    and cv ``sqrt(ep/R)``. The expected maximum of ``ep`` near-Gaussian loads is
    ``mean (1 + cv_rank sqrt(2 ln ep))`` (extreme-value bound for Gaussians; e.g. Gumbel 1958),
    so

        imbalance = 1 + sqrt(2 ln ep) sqrt(cv^2 ep / E + ep / R).

    With one rank (ep = 1) there is nothing to wait for: 1.
    """
    ep = checks.array_at_least("ep", ep, 1.0)
    r = np.maximum(checks.array_at_least("routed_rows", routed_rows), 1.0)
    var = checks.non_negative_number("cv", cv) ** 2 * ep / checks.positive_int("experts", experts) + ep / r
    return 1.0 + np.sqrt(2.0 * np.log(np.maximum(ep, 1.0)) * var)


def host_time_s(sequences_per_rank, step_s: float, per_sequence_s: float):
    """Host (CPU) time of one serving iteration on one attention rank.

    ``step_s + per_sequence_s x sequences``: a fixed part (scheduler loop, batch metadata,
    CUDA-graph launch) and Python per-request work (bookkeeping, input preparation, sampler output,
    stop checks) that grows with the running batch (vLLM v0.6 blog; SGLang v0.4 blog; constants in
    ``data/assumptions/inference.csv``). Serving engines overlap it with the GPU's previous
    iteration (TensorRT-LLM's overlap scheduler, SGLang's zero-overhead scheduler), so the
    iteration takes ``max(GPU, host)``: only small models at very large batch become host-bound.
    Engines of the vLLM v0.5 generation, and vLLM's V1 engine scheduling synchronously, run it in series
    (:func:`iteration_s`).
    """
    return checks.non_negative_number("step_s", step_s) + checks.non_negative_number(
        "per_sequence_s", per_sequence_s) * checks.array_at_least("sequences_per_rank", sequences_per_rank)


def iteration_s(ctx: Context, gpu_s, host_s):
    """Wall time of one serving iteration from its GPU time and its host time (:func:`host_time_s`).

    An overlap scheduler (TensorRT-LLM's, SGLang's zero-overhead scheduler, vLLM from v0.6: multi-step
    scheduling and asynchronous output processing) prepares iteration ``i + 1`` while the GPU runs ``i``:
    ``max(GPU, host)``. vLLM v0.5 ran them in series: the GPU idled while the engine gathered the last step's
    outputs, scheduled and prepared the next inputs, and while its API server streamed the tokens (vLLM's
    v0.6.0 release blog, blog.vllm.ai/2024/09/05/perf-update.html: on Llama 3 8B and one H100, v0.5.3 spent 33%
    of the time in the API server, 29% scheduling and 38% on the GPU): ``GPU + host`` (``ctx.host_serial``).
    So does vLLM's V1 engine (v0.8 to v0.13) unless ``--async-scheduling`` is set: its engine core schedules,
    prepares inputs and takes the sampled tokens back between GPU iterations, at a far smaller host cost than
    v0.5's (scheduler ``vllm-v1``; GPUStack's A/B of v0.11.0 on one H100, gpt-oss-20b over ShareGPT, measured
    91.33 ms mean TPOT synchronous against 86.81 ms asynchronous).

    TensorRT-LLM's C++ executor (the TensorRT-engine flow, ``trtllm-bench-engine`` and ``trtllm-engine``) overlaps
    its per-sequence work no better than the rest, and leaves its loop between GPU iterations (wait for the decoder,
    hand out tokens, fetch requests, schedule, prepare and enqueue the engine, every layer's kernels and plugins
    launched from the host without CUDA graphs): ``ctx.host_serial_step_s`` (``cpp_executor_layer_s`` per layer)
    is added in series.
    """
    return (gpu_s + host_s if ctx.host_serial else np.maximum(gpu_s, host_s)) + ctx.host_serial_step_s


# ---------------------------------------------------------------------------------------------
# matrix products
# ---------------------------------------------------------------------------------------------

def gemm_s(ctx: Context, m, n, k, groups=1, *, head=False, attention=False, fixed_rows=False):
    """A dense GEMM on the calibrated roofline (:func:`efficiency.gemm_time_s`): weights in the
    storage precision at the run precision's peak, (``attention``) the attention projections in theirs
    (:func:`serving_context.attention_weight_precision`), or (``head``) the BF16 LM head / router.

    The tensor cores compute whole row tiles (:func:`efficiency.padded_rows`, ``dense_tile_rows`` rows, smaller
    autotuned tiles for fewer rows): an engine's iteration carries a row count that changes from one iteration to
    the next, so ``m`` (its mean) pays half a tile on average; a fixed shape (the PyTorch reference,
    ``implementation="pytorch"``, or ``fixed_rows``, a bool or a mask over ``m``: a replayed CUDA graph's captured
    batch) pads to its next whole tile. Only the compute roof sees the padding. Block-scaled FP4 GEMMs combine the
    two roofs as a p-norm with a longer fixed time per kernel (:func:`efficiency.dense_gemm_terms`)."""
    varying = np.logical_not(fixed_rows) & (ctx.implementation != "pytorch")
    tiles = dict(m_tile=ctx.dense_tile_rows, m_varies=varying, small_tiles=True)
    if head:
        return efficiency.gemm_time_s(m, n, k, peak_flop_per_s=ctx.bf16_peak, hbm_bytes_per_s=ctx.acc.hbm_bytes_per_s,
                                      ceil=ctx.ceil, precision="bf16", operand_bytes=HEAD_BYTES,
                                      output_bytes=ACTIVATION_BYTES, groups=groups, **tiles)
    run, peak, w = ((ctx.attention_run_precision, ctx.attention_peak, ctx.attention_w_bytes)
                    if attention and ctx.attention_run_precision else (ctx.run_precision, ctx.peak, ctx.w_bytes))
    norm, kernel_s = efficiency.dense_gemm_terms(run, ctx.ceil)
    return efficiency.gemm_time_s(m, n, k, peak_flop_per_s=peak, hbm_bytes_per_s=ctx.acc.hbm_bytes_per_s,
                                  ceil=ctx.ceil, precision=run, operand_bytes=w, output_bytes=ACTIVATION_BYTES,
                                  groups=groups, overlap_norm=norm, kernel_s=kernel_s, **tiles)


def attention_extra_bytes(ctx: Context) -> float:
    """Bytes one layer's attention projections take beyond ``w_bytes`` per value: they are stored in their own
    precision (:func:`serving_context.attention_weight_precision`); 0 when it is the dense one."""
    return ctx.params["attention"] * ((ctx.attention_w_bytes or ctx.w_bytes) - ctx.w_bytes)


def dense_weight_bytes(ctx: Context) -> float:
    """Bytes of every non-expert transformer-layer weight (embedding and LM head excluded): the attention
    projections in their precision, the rest (dense FFNs, shared experts, norms) in ``w_bytes``."""
    return ctx.params["dense_total"] * ctx.w_bytes + float(ctx.s.layers) * attention_extra_bytes(ctx)


def grouped_gemm_s(ctx: Context, m, n, k, groups):
    """One pointer-array grouped (MoE) GEMM launch: the dense roofline with the weight stream at
    ``grouped_gemm_hbm_efficiency`` of the dense-GEMM rate, compute and stream combined as the
    ``grouped_gemm_overlap_norm`` p-norm rather than the max (DeepGEMM's H800 grouped GEMMs,
    :func:`efficiency.gemm_time_s`), plus a fixed ``grouped_gemm_launch_s`` (setup kernel, scan of the
    group shapes, prologue, tail) instead of the dense ``kernel_overhead_s``.

    Experts a checkpoint stores in a precision the tensor cores cannot multiply (MXFP4 on Hopper)
    run weight-only: dequantised in the kernel's main loop and multiplied with BF16 activations
    (``expert_weight_only``; OpenAI ``triton_kernels`` matmul_ogs, TensorRT-LLM's TRITON MoE backend
    for GPT-OSS on Hopper; Frantar et al. 2024 "MARLIN", arXiv 2408.11743): 4-bit bytes, BF16 FLOP rate.
    NVFP4 experts multiply at the FP8 tensor rate, and FP8 experts on Hopper at ``grouped_fp8_compute_fraction`` of
    it unless DeepGEMM runs them (the DeepSeek family; :func:`efficiency.grouped_peak_flop_per_s`)."""
    run, peak = ("bf16", ctx.bf16_peak) if ctx.expert_weight_only else (ctx.expert_run_precision or ctx.run_precision,
                                                                        ctx.expert_peak or ctx.peak)
    # the DeepSeek family (MLA) ships block-scaled FP8 experts, which engines run through DeepGEMM
    peak = efficiency.grouped_peak_flop_per_s(run, peak, peaks.dense_flop_per_s(ctx.acc, "fp8", fallback=True), ctx.ceil,
                                              deepgemm=architecture.is_mla(ctx.s))
    return efficiency.gemm_time_s(m, n, k, peak_flop_per_s=peak,
                                  hbm_bytes_per_s=ctx.acc.hbm_bytes_per_s * ctx.grouped_gemm_hbm_efficiency,
                                  ceil=ctx.ceil, precision=run, operand_bytes=ctx.expert_bytes,
                                  output_bytes=ACTIVATION_BYTES, groups=groups,
                                  overlap_norm=ctx.ceil.grouped_gemm_overlap_norm, kernel_s=ctx.grouped_gemm_launch_s)


def ffn_s(ctx: Context, hidden, tokens, split, fixed_rows=False):
    """A dense FFN of ``hidden`` units split over ``split`` GPUs: up(+gate) then down projection (``fixed_rows``:
    as in :func:`gemm_s`)."""
    d = ctx.s.d_model
    return (gemm_s(ctx, tokens, (ctx.gated - 1) * hidden / split, d, fixed_rows=fixed_rows)
            + gemm_s(ctx, tokens, d, hidden / split, fixed_rows=fixed_rows))


# ---------------------------------------------------------------------------------------------
# attention
# ---------------------------------------------------------------------------------------------

def kv_tokens_per_layer(ctx: Context, length, *, windowed: bool = True):
    """Mean KV tokens per layer one sequence of ``length`` tokens has a decode step read
    (``windowed``) or the cache reserve for it (``windowed=False``).

    Full-attention layers keep every token; the ``local_attention_layers`` with a window (sliding
    window, Beltagy et al. 2020 "Longformer"; GPT-OSS alternates 128-token windows, OpenAI GPT-OSS
    model card 2025 section 2; Llama 4's 8192-token chunked attention) read at most the window.
    The reservation is for the whole length in every layer: engines size the cache and the batch
    as if all layers were global (trtllm-bench ``tuning.py`` counts ``num_attention_layers x
    kv_heads x head_size`` per token; GUARANTEED_NO_EVICT reserves whole sequences). Both are
    whole pages of ``kv_block_tokens`` (vLLM PagedAttention, Kwon et al. 2023, section 4.1: a
    sequence of ``S`` tokens occupies ``ceil(S / B)`` blocks; TensorRT-LLM ``tokens_per_block`` 32).
    """
    s, blk = ctx.s, ctx.kv_block_tokens
    n = np.ceil(np.asarray(length, float) / blk) * blk
    if not s.local_attention_layers or not windowed:
        return n
    local = np.minimum(n, np.ceil(s.local_attention_window / blk) * blk + blk)
    return (n * (s.layers - s.local_attention_layers) + local * s.local_attention_layers) / s.layers


def kv_shards(ctx: Context, tp):
    """GPUs one sequence's KV cache is split over inside a TP group (MLA: replicated, 1)."""
    if architecture.is_mla(ctx.s):
        return np.ones_like(np.asarray(tp, float))
    return np.minimum(np.asarray(tp, float), ctx.s.kv_heads)


def decode_attention_flops_per_token(ctx: Context, context):
    """Decode attention FLOPs per new token over all layers at ``context`` cached tokens.

    GQA/MHA: ``2 ctx heads (d_qk + d_v)`` per layer. MLA with the up-projections absorbed into
    the query and output (DeepSeek-V2 section 2.1.3): scores over the ``c + r`` latent and the
    context over ``c``: ``2 ctx heads (2 c + r)``.
    """
    s = ctx.s
    ctx_tokens = _attended(ctx, np.asarray(context, float))
    if architecture.is_mla(s):
        per = 2.0 * s.heads * (2 * s.kv_lora_rank + architecture.rope_head_dim(s))
        return s.layers * per * ctx_tokens
    return architecture.attention_flops_per_token(s, np.maximum(ctx_tokens, 1.0), causal=False)


def _attended(ctx: Context, context):
    """Mean tokens a decode query attends to per layer (local layers: at most their window)."""
    s = ctx.s
    if not s.local_attention_layers:
        return context
    local = np.minimum(context, s.local_attention_window)
    return (context * (s.layers - s.local_attention_layers) + local * s.local_attention_layers) / s.layers


def decode_attention_s(ctx: Context, tp, decode_tokens, context, queries=1.0):
    """Decode attention of one layer: each of ``decode_tokens`` sequences reads its KV cache (``context`` tokens)
    once, at the paged decode kernels' HBM rate (``decode_attention_hbm_fraction``: the copy rate on the H200
    family, measured lower for TensorRT-LLM's trtllm-gen kernels on B200), or its FLOPs at the
    flash-attention rate if those bind. ``queries``: query tokens per sequence (``1 + spec_tokens`` when the target
    model verifies drafts: the FLOPs grow with them, the KV cache is still read once)."""
    s = ctx.s
    kv_read = decode_tokens * kv_tokens_per_layer(ctx, context) * ctx.kv_bytes_per_token / s.layers / kv_shards(ctx, tp)
    flop = decode_tokens * queries * decode_attention_flops_per_token(ctx, context) / s.layers / tp
    kv_rate = ctx.acc.hbm_bytes_per_s * ctx.ceil.decode_attention_hbm_fraction
    t_flop = flop / (ctx.bf16_peak * ctx.ceil.attention_fraction() * ctx.ceil.attention_forward_speedup)
    return np.maximum(kv_read / kv_rate, t_flop * efficiency.attention_head_dim_factor(decode_score_head_dim(s), ctx.ceil))


def decode_score_head_dim(s) -> float:
    """FLOPs per attention score over 4 in a decode step: the head dimension (GQA/MHA), or with MLA's
    up-projections absorbed the ``c + r`` latent scores and ``c`` context, ``(2 c + r) / 2``
    (:func:`decode_attention_flops_per_token`)."""
    if architecture.is_mla(s):
        return (2.0 * s.kv_lora_rank + architecture.rope_head_dim(s)) / 2.0
    return architecture.attention_score_head_dim(s)


def prefill_attention_s(ctx: Context, tp, prefill_tokens):
    """Causal flash attention of one layer over ``prefill_tokens`` prompt tokens of length ISL
    (:func:`efficiency.attention_time_s`)."""
    s = ctx.s
    flop = prefill_tokens * architecture.attention_flops_per_token(s, ctx.isl, causal=True) / s.layers / tp
    if s.local_attention_layers:      # a local layer's query sees min(position, window) keys: W - W^2 / (2 ISL)
        w = min(s.local_attention_window, ctx.isl)
        local = architecture.attention_flops_per_token(s, w - w * w / (2.0 * ctx.isl), causal=False)
        full = architecture.attention_flops_per_token(s, ctx.isl, causal=True)
        L, n = s.layers, s.local_attention_layers
        flop = prefill_tokens * (full * (L - n) + local * n) / L / L / tp
    return efficiency.attention_time_s(flop, ctx.isl, bf16_peak_flop_per_s=ctx.bf16_peak, ceil=ctx.ceil,
                                       head_dim=architecture.attention_score_head_dim(s), forward_only=True)


def kv_write_s(ctx: Context, tp, prefill_tokens):
    """Writing the prompt tokens' KV cache of one layer to HBM."""
    s = ctx.s
    return prefill_tokens * ctx.kv_bytes_per_token / s.layers / kv_shards(ctx, tp) / ctx.hbm_bytes_per_s_achieved


def attention_core_s(ctx: Context, tp, decode_tokens, prefill_tokens, context, queries=1.0):
    """The attention core of one layer: decode reads (``queries`` per sequence, :func:`decode_attention_s`),
    prefill attention, KV writes, one kernel floor."""
    return (decode_attention_s(ctx, tp, decode_tokens, context, queries) + prefill_attention_s(ctx, tp, prefill_tokens)
            + kv_write_s(ctx, tp, prefill_tokens) + ctx.kernel_floor_s)


# ---------------------------------------------------------------------------------------------
# elementwise work and kernel floors
# ---------------------------------------------------------------------------------------------

def dense_elementwise_s(ctx: Context, tokens, tp):
    """Norms, activation, RoPE and residuals of a dense layer (about ``10 d + 3 d_ff / tp`` BF16
    values per token, memory-bound) plus ``kernels_per_layer`` kernel floors."""
    s = ctx.s
    ew_bytes = tokens * ACTIVATION_BYTES * (10 * s.d_model + 3 * s.d_ff / tp)
    return ew_bytes / ctx.hbm_bytes_per_s_achieved + ctx.kernels_per_layer * ctx.kernel_floor_s


def moe_elementwise_s(ctx: Context, tokens, routed_tokens=None, expert_split=1.0, tp=1.0):
    """Elementwise work of an MoE layer: norms and residuals of the rank's ``tokens`` (``10 d`` values each), the
    permutation and top-k gather-reduce of the tokens whose expert rows this GPU computes (``2 k d`` values each,
    ``routed_tokens``: the replica's tokens x ``1 / ep`` of the experts, so the rank's own tokens under attention-DP +
    EP, but every token of the replica under expert tensor parallelism, where each GPU holds a slice of every
    expert), the experts' activation function on those rows (the up GEMM's ``(m - 1) f`` outputs read and ``f``
    written, ``m`` = 3 matrices with a gated FFN, each row ``f / expert_split`` wide on this GPU; TensorRT-LLM's
    ``doActivation``, vLLM's and SGLang's ``silu_and_mul``), the same for the shared experts of the rank's tokens
    (split over ``tp``) -- the terms :func:`dense_elementwise_s` counts for a dense FFN -- the atomic scatter-add
    combine where the implementation uses one (PyTorch ``index_add_``), and the floors of the dense and MoE kernels."""
    s = ctx.s
    d, k = s.d_model, s.top_k
    routed = tokens if routed_tokens is None else routed_tokens
    act = ctx.gated * s.expert_d_ff * (k * routed / expert_split + s.shared_experts * tokens / tp)
    ew_bytes = ACTIVATION_BYTES * (10 * d * tokens + 2 * k * d * routed + act)
    combine = routed * k * d / ctx.scatter_add_rate if ctx.scatter_add_rate else 0.0 * tokens
    return (ew_bytes / ctx.hbm_bytes_per_s_achieved + combine
            + (ctx.kernels_per_layer + ctx.moe_kernels_per_layer) * ctx.kernel_floor_s)


# ---------------------------------------------------------------------------------------------
# mixture of experts
# ---------------------------------------------------------------------------------------------

def moe_experts_s(ctx: Context, tokens, tp, dp, ep):
    """The routed experts of one MoE layer: the replica's tokens (all ``dp`` ranks) routed top-k,
    only touched experts read, rows padded to whole tiles, paced by the busiest EP rank."""
    s = ctx.s
    E, k, d = s.experts, s.top_k, s.d_model
    T_rep = tokens * dp
    phi = expected_experts_touched(T_rep, E, k) / E
    rows = padded_rows_per_expert(T_rep, E, k, ctx.moe_tile_rows)     # per expert, all tiles
    local = E / ep                                                # experts per EP rank
    split = tp * dp / ep                                          # GPUs one expert is split over
    straggle = ep_load_imbalance(T_rep * k, E, ep, ctx.expert_skew_cv)
    groups = np.maximum(local * phi, 1e-9)
    m_e = rows * local * straggle / groups
    f = s.expert_d_ff
    return (grouped_gemm_s(ctx, m_e, (ctx.gated - 1) * f / split, d, groups)
            + grouped_gemm_s(ctx, m_e, d, f / split, groups))


def scaleup_share(ctx: Context, group):
    """:func:`collectives.mesh_share` of a collective among ``group`` GPUs of the case's NVLink domain."""
    return collectives.mesh_share(group, ctx.domain, ctx.scaleup_mesh)


def on_scaleup(ctx: Context, group, timed):
    """``timed(link)`` over the domain's NVLink as a collective among ``group`` of its GPUs sees it
    (:func:`collectives.on_shared_link` at :func:`scaleup_share`)."""
    return collectives.on_shared_link(ctx.scaleup, scaleup_share(ctx, group), timed)


def ep_all_to_all_s(ctx: Context, tokens_per_gpu, ep, bytes_per_value, fanout=None):
    """One expert-parallel all-to-all (dispatch or combine) of ``tokens_per_gpu`` tokens routed top-k
    over ``ep`` ranks (``fanout``: the ranks each token goes to, default ``k``).

    Inside the NVLink domain each token goes to the ranks holding its ``k`` experts; across domains
    it crosses the NIC once per *distinct remote domain* it hits and is forwarded over NVLink there
    (DeepEP's NVLink forwarding, DeepSeek-V3 arXiv 2412.19437 section 3.2.2). With ``n`` domains and
    uniform routing a token hits ``(n - 1)(1 - (1 - 1/n)^k)`` remote domains.
    """
    s = ctx.s
    ep = np.asarray(ep, float)
    k = s.top_k if fanout is None else np.asarray(fanout, float)
    p_in = np.minimum(ep, ctx.domain)
    n_dom = np.maximum(ep / p_in, 1.0)
    vec = np.asarray(tokens_per_gpu, float) * s.d_model * bytes_per_value
    in_bytes = vec * k * (p_in - 1) / np.maximum(ep, 1.0) + vec * k * (n_dom - 1) / n_dom * (p_in - 1) / p_in
    remote = architecture.expert_groups_hit(n_dom, k) * (n_dom - 1) / n_dom
    out_bytes = vec * remote
    t_in = np.where(p_in > 1, (p_in - 1) * ctx.scaleup.latency_s
                    + in_bytes / (ctx.scaleup.effective_bytes_per_s * scaleup_share(ctx, p_in)), 0.0)
    t_out = np.where(n_dom > 1, (n_dom - 1) * ctx.scaleout.latency_s + out_bytes / ctx.scaleout.effective_bytes_per_s, 0.0)
    return np.where(ep > 1, np.maximum(t_in, t_out), 0.0)


def moe_dispatch_s(ctx: Context, tokens, tp, dp, ep):
    """Moving tokens to their experts and back in one MoE layer.

    With expert parallelism: a dispatch (in the weights' precision if FP8, else BF16) and a BF16
    combine all-to-all (:func:`ep_all_to_all_s`). With ``ep == 1`` and attention data
    parallelism: gather the replica's tokens and reduce-scatter the outputs over the ``dp`` ranks.
    A hybrid (``1 < ep < tp dp``: each expert split over ``tp dp / ep`` GPUs) sends each routed row
    to every GPU holding a slice of its expert and takes a partial output back from each: the
    all-to-all over the stage's ``tp dp`` GPUs with a fan-out of ``k tp dp / ep``; with ``dp == 1``
    the tokens are already on every GPU of the stage (attention tensor parallelism), so the shards
    compute their rows in place and the layer's tensor-parallel all-reduce combines them: nothing
    to move here (TensorRT-LLM's ``moe_tp_size`` x ``moe_ep_size`` under attention TP).
    """
    d = ctx.s.d_model
    disp_bytes = min(ctx.w_bytes, 1.0) if ctx.precision != "bf16" else ACTIVATION_BYTES
    a2a = (ep_all_to_all_s(ctx, tokens / tp, ep, disp_bytes) + ep_all_to_all_s(ctx, tokens / tp, ep, ACTIVATION_BYTES))
    stage = np.asarray(tp * dp, float)
    hybrid = (ep > 1) & (ep < stage)
    if np.any(hybrid):                 # only a caller's fixed layout is hybrid: the search's candidates skip this
        fan = ctx.s.top_k * stage / np.maximum(ep, 1.0)
        a2a_hybrid = (ep_all_to_all_s(ctx, tokens / tp, stage, disp_bytes, fan)
                      + ep_all_to_all_s(ctx, tokens / tp, stage, ACTIVATION_BYTES, fan))
        a2a = np.where(hybrid, np.where(dp > 1, a2a_hybrid, 0.0), a2a)
    T_rep = tokens * dp
    in_domain = ctx.domain // np.maximum(tp, 1)
    ag = on_scaleup(ctx, np.minimum(dp, in_domain), lambda up: (
        collectives.hierarchical_reduce_scatter_s(T_rep * d * disp_bytes, dp, in_domain, up, ctx.scaleout)
        + collectives.hierarchical_reduce_scatter_s(T_rep * d * ACTIVATION_BYTES, dp, in_domain, up, ctx.scaleout)))
    return np.where(ep > 1, a2a, np.where(dp > 1, ag, 0.0))


# ---------------------------------------------------------------------------------------------
# tensor-parallel communication
# ---------------------------------------------------------------------------------------------

def tp_all_reduce_s(ctx: Context, tokens, tp):
    """Two tensor-parallel all-reduces of the layer's activations (Shoeybi et al. 2019, Megatron-LM): NCCL's ring or
    tree, or in a serving engine (``implementation="engine"``) its one-shot custom all-reduce where that is faster
    (:func:`collectives.one_shot_all_reduce_s`: small messages, decode at low batch); across NVLink domains,
    NCCL's hierarchical all-reduce (:func:`collectives.hierarchical_all_reduce_s`)."""
    b = tokens * ctx.s.d_model * ACTIVATION_BYTES
    group = np.minimum(tp, ctx.domain)
    t = on_scaleup(ctx, group, lambda up: collectives.all_reduce_s(b, group, up))
    if ctx.implementation == "engine":
        t = np.minimum(t, on_scaleup(ctx, group, lambda up: collectives.one_shot_all_reduce_s(b, group, up)))
    # a group over several NVLink domains (a caller's --tp 16 on two 8-GPU nodes): NCCL's hierarchical
    # all-reduce, the cross-domain step over the NICs; the engines' one-shot kernels need NVLink peers
    t = np.where(tp > ctx.domain, collectives.hierarchical_all_reduce_s(b, tp, ctx.domain, ctx.scaleup, ctx.scaleout), t)
    return np.where(tp > 1, 2 * t, 0.0)
