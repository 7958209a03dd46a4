"""The ``ipd`` command: help everywhere, exit codes (0 ok, 2 invalid scenario, 1 chapter failed),
every problem listed before any notebook runs, atomic report through the CLI, compare and claims."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from conftest import ROOT
from intelligence_per_dollar.app import build, cli
from intelligence_per_dollar.app import scenario as sc
from intelligence_per_dollar.app.scenario import cache as sc_cache
from test_scenario import fake_root, write  # noqa: F401 - fixture

IPD = Path(sys.executable).parent / "ipd"
COMMANDS = ("report", "compare", "claims", "validate", "params")


@pytest.fixture
def no_execution(monkeypatch):
    """Fail the test if any chapter is executed."""
    def boom(*a, **k):
        raise AssertionError("a chapter was executed")
    monkeypatch.setattr(build, "execute_chapter", boom)


def run_main(argv, capsys):
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


# --------------------------------------------------------------------------- help and arguments


def test_console_script_is_installed_and_helps():
    assert IPD.exists(), "pip install -e . should install the ipd console script"
    proc = subprocess.run([str(IPD), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    for c in COMMANDS:
        assert c in proc.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as ex:
        cli.main([command, "--help"])
    assert ex.value.code == 0
    assert f"usage: ipd {command}" in capsys.readouterr().out


def test_bad_arguments_exit_2(capsys):
    with pytest.raises(SystemExit) as ex:
        cli.main(["report", "--frobnicate"])
    assert ex.value.code == 2
    with pytest.raises(SystemExit) as ex:
        cli.main([])
    assert ex.value.code == 2


def test_unknown_chapter_argument_exits_2(capsys, no_execution):
    rc, _, err = run_main(["params", "07_nope"], capsys)
    assert rc == 2 and "unknown chapter(s) 07_nope" in err


# --------------------------------------------------------------------------- invalid scenarios: exit 2, nothing runs


BAD = """\
01_hardware:
  precision: fp2
  accelerators: H100-SXM
  colour: blue
02_not_a_chapter: {}
"""


@pytest.mark.parametrize("command,n_files", [("report", 1), ("claims", 1), ("compare", 2), ("validate", 2)])
def test_invalid_scenario_lists_every_problem_and_runs_nothing(command, n_files, tmp_path, capsys, no_execution):
    bad = write(tmp_path, BAD, "bad.yml")
    other = write(tmp_path, "01_hardware:\n  baseline: 5\n", "other.yml")
    argv = {"report": ["report", "--scenario", str(bad), "--out", str(tmp_path / "html"), "--no-progress"],
            "claims": ["claims", "--scenario", str(bad)],
            "compare": ["compare", str(bad), str(other), "--no-progress"],
            "validate": ["validate", str(bad), str(other)]}[command]
    rc, out, err = run_main(argv, capsys)
    assert rc == 2
    assert f"{bad}:2: 01_hardware.precision: parameter precision='fp2' is not allowed" in err
    assert f"{bad}:3: 01_hardware.accelerators: Input should be a valid list (got 'H100-SXM')" in err
    assert f"{bad}:4: 01_hardware.colour: unknown parameter 'colour'" in err
    assert f"{bad}:5: 02_not_a_chapter: unknown chapter" in err
    # with two files, both are checked before anything runs
    other_problem = f"{other}:2: 01_hardware.baseline: Input should be a valid string (got 5)"
    assert (other_problem in err) == (n_files == 2)
    assert f"invalid scenario: {4 + (n_files == 2)} problems" in err
    assert not (tmp_path / "html").exists()


def test_missing_scenario_file_exits_2(tmp_path, capsys, no_execution):
    rc, _, err = run_main(["report", "--scenario", str(tmp_path / "nope.yml"), "--no-progress"], capsys)
    assert rc == 2 and "cannot read the file" in err


@pytest.mark.parametrize("flag,where,reason", [
    ("--out", "afile", "an existing file is there (it is not replaced)"),
    ("--out", "afile/html", "afile is a file, not a folder"),
    ("--executed", "afile/executed", "afile is a file, not a folder"),
    ("--out", "/proc/ipd-no-such/html", "cannot write in /proc/ipd-no-such"),
])
def test_bad_out_exits_2_with_one_line_before_any_chapter(tmp_path, capsys, no_execution, flag, where, reason):
    (tmp_path / "afile").write_text("keep me")
    path = where if where.startswith("/") else str(tmp_path / where)
    argv = ["report", "--no-progress", "--out", str(tmp_path / "html")] if flag == "--executed" else ["report",
                                                                                                   "--no-progress"]
    rc, _, err = run_main(argv + [flag, path], capsys)
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith(f"error: {flag} {path}: ") and reason in err
    assert (tmp_path / "afile").read_text() == "keep me" and not list(tmp_path.glob("afile.old-*"))


def test_validate_refuses_an_alias_bomb_in_one_short_line(tmp_path, capsys, no_execution):
    from test_scenario import BILLION_LAUGHS

    rc, _, err = run_main(["validate", str(write(tmp_path, BILLION_LAUGHS))], capsys)
    assert rc == 2 and "YAML alias *a is not allowed" in err and len(err) < 400


def test_hostile_yaml_exits_2_and_nothing_happens(tmp_path, capsys, no_execution):
    marker = tmp_path / "pwned"
    f = write(tmp_path, f"01_hardware:\n  precision: !!python/object/apply:os.system ['touch {marker}']\n"
                        f"  baseline: \"$(touch {marker})\"\n")
    rc, _, err = run_main(["validate", str(f)], capsys)
    assert rc == 2 and "safe loader refuses" in err
    assert not marker.exists()


def test_valid_scenarios_validate(capsys):
    rc, out, _ = run_main(["validate"] + [str(p) for p in sorted((ROOT / "data/scenarios").glob("*.yml"))], capsys)
    assert rc == 0 and out.count(": valid") == 3
    assert re.search(r"data: every file loads \(\d+ checks\)", out), out


def test_validate_lists_every_data_file_that_does_not_load(data_copy, capsys):
    (data_copy / "prices" / "prices.csv").write_text("item,field\nx,y\n")
    (data_copy / "measurements" / "h200-2026-11-30" / "prefill.csv").unlink()
    rc, out, err = run_main(["validate", str(ROOT / "data/scenarios/central.yml")], capsys)
    assert rc == 2
    assert ": valid" in out and "every file loads" not in out
    assert "error: 2 data check(s) failed" in err
    assert "prices/prices.csv" in err and re.search(r"h200-2026-11-30/prefill\.csv: .*prefill\.csv: data file not found", err)
    assert "no chapter was run" not in err   # said by report only


def test_validate_without_files_checks_the_data_only(capsys):
    rc, out, _ = run_main(["validate"], capsys)
    assert rc == 0 and ": valid" not in out
    assert re.search(r"data: every file loads \(\d+ checks\)", out), out


def test_params_lists_every_chapter_parameter(capsys):
    rc, out, _ = run_main(["params", "--format", "csv"], capsys)
    assert rc == 0
    for ch in build.CHAPTERS:
        for name in sc.chapter_parameters(ch):
            assert f"{ch},{name}," in out


# --------------------------------------------------------------------------- tables


def test_compare_table_marks_what_moves():
    a = {"01": {"r": {"x": 1.0, "v": "holds", "d": {"k": 2}}}}
    b = {"01": {"r": {"x": 2.0, "v": "fails", "d": {"k": 2}, "new": None}}}
    rows = {r["headline"]: r for r in cli.compare_table(a, b)}
    assert rows["r.x"]["ratio"] == 2.0 and rows["r.x"]["changed"]
    assert rows["r.v"]["changed"] and rows["r.v"]["ratio"] is None
    assert not rows["r.d.k"]["changed"]
    assert rows["r.new"]["a"] is None
    text = cli._render([{"h": "r.x", "a": 1.0, "b": 2.0}], ["h", "a", "b"], "markdown", right=("a", "b"))
    assert text.splitlines()[1] == "|---|---:|---:|"


@pytest.fixture
def fake_ledger(monkeypatch):
    """``cli.claims`` replaced by a stand-in whose ledger records the arguments it gets."""
    import pandas as pd

    seen = {}

    def ledger(assumption_overrides=None, *, n=20_000, seed=2026, training_precision="fp4", training_range=True,
               only=None):
        seen.update(assumption_overrides=assumption_overrides, n=n, seed=seed, training_precision=training_precision)
        return pd.DataFrame([{"id": "train_quarter_gpus", "claim": "a quarter of the GPUs", "verdict": "supported only if",
                              "detail": "x" * 200}])

    def overrides(racks=None, **named):
        return {**named, **{f"{k}.system_price_usd": v for k, v in (racks or {}).items()}}

    fake = types.SimpleNamespace(ledger=ledger, overrides=overrides,
                                 all_assumptions=lambda: {"pue": None, "wacc": None, "utilisation": None})
    monkeypatch.setattr(cli, "claims", fake)
    return seen


def test_claims_passes_what_the_scenario_sets_to_the_ledger(fake_ledger):
    scn = sc.Scenario("s.yml", None, {
        "04_intelligence_per_dollar": {"pue": 1.54, "wacc": None, "task_steps": 50, "seed": 7, "mc_samples": 500,
                                       "rack_prices_usd": {"Vera-Rubin-NVL72": 9.1e6}},
        "02_training": {"precision": "fp8"}}, {})
    df, note = cli._ledger(scn)
    assert fake_ledger == {"assumption_overrides": {"pue": 1.54, "Vera-Rubin-NVL72.system_price_usd": 9.1e6},
                           "n": 500, "seed": 7, "training_precision": "fp8"}
    assert list(df.columns) == ["id", "claim", "verdict", "detail"]
    assert "04_intelligence_per_dollar.pue=1.54" in note
    # nothing set: the ledger's own defaults
    fake_ledger.clear()
    df, note = cli._ledger(sc.defaults())
    assert fake_ledger["assumption_overrides"] is None and fake_ledger["n"] == 20_000
    assert note.endswith("the ledger's own assumptions")


def test_the_ledger_chapter_wins_when_several_chapters_set_a_value(fake_ledger):
    scn = sc.Scenario("s.yml", None, {"00_claims": {"utilisation": 0.6, "mc_samples": 100},
                                      "04_intelligence_per_dollar": {"utilisation": 0.9, "mc_samples": 500}}, {})
    kwargs, applied = cli.ledger_arguments(scn)
    assert kwargs == {"assumption_overrides": {"utilisation": 0.6}, "n": 100}
    assert applied == ["00_claims.utilisation=0.6", "00_claims.mc_samples=100"]


def test_claims_columns(fake_ledger, capsys, no_execution):
    rc, out, _ = run_main(["claims", "--columns", "id,verdict"], capsys)
    assert rc == 0 and out.splitlines()[0].split() == ["id", "verdict"]
    rc, out, _ = run_main(["claims"], capsys)
    assert out.splitlines()[0].split() == ["id", "verdict"]  # the default columns this ledger has
    rc, _, err = run_main(["claims", "--columns", "id,colour"], capsys)
    assert rc == 2 and "unknown column(s) colour" in err
    rc, out, _ = run_main(["claims", "--format", "csv"], capsys)
    assert out.splitlines()[0] == "id,claim,verdict,detail" and "x" * 200 in out


def test_claims_prints_the_real_ledger(capsys, no_execution, monkeypatch):
    from intelligence_per_dollar.analysis import sweeps
    from intelligence_per_dollar.analysis.sweeps import gpu_ratio

    # the joint sweep takes minutes cold (tests/unit/test_sweeps.py runs it small); here a drawn table stands in
    monkeypatch.setattr(gpu_ratio, "table", lambda s=None, **kw: sweeps.draw(s).assign(
        ratio_model=0.33, ratio=lambda t: 0.33 * t["model_error"]))
    rc, out, err = run_main(["claims", "--scenario", str(ROOT / "data/scenarios/skeptic.yml")], capsys)
    assert rc == 0, err
    header = out.splitlines()[0].split()
    assert header[0] == "id" and "verdict" in header
    assert "ledger under skeptic" in err


# --------------------------------------------------------------------------- running chapters (slow)


@pytest.mark.slow
def test_report_failure_names_chapter_and_cell_and_keeps_previous_report(fake_root, tmp_path, capsys):
    out = tmp_path / "html"
    out.mkdir()
    (out / "index.html").write_text("previous good report")
    f = write(tmp_path, "99_fake:\n  fail: true\n")
    rc, _, err = run_main(["report", "--scenario", str(f), "--out", str(out), "--no-progress"], capsys)
    assert rc == 1
    assert "chapter 99_fake failed at cell 3: RuntimeError: boom under this scenario" in err
    assert (out / "index.html").read_text() == "previous good report"
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]
    assert not list(tmp_path.glob(".staging-*"))


@pytest.mark.slow
def test_report_builds_under_a_scenario_then_compare_reuses_it(fake_root, tmp_path, capsys, monkeypatch):
    from intelligence_per_dollar.views.notebook import read_records

    monkeypatch.setattr(sc_cache, "_code_fingerprint", lambda: "fixed")  # others may edit lib meanwhile
    out = tmp_path / "html"
    a = write(tmp_path, "description: A\n99_fake:\n  mode: b\n  tokens: 1e14\n  label: \"$(id)\"\n", "a.yml")
    b = write(tmp_path, "99_fake:\n  mode: b\n  tokens: 2e14\n", "b.yml")
    rc, stdout, err = run_main(["report", "--scenario", str(a), "--out", str(out)], capsys)
    assert rc == 0, err
    assert (out / "index.html").exists() and (out / "nbs" / "99_fake.html").exists()
    assert "a: building the book" in err  # the progress bar
    rec = read_records(tmp_path / "html-executed" / "99_fake.ipynb")["fake"]
    assert rec == {"mode": "b", "base": "x", "items": ["x", "y"], "n": 3, "share": 0.5, "tokens": 1e14,
                   "label": "$(id)"}
    # the report's execution is cached: compare executes only b
    calls = []
    real = build.execute_chapter
    monkeypatch.setattr(build, "execute_chapter", lambda *a, **k: calls.append(a) or real(*a, **k))
    rc, stdout, err = run_main(["compare", str(a), str(b), "--no-progress"], capsys)
    assert rc == 0, err
    assert len(calls) == 1
    line = next(l for l in stdout.splitlines() if "fake.tokens" in l)
    assert line.split()[2:] == ["1e+14", "2e+14", "2", "*"]
    assert "2 of 7 headline values move between a and b" in stdout


def _subprocess_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("IPD_ROOT", "IPD_DATA", "IPD_CACHE")}
    env.update(extra)
    return env


def test_a_broken_data_file_stops_the_report_before_any_chapter(tmp_path):
    """The real command on a data copy with one measurement file broken: every chapter would run before the one
    that reads it (chapter 00 first runs chapter 2's joint sweep, cold after any change to data/); the report
    stops in seconds instead, names the file, row and column, and leaves the previous report."""
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    gemm = data / "measurements" / "h200-2026-11-29" / "gemm.csv"
    lines = gemm.read_text().splitlines()
    lines[-1] = ",".join(["oops"] * len(lines[-1].split(",")))
    gemm.write_text("\n".join(lines) + "\n")
    (data / "runs" / "held_out_sets.csv").unlink()
    out = tmp_path / "html"
    out.mkdir()
    (out / "index.html").write_text("previous good report")
    proc = subprocess.run([str(IPD), "report", "--scenario", str(ROOT / "data/scenarios/skeptic.yml"),
                           "--out", str(out), "--no-progress"], capture_output=True, text=True, timeout=300,
                          env=_subprocess_env(IPD_DATA=str(data), IPD_CACHE=str(tmp_path / "cache"),
                                              IPD_SWEEP_CACHE=str(tmp_path / "sweeps")))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "error: 2 data check(s) failed" in proc.stderr, proc.stderr[-2000:]
    assert re.search(r"gemm\.csv, row \d+, column 'm': 'oops' is not a number", proc.stderr), proc.stderr[-2000:]
    assert "held_out_sets.csv" in proc.stderr
    assert "no chapter was run; the previous report, if any, is unchanged" in proc.stderr
    assert (out / "index.html").read_text() == "previous good report"
    assert not (tmp_path / "html-executed").exists() and not list(tmp_path.glob(".staging-*"))
    assert not (tmp_path / "sweeps").exists(), "a chapter ran"


@pytest.mark.slow
def test_killed_build_leaves_previous_report_intact(tmp_path):
    out = tmp_path / "html"
    out.mkdir()
    (out / "index.html").write_text("previous good report")
    proc = subprocess.Popen([str(IPD), "report", "--scenario", str(ROOT / "data/scenarios/skeptic.yml"),
                             "--out", str(out), "--no-progress"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            env=_subprocess_env(IPD_CACHE=str(tmp_path / "cache")))
    try:
        deadline = time.time() + 120
        while not list(tmp_path.glob(".staging-*")) and time.time() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert list(tmp_path.glob(".staging-*")), "the build never started"
        time.sleep(2)  # midway through chapter 1
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the build and its kernel, started in their own session
        proc.wait(timeout=60)
    assert (out / "index.html").read_text() == "previous good report"
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]


@pytest.mark.slow
def test_compare_nvidia_claim_with_skeptic(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("IPD_CACHE", str(tmp_path / "cache"))
    rc, out, err = run_main(["compare", str(ROOT / "data/scenarios/nvidia-claim.yml"),
                             str(ROOT / "data/scenarios/skeptic.yml"), "--no-progress", "--changed",
                             "--chapter", "01_hardware"], capsys)
    assert rc == 0, err
    precision = next(l for l in out.splitlines() if "hardware.precision" in l)
    assert precision.split()[2:4] == ["fp4", "fp8"]
    rows = [l for l in out.splitlines()[2:] if l.startswith("01_")]
    assert rows and all(l.rstrip().endswith("*") for l in rows)
    assert "headline values move between nvidia-claim and skeptic" in out
