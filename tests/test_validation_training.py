import numpy as np
import pytest

from intelligence_per_dollar import validation


@pytest.fixture(scope="module")
def table():
    return validation.training_table()


def test_rows_have_sources(table):
    assert len(table) >= 30
    for case in validation.runs():
        assert case["provenance"].source_url and case["citation"]


def test_korthikanti_table5(table):
    k = table[table.group == "korthikanti-t5"]
    assert len(k) == 8
    assert k.error.abs().mean() <= 0.03
    assert k.error.abs().max() <= 0.08


def test_other_dev_cases_median(table):
    other = table[table.group != "korthikanti-t5"]
    assert other.error.abs().median() <= 0.10


@pytest.mark.parametrize("group,bound", [("megatron-t1", 0.15), ("megatron-t2", 0.15), ("h200-measured", 0.10),
                                         ("nemo", 0.20), ("mlperf-v4.0", 0.15), ("mtnlg", 0.30)])
def test_group_bounds(table, group, bound):
    g = table[table.group == group]
    assert len(g) > 0 and g.error.abs().max() <= bound


def test_summary(table):
    s = validation.summary(table)
    assert "all" in s.index and np.isfinite(s.loc["all", "mean"])
