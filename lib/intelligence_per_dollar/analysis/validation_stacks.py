"""The software stacks of the training validation cases (``data/runs/training_runs.csv``, column ``stack``).

Each is a :class:`~intelligence_per_dollar.model.training.Stack`: facts about the framework version a source ran,
built from the presets of :mod:`intelligence_per_dollar.model.training` with what the source states changed. The
comment above each names where the stated facts come from. :data:`STACK_FAMILIES` groups them by framework family for
the bias tables; :data:`CORRECTED_STACKS` records the stacks session 52 made from what rows' own notes state.
"""

from __future__ import annotations

from dataclasses import replace

from intelligence_per_dollar.model import training

__all__ = ["MBRIDGE_PERF", "MEGATRON_LM_FA2", "MEGATRON_LM_2024", "AUTOMODEL_BF16", "STACKS", "STACK_FAMILIES",
           "CORRECTED_STACKS"]

#: Megatron-Bridge's performance recipes (``scripts/performance``, the runs of its performance-summary tables and of
#: the MLPerf and DGX Cloud recipes built on them): Megatron-Core current with the gradient buffer in BF16, not FP32.
#: Every model family's common settings set ``cfg.mixed_precision.grad_reduce_in_fp32 = False`` and
#: ``cfg.ddp.grad_reduce_in_fp32 = False`` (NVIDIA-NeMo/Megatron-Bridge ``scripts/performance/configs/``, read
#: 2026-12-03: ``set_llama3_common_configs`` in ``llama/llama3_llm_pretrain.py`` at 2a0d46e,
#: ``set_llama31_common_configs`` in ``llama/llama31_llm_pretrain.py`` at 0013c9a, ``set_qwen3_common_configs`` in
#: ``qwen/qwen3_llm_pretrain.py`` at 05c0c90, the DeepSeek-V3 common configs), so Megatron-Core keeps its main
#: gradients in the parameters' BF16 (``grad_bytes`` 2: 2 bytes per parameter less than the FP32 buffer of
#: :data:`~intelligence_per_dollar.model.training.MEGATRON_CORE`); the reduction was BF16 already.
MBRIDGE_PERF = replace(training.MEGATRON_CORE, grad_bytes=2.0)

#: Megatron-style training without Transformer Engine's overlaps: TP with sequence parallelism, 1F1B, ZeRO-1,
#: FlashAttention-2, TP and data-parallel traffic not overlapped (FlagScale's Megatron-LM fork, nanotron v0.5).
MEGATRON_LM_FA2 = replace(training.MEGATRON_CORE, tp_overlap=False, dp_overlap=False, attention_kernel="fa2",
                          fused_cross_entropy=False, loss="megatron")

#: nanotron v0.5's data-parallel physics on :data:`MEGATRON_LM_FA2` (stack ``nanotron-2025``, where its comments give
#: the sources): fp32 gradient buckets of 12.5e6 parameters reduce-scattered during backward, the updated parameters
#: gathered in one collective after the step, the compute-cost pipeline split, fp32 accumulation in a pass of its own.
_NANOTRON_DP = replace(MEGATRON_LM_FA2, grad_reduce_bytes=4.0, dp_overlap=True, param_gather_overlap=False,
                       dp_bucket_params=12.5e6, cost_balanced_split=True, grad_accumulation_bytes=10.0)

#: Megatron-LM (core v0.6, 2024) as BAAI's FlagPerf launch scripts run it: Transformer Engine layers, sequence
#: parallelism and the distributed optimizer, but no --tp-comm-overlap and no --overlap-grad-reduce; a MoE's experts
#: split over TP whatever the EP (core 0.6 predates expert_tensor_parallel_size: ``Stack.uniform_expert_tp``).
MEGATRON_LM_2024 = replace(training.MEGATRON_CORE, tp_overlap=False, dp_overlap=False, fused_cross_entropy=False,
                           loss="megatron", uniform_expert_tp=True)

#: NeMo AutoModel (2025-26) as its MoE benchmark configs run it: PyTorch FSDP2 with BF16 parameters stepped in place
#: (no fp32 master; Adam's moments in BF16) and the loss on BF16 logits (``fp32_upcast: false``); see ``automodel-te``.
#: Its MoE benchmark configs dispatch with DeepEP (``*_te_deepep.yaml``): one copy per destination (``ep_dedup``).
AUTOMODEL_BF16 = replace(training.FSDP2, grad_bytes=2.0, optimizer_state_bytes=6.0, loss="torch-bf16", ep_dedup=True)

#: Megatron-Bridge's EP all-to-all overlap recipes (HybridEP, full-iteration CUDA graphs): ``mbridge-2026-a2a-overlap``.
_A2A_OVERLAP = replace(MBRIDGE_PERF, ep_overlap=True, moe_host_sync=False, moe_expert_sort=False)
#: A pipeline split that counts the embedding and the loss as a layer each (Megatron-Core's
#: ``--account-for-embedding-in-pipeline-split`` / ``--account-for-loss-in-pipeline-split``).
_SPLIT = {"embedding_and_loss_in_split": True}
#: torchtitan with its chunked loss, run eager (no ``torch.compile``: unfused elementwise chains).
_CHUNKED_EAGER = replace(training.STACKS["fsdp2-chunked-loss"], fused_elementwise=False)
#: Model states of a model built and stepped in BF16: the BF16 parameter shard and two BF16 Adam moments, BF16 gradients.
_BF16_STATES = {"grad_bytes": 2.0, "optimizer_state_bytes": 6.0}

#: PyTorch FSDP1 run eager: the eager torch-native stand-in with FSDP1's flat-parameter copies and fused projections
#: (stacks ``fsdp1-eager`` and ``fsdp1-eager-bf16``, where their comments give the sources).
_FSDP1_EAGER = replace(training.STACKS["fsdp2-eager"], fsdp_copies="flat", fused_projections=True)

#: Megatron-DeepSpeed 2021 (MT-NLG): DeepSpeed's pipeline engine sends whole activations from every TP rank (no
#: scatter/gather) and runs plain 1F1B.
DEEPSPEED_2021 = replace(training.MEGATRON_2021, p2p_scatter_gather=False)

#: NeMo 2024 (NeMo 2's ``GPTConfig``: ``cross_entropy_loss_fusion=True`` with Megatron-Core's default
#: ``cross_entropy_fusion_impl="native"``, the compiled fusion; Transformer Engine's kernel came in 2025).
_NEMO_2024 = replace(training.MEGATRON_CORE, fused_cross_entropy=False, loss="megatron-fused")

#: Software stacks named in the runs file (facts about each framework version).
STACKS = {
    "megatron-2021": training.MEGATRON_2021,
    "megatron-2022-sp": replace(training.MEGATRON_2021, sequence_parallel=True),
    "nemo-2024": _NEMO_2024,
    # NeMo run through NeMo-Framework-Launcher in 2024 until its PR 422 ("enable fused attention", merged 2024-08-29):
    # the launcher exported ``NVTE_FUSED_ATTN=0`` to every job (``launcher_scripts/conf/config.yaml`` @01d0773,
    # container nemo:24.03.01, ``env_vars``: "Disable cudnn FA until we've tested it more"), so Transformer Engine ran
    # its FlashAttention backend, flash-attn 2, where from TE 1.2 it would pick cuDNN on Hopper (TE PR 497). The
    # NeMo performance tables of 24.03-24.07 and the launcher's README tables of early 2024 and 24.05 ran this way.
    "nemo-2024-launcher": replace(_NEMO_2024, attention_kernel="fa2"),
    # Karpathy's llm.c (hand-written CUDA: cuDNN flash attention, ZeRO-1 with the gradient reduction overlapped, its
    # ``fused_classifier`` kernel computing the softmax, the loss and the logits' gradient in one pass, in place): the
    # Megatron-Core preset, whose single-pass fused cross entropy it shares
    "llm-c-2024": training.MEGATRON_CORE,
    "pytorch-eager": training.Stack(flash_attention=True, sequence_parallel=False, dp_overlap=False,
                                    grad_bytes=2.0, grad_reduce_bytes=2.0, fused_elementwise=False),
    "deepspeed-2021": DEEPSPEED_2021,
    # GPT-NeoX as EleutherAI's Pythia configs run it (2022-23): the Megatron-DeepSpeed layers and pipeline engine with
    # FlashAttention v1 ("attention-config": [[["flash"], L]], e.g. EleutherAI/pythia models/160M/pythia-160m.yml
    # @4d0c901, models/12B/pythia-12b.yml @55e1182; read 2026-12-05)
    "gpt-neox-2023": replace(DEEPSPEED_2021, flash_attention=True, attention_kernel="fa1"),
    # Megatron-Bridge / Megatron-Core 2025-26 recipes: TE, TP comm overlap, distributed optimizer,
    # overlapped DP; MoE benchmarks force-balance routing (load factor 1); BF16 main gradients (MBRIDGE_PERF)
    "mbridge-2026": MBRIDGE_PERF,
    # the same with the FP8 recipe the row names "FP8-CS" (Transformer Engine Float8CurrentScaling:
    # an amax pass before every FP8 cast); NeMo 25.x states "FP8 per-tensor current scaling"
    "mbridge-2026-fp8cs": replace(MBRIDGE_PERF, fp8_current_scaling=True),
    # recipes that state Megatron-Core's plain all-to-all dispatcher (``moe_token_dispatcher_type="alltoall"``, no
    # flex backend): every routed copy of a token crosses the network on its own, no DeepEP / HybridEP dedup per
    # destination node (``ep_dedup`` False). Megatron-Bridge's Qwen3-235B-A22B H100 FP8-CS recipe in 25.09
    # (configs/qwen3/qwen3_235b_a22b_llm_pretrain.py @27dfb3d, the bridge default of qwen3_moe_bridge.py @3ec0b0a),
    # 25.11 (configs/qwen3/workload_base_configs.py @767255d) and 26.04 (qwen/qwen3_workload_base_configs.py
    # @01b2977: ``moe_token_dispatcher_type="alltoall"``); its Qwen3-30B-A3B H100 FP8-CS recipe in 25.09 and 26.02;
    # its GPT-OSS recipes (gpt_oss/gpt_oss_workload_base_configs.py @07eea52 set no flex backend; the library
    # recipe gpt_oss.py @db2bfdd sets "alltoall"); read 2026-12-05
    "mbridge-2026-fp8cs-alltoall": replace(MBRIDGE_PERF, fp8_current_scaling=True, ep_dedup=False),
    "mbridge-2026-alltoall": replace(MBRIDGE_PERF, ep_dedup=False),
    # Megatron-Bridge runs whose configs turn the cross-entropy fusion off (``cross_entropy_loss_fusion=false``, the
    # model-verification cards' long-sequence SFT items): Megatron-Core's unfused vocab-parallel cross entropy
    "mbridge-2026-unfused-ce": replace(MBRIDGE_PERF, fused_cross_entropy=False, loss="megatron"),
    "mbridge-2026-alltoall-unfused-ce": replace(MBRIDGE_PERF, ep_dedup=False, fused_cross_entropy=False,
                                                loss="megatron"),
    # Megatron-LM launched with ``--cross-entropy-loss-fusion`` and no ``--cross-entropy-fusion-impl`` (its default,
    # "native": Megatron-Core's compiled fusion, not Transformer Engine's kernel)
    "mbridge-2026-native-ce": replace(MBRIDGE_PERF, fused_cross_entropy=False, loss="megatron-fused"),
    # the same with Megatron-Core's fine-grained activation offloading of the routed expert MLP (the
    # Megatron-MoE-ModelZoo GB200 Qwen3-235B recipe: offload_modules expert_fc1 / moe_act, "activation offloading required")
    "mbridge-2026-actoffload": replace(MBRIDGE_PERF, moe_activation_offload=True),
    # Megatron-Bridge's full-iteration MXFP8 DeepSeek-V3 recipes on GB200/GB300 (perf_recipes/deepseek/common.py
    # _enable_deepseek_full_iteration_mxfp8: overlap_moe_expert_parallel_comm with delay_wgrad_compute, the HybridEP
    # "flex" dispatcher and full-iteration CUDA graphs, so no host sync per MoE layer; routing force-balanced)
    # HybridEP's dispatch writes the received rows grouped per local expert: no sort pass (Stack.moe_expert_sort)
    "mbridge-2026-a2a-overlap": _A2A_OVERLAP,
    # the same where the recipe counts the embedding and the loss as a layer each in the pipeline split
    # (``account_for_embedding_in_pipeline_split`` / ``account_for_loss_in_pipeline_split``: Megatron-LM's
    # examples/moe_recipes/qwen3_235b/h100/bf16_256GPU_TP2PP8EP32.yaml @256f606, read 2026-12-06)
    "mbridge-2026-a2a-overlap-split": replace(_A2A_OVERLAP, **_SPLIT),
    # EP all-to-all overlap with the DeepEP backend and no CUDA graphs: DeepEP's normal dispatch waits on the host for
    # the received counts (host.py), and the received rows are sorted per local expert; the split as above
    # (examples/moe_recipes/qwen3_235b/b200/mxfp8_128GPU_TP2PP4EP16.yaml @6cb71db, read 2026-12-06)
    "mbridge-2026-deepep-overlap-split": replace(MBRIDGE_PERF, ep_overlap=True, **_SPLIT),
    # a Megatron-Bridge recipe run on real data with natural routing (``moe_router_force_load_balancing=false``, as
    # the model-verification cards' functional pretraining items state): the book's central load factor
    "mbridge-2026-natural": replace(MBRIDGE_PERF, moe_load_factor=training.MOE_LOAD_FACTOR["central"]),
    # Alibaba's Pai-Megatron-Patch (Megatron-Core with TE) as InternLM XTuner's Qwen3-235B-A22B benchmark on 256 H800
    # runs it (xtuner docs/zh_cn/benchmark/megatron_moe_benchmark.md @bfafd26, read 2026-12-06): the pipeline split
    # counts the embedding and the loss as a layer each ("把embedding和loss计算也当做1个layer", Megatron-Core's
    # --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split), and TP communication overlap
    # is off except in the one table row that names "tp overlap"; the all-to-all dispatcher, or DeepEP where the row
    # names it
    "pai-megatron-2025-alltoall": replace(MBRIDGE_PERF, ep_dedup=False, tp_overlap=False, **_SPLIT),
    "pai-megatron-2025-alltoall-tp-overlap": replace(MBRIDGE_PERF, ep_dedup=False, **_SPLIT),
    "pai-megatron-2025-deepep": replace(MBRIDGE_PERF, tp_overlap=False, **_SPLIT),
    # MLPerf Training v6.0's DeepSeek-V3 (NVIDIA's NeMo recipe: the same EP all-to-all overlap, HybridEP and
    # full-iteration CUDA graphs) trains on real data with dropless routing: the book's central load factor
    "mlperf-2026-moe": replace(training.MEGATRON_CORE, ep_overlap=True, moe_host_sync=False, moe_expert_sort=False,
                               moe_load_factor=training.MOE_LOAD_FACTOR["central"]),
    "nemo-2025-fp8cs": replace(training.MEGATRON_CORE, fp8_current_scaling=True),
    "megatron-lm-2024": MEGATRON_LM_2024,
    # the same trained on real data with natural routing (a run that logs its load-balancing loss, not
    # force-balanced): the book's central load factor, as mbridge-2026-natural
    "megatron-lm-2024-natural": replace(MEGATRON_LM_2024, moe_load_factor=training.MOE_LOAD_FACTOR["central"]),
    # Megatron-LM's pretrain_gpt.py as the LAER-MoE artifact launches its baseline (Fizzmy/LAER-MoE-AE
    # Megatron/scripts/train.sh @40d25e0, read 2026-12-07): no TP-communication overlap and no loss fusion, as
    # megatron-lm-2024, but ``--overlap-grad-reduce --overlap-param-gather`` with the distributed optimizer
    # (``dp_overlap``), ``--expert-tensor-parallel-size 1`` (experts whole on each EP rank, EP folded over TP x DP), and
    # real routing under a weak auxiliary loss (``--moe-aux-loss-coeff`` 1e-4): the book's central load factor
    "megatron-lm-2025-natural": replace(MEGATRON_LM_2024, dp_overlap=True, uniform_expert_tp=False,
                                        moe_load_factor=training.MOE_LOAD_FACTOR["central"]),
    # the same in FlagScale (BAAI's Megatron-LM fork), whose README states flash attention 2
    "megatron-lm-2024-fa2": replace(MEGATRON_LM_FA2, uniform_expert_tp=True),
    # the Zero Bubble paper's Megatron-LM fork (Qi et al. 2024, arXiv 2401.10241, section 5.1: "both the initial and
    # final pipeline stages possess one fewer transformer layer", to balance the embedding and the loss; every model's
    # layer count is k x PP - 2): the same stack with the embedding and the loss counted as a layer each in the split
    "zero-bubble-2024": replace(MEGATRON_LM_FA2, embedding_and_loss_in_split=True, uniform_expert_tp=True),
    # Hugging Face nanotron v0.5 (the Ultra-Scale Playbook's sweep, examples/config_tiny_llama_bench.yaml @67c5ebb):
    # Megatron-style TP with sequence parallelism, 1F1B pipeline, ZeRO-1, FlashAttention-2, no Transformer Engine,
    # its own name so the bias table does not count its runs as Megatron-Core's. Its data-parallel traffic is not
    # FlagScale's: with ``accumulate_grad_in_fp32`` (the sweep's config) the DDP communication hook
    # (``get_fp32_accum_hook(reduce_scatter=True)`` under ZeRO-1, src/nanotron/optim/gradient_accumulator.py) adds each
    # bucket's BF16 gradients into the fp32 buffer and reduce-scatters that fp32 bucket asynchronously during
    # backward (4-byte reduction, overlapped, ``ddp_bucket_cap_mb`` 25 of BF16 gradients = 12.5e6 parameters per
    # bucket); ``ZeroDistributedOptimizer.step`` then all-gathers the updated BF16 parameters in one blocking
    # collective (src/nanotron/optim/zero.py ``_all_gather_params``), not overlapped with the next forward
    # Its pipeline engine splits the layers and the LM head over the ranks by compute cost (``cost_balanced_split``:
    # src/nanotron/models/base.py ``build_model``, ``get_block_compute_costs`` in models/llama.py; read 2026-12-06)
    # Its fp32 accumulation is a pass of its own after every micro-batch's backward, 10 bytes per local parameter
    # (``Stack.grad_accumulation_bytes``: FP32GradientAccumulator's ``fp32_grad.add_(half_param.grad)``; Megatron's
    # weight-gradient GEMM accumulates into main_grad itself; read 2026-12-07)
    # Its Llama block fuses the norms (TritonRMSNorm) and the rotary embedding (flash-attn's Triton kernel) but runs
    # the SwiGLU as eager ops on the merged gate/up output (``Stack.fused_activation`` False: ``GLUActivation``), and
    # copies q, k and v between layouts around the rotary and attention kernels (``Stack.qkv_layout_copies``:
    # ``CausalSelfAttention.forward``, src/nanotron/models/llama.py; read 2026-12-07)
    "nanotron-2025": replace(_NANOTRON_DP, fused_activation=False, qkv_layout_copies=True),
    # ServiceNow's Fast-LLM on the nanotron stand-in (its own data-parallel trainer, gradients reduced in buckets during
    # backward, parameters gathered after the step) but with its own Triton kernels: a fused activation and no
    # layout copies (fast_llm/functional/triton/mlp.py, normalization.py and rotary.py: Triton kernels for the gated
    # MLP activation, the norms and the rotary embedding; read 2026-12-07)
    "fast-llm-2025": _NANOTRON_DP,
    # DeepSeek-V3's own stack (arXiv 2412.19437 section 3.2): DualPipe, all-to-all fully overlapped
    # with computation, real (not force-balanced) routing: the book's central load factor
    "deepseek-v3": replace(training.DEEPSEEK_V3, moe_load_factor=training.MOE_LOAD_FACTOR["central"]),
    # torchtitan (Dec 2024 benchmarks): FSDP2 preset; async TP where the row says so; the June
    # 2025 H200 runs gather FP8 weights (enable_fsdp_float8_all_gather)
    "torchtitan-fsdp2": training.FSDP2,
    # flash-attn's own training code (Lightning + its GPT) with FlashAttention-2, as its README's speed tables ran it:
    # one fused ``Wqkv`` and a fused softmax cross entropy with the gradient written in place (apex
    # ``CrossEntropyLossApex`` / flash-attn's Triton ``CrossEntropyLoss``, ``inplace_backward``), as those rows state
    "flash-attn-2023": replace(training.FSDP2, fused_projections=True, fused_cross_entropy=True),
    "torchtitan-fsdp2-asynctp": training.STACKS["fsdp2-asynctp"],
    # torchtitan without torch.compile: the row says eager (Table 1's "FSDP" row of the Dec 2024 H100 benchmark), or
    # the early-2024 A100 page mentions neither compile nor Float8 ("eager assumed" when the rows were collected)
    "torchtitan-fsdp2-eager": training.STACKS["fsdp2-eager"],
    # torchtitan with its chunked loss (ChunkedLossWrapper, 8,192-token chunks; the row's note names ChunkedCELoss)
    "torchtitan-fsdp2-chunked-loss": training.STACKS["fsdp2-chunked-loss"],
    "torchtitan-fsdp2-fp8ag": replace(training.FSDP2, fsdp_fp8_all_gather=True),
    # torchtitan with ``expert_parallel_comm_backend = "deepep"`` (DeepEP's dispatch sends a token once per
    # destination rank and node, its combine returns one reduced row: ``torchtitan/distributed/deepep/deepep.py``)
    "torchtitan-fsdp2-deepep": replace(training.FSDP2, ep_dedup=True),
    # eager (no torch.compile) with the chunked loss (Lambda's PR 4605 sweep: ``ChunkedLossWrapper``), and the same
    # with DeepEP
    "torchtitan-fsdp2-chunked-loss-eager": _CHUNKED_EAGER,
    "torchtitan-fsdp2-chunked-loss-eager-deepep": replace(_CHUNKED_EAGER, ep_dedup=True),
    # torchtitan run with ``training.dtype = "bfloat16"`` (torchtitan/config/job_config.py, ``Training.dtype``: "setting
    # training_dtype=bfloat16 will put all parameters, gradients, and optimizer states in bfloat16, without an extra
    # copy of fp32 weights ... logits will still be in fp32"; read 2026-12-06): no fp32 master
    # (``Stack.optimizer_state_bytes`` 6, ``grad_bytes`` 2, as KempnerForge's BF16-built models); with the chunked
    # loss, compiled and eager (Lambda's B200 sweeps, LambdaLabsML/torchtitan: "--training.dtype=bfloat16")
    "torchtitan-bf16-chunked-loss": replace(training.STACKS["fsdp2-chunked-loss"], **_BF16_STATES),
    "torchtitan-bf16-chunked-loss-eager": replace(_CHUNKED_EAGER, **_BF16_STATES),
    # PyTorch FSDP1 (``FullyShardedDataParallel``, a FlatParameter per wrapped block) as IBM's fms-fsdp, Modalities,
    # TinyLlama's Lightning Fabric and lightning-thunder's "fsdp1" mode run it: the torch-native stand-in with FSDP1's
    # copies (Stack.fsdp_copies "flat": the gather fills the flat buffer the parameters view; the views' backward
    # concatenates the gradients), compiled or fused; its eager form for the rows that state no torch.compile
    # Their models fuse the projections (Stack.fused_projections): IBM foundation-model-stack's LLaMA builds fused QKV
    # and gate/up weights (``LLaMAConfig.fused_weights`` True), LitGPT (lightning-thunder, TinyLlama) one ``qkv``
    # linear layer
    "fsdp1": replace(training.FSDP2, fsdp_copies="flat", fused_projections=True),
    "fsdp1-eager": _FSDP1_EAGER,
    # the same where the row states a fused cross entropy kernel (TinyLlama's lit-gpt: flash-attn's xentropy)
    "fsdp1-fused-ce": replace(training.FSDP2, fsdp_copies="flat", fused_projections=True, fused_cross_entropy=True),
    # the eager FSDP1 stand-in with the model cast to BF16 before it is wrapped, so Adam steps BF16 parameters with BF16
    # moments and no fp32 master (VectorLM: ``get_half_precision_model`` in vectorlm/utils/model_utils.py, as its
    # reference-throughput rows ran it, read through the row's note)
    "fsdp1-eager-bf16": replace(_FSDP1_EAGER, **_BF16_STATES),
    # Hugging Face transformers' Trainer with Liger kernels (fused RMSNorm, rotary and SwiGLU Triton kernels, and the
    # fused linear cross entropy that never materialises the logits: a chunked loss) and FlashAttention-3 (the vendor
    # rate on Hopper), the model loaded in BF16 (no fp32 master) under DDP, whose BF16 gradients all-reduce in BF16
    # (Scicom small-ablation simple-throughput-multigpus h100.sh / h200.sh: ``--attn_implementation
    # flash_attention_3 --model_dtype bfloat16``, Liger on; read through the rows' notes)
    "hf-liger-bf16": replace(training.STACKS["fsdp2-chunked-loss"], attention_kernel="vendor", grad_reduce_bytes=2.0,
                             **_BF16_STATES),
    # JAX / XLA fully sharded data parallelism (MaxText, Pax / Paxml on JAX-Toolbox): the torch-native stand-in whose
    # gathers and reduce-scatters are ops of the compiled program on contiguous buffers (no FSDP copies)
    "xla-fsdp": replace(training.FSDP2, fsdp_copies="none"),
    # Pax on GPUs as google/paxml's 2023 README measured it: "The numbers in the above chart are reported without
    # flash attention" (paxml/contrib/gpu/README.md @4895446), so the attention core runs as batched GEMMs with the
    # softmax between them, as the unfused Megatron 2021-22 kernels do
    "xla-2023-noflash": replace(training.FSDP2, fsdp_copies="none", flash_attention=False),
    # the FlashAttention papers' own FlashAttention (v1) runs (Dao et al. 2022 Table 2's GPT-2 "FlashAttention" rows,
    # Dao 2023's FlashAttention baseline rows): the torch-native data-parallel stand-in with the v1 kernel; its GPT is
    # flash-attn's own, whose ``MHA`` has one fused ``Wqkv``
    # Its training configs run a fused softmax cross entropy with the gradient written in place
    # (``training/configs/experiment/owt/base.yaml``: ``loss_fn`` ``CrossEntropyLossApex``, ``inplace_backward: True``,
    # "faster and uses less memory than torch.nn.CrossEntropyLoss"; read 2026-12-06)
    "flash-attn-2022": replace(training.FSDP2, attention_kernel="fa1", fused_projections=True,
                               fused_cross_entropy=True),
    # NeMo AutoModel (2025-26): PyTorch FSDP2 (+ DTensor EP, DeepEP) with Transformer Engine's attention, linear and
    # RMSNorm modules -- its benchmark configs set ``backend: {attn: te, linear: te, rms_norm: te}``
    # (NVIDIA-NeMo/Automodel examples/benchmark/configs/qwen3_moe_30b_te_deepep.yaml @092af93,
    # deepseek_v3_te_deepep.yaml @037e04a, read 2026-12-05), so attention is TE's cuDNN fused kernel (the vendor
    # kernel), not PyTorch SDPA's FlashAttention-2; its GPT-OSS configs set ``attn: flex`` (FlexAttention, for the
    # sinks: gptoss_120b_te_deepep.yaml @037e04a): stack ``automodel-flex`` below
    # Its MoE models are built in BF16 and Adam steps the BF16 parameter shards in place, its moments in BF16
    # (``Stack.optimizer_state_bytes`` 6, ``grad_bytes`` 2: ``initialize_weights(dtype=torch.bfloat16)`` in
    # nemo_automodel/components/models/qwen3_moe/model.py @05e0902; ``optimizer: torch.optim.Adam`` in the
    # benchmark configs), and the configs' ``MaskedCrossEntropy`` sets ``fp32_upcast: false`` (BF16 logits)
    "automodel-te": replace(AUTOMODEL_BF16, attention_kernel="vendor"),
    # the same with AutoModel's GPT-OSS configs, which set ``attn: flex`` (FlexAttention's Triton kernel)
    "automodel-flex": replace(AUTOMODEL_BF16, attention_kernel="flex"),
    # KempnerForge (PyTorch FSDP2 + DTensor TP): the torchtitan physics, with the model built in BF16
    # (``build_parallel_model``: ``Transformer(...).to(dtype=param_dtype)``, BF16 by default; fused AdamW keeps its
    # moments in the parameter dtype; kempnerforge/distributed/parallel.py @01b461a)
    "kempnerforge-fsdp2": replace(training.FSDP2, grad_bytes=2.0, optimizer_state_bytes=6.0),
    # MosaicML LLM Foundry (Composer + PyTorch FSDP1, 2023-24) as its benchmarking table ran MPT: FlashAttention-2
    # (``attn_impl: flash``), flash-attn's fused cross entropy (``ComposerMPTCausalLM``: ``loss_fn`` defaults to
    # ``fused_crossentropy``), no dropout (``MPTConfig``: attn / resid / emb ``pdrop`` 0.0); FSDP mixed precision
    # DEFAULT reduces gradients in fp32, PURE in BF16 (the table states the mode of each row)
    # Composer's FSDP is PyTorch FSDP1 (flat parameters: Stack.fsdp_copies "flat")
    # MPT's attention is one fused ``Wqkv`` linear layer (Stack.fused_projections)
    "llm-foundry-2023": replace(training.FSDP2, fused_cross_entropy=True, dropout_masks=False, fsdp_copies="flat",
                                fused_projections=True),
    "llm-foundry-2023-pure": replace(training.FSDP2, fused_cross_entropy=True, dropout_masks=False,
                                     grad_reduce_bytes=2.0, fsdp_copies="flat", fused_projections=True),
    # Meta's production 4D stack (Llama 3 report section 3.3.2): FSDP sharding gradients and
    # optimizer (ZeRO-2), TP with SP, CP, tuned interleaved PP, Megatron-style fused kernels
    "meta-llama3-4d": training.MODERN,
}

#: Sessions 52-53's stacks, each made from the stack its rows stood on with only what the rows' own notes state changed
#: (a review of every training row for a stated setting its stack contradicted; the quotes are in the rows' notes and
#: ``data/runs/HELD_OUT.md``, "Session 52"): name -> (base stack, stated fields). In order: one may build on another.
#: Real routing (no forced balancing): the central busiest-rank load.
_NATURAL = {"moe_load_factor": training.MOE_LOAD_FACTOR["central"]}
_CORRECTIONS = {
    # MaxText with ``attention=cudnn_flash_te`` and Pax with ``NVTE_FUSED_ATTN=1, ENABLE_TE=1`` run Transformer Engine's
    # cuDNN fused attention, the vendor kernel, not the FlashAttention-2 rate the torch-native stand-in carries
    "xla-fsdp-te": ("xla-fsdp", {"attention_kernel": "vendor"}),
    # MaxText with ``remat_policy=save_qkv_proj`` (NVIDIA's dgxc-benchmarking Llama 3 70B recipe, maxtext/configure.sh)
    # and Paxml with ``CHECKPOINT_POLICY = SAVE_QKV_OUT_PROJ`` (its GPT-3 175B recipe, paxml_mod_configs.py): the full
    # recompute keeps the Q / K / V (and output) projections' outputs and does not run those GEMMs again
    "xla-fsdp-te-save-qkv": ("xla-fsdp-te", {"full_recompute_keeps": "qkv"}),
    "xla-fsdp-te-save-qkv-out": ("xla-fsdp-te", {"full_recompute_keeps": "attention-projections"}),
    # NeMo 2024 recipes that state ``moe_token_dispatcher_type alltoall``: one copy per chosen expert, no dedup
    "nemo-2024-alltoall": ("nemo-2024", {"ep_dedup": False}),
    # Megatron-Kwai's launch scripts: ``--accumulate-allreduce-grads-in-fp32`` and no ``--overlap-grad-reduce`` (the
    # TP overlap ``--overlap-sp-ag --overlap-sp-rs`` kept): FP32 gradient reduction, not overlapped with backward
    "megatron-kwai-2024": ("nemo-2024", {"dp_overlap": False, "grad_reduce_bytes": 4.0}),
    # PaddleNLP / FlagPerf PaddlePaddle configs: ``fuse_attention_qkv`` / ``fuse_attention_ffn`` not set (separate
    # Q / K / V and gate / up GEMMs) and ``sequence_parallel 0``
    "paddle-2024": ("megatron-lm-2024-fa2", {"sequence_parallel": False, "fused_projections": False}),
    # NeMo-style TP without sequence parallelism or TP communication overlap: InternLM's 7B configs at TP 2 ("TP2
    # without sequence parallelism or TP communication overlap", gradient reduce and parameter gather overlapped) and
    # the NeMo Llama 3.1 70B recipe at TP 8 on B200 (``sequence_parallel false``, ``ub_tp_comm_overlap false``)
    "nemo-2024-tp-no-sp": ("nemo-2024", {"sequence_parallel": False, "tp_overlap": False}),
    # XTuner's sequence-parallel runs: no torch.compile, but Triton RMSNorm and rotary kernels (fused norms and rotary,
    # the SwiGLU eager)
    "xtuner-2024": ("torchtitan-fsdp2-eager", {"fused_elementwise": True, "fused_activation": False}),
    # FP8-LM's Transformer Engine baseline "retains master weights and gradients using high precision" with FP32
    # gradient collectives (arXiv 2310.18313, sections 1 and 3.2.2)
    "megatron-lm-2024-fa2-fp32-reduce": ("megatron-lm-2024-fa2", {"grad_reduce_bytes": 4.0}),
    # OLMo-core's ``fused_loss`` (``CrossEntropyLoss(fused=True)``: flash-attn's Triton cross entropy)
    "torchtitan-fsdp2-fused-loss": ("torchtitan-fsdp2", {"fused_cross_entropy": True}),
    # IBM fms-fsdp's bf16 policy reduces gradients in BF16 (``policies/mixed_precision.py``
    # ``reduce_dtype=torch.bfloat16``)
    "fsdp1-eager-bf16-reduce": ("fsdp1-eager", {"grad_reduce_bytes": 2.0}),
    # the Apertus launch scripts pass no ``--tp-comm-overlap`` (TP collectives exposed), and its 8B pretraining
    # scripts at TP 2 no ``--sequence-parallel`` either (the BF16 run on Megatron's native fused loss, the FP8 run on
    # FP8 current scaling)
    "mbridge-2026-native-ce-no-tp-overlap": ("mbridge-2026-native-ce", {"tp_overlap": False}),
    "mbridge-2026-native-ce-tp-no-sp": ("mbridge-2026-native-ce", {"tp_overlap": False, "sequence_parallel": False}),
    # Megatron-DeepSpeed launched without ``--sequence-parallel`` (FlagPerf's Llama 2 7B at TP 4)
    "megatron-lm-2024-fa2-tp-no-sp": ("megatron-lm-2024-fa2", {"sequence_parallel": False}),
    "mbridge-2026-fp8cs-tp-no-sp": ("mbridge-2026-fp8cs", {"tp_overlap": False, "sequence_parallel": False}),
    # Stability's GPT-NeoX fork for StableLM-3B-4E1T: FlashAttention-2 kernels and ZeRO-1 with ``overlap_comm``
    "gpt-neox-2023-fa2": ("gpt-neox-2023", {"attention_kernel": "fa2", "dp_overlap": True}),
    # nanoGPT's ``train.py``: ``F.cross_entropy`` over the full logits (unfused, upcast to fp32 under autocast) and
    # ``dropout = 0.0`` (no masks kept), on the FlashAttention paper's GPT stand-in
    "nanogpt-2023": ("flash-attn-2022", {"fused_cross_entropy": False, "loss": "torch-fp32", "dropout_masks": False}),
    # MLPerf v6.0's Cisco GPT-OSS-20B on H100 (NeMo): the flex dispatcher on DeepEP with ``MOE_EP_A2A_OVERLAP True``,
    # trained on real data without forced balancing (the central load factor)
    "nemo-2024-deepep-overlap-natural": ("nemo-2024", {"ep_overlap": True, **_NATURAL}),
    # ATorch's DeepSpeed 3D runs swap in FlashAttention-2 (``module_replace`` "attn fa")
    "deepspeed-2021-fa2": ("deepspeed-2021", {"flash_attention": True, "attention_kernel": "fa2"}),
    # NeMo AutoModel's FSDP2 Llama 3.1 70B profiling run with ``no_compile``: eager, TE attention only (its norms
    # ``rms_norm torch_fp32``), so the elementwise chains run unfused
    "automodel-te-eager": ("automodel-te", {"fused_elementwise": False}),
    # AWS's Megatron-Bridge MoE benchmarks: the NCCL arm runs ``moe_token_dispatcher_type=alltoall`` (one copy per
    # chosen expert; stack mbridge-2026-alltoall), its "overlap=on" rows with ``overlap_moe_expert_parallel_comm``
    "mbridge-2026-alltoall-ep-overlap": ("mbridge-2026-alltoall", {"ep_overlap": True}),
    # NVIDIA's MLPerf Llama 3.1 405B configs set ``ASYM_PP_EMBED`` / ``ASYM_PP_LOSS``: the embedding and the loss
    # count as pipeline layers (Megatron's account_for_embedding / account_for_loss_in_pipeline_split)
    "mbridge-2026-split": ("mbridge-2026", {"embedding_and_loss_in_split": True}),
    "mbridge-2026-fp8cs-split": ("mbridge-2026-fp8cs", {"embedding_and_loss_in_split": True}),
    "nemo-2024-split": ("nemo-2024", {"embedding_and_loss_in_split": True}),
    # ... and Azure's, with ``TP_COMM_OVERLAP False``; HPE's GB300 405B configs state ``TP_COMM_OVERLAP False`` too,
    # and so does a NeMo Llama 3.1 70B recipe on B200 (``ub_tp_comm_overlap false``, sequence parallel on)
    "mbridge-2026-split-no-tp-overlap": ("mbridge-2026", {"embedding_and_loss_in_split": True, "tp_overlap": False}),
    "mbridge-2026-no-tp-overlap": ("mbridge-2026", {"tp_overlap": False}),
    "nemo-2024-no-tp-overlap": ("nemo-2024", {"tp_overlap": False}),
    # rows that state real routing (no forced balancing) at EP > 1: the central busiest-rank load
    "mbridge-2026-a2a-overlap-natural": ("mbridge-2026-a2a-overlap", _NATURAL),
    "nemo-2024-alltoall-natural": ("nemo-2024-alltoall", _NATURAL),
    "torchtitan-fsdp2-eager-natural": ("torchtitan-fsdp2-eager", _NATURAL),
    "torchtitan-fsdp2-chunked-loss-eager-deepep-natural": ("torchtitan-fsdp2-chunked-loss-eager-deepep",
                                                           _NATURAL),
    "torchtitan-bf16-chunked-loss-natural": ("torchtitan-bf16-chunked-loss", _NATURAL),
    "torchtitan-bf16-chunked-loss-eager-natural": ("torchtitan-bf16-chunked-loss-eager",
                                                   _NATURAL),
    # DGX Cloud's Grok-1 recipe on GB200 states ETP 4 with TP 4: the experts split over TP (Megatron-Core's uniform
    # expert TP)
    "nemo-2024-expert-tp": ("nemo-2024", {"uniform_expert_tp": True}),
    # Megatron-LM's Llama 3 8B FP8 analysis scripts pass ``--cross-entropy-loss-fusion`` without an implementation:
    # Megatron's native fused loss (its FP8 tensorwise run on FP8 current scaling)
    "mbridge-2026-fp8cs-native-ce": ("mbridge-2026-native-ce", {"fp8_current_scaling": True}),
    # MegaScale-MoE's Megatron-LM baseline: "data- and pipeline-parallel communication-computation overlap enabled for
    # both systems"
    "megatron-lm-2024-dp-overlap": ("megatron-lm-2024", {"dp_overlap": True}),
    # MLPerf's Llama 3.1 8B NVFP4 logs print ``num_layers_at_start/end_in_bf16 0``: every linear layer in NVFP4
    "mbridge-2026-fp4-all": ("mbridge-2026", {"fp4_kept_layer_fraction": 0.0}),
    # Session 53: Lambda's torchtitan fork (pytorch/torchtitan PR 4605) runs attention through ``flex_attention``
    # (its logs show the Triton kernel's autotuning), FlexAttention's Triton kernel, not SDPA's FlashAttention-2
    "torchtitan-fsdp2-chunked-loss-flex": ("torchtitan-fsdp2-chunked-loss", {"attention_kernel": "flex"}),
    "torchtitan-fsdp2-chunked-loss-eager-flex": ("torchtitan-fsdp2-chunked-loss-eager", {"attention_kernel": "flex"}),
    "torchtitan-fsdp2-chunked-loss-eager-deepep-natural-flex": ("torchtitan-fsdp2-chunked-loss-eager-deepep-natural",
                                                                {"attention_kernel": "flex"}),
    # Session 54: Lambda's GB300 torchtitan sweeps and prime-rl's B300 performance doc state FlashAttention-4
    # ("flash-attn-4", "FA4 varlen attention"), which runs at or above cuDNN on Blackwell ("up to 1.3x faster than
    # cuDNN 9.13", arXiv 2603.05451): the vendor rate, not SDPA's FlashAttention-2
    "torchtitan-fsdp2-fa4": ("torchtitan-fsdp2", {"attention_kernel": "vendor"}),
    "torchtitan-fsdp2-eager-fa4": ("torchtitan-fsdp2-eager", {"attention_kernel": "vendor"}),
    "torchtitan-fsdp2-chunked-loss-fa4": ("torchtitan-fsdp2-chunked-loss", {"attention_kernel": "vendor"}),
    "torchtitan-fsdp2-chunked-loss-eager-fa4": ("torchtitan-fsdp2-chunked-loss-eager", {"attention_kernel": "vendor"}),
    # ProLong's 64K launch script (princeton-nlp/ProLong train_64K.sh @014c75e) sets ``LOGIT_BLOCK_SIZE=2048``:
    # "Compute Llama logits in blocks of 2048 tokens", a chunked loss over its FSDP1 eager stand-in
    "fsdp1-eager-bf16-reduce-chunked-loss": ("fsdp1-eager-bf16-reduce", {"loss_chunk_tokens": 2048.0}),
    # Session 56: Megatron-Bridge's 26.04 DeepSeek-V3 B200 MXFP8 preset (DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2 in
    # scripts/performance/configs/deepseek/deepseek_workload_base_configs.py @d063066) runs the flex dispatcher on
    # DeepEP with ``moe_a2a_overlap=True`` (PP 8, VP 2, EP 32) and partial CUDA graphs: the expert all-to-all
    # overlapped, the DeepEP host sync and the expert sort kept (not mbridge-2026-a2a-overlap's full-iteration HybridEP)
    "mbridge-2026-deepep-overlap": ("mbridge-2026", {"ep_overlap": True}),
}
for _name, (_base, _changes) in _CORRECTIONS.items():
    STACKS[_name] = replace(STACKS[_base], **_changes)
#: Sessions 52-53's stacks and the stack each was made from; each keeps its base's family.
CORRECTED_STACKS = {name: base for name, (base, _) in _CORRECTIONS.items()}


#: Framework family of each stack, for colouring the validation chart (fewer series than groups).
STACK_FAMILIES = {
    "megatron-2021": "Megatron 2021-22", "megatron-2022-sp": "Megatron 2021-22", "deepspeed-2021": "Megatron 2021-22",
    "gpt-neox-2023": "Megatron 2021-22", "flash-attn-2022": "FSDP (torch-native)",
    "nemo-2024": "Megatron-Core / NeMo", "nemo-2024-launcher": "Megatron-Core / NeMo",
    "llm-c-2024": "Megatron-Core / NeMo", "mbridge-2026": "Megatron-Core / NeMo",
    "mbridge-2026-fp8cs": "Megatron-Core / NeMo", "nemo-2025-fp8cs": "Megatron-Core / NeMo",
    "mbridge-2026-fp8cs-alltoall": "Megatron-Core / NeMo", "mbridge-2026-alltoall": "Megatron-Core / NeMo",
    "mbridge-2026-actoffload": "Megatron-Core / NeMo", "mbridge-2026-a2a-overlap": "Megatron-Core / NeMo",
    "mbridge-2026-a2a-overlap-split": "Megatron-Core / NeMo",
    "mbridge-2026-deepep-overlap-split": "Megatron-Core / NeMo",
    "mbridge-2026-natural": "Megatron-Core / NeMo", "pai-megatron-2025-alltoall": "Megatron-Core / NeMo",
    "pai-megatron-2025-alltoall-tp-overlap": "Megatron-Core / NeMo", "pai-megatron-2025-deepep": "Megatron-Core / NeMo",
    "mlperf-2026-moe": "Megatron-Core / NeMo", "megatron-lm-2024": "Megatron-Core / NeMo",
    "megatron-lm-2024-natural": "Megatron-Core / NeMo", "megatron-lm-2025-natural": "Megatron-Core / NeMo",
    "megatron-lm-2024-fa2": "Megatron-Core / NeMo", "zero-bubble-2024": "Megatron-Core / NeMo",
    "torchtitan-fsdp2": "FSDP (torch-native)", "flash-attn-2023": "FSDP (torch-native)",
    "fsdp1-fused-ce": "FSDP (torch-native)", "mbridge-2026-unfused-ce": "Megatron-Core / NeMo",
    "mbridge-2026-alltoall-unfused-ce": "Megatron-Core / NeMo", "mbridge-2026-native-ce": "Megatron-Core / NeMo",
    "torchtitan-fsdp2-asynctp": "FSDP (torch-native)",
    "torchtitan-fsdp2-eager": "FSDP (torch-native)", "torchtitan-fsdp2-chunked-loss": "FSDP (torch-native)",
    "torchtitan-fsdp2-fp8ag": "FSDP (torch-native)", "fsdp1": "FSDP (torch-native)",
    "torchtitan-bf16-chunked-loss": "FSDP (torch-native)", "torchtitan-bf16-chunked-loss-eager": "FSDP (torch-native)",
    "torchtitan-fsdp2-deepep": "FSDP (torch-native)", "torchtitan-fsdp2-chunked-loss-eager": "FSDP (torch-native)",
    "torchtitan-fsdp2-chunked-loss-eager-deepep": "FSDP (torch-native)",
    "fsdp1-eager": "FSDP (torch-native)", "fsdp1-eager-bf16": "FSDP (torch-native)",
    "hf-liger-bf16": "FSDP (torch-native)",
    "xla-fsdp": "JAX / XLA (MaxText, Pax)", "xla-2023-noflash": "JAX / XLA (MaxText, Pax)",
    "automodel-te": "FSDP (torch-native)",
    "automodel-flex": "FSDP (torch-native)", "kempnerforge-fsdp2": "FSDP (torch-native)",
    "llm-foundry-2023": "FSDP (torch-native)",
    "llm-foundry-2023-pure": "FSDP (torch-native)",
    "deepseek-v3": "in-house production", "meta-llama3-4d": "in-house production",
    "pytorch-eager": "measured here (PyTorch)", "nanotron-2025": "nanotron", "fast-llm-2025": "nanotron",
}

for _name, _base in CORRECTED_STACKS.items():       # in order: a corrected stack may be made from an earlier one
    STACK_FAMILIES[_name] = STACK_FAMILIES[_base]
