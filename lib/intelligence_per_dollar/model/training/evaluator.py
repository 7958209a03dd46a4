"""The vectorised evaluator: step time and memory of whole arrays of candidate configurations
(one element per candidate), composed from the named stages.

Step time of the bottleneck pipeline stage (Narayanan et al. 2021, "Efficient Large-Scale Language
Model Training on GPU Clusters Using Megatron-LM", SC'21, section 2.2 and 3):

    t_step = (m + bubble) * t_microbatch + t_dp_exposed + t_optimizer

``t_microbatch`` is the forward + backward (+ recompute) time of one micro-batch on the stage's
layers (:func:`layer_times`: :mod:`.compute` kernels plus the exposed :mod:`.communication`),
the LM head where it sits on the critical path, and the pipeline sends; the bubble comes from
:mod:`.pipeline`, memory from :mod:`.memory`, the optimizer step from :mod:`.optimizer`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from intelligence_per_dollar.model import architecture
from intelligence_per_dollar.model.training import communication, compute, host, memory, optimizer, pipeline
from intelligence_per_dollar.model.training.context import Context, Layout, layout

__all__ = ["LayerTimes", "layer_times", "evaluate"]


@dataclass(frozen=True, eq=False)
class _Common:
    """Per-layer times shared by dense and MoE layers, and the recompute mode's quantities."""

    attention_gemm: object
    core_f: object
    core_b: object
    tp_all_reduce: object
    cp_f: object
    cp_b: object
    recompute_fraction: object
    selective: object
    recompute_skipped_gemm: object = 0.0


@dataclass(frozen=True, eq=False)
class LayerTimes:
    """Forward, backward and recompute time of one layer and micro-batch, and their sum by part."""

    fwd: object
    bwd: object
    recompute: object
    parts: Mapping[str, object]


NO_LAYER = LayerTimes(0.0, 0.0, 0.0, {k: 0.0 for k in ("gemm", "attention_core", "memory_bound", "tp_comm",
                                                       "cp_comm", "ep_a2a", "host_launch")})


def layer_times(ctx: Context, lay: Layout, common: _Common, t_ffn, bytes_per_token, t_all_to_all,
                moe: bool) -> LayerTimes:
    """:class:`LayerTimes` of a layer whose FFN takes ``t_ffn`` forward: GEMMs (backward twice
    the forward), attention core, memory-bound kernels, and the exposed TP, CP and EP collectives.
    Recompute repeats the whole forward for the fully recomputed share of layers (less the GEMMs whose outputs the
    stack keeps, ``Stack.full_recompute_keeps``), else (selective)
    the attention core, or under per-op selective AC every second matmul and the elementwise kernels.
    A MoE layer whose dispatcher syncs the host (:mod:`.host`) adds the host launch time its
    forward or its backward GPU work cannot hide, and one whose activations are offloaded the copy
    time they cannot hide (:func:`.memory.offload_exposed_s`); both count as ``host_launch``."""
    gemm_f = common.attention_gemm + t_ffn
    tp_f, tp_b = communication.tp_exposed_s(ctx, lay, common.tp_all_reduce, gemm_f)
    mem_f, mem_b = compute.memory_bound_s(ctx, lay, bytes_per_token, moe)
    compute_f = gemm_f + common.core_f + mem_f
    compute_b = 2 * gemm_f + common.core_b + mem_b
    a2a_f, a2a_b = communication.ep_exposed_s(ctx, t_all_to_all, compute_f, compute_b)
    host_f, host_b = 0.0, 0.0
    if moe:
        gpu_f, gpu_b = compute_f + tp_f + common.cp_f + a2a_f, compute_b + tp_b + common.cp_b + a2a_b
        host_f, host_b = host.host_bound_s(ctx, lay, gpu_f, gpu_b)
        off_f, off_b = memory.offload_exposed_s(ctx, lay, gpu_f + host_f, gpu_b + host_b)
        host_f, host_b = host_f + off_f, host_b + off_b
    fwd = compute_f + tp_f + common.cp_f + a2a_f + host_f
    bwd = compute_b + tp_b + common.cp_b + a2a_b + host_b
    rfrac, sel_rc = common.recompute_fraction, common.selective
    op_g, op_m = compute.per_op_recompute_s(ctx, lay, gemm_f, mem_f, moe)
    skip = common.recompute_skipped_gemm      # GEMMs whose outputs a full recompute keeps (Stack.full_recompute_keeps)
    re = rfrac * (fwd - skip) + (1 - rfrac) * (sel_rc + op_g + op_m)
    parts = {"gemm": 3 * gemm_f + rfrac * (gemm_f - skip) + (1 - rfrac) * op_g,
             "attention_core": common.core_f + common.core_b + rfrac * common.core_f + (1 - rfrac) * sel_rc,
             "memory_bound": mem_f + mem_b + rfrac * mem_f + (1 - rfrac) * op_m,
             "tp_comm": tp_f + tp_b + rfrac * tp_f,
             "cp_comm": common.cp_f + common.cp_b + rfrac * common.cp_f,
             "ep_a2a": a2a_f + a2a_b + rfrac * a2a_f,
             "host_launch": host_f + host_b + rfrac * host_f}
    return LayerTimes(fwd, bwd, re, parts)


def evaluate(ctx: Context, c: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Step time and memory of candidate configurations ``c`` (arrays: tp, pp, dp, cp, ep,
    microbatch, interleave, recompute (0 none, 1 selective, 2 full, 3 partial), zero (0-3)).

    Returns arrays: ``step_time_s``, ``memory_per_gpu_bytes`` and the parts of both.
    """
    lay = layout(ctx, c)
    params = memory.params_per_gpu(ctx, lay)
    act_dense, act_moe = memory.activations_per_token(ctx, lay)
    mem = memory.memory_per_gpu(ctx, lay, memory.model_state_bytes(ctx, lay, params), act_dense, act_moe)
    core_f, core_b = compute.attention_core_s(ctx, lay)
    cp_f, cp_b = communication.cp_exposed_s(ctx, lay, core_f, core_b)
    sel = compute.selective_recompute_s(ctx, lay, core_f, act_dense.core)
    t_tp = communication.tp_all_reduce_s(ctx, lay)
    t_attn = compute.attention_gemm_s(ctx, lay)
    common = _Common(t_attn, core_f, core_b, t_tp, cp_f, cp_b, mem.recompute_fraction,
                     np.where(lay.recompute >= 1, sel, 0.0), compute.recompute_kept_gemm_s(ctx, lay, t_attn))
    dense = layer_times(ctx, lay, common, compute.dense_ffn_gemm_s(ctx, lay), act_dense.per_gpu, 0.0, False)
    t_a2a = communication.ep_all_to_all_s(ctx, lay)
    moe = NO_LAYER
    if architecture.moe_layers(ctx.s):
        moe = layer_times(ctx, lay, common, compute.moe_ffn_gemm_s(ctx, lay), act_moe.per_gpu, t_a2a, True)
    stage = pipeline.stage_times(ctx, lay, dense, moe, compute.lm_head_s(ctx, lay),
                                 communication.pipeline_p2p_s(ctx, lay))
    t_dp = communication.data_parallel_s(ctx, lay, params, stage.forward_s, stage.backward_s)
    # the optimizer's share of the step: its update and the gradient-accumulation passes that feed it
    t_opt = optimizer.step_s(ctx, lay, params) + optimizer.grad_accumulation_s(ctx, lay, params)
    tp = lay.tp
    host_fits = mem.host_offload <= (ctx.acc.host_memory_bytes or np.inf)
    return {"step_time_s": stage.pipeline_s + t_dp + t_opt, "memory_per_gpu_bytes": mem.total,
            "fits": (mem.total <= mem.usable) & host_fits, "host_fits": host_fits & np.ones_like(tp, dtype=bool),
            "host_offload_bytes": mem.host_offload + 0 * tp, "usable_bytes": mem.usable, "weights_bytes": mem.weights,
            "gradients_bytes": mem.gradients, "optimizer_bytes": mem.optimizer, "activations_bytes": mem.activations,
            "pipeline_s": stage.pipeline_s, "bubble_s": stage.bubble_slots * stage.microbatch_s,
            "dp_exposed_s": t_dp, "optimizer_s": t_opt, "microbatch_s": stage.microbatch_s,
            "tp_comm_per_layer_s": np.where(tp > 1, 2 * (2 * t_tp), 0.0),
            "ep_a2a_per_layer_s": 2 * np.asarray(t_a2a) * np.ones_like(tp), "microbatches": lay.microbatches,
            "microbatch_parts_s": stage.parts_s, "recompute_fraction": mem.recompute_fraction}
