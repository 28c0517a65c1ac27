"""Amazon Bedrock embedding models (Titan, Cohere) through boto3."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._http import (
    QUERY,
    BadResponse,
    RemoteEmbedding,
    classify_http,
    vector_of,
)
from deepsearcher.transport.aws import botocore_failure, runtime_client
from deepsearcher.transport.retry import Failure
from deepsearcher.types.json import JSONObject


def _classify(exc: BaseException) -> Failure:
    """botocore errors as retry decisions (ThrottlingException is a 429, ServiceUnavailable a 503, ...)."""
    failure = botocore_failure(
        exc,
        timeout=lambda: Failure("timeout", "timed out", True),
        connection=lambda error: Failure(
            "connection",
            f"cannot connect ({error})",
            True,
            hint="Check region_name / endpoint_url",
        ),
    )
    return failure or classify_http(exc)


@register_provider("embedding", extra="bedrock", requires=("boto3",), env_var="AWS_ACCESS_KEY_ID")
class BedrockEmbedding(RemoteEmbedding):
    """Bedrock's invoke_model for amazon.titan-embed-text-v2:0 (default), titan v1 and Cohere embed models.

    Credentials come from boto3's usual chain (aws_access_key_id / aws_secret_access_key
    config, $AWS_ACCESS_KEY_ID / $AWS_SECRET_ACCESS_KEY, $AWS_PROFILE, instance roles);
    region from region_name, $AWS_REGION, $AWS_DEFAULT_REGION or the profile (default us-east-1).
    Titan takes one text per call, so texts are sent `max_concurrency` at a time; Cohere
    takes up to 96 and distinguishes search_query from search_document.
    """

    requires_api_key: ClassVar[bool] = False
    default_model: ClassVar[str] = "amazon.titan-embed-text-v2:0"
    known_dimensions: ClassVar[dict[str, int]] = {
        "amazon.titan-embed-text-v2:0": 1024,
        "amazon.titan-embed-text-v1": 1536,
        "amazon.titan-embed-g1-text-02": 1536,
        "cohere.embed-english-v3": 1024,
        "cohere.embed-multilingual-v3": 1024,
        "cohere.embed-v4:0": 1536,
    }
    known_windows: ClassVar[dict[str, int]] = {  # Titan: 8,192 tokens; Cohere v3: 512 (`truncate: END` cuts past it)
        "amazon.titan-embed-text-v2:0": 8192,
        "cohere.embed-english-v3": 512,
        "cohere.embed-multilingual-v3": 512,
    }
    max_batch: ClassVar[int] = 96  # Cohere's texts per call

    def __init__(
        self,
        model: str | None = None,
        region_name: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        profile_name: str | None = None,
        endpoint_url: str | None = None,
        dimension: int | None = None,
        max_concurrency: int = 4,
        **kwargs: Any,
    ) -> None:
        super().__init__(model, None, endpoint_url, dimension, **kwargs)
        self._runtime, self.region = runtime_client(
            type(self).__name__,
            "embedding",
            "BedrockEmbedding",
            region_name=region_name,
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
            profile_name=profile_name,
            endpoint_url=endpoint_url,
            read_timeout=self.policy.timeout,
            connect_timeout=min(10.0, self.policy.timeout),
        )
        self.base_url = endpoint_url or f"bedrock-runtime.{self.region}"
        self.max_concurrency = max(1, int(max_concurrency))
        self._is_cohere = "cohere." in self.model

    def _invoke(self, body: JSONObject) -> Any:
        def attempt() -> Any:
            response = self._runtime.invoke_model(
                modelId=self.model,
                body=json.dumps(body),
                contentType="application/json",
                accept="application/json",
            )
            try:
                return json.loads(response["body"].read())
            except ValueError as exc:
                raise BadResponse("not JSON") from exc

        return self._with_retries(attempt, _classify)

    def _embed_batch(self, texts: list[str], kind: str) -> list[list[float]]:
        if self._is_cohere:
            return self._cohere(texts, kind)
        if len(texts) == 1:
            return [self._titan(texts[0])]
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(texts))) as pool:
            return list(pool.map(self._titan, texts))

    def _titan(self, text: str) -> list[float]:
        body: dict[str, Any] = {"inputText": text, **self.options}
        if self.requested_dimension:
            body["dimensions"] = self.requested_dimension
        data = self._invoke(body)
        return vector_of(data.get("embedding") if isinstance(data, dict) else None)

    def _cohere(self, texts: list[str], kind: str) -> list[list[float]]:
        body: dict[str, Any] = {
            "texts": texts,
            "input_type": "search_query" if kind == QUERY else "search_document",
            "truncate": "END",
        }
        if "embed-v4" in self.model:
            body["embedding_types"] = ["float"]
            if self.requested_dimension:
                body["output_dimension"] = self.requested_dimension
        body.update(self.options)
        data = self._invoke(body)
        embeddings = data.get("embeddings") if isinstance(data, dict) else None
        if isinstance(embeddings, dict):  # embed-v4 answers {"embeddings": {"float": [...]}}
            embeddings = embeddings.get("float")
        if not isinstance(embeddings, list) or len(embeddings) != len(texts):
            raise BadResponse(f"expected {len(texts)} vectors in 'embeddings'")
        return [vector_of(vector) for vector in embeddings]

    def close(self) -> None:
        super().close()
        closer = getattr(self._runtime, "close", None)
        if closer is not None:
            closer()
