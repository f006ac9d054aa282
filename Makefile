# One-command set-up: `make run` starts the platform on the embedded
# default (SQLite, local files); `make test` runs every test.
GO      ?= go
BIN     := bin/lms
ADDR    ?= 127.0.0.1:8080
HOST    ?= localhost
ADMIN_EMAIL    ?= admin@localhost
ADMIN_PASSWORD ?= admin-password

# Browser files the H5P service serves (the H5P core player from
# h5p-standalone), pinned in package-lock.json. The package's install
# script only enforces its authors' package manager, so scripts are off.
PLAYER := node_modules/h5p-standalone/dist/frame.bundle.js
# Screenshots of the browser tests land here.
export LMS_TEST_ARTIFACTS ?= $(CURDIR)/var/test-artifacts

.PHONY: build run test test-race bench bench-h5p-lumi vet fmt clean

$(PLAYER): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

build: $(PLAYER)
	$(GO) build -o $(BIN) ./cmd/lms

run: build
	@echo "Starting the LMS on http://$(ADDR) (data in ./var)"
	@echo "Log in:  curl -s -H 'Host: $(HOST)' -H 'Content-Type: application/json' \\"
	@echo "           -d '{\"email\":\"$(ADMIN_EMAIL)\",\"password\":\"$(ADMIN_PASSWORD)\"}' http://$(ADDR)/api/auth/login"
	@echo "API description: http://$(ADDR)/api/openapi.json (send Host: $(HOST))"
	LMS_API_ADDR=$(ADDR) LMS_PLATFORM_HOST=$(HOST) LMS_ADMIN_EMAIL=$(ADMIN_EMAIL) \
		LMS_ADMIN_PASSWORD=$(ADMIN_PASSWORD) ./$(BIN) serve

# Unit tests and the API suite on SQLite; with LMS_TEST_PG_URL,
# LMS_TEST_REDIS_URL and LMS_TEST_S3_URL set (as .ci/run does) the same
# suites also run on PostgreSQL, Redis and S3.
test: $(PLAYER)
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m ./...

test-race: $(PLAYER)
	$(GO) test -race -count=1 -timeout 30m ./...

# Go benchmarks plus the HTTP load runs (load generator on this machine):
# GET /api/profile/me with start-up time and idle memory of `lms serve`,
# the program of a 20 x 10 course, and pings from 500 learners. With
# LMS_BENCH_PG_URL (a PostgreSQL server URL) the program and ping runs are
# repeated on PostgreSQL.
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...
	$(GO) run ./cmd/lmsbench -scenario profile
	$(GO) run ./cmd/lmsbench -scenario program -binary ""
	$(GO) run ./cmd/lmsbench -scenario ping -binary ""
	@if [ -n "$$LMS_BENCH_PG_URL" ]; then \
		$(GO) run ./cmd/lmsbench -scenario program -binary "" -database "$$LMS_BENCH_PG_URL" && \
		$(GO) run ./cmd/lmsbench -scenario ping -binary "" -database "$$LMS_BENCH_PG_URL"; fi

# The H5P service side by side with the Lumi H5P server (npm, wrk): upload
# cold and warm, play model and state saves. Not run by CI.
bench-h5p-lumi: build
	LMS_BIN=$(BIN) bash bench/h5p-lumi/run.sh

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin var node_modules
