"""The cases off by more than 2x and the evidence the measured data gives (analysis.outliers)."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intelligence_per_dollar.analysis import outliers, validation

KEY = outliers.serving_workload_key


def _case(cid, measured, unit="output_tokens_per_s_per_gpu", model="m", gpus=8, requests=None):
    return {"id": cid, "model_name": model, "accelerator": "H200", "gpus": gpus, "precision": "fp8",
            "input_tokens": 1000, "output_tokens": 1000, "unit": unit, "ttft_limit_s": None, "tpot_limit_s": None,
            "concurrency": None, "requests": requests, "measured": measured}


def _table(rows):
    return pd.DataFrame.from_records(rows, columns=["case", "group", "measured", "predicted",
                                                    "predicted_with_requests"])


def test_each_reason_and_the_cases_left_out():
    cases = [_case("finite", 100.0, model="a", requests=50), _case("slow", 100.0, model="b"),
             _case("fast-peer", 200.0, model="b"), _case("alone", 100.0, model="c"), _case("close", 100.0, model="d"),
             _case("refused", 100.0, model="e"), _case("timed", 10.0, unit="gemm_s", model="f"),
             _case("other-gpus", 400.0, model="b", gpus=16)]
    t = _table([("finite", "g", 100.0, 300.0, 150.0), ("slow", "g", 100.0, 250.0, math.nan),
                ("fast-peer", "g", 200.0, 260.0, math.nan), ("alone", "g", 100.0, 230.0, math.nan),
                ("close", "g", 100.0, 150.0, math.nan), ("refused", "g", 100.0, math.nan, math.nan),
                ("timed", "g", 10.0, 4.0, math.nan), ("other-gpus", "g", 400.0, 420.0, math.nan)])
    b = outliers.beyond_factor_table(t, cases, KEY).set_index("case")
    assert set(b.index) == {"finite", "slow", "alone", "timed"}
    assert b.loc["finite", "reason"] == outliers.REASONS[0] and b.loc["finite", "ratio_with_requests"] == 1.5
    # the same model on 8 GPUs ran 2x faster; the 16-GPU run of it is another workload
    assert b.loc["slow", "reason"] == outliers.REASONS[1] and b.loc["slow", "faster_peer"] == "fast-peer"
    assert b.loc["slow", "peer_speedup"] == pytest.approx(2.0)
    assert b.loc["alone", "reason"] == outliers.REASONS[2] and b.loc["alone", "faster_peer"] == ""
    # a time: predicted 4 s against 10 s measured is 2.5x too fast
    assert b.loc["timed", "ratio"] == pytest.approx(2.5) and b.loc["timed", "reason"] == outliers.REASONS[2]
    counts = outliers.reason_counts({"x": b.reset_index(), "empty": b.iloc[:0]})
    assert list(counts["x"]) == [1, 1, 2, 4] and list(counts["empty"]) == [0, 0, 0, 0]
    stacked = outliers.stacked({"x": b.reset_index(), "y": b.reset_index()})
    assert len(stacked) == 8 and set(stacked["call"]) == {"x", "y"} and stacked.columns[0] == "call"


def test_a_peer_must_be_faster_by_the_ratio():
    cases = [_case("a", 100.0), _case("b", 140.0)]
    t = _table([("a", "g", 100.0, 300.0, math.nan)])
    assert outliers.beyond_factor_table(t, cases, KEY)["reason"].tolist() == [outliers.REASONS[2]]
    assert outliers.beyond_factor_table(t, cases, KEY, peer_ratio=1.3)["reason"].tolist() == [outliers.REASONS[1]]


def test_training_speed_turns_an_iteration_time_into_tokens_per_gpu():
    c = {"unit": "iteration_s", "measured": 2.0, "global_batch_seqs": 512, "seq_len": 4096, "gpus": 64}
    assert outliers.training_speed(c) == pytest.approx(512 * 4096 / (2.0 * 64))
    assert outliers.training_speed({**c, "unit": "tokens_per_s_per_gpu", "measured": 123.0}) == 123.0


def test_bad_input_is_named():
    cases = [_case("a", 100.0)]
    t = _table([("a", "g", 100.0, 300.0, math.nan)])
    with pytest.raises(ValueError, match="factor"):
        outliers.beyond_factor_table(t, cases, KEY, factor=1.0)
    with pytest.raises(ValueError, match="peer_ratio"):
        outliers.beyond_factor_table(t, cases, KEY, peer_ratio=0.5)
    with pytest.raises(ValueError, match="without a record: b"):
        outliers.beyond_factor_table(_table([("b", "g", 1.0, 5.0, math.nan)]), cases, KEY)
    with pytest.raises(ValueError, match="empty"):
        outliers.stacked({})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.1, 1e4), st.floats(0.1, 1e4)), min_size=1, max_size=20),
       st.floats(1.1, 5.0))
def test_exactly_the_cases_outside_the_factor_are_listed(pairs, factor):
    cases = [_case(f"c{i}", m, model=f"m{i}") for i, (m, _) in enumerate(pairs)]
    t = _table([(f"c{i}", "g", m, p, math.nan) for i, (m, p) in enumerate(pairs)])
    b = outliers.beyond_factor_table(t, cases, KEY, factor=factor)
    outside = {f"c{i}" for i, (m, p) in enumerate(pairs) if not 1 / factor <= p / m <= factor}
    assert set(b["case"]) == outside
    assert ((b["ratio"] > factor) | (b["ratio"] < 1 / factor)).all()
    # one run per workload: no faster peer, so nothing is put down to one
    assert (b["reason"] == outliers.REASONS[2]).all()


def test_training_cases_beyond_2x_are_those_the_speed_error_puts_there():
    table = validation.training_table()
    b = validation.beyond_factor(table)
    speed = 1.0 + validation.speed_error(table)
    expected = set(table.case[(speed > outliers.FACTOR) | (speed < 1 / outliers.FACTOR)])
    assert set(b["case"]) == expected and len(b) >= 10
    assert np.isfinite(b["peer_speedup"]).all() and (b["peer_speedup"] >= 1.0 - 1e-12).all()
    # a faster peer is named exactly when the reason says so, and is another run of the same workload
    peer = b["reason"] == outliers.REASONS[1]
    assert (b.loc[peer, "faster_peer"] != "").all() and (b.loc[~peer, "faster_peer"] == "").all()
    by_id = {c["id"]: c for c in validation.runs()}
    for row in b[peer].itertuples():
        assert outliers.training_workload_key(by_id[row.case]) == outliers.training_workload_key(by_id[row.faster_peer])
        assert row.peer_speedup >= outliers.FASTER_PEER_RATIO


def test_the_worked_number_counts_each_reason_and_names_the_rest():
    from intelligence_per_dollar.views.prose import training as prose

    stated = pd.DataFrame({"reason": [outliers.REASONS[1], outliers.REASONS[2], outliers.REASONS[2]]})
    user = pd.DataFrame({"reason": [outliers.REASONS[0]] * 4 + [outliers.REASONS[2]]})
    text = prose.beyond_factor({"at the stated layouts": stated, "as a user": user, "empty": stated.iloc[:0]},
                               "serving")
    assert "At the stated layouts, 3 cases: 1 have a run of the same workload" in text and "**2** have neither" in text
    assert "As a user, 5 cases: 4 are finite benchmarks" in text and "**1** have neither" in text
    assert "Empty, none" in text
    # the explanation of a faster run is given once
    assert text.count("the hardware does better") == 1
    with pytest.raises(ValueError, match="empty"):
        prose.beyond_factor({}, "serving")
