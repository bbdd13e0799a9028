//! The spine regression as tests: every scenario of `vl15::scenario` at
//! DATA_W 32, 64 and 128. Each scenario asserts what ibspec and the reference
//! vectors say (see `tb/src/scenario.rs`); on top of that the decoded packet
//! trace is pinned by an insta snapshot, so any change of RTL timing (cycle
//! numbers) or content shows as a reviewed diff.

use vl15::scenario::{self, SCENARIOS};
use vl15::trace;

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
        "data_vl",
    ];
    let plan: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
    assert_eq!(plan, tested);
}

/// Idle insertion on every source and backpressure on every sink must not
/// change what is delivered (only when): the V1 → V2 exchange under stress.
#[test]
fn dr_get_nodeinfo_under_stress() {
    use vl15::mad;
    use vl15::packet::consts::*;
    use vl15::scenario::{vectors, Run, CA, SM};
    use vl15::stream::Pattern;
    for w in WIDTHS {
        for seed in 1..4u64 {
            let mut r = Run::new(w).unwrap();
            for (n, node) in r.fab.nodes.iter_mut().enumerate() {
                let s = seed * 10 + n as u64;
                let p = &mut node.port;
                p.wire_tx.set_pattern(Pattern::Random {
                    percent: 60,
                    seed: s,
                });
                p.sma_rx.set_pattern(Pattern::Random {
                    percent: 40,
                    seed: s + 1,
                });
                p.sm_rx.set_pattern(Pattern::Random {
                    percent: 50,
                    seed: s + 2,
                });
                p.sma_tx.set_pattern(Pattern::Random {
                    percent: 50,
                    seed: s + 3,
                });
                p.sm_tx.set_pattern(Pattern::Random {
                    percent: 30,
                    seed: s + 4,
                });
            }
            r.post(
                vl15::sm::dr_ah(),
                mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 0x1234_5678, &[1]),
            );
            r.idle().unwrap();
            let out = r.wire("sm>ca");
            let back = r.wire("ca>sm");
            assert_eq!(out.len(), 1, "w{w} seed {seed}");
            assert_eq!(out[0].bytes, vectors::V1, "w{w} seed {seed}");
            assert_eq!(back.len(), 1, "w{w} seed {seed}");
            assert_eq!(back[0].bytes, vectors::V2, "w{w} seed {seed}");
            let c = r.counters(CA).unwrap();
            assert_eq!(c.get("smi_to_sma"), 1);
            assert_eq!(r.counters(SM).unwrap().get("smi_to_sm"), 1);
        }
    }
}
