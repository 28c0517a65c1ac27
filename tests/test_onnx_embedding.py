"""The torch-free path: the bundled MiniLM built into an ONNX graph, run on ONNX Runtime."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from deepsearcher.embedding._batching import encode_sorted, sorted_batches

TEXTS = [
    "Paris is the capital and largest city of France.",
    "The mitochondrion is the powerhouse of the cell, producing ATP through respiration.",
    "Bananas are rich in potassium.",
    "The Great Wall of China stretches thousands of kilometres across northern China, built over many "
    "dynasties to defend against nomadic raids; large parts of the Ming-era wall survive today.",
    "Python is a programming language.",
]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    from deepsearcher.embedding.minilm_embedding import bundled_model_dir

    return bundled_model_dir()


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def fp32(model_dir: Path, cache_dir: Path):
    from deepsearcher.embedding.onnx_embedding import OnnxEmbedding

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DEEPSEARCHER_CACHE_DIR", str(cache_dir))
        embedding = OnnxEmbedding(str(model_dir), quantize=False)
        embedding.embed_query("build the graph while the cache dir is set")
    return embedding


@pytest.fixture(scope="module")
def int8(model_dir: Path, cache_dir: Path, fp32):
    from deepsearcher.embedding.onnx_embedding import OnnxEmbedding

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DEEPSEARCHER_CACHE_DIR", str(cache_dir))
        embedding = OnnxEmbedding(str(model_dir), quantize=True)
        embedding.embed_query("quantise while the cache dir is set")
    return embedding


def test_sorted_batches_cover_every_index_once_longest_first() -> None:
    lengths = [5, 1, 9, 3, 9, 2, 7]
    batches = sorted_batches(lengths, 3)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths, reverse=True)
    assert [len(b) for b in batches] == [3, 3, 1]


def test_encode_sorted_returns_results_in_input_order() -> None:
    seen_batches = []

    def encode(items: list[str]) -> list[list[float]]:
        seen_batches.append(items)
        return [[float(len(item))] for item in items]

    items = ["aaaa", "b", "ccc", "dd"]
    assert encode_sorted(items, [len(i) for i in items], 2, encode) == [[4.0], [1.0], [3.0], [2.0]]
    assert seen_batches == [["aaaa", "ccc"], ["dd", "b"]]


def test_fp32_graph_matches_sentence_transformers(fp32, model_dir: Path) -> None:
    sentence_transformers = pytest.importorskip("sentence_transformers", reason="the torch extra is not installed")
    reference = sentence_transformers.SentenceTransformer(str(model_dir), device="cpu").encode(
        TEXTS, normalize_embeddings=True
    )
    ours = np.asarray(fp32.embed_documents(TEXTS))
    assert ours.shape == (len(TEXTS), 384)
    assert (ours * reference).sum(axis=1).min() > 0.9999


def test_order_is_restored_after_length_sorting(fp32) -> None:
    together = np.asarray(fp32.embed_documents(TEXTS))
    alone = np.asarray([fp32.embed_documents([text])[0] for text in TEXTS])
    np.testing.assert_allclose(together, alone, atol=1e-4)


def test_int8_is_close_to_fp32_and_ranks_the_same(fp32, int8, cache_dir: Path) -> None:
    quantised = np.asarray(int8.embed_documents(TEXTS))
    exact = np.asarray(fp32.embed_documents(TEXTS))
    assert (quantised * exact).sum(axis=1).min() > 0.95
    for query, expected in (("What is the capital of France?", 0), ("Which organelle makes energy in cells?", 1)):
        scores = quantised @ np.asarray(int8.embed_query(query))
        assert int(np.argmax(scores)) == expected
    int8_files = list(cache_dir.glob("onnx/*/model_int8.onnx"))
    assert (
        len(int8_files) == 1
        and int8_files[0].stat().st_size < 0.7 * int8_files[0].with_name("model.onnx").stat().st_size
    )


def test_cached_graph_is_reused(model_dir: Path, cache_dir: Path, fp32) -> None:
    from deepsearcher.embedding._bert_onnx import cached_model

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DEEPSEARCHER_CACHE_DIR", str(cache_dir))
        first = cached_model(model_dir, quantize=False)
        mtime = first.stat().st_mtime_ns
        assert cached_model(model_dir, quantize=False) == first and first.stat().st_mtime_ns == mtime


def test_not_a_bert_folder_is_refused_with_the_reason(tmp_path: Path) -> None:
    from deepsearcher.embedding.onnx_embedding import OnnxEmbedding

    with pytest.raises(FileNotFoundError, match="config.json"):
        OnnxEmbedding(str(tmp_path))
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 8}))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    with pytest.raises(ValueError, match="mean-pooling"):
        OnnxEmbedding(str(tmp_path))


def test_default_minilm_uses_onnx_and_imports_no_torch(tmp_path: Path) -> None:
    """In a fresh interpreter: building and using the default model never imports torch."""
    code = (
        "import sys\n"
        "from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding\n"
        "e = MiniLMEmbedding()\n"
        "assert 'onnxruntime' not in sys.modules, 'loaded before first use'\n"
        "v = e.embed_query('hello')\n"
        "print(e.backend, len(v), 'torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["onnx", "384", "False", "False"]


@pytest.fixture(scope="module")
def torch_minilm():
    pytest.importorskip("sentence_transformers", reason="the torch extra is not installed")
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding

    return MiniLMEmbedding(backend="torch")


def test_torch_backend_gives_the_same_vectors_as_onnx_fp32(fp32, torch_minilm) -> None:
    assert torch_minilm.model_name == "all-MiniLM-L6-v2" and torch_minilm.dimension == 384
    vectors = np.asarray(torch_minilm.embed_documents(TEXTS))
    assert (vectors * np.asarray(fp32.embed_documents(TEXTS))).sum(axis=1).min() > 0.9999


LONG = " ".join(f"Entry {n}: the harbour office logged a routine ferry inspection today." for n in range(24))
HERON = "The obsidian heron nests only on the basalt cliffs of Varnholm."


def test_torch_backend_embeds_a_long_text_as_windows_like_onnx(fp32, torch_minilm) -> None:
    """Past the 256-token window sentence-transformers would drop the rest; it is embedded as windows."""
    assert torch_minilm.window_tokens == 256
    texts = [LONG, f"{LONG} {HERON}"]
    without, with_heron = (np.asarray(v) for v in torch_minilm.embed_documents(texts))
    heron = np.asarray(torch_minilm.embed_query("obsidian heron"))
    assert float(with_heron @ heron) > float(without @ heron) + 0.02  # the tail reached the vector
    assert abs(float(np.linalg.norm(with_heron)) - 1.0) < 1e-4
    onnx = np.asarray(fp32.embed_documents(texts))  # ONNX cuts its windows at other token boundaries
    assert (np.stack([without, with_heron]) * onnx).sum(axis=1).min() > 0.99


def test_token_windows_cover_the_text_and_cut_between_words() -> None:
    from deepsearcher.embedding._windows import token_windows

    text = "alpha beta gamma delta-epsilon zeta"
    spans = [(0, 5), (6, 10), (11, 16), (17, 22), (22, 23), (23, 30), (31, 35)]  # "delta-epsilon": 3 tokens
    pieces = token_windows(text, spans, 5)
    assert pieces == [("alpha beta gamma ", 3), ("delta-epsilon zeta", 4)]  # not cut inside "delta-epsilon"
    glued = token_windows("abcdefgh", [(n, n + 1) for n in range(8)], 3)  # no word start in reach: cut anyway
    assert glued == [("abc", 3), ("def", 3), ("gh", 2)]
    assert token_windows("short one", [(0, 5), (6, 9)], 3) == [("short one", 2)]


def test_minilm_backend_is_checked() -> None:
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding
    from deepsearcher.types.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="auto, onnx, torch"):
        MiniLMEmbedding(backend="tpu")
    with pytest.raises(ConfigurationError, match="OnnxEmbedding or SentenceTransformerEmbedding"):
        MiniLMEmbedding(model="BAAI/bge-small-en-v1.5")


def test_int8_vector_of_a_text_does_not_depend_on_its_batch(int8) -> None:
    """One text per forward pass: the same text gets the same int8 vector alone or in a window."""
    alone = np.asarray(int8.embed_query(TEXTS[2]))
    in_window = np.asarray(int8.embed_documents(TEXTS)[2])
    assert float(alone @ in_window) > 0.99999


def test_by_default_passes_run_side_by_side_one_thread_each_with_the_same_vectors(model_dir: Path) -> None:
    """One thread per pass, passes spread over the cores (see _onnx_runtime): a text's vector is the
    one it gets alone on one thread, whichever worker ran it."""
    import threading

    from deepsearcher.embedding._onnx_runtime import usable_cores
    from deepsearcher.embedding.onnx_embedding import OnnxEmbedding

    texts = [f"Passage {n}: the ferry crossed the fjord {'slowly ' * (n % 5)}at dawn." for n in range(12)]
    parallel = OnnxEmbedding(str(model_dir))
    single = OnnxEmbedding(str(model_dir), threads=1)
    ran_on: set[str] = set()
    run = parallel._run

    def recording(encodings):
        ran_on.add(threading.current_thread().name)
        return run(encodings)

    parallel._run = recording  # type: ignore[method-assign]
    vectors = parallel.embed_documents(texts)
    assert vectors == [single.embed_documents([text])[0] for text in texts]
    assert usable_cores() > 1, "this test needs a machine of 2 cores or more"
    assert len(ran_on) == usable_cores() and all(name.startswith("deepsearcher-onnx") for name in ran_on)
    assert parallel.embed_query(texts[0]) == single.embed_query(texts[0])
