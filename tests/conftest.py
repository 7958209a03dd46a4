"""Shared fixtures: an isolated data folder, and one executed report for the slow tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A writable copy of data/ that the package reads instead (IPD_DATA); caches cleared."""
    import intelligence_per_dollar.sources.hardware as hw
    import intelligence_per_dollar.sources.measurements as ms

    dst = tmp_path / "data"
    shutil.copytree(ROOT / "data", dst)
    monkeypatch.setenv("IPD_DATA", str(dst))
    hw._catalogue.cache_clear()
    ms._index.cache_clear()
    yield dst
    hw._catalogue.cache_clear()
    ms._index.cache_clear()


@pytest.fixture(scope="session")
def built_report(tmp_path_factory):
    """Build the whole report once per test session; yields the HTML folder."""
    from intelligence_per_dollar.app import build

    out = tmp_path_factory.mktemp("report") / "html"
    executed = out.parent / "executed"
    timings = build.build_report(out, executed_out=executed, log=lambda s: None)
    return out, executed, timings


@pytest.fixture(scope="session")
def chromium_shots_dir():
    """Where browser tests leave screenshots for a person to look at (build/screenshots)."""
    d = ROOT / "build" / "screenshots"
    d.mkdir(parents=True, exist_ok=True)
    return d
