"""The training software stack: facts about a framework version that change step time and memory
(fused attention, sequence parallelism, overlaps, pipeline schedule, MoE dispatch), not tuning knobs."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Stack", "MODERN", "MEGATRON_2021", "MOE_LOAD_FACTOR", "PIPELINE_SCHEDULES"]

#: Pipeline schedules the model prices (:mod:`.pipeline`).
PIPELINE_SCHEDULES = ("1f1b", "dualpipe")


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
        if self.pipeline_schedule not in PIPELINE_SCHEDULES:
            raise ValueError(f"Stack pipeline_schedule={self.pipeline_schedule!r} is not allowed; "
                             f"allowed: {', '.join(PIPELINE_SCHEDULES)}")
        if not (isinstance(self.moe_load_factor, (int, float)) and 1.0 <= self.moe_load_factor <= 4.0):
            raise ValueError(f"Stack moe_load_factor={self.moe_load_factor!r} must be in [1, 4]")


#: Busiest-rank over mean token load of expert-parallel ranks in real (not force-balanced) MoE
#: training, low/central/high. An assumption: DeepSeek-V3's auxiliary-loss-free balancing keeps
#: expert load "balanced" per batch but not per micro-batch (arXiv 2412.19437, section 2.1.2,
#: Fig. 9 shows per-expert load within a few tens of percent of uniform); Megatron-Core's
#: capacity-factor mode drops tokens above 1.0-1.25x the mean (moe_expert_capacity_factor).
MOE_LOAD_FACTOR = {"low": 1.0, "central": 1.1, "high": 1.25}

MODERN = Stack()
MEGATRON_2021 = Stack(flash_attention=False, sequence_parallel=False, dp_overlap=False, tp_overlap=False,
                      grad_bytes=4.0, grad_reduce_bytes=2.0)
