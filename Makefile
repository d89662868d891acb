# Two commands on a fresh machine: `make demo` and `make test`. Each creates .venv as needed,
# with every package at the version constraints.txt pins (reproducible runs, CI included).
#   make test-latest   the suite against the newest releases setup.cfg allows (.venv-latest)
#   make test-oldest   the suite against the lower bounds of setup.cfg (.venv-oldest)
#   make constraints   refresh constraints.txt from a fresh install of the newest releases
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
LATEST := .venv-latest
OLDEST := .venv-oldest
FREEZE := .venv-freeze
PIN    := --constraint constraints.txt
# An editable install of a package_dir layout makes setuptools print an information notice
# ("Editable installation. ... folders in your working directory with the same name as your
# package"; there is no such folder here) as a Python warning: this filter drops that one
# message. `pip install .` prints no warning and needs no filter (tests/test_packaging.py).
EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

.PHONY: demo test test-fast lint venv clean test-latest test-oldest constraints docs catalog

$(STAMP): setup.cfg pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade $(PIN) pip
	$(EDITABLE) $(BIN)/python -m pip install --quiet $(PIN) -e '.[sdpa]'
	touch $@

# The test environment: every extra whose code the tests exercise (pictures, Dask, Parquet, the
# docs build) besides the solvers, and the linter.
TEST_EXTRAS := test,scip,sdpa,plot,dask,parquet,docs,lint

$(TEST_STAMP): $(STAMP)
	$(EDITABLE) $(BIN)/python -m pip install --quiet $(PIN) -e '.[$(TEST_EXTRAS)]'
	touch $@

venv: $(STAMP)

# The main job: on the bundled two moons (rbf kernel, count balance), the local methods, the SDP
# relaxation with its interval, the Bennett-Demiriz MIP under a 10 s limit, and the exact bb,
# which proves its labeling optimal. `make demo PLOT=demo.png` also draws their decision
# boundaries side by side (PNG, SVG or PDF; installs the plot extra).
DEMO_FORMULATIONS := vs3vm,switching,sdp,bd-mip,bb
PLOT ?=
# In a variable: a comma written inside $(if ...) would split its arguments.
PLOT_EXTRAS := sdpa,plot
demo: $(STAMP)
	$(if $(PLOT),$(EDITABLE) $(BIN)/python -m pip install --quiet $(PIN) -e '.[$(PLOT_EXTRAS)]')
	$(BIN)/s3vm compare instances/two_moons.toml --formulations $(DEMO_FORMULATIONS) --set bd-mip.time_limit=10 --quiet $(if $(PLOT),--plot $(PLOT))

# s3vm_models/core/catalog.py (the shipped formulations' options, read by the command line's
# parser) written from the classes, through a checked temporary file: run after changing an
# option; on an up-to-date tree it changes nothing.
catalog: $(STAMP)
	$(BIN)/python -m s3vm.core.catalog_writer

test: $(TEST_STAMP)
	$(BIN)/python -m pytest -q -n 2 tests

# The quick loop while changing code (docs/contributing.md): the suite less the tests marked
# slow (a minute or more), subprocess (starts the command line or a Python of its own) and
# wallclock (measures elapsed time). `make test` runs them all.
# Byte code is cached (PYTHONDONTWRITEBYTECODE emptied: where the environment sets it, every run
# compiles each module and rewrites each test file's asserts again, a third of the minute).
FAST := not slow and not subprocess and not wallclock and not packaging
test-fast: $(TEST_STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n 2 -m "$(FAST)" tests

# The linter (ruff, configured in pyproject.toml): 0 findings, as .ci/run checks.
lint: $(TEST_STAMP)
	$(BIN)/python -m ruff check .

# The newest releases within setup.cfg's bounds, in a venv of their own made anew each time.
test-latest:
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(EDITABLE) $(LATEST)/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager -e '.[$(TEST_EXTRAS)]'
	$(LATEST)/bin/python -m pip list --format=freeze | grep -iE '^(numpy|scipy|pandas|scikit-learn|pyomo|highspy|cvxpy|scs|clarabel|pyscipopt)=='
	$(LATEST)/bin/python -m pytest -q -n 2 tests

# The lower bounds of setup.cfg: the core at constraints-min.txt (no SCIP: those tests skip),
# then with the scip extra at constraints-min-scip.txt. Wheels only: no compiler is needed.
test-oldest:
	rm -rf $(OLDEST)
	$(PYTHON) -m venv $(OLDEST)
	$(OLDEST)/bin/python -m pip install --quiet --upgrade $(PIN) pip
	$(EDITABLE) $(OLDEST)/bin/python -m pip install --quiet --only-binary :all: --constraint constraints-min.txt -e '.[test]'
	$(OLDEST)/bin/python -m pip list --format=freeze | grep -iE '^(numpy|scipy|pandas|scikit-learn|pyomo|highspy|cvxpy|scs|clarabel)=='
	$(OLDEST)/bin/python -m pytest -q -n 2 tests
	$(EDITABLE) $(OLDEST)/bin/python -m pip install --quiet --only-binary :all: --constraint constraints-min-scip.txt -e '.[test,scip]'
	$(OLDEST)/bin/python -m pip list --format=freeze | grep -iE '^(pyomo|pyscipopt)=='
	$(OLDEST)/bin/python -m pytest -q -n 2 tests

# Every package of the test environment, pinned: install the newest releases setup.cfg allows
# into a fresh venv and freeze it (s3vm itself and the venv's own setuptools left out).
constraints:
	rm -rf $(FREEZE)
	$(PYTHON) -m venv $(FREEZE)
	$(FREEZE)/bin/python -m pip install --quiet --upgrade pip
	$(FREEZE)/bin/python -m pip install --quiet '.[$(TEST_EXTRAS)]'
	{ echo "# Every package of the test environment: 'make constraints' installs s3vm[$(TEST_EXTRAS)] into a"; \
	  echo "# fresh venv with the newest releases setup.cfg allows and freezes it (made with Python"; \
	  echo "# $$($(FREEZE)/bin/python -c 'import platform; print(platform.python_version(), "on", platform.system(), platform.machine())'))."; \
	  echo "# make demo, make test and .ci/run install with it; refresh it, then run make test."; \
	  $(FREEZE)/bin/python -m pip freeze --all --exclude s3vm --exclude setuptools; } > constraints.txt
	rm -rf $(FREEZE)

clean:
	rm -rf $(VENV) $(LATEST) $(OLDEST) $(FREEZE) build site *.egg-info .pytest_cache .hypothesis

# The documentation site: docs/ and the API reference from the docstrings, into site/ (strict:
# a broken link or an unresolvable reference fails the build).
docs: $(STAMP)
	$(EDITABLE) $(BIN)/python -m pip install --quiet $(PIN) -e '.[sdpa,docs]'
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict
