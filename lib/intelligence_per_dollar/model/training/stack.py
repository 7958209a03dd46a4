"""The training software stack: facts about a framework version that change step time and memory
(fused attention, sequence parallelism, overlaps, pipeline schedule, MoE dispatch), not tuning knobs."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from intelligence_per_dollar.sources import models

__all__ = ["Stack", "MODERN", "MEGATRON_CORE", "MEGATRON_2021", "DEEPSEEK_V3", "FSDP2", "DEEPSPEED", "STACKS",
           "MOE_LOAD_FACTOR", "FP4_KEPT_PRECISIONS", "FP4_KEPT_LAYER_FRACTION", "PIPELINE_SCHEDULES",
           "ATTENTION_KERNELS", "GROUPED_GEMM_KERNELS", "FULL_RECOMPUTE_KEEPS", "FSDP_COPY_KINDS",
           "SELECTIVE_RECOMPUTE_KINDS", "LOSS_KINDS", "HOST_OP_S", "default_stack"]

#: Pipeline schedules the model prices (:mod:`.pipeline`).
PIPELINE_SCHEDULES = ("1f1b", "dualpipe")
#: Precisions an NVFP4 recipe may keep its sensitive layers in (:attr:`Stack.fp4_kept_precision`).
FP4_KEPT_PRECISIONS = ("bf16", "fp8")
#: Flash-attention kernels a stack runs (:attr:`Stack.attention_kernel`).
ATTENTION_KERNELS = ("vendor", "fa2", "fa1", "flex")
#: Grouped-GEMM kernels a stack runs its routed experts on (:attr:`Stack.grouped_gemm_kernel`).
GROUPED_GEMM_KERNELS = ("vendor", "torch")
#: How a ZeRO-3 implementation copies parameters and gradients through HBM (:attr:`Stack.fsdp_copies`).
FSDP_COPY_KINDS = ("none", "flat", "per-parameter")
#: Which GEMM outputs the "full" recompute mode keeps beside the layer input (:attr:`Stack.full_recompute_keeps`).
FULL_RECOMPUTE_KEEPS = ("none", "qkv", "attention-projections")
#: What "selective" recompute keeps (:attr:`Stack.selective_recompute`).
SELECTIVE_RECOMPUTE_KINDS = ("attention-core", "per-op")
#: How an unfused loss holds the logits (:attr:`Stack.loss`).
LOSS_KINDS = ("megatron", "megatron-fused", "torch-fp32", "torch-bf16")


@dataclass(frozen=True)
class Stack:
    """Properties of the training software (facts about a framework version, not tuning knobs).

    ``flash_attention``: fused attention that never stores the s x s scores and skips masked
    tiles (False: Megatron 2021-22 unfused softmax, full square computed, Korthikanti's
    ``5 a s / h`` term). ``sequence_parallel``: LayerNorm/dropout activations split over TP.
    ``dp_overlap``: gradient reduce-scatter / parameter all-gather overlapped with backward /
    forward (Megatron-Core ``overlap_grad_reduce``); False: after the pipeline flush.
    ``tp_overlap``: TP collectives overlapped with the adjacent GEMMs (TE userbuffers).
    ``tp_overlap_backward``: the overlap covers the backward pass too (TE userbuffers overlap
    the data-gradient GEMMs' all-gather / reduce-scatter); False for PyTorch async TP as
    torchtitan runs it (the inductor micro-pipeline pass decomposes the forward's
    all-gather + matmul and matmul + reduce-scatter; the PyTorch team's measurement: ~20%
    faster forward, ~8% end to end on Llama 3 70B), so backward TP traffic stays exposed.
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
    scale-out network and fans it out over NVLink there (DeepEP / HybridEP, Megatron-Core's "flex"
    dispatcher; DeepSeek-V3 report section 3.2.2); False: one copy per routed expert (Megatron-Core's
    plain ``moe_token_dispatcher_type="alltoall"``, which permutes ``top_k`` copies of each token
    before an NCCL all-to-all; torchtitan's "standard" expert parallelism). Under torchtitan's per-op
    selective AC it also sets what the save list keeps of the dispatch (DeepEP: one row per
    destination rank; :func:`~.memory.per_op_sac_bytes_per_token`).
    ``moe_expert_sort``: the dispatcher groups the rows a rank receives by local expert in a pass of
    its own and restores their order before the combine (Megatron-Core's all-to-all dispatcher,
    ``sort_chunks_by_idxs``; its flex dispatcher's permute of DeepEP's output): two more passes over
    the routed rows where a rank holds several experts (:func:`.compute.permute_s`); False where the
    dispatch kernel writes them grouped per expert (HybridEP, and :data:`MODERN`'s static-budget dispatch).
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
    ``embedding_and_loss_in_split``: the pipeline split counts the input embedding and the loss as a layer each
    (Megatron-Core ``account_for_embedding_in_pipeline_split`` and ``account_for_loss_in_pipeline_split``; the
    Zero Bubble paper's Megatron-LM runs, Qi et al. 2024, arXiv 2401.10241, section 5.1: "both the initial and final
    pipeline stages possess one fewer transformer layer"): where ``L + 2`` divides over the ``pp x v`` virtual stages,
    the first and last ranks hold one layer fewer than the others and the head sits on top of the shorter last stage.
    ``cost_balanced_split``: the pipeline split assigns layers and the LM head to ranks in order by their compute cost,
    each rank filled to its share of the total (nanotron's ``build_model`` with ``get_block_compute_costs``:
    :func:`~.pipeline.cost_balanced_split`), so a heavy head leaves the last rank few layers or none and the busiest
    rank is an earlier one holding more than ``L / pp`` layers. No interleaving.
    ``moe_load_factor``: tokens on the busiest expert-parallel rank over the mean (1.0 when the
    benchmark force-balances routing, as the NeMo/Megatron-Bridge MoE benchmarks state; real
    training with auxiliary-loss-free balancing sits above 1, see :data:`MOE_LOAD_FACTOR`).
    ``attention_kernel``: ``"vendor"`` -- the accelerator's tuned fused attention (cuDNN /
    FlashAttention-3 on Hopper and later, what Transformer Engine calls; the catalogue's attention
    ceiling is measured with it); ``"fa2"`` -- FlashAttention-2 (PyTorch SDPA's flash backend in
    torch 2.5-2.8, which neither uses Hopper's wgmma/TMA nor Blackwell's tcgen05): on accelerators
    after Ampere it reaches :data:`~.compute.FA2_OVER_VENDOR` of the vendor kernel's rate; ``"fa1"`` --
    FlashAttention (v1, 2022), what GPT-NeoX, Megatron-DeepSpeed and Hugging Face ran until mid-2023: half
    FlashAttention-2's rate (:data:`~.compute.FA1_OVER_FA2`); ``"flex"`` -- PyTorch FlexAttention's Triton kernel
    (``torch.nn.attention.flex_attention`` without the FlashAttention-4 backend): on Blackwell
    :data:`~.compute.FLEX_OVER_VENDOR_BLACKWELL` of the vendor kernel's rate, before it FlashAttention-2's.
    ``selective_recompute``: what the ``"selective"`` recompute mode stores. ``"attention-core"``:
    Korthikanti et al. 2022 (everything but the unfused s x s core); ``"per-op"``: torchtitan's
    per-op selective activation checkpointing (``_apply_ac``, ``selective_ac_option="op"``):
    the layer input, the attention output and every second matmul output are saved, the other
    matmuls and all elementwise kernels are recomputed in backward.
    ``fsdp_fp8_all_gather``: ZeRO-3 / FSDP gathers the weights of FP8 linear layers in FP8
    (1 byte; torchao ``enable_fsdp_float8_all_gather``) instead of BF16.
    ``fused_cross_entropy``: the loss runs as Transformer Engine's fused cross entropy
    (Megatron-Core ``cross_entropy_loss_fusion`` with ``cross_entropy_fusion_impl="te"``;
    ``transformer_engine/pytorch/triton/cross_entropy.py``: online softmax over the BF16 logits,
    the backward kernel writes the gradient in place into them), so the logits cost 2 bytes per
    vocabulary entry per token instead of fp32 logits plus their fp32 gradient (8 bytes), and two passes over them
    instead of an unfused chain's seven or eight (:data:`~.compute.FUSED_LOSS_TRAFFIC_BYTES`); flash-attn's, apex's
    and llm.c's fused kernels are the same design.
    ``moe_host_sync``: the MoE dispatcher waits for the device once per MoE layer and forward
    pass (Megatron-Core's dropless all-to-all dispatcher, ``cuda_sync_point =
    "before_ep_alltoall"``; DeepEP's normal-mode dispatch polls its host-mapped receive counter the
    same way), so the expert block's host launch time is exposed where it exceeds its GPU time
    (:mod:`.host`); False for dispatchers with a static receive budget (HybridEP, DeepEP's
    ``num_worst_tokens``), which keep the split sizes on the device, and for CUDA-graphed MoE layers. ``host_op_s``: host time of one
    launched operator (:data:`HOST_OP_S`).
    ``fp8_current_scaling``: the FP8 recipe scales each tensor by its own current amax
    (Transformer Engine ``Float8CurrentScaling``, the "FP8-CS" of the NeMo / Megatron-Bridge
    recipes): ``Float8CurrentScalingQuantizer::quantize_impl``
    (``transformer_engine/pytorch/csrc/quantizer.cpp``) runs ``nvte_compute_amax`` over the input
    and only then ``nvte_quantize``, because "compute scale cannot be fused with quantize kernel",
    so every FP8 cast reads its BF16 input twice (:func:`~.compute.quantize_bytes_per_token`).
    False: delayed scaling (amax from history, recorded inside the cast) or block scaling
    (MXFP8 / FP8 blockwise: each block's amax inside the cast kernel), one read.
    ``moe_activation_offload``: Megatron-Core's fine-grained activation offloading of the routed
    expert block (``fine_grained_activation_offloading`` with ``offload_modules`` the expert FC1 /
    grouped MLP and ``moe_act`` recomputed, as Megatron-Bridge's large-MoE recipes and the
    Megatron-MoE-ModelZoo GB200 Qwen3-235B row set it): the expert FC1 input and output go to
    pinned host memory on a side stream during forward and come back before backward, overlapped
    with the neighbouring layers' compute; the activation output is recomputed. The memory model
    drops the routed block's saved activations from HBM (and checks the host holds them), the
    evaluator charges the transfer over the CPU-GPU link where the layer's compute cannot hide it
    (:func:`~.memory.offload_exposed_s`).
    ``sharded_master_params``: under ZeRO-3 the persistent parameter shard *is* the fp32 master copy the
    optimizer steps (PyTorch FSDP2 ``MixedPrecisionPolicy``: "FSDP ... keeps the high-precision sharded
    parameters in memory anyway ... does not require any extra memory to keep a high-precision copy of the
    parameters for the optimizer step"; ``param_dtype`` applies only to the unsharded, all-gathered copy;
    ``torch/distributed/fsdp/_fully_shard/_fsdp_api.py``), so no separate BF16 shard is stored: 4 + 4 + 8 bytes
    per sharded parameter (fp32 parameter, fp32 gradient, Adam moments), not ZeRO's 2 + 4 + 12. False:
    Megatron's distributed optimizer and DeepSpeed keep a BF16 model copy beside the fp32 master.
    ``dropout_masks``: whether the run trains with dropout, storing a 1-byte mask after the attention and after the
    FFN of every layer (Korthikanti et al. 2022, section 4.1: 2 of the 34 bytes per hidden value); None takes the
    model type's usual setting (:func:`~.memory.activation_bytes_per_token`: GPT-style non-gated FFNs with, SwiGLU
    models without); False for a framework whose models train without it (LLM Foundry's MPT: ``attn_pdrop``,
    ``resid_pdrop`` and ``emb_pdrop`` default to 0).
    ``optimizer_state_bytes``: bytes per parameter the optimizer keeps beside the gradients: mixed-precision
    Adam's fp32 master copy and two fp32 moments, 12 (Rajbhandari et al. 2020, "ZeRO", section 3.1; under
    ``sharded_master_params`` the fp32 shard that is the stored parameter is the master). A framework that
    builds its model in BF16 and steps the BF16 parameters in place keeps no master copy, and PyTorch's Adam /
    AdamW create their moments in the parameter's dtype (``torch.optim.Adam``: ``exp_avg = zeros_like(p)``), so
    the parameter shard and two BF16 moments are 6 bytes and the gradient (the parameter's dtype) 2
    (``grad_bytes``): NeMo AutoModel's custom MoE models (``initialize_weights(dtype=torch.bfloat16)`` then
    ``cast_model_to_dtype``, ``nemo_automodel/components/models/qwen3_moe/model.py``), KempnerForge
    (``build_parallel_model``: ``Transformer(...).to(dtype=param_dtype)``, ``param_dtype`` BF16 by default,
    ``kempnerforge/distributed/parallel.py`` @01b461a).
    ``loss``: how an unfused loss holds the logits (:data:`LOSS_KINDS`; ignored with ``fused_cross_entropy``), bytes per
    vocabulary entry per token at its peak (:func:`~.memory.logits_bytes_per_entry`), and the HBM traffic its kernels
    move over them, which the LM head's time carries (:data:`~.compute.LOSS_TRAFFIC_BYTES`, :func:`~.compute.loss_s`):
    ``"megatron"``, Megatron-Core's vocab-parallel cross entropy (``tensor_parallel/cross_entropy.py``: an fp32 copy
    whose exponentials are taken in place and kept, then overwritten by the gradient in backward; Korthikanti et al.
    2022 section 4.1's fp32 logits and gradient), 8; ``"megatron-fused"``, the same chain compiled into fewer kernels
    (``cross_entropy_loss_fusion`` with the ``"native"`` implementation), 8; ``"torch-fp32"``, PyTorch's
    ``F.cross_entropy`` on logits upcast to fp32 (torchtitan's ``cross_entropy_loss``: ``pred.flatten(0, 1).float()``):
    ``log_softmax`` saves its fp32 output, and its backward holds that, the incoming and the outgoing fp32 gradients at
    once, 12; ``"torch-bf16"``, the same on the BF16 logits (NeMo AutoModel's ``MaskedCrossEntropy`` with
    ``fp32_upcast: false``, as its benchmark configs set), 6.
    ``loss_chunk_tokens``: the LM head and the loss run over at most this many tokens at a time, each chunk's logits
    and their gradient freed before the next (torchtitan's ``ChunkedLossWrapper``, ``chunk_len`` 8,192 tokens by
    default, ``docs/chunked_loss.md`` @94609ad: "bounds the number of tokens processed by the LM head and loss at
    once"), so the logits the loss holds at its peak are one chunk's, not the micro-batch's; 0: unchunked.
    ``fused_elementwise``: the layer's elementwise chains (RMSNorm, rotary embedding, SwiGLU) run as fused kernels:
    Transformer Engine's fused modules, a compiler (``torch.compile`` / Inductor, XLA), or hand-written Triton
    kernels. False: PyTorch eager, where every op of a composite chain is a kernel of its own that reads and writes
    its operands through HBM (torchtitan without ``compile``, whose default it is; :func:`~.compute.
    unfused_elementwise_bytes_per_token`). torchtitan's own Llama 3.1 8B table on 8 H100 measures the cost: 5,762
    tokens/s per GPU eager against 6,667 compiled, the same layout and batch
    (``benchmarks/llama3_h100_202412_torchtitan.md``, Table 1). Time only: the memory model does not count the
    extra tensors eager autograd saves where nothing is recomputed (a norm's fp32 input, the SwiGLU product's
    operands), nor compile's other fusions (a residual add into the next norm, the loss).
    ``fused_activation``: the gated FFN's activation (SwiGLU) runs as one fused kernel; None: as ``fused_elementwise``
    says. False with ``fused_elementwise`` True: the norms and the rotary embedding are fused kernels but the
    activation runs as eager ops, as in Hugging Face nanotron (``TritonRMSNorm``, flash-attn's Triton rotary kernel,
    and ``GLUActivation``: ``torch.split`` of the merged gate/up output, then ``self.act(gate_states) * up_states``,
    "why can't we torch.jit.script GLUActivation?"; ``src/nanotron/models/llama.py``), so only the activation's
    extra traffic is priced (:func:`~.compute.unfused_elementwise_bytes_per_token`).
    ``qkv_layout_copies``: the attention block copies its operands between layouts on the compute stream, as nanotron's
    ``CausalSelfAttention`` does in training (``src/nanotron/models/llama.py``): it splits the fused QKV output and
    copies q, k and v into ``[batch, seq, heads, head_dim]`` (``transpose(0, 1).contiguous()``), then packs k and v
    for the rotary kernel (``torch.cat`` of the two, then ``permute(1, 2, 0, 3, 4).contiguous()``); the backward
    concatenates the q, k and v gradients back into the fused projection's gradient
    (:data:`~.compute.QKV_LAYOUT_COPY_BYTES`). False: the attention kernel reads the projection's output in place
    (Transformer Engine's ``sbhd`` layout, PyTorch SDPA on strided views).
    ``fused_projections``: a layer's input projections run as one GEMM each: Q, K and V as one (Megatron-Core's
    ``linear_qkv``, MPT's ``Wqkv``, flash-attn's ``MHA.Wqkv``, IBM foundation-model-stack's ``fused_weights``) and a
    gated FFN's gate and up projections as one ``2 x d_ff`` GEMM (Megatron-Core's ``linear_fc1``). False: separate
    linear layers, as torchtitan's models have them (``Attention``: ``wq``, ``wk``, ``wv``, ``wo``; ``FeedForward``:
    ``w1``, ``w3``, ``w2``; ``torchtitan/models/llama3/model/model.py`` @6404b93; its MoE experts' ``w1`` and ``w3``
    are separate grouped GEMMs), so a grouped-query model's K and V projections are GEMMs only ``kv_heads x
    head_dim / tp`` wide (:func:`~.compute.attention_gemm_s`). The FLOPs are the same; the narrow GEMMs run lower on
    the efficiency curve. Multi-head latent attention keeps the fused form (its projections are not split this way).
    ``param_gather_overlap``: with ``dp_overlap``, whether the distributed optimizer's parameter all-gather also
    hides under the next forward (Megatron-Core ``overlap_param_gather``); False where only the gradient
    reduce-scatter is overlapped and the updated parameters are gathered in one collective after the optimizer
    step, before the next forward starts (nanotron's ZeRO-1: the DDP communication hook reduce-scatters each
    gradient bucket during backward, ``ZeroDistributedOptimizer.step`` then calls ``_all_gather_params``;
    ``src/nanotron/optim/gradient_accumulator.py``, ``optim/zero.py``). None: the same as ``dp_overlap``.
    ``fsdp_copies``: how the ZeRO-3 implementation moves parameters and gradients between its communication buffers
    and the tensors the layers use (:data:`FSDP_COPY_KINDS`, :func:`~.communication.fsdp_copy_s`): ``"per-parameter"``,
    PyTorch FSDP2's per-parameter sharding, which copies the gathered buffer out to every parameter at each unshard and
    the gradients into the reduce-scatter buffer, on the compute stream; ``"flat"``, PyTorch FSDP1's flat parameter,
    gathered in place, whose views' backward concatenates the gradients; ``"none"``, collectives on contiguous buffers
    (Megatron-Core, XLA). ZeRO-3 layouts only.
    ``dp_bucket_params``: parameters per bucket of the overlapped data-parallel gradient reduction; the last
    bucket's reduce-scatter and the first's all-gather have no compute beside them
    (:func:`~.communication.bucket_tail_s`), and every bucket pays the ring's latency
    (:func:`~.communication.data_parallel_s`). None: Megatron-Core's default, ``max(40e6, 1e6 x dp_cp)``
    over the data- and context-parallel group (``distributed_data_parallel.py``); DeepSpeed ZeRO's
    ``reduce_bucket_size`` defaults to 5e8 elements (``deepspeed/runtime/zero/config.py``).
    ``uniform_expert_tp``: the routed experts are split over the TP group even where EP > 1 (expert tensor
    parallelism = TP), as Megatron-Core did before ``expert_tensor_parallel_size`` decoupled them (core 0.10, late
    2024; MegaScale-MoE, arXiv 2505.11432, section 6.1: Megatron-LM's "requirement of a uniform TP size across all
    components") and still does where a recipe leaves that size unset (it defaults to the TP size). Its all-to-all
    dispatcher then sends each token's hidden dimension split over TP and all-gathers the received rows over the TP
    group before the expert GEMMs (and reduce-scatters them before the combine): ``MoEAlltoAllTokenDispatcher``
    ``token_permutation``, "Perform tensor parallel AllGather on the hidden dimension to obtain the input tokens.
    global_input_tokens: [SEQL, H/TP] -> [SEQL, H]" (:func:`~.communication.ep_all_to_all_s`); the EP group runs over
    the data-parallel ranks of one TP rank, so EP divides ``dp x cp`` (:func:`~.search.complete`). False: current
    Megatron-Core / Megatron-Bridge recipes (``expert_tensor_parallel_size=1``), where each TP rank dispatches its own
    sequence-parallel share of the tokens.
    ``grad_accumulation_bytes``: HBM bytes per local parameter that a gradient-accumulation pass outside the GEMMs
    moves every micro-batch (:func:`~.optimizer.grad_accumulation_s`). 0 where the weight-gradient GEMM accumulates
    into the fp32 buffer itself (Megatron-LM / Megatron-Core ``gradient_accumulation_fusion``, on by default: the
    wgrad GEMM runs with ``beta = 1`` into ``main_grad``), or where no separate pass exists. nanotron's
    ``FP32GradientAccumulator`` (``accumulate_grad_in_fp32``; ``src/nanotron/optim/gradient_accumulator.py``) adds
    each parameter's BF16 gradient into its fp32 buffer after every micro-batch's backward (``fp32_grad.add_(
    half_param.grad)``, in ``backward`` or in its DDP communication hook ``fp32_accum_hook``): 2 bytes read, 4 read
    and 4 written, 10 bytes, for every local parameter (ZeRO-1 keeps the full fp32 gradient buffer).
    ``grouped_gemm_kernel``: the kernel a MoE layer's routed experts run on (:data:`GROUPED_GEMM_KERNELS`).
    ``"vendor"``: Transformer Engine's grouped linear layers (cuBLAS / cuBLASLt per expert or grouped; Megatron-Core's
    ``TEGroupedMLP``), timed at the dense GEMM rate. ``"torch"``: PyTorch's ``torch._grouped_mm``, the CUTLASS
    grouped kernel ATen ships (torchtitan's ``GroupedExperts``, ``_run_experts_grouped_mm``), whose BF16 rate is
    the ceiling ``torch_grouped_mm_fraction`` of the dense rate (:func:`~.compute.moe_ffn_gemm_s`): the dense rate on
    Hopper, about half of it on Blackwell, where ATen runs a port of its SM90 schedule (pytorch/pytorch PR 156203;
    the torchao MoE-training README times BF16 ``torch._grouped_mm`` forward and backward on B200 at 0.71-0.86
    PFLOP/s).
    ``full_recompute_keeps``: which GEMM outputs the "full" recompute mode keeps beside each layer's input
    (:data:`FULL_RECOMPUTE_KEEPS`); the recomputed forward skips those GEMMs and the memory model holds their
    outputs. ``"none"``: the whole forward is recomputed (MaxText ``full``, Paxml ``SAVE_NOTHING``, Megatron-Core
    ``recompute_granularity=full``). ``"qkv"``: the Q / K / V projections' outputs, MaxText's
    ``remat_policy=save_qkv_proj`` (``get_remat_policy`` in MaxText's ``layers/decoders.py``:
    ``jax.checkpoint_policies.save_only_these_names("query_proj", "value_proj", "key_proj", "qkv_proj")``), as
    NVIDIA's MaxText Llama 3 70B GPU recipe sets it (``dgxc-benchmarking`` ``maxtext/configure.sh``).
    ``"attention-projections"``: those and the attention output projection's, Paxml's ``SAVE_QKV_OUT_PROJ``
    (NVIDIA's Paxml GPT-3 175B recipe, ``paxml_mod_configs.py`` ``Synthetic175BCkpt``): only the MLP, the attention
    core and the elementwise kernels run again.
    """

    flash_attention: bool = True
    sequence_parallel: bool = True
    dp_overlap: bool = True
    tp_overlap: bool = False
    tp_overlap_backward: bool = True
    ep_overlap: bool = False
    grad_bytes: float = 4.0
    grad_reduce_bytes: float = 2.0
    lowp_activation_storage: bool = True
    p2p_scatter_gather: bool = True
    pipeline_schedule: str = "1f1b"
    balanced_head_split: bool = False
    embedding_and_loss_in_split: bool = False
    cost_balanced_split: bool = False
    moe_load_factor: float = 1.0
    ep_dedup: bool = True
    moe_expert_sort: bool = False
    fp4_kept_layer_fraction: float = 0.16
    fp4_kept_precision: str = "bf16"
    ceiling_scale: float = 1.0
    attention_kernel: str = "vendor"
    selective_recompute: str = "attention-core"
    fsdp_fp8_all_gather: bool = False
    fused_cross_entropy: bool = False
    moe_host_sync: bool = False
    host_op_s: float = 2.5e-5
    fp8_current_scaling: bool = False
    moe_activation_offload: bool = False
    sharded_master_params: bool = False
    dropout_masks: bool | None = None
    dp_bucket_params: float | None = None
    param_gather_overlap: bool | None = None
    optimizer_state_bytes: float = 12.0
    loss: str = "megatron"
    loss_chunk_tokens: float = 0.0
    fused_elementwise: bool = True
    fused_projections: bool = True
    fsdp_copies: str = "none"
    uniform_expert_tp: bool = False
    grad_accumulation_bytes: float = 0.0
    fused_activation: bool | None = None
    qkv_layout_copies: bool = False
    grouped_gemm_kernel: str = "vendor"
    full_recompute_keeps: str = "none"

    def __post_init__(self):
        if self.pipeline_schedule not in PIPELINE_SCHEDULES:
            raise ValueError(f"Stack pipeline_schedule={self.pipeline_schedule!r} is not allowed; "
                             f"allowed: {', '.join(PIPELINE_SCHEDULES)}")
        if self.fp4_kept_precision not in FP4_KEPT_PRECISIONS:
            raise ValueError(f"Stack fp4_kept_precision={self.fp4_kept_precision!r} is not allowed; "
                             f"allowed: {', '.join(FP4_KEPT_PRECISIONS)}")
        for name in ("fused_elementwise", "fused_projections", "uniform_expert_tp", "qkv_layout_copies"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"Stack {name}={getattr(self, name)!r} is not allowed; allowed: True, False")
        for name in ("param_gather_overlap", "fused_activation"):        # None: follows another field
            v = getattr(self, name)
            if not (v is None or isinstance(v, (bool, np.bool_))):
                raise ValueError(f"Stack {name}={v!r} is not allowed; allowed: None, True, False")
        if self.dropout_masks not in (None, True, False):
            raise ValueError(f"Stack dropout_masks={self.dropout_masks!r} is not allowed; allowed: None, True, False")
        for name, allowed in (("attention_kernel", ATTENTION_KERNELS), ("fsdp_copies", FSDP_COPY_KINDS),
                              ("grouped_gemm_kernel", GROUPED_GEMM_KERNELS),
                              ("full_recompute_keeps", FULL_RECOMPUTE_KEEPS),
                              ("selective_recompute", SELECTIVE_RECOMPUTE_KINDS), ("loss", LOSS_KINDS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"Stack {name}={getattr(self, name)!r} is not allowed; allowed: {', '.join(allowed)}")
        for name, lo, hi in (("moe_load_factor", 1.0, 4.0), ("fp4_kept_layer_fraction", 0.0, 1.0),
                             ("ceiling_scale", 0.1, 2.0), ("host_op_s", 0.0, 1e-3), ("dp_bucket_params", 1e3, 1e12),
                             ("loss_chunk_tokens", 0.0, 1e9),                 # 0: the loss unchunked
                             ("grad_accumulation_bytes", 0.0, 32.0)):
            v = getattr(self, name)
            if v is None and name == "dp_bucket_params":      # None: Megatron-Core's default bucket
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                    or not lo <= v <= hi:
                none = " or None" if name == "dp_bucket_params" else ""
                raise ValueError(f"Stack {name}={v!r} must be a number in [{lo:g}, {hi:g}]{none}")
        for name, hi in (("grad_bytes", 8), ("grad_reduce_bytes", 8), ("optimizer_state_bytes", 16)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not 0 < v <= hi:
                raise ValueError(f"Stack {name}={v!r} must be a number in (0, {hi}]")


#: Busiest-rank over mean token load of expert-parallel ranks in real (not force-balanced) MoE
#: training, low/central/high. An assumption: DeepSeek-V3's auxiliary-loss-free balancing keeps
#: expert load "balanced" per batch but not per micro-batch (arXiv 2412.19437, section 2.1.2,
#: Fig. 9 shows per-expert load within a few tens of percent of uniform); Megatron-Core's
#: capacity-factor mode drops tokens above 1.0-1.25x the mean (moe_expert_capacity_factor).
MOE_LOAD_FACTOR = {"low": 1.0, "central": 1.1, "high": 1.25}

#: Host time of one launched operator (s), low/central/high (``data/assumptions/training.csv``
#: ``host_op_s``). Central: the eager GEMM dispatch measured on the project's H200
#: (``data/assumptions/inference.csv`` ``eager_dispatch_s``, 20-30 us; Transformer Engine's GEMM
#: path rebuilds its cuBLASLt descriptors and re-runs ``cublasLtMatmulAlgoGetHeuristic`` per call,
#: as eager ``torch._scaled_mm`` does). Low: a bare C++ kernel launch plus bookkeeping; high: a
#: Transformer Engine call through its Python wrappers on a slower host core (an estimate).
HOST_OP_S = {"low": 1.0e-5, "central": 2.5e-5, "high": 4.0e-5}

#: Share of the linear layers an NVFP4 recipe keeps out of FP4, low/central/high. Central: NVIDIA's
#: recipe (arXiv 2509.25149, section 4: ~16% of the linear layers, the first and last blocks, in
#: BF16). Low: half of that, the paper's observation that the last few blocks carry most of the
#: quantization sensitivity (an estimate). High: a quarter of the layers, a stated margin for a
#: 10T MoE no one has trained in FP4 (an assumption).
FP4_KEPT_LAYER_FRACTION = {"low": 0.08, "central": 0.16, "high": 0.25}

#: Megatron-Core as the 2022-24 papers and the book's headline run it: Transformer Engine fused
#: attention, sequence parallelism, distributed optimizer (ZeRO-1), overlapped DP reduce-scatter /
#: all-gather; no TP-GEMM overlap. The headline keeps it explicitly (``STACKS["modern"]``). Its
#: MoE dispatch dedups tokens across scale-up domains (``ep_dedup``) and keeps the split sizes on the
#: device (a static receive budget, as HybridEP's), so no host sync per MoE layer (``moe_host_sync`` False).
MODERN = Stack()
#: Megatron-Core current (Megatron-Bridge / NeMo 2025-26 recipes): as :data:`MODERN` plus the TP
#: collectives overlapped with the GEMMs (``tp_comm_overlap``, Transformer Engine userbuffers) and
#: the MoE dispatch of the current recipes for large MoE across nodes, the "flex" dispatcher with DeepEP
#: (Megatron-Bridge's DeepSeek-V3 recipes on H100 and B200): one copy per destination node (``ep_dedup``)
#: and a host sync per MoE layer, DeepEP's normal-mode poll of its receive counter (``moe_host_sync``).
#: Its loss is Transformer Engine's fused cross entropy (``fused_cross_entropy``): Megatron-Bridge's
#: ``GPTModelProvider`` sets ``cross_entropy_loss_fusion=True`` and its recipes ``cross_entropy_fusion_impl="te"``
#: (``src/megatron/bridge/recipes/llama/llama3.py``, the performance configs; read 2026-12-06).
#: Recipes that state the plain ``"alltoall"`` dispatcher drop the dedup (``ep_dedup`` False; validation
#: stacks ``mbridge-2026-alltoall`` / ``mbridge-2026-fp8cs-alltoall``). Both dispatchers group the rows a rank
#: receives by local expert in passes of their own (``moe_expert_sort``).
MEGATRON_CORE = replace(MODERN, tp_overlap=True, moe_host_sync=True, moe_expert_sort=True, fused_cross_entropy=True)
MEGATRON_2021 = Stack(flash_attention=False, sequence_parallel=False, dp_overlap=False, tp_overlap=False,
                      grad_bytes=4.0, grad_reduce_bytes=2.0)
#: DeepSeek-V3's stack (arXiv 2412.19437, section 3.2): DualPipe (bubble about half of 1F1B's,
#: two copies of the stage weights) and expert all-to-alls overlapped with computation; the
#: validation case that matches DeepSeek-V3's throughput runs it (:mod:`analysis.validation`).
DEEPSEEK_V3 = replace(MODERN, ep_overlap=True, pipeline_schedule="dualpipe")
#: FSDP2 / torch-native as torchtitan runs it (Liang et al. 2024, "TorchTitan", arXiv 2410.06511,
#: sections 2.1-2.3; Zhao et al. 2023, "PyTorch FSDP", arXiv 2304.11277, section 3.3): per-block
#: parameter all-gather prefetched under the previous block (forward and, with
#: reshard_after_forward, again in backward), gradient reduce-scatter in fp32
#: (``mixed_precision_reduce="float32"``: 4-byte reduction), fp32 sharded gradients, FSDP2's per-parameter copies
#: of the gathered parameters and of the gradients into the reduce-scatter buffer (``fsdp_copies``); PyTorch SDPA
#: (FlashAttention-2) for attention; torchao Float8 saves the BF16 inputs of its linear layers
#: (no low-precision activation storage); separate Q / K / V / output and gate / up / down linear layers
#: (``fused_projections`` False); per-op selective AC; sequence parallelism with TP; expert parallelism on
#: torchtitan's default "standard" backend, an ``all_to_all_single`` of the routed input with one copy of a token
#: per chosen expert (``torchtitan/distributed/expert_parallel.py`` ``ExpertParallel``: no dedup, ``ep_dedup``
#: False; its DeepEP backend is ``ep_dedup`` True);
#: synchronous TP (async TP, forward only, is ``STACKS["fsdp2-asynctp"]``); under ``zero=3`` the fp32 parameter
#: shard is the optimizer's master copy (``sharded_master_params``); compiled (``torch.compile``, as torchtitan's
#: published benchmarks run it: fused elementwise chains; eager is ``STACKS["fsdp2-eager"]``). Layouts use ``zero=3``
#: (``zero=2`` where parameters stay gathered between micro-batches, as with PP).
#: Known mismatch on Blackwell (session 43, not changed): torchtitan itself has put cuDNN attention first on
#: compute capability 10.0 since pytorch/torchtitan PR 1196 (May 2025; +12% tokens/s on Llama 3 8B over SDPA's
#: FlashAttention-2), and NousResearch's FlashAttention-4 table on 8 B200 (``docs/fa4.md`` @5045c24) finds its SDPA
#: within 5% of FlashAttention-4 even at 32k tokens, so those runs used the vendor kernel, not the FA2 priced here.
#: Pricing them at the vendor rate moves the torchtitan Blackwell rows further fast (+24% -> +43% on NousResearch's
#: DeepEP runs): they run 24-80% below the model for a reason not yet found, which the slower attention price hides
#: in part. FA2 itself runs 2.7-3.4x slower than cuDNN on B200 (NVIDIA cudnn-frontend's B200 SDPA benchmark, causal,
#: head dim 128, 4k-32k), against 1.6-1.75x on H100, so no constant ratio serves both generations. Session 45 (set 92):
#: the gap is not torchtitan-wide: mlc-ai/pith-train issue 79's compiled Qwen3-30B-A3B on 8 B200 (FSDP, batch 8,
#: selective AC, chunked loss) runs within 1% of the model where Lambda's fork, same layout, runs 24% below it and
#: 40-84% below when eager; leads not priced: the PyTorch team's 750 W B200s sustain 1.09-1.11 PF in cuBLAS at
#: 4096-8192 cubed (facebookexperimental/triton PR 854), and per-op SAC recomputed cuDNN attention on B200 until
#: pytorch/torchtitan PR 2095 (December 2025) put it on the save list. Session 53: Lambda's logs show FlexAttention's
#: Triton kernel (stack attention kernel ``"flex"``, 0.48 of the vendor rate on Blackwell); priced so, its rows run
#: 12-16% below the model compiled and 27-73% eager. Session 54: the MoE rows' routed experts run PyTorch's BF16
#: ``torch._grouped_mm`` (``grouped_gemm_kernel`` ``"torch"``), which the torchao MoE-training README times on B200 at
#: about half the dense rate (ceiling ``torch_grouped_mm_fraction``); priced, NousResearch's DeepEP rows move from
#: 19-21% fast to 4-6% and Lambda's compiled Qwen3-30B-A3B rows from 12-16% to within 2%.
FSDP2 = replace(MODERN, grad_reduce_bytes=4.0, lowp_activation_storage=False, attention_kernel="fa2",
                selective_recompute="per-op", sharded_master_params=True, fsdp_copies="per-parameter",
                fused_projections=False, ep_dedup=False, grouped_gemm_kernel="torch")
#: DeepSpeed (ZeRO stages 1-3 with ``overlap_comm``, its pipeline engine, Megatron-DeepSpeed
#: layers): FlashAttention-2, no Megatron sequence parallelism, no TP-GEMM overlap, every TP rank
#: sends the whole activation between stages (no scatter/gather), plain 1F1B, gradient buckets of its default
#: ``reduce_bucket_size`` 5e8 (Rajbhandari et al. 2020, ZeRO, section 5; DeepSpeed pipe engine
#: ``deepspeed/runtime/pipe/engine.py``; ``deepspeed/runtime/zero/config.py``).
DEEPSPEED = replace(MODERN, sequence_parallel=False, p2p_scatter_gather=False, attention_kernel="fa2",
                    dp_bucket_params=5e8)
#: Named software stacks (``modern`` is the book's headline stack; ``megatron-core`` the current
#: Megatron-Core default; :func:`default_stack` picks one for a model).
STACKS = {"modern": MODERN, "megatron-core": MEGATRON_CORE, "megatron-core-moe": replace(MEGATRON_CORE, ep_overlap=True),
          "fsdp2": FSDP2, "fsdp2-eager": replace(FSDP2, fused_elementwise=False),
          "fsdp2-chunked-loss": replace(FSDP2, loss_chunk_tokens=8192.0),
          "fsdp2-asynctp": replace(FSDP2, tp_overlap=True, tp_overlap_backward=False), "deepspeed": DEEPSPEED,
          "megatron-2021": MEGATRON_2021, "deepseek-v3": DEEPSEEK_V3}


def default_stack(model) -> Stack:
    """The stack a current framework runs ``model`` with: Megatron-Core with TP-GEMM overlap,
    distributed optimizer and overlapped data-parallel traffic (:data:`MEGATRON_CORE`), dense or
    mixture of experts alike.

    Not the expert all-to-all overlap (``STACKS["megatron-core-moe"]``, Megatron-Core's
    ``overlap_moe_expert_parallel_comm`` taken as hiding the all-to-alls completely): the measured
    current-framework MoE runs in ``data/runs/training_runs.csv`` match without it and miss with
    it (Megatron-Bridge 25.x DeepSeek-V3 on 256 GB200 +9% -> +35%, on 1,024 H100 -4% -> +57%;
    Qwen3-235B on 256 GB200 +21% -> +55%; NeMo AutoModel DeepSeek-V3 on 1,024 H100 -15% -> +43%).
    Only DeepSeek's own DualPipe stack hides them (``stack="deepseek-v3"``, its H800 run within
    1%); without naming it that run is predicted 41% slow, the cost of an all-to-all no current
    open framework hides as well. Over the 130 Megatron-Bridge MoE rows measured in tokens/s (session 54) the
    overlap stack does no better (median |error| 22.7% without, 22.8% with); on the DeepSeek-V3 rows alone it now
    does (10.6% against 11.2% over 33), as 2026's GB200 / GB300 recipes run the overlap and name it."""
    models.spec(model)
    return MEGATRON_CORE
