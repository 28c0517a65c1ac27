"""Text every page of a site repeats and no reader searches for, removed before chunking."""

from __future__ import annotations

import re

#: Sphinx and MkDocs put a permalink sign after each heading and definition ("Installation¶"); in
#: the Python docs it sat in 89 of 120 chunks.
_PERMALINK = re.compile(r"[ \t]*¶(?=[ \t]*$)", re.MULTILINE)


def strip_permalinks(text: str) -> str:
    """`text` without the permalink signs that end its lines."""
    return _PERMALINK.sub("", text) if "¶" in text else text


#: A PDF's running headers and footers: lines at the top or bottom of a page that most pages
#: repeat (a title, a chapter name, "Page 3 of 12": digits compared as one sign).
EDGE_LINES = 3
#: Share of the pages a line must repeat on, at the same edge, to count as running.
RUNNING_SHARE = 0.6
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")


def _line_key(line: str) -> str:
    return _SPACES.sub(" ", _DIGITS.sub("#", line)).strip().lower()


def strip_running_lines(pages: list[str]) -> list[str]:
    """`pages` without the header and footer lines most of them repeat (and page numbers:
    a lone number at an edge of most pages is the same line once digits are folded).

    Only the first and last `EDGE_LINES` non-blank lines of a page are candidates, removed
    from the edge inward up to the first line that is not running, so a sentence the body
    repeats stays; documents of fewer than 3 pages are left as they are."""
    if len(pages) < 3:
        return pages
    lines = [page.splitlines() for page in pages]
    filled = [[index for index, line in enumerate(page) if line.strip()] for page in lines]
    heads = [{_line_key(page[i]) for i in rows[:EDGE_LINES]} for page, rows in zip(lines, filled, strict=True)]
    tails = [{_line_key(page[i]) for i in rows[-EDGE_LINES:]} for page, rows in zip(lines, filled, strict=True)]
    needed = max(3, int(RUNNING_SHARE * len(pages) + 0.999))

    def running(edges: list[set[str]]) -> set[str]:
        counts: dict[str, int] = {}
        for keys in edges:
            for key in keys:
                counts[key] = counts.get(key, 0) + 1
        return {key for key, count in counts.items() if count >= needed}

    running_heads, running_tails = running(heads), running(tails)
    if not running_heads and not running_tails:
        return pages
    cleaned = []
    for page, rows in zip(lines, filled, strict=True):
        drop = _from_edge(page, rows[:EDGE_LINES], running_heads)
        drop |= _from_edge(page, rows[::-1][:EDGE_LINES], running_tails)
        cleaned.append("\n".join(line for index, line in enumerate(page) if index not in drop))
    return cleaned


def _from_edge(page: list[str], rows: list[int], running: set[str]) -> set[int]:
    """The running lines among `rows` (a page edge, outermost first) up to the first that is not."""
    drop: set[int] = set()
    for index in rows:
        if _line_key(page[index]) not in running:
            break
        drop.add(index)
    return drop
