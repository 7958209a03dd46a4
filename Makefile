# The two README commands: `make report` builds the whole book, `make test` runs every test
# (`make test-fast`: the quick subset, no chapter execution, no book build, no browser).
# Each target bootstraps its own virtual environment (.venv) with the pinned dependencies.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: report test test-fast explore bench lab clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

## Execute every chapter with papermill (default parameters) and build the HTML book in build/html
report: $(STAMP)
	$(PY) -m intelligence_per_dollar.app.build build/html

## Run all the tests (unit, property, validation, notebooks, book build, browser); what CI runs.
## The book is built once per session and every chapter is executed once (10-15 minutes on 2 cores).
test: $(STAMP)
	$(PY) -m pytest --durations=20

## The fast subset (about 5 minutes): unit and property tests, no chapter execution, no browser
test-fast: $(STAMP)
	$(PY) -m pytest -m "not slow and not browser"

## Serve the Voila dashboard (nbs/explore.ipynb) offline on http://127.0.0.1:8866/
explore: $(STAMP)
	$(PY) -m intelligence_per_dollar.app.dashboard --port $(or $(PORT),8866)

## Open JupyterLab on the chapters
lab: $(STAMP)
	$(VENV)/bin/jupyter lab nbs/

## Print benchmark figures (report build time, search speed, ...)
bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf build .pytest_cache .hypothesis
