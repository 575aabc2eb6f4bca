# Two commands set everything up on a fresh machine:
#   make demo   runs the bookshop demo (server + client, both protocol eras)
#   make test   runs lint, type checks and every test
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

.PHONY: demo test bench lint browser
demo: $(STAMP)
	$(PY) examples/demo.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pyright

# The dev page's tests drive Debian's chromium through Playwright; installs both when missing.
browser: $(STAMP)
	PY=$(PY) sh tests/dev/setup_browser.sh

test: lint browser
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m benchmarks
