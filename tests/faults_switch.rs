//! The switch datapath (`ib_switch_top`'s tiles, 8 ports unless a test says
//! otherwise, DataW 64 and 128) against the reference model in
//! `vl15::check::refmodel::switch`: a seeded soak of ≥ 10^4 packets, soaks at 36
//! and 64 ports, one short test per fault class, the directed classes (VL15
//! overflow, link down and reset in the middle of a packet, backpressure
//! storms), the model alone on the ibspec §5 worked trace, and a check that
//! the scoreboard catches a mismatch.

use vl15::check::refmodel::switch::{
    self as rs, ctr, Bank, Bench, Expect, FaultClass, Out, Patterns, Radix, SoakOptions,
};
use vl15::model::stream::{Pattern, Rng};
use vl15::proto::mad;
use vl15::proto::packet::consts::*;
use vl15::proto::packet::Packet;

/// Run `n` packets of `class` mixed with as many good ones; every packet
/// must be disposed as the model says (bytes, order, counters), and the
/// counter the class names must have counted each faulted packet.
fn class_test(class: FaultClass, n: usize) {
    let seed = 0xC1A5_5000 + class as u64;
    let mut b = Bench::new(seed).expect("bench");
    let mut rng = Rng::new(seed);
    let mut want: std::collections::BTreeMap<(Bank, u8), u32> = Default::default();
    let mut delivered = 0u64;
    for _ in 0..n {
        let g = b.gen_class(&mut rng, class);
        match g.expect {
            Expect::Dropped(bank, c) => *want.entry((bank, c)).or_default() += 1,
            Expect::Delivered => delivered += 1,
        }
        b.push(g);
        let g = b.gen(&mut rng, 0);
        b.push(g);
    }
    b.drain(rs::DRAIN_BOUND).expect("drain");
    b.check_counters().expect("counters");
    assert_eq!(b.tally.mismatches, 0, "{:#?}", b.tally.log);
    assert_eq!(b.tally.injected, 2 * n as u64);
    for ((bank, c), k) in want {
        let v = b.read_reg(bank.addr(c)).expect("read");
        assert_eq!(v, k, "{} after {n} {}", bank.name(c), class.name());
    }
    if class.is_good() || delivered > 0 {
        assert!(b.tally.matched >= delivered);
    }
}

macro_rules! class_tests {
    ($($name:ident => $class:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                class_test(FaultClass::$class, 60);
            }
        )*
    };
}

class_tests! {
    fault_bad_vcrc => BadVcrc,
    fault_bad_icrc_forwarded_unchanged => BadIcrcForwarded,
    fault_bad_icrc_at_port0 => BadIcrcSmi,
    fault_bad_icrc_gmp_flagged => BadIcrcGmp,
    fault_bad_pkey_gmp_flagged => BadPkeyGmp,
    fault_bad_qkey_gmp_flagged => BadQkeyGmp,
    fault_lver => LVer,
    fault_lnh => Lnh,
    fault_pktlen => PktLen,
    fault_truncated => Truncated,
    fault_oversized_vl15 => OversizedVl15,
    fault_oversized_data => OversizedData,
    fault_opcode => Opcode,
    fault_bad_smp_header => BadSmpHdr,
    fault_dlid_not_ours => DlidNotOurs,
    fault_no_route => NoRoute,
    fault_loop => Loop,
    fault_hop_count_64 => HopCount,
    fault_bad_hop_pointer => BadHopPtr,
    fault_dr_egress_out_of_range => DrEgressRange,
    fault_down_port => DownPort,
    fault_send_path_discard => SendPathDiscard,
    fault_gmp_send_drop => GmpSendDrop,
    good_lid_smp => GoodLidSmp,
    good_data => GoodData,
    good_dr_out => GoodDrOut,
    good_dr_return => GoodDrReturn,
    good_dr_to_sma => GoodDrToSma,
    good_lid_to_sma => GoodLidToSma,
    good_dr_to_sm => GoodDrToSm,
    good_gmp => GoodGmp,
    good_dr_lid_rows => GoodDrLidRows,
    good_sm_send => GoodSmSend,
    good_gmp_send => GoodGmpSend,
}

/// At both widths the switch is built at (the fabric runs either).
#[test]
fn soak_10k_packets_fixed_seed() {
    for w in vl15_bindings::DEV_DATA_WIDTHS {
        soak_10k_at(w);
    }
}

fn soak_10k_at(w: u32) {
    let opt = SoakOptions {
        data_w: w,
        ..SoakOptions::default()
    };
    let r = rs::soak(0x5EED_0006, 10_000, &opt).expect("soak");
    println!("{r}");
    assert_eq!(r.mismatches, 0, "{r}");
    assert!(r.packets >= 10_000, "{r}");
    assert!(r.good > 0 && r.matched >= r.good / 2, "{r}");
    for c in FaultClass::FAULTS {
        assert!(
            r.faults.get(c.name()).copied().unwrap_or(0) > 0,
            "{} never ran",
            c.name()
        );
    }
    for d in [
        "vl15_overflow",
        "data_overflow",
        "link_down",
        "egress_link_down",
        "reset",
    ] {
        assert!(
            r.faults.get(d).copied().unwrap_or(0) > 0,
            "{d} never ran: {r}"
        );
    }
    assert!(r.max_drain_cycles <= r.drain_bound, "{r}");
}

#[test]
fn vl15_overflow_drops_what_finds_the_buffer_full() {
    let mut b = Bench::new(11).expect("bench");
    let mut rng = Rng::new(11);
    b.vl15_overflow(&mut rng, 3).expect("overflow");
    b.drain(rs::DRAIN_BOUND).expect("drain");
    b.check_counters().expect("counters");
    assert_eq!(b.tally.mismatches, 0, "{:#?}", b.tally.log);
    // VL15_DEPTH delivered, 3 dropped and counted at the one input port.
    assert_eq!(b.tally.matched, rs::VL15_DEPTH as u64);
    let drops: u32 = (1..=rs::NPORTS)
        .map(|p| {
            b.read_reg(Bank::Ext(p).addr(ctr::VL15_DROPPED))
                .expect("read")
        })
        .sum();
    assert_eq!(drops, 3);
}

#[test]
fn data_overflow_drops_what_finds_the_buffer_full() {
    let mut b = Bench::new(18).expect("bench");
    let mut rng = Rng::new(18);
    b.data_overflow(&mut rng, 2).expect("overflow");
    b.drain(rs::DRAIN_BOUND).expect("drain");
    b.check_counters().expect("counters");
    assert_eq!(b.tally.mismatches, 0, "{:#?}", b.tally.log);
    assert_eq!(b.tally.matched, rs::DATA_DEPTH as u64);
    let drops: u32 = (1..=rs::NPORTS)
        .map(|p| {
            b.read_reg(Bank::Ext(p).addr(ctr::DATA_DROPPED))
                .expect("read")
        })
        .sum();
    assert_eq!(drops, 2);
}

#[test]
fn link_down_mid_packet_drops_it_whole() {
    let mut b = Bench::new(12).expect("bench");
    let mut rng = Rng::new(12);
    for _ in 0..5 {
        b.link_down_mid_packet(&mut rng).expect("link down");
        // The port forwards again once Active.
        for _ in 0..20 {
            let g = b.gen(&mut rng, 0);
            b.push(g);
        }
        b.drain(rs::DRAIN_BOUND).expect("drain");
    }
    b.check_counters().expect("counters");
    assert_eq!(b.tally.mismatches, 0, "{:#?}", b.tally.log);
    let drops: u32 = (1..=rs::NPORTS)
        .map(|p| {
            b.read_reg(Bank::Ext(p).addr(ctr::LINK_DOWN_DROP))
                .expect("read")
        })
        .sum();
    assert_eq!(drops, 5);
}

#[test]
fn reset_mid_packet_leaves_no_partial_packet() {
    let mut b = Bench::new(13).expect("bench");
    let mut rng = Rng::new(13);
    for round in 0..6u64 {
        for _ in 0..200 {
            let g = b.gen(&mut rng, 30);
            b.push(g);
        }
        // Cut at a different point each time: mid-packet on the inputs and
        // outputs alike.
        b.reset_mid_traffic(&mut rng, 37 + round * 211)
            .expect("reset");
        for _ in 0..100 {
            let g = b.gen(&mut rng, 0);
            b.push(g);
        }
        b.drain(rs::DRAIN_BOUND).expect("drain");
        b.check_counters().expect("counters");
    }
    assert_eq!(b.tally.resets, 6);
    assert!(b.tally.lost_to_reset > 0);
    assert_eq!(b.tally.mismatches, 0, "{:#?}", b.tally.log);
}

#[test]
fn tx_backpressure_storms_lose_nothing() {
    let mut b = Bench::new(14).expect("bench");
    let mut rng = Rng::new(14);
    let n = usize::from(rs::NPORTS);
    for (k, pat) in [
        Pattern::Periodic { on: 16, off: 500 },
        Pattern::Random {
            percent: 5,
            seed: 3,
        },
        Pattern::Periodic { on: 300, off: 300 },
    ]
    .into_iter()
    .enumerate()
    {
        b.set_patterns(&Patterns {
            rx: Pattern::Always,
            tx: vec![pat.clone(); n],
            host: if k == 1 { pat.clone() } else { Pattern::Always },
        });
        for _ in 0..300 {
            let g = b.gen(&mut rng, 20);
            b.push(g);
        }
        b.drain(rs::DRAIN_BOUND * 4).expect("drain");
    }
    b.check_counters().expect("counters");
    assert_eq!(b.tally.mismatches, 0, "{:#?}", b.tally.log);
    assert!(b.tally.matched > 600);
}

#[test]
fn scoreboard_catches_an_injected_mismatch() {
    let mut b = Bench::new(15).expect("bench");
    let mut rng = Rng::new(15);
    b.corrupt_next = true;
    for _ in 0..50 {
        let g = b.gen_class(&mut rng, FaultClass::GoodLidSmp);
        b.push(g);
    }
    b.drain(rs::DRAIN_BOUND).expect("drain");
    assert!(b.tally.mismatches >= 1, "corrupted expectation not caught");
    // The corrupted packet is reported (unexpected bytes, and missing from
    // its queue when the next one came); the other 49 matched.
    assert_eq!(b.tally.matched, 49, "{:#?}", b.tally.log);
}

#[test]
fn scoreboard_catches_a_wrong_counter() {
    let mut b = Bench::new(16).expect("bench");
    let mut rng = Rng::new(16);
    for _ in 0..20 {
        let g = b.gen_class(&mut rng, FaultClass::GoodData);
        b.push(g);
    }
    b.drain(rs::DRAIN_BOUND).expect("drain");
    // A counter write the model does not know of: CTR_CLEAR.
    b.write_reg(vl15::model::regmap::swreg::CTR_CLEAR, 1)
        .expect("write");
    b.check_counters().expect("counters");
    assert!(b.tally.mismatches > 0);
}

/// The model alone on ibspec §5's worked trace at the switch (hc = 2, in
/// a, out q): outbound it leaves q with hp 2 and RP[1] = a; the return
/// (hp 2) leaves RP[1] = a with hp 1; LRH DLID/SLID stay permissive.
#[test]
fn model_follows_the_ibspec_worked_trace() {
    let m = rs::SwitchModel::new(rs::bench_state(Radix::DEFAULT));
    let (a, q) = (3u8, 5u8);
    let mut req = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 0x77, &[1, q]);
    req[6] = 1; // the SM's send rule made it 1
    let w = Packet::smp(VL15, 0, PERMISSIVE_LID, PERMISSIVE_LID, req);
    let pr = m.ingress(a, &w);
    let Some(Out::Wire { port, bytes, sq }) = pr.outs.first() else {
        panic!("{pr:?}")
    };
    assert_eq!((*port, *sq), (q, true));
    let out = &bytes[MAD_OFFSET..MAD_OFFSET + MAD_BYTES];
    assert_eq!(out[6], 2, "hop pointer");
    assert_eq!(out[192 + 1], a, "ReturnPath[1]");
    assert_eq!(&bytes[2..4], &[0xFF, 0xFF]);
    assert_eq!(&bytes[6..8], &[0xFF, 0xFF]);
    assert!(vl15::proto::crc::check_wire(bytes) == Some((true, true)));
    assert!(pr.ctrs.contains(&(Bank::Port0, ctr::P0_DR_FORWARDED, 1)));
    // The reply from B: D = 1, hp 2 on the wire.
    let mut resp: mad::Mad = out.try_into().expect("256");
    mad::make_response(&mut resp, 0);
    let w = Packet::smp(VL15, 0, PERMISSIVE_LID, PERMISSIVE_LID, resp);
    let pr = m.ingress(q, &w);
    let Some(Out::Wire { port, bytes, .. }) = pr.outs.first() else {
        panic!("{pr:?}")
    };
    assert_eq!(*port, a);
    assert_eq!(bytes[MAD_OFFSET + 6], 1);
    // A LID-routed data packet is forwarded byte for byte.
    let mut rng = Rng::new(1);
    let g = rs::gen_packet(&mut rng, Radix::DEFAULT, FaultClass::GoodData, 1);
    let pr = m.ingress(g.port, &g.bytes);
    assert!(matches!(&pr.outs[..], [Out::Wire { bytes, sq: false, .. }] if *bytes == g.bytes));
}

/// The long soak (not in `make test`): `VL15_SOAK_PACKETS` packets,
/// default 10^5. `cargo test --release -p vl15 --test faults_switch --
/// --ignored --nocapture soak_long`.
#[test]
#[ignore]
fn soak_long() {
    let n = std::env::var("VL15_SOAK_PACKETS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let r = rs::soak(0x5EED_0106, n, &SoakOptions::default()).expect("soak");
    println!("{r}");
    assert_eq!(r.mismatches, 0, "{r}");
    assert!(r.packets >= n);
}

#[test]
fn egress_link_down_shows_no_packet_and_accounts_for_each() {
    let mut b = Bench::new(17).expect("bench");
    let mut rng = Rng::new(17);
    let mut tot = (0, 0, 0);
    for _ in 0..6 {
        let (n, sw, tx) = b.egress_link_down(&mut rng).expect("egress link down");
        tot = (tot.0 + n, tot.1 + sw, tot.2 + tx);
        for _ in 0..50 {
            let g = b.gen(&mut rng, 10);
            b.push(g);
        }
        b.drain(rs::DRAIN_BOUND).expect("drain");
    }
    b.check_counters().expect("counters");
    println!(
        "egress link down: {} packets, {} sent into the falling link, {} of those counted sent",
        tot.0, tot.1, tot.2
    );
    assert_eq!(b.tally.mismatches, 0, "{:#?}", b.tally.log);
}

/// A soak of a big switch: every fault class and directed class runs, the
/// counters of all N ports are checked, and the traffic spreads over the
/// whole radix: every port is an input, every Active port and the Init
/// port an output, the Down port never.
fn soak_radix(seed: u64, nports: u8, w: u32, packets: u64) {
    // Phases of 500: a reset (every 8th phase) within 4,000 packets.
    let opt = SoakOptions {
        data_w: w,
        phase_packets: 500,
        ..SoakOptions::with_ports(u32::from(nports))
    };
    let t0 = std::time::Instant::now();
    let r = rs::soak(seed, packets, &opt).expect("soak");
    println!("{r}");
    println!(
        "{nports} ports DataW {w}: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(r.nports, nports, "{r}");
    assert_eq!(r.mismatches, 0, "{r}");
    assert!(r.packets >= packets, "{r}");
    assert!(r.matched > 0 && r.matched >= r.good / 2, "{r}");
    // Every port's 16 counters, port 0's and the GMP bank, at each check.
    assert!(r.counters_checked >= u64::from(nports) * 16, "{r}");
    assert!(r.to_string().contains(&format!("{nports} ports")), "{r}");
    for c in FaultClass::FAULTS {
        assert!(
            r.faults.get(c.name()).copied().unwrap_or(0) > 0,
            "{} never ran: {r}",
            c.name()
        );
    }
    for d in [
        "vl15_overflow",
        "data_overflow",
        "link_down",
        "egress_link_down",
        "reset",
    ] {
        assert!(
            r.faults.get(d).copied().unwrap_or(0) > 0,
            "{d} never ran: {r}"
        );
    }
    let missing_in: Vec<u8> = (1..=nports)
        .filter(|p| !r.wire_in.contains_key(p))
        .collect();
    assert!(
        missing_in.is_empty(),
        "no packet in on ports {missing_in:?}: {r}"
    );
    let missing_out: Vec<u8> = (1..nports)
        .filter(|p| !r.wire_out.contains_key(p))
        .collect();
    assert!(
        missing_out.is_empty(),
        "no packet out of ports {missing_out:?}: {r}"
    );
    assert!(
        r.wire_out.keys().all(|&p| p < nports),
        "out of the Down port: {r}"
    );
    let above_8: u64 = r.wire_out.range(9..).map(|(_, n)| n).sum();
    assert!(above_8 > 0, "{r}");
    assert!(r.max_drain_cycles <= r.drain_bound, "{r}");
}

#[test]
fn soak_36_ports() {
    soak_radix(0x5EED_0036, 36, 128, 10_000);
}

#[test]
fn soak_64_ports() {
    soak_radix(0x5EED_0064, 64, 128, 8_000);
}

#[test]
fn soak_64_ports_dataw_64() {
    soak_radix(0x5EED_0640, 64, 64, 5_000);
}

/// A radix the layout does not fit (fewer than six Active ports, an Init
/// and a Down one) or the model is not built for is an error, not a panic.
#[test]
fn bench_refuses_a_radix_out_of_range() {
    for n in [0, 1, 7, 65, 255, 1000] {
        let e = Bench::with_radix(1, 64, n)
            .err()
            .unwrap_or_else(|| panic!("{n} ports accepted"));
        let msg = format!("{e:#}");
        assert!(
            msg.contains("8..=64") && msg.contains(&n.to_string()),
            "{msg}"
        );
    }
    let e = rs::soak(1, 10, &SoakOptions::with_ports(7)).err();
    assert!(e.is_some_and(|e| e.to_string().contains("not 7")));
    let b = Bench::with_radix(1, 64, 8).expect("8 ports");
    assert_eq!(b.radix(), Radix::DEFAULT);
}
