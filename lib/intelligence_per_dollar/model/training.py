"""Training performance from first principles: memory per GPU, step time, parallelism search.

One call evaluates whole arrays of candidate configurations (one element per candidate), so the
search over TP x PP x interleave x DP x EP x CP x micro-batch x recompute x ZeRO is a few numpy
passes (:func:`evaluate`). :func:`estimate` and :func:`gpus_for_deadline` are the API contract of
issue 3. MFU is never an input: it comes out of the shapes, the calibrated efficiency curves
(:mod:`.efficiency`) and the collective costs (:mod:`.collectives`).

Step time of the bottleneck pipeline stage (Narayanan et al. 2021, "Efficient Large-Scale Language
Model Training on GPU Clusters Using Megatron-LM", SC'21, section 2.2 and 3):

    t_step = (m + (pp - 1) / v) * t_microbatch + t_dp_exposed + t_optimizer

with ``m`` micro-batches per pipeline, ``v`` interleaved stages per rank (the bubble fraction is
``(pp-1)/(v m)``, their Eq. for interleaved 1F1B) and ``t_microbatch`` the forward + backward (+
recompute) time of one micro-batch on the stage's layers, including TP collectives (Shoeybi et
al. 2019: two all-reduces per layer forward, two backward; with sequence parallelism the same
bytes as all-gather + reduce-scatter, Korthikanti et al. 2022 section 4.2.2), expert-parallel
all-to-alls, context-parallel KV exchange and pipeline point-to-point sends.

Memory per GPU: weights, gradients and Adam states with ZeRO stages (Rajbhandari et al. 2020,
"ZeRO", section 5: 2 + 2 + 12 bytes per parameter in mixed precision, here with Megatron's 4-byte
fp32 main gradients) and activations per Korthikanti et al. 2022 (arXiv 2205.05198), section 4,
Table 2: ``s b h (34 + 5 a s / h)`` bytes per layer, divided by ``t`` with sequence parallelism,
only the layer input ``2 s b h`` with full recompute, and the first stage holding ``pp``
micro-batches (``1 + (pp-1)/(pp v)`` more when interleaved).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np

from intelligence_per_dollar.model import architecture, collectives, efficiency
from intelligence_per_dollar.sources import hardware

__all__ = ["Stack", "MODERN", "MEGATRON_2021", "Estimate", "Deadline", "PARALLELISM_KEYS", "RECOMPUTE",
           "evaluate", "estimate", "gpus_for_deadline", "candidates", "search"]

RECOMPUTE = ("none", "selective", "full", "partial")
PARALLELISM_KEYS = ("tp", "pp", "dp", "cp", "ep", "microbatch", "interleave", "recompute", "zero")
PRECISIONS = ("bf16", "fp8", "fp4")

#: Bytes per parameter of mixed-precision Adam (Rajbhandari et al. 2020, section 3.1): fp32
#: master weights (4) + first and second moments (4 + 4).
OPTIMIZER_STATE_BYTES_PER_PARAM = 12.0
#: Bytes moved through HBM per local parameter by a fused Adam step: read/write master, m, v
#: (3 x 8), read the fp32 gradient (4), write the bf16 weight (2).
OPTIMIZER_STEP_BYTES_PER_PARAM = 30.0
#: Bytes of a stored activation element (BF16/FP16), Korthikanti et al. 2022 section 4.1.
ACTIVATION_BYTES = 2.0
#: Flash-attention backward FLOPs over forward (5 matmuls vs 2; Dao 2023, section 3.1).
ATTENTION_BWD_OVER_FWD = 2.5


@dataclass(frozen=True)
class Stack:
    """Properties of the training software (facts about a framework version, not tuning knobs).

    ``flash_attention``: fused attention that never stores the s x s scores and skips masked
    tiles (False: Megatron 2021-22 unfused softmax, full square computed, Korthikanti's
    ``5 a s / h`` term). ``sequence_parallel``: LayerNorm/dropout activations split over TP.
    ``dp_overlap``: gradient reduce-scatter / parameter all-gather overlapped with backward /
    forward (Megatron-Core ``overlap_grad_reduce``); False: after the pipeline flush.
    ``tp_overlap``: TP collectives overlapped with the adjacent GEMMs (TE userbuffers).
    ``ep_overlap``: expert all-to-alls overlapped with other micro-batches' compute (DeepSeek
    DualPipe, Megatron-Core ``overlap_moe_expert_parallel_comm``).
    ``grad_bytes``: bytes per gradient element in the buffer; ``grad_reduce_bytes`` in the DP
    reduction.
    ``lowp_activation_storage``: FP8/FP4 GEMMs save their *quantized* inputs for the backward pass
    (Transformer Engine saves the FP8/NVFP4 cast, not the BF16 tensor); False: BF16 copies.
    ``p2p_scatter_gather``: pipeline sends split over the TP ranks (Narayanan et al. 2021,
    section 4.1); False: every TP rank sends the whole activation (DeepSpeed pipeline engine).
    ``pipeline_schedule``: ``"1f1b"`` (bubble ``(pp-1)/v`` micro-batch times) or
    ``"dualpipe"`` (DeepSeek-V3 report, section 3.2.1, Table 2: bubble ``(pp/2-1)`` chunk times
    of F&B + B - 3W, about half of 1F1B's, at the cost of two copies of the stage's weights).
    ``ep_dedup``: the dispatcher sends each token once per destination scale-up domain over the
    scale-out network and fans it out over NVLink there (DeepEP / Megatron-Core "flex"
    dispatcher; DeepSeek-V3 report section 3.2.2); False: one copy per routed expert.
    ``fp4_bf16_layer_fraction``: share of the transformer layers whose linear layers an NVFP4
    recipe keeps in BF16 for stability (NVIDIA 2025, "Pretraining Large Language Models with
    NVFP4", arXiv 2509.25149, section 4: about 16% of the linear layers, the last blocks).
    ``balanced_head_split``: the pipeline split gives the last stage fewer layers so that the LM
    head and loss do not lengthen it (Megatron-Core ``account_for_loss_in_pipeline_split`` /
    ``pipeline_model_parallel_layout``); False, the default of Megatron-LM 2021-22 and of
    Megatron-Core unless configured: the head sits on top of a full last stage.
    ``moe_load_factor``: tokens on the busiest expert-parallel rank over the mean (1.0 when the
    benchmark force-balances routing, as the NeMo/Megatron-Bridge MoE benchmarks state; real
    training with auxiliary-loss-free balancing sits above 1, see :data:`MOE_LOAD_FACTOR`).
    """

    flash_attention: bool = True
    sequence_parallel: bool = True
    dp_overlap: bool = True
    tp_overlap: bool = False
    ep_overlap: bool = False
    grad_bytes: float = 4.0
    grad_reduce_bytes: float = 2.0
    lowp_activation_storage: bool = True
    p2p_scatter_gather: bool = True
    pipeline_schedule: str = "1f1b"
    balanced_head_split: bool = False
    moe_load_factor: float = 1.0
    ep_dedup: bool = True
    fp4_bf16_layer_fraction: float = 0.16

    def __post_init__(self):
        if self.pipeline_schedule not in ("1f1b", "dualpipe"):
            raise ValueError(f"Stack pipeline_schedule={self.pipeline_schedule!r} is not allowed; "
                             f"allowed: 1f1b, dualpipe")
        if not (isinstance(self.moe_load_factor, (int, float)) and 1.0 <= self.moe_load_factor <= 4.0):
            raise ValueError(f"Stack moe_load_factor={self.moe_load_factor!r} must be in [1, 4]")


#: Busiest-rank over mean token load of expert-parallel ranks in real (not force-balanced) MoE
#: training, low/central/high. An assumption: DeepSeek-V3's auxiliary-loss-free balancing keeps
#: expert load "balanced" per batch but not per micro-batch (arXiv 2412.19437, section 2.1.2,
#: Fig. 9 shows per-expert load within a few tens of percent of uniform); Megatron-Core's
#: capacity-factor mode drops tokens above 1.0-1.25x the mean (moe_expert_capacity_factor).
MOE_LOAD_FACTOR = {"low": 1.0, "central": 1.1, "high": 1.25}
#: Tile height of the grouped GEMM kernels: each expert's token count is padded to a multiple of
#: it (CUTLASS/cuBLAS grouped GEMMs on Hopper/Blackwell use 128-row tiles).
GROUPED_GEMM_TILE_M = 128

MODERN = Stack()
MEGATRON_2021 = Stack(flash_attention=False, sequence_parallel=False, dp_overlap=False, tp_overlap=False,
                      grad_bytes=4.0, grad_reduce_bytes=2.0)


# ---------------------------------------------------------------------------------------------
# Static (per model / hardware) quantities
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Ctx:
    s: architecture.ModelSpec
    acc: hardware.Accelerator
    ceil: efficiency.Ceilings
    precision: str
    peak: float
    bf16_peak: float
    op_bytes: float
    seq_len: int
    batch_seqs: int
    stack: Stack
    scaleup: collectives.Link
    scaleout: collectives.Link
    domain: int


def _context(model, hw, precision, seq_len, global_batch_tokens, stack, scenario, fallback) -> _Ctx:
    s = architecture.spec(model)
    acc = hw if isinstance(hw, hardware.Accelerator) else hardware.get(hw)
    if precision not in PRECISIONS:
        raise ValueError(f"precision={precision!r} is not allowed; allowed: {', '.join(PRECISIONS)}")
    if not acc.supports(precision) and not fallback:
        have = [p for p in PRECISIONS if acc.supports(p)]
        raise ValueError(f"precision={precision!r} is not supported by the tensor cores of hardware "
                         f"{acc.id!r} (it has {', '.join(have)}); pass fallback=True to run it at the "
                         f"next wider precision")
    peak = hardware.dense_flop_per_s(acc, precision, fallback=fallback)
    run_precision = precision
    if not acc.supports(precision):
        run_precision = next(p for p in hardware.PRECISIONS[hardware.PRECISIONS.index(precision):]
                             if acc.supports(p))
    if not (isinstance(seq_len, (int, np.integer)) and seq_len >= 1):
        raise ValueError(f"seq_len={seq_len!r} must be an integer >= 1")
    if not (isinstance(global_batch_tokens, (int, float, np.integer, np.floating))
            and global_batch_tokens >= seq_len):
        raise ValueError(f"global_batch_tokens={global_batch_tokens!r} must be a number >= seq_len={seq_len}")
    batch = global_batch_tokens / seq_len
    if abs(batch - round(batch)) > 1e-9 * batch:
        raise ValueError(f"global_batch_tokens={global_batch_tokens!r} must be a whole number of "
                         f"sequences of seq_len={seq_len}")
    ceil = efficiency.ceilings(acc, scenario)
    up = collectives.Link(acc.scaleup_bytes_per_s_one_way, ceil.scaleup_efficiency, ceil.scaleup_latency_s)
    out_bw = acc.scaleout_bytes_per_s or acc.scaleup_bytes_per_s_one_way / 18
    out = collectives.Link(out_bw, ceil.scaleout_efficiency, ceil.scaleout_latency_s)
    op_bytes = hardware.BYTES_PER_ELEMENT[run_precision]
    return _Ctx(s, acc, ceil, run_precision, peak if acc.supports(precision) else
                hardware.dense_flop_per_s(acc, run_precision), acc.bf16_dense_flop_per_s, op_bytes,
                int(seq_len), int(round(batch)), stack or MODERN, up, out, int(acc.scaleup_domain_gpus))


def _activation_bytes_per_token(s: architecture.ModelSpec, seq_len: int, flash: bool, moe: bool,
                                saved_gemm_input_bytes: float = ACTIVATION_BYTES):
    """Stored activation bytes per token of one layer, split (split_by_tp, not_split_without_sp, core).

    Korthikanti et al. 2022, section 4.1 (GPT: 11h attention + 19h MLP + 4h norms = 34h, plus
    5 a s for the unfused attention core), generalised to GQA/MLA, SwiGLU and MoE FFNs.
    ``core`` is the attention-core part that selective recompute drops.
    ``saved_gemm_input_bytes``: bytes per element of the inputs that the linear layers save for
    their weight gradients (2 for BF16; 1 for FP8 and 0.5625 for NVFP4 when Transformer Engine
    saves the quantized cast). Flash attention's Q, K, V and output stay BF16.
    """
    d, hd = s.d_model, architecture.head_dim(s)
    hq = s.heads * hd
    q = saved_gemm_input_bytes
    dropout = 0 if s.gated_ffn else 1            # GPT-style models train with dropout masks (1 byte)
    # attention block
    qkv = 2 * (hq + 2 * s.kv_heads * hd) if not architecture.is_mla(s) else \
        2 * (s.heads * (hd + architecture.rope_head_dim(s)) * 2 + s.heads * hd)
    proj_in = 0.0 if q == ACTIVATION_BYTES else q * hq   # separate quantized copy of the core output
    attn_split = qkv + 2 * hq + proj_in            # Q, K, V for the core + core output (proj input)
    attn_unsplit = q * d + dropout * d             # normed block input (QKV GEMM input) + dropout mask
    core = 0.0 if flash else 5.0 * s.heads * seq_len  # softmax out (2), dropout mask (1), dropout out (2)

    def ffn(f):  # FC1 output (activation-function input, BF16) + FC2 input
        return (2 * 2 * f + q * f) if s.gated_ffn else (2 * f + q * f)
    # FFN block
    if moe:
        k = s.top_k
        f = s.expert_d_ff
        routed = k * ffn(f) + k * q * d            # each routed copy: expert FC1 input, FC1 out, FC2 in
        # the gate probabilities are applied inside the expert's activation (Megatron-Core
        # weighted SwiGLU), so the combine is a plain sum that saves nothing for backward
        shared = s.shared_experts * ffn(f)
        ffn_split = routed + shared
    else:
        ffn_split = ffn(s.d_ff)
    ffn_unsplit = q * d + dropout * d
    norms = 2 * 2 * d                              # inputs of the two norms
    return float(attn_split + ffn_split), float(attn_unsplit + ffn_unsplit + norms), float(core)


def _quantize_bytes_per_token(s: architecture.ModelSpec, moe: bool, q: float) -> tuple[float, float]:
    """HBM bytes per token of one layer moved by the casts to FP8/FP4 (forward, backward).

    Every low-precision GEMM input is read in BF16 (2 bytes) and written twice in ``q`` bytes (the
    row-wise copy for this GEMM and the column-wise / transposed copy for the weight gradient:
    Transformer Engine ``Float8Tensor`` / ``MXFP8Tensor``; Micikevicius et al. 2022, "FP8 Formats
    for Deep Learning", section 4: per-tensor scaled casts around each GEMM). Backward casts each
    output gradient the same way. Weights are cast once per step and cached across micro-batches
    (negligible). Attention's core products, the router and the LM head stay BF16 and pay nothing.
    """
    d, hd = s.d_model, architecture.head_dim(s)
    hq = s.heads * hd
    per = 2.0 + 2.0 * q
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


# ---------------------------------------------------------------------------------------------
# The vectorised evaluator
# ---------------------------------------------------------------------------------------------

def _gemm(ctx: _Ctx, m, n, k, groups=1, m_tile=1):
    """A transformer-layer GEMM at the training precision; under FP4 the recipe's BF16 share of
    layers (``Stack.fp4_bf16_layer_fraction``) runs in BF16, so the time is the mix of both."""
    t = efficiency.gemm_time_s(m, n, k, peak_flop_per_s=ctx.peak, hbm_bytes_per_s=ctx.acc.hbm_bytes_per_s,
                               ceil=ctx.ceil, precision=ctx.precision, operand_bytes=ctx.op_bytes,
                               output_bytes=ACTIVATION_BYTES, groups=groups, m_tile=m_tile)
    f = ctx.stack.fp4_bf16_layer_fraction if ctx.precision == "fp4" else 0.0
    if f:
        t16 = efficiency.gemm_time_s(m, n, k, peak_flop_per_s=ctx.bf16_peak, hbm_bytes_per_s=ctx.acc.hbm_bytes_per_s,
                                     ceil=ctx.ceil, precision="bf16", operand_bytes=2.0,
                                     output_bytes=ACTIVATION_BYTES, groups=groups, m_tile=m_tile)
        t = (1.0 - f) * t + f * t16
    return t


def _gemm16(ctx: _Ctx, m, n, k, groups=1):
    """A GEMM that stays in BF16 whatever the training precision (LM head, router, unfused attention)."""
    return efficiency.gemm_time_s(m, n, k, peak_flop_per_s=ctx.bf16_peak, hbm_bytes_per_s=ctx.acc.hbm_bytes_per_s,
                                  ceil=ctx.ceil, precision="bf16", operand_bytes=2.0,
                                  output_bytes=ACTIVATION_BYTES, groups=groups)


def evaluate(ctx: _Ctx, c: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Step time and memory of candidate configurations ``c`` (arrays: tp, pp, dp, cp, ep,
    microbatch, interleave, recompute (0 none, 1 selective, 2 full), zero (0-3)).

    Returns arrays: ``step_time_s``, ``memory_per_gpu_bytes`` and the parts of both.
    """
    s, acc, ceil, st = ctx.s, ctx.acc, ctx.ceil, ctx.stack
    tp, pp, dp, cp, ep = (np.asarray(c[k], float) for k in ("tp", "pp", "dp", "cp", "ep"))
    mb, v, rc, zero = (np.asarray(c[k], float) for k in ("microbatch", "interleave", "recompute", "zero"))
    seq = ctx.seq_len
    d, hd, L = s.d_model, architecture.head_dim(s), s.layers
    gated = 3 if s.gated_ffn else 2
    sp = st.sequence_parallel
    lowp = ctx.precision in ("fp8", "fp4")
    q_saved = ctx.op_bytes if (lowp and st.lowp_activation_storage) else ACTIVATION_BYTES
    T = mb * seq / cp                                  # tokens per micro-batch per TP group
    m = ctx.batch_seqs / (dp * mb)                     # micro-batches per pipeline per step
    p = architecture.params_per_layer(s)
    L_moe = architecture.moe_layers(s)
    L_dense = L - L_moe
    load = st.moe_load_factor
    # Layers per virtual stage: uneven splits are allowed (Megatron-Core
    # pipeline_model_parallel_layout), so every virtual stage holds at most
    # ceil(L / (pp v)) layers; the busiest rank holds v of them.
    n_vs = np.ceil(L / (pp * v))
    layers_per_stage = n_vs * v
    # Placement in the scale-up domain (NVLink): ranks are numbered tp fastest, then cp, dp (and
    # ep carved out of tp x cp x dp), then pp (Megatron-Core order tp-cp-ep-dp-pp). A group of
    # consecutive ranks that does not tile the domain straddles two domains; its slowest member
    # sees only gcd(group, domain) peers on NVLink, which sets the collective's time.
    B = (tp * cp * dp).astype(np.int64)
    blk = np.gcd(B, int(ctx.domain))                   # ranks of one stage's block sharing a domain

    # ---- GEMM time per layer, forward -------------------------------------------------------
    attn_n = p["attention"] / d                        # all attention matmul params as (d x n)
    t_attn_gemm = _gemm(ctx, T, attn_n / tp, d)
    t_dense_ffn = (_gemm(ctx, T, (gated - 1) * s.d_ff / tp, d) + _gemm(ctx, T, d, s.d_ff / tp)) if L_dense else 0.0
    t_moe_ffn = 0.0
    t_router = 0.0
    if L_moe:
        # Expert GEMMs: the EP rank's local experts as one grouped GEMM (Megatron-Core
        # TEGroupedMLP); expert tensor parallelism is 1, so the tokens of the whole TP x CP group
        # reach the EP rank: tokens per local expert = T/tp x ep x top_k / experts (balanced),
        # times the busiest rank's load factor; each expert's rows are padded to the tile height.
        local_experts = s.experts / ep
        te = T / tp * ep * s.top_k / s.experts * load
        t_moe_ffn = (_gemm(ctx, te, (gated - 1) * s.expert_d_ff, d, local_experts, GROUPED_GEMM_TILE_M)
                     + _gemm(ctx, te, d, s.expert_d_ff, local_experts, GROUPED_GEMM_TILE_M))
        t_router = _gemm16(ctx, T / tp, s.experts, d)  # gating logits (BF16/FP32, never FP8)
        if s.shared_experts:
            fs = s.shared_experts * s.expert_d_ff
            t_moe_ffn = t_moe_ffn + _gemm(ctx, T, (gated - 1) * fs / tp, d) + _gemm(ctx, T, d, fs / tp)
        t_moe_ffn = t_moe_ffn + t_router

    # ---- attention core, forward and backward -------------------------------------------------
    # Each flash-attention kernel sees the local query chunk (seq / cp with context parallelism:
    # the ring runs cp kernels of seq/cp queries each), so its efficiency follows seq / cp.
    attn_fwd_flop = architecture.attention_flops_per_token(s, seq, causal=st.flash_attention) / L * T / tp
    if st.flash_attention:
        chunk = seq / cp
        t_core_fb = efficiency.attention_time_s(attn_fwd_flop * (1 + ATTENTION_BWD_OVER_FWD), chunk,
                                                bf16_peak_flop_per_s=ctx.bf16_peak, ceil=ceil)
        t_core_fb = t_core_fb + 3 * cp * ceil.kernel_overhead_s   # one fwd + two bwd kernels per ring step
        t_core_f = t_core_fb / (1 + ATTENTION_BWD_OVER_FWD)
        t_core_b = t_core_fb - t_core_f
    else:
        # unfused: batched GEMMs Q K^T (s x s x hd) and P V (s x hd x s) over mb*heads/tp, in bf16
        bmm = mb * s.heads / tp
        dqk = hd + architecture.rope_head_dim(s)
        t_core_f = _gemm16(ctx, seq / cp, seq, dqk, bmm) + _gemm16(ctx, seq / cp, hd, seq, bmm)
        t_core_b = 2 * t_core_f

    # ---- elementwise (memory-bound) traffic ---------------------------------------------------
    ew = []
    for moe in (False, True):
        split, unsplit, core = _activation_bytes_per_token(s, seq, st.flash_attention, moe, q_saved)
        per_tok = (split + core) / tp + (unsplit / tp if sp else unsplit)  # bytes per token per GPU
        ew.append((per_tok, split, unsplit, core))
    hbm = acc.hbm_bytes_per_s * ceil.hbm_fraction

    def ew_time(per_tok):
        return T * per_tok * ceil.elementwise_traffic_fwd / hbm

    # FP8/FP4 casts around every low-precision GEMM (forward, backward), per GPU
    def quant_time(moe):
        if not lowp:
            return 0.0, 0.0
        qf, qb = _quantize_bytes_per_token(s, moe, ctx.op_bytes)
        share = 1.0 - (st.fp4_bf16_layer_fraction if ctx.precision == "fp4" else 0.0)
        return share * T * qf / tp / hbm, share * T * qb / tp / hbm
    # MoE token permutation: gather top_k copies of each token before dispatch and scatter them
    # back after combine (read d, write top_k d; and the reverse), forward; twice that backward
    t_perm = (T / tp * (1 + s.top_k) * d * ACTIVATION_BYTES * 2 * load / hbm) if L_moe else 0.0

    # ---- TP collectives per layer: 2 all-reduces (or AG+RS) forward, 2 backward ---------------
    tp_bytes = T * d * ACTIVATION_BYTES
    tp_in = np.gcd(tp.astype(np.int64), blk)
    t_tp_one = collectives.hierarchical_all_reduce_s(tp_bytes, tp, tp_in, ctx.scaleup, ctx.scaleout)
    t_tp_fwd = 2 * t_tp_one

    # ---- CP: ring exchange of K and V chunks, overlapped with the attention core ---------------
    # Ring attention (Liu et al. 2023; Megatron-Core / TE context parallelism with P2P): cp - 1
    # steps, each sending this rank's K,V chunk (T x kv elements) to the next rank while the
    # core works on the current one; backward sends K,V and their gradients (2x). Only the part
    # of the ring longer than the core is exposed, plus the first step, which nothing hides.
    if architecture.is_mla(s):
        kv_elems = s.heads * (2 * hd + architecture.rope_head_dim(s))
    else:
        kv_elems = 2 * s.kv_heads * hd
    cp_chunk_bytes = T * kv_elems * ACTIVATION_BYTES / tp
    cp_in = np.maximum(np.gcd((tp * cp).astype(np.int64), blk) // tp.astype(np.int64), 1)
    link_bw = np.where(cp <= cp_in, ctx.scaleup.effective_bytes_per_s, ctx.scaleout.effective_bytes_per_s)
    link_lat = np.where(cp <= cp_in, ctx.scaleup.latency_s, ctx.scaleout.latency_s)
    t_step = link_lat + cp_chunk_bytes / link_bw
    t_ring_f = (cp - 1) * t_step
    t_cp_f = np.where(cp > 1, np.maximum(0.0, t_ring_f - t_core_f * (cp - 1) / cp) + t_step, 0.0)
    t_cp_b = np.where(cp > 1, np.maximum(0.0, 2 * t_ring_f - t_core_b * (cp - 1) / cp) + 2 * t_step, 0.0)

    # ---- EP all-to-all (dispatch + combine) per MoE layer ------------------------------------
    t_a2a_f = 0.0
    if L_moe:
        disp_bytes = 1.0 if lowp else 2.0               # dispatch in FP8 when training in FP8/FP4
        a2a_bytes = T / tp * s.top_k * d * load
        ep_in = np.gcd(ep.astype(np.int64), blk).astype(float)
        out_scale = 1.0
        if st.ep_dedup:
            # remote copies per token: distinct remote domains among top_k experts drawn uniformly
            # from n = ep / ep_in domains, (n - 1)(1 - (1 - 1/n)^k), instead of k (n - 1) / n
            n_dom = np.maximum(ep / ep_in, 1.0)
            distinct = (n_dom - 1) * (1 - (1 - 1 / n_dom) ** s.top_k)
            out_scale = np.where(n_dom > 1, distinct / np.maximum(s.top_k * (n_dom - 1) / n_dom, 1e-30), 1.0)
        t_a2a_f = (collectives.hierarchical_all_to_all_s(a2a_bytes * disp_bytes, ep, ep_in, ctx.scaleup, ctx.scaleout,
                                                         outer_scale=out_scale)
                   + collectives.hierarchical_all_to_all_s(a2a_bytes * 2.0, ep, ep_in, ctx.scaleup, ctx.scaleout,
                                                           outer_scale=out_scale))
        t_a2a_f = np.where(ep > 1, t_a2a_f, 0.0)

    # ---- parameters per GPU --------------------------------------------------------------------
    emb = architecture.embedding_params(s)
    expert_total = L_moe * s.experts * p["expert"] if L_moe else 0.0
    dense_total = architecture.total_params(s) - emb - expert_total
    dense_per_gpu = dense_total / (tp * pp) * (layers_per_stage * pp / L) + emb / tp * np.where(pp > 1, 0.5, 1.0)
    exp_per_gpu = expert_total / (ep * pp) * (layers_per_stage * pp / L)
    dp_dense = dp * cp
    dp_exp = tp * cp * dp / ep

    # ---- memory per GPU ----------------------------------------------------------------------
    w_bytes = 2.0
    P = dense_per_gpu + exp_per_gpu
    weights = np.where(zero >= 3, dense_per_gpu / dp_dense + exp_per_gpu / dp_exp, P) * w_bytes
    grads = np.where(zero >= 2, dense_per_gpu / dp_dense + exp_per_gpu / dp_exp, P) * st.grad_bytes
    optim = np.where(zero >= 1, dense_per_gpu / dp_dense + exp_per_gpu / dp_exp, P) * OPTIMIZER_STATE_BYTES_PER_PARAM
    if st.pipeline_schedule == "dualpipe":  # two copies of the stage's weights (DeepSeek-V3, 3.2.1)
        weights = weights * 2.0
    if zero.ndim and np.any(zero >= 3):  # gathered working copy of one layer
        weights = weights + np.where(zero >= 3, P / layers_per_stage * w_bytes * 2, 0.0)

    def act_layer(moe_idx):
        per_tok, split, unsplit, core = ew[moe_idx]
        full = T * per_tok
        sel = T * (per_tok - core / tp)
        inp = T * 2 * d / (tp if sp else 1)
        return full, sel, inp
    a_d = act_layer(0)
    a_m = act_layer(1) if L_moe else a_d
    frac_moe = L_moe / L
    a_full = (1 - frac_moe) * a_d[0] + frac_moe * a_m[0]
    a_sel = (1 - frac_moe) * a_d[1] + frac_moe * a_m[1]
    a_inp = a_d[2]
    in_flight = np.minimum(pp, m) * np.where(v > 1, 1 + (pp - 1) / (pp * v), 1.0)
    held = layers_per_stage * in_flight                # layer-micro-batches of activations held
    # working set while recomputing one layer, and the fp32 logits (+ their gradient)
    work = np.maximum(a_d[0], a_m[0])
    logits = T * s.vocab / tp * 4.0 * 2
    usable = acc.hbm_bytes * ceil.memory_usable_fraction
    # "partial" (3): full recompute of just enough layers per stage to fit, the others
    # selective (Megatron-Core recompute_method=block, recompute_num_layers)
    fixed_mem = weights + grads + optim + logits + work
    need = (fixed_mem + held * a_sel - usable) / np.maximum(held * (a_sel - a_inp), 1e-30)
    rfrac_part = np.clip(np.ceil(np.clip(need, 0.0, 1.0) * layers_per_stage - 1e-9) / layers_per_stage, 0.0, 1.0)
    rfrac = np.where(rc == 2, 1.0, np.where(rc == 3, rfrac_part, 0.0))   # share of layers fully recomputed
    per_layer = rfrac * a_inp + (1 - rfrac) * np.where(rc == 0, a_full, a_sel)
    acts = per_layer * held + np.where(rfrac > 0, work, 0.0) + logits
    memory = weights + grads + optim + acts
    # ---- per-layer totals, by part ------------------------------------------------------------
    def layer(t_ffn, ew_per_tok, a2a, moe):
        """Forward, backward and recompute time of one layer, and the same split into parts."""
        gemm_f = t_attn_gemm + t_ffn
        tp_f = t_tp_fwd if not st.tp_overlap else np.maximum(0.0, t_tp_fwd - gemm_f)
        tp_f = np.where(tp > 1, tp_f, 0.0)
        # sequence parallelism re-does the input all-gathers in backward for the weight gradients
        # instead of storing the gathered tensors (Korthikanti et al. 2022, section 4.2.2)
        tp_b = tp_f + (np.where(tp > 1, t_tp_one, 0.0) if sp and not st.tp_overlap else 0.0)
        ew_f = ew_time(ew_per_tok)
        ew_b = ew_f * ceil.elementwise_traffic_bwd / ceil.elementwise_traffic_fwd
        q_f, q_b = quant_time(moe)
        perm = t_perm if moe else 0.0
        mem_f, mem_b = ew_f + q_f + perm, ew_b + q_b + 2 * perm
        compute_f = gemm_f + t_core_f + mem_f
        compute_b = 2 * gemm_f + t_core_b + mem_b
        if st.ep_overlap:
            # dispatch/combine of one micro-batch run under another's forward or backward chunk
            # (DualPipe; Megatron-Core 1F1B A2A overlap): exposed only beyond all the compute
            a2a_exposed = np.maximum(0.0, 2 * a2a - (compute_f + compute_b))
            a2a_f, a2a_b = a2a_exposed / 3.0, 2 * a2a_exposed / 3.0
        else:
            a2a_f = a2a_b = a2a
        fwd = compute_f + tp_f + t_cp_f + a2a_f
        bwd = compute_b + tp_b + t_cp_b + a2a_b
        # recompute: full -> the whole forward again; selective -> the attention core (unfused)
        sel = 0.0 if st.flash_attention else t_core_f + ew_time(ew[0][3] / tp)
        sel_rc = np.where(rc >= 1, sel, 0.0)
        re = rfrac * fwd + (1 - rfrac) * sel_rc
        parts = {"gemm": 3 * gemm_f + rfrac * gemm_f,
                 "attention_core": t_core_f + t_core_b + rfrac * t_core_f + (1 - rfrac) * sel_rc,
                 "memory_bound": mem_f + mem_b + rfrac * mem_f,
                 "tp_comm": tp_f + tp_b + rfrac * tp_f,
                 "cp_comm": t_cp_f + t_cp_b + rfrac * t_cp_f,
                 "ep_a2a": a2a_f + a2a_b + rfrac * a2a_f}
        return fwd, bwd, re, parts
    fd, bd, rd, pd_ = layer(t_dense_ffn, ew[0][0], 0.0, False)
    if L_moe:
        fm, bm, rm, pm_ = layer(t_moe_ffn, ew[1][0], t_a2a_f, True)
    else:
        fm = bm = rm = 0.0
        pm_ = {k: 0.0 for k in pd_}
    t_model_mb = L_dense * (fd + bd + rd) + L_moe * (fm + bm + rm)   # all layers, one micro-batch
    t_layer = t_model_mb / L
    # LM head (+ loss) on the last stage, kept in BF16: logits GEMM forward + 2x backward. With
    # uneven splits the last virtual stage takes only the layers the others leave,
    # L - (pp v - 1) ceil(L / (pp v)) (none when the slack allows: Megatron-Core
    # account_for_loss_in_pipeline_split / decoder_last_pipeline_num_layers), so the head costs
    # time only where it makes the last rank the busiest.
    t_head = 3 * _gemm16(ctx, T, s.vocab / tp, d)
    last_layers = (v - 1) * n_vs + np.maximum(0.0, L - (pp * v - 1) * n_vs)
    t_stage_full = t_layer * layers_per_stage
    t_stage_last = t_layer * last_layers + t_head
    last_is_bottleneck = t_stage_last > t_stage_full
    if not st.balanced_head_split:  # head on top of a full last stage: always on the critical path
        last_is_bottleneck = np.ones_like(t_stage_last, dtype=bool)
        last_layers = layers_per_stage
    bott_layers = np.where(last_is_bottleneck, last_layers, layers_per_stage)
    t_stage = t_layer * bott_layers
    head_on_path = np.where(last_is_bottleneck, t_head, 0.0)
    # pipeline p2p: activation (fwd) and gradient (bwd) per micro-batch per virtual stage
    # (Narayanan et al. 2021 section 4.1 "scatter/gather": each TP rank sends 1/tp of the tensor on
    # its own NIC; without sequence parallelism the receiver all-gathers it over NVLink)
    scatter = st.p2p_scatter_gather or sp
    p2p_bytes = T * d * ACTIVATION_BYTES / (tp if scatter else 1)
    p2p_link_in_domain = (tp * cp * dp * pp) <= ctx.domain
    t_p2p = np.where(p2p_link_in_domain, collectives.p2p_s(p2p_bytes, ctx.scaleup),
                     collectives.p2p_s(p2p_bytes, ctx.scaleout))
    if not sp and st.p2p_scatter_gather:
        t_p2p = t_p2p + collectives.all_gather_s(T * d * ACTIVATION_BYTES, tp, ctx.scaleup)
    t_p2p = np.where(pp > 1, 2 * v * t_p2p, 0.0)
    share = bott_layers / L
    mb_parts = {k: (L_dense * pd_[k] + L_moe * pm_[k]) * share for k in pd_}
    mb_parts["lm_head"] = head_on_path
    mb_parts["pipeline_p2p"] = t_p2p
    t_mb = t_stage + head_on_path + t_p2p
    t_fwd_mb = (L_dense * fd + L_moe * fm) * bott_layers / L
    t_bwd_mb = (L_dense * bd + L_moe * bm) * bott_layers / L
    # pipeline bubble (Narayanan et al. 2021, section 2.2.2): (pp - 1) / v micro-batch times for
    # (interleaved) 1F1B; DualPipe halves the number of idle chunks (DeepSeek-V3 report, Table 2)
    bubble_slots = (pp - 1) / v if st.pipeline_schedule == "1f1b" else np.maximum(pp / 2 - 1, 0) / v
    t_pipeline = (m + bubble_slots) * t_mb

    # ---- data-parallel gradient reduction and parameter gather ----------------------------------
    # dense gradients reduce over cp x dp ranks (stride tp), expert gradients over the tp x cp x
    # dp / ep ranks holding the same experts (stride ep)
    in_dom_dense = np.maximum(1, blk // tp.astype(np.int64)).astype(float)
    in_dom_exp = np.maximum(1, blk // ep.astype(np.int64)).astype(float)
    gb = st.grad_reduce_bytes

    def rs(params, ranks, in_dom):
        return collectives.hierarchical_reduce_scatter_s(params * gb, ranks, in_dom, ctx.scaleup, ctx.scaleout)

    t_rs = rs(dense_per_gpu, dp_dense, in_dom_dense) + rs(exp_per_gpu, dp_exp, in_dom_exp)
    t_ag = (collectives.hierarchical_reduce_scatter_s(dense_per_gpu * 2.0, dp_dense, in_dom_dense, ctx.scaleup, ctx.scaleout)
            + collectives.hierarchical_reduce_scatter_s(exp_per_gpu * 2.0, dp_exp, in_dom_exp, ctx.scaleup, ctx.scaleout))
    # ZeRO-0 all-reduce == reduce-scatter + all-gather of the gradients (same bytes)
    t_ag = np.where(zero == 0, t_rs * 1.0, t_ag)
    if st.dp_overlap:
        t_dp = np.maximum(0.0, t_rs - t_bwd_mb) + np.maximum(0.0, t_ag - t_fwd_mb)
    else:
        t_dp = t_rs + t_ag
    # ZeRO-3 gathers weights for every micro-batch (forward and backward) and reduce-scatters
    # gradients each micro-batch; prefetching overlaps it with that micro-batch's compute
    t_z3 = np.maximum(0.0, 2 * t_ag + t_rs - (t_fwd_mb + t_bwd_mb)) * m
    t_dp = np.where(zero == 3, t_z3 + t_ag, t_dp)

    # ---- optimizer step ------------------------------------------------------------------------
    local = dense_per_gpu / np.where(zero >= 1, dp_dense, 1) + exp_per_gpu / np.where(zero >= 1, dp_exp, 1)
    t_opt = local * OPTIMIZER_STEP_BYTES_PER_PARAM / hbm

    step = t_pipeline + t_dp + t_opt

    return {"step_time_s": step, "memory_per_gpu_bytes": memory, "fits": memory <= usable,
            "usable_bytes": usable, "weights_bytes": weights, "gradients_bytes": grads,
            "optimizer_bytes": optim, "activations_bytes": acts, "pipeline_s": t_pipeline,
            "bubble_s": bubble_slots * t_mb, "dp_exposed_s": t_dp, "optimizer_s": t_opt,
            "microbatch_s": t_mb, "tp_comm_per_layer_s": np.where(tp > 1, 2 * t_tp_fwd, 0.0),
            "ep_a2a_per_layer_s": 2 * np.asarray(t_a2a_f) * np.ones_like(tp), "microbatches": m,
            "microbatch_parts_s": mb_parts, "recompute_fraction": rfrac}


# ---------------------------------------------------------------------------------------------
# Candidates and search
# ---------------------------------------------------------------------------------------------

def _divisors(n: int, cap: int | None = None) -> list[int]:
    out = [k for k in range(1, int(math.isqrt(n)) + 1) if n % k == 0]
    out = sorted(set(out + [n // k for k in out]))
    return [k for k in out if cap is None or k <= cap]


def _cross(c: dict[str, np.ndarray], key: str, values) -> dict[str, np.ndarray]:
    """Cartesian product of the candidate arrays ``c`` with ``values`` for ``key``."""
    vals = np.asarray(list(values), dtype=np.int64)
    n = len(next(iter(c.values())))
    out = {k: np.repeat(a, len(vals)) for k, a in c.items()}
    out[key] = np.tile(vals, n)
    return out


def _keep(c: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, np.ndarray]:
    return {k: a[ok] for k, a in c.items()}


def candidates(ctx: _Ctx, gpus: int, fixed: Mapping | None = None) -> dict[str, np.ndarray]:
    """All valid configurations (arrays) for ``gpus`` GPUs, honouring the ``fixed`` keys.

    Built one axis at a time, each product filtered at once (tp x pp x cp first, whose product
    must divide ``gpus`` and leave a data-parallel size that divides the batch), so the arrays
    never hold the full cartesian product of invalid combinations.
    """
    s = ctx.s
    fixed = dict(fixed or {})
    cap_tp = ctx.domain
    grid = {
        "tp": [t for t in _divisors(gpus, cap_tp) if s.heads % t == 0 and (s.kv_heads % t == 0 or t % s.kv_heads == 0)
               and (ctx.domain % t == 0 or gpus < ctx.domain)],   # a TP group never straddles domains
        "pp": [q for q in _divisors(gpus) if q <= s.layers],
        "cp": [c for c in (1, 2, 4, 8, 16, 32) if ctx.seq_len % (2 * c) == 0 or c == 1],
        "interleave": [1, 2, 3, 4, 6, 8],
        "microbatch": [1, 2, 4, 8],
        "ep": _divisors(s.experts) if s.experts else [1],
        "recompute": list(range(len(RECOMPUTE))),
        "zero": [1, 3],
    }
    for k, val in fixed.items():
        if k in grid:
            grid[k] = [val]
    c = {"tp": np.asarray(grid["tp"], np.int64)}
    c = _cross(c, "pp", grid["pp"])
    c = _cross(c, "cp", grid["cp"])
    prod = c["tp"] * c["pp"] * c["cp"]
    c = _keep(c, gpus % prod == 0)
    c["dp"] = gpus // (c["tp"] * c["pp"] * c["cp"])
    ok = (ctx.batch_seqs % c["dp"] == 0)
    if "dp" in fixed:
        ok &= c["dp"] == fixed["dp"]
    c = _keep(c, ok)
    c = _cross(c, "microbatch", grid["microbatch"])
    c = _keep(c, ctx.batch_seqs % (c["dp"] * c["microbatch"]) == 0)
    m = ctx.batch_seqs // (c["dp"] * c["microbatch"])
    c["_m"] = m
    c = _cross(c, "interleave", grid["interleave"])
    v, pp = c["interleave"], c["pp"]
    ok = (v == 1) | ((pp > 1) & (c["_m"] % np.maximum(pp, 1) == 0))
    # a virtual stage may hold the embedding or the loss instead of a layer (Megatron-Core
    # account_for_embedding/loss_in_pipeline_split), so pp x v may exceed the layers by 2
    ok &= pp * v <= s.layers + 2
    # uneven splits need no divisibility: Megatron-Core's pipeline_model_parallel_layout places
    # any number of layers on each (virtual) stage, so pp x v need not divide the layers
    c = _keep(c, ok)
    c = _cross(c, "ep", grid["ep"])
    c = _keep(c, (c["tp"] * c["cp"] * c["dp"]) % c["ep"] == 0)
    c = _cross(c, "zero", grid["zero"])
    c = _keep(c, (c["zero"] != 3) | (c["pp"] == 1))
    c = _cross(c, "recompute", grid["recompute"])
    c.pop("_m")
    return c


#: GPUs of one scale-up domain a job may use, by domain size. NVL72 racks are scheduled as
#: blocks of 16 of their 18 compute trays (64 GPUs; Slurm topology/block ``--segment=16``,
#: the usual GB200 NVL72 practice, keeping two trays as hot spares), and NVIDIA's own NVL72
#: training benchmarks run on power-of-two GPU counts (Megatron-Bridge performance summary:
#: 64, 128, 256 GPUs). A 64-GPU block lets the batch, expert parallelism and data parallelism
#: factor evenly (72 = 8 x 9 forces a factor 9 into TP or PP). The deadline inversion counts
#: whole domains either way and takes the faster use.
JOB_BLOCK_GPUS = {72: (72, 64)}


def _job_domain(ctx: _Ctx, gpus: int) -> _Ctx:
    """The scale-up domain a ``gpus``-GPU job actually sees: a :data:`JOB_BLOCK_GPUS` block when
    the job is a whole number of such blocks but not of full domains (e.g. 256 GPUs on NVL72
    racks run as 4 x 64)."""
    if gpus <= ctx.domain or gpus % ctx.domain == 0:
        return ctx
    for per in JOB_BLOCK_GPUS.get(ctx.domain, ()):
        if per != ctx.domain and gpus % per == 0:
            return replace(ctx, domain=per)
    return ctx


def _best_for_domains(ctx: _Ctx, domains: int, fixed=None):
    """Fastest fitting estimate on ``domains`` whole scale-up domains, using all of each domain's
    GPUs or a :data:`JOB_BLOCK_GPUS` block of them (None if nothing fits)."""
    best = None
    for per in JOB_BLOCK_GPUS.get(ctx.domain, (ctx.domain,)):
        c2 = ctx if per == ctx.domain else replace(ctx, domain=per)
        g = int(domains) * per
        i, c, r, n = _choose(c2, g, fixed or {})
        if i is None:
            continue
        e = _make_estimate(c2, c, r, i, g, n)
        if best is None or e.tokens_per_s_per_gpu * e.gpus > best.tokens_per_s_per_gpu * best.gpus:
            best = e
    return best


def _choose(ctx, gpus, fixed):
    c = candidates(ctx, gpus, fixed)
    n = len(c["tp"])
    if n == 0:
        return None, c, None, 0
    r = evaluate(ctx, c)
    t = np.where(r["fits"], r["step_time_s"], np.inf)
    i = int(np.argmin(t))
    return (i if np.isfinite(t[i]) else None), c, r, n


def search(model, hardware_id, gpus, precision, seq_len, global_batch_tokens, *, fixed=None, stack=None,
           scenario="central", fallback=False):
    """Evaluate every valid configuration; return ``(candidates, results, best_index_or_None)``."""
    ctx = _context(model, hardware_id, precision, seq_len, global_batch_tokens, stack, scenario, fallback)
    i, c, r, _ = _choose(ctx, int(gpus), fixed or {})
    return c, r, i


# ---------------------------------------------------------------------------------------------
# API contract
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Estimate:
    """One configuration's predicted performance (SI units)."""

    step_time_s: float
    tokens_per_s_per_gpu: float
    model_flops_per_s_per_gpu: float
    mfu: float
    memory_per_gpu_bytes: float
    memory_breakdown_bytes: Mapping[str, float]
    parallelism: Mapping[str, object]
    time_breakdown_s: Mapping[str, float]
    gpus: int
    hardware: str
    precision: str
    model_flops_per_token: float
    configurations_evaluated: int = 1


@dataclass(frozen=True)
class Deadline:
    """Smallest whole-rack GPU count meeting a token budget within a deadline."""

    gpus: int | None
    racks: int | None
    estimate: Estimate | None
    days_needed: float | None
    feasible: bool
    message: str


def _check_parallelism(ctx: _Ctx, gpus: int, par: Mapping) -> dict:
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
    if gpus % prod:
        raise ValueError(f"the product of {', '.join(prod_keys)} ({prod}) does not divide gpus={gpus}")
    if all(k in fixed for k in ("tp", "cp", "dp", "ep")) and (fixed["tp"] * fixed["cp"] * fixed["dp"]) % fixed["ep"]:
        raise ValueError(f"parallelism['ep']={fixed['ep']} must divide tp x cp x dp = "
                         f"{fixed['tp'] * fixed['cp'] * fixed['dp']} (experts are carved out of those ranks)")
    if "pp" in fixed and fixed["pp"] > s.layers:
        raise ValueError(f"parallelism['pp']={fixed['pp']} exceeds the model's layers={s.layers}")
    if "dp" in fixed and "microbatch" in fixed and ctx.batch_seqs % (fixed["dp"] * fixed["microbatch"]):
        raise ValueError(f"global batch of {ctx.batch_seqs} sequences is not divisible by dp x microbatch = "
                         f"{fixed['dp'] * fixed['microbatch']}")
    return fixed


def _make_estimate(ctx, c, r, i, gpus, n) -> Estimate:
    s = ctx.s
    step = float(r["step_time_s"][i])
    tokens = ctx.batch_seqs * ctx.seq_len
    tps = tokens / step / gpus
    f_tok = float(architecture.training_flops_per_token(s, ctx.seq_len, causal=True))
    mflops = tps * f_tok
    par = {k: int(c[k][i]) for k in ("tp", "pp", "dp", "cp", "ep", "microbatch", "interleave")}
    par["recompute"] = RECOMPUTE[int(c["recompute"][i])]
    par["zero"] = int(c["zero"][i])
    mem = {k: float(np.broadcast_to(r[k + "_bytes"], c["tp"].shape)[i])
           for k in ("weights", "gradients", "optimizer", "activations")}
    tb = {k: float(np.broadcast_to(r[k], c["tp"].shape)[i]) for k in
          ("pipeline_s", "bubble_s", "dp_exposed_s", "optimizer_s", "microbatch_s", "tp_comm_per_layer_s",
           "ep_a2a_per_layer_s")}
    # one step = (micro-batches + bubble) x micro-batch time, split by part, + DP + optimizer
    slots = float(np.broadcast_to(r["microbatches"], c["tp"].shape)[i]) + tb["bubble_s"] / max(tb["microbatch_s"], 1e-30)
    for k, val in r["microbatch_parts_s"].items():
        tb["step_" + k + "_s"] = float(np.broadcast_to(val, c["tp"].shape)[i]) * slots
    return Estimate(step_time_s=step, tokens_per_s_per_gpu=tps, model_flops_per_s_per_gpu=mflops,
                    mfu=mflops / ctx.peak, memory_per_gpu_bytes=float(r["memory_per_gpu_bytes"][i]),
                    memory_breakdown_bytes=mem, parallelism=par, time_breakdown_s=tb, gpus=gpus,
                    hardware=ctx.acc.id, precision=ctx.precision, model_flops_per_token=f_tok,
                    configurations_evaluated=n)


def estimate(model, hardware: str, gpus: int, precision: str = "bf16", seq_len: int = 4096,
             global_batch_tokens: float = 4 * 2**20, parallelism: Mapping | None = None, *,
             stack: Stack | None = None, scenario: str = "central", fallback: bool = False) -> Estimate:
    """Predicted step time, throughput, MFU and memory of training ``model`` on ``gpus`` GPUs.

    ``parallelism``: None to search, or a dict fixing any of :data:`PARALLELISM_KEYS` (keys left
    out are searched). Raises ``ValueError`` naming the constraint for unknown keys, impossible
    parallelism (products, divisibility) or a configuration that does not fit in HBM.
    """
    if isinstance(gpus, bool) or not isinstance(gpus, (int, np.integer)) or gpus < 1:
        raise ValueError(f"gpus={gpus!r} must be an integer >= 1")
    gpus = int(gpus)
    ctx = _context(model, hardware, precision, seq_len, global_batch_tokens, stack, scenario, fallback)
    if parallelism is not None and not isinstance(parallelism, Mapping):
        raise ValueError(f"parallelism={parallelism!r} must be None or a dict")
    fixed = _check_parallelism(ctx, gpus, parallelism or {})
    ctx = _job_domain(ctx, gpus)
    i, c, r, n = _choose(ctx, gpus, fixed)
    if n == 0:
        raise ValueError(f"no valid parallelism for gpus={gpus} with {fixed or 'no fixed keys'}: check that "
                         f"tp divides heads={ctx.s.heads}, tp x pp x cp x dp = gpus, the global batch of "
                         f"{ctx.batch_seqs} sequences divides by dp x microbatch (and by pp when interleaved), "
                         f"and ep divides experts={ctx.s.experts} and tp x cp x dp")
    if i is None:
        j = int(np.argmin(r["memory_per_gpu_bytes"]))
        raise ValueError(f"does not fit in memory: the smallest configuration needs "
                         f"{r['memory_per_gpu_bytes'][j] / 1e9:.1f} GB per GPU, but {ctx.acc.id} has "
                         f"{ctx.acc.hbm_bytes / 1e9:.0f} GB of HBM ({r['usable_bytes'] / 1e9:.0f} GB usable)")
    return _make_estimate(ctx, c, r, i, gpus, n)


def gpus_for_deadline(model, hardware: str, precision: str = "bf16", tokens: float = 100e12, days: float = 30.0,
                      seq_len: int = 8192, global_batch_tokens: float | None = None, *, stack: Stack | None = None,
                      scenario: str = "central", fallback: bool = False, max_racks: int = 20000) -> Deadline:
    """Smallest number of whole scale-up domains ("racks") whose GPUs train ``tokens`` in ``days``.

    ``global_batch_tokens`` defaults to the central assumption :data:`GLOBAL_BATCH_TOKENS`
    (rounded to whole sequences); the answer depends strongly on it (chapter 2). Searches racks by bisection on the monotone best step time.
    Returns a :class:`Deadline`; ``feasible`` is False (with the reason) when nothing fits.
    """
    for name, v in (("tokens", tokens), ("days", days)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name}={v!r} must be a positive number")
    ctx = _context(model, hardware, precision, seq_len,
                   global_batch_tokens or batch_tokens(seq_len, GLOBAL_BATCH_TOKENS["central"]),
                   stack, scenario, fallback)
    gbt = ctx.batch_seqs * ctx.seq_len
    domain = ctx.domain
    deadline_s = days * 86400.0

    def best(racks):
        return _best_for_domains(ctx, racks)

    def days_needed(e):
        return tokens / (e.tokens_per_s_per_gpu * e.gpus) / 86400.0

    # exponential then binary search over racks (throughput grows with racks until the batch runs out)
    lo, hi, found = 0, 1, None
    while hi <= max_racks:
        e = best(hi)
        if e is not None and days_needed(e) <= days:
            found = e
            break
        lo, hi = hi, hi * 2
    if found is None:
        msg = (f"nothing fits: no multiple of {domain} {ctx.acc.id} GPUs up to {max_racks} racks trains "
               f"{tokens:.3g} tokens in {days} days (global batch {gbt:.3g} tokens, seq {seq_len}, {precision})")
        return Deadline(None, None, None, None, False, msg)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        e = best(mid)
        if e is not None and days_needed(e) <= days:
            hi, found = mid, e
        else:
            lo = mid
    used = "" if found.gpus == hi * domain else f", {found.gpus} of them in use"
    return Deadline(hi * domain, hi, found, days_needed(found), True,
                    f"{hi * domain} GPUs ({hi} x {domain}{used}) train {tokens:.3g} tokens in "
                    f"{days_needed(found):.1f} days")


# ---------------------------------------------------------------------------------------------
# Chapter 2 helpers: the global-batch assumption, throughput curves, the ratio decomposition
# ---------------------------------------------------------------------------------------------

#: Global batch in tokens for a 100T-token frontier MoE run, low / central / high (an assumption,
#: stated openly). Low: what today's frontier MoE runs use, DeepSeek-V3 ramps to 15,360 x 4,096
#: = 63 M tokens (arXiv 2412.19437, section 4.2) and Kimi K2 trains at 67 M (arXiv 2507.20534,
#: section 3.4); Llama 3 405B used 16 M (arXiv 2407.21783, section 3.4.1). Central: the critical
#: batch grows with the data a run sees, roughly as D^0.5 (Zhang et al. 2024, "How Does Critical
#: Batch Size Scale in Pre-training?", arXiv 2410.21676), so DeepSeek-V3's 63 M at 14.8T tokens
#: becomes ~164 M at 100T. High: 256 Mi tokens, the same scaling with a 1.5x margin.
GLOBAL_BATCH_TOKENS = {"low": 64 * 2**20, "central": 20480 * 8192, "high": 256 * 2**20}

#: Hardware attributes swapped one group at a time by :func:`decompose_ratio`, in order.
DECOMPOSITION_STEPS = (
    ("peak FLOP/s", ("fp4_dense_flop_per_s", "fp8_dense_flop_per_s", "bf16_dense_flop_per_s")),
    ("HBM bandwidth", ("hbm_bytes_per_s",)),
    ("memory capacity", ("hbm_bytes",)),
    ("scale-up and scale-out links", ("scaleup_bytes_per_s_bidirectional", "scaleout_bytes_per_s",
                                      "scaleup_domain_gpus")),
)


def batch_tokens(seq_len: int, global_batch_tokens: float) -> int:
    """``global_batch_tokens`` rounded to a whole number of ``seq_len`` sequences (at least one)."""
    if not (isinstance(seq_len, (int, np.integer)) and seq_len >= 1):
        raise ValueError(f"seq_len={seq_len!r} must be an integer >= 1")
    if not (isinstance(global_batch_tokens, (int, float, np.integer, np.floating)) and global_batch_tokens > 0):
        raise ValueError(f"global_batch_tokens={global_batch_tokens!r} must be a positive number")
    return int(max(1, round(global_batch_tokens / seq_len)) * seq_len)


def throughput_curve(model, hardware, precision: str, seq_len: int, global_batch_tokens: float, racks, *,
                     stack: Stack | None = None, scenario: str = "central", fallback: bool = False) -> dict:
    """Best cluster tokens/s for each number of racks (scale-up domains) in ``racks``.

    Returns arrays ``racks``, ``gpus``, ``tokens_per_s`` (NaN where no configuration fits or is
    valid) and ``mfu``. Reading a deadline off this curve is instant (:func:`racks_for_rate`).
    """
    ctx = _context(model, hardware, precision, seq_len, batch_tokens(seq_len, global_batch_tokens), stack,
                   scenario, fallback)
    racks = np.asarray(racks, dtype=np.int64)
    tps = np.full(len(racks), np.nan)
    mfu = np.full(len(racks), np.nan)
    for j, r in enumerate(racks):
        e = _best_for_domains(ctx, int(r))
        if e is not None:
            tps[j] = e.tokens_per_s_per_gpu * e.gpus
            mfu[j] = e.mfu
    return {"racks": racks, "gpus": racks * ctx.domain, "tokens_per_s": tps, "mfu": mfu, "domain": ctx.domain}


def racks_for_rate(curve: Mapping, tokens_per_s: float) -> float | None:
    """Smallest rack count on ``curve`` whose throughput reaches ``tokens_per_s`` (None if none does)."""
    ok = np.nan_to_num(np.asarray(curve["tokens_per_s"]), nan=0.0) >= tokens_per_s
    if not ok.any():
        return None
    return float(np.asarray(curve["racks"])[int(np.argmax(ok))])


def _swapped(base: hardware.Accelerator, donor: hardware.Accelerator, fields) -> hardware.Accelerator:
    return replace(base, **{f: getattr(donor, f) for f in fields})


def decompose_ratio(model, new: str = "VR200", old: str = "GB200", precision: str = "fp4", *, tokens: float = 100e12,
                    days: float = 30.0, seq_len: int = 8192, global_batch_tokens: float | None = None,
                    stack: Stack | None = None, scenario: str = "central") -> list[dict]:
    """Decompose the GPU-count ratio new/old into the hardware attributes that cause it.

    Starting from ``old``, the attribute groups of :data:`DECOMPOSITION_STEPS` are replaced by
    ``new``'s values one group at a time (cumulatively; the efficiency ceilings stay ``old``'s),
    and the deadline inversion (:func:`gpus_for_deadline`) is re-run after each swap. Each row:
    ``step``, ``gpus`` after the swap, ``ratio_to_old`` (cumulative), ``factor`` (this step's
    multiplicative effect) and ``share_of_log`` (its share of log(final ratio), so the shares of
    all steps add to 1). The last row swaps in everything else (the accelerator itself, with its
    own efficiency ceilings), so its cumulative ratio is exactly the platform ratio.
    """
    a_old, a_new = hardware.get(old), hardware.get(new)
    gbt = global_batch_tokens or GLOBAL_BATCH_TOKENS["central"]

    def run(acc):
        d = gpus_for_deadline(model, acc, precision, tokens=tokens, days=days, seq_len=seq_len,
                              global_batch_tokens=gbt, stack=stack, scenario=scenario)
        if not d.feasible:
            raise ValueError(f"decompose_ratio: {acc.id} (with swapped attributes) cannot meet the deadline: "
                             f"{d.message}")
        return d

    return _decomposition_rows(run, a_old, a_new, old)


def _decomposition_rows(run, a_old, a_new, old: str) -> list[dict]:
    """Swap ``a_new``'s attribute groups (:data:`DECOMPOSITION_STEPS`) into ``a_old`` one at a
    time, re-running ``run(accelerator) -> Deadline`` after each; each step's factor and its share
    of log(total ratio). The remainder (everything not swapped) is the last row."""
    base = run(a_old)
    rows = [{"step": f"{old} (baseline)", "gpus": base.gpus, "mfu": base.estimate.mfu,
             "ratio_to_old": 1.0, "factor": 1.0}]
    acc = a_old
    prev = base.gpus
    for name, fields in DECOMPOSITION_STEPS:
        acc = _swapped(acc, a_new, fields)
        d = run(acc)
        rows.append({"step": name, "gpus": d.gpus, "mfu": d.estimate.mfu, "ratio_to_old": d.gpus / base.gpus,
                     "factor": d.gpus / prev})
        prev = d.gpus
    d = run(a_new)
    rows.append({"step": "efficiency ceilings and the rest", "gpus": d.gpus, "mfu": d.estimate.mfu,
                 "ratio_to_old": d.gpus / base.gpus, "factor": d.gpus / prev})
    total = math.log(d.gpus / base.gpus) if d.gpus != base.gpus else float("nan")
    for r in rows:
        r["share_of_log"] = (math.log(r["factor"]) / total) if (r["factor"] != 1.0 and total == total) else 0.0
    return rows


def platform_table(model, systems, precision: str = "fp4", *, tokens: float = 100e12, days: float = 30.0,
                   seq_len: int = 8192, global_batch_tokens: float | None = None, baseline: str = "GB200",
                   stack: Stack | None = None, scenario: str = "central") -> list[dict]:
    """:func:`gpus_for_deadline` for each accelerator in ``systems`` (precisions a chip lacks fall
    back to the next wider one), with the GPU ratio to ``baseline``. One dict per system with the
    :class:`Deadline` under ``deadline``."""
    gbt = global_batch_tokens or GLOBAL_BATCH_TOKENS["central"]
    out = []
    for hw in systems:
        acc = hardware.get(hw)
        d = gpus_for_deadline(model, hw, precision, tokens=tokens, days=days, seq_len=seq_len,
                              global_batch_tokens=batch_tokens(seq_len, gbt), stack=stack, scenario=scenario,
                              fallback=not acc.supports(precision))
        e = d.estimate
        out.append({"platform": hw, "gpus": d.gpus, "racks": d.racks, "domain": acc.scaleup_domain_gpus,
                    "precision_run": e.precision if e else None, "mfu": e.mfu if e else None,
                    "days_needed": d.days_needed, "step_time_s": e.step_time_s if e else None,
                    "parallelism": dict(e.parallelism) if e else None, "feasible": d.feasible,
                    "message": d.message, "deadline": d})
    base = next((r["gpus"] for r in out if r["platform"] == baseline), None)
    for r in out:
        r["ratio_to_baseline"] = (r["gpus"] / base) if (r["gpus"] and base) else None
    return out


def ratio(model, new: str = "VR200", old: str = "GB200", precision: str = "fp4", *, tokens: float = 100e12,
          days: float = 30.0, seq_len: int = 8192, global_batch_tokens: float | None = None,
          stack: Stack | None = None, scenario: str = "central") -> dict:
    """GPUs new / GPUs old to meet the same deadline (None where either cannot)."""
    rows = platform_table(model, (old, new), precision, tokens=tokens, days=days, seq_len=seq_len,
                          global_batch_tokens=global_batch_tokens, baseline=old, stack=stack, scenario=scenario)
    return {"gpus_old": rows[0]["gpus"], "gpus_new": rows[1]["gpus"], "ratio": rows[1]["ratio_to_baseline"],
            "mfu_old": rows[0]["mfu"], "mfu_new": rows[1]["mfu"]}


#: Sequences per GPU per optimizer step in the throughput regime (:func:`gpus_for_deadline_throughput`):
#: 8 x 8192 = 65,536 tokens per GPU per step, twice DeepSeek-V3's 30,700 (15,360 x 4,096 tokens
#: on 2,048 H800s) and enough that the pipeline bubble and per-step collectives amortise (a
#: stated rule, not a fit: tests check that doubling it changes the GPU count by little).
THROUGHPUT_SEQS_PER_GPU = 8


def gpus_for_deadline_throughput(model, hardware: str, precision: str = "bf16", tokens: float = 100e12,
                                 days: float = 30.0, seq_len: int = 8192, *,
                                 seqs_per_gpu: int = THROUGHPUT_SEQS_PER_GPU, stack: Stack | None = None,
                                 scenario: str = "central", fallback: bool = False,
                                 max_racks: int = 200000) -> Deadline:
    """GPUs needed when the global batch is *not* binding (the throughput regime).

    Rule: the global batch grows with the cluster, ``seqs_per_gpu`` sequences of ``seq_len`` per
    GPU in use per step, so every cluster size gets the same work per GPU per step and the
    per-GPU throughput is (nearly) independent of the cluster size (weak scaling). The per-GPU
    throughput is measured (by the full layout search) on the power-of-two number of scale-up
    domains nearest the need, whose sizes factor cleanly into TP x PP x CP x DP (an arbitrary
    count such as 979 racks = 11 x 89 would force absurd layouts), and the answer is the token
    rate over that per-GPU throughput (per GPU owned, idle spares included), rounded up to whole
    domains. ``estimate`` is the reference layout; ``days_needed`` is at the rounded count.
    Compare :func:`gpus_for_deadline` (fixed global batch: the latency / strong-scaling regime).
    """
    for name, v in (("tokens", tokens), ("days", days)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name}={v!r} must be a positive number")
    if isinstance(seqs_per_gpu, bool) or not isinstance(seqs_per_gpu, (int, np.integer)) or seqs_per_gpu < 1:
        raise ValueError(f"seqs_per_gpu={seqs_per_gpu!r} must be an integer >= 1")
    base = _context(model, hardware, precision, seq_len, seq_len, stack, scenario, fallback)
    domain = base.domain

    def best(racks):
        out = None
        for per in JOB_BLOCK_GPUS.get(domain, (domain,)):
            g = int(racks) * per
            c2 = replace(base, domain=per, batch_seqs=int(seqs_per_gpu) * g)
            i, c, r, n = _choose(c2, g, {})
            if i is None:
                continue
            e = _make_estimate(c2, c, r, i, g, n)
            if out is None or e.tokens_per_s_per_gpu * e.gpus > out.tokens_per_s_per_gpu * out.gpus:
                out = e
        return out

    def days_needed(e):
        return tokens / (e.tokens_per_s_per_gpu * e.gpus) / 86400.0

    rate = tokens / (days * 86400.0)

    def racks_needed(e):
        return max(1, math.ceil(rate / (e.tokens_per_s_per_gpu * e.gpus / ref) - 1e-9))

    ref, e = 8, None
    while ref <= max_racks:                   # a size where the model fits
        e = best(ref)
        if e is not None:
            break
        ref *= 2
    if e is None:
        return Deadline(None, None, None, None, False,
                        f"nothing fits: {base.acc.id} cannot hold the model on up to {max_racks} domains")
    for _ in range(3):                        # re-evaluate at the power of two nearest the need
        want = 2 ** max(0, round(math.log2(racks_needed(e))))
        if want == ref or want > max_racks:
            break
        e2 = best(want)
        if e2 is None:
            break
        ref, e = want, e2
    racks = racks_needed(e)
    if racks > max_racks:
        return Deadline(None, None, None, None, False,
                        f"nothing fits: {tokens:.3g} tokens in {days} days needs more than {max_racks} "
                        f"domains of {base.acc.id}")
    per_gpu = e.tokens_per_s_per_gpu * e.gpus / (ref * domain)     # per GPU owned, idle ones included
    need = tokens / (per_gpu * racks * domain) / 86400.0
    return Deadline(racks * domain, racks, e, need, True,
                    f"{racks * domain} GPUs ({racks} x {domain}) train {tokens:.3g} tokens in {need:.1f} days at "
                    f"the per-GPU throughput of {ref} domains ({e.gpus} GPUs in use) with {seqs_per_gpu} "
                    f"sequences per GPU per step")


# ---------------------------------------------------------------------------------------------
# Chapter 2: both regimes side by side, memoised (each search takes seconds; the chapter, its
# explore panel and the decomposition ask for the same searches several times)
# ---------------------------------------------------------------------------------------------

#: The two ways of sizing a cluster for a deadline. ``batch-limited``: a fixed global batch
#: (:data:`GLOBAL_BATCH_TOKENS`), :func:`gpus_for_deadline`. ``throughput``: the batch grows with
#: the cluster (:data:`THROUGHPUT_SEQS_PER_GPU` sequences per GPU per step), so the count is the
#: token rate over a per-GPU throughput, :func:`gpus_for_deadline_throughput`; this is how vendor
#: sizing divides a FLOP budget by per-GPU throughput.
REGIMES = ("batch-limited", "throughput")

_DEADLINES: dict[tuple, Deadline] = {}


def _deadline_key(model, hw, precision, tokens, days, seq_len, global_batch_tokens, regime, seqs_per_gpu,
                  scenario) -> tuple:
    if regime not in REGIMES:
        raise ValueError(f"regime={regime!r} is not allowed; allowed: {', '.join(REGIMES)}")
    acc = hw if isinstance(hw, hardware.Accelerator) else hardware.get(hw)
    gbt = None
    if regime == "batch-limited":
        gbt = batch_tokens(int(seq_len), global_batch_tokens or GLOBAL_BATCH_TOKENS["central"])
    return (architecture.spec(model), acc, precision, float(tokens), float(days), int(seq_len), gbt, regime,
            int(seqs_per_gpu) if regime == "throughput" else None, scenario)


def deadline(model, hardware_id, precision: str = "fp4", *, tokens: float = 100e12, days: float = 30.0,
             seq_len: int = 8192, global_batch_tokens: float | None = None, regime: str = "batch-limited",
             seqs_per_gpu: int = THROUGHPUT_SEQS_PER_GPU, scenario: str = "central") -> Deadline:
    """:func:`gpus_for_deadline` (``regime="batch-limited"``, the global batch rounded to whole
    sequences, central by default) or :func:`gpus_for_deadline_throughput` (``"throughput"``),
    memoised on all arguments. ``hardware_id`` is a catalogue id or an :class:`~.hardware.Accelerator`;
    a precision the chip lacks falls back to the next wider one. Same answers as the uncached calls."""
    key = _deadline_key(model, hardware_id, precision, tokens, days, seq_len, global_batch_tokens, regime,
                        seqs_per_gpu, scenario)
    hit = _DEADLINES.get(key)
    if hit is not None:
        return hit
    spec, acc, _, _, _, _, gbt, _, spg, _ = key
    fb = not acc.supports(precision)
    if regime == "batch-limited":
        d = gpus_for_deadline(spec, acc, precision, tokens=tokens, days=days, seq_len=int(seq_len),
                              global_batch_tokens=gbt, scenario=scenario, fallback=fb)
    else:
        d = gpus_for_deadline_throughput(spec, acc, precision, tokens=tokens, days=days, seq_len=int(seq_len),
                                         seqs_per_gpu=spg, scenario=scenario, fallback=fb)
    _DEADLINES[key] = d
    return d


def deadline_if_cached(model, hardware_id, precision: str = "fp4", **kw) -> Deadline | None:
    """The memoised :func:`deadline` for these arguments if it was already computed, else None
    (instant; the explore panel uses it to show exact searches where it has them)."""
    kw.setdefault("tokens", 100e12)
    kw.setdefault("days", 30.0)
    kw.setdefault("seq_len", 8192)
    kw.setdefault("global_batch_tokens", None)
    kw.setdefault("regime", "batch-limited")
    kw.setdefault("seqs_per_gpu", THROUGHPUT_SEQS_PER_GPU)
    kw.setdefault("scenario", "central")
    return _DEADLINES.get(_deadline_key(model, hardware_id, precision, kw["tokens"], kw["days"], kw["seq_len"],
                                        kw["global_batch_tokens"], kw["regime"], kw["seqs_per_gpu"],
                                        kw["scenario"]))


def _row(hw: str, acc, regime: str, d: Deadline) -> dict:
    e = d.estimate
    return {"platform": hw, "regime": regime, "gpus": d.gpus, "racks": d.racks, "domain": acc.scaleup_domain_gpus,
            "gpus_in_use": e.gpus if e else None, "precision_run": e.precision if e else None,
            "mfu": e.mfu if e else None, "days_needed": d.days_needed, "step_time_s": e.step_time_s if e else None,
            "global_batch_tokens": (e.tokens_per_s_per_gpu * e.gpus * e.step_time_s) if e else None,
            "parallelism": dict(e.parallelism) if e else None, "feasible": d.feasible, "message": d.message,
            "deadline": d}


def platform_table_regimes(model, systems, precision: str = "fp4", *, tokens: float = 100e12, days: float = 30.0,
                           seq_len: int = 8192, global_batch_tokens: float | None = None, baseline: str = "GB200",
                           regimes=REGIMES, seqs_per_gpu: int = THROUGHPUT_SEQS_PER_GPU,
                           scenario: str = "central") -> list[dict]:
    """:func:`platform_table` for each regime of :data:`REGIMES` (memoised :func:`deadline`): one
    dict per (platform, regime) with ``gpus``, ``racks``, ``gpus_in_use``, ``mfu``, ``step_time_s``,
    the global batch in tokens the chosen layout runs, and ``ratio_to_baseline`` within the regime."""
    out = []
    for regime in regimes:
        rows = []
        for hw in systems:
            d = deadline(model, hw, precision, tokens=tokens, days=days, seq_len=seq_len,
                         global_batch_tokens=global_batch_tokens, regime=regime, seqs_per_gpu=seqs_per_gpu,
                         scenario=scenario)
            rows.append(_row(hw, hardware.get(hw), regime, d))
        base = next((r["gpus"] for r in rows if r["platform"] == baseline), None)
        for r in rows:
            r["ratio_to_baseline"] = (r["gpus"] / base) if (r["gpus"] and base) else None
        out += rows
    return out


def ratio_regime(model, new: str = "VR200", old: str = "GB200", precision: str = "fp4", *,
                 regime: str = "batch-limited", **kw) -> dict:
    """GPUs new / GPUs old in ``regime`` (memoised; None where either cannot meet the deadline)."""
    d_old = deadline(model, old, precision, regime=regime, **kw)
    d_new = deadline(model, new, precision, regime=regime, **kw)
    r = (d_new.gpus / d_old.gpus) if (d_new.gpus and d_old.gpus) else None
    return {"gpus_old": d_old.gpus, "gpus_new": d_new.gpus, "ratio": r,
            "mfu_old": d_old.estimate.mfu if d_old.estimate else None,
            "mfu_new": d_new.estimate.mfu if d_new.estimate else None}


def decompose_ratio_regime(model, new: str = "VR200", old: str = "GB200", precision: str = "fp4", *,
                           regime: str = "batch-limited", **kw) -> list[dict]:
    """:func:`decompose_ratio` in either regime of :data:`REGIMES`, through the memoised
    :func:`deadline` (same rows, same steps; in the batch-limited regime the same numbers as
    :func:`decompose_ratio`)."""
    a_old, a_new = hardware.get(old), hardware.get(new)

    def run(acc):
        d = deadline(model, acc, precision, regime=regime, **kw)
        if not d.feasible:
            raise ValueError(f"decompose_ratio_regime: {acc.id} (with swapped attributes) cannot meet the "
                             f"deadline ({regime}): {d.message}")
        return d

    rows = _decomposition_rows(run, a_old, a_new, old)
    for r in rows:
        r["regime"] = regime
    return rows


def format_layout(parallelism: dict | None) -> str:
    """A parallel layout in one short line, e.g. ``TP2 PP14x6 CP16 EP128 DP512 mb1 sel Z1``."""
    if not parallelism:
        return "—"
    p = parallelism
    pp = f"PP{p.get('pp', 1)}" + (f"x{p['interleave']}" if p.get("interleave", 1) > 1 else "")
    rc = {"none": "no-rc", "selective": "sel-rc", "partial": "part-rc", "full": "full-rc"}.get(p.get("recompute"), "")
    return " ".join(x for x in (f"TP{p.get('tp', 1)}", pp, f"CP{p.get('cp', 1)}", f"EP{p.get('ep', 1)}",
                                f"DP{p.get('dp', 1)}", f"mb{p.get('microbatch', 1)}", rc,
                                f"Z{p['zero']}" if "zero" in p else "") if x)
