# Two commands for a fresh machine: `make demo` and `make test`. Each creates .venv and installs what it needs
# (the test tools, Dask for the executor tests, mkdocs for the site's build test, and the [rl] extra for the
# agent's training tests: torch's CPU build, stable-baselines3, sb3-contrib, gymnasium).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# pytest workers: 2 on CI's 2-core machine; override with `make test JOBS=1`
JOBS   ?= 2

.PHONY: demo test check install bench docs clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,dask,docs,rl]'
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m optsched.demo

# the layering contract (no upward import, no cycle), style and types, then the tests
check: $(STAMP)
	$(BIN)/lint-imports --no-logo --no-cache
	$(BIN)/ruff check --quiet src tests benchmarks
	$(BIN)/mypy

test: check
	$(BIN)/python -m pytest -q -n $(JOBS) -p no:cacheprovider tests src/optsched --doctest-modules

# the suites run side by side on the machine's cores (python -m benchmarks --jobs N)
bench: $(STAMP)
	$(BIN)/python -m benchmarks

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache .ruff_cache build site src/*.egg-info
