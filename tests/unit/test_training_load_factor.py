"""The busiest expert-parallel rank's load (``Stack.moe_load_factor``) applies only where there is more than one
expert-parallel rank: at EP 1 every GPU holds every expert and runs all of its own routed tokens, so an uneven split
over the experts leaves its work at the mean (session 52)."""

from dataclasses import replace

import numpy as np

from intelligence_per_dollar.model import training

MOE = {"layers": 4, "d_model": 1024, "heads": 8, "kv_heads": 8, "d_ff": 2048, "vocab": 32000, "experts": 16,
       "top_k": 2, "expert_d_ff": 1024}


def _step(ep, load):
    par = {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "ep": ep, "microbatch": 2, "recompute": "none", "zero": 1}
    stack = replace(training.MEGATRON_CORE, moe_load_factor=load)
    return training.estimate(model=MOE, accelerator="H100-SXM", gpus=8, precision="bf16", seq_len=4096,
                             global_batch_tokens=8 * 2 * 4096, parallelism=par, stack=stack).step_time_s


def test_one_expert_parallel_rank_carries_the_mean_load():
    assert np.isclose(_step(1, 1.25), _step(1, 1.0), rtol=1e-12)


def test_with_expert_parallelism_the_busiest_rank_paces_the_layer():
    assert _step(8, 1.25) > 1.02 * _step(8, 1.0)
