"""Rows run on the stacks their sources state: set 100's launch scripts (session 51), set 101's Paxml README and the
rows sessions 52 and 53 corrected from their own notes. Each stack differs from the stand-in it replaced in the stated way,
and that difference changes the prediction in the direction its physics says."""

import dataclasses
import re

import numpy as np
import pytest

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.model import training


@pytest.fixture(scope="module")
def cases():
    return {c["id"]: c for c in validation.runs()}


def _predict(case, stack):
    return validation.predict(dict(case, stack=stack))[0]


def test_laer_baseline_keeps_experts_whole_so_its_tp8_rows_are_priced(cases):
    """``--expert-tensor-parallel-size 1``: EP 8 folds over TP 8 x DP 4 on 32 GPUs. Megatron-LM 2024's preset splits the
    experts over TP (EP carved out of the 4 DP ranks), which has no valid layout for EP 8 and refuses the row."""
    st = validation.STACKS["megatron-lm-2025-natural"]
    assert not st.uniform_expert_tp and st.dp_overlap and st.moe_load_factor == training.MOE_LOAD_FACTOR["central"]
    case = cases["heldout100-a-laer-meg-mx8x7b-e8k2-c4"]
    assert case["stack"] == "megatron-lm-2025-natural" and case["parallelism"]["tp"] == 8
    assert np.isfinite(_predict(case, "megatron-lm-2025-natural"))
    with pytest.raises(ValueError, match="no valid parallelism"):
        _predict(case, "megatron-lm-2024")


def test_bf16_model_states_shrink_the_memory_and_not_the_rate(cases):
    """VectorLM casts the model to BF16 (no fp32 master): BF16 gradients and moments, fewer bytes per parameter; the
    two-GPU row's throughput barely moves (the optimizer step is a small share)."""
    st, base = validation.STACKS["fsdp1-eager-bf16"], validation.STACKS["fsdp1-eager"]
    assert (st.grad_bytes, st.optimizer_state_bytes) == (2.0, 6.0)
    assert st.optimizer_state_bytes < base.optimizer_state_bytes
    case = cases["heldout100-d-vectorlm-l3-8b-a100x2-s4096"]
    a, b = _predict(case, "fsdp1-eager-bf16"), _predict(case, "fsdp1-eager")
    assert abs(a / b - 1) < 0.05


def test_liger_flash3_stack_is_faster_than_the_eager_stand_in(cases):
    """Scicom's DDP Qwen3-0.6B: FlashAttention-3 (the vendor rate), Liger's fused kernels and fused linear cross
    entropy (a chunked loss), BF16 states: faster than the eager FlashAttention-2 stand-in on the same layout."""
    st = validation.STACKS["hf-liger-bf16"]
    assert st.attention_kernel == "vendor" and st.loss_chunk_tokens > 0 and st.fused_elementwise
    assert st.grad_reduce_bytes == 2.0
    case = dict(cases["heldout100-d-scicom-qwen3-0.6b-h100x4"])
    par = dict(case["parallelism"], recompute="full", zero=0)
    case["parallelism"] = par
    fast, slow = _predict(case, "hf-liger-bf16"), _predict(case, "torchtitan-fsdp2-eager")
    assert fast > 1.2 * slow        # tokens/s/GPU


def test_paxml_rows_run_attention_without_flash(cases):
    """Set 101's Paxml GPU README: "The numbers in the above chart are reported without flash attention". Its stack is
    the XLA FSDP stand-in with the attention core unfused (batched GEMMs and the softmax between them), which costs
    the 126M GPT at 2,048 tokens more time than the flash kernel: fewer tokens/s per GPU on the same layout."""
    st, base = validation.STACKS["xla-2023-noflash"], validation.STACKS["xla-fsdp"]
    assert not st.flash_attention and base.flash_attention
    assert validation.STACK_FAMILIES["xla-2023-noflash"] == validation.STACK_FAMILIES["xla-fsdp"]
    case = cases["heldout101-d-paxml-gpt126m-a100x64"]
    assert case["stack"] == "xla-2023-noflash"
    assert _predict(case, "xla-2023-noflash") < 0.8 * _predict(case, "xla-fsdp")


# Session 52 corrected the stacks of 177 rows whose own notes state a setting their stand-in contradicted. Each
# corrected stack is its base with only the stated fields changed.
_CORRECTED = [
    ("xla-fsdp-te", "xla-fsdp", {"attention_kernel": "vendor"}),
    ("nemo-2024-alltoall", "nemo-2024", {"ep_dedup": False}),
    ("megatron-kwai-2024", "nemo-2024", {"dp_overlap": False, "grad_reduce_bytes": 4.0}),
    ("paddle-2024", "megatron-lm-2024-fa2", {"sequence_parallel": False, "fused_projections": False}),
    ("nemo-2024-tp-no-sp", "nemo-2024", {"sequence_parallel": False, "tp_overlap": False}),
    ("xtuner-2024", "torchtitan-fsdp2-eager", {"fused_elementwise": True, "fused_activation": False}),
    ("megatron-lm-2024-fa2-fp32-reduce", "megatron-lm-2024-fa2", {"grad_reduce_bytes": 4.0}),
    ("torchtitan-fsdp2-fused-loss", "torchtitan-fsdp2", {"fused_cross_entropy": True}),
    ("fsdp1-eager-bf16-reduce", "fsdp1-eager", {"grad_reduce_bytes": 2.0}),
    ("mbridge-2026-native-ce-no-tp-overlap", "mbridge-2026-native-ce", {"tp_overlap": False}),
    ("mbridge-2026-native-ce-tp-no-sp", "mbridge-2026-native-ce", {"tp_overlap": False, "sequence_parallel": False}),
    ("mbridge-2026-fp8cs-tp-no-sp", "mbridge-2026-fp8cs", {"tp_overlap": False, "sequence_parallel": False}),
    ("megatron-lm-2024-fa2-tp-no-sp", "megatron-lm-2024-fa2", {"sequence_parallel": False}),
    ("gpt-neox-2023-fa2", "gpt-neox-2023", {"attention_kernel": "fa2", "dp_overlap": True}),
    ("nanogpt-2023", "flash-attn-2022", {"fused_cross_entropy": False, "loss": "torch-fp32", "dropout_masks": False}),
    ("nemo-2024-deepep-overlap-natural", "nemo-2024", {"ep_overlap": True, "moe_load_factor": 1.1}),
    ("deepspeed-2021-fa2", "deepspeed-2021", {"flash_attention": True, "attention_kernel": "fa2"}),
    ("automodel-te-eager", "automodel-te", {"fused_elementwise": False}),
    ("mbridge-2026-alltoall-ep-overlap", "mbridge-2026-alltoall", {"ep_overlap": True}),
    ("mbridge-2026-split", "mbridge-2026", {"embedding_and_loss_in_split": True}),
    ("mbridge-2026-fp8cs-split", "mbridge-2026-fp8cs", {"embedding_and_loss_in_split": True}),
    ("nemo-2024-split", "nemo-2024", {"embedding_and_loss_in_split": True}),
    ("mbridge-2026-split-no-tp-overlap", "mbridge-2026", {"embedding_and_loss_in_split": True, "tp_overlap": False}),
    ("mbridge-2026-no-tp-overlap", "mbridge-2026", {"tp_overlap": False}),
    ("nemo-2024-no-tp-overlap", "nemo-2024", {"tp_overlap": False}),
    ("mbridge-2026-a2a-overlap-natural", "mbridge-2026-a2a-overlap", {"moe_load_factor": 1.1}),
    ("nemo-2024-alltoall-natural", "nemo-2024-alltoall", {"moe_load_factor": 1.1}),
    ("torchtitan-fsdp2-eager-natural", "torchtitan-fsdp2-eager", {"moe_load_factor": 1.1}),
    ("torchtitan-fsdp2-chunked-loss-eager-deepep-natural", "torchtitan-fsdp2-chunked-loss-eager-deepep",
     {"moe_load_factor": 1.1}),
    ("torchtitan-bf16-chunked-loss-natural", "torchtitan-bf16-chunked-loss", {"moe_load_factor": 1.1}),
    ("torchtitan-bf16-chunked-loss-eager-natural", "torchtitan-bf16-chunked-loss-eager", {"moe_load_factor": 1.1}),
    ("nemo-2024-expert-tp", "nemo-2024", {"uniform_expert_tp": True}),
    ("mbridge-2026-fp8cs-native-ce", "mbridge-2026-native-ce", {"fp8_current_scaling": True}),
    ("megatron-lm-2024-dp-overlap", "megatron-lm-2024", {"dp_overlap": True}),
    ("mbridge-2026-fp4-all", "mbridge-2026", {"fp4_kept_layer_fraction": 0.0}),
    # session 53: Lambda's torchtitan fork states ``flex_attention`` (FlexAttention's Triton kernel)
    ("torchtitan-fsdp2-chunked-loss-flex", "torchtitan-fsdp2-chunked-loss", {"attention_kernel": "flex"}),
    ("torchtitan-fsdp2-chunked-loss-eager-flex", "torchtitan-fsdp2-chunked-loss-eager", {"attention_kernel": "flex"}),
    ("torchtitan-fsdp2-chunked-loss-eager-deepep-natural-flex", "torchtitan-fsdp2-chunked-loss-eager-deepep-natural",
     {"attention_kernel": "flex"}),
    # session 54: Lambda's GB300 sweeps and prime-rl's B300 doc state FlashAttention-4 (the vendor rate or above)
    ("torchtitan-fsdp2-fa4", "torchtitan-fsdp2", {"attention_kernel": "vendor"}),
    ("torchtitan-fsdp2-eager-fa4", "torchtitan-fsdp2-eager", {"attention_kernel": "vendor"}),
    ("torchtitan-fsdp2-chunked-loss-fa4", "torchtitan-fsdp2-chunked-loss", {"attention_kernel": "vendor"}),
    ("torchtitan-fsdp2-chunked-loss-eager-fa4", "torchtitan-fsdp2-chunked-loss-eager", {"attention_kernel": "vendor"}),
    # session 54 (set 103): ProLong's 64K launch script sets LOGIT_BLOCK_SIZE=2048, a chunked loss
    ("fsdp1-eager-bf16-reduce-chunked-loss", "fsdp1-eager-bf16-reduce", {"loss_chunk_tokens": 2048.0}),
    # session 55: NVIDIA's MaxText Llama 3 70B recipe sets remat_policy=save_qkv_proj, its Paxml GPT-3 175B recipe
    # CHECKPOINT_POLICY SAVE_QKV_OUT_PROJ
    ("xla-fsdp-te-save-qkv", "xla-fsdp-te", {"full_recompute_keeps": "qkv"}),
    ("xla-fsdp-te-save-qkv-out", "xla-fsdp-te", {"full_recompute_keeps": "attention-projections"}),
    # session 56: Megatron-Bridge's 26.04 DeepSeek-V3 B200 MXFP8 preset runs DeepEP with moe_a2a_overlap=True
    ("mbridge-2026-deepep-overlap", "mbridge-2026", {"ep_overlap": True}),
]


@pytest.mark.parametrize("name,base,changed", _CORRECTED)
def test_corrected_stacks_change_only_the_stated_fields(name, base, changed):
    new, old = validation.STACKS[name], validation.STACKS[base]
    diff = {f.name: getattr(new, f.name) for f in dataclasses.fields(new) if getattr(new, f.name) != getattr(old, f.name)}
    assert diff == changed
    assert validation.STACK_FAMILIES[name] == validation.STACK_FAMILIES[base]


def test_every_corrected_stack_is_checked_here_against_its_base():
    assert {name: base for name, base, _ in _CORRECTED} == validation.CORRECTED_STACKS


@pytest.mark.parametrize("session,count", [(52, 177), (53, 13), (54, 20), (55, 22), (56, 15)])
def test_corrected_rows_name_their_new_stack_in_the_note(session, count):
    """Every row moved in sessions 52-56 records the stack it left and the stated fact that moved it; a row moved
    twice names, in the first sentence, the stack the second one says it left."""
    moved = [c for c in validation.runs() if f"Stack corrected (session {session})" in c["note"]]
    assert len(moved) == count
    for c in moved:
        chain = re.findall(r"Stack corrected \(session (\d+)\): (\S+) in place of (\S+),", c["note"])
        assert [int(n) for n, _, _ in chain] == sorted(int(n) for n, _, _ in chain)
        assert chain[-1][1] == c["stack"]
        assert all(later[2] == earlier[1] for earlier, later in zip(chain, chain[1:]))
        assert any(int(n) == session for n, _, _ in chain)


def test_flex_attention_is_slower_than_flash_attention_2_on_blackwell_only(cases):
    """FlexAttention's Triton kernel runs at ~0.48 of the vendor kernel on Blackwell (FlashAttention-4's 2.1-2.7x over
    Triton, up to 1.3x over cuDNN), below FlashAttention-2's 1/1.75, so Lambda's Qwen3-30B-A3B at 8,192 tokens on B200
    (attention about half the step) is slower on the flex stack; on H100 the kernel keeps FlashAttention-2's rate."""
    from intelligence_per_dollar.model.training import compute
    assert 0.37 <= compute.FLEX_OVER_VENDOR_BLACKWELL < compute.FA2_OVER_VENDOR
    case = cases["heldout92-pr4605-qwen3-30b-a3b-b200-8-job1188-bs8-8k-selac-compile"]
    assert case["stack"] == "torchtitan-fsdp2-chunked-loss-flex"
    flex, fa2 = _predict(case, "torchtitan-fsdp2-chunked-loss-flex"), _predict(case, "torchtitan-fsdp2-chunked-loss")
    assert 0.80 < flex / fa2 < 0.95             # tokens/s/GPU
    hopper = dict(case, accelerator="H100-SXM", parallelism=dict(case["parallelism"], microbatch=1))   # fits 80 GB
    assert _predict(hopper, "torchtitan-fsdp2-chunked-loss-flex") == _predict(hopper, "torchtitan-fsdp2-chunked-loss")


def test_corrected_stacks_move_the_step_the_way_their_physics_says(cases):
    """TE's cuDNN attention is faster than FlashAttention-2 (MaxText's Llama 3 70B); an FP32 gradient reduction that
    is not overlapped costs time (Megatron-Kwai's 65B); a BF16 reduction saves it (IBM's fms-fsdp 70B on H100);
    Triton norm and rotary kernels beat eager ones (XTuner's Llama 2 7B at 8k). Throughput units: tokens/s/GPU or an
    iteration time, so each pair is compared in the row's own unit."""
    def faster(case_id, new, old):
        case = cases[case_id]
        a, b = _predict(case, new), _predict(case, old)
        return a < b if case["unit"] == "iteration_s" else a > b
    assert faster("heldout97-dgxc-maxtext-llama3-70b-h100-128-bf16", "xla-fsdp-te", "xla-fsdp")
    assert not faster("heldout98-p-kwai-fig9-65b-h800-112-tp4cp1pp4", "megatron-kwai-2024", "nemo-2024")
    assert faster("ibm-fsdp-llama2-70b-h100-96", "fsdp1-eager-bf16-reduce", "fsdp1-eager")
    assert faster("heldout75-xtuner-llama2-7b-a100x8-8k-sp1", "xtuner-2024", "torchtitan-fsdp2-eager")


def test_flash_attention_4_rows_state_it_and_run_at_the_vendor_rate(cases):
    """The 13 rows on the ``-fa4`` stacks are Lambda's GB300 sweeps, whose notes state ``flash-attn-4``, and prime-rl's
    two B300 rows ("FA4 varlen attention"); the four Marin grug rows that state FlashAttention-4's CuTe kernels on H100
    moved to the XLA stack with the vendor kernel. On GB300 the vendor rate makes the attention-heavy GPT-OSS-20B step
    faster than FlashAttention-2's."""
    moved = [c for c in validation.runs() if c["stack"].endswith("-fa4")]
    assert len(moved) == 13
    assert all(("flash-attn-4" in c["note"] or "FA4 varlen" in c["note"]) and c["accelerator"] in ("GB300", "B300")
               for c in moved)
    grug = [c for c in validation.runs() if c["id"].startswith("heldout101-d-grug-moe")]
    assert len(grug) == 4 and all(c["stack"] == "xla-fsdp-te" and "FA4 CuTe" in c["note"] for c in grug)
    case = cases["heldout86-lambda-gb300-gptoss20b-sac-compile-bs8"]
    assert _predict(case, "torchtitan-fsdp2-chunked-loss-fa4") > 1.05 * _predict(case, "torchtitan-fsdp2-chunked-loss")


def test_together_gb200_qwen_rows_run_megatron_bridge_recipe_without_tp_overlap(cases):
    """Together's GB200 readiness jobs build Qwen2.5-72B from Megatron-Bridge's library recipe
    (``qwen25_72b_pretrain_config()``, which passes no ``CommOverlapConfig``) and set none themselves, so their TP
    collectives run exposed: the seven rows sit on ``mbridge-2026-no-tp-overlap``, and at TP 8 that slows the
    predicted step by more than a fifth (TP 2 by less)."""
    groups = ("heldout100-c-together-gb200", "heldout103-c-together-gb200", "heldout25-together-dgxc")
    rows = [c for c in validation.runs() if c["group"].startswith(groups) and "72b" in c["id"]]
    assert len(rows) == 7
    assert all(c["stack"] == "mbridge-2026-no-tp-overlap" and "qwen25_72b_pretrain_config" in c["note"] for c in rows)
    tp8 = cases["heldout100-c-tg-r07-qwen72b"]
    slow = _predict(tp8, "mbridge-2026-no-tp-overlap") / _predict(tp8, "mbridge-2026")      # iteration_s
    assert slow > 1.2
    tp2 = cases["heldout100-c-tg-r07-qwen72b-17n"]                                              # tflops_per_gpu
    assert 1.0 < _predict(tp2, "mbridge-2026") / _predict(tp2, "mbridge-2026-no-tp-overlap") < slow


def test_megatron_bridge_full_iteration_mxfp8_recipes_overlap_the_expert_all_to_all(cases):
    """Megatron-Bridge's 26.06-26.08 MXFP8 presets for Qwen3-30B-A3B / Qwen3-235B-A22B / GPT-OSS-120B on GB200 / GB300
    (and Qwen3-30B-A3B on B300) state ``moe_a2a_overlap=True`` with full-iteration CUDA graphs and HybridEP, and the
    26.04 DeepSeek-V3 B200 preset at PP 8 / VP 2 / EP 32 the overlap on DeepEP: the rows that ran them sit on the
    overlap stacks, cite the preset in the note, and the overlap shortens the predicted step of Qwen3-30B-A3B on eight
    GB300 by more than a sixth (its expert all-to-all is a fifth of the step)."""
    moved = [c for c in validation.runs() if "Stack corrected (session 56)" in c["note"]]
    overlap = [c for c in moved if c["stack"] in ("mbridge-2026-a2a-overlap", "mbridge-2026-deepep-overlap")]
    assert len(overlap) == 14
    assert all("moe_a2a_overlap=True" in c["note"] or "overlap_moe_expert_parallel_comm=True" in c["note"]
               for c in overlap)
    assert all(c["precision"] == "fp8" and (c["model"].get("experts") or 0) > 1 for c in overlap)
    case = cases["mb2608-gb300-qwen3-30b-mxfp8-8"]                                          # tokens/s/GPU
    assert _predict(case, "mbridge-2026-a2a-overlap") > 1.2 * _predict(case, "mbridge-2026")
