"""Upstream DeepSearcher's module path (spelt so there) for `FastEmbedEmbedding`,
defined in embedding/fastembed_embedding.py."""

from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.embedding.fastembed_embedding import FastEmbedEmbedding

__all__ = ["BaseEmbedding", "FastEmbedEmbedding"]
