# Switchboard: `make run` serves the API on the embedded defaults; `make test` runs every test.
SHELL := /bin/bash
GO ?= go
PG_URL ?= postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable
FUZZTIME ?= 30s

.PHONY: all generate check-generate web check-web build run test test-sqlite test-postgres node-tools vet fmt-check lint lint-go lint-spec bench fuzz ci clean

all: build

## generate: regenerate gen/ from openapi.yaml
generate:
	$(GO) generate ./gen/...

## check-generate: fail when `make generate` changes anything (CI)
check-generate: generate
	@if [ -n "$$(git status --porcelain -- gen openapi.yaml)" ]; then \
		git status --short -- gen openapi.yaml; \
		echo "make generate changed gen/: commit the regenerated code"; exit 1; fi

## web: rebuild the front end (web/dist, committed and embedded in the binary) from web/src with
## the versions pinned in web/package-lock.json; needs Node and npm, which nothing else does
web/node_modules/.package-lock.json: web/package-lock.json
	cd web && npm ci --no-audit --no-fund --loglevel=error

web: web/node_modules/.package-lock.json
	cd web && npm run --silent build

## check-web: fail when the committed web/dist is not what `make web` builds (CI)
check-web: web
	@if [ -n "$$(git status --porcelain -- web/dist)" ]; then \
		git status --short -- web/dist; \
		echo "make web changed web/dist: commit the rebuilt bundle"; exit 1; fi

# What `switchboard version` prints: set at link time.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.buildDate=$(BUILD_DATE)

## build: the switchboard binary in bin/: static (no cgo), with its version, commit and build date
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/switchboard ./cmd/switchboard

## run: serve on https://127.0.0.1:8443 with SQLite in ./data, printing the local development key
## (the same on every run; kept in ./data/dev-key)
run:
	SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true $(GO) run ./cmd/switchboard serve --dev-key

## test: all tests on SQLite, then on PostgreSQL (started if possible; skipped with a message
## outside CI when it cannot be, mandatory in CI)
test: test-sqlite test-postgres

## node-tools: the pinned npm packages (Redocly, and the TypeScript client spec's openapi-typescript,
## openapi-fetch and tsc); without npm the TypeScript client spec skips, saying so
node-tools:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory node_modules/.package-lock.json; \
	else echo "SKIPPED: npm is not installed, so the TypeScript client spec will skip (the Go client's runs)"; fi

test-sqlite: node-tools
	$(GO) test ./...

test-postgres:
	@if .ci/postgres "$(PG_URL)"; then \
		echo "== PostgreSQL suite"; \
		SWITCHBOARD_TEST_DATABASE_URL='$(PG_URL)' $(GO) test -count=1 ./...; \
	elif [ -n "$$CI" ]; then \
		echo "FAIL: PostgreSQL is required in CI and could not be started"; exit 1; \
	else \
		echo "SKIPPED: the PostgreSQL suite (no PostgreSQL at $(PG_URL); see above). SQLite results stand."; \
	fi

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## lint-spec: lint openapi.yaml, and the components' own API (web/embed-api.yaml), with the pinned
## Redocly CLI
node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

lint-spec: node_modules/.package-lock.json
	npx --no-install redocly lint openapi.yaml web/embed-api.yaml web/console-api.yaml

## lint-go: golangci-lint, pinned in tools/go.mod (a module of its own, so its dependencies stay
## out of ours), with .golangci.yml: depguard's rules on which layer may import which
lint-go:
	$(GO) tool -modfile=tools/go.mod golangci-lint run ./...

lint: vet fmt-check lint-go lint-spec

## bench: every load scenario the issues name, on SQLite and PostgreSQL (blast: PostgreSQL only;
## the whole run takes about 15 minutes); BENCH_FLAGS selects, e.g. BENCH_FLAGS="-scenario api"
BENCH_FLAGS ?= -scenario api,send,webhooks,smpp,blast
bench:
	@.ci/postgres "$(PG_URL)" || echo "bench: PostgreSQL unavailable; its figures will be skipped"
	$(GO) run ./cmd/bench -pg '$(PG_URL)' $(BENCH_FLAGS)

## fuzz: fuzz the request handling stack for FUZZTIME per target: any request, then hostile text
## (NUL, lone surrogates, invalid UTF-8, 1 MiB strings, deep nesting) in every JSON body, then a
## webhook's body against json.Marshal for any event data
fuzz:
	$(GO) test -run XXX -fuzz '^FuzzRequests$$' -fuzztime $(FUZZTIME) ./server/
	$(GO) test -run XXX -fuzz '^FuzzHostileBodies$$' -fuzztime $(FUZZTIME) ./server/
	$(GO) test -run XXX -fuzz '^FuzzBody$$' -fuzztime $(FUZZTIME) ./service/webhooks/

## ci: what .ci/run runs
ci: check-generate check-web vet fmt-check lint-go lint-spec test

clean:
	rm -rf bin
