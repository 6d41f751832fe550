r"""How text that gpuplane did not write reaches a terminal: control characters made visible, length bounded.

Why one function for every command: a node condition, a pod log, an AWS error, a stack file's value or an
argument can carry terminal escape sequences (`ESC]0;` sets the window title, `ESC[2J` clears the screen,
`ESC]52;` writes the clipboard) or megabytes of text. Rich's markup being off keeps `[x]` literal, but a
control character goes to the terminal as it is. So every such text passes through `shown` before it is
printed: each control character becomes its escape (`\\x1b`), a bidirectional override its `\\u202e` (it
would reorder what the reader sees), and a text past its bound ends with `… (N more characters)`.

The JSON reports keep the raw text (a program reads them, and JSON escapes control characters itself); the
HTML reports escape it (`html.escape`), and a browser does not run terminal escapes.
"""

from __future__ import annotations

import re
from typing import Final

LIMIT: Final = 2000
"""Characters of one value shown on the terminal before it is cut (a line or two of a wide terminal, times
ten: enough for any real message, far below the megabytes a hostile answer can hold)."""

# C0 controls except tab and newline (layout, kept), DEL, the C1 controls (0x9b is a one-byte CSI on some
# terminals), and the Unicode bidirectional marks, embeddings, overrides and isolates.
_CONTROL: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# A one-line text: newlines and tabs shown too.
_CONTROL_LINE: Final = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def cut(text: str, limit: int = LIMIT) -> str:
    """`text` cut to `limit` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def shown(value: object, limit: int = LIMIT, *, one_line: bool = False) -> str:
    r"""`value` as text that is safe to print: control characters visible, at most `limit` characters kept.

    The cut is made before escaping, so an escape is never split; `one_line`: newlines and tabs shown as
    `\\n` and `\\t` too (a value inside a sentence).
    """
    text = cut(str(value), limit)
    return (_CONTROL_LINE if one_line else _CONTROL).sub(_escape, text)
