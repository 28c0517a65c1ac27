"""A real HTTP server on 127.0.0.1 for the crawler tests, and the small web site it serves.

`LocalServer` runs http.server's ThreadingHTTPServer in a thread. Routes map a path to a
`Reply` (or to a function of the `Request` returning one); every request is recorded, so
tests can count hits per path and look at headers and bodies.
"""

from __future__ import annotations

import io
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@dataclass
class Request:
    method: str
    path: str  # with the query string
    headers: dict[str, str]  # lower-cased names
    body: bytes

    def json(self) -> object:
        import json

        return json.loads(self.body.decode("utf-8"))


@dataclass
class Reply:
    body: bytes | str = b""
    status: int = 200
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the status line (a slow server)
    content_length: bool = True  # False: no Content-Length; the body ends when the connection closes
    chunk_size: int = 64 * 1024


# A route keyed "*" answers every path that has no route of its own.
Route = Reply | Callable[[Request], Reply]


class LocalServer:
    """An HTTP/1.0 server on 127.0.0.1 (a random free port) serving `routes`."""

    def __init__(self, routes: dict[str, Route] | None = None) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.requests: list[Request] = []
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests served at the same time
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet tests
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                request = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with server._lock:
                    server.requests.append(request)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    route = server.routes.get(urlsplit(self.path).path, server.routes.get("*"))
                    reply = Reply("not found", status=404, content_type="text/plain") if route is None else route
                    if callable(reply):
                        reply = reply(request)
                    self._send(reply)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _send(self, reply: Reply) -> None:
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.body.encode("utf-8") if isinstance(reply.body, str) else reply.body
                try:
                    self.send_response(reply.status)
                    if reply.content_type:
                        self.send_header("Content-Type", reply.content_type)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    if reply.content_length:
                        self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command == "HEAD":
                        return
                    stream = io.BytesIO(data)
                    while chunk := stream.read(reply.chunk_size):
                        self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading (a size cap): expected

            do_GET = _serve
            do_POST = _serve
            do_HEAD = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name=f"test-http-{self.port}", daemon=True
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return f"{self.base}{path}"

    def hits(self, path: str) -> int:
        with self._lock:
            return sum(1 for r in self.requests if urlsplit(r.path).path == path)

    def hit_counts(self) -> Counter[str]:
        with self._lock:
            return Counter(urlsplit(r.path).path for r in self.requests)

    def __enter__(self) -> LocalServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


# ------------------------------------------------------------------------------------------
# The fixture web site

NAV = '<nav class="menu"><a href="/">Home</a> | <a href="/a">Currents</a> | <a href="#contact">Contact us</a></nav>'
FOOTER = "<footer><p>Copyright 2024 Ocean Facts Ltd. All rights reserved. Privacy policy. Terms of use.</p></footer>"
COOKIE_BANNER = (
    '<div id="cookie-banner" class="cookie-consent"><p>We use cookies to improve your experience. '
    "<button>Accept all cookies</button></p></div>"
)


def page(title: str, paragraphs: list[str], links: list[str] = (), heading: str | None = None) -> str:
    """An HTML page: navigation, a cookie banner, the article, a footer and `links` (hrefs)."""
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    related = "".join(f'<li><a href="{href}">link {i}</a></li>' for i, href in enumerate(links))
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
        f"{NAV}{COOKIE_BANNER}<main><article><h1>{heading or title}</h1>{body}</article></main>"
        f"<aside><ul>{related}</ul></aside>{FOOTER}</body></html>"
    )


def text(topic: str) -> list[str]:
    """Three sentences about `topic`, long enough for main-text extraction to keep them."""
    return [
        f"This page explains {topic} in some detail, so that a reader new to the subject can follow along "
        f"and understand why {topic} matters to ocean science and to the people who study the deep sea.",
        f"Researchers have measured {topic} on many expeditions, and their observations were collected "
        "into long-term data sets that are still analysed by oceanographers around the world today.",
        f"The last section summarises open questions about {topic} that remain unanswered.",
    ]


ARTICLE_MAIN = (
    "Hydrothermal vents are fissures on the seabed from which geothermally heated water discharges. "
    "They are commonly found near volcanically active places where tectonic plates move apart."
)
ARTICLE_SECOND = (
    "Chemosynthetic bacteria form the base of a food web that supports giant tube worms, clams and "
    "shrimp living in total darkness at extreme pressure, far from any sunlight."
)
PDF_TEXT = "Abyssal plains cover more than half of the ocean floor of the Earth."
TEXT_FILE = "Field notes: the research vessel sampled sediment cores at four stations along the ridge.\n"


def make_pdf() -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setTitle("Abyssal Plains Report")
    pdf.drawString(72, 760, PDF_TEXT)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82"
)


def website_routes(base: str, other_site: str, pdf: bytes) -> dict[str, Route]:
    """The fixture site. `base` is its own origin, `other_site` another site's origin.

    Link graph (depth from "/"):
      0: /
      1: /a, /b, /article, /docs/guide, /old-page (301 → /new-page); skipped: /private/secret
         (robots.txt), /logo.png (binary), the other site's /page (off-site)
      2: /c (from /a), /docs/api (from /docs/guide)
      3: /d (from /c)
    /a ↔ /b link to each other (a loop); "/a#top" and "/b/" are the same pages as /a and /b.
    """
    html = "text/html; charset=utf-8"
    return {
        "/robots.txt": Reply("User-agent: *\nDisallow: /private/\n", content_type="text/plain"),
        "/": Reply(
            page(
                "Ocean Facts home",
                text("the ocean"),
                [
                    "/a",
                    "/b",
                    "/article",
                    "/a#top",
                    "/b/",
                    "/private/secret",
                    f"{other_site}/page",
                    "/logo.png",
                    "/docs/guide",
                    "/old-page",
                    "mailto:editor@example.org",
                ],
            )
        ),
        "/a": Reply(page("Page A", text("ocean currents"), ["/b", "/c", "/"])),
        "/b": Reply(page("Page B", text("tides"), ["/a"])),
        "/c": Reply(page("Page C", text("salinity"), ["/d"])),
        "/d": Reply(page("Page D", text("sea ice"), [])),
        "/mirror/a": Reply(page("Page A", text("ocean currents"), ["/b", "/c", "/"])),
        "/docs/guide": Reply(page("Guide", text("sampling methods"), ["/docs/api"])),
        "/docs/api": Reply(page("API", text("data formats"), [])),
        "/article": Reply(
            "<!DOCTYPE html><html><head><title>Deep Sea Vents | Ocean Facts</title></head><body>"
            f"{NAV}{COOKIE_BANNER}<main><article><h1>Hydrothermal vents</h1><p>{ARTICLE_MAIN}</p>"
            f"<h2>Life around vents</h2><p>{ARTICLE_SECOND}</p>"
            "<p>The first vent community was discovered in 1977 near the Galapagos Islands by the submersible Alvin.</p>"  # noqa: E501 - a literal read better whole
            f"</article></main>{FOOTER}</body></html>",
            content_type=html,
        ),
        "/old-page": Reply("", status=301, headers={"Location": "/new-page"}),
        "/new-page": Reply(page("New page", text("plankton"), [])),
        "/hop1": Reply("", status=302, headers={"Location": f"{base}/hop2"}),
        "/hop2": Reply("", status=302, headers={"Location": "/new-page"}),
        "/loop1": Reply("", status=302, headers={"Location": "/loop2"}),
        "/loop2": Reply("", status=302, headers={"Location": "/loop1"}),
        "/to-metadata": Reply("", status=302, headers={"Location": "http://169.254.169.254/latest/meta-data/"}),
        "/to-ftp": Reply("", status=302, headers={"Location": "ftp://127.0.0.1/file.txt"}),
        "/private/secret": Reply(page("Secret", text("hidden things"), [])),
        "/missing": Reply("no such page", status=404, content_type="text/plain"),
        "/error": Reply("boom", status=500, content_type="text/plain"),
        "/slow": Reply(page("Slow", text("patience"), []), delay=3.0),
        "/huge": Reply(b"<html><body>" + b"x" * (2 * 1024 * 1024) + b"</body></html>", content_type=html),
        "/huge-stream": Reply(b"a" * (2 * 1024 * 1024), content_type="text/plain", content_length=False),
        "/report.pdf": Reply(pdf, content_type="application/pdf"),
        "/notes.txt": Reply(TEXT_FILE, content_type="text/plain; charset=utf-8"),
        "/image": Reply(PNG, content_type="image/png"),
        "/logo.png": Reply(PNG, content_type="image/png"),
        "/archive": Reply(b"PK\x03\x04" + b"\x00" * 100, content_type="application/zip"),
        "/empty-page": Reply("<html><body><nav><a href='/'>Home</a></nav></body></html>"),
        "/sitemap.xml": Reply(
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{base}/a</loc></url><url><loc>{base}/b</loc></url>"
            f"<url><loc>{base}/docs/guide</loc></url></urlset>",
            content_type="application/xml",
        ),
        "/sitemap2.xml": Reply(
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{base}/c</loc></url></urlset>",
            content_type="text/xml",
        ),
        "/sitemap_index.xml": Reply(
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{base}/sitemap.xml</loc></sitemap><sitemap><loc>{base}/sitemap2.xml</loc></sitemap>"
            "</sitemapindex>",
            content_type="application/xml",
        ),
        "/feed.xml": Reply(
            '<?xml version="1.0"?><rss version="2.0"><channel><title>x</title></channel></rss>',
            content_type="application/xml",
        ),
    }


class Website:
    """The fixture site on one LocalServer plus a second server that is another site."""

    def __init__(self, pdf: bytes) -> None:
        self.other = LocalServer(
            {
                "/page": Reply(page("Other site", text("another site"), [])),
                "/robots.txt": Reply("", status=404, content_type="text/plain"),
            }
        )
        self.server = LocalServer()
        self.server.routes.update(website_routes(self.server.base, self.other.base, pdf))

    def url(self, path: str = "/") -> str:
        return self.server.url(path)

    def hits(self, path: str) -> int:
        return self.server.hits(path)

    def __enter__(self) -> Website:
        self.other.__enter__()
        self.server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)
        self.other.__exit__(*exc)
