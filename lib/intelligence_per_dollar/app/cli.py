"""``ipd``: rerun the book under a scenario, compare two scenarios, print the claims ledger.

Commands (``ipd COMMAND --help`` for each)::

    ipd report   [--scenario FILE] [--out DIR]     execute every chapter and build the book
    ipd compare  A.yml B.yml                       headline numbers of two scenarios side by side
    ipd claims   [--scenario FILE]                 the claims ledger as a table
    ipd validate [FILE ...]                        check scenario files and data/ without running anything
    ipd params   [CHAPTER ...]                     the parameters a scenario can set
    ipd sweep    SPEC [--scheduler ADDRESS]         run a sweep spec on Dask (app/sweep_cli.py)

Exit codes: 0 success; 2 bad input (invalid scenario, every problem listed; a file under data/ that does not
load, every such file listed before any chapter runs; bad arguments);
1 a chapter failed (the message names the chapter and the cell) or the book did not build;
130 interrupted (the previous report is left as it was).
"""

from __future__ import annotations

import argparse
import csv
import io as _stdio
import json
import logging
import math
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from intelligence_per_dollar.analysis import claims
from intelligence_per_dollar.app import build, datacheck, outputs
from intelligence_per_dollar.app import scenario as sc
from intelligence_per_dollar.app import sweep_cli
from intelligence_per_dollar.sources import io as ipd_io

EXIT_OK, EXIT_CHAPTER, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130

# --------------------------------------------------------------------------- helpers


def _err(msg: str) -> None:
    print(f"error: {msg}", file=sys.stderr)


def _load(paths: Sequence[str | None]):
    """Validate every scenario before anything runs; one ScenarioError with all their problems."""
    out, problems = [], []
    for p in paths:
        try:
            out.append(sc.defaults() if p is None else sc.load(p))
        except sc.ScenarioError as ex:
            problems.extend(ex.problems)
    if problems:
        raise sc.ScenarioError(problems)
    return out


def _bar(total: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="step", file=sys.stderr, disable=not enabled,
                bar_format="{desc:<34}{percentage:3.0f}%|{bar:20}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}]")


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
            return f"{v:.4g}"
        return f"{v:,.4g}" if abs(v) >= 1000 else f"{v:.4g}"
    if isinstance(v, (list, dict)):
        return json.dumps(v)
    return str(v)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _render(rows: list[dict[str, Any]], columns: Sequence[str], fmt: str, *, right: Sequence[str] = ()) -> str:
    """A plain table: ``text`` (aligned columns), ``markdown`` or ``csv``."""
    cells = [[r.get(c, "") if isinstance(r.get(c, ""), str) else _fmt(r.get(c)) for c in columns] for r in rows]
    if fmt == "csv":
        buf = _stdio.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        w.writerows(cells)
        return buf.getvalue().rstrip("\n")
    if fmt == "markdown":
        head = "| " + " | ".join(columns) + " |"
        sep = "|" + "|".join("---:" if c in right else "---" for c in columns) + "|"
        body = ["| " + " | ".join(x.replace("|", "\\|") for x in row) + " |" for row in cells]
        return "\n".join([head, sep] + body)
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]

    def line(vals):
        return "  ".join(v.rjust(w) if c in right else v.ljust(w) for v, w, c in zip(vals, widths, columns)).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _chapters(selected: Sequence[str] | None) -> tuple[str, ...]:

    known = sc.chapters()
    if not selected:
        return known
    bad = [c for c in selected if c not in known]
    if bad:
        raise _InputError(f"unknown chapter(s) {', '.join(bad)}; known: {', '.join(known)}")
    return tuple(c for c in known if c in selected)


class _InputError(Exception):
    """Bad command-line input (exit 2)."""


def _records(scn, chapters, args, bar) -> dict[str, dict]:
    """``{chapter: records}`` of ``scn``, executing (or reusing) each chapter; ``bar`` shows progress."""
    def progress(ch):
        bar.update(1)

    def start(ch):
        bar.set_description_str(f"{scn.name}: {ch}")

    out = {}
    for ch in chapters:
        start(ch)
        out.update(sc.records(scn, [ch], cache=args.cache, reuse=not args.no_cache, progress=progress))
    return out


# --------------------------------------------------------------------------- commands


def cmd_report(args) -> int:
    (scn,) = _load([args.scenario])
    chapters = sc.chapters()
    missing = [ch for ch in chapters if not (ipd_io.repo_root() / "nbs" / f"{ch}.ipynb").exists()]
    if missing:
        _err(f"chapter(s) {', '.join(missing)} listed in intelligence_per_dollar.app.build.CHAPTERS have no notebook "
             f"under {ipd_io.repo_root() / 'nbs'}")
        return EXIT_CHAPTER
    out = Path(args.out).resolve()
    executed = Path(args.executed).resolve() if args.executed else out.with_name(out.name + "-executed")
    bar = _bar(len(chapters) + 1, f"{scn.name}", not args.no_progress)

    def on_step(name: str, state: str) -> None:
        if state == "start":
            bar.set_description_str(f"{scn.name}: {'building the book' if name == '(book)' else name}")
        else:
            bar.update(1)

    log = (lambda s: None) if not args.verbose else (lambda s: bar.write(s, file=sys.stderr))
    try:
        build.build_report(out, chapters=chapters, parameters=scn.build_parameters(), executed_out=executed,
                           log=log, on_step=on_step)
    finally:
        bar.close()
    for ch in chapters:  # let `ipd compare` reuse these executions
        nb = executed / f"{ch}.ipynb"
        if nb.exists():
            try:
                sc.store(scn, ch, nb, cache=args.cache)
            except OSError:
                pass
    print(f"report: {out / 'index.html'}")
    print(f"executed notebooks: {executed}")
    return EXIT_OK


def compare_table(a_recs: Mapping[str, dict], b_recs: Mapping[str, dict]) -> list[dict[str, Any]]:
    """Rows ``{headline, a, b, b/a, changed}`` from two ``{chapter: {record: values}}`` mappings."""

    rows = []
    chapters = list(dict.fromkeys(list(a_recs) + list(b_recs)))
    for ch in chapters:
        fa, fb = sc.flatten(a_recs.get(ch, {})), sc.flatten(b_recs.get(ch, {}))
        for key in sorted(set(fa) | set(fb)):
            va, vb = fa.get(key), fb.get(key)
            ratio = vb / va if _is_num(va) and _is_num(vb) and va != 0 else None
            changed = va != vb and not (_is_num(va) and _is_num(vb) and math.isclose(va, vb, rel_tol=1e-12))
            rows.append({"chapter": ch, "headline": key, "a": va, "b": vb, "ratio": ratio, "changed": changed})
    return rows


def cmd_compare(args) -> int:
    a, b = _load([args.a, args.b])
    chapters = _chapters(args.chapter)
    bar = _bar(2 * len(chapters), "compare", not args.no_progress)
    try:
        ra = _records(a, chapters, args, bar)
        rb = _records(b, chapters, args, bar)
    finally:
        bar.close()
    rows = compare_table(ra, rb)
    na, nb = a.name, b.name
    if na == nb:
        na, nb = f"A ({a.source})", f"B ({b.source})"
    shown = [r for r in rows if r["changed"]] if args.changed else rows
    table = [{"chapter": r["chapter"], "headline": r["headline"], na: r["a"], nb: r["b"],
              f"{nb}/{na}": r["ratio"], "moved": "*" if r["changed"] else ""} for r in shown]
    print(_render(table, ["chapter", "headline", na, nb, f"{nb}/{na}", "moved"], args.format,
                  right=(na, nb, f"{nb}/{na}")))
    if args.format == "text":
        n = sum(r["changed"] for r in rows)
        print(f"\n{n} of {len(rows)} headline values move between {na} and {nb} (* marks them).")
    return EXIT_OK


#: Keyword arguments of ``claims.ledger`` taken from a chapter parameter the scenario sets.
#: The ledger chapter (00_claims) comes first: its value wins when several chapters set one.
LEDGER_ARGS = {"n": (("00_claims", "mc_samples"), ("04_intelligence_per_dollar", "mc_samples")),
               "seed": (("00_claims", "seed"), ("04_intelligence_per_dollar", "seed")),
               "training_precision": (("00_claims", "training_precision"), ("02_training", "precision")),
               "training_range": (("00_claims", "training_range"),)}

#: Ledger columns shown in the terminal (``--columns all`` shows every one).
LEDGER_COLUMNS = ("id", "claimed", "unit", "estimate", "verdict", "condition", "deciding_assumption")


def ledger_arguments(scn) -> tuple[dict[str, Any], list[str]]:
    """Keyword arguments for :func:`claims.ledger` from the values a scenario *sets* (nothing set:
    the ledger's own defaults), and a description of each one applied.

    A parameter whose name is one of the ledger's ranged assumptions (``claims.all_assumptions()``,
    e.g. ``pue``, ``wacc``) fixes that assumption; ``rack_prices_usd`` fixes rack prices;
    :data:`LEDGER_ARGS` maps chapter parameters to the ledger's other arguments. Chapters are read
    in book order, so 00_claims wins when several chapters set one value.
    """
    names = set(claims.all_assumptions())
    kwargs: dict[str, Any] = {}
    applied: list[str] = []
    named, racks = {}, None
    for ch, vals in scn.overrides.items():
        for k, v in vals.items():
            if k in names and v is not None and k not in named:
                named[k] = v
                applied.append(f"{ch}.{k}={v!r}")
            elif k == "rack_prices_usd" and v and racks is None:
                racks = v
                applied.append(f"{ch}.{k}={v!r}")
    if named or racks:
        kwargs["assumption_overrides"] = claims.overrides(racks, **named)
    for kw, sources in LEDGER_ARGS.items():
        for ch, name in sources:
            if name in scn.overrides.get(ch, {}):
                kwargs[kw] = scn.overrides[ch][name]
                applied.append(f"{ch}.{name}={kwargs[kw]!r}")
                break
    return kwargs, applied


def _ledger(scn) -> tuple[pd.DataFrame, str]:
    """``(ledger, note)``: the claims ledger under ``scn`` and which of its values it applied."""
    kwargs, applied = ledger_arguments(scn)
    note = f"ledger under {scn.name}: " + (", ".join(applied) if applied else "the ledger's own assumptions")
    return pd.DataFrame(claims.ledger(**kwargs)), note


def _cut(v: Any, n: int = 60) -> Any:
    return v if not isinstance(v, str) or len(v) <= n else v[: n - 1] + "…"


def _ledger_columns(df: pd.DataFrame, args) -> list[str]:
    """The ledger columns to print: every one for ``--columns all`` and the file formats, the
    ``--columns`` list, or :data:`LEDGER_COLUMNS`."""
    if args.columns == "all" or args.format != "text":
        return [str(c) for c in df.columns]
    if args.columns:
        cols = [c.strip() for c in args.columns.split(",")]
        bad = [c for c in cols if c not in df.columns]
        if bad:
            raise _InputError(f"unknown column(s) {', '.join(bad)}; columns: {', '.join(map(str, df.columns))}")
        return cols
    return [c for c in LEDGER_COLUMNS if c in df.columns] or [str(c) for c in df.columns]


def cmd_claims(args) -> int:
    (scn,) = _load([args.scenario])
    df, note = _ledger(scn)
    cols = _ledger_columns(df, args)
    rows = df.to_dict("records")
    if args.format == "text":
        rows = [{k: _cut(v) for k, v in r.items()} for r in rows]
    print(_render(rows, cols, args.format))
    print(f"\n{note}", file=sys.stderr)
    return EXIT_OK


def cmd_validate(args) -> int:
    scns = _load(args.files) if args.files else []
    for s in scns:
        set_ = sum(len(v) for v in s.overrides.values())
        print(f"{s.source}: valid ({set_} parameter{'s' if set_ != 1 else ''} set, the rest at defaults)")
    n_checks = datacheck.check()
    print(f"{ipd_io.data_dir()}: every file loads ({n_checks} checks)")
    return EXIT_OK


def cmd_params(args) -> int:

    rows = []
    for ch in _chapters(args.chapter):
        for p in sc.chapter_parameters(ch).values():
            default = json.dumps(p.default) if p.literal else "(computed in the notebook)"
            rows.append({"chapter": ch, "parameter": p.name, "default": default, "allowed": p.allowed(),
                         "note": p.comment})
    if args.format == "text":
        for r in rows:
            r["allowed"] = r["allowed"] if len(r["allowed"]) <= 70 else r["allowed"][:67] + "..."
            r["default"] = r["default"] if len(r["default"]) <= 40 else r["default"][:37] + "..."
    print(_render(rows, ["chapter", "parameter", "default", "allowed", "note"], args.format))
    return EXIT_OK


# --------------------------------------------------------------------------- parser


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ipd", description="Rerun the Intelligence per Dollar book under your own assumptions.",
        epilog="Exit codes: 0 success; 2 invalid scenario or arguments (every problem listed); "
               "1 a chapter failed (chapter and cell named) or the book did not build; 130 interrupted.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def common(sp, *, cache=True):
        if cache:
            sp.add_argument("--cache", metavar="DIR", default=None,
                            help="where executed chapters are kept for reuse (default: build/.cache/chapters, "
                                 "or $IPD_CACHE)")
            sp.add_argument("--no-cache", action="store_true",
                            help="execute every chapter again even if an identical execution is cached")
        sp.add_argument("--no-progress", action="store_true", help="no progress bar")

    r = sub.add_parser("report", help="execute every chapter under a scenario and build the book",
                       description="Execute every chapter with papermill under a scenario (defaults where it is "
                                   "silent) and build the HTML book into DIR. The build is atomic: DIR is "
                                   "replaced only when every chapter ran and the book built.")
    r.add_argument("--scenario", metavar="FILE", help="scenario YAML file (default: every chapter's defaults)")
    r.add_argument("--out", metavar="DIR", default="build/html", help="output folder (default: build/html)")
    r.add_argument("--executed", metavar="DIR", default=None,
                   help="where the executed notebooks go (default: DIR-executed next to --out)")
    r.add_argument("-v", "--verbose", action="store_true", help="print a line per chapter with its time")
    common(r)
    r.set_defaults(func=cmd_report)

    c = sub.add_parser("compare", help="headline numbers of two scenarios side by side",
                       description="Execute the chapters under two scenarios (reusing identical earlier "
                                   "executions) and print their recorded headline numbers side by side, "
                                   "with the ratio B/A and a mark on every value that moves.")
    c.add_argument("a", metavar="A.yml", help="first scenario")
    c.add_argument("b", metavar="B.yml", help="second scenario")
    c.add_argument("--chapter", action="append", metavar="CH", help="only this chapter (repeatable)")
    c.add_argument("--changed", action="store_true", help="show only the values that move")
    c.add_argument("--format", choices=("text", "markdown", "csv"), default="text", help="table format")
    common(c)
    c.set_defaults(func=cmd_compare)

    k = sub.add_parser("claims", help="print the claims ledger as a table",
                       description="Print the claims ledger (intelligence_per_dollar.analysis.claims.ledger) under a "
                                   "scenario: values the scenario sets for the ledger's assumptions (pue, wacc, "
                                   "utilisation, rack_prices_usd, mc_samples, seed, ...) replace the ledger's "
                                   "ranges. Runs no chapter.")
    k.add_argument("--scenario", metavar="FILE", help="scenario YAML file (default: every chapter's defaults)")
    k.add_argument("--format", choices=("text", "markdown", "csv"), default="text",
                   help="table format (markdown and csv carry every column)")
    k.add_argument("--columns", metavar="A,B,...", default=None,
                   help="ledger columns to show in the terminal, or 'all' (default: " + ", ".join(LEDGER_COLUMNS) + ")")
    k.set_defaults(func=cmd_claims)

    v = sub.add_parser("validate", help="check scenario files and data/ without running anything",
                       description="Validate scenario files, then read every file under data/ through its "
                                   "loader; every problem of every file is listed.")
    v.add_argument("files", nargs="*", metavar="FILE", help="scenario YAML files (none: check data/ only)")
    v.set_defaults(func=cmd_validate)

    q = sub.add_parser("params", help="list the parameters a scenario can set",
                       description="List each chapter's parameters (read from its parameters cell) with "
                                   "default and allowed values.")
    q.add_argument("chapter", nargs="*", metavar="CHAPTER", help="only these chapters")
    q.add_argument("--format", choices=("text", "markdown", "csv"), default="text", help="table format")
    q.set_defaults(func=cmd_params)
    sweep_cli.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)  # exits 2 on bad arguments, 0 on --help
    if not getattr(args, "verbose", False):
        # papermill warns about parameters it cannot match in a cell it parses by regex (e.g. a
        # comment containing "="); the scenario was already validated against the real cell
        logging.getLogger("papermill").setLevel(logging.ERROR)
    if getattr(args, "command", None) in ("params",):
        args.chapter = args.chapter or None
    try:
        return args.func(args)
    except sc.ScenarioError as ex:
        _err(str(ex))
        return EXIT_INPUT
    except _InputError as ex:
        _err(str(ex))
        return EXIT_INPUT
    except outputs.OutputError as ex:  # found before any chapter runs
        flag = {"out": "--out", "executed_out": "--executed"}.get(ex.param, ex.param)
        _err(f"{flag} {ex.path}: {ex.reason}; allowed: a folder (new, or an existing one to replace) "
             f"in a writable folder")
        return EXIT_INPUT
    except datacheck.DataCheckFailed as ex:  # found before any chapter runs
        _err(str(ex))
        if getattr(args, "command", None) == "report":
            print("no chapter was run; the previous report, if any, is unchanged.", file=sys.stderr)
        return EXIT_INPUT
    except ipd_io.DataError as ex:
        _err(f"data file problem: {ex}")
        return EXIT_INPUT
    except build.ChapterFailed as ex:
        _err(str(ex))
        if getattr(args, "command", None) == "report":
            print("the previous report, if any, is unchanged.", file=sys.stderr)
        return EXIT_CHAPTER
    except build.BookFailed as ex:
        _err(str(ex))
        return EXIT_CHAPTER
    except KeyboardInterrupt:
        _err("interrupted; the previous report, if any, is unchanged.")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
