"""Shared fixtures: an isolated data folder, and the one executed report every notebook and browser
test reads (each chapter is executed once per test session, with its default parameters)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

# CI replays the same generated cases on every run (a failure there is reproducible, never flaky);
# locally hypothesis explores new cases each run. HYPOTHESIS_PROFILE=ci selects the CI profile by hand.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A writable copy of data/ that the package reads instead (IPD_DATA); caches cleared."""
    import intelligence_per_dollar.sources.hardware as hw
    import intelligence_per_dollar.sources.measurements as ms
    import intelligence_per_dollar.sources.models as models
    import intelligence_per_dollar.sources.workloads as workloads

    dst = tmp_path / "data"
    shutil.copytree(ROOT / "data", dst)
    monkeypatch.setenv("IPD_DATA", str(dst))
    hw._catalogue.cache_clear()
    ms._index.cache_clear()
    models._catalogue.cache_clear()
    workloads._catalogue.cache_clear()
    yield dst
    hw._catalogue.cache_clear()
    ms._index.cache_clear()
    models._catalogue.cache_clear()
    workloads._catalogue.cache_clear()


@pytest.fixture(scope="session")
def built_report(tmp_path_factory):
    """The whole report, built once per test session with default parameters:
    ``(html folder, executed notebooks folder, timings)``."""
    from intelligence_per_dollar.app import build

    out = tmp_path_factory.mktemp("report") / "html"
    executed = out.parent / "executed"
    timings = build.build_report(out, executed_out=executed, log=lambda s: None)
    return out, executed, timings


@pytest.fixture(scope="session")
def report_records(built_report):
    """``{chapter: {record name: values}}`` read from the session's executed chapters."""
    from intelligence_per_dollar.app import build
    from intelligence_per_dollar.views.notebook import read_records

    _, executed, _ = built_report
    return {ch: read_records(executed / f"{ch}.ipynb") for ch in build.CHAPTERS}


@pytest.fixture(scope="session")
def chromium_shots_dir():
    """Where browser tests leave screenshots for a person to look at (build/screenshots)."""
    d = ROOT / "build" / "screenshots"
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture
def first_row_set(tmp_path, monkeypatch):
    """``set(folder, name, column, value)``: a copy of ``data/<folder>/<name>`` whose first data row has ``column``
    set to ``value``, in a data folder the package reads instead (``io.data_dir``)."""
    import csv
    import io as text_io

    from intelligence_per_dollar.sources import io

    def set_(folder: str, name: str, column: str, value: str) -> Path:
        (tmp_path / folder).mkdir(exist_ok=True)
        dst = tmp_path / folder / name
        shutil.copy(io.data_path(folder, name), dst)
        lines = dst.read_text().splitlines()
        header_i = next(i for i, line in enumerate(lines) if not line.startswith("#"))
        header = lines[header_i].split(",")
        row = next(csv.reader([lines[header_i + 1]]))
        row[header.index(column)] = value
        out = text_io.StringIO()
        csv.writer(out, lineterminator="").writerow(row)
        lines[header_i + 1] = out.getvalue()
        dst.write_text("\n".join(lines) + "\n")
        monkeypatch.setattr(io, "data_dir", lambda: tmp_path)
        return dst

    return set_
