"""Reading and validating a scenario file: every problem (unknown chapter or key, wrong type,
value out of range, parameters that do not fit together) is collected into one
:class:`ScenarioError` that names the file, line, key path, value and what is allowed.

YAML is read by :mod:`~intelligence_per_dollar.app.scenario.reading` (safe, bounded, no aliases);
values stay plain data (papermill writes them into the notebook as Python literals), and a string
is never turned into a number. Types and per-parameter constraints are checked by a pydantic
model built from the chapters' parameters (:func:`model`); cross-parameter rules afterwards.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from intelligence_per_dollar.app.scenario import reading
from intelligence_per_dollar.app.scenario.constraints import RULES
from intelligence_per_dollar.app.scenario.schema import Param, chapter_parameters, chapters, dependent_rules
from intelligence_per_dollar.sources import io

#: Top-level keys of a scenario file that are not chapters.
META_KEYS = ("description",)


#: Longest message (and "allowed" text) of one problem as printed.
MAX_MESSAGE_CHARS = 400
#: Most problems a :class:`ScenarioError` prints (all stay in ``problems``).
MAX_PROBLEMS_SHOWN = 50


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


@dataclasses.dataclass(frozen=True)
class Problem:
    """One thing wrong with a scenario file."""

    file: str
    path: tuple  # key path, e.g. ("01_hardware", "accelerators", 1)
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
        msg = _cut(self.message, MAX_MESSAGE_CHARS)
        if "allowed" not in msg and "known:" not in msg and self.allowed:
            msg += f"; allowed: {_cut(self.allowed, MAX_MESSAGE_CHARS)}"
        return f"{where}: {_cut(self.key, 120)}: {msg}"


class ScenarioError(ValueError):
    """A scenario file is invalid; ``problems`` lists every problem found."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        n = len(self.problems)
        head = f"invalid scenario: {n} problem{'s' if n != 1 else ''}"
        shown = [f"  {p}" for p in self.problems[:MAX_PROBLEMS_SHOWN]]
        if n > MAX_PROBLEMS_SHOWN:
            shown.append(f"  ... and {n - MAX_PROBLEMS_SHOWN} more")
        super().__init__(head + "\n" + "\n".join(shown))


def _to_int(v):
    """For integer parameters: a whole float written as a number (``1e9``) is that integer."""
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
    strict_float = strict[float]  # an int is a float; a string never is
    if tp is int:
        base = Annotated[strict[int], BeforeValidator(_to_int)]
    elif tp is float:
        base = strict_float
    elif tp in strict:
        base = strict[tp]
    elif typing.get_origin(tp) is list:
        (inner,) = typing.get_args(tp) or (typing.Any,)
        inner_t = strict.get(inner, inner)
        if inner in (int, float):
            inner_t = Annotated[inner_t, BeforeValidator(_to_int)] if inner is int else strict_float
        base = list[inner_t]
    elif typing.get_origin(tp) is dict:
        _, inner = typing.get_args(tp) or (str, typing.Any)
        inner_t = strict.get(inner, inner)
        if inner in (int, float):
            inner_t = Annotated[inner_t, BeforeValidator(_to_int)] if inner is int else strict_float
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


def _line_for(lines: Mapping[tuple, int], path: tuple) -> int | None:
    p = tuple(str(x) if not isinstance(x, int) else x for x in path)
    while p:
        if p in lines:
            return lines[p]
        p = p[:-1]
    return None


def load(path: str | os.PathLike) -> Scenario:
    """Read and validate a scenario file; raise :class:`ScenarioError` listing every problem.

    Reading is bounded (:mod:`~intelligence_per_dollar.app.scenario.reading`): size, values,
    nesting; aliases are refused; quoted values stay strings."""
    file = str(path)
    try:
        data, node = reading.parse(reading.read_text(Path(path)))
    except reading.ReadError as ex:
        raise ScenarioError([Problem(file, (), None, ex.message, ex.allowed, ex.line)]) from None
    return validate(data, source=file, _node=node)


def validate(data: Any, *, source: str = "<scenario>", chapter_list: Sequence[str] | None = None,
             _node=None) -> Scenario:
    """Validate already-parsed scenario data (a mapping; ``None`` means all defaults).

    ``chapter_list``: the chapters a scenario may set (default :func:`chapters`, the book's).
    Every problem is collected into one :class:`ScenarioError`. Values are taken as they are:
    a string is not a number (``"2026"`` for an integer parameter is a problem, not 2026).
    """
    lines, twice = reading.index(_node)
    problems = [Problem(source, path, None, f"key given twice (lines {first} and {line})", "each key once", line)
                for path, first, line in twice]
    data = {} if data is None else data
    known = tuple(chapter_list) if chapter_list is not None else chapters()
    if not isinstance(data, dict):
        raise ScenarioError(problems + [Problem(source, (), data, f"the file must be a mapping of chapter names "
                                                f"to parameters, got {type(data).__name__}",
                                                f"keys: {', '.join(known + META_KEYS)}", 1)])
    allowed_top = f"a chapter ({', '.join(known)}) or {', '.join(META_KEYS)}"
    params_by_ch = {ch: chapter_parameters(ch) for ch in known}
    problems += _unknown_chapters(data, known, source, lines, allowed_top)
    problems += _malformed_sections(data, params_by_ch, source, lines)
    clean = {k: v for k, v in data.items() if (k in known and isinstance(v, dict)) or k in META_KEYS}
    overrides, bad_paths, field_problems = _checked_values(clean, params_by_ch, source, lines, allowed_top)
    problems += field_problems
    defaults = {ch: {n: p.default for n, p in ps.items()} for ch, ps in params_by_ch.items()}
    for ch in known:
        problems += _rule_problems(ch, defaults[ch], overrides[ch], clean.get(ch) or {}, bad_paths, source, lines)
    if problems:
        raise ScenarioError(problems)
    return Scenario(source, data.get("description"), {ch: v for ch, v in overrides.items() if v}, defaults)


def _unknown_chapters(data: Mapping, known: tuple[str, ...], source: str, lines, allowed_top: str) -> list[Problem]:
    """Top-level keys that are neither a chapter of the book nor a :data:`META_KEYS` key."""
    out = []
    for key in data:
        if key in known or key in META_KEYS:
            continue
        pending = isinstance(key, str) and re.fullmatch(r"\w+", key) is not None \
            and (io.repo_root() / "nbs" / f"{key}.ipynb").exists()
        msg = (f"chapter {key!r} is not in the book yet (intelligence_per_dollar.app.build.CHAPTERS)" if pending
               else f"unknown chapter {key!r}")
        out.append(Problem(source, (key,), None, msg, allowed_top, _line_for(lines, (key,))))
    return out


def _malformed_sections(data: Mapping, params_by_ch: Mapping[str, Mapping[str, Param]], source: str,
                        lines) -> list[Problem]:
    """Chapter sections that are not a mapping of parameter names to values."""
    out = []
    for ch, names in params_by_ch.items():
        sect = data.get(ch)
        if sect is not None and not isinstance(sect, dict):
            out.append(Problem(source, (ch,), sect, f"must be a mapping of parameter names to values, "
                               f"got {type(sect).__name__} {_short(sect)}",
                               "parameter names: " + ", ".join(names), _line_for(lines, (ch,))))
    return out


def _checked_values(clean: Mapping, params_by_ch: Mapping[str, Mapping[str, Param]], source: str, lines,
                    allowed_top: str) -> tuple[dict[str, dict[str, Any]], set[tuple], list[Problem]]:
    """Validate every value against the pydantic model: ``(values that passed, by chapter; key
    paths that failed; their problems)``. The values that passed feed the cross-parameter rules."""
    from pydantic import ValidationError

    problems: list[Problem] = []
    bad_paths: set[tuple] = set()
    parsed = None
    try:
        parsed = model(tuple(params_by_ch)).model_validate(clean)
    except ValidationError as ex:
        for err in ex.errors(include_url=False):
            loc = tuple(err["loc"])
            bad_paths.add(loc[:2])
            problems.append(_problem(source, loc, err, params_by_ch, lines, allowed_top))
    except Exception as ex:  # noqa: BLE001 - e.g. a data file the constraints read is broken
        problems.append(Problem(source, (), None, f"cannot validate: {type(ex).__name__}: {ex}", "", None))
    overrides: dict[str, dict[str, Any]] = {}
    for ch, names in params_by_ch.items():
        sect = clean.get(ch) or {}
        sub = getattr(parsed, _alias_field(ch)) if parsed is not None else None
        if sub is not None:
            overrides[ch] = {name: getattr(sub, _alias_field(name)) for name in sect if name in names}
        elif parsed is not None:
            overrides[ch] = {}
        else:
            overrides[ch] = {name: v for name, v in sect.items() if name in names and (ch, name) not in bad_paths}
    return overrides, bad_paths, problems


def _rule_problems(ch: str, defaults: Mapping[str, Any], overrides: Mapping[str, Any], given: Mapping[str, Any],
                   bad_paths: set[tuple], source: str, lines) -> list[Problem]:
    """Cross-parameter rules of chapter ``ch`` (declared :data:`RULES` and those derived from the
    chapter's own checks) on its resolved values. A rule runs only when the scenario sets one of
    the parameters it involves and each of them passed its own check."""
    resolved = {**defaults, **overrides}
    out = []
    for rule in RULES.get(ch, ()) + dependent_rules(ch):
        involved = (rule.param,) + tuple(rule.uses)
        if any((ch, n) in bad_paths for n in involved) or not any(n in given for n in involved):
            continue  # already reported, or all defaults: the chapter's own business
        try:
            msg = rule.check(resolved)
            allowed = rule.allowed(resolved) if msg else ""
        except Exception as ex:  # noqa: BLE001
            msg, allowed = f"check failed: {type(ex).__name__}: {ex}", ""
        if msg:
            out.append(Problem(source, (ch, rule.param), resolved.get(rule.param), msg, allowed,
                               _line_for(lines, (ch, rule.param))))
    return out


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
