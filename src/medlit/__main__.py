"""``python -m medlit`` runs the CLI."""

from medlit.cli import main

main()
