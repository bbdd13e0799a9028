//! `--pcap`, `--wave` and progress. A whole bring-up by the built-in SM, written as pcapng as the
//! run goes, reads back in tshark (Debian 12's 4.0, through the USER0
//! mapping the run prints) with nothing malformed; every packet's ICRC and
//! VCRC check with the project's CRC code; each packet is on the
//! interfaces of the two ports its cable joins (the topology file says
//! which), outbound at the sender when it starts and inbound at the
//! receiver one link latency later. tshark must be installed (`make deps`).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use vl15::proto::crc::check_wire;
use vl15::proto::pcap::{read_pcap, Direction};
use vl15::proto::topology::Topology;
use vl15::proto::tshark::{parse_num, tshark_fields, tshark_malformed};

mod common;
use common::topo;

const FILE: &str = "net.2sw2path4hca";
/// `vl15 sim`'s default --link-latency.
const LATENCY: u64 = 4;

fn vl15(args: &[&str], pcap: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_vl15"))
        .args(args)
        .arg("--pcap")
        .arg(pcap)
        .output()
        .expect("running vl15")
}

/// Run vl15 with `--pcap p`; it must succeed; the trace.
fn traced(args: &[&str], p: &std::path::Path) -> vl15::proto::pcap::PcapCapture {
    let out = vl15(args, p);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "vl15 {args:?}: {err}");
    read_pcap(p).unwrap()
}

#[test]
fn a_bring_up_reads_back_in_tshark_with_good_crcs_on_both_ends_of_every_cable() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("bring-up.pcapng");
    let file = topo(FILE);
    let out = vl15(
        &[
            "sim",
            "--topology",
            file.to_str().unwrap(),
            "--threads",
            "1",
        ],
        &pcap,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // It says what it wrote and the exact command that reads it.
    let cmd = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("read it with: "))
        .unwrap_or_else(|| panic!("no tshark command in: {err}"));
    assert!(cmd.starts_with("tshark -o 'uat:user_dlts:"), "{cmd}");

    let cap = read_pcap(&pcap).unwrap();
    let n = cap.records.len();
    assert!(n > 100, "{n} packets");
    assert!(err.contains(&format!("pcap: {n} packets")), "{err}");

    // Wireshark's dissector: nothing malformed, every packet an IB packet
    // on the interface vl15 named, in the direction vl15 gave.
    assert_eq!(tshark_malformed(&pcap).unwrap(), 0);
    let rows = tshark_fields(
        &pcap,
        &["frame.interface_name", "frame.p2p_dir", "infiniband.lrh.vl"],
    )
    .unwrap();
    assert_eq!(rows.len(), n);
    for (r, row) in cap.records.iter().zip(&rows) {
        assert_eq!(Some(row[0].as_str()), r.port.as_deref());
        // Wireshark's p2p_dir: 0 sent, 1 received.
        let want = match r.dir {
            Some(Direction::Outbound) => "0",
            Some(Direction::Inbound) => "1",
            None => panic!("a packet without a direction"),
        };
        assert_eq!(row[1], want, "{row:?}");
        assert_eq!(parse_num(&row[2]), Some(15), "an SMP on VL15: {row:?}");
    }

    // The project's own CRC code: every packet whole and good.
    for r in &cap.records {
        assert_eq!(check_wire(&r.data), Some((true, true)), "{r:?}");
    }

    // Every packet sent on a port arrives on the port at the other end of
    // its cable LATENCY cycles later, and nothing arrives that was not sent.
    let t = Topology::load(&file).unwrap();
    let mut peer = BTreeMap::new();
    for l in &t.links {
        let name = |(n, p): (usize, u8)| format!("{}[{p}]", t.nodes[n].id);
        peer.insert(name(l.a), name(l.b));
        peer.insert(name(l.b), name(l.a));
    }
    let mut sent = BTreeSet::new();
    let mut got = BTreeSet::new();
    for r in &cap.records {
        let port = r.port.clone().unwrap();
        match r.dir.unwrap() {
            Direction::Outbound => {
                let to = peer
                    .get(&port)
                    .unwrap_or_else(|| panic!("{port} has no cable"));
                sent.insert((to.clone(), r.cycle + LATENCY, r.data.clone()));
            }
            Direction::Inbound => {
                got.insert((port, r.cycle, r.data.clone()));
            }
        }
    }
    assert_eq!(sent.len(), n / 2);
    assert_eq!(sent, got);
}

#[test]
fn a_trace_that_cannot_be_created_is_an_error_before_the_run() {
    let out = vl15(
        &["sim", "--topology", topo(FILE).to_str().unwrap()],
        std::path::Path::new("/nonexistent-dir/x.pcapng"),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent-dir/x.pcapng"), "{err}");
    assert!(out.stdout.is_empty(), "the run went ahead");
}

#[test]
fn regress_soak_and_replay_write_traces_too() {
    let dir = tempfile::tempdir().unwrap();
    // regress: interfaces <scenario>.w<width>.<node>[<port>]
    let p = dir.path().join("regress.pcapng");
    let cap = traced(
        &["regress", "--width", "64", "--scenario", "dr_get_nodeinfo"],
        &p,
    );
    let ports: BTreeSet<_> = cap.records.iter().filter_map(|r| r.port.clone()).collect();
    assert_eq!(
        ports,
        BTreeSet::from([
            "dr_get_nodeinfo.w64.sm[1]".to_string(),
            "dr_get_nodeinfo.w64.ca[1]".to_string()
        ])
    );
    // V1 out of the SM, in at the CA; V2 back: four records.
    assert_eq!(cap.records.len(), 4);
    assert_eq!(tshark_malformed(&p).unwrap(), 0);

    // soak: the CA port's wire, both ways.
    let p = dir.path().join("soak.pcapng");
    let cap = traced(
        &[
            "soak",
            "--width",
            "64",
            "--packets",
            "300",
            "--checkpoint",
            "100",
        ],
        &p,
    );
    assert!(cap
        .records
        .iter()
        .all(|r| r.port.as_deref() == Some("w64.ca[1]")));
    let (inbound, outbound): (Vec<_>, Vec<_>) = cap
        .records
        .iter()
        .partition(|r| r.dir == Some(Direction::Inbound));
    assert!(!inbound.is_empty() && !outbound.is_empty());
    // Faults go in with bad CRCs; what the port sends whole (LRH.PktLen
    // 4-byte words plus the VCRC: ibspec §1) always has good ones. A link
    // going down in the middle of a packet leaves the beats it carried.
    assert!(inbound
        .iter()
        .any(|r| check_wire(&r.data) != Some((true, true))));
    let whole = |d: &[u8]| {
        d.len() >= 6 && d.len() == 4 * usize::from(u16::from_be_bytes([d[4], d[5]]) & 0x7FF) + 2
    };
    let sent_whole: Vec<_> = outbound.iter().filter(|r| whole(&r.data)).collect();
    assert!(
        sent_whole.len() * 10 >= outbound.len() * 9,
        "{} of {} whole",
        sent_whole.len(),
        outbound.len()
    );
    for r in sent_whole {
        assert_eq!(check_wire(&r.data), Some((true, true)), "{r:?}");
    }

    // the switch soak: one interface per external port that carried
    // traffic, w<width>.switch[<port>]
    let p = dir.path().join("switch.pcapng");
    let cap = traced(
        &[
            "soak",
            "--device",
            "switch",
            "--width",
            "64",
            "--packets",
            "200",
            "--checkpoint",
            "100",
        ],
        &p,
    );
    let ports: BTreeSet<_> = cap.records.iter().filter_map(|r| r.port.clone()).collect();
    assert!(ports.len() > 2, "{ports:?}");
    for port in &ports {
        let n: u8 = port
            .strip_prefix("w64.switch[")
            .and_then(|p| p.strip_suffix(']'))
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("{port}"));
        assert!((1..=8).contains(&n), "{port}");
    }

    // replay: V1 into the CA port, V2 out, both on ca[1].
    let input = dir.path().join("v1.pcap");
    let v1 = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/V1_dr_get_nodeinfo.bin"
    ))
    .unwrap();
    vl15::proto::pcap::write_pcap(
        &input,
        vl15::proto::pcap::LinkType::Infiniband,
        &[vl15::proto::pcap::PcapRecord {
            cycle: 0,
            data: v1.clone(),
            ..Default::default()
        }],
    )
    .unwrap();
    let p = dir.path().join("replay.pcapng");
    let cap = traced(
        &[
            "replay",
            input.to_str().unwrap(),
            "--output",
            dir.path().join("out.pcap").to_str().unwrap(),
        ],
        &p,
    );
    let got: Vec<_> = cap
        .records
        .iter()
        .map(|r| (r.port.as_deref(), r.dir, r.data.len()))
        .collect();
    assert_eq!(
        got,
        [
            (Some("ca[1]"), Some(Direction::Inbound), v1.len()),
            (Some("ca[1]"), Some(Direction::Outbound), v1.len()),
        ]
    );
}

/// `--wave DIR`: one FST per device, named after its node, listed at the
/// end. Each file starts with FST's header block (block type 0, length
/// 329: gtkwave `fstapi.c`, FST_BL_HDR).
#[test]
fn wave_writes_one_fst_per_device_named_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let waves = dir.path().join("waves");
    let file = topo(FILE);
    let out = Command::new(env!("CARGO_BIN_EXE_vl15"))
        .args(["sim", "--topology", file.to_str().unwrap(), "--wave"])
        .arg(&waves)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let t = Topology::load(&file).unwrap();
    assert!(
        err.contains(&format!("wave: {} FST files", t.nodes.len())),
        "{err}"
    );
    for n in &t.nodes {
        let f = waves.join(format!("{}.fst", n.id));
        assert!(err.contains(&format!("{}: {}", n.id, f.display())), "{err}");
        let b = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(b[0], 0, "{}: FST_BL_HDR", f.display());
        assert_eq!(u64::from_be_bytes(b[1..9].try_into().unwrap()), 329);
    }
}

/// Progress shows on a terminal only: under `script` (a pseudo-terminal)
/// the soak draws its bar on stderr; piped, stderr has no bar, and the
/// summary on stdout is the same line either way.
#[test]
fn progress_is_drawn_on_a_terminal_only() {
    let args = "soak --width 64 --packets 6000 --checkpoint 2000";
    let piped = Command::new(env!("CARGO_BIN_EXE_vl15"))
        .args(args.split(' '))
        .output()
        .unwrap();
    assert!(piped.status.success());
    let err = String::from_utf8_lossy(&piped.stderr);
    assert!(!err.contains("/6000"), "a bar on a pipe: {err}");
    let out = String::from_utf8_lossy(&piped.stdout);
    let summary = out
        .lines()
        .find(|l| l.starts_with("soak ca DATA_W 64 seed 1: 6000 packets"))
        .unwrap_or_else(|| panic!("{out}"))
        .split(", max drain")
        .next()
        .unwrap()
        .to_string();

    let tty = Command::new("script")
        .args(["-qec", &format!("{} {args}", env!("CARGO_BIN_EXE_vl15"))])
        .arg("/dev/null")
        .output()
        .expect("script (bsdutils) runs the command on a pseudo-terminal");
    assert!(tty.status.success());
    let all = String::from_utf8_lossy(&tty.stdout);
    assert!(all.contains("/6000"), "no bar on a terminal: {all}");
    assert!(all.contains(&summary), "{summary:?} not in {all}");
}
