# luoshod: the two commands are `make run` and `make test`; everything else is optional.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LISTEN ?= 127.0.0.1:50051
# The JSON API and web console (luoshod/http/); HTTP= turns it off.
HTTP   ?= 127.0.0.1:8080
STORE  ?= lmdb:.luoshod/store
# Go tools (grpcurl, the protoc plugins genproto.py installs) live in a project-local GOBIN.
GO      ?= go
TOOLS   := $(CURDIR)/.tools/bin
GRPCURL := $(TOOLS)/grpcurl
BUF     := $(TOOLS)/buf
# The frozen v1 contract that buf breaking compares proto/ with (docs/compatibility.md).
PROTO_BASELINE := proto/baseline/v1.binpb
TS     := clients/typescript
# npm ci again only when the lock file changes.
TS_STAMP := $(TS)/node_modules/.installed

.PHONY: run test lint fmt test-go test-ts test-java test-proto proto-baseline postgres patroni ha-postgres ha-postgres-stop chromium bench bench-store proto docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The daemon, its Python client and the three durable store drivers (each its own
# distribution under drivers/); reinstall when a dependency list changes.
# setuptools warns once per editable package about folders named like it (ours are those
# packages): four blocks of noise at a new user's first `make run`, silenced by message only.
DRIVERS := drivers/sqlite drivers/lmdb drivers/postgres
$(STAMP): $(PY) pyproject.toml clients/python/pyproject.toml $(DRIVERS:%=%/pyproject.toml)
	PYTHONWARNINGS='ignore:Editable installation' \
	  $(PY) -m pip install --quiet -e ./clients/python -e '.[dev]' $(DRIVERS:%=-e ./%)
	touch $@

## run: create .venv, install, and start the daemon on its embedded store under ./.luoshod/
run: $(STAMP)
	mkdir -p .luoshod
	$(VENV)/bin/luoshod serve --listen $(LISTEN) --store $(STORE) --scripts-dir examples/scripts \
	  $(if $(HTTP),--http-listen $(HTTP))

# The real grpcurl for tests/docs/test_readme_grpcurl.py; installed once, skipped when present.
$(GRPCURL):
	GOBIN=$(TOOLS) $(GO) install github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.3

# buf lints proto/ and checks it against the v1 baseline; installed once, like grpcurl.
$(BUF):
	GOBIN=$(TOOLS) $(GO) install github.com/bufbuild/buf/cmd/buf@v1.75.0

# A node_modules that is a symbolic link (a git worktree sharing another tree's packages) is
# left alone: npm ci through the link would empty the other tree's copy.
$(TS_STAMP): $(TS)/package.json $(TS)/package-lock.json
	if [ -L $(TS)/node_modules ]; then echo "$(TS)/node_modules is a link: not reinstalled"; \
	else cd $(TS) && npm ci --no-audit --no-fund --loglevel=error; fi
	touch $@

## test: install what the tests need and run every test (pytest, then each client's runner)
# Each runner's failure fails the target (pytest's exit code 5, no tests, included).
# The TypeScript client is built first: tests/clients/test_cross_language.py runs one of its examples.
# pytest starts a throw-away PostgreSQL server itself (tests/support/postgres_server.py),
# and for the failover test a Patroni cluster (tests/support/patroni_cluster.py).
# lint-imports first: the layout's boundaries ([tool.importlinter] in pyproject.toml); buf's
# lint and breaking check of the proto (test-proto); then
# the format, lint and type checks of `make lint`. mkdocs build --strict after pytest: no
# broken link or anchor, no page left out of nav.
test: $(STAMP) $(GRPCURL) $(BUF) $(TS_STAMP) postgres patroni chromium
	cd $(TS) && npm run -s build && npm run -s build:test
	$(VENV)/bin/lint-imports --no-cache
	$(MAKE) --no-print-directory test-proto
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) -m pytest
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir $(CURDIR)/build/docs-check
	$(MAKE) --no-print-directory test-go
	$(MAKE) --no-print-directory test-ts
	$(MAKE) --no-print-directory test-java

## lint: ruff's format check and lint, then mypy ([tool.ruff], [tool.mypy] in pyproject.toml)
# mypy checks the paths its configuration names: the daemon and the three drivers.
lint: $(STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

## fmt: format the tree with ruff and apply ruff's safe lint fixes (import order and the like)
fmt: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix-only --quiet .
	$(VENV)/bin/ruff format .

## docs: build the docs site (docs/, mkdocs.yml) into site/; the reference pages come from
# the code first (scripts/gendocs.py). `mkdocs serve` shows it while you edit.
docs: $(STAMP)
	$(PY) scripts/gendocs.py
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

## test-proto: buf lint (STANDARD) and buf breaking against the committed v1 baseline
# A change that would break a client already deployed (a field renumbered, renamed or
# retyped, an RPC or enum value removed) fails here; docs/compatibility.md is the policy.
test-proto: $(BUF)
	$(BUF) lint
	$(BUF) breaking proto --against $(PROTO_BASELINE)

## proto-baseline: rewrite the v1 baseline from proto/ (only for a change the policy allows
# to move it: see docs/compatibility.md); commit the image with the proto change.
proto-baseline: $(BUF)
	$(BUF) build proto -o $(PROTO_BASELINE)

## postgres: PostgreSQL's server programs for the tests, from Debian's packages when missing
# Quick, and needs no network, when they are installed.
postgres: $(STAMP)
	$(PY) tests/support/postgres_server.py install

## patroni: Patroni and etcd for the failover tests, from Debian's packages when missing
patroni: $(STAMP)
	$(PY) tests/support/patroni_cluster.py install

## ha-postgres: a highly available PostgreSQL on loopback under .luoshod/ha (etcd, Patroni,
# a primary and a synchronous standby); prints its multi-host URL. Idempotent: a running
# one's URL is printed again. `make ha-postgres-stop` stops it.
HA_DIR ?= .luoshod/ha
ha-postgres: patroni
	$(PY) tests/support/patroni_cluster.py start $(HA_DIR)

## ha-postgres-stop: stop the cluster `make ha-postgres` started
ha-postgres-stop:
	$(PY) tests/support/patroni_cluster.py stop $(HA_DIR)

## chromium: Debian's Chromium for the web console's browser tests (Playwright drives it;
# it never downloads a browser of its own). Quick, and needs no network, when installed.
chromium: $(STAMP)
	$(PY) tests/support/browser.py install

## test-go: go vet and the Go client's tests against a daemon
# -count=1: the Go tests drive a Python daemon whose changes go's test cache cannot see.
test-go: $(STAMP)
	cd clients/go && $(GO) vet ./... && LUOSHOD_PYTHON=$(CURDIR)/$(PY) $(GO) test -count=1 ./...

## test-ts: build the TypeScript client with tsc and run its node --test suite on a daemon
test-ts: $(STAMP) $(TS_STAMP)
	cd $(TS) && npm run -s build && npm run -s build:test
	cd $(TS) && LUOSHOD_PYTHON=$(abspath $(PY)) npm test -s

## test-java: the Java client's JUnit tests (Maven Surefire) against a daemon
test-java: $(STAMP)
	cd clients/java && mvn -q -B test -Dluoshod.python=$(CURDIR)/$(PY)

## bench: the benchmarks (not part of the tests); cli_start.py: the people CLI's start-up
# Every benchmark runs even when one misses its target (it exits 1): the list of those
# that missed or failed comes at the end, and fails the target.
BENCHES := steps store long_run cli_start request_ids console torture mcp_steps subagent_steps slowruns burst busy webhooks pg_lease_burst gc_idle event_blocks headers
bench: $(STAMP)
	@missed=""; for b in $(BENCHES); do echo "== bench/$$b.py"; \
	  $(PY) bench/$$b.py || missed="$$missed $$b"; done; \
	if [ -n "$$missed" ]; then echo "make bench: missed a target or failed:$$missed"; exit 1; fi

## bench-store: the store drivers alone: fsync rate, saves/s, bytes on disk (docs/storage.md)
bench-store: $(STAMP)
	$(PY) bench/store.py

## proto: regenerate the committed protobuf/gRPC code from proto/
proto: $(STAMP) $(TS_STAMP)
	$(PY) scripts/genproto.py

clean:
	rm -rf $(VENV) .pytest_cache .tools $(TS)/node_modules $(TS)/dist $(TS)/dist-test \
	  clients/java/target clients/java/.tools site build/docs-check
