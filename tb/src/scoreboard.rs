//! A scoreboard for one RTL CA port: it wraps a [`CaPort`], predicts with
//! [`crate::refmodel::ca::CaModel`] what every packet handed to the port must
//! become, and checks what the RTL does against it transaction by
//! transaction, byte for byte, per output port in order: the SMA and SM
//! receive interfaces (MAD and sideband), the data RX port (bytes and the
//! discard flag) and the wire (LRH..VCRC). The counters, read over the
//! register bus, are checked against the sum of the predicted deltas.
//!
//! Use: [`CaBench::new`], [`CaBench::configure`], then [`CaBench::inject`]
//! wire packets and [`CaBench::send_sma`] / [`CaBench::send_sm`] /
//! [`CaBench::send_trap`] MADs, [`CaBench::step`] the clock, and finish with
//! [`CaBench::drain`] and [`CaBench::check_counters`]. Requests the SMA
//! receives are queued in [`CaBench::requests`] for the caller to answer.
//!
//! Where only the RTL's timing decides (the exact cycle at which the VL15 RX
//! buffer counts as full, ibspec §11 "an SMP arriving to a full buffer is
//! discarded"), the scoreboard works out from what it has seen whether the
//! buffer was full for the whole arrival of the SMP (then the model must
//! drop it), had a free slot for the whole arrival (then the model must take
//! it), or changed during it; only in the last case does it accept either
//! choice and follow what the RTL did (counted in `Stats::ambiguous_full`).

use std::collections::{BTreeMap, VecDeque};

use anyhow::{bail, Result};

use crate::device::{reg, AddressHandle, CaPort, SmiMeta};
use crate::mad::Mad;
use crate::packet::consts::*;
use crate::refmodel::ca::{CaModel, PortConfig, RxEnv, RxOut, TxIn, TxOut, TxSource};
use crate::refmodel::{Ctr, CtrDelta, NUM_CTRS};
use crate::stream::{beat_bytes, Received};

/// Cycles after an SMP's last wire beat by which the RTL has decided whether
/// the VL15 RX buffer had room for it (the link RX register stage, the SMI
/// receive engine's end of packet and the buffer's commit: a few cycles; 8
/// leaves margin). The decision window of an SMP is [first wire beat, last
/// wire beat + DECIDE_SLACK].
pub const DECIDE_SLACK: u64 = 8;

/// Counters the scoreboard keeps.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Stats {
    /// Wire packets handed to the port's RX.
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
    /// Packets on the wire that a link-down period may discard (and did).
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

/// A wire packet handed to RX, not yet arrived whole.
#[derive(Debug, Clone)]
struct Injected {
    bytes: Vec<u8>,
    tag: &'static str,
    first: Option<u64>,
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

/// One MAD handed to the send engine, predicted for the wire.
#[derive(Debug, Clone)]
struct TxItem {
    tin: TxIn,
    cfg: PortConfig,
    /// A link-down period may discard it at the wire.
    optional: bool,
}

/// A RTL CA port under the scoreboard.
pub struct CaBench {
    pub port: CaPort,
    pub model: CaModel,
    /// VL15 RX slots in use (RegRxDepth).
    pub depth: usize,
    pub stats: Stats,
    /// The first mismatches, in words (all are counted in `stats`).
    pub errors: Vec<String>,
    /// MADs the SMA received (as predicted), for the caller to answer:
    /// (sideband, MAD, cycle of the last beat).
    pub requests: VecDeque<(SmiMeta, Mad, u64)>,
    /// Counter values expected since the last reset.
    expected: CtrDelta,
    /// SMI-rejected SMPs whose buffer fill was ambiguous, by the SMI counter
    /// they count in when the buffer had room (else VL15Dropped).
    amb_counts: [u32; NUM_CTRS],
    injected: VecDeque<Injected>,
    /// Bytes of a packet a link-down cut, which the next packet continues.
    carry: Option<(Vec<u8>, u64)>,
    arrived: VecDeque<Arrived>,
    vl15q: VecDeque<Vl15Entry>,
    drxq: VecDeque<(Vec<u8>, bool, &'static str)>,
    txq: [VecDeque<TxItem>; 3],
    next_psn: u32,
    /// Observed outputs not yet matched (their prediction is still due).
    obs_sma: VecDeque<Received<SmiMeta>>,
    obs_sm: VecDeque<Received<SmiMeta>>,
    obs_drx: VecDeque<Received<()>>,
    /// The cycle the last packet arrived or was handed to a source.
    pub last_activity: u64,
    /// The latest receive decisions, in words (context for a mismatch).
    recent: VecDeque<String>,
}

/// How many errors are kept in words.
const KEEP_ERRORS: usize = 20;

fn src_index(s: TxSource) -> usize {
    match s {
        TxSource::Sma => 0,
        TxSource::Sm => 1,
        TxSource::Trap => 2,
    }
}

impl CaBench {
    /// A reset port of width `data_w` with every register at its reset value.
    pub fn new(data_w: u32) -> Result<Self> {
        let port = CaPort::new(data_w)?;
        Ok(CaBench {
            port,
            model: CaModel::default(),
            depth: 4,
            stats: Stats::default(),
            errors: Vec::new(),
            requests: VecDeque::new(),
            expected: CtrDelta::default(),
            amb_counts: [0; NUM_CTRS],
            injected: VecDeque::new(),
            carry: None,
            arrived: VecDeque::new(),
            vl15q: VecDeque::new(),
            drxq: VecDeque::new(),
            txq: Default::default(),
            next_psn: 0,
            obs_sma: VecDeque::new(),
            obs_sm: VecDeque::new(),
            obs_drx: VecDeque::new(),
            last_activity: 0,
            recent: VecDeque::new(),
        })
    }

    pub fn cycle(&self) -> u64 {
        self.port.cycle
    }

    fn error(&mut self, msg: String) {
        self.stats.mismatches += 1;
        if self.errors.len() < KEEP_ERRORS {
            let recent: Vec<&str> = self.recent.iter().map(|s| s.as_str()).collect();
            self.errors.push(format!(
                "cycle {}: {msg}\n    latest decisions:\n      {}",
                self.port.cycle,
                recent.join("\n      ")
            ));
        }
    }

    /// Write the port configuration and VL15 RX depth into the RTL (one
    /// register write per cycle) and into the model. Call while no packet is
    /// arriving: the model takes the new values at once.
    pub fn configure(&mut self, cfg: PortConfig, depth: usize) -> Result<()> {
        let p = &mut self.port;
        p.write_reg(reg::PORT_LID, u32::from(cfg.lid));
        p.write_reg(reg::PORT_LMC, u32::from(cfg.lmc));
        p.write_reg(reg::MASTER_SM_LID, u32::from(cfg.master_sm_lid));
        p.write_reg(reg::MASTER_SM_SL, u32::from(cfg.master_sm_sl));
        p.write_reg(reg::PORT_STATE, u32::from(cfg.port_state));
        p.write_reg(reg::RX_DEPTH, depth as u32);
        while self.port.reg_writes_pending() {
            self.step()?;
        }
        self.step()?;
        self.model.cfg.lid = cfg.lid;
        self.model.cfg.lmc = cfg.lmc;
        self.model.cfg.master_sm_lid = cfg.master_sm_lid;
        self.model.cfg.master_sm_sl = cfg.master_sm_sl;
        self.model.cfg.port_state = cfg.port_state;
        self.depth = depth;
        Ok(())
    }

    /// Write PortState (e.g. Down for the "SMP to a port that is Down" fault).
    pub fn set_port_state(&mut self, s: u8) -> Result<()> {
        self.port.write_reg(reg::PORT_STATE, u32::from(s));
        while self.port.reg_writes_pending() {
            self.step()?;
        }
        self.step()?;
        self.model.cfg.port_state = s;
        Ok(())
    }

    /// Hand a wire packet (LRH..VCRC) to the port's RX, tagged for the stats.
    pub fn inject(&mut self, bytes: &[u8], tag: &'static str) {
        self.port.wire_rx.push(bytes, ());
        self.injected.push_back(Injected {
            bytes: bytes.to_vec(),
            tag,
            first: None,
        });
        self.stats.injected += 1;
        *self.stats.by_tag.entry(tag.to_string()).or_default() += 1;
    }

    /// For testing the scoreboard itself: the RTL receives `sent`, the model
    /// is told it received `predicted` (a wrong expectation must be caught).
    pub fn inject_as(&mut self, sent: &[u8], predicted: &[u8], tag: &'static str) {
        self.inject(predicted, tag);
        self.port.wire_rx.clear();
        self.port.wire_rx.push(sent, ());
    }

    /// For testing the scoreboard itself: the RTL's SMA source sends `sent`,
    /// the model is told it was `predicted`.
    pub fn send_sma_as(&mut self, sent: &Mad, predicted: &Mad, meta: SmiMeta) {
        self.send_sma(predicted, meta);
        self.port.sma_tx.clear();
        self.port.sma_tx.push(sent, meta);
    }

    /// Wire packets handed to RX that have not arrived whole yet.
    pub fn rx_backlog(&self) -> usize {
        self.injected.len()
    }

    fn push_tx(&mut self, tin: TxIn) {
        // What never reaches the wire is counted now; a wire packet's send
        // engine count too (it is committed whatever the link does later).
        let p = self.model.tx(&tin, 0);
        let mut c = p.ctr;
        if let TxOut::Wire(_) = p.out {
            c = CtrDelta::one(Ctr::SqPkts);
        }
        self.expected.merge(&c);
        let optional = !self.port.link_up;
        let s = src_index(tin.source);
        self.txq[s].push_back(TxItem {
            tin,
            cfg: self.model.cfg,
            optional,
        });
        self.last_activity = self.port.cycle;
    }

    /// An SMA response: `meta` is the request's sideband (slid, dlid, sl).
    pub fn send_sma(&mut self, mad: &Mad, meta: SmiMeta) {
        self.port.sma_tx.push(mad, meta);
        self.push_tx(TxIn {
            source: TxSource::Sma,
            mad: *mad,
            meta,
            ah: AddressHandle::default(),
        });
    }

    /// An SM request with its address handle.
    pub fn send_sm(&mut self, mad: &Mad, ah: AddressHandle) {
        self.port.sm_tx.push(mad, ah);
        self.push_tx(TxIn {
            source: TxSource::Sm,
            mad: *mad,
            meta: SmiMeta::default(),
            ah,
        });
    }

    /// A trap from the SMA (to MasterSMLID).
    pub fn send_trap(&mut self, mad: &Mad) {
        self.port.trap_tx.push(mad, ());
        self.push_tx(TxIn {
            source: TxSource::Trap,
            mad: *mad,
            meta: SmiMeta::default(),
            ah: AddressHandle::default(),
        });
    }

    /// Take the physical link down or up (`link_up_i`). Going down cuts the
    /// wire RX packet under way (its link partner stops sending; the bytes
    /// sent so far and the next packet reach the RTL as one packet, which the
    /// model judges as such); every packet waiting for the wire may be
    /// discarded whole by the link gate while the link is down.
    pub fn set_link(&mut self, up: bool) {
        if !up && self.port.link_up {
            let sent = self.port.wire_rx.abort_current();
            if sent > 0 {
                if let Some(mut inj) = self.injected.pop_front() {
                    inj.bytes.truncate(sent * beat_bytes(self.port.data_w));
                    let first = inj.first.unwrap_or(self.port.cycle);
                    self.carry = Some(match self.carry.take() {
                        Some((mut b, f)) => {
                            b.extend_from_slice(&inj.bytes);
                            (b, f)
                        }
                        None => (inj.bytes, first),
                    });
                }
            }
            for q in self.txq.iter_mut() {
                for t in q.iter_mut() {
                    t.optional = true;
                }
            }
        }
        self.port.link_up = up;
        // PortState follows the link at its edge (docs/arch.md ib_port_regs).
        self.model.cfg.port_state = if up { PORT_STATE_INIT } else { PORT_STATE_DOWN };
    }

    /// Reset the port in the middle of whatever it is doing (and the
    /// testbench side of its streams, see `CaPort::reset`). Everything in
    /// flight is lost; the counters restart from 0; the caller configures
    /// the port again.
    pub fn reset(&mut self, cycles: u32) -> Result<()> {
        let cut = self.port.reset(cycles)?;
        self.stats.cut_by_reset += cut as u64;
        let lost = self.injected.len()
            + self.arrived.len()
            + self.vl15q.iter().filter(|e| !e.seen).count()
            + self.drxq.len()
            + self.txq.iter().map(|q| q.len()).sum::<usize>();
        self.stats.lost_to_reset += lost as u64;
        self.injected.clear();
        self.carry = None;
        self.arrived.clear();
        self.vl15q.clear();
        self.drxq.clear();
        for q in self.txq.iter_mut() {
            q.clear();
        }
        self.obs_sma.clear();
        self.obs_sm.clear();
        self.obs_drx.clear();
        self.port.wire_tx.packets.clear();
        self.requests.clear();
        self.expected = CtrDelta::default();
        self.amb_counts = [0; NUM_CTRS];
        self.next_psn = 0;
        self.model.cfg = PortConfig {
            port_state: if self.port.link_up {
                PORT_STATE_INIT
            } else {
                PORT_STATE_DOWN
            },
            ..PortConfig::default()
        };
        self.depth = 4;
        Ok(())
    }

    /// One clock cycle with the register bus idle (reading RegId).
    pub fn step(&mut self) -> Result<()> {
        self.step_read(reg::ID).map(|_| ())
    }

    /// One clock cycle reading register `addr`; returns its value.
    pub fn step_read(&mut self, addr: u8) -> Result<u32> {
        let v = self.port.step(None, addr)?;
        let now = self.port.cycle - 1;
        if let Some((b, true)) = self.port.rx_beat {
            if let Some(front) = self.injected.front_mut() {
                if front.first.is_none() {
                    front.first = Some(now);
                }
                if b.last {
                    let inj = self.injected.pop_front().expect("front");
                    let (bytes, first) = match self.carry.take() {
                        Some((mut c, f)) => {
                            c.extend_from_slice(&inj.bytes);
                            (c, f)
                        }
                        None => (inj.bytes, inj.first.unwrap_or(now)),
                    };
                    self.arrived.push_back(Arrived {
                        bytes,
                        tag: inj.tag,
                        first,
                        last: now,
                        cfg: self.model.cfg,
                    });
                    self.last_activity = now;
                }
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
        while let Some(p) = self.port.sma_rx.packets.pop_front() {
            self.obs_sma.push_back(p);
        }
        while let Some(p) = self.port.sm_rx.packets.pop_front() {
            self.obs_sm.push_back(p);
        }
        while let Some(p) = self.port.drx.packets.pop_front() {
            self.obs_drx.push_back(p);
        }
        self.match_vl15(now);
        self.match_drx();
        while let Some(p) = self.port.wire_tx.packets.pop_front() {
            self.match_wire(p);
        }
        Ok(v)
    }

    /// Whether the VL15 RX buffer is full for the SMP that arrived over
    /// [first, last]: Some(true/false) when certain, None when ambiguous.
    fn buffer_full(&self, first: u64, last: u64) -> Option<bool> {
        let possibly = self
            .vl15q
            .iter()
            .filter(|e| e.exit.is_none_or(|(_, hi)| hi >= first))
            .count();
        let certain = self
            .vl15q
            .iter()
            .filter(|e| e.alt.is_none() && e.dest != Dest::Discard)
            .filter(|e| e.exit.is_none_or(|(lo, _)| lo > last + DECIDE_SLACK))
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
        match self.port.sm_rq.posted() {
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
        self.recent.push_back(format!(
            "[{}..{}] {} {} bytes VL {} TID {:02x?}: {} fill {:?} (depth {}, queue {:?})",
            a.first,
            a.last,
            a.tag,
            a.bytes.len(),
            a.bytes[0] >> 4,
            a.bytes.get(36..44),
            pred.verdict,
            fill,
            self.depth,
            self.vl15q
                .iter()
                .map(|e| (e.dest, e.seen, e.alt.is_some(), e.exit))
                .collect::<Vec<_>>()
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
        let beats = (MAD_BYTES / beat_bytes(self.port.data_w)) as u64;
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
                .is_some_and(|(_, hi)| hi + 10_000 < self.port.cycle && e.alt.is_none())
        }) {
            self.vl15q.pop_front();
        }
    }

    fn match_vl15(&mut self, now: u64) {
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
            let _ = now;
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
        let psn_obs = if b.len() >= 20 {
            u32::from_be_bytes([0, b[17], b[18], b[19]])
        } else {
            0
        };
        let optional: u32 = self
            .txq
            .iter()
            .flat_map(|q| q.iter())
            .filter(|t| t.optional)
            .count() as u32;
        // A packet the link gate discarded still took its PSN.
        let psn = if optional > 0
            && psn_obs.wrapping_sub(self.next_psn) & 0xFF_FFFF <= optional
        {
            psn_obs
        } else {
            self.next_psn
        };
        for s in 0..3 {
            let mut skip = 0;
            for (k, t) in self.txq[s].iter().enumerate() {
                let m = CaModel::new(t.cfg);
                let p = m.tx(&t.tin, psn);
                match &p.out {
                    TxOut::Wire(w) if w == b => {
                        self.expected.add(Ctr::TxVl15Pkts, 1);
                        self.expected.add(Ctr::TxWords, u32::from(SMP_PKT_LEN));
                        self.stats.wire_tx += 1;
                        self.stats.tx_gated += skip;
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
        let heads: Vec<String> = self
            .txq
            .iter()
            .map(|q| {
                q.iter()
                    .find_map(|t| match CaModel::new(t.cfg).tx(&t.tin, psn).out {
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

    /// Everything predicted has come out (optional expectations aside).
    pub fn settled(&self) -> bool {
        self.injected.is_empty()
            && self.arrived.is_empty()
            && self.carry.is_none()
            && self.vl15q.iter().all(|e| e.seen || e.dest == Dest::Discard || e.alt.is_some())
            && self.drxq.is_empty()
            && self.txq.iter().all(|q| {
                q.iter()
                    .all(|t| t.optional || !matches!(CaModel::new(t.cfg).tx(&t.tin, 0).out, TxOut::Wire(_)))
            })
            && self.port.sources_idle()
    }

    /// Step until every prediction has come out and the port reports
    /// `idle_o`; an error after `bound` cycles (a lockup or a lost packet).
    /// Returns the cycles it took. Expectations left open (ambiguous drops,
    /// packets a link-down may have discarded) are then resolved as dropped.
    pub fn drain(&mut self, bound: u64) -> Result<u64> {
        let start = self.port.cycle;
        loop {
            self.step()?;
            if self.settled() && self.port.idle && self.requests.is_empty() {
                break;
            }
            if self.port.cycle - start > bound {
                let open: Vec<String> = self
                    .vl15q
                    .iter()
                    .filter(|e| !e.seen && e.dest != Dest::Discard && e.alt.is_none())
                    .map(|e| format!("{:?} {} arrived {}", e.dest, e.tag, e.arrived))
                    .take(5)
                    .collect();
                bail!(
                    "not drained after {bound} cycles (lockup or lost packet): idle_o {}, {} RX packets not arrived, {} undelivered MADs {open:?}, {} data RX packets, TX {:?} waiting, requests unanswered {}",
                    self.port.idle,
                    self.injected.len(),
                    self.vl15q.iter().filter(|e| !e.seen && e.dest != Dest::Discard && e.alt.is_none()).count(),
                    self.drxq.len(),
                    self.txq.iter().map(|q| q.len()).collect::<Vec<_>>(),
                    self.requests.len(),
                );
            }
        }
        // what has not come out by now never will
        for e in self.vl15q.drain(..) {
            if let (false, Some((_, drop))) = (e.seen, e.alt) {
                self.expected.merge(&drop);
            }
        }
        for q in self.txq.iter_mut() {
            // each was committed to the TX buffer (taking its PSN) and
            // discarded whole by the link gate
            let gated = q
                .iter()
                .filter(|t| t.optional)
                .filter(|t| matches!(CaModel::new(t.cfg).tx(&t.tin, 0).out, TxOut::Wire(_)))
                .count() as u32;
            self.stats.tx_gated += u64::from(gated);
            self.next_psn = (self.next_psn + gated) & 0xFF_FFFF;
            q.clear();
        }
        Ok(self.port.cycle - start)
    }

    /// Read every counter over the register bus (one cycle each).
    pub fn read_counters(&mut self) -> Result<CtrDelta> {
        let mut d = CtrDelta::default();
        for c in Ctr::ALL {
            d.0[c as usize] = self.step_read(reg::CTR_BASE + c as u8)?;
        }
        Ok(d)
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

    /// Read the counters and compare them with the model's; a mismatch is
    /// recorded (and returned as an error).
    pub fn check_counters(&mut self) -> Result<CtrDelta> {
        let actual = self.read_counters()?;
        let want = self.expected_counters(&actual);
        if actual != want {
            let d = actual.diff(&want);
            self.error(format!("counters (RTL vs model): {}", d.join(", ")));
            bail!("counters differ (RTL vs model): {}", d.join(", "));
        }
        Ok(actual)
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
        None => format!("{} vs {} bytes, one a prefix of the other", a.len(), b.len()),
    }
}
