"""The pipeline stage: bubble of the schedule, activations in flight, and the bottleneck stage.

Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM", SC'21, section 2.2): one step takes ``(m + bubble) x t_microbatch`` on the
busiest stage, with ``m`` micro-batches per pipeline and a bubble of ``(pp - 1) / v``
micro-batch times for (interleaved) 1F1B with ``v`` virtual stages per rank, i.e. a bubble
fraction ``(pp - 1) / (v m + pp - 1)``. DualPipe (DeepSeek-V3 report, arXiv 2412.19437, section
3.2.1, Table 2) idles ``pp/2 - 1`` chunks, about half of 1F1B's.

A synchronous step runs at the pace of its slowest GPU (:func:`slowest_gpu_s`): chips of one SKU
sustain different clocks at the same power limit, so the clock-bound work of the busiest stage
takes longer on the slowest of the job's GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from intelligence_per_dollar.model import architecture, uncertainty
from intelligence_per_dollar.model.training.context import Context, Layout

__all__ = ["bubble_slots", "microbatches_in_flight", "slowest_gpu_s", "cost_balanced_split", "Stage", "stage_times"]


def bubble_slots(schedule: str, pp, v):
    """Idle micro-batch times of one step on a rank: ``(pp - 1) / v`` for (interleaved) 1F1B
    (Narayanan et al. 2021, section 2.2.2), ``max(pp/2 - 1, 0) / v`` for DualPipe."""
    return (pp - 1) / v if schedule == "1f1b" else np.maximum(pp / 2 - 1, 0) / v


def microbatches_in_flight(pp, m, v):
    """Micro-batches whose activations the first stage holds: ``min(pp, m)``, times
    ``1 + (pp - 1) / (pp v)`` when interleaved (Korthikanti et al. 2022, arXiv 2205.05198, section 4.2.3)."""
    return np.minimum(pp, m) * np.where(v > 1, 1 + (pp - 1) / (pp * v), 1.0)


def slowest_gpu_s(ctx: Context, lay: Layout, clock_bound_s):
    """Extra time the slowest of the job's ``N = tp x pp x cp x dp`` GPUs adds to ``clock_bound_s``, the
    compute-bound (GEMM, attention, LM head) time of one micro-batch on the busiest stage:
    ``clock_bound_s x cv x E[max of N standard normals within Tukey's fence]``.

    Same-SKU GPUs at the same power limit run at different sustained clocks (manufacturing spread under
    power management: Sinha et al., "Not All GPUs Are Created Equal", arXiv 2208.11035v3: 8% average
    variation across the GPUs of each of five clusters, outliers up to 1.5x slower than the median). Every
    layer's TP collective, every pipeline send and the DP gradient reduction wait for the slowest rank, so a
    persistent per-chip spread with coefficient of variation ``cv`` (``Context.gpu_speed_cv``, ``gpu_speed_cv``
    of data/assumptions/training.csv) slows the clock-bound work by the expected largest of ``N`` draws from the
    normal cut at Tukey's inner fence (:func:`~intelligence_per_dollar.model.uncertainty.expected_max_standard_normal`
    with :data:`~intelligence_per_dollar.model.uncertainty.TUKEY_FENCE_Z`: the outliers beyond it are the GPUs
    operators drain): 0 on one GPU, 1.4 cv on 8, 2.2 cv on 64, 2.6 cv on 1,024. HBM-bound kernels and link
    transfers keep their rate (the clock spread is the power cap's mechanism: :func:`~.context.power_capped_ceilings`).
    Approximation: the GEMM part is the whole GEMM time, so the few GEMMs on their memory roof (small models at
    small micro-batches) and the per-kernel overheads are stretched with it."""
    gpus = lay.tp * lay.pp * lay.cp * lay.dp
    z = uncertainty.expected_max_standard_normal(gpus, bound=uncertainty.TUKEY_FENCE_Z)
    return clock_bound_s * ctx.gpu_speed_cv * z


@dataclass(frozen=True, eq=False)
class Stage:
    """Times of the bottleneck pipeline stage (arrays over the candidates).

    ``microbatch_s``: one micro-batch through the stage, LM head and pipeline sends included;
    ``forward_s`` / ``backward_s``: its forward / backward layer time (what DP overlaps with);
    ``parts_s``: ``microbatch_s`` split by part (``slowest_gpu``: :func:`slowest_gpu_s`); ``bubble_slots`` and
    ``pipeline_s``, the ``(m + bubble) x microbatch_s`` of the whole step."""

    microbatch_s: object
    forward_s: object
    backward_s: object
    parts_s: Mapping[str, object]
    bubble_slots: object
    pipeline_s: object


def cost_balanced_split(layers: int, pp: int, layer_cost: float, head_cost: float) -> tuple[tuple[int, ...], int]:
    """Layers on each pipeline rank and the rank holding the LM head under nanotron's compute-cost split.

    nanotron assigns its pipeline blocks to ranks in order by cumulative compute cost (``src/nanotron/models/
    base.py`` ``build_model``: a block goes to the current rank, which moves on once the cumulative cost passes
    ``total x (rank + 1) / pp``), with the costs of ``get_block_compute_costs`` (``models/llama.py``: a decoder
    layer ``4 heads d_qkv h + 3 d_ff h``, the LM head ``vocab x h``, every other block 0). A heavy head thus leaves
    its rank few layers: the Ultra-Scale Playbook's nanotron walkthrough prints Llama 3 8B on 8 stages as 5, 4, 4, 5,
    4, 4, 4 and 2 layers plus the head. Raises ``ValueError`` for a non-positive count or cost."""
    if layers < 1 or pp < 1 or not layer_cost > 0 or head_cost < 0:
        raise ValueError(f"cost_balanced_split needs layers >= 1, pp >= 1, layer_cost > 0 and head_cost >= 0; "
                         f"got layers={layers!r}, pp={pp!r}, layer_cost={layer_cost!r}, head_cost={head_cost!r}")
    total = layers * layer_cost + head_cost
    counts, rank, cum = [0] * pp, 0, 0.0
    for _ in range(layers):
        counts[rank] += 1
        cum += layer_cost
        if cum > total * (rank + 1) / pp and rank < pp - 1:
            rank += 1
    return tuple(counts), rank          # the final norm and the head go to the rank the layers ended on


def _nanotron_costs(s) -> tuple[float, float]:
    """Per-layer and LM-head compute costs of nanotron's ``get_block_compute_costs`` (see
    :func:`cost_balanced_split`)."""
    hd = architecture.head_dim(s)
    ffn_mats = 3 if s.gated_ffn else 2
    return 4.0 * s.heads * hd * s.d_model + ffn_mats * s.d_ff * s.d_model, float(s.vocab * s.d_model)


def _bottleneck_layers(ctx: Context, lay: Layout, t_layer, t_head):
    """Layers on the bottleneck stage and whether it is the last one (which carries the head).

    With uneven splits the last virtual stage takes only the layers the others leave,
    ``L - (pp v - 1) ceil(L / (pp v))`` (none when the slack allows: Megatron-Core
    account_for_loss_in_pipeline_split / decoder_last_pipeline_num_layers), so the head costs
    time only where it makes the last rank the busiest. Without ``Stack.balanced_head_split``
    the head sits on top of a full last stage, always on the critical path."""
    L, pp, v, n_vs = ctx.s.layers, lay.pp, lay.interleave, lay.layers_per_chunk
    last_layers = (v - 1) * n_vs + np.maximum(0.0, L - (pp * v - 1) * n_vs)
    t_stage_full = t_layer * lay.layers_per_stage
    t_stage_last = t_layer * last_layers + t_head
    last_is_bottleneck = t_stage_last > t_stage_full
    if not ctx.stack.balanced_head_split:
        last_is_bottleneck = np.ones_like(t_stage_last, dtype=bool)
        last_layers = lay.layers_per_stage
    bott = np.where(last_is_bottleneck, last_layers, lay.layers_per_stage)
    if ctx.stack.cost_balanced_split:
        # nanotron's split by compute cost (no interleaving there): the busiest rank before the last, or the last
        # with its head
        layer_cost, head_cost = _nanotron_costs(ctx.s)
        split = {}
        for p in np.unique(pp):
            counts, head = cost_balanced_split(L, int(p), layer_cost, head_cost)
            split[int(p)] = (max(counts[:head] + counts[head + 1:], default=0), counts[head])
        before = np.vectorize(lambda p: split[int(p)][0])(pp).astype(float)
        last = np.vectorize(lambda p: split[int(p)][1])(pp).astype(float)
        last_slow = t_layer * last + t_head > t_layer * before
        flat = (v == 1) & (pp > 1)
        bott = np.where(flat, np.where(last_slow, last, before), bott)
        last_is_bottleneck = np.where(flat, last_slow, last_is_bottleneck)
    if ctx.stack.embedding_and_loss_in_split:
        # Megatron-Core account_for_embedding_in_pipeline_split + account_for_loss_in_pipeline_split: the input
        # embedding and the loss each take a layer's slot, L + 2 slots split evenly over pp x v virtual stages (the
        # framework refuses a split that does not divide); the first and last ranks run one layer fewer, the others
        # n v. With two stages there is no middle rank: the last carries its n v - 1 layers and the head.
        n = (L + 2) / (pp * v)
        even = (pp > 1) & (np.mod(L + 2, pp * v) == 0)
        middle = np.where(pp > 2, n * v, n * v - 1)
        edge = n * v - 1
        edge_slow = t_layer * edge + t_head > t_layer * middle
        bott = np.where(even, np.where(edge_slow, edge, middle), bott)
        last_is_bottleneck = np.where(even, edge_slow, last_is_bottleneck)
    return bott, last_is_bottleneck


def stage_times(ctx: Context, lay: Layout, dense, moe, t_head, t_p2p) -> Stage:
    """The bottleneck stage from the per-layer times of a dense and a MoE layer (``fwd``, ``bwd``,
    ``recompute``, ``parts``), the LM head time and the pipeline sends per micro-batch."""
    L = ctx.s.layers
    L_moe = architecture.moe_layers(ctx.s)
    L_dense = L - L_moe
    t_model_mb = L_dense * (dense.fwd + dense.bwd + dense.recompute) + L_moe * (moe.fwd + moe.bwd + moe.recompute)
    t_layer = t_model_mb / L
    bott_layers, last_is_bottleneck = _bottleneck_layers(ctx, lay, t_layer, t_head)
    t_stage = t_layer * bott_layers
    head_on_path = np.where(last_is_bottleneck, t_head, 0.0)
    share = bott_layers / L
    parts = {k: (L_dense * dense.parts[k] + L_moe * moe.parts[k]) * share for k in dense.parts}
    parts["lm_head"] = head_on_path
    parts["pipeline_p2p"] = t_p2p
    parts["slowest_gpu"] = slowest_gpu_s(ctx, lay, parts["gemm"] + parts["attention_core"] + head_on_path)
    t_mb = t_stage + head_on_path + t_p2p + parts["slowest_gpu"]
    # the slowest rank's forward and backward are longer by the same share (what DP overlaps with)
    stretch = t_mb / np.maximum(t_mb - parts["slowest_gpu"], 1e-30)
    t_fwd_mb = (L_dense * dense.fwd + L_moe * moe.fwd) * bott_layers / L * stretch
    t_bwd_mb = (L_dense * dense.bwd + L_moe * moe.bwd) * bott_layers / L * stretch
    slots = bubble_slots(ctx.stack.pipeline_schedule, lay.pp, lay.interleave)
    return Stage(microbatch_s=t_mb, forward_s=t_fwd_mb, backward_s=t_bwd_mb, parts_s=parts, bubble_slots=slots,
                 pipeline_s=(lay.microbatches + slots) * t_mb)
