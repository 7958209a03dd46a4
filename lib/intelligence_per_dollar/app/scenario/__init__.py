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
  parameters of one chapter) in :mod:`~intelligence_per_dollar.app.scenario.constraints` declare
  what a literal cannot express, such as "a name in the hardware catalogue".

A chapter added to :data:`intelligence_per_dollar.app.build.CHAPTERS` is picked up with no change
here; its parameters are type-checked at once and range-checked as far as its own literal
``params`` checks go, and :data:`CONSTRAINTS` can add the rest.

A scenario file looks like::

    description: Conservative assumptions.
    01_hardware:
      precision: fp8
      accelerators: [H100-SXM, GB200, VR200]

Anything omitted takes the notebook's default. Every problem (unknown chapter or key, wrong type,
value out of range) is collected into one :class:`ScenarioError` that names the file, line, key
path, value and what is allowed. YAML is read with PyYAML's safe constructors, bounded in size,
values and depth, with aliases refused; values stay plain data (papermill writes them into the
notebook as Python literals), and a quoted value is a string, never a number.

The modules, in the order data flows through them:

* :mod:`~intelligence_per_dollar.app.scenario.constraints` - what a value may be;
* :mod:`~intelligence_per_dollar.app.scenario.schema` - each chapter's parameters, from its notebook;
* :mod:`~intelligence_per_dollar.app.scenario.reading` - reading a file safely (bounded, no aliases);
* :mod:`~intelligence_per_dollar.app.scenario.validation` - validating what was read;
* :mod:`~intelligence_per_dollar.app.scenario.cache` - executing chapters under a scenario, reused.

This package re-exports what the CLI and the tests use.
"""

from intelligence_per_dollar.app.scenario.cache import (
    VOLATILE, cache_dir, cache_key, execute, flatten, records, stable, store)
from intelligence_per_dollar.app.scenario.constraints import (
    CONSTRAINTS, RULES, Choice, MappingOf, Names, Number, Probability, Rule, allowed_values)
from intelligence_per_dollar.app.scenario.schema import Param, SchemaError, chapter_parameters, chapters
from intelligence_per_dollar.app.scenario.validation import (
    META_KEYS, Problem, Scenario, ScenarioError, defaults, load, model, validate)

__all__ = [
    "CONSTRAINTS", "META_KEYS", "RULES", "VOLATILE", "Choice", "MappingOf", "Names", "Number", "Param",
    "Probability", "Problem", "Rule", "Scenario", "ScenarioError", "SchemaError", "allowed_values",
    "cache_dir", "cache_key", "chapter_parameters", "chapters", "defaults", "execute", "flatten", "load",
    "model", "records", "stable", "store", "validate",
]
