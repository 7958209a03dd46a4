"""Analysis: the tables the book and the CLI show, built from the model (validation against
measured runs, the claims ledger)."""
