//! The scoreboard: the Verilated switch driven and checked against
//! [`super::SwitchModel`] transaction by transaction and counter by counter.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use anyhow::{bail, Context, Result};
use vl15_bindings::dev::{DevIn, DevOut, PortIn, PortOut};

use crate::agents::node_sma::Net;
use crate::model::device::SmiMeta;
use crate::model::dut::Dut;
use crate::model::net::Driver as NetDriver;
use crate::model::regmap::swreg;
use crate::model::stream::{beat_bytes, to_beats, Beat, Gate, Pattern, Rng, Sink, Source};
use crate::model::trace::PortLog;
use crate::model::twin::{self, DeviceSpec, Fidelity};
use crate::proto::mad::{self, Mad};
use crate::proto::pcap::{port_name, TraceFile};

use super::*;

/// Where the scoreboard sees a packet leave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dest {
    Wire(u8),
    Sma,
    Sm,
    Gmp,
}

/// One expected packet.
#[derive(Clone, Debug)]
struct Exp {
    bytes: Vec<u8>,
    meta: Option<SmiMeta>,
    bad: bool,
    sq: bool,
    /// The input slot it held: (port, lane, sequence number).
    origin: Option<(u8, Lane, u64)>,
    class: FaultClass,
}

impl Exp {
    fn matches(&self, bytes: &[u8], meta: Option<SmiMeta>, bad: bool) -> bool {
        if self.meta != meta || self.bad != bad || self.bytes.len() != bytes.len() {
            return false;
        }
        if self.sq {
            bytes.len() > PSN_OFFSET + 3 && with_psn(&self.bytes, psn_of(bytes)) == bytes
        } else {
            self.bytes == bytes
        }
    }
}

fn psn_of(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[PSN_OFFSET], b[PSN_OFFSET + 1], b[PSN_OFFSET + 2]])
}

/// A packet queued on an input wire.
#[derive(Debug)]
struct Inj {
    beats: Vec<Beat>,
    bytes: Vec<u8>,
    class: FaultClass,
    expect: Expect,
    /// Bypass the slot limit and predict a full buffer (directed overflow).
    overflow: bool,
    /// Stop after this many beats (the link falls mid-packet).
    cut_at: Option<usize>,
    /// Its output's link will fall before it leaves: it is either sent into
    /// the falling link (swallowed) or dropped at its input (StateDrop);
    /// only the link counters are predicted, the rest is accounted after.
    gone: bool,
}

/// An input wire: queued packets at line rate, a gate for idle beats.
#[derive(Debug)]
struct Driver {
    q: VecDeque<Inj>,
    pos: usize,
    gate: Gate,
}

/// Patterns of one traffic phase.
#[derive(Clone, Debug)]
pub struct Patterns {
    /// Beats on each input wire (idle insertion; a wire has no ready).
    pub rx: Pattern,
    /// `tx_tready` of each output (backpressure), port p at index p−1.
    pub tx: Vec<Pattern>,
    /// `sma_rx_tready` / `sm_rx_tready`.
    pub host: Pattern,
}

impl Patterns {
    /// Every wire and interface at line rate, for a switch of `nports`.
    pub fn line_rate(nports: u8) -> Self {
        Patterns {
            rx: Pattern::Always,
            tx: vec![Pattern::Always; usize::from(nports)],
            host: Pattern::Always,
        }
    }
}

/// What the scoreboard counted.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Packets put on the input wires.
    pub injected: u64,
    /// Generated packets by class name.
    pub by_class: BTreeMap<&'static str, u64>,
    /// Expected packets seen where and as predicted (SMA answers included).
    pub matched: u64,
    /// Mismatches of any kind (bytes, order, counters, drain, disposition).
    pub mismatches: u64,
    /// The first mismatches, described.
    pub log: Vec<String>,
    /// Counter read-backs compared.
    pub counters_checked: u64,
    /// Packets in flight when a reset came (lost by design).
    pub lost_to_reset: u64,
    pub resets: u64,
    pub max_drain: u64,
    /// Packets sent into an output whose link fell (egress link down).
    pub egress_swallowed: u64,
    /// Packets put on each input wire, by port.
    pub wire_in: BTreeMap<u8, u64>,
    /// Packets seen leaving each output wire as predicted, by port.
    pub wire_out: BTreeMap<u8, u64>,
}

/// The Verilated switch (8 to 64 ports) under the scoreboard: a net of
/// one device, the switch, whose every port and host interface this bench
/// drives (it lends itself to the net as the switch's driver each cycle).
pub struct Bench {
    /// The switch's model (`ib_switch_top`'s tiles) behind the interface
    /// every Verilated top has, as the one device of a net.
    net: Net,
    /// The model's data path width, and its cycle count (the cycle being
    /// simulated while the net steps, the next one between steps).
    w: u32,
    clock: u64,
    radix: Radix,
    pin: Vec<PortIn>,
    pout: Vec<PortOut>,
    dout: DevOut,
    pub model: SwitchModel,
    drv: Vec<Driver>,
    tx: Vec<Sink<()>>,
    sma_rx: Sink<SmiMeta>,
    sm_rx: Sink<SmiMeta>,
    gmp_rx: Sink<()>,
    sma_tx: Source<SmiMeta>,
    sm_tx: Source<(u16, u8)>,
    trap_tx: Source<()>,
    gmp_tx: Source<()>,
    exp: BTreeMap<Dest, BTreeMap<(u8, Lane), VecDeque<Exp>>>,
    ctr_exp: BTreeMap<(Bank, u8), u32>,
    /// Per (input, lane): packets holding a slot, oldest first.
    inflight: HashMap<(u8, Lane), VecDeque<u64>>,
    seq: HashMap<(u8, Lane), u64>,
    psns: HashSet<u32>,
    link_up: Vec<bool>,
    reg_w: Option<(u16, u32)>,
    reg_r: Option<u16>,
    read_val: u32,
    pub tally: Tally,
    /// Test hook: flip one byte of the next expected wire packet, so the
    /// scoreboard must report a mismatch.
    pub corrupt_next: bool,
    tid: u64,
    /// Every packet on the external ports' wires as a pcapng trace
    /// ([`Bench::log_wire`]): the file and each port's log.
    wire_log: Option<(TraceFile, Vec<PortLog>)>,
}

const LOG_MAX: usize = 20;

impl Bench {
    /// A reset, programmed 8-port switch (ports 1..=6 Active, 7 Init, 8
    /// Down) at DataW 64.
    pub fn new(seed: u64) -> Result<Bench> {
        Bench::with_width(seed, 64)
    }

    /// [`Bench::new`] at DataW `w` (64 or 128).
    pub fn with_width(seed: u64, w: u32) -> Result<Bench> {
        Bench::with_radix(seed, w, u32::from(NPORTS))
    }

    /// A reset, programmed switch of `nports` external ports (8..=64:
    /// 1..=N−2 Active, N−1 Init, N Down, the LFT of [`bench_lft`]) at
    /// DataW `w`. Another port count is an error.
    pub fn with_radix(seed: u64, w: u32, nports: u32) -> Result<Bench> {
        Bench::with_fidelity(seed, w, nports, Fidelity::Rtl)
    }

    /// [`Bench::with_radix`] with the switch's model chosen by `f`: the
    /// RTL, the twin, or both in lockstep (every output compared in every
    /// cycle).
    pub fn with_fidelity(seed: u64, w: u32, nports: u32, f: Fidelity) -> Result<Bench> {
        let radix = Radix::new(nports)?;
        let mut dev: Box<dyn Dut> = twin::backend(f)
            .build(DeviceSpec::Switch {
                nports: radix.nports(),
                data_w: w,
            })
            .with_context(|| format!("the {nports}-port switch model at DataW {w}"))?;
        if dev.num_ports() != nports || dev.data_w() != w {
            bail!(
                "switch binding has {} ports at DataW {}",
                dev.num_ports(),
                dev.data_w()
            );
        }
        dev.reset(4)?;
        let n = usize::from(radix.nports());
        let mut net = Net::bench();
        // The scoreboard sees every packet; a soak keeps no trace.
        net.opts.trace = false;
        net.add_lent("switch", dev);
        let clock = net.cycle;
        let mut b = Bench {
            net,
            w,
            clock,
            radix,
            pin: vec![PortIn::default(); n],
            pout: vec![PortOut::default(); n],
            dout: DevOut::default(),
            model: SwitchModel::new(SwitchState::after_reset(radix.nports())),
            drv: (0..n)
                .map(|_| Driver {
                    q: VecDeque::new(),
                    pos: 0,
                    gate: Gate::new(Pattern::Always),
                })
                .collect(),
            tx: (0..n).map(|_| Sink::new(Pattern::Always)).collect(),
            sma_rx: Sink::new(Pattern::Always),
            sm_rx: Sink::new(Pattern::Always),
            gmp_rx: Sink::new(Pattern::Always),
            sma_tx: Source::new(w, Pattern::Always),
            sm_tx: Source::new(w, Pattern::Always),
            trap_tx: Source::new(w, Pattern::Always),
            gmp_tx: Source::new(w, Pattern::Always),
            exp: BTreeMap::new(),
            ctr_exp: BTreeMap::new(),
            inflight: HashMap::new(),
            seq: HashMap::new(),
            psns: HashSet::new(),
            link_up: vec![true; n],
            reg_w: None,
            reg_r: None,
            read_val: 0,
            tally: Tally::default(),
            corrupt_next: false,
            tid: seed << 20,
            wire_log: None,
        };
        b.program()?;
        Ok(b)
    }

    /// Write every packet into and out of the external ports from now on
    /// into `file`, on interfaces `<prefix>switch[<port>]`.
    pub fn log_wire(&mut self, file: TraceFile, prefix: &str) {
        let ports = (1..=self.pin.len() as u8)
            .map(|p| PortLog::new(port_name(&format!("{prefix}switch"), p)))
            .collect();
        self.wire_log = Some((file, ports));
    }

    /// The wire log, once the run is over.
    pub fn take_wire_log(&mut self) -> Option<TraceFile> {
        self.wire_log.take().map(|(f, ..)| f)
    }

    /// Log this cycle's wire beats (inputs as driven, outputs as taken).
    fn log_cycle(&mut self, now: u64) -> Result<()> {
        let Some((file, ports)) = self.wire_log.as_mut() else {
            return Ok(());
        };
        for (i, log) in ports.iter_mut().enumerate() {
            let (pi, po) = (&self.pin[i], &self.pout[i]);
            let rx = pi.rx_tvalid.then_some(Beat {
                data: pi.rx_tdata,
                keep: pi.rx_tkeep,
                last: pi.rx_tlast,
            });
            let tx = (po.tx_tvalid && pi.tx_tready).then_some(Beat {
                data: po.tx_tdata,
                keep: po.tx_tkeep,
                last: po.tx_tlast,
            });
            log.cycle(file, now, pi.link_up, rx.as_ref(), tx.as_ref())?;
        }
        Ok(())
    }

    /// The switch's model (to open its waveform dump).
    pub fn dut(&mut self) -> &mut dyn Dut {
        self.net.dut_mut(0)
    }

    /// The switch's radix.
    pub fn radix(&self) -> Radix {
        self.radix
    }

    pub fn cycle_count(&self) -> u64 {
        self.clock
    }

    fn mismatch(&mut self, s: String) {
        self.tally.mismatches += 1;
        if self.tally.log.len() < LOG_MAX {
            self.tally.log.push(format!("cycle {}: {s}", self.clock));
        }
    }

    pub fn write_reg(&mut self, a: u16, v: u32) -> Result<()> {
        self.reg_w = Some((a, v));
        self.cycle()
    }

    pub fn read_reg(&mut self, a: u16) -> Result<u32> {
        self.reg_r = Some(a);
        self.cycle()?;
        Ok(self.read_val)
    }

    /// Program the bench's LFT, LinearFDBTop, LID and PortStates, and make
    /// the model's state the same.
    pub fn program(&mut self) -> Result<()> {
        let r = self.radix;
        let want = bench_state(r);
        self.write_reg(swreg::NUM_PORTS, u32::from(r.nports()))?;
        self.write_reg(swreg::PORT0_LID, u32::from(PORT0_LID))?;
        let mut words: BTreeMap<u16, [u8; 4]> = BTreeMap::new();
        for (lid, _) in bench_lft(r) {
            let w = lid / 4;
            let mut e = [0u8; 4];
            for (i, x) in e.iter_mut().enumerate() {
                *x = want.lft[usize::from(w * 4) + i];
            }
            words.insert(w, e);
        }
        for (w, e) in words {
            self.write_reg(swreg::LFT_BASE + w, u32::from_le_bytes(e))?;
        }
        self.write_reg(swreg::LINEAR_FDB_TOP, u32::from(r.lft_top()))?;
        self.write_reg(swreg::MASTER_SM_LID, u32::from(MASTER_SM_LID))?;
        self.write_reg(swreg::MASTER_SM_SL, u32::from(MASTER_SM_SL))?;
        for p in 1..=r.nports() {
            let st = want.state[usize::from(p)];
            if st != ps::INIT {
                self.write_reg(swreg::PORT_STATE + u16::from(p), u32::from(st))?;
            }
        }
        self.cycle()?;
        self.model.s = want;
        self.check_port_states();
        Ok(())
    }

    fn check_port_states(&mut self) {
        for p in 1..=self.radix.nports() {
            let rtl = self.pout[usize::from(p) - 1].port_state;
            let m = self.model.s.state[usize::from(p)];
            if rtl != m {
                self.mismatch(format!("port {p} PortState: RTL {rtl}, model {m}"));
            }
        }
    }

    /// Set the traffic patterns of the wires and interfaces.
    pub fn set_patterns(&mut self, p: &Patterns) {
        for d in &mut self.drv {
            d.gate.set(p.rx.clone());
        }
        for (s, t) in self.tx.iter_mut().zip(&p.tx) {
            s.set_pattern(t.clone());
        }
        self.sma_rx.set_pattern(p.host.clone());
        self.sm_rx.set_pattern(p.host.clone());
    }

    /// Queue a generated packet on its input wire.
    pub fn push(&mut self, g: GenPacket) {
        self.push_inj(g, false, None);
    }

    fn push_inj(&mut self, g: GenPacket, overflow: bool, cut_at: Option<usize>) {
        self.push_full(g, overflow, cut_at, false);
    }

    fn push_full(&mut self, g: GenPacket, overflow: bool, cut_at: Option<usize>, gone: bool) {
        *self.tally.by_class.entry(g.class.name()).or_default() += 1;
        if let Some(h) = g.host {
            // Port 0's host: predicted now (its source keeps the order).
            let mad = <Mad>::try_from(&g.bytes[..]);
            let (pr, lane) = match (h, mad) {
                (HostSend::Gmp, _) => {
                    let w = &g.bytes[..g.bytes.len().saturating_sub(VCRC_BYTES)];
                    self.gmp_tx.push(w, ());
                    (self.model.gmp_send(w), Lane::GmpTx)
                }
                (HostSend::Sm { dlid, sl }, Ok(m)) => {
                    self.sm_tx.push(&m, (dlid, sl));
                    (self.model.sm_send(&m, dlid, sl), Lane::Sm)
                }
                (HostSend::Trap, Ok(m)) => {
                    self.trap_tx.push(&m, ());
                    (self.model.trap_send(&m), Lane::Trap)
                }
                (_, Err(_)) => {
                    let n = g.bytes.len();
                    self.mismatch(format!("{}: a MAD of {n} bytes", g.class.name()));
                    return;
                }
            };
            self.check_disposition(&pr, g.class, g.expect, 0);
            self.book(&pr, 0, lane, None, g.class);
            self.tally.injected += 1;
            return;
        }
        let d = &mut self.drv[usize::from(g.port) - 1];
        d.q.push_back(Inj {
            beats: to_beats(&g.bytes, beat_bytes(self.w)),
            bytes: g.bytes,
            class: g.class,
            expect: g.expect,
            overflow,
            cut_at,
            gone,
        });
    }

    /// Generate a packet with the bench's generator (class by weight).
    pub fn gen(&mut self, rng: &mut Rng, fault_percent: u32) -> GenPacket {
        let class = if rng.chance(fault_percent) {
            pick(rng, &FaultClass::FAULTS)
        } else {
            pick(rng, &FaultClass::GOOD)
        };
        self.tid += 1;
        gen_packet(rng, self.radix, class, self.tid)
    }

    pub fn gen_class(&mut self, rng: &mut Rng, class: FaultClass) -> GenPacket {
        self.tid += 1;
        gen_packet(rng, self.radix, class, self.tid)
    }

    fn expect(&mut self, dest: Dest, key: (u8, Lane), mut e: Exp) {
        if self.corrupt_next && matches!(dest, Dest::Wire(_)) {
            self.corrupt_next = false;
            let i = e.bytes.len() / 2;
            e.bytes[i] ^= 0x01;
        }
        self.exp
            .entry(dest)
            .or_default()
            .entry(key)
            .or_default()
            .push_back(e);
    }

    /// The model's disposition must be the one the class definition gives.
    fn check_disposition(&mut self, pr: &Prediction, class: FaultClass, expect: Expect, p: u8) {
        let got = match pr.drop {
            Some((b, c)) => Expect::Dropped(b, c),
            None => Expect::Delivered,
        };
        if got != expect {
            self.mismatch(format!(
                "model disposition of {} on port {p}: {got:?}, the class says {expect:?}",
                class.name()
            ));
        }
    }

    /// Book a prediction: expected packets and counter changes.
    fn book(
        &mut self,
        pr: &Prediction,
        key_port: u8,
        sq_lane: Lane,
        origin: Option<(u8, Lane, u64)>,
        class: FaultClass,
    ) {
        for &(b, c, n) in &pr.ctrs {
            let v = self.ctr_exp.entry((b, c)).or_default();
            *v = v.wrapping_add(n);
        }
        for o in &pr.outs {
            let (dest, lane, bytes, meta, bad, sq) = match o {
                Out::Wire { port, bytes, sq } => {
                    let lane = match origin {
                        _ if *sq || key_port == 0 => sq_lane,
                        Some((_, l, _)) => l,
                        None => Lane::Vl15,
                    };
                    (Dest::Wire(*port), lane, bytes.clone(), None, false, *sq)
                }
                Out::Sma { mad, meta } => (
                    Dest::Sma,
                    Lane::Vl15,
                    mad.to_vec(),
                    Some(*meta),
                    false,
                    false,
                ),
                Out::Sm { mad, meta } => (
                    Dest::Sm,
                    Lane::Vl15,
                    mad.to_vec(),
                    Some(*meta),
                    false,
                    false,
                ),
                Out::Gmp { bytes, bad } => {
                    (Dest::Gmp, Lane::Data, bytes.clone(), None, *bad, false)
                }
            };
            self.expect(
                dest,
                (key_port, lane),
                Exp {
                    bytes,
                    meta,
                    bad,
                    sq,
                    origin,
                    class,
                },
            );
        }
    }

    fn release(&mut self, origin: Option<(u8, Lane, u64)>) {
        if let Some((p, l, s)) = origin {
            if let Some(q) = self.inflight.get_mut(&(p, l)) {
                while q.front().is_some_and(|&x| x <= s) {
                    q.pop_front();
                }
            }
        }
    }

    /// A packet seen at `dest`: it must be the next expected one of one of
    /// the queues for `dest`.
    fn observe(&mut self, dest: Dest, bytes: Vec<u8>, meta: Option<SmiMeta>, bad: bool) {
        let hit = self.exp.get(&dest).and_then(|qs| {
            qs.iter().find_map(|(k, q)| {
                q.front()
                    .filter(|e| e.matches(&bytes, meta, bad))
                    .map(|_| *k)
            })
        });
        let hit = hit.or_else(|| self.resync(dest, &bytes, meta, bad));
        let Some(k) = hit else {
            let heads: Vec<String> = self
                .exp
                .get(&dest)
                .map(|qs| {
                    qs.iter()
                        .filter_map(|(k, q)| {
                            q.front()
                                .map(|e| format!("{k:?}:{}({}B)", e.class.name(), e.bytes.len()))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let head: Vec<String> = bytes.iter().take(24).map(|b| format!("{b:02x}")).collect();
            self.mismatch(format!(
                "{dest:?}: unexpected packet of {} bytes (bad {bad}, meta {meta:?}) [{}], expected heads {heads:?}",
                bytes.len(),
                head.join("")
            ));
            return;
        };
        let e = self
            .exp
            .get_mut(&dest)
            .and_then(|qs| qs.get_mut(&k))
            .and_then(VecDeque::pop_front)
            .expect("matched head");
        self.tally.matched += 1;
        if let Dest::Wire(q) = dest {
            *self.tally.wire_out.entry(q).or_default() += 1;
        }
        self.release(e.origin);
        if e.sq {
            let psn = psn_of(&bytes);
            if !self.psns.insert(psn) {
                self.mismatch(format!("{dest:?}: PSN {psn:#x} sent twice"));
            }
        }
        if dest == Dest::Sma {
            if let Some(meta) = meta {
                self.answer(&bytes, meta, e.class);
            }
        }
    }

    /// No queue's head matches: if the packet is deeper in a queue, the
    /// ones before it are missing or out of order — report them, drop them
    /// and match there (so one bad packet is one report, not a cascade).
    fn resync(
        &mut self,
        dest: Dest,
        bytes: &[u8],
        meta: Option<SmiMeta>,
        bad: bool,
    ) -> Option<(u8, Lane)> {
        let (k, i) = self.exp.get(&dest).and_then(|qs| {
            qs.iter().find_map(|(k, q)| {
                q.iter()
                    .position(|e| e.matches(bytes, meta, bad))
                    .map(|i| (*k, i))
            })
        })?;
        let skipped: Vec<Exp> = self
            .exp
            .get_mut(&dest)
            .and_then(|qs| qs.get_mut(&k))
            .map(|q| q.drain(..i).collect())
            .unwrap_or_default();
        self.mismatch(format!(
            "{dest:?} {k:?}: a packet arrived with {i} expected before it missing or out of order (first: {})",
            skipped[0].class.name()
        ));
        Some(k)
    }

    /// The port-0 host's SMA: answers every request as GetResp (status 0,
    /// data = the request's data inverted), handing the request's meta back.
    fn answer(&mut self, req: &[u8], meta: SmiMeta, class: FaultClass) {
        let mut m: Mad = [0; 256];
        m.copy_from_slice(req);
        mad::make_response(&mut m, 0);
        for b in mad::data_mut(&mut m) {
            *b = !*b;
        }
        let pr = self.model.sma_send(&m, &meta);
        self.book(&pr, 0, Lane::Sma, None, class);
        self.sma_tx.push(&m, meta);
    }

    fn busy_inputs(&self) -> bool {
        self.drv.iter().any(|d| !d.q.is_empty())
            || !self.sm_tx.idle()
            || !self.trap_tx.idle()
            || !self.gmp_tx.idle()
    }

    fn expected_left(&self) -> usize {
        self.exp
            .values()
            .flat_map(|qs| qs.values())
            .map(VecDeque::len)
            .sum()
    }

    /// One clock cycle of the switch with every driver and sink.
    pub fn cycle(&mut self) -> Result<()> {
        let now = self.clock;
        // The bench is the switch's driver: it lends itself to the net,
        // which it owns, for the cycle.
        let mut net = std::mem::take(&mut self.net);
        let r = net.step_lending(0, self);
        self.net = net;
        r.with_context(|| format!("cycle {now} of the switch bench (an RTL assertion?)"))
    }

    /// The inputs of this cycle: the wires in (predicting every packet as
    /// it starts), the host side, the register bus.
    fn inputs(&mut self) -> DevIn {
        // Everything that held a slot has left once the switch is idle and
        // nothing is arriving.
        if self.dout.idle && self.drv.iter().all(|d| d.pos == 0) {
            for q in self.inflight.values_mut() {
                q.clear();
            }
        }
        // Input wires.
        for i in 0..self.drv.len() {
            let p = i as u8 + 1;
            let pi = &mut self.pin[i];
            pi.rx_tvalid = false;
            pi.rx_tlast = false;
            pi.link_up = self.link_up[i];
            pi.tx_tready = self.tx[i].ready();
            if self.drv[i].q.is_empty() || !self.drv[i].gate.open() {
                continue;
            }
            if self.drv[i].pos == 0 {
                // A new packet: predict it, unless its buffer is full.
                let inj = self.drv[i].q.front().expect("checked");
                let pr = if inj.overflow {
                    self.model.buffer_full(p, &inj.bytes)
                } else if inj.cut_at.is_some() {
                    let mut pr = Prediction::default();
                    pr.dropped(Bank::Ext(p), ctr::LINK_DOWN_DROP);
                    pr
                } else if inj.gone {
                    let mut pr = Prediction::default();
                    let w = &inj.bytes;
                    pr.add(Bank::Ext(p), ctr::RX_PKTS, 1);
                    pr.add(Bank::Ext(p), ctr::RX_WORDS, u32::from(be16(w, 4) & 0x7FF));
                    pr.slot = Some(if w[0] >> 4 == VL15 {
                        Lane::Vl15
                    } else {
                        Lane::Data
                    });
                    pr
                } else {
                    self.model.ingress(p, &inj.bytes)
                };
                let (class, expect) = (inj.class, inj.expect);
                if let Some(l) = pr.slot {
                    let depth = if l == Lane::Vl15 {
                        VL15_DEPTH
                    } else {
                        DATA_DEPTH
                    };
                    if self.inflight.get(&(p, l)).map_or(0, VecDeque::len) >= depth {
                        continue;
                    }
                }
                self.check_disposition(&pr, class, expect, p);
                let origin = pr.slot.map(|l| {
                    let s = self.seq.entry((p, l)).or_default();
                    *s += 1;
                    (p, l, *s)
                });
                if let Some((_, l, s)) = origin {
                    self.inflight.entry((p, l)).or_default().push_back(s);
                }
                self.book(&pr, p, Lane::Fwd, origin, class);
                self.tally.injected += 1;
                *self.tally.wire_in.entry(p).or_default() += 1;
            }
            let d = &mut self.drv[i];
            let inj = d.q.front().expect("checked");
            let b = inj.beats[d.pos];
            let cut = inj.cut_at;
            let pi = &mut self.pin[i];
            pi.rx_tdata = b.data;
            pi.rx_tkeep = b.keep;
            pi.rx_tvalid = true;
            pi.rx_tlast = b.last;
            d.pos += 1;
            if d.pos == d.q.front().map_or(0, |x| x.beats.len()) || cut == Some(d.pos) {
                d.q.pop_front();
                d.pos = 0;
            }
        }
        // Host side.
        let mut din = DevIn {
            sma_rx_tready: self.sma_rx.ready(),
            sm_rx_tready: self.sm_rx.ready(),
            ..DevIn::default()
        };
        self.gmp_rx.always();
        if let Some((b, m)) = self.sma_tx.present() {
            din.sma_tx_tdata = b.data;
            din.sma_tx_tvalid = true;
            din.sma_tx_tlast = b.last;
            din.sma_tx_slid = m.slid;
            din.sma_tx_dlid = m.dlid;
            din.sma_tx_sl = m.sl;
        }
        if let Some((b, (dlid, sl))) = self.sm_tx.present() {
            din.sm_tx_tdata = b.data;
            din.sm_tx_tvalid = true;
            din.sm_tx_tlast = b.last;
            din.sm_tx_dlid = dlid;
            din.sm_tx_sl = sl;
        }
        if let Some((b, ())) = self.trap_tx.present() {
            din.trap_tx_tdata = b.data;
            din.trap_tx_tvalid = true;
            din.trap_tx_tlast = b.last;
        }
        if let Some((b, ())) = self.gmp_tx.present() {
            din.gmp_tx_tdata = b.data;
            din.gmp_tx_tkeep = b.keep;
            din.gmp_tx_tvalid = true;
            din.gmp_tx_tlast = b.last;
        }
        if let Some((a, v)) = self.reg_w.take() {
            din.reg_we = true;
            din.reg_addr = a;
            din.reg_wdata = v;
        } else if let Some(a) = self.reg_r {
            din.reg_addr = a;
        }
        din
    }

    /// The outputs of cycle `now`, checked against the predictions.
    fn outputs(&mut self, now: u64, o: DevOut) -> Result<()> {
        self.dout = o;
        self.log_cycle(now)?;
        if self.reg_r.take().is_some() {
            self.read_val = o.reg_rdata;
        }
        self.sma_tx.taken(o.sma_tx_tready, now);
        self.sm_tx.taken(o.sm_tx_tready, now);
        self.trap_tx.taken(o.trap_tx_tready, now);
        self.gmp_tx.taken(o.gmp_tx_tready, now);
        // Outputs.
        for i in 0..self.tx.len() {
            let po = self.pout[i];
            let ready = self.pin[i].tx_tready;
            if ready && !po.tx_tvalid && self.tx[i].in_packet() {
                self.mismatch(format!("port {}: idle cycle inside a packet", i + 1));
            }
            let b = Beat {
                data: po.tx_tdata,
                keep: po.tx_tkeep,
                last: po.tx_tlast,
            };
            self.tx[i].observe(po.tx_tvalid, b, false, now, || ());
            while let Some(r) = self.tx[i].packets.pop_front() {
                self.observe(Dest::Wire(i as u8 + 1), r.bytes, None, false);
            }
        }
        let full_keep = crate::model::stream::full_keep(self.w);
        let full = |data: [u64; 2], last: bool| Beat {
            data,
            keep: full_keep,
            last,
        };
        // The RTL's sideband, M_Key verdict included: the models hold no
        // M_Key state (the soaks never set one), so they predict "no
        // violation, not masked", and a verdict the RTL raises at M_Key 0 is
        // a mismatch.
        let sma_meta = crate::model::device::sma_rx_meta(&o);
        self.sma_rx.observe(
            o.sma_rx_tvalid,
            full(o.sma_rx_tdata, o.sma_rx_tlast),
            false,
            now,
            || sma_meta,
        );
        while let Some(r) = self.sma_rx.packets.pop_front() {
            self.observe(Dest::Sma, r.bytes, Some(r.meta), false);
        }
        let sm_meta = crate::model::device::sm_rx_meta(&o);
        self.sm_rx.observe(
            o.sm_rx_tvalid,
            full(o.sm_rx_tdata, o.sm_rx_tlast),
            false,
            now,
            || sm_meta,
        );
        while let Some(r) = self.sm_rx.packets.pop_front() {
            self.observe(Dest::Sm, r.bytes, Some(r.meta), false);
        }
        let gb = Beat {
            data: o.gmp_rx_tdata,
            keep: o.gmp_rx_tkeep,
            last: o.gmp_rx_tlast,
        };
        self.gmp_rx
            .observe(o.gmp_rx_tvalid, gb, o.gmp_rx_tuser, now, || ());
        while let Some(r) = self.gmp_rx.packets.pop_front() {
            self.observe(Dest::Gmp, r.bytes, None, r.bad);
        }
        Ok(())
    }

    /// Run until every queued packet has entered the switch.
    pub fn run_inputs(&mut self, max_cycles: u64) -> Result<()> {
        let start = self.clock;
        while self.busy_inputs() {
            if self.clock - start > max_cycles {
                bail!("inputs not taken within {max_cycles} cycles");
            }
            self.cycle()?;
        }
        Ok(())
    }

    /// After the last input beat: run until the switch is idle with nothing
    /// expected left (and the SMA's answers sent). Returns the drain time;
    /// a drain longer than `bound`, or expected packets that never came, are
    /// mismatches.
    pub fn drain(&mut self, bound: u64) -> Result<u64> {
        self.run_inputs(10_000_000)?;
        let start = self.clock;
        let mut idle_run = 0u64;
        loop {
            self.cycle()?;
            let t = self.clock - start;
            let quiet = self.dout.idle
                && self.sma_tx.idle()
                && !self.tx.iter().any(Sink::in_packet)
                && !self.sma_rx.in_packet()
                && !self.sm_rx.in_packet()
                && !self.gmp_rx.in_packet();
            if quiet && self.expected_left() == 0 {
                self.tally.max_drain = self.tally.max_drain.max(t);
                if t > bound {
                    self.mismatch(format!("drain took {t} cycles, bound {bound}"));
                }
                return Ok(t);
            }
            idle_run = if quiet { idle_run + 1 } else { 0 };
            if idle_run > 64 || t > bound.max(1) * 4 {
                // Idle (or stuck) with packets still expected: they are lost.
                let mut lost = Vec::new();
                for (dest, qs) in &self.exp {
                    for (k, q) in qs {
                        for e in q {
                            lost.push(format!("{dest:?} {k:?} {}", e.class.name()));
                        }
                    }
                }
                let n = lost.len();
                lost.truncate(8);
                self.mismatch(format!(
                    "{n} expected packets never came (switch idle {}, after {t} cycles): {lost:?}",
                    self.dout.idle
                ));
                self.exp.clear();
                self.tally.max_drain = self.tally.max_drain.max(t);
                return Ok(t);
            }
        }
    }

    /// Read every counter back and compare with the model; check that every
    /// PSN the send engine used is below its packet count.
    pub fn check_counters(&mut self) -> Result<()> {
        let mut banks: Vec<Bank> = (1..=self.radix.nports()).map(Bank::Ext).collect();
        banks.push(Bank::Port0);
        banks.push(Bank::Gmp);
        for b in banks {
            for c in 0..b.counters() {
                let v = self.read_reg(b.addr(c))?;
                let want = self.ctr_exp.get(&(b, c)).copied().unwrap_or(0);
                self.tally.counters_checked += 1;
                if v != want {
                    self.mismatch(format!("counter {}: RTL {v}, model {want}", b.name(c)));
                }
            }
        }
        let sq = self
            .ctr_exp
            .get(&(Bank::Port0, ctr::P0_SQ_PKTS))
            .copied()
            .unwrap_or(0);
        if let Some(&max) = self.psns.iter().max() {
            if max >= sq {
                self.mismatch(format!("PSN {max:#x} used, but only {sq} SMPs were sent"));
            }
        }
        Ok(())
    }

    /// Preset every counter to a value of its own through the simulation-
    /// only counter write (docs/fabric.md register map), as the console's
    /// PerformanceSet does; the model counts on from it, so the next
    /// [`SwitchBench::check_counters`] checks the write and the count after
    /// it. Call it drained. The values come from a generator of their own:
    /// the soak's draws are not touched.
    pub fn preset_counters(&mut self) -> Result<()> {
        let mut rng = crate::model::stream::Rng::new(0xC0DE ^ self.tally.counters_checked);
        let mut banks: Vec<Bank> = (1..=self.radix.nports()).map(Bank::Ext).collect();
        banks.push(Bank::Port0);
        banks.push(Bank::Gmp);
        for b in banks {
            for c in 0..b.counters() {
                let v = (rng.next_u64() as u32) >> 1;
                self.write_reg(b.addr(c), v)?;
                self.ctr_exp.insert((b, c), v);
            }
        }
        Ok(())
    }

    /// Directed: stall output q, send more VL15 packets to it from one input
    /// than the input has slots: the first `VL15_DEPTH` wait and are
    /// delivered, the rest are dropped (Vl15Dropped).
    pub fn vl15_overflow(&mut self, rng: &mut Rng, extra: usize) -> Result<()> {
        self.overflow(rng, extra, false)
    }

    /// The same for the data buffer (`DATA_DEPTH` slots, DataDropped).
    pub fn data_overflow(&mut self, rng: &mut Rng, extra: usize) -> Result<()> {
        self.overflow(rng, extra, true)
    }

    fn overflow(&mut self, rng: &mut Rng, extra: usize, data: bool) -> Result<()> {
        let r = self.radix;
        let p = range(rng, 1, r.active().into()) as u8;
        let q = active_other(rng, r, p);
        let (depth, c) = if data {
            (DATA_DEPTH, ctr::DATA_DROPPED)
        } else {
            (VL15_DEPTH, ctr::VL15_DROPPED)
        };
        self.tx[usize::from(q) - 1].hold = true;
        for k in 0..depth + extra {
            self.tid += 1;
            let dlid = lid_to(r, q, rng);
            let bytes = if data {
                let len = range(rng, 0, 4000) as usize;
                data_wire(range(rng, 0, 7) as u8, dlid, 0x20, 2, len, rng)
            } else {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, self.tid);
                smp_wire(dlid, 0x20, &m, rng)
            };
            let over = k >= depth;
            let g = GenPacket {
                host: None,
                class: match (over, data) {
                    (false, false) => FaultClass::GoodLidSmp,
                    (false, true) => FaultClass::GoodData,
                    (true, false) => FaultClass::Vl15Overflow,
                    (true, true) => FaultClass::DataOverflow,
                },
                port: p,
                bytes,
                expect: if over {
                    Expect::Dropped(Bank::Ext(p), c)
                } else {
                    Expect::Delivered
                },
            };
            self.push_inj(g, over, None);
        }
        self.run_inputs(1_000_000)?;
        for _ in 0..200 {
            self.cycle()?;
        }
        self.tx[usize::from(q) - 1].hold = false;
        Ok(())
    }

    /// Directed: the link of an input falls in the middle of a packet; the
    /// packet is dropped whole (LinkDownDrop), PortState goes Down, then
    /// Init when the link returns (the SMA would then make it Active again:
    /// Port `p`'s link falls (`up` false: PortState Down) or rises (Init),
    /// then `cycles` cycles run and the port states are checked.
    fn link_edge(&mut self, p: u8, up: bool, cycles: u64) -> Result<()> {
        self.link_up[usize::from(p) - 1] = up;
        self.model.s.state[usize::from(p)] = if up { ps::INIT } else { ps::DOWN };
        for _ in 0..cycles {
            self.cycle()?;
        }
        self.check_port_states();
        Ok(())
    }

    /// Write port `p`'s PortState and run the cycle that takes it.
    fn write_state(&mut self, p: u8, st: u8) -> Result<()> {
        self.write_reg(swreg::PORT_STATE + u16::from(p), u32::from(st))?;
        self.cycle()?;
        self.model.s.state[usize::from(p)] = st;
        Ok(())
    }

    /// the bench writes it).
    pub fn link_down_mid_packet(&mut self, rng: &mut Rng) -> Result<()> {
        let g = self.gen_class(rng, FaultClass::LinkDown);
        let p = g.port;
        let beats = g.bytes.len().div_ceil(beat_bytes(self.w));
        let cut = range(rng, 1, beats as u64 - 1) as usize;
        let g = GenPacket {
            host: None,
            expect: Expect::Dropped(Bank::Ext(p), ctr::LINK_DOWN_DROP),
            ..g
        };
        self.push_inj(g, false, Some(cut));
        self.run_inputs(100_000)?;
        self.link_edge(p, false, range(rng, 2, 40))?;
        self.link_edge(p, true, 4)?;
        // back to Active the spec's way, through Armed; the link falls once
        // more while Armed (PortState Armed to Down, then Init again)
        self.write_state(p, ps::ARMED)?;
        self.check_port_states();
        self.link_edge(p, false, range(rng, 2, 10))?;
        self.link_edge(p, true, 4)?;
        self.write_state(p, ps::ARMED)?;
        self.write_state(p, ps::ACTIVE)?;
        self.check_port_states();
        Ok(())
    }

    /// Directed: an output's link falls while packets for it wait (the
    /// output stalled): a packet already granted to it is sent into the
    /// dead link (swallowed, counted FwdPkts at its input), one decided
    /// after is dropped at its input (StateDrop); none may appear, whole or
    /// in part, on that output, then or after the link returns. Returns
    /// (packets, swallowed, of those counted in the output's Tx counters).
    pub fn egress_link_down(&mut self, rng: &mut Rng) -> Result<(u32, u32, u32)> {
        let r = self.radix;
        let q = range(rng, 1, r.active().into()) as u8;
        let qi = usize::from(q) - 1;
        self.tx[qi].hold = true;
        let mut per_in: BTreeMap<u8, u32> = BTreeMap::new();
        // At most a buffer's worth per input and lane: the output is
        // stalled, so nothing leaves before the link falls.
        let mut used: HashMap<(u8, bool), usize> = HashMap::new();
        let k = range(rng, 2, 10);
        for _ in 0..k {
            let vl15 = rng.chance(50);
            let depth = if vl15 { VL15_DEPTH } else { DATA_DEPTH };
            let p = loop {
                let p = active_other(rng, r, q);
                let u = used.entry((p, vl15)).or_default();
                if *u < depth {
                    *u += 1;
                    break p;
                }
            };
            self.tid += 1;
            let bytes = if vl15 {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, self.tid);
                let dl = lid_to(r, q, rng);
                smp_wire(dl, 0x20, &m, rng)
            } else {
                let vl = range(rng, 0, 7) as u8;
                let dl = lid_to(r, q, rng);
                let len = range(rng, 0, 500) as usize;
                data_wire(vl, dl, 0x20, 2, len, rng)
            };
            *per_in.entry(p).or_default() += 1;
            let g = GenPacket {
                host: None,
                class: FaultClass::EgressLinkDown,
                port: p,
                bytes,
                expect: Expect::Delivered,
            };
            self.push_full(g, false, None, true);
        }
        self.run_inputs(100_000)?;
        for _ in 0..range(rng, 0, 200) {
            self.cycle()?;
        }
        self.link_up[qi] = false;
        self.model.s.state[usize::from(q)] = ps::DOWN;
        for _ in 0..range(rng, 2, 50) {
            self.cycle()?;
        }
        // The wire is down: nothing may show, stalled or not.
        self.tx[qi].hold = false;
        for _ in 0..600 {
            self.cycle()?;
        }
        self.check_port_states();
        self.link_up[qi] = true;
        self.model.s.state[usize::from(q)] = ps::INIT;
        for _ in 0..4 {
            self.cycle()?;
        }
        self.write_reg(swreg::PORT_STATE + u16::from(q), u32::from(ps::ARMED))?;
        self.cycle()?;
        self.model.s.state[usize::from(q)] = ps::ARMED;
        self.check_port_states();
        self.write_reg(swreg::PORT_STATE + u16::from(q), u32::from(ps::ACTIVE))?;
        self.cycle()?;
        self.model.s.state[usize::from(q)] = ps::ACTIVE;
        self.check_port_states();
        self.drain(drain_bound(r.nports()))?;
        // Account: each input forwarded or state-dropped each of its packets.
        let mut swallowed = 0u32;
        for (p, n) in per_in {
            let mut d = [0u32; 2];
            for (i, c) in [ctr::FWD_PKTS, ctr::STATE_DROP].into_iter().enumerate() {
                let v = self.read_reg(Bank::Ext(p).addr(c))?;
                let e = self.ctr_exp.entry((Bank::Ext(p), c)).or_default();
                d[i] = v.wrapping_sub(*e);
                *e = v;
            }
            if d[0].wrapping_add(d[1]) != n {
                self.mismatch(format!(
                    "egress link down on port {q}: input {p} sent {n} packets to it, FwdPkts +{} StateDrop +{}",
                    d[0], d[1]
                ));
            }
            swallowed = swallowed.wrapping_add(d[0]);
        }
        let mut tx_counted = 0u32;
        for c in [ctr::TX_VL15_PKTS, ctr::TX_DATA_PKTS, ctr::TX_WORDS] {
            let v = self.read_reg(Bank::Ext(q).addr(c))?;
            let e = self.ctr_exp.entry((Bank::Ext(q), c)).or_default();
            let d = v.wrapping_sub(*e);
            *e = v;
            if c != ctr::TX_WORDS {
                tx_counted = tx_counted.wrapping_add(d);
            }
        }
        if tx_counted > swallowed {
            self.mismatch(format!(
                "egress link down on port {q}: {tx_counted} packets counted sent, {swallowed} forwarded to it"
            ));
        }
        self.tally.egress_swallowed += u64::from(swallowed);
        Ok((k as u32, swallowed, tx_counted))
    }

    /// Directed: reset while packets are arriving and leaving. Whatever was
    /// in flight is lost; afterwards no output shows a beat, the switch is
    /// idle, every counter reads 0, and after programming it forwards again.
    pub fn reset_mid_traffic(&mut self, rng: &mut Rng, after_cycles: u64) -> Result<()> {
        for _ in 0..after_cycles {
            self.cycle()?;
        }
        self.tally.resets += 1;
        self.tally.lost_to_reset +=
            self.expected_left() as u64 + self.drv.iter().map(|d| d.q.len() as u64).sum::<u64>();
        for d in &mut self.drv {
            d.q.clear();
            d.pos = 0;
        }
        self.pin.iter_mut().for_each(|p| {
            p.rx_tvalid = false;
            p.rx_tlast = false;
        });
        self.net.reset_driven(0, range(rng, 1, 8) as u32)?;
        self.clock = self.net.cycle;
        let w = self.w;
        // Fresh host side: what was half received is gone with the wire.
        let pats: Vec<Pattern> = self.tx.iter().map(|_| Pattern::Always).collect();
        self.tx = pats.into_iter().map(Sink::new).collect();
        self.sma_rx = Sink::new(Pattern::Always);
        self.sm_rx = Sink::new(Pattern::Always);
        self.gmp_rx = Sink::new(Pattern::Always);
        self.sma_tx = Source::new(w, Pattern::Always);
        self.sm_tx = Source::new(w, Pattern::Always);
        self.trap_tx = Source::new(w, Pattern::Always);
        self.gmp_tx = Source::new(w, Pattern::Always);
        self.exp.clear();
        self.ctr_exp.clear();
        self.inflight.clear();
        self.psns.clear();
        self.model.s = SwitchState::after_reset(self.radix.nports());
        for _ in 0..300 {
            self.cycle()?;
            let o = self.dout;
            let any = self.pout.iter().any(|p| p.tx_tvalid)
                || o.sma_rx_tvalid
                || o.sm_rx_tvalid
                || o.gmp_rx_tvalid;
            if any {
                self.mismatch("a beat left the switch after reset with no input".into());
                break;
            }
        }
        if !self.dout.idle {
            self.mismatch("switch not idle 300 cycles after reset".into());
        }
        self.check_port_states();
        self.check_counters()?;
        self.program()
    }
}

impl NetDriver for Bench {
    fn drive(&mut self, now: u64, _link_rx: &[Option<Beat>], d: &mut DevIn, pin: &mut [PortIn]) {
        self.clock = now;
        *d = self.inputs();
        pin.copy_from_slice(&self.pin);
    }

    fn observe(&mut self, now: u64, o: &DevOut, pout: &[PortOut], next: u64) -> Result<bool> {
        self.clock = next;
        self.pout.copy_from_slice(pout);
        self.outputs(now, *o)?;
        Ok(!o.idle)
    }

    fn busy(&self) -> bool {
        self.drv.iter().any(|d| !d.q.is_empty())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
