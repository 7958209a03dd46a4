"""The held-out sets' blind errors (data/runs/held_out_sets.csv) and their comparison with the error now."""

import numpy as np
import pandas as pd
import pytest

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.sources import io, runs
from intelligence_per_dollar.views.prose import training as prose


def test_every_held_out_training_group_belongs_to_a_recorded_set():
    # the training groups judged blind are read from the sets whose blind error is recorded: every heldoutN-* group
    # of the table (a set merged without its held_out_sets.csv row would be missed) and the named groups of sets 1-4,
    # and no group the model was developed on
    groups = {c["group"] for c in validation.runs()}
    held = set(validation.held_out_groups(groups))
    assert {g for g in groups if g.startswith("heldout")} <= held
    named = {"torchtitan-fsdp2", "llama3-production", "megatron-bridge-unseen", "bloom", "mpt-foundry-fsdp",
             "nemo-25x", "automodel-fsdp2", "megatron-bridge-2604", "megatron-bridge-2606", "torchtitan-blackwell"}
    assert held - {g for g in held if g.startswith("heldout")} == named
    assert not held & {"korthikanti-t5", "megatron-t1", "megatron-bridge", "mlperf-v4.0", "deepseek-v3"}
    assert {s["set"] for s in runs.held_out_sets()} == set(range(1, 107))


def test_held_out_groups_follow_the_sets_patterns():
    sets = [{"set": 1, "table": "training", "groups": ("a", "b*")}, {"set": 2, "table": "serving", "groups": ("c",)}]
    assert validation.held_out_groups(["a", "b1", "b2", "c", "ab", "x"], sets) == ("a", "b1", "b2")
    assert validation.held_out_groups(["x"], sets) == ()
    for s in runs.held_out_sets():
        assert s["table"] in runs.HELD_OUT_TABLES and 0 < s["blind_median"] <= s["blind_max"]
        assert s["provenance"].source_url == "data/runs/HELD_OUT.md" and s["provenance"].kind == "derived"


def test_groups_match_names_and_prefixes():
    assert validation.in_groups("heldout10-ix-dsr1", ("heldout10-*",))
    assert not validation.in_groups("heldout1-x", ("heldout10-*",))
    assert validation.in_groups("bloom", ("torchtitan-fsdp2", "bloom"))
    assert not validation.in_groups("bloom-2", ("bloom",))


def test_table_compares_blind_with_now_and_skips_refused_cases():
    sets = [{"set": 1, "table": "training", "groups": ("a", "b*"), "cases": 3, "blind_median": 0.5, "blind_max": 0.9},
            {"set": 2, "table": "serving", "groups": ("c",), "cases": 1, "blind_median": 0.2, "blind_max": 0.2}]
    tr = pd.DataFrame({"group": ["a", "b1", "b2", "x"], "error": [0.1, -0.3, np.nan, 5.0]})
    t = validation.held_out_sets_table(sets, {"training": tr})
    assert list(t["set"]) == [1]                           # the serving set's table was not given
    row = t.iloc[0]
    assert row["cases_now"] == 2 and row["median_now"] == pytest.approx(0.2) and row["max_now"] == pytest.approx(0.3)
    assert row["blind_median"] == 0.5 and row["cases_blind"] == 3
    with pytest.raises(ValueError, match=r"held-out set 1 \(training\): no case of groups a b\*"):
        validation.held_out_sets_table(sets, {"training": tr.assign(group="z")})
    # a set whose cases left its table (no longer max load) while its groups are in another table: 0 cases, NaN
    left = validation.held_out_sets_table(sets[:1], {"training": tr.assign(group="z"), "serving": tr})
    assert left["cases_now"].tolist() == [0] and left["median_now"].isna().all() and left["max_now"].isna().all()


def test_prose_reads_the_latest_set():
    t = pd.DataFrame({"set": [1, 2], "table": ["training"] * 2, "cases_blind": [20, 8], "blind_median": [0.3, 0.08],
                      "blind_max": [1.0, 0.2], "cases_now": [20, 8], "median_now": [0.1, 0.08], "max_now": [0.5, 0.2]})
    text = prose.held_out_sets(t, "training", "Training")
    assert "from 8% to 30%" in text and "set 2, was **8.0%** blind over 8 runs" in text
    one = t.assign(cases_blind=[20, 1])
    assert "blind over 1 run." in prose.held_out_sets(one, "training", "Training")
    with pytest.raises(ValueError, match="table='serving' has no held-out set"):
        prose.held_out_sets(t, "serving", "Serving")


@pytest.mark.parametrize("column,value,message", [
    ("table", "inference", r"column 'table': 'inference' not in training, serving, serving-user"),
    ("blind_max", "0.01", r"column 'blind_max': 0.01 is below blind_median"),
    ("groups", "", r"column 'groups': empty"),
    ("blind_median", "abc", r"column 'blind_median': 'abc' is not a number"),
])
def test_bad_rows_name_the_column(first_row_set, column, value, message):
    first_row_set("runs", "held_out_sets.csv", column, value)
    with pytest.raises(io.DataError, match=message):
        runs.held_out_sets()
