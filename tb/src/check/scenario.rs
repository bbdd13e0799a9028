//! The spine regression: named scenarios, each with what it proves, run on a
//! built-in default topology — two RTL CA ports joined by a link: `sm` (the
//! SM driver and an SMA on its host side) and `ca` (an SMA configured as the
//! CA of reference vector V2). Every expectation comes from ibspec or the
//! reference vectors, never from a previous run.

use anyhow::{bail, ensure, Context, Result};

use crate::agents::node_sma::Net;
use crate::agents::sm::{Bench, PortSm};
use crate::agents::sma::{Sma, SmaConfig};
use crate::model::device::{AddressHandle, CaPort, CaPortModel, Counters};
use crate::model::regmap::reg;
use crate::model::trace::{TraceEntry, Waves};
use crate::proto::mad::{self, Mad};
use crate::proto::packet::consts::*;
use crate::proto::packet::{self, NodeInfo, PortInfo};
use crate::proto::pcap::TraceFile;

/// Node indices of the default topology.
pub const SM: usize = 0;
pub const CA: usize = 1;
/// Cycles a beat spends on the link.
pub const LINK_LATENCY: u64 = 4;
/// Cycles with no beat moving after which the fabric counts as idle: longer
/// than the slowest path through one port (a 290-byte SMP at 4 bytes/beat
/// through both buffers is < 200 cycles).
pub const QUIET: u64 = 400;
pub const MAX_CYCLES: u64 = 200_000;

/// The reference vectors, as the tests and scenarios use them.
pub mod vectors {
    pub const V1: &[u8] = include_bytes!("../../../tests/vectors/V1_dr_get_nodeinfo.bin");
    pub const V2: &[u8] = include_bytes!("../../../tests/vectors/V2_dr_getresp_nodeinfo.bin");
    pub const V3: &[u8] = include_bytes!("../../../tests/vectors/V3_qp1_vl0.bin");
    pub const V4: &[u8] = include_bytes!("../../../tests/vectors/V4_qp1_vl3.bin");
}

/// One row of the regression table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Outcome {
    pub scenario: &'static str,
    pub width: u32,
    pub pass: bool,
    pub detail: String,
    pub cycles: u64,
    /// SMPs that crossed a wire.
    pub smps: usize,
    /// Last wire RX beat → first SMA RX beat, cycles (first request).
    pub rx_latency: Option<u64>,
    /// First SMA TX beat presented → first beat into the VL15 TX buffer.
    pub sq_latency: Option<u64>,
    /// First SMA TX beat presented → first wire TX beat, cycles (first response).
    pub tx_latency: Option<u64>,
    #[serde(skip)]
    pub trace: Vec<TraceEntry>,
    /// What each node's scoreboard checked (node order).
    #[serde(skip)]
    pub scoreboards: Vec<crate::check::scoreboard::Stats>,
}

type ScenarioFn = fn(&mut Run) -> Result<()>;

/// A scenario: its name, what it proves, and its body.
pub struct Scenario {
    pub name: &'static str,
    pub proves: &'static str,
    run: ScenarioFn,
}

/// The testplan, as data.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "dr_get_nodeinfo",
        proves: "DR SubnGet(NodeInfo), hop count 1: the SM's request on the wire equals V1 and the CA's GetResp equals V2 byte for byte",
        run: dr_get_nodeinfo,
    },
    Scenario {
        name: "lid_get_nodeinfo",
        proves: "LID-routed SubnGet(NodeInfo) to the CA's LID is answered with SLID/DLID swapped, status 0",
        run: lid_get_nodeinfo,
    },
    Scenario {
        name: "set_portinfo_lmc",
        proves: "DR SubnSet(PortInfo) writes LID and LMC=1 into the RTL; Gets to LID and LID+1 are answered, LID+2 is dropped and counted",
        run: set_portinfo_lmc,
    },
    Scenario {
        name: "bad_vcrc",
        proves: "an SMP with a bad VCRC is dropped whole by the link layer and counted in rx_vcrc_err",
        run: bad_vcrc,
    },
    Scenario {
        name: "bad_icrc",
        proves: "an SMP with a good VCRC but a bad ICRC is dropped by the SMI and counted in smi_icrc_err",
        run: bad_icrc,
    },
    Scenario {
        name: "wrong_dlid",
        proves: "a LID-routed SMP to another LID is dropped and counted in smi_lid_err",
        run: wrong_dlid,
    },
    Scenario {
        name: "vl15_overflow",
        proves: "DEPTH+3 back-to-back SMPs while the SMA is stalled: exactly 3 VL15Dropped, the first DEPTH answered",
        run: vl15_overflow,
    },
    Scenario {
        name: "trap_repress",
        proves: "SubnTrapRepress reaches the SMA and gets no response",
        run: trap_repress,
    },
    Scenario {
        name: "unsupported_attr",
        proves: "SubnGet(SwitchInfo) on a CA is answered with status 0x000C",
        run: unsupported_attr,
    },
    Scenario {
        name: "trap_to_master_sm",
        proves: "a trap from the CA's SMA goes LID-routed to MasterSMLID with SLID = port LID and reaches the SM interface",
        run: trap_to_master_sm,
    },
    Scenario {
        name: "back_to_back",
        proves: "32 SMPs at line rate with an SMA that keeps up: none dropped, all answered, no idle cycle inside a response on the wire",
        run: back_to_back,
    },
    Scenario {
        name: "status_codes",
        proves: "the SMA answers bad ClassVersion 0x0004, unsupported method 0x0008, Set(NodeInfo) 0x000C, bad PortInfo modifier and illegal PortState 0x001C; Init->Armed->Active reaches the RTL",
        run: status_codes,
    },
    Scenario {
        name: "vl15_priority",
        proves: "at a packet boundary on the wire, a waiting VL15 SMP goes before waiting data-VL packets",
        run: vl15_priority,
    },
    Scenario {
        name: "data_vl",
        proves: "GMPs on VL0/VL3 (V3, V4) pass the link checks and reach the data RX port; VL15 responses still leave",
        run: data_vl,
    },
    Scenario {
        name: "gsi_checks",
        proves: "data-VL packets reach the data RX port whole; a bad ICRC, DestQP 0, an SMP class or a wrong Q_Key on QP1 are flagged discard and counted (the Q_Key in Q_KeyViolations), QP 2 passes; word counters = sum of PktLen; RegCtrClearSel clears only the selected counters",
        run: gsi_checks,
    },
];

impl Scenario {
    /// Run the body on a prepared `Run`.
    pub fn execute(&self, r: &mut Run) -> Result<()> {
        (self.run)(r)
    }
}

pub fn find(name: &str) -> Option<&'static Scenario> {
    SCENARIOS.iter().find(|s| s.name == name)
}

/// The state a scenario body works on.
pub struct Run {
    pub width: u32,
    /// The two ports, each a device of the net driven by a [`Bench`].
    pub net: Net,
    pub rx_latency: Option<u64>,
    pub sq_latency: Option<u64>,
    pub tx_latency: Option<u64>,
    pub detail: String,
}

/// LIDs used by the scenarios that give the ports LIDs.
pub const SM_LID: u16 = 1;
pub const CA_LID: u16 = 5;

impl Run {
    /// The default topology: `sm` ↔ `ca`, neither port with a LID yet,
    /// each an `ib_ca_top`.
    pub fn new(width: u32) -> Result<Self> {
        Run::on(width, CaPortModel::Top)
    }

    /// The same with each port a `model` (e.g. port 1 of a one-port
    /// `ib_ca_mp_top`).
    pub fn on(width: u32, model: CaPortModel) -> Result<Self> {
        let mut net = Net::bench();
        let sm_sma = Sma::new(SmaConfig::ca(0, "vl15 SM host"));
        let ca_sma = Sma::new(SmaConfig::vector_v2_ca());
        let sm = net.add_port("sm", model, width, Some(sm_sma), Some(PortSm::new(0x1000)))?;
        let ca = net.add_port::<Sma, PortSm>("ca", model, width, Some(ca_sma), None)?;
        debug_assert_eq!((sm, ca), (SM, CA));
        let driven = |d: usize| net.ca_port(d).map_or(1, |p| p.port_num());
        let (sp, cp) = (driven(SM), driven(CA));
        net.connect((SM, sp), (CA, cp), LINK_LATENCY)?;
        Ok(Run {
            width,
            net,
            rx_latency: None,
            sq_latency: None,
            tx_latency: None,
            detail: String::new(),
        })
    }

    /// Node `n`: its port, SMA and SM driver.
    pub fn node(&mut self, n: usize) -> &mut Bench {
        self.net
            .driver_mut::<Bench>(n)
            .expect("a spine node is a CA port on a bench")
    }
    /// Node `n`'s port.
    pub fn port(&mut self, n: usize) -> &mut CaPort {
        &mut self.node(n).port
    }
    pub fn sma(&mut self, n: usize) -> &mut Sma {
        self.node(n).sma.as_mut().expect("node has an SMA")
    }
    pub fn sm(&mut self) -> &mut PortSm {
        self.node(SM)
            .sm
            .as_mut()
            .expect("sm node has the SM driver")
    }
    /// Read register `addr` of node `n`'s port (one cycle of the net).
    pub fn read_reg(&mut self, n: usize, addr: u8) -> Result<u32> {
        self.net.read_port_reg(n, addr)
    }

    /// Give both ports LIDs the way an SM would have (a PortInfo Set through
    /// each SMA, which writes the RTL registers), MasterSMLID = the SM's
    /// LID.
    pub fn assign_lids(&mut self) -> Result<()> {
        for (n, lid) in [(SM, SM_LID), (CA, CA_LID)] {
            let node = self.node(n);
            let sma = node.sma.as_mut().expect("sma");
            let port_num = node.port.port_num();
            sma.assign(&mut node.port, port_num, lid, 0, SM_LID)?;
        }
        self.net.run(8)?;
        Ok(())
    }

    /// Post an SMP from the SM now.
    pub fn post(&mut self, ah: crate::model::device::AddressHandle, m: Mad) {
        self.sm().post(ah, m);
    }

    pub fn idle(&mut self) -> Result<u64> {
        self.net.run_until_quiet(QUIET, MAX_CYCLES)
    }

    pub fn counters(&mut self, n: usize) -> Result<Counters> {
        self.net.port_counters(n)
    }

    /// The word counters of node `n` as IBA defines them (PortRcvData,
    /// PortXmitData: LRH.PktLen, 4-byte words LRH..ICRC), from the wire
    /// trace: (every packet into `n` that passes the link checks, every
    /// packet out of `n`).
    pub fn expected_words(&self, n: usize) -> (u32, u32) {
        let name = &self.net.devs[n].name;
        let (into, from) = (format!(">{name}"), format!("{name}>"));
        let rx = self
            .net
            .trace
            .iter()
            .filter(|t| t.dir.ends_with(&into))
            .filter_map(|t| link_pktlen(&t.bytes))
            .sum();
        let tx = self
            .net
            .trace
            .iter()
            .filter(|t| t.dir.starts_with(&from) && t.bytes.len() >= 6)
            .map(|t| u32::from(t.bytes[4] & 7) << 8 | u32::from(t.bytes[5]))
            .sum();
        (rx, tx)
    }

    /// `expect_counters` on node `n`'s counters; `rx_words` and `tx_words`,
    /// unless named, must equal `expected_words(n)`.
    pub fn expect_counters(&mut self, n: usize, expect: &[(&str, u32)]) -> Result<()> {
        let c = self.counters(n)?;
        let (rx, tx) = self.expected_words(n);
        let mut e = expect.to_vec();
        for (name, v) in [("rx_words", rx), ("tx_words", tx)] {
            if !e.iter().any(|(k, _)| *k == name) {
                e.push((name, v));
            }
        }
        expect_counters(&c, &e)
    }

    /// Wire packets that left node `from` towards the other node.
    pub fn wire(&self, dir: &str) -> Vec<&TraceEntry> {
        self.net.trace.iter().filter(|t| t.dir == dir).collect()
    }

    /// Inject raw wire bytes into the CA's RX (as from its link partner).
    pub fn inject(&mut self, bytes: &[u8]) {
        self.port(CA).wire_rx.push(bytes, ());
    }

    /// Record the first request's latencies at the CA.
    pub fn measure(&mut self) {
        let node = self
            .net
            .driver::<Bench>(CA)
            .expect("a spine node is a CA port on a bench");
        let port = &node.port;
        let sma = node.sma.as_ref().expect("sma");
        // The wire packet behind the first SMA request: the last one that
        // ended before the request's first beat came out.
        if let Some((first, _)) = sma.arrivals.first() {
            let last = port.rx_last_cycles.iter().filter(|c| **c <= *first).max();
            self.rx_latency = last.map(|l| first - l);
        }
        let first = port.sma_tx.presented.first().copied();
        if let (Some(f), Some(sq)) = (
            first,
            port.sq_starts.iter().find(|c| **c >= first.unwrap_or(0)),
        ) {
            self.sq_latency = Some(sq - f);
        }
        if let (Some(start), Some(tx)) = (
            port.sma_tx.presented.first(),
            self.net.trace.iter().find(|t| {
                t.dir.starts_with("ca>") && t.bytes.first().is_some_and(|b| b >> 4 == 15)
            }),
        ) {
            self.tx_latency = Some(tx.cycle - start);
        }
    }
}

/// PktLen of a wire packet (LRH..VCRC) that passes the link layer's checks
/// (ibspec §1, §3.2: length 4·PktLen + 2, PktLen ≥ 6, LVer 0, LNH 2 or 3,
/// VCRC good), else `None`.
pub fn link_pktlen(b: &[u8]) -> Option<u32> {
    if b.len() < 8 {
        return None;
    }
    let pl = u32::from(b[4] & 7) << 8 | u32::from(b[5]);
    let ok = pl >= 6
        && b.len() == 4 * pl as usize + 2
        && b[0] & 0x0F == 0
        && b[1] & 3 >= 2
        && crate::proto::crc::check_wire(b).is_some_and(|(_, vcrc)| vcrc);
    ok.then_some(pl)
}

/// Expect `counters` to be zero except the named ones, which must have the
/// given values.
pub fn expect_counters(c: &Counters, expect: &[(&str, u32)]) -> Result<()> {
    for (name, v) in &c.0 {
        let want = expect
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, w)| *w);
        ensure!(
            *v == want,
            "counter {name} = {v}, expected {want} (all: {})",
            c.nonzero()
        );
    }
    Ok(())
}

/// Idle insertion on every source and backpressure on every sink of every
/// port, from `seed`: what is delivered must not change, only when.
pub fn stress(net: &mut Net, seed: u64) {
    use crate::model::stream::Pattern::Random;
    for n in 0..net.devs.len() {
        let base = seed.wrapping_mul(1000) + 10 * n as u64;
        let pat = |percent, k| Random {
            percent,
            seed: base + k,
        };
        let Some(p) = net.ca_port_mut(n) else {
            continue;
        };
        p.wire_rx.set_pattern(pat(70, 0));
        p.wire_tx.set_pattern(pat(60, 1));
        p.dtx.set_pattern(pat(50, 2));
        p.sma_rx.set_pattern(pat(40, 3));
        p.sm_rx.set_pattern(pat(50, 4));
        p.sma_tx.set_pattern(pat(50, 5));
        p.sm_tx.set_pattern(pat(30, 6));
        p.trap_tx.set_pattern(pat(50, 7));
    }
}

/// Run one scenario at one width.
pub fn run(s: &Scenario, width: u32) -> Outcome {
    run_with(s, width, None)
}

/// Run one scenario at one width, under `stress(seed)` when given.
pub fn run_with(s: &Scenario, width: u32, stress_seed: Option<u64>) -> Outcome {
    run_on(s, width, stress_seed, CaPortModel::Top)
}

/// [`run_with`] with both ports a `model`.
pub fn run_on(s: &Scenario, width: u32, stress_seed: Option<u64>, model: CaPortModel) -> Outcome {
    run_logged(s, width, stress_seed, model, &mut None, None)
}

/// [`run_on`], writing every packet into `log` when there is one, on
/// interfaces named `<scenario>.w<width>.<node>[<port>]`.
pub fn run_logged(
    s: &Scenario,
    width: u32,
    stress_seed: Option<u64>,
    model: CaPortModel,
    log: &mut Option<TraceFile>,
    waves: Option<&mut Waves>,
) -> Outcome {
    let mut r = match Run::on(width, model).and_then(|mut r| {
        if let Some(seed) = stress_seed {
            stress(&mut r.net, seed);
        }
        if let Some(w) = waves {
            for n in 0..r.net.devs.len() {
                let name = format!("{}.w{width}.{}", s.name, r.net.devs[n].name);
                w.open(&name, r.net.dut_mut(n))?;
            }
        }
        if let Some(l) = log.take() {
            r.net.log_wire_as(l, &format!("{}.w{width}.", s.name));
        }
        // both ports under the reference model's scoreboard
        crate::check::scoreboard::attach_to::<Sma, PortSm>(&mut r.net, SM)?;
        crate::check::scoreboard::attach_to::<Sma, PortSm>(&mut r.net, CA)?;
        Ok(r)
    }) {
        Ok(r) => r,
        Err(e) => {
            return Outcome {
                scenario: s.name,
                width,
                pass: false,
                detail: format!("{e:#}"),
                cycles: 0,
                smps: 0,
                rx_latency: None,
                sq_latency: None,
                tx_latency: None,
                trace: Vec::new(),
                scoreboards: Vec::new(),
            }
        }
    };
    let start = r.net.cycle;
    let res = (s.run)(&mut r).with_context(|| format!("scenario {} at DATA_W {width}", s.name));
    r.measure();
    let cycles = r.net.cycle - start;
    let res = res.and_then(|()| {
        r.net
            .check_scoreboards::<Sma, PortSm>(QUIET, MAX_CYCLES)
            .with_context(|| format!("scenario {} at DATA_W {width}", s.name))
    });
    *log = r.net.take_wire_log();
    Outcome {
        scenario: s.name,
        width,
        pass: res.is_ok(),
        detail: match res {
            Ok(()) => r.detail.clone(),
            Err(e) => format!("{e:#}"),
        },
        cycles,
        smps: r
            .net
            .trace
            .iter()
            .filter(|t| t.bytes.first().is_some_and(|b| b >> 4 == 15))
            .count(),
        rx_latency: r.rx_latency,
        sq_latency: r.sq_latency,
        tx_latency: r.tx_latency,
        scoreboards: (0..r.net.devs.len())
            .filter_map(|n| r.net.driver::<Bench>(n)?.checker.as_ref())
            .filter_map(|c| {
                c.as_any()
                    .downcast_ref::<crate::check::scoreboard::Scoreboard>()
            })
            .map(|s| s.stats.clone())
            .collect(),
        trace: r.net.trace,
    }
}

// ---------------------------------------------------------------------------
// Scenario bodies
// ---------------------------------------------------------------------------

/// The NodeInfo a GetResp carries.
fn node_info_of(m: &Mad) -> Result<NodeInfo> {
    NodeInfo::decode(mad::data(m)).context("decoding NodeInfo")
}

fn response(r: &mut Run, tid: u64) -> Result<Mad> {
    r.sm()
        .response(tid)
        .copied()
        .with_context(|| format!("no response to TID {tid:#x}"))
}

fn dr_get_nodeinfo(r: &mut Run) -> Result<()> {
    // V1: TID 0x12345678, InitialPath[1] = 1, hop count 1 (ibspec §3.3).
    let m = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 0x1234_5678, &[1]);
    r.post(AddressHandle::directed(), m);
    r.idle()?;
    let out = r.wire("sm>ca");
    let back = r.wire("ca>sm");
    ensure!(
        out.len() == 1 && back.len() == 1,
        "expected one SMP each way, got {} and {}",
        out.len(),
        back.len()
    );
    ensure!(
        out[0].bytes == vectors::V1,
        "request on the wire differs from V1: {}",
        diff(&out[0].bytes, vectors::V1)
    );
    ensure!(
        back[0].bytes == vectors::V2,
        "response on the wire differs from V2: {}",
        diff(&back[0].bytes, vectors::V2)
    );
    let resp = response(r, 0x1234_5678)?;
    let ni = node_info_of(&resp)?;
    ensure!(
        ni.node_guid == 0x0002_c903_0000_1230 && ni.local_port_num == 1,
        "NodeInfo {ni:?}"
    );
    // Delivered to the SM with the hop pointer back at 0 (ibspec §5, D=1 hp=1 → 0).
    ensure!(
        resp[mad::off::HOP_PTR] == 0,
        "hop pointer at the SM = {}",
        resp[mad::off::HOP_PTR]
    );
    r.expect_counters(
        CA,
        &[
            ("rx_pkts", 1),
            ("smi_to_sma", 1),
            ("sq_pkts", 1),
            ("tx_vl15_pkts", 1),
        ],
    )?;
    r.expect_counters(
        SM,
        &[
            ("rx_pkts", 1),
            ("smi_to_sm", 1),
            ("sq_pkts", 1),
            ("tx_vl15_pkts", 1),
        ],
    )?;
    Ok(())
}

fn lid_get_nodeinfo(r: &mut Run) -> Result<()> {
    r.assign_lids()?;
    let tid = r.sm().tid();
    r.post(
        AddressHandle::lid_routed(CA_LID),
        mad::request(CLASS_SUBN_LID, METHOD_GET, ATTR_NODE_INFO, 0, tid),
    );
    r.idle()?;
    let resp = response(r, tid)?;
    ensure!(
        mad::status(&resp) == 0,
        "status {:#06x}",
        mad::status(&resp)
    );
    ensure!(
        node_info_of(&resp)?.port_guid == 0x0002_c903_0000_1231,
        "PortGUID"
    );
    let back = r.wire("ca>sm");
    ensure!(back.len() == 1, "{} responses on the wire", back.len());
    let p = packet::Packet::parse(&back[0].bytes).context("parsing the response")?;
    ensure!(
        p.lrh.dlid == SM_LID && p.lrh.slid == CA_LID,
        "LRH {:?}",
        p.lrh
    );
    ensure!(
        p.lrh.vl == 15 && p.bth.dest_qp == 0 && p.deth.src_qp == 0,
        "headers {:?} {:?}",
        p.lrh,
        p.bth
    );
    ensure!(p.icrc_ok() && p.vcrc_ok(), "CRCs of the response");
    Ok(())
}

fn set_portinfo_lmc(r: &mut Run) -> Result<()> {
    r.assign_lids()?;
    // Read the CA's PortInfo by DR, change LID/LMC, write it back.
    let tid = r.sm().tid();
    r.post(
        AddressHandle::directed(),
        mad::dr_request(METHOD_GET, ATTR_PORT_INFO, 0, tid, &[1]),
    );
    r.idle()?;
    let mut pi = PortInfo::decode(mad::data(&response(r, tid)?))?;
    let new_lid = 0x10;
    pi.lid = new_lid;
    pi.lmc = 1;
    pi.port_state = PORT_STATE_NO_CHANGE;
    let tid = r.sm().tid();
    let mut set = mad::dr_request(METHOD_SET, ATTR_PORT_INFO, 0, tid, &[1]);
    mad::data_mut(&mut set).copy_from_slice(&pi.encode());
    r.post(AddressHandle::directed(), set);
    r.idle()?;
    let resp = response(r, tid)?;
    ensure!(
        mad::status(&resp) == 0,
        "Set status {:#06x}",
        mad::status(&resp)
    );
    let now = PortInfo::decode(mad::data(&resp))?;
    ensure!(
        now.lid == new_lid && now.lmc == 1,
        "PortInfo after Set: lid {:#x} lmc {}",
        now.lid,
        now.lmc
    );
    ensure!(
        r.read_reg(CA, reg::PORT_LID)? == u32::from(new_lid),
        "RTL PORT_LID"
    );
    ensure!(r.read_reg(CA, reg::PORT_LMC)? == 1, "RTL PORT_LMC");
    // LID-routed Gets to LID, LID+1 (answered: LMC 1 owns two LIDs) and LID+2 (not ours).
    let mut tids = Vec::new();
    for dlid in [new_lid, new_lid + 1, new_lid + 2] {
        let tid = r.sm().tid();
        tids.push((dlid, tid));
        r.post(
            AddressHandle::lid_routed(dlid),
            mad::request(CLASS_SUBN_LID, METHOD_GET, ATTR_NODE_INFO, 0, tid),
        );
    }
    r.idle()?;
    for (dlid, tid) in &tids[..2] {
        let _ = response(r, *tid).with_context(|| format!("Get to LID {dlid:#x}"))?;
    }
    ensure!(r.sm().response(tids[2].1).is_none(), "LID+2 was answered");
    // Each response comes from the DLID the request was sent to.
    let back: Vec<u16> = r
        .wire("ca>sm")
        .iter()
        .filter_map(|t| packet::Packet::parse(&t.bytes).ok())
        .filter(|p| p.lrh.vl == 15 && mad::class(&p.mad) == CLASS_SUBN_LID)
        .map(|p| p.lrh.slid)
        .collect();
    ensure!(back == [new_lid, new_lid + 1], "response SLIDs {back:x?}");
    let c = r.counters(CA)?;
    ensure!(
        c.get("smi_lid_err") == 1,
        "smi_lid_err {}",
        c.get("smi_lid_err")
    );
    Ok(())
}

/// V1 as the CA would receive it, with `f` applied and the VCRC recomputed.
fn v1_with(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut p = vectors::V1.to_vec();
    f(&mut p);
    p.truncate(p.len() - 2);
    crate::proto::crc::append_vcrc(&mut p);
    p
}

fn bad_vcrc(r: &mut Run) -> Result<()> {
    let mut p = vectors::V1.to_vec();
    p[289] ^= 0x01;
    r.inject(&p);
    r.idle()?;
    ensure!(
        r.wire("ca>sm").is_empty(),
        "the CA answered a packet with a bad VCRC"
    );
    r.expect_counters(CA, &[("rx_pkts", 1), ("rx_vcrc_err", 1)])
}

fn bad_icrc(r: &mut Run) -> Result<()> {
    let p = v1_with(|p| p[284] ^= 0x80);
    r.inject(&p);
    r.idle()?;
    ensure!(
        r.wire("ca>sm").is_empty(),
        "the CA answered a packet with a bad ICRC"
    );
    r.expect_counters(CA, &[("rx_pkts", 1), ("smi_icrc_err", 1)])
}

fn wrong_dlid(r: &mut Run) -> Result<()> {
    r.assign_lids()?;
    let tid = r.sm().tid();
    r.post(
        AddressHandle::lid_routed(CA_LID + 2),
        mad::request(CLASS_SUBN_LID, METHOD_GET, ATTR_NODE_INFO, 0, tid),
    );
    r.idle()?;
    ensure!(
        r.sm().response(tid).is_none(),
        "answered a SMP to another LID"
    );
    r.expect_counters(CA, &[("rx_pkts", 1), ("smi_lid_err", 1)])
}

/// A LID-routed SMP on the wire from the SM's LID to the CA's, built by the
/// testbench's own packet model.
fn lid_smp(m: &Mad, dlid: u16, slid: u16, psn: u32) -> Vec<u8> {
    packet::Packet::smp_bytes(VL15, 0, dlid, slid, psn, *m)
}

fn vl15_overflow(r: &mut Run) -> Result<()> {
    r.assign_lids()?;
    let depth = r.read_reg(CA, reg::RX_DEPTH)? as usize;
    let n = depth + 3;
    // Stall the SMA for far longer than the burst takes to arrive.
    let burst_cycles = (n as u64 + 1) * 300;
    let now = r.net.cycle;
    r.sma(CA).cfg.stall_until = now + burst_cycles;
    let mut tids = Vec::new();
    for i in 0..n {
        let tid = 0x5000 + i as u64;
        tids.push(tid);
        let m = mad::request(CLASS_SUBN_LID, METHOD_GET, ATTR_NODE_INFO, 0, tid);
        r.inject(&lid_smp(&m, CA_LID, SM_LID, i as u32));
    }
    r.net.run(burst_cycles)?;
    r.idle()?;
    let answered: Vec<u64> = r
        .wire("ca>sm")
        .iter()
        .filter_map(|t| packet::Packet::parse(&t.bytes).ok())
        .map(|p| mad::tid(&p.mad))
        .collect();
    ensure!(
        answered == tids[..depth],
        "answered TIDs {answered:x?}, expected the first {depth} of {tids:x?}"
    );
    r.expect_counters(
        CA,
        &[
            ("rx_pkts", n as u32),
            ("vl15_dropped", 3),
            ("smi_to_sma", depth as u32),
            ("sq_pkts", depth as u32),
            ("tx_vl15_pkts", depth as u32),
        ],
    )?;
    r.detail = format!("depth {depth}, {n} sent, 3 dropped");
    Ok(())
}

fn trap_repress(r: &mut Run) -> Result<()> {
    r.assign_lids()?;
    let tid = r.sm().tid();
    r.post(
        AddressHandle::lid_routed(CA_LID),
        mad::request(CLASS_SUBN_LID, METHOD_TRAP_REPRESS, ATTR_NOTICE, 0, tid),
    );
    r.idle()?;
    ensure!(r.wire("ca>sm").is_empty(), "TrapRepress was answered");
    ensure!(
        r.sma(CA).repressed == [tid],
        "SMA saw {:x?}",
        r.sma(CA).repressed
    );
    r.expect_counters(CA, &[("rx_pkts", 1), ("smi_to_sma", 1)])
}

fn unsupported_attr(r: &mut Run) -> Result<()> {
    let tid = r.sm().tid();
    r.post(
        AddressHandle::directed(),
        mad::dr_request(METHOD_GET, ATTR_SWITCH_INFO, 0, tid, &[1]),
    );
    r.idle()?;
    let resp = response(r, tid)?;
    ensure!(
        mad::status(&resp) == STATUS_ATTR_UNSUPPORTED,
        "status {:#06x}",
        mad::status(&resp)
    );
    Ok(())
}

fn trap_to_master_sm(r: &mut Run) -> Result<()> {
    r.assign_lids()?;
    // Trap 144 (capability change), generic, type Info, from a CA (ibspec §8).
    let mut m = mad::request(CLASS_SUBN_LID, METHOD_TRAP, ATTR_NOTICE, 0, 0x7777);
    let d = mad::data_mut(&mut m);
    d[0] = 0x80 | 4;
    d[3] = 1;
    d[4..6].copy_from_slice(&144u16.to_be_bytes());
    d[6..8].copy_from_slice(&CA_LID.to_be_bytes());
    r.port(CA).trap_tx.push(&m, ());
    r.idle()?;
    let back = r.wire("ca>sm");
    ensure!(back.len() == 1, "{} packets from the CA", back.len());
    let p = packet::Packet::parse(&back[0].bytes)?;
    ensure!(
        p.lrh.dlid == SM_LID && p.lrh.slid == CA_LID && p.lrh.vl == 15,
        "LRH {:?}",
        p.lrh
    );
    let got = r.sm().unsolicited.clone();
    ensure!(
        got.len() == 1 && mad::method(&got[0].0) == METHOD_TRAP,
        "SM got {} deliveries",
        got.len()
    );
    ensure!(got[0].1.slid == CA_LID, "trap meta {:?}", got[0].1);
    Ok(())
}

fn back_to_back(r: &mut Run) -> Result<()> {
    r.assign_lids()?;
    r.sma(CA).cfg.latency = 0;
    let n = 32usize;
    for i in 0..n {
        let m = mad::request(
            CLASS_SUBN_LID,
            METHOD_GET,
            ATTR_NODE_INFO,
            0,
            0x9000 + i as u64,
        );
        r.inject(&lid_smp(&m, CA_LID, SM_LID, i as u32));
    }
    r.idle()?;
    let c = r.counters(CA)?;
    ensure!(
        c.get("vl15_dropped") == 0,
        "{} dropped",
        c.get("vl15_dropped")
    );
    let back = r.wire("ca>sm");
    ensure!(back.len() == n, "{} of {n} answered", back.len());
    let gaps = r
        .port(CA)
        .wire_tx
        .packets
        .iter()
        .map(|p| p.gaps)
        .sum::<u64>();
    ensure!(gaps == 0, "{gaps} idle cycles inside responses on the wire");
    r.detail = format!("{n} SMPs, 0 dropped, 0 gaps");
    Ok(())
}

/// A DR request to the CA (hop count 1) from the SM; returns the response.
fn dr_exchange(
    r: &mut Run,
    method: u8,
    attr: u16,
    modifier: u32,
    edit: impl FnOnce(&mut Mad),
) -> Result<Mad> {
    let tid = r.sm().tid();
    let mut m = mad::dr_request(method, attr, modifier, tid, &[1]);
    edit(&mut m);
    r.post(AddressHandle::directed(), m);
    r.idle()?;
    response(r, tid)
}

fn status_codes(r: &mut Run) -> Result<()> {
    let expect = |what: &str, m: &Mad, want: u16| -> Result<()> {
        ensure!(
            mad::method(m) == METHOD_GET_RESP,
            "{what}: method {:#04x}",
            mad::method(m)
        );
        ensure!(
            mad::status(m) == want,
            "{what}: status {:#06x}, expected {want:#06x}",
            mad::status(m)
        );
        Ok(())
    };
    let m = dr_exchange(r, METHOD_GET, ATTR_NODE_INFO, 0, |m| {
        m[mad::off::CLASS_VERSION] = 2
    })?;
    expect("ClassVersion 2", &m, STATUS_BAD_VERSION)?;
    let m = dr_exchange(r, METHOD_SEND, ATTR_NODE_INFO, 0, |_| {})?;
    expect("method Send", &m, STATUS_METHOD_UNSUPPORTED)?;
    let m = dr_exchange(r, METHOD_SET, ATTR_NODE_INFO, 0, |_| {})?;
    expect("Set(NodeInfo)", &m, STATUS_ATTR_UNSUPPORTED)?;
    let m = dr_exchange(r, METHOD_GET, ATTR_PORT_INFO, 2, |_| {})?;
    expect(
        "Get(PortInfo) of port 2 on a 1-port CA",
        &m,
        STATUS_INVALID_FIELD,
    )?;

    // PortState: Init -> Active skips Armed: invalid, nothing changes.
    let cur = PortInfo::decode(mad::data(&dr_exchange(
        r,
        METHOD_GET,
        ATTR_PORT_INFO,
        0,
        |_| {},
    )?))?;
    ensure!(
        cur.port_state == PORT_STATE_INIT,
        "initial PortState {}",
        cur.port_state
    );
    let with_state = |state: u8| {
        let mut pi = cur;
        pi.port_state = state;
        move |m: &mut Mad| mad::data_mut(m).copy_from_slice(&pi.encode())
    };
    let m = dr_exchange(
        r,
        METHOD_SET,
        ATTR_PORT_INFO,
        0,
        with_state(PORT_STATE_ACTIVE),
    )?;
    expect("Set PortState Active from Init", &m, STATUS_INVALID_FIELD)?;
    ensure!(
        PortInfo::decode(mad::data(&m))?.port_state == PORT_STATE_INIT,
        "state changed"
    );
    ensure!(
        r.read_reg(CA, reg::PORT_STATE)? == u32::from(PORT_STATE_INIT),
        "RTL PortState changed"
    );
    // Init -> Armed -> Active, one step at a time.
    for state in [PORT_STATE_ARMED, PORT_STATE_ACTIVE] {
        let m = dr_exchange(r, METHOD_SET, ATTR_PORT_INFO, 0, with_state(state))?;
        expect("Set PortState one step up", &m, 0)?;
        ensure!(
            PortInfo::decode(mad::data(&m))?.port_state == state,
            "PortInfo state"
        );
        ensure!(
            r.read_reg(CA, reg::PORT_STATE)? == u32::from(state),
            "RTL PortState"
        );
    }
    Ok(())
}

fn vl15_priority(r: &mut Run) -> Result<()> {
    // Data-VL packets as the host hands them to the port: LRH..ICRC.
    let v3 = &vectors::V3[..vectors::V3.len() - 2];
    let ca = &mut r.port(CA);
    ca.wire_tx.hold = true;
    ca.dtx.push(v3, ());
    r.net.run(50)?;
    // The first data packet is now committed to the wire; two more wait.
    let ca = &mut r.port(CA);
    ca.dtx.push(v3, ());
    ca.dtx.push(v3, ());
    r.inject(vectors::V1);
    // Long enough for V1 to be answered into the VL15 TX buffer.
    r.net.run(1500)?;
    r.port(CA).wire_tx.hold = false;
    r.idle()?;
    let vls: Vec<u8> = r.wire("ca>sm").iter().map(|t| t.bytes[0] >> 4).collect();
    ensure!(
        vls == [0, 15, 0, 0],
        "VLs on the wire in order {vls:?}, expected [0, 15, 0, 0]"
    );
    let back = r.wire("ca>sm");
    ensure!(back[1].bytes == vectors::V2, "the VL15 packet is not V2");
    ensure!(
        back[0].bytes == vectors::V3 && back[2].bytes == vectors::V3,
        "data packets changed (VCRC appended?)"
    );
    r.expect_counters(
        CA,
        &[
            ("rx_pkts", 1),
            ("smi_to_sma", 1),
            ("sq_pkts", 1),
            ("tx_vl15_pkts", 1),
            ("tx_data_pkts", 3),
        ],
    )
}

fn data_vl(r: &mut Run) -> Result<()> {
    r.inject(vectors::V3);
    r.inject(vectors::V4);
    r.inject(vectors::V1);
    r.idle()?;
    let got: Vec<Vec<u8>> = r
        .port(CA)
        .drx
        .packets
        .iter()
        .map(|p| p.bytes.clone())
        .collect();
    ensure!(
        got == [vectors::V3.to_vec(), vectors::V4.to_vec()],
        "data RX got {} packets",
        got.len()
    );
    ensure!(
        r.port(CA).drx.packets.iter().all(|p| !p.bad),
        "a good GMP was flagged bad"
    );
    let back = r.wire("ca>sm");
    ensure!(
        back.len() == 1 && back[0].bytes == vectors::V2,
        "V1 among GMPs was not answered with V2"
    );
    // V3 and V4 are good GMPs (gsi_rx_check); three 72-word packets in, the
    // 72-word response out.
    r.expect_counters(
        CA,
        &[
            ("rx_pkts", 3),
            ("rx_data_pkts", 2),
            ("gsi_gmps", 2),
            ("smi_to_sma", 1),
            ("sq_pkts", 1),
            ("tx_vl15_pkts", 1),
            ("rx_words", 3 * 72),
            ("tx_words", 72),
        ],
    )
}

fn gsi_checks(r: &mut Run) -> Result<()> {
    use crate::proto::crc::{append_crcs, append_vcrc};
    // V3 with its header/MAD changed and both CRCs recomputed.
    let v3_with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut p = vectors::V3[..284].to_vec();
        f(&mut p);
        append_crcs(&mut p);
        p
    };
    let mut bad_icrc = vectors::V3[..288].to_vec();
    bad_icrc[100] ^= 0x40;
    append_vcrc(&mut bad_icrc);
    let sent: Vec<(Vec<u8>, bool)> = vec![
        (vectors::V3.to_vec(), false),          // good GMP
        (bad_icrc, true),                       // ICRC mismatch
        (v3_with(&|p| p[15] = 0), true),        // DestQP 0 on VL0
        (v3_with(&|p| p[28 + 1] = 0x81), true), // SMP class on QP1
        (v3_with(&|p| p[21] = 0x00), true),     // Q_Key 0x80000000
        (v3_with(&|p| p[15] = 2), false),       // QP 2: ICRC only
    ];
    for (p, _) in &sent {
        r.inject(p);
    }
    r.inject(vectors::V1);
    r.idle()?;
    let got: Vec<(Vec<u8>, bool)> = r
        .port(CA)
        .drx
        .packets
        .iter()
        .map(|p| (p.bytes.clone(), p.bad))
        .collect();
    ensure!(
        got == sent,
        "data RX got {:?}, expected the sent packets with discard {:?}",
        got.iter().map(|(_, b)| *b).collect::<Vec<_>>(),
        sent.iter().map(|(_, b)| *b).collect::<Vec<_>>()
    );
    ensure!(
        r.wire("ca>sm").len() == 1,
        "V1 among the data packets was not answered"
    );
    r.expect_counters(
        CA,
        &[
            ("rx_pkts", 7),
            ("rx_data_pkts", 6),
            ("gsi_gmps", 1),
            ("data_icrc_err", 1),
            ("gsi_bad_hdr", 2),
            ("qkey_viol", 1), // PortInfo Q_KeyViolations, not a bad header
            ("pkey_viol", 0), // P_Key 0xFFFF matches the default table
            ("smi_to_sma", 1),
            ("sq_pkts", 1),
            ("tx_vl15_pkts", 1),
            ("rx_words", 7 * 72),
            ("tx_words", 72),
        ],
    )?;
    // PerfMgt Set(PortCounters) style: clear only the GSI counters and the
    // received words.
    let sel = [
        "data_icrc_err",
        "gsi_bad_hdr",
        "qkey_viol",
        "gsi_gmps",
        "rx_words",
    ]
    .iter()
    .map(|n| reg::COUNTERS.iter().position(|c| c == n).expect("counter"))
    .fold(0u32, |a, i| a | 1 << i);
    r.port(CA).write_reg(reg::CTR_CLEAR_SEL, sel);
    let c = r.counters(CA)?;
    expect_counters(
        &c,
        &[
            ("rx_pkts", 7),
            ("rx_data_pkts", 6),
            ("smi_to_sma", 1),
            ("sq_pkts", 1),
            ("tx_vl15_pkts", 1),
            ("tx_words", 72),
        ],
    )
}

/// A short description of where two byte strings first differ.
pub fn diff(a: &[u8], b: &[u8]) -> String {
    if a.len() != b.len() {
        return format!("length {} vs {}", a.len(), b.len());
    }
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => format!(
            "first difference at byte {i}: {:#04x} vs {:#04x}",
            a[i], b[i]
        ),
        None => "equal".into(),
    }
}

/// Run the named scenarios (all when empty) at the given widths.
pub fn regress(names: &[String], widths: &[u32], model: CaPortModel) -> Result<Vec<Outcome>> {
    regress_logged(names, widths, model, &mut None, None)
}

/// [`regress`], writing every packet of every run into `log` when there
/// is one ([`run_logged`]).
pub fn regress_logged(
    names: &[String],
    widths: &[u32],
    model: CaPortModel,
    log: &mut Option<TraceFile>,
    mut waves: Option<&mut Waves>,
) -> Result<Vec<Outcome>> {
    let mut out = Vec::new();
    let list: Vec<&Scenario> = if names.is_empty() {
        SCENARIOS.iter().collect()
    } else {
        names
            .iter()
            .map(|n| {
                find(n).ok_or_else(|| {
                    crate::proto::InputError(format!(
                        "--scenario {n}: no such scenario (vl15 regress --list names them)"
                    ))
                    .into()
                })
            })
            .collect::<Result<_>>()?
    };
    for w in widths {
        for s in &list {
            out.push(run_logged(s, *w, None, model, log, waves.as_deref_mut()));
        }
    }
    if out.is_empty() {
        bail!("no scenario ran");
    }
    Ok(out)
}
