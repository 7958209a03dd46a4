"""The sourced data files themselves: every row has provenance (a URL or repository path, an ISO date,
a known kind), every range is ordered, the catalogue has the ids and datasheet values the book
relies on, and the validation cases and ceilings cover what the model needs.

(The named-models and workloads catalogues are checked in test_catalogue.py.)"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from intelligence_per_dollar.model import economics, efficiency
from intelligence_per_dollar.sources import assumptions, hardware, io, measurements, runs

DATA = io.data_dir()
CSVS = sorted(DATA.rglob("*.csv"))
PROVENANCE = ("source_url", "date_read", "kind")
RANGE = ("low", "central", "high")


def _header(path: Path) -> list[str]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            return [h.strip() for h in line.split(",")]
    return []


SOURCED = [p for p in CSVS if set(PROVENANCE) <= set(_header(p))]
RANGED = [p for p in CSVS if set(RANGE) <= set(_header(p))]


def _rel(p: Path) -> str:
    return p.relative_to(DATA).as_posix()


def test_the_sourced_and_ranged_files_are_found():
    names = {_rel(p) for p in SOURCED}
    assert {"hardware/accelerators.csv", "hardware/systems.csv", "prices/prices.csv", "efficiency/ceilings.csv",
            "runs/inference_runs.csv", "measurements/index.csv"} <= names
    assert {"assumptions/economics.csv", "assumptions/tasks.csv", "prices/prices.csv"} <= {_rel(p) for p in RANGED}


@pytest.mark.parametrize("path", SOURCED, ids=_rel)
def test_every_row_has_provenance(path):
    """A source (URL or repository path), the date it was read (YYYY-MM-DD) and one of io.KINDS."""
    rows = io.read_rows(path, PROVENANCE)
    assert rows, f"{path} has no data rows"
    for row, rec in rows:
        prov = io.check_provenance(path, row, rec)
        assert prov.kind in io.KINDS


@pytest.mark.parametrize("path", RANGED, ids=_rel)
def test_every_range_is_ordered(path):
    """low <= central <= high on every row, including the sources a file keeps but does not use."""
    for row, rec in io.read_rows(path, RANGE):
        lo, c, hi = (io.parse_float(path, row, k, rec[k]) for k in RANGE)
        assert lo <= c <= hi, f"{path}, row {row}: {lo} <= {c} <= {hi} is violated"


def test_catalogue_has_every_required_id():
    accs, syss = hardware.catalogue()
    assert set(hardware.ACCELERATOR_IDS) <= set(accs)
    assert set(hardware.SYSTEM_IDS) <= set(syss)


def test_every_used_catalogue_value_cites_a_web_source():
    for acc in hardware.accelerators().values():
        for fld, prov in acc.provenance.items():
            assert prov.source_url.startswith("http"), (acc.id, fld)


@pytest.mark.parametrize("name,bf16,hbm_bw", [
    ("H100-SXM", 989e12, 3.35e12), ("H200", 989e12, 4.8e12), ("A100-80GB", 312e12, 2.0e12),
])
def test_hopper_ampere_datasheet_values(name, bf16, hbm_bw):
    a = hardware.get(name)
    assert a.bf16_dense_flop_per_s == pytest.approx(bf16, rel=0.01)
    assert a.hbm_bytes_per_s == pytest.approx(hbm_bw, rel=0.03)


def test_assumption_files_hold_what_the_model_reads():
    econ, tasks = assumptions.assumptions(), assumptions.task_assumptions()
    assert set(economics.COST_ASSUMPTIONS) <= set(econ)
    for system in hardware.SYSTEM_IDS[:5]:
        accelerator, _ = economics.accelerator_and_gpus(system)
        assert f"all_in_power_w_per_gpu_{accelerator}" in econ, system
    assert tasks["swe_bench_verified_resolve_rate"].central == pytest.approx(0.717)


def test_prices_file_one_used_row_per_key():
    recs = assumptions.prices()
    for key in ("Vera-Rubin-NVL72.system_price_usd", "GB200-NVL72.system_price_usd",
                "H100-SXM.rental_usd_per_gpu_hour", "GB200.rental_usd_per_gpu_hour"):
        assert key in recs, key
    # the analysts' rack estimates the issue names: VR NVL72 ~ $7.8M, GB200 NVL72 ~ $3.5-4M
    assert recs["Vera-Rubin-NVL72.system_price_usd"].central == pytest.approx(7.8e6, rel=0.01)
    assert 3.0e6 <= recs["GB200-NVL72.system_price_usd"].central <= 4.0e6
    assert all(k.count(".") == 1 for k in recs)


def test_every_inference_case_is_measured_and_cited():
    cases = runs.inference_runs()
    assert len(cases) >= 60
    for case in cases:
        assert case["provenance"].kind == "measured"
        assert case["provenance"].source_url.startswith(("https://", "data/")) and case["citation"], case["id"]
        hardware.get(case["accelerator"])                    # a catalogue id


def test_every_catalogue_accelerator_has_ceilings():
    for acc in hardware.accelerators():
        c = efficiency.ceilings(acc)
        assert 0 < c.gemm_fraction("bf16") <= 1, acc
        assert 0 < c.hbm_fraction <= 1 and 0 < c.memory_usable_fraction <= 1, acc


@pytest.mark.parametrize("m", measurements.index(), ids=lambda m: f"{m.run}/{m.file}")
def test_every_measured_file_exists_and_names_a_catalogue_accelerator(m):
    assert hardware.get(m.accelerator).id == m.accelerator
    assert (DATA / "measurements" / m.run / m.file).exists(), (m.run, m.file)


def test_a_runs_file_elsewhere_loads_with_the_same_checks(tmp_path):
    """Held-out runs kept outside data/runs load through the same validated loader, and a bad row
    in them is reported against that file (its path, row and column)."""
    src = io.data_path("runs", "inference_runs.csv").read_text().splitlines()
    header = next(i for i, line in enumerate(src) if line.startswith("id,"))
    good = tmp_path / "held_out.csv"
    good.write_text("\n".join(src[:header + 2]) + "\n")
    cases = runs.inference_runs(good)
    assert len(cases) == 1 and cases[0]["id"] == runs.inference_runs()[0]["id"]
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(src[:header + 1] + [src[header + 1].replace(",measured,", ",estimate,", 1)]) + "\n")
    with pytest.raises(io.DataError, match=r"bad\.csv.*kind"):
        runs.inference_runs(bad)


def _training_loader(path):
    from intelligence_per_dollar.analysis import validation
    return runs.training_runs(tuple(validation.STACKS), path)


def _header_and_text(table):
    text = io.data_path("runs", table).read_text()
    return next(line for line in text.splitlines() if line.startswith("id,")), text


@pytest.mark.parametrize("table, column, load", [("training_runs.csv", "scaleout_bytes_per_s", _training_loader),
                                                 ("inference_runs.csv", "output_dataset", runs.inference_runs)])
def test_a_misspelt_run_column_is_refused(tmp_path, table, column, load):
    """A run file's header may hold only the known columns: a misspelt optional column (which the loader
    would otherwise skip, so its values silently went unused) is refused with the file, row and name."""
    header, text = _header_and_text(table)
    assert column in header.split(",")
    bad = tmp_path / table
    bad.write_text(text.replace(header, header.replace(column, column + "x"), 1))
    with pytest.raises(io.DataError, match=rf"row \d+: unknown column\(s\) {column}x; allowed: id, "):
        load(bad)


def test_a_run_file_without_its_optional_columns_loads(tmp_path):
    """The optional training columns (a part variant, the cluster) may be left out of the header altogether: the
    rows load, with the catalogue's values."""
    header, text = _header_and_text("training_runs.csv")
    cols = header.split(",")
    keep = [i for i, c in enumerate(cols) if c not in runs._TR_OPTIONAL]
    assert len(keep) == len(cols) - len(runs._TR_OPTIONAL)
    body = [line for line in text.splitlines() if line and not line.startswith("#")]
    rows = list(csv.reader(body))
    lean = tmp_path / "lean.csv"
    with lean.open("w", newline="") as fh:
        csv.writer(fh).writerows([[r[i] for i in keep] for r in rows[:3]])
    cases = _training_loader(lean)
    assert [c["id"] for c in cases] == [r[0] for r in rows[1:3]]
    assert not any(k in c for c in cases for k in runs._TR_OPTIONAL)


def test_a_repeated_header_column_is_refused(tmp_path):
    """Two columns of the same name (the later would silently win) are refused, naming the column; a loader that
    states no optional set (io.read_rows without ``optional``) still reads extra columns."""
    header, text = _header_and_text("inference_runs.csv")
    twice = tmp_path / "twice.csv"
    twice.write_text(text.replace(header, header.replace(",note,", ",unit,", 1), 1))
    with pytest.raises(io.DataError, match=r"column\(s\) unit appear more than once"):
        runs.inference_runs(twice)
    extra = tmp_path / "extra.csv"
    extra.write_text("a,b,c\n1,2,3\n")
    assert io.read_rows(extra, ("a", "b")) == [(2, {"a": "1", "b": "2", "c": "3"})]
    with pytest.raises(io.DataError, match=r"unknown column\(s\) c; allowed: a, b"):
        io.read_rows(extra, ("a", "b"), ())

