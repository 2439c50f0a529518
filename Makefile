# Set-up is part of every target: on a fresh Debian machine (root) `make demo` and
# `make test` install what they need and skip what is already there:
#   system  apt packages (python3-venv, gfortran, g++, cmake, chromium) only when missing
#   venv    .venv with `pip install -e .[test]`, redone only when pyproject.toml changes
#   kokkos  Kokkos 3.4.01 Serial+OpenMP into ~/.cache/port-fortran/kokkos (first time ~1-2 min
#           on 2 cores; afterwards `port-fortran kokkos install` answers "already installed" in <1 s)
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_OUT ?= demo-out
PYTEST_ARGS ?=
KOKKOS_BACKENDS ?= serial,openmp

.PHONY: all demo test system venv kokkos doctor clean bench

all: test

# one apt-get call, only when something is missing
system:
	@missing=""; \
	command -v $(PY) >/dev/null || missing="$$missing python3"; \
	{ command -v $(PY) >/dev/null && $(PY) -c 'import ensurepip, venv' 2>/dev/null; } || missing="$$missing python3-venv"; \
	command -v gfortran >/dev/null || missing="$$missing gfortran"; \
	command -v g++ >/dev/null || missing="$$missing g++"; \
	command -v cmake >/dev/null || missing="$$missing cmake"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO=sudo; \
	  else echo "not root and no sudo: install$$missing yourself, then rerun make" >&2; exit 1; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(STAMP): pyproject.toml
	@$(BIN)/python -c 'import sys' 2>/dev/null || { rm -rf $(VENV) && $(PY) -m venv $(VENV); }
	-$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $(STAMP)

venv: system $(STAMP)

# a no-op (well under 2 s) when the same install is already in the cache
kokkos: system venv
	$(BIN)/port-fortran kokkos install --backends $(KOKKOS_BACKENDS)

doctor: venv
	$(BIN)/port-fortran doctor --backends $(KOKKOS_BACKENDS)

# exit 1 from port-fortran means "ran, some kernels not ported/verified" (the report says
# which and why): the demo still succeeded; usage errors (2), missing tools (3) and crashes fail it
demo: system venv kokkos
	@rc=0; $(BIN)/port-fortran fortran_kernels/ --backends serial,openmp --out $(DEMO_OUT) -j 2 || rc=$$?; \
	if [ $$rc = 1 ]; then echo "demo: some kernels were not ported or not verified; see $(DEMO_OUT)/report.md"; \
	elif [ $$rc != 0 ]; then exit $$rc; fi

test: system venv kokkos
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: system venv kokkos
	$(BIN)/python bench/parse_bench.py
	$(BIN)/python bench/kokkos_vs_fortran.py fortran_kernels/

clean:
	rm -rf $(VENV) $(DEMO_OUT) build .pytest_cache
