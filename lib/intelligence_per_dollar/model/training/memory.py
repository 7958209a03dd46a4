"""Memory per GPU: weights, gradients and optimizer states under ZeRO, and activations under the
recompute modes.

Model states: Rajbhandari et al. 2020 ("ZeRO", section 5): 2 + 2 + 12 bytes per parameter in
mixed precision, here with Megatron's 4-byte fp32 main gradients (``Stack.grad_bytes``); stage
1 shards the optimizer states, 2 also the gradients, 3 also the weights over the data-parallel
ranks (FSDP2 keeps no BF16 shard beside the fp32 master: ``Stack.sharded_master_params``). Activations: Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
Transformer Models", arXiv 2205.05198), section 4, Table 2: ``s b h (34 + 5 a s / h)`` bytes per
layer, divided by ``t`` with sequence parallelism, only the layer input ``2 s b h`` with full
recompute, and the first stage holding ``pp`` micro-batches (:func:`.pipeline.microbatches_in_flight`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from intelligence_per_dollar.model import architecture
from intelligence_per_dollar.model.training.compute import per_op_sac_matmuls
from intelligence_per_dollar.model.training.context import ACTIVATION_BYTES, Context, Layout
from intelligence_per_dollar.model.training.pipeline import microbatches_in_flight
from intelligence_per_dollar.sources import models

__all__ = ["OPTIMIZER_STATE_BYTES_PER_PARAM", "WEIGHT_BYTES", "LOGITS_BYTES", "FUSED_LOGITS_BYTES", "LOSS_LOGITS_BYTES",
           "logits_bytes_per_entry", "activation_bytes_per_token", "per_op_sac_bytes_per_token", "Activations",
           "activations_per_token", "ParamsPerGPU", "params_per_gpu", "ModelStates", "model_state_bytes",
           "Memory", "last_stage_layers_held", "memory_per_gpu", "offload_bytes_per_token", "offload_exposed_s"]

#: Bytes per parameter of mixed-precision Adam (Rajbhandari et al. 2020, section 3.1): fp32
#: master weights (4) + first and second moments (4 + 4); the default of ``Stack.optimizer_state_bytes``.
OPTIMIZER_STATE_BYTES_PER_PARAM = 12.0
#: Bytes per stored weight (BF16).
WEIGHT_BYTES = 2.0
#: Bytes per vocabulary entry per token an unfused loss holds at its peak, by ``Stack.loss``: Megatron-Core's in-place
#: vocab-parallel cross entropy, fp32 logits and their gradient (Korthikanti et al. 2022, 4.1); PyTorch's
#: ``F.cross_entropy`` on fp32 logits (the saved log-softmax, the incoming and outgoing gradients, fp32) or on BF16 ones.
LOSS_LOGITS_BYTES = {"megatron": 4.0 * 2, "megatron-fused": 4.0 * 2, "torch-fp32": 4.0 * 3, "torch-bf16": 2.0 * 3}
#: Megatron-Core's: the default stack's (kept under its old name).
LOGITS_BYTES = LOSS_LOGITS_BYTES["megatron"]
#: BF16 logits whose gradient the fused cross entropy writes in place (``Stack.fused_cross_entropy``).
FUSED_LOGITS_BYTES = 2.0


def logits_bytes_per_entry(stack) -> float:
    """Bytes per vocabulary entry per token that the loss keeps for the logits and their gradients under ``stack``:
    :data:`FUSED_LOGITS_BYTES` with the fused cross entropy, else :data:`LOSS_LOGITS_BYTES` of ``Stack.loss``."""
    if stack.fused_cross_entropy:
        return FUSED_LOGITS_BYTES
    return LOSS_LOGITS_BYTES[stack.loss]


def activation_bytes_per_token(s: models.ModelSpec, seq_len: int, flash: bool, moe: bool,
                               saved_gemm_input_bytes: float = ACTIVATION_BYTES, dropout: bool | None = None):
    """Stored activation bytes per token of one layer, split (split_by_tp, not_split_without_sp, core).

    Korthikanti et al. 2022, section 4.1 (GPT: 11h attention + 19h MLP + 4h norms = 34h, plus
    5 a s for the unfused attention core), generalised to GQA/MLA, SwiGLU and MoE FFNs.
    ``core`` is the attention-core part that selective recompute drops.
    ``saved_gemm_input_bytes``: bytes per element of the inputs that the linear layers save for
    their weight gradients (2 for BF16; 1 for FP8 and 0.5625 for NVFP4 when Transformer Engine
    saves the quantized cast). Flash attention's Q, K, V and output stay BF16.
    ``dropout``: whether the run trains with dropout (a 1-byte mask after the attention and after the FFN);
    None takes the model type's usual setting (GPT-style non-gated FFNs with, SwiGLU models without).
    """
    d, hd = s.d_model, architecture.head_dim(s)
    hq = s.heads * hd
    q = saved_gemm_input_bytes
    if dropout is None:                          # GPT-style models train with dropout masks (1 byte)
        dropout = not s.gated_ffn
    dropout = int(bool(dropout))
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


def offload_bytes_per_token(s: models.ModelSpec, saved_gemm_input_bytes: float = ACTIVATION_BYTES) -> tuple[float, float]:
    """(bytes per token of a MoE layer that fine-grained activation offloading takes out of HBM, bytes it moves to
    the host and back): every routed copy's saved activations leave the GPU (:func:`activation_bytes_per_token`'s
    routed part: FC1 input, FC1 output, FC2 input); the FC1 input (``saved_gemm_input_bytes`` each) and the BF16
    FC1 output cross the CPU-GPU link, the activation output (FC2 input) is recomputed from the reloaded FC1 output
    (Megatron-Core ``offload_modules`` of the expert MLP with ``recompute_modules=["moe_act"]``). 0 for a dense
    model."""
    if not s.experts:
        return 0.0, 0.0
    q, d, f, k = saved_gemm_input_bytes, s.d_model, s.expert_d_ff, s.top_k
    fc1_out = (2 if s.gated_ffn else 1) * f * ACTIVATION_BYTES
    removed = k * (fc1_out + q * f + q * d)
    return float(removed), float(k * (fc1_out + q * d))


def offload_exposed_s(ctx: Context, lay: Layout, gpu_f, gpu_b):
    """Forward and backward time a MoE layer with ``Stack.moe_activation_offload`` waits for the CPU-GPU link:
    its offloaded bytes (:func:`offload_bytes_per_token`) go out during the forward and come back before the
    backward on a side stream, hidden behind the layer's own compute (``gpu_f``, ``gpu_b``) where the link
    (``Context.host_link_bytes_per_s``, the catalogue rate times the measured copy efficiency) is fast enough:
    ``max(0, t_copy - t_compute)`` each way. 0 without offload or without MoE layers."""
    _, moved = _offloaded_per_token(ctx)
    if not moved:
        return 0.0, 0.0
    if ctx.host_link_bytes_per_s <= 0:
        raise ValueError(f"Stack moe_activation_offload=True needs a CPU-GPU link: accelerator {ctx.acc.id!r} has no "
                         f"host_link_bytes_per_s in data/hardware/accelerators.csv")
    t = lay.tokens * moved / lay.tp / ctx.host_link_bytes_per_s
    return np.maximum(0.0, t - gpu_f), np.maximum(0.0, t - gpu_b)


def _offloaded_per_token(ctx: Context) -> tuple[float, float]:
    """:func:`offload_bytes_per_token` of this run's MoE layers under ``Stack.moe_activation_offload``; (0, 0) without."""
    if not ctx.stack.moe_activation_offload:
        return 0.0, 0.0
    return offload_bytes_per_token(ctx.s, _saved_gemm_input_bytes(ctx))


def _saved_gemm_input_bytes(ctx: Context) -> float:
    """Bytes per element of the inputs linear layers save for their weight gradients (quantized with
    ``Stack.lowp_activation_storage`` in FP8/FP4, else BF16)."""
    return ctx.op_bytes if (ctx.low_precision and ctx.stack.lowp_activation_storage) else ACTIVATION_BYTES


@dataclass(frozen=True, eq=False)
class Activations:
    """Stored activation bytes per token of one layer: ``per_gpu`` (what one GPU of the TP group
    stores, also the elementwise traffic), and the parts of :func:`activation_bytes_per_token`."""

    per_gpu: object
    split: float
    unsplit: float
    core: float


def activations_per_token(ctx: Context, lay: Layout) -> tuple[Activations, Activations]:
    """:class:`Activations` of a dense and of a MoE layer. FP8/FP4 GEMMs save their quantized
    inputs when ``Stack.lowp_activation_storage``; sequence parallelism splits the rest over TP."""
    st = ctx.stack
    q_saved = _saved_gemm_input_bytes(ctx)
    out = []
    for moe in (False, True):
        split, unsplit, core = activation_bytes_per_token(ctx.s, ctx.seq_len, st.flash_attention, moe, q_saved,
                                                          st.dropout_masks)
        per_tok = (split + core) / lay.tp + (unsplit / lay.tp if st.sequence_parallel else unsplit)
        out.append(Activations(per_tok, split, unsplit, core))
    return out[0], out[1]


@dataclass(frozen=True, eq=False)
class ParamsPerGPU:
    """Parameters on the busiest GPU (``dense``: attention, dense FFNs, shared experts, its share
    of the embeddings; ``expert``: routed experts) and the data-parallel group each is replicated
    over (``dp_dense = dp x cp``; ``dp_expert = tp x cp x dp / (ep x etp)``, stride ep; ``etp`` the expert tensor
    parallelism, :attr:`.context.Layout.etp`)."""

    dense: object
    expert: object
    dp_dense: object
    dp_expert: object

    @property
    def total(self):
        return self.dense + self.expert

    def sharded(self):
        """Parameters per GPU when sharded over their data-parallel groups (ZeRO)."""
        return self.dense / self.dp_dense + self.expert / self.dp_expert


def params_per_gpu(ctx: Context, lay: Layout) -> ParamsPerGPU:
    """:class:`ParamsPerGPU`: the stage's layers split over TP (dense) or EP (experts); the
    embeddings over TP, half on the first and half on the last stage when pipelined.

    Expert tensor parallelism (:attr:`.context.Layout.etp`): 1 where experts are spread over an EP group (``ep > 1``:
    the current Megatron-Bridge / NeMo MoE recipes set ``expert_tensor_parallel_size=1``); without expert parallelism
    (``ep == 1``) the experts are split over the TP group like a dense FFN, as Megatron-Core does by default
    (``expert_tensor_parallel_size`` None -> ``tensor_model_parallel_size``; Megatron-Core 0.6's ``GroupedMLP``
    already partitions its FC1/FC2 weights by the TP world size). No framework replicates whole experts on every
    TP rank. The TP collectives (:func:`.communication.tp_exposed_s`) treat an ``ep == 1`` layer as a TP-split FFN, and
    so does :func:`.compute.moe_ffn_gemm_s`."""
    s = ctx.s
    L, L_moe = s.layers, architecture.moe_layers(s)
    emb = architecture.embedding_params(s)
    expert_total = L_moe * s.experts * architecture.params_per_layer(s)["expert"] if L_moe else 0.0
    dense_total = architecture.total_params(s) - emb - expert_total
    tp, pp = lay.tp, lay.pp
    stage_share = lay.layers_per_stage * pp / L
    dense = dense_total / (tp * pp) * stage_share + emb / tp * np.where(pp > 1, 0.5, 1.0)
    expert = expert_total / (lay.ep * lay.etp * pp) * stage_share
    return ParamsPerGPU(dense, expert, lay.dp * lay.cp, tp * lay.cp * lay.dp / (lay.ep * lay.etp))


@dataclass(frozen=True, eq=False)
class ModelStates:
    """Bytes per GPU of weights, gradients and optimizer states."""

    weights: object
    gradients: object
    optimizer: object


def model_state_bytes(ctx: Context, lay: Layout, params: ParamsPerGPU) -> ModelStates:
    """:class:`ModelStates` under ZeRO stage ``lay.zero`` (Rajbhandari et al. 2020, section 5.1:
    stage 1 shards optimizer states, 2 gradients, 3 weights). DualPipe keeps two copies of the
    stage's weights (DeepSeek-V3, 3.2.1); ZeRO-3 holds a gathered working copy of one layer."""
    zero, P, shard = lay.zero, params.total, params.sharded()
    # ZeRO-3: a BF16 shard beside the fp32 master (Megatron, DeepSpeed), or none where the fp32 shard the
    # optimizer steps is the stored parameter (FSDP2, Stack.sharded_master_params: counted in the 12 bytes)
    weights = np.where(zero >= 3, 0.0 if ctx.stack.sharded_master_params else shard, P) * WEIGHT_BYTES
    grads = np.where(zero >= 2, shard, P) * ctx.stack.grad_bytes
    optim = np.where(zero >= 1, shard, P) * ctx.stack.optimizer_state_bytes
    if ctx.stack.pipeline_schedule == "dualpipe":
        weights = weights * 2.0
    if zero.ndim and np.any(zero >= 3):
        weights = weights + np.where(zero >= 3, P / lay.layers_per_stage * WEIGHT_BYTES * 2, 0.0)
    return ModelStates(weights, grads, optim)


@dataclass(frozen=True, eq=False)
class Memory:
    """Bytes per GPU by part, their total, the usable HBM and the share of layers fully recomputed."""

    weights: object
    gradients: object
    optimizer: object
    activations: object
    total: object
    usable: float
    recompute_fraction: object
    host_offload: object = 0.0


def per_op_sac_bytes_per_token(s: models.ModelSpec, moe: bool, ep=1, dedup: bool = False) -> float:
    """Bytes per token one layer stores under torchtitan's per-op selective AC: the checkpointed
    layer input, the attention (SDPA) output and the saved (every other) matmul outputs, all BF16
    (:func:`~.compute.per_op_sac_matmuls`; ``torchtitan/models/llama3/parallelize_llama.py``). A MoE layer's
    routed experts keep nothing (their grouped GEMMs are recomputed); with expert parallelism (``ep`` > 1) the
    save list keeps the outputs of the dispatch and of the combine, whose size depends on the dispatcher:

    * ``dedup`` False, torchtitan's "standard" backend (``torchtitan/distributed/expert_parallel.py``
      ``ExpertParallel``: ``all_to_all_single_autograd`` of the routed input, one copy per chosen expert, both
      ways): ``top_k`` rows of ``d`` each per token, twice;
    * ``dedup`` True, DeepEP (``torchtitan/distributed/deepep/deepep.py``: the ``deepep::dispatch`` and
      ``deepep::combine`` ops the parallelize step adds to ``_op_sac_save_list``): dispatch returns each token once
      per destination rank, :func:`~intelligence_per_dollar.model.architecture.expert_groups_hit` of ``ep`` rows
      per token on average, and combine returns the reduced token, one row."""
    _, saved = per_op_sac_matmuls(s, moe)
    a2a = 0.0
    if moe:
        ep = np.asarray(ep, float)
        ranks = architecture.expert_groups_hit(ep, s.top_k)
        a2a = np.where(ep > 1, (ranks + 1.0) * s.d_model if dedup else 2.0 * s.top_k * s.d_model, 0.0)
    out = ACTIVATION_BYTES * (s.d_model + s.heads * architecture.head_dim(s) + saved + a2a)
    return float(out) if np.ndim(out) == 0 else out


def full_recompute_kept_bytes_per_token(ctx: Context, tp):
    """Bytes per token of one layer on one GPU that a full recompute keeps beside the layer input
    (``Stack.full_recompute_keeps``): the Q / K / V projection outputs (``heads + 2 kv_heads`` heads of ``head_dim``,
    split over TP by head), and for ``"attention-projections"`` the output projection's too (``d_model``, split over
    TP with sequence parallelism); 0 for ``"none"``."""
    s, keeps = ctx.s, ctx.stack.full_recompute_keeps
    if keeps == "none":
        return 0.0
    kept = (s.heads + 2 * s.kv_heads) * architecture.head_dim(s) / tp
    if keeps == "attention-projections":
        kept = kept + s.d_model / (tp if ctx.stack.sequence_parallel else 1)
    return ACTIVATION_BYTES * kept


def _per_layer(ctx: Context, lay: Layout, dense: Activations, moe: Activations):
    """Activation bytes of one layer and micro-batch, averaged over dense and MoE layers: stored
    in full, selective (the attention core recomputed; or torchtitan's per-op set,
    ``Stack.selective_recompute``), and the layer input alone (full recompute; with the GEMM outputs the stack keeps,
    :func:`full_recompute_kept_bytes_per_token`); plus the
    working set of recomputing one layer."""
    T, tp = lay.tokens, lay.tp
    per_op = ctx.stack.selective_recompute == "per-op"

    def kinds(a: Activations, moe_layer: bool):
        if per_op:
            kept = per_op_sac_bytes_per_token(ctx.s, moe_layer, lay.ep, ctx.stack.ep_dedup)
            return T * a.per_gpu, np.minimum(T * kept / tp, T * a.per_gpu)
        return T * a.per_gpu, T * (a.per_gpu - a.core / tp)

    full_d, sel_d = kinds(dense, False)
    full_m, sel_m = kinds(moe, True) if architecture.moe_layers(ctx.s) else (full_d, sel_d)
    removed = T * _offloaded_per_token(ctx)[0] / tp         # the routed block's activations on the host
    full_m, sel_m = full_m - removed, np.maximum(sel_m - removed, 0.0)
    frac_moe = architecture.moe_layers(ctx.s) / ctx.s.layers
    layer_input = T * 2 * ctx.s.d_model / (tp if ctx.stack.sequence_parallel else 1)
    layer_input = layer_input + T * full_recompute_kept_bytes_per_token(ctx, tp)
    return ((1 - frac_moe) * full_d + frac_moe * full_m, (1 - frac_moe) * sel_d + frac_moe * sel_m,
            layer_input, np.maximum(full_d, full_m))


def _partial_recompute_fraction(lay: Layout, fixed, held, a_sel, a_inp, usable):
    """Share of layers fully recomputed in the "partial" mode: full recompute of just enough layers per stage to fit, the others
    selective (Megatron-Core recompute_method=block, recompute_num_layers)."""
    need = (fixed + held * a_sel - usable) / np.maximum(held * (a_sel - a_inp), 1e-30)
    n = lay.layers_per_stage
    return np.clip(np.ceil(np.clip(need, 0.0, 1.0) * n - 1e-9) / n, 0.0, 1.0)


def last_stage_layers_held(lay: Layout):
    """Layer activations (in layers x micro-batches) the last pipeline stage holds at its peak:
    one micro-batch per chunk it runs in 1F1B, and under the interleaved schedule the
    ``(v - 1) pp`` warm-up chunk-micro-batches plus the one in flight (Megatron-Core
    ``pipeline_parallel/schedules.py``, interleaved warm-up count ``(pp - rank - 1) * 2 + (v - 1)
    * pp`` at ``rank = pp - 1``), each of ``layers_per_chunk`` layers."""
    return lay.layers_per_chunk * ((lay.interleave - 1) * lay.pp + 1)


def memory_per_gpu(ctx: Context, lay: Layout, states: ModelStates, dense: Activations,
                   moe: Activations) -> Memory:
    """:class:`Memory` of each candidate: model states plus the activations of the micro-batches
    in flight under its recompute mode (0 none, 1 selective, 2 full, 3 partial), the fp32 logits
    and, when recomputing, one layer's working set. With pipeline parallelism the logits sit on
    the last stage, which holds fewer micro-batches (:func:`last_stage_layers_held`) than the
    first (:func:`~.pipeline.microbatches_in_flight`): the busier of the two sets the need
    (Narayanan et al. 2021, section 2.2.1: stage ``i`` of 1F1B holds ``pp - i`` micro-batches)."""
    a_full, a_sel, a_inp, work = _per_layer(ctx, lay, dense, moe)
    held = lay.layers_per_stage * microbatches_in_flight(lay.pp, lay.microbatches, lay.interleave)
    chunk = ctx.stack.loss_chunk_tokens
    loss_tokens = np.minimum(lay.tokens, chunk) if chunk > 0 else lay.tokens     # a chunked loss: one chunk at a time
    logits = loss_tokens * ctx.s.vocab / lay.tp * logits_bytes_per_entry(ctx.stack)
    usable = ctx.acc.memory_capacity_bytes * ctx.ceil.memory_usable_fraction
    fixed = states.weights + states.gradients + states.optimizer + logits + work
    rc = lay.recompute
    rfrac = np.where(rc == 2, 1.0, np.where(rc == 3, _partial_recompute_fraction(lay, fixed, held, a_sel, a_inp,
                                                                                 usable), 0.0))
    per_layer = rfrac * a_inp + (1 - rfrac) * np.where(rc == 0, a_full, a_sel)
    recomputing = (rfrac > 0) | ((rc == 1) & (ctx.stack.selective_recompute == "per-op"))
    work_held = np.where(recomputing, work, 0.0)
    # the last stage frees the logits (and their gradient) after the LM head's backward, before
    # any layer is recomputed: the two never coexist there
    last = per_layer * last_stage_layers_held(lay) + np.maximum(work_held, logits)
    acts = np.where(lay.pp > 1, np.maximum(per_layer * held + work_held, last), per_layer * held + work_held + logits)
    total = states.weights + states.gradients + states.optimizer + acts
    # the offloaded activations of the first stage's micro-batches in flight sit in host memory
    frac_moe = architecture.moe_layers(ctx.s) / ctx.s.layers
    host = (1 - rfrac) * held * frac_moe * lay.tokens * _offloaded_per_token(ctx)[1] / lay.tp
    return Memory(states.weights, states.gradients, states.optimizer, acts, total, usable, rfrac, host)
