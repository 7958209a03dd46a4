"""Executing chapters under a scenario, and keeping each execution for reuse.

An execution is identified by the chapter's notebook, its resolved parameters, and a fingerprint
of the library's source and data/ (:func:`cache_key`): ``ipd compare`` and ``ipd claims`` reuse
what ``ipd report`` executed. :func:`flatten` and :func:`stable` turn recorded values into the
flat ``record.key`` mapping the comparisons and determinism checks use.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from intelligence_per_dollar.app import outputs
from intelligence_per_dollar.app.scenario.schema import chapters
from intelligence_per_dollar.app.scenario.validation import Scenario
from intelligence_per_dollar.sources import io


def cache_dir() -> Path:
    """Where executed chapters are kept for reuse (``IPD_CACHE`` overrides)."""
    env = os.environ.get("IPD_CACHE")
    return Path(env) if env else io.repo_root() / "build" / ".cache" / "chapters"


#: Hash of lib/ and data/ (:func:`io.code_fingerprint`); a name tests can replace.
_code_fingerprint = io.code_fingerprint


def cache_key(scn: Scenario, chapter: str) -> str:
    """Identifies one execution: the chapter's source, its resolved parameters, lib and data."""
    h = hashlib.sha256()
    h.update(chapter.encode())
    h.update((io.repo_root() / "nbs" / f"{chapter}.ipynb").read_bytes())
    h.update(json.dumps(scn.resolved(chapter), sort_keys=True, default=repr).encode())
    h.update(_code_fingerprint().encode())
    return h.hexdigest()[:24]


def execute(scn: Scenario, chapter: str, *, cache: Path | str | None = None, reuse: bool = True) -> Path:
    """Execute ``chapter`` under ``scn`` (or reuse an identical earlier execution); return the
    executed notebook's path in the cache. Raises :class:`~intelligence_per_dollar.app.build.ChapterFailed`."""
    from intelligence_per_dollar.app import build

    cache = Path(cache) if cache is not None else cache_dir()
    dst = cache / f"{chapter}-{cache_key(scn, chapter)}.ipynb"
    if reuse and dst.exists():
        return dst
    cache.mkdir(parents=True, exist_ok=True)
    outputs.sweep(cache)  # what killed executions left
    work = Path(tempfile.mkdtemp(prefix=outputs.work_prefix("run"), dir=cache))
    try:
        out = build.execute_chapter(chapter, work, scn.parameters(chapter))
        os.replace(out, dst)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dst


def store(scn: Scenario, chapter: str, executed: Path, *, cache: Path | str | None = None) -> Path:
    """Put a notebook executed elsewhere (e.g. by ``build_report``) into the cache."""
    cache = Path(cache) if cache is not None else cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    dst = cache / f"{chapter}-{cache_key(scn, chapter)}.ipynb"
    fd, tmp = tempfile.mkstemp(prefix=outputs.work_prefix("store"), dir=cache)
    os.close(fd)
    try:
        shutil.copyfile(executed, tmp)
        os.replace(tmp, dst)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return dst


def records(scn: Scenario, chapter_list: Sequence[str] | None = None, *, cache: Path | str | None = None,
            reuse: bool = True, progress: Callable[[str], None] | None = None) -> dict[str, dict[str, Any]]:
    """``{chapter: {record name: values}}`` for ``scn``, executing (or reusing) each chapter."""
    from intelligence_per_dollar.views.notebook import read_records

    out = {}
    for ch in chapter_list if chapter_list is not None else chapters():
        out[ch] = read_records(execute(scn, ch, cache=cache, reuse=reuse))
        if progress is not None:
            progress(ch)
    return out


#: Recorded keys that measure the machine, not the model (timings); determinism checks skip them.
VOLATILE = re.compile(r"(_ms|_wall_s|_elapsed_s|_seconds_wall)$")


def stable(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``flat`` without :data:`VOLATILE` keys."""
    return {k: v for k, v in flat.items() if not VOLATILE.search(k)}


def flatten(recs: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested records -> ``{"record.key.sub": scalar}`` (lists of scalars kept as lists)."""
    out: dict[str, Any] = {}
    for k, v in recs.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, Mapping):
            out.update(flatten(v, key))
        elif isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            for i, x in enumerate(v):
                out.update(flatten(x, f"{key}[{i}]"))
        else:
            out[key] = v
    return out
