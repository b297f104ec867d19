"""The ``?`` -> ``%s`` translation that lets component SQL run unchanged on PostgreSQL."""

from __future__ import annotations

import pytest

from medlit.storage._pg_sql import qmark_to_psycopg


@pytest.mark.parametrize(
    ("portable", "psycopg_sql"),
    [
        ("SELECT a FROM t WHERE b = ? AND c = ?", "SELECT a FROM t WHERE b = %s AND c = %s"),
        ("SELECT '?' , ?", "SELECT '?' , %s"),
        ("SELECT 'it''s ?', ?", "SELECT 'it''s ?', %s"),
        ('SELECT "we?ird" FROM t WHERE x = ?', 'SELECT "we?ird" FROM t WHERE x = %s'),
        (
            "SELECT x FROM t WHERE y LIKE '%a%' AND z = ?",
            "SELECT x FROM t WHERE y LIKE '%%a%%' AND z = %s",
        ),
        ("SELECT 100 % 7, ?", "SELECT 100 %% 7, %s"),
        ("SELECT ? -- why? 50%\n, ?", "SELECT %s -- why? 50%%\n, %s"),
        ("SELECT /* a ? here */ ?", "SELECT /* a ? here */ %s"),
        ("LIKE ? ESCAPE '\\'", "LIKE %s ESCAPE '\\'"),
    ],
)
def test_placeholders_outside_quotes_and_comments_only(portable: str, psycopg_sql: str) -> None:
    assert qmark_to_psycopg(portable) == psycopg_sql


def test_unterminated_quote_is_left_for_the_server_to_refuse() -> None:
    assert qmark_to_psycopg("SELECT 'oops ?") == "SELECT 'oops ?"
