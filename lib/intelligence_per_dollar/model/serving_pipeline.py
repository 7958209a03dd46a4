"""Pipeline parallelism in serving: stages of whole layers, micro-batches in flight, the send between stages.

A replica of ``tp x dp x pp`` GPUs splits the model's layers into ``pp`` *stages* of ``tp x dp``
GPUs each (tensor and attention-data parallelism, and expert parallelism, inside a stage). Stages
hold consecutive whole layers: vLLM's ``get_pp_indices`` (vllm/distributed/utils.py) gives every
stage ``L // pp`` layers and the ``L mod pp`` left over one each to the stages before the last
(the last also runs the final norm and LM head); the first stage holds the token embedding, the
last the LM head. Engines place stages across nodes: "the tensor parallel size is the number of
GPUs you want to use in each node, and the pipeline parallel size is the number of nodes" (vLLM
docs, *Distributed inference and serving*); TensorRT-LLM ``pipeline_parallel_size`` likewise.

**Micro-batches in flight** (GPipe, Huang et al. 2019; Narayanan et al. 2021, "Efficient
Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC'21, section 2.2; in
inference vLLM keeps ``pp`` scheduled batches in flight, one per virtual engine, and TensorRT-LLM
``pp`` micro-batches). With ``pp`` micro-batches of ``b`` sequences per attention rank, every stage
is busy on one of them at any time, so in the steady state

* a stage's iteration ``t_stage`` is the model's iteration time for its own layers (+ the LM head on
  the last stage) plus the point-to-point send of the micro-batch's activations to the next stage;
  the slowest stage paces the pipeline (:func:`slowest_stage_s`);
* every ``t_stage`` the last stage finishes one micro-batch: output tokens/s per GPU
  ``= b dp / (t_stage tp dp pp)``;
* a sequence gets its next token after its micro-batch has gone through all ``pp`` stages:
  per-user speed ``= 1 / (pp t_stage)``;
* a new prompt passes through every stage once: TTFT is the sum of the stage times with the
  prompt on board plus ``pp - 1`` sends (:func:`through_stages_s`).

**The send** (:func:`stage_send_s`): the hidden states of the micro-batch's tokens, ``T d_model``
values in BF16. Megatron's scatter/gather optimisation (Narayanan et al. 2021 section 4.1; vLLM's
``send_tensor_dict(..., all_gather_group=tp_group)``) sends ``1/tp`` of it from each TP rank
over its own link and all-gathers it over NVLink on the receiving stage. The link is the
scale-out NIC when the replica spans NVLink domains, else NVLink (:func:`collectives.p2p_s`).

**Memory** (:func:`stage_fraction`): each GPU holds the weights and the KV cache of its stage's
layers only (``layers_on_stage / L`` of them, the fullest stage counting) for every sequence of all
``pp`` micro-batches, and one micro-batch's activation workspace.

With ``pp = 1`` every function here returns exactly what the single-stage model gives (checked in
``tests/unit/test_serving_pipeline.py`` over many configurations).
"""

from __future__ import annotations

import numpy as np

from intelligence_per_dollar.model import architecture, collectives
from intelligence_per_dollar.model import serving_kernels as kern

__all__ = ["stage_layers", "stage_fraction", "slowest_stage_s", "through_stages_s", "stage_send_s",
           "end_embedding_params", "layer_weight_bytes", "memory_bytes"]


def stage_layers(layers: int, pp, stage: int):
    """(first layer, number of layers) of pipeline stage ``stage`` (0-based) for ``pp`` stages
    (arrays over ``pp``; 0 layers where ``stage >= pp``), vLLM's ``get_pp_indices`` split:
    ``L // pp`` each, the ``L mod pp`` remaining layers one each to the stages just before the last."""
    pp = np.asarray(pp, float)
    base = np.floor(layers / pp)
    rem = layers - base * pp
    first_extra = pp - 1 - rem                       # stages first_extra .. pp - 2 take one more layer
    extra = (stage >= first_extra) & (stage < pp - 1)
    n = np.where(stage < pp, base + extra, 0.0)
    start = stage * base + np.clip(stage - first_extra, 0.0, rem)
    return start, n


def stage_fraction(layers: int, pp):
    """Fraction of the layers the fullest stage holds: ``ceil(L / pp) / L`` (1 for ``pp = 1``)."""
    return np.ceil(layers / np.asarray(pp, float)) / layers


def end_embedding_params(s, pp):
    """Embedding parameters on the fullest end stage: all of them with one stage; with ``pp > 1``
    the first stage holds the token embedding and the last the LM head (one ``V d`` matrix each,
    tied or not)."""
    return np.where(np.asarray(pp, float) > 1, float(s.vocab * s.d_model), architecture.embedding_params(s))


def _stage_times(s, pp, t_dense, t_moe, t_head):
    """Yield each stage's compute time (``-inf`` beyond ``pp``): its dense and MoE layers (the
    ``dense_layers`` leading ones of an MoE model are dense) and, on the last stage, the LM head."""
    L = s.layers
    L_dense = L - architecture.moe_layers(s)
    pp = np.asarray(pp, float)
    for i in range(int(np.max(pp))):
        start, n = stage_layers(L, pp, i)
        dense = np.clip(L_dense - start, 0.0, n)
        t = dense * t_dense + (n - dense) * t_moe + np.where(i == pp - 1, t_head, 0.0)
        yield np.where(i < pp, t, -np.inf)


def slowest_stage_s(s, pp, t_dense, t_moe, t_head):
    """Compute time of the slowest stage, which paces the pipeline (with ``pp = 1``: the whole
    model, ``(L - L_moe) t_dense + L_moe t_moe + t_head``)."""
    worst = -np.inf
    for t in _stage_times(s, pp, t_dense, t_moe, t_head):
        worst = np.maximum(worst, t)
    return worst


def through_stages_s(s, pp, t_dense, t_moe, t_head):
    """Compute time of one pass through every stage (the sum of the stage times)."""
    total = 0.0
    for t in _stage_times(s, pp, t_dense, t_moe, t_head):
        total = total + np.where(np.isfinite(t), t, 0.0)
    return total


def stage_send_s(ctx: kern.Context, tokens, tp, dp, pp):
    """Sending one micro-batch's activations to the next stage: ``tokens`` (per attention rank) x
    ``d_model`` BF16 values, ``1/tp`` of them from each TP rank point-to-point over the scale-out
    link if the replica (``tp dp pp`` GPUs) spans NVLink domains, else NVLink, then an all-gather
    over the ``tp`` ranks of the receiving stage (Narayanan et al. 2021 section 4.1). 0 for ``pp = 1``."""
    tp, dp, pp = (np.asarray(x, float) for x in (tp, dp, pp))
    vec = np.asarray(tokens, float) * ctx.s.d_model * kern.ACTIVATION_BYTES
    across = tp * dp * pp > ctx.domain
    send = np.where(across, collectives.p2p_s(vec / tp, ctx.scaleout),
                    kern.on_scaleup(ctx, 2.0, lambda up: collectives.p2p_s(vec / tp, up)))
    return np.where(pp > 1, send + kern.on_scaleup(ctx, tp, lambda up: collectives.all_gather_s(vec, tp, up)), 0.0)


def layer_weight_bytes(ctx: kern.Context, tp, r, pp=1.0):
    """Bytes of transformer-layer weights one GPU of the fullest stage holds (embedding and LM head
    excluded): dense weights split by TP, experts over the stage's ``r`` GPUs."""
    P = ctx.params
    return (kern.dense_weight_bytes(ctx) / tp + P["expert_total"] / r * ctx.expert_bytes) \
        * stage_fraction(ctx.s.layers, pp)


def memory_bytes(ctx: kern.Context, tp, r, b, dec, pre, pp=1.0):
    """(weights, KV cache, workspace) bytes per GPU of the fullest pipeline stage.

    Weights: the stage's layers (:func:`stage_fraction`) with dense weights split by TP and experts
    over the stage's ``r = tp dp`` GPUs, plus its BF16 embedding or LM head
    (:func:`end_embedding_params`). KV cache: the stage's layers for every sequence of all ``pp``
    micro-batches (``pp b`` per attention rank): its prompt and the output the engine holds blocks for
    (:attr:`serving_kernels.Context.reserved_output_tokens`: the whole output where the engine reserves it at
    admission, the tokens generated so far where it allocates blocks as they arrive). Workspace (affine in ``b`` so
    that capacity solves in closed form): activations of one micro-batch's largest iteration
    (decode batch, with the drafts it verifies, + its prefill share + one whole prompt) and FP32 logits.
    """
    s, d = ctx.s, ctx.s.d_model
    frac = stage_fraction(s.layers, pp)
    # a speculative drafter (inference._draft_s) is one more layer, with its own KV cache (DeepSeek-V3's MTP module),
    # held by the last stage; spread over the stages here, which only the fullest stage's share slightly misstates
    draft = 1.0 + (1.0 / s.layers if ctx.spec_tokens and ctx.mode != "prefill" else 0.0)
    w = layer_weight_bytes(ctx, tp, r, pp) * draft + end_embedding_params(s, pp) / tp * kern.EMBEDDING_BYTES
    seq_len = ctx.isl + (ctx.reserved_output_tokens if ctx.mode != "prefill" else 1)
    kv = (pp * b) * kern.kv_tokens_per_layer(ctx, seq_len, windowed=False) * ctx.kv_bytes_per_token \
        / kern.kv_shards(ctx, tp) * frac * draft
    T_max = dec * ctx.verify_tokens + pre + (ctx.isl if ctx.mode != "prefill" else 0.0)
    work = T_max * (8 * d + 3 * max(s.d_ff, s.expert_d_ff * max(s.top_k, 1)) / tp) * kern.ACTIVATION_BYTES \
        + (dec * ctx.verify_tokens + 1.0) * s.vocab / tp * 4.0
    return w, kv, work
