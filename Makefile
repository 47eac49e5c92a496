# cuda2nki developer entry points. Everything runs inside .venv, created on first use.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow check format bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,cluster]'
	touch $(STAMP)

venv: $(STAMP)

## demo: set up, then port a corpus kernel to NKI and check the port in the simulator
demo: $(STAMP)
	$(BIN)/cuda2nki parse corpus/basic/vector_add.cu
	$(BIN)/cuda2nki run corpus/basic/vector_add.cu --binding corpus/basic/vector_add.toml --set N=1000 --out /tmp/cuda2nki-demo-out.npz
	@if $(BIN)/cuda2nki port --help >/dev/null 2>&1; then \
	  $(BIN)/cuda2nki port corpus/basic/vector_add.cu -o /tmp/cuda2nki-demo-port.py; \
	  cat /tmp/cuda2nki-demo-port.py; fi

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
