//! The fuzz targets of `vl15::check::fuzz`, a
//! short run each: a fixed number of structure-aware cases per target from
//! fixed seeds (`make test`; `vl15 fuzz --seconds N` runs them for longer,
//! in `make bench`), proptest's unstructured byte strings on every parser,
//! and the inputs the fuzzer found (each a regression test).

use std::time::Duration;

use proptest::prelude::*;
use vl15::check::fuzz::{self, Limits, Target};

fn limits(cases: u64) -> Limits {
    Limits {
        time: Duration::from_secs(60),
        max_cases: cases,
        hang: Duration::from_secs(10),
        stop_on_failure: false,
    }
}

fn run(target: Target, cases: u64) {
    for seed in [1u64, 0xC0FFEE] {
        let r = fuzz::run(target, seed, limits(cases)).unwrap();
        eprintln!("{}", r.summary());
        assert_eq!(r.cases, cases, "{}", r.summary());
        for f in &r.failures {
            eprintln!(
                "case seed {:#x}: {}\n  input {}",
                f.case_seed,
                f.what,
                fuzz::hex(&f.input, 600)
            );
        }
        assert!(r.failures.is_empty(), "{}", r.summary());
    }
}

#[test]
fn decode() {
    run(Target::Decode, 3000);
}

#[test]
fn pcap() {
    run(Target::Pcap, 3000);
}

#[test]
fn topology() {
    run(Target::Topology, 3000);
}

#[test]
fn ibsim() {
    run(Target::Ibsim, 3000);
}

#[test]
fn console() {
    run(Target::Console, 3000);
}

#[test]
fn sma() {
    run(Target::Sma, 3000);
}

/// The SMA target reaches the SMAs' answers, not only their refusals: most
/// well-formed Gets and Sets get a GetResp (ibspec §4).
#[test]
fn sma_cases_are_answered() {
    let mut net = fuzz::fuzz_net().unwrap();
    let mut answered = 0;
    let n = 200;
    for i in 0..n {
        let mut m = vl15::proto::mad::dr_request(
            vl15::proto::packet::consts::METHOD_GET,
            vl15::proto::packet::consts::ATTR_NODE_INFO,
            0,
            i,
            &[],
        );
        m[vl15::proto::mad::off::HOP_CNT] = 0;
        let dev = (i as usize) % net.devs.len();
        if let Ok(Some(_)) = net.local_smp(dev, 1, &m) {
            answered += 1;
        }
        fuzz::check_sma(&mut net, dev, 1, &m).unwrap();
    }
    assert_eq!(answered, n, "every node answers Get(NodeInfo)");
}

/// A run ends at its time bound, whatever the case count.
#[test]
fn run_stops_at_the_time_bound() {
    let l = Limits {
        time: Duration::from_millis(300),
        max_cases: u64::MAX,
        hang: Duration::from_secs(10),
        stop_on_failure: false,
    };
    let t0 = std::time::Instant::now();
    let r = fuzz::run(Target::Decode, 7, l).unwrap();
    assert!(r.cases > 0);
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_bytes_as_a_packet(b in proptest::collection::vec(any::<u8>(), 0..400)) {
        fuzz::check_packet(&b).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_bytes_as_a_pcap(b in proptest::collection::vec(any::<u8>(), 0..200)) {
        fuzz::check_pcap(&b).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_bytes_as_a_topology(b in proptest::collection::vec(any::<u8>(), 0..300)) {
        fuzz::check_topology(&b).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_bytes_as_an_ibsim_message(b in proptest::collection::vec(any::<u8>(), 0..300)) {
        fuzz::check_ibsim(&b).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_sim_ctl_sized_message(b in proptest::collection::vec(any::<u8>(), 80..=80)) {
        fuzz::check_ibsim(&b).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_sim_request_sized_message(b in proptest::collection::vec(any::<u8>(), 288..=288)) {
        fuzz::check_ibsim(&b).map_err(TestCaseError::fail)?;
    }
}
