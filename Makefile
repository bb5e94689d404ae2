# rfrepro: every target sets up its own virtualenv (.venv) on first use.
#   make demo                      regenerate Sun et al. 2018 Fig. 1 from generated data
#   make test                      the fast test suite (make test-all: everything)
#   make reproduce-<paper>-<item>  one paper figure/table (SMOKE=1: the subsampled CI version)
#   make smoke                     every experiment in smoke mode
#   make report                    results/REPORT.md from the records so far (SMOKE=1: results/smoke/)
#   make list                      the experiments you can reproduce
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
JOBS ?= 2
SMOKE ?=
SMOKE_FLAG := $(if $(filter-out 0,$(SMOKE)),--smoke,)
EXPERIMENTS = $(shell find conf/experiment -name '*.yaml' ! -name '_*' | sed -e 's|conf/experiment/||' -e 's|\.yaml$$||' | sort)

.PHONY: setup demo test test-all smoke report list lint bench clean-results help
.DEFAULT_GOAL := help

help:
	@sed -n '2,8p' Makefile

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(PY) -m rfrepro.reproduce sun2018/fig1 --jobs $(JOBS) $(SMOKE_FLAG)
	$(PY) -m rfrepro.report $(SMOKE_FLAG)

test: setup
	$(PY) -m pytest -q -m "not slow"

test-all: setup
	$(PY) -m pytest -q

reproduce-%: setup
	$(PY) -m rfrepro.reproduce $* --jobs $(JOBS) $(SMOKE_FLAG)

smoke: setup
	@set -e; for e in $(EXPERIMENTS); do $(PY) -m rfrepro.reproduce $$e --smoke --jobs $(JOBS); done
	$(PY) -m rfrepro.report --smoke

report: setup
	$(PY) -m rfrepro.report $(SMOKE_FLAG)

list: setup
	@$(PY) -m rfrepro.reproduce list

lint: setup
	$(VENV)/bin/ruff check src tests scripts experiments

bench: setup
	$(PY) scripts/bench_features.py

clean-results:
	rm -rf results/runs results/tables results/figures results/claims results/smoke results/hydra results/REPORT.md
