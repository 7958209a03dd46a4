"""Scenario files: one YAML file that sets the parameters of every chapter, validated before any
notebook runs.

The schema is *derived from the chapters*: each notebook's ``parameters`` cell is parsed (never
executed: every right-hand side goes through :func:`ast.literal_eval`) to get each parameter's
name, default and type. Constraints come from two places:

* checks a chapter makes on its own parameters with :mod:`intelligence_per_dollar.app.params` whose
  arguments are literals or other parameters, e.g. ``ipd.params.choice("precision", precision,
  ("fp4", "fp8", "bf16"))``, are read from the notebook's source and applied here with the same
  function, so the scenario check and the chapter's own check cannot disagree;
* :data:`CONSTRAINTS` (per parameter, keyed ``"chapter.param"``) and :data:`RULES` (across
  parameters of one chapter) declare what a literal cannot express, such as "a name in the
  hardware catalogue".

A chapter added to :data:`intelligence_per_dollar.app.build.CHAPTERS` is picked up with no change
here; its parameters are type-checked at once and range-checked as far as its own literal
``params`` checks go, and :data:`CONSTRAINTS` can add the rest.

A scenario file looks like::

    description: Conservative assumptions.
    01_hardware:
      precision: fp8
      systems: [H100-SXM, GB200, VR200]

Anything omitted takes the notebook's default. Every problem (unknown chapter or key, wrong type,
value out of range) is collected into one :class:`ScenarioError` that names the file, line, key
path, value and what is allowed. YAML is read with :func:`yaml.safe_load` only; values stay plain
data (papermill writes them into the notebook as Python literals).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import io as _stdio
import json
import math
import os
import re
import shutil
import tempfile
import tokenize
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from intelligence_per_dollar.sources import io
from intelligence_per_dollar.app import params

#: Top-level keys of a scenario file that are not chapters.
META_KEYS = ("description",)

_PARAM_FUNCS = ("choice", "number", "probability", "names")


# --------------------------------------------------------------------------- constraints


def _values(v: Sequence | Callable[[], Sequence]) -> list:
    return list(v() if callable(v) else v)


@dataclasses.dataclass(frozen=True)
class Choice:
    """One of ``values`` (a sequence, or a callable returning one, read when validating)."""

    values: Sequence | Callable[[], Sequence]

    def check(self, name: str, value):
        return params.choice(name, value, _values(self.values))

    def allowed(self) -> str:
        return "one of " + ", ".join(map(str, _values(self.values)))


@dataclasses.dataclass(frozen=True)
class Number:
    """A finite number in ``[low, high]`` (``low_open``: strictly above ``low``)."""

    low: float | None = None
    high: float | None = None
    integer: bool = False
    low_open: bool = False

    def check(self, name: str, value):
        return params.number(name, value, low=self.low, high=self.high, integer=self.integer,
                             low_open=self.low_open)

    def allowed(self) -> str:
        kind = "an integer" if self.integer else "a finite number"
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {self.low:g}")
        if self.high is not None:
            parts.append(f"<= {self.high:g}")
        return kind + (" " + " and ".join(parts) if parts else "")


def Probability() -> Number:  # noqa: N802 - reads like the other constraint constructors
    """A probability in [0, 1] (as :func:`params.probability`)."""
    return Number(0.0, 1.0)


@dataclasses.dataclass(frozen=True)
class Names:
    """A list of at least ``min_len`` names, each in ``known`` (sequence or callable)."""

    known: Sequence | Callable[[], Sequence]
    min_len: int = 1

    def check(self, name: str, value):
        return params.names(name, value, _values(self.known), min_len=self.min_len)

    def allowed(self) -> str:
        return f"a list of at least {self.min_len} of: " + ", ".join(map(str, _values(self.known)))


@dataclasses.dataclass(frozen=True)
class MappingOf:
    """A mapping whose keys are in ``keys`` (sequence or callable) and whose values meet ``value``."""

    keys: Sequence | Callable[[], Sequence]
    value: Number

    def check(self, name: str, value):
        if not isinstance(value, Mapping):
            raise ValueError(f"parameter {name}={value!r} must be a mapping; allowed: {self.allowed()}")
        for k, v in value.items():
            params.choice(f"{name} key", k, _values(self.keys))
            self.value.check(f"{name}[{k!r}]", v)
        return value

    def allowed(self) -> str:
        return f"a mapping from {', '.join(map(str, _values(self.keys)))} to {self.value.allowed()}"


@dataclasses.dataclass(frozen=True)
class Rule:
    """A check across parameters of one chapter.

    ``check(values)`` gets the chapter's resolved parameters (defaults plus the scenario's values)
    and returns a message when they do not fit together, else ``None``. The problem is reported
    at ``param``; the rule runs only when ``param`` and every name in ``uses`` passed their own
    checks.
    """

    param: str
    uses: tuple[str, ...]
    check: Callable[[Mapping[str, Any]], str | None]
    allowed: Callable[[Mapping[str, Any]], str]


def _accelerators() -> list[str]:
    from intelligence_per_dollar.sources import hardware

    return list(hardware.accelerators())


def _systems() -> list[str]:
    from intelligence_per_dollar.sources import hardware

    return list(hardware.systems())


def _measured_runs() -> list[str]:
    from intelligence_per_dollar.sources import measurements

    return sorted({m.run for m in measurements.index()})


def _global_batches() -> list[str]:
    from intelligence_per_dollar.model import training

    return list(training.GLOBAL_BATCH_TOKENS)


def _rl_algorithms() -> list[str]:
    from intelligence_per_dollar.model import post_training

    return list(post_training.ALGORITHMS)


#: Per-parameter constraints that the chapter's own literal ``params`` checks cannot express,
#: keyed ``"chapter.param"``. Keys of chapters that exist must name a parameter of that chapter
#: (tests/test_scenario.py checks); keys of chapters not yet written are ignored.

def _post_training_policies() -> list[str]:
    from intelligence_per_dollar.model import post_training

    return list(post_training.POLICIES)

CONSTRAINTS: dict[str, Choice | Number | Names | MappingOf] = {
    "01_hardware.precision": Choice(("fp4", "fp8", "bf16")),
    "01_hardware.baseline": Choice(_accelerators),
    "01_hardware.systems": Names(_accelerators),
    "01_hardware.racks": Names(_systems),
    "01_hardware.measured_run": Choice(_measured_runs),
    "00_claims.rack_prices_usd": MappingOf(_systems, Number(0)),
    # the rest of chapter 2's checks are literal and derived from the notebook
    "02_training.systems": Names(_accelerators),
    "02_training.global_batch": Choice(_global_batches),
    "03_post_training.policy": Choice(_post_training_policies),
    "03_post_training.algorithm": Choice(_rl_algorithms),
    "03_post_training.usd_overrides": MappingOf(_accelerators, Number(0)),
    # chapter 4 checks these in a loop (not literal calls); None keeps the data's low/central/high range
    "04_intelligence_per_dollar.systems": Names(_systems),
    "04_intelligence_per_dollar.rack_prices_usd": MappingOf(_systems, Number(0)),
    "04_intelligence_per_dollar.useful_life_years": Number(0.5, 30),
    "04_intelligence_per_dollar.wacc": Number(0, 1),
    "04_intelligence_per_dollar.pue": Number(1, 3),
    "04_intelligence_per_dollar.electricity_usd_per_kwh": Number(0, 2),
    "04_intelligence_per_dollar.utilisation": Number(0.01, 1),
    "04_intelligence_per_dollar.output_tokens_per_step": Number(1, 1e5),
    "04_intelligence_per_dollar.lifetime_tasks_served": Number(1, 1e15),
}


def _member_of(param: str, among: str) -> Rule:
    """``param`` must be one of the names listed in parameter ``among``."""
    return Rule(param, (among,),
                lambda v: None if v[param] in list(v[among])
                else f"{param}={v[param]!r} must be one of the names in {among}",
                lambda v: f"one of {among}: {', '.join(map(str, v[among]))}")


def _keys_among(param: str, among: str) -> Rule:
    """Every key of mapping ``param`` must be one of the names in parameter ``among``."""
    def check(v):
        bad = [k for k in v[param] if k not in list(v[among])]
        return f"{param} has key(s) {bad} that are not in {among}" if bad else None

    return Rule(param, (among,), check, lambda v: f"keys from {among}: {', '.join(map(str, v[among]))}")


#: Cross-parameter rules by chapter (checks with literal arguments or other parameters as
#: arguments are derived from the notebooks; these are the rest).
RULES: dict[str, tuple[Rule, ...]] = {
    # the chapter's tables take ratios against the baseline row, so it must be compared
    "01_hardware": (_member_of("baseline", "systems"),),
    "03_post_training": (_keys_among("usd_overrides", "platforms"),),
}


# --------------------------------------------------------------------------- chapter parameters


class SchemaError(RuntimeError):
    """A chapter notebook's parameters cell cannot be turned into a schema (an authoring bug)."""


@dataclasses.dataclass(frozen=True)
class Param:
    """One parameter of a chapter, as its ``parameters`` cell declares it."""

    chapter: str
    name: str
    default: Any
    type: Any  # a Python type or typing form used for the pydantic field
    comment: str = ""
    literal: bool = True  # False: the default is computed, not a literal
    constraint: Choice | Number | Names | None = None

    @property
    def key(self) -> str:
        return f"{self.chapter}.{self.name}"

    def type_name(self) -> str:
        return _type_name(self.type)

    def allowed(self) -> str:
        text = self.constraint.allowed() if self.constraint is not None else self.type_name()
        return text + (", or null (the chapter's default)" if self.literal and self.default is None else "")


@dataclasses.dataclass(frozen=True)
class _DerivedCheck:
    """A literal ``params.<func>(name, name, ...)`` call found in a chapter's source."""

    func: str
    args: tuple
    kwargs: tuple[tuple[str, Any], ...]
    deps: tuple[str, ...]  # arguments that are other parameters, by position marker


class _ParamRef(str):
    """An argument of a derived check that names another parameter (resolved when validating)."""


def _notebook(chapter: str, root: Path | None = None) -> tuple[Path, tuple[str, ...], tuple[str, ...]]:
    """``(path, parameters-cell sources, every code cell's source)`` of a chapter notebook."""
    root = root or io.repo_root()
    path = root / "nbs" / f"{chapter}.ipynb"
    if not path.exists():
        raise SchemaError(f"chapter {chapter} has no notebook {path}")
    st = path.stat()
    return (path,) + _read_cells(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=32)
def _read_cells(path: str, mtime_ns: int, size: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    import nbformat

    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    pcells = tuple(c.source for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))
    return pcells, tuple(c.source for c in cells)


def _comments(source: str) -> dict[int, str]:
    out = {}
    try:
        for tok in tokenize.generate_tokens(_stdio.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string.lstrip("#").strip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def _infer_type(default: Any):
    from typing import Any as _Any

    if isinstance(default, bool):
        return bool
    if isinstance(default, int):
        return int
    if isinstance(default, float):
        return float
    if isinstance(default, str):
        return str
    if isinstance(default, (list, tuple)):
        kinds = {_infer_type(x) for x in default}
        if kinds == {int, float}:
            kinds = {float}
        return list[kinds.pop()] if len(kinds) == 1 else list[_Any]
    if isinstance(default, dict):
        kinds = {_infer_type(x) for x in default.values()}
        if kinds == {int, float}:
            kinds = {float}
        return dict[str, kinds.pop()] if len(kinds) == 1 else dict[str, _Any]
    return _Any


def _type_name(tp) -> str:
    import typing

    names = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    plural = {bool: "booleans", int: "integers", float: "numbers", str: "strings"}
    if tp in names:
        return names[tp]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is list:
        return f"a list of {plural[args[0]]}" if args and args[0] in plural else "a list"
    if origin is dict:
        return (f"a mapping of names to {plural[args[1]]}" if len(args) > 1 and args[1] in plural
                else "a mapping of names to values")
    return "any value"


def _params_aliases(trees: Iterable[ast.AST]) -> set[str]:
    """Names bound to the params module: ``P = ipd.params``, ``from intelligence_per_dollar import
    params as P``, ``import intelligence_per_dollar.app.params as P``."""
    out = {"params"}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                v = node.value
                if (isinstance(v, ast.Attribute) and v.attr == "params") or (isinstance(v, ast.Name) and v.id in out):
                    out.add(node.targets[0].id)
            elif isinstance(node, ast.ImportFrom) and node.module in ("intelligence_per_dollar", "intelligence_per_dollar.app"):
                out.update(a.asname or a.name for a in node.names if a.name == "params")
            elif isinstance(node, ast.ImportFrom) and node.module == "intelligence_per_dollar.app.params":
                out.update(f"from-import:{a.name}" for a in node.names if a.asname is None)
            elif isinstance(node, ast.Import):
                out.update(a.asname for a in node.names if a.name == "intelligence_per_dollar.app.params" and a.asname)
    return out


def _param_func(call: ast.Call, aliases: set[str]) -> str | None:
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr in _PARAM_FUNCS:
        v = f.value
        if (isinstance(v, ast.Name) and v.id in aliases) or (isinstance(v, ast.Attribute) and v.attr == "params"):
            return f.attr
    elif isinstance(f, ast.Name) and f.id in _PARAM_FUNCS and f"from-import:{f.id}" in aliases:
        return f.id
    return None


def _derived_checks(cells_source: tuple[str, ...], names: set[str]) -> dict[str, list[_DerivedCheck]]:
    return _derived_checks_cached(tuple(cells_source), frozenset(names))


@functools.lru_cache(maxsize=32)
def _derived_checks_cached(cells_source: tuple[str, ...], names: frozenset[str]) -> dict[str, list[_DerivedCheck]]:
    """``params.<func>("p", p, ...)`` calls whose other arguments are literals or parameters."""
    out: dict[str, list[_DerivedCheck]] = {}
    trees = []
    for src in cells_source:
        try:
            trees.append(ast.parse(src))
        except SyntaxError:
            continue  # magics etc.: nothing to derive
    aliases = _params_aliases(trees)
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = _param_func(node, aliases)
            if func is None or len(node.args) < 2:
                continue
            a0, a1 = node.args[0], node.args[1]
            if not (isinstance(a0, ast.Constant) and isinstance(a0.value, str) and a0.value in names
                    and isinstance(a1, ast.Name) and a1.id == a0.value):
                continue

            def lit(n):
                if isinstance(n, ast.Name) and n.id in names:
                    return _ParamRef(n.id)
                return ast.literal_eval(n)

            try:
                args = tuple(lit(n) for n in node.args[2:])
                kwargs = tuple((k.arg, lit(k.value)) for k in node.keywords if k.arg is not None)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                continue  # not literal (e.g. list(accs)): CONSTRAINTS may declare it
            if any(k.arg is None for k in node.keywords):
                continue
            deps = tuple(x for x in list(args) + [v for _, v in kwargs] if isinstance(x, _ParamRef))
            out.setdefault(a0.value, []).append(_DerivedCheck(func, args, kwargs, deps))
    return out


def chapter_parameters(chapter: str, *, root: Path | None = None) -> dict[str, Param]:
    """The parameters of ``nbs/<chapter>.ipynb``: name -> :class:`Param`, in cell order.

    Reads the cell tagged ``parameters``; each top-level ``name = <literal>`` (or annotated
    assignment) is a parameter whose default is the literal (``ast.literal_eval``; nothing is
    executed). A non-literal right-hand side still declares a settable parameter, typed only by
    its constraint.
    """
    path, pcells, cells = _notebook(chapter, root)
    if not pcells:
        return {}
    src = pcells[0]
    try:
        tree = ast.parse(src)
    except SyntaxError as ex:
        raise SchemaError(f"{path}: parameters cell is not valid Python: {ex}") from None
    comments = _comments(src)
    found: dict[str, tuple[Any, bool, str]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            name, value = stmt.target.id, stmt.value
        else:
            continue
        try:
            default, literal = ast.literal_eval(value), True
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            default, literal = None, False
        found[name] = (default, literal, comments.get(stmt.lineno, ""))
    # constraints: declared ones win over those derived from the chapter's literal checks
    derived = _derived_checks(cells, set(found))
    out: dict[str, Param] = {}
    for name, (default, literal, comment) in found.items():
        constraint = CONSTRAINTS.get(f"{chapter}.{name}")
        if constraint is None:
            for d in derived.get(name, []):
                if not d.deps:
                    constraint = _constraint_from(d)
                    break
        tp = _field_type(default if literal else None, constraint)
        out[name] = Param(chapter, name, default, tp, comment, literal, constraint)
    return out


def _constraint_from(d: _DerivedCheck):
    kw = dict(d.kwargs)
    if d.func == "choice" and len(d.args) >= 1:
        return Choice(tuple(d.args[0]))
    if d.func == "names" and len(d.args) >= 1:
        return Names(tuple(d.args[0]), kw.get("min_len", 1))
    if d.func == "probability":
        return Probability()
    if d.func == "number":
        return Number(kw.get("low"), kw.get("high"), kw.get("integer", False), kw.get("low_open", False))
    return None


def _dependent_rules(chapter: str, *, root: Path | None = None) -> tuple[Rule, ...]:
    """Rules from the chapter's own checks whose allowed values are other parameters."""
    _, _, cells = _notebook(chapter, root)
    names = set(chapter_parameters(chapter, root=root))
    rules = []
    for name, checks in _derived_checks(cells, names).items():
        for d in checks:
            if not d.deps:
                continue

            def check(v, d=d, name=name):
                res = lambda x: v[x] if isinstance(x, _ParamRef) else x  # noqa: E731
                args = [res(a) for a in d.args]
                kwargs = {k: res(x) for k, x in d.kwargs}
                try:
                    getattr(params, d.func)(name, v[name], *args, **kwargs)
                except (ValueError, TypeError) as ex:
                    return str(ex)
                return None

            rules.append(Rule(name, tuple(d.deps), check,
                              lambda v, d=d: "as the chapter's check " + d.func + " with " + ", ".join(
                                  f"{x}={v[x]!r}" for x in d.deps)))
    return tuple(rules)


def _field_type(default, constraint):
    from typing import Any as _Any

    if isinstance(constraint, Names):
        return list[str]
    if isinstance(constraint, MappingOf):
        return dict[str, int if constraint.value.integer else float]
    if isinstance(constraint, Number):
        return int if constraint.integer else float
    if isinstance(constraint, Choice):
        kinds = {_infer_type(v) for v in _safe_values(constraint.values)}
        if kinds == {int, float}:
            kinds = {float}
        return kinds.pop() if len(kinds) == 1 else _Any
    return _infer_type(default)


def _safe_values(values) -> list:
    try:
        return _values(values)
    except Exception:  # noqa: BLE001 - e.g. a data file problem; reported when validating
        return []


def chapters() -> tuple[str, ...]:
    """The chapters a scenario may set: :data:`intelligence_per_dollar.app.build.CHAPTERS`."""
    from intelligence_per_dollar.app import build

    return tuple(build.CHAPTERS)


# --------------------------------------------------------------------------- problems


@dataclasses.dataclass(frozen=True)
class Problem:
    """One thing wrong with a scenario file."""

    file: str
    path: tuple  # key path, e.g. ("01_hardware", "systems", 1)
    value: Any
    message: str
    allowed: str
    line: int | None = None

    @property
    def key(self) -> str:
        out = ""
        for p in self.path:
            out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
        return out or "(top level)"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        msg = self.message
        if "allowed" not in msg and "known:" not in msg and self.allowed:
            msg += f"; allowed: {self.allowed}"
        return f"{where}: {self.key}: {msg}"


class ScenarioError(ValueError):
    """A scenario file is invalid; ``problems`` lists every problem found."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        n = len(self.problems)
        head = f"invalid scenario: {n} problem{'s' if n != 1 else ''}"
        super().__init__(head + "\n" + "\n".join(f"  {p}" for p in self.problems))


# --------------------------------------------------------------------------- the pydantic model

_NUMBER_RE = re.compile(r"^[+-]?(\d[\d_]*\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _numeric_string(v):
    """YAML 1.1 reads ``1e14`` (no dot, no exponent sign) as a string; accept it as a number."""
    if isinstance(v, str) and _NUMBER_RE.match(v.strip()):
        t = v.strip().replace("_", "")
        return float(t) if re.search(r"[.eE]", t) else int(t)
    return v


def _to_int(v):
    """For integer parameters: numeric strings as numbers, whole floats (``1e9``) as ints."""
    v = _numeric_string(v)
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        return int(v)
    return v


def _pyd_type(p: Param):
    """The pydantic type of one field: strict base type plus the parameter's constraint."""
    import typing
    from typing import Annotated

    from pydantic import AfterValidator, BeforeValidator, Strict

    tp = p.type
    strict = {bool: Annotated[bool, Strict()], str: Annotated[str, Strict()],
              int: Annotated[int, Strict()], float: Annotated[float, Strict()]}
    if tp is int:
        base = Annotated[strict[int], BeforeValidator(_to_int)]
    elif tp is float:
        base = Annotated[strict[float], BeforeValidator(_numeric_string)]
    elif tp in strict:
        base = strict[tp]
    elif typing.get_origin(tp) is list:
        (inner,) = typing.get_args(tp) or (typing.Any,)
        inner_t = strict.get(inner, inner)
        if inner in (int, float):
            inner_t = Annotated[inner_t, BeforeValidator(_to_int if inner is int else _numeric_string)]
        base = list[inner_t]
    elif typing.get_origin(tp) is dict:
        _, inner = typing.get_args(tp) or (str, typing.Any)
        inner_t = strict.get(inner, inner)
        if inner in (int, float):
            inner_t = Annotated[inner_t, BeforeValidator(_to_int if inner is int else _numeric_string)]
        base = dict[Annotated[str, Strict()], inner_t]
    else:
        base = typing.Any
    optional = p.literal and p.default is None  # None means "the chapter decides"
    if p.constraint is not None:
        c, name = p.constraint, p.name
        base = Annotated[base, AfterValidator(lambda v, c=c, name=name: c.check(name, v))]
    return base | None if optional and base is not typing.Any else base


def _alias_field(name: str) -> str:
    return "f_" + re.sub(r"\W", "_", name)


def model(chapter_list: Sequence[str] | None = None):
    """A pydantic model of a scenario file for ``chapter_list`` (default: every chapter).

    Built with :func:`pydantic.create_model`; every level forbids extra keys. Fields are stored
    under safe Python names and validated by their alias (the chapter or parameter name).
    """
    from pydantic import ConfigDict, Field, create_model

    cfg = ConfigDict(extra="forbid", allow_inf_nan=False, populate_by_name=False, validate_default=False)
    top: dict[str, Any] = {"description": (str | None, Field(None, alias="description"))}
    for ch in chapter_list if chapter_list is not None else chapters():
        fields = {_alias_field(p.name): (_pyd_type(p), Field(p.default, alias=p.name))
                  for p in chapter_parameters(ch).values()}
        sub = create_model(f"Chapter_{_alias_field(ch)}", __config__=cfg, **fields)
        top[_alias_field(ch)] = (sub | None, Field(None, alias=ch))
    return create_model("Scenario", __config__=cfg, **top)


# --------------------------------------------------------------------------- loading


@dataclasses.dataclass(frozen=True)
class Scenario:
    """A validated scenario: the values it sets, by chapter, and the defaults it leaves."""

    source: str
    description: str | None
    overrides: Mapping[str, Mapping[str, Any]]
    defaults: Mapping[str, Mapping[str, Any]]

    @property
    def name(self) -> str:
        return Path(self.source).stem if self.source not in ("", "<defaults>") else "defaults"

    def parameters(self, chapter: str) -> dict[str, Any]:
        """Papermill parameters for ``chapter``: only the values the scenario sets."""
        return dict(self.overrides.get(chapter, {}))

    def resolved(self, chapter: str) -> dict[str, Any]:
        """Every parameter of ``chapter``: defaults updated with the scenario's values."""
        return {**self.defaults.get(chapter, {}), **self.overrides.get(chapter, {})}

    def build_parameters(self) -> dict[str, dict[str, Any]]:
        """``{chapter: parameters}`` for :func:`intelligence_per_dollar.app.build.build_report`."""
        return {ch: dict(v) for ch, v in self.overrides.items() if v}


def _yaml_index(text: str, file: str) -> tuple[dict[tuple, int], list[Problem]]:
    """One walk of the YAML node tree (composed by the safe loader): key path -> 1-based line,
    and the keys given twice in one mapping (``yaml.safe_load`` would silently keep the last)."""
    import yaml

    lines: dict[tuple, int] = {}
    probs: list[Problem] = []

    def walk(node, path):
        lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else None
                line = k.start_mark.line + 1
                if key in seen:
                    probs.append(Problem(file, path + (key,), None,
                                         f"key given twice (lines {seen[key]} and {line})", "each key once", line))
                seen[key] = line
                walk(v, path + (key,))
                lines[path + (key,)] = line
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, path + (i,))

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return lines, probs
    if root is not None:
        walk(root, ())
    return lines, probs


def _line_for(lines: Mapping[tuple, int], path: tuple) -> int | None:
    p = tuple(str(x) if not isinstance(x, int) else x for x in path)
    while p:
        if p in lines:
            return lines[p]
        p = p[:-1]
    return None


def load(path: str | os.PathLike) -> Scenario:
    """Read and validate a scenario file; raise :class:`ScenarioError` listing every problem."""
    import yaml

    path = Path(path)
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as ex:
        raise ScenarioError([Problem(file, (), None, f"cannot read the file: {ex}", "a readable UTF-8 YAML file")]) \
            from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as ex:
        mark = getattr(ex, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        msg = " ".join(str(ex).split())
        raise ScenarioError([Problem(file, (), None, f"not valid YAML (or a YAML tag the safe loader refuses): {msg}",
                                     "plain YAML: mappings, lists, strings, numbers, booleans", line)]) from None
    return validate(data, source=file, _text=text)


def validate(data: Any, *, source: str = "<scenario>", chapter_list: Sequence[str] | None = None,
             _text: str | None = None) -> Scenario:
    """Validate already-parsed scenario data (a mapping; ``None`` means all defaults).

    ``chapter_list``: the chapters a scenario may set (default :func:`chapters`, the book's).
    """
    from pydantic import ValidationError

    lines, problems = _yaml_index(_text, source) if _text is not None else ({}, [])
    if data is None:
        data = {}
    known = tuple(chapter_list) if chapter_list is not None else chapters()
    if not isinstance(data, dict):
        raise ScenarioError(problems + [Problem(source, (), data, f"the file must be a mapping of chapter names "
                                                f"to parameters, got {type(data).__name__}",
                                                f"keys: {', '.join(known + META_KEYS)}", 1)])
    # unknown chapters first: the model needs only the known ones
    allowed_top = f"a chapter ({', '.join(known)}) or {', '.join(META_KEYS)}"
    for key in data:
        if key not in known and key not in META_KEYS:
            pending = isinstance(key, str) and re.fullmatch(r"\w+", key) is not None \
                and (io.repo_root() / "nbs" / f"{key}.ipynb").exists()
            msg = (f"chapter {key!r} is not in the book yet (intelligence_per_dollar.app.build.CHAPTERS)" if pending
                   else f"unknown chapter {key!r}")
            problems.append(Problem(source, (key,), None, msg, allowed_top, _line_for(lines, (key,))))
    try:
        params_by_ch = {ch: chapter_parameters(ch) for ch in known}
    except SchemaError:
        raise
    for ch in known:
        sect = data.get(ch)
        if sect is not None and not isinstance(sect, dict):
            problems.append(Problem(source, (ch,), sect, f"must be a mapping of parameter names to values, "
                                    f"got {type(sect).__name__} {_short(sect)}",
                                    "parameter names: " + ", ".join(params_by_ch[ch]), _line_for(lines, (ch,))))
    clean = {k: v for k, v in data.items()
             if (k in known and isinstance(v, dict)) or (k in META_KEYS)}
    M = model(known)
    bad_paths: set[tuple] = set()
    parsed = None
    try:
        parsed = M.model_validate(clean)
    except ValidationError as ex:
        for err in ex.errors(include_url=False):
            loc = tuple(err["loc"])
            bad_paths.add(loc[:2])
            problems.append(_problem(source, loc, err, params_by_ch, lines, allowed_top))
    except Exception as ex:  # noqa: BLE001 - e.g. a data file the constraints read is broken
        problems.append(Problem(source, (), None, f"cannot validate: {type(ex).__name__}: {ex}", "", None))
    # values that passed, so the cross-parameter rules can run on them
    overrides: dict[str, dict[str, Any]] = {}
    for ch in known:
        sect = clean.get(ch) or {}
        good = {}
        if parsed is not None:
            sub = getattr(parsed, _alias_field(ch))
            if sub is not None:
                good = {name: getattr(sub, _alias_field(name)) for name in sect if name in params_by_ch[ch]}
        else:
            good = {name: v for name, v in sect.items()
                    if name in params_by_ch[ch] and (ch, name) not in bad_paths}
        overrides[ch] = good
    defaults = {ch: {n: p.default for n, p in ps.items()} for ch, ps in params_by_ch.items()}
    for ch in known:
        rules = RULES.get(ch, ()) + _dependent_rules(ch)
        resolved = {**defaults[ch], **overrides[ch]}
        for rule in rules:
            involved = (rule.param,) + tuple(rule.uses)
            if any((ch, n) in bad_paths for n in involved):
                continue
            if not any(n in (clean.get(ch) or {}) for n in involved):
                continue  # all defaults: the chapter's own business
            try:
                msg = rule.check(resolved)
                allowed = rule.allowed(resolved) if msg else ""
            except Exception as ex:  # noqa: BLE001
                msg, allowed = f"check failed: {type(ex).__name__}: {ex}", ""
            if msg:
                problems.append(Problem(source, (ch, rule.param), resolved.get(rule.param), msg, allowed,
                                        _line_for(lines, (ch, rule.param))))
    if problems:
        raise ScenarioError(problems)
    desc = data.get("description")
    return Scenario(source, desc, {ch: v for ch, v in overrides.items() if v}, defaults)


def defaults() -> Scenario:
    """The scenario that sets nothing: every chapter at its notebook defaults."""
    return validate({}, source="<defaults>")


def _short(v: Any, n: int = 120) -> str:
    """``repr(v)``, cut to ``n`` characters for messages."""
    r = repr(v)
    return r if len(r) <= n else r[: n - 3] + "..."


def _problem(source, loc, err, params_by_ch, lines, allowed_top) -> Problem:
    """Turn one pydantic error into a :class:`Problem` (field aliases are the file's keys)."""
    typ, value = err["type"], err.get("input")
    line = _line_for(lines, loc)
    if typ == "extra_forbidden":
        if len(loc) == 1:
            return Problem(source, loc, None, f"unknown key {loc[0]!r}", allowed_top, line)
        ch = loc[0]
        return Problem(source, loc, None, f"unknown parameter {loc[-1]!r} of chapter {ch}",
                       ", ".join(params_by_ch.get(ch, {})), line)
    p = params_by_ch.get(loc[0], {}).get(loc[1]) if len(loc) >= 2 else None
    if typ == "value_error":
        msg = str(err.get("ctx", {}).get("error", err["msg"]))
        return Problem(source, loc, value, msg, p.allowed() if p else "", line)
    if loc == ("description",):
        return Problem(source, loc, value, f"{err['msg']} (got {_short(value)})", "a string", line)
    allowed = p.allowed() if p else ""
    return Problem(source, loc, value, f"{err['msg'].rstrip('.')} (got {_short(value)})", allowed, line)


# --------------------------------------------------------------------------- executing and caching


def cache_dir() -> Path:
    """Where executed chapters are kept for reuse (``IPD_CACHE`` overrides)."""
    env = os.environ.get("IPD_CACHE")
    return Path(env) if env else io.repo_root() / "build" / ".cache" / "chapters"


def _code_fingerprint() -> str:
    """Hash of the library's source and the data folder: a cached execution is reused only if
    neither changed (scenario files themselves are excluded)."""
    h = hashlib.sha256()
    lib = Path(__file__).resolve().parents[1]
    folders = [(lib, "**/*.py"), (io.data_dir(), "**/*")]
    for base, pattern in folders:
        for f in sorted(base.glob(pattern)):
            if f.is_file() and "scenarios" not in f.relative_to(base).parts:
                h.update(str(f.relative_to(base)).encode())
                h.update(f.read_bytes())
    return h.hexdigest()


def cache_key(scn: Scenario, chapter: str) -> str:
    """Identifies one execution: the chapter's source, its resolved parameters, lib and data."""
    h = hashlib.sha256()
    h.update(chapter.encode())
    h.update((io.repo_root() / "nbs" / f"{chapter}.ipynb").read_bytes())
    h.update(json.dumps(scn.resolved(chapter), sort_keys=True, default=repr).encode())
    h.update(_code_fingerprint().encode())
    return h.hexdigest()[:24]


def execute(scn: Scenario, chapter: str, *, cache: Path | str | None = None, reuse: bool = True) -> Path:
    """Execute ``chapter`` under ``scn`` (or reuse an identical earlier execution); return the
    executed notebook's path in the cache. Raises :class:`~intelligence_per_dollar.app.build.ChapterFailed`."""
    from intelligence_per_dollar.app import build

    cache = Path(cache) if cache is not None else cache_dir()
    dst = cache / f"{chapter}-{cache_key(scn, chapter)}.ipynb"
    if reuse and dst.exists():
        return dst
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".run-", dir=cache))
    try:
        out = build.execute_chapter(chapter, work, scn.parameters(chapter))
        os.replace(out, dst)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dst


def store(scn: Scenario, chapter: str, executed: Path, *, cache: Path | str | None = None) -> Path:
    """Put a notebook executed elsewhere (e.g. by ``build_report``) into the cache."""
    cache = Path(cache) if cache is not None else cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    dst = cache / f"{chapter}-{cache_key(scn, chapter)}.ipynb"
    fd, tmp = tempfile.mkstemp(prefix=".store-", dir=cache)
    os.close(fd)
    shutil.copyfile(executed, tmp)
    os.replace(tmp, dst)
    return dst


def records(scn: Scenario, chapter_list: Sequence[str] | None = None, *, cache: Path | str | None = None,
            reuse: bool = True, progress: Callable[[str], None] | None = None) -> dict[str, dict[str, Any]]:
    """``{chapter: {record name: values}}`` for ``scn``, executing (or reusing) each chapter."""
    from intelligence_per_dollar.views.notebook import read_records

    out = {}
    for ch in chapter_list if chapter_list is not None else chapters():
        out[ch] = read_records(execute(scn, ch, cache=cache, reuse=reuse))
        if progress is not None:
            progress(ch)
    return out


#: Recorded keys that measure the machine, not the model (timings); determinism checks skip them.
VOLATILE = re.compile(r"(_ms|_wall_s|_elapsed_s|_seconds_wall)$")


def stable(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``flat`` without :data:`VOLATILE` keys."""
    return {k: v for k, v in flat.items() if not VOLATILE.search(k)}


def flatten(recs: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested records -> ``{"record.key.sub": scalar}`` (lists of scalars kept as lists)."""
    out: dict[str, Any] = {}
    for k, v in recs.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, Mapping):
            out.update(flatten(v, key))
        elif isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            for i, x in enumerate(v):
                out.update(flatten(x, f"{key}[{i}]"))
        else:
            out[key] = v
    return out
