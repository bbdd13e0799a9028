//! QP1 P_Key and Q_Key checks through the RTL fabric: a GMP whose
//! BTH P_Key matches no entry of the receiving port's P_Key table, or whose
//! DETH Q_Key is not 0x80010000, is dropped by the RTL (`gsi_rx_check`),
//! counted in the port's P_KeyViolations / Q_KeyViolations (PortInfo bytes
//! 46–47 / 48–49), and the node's SMA sends Trap 257 / 258 to MasterSMLID,
//! repeated until the SM represses it.
//!
//! Expected values come from the IBA rules as ibspec states them (§2 QP1
//! key rules: a P_Key matches an entry when the low 15 bits are equal and
//! non-zero and one of the two is a full member, as Linux rxe `pkey_match`;
//! §8 PortInfo layout and the Trap 257/258 Notice layout; the DataDetails
//! filled from the dropped packet as the qib driver's `qib_bad_pkey` does:
//! LID1 = SLID, LID2 = DLID, SL, QP1 = SrcQP, QP2 = DestQP) and from the
//! packets the test itself sent, never from running the code.
//!
//! The fabric is `net.2sw2path4hca` brought up by the built-in SM on Hca1.

mod common;
use common::*;

use vl15::agents::gmp::{pma_request, GmpClient, GmpDest, Gsi, ATTR_PORT_COUNTERS};
use vl15::agents::node_sma::Net;
use vl15::agents::node_sma::CA_PARTITION_CAP;
use vl15::agents::simrun::{bring_up, SimOptions};
use vl15::agents::subnet_sm::{run_for, SubnetManager};
use vl15::model::device::AddressHandle;
use vl15::model::node_hw::{TRAP_BAD_P_KEY, TRAP_BAD_Q_KEY};
use vl15::model::regmap::reg;
use vl15::model::regmap::{mpreg, swreg};
use vl15::proto::mad::{self, Mad};
use vl15::proto::packet::consts::*;
use vl15::proto::packet::PortInfo;

struct Fab {
    net: Net,
    sms: Vec<SubnetManager>,
    gsi: Gsi,
    trap_interval: u64,
}

fn fabric() -> Fab {
    let mut opts = SimOptions::default();
    // No light sweeps: nothing but the traps and the test's own MADs.
    opts.sm.sweep_interval = u64::MAX / 4;
    let trap_interval = opts.net.trap_interval;
    let (net, sm, _) = bring_up(&topo("net.2sw2path4hca"), &opts).unwrap();
    assert_eq!(sm.stats.errors, 0);
    let gsi = Gsi::new(&net);
    Fab {
        net,
        sms: vec![sm],
        gsi,
        trap_interval,
    }
}

fn lid(net: &Net, d: usize, p: u8) -> u16 {
    net.devs[d].agent().port_lid(p).unwrap()
}

/// A PerfMgt Get(PortCounters) for port 1, as a GMP client sends it.
fn perf_get(tid: u64) -> Mad {
    let mut m = pma_request(METHOD_GET, ATTR_PORT_COUNTERS);
    m[64 + 1] = 1;
    mad::set_tid(&mut m, tid);
    m
}

/// Run the fabric (SM not stepped) and the host GSI until `done`.
fn run_gsi(f: &mut Fab, mut done: impl FnMut(&Gsi) -> bool) {
    for _ in 0..2000 {
        f.net.run(100).unwrap();
        f.gsi.poll(&mut f.net).unwrap();
        if done(&f.gsi) {
            return;
        }
    }
    panic!("GSI condition not reached: {:?}", f.gsi.stats);
}

/// A LID-routed SubnGet/SubnSet from the SM's port (the SM itself is not
/// stepped meanwhile), its response.
fn smp(f: &mut Fab, dlid: u16, method: u8, attr: u16, modifier: u32, data: Option<&[u8]>) -> Mad {
    let d = f.sms[0].dev;
    let tid = 0x4B45_5900_0000_0000 | f.net.cycle;
    let mut m = mad::request(CLASS_SUBN_LID, method, attr, modifier, tid);
    if let Some(x) = data {
        mad::data_mut(&mut m)[..x.len()].copy_from_slice(x);
    }
    f.net
        .sm_post(d, AddressHandle::lid_routed(dlid), &m)
        .unwrap();
    f.net
        .run_until(1_000_000, |n| {
            n.devs[d].sm.as_ref().is_some_and(|s| s.has_response(tid))
        })
        .unwrap();
    let (r, _, _) = f.net.devs[d]
        .sm
        .as_mut()
        .unwrap()
        .take_response(tid)
        .unwrap();
    assert_eq!(mad::status(&r), 0, "SMP status");
    r
}

/// (P_KeyViolations, Q_KeyViolations) from PortInfo (bytes 46–47, 48–49).
fn port_info_violations(f: &mut Fab, dlid: u16, port: u32) -> (u16, u16) {
    let r = smp(f, dlid, METHOD_GET, ATTR_PORT_INFO, port, None);
    let d = mad::data(&r);
    let pi = PortInfo::decode(d).unwrap();
    assert_eq!(pi.lid, dlid, "PortInfo of the queried port");
    (
        u16::from_be_bytes([d[46], d[47]]),
        u16::from_be_bytes([d[48], d[49]]),
    )
}

fn ca_ctr(net: &mut Net, d: usize, c: u8) -> u32 {
    net.read_reg(d, mpreg::port(1, reg::CTR_BASE + c)).unwrap()
}

/// Send one QP1 GMP from CA `a` to CA `b` with P_Key `pkey`, Q_Key `qkey`.
fn send(f: &mut Fab, a: usize, b: usize, pkey: u16, qkey: u32, tid: u64) {
    let to = GmpDest {
        pkey,
        qkey,
        ..GmpDest::qp1(lid(&f.net, b, 1))
    };
    f.gsi
        .send(&mut f.net, a, 1, &to, QP1, &perf_get(tid))
        .unwrap();
}

/// The check common to both traps: dropped, counted in the RTL and in
/// PortInfo, one trap with the packet's fields at the SM that is
/// MasterSMLID, and no more once repressed.
fn violation(trap: u16, pkey: u16, qkey: u32) {
    let mut f = fabric();
    let a = f.net.dev_index("Hca2").unwrap();
    let b = f.net.dev_index("Hca3").unwrap();
    let (la, lb) = (lid(&f.net, a, 1), lid(&f.net, b, 1));
    let master = f.net.devs[b].agent().master_sm_lid(1).unwrap();
    assert_eq!(master, f.sms[0].lid(), "Hca3's MasterSMLID is the SM");
    assert_eq!(
        port_info_violations(&mut f, lb, 1),
        (0, 0),
        "no violation yet"
    );
    let sent_before = f.net.devs[b].traps_sent;
    let sweeps = f.sms[0].stats.heavy_sweeps;

    send(&mut f, a, b, pkey, qkey, 0x77);
    run_gsi(&mut f, |g| g.stats.rtl_discarded == 1);
    assert_eq!(f.gsi.inbox.len(), 0, "nothing delivered");
    assert_eq!(f.gsi.stats.pma_answers, 0, "the PMA never saw it");
    let (want_p, want_q): (u16, u16) = if trap == TRAP_BAD_P_KEY {
        (1, 0)
    } else {
        (0, 1)
    };
    assert_eq!(
        (f.gsi.stats.pkey_viol, f.gsi.stats.qkey_viol),
        (u64::from(want_p), u64::from(want_q))
    );
    assert_eq!(
        (
            ca_ctr(&mut f.net, b, reg::CTR_PKEY_VIOL),
            ca_ctr(&mut f.net, b, reg::CTR_QKEY_VIOL)
        ),
        (u32::from(want_p), u32::from(want_q)),
        "the RTL counters of Hca3 port 1"
    );
    assert_eq!(ca_ctr(&mut f.net, b, 21), 0, "no GMP counted (gsi_gmps)");

    // The SM receives the trap and represses it.
    run_for(&mut f.net, &mut f.sms, f.trap_interval / 2).unwrap();
    let sm = &f.sms[0];
    assert_eq!(sm.key_traps.len(), 1, "{:#?}", sm.log);
    let t = &sm.key_traps[0];
    assert_eq!(t.trap, trap);
    assert_eq!(t.generic_type, 0x82, "IsGeneric, type 2 (security)");
    assert_eq!(t.producer, 1, "producer: CA");
    assert_eq!((t.issuer_lid, t.slid), (lb, lb), "issued by Hca3 port 1");
    let v = t.details;
    assert_eq!((v.lid1, v.lid2), (la, lb), "LID1 = SLID, LID2 = DLID");
    let key = if trap == TRAP_BAD_P_KEY {
        u32::from(pkey)
    } else {
        qkey
    };
    assert_eq!(v.key, key);
    assert_eq!(
        (v.sl, v.qp1, v.qp2),
        (0, QP1, QP1),
        "SL 0, SrcQP 1, DestQP 1"
    );
    assert_eq!((v.gid1, v.gid2), ([0; 16], [0; 16]), "no GRH");
    assert_eq!(
        f.sms[0].stats.heavy_sweeps, sweeps,
        "a security trap starts no sweep"
    );

    // Repressed: not sent again over several repeat intervals.
    let sent = f.net.devs[b].traps_sent;
    assert_eq!(sent, sent_before + 1);
    run_for(&mut f.net, &mut f.sms, 3 * f.trap_interval).unwrap();
    assert_eq!(f.net.devs[b].traps_sent, sent);
    assert_eq!(f.sms[0].key_traps.len(), 1);

    // PortInfo shows the count (modifier 1, and 0 = the arrival port).
    assert_eq!(port_info_violations(&mut f, lb, 1), (want_p, want_q));
    assert_eq!(port_info_violations(&mut f, lb, 0), (want_p, want_q));
    assert_eq!(port_info_violations(&mut f, la, 1), (0, 0), "Hca2 saw none");

    // A good GMP still passes and is answered (default table, entry 0 =
    // 0xFFFF).
    let mut cl = GmpClient::new(a, 1);
    let c = cl.port_counters(&mut f.net, &mut f.gsi, lb, 1).unwrap();
    assert!(c.rcv_pkts > 0);
}

#[test]
fn a_gmp_with_a_p_key_not_in_the_table_is_dropped_counted_and_trapped() {
    // 0x8005: full member of a partition the default table (0xFFFF only)
    // does not hold; its Q_Key is good.
    violation(TRAP_BAD_P_KEY, 0x8005, QP1_Q_KEY);
}

#[test]
fn a_gmp_with_a_wrong_q_key_is_dropped_counted_and_trapped() {
    violation(TRAP_BAD_Q_KEY, DEFAULT_P_KEY, 0x8001_0001);
}

#[test]
fn the_p_key_table_the_sm_sets_decides_with_full_and_limited_membership() {
    let mut f = fabric();
    let a = f.net.dev_index("Hca2").unwrap();
    let b = f.net.dev_index("Hca3").unwrap();
    let lb = lid(&f.net, b, 1);
    // Set(P_KeyTable) block 0 of Hca3: 0xFFFF, 0x0006 (limited), 0x8007
    // (full); the rest 0.
    let mut blk = [0u8; 64];
    for (i, k) in [0xFFFFu16, 0x0006, 0x8007].iter().enumerate() {
        blk[2 * i..2 * i + 2].copy_from_slice(&k.to_be_bytes());
    }
    let r = smp(&mut f, lb, METHOD_SET, ATTR_P_KEY_TABLE, 0, Some(&blk));
    assert_eq!(&mad::data(&r)[..64], &blk[..], "the table as set");
    // The RTL's table holds them (index register, data register).
    f.net.write_reg(b, mpreg::port(1, reg::PKEY_IDX), 0);
    for (i, k) in [0xFFFFu32, 0x0006, 0x8007, 0].iter().enumerate() {
        f.net.write_reg(b, mpreg::port(1, reg::PKEY_IDX), i as u32);
        let v = f.net.read_reg(b, mpreg::port(1, reg::PKEY_DATA)).unwrap();
        assert_eq!(v, *k, "RTL P_Key entry {i}");
    }
    assert_eq!(
        f.net.read_reg(b, mpreg::port(1, reg::PKEY_CAP)).unwrap(),
        u32::from(CA_PARTITION_CAP),
        "the RTL table has NodeInfo.PartitionCap entries"
    );
    // IBA rule (ibspec §2): full 0x8006 vs limited 0x0006 matches;
    // limited/limited 0x0006 does not; limited 0x0007 vs full 0x8007
    // matches; 0x8008 is in no entry.
    let cases = [
        (0x8006u16, true),
        (0x0006, false),
        (0x0007, true),
        (0x8008, false),
    ];
    for (i, (k, pass)) in cases.iter().enumerate() {
        let before = (f.gsi.stats.pma_answers, f.gsi.stats.pkey_viol);
        send(&mut f, a, b, *k, QP1_Q_KEY, 0x100 + i as u64);
        run_gsi(&mut f, |g| {
            (g.stats.pma_answers, g.stats.pkey_viol) != before
        });
        let got = (f.gsi.stats.pma_answers, f.gsi.stats.pkey_viol);
        if *pass {
            assert_eq!(got, (before.0 + 1, before.1), "P_Key {k:#06x} passes");
        } else {
            assert_eq!(got, (before.0, before.1 + 1), "P_Key {k:#06x} dropped");
        }
    }
    assert_eq!(ca_ctr(&mut f.net, b, reg::CTR_PKEY_VIOL), 2);
    assert_eq!(port_info_violations(&mut f, lb, 1), (2, 0));
    // The SM heard of the drops; the last trap replaced the first.
    run_for(&mut f.net, &mut f.sms, f.trap_interval / 2).unwrap();
    let keys: Vec<u32> = f.sms[0].key_traps.iter().map(|t| t.details.key).collect();
    assert!(
        keys == vec![0x8008] || keys == vec![0x0006, 0x8008],
        "{keys:x?}"
    );
}

#[test]
fn a_switch_port_0_checks_p_keys_and_traps_as_a_switch() {
    let mut f = fabric();
    let a = f.net.dev_index("Hca2").unwrap();
    let s = f.net.dev_index("Switch1").unwrap();
    let ls = lid(&f.net, s, 0);
    let la = lid(&f.net, a, 1);
    let to = GmpDest {
        pkey: 0x8123,
        ..GmpDest::qp1(ls)
    };
    f.gsi
        .send(&mut f.net, a, 1, &to, QP1, &perf_get(0x55))
        .unwrap();
    run_gsi(&mut f, |g| g.stats.pkey_viol == 1);
    assert_eq!(
        f.net
            .read_reg(s, swreg::ctr0g(swreg::ctr::G_PKEY_VIOL))
            .unwrap(),
        1
    );
    assert_eq!(
        f.net.read_reg(s, swreg::ctr0g(swreg::ctr::G_GMPS)).unwrap(),
        0
    );
    run_for(&mut f.net, &mut f.sms, f.trap_interval / 2).unwrap();
    let t = &f.sms[0].key_traps;
    assert_eq!(t.len(), 1, "{:#?}", f.sms[0].log);
    assert_eq!((t[0].trap, t[0].producer, t[0].issuer_lid), (257, 2, ls));
    assert_eq!((t[0].details.lid1, t[0].details.lid2), (la, ls));
    assert_eq!(t[0].details.key, 0x8123);
    assert_eq!(port_info_violations(&mut f, ls, 0), (1, 0));
    // The switch's default table (0xFFFF) lets the PMA answer.
    let mut cl = GmpClient::new(a, 1);
    cl.port_counters(&mut f.net, &mut f.gsi, ls, 1).unwrap();
}
