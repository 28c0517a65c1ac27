# Two entry points: `make demo` and `make test`. Both create .venv if it is missing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
# The default install embeds with ONNX Runtime, no torch. The dev install (tests compare
# against sentence-transformers) needs torch: a plain requirement would pull a multi-GB CUDA
# build, so the CPU build is installed first.
TORCH ?= torch==2.13.0

.PHONY: demo test lint install install-dev browser clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(PIP) install -q -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) install -q $(TORCH)
	$(PIP) install -q -e '.[dev]'
	touch $@

# The web page is tested in Debian's Chromium (never a browser download): install it when missing.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "The web page test needs Chromium: install Debian's 'chromium' package (sudo apt-get install chromium)."; exit 1; fi; }

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

demo: install
	HF_HUB_OFFLINE=1 $(BIN)/python examples/demo.py

# Lint and format check of the package, its tests, benchmarks and examples, and type check of
# the package (settings in pyproject.toml), before the tests.
lint: install-dev
	$(BIN)/ruff check deepsearcher tests benchmarks examples
	$(BIN)/ruff format --check deepsearcher tests benchmarks examples
	$(BIN)/mypy

test: install-dev browser lint
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -p no:cacheprovider

clean:
	rm -rf $(VENV) .demo
