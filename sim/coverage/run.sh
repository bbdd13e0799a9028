#!/usr/bin/env bash
# make coverage: the regression on coverage builds of the RTL, merged and
# reported (docs/coverage.md).
#
# 1. the unit harnesses, every width and configuration (sim/unit/run.sh
#    with UNIT_COVERAGE=1, in a build directory of their own);
# 2. vl15 built with coverage models (VL15_COVERAGE=1, a cargo target
#    directory of its own): `vl15 regress` on ib_ca_top and on the
#    multiport CA, every scenario file (`vl15 sim --scenario`), a soak of
#    each device (CA port, multiport CA ports, the switch at 8 and 64 ports);
# 3. the cargo tests (every test that drives RTL writes its models' counts);
# 4. `vl15 coverage`: merge, summary.json, lcov, cover points; genhtml.
#
# Every run writes its coverage files under $out/dat/<n>-<phase>/, named
# after the run (a unit configuration, a verb, a test), so that "the run
# that hits it first" follows this order.
#
# Env: COVERAGE_OUT (default build/coverage), COVERAGE_SOAK_PACKETS
#      (packets per soak and width, default 20000), COVERAGE_SKIP (phases
#      to leave out, words of: unit regress scenarios soak cargo),
#      COVERAGE_MIN_LINE, COVERAGE_MIN_BRANCH (fail below these percentages;
#      default none), COVERAGE_BASELINE (cover points that must stay hit;
#      default sim/coverage/baseline when it exists), COVERAGE_WAIVERS
#      (the lines and cover points no test reaches, with reasons; default
#      sim/coverage/waivers).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=$(realpath -m "${COVERAGE_OUT:-build/coverage}")
packets=${COVERAGE_SOAK_PACKETS:-20000}
skip=" ${COVERAGE_SKIP:-} "
dat=$out/dat
mkdir -p "$out"
rm -rf "$dat"
mkdir -p "$dat"
t0=$SECONDS
phase() { echo "== coverage: $1 ($((SECONDS - t0)) s)"; }
skipped() { [[ "$skip" == *" $1 "* ]]; }

if ! skipped unit; then
  phase "unit harnesses"
  UNIT_COVERAGE=1 UNIT_COVERAGE_DIR="$dat/1-unit" UNIT_BUILD_DIR="$out/unit" \
    bash sim/unit/run.sh
fi

export VL15_COVERAGE=1 CARGO_TARGET_DIR="$out/target"
phase "building vl15 with coverage models"
cargo build --release -q -p vl15 --bin vl15
vl15=$CARGO_TARGET_DIR/release/vl15

if ! skipped regress; then
  phase "vl15 regress"
  mkdir -p "$dat/2-regress"
  VL15_COVERAGE_DIR="$dat/2-regress" VL15_COVERAGE_RUN=regress \
    "$vl15" regress --width all >/dev/null
  VL15_COVERAGE_DIR="$dat/2-regress" VL15_COVERAGE_RUN=regress-ca-mp \
    "$vl15" regress --width all --ca-mp >/dev/null
fi

if ! skipped scenarios; then
  phase "scenario files"
  mkdir -p "$dat/3-scenarios"
  for s in tests/scenarios/*.toml; do
    VL15_COVERAGE_DIR="$dat/3-scenarios" VL15_COVERAGE_RUN="sim-$(basename "$s" .toml)" \
      "$vl15" sim --scenario "$s" >/dev/null
  done
fi

if ! skipped soak; then
  phase "soaks, $packets packets each"
  mkdir -p "$dat/4-soak"
  for dev in "ca" "ca-mp" "switch" "switch --ports 64 --width 128"; do
    read -r -a a <<<"$dev"
    VL15_COVERAGE_DIR="$dat/4-soak" VL15_COVERAGE_RUN="soak-${a[0]}${a[2]:+-${a[2]}}" \
      "$vl15" soak --device "${a[@]}" --packets "$packets" >/dev/null
  done
fi

if ! skipped cargo; then
  phase "cargo tests"
  mkdir -p "$dat/5-cargo"
  VL15_COVERAGE_DIR="$dat/5-cargo" cargo test --release -q --workspace >"$out/cargo-test.log" 2>&1 ||
    { tail -n 40 "$out/cargo-test.log"; echo "coverage: the cargo tests failed (log: $out/cargo-test.log)"; exit 1; }
fi

phase "report"
args=(--out "$out")
[ -n "${COVERAGE_MIN_LINE:-}" ] && args+=(--min-line "$COVERAGE_MIN_LINE")
[ -n "${COVERAGE_MIN_BRANCH:-}" ] && args+=(--min-branch "$COVERAGE_MIN_BRANCH")
baseline=${COVERAGE_BASELINE:-sim/coverage/baseline}
[ -f "$baseline" ] && args+=(--baseline "$baseline")
waivers=${COVERAGE_WAIVERS:-sim/coverage/waivers}
[ -f "$waivers" ] && args+=(--waivers "$waivers")
rc=0
"$vl15" coverage "${args[@]}" "$dat" || rc=$?
rm -rf "$out/html"
genhtml -q --branch-coverage --title "vl15 RTL coverage" -o "$out/html" "$out/coverage.info" \
  >"$out/genhtml.log" 2>&1 || { cat "$out/genhtml.log"; rc=1; }
echo "coverage: $out/summary.json, $out/cover_points.txt, $out/html/index.html ($((SECONDS - t0)) s)"
exit $rc
