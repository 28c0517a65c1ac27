"""Shared transport below every provider: what LLM, embedding and loader code all need to
talk to a remote service, written once.

- `retry`: the retry policy (backoff, Retry-After, per-call budget), deadlines and the
  concurrency limit shared across threads and event loops;
- `http`: a blocking HTTP attempt under that policy, and HTTP failures as retry decisions;
- `aws`: the boto3 Bedrock runtime client and botocore's errors as retry decisions;
- `watsonx`: IBM watsonx.ai credentials and IAM bearer tokens.

This layer imports only `types`, `config` and `utils`, so a provider package never has
to import another one (the architecture test enforces both).
"""
