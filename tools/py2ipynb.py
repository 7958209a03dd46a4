"""Authoring aid: turn a jupytext percent-format script into an output-free chapter notebook.

    python tools/py2ipynb.py /path/to/01_hardware.py nbs/01_hardware.ipynb

The committed ``.ipynb`` is the source of truth; this only saves writing JSON by hand. The
first code cell must be tagged ``parameters`` (``# %% tags=["parameters"]``).
"""

import sys

import jupytext
import nbformat

src, dst = sys.argv[1], sys.argv[2]
nb = jupytext.read(src)
nb.metadata = {
    "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
    "language_info": {"name": "python"},
}
code = [c for c in nb.cells if c.cell_type == "code"]
if not code or "parameters" not in code[0].metadata.get("tags", []):
    sys.exit(f"{src}: the first code cell must be tagged 'parameters'")
for c in nb.cells:
    c.metadata = {k: v for k, v in c.metadata.items() if k == "tags"}
    if c.cell_type == "code":
        c.outputs, c.execution_count = [], None
nbformat.validate(nb)
nbformat.write(nb, dst)
print(f"wrote {dst}")
