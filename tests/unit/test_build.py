"""The report build: atomic replacement, failing chapters named, progress lines."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT
from intelligence_per_dollar.app import build, outputs, pdf


def _fake_root(tmp_path, cells):
    root = tmp_path / "root"
    (root / "nbs").mkdir(parents=True)
    (root / "data").symlink_to(ROOT / "data")   # the report checks every data file before a chapter runs
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
    # the whole book as one PDF, printed by Chromium, where Chromium is installed
    assert (out / build.PDF_NAME).exists() == (pdf.available() is None)


@pytest.mark.skipif(pdf.available() is not None, reason="needs Chromium and Playwright")
def test_a_chart_that_cannot_draw_is_named_not_waited_for(tmp_path):
    """A chart Vega rejects never gets its SVG: the print names it at once (the embedding script's "chart error")
    instead of timing out after a minute with no clue which of the book's charts it was."""
    (tmp_path / "nbs").mkdir()
    page = ('<html><head><title>t</title></head><body><article class="bd-article">'
            '<div class="ipd-chart" id="ipd-chart-1"><svg></svg></div>'
            '<div class="ipd-chart" id="ipd-chart-2">chart error: RangeError: Maximum call stack size exceeded</div>'
            '</article></body></html>')
    (tmp_path / "nbs" / "ch.html").write_text(page)
    t0 = time.perf_counter()
    with pytest.raises(pdf.PdfFailed, match="1 chart.*ipd-chart-2: chart error: RangeError"):
        pdf.print_book(tmp_path, ["nbs/ch.html"], tmp_path / "book.pdf", timeout_s=30)
    assert time.perf_counter() - t0 < 20
    assert not (tmp_path / "book.pdf").exists() and not (tmp_path / "nbs" / "_print.html").exists()


def test_unknown_chapter_lists_known(tmp_path):
    with pytest.raises(ValueError, match="01_hardware"):
        build.execute_chapter("07_nope", tmp_path)


# --- the static book: folded code, numbered captions, appendix, landing page ----------------------

def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def _md_out(text):
    return nbformat.v4.new_output("display_data", data={"text/markdown": text, "text/plain": text})


def test_code_is_folded_and_prose_cells_show_only_their_sentence():
    from intelligence_per_dollar.app import bookprep

    prose = nbformat.v4.new_code_cell("md(prose.sentence(x))", outputs=[_md_out("A sentence.")])
    setup = nbformat.v4.new_code_cell("from x import y\nmd(y.setup())", outputs=[_md_out("Set up.")])
    table = nbformat.v4.new_code_cell("show_table(df)", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/html": "<table></table>", "text/plain": "t"})])
    hidden = nbformat.v4.new_code_cell("record(...)", metadata={"tags": ["remove-cell"]})
    nb = _nb(nbformat.v4.new_markdown_cell("# Title"), prose, setup, table, hidden)
    bookprep.tag_cells(nb)
    assert [c.metadata.get("tags") for c in nb.cells[1:]] == [
        ["remove-input"], ["hide-input"], ["hide-input"], ["remove-cell"]]


def test_figures_and_tables_are_numbered_per_chapter_in_reading_order():
    from intelligence_per_dollar.app import bookprep
    from intelligence_per_dollar.views import tables

    def html_out(kind, text):
        return nbformat.v4.new_output("display_data", data={"text/html": tables.caption_html(kind, text)})

    nb = _nb(nbformat.v4.new_code_cell("", outputs=[html_out("Table", "t"), html_out("Figure", "a")]),
             nbformat.v4.new_code_cell("", outputs=[html_out("Figure", "b")]))
    assert bookprep.number_captions(nb, bookprep.chapter_number("03_post_training")) == {"Figure": 2, "Table": 1}
    texts = [o.data["text/html"] for c in nb.cells for o in c.outputs]
    assert ["Table 3.1." in texts[0], "Figure 3.1." in texts[1], "Figure 3.2." in texts[2]] == [True] * 3
    with pytest.raises(ValueError, match="numeric prefix"):
        bookprep.chapter_number("claims")


def test_long_tables_move_to_the_appendix_page():
    from intelligence_per_dollar.app import bookprep
    from intelligence_per_dollar.views import notebook

    rec = {"title": "Every case", "anchor": "every-case", "rows": 157, "html": "<table class='ipd-table'></table>"}
    cell = nbformat.v4.new_code_cell("", outputs=[
        nbformat.v4.new_output("display_data", data={"text/html": "summary"}),
        nbformat.v4.new_output("display_data", data={notebook.APPENDIX_MIME: rec, "text/plain": "x"})])
    nb = _nb(cell)
    found = bookprep.take_appendix_tables(nb, "01_hardware")
    assert [o.data for o in nb.cells[0].outputs] == [{"text/html": "summary"}]
    page = bookprep.appendix_markdown(found)
    assert "## Every case" in page and "157 rows" in page and "<table class='ipd-table'>" in page


def test_landing_page_reads_its_numbers_from_the_chapter_records(tmp_path):
    from intelligence_per_dollar.app import landing
    from intelligence_per_dollar.views import notebook

    values = {"counts": {"supported": 1, "contradicted": 1}, "mc_samples": 100, "seed": 1,
              "verdicts": {"weight_sync_2s": "supported", "train_quarter_gpus": "contradicted"},
              "deciding": {"weight_sync_2s": "weight_sync_efficiency", "train_quarter_gpus": "active params"},
              "p5": {"weight_sync_2s": 1.25, "train_quarter_gpus": 2.8},
              "p50": {"weight_sync_2s": 1.5, "train_quarter_gpus": 3.0},
              "p95": {"weight_sync_2s": 1.75, "train_quarter_gpus": 3.2}}
    nb = _nb(nbformat.v4.new_code_cell("", outputs=[nbformat.v4.new_output("display_data", data={
        notebook.RECORD_MIME: {"name": "claims", "values": values}, "text/plain": "r"})]))
    nbformat.write(nb, tmp_path / "00_claims.ipynb")
    text = landing.findings_markdown(tmp_path, pdf="book.pdf")
    assert "data-key='p50.weight_sync_2s' data-value='1.5'>1.5 (1.25 to 1.75) s</span>" in text
    assert "3 (2.8 to 3.2)x" in text and "would hold while the estimate is at least 3.64" in text
    assert "href='book.pdf'" in text
    assert landing.findings_markdown(tmp_path / "nothing") == ""


# --- output paths checked before any chapter runs; leftovers of killed builds swept ---------------

@pytest.mark.parametrize("where,reason", [
    ("afile", "an existing file is there (it is not replaced)"),
    ("afile/html", "is a file, not a folder"),
    ("/proc/ipd-no-such/html", "cannot write in /proc/ipd-no-such"),
])
def test_bad_output_paths_are_refused_before_any_chapter(tmp_path, where, reason):
    (tmp_path / "afile").write_text("keep me")
    out = tmp_path / where if not where.startswith("/") else Path(where)
    ran = []
    with pytest.raises(outputs.OutputError) as ex:
        build.build_report(out, chapters=("01_hardware",), executed_out=None, log=ran.append)
    assert reason in str(ex.value) and ex.value.param == "out" and ran == []
    assert (tmp_path / "afile").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]      # nothing moved aside, no staging


def test_sweep_removes_only_leftovers_of_dead_or_stale_builds(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    mine = os.getpid()
    for name in (f".staging-{dead.pid}-a1", f".staging-{mine}-b2", ".staging-oldformat", ".staging-young",
                 f"html.old-{dead.pid}", f"html.old-{mine}", "html", "notes.txt"):
        (tmp_path / name).mkdir()
    (tmp_path / f".store-{dead.pid}-c3").write_text("half a notebook")
    (tmp_path / f".run-{mine}-d4").write_text("a live execution")
    week_ago = time.time() - 7 * 86400
    os.utime(tmp_path / ".staging-oldformat", (week_ago, week_ago))
    gone = outputs.sweep(tmp_path, old_of="html")
    assert sorted(p.name for p in gone) == sorted([f".staging-{dead.pid}-a1", ".staging-oldformat",
                                                   f"html.old-{dead.pid}", f".store-{dead.pid}-c3"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([
        f".staging-{mine}-b2", ".staging-young", f"html.old-{mine}", "html", "notes.txt", f".run-{mine}-d4"])
