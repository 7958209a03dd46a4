"""The report build: atomic replacement, failing chapters named, progress lines."""

import shutil

import nbformat
import pytest

from conftest import ROOT
from intelligence_per_dollar.app import build


def _fake_root(tmp_path, cells):
    root = tmp_path / "root"
    (root / "nbs").mkdir(parents=True)
    shutil.copytree(ROOT / "book", root / "book", ignore=shutil.ignore_patterns("_build"))
    (root / "book" / "_toc.yml").write_text("format: jb-book\nroot: index\nchapters:\n  - file: nbs/99_fake\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]})] + [
        nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "nbs" / "99_fake.ipynb")
    return root


@pytest.mark.slow
def test_failing_chapter_names_cell_and_keeps_previous_report(tmp_path, monkeypatch):
    root = _fake_root(tmp_path, ["y = x + 1", "raise RuntimeError('boom in the model')"])
    monkeypatch.setenv("IPD_ROOT", str(root))
    out = tmp_path / "html"
    out.mkdir()
    (out / "index.html").write_text("previous good report")
    with pytest.raises(build.ChapterFailed) as ex:
        build.build_report(out, chapters=("99_fake",), executed_out=None, log=lambda s: None)
    assert ex.value.chapter == "99_fake"
    assert ex.value.cell == 2
    assert "boom in the model" in str(ex.value)
    assert (out / "index.html").read_text() == "previous good report"
    assert not list(tmp_path.glob(".staging-*")), "staging folder left behind"


@pytest.mark.slow
def test_successful_build_replaces_previous_report_and_logs_progress(tmp_path, monkeypatch):
    root = _fake_root(tmp_path, ["print(x * 2)"])
    (root / "book" / "index.md").write_text("# Fake\n")
    monkeypatch.setenv("IPD_ROOT", str(root))
    out = tmp_path / "html"
    out.mkdir()
    (out / "stale.txt").write_text("old")
    lines = []
    timings = build.build_report(out, chapters=("99_fake",), executed_out=None, log=lines.append)
    assert (out / "index.html").exists() and (out / "nbs" / "99_fake.html").exists()
    assert not (out / "stale.txt").exists()
    assert (out / "_static" / "mathjax" / "MathJax.js").exists()
    assert any("99_fake done in" in line for line in lines)
    assert [t.chapter for t in timings] == ["99_fake", "(book)"]


def test_unknown_chapter_lists_known(tmp_path):
    with pytest.raises(ValueError, match="01_hardware"):
        build.execute_chapter("07_nope", tmp_path)
