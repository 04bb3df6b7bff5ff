"""Warning header texts: what a header cannot carry is dropped, never sent or raised."""

from __future__ import annotations

from kubedra.apiserver.handlers import _warning_text


def test_quotes_and_backslashes_are_escaped() -> None:
    assert _warning_text('a "b" \\c') == 'a \\"b\\" \\\\c'


def test_control_characters_are_dropped_but_tab_and_unicode_stay() -> None:
    assert _warning_text("a\x00b\r\nc\x7fd\te é") == "abcd\te é"
