//! The CA twins (`model::twin::ca`, `ca_mp`) against the RTL, cycle by
//! cycle: the seeded fault soak of the CA port with the twin in lockstep
//! (`Fidelity::Lockstep`: every output compared in every cycle, the first
//! difference fails) per device kind and width, and a fabric brought up by
//! the built-in SM with every CA in lockstep, whose trace and end state
//! are the same with the CAs as twins as with all RTL.

use std::path::PathBuf;
use std::process::Command;

use vl15::check::faults::{self, SoakOpts};
use vl15::model::device::CaPortModel;
use vl15::model::twin::Fidelity;

fn lockstep_soak(model: CaPortModel, width: u32, packets: u64, seed: u64) {
    let mut o = SoakOpts::new(width, packets, seed);
    o.model = model;
    o.fidelity = Fidelity::Lockstep;
    o.checkpoint = 500;
    let r = faults::soak(&o).expect("soak");
    eprintln!(
        "{}: {} packets ({} good), {} mismatches, {} cycles, {:.1} s",
        r.device, r.packets, r.good, r.mismatches, r.cycles, r.wall_s
    );
    assert_eq!(r.mismatches, 0, "{:#?}", r.errors);
    assert!(r.packets >= packets);
    assert!(r.stats.to_sma > 0 && r.stats.wire_tx > 0, "{:?}", r.stats);
}

#[test]
fn ca_top_w32_in_lockstep() {
    lockstep_soak(CaPortModel::Top, 32, 3_000, 0x7_0001);
}
#[test]
fn ca_top_w64_in_lockstep() {
    lockstep_soak(CaPortModel::Top, 64, 3_000, 0x7_0002);
}
#[test]
fn ca_top_w128_in_lockstep() {
    lockstep_soak(CaPortModel::Top, 128, 3_000, 0x7_0003);
}
#[test]
fn ca_mp1_in_lockstep() {
    for w in [64, 128] {
        lockstep_soak(CaPortModel::Mp { nports: 1, port: 1 }, w, 2_000, 0x7_0004);
    }
}
#[test]
fn ca_mp2_in_lockstep() {
    for (port, w) in [(1, 64), (2, 64), (1, 128), (2, 128)] {
        lockstep_soak(CaPortModel::Mp { nports: 2, port }, w, 1_500, 0x7_0005);
    }
}

fn topo(name: &str) -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/topologies/").to_string() + name
}

fn vl15(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_vl15"))
        .args(args)
        .output()
        .expect("run vl15");
    assert!(
        out.status.success(),
        "vl15 {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The fabric's CAs (`ib_ca_mp_top`, 2 ports, two of them linked on both)
/// in lockstep with their twins through the SM's bring-up, at both widths.
#[test]
fn fabric_cas_in_lockstep() {
    for w in ["64", "128"] {
        let t = topo("net.2sw2path4hca2port");
        vl15(&[
            "sim",
            "--topology",
            &t,
            "--width",
            w,
            "--fidelity",
            "lockstep",
            "--rtl",
            "Switch*",
        ]);
    }
}

/// The same bring-up with the CAs as twins gives the same trace (every
/// packet on every port at the same cycle) and the same end state as all
/// RTL.
#[test]
fn fabric_with_ca_twins_equals_rtl() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("twin_ca_fabric");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let t = topo("net.2sw2path4hca");
    let mut texts = Vec::new();
    for (tag, extra) in [("rtl", vec![]), ("twin", vec!["--twin", "Hca*"])] {
        let pcap = dir.join(format!("{tag}.pcapng"));
        let state = dir.join(format!("{tag}.state"));
        let mut args = vec![
            "sim",
            "--topology",
            &t,
            "--pcap",
            pcap.to_str().expect("path"),
            "--dump-state",
            state.to_str().expect("path"),
        ];
        args.extend(extra);
        vl15(&args);
        let trace = vl15(&["decode", pcap.to_str().expect("path")]);
        let st = std::fs::read_to_string(&state).expect("state");
        texts.push((trace, st));
    }
    assert!(texts[0].0.lines().count() > 50, "{}", texts[0].0);
    assert_eq!(texts[0].0, texts[1].0, "traces differ");
    assert_eq!(texts[0].1, texts[1].1, "end states differ");
}
