"""The data check a report runs before any chapter (app/datacheck.py): it reads every file under data/
through its own loader and lists every file that fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from intelligence_per_dollar.app import build, datacheck

#: Files under data/ that are not read as data: the measurement scripts and the environment they ran in
#: (provenance of the measured files), the sweep specs' and folders' documentation, and scenario files
#: (checked by the scenario loader).
NOT_DATA_SUFFIXES = (".py", ".txt", ".md")


def _covered() -> set[str]:
    names: set[str] = set()
    for what, _ in datacheck.checks():
        names |= set(what.split(", "))
    return names


def test_every_data_file_has_a_check_and_the_shipped_data_passes():
    files = {p.relative_to(ROOT / "data").as_posix() for p in (ROOT / "data").rglob("*") if p.is_file()}
    data_files = {f for f in files if not f.startswith("scenarios/") and not f.endswith(NOT_DATA_SUFFIXES)}
    assert data_files - _covered() == set(), "files under data/ that the data check does not read"
    assert _covered() - data_files == set(), "checks of files that do not exist"
    assert datacheck.problems() == []


def _break_last_row(path: Path) -> None:
    lines = path.read_text().splitlines()
    lines[-1] = ",".join(["oops"] * len(lines[-1].split(",")))
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("rel", ["hardware/accelerators.csv", "models/models.csv", "assumptions/economics.csv",
                                 "runs/training_runs.csv", "runs/inference_runs.csv", "claims/claims.csv",
                                 "efficiency/ceilings.csv", "measurements/h200-2026-11-29/membw.csv"])
def test_a_broken_row_is_reported_under_its_file(data_copy, rel):
    _break_last_row(data_copy / rel)
    found = datacheck.problems()
    assert found, f"{rel} broken but the check passed"
    assert rel in found[0].what and str(data_copy / rel) in found[0].message


def test_every_failing_file_is_listed_once(data_copy):
    _break_last_row(data_copy / "measurements" / "h200-2026-11-29" / "gemm.csv")   # read by the ceilings fit too
    (data_copy / "workloads" / "lengths" / "mlperf-deepseek-r1.csv").write_text("input_length,output_length\n")
    with pytest.raises(datacheck.DataCheckFailed) as ex:
        datacheck.check()
    whats = [p.what for p in ex.value.problems]
    assert whats == ["workloads/lengths/mlperf-deepseek-r1.csv", "measurements/h200-2026-11-29/gemm.csv"]
    assert "2 data check(s) failed" in str(ex.value) and "no samples" in str(ex.value)


def test_build_report_refuses_broken_data_before_any_chapter(data_copy, tmp_path, monkeypatch):
    _break_last_row(data_copy / "prices" / "prices.csv")
    monkeypatch.setattr(build, "execute_chapter", lambda *a, **k: pytest.fail("a chapter ran"))
    out = tmp_path / "html"
    out.mkdir()
    (out / "index.html").write_text("previous good report")
    with pytest.raises(datacheck.DataCheckFailed, match="prices/prices.csv"):
        build.build_report(out, executed_out=None, log=lambda s: None)
    assert (out / "index.html").read_text() == "previous good report"
    assert not list(tmp_path.glob(".staging-*"))
