# Set-up is part of every target: on a fresh Debian machine (root) `make demo` and
# `make test` install what they need and skip what is already there.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
KOKKOS_STAMP := $(VENV)/.kokkos-serial-openmp
DEMO_OUT ?= demo-out
PYTEST_ARGS ?=

.PHONY: all demo test system venv kokkos clean bench

all: test

# gfortran for the originals, chromium for the report test; apt only when something is missing
system:
	@missing=""; \
	command -v gfortran >/dev/null || missing="$$missing gfortran"; \
	command -v cmake >/dev/null || missing="$$missing cmake"; \
	command -v g++ >/dev/null || missing="$$missing g++"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP)

# Kokkos 3.4.01 (Serial+OpenMP) into ~/.cache/port-fortran; a no-op when it is already there
kokkos: system venv
	$(BIN)/port-fortran kokkos install --backends serial,openmp

demo: system venv kokkos
	$(BIN)/port-fortran fortran_kernels/ --backends serial,openmp --out $(DEMO_OUT) -j 2

test: system venv kokkos
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: system venv kokkos
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) $(DEMO_OUT) build .pytest_cache
