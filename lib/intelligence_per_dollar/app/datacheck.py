"""Check every sourced file under ``data/`` before a report runs a chapter.

Each loader validates its file when it is first read (:class:`~intelligence_per_dollar.sources.io.DataError`
names the file, row and column), but a chapter reads a file only when it reaches the cell that needs it.
A typo in a file that chapter 1 reads would surface only after chapter 0 has run, and chapter 0 runs
chapter 2's joint sweep, which is cold after any change to ``data/`` (the sweep cache is keyed on the data:
:mod:`intelligence_per_dollar.analysis.sweeps.cache`), so minutes. :func:`check` reads every file through
its own loader first, in seconds, and reports every file that fails, not only the first.

The loaders are those the chapters use, so a file that passes here is read the same way there; files in
``data/measurements/`` with no loader in the library (timings kept as validation evidence) are checked to
exist where ``index.csv`` lists them; the scripts and environment records next to them are not data.
Scenario files are checked by ``ipd validate`` / ``ipd report`` themselves
(:mod:`intelligence_per_dollar.app.scenario`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from intelligence_per_dollar.sources import io

__all__ = ["Problem", "DataCheckFailed", "checks", "problems", "check"]


@dataclass(frozen=True)
class Problem:
    """One check that failed: what was read (``what``) and the loader's message."""

    what: str
    message: str


class DataCheckFailed(io.DataError):
    """One or more files under ``data/`` do not load; ``problems`` lists each."""

    def __init__(self, found: list[Problem]):
        self.problems = tuple(found)
        lines = [f"  {p.what}: {p.message}" for p in found]
        super().__init__(f"{len(found)} data check(s) failed under {io.data_dir()}:\n" + "\n".join(lines))


def _measurement_checks() -> list[tuple[str, Callable[[], object]]]:
    from intelligence_per_dollar.sources import measurements

    readers = {"gemm.csv": measurements.gemm, "membw.csv": measurements.hbm, "attention.csv": measurements.attention,
               "power.csv": measurements.power, "power_summary.json": measurements.power_summary}
    out: list[tuple[str, Callable[[], object]]] = []
    try:
        files = measurements.index()
    except ValueError:
        return out        # the index itself is one of the checks (see checks()); its error is reported there

    def exists(run: str, name: str) -> None:
        path = io.data_path("measurements", run, name)       # DataError if it is missing
        if not path.is_file():
            raise io.DataError(f"{path}: listed in data/measurements/index.csv but not a file")

    for m in files:
        reader = readers.get(m.file)
        what = f"measurements/{m.run}/{m.file}"
        out.append((what, (lambda r=reader, run=m.run: r(run)) if reader else
                    (lambda run=m.run, name=m.file: exists(run, name))))
    return out


def _training_memory_check() -> tuple[dict, ...]:
    """``runs/training_memory.csv`` read and typed, and every ``run_id`` a run of ``runs/training_runs.csv``."""
    from intelligence_per_dollar.analysis import validation
    from intelligence_per_dollar.sources import runs

    mem = runs.training_memory()
    known = {c["id"] for c in runs.training_runs(tuple(validation.STACKS))}
    unknown = sorted({m["run_id"] for m in mem} - known)
    if unknown:
        raise ValueError(f"runs/training_memory.csv: run_id {', '.join(unknown)} names no run of "
                         "runs/training_runs.csv")
    return mem


def checks() -> list[tuple[str, Callable[[], object]]]:
    """``(what, read)`` for every file the book reads: ``read()`` loads it through its own loader and raises
    ``ValueError`` (usually :class:`~intelligence_per_dollar.sources.io.DataError`) if it is malformed."""
    from intelligence_per_dollar.analysis import validation
    from intelligence_per_dollar.analysis.claims import definitions
    from intelligence_per_dollar.analysis.sweeps import spec
    from intelligence_per_dollar.model import efficiency, post_training
    from intelligence_per_dollar.sources import assumptions, ceilings, hardware, measurements, models, runs, workloads

    out: list[tuple[str, Callable[[], object]]] = [
        ("hardware/accelerators.csv, hardware/systems.csv", hardware.catalogue),
        ("models/models.csv", lambda: [models.get(n) for n in models.names()]),
        ("workloads/workloads.csv", lambda: [workloads.provenance(n) for n in workloads.names()]),
        ("prices/prices.csv", assumptions.prices),
        ("claims/claims.csv", definitions.claims),
        ("efficiency/grouped_gemm_h800.csv", ceilings.grouped_gemm_h800),
        ("efficiency/dense_fp4_gemm_b200.csv", ceilings.dense_fp4_gemm_b200),
        ("efficiency/cross_entropy_h100nvl.csv", ceilings.cross_entropy_h100nvl),
        ("measurements/index.csv", measurements.index),
        ("runs/inference_runs.csv", runs.inference_runs),
        ("runs/training_runs.csv", lambda: runs.training_runs(tuple(validation.STACKS))),
        ("runs/training_memory.csv", _training_memory_check),
        ("runs/weight_sync_runs.csv", lambda: runs.weight_sync_runs(post_training.SCHEDULES)),
        ("runs/held_out_sets.csv", runs.held_out_sets),
        ("runs/mlperf_operating_points.csv", runs.operating_points),
    ]
    for f in sorted(io.data_path("assumptions").glob("*.csv")):
        out.append((f"assumptions/{f.name}", lambda name=f.name: assumptions.assumptions(name)))
    for name in workloads.length_sample_names():
        out.append((f"workloads/lengths/{name}.csv", lambda n=name: workloads.length_sample(n)))
    out.extend(_measurement_checks())
    # last: the ceilings of the H200 family are fitted to a measured run, whose own check comes first
    out.append(("efficiency/ceilings.csv", lambda: [efficiency.ceilings(a) for a in hardware.accelerators()]))
    # a sweep spec reads the assumptions and ceilings it samples: after their own checks
    for f in sorted(io.data_path("sweeps").glob("*.yml")):
        out.append((f"sweeps/{f.name}", lambda path=f: spec.load_spec(path)))
    return out


def problems(listed: list[tuple[str, Callable[[], object]]] | None = None) -> list[Problem]:
    """Every check of ``listed`` (default :func:`checks`) that fails, in order (empty when ``data/`` is sound).
    A message already reported (a file read by two loaders) is reported once, under the first."""
    found: list[Problem] = []
    for what, read in checks() if listed is None else listed:
        try:
            read()
        except (ValueError, OSError, KeyError) as exc:   # a loader's DataError, a missing file, a missing key
            message = f"{type(exc).__name__}: {exc}"
            if all(p.message != message for p in found):
                found.append(Problem(what, message))
    return found


def check() -> int:
    """Raise :class:`DataCheckFailed` listing every file under ``data/`` that does not load; else return how
    many checks passed."""
    listed = checks()
    found = problems(listed)
    if found:
        raise DataCheckFailed(found)
    return len(listed)
