"""Intelligence per dollar: an open, first-principles model of AI-infrastructure economics.

Notebooks use ``import intelligence_per_dollar as ipd`` and reach each concern as a submodule
(``ipd.hardware``, ``ipd.training``, ``ipd.charts`` ...). Submodules load on first use, so a
bare import stays fast.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_SUBMODULES = (
    "io", "hardware", "measurements", "architecture", "efficiency", "collectives", "training",
    "validation", "inference", "post_training", "economics", "uncertainty", "claims", "charts",
    "tables", "widgets", "params", "scenario", "build", "cli",
)


def __getattr__(name: str):
    if name in _SUBMODULES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'intelligence_per_dollar' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES))
