# Set-up is part of every target: `make demo` and `make test` install what they need and
# skip what is already there:
#   system     compilers and Python's venv module. As root on Debian (or with sudo): one
#              apt-get call for what is missing (python3-venv, gfortran, g++, chromium, and
#              python3-dev for the Python bindings).
#              Without root: nothing is installed; it says which compilers are missing and
#              how to point at them (FC=..., CXX=..., `module load gcc`) and goes on when
#              they are there (chromium is optional: the browser tests of the report skip).
#   venv       .venv with `pip install -e .[test]`, redone only when pyproject.toml changes;
#              CMake comes from the `cmake` package on PyPI, so no system CMake is needed
#   kokkos     Kokkos 3.4.01 Serial+OpenMP into ~/.cache/port-fortran/kokkos (first time ~1-2 min
#              on 2 cores; afterwards `port-fortran kokkos install` answers "already installed" in <1 s)
#   wheelhouse every wheel port-fortran needs, and the Kokkos source, for installing it on a
#              machine without internet (docs/install.md); `make test` checks such an install
# Compilers: FC (a gfortran) and CXX are honoured, e.g. `make test FC=gfortran-13 CXX=g++-13`.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_OUT ?= demo-out
PYTEST_ARGS ?=
KOKKOS_BACKENDS ?= serial,openmp
# make's built-in FC is f77: only a value the user gave counts
PF_FC := $(if $(filter default undefined,$(origin FC)),gfortran,$(FC))
PF_CXX := $(if $(filter default undefined,$(origin CXX)),g++,$(CXX))
WHEELHOUSE ?= wheelhouse
WHEEL_EXTRAS ?= cluster
# for another machine's Python and platform, e.g. WHEEL_PYTHON=3.10 WHEEL_PLATFORM=manylinux2014_x86_64
WHEEL_PYTHON ?=
WHEEL_PLATFORM ?=
KOKKOS_SDIST := pykokkos-base==0.0.7

.PHONY: all demo test system venv kokkos doctor clean bench wheelhouse

all: test

# root: one apt-get call, only when something is missing; not root: say what and how, no apt
system:
	@missing=""; optional=""; \
	command -v $(PY) >/dev/null || missing="$$missing python3"; \
	{ command -v $(PY) >/dev/null && $(PY) -c 'import ensurepip, venv' 2>/dev/null; } || missing="$$missing python3-venv"; \
	command -v $(PF_FC) >/dev/null || missing="$$missing gfortran"; \
	command -v $(PF_CXX) >/dev/null || missing="$$missing g++"; \
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null || optional="chromium"; \
	$(PY) -c 'import os, sys, sysconfig; sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null \
	  || optional="$$optional python3-dev"; \
	if [ -z "$$missing$$optional" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=sudo; \
	else SUDO=none; fi; \
	if [ "$$SUDO" != none ] && command -v apt-get >/dev/null; then \
	  echo "installing:$$missing $$optional"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing $$optional; \
	  exit $$?; \
	fi; \
	for m in $$missing; do case $$m in \
	  gfortran) echo "missing: a Fortran compiler ($(PF_FC) not found). Without root: load one (e.g. \`module load gcc\`) or point at it: make ... FC=/path/to/gfortran" >&2;; \
	  g++) echo "missing: a C++ compiler ($(PF_CXX) not found). Without root: load one (e.g. \`module load gcc\`) or point at it: make ... CXX=/path/to/g++" >&2;; \
	  python3|python3-venv) echo "missing: a Python with the venv module ($(PY)). Without root: \`module load python\` (or conda, pyenv), or point at one: make ... PY=/path/to/python3" >&2;; \
	esac; done; \
	case "$$optional" in *chromium*) echo "note: chromium not found: the browser tests of report.html will be skipped" >&2;; esac; \
	case "$$optional" in *python3-dev*) echo "note: no Python.h for $(PY): \`port-fortran bindings\` (Python modules of ports) needs the headers: a Python module of your site that has them, or PY=/path/to/python3" >&2;; esac; \
	if [ -n "$$missing" ]; then echo "not root and no sudo: nothing was installed; fix the above and rerun make (\`port-fortran doctor\` checks a set-up)" >&2; exit 1; fi

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
	@# a whole application: heat77 (F77, Makefile, COMMON) modernised and proven by its own output
	$(BIN)/port-fortran app fortran_kernels/apps/heat77 --backends serial,openmp --out $(DEMO_OUT)/app-heat77 -j 2 --quiet \
	  || { echo "demo: the modern heat77 did not match the original; see $(DEMO_OUT)/app-heat77/report.md"; exit 1; }

test: system venv kokkos $(WHEELHOUSE)/.complete
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: system venv kokkos
	$(BIN)/python bench/parse_bench.py
	$(BIN)/python bench/kokkos_vs_fortran.py fortran_kernels/

# The wheelhouse: port-fortran's wheel, a wheel of every dependency, and the Kokkos source
# (the pykokkos-base sdist) for `pip install --no-index --find-links wheelhouse port-fortran`
# and an offline `port-fortran kokkos install` (docs/install.md). For this machine's Python
# and platform wheels are built where PyPI has none; for another one (WHEEL_PYTHON,
# WHEEL_PLATFORM) only published wheels are downloaded.
ifeq ($(WHEEL_PLATFORM)$(WHEEL_PYTHON),)
WHEEL_DEPS = $(BIN)/python -m pip wheel -q -w $(WHEELHOUSE) --find-links $(WHEELHOUSE)
else
WHEEL_DEPS = $(BIN)/python -m pip download -q -d $(WHEELHOUSE) --find-links $(WHEELHOUSE) --only-binary=:all: \
  $(if $(WHEEL_PYTHON),--python-version $(WHEEL_PYTHON)) $(if $(WHEEL_PLATFORM),--platform $(WHEEL_PLATFORM))
endif

wheelhouse: venv
	@mkdir -p $(WHEELHOUSE)
	rm -f $(WHEELHOUSE)/port_fortran-*.whl $(WHEELHOUSE)/.complete
	$(BIN)/python -m pip wheel -q --no-deps --no-build-isolation -w $(WHEELHOUSE) .
	$(WHEEL_DEPS) "$$(ls $(WHEELHOUSE)/port_fortran-*.whl)$(if $(WHEEL_EXTRAS),[$(WHEEL_EXTRAS)])"
	$(BIN)/python -m pip download -q -d $(WHEELHOUSE) --no-deps --no-binary :all: --no-build-isolation $(KOKKOS_SDIST)
	@touch $(WHEELHOUSE)/.complete
	@echo "$(WHEELHOUSE): $$(ls $(WHEELHOUSE) | wc -l) files, $$(du -sh $(WHEELHOUSE) | cut -f1); copy it over and see docs/install.md"

# made once for `make test` (the test installs the current tree's own wheel beside it)
$(WHEELHOUSE)/.complete: pyproject.toml
	$(MAKE) wheelhouse

clean:
	rm -rf $(VENV) $(DEMO_OUT) build .pytest_cache $(WHEELHOUSE)
