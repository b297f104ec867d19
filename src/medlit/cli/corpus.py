"""medlit corpus (commands registered on medlit.cli.app)."""
