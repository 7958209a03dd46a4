"""Sweeps: spec validation, deterministic samples, the Parquet cache and its key, Dask equal to
serial, rank sensitivity, and the ratio summary (tiny models and samples: the whole module runs
in seconds)."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

from intelligence_per_dollar.analysis import sweeps
from intelligence_per_dollar.analysis.claims import meets_claim
from intelligence_per_dollar.analysis.sweeps import derived, gpu_ratio
from intelligence_per_dollar.model import training as tr
from intelligence_per_dollar.model.training.search import STATED_MEMORY_TOLERANCE
from intelligence_per_dollar.sources import assumptions as assumption_files

FN = "intelligence_per_dollar.analysis.sweeps.gpu_ratio:sample"
PROV = {"source_url": "https://example.org/x", "date_read": "2026-12-01", "kind": "assumption"}
#: A scaled-down GPU-ratio sweep: a 4B-parameter MoE on 1,000T tokens (each search well under a second).
TINY = {
    "name": "tiny-ratio", "function": FN, "method": "random", "samples": 4, "seed": 7,
    "fixed": {"workload": "pretrain-10t", "total_params": 4e9, "tokens": 1e15},
    "parameters": {
        "active_params": {"distribution": "uniform", "low": 3e8, "central": 4e8, "high": 6e8, **PROV},
        "kept_layer_fraction": {"assumption": "fp4_kept_layer_fraction"},
        "kept_precision": {"values": ["bf16", "fp8"], **PROV},
        "ceiling_scale": {"derived": "ceiling_scale:VR200"},
        "regime": {"values": list(tr.REGIMES), **PROV},
        "global_batch_tokens": {"distribution": "loguniform", "low": 2**23, "central": 2**24, "high": 2**25, **PROV},
        "stack": {"values": ["modern", "deepseek-v3"], **PROV},
        "moe_load_factor": {"assumption": "moe_load_factor"},
        "model_error": {"distribution": "lognormal", "median": 1.0, "sigma": 0.2, **PROV},
    },
}


def tiny(**changes) -> sweeps.SweepSpec:
    d = copy.deepcopy(TINY)
    d.update(changes)
    return sweeps.spec_from_dict(d)


@pytest.fixture(scope="module")
def client():
    """One in-process Dask cluster (threads) for the module."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


# --------------------------------------------------------------------------- spec


def test_shipped_spec_validates_and_every_parameter_has_a_source():
    s = sweeps.load_spec("gpu-ratio-10t")
    assert s.method == "random" and s.samples >= 50 and s.fixed["workload"] == "pretrain-10t"
    assert set(s.parameters) == set(gpu_ratio.LABELS)
    assert all(p.source for p in s.parameters.values())
    assert s.parameters["model_error"].distribution == "lognormal" and s.parameters["model_error"].sigma > 0


@pytest.mark.parametrize("change, key", [
    ({"name": "Bad Name"}, "name="),
    ({"function": "os:system"}, "function="),
    ({"method": "sobol"}, "method="),
    ({"samples": 0}, "samples="),
    ({"seed": -1}, "seed="),
    ({"colour": 1}, "colour="),
    ({"fixed": {"regime": "throughput"}}, "fixed.regime="),
])
def test_bad_spec_names_key_and_allowed(change, key):
    with pytest.raises(ValueError, match="allowed") as ex:
        tiny(**change)
    assert key in str(ex.value)


@pytest.mark.parametrize("param, value, key", [
    ("kept_precision", {"values": ["bf16", "fp8"], "weights": [0.2, 0.2], **PROV}, "kept_precision.weights="),
    ("active_params", {"distribution": "gamma", "low": 1, "central": 2, "high": 3, **PROV}, "distribution="),
    ("active_params", {"distribution": "uniform", "low": 3, "central": 2, "high": 4, **PROV}, "low <= central"),
    ("active_params", {"distribution": "uniform", "low": 1, "central": 2, "high": 3}, "source_url"),
    ("active_params", {"assumption": "no_such_thing"}, "active_params.assumption="),
    ("model_error", {"derived": "nope"}, "derived="),
])
def test_bad_parameter_is_refused(param, value, key):
    d = copy.deepcopy(TINY)
    d["parameters"][param] = value
    with pytest.raises(ValueError) as ex:
        sweeps.spec_from_dict(d)
    assert key in str(ex.value)


def test_missing_spec_file_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="file not found"):
        sweeps.load_spec(tmp_path / "none.yml")


# --------------------------------------------------------------------------- samples


def test_draws_are_deterministic_and_respect_ranges():
    a, b = sweeps.draw(tiny()), sweeps.draw(tiny())
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["sample", *TINY["parameters"]]
    assert a["active_params"].between(3e8, 6e8).all()
    assert set(a["regime"]) <= set(tr.REGIMES)
    assert not sweeps.draw(tiny(seed=8))["active_params"].equals(a["active_params"])


def test_adding_a_parameter_leaves_the_others_draws_unchanged():
    d = copy.deepcopy(TINY)
    d["parameters"]["extra"] = {"distribution": "uniform", "low": 0, "central": 1, "high": 2, **PROV}
    a, b = sweeps.draw(tiny()), sweeps.draw(sweeps.spec_from_dict(d))
    pd.testing.assert_frame_equal(a, b[a.columns])


def test_grid_is_the_cartesian_product_first_parameter_slowest():
    s = sweeps.spec_from_dict({"name": "g", "function": FN, "method": "grid",
                               "parameters": {"a": {"values": [1, 2]}, "b": {"values": ["x", "y", "z"]}}})
    g = sweeps.draw(s)
    assert list(zip(g["a"], g["b"])) == [(1, "x"), (1, "y"), (1, "z"), (2, "x"), (2, "y"), (2, "z")]


def test_choice_weights_are_followed():
    d = copy.deepcopy(TINY)
    d["samples"] = 2000
    d["parameters"]["stack"]["weights"] = [0.9, 0.1]
    share = (sweeps.draw(sweeps.spec_from_dict(d))["stack"] == "modern").mean()
    assert 0.87 < share < 0.93


# --------------------------------------------------------------------------- cache key


def test_cache_key_follows_every_input():
    base = sweeps.cache_key(tiny())
    assert sweeps.cache_key(tiny()) == base
    assert sweeps.cache_key(tiny(seed=8)) != base
    assert sweeps.cache_key(tiny(samples=5)) != base
    d = copy.deepcopy(TINY)
    d["parameters"]["active_params"]["high"] = 7e8
    assert sweeps.cache_key(sweeps.spec_from_dict(d)) != base


def test_cache_key_changes_when_data_changes(data_copy):
    s = tiny()
    before = sweeps.cache_key(s)
    p = data_copy / "hardware" / "accelerators.csv"
    p.write_text(p.read_text() + "\n# touched\n")
    assert sweeps.cache_key(s) != before


def test_cache_key_changes_when_an_assumption_changes(data_copy):
    before = sweeps.cache_key(tiny())
    p = data_copy / "assumptions" / "training.csv"
    p.write_text(p.read_text().replace("moe_load_factor,ratio,1.0,1.1,1.25", "moe_load_factor,ratio,1.0,1.2,1.25"))
    assumption_files._cached.cache_clear()
    try:
        s = tiny()
        assert s.parameters["moe_load_factor"].central == 1.2
        assert sweeps.cache_key(s) != before
    finally:
        assumption_files._cached.cache_clear()


# --------------------------------------------------------------------------- runs


@pytest.fixture(scope="module")
def serial_table():
    return sweeps.compute(tiny(), scheduler=sweeps.SERIAL)


def test_serial_table_has_samples_and_outputs(serial_table):
    t = serial_table
    assert len(t) == 4 and list(t["sample"]) == [0, 1, 2, 3]
    for col in ("gpus_reference", "gpus_candidate", "gpus_in_use_candidate", "ratio_model", "ratio"):
        assert col in t.columns
    assert (t["gpus_reference"] % 72 == 0).all() and t["gpus_reference"].nunique() > 1
    np.testing.assert_allclose(t["ratio"], t["ratio_model"] * t["model_error"])
    np.testing.assert_allclose(t["ratio_model"], t["gpus_candidate"] / t["gpus_reference"])


def test_dask_run_equals_serial_run(client, serial_table):
    on_dask = sweeps.compute(tiny(), scheduler=client)
    pd.testing.assert_frame_equal(on_dask, serial_table)


def test_run_stores_then_reuses_without_computing(tmp_path, client, serial_table, monkeypatch):
    first = sweeps.run(tiny(), scheduler=client, cache_dir=tmp_path)
    assert sweeps.cache_path(tiny(), tmp_path).is_file()
    pd.testing.assert_frame_equal(first, serial_table)

    def boom(*a, **k):
        raise AssertionError("computed although cached")

    monkeypatch.setattr(sweeps.runner, "compute", boom)
    again = sweeps.run(tiny(), cache_dir=tmp_path)
    pd.testing.assert_frame_equal(again, serial_table)
    with pytest.raises(AssertionError, match="computed although cached"):
        sweeps.run(tiny(seed=8), cache_dir=tmp_path)


def test_environment_variable_selects_the_scheduler(monkeypatch, serial_table):
    monkeypatch.setenv(sweeps.SCHEDULER_ENV, sweeps.SERIAL)
    pd.testing.assert_frame_equal(sweeps.compute(tiny()), serial_table)


def test_function_must_return_a_flat_mapping():
    with pytest.raises(ValueError, match="expected a mapping"):
        sweeps.runner.call(lambda **kw: [1, 2], {})


# --------------------------------------------------------------------------- sensitivity and summary


def test_prcc_ranks_a_strong_driver_first_and_ignores_noise():
    rng = np.random.default_rng(0)
    x = pd.DataFrame({"strong": rng.random(300), "weak": rng.random(300), "none": rng.random(300),
                      "fixed": np.ones(300)})
    y = pd.Series(np.exp(3 * x["strong"]) - 0.3 * x["weak"] + 0.01 * rng.random(300))
    s = sweeps.rank_sensitivity(x, y).set_index("parameter")
    assert list(s.index[:3]) == ["strong", "weak", "none"]
    assert s.loc["strong", "prcc"] > 0.95 and s.loc["weak", "prcc"] < -0.5 and abs(s.loc["none", "prcc"]) < 0.2
    assert np.isnan(s.loc["fixed", "prcc"])


def _synthetic(n=400):
    """A table shaped like the sweep's, where fp8 kept layers and few active parameters lower the ratio."""
    s = sweeps.load_spec("gpu-ratio-10t").with_samples(n)
    t = sweeps.draw(s)
    ratio = (0.30 * (t["active_params"] / 5e11) ** 0.3 * np.where(t["kept_precision"] == "fp8", 0.85, 1.0)
             * t["model_error"])
    return s, t.assign(ratio_model=ratio / t["model_error"], ratio=ratio)


def test_summary_uses_the_claim_rule_and_finds_the_drivers():
    s, t = _synthetic()
    u = gpu_ratio.summarise(t, s, 0.25, 0.10)
    assert u.bar == pytest.approx(0.275) and u.p5 < u.p50 < u.p95
    assert u.share_meeting == pytest.approx(np.mean([meets_claim(v, 0.25, 0.10, "at_most") for v in t["ratio"]]))
    assert set(u.top(3)) == {"model error (validated)", "precision of the kept layers", "active parameters"}
    kept = u.region[(u.region["parameter"] == "kept_precision") & (u.region["value"] == "fp8")].iloc[0]
    assert kept["share"] > kept["share_all"]
    assert "fp8" in gpu_ratio.condition(u)
    assert set(u.by_regime) == set(tr.REGIMES)


def test_summary_of_a_sweep_where_nothing_is_feasible_is_an_error():
    s, t = _synthetic(20)
    with pytest.raises(ValueError, match="no sample has a ratio"):
        gpu_ratio.summarise(t.assign(ratio=np.nan), s, 0.25, 0.1)


# --------------------------------------------------------------------------- derived and data


def test_cross_generation_error_comes_from_the_validation_table():
    pairs = derived.cross_generation_pairs().set_index(["old", "new"])
    r = pairs.loc[("mbridge-gb200-llama3-70b-nvfp4-64", "mbridge-gb300-llama3-70b-nvfp4-64")]
    runs = {c["id"]: c["measured"] for c in derived.validation.runs()}
    assert r["measured_ratio"] == pytest.approx(runs["mbridge-gb300-llama3-70b-nvfp4-64"]
                                                / runs["mbridge-gb200-llama3-70b-nvfp4-64"])
    assert r["error_factor"] == pytest.approx(r["predicted_ratio"] / r["measured_ratio"])
    sigma = derived.cross_generation_sigma(pairs.reset_index())
    assert sigma == pytest.approx(np.sqrt(np.mean(np.log(pairs["error_factor"]) ** 2)))
    assert len(pairs) >= 4 and 0 < sigma < 1


def test_training_assumptions_agree_with_the_model_constants():
    recs = assumption_files.assumptions("training.csv")
    for name, code in (("moe_load_factor", tr.MOE_LOAD_FACTOR), ("fp4_kept_layer_fraction", tr.FP4_KEPT_LAYER_FRACTION),
                       ("global_batch_tokens", tr.GLOBAL_BATCH_TOKENS), ("host_op_s", tr.HOST_OP_S),
                       ("stated_memory_tolerance", STATED_MEMORY_TOLERANCE)):
        a = recs[name]
        assert (a.low, a.central, a.high) == pytest.approx((code["low"], code["central"], code["high"])), name


def test_ledger_override_changes_the_spec_only_when_it_differs():
    base = gpu_ratio.spec()
    same = gpu_ratio.spec(active_params=assumption_files.assumptions("workloads.csv")["moe_10t_active_params"],
                          precision="fp4")
    assert sweeps.cache_key(same) == sweeps.cache_key(base)
    fixed = assumption_files.Assumption("moe_10t_active_params", "parameters", 3e11, 3e11, 3e11,
                                        assumption_files.io.Provenance("x", "2026-12-01", "assumption"))
    changed = gpu_ratio.spec(active_params=fixed, precision="fp8")
    assert changed.fixed["precision"] == "fp8" and changed.parameters["active_params"].high == 3e11
    assert (sweeps.draw(changed)["active_params"] == 3e11).all()


def test_a_second_process_waits_for_the_first_instead_of_computing(tmp_path, serial_table, monkeypatch):
    import threading

    monkeypatch.setattr(sweeps.cache, "LOCK_POLL_S", 0.05)
    s = tiny()
    lock = sweeps.cache_path(s, tmp_path).with_suffix(".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(str(__import__("os").getpid()))          # held by a live process
    monkeypatch.setattr(sweeps.runner, "compute", lambda *a, **k: pytest.fail("computed twice"))
    threading.Timer(0.3, lambda: sweeps.store(s, serial_table, tmp_path)).start()
    pd.testing.assert_frame_equal(sweeps.run(s, cache_dir=tmp_path), serial_table)


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path, serial_table, monkeypatch):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    s = tiny()
    lock = sweeps.cache_path(s, tmp_path).with_suffix(".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(dead.stdout.strip())
    monkeypatch.setattr(sweeps.runner, "compute", lambda *a, **k: serial_table)
    pd.testing.assert_frame_equal(sweeps.run(s, cache_dir=tmp_path), serial_table)
    assert not lock.exists() and sweeps.cache_path(s, tmp_path).is_file()


def test_global_batch_is_a_whole_multiple_of_the_quantum():
    for tokens in (6.7e7, 1.48e8, 2.28e8, 1.0):
        b = gpu_ratio.batch_quantum_tokens(8192, tokens)
        assert b % (gpu_ratio.BATCH_QUANTUM_SEQS * 8192) == 0 and b >= gpu_ratio.BATCH_QUANTUM_SEQS * 8192
    for name in ("low", "central", "high"):
        assert gpu_ratio.batch_quantum_tokens(8192, tr.GLOBAL_BATCH_TOKENS[name]) == tr.GLOBAL_BATCH_TOKENS[name]


def test_cli_runs_a_spec_and_refuses_a_bad_one(tmp_path, monkeypatch, capsys):
    import yaml

    from intelligence_per_dollar.app import cli

    monkeypatch.setenv("IPD_SWEEP_CACHE", str(tmp_path / "cache"))
    spec_file = tmp_path / "tiny.yml"
    spec_file.write_text(yaml.safe_dump(TINY))
    out = tmp_path / "t.parquet"
    assert cli.main(["sweep", str(spec_file), "--scheduler", "serial", "--samples", "2", "--quiet",
                     "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "tiny-ratio: 2 samples, computed" in text and "ratio_model" in text
    assert len(pd.read_parquet(out)) == 2
    assert cli.main(["sweep", str(spec_file), "--scheduler", "serial", "--samples", "2", "--quiet"]) == 0
    assert "from the cache" in capsys.readouterr().out
    bad = tmp_path / "bad.yml"
    bad.write_text(yaml.safe_dump({**TINY, "method": "sobol"}))
    assert cli.main(["sweep", str(bad), "--quiet"]) == 2
    assert "method='sobol' is not allowed" in capsys.readouterr().err
