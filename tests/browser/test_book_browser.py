"""Open every page of the built book in real Chromium and check what a reader sees: every chart
drew, every bar has width and height, no table, chart or code runs past the text column at a
desktop and a laptop width, no legend or axis label is cut short, no code shows until asked for,
the landing page's headline numbers are the chapters', and no request fails or leaves the
machine. Screenshots of every page go to build/screenshots/after/."""

import pytest

import playwright_chromium as browser
from conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.browser]

#: A desktop and a laptop window.
WIDTHS = (1300, 1024)
#: Tallest screenshot the page test records (px).
MAX_SHOT_PX = 20000


@pytest.fixture(scope="module")
def chromium():
    browser.require()
    with browser.browser() as b:
        yield b


def _pages(html):
    return sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html")
                  if not p.name.startswith(("genindex", "search", "_")) and "_static" not in p.parts)


_ALL_DRAWN = "() => [...document.querySelectorAll('.ipd-chart')].every(d => d.querySelector('svg'))"
#: Per chart: [marks drawn, marks with area, bars, bars with width AND height] (a bar on a log
#: scale drawn from 0 has zero height: it counts as a bar without area).
_MARKS = """() => [...document.querySelectorAll('.ipd-chart')].map(d => {
  const marks = [...d.querySelectorAll('g.mark-rect path, g.mark-line path, g.mark-symbol path, g.mark-rule line, g.mark-area path')];
  const area = marks.filter(p => { const b = p.getBBox(); return b.width > 0.5 || b.height > 0.5; });
  const bars = [...d.querySelectorAll('g.mark-rect path')];
  const full = bars.filter(p => { const b = p.getBBox(); return b.width > 0 && b.height > 0; });
  return [marks.length, area.length, bars.length, full.length]; })"""
#: Elements that run past the right edge of the text column (its content box), or scroll inside.
_OVERFLOW = """() => {
  const art = document.querySelector('article.bd-article');
  const cs = getComputedStyle(art);
  const right = art.getBoundingClientRect().right - parseFloat(cs.paddingRight);
  return [...art.querySelectorAll('table, pre, .ipd-chart, .ipd-chart svg, mjx-container, .MathJax_Display, img')]
    .filter(e => e.checkVisibility())
    .map(e => [e.tagName + '.' + (typeof e.className === 'string' ? e.className.split(' ')[0] : ''),
               Math.round(e.getBoundingClientRect().right - right), e.scrollWidth - e.clientWidth,
               (e.innerText || e.textContent || '').slice(0, 60)])
    .filter(x => x[1] > 1 || (x[0].startsWith('TABLE') || x[0].startsWith('PRE')) && x[2] > 1); }"""
#: Text Vega cut short with an ellipsis (legend, axis and title labels).
_CUT = ("() => [...document.querySelectorAll('.ipd-chart svg text')].map(t => t.textContent)"
        ".filter(s => s.endsWith('\u2026'))")
#: Notebook code a reader sees without asking for it.
_VISIBLE_CODE = ("() => [...document.querySelectorAll('div.cell_input')].filter(e => e.checkVisibility())"
                 ".map(e => e.innerText.slice(0, 60))")
_OPEN_ALL = "() => document.querySelectorAll('details').forEach(d => d.open = true)"


def _check_page(page, rel, w):
    page.wait_for_function(_ALL_DRAWN, timeout=30000)
    page.wait_for_timeout(300)
    n_charts = page.locator(".ipd-chart").count()
    assert n_charts >= 1 or not rel.startswith("nbs/"), f"{rel}: a chapter without charts"
    for i, (marks, area, bars, full) in enumerate(page.evaluate(_MARKS)):
        assert marks > 0 and area > 0, f"{rel}: chart {i} drew no visible marks"
        assert full == bars, f"{rel}: chart {i}: {bars - full} of {bars} bars have no width or no height"
    cut = page.evaluate(_CUT)
    assert cut == [], f"{rel}: labels cut short in charts: {cut}"
    code = page.evaluate(_VISIBLE_CODE)
    assert code == [], f"{rel} at {w}px: code visible before the reader asks for it: {code}"
    wide = page.evaluate(_OVERFLOW)
    assert wide == [], f"{rel} at {w}px: wider than the text column by [px, scrolled px]: {wide}"
    page.evaluate(_OPEN_ALL)
    page.wait_for_timeout(100)
    wide = page.evaluate(_OVERFLOW)
    assert wide == [], f"{rel} at {w}px: unfolded code wider than the text column: {wide}"


def test_every_page_fits_the_column_and_draws_its_charts(built_report, chromium):
    html, _, _ = built_report
    shots = ROOT / "build" / "screenshots" / "after"
    shots.mkdir(parents=True, exist_ok=True)
    pages = _pages(html)
    assert {"index.html", "appendix.html", "nbs/01_hardware.html"} <= set(pages)
    with browser.serve(html) as base:
        for rel in pages:
            for w in WIDTHS:
                page = chromium.new_page(viewport={"width": w, "height": 900})
                watch = browser.PageWatch(page)
                page.goto(f"{base}/{rel}", wait_until="load")
                page.wait_for_function(_ALL_DRAWN, timeout=30000)
                # the wide shot records the whole page down to MAX_SHOT_PX (the appendix's full tables run to ~190,000
                # px, whose full-page capture alone takes over 30 s); the layout checks below measure every element
                shot = str(shots / f"{rel.replace('/', '_').removesuffix('.html')}-{w}.png")
                if w == WIDTHS[0]:
                    height = min(page.evaluate("document.documentElement.scrollHeight"), MAX_SHOT_PX)
                    page.screenshot(path=shot, full_page=True, clip={"x": 0, "y": 0, "width": w, "height": height})
                else:
                    page.screenshot(path=shot)
                _check_page(page, rel, w)
                assert watch.failed == [], f"{rel}: failed requests {watch.failed}"
                assert watch.errors == [], f"{rel}: page errors {watch.errors}"
                page.close()


def _record_value(records, chapter, key):
    """``records[chapter]`` (one record per chapter) followed along the dotted ``key``."""
    (values,) = records[chapter].values()
    for part in key.split("."):
        values = values[part]
    return values


def test_landing_page_headline_numbers_are_the_chapters(built_report, report_records, chromium):
    """Each number on the landing page is its chapter's recorded value, reads the same on the page
    it links to, and the landing page links the PDF of the whole book."""
    html, _, _ = built_report
    with browser.serve(html) as base:
        page = chromium.new_page(viewport={"width": 1300, "height": 900})
        watch = browser.PageWatch(page)
        page.goto(f"{base}/index.html", wait_until="load")
        found = page.evaluate("() => [...document.querySelectorAll('.ipd-finding')].map(s => [s.dataset.chapter, "
                              "s.dataset.key, parseFloat(s.dataset.value), s.innerText])")
        pdf_href = page.evaluate("() => [...document.querySelectorAll('a')].map(a => a.getAttribute('href'))"
                                 ".filter(h => h && h.endsWith('.pdf'))")
        assert watch.failed == [] and watch.errors == []
        page.close()
        assert len([f for f in found if f[0] == "00_claims"]) >= 5, found
        texts = {}
        for chapter, key, value, text in found:
            assert _record_value(report_records, chapter, key) == pytest.approx(value, rel=1e-12), (chapter, key)
            texts.setdefault(chapter, []).append(text)
        for chapter, wanted in texts.items():
            page = chromium.new_page(viewport={"width": 1300, "height": 900})
            page.goto(f"{base}/nbs/{chapter}.html", wait_until="load")
            body = page.evaluate("() => document.querySelector('article').innerText")
            page.close()
            missing = [t for t in wanted if t not in body]
            assert missing == [], f"landing-page numbers not on nbs/{chapter}.html: {missing}"
    assert len(pdf_href) == 1 and (html / pdf_href[0]).stat().st_size > 100_000, pdf_href


def test_ledger_numbers_agree_with_the_chapters_that_compute_them(report_records):
    """One definition per headline quantity: the ledger's medians are the computing chapters' values."""
    claims = report_records["00_claims"]["claims"]["p50"]
    hardware = report_records["01_hardware"]["hardware"]
    post = report_records["03_post_training"]["post_training"]
    econ = report_records["04_intelligence_per_dollar"]["economics"]
    assert claims["rubin_50_vs_20_pf"] == pytest.approx(hardware["rubin_vs_blackwell_headline_ratio"])
    assert claims["weight_sync_2s"] == pytest.approx(post["perplexity_sync_predicted_s"])
    assert claims["inference_10x_cost"] == pytest.approx(econ["serving_cost_ratio"]["p50"])
    assert claims["no_rack_price"] == pytest.approx(econ["break_even_usd"]["10T training target (chapter 2)"]["p50"])


def test_legend_selection_changes_marks(built_report, chromium):
    """Clicking a legend entry (a Vega-Lite selection) fades the other series."""
    html, _, _ = built_report
    with browser.serve(html) as base:
        page = chromium.new_page(viewport={"width": 1300, "height": 900})
        watch = browser.PageWatch(page)
        page.goto(f"{base}/nbs/01_hardware.html", wait_until="load")
        page.wait_for_function("() => document.querySelector('.ipd-chart svg g.mark-symbol path')", timeout=30000)
        chart = page.locator(".ipd-chart").first
        opac = ("() => [...document.querySelector('.ipd-chart svg').querySelectorAll('g.mark-symbol path')]"
                ".map(p => p.getAttribute('opacity') || p.getAttribute('fill-opacity') || '1').join(',')")
        before = page.evaluate(opac)
        chart.locator("g.role-legend-label text").first.click()
        page.wait_for_timeout(300)
        after = page.evaluate(opac)
        assert before != after, "legend click did not change the bars"
        assert watch.errors == [] and watch.failed == []
        page.close()


def test_vega_lite_slider_in_static_book_changes_marks(built_report, chromium):
    """A chart parameter bound to a slider works without a kernel: moving it moves the marks."""
    html, _, _ = built_report
    with browser.serve(html) as base:
        pages = [p for p in _pages(html) if p.startswith("nbs/")]
        found = False
        for rel in pages:
            page = chromium.new_page(viewport={"width": 1300, "height": 900})
            watch = browser.PageWatch(page)
            page.goto(f"{base}/{rel}", wait_until="load")
            page.wait_for_function(_ALL_DRAWN, timeout=30000)
            sliders = page.locator(".ipd-chart .vega-bindings input[type=range]")
            if sliders.count() == 0:
                page.close()
                continue
            found = True
            chart = page.locator(".ipd-chart", has=page.locator(".vega-bindings input[type=range]")).first
            marks = "(el) => [...el.querySelectorAll('svg g.mark-symbol path, svg g.mark-text text, svg g.mark-rule line')].map(m => (m.getAttribute('transform') || '') + (m.textContent || '') + (m.getAttribute('x1') || '')).join('|')"
            before = chart.evaluate(marks)
            chart.locator(".vega-bindings input[type=range]").first.focus()
            for _ in range(15):
                page.keyboard.press("ArrowLeft")
            page.wait_for_timeout(400)
            after = chart.evaluate(marks)
            assert before != after, f"{rel}: moving the slider did not change the chart's marks"
            assert watch.errors == [] and watch.failed == []
            page.close()
        assert found, "no chart in the book binds a Vega-Lite parameter to a slider"
