"""Build the report: execute every chapter with papermill, then build the HTML book (Jupyter
Book 1.x stack via sphinx-build, configured in ``book/conf.py``).

The build is atomic: everything happens in a fresh staging folder next to the output, and the
previous report is replaced only when every chapter ran and the book built. A failing chapter
raises :class:`ChapterFailed`, naming the chapter and the cell, and leaves the old report as it
was.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Mapping

from intelligence_per_dollar.app import datacheck, outputs
from intelligence_per_dollar.sources import io

#: Chapters in reading order: notebook stem under nbs/.
CHAPTERS = ("00_claims", "01_hardware", "02_training", "03_post_training", "04_intelligence_per_dollar")


#: A cell that runs longer than this fails the chapter (a hung kernel must fail the build, not stall it). Most
#: cells take seconds; the longest is chapter 3's serving validation table, which predicts every measured run of
#: data/runs/inference_runs.csv (615 after held-out set 27, about 10 minutes on one core of the 2-core CI machine,
#: where 600 s no longer sufficed), so the limit leaves it room to grow.
CELL_TIMEOUT_S = 1800

#: Command-line options for the chapter kernels. ipykernel logs to the terminal it inherits: a
#: warning that it talks to papermill over local TCP unencrypted, and "KeyboardInterrupt caught in
#: kernel" when papermill interrupts it to shut it down. Neither is about the chapter; a failing
#: cell still comes back as an error output and is raised as :class:`ChapterFailed`.
KERNEL_ARGUMENTS = ("--IPKernelApp.log_level=CRITICAL",)


class ChapterFailed(RuntimeError):
    """A chapter notebook raised while papermill executed it."""

    def __init__(self, chapter: str, cell: int | None, message: str):
        self.chapter, self.cell, self.message = chapter, cell, message
        where = f"cell {cell}" if cell is not None else "an unknown cell"
        super().__init__(f"chapter {chapter} failed at {where}: {message}")


class BookFailed(RuntimeError):
    """Jupyter Book (Sphinx) could not build the HTML."""


@dataclasses.dataclass(frozen=True)
class ChapterTiming:
    chapter: str
    seconds: float


def _failed_cell(nb_path: Path) -> int | None:
    """Index (0-based, counting every cell of the source notebook) of the cell that failed.

    Papermill inserts cells into the executed copy (an error banner, an anchor before the failing
    cell, injected parameters); they are not counted, so the index matches the chapter's source.
    """
    import nbformat

    try:
        nb = nbformat.read(nb_path, as_version=4)
    except Exception:  # noqa: BLE001 - the notebook may be half-written
        return None
    inserted = {"papermill-error-cell-tag", "injected-parameters"}
    source_cells = [c for c in nb.cells if not inserted & set(c.get("metadata", {}).get("tags", []))]
    for i, cell in enumerate(source_cells):
        status = cell.get("metadata", {}).get("papermill", {}).get("status")
        if status == "failed":
            return i
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return i
    return None


def execute_chapter(chapter: str, out_dir: Path, parameters: Mapping[str, object] | None = None,
                    *, root: Path | None = None) -> Path:
    """Execute ``nbs/<chapter>.ipynb`` with ``parameters`` into ``out_dir``; return its path."""
    import nbclient.exceptions
    import papermill as pm

    root = root or io.repo_root()
    src = root / "nbs" / f"{chapter}.ipynb"
    if not src.exists():
        known = sorted(p.stem for p in (root / "nbs").glob("*.ipynb"))
        raise ValueError(f"chapter={chapter!r} has no notebook {src}; known: {', '.join(known)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    dst = out_dir / f"{chapter}.ipynb"
    try:
        pm.execute_notebook(str(src), str(dst), parameters=dict(parameters or {}), kernel_name="python3",
                            cwd=str(root), progress_bar=False, log_output=False,
                            request_save_on_cell_execute=False, execution_timeout=CELL_TIMEOUT_S,
                            start_timeout=120, extra_arguments=list(KERNEL_ARGUMENTS))
    except pm.PapermillExecutionError as ex:
        raise ChapterFailed(chapter, _failed_cell(dst), f"{ex.ename}: {ex.evalue}") from None
    except (nbclient.exceptions.CellTimeoutError, nbclient.exceptions.DeadKernelError, TimeoutError) as ex:
        raise ChapterFailed(chapter, _failed_cell(dst), f"{type(ex).__name__}: {ex}") from None
    return dst


def _copy_mathjax(static_dir: Path) -> None:
    import jupyter_server_mathjax

    src = Path(jupyter_server_mathjax.__file__).parent / "static"
    shutil.copytree(src, static_dir / "mathjax", ignore=shutil.ignore_patterns("*.md", "unpacked"))


def build_book(source_dir: Path) -> Path:
    """Build the HTML book from ``source_dir`` (``conf.py``, ``_toc.yml``, executed notebooks).

    Runs ``sphinx-build`` with the Jupyter Book 1.x stack configured in ``book/conf.py``;
    warnings are collected and a failed build raises :class:`BookFailed` with its output.
    """
    html = source_dir / "_build" / "html"
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-j", "1", str(source_dir), str(html)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not (html / "index.html").exists():
        tail = (proc.stdout + proc.stderr)[-4000:]
        raise BookFailed(f"sphinx-build failed (exit {proc.returncode}):\n{tail}")
    return html


#: File name of the whole book as one PDF, next to index.html.
PDF_NAME = "intelligence-per-dollar.pdf"


def prepare_book(src: Path, notebooks: list[Path], *, log: Callable[[str], None] = print) -> str | None:
    """Ready the staged book ``src`` for Sphinx: fold code and number captions in the executed
    ``notebooks`` (:mod:`.bookprep`), write the appendix page of long tables and the landing
    page's findings (:mod:`.landing`). Returns the PDF's file name, or None where Chromium cannot
    print it (the landing page then does not link it)."""
    from intelligence_per_dollar.app import bookprep, landing, pdf

    tables = [t for nb in notebooks for t in bookprep.prepare_notebook(nb)]
    if tables:
        (src / "appendix.md").write_text(bookprep.appendix_markdown(tables), encoding="utf-8")
    why = pdf.available()
    if why:
        log(f"no PDF: {why}")
    landing.write_index(src / "index.md", notebooks[0].parent if notebooks else src, pdf=None if why else PDF_NAME)
    return None if why else PDF_NAME


def print_pdf(html: Path, chapters: tuple[str, ...], out: Path, *, log: Callable[[str], None] = print) -> Path:
    """Print the built book (landing page, ``chapters``, appendix) to the PDF ``out`` with Chromium."""
    from intelligence_per_dollar.app import pdf

    pages = ["index.html"] + [f"nbs/{ch}.html" for ch in chapters] + \
        (["appendix.html"] if (html / "appendix.html").exists() else [])
    t0 = time.perf_counter()
    try:
        pdf.print_book(html, pages, out)
    except Exception as ex:  # noqa: BLE001 - Playwright's errors have no common base worth naming
        raise BookFailed(f"printing the PDF failed: {type(ex).__name__}: {ex}") from ex
    log(f"PDF printed in {time.perf_counter() - t0:.1f} s: {out.name} ({out.stat().st_size / 1e6:.1f} MB)")
    return out


def _swap_in(new: Path, out: Path) -> None:
    """Replace ``out`` with ``new``; the old folder survives until the new one is in place (as
    ``<out>.old-<pid>``, which :func:`outputs.sweep` removes if the process is killed there). A
    file at ``out`` is refused, never moved aside."""
    if out.exists() and not out.is_dir():
        raise outputs.OutputError("out", out, "an existing file is there (it is not replaced)")
    out.parent.mkdir(parents=True, exist_ok=True)
    old = None
    if out.exists():
        old = out.with_name(out.name + f".old-{os.getpid()}")
        os.replace(out, old)
    try:
        os.replace(new, out)
    except OSError:
        if old is not None:
            os.replace(old, out)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build_report(out: Path | str = "build/html", *, chapters: tuple[str, ...] = CHAPTERS,
                 parameters: Mapping[str, Mapping[str, object]] | None = None,
                 executed_out: Path | str | None = "build/executed",
                 log: Callable[[str], None] = print,
                 on_step: Callable[[str, str], None] | None = None) -> list[ChapterTiming]:
    """Execute ``chapters`` and build the book into ``out`` atomically.

    ``parameters`` maps chapter -> papermill parameters. Prints one line per chapter with its
    time. On any failure the previous ``out`` is left untouched and the staging folder removed.
    ``on_step(name, "start" | "done")`` is called around each chapter and the book step
    (``name == "(book)"``), e.g. to drive a progress bar. Before any chapter runs, the leftovers
    of killed builds next to ``out`` and ``executed_out`` are swept, every file under ``data/`` is
    read through its loader (:func:`.datacheck.check`: :class:`~.datacheck.DataCheckFailed` lists
    each that fails) and both paths are checked (:mod:`.outputs`: :class:`~.outputs.OutputError`
    for a file there or a parent that cannot be written).
    """
    step = on_step or (lambda name, state: None)
    root = io.repo_root()
    out = Path(out) if Path(out).is_absolute() else root / out
    ex = None if executed_out is None else Path(executed_out) if Path(executed_out).is_absolute() \
        else root / executed_out
    for target in (out, ex):
        if target is not None:
            outputs.sweep(target.parent, old_of=target.name)
    datacheck.check()    # every file under data/, in seconds, before a chapter spends minutes on it
    staging = outputs.prepare("out", out)
    ex_staging = None
    timings: list[ChapterTiming] = []
    try:
        ex_staging = outputs.prepare("executed_out", ex) if ex is not None else None
        src = staging / "book"
        shutil.copytree(root / "book", src, ignore=shutil.ignore_patterns("_build"))
        nb_dir = src / "nbs"
        t_all = time.perf_counter()
        for i, ch in enumerate(chapters, start=1):
            t0 = time.perf_counter()
            log(f"[{i}/{len(chapters)}] {ch} ...")
            step(ch, "start")
            execute_chapter(ch, nb_dir, (parameters or {}).get(ch), root=root)
            dt = time.perf_counter() - t0
            timings.append(ChapterTiming(ch, dt))
            step(ch, "done")
            log(f"[{i}/{len(chapters)}] {ch} done in {dt:.1f} s")
        t0 = time.perf_counter()
        log("building HTML with Jupyter Book ...")
        step("(book)", "start")
        pdf_name = prepare_book(src, [nb_dir / f"{ch}.ipynb" for ch in chapters], log=log)
        html = build_book(src)
        # after the build: Jupyter Book adds every .js under the source's _static to each page
        _copy_mathjax(html / "_static")
        if pdf_name:
            print_pdf(html, chapters, html / pdf_name, log=log)
        timings.append(ChapterTiming("(book)", time.perf_counter() - t0))
        step("(book)", "done")
        log(f"book built in {timings[-1].seconds:.1f} s; total {time.perf_counter() - t_all:.1f} s")
        if ex is not None:
            tmp_ex = ex_staging / "executed"
            shutil.copytree(nb_dir, tmp_ex)
            _swap_in(tmp_ex, ex)
        _swap_in(html, out)
    finally:
        for folder in (staging, ex_staging):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
    return timings


def main(argv: list[str] | None = None) -> int:
    """``python -m intelligence_per_dollar.app.build [OUT]``: build the report with default parameters."""
    argv = sys.argv[1:] if argv is None else argv
    out = argv[0] if argv else "build/html"
    try:
        build_report(out)
    except ChapterFailed as ex:
        print(f"error: {ex}", file=sys.stderr)
        return 1
    except BookFailed as ex:
        print(f"error: {ex}", file=sys.stderr)
        return 1
    except outputs.OutputError as ex:
        print(f"error: {ex}", file=sys.stderr)
        return 2
    print(f"report: {Path(out) / 'index.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
