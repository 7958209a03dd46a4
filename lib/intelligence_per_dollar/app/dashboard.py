"""Serve the Voila dashboard (``nbs/explore.ipynb``) offline.

``python -m intelligence_per_dollar.app.dashboard [--port N] [--no-browser]`` (or ``make explore``)
starts Voila on 127.0.0.1 with the ``ipd-offline`` template shipped in this package: Voila's
stock template loads Font Awesome from a CDN, ours does not, so the dashboard makes no request
off the machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from intelligence_per_dollar.sources import io

TEMPLATE = "ipd-offline"


def template_root() -> Path:
    """Folder to put on JUPYTER_PATH so Voila finds ``voila/templates/ipd-offline``."""
    return Path(__file__).resolve().parent / "share"


def command(notebook: Path, port: int, *, open_browser: bool = False) -> list[str]:
    voila = Path(sys.executable).parent / "voila"
    return [str(voila) if voila.exists() else "voila", str(notebook), f"--port={port}",
            "--Voila.ip=127.0.0.1", "--ServerApp.ip=127.0.0.1", f"--template={TEMPLATE}",
            "--no-browser" if not open_browser else "--Voila.open_browser=True",
            "--VoilaConfiguration.file_allowlist=['.*\\.(png|jpg|gif|svg|css|js)']"]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(template_root()), env.get("JUPYTER_PATH", "")) if p)
    env.setdefault("IPD_ROOT", str(io.repo_root()))
    return env


def popen(notebook: Path | None = None, port: int = 8866, **kwargs) -> subprocess.Popen:
    """Start Voila in its own process group (stop it with ``os.killpg(proc.pid, SIGTERM)``)."""
    nb = notebook or io.repo_root() / "nbs" / "explore.ipynb"
    return subprocess.Popen(command(nb, port), env=environment(), cwd=str(io.repo_root()),
                            start_new_session=True, **kwargs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m intelligence_per_dollar.app.dashboard", description=__doc__)
    ap.add_argument("--port", type=int, default=8866, help="port on 127.0.0.1 (default 8866)")
    ap.add_argument("--notebook", type=Path, default=None, help="notebook to serve (default nbs/explore.ipynb)")
    ap.add_argument("--open", action="store_true", help="open a browser")
    args = ap.parse_args(argv)
    nb = args.notebook or io.repo_root() / "nbs" / "explore.ipynb"
    print(f"Dashboard: http://127.0.0.1:{args.port}/  (Ctrl-C to stop)")
    return subprocess.call(command(nb, args.port, open_browser=args.open), env=environment(),
                           cwd=str(io.repo_root()))


if __name__ == "__main__":
    raise SystemExit(main())
