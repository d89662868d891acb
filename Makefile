# Two commands on a fresh machine: `make demo` and `make test`. Each creates .venv as needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test venv clean

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,scip]'
	touch $@

venv: $(STAMP)

# The main job: compare formulations on the bundled two-moons instance with HiGHS.
demo: $(STAMP)
	$(BIN)/s3vm compare instances/two_moons.toml --formulations rlp,svm1,bd-mip,vs3vm --kernel linear --balance none

test: $(TEST_STAMP)
	$(BIN)/python -m pytest -q -n 2 tests

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
