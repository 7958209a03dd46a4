"""All file reading for the book: validated, typed reads of the sourced files in ``data/``.

Model modules never open files. They receive frozen records built here (or by small loader
functions that call these helpers), so the one-way flow is
``data/`` -> ``io`` (validated) -> typed records -> pure model functions.

Every problem with a data file raises :class:`DataError`, whose message names the file, the
row (1-based, counting the header as row 1, as a spreadsheet shows it) and the column.
"""

from __future__ import annotations

import csv
import hashlib
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

#: Allowed values of the ``kind`` column: how a number came to be.
KINDS = ("vendor-claimed", "measured", "derived", "estimate", "assumption")


class DataError(ValueError):
    """A data file is malformed. The message names the file, row and column."""


def repo_root() -> Path:
    """The repository root: ``IPD_ROOT`` if set, else two levels above this package's ``lib``."""
    env = os.environ.get("IPD_ROOT")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3]


def data_dir() -> Path:
    """The ``data/`` folder (``IPD_DATA`` overrides it, e.g. for a user's own catalogue)."""
    env = os.environ.get("IPD_DATA")
    return Path(env) if env else repo_root() / "data"


def code_fingerprint() -> str:
    """Hash of the library's source and the data folder (scenario files excluded): what a cached
    result (an executed chapter, a sweep) depends on besides its own inputs."""
    h = hashlib.sha256()
    lib = Path(__file__).resolve().parents[1]
    for base, pattern in ((lib, "**/*.py"), (data_dir(), "**/*")):
        for f in sorted(base.glob(pattern)):
            if f.is_file() and "scenarios" not in f.relative_to(base).parts:
                h.update(str(f.relative_to(base)).encode())
                h.update(f.read_bytes())
    return h.hexdigest()


def data_path(*parts: str) -> Path:
    """Path of a file under ``data/``; raises :class:`DataError` when it does not exist."""
    p = data_dir().joinpath(*parts)
    if not p.exists():
        raise DataError(f"{p}: data file not found")
    return p


@dataclass(frozen=True)
class Provenance:
    """Where one number comes from."""

    source_url: str
    date_read: str
    kind: str
    note: str = ""


def _loc(path: Path, row: int, column: str | None = None) -> str:
    where = f"{path}, row {row}"
    return f"{where}, column '{column}'" if column else where


def parse_float(path: Path, row: int, column: str, text: str, *, positive: bool = False,
                allow_zero: bool = True) -> float:
    """Parse a finite float, naming file/row/column on failure."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise DataError(f"{_loc(path, row, column)}: '{text}' is not a number") from None
    if not math.isfinite(value):
        raise DataError(f"{_loc(path, row, column)}: '{text}' is not a finite number")
    if positive and (value < 0 or (value == 0 and not allow_zero)):
        allowed = "a positive number" if not allow_zero else "a number >= 0"
        raise DataError(f"{_loc(path, row, column)}: {value!r} is not allowed; expected {allowed}")
    return value


def parse_bool(path: Path, row: int, column: str, text: str) -> bool:
    t = (text or "").strip().lower()
    if t in ("true", "1", "yes"):
        return True
    if t in ("false", "0", "no"):
        return False
    raise DataError(f"{_loc(path, row, column)}: '{text}' is not a boolean (true/false)")


def check_date(path: Path, row: int, column: str, text: str) -> str:
    import datetime as _dt

    try:
        _dt.date.fromisoformat(text.strip())
    except ValueError:
        raise DataError(f"{_loc(path, row, column)}: '{text}' is not a date (YYYY-MM-DD)") from None
    return text.strip()


def check_provenance(path: Path, row: int, rec: Mapping[str, str]) -> Provenance:
    """Validate the provenance columns of one row and return them typed."""
    url = (rec.get("source_url") or "").strip()
    if not (url.startswith("https://") or url.startswith("http://") or url.startswith("file:")
            or url.startswith("data/") or url.startswith("shared/")):
        raise DataError(f"{_loc(path, row, 'source_url')}: '{url}' is not a URL or a repository path")
    date = check_date(path, row, "date_read", rec.get("date_read") or "")
    kind = (rec.get("kind") or "").strip()
    if kind not in KINDS:
        raise DataError(f"{_loc(path, row, 'kind')}: '{kind}' is not one of {', '.join(KINDS)}")
    return Provenance(url, date, kind, (rec.get("note") or "").strip())


def read_rows(path: Path, required: Iterable[str],
              optional: Iterable[str] | None = None) -> list[tuple[int, dict[str, str]]]:
    """Read a CSV (comment lines starting with '#' allowed before the header).

    Returns ``(row_number, record)`` pairs; the header's row number is 1 (plus comment lines).
    Raises :class:`DataError` if a required column is missing or a row has the wrong width, and,
    when ``optional`` is given (the file's complete column set is then ``required`` plus
    ``optional``), if the header has a column outside that set: a misspelled optional column
    would otherwise be dropped without a word.
    """
    path = Path(path)
    required = tuple(required)
    with path.open(newline="", encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    offset = 0
    while offset < len(lines) and (lines[offset].startswith("#") or not lines[offset].strip()):
        offset += 1
    if offset >= len(lines):
        raise DataError(f"{path}: file has no header row")
    reader = csv.reader(lines[offset:])
    header = [h.strip() for h in next(reader)]
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise DataError(f"{path}, row {offset + 1}: column(s) {', '.join(repeated)} appear more than once in the header")
    missing = [c for c in required if c not in header]
    if missing:
        raise DataError(f"{path}, row {offset + 1}: missing column(s) {', '.join(missing)}; "
                        f"header is {', '.join(header)}")
    if optional is not None:
        allowed = (*required, *optional)
        unknown = [c for c in header if c not in allowed]
        if unknown:
            raise DataError(f"{path}, row {offset + 1}: unknown column(s) {', '.join(unknown)}; "
                            f"allowed: {', '.join(allowed)}")
    out = []
    for i, cells in enumerate(reader, start=offset + 2):
        if not cells or all(not c.strip() for c in cells):
            continue
        if cells[0].startswith("#"):
            continue
        if len(cells) != len(header):
            raise DataError(f"{path}, row {i}: has {len(cells)} cells, header has {len(header)}")
        out.append((i, {h: c.strip() for h, c in zip(header, cells)}))
    return out


@dataclass(frozen=True)
class SourcedValue:
    """One value of a long-format catalogue file, with its provenance."""

    value: float | str
    provenance: Provenance
    used: bool
    row: int


def read_long_catalogue(
    path: Path,
    id_column: str,
    numeric_fields: Mapping[str, Callable[[float], bool] | None],
    text_fields: Iterable[str],
    known_ids: Iterable[str] | None = None,
) -> dict[str, dict[str, list[SourcedValue]]]:
    """Read a long-format catalogue: ``id, field, value, source_url, date_read, kind, used, note``.

    ``numeric_fields`` maps each numeric field to an optional range check (a predicate). Each
    (id, field) must have exactly one ``used=true`` row; other rows are kept as alternatives
    (sources that disagree). Returns ``{id: {field: [SourcedValue, ...]}}`` with the used value
    first.
    """
    path = Path(path)
    text_fields = set(text_fields)
    rows = read_rows(path, [id_column, "field", "value", "source_url", "date_read", "kind", "used", "note"])
    out: dict[str, dict[str, list[SourcedValue]]] = {}
    for row, rec in rows:
        ident = rec[id_column]
        if not ident:
            raise DataError(f"{_loc(path, row, id_column)}: empty id")
        if known_ids is not None and ident not in known_ids:
            raise DataError(f"{_loc(path, row, id_column)}: unknown id '{ident}'")
        field = rec["field"]
        if field in numeric_fields:
            value: float | str = parse_float(path, row, "value", rec["value"])
            check = numeric_fields[field]
            if check is not None and not check(value):
                raise DataError(f"{_loc(path, row, 'value')}: {value!r} is out of range for field '{field}'")
        elif field in text_fields:
            value = rec["value"]
            if not value:
                raise DataError(f"{_loc(path, row, 'value')}: empty text for field '{field}'")
        else:
            allowed = sorted(set(numeric_fields) | text_fields)
            raise DataError(f"{_loc(path, row, 'field')}: unknown field '{field}'; allowed: {', '.join(allowed)}")
        prov = check_provenance(path, row, rec)
        used = parse_bool(path, row, "used", rec["used"])
        out.setdefault(ident, {}).setdefault(field, []).append(SourcedValue(value, prov, used, row))
    for ident, fields in out.items():
        for field, values in fields.items():
            n_used = sum(v.used for v in values)
            if n_used != 1:
                rows_txt = ", ".join(str(v.row) for v in values)
                raise DataError(f"{path}, rows {rows_txt}, column 'used': {ident}.{field} has {n_used} "
                                f"rows marked used=true; exactly one is required")
            values.sort(key=lambda v: not v.used)
    return out
