#!/usr/bin/env bash
# ico_skip.sh MDIR PREFIX: lets the host of a Verilated model skip the
# model's input-combinational ("ico") region in an eval() whose inputs are
# the same as at the model's previous eval().
#
# Verilator 5.048 runs the logic its top-level inputs drive on every
# eval(), changed inputs or not. The switch's tiles are evaluated twice a
# cycle (clock low, then the rising edge) and their inputs mostly do not
# change in between, so half of that work is repeated for nothing (port
# 0's ico region is about 16 % of `vl15 serve`'s time). Later Verilator
# releases skip it themselves by comparing the inputs
# (verilator/verilator#7784); until the pin moves, the host, which writes
# every input, says so instead: sim/sw_tiles.h sets the thread's
# `vl15_ico_unchanged` around an eval() after which it wrote no input, and
# sim/ca_shim.cpp around ib_ca_top's rising-edge eval() (its inputs were
# written before the clock-low one).
#
# The patch: in PREFIX___024root___eval(), the ico loop's first iteration
# (`__VicoFirstIteration = 1U`, the only trigger of the region) becomes
# `!vl15_ico_unchanged`. Unset, the model behaves exactly as generated.
# It must match once; anything else (another Verilator) stops the build.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 MDIR PREFIX" >&2
  exit 2
fi
dir=$1 prefix=$2
def="void ${prefix}___024root___eval(${prefix}___024root\\* vlSelf) {"
first='vlSelfRef.__VicoFirstIteration = 1U;'

# Only for a model clocked by clk_i itself: a clock that logic derives from
# an input (a gated clock, ClkGate 1) is computed in the ico region, and
# skipping it would lose that clock's edges.
trig=$(grep -oh '__Vtrigprevexpr___TOP__[A-Za-z0-9_]*' "$dir/${prefix}___024root.h" | sort -u | tr '\n' ' ')
if [ "$trig" != "__Vtrigprevexpr___TOP__clk_i__0 " ]; then
  echo "ico_skip.sh: $prefix is triggered by [$trig], not by clk_i alone: a derived clock lives in the ico region" >&2
  exit 1
fi
mapfile -t files < <(grep -l -- "$def" "$dir/${prefix}___024root__"*.cpp || true)
if [ ${#files[@]} -ne 1 ]; then
  echo "ico_skip.sh: ${prefix}___024root___eval() is defined in ${#files[@]} files of $dir, not 1 (another Verilator version?)" >&2
  exit 1
fi
f=${files[0]}
if grep -q 'vl15_ico_unchanged' "$f"; then
  exit 0  # already patched
fi
n=$(grep -c -F -- "$first" "$f" || true)
if [ "$n" != 1 ]; then
  echo "ico_skip.sh: '$first' occurs $n times in $f, not once (another Verilator version?)" >&2
  exit 1
fi
sed -i -e "s/vlSelfRef\.__VicoFirstIteration = 1U;/vlSelfRef.__VicoFirstIteration = !vl15_ico_unchanged;/" \
  -e "0,/^#include \"${prefix}__pch.h\"\$/s//&\\nextern thread_local bool vl15_ico_unchanged;/" "$f"
if ! grep -q '^extern thread_local bool vl15_ico_unchanged;$' "$f"; then
  echo "ico_skip.sh: no '#include \"${prefix}__pch.h\"' line in $f to declare the flag after" >&2
  exit 1
fi
