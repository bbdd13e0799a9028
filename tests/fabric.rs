//! Whole fabrics of RTL switches and CAs checked against the real
//! ibsim and ibnetdiscover on the same topology files.
//!
//! - `vl15 discover` (every SMP processed hop by hop by the Verilated
//!   ib_switch_top / ib_ca_mp_top) prints byte-for-byte what ibnetdiscover
//!   prints against ibsim attached at the same CA (the date line aside).
//! - A DR Get(NodeInfo) to every node returns the same 64 bytes of NodeInfo
//!   from the RTL fabric as from ibsim along the same path.
//!
//! Needs ibsim-utils, libumad2sim0 and infiniband-diags (`make deps`).

mod common;
use common::*;

use std::path::Path;

use vl15::agents::discover::{discover_topology, NetSmp};
use vl15::agents::discover::{normalize_generated_line, SmpTransport};
use vl15::agents::ibsim::IbsimServer;
use vl15::agents::node_sma::Net;
use vl15::model::device::AddressHandle;
use vl15::model::net::NetOptions;
use vl15::proto::mad;
use vl15::proto::packet::consts::{ATTR_NODE_INFO, METHOD_GET};
use vl15::proto::topology::Topology;
use vl15::run::netbench::dr_paths;
use vl15_bindings::DEV_DATA_WIDTHS;

/// The id of the file's first CA (where the SM runs in both worlds).
fn first_ca(path: &Path) -> String {
    let t = Topology::load(path).unwrap();
    t.nodes
        .iter()
        .find(|n| n.kind == vl15::proto::topology::NodeKind::Ca)
        .expect("a CA")
        .id
        .clone()
}

fn ibnetdiscover_on_ibsim(path: &Path, node: &str) -> String {
    let server = IbsimServer::start(path).unwrap_or_else(|e| panic!("{e:#}"));
    real_ibnetdiscover(&server, Some(node))
}

#[test]
fn rtl_discover_equals_ibnetdiscover_on_ibsim() {
    for name in EXAMPLES {
        let path = topo(name);
        let ca = first_ca(&path);
        let real = ibnetdiscover_on_ibsim(&path, &ca);
        let (mine, net) = discover_topology(&path, Some(&ca), None, &[], NetOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert_eq!(
            normalize_generated_line(&mine),
            normalize_generated_line(&real),
            "{name} from {ca}: RTL discover differs from ibnetdiscover on ibsim"
        );
        // The walk really crossed the RTL: every device was clocked, and
        // the switches forwarded (their SMAs alone cannot produce links).
        assert!(net.devs.iter().all(|d| d.ticks > 0), "{name}");
        assert!(real.contains("\nSwitch\t"), "{name}: {real}");
    }
}

/// Switches of 18, 40 and 64 ports in one fabric, CAs on high port numbers
/// (`tests/topologies/mixed_radix`): the RTL walk from two CAs prints what
/// ibnetdiscover prints on the real ibsim.
#[test]
fn rtl_discover_of_18_40_and_64_port_switches_equals_ibsim() {
    let path = topo("mixed_radix");
    for ca in ["H-1", "H-5"] {
        let real = ibnetdiscover_on_ibsim(&path, ca);
        let (mine, net) = discover_topology(&path, Some(ca), None, &[], NetOptions::default())
            .unwrap_or_else(|e| panic!("mixed_radix: {e:#}"));
        assert_eq!(
            normalize_generated_line(&mine),
            normalize_generated_line(&real),
            "mixed_radix from {ca}: RTL discover differs from ibnetdiscover on ibsim"
        );
        for (n, want) in [("S-edr", 18), ("S-hdr", 40), ("S-ndr", 64)] {
            assert!(real.contains(&format!("Switch\t{want} ")), "{n}: {real}");
            let d = net.devs.iter().find(|d| d.name == n).unwrap();
            assert_eq!(d.model_ports(), want, "{n}: ports of its RTL model");
        }
    }
}

/// A switch the RTL cannot be is refused at its line, and so is a CA of
/// more than 2 ports, with the exit status of bad input.
#[test]
fn switches_of_more_than_64_ports_and_cas_of_more_than_2_are_refused_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    for (text, line, what) in [
        ("# a big switch\nSwitch\t65 \"S-big\"\n[1]\t\"H\"[1]\n\nHca\t1 \"H\"\n[1]\t\"S-big\"[1]\n", 2, "65 ports"),
        ("Switch\t8 \"S\"\n[1]\t\"H\"[1]\n\n\nHca\t3 \"H\"\n[1]\t\"S\"[1]\n", 5, "3 ports"),
    ] {
        let path = dir.path().join("bad.topo");
        std::fs::write(&path, text).unwrap();
        let err = match Net::new(Topology::load(&path).unwrap(), NetOptions::default()) {
            Ok(_) => panic!("{what}: accepted"),
            Err(e) => e,
        };
        let msg = format!("{err:#}");
        assert!(
            msg.starts_with(&format!("{}:{line}: ", path.display())) && msg.contains(what),
            "{msg}"
        );
        assert!(err.is::<vl15::proto::topology::TopologyError>(), "{msg}");
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_vl15"))
            .args(["sim", "--topology"])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(&format!("bad.topo:{line}: ")), "{stderr}");
    }
}

/// ibnetdiscover on ibsim after console commands (Unlink, ReLink, ...).
fn ibnetdiscover_on_ibsim_after(path: &Path, node: &str, console: &[&str]) -> String {
    let mut server = IbsimServer::start_with_console(path).unwrap_or_else(|e| panic!("{e:#}"));
    for c in console {
        let said = server.console(c).unwrap_or_else(|e| panic!("{e:#}"));
        assert!(!said.contains("not found"), "ibsim {c:?}: {said}");
    }
    real_ibnetdiscover(&server, Some(node))
}

#[test]
fn unlink_and_relink_match_ibsim() {
    let path = topo("net.2sw2path4hca");
    let ca = first_ca(&path);
    // One of the two inter-switch cables and a CA's cable go away, then the
    // switch cable comes back.
    let cases: [&[&str]; 3] = [
        &[r#"Unlink "Switch1"[5]"#],
        &[r#"Unlink "Switch1"[5]"#, r#"Unlink "Hca4""#],
        &[r#"Unlink "Switch2""#, r#"ReLink "Switch2"[3]"#],
    ];
    for console in cases {
        let real = ibnetdiscover_on_ibsim_after(&path, &ca, console);
        let lines: Vec<String> = console.iter().map(|c| c.to_string()).collect();
        let (mine, _) = discover_topology(&path, Some(&ca), None, &lines, NetOptions::default())
            .unwrap_or_else(|e| panic!("{console:?}: {e:#}"));
        assert_eq!(
            normalize_generated_line(&mine),
            normalize_generated_line(&real),
            "after {console:?}"
        );
    }
    // The cases really change the fabric: Hca4 is gone after the second.
    let real = ibnetdiscover_on_ibsim_after(&path, &ca, cases[1]);
    assert!(!real.contains("Hca4"), "{real}");
}

#[test]
fn dr_nodeinfo_from_rtl_equals_ibsim() {
    for name in EXAMPLES {
        let path = topo(name);
        let ca = first_ca(&path);
        let server = IbsimServer::start(&path).unwrap_or_else(|e| panic!("{e:#}"));
        let mut client = server
            .connect(Some(&ca))
            .unwrap_or_else(|e| panic!("{e:#}"));
        let mut net = Net::new(Topology::load(&path).unwrap(), NetOptions::default()).unwrap();
        let d = net.dev_index(&ca).unwrap();
        net.attach_sm(d, 1).unwrap();
        let paths = dr_paths(&net.topo, d, 1);
        let mut checked = 0;
        for (n, p) in paths.iter().enumerate() {
            let Some(p) = p else { continue };
            let req = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 0x1000 + n as u64, p);
            let theirs = client
                .smp(&req, 0xFFFF)
                .unwrap_or_else(|e| panic!("{name}: ibsim, node {n}: {e:#}"));
            let mine = NetSmp {
                net: &mut net,
                dev: d,
                max_cycles: 200_000,
                queries: 0,
            }
            .query(&req)
            .unwrap_or_else(|e| panic!("{name}: RTL, node {n}: {e:#}"));
            assert_eq!(mad::status(&mine), mad::status(&theirs), "{name} node {n}");
            assert_eq!(
                mad::data(&mine),
                mad::data(&theirs),
                "{name}: NodeInfo of {} via {p:?}",
                net.topo.nodes[n].id
            );
            checked += 1;
        }
        assert_eq!(checked, net.topo.nodes.len(), "{name}: every node reached");
    }
}

#[test]
fn discover_text_is_stable_across_link_latency() {
    // The fabric's timing must not change what is found.
    let path = topo("net.2sw2path4hca");
    let a = discover_topology(&path, None, None, &[], NetOptions::default())
        .unwrap()
        .0;
    let b = discover_topology(
        &path,
        None,
        None,
        &[],
        NetOptions {
            link_latency: 37,
            ..Default::default()
        },
    )
    .unwrap()
    .0;
    assert_eq!(normalize_generated_line(&a), normalize_generated_line(&b));
}

/// A one-port CA is the same port whether it is `ib_ca_top` itself or
/// `ib_ca_mp_top` with one port: a whole discovery of a fabric gives the
/// same packets on every link at the same cycles, at either width.
#[test]
fn one_port_cas_as_ib_ca_top_run_cycle_for_cycle_as_the_multiport_top() {
    let path = topo("net.2sw2path4hca");
    for w in vl15_bindings::DEV_DATA_WIDTHS {
        let run = |ca_top| {
            let opts = NetOptions {
                trace: true,
                data_w: w,
                ca_top,
                ..Default::default()
            };
            let (text, net) = discover_topology(&path, None, None, &[], opts).unwrap();
            (normalize_generated_line(&text), net.trace, net.cycle)
        };
        let (mp_text, mp_trace, mp_cycles) = run(false);
        let (top_text, top_trace, top_cycles) = run(true);
        assert!(mp_trace.len() > 100, "{}", mp_trace.len());
        assert_eq!(mp_text, top_text);
        assert_eq!(mp_cycles, top_cycles);
        assert_eq!(mp_trace, top_trace, "DataW {w}");
    }
}

/// ibspec §5 worked trace: SM on CA A port 1 → switch S (in 3, out 5) → CA
/// B port 2, hop count 2.
const WORKED: &str = "Hca 2 \"A\"\n[1] \"S\"[3]\n\nSwitch 8 \"S\"\n[3] \"A\"[1]\n[5] \"B\"[2]\n\nHca 2 \"B\"\n[2] \"S\"[5]\n";

#[test]
fn worked_trace_hc2_hop_pointers_on_the_wire() {
    for w in DEV_DATA_WIDTHS {
        worked_trace_hc2_at(w);
    }
}

fn worked_trace_hc2_at(w: u32) {
    use vl15::proto::crc::check_wire;
    use vl15::proto::packet::attr::NodeInfo;
    let topo = Topology::parse(WORKED, Path::new("worked")).unwrap();
    let mut net = Net::new(
        topo,
        NetOptions {
            trace: true,
            data_w: w,
            ..Default::default()
        },
    )
    .unwrap();
    net.trace.clear();
    let a = net.dev_index("A").unwrap();
    net.attach_sm(a, 1).unwrap();
    let req = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 0x1234, &[1, 5]);
    let resp = NetSmp {
        net: &mut net,
        dev: a,
        max_cycles: 100_000,
        queries: 0,
    }
    .query(&req)
    .unwrap();
    net.run_until_idle(10_000).unwrap();
    // The response is B's NodeInfo, LocalPortNum = the port it arrived on.
    let ni = NodeInfo::decode(mad::data(&resp)).unwrap();
    let b = net.dev_index("B").unwrap();
    assert_eq!(ni.node_guid, net.topo.nodes[b].node_guid);
    assert_eq!(ni.local_port_num, 2);
    // What the SM gets back: D = 1, hop pointer 0 (ibspec §5: the SM's CA
    // receives hp = 1 with DrSLID permissive and decrements it).
    assert_eq!(resp[6], 0, "hop pointer at the SM");
    assert_eq!(resp[4] & 0x80, 0x80, "D bit at the SM");

    // On the wire (ibspec §5): hp 1 (A→S), 2 (S→B) out; 2 (B→S), 1 (S→A)
    // back; ReturnPath[1] = 3 written by S, ReturnPath[2] = 2 by B.
    let mut t = net.trace.clone();
    t.sort_by_key(|e| e.cycle);
    let dirs: Vec<&str> = t.iter().map(|e| e.dir.as_str()).collect();
    assert_eq!(dirs, ["A[1]>S[3]", "S[5]>B[2]", "B[2]>S[5]", "S[3]>A[1]"]);
    let expect = [
        // (D, hp, RP[1], RP[2])
        (0u8, 1u8, 0u8, 0u8),
        (0, 2, 3, 0),
        (1, 2, 3, 2),
        (1, 1, 3, 2),
    ];
    for (e, (d, hp, rp1, rp2)) in t.iter().zip(expect) {
        let p = &e.bytes;
        assert_eq!(p.len(), 290, "{}", e.dir);
        assert_eq!(check_wire(p), Some((true, true)), "{}: ICRC, VCRC", e.dir);
        assert_eq!(p[0] >> 4, 15, "{}: VL15", e.dir);
        assert_eq!(&p[2..4], &[0xFF, 0xFF], "{}: LRH DLID permissive", e.dir);
        assert_eq!(&p[6..8], &[0xFF, 0xFF], "{}: LRH SLID permissive", e.dir);
        let m = &p[28..284];
        assert_eq!(m[4] >> 7, d, "{}: D", e.dir);
        assert_eq!(m[6], hp, "{}: hop pointer", e.dir);
        assert_eq!(m[7], 2, "{}: hop count", e.dir);
        assert_eq!(
            (m[192 + 1], m[192 + 2]),
            (rp1, rp2),
            "{}: ReturnPath",
            e.dir
        );
        assert_eq!((m[128 + 1], m[128 + 2]), (1, 5), "{}: InitialPath", e.dir);
    }
    insta::assert_snapshot!(
        format!("worked_trace_hc2_w{w}"),
        vl15::model::trace::text(&net.trace)
    );
}

/// A CA on a switch that has two cables to a second switch: a DR path can
/// bounce S1 → S2 → S1 … as long as the hop count allows.
const LOOP: &str = "Hca 1 \"A\"\n[1] \"S1\"[3]\n\nSwitch 8 \"S1\"\n[1] \"S2\"[1]\n[3] \"A\"[1]\n\nSwitch 8 \"S2\"\n[1] \"S1\"[1]\n";

/// Port-0 counter DrDiscard of a switch (docs/fabric.md).
const SW0_DR_DISCARD: u8 = 5;

#[test]
fn hop_count_63_is_answered_64_is_dropped() {
    use vl15::model::regmap::swreg;
    use vl15::proto::packet::attr::NodeInfo;
    use vl15::proto::packet::Packet;
    let mut net = Net::new(
        Topology::parse(LOOP, Path::new("loop")).unwrap(),
        NetOptions::default(),
    )
    .unwrap();
    let a = net.dev_index("A").unwrap();
    let s1 = net.dev_index("S1").unwrap();
    net.attach_sm(a, 1).unwrap();
    // hc = 63 (C14-6: valid hop counts are 0..63): hop 63 is S1 again.
    let mut path = vec![1u8];
    path.extend(std::iter::repeat(1).take(62));
    let req = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 0x63, &path);
    let resp = NetSmp {
        net: &mut net,
        dev: a,
        max_cycles: 500_000,
        queries: 0,
    }
    .query(&req)
    .expect("hc 63 answered");
    let ni = NodeInfo::decode(mad::data(&resp)).unwrap();
    assert_eq!(ni.node_guid, net.topo.nodes[s1].node_guid);
    assert_eq!(ni.local_port_num, 1, "hop 63 arrives from S2 on port 1");
    assert_eq!(resp[7], 63);

    // hc = 64 put on the cable into S1 (the CA's own send engine would
    // refuse it): S1's SMI discards and counts it, nothing comes back.
    let before = net.read_reg(s1, swreg::ctr(0, SW0_DR_DISCARD)).unwrap();
    let mut m = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 0x64, &[1; 63]);
    m[7] = 64;
    m[6] = 1; // as the originator's send rules would have left it
    net.inject(s1, 3, &Packet::smp(15, 0, 0xFFFF, 0xFFFF, m))
        .unwrap();
    net.run_until_idle(100_000).unwrap();
    let after = net.read_reg(s1, swreg::ctr(0, SW0_DR_DISCARD)).unwrap();
    assert_eq!(after, before + 1, "S1 DrDiscard");
    let sm = net.devs[a].sm.as_ref().unwrap();
    assert!(!sm.has_response(0x64) && sm.unsolicited().is_empty());

    // And from the SM: the CA's send engine drops hc 64 itself (C14-6 in
    // the send rules) and counts it.
    let sq_dr = vl15::model::regmap::reg::COUNTERS
        .iter()
        .position(|c| *c == "sq_dr_discard")
        .unwrap() as u8;
    let addr = vl15::model::regmap::mpreg::port(1, vl15::model::regmap::reg::CTR_BASE + sq_dr);
    let before = net.read_reg(a, addr).unwrap();
    let mut m = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 0x65, &[1; 63]);
    m[7] = 64;
    net.sm_post(a, AddressHandle::directed(), &m).unwrap();
    net.run_until_idle(100_000).unwrap();
    assert_eq!(
        net.read_reg(a, addr).unwrap(),
        before + 1,
        "A sq_dr_discard"
    );
    assert!(!net.devs[a].sm.as_ref().unwrap().has_response(0x65));
}

/// A and C on S1, a chain S1 — S2 — S3, B on S3 (LIDs set by hand:
/// A 1, C 2, B 3, S1 10, S2 11, S3 12).
const CHAIN: &str = "Hca 1 \"A\"\n[1] \"S1\"[1]\n\nHca 1 \"C\"\n[1] \"S1\"[2]\n\n\
Switch 8 \"S1\"\n[1] \"A\"[1]\n[2] \"C\"[1]\n[3] \"S2\"[1]\n\n\
Switch 8 \"S2\"\n[1] \"S1\"[3]\n[2] \"S3\"[1]\n\n\
Switch 8 \"S3\"\n[1] \"S2\"[2]\n[2] \"B\"[1]\n\nHca 1 \"B\"\n[1] \"S3\"[2]\n";

/// Build CHAIN with LIDs, LFTs, LinearFDBTop and every cabled port Active,
/// all written straight into the RTL registers (no SM).
fn chain_by_hand(trace: bool, data_w: u32) -> Net {
    use vl15::model::regmap::reg;
    use vl15::model::regmap::{mpreg, swreg};
    let mut net = Net::new(
        Topology::parse(CHAIN, Path::new("chain")).unwrap(),
        NetOptions {
            trace,
            data_w,
            ..Default::default()
        },
    )
    .unwrap();
    for (ca, lid) in [("A", 1u32), ("C", 2), ("B", 3)] {
        let d = net.dev_index(ca).unwrap();
        net.write_reg(d, mpreg::port(1, reg::PORT_LID), lid);
        net.write_reg(d, mpreg::port(1, reg::PORT_STATE), 4);
    }
    // (switch, port-0 LID, cabled ports, LFT entries for LIDs 0..=12)
    let lfts: [(&str, u32, &[u16], [u8; 13]); 3] = [
        (
            "S1",
            10,
            &[1, 2, 3],
            [0xFF, 1, 2, 3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 3, 3],
        ),
        (
            "S2",
            11,
            &[1, 2],
            [0xFF, 1, 1, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 2],
        ),
        (
            "S3",
            12,
            &[1, 2],
            [0xFF, 1, 1, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 1, 0],
        ),
    ];
    for (sw, lid, ports, lft) in lfts {
        let d = net.dev_index(sw).unwrap();
        net.write_reg(d, swreg::PORT0_LID, lid);
        net.write_reg(d, swreg::LINEAR_FDB_TOP, 12);
        let mut e = [0xFFu8; 16];
        e[..13].copy_from_slice(&lft);
        for w in 0..4 {
            let v = u32::from_le_bytes([e[4 * w], e[4 * w + 1], e[4 * w + 2], e[4 * w + 3]]);
            net.write_reg(d, swreg::LFT_BASE + w as u16, v);
        }
        for p in ports {
            net.write_reg(d, swreg::PORT_STATE + p, 4);
        }
    }
    net.run_until_idle(10_000).unwrap();
    net
}

/// A data-VL packet (LRH..ICRC): VL0, UD SEND to QP 0x10, `payload` bytes.
fn data_packet(dlid: u16, slid: u16, payload: usize, tag: u8) -> Vec<u8> {
    let words = (8 + 12 + 8 + payload + 4) / 4;
    let mut p = vec![
        0x00,
        0x02,
        (dlid >> 8) as u8,
        dlid as u8,
        (words >> 8) as u8,
        words as u8,
        (slid >> 8) as u8,
        slid as u8,
    ];
    p.extend([0x64, 0, 0xFF, 0xFF, 0, 0, 0, 0x10, 0, 0, 0, tag]); // BTH, PSN = tag
    p.extend([0, 0, 0, 0, 0, 0, 0, 0x10]); // DETH
    p.extend((0..payload).map(|i| (i as u8) ^ tag));
    vl15::proto::crc::append_icrc(&mut p);
    p
}

#[test]
fn lid_routed_smps_and_data_cross_three_switches() {
    for w in DEV_DATA_WIDTHS {
        lid_routed_smps_and_data_cross_three_switches_at(w);
    }
}

fn lid_routed_smps_and_data_cross_three_switches_at(w: u32) {
    use vl15::model::regmap::swreg;
    use vl15::proto::packet::attr::NodeInfo;
    let mut net = chain_by_hand(false, w);
    let a = net.dev_index("A").unwrap();
    let b = net.dev_index("B").unwrap();
    net.attach_sm(a, 1).unwrap();
    // LID-routed Get(NodeInfo) to B (LID 3) and to S3's port 0 (LID 12).
    for (dlid, node) in [(3u16, "B"), (12, "S3")] {
        let tid = net.devs[a].sm.as_mut().unwrap().tid();
        let req = mad::request(0x01, METHOD_GET, ATTR_NODE_INFO, 0, tid);
        net.sm_post(a, AddressHandle::lid_routed(dlid), &req)
            .unwrap();
        net.run_until(100_000, |n| {
            n.devs[a].sm.as_ref().unwrap().has_response(tid)
        })
        .unwrap_or_else(|e| panic!("LID {dlid}: {e:#}"));
        let (m, meta, _) = net.devs[a].sm.as_mut().unwrap().take_response(tid).unwrap();
        let ni = NodeInfo::decode(mad::data(&m)).unwrap();
        let n = net.dev_index(node).unwrap();
        assert_eq!(ni.node_guid, net.topo.nodes[n].node_guid, "LID {dlid}");
        // The response comes back LID-routed: SLID = the responder's LID.
        assert_eq!((meta.slid, meta.dlid), (dlid, 1), "LID {dlid}");
    }
    // Three data packets A → B, whole and in order, VCRC new on each link:
    // two back to back (S1's input has two data slots, and the links have
    // no flow control: a third could find both taken), then the third.
    let sent: Vec<Vec<u8>> = (0..3)
        .map(|k| data_packet(3, 1, 200 + 40 * k, k as u8))
        .collect();
    for (k, p) in sent.iter().enumerate() {
        if k == 2 {
            net.run_until_idle(100_000).unwrap();
        }
        net.data_send(a, 1, p).unwrap();
    }
    net.run_until_idle(100_000).unwrap();
    let got: Vec<_> = net.devs[b].data_rx[0].packets.drain(..).collect();
    assert_eq!(got.len(), 3, "DataW {w}");
    for (g, s) in got.iter().zip(&sent) {
        assert!(!g.bad);
        assert_eq!(&g.bytes[..g.bytes.len() - 2], &s[..], "LRH..ICRC unchanged");
        assert_eq!(vl15::proto::crc::check_wire(&g.bytes), Some((true, true)));
    }
    // Every switch forwarded them on data VLs.
    for (sw, out) in [("S1", 3u8), ("S2", 2), ("S3", 2)] {
        let d = net.dev_index(sw).unwrap();
        assert_eq!(
            net.read_reg(d, swreg::ctr(out, 13)).unwrap(),
            3,
            "{sw} TxDataPkts"
        );
    }
    // No route: DLID 5 (LFT 0xFF) and DLID 13 (> LinearFDBTop) die at S1,
    // counted at its input port 1 (NoRoute, counter 8).
    let s1 = net.dev_index("S1").unwrap();
    let before = net.read_reg(s1, swreg::ctr(1, 8)).unwrap();
    net.data_send(a, 1, &data_packet(5, 1, 64, 9)).unwrap();
    net.data_send(a, 1, &data_packet(13, 1, 64, 10)).unwrap();
    net.run_until_idle(100_000).unwrap();
    assert_eq!(net.read_reg(s1, swreg::ctr(1, 8)).unwrap(), before + 2);
    assert!(net.devs[b].data_rx[0].packets.is_empty());
}

#[test]
fn vl15_overtakes_queued_data_at_a_congested_output() {
    for w in DEV_DATA_WIDTHS {
        vl15_overtakes_queued_data_at_a_congested_output_at(w);
    }
}

fn vl15_overtakes_queued_data_at_a_congested_output_at(w: u32) {
    let bb = u64::from(w / 8);
    let mut net = chain_by_hand(true, w);
    let a = net.dev_index("A").unwrap();
    let c = net.dev_index("C").unwrap();
    net.attach_sm(a, 1).unwrap();
    net.trace.clear();
    // A and C each send two 1 KiB data packets to B: S1's port 3 is the
    // bottleneck and data queues in S1's input buffers.
    for k in 0..2u8 {
        net.data_send(a, 1, &data_packet(3, 1, 1024, 0xA0 + k))
            .unwrap();
        net.data_send(c, 1, &data_packet(3, 2, 1024, 0xC0 + k))
            .unwrap();
    }
    // Once A's wire is free, an SMP from A to B (LID-routed).
    net.run_until(100_000, |n| n.devs[a].data_tx[0].idle())
        .unwrap();
    let tid = net.devs[a].sm.as_mut().unwrap().tid();
    let req = mad::request(0x01, METHOD_GET, ATTR_NODE_INFO, 0, tid);
    net.sm_post(a, AddressHandle::lid_routed(3), &req).unwrap();
    net.run_until_idle(200_000).unwrap();
    assert!(net.devs[a].sm.as_ref().unwrap().has_response(tid));
    let vl = |e: &vl15::model::trace::TraceEntry| e.bytes[0] >> 4;
    let tag = |e: &vl15::model::trace::TraceEntry| e.bytes[19];
    // When the SMP arrived at S1 (its last beat), which data packets were
    // already wholly in S1's input buffers?
    let smp_in = net
        .trace
        .iter()
        .find(|e| e.dir == "A[1]>S1[1]" && vl(e) == 15)
        .unwrap();
    let smp_arrival = smp_in.cycle + (smp_in.bytes.len() as u64).div_ceil(bb) + 4;
    let queued: Vec<u8> = net
        .trace
        .iter()
        .filter(|e| e.dir.ends_with(">S1[1]") || e.dir.ends_with(">S1[2]"))
        .filter(|e| vl(e) == 0 && e.cycle + (e.bytes.len() as u64).div_ceil(bb) + 4 <= smp_arrival)
        .map(tag)
        .collect();
    let mut out: Vec<&vl15::model::trace::TraceEntry> = net
        .trace
        .iter()
        .filter(|e| e.dir == "S1[3]>S2[1]")
        .collect();
    out.sort_by_key(|e| e.cycle);
    let order: Vec<(u8, u8)> = out.iter().map(|e| (vl(e), tag(e))).collect();
    let smp_pos = order.iter().position(|(v, _)| *v == 15).unwrap();
    let sent_before_smp: Vec<u8> = order[..smp_pos].iter().map(|(_, t)| *t).collect();
    let overtaken: Vec<u8> = queued
        .iter()
        .copied()
        .filter(|t| !sent_before_smp.contains(t))
        .collect();
    // At least one data packet was waiting in S1 when the SMP came, and the
    // SMP left S1 before it (VL15 first at a packet boundary); the packet
    // on the wire when the SMP arrived is never cut (one is in progress).
    assert!(
        !overtaken.is_empty(),
        "DataW {w}: order {order:02x?}, queued {queued:02x?}"
    );
    assert_eq!(order.len(), 5, "DataW {w}: {order:02x?}");
}

#[test]
fn fat_tree_sweep_loses_only_what_the_counters_show() {
    // k = 8: 8 leaves, 4 spines, 32 CAs (44 nodes). With 16 DR
    // Get(NodeInfo) outstanding, responses converge on the SM's CA faster
    // than its VL15 buffer drains: VL15 has no flow control, so some are
    // dropped (ibspec: dropped and counted) and the sweep sends them again.
    let t = vl15::proto::fattree::two_level(8).unwrap();
    let s = vl15::run::netbench::nodeinfo_sweep(&t, 16).unwrap();
    assert_eq!(s.nodes, 44);
    assert_eq!(s.smps, 43, "every node but the SM's CA answered");
    assert!(s.retries > 0, "16 outstanding must overrun a 2-slot buffer");
    assert_eq!(
        s.retries, s.vl15_dropped,
        "every lost SMP is one the RTL counted as dropped"
    );
    // One at a time nothing is lost.
    let s = vl15::run::netbench::nodeinfo_sweep(&t, 1).unwrap();
    assert_eq!((s.retries, s.vl15_dropped), (0, 0));
}

#[test]
fn link_down_mid_stream_delivers_only_whole_packets() {
    use vl15::model::regmap::swreg;
    let mut net = chain_by_hand(false, 64);
    let a = net.dev_index("A").unwrap();
    let b = net.dev_index("B").unwrap();
    let s1 = net.dev_index("S1").unwrap();
    let s2 = net.dev_index("S2").unwrap();
    let s3 = net.dev_index("S3").unwrap();
    let l = net.link_at(s1, 3).unwrap(); // S1[3] <-> S2[1]
    let dir = usize::from(net.links[l].ends[0] != (s1, 3)); // S1 -> S2
                                                            // Six 1 KiB packets A -> B (136 beats each at 8 bytes).
    let sent: Vec<Vec<u8>> = (0..6u8)
        .map(|k| data_packet(3, 1, 1024, 0x40 + k))
        .collect();
    for p in &sent {
        net.data_send(a, 1, p).unwrap();
    }
    // The second packet is halfway through S1[3] -> S2[1]: the cable goes.
    let mut starts = 0;
    let mut was = false;
    net.run_until(100_000, |n| {
        let now = n.links[l].mid_packet(dir);
        if now && !was {
            starts += 1;
        }
        was = now;
        starts == 2 && now
    })
    .unwrap();
    net.run(60).unwrap();
    assert!(net.links[l].mid_packet(dir), "still inside the packet");
    net.console(r#"Unlink "S1"[3]"#).unwrap();
    net.run_until_idle(100_000).unwrap();
    // Both ends saw the link go: PortState Down.
    assert_eq!(net.read_reg(s1, swreg::PORT_STATE + 3).unwrap(), 1);
    assert_eq!(net.read_reg(s2, swreg::PORT_STATE + 1).unwrap(), 1);
    // Back up: the ports train to Init; the test plays SM and makes them
    // Active again, then A sends two more.
    net.console(r#"ReLink "S1"[3]"#).unwrap();
    net.run_until_idle(100_000).unwrap();
    assert_eq!(net.read_reg(s1, swreg::PORT_STATE + 3).unwrap(), 2);
    assert_eq!(net.read_reg(s2, swreg::PORT_STATE + 1).unwrap(), 2);
    net.write_reg(s1, swreg::PORT_STATE + 3, 4);
    net.write_reg(s2, swreg::PORT_STATE + 1, 4);
    let after: Vec<Vec<u8>> = (0..2u8).map(|k| data_packet(3, 1, 512, 0x80 + k)).collect();
    for p in &after {
        net.data_send(a, 1, p).unwrap();
    }
    net.run_until_idle(100_000).unwrap();

    // B got whole, intact packets only, each one A sent, in order.
    let got: Vec<_> = net.devs[b].data_rx[0].packets.drain(..).collect();
    let all: Vec<&Vec<u8>> = sent.iter().chain(&after).collect();
    let mut next = 0;
    for g in &got {
        assert!(!g.bad);
        assert_eq!(vl15::proto::crc::check_wire(&g.bytes), Some((true, true)));
        let body = &g.bytes[..g.bytes.len() - 2];
        let k = all[next..]
            .iter()
            .position(|s| s.as_slice() == body)
            .unwrap_or_else(|| panic!("B got a packet A did not send (or out of order)"));
        next += k + 1;
    }
    // The first went through before the cut, the cut one did not; the
    // two sent after the relink did.
    assert_eq!(&got[0].bytes[..got[0].bytes.len() - 2], &sent[0][..]);
    assert!(got
        .iter()
        .all(|g| g.bytes[..g.bytes.len() - 2] != sent[1][..]));
    let tail: Vec<&[u8]> = got[got.len() - 2..]
        .iter()
        .map(|g| &g.bytes[..g.bytes.len() - 2])
        .collect();
    assert_eq!(tail, [&after[0][..], &after[1][..]]);

    // Every packet is accounted for by a counter: S2 discarded the cut one
    // (LinkDownDrop at its port 1), S1 dropped those that found port 3
    // not Active (StateDrop at its input port 1) and those that found both
    // of that input's data slots full (DataDropped: data VLs have no credit
    // flow control in this model, and A sends back to back); nothing else
    // is lost.
    let cut = net
        .read_reg(s2, swreg::ctr(1, swreg::ctr::LINK_DOWN_DROP))
        .unwrap();
    let state = net
        .read_reg(s1, swreg::ctr(1, swreg::ctr::STATE_DROP))
        .unwrap();
    let full = net
        .read_reg(s1, swreg::ctr(1, swreg::ctr::DATA_DROPPED))
        .unwrap();
    let n = got.len() as u32;
    assert_eq!(cut, 1, "one packet was cut");
    assert!(state > 0, "packets met port 3 Down");
    assert_eq!(
        n + cut + state + full,
        8,
        "got {n} cut {cut} state {state} full {full}"
    );
    // S1 sent on port 3 what B got and the cut one; S2 received whole only
    // what B got.
    assert_eq!(
        net.read_reg(s1, swreg::ctr(3, swreg::ctr::TX_DATA_PKTS))
            .unwrap(),
        n + 1
    );
    assert_eq!(
        net.read_reg(s2, swreg::ctr(1, swreg::ctr::RX_PKTS))
            .unwrap(),
        n
    );
    // S2 forwarded and S3 sent exactly what B got.
    assert_eq!(
        net.read_reg(s3, swreg::ctr(2, swreg::ctr::TX_DATA_PKTS))
            .unwrap(),
        got.len() as u32
    );
    assert_eq!(
        net.read_reg(s2, swreg::ctr(2, swreg::ctr::TX_DATA_PKTS))
            .unwrap(),
        got.len() as u32
    );
}

/// Two CAs with an SM each and one without, on one switch: A, B and C on S
/// ports 1, 2, 3.
const RQ: &str =
    "Hca 1 \"A\"\n[1] \"S\"[1]\n\nHca 1 \"B\"\n[1] \"S\"[2]\n\nHca 1 \"C\"\n[1] \"S\"[3]\n\n\
Switch 8 \"S\"\n[1] \"A\"[1]\n[2] \"B\"[1]\n[3] \"C\"[1]\n";

/// VL15Dropped of CA `d` (its only port), through `Net::vl15_drops`.
fn vl15_dropped_at(net: &mut Net, d: usize) -> u32 {
    net.vl15_drops()
        .unwrap()
        .iter()
        .filter(|&&(dev, _, _)| dev == d)
        .map(|&(_, _, n)| n)
        .sum()
}

/// Receive completions of CA `d`'s SM (MADs delivered by the RTL), by TID.
fn received_tids(net: &mut Net, d: usize) -> Vec<u64> {
    net.poll_cq(d, usize::MAX)
        .unwrap()
        .into_iter()
        .filter(|w| w.opcode == vl15::agents::qp0::WcOpcode::Recv)
        .map(|w| mad::tid(w.mad.as_ref().unwrap()))
        .collect()
}

/// The SM's receive queue (docs/decisions.md): "A response that arrives with no receive WQE posted is
/// dropped by the RTL and counted (VL15Dropped), as hardware does." A MAD
/// for the SM is dropped whole (never delivered, never blocking the port),
/// VL15Dropped goes up by exactly 1 per dropped MAD, requests for the CA's
/// own SMA are answered all along, and n posted WQEs let exactly n through.
/// A CA with no SM (never attached, or detached) posts none: its MADs for
/// the SM are dropped and counted and its SMA keeps answering.
#[test]
fn sm_mads_with_no_receive_wqe_are_dropped_and_counted_by_the_rtl() {
    use vl15::proto::packet::consts::ATTR_SM_INFO;
    let mut net = Net::new(
        Topology::parse(RQ, Path::new("rq")).unwrap(),
        NetOptions::default(),
    )
    .unwrap();
    let a = net.dev_index("A").unwrap();
    let b = net.dev_index("B").unwrap();
    let c = net.dev_index("C").unwrap();
    let get = |tid: u64, path: &[u8]| mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, tid, path);
    let (to_s, b_to_a, a_to_b, a_to_c) = ([1u8].as_slice(), [1u8, 1], [1u8, 2], [1u8, 3]);
    net.attach_sm(a, 1).unwrap();
    net.attach_sm(b, 1).unwrap(); // B takes every MAD (never posts)
    net.post_recv(a, 0).unwrap(); // A: counted receives, none posted
    net.run_until_idle(10_000).unwrap();
    assert_eq!(net.recv_posted(a), Some(0));
    assert_eq!(net.recv_posted(b), None);
    assert_eq!(net.vl15_dropped().unwrap(), 0);

    // None posted: each response for A's SM is dropped and counted once,
    // and B's request for A's SMA that follows it is answered.
    for k in 1..=3u64 {
        net.post_send(a, &AddressHandle::directed(), &get(0x100 + k, to_s), 0)
            .unwrap();
        net.run_until_idle(200_000).unwrap();
        assert_eq!(vl15_dropped_at(&mut net, a), k as u32, "response {k}");
        assert!(received_tids(&mut net, a).is_empty(), "response {k}");
        net.post_send(b, &AddressHandle::directed(), &get(0x200 + k, &b_to_a), 0)
            .unwrap();
        net.run_until_idle(200_000).unwrap();
        assert_eq!(received_tids(&mut net, b), [0x200 + k], "A's SMA, {k}");
    }
    // Both at once: A's response and B's request meet in A's VL15 buffer.
    net.post_send(a, &AddressHandle::directed(), &get(0x104, to_s), 0)
        .unwrap();
    net.post_send(b, &AddressHandle::directed(), &get(0x204, &b_to_a), 0)
        .unwrap();
    net.run_until_idle(200_000).unwrap();
    assert_eq!(vl15_dropped_at(&mut net, a), 4);
    assert!(received_tids(&mut net, a).is_empty());
    assert_eq!(received_tids(&mut net, b), [0x204]);

    // One WQE: of two responses exactly one is delivered, the other is
    // dropped and counted; the next one is dropped too.
    net.post_recv(a, 1).unwrap();
    net.post_send(a, &AddressHandle::directed(), &get(0x110, to_s), 0)
        .unwrap();
    net.post_send(a, &AddressHandle::directed(), &get(0x111, &a_to_b), 0)
        .unwrap();
    net.run_until_idle(200_000).unwrap();
    let got = received_tids(&mut net, a);
    assert_eq!(got.len(), 1, "{got:x?}");
    assert!(got[0] == 0x110 || got[0] == 0x111, "{got:x?}");
    assert_eq!(vl15_dropped_at(&mut net, a), 5);
    assert_eq!(net.recv_posted(a), Some(0));
    net.post_send(a, &AddressHandle::directed(), &get(0x112, to_s), 0)
        .unwrap();
    net.run_until_idle(200_000).unwrap();
    assert!(received_tids(&mut net, a).is_empty());
    assert_eq!(vl15_dropped_at(&mut net, a), 6);
    // Two WQEs: two responses, both delivered; nothing more dropped.
    net.post_recv(a, 2).unwrap();
    net.post_send(a, &AddressHandle::directed(), &get(0x113, to_s), 0)
        .unwrap();
    net.post_send(a, &AddressHandle::directed(), &get(0x114, &a_to_c), 0)
        .unwrap();
    net.run_until_idle(200_000).unwrap();
    let mut got = received_tids(&mut net, a);
    got.sort_unstable();
    assert_eq!(got, [0x113, 0x114]);
    assert_eq!(vl15_dropped_at(&mut net, a), 6);

    // C never had an SM: SubnGet(SMInfo) is for the SM (docs/arch.md,
    // smi_rq), so C's RTL drops it and counts it; C's SMA still answers
    // (A's response to that arrives on a posted WQE).
    let sminfo = mad::dr_request(METHOD_GET, ATTR_SM_INFO, 0, 0x120, &a_to_c);
    net.post_send(a, &AddressHandle::directed(), &sminfo, 0)
        .unwrap();
    net.run_until_idle(200_000).unwrap();
    assert_eq!(vl15_dropped_at(&mut net, c), 1, "SMInfo at C with no SM");
    net.post_recv(a, 1).unwrap();
    net.post_send(a, &AddressHandle::directed(), &get(0x121, &a_to_c), 0)
        .unwrap();
    net.run_until_idle(200_000).unwrap();
    assert_eq!(received_tids(&mut net, a), [0x121], "C's SMA");

    // B's SM goes away (killed): its WQEs are withdrawn, so B's "take
    // everything" ends; SMInfo at B is dropped and counted, B's SMA answers.
    net.detach_sm(b).unwrap();
    assert_eq!(net.recv_posted(b), Some(0));
    let sminfo = mad::dr_request(METHOD_GET, ATTR_SM_INFO, 0, 0x130, &a_to_b);
    net.post_send(a, &AddressHandle::directed(), &sminfo, 0)
        .unwrap();
    net.run_until_idle(200_000).unwrap();
    assert_eq!(vl15_dropped_at(&mut net, b), 1, "SMInfo at B after detach");
    net.post_recv(a, 1).unwrap();
    net.post_send(a, &AddressHandle::directed(), &get(0x131, &a_to_b), 0)
        .unwrap();
    net.run_until_idle(200_000).unwrap();
    assert_eq!(received_tids(&mut net, a), [0x131], "B's SMA after detach");

    // Every drop above was one the RTL counted, and nothing else was lost.
    assert_eq!(net.vl15_dropped().unwrap(), 6 + 1 + 1);
    assert_eq!(net.recv_posted(a), Some(0));
}

/// A GMP (LRH..ICRC, ibspec §2/§4 and vector V3's layout): PerfMgt
/// Get(PortCounters) on data VL `vl`, DestQP 1, Q_Key 0x80010000, SrcQP 1.
fn gmp_packet(dlid: u16, slid: u16, vl: u8, tid: u32) -> Vec<u8> {
    let mut p = vec![
        vl << 4,
        0x02,
        (dlid >> 8) as u8,
        dlid as u8,
        0,
        72,
        (slid >> 8) as u8,
        slid as u8,
    ];
    p.extend([0x64, 0, 0xFF, 0xFF, 0, 0, 0, 1, 0, 0, 0, tid as u8]); // BTH: DestQP 1
    p.extend([0x80, 0x01, 0, 0, 0, 0, 0, 1]); // DETH: Q_Key, SrcQP 1
    let mut mad = [0u8; 256];
    mad[..4].copy_from_slice(&[1, 0x04, 1, 0x01]); // PerfMgt Get
    mad[12..16].copy_from_slice(&tid.to_be_bytes());
    mad[16..18].copy_from_slice(&0x0012u16.to_be_bytes()); // PortCounters
    mad[64..]
        .iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b = i as u8 ^ tid as u8);
    p.extend(mad);
    vl15::proto::crc::append_icrc(&mut p);
    assert_eq!(p.len(), 288);
    p
}

/// Switch port 0's GMP path in a fabric the built-in SM brought up (LIDs,
/// LFTs, every port Active): a GMP from a CA's data port to a switch LID
/// crosses another switch and arrives whole on that switch's `gmp_rx`
/// (through its GSI checks), and a GMP from the switch's `gmp_tx` crosses
/// back to the CA's data port; counters say so.
#[test]
fn gmps_reach_a_switch_lid_and_leave_its_port_0() {
    use vl15::agents::simrun::{bring_up, SimOptions};
    use vl15::model::regmap::reg;
    use vl15::model::regmap::{mpreg, swreg};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain");
    std::fs::write(
        &path,
        "Switch 4 \"S1\"\n[1] \"A\"[1]\n[2] \"S2\"[2]\n\nSwitch 4 \"S2\"\n[1] \"B\"[1]\n[2] \"S1\"[2]\n\n\
         Hca 1 \"A\"\n[1] \"S1\"[1]\n\nHca 1 \"B\"\n[1] \"S2\"[1]\n",
    )
    .unwrap();
    let (mut net, _sm, s) = bring_up(&path, &SimOptions::default()).unwrap();
    assert_eq!(s.active_ports, s.linked_ports);
    let a = net.dev_index("A").unwrap();
    let s2 = net.dev_index("S2").unwrap();
    let a_lid = net.read_reg(a, mpreg::port(1, reg::PORT_LID)).unwrap() as u16;
    let s2_lid = net.read_reg(s2, swreg::PORT0_LID).unwrap() as u16;
    assert!(a_lid != 0 && s2_lid != 0 && a_lid != s2_lid);
    net.run_until_idle(100_000).unwrap();
    let words_before = net
        .read_reg(s2, swreg::ctr(2, swreg::ctr::RX_WORDS))
        .unwrap();

    // A → S2's LID on VL 1: S1 forwards it, S2's port 0 takes it.
    let req = gmp_packet(s2_lid, a_lid, 1, 0x5150);
    net.data_send(a, 1, &req).unwrap();
    net.run_until_idle(100_000).unwrap();
    let got: Vec<_> = net.devs[s2].gmp_rx.packets.drain(..).collect();
    assert_eq!(got.len(), 1, "S2 gmp_rx");
    assert!(!got[0].bad, "the GSI checks passed it");
    assert_eq!(&got[0].bytes[..288], &req[..], "LRH..ICRC unchanged");
    assert_eq!(
        vl15::proto::crc::check_wire(&got[0].bytes),
        Some((true, true))
    );
    let g = |net: &mut Net, c| net.read_reg(s2, swreg::ctr0g(c)).unwrap();
    assert_eq!(g(&mut net, swreg::ctr::G_RX_PKTS), 1);
    assert_eq!(g(&mut net, swreg::ctr::G_GMPS), 1);
    assert_eq!(g(&mut net, swreg::ctr::G_RX_WORDS), 72);
    assert_eq!(
        net.read_reg(s2, swreg::ctr(2, swreg::ctr::RX_WORDS))
            .unwrap(),
        words_before + 72,
        "PortRcvData of S2 port 2 (from S1)"
    );

    // S2's port 0 answers (a GetResp-shaped GMP, SLID = its LID) on VL 0:
    // out by S2's LFT, through S1, to A's data port.
    let mut resp = gmp_packet(a_lid, s2_lid, 0, 0x5150);
    resp[28 + 3] = 0x81;
    resp.truncate(284);
    vl15::proto::crc::append_icrc(&mut resp);
    net.gmp_send(s2, &resp).unwrap();
    net.run_until_idle(100_000).unwrap();
    let got: Vec<_> = net.devs[a].data_rx[0].packets.drain(..).collect();
    assert_eq!(got.len(), 1, "A drx");
    assert!(!got[0].bad);
    assert_eq!(&got[0].bytes[..288], &resp[..], "LRH..ICRC unchanged");
    assert_eq!(
        vl15::proto::crc::check_wire(&got[0].bytes),
        Some((true, true))
    );
    assert_eq!(g(&mut net, swreg::ctr::G_TX_PKTS), 1);
    assert_eq!(g(&mut net, swreg::ctr::G_TX_WORDS), 72);
    assert_eq!(g(&mut net, swreg::ctr::G_TX_DROP), 0);
}

/// The devices with work in a cycle evaluate on several threads; the run is
/// the same at any count: every packet on every wire at the same cycle, and
/// the same state read back from the RTL afterwards.
#[test]
fn a_bring_up_is_the_same_on_one_and_on_several_threads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fattree8");
    std::fs::write(&path, vl15::proto::fattree::two_level(8).unwrap()).unwrap();
    let run = |threads: usize| {
        let mut opts = vl15::agents::simrun::SimOptions::default();
        opts.net.threads = threads;
        opts.net.trace = true;
        let (mut net, _sm, summary) = vl15::agents::simrun::bring_up(&path, &opts)
            .unwrap_or_else(|e| panic!("{threads} threads: {e:#}"));
        let dump = vl15::agents::simrun::dump_state(&mut net).unwrap();
        let dump = serde_json::to_string(&dump).unwrap();
        (
            net.trace.clone(),
            dump,
            summary.cycles,
            net.stats.ticks,
            net.stats.parallel_cycles,
        )
    };
    let one = run(1);
    assert_eq!(one.4, 0, "one thread: no pool");
    assert!(
        one.0.len() > 1000,
        "a whole bring-up: {} packets",
        one.0.len()
    );
    for threads in [2, 3] {
        let many = run(threads);
        assert_eq!(many.2, one.2, "{threads} threads: cycles");
        assert_eq!(many.3, one.3, "{threads} threads: device evaluations");
        assert!(
            many.0 == one.0,
            "{threads} threads: the packet trace differs"
        );
        assert!(many.1 == one.1, "{threads} threads: the state dump differs");
        assert!(
            many.4 > 0,
            "{threads} threads: the pool evaluated some cycles"
        );
    }
}

/// The fabric is built at DataW 64 or 128 only; any other width is refused
/// before a device is built, naming the widths there are.
#[test]
fn a_fabric_at_an_unbuilt_width_is_refused() {
    for w in [0, 8, 32, 256] {
        let topo = Topology::parse(WORKED, Path::new("worked")).unwrap();
        let e = Net::new(
            topo,
            NetOptions {
                data_w: w,
                ..Default::default()
            },
        )
        .err()
        .unwrap_or_else(|| panic!("DataW {w} accepted"));
        let msg = format!("{e:#}");
        assert!(
            msg.contains("[64, 128]") && msg.contains(&w.to_string()),
            "{msg}"
        );
    }
}
