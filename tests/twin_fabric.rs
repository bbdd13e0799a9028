//! Whole fabrics with twins: the built-in SM's bring-up of each topology
//! file gives the same run whatever each device runs as. The RTL run is
//! the truth; the same run with every device a twin, and with seeded
//! random subsets of the devices in RTL, must give a pcapng trace that
//! decodes identically packet for packet, cycle for cycle (every packet
//! on every link, with its cycle as the timestamp), and an identical
//! `--dump-state`. A failing subset prints its seed.

mod common;
use common::*;

use std::path::Path;

use vl15::agents::simrun::{bring_up, dump_state, SimOptions};
use vl15::model::stream::Rng;
use vl15::model::twin::{Fidelity, FidelityChoice};
use vl15::proto::decode::decode_pcap;
use vl15::proto::pcap::LinkType;
use vl15::proto::topology::Topology;

/// Every topology file of `tests/topologies/`: ibsim's examples and the
/// mixed-radix fabric.
fn files() -> Vec<&'static str> {
    let mut f = EXAMPLES.to_vec();
    f.push("mixed_radix");
    f
}

/// The bring-up of `file` at `data_w` with `choice`: the decoded trace and
/// the state dump as JSON.
fn run(file: &str, data_w: u32, choice: FidelityChoice) -> (Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("run.pcapng");
    let mut opts = SimOptions::default();
    opts.net.data_w = data_w;
    opts.net.threads = 1;
    opts.net.fidelity = choice.clone();
    opts.net.pcap = Some((pcap.clone(), LinkType::User0));
    let (mut net, _sm, summary) = bring_up(&topo(file), &opts)
        .unwrap_or_else(|e| panic!("{file} DataW {data_w} {choice:?}: {e:#}"));
    assert_eq!(
        summary.active_ports, summary.linked_ports,
        "{file} DataW {data_w} {choice:?}: not every linked port came up"
    );
    let log = net.take_wire_log().expect("the run's pcap");
    drop(log);
    let dump = serde_json::to_string_pretty(&dump_state(&mut net).unwrap()).unwrap();
    (decode_pcap(&pcap).unwrap(), dump)
}

/// The first line in which two traces differ, for the message.
fn first_difference(a: &[String], b: &[String]) -> String {
    let i = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    format!(
        "packet {i}: RTL {:?} vs {:?} ({} and {} packets)",
        a.get(i),
        b.get(i),
        a.len(),
        b.len()
    )
}

fn same(
    file: &str,
    data_w: u32,
    what: &str,
    rtl: &(Vec<String>, String),
    other: &(Vec<String>, String),
) {
    assert!(
        rtl.0 == other.0,
        "{file} DataW {data_w} {what}: traces differ at {}",
        first_difference(&rtl.0, &other.0)
    );
    assert!(
        rtl.1 == other.1,
        "{file} DataW {data_w} {what}: --dump-state differs"
    );
}

#[test]
fn every_topology_brings_up_the_same_with_twins_as_with_rtl() {
    for file in files() {
        for data_w in [64, 128] {
            let rtl = run(file, data_w, FidelityChoice::all(Fidelity::Rtl));
            assert!(!rtl.0.is_empty(), "{file}: an empty trace");
            let twin = run(file, data_w, FidelityChoice::all(Fidelity::Twin));
            same(file, data_w, "all twins", &rtl, &twin);
        }
    }
}

#[test]
fn random_subsets_of_rtl_devices_give_the_same_run() {
    let seed0 = std::env::var("VL15_TWIN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7717_u64);
    for file in files() {
        let t = Topology::load(Path::new(&topo(file))).unwrap();
        let rtl = run(file, 128, FidelityChoice::all(Fidelity::Rtl));
        for k in 0..3u64 {
            let seed = seed0 ^ (k << 32) ^ file.len() as u64;
            let mut rng = Rng::new(seed);
            let chosen: Vec<String> = t
                .nodes
                .iter()
                .filter(|_| rng.below(2) == 0)
                .map(|n| n.id.clone())
                .collect();
            let mut choice = FidelityChoice::all(Fidelity::Twin);
            if !chosen.is_empty() {
                choice.rtl = chosen.clone();
            }
            let mixed = run(file, 128, choice);
            same(
                file,
                128,
                &format!("RTL devices {chosen:?} (VL15_TWIN_SEED={seed0}, subset {k})"),
                &rtl,
                &mixed,
            );
        }
    }
}

#[test]
fn every_device_in_lockstep_agrees_in_every_cycle() {
    // The strongest form: every device's twin stepped beside its RTL, every
    // output compared in every cycle (a difference fails the bring-up).
    for file in files() {
        for data_w in [64, 128] {
            run(file, data_w, FidelityChoice::all(Fidelity::Lockstep));
        }
    }
}

#[test]
fn every_scenario_file_runs_in_lockstep() {
    // Timed link flaps, SM failover and election, and M_Key protection with
    // leases and violations (tests/scenarios/), every device's twin beside
    // its RTL in every cycle.
    let files = scenario_files();
    for f in files {
        let net = vl15::model::net::NetOptions {
            fidelity: FidelityChoice::all(Fidelity::Lockstep),
            ..Default::default()
        };
        let o = vl15::agents::simscenario::run_with(&f, net)
            .unwrap_or_else(|e| panic!("{}: {e:#}", f.display()));
        assert!(o.pass, "{}: {}", f.display(), o.report);
    }
}

/// Each scenario file of `tests/scenarios/`.
fn scenario_files() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    files
}

/// Scenario `f` with every device as `f`: its report, its decoded trace
/// and its state dump at the end.
fn scenario(f: &Path, fidelity: Fidelity) -> (String, Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("run.pcapng");
    let net = vl15::model::net::NetOptions {
        fidelity: FidelityChoice::all(fidelity),
        pcap: Some((pcap.clone(), LinkType::User0)),
        threads: 1,
        ..Default::default()
    };
    let mut o = vl15::agents::simscenario::run_with(f, net)
        .unwrap_or_else(|e| panic!("{} {fidelity:?}: {e:#}", f.display()));
    assert!(o.pass, "{} {fidelity:?}: {}", f.display(), o.report);
    drop(o.net.take_wire_log());
    let dump = serde_json::to_string_pretty(&dump_state(&mut o.net).unwrap()).unwrap();
    (o.report, decode_pcap(&pcap).unwrap(), dump)
}

/// A scenario's report without what may differ between back ends: the
/// device evaluations (a twin is not stepped in calm cycles) and the wall
/// time.
fn comparable(report: &str) -> String {
    report
        .lines()
        .map(|l| l.split(" (").next().unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_scenario_file_runs_the_same_with_twins_as_with_rtl() {
    // Link flaps cut packets on the cable, failover and M_Key leases move
    // the SM's timing: twins that sleep through calm cycles and put whole
    // packets on the cable ahead must still give the RTL's run.
    for f in scenario_files() {
        let rtl = scenario(&f, Fidelity::Rtl);
        let twin = scenario(&f, Fidelity::Twin);
        let name = f.display().to_string();
        let (a, b) = (comparable(&rtl.0), comparable(&twin.0));
        assert!(a == b, "{name}: the reports differ:\n{a}\n---\n{b}");
        assert!(
            rtl.1 == twin.1,
            "{name}: traces differ at {}",
            first_difference(&rtl.1, &twin.1)
        );
        assert!(rtl.2 == twin.2, "{name}: --dump-state differs");
    }
}
