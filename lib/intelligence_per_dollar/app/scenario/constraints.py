"""What a scenario value may be: constraint types, the per-parameter :data:`CONSTRAINTS` a
chapter's own literal checks cannot express, and the cross-parameter :data:`RULES`.

Each constraint checks with the same :mod:`intelligence_per_dollar.app.params` function the
chapter calls, so the scenario check and the chapter's own check cannot disagree. Allowed values
that live in data/ (the hardware catalogue, the measured runs) are callables, read when validating.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Sequence

from intelligence_per_dollar.app import params


# --------------------------------------------------------------------------- constraints


def allowed_values(v: Sequence | Callable[[], Sequence]) -> list:
    """The values of a constraint: ``v`` itself, or what ``v()`` returns (read when validating)."""
    return list(v() if callable(v) else v)


@dataclasses.dataclass(frozen=True)
class Choice:
    """One of ``values`` (a sequence, or a callable returning one, read when validating)."""

    values: Sequence | Callable[[], Sequence]

    def check(self, name: str, value):
        return params.choice(name, value, allowed_values(self.values))

    def allowed(self) -> str:
        return "one of " + ", ".join(map(str, allowed_values(self.values)))


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
        return params.names(name, value, allowed_values(self.known), min_len=self.min_len)

    def allowed(self) -> str:
        return f"a list of at least {self.min_len} of: " + ", ".join(map(str, allowed_values(self.known)))


@dataclasses.dataclass(frozen=True)
class MappingOf:
    """A mapping whose keys are in ``keys`` (sequence or callable) and whose values meet ``value``."""

    keys: Sequence | Callable[[], Sequence]
    value: Number

    def check(self, name: str, value):
        if not isinstance(value, Mapping):
            raise ValueError(f"parameter {name}={value!r} must be a mapping; allowed: {self.allowed()}")
        for k, v in value.items():
            params.choice(f"{name} key", k, allowed_values(self.keys))
            self.value.check(f"{name}[{k!r}]", v)
        return value

    def allowed(self) -> str:
        return f"a mapping from {', '.join(map(str, allowed_values(self.keys)))} to {self.value.allowed()}"


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
    from intelligence_per_dollar.sources import workloads

    return list(workloads.RL_ALGORITHMS)


def _post_training_policies() -> list[str]:
    from intelligence_per_dollar.sources import models

    return list(models.names())


#: Per-parameter constraints that the chapter's own literal ``params`` checks cannot express,
#: keyed ``"chapter.param"``. Keys of chapters that exist must name a parameter of that chapter
#: (tests/unit/test_scenario.py checks).
CONSTRAINTS: dict[str, Choice | Number | Names | MappingOf] = {
    "01_hardware.precision": Choice(("fp4", "fp8", "bf16")),
    "01_hardware.baseline": Choice(_accelerators),
    "01_hardware.accelerators": Names(_accelerators),
    "01_hardware.systems": Names(_systems),
    "01_hardware.measured_run": Choice(_measured_runs),
    "00_claims.rack_prices_usd": MappingOf(_systems, Number(0)),
    # the rest of chapter 2's checks are literal and derived from the notebook
    "02_training.accelerators": Names(_accelerators),
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
    "01_hardware": (_member_of("baseline", "accelerators"),),
    "03_post_training": (_keys_among("usd_overrides", "accelerators"),),
}
