"""The HTTP API served by uvicorn on 127.0.0.1: real Milvus Lite, real MiniLM, the scripted LLM server.

One server (with two API keys: an admin key and a reader key limited to `science`) is
shared by the module; each test works in its own collections.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from helpers import make_docs
from website_server import LocalServer, Reply

from deepsearcher.config import Configuration
from deepsearcher.server.app import create_app
from deepsearcher.server.runner import ServerThread
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.testing.scripted_llm import Fail

llm = scripted_llm_fixture(name="llm", scope="module", fallback="NO")

ADMIN = "admin-key-0123456789"
READER = "reader-key-0123456789"
MAX_FILES = 4
MAX_BYTES = 20_000


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The allowed root: docs/, a folder with a bad file, and a symlink leading out."""
    base = tmp_path_factory.mktemp("server")
    root = base / "root"
    make_docs(root / "docs")
    mixed = root / "mixed"
    mixed.mkdir()
    (mixed / "good.txt").write_text(
        "Tardigrades survive boiling, freezing and the vacuum of space.\n", encoding="utf-8"
    )
    (mixed / "broken.pdf").write_bytes(b"this is not a pdf at all")
    (base / "secret.txt").write_text("The secret password is swordfish.\n", encoding="utf-8")
    (root / "escape.txt").symlink_to(base / "secret.txt")
    return root


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, root: Path, llm) -> Any:
    base = tmp_path_factory.mktemp("server-store")
    settings = {
        "provide_settings": {
            "llm": llm.llm_config(retry_base_delay=0.01, max_retries=0),
            "vector_db": {"provider": "Milvus", "config": {"uri": str(base / "milvus.db")}},
            "web_crawler": {
                "provider": "HttpCrawler",
                "config": {"allow_private_network": True, "respect_robots": False},
            },
        },
        "server": {
            "api_keys": [
                {"key": ADMIN, "name": "admin"},
                {"key": READER, "name": "reader", "collections": ["science"]},
            ],
            "allowed_roots": [str(root)],
            "max_upload_files": MAX_FILES,
            "max_upload_bytes": MAX_BYTES,
            "data_dir": str(base / "data"),
            "max_key_failures": 0,  # these tests send wrong keys on purpose (the brake: test_server_abuse.py)
        },
    }
    path = base / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    with ServerThread(create_app(Configuration(path))) as running:
        running.data_dir = base / "data"
        yield running


def client_for(server: Any, key: str | None = ADMIN) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=server.url, headers=headers, timeout=120)


@pytest.fixture(scope="module")
def admin(server: Any) -> Any:
    with client_for(server) as client:
        yield client


@pytest.fixture(scope="module")
def reader(server: Any) -> Any:
    with client_for(server, READER) as client:
        yield client


def wait_job(client: httpx.Client, job_id: str, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = client.get(f"/v1/jobs/{job_id}")
        assert response.status_code == 200, response.text
        job = response.json()
        if job["status"] in ("succeeded", "failed", "partial"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish")


def load(client: httpx.Client, inputs: list[str], collection: str, **extra: Any) -> dict:
    response = client.post("/v1/load", json={"inputs": inputs, "collection": collection, **extra})
    assert response.status_code == 202, response.text
    return wait_job(client, response.json()["job_id"])


@pytest.fixture(scope="module")
def science(admin: httpx.Client, root: Path) -> str:
    job = load(admin, [str(root / "docs")], "science", description="Science and computing history")
    assert job["status"] == "succeeded", job
    return "science"


def cite(request: Any) -> str:
    match = re.search(r"\[(\d+)\] \(Grace Hopper\)", request.last_user_message)
    return f"Grace Hopper built it [{match.group(1)}]." if match else "Not found."


def script(llm: Any) -> None:
    llm.reset()
    llm.on("You route a question", "1")
    llm.on("You choose which document collections", '["science"]')
    llm.on("Break the question below", '["first compiler"]')
    llm.on("Does the passage below contain", lambda r: "YES" if "Hopper" in r.last_user_message else "NO")
    llm.on("These queries were already searched", "[]")
    llm.on("Answer the question using only the numbered sources", cite)


def assert_error(response: httpx.Response, status: int, *fragments: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) >= {"error"} and isinstance(body["error"], str)
    assert "Traceback" not in response.text and 'File "' not in response.text
    for fragment in fragments:
        assert fragment in body["error"], body["error"]
    return body["error"]


# ---------------------------------------------------------------------- meta and auth


def test_health_docs_and_page_need_no_key(server: Any) -> None:
    with client_for(server, None) as anonymous:
        health = anonymous.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert health.json()["auth"] is True and health.json()["llm"] is True
        assert anonymous.get("/docs").status_code == 200
        spec = anonymous.get("/openapi.json").json()
        assert {"/v1/query", "/v1/documents", "/v1/load", "/load-files/", "/query/"} <= set(spec["paths"])
        assert anonymous.get("/").status_code == 200


PROTECTED = [
    ("POST", "/load-files/", {"paths": ["/tmp"]}),
    ("POST", "/load-website/", {"urls": ["https://example.com"]}),
    ("GET", "/query/?original_query=hi", None),
    ("POST", "/v1/documents", None),
    ("POST", "/v1/load", {"inputs": ["/tmp"]}),
    ("GET", "/v1/jobs/abc", None),
    ("GET", "/v1/jobs", None),
    ("POST", "/v1/query", {"question": "hi"}),
    ("GET", "/v1/collections", None),
    ("DELETE", "/v1/collections/science", None),
    ("GET", "/v1/collections/science/sources", None),
    ("DELETE", "/v1/sources", {"collection": "science", "reference": "x"}),
]


@pytest.mark.parametrize("method, path, body", PROTECTED)
def test_every_api_route_needs_a_valid_key(server: Any, method: str, path: str, body: Any) -> None:
    for key, message in ((None, "Missing API key"), ("not-the-right-key", "Invalid API key")):
        with client_for(server, key) as client:
            response = client.request(method, path, json=body)
            assert_error(response, 401, message)
            assert response.headers["www-authenticate"].startswith("Bearer")


# ---------------------------------------------------------------------- uploads


def upload(
    client: httpx.Client, files: dict[str, bytes], collection: str | None = "uploads", **data: str
) -> httpx.Response:
    parts = [("files", (name, content)) for name, content in files.items()]
    form = dict(data)
    if collection is not None:
        form["collection"] = collection
    return client.post("/v1/documents", files=parts, data=form)


def test_upload_job_keeps_original_names_and_is_idempotent(admin: httpx.Client, server: Any) -> None:
    files = {
        "volcano.md": b"# Volcanoes\n\nThe Krafla caldera in Iceland erupted nine times between 1975 and 1984.\n",
        "bread.txt": b"Sourdough rises because wild yeast ferments the flour.\n",
    }
    response = upload(admin, files, description="Uploaded notes")
    assert response.status_code == 202
    accepted = response.json()
    assert (
        accepted["job_id"]
        and accepted["collection"] == "uploads"
        and response.headers["location"] == f"/v1/jobs/{accepted['job_id']}"
    )
    job = wait_job(admin, accepted["job_id"])
    assert job["status"] == "succeeded" and job["error"] is None and job["collection"] == "uploads"
    assert job["results"]["loaded"] == ["upload://uploads/volcano.md", "upload://uploads/bread.txt"]
    assert job["results"]["failed"] == [] and job["results"]["chunks_inserted"] >= 2
    assert job["progress"] == {"sources_done": 2, "chunks_embedded": job["results"]["chunks_inserted"]}
    assert job["created_at"] and job["finished_at"] and job["created_at"] <= job["finished_at"]
    assert list((server.data_dir / "uploads").iterdir()) == []  # the staging folder is gone

    again = wait_job(admin, upload(admin, files).json()["job_id"])
    assert again["status"] == "succeeded" and sorted(again["results"]["skipped_unchanged"]) == [
        "upload://uploads/bread.txt",
        "upload://uploads/volcano.md",
    ]
    assert again["results"]["chunks_inserted"] == 0

    changed = wait_job(
        admin,
        upload(admin, {"bread.txt": b"Rye bread uses a sour starter because rye lacks gluten.\n"}).json()["job_id"],
    )
    assert changed["results"]["replaced"] == ["upload://uploads/bread.txt"]
    sources = admin.get("/v1/collections/uploads/sources").json()
    assert [s["reference"] for s in sources] == ["upload://uploads/bread.txt", "upload://uploads/volcano.md"]
    assert all(s["chunks"] >= 1 for s in sources)
    listing = {c["name"]: c for c in admin.get("/v1/collections").json()}
    assert listing["uploads"]["description"] == "Uploaded notes" and listing["uploads"]["sources"] == 2


def test_a_bad_file_among_good_ones_makes_the_job_partial(admin: httpx.Client) -> None:
    files = {
        "good.txt": b"Octopuses have three hearts and blue blood.\n",
        "broken.pdf": b"not a pdf",
        "photo.png": b"\x89PNG\r\n",
    }
    job = wait_job(admin, upload(admin, files, collection="mixed_uploads").json()["job_id"])
    assert job["status"] == "partial"
    assert job["results"]["loaded"] == ["upload://mixed_uploads/good.txt"]
    failed = {f["source"]: f["reason"] for f in job["results"]["failed"]}
    assert set(failed) == {"upload://mixed_uploads/broken.pdf", "upload://mixed_uploads/photo.png"}
    assert (
        failed["upload://mixed_uploads/broken.pdf"]
        and "unsupported file type '.png'" in failed["upload://mixed_uploads/photo.png"]
    )
    assert "broken.pdf" in job["error"] and "/uploads/" not in json.dumps(job)  # staging paths never leak


def test_upload_limits(admin: httpx.Client) -> None:
    too_many = {f"f{i}.txt": b"text" for i in range(MAX_FILES + 1)}
    assert_error(upload(admin, too_many), 413, "server.max_upload_files")
    assert_error(upload(admin, {"big.txt": b"x" * (MAX_BYTES + 1)}), 413, "'big.txt'", "server.max_upload_bytes")
    assert_error(admin.post("/v1/documents", data={"collection": "uploads"}), 415, "multipart/form-data")
    assert_error(admin.post("/v1/documents", files={"collection": (None, "uploads")}), 400, "No file")
    assert_error(upload(admin, {"a.txt": b"x", "b.txt": b"y"} | {"../a.txt": b"z"}), 400, "appears twice")


def test_an_announced_huge_upload_is_refused_before_it_is_read(server: Any) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.putrequest("POST", "/v1/documents")
    connection.putheader("Authorization", f"Bearer {ADMIN}")
    connection.putheader("Content-Type", "multipart/form-data; boundary=x")
    connection.putheader("Content-Length", str(10**10))
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 413 and "larger than the server accepts" in json.loads(response.read())["error"]
    connection.close()


def test_upload_names_and_collections(admin: httpx.Client) -> None:
    assert_error(upload(admin, {"a.txt": b"x"}, collection="bad name!"), 400, "Invalid collection name")


# ---------------------------------------------------------------------- server-side loads and path rules


def test_load_job_and_path_rules(admin: httpx.Client, root: Path) -> None:
    job = load(admin, [str(root / "mixed")], "mixed_paths")
    assert job["status"] == "partial" and job["results"]["loaded"] == [str((root / "mixed" / "good.txt").resolve())]
    assert [f["source"] for f in job["results"]["failed"]] == [str((root / "mixed" / "broken.pdf").resolve())]

    outside = root.parent / "secret.txt"
    assert_error(
        admin.post("/v1/load", json={"inputs": [str(outside)], "collection": "x"}), 403, "outside the allowed roots"
    )
    assert_error(
        admin.post("/v1/load", json={"inputs": [str(root / "docs" / ".." / ".." / "secret.txt")]}), 403, "'..'"
    )
    assert_error(admin.post("/v1/load", json={"inputs": [str(root / "escape.txt")]}), 403, "outside the allowed roots")
    assert_error(admin.post("/v1/load", json={"inputs": ["docs/volcano.md"]}), 400, "relative")
    assert_error(admin.post("/v1/load", json={"inputs": ["ftp://example.com/file.txt"]}), 400, "Only http and https")
    assert_error(admin.post("/v1/load", json={"inputs": []}), 400, "No input given")  # plan_load's, as for the CLI
    # the whole folder: the escaping symlink is refused by name, the secret is never read
    job = load(admin, [str(root)], "whole_root")
    refused = {f["source"]: f["reason"] for f in job["results"]["failed"]}
    assert "outside the allowed roots" in refused[str(root / "escape.txt")]
    assert not any("secret" in ref for ref in job["results"]["loaded"])


def test_concurrent_loads_of_the_same_files_do_not_duplicate_chunks(server: Any, root: Path) -> None:
    job_ids: list[str] = []
    lock = threading.Lock()

    def submit() -> None:
        with client_for(server) as client:
            response = client.post("/v1/load", json={"inputs": [str(root / "docs")], "collection": "concurrent"})
            assert response.status_code == 202
            with lock:
                job_ids.append(response.json()["job_id"])

    threads = [threading.Thread(target=submit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with client_for(server) as client:
        jobs = [wait_job(client, job_id) for job_id in job_ids]
        assert all(job["status"] == "succeeded" for job in jobs)
        loaders = [job for job in jobs if job["results"]["loaded"]]
        assert len(loaders) == 1 and len(loaders[0]["results"]["loaded"]) == 3
        assert all(len(job["results"]["skipped_unchanged"]) == 3 for job in jobs if job is not loaders[0])
        sources = client.get("/v1/collections/concurrent/sources").json()
        assert len(sources) == 3 and all(s["complete"] for s in sources)
        assert sum(s["chunks"] for s in sources) == loaders[0]["results"]["chunks_inserted"]


def test_a_resumed_job_is_planned_through_the_same_checks(server: Any, root: Path) -> None:
    """A job's recorded spec is run again only through the load service's checks (the server's
    allowed roots today, the crawl bounds), not rebuilt around them."""
    from deepsearcher.app.path_rules import PathRefusedError
    from deepsearcher.server import services
    from deepsearcher.types.errors import BadInputError

    state = server.app.state.deepsearcher
    inside = {"paths": [str(root / "mixed" / "good.txt")], "urls": [], "crawl": {"max_depth": 0}}
    assert callable(services.load_work(state, "resumed", inside, resuming=True))
    outside = {**inside, "paths": [str(root.parent / "secret.txt")]}
    with pytest.raises(PathRefusedError, match="outside the allowed roots"):
        services.load_work(state, "resumed", outside, resuming=True)
    with pytest.raises(BadInputError, match="max_depth must be between 0 and"):
        services.load_work(state, "resumed", {**inside, "crawl": {"max_depth": 99}}, resuming=True)
    request = services.request_from_spec("kb", {**inside, "force_new_collection": True}, resuming=True)
    assert request.force_new_collection is False, "a resumed job never drops the collection again"
    recorded = services.job_spec(request.model_copy(update={"crawl_options": {"proxy": "http://10.0.0.1"}}))
    with pytest.raises(BadInputError, match="crawl_options are a local caller's"):
        services.load_work(state, "resumed", recorded, resuming=True)  # the request's own checks, for remote callers


def test_load_a_web_page(admin: httpx.Client) -> None:
    page = "<html><head><title>Tides</title></head><body><p>The Bay of Fundy has the highest tides on Earth, up to 16 metres.</p></body></html>"  # noqa: E501 - a literal read better whole
    with LocalServer({"/tides": Reply(page)}) as site:
        job = load(admin, [site.url("/tides")], "web", max_depth=0, max_pages=5)
    assert job["status"] == "succeeded", job
    assert job["results"]["loaded"] == [site.url("/tides")]


# ---------------------------------------------------------------------- queries


def test_query_returns_the_result_object(admin: httpx.Client, llm: Any, science: str) -> None:
    script(llm)
    response = admin.post(
        "/v1/query", json={"question": "Who built the first compiler?", "agent": "naive", "collections": ["science"]}
    )
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["agent"] == "NaiveRAG" and result["answer"].startswith("Grace Hopper built it [")
    assert [s["kind"] for s in result["steps"]] == ["collections", "search", "answer"]
    assert result["usage"]["total_tokens"] > 0 and any(s["cited"] for s in result["sources"])

    deep = admin.post(
        "/v1/query",
        json={
            "question": "Who built the first compiler?",
            "agent": "deep",
            "max_iter": 1,
            "collections": ["science"],
            "max_tokens": 50000,
        },
    )
    assert deep.status_code == 200 and deep.json()["agent"] == "DeepSearch" and "Grace Hopper" in deep.json()["answer"]
    assert_error(
        admin.post("/v1/query", json={"question": "x", "collections": ["nowhere"]}),
        404,
        "Collection 'nowhere' does not exist",
    )
    assert_error(admin.post("/v1/query", json={"question": "x", "agent": "smart"}), 422, "agent")


def sse_events(response: httpx.Response) -> list[tuple[str, Any]]:
    events: list[tuple[str, Any]] = []
    name, data = None, []
    for line in response.iter_lines():
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            data.append(line.split(":", 1)[1].strip())
        elif line == "" and name is not None:
            events.append((name, json.loads("\n".join(data))))
            name, data = None, []
    return events


def test_query_streams_steps_then_tokens_then_the_result(admin: httpx.Client, llm: Any, science: str) -> None:
    script(llm)
    body = {"question": "Who built the first compiler?", "agent": "deep", "max_iter": 1, "collections": ["science"]}
    with admin.stream("POST", "/v1/query", json=body, headers={"Accept": "text/event-stream"}) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response)
    kinds = [name for name, _ in events]
    assert kinds[-1] == "result" and kinds.count("result") == 1 and "error" not in kinds
    first_token = kinds.index("token")
    steps_before = [data["kind"] for name, data in events[:first_token] if name == "step"]
    assert steps_before[:2] == ["collections", "sub_queries"] and "search" in steps_before
    after = [(name, data.get("kind")) for name, data in events[first_token:-1] if name != "token"]
    assert after == [("step", "answer")]  # only the answer's own "done" step follows the tokens
    result = events[-1][1]
    tokens = "".join(data["token"] for name, data in events if name == "token")
    assert tokens.strip().startswith("Grace Hopper built it") and result["answer"].startswith("Grace Hopper built it")
    assert result["agent"] == "DeepSearch" and [s["kind"] for s in result["steps"]] == steps_before + ["answer"]


def test_query_failure_is_an_error_event_or_a_json_error(admin: httpx.Client, llm: Any, science: str) -> None:
    script(llm)
    llm.rules.insert(
        0,
        type(llm.rules[0])("Answer the question using only", (Fail.server_error(500, "model exploded"),), "last_user"),
    )
    body = {"question": "Who built the first compiler?", "agent": "naive", "collections": ["science"]}
    with admin.stream("POST", "/v1/query", json=body, headers={"Accept": "text/event-stream"}) as response:
        events = sse_events(response)
    assert [name for name, _ in events][-1] == "error" and "result" not in [name for name, _ in events]
    assert "OpenAI call failed" in events[-1][1]["message"] and "500" in events[-1][1]["message"]
    assert_error(admin.post("/v1/query", json=body), 502, "OpenAI call failed")


def test_health_reports_the_last_query_llm_failure(admin: httpx.Client, llm: Any, science: str) -> None:
    body = {"question": "Who built the first compiler?", "agent": "naive", "collections": ["science"]}
    script(llm)
    assert admin.post("/v1/query", json=body).status_code == 200
    health = admin.get("/health").json()
    assert health["llm_provider"] == "OpenAI" and health["llm_error"] is None
    llm.rules.insert(
        0, type(llm.rules[0])("Answer the question using only", (Fail.server_error(503, "model asleep"),), "last_user")
    )
    assert_error(admin.post("/v1/query", json=body), 502, "OpenAI call failed")
    assert "OpenAI call failed" in admin.get("/health").json()["llm_error"]
    llm.rules.insert(
        0, type(llm.rules[0])("Answer the question using only", (Fail.server_error(503, "model asleep"),), "last_user")
    )
    with admin.stream("POST", "/v1/query", json=body, headers={"Accept": "text/event-stream"}) as response:
        assert sse_events(response)[-1][0] == "error"  # a streamed failure is recorded too
    assert "503" in admin.get("/health").json()["llm_error"]
    script(llm)  # the LLM answers again: the failure is forgotten
    assert admin.post("/v1/query", json=body).status_code == 200
    assert admin.get("/health").json()["llm_error"] is None


def test_an_unparseable_llm_reply_is_a_bad_gateway(admin: httpx.Client, llm: Any, science: str) -> None:
    script(llm)
    llm.rules.insert(0, type(llm.rules[0])("Break the question below", ("I would rather not say.",), "last_user"))
    body = {"question": "Who built the first compiler?", "agent": "deep", "collections": ["science"]}
    message = assert_error(admin.post("/v1/query", json=body), 502, "Could not parse the LLM output")
    assert "sub_queries" in message


# ---------------------------------------------------------------------- restricted keys


def test_a_restricted_key_sees_and_touches_only_its_collections(
    reader: httpx.Client, admin: httpx.Client, llm: Any, science: str, root: Path
) -> None:
    other = load(admin, [str(root / "docs" / "bread.txt")], "kitchen", description="Baking")
    assert other["status"] == "succeeded"
    assert [c["name"] for c in reader.get("/v1/collections").json()] == ["science"]
    assert {"science", "kitchen"} <= {c["name"] for c in admin.get("/v1/collections").json()}
    assert reader.get("/v1/collections/science/sources").status_code == 200
    forbidden = [
        reader.get("/v1/collections/kitchen/sources"),
        reader.delete("/v1/collections/kitchen"),
        reader.request("DELETE", "/v1/sources", json={"collection": "kitchen", "reference": "x"}),
        reader.post("/v1/load", json={"inputs": [str(root / "docs")], "collection": "kitchen"}),
        reader.post("/v1/load", json={"inputs": [str(root / "docs")]}),  # the default collection
        upload(reader, {"a.txt": b"text"}, collection="kitchen"),
        reader.post("/v1/query", json={"question": "bread?", "collections": ["kitchen"]}),
        reader.get(f"/v1/jobs/{other['id']}"),
        reader.post("/load-files/", json={"paths": [str(root / "docs")], "collection_name": "kitchen"}),
    ]
    for response in forbidden:
        assert_error(response, 403, "may not use collection")
    assert all(job["collection"] == "science" for job in reader.get("/v1/jobs").json())

    script(llm)
    result = reader.post("/v1/query", json={"question": "Who built the first compiler?", "agent": "naive"})
    assert result.status_code == 200, result.text
    routed = [s for s in result.json()["steps"] if s["kind"] == "collections"][0]
    assert routed["collections"] == ["science"]
    assert not any("kitchen" in request.prompt_text for request in llm.requests)  # never offered to the router


# ---------------------------------------------------------------------- collections and sources


def test_collections_and_sources(admin: httpx.Client, root: Path) -> None:
    assert load(admin, [str(root / "docs")], "manage", description="To be managed")["status"] == "succeeded"
    collections = {c["name"]: c for c in admin.get("/v1/collections").json()}
    entry = collections["manage"]
    assert entry == {
        "name": "manage",
        "description": "To be managed",
        "dim": 384,
        "embedding_model": entry["embedding_model"],
        "sources": 3,
    }
    assert entry["embedding_model"]
    sources = admin.get("/v1/collections/manage/sources").json()
    reference = str((root / "docs" / "bread.txt").resolve())
    assert reference in [s["reference"] for s in sources] and set(sources[0]) >= {"reference", "chunks"}
    deleted = admin.request("DELETE", "/v1/sources", json={"collection": "manage", "reference": reference})
    assert deleted.status_code == 200 and deleted.json()["deleted"] >= 1
    assert_error(
        admin.request("DELETE", "/v1/sources", json={"collection": "manage", "reference": reference}), 404, "No source"
    )
    assert len(admin.get("/v1/collections/manage/sources").json()) == 2
    assert_error(admin.get("/v1/collections/nothing_here/sources"), 404, "Collection 'nothing_here' does not exist")
    assert admin.delete("/v1/collections/manage").json() == {"deleted": "manage"}
    assert "manage" not in {c["name"] for c in admin.get("/v1/collections").json()}
    assert_error(admin.delete("/v1/collections/manage"), 404, "does not exist")
    assert_error(admin.get("/v1/jobs/no-such-job"), 404, "No job")


# ---------------------------------------------------------------------- DeepSearcher-compatible endpoints


def test_compatible_endpoints(admin: httpx.Client, llm: Any, root: Path, science: str) -> None:
    first = admin.post(
        "/load-files/",
        json={"paths": [str(root / "docs")], "collection_name": "compat", "collection_description": "Old clients"},
    )
    assert first.status_code == 200 and first.json()["message"].startswith(
        "Files loaded successfully into 'compat' (3 new"
    )
    again = admin.post("/load-files/", json={"paths": str(root / "docs" / "bread.txt"), "collection_name": "compat"})
    assert again.status_code == 200 and "1 unchanged" in again.json()["message"]
    partial = admin.post(
        "/load-files/", json={"paths": [str(root / "mixed")], "collection_name": "compat", "batch_size": 8}
    )
    assert partial.status_code == 207 and "broken.pdf" in partial.json()["message"]
    failed = admin.post(
        "/load-files/", json={"paths": [str(root / "mixed" / "broken.pdf")], "collection_name": "compat"}
    )
    assert_error(failed, 422, "Nothing was loaded", "broken.pdf")
    assert_error(admin.post("/load-files/", json={"paths": ["/etc/passwd"]}), 403, "outside the allowed roots")
    assert_error(admin.post("/load-website/", json={"urls": ["ftp://example.com/x"]}), 400, "Only http and https")

    page = "<html><head><title>Moss</title></head><body><p>Sphagnum moss can hold twenty times its weight in water.</p></body></html>"  # noqa: E501 - a literal read better whole
    with LocalServer({"/moss": Reply(page)}) as site:
        website = admin.post("/load-website/", json={"urls": site.url("/moss"), "collection_name": "compat_web"})
    assert website.status_code == 200 and website.json()["message"].startswith("Website loaded successfully")

    script(llm)
    answer = admin.get("/query/", params={"original_query": "Who built the first compiler?", "max_iter": 1})
    assert answer.status_code == 200, answer.text
    assert set(answer.json()) == {"result", "consume_token"}
    assert "Grace Hopper" in answer.json()["result"] and answer.json()["consume_token"] > 0


# ---------------------------------------------------------------------- errors


def test_errors_are_json_without_tracebacks(server: Any, admin: httpx.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_error(admin.post("/v1/query", json={}), 422, "question: Field required")
    assert_error(
        admin.post("/v1/query", content=b"{not json", headers={"content-type": "application/json"}),
        422,
        "not valid JSON",
    )
    assert_error(admin.post("/v1/query", json={"question": "x", "colections": ["a"]}), 422, "colections")
    assert_error(admin.get("/v1/nothing"), 404, "Not found")
    assert_error(admin.put("/v1/collections"), 405, "PUT")

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(server.app.state.deepsearcher.current().vector_db, "list_collections", explode)
    message = assert_error(admin.get("/v1/collections"), 500, "Internal server error (error id ")
    assert "secret" not in message and "RuntimeError" not in message
