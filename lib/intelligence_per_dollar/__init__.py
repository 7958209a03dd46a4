"""Intelligence per dollar: an open, first-principles model of AI-infrastructure economics.

Data flows one way through five layers, each importing only the layers before it:

- ``sources``  reads data/ into typed, validated records (the only file I/O of the model);
- ``model``    pure functions: architecture, efficiency, collectives, training, inference,
               post-training, economics, uncertainty;
- ``analysis`` tables the book shows: validation against measured runs, the claims ledger;
- ``views``    charts, widgets panels and notebook formatting;
- ``app``      the report build, scenarios, the ``ipd`` CLI and the Voila dashboard.

Import what you use explicitly, e.g. ``from intelligence_per_dollar.model import training``.
"""

__version__ = "0.1.0"
