"""medlit research (commands registered on medlit.cli.app)."""
