"""Output folders of a build: checked before any chapter runs, and the leftovers of killed
builds swept.

:func:`prepare` is called once per output folder at the start of a build: an existing *file* at
the path is refused (never moved aside), the parent folders are created, and a private work
folder is made next to the output, which proves the parent is writable and keeps the final
``os.replace`` on one file system. Every problem is one :class:`OutputError`, which the CLI
prints as one line (exit 2).

Work folders and temporary files carry the id of the process that made them
(``.staging-<pid>-*``, ``.run-<pid>-*``, ``.store-<pid>-*``, ``<out>.old-<pid>``), so
:func:`sweep` can tell a killed build's leftovers (its process is gone) from a build running
right now (its process is alive: left alone). A leftover whose name carries no process id, or
whose id a new process may have reused, is swept once it is older than :data:`STALE_AFTER_S`.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from pathlib import Path

#: Age after which any leftover counts as abandoned, s: no build runs this long (a full book
#: build takes minutes; each cell is stopped after ``build.CELL_TIMEOUT_S``).
STALE_AFTER_S = 24 * 3600.0

#: Kinds of work folders and temporary files this package makes next to outputs and caches.
KINDS = ("staging", "run", "store")

_WORK = re.compile(r"^\.(?:" + "|".join(KINDS) + r")-(?:(\d+)-)?")


class OutputError(ValueError):
    """An output path cannot be used: ``param`` (e.g. ``out``), ``path``, ``reason``."""

    def __init__(self, param: str, path: Path, reason: str):
        self.param, self.path, self.reason = param, path, reason
        super().__init__(f"{param}={str(path)!r}: {reason}; allowed: a folder (new, or an existing one to replace) "
                         f"in a writable folder")


def work_prefix(kind: str) -> str:
    """Name prefix of a work folder or temporary file of ``kind`` made by this process."""
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r} is not allowed; allowed: {', '.join(KINDS)}")
    return f".{kind}-{os.getpid()}-"


def prepare(param: str, path: Path) -> Path:
    """Check the output folder ``path`` and return a new work folder next to it (the caller
    removes it). :class:`OutputError` if ``path`` is a file, its parent cannot be created, or
    nothing can be written there."""
    if path.exists() and not path.is_dir():
        raise OutputError(param, path, "an existing file is there (it is not replaced)")
    parent = path.parent
    for above in (parent, *parent.parents):
        if above.exists() and not above.is_dir():
            raise OutputError(param, path, f"{above} is a file, not a folder")
        if above.exists():
            break
    try:
        parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=work_prefix("staging"), dir=parent))
    except OSError as ex:
        raise OutputError(param, path, f"cannot write in {parent} ({ex.strerror or ex})") from None


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _stale(entry: Path, pid: int | None, now: float) -> bool:
    try:
        age = now - entry.lstat().st_mtime
    except OSError:
        return False
    return age > STALE_AFTER_S or (pid is not None and not _alive(pid))


def sweep(folder: Path, *, old_of: str | None = None) -> list[Path]:
    """Remove the leftovers of killed builds in ``folder`` and return them: work folders and
    temporary files (:data:`KINDS`) and, with ``old_of``, ``<old_of>.old-<pid>`` folders of an
    interrupted swap. Leftovers of live processes younger than :data:`STALE_AFTER_S` stay."""
    if not folder.is_dir():
        return []
    old = re.compile(rf"^{re.escape(old_of)}\.old-(\d+)$") if old_of else None
    now, gone = time.time(), []
    for entry in folder.iterdir():
        m = _WORK.match(entry.name) or (old.match(entry.name) if old else None)
        if m is None:
            continue
        pid = int(m.group(1)) if m.group(1) else None
        if not _stale(entry, pid, now):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        gone.append(entry)
    return gone
