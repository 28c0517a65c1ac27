"""Turning fetched bytes into text: HTML main text (trafilatura), links, sitemaps, content types."""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from deepsearcher.loader.noise import strip_permalinks
from deepsearcher.loader.web_crawler._urls import join_url
from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    from lxml.html import HtmlElement

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown"})
XML_TYPES = frozenset({"application/xml", "text/xml", "application/x-gzip", "application/gzip"})
UNKNOWN_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})


def mime_type(content_type: str | None) -> str:
    """'text/html; charset=utf-8' → 'text/html'."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def sniff_kind(body: bytes) -> str | None:
    """Guess 'pdf', 'html', 'xml' or 'text' from the first bytes of an untyped response."""
    head = body[:1024].lstrip()
    lowered = head[:256].lower()
    if b"%PDF-" in body[:1024]:
        return "pdf"
    if lowered.startswith((b"<!doctype html", b"<html")):
        return "html"
    if lowered.startswith(b"<?xml") or lowered.startswith((b"<urlset", b"<sitemapindex")):
        return "xml"
    if body.startswith(b"\x1f\x8b"):
        return "gzip"
    if b"\x00" in body[:4096]:
        return None
    try:
        body[:4096].decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < 4090:  # a multi-byte character cut at the end is fine
            return None
    return "text"


@dataclass
class HTMLPage:
    text: str
    title: str | None
    links: list[str] = field(default_factory=list)
    noindex: bool = False
    nofollow: bool = False
    extra: JSONObject = field(default_factory=dict)


def extract_html(body: bytes, url: str, want_links: bool) -> HTMLPage:
    """Main text as Markdown (headings kept; navigation, footers and banners dropped), title, links."""
    import trafilatura

    tree = trafilatura.load_html(body)
    if tree is None:
        return HTMLPage(text="", title=None)
    robots = " ".join(tree.xpath("//meta[translate(@name,'ROBOTS','robots')='robots']/@content")).lower()
    links: list[str] = []
    if want_links:
        bases = tree.xpath("//base/@href")
        base = join_url(url, bases[0]) if bases else None
        base = base or url
        seen: set[str] = set()
        for href in tree.xpath("//a/@href|//area/@href"):
            link = join_url(base, str(href))
            if link and link not in seen:
                seen.add(link)
                links.append(link)
    extra: JSONObject = {}
    title = None
    try:
        # no extensive date search: it dates pages by their "Copyright 2024" footer
        meta = trafilatura.extract_metadata(
            tree,
            default_url=url,
            date_config={"extensive_search": False, "original_date": True},
        )
    except Exception:  # noqa: BLE001 - metadata is optional; the text still counts
        meta = None
    if meta is not None:
        title = meta.title or None
        for key in ("author", "date", "description", "sitename"):
            value = getattr(meta, key, None)
            if isinstance(value, str) and value.strip():
                extra[key] = value.strip()
    if not title:
        texts = tree.xpath("//title/text()") or tree.xpath("//h1//text()")
        title = " ".join(str(t).strip() for t in texts[:1]).strip() or None
    text = ""
    for recall in (False, True):
        result = trafilatura.extract(
            tree,
            url=url,
            output_format="markdown",
            include_formatting=True,
            include_comments=False,
            include_tables=True,
            include_links=False,
            include_images=False,
            favor_recall=recall,
        )
        if result and result.strip():
            text = strip_permalinks(result.strip())
            break
    if text and _only_link_text(text, tree):
        text = ""  # a page of navigation only (trafilatura keeps some text of short pages)
    return HTMLPage(
        text=text,
        title=title,
        links=links,
        noindex="noindex" in robots or "none" in robots.split(","),
        nofollow="nofollow" in robots or "none" in robots.split(","),
        extra=extra,
    )


def _only_link_text(text: str, tree: HtmlElement) -> bool:
    link_texts = {" ".join(str(t).split()) for t in (a.text_content() for a in tree.xpath("//a")) if t.strip()}
    lines = [" ".join(line.strip().lstrip("#*->|").split()) for line in text.splitlines()]
    return all(not line or line in link_texts for line in lines)


class NotASitemap(ValueError):
    """The XML is well formed but not a sitemap (or not well formed)."""


def decompress_gzip(body: bytes, max_bytes: int) -> bytes:
    """Inflate a gzip body, refusing output past `max_bytes` (compression bombs)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, max_bytes + 1)
    except zlib.error as exc:
        raise NotASitemap(f"corrupt gzip data ({exc})") from exc
    if len(data) > max_bytes:
        raise OverflowError
    return data


def parse_sitemap(body: bytes) -> tuple[str, list[str]]:
    """('urlset' | 'sitemapindex', the <loc> URLs). Raises NotASitemap otherwise."""
    from lxml import etree

    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        recover=False,
    )
    try:
        root = etree.parse(io.BytesIO(body), parser).getroot()
    except etree.XMLSyntaxError as exc:
        raise NotASitemap(f"not well-formed XML ({exc})") from exc
    kind = etree.QName(root).localname
    if kind not in ("urlset", "sitemapindex"):
        raise NotASitemap(f"XML root element is <{kind}>, not <urlset> or <sitemapindex>")
    locations = []
    for element in root.iter():
        if isinstance(element.tag, str) and etree.QName(element).localname == "loc" and element.text:
            locations.append(element.text.strip())
    return kind, locations


__all__ = [
    "HTMLPage",
    "NotASitemap",
    "decompress_gzip",
    "extract_html",
    "mime_type",
    "parse_sitemap",
    "sniff_kind",
]
