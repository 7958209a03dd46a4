"""Set 100's rows run on stacks their launch scripts state (session 51): each stack differs from the stand-in the
blind helper chose in the stated way, and that difference changes the prediction in the direction its physics says."""

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
