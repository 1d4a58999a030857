"""Map offsets inside a scalar's value back to spans in the document."""

from __future__ import annotations

from ..frozen import record
from ..text import Span
from .nodes import YScalar


@record
class ScalarText:
    """A scalar whose value offsets can be placed on its line, when that is exact."""

    scalar: YScalar

    @property
    def exact(self) -> bool:
        s = self.scalar
        if s.span.start_line != s.span.end_line or not isinstance(s.value, str):
            return False
        # The source is as long as the value (plus quotes): nothing was folded, e.g. at a NEL or LS break.
        if s.span.end_col - s.span.start_col != len(s.text) + (0 if s.style is None else 2):
            return False
        if s.style is None:
            return True
        if s.style == "'":
            return "'" not in s.text
        if s.style == '"':
            return s.text.isprintable() and "\\" not in s.text and '"' not in s.text
        return False

    def span(self, start: int, end: int) -> Span:
        s = self.scalar
        if not self.exact:
            return s.span
        base = s.span.start_col + (0 if s.style is None else 1)
        return Span.on_line(s.span.start_line, base + start, base + max(end, start))
