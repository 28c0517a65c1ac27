"""The embedding contract every provider implements."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext

from tqdm.auto import tqdm

from deepsearcher.types import Chunk
from deepsearcher.utils.contracts import ContractMeta, overrides

LoadNotifier = Callable[[str], AbstractContextManager]
_load_notifier: LoadNotifier = lambda description: nullcontext()  # noqa: E731


def set_model_load_notifier(notifier: LoadNotifier | None) -> None:
    """Let a front-end show something (the CLI: a spinner) while a model loads lazily."""
    global _load_notifier
    _load_notifier = notifier or (lambda description: nullcontext())


def model_loading(description: str) -> AbstractContextManager:
    """Wrap a slow, one-time model load: `with model_loading("Loading ..."): ...`."""
    return _load_notifier(description)


class BaseEmbedding(metaclass=ContractMeta):
    """Turns text into vectors; queries and documents may be embedded differently.

    A provider implements `dimension` and `embed_documents` or `embed_query` (either one:
    the other is built from it; upstream's base asked for `embed_query`)."""

    #: A stable name stored with each collection so another model is refused later.
    model_name: str = ""
    #: Computes on this machine: calling it ahead of need (a warm-up) costs no request or bill.
    runs_locally: bool = False

    @classmethod
    def __missing_methods__(cls) -> set[str]:
        if overrides(cls, cls._contract_base, "embed_documents") or overrides(cls, cls._contract_base, "embed_query"):
            return set()
        return {"embed_documents"}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors for passages to be stored (by default one `embed_query` call each)."""
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        """Vector for a search query (providers with query-specific modes override this)."""
        return self.embed_documents([text])[0]

    @property
    @abstractmethod
    def dimension(self) -> int:
        """Length of every vector this model returns."""

    def embed_chunks(self, chunks: list[Chunk], batch_size: int = 64, show_progress: bool = True) -> list[Chunk]:
        """Fill `chunk.embedding` in batches, indexing each chunk's `index_text` (title + text)."""
        batches: Iterable[int] = range(0, len(chunks), batch_size)
        if show_progress and len(chunks) > batch_size:
            batches = tqdm(batches, desc="Embedding", unit="batch")
        for start in batches:
            batch = chunks[start : start + batch_size]
            vectors = self.embed_documents([chunk.index_text for chunk in batch])
            for chunk, vector in zip(batch, vectors, strict=False):
                chunk.embedding = vector
        return chunks


class PrefixedEmbedding(BaseEmbedding):
    """A local encoder of text lists; the model's query and passage prefixes are added here, once.

    Models trained with instruction prefixes (E5: "query: " / "passage: ") retrieve worse
    without them, so the provider adds them and callers always pass plain text."""

    query_prefix: str = ""
    document_prefix: str = ""
    runs_locally = True

    @abstractmethod
    def _encode(self, texts: list[str]) -> list[list[float]]:
        """Vectors for `texts`, already prefixed, in their order."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode([self.document_prefix + text for text in texts])

    def embed_query(self, text: str) -> list[float]:
        return self._encode([self.query_prefix + text])[0]


class DelegatingEmbedding(BaseEmbedding):
    """A provider that is another provider under a name of its own (DeepSearcher's names, the
    bundled model on either runtime, a renamed model): every call goes to `inner`."""

    inner: BaseEmbedding

    @property
    def runs_locally(self) -> bool:  # type: ignore[override]  # what the wrapped provider is
        return self.inner.runs_locally

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

    @property
    def dimension(self) -> int:
        return self.inner.dimension
