"""An evidence article for the answer checks' unit tests: a title and one unlabelled section."""

from __future__ import annotations

from medlit.types import AbstractSection, Article


def article(pmid: str, title: str, text: str) -> Article:
    """An article with ``title`` whose abstract is ``text``."""
    return Article(pmid=pmid, title=title, abstract=[AbstractSection(text=text)])
