# Two commands set everything up on a fresh machine:
#   make demo   runs the bookshop demo (server + client, both protocol eras)
#   make test   runs lint, type checks and every test, on the oldest and the newest Python
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# The newest supported Python runs the suite a second time, under branch coverage.
PYTHON_NEWEST ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13) $(shell command -v python3.13 2>/dev/null))
VENV_NEWEST := .venv-newest
PY_NEWEST := $(VENV_NEWEST)/bin/python
STAMP_NEWEST := $(VENV_NEWEST)/.installed
COVERAGE_FLOOR := 85

$(STAMP): pyproject.toml
	@echo "First run: creating $(VENV) and installing mcpdi with its test extras (about a minute)..."
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

$(STAMP_NEWEST): pyproject.toml
	@test -n "$(PYTHON_NEWEST)" || { echo "make test needs Python 3.13 (set PYTHON_NEWEST=/path/to/python3.13)"; exit 1; }
	@echo "Creating $(VENV_NEWEST) with $(PYTHON_NEWEST) for the second test run..."
	$(PYTHON_NEWEST) -m venv $(VENV_NEWEST)
	$(PY_NEWEST) -m pip install --quiet --upgrade pip
	$(PY_NEWEST) -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP_NEWEST)

.PHONY: demo test test-oldest test-newest test-3.12 bench lint system-packages
demo: $(STAMP)
	$(PY) examples/demo.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pyright

# Chromium, Redis and nginx from Debian, for the tests that drive them (installed when missing).
system-packages:
	bash .ci/system-packages.sh

test-oldest: $(STAMP) system-packages
	$(PY) -m pytest

# Branch coverage of mcpdi and mcpdi_transport (in-process code), with a floor.
test-newest: $(STAMP_NEWEST) system-packages
	$(PY_NEWEST) -m coverage run -m pytest -q
	$(PY_NEWEST) -m coverage report --fail-under=$(COVERAGE_FLOOR) | tail -n 3

test: lint test-oldest test-newest

# Python 3.12 too, on demand (make test runs the oldest and the newest).
test-3.12:
	$(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) python3.12) -m venv .venv-3.12
	.venv-3.12/bin/python -m pip install --quiet -e '.[test]'
	.venv-3.12/bin/python -m pytest -q

bench: $(STAMP)
	$(PY) -m benchmarks
