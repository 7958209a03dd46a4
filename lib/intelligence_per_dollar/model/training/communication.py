"""Collectives of one training step on the scale-up (NVLink) and scale-out links
(:mod:`intelligence_per_dollar.model.collectives`): tensor-parallel all-reduces, the
context-parallel KV ring, expert-parallel all-to-alls, pipeline sends and the data-parallel
gradient reduction, each with what the stack overlaps.

Tensor parallelism: two all-reduces per layer forward and two backward (Shoeybi et al. 2019,
Megatron-LM, section 3); with sequence parallelism the same bytes as all-gather +
reduce-scatter, and the input all-gathers redone in backward (Korthikanti et al. 2022, section
4.2.2). Context parallelism: ring attention (Liu et al. 2023). Pipeline sends: Narayanan et al.
2021, section 4.1 (scatter/gather). Data parallelism and ZeRO: Rajbhandari et al. 2020.
"""

from __future__ import annotations

import numpy as np

from intelligence_per_dollar.model import architecture, collectives
from intelligence_per_dollar.model.training.context import (ACTIVATION_BYTES, Context, Layout,
                                                             busiest_rank_load)
from intelligence_per_dollar.model.training.memory import ParamsPerGPU

__all__ = ["FSDP_COPY_BYTES", "fsdp_copy_s", "overlap_exposed_s", "tp_all_reduce_s", "tp_exposed_s", "cp_exposed_s",
           "ep_all_to_all_s", "expert_tp_gather_s", "ep_exposed_s", "pipeline_p2p_s", "data_parallel_s",
           "bucket_tail_s", "BUCKET_MIN_PARAMS", "BUCKET_PARAMS_PER_DP_RANK"]


def overlap_exposed_s(ctx: Context, t_comm, t_compute):
    """Time a collective of ``t_comm`` adds to the ``t_compute`` it overlaps: what the compute cannot hide,
    or the slowdown it causes the compute beside it (:func:`collectives.overlap_exposed_s` with the
    accelerator's ``overlap_compute_slowdown``)."""
    return collectives.overlap_exposed_s(t_comm, t_compute, ctx.ceil.overlap_compute_slowdown)


def tp_all_reduce_s(ctx: Context, lay: Layout):
    """One all-reduce of a micro-batch's layer activations over the TP group (hierarchical where
    the group straddles scale-up domains)."""
    tp_in = np.gcd(lay.tp.astype(np.int64), lay.domain_block)
    return collectives.hierarchical_all_reduce_s(lay.tokens * ctx.s.d_model * ACTIVATION_BYTES, lay.tp, tp_in,
                                                 ctx.scaleup, ctx.scaleout)


def tp_exposed_s(ctx: Context, lay: Layout, t_all_reduce, gemm_f):
    """Exposed TP collective time of one layer, forward and backward: 2 all-reduces each way, hidden
    behind the adjacent GEMMs (``gemm_f``) with ``Stack.tp_overlap``; sequence parallelism without
    overlap re-does the input all-gathers in backward for the weight gradients instead of storing
    the gathered tensors (Korthikanti et al. 2022, section 4.2.2). A forward-only overlap
    (``Stack.tp_overlap_backward`` False: PyTorch async TP) leaves the backward as without
    overlap; the recomputed forward of full recompute is hidden like the forward. 0 without TP."""
    st, tp = ctx.stack, lay.tp
    t_fwd = 2 * t_all_reduce
    tp_f = t_fwd if not st.tp_overlap else overlap_exposed_s(ctx, t_fwd, gemm_f)
    tp_f = np.where(tp > 1, tp_f, 0.0)
    if st.tp_overlap and st.tp_overlap_backward:
        return tp_f, tp_f
    tp_b = np.where(tp > 1, t_fwd + (t_all_reduce if st.sequence_parallel else 0.0), 0.0)
    return tp_f, tp_b


def cp_exposed_s(ctx: Context, lay: Layout, core_f, core_b):
    """Exposed context-parallel time of one layer, forward and backward.

    Ring attention (Liu et al. 2023; Megatron-Core / TE context parallelism with P2P): ``cp - 1``
    steps, each sending this rank's K,V chunk (T x kv elements) to the next rank while the core
    works on the current one; backward sends K,V and their gradients (2x). Only the part of the
    ring longer than the core is exposed, plus the first step, which nothing hides."""
    s, tp, cp = ctx.s, lay.tp, lay.cp
    hd = architecture.head_dim(s)
    if architecture.is_mla(s):
        kv_elems = s.heads * (2 * hd + architecture.rope_head_dim(s))
    else:
        kv_elems = 2 * s.kv_heads * hd
    chunk_bytes = lay.tokens * kv_elems * ACTIVATION_BYTES / tp
    cp_in = np.maximum(np.gcd((tp * cp).astype(np.int64), lay.domain_block) // tp.astype(np.int64), 1)
    link_bw = np.where(cp <= cp_in, ctx.scaleup.effective_bytes_per_s, ctx.scaleout.effective_bytes_per_s)
    link_lat = np.where(cp <= cp_in, ctx.scaleup.latency_s, ctx.scaleout.latency_s)
    t_step = link_lat + chunk_bytes / link_bw
    t_ring_f = (cp - 1) * t_step
    t_cp_f = np.where(cp > 1, overlap_exposed_s(ctx, t_ring_f, core_f * (cp - 1) / cp) + t_step, 0.0)
    t_cp_b = np.where(cp > 1, overlap_exposed_s(ctx, 2 * t_ring_f, core_b * (cp - 1) / cp) + 2 * t_step, 0.0)
    return t_cp_f, t_cp_b


def _remote_copy_scale(top_k: int, ep, ep_in):
    """Scale-out copies per token with dispatch deduplication over the one-per-expert count: the
    distinct remote domains among ``top_k`` experts drawn uniformly from ``n = ep / ep_in``
    domains, ``(n - 1)(1 - (1 - 1/n)^k)``, instead of ``k (n - 1) / n``."""
    n_dom = np.maximum(ep / ep_in, 1.0)
    distinct = architecture.expert_groups_hit(n_dom, top_k) * (n_dom - 1) / n_dom
    return np.where(n_dom > 1, distinct / np.maximum(top_k * (n_dom - 1) / n_dom, 1e-30), 1.0)


def ep_all_to_all_s(ctx: Context, lay: Layout):
    """Expert-parallel all-to-all time of one MoE layer's forward: dispatch (FP8 when training in
    FP8/FP4) + combine (BF16) of ``top_k`` copies of each token, times the busiest rank's load
    factor, plus the TP gather and scatter of the received rows where the experts are split over TP
    (:func:`expert_tp_gather_s`); 0 for a dense model or without EP."""
    s, ep = ctx.s, lay.ep
    if not architecture.moe_layers(s):
        return 0.0
    disp_bytes = 1.0 if ctx.low_precision else 2.0
    a2a_bytes = lay.tokens / lay.tp * s.top_k * s.d_model * busiest_rank_load(ctx, lay)
    ep_in = np.gcd(ep.astype(np.int64), lay.domain_block).astype(float)
    scale = _remote_copy_scale(s.top_k, ep, ep_in) if ctx.stack.ep_dedup else 1.0
    t = (collectives.hierarchical_all_to_all_s(a2a_bytes * disp_bytes, ep, ep_in, ctx.scaleup, ctx.scaleout,
                                               outer_scale=scale)
         + collectives.hierarchical_all_to_all_s(a2a_bytes * 2.0, ep, ep_in, ctx.scaleup, ctx.scaleout,
                                                 outer_scale=scale))
    return np.where(ep > 1, t + expert_tp_gather_s(ctx, lay), 0.0)


def expert_tp_gather_s(ctx: Context, lay: Layout):
    """TP all-gather of the received rows after the dispatch and reduce-scatter before the combine, one MoE layer's
    forward, where the experts are split over TP with EP > 1 (:attr:`.stack.Stack.uniform_expert_tp`, Megatron-Core
    before ``expert_tensor_parallel_size``): each GPU receives its TP group's ``top_k`` routed copies of every token
    with ``1/tp`` of the hidden dimension and gathers the rest (``all_gather_last_dim_from_tensor_parallel_region``),
    ``tokens x top_k x d_model`` BF16 values (times the busiest rank's load factor) per collective; the backward runs
    the reverse pair. 0 where the experts are not TP-split (``etp`` 1) or there is no TP."""
    s, tp = ctx.s, lay.tp
    rows = lay.tokens * s.top_k * busiest_rank_load(ctx, lay)
    tp_in = np.gcd(tp.astype(np.int64), lay.domain_block)
    t = 2 * collectives.hierarchical_reduce_scatter_s(rows * s.d_model * ACTIVATION_BYTES, tp, tp_in, ctx.scaleup,
                                                      ctx.scaleout)
    return np.where((lay.ep > 1) & (lay.etp > 1) & (tp > 1), t, 0.0)


def ep_exposed_s(ctx: Context, t_all_to_all, compute_f, compute_b):
    """Exposed all-to-all time of one layer, forward and backward. With ``Stack.ep_overlap`` the
    dispatch/combine of one micro-batch runs under another's forward or backward chunk (DualPipe;
    Megatron-Core 1F1B A2A overlap): exposed only beyond all the compute, split 1:2."""
    if not ctx.stack.ep_overlap:
        return t_all_to_all, t_all_to_all
    exposed = overlap_exposed_s(ctx, 2 * t_all_to_all, compute_f + compute_b)
    return exposed / 3.0, 2 * exposed / 3.0


def pipeline_p2p_s(ctx: Context, lay: Layout):
    """Pipeline sends per micro-batch: activation (forward) and gradient (backward) per virtual
    stage, each TP rank sending 1/tp of the tensor on its own NIC (Narayanan et al. 2021, section
    4.1 "scatter/gather"); without sequence parallelism the receiver all-gathers it over NVLink.
    Over NVLink when the whole job sits in one scale-up domain; 0 without PP."""
    st, tp = ctx.stack, lay.tp
    sp = st.sequence_parallel
    act_bytes = lay.tokens * ctx.s.d_model * ACTIVATION_BYTES
    p2p_bytes = act_bytes / (tp if (st.p2p_scatter_gather or sp) else 1)
    in_domain = (tp * lay.cp * lay.dp * lay.pp) <= ctx.domain
    t = np.where(in_domain, collectives.p2p_s(p2p_bytes, ctx.scaleup), collectives.p2p_s(p2p_bytes, ctx.scaleout))
    if not sp and st.p2p_scatter_gather:
        t = t + collectives.all_gather_s(act_bytes, tp, ctx.scaleup)
    return np.where(lay.pp > 1, 2 * lay.interleave * t, 0.0)


def data_parallel_s(ctx: Context, lay: Layout, params: ParamsPerGPU, t_fwd_mb, t_bwd_mb):
    """Exposed data-parallel time per step: gradient reduce-scatter (``Stack.grad_reduce_bytes``)
    and parameter all-gather (BF16); ZeRO-0 all-reduces, the same bytes. Dense gradients reduce
    over ``cp x dp`` ranks (stride tp), expert gradients over the ``tp x cp x dp / ep`` ranks
    holding the same experts (stride ep). With ``Stack.dp_overlap`` they hide behind the last
    micro-batch's backward / the first one's forward. Each bucket (:func:`bucket_params`; one FSDP unit per layer
    under ZeRO-3) is a collective of its own and pays the flat ring's latency (:func:`collectives.ring_latency_s`),
    which grows with every rank of the group: the term that dominates a small model on hundreds of GPUs.

    ZeRO-3 / FSDP (Rajbhandari et al. 2020, section 5.3; Zhao et al. 2023, "PyTorch FSDP", arXiv
    2304.11277, sections 3.2-3.3): every micro-batch all-gathers each layer's parameters in
    forward and again in backward (reshard after forward) and reduce-scatters its gradients; the
    gather of the next layer is prefetched under the current layer's compute (forward and
    backward prefetch), so per micro-batch the exposed time is what the layers' compute cannot
    hide, forward ``max(0, t_ag - t_fwd)`` and backward ``max(0, t_ag + t_rs - t_bwd)``, plus the
    first layer's gather, which nothing precedes (``t_ag / layers``). FP8 linear weights gather in
    1 byte with ``Stack.fsdp_fp8_all_gather`` (torchao float8 all-gather)."""
    st, zero = ctx.stack, lay.zero
    block = lay.domain_block
    in_dom_dense = np.maximum(1, block // lay.tp.astype(np.int64)).astype(float)
    in_dom_exp = np.maximum(1, block // lay.ep.astype(np.int64)).astype(float)

    def rs(n_bytes, ranks, in_dom):
        return collectives.hierarchical_reduce_scatter_s(n_bytes, ranks, in_dom, ctx.scaleup, ctx.scaleout)

    gb = st.grad_reduce_bytes
    t_rs1 = (rs(params.dense * gb, params.dp_dense, in_dom_dense)
             + rs(params.expert * gb, params.dp_expert, in_dom_exp))
    t_ag1 = (rs(params.dense * 2.0, params.dp_dense, in_dom_dense)
             + rs(params.expert * 2.0, params.dp_expert, in_dom_exp))
    # each bucket is a collective of its own and pays the ring's latency again (collectives.ring_latency_s):
    # the DDP buckets of ZeRO 0-2 (bucket_params), one FSDP unit per layer under ZeRO-3
    lat_d = collectives.ring_latency_s(params.dp_dense, in_dom_dense, ctx.scaleup, ctx.scaleout)
    lat_e = collectives.ring_latency_s(params.dp_expert, in_dom_exp, ctx.scaleup, ctx.scaleout)
    bucket = bucket_params(ctx, lay)
    more = (np.maximum(np.ceil(params.dense / bucket) - 1, 0) * lat_d
            + np.maximum(np.ceil(params.expert / bucket) - 1, 0) * lat_e)
    t_rs, t_ag = t_rs1 + more, t_ag1 + more
    t_ag = np.where(zero == 0, t_rs * 1.0, t_ag)
    if st.dp_overlap:
        # the last gradient bucket's reduce-scatter and the first parameter bucket's all-gather have no compute
        # beside them (bucket_tail_s); the other buckets overlap the last micro-batch's backward / first forward
        tail_rs, tail_ag = bucket_tail_s(ctx, lay, params, rs, in_dom_dense, t_rs, t_ag)
        t_ag_exposed = overlap_exposed_s(ctx, t_ag - tail_ag, t_fwd_mb) + tail_ag
        if st.param_gather_overlap is False:
            # the optimizer gathers the updated parameters in one collective after its step (ZeRO 1-2; under
            # ZeRO-0 the all-reduce's second half runs in backward with the first)
            t_ag_exposed = np.where(zero == 0, t_ag_exposed, t_ag1)
        t_dp = overlap_exposed_s(ctx, t_rs - tail_rs, t_bwd_mb) + tail_rs + t_ag_exposed
    else:
        t_dp = t_rs + t_ag
    ag_bytes = 1.0 if (st.fsdp_fp8_all_gather and ctx.low_precision) else 2.0
    # ZeRO-3: the whole buffer's bandwidth time, one ring latency per layer (one collective per FSDP unit)
    lat = np.where(params.dense > 0, lat_d, 0.0) + np.where(params.expert > 0, lat_e, 0.0)
    t_ag3 = (t_ag1 - lat) * ag_bytes / 2.0 + lay.layers_per_stage * lat
    t_rs3 = t_rs1 - lat + lay.layers_per_stage * lat
    t_z3 = (overlap_exposed_s(ctx, t_ag3, t_fwd_mb)
            + overlap_exposed_s(ctx, t_ag3 + t_rs3, t_bwd_mb)) * lay.microbatches
    return np.where(zero == 3, t_z3 + t_ag3 / lay.layers_per_stage + fsdp_copy_s(ctx, lay, params), t_dp)


#: HBM bytes per parameter and micro-batch that a ZeRO-3 implementation's own copies move on the compute stream
#: (:data:`~.stack.FSDP_COPY_KINDS`), before the gradient reduction's part (``2 + Stack.grad_reduce_bytes``, per-
#: parameter sharding only): FSDP2 copies the gathered buffer out to the per-parameter tensors at each of its two
#: unshards (forward, and backward after ``reshard_after_forward``), 2 B read + 2 B written each; FSDP1's flat
#: parameter is gathered in place, but the autograd backward of the views that split it (``SplitBackward``)
#: concatenates the per-parameter gradients into the flat gradient, 2 B read + 2 B written.
FSDP_COPY_BYTES = {"none": 0.0, "flat": 4.0, "per-parameter": 8.0}


def fsdp_copy_s(ctx: Context, lay: Layout, params: ParamsPerGPU):
    """Seconds per step of a ZeRO-3 implementation's parameter and gradient copies through HBM on the compute
    stream (``Stack.fsdp_copies``), at the memory-bound rate, for every micro-batch.

    ``"per-parameter"``, PyTorch FSDP2 (``torch.distributed.fsdp.fully_shard``, ``_fsdp_collectives.py``):
    ``foreach_all_gather_copy_out`` splits the all-gather output into each parameter's own tensor after every
    unshard, in ``wait_for_unshard`` on the compute stream (forward, and again in backward: 2 x (2 + 2) bytes per
    parameter), and ``foreach_reduce`` first copies the unsharded gradients into the reduce-scatter input, cast to the
    reduce dtype (``foreach_reduce_scatter_copy_in``: 2 bytes read, ``grad_reduce_bytes`` written), which the compute
    stream waits for before it frees them. ``"flat"``, PyTorch FSDP1 (``FlatParameter``): the gather writes the flat
    buffer the parameters view, and only the views' backward concatenates the gradients (4 bytes; the cast to the
    reduce dtype runs on the post-backward stream). ``"none"``: contiguous buffers the collectives read and write in
    place (Megatron-Core's distributed optimizer and FSDP, XLA's sharded programs)."""
    kind = ctx.stack.fsdp_copies
    per_param = FSDP_COPY_BYTES[kind] + (2.0 + ctx.stack.grad_reduce_bytes if kind == "per-parameter" else 0.0)
    return lay.microbatches * params.total * per_param / ctx.hbm_effective_bytes_per_s


#: Megatron-Core's default gradient bucket, ``max(40e6, 1e6 x dp_cp)`` parameters (:func:`bucket_params`)
#: (``megatron/core/distributed/distributed_data_parallel.py``: buckets grow with the data-parallel size "to ensure
#: that chunks used in NCCL ring-reduce implementations are large enough to remain bandwidth-bound").
BUCKET_MIN_PARAMS = 40e6
BUCKET_PARAMS_PER_DP_RANK = 1e6


def bucket_params(ctx: Context, lay: Layout):
    """Parameters per data-parallel gradient bucket: ``Stack.dp_bucket_params`` or, None, Megatron-Core's
    ``max(40e6, 1e6 x dp_cp)`` over the data- and context-parallel group (``megatron/core/distributed/
    distributed_data_parallel.py``; ``resolve_ddp_bucket_size`` with ``dp_cp_group``). Without an overlapped
    reduction (``Stack.dp_overlap`` False) Megatron-Core sets ``bucket_size = None``: one bucket, infinite here."""
    b = ctx.stack.dp_bucket_params
    dp_cp = lay.dp * lay.cp
    bucket = np.maximum(BUCKET_MIN_PARAMS, BUCKET_PARAMS_PER_DP_RANK * dp_cp) if b is None else float(b) + 0 * dp_cp
    return bucket if ctx.stack.dp_overlap else np.inf + 0 * dp_cp


def bucket_tail_s(ctx: Context, lay: Layout, params: ParamsPerGPU, rs, in_dom, t_rs, t_ag):
    """Seconds of the data-parallel reduce-scatter and all-gather that no compute can hide when they are
    overlapped bucket by bucket (ZeRO 0-2 with ``Stack.dp_overlap``), as ``(reduce-scatter, all-gather)``.

    Megatron-Core's DDP (``distributed_data_parallel.py``, ``param_and_grad_buffer.py``) fills its gradient
    buckets in backward order, so the last bucket to be ready holds the model's first parameters (the input
    embedding, then the first layer's): its reduce-scatter starts when backward has ended. With the parameter
    all-gather overlapped (``overlap_param_gather``) the same bucket is the first one the next forward waits
    for. The bucket is :func:`bucket_params` parameters (Megatron-Core's ``max(40e6, 1e6 x dp_cp)`` by default) or,
    where larger, the input embedding's share on this GPU (a bucket closes after the parameter that fills it),
    at most the dense parameters the GPU holds. Its reduce-scatter and all-gather are ``rs(bytes, ranks,
    in_dom)`` on its bytes over the dense data-parallel group (``in_dom`` of them in one scale-up domain), capped
    at ``t_rs`` / ``t_ag`` (the same collectives on the whole buffer). Only the first pipeline stage's
    tail delays the step: later stages finish backward earlier and their tails hide under the first stage's."""
    s, tp = ctx.s, lay.tp
    emb_in = s.vocab * s.d_model / tp                      # input embedding rows on this GPU (first stage)
    bucket = bucket_params(ctx, lay)
    tail = np.minimum(params.dense, np.maximum(bucket, emb_in))
    t_tail_rs = np.minimum(t_rs, rs(tail * ctx.stack.grad_reduce_bytes, params.dp_dense, in_dom))
    t_tail_ag = np.minimum(t_ag, rs(tail * 2.0, params.dp_dense, in_dom))
    on = lay.zero <= 2
    return np.where(on, t_tail_rs, 0.0), np.where(on, t_tail_ag, 0.0)
