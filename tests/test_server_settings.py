"""Server settings, loopback-only binding, API-key checks and path rules (no server needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepsearcher.cli.main import app as cli
from deepsearcher.config import Configuration
from deepsearcher.offline_loading.sources import LoadedSource
from deepsearcher.server.auth import Principal, authenticate
from deepsearcher.server.errors import APIError
from deepsearcher.server.paths import check_url, iter_allowed_file_sources, resolve_allowed
from deepsearcher.server.settings import ServerSettings, check_bind_allowed, is_loopback
from deepsearcher.types import ConfigurationError

runner = CliRunner()
KEY = "k" * 24


def settings(**values) -> ServerSettings:
    return ServerSettings.from_mapping(values)


def test_defaults() -> None:
    s = settings()
    assert s.api_keys == [] and s.allowed_roots == [] and not s.auth_enabled
    assert s.max_upload_bytes == 50 * 1024 * 1024 and s.max_upload_files == 20


def test_server_section_from_a_config_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        f"server:\n  api_keys:\n    - key: {KEY}\n      collections: [hand-book]\n  allowed_roots: ['{tmp_path}']\n  max_upload_files: 3\n",  # noqa: E501 - a literal read better whole
        encoding="utf-8",
    )
    s = ServerSettings.from_config(Configuration(path))
    assert s.api_keys[0].collections == frozenset({"hand_book"})  # normalized like collection names
    assert s.allowed_roots == [tmp_path.resolve()] and s.max_upload_files == 3


@pytest.mark.parametrize(
    "values, message",
    [
        ({"api_key": [KEY]}, "Unknown key 'server.api_key'"),
        ({"api_keys": KEY}, "must be a list"),
        ({"api_keys": [{"key": ""}]}, r"server.api_keys\[0\].key' is missing or empty"),
        ({"api_keys": [{"key": "short"}]}, "too short"),
        ({"api_keys": [{"key": KEY, "colections": ["a"]}]}, r"Unknown key 'server.api_keys\[0\].colections'"),
        ({"api_keys": [{"key": KEY}, {"key": KEY}]}, "repeats an earlier key"),
        ({"api_keys": [{"key": KEY, "collections": []}]}, "non-empty list"),
        ({"api_keys": [{"key": KEY, "collections": ["bad name!"]}]}, "Invalid collection name"),
        ({"allowed_roots": ["relative/dir"]}, "must be an absolute path"),
        ({"allowed_roots": ["/no/such/dir/anywhere"]}, "not an existing directory"),
        ({"max_upload_bytes": 0}, "'server.max_upload_bytes' must be a positive integer"),
        ({"max_upload_files": "many"}, "'server.max_upload_files' must be a positive integer"),
    ],
)
def test_bad_server_settings_name_the_key(values: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        settings(**values)


def test_loopback_only_without_keys() -> None:
    open_ = settings()
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2", "[::1]"):
        assert is_loopback(host)
        check_bind_allowed(host, open_)
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.com"):
        with pytest.raises(ConfigurationError, match="server.api_keys") as info:
            check_bind_allowed(host, open_)
        assert "\n" not in str(info.value)
    check_bind_allowed("0.0.0.0", settings(api_keys=[{"key": KEY}]))


def test_serve_refuses_a_public_address_without_keys(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("query_settings:\n  max_iter: 1\n", encoding="utf-8")
    result = runner.invoke(cli, ["serve", "--host", "0.0.0.0", "--config", str(config)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert (
        len(lines) == 1
        and "Refusing to listen on 0.0.0.0 without API keys" in lines[0]
        and "server.api_keys" in lines[0]
    )


def test_serve_reports_a_bad_server_key(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("server:\n  allowed_root: [/tmp]\n", encoding="utf-8")
    result = runner.invoke(cli, ["serve", "--config", str(config)])
    assert result.exit_code == 2 and "Unknown key 'server.allowed_root'" in result.output


def test_authenticate() -> None:
    s = settings(api_keys=[{"key": KEY}, {"key": "r" * 24, "collections": ["science"], "name": "reader"}])
    for header in (None, "", f"Basic {KEY}", "Bearer ", "Bearer wrong-key-123"):
        with pytest.raises(APIError) as info:
            authenticate(s, header)
        assert info.value.status == 401 and info.value.headers["WWW-Authenticate"].startswith("Bearer")
    assert authenticate(s, f"Bearer {KEY}").collections is None
    reader = authenticate(s, "bearer " + "r" * 24)
    assert reader.label == "reader" and reader.authorized_collections == {"science"}
    assert reader.require("science") == "science"
    with pytest.raises(APIError) as info:
        reader.require("other")
    assert info.value.status == 403 and "'other'" in info.value.message
    assert authenticate(settings(), None) == Principal("local")


def test_paths_must_stay_under_the_roots(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("inside", encoding="utf-8")
    outside = tmp_path / "secret.txt"
    outside.write_text("outside", encoding="utf-8")
    (root / "escape.txt").symlink_to(outside)
    (root / "inner.txt").symlink_to(root / "sub" / "a.txt")
    roots = [root.resolve()]

    assert resolve_allowed(str(root / "sub" / "a.txt"), roots) == (root / "sub" / "a.txt").resolve()
    assert resolve_allowed(str(root / "inner.txt"), roots) == (root / "sub" / "a.txt").resolve()
    cases = {
        str(outside): (403, "outside the allowed roots"),
        str(root / "escape.txt"): (403, "outside the allowed roots"),
        str(root / "sub" / ".." / ".." / "secret.txt"): (403, "contains '..'"),
        str(root / "sub" / ".."): (403, "contains '..'"),
        "sub/a.txt": (400, "relative"),
    }
    for given, (status, message) in cases.items():
        with pytest.raises(APIError) as info:
            resolve_allowed(given, roots)
        assert info.value.status == status and message in info.value.message, given
    with pytest.raises(APIError) as info:
        resolve_allowed(str(root / "sub" / "a.txt"), [])
    assert info.value.status == 403 and "server.allowed_roots" in info.value.message


def test_a_symlink_inside_an_allowed_folder_cannot_escape(tmp_path: Path) -> None:
    from deepsearcher.loader.file_loader import FileLoader

    root = tmp_path / "root"
    root.mkdir()
    (root / "ok.txt").write_text("fine text", encoding="utf-8")
    outside = tmp_path / "secret.txt"
    outside.write_text("do not read", encoding="utf-8")
    (root / "leak.txt").symlink_to(outside)
    sources: list[LoadedSource] = list(iter_allowed_file_sources([root.resolve()], FileLoader(), [root.resolve()]))
    by_name = {Path(source.reference).name: source for source in sources}
    assert by_name["ok.txt"].documents and by_name["ok.txt"].error is None
    assert by_name["leak.txt"].documents == [] and "outside the allowed roots" in by_name["leak.txt"].error


def test_urls_must_be_http() -> None:
    assert check_url("https://example.com/a") == "https://example.com/a"
    for url in ("ftp://example.com/a", "file:///etc/passwd", "http:///nohost"):
        with pytest.raises(APIError) as info:
            check_url(url)
        assert info.value.status == 400


def test_an_app_without_keys_serves_only_a_loopback_listener() -> None:
    """Defence in depth when another ASGI server runs create_app() on a public address."""
    import asyncio

    import httpx

    from deepsearcher.server.app import create_app

    app = create_app(Configuration())

    async def get(base_url: str) -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base_url) as client:
            return await client.get("/v1/collections")

    public = asyncio.run(get("http://10.1.2.3:8000"))
    assert public.status_code == 403 and "server.api_keys" in public.json()["error"]
    assert asyncio.run(get("http://127.0.0.1:8000")).status_code != 403
