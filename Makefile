# Two commands on a fresh machine:
#   make render   -> sets up .venv and renders build/dev and build/prod offline
#   make check    -> sets up .venv and runs ruff, mypy, every test and the checkov scan of the manifests
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

CHECKOV := .venv-checkov/bin/checkov

.PHONY: venv render check notice lint typecheck test scan bench clean

# Extra pytest arguments; `make check PYTEST_ARGS='-m "not tensorflow"'` skips the TensorFlow test.
PYTEST_ARGS ?=

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

render: $(STAMP)
	$(BIN)/gpuplane render dev --out build/dev
	$(BIN)/gpuplane render prod --out build/prod

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# checkov's own venv first: the tests that compare skip files and manifests with checkov use it.
test: $(STAMP) $(CHECKOV)
	$(BIN)/pytest -q $(PYTEST_ARGS)

# checkov pins an old boto3, so it gets a virtualenv of its own (its pins conflict with ours).
$(CHECKOV):
	$(PY) -m venv .venv-checkov
	.venv-checkov/bin/python -m pip install -q checkov==3.3.30

# The AWS side: each stack's tfplan.json, with that stack's skips from .checkov/aws-skips.yaml (the only place
# AWS-side skips live; each has a reason). The Kubernetes side keeps its skips as annotations on the objects.
AWS_SKIPS = .checkov/aws-skips.yaml
skip_for = $(shell $(BIN)/python -c 'import sys; from gpuplane.infra.tfplan import skip_checks; print(",".join(skip_checks(open(sys.argv[1]).read(), sys.argv[2])))' $(AWS_SKIPS) $(1))

scan: render $(CHECKOV)
	$(BIN)/python -m tests.compare.write_plan build/compare-plan
	$(CHECKOV) -d build/dev/manifests -d build/prod/manifests -d build/compare-plan --framework kubernetes --skip-download --quiet --compact
	$(CHECKOV) -f build/dev/tfplan.json --framework terraform_plan --skip-download --quiet --compact --skip-check "$(call skip_for,dev)"
	$(CHECKOV) -f build/prod/tfplan.json --framework terraform_plan --skip-download --quiet --compact --skip-check "$(call skip_for,prod)"

notice:
	@echo "make check: one test installs TensorFlow CPU (about 1.6 GB download, once) and runs it."
	@echo "            Skip it with: make check PYTEST_ARGS='-m \"not tensorflow\"'"

check: notice lint typecheck test scan

clean:
	rm -rf build $(VENV) .venv-checkov
