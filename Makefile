# One-command set-up: `make run` starts the platform on the embedded
# default (SQLite, local files); `make test` runs every test.
GO      ?= go
BIN     := bin/lms
ADDR    ?= 127.0.0.1:8080
HOST    ?= localhost
ADMIN_EMAIL    ?= admin@localhost
ADMIN_PASSWORD ?= admin-password
# Every Go build here is made with -trimpath: it then does not depend on
# the checkout's directory, so a fresh clone of a commit built before on
# this machine (CI's checkout) finds every package in Go's build cache
# instead of compiling the module again (cold: 9 minutes on two cores).
# The go commands the tests run (building lms and lmsctl) inherit it.
export GOFLAGS += -trimpath

# Browser files the services serve (the H5P core player from
# h5p-standalone, scorm-again, hls.js, LiaScript's runtime from
# @liascript/editor, the authoring pages' Markdown editor from
# tiny-markdown-editor), the OpenAPI linter and axe-core (the browser
# tests' accessibility check), pinned in package-lock.json.
# The player's install script only enforces its authors' package manager,
# so scripts are off.
PLAYER := node_modules/h5p-standalone/dist/frame.bundle.js
# ltijs, a third-party LTI tool run by internal/kinds/lti's interop test, with
# its database plugin; a test-only node project of its own.
LTIJS_DIR := internal/kinds/lti/testdata/ltijs
LTIJS := $(LTIJS_DIR)/node_modules/ltijs/package.json
# standardwebhooks (npm), the independent verifier of internal/webhooks' tests.
WEBHOOKS_DIR := internal/webhooks/testdata/verifier
WEBHOOKS := $(WEBHOOKS_DIR)/node_modules/standardwebhooks/package.json
# oidc-provider (npm), the real OpenID Connect provider internal/social's
# tests sign in through.
OIDC_OP_DIR := internal/social/testdata/op
OIDC_OP := $(OIDC_OP_DIR)/node_modules/oidc-provider/package.json
# The official MCP client SDK (npm), which cmd/lmsctl's tests drive
# `lmsctl mcp` with.
MCPCLIENT_DIR := internal/lmsctl/testdata/mcpclient
MCPCLIENT := $(MCPCLIENT_DIR)/node_modules/@modelcontextprotocol/sdk/package.json
# Screenshots of the browser tests land here.
export LMS_TEST_ARTIFACTS ?= $(CURDIR)/var/test-artifacts

.PHONY: build run demo-reset test slowest test-race lint-openapi bench bench-h5p-lumi vet fmt clean client

$(PLAYER): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

$(LTIJS): $(LTIJS_DIR)/package.json $(LTIJS_DIR)/package-lock.json
	npm ci --prefix $(LTIJS_DIR) --ignore-scripts --no-audit --no-fund
	@touch $@

$(WEBHOOKS): $(WEBHOOKS_DIR)/package.json $(WEBHOOKS_DIR)/package-lock.json
	npm ci --prefix $(WEBHOOKS_DIR) --ignore-scripts --no-audit --no-fund
	@touch $@

$(OIDC_OP): $(OIDC_OP_DIR)/package.json $(OIDC_OP_DIR)/package-lock.json
	npm ci --prefix $(OIDC_OP_DIR) --ignore-scripts --no-audit --no-fund
	@touch $@

$(MCPCLIENT): $(MCPCLIENT_DIR)/package.json $(MCPCLIENT_DIR)/package-lock.json
	npm ci --prefix $(MCPCLIENT_DIR) --ignore-scripts --no-audit --no-fund
	@touch $@

build: $(PLAYER)
	$(GO) build -o $(BIN) ./cmd/lms

# The demo tenant answers at DEMO_HOST (the frontend at http://DEMO_HOST:3000,
# the API with Host: DEMO_HOST); the platform tenant at HOST.
DEMO_HOST ?= 127.0.0.1
WEB_PORT  ?= 3000
# The content origin: package content (SCORM, cmi5, apps, LiaScript) is
# served on this second port, away from the session (docs/web.md).
CONTENT_PORT ?= 3001
RUN_ENV = DEMO_MODE=true LMS_API_ADDR=$(ADDR) LMS_PLATFORM_HOST=$(HOST) LMS_ADMIN_EMAIL=$(ADMIN_EMAIL) \
	LMS_ADMIN_PASSWORD=$(ADMIN_PASSWORD) LMS_WEB_ADDR=127.0.0.1:$(WEB_PORT) LMS_CONTENT_ADDR=127.0.0.1:$(CONTENT_PORT)

run: build
	@$(RUN_ENV) ./$(BIN) tenant list --json | grep -q '"$(DEMO_HOST)"' || { \
		echo "Creating the demo tenant at $(DEMO_HOST) with its courses (once)..."; \
		$(RUN_ENV) LMS_LOG_LEVEL=warn ./$(BIN) tenant add --host $(DEMO_HOST) --name "LMS demo" --demo \
			--admin-password $(ADMIN_PASSWORD) >/dev/null; }
	@echo
	@echo "  Learn in the browser:  http://$(DEMO_HOST):$(WEB_PORT)/  (Log in: one click as student, tutor or admin)"
	@echo "  Demo accounts:         student@demo.local, tutor@demo.local, admin@demo.local (no password in demo mode)"
	@echo "  Platform landing:      http://$(HOST):$(WEB_PORT)/"
	@echo "  Content origin:        http://$(DEMO_HOST):$(CONTENT_PORT)/  (package content only, no session: the topic pages frame it)"
	@echo "  API:                   http://$(ADDR)/api/...  (send Host: $(DEMO_HOST) for the demo, Host: $(HOST) for the platform)"
	@echo "  Platform admin:        $(ADMIN_EMAIL) / $(ADMIN_PASSWORD)"
	@echo "  API description:       http://$(ADDR)/api/openapi.json"
	@echo "  The demo resets hourly; to reset it now: make demo-reset"
	@echo
	$(RUN_ENV) ./$(BIN) serve

demo-reset: build
	$(RUN_ENV) ./$(BIN) demo reset --host $(DEMO_HOST) --force

# Unit tests and the API suite on SQLite; with LMS_TEST_PG_URL,
# LMS_TEST_REDIS_URL and LMS_TEST_S3_URL set (as .ci/run does) the same
# suites also run on PostgreSQL, Redis and S3. The output is plain go
# test's; the events of `go test -json` are kept in $(TEST_JSON), from
# which `make slowest` lists the slowest tests.
TEST_JSON ?= var/test.json
# Packages tested at once. Their tests spend most of their time waiting
# (on PostgreSQL creating databases, on Chromium, on the queue), so more
# packages than cores keep the cores busy: six API packages took 481 s
# two at a time (go test's default on 2 cores) and 350 s six at a time;
# four keeps a margin of memory and of PostgreSQL connections.
TEST_PACKAGES ?= 4
# The slowest packages, named first so that go test builds and starts
# them first instead of last (./... lists internal/web near the end).
TEST_FIRST := ./internal/web/ ./internal/h5p/ ./cmd/lmsctl/ ./internal/demo/
# TEST_EXEC runs each test binary through a program (go test -exec), as
# .ci/run does to keep the binaries for a second run.
TEST_EXEC ?=
# go test's own vet pass is off: go vet ./... has checked every package
# just before.
test: $(PLAYER) $(LTIJS) $(WEBHOOKS) $(OIDC_OP) $(MCPCLIENT)
	$(GO) vet ./...
	@mkdir -p $(dir $(TEST_JSON))
	GO=$(GO) $(GO) run ./.ci/gotest -out $(TEST_JSON) -- -count=1 -vet=off -timeout 20m -p $(TEST_PACKAGES) $(if $(TEST_EXEC),-exec $(TEST_EXEC)) $(TEST_FIRST) ./...

slowest:
	@$(GO) run ./.ci/gotest -slowest 10 $(TEST_JSON)

test-race: $(PLAYER) $(LTIJS) $(WEBHOOKS) $(OIDC_OP) $(MCPCLIENT)
	$(GO) test -race -count=1 -timeout 30m ./...

# The OpenAPI description (what /api/openapi.json serves) must pass
# Redocly's linter: the recommended rules, less those redocly.yaml turns
# off with its reasons.
lint-openapi: $(PLAYER)
	@mkdir -p var
	$(GO) run ./cmd/lms openapi > var/openapi.json
	REDOCLY_TELEMETRY=off npx --no redocly lint --config redocly.yaml var/openapi.json

# Go benchmarks plus the HTTP load runs (load generator on this machine),
# each printed as its share of a plain net/http hello-world measured in the
# same run, with the goals (README, "Performance"): profile/me, the program
# of a 20 x 10 course, the anonymous catalogue and pings from 500 learners;
# start-up time and idle memory of `lms serve`; its memory with 1,000
# tenants; a class of BENCH_LEARNERS starting a timed quiz within a second
# (one `lms serve` on SQLite), then BENCH_QUIZ_TAKERS of them sitting it
# while BENCH_PINGERS learners ping a reading every 30 s. With
# LMS_BENCH_PG_URL (a PostgreSQL server
# URL) the load runs are repeated on PostgreSQL, and with
# LMS_BENCH_REDIS_URL too the quiz start runs on two replicas behind a
# round-robin proxy (its Redis database 12 is emptied).
BENCH_LEARNERS ?= 2000
BENCH_QUIZ_TAKERS ?= 500
BENCH_PINGERS ?= 10000
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...
	@echo "lmsctl mcp: tools and definition bytes per toolset (read: no flag; every: --allow-write --allow-destructive --upload-from)"
	$(GO) run ./cmd/lmsctl mcp --stats --json
	$(GO) run ./cmd/lmsbench -scenario profile,program,catalogue,ping,tenants -binary $(BIN)
	$(GO) run ./cmd/lmsbench -scenario quiz-start -learners $(BENCH_LEARNERS) -binary $(BIN)
	$(GO) run ./cmd/lmsbench -scenario quiz-start -learners $(BENCH_QUIZ_TAKERS) -pingers $(BENCH_PINGERS) -binary $(BIN)
	@if [ -n "$$LMS_BENCH_PG_URL" ]; then \
		$(GO) run ./cmd/lmsbench -scenario profile,program,catalogue,ping -binary "" -database "$$LMS_BENCH_PG_URL"; fi
	@if [ -n "$$LMS_BENCH_PG_URL" ] && [ -n "$$LMS_BENCH_REDIS_URL" ]; then \
		$(GO) run ./cmd/lmsbench -scenario quiz-start -learners $(BENCH_LEARNERS) -binary $(BIN) -replicas 2 \
			-database "$$LMS_BENCH_PG_URL" -redis "$$LMS_BENCH_REDIS_URL"; \
		$(GO) run ./cmd/lmsbench -scenario quiz-start -learners $(BENCH_QUIZ_TAKERS) -pingers $(BENCH_PINGERS) \
			-binary $(BIN) -replicas 2 -database "$$LMS_BENCH_PG_URL" -redis "$$LMS_BENCH_REDIS_URL"; fi

# The H5P service side by side with the Lumi H5P server (npm, wrk): upload
# cold and warm, play model and state saves. Not run by CI.
bench-h5p-lumi: build
	LMS_BIN=$(BIN) bash bench/h5p-lumi/run.sh

# The typed Go client (client/api.gen.go) from the routes' OpenAPI
# document, and the operation registry lmsctl and its MCP tools share
# (internal/ops/registry.json); commit the result (tests fail while they
# are stale).
client:
	$(GO) generate ./internal/ops
	$(GO) generate ./client

# The generated parts of docs/ (the table-owner, trigger and exception
# tables of docs/architecture.md, the package map of docs/developers.md);
# commit the result (tests fail while they are stale).
.PHONY: docs
docs:
	$(GO) test -count=1 ./internal/server -run 'TestArchitectureIsCurrent|TestPackageMapIsCurrent' -update

# go vet, then staticcheck at the version go.mod's tool directive pins
# (it runs offline from the module cache), with the checks staticcheck.conf
# names. CI runs staticcheck beside make test, which runs go vet itself.
.PHONY: lint staticcheck
lint: vet staticcheck

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) tool staticcheck ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin var node_modules $(LTIJS_DIR)/node_modules $(WEBHOOKS_DIR)/node_modules $(OIDC_OP_DIR)/node_modules $(MCPCLIENT_DIR)/node_modules
