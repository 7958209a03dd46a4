"""Experts split over TP whatever the EP (session 48): Megatron-Core before ``expert_tensor_parallel_size`` (core
0.10) shards every routed expert over the TP group and its all-to-all dispatcher all-gathers the received rows over
TP before the expert GEMMs (``Stack.uniform_expert_tp``). The layout's expert TP, the extra collectives, the EP
constraint of the search and the stacks that carry the flag."""

from dataclasses import replace

import numpy as np
import pytest

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.model import collectives, training
from intelligence_per_dollar.model.training import communication, context, memory, search
from intelligence_per_dollar.model.training.context import ACTIVATION_BYTES

LEGACY = replace(training.MEGATRON_CORE, uniform_expert_tp=True)


def _ctx(stack, model="Mixtral-8x7B", seq_len=4096, batch_seqs=64):
    return training.make_context(model, "H100-SXM", "bf16", seq_len, seq_len * batch_seqs, stack, "central", False)


def _lay(ctx, **par):
    c = {"tp": 4, "pp": 1, "dp": 8, "cp": 1, "ep": 8, "microbatch": 1, "interleave": 1, "recompute": 0, "zero": 1}
    c.update(par)
    return context.layout(ctx, {k: np.asarray([v]) for k, v in c.items()})


def test_flag_must_be_boolean():
    with pytest.raises(ValueError, match="uniform_expert_tp='yes'"):
        replace(training.MEGATRON_CORE, uniform_expert_tp="yes")


def test_expert_tp_follows_tp_only_with_the_flag():
    """Current recipes: expert TP 1 where EP > 1, the TP size without EP. The flag keeps the TP size with EP too, so
    each GPU holds ``1 / (ep x tp)`` of the routed experts."""
    new, old = _ctx(training.MEGATRON_CORE), _ctx(LEGACY)
    assert _lay(new).etp[0] == 1 and _lay(new, ep=1).etp[0] == 4
    assert _lay(old).etp[0] == 4 and _lay(old, ep=1).etp[0] == 4
    p_new, p_old = memory.params_per_gpu(new, _lay(new)), memory.params_per_gpu(old, _lay(old))
    assert p_old.expert[0] == pytest.approx(p_new.expert[0] / 4)
    assert p_old.dense[0] == pytest.approx(p_new.dense[0])


def test_dispatch_adds_the_tp_gather_of_the_routed_rows():
    """The legacy dispatcher's all-gather after the dispatch and reduce-scatter before the combine: two collectives
    over the TP group of ``tokens x top_k x d_model`` BF16 values each, added to the EP all-to-all time; nothing
    without TP, without EP or without the flag."""
    new, old = _ctx(training.MEGATRON_CORE), _ctx(LEGACY)
    lay = _lay(old)
    s = old.s
    gather = 2 * collectives.hierarchical_reduce_scatter_s(lay.tokens * s.top_k * s.d_model * ACTIVATION_BYTES,
                                                           lay.tp, np.gcd(4, lay.domain_block), old.scaleup,
                                                           old.scaleout)
    assert gather[0] > 0
    assert communication.expert_tp_gather_s(old, lay)[0] == pytest.approx(gather[0])
    assert (communication.ep_all_to_all_s(old, lay)[0] - communication.ep_all_to_all_s(new, _lay(new))[0]
            == pytest.approx(gather[0]))
    assert communication.expert_tp_gather_s(new, _lay(new))[0] == 0
    assert communication.expert_tp_gather_s(old, _lay(old, tp=1, dp=32))[0] == 0
    assert communication.ep_all_to_all_s(old, _lay(old, ep=1))[0] == 0


def test_search_draws_the_ep_group_from_one_tp_ranks_peers():
    """With the experts split over TP the EP group runs over the data- and context-parallel ranks of one TP rank:
    every candidate's EP divides ``dp x cp``; without the flag some candidates use TP ranks for EP."""
    old = search.candidates(_ctx(LEGACY), 32)
    assert len(old["ep"]) > 0 and np.all((old["dp"] * old["cp"]) % old["ep"] == 0)
    new = search.candidates(_ctx(training.MEGATRON_CORE), 32)
    assert np.any((new["dp"] * new["cp"]) % new["ep"] != 0)


def test_pre_core_010_megatron_stacks_carry_the_flag():
    """Megatron-LM core 0.6 (FlagPerf, FlagScale) predates ``expert_tensor_parallel_size``; current Megatron-Core
    recipes and the non-Megatron stacks do not split experts this way."""
    assert validation.STACKS["megatron-lm-2024"].uniform_expert_tp
    assert validation.STACKS["megatron-lm-2024-fa2"].uniform_expert_tp
    for name in ("mbridge-2026", "nemo-2024", "nanotron-2025", "torchtitan-fsdp2"):
        assert not validation.STACKS[name].uniform_expert_tp
