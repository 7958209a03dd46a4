"""The pins in pyproject.toml and environment.yml agree, and every direct dependency is pinned."""

import re
import tomllib

import yaml

from conftest import ROOT


def _pyproject_pins():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    deps = list(data["project"]["dependencies"])
    for extra in data["project"].get("optional-dependencies", {}).values():
        deps += extra
    return deps


def _conda_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = [d for d in env["dependencies"] if isinstance(d, dict) and "pip" in d][0]["pip"]
    return [p for p in pip if not p.startswith("-e")]


def _norm(spec):
    name, _, version = spec.partition("==")
    return re.sub(r"[-_.]+", "-", name.strip().lower()), version.strip()


def test_every_direct_dependency_is_pinned_exactly():
    for spec in _pyproject_pins():
        name, version = _norm(spec)
        assert version, f"pyproject.toml: {spec!r} is not pinned with =="
        assert re.fullmatch(r"[0-9][0-9A-Za-z.]*", version), spec


def test_environment_yml_matches_pyproject():
    py = dict(_norm(s) for s in _pyproject_pins())
    conda = dict(_norm(s) for s in _conda_pins())
    assert py == conda


def test_required_packages_present():
    names = {_norm(s)[0] for s in _pyproject_pins()}
    for need in ("jupyterlab", "pandas", "altair", "ipywidgets", "papermill", "ipykernel", "jupyter-book",
                 "vl-convert-python"):
        assert need in names, need
    jb = dict(_norm(s) for s in _pyproject_pins())["jupyter-book"]
    assert jb.startswith("1."), "Jupyter Book 2.x fetches its theme at build time; the book needs 1.x"


def test_conda_python_matches_requires_python():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    py = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python=")][0]
    req = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    major_minor = tuple(int(x) for x in py.split("=")[1].split(".")[:2])
    assert major_minor >= tuple(int(x) for x in req.lstrip(">=").split(".")[:2])
