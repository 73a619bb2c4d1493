# Pontual: two commands. `make demo` sets up and runs the main job ending with the dashboard;
# `make test` sets up and runs lint, types and the tests (all of them, in parallel).
# `make test-fast` is the inner loop: lint aside, the tests without the simulator, a browser, a
# broker or ../shared/data (under a minute).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The exact versions the suite was last run with: `make` installs them (as pip constraints, so a
# dependency added to pyproject.toml but not yet locked still installs); `make lock` updates it.
LOCK := requirements.lock
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml $(LOCK) | cksum | cut -d' ' -f1)
PACKAGES := core gtfs ingest analytics exports cases dashboard pontual sample_data
# System packages the tests need (a real broker, a real browser, PDF text extraction, a real
# PostgreSQL server for the case database; a command may be an absolute path).
SYSTEM_DEPS := mosquitto:mosquitto mosquitto_sub:mosquitto-clients chromium:chromium pdftotext:poppler-utils \
  /usr/lib/postgresql/15/bin/initdb:postgresql java:openjdk-17-jre-headless

.PHONY: demo test test-fast warm bench lint venv sysdeps node-deps clean lock messages

$(STAMP): pyproject.toml $(LOCK)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e '.[dev,bench,spark]'
	@rm -f $(VENV)/.installed-*
	@touch $@

venv: $(STAMP)

sysdeps:
	@missing=""; for dep in $(SYSTEM_DEPS); do cmd=$${dep%%:*}; pkg=$${dep##*:}; \
	  command -v $$cmd >/dev/null 2>&1 || test -x /usr/sbin/$$cmd || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing system packages:$$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing) >/dev/null; \
	  else \
	    echo "missing system packages; run: sudo apt-get install -y$$missing"; exit 2; \
	  fi; \
	fi

lint: venv
	$(BIN)/ruff check $(PACKAGES) tests benchmarks
	$(BIN)/ruff format --check $(PACKAGES) tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

# The independent GTFS-RT consumer of the feed tests (npm gtfs-realtime-bindings) and the OpenID
# Connect provider of the dashboard's login test (npm oidc-provider), when node is here.
node-deps:
	@if command -v npm >/dev/null 2>&1 && [ ! -d tests/node/node_modules/oidc-provider ]; then \
	  npm install --no-audit --no-fund --prefix tests/node >/dev/null; fi

# Parallel workers for the tests (pytest-xdist), a test file per worker at a time: a module's
# fixtures are built once. (--dist loadgroup with xdist_group marks would also keep the users of
# one session fixture together, but pytest-xdist 3.8 under pytest 9 ignores the groups.)
# PYTEST_WORKERS=0 runs them serially.
PYTEST_WORKERS ?= auto
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile
FAST_LANE := not (simulator or browser or broker or shared_data or slow)

# Compile matching's numba kernels into the user cache once (a notice, ~30 s, when cold).
warm: venv
	$(BIN)/pontual warm

test: venv sysdeps node-deps lint warm
	$(BIN)/python -m pytest -q $(PYTEST_PARALLEL)

test-fast: venv
	$(BIN)/python -m pytest -q $(PYTEST_PARALLEL) -m "$(FAST_LANE)"

# The demo's own store and city in data/demo/; the live side (a local Mosquitto from
# deploy/mosquitto, `pontual serve`, `pontual replay` of the last day at 10x) needs sysdeps.
demo: venv sysdeps warm
	$(BIN)/pontual demo

# Update the lock after changing a dependency: newest versions allowed by pyproject.toml, then
# run `make test` and commit pyproject.toml and requirements.lock together.
lock: venv
	$(BIN)/python -m pip install --quiet --upgrade --upgrade-strategy eager -e '.[dev,bench]'
	$(BIN)/python -m pip freeze --exclude-editable > $(LOCK)

# The one catalogue of user-facing texts (docs/adr/0106): extract every text marked with _(),
# gettext(), ngettext() or N_() from the packages, then update the pt-BR .po from it (new ids
# come in with an empty msgstr to fill in, ids no code uses any more are dropped). The date of
# the extraction is left out of the .po's header: it would change at every run.
MESSAGES_PO := core/locale/pt_BR/LC_MESSAGES/pontual.po
messages: venv
	@pot=$$(mktemp --suffix .pot); \
	$(BIN)/pybabel --quiet extract --no-default-keywords -k _ -k gettext -k ngettext:1,2 -k N_ \
	  --add-location file --sort-by-file --no-wrap --project Pontual -o $$pot $(PACKAGES) && \
	$(BIN)/pybabel --quiet update --no-fuzzy-matching --ignore-obsolete --no-wrap \
	  -i $$pot -o $(MESSAGES_PO) -l pt_BR && \
	sed -i '/^"POT-Creation-Date: /d' $(MESSAGES_PO); \
	rc=$$?; rm -f $$pot; exit $$rc

bench: venv
	$(BIN)/python -m benchmarks $(ONLY)

clean:
	rm -rf $(VENV) data .mypy_cache .ruff_cache .pytest_cache
