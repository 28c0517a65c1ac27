"""The built-in providers of every feature, as data: a name (or alias) from config.yaml -> the
"module:Class" that defines it.

A lookup imports only the one module that defines the provider asked for (a command that builds
the default OpenAI LLM imports `openai_llm`, not twenty provider modules, some of which import
their SDK's types at the top). Third-party providers come from entry points (group
`deepsearcher.providers`), never from this table. tests/test_registry_table.py checks that the
table and the `@register_provider` classes that exist agree, so a new built-in without its row
(or a row left behind) fails with the row to write.
"""

from __future__ import annotations

from collections.abc import Mapping

BUILTIN_PROVIDERS: Mapping[str, Mapping[str, str]] = {
    "llm": {
        "Aliyun": "deepsearcher.llm.openai_presets:Aliyun",
        "Anthropic": "deepsearcher.llm.anthropic_llm:Anthropic",
        "Atlas Cloud": "deepsearcher.llm.openai_presets:AtlasCloud",
        "AtlasCloud": "deepsearcher.llm.openai_presets:AtlasCloud",
        "AzureOpenAI": "deepsearcher.llm.azure_openai_llm:AzureOpenAI",
        "Bedrock": "deepsearcher.llm.bedrock_llm:Bedrock",
        "DeepSeek": "deepsearcher.llm.openai_presets:DeepSeek",
        "Gemini": "deepsearcher.llm.gemini_llm:Gemini",
        "GLM": "deepsearcher.llm.openai_presets:GLM",
        "Jiekou": "deepsearcher.llm.openai_presets:JiekouAI",
        "Jiekou.AI": "deepsearcher.llm.openai_presets:JiekouAI",
        "JiekouAI": "deepsearcher.llm.openai_presets:JiekouAI",
        "LiteLLM": "deepsearcher.llm.litellm_llm:LiteLLM",
        "llama.cpp": "deepsearcher.llm.llamacpp_llm:LlamaCpp",
        "LlamaCpp": "deepsearcher.llm.llamacpp_llm:LlamaCpp",
        "LlamaCppLLM": "deepsearcher.llm.llamacpp_llm:LlamaCpp",
        "MiniMax": "deepsearcher.llm.openai_presets:MiniMax",
        "Novita": "deepsearcher.llm.openai_presets:Novita",
        "Ollama": "deepsearcher.llm.ollama_llm:Ollama",
        "OpenAI": "deepsearcher.llm.openai_llm:OpenAI",
        "OpenAICompatible": "deepsearcher.llm.openai_compatible_llm:OpenAICompatible",
        "OpenAICompatibleLLM": "deepsearcher.llm.openai_compatible_llm:OpenAICompatible",
        "PPIO": "deepsearcher.llm.openai_presets:PPIO",
        "SiliconFlow": "deepsearcher.llm.openai_presets:SiliconFlow",
        "TogetherAI": "deepsearcher.llm.openai_presets:TogetherAI",
        "Volcengine": "deepsearcher.llm.openai_presets:Volcengine",
        "WatsonX": "deepsearcher.llm.watsonx_llm:WatsonX",
        "watsonx": "deepsearcher.llm.watsonx_llm:WatsonX",
        "Watsonx": "deepsearcher.llm.watsonx_llm:WatsonX",
        "WatsonXLLM": "deepsearcher.llm.watsonx_llm:WatsonX",
        "XAI": "deepsearcher.llm.openai_presets:XAI",
    },
    "embedding": {
        "BedrockEmbedding": "deepsearcher.embedding.bedrock_embedding:BedrockEmbedding",
        "FastEmbedEmbedding": "deepsearcher.embedding.fastembed_embedding:FastEmbedEmbedding",
        "GeminiEmbedding": "deepsearcher.embedding.gemini_embedding:GeminiEmbedding",
        "GLMEmbedding": "deepsearcher.embedding.glm_embedding:GLMEmbedding",
        "Jiekou.AIEmbedding": "deepsearcher.embedding.jiekouai_embedding:JiekouAIEmbedding",
        "JiekouAIEmbedding": "deepsearcher.embedding.jiekouai_embedding:JiekouAIEmbedding",
        "JinaEmbedding": "deepsearcher.embedding.jina_embedding:JinaEmbedding",
        "LiteLLMEmbedding": "deepsearcher.embedding.litellm_embedding:LiteLLMEmbedding",
        "LocalEmbedding": "deepsearcher.embedding.sentence_transformer_embedding:SentenceTransformerEmbedding",
        "MilvusEmbedding": "deepsearcher.embedding.milvus_embedding:MilvusEmbedding",
        "MiniLMEmbedding": "deepsearcher.embedding.minilm_embedding:MiniLMEmbedding",
        "MiniMaxEmbedding": "deepsearcher.embedding.minimax_embedding:MiniMaxEmbedding",
        "MultilingualE5Embedding": "deepsearcher.embedding.e5_embedding:MultilingualE5Embedding",
        "NovitaEmbedding": "deepsearcher.embedding.novita_embedding:NovitaEmbedding",
        "OllamaEmbedding": "deepsearcher.embedding.ollama_embedding:OllamaEmbedding",
        "OnnxEmbedding": "deepsearcher.embedding.onnx_embedding:OnnxEmbedding",
        "OpenAIEmbedding": "deepsearcher.embedding.openai_embedding:OpenAIEmbedding",
        "PPIOEmbedding": "deepsearcher.embedding.ppio_embedding:PPIOEmbedding",
        "SentenceTransformerEmbedding": (
            "deepsearcher.embedding.sentence_transformer_embedding:SentenceTransformerEmbedding"
        ),
        "SiliconflowEmbedding": "deepsearcher.embedding.siliconflow_embedding:SiliconflowEmbedding",
        "VolcengineEmbedding": "deepsearcher.embedding.volcengine_embedding:VolcengineEmbedding",
        "VoyageEmbedding": "deepsearcher.embedding.voyage_embedding:VoyageEmbedding",
        "WatsonXEmbedding": "deepsearcher.embedding.watsonx_embedding:WatsonXEmbedding",
        "WatsonxEmbedding": "deepsearcher.embedding.watsonx_embedding:WatsonXEmbedding",
    },
    "vector_db": {
        "AzureSearch": "deepsearcher.vector_db.azure_search:AzureSearch",
        "Milvus": "deepsearcher.vector_db.milvus:Milvus",
        "OracleDB": "deepsearcher.vector_db.oracle_db:OracleDB",
        "Qdrant": "deepsearcher.vector_db.qdrant:Qdrant",
    },
    "file_loader": {
        "CSVLoader": "deepsearcher.loader.file_loader.csv_loader:CSVLoader",
        "DoclingLoader": "deepsearcher.loader.file_loader.docling_loader:DoclingLoader",
        "DocxLoader": "deepsearcher.loader.file_loader.docx_loader:DocxLoader",
        "FileLoader": "deepsearcher.loader.file_loader.file_loader:FileLoader",
        "HTMLLoader": "deepsearcher.loader.file_loader.html_loader:HTMLLoader",
        "JsonFileLoader": "deepsearcher.loader.file_loader.json_loader:JsonFileLoader",
        "JsonlLoader": "deepsearcher.loader.file_loader.jsonl_loader:JsonlLoader",
        "MarkdownLoader": "deepsearcher.loader.file_loader.markdown_loader:MarkdownLoader",
        "PDFLoader": "deepsearcher.loader.file_loader.pdf_loader:PDFLoader",
        "TextLoader": "deepsearcher.loader.file_loader.text_loader:TextLoader",
        "UnstructuredLoader": "deepsearcher.loader.file_loader.unstructured_loader:UnstructuredLoader",
    },
    "web_crawler": {
        "Crawl4AICrawler": "deepsearcher.loader.web_crawler.crawl4ai_crawler:Crawl4AICrawler",
        "CrwCrawler": "deepsearcher.loader.web_crawler.crw_crawler:CrwCrawler",
        "DoclingCrawler": "deepsearcher.loader.web_crawler.docling_crawler:DoclingCrawler",
        "FastCRWCrawler": "deepsearcher.loader.web_crawler.crw_crawler:CrwCrawler",
        "FireCrawlCrawler": "deepsearcher.loader.web_crawler.firecrawl_crawler:FireCrawlCrawler",
        "http": "deepsearcher.loader.web_crawler.http_crawler:HttpCrawler",
        "HttpCrawler": "deepsearcher.loader.web_crawler.http_crawler:HttpCrawler",
        "httpx": "deepsearcher.loader.web_crawler.http_crawler:HttpCrawler",
        "JinaCrawler": "deepsearcher.loader.web_crawler.jina_crawler:JinaCrawler",
    },
    "web_search": {
        "Brave": "deepsearcher.web_search.brave:Brave",
        "DuckDuckGo": "deepsearcher.web_search.duckduckgo:DuckDuckGo",
        "SearXNG": "deepsearcher.web_search.searxng:SearXNG",
        "Serper": "deepsearcher.web_search.serper:Serper",
        "Tavily": "deepsearcher.web_search.tavily_search:Tavily",
    },
    "agent": {
        "auto": "deepsearcher.agent.rag_router:RAGRouter",
        "chain": "deepsearcher.agent.chain_of_rag:ChainOfRAG",
        "deep": "deepsearcher.agent.deep_search:DeepSearch",
        "naive": "deepsearcher.agent.naive_rag:NaiveRAG",
    },
}
