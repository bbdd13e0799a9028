#!/usr/bin/env bash
# Builds (when its inputs changed) and runs the pure C++ Verilator harness
# sim/bench/ca_bench.cpp for one width, printing
#   cycles=<n> seconds=<s> cps=<cycles/s>
# on stdout (build messages go to stderr).
#
# The model is built exactly as bindings/build.rs builds it: the flags of
# sim/verilator.flags, the files of sim/ca_top.f, the sim/ico_skip.sh patch,
# one <prefix>__ALL.cpp unit
# and the Verilator runtime, all at -O3 with the same C++ flags (keep CXXFLAGS
# below in step with CXX_FLAGS/VM_DEFINES in bindings/build.rs).
#
# Usage: sim/bench/run.sh <width 32|64|128> <cycles>
# Output: build/bench/w<width>/ (git-ignored); rebuilt when the stamp (a hash
# of Verilator's version, the flags, the RTL, the harness and this script)
# changes. Env: VL15_VERILATOR (default sim/verilator), CXX (default g++).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
W=${1:?usage: run.sh <width> <cycles>}
N=${2:?usage: run.sh <width> <cycles>}
case $W in 32 | 64 | 128) ;; *) echo "run.sh: width must be 32, 64 or 128, got $W" >&2; exit 2 ;; esac
V=${VL15_VERILATOR:-$root/sim/verilator}
CXX=${CXX:-g++}
command -v "$V" >/dev/null || { echo "run.sh: $V not found: run make deps" >&2; exit 1; }

out=$root/build/bench/w$W
pre=Vca$W
mapfile -t flags < <(sed -e 's/#.*//' "$root/sim/verilator.flags" | tr -s ' \t' '\n\n' | sed '/^$/d')
mapfile -t files < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*$//' "$root/sim/ca_top.f" |
  sed "s|^[[:space:]]*|$root/|")
CXXFLAGS=(-std=c++20 -O3 -fPIE -faligned-new -fcf-protection=none
  -DVM_COVERAGE=0 -DVM_SC=0 -DVM_TRACE=1 -DVM_TRACE_FST=1 -DVM_TRACE_VCD=0)

stamp=$({
  "$V" --version
  printf '%s\n' "${flags[@]}" "${CXXFLAGS[@]}" "${files[@]}"
  cat "${files[@]}" "$root/sim/bench/ca_bench.cpp" "$root/sim/ico_skip.sh" "$0"
} | sha256sum | cut -d' ' -f1)

if [ ! -x "$out/ca_bench" ] || [ "$(cat "$out/stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "run.sh: building ca_bench DataW=$W in $out" >&2
  tmp=$out.tmp
  rm -rf "$tmp"
  mkdir -p "$tmp"
  "$V" "${flags[@]}" -GDataW="$W" --prefix "$pre" --top-module ib_ca_top --Mdir "$tmp" \
    -I"$root/rtl" "${files[@]}" >&2
  # Patched as bindings/build.rs patches ib_ca_top: ca_bench.cpp skips the
  # input-combinational region in the rising edge's eval().
  bash "$root/sim/ico_skip.sh" "$tmp" "$pre" >&2
  # One unit with every model source, from the list verilated.mk would use.
  awk '/^VM_(CLASSES|SUPPORT)_(FAST|SLOW) \+=/ { on = 1; next }
       /^[[:space:]]*$/ { on = 0 }
       on { gsub(/\\/, ""); for (i = 1; i <= NF; i++) printf "#include \"%s.cpp\"\n", $i }' \
    "$tmp/${pre}_classes.mk" >"$tmp/${pre}__ALL.cpp"
  vinc=$("$V" --getenv VERILATOR_ROOT)/include
  inc=(-I"$tmp" -I"$vinc" -I"$vinc/vltstd")
  srcs=("$tmp/${pre}__ALL.cpp" "$vinc/verilated.cpp" "$vinc/verilated_threads.cpp"
    "$vinc/verilated_fst_c.cpp" "$root/sim/bench/ca_bench.cpp")
  pids=()
  for s in "${srcs[@]}"; do
    "$CXX" "${CXXFLAGS[@]}" "${inc[@]}" -DDATAW="$W" -DVM_PREFIX="$pre" -w -c "$s" \
      -o "$tmp/$(basename "$s" .cpp).o" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  "$CXX" -pie -o "$tmp/ca_bench" "$tmp"/*.o -llz4 -lz -pthread
  echo "$stamp" >"$tmp/stamp"
  rm -rf "$out"
  mv "$tmp" "$out"
fi

"$out/ca_bench" "$root/tests/vectors/V1_dr_get_nodeinfo.bin" "$N"
