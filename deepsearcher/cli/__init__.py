"""The `deepsearcher` command line (typer + rich)."""
