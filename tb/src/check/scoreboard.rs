//! A scoreboard for one RTL CA port: it watches a [`CaPort`] through its
//! [`Tap`] (a copy of everything that crosses the port's boundary), predicts
//! with [`crate::check::refmodel::ca::CaModel`] what every packet the port takes in
//! must become, and checks what the RTL does against it transaction by
//! transaction, byte for byte, per output port in order: the SMA and SM
//! receive interfaces (MAD and sideband), the data RX port (bytes and the
//! discard flag) and the wire (LRH..VCRC; VL15 per send-engine source in
//! order, data VLs in order). The counters, read over the register bus, are
//! checked against the sum of the predicted deltas.
//!
//! Two ways in:
//! - any test that steps a port itself opts in with [`Scoreboard::attach`]
//!   and calls [`Scoreboard::observe`] after every step ([`attach_to`] makes
//!   it the checker of a CA port on a bench (`crate::model::bench`), which
//!   does this; the spine regression turns it on for every scenario);
//! - [`CaBench`] is a net of one CA port, its wire driven by the testbench,
//!   with a scoreboard, and adds the fault episodes (reset and link down
//!   mid-packet) that `crate::check::faults` uses.
//!
//! Where only the RTL's timing decides (the exact cycle at which the VL15 RX
//! buffer counts as full, ibspec §11 "an SMP arriving to a full VL15 buffer
//! is discarded"), the scoreboard works out from what it has seen whether the
//! buffer was full for the whole arrival of the SMP (then the model must
//! drop it), had a free slot for the whole arrival (then the model must take
//! it), or changed during it; only in the last case does it accept either
//! choice and follow what the RTL did (counted in `Stats::ambiguous_full`).
//! An SMP's arrival is [first wire beat, last wire beat + DECIDE_SLACK];
//! its slot is taken for good when it comes out of the SMA/SM interface
//! (last beat) or, for a MAD for the SM without a WQE, after it could have
//! been read out behind the MADs before it.

use std::collections::{BTreeMap, VecDeque};

use anyhow::{bail, Result};

use crate::agents::node_sma::Net;
use crate::agents::sm::PortSm;
use crate::agents::sma::Sma;
use crate::check::refmodel::ca::{CaModel, PortConfig, RxEnv, RxOut, TxIn, TxOut, TxSource};
use crate::check::refmodel::{Ctr, CtrDelta, NUM_CTRS};
use crate::model::device::{AddressHandle, CaPort, CaPortModel, SmiMeta, Tap, TxPortIn};
use crate::model::regmap::reg;
use crate::model::stream::{beat_bytes, Received};
use crate::model::trace::PortLog;
use crate::model::twin::Fidelity;
use crate::proto::mad::Mad;
use crate::proto::packet::consts::*;
use crate::proto::pcap::{port_name, TraceFile};

/// Cycles after an SMP's last wire beat by which the RTL has decided whether
/// the VL15 RX buffer had room for it (the link RX register stage, the SMI
/// receive engine's end of packet and the buffer's commit: a few cycles; 8
/// leaves margin). The decision window of an SMP is [first wire beat, last
/// wire beat + DECIDE_SLACK].
pub const DECIDE_SLACK: u64 = 8;

/// Cycles after the link comes up during which a packet the send engine or
/// the data TX port takes may still be discarded by the link gate (it
/// decides when the packet's first beat reaches the wire: a few register
/// stages, behind at most one packet being discarded at a beat per cycle).
pub const LINK_RISE_GUARD: u64 = 160;

/// Counters the scoreboard keeps.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Stats {
    /// Wire packets handed to the port's RX by the testbench.
    pub injected: u64,
    /// Injected packets by tag (fault class or "good").
    pub by_tag: BTreeMap<String, u64>,
    /// Predicted receive verdicts (the check that rejected, or "accept").
    pub by_verdict: BTreeMap<String, u64>,
    /// MADs delivered on the SMA / SM interfaces and packets on data RX, as predicted.
    pub to_sma: u64,
    pub to_sm: u64,
    pub to_drx: u64,
    /// Packets on the wire, as predicted.
    pub wire_tx: u64,
    /// SMPs whose arrival overlapped a change of the VL15 RX buffer's fill
    /// between full and not full (either choice is spec-conformant).
    pub ambiguous_full: u64,
    /// SMPs the model dropped because the buffer was full for their whole arrival.
    pub certain_full: u64,
    /// Packets for the wire that a link-down period discarded.
    pub tx_gated: u64,
    /// Expectations dropped by a reset of the port.
    pub lost_to_reset: u64,
    /// Output bytes of packets cut by a reset (never counted as delivered).
    pub cut_by_reset: u64,
    /// Mismatches between the RTL and the model.
    pub mismatches: u64,
}

/// Where a VL15 MAD in the RX buffer goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dest {
    Sma,
    Sm,
    /// A MAD for the SM with no WQE: read out and discarded.
    Discard,
}

/// One MAD the model put into the VL15 RX buffer.
#[derive(Debug, Clone)]
struct Vl15Entry {
    dest: Dest,
    meta: SmiMeta,
    mad: Mad,
    /// Ambiguous buffer fill: (counters if taken, counters if dropped).
    alt: Option<(CtrDelta, CtrDelta)>,
    /// The cycle its last wire beat arrived.
    arrived: u64,
    /// The window in which its slot was freed, once known.
    exit: Option<(u64, u64)>,
    seen: bool,
    tag: &'static str,
}

/// A packet arrived whole, waiting for `last + DECIDE_SLACK`.
#[derive(Debug, Clone)]
struct Arrived {
    bytes: Vec<u8>,
    tag: &'static str,
    first: u64,
    last: u64,
    /// The port configuration when its last beat arrived (the RTL judges
    /// the packet within a few cycles of it; changes of state are made
    /// away from packet ends).
    cfg: PortConfig,
}

/// One packet handed to the send engine or the data TX port.
#[derive(Debug, Clone)]
struct TxItem {
    tin: TxIn,
    /// Data TX: the packet (LRH..ICRC).
    data: Option<Vec<u8>>,
    cfg: PortConfig,
    /// A link-down period may discard it at the wire.
    optional: bool,
}

impl TxItem {
    fn predict(&self, psn: u32) -> TxOut {
        let m = CaModel::new(self.cfg);
        match &self.data {
            Some(d) => m.tx_data(d).out,
            None => m.tx(&self.tin, psn).out,
        }
    }
    fn to_wire(&self) -> bool {
        matches!(self.predict(0), TxOut::Wire(_))
    }
}

/// How many errors are kept in words.
const KEEP_ERRORS: usize = 20;

fn src_index(s: TxPortIn) -> usize {
    match s {
        TxPortIn::Sma => 0,
        TxPortIn::Sm => 1,
        TxPortIn::Trap => 2,
        TxPortIn::Data => 3,
    }
}

/// The scoreboard of one CA port.
pub struct Scoreboard {
    pub model: CaModel,
    /// VL15 RX slots in use (RegRxDepth).
    pub depth: usize,
    pub stats: Stats,
    /// The first mismatches, in words (all are counted in `stats`).
    pub errors: Vec<String>,
    /// Collect the MADs the SMA received (as predicted) in `requests`.
    pub collect_requests: bool,
    /// (sideband, MAD, cycle of the last beat) of each MAD the SMA received.
    pub requests: VecDeque<(SmiMeta, Mad, u64)>,
    /// Tags of the packets the testbench put on the wire RX, in order.
    pub tags: VecDeque<&'static str>,
    /// Packets cut by a link-down: their beats and the next packet's reach
    /// the RTL as one packet, which takes both tags.
    merge_tags: usize,
    /// Counter values expected since the last reset or clear.
    expected: CtrDelta,
    /// SMI-rejected SMPs whose buffer fill was ambiguous, by the SMI counter
    /// they count in when the buffer had room (else VL15Dropped).
    amb_counts: [u32; NUM_CTRS],
    rx_cur: Vec<u8>,
    rx_first: u64,
    rx_tb: bool,
    arrived: VecDeque<Arrived>,
    vl15q: VecDeque<Vl15Entry>,
    drxq: VecDeque<(Vec<u8>, bool, &'static str)>,
    /// SMA, SM, trap, data TX.
    txq: [VecDeque<TxItem>; 4],
    tx_cur: [(Vec<u8>, SmiMeta, AddressHandle); 4],
    /// Cycle of the first beat of each source's packet in `tx_cur`.
    tx_first: [u64; 4],
    next_psn: u32,
    /// VL15 packets the link gate discarded (each took a PSN) minus the PSN
    /// jumps already seen on the wire for them.
    psn_debt: i64,
    obs_sma: VecDeque<Received<SmiMeta>>,
    obs_sm: VecDeque<Received<SmiMeta>>,
    obs_drx: VecDeque<Received<u8>>,
    /// The latest receive decisions, in words (context for a mismatch).
    recent: VecDeque<String>,
    link_up: bool,
    /// The cycle the link last came up.
    link_rise: u64,
    /// Cycle the link last fell.
    link_fall: u64,
    wqe_posted: Option<u64>,
    cycle: u64,
    /// For testing the scoreboard itself: predict the next arrival / the
    /// next MAD from a source from these bytes instead of what the RTL got.
    substitute_rx: Option<Vec<u8>>,
    substitute_tx: Option<(usize, Mad)>,
}

impl Default for Scoreboard {
    fn default() -> Self {
        Self::new()
    }
}

impl Scoreboard {
    /// A scoreboard for a port just out of reset.
    pub fn new() -> Self {
        Scoreboard {
            model: CaModel::default(),
            depth: 4,
            stats: Stats::default(),
            errors: Vec::new(),
            collect_requests: false,
            requests: VecDeque::new(),
            tags: VecDeque::new(),
            merge_tags: 0,
            expected: CtrDelta::default(),
            amb_counts: [0; NUM_CTRS],
            rx_cur: Vec::new(),
            rx_first: 0,
            rx_tb: false,
            arrived: VecDeque::new(),
            vl15q: VecDeque::new(),
            drxq: VecDeque::new(),
            txq: Default::default(),
            tx_cur: Default::default(),
            tx_first: [0; 4],
            next_psn: 0,
            psn_debt: 0,
            obs_sma: VecDeque::new(),
            obs_sm: VecDeque::new(),
            obs_drx: VecDeque::new(),
            recent: VecDeque::new(),
            link_up: true,
            link_rise: 0,
            link_fall: 0,
            wqe_posted: None,
            cycle: 0,
            substitute_rx: None,
            substitute_tx: None,
        }
    }

    /// Opt a port in: turn its tap on and return its scoreboard. Call before
    /// the port has done anything since its reset; then call
    /// [`Scoreboard::observe`] after every step.
    pub fn attach(port: &mut CaPort) -> Self {
        port.tap = Some(Box::default());
        let mut sb = Self::new();
        sb.link_up = port.link_up;
        sb.cycle = port.cycle;
        sb.model.cfg.port_num = port.port_num();
        sb
    }

    fn error(&mut self, msg: String) {
        self.stats.mismatches += 1;
        if self.errors.len() < KEEP_ERRORS {
            let recent: Vec<&str> = self.recent.iter().map(|s| s.as_str()).collect();
            self.errors.push(format!(
                "cycle {}: {msg}\n    latest decisions:\n      {}",
                self.cycle,
                recent.join("\n      ")
            ));
        }
    }

    /// Take in what crossed the port in the cycles since the last call (its
    /// tap), judge and match. Call after every `CaPort::step`.
    pub fn observe(&mut self, port: &mut CaPort) {
        let Some(tap) = port.tap.as_mut() else {
            self.error("observe: the port has no tap (Scoreboard::attach)".into());
            return;
        };
        let t: Tap = std::mem::take(&mut **tap);
        let now = port.cycle.saturating_sub(1);
        self.cycle = port.cycle;
        self.wqe_posted = port.sm_rq.posted();
        if port.link_up != self.link_up {
            self.link_edge(port.link_up);
        }
        for (addr, v) in t.reg_writes {
            self.reg_write(addr, v);
        }
        let bb = beat_bytes(port.data_w);
        for (cyc, b, tb) in t.rx {
            if self.rx_cur.is_empty() {
                self.rx_first = cyc;
                self.rx_tb = tb;
            }
            self.rx_cur.extend(b.bytes());
            if b.last {
                let tag = if self.rx_tb {
                    let mut tag = self.tags.pop_front().unwrap_or("tb");
                    while self.merge_tags > 0 {
                        self.merge_tags -= 1;
                        tag = self.tags.pop_front().map_or(tag, |_| tag);
                    }
                    tag
                } else {
                    "link"
                };
                let mut bytes = std::mem::take(&mut self.rx_cur);
                if let Some(sub) = self.substitute_rx.take() {
                    bytes = sub;
                }
                self.arrived.push_back(Arrived {
                    bytes,
                    tag,
                    first: self.rx_first,
                    last: cyc,
                    cfg: self.model.cfg,
                });
            }
        }
        let _ = bb;
        for (src, b, meta, ah) in t.tx_in {
            let i = src_index(src);
            if self.tx_cur[i].0.is_empty() {
                self.tx_first[i] = self.cycle;
            }
            self.tx_cur[i].0.extend(b.bytes());
            self.tx_cur[i].1 = meta;
            self.tx_cur[i].2 = ah;
            if b.last {
                let (bytes, meta, ah) = std::mem::take(&mut self.tx_cur[i]);
                self.tx_taken(src, bytes, meta, ah);
            }
        }
        while self
            .arrived
            .front()
            .is_some_and(|a| a.last + DECIDE_SLACK <= now)
        {
            let a = self.arrived.pop_front().expect("front");
            self.decide(a);
        }
        self.obs_sma.extend(t.sma);
        self.obs_sm.extend(t.sm);
        self.obs_drx.extend(t.drx);
        self.match_vl15();
        self.match_drx();
        for p in t.wire {
            self.match_wire(p);
        }
    }

    /// The physical link changed: PortState follows (docs/arch.md
    /// ib_port_regs), and going down every packet waiting for the wire may
    /// be discarded whole by the link gate.
    fn link_edge(&mut self, up: bool) {
        if !up {
            self.link_fall = self.cycle;
            for q in self.txq.iter_mut() {
                for t in q.iter_mut() {
                    t.optional = true;
                }
            }
        }
        self.link_up = up;
        if up {
            self.link_rise = self.cycle;
        }
        self.model.cfg.port_state = if up { PORT_STATE_INIT } else { PORT_STATE_DOWN };
    }

    /// A register write reached the RTL.
    fn reg_write(&mut self, addr: u8, v: u32) {
        let c = &mut self.model.cfg;
        match addr {
            reg::PORT_LID => c.lid = v as u16,
            reg::PORT_LMC => c.lmc = (v & 7) as u8,
            reg::MASTER_SM_LID => c.master_sm_lid = v as u16,
            reg::MASTER_SM_SL => c.master_sm_sl = (v & 0xF) as u8,
            reg::PORT_STATE => c.port_state = (v & 0xF) as u8,
            reg::RX_DEPTH => self.depth = (v as usize).max(1),
            reg::PKEY_IDX => c.pkey_idx = v as u8,
            reg::PKEY_DATA => {
                if let Some(e) = c.pkeys.get_mut(usize::from(c.pkey_idx)) {
                    *e = v as u16;
                }
                c.pkey_idx = c.pkey_idx.wrapping_add(1);
            }
            reg::CTR_CLEAR => {
                self.expected = CtrDelta::default();
                self.amb_counts = [0; NUM_CTRS];
            }
            reg::CTR_CLEAR_SEL => {
                for k in Ctr::ALL {
                    if v & (1 << k as u32) != 0 {
                        self.expected.0[k as usize] = 0;
                        self.amb_counts[k as usize] = 0;
                    }
                }
            }
            // The simulation-only counter write: the counter holds v.
            a if a >= reg::CTR_BASE && usize::from(a - reg::CTR_BASE) < NUM_CTRS => {
                let k = usize::from(a - reg::CTR_BASE);
                self.expected.0[k] = v;
                self.amb_counts[k] = 0;
            }
            _ => {}
        }
    }

    /// The send engine (or the data TX port) took a whole packet.
    fn tx_taken(&mut self, src: TxPortIn, bytes: Vec<u8>, meta: SmiMeta, ah: AddressHandle) {
        let i = src_index(src);
        let mut mad = [0u8; MAD_BYTES];
        let n = bytes.len().min(MAD_BYTES);
        mad[..n].copy_from_slice(&bytes[..n]);
        if let Some((k, sub)) = self.substitute_tx {
            if k == i {
                mad = sub;
                self.substitute_tx = None;
            }
        }
        let source = match src {
            TxPortIn::Sm => TxSource::Sm,
            TxPortIn::Trap => TxSource::Trap,
            _ => TxSource::Sma,
        };
        let data = src == TxPortIn::Data;
        let decided = if data { self.tx_first[i] } else { self.cycle };
        let item = TxItem {
            tin: TxIn {
                source,
                mad,
                meta,
                ah,
            },
            data: (src == TxPortIn::Data).then_some(bytes),
            cfg: self.model.cfg,
            // the link gate decides a packet when its first beat reaches the
            // wire, a few cycles after the port took it (register stages;
            // the packet before it may still be being discarded): one taken
            // just after the link came up may still meet the gate down. A
            // MAD reaches the wire after its last beat (the VL15 TX buffer
            // stores it whole); a data TX packet goes through as its first
            // beat arrives, so it is judged from that beat, and the link
            // falling while it streams in makes it optional too.
            optional: !self.link_up
                || decided < self.link_rise + LINK_RISE_GUARD
                || (data && self.link_fall >= decided),
        };
        if item.data.is_none() {
            // What never reaches the wire is counted now; a wire packet's
            // send-engine count too (it is committed whatever the link does).
            let p = CaModel::new(item.cfg).tx(&item.tin, 0);
            let c = match p.out {
                TxOut::Wire(_) => CtrDelta::one(Ctr::SqPkts),
                _ => p.ctr,
            };
            self.expected.merge(&c);
        }
        self.txq[i].push_back(item);
    }

    /// The port was reset (with the testbench side of its streams): every
    /// expectation is gone, the counters and the PSN restart from 0, the
    /// registers are at their reset values.
    pub fn on_reset(&mut self, link_up: bool, cut_bytes: usize) {
        self.stats.cut_by_reset += cut_bytes as u64;
        let lost = self.tags.len()
            + self.arrived.len()
            + self.vl15q.iter().filter(|e| !e.seen).count()
            + self.drxq.len()
            + self.txq.iter().map(|q| q.len()).sum::<usize>();
        self.stats.lost_to_reset += lost as u64;
        self.tags.clear();
        self.merge_tags = 0;
        self.rx_cur.clear();
        self.arrived.clear();
        self.vl15q.clear();
        self.drxq.clear();
        for q in self.txq.iter_mut() {
            q.clear();
        }
        self.tx_cur = Default::default();
        self.obs_sma.clear();
        self.obs_sm.clear();
        self.obs_drx.clear();
        self.requests.clear();
        self.expected = CtrDelta::default();
        self.amb_counts = [0; NUM_CTRS];
        self.next_psn = 0;
        self.psn_debt = 0;
        self.link_up = link_up;
        // A reset clears every register; the port's number is its wiring.
        self.model.cfg = PortConfig {
            port_state: if link_up {
                PORT_STATE_INIT
            } else {
                PORT_STATE_DOWN
            },
            port_num: self.model.cfg.port_num,
            ..PortConfig::default()
        };
        self.depth = 4;
    }

    /// The testbench cut the wire RX packet under way (link down): its beats
    /// and the next packet's are one packet for the RTL.
    pub fn rx_cut(&mut self) {
        self.merge_tags += 1;
    }

    /// For testing the scoreboard itself: judge the next packet that arrives
    /// on the wire as if it were `bytes`.
    pub fn substitute_next_rx(&mut self, bytes: &[u8]) {
        self.substitute_rx = Some(bytes.to_vec());
    }

    /// For testing the scoreboard itself: predict the next MAD the SMA's
    /// send interface takes as if it were `mad`.
    pub fn substitute_next_sma_tx(&mut self, mad: &Mad) {
        self.substitute_tx = Some((0, *mad));
    }

    /// Whether the VL15 RX buffer is full for the SMP that arrived over
    /// [first, last]: Some(true/false) when certain, None when ambiguous.
    fn buffer_full(&self, first: u64, last: u64) -> Option<bool> {
        let possibly = self
            .vl15q
            .iter()
            .filter(|e| e.exit.map_or(true, |(_, hi)| hi >= first))
            .count();
        let certain = self
            .vl15q
            .iter()
            .filter(|e| e.alt.is_none() && e.dest != Dest::Discard)
            .filter(|e| e.exit.map_or(true, |(lo, _)| lo > last + DECIDE_SLACK))
            .count();
        if possibly < self.depth {
            Some(false)
        } else if certain >= self.depth {
            Some(true)
        } else {
            None
        }
    }

    /// Receive WQEs the SM has for the next MAD (None = "take everything").
    fn sm_wqe(&self) -> bool {
        match self.wqe_posted {
            None => true,
            Some(n) => {
                let waiting = self
                    .vl15q
                    .iter()
                    .filter(|e| !e.seen && e.dest == Dest::Sm)
                    .count() as u64;
                n > waiting
            }
        }
    }

    fn decide(&mut self, a: Arrived) {
        let wqe = self.sm_wqe();
        let env = |full| RxEnv {
            vl15_full: full,
            sm_wqe: wqe,
        };
        let mut model = self.model.clone();
        model.cfg = a.cfg;
        let room = model.rx(&a.bytes, &env(false));
        let full = model.rx(&a.bytes, &env(true));
        let fill = if room == full {
            Some(false)
        } else {
            self.buffer_full(a.first, a.last)
        };
        let (room_ctr, full_ctr) = (room.ctr, full.ctr);
        let (pred, alt) = match fill {
            Some(true) => {
                self.stats.certain_full += 1;
                (full, None)
            }
            Some(false) => (room, None),
            None => {
                self.stats.ambiguous_full += 1;
                (room.clone(), Some((room.ctr, full.ctr)))
            }
        };
        *self
            .stats
            .by_verdict
            .entry(pred.verdict.to_string())
            .or_default() += 1;
        if self.recent.len() >= 12 {
            self.recent.pop_front();
        }
        // the buffer entries still holding a slot (unseen, or left lately)
        let held: Vec<_> = self
            .vl15q
            .iter()
            .filter(|e| e.exit.map_or(true, |(_, hi)| hi + 64 >= a.first))
            .map(|e| (e.dest, e.seen, e.alt.is_some(), e.exit))
            .collect();
        self.recent.push_back(format!(
            "[{}..{}] {} {} bytes VL {} TID {:02x?}: {} fill {:?} (depth {}, slots {:?})",
            a.first,
            a.last,
            a.tag,
            a.bytes.len(),
            a.bytes[0] >> 4,
            a.bytes.get(36..44),
            pred.verdict,
            fill,
            self.depth,
            held
        ));
        let entry = |dest, meta, mad, alt| Vl15Entry {
            dest,
            meta,
            mad,
            alt,
            arrived: a.last,
            exit: None,
            seen: false,
            tag: a.tag,
        };
        match pred.out {
            RxOut::Sma { meta, mad } => {
                if alt.is_none() {
                    self.expected.merge(&pred.ctr);
                }
                self.vl15q.push_back(entry(Dest::Sma, meta, mad, alt));
            }
            RxOut::Sm { meta, mad } => {
                if alt.is_none() {
                    self.expected.merge(&pred.ctr);
                }
                self.vl15q.push_back(entry(Dest::Sm, meta, mad, alt));
            }
            RxOut::Drx { bytes, discard } => {
                self.expected.merge(&pred.ctr);
                self.drxq.push_back((bytes, discard, a.tag));
            }
            RxOut::Dropped => {
                if alt.is_some() {
                    // Rejected by an SMI check if the buffer had room, else
                    // VL15Dropped: the output cannot tell, the counters will.
                    let diff: Vec<Ctr> = Ctr::ALL
                        .iter()
                        .copied()
                        .filter(|c| room_ctr.get(*c) != full_ctr.get(*c) && *c != Ctr::Vl15Dropped)
                        .collect();
                    let mut base = room_ctr;
                    for c in &diff {
                        base.add(*c, u32::MAX); // −1
                        self.amb_counts[*c as usize] += 1;
                    }
                    self.expected.merge(&base);
                } else {
                    self.expected.merge(&pred.ctr);
                    if pred.verdict == "sm_no_wqe" {
                        // read out of the buffer at full rate after the MADs before it
                        self.vl15q.push_back(entry(
                            Dest::Discard,
                            SmiMeta::default(),
                            [0; MAD_BYTES],
                            None,
                        ));
                    }
                }
            }
        }
        self.update_discard_exits();
    }

    /// A discarded MAD for the SM frees its slot after the MADs before it
    /// have left and it has been read out (256 bytes at full rate).
    fn update_discard_exits(&mut self) {
        // 256 MAD bytes at the narrowest width: an upper bound at every width
        let beats = (MAD_BYTES / 4) as u64;
        let mut prev: Option<(u64, u64)> = Some((0, 0));
        for e in self.vl15q.iter_mut() {
            if e.dest == Dest::Discard && e.exit.is_none() {
                if let Some((lo, hi)) = prev {
                    e.exit = Some((
                        lo.max(e.arrived),
                        hi.max(e.arrived + DECIDE_SLACK) + beats + DECIDE_SLACK,
                    ));
                }
            }
            prev = if e.alt.is_some() && !e.seen {
                None
            } else {
                e.exit
            };
        }
        // forget what left long ago
        while self.vl15q.front().is_some_and(|e| {
            e.exit
                .is_some_and(|(_, hi)| hi + 1_000 < self.cycle && e.alt.is_none())
        }) {
            self.vl15q.pop_front();
        }
    }

    fn match_vl15(&mut self) {
        loop {
            // the next observed MAD, SMA or SM, in the order they completed
            let take_sma = match (self.obs_sma.front(), self.obs_sm.front()) {
                (Some(a), Some(b)) => a.last_cycle <= b.last_cycle,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => return,
            };
            let obs = if take_sma {
                self.obs_sma.front()
            } else {
                self.obs_sm.front()
            }
            .expect("checked")
            .clone();
            let dest = if take_sma { Dest::Sma } else { Dest::Sm };
            let mut i = 0;
            let mut matched = false;
            while i < self.vl15q.len() {
                let e = &self.vl15q[i];
                if e.seen || e.dest == Dest::Discard {
                    i += 1;
                    continue;
                }
                if e.dest == dest && e.meta == obs.meta && e.mad[..] == obs.bytes[..] {
                    let e = &mut self.vl15q[i];
                    e.seen = true;
                    e.exit = Some((obs.last_cycle, obs.last_cycle + 1));
                    if let Some((take, _)) = e.alt.take() {
                        self.expected.merge(&take);
                    }
                    matched = true;
                    break;
                }
                if let Some((_, drop)) = e.alt {
                    // it would have come before this one: the RTL dropped it
                    self.expected.merge(&drop);
                    self.vl15q.remove(i);
                    continue;
                }
                let msg = format!(
                    "{:?} delivered {} (meta {:?}, TID {:02x?}) where the model expects {:?} {} (meta {:?}, TID {:02x?}, arrived {})",
                    dest,
                    first_diff(&obs.bytes, &e.mad),
                    obs.meta,
                    obs.bytes.get(8..16),
                    e.dest,
                    e.tag,
                    e.meta,
                    &e.mad[8..16],
                    e.arrived
                );
                self.error(msg);
                matched = true; // consumed as a mismatch
                let e = &mut self.vl15q[i];
                e.seen = true;
                e.exit = Some((obs.last_cycle, obs.last_cycle + 1));
                break;
            }
            if !matched {
                if !self.arrived.is_empty() {
                    return; // its prediction is still due
                }
                self.error(format!(
                    "{dest:?} delivered a MAD the model does not expect (meta {:?}, TID {:02x?})",
                    obs.meta,
                    obs.bytes.get(8..16)
                ));
            }
            if take_sma {
                self.obs_sma.pop_front();
                if matched {
                    let mut mad = [0u8; MAD_BYTES];
                    let n = obs.bytes.len().min(MAD_BYTES);
                    mad[..n].copy_from_slice(&obs.bytes[..n]);
                    self.requests.push_back((obs.meta, mad, obs.last_cycle));
                    self.stats.to_sma += 1;
                }
            } else {
                self.obs_sm.pop_front();
                self.stats.to_sm += 1;
            }
            self.update_discard_exits();
        }
    }

    fn match_drx(&mut self) {
        while let Some(obs) = self.obs_drx.front() {
            let Some((bytes, discard, tag)) = self.drxq.front() else {
                if !self.arrived.is_empty() {
                    return;
                }
                let msg = format!(
                    "data RX delivered {} bytes (discard {}) the model does not expect",
                    obs.bytes.len(),
                    obs.bad
                );
                self.obs_drx.pop_front();
                self.error(msg);
                continue;
            };
            if obs.bytes != *bytes || obs.bad != *discard {
                let msg = format!(
                    "data RX: {} discard {} where the model expects {} discard {} ({tag})",
                    first_diff(&obs.bytes, bytes),
                    obs.bad,
                    bytes.len(),
                    discard
                );
                self.error(msg);
            } else {
                self.stats.to_drx += 1;
            }
            self.obs_drx.pop_front();
            self.drxq.pop_front();
        }
    }

    fn match_wire(&mut self, obs: Received<()>) {
        let b = &obs.bytes;
        if b.first().is_some_and(|v| v >> 4 != VL15) {
            // a data-VL packet: the data TX port's packets, in order
            let q = &mut self.txq[3];
            let mut skip = 0;
            for (k, t) in q.iter().enumerate() {
                match t.predict(0) {
                    TxOut::Wire(w) if w == *b => {
                        self.expected.add(Ctr::TxDataPkts, 1);
                        let pl = u16::from_be_bytes([b[4], b[5]]) & 0x07FF;
                        self.expected.add(Ctr::TxWords, u32::from(pl));
                        self.stats.wire_tx += 1;
                        self.stats.tx_gated += skip;
                        q.drain(..=k);
                        return;
                    }
                    _ if t.optional => skip += 1,
                    _ => break,
                }
            }
            let head = q
                .front()
                .map(|t| match t.predict(0) {
                    TxOut::Wire(w) => first_diff(b, &w),
                    _ => "-".into(),
                })
                .unwrap_or_else(|| "nothing".into());
            self.error(format!(
                "wire TX data-VL packet of {} bytes does not match the data TX port's next packet ({head})",
                b.len()
            ));
            return;
        }
        let psn_obs = if b.len() >= 20 {
            u32::from_be_bytes([0, b[17], b[18], b[19]])
        } else {
            0
        };
        let optional: u32 = self.txq[..3]
            .iter()
            .flat_map(|q| q.iter())
            .filter(|t| t.optional)
            .count() as u32;
        // A packet the link gate discarded still took its PSN.
        let jump = psn_obs.wrapping_sub(self.next_psn) & 0xFF_FFFF;
        let psn = if optional > 0 && jump <= optional {
            psn_obs
        } else {
            self.next_psn
        };
        for s in 0..3 {
            let mut skip = 0;
            for (k, t) in self.txq[s].iter().enumerate() {
                match t.predict(psn) {
                    TxOut::Wire(w) if w == *b => {
                        self.expected.add(Ctr::TxVl15Pkts, 1);
                        self.expected.add(Ctr::TxWords, u32::from(SMP_PKT_LEN));
                        self.stats.wire_tx += 1;
                        self.stats.tx_gated += skip;
                        self.psn_debt +=
                            skip as i64 - i64::from(psn.wrapping_sub(self.next_psn) & 0xFF_FFFF);
                        self.txq[s].drain(..=k);
                        self.next_psn = (psn + 1) & 0xFF_FFFF;
                        return;
                    }
                    TxOut::Wire(_) if t.optional => skip += 1,
                    TxOut::Wire(_) => break,
                    _ => {} // never on the wire: counted when handed over
                }
            }
        }
        let heads: Vec<String> = self.txq[..3]
            .iter()
            .map(|q| {
                q.iter()
                    .find_map(|t| match t.predict(psn) {
                        TxOut::Wire(w) => Some(first_diff(b, &w)),
                        _ => None,
                    })
                    .unwrap_or_else(|| "-".into())
            })
            .collect();
        self.error(format!(
            "wire TX packet of {} bytes (PSN {psn_obs}) matches no source head (SMA/SM/trap vs it: {heads:?})",
            b.len()
        ));
    }

    /// Everything predicted has come out (expectations that may not come out
    /// aside) and no packet is half seen.
    pub fn settled(&self) -> bool {
        self.arrived.is_empty()
            && self.rx_cur.is_empty()
            && self.tx_cur.iter().all(|c| c.0.is_empty())
            && self
                .vl15q
                .iter()
                .all(|e| e.seen || e.dest == Dest::Discard || e.alt.is_some())
            && self.drxq.is_empty()
            && self
                .txq
                .iter()
                .all(|q| q.iter().all(|t| t.optional || !t.to_wire()))
    }

    /// What is still expected, in words (empty when settled).
    pub fn open(&self) -> String {
        let mads: Vec<String> = self
            .vl15q
            .iter()
            .filter(|e| !e.seen && e.dest != Dest::Discard && e.alt.is_none())
            .map(|e| format!("{:?} {} arrived {}", e.dest, e.tag, e.arrived))
            .take(5)
            .collect();
        format!(
            "{} packets being judged, undelivered MADs {mads:?}, {} data RX packets, TX {:?} waiting",
            self.arrived.len(),
            self.drxq.len(),
            self.txq.iter().map(|q| q.len()).collect::<Vec<_>>()
        )
    }

    /// Resolve what may not come out as not having come out: ambiguous
    /// SMPs as dropped, packets the link gate may have discarded as
    /// discarded (they took their PSN). Call once the port is drained;
    /// then any other expectation left open is a lost packet (an error).
    pub fn finish(&mut self) {
        let mut lost = Vec::new();
        for e in std::mem::take(&mut self.vl15q) {
            match (e.seen, e.alt) {
                (false, Some((_, drop))) => self.expected.merge(&drop),
                (false, None) if e.dest != Dest::Discard => {
                    lost.push(format!("{:?} {}", e.dest, e.tag))
                }
                _ => {}
            }
        }
        for s in 0..4 {
            let q = std::mem::take(&mut self.txq[s]);
            let gated = q.iter().filter(|t| t.optional && t.to_wire()).count() as u32;
            let never = q.iter().filter(|t| !t.optional && t.to_wire()).count();
            self.stats.tx_gated += u64::from(gated);
            if s < 3 {
                self.psn_debt += i64::from(gated);
            }
            if never > 0 {
                lost.push(format!(
                    "{never} packets of TX source {s} never on the wire"
                ));
            }
        }
        // the PSNs the gated packets took and the wire has not shown yet
        if self.psn_debt < 0 {
            lost.push(format!(
                "the PSN jumped over {} more packets than the link gate discarded",
                -self.psn_debt
            ));
        } else {
            self.next_psn = (self.next_psn + self.psn_debt as u32) & 0xFF_FFFF;
        }
        self.psn_debt = 0;
        if !self.drxq.is_empty() {
            lost.push(format!("{} data RX packets", self.drxq.len()));
            self.drxq.clear();
        }
        if !lost.is_empty() {
            self.error(format!("expected but never came out: {lost:?}"));
        }
    }

    /// The counters the model expects since the last reset, with the
    /// ambiguous SMI-rejected SMPs split as `actual` says (checked: each split
    /// within its bounds and the VL15Dropped total consistent).
    pub fn expected_counters(&self, actual: &CtrDelta) -> CtrDelta {
        let mut e = self.expected;
        let mut dropped = 0u32;
        for c in Ctr::ALL {
            let n = self.amb_counts[c as usize];
            if n == 0 {
                continue;
            }
            let took = actual.get(c).wrapping_sub(e.get(c)).min(n);
            e.add(c, took);
            dropped += n - took;
        }
        e.add(Ctr::Vl15Dropped, dropped);
        e
    }

    /// Compare counters read from the RTL with the model's; a mismatch is
    /// recorded and returned as an error.
    pub fn check_counters(&mut self, actual: &CtrDelta) -> Result<()> {
        let want = self.expected_counters(actual);
        if *actual != want {
            let d = actual.diff(&want);
            self.error(format!("counters (RTL vs model): {}", d.join(", ")));
            bail!("counters differ (RTL vs model): {}", d.join(", "));
        }
        Ok(())
    }

    /// No mismatch so far.
    pub fn ok(&self) -> Result<()> {
        if self.stats.mismatches > 0 {
            bail!(
                "{} mismatches between the RTL and the model; first: {}",
                self.stats.mismatches,
                self.errors.join("\n  ")
            );
        }
        Ok(())
    }
}

/// A CA port under its scoreboard, with the fault episodes: a net of one
/// device, the port's wire driven by the testbench.
pub struct CaBench {
    net: Net,
    pub sb: Scoreboard,
    /// Every packet through the port's wire, as a pcapng trace
    /// ([`CaBench::log_wire`]).
    log: Option<(TraceFile, PortLog)>,
}

impl CaBench {
    /// A reset `ib_ca_top` of width `data_w` with every register at its
    /// reset value.
    pub fn new(data_w: u32) -> Result<Self> {
        CaBench::on(CaPortModel::Top, data_w)
    }

    /// The same on any CA port (e.g. one port of the multiport CA).
    pub fn on(model: CaPortModel, data_w: u32) -> Result<Self> {
        CaBench::on_as(model, data_w, Fidelity::Rtl)
    }

    /// [`CaBench::on`] with the port's model chosen by `f`: the RTL, the
    /// twin, or both in lockstep.
    pub fn on_as(model: CaPortModel, data_w: u32, f: Fidelity) -> Result<Self> {
        let mut net = Net::bench();
        // The scoreboard sees every packet; a soak keeps no trace.
        net.opts.trace = false;
        let d = net.add_port_as::<Sma, PortSm>("ca", model, data_w, f, None, None)?;
        let port = net
            .ca_port_mut(d)
            .ok_or_else(|| anyhow::anyhow!("the bench's port"))?;
        let mut sb = Scoreboard::attach(port);
        sb.collect_requests = true;
        Ok(CaBench { net, sb, log: None })
    }

    /// The port's model (to open its waveform dump).
    pub fn dut_mut(&mut self) -> &mut dyn crate::model::dut::Dut {
        self.net.dut_mut(0)
    }

    /// The port's drivers.
    pub fn port(&self) -> &CaPort {
        self.net.ca_port(0).expect("a CaBench is one CA port")
    }

    pub fn port_mut(&mut self) -> &mut CaPort {
        self.net.ca_port_mut(0).expect("a CaBench is one CA port")
    }

    /// Write every packet into and out of the port's wire from now on into
    /// `file`, on interface `<prefix>ca[<port>]`.
    pub fn log_wire(&mut self, file: TraceFile, prefix: &str) {
        let name = port_name(&format!("{prefix}ca"), self.port().port_num());
        self.log = Some((file, PortLog::new(name)));
    }

    /// The wire log, once the run is over.
    pub fn take_wire_log(&mut self) -> Option<TraceFile> {
        self.log.take().map(|(f, _)| f)
    }

    pub fn cycle(&self) -> u64 {
        self.net.cycle
    }

    /// Write the port configuration and VL15 RX depth into the RTL (one
    /// register write per cycle; the scoreboard sees them reach it). Call
    /// while no packet is arriving.
    pub fn configure(&mut self, cfg: PortConfig, depth: usize) -> Result<()> {
        let p = self.port_mut();
        p.write_reg(reg::PORT_LID, u32::from(cfg.lid));
        p.write_reg(reg::PORT_LMC, u32::from(cfg.lmc));
        p.write_reg(reg::MASTER_SM_LID, u32::from(cfg.master_sm_lid));
        p.write_reg(reg::MASTER_SM_SL, u32::from(cfg.master_sm_sl));
        p.write_reg(reg::PORT_STATE, u32::from(cfg.port_state));
        p.write_reg(reg::RX_DEPTH, depth as u32);
        self.flush_writes()
    }

    fn flush_writes(&mut self) -> Result<()> {
        while self.port().reg_writes_pending() {
            self.step()?;
        }
        self.step()
    }

    /// Write PortState (e.g. Down for the "SMP to a port that is Down" fault).
    pub fn set_port_state(&mut self, s: u8) -> Result<()> {
        self.port_mut().write_reg(reg::PORT_STATE, u32::from(s));
        self.flush_writes()
    }

    /// Hand a wire packet (LRH..VCRC) to the port's RX, tagged for the stats.
    pub fn inject(&mut self, bytes: &[u8], tag: &'static str) {
        self.port_mut().wire_rx.push(bytes, ());
        self.sb.tags.push_back(tag);
        self.sb.stats.injected += 1;
        *self.sb.stats.by_tag.entry(tag.to_string()).or_default() += 1;
    }

    /// For testing the scoreboard itself: the RTL receives `sent`, the model
    /// is told it received `predicted` (a wrong expectation must be caught).
    pub fn inject_as(&mut self, sent: &[u8], predicted: &[u8], tag: &'static str) {
        self.inject(sent, tag);
        self.sb.substitute_next_rx(predicted);
    }

    /// For testing the scoreboard itself: the RTL's SMA source sends `sent`,
    /// the model is told it was `predicted`.
    pub fn send_sma_as(&mut self, sent: &Mad, predicted: &Mad, meta: SmiMeta) {
        self.send_sma(sent, meta);
        self.sb.substitute_next_sma_tx(predicted);
    }

    /// Wire packets handed to RX whose last beat has not gone in yet.
    pub fn rx_backlog(&self) -> usize {
        self.port().wire_rx.pending()
    }

    /// An SMA response: `meta` is the request's sideband (slid, dlid, sl).
    pub fn send_sma(&mut self, mad: &Mad, meta: SmiMeta) {
        self.port_mut().sma_tx.push(mad, meta);
    }

    /// An SM request with its address handle.
    pub fn send_sm(&mut self, mad: &Mad, ah: AddressHandle) {
        self.port_mut().sm_tx.push(mad, ah);
    }

    /// A data-VL packet from the host (LRH..ICRC) for the data TX port.
    pub fn send_data(&mut self, bytes: &[u8]) {
        self.port_mut().dtx.push(bytes, ());
    }

    /// A trap from the SMA (to MasterSMLID).
    pub fn send_trap(&mut self, mad: &Mad) {
        self.port_mut().trap_tx.push(mad, ());
    }

    /// Take the physical link down or up (`link_up_i`). Going down cuts the
    /// wire RX packet under way (its link partner stops sending; the bytes
    /// sent so far and the next packet reach the RTL as one packet, which the
    /// model judges as such); every packet waiting for the wire may be
    /// discarded whole by the link gate while the link is down.
    pub fn set_link(&mut self, up: bool) {
        let port = self.port_mut();
        let cut = !up && port.link_up && port.wire_rx.abort_current() > 0;
        port.link_up = up;
        if cut {
            self.sb.rx_cut();
        }
    }

    /// Reset the port in the middle of whatever it is doing (and the
    /// testbench side of its streams, see `CaPort::reset`). Everything in
    /// flight is lost; the counters restart from 0; the caller configures
    /// the port again.
    pub fn reset(&mut self, cycles: u32) -> Result<()> {
        // What the wire carried of packets the reset cuts off.
        if let Some((file, l)) = self.log.as_mut() {
            l.cut(file)?;
        }
        self.net.reset_driven(0, cycles)?;
        let cycle = self.net.cycle;
        let port = self.port_mut();
        let cut = port.on_reset(cycle);
        if let Some(t) = port.tap.as_mut() {
            **t = Tap::default();
        }
        let link_up = port.link_up;
        self.sb.on_reset(link_up, cut);
        Ok(())
    }

    /// One clock cycle with the register bus idle (address 0).
    pub fn step(&mut self) -> Result<()> {
        self.step_with(None).map(|_| ())
    }

    /// One clock cycle reading register `addr`; returns its value.
    pub fn step_read(&mut self, addr: u8) -> Result<u32> {
        self.step_with(Some(addr))
    }

    fn step_with(&mut self, read: Option<u8>) -> Result<u32> {
        self.port_mut().read_next = read;
        self.net.step()?;
        let p = self.net.ca_port_mut(0).expect("a CaBench is one CA port");
        if let Some((file, l)) = self.log.as_mut() {
            let rx = p.rx_beat.as_ref().map(|(b, _)| b);
            l.cycle(
                file,
                p.cycle.saturating_sub(1),
                p.link_up,
                rx,
                p.tx_beat.as_ref(),
            )?;
        }
        self.sb.observe(p);
        // the scoreboard has copies (the tap); nobody else reads these
        p.sma_rx.packets.clear();
        p.sm_rx.packets.clear();
        p.drx.packets.clear();
        p.wire_tx.packets.clear();
        Ok(p.reg_rdata)
    }

    /// For testing the scoreboard itself: one cycle the scoreboard does not
    /// see (what crossed the port stays in its tap until the next
    /// [`CaBench::step`]).
    pub fn step_unobserved(&mut self) -> Result<()> {
        self.net.step()
    }

    /// Everything predicted has come out and the testbench has nothing queued.
    pub fn settled(&self) -> bool {
        self.sb.settled() && self.port().sources_idle()
    }

    /// Step until every prediction has come out, the SMA's requests are
    /// answered and the port reports `idle_o`; an error after `bound` cycles
    /// (a lockup or a lost packet). Returns the cycles it took. Expectations
    /// left open (ambiguous drops, packets a link-down discarded) are then
    /// resolved (`Scoreboard::finish`).
    pub fn drain(&mut self, bound: u64) -> Result<u64> {
        let start = self.port().cycle;
        loop {
            self.step()?;
            if self.settled() && self.port().idle && self.sb.requests.is_empty() {
                break;
            }
            if self.port().cycle - start > bound {
                bail!(
                    "not drained after {bound} cycles (lockup or lost packet): idle_o {}, {} RX packets not in, {}, requests unanswered {}",
                    self.port().idle,
                    self.port().wire_rx.pending(),
                    self.sb.open(),
                    self.sb.requests.len(),
                );
            }
        }
        self.sb.finish();
        Ok(self.port().cycle - start)
    }

    /// Read every counter over the register bus (one cycle each).
    pub fn read_counters(&mut self) -> Result<CtrDelta> {
        let mut d = CtrDelta::default();
        for c in Ctr::ALL {
            d.0[c as usize] = self.step_read(reg::CTR_BASE + c as u8)?;
        }
        Ok(d)
    }

    /// Preset every counter to a value of its own through the simulation-
    /// only counter write (docs/arch.md), as the console's PerformanceSet
    /// does; the model takes the writes as they reach the RTL and counts on
    /// from them. Call it with the port drained. `salt` picks the values
    /// (a generator of their own: the caller's draws are not touched).
    pub fn preset_counters(&mut self, salt: u64) -> Result<()> {
        let mut rng = crate::model::stream::Rng::new(0xC0DE ^ salt);
        for c in Ctr::ALL {
            let v = (rng.next_u64() as u32) >> 1;
            self.port_mut().write_reg(reg::CTR_BASE + c as u8, v);
        }
        self.flush_writes()
    }

    /// Read the counters and compare them with the model's.
    pub fn check_counters(&mut self) -> Result<CtrDelta> {
        let actual = self.read_counters()?;
        self.sb.check_counters(&actual)?;
        Ok(actual)
    }

    /// No mismatch so far.
    pub fn ok(&self) -> Result<()> {
        self.sb.ok()
    }
}

/// "equal" or where two byte strings first differ.
fn first_diff(a: &[u8], b: &[u8]) -> String {
    if a == b {
        return format!("{} bytes, equal", a.len());
    }
    match a.iter().zip(b.iter()).position(|(x, y)| x != y) {
        Some(i) => format!(
            "{} vs {} bytes, first difference at byte {i}: {:#04x} vs {:#04x}",
            a.len(),
            b.len(),
            a[i],
            b[i]
        ),
        None => format!(
            "{} vs {} bytes, one a prefix of the other",
            a.len(),
            b.len()
        ),
    }
}

impl crate::model::bench::PortChecker for Scoreboard {
    fn on_cycle(&mut self, port: &mut CaPort) {
        self.observe(port);
    }

    fn verdict(&mut self, counters: &crate::model::device::Counters) -> Result<()> {
        let mut actual = CtrDelta::default();
        for (i, (_, v)) in counters.0.iter().enumerate() {
            actual.0[i] = *v;
        }
        self.finish();
        let counted = self.check_counters(&actual);
        self.ok().and(counted)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Check device `d` of `net` (a `PortBench<A, D>`) against the reference
/// model from now on (its port's tap on, a scoreboard as its checker);
/// call before the port has done anything.
pub fn attach_to<A: 'static, D: 'static>(net: &mut Net, d: usize) -> Result<()> {
    let port = net
        .ca_port_mut(d)
        .ok_or_else(|| anyhow::anyhow!("device {d} is not a CA port on a bench"))?;
    let sb = Scoreboard::attach(port);
    net.add_checker::<A, D>(d, Box::new(sb))
}
