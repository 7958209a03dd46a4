"""The training software stack: facts about a framework version that change step time and memory
(fused attention, sequence parallelism, overlaps, pipeline schedule, MoE dispatch), not tuning knobs."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

__all__ = ["Stack", "MODERN", "MEGATRON_2021", "DEEPSEEK_V3", "STACKS", "MOE_LOAD_FACTOR", "FP4_KEPT_PRECISIONS",
           "FP4_KEPT_LAYER_FRACTION", "PIPELINE_SCHEDULES"]

#: Pipeline schedules the model prices (:mod:`.pipeline`).
PIPELINE_SCHEDULES = ("1f1b", "dualpipe")
#: Precisions an NVFP4 recipe may keep its sensitive layers in (:attr:`Stack.fp4_kept_precision`).
FP4_KEPT_PRECISIONS = ("bf16", "fp8")


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
    ``fp4_kept_layer_fraction``: share of the transformer layers whose linear layers an NVFP4
    recipe keeps out of FP4 for stability (NVIDIA 2025, "Pretraining Large Language Models with
    NVFP4", arXiv 2509.25149, section 4: about 16% of the linear layers, the first and last
    blocks; ranges in :data:`FP4_KEPT_LAYER_FRACTION`), in ``fp4_kept_precision`` (the paper:
    BF16; FP8 is the cheaper alternative, :data:`FP4_KEPT_PRECISIONS`).
    ``ceiling_scale``: multiplies the accelerator's sustained GEMM and attention efficiency
    ceilings (:mod:`intelligence_per_dollar.model.efficiency`); 1 is the catalogue's central
    value. Kernel maturity is a property of the software on a chip: for a chip no one has
    measured, :func:`ceiling_scale_range` gives the catalogue's low/high over central.
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
    fp4_kept_layer_fraction: float = 0.16
    fp4_kept_precision: str = "bf16"
    ceiling_scale: float = 1.0

    def __post_init__(self):
        if self.pipeline_schedule not in PIPELINE_SCHEDULES:
            raise ValueError(f"Stack pipeline_schedule={self.pipeline_schedule!r} is not allowed; "
                             f"allowed: {', '.join(PIPELINE_SCHEDULES)}")
        if self.fp4_kept_precision not in FP4_KEPT_PRECISIONS:
            raise ValueError(f"Stack fp4_kept_precision={self.fp4_kept_precision!r} is not allowed; "
                             f"allowed: {', '.join(FP4_KEPT_PRECISIONS)}")
        for name, lo, hi in (("moe_load_factor", 1.0, 4.0), ("fp4_kept_layer_fraction", 0.0, 1.0),
                             ("ceiling_scale", 0.1, 2.0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                    or not lo <= v <= hi:
                raise ValueError(f"Stack {name}={v!r} must be a number in [{lo:g}, {hi:g}]")
        for name in ("grad_bytes", "grad_reduce_bytes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not 0 < v <= 8:
                raise ValueError(f"Stack {name}={v!r} must be a number in (0, 8]")


#: Busiest-rank over mean token load of expert-parallel ranks in real (not force-balanced) MoE
#: training, low/central/high. An assumption: DeepSeek-V3's auxiliary-loss-free balancing keeps
#: expert load "balanced" per batch but not per micro-batch (arXiv 2412.19437, section 2.1.2,
#: Fig. 9 shows per-expert load within a few tens of percent of uniform); Megatron-Core's
#: capacity-factor mode drops tokens above 1.0-1.25x the mean (moe_expert_capacity_factor).
MOE_LOAD_FACTOR = {"low": 1.0, "central": 1.1, "high": 1.25}

#: Share of the linear layers an NVFP4 recipe keeps out of FP4, low/central/high. Central: NVIDIA's
#: recipe (arXiv 2509.25149, section 4: ~16% of the linear layers, the first and last blocks, in
#: BF16). Low: half of that, the paper's observation that the last few blocks carry most of the
#: quantization sensitivity (an estimate). High: a quarter of the layers, a stated margin for a
#: 10T MoE no one has trained in FP4 (an assumption).
FP4_KEPT_LAYER_FRACTION = {"low": 0.08, "central": 0.16, "high": 0.25}

MODERN = Stack()
MEGATRON_2021 = Stack(flash_attention=False, sequence_parallel=False, dp_overlap=False, tp_overlap=False,
                      grad_bytes=4.0, grad_reduce_bytes=2.0)
#: DeepSeek-V3's stack (arXiv 2412.19437, section 3.2): DualPipe (bubble about half of 1F1B's,
#: two copies of the stage weights) and expert all-to-alls overlapped with computation; the
#: validation case that matches DeepSeek-V3's throughput runs it (:mod:`analysis.validation`).
DEEPSEEK_V3 = replace(MODERN, ep_overlap=True, pipeline_schedule="dualpipe")
#: Named software stacks the headline can be sized with (``modern`` is the book's default).
STACKS = {"modern": MODERN, "deepseek-v3": DEEPSEEK_V3}
