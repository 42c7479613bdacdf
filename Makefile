# luoshod: the two commands are `make run` and `make test`; everything else is optional.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LISTEN ?= 127.0.0.1:50051
STORE  ?= lmdb:.luoshod/store

.PHONY: run test bench bench-store proto clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Reinstall when the dependency lists change.
$(STAMP): $(PY) pyproject.toml clients/python/pyproject.toml
	$(PY) -m pip install --quiet -e ./clients/python -e '.[dev]'
	touch $@

## run: create .venv, install, and start the daemon on its embedded store under ./.luoshod/
run: $(STAMP)
	mkdir -p .luoshod
	$(VENV)/bin/luoshod serve --listen $(LISTEN) --store $(STORE) --scripts-dir examples/scripts

## test: install what the tests need and run every test (pytest, then the Java client's JUnit)
test: $(STAMP)
	$(PY) -m pytest
	cd clients/java && mvn -q -B test -Dluoshod.python=$(CURDIR)/$(PY)

## bench: the benchmarks (not part of the tests)
bench: $(STAMP)
	$(PY) bench/steps.py
	$(PY) bench/store.py

## bench-store: the store drivers alone: fsync rate, saves/s, bytes on disk (docs/storage.md)
bench-store: $(STAMP)
	$(PY) bench/store.py

## proto: regenerate the committed protobuf/gRPC code from proto/
proto: $(STAMP)
	$(PY) scripts/genproto.py

clean:
	rm -rf $(VENV) .pytest_cache clients/java/target clients/java/.tools
