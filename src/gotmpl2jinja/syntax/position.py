"""Source offsets as Go's positions: byte offset, line and byte column.

May depend on: syntax.nodes.
"""

from __future__ import annotations

import bisect
import itertools
import re

from gotmpl2jinja.syntax import nodes as n


class _Where:
    """Turns character offsets into Go's byte-based (offset, line, column)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.ascii = source.isascii()
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", source)]
        # byte offset of each line start, so a position costs one line's encoding, not the
        # whole prefix's (which made positions quadratic in a non-ASCII template)
        self.line_bytes = self.line_starts
        if not self.ascii:
            self.line_bytes = list(itertools.accumulate(
                (len(source[a:b].encode("utf-8", "surrogatepass"))
                 for a, b in itertools.pairwise(self.line_starts)), initial=0))

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset)

    def pos(self, offset: int) -> n.Pos:
        line = bisect.bisect_right(self.line_starts, offset)
        start = self.line_starts[line - 1]
        if self.ascii:
            return n.Pos(offset, line, offset - start + 1)
        col = len(self.source[start:offset].encode("utf-8", "surrogatepass")) + 1
        return n.Pos(self.line_bytes[line - 1] + col - 1, line, col)

    def eof_line(self) -> int:
        return len(self.line_starts)
