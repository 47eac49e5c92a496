# cuda2nki developer entry points. Everything runs inside .venv, created on first use.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# the package and its run-time dependencies only: what `make demo` needs
CORE := $(VENV)/.installed-core
# plus the test, lint and cluster tools (pytest, ruff, dask...): what developers need
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow check format bench clean venv venv-core

$(CORE): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $(CORE)

$(STAMP): $(CORE)
	$(BIN)/python -m pip install -q -e '.[dev,cluster]'
	touch $(STAMP)

venv: $(STAMP)

venv-core: $(CORE)

## demo: install cuda2nki alone, then port a corpus kernel to NKI, check the port in the simulator, write a review
demo: $(CORE)
	@mkdir -p out/demo
	$(BIN)/cuda2nki port corpus/basic/vector_add.cu -o out/demo/vector_add_nki.py
	@cat out/demo/vector_add_nki.py
	$(BIN)/cuda2nki check corpus/basic/vector_add.cu out/demo/vector_add_nki.py
	$(BIN)/cuda2nki review corpus/basic/vector_add.cu corpus/basic/ports/vector_add_port.py -o out/demo/review.html

## test: set up, then run the test suite (both cores)
test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 -m slow

## check: lint and format check
check: $(STAMP)
	$(BIN)/ruff check cuda2nki tests bench
	$(BIN)/ruff format --check cuda2nki tests bench

format: $(STAMP)
	$(BIN)/ruff format cuda2nki tests bench
	$(BIN)/ruff check --fix cuda2nki tests bench

## bench: performance yardsticks (not part of the tests)
bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
