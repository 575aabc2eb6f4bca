# Two commands set everything up on a fresh machine:
#   make demo   runs the bookshop demo (server + client, both protocol eras)
#   make test   runs lint, type checks, the documentation build and every test,
#               on the oldest and the newest supported Python
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# The newest supported Python runs the suite a second time, under branch coverage.
PYTHON_NEWEST ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13) $(shell command -v python3.13 2>/dev/null))
VENV_NEWEST := .venv-newest
PY_NEWEST := $(VENV_NEWEST)/bin/python
STAMP_NEWEST := $(VENV_NEWEST)/.installed
COVERAGE_FLOOR := 85
# The suite runs in parallel (pytest-xdist). Most tests wait on servers and subprocesses they start,
# so it starts more workers than this 2-core machine has cores; `make test TEST_WORKERS=0` runs one process.
TEST_WORKERS ?= 4
PYTEST_PARALLEL := -n $(TEST_WORKERS)

$(STAMP): pyproject.toml
	@echo "First run: setting up $(VENV)/ (about half a minute, once)"
	@echo "  creating the virtual environment in $(VENV)/"
	@python3 -m venv $(VENV)
	@echo "  upgrading pip"
	@$(PY) -m pip install --quiet --upgrade pip
	@echo "  installing mcpdi (editable) with its test and benchmark extras (the docs tools come with test)"
	@$(PY) -m pip install --quiet -e '.[test,bench]'
	@touch $(STAMP)
	@echo "  done: $(VENV)/ is ready (activate it with: . $(VENV)/bin/activate)"

$(STAMP_NEWEST): pyproject.toml
	@test -n "$(PYTHON_NEWEST)" || { echo "make test needs Python 3.13 (set PYTHON_NEWEST=/path/to/python3.13)"; exit 1; }
	@echo "Setting up $(VENV_NEWEST)/ with $(PYTHON_NEWEST) for the second test run (once)"
	@$(PYTHON_NEWEST) -m venv $(VENV_NEWEST)
	@$(PY_NEWEST) -m pip install --quiet --upgrade pip
	@$(PY_NEWEST) -m pip install --quiet -e '.[test,bench]'
	@touch $(STAMP_NEWEST)

.PHONY: demo test test-oldest test-newest test-3.12 bench lint docs docs-build system-packages browser
demo: $(STAMP)
	@echo "Starting the bookshop demo: a server on 127.0.0.1 and a client in both protocol eras"
	$(PY) examples/demo.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pyright --project pyproject.toml

docs-build: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir .cache/site

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve -a 127.0.0.1:8001

# Chromium (the dev page's browser tests), Redis and nginx (scale-out) from Debian, for the tests
# that drive them; installed when missing. `make browser` is the same step.
system-packages:
	bash .ci/system-packages.sh

browser: system-packages

test-oldest: $(STAMP) system-packages
	$(PY) -m pytest $(PYTEST_PARALLEL) --durations=10

# Branch coverage of mcpdi and mcpdi_transport (in-process code), with a floor: each worker writes
# its own data file (tests/conftest.py), combined before the report.
test-newest: $(STAMP_NEWEST) system-packages
	$(PY_NEWEST) -m coverage erase
	$(PY_NEWEST) -m coverage run --parallel-mode -m pytest -q $(PYTEST_PARALLEL)
	$(PY_NEWEST) -m coverage combine -q
	@mkdir -p .cache; $(PY_NEWEST) -m coverage report --fail-under=$(COVERAGE_FLOOR) > .cache/coverage.txt; \
		status=$$?; tail -n 3 .cache/coverage.txt; exit $$status

test: lint docs-build test-oldest test-newest

# Python 3.12 too, on demand (make test runs the oldest and the newest).
test-3.12:
	$(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) python3.12) -m venv .venv-3.12
	.venv-3.12/bin/python -m pip install --quiet -e '.[test,bench]'
	.venv-3.12/bin/python -m pytest -q

bench: $(STAMP)
	$(PY) -m benchmarks
