"""The small corpus and builders the store contract tests use (`vector_store_contract`).

Dense search ranks the laptop-repair passages above the memo; only the memo shares the rare
ticket number with the query, and no other passage shares any word with it. Plain functions
and constants (no pytest), so the project's own tests import them too.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from deepsearcher.embedding.base import BaseEmbedding, DelegatingEmbedding
from deepsearcher.types import Chunk
from deepsearcher.types.json import JSONValue

if TYPE_CHECKING:
    from deepsearcher.vector_db.base import BaseVectorDB

MODEL = "all-MiniLM-L6-v2"
TARGET = "Internal memo: ticket QZ-8841 was closed after the vendor shipped a firmware patch."
DISTRACTORS = [
    "How to fix a notebook computer that will not power up: check the charger and hold the power button.",
    "If your notebook does not boot, remove the battery and try a hard reset.",
    "A notebook that will not power up often has a faulty charging port.",
    "Troubleshooting boot failures of portable computers begins with the power supply.",
    "When a computer will not boot, test the outlet and the power cable first.",
]
QUERY = "laptop dead: screen black, fans silent (QZ-8841)"


def make_docs(folder: Path) -> Path:
    """A few real files about distinct topics, so searches have a clear right answer."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "volcano.md").write_text(
        "# Volcanoes\n\nThe Krafla caldera in Iceland erupted nine times between 1975 and 1984, "
        "an episode known as the Krafla Fires.\n",
        encoding="utf-8",
    )
    (folder / "bread.txt").write_text(
        "Sourdough bread rises because wild yeast and lactobacilli in the starter ferment the flour, "
        "producing carbon dioxide and lactic acid.\n",
        encoding="utf-8",
    )
    (folder / "records.jsonl").write_text(
        '{"title": "Ada Lovelace", "text": "Ada Lovelace wrote the first published algorithm for '
        "Babbage's Analytical Engine.\"}\n"
        '{"title": "Grace Hopper", "text": "Grace Hopper built the first compiler, the A-0 system, in 1952."}\n',
        encoding="utf-8",
    )
    return folder


class RenamedEmbedding(DelegatingEmbedding):
    """The same vectors under another model name: enough to trip the model guard."""

    def __init__(self, inner: BaseEmbedding, model_name: str) -> None:
        self.inner = inner
        self.model_name = model_name


def make_chunks(
    embedding: BaseEmbedding, texts: list[str], reference: str = "doc.txt", **metadata: JSONValue
) -> list[Chunk]:
    """Embedded chunks of `texts`, all of one source."""
    chunks = [Chunk(text=text, reference=reference, metadata=dict(metadata)) for text in texts]
    return embedding.embed_chunks(chunks, show_progress=False)


def loaded(
    store: BaseVectorDB,
    embedding: BaseEmbedding,
    collection: str = "docs",
    texts: list[str] | None = None,
    **init: Any,
) -> list[Chunk]:
    """A collection of `store` holding `texts` (default: the target memo and the distractors)."""
    store.init_collection(embedding.dimension, collection, embedding_model=MODEL, **init)
    chunks = make_chunks(embedding, texts if texts is not None else [TARGET, *DISTRACTORS])
    assert store.insert_data(collection, chunks) == len(chunks)
    return chunks
