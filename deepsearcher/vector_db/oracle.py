"""Upstream DeepSearcher's module path for `OracleDB` (defined in vector_db/oracle_db.py)."""

from deepsearcher.vector_db.base import BaseVectorDB, CollectionInfo, RetrievalResult
from deepsearcher.vector_db.oracle_db import OracleDB

__all__ = ["BaseVectorDB", "CollectionInfo", "OracleDB", "RetrievalResult"]
