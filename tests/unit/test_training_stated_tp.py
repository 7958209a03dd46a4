"""A stated tensor-parallel size that spans whole scale-up domains is honoured (session 50): the search never picks one
(TP stays inside a node), but a run that states one, such as DistFlashAttn's Megatron-LM baseline at TP 16 over two
DGX A100 boxes, is priced with its all-reduces hierarchical inside and across the domains instead of refused."""

from intelligence_per_dollar.model import training

LLAMA7B = "Llama-2-7B"


def _est(gpus, par, **kw):
    return training.estimate(model=LLAMA7B, accelerator="A100-80GB", gpus=gpus, precision="bf16", seq_len=8192,
                             global_batch_tokens=8192 * 16, parallelism=par, stack=training.MEGATRON_CORE, **kw)


def test_stated_tp_across_two_domains_is_priced_not_refused():
    est = _est(16, {"tp": 16, "pp": 1, "cp": 1, "dp": 1})
    assert est.parallelism["tp"] == 16 and est.step_time_s > 0


def test_tp_across_domains_is_slower_than_inside_one():
    """The same 16 GPUs at TP 16 (every all-reduce also crosses the scale-out network) run slower than at TP 8 x DP 2,
    and their TP traffic costs more per layer than TP 8 inside one node."""
    across = _est(16, {"tp": 16, "pp": 1, "cp": 1, "dp": 1})
    inside = _est(16, {"tp": 8, "pp": 1, "cp": 1, "dp": 2})
    assert across.step_time_s > inside.step_time_s
    assert across.time_breakdown_s["step_tp_comm_s"] > inside.time_breakdown_s["step_tp_comm_s"]


def test_search_keeps_tp_inside_a_domain():
    """Without a stated TP the search never straddles domains: on 16 GPUs it picks TP 8 at most."""
    assert _est(16, None).parallelism["tp"] <= 8
    assert _est(16, {"pp": 1, "cp": 1, "dp": 1, "tp": 16}).parallelism["tp"] == 16
