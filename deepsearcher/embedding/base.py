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
    #: Tokens the model reads from one text (its declared window); None: not declared. A local
    #: encoder that declares one embeds a longer text as several windows (see `_onnx_runtime`),
    #: and the default chunk size follows it (`default_chunk_size`), so no text goes unread.
    window_tokens: int | None = None

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

    def default_chunk_size(self) -> int:
        """Characters per chunk when the user sets none: what fits the declared window.

        A chunk longer than the window would have its tail cut off by the model (MiniLM reads
        256 tokens, ~1,000 characters of English, of the old 1,500-character chunks)."""
        return chunk_size_for_window(self.window_tokens)

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


#: Chunk size when the model declares no window (DeepSearcher's default).
UNDECLARED_CHUNK_SIZE = 1500
#: Characters per MiniLM (WordPiece) token, rounded down from the shared sets' English
#: Wikipedia text (HotpotQA 4.50, MuSiQue 4.62, 2Wiki 4.26) to leave room for code, names and
#: numbers, which cut into more tokens. A chunk that still overflows is embedded as windows.
CHARS_PER_TOKEN = 3.6
#: Tokens kept free for the special tokens and the title/heading put before the text.
RESERVED_TOKENS = 24


def chunk_size_for_window(window_tokens: int | None) -> int:
    """Characters that fit a window of `window_tokens` (MiniLM's 256: 835)."""
    if not window_tokens:
        return UNDECLARED_CHUNK_SIZE
    return max(200, int((window_tokens - RESERVED_TOKENS) * CHARS_PER_TOKEN))


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

    @property
    def window_tokens(self) -> int | None:  # type: ignore[override]  # what the wrapped provider reads
        return self.inner.window_tokens

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

    @property
    def dimension(self) -> int:
        return self.inner.dimension
