//! QP1 through the RTL fabric without `vl15 serve`: GMPs
//! cross the RTL switches on a data VL, the PMA of each CA port answers
//! PerfMgt from the port's RTL counters, and the GMP client follows one GSA
//! redirect.
//!
//! Expected values come from the IBA semantics of the counters and from the
//! RTL registers read here independently: PortXmitPkts/PortRcvPkts grow by
//! exactly the packets that crossed the port; VL15Dropped grows by exactly
//! the SMPs the RTL had to drop (a MAD for a host SM that has posted no
//! receive WQE); a reset zeroes what CounterSelect names.
//!
//! The fabric is `net.2sw2path4hca` brought up by the built-in SM (on
//! Hca1) with LMC 1, so every CA port owns two LIDs. The SM is not stepped
//! afterwards: no SMP traffic disturbs the counts.

mod common;
use common::*;

use vl15::agents::gmp::{
    decode_port_counters, pma_request, ClassPortInfo, GmpClient, GmpDest, GmpError, Gsi,
    PortCounters, Redirect, ATTR_PORT_COUNTERS, GMP_DATA,
};
use vl15::agents::node_sma::Net;
use vl15::agents::simrun::{bring_up, SimOptions};
use vl15::model::regmap::reg;
use vl15::model::regmap::{mpreg, swreg};
use vl15::proto::mad;
use vl15::proto::packet::consts::*;
use vl15::proto::packet::Packet;

fn fabric() -> Net {
    let mut opts = SimOptions::default();
    opts.sm.lmc = 1;
    let (net, sm, _) = bring_up(&topo("net.2sw2path4hca"), &opts).unwrap();
    assert_eq!(sm.stats.errors, 0);
    net
}

/// RTL counter `name` of CA `d` port `p`, read over the register bus.
fn ctr(net: &mut Net, d: usize, p: u8, name: &str) -> u32 {
    let i = reg::COUNTERS
        .iter()
        .position(|c| *c == name)
        .unwrap_or_else(|| panic!("no RTL counter {name}")) as u8;
    net.read_reg(d, mpreg::port(p, reg::CTR_BASE + i)).unwrap()
}

/// PortCounters as the IBA defines them, from the RTL registers (the
/// mapping documented in `vl15::agents::gmp::PortCounters`).
fn from_registers(net: &mut Net, d: usize, p: u8) -> PortCounters {
    let mut c = |n: &str| u64::from(ctr(net, d, p, n));
    PortCounters {
        rcv_sw_relay_errors: 0,
        rcv_errors: c("rx_vcrc_err")
            + c("rx_lver_err")
            + c("rx_lnh_err")
            + c("rx_len_err")
            + c("smi_icrc_err")
            + c("data_icrc_err"),
        vl15_dropped: c("vl15_dropped"),
        xmit_data: c("tx_words"),
        rcv_data: c("rx_words"),
        xmit_pkts: c("tx_vl15_pkts") + c("tx_data_pkts"),
        rcv_pkts: c("rx_pkts"),
    }
}

fn lid(net: &Net, d: usize) -> u16 {
    net.devs[d].agent().port_lid(1).unwrap()
}

#[test]
fn gmps_cross_the_rtl_and_the_pma_reports_the_rtl_counters() {
    let mut net = fabric();
    let mut gsi = Gsi::new(&net);
    let a = net.dev_index("Hca2").unwrap();
    let b = net.dev_index("Hca3").unwrap();
    let lb = lid(&net, b);
    let mut cl = GmpClient::new(a, 1);

    // Get(ClassPortInfo): the PerfMgt class answers, BaseVersion 1,
    // ClassVersion 1.
    let r = cl
        .rpc(
            &mut net,
            &mut gsi,
            GmpDest::qp1(lb),
            &pma_request(METHOD_GET, ATTR_CLASS_PORT_INFO),
        )
        .unwrap();
    assert_eq!(mad::status(&r), 0);
    assert_eq!(mad::method(&r), METHOD_GET_RESP);
    let cpi = ClassPortInfo::decode(&r);
    assert_eq!((cpi.base_version, cpi.class_version), (1, 1));

    // The two GMPs crossed the RTL: A sent them on its data TX, B received
    // them on its data RX, and B's answers went the other way.
    let a_tx = ctr(&mut net, a, 1, "tx_data_pkts");
    let b_rx = ctr(&mut net, b, 1, "rx_data_pkts");
    assert_eq!((a_tx, b_rx), (1, 1), "one request each way so far");
    assert_eq!(ctr(&mut net, a, 1, "rx_data_pkts"), 1, "one response");

    // Get(PortCounters) three times: each answer equals the registers as
    // they were when B answered (its TX counters then lacked that answer),
    // and XmitPkts/RcvPkts grow by exactly one per round trip.
    let mut last: Option<PortCounters> = None;
    for _ in 0..3 {
        let (t0, e0) = (net.cycle, net.stats.ticks);
        let v = cl.port_counters(&mut net, &mut gsi, lb, 1).unwrap();
        eprintln!(
            "Get(PortCounters) Hca2 -> Hca3 -> Hca2: {} cycles, {} device evaluations",
            net.cycle - t0,
            net.stats.ticks - e0
        );
        let mut now = from_registers(&mut net, b, 1);
        now.xmit_pkts -= 1; // B's answer left after the snapshot
        assert!(v.xmit_data <= now.xmit_data, "{v:?} {now:?}");
        now.xmit_data = v.xmit_data; // ... and its words
        assert_eq!(v, now);
        if let Some(l) = last {
            assert_eq!(v.xmit_pkts, l.xmit_pkts + 1, "the previous answer");
            assert_eq!(v.rcv_pkts, l.rcv_pkts + 1, "this request");
            assert_eq!(v.vl15_dropped, l.vl15_dropped);
        }
        last = Some(v);
    }
    // Every switch on the way counted the data packets it forwarded.
    let fwd: u32 = net
        .devs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.is_switch)
        .map(|(i, _)| i)
        .collect::<Vec<_>>()
        .into_iter()
        .map(|s| {
            (1..=net.devs[s].nports)
                .map(|p| {
                    net.read_reg(s, swreg::ctr(p, swreg::ctr::TX_DATA_PKTS))
                        .unwrap()
                })
                .sum::<u32>()
        })
        .sum();
    assert!(fwd >= 8, "8 GMPs crossed at least one switch each: {fwd}");
    assert_eq!(gsi.stats.pma_answers, 4);
    assert_eq!(
        gsi.stats.icrc_err + gsi.stats.qkey_err + gsi.stats.lid_err,
        0
    );

    // VL15Dropped: five SMP responses for B's host SM, which has posted no
    // receive WQE (no SM there): the RTL drops and counts each.
    let before = cl.port_counters(&mut net, &mut gsi, lb, 1).unwrap();
    let reg_before = ctr(&mut net, b, 1, "vl15_dropped");
    let mut resp = mad::request(CLASS_SUBN_LID, METHOD_GET_RESP, ATTR_NODE_INFO, 0, 0x55);
    resp[mad::off::METHOD] = METHOD_GET_RESP;
    for _ in 0..5 {
        net.inject(b, 1, &Packet::smp(VL15, 0, lb, lid(&net, a), resp))
            .unwrap();
    }
    net.run_until_idle(100_000).unwrap();
    assert_eq!(ctr(&mut net, b, 1, "vl15_dropped"), reg_before + 5);
    let after = cl.port_counters(&mut net, &mut gsi, lb, 1).unwrap();
    assert_eq!(after.vl15_dropped, before.vl15_dropped + 5);
    // 5 SMPs and 1 GMP came in; 1 answer went out in between.
    assert_eq!(after.rcv_pkts, before.rcv_pkts + 6);
    assert_eq!(after.xmit_pkts, before.xmit_pkts + 1);

    // A GMP with a bad ICRC (VCRC recomputed, so the link takes it) gets
    // no answer: the GSI drops it.
    let mut req = pma_request(METHOD_GET, ATTR_PORT_COUNTERS);
    req[GMP_DATA + 1] = 1;
    let la = lid(&net, a);
    let gmp = |psn: u32| Packet::parse(&Packet::gmp(0, 0, lb, la, psn, req)).unwrap();
    let mut bad = gmp(7);
    bad.icrc ^= 1;
    bad.vcrc = bad.computed_vcrc();
    net.inject(b, 1, &bad.to_bytes()).unwrap();
    net.run_until_idle(100_000).unwrap();
    gsi.poll(&mut net).unwrap();
    // Dropped by the host's check, or flagged (tuser) by the RTL's GSI
    // check where the CA has one.
    assert_eq!(gsi.stats.icrc_err + gsi.stats.rtl_discarded, 1);
    assert_eq!(gsi.stats.pma_answers, 6, "no answer to the bad one");
    // A QP1 GMP with the wrong Q_Key likewise.
    let mut wrong = gmp(8);
    wrong.deth.q_key = 0x1234;
    wrong.fix_crcs();
    net.inject(b, 1, &wrong.to_bytes()).unwrap();
    net.run_until_idle(100_000).unwrap();
    gsi.poll(&mut net).unwrap();
    assert_eq!(
        gsi.stats.icrc_err + gsi.stats.qkey_err + gsi.stats.rtl_discarded,
        2
    );
    assert_eq!(gsi.stats.pma_answers, 6);
}

#[test]
fn perf_set_resets_what_counter_select_names_and_unsupported_gets_iba_status() {
    let mut net = fabric();
    let mut gsi = Gsi::new(&net);
    let a = net.dev_index("Hca2").unwrap();
    let b = net.dev_index("Hca4").unwrap();
    let lb = lid(&net, b);
    let mut cl = GmpClient::new(a, 1);
    for _ in 0..2 {
        cl.port_counters(&mut net, &mut gsi, lb, 1).unwrap();
    }
    // Set(PortCounters), CounterSelect = PortXmitPkts (0x4000) only.
    let set = |sel: u16| {
        let mut m = pma_request(METHOD_SET, ATTR_PORT_COUNTERS);
        m[GMP_DATA + 1] = 1;
        m[GMP_DATA + 2..GMP_DATA + 4].copy_from_slice(&sel.to_be_bytes());
        m
    };
    let r = cl
        .rpc(&mut net, &mut gsi, GmpDest::qp1(lb), &set(0x4000))
        .unwrap();
    assert_eq!(mad::status(&r), 0);
    let v = decode_port_counters(&r);
    assert_eq!(v.xmit_pkts, 0, "reset");
    assert!(v.rcv_pkts >= 3, "not selected: kept ({})", v.rcv_pkts);
    // Since the reset: the Set's answer went out, this Get came in.
    let g = cl.port_counters(&mut net, &mut gsi, lb, 1).unwrap();
    assert_eq!(g.xmit_pkts, 1);
    assert_eq!(g.rcv_pkts, v.rcv_pkts + 1);
    // perfquery -R's mask: everything.
    cl.rpc(&mut net, &mut gsi, GmpDest::qp1(lb), &set(0xFFFF))
        .unwrap();
    // The clear happened in the RTL: its registers now hold only the Set's
    // answer, which left after it (one GMP, PktLen 72 words).
    assert_eq!(
        from_registers(&mut net, b, 1),
        PortCounters {
            xmit_pkts: 1,
            xmit_data: 72,
            ..PortCounters::default()
        }
    );
    // Since this reset: the Set's answer out, the Get in; each one GMP of
    // PktLen 72 words (LRH 8 + BTH 12 + DETH 8 + MAD 256 + ICRC 4 bytes,
    // ibspec §11), the unit of PortXmitData/PortRcvData.
    let g = cl.port_counters(&mut net, &mut gsi, lb, 1).unwrap();
    assert_eq!(
        g,
        PortCounters {
            xmit_pkts: 1,
            rcv_pkts: 1,
            xmit_data: 72,
            rcv_data: 72,
            ..PortCounters::default()
        }
    );

    // IBA status for what the PMA does not do (ibspec §7).
    let ask = |net: &mut Net, gsi: &mut Gsi, cl: &mut GmpClient, m: &mad::Mad| {
        mad::status(&cl.rpc(net, gsi, GmpDest::qp1(lb), m).unwrap())
    };
    let mut m = pma_request(0x03, ATTR_PORT_COUNTERS); // Send
    m[GMP_DATA + 1] = 1;
    assert_eq!(
        ask(&mut net, &mut gsi, &mut cl, &m),
        STATUS_METHOD_UNSUPPORTED
    );
    let m = pma_request(METHOD_GET, 0x0010); // PortSamplesControl
    assert_eq!(
        ask(&mut net, &mut gsi, &mut cl, &m),
        STATUS_ATTR_UNSUPPORTED
    );
    let m = pma_request(METHOD_SET, ATTR_CLASS_PORT_INFO);
    assert_eq!(
        ask(&mut net, &mut gsi, &mut cl, &m),
        STATUS_ATTR_UNSUPPORTED
    );
    let mut m = pma_request(METHOD_GET, ATTR_PORT_COUNTERS);
    m[GMP_DATA + 1] = 3; // Hca4 has ports 1 and 2
    assert_eq!(ask(&mut net, &mut gsi, &mut cl, &m), STATUS_INVALID_FIELD);
    let mut m = pma_request(METHOD_GET, ATTR_PORT_COUNTERS);
    m[GMP_DATA + 1] = 1;
    m[mad::off::CLASS_VERSION] = 2;
    assert_eq!(ask(&mut net, &mut gsi, &mut cl, &m), STATUS_BAD_VERSION);
}

#[test]
fn the_client_follows_one_redirect_and_refuses_a_loop() {
    let mut net = fabric();
    let mut gsi = Gsi::new(&net);
    let a = net.dev_index("Hca1").unwrap();
    let b = net.dev_index("Hca3").unwrap();
    let c = net.dev_index("Hca4").unwrap();
    let (lb, lc) = (lid(&net, b), lid(&net, c));
    let mut cl = GmpClient::new(a, 1);
    let qkey = 0x0000_4B1D;

    // B's PMA moves to QP 0x10 (its own Q_Key), same LID.
    let to_qp = Redirect {
        lid: 0,
        sl: 0,
        qp: 0x10,
        qkey,
        pkey: DEFAULT_P_KEY,
    };
    // ... and to QP 0x10 at B's second LID (LMC 1).
    let to_lid = Redirect {
        lid: lb + 1,
        ..to_qp
    };
    for rd in [to_qp, to_lid] {
        gsi.pma_mut(b, 1).unwrap().redirect = Some(rd);
        let redirects = cl.redirects;
        let r = cl.port_counters(&mut net, &mut gsi, lb, 1).unwrap();
        assert_eq!(cl.redirects, redirects + 1, "{rd:?}");
        // The same values a non-redirecting PMA gives: B without the
        // redirect, asked next, reports exactly one more packet each way
        // (the answer to the redirected request; this request).
        gsi.pma_mut(b, 1).unwrap().redirect = None;
        let n = cl.port_counters(&mut net, &mut gsi, lb, 1).unwrap();
        assert_eq!(cl.redirects, redirects + 1, "no redirect followed");
        assert_eq!(n.xmit_pkts, r.xmit_pkts + 1, "{rd:?}");
        assert_eq!(n.rcv_pkts, r.rcv_pkts + 1, "{rd:?}");
        assert_eq!(
            (n.vl15_dropped, n.rcv_errors),
            (r.vl15_dropped, r.rcv_errors)
        );
    }
    // A GMP to the redirect QP with the wrong Q_Key is dropped by B.
    gsi.pma_mut(b, 1).unwrap().redirect = Some(to_qp);
    let mut req = pma_request(METHOD_GET, ATTR_PORT_COUNTERS);
    req[GMP_DATA + 1] = 1;
    let wrong = GmpDest {
        dlid: lb,
        sl: 0,
        qp: 0x10,
        qkey: qkey ^ 1,
        pkey: DEFAULT_P_KEY,
    };
    let e = cl.rpc(&mut net, &mut gsi, wrong, &req).unwrap_err();
    assert!(
        matches!(e.downcast_ref::<GmpError>(), Some(GmpError::Timeout { .. })),
        "{e:#}"
    );
    assert_eq!(gsi.stats.qkey_err, 1);

    // A loop: B redirects to QP1 at its other LID, which redirects again.
    gsi.pma_mut(b, 1).unwrap().redirect = Some(Redirect {
        lid: lb + 1,
        qp: QP1,
        qkey: QP1_Q_KEY,
        ..to_qp
    });
    let e = cl.port_counters(&mut net, &mut gsi, lb, 1).unwrap_err();
    let text = format!("{e:#}");
    assert!(
        matches!(
            e.root_cause().downcast_ref::<GmpError>(),
            Some(GmpError::RedirectLoop { .. })
        ),
        "{text}"
    );
    assert!(text.contains("redirect loop"), "{text}");

    // A dead QP: B sends its requesters to QP 0x20 of C, where nothing
    // listens; the request times out with the redirect named.
    gsi.pma_mut(b, 1).unwrap().redirect = Some(Redirect {
        lid: lc,
        qp: 0x20,
        ..to_qp
    });
    cl.max_cycles = 50_000;
    let e = cl.port_counters(&mut net, &mut gsi, lb, 1).unwrap_err();
    let text = format!("{e:#}");
    assert!(
        text.contains(&format!(
            "no response from LID {lc} QP 0x20 within 50000 cycles, redirected by LID {lb} QP 0x1"
        )),
        "{text}"
    );
    // C's host got the request on QP 0x20 (it reached C through the RTL)
    // and had nobody to give it to.
    assert!(gsi
        .inbox
        .iter()
        .any(|g| g.dev == c && g.dest_qp == 0x20 && !g.is_response()));
}

/// PortCounters of switch `s` port `p` as the IBA defines them, from the
/// switch's RTL registers (docs/fabric.md counter tables; the mapping and
/// its reasons are documented in `vl15::agents::gmp::switch_counters`): external
/// port p: RcvErrors = VcrcErr + LenErr + LverErr + LnhErr + DataDropped +
/// LinkDownDrop (c 1, 2, 3, 4, 6, 7), RcvSwitchRelayErrors = NoRoute +
/// LoopDrop (8, 9), VL15Dropped (5), XmitData/RcvData = TxWords/RxWords
/// (15/14), XmitPkts = TxVl15Pkts + TxDataPkts (12 + 13), RcvPkts = RxPkts
/// (0). Port 0: the SMI bank (ToSma 0, ToSm 1, IcrcErr 2, DrForwarded 6,
/// Vl15Dropped 8, SqPkts 9, NoRoute 12, LoopDrop 13; an SMP is 72 words)
/// plus the GMP bank (RxPkts 0, IcrcErr 1, TxPkts 4, RxWords 6, TxWords 7).
fn sw_from_registers(net: &mut Net, s: usize, p: u8) -> PortCounters {
    let mut r = |a: u16| u64::from(net.read_reg(s, a).unwrap());
    if p != 0 {
        let mut c = |i: u8| r(swreg::ctr(p, i));
        PortCounters {
            rcv_errors: c(1) + c(2) + c(3) + c(4) + c(6) + c(7),
            rcv_sw_relay_errors: c(8) + c(9),
            vl15_dropped: c(5),
            xmit_data: c(15),
            rcv_data: c(14),
            xmit_pkts: c(12) + c(13),
            rcv_pkts: c(0),
        }
    } else {
        let smi: Vec<u64> = (0..16).map(|i| r(swreg::ctr(0, i))).collect();
        let g: Vec<u64> = (0..8).map(|i| r(swreg::ctr0g(i))).collect();
        let smps_in = smi[0] + smi[1] + smi[6];
        PortCounters {
            rcv_errors: smi[2] + g[1],
            rcv_sw_relay_errors: smi[12] + smi[13],
            vl15_dropped: smi[8],
            xmit_data: 72 * smi[9] + g[7],
            rcv_data: 72 * smps_in + g[6],
            xmit_pkts: smi[9] + g[4],
            rcv_pkts: smps_in + g[0],
        }
    }
}

/// The LFT entry of switch `s` for `lid`, read from its LFT registers.
fn lft(net: &mut Net, s: usize, lid: u16) -> u8 {
    let w = net.read_reg(s, swreg::LFT_BASE + lid / 4).unwrap();
    (w >> (8 * (lid % 4))) as u8
}

#[test]
fn a_switch_pma_reports_its_ports_rtl_counters_and_set_clears_them_in_the_rtl() {
    let mut net = fabric();
    let mut gsi = Gsi::new(&net);
    let a = net.dev_index("Hca2").unwrap();
    let s = net.dev_index("Switch1").unwrap();
    let ls = net.devs[s].agent().port_lid(0).unwrap();
    let la = lid(&net, a);
    let n = net.devs[s].nports;
    let mut cl = GmpClient::new(a, 1);
    // The answer of Switch1 to Hca2 leaves by the port its LFT gives Hca2's
    // LID (read from the LFT registers).
    let q = lft(&mut net, s, la);
    assert!((1..=n).contains(&q), "LFT[{la}] = {q}");

    // ClassPortInfo: a switch's PMA announces AllPortSelect (bit 8), as
    // ibsim's switches do; a CA's does not.
    let cpi = |net: &mut Net, gsi: &mut Gsi, cl: &mut GmpClient, l: u16| {
        let r = cl
            .rpc(
                net,
                gsi,
                GmpDest::qp1(l),
                &pma_request(METHOD_GET, ATTR_CLASS_PORT_INFO),
            )
            .unwrap();
        assert_eq!(mad::status(&r), 0);
        ClassPortInfo::decode(&r).cap_mask
    };
    assert_ne!(cpi(&mut net, &mut gsi, &mut cl, ls) & 0x0100, 0);
    let lb = lid(&net, net.dev_index("Hca3").unwrap());
    assert_eq!(cpi(&mut net, &mut gsi, &mut cl, lb) & 0x0100, 0);

    // Every port 0..N: the answer equals the registers read right after
    // it, less what the answer itself added when it left (one GMP of 72
    // words through port 0's gmp_tx and out of port q).
    let mut total = PortCounters::default();
    let mut busy_ports = 0;
    for p in 0..=n {
        let v = cl.port_counters(&mut net, &mut gsi, ls, p).unwrap();
        let mut regs = sw_from_registers(&mut net, s, p);
        if p == 0 || p == q {
            regs.xmit_pkts -= 1;
            regs.xmit_data -= 72;
        }
        assert_eq!(v, regs, "Switch1 port {p}");
        if v.rcv_pkts > 0 {
            busy_ports += 1;
        }
        total += regs;
    }
    // Ports 1, 2, 3, 5 are cabled and carried the SM's bring-up; port 0
    // took the SMPs for the switch's SMA and these GMPs.
    assert_eq!(busy_ports, 5);
    let p0 = sw_from_registers(&mut net, s, 0);
    // (The SM read at least one PortInfo per port of the switch.)
    assert!(p0.rcv_pkts > u64::from(n), "{p0:?}");

    // AllPortSelect: the sum of ports 0..N (ibsim `do_portcounters`), read
    // the same way.
    let all = cl.port_counters(&mut net, &mut gsi, ls, 0xFF).unwrap();
    let mut expect = PortCounters::default();
    for p in 0..=n {
        expect += sw_from_registers(&mut net, s, p);
    }
    expect.xmit_pkts -= 2;
    expect.xmit_data -= 144;
    assert_eq!(all, expect);
    assert!(all.rcv_pkts > total.rcv_pkts, "this request came in since");

    // A PortSelect above N: invalid field (ibsim: ERR_BAD_PARAM).
    let mut m = pma_request(METHOD_GET, ATTR_PORT_COUNTERS);
    m[GMP_DATA + 1] = n + 1;
    let r = cl.rpc(&mut net, &mut gsi, GmpDest::qp1(ls), &m).unwrap();
    assert_eq!(mad::status(&r), STATUS_INVALID_FIELD);

    // Set(PortCounters) of port q, CounterSelect PortXmitPkts |
    // PortRcvPkts (0xC000): exactly RxPkts (c 0), TxVl15Pkts (12) and
    // TxDataPkts (13) of port q are cleared in the RTL. Every other counter
    // of every port keeps its value, apart from what the request (in by one
    // external port, before the clear) and its answer (out by q, after it)
    // add.
    let snap = |net: &mut Net| -> Vec<Vec<u32>> {
        (0..=n)
            .map(|p| {
                (0..16)
                    .map(|c| net.read_reg(s, swreg::ctr(p, c)).unwrap())
                    .collect()
            })
            .collect()
    };
    let gsnap = |net: &mut Net| -> Vec<u32> {
        (0..8)
            .map(|c| net.read_reg(s, swreg::ctr0g(c)).unwrap())
            .collect()
    };
    let before = snap(&mut net);
    let gbefore = gsnap(&mut net);
    let mut set = pma_request(METHOD_SET, ATTR_PORT_COUNTERS);
    set[GMP_DATA + 1] = q;
    set[GMP_DATA + 2..GMP_DATA + 4].copy_from_slice(&0xC000u16.to_be_bytes());
    let r = cl.rpc(&mut net, &mut gsi, GmpDest::qp1(ls), &set).unwrap();
    assert_eq!(mad::status(&r), 0);
    let v = decode_port_counters(&r);
    assert_eq!((v.xmit_pkts, v.rcv_pkts), (0, 0), "cleared, then read");
    let after = snap(&mut net);
    let gafter = gsnap(&mut net);
    // The request came in by the external port whose RxPkts grew.
    let ins: Vec<u8> = (1..=n)
        .filter(|&p| p != q && after[usize::from(p)][0] != before[usize::from(p)][0])
        .collect();
    assert_eq!(ins.len(), 1, "one request, one ingress port");
    for p in 0..=n {
        let (b, x) = (&before[usize::from(p)], &after[usize::from(p)]);
        for c in 0..16u8 {
            let old = b[usize::from(c)];
            let want = match (p == q, ins.contains(&p), c) {
                // Cleared; the answer then left by q.
                (true, _, 0 | 12) => 0,
                (true, _, 13) => 1,
                (true, _, 15) => old + 72,
                // The request: RxPkts, FwdPkts, RxWords.
                (_, true, 0 | 11) => old + 1,
                (_, true, 14) => old + 72,
                _ => old,
            };
            assert_eq!(x[usize::from(c)], want, "Switch1 port {p} counter {c}");
        }
    }
    // Port 0's GMP bank: the request in, the answer out.
    let mut gwant = gbefore.clone();
    for (c, d) in [(0, 1), (3, 1), (4, 1), (6, 72), (7, 72)] {
        gwant[c] += d;
    }
    assert_eq!(gafter, gwant);

    // Set on port 0 with every bit: the SMI and GMP banks behind the
    // PortCounters fields are cleared in the RTL; then only the answer
    // (TxPkts 1, TxWords 72 of the GMP bank) shows.
    let mut set0 = pma_request(METHOD_SET, ATTR_PORT_COUNTERS);
    set0[GMP_DATA + 1] = 0;
    set0[GMP_DATA + 2..GMP_DATA + 4].copy_from_slice(&0xFFFFu16.to_be_bytes());
    let r = cl.rpc(&mut net, &mut gsi, GmpDest::qp1(ls), &set0).unwrap();
    assert_eq!(mad::status(&r), 0);
    assert_eq!(
        sw_from_registers(&mut net, s, 0),
        PortCounters {
            xmit_pkts: 1,
            xmit_data: 72,
            ..PortCounters::default()
        }
    );
}
