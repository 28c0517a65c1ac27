"""Subclasses written the way DeepSearcher users wrote them against upstream's small bases:
only upstream's abstract methods, upstream's signatures (no `**kwargs`), no `super().__init__()`.

`JsonFileStore` is a real store (vectors in a JSON file, cosine search with numpy) so that a
CLI `load` and a later `query` in another command see the same data.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import numpy as np

from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.loader.web_crawler.base import BaseCrawler
from deepsearcher.types import Document
from deepsearcher.vector_db.base import BaseVectorDB, CollectionInfo, RetrievalResult


class JsonFileStore(BaseVectorDB):
    """upstream's four methods plus list_collections; signatures without **kwargs."""

    def __init__(self, path: str, default_collection: str = "deepsearcher"):
        self.path = Path(path)
        self.default_collection = default_collection

    def _read(self) -> dict:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def _write(self, data: dict) -> None:
        self.path.write_text(json.dumps(data))

    def init_collection(self, dim, collection, description, force_new_collection=False):
        data = self._read()
        if force_new_collection or collection not in data:
            data[collection] = {"description": description, "rows": []}
        self._write(data)

    def insert_data(self, collection, chunks):
        data = self._read()
        rows = data[collection]["rows"]
        for chunk in chunks:
            rows.append({"vector": list(map(float, chunk.embedding)), "text": chunk.text, "reference": chunk.reference})
        self._write(data)  # returns None, as upstream's stores did

    def search_data(self, collection, vector, top_k=5):
        rows = self._read()[collection]["rows"]
        matrix = np.array([row["vector"] for row in rows])
        scores = matrix @ np.array(vector) / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(vector))
        best = np.argsort(-scores)[:top_k]
        return [
            RetrievalResult(
                embedding=rows[i]["vector"],
                text=rows[i]["text"],
                reference=rows[i]["reference"],
                metadata={},
                score=float(scores[i]),
            )
            for i in best
        ]

    def list_collections(self):
        return [CollectionInfo(collection_name=name, description=v["description"]) for name, v in self._read().items()]

    def clear_db(self, collection="deepsearcher"):
        data = self._read()
        data.pop(collection, None)
        self._write(data)


class QueryOnlyEmbedding(BaseEmbedding):
    """upstream's base asked for embed_query and dimension; embed_documents is built from them."""

    def __init__(self, model: BaseEmbedding):
        self.model = model
        self.query_calls = 0

    def embed_query(self, text):
        self.query_calls += 1
        return self.model.embed_query(text)

    @property
    def dimension(self):
        return self.model.dimension


class UpperCaseLoader(BaseLoader):
    """A loader that calls super().__init__(**kwargs), as upstream's did."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def load_file(self, file_path):
        text = Path(file_path).read_text(encoding="utf-8")
        return [Document(page_content=text.upper(), metadata={"reference": file_path})]

    @property
    def supported_file_types(self):
        return ["txt"]


class UrllibCrawler(BaseCrawler):
    """Only upstream's abstract crawl_url; an HTTP error is that URL's failure."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def crawl_url(self, url, **crawl_kwargs):
        with urllib.request.urlopen(url, timeout=5) as reply:
            text = reply.read().decode("utf-8")
        return [Document(page_content=text, metadata={"reference": url})]
