"""One module per command of the command line (``faces/cli.py`` dispatches)."""
