"""Prepare the executed chapters for the static book (run by :mod:`.build` before Sphinx).

* **Code out of the way.** Every code cell gets myst-nb's ``hide-input`` tag (its code folds
  behind a "Show code cell source" toggle); a cell whose outputs are only Markdown (the prose
  cells, ``md(f"...")``) gets ``remove-input``: the reader sees the sentence, not the code that
  wrote it.
* **Numbered figures and tables.** Captions written by :func:`views.notebook.figure` and
  :func:`views.notebook.show_table` carry an empty number slot; here they get "Figure 2.3." and
  "Table 2.1." in reading order (the chapter number is the notebook's two-digit prefix), with an
  id to link to.
* **Appendix.** Long tables shown with ``show_table(..., appendix=...)`` leave their full version
  under :data:`views.notebook.APPENDIX_MIME`; it is taken out of the chapter and
  :func:`appendix_markdown` collects them into one page.
"""

from __future__ import annotations

import re
from pathlib import Path

from intelligence_per_dollar.views import notebook

#: Tags the book build adds; a cell already carrying one keeps it.
_SHOWN_TAGS = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
_NUM = re.compile(r"<span class='ipd-num' data-kind='(Figure|Table)'></span>")


def _text(v) -> str:
    return "".join(v) if isinstance(v, list) else v


def prose_only(cell) -> bool:
    """Whether a code cell displays nothing but Markdown (so its code is not worth showing). A cell
    that imports (the chapter's set-up) keeps its code, folded."""
    outs = cell.get("outputs", [])
    src = cell.get("source", "")
    src = "".join(src) if isinstance(src, list) else src
    if not outs or re.search(r"^\s*(import|from)\s", src, re.M):
        return False
    for o in outs:
        if o.get("output_type") not in ("display_data", "execute_result"):
            return False
        kinds = set(o.get("data", {})) - {"text/plain"}
        if kinds != {"text/markdown"}:
            return False
    return True


def tag_cells(nb) -> None:
    """Add ``remove-input`` to prose-only code cells and ``hide-input`` to the other code cells."""
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        tags = list(cell.setdefault("metadata", {}).get("tags", []))
        if _SHOWN_TAGS & set(tags):
            continue
        tags.append("remove-input" if prose_only(cell) else "hide-input")
        cell["metadata"]["tags"] = tags


def chapter_number(stem: str) -> str:
    """``"02_training"`` -> ``"2"``: the number figures and tables of that chapter carry."""
    head = stem.split("_", 1)[0]
    if not head.isdigit():
        raise ValueError(f"chapter={stem!r} has no numeric prefix; expected e.g. '02_training'")
    return str(int(head))


def number_captions(nb, chapter: str) -> dict[str, int]:
    """Fill each caption's number slot in reading order; returns how many of each kind."""
    counts = {"Figure": 0, "Table": 0}

    def fill(m: re.Match) -> str:
        kind = m.group(1)
        counts[kind] += 1
        label = f"{chapter}.{counts[kind]}"
        return (f"<span class='ipd-num' data-kind='{kind}' id='{kind.lower()}-{label.replace('.', '-')}'>"
                f"{kind} {label}.</span>")

    for cell in nb.cells:
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            if "text/html" in data:
                data["text/html"] = _NUM.sub(fill, _text(data["text/html"]))
    return counts


def take_appendix_tables(nb, chapter: str) -> list[dict]:
    """Remove the full versions of long tables from ``nb`` (the chapter shows their summary) and
    return them, in reading order, for the appendix page."""
    out = []
    for cell in nb.cells:
        kept = []
        for o in cell.get("outputs", []):
            rec = o.get("data", {}).get(notebook.APPENDIX_MIME)
            if rec is None:
                kept.append(o)
            else:
                out.append({**rec, "chapter": chapter})
        if "outputs" in cell:
            cell["outputs"] = kept
    return out


def prepare_notebook(path: Path) -> list[dict]:
    """Tag cells, number captions and take out the appendix tables of one executed chapter, in
    place; returns the appendix tables."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    tag_cells(nb)
    number_captions(nb, chapter_number(path.stem))
    tables = take_appendix_tables(nb, path.stem)
    nbformat.write(nb, path)
    return tables


def appendix_markdown(tables: list[dict]) -> str:
    """The appendix page: one section per long table (raw HTML inside MyST Markdown)."""
    lines = ["# Appendix: full tables", "",
             "The long tables of the chapters, in full. Each chapter shows a summary and links here.", ""]
    for t in tables:
        lines += [f"## {t['title']}", "",
                  f"From [{t['chapter']}](nbs/{t['chapter']}.ipynb); {t['rows']:,} rows.", "",
                  "```{raw} html", f"<div class='ipd-appendix'>{t['html']}</div>", "```", ""]
    if not tables:
        lines.append("No chapter has a table long enough to need the appendix.")
    return "\n".join(lines) + "\n"
