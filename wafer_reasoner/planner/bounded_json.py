"""JSON from outside, decoded only within caps: size, nesting depth and container count are checked first.

``json.loads`` recurses once per nesting level, so 2 KB of ``[`` raises RecursionError; a 5,000-digit number
raises a plain ValueError; an integer beyond the float range passes and breaks arithmetic later. Every input
that decodes JSON from outside (perception, model files) goes through ``loads_bounded``, which raises only
``BoundedJsonError`` (a ValueError) with a reason a person can act on.

The structure check runs before decoding, in one pass: string literals are skipped whole (a possessive pattern,
so no backtracking), brackets are counted and their depth followed, and a string never closed ends it.
"""

from __future__ import annotations

import json
import re

# a whole string literal (possessive: no backtracking), a quote that opens a string never closed, or a bracket
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*+"|"|[\[\]{}]', re.DOTALL)


class BoundedJsonError(ValueError):
    """JSON text over a cap, or not JSON at all; the message says which."""


def structure_problem(text: str, *, max_depth: int, max_containers: int) -> str:
    """Why ``text`` nests deeper than ``max_depth``, holds more than ``max_containers`` arrays and objects or
    leaves a string open (brackets inside strings do not count), or "" when it does none of these."""
    depth = opened = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth, opened = depth + 1, opened + 1
            if depth > max_depth:
                return f"it nests deeper than {max_depth} levels"
            if opened > max_containers:
                return f"it has more than {max_containers} arrays and objects"
        elif token in "]}":
            depth -= 1
        elif token == '"':
            return "a string is never closed"
    return ""


def loads_bounded(text, *, max_bytes: int, max_depth: int, max_containers: int, what: str = "message"):
    """``json.loads(text)`` when ``text`` is within the caps; BoundedJsonError otherwise (never anything else)."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > max_bytes:
            raise BoundedJsonError(f"{what} is over {max_bytes} bytes")
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise BoundedJsonError(f"{what} must be text, got {type(text).__name__}")
    if len(text) > max_bytes or len(text.encode("utf-8", errors="replace")) > max_bytes:
        raise BoundedJsonError(f"{what} is over {max_bytes} bytes")
    problem = structure_problem(text, max_depth=max_depth, max_containers=max_containers)
    if problem:
        raise BoundedJsonError(f"{what} refused: {problem}")
    try:
        return json.loads(text)
    except RecursionError:  # unreachable after the depth check; kept so no decoder path can escape
        raise BoundedJsonError(f"{what} nests too deep") from None
    except ValueError as error:  # JSONDecodeError, and "Exceeds the limit (4300 digits)" for huge integers
        raise BoundedJsonError(f"{what} is not JSON: {str(error)[:200]}") from None
