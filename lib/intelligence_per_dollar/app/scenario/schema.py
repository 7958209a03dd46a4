"""The parameters of each chapter, read from its notebook's ``parameters`` cell.

The cell is parsed, never executed: every right-hand side goes through :func:`ast.literal_eval`
to get each parameter's name, default and type. Checks a chapter makes on its own parameters with
:mod:`intelligence_per_dollar.app.params` whose arguments are literals or other parameters (e.g.
``params.choice("precision", precision, ("fp4", "fp8", "bf16"))``) are read from the notebook's
source and become the parameter's constraint (or, when they name other parameters, a
cross-parameter rule); :data:`~intelligence_per_dollar.app.scenario.constraints.CONSTRAINTS`
declares the rest and wins over a derived check.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import io as _stdio
import tokenize
from pathlib import Path
from typing import Any, Iterable

from intelligence_per_dollar.app import params
from intelligence_per_dollar.app.scenario.constraints import (
    CONSTRAINTS, Choice, MappingOf, Names, Number, Probability, Rule, allowed_values)
from intelligence_per_dollar.sources import io

_PARAM_FUNCS = ("choice", "number", "probability", "names")


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
    constraint: Choice | Number | Names | MappingOf | None = None

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


def dependent_rules(chapter: str, *, root: Path | None = None) -> tuple[Rule, ...]:
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
        return allowed_values(values)
    except Exception:  # noqa: BLE001 - e.g. a data file problem; reported when validating
        return []


def chapters() -> tuple[str, ...]:
    """The chapters a scenario may set: :data:`intelligence_per_dollar.app.build.CHAPTERS`."""
    from intelligence_per_dollar.app import build

    return tuple(build.CHAPTERS)
