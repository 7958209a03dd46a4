"""A sweep's specification: what to vary, how, and which function evaluates one sample.

A spec is a YAML file in ``data/sweeps/`` (:func:`load_spec`) or a dict (:func:`spec_from_dict`)::

    name: gpu-ratio-10t                 # [a-z0-9-]; names the cache file
    description: ...
    function: intelligence_per_dollar.analysis.sweeps.gpu_ratio:sample   # "module:callable"
    method: random                      # random (seeded draws) | grid (Cartesian product of values)
    samples: 96                         # random only
    seed: 2026                          # random only
    fixed: {workload: pretrain-10t}     # passed unchanged to every call
    parameters:
      active_params: {assumption: moe_10t_active_params, distribution: pert}
      kept_precision: {distribution: choice, values: [bf16, fp8], weights: [0.5, 0.5],
                       source_url: ..., date_read: 2026-12-01, kind: assumption, note: ...}
      model_error: {derived: cross_generation_error}

Each parameter's distribution comes from one of three places: ``assumption`` (a low/central/high
row of ``data/assumptions/*.csv``, which carries its provenance), ``derived`` (computed from the
data by a provider of :mod:`.derived`, e.g. the model's validated error), or the spec itself, which
must then give ``source_url``, ``date_read`` and ``kind`` like every number in ``data/``.
Distributions: ``pert`` (default for ranges) and ``triangular`` over [low, high] with mode
``central``, ``uniform``, ``loguniform``, ``lognormal`` (``median``, ``sigma`` of the log) and
``choice`` (``values`` with ``weights``). Grid parameters list ``values`` only.

Every problem raises ``ValueError`` naming the spec (file), the key, the value and what is allowed.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping

import yaml

from intelligence_per_dollar.analysis.sweeps import derived as derived_providers
from intelligence_per_dollar.sources import assumptions as assumption_files
from intelligence_per_dollar.sources import checks, io

METHODS = ("random", "grid")
DISTRIBUTIONS = ("pert", "triangular", "uniform", "loguniform", "lognormal", "choice")
RANGE_DISTRIBUTIONS = ("pert", "triangular", "uniform", "loguniform")
SPEC_KEYS = ("name", "description", "function", "method", "samples", "seed", "fixed", "parameters")
PARAMETER_KEYS = ("distribution", "assumption", "derived", "low", "central", "high", "median", "sigma", "values",
                  "weights", "unit", "source_url", "date_read", "kind", "note")
#: Functions a spec may name live in the book's package (a spec is data, never arbitrary code).
FUNCTION_PACKAGE = "intelligence_per_dollar."
_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
#: Most samples of a random sweep (each sample is a model search of seconds).
MAX_SAMPLES = 100_000


@dataclass(frozen=True)
class Parameter:
    """One varied input, resolved: its distribution and every number it needs, with provenance."""

    name: str
    distribution: str
    low: float | None = None
    central: float | None = None
    high: float | None = None
    median: float | None = None
    sigma: float | None = None
    values: tuple = ()
    weights: tuple[float, ...] = ()
    unit: str = ""
    source: str = ""            # assumption:<name>, derived:<provider> or the spec's source_url

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: name, function, method, sample size and seed, fixed inputs, parameters."""

    name: str
    function: str
    method: str
    parameters: Mapping[str, Parameter]
    samples: int = 0
    seed: int = 0
    fixed: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    origin: str = "<dict>"

    def resolved(self) -> dict:
        """Everything that determines the sweep's samples and calls, as plain data (the cache key's input)."""
        return {"name": self.name, "function": self.function, "method": self.method, "samples": self.samples,
                "seed": self.seed, "fixed": dict(self.fixed),
                "parameters": {k: p.as_dict() for k, p in self.parameters.items()}}

    def canonical(self) -> str:
        """:meth:`resolved` as canonical JSON."""
        return json.dumps(self.resolved(), sort_keys=True, default=repr)

    def with_samples(self, samples: int, seed: int | None = None) -> "SweepSpec":
        """The same sweep with another sample size (and seed): a smaller or larger run of it."""
        d = dict(self.__dict__)
        d["samples"] = _samples(self.origin, samples)
        d["seed"] = self.seed if seed is None else checks.non_negative_int("seed", seed)
        return SweepSpec(**d)


def _fail(origin: str, key: str, value, allowed: str) -> ValueError:
    return ValueError(f"sweep spec {origin}: {key}={checks.short(value)} is not allowed; allowed: {allowed}")


def _samples(origin: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_SAMPLES:
        raise _fail(origin, "samples", v, f"an integer in [1, {MAX_SAMPLES:,}]")
    return v


def resolve_function(path: str) -> Callable:
    """The callable ``"module:name"`` names (the module must be inside the book's package)."""
    if not isinstance(path, str) or ":" not in path or not path.startswith(FUNCTION_PACKAGE):
        raise ValueError(f"function={path!r} is not allowed; allowed: 'module:callable' with the module "
                         f"inside {FUNCTION_PACKAGE.rstrip('.')}")
    mod, _, attr = path.partition(":")
    try:
        fn = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as ex:
        raise ValueError(f"function={path!r} cannot be imported: {ex}") from None
    if not callable(fn):
        raise ValueError(f"function={path!r} is not callable")
    return fn


def assumption_record(name: str) -> assumption_files.Assumption | None:
    """The low/central/high row ``name`` of ``data/assumptions/*.csv`` (None if no file has it)."""
    for f in sorted((io.data_dir() / "assumptions").glob("*.csv")):
        recs = assumption_files.assumptions(f.name)
        if name in recs:
            return recs[name]
    return None


def _assumption(origin: str, key: str, name) -> assumption_files.Assumption:
    a = assumption_record(name) if isinstance(name, str) else None
    if a is None:
        raise _fail(origin, f"{key}.assumption", name, "a name in data/assumptions/*.csv")
    return a


def _number(origin: str, key: str, v, **kw) -> float:
    try:
        return checks.number(key, v, **kw)
    except ValueError as ex:
        raise ValueError(f"sweep spec {origin}: {ex}") from None


def _provenance(origin: str, key: str, d: Mapping) -> str:
    missing = [k for k in ("source_url", "date_read", "kind") if not d.get(k)]
    if missing:
        raise _fail(origin, key, dict(d), f"a parameter without 'assumption' or 'derived' needs {', '.join(missing)}")
    if d["kind"] not in io.KINDS:
        raise _fail(origin, f"{key}.kind", d["kind"], ", ".join(io.KINDS))
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(d["date_read"])):
        raise _fail(origin, f"{key}.date_read", d["date_read"], "a date YYYY-MM-DD")
    return str(d["source_url"])


def _choice(origin: str, key: str, d: Mapping) -> dict:
    values = d.get("values")
    if not isinstance(values, list) or not values or len(set(map(repr, values))) != len(values):
        raise _fail(origin, f"{key}.values", values, "a non-empty list of distinct values")
    weights = d.get("weights", [1.0 / len(values)] * len(values))
    if not isinstance(weights, list) or len(weights) != len(values):
        raise _fail(origin, f"{key}.weights", weights, f"a list of {len(values)} numbers")
    w = [_number(origin, f"{key}.weights", x, low=0) for x in weights]
    if abs(sum(w) - 1.0) > 1e-9:
        raise _fail(origin, f"{key}.weights", weights, "numbers >= 0 that sum to 1")
    return {"values": tuple(values), "weights": tuple(w)}


def _range(origin: str, key: str, d: Mapping, dist: str) -> dict:
    lo, c, hi = (_number(origin, f"{key}.{k}", d.get(k)) for k in ("low", "central", "high"))
    if not lo <= c <= hi:
        raise _fail(origin, key, (lo, c, hi), "low <= central <= high")
    if dist == "loguniform" and lo <= 0:
        raise _fail(origin, f"{key}.low", lo, "a number > 0 for a loguniform distribution")
    return {"low": lo, "central": c, "high": hi}


def _parameter(origin: str, method: str, name: str, d) -> Parameter:
    key = f"parameters.{name}"
    if not isinstance(d, Mapping):
        raise _fail(origin, key, d, "a mapping of " + ", ".join(PARAMETER_KEYS))
    unknown = sorted(set(d) - set(PARAMETER_KEYS))
    if unknown:
        raise _fail(origin, f"{key}.{unknown[0]}", d[unknown[0]], "keys " + ", ".join(PARAMETER_KEYS))
    if method == "grid":
        values = d.get("values")
        if not isinstance(values, list) or not values:
            raise _fail(origin, f"{key}.values", values, "a non-empty list (grid sweeps list each parameter's values)")
        return Parameter(name, "grid", values=tuple(values), unit=str(d.get("unit", "")))
    d = dict(d)
    source = ""
    if "derived" in d:
        d = {**derived_providers.distribution(d["derived"], f"sweep spec {origin}: {key}.derived"), **d}
        source = f"derived:{d['derived']}"
    elif "assumption" in d:
        a = _assumption(origin, key, d["assumption"])
        d = {"low": a.low, "central": a.central, "high": a.high, "unit": a.unit, **d}
        source = f"assumption:{a.name}"
    else:
        source = _provenance(origin, key, d)
    dist = d.get("distribution", "choice" if "values" in d else "pert")
    if dist not in DISTRIBUTIONS:
        raise _fail(origin, f"{key}.distribution", dist, ", ".join(DISTRIBUTIONS))
    if dist == "choice":
        extra = _choice(origin, key, d)
    elif dist == "lognormal":
        extra = {"median": _number(origin, f"{key}.median", d.get("median"), low=0, low_open=True),
                 "sigma": _number(origin, f"{key}.sigma", d.get("sigma"), low=0)}
    else:
        extra = _range(origin, key, d, dist)
    return Parameter(name, dist, unit=str(d.get("unit", "")), source=source, **extra)


def spec_from_dict(d: Mapping, origin: str = "<dict>") -> SweepSpec:
    """A :class:`SweepSpec` from plain data (the parsed YAML), validated; ``origin`` names it in errors."""
    if not isinstance(d, Mapping):
        raise _fail(origin, "spec", d, "a mapping with keys " + ", ".join(SPEC_KEYS))
    unknown = sorted(set(d) - set(SPEC_KEYS))
    if unknown:
        raise _fail(origin, unknown[0], d[unknown[0]], "keys " + ", ".join(SPEC_KEYS))
    name = d.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise _fail(origin, "name", name, "lower-case letters, digits and '-'")
    resolve_function(d.get("function"))
    method = d.get("method", "random")
    if method not in METHODS:
        raise _fail(origin, "method", method, ", ".join(METHODS))
    params = d.get("parameters")
    if not isinstance(params, Mapping) or not params:
        raise _fail(origin, "parameters", params, "a non-empty mapping of parameter name -> distribution")
    fixed = d.get("fixed") or {}
    if not isinstance(fixed, Mapping):
        raise _fail(origin, "fixed", fixed, "a mapping of argument name -> value")
    clash = sorted(set(fixed) & set(params))
    if clash:
        raise _fail(origin, f"fixed.{clash[0]}", fixed[clash[0]], "a name that is not also a varied parameter")
    samples = seed = 0
    if method == "random":
        samples = _samples(origin, d.get("samples"))
        seed = d.get("seed")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise _fail(origin, "seed", seed, "an integer >= 0")
    parameters = {str(k): _parameter(origin, method, str(k), v) for k, v in params.items()}
    return SweepSpec(name, d["function"], method, MappingProxyType(parameters), samples, seed,
                     MappingProxyType(dict(fixed)), str(d.get("description", "")), origin)


def read_spec_dict(path: str | Path) -> tuple[dict, str]:
    """``(parsed YAML, file name)`` of a spec file (safe loader). A bare name means
    ``data/sweeps/<name>.yml``."""
    p = Path(path)
    if not p.suffix and not p.exists():
        p = io.data_dir() / "sweeps" / f"{p.name}.yml"
    if not p.is_file():
        raise ValueError(f"sweep spec {path}: file not found")
    try:
        d = yaml.safe_load(p.read_text())
    except yaml.YAMLError as ex:
        raise ValueError(f"sweep spec {p}: not valid YAML: {ex}") from None
    return d, str(p)


def load_spec(path: str | Path) -> SweepSpec:
    """Read and validate a sweep spec (:func:`read_spec_dict`, :func:`spec_from_dict`)."""
    return spec_from_dict(*read_spec_dict(path))
