import numpy as np
import pytest

from intelligence_per_dollar.analysis import validation


@pytest.fixture(scope="module")
def table():
    return validation.training_table()


def test_rows_have_sources(table):
    assert len(table) >= 50
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


# Per-group bounds: a regression in the model fails here. The megatron-bridge max is loose
# because small-expert Qwen3 MoE runs are known outliers (launch-bound; see data/runs/README.md).
@pytest.mark.parametrize("group,median,worst", [
    ("megatron-t1", 0.10, 0.15), ("megatron-t2", 0.12, 0.16), ("h200-measured", 0.06, 0.10),
    ("nemo", 0.15, 0.20), ("mlperf-v4.0", 0.12, 0.15), ("mtnlg", 0.25, 0.30),
    ("megatron-bridge", 0.12, 1.7), ("deepseek-v3", 0.10, 0.10)])
def test_group_bounds(table, group, median, worst):
    g = table[table.group == group]
    assert len(g) > 0
    assert g.error.abs().median() <= median and g.error.abs().max() <= worst


def test_dense_blackwell_and_moe_cases_within_30_percent(table):
    """FP8/NVFP4 dense on Blackwell and the DeepSeek-V3 MoE rows, the chapter's closest analogues:
    median within 10%, every case within 30% (the worst, DeepSeek-V3 on B200, is off by 27%)."""
    g = table[table.case.str.contains("llama31-405b|dsv3|deepseek")]
    assert len(g) >= 9
    assert g.error.abs().max() <= 0.30 and g.error.abs().median() <= 0.10


def test_summary(table):
    s = validation.summary(table)
    assert "all" in s.index and np.isfinite(s.loc["all", "mean"])
