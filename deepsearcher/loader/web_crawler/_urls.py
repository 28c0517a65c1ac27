"""URL helpers: normalisation (each page fetched once), site identity, include/exclude patterns."""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

from deepsearcher.loader.web_crawler._errors import URLRefusedError

ALLOWED_SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}

# Links to these are not fetched while following links (a start URL is always fetched).
BINARY_EXTENSIONS = frozenset(
    """7z apk avi bin bmp bz2 css deb dmg doc docx eot exe flac gif gz ico iso jar jpeg jpg js
    m4a m4v mkv mov mp3 mp4 mpeg mpg msi odp ods odt ogg otf png ppt pptx rar rpm svg tar tif
    tiff ttf wav webm webp wmv woff woff2 xls xlsx xz zip zst""".split()
)


def check_scheme(url: str) -> None:
    """Raise URLRefusedError unless `url` is an absolute http(s) URL with a host."""
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:
        raise URLRefusedError(url, f"not a valid URL ({exc})") from exc
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        shown = f"'{scheme}'" if scheme else "no scheme"
        raise URLRefusedError(url, f"scheme {shown} refused: only http and https URLs are crawled")
    if not parts.hostname:
        raise URLRefusedError(url, "no host in URL")


def _remove_dot_segments(path: str) -> str:
    if not path:
        return "/"
    if "." not in path and "//" not in path:
        return path
    trailing = path.endswith("/") or path.endswith("/.") or path.endswith("/..")
    normal = posixpath.normpath(path)
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    if normal == ".":
        normal = "/"
    if trailing and not normal.endswith("/"):
        normal += "/"
    return normal


def _netloc(parts, scheme: str) -> str:
    host = (parts.hostname or "").lower().rstrip(".")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "")
        netloc = f"{userinfo}@{netloc}"
    return netloc


def normalize_url(url: str) -> str:
    """The form a URL is fetched and referenced by.

    Scheme and host lower-cased, default port and fragment dropped, an empty path made
    "/", dot segments resolved. Raises URLRefusedError for non-http(s) URLs.
    """
    url = url.strip()
    check_scheme(url)
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        netloc = _netloc(parts, scheme)
    except ValueError as exc:  # bad port
        raise URLRefusedError(url, f"not a valid URL ({exc})") from exc
    path = _remove_dot_segments(parts.path)
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def url_key(url: str) -> str:
    """Identity of a page for "fetched once": the normalised URL with a trailing slash dropped."""
    normal = normalize_url(url)
    parts = urlsplit(normal)
    path = parts.path
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/") or "/"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def join_url(base: str, link: str) -> str | None:
    """Resolve `link` against `base`; None for links that are not http(s) pages."""
    link = link.strip()
    if not link or link.startswith("#"):
        return None
    try:
        absolute = urljoin(base, link)
        check_scheme(absolute)
        return normalize_url(absolute)
    except (URLRefusedError, ValueError):
        return None


def site_of(url: str) -> tuple[str, int | None]:
    """A site is a host (a leading "www." ignored) and a port (default ports count as one)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower().rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    port = parts.port
    if port is None or DEFAULT_PORTS.get(scheme) == port:
        port = None
    return host, port


def origin_of(url: str) -> str:
    """scheme://host[:port] of a normalised URL (robots.txt is per origin)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], "", "", ""))


def extension_of(url: str) -> str:
    path = urlsplit(url).path
    name = path.rsplit("/", 1)[-1]
    return name.rpartition(".")[2].lower() if "." in name else ""


_REGEX_HINTS = re.compile(r"\.\*|\.\+|[\\^$()\[\]|{}]")


@dataclass(frozen=True)
class URLPattern:
    """One include/exclude pattern: a regex (searched in the URL) or a glob (the URL or its path)."""

    source: str
    regex: re.Pattern[str] | None
    glob: str | None

    @classmethod
    def parse(cls, pattern: str) -> URLPattern:
        if pattern.startswith("re:"):
            return cls(pattern, re.compile(pattern[3:]), None)
        if pattern.startswith("glob:"):
            return cls(pattern, None, pattern[5:])
        if ("*" in pattern or "?" in pattern) and not _REGEX_HINTS.search(pattern):
            return cls(pattern, None, pattern)
        try:
            return cls(pattern, re.compile(pattern), None)
        except re.error:
            return cls(pattern, None, pattern)

    def matches(self, url: str) -> bool:
        if self.regex is not None:
            return self.regex.search(url) is not None
        assert self.glob is not None
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        return fnmatch.fnmatchcase(url, self.glob) or fnmatch.fnmatchcase(path, self.glob)


def compile_patterns(patterns: str | Iterable[str] | None) -> tuple[URLPattern, ...]:
    if not patterns:
        return ()
    if isinstance(patterns, str):
        patterns = [patterns]
    return tuple(URLPattern.parse(p) for p in patterns)
