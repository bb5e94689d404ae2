# rfrepro: every target sets up its own virtualenv (.venv) on first use.
#   make demo                      regenerate Sun et al. 2018 Fig. 1 from generated data
#   make test                      the fast test suite (make test-all: everything; JOBS=n worker processes)
#   make reproduce-<paper>-<item>  one study of `make list`, e.g. make reproduce-sun2018-fig1,
#                                  make reproduce-leaderboard-gaussian-regression, make reproduce-spine-rff-kernel-approx
#                                  (SMOKE=1: the subsampled CI version; JOBS=n runs in parallel;
#                                  SCHEDULER=tcp://host:8786 on a Dask cluster;
#                                  ARGS="key=value ...": overrides, e.g. ARGS="mirror=file:///mirror")
#   make smoke                     every experiment in smoke mode
#   make reproduce-all             every study of the five papers at full settings, then the report
#                                  and the total wall time (JOBS=n, ARGS=..., STUDIES="a/b c/d": only those)
#   make leaderboard               every map at equal feature budgets on its own kernel, cross-paper claims (SMOKE=1, JOBS=n)
#   make report                    results/REPORT.md from the records so far (SMOKE=1: results/smoke/)
#   make reference STUDY=<p>-<i>   run one study at full settings and save its outputs in results/reference/
#   make list                      every study as its make reproduce-<paper>-<item> target, with its time and status
#   make setup                     only the virtualenv (.venv, from requirements.lock)
#   make lock [UPGRADE=1]          refresh requirements.lock (the exact, hashed environment)
#   make lint                      ruff on src, tests, scripts and experiments
#   make bench                     the feature maps' timing benchmark (scripts/bench_features.py)
#   make clean-results             delete every generated results folder (records, plans, outputs, REPORT.md)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
JOBS ?= 2
SMOKE ?=
SMOKE_FLAG := $(if $(filter-out 0,$(SMOKE)),--smoke,)
EXPERIMENTS = $(shell find conf/experiment -name '*.yaml' ! -name '_*' | sed -e 's|conf/experiment/||' -e 's|\.yaml$$||' | sort)

.PHONY: setup lock demo test test-all smoke reproduce-all leaderboard report reference list lint bench clean-results help
.DEFAULT_GOAL := help

# the comment block at the top of this file, without its '#'
help:
	@sed -n '1,/^[^#]/s/^# \{0,1\}//p' Makefile

# The environment is locked: requirements.lock pins every package (dev tools
# included) with its sha256 hashes, for CPython 3.11. It is pip-tools' format
# (pip-compile --generate-hashes) rather than `uv lock` because plain pip
# installs it (--require-hashes), so a cluster node needs no other tool.
# `make setup` installs exactly the lock, then this package without its
# dependencies; `make lock` refreshes the lock after pyproject.toml changed
# (UPGRADE=1: also move every pin to its newest release).
LOCK := requirements.lock

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --require-hashes -r $(LOCK)
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

setup: $(STAMP)

lock: $(STAMP)
	$(PY) -m piptools compile --quiet --generate-hashes --allow-unsafe --extra dev \
	  --strip-extras --no-emit-index-url --no-emit-find-links $(if $(UPGRADE),--upgrade,) \
	  --output-file $(LOCK) pyproject.toml
	$(PY) -m pip install -q --require-hashes -r $(LOCK)
	touch $(STAMP)

demo: setup
	$(PY) -m rfrepro.reproduce sun2018/fig1 --jobs $(JOBS) $(SMOKE_FLAG)
	$(PY) -m rfrepro.report $(SMOKE_FLAG)

# The suite runs in JOBS pytest-xdist worker processes (-n; JOBS=0: in make's own pytest process).
test: setup
	$(PY) -m pytest -q -m "not slow" -n $(JOBS)

test-all: setup
	$(PY) -m pytest -q -n $(JOBS)

reproduce-%: setup
	$(PY) -m rfrepro.reproduce $* --jobs $(JOBS) $(SMOKE_FLAG) $(if $(SCHEDULER),--scheduler $(SCHEDULER),) $(ARGS)

# $(call RUN_EACH,<studies>,<flags>): each study in turn, even when one fails or has no
# data; $$worst is then the worst exit status (1 a run failed, 3 runs not run: see
# rfrepro.harness.run.summary)
RUN_EACH = worst=0; for e in $(1); do $(PY) -m rfrepro.reproduce $$e $(2); \
	  s=$$?; if [ $$s = 1 ] || { [ $$s != 0 ] && [ $$worst = 0 ]; }; then worst=$$s; fi; done
# the results root a paths.results=DIR in ARGS names (empty: the default one)
ARGS_RESULTS = $(lastword $(patsubst paths.results=%,%,$(filter paths.results=%,$(ARGS))))
REPORT_CMD = $(if $(ARGS_RESULTS),RFREPRO_RESULTS=$(ARGS_RESULTS) $(PY) -m rfrepro.report,$(PY) -m rfrepro.report $(SMOKE_FLAG))

# every study in smoke mode, then the smoke report; the exit status is the worst one
smoke: setup
	@$(call RUN_EACH,$(EXPERIMENTS),--smoke --jobs $(JOBS)); \
	  $(PY) -m rfrepro.report --smoke; exit $$worst

# every study of the five papers at full settings (each resumable), then the report and
# the total wall time; the exit status is the worst one. STUDIES="a/b c/d": only those.
PAPER_STUDIES = $(filter-out leaderboard/% spine/%,$(EXPERIMENTS))
STUDIES ?= $(PAPER_STUDIES)
reproduce-all: setup
	@t0=$$(date +%s); $(call RUN_EACH,$(STUDIES),--jobs $(JOBS) $(SMOKE_FLAG) $(if $(SCHEDULER),--scheduler $(SCHEDULER),) $(ARGS)); \
	  $(REPORT_CMD); \
	  echo "reproduce-all: $(words $(STUDIES)) studies in $$(( $$(date +%s) - t0 )) s of wall time (exit status $$worst)"; \
	  exit $$worst

# the cross-paper leaderboard: its studies in turn (each resumable; one pair per kernel:
# gaussian-*, laplacian-*, polynomial-*), then the report. ARGS="paths.results=DIR": the
# runs go to DIR itself, smoke or not (no smoke/ under it), and the report is DIR's
# METHODS="+name -arm": add the method `name` (its yaml's leaderboard block names its kernels) to
# every study of those kernels, and leave the arm `arm` out (sweep.arms_from.add / .drop)
LEADERBOARD = $(filter leaderboard/%,$(EXPERIMENTS))
comma := ,
empty :=
space := $(empty) $(empty)
LB_LIST = $(subst $(space),$(comma),$(strip $(patsubst $(1)%,%,$(filter $(1)%,$(METHODS)))))
LB_ARGS = $(if $(call LB_LIST,+),sweep.arms_from.add=[$(call LB_LIST,+)]) $(if $(call LB_LIST,-),sweep.arms_from.drop=[$(call LB_LIST,-)])
leaderboard: setup
	@for e in $(LEADERBOARD); do $(MAKE) --no-print-directory reproduce-$$(echo $$e | tr / -) ARGS="$(ARGS) $(strip $(LB_ARGS))" || exit $$?; done
	$(REPORT_CMD)

report: setup
	$(PY) -m rfrepro.report $(SMOKE_FLAG)
	$(PY) -m rfrepro.harness.report.readme_table

# results/reference/ (tracked): one study's outputs from a full-settings run, no raw records.
# The study's sweep runs first (it resumes: finished runs are not redone).
reference: setup
	@test -n "$(STUDY)" || { echo "usage: make reference STUDY=<paper>-<item>"; exit 2; }
	$(PY) -m rfrepro.reproduce $(STUDY) --jobs $(JOBS) $(ARGS)
	$(PY) -m rfrepro.harness.reference $(STUDY)

list: setup
	@$(PY) -m rfrepro.reproduce list

lint: setup
	$(VENV)/bin/ruff check src tests scripts experiments

bench: setup
	$(PY) scripts/bench_features.py

clean-results: setup
	$(PY) -m rfrepro.layout | xargs rm -rf
