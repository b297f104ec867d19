"""medlit cache (commands registered on medlit.cli.app)."""
