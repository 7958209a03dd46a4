"""Chapters: committed without outputs and parameterized. Each chapter is executed once per test
session with its default parameters (the ``built_report`` fixture); the tests here read what it
recorded. Chapter 1 is also run once with other parameters, and with bad ones (which stop in its
parameter-check cell, so they are cheap): that tests the chapter's own parameter handling."""

import nbformat
import pytest

from conftest import ROOT
from intelligence_per_dollar.app import build
from intelligence_per_dollar.views.notebook import read_records

NOTEBOOKS = sorted((ROOT / "nbs").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    code = {i: cell for i, cell in enumerate(nb.cells) if cell.cell_type == "code"}
    assert code, f"{path.name} has no code cell"
    assert [i for i, c in code.items() if c.outputs] == [], f"{path.name}: cells with outputs"
    assert [i for i, c in code.items() if c.execution_count is not None] == [], \
        f"{path.name}: cells with an execution count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_first_code_cell_is_parameters(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", []), path.name
    src = "\n".join(c.source for c in code)
    assert "import *" not in src and "autoreload" not in src


def test_every_chapter_is_in_the_book_and_the_build():
    toc = (ROOT / "book" / "_toc.yml").read_text()
    for ch in build.CHAPTERS:
        assert f"nbs/{ch}" in toc
        assert (ROOT / "nbs" / f"{ch}.ipynb").exists()


def _run(tmp_path, chapter, **params):
    return build.execute_chapter(chapter, tmp_path, params)


@pytest.mark.slow
def test_the_session_report_executed_every_chapter_once(built_report, report_records):
    _, executed, timings = built_report
    assert [t.chapter for t in timings] == list(build.CHAPTERS) + ["(book)"]
    assert sorted(p.stem for p in executed.glob("*.ipynb")) == sorted(build.CHAPTERS)
    assert all(report_records[ch] for ch in build.CHAPTERS), "a chapter recorded nothing"


@pytest.mark.slow
def test_hardware_chapter_default(report_records):
    rec = report_records["01_hardware"]["hardware"]
    # The seed compares headline with headline (50 vs 20 PF); like for like it is 35 vs 10.
    assert rec["rubin_vs_blackwell_headline_ratio"] == pytest.approx(2.5, rel=0.02)
    assert rec["rubin_vs_blackwell_dense_ratio"] == pytest.approx(3.5, rel=0.02)
    assert 1.5 < rec["rubin_ultra_vs_rubin_headline_ratio"] < 2.5
    assert 0.6 < rec["h200_sustained_bf16_fraction"] < rec["h200_best_bf16_gemm_fraction"] < 0.9
    assert 0.8 < rec["h200_hbm_fraction"] < 0.95
    assert rec["dense_x_baseline"]["GB200"] == pytest.approx(1.0)
    # analysts' prices: ~$7.8M vs ~$3.75M per rack for 3.5x the dense FP4 -> ~1.7x per dollar
    assert 1.2 < rec["vr_vs_gb200_flop_per_usd_ratio"] < rec["vr_vs_gb200_rack_dense_ratio"]


@pytest.mark.slow
def test_hardware_chapter_alternative_parameters(tmp_path):
    """The one extra execution of a real chapter: its own handling of every parameter."""
    out = _run(tmp_path, "01_hardware", precision="bf16", baseline="H100-SXM",
               accelerators=["H100-SXM", "B200", "VR200"], systems=["HGX-H100", "Vera-Rubin-NVL72"])
    rec = read_records(out)["hardware"]
    assert rec["precision"] == "bf16" and rec["baseline"] == "H100-SXM"
    assert set(rec["dense_x_baseline"]) == {"H100-SXM", "B200", "VR200"}
    # VR200 bf16 dense 4 PF vs H100 0.99 PF
    assert 3.5 < rec["dense_x_baseline"]["VR200"] < 4.5
    assert rec["vr_vs_gb200_rack_dense_ratio"] is None  # GB200 rack not in this comparison


@pytest.mark.slow
@pytest.mark.parametrize("params,needle", [
    ({"precision": "fp2"}, "precision='fp2' is not allowed"),
    ({"accelerators": ["H100-SXM", "H300"]}, "unknown name(s) ['H300']"),
    ({"baseline": 7}, "baseline=7 is not allowed"),
])
def test_bad_parameter_stops_with_one_clear_error(tmp_path, params, needle):
    with pytest.raises(build.ChapterFailed) as ex:
        _run(tmp_path, "01_hardware", **params)
    assert ex.value.chapter == "01_hardware"
    assert ex.value.cell is not None
    assert "ValueError" in ex.value.message and needle in ex.value.message
