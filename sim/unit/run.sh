#!/usr/bin/env bash
# Builds and runs every unit harness at DataW 32, 64 and 128.
#
# A harness is a directory sim/unit/<top>/ holding
#   tb.cpp    self-checking C++ harness; gets -DDATAW=<w>, argv[1] = repo root,
#             exits non-zero on failure
#   files     RTL files (repo-relative, one per line, '#' comments), in order
#   configs   optional: one line of extra Verilator flags per configuration
#             (bash words, $W expands to the width); default: one empty config
# The top module is <top>, built with -GDataW=<w>.
#
# Usage: sim/unit/run.sh [top ...]   (default: all harnesses)
# Env:   UNIT_BUILD_DIR (default /tmp/vl15_unit), UNIT_WIDTHS (default "32 64 128")
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${UNIT_BUILD_DIR:-/tmp/vl15_unit}
widths=${UNIT_WIDTHS:-"32 64 128"}
jobs=$(nproc 2>/dev/null || echo 2)

tops=("$@")
if [ ${#tops[@]} -eq 0 ]; then
  for d in "$root"/sim/unit/*/; do
    [ -f "$d/tb.cpp" ] && [ -f "$d/files" ] && tops+=("$(basename "$d")")
  done
fi

failed=()
for top in "${tops[@]}"; do
  dir=$root/sim/unit/$top
  mapfile -t files < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$dir/files" | sed "s|^[[:space:]]*|$root/|")
  configs=("")
  if [ -f "$dir/configs" ]; then
    mapfile -t configs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$dir/configs")
  fi
  for W in $widths; do
    for ci in "${!configs[@]}"; do
      eval "extra=(${configs[$ci]})"
      out=$build/$top/w${W}_c$ci
      name="$top DataW=$W config $ci"
      echo "=== $name ${configs[$ci]}"
      rm -rf "$out"
      mkdir -p "$out"
      if ! verilator --cc --exe --build --assert -Wall -j "$jobs" \
          --x-assign unique --x-initial unique \
          -I"$root/rtl" --top-module "$top" -GDataW="$W" "${extra[@]}" \
          -CFLAGS "-std=c++17 -O1 -DDATAW=$W -I$root/sim/unit/common" \
          --Mdir "$out" -o "tb_$top" "${files[@]}" "$dir/tb.cpp" >"$out/build.log" 2>&1; then
        tail -n 40 "$out/build.log"
        echo "--- BUILD FAILED: $name"
        failed+=("$name (build)")
        continue
      fi
      if ! "$out/tb_$top" "$root"; then
        echo "--- FAILED: $name"
        failed+=("$name")
      fi
    done
  done
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "unit: ${#failed[@]} failure(s):"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "unit: all passed"
