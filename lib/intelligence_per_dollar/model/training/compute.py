"""Kernel times of one transformer layer on one GPU: GEMMs on the calibrated efficiency curves
(:mod:`intelligence_per_dollar.model.efficiency`), the attention core, and the memory-bound
traffic (elementwise kernels, FP8/FP4 casts, MoE token permutation) plus a fixed time per non-GEMM kernel.

FLOPs follow the layer shapes (Narayanan et al. 2021, section 3); the FP4 recipe keeps a share of
the layers in BF16 (NVIDIA 2025, "Pretraining Large Language Models with NVFP4", arXiv
2509.25149, section 4); flash attention's backward is 2.5x its forward (Dao 2023, section 3.1).
"""

from __future__ import annotations

import numpy as np

from intelligence_per_dollar.model import architecture, efficiency, peaks
from intelligence_per_dollar.model.training.context import (ACTIVATION_BYTES, Context, Layout,
                                                             busiest_rank_load)
from intelligence_per_dollar.sources import hardware, models

__all__ = ["ATTENTION_BWD_OVER_FWD", "GROUPED_GEMM_TILE_M", "FA2_OVER_VENDOR", "FA2_NATIVE_UNTIL_YEAR", "FA1_OVER_FA2",
           "FLEX_OVER_VENDOR_BLACKWELL", "attention_span", "grouped_rate_scale", "qkv_projection_gemm_s",
           "recompute_kept_gemm_s",
           "attention_kernel_scale", "per_op_sac_matmuls", "per_op_recompute_s", "gemm_s", "gemm_bf16_s", "attention_gemm_s",
           "dense_ffn_gemm_s", "moe_ffn_gemm_s", "attention_core_s", "lm_head_s", "LOSS_TRAFFIC_BYTES",
           "FUSED_LOSS_TRAFFIC_BYTES", "loss_traffic_bytes_per_entry", "loss_s", "quantize_bytes_per_token",
           "elementwise_s", "memory_bound_s", "UNFUSED_RMSNORM_BYTES", "UNFUSED_ROPE_BYTES",
           "UNFUSED_SWIGLU_BYTES", "UNFUSED_EXTRA_KERNELS", "UNFUSED_ACTIVATION_EXTRA_KERNELS",
           "GATE_UP_SPLIT_BWD_BYTES", "QKV_LAYOUT_COPY_BYTES", "QKV_LAYOUT_COPY_KERNELS", "activation_fused",
           "qkv_layout_copy_bytes_per_token", "unfused_elementwise_bytes_per_token", "permute_s",
           "selective_recompute_s", "NONGEMM_BWD_OVER_FWD", "kernel_floors_s"]

#: Flash-attention backward FLOPs over forward (5 matmuls vs 2; Dao 2023, section 3.1).
ATTENTION_BWD_OVER_FWD = 2.5
#: Tile height of the grouped GEMM kernels: each expert's token count is padded to a multiple of
#: it (CUTLASS/cuBLAS grouped GEMMs on Hopper/Blackwell use 128-row tiles).
GROUPED_GEMM_TILE_M = 128
#: FlashAttention-2's rate over the vendor kernel (cuDNN / FlashAttention-3) on Hopper and later:
#: Shah et al. 2024, "FlashAttention-3", arXiv 2407.08608, abstract and section 4.1 (Figs. 4-6):
#: FA3 is 1.5-2.0x faster than FA2 forward and 1.5-1.75x backward on H100 (BF16, head dim 128),
#: so FA2 runs at about 1/1.75 of it (range 0.5-0.67).
FA2_OVER_VENDOR = 1.0 / 1.75
#: Accelerators released up to this year (Ampere and before) have FA2 as their best kernel.
FA2_NATIVE_UNTIL_YEAR = 2021
#: FlashAttention (v1, Dao et al. 2022, arXiv 2205.14135) over FlashAttention-2 on the same GPU: Dao 2023,
#: "FlashAttention-2", arXiv 2307.08691, abstract: FlashAttention "only reaches 25-40% of the theoretical maximum
#: FLOPs/s" on A100 where FlashAttention-2 reaches 50-73%, "around 2x speedup" (range 0.45-0.6).
FA1_OVER_FA2 = 0.5
#: PyTorch FlexAttention's Triton kernel over the vendor kernel on Blackwell (B200 / GB200 / B300 / GB300): Zadouri et
#: al. 2026, "FlashAttention-4", arXiv 2603.05451, abstract: FA4 is "up to 1.3x" faster than cuDNN 9.13 and 2.1-2.7x
#: faster than Triton on B200 (BF16), so Triton runs at 1.0-1.3 / 2.7-2.1 of cuDNN (0.37-0.62; central 1.15 / 2.4);
#: the PyTorch team's FlexAttention FA4 backend measures the same gap on GB200 inside FlexAttention itself (1.6-3.2x
#: forward, 1.85-2.3x backward over its Triton backend; "FlexAttention + FlashAttention-4: fast and flexible",
#: pytorch.org/?p=46919). Triton's Blackwell kernels do not reach the tensor-memory / 2-CTA pipelines FA4 and cuDNN
#: use. Before Blackwell no ratio was verified here; the kernel keeps FlashAttention-2's rate there.
FLEX_OVER_VENDOR_BLACKWELL = 1.15 / 2.4


def gemm_s(ctx: Context, m, n, k, groups=1, m_tile=1, overlap_norm=float("inf"), rate_scale=1.0):
    """A transformer-layer GEMM at the training precision; under FP4 the recipe's share of layers
    kept out of FP4 (``Stack.fp4_kept_layer_fraction``) runs in ``Stack.fp4_kept_precision``
    (BF16 or FP8), so the time is the mix of both. ``overlap_norm``: as in :func:`efficiency.gemm_time_s`
    (grouped expert GEMMs pass ``grouped_gemm_overlap_norm``). ``rate_scale``: the kernel's compute rate over the
    dense GEMM rate (:func:`grouped_rate_scale`)."""
    t = efficiency.gemm_time_s(m, n, k, peak_flop_per_s=ctx.peak * rate_scale, hbm_bytes_per_s=ctx.acc.hbm_bytes_per_s,
                               ceil=ctx.ceil, precision=ctx.precision, operand_bytes=ctx.op_bytes,
                               output_bytes=ACTIVATION_BYTES, groups=groups, m_tile=m_tile,
                               overlap_norm=overlap_norm)
    f = ctx.stack.fp4_kept_layer_fraction if ctx.precision == "fp4" else 0.0
    if f:
        kept = ctx.stack.fp4_kept_precision
        peak = ctx.bf16_peak if kept == "bf16" else peaks.dense_flop_per_s(ctx.acc, kept)
        t_kept = efficiency.gemm_time_s(m, n, k, peak_flop_per_s=peak, hbm_bytes_per_s=ctx.acc.hbm_bytes_per_s,
                                        ceil=ctx.ceil, precision=kept, operand_bytes=hardware.BYTES_PER_ELEMENT[kept],
                                        output_bytes=ACTIVATION_BYTES, groups=groups, m_tile=m_tile,
                                        overlap_norm=overlap_norm)
        t = (1.0 - f) * t + f * t_kept
    return t


def gemm_bf16_s(ctx: Context, m, n, k, groups=1):
    """A GEMM that stays in BF16 whatever the training precision (LM head, router, unfused attention)."""
    return efficiency.gemm_time_s(m, n, k, peak_flop_per_s=ctx.bf16_peak, hbm_bytes_per_s=ctx.acc.hbm_bytes_per_s,
                                  ceil=ctx.ceil, precision="bf16", operand_bytes=2.0,
                                  output_bytes=ACTIVATION_BYTES, groups=groups)


def attention_gemm_s(ctx: Context, lay: Layout):
    """Forward time of a layer's attention projections, split over TP: with ``Stack.fused_projections`` all of them
    as one ``d x n`` GEMM (Megatron-Core's fused QKV, the output projection's FLOPs with it); without, the four
    linear layers of a multi- or grouped-query block as their own GEMMs (torchtitan's ``wq``, ``wk``, ``wv``,
    ``wo``): queries ``heads x head_dim / tp`` wide, keys and values ``kv_heads x head_dim / tp`` each, the output
    projection ``d_model`` wide over ``heads x head_dim / tp``. The same FLOPs. Multi-head latent attention keeps the
    fused form."""
    s, T, tp = ctx.s, lay.tokens, lay.tp
    if ctx.stack.fused_projections or architecture.is_mla(s):
        attn_n = architecture.params_per_layer(s)["attention"] / s.d_model
        return gemm_s(ctx, T, attn_n / tp, s.d_model)
    hd = architecture.head_dim(s)
    q, kv = s.heads * hd, s.kv_heads * hd
    return (gemm_s(ctx, T, q / tp, s.d_model) + 2 * gemm_s(ctx, T, kv / tp, s.d_model)   # wq; wk and wv
            + gemm_s(ctx, T, s.d_model, q / tp))                                          # wo


def qkv_projection_gemm_s(ctx: Context, lay: Layout, attention_s=None):
    """Forward time of a layer's Q / K / V projections alone: :func:`attention_gemm_s` (``attention_s`` where the
    caller has it) less the output projection (``d_model`` wide over ``heads x head_dim / tp``)."""
    s = ctx.s
    attention_s = attention_gemm_s(ctx, lay) if attention_s is None else attention_s
    out_proj = gemm_s(ctx, lay.tokens, s.d_model, s.heads * architecture.head_dim(s) / lay.tp)
    return np.maximum(attention_s - out_proj, 0.0)


def recompute_kept_gemm_s(ctx: Context, lay: Layout, attention_s):
    """Forward GEMM time a full recompute does not run again because the stack keeps those GEMMs' outputs
    (``Stack.full_recompute_keeps``): the Q / K / V projections (:func:`qkv_projection_gemm_s`), all the attention
    projections (``attention_s``, the layer's :func:`attention_gemm_s`), or none."""
    keeps = ctx.stack.full_recompute_keeps
    if keeps == "qkv":
        return qkv_projection_gemm_s(ctx, lay, attention_s)
    return attention_s if keeps == "attention-projections" else 0.0


def _gated(s: models.ModelSpec) -> int:
    return 3 if s.gated_ffn else 2


def _up_gemms(ctx: Context, s: models.ModelSpec) -> tuple[int, int]:
    """(GEMMs, width multiple of each) of an FFN's input projection: one ``(gated - 1) x d_ff`` wide GEMM with
    ``Stack.fused_projections`` (Megatron-Core's ``linear_fc1``), else a gated FFN's gate and up projections as two
    (torchtitan's ``w1`` and ``w3``)."""
    n = _gated(s) - 1
    return (1, n) if ctx.stack.fused_projections else (n, 1)


def dense_ffn_gemm_s(ctx: Context, lay: Layout):
    """Forward time of a dense FFN (FC1, gated or not, as :func:`_up_gemms` splits it, and FC2, split over TP);
    0 without dense layers."""
    s, T, tp = ctx.s, lay.tokens, lay.tp
    if s.layers == architecture.moe_layers(s):
        return 0.0
    n, w = _up_gemms(ctx, s)
    return n * gemm_s(ctx, T, w * s.d_ff / tp, s.d_model) + gemm_s(ctx, T, s.d_model, s.d_ff / tp)


def moe_ffn_gemm_s(ctx: Context, lay: Layout, m_tile: int = GROUPED_GEMM_TILE_M):
    """Forward time of a MoE FFN: the EP rank's local experts as one grouped GEMM (Megatron-Core
    TEGroupedMLP), the shared experts split over TP, and the router (BF16). Expert tensor
    parallelism (:func:`.memory.params_per_gpu`) is 1 where ``ep > 1``, so the tokens of the whole TP x CP
    group reach the EP rank: tokens per local expert = T/tp x ep x top_k / experts (balanced); where
    ``ep == 1`` the experts are split over TP like a dense FFN, so each GPU runs all T tokens of its TP group
    (T/tp x tp) through ``1/tp`` of each expert's width. Times the busiest rank's load factor; each
    expert's rows are padded to ``m_tile`` rows (the tile height); compute and weight stream combine
    as the ``grouped_gemm_overlap_norm`` p-norm (DeepGEMM's grouped GEMMs). 0 for a dense model."""
    s, T, tp, ep = ctx.s, lay.tokens, lay.tp, lay.ep
    if not architecture.moe_layers(s):
        return 0.0
    d = s.d_model
    n, w = _up_gemms(ctx, s)
    local_experts = s.experts / ep
    te = T / tp * ep * lay.etp * s.top_k / s.experts * busiest_rank_load(ctx, lay)
    f = s.expert_d_ff / lay.etp
    p = ctx.ceil.grouped_gemm_overlap_norm        # grouped kernels: compute and stream overlap less
    r = grouped_rate_scale(ctx)                   # the grouped kernel's rate over the dense one
    t = (n * gemm_s(ctx, te, w * f, d, local_experts, m_tile, p, r)
         + gemm_s(ctx, te, d, f, local_experts, m_tile, p, r))
    t_router = gemm_bf16_s(ctx, T / tp, s.experts, d)  # gating logits (BF16/FP32, never FP8)
    if s.shared_experts:
        fs = s.shared_experts * s.expert_d_ff
        t = t + n * gemm_s(ctx, T, w * fs / tp, d) + gemm_s(ctx, T, d, fs / tp)
    return t + t_router


def grouped_rate_scale(ctx: Context) -> float:
    """Compute rate of the stack's grouped expert GEMMs over the dense GEMM rate at the training precision:
    ``torch_grouped_mm_fraction`` (data/efficiency/ceilings.csv) where the experts run PyTorch's BF16
    ``torch._grouped_mm`` (``Stack.grouped_gemm_kernel`` ``"torch"``): 1 on Hopper (the SM90 CUTLASS kernel times 0.71
    of H200's peak, pytorch/pytorch PR 156203), 0.53 on Blackwell (the torchao MoE-training README's B200 forward and
    backward, 0.71-0.86 PFLOP/s against a 1.49 PFLOP/s dense rate). Else 1: Transformer Engine's grouped linear
    layers and the low-precision grouped kernels keep the dense rate."""
    if ctx.stack.grouped_gemm_kernel == "torch" and ctx.precision == "bf16":
        return ctx.ceil.torch_grouped_mm_fraction
    return 1.0


def attention_span(ctx: Context):
    """Tokens a causal flash-attention kernel spans per query: the sequence, or the packed documents' length where
    the run masks attention to each document (``Context.document_tokens``; NeMo's packed fine-tuning sequences with
    ``cu_seqlens``, document masking), whichever is shorter. A document of ``l`` tokens costs ``l^2 / 2`` scores, so a
    sequence of documents costs ``sum(l_i^2) / 2 = S E[l^2] / (2 E[l])``: the causal cost of one sequence of
    ``E[l^2] / E[l]`` tokens, the token-weighted mean length ``document_tokens`` stands for (Dao 2023,
    "FlashAttention-2", arXiv 2307.08691, section 3.1: the kernel skips the blocks the mask zeroes; varlen kernels
    run each document as its own sequence)."""
    seq = float(ctx.seq_len)
    return min(seq, ctx.document_tokens) if ctx.document_tokens else seq


def attention_core_s(ctx: Context, lay: Layout):
    """Forward and backward time of the attention core (softmax(Q K^T) V) of one layer.

    Flash attention: each kernel sees the local query chunk (``seq / cp``; the ring runs ``cp``
    kernels of ``seq / cp`` queries each), so its efficiency follows ``seq / cp``, plus one forward
    and two backward kernel launches per ring step. Packed documents with attention masked to each one
    (:func:`attention_span`) shorten the span: the FLOPs follow the documents' length, and so does the kernel's
    efficiency where a document is shorter than the query chunk (a varlen kernel's tiles stop at the document's
    end). Unfused (Megatron 2021-22): batched BF16 GEMMs ``Q K^T`` and ``P V`` over ``microbatch x heads / tp``,
    backward twice the forward; they compute the whole masked square whatever the documents."""
    s, ceil, T, tp, cp = ctx.s, ctx.ceil, lay.tokens, lay.tp, lay.cp
    seq = ctx.seq_len
    if ctx.stack.flash_attention:
        span = attention_span(ctx)
        attn_fwd_flop = architecture.attention_flops_per_token(s, span, causal=True) / s.layers * T / tp
        t_fb = efficiency.attention_time_s(attn_fwd_flop * (1 + ATTENTION_BWD_OVER_FWD), np.minimum(span, seq / cp),
                                           bf16_peak_flop_per_s=ctx.bf16_peak, ceil=ceil,
                                           head_dim=architecture.attention_score_head_dim(s))
        t_fb = t_fb / attention_kernel_scale(ctx)
        t_fb = t_fb + 3 * cp * ceil.kernel_overhead_s
        t_f = t_fb / (1 + ATTENTION_BWD_OVER_FWD)
        return t_f, t_fb - t_f
    bmm = lay.microbatch * s.heads / tp
    hd = architecture.head_dim(s)
    dqk = hd + architecture.rope_head_dim(s)
    t_f = gemm_bf16_s(ctx, seq / cp, seq, dqk, bmm) + gemm_bf16_s(ctx, seq / cp, hd, seq, bmm)
    return t_f, 2 * t_f


def attention_kernel_scale(ctx: Context) -> float:
    """Rate of the stack's flash-attention kernel over the catalogue ceiling's (measured with the
    vendor kernel): :data:`FA2_OVER_VENDOR` for FlashAttention-2 on an accelerator after Ampere
    (``year > FA2_NATIVE_UNTIL_YEAR``), else 1; FlashAttention (v1) at :data:`FA1_OVER_FA2` of that; FlexAttention's
    Triton kernel at :data:`FLEX_OVER_VENDOR_BLACKWELL` on Blackwell (an accelerator with FP4 tensor cores), at
    FlashAttention-2's rate before it."""
    kernel = ctx.stack.attention_kernel
    fa2 = FA2_OVER_VENDOR if ctx.acc.year > FA2_NATIVE_UNTIL_YEAR else 1.0
    if kernel == "flex":
        return FLEX_OVER_VENDOR_BLACKWELL if ctx.acc.supports("fp4") else fa2
    if kernel == "fa2":
        return fa2
    if kernel == "fa1":
        return FA1_OVER_FA2 * fa2
    return 1.0


def per_op_sac_matmuls(s: models.ModelSpec, moe: bool) -> tuple[float, float]:
    """torchtitan's per-op selective activation checkpointing (``torchtitan/models/llama3/
    parallelize_llama.py`` ``_custom_policy``: "save every other mm"): the layer's matmuls in
    order (wq, wk, wv, wo, then w1, w3, w2 of a gated FFN or w1, w2) alternate saved (1st, 3rd,
    ...) and recomputed. Returns (share of the layer's matmul FLOPs recomputed, elements per token
    of the saved matmul outputs).

    A MoE layer's routed experts run as grouped GEMMs (``torch._grouped_mm``: pytorch/torchtitan
    ``torchtitan/models/gpt_oss/model/moe.py`` ``_run_experts_grouped_mm``, and the common MoE's
    ``GroupedExperts``), an operator the save list does not name (``_op_sac_save_list`` of
    ``torchtitan/models/gpt_oss/infra/parallelize.py`` @096ce87: ``aten.mm``, the SDPA and flex-attention kernels,
    ``reduce_scatter_tensor``, ``all_to_all_single``, ``max``; not ``aten._grouped_mm``), so every routed copy's
    GEMMs run again in backward and none of their outputs is kept. Its shared experts are plain linear layers
    (``aten.mm``) and continue the alternation after the attention's four."""
    d, hd = s.d_model, architecture.head_dim(s)
    hq, hkv = s.heads * hd, s.kv_heads * hd
    f, copies = (s.expert_d_ff, s.shared_experts) if moe else (s.d_ff, 1)
    # (output width, FLOPs per token / 2) of each matmul, in call order
    mms = [(hq, d * hq), (hkv, d * hkv), (hkv, d * hkv), (d, hq * d)]
    ffn = [(f, d * f), (f, d * f), (d, f * d)] if s.gated_ffn else [(f, d * f), (d, f * d)]
    mms += [(w * copies, fl * copies) for w, fl in ffn if copies]
    routed = s.top_k * sum(fl for _, fl in ffn) if moe else 0.0     # grouped GEMMs: recomputed, never saved
    recomputed = sum(fl for i, (_, fl) in enumerate(mms) if i % 2 == 1) + routed
    saved_out = sum(w for i, (w, _) in enumerate(mms) if i % 2 == 0)
    return recomputed / (sum(fl for _, fl in mms) + routed), float(saved_out)


def per_op_recompute_s(ctx: Context, lay: Layout, gemm_f, mem_f, moe: bool):
    """Time per-op selective AC adds per layer (``Stack.selective_recompute == "per-op"`` and the
    selective mode), as (matmul part, memory-bound part): the recomputed share of the forward
    matmuls (:func:`per_op_sac_matmuls`) and every elementwise kernel's forward again; 0 otherwise."""
    if ctx.stack.selective_recompute != "per-op":
        return 0.0, 0.0
    share, _ = per_op_sac_matmuls(ctx.s, moe)
    on = lay.recompute == 1
    return on * share * gemm_f, on * mem_f


#: HBM bytes the cross entropy moves per vocabulary entry per token (its logits on this GPU), forward and backward
#: together, by ``Stack.loss`` (:data:`~.stack.LOSS_KINDS`); BF16 2 bytes, fp32 4; R = read, W = write:
#:
#: * ``"megatron"``, Megatron-Core's unfused vocab-parallel cross entropy (``megatron/core/tensor_parallel/
#:   cross_entropy.py`` ``_VocabParallelCrossEntropy``; Megatron-LM's default, ``--cross-entropy-loss-fusion`` off;
#:   nanotron's ``_ShardedCrossEntropy`` is the same chain), counted kernel by kernel: forward the fp32 cast
#:   (R2 W4), max (R4), in-place subtract of the max (R4 W4), in-place exp (R4 W4), row sum (R4), in-place divide
#:   by it (R4 W4) = 38; backward the in-place scale by the loss gradient (R4 W4) and autograd's cast of the fp32
#:   gradient back to the BF16 logits' dtype (R4 W2) = 14. 52 in all.
#: * ``"megatron-fused"``, its compiled fusion (``megatron/core/fusions/fused_cross_entropy.py``,
#:   ``cross_entropy_fusion_impl="native"``, the default of ``cross_entropy_loss_fusion`` in NeMo 2's ``GPTConfig``
#:   and of Megatron-LM's ``--cross-entropy-loss-fusion``): cast and max in one kernel (R2 W4), subtract and exp in
#:   place (R4 W4), row sum (R4), divide (R4 W4); backward the in-place scale (R4 W4) and the cast to BF16 (R4 W2). 40.
#: * ``"torch-fp32"``, ``F.cross_entropy`` on logits upcast to fp32 (torchtitan's eager loss): the casts in and out
#:   (R2 W4, R4 W2) around PyTorch's log-softmax and NLL loss, whose forward and backward Liger-Kernel's benchmark
#:   times on an H100 NVL at 16,384 tokens x 131,072 entries (``data/efficiency/cross_entropy_h100nvl.csv``): 10.3 ms
#:   forward, 32.5 ms in all, 16.5 and 52 bytes per entry at the catalogue's effective HBM rate. The forward matches
#:   the count of ``cunn_SoftMaxForward`` (a max pass, a sum pass, a read-and-write: R12 W4 = 16); the backward runs
#:   slower than its count (a dense zero gradient, W4, and ``cunn_SoftMaxBackward``, R12 W4), so the measured time is
#:   kept. 12 + 52 = 64.
#: * ``"torch-bf16"``, the same kernels on BF16 logits (NeMo AutoModel's ``MaskedCrossEntropy``, ``fp32_upcast:
#:   false``): no casts, half the bytes, 26.
LOSS_TRAFFIC_BYTES = {"megatron": 52.0, "megatron-fused": 40.0, "torch-fp32": 64.0, "torch-bf16": 26.0}
#: The same for a single-pass fused cross entropy (``Stack.fused_cross_entropy``): Transformer Engine's Triton kernels
#: (``transformer_engine/pytorch/triton/cross_entropy.py``: ``online_softmax_kernel`` reads the BF16 logits once for
#: the row max and sum; ``cross_entropy_backward_kernel`` reads them again and writes the gradient in place: R4 W2 = 6
#: counted), flash-attn's and apex's fused cross entropy and llm.c's fused classifier, the same two passes.
#: Liger-Kernel's kernel of that design (``data/efficiency/cross_entropy_h100nvl.csv``: 12.3 ms for 16,384 x 131,072
#: fp32 logits, 19.7 bytes per entry where its count is 12) runs 1.64x its count; on BF16 logits that is 10.
FUSED_LOSS_TRAFFIC_BYTES = 10.0


def loss_traffic_bytes_per_entry(stack) -> float:
    """HBM bytes per vocabulary entry per token the loss moves under ``stack``, forward and backward
    (:data:`FUSED_LOSS_TRAFFIC_BYTES` with the fused cross entropy, else :data:`LOSS_TRAFFIC_BYTES` of
    ``Stack.loss``)."""
    if stack.fused_cross_entropy:
        return FUSED_LOSS_TRAFFIC_BYTES
    return LOSS_TRAFFIC_BYTES[stack.loss]


def loss_s(ctx: Context, lay: Layout):
    """Time of the cross entropy's memory-bound kernels over one micro-batch's logits on this GPU (``vocab / tp``
    entries per token, :func:`loss_traffic_bytes_per_entry`), forward and backward, at the HBM rate the
    elementwise kernels reach. A small-width model with a large vocabulary (Llama 3's 128k entries at
    d_model 2,048) spends as long here as in its LM-head GEMMs."""
    entries = lay.tokens * ctx.s.vocab / lay.tp
    return entries * loss_traffic_bytes_per_entry(ctx.stack) / ctx.hbm_effective_bytes_per_s


def lm_head_s(ctx: Context, lay: Layout):
    """LM head and loss of one micro-batch: the BF16 logits GEMM forward + 2x backward, and the cross entropy's
    traffic over the logits (:func:`loss_s`)."""
    return 3 * gemm_bf16_s(ctx, lay.tokens, ctx.s.vocab / lay.tp, ctx.s.d_model) + loss_s(ctx, lay)


def quantize_bytes_per_token(s: models.ModelSpec, moe: bool, q: float,
                             amax_pass: bool = False) -> tuple[float, float]:
    """HBM bytes per token of one layer moved by the casts to FP8/FP4 (forward, backward).

    Every low-precision GEMM input is read in BF16 (2 bytes) and written twice in ``q`` bytes (the
    row-wise copy for this GEMM and the column-wise / transposed copy for the weight gradient:
    Transformer Engine ``Float8Tensor`` / ``MXFP8Tensor``; Micikevicius et al. 2022, "FP8 Formats
    for Deep Learning", section 4: per-tensor scaled casts around each GEMM). Backward casts each
    output gradient the same way. Weights are cast once per step and cached across micro-batches
    (negligible). Attention's core products, the router and the LM head stay BF16 and pay nothing.
    ``amax_pass``: per-tensor current scaling reads each input once more, for its amax, before the
    cast (``Stack.fp8_current_scaling``): ``2 + 2 + 2q`` bytes per element instead of ``2 + 2q``.
    """
    d, hd = s.d_model, architecture.head_dim(s)
    hq = s.heads * hd
    per = 2.0 + 2.0 * q + (2.0 if amax_pass else 0.0)
    kv = 2 * s.kv_heads * hd if not architecture.is_mla(s) else s.heads * 2 * hd
    gated = 2 if s.gated_ffn else 1
    attn_in, attn_out = d + hq, (hq + kv) + d         # QKV and proj inputs / output gradients
    if moe:
        n_exp = s.top_k + s.shared_experts
        f = s.expert_d_ff
        ffn_in, ffn_out = n_exp * (d + f), n_exp * (gated * f + d)
    else:
        f = s.d_ff
        ffn_in, ffn_out = d + f, gated * f + d
    return per * (attn_in + ffn_in), per * (attn_out + ffn_out)


#: Extra HBM bytes per element, (forward, backward), that PyTorch eager's unfused elementwise chains move over one
#: fused kernel (``Stack.fused_elementwise`` False), counted op by op from torchtitan's Llama block
#: (``torchtitan/models/norms.py`` ``RMSNorm``, ``torchtitan/models/llama/model.py`` ``apply_rotary_emb`` and
#: ``FeedForward``; BF16 activations 2 bytes, fp32 4, complex64 4 per real element) and the autograd backward of
#: each op:
#:
#: * RMSNorm ``(x.float() * rsqrt(x.float().pow(2).mean(-1) + eps)).type_as(x) * w``: forward 6 (cast up) + 8 (pow)
#:   + 4 (mean) + 8 (scale) + 6 (cast down) + 4 (weight) = 36 against a fused kernel's 4 (read, write); backward
#:   12 (weight: grad and dgamma) + 6 + 24 (scale: both inputs' grads) + 4 (mean) + 28 (pow) + 12 (sum of the two
#:   paths) + 6 = 92 against 6.
#: * rotary embedding, ``view_as_complex(xq.float()) * freqs_cis`` then ``type_as``: forward 6 + 8 + 6 = 20
#:   against 4; backward the same chain reversed, 20 against 4. Per element of q and k.
#: * SwiGLU ``silu(a) * b``: forward 4 + 6 = 10 against 6 (read both, write one); backward 6 + 6 (the product's two
#:   grads) + 6 (silu's) = 18 against 10. Per element of the FFN hidden width.
UNFUSED_RMSNORM_BYTES = (32.0, 86.0)
UNFUSED_ROPE_BYTES = (16.0, 16.0)
UNFUSED_SWIGLU_BYTES = (4.0, 8.0)
#: Kernels the same eager block launches per forward beyond the fused one's: each RMSNorm 8 (cast, pow, mean, add,
#: rsqrt, scale, cast, weight) for 1, two norms; the rotary embedding 3 for q and 3 for k (cast, complex multiply,
#: cast) for 2; SwiGLU 2 for 1. The backward launches :data:`NONGEMM_BWD_OVER_FWD` times as many.
UNFUSED_EXTRA_KERNELS = 2 * 7 + 4 + 1
#: Of :data:`UNFUSED_EXTRA_KERNELS`, the activation's: SwiGLU's 2 kernels (``silu``, ``mul``) for 1.
UNFUSED_ACTIVATION_EXTRA_KERNELS = 1
#: HBM bytes per element of the FFN width that the backward of an eager activation on a merged gate/up output adds
#: (``Stack.fused_projections`` with an unfused activation): the forward's ``torch.split`` (or ``chunk``) is a view,
#: but its autograd backward concatenates the two gradient halves into one buffer for the merged projection's
#: dgrad and wgrad GEMMs (reads 2 + 2, writes 4), where a fused SwiGLU backward writes them into it directly
#: (Megatron-Core's ``bias_swiglu_impl``) and separate projections need no buffer (torchtitan's ``w1`` / ``w3``).
GATE_UP_SPLIT_BWD_BYTES = 8.0
#: HBM bytes per element of the local q and of the local k (and v) width, (forward, backward), that nanotron's
#: attention layout copies move (``Stack.qkv_layout_copies``; ``CausalSelfAttention.forward`` in
#: ``src/nanotron/models/llama.py``), BF16 read + write each:
#:
#: * forward, q: its ``transpose(0, 1).contiguous()`` out of the fused QKV output, 4.
#: * forward, k and v (each, per element of the k width): the same copy, 4 + 4; ``torch.cat`` of the two into
#:   ``[2, batch, seq, heads, head_dim]``, 4 + 4; ``permute(1, 2, 0, 3, 4).contiguous()`` for flash-attn's rotary
#:   kernel, 4 + 4: 24.
#: * backward: the ``torch.split`` of the fused output concatenates the q, k and v gradients into one buffer, 4 per
#:   element of q and 8 per element of the k width (k and v); the copies' own backwards are views.
#:
#: The rotary kernel itself (in place on q and k) is the fused rotary embedding every stack runs.
QKV_LAYOUT_COPY_BYTES = {"q": (4.0, 4.0), "kv": (24.0, 8.0)}
#: Kernels those copies launch per forward: three ``contiguous`` copies, the ``cat`` and the packed ``permute``.
QKV_LAYOUT_COPY_KERNELS = 5


def activation_fused(stack) -> bool:
    """Whether the gated FFN's activation runs as one fused kernel under ``stack``: ``Stack.fused_activation``, or
    ``Stack.fused_elementwise`` where that is None."""
    return stack.fused_elementwise if stack.fused_activation is None else bool(stack.fused_activation)


def unfused_elementwise_bytes_per_token(s: models.ModelSpec, moe: bool, tp, sequence_parallel: bool,
                                        norms_and_rope: bool = True, activation: bool = True,
                                        merged_gate_up: bool = False):
    """Extra HBM bytes per token of one layer on one GPU, (forward, backward), that running its elementwise chains
    unfused in PyTorch eager adds (:data:`UNFUSED_RMSNORM_BYTES` and its siblings): a gated-FFN (Llama-family) block
    has two RMSNorms over ``d_model`` (split over TP with sequence parallelism; MLA adds those of its latent
    ranks), the rotary embedding of q and k (split over TP; MLA rotates only its ``qk_rope_head_dim`` part), and
    the SwiGLU over the FFN width (each routed and shared expert's in a MoE layer; split over TP). A GPT-style
    block (LayerNorm and GELU, each one native kernel in eager PyTorch; learned or ALiBi positions) adds none.
    ``norms_and_rope`` / ``activation``: which chains run unfused (nanotron: the activation only,
    ``Stack.fused_activation``); ``merged_gate_up``: the unfused activation splits one merged gate/up output, whose
    backward adds :data:`GATE_UP_SPLIT_BWD_BYTES` per element of the FFN width."""
    if not s.gated_ffn:
        return 0.0, 0.0
    d, hd = s.d_model, architecture.head_dim(s)
    norm = 2.0 * d / (tp if sequence_parallel else 1)
    if architecture.is_mla(s):
        r = architecture.rope_head_dim(s)
        norm = norm + ((s.q_lora_rank or 0) + s.kv_lora_rank) / tp
        rope = s.heads * r / tp + r
    else:
        rope = (s.heads + s.kv_heads) * hd / tp
    ffn = ((s.top_k + s.shared_experts) * s.expert_d_ff if moe else s.d_ff) / tp
    nr, act = float(norms_and_rope), float(activation)
    split = (0.0, GATE_UP_SPLIT_BWD_BYTES if merged_gate_up else 0.0)
    return tuple(nr * (norm * nb + rope * rb) + act * ffn * (fb + sb) for nb, rb, fb, sb in
                 zip(UNFUSED_RMSNORM_BYTES, UNFUSED_ROPE_BYTES, UNFUSED_SWIGLU_BYTES, split))


def qkv_layout_copy_bytes_per_token(s: models.ModelSpec, tp):
    """HBM bytes per token of one layer on one GPU, (forward, backward), of nanotron's attention layout copies
    (``Stack.qkv_layout_copies``, :data:`QKV_LAYOUT_COPY_BYTES`) over the local q width ``heads x head_dim / tp``
    and the local k width ``kv_heads x head_dim / tp``; 0 for multi-head latent attention, which nanotron does not
    implement this way."""
    if architecture.is_mla(s):
        return 0.0, 0.0
    hd = architecture.head_dim(s)
    q, kv = s.heads * hd / tp, s.kv_heads * hd / tp
    return tuple(q * qb + kv * kb for qb, kb in zip(QKV_LAYOUT_COPY_BYTES["q"], QKV_LAYOUT_COPY_BYTES["kv"]))


def elementwise_s(ctx: Context, lay: Layout, bytes_per_token):
    """Forward time of the elementwise kernels moving ``bytes_per_token`` per token through HBM
    (the stored activations, times the ceiling's traffic multiple)."""
    return lay.tokens * bytes_per_token * ctx.ceil.elementwise_traffic_fwd / ctx.hbm_effective_bytes_per_s


def _quantize_s(ctx: Context, lay: Layout, moe: bool):
    """Forward and backward time of the FP8/FP4 casts of one layer per GPU (0 in BF16)."""
    if not ctx.low_precision:
        return 0.0, 0.0
    hbm = ctx.hbm_effective_bytes_per_s
    cs = ctx.stack.fp8_current_scaling   # FP8 casts only: NVFP4 keeps its own recipe
    qf, qb = quantize_bytes_per_token(ctx.s, moe, ctx.op_bytes, amax_pass=cs and ctx.precision == "fp8")
    if ctx.precision != "fp4":
        return lay.tokens * qf / lay.tp / hbm, lay.tokens * qb / lay.tp / hbm
    f = ctx.stack.fp4_kept_layer_fraction
    share = 1.0 - f          # layers kept in BF16 cast nothing; kept in FP8, they cast to 1 byte
    if ctx.stack.fp4_kept_precision == "fp8":
        kf, kb = quantize_bytes_per_token(ctx.s, moe, hardware.BYTES_PER_ELEMENT["fp8"], amax_pass=cs)
        return ((share * qf + f * kf) * lay.tokens / lay.tp / hbm, (share * qb + f * kb) * lay.tokens / lay.tp / hbm)
    return share * lay.tokens * qf / lay.tp / hbm, share * lay.tokens * qb / lay.tp / hbm


#: Passes over the routed rows a dispatcher makes to group what it receives by local expert and to restore the
#: order before the combine (``Stack.moe_expert_sort``): a sort and an unsort, each reading and writing the rows.
EXPERT_SORT_PASSES = 2


def permute_s(ctx: Context, lay: Layout):
    """MoE token permutation, forward: gather ``top_k`` copies of each token before dispatch and
    scatter them back after combine (read d, write top_k d; and the reverse); 0 for a dense model.

    Where a rank holds more than one expert and the dispatcher groups the rows it receives by local expert in a
    pass of its own (``Stack.moe_expert_sort``), :data:`EXPERT_SORT_PASSES` more passes over the ``top_k`` rows
    of each token, each a read and a write: Megatron-Core's all-to-all dispatcher sorts the received chunks by
    local expert after the dispatch and back before the combine (``megatron/core/transformer/moe/
    token_dispatcher.py``, ``MoEAlltoAllTokenDispatcher``: ``sort_chunks_by_idxs`` when ``num_local_experts > 1``,
    fused or not by ``moe_permute_fusion``), and its flex dispatcher permutes DeepEP's output by local expert
    and unpermutes it before the combine. HybridEP's dispatch writes the rows grouped per expert (no pass)."""
    s = ctx.s
    if not architecture.moe_layers(s):
        return 0.0
    row_bytes = s.d_model * ACTIVATION_BYTES
    gather = (1 + s.top_k) * row_bytes * 2                        # read d, write k d; and the reverse
    local_experts = s.experts / np.maximum(lay.ep, 1.0)
    sort = np.where(ctx.stack.moe_expert_sort & (lay.ep > 1) & (local_experts > 1),
                    EXPERT_SORT_PASSES * 2 * s.top_k * row_bytes, 0.0)   # each pass reads and writes k rows
    return lay.tokens / lay.tp * (gather + sort) * busiest_rank_load(ctx, lay) / ctx.hbm_effective_bytes_per_s


#: Non-GEMM kernels a layer's backward launches per forward one (each norm's dgrad and dgamma
#: reduction, each elementwise kernel's backward, the residual-gradient adds).
NONGEMM_BWD_OVER_FWD = 2.0


def kernel_floors_s(ctx: Context, moe: bool) -> tuple[float, float]:
    """Forward and backward time the layer's non-GEMM kernels add beyond their byte-timed traffic: a
    fixed ``ctx.kernel_floor_s`` each (launch, one short wave, tail, dependency wait; measured on the
    project's H200 in a CUDA-graph replay, ``data/assumptions/inference.csv`` ``kernel_floor_s``), added
    to the traffic as the serving model does (:mod:`..serving_kernels`). Counts per forward:
    ``ctx.nongemm_kernels`` (``data/assumptions/training.csv``); a MoE layer adds
    ``ctx.moe_nongemm_kernels`` less the dense FFN's activation when it has no shared expert (the experts'
    weighted activation replaces it); an eager stack's unfused Llama-family block :data:`UNFUSED_EXTRA_KERNELS`
    more (the activation's :data:`UNFUSED_ACTIVATION_EXTRA_KERNELS` alone where only it is unfused,
    ``Stack.fused_activation``), nanotron's attention layout copies :data:`QKV_LAYOUT_COPY_KERNELS`. The backward
    launches :data:`NONGEMM_BWD_OVER_FWD` times as many.
    GEMM and flash-attention launches are timed with those kernels (``kernel_overhead_s``). It matters
    where a micro-batch is small (a few thousand tokens per GPU: strong scaling, TP x CP groups)."""
    n, st = ctx.nongemm_kernels, ctx.stack
    if ctx.s.gated_ffn:
        # the norms' and the rotary embedding's extra kernels where they run eager, the activation's where it does
        n = (n + (0 if st.fused_elementwise else UNFUSED_EXTRA_KERNELS - UNFUSED_ACTIVATION_EXTRA_KERNELS)
             + (0 if activation_fused(st) else UNFUSED_ACTIVATION_EXTRA_KERNELS))
    if st.qkv_layout_copies and not architecture.is_mla(ctx.s):
        n = n + QKV_LAYOUT_COPY_KERNELS
    if moe:
        n = n + ctx.moe_nongemm_kernels - (0.0 if ctx.s.shared_experts else 1.0)
    return n * ctx.kernel_floor_s, NONGEMM_BWD_OVER_FWD * n * ctx.kernel_floor_s


def memory_bound_s(ctx: Context, lay: Layout, bytes_per_token, moe: bool):
    """Forward and backward time of a layer's memory-bound kernels: elementwise traffic, casts and
    (MoE layers) token permutation, whose backward is twice its forward, plus the non-GEMM kernels'
    floors (:func:`kernel_floors_s`); under an eager stack (``Stack.fused_elementwise`` False) the extra traffic of
    the unfused chains (:func:`unfused_elementwise_bytes_per_token`; the activation alone where only it is unfused,
    ``Stack.fused_activation``), and nanotron's attention layout copies (:func:`qkv_layout_copy_bytes_per_token`)."""
    ew_f = elementwise_s(ctx, lay, bytes_per_token)
    ew_b = ew_f * ctx.ceil.elementwise_traffic_bwd / ctx.ceil.elementwise_traffic_fwd
    st, hbm = ctx.stack, ctx.hbm_effective_bytes_per_s
    if not (st.fused_elementwise and activation_fused(st)):
        uf, ub = unfused_elementwise_bytes_per_token(ctx.s, moe, lay.tp, st.sequence_parallel,
                                                     norms_and_rope=not st.fused_elementwise,
                                                     activation=not activation_fused(st),
                                                     merged_gate_up=st.fused_projections)
        ew_f = ew_f + lay.tokens * uf / hbm
        ew_b = ew_b + lay.tokens * ub / hbm
    if st.qkv_layout_copies:
        cf, cb = qkv_layout_copy_bytes_per_token(ctx.s, lay.tp)
        ew_f = ew_f + lay.tokens * cf / hbm
        ew_b = ew_b + lay.tokens * cb / hbm
    q_f, q_b = _quantize_s(ctx, lay, moe)
    perm = permute_s(ctx, lay) if moe else 0.0
    fl_f, fl_b = kernel_floors_s(ctx, moe)
    return ew_f + q_f + perm + fl_f, ew_b + q_b + 2 * perm + fl_b


def selective_recompute_s(ctx: Context, lay: Layout, core_f, core_bytes_per_token):
    """Time selective recompute adds per layer: the unfused attention core again (forward and its
    elementwise traffic); nothing with flash attention, which never stores the scores."""
    if ctx.stack.flash_attention:
        return 0.0
    return core_f + elementwise_s(ctx, lay, core_bytes_per_token / lay.tp)
