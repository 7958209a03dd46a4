"""Open every page of the built book in real Chromium: every chart drew (SVG marks present),
no failed or off-machine requests, no page errors. Saves a screenshot of each chapter."""

import pytest

import playwright_chromium as browser
from conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def chromium():
    browser.require()
    with browser.browser() as b:
        yield b


def _pages(html):
    return sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html")
                  if not p.name.startswith(("genindex", "search")) and "_static" not in p.parts)


_ALL_DRAWN = "() => [...document.querySelectorAll('.ipd-chart')].every(d => d.querySelector('svg'))"
#: Per chart: how many marks it drew (not just an empty SVG) ...
_MARKS = ("() => [...document.querySelectorAll('.ipd-chart')].map(d => "
          "d.querySelectorAll('g.mark-rect path, g.mark-line path, g.mark-symbol path, "
          "g.mark-text text, g.mark-rule line').length)")
#: ... and how many of them have area (a log-scale bar, for one, draws with zero height)
_VISIBLE = ("() => [...document.querySelectorAll('.ipd-chart')].map(d => [...d.querySelectorAll("
            "'g.mark-rect path, g.mark-line path, g.mark-symbol path')].filter(p => {"
            "const b = p.getBBox(); return b.width > 0.5 || b.height > 0.5;}).length)")


def test_every_page_draws_its_charts_offline(built_report, chromium):
    html, _, _ = built_report
    shots = ROOT / "build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    pages = _pages(html)
    assert "nbs/01_hardware.html" in pages
    with browser.serve(html) as base:
        for rel in pages:
            page = chromium.new_page(viewport={"width": 1300, "height": 900})
            watch = browser.PageWatch(page)
            page.goto(f"{base}/{rel}", wait_until="load")
            page.wait_for_function(_ALL_DRAWN, timeout=30000)  # at once on a page without charts
            n_charts = page.locator(".ipd-chart").count()
            assert n_charts >= 1 or not rel.startswith("nbs/"), f"{rel}: a chapter without charts"
            marks, visible = page.evaluate(_MARKS), page.evaluate(_VISIBLE)
            assert len(marks) == len(visible) == n_charts
            assert all(m > 0 for m in marks), f"{rel}: charts without marks: {marks}"
            assert all(v > 0 for v in visible), f"{rel}: charts whose marks have no area: {visible}"
            for chart in page.locator(".ipd-chart").all()[:1]:
                chart.scroll_into_view_if_needed()
                chart.screenshot(path=str(shots / f"{rel.replace('/', '_')}.png"))
            page.wait_for_timeout(300)
            assert watch.failed == [], f"{rel}: failed requests {watch.failed}"
            assert watch.errors == [], f"{rel}: page errors {watch.errors}"
            page.close()


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
