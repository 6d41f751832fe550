# Two commands on a fresh machine:
#   make render   -> sets up .venv with what rendering needs (gpuplane and its runtime dependencies) and
#                    renders build/dev and build/prod offline
#   make check    -> adds the test tools to .venv and makes checkov's, Sphinx's and TensorFlow's own venvs (side by
#                    side, once), then runs ruff, mypy, the documentation site build, every test and the checkov scan
#                    of the manifests
# What each downloads and how big it gets: docs/getting-started.md, "What each command downloads".
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two steps, so `make render` never installs the test tools: runtime first, then the dev extras on top.
STAMP_RUNTIME := $(VENV)/.installed-runtime
STAMP := $(VENV)/.installed-dev

CHECKOV := .venv-checkov/bin/checkov

.PHONY: venv venv-dev render check envs tfvenv notice lint typecheck docs test test-fast scan tools bench clean

# Extra pytest arguments; `make check PYTEST_ARGS='-m "not tensorflow"'` skips the TensorFlow tests.
PYTEST_ARGS ?=
# The TensorFlow venv, unless PYTEST_ARGS leaves the TensorFlow tests out: what `make test` and `make check` make first.
TFVENV_IF_TESTED := $(if $(findstring not tensorflow,$(PYTEST_ARGS)),,tfvenv)

$(STAMP_RUNTIME): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $(STAMP_RUNTIME)

# The dev extras include the runtime: one resolve and install, not two, when the venv is new (make check on a fresh
# clone); over a `make render` venv it adds the extras.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP_RUNTIME) $(STAMP)

# `make venv`: what `pulumi up` and `gpuplane` need (Pulumi.yaml runs infra/ with .venv); `make venv-dev` adds
# the test tools.
venv: $(STAMP_RUNTIME)

venv-dev: $(STAMP)

define render_stacks
	$(BIN)/gpuplane render dev --out build/dev
	$(BIN)/gpuplane render prod --out build/prod
endef

render: $(STAMP_RUNTIME)
	$(render_stacks)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/check-jsonschema --builtin-schema vendor.renovate renovate.json

typecheck: $(STAMP)
	$(BIN)/mypy

# The documentation site (docs/, Sphinx + MyST: docs/docs-site.md says why) into build/docs. Warnings are
# errors (-W; --keep-going reports them all first), and -n flags every reference that does not resolve: a
# broken link or a heading anchor that moved fails the build, and so `make check` and CI. -E reads every page
# afresh (a few seconds): an incremental build neither repeats the warnings of unchanged pages nor forgets
# the pages that were missing when it last ran.
# Its own venv, from the `docs` dependency group of pyproject.toml (awscli's docutils pin conflicts with Sphinx's).
SPHINX := .venv-docs/bin/sphinx-build

$(SPHINX): pyproject.toml
	test -x .venv-docs/bin/python || $(PY) -m venv .venv-docs
	.venv-docs/bin/python -m pip install -q --upgrade pip
	.venv-docs/bin/python -m pip install -q --group docs
	touch $(SPHINX)

docs: $(SPHINX)
	$(SPHINX) -E -W --keep-going -n -q -b html docs build/docs

# Byte-code for the source first: the tests start hundreds of Python processes (renders, the CLI, nested pytest
# runs), and where PYTHONDONTWRITEBYTECODE is set (many CI images, some shells) each would compile gpuplane's
# modules again, 0.2-0.4 s of CPU a process. compileall skips symlinked folders: the real ones.
COMPILE = $(BIN)/python -m compileall -q components infra manifests src/gpuplane
# pytest caches each test module's assertion-rewritten byte-code in __pycache__, but not where
# PYTHONDONTWRITEBYTECODE is set: then every worker and every nested pytest run rewrites all 150 test modules
# again, 10 CPU seconds a process, half of what collecting the suite costs. An empty value lets it write (and
# lets the test helpers' byte-code be kept too); __pycache__ is ignored by git.
PYTEST = PYTHONDONTWRITEBYTECODE= $(BIN)/pytest

# checkov's own venv first: the tests that compare skip files and manifests with checkov use it.
# One pytest-xdist worker per CPU and one more (tests/conftest.py: many tests wait, and a waiting worker leaves its
# CPU idle); an idle worker takes queued tests from a busy one (worksteal), so the
# long TensorFlow tests do not hold the others back. `make test PYTEST_ARGS='-n 0'` runs them one at a time.
test: $(STAMP) $(CHECKOV) $(TFVENV_IF_TESTED)
	$(COMPILE)
	$(PYTEST) -q -n auto --dist worksteal $(PYTEST_ARGS)

# Everything but the real-TensorFlow tests and the browser's (Chromium) ones, for the edit-test loop: under 2
# minutes on two CPUs of its own (docs/testing.md has the measured times). No checkov venv needed: its tests skip without it.
test-fast: $(STAMP)
	$(COMPILE)
	GPUPLANE_LEAVE_OUT_TOOLS=chromium $(PYTEST) -q -n auto --dist worksteal -m "not tensorflow" $(PYTEST_ARGS)

# checkov pins an old boto3, so it gets a virtualenv of its own (its pins conflict with ours).
$(CHECKOV):
	$(PY) -m venv .venv-checkov
	.venv-checkov/bin/python -m pip install -q checkov==3.3.30

# The AWS side: each stack's tfplan.json, with that stack's skips from .checkov/aws-skips.yaml (the only place
# AWS-side skips live; each has a reason). The Kubernetes side keeps its skips as annotations on the objects.
AWS_SKIPS = .checkov/aws-skips.yaml
skip_for = $(shell $(BIN)/python -c 'import sys; from gpuplane.infra.tfplan import skip_checks; print(",".join(skip_checks(open(sys.argv[1]).read(), sys.argv[2])))' $(AWS_SKIPS) $(1))

# The same renders as `make render`, from the dev venv like every other check: `make -j` then runs one pip install
# into .venv, not the runtime's and the dev extras' at once (two pips in one venv break it).
scan: $(STAMP) $(CHECKOV)
	$(render_stacks)
	$(BIN)/python -m tests.compare.write_plan build/compare-plan
	$(CHECKOV) -d build/dev/manifests -d build/prod/manifests -d build/compare-plan --framework kubernetes --skip-download --quiet --compact
	$(CHECKOV) -f build/dev/tfplan.json --framework terraform_plan --skip-download --quiet --compact --skip-check "$(call skip_for,dev)"
	$(CHECKOV) -f build/prod/tfplan.json --framework terraform_plan --skip-download --quiet --compact --skip-check "$(call skip_for,prod)"

notice:
	@echo "make check: the tests marked 'tensorflow' install TensorFlow CPU into benchmarks/.cache (once; see"
	@echo "            docs/getting-started.md for the sizes) and run it."
	@echo "            Skip them with: make check PYTEST_ARGS='-m \"not tensorflow\"'"

# The tools some tests need beyond Python (dash, busybox, shellcheck, Chromium, Go's yaml.v3...): .ci/tools lists
# them; at the end of `make check` it says which are missing, what could not run, and the command that installs them.
tools:
	@.ci/tools

# The TensorFlow the tests marked `tensorflow` run, in a venv of its own (benchmarks/tfvenv.py says why); it
# returns at once when the venv is made. Made before the tests start: the slowest tests, run first, are
# TensorFlow's, and every worker would otherwise wait on the one that installs it.
tfvenv:
	$(PY) benchmarks/tfvenv.py

# `make check` first makes its environments side by side: the project's, checkov's, Sphinx's and, unless
# PYTEST_ARGS leaves the TensorFlow tests out, TensorFlow's. Installs wait on the network and the disk as much as
# on the CPUs, so together they take about the time of the longest, not the sum (docs/testing.md has the
# measured times). Then ruff, mypy, the docs site and the checkov scan side by side (mypy, Sphinx and checkov
# each keep one CPU busy; none reads what another writes), then the tests, which use every CPU. The envs come
# first on their own: the project venv's one install also brings the scan's `make render` up to date. GNU make 4
# keeps each step's output together (--output-sync); the make 3.81 of macOS interleaves it.
ENVS := $(STAMP) $(CHECKOV) $(SPHINX) $(TFVENV_IF_TESTED)
SYNC := $(if $(filter 3.%,$(MAKE_VERSION)),,--output-sync=target)

envs: $(ENVS)

check: notice
	@$(MAKE) --no-print-directory -j4 $(SYNC) envs
	@$(MAKE) --no-print-directory -j4 $(SYNC) lint typecheck docs scan
	@$(MAKE) --no-print-directory test tools

clean:
	rm -rf build $(VENV) .venv-checkov .venv-docs
