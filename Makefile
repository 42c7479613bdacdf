# luoshod: the two commands are `make run` and `make test`; everything else is optional.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LISTEN ?= 127.0.0.1:50051
STORE  ?= lmdb:.luoshod/store
TS     := clients/typescript
# npm ci again only when the lock file changes.
TS_STAMP := $(TS)/node_modules/.installed

.PHONY: run test test-ts bench bench-store proto clean

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

$(TS_STAMP): $(TS)/package.json $(TS)/package-lock.json
	cd $(TS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

## test: install what the tests need and run every test (pytest, then each client's runner)
test: $(STAMP) $(TS_STAMP)
	$(PY) -m pytest
	$(MAKE) --no-print-directory test-ts

## test-ts: build the TypeScript client with tsc and run its node --test suite on a daemon
test-ts: $(STAMP) $(TS_STAMP)
	cd $(TS) && npm run -s build && npm run -s build:test
	cd $(TS) && LUOSHOD_PYTHON=$(abspath $(PY)) npm test -s

## bench: the benchmarks (not part of the tests)
bench: $(STAMP)
	$(PY) bench/steps.py
	$(PY) bench/store.py

## bench-store: the store drivers alone: fsync rate, saves/s, bytes on disk (docs/storage.md)
bench-store: $(STAMP)
	$(PY) bench/store.py

## proto: regenerate the committed protobuf/gRPC code from proto/
proto: $(STAMP) $(TS_STAMP)
	$(PY) scripts/genproto.py

clean:
	rm -rf $(VENV) .pytest_cache $(TS)/node_modules $(TS)/dist $(TS)/dist-test
