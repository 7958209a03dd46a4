"""The application: the report build, scenarios, the ``ipd`` CLI, the Voila dashboard, notebook
parameter checks."""
