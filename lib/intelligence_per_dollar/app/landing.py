"""The book's landing page: the verdicts and the headline numbers, read from the executed
chapters' records (:func:`views.notebook.read_records`), so they equal the chapters' by
construction.

:func:`findings_markdown` returns the section that :mod:`.build` puts into ``index.md`` at the
``<!-- findings -->`` marker. Each headline number is an HTML span that carries the record it
came from (``data-chapter``, ``data-key``, ``data-value``) so that the browser tests can check it
against the chapter; each links to the section that computes it. The claims' definitions (which
read ``data/``) are imported only when there is a claims chapter to report.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Mapping

from intelligence_per_dollar.views import notebook, palette

MARKER = "<!-- findings -->"

#: Short names of the seed's claims (data/claims/claims.csv ids); others show the claim's text.
SHORT = {
    "train_quarter_gpus": "A quarter of the GPUs for a 10T-parameter MoE on 100T tokens in a month",
    "rubin_50_vs_20_pf": "Rubin 50 PF FP4 vs Blackwell 20 PF",
    "rubin_ultra_100_pf": "Rubin Ultra doubles Rubin to 100 PF",
    "rack_72_gpus_36_cpus": "72 GPUs and 36 CPUs per Vera Rubin NVL72 rack",
    "weight_sync_2s": "Trillion-parameter weight sync in under 2 s",
    "vera_cpu_30pct": "Vera CPU: 30% more sandbox throughput",
    "swe_bench_717": "71.7% on SWE-bench Verified",
    "swe_fix_value": "A working fix for seven in ten bugs is worth having",
    "inference_10x_cost": "Up to 10x lower cost per million tokens",
    "no_rack_price": "No rack price: is the GPU saving a procurement saving?",
}

#: The five headline numbers: (claim id in the ledger, what it is, unit shown after the number).
HEADLINES = (
    ("train_quarter_gpus", "GPUs GB200 NVL72 needs for every Vera Rubin NVL72 GPU (10T MoE, 100T tokens, 30 days)",
     "x"),
    ("rubin_50_vs_20_pf", "Rubin vs Blackwell FP4 compute per GPU, as NVIDIA counts it (headline)", "x"),
    ("weight_sync_2s", "Weight sync of a 1T-parameter model, 256 training to 128 inference GPUs", "s"),
    ("inference_10x_cost", "GB200 / Vera Rubin cost per million tokens, 1T MoE, at the best operating point", "x"),
    ("no_rack_price", "Vera Rubin NVL72 rack price at which it trains the 10T target at GB200's cost", "USD"),
)


def _span(chapter: str, key: str, value: float, text: str) -> str:
    return (f"<span class='ipd-finding' data-chapter='{chapter}' data-key='{html.escape(key)}' "
            f"data-value='{value!r}'>{html.escape(text)}</span>")


def headline_text(p5: float, p50: float, p95: float, unit: str, rule: str = "") -> str:
    """``"3 (2.8 to 3.2)x"`` or ``"$12.37M ($11.81M to $12.93M)"``: the ledger's number format
    (a ratio of vendor headlines, ``rule == "headline"``, to two decimals: ``"2.50x"``)."""
    from intelligence_per_dollar.analysis.claims import intervals

    if rule == "headline":
        return f"{p50:.2f}{unit}"
    money = "USD" if unit == "USD" else ""
    core = intervals.fmt(p50, money) if p5 == p50 == p95 else intervals.interval_text(p5, p50, p95, money)
    if unit in ("USD", ""):
        return core
    return f"{core} {unit}" if unit == "s" else f"{core}{unit}"


def _short_unit(unit: str) -> str:
    """The unit a ledger number is shown with: "USD", "s", "x" (a ratio) or nothing."""
    if "USD" in unit and not unit.startswith("x"):
        return "USD"
    head = unit.split(" ", 1)[0]
    return head if head in ("s", "x") else ""


def what_would_change(cid: str, claims: Mapping[str, dict], verdict: str, p5: float, p95: float) -> str:
    """One sentence: what would turn this verdict, from the claim's rule and the ledger's interval."""
    from intelligence_per_dollar.analysis import claims as cl
    from intelligence_per_dollar.analysis.claims import intervals, verdicts

    c = cl.claims()[cid]
    deciding = claims.get("deciding", {}).get(cid, "")
    unit = "USD" if "USD" in c.unit else ""
    if c.rule in ("at_least", "up_to", "at_most"):
        bar = verdicts.claim_bar(c.claimed_value, c.tolerance, c.rule)
        side = "at least" if c.rule != "at_most" else "at most"
        now = "holds" if verdict == "supported" else "would hold"
        return (f"It {now} while the estimate is {side} {intervals.fmt(bar, unit)}; the assumption that moves it "
                f"most: {deciding}.")
    if c.rule == "price_below":
        return (f"It fails if the rack costs more than the break-even price ({intervals.fmt(p5, 'USD')} at p5); "
                f"analysts put it near {intervals.fmt(c.claimed_value, 'USD')}. Deciding: {deciding}.")
    if c.rule == "headline":
        return f"Whether both headlines count the same thing: {deciding}."
    if c.rule == "equals":
        return "A different configuration on NVIDIA's product page."
    return f"A primary source, or a measurement of {deciding}."


def _verdict_cell(verdict: str) -> str:
    colour = palette.VERDICT_COLOURS.get(verdict, palette.REFERENCE)
    return (f"<span class='ipd-verdict' style='border-left: 0.5em solid {colour}; padding-left: 0.3em'>"
            f"{html.escape(verdict)}</span>")


def verdict_table(claims: Mapping[str, dict]) -> str:
    """Every claim: its verdict, the book's estimate, what would change the verdict, and where."""
    from intelligence_per_dollar.analysis import claims as cl

    rows = []
    defs = cl.claims()
    for cid in sorted(claims["verdicts"], key=lambda k: defs[k].row if k in defs else 1 << 30):
        c, verdict = defs[cid], claims["verdicts"][cid]
        p5, p50, p95 = (claims[k].get(cid, math.nan) for k in ("p5", "p50", "p95"))
        est = ("—" if math.isnan(p50) or c.rule == "unverifiable"
               else headline_text(p5, p50, p95, _short_unit(c.unit), c.rule))
        rows.append(
            f"<tr><td><a href='{c.link}'>{html.escape(SHORT.get(cid, c.claim))}</a></td>"
            f"<td>{_verdict_cell(verdict)}</td><td>{html.escape(est)}</td>"
            f"<td>{html.escape(what_would_change(cid, claims, verdict, p5, p95))}</td></tr>")
    return ("<table class='ipd-table ipd-verdicts'><thead><tr><th>claim</th><th>verdict</th>"
            "<th>book's estimate, p50 (p5 to p95)</th><th>what would change the verdict</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def headline_list(claims: Mapping[str, dict], records: Mapping[str, Mapping[str, dict]]) -> str:
    """The five headline numbers, each with its interval, verdict and a link to where it is computed."""
    from intelligence_per_dollar.analysis import claims as cl

    defs = cl.claims()
    items = []
    for cid, what, unit in HEADLINES:
        if cid not in claims["p50"]:
            continue
        c = defs[cid]
        p5, p50, p95 = (claims[k][cid] for k in ("p5", "p50", "p95"))
        text = headline_text(p5, p50, p95, unit, c.rule)
        claimed = headline_text(c.claimed_value, c.claimed_value, c.claimed_value, unit, c.rule)
        against = "analysts' price" if c.rule == "price_below" else "claimed"
        items.append(
            f"<li><b>{_span('00_claims', f'p50.{cid}', p50, text)}</b>: {html.escape(what)}. "
            f"{against.capitalize()}: {html.escape(claimed)}; verdict: {_verdict_cell(claims['verdicts'][cid])}. "
            f"<a href='{c.link}'>Where it is computed</a>.</li>")
    return "<ol class='ipd-headlines'>" + "".join(items) + "</ol>"


def gpu_hour_line(economics: Mapping[str, object], systems: tuple[str, ...] = ("GB200-NVL72", "Vera-Rubin-NVL72")
                  ) -> str:
    """What a GPU-hour costs the owner, on both bases the book uses (central and Monte Carlo median)."""
    from intelligence_per_dollar.analysis import claims as cl

    gph = economics.get("usd_per_gpu_hour", {})
    chapter = "04_intelligence_per_dollar"
    parts = []
    for s in (s for s in systems if s in gph):
        r = gph[s]
        central = _span(chapter, f"usd_per_gpu_hour.{s}.central", r["central"], f"${r['central']:.2f}")
        median = _span(chapter, f"usd_per_gpu_hour.{s}.p50", r["p50"], f"${r['p50']:.2f}")
        parts.append(f"{s} {central} at the central assumptions, median {median} "
                     f"(p5 to p95 ${r['p5']:.2f} to ${r['p95']:.2f})")
    if not parts:
        return ""
    link = cl.section_link(chapter, "4.1 What a GPU-hour costs")
    return (f"<p><b>What a GPU-hour costs its owner</b> (first principles, per utilised GPU-hour): "
            f"{'; '.join(parts)}. The central value sets every assumption at its central estimate; the median is "
            f"the middle of the Monte Carlo that samples each assumption over its low-to-high range; the two "
            f"differ because the cost is not linear in the assumptions (it goes as 1/utilisation). Market prices "
            f"(rental, "
            f"analysts' owner TCO) are other bases, shown beside them in <a href='{link}'>section 4.1</a>.</p>")


def findings_markdown(executed_dir: Path, *, pdf: str | None = None) -> str:
    """The landing page's findings (Markdown with raw HTML), or "" without the claims chapter."""
    path = Path(executed_dir) / "00_claims.ipynb"
    if not path.exists():
        return _pdf_line(pdf)
    records = {p.stem: notebook.read_records(p) for p in sorted(Path(executed_dir).glob("*.ipynb"))}
    claims = records["00_claims"].get("claims")
    if not claims:
        return _pdf_line(pdf)
    counts = ", ".join(f"{n} {v}" for v, n in claims["counts"].items() if n)
    economics = records.get("04_intelligence_per_dollar", {}).get("economics", {})
    return "\n".join([
        "## Findings", "",
        f"The book checks {sum(claims['counts'].values())} quantitative claims of the seed article: {counts}. "
        f"Intervals are Monte Carlo 5th to 95th percentiles over the ranged assumptions "
        f"({claims['mc_samples']:,} samples, seed {claims['seed']}).", "",
        "### Five headline numbers", "",
        "```{raw} html", headline_list(claims, records), gpu_hour_line(economics), "```", "",
        "### Every verdict, and what would change it", "",
        "```{raw} html", verdict_table(claims), "```", "",
        "The [claims ledger](nbs/00_claims.ipynb) shows how each estimate is computed.", "",
        _pdf_line(pdf),
    ])


def _pdf_line(pdf: str | None) -> str:
    if not pdf:
        return ""
    return ("```{raw} html\n<p class='ipd-pdf'>The whole book is also one <a href='" + html.escape(pdf)
            + "'>PDF file</a> (printed by Chromium, charts included).</p>\n```\n")


def write_index(index: Path, executed_dir: Path, *, pdf: str | None = None) -> None:
    """Put the findings into ``index`` at :data:`MARKER` (or at its end)."""
    text = index.read_text(encoding="utf-8")
    findings = findings_markdown(executed_dir, pdf=pdf)
    text = text.replace(MARKER, findings) if MARKER in text else text.rstrip("\n") + "\n\n" + findings
    index.write_text(text, encoding="utf-8")
