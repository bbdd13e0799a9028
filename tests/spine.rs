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
fn status_codes() {
    check("status_codes");
}
#[test]
fn vl15_priority() {
    check("vl15_priority");
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
