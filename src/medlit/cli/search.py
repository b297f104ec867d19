"""medlit search (commands registered on medlit.cli.app)."""
