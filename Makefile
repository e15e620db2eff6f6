# Recurrent networks, by the numbers. `make help` lists the targets.

PYTHON   ?= python3
VENV     := .venv
PY       := $(VENV)/bin/python
STAMP    := $(VENV)/.installed
TORCH_VENV  := .venv-torch
TORCH_PY    := $(TORCH_VENV)/bin/python
TORCH_STAMP := $(TORCH_VENV)/.installed
PORT     ?= 8000

# Two builds of one commit give the same bytes: the sitemap's date is the commit's.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
export SOURCE_DATE_EPOCH
export NO_MKDOCS_2_WARNING := 1
export PYTHONDONTWRITEBYTECODE := 1

.DEFAULT_GOAL := help
.PHONY: help build serve test check test-torch test-compat bench clean deploy lock harness chapter

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-11s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): requirements.txt
	@echo "make: creating $(VENV) from requirements.txt (pinned)"
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

build: $(STAMP) ## Regenerate tables, plots and notebooks, then build the site into site/
	$(PY) -m generator build

serve: $(STAMP) ## Serve the site at http://127.0.0.1:8000/: rebuilds on change, reloads the page
	$(PY) -m generator serve --port $(PORT)

# axe-core for the accessibility tests, at the version package-lock.json pins; in
# node_modules/, outside docs/: the site never serves it.
AXE := node_modules/axe-core/axe.min.js
$(AXE): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# `make test` runs the tests on three workers (pytest-xdist; TEST_WORKERS=0 for one process):
# tests that share a costly fixture stay on one worker (conftest.TOGETHER). Three on two
# cores, because a worker often waits (on a page's network going quiet, a browser, a
# build in a subprocess) and a third uses the core it leaves idle (README: the times).
TEST_WORKERS ?= 3

test: build $(AXE) ## Build, then run every test (browser tests need /usr/bin/chromium, axe-core needs npm)
	$(PY) -m pytest -n $(TEST_WORKERS)

check: $(STAMP) ## The quick loop while editing: the tests that need no copy of the project, no notebook and no browser, on the site as last built
	@test -f site/index.html || { echo "make: no site/ yet: run make build first"; exit 1; }
	$(PY) -m pytest -q -x -m "not slow and not browser and not compat" -p no:cacheprovider

$(TORCH_STAMP): requirements.txt requirements-torch.txt
	@echo "make: creating $(TORCH_VENV) (the site's pins plus PyTorch CPU)"
	$(PYTHON) -m venv $(TORCH_VENV)
	$(TORCH_VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-torch.txt
	@touch $@

test-torch: $(TORCH_STAMP) ## Check the numpy models against PyTorch autograd (installs torch 2.13.0 CPU)
	$(TORCH_PY) -m pytest -p no:cacheprovider tests/test_gru_torch.py tests/test_memory_torch.py tests/test_counts_torch.py

# The first Python 3.9 that runs: pyenv's, then one on PATH.
PY39 ?= $(shell for p in $$HOME/.pyenv/versions/3.9*/bin/python3.9 $$(command -v python3.9); do \
          "$$p" -c "" 2>/dev/null && echo "$$p" && break; done)

test-compat: $(STAMP) ## The scripts on the oldest supported pair, Python 3.9 with numpy 1.26
	@test -n "$(PY39)" || { echo "make: no python3.9 on this machine; set PY39=/path/to/python3.9"; exit 1; }
	test -x .venv-py39/bin/python || $(PY39) -m venv .venv-py39
	.venv-py39/bin/pip install --quiet --disable-pip-version-check numpy==1.26.4
	COMPAT_PYTHON=$(CURDIR)/.venv-py39/bin/python $(PY) -m pytest -p no:cacheprovider -m compat tests/test_compat.py

bench: $(TORCH_STAMP) ## Benchmarks: numpy GRU against PyTorch, and warm against bare builds
	$(TORCH_PY) benchmarks/gru_speed.py
	$(PY) benchmarks/build.py

deploy: $(STAMP) ## Build and publish the site to origin's gh-pages branch (what Colab opens)
	$(PY) -m generator deploy

harness: $(STAMP) ## Write generator/harness.py's block into every served script
	$(PY) -m generator harness

chapter: $(STAMP) ## A new chapter's four files: make chapter N=18 NAME=recurrence SCRIPT=recurrence.py TITLE="Recurrence returns"
	@test -n "$(N)" -a -n "$(NAME)" -a -n "$(SCRIPT)" -a -n "$(TITLE)" || { \
	  echo 'make: usage: make chapter N=18 NAME=recurrence SCRIPT=recurrence.py TITLE="Recurrence returns"'; exit 2; }
	$(PY) -m generator new-chapter "$(N)" "$(NAME)" "$(SCRIPT)" "$(TITLE)"

lock: ## Re-pin requirements.txt from requirements.in in a fresh virtualenv
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock
	.venv-lock/bin/pip install --quiet -r requirements.in
	( echo "# Pinned: every package the site and its tests use. Generated from requirements.in by \`make lock\`."; \
	  .venv-lock/bin/pip freeze --all | grep -v '^pip=\|^setuptools=\|^wheel=' ) > requirements.txt
	rm -rf .venv-lock

clean: ## Remove the built site and the page cache (not the virtualenvs, not the run cache)
	rm -rf site .site.tmp-* .site.old-* build .pytest_cache test-results
