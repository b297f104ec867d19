"""medlit ask (commands registered on medlit.cli.app)."""
