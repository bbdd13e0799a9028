//! The CA port against its reference model under faults: a seeded
//! soak of good and faulted packets at line rate per DATA_W, one short test
//! per fault class asserting the disposition and counter the spec gives it,
//! and tests that the scoreboard catches a wrong byte. The multiport CA's
//! ports run the same soak through the same scoreboard.

use vl15::check::faults::{self, FaultClass, Gen, GenCfg, SoakOpts};
use vl15::check::refmodel::ca::PortConfig;
use vl15::check::refmodel::Ctr;
use vl15::check::scoreboard::CaBench;
use vl15::model::device::CaPortModel;
use vl15::model::stream::Rng;
use vl15::proto::packet::consts::*;

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
        assert!(
            r.faults.get(c.name()).copied().unwrap_or(0) > 0,
            "class {} never ran",
            c.name()
        );
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

/// Each port of the multiport CA (`ib_ca_mp_top`, its SMI shared through
/// the port-tag mux and demux) against the CA port's reference model, at
/// both widths it is built at.
#[test]
fn soak_multiport_ca_ports() {
    for (nports, port, w) in [(2u8, 1u8, 64u32), (2, 2, 64), (2, 2, 128), (1, 1, 128)] {
        let mut o = SoakOpts::new(w, 6_000, 0x6_0002 + u64::from(port));
        o.model = CaPortModel::Mp { nports, port };
        let r = faults::soak(&o).expect("soak");
        eprintln!(
            "{} : {} packets, {} mismatches, {} to SMA, {} on the wire",
            r.device, r.packets, r.mismatches, r.stats.to_sma, r.stats.wire_tx
        );
        assert_eq!(
            r.device,
            format!("port {port} of ib_ca_mp_top NumPorts={nports} DataW {w}")
        );
        assert_eq!(r.mismatches, 0, "{:#?}", r.errors);
        assert!(
            r.stats.to_sma > 1000 && r.stats.wire_tx > 1000,
            "{:?}",
            r.stats
        );
        assert!(r.max_drain <= r.drain_bound);
    }
}

/// The SMA sees the arrival port the SMP came in on: port 2's requests
/// carry port 2. A model that believes it is port 1 is caught.
#[test]
fn multiport_ca_port_number_reaches_the_sma() {
    let mut b = CaBench::on(CaPortModel::Mp { nports: 2, port: 2 }, 64).expect("bench");
    b.configure(
        PortConfig {
            port_num: 2,
            ..cfg()
        },
        4,
    )
    .expect("configure");
    let mut g = Gen::new(
        78,
        GenCfg {
            lid: LID,
            lmc: LMC,
            port: 1,
        },
    );
    b.inject(&g.good_packet(faults::Good::LidGet).to_bytes(), "good");
    for _ in 0..400 {
        b.step().unwrap();
    }
    assert_eq!(b.sb.stats.mismatches, 0, "{:?}", b.sb.errors);
    let (meta, _, _) = b.sb.requests.front().expect("the SMA got the request");
    assert_eq!(meta.port, 2);

    let mut b = CaBench::on(CaPortModel::Mp { nports: 2, port: 2 }, 64).expect("bench");
    b.configure(cfg(), 4).expect("configure");
    b.sb.model.cfg.port_num = 1;
    b.inject(&g.good_packet(faults::Good::LidGet).to_bytes(), "good");
    for _ in 0..400 {
        b.step().unwrap();
    }
    assert_eq!(b.sb.stats.mismatches, 1, "{:?}", b.sb.errors);
    assert!(b.sb.errors[0].contains("port: 2"), "{}", b.sb.errors[0]);
}

#[test]
fn multiport_ca_port_models_that_are_not_built_are_refused() {
    for (n, p, w, want) in [
        (3u8, 1u8, 64u32, "1 or 2 ports"),
        (2, 3, 64, "no port 3"),
        (2, 0, 64, "no port 0"),
        (2, 1, 32, "32"),
    ] {
        let model = CaPortModel::Mp { nports: n, port: p };
        let e = model.dut(w).err().expect("refused");
        assert!(format!("{e:#}").contains(want), "{n}/{p}/{w}: {e:#}");
    }
}

// ---------------------------------------------------------------------------
// One short test per fault class
// ---------------------------------------------------------------------------

const LID: u16 = 0x0040;
const LMC: u8 = 2;

fn cfg() -> PortConfig {
    PortConfig {
        lid: LID,
        lmc: LMC,
        port_state: PORT_STATE_ACTIVE,
        master_sm_lid: 1,
        master_sm_sl: 0,
        port_num: 1,
        ..PortConfig::default()
    }
}

fn bench(width: u32) -> (CaBench, Gen, Rng) {
    let mut b = CaBench::new(width).expect("bench");
    b.configure(cfg(), 4).expect("configure");
    (
        b,
        Gen::new(
            77,
            GenCfg {
                lid: LID,
                lmc: LMC,
                port: 1,
            },
        ),
        Rng::new(5),
    )
}

/// Answer every request the SMA got, step, until drained; then the counters.
fn finish(b: &mut CaBench, rng: &mut Rng) -> vl15::check::refmodel::CtrDelta {
    let bound = faults::drain_bound(b.port().data_w);
    let start = b.cycle();
    loop {
        while let Some((meta, req, _)) = b.sb.requests.pop_front() {
            let r = faults::response(&req, rng);
            b.send_sma(&r, meta);
        }
        b.step().expect("step");
        if b.settled() && b.port().idle && b.sb.requests.is_empty() {
            break;
        }
        assert!(
            b.cycle() - start < bound,
            "not drained within {bound} cycles"
        );
    }
    b.drain(bound).expect("drain");
    let c = b.check_counters().expect("counters agree with the model");
    b.ok().expect("no mismatch");
    c
}

/// The error counters: every counter that says a packet was rejected.
const ERRORS: [Ctr; 15] = [
    Ctr::RxVcrcErr,
    Ctr::RxLverErr,
    Ctr::RxLnhErr,
    Ctr::RxLenErr,
    Ctr::Vl15Dropped,
    Ctr::SmiIcrcErr,
    Ctr::SmiBadHdr,
    Ctr::SmiLidErr,
    Ctr::SmiDrDiscard,
    Ctr::SmiPortDown,
    Ctr::SqDrDiscard,
    Ctr::DataIcrcErr,
    Ctr::GsiBadHdr,
    Ctr::PkeyViol,
    Ctr::QkeyViol,
];

fn errors(c: &vl15::check::refmodel::CtrDelta) -> u32 {
    ERRORS.iter().map(|k| c.get(*k)).sum()
}

/// A receive fault between two good LID-routed Gets: the fault is counted
/// once, in the class's counter, and comes out nowhere (VL15) or flagged
/// discard (data VL); both good SMPs are answered on the wire.
fn rx_class(class: FaultClass) {
    let faults::Expect::Rx(ctr) = class.expect() else {
        panic!("{class:?} is not a receive fault")
    };
    for w in WIDTHS {
        let (mut b, mut g, mut rng) = bench(w);
        for k in 0..4 {
            let good1 = g.good_packet(faults::Good::LidGet).to_bytes();
            let bad = g.rx_fault(class);
            let good2 = g.good_packet(faults::Good::LidGet).to_bytes();
            b.inject(&good1, "good");
            b.inject(&bad, class.name());
            b.inject(&good2, "good");
            let c = finish(&mut b, &mut rng);
            let n = k + 1;
            assert_eq!(
                c.get(ctr),
                n,
                "{} at DATA_W {w}: {}",
                class.name(),
                c.nonzero()
            );
            assert_eq!(
                errors(&c),
                n,
                "{} at DATA_W {w}: {}",
                class.name(),
                c.nonzero()
            );
            assert_eq!(c.get(Ctr::RxPkts), 3 * n);
            assert_eq!(c.get(Ctr::SmiToSma), 2 * n);
            assert_eq!(c.get(Ctr::TxVl15Pkts), 2 * n);
            assert_eq!(b.sb.stats.to_sma, u64::from(2 * n));
            let data = bad[0] >> 4 != VL15
                && matches!(
                    ctr,
                    Ctr::GsiBadHdr | Ctr::PkeyViol | Ctr::QkeyViol | Ctr::DataIcrcErr
                );
            assert_eq!(b.sb.stats.to_drx, u64::from(if data { n } else { 0 }));
        }
    }
}

macro_rules! rx_tests {
    ($($name:ident => $class:ident),* $(,)?) => {
        $(#[test] fn $name() { rx_class(FaultClass::$class); })*
    };
}

rx_tests! {
    class_bad_vcrc => BadVcrc,
    class_bad_icrc => BadIcrc,
    class_lver => LVer,
    class_grh_on_vl15 => GrhOnVl15,
    class_lnh_not_iba => LnhNotIba,
    class_pktlen_mismatch => PktLenMismatch,
    class_truncated => Truncated,
    class_oversized => Oversized,
    class_opcode => Opcode,
    class_destqp_on_vl15 => DestQpOnVl15,
    class_vl15_to_qp1 => Vl15ToQp1,
    class_qp0_on_data_vl => Qp0OnDataVl,
    class_qp1_bad_pkey => Qp1BadPkey,
    class_qp1_bad_qkey => Qp1BadQkey,
    class_qp1_bad_icrc => Qp1BadIcrc,
    class_base_version => BaseVersion,
    class_class_not_smp => ClassNotSmp,
    class_dlid_not_ours => DlidNotOurs,
    class_permissive_dlid_lid_routed => PermissiveDlidLidRouted,
    class_hop_count_64 => HopCount64,
    class_hop_ptr_inconsistent => HopPtrInconsistent,
}

/// SM send faults: never on the wire, counted once; a good request after
/// them goes out with PSN 0 (nothing was sent before it).
fn tx_class(class: FaultClass) {
    let faults::Expect::Tx(ctr) = class.expect() else {
        panic!("{class:?} is not a send fault")
    };
    for w in WIDTHS {
        let (mut b, mut g, mut rng) = bench(w);
        let (m, ah) = g.tx_fault(class);
        b.send_sm(&m, ah);
        let (m, ah) = g.sm_request();
        b.send_sm(&m, ah);
        let c = finish(&mut b, &mut rng);
        assert_eq!(c.get(ctr), 1, "{}: {}", class.name(), c.nonzero());
        assert_eq!(c.get(Ctr::SqPkts), 1);
        assert_eq!(c.get(Ctr::TxVl15Pkts), 1);
        assert_eq!(b.sb.stats.wire_tx, 1);
    }
}

#[test]
fn class_sm_dr_discard() {
    tx_class(FaultClass::SmDrDiscard);
}
#[test]
fn class_sm_local() {
    tx_class(FaultClass::SmLocal);
}

/// ibspec §6: SMPs are received only in Init, Armed or Active.
#[test]
fn class_port_down() {
    for w in WIDTHS {
        let (mut b, mut g, mut rng) = bench(w);
        b.set_port_state(PORT_STATE_DOWN).unwrap();
        for _ in 0..3 {
            b.inject(&g.good_packet(faults::Good::LidGet).to_bytes(), "port_down");
        }
        b.inject(&g.good_packet(faults::Good::Gmp).to_bytes(), "gmp");
        let c = finish(&mut b, &mut rng);
        assert_eq!(c.get(Ctr::SmiPortDown), 3);
        assert_eq!(c.get(Ctr::SmiToSma), 0);
        // data VLs are not the SMI's: the GMP still reaches data RX
        assert_eq!(c.get(Ctr::GsiGmps), 1);
        b.set_port_state(PORT_STATE_INIT).unwrap();
        b.inject(&g.good_packet(faults::Good::LidGet).to_bytes(), "good");
        let c = finish(&mut b, &mut rng);
        assert_eq!(c.get(Ctr::SmiToSma), 1);
        assert_eq!(c.get(Ctr::SmiPortDown), 3);
    }
}

/// ibspec §11: with the SMA stalled, depth + 3 SMPs back to back: the buffer
/// takes `depth`, the 3 after are dropped (VL15Dropped), the `depth` are
/// answered once the SMA runs again.
#[test]
fn class_vl15_overflow() {
    for w in WIDTHS {
        for depth in [1usize, 4] {
            let (mut b, mut g, mut rng) = bench(w);
            b.configure(cfg(), depth).unwrap();
            b.port_mut().sma_rx.hold = true;
            for _ in 0..depth + 3 {
                b.inject(
                    &g.good_packet(faults::Good::LidGet).to_bytes(),
                    "vl15_overflow",
                );
            }
            while b.rx_backlog() > 0 {
                b.step().unwrap();
            }
            for _ in 0..50 {
                b.step().unwrap();
            }
            assert_eq!(
                b.sb.stats.ambiguous_full, 0,
                "the SMA never ran: no slot freed"
            );
            b.port_mut().sma_rx.hold = false;
            let c = finish(&mut b, &mut rng);
            assert_eq!(c.get(Ctr::Vl15Dropped), 3, "DATA_W {w} depth {depth}");
            assert_eq!(c.get(Ctr::SmiToSma) as usize, depth);
            assert_eq!(c.get(Ctr::TxVl15Pkts) as usize, depth);
        }
    }
}

/// A wire that takes nothing for thousands of cycles: every request is
/// still answered exactly once, in order, byte for byte.
#[test]
fn class_tx_backpressure_storm() {
    for w in WIDTHS {
        let (mut b, mut g, mut rng) = bench(w);
        b.port_mut()
            .wire_tx
            .set_pattern(vl15::model::stream::Pattern::Never);
        for _ in 0..10 {
            b.inject(&g.good_packet(faults::Good::DrGet).to_bytes(), "good");
        }
        for _ in 0..3000 {
            while let Some((meta, req, _)) = b.sb.requests.pop_front() {
                let r = faults::response(&req, &mut rng);
                b.send_sma(&r, meta);
            }
            b.step().unwrap();
        }
        assert_eq!(b.sb.stats.wire_tx, 0);
        b.port_mut()
            .wire_tx
            .set_pattern(vl15::model::stream::Pattern::Always);
        let c = finish(&mut b, &mut rng);
        assert_eq!(c.get(Ctr::TxVl15Pkts), 10);
        assert_eq!(c.get(Ctr::Vl15Dropped), 0);
        assert_eq!(b.sb.stats.wire_tx, 10);
    }
}

/// Reset in the middle of an arriving SMP, and in the middle of a response
/// leaving: nothing partial comes out, the counters restart, and the next
/// SMP is answered.
#[test]
fn class_reset_mid_packet() {
    for w in WIDTHS {
        let beats = faults::smp_beats(w);
        for cut in [1, beats / 2, beats - 1] {
            let (mut b, mut g, mut rng) = bench(w);
            // one answered SMP whose response is leaving on the wire when the
            // next SMP is half in
            b.port_mut()
                .wire_tx
                .set_pattern(vl15::model::stream::Pattern::Random {
                    percent: 50,
                    seed: cut,
                });
            b.inject(&g.good_packet(faults::Good::LidGet).to_bytes(), "good");
            b.inject(
                &g.good_packet(faults::Good::LidGet).to_bytes(),
                "reset_mid_packet",
            );
            while b.rx_backlog() > 1 || b.port().wire_rx.beats_sent() < cut as usize {
                while let Some((meta, req, _)) = b.sb.requests.pop_front() {
                    let r = faults::response(&req, &mut rng);
                    b.send_sma(&r, meta);
                }
                b.step().unwrap();
            }
            b.reset(2).unwrap();
            b.configure(cfg(), 4).unwrap();
            b.inject(&g.good_packet(faults::Good::DrGet).to_bytes(), "good");
            let c = finish(&mut b, &mut rng);
            // counted from the reset: exactly the one SMP after it
            assert_eq!(
                c.get(Ctr::RxPkts),
                1,
                "DATA_W {w} cut {cut}: {}",
                c.nonzero()
            );
            assert_eq!(c.get(Ctr::SmiToSma), 1);
            assert_eq!(c.get(Ctr::TxVl15Pkts), 1);
            assert_eq!(errors(&c), 0);
        }
    }
}

/// The link goes down in the middle of an arriving SMP: PortState goes Down
/// then Init (docs/arch.md), the cut SMP and the next packet reach the RTL as
/// one packet of the wrong length (rx_len_err); the packet after is answered.
#[test]
fn class_link_down_mid_packet() {
    for w in WIDTHS {
        let (mut b, mut g, mut rng) = bench(w);
        b.inject(
            &g.good_packet(faults::Good::LidGet).to_bytes(),
            "link_down_mid_packet",
        );
        while b.port().wire_rx.beats_sent() < 3 {
            b.step().unwrap();
        }
        b.set_link(false);
        for _ in 0..100 {
            b.step().unwrap();
        }
        assert_eq!(
            b.step_read(vl15::model::regmap::reg::PORT_STATE).unwrap(),
            u32::from(PORT_STATE_DOWN)
        );
        b.set_link(true);
        for _ in 0..4 {
            b.step().unwrap();
        }
        assert_eq!(
            b.step_read(vl15::model::regmap::reg::PORT_STATE).unwrap(),
            u32::from(PORT_STATE_INIT)
        );
        b.inject(&g.good_packet(faults::Good::LidGet).to_bytes(), "good");
        b.inject(&g.good_packet(faults::Good::LidGet).to_bytes(), "good");
        let c = finish(&mut b, &mut rng);
        assert_eq!(c.get(Ctr::RxLenErr), 1, "DATA_W {w}: {}", c.nonzero());
        assert_eq!(c.get(Ctr::RxPkts), 2);
        assert_eq!(c.get(Ctr::SmiToSma), 1);
        assert_eq!(c.get(Ctr::TxVl15Pkts), 1);
    }
}

/// A MAD for the SM with no receive WQE posted is dropped and counted in
/// VL15Dropped (docs/decisions.md "The SM's receive queue"); with WQEs it is delivered.
#[test]
fn sm_mad_without_wqe() {
    for w in WIDTHS {
        let (mut b, mut g, mut rng) = bench(w);
        b.port_mut().sm_rq.flush(); // withdraw the WQEs "take everything" posted
        for _ in 0..10 {
            b.step().unwrap();
        }
        b.inject(&g.good_packet(faults::Good::DrResp).to_bytes(), "sm_no_wqe");
        b.inject(&g.good_packet(faults::Good::LidGet).to_bytes(), "good");
        let c = finish(&mut b, &mut rng);
        assert_eq!(c.get(Ctr::Vl15Dropped), 1);
        assert_eq!(c.get(Ctr::SmiToSm), 0);
        assert_eq!(c.get(Ctr::SmiToSma), 1);
        b.port_mut().sm_rq.post(1);
        for _ in 0..10 {
            b.step().unwrap();
        }
        b.inject(&g.good_packet(faults::Good::DrResp).to_bytes(), "good");
        let c = finish(&mut b, &mut rng);
        assert_eq!(c.get(Ctr::SmiToSm), 1);
        assert_eq!(b.sb.stats.to_sm, 1);
    }
}

// ---------------------------------------------------------------------------
// The scoreboard cannot pass silently
// ---------------------------------------------------------------------------

/// The model is told one byte of the MAD differs from what the RTL got.
#[test]
fn scoreboard_catches_a_wrong_expected_byte() {
    let (mut b, mut g, mut rng) = bench(64);
    let sent = g.good_packet(faults::Good::LidGet);
    let mut told = sent.clone();
    told.mad[100] ^= 0x01;
    told.fix_crcs();
    b.inject_as(&sent.to_bytes(), &told.to_bytes(), "good");
    for _ in 0..400 {
        b.step().unwrap();
    }
    let _ = &mut rng;
    assert_eq!(b.sb.stats.mismatches, 1, "{:?}", b.sb.errors);
    assert!(b.sb.errors[0].contains("byte 100"), "{}", b.sb.errors[0]);
    assert!(b.ok().is_err());
}

/// The SMA's response the RTL sends differs from the one the model was given.
#[test]
fn scoreboard_catches_a_corrupted_wire_packet() {
    let (mut b, mut g, mut rng) = bench(32);
    b.inject(&g.good_packet(faults::Good::DrGet).to_bytes(), "good");
    let mut answered = false;
    for _ in 0..2000 {
        if let Some((meta, req, _)) = b.sb.requests.pop_front() {
            let r = faults::response(&req, &mut rng);
            let mut corrupt = r;
            corrupt[200] ^= 0x80;
            b.send_sma_as(&corrupt, &r, meta);
            answered = true;
        }
        b.step().unwrap();
    }
    assert!(answered);
    assert_eq!(b.sb.stats.mismatches, 1, "{:?}", b.sb.errors);
    assert!(
        b.sb.errors[0].contains("matches no source head"),
        "{}",
        b.sb.errors[0]
    );
}

/// Counters changed behind the model's back are caught.
#[test]
fn scoreboard_catches_a_counter_difference() {
    let (mut b, mut g, mut rng) = bench(128);
    b.inject(&g.good_packet(faults::Good::LidGet).to_bytes(), "good");
    let c = finish(&mut b, &mut rng);
    assert_eq!(c.get(Ctr::SmiToSma), 1);
    // clear SmiToSma in the RTL only: step the port without the scoreboard
    // seeing the write (its tap emptied)
    b.port_mut().write_reg(
        vl15::model::regmap::reg::CTR_CLEAR_SEL,
        1 << Ctr::SmiToSma as u32,
    );
    for _ in 0..3 {
        b.step_unobserved().unwrap();
    }
    b.port_mut().tap = Some(Box::default());
    let e = b.check_counters().unwrap_err().to_string();
    assert!(e.contains("smi_to_sma: 0 vs 1"), "{e}");
}

/// The spine scenarios run with both ports under a scoreboard: in
/// back_to_back (32 SMPs put on the CA's wire RX at line rate) the CA's
/// scoreboard matched 32 requests to its SMA and 32 responses on its wire,
/// and the SM port's the 32 responses delivered to its SM interface.
#[test]
fn spine_scenarios_are_scoreboarded() {
    let s = vl15::check::scenario::find("back_to_back").expect("scenario");
    let o = vl15::check::scenario::run(s, 64);
    assert!(o.pass, "{}", o.detail);
    assert_eq!(o.scoreboards.len(), 2);
    let (sm, ca) = (&o.scoreboards[0], &o.scoreboards[1]);
    assert_eq!((ca.to_sma, ca.wire_tx, ca.mismatches), (32, 32, 0));
    assert_eq!((sm.to_sm, sm.mismatches), (32, 0));
}

/// The link falls while a response's first beat waits on a stalled wire
/// (tvalid high, tready low): the valid is not taken back (the RTL's own
/// stream checker asserts it; the soak found the gate withdrawing it), the
/// packet leaves whole once the wire takes it, and the port drains.
#[test]
fn link_fall_while_wire_stalled() {
    for w in WIDTHS {
        let (mut b, mut g, mut rng) = bench(w);
        b.port_mut()
            .wire_tx
            .set_pattern(vl15::model::stream::Pattern::Never);
        b.inject(&g.good_packet(faults::Good::LidGet).to_bytes(), "good");
        for _ in 0..600 {
            while let Some((meta, req, _)) = b.sb.requests.pop_front() {
                let r = faults::response(&req, &mut rng);
                b.send_sma(&r, meta);
            }
            b.step().unwrap();
        }
        b.set_link(false);
        for _ in 0..50 {
            b.step().expect("no assertion while the link is down");
        }
        b.port_mut()
            .wire_tx
            .set_pattern(vl15::model::stream::Pattern::Always);
        for _ in 0..200 {
            b.step().unwrap();
        }
        b.set_link(true);
        let c = finish(&mut b, &mut rng);
        assert_eq!(c.get(Ctr::TxVl15Pkts), 1, "DATA_W {w}: {}", c.nonzero());
        assert_eq!(b.sb.stats.wire_tx, 1);
    }
}
