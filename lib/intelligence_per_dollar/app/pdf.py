"""The whole book as one PDF, printed by the same Chromium the browser tests use.

:func:`print_book` joins the built pages' articles (landing page, chapters, appendix) into one
print page next to the chapters (so their relative links to ``_static`` hold), opens it in
headless Chromium through Playwright, waits until every Vega chart has drawn and MathJax has
typeset, and prints it to PDF (A4). Code stays folded, as on the web page. A chart that Vega cannot draw is named in
the error, not waited for.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Sequence

#: Debian's chromium (the browser tests use the same binary).
CHROMIUM = "/usr/bin/chromium"
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
          "--disable-component-update", "--disable-sync"]
#: Width of the page the charts are drawn at (CSS px): an A4 page less its margins.
PRINT_WIDTH_PX = 720
_ARTICLE = re.compile(r'<article class="bd-article">(.*?)</article>', re.S)
#: Every chart has drawn its SVG, or failed: the embedding script writes "chart error: ..." into a chart whose
#: Vega-Lite spec Vega rejects (a 1,384-case scatter once overflowed Vega's expression parser, session 54).
_CHARTS_SETTLED = ("() => [...document.querySelectorAll('.ipd-chart')]"
                   ".every(d => d.querySelector('svg') || d.textContent.startsWith('chart error'))")
_CHARTS_FAILED = ("() => [...document.querySelectorAll('.ipd-chart')].filter(d => !d.querySelector('svg'))"
                  ".map(d => d.id + ': ' + d.textContent.slice(0, 200))")
_MATH_DONE = ("() => !window.MathJax || !MathJax.Hub || (MathJax.isReady && MathJax.Hub.queue.pending === 0"
              " && !MathJax.Hub.queue.running)")


class PdfFailed(RuntimeError):
    """Chromium could not print the book."""


def available() -> str | None:
    """Why the PDF cannot be printed here (no Chromium, no Playwright), or None when it can."""
    if not os.path.exists(CHROMIUM):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -e '.[test]')"
    return None


def _rebase(article: str, page: str) -> str:
    """Make the relative links of ``page``'s article work from ``nbs/`` (where the print page is)."""
    if "/" in page:
        return article
    return re.sub(r'(href|src)="(?!https?:|#|/|\.\./|data:|mailto:)([^"]+)"',
                  lambda m: f'{m.group(1)}="../{m.group(2)}"', article)


def print_page(html_dir: Path, pages: Sequence[str], template: str) -> Path:
    """Write ``nbs/_print.html``: ``template``'s head (styles, scripts) and ``pages``' articles, in order."""
    html_dir = Path(html_dir)
    tpl = (html_dir / template).read_text(encoding="utf-8")
    parts = []
    for page in pages:
        m = _ARTICLE.search((html_dir / page).read_text(encoding="utf-8"))
        if m is None:
            raise PdfFailed(f"page {page} has no <article class=\"bd-article\">")
        parts.append(f"<section class='ipd-print-page'>{_rebase(m.group(1), page)}</section>")
    head = tpl.split("</head>", 1)[0]
    if head == tpl:
        raise PdfFailed(f"template {template} has no </head>")
    out = html_dir / "nbs" / "_print.html"
    out.write_text(head + '</head>\n<body class="ipd-print"><main class="bd-main"><article class="bd-article">'
                   + "\n".join(parts) + "</article></main></body></html>\n", encoding="utf-8")
    return out


def print_book(html_dir: Path, pages: Sequence[str], out: Path, *, template: str | None = None,
               timeout_s: float = 60.0) -> Path:
    """Print ``pages`` (paths relative to ``html_dir``) to the PDF ``out`` with Chromium."""
    from playwright.sync_api import sync_playwright

    why = available()
    if why:
        raise PdfFailed(f"cannot print the book: {why}")
    html_dir = Path(html_dir)
    page_file = print_page(html_dir, pages, template or next(p for p in pages if p.startswith("nbs/")))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=_FLAGS, headless=True)
            try:
                page = browser.new_page(viewport={"width": PRINT_WIDTH_PX, "height": 1000})
                page.goto(page_file.resolve().as_uri(), wait_until="load")
                page.wait_for_function(_CHARTS_SETTLED, timeout=timeout_s * 1000)
                failed = page.evaluate(_CHARTS_FAILED)
                if failed:
                    raise PdfFailed(f"{len(failed)} chart(s) did not draw: " + "; ".join(failed))
                page.wait_for_function(_MATH_DONE, timeout=timeout_s * 1000)
                page.pdf(path=str(out), format="A4", print_background=True,
                         margin={"top": "14mm", "bottom": "14mm", "left": "12mm", "right": "12mm"})
            finally:
                browser.close()
    finally:
        page_file.unlink(missing_ok=True)
    return Path(out)
