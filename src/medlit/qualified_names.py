"""Moved to :mod:`medlit.checks.qualified_names`; this name stays while the cache guard (being
rewritten in parallel) still imports it. Remove once ``medlit.cache.guard`` imports the new
path."""

from medlit.checks.qualified_names import describe, qualified_names, qualifiers_match

__all__ = ["describe", "qualified_names", "qualifiers_match"]
