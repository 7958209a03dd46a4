"""Speculative decoding in the serving model: the drafts a sequence verifies, the drafter's cost and the tokens it
emits (serving_context.speculation, inference._draft_s, serving_arrivals under accepted tokens), and the checks
against measured runs (TensorRT-LLM tech blog 1's MTP table; MLPerf Inference v6.1 DeepSeek-R1 Interactive)."""

import numpy as np
import pytest

from intelligence_per_dollar.analysis import validation_inference as vi
from intelligence_per_dollar.model import inference as inf
from intelligence_per_dollar.model import serving_arrivals as arr
from intelligence_per_dollar.model import serving_context as sctx
from intelligence_per_dollar.sources import runs

DSR1 = dict(model="DeepSeek-R1", accelerator="B200", gpus=8, precision="fp4", input_tokens=1024, output_tokens=2048)
TP8 = {"tp": 8, "dp": 1, "ep": 8}


def _at_one(k, **kw):
    return inf.estimate(**DSR1, concurrency=1, parallelism=TP8, speculative_tokens=k, **kw)


def test_no_drafts_is_the_model_without_speculation():
    plain = inf.estimate(**DSR1, concurrency=64, parallelism=TP8)
    zero = inf.estimate(**DSR1, concurrency=64, parallelism=TP8, speculative_tokens=0)
    assert zero == plain


def test_the_default_acceptance_is_the_measured_mtp_table():
    for k in range(1, 6):
        assert sctx.speculation(k, None) == (k, sctx.assumed(f"mtp_accepted_tokens_k{k}", "central"))
    assert sctx.speculation(0, None) == (0, 1.0)
    assert sctx.speculation(7, 5.5) == (7, 5.5)


@pytest.mark.parametrize("k, accepted, word", [(-1, None, "speculative_tokens"), (6, None, "speculative_tokens=6"),
                                               (3, 4.5, "accepted_tokens=4.5"), (2, 0.5, "accepted_tokens"),
                                               (1.5, None, "speculative_tokens"),
                                               (sctx.MAX_SPECULATIVE_TOKENS + 1, 2.0, "speculative_tokens")])
def test_bad_speculation_is_refused_by_name(k, accepted, word):
    with pytest.raises(ValueError, match=word):
        sctx.speculation(k, accepted)
    with pytest.raises(ValueError, match=word):
        inf.estimate(**DSR1, concurrency=1, speculative_tokens=k, accepted_tokens=accepted)


def test_a_finite_benchmark_with_drafts_is_refused():
    with pytest.raises(ValueError, match="requests=100 with speculative_tokens=3"):
        inf.estimate(**DSR1, requests=100, speculative_tokens=3)


def test_drafts_lengthen_the_iteration_but_each_emits_more_tokens():
    steps = [_at_one(k).step_time_s for k in range(6)]
    assert all(b > a for a, b in zip(steps, steps[1:]))          # every draft costs a layer and the head
    base = _at_one(0)
    for k in range(1, 6):
        e = _at_one(k)
        accepted = sctx.speculation(k, None)[1]
        assert e.tokens_per_s_per_user == pytest.approx(accepted / e.step_time_s)
        assert base.tokens_per_s_per_user < e.tokens_per_s_per_user < accepted * base.tokens_per_s_per_user


def test_the_accepted_tokens_given_set_the_speed():
    lo, hi = _at_one(3, accepted_tokens=1.5), _at_one(3, accepted_tokens=3.5)
    # the same work per iteration, but for the prompts of the requests that finish sooner (a x ISL / OSL each)
    assert hi.step_time_s > lo.step_time_s
    assert hi.step_time_s == pytest.approx(lo.step_time_s, rel=0.01)
    assert hi.tokens_per_s_per_user / lo.tokens_per_s_per_user == pytest.approx(3.5 / 1.5, rel=0.01)


def test_the_drafter_takes_memory():
    plain = inf.estimate(**DSR1, concurrency=256, parallelism={"tp": 1, "dp": 8, "ep": 8})
    spec = inf.estimate(**DSR1, concurrency=256, parallelism={"tp": 1, "dp": 8, "ep": 8}, speculative_tokens=3)
    for part in ("weights", "kv_cache", "workspace"):
        assert spec.memory_breakdown_bytes[part] > plain.memory_breakdown_bytes[part]


def test_a_simulated_sequence_advances_the_accepted_tokens_per_iteration():
    step = arr.IterationTable(np.array([0.0, 10.0]), np.array([0.0, 1e4]), np.full((2, 2), 0.01))
    one = arr.simulate(step, 1e-3, 100, np.array([101.0]), 8, 8192, np.inf)
    two = arr.simulate(step, 1e-3, 100, np.array([101.0]), 8, 8192, np.inf, accepted_tokens=2.0, tokens_per_decode=3.0)
    assert one["tpot_s"][0] == pytest.approx(0.01)
    assert two["tpot_s"][0] == pytest.approx(0.005)


def test_fewer_sequences_are_in_flight_when_each_emits_more():
    step = arr.IterationTable(np.array([0.0, 100.0]), np.array([0.0, 1e5]), np.full((2, 2), 0.02))
    one = arr.steady_in_flight(step, 2.0, 1000, 1000.0, 100)
    three = arr.steady_in_flight(step, 2.0, 1000, 1000.0, 100, accepted_tokens=3.0)
    assert one == pytest.approx(40.0)                 # Little's law: 2/s x 1000 iterations x 20 ms
    assert three == pytest.approx(40.0 / 3.0)


def _cases(group):
    return [c for c in runs.inference_runs() if c["group"] == group]


def test_the_measured_mtp_speedups_are_reproduced():
    """TensorRT-LLM tech blog 1 measured DeepSeek-R1's TPS/user on 8 B200 at batch 1 with 0-5 MTP drafts. Its
    acceptance column is the model's default, so the speedup over no drafts checks what verifying and drafting cost:
    within 5% of the measured speedup for every k."""
    cases = sorted(_cases("trtllm-dsr1-mtp-blog"), key=lambda c: c["speculative_tokens"])
    assert [c["speculative_tokens"] for c in cases] == list(range(6))
    pred = [vi.predict(c)[0] for c in cases]
    for c, p in zip(cases[1:], pred[1:]):
        measured, model = c["measured"] / cases[0]["measured"], p / pred[0]
        assert model == pytest.approx(measured, rel=0.05), c["id"]


@pytest.mark.slow
def test_mlperf_interactive_runs_with_mtp_are_predicted_within_15_percent():
    """MLPerf Inference v6.1's DeepSeek-R1 Interactive runs (p99 TTFT 1.5 s, TPOT 15 ms) whose configs state MTP 3
    (NVIDIA's three), and Google's and Oracle's, whose configs are not stored and whose MTP 3 is inferred from every
    stored one (session 35): without speculative decoding the model meets the TPOT only at a trickle (-94%)."""
    cases = [c for c in runs.inference_runs() if c["group"].startswith("heldout38") and c["speculative_tokens"]]
    assert len(cases) == 5
    for c in cases:
        assert vi.predict(c)[0] / c["measured"] - 1 == pytest.approx(0.0, abs=0.15), c["id"]
        plain = dict(c, speculative_tokens=0)
        assert vi.predict(plain)[0] < 0.2 * c["measured"]


def test_the_speculative_table_pairs_each_drafted_run_with_its_twin():
    """speculative_table reads the validation table: each drafted case, and the same source's run without drafts as
    the base of its speedup (a prediction off by the same factor everywhere has no speedup error)."""
    import pandas as pd
    cases = [c for c in runs.inference_runs() if c["group"] == "trtllm-dsr1-mtp-blog" or c["speculative_tokens"]]
    vt = pd.DataFrame({"case": [c["id"] for c in cases], "group": [c["group"] for c in cases],
                       "measured": [c["measured"] for c in cases],
                       "predicted": [1.3 * c["measured"] for c in cases]})
    vt["error"] = vt["predicted"] / vt["measured"] - 1.0
    t = vi.speculative_table(vt)
    assert len(t) == len(cases) == 11
    blog = t[t["case"].str.startswith("trtllm-blog1")].set_index("speculative_tokens")
    assert np.isnan(blog.loc[0, "measured_speedup"])
    assert blog.loc[3, "measured_speedup"] == pytest.approx(253 / 111)
    assert np.allclose(blog["speedup_error"].dropna(), 0.0)
    assert blog.loc[3, "accepted_tokens"] == pytest.approx(2.82)
    mlperf = t[t["case"].str.startswith("heldout38")]
    # NVIDIA's three and, inferred from every stored v6.1 Interactive config (session 35), Google's and Oracle's
    assert len(mlperf) == 5 and mlperf["measured_speedup"].isna().all()     # no twin without drafts at 15 ms TPOT
