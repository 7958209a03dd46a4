"""Fine-grained activation offloading of the routed expert block (``Stack.moe_activation_offload``): what leaves
HBM, what crosses the CPU-GPU link and when the copy shows in the step (model.training.memory)."""

from dataclasses import replace

import numpy as np
import pytest

from intelligence_per_dollar.model import training
from intelligence_per_dollar.model.training import memory
from intelligence_per_dollar.sources import hardware, models

QWEN235 = "Qwen3-235B-A22B"
# Megatron-MoE-ModelZoo's GB200 Qwen3-235B MXFP8 row: TP1 PP4 VPP6 EP64 MBS3 GBS3072, "activation offloading required"
LAYOUT = {"tp": 1, "pp": 4, "dp": 64, "cp": 1, "ep": 64, "microbatch": 3, "interleave": 6, "recompute": "selective"}
KW = dict(model=QWEN235, accelerator="GB200", gpus=256, precision="fp8", seq_len=4096,
          global_batch_tokens=3072 * 4096, parallelism=LAYOUT)
OFFLOAD = replace(training.MEGATRON_CORE, moe_activation_offload=True)


def test_offloaded_bytes_by_hand():
    s = models.spec(QWEN235)        # top-8 of 128 experts, expert FFN 1536 (gated), d_model 4096
    removed, moved = memory.offload_bytes_per_token(s, 1.0)
    # each routed copy leaves HBM: FC1 output (2 x 1536 BF16), FC2 input and FC1 input (FP8); the FC1 input
    # and output cross the link, the FC2 input (activation output) is recomputed
    assert removed == 8 * (2 * 1536 * 2 + 1536 + 4096) == 94208
    assert moved == 8 * (2 * 1536 * 2 + 4096) == 81920
    assert memory.offload_bytes_per_token(models.spec("Llama-3.1-70B"), 1.0) == (0.0, 0.0)   # dense: nothing


def test_offload_lets_the_run_that_needed_it_fit():
    """Without offload the stated layout is refused (the model needs 1.33x the usable HBM); with it the layout fits
    and the routed activations are on the host, well within the Grace memory of a GB200 GPU."""
    with pytest.raises(ValueError, match="does not fit in memory"):
        training.estimate(stack=training.MEGATRON_CORE, **KW)
    e = training.estimate(stack=OFFLOAD, **KW)
    assert e.memory_fits
    assert e.memory_per_gpu_bytes < hardware.get("GB200").memory_capacity_bytes * 0.93


def test_offload_never_speeds_the_step_and_a_slow_link_shows():
    """The copy hides behind the layer's compute on NVLink-C2C (225 GB/s), not over a link 100x slower."""
    fits = dict(KW, parallelism={**LAYOUT, "recompute": "full"})        # fits with and without offload
    base = training.estimate(stack=training.MEGATRON_CORE, **fits)
    fast = training.estimate(stack=OFFLOAD, **fits)
    slow_acc = replace(hardware.get("GB200"), host_link_bytes_per_s=2.25e9)
    slow = training.estimate(stack=OFFLOAD, **dict(fits, accelerator=slow_acc))
    assert fast.step_time_s >= base.step_time_s - 1e-9
    assert slow.step_time_s > 1.2 * fast.step_time_s
    assert slow.time_breakdown_s["step_host_launch_s"] > 0.2 * slow.step_time_s


def test_offload_needs_a_host_link():
    bare = replace(hardware.get("GB200"), host_link_bytes_per_s=None)
    with pytest.raises(ValueError, match="host_link_bytes_per_s"):
        training.estimate(stack=OFFLOAD, **dict(KW, accelerator=bare))


def test_offload_is_refused_when_the_host_cannot_hold_it():
    small_host = replace(hardware.get("GB200"), host_memory_bytes=1e9)
    with pytest.raises(ValueError, match="does not fit in host memory"):
        training.estimate(stack=OFFLOAD, **dict(KW, accelerator=small_host))
    assert np.isfinite(training.estimate(stack=OFFLOAD, **KW).step_time_s)
