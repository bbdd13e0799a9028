//! The spine regression as tests: every scenario of `vl15::check::scenario` at
//! DATA_W 32, 64 and 128. Each scenario asserts what ibspec and the reference
//! vectors say (see `tb/src/check/scenario.rs`); on top of that the decoded packet
//! trace is pinned by an insta snapshot, so any change of RTL timing (cycle
//! numbers) or content shows as a reviewed diff.

use vl15::check::scenario::{self, SCENARIOS};
use vl15::model::trace;

const WIDTHS: [u32; 3] = [32, 64, 128];

fn check(name: &str) {
    let s = scenario::find(name).unwrap_or_else(|| panic!("no scenario {name}"));
    for w in WIDTHS {
        let o = scenario::run(s, w);
        assert!(o.pass, "{name} at DATA_W {w}: {}", o.detail);
        insta::assert_snapshot!(format!("{name}_w{w}"), trace::text(&o.trace));
    }
}

#[test]
fn dr_get_nodeinfo() {
    check("dr_get_nodeinfo");
}
#[test]
fn lid_get_nodeinfo() {
    check("lid_get_nodeinfo");
}
#[test]
fn set_portinfo_lmc() {
    check("set_portinfo_lmc");
}
#[test]
fn bad_vcrc() {
    check("bad_vcrc");
}
#[test]
fn bad_icrc() {
    check("bad_icrc");
}
#[test]
fn wrong_dlid() {
    check("wrong_dlid");
}
#[test]
fn vl15_overflow() {
    check("vl15_overflow");
}
#[test]
fn trap_repress() {
    check("trap_repress");
}
#[test]
fn unsupported_attr() {
    check("unsupported_attr");
}
#[test]
fn trap_to_master_sm() {
    check("trap_to_master_sm");
}
#[test]
fn back_to_back() {
    check("back_to_back");
}
#[test]
fn status_codes() {
    check("status_codes");
}
#[test]
fn vl15_priority() {
    check("vl15_priority");
}

#[test]
fn gsi_checks() {
    check("gsi_checks");
}

#[test]
fn data_vl() {
    check("data_vl");
}

/// Every scenario in the testplan has a test above.
#[test]
fn testplan_covered() {
    let tested = [
        "dr_get_nodeinfo",
        "lid_get_nodeinfo",
        "set_portinfo_lmc",
        "bad_vcrc",
        "bad_icrc",
        "wrong_dlid",
        "vl15_overflow",
        "trap_repress",
        "unsupported_attr",
        "trap_to_master_sm",
        "back_to_back",
        "status_codes",
        "vl15_priority",
        "data_vl",
        "gsi_checks",
    ];
    let plan: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
    assert_eq!(plan, tested);
}

/// Idle insertion on every source and backpressure on every sink of both
/// ports (`scenario::stress`) must not change what any scenario proves. The
/// one exception is `back_to_back`, which asserts the absence of idle cycles
/// inside packets and so cannot run with a stalled wire.
#[test]
fn scenarios_under_stress() {
    for s in SCENARIOS.iter().filter(|s| s.name != "back_to_back") {
        for w in WIDTHS {
            for seed in 1..=2 {
                let o = scenario::run_with(s, w, Some(seed));
                assert!(
                    o.pass,
                    "{} at DATA_W {w}, stress seed {seed}: {}",
                    s.name, o.detail
                );
            }
        }
    }
}

/// Every packet that enters a port ends in exactly one counter (ibspec §6,
/// §11: it is dropped for one reason, or delivered): the link-error counters,
/// good data-VL packets, VL15Dropped, one SMI check, or delivery to the SMA or
/// SM. Random mutations of good packets (byte flips, truncation, extension,
/// header fields changed with the CRCs recomputed) must keep that identity,
/// never trip an RTL assertion, and leave the port able to answer V1 with V2.
#[test]
fn every_packet_accounted_once() {
    use vl15::check::scenario::{vectors, Run, CA};
    use vl15::model::stream::Rng;
    use vl15::proto::crc::{append_crcs, append_vcrc};

    // Every mutated packet still ends in ICRC + VCRC (at least 8 bytes).
    fn fix_crcs(p: &mut Vec<u8>) {
        if p.len() >= 8 {
            p.truncate(p.len() - 6);
            append_crcs(p);
        }
    }

    for w in WIDTHS {
        let mut r = Run::new(w).unwrap();
        r.assign_lids().unwrap();
        let mut rng = Rng::new(u64::from(w));
        let seeds = [vectors::V1, vectors::V2, vectors::V3, vectors::V4];
        let n = 150;
        for _ in 0..n {
            let mut p = seeds[(rng.next_u64() % 4) as usize].to_vec();
            match rng.next_u64() % 7 {
                0 => {
                    let i = (rng.next_u64() as usize) % p.len();
                    p[i] ^= 1 << (rng.next_u64() % 8);
                }
                1 => p.truncate(1 + (rng.next_u64() as usize) % (p.len() - 1)),
                2 => p.extend_from_slice(&[0u8; 4]),
                3 => {
                    // A header or MAD-header byte changed, CRCs made good again.
                    let i = [0usize, 1, 2, 3, 8, 9, 13, 15, 28, 29, 34, 35]
                        [(rng.next_u64() % 12) as usize];
                    p[i] = rng.next_u64() as u8;
                    fix_crcs(&mut p);
                }
                4 => {
                    // LID-routed SMP to a random DLID near the CA's.
                    p[28 + 1] = 0x01;
                    p[2..4].copy_from_slice(&(3 + (rng.next_u64() % 5) as u16).to_be_bytes());
                    fix_crcs(&mut p);
                }
                5 => {
                    // Payload corrupted before the ICRC, VCRC made good again.
                    let i = 28 + (rng.next_u64() as usize) % 256;
                    p[i] ^= 0x10;
                    p.truncate(p.len() - 2);
                    append_vcrc(&mut p);
                }
                _ => {}
            }
            r.inject(&p);
        }
        r.idle().unwrap();
        let c = r.counters(CA).unwrap();
        let ended: u32 = [
            "rx_vcrc_err",
            "rx_lver_err",
            "rx_lnh_err",
            "rx_len_err",
            "rx_data_pkts",
            "vl15_dropped",
            "smi_icrc_err",
            "smi_bad_hdr",
            "smi_lid_err",
            "smi_dr_discard",
            "smi_port_down",
            "smi_to_sma",
            "smi_to_sm",
        ]
        .iter()
        .map(|k| c.get(k))
        .sum();
        assert_eq!(c.get("rx_pkts"), n, "DATA_W {w}: {}", c.nonzero());
        assert_eq!(
            ended,
            n,
            "DATA_W {w}: packets not accounted once: {}",
            c.nonzero()
        );
        // Data-VL packets the link passed reach the host unflagged unless
        // the GSI checks discard them (each counted once: ICRC, then the
        // header, then the QP1 P_Key and Q_Key); every good GMP among them
        // is counted.
        let drx = &r.port(CA).drx.packets;
        let unflagged = drx.iter().filter(|p| !p.bad).count() as u32;
        assert_eq!(
            unflagged,
            c.get("rx_data_pkts")
                - c.get("data_icrc_err")
                - c.get("gsi_bad_hdr")
                - c.get("pkey_viol")
                - c.get("qkey_viol"),
            "DATA_W {w}: {}",
            c.nonzero()
        );
        assert!(c.get("gsi_gmps") <= unflagged && c.get("gsi_gmps") > 0);
        // The words received: every packet that passed the link checks.
        assert_eq!(c.get("rx_words"), r.expected_words(CA).0);
        // Still alive: V1 in, its NodeInfo GetResp out (PSN differs from V2).
        let before = r.wire("ca>sm").len();
        r.inject(vectors::V1);
        r.idle().unwrap();
        let back = r.wire("ca>sm");
        assert_eq!(back.len(), before + 1, "DATA_W {w}: V1 after the storm");
        let p = vl15::proto::packet::Packet::parse(&back[before].bytes).unwrap();
        assert!(p.icrc_ok() && p.vcrc_ok());
        let want = vl15::proto::packet::Packet::parse(vectors::V2).unwrap();
        assert_eq!(
            p.mad, want.mad,
            "DATA_W {w}: response MAD differs from V2's"
        );
    }
}

/// Every scenario, with each CA port being port 1 of a one-port
/// `ib_ca_mp_top`, passes under the scoreboards and puts the same packets
/// on the wire at the same cycles as with `ib_ca_top`: the multiport CA's
/// port-tag mux and demux add no cycle and lose nothing.
#[test]
fn scenarios_on_the_multiport_ca_match_the_ca_port_cycle_for_cycle() {
    use vl15::model::device::CaPortModel;
    let mp = CaPortModel::Mp { nports: 1, port: 1 };
    for w in [64, 128] {
        for s in scenario::SCENARIOS {
            let top = scenario::run_on(s, w, None, CaPortModel::Top);
            let on_mp = scenario::run_on(s, w, None, mp);
            assert!(
                on_mp.pass,
                "{} DATA_W {w} on ib_ca_mp_top: {}",
                s.name, on_mp.detail
            );
            assert!(!top.trace.is_empty(), "{}", s.name);
            assert_eq!(top.trace, on_mp.trace, "{} DATA_W {w}", s.name);
            assert_eq!(top.cycles, on_mp.cycles, "{} DATA_W {w}", s.name);
        }
    }
}
