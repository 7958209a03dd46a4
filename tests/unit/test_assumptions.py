"""Ranged-assumption loading (sources.assumptions): parsing, bad files, frozen records, overrides.

What the book's own assumption files contain (ranges ordered, provenance present) is checked in
tests/data/test_data_files.py."""

from __future__ import annotations

import dataclasses

import pytest

from intelligence_per_dollar.sources import assumptions as sa
from intelligence_per_dollar.sources import io

HEADER = "name,unit,low,central,high,source_url,date_read,kind,note\n"
GOOD = "x,1,1,2,3,https://a.b,2026-11-29,estimate,\n"


def test_parse_ranges_reads_a_good_file(tmp_path):
    f = tmp_path / "good.csv"
    f.write_text(HEADER + GOOD + "y,W,4,4,4,data/x.csv,2026-11-30,assumption,a note\n")
    recs = sa.parse_ranges(f)
    assert list(recs) == ["x", "y"]
    assert (recs["x"].low, recs["x"].central, recs["x"].high, recs["x"].row) == (1.0, 2.0, 3.0, 2)
    assert recs["y"].unit == "W" and recs["y"].provenance == io.Provenance("data/x.csv", "2026-11-30", "assumption",
                                                                          "a note")


def test_used_column_keeps_only_the_used_row(tmp_path):
    f = tmp_path / "prices.csv"
    f.write_text("item,field,unit,low,central,high,source_url,date_read,kind,used,note\n"
                 "R,price,USD,1,2,3,https://a.b,2026-11-29,estimate,false,other analyst\n"
                 "R,price,USD,4,5,6,https://a.b,2026-11-29,estimate,true,\n")
    recs = sa.parse_ranges(f, ("item", "field"))
    assert list(recs) == ["R.price"] and recs["R.price"].central == 5.0


@pytest.mark.parametrize("row, where", [
    ("x,1,2,1,3,https://a.b,2026-11-29,estimate,\n", "row 2, column 'low'"),
    ("x,1,1,4,3,https://a.b,2026-11-29,estimate,\n", "row 2, column 'high'"),
    ("x,1,one,2,3,https://a.b,2026-11-29,estimate,\n", "row 2, column 'low'"),
    ("x,1,1,2,3,nowhere,2026-11-29,estimate,\n", "row 2, column 'source_url'"),
    ("x,1,1,2,3,https://a.b,2026-11-29,guess,\n", "row 2, column 'kind'"),
    (",1,1,2,3,https://a.b,2026-11-29,estimate,\n", "row 2, column 'name'"),
    (GOOD + GOOD, "row 3, column 'name'"),
])
def test_bad_assumption_file_names_file_row_column(tmp_path, row, where):
    f = tmp_path / "bad.csv"
    f.write_text(HEADER + row)
    with pytest.raises(io.DataError) as err:
        sa.parse_ranges(f)
    assert str(f) in str(err.value) and where in str(err.value)


def test_loaded_records_are_frozen():
    econ = sa.assumptions()
    a = econ["pue"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.central = 2.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        econ["pue"] = a  # type: ignore[index]


def test_book_assumptions_join_economics_tasks_and_prices():
    book = sa.book_assumptions()
    assert set(sa.assumptions()) | set(sa.task_assumptions()) | set(sa.prices()) == set(book)
    assert sa.centrals(book)["pue"] == book["pue"].central


def test_overrides_fix_or_replace_ranges():
    recs = sa.with_overrides(sa.assumptions(), {"pue": 1.4, "wacc": (0.05, 0.08, 0.12)})
    assert (recs["pue"].low, recs["pue"].central, recs["pue"].high) == (1.4, 1.4, 1.4)
    assert recs["wacc"].central == 0.08
    assert recs["pue"].provenance.note == "overridden by the caller"
    assert sa.assumptions()["pue"].central == pytest.approx(1.25)      # the cached records are untouched
    keep = sa.with_overrides(sa.assumptions(), {"pue": recs["pue"]})
    assert keep["pue"] is recs["pue"]


@pytest.mark.parametrize("overrides, match", [
    ({"nope": 1}, "unknown assumption 'nope'"),
    ({"pue": (1.5, 1.2, 1.6)}, "low <= central <= high"),
    ({"pue": (1.2, 1.3)}, r"\(low, central, high\) triple"),
    ({"pue": "fast"}, r"assumption_overrides\['pue'\]='fast' must be a number"),
    ({"pue": float("nan")}, r"assumption_overrides\['pue'\]=nan is not allowed"),
])
def test_bad_overrides_raise_value_error(overrides, match):
    with pytest.raises(ValueError, match=match):
        sa.with_overrides(sa.assumptions(), overrides)
