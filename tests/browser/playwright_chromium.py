"""Drive Debian's chromium through Playwright's Python API against pages served on 127.0.0.1.

Used by the browser tests. Any request that leaves the machine is aborted and counted as a
failure, so "zero failed requests" also means "zero requests off the machine".
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import socket
import threading
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(folder: Path):
    """Serve ``folder`` over HTTP on 127.0.0.1 at a free port; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield b
        finally:
            b.close()


class PageWatch:
    """Collect failed requests, off-machine requests and page errors for one page."""

    def __init__(self, page):
        self.failed: list[str] = []
        self.errors: list[str] = []
        self.console_errors: list[str] = []
        # about:blank / data: / blob: are not network requests (iframes, inline images)
        page.on("requestfailed", lambda r: None if r.url.startswith(("about:", "data:", "blob:"))
                else self.failed.append(f"{r.url} ({r.failure})"))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)
        page.on("response", lambda r: self.failed.append(f"{r.url} (HTTP {r.status})") if r.status >= 400 else None)

        def _route(route):
            url = route.request.url
            if url.startswith(("http://127.0.0.1", "data:", "blob:", "about:")):
                route.continue_()
            else:
                self.failed.append(f"{url} (off-machine request blocked)")
                route.abort()

        page.route("**/*", _route)


def available() -> bool:
    return os.path.exists(CHROMIUM)


def require() -> None:
    """Skip locally when Debian chromium is missing; in CI (CI=true) that is a failure."""
    import pytest

    if available():
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail("chromium is not installed: .ci/run must apt-get install chromium")
    pytest.skip("Debian chromium not installed (apt-get install chromium)")
