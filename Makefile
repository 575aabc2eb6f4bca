# Two commands set everything up on a fresh machine:
#   make demo   runs the bookshop demo (server + client, both protocol eras)
#   make test   runs lint, type checks, the documentation build and every test
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

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

.PHONY: demo test bench lint docs docs-build
demo: $(STAMP)
	@echo "Starting the bookshop demo: a server on 127.0.0.1 and a client in both protocol eras"
	$(PY) examples/demo.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pyright

docs-build: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir .cache/site

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve -a 127.0.0.1:8001

test: lint docs-build
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m benchmarks
