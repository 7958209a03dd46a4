"""Intelligence per dollar: an open, first-principles model of AI-infrastructure economics.

Notebooks use ``import intelligence_per_dollar as ipd`` and reach each concern as a submodule
(``ipd.hardware``, ``ipd.training``, ``ipd.charts`` ...). Submodules load on first use, so a
bare import stays fast.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(name)
    try:
        module = importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as ex:
        if ex.name == f"{__name__}.{name}":
            raise AttributeError(f"module 'intelligence_per_dollar' has no attribute {name!r}") from None
        raise
    globals()[name] = module
    return module


def __dir__():
    import pkgutil

    return sorted(set(globals()) | {m.name for m in pkgutil.iter_modules(__path__)})
