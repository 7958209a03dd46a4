import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from intelligence_per_dollar.model import architecture as ar
from intelligence_per_dollar.sources import models

GPT3 = dict(layers=96, d_model=12288, heads=96, kv_heads=96, d_ff=49152, vocab=50257, gated_ffn=False,
            tied_embeddings=True)
LLAMA3_70B = dict(layers=80, d_model=8192, heads=64, kv_heads=8, d_ff=28672, vocab=128256)
MIXTRAL = dict(layers=32, d_model=4096, heads=32, kv_heads=8, d_ff=14336, vocab=32000, experts=8, top_k=2,
               expert_d_ff=14336)
DSV3 = models.get("DeepSeek-V3")


@pytest.mark.parametrize("model,total,active", [
    (GPT3, 174.6e9, 174.6e9), (LLAMA3_70B, 70.6e9, 70.6e9), (DSV3, 671e9, 37e9), (MIXTRAL, 46.7e9, 12.9e9)])
def test_known_parameter_counts(model, total, active):
    s = models.spec(model)
    assert ar.total_params(s) == pytest.approx(total, rel=0.01)
    assert ar.active_params(s) == pytest.approx(active, rel=0.02)


def test_flops_and_kv():
    s = models.spec(LLAMA3_70B)
    n = ar.matmul_params_active(s)
    assert ar.matmul_flops_per_token(s) == pytest.approx(2 * n + 2 * 8192 * 128256)
    # non-causal attention = 4 s h per layer per token (Narayanan Eq. 3's 4 B s^2 h term)
    assert ar.attention_flops_per_token(s, 4096, causal=False) == pytest.approx(80 * 4 * 4096 * 8192)
    assert ar.training_flops_per_token(s, 4096) == pytest.approx(3 * ar.forward_flops_per_token(s, 4096))
    assert ar.kv_cache_bytes_per_token(s, 2) == 2 * 8 * 128 * 80 * 2
    assert ar.kv_cache_bytes_per_token(DSV3, 1) == (512 + 64) * 61


@pytest.mark.parametrize("bad,word", [
    ({**LLAMA3_70B, "foo": 1}, "foo"), ({**LLAMA3_70B, "layers": 0}, "layers"),
    ({**LLAMA3_70B, "kv_heads": 7}, "kv_heads"), ({**MIXTRAL, "top_k": 9}, "top_k"),
    ({**LLAMA3_70B, "top_k": 2}, "top_k"), ({**LLAMA3_70B, "d_model": 8192.5}, "d_model"),
    # sizes whose FLOP counts overflow float64 (found by the property test: 2.4e153 layers x 2.4e153 d_ff)
    ({**LLAMA3_70B, "layers": 10**153, "d_ff": 10**153}, r"over 1\.8e308 weights; allowed: at most 1e\+200"),
    ({**LLAMA3_70B, "layers": 10**100, "d_ff": 10**100}, r"about 3.28e\+204 weights")])
def test_bad_input(bad, word):
    with pytest.raises(ValueError, match=word):
        models.spec(bad)


@settings(max_examples=30, deadline=None)
@given(s1=st.integers(1, 200_000), s2=st.integers(1, 200_000))
def test_flops_monotone_in_seq(s1, s2):
    a, b = sorted((s1, s2))
    assert ar.training_flops_per_token(DSV3, a) <= ar.training_flops_per_token(DSV3, b)


@pytest.mark.parametrize("total,active", [(10e12, 1e12), (10e12, 0.5e12), (1e12, 32e9)])
def test_from_total_active(total, active):
    s = ar.from_total_active(total, active)
    assert ar.total_params(s) == pytest.approx(total, rel=0.05)
    assert ar.active_params(s) == pytest.approx(active, rel=0.05)
    with pytest.raises(ValueError):
        ar.from_total_active(1e9, 2e9)


def test_a_catalogued_name_is_a_model_and_an_unknown_one_is_refused_by_name():
    from intelligence_per_dollar.sources import models as model_catalogue
    assert model_catalogue.spec("DeepSeek-V3") == model_catalogue.get("DeepSeek-V3")
    with pytest.raises(ValueError, match=r"model='GPT-9' is not a catalogued model; allowed: .*DeepSeek-V3"):
        model_catalogue.spec("GPT-9")


def test_sizes_past_float_range_and_huge_sequences_are_refused_by_name():
    """Hypothesis found an expert count of 1.1e307 (16 x that overflows float64 as an int) raising OverflowError and a
    sequence of 1.1e307 tokens overflowing the attention count: both are ValueErrors naming what is too large."""
    from intelligence_per_dollar.model import architecture
    from intelligence_per_dollar.sources import models
    base = {"layers": 1, "d_model": 8, "heads": 1, "d_ff": 1, "vocab": 1}
    for experts in (1.1235582092889474e+307, 10**400):
        with pytest.raises(ValueError, match="weights"):
            models.spec({**base, "experts": experts, "top_k": 1, "expert_d_ff": 16})
    s = models.spec(base)
    with pytest.raises(ValueError, match="seq_len"):
        architecture.forward_flops_per_token(s, 1.1235582092889474e+307)
    assert architecture.forward_flops_per_token(s, architecture.MAX_SEQ_LEN_TOKENS) < float("inf")


def test_expert_groups_hit_by_hand_and_bounds():
    """A token's 4 experts over 8 ranks hit 8 (1 - (7/8)^4) = 3.3105 ranks on average; one group is always hit
    once; the count never exceeds the experts or the groups and grows with both."""
    assert ar.expert_groups_hit(8, 4) == pytest.approx(3.3105, abs=1e-4)
    assert ar.expert_groups_hit(1, 8) == pytest.approx(1.0)
    n = np.array([1, 2, 4, 8, 64, 256])
    for k in (1, 2, 4, 8):
        hit = ar.expert_groups_hit(n, k)
        assert np.all(hit <= np.minimum(n, k) + 1e-12) and np.all(hit >= 1.0 - 1e-12)
        assert np.all(np.diff(hit) >= 0) and np.all(hit <= ar.expert_groups_hit(n, k + 1))
