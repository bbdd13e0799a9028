//! A fabric of RTL devices built from a topology file: every switch is a
//! Verilated `ib_switch_top`, every CA an `ib_ca_mp_top` (a one-port CA
//! `ib_ca_top` with [`NetOptions::ca_top`]), each with the node's agent
//! ([`NodeAgent`], the SMA) on its management side; links with a latency in
//! cycles join one device's TX to another's RX and can go down and up.
//!
//! Scheduling is event-driven: a device is clocked only in the cycles in
//! which it has work — its RTL is not idle (`idle_o`), a beat arrives on one
//! of its links, or its host side (SMA, SM, register bus) has something to
//! do. An idle device is not evaluated at all; when it wakes, its model is
//! told how many cycles it slept (`Dev::skip`), which changes nothing in an
//! idle model, so the fabric behaves exactly as if every device were clocked
//! every cycle, at a cost that follows the traffic, not the fabric size.
//!
//! A device can instead be driven by the testbench ([`Driver`]): its host
//! side and the ports without a link are the driver's, which sets the
//! model's inputs and reads its outputs in every cycle (a CA port on a
//! bench: [`crate::model::bench`]). A driven device is clocked every cycle;
//! its packets are traced as `name>peer` (or `name>tb` with no link) and
//! `tb>name` for what the driver itself put on the wire.

use crate::model::cells::{self, Outcome};
use std::any::Any;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use vl15_bindings::{
    Changed, DevIn, DevKind, DevOut, PortIn, PortOut, DEV_DATA_WIDTHS, MAX_SWITCH_PORTS,
};

use crate::model::device::{sm_rx_meta, sma_rx_meta, AddressHandle, CaPort, RecvQueue, SmiMeta};
use crate::model::dut::{
    bits, ca_mp_kind, drive_host, rest_dev_in, shows_host_beat, shows_tx_beat, Dut, HostBurst,
    HostIn, HostOut, HostTaken, TxBurst,
};
use crate::model::node_hw::{HwWrite, KeyViolation, NodeAgent, NodeHw};
use crate::model::regmap::{mpreg, swreg};
use crate::model::stream::{Beat, PacketAssembler, Pattern, Sink, Source};
use crate::model::trace::{TraceEntry, Waves};
use crate::model::twin::{self, DeviceSpec, Fidelity, FidelityChoice};
use crate::model::wirefault::{FaultSpec, WireFault};
use crate::proto::mad::{self, Mad};
use crate::proto::packet::consts::CLASS_SUBN_LID;
use crate::proto::packet::smp::be16;
use crate::proto::pcap::{port_name, Direction, LinkType, PcapError, TraceFile};
use crate::proto::topology::{NodeKind, Topology};
use crate::proto::InputError;

/// High bits of the TIDs of the traps the switches send.
const TRAP_TID_BASE: u64 = 0x7472_6170_0000_0000;

/// The data path width of the fabric's devices by default: the faster of
/// the two the models are built at (docs/scale.md).
pub const DEFAULT_DATA_W: u32 = 128;

pub use crate::model::device::{Wc, WcOpcode};

/// RTL counters an SMA response shows: (MAD offset, register), read while
/// the response waits for its service latency.
type CounterReads = Vec<(usize, u16)>;

/// Write a 32-bit RTL counter into a 16-bit MAD field, saturated (IBA
/// counters stop at their maximum; the RTL's wrap at 2^32).
fn put_sat16(m: &mut Mad, off: usize, v: u32) {
    let s = u16::try_from(v).unwrap_or(u16::MAX);
    m[off..off + 2].copy_from_slice(&s.to_be_bytes());
}

/// LFT entries of the switch model (`LftDepth`, SwitchInfo.LinearFDBCap).
pub const LFT_DEPTH: u16 = vl15_bindings::SWITCH_LFT_DEPTH;

/// Fabric settings.
#[derive(Debug, Clone)]
pub struct NetOptions {
    /// Cycles from a beat leaving one TX to entering the other RX (≥ 1).
    pub link_latency: u64,
    /// Cycles from an SMA request's last beat to its response being offered.
    pub sma_latency: u64,
    /// Cycles a link stays down when an SMA sets a port Down (retraining).
    pub retrain_cycles: u64,
    /// Record every packet on every link (for traces and snapshots).
    pub trace: bool,
    /// Cycles between repeats of a trap the SM has not repressed.
    pub trap_interval: u64,
    /// Threads that evaluate the devices with work in a cycle (1: the
    /// calling thread alone). Any count gives the same run.
    pub threads: usize,
    /// DataW of every device, in bits: one of
    /// [`DEV_DATA_WIDTHS`].
    pub data_w: u32,
    /// One-port CAs are `ib_ca_top`, the CA port itself, instead of
    /// `ib_ca_mp_top` with one port (the same port behind the port-tag
    /// mux and demux).
    pub ca_top: bool,
    /// Write every packet on every link to this pcapng file as the run
    /// goes ([`Net::log_wire`]), with this link type.
    pub pcap: Option<(std::path::PathBuf, LinkType)>,
    /// Dump every device's signals into an FST file in this directory,
    /// named after its node ([`crate::model::trace::Waves`]).
    pub wave: Option<std::path::PathBuf>,
    /// Which devices run as RTL and which as twins.
    pub fidelity: FidelityChoice,
    /// Step every model in every cycle it is not idle, as the RTL is: no
    /// calm periods, no bursts ahead (the twins' own per-cycle form, to
    /// check a run against).
    pub every_cycle: bool,
    /// Record every call made on each twin, with what it gave, so that
    /// its RTL can be replayed alone afterwards (`vl15 check-rtl`).
    pub record: Option<std::sync::Arc<crate::model::record::Recording>>,
}

impl Default for NetOptions {
    fn default() -> Self {
        NetOptions {
            link_latency: 4,
            sma_latency: 8,
            retrain_cycles: 8,
            trace: false,
            trap_interval: 100_000,
            threads: 1,
            data_w: DEFAULT_DATA_W,
            ca_top: false,
            pcap: None,
            wave: None,
            fidelity: FidelityChoice::default(),
            every_cycle: false,
            record: None,
        }
    }
}

/// The beats at the front of a cable's `pipe` that make a whole packet
/// arriving one a cycle from `now` on (the first due now, the last with
/// `last`), or 0.
fn whole_packet(pipe: &VecDeque<(u64, Beat)>, now: u64) -> usize {
    for (k, (due, b)) in pipe.iter().enumerate() {
        if *due != now + k as u64 {
            return 0;
        }
        if b.last {
            return k + 1;
        }
    }
    0
}

/// A step in cycle `now` against the MAD its model announced on a stream
/// to its host (`ahead`), with the stream's beat of the step: what the host
/// takes of it now (the burst and how many of its beats, from its first),
/// and whether the step's own beat is then taken as usual. Inside the
/// burst the step shows its beat again (kept, nothing taken until its last
/// beat, when the host takes it whole); a step that shows another beat
/// voids the rest (the host takes the beats before now and then this
/// step's).
fn host_out_step(
    ahead: &mut Option<HostBurst>,
    now: u64,
    o: &DevOut,
    s: HostOut,
) -> (Option<(HostBurst, usize)>, bool) {
    let Some(b) = ahead.as_ref() else {
        return (None, true);
    };
    if now < b.first {
        return (None, true);
    }
    let k = (now - b.first) as usize;
    let n = b.beats.len();
    let shows = b.beats.get(k).is_some_and(|x| shows_host_beat(o, s, x));
    match (shows, k + 1 == n) {
        (true, false) => (None, false),
        (true, true) => (ahead.take().map(|b| (b, n)), false),
        (false, _) => (ahead.take().map(|b| (b, k.min(n))), true),
    }
}

/// The SM `sm` takes the first `n` beats of MAD `b` its model announced
/// on `sm_rx`, each in its cycle, unless it attached in the middle of that
/// MAD (`skip`, cleared by its last beat).
fn feed_sm(sm: &mut SmHost, skip: &mut bool, b: &HostBurst, n: usize, keep: u16) {
    if !*skip {
        feed_sink(&mut sm.rx, b, n, keep, sm_rx_meta);
    }
    if b.beats[..n].last().is_some_and(|x| x.last) {
        *skip = false;
    }
}

/// `sink` takes the first `n` beats of MAD `b` (full beats of `keep`),
/// each in its cycle, with the sideband `meta` reads from `b.side`.
fn feed_sink(
    sink: &mut Sink<SmiMeta>,
    b: &HostBurst,
    n: usize,
    keep: u16,
    meta: fn(&DevOut) -> SmiMeta,
) {
    for (k, beat) in b.beats[..n].iter().enumerate() {
        sink.ready();
        let bt = Beat {
            data: beat.data,
            keep,
            last: beat.last,
        };
        sink.observe(true, bt, false, b.first + k as u64, || meta(&b.side));
    }
}

/// The sideband of an SMA answer with metadata `m` on `sma_tx`.
fn sma_tx_side(m: &SmiMeta) -> DevIn {
    DevIn {
        sma_tx_slid: m.slid,
        sma_tx_dlid: m.dlid,
        sma_tx_sl: m.sl,
        sma_tx_port: m.port,
        ..DevIn::default()
    }
}

/// The sideband of a trap for `port` on `trap_tx`.
fn trap_tx_side(port: u8) -> DevIn {
    DevIn {
        trap_tx_port: port,
        ..DevIn::default()
    }
}

/// The sideband of an SM request to `ah` from `port` on `sm_tx`.
fn sm_tx_side(ah: &AddressHandle, port: u8) -> DevIn {
    DevIn {
        sm_tx_dlid: ah.dlid,
        sm_tx_sl: ah.sl,
        sm_tx_path_bits: ah.path_bits,
        sm_tx_port: port,
        ..DevIn::default()
    }
}

/// A source's MAD taken whole by its model: each beat taken in its
/// cycle, `first` to `last`.
fn replay_taken<M: Clone>(src: &mut Source<M>, first: u64, last: u64) {
    for c in first..=last {
        src.present();
        src.taken(true, c);
    }
}

/// Devices with work in one cycle below which they are evaluated on the
/// calling thread: a device's cycle costs a few µs, about what handing work
/// to the pool and back costs (docs/fabric.md "Threads").
const PAR_MIN_DEVICES: usize = 8;

/// What the input side of a device's cycle decided, for its output side
/// (the model's inputs are in `Device::din`).
#[derive(Default)]
struct Prep {
    /// A register read completes in this cycle.
    reading: bool,
    /// The pending SMA response whose counter field this cycle's read fills.
    patch: Option<usize>,
    /// Every input of the cycle is at rest (`crate::model::dut::inputs_at_rest`):
    /// what the model says of calm after it counts.
    at_rest: bool,
}

/// Whose MAD a model holds whole from a host stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    /// The stream's source: it hears the beats taken.
    Source,
    /// No one's: its SM detached while the model held it (offered, so
    /// sent all the same).
    Orphan,
}

/// A burst a model announced that `Net` put on the cable ahead: the beats
/// its steps inside it show again are not sent twice.
struct Announced {
    first: u64,
    beats: Vec<Beat>,
    /// Its packet's entry in the trace and wire log, written when its last
    /// beat leaves.
    log: Option<LogKey>,
}

/// Where a packet's line goes among those of its cycle: (cycle, 0 for the
/// input side of the cycle and 1 for the output side, device, port,
/// direction). Lines are written in this order, so a packet a model put on
/// the cable ahead is written where it would have been beat by beat.
type LogKey = (u64, u8, usize, u8, u8);

/// A packet for the trace (`trace`: its direction label) and the wire log.
struct LogLine {
    dir: Direction,
    first: u64,
    bytes: Vec<u8>,
    trace: Option<String>,
}

/// One end of a link: (device index, port number 1..N).
pub type End = (usize, u8);

/// The testbench side of a driven device: every cycle it sets the model's
/// inputs (the management side and every port's) and then reads its
/// outputs. The net carries beats between a driven device's linked ports
/// and other devices; everything else on the device is the driver's.
pub trait Driver: Send {
    /// The inputs of cycle `now`. `link_rx[p]` is the beat arriving on
    /// port p+1 from its link in this cycle, if any; a port without a link
    /// is driven by the driver alone.
    fn drive(&mut self, now: u64, link_rx: &[Option<Beat>], d: &mut DevIn, pin: &mut [PortIn]);
    /// The outputs of cycle `now`; `next` is the model's cycle count after
    /// it. Whether anything moved on the testbench side.
    fn observe(&mut self, now: u64, o: &DevOut, pout: &[PortOut], next: u64) -> Result<bool>;
    /// Whether work is queued on the testbench side.
    fn busy(&self) -> bool;
    /// The CA port the driver drives, if it is a CA port's
    /// ([`crate::model::bench::PortBench`]).
    fn ca_port(&self) -> Option<&CaPort> {
        None
    }
    fn ca_port_mut(&mut self) -> Option<&mut CaPort> {
        None
    }
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A full-duplex cable. Direction 0 carries `ends[0]` TX → `ends[1]` RX,
/// direction 1 the reverse.
pub struct Link {
    pub ends: [End; 2],
    pub latency: u64,
    /// Administratively up (the testbench's Link/Unlink).
    pub up: bool,
    /// Per end, its port's PortPhysicalState is Disabled: no link.
    disabled: [bool; 2],
    /// Down for retraining until this cycle (exclusive).
    retrain_until: u64,
    pipe: [VecDeque<(u64, Beat)>; 2],
    /// A packet has started and not ended on the wire, per direction.
    in_packet: [bool; 2],
    /// Trace and wire log: the packet being sent in each direction.
    sent: [PacketAssembler; 2],
    label: [String; 2],
    /// Wire log: the packet arriving in each direction.
    arriving: [PacketAssembler; 2],
    /// Faults on the packets of each direction (the console's `Error`).
    fault: [Option<Box<WireFault>>; 2],
}

impl Link {
    fn new(ends: [End; 2], latency: u64, names: [&str; 2]) -> Link {
        let label =
            |f: usize, t: usize| format!("{}[{}]>{}[{}]", names[f], ends[f].1, names[t], ends[t].1);
        Link {
            ends,
            latency: latency.max(1),
            up: true,
            retrain_until: 0,
            disabled: [false; 2],
            pipe: [VecDeque::new(), VecDeque::new()],
            in_packet: [false; 2],
            sent: Default::default(),
            label: [label(0, 1), label(1, 0)],
            arriving: Default::default(),
            fault: [None, None],
        }
    }

    /// Beat `b`, sent at cycle `now` by `ends[dir]`, onto the cable: the
    /// beat it carries and the cycle it arrives, unless a wire fault
    /// swallowed it (the rest of a truncated packet).
    fn send(&mut self, dir: usize, now: u64, b: Beat) -> Option<u64> {
        self.in_packet[dir] = !b.last;
        let b = match self.fault[dir].as_mut() {
            Some(f) => f.beat(b)?,
            None => b,
        };
        let due = now + self.latency;
        self.pipe[dir].push_back((due, b));
        Some(due)
    }

    /// The fault on the packets arriving at `ends[1 - dir]`, if any.
    pub fn fault(&self, dir: usize) -> Option<&WireFault> {
        self.fault.get(dir).and_then(|f| f.as_deref())
    }

    fn carrying(&self, now: u64) -> bool {
        self.up && !self.disabled[0] && !self.disabled[1] && now >= self.retrain_until
    }

    /// Whether direction `dir` (0: `ends[0]` → `ends[1]`) is in the middle
    /// of a packet: its first beat has left the TX, its last has not.
    pub fn mid_packet(&self, dir: usize) -> bool {
        self.in_packet.get(dir).copied().unwrap_or(false)
    }
}

/// The SM side of a device's QP0: requests go out through `sm_tx_*`; what
/// arrives on `sm_rx_*` becomes a receive completion in `cq` (the verbs
/// calls are in [`crate::agents::qp0`]). Its receive WQEs are those of its port's
/// queue in the device's `sm_rq`, counted by the RTL.
pub struct SmHost {
    /// Port tag of this SM's requests (the CA port it sits on).
    pub port: u8,
    tx: Source<(AddressHandle, u8)>,
    rx: Sink<SmiMeta>,
    next_tid: u64,
    /// Completions, oldest first.
    pub cq: VecDeque<Wc>,
    /// Posted sends not yet completed, in order: the wr_id of a verbs
    /// send (completion wanted), None for [`Net::sm_post`].
    pub(crate) send_wr: VecDeque<Option<u64>>,
    pub sent: u64,
}

impl SmHost {
    fn new(port: u8, data_w: u32) -> Self {
        SmHost {
            port,
            tx: Source::new(data_w, Pattern::Always),
            rx: Sink::new(Pattern::Always),
            next_tid: 0x7a00_0000_0000_0001,
            cq: VecDeque::new(),
            send_wr: VecDeque::new(),
            sent: 0,
        }
    }
    pub fn tid(&mut self) -> u64 {
        let t = self.next_tid;
        self.next_tid += 1;
        t
    }
    fn is_response(wc: &Wc, tid: u64) -> bool {
        wc.mad
            .as_ref()
            .is_some_and(|m| mad::method(m) & 0x80 != 0 && mad::tid(m) == tid)
    }
    /// Whether a response with `tid` is waiting in the CQ.
    pub fn has_response(&self, tid: u64) -> bool {
        self.cq.iter().any(|w| Self::is_response(w, tid))
    }
    /// Take the response with `tid` out of the CQ: (MAD, meta, cycle).
    pub fn take_response(&mut self, tid: u64) -> Option<(Mad, SmiMeta, u64)> {
        let i = self.cq.iter().position(|w| Self::is_response(w, tid))?;
        let w = self.cq.remove(i)?;
        Some((*w.mad?, w.meta, w.cycle))
    }
    /// Received MADs that are not responses (traps, requests), in order.
    pub fn unsolicited(&self) -> Vec<(Mad, SmiMeta, u64)> {
        self.cq
            .iter()
            .filter_map(|w| {
                let m = w.mad.as_ref()?;
                (mad::method(m) & 0x80 == 0).then_some((**m, w.meta, w.cycle))
            })
            .collect()
    }
    /// Received responses still in the CQ.
    pub fn responses(&self) -> usize {
        self.cq
            .iter()
            .filter(|w| w.mad.as_ref().is_some_and(|m| mad::method(m) & 0x80 != 0))
            .count()
    }
}

/// One RTL device and its host side.
pub struct Device<S> {
    /// Topology node id.
    pub name: String,
    pub node: usize,
    pub is_switch: bool,
    /// Ports in the topology (may be fewer than the model has).
    pub nports: u8,
    dev: Box<dyn Dut>,
    pin: Vec<PortIn>,
    /// The ports whose `pin` this cycle wrote (in port order), or every
    /// port: what the model reads at its next step.
    pin_changed: Vec<u8>,
    pin_all: bool,
    pub dout: DevOut,
    /// The model's inputs of the cycle being clocked. The inputs and the
    /// outputs stay in the device: these structs are big, and moved from
    /// buffer to buffer field by field they cost as much as a twin's step.
    din: DevIn,
    /// Per port 1..=model ports at index p−1: (link, direction it sends on).
    port_links: Vec<Option<(usize, usize)>>,
    /// Per port (index 0: switch port 0, never), PortPhysicalState set to
    /// Disabled by a PortInfo Set: its link stays down until a Set of
    /// Polling.
    phys_disabled: Vec<bool>,
    /// The node's agent (its SMA); none on a driven device, whose SMPs
    /// reach its driver.
    agent: Option<S>,
    /// The driver of a driven device, and the packets crossing each of its
    /// ports (trace and wire log).
    driven: Option<Box<dyn Driver>>,
    /// Driven by a driver its owner lends for each cycle instead.
    lent: bool,
    drv_rx: Vec<PacketAssembler>,
    drv_tx: Vec<PacketAssembler>,
    /// The beat each port's link delivered in this cycle, if any.
    drv_link_rx: Vec<Option<Beat>>,
    sma_rx: Sink<SmiMeta>,
    sma_tx: Source<SmiMeta>,
    /// Responses waiting for their service latency: (due, MAD, meta, RTL
    /// counters still to be read into the MAD).
    sma_pending: VecDeque<(u64, Mad, SmiMeta, CounterReads)>,
    pub sm: Option<SmHost>,
    /// The rest of a request that was entering `sm_tx_*` when its SM was
    /// detached: it runs to its last beat (an AXI stream must not drop
    /// `tvalid` mid-packet) before any new SM's requests.
    sm_tx_tail: Option<Source<(AddressHandle, u8)>>,
    /// A MAD is under way on `sm_rx_*` (a beat moved, not the last).
    sm_rx_mid: bool,
    /// An SM attached while a MAD was under way on `sm_rx_*`: the host
    /// throws the rest of that MAD away (it began before this SM) instead
    /// of handing the new SM a tail that is no MAD.
    sm_rx_skip: bool,
    /// The SM receive queues of the CA's ports (port p at index p−1; the
    /// RTL keeps one count per port): the SM's port "takes everything" from
    /// `attach_sm` until its first `post_recv`. Where no SM is, nothing is
    /// posted, so a MAD for the SM is discarded by the RTL and counted
    /// (VL15Dropped), never blocking the port.
    pub(crate) sm_rq: Vec<RecvQueue>,
    /// Traps to the SM (`trap_tx_*`), and the one not yet repressed:
    /// (MAD, port it leaves by, cycle it is sent again). A new trap
    /// replaces one not yet repressed.
    trap_tx: Source<u8>,
    trap_pending: Option<(Mad, u8, u64)>,
    /// PortState of every external port at the last tick (link edges).
    last_states: Vec<u8>,
    /// `link_up_i` of every port at the last tick.
    last_link_up: Vec<bool>,
    /// Traps sent (repeats included).
    pub traps_sent: u64,
    /// SMPs the RTL's M_Key check flagged as violations (never answered).
    pub mkey_violations: u64,
    /// CA data-VL host ports, per port at index p−1: packets (LRH..ICRC) the
    /// host sends, and packets the port delivered (LRH..VCRC, `bad` = the
    /// link layer flagged it).
    pub data_tx: Vec<Source<()>>,
    pub data_rx: Vec<Sink<u8>>,
    /// Switch port 0's GMP (QP1) host streams: packets (LRH..ICRC, data VL,
    /// SLID = the switch LID) the host sends, routed by the LFT; and the
    /// data-VL packets for the switch LID (LRH..VCRC, `bad` = the GSI
    /// checks said discard). Unused on a CA.
    pub gmp_tx: Source<()>,
    pub gmp_rx: Sink<u8>,
    regs: VecDeque<(u16, u32)>,
    read: Option<u16>,
    read_value: Option<u32>,
    /// Cycles in which the model was evaluated.
    pub ticks: u64,
    /// Listed in [`Net::take_rx_pending`]'s list.
    rx_listed: bool,
    /// The ports (index p−1, ascending) whose cable into the device holds
    /// beats, or which took a beat in the last tick (`rx_tvalid` to clear):
    /// the only ports a tick looks at between link changes, so an idle
    /// port of a wide switch costs nothing.
    inbound: Vec<u8>,
    inbound_listed: Vec<bool>,
    /// Look at every port in the next tick (a cable came, went or was
    /// moved: `link_up`), and again at `scan_at` (a retraining link
    /// carries again from then).
    scan_ports: bool,
    scan_at: Option<u64>,
    /// The last tick looked at every port (its `link_up`s may differ).
    scanned: bool,
    /// Per port index: the burst the model announced that is on the cable
    /// ahead of its cycles, and the ports (bit p) that hold one: a tick
    /// looks at those alone ([`Device::set_announced`],
    /// [`Device::take_announced`]).
    announced: Vec<Option<Announced>>,
    announced_ports: u64,
    /// Per port index: the cycle after the last beat of the last receive
    /// burst its model took ahead ([`Dut::rx_burst`]), and the latest of
    /// them (a later burst on a port ends after the one before).
    rx_given: Vec<Option<u64>>,
    rx_given_until: u64,
    /// Asleep through a calm period of its model ([`Dut::calm_until`]):
    /// its next step sees every port changed.
    calm_sleep: bool,
    /// Stepped in every cycle before this one whatever its model says of
    /// calm (a burst it announced that could not go on the cable ahead).
    no_calm_until: u64,
    /// MADs its model announced on `sma_rx` (0) and `sm_rx` (1), in the
    /// fabric's cycles: the host takes them whole at their last beat.
    host_out: [Option<HostBurst>; 2],
    /// MADs its model holds whole from `sma_tx` (0), `sm_tx` (1) and
    /// `trap_tx` (2) ([`Dut::host_burst`]): their source hears each beat
    /// taken when the model says it took the last.
    host_in: [Option<Held>; 3],
    /// `tkeep` of a whole beat at the fabric's width.
    full_keep: u16,
    /// How far its model's cycle count ([`Dut::cycle`]) is ahead of the
    /// fabric's (its reset cycles): what converts the cycles its model
    /// names (calm, bursts) into the fabric's.
    off: u64,
}

impl<S> Device<S> {
    /// Port index `p`'s burst on the cable ahead is `a`.
    fn set_announced(&mut self, p: usize, a: Announced) {
        self.announced[p] = Some(a);
        self.announced_ports |= 1 << p;
    }

    /// Port index `p`'s burst on the cable ahead, which it no longer has.
    fn take_announced(&mut self, p: usize) -> Option<Announced> {
        self.announced_ports &= !(1 << p);
        self.announced.get_mut(p).and_then(Option::take)
    }

    /// One cycle of the model with `din` and the ports' inputs, telling it
    /// which ports' inputs this cycle wrote; its outputs into `dout`.
    fn step_model(&mut self) -> Result<()> {
        let changed = if self.pin_all {
            Changed::All
        } else {
            Changed::Ports(&self.pin_changed)
        };
        let o = self.dev.step(&self.din, &self.pin, changed);
        self.pin_all = false;
        self.pin_changed.clear();
        self.dout = o?;
        Ok(())
    }

    /// A beat is on the cable into port index `p` (port p+1).
    fn note_inbound(&mut self, p: usize) {
        if let Some(listed) = self.inbound_listed.get_mut(p) {
            if !*listed {
                *listed = true;
                let at = self.inbound.partition_point(|&q| usize::from(q) < p);
                self.inbound.insert(at, p as u8);
            }
        }
    }

    /// A device with `dev` as its model and an idle host side: node 0, a
    /// CA until the caller says otherwise.
    fn build(name: &str, dev: Box<dyn Dut>, nports: u8, w: u32, agent: Option<S>) -> Self {
        let np = usize::from(nports);
        Device {
            name: name.to_string(),
            node: 0,
            is_switch: false,
            nports,
            dev,
            pin: vec![PortIn::default(); np],
            pin_changed: Vec::new(),
            pin_all: true,
            dout: DevOut::default(),
            din: DevIn::default(),
            port_links: vec![None; np],
            phys_disabled: vec![false; np + 1],
            agent,
            driven: None,
            lent: false,
            drv_rx: Vec::new(),
            drv_tx: Vec::new(),
            drv_link_rx: Vec::new(),
            sma_rx: Sink::new(Pattern::Always),
            sma_tx: Source::new(w, Pattern::Always),
            sma_pending: VecDeque::new(),
            sm: None,
            sm_tx_tail: None,
            sm_rx_mid: false,
            sm_rx_skip: false,
            sm_rq: vec![RecvQueue::empty(); np],
            trap_tx: Source::new(w, Pattern::Always),
            trap_pending: None,
            last_states: Vec::new(),
            last_link_up: vec![false; np],
            traps_sent: 0,
            mkey_violations: 0,
            data_tx: (0..np).map(|_| Source::new(w, Pattern::Always)).collect(),
            data_rx: (0..np).map(|_| Sink::new(Pattern::Always)).collect(),
            gmp_tx: Source::new(w, Pattern::Always),
            gmp_rx: Sink::new(Pattern::Always),
            inbound: Vec::new(),
            inbound_listed: vec![false; np],
            scan_ports: true,
            scan_at: None,
            scanned: false,
            announced: (0..np).map(|_| None).collect(),
            announced_ports: 0,
            rx_given: vec![None; np],
            rx_given_until: 0,
            calm_sleep: false,
            no_calm_until: 0,
            off: 0,
            host_out: [None, None],
            host_in: [None; 3],
            full_keep: crate::model::stream::full_keep(w),
            regs: VecDeque::new(),
            read: None,
            read_value: None,
            ticks: 0,
            rx_listed: false,
        }
    }

    /// The node's agent (its SMA). A driven device has none: its driver
    /// answers its SMPs.
    pub fn agent(&self) -> &S {
        self.agent
            .as_ref()
            .expect("a driven device has no node agent; its driver answers")
    }

    pub fn agent_mut(&mut self) -> &mut S {
        self.agent
            .as_mut()
            .expect("a driven device has no node agent; its driver answers")
    }

    /// Whether the testbench drives the device ([`Driver`]).
    pub fn is_driven(&self) -> bool {
        self.driven.is_some() || self.lent
    }

    /// External ports of the device's RTL model (a switch: its own radix).
    pub fn model_ports(&self) -> u32 {
        self.dev.num_ports()
    }

    /// The ports whose host side (data VLs, SM receive queue) is in use:
    /// a CA's. A switch's are never written (`Net::data_send` and the
    /// receive queue calls refuse a switch, whose host data go by
    /// `gmp_*`), so its cycles look at nothing the size of its radix.
    fn host_ports(&self) -> usize {
        if self.is_switch {
            0
        } else {
            self.pin.len()
        }
    }

    fn has_host_work(&self) -> bool {
        let hp = self.host_ports();
        (!self.sma_tx.idle() && self.host_in[0].is_none())
            || (!self.trap_tx.idle() && self.host_in[2].is_none())
            || !self.sma_pending.is_empty()
            || self.sma_rx.in_packet()
            || !self.regs.is_empty()
            || self.data_tx[..hp].iter().any(|s| !s.idle())
            || self.data_rx[..hp].iter().any(|s| s.in_packet())
            || !self.gmp_tx.idle()
            || self.gmp_rx.in_packet()
            || self.read.is_some()
            || self.sm_rq[..hp].iter().any(RecvQueue::pending)
            || self
                .sm
                .as_ref()
                .is_some_and(|s| (!s.tx.idle() && self.host_in[1].is_none()) || s.rx.in_packet())
            || self.sm_tx_tail.is_some()
    }

    /// The host takes the first `n` beats of MAD `b` its model announced
    /// on `sma_rx` (`s` 0) or `sm_rx` (1), each in its cycle.
    fn feed_host(&mut self, s: usize, b: &HostBurst, n: usize) {
        let keep = self.full_keep;
        if s == 0 {
            feed_sink(&mut self.sma_rx, b, n, keep, sma_rx_meta);
        } else if let Some(sm) = self.sm.as_mut() {
            feed_sm(sm, &mut self.sm_rx_skip, b, n, keep);
        } else if b.beats[..n].last().is_some_and(|x| x.last) {
            self.sm_rx_skip = false;
        }
    }

    /// An SM-bound MAD its model announced has begun by cycle `now`.
    fn sm_rx_ahead_started(&self, now: u64) -> bool {
        self.host_out[1].as_ref().is_some_and(|b| b.first <= now)
    }
    /// PortState of port `p` as the RTL shows it (switch port 0 included).
    pub fn port_state(&self, p: u8) -> u8 {
        if p == 0 {
            return if self.is_switch {
                self.dout.port0_state
            } else {
                0
            };
        }
        self.dev
            .ports_out()
            .get(usize::from(p) - 1)
            .map_or(0, |o| o.port_state)
    }
    /// Register address of a CA port register / switch register, for writes
    /// made on behalf of the SMA.
    /// The RTL counters a PortInfo response `r` to request `req` (arrived
    /// on `arrival`) shows: P_KeyViolations (PortInfo bytes 46–47) and
    /// Q_KeyViolations (48–49) of a port with a QP1 receive path (a CA
    /// port: `pkey_viol`/`qkey_viol`; switch port 0: its GMP bank's). As
    /// (MAD offset, register) pairs; none for another attribute, an error
    /// status, or a switch's external port (no P_Key check there: 0).
    fn key_violation_reads(&self, req: &Mad, r: &Mad, arrival: u8) -> CounterReads {
        use crate::model::regmap::reg;
        use crate::proto::packet::consts::ATTR_PORT_INFO;
        const DATA: usize = 64;
        if mad::attr_id(r) != ATTR_PORT_INFO || be16(r, mad::off::STATUS) & 0x7FFF != 0 {
            return Vec::new();
        }
        let modifier = mad::attr_mod(req);
        let (p, q) = if self.is_switch {
            if modifier != 0 {
                return Vec::new();
            }
            (
                swreg::ctr0g(swreg::ctr::G_PKEY_VIOL),
                swreg::ctr0g(swreg::ctr::G_QKEY_VIOL),
            )
        } else {
            let port = if modifier == 0 {
                arrival
            } else {
                match u8::try_from(modifier) {
                    Ok(p) => p,
                    Err(_) => return Vec::new(),
                }
            };
            (
                mpreg::port(port, reg::CTR_BASE + reg::CTR_PKEY_VIOL),
                mpreg::port(port, reg::CTR_BASE + reg::CTR_QKEY_VIOL),
            )
        };
        vec![(DATA + 46, p), (DATA + 48, q)]
    }

    fn hw_writes(&self, w: &HwWrite, out: &mut Vec<(u16, u32)>) {
        use crate::model::regmap::reg;
        if !self.is_switch {
            let writes = crate::model::node_hw::ca_port_writes(w);
            out.extend(
                writes
                    .into_iter()
                    .map(|(port, a, v)| (mpreg::port(port, a), v)),
            );
            return;
        }
        match *w {
            HwWrite::PortLid { lid, .. } => out.push((swreg::PORT0_LID, lid.into())),
            // Switch port 0 has no LMC register (the SMA reads it back).
            HwWrite::PortLmc { .. } => {}
            HwWrite::MasterSmLid { lid, .. } => out.push((swreg::MASTER_SM_LID, lid.into())),
            HwWrite::MasterSmSl { sl, .. } => out.push((swreg::MASTER_SM_SL, sl.into())),
            HwWrite::PortState { port, state } => {
                out.push((swreg::PORT_STATE + u16::from(port), state.into()))
            }
            HwWrite::LftBlock { block, entries } => {
                for (i, q) in entries.chunks(4).enumerate() {
                    let word = u32::from_le_bytes([q[0], q[1], q[2], q[3]]);
                    out.push((swreg::LFT_BASE + block * 16 + i as u16, word));
                }
            }
            HwWrite::LinearFdbTop(top) => out.push((swreg::LINEAR_FDB_TOP, top.into())),
            HwWrite::Mkey {
                key, prot, lease, ..
            } => {
                // low word first: the high-word write commits the key
                out.push((swreg::mkey(reg::MKEY_LO), key as u32));
                out.push((swreg::mkey(reg::MKEY_HI), (key >> 32) as u32));
                out.push((swreg::mkey(reg::MKEY_PROT), prot.into()));
                out.push((swreg::mkey(reg::MKEY_LEASE), lease.into()));
            }
            HwWrite::MkeyViolations { value, .. } => {
                out.push((swreg::mkey(reg::MKEY_VIOLS), value.into()))
            }
            HwWrite::ClearPortStateChange => out.push((swreg::PORT_STATE_CHANGE, 1)),
            HwWrite::PkeyBlock { block, keys, n, .. } => {
                // Index, then one data write per entry (each steps the index).
                out.push((swreg::PKEY_IDX, u32::from(block) * 32));
                for k in &keys[..usize::from(n)] {
                    out.push((swreg::PKEY_DATA, u32::from(*k)));
                }
            }
            // The fabric's business (link retraining, the neighbour's
            // active width/speed); the RTL models no PHY.
            HwWrite::RetrainLink { .. }
            | HwWrite::LinkActive { .. }
            | HwWrite::PortPhysState { .. } => {}
        }
    }
}

/// What the SMA sees of the hardware and the neighbours while it answers.
struct HwView<'a> {
    /// M_KeyProtectBits and M_KeyViolations by port (CA ports; index 0 =
    /// switch port 0).
    mkey: &'a [Option<(u8, u16)>],
    states: &'a [u8],
    link_up: &'a [bool],
    disabled: &'a [bool],
    neighbour: &'a [Option<u8>],
    psc: bool,
    writes: Vec<HwWrite>,
}

impl NodeHw for HwView<'_> {
    fn port_state(&self, port: u8) -> u8 {
        self.states.get(usize::from(port)).copied().unwrap_or(0)
    }
    fn link_up(&self, port: u8) -> bool {
        self.link_up
            .get(usize::from(port))
            .copied()
            .unwrap_or(false)
    }
    fn neighbour_state(&self, port: u8) -> Option<u8> {
        self.neighbour.get(usize::from(port)).copied().flatten()
    }
    fn phys_disabled(&self, port: u8) -> bool {
        self.disabled
            .get(usize::from(port))
            .copied()
            .unwrap_or(false)
    }
    fn port_state_change(&self) -> bool {
        self.psc
    }
    fn write(&mut self, w: HwWrite) {
        self.writes.push(w);
    }
    fn mkey_state(&self, port: u8) -> Option<(u8, u16)> {
        self.mkey.get(usize::from(port)).copied().flatten()
    }
}

/// Counters the fabric keeps about itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetStats {
    /// Device evaluations (one device, one cycle).
    pub ticks: u64,
    /// Beats carried by links.
    pub beats: u64,
    /// Beats lost on links that were down.
    pub beats_lost: u64,
    /// SMPs the SMAs answered.
    pub sma_answers: u64,
    /// Cycles whose devices were evaluated on the thread pool.
    pub parallel_cycles: u64,
}

/// Wake-ups: (cycle, device), the earliest first.
type WakeHeap = BinaryHeap<Reverse<(u64, usize)>>;

/// The device of `h`'s earliest wake-up, taken, if it is due by `now`.
fn pop_due(h: &mut WakeHeap, now: u64) -> Option<usize> {
    let &Reverse((due, d)) = h.peek()?;
    (due <= now).then(|| {
        h.pop();
        d
    })
}

/// The fabric.
pub struct Net<S> {
    pub topo: Topology,
    pub devs: Vec<Device<S>>,
    pub links: Vec<Link>,
    pub opts: NetOptions,
    /// Global cycle: the next cycle to simulate.
    pub cycle: u64,
    active: Vec<bool>,
    active_list: Vec<usize>,
    wake: WakeHeap,
    /// Wake-ups to send a trap again that the SM has not repressed: work
    /// only while the fabric runs for something else.
    trap_wake: WakeHeap,
    pub trace: Vec<TraceEntry>,
    pub stats: NetStats,
    /// Evaluation threads ([`NetOptions::threads`] > 1).
    pool: Option<rayon::ThreadPool>,
    /// Devices whose `gmp_rx` / `data_rx` received a packet since the last
    /// [`Net::take_rx_pending`].
    rx_pending: Vec<usize>,
    /// Every packet on every link, as a pcapng trace ([`Net::log_wire`]).
    wire_log: Option<TraceFile>,
    /// The first error writing `wire_log`, reported by the next step.
    wire_log_err: Option<PcapError>,
    /// The devices' waveform files ([`NetOptions::wave`]).
    pub waves: Option<Waves>,
    /// What the wire log's interface names start with.
    log_prefix: String,
    /// A beat moved on a link or a driven port, or a driver's host side
    /// moved, in the cycle being simulated; cycles since the last such.
    moved: bool,
    quiet_cycles: u64,
    /// Buffers a cycle reuses: the devices it runs, their inputs and
    /// outputs.
    list_spare: Vec<usize>,
    prep_buf: Vec<Prep>,
    out_buf: Vec<Result<()>>,
    /// The ports of the device being clocked that put a beat out.
    sending: Vec<(usize, PortOut)>,
    /// Lines for the trace and the wire log, written in key order once
    /// their cycle is simulated.
    log_lines: BTreeMap<LogKey, LogLine>,
    /// The bursts the device being clocked announced.
    bursts: Vec<TxBurst>,
    /// The beats of a receive burst being handed over.
    rx_beats: Vec<Beat>,
    /// The host bursts the device being clocked announced.
    host_bursts: Vec<HostBurst>,
    /// A buffer reused: MADs models held and took whole.
    host_taken: Vec<HostTaken>,
}

impl<S: NodeAgent> Default for Net<S> {
    /// [`Net::bench`]: no device yet.
    fn default() -> Self {
        Net::bench()
    }
}

/// The RTL device of a topology node; a node the RTL cannot be is an error
/// at the node's line ([`TopologyError`](crate::proto::topology::TopologyError)).
fn dev_kind(topo: &Topology, n: &crate::proto::topology::TNode) -> Result<DevKind> {
    let (id, nports) = (&n.id, n.nports);
    let msg = match n.kind {
        NodeKind::Switch if (1..=MAX_SWITCH_PORTS).contains(&u32::from(nports)) => {
            return Ok(DevKind::Switch)
        }
        NodeKind::Ca => match ca_mp_kind(nports) {
            Some(kind) => return Ok(kind),
            None => format!("CA {id:?} has {nports} ports; the RTL CA has 1 or 2"),
        },
        NodeKind::Switch => {
            format!("switch {id:?} has {nports} ports; the RTL switch has 1..{MAX_SWITCH_PORTS}")
        }
        NodeKind::Router => format!("router {id:?}: routers are not modelled"),
    };
    Err(topo.error_at(n.origin, msg).into())
}

impl<S: NodeAgent> Net<S> {
    /// Build every device of `topo` (reset, links up) and the links.
    pub fn new(topo: Topology, opts: NetOptions) -> Result<Net<S>> {
        let w = opts.data_w;
        if !DEV_DATA_WIDTHS.contains(&w) {
            bail!("the fabric runs at DataW {DEV_DATA_WIDTHS:?}, not {w}");
        }
        let log = match &opts.pcap {
            Some((path, lt)) => Some(TraceFile::create(path, *lt)?),
            None => None,
        };
        let mut waves = match &opts.wave {
            Some(dir) => Some(Waves::new(dir)?),
            None => None,
        };
        let names: Vec<(&str, &str)> = topo
            .nodes
            .iter()
            .map(|n| (n.id.as_str(), n.description.as_str()))
            .collect();
        let fidelity = opts.fidelity.resolve(&names)?;
        let mut devs = Vec::with_capacity(topo.nodes.len());
        for (i, n) in topo.nodes.iter().enumerate() {
            let kind = dev_kind(&topo, n)?;
            let spec = match kind {
                DevKind::CaMp1 if opts.ca_top => DeviceSpec::CaTop { data_w: w },
                DevKind::Switch => DeviceSpec::Switch {
                    nports: n.nports,
                    data_w: w,
                },
                _ => DeviceSpec::CaMp {
                    nports: n.nports,
                    data_w: w,
                },
            };
            let f = fidelity[i];
            let mut dev = twin::backend(f)
                .build(spec)
                .with_context(|| format!("building the {} model of {:?}", f.name(), n.id))?;
            if let Some(w) = waves.as_mut() {
                if f == Fidelity::Twin {
                    return Err(InputError(format!(
                        "--wave: device {:?} runs as a twin, which has no signals to dump (--rtl {:?} runs it as RTL)",
                        n.id, n.id
                    ))
                    .into());
                }
                w.open(&n.id, dev.as_mut())
                    .with_context(|| format!("--wave: device {:?}", n.id))?;
            }
            if let (Some(r), Fidelity::Twin) = (&opts.record, f) {
                dev = r.recorder(i, &n.id, &n.description, spec, dev);
            }
            dev.reset(4)
                .with_context(|| format!("reset of {:?}", n.id))?;
            let sma = S::for_node(n, &topo, LFT_DEPTH)?;
            let mut dev = Device::build(&n.id, dev, n.nports, w, Some(sma));
            dev.node = i;
            dev.is_switch = n.kind == NodeKind::Switch;
            devs.push(dev);
        }
        let mut links = Vec::with_capacity(topo.links.len());
        for (li, l) in topo.links.iter().enumerate() {
            let ends = [l.a, l.b];
            for (dir, &(d, p)) in ends.iter().enumerate() {
                devs[d].port_links[usize::from(p) - 1] = Some((li, dir));
            }
            let names = [topo.nodes[l.a.0].id.as_str(), topo.nodes[l.b.0].id.as_str()];
            links.push(Link::new(ends, opts.link_latency, names));
        }
        let n = devs.len();
        let pool = if opts.threads > 1 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(opts.threads)
                    .thread_name(|k| format!("vl15-eval-{k}"))
                    .build()
                    .context("starting the evaluation threads")?,
            )
        } else {
            None
        };
        let mut net = Net {
            topo,
            devs,
            links,
            opts,
            cycle: 0,
            active: vec![false; n],
            active_list: Vec::new(),
            wake: BinaryHeap::new(),
            trap_wake: BinaryHeap::new(),
            trace: Vec::new(),
            stats: NetStats::default(),
            pool,
            rx_pending: Vec::new(),
            wire_log: None,
            wire_log_err: None,
            waves,
            log_prefix: String::new(),
            moved: false,
            quiet_cycles: 0,
            list_spare: Vec::new(),
            prep_buf: Vec::new(),
            out_buf: Vec::new(),
            sending: Vec::new(),
            log_lines: BTreeMap::new(),
            bursts: Vec::new(),
            rx_beats: Vec::new(),
            host_bursts: Vec::new(),
            host_taken: Vec::new(),
        };
        // Ports without a cable are down; every device runs once so that the
        // port states and the SMA's register images settle.
        for d in 0..n {
            for p in 0..net.devs[d].pin.len() {
                let up = net.devs[d].port_links[p].is_some();
                net.devs[d].pin[p].link_up = up;
                net.devs[d].pin[p].tx_tready = true;
            }
            let mut regs = Vec::new();
            let init = net.devs[d].agent().init_writes();
            for w in &init {
                net.devs[d].hw_writes(w, &mut regs);
            }
            if net.devs[d].is_switch {
                regs.push((swreg::NUM_PORTS, u32::from(net.devs[d].nports)));
            }
            net.devs[d].regs.extend(regs);
            net.activate(d);
        }
        net.run_until_idle(10_000)?;
        net.wire_log = log;
        Ok(net)
    }

    /// The CA an SM runs on: node `id`, or the file's first CA.
    pub fn sm_device(&self, id: Option<&str>, file: &std::path::Path) -> Result<usize> {
        match id {
            Some(id) => {
                let d = self
                    .dev_index(id)
                    .ok_or_else(|| InputError(format!("{}: no node {id:?}", file.display())))?;
                // A switch can host an ibsim client (`vl15 serve`), but the
                // built-in SM and discovery keep to CA ports.
                if self.devs[d].is_switch {
                    let at = self.topo.at(self.topo.nodes[self.devs[d].node].origin);
                    return Err(InputError(format!(
                        "{at}: {id:?} is a switch; the SM runs on a CA port in this fabric"
                    ))
                    .into());
                }
                Ok(d)
            }
            None => self.devs.iter().position(|d| !d.is_switch).ok_or_else(|| {
                InputError(format!("{}: no CA to run the SM on", file.display())).into()
            }),
        }
    }

    /// A net with no device yet, for devices the testbench drives
    /// ([`Net::add_driven`], [`Net::connect`]): no topology file, one
    /// thread, every packet traced.
    pub fn bench() -> Net<S> {
        Net {
            topo: Topology::default(),
            devs: Vec::new(),
            links: Vec::new(),
            opts: NetOptions {
                trace: true,
                threads: 1,
                ..NetOptions::default()
            },
            cycle: 0,
            active: Vec::new(),
            active_list: Vec::new(),
            wake: BinaryHeap::new(),
            trap_wake: BinaryHeap::new(),
            trace: Vec::new(),
            stats: NetStats::default(),
            pool: None,
            rx_pending: Vec::new(),
            wire_log: None,
            wire_log_err: None,
            waves: None,
            log_prefix: String::new(),
            moved: false,
            quiet_cycles: 0,
            list_spare: Vec::new(),
            prep_buf: Vec::new(),
            out_buf: Vec::new(),
            sending: Vec::new(),
            log_lines: BTreeMap::new(),
            bursts: Vec::new(),
            rx_beats: Vec::new(),
            host_bursts: Vec::new(),
            host_taken: Vec::new(),
        }
    }

    /// Add `dev` (reset), driven by `driver` and named `name`, with no
    /// link yet; returns its index. The net's cycle is the latest of its
    /// devices' (a model added behind it counts the difference as idle).
    pub fn add_driven(&mut self, name: &str, dev: Box<dyn Dut>, driver: Box<dyn Driver>) -> usize {
        let d = self.add_lent(name, dev);
        self.devs[d].lent = false;
        self.devs[d].driven = Some(driver);
        d
    }

    /// [`Net::add_driven`] with a driver its owner keeps and lends for
    /// each cycle ([`Net::step_lending`]): a driver that is itself the
    /// owner of the net (a bench).
    pub fn add_lent(&mut self, name: &str, dev: Box<dyn Dut>) -> usize {
        let np = u8::try_from(dev.num_ports()).unwrap_or(u8::MAX);
        let (w, cycle) = (dev.data_w(), dev.cycle());
        let mut device = Device::build(name, dev, np, w, None);
        for pi in &mut device.pin {
            pi.tx_tready = true;
        }
        device.lent = true;
        device.drv_rx = vec![PacketAssembler::default(); usize::from(np)];
        device.drv_tx = vec![PacketAssembler::default(); usize::from(np)];
        device.drv_link_rx = vec![None; usize::from(np)];
        let d = self.devs.len();
        device.node = d;
        self.devs.push(device);
        self.active.push(false);
        self.cycle = self.cycle.max(cycle);
        self.activate(d);
        d
    }

    /// A cable between port `a.1` of device `a.0` and port `b.1` of `b.0`,
    /// `latency` cycles each way (at least 1); returns its index.
    pub fn connect(&mut self, a: End, b: End, latency: u64) -> Result<usize> {
        for (d, p) in [a, b] {
            let Some(dev) = self.devs.get(d) else {
                bail!("no device {d}");
            };
            match usize::from(p).checked_sub(1).map(|k| dev.port_links.get(k)) {
                Some(Some(None)) => {}
                Some(Some(Some(_))) => bail!("{}[{p}] already has a link", dev.name),
                _ => bail!("{} has no port {p}", dev.name),
            }
        }
        let l = self.links.len();
        let names = [self.devs[a.0].name.as_str(), self.devs[b.0].name.as_str()];
        self.links.push(Link::new([a, b], latency, names));
        self.devs[a.0].port_links[usize::from(a.1) - 1] = Some((l, 0));
        self.devs[b.0].port_links[usize::from(b.1) - 1] = Some((l, 1));
        self.devs[a.0].scan_ports = true;
        self.devs[b.0].scan_ports = true;
        Ok(l)
    }

    /// The driver of device `d`, if it is driven.
    pub fn driven(&self, d: usize) -> Option<&dyn Driver> {
        self.devs.get(d)?.driven.as_deref()
    }

    pub fn driven_mut(&mut self, d: usize) -> Option<&mut (dyn Driver + 'static)> {
        self.devs.get_mut(d)?.driven.as_deref_mut()
    }

    /// The driver of device `d`, if it is driven and a `T`.
    pub fn driver<T: 'static>(&self, d: usize) -> Option<&T> {
        self.devs.get(d)?.driven.as_ref()?.as_any().downcast_ref()
    }

    pub fn driver_mut<T: 'static>(&mut self, d: usize) -> Option<&mut T> {
        self.devs
            .get_mut(d)?
            .driven
            .as_mut()?
            .as_any_mut()
            .downcast_mut()
    }

    /// End the recording of `--record`, if any: every twin writes what it
    /// holds and the manifest is written. Gives the recording's directory.
    pub fn finish_record(&mut self) -> Result<Option<std::path::PathBuf>> {
        let Some(r) = self.opts.record.clone() else {
            return Ok(None);
        };
        for (k, d) in self.devs.iter_mut().enumerate() {
            d.dev.flush()?;
            r.set_offset(k, d.off);
        }
        r.finish()?;
        Ok(Some(r.dir().to_path_buf()))
    }

    /// The model of device `d` (to open its waveform dump).
    pub fn dut_mut(&mut self, d: usize) -> &mut dyn Dut {
        self.devs[d].dev.as_mut()
    }

    /// Hold `rst_ni` of driven device `d` low for `cycles` cycles, in the
    /// middle of whatever it is doing; its driver is told nothing (the
    /// caller resets the testbench side). Only a device alone on its net:
    /// the reset's cycles pass for it alone.
    pub fn reset_driven(&mut self, d: usize, cycles: u32) -> Result<()> {
        if self.devs.len() != 1 || !self.devs[d].is_driven() {
            bail!("only a driven device alone on its net is reset on its own");
        }
        let dev = &mut self.devs[d];
        dev.dev
            .reset(cycles)
            .with_context(|| format!("reset of {}", dev.name))?;
        dev.drv_rx
            .iter_mut()
            .for_each(|a| *a = PacketAssembler::default());
        dev.drv_tx
            .iter_mut()
            .for_each(|a| *a = PacketAssembler::default());
        self.cycle = dev.dev.cycle();
        Ok(())
    }

    /// Whether anything is queued on a link or with a driver.
    fn tb_busy(&self) -> bool {
        self.links
            .iter()
            .any(|l| l.pipe.iter().any(|p| !p.is_empty()))
            || self
                .devs
                .iter()
                .any(|d| d.calm_sleep || d.driven.as_ref().is_some_and(|x| x.busy()))
    }

    /// Run until nothing is queued on a link or with a driver and no beat
    /// has moved for `quiet` cycles (longer than any path through the
    /// RTL), or fail after `max_cycles`: how a net of driven devices
    /// settles. Returns the cycles it ran.
    pub fn run_until_quiet(&mut self, quiet: u64, max_cycles: u64) -> Result<u64> {
        let start = self.cycle;
        self.quiet_cycles = 0;
        loop {
            self.step()?;
            if !self.tb_busy() && self.quiet_cycles >= quiet {
                return Ok(self.cycle - start);
            }
            if self.cycle - start > max_cycles {
                bail!(
                    "fabric not idle after {max_cycles} cycles (lockup?) at cycle {}",
                    self.cycle
                );
            }
        }
    }

    /// Device index of topology node `id`.
    pub fn dev_index(&self, id: &str) -> Option<usize> {
        self.devs.iter().position(|d| d.name == id)
    }

    fn activate(&mut self, d: usize) {
        if !self.active[d] {
            self.active[d] = true;
            self.active_list.push(d);
        }
    }

    /// Make device `d` run in the next cycle (its host side has new work).
    pub(crate) fn wake_dev(&mut self, d: usize) {
        self.activate(d);
    }

    /// No device runs in the next cycle (there may be wake-ups scheduled).
    pub fn quiet(&self) -> bool {
        self.active_list.is_empty()
    }

    /// The cycle of the next scheduled wake-up (link arrival, SMA answer).
    pub fn next_wake(&self) -> Option<u64> {
        let due = |h: &WakeHeap| h.peek().map(|&Reverse((t, _))| t);
        match (due(&self.wake), due(&self.trap_wake)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether nothing is in flight anywhere (RTL, links, host sides).
    pub fn idle(&self) -> bool {
        self.active_list.is_empty() && self.wake.is_empty() && self.trap_wake.is_empty()
    }

    /// Whether a device runs in the next cycle or sleeps until a wake-up
    /// with work to do (a packet on a cable, an SMA's answer, a model
    /// calm until it must be stepped): all but a trap waiting to be sent
    /// again, which waits for the fabric to run for something else.
    pub fn has_work(&self) -> bool {
        !self.active_list.is_empty() || !self.wake.is_empty()
    }

    /// Put an SM on CA `d`'s port `port` (the SM's requests carry that port
    /// tag; its receive WQEs go to that port's queue). It takes every MAD
    /// (the RTL's WQE count is kept topped up) until its first
    /// [`Net::post_recv`].
    pub fn attach_sm(&mut self, d: usize, port: u8) -> Result<()> {
        self.attach_host(d, port, true)
    }

    /// Open the host side of QP0 on CA `d`'s port `port` as
    /// [`Net::attach_sm`] does, with PortInfo IsSM set only when `is_sm`
    /// (a diagnostic tool such as `smpquery` sends SMPs without being an
    /// SM; `vl15 serve` sets IsSM on SET_ISSM).
    ///
    /// On a switch the host sits on port 0 (`port` must be 0): its requests
    /// enter the switch's `sm_tx_*` (the port-0 SMI send engine), and what
    /// the SMI delivers on `sm_rx_*` becomes its completions. The switch's
    /// SM interface has no receive queue in the RTL (flow control by
    /// `sm_rx_tready` alone), so nothing is posted or counted there.
    pub fn attach_host(&mut self, d: usize, port: u8, is_sm: bool) -> Result<()> {
        let dev = self
            .devs
            .get_mut(d)
            .ok_or_else(|| anyhow!("no device {d}"))?;
        if dev.is_switch {
            if port != 0 {
                bail!("{}: a switch's host sits on port 0, not {port}", dev.name);
            }
            dev.sm = Some(SmHost::new(0, self.opts.data_w));
            dev.sm_rx_skip = dev.sm_rx_mid || dev.sm_rx_ahead_started(self.cycle);
            self.activate(d);
            if is_sm {
                self.set_is_sm(d, 0, true);
            }
            return Ok(());
        }
        if port == 0 || port > dev.nports {
            bail!("{}: no port {port}", dev.name);
        }
        let p = usize::from(port) - 1;
        if p >= dev.sm_rq.len() {
            bail!("{}: no port {port} in the model", dev.name);
        }
        if let Some(old) = dev.sm.as_ref().filter(|sm| sm.port != port) {
            let q = usize::from(old.port) - 1;
            if let Some(rq) = dev.sm_rq.get_mut(q) {
                rq.flush();
            }
        }
        dev.sm = Some(SmHost::new(port, self.opts.data_w));
        dev.sm_rx_skip = dev.sm_rx_mid || dev.sm_rx_ahead_started(self.cycle);
        dev.sm_rq[p] = RecvQueue::take_all();
        self.activate(d);
        if is_sm {
            self.set_is_sm(d, port, true);
        }
        Ok(())
    }

    /// Set or clear IsSM on the port of CA `d`'s attached host (Trap 144
    /// on a change, as [`Net::attach_sm`]).
    pub fn set_host_is_sm(&mut self, d: usize, on: bool) -> Result<()> {
        let port = self.sm_host_port(d)?;
        self.set_is_sm(d, port, on);
        Ok(())
    }

    /// The port of CA `d`'s attached host.
    pub fn sm_host_port(&self, d: usize) -> Result<u8> {
        let dev = self.devs.get(d).ok_or_else(|| anyhow!("no device {d}"))?;
        dev.sm
            .as_ref()
            .map(|s| s.port)
            .ok_or_else(|| anyhow!("{}: no host attached", dev.name))
    }

    /// Take the SM off CA `d` (it was killed: its QP is gone). Its port
    /// loses IsSM (Trap 144 to the master). Its receive WQEs are withdrawn
    /// from the RTL, so from then on every MAD for the SM arriving there is
    /// discarded and counted (VL15Dropped); a MAD already being delivered
    /// is taken and thrown away. Completions not yet polled are lost.
    pub fn detach_sm(&mut self, d: usize) -> Result<()> {
        let dev = self
            .devs
            .get_mut(d)
            .ok_or_else(|| anyhow!("no device {d}"))?;
        if let Some(mut sm) = dev.sm.take() {
            // A request its model took whole runs to its end there, as one
            // begun on the stream would.
            // A request its model holds whole was presented (its first
            // beat offered) and runs to its end, as one presented on the
            // stream would (AXI-Stream: a beat offered stays until taken).
            if dev.host_in[1].is_some() {
                dev.host_in[1] = Some(Held::Orphan);
            }
            if sm.tx.withdraw_unstarted() {
                dev.sm_tx_tail = Some(sm.tx);
            }
            let rq = usize::from(sm.port)
                .checked_sub(1)
                .filter(|_| !dev.is_switch)
                .and_then(|p| dev.sm_rq.get_mut(p));
            if let Some(rq) = rq {
                rq.flush();
            }
            self.activate(d);
            self.set_is_sm(d, sm.port, false);
        }
        Ok(())
    }

    /// Set or clear PortInfo.CapabilityMask IsSM of CA `d`'s `port`; a
    /// change sends Trap 144 to the port's MasterSMLID (when it has a LID
    /// and one), repeated until repressed.
    fn set_is_sm(&mut self, d: usize, port: u8, on: bool) {
        let now = self.cycle;
        let dev = &mut self.devs[d];
        let tid = TRAP_TID_BASE | dev.traps_sent;
        if let Some(m) = dev.agent_mut().set_is_sm(port, on, tid) {
            dev.trap_pending = Some((m, port, now));
            self.activate(d);
        }
    }

    /// Trap 257 (bad P_Key) or 258 (bad Q_Key) from the SMA of device `d`
    /// for its `port` (a CA port, or 0 on a switch), with the fields of the
    /// discarded packet: sent to the port's MasterSMLID through the trap
    /// path, repeated until repressed (it replaces a trap not yet
    /// repressed). False when the SMA may not send it (no LID or no
    /// MasterSMLID yet).
    pub fn key_violation_trap(&mut self, d: usize, port: u8, trap: u16, v: &KeyViolation) -> bool {
        let now = self.cycle;
        let Some(dev) = self.devs.get_mut(d) else {
            return false;
        };
        let tid = TRAP_TID_BASE | dev.traps_sent;
        match dev.agent().trap_key_violation(port, trap, v, tid) {
            Some(m) => {
                dev.trap_pending = Some((m, port, now));
                self.activate(d);
                true
            }
            None => false,
        }
    }

    /// Queue an SM request on device `d` (which must have an SM).
    pub fn sm_post(&mut self, d: usize, ah: AddressHandle, m: &Mad) -> Result<()> {
        let dev = &mut self.devs[d];
        let sm = dev
            .sm
            .as_mut()
            .ok_or_else(|| anyhow!("{}: no SM attached", dev.name))?;
        sm.tx.push(m, (ah, sm.port));
        sm.send_wr.push_back(None);
        sm.sent += 1;
        self.activate(d);
        Ok(())
    }

    /// Take link `l` down (`up` false) or bring it up, from this cycle on.
    /// Beats in flight on a link that goes down are lost; the RTL ports at
    /// both ends see `link_up_i` fall (PortState Down) and discard any
    /// partly received packet.
    pub fn set_link(&mut self, l: usize, up: bool) {
        self.links[l].up = up;
        self.link_switched(l, up);
    }

    /// Link `l` was switched on or off (cable, port disabled): off, what is
    /// on it is lost; both ends look at their `link_up` again.
    fn link_switched(&mut self, l: usize, on: bool) {
        if !on {
            self.drop_in_flight(l);
        }
        for (d, _) in self.links[l].ends {
            self.cable_changed(d);
        }
    }

    /// A cable of device `d` came, went, moved or retrains: its next tick
    /// looks at every port's `link_up`.
    fn cable_changed(&mut self, d: usize) {
        self.devs[d].scan_ports = true;
        self.activate(d);
    }

    /// A link stops carrying: the beats on the cable are lost.
    fn drop_in_flight(&mut self, l: usize) {
        let link = &mut self.links[l];
        for dir in 0..2 {
            // A burst on the cable ahead is lost with it, and its packet,
            // which will not end, is not written.
            let (d, p) = link.ends[dir];
            if let Some(a) = self.devs[d].take_announced(usize::from(p) - 1) {
                if let Some(k) = a.log {
                    self.log_lines.remove(&k);
                }
            }
            self.stats.beats_lost += link.pipe[dir].len() as u64;
            link.pipe[dir].clear();
            link.sent[dir] = PacketAssembler::default();
            link.arriving[dir] = PacketAssembler::default();
            link.in_packet[dir] = false;
        }
    }

    /// Run one of ibsim's console words on cables, as ibsim spells them:
    ///
    /// - `Link "a"[p] "b"[q]`: cable port p of a to port q of b (both ports
    ///   free, or already joined by a cable that is down: it comes up);
    /// - `Unlink "a"[p]`, `Unlink "a"`: that port's cable (every cable of a)
    ///   goes down; what is on it is lost;
    /// - `ReLink "a"[p]`, `ReLink "a"`: a cable taken down by Unlink comes
    ///   back up.
    ///
    /// The word is case-insensitive; node ids are the topology's. Returns
    /// what changed, one line per cable, in ibsim's `"a"[p] <-> "b"[q]` form.
    pub fn console(&mut self, line: &str) -> Result<String> {
        let line = line.trim();
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let args = parse_console_args(rest).with_context(|| format!("console: {line:?}"))?;
        let word = word.to_ascii_lowercase();
        let mut changed = Vec::new();
        match (word.as_str(), args.as_slice()) {
            ("link", [(a, Some(p)), (b, Some(q))]) => {
                let ea = self.console_end(a, *p)?;
                let eb = self.console_end(b, *q)?;
                if ea == eb {
                    bail!("console: Link of \"{a}\"[{p}] to itself");
                }
                let la = self.link_at(ea.0, ea.1);
                let lb = self.link_at(eb.0, eb.1);
                match (la, lb) {
                    (Some(x), Some(y)) if x == y => {
                        if !self.links[x].up {
                            self.set_link(x, true);
                            changed.push(x);
                        }
                    }
                    (None, None) => {
                        let l = self.links.len();
                        let names = [self.devs[ea.0].name.as_str(), self.devs[eb.0].name.as_str()];
                        self.links.push(Link::new([ea, eb], self.opts.link_latency, names));
                        self.devs[ea.0].port_links[usize::from(ea.1) - 1] = Some((l, 0));
                        self.devs[eb.0].port_links[usize::from(eb.1) - 1] = Some((l, 1));
                        self.cable_changed(ea.0);
                        self.cable_changed(eb.0);
                        changed.push(l);
                    }
                    (x, y) => {
                        let busy = if x.is_some() { (a, p) } else { (b, q) };
                        let l = x.or(y).expect("one is cabled");
                        bail!(
                            "console: \"{}\"[{}] already has a cable ({}): Unlink keeps the cable (for ReLink), a port takes one",
                            busy.0,
                            busy.1,
                            self.link_text(l)
                        );
                    }
                }
            }
            ("unlink" | "relink", [(a, port)]) => {
                let up = word == "relink";
                let d = self
                    .dev_index(a)
                    .ok_or_else(|| anyhow!("console: no node \"{a}\""))?;
                let ports: Vec<u8> = match port {
                    Some(p) => {
                        self.console_end(a, *p)?;
                        vec![*p]
                    }
                    None => (1..=self.devs[d].nports).collect(),
                };
                for p in ports {
                    match self.link_at(d, p) {
                        Some(l) if self.links[l].up != up => {
                            self.set_link(l, up);
                            changed.push(l);
                        }
                        Some(_) => {}
                        None if port.is_some() => {
                            bail!("console: \"{a}\"[{p}] has no cable")
                        }
                        None => {}
                    }
                }
            }
            ("link" | "unlink" | "relink", _) => bail!(
                "console: {line:?}: expected Link \"a\"[p] \"b\"[q], Unlink \"a\"[p], Unlink \"a\", ReLink \"a\"[p] or ReLink \"a\""
            ),
            _ => bail!("console: unknown word {word:?} (known: Link, Unlink, ReLink)"),
        }
        Ok(changed
            .iter()
            .map(|&l| {
                let state = if self.links[l].up { "up" } else { "down" };
                format!("{} {state}\n", self.link_text(l))
            })
            .collect())
    }

    fn console_end(&self, id: &str, p: u8) -> Result<End> {
        let d = self
            .dev_index(id)
            .ok_or_else(|| anyhow!("console: no node \"{id}\""))?;
        if p == 0 || p > self.devs[d].nports {
            bail!(
                "console: \"{id}\" has ports 1..{}, not {p}",
                self.devs[d].nports
            );
        }
        Ok((d, p))
    }

    /// `"a"[p] <-> "b"[q]`
    fn link_text(&self, l: usize) -> String {
        let [(a, p), (b, q)] = self.links[l].ends;
        format!(
            "\"{}\"[{p}] <-> \"{}\"[{q}]",
            self.devs[a].name, self.devs[b].name
        )
    }

    /// Put a whole packet (LRH..VCRC, any content) on the cable into device
    /// `d`'s port `p`, as if the far end had sent it: its beats reach the RX
    /// one per cycle from the next free cycle after the link latency, behind
    /// whatever is already on that cable. Traced as `tb>name[p]`.
    pub fn inject(&mut self, d: usize, p: u8, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            bail!("inject: empty packet");
        }
        let (l, dir) = self.cable_of(d, p)?;
        let now = self.cycle;
        let link = &mut self.links[l];
        let pipe = &mut link.pipe[1 - dir];
        let first = pipe
            .back()
            .map_or(now + link.latency, |(t, _)| t + 1)
            .max(now + link.latency);
        for (due, b) in (first..).zip(crate::model::stream::to_beats(
            bytes,
            crate::model::stream::beat_bytes(self.opts.data_w),
        )) {
            pipe.push_back((due, b));
            // Each beat wakes the receiver, as beats sent by a device do.
            self.wake.push(Reverse((due, d)));
        }
        self.devs[d].note_inbound(usize::from(p) - 1);
        if self.opts.trace {
            self.trace.push(TraceEntry {
                cycle: first,
                dir: format!("tb>{}[{p}]", self.devs[d].name),
                bytes: bytes.to_vec(),
            });
        }
        Ok(())
    }

    /// The cable at device `d` port `p` and the direction the port sends
    /// on.
    fn port_link(&self, d: usize, p: u8) -> Option<(usize, usize)> {
        self.devs[d]
            .port_links
            .get(usize::from(p).wrapping_sub(1))
            .copied()
            .flatten()
    }

    /// [`Net::port_link`], or an error naming the port.
    fn cable_of(&self, d: usize, p: u8) -> Result<(usize, usize)> {
        self.port_link(d, p)
            .ok_or_else(|| anyhow!("{}: port {p} has no cable", self.devs[d].name))
    }

    /// Index of the link at device `d` port `p`.
    pub fn link_at(&self, d: usize, p: u8) -> Option<usize> {
        self.port_link(d, p).map(|(l, _)| l)
    }

    /// Corrupt the packets arriving at device `d` port `p` from now on as
    /// `spec` says (None: stop). Errors when the port has no cable.
    pub fn set_wire_fault(&mut self, d: usize, p: u8, spec: Option<FaultSpec>) -> Result<()> {
        let (l, k) = self.cable_of(d, p)?;
        let dir = 1 - k;
        let link = &mut self.links[l];
        link.fault[dir] = spec.map(|s| Box::new(WireFault::new(s)));
        // The beats of a burst on the cable ahead that have not left yet
        // leave through the new fault.
        let (sd, sp) = link.ends[dir];
        let ahead = self.devs[sd].announced[usize::from(sp) - 1]
            .as_ref()
            .map(|a| (a.first, a.beats.clone()));
        if let Some((first, beats)) = ahead {
            let now = self.cycle;
            let cut = now + link.latency;
            link.pipe[dir].retain(|(due, _)| *due < cut);
            // A receiver that took them ahead loses them.
            let (rd, rp) = link.ends[1 - dir];
            let rp = usize::from(rp) - 1;
            if self.devs[rd].rx_given[rp].is_some_and(|to| to > cut) {
                let off = self.devs[rd].off;
                self.devs[rd].dev.rx_burst_cut(rp, cut + off);
            }
            let from = now.saturating_sub(first) as usize;
            let mut wake = None;
            let link = &mut self.links[l];
            for (k, b) in beats.iter().enumerate().skip(from) {
                if let Some(due) = link.send(dir, first + k as u64, *b) {
                    wake.get_or_insert(due);
                }
            }
            if let Some(due) = wake {
                self.wake.push(Reverse((due, rd)));
                self.devs[rd].note_inbound(rp);
            }
        }
        Ok(())
    }

    /// The fault on the packets arriving at device `d` port `p`, if any.
    pub fn wire_fault(&self, d: usize, p: u8) -> Option<&WireFault> {
        let (l, k) = self.port_link(d, p)?;
        self.links[l].fault(1 - k)
    }

    /// The end at the other side of device `d` port `p`'s cable (whether
    /// the cable is up or not).
    pub fn peer(&self, d: usize, p: u8) -> Option<End> {
        let (l, k) = self.port_link(d, p)?;
        Some(self.links[l].ends[1 - k])
    }

    /// Carry out register writes an agent asks for outside an SMP (the
    /// console's Baselid and Clear), as after an SMP.
    pub fn apply_hw_writes(&mut self, d: usize, writes: &[HwWrite]) {
        let mut regs = Vec::new();
        for w in writes {
            self.devs[d].hw_writes(w, &mut regs);
        }
        self.devs[d].regs.extend(regs);
        self.activate(d);
    }

    /// Read register `addr` of device `d` (one fabric cycle).
    pub fn read_reg(&mut self, d: usize, addr: u16) -> Result<u32> {
        while !self.devs[d].regs.is_empty() {
            self.step()?;
        }
        self.devs[d].read = Some(addr);
        self.devs[d].read_value = None;
        self.activate(d);
        self.step()?;
        self.devs[d]
            .read_value
            .take()
            .ok_or_else(|| anyhow!("{}: register read did not happen", self.devs[d].name))
    }

    /// VL15 packets dropped at full buffers, summed over every device's
    /// counters (switch: Vl15Dropped of each external port and of port 0;
    /// CA: vl15_dropped of each port). Reads registers: simulates cycles.
    pub fn vl15_dropped(&mut self) -> Result<u64> {
        Ok(self
            .vl15_drops()?
            .iter()
            .map(|&(_, _, n)| u64::from(n))
            .sum())
    }

    /// Every non-zero VL15 drop counter: (device, port, count); port 0 is
    /// a switch's SMI receive buffer.
    pub fn vl15_drops(&mut self) -> Result<Vec<(usize, u8, u32)>> {
        use crate::model::regmap::reg;
        let vl15_ctr = reg::COUNTERS
            .iter()
            .position(|c| *c == "vl15_dropped")
            .ok_or_else(|| anyhow!("no vl15_dropped counter"))? as u8;
        let mut out = Vec::new();
        for d in 0..self.devs.len() {
            let np = self.devs[d].nports;
            let addrs: Vec<(u8, u16)> = if self.devs[d].is_switch {
                (1..=np)
                    .map(|p| (p, swreg::ctr(p, swreg::ctr::VL15_DROPPED)))
                    .chain([(0, swreg::ctr(0, swreg::ctr::P0_VL15_DROPPED))])
                    .collect()
            } else {
                (1..=np)
                    .map(|p| (p, mpreg::port(p, reg::CTR_BASE + vl15_ctr)))
                    .collect()
            };
            for (p, a) in addrs {
                let n = self.read_reg(d, a)?;
                if n != 0 {
                    out.push((d, p, n));
                }
            }
        }
        Ok(out)
    }

    /// Queue a data-VL packet (LRH..ICRC; the port appends the VCRC) on CA
    /// `d`'s host port `p`.
    pub fn data_send(&mut self, d: usize, p: u8, bytes: &[u8]) -> Result<()> {
        let dev = &mut self.devs[d];
        if dev.is_switch || p == 0 || usize::from(p) > dev.data_tx.len() {
            bail!("{}: no data host port {p}", dev.name);
        }
        if bytes.is_empty() {
            bail!("data_send: empty packet");
        }
        dev.data_tx[usize::from(p) - 1].push(bytes, ());
        self.activate(d);
        Ok(())
    }

    /// Queue a GMP (LRH..ICRC, built by the host: data VL, SLID = the
    /// switch LID; the switch routes it by its LFT and appends the VCRC) on
    /// switch `d`'s port-0 GMP send stream.
    pub fn gmp_send(&mut self, d: usize, bytes: &[u8]) -> Result<()> {
        let dev = &mut self.devs[d];
        if !dev.is_switch {
            bail!("{}: not a switch (a CA sends by data_send)", dev.name);
        }
        if bytes.is_empty() {
            bail!("gmp_send: empty packet");
        }
        dev.gmp_tx.push(bytes, ());
        self.activate(d);
        Ok(())
    }

    /// Queue a register write on device `d`.
    pub fn write_reg(&mut self, d: usize, addr: u16, value: u32) {
        self.devs[d].regs.push_back((addr, value));
        self.activate(d);
    }

    /// The devices whose host side received a data-VL packet (`gmp_rx` of a
    /// switch, `data_rx` of a CA) since the last call, in index order.
    pub fn take_rx_pending(&mut self) -> Vec<usize> {
        let mut list = std::mem::take(&mut self.rx_pending);
        list.sort_unstable();
        for &d in &list {
            self.devs[d].rx_listed = false;
        }
        list
    }

    /// Simulate one cycle of the whole fabric.
    pub fn step(&mut self) -> Result<()> {
        self.step_with(None)
    }

    /// One cycle, with device `d` driven by `drv`, which its owner lends
    /// for the cycle ([`Net::add_lent`]).
    pub fn step_lending(&mut self, d: usize, drv: &mut dyn Driver) -> Result<()> {
        self.step_with(Some((d, drv)))
    }

    fn step_with(&mut self, mut lent: Option<(usize, &mut (dyn Driver + '_))>) -> Result<()> {
        let now = self.cycle;
        self.moved = false;
        while let Some(d) =
            pop_due(&mut self.wake, now).or_else(|| pop_due(&mut self.trap_wake, now))
        {
            self.activate(d);
        }
        let spare = std::mem::take(&mut self.list_spare);
        let mut list = std::mem::replace(&mut self.active_list, spare);
        for &d in &list {
            self.active[d] = false;
        }
        let mut requests: Vec<(usize, Mad, SmiMeta)> = Vec::new();
        // Inputs in list order, the models' cycles (on the pool when at
        // least PAR_MIN_DEVICES have work: links have at least a cycle of
        // latency, so no model reads what another writes in this cycle),
        // outputs in list order: the same run at any thread count.
        let mut preps = std::mem::take(&mut self.prep_buf);
        for &d in &list {
            let drv = match lent.as_mut() {
                Some((k, drv)) if *k == d => Some(&mut **drv),
                _ if self.devs[d].lent => {
                    bail!(
                        "{} is driven by a driver its owner lends each cycle (Net::step_lending)",
                        self.devs[d].name
                    )
                }
                _ => None,
            };
            preps.push(Prep::default());
            let prep = preps.last_mut().expect("pushed");
            self.tick_in(d, now, drv, prep);
        }
        let mut outs = std::mem::take(&mut self.out_buf);
        self.eval(&list, now, &mut outs);
        for ((&d, prep), o) in list.iter().zip(&preps).zip(outs.drain(..)) {
            let drv = match lent.as_mut() {
                Some((k, drv)) if *k == d => Some(&mut **drv),
                _ => None,
            };
            o?;
            self.tick_out(d, now, prep, &mut requests, drv)?;
        }
        preps.clear();
        list.clear();
        self.list_spare = list;
        self.prep_buf = preps;
        self.out_buf = outs;
        for (d, m, meta) in requests {
            self.answer(d, m, meta, now)?;
        }
        self.active_list.sort_unstable();
        self.write_log_lines(now);
        self.cycle += 1;
        self.quiet_cycles = if self.moved { 0 } else { self.quiet_cycles + 1 };
        if let Some(e) = self.wire_log_err.take() {
            self.wire_log = None;
            return Err(anyhow::Error::new(e).context("the --pcap trace"));
        }
        Ok(())
    }

    /// One cycle of the models of `list` with their inputs
    /// (`Device::din`), in list order (their outputs in `Device::dout`).
    fn eval(&mut self, list: &[usize], now: u64, outs: &mut Vec<Result<()>>) {
        let step = |dev: &mut Device<S>| {
            dev.step_model()
                .with_context(|| format!("{} at cycle {now}", dev.name))
        };
        let pool = match &self.pool {
            Some(p) if list.len() >= PAR_MIN_DEVICES => p,
            _ => {
                outs.extend(list.iter().map(|&d| step(&mut self.devs[d])));
                return;
            }
        };
        self.stats.parallel_cycles += 1;
        // Disjoint &mut of the listed devices, in index order.
        let mut order: Vec<usize> = (0..list.len()).collect();
        order.sort_unstable_by_key(|&k| list[k]);
        let mut jobs: Vec<(usize, &mut Device<S>)> = Vec::with_capacity(list.len());
        let mut next = order.iter().peekable();
        for (idx, dev) in self.devs.iter_mut().enumerate() {
            match next.peek() {
                Some(&&k) if list[k] == idx => {
                    jobs.push((k, dev));
                    next.next();
                }
                Some(_) => {}
                None => break,
            }
        }
        let mut done: Vec<(usize, Result<()>)> = pool.install(|| {
            jobs.into_par_iter()
                .map(|(k, dev)| (k, step(dev)))
                .collect()
        });
        done.sort_unstable_by_key(|(k, _)| *k);
        outs.extend(done.into_iter().map(|(_, o)| o));
    }

    /// The input side of clocking device `d` at cycle `now`: its links,
    /// host streams and register port, as the model's inputs.
    fn tick_in(
        &mut self,
        d: usize,
        now: u64,
        lent: Option<&mut (dyn Driver + '_)>,
        prep: &mut Prep,
    ) {
        if self.devs[d].is_driven() {
            return self.tick_in_driven(d, now, lent);
        }
        // Packets whose last beat arrives: (cycle of that, port, first
        // cycle, bytes).
        let mut arrived: Vec<(u64, u8, u64, Vec<u8>)> = Vec::new();
        {
            let dev = &mut self.devs[d];
            if std::mem::take(&mut dev.calm_sleep) {
                // Its model sleeps through a calm period: it is moved on to
                // now and looks at every port.
                let lag = (now + dev.off).saturating_sub(dev.dev.cycle());
                if lag > 0 {
                    dev.dev.skip(lag);
                }
                dev.pin_all = true;
            } else {
                let lag = now.saturating_sub(dev.dev.cycle());
                if lag > 0 {
                    dev.dev.skip(lag);
                }
            }
            dev.off = dev.dev.cycle().saturating_sub(now);
            let mut at_rest = true;
            let ahead_ok = !self.opts.every_cycle;
            let bursts = ahead_ok && dev.dev.takes_rx_bursts();
            // Links into the device: every port after a link change, else
            // the ports with beats coming in (or one to clear), in port order.
            let retrained = dev.scan_at.is_some_and(|t| now >= t);
            let full = dev.scan_ports || retrained;
            if full {
                dev.scan_ports = false;
                if retrained {
                    dev.scan_at = None;
                }
                dev.scanned = true;
                dev.inbound.clear();
                dev.inbound.extend(0..dev.pin.len() as u8);
                dev.inbound_listed.fill(true);
            }
            if full {
                dev.pin_all = true;
                at_rest = false;
            }
            let mut k = 0;
            while let Some(&q) = dev.inbound.get(k) {
                let p = usize::from(q);
                dev.pin_changed.push(q);
                let pi = &mut dev.pin[p];
                pi.rx_tvalid = false;
                pi.rx_tlast = false;
                pi.tx_tready = true;
                let mut more = false;
                if let Some((l, dir)) = dev.port_links[p] {
                    let link = &mut self.links[l];
                    if full {
                        pi.link_up = link.carrying(now);
                    }
                    let rx = &mut link.pipe[1 - dir];
                    let burst = if bursts { whole_packet(rx, now) } else { 0 };
                    if burst > 0 {
                        // A whole packet from now on, one beat a cycle:
                        // the model takes it ahead.
                        let mut beats = std::mem::take(&mut self.rx_beats);
                        beats.clear();
                        for (due, b) in rx.drain(..burst) {
                            beats.push(b);
                            if self.wire_log.is_some() {
                                if let Some((first, bytes)) = link.arriving[1 - dir].beat(due, &b) {
                                    arrived.push((due, p as u8 + 1, first, bytes));
                                }
                            }
                        }
                        dev.dev.rx_burst(p, now + dev.off, &beats);
                        dev.rx_given[p] = Some(now + burst as u64);
                        dev.rx_given_until = dev.rx_given_until.max(now + burst as u64);
                        self.rx_beats = beats;
                        if let Some(&(due, _)) = rx.front() {
                            // (the next packet's first beat wakes it)
                            self.wake.push(Reverse((due, d)));
                        }
                    } else if rx.front().is_some_and(|(due, _)| *due <= now) {
                        let (_, b) = rx.pop_front().expect("checked");
                        pi.rx_tdata = b.data;
                        pi.rx_tkeep = b.keep;
                        pi.rx_tvalid = true;
                        pi.rx_tlast = b.last;
                        at_rest = false;
                        if self.wire_log.is_some() {
                            if let Some((first, bytes)) = link.arriving[1 - dir].beat(now, &b) {
                                arrived.push((now, p as u8 + 1, first, bytes));
                            }
                        }
                    }
                    more = pi.rx_tvalid || !rx.is_empty();
                } else {
                    pi.link_up = false;
                }
                if more {
                    k += 1;
                } else {
                    dev.inbound.remove(k);
                    dev.inbound_listed[p] = false;
                }
            }
            // Host side: data VLs (CA), SMA, SM, registers.
            if !dev.is_switch {
                dev.pin_all = true;
                for p in 0..dev.pin.len() {
                    let pi = &mut dev.pin[p];
                    pi.dtx_tvalid = false;
                    pi.dtx_tlast = false;
                    if let Some((b, _)) = dev.data_tx[p].present() {
                        pi.dtx_tdata = b.data;
                        pi.dtx_tkeep = b.keep;
                        pi.dtx_tvalid = true;
                        pi.dtx_tlast = b.last;
                        at_rest = false;
                    }
                    dev.data_rx[p].always();
                }
            }
            let hp = dev.host_ports();
            // From the defaults: only what is not 0 is written.
            dev.din = DevIn::default();
            let i = &mut dev.din;
            i.sma_rx_tready = dev.sma_rx.ready();
            while dev
                .sma_pending
                .front()
                .is_some_and(|(due, _, _, reads)| *due <= now && reads.is_empty())
            {
                let (_, m, meta, _) = dev.sma_pending.pop_front().expect("checked");
                dev.sma_tx.push(&m, meta);
            }
            // A whole MAD the model holds goes in at once; its source hears
            // the beats taken when the model took the last one.
            let off = dev.off;
            let ahead = move |dev: &mut dyn Dut, s: HostIn, beats: &[Beat], side: &DevIn| {
                (ahead_ok && dev.host_burst(s, now + off, beats, side)).then_some(Held::Source)
            };
            if dev.host_in[0].is_none() {
                if let Some((beats, m)) = dev.sma_tx.whole_front() {
                    let side = sma_tx_side(m);
                    dev.host_in[0] = ahead(&mut *dev.dev, HostIn::SmaTx, beats, &side);
                }
            }
            if dev.host_in[2].is_none() {
                if let Some((beats, &port)) = dev.trap_tx.whole_front() {
                    let side = trap_tx_side(port);
                    dev.host_in[2] = ahead(&mut *dev.dev, HostIn::TrapTx, beats, &side);
                }
            }
            if dev.host_in[1].is_none() && dev.sm_tx_tail.is_none() {
                if let Some((beats, (ah, port))) =
                    dev.sm.as_ref().and_then(|sm| sm.tx.whole_front())
                {
                    let side = sm_tx_side(ah, *port);
                    dev.host_in[1] = ahead(&mut *dev.dev, HostIn::SmTx, beats, &side);
                }
            }
            let sma_tx = if dev.host_in[0].is_none() {
                dev.sma_tx.present()
            } else {
                None
            };
            if let Some((b, m)) = sma_tx {
                drive_host(i, HostIn::SmaTx, &b, &sma_tx_side(&m));
            }
            let trap = if dev.host_in[2].is_none() {
                dev.trap_tx.present()
            } else {
                None
            };
            if let Some((b, port)) = trap {
                drive_host(i, HostIn::TrapTx, &b, &trap_tx_side(port));
            }
            // The SM's receive WQEs: the RTL counts them and discards a MAD
            // for the SM when none is posted; sm_rx_tready is only the
            // stream's backpressure. With no SM attached the host throws
            // away what reaches sm_rx (only a MAD that started before a
            // detach can).
            // One doorbell a cycle: the first port with something to ring.
            if let Some(p) = dev.sm_rq[..hp].iter().position(RecvQueue::pending) {
                let db = dev.sm_rq[p].doorbell();
                i.sm_rq_post = db.post;
                i.sm_rq_post_n = db.n;
                i.sm_rq_clr = db.clr;
                i.sm_rq_port = p as u8 + 1;
            }
            i.sm_rx_tready = true;
            if let Some(sm) = dev.sm.as_mut().filter(|_| !dev.sm_rx_skip) {
                i.sm_rx_tready = sm.rx.ready();
            }
            let sm_tx = match (dev.sm_tx_tail.as_mut(), dev.sm.as_mut()) {
                (Some(t), _) => Some(t),
                (None, Some(sm)) if dev.host_in[1].is_none() => Some(&mut sm.tx),
                _ => None,
            };
            if let Some(tx) = sm_tx {
                if let Some((b, (ah, port))) = tx.present() {
                    drive_host(i, HostIn::SmTx, &b, &sm_tx_side(&ah, port));
                }
            }
            if dev.is_switch {
                dev.gmp_rx.always();
                if let Some((b, _)) = dev.gmp_tx.present() {
                    i.gmp_tx_tdata = b.data;
                    i.gmp_tx_tkeep = b.keep;
                    i.gmp_tx_tvalid = true;
                    i.gmp_tx_tlast = b.last;
                }
            }
            let reading = dev.regs.is_empty() && dev.read.is_some();
            // A counter a pending SMA response shows (PortInfo
            // P_KeyViolations/Q_KeyViolations), when the register port is
            // free: read during the response's service latency.
            let patch = if dev.regs.is_empty() && dev.read.is_none() {
                dev.sma_pending
                    .iter()
                    .position(|(_, _, _, r)| !r.is_empty())
            } else {
                None
            };
            if let Some((a, v)) = dev.regs.pop_front() {
                i.reg_we = true;
                i.reg_addr = a;
                i.reg_wdata = v;
            } else if let Some(a) = dev.read {
                i.reg_addr = a;
            } else if let Some(k) = patch {
                i.reg_addr = dev.sma_pending[k].3[0].1;
            }
            prep.reading = reading;
            prep.patch = patch;
            prep.at_rest = at_rest && dev.din == rest_dev_in();
        }
        for (at, p, first, bytes) in arrived {
            self.log_packet((at, 0, d, p), Direction::Inbound, first, bytes, None);
        }
    }

    /// The output side of clocking device `d` at cycle `now`, with what its
    /// model answered: host streams, SMA requests, traps, beats onto links.
    fn tick_out(
        &mut self,
        d: usize,
        now: u64,
        prep: &Prep,
        requests: &mut Vec<(usize, Mad, SmiMeta)>,
        lent: Option<&mut (dyn Driver + '_)>,
    ) -> Result<()> {
        if self.devs[d].is_driven() {
            return self.tick_out_driven(d, now, lent);
        }
        let &Prep {
            reading,
            patch,
            at_rest,
        } = prep;
        let mut rewake = false;
        // Not idle, and no input change of this cycle wakes it anyway.
        let mut busy = false;
        // Its host side has work after this cycle (then it is not calm).
        let host_work;
        {
            let dev = &mut self.devs[d];
            dev.ticks += 1;
            self.stats.ticks += 1;
            let o = dev.dout;
            if reading {
                dev.read = None;
                dev.read_value = Some(o.reg_rdata);
            }
            if let Some(k) = patch {
                let (_, m, _, reads) = &mut dev.sma_pending[k];
                let (off, _) = reads.remove(0);
                put_sat16(m, off, o.reg_rdata);
            }
            // MADs the model held and took whole: their sources hear each
            // beat taken, in its cycle.
            if dev.host_in.iter().any(Option::is_some) {
                let mut taken = std::mem::take(&mut self.host_taken);
                dev.dev.take_host_taken(&mut taken);
                for t in taken.drain(..) {
                    let s = t.stream as usize;
                    let (first, last) = (t.first - dev.off, t.last - dev.off);
                    match (s, dev.host_in[s].take()) {
                        (0, Some(Held::Source)) => replay_taken(&mut dev.sma_tx, first, last),
                        (1, Some(Held::Source)) => {
                            if let Some(sm) = dev.sm.as_mut() {
                                replay_taken(&mut sm.tx, first, last);
                            }
                        }
                        (2, Some(Held::Source)) => replay_taken(&mut dev.trap_tx, first, last),
                        _ => {}
                    }
                }
                self.host_taken = taken;
            }
            dev.sma_tx.taken(o.sma_tx_tready, now);
            dev.trap_tx.taken(o.trap_tx_tready, now);
            // A link that came or went changes PortState at this clock
            // edge; the model shows it in the next cycle, so run that one.
            let mut link_changed = false;
            if std::mem::take(&mut dev.scanned) {
                for (p, pi) in dev.pin.iter().enumerate() {
                    if dev.last_link_up[p] != pi.link_up {
                        dev.last_link_up[p] = pi.link_up;
                        link_changed = true;
                    }
                }
            }
            if link_changed {
                rewake = true;
            }
            let edge = dev.is_switch && Self::link_edge(dev);
            if let Some(due) = Self::service_trap(dev, edge, now, self.opts.trap_interval) {
                self.trap_wake.push(Reverse((due, d)));
            }
            let dev = &mut self.devs[d];
            if dev.is_switch {
                dev.gmp_tx.taken(o.gmp_tx_tready, now);
                // (a sink given no beat outside a packet does nothing)
                if o.gmp_rx_tvalid || dev.gmp_rx.in_packet() {
                    let b = Beat {
                        data: o.gmp_rx_tdata,
                        keep: o.gmp_rx_tkeep,
                        last: o.gmp_rx_tlast,
                    };
                    let reason = o.gmp_rx_reason;
                    dev.gmp_rx
                        .observe(o.gmp_rx_tvalid, b, o.gmp_rx_tuser, now, || reason);
                }
            } else {
                for (p, po) in dev.dev.ports_out().iter().enumerate() {
                    dev.data_tx[p].taken(po.dtx_tready, now);
                    let b = Beat {
                        data: po.drx_tdata,
                        keep: po.drx_tkeep,
                        last: po.drx_tlast,
                    };
                    dev.data_rx[p].observe(po.drx_tvalid, b, po.drx_tuser, now, || po.drx_reason);
                }
            }
            if !dev.rx_listed
                && (!dev.gmp_rx.packets.is_empty()
                    || dev.data_rx[..dev.host_ports()]
                        .iter()
                        .any(|r| !r.packets.is_empty()))
            {
                dev.rx_listed = true;
                self.rx_pending.push(d);
            }
            let full_keep = crate::model::stream::full_keep(self.opts.data_w);
            let full = |data: [u64; 2], last: bool| Beat {
                data,
                keep: full_keep,
                last,
            };
            let (feed, observe) = host_out_step(&mut dev.host_out[0], now, &o, HostOut::SmaRx);
            if let Some((b, n)) = feed {
                dev.feed_host(0, &b, n);
            }
            if observe && (o.sma_rx_tvalid || dev.sma_rx.in_packet()) {
                dev.sma_rx.observe(
                    o.sma_rx_tvalid,
                    full(o.sma_rx_tdata, o.sma_rx_tlast),
                    false,
                    now,
                    || sma_rx_meta(&o),
                );
            }
            while let Some(r) = dev.sma_rx.packets.pop_front() {
                let m: Mad = r.bytes.as_slice().try_into().map_err(|_| {
                    anyhow!(
                        "{}: SMA received {} bytes, not a MAD",
                        dev.name,
                        r.bytes.len()
                    )
                })?;
                requests.push((d, m, r.meta));
            }
            if let Some(t) = dev.sm_tx_tail.as_mut() {
                t.taken(o.sm_tx_tready, now);
                if t.idle() {
                    dev.sm_tx_tail = None;
                }
            } else if let Some(sm) = dev.sm.as_mut() {
                sm.tx.taken(o.sm_tx_tready, now);
            }
            if let Some(sm) = dev.sm.as_mut() {
                while sm.send_wr.len() > sm.tx.pending() {
                    let Some(wr_id) = sm.send_wr.pop_front().expect("checked") else {
                        continue;
                    };
                    sm.cq.push_back(Wc {
                        wr_id,
                        opcode: WcOpcode::Send,
                        mad: None,
                        meta: SmiMeta::default(),
                        cycle: now,
                    });
                }
                let (feed, observe) = host_out_step(&mut dev.host_out[1], now, &o, HostOut::SmRx);
                if let Some((b, n)) = feed {
                    feed_sm(sm, &mut dev.sm_rx_skip, &b, n, full_keep);
                }
                if observe && !dev.sm_rx_skip && (o.sm_rx_tvalid || sm.rx.in_packet()) {
                    sm.rx.observe(
                        o.sm_rx_tvalid,
                        full(o.sm_rx_tdata, o.sm_rx_tlast),
                        false,
                        now,
                        || sm_rx_meta(&o),
                    );
                }
                while let Some(r) = sm.rx.packets.pop_front() {
                    let m: Mad = r.bytes.as_slice().try_into().map_err(|_| {
                        anyhow!(
                            "{}: SM received {} bytes, not a MAD",
                            dev.name,
                            r.bytes.len()
                        )
                    })?;
                    // It used a WQE of the queue of the port it came in on.
                    // (A switch's SM interface has no receive queue.)
                    if let Some(rq) = usize::from(r.meta.port)
                        .checked_sub(1)
                        .filter(|_| !dev.is_switch)
                        .and_then(|p| dev.sm_rq.get_mut(p))
                    {
                        rq.used();
                    }
                    sm.cq.push_back(Wc {
                        wr_id: 0,
                        opcode: WcOpcode::Recv,
                        mad: Some(Box::new(m)),
                        meta: r.meta,
                        cycle: now,
                    });
                }
            }
            if dev.sm.is_none() {
                // (no SM: what reaches sm_rx goes nowhere)
                if let (Some((b, n)), _) =
                    host_out_step(&mut dev.host_out[1], now, &o, HostOut::SmRx)
                {
                    dev.feed_host(1, &b, n);
                }
            }
            if o.sm_rx_tvalid && dev.din.sm_rx_tready {
                dev.sm_rx_mid = !o.sm_rx_tlast;
                if o.sm_rx_tlast {
                    dev.sm_rx_skip = false;
                }
            }
            // MADs the model announced to its host: taken whole at their
            // last beat, when it is stepped.
            let mut hb = std::mem::take(&mut self.host_bursts);
            dev.dev.take_host_bursts(&mut hb);
            for mut b in hb.drain(..) {
                if self.opts.every_cycle || b.beats.is_empty() {
                    continue;
                }
                b.first = b.first.saturating_sub(dev.off);
                let last = b.first + b.beats.len() as u64 - 1;
                let s = match b.stream {
                    HostOut::SmaRx => 0,
                    HostOut::SmRx => 1,
                };
                // One announced again (after a stall) holds from its first
                // beat: the host takes the beats before it of the one it
                // replaces.
                if let Some(old) = dev.host_out[s].take() {
                    let k = (b.first.saturating_sub(old.first) as usize).min(old.beats.len());
                    dev.feed_host(s, &old, k);
                }
                dev.host_out[s] = Some(b);
                self.wake.push(Reverse((last, d)));
            }
            self.host_bursts = hb;
            // (a model given a packet ahead may show idle in its first
            // beat's cycle: its beats to come keep it busy)
            let rx_ahead = dev.rx_given_until > now + 1;
            // (and a MAD it holds whole from its host, until it took it)
            let held = dev.host_in.iter().any(Option::is_some);
            host_work = dev.has_host_work();
            if (!o.idle || rx_ahead || host_work || held) && !rewake {
                busy = true;
            }
        }
        // The bursts on the cable ahead that a step inside shows again.
        if self.devs[d].announced_ports != 0 {
            self.check_announced(d, now);
        }
        // Beats onto links: the ports with tx_tvalid (those the model
        // names, where it does).
        let mut sending = std::mem::take(&mut self.sending);
        let dut = &self.devs[d].dev;
        let pout = dut.ports_out();
        match dut.ports_hint() {
            Some(h) => sending.extend(
                bits(h.tx_valid)
                    .filter_map(|p| pout.get(p).map(|po| (p, *po)))
                    .filter(|(_, po)| po.tx_tvalid),
            ),
            None => {
                sending.extend((pout.iter().copied().enumerate()).filter(|(_, po)| po.tx_tvalid))
            }
        }
        for &(p, po) in &sending {
            let Some((l, dir)) = self.devs[d].port_links[p] else {
                continue;
            };
            if self.devs[d].announced[p].is_some() {
                // (a beat of a burst already on the cable)
                continue;
            }
            if !self.links[l].carrying(now) {
                self.stats.beats_lost += 1;
                continue;
            }
            let b = Beat {
                data: po.tx_tdata,
                keep: po.tx_tkeep,
                last: po.tx_tlast,
            };
            self.send_beat(d, p, (l, dir), now, b, true);
        }
        sending.clear();
        self.sending = sending;
        // Bursts the model announced go on the cable ahead.
        let mut bursts = std::mem::take(&mut self.bursts);
        self.devs[d].dev.take_tx_bursts(&mut bursts);
        if self.opts.every_cycle {
            // (its steps show every beat)
            bursts.clear();
        }
        for b in bursts.drain(..) {
            self.put_burst(d, b, now);
        }
        self.bursts = bursts;
        // A model that is calm sleeps until it must be stepped again, or
        // an input wakes it.
        if busy {
            let dev = &mut self.devs[d];
            let calm = if at_rest
                && !self.opts.every_cycle
                && dev.no_calm_until <= now + 1
                && !host_work
            {
                let off = dev.off;
                dev.dev
                    .calm_until()
                    .map(|t| t.saturating_sub(off))
                    .filter(|&t| t > now + 1)
            } else {
                None
            };
            match calm {
                Some(t) => {
                    dev.calm_sleep = true;
                    self.wake.push(Reverse((t, d)));
                }
                None => rewake = true,
            }
        }
        if rewake {
            self.activate(d);
        }
        Ok(())
    }

    /// Beat `b` from device `d` port index `p` onto link `l` (direction
    /// `dir`) at cycle `at`: the receiver is woken when it arrives, and a
    /// packet it ends is queued for the trace and the wire log (its key).
    fn send_beat(
        &mut self,
        d: usize,
        p: usize,
        (l, dir): (usize, usize),
        at: u64,
        b: Beat,
        wake: bool,
    ) -> Option<LogKey> {
        let keep = self.opts.trace || self.wire_log.is_some();
        let link = &mut self.links[l];
        let due = link.send(dir, at, b);
        self.stats.beats += 1;
        self.moved = true;
        let (other, other_port) = link.ends[1 - dir];
        let done = if keep {
            link.sent[dir]
                .beat(at, &b)
                .map(|(first, bytes)| (first, bytes, link.label[dir].clone()))
        } else {
            None
        };
        if let Some(due) = due {
            if wake {
                self.wake.push(Reverse((due, other)));
            }
            self.devs[other].note_inbound(usize::from(other_port) - 1);
        }
        done.map(|(first, bytes, label)| {
            let trace = self.opts.trace.then_some(label);
            self.log_packet(
                (at, 1, d, p as u8 + 1),
                Direction::Outbound,
                first,
                bytes,
                trace,
            )
        })
    }

    /// Burst `b` that device `d` announced at cycle `now` onto its cable,
    /// beat by beat with the cycles it leaves in. A cable that does not
    /// carry now or has a wire fault takes it beat by beat instead, and the
    /// device is stepped through it.
    fn put_burst(&mut self, d: usize, mut b: TxBurst, now: u64) {
        let p = b.port;
        let Some(&Some((l, dir))) = self.devs[d].port_links.get(p) else {
            // No cable: nothing leaves the port.
            return;
        };
        // (the model counts its own cycles)
        b.first = b.first.saturating_sub(self.devs[d].off);
        let end = b.first + b.beats.len() as u64;
        if self.devs[d].announced[p].is_some() {
            // It announces again what it announced before (a burst it
            // stalled): the new one holds from its first beat.
            self.void_announced(d, p, b.first);
        }
        let link = &self.links[l];
        if b.first <= now || b.beats.is_empty() || !link.carrying(now) || link.fault[dir].is_some()
        {
            let dev = &mut self.devs[d];
            dev.no_calm_until = dev.no_calm_until.max(end);
            return;
        }
        // A receiver that takes the packet ahead needs waking for its
        // first beat only.
        let (rd, _) = link.ends[1 - dir];
        let wake_all = !self.devs[rd].dev.takes_rx_bursts();
        let mut log = None;
        for (k, beat) in b.beats.iter().enumerate() {
            let at = b.first + k as u64;
            if let Some(key) = self.send_beat(d, p, (l, dir), at, *beat, wake_all || k == 0) {
                log = Some(key);
            }
        }
        self.devs[d].set_announced(
            p,
            Announced {
                first: b.first,
                beats: b.beats,
                log,
            },
        );
    }

    /// Device `d`'s bursts on the cable ahead, against what its step in
    /// cycle `now` shows: one that is over is forgotten; one whose beat
    /// the step does not show (an input that was not at rest changed what
    /// leaves) is void from this cycle on: its beats still to leave come
    /// off the cable and its packet is not written, and the step's own
    /// beats go out one by one.
    fn check_announced(&mut self, d: usize, now: u64) {
        let dev = &mut self.devs[d];
        let mut void: u128 = 0;
        for p in bits(dev.announced_ports) {
            let Some(a) = &dev.announced[p] else {
                continue;
            };
            let k = now.saturating_sub(a.first) as usize;
            if k >= a.beats.len() {
                dev.take_announced(p);
                continue;
            }
            let po = &dev.dev.ports_out()[p];
            if now < a.first || shows_tx_beat(po, &a.beats[k]) {
                continue;
            }
            void |= 1 << p;
        }
        for p in bits(void) {
            self.void_announced(d, p, now);
        }
    }

    /// Device `d`'s burst on port index `p` is void from cycle `from` on:
    /// its beats that leave from then come off the cable, and its packet
    /// is not written (the beats before `from` left).
    fn void_announced(&mut self, d: usize, p: usize, from: u64) {
        let dev = &mut self.devs[d];
        let Some(a) = dev.take_announced(p) else {
            return;
        };
        let Some((l, dir)) = dev.port_links[p] else {
            return;
        };
        let k = from.saturating_sub(a.first) as usize;
        if k >= a.beats.len() {
            // (it was over: nothing of it is void)
            return;
        }
        let link = &mut self.links[l];
        let cut = from + link.latency;
        let before = link.pipe[dir].len();
        link.pipe[dir].retain(|(due, _)| *due < cut);
        self.stats.beats -= (before - link.pipe[dir].len()) as u64;
        if let Some(key) = a.log {
            self.log_lines.remove(&key);
        }
        link.sent[dir] = PacketAssembler::default();
        for (j, b) in a.beats[..k].iter().enumerate() {
            link.sent[dir].beat(a.first + j as u64, b);
        }
        link.in_packet[dir] = a.beats[..k].last().is_some_and(|b| !b.last);
    }

    /// The input side of a driven device's cycle: the beats its links
    /// deliver now, and what its driver puts on the model's inputs.
    fn tick_in_driven(&mut self, d: usize, now: u64, lent: Option<&mut (dyn Driver + '_)>) {
        let dev = &mut self.devs[d];
        let lag = now.saturating_sub(dev.dev.cycle());
        if lag > 0 {
            dev.dev.skip(lag);
        }
        for p in 0..dev.pin.len() {
            dev.drv_link_rx[p] = None;
            let Some((l, dir)) = dev.port_links[p] else {
                continue;
            };
            let rx = &mut self.links[l].pipe[1 - dir];
            if rx.front().is_some_and(|(due, _)| *due <= now) {
                dev.drv_link_rx[p] = rx.pop_front().map(|(_, b)| b);
            }
        }
        // The driver starts from the defaults.
        dev.din = DevIn::default();
        let i = &mut dev.din;
        let link_rx = &dev.drv_link_rx;
        dev.pin_all = true;
        match (lent, dev.driven.as_deref_mut()) {
            (Some(drv), _) => drv.drive(now, link_rx, i, &mut dev.pin),
            (None, Some(drv)) => drv.drive(now, link_rx, i, &mut dev.pin),
            (None, None) => {}
        }
    }

    /// The output side of a driven device's cycle: its driver reads the
    /// outputs; the beats it sent go onto its links; every packet into or
    /// out of its ports is traced and logged.
    fn tick_out_driven(
        &mut self,
        d: usize,
        now: u64,
        lent: Option<&mut (dyn Driver + '_)>,
    ) -> Result<()> {
        self.stats.ticks += 1;
        // Packets are put together only for the trace and the wire log.
        let keep = self.opts.trace || self.wire_log.is_some();
        let Net {
            devs,
            links,
            opts,
            stats,
            wake,
            ..
        } = self;
        let dev = &mut devs[d];
        dev.ticks += 1;
        let o = dev.dout;
        let next = dev.dev.cycle();
        // The ports that beats were sent to (their devices are borrowed).
        let mut inbound: Vec<End> = Vec::new();
        let mut moved = match (lent, dev.driven.as_deref_mut()) {
            (Some(drv), _) => drv.observe(now, &o, dev.dev.ports_out(), next)?,
            (None, Some(drv)) => drv.observe(now, &o, dev.dev.ports_out(), next)?,
            (None, None) => return Ok(()),
        };
        let mut log = Vec::new();
        for (p, (pi, po)) in dev.pin.iter().zip(dev.dev.ports_out()).enumerate() {
            if pi.rx_tvalid {
                moved = true;
                let b = Beat {
                    data: pi.rx_tdata,
                    keep: pi.rx_tkeep,
                    last: pi.rx_tlast,
                };
                let done = if keep {
                    dev.drv_rx[p].beat(now, &b)
                } else {
                    None
                };
                if let Some((first, bytes)) = done {
                    let label = (dev.drv_link_rx[p].is_none() && opts.trace)
                        .then(|| format!("tb>{}", dev.name));
                    log.push((p as u8 + 1, Direction::Inbound, first, bytes, label));
                }
            }
            if !(po.tx_tvalid && pi.tx_tready) {
                continue;
            }
            moved = true;
            let b = Beat {
                data: po.tx_tdata,
                keep: po.tx_tkeep,
                last: po.tx_tlast,
            };
            if let Some((l, dir)) = dev.port_links[p] {
                let link = &mut links[l];
                if link.carrying(now) {
                    if let Some(due) = link.send(dir, now, b) {
                        wake.push(Reverse((due, link.ends[1 - dir].0)));
                        inbound.push(link.ends[1 - dir]);
                    }
                    stats.beats += 1;
                } else {
                    stats.beats_lost += 1;
                }
            }
            if keep {
                if let Some((first, bytes)) = dev.drv_tx[p].beat(now, &b) {
                    log.push((p as u8 + 1, Direction::Outbound, first, bytes, None));
                }
            }
        }
        self.moved |= moved;
        for (e, p) in inbound {
            self.devs[e].note_inbound(usize::from(p) - 1);
        }
        // Packets out are traced as "name>peer" ("name>tb" with no link).
        for (p, dir, first, bytes, mut label) in log {
            if dir == Direction::Outbound && self.opts.trace {
                let peer = self.devs[d].port_links[usize::from(p) - 1]
                    .map(|(l, k)| self.devs[self.links[l].ends[1 - k].0].name.as_str())
                    .unwrap_or("tb");
                label = Some(format!("{}>{peer}", self.devs[d].name));
            }
            self.log_packet((now, 1, d, p), dir, first, bytes, label);
        }
        self.activate(d);
        Ok(())
    }

    /// Whether a switch port went Down or came up from Down since the last
    /// tick (a link edge; SM-driven Init/Armed/Active steps are not).
    fn link_edge(dev: &mut Device<S>) -> bool {
        let n = dev.pin.len();
        if dev.last_states.len() != n {
            dev.last_states = dev.dev.ports_out().iter().map(|o| o.port_state).collect();
            return false;
        }
        let mut edge = false;
        let mut look = |o: &PortOut, was: &mut u8| {
            let s = o.port_state;
            if s != *was && (s == 1 || *was == 1) {
                edge = true;
            }
            *was = s;
        };
        let pout = dev.dev.ports_out();
        match dev.dev.ports_hint() {
            // only the ports the step can have changed
            Some(h) => {
                for p in bits(h.changed) {
                    if let (Some(o), Some(was)) = (pout.get(p), dev.last_states.get_mut(p)) {
                        look(o, was);
                    }
                }
            }
            None => {
                for (o, was) in pout.iter().zip(dev.last_states.iter_mut()) {
                    look(o, was);
                }
            }
        }
        edge
    }

    /// The device's pending trap: a switch's Trap 128 is made on a link
    /// edge, a CA's Trap 144 by [`Net::set_is_sm`]; either replaces one not
    /// yet repressed and is sent again every `interval` cycles until the
    /// SM's TrapRepress arrives. Returns when the device must wake for a
    /// repeat.
    fn service_trap(dev: &mut Device<S>, edge: bool, now: u64, interval: u64) -> Option<u64> {
        if edge {
            dev.trap_pending = None;
            let tid = TRAP_TID_BASE | dev.traps_sent;
            if let Some(m) = dev.agent().trap128(tid) {
                dev.trap_pending = Some((m, 0, now));
            }
        }
        let (m, port, due) = dev.trap_pending.as_mut()?;
        if *due > now {
            return None;
        }
        if dev.trap_tx.idle() {
            dev.trap_tx.push(&m[..], *port);
            dev.traps_sent += 1;
        }
        *due = now + interval.max(1);
        Some(*due)
    }

    /// The SMA of device `d` answers request `m`.
    fn answer(&mut self, d: usize, m: Mad, meta: SmiMeta, now: u64) -> Result<()> {
        if meta.mkey_viol {
            // The RTL's M_Key check dropped it: no response; Trap 256 to
            // the MasterSMLID of the port (switch: port 0), repeated until
            // repressed.
            let dev = &mut self.devs[d];
            dev.mkey_violations += 1;
            let port = if dev.is_switch { 0 } else { meta.port };
            let tid = TRAP_TID_BASE | dev.traps_sent;
            let trap = dev.agent().trap256(&m, port, tid);
            cells::record(
                &m,
                if trap.is_some() {
                    Outcome::Trap
                } else {
                    Outcome::Dropped
                },
            );
            if let Some(t) = trap {
                dev.trap_pending = Some((t, port, now));
                self.activate(d);
            }
            return Ok(());
        }
        if mad::method(&m) == crate::proto::packet::consts::METHOD_TRAP_REPRESS {
            cells::record(&m, Outcome::Dropped);
            // The SM saw the trap: stop repeating it (TID and attribute match).
            let dev = &mut self.devs[d];
            if dev.trap_pending.as_ref().is_some_and(|(t, _, _)| {
                mad::tid(t) == mad::tid(&m) && mad::attr_id(t) == mad::attr_id(&m)
            }) {
                dev.trap_pending = None;
            }
            return Ok(());
        }
        let np = self.devs[d].pin.len();
        let mut states = vec![0u8; np + 1];
        let mut link_up = vec![false; np + 1];
        let mut neighbour = vec![None; np + 1];
        states[0] = self.devs[d].port_state(0);
        for p in 1..=np {
            states[p] = self.devs[d].port_state(p as u8);
            if let Some((l, dir)) = self.devs[d].port_links[p - 1] {
                let link = &self.links[l];
                link_up[p] = link.carrying(now);
                let (od, op) = link.ends[1 - dir];
                neighbour[p] = Some(self.devs[od].port_state(op));
            }
        }
        let mut mkey = vec![None; np + 1];
        if self.devs[d].is_switch {
            let o = &self.devs[d].dout;
            mkey[0] = Some((o.port0_mkey_prot, o.port0_mkey_viols));
        } else {
            for (m, o) in mkey[1..].iter_mut().zip(self.devs[d].dev.ports_out()) {
                *m = Some((o.mkey_prot, o.mkey_viols));
            }
        }
        let disabled = self.devs[d].phys_disabled.clone();
        let mut view = HwView {
            mkey: &mkey,
            states: &states,
            link_up: &link_up,
            disabled: &disabled,
            neighbour: &neighbour,
            psc: self.devs[d].dout.port_state_change,
            writes: Vec::new(),
        };
        // ibsim answers a LID-routed SMP at a switch as arrived on port 0.
        let arrival = if self.devs[d].is_switch && m[mad::off::MGMT_CLASS] == CLASS_SUBN_LID {
            0
        } else {
            meta.port
        };
        let resp = self.devs[d]
            .agent_mut()
            .handle_smp(&m, arrival, meta.mkey_mask, &mut view);
        cells::record(
            &m,
            if resp.is_some() {
                Outcome::Answered
            } else {
                Outcome::Dropped
            },
        );
        let reads = resp
            .as_ref()
            .map(|r| self.devs[d].key_violation_reads(&m, r, arrival))
            .unwrap_or_default();
        let writes = view.writes;
        let mut regs = Vec::new();
        for w in &writes {
            self.devs[d].hw_writes(w, &mut regs);
            if let HwWrite::LinkActive {
                port,
                width,
                speed,
                speed_ext,
            } = *w
            {
                if let Some(l) = self.link_at(d, port) {
                    let dir = usize::from(self.links[l].ends[0] != (d, port));
                    let (od, op) = self.links[l].ends[1 - dir];
                    self.devs[od]
                        .agent_mut()
                        .set_link_active(op, width, speed, speed_ext);
                }
            }
            match *w {
                HwWrite::RetrainLink { port } => self.retrain(d, port, now),
                HwWrite::PortPhysState { port, state } => self.set_phys_state(d, port, state, now),
                _ => {}
            }
        }
        let dev = &mut self.devs[d];
        dev.regs.extend(regs);
        if let Some(r) = resp {
            // The response's meta echoes the request's LRH addresses and SL;
            // `port` is the tag that routes it to the arrival port's SQ.
            dev.sma_pending
                .push_back((now + self.opts.sma_latency, r, meta, reads));
            self.stats.sma_answers += 1;
        }
        self.activate(d);
        Ok(())
    }

    /// The link of device `d`'s `port` trains again: down (what is on the
    /// cable lost) for `retrain_cycles`, then up at both ends, as far as
    /// the cable and both ports allow.
    fn retrain(&mut self, d: usize, port: u8, now: u64) {
        let Some(l) = self.link_at(d, port) else {
            return;
        };
        let until = now + self.opts.retrain_cycles;
        self.links[l].retrain_until = until;
        self.drop_in_flight(l);
        let ends = self.links[l].ends;
        for (e, _) in ends {
            let dev = &mut self.devs[e];
            dev.scan_at = Some(dev.scan_at.map_or(until, |t| t.max(until)));
            self.cable_changed(e);
            self.wake.push(Reverse((until, e)));
        }
    }

    /// A PortInfo Set of PortPhysicalState `state` on device `d`'s external
    /// `port`: 3 (Disabled) takes the link down at both ends and keeps it
    /// down; 2 (Polling) enables the port, and its link trains (comes up
    /// after `retrain_cycles` where a cable and an enabled port are at the
    /// other end). The SMA lets through only 2 and 3.
    fn set_phys_state(&mut self, d: usize, port: u8, state: u8, now: u64) {
        let dev = &self.devs[d];
        if port == 0 || usize::from(port) >= dev.phys_disabled.len() {
            return;
        }
        let off = state == crate::proto::packet::consts::PHYS_STATE_DISABLED;
        self.devs[d].phys_disabled[usize::from(port)] = off;
        let Some(l) = self.link_at(d, port) else {
            return;
        };
        let dir = usize::from(self.links[l].ends[0] != (d, port));
        self.links[l].disabled[dir] = off;
        if off {
            self.link_switched(l, false);
        } else {
            self.retrain(d, port, now);
        }
    }

    /// Write every packet on every link from now on into `log`: outbound
    /// on the sender's port as its last beat leaves, inbound on the
    /// receiver's port as its last beat arrives (what a link going down
    /// cuts off is not written).
    pub fn log_wire(&mut self, log: TraceFile) {
        self.wire_log = Some(log);
    }

    /// [`Net::log_wire`] with every interface name starting with `prefix`.
    pub fn log_wire_as(&mut self, log: TraceFile, prefix: &str) {
        self.wire_log = Some(log);
        self.log_prefix = prefix.to_string();
    }

    /// The wire log, once the run is over.
    pub fn take_wire_log(&mut self) -> Option<TraceFile> {
        if let Some(last) = self.cycle.checked_sub(1) {
            self.write_log_lines(last);
        }
        self.wire_log.take()
    }

    /// Queue a packet crossing device `d` port `p` in direction `dir` in
    /// cycle `at` on `side` of it (`key`: at, side, d, p; its first beat
    /// at `first`) for the wire log and, with `trace`, the trace: written
    /// at the end of cycle `at` in [`LogKey`] order.
    fn log_packet(
        &mut self,
        (at, side, d, p): (u64, u8, usize, u8),
        dir: Direction,
        first: u64,
        bytes: Vec<u8>,
        trace: Option<String>,
    ) -> LogKey {
        let key = (at, side, d, p, u8::from(dir == Direction::Outbound));
        self.log_lines.insert(
            key,
            LogLine {
                dir,
                first,
                bytes,
                trace,
            },
        );
        key
    }

    /// Write the queued lines of every cycle up to `now`.
    fn write_log_lines(&mut self, now: u64) {
        while let Some(e) = self.log_lines.first_entry() {
            if e.key().0 > now {
                break;
            }
            let ((_, _, d, p, _), line) = e.remove_entry();
            self.write_wire(d, p, line.dir, line.first, &line.bytes);
            if let Some(dir) = line.trace {
                self.trace.push(TraceEntry {
                    cycle: line.first,
                    dir,
                    bytes: line.bytes,
                });
            }
        }
    }

    fn write_wire(&mut self, d: usize, p: u8, dir: Direction, first: u64, bytes: &[u8]) {
        let Some(log) = self.wire_log.as_mut() else {
            return;
        };
        if self.wire_log_err.is_some() {
            return;
        }
        let name = port_name(&format!("{}{}", self.log_prefix, self.devs[d].name), p);
        if let Err(e) = log.packet(&name, dir, first, bytes) {
            self.wire_log_err = Some(e);
        }
    }

    /// Simulate exactly `cycles` cycles.
    pub fn run(&mut self, cycles: u64) -> Result<()> {
        for _ in 0..cycles {
            self.step()?;
        }
        Ok(())
    }

    /// Run until nothing is in flight anywhere, or fail after `max_cycles`.
    pub fn run_until_idle(&mut self, max_cycles: u64) -> Result<u64> {
        let start = self.cycle;
        while !self.idle() {
            if self.active_list.is_empty() {
                // Jump to the next wake-up: nothing happens in between.
                if let Some(due) = self.next_wake() {
                    self.cycle = self.cycle.max(due);
                }
            }
            self.step()?;
            if self.cycle - start > max_cycles {
                bail!(
                    "fabric not idle after {max_cycles} cycles (cycle {}, {} devices active)",
                    self.cycle,
                    self.active_list.len()
                );
            }
        }
        Ok(self.cycle - start)
    }

    /// Run until `done` holds (checked after every cycle), or fail after
    /// `max_cycles`.
    pub fn run_until(
        &mut self,
        max_cycles: u64,
        mut done: impl FnMut(&Net<S>) -> bool,
    ) -> Result<u64> {
        let start = self.cycle;
        while !done(self) {
            if self.active_list.is_empty() {
                match self.next_wake() {
                    Some(due) => self.cycle = self.cycle.max(due),
                    None => bail!(
                        "fabric idle at cycle {} and the condition does not hold",
                        self.cycle
                    ),
                }
            }
            self.step()?;
            if self.cycle - start > max_cycles {
                bail!(
                    "condition not met within {max_cycles} cycles (cycle {})",
                    self.cycle
                );
            }
        }
        Ok(self.cycle - start)
    }
}

impl<S: NodeAgent> Net<S> {
    /// Answer `req` with device `d`'s own SMA, as arriving on `port`.
    pub fn local_smp(&mut self, d: usize, port: u8, req: &Mad) -> Result<Option<Mad>> {
        let now = self.cycle;
        let before = self.devs[d].sma_pending.len();
        let meta = SmiMeta {
            port,
            ..SmiMeta::default()
        };
        self.answer(d, *req, meta, now)?;
        let dev = &mut self.devs[d];
        if dev.sma_pending.len() > before {
            // Not for the wire: take the response back from the SMA queue
            // (and read the counters it shows now).
            let Some((_, mut m, _, reads)) = dev.sma_pending.pop_back() else {
                return Ok(None);
            };
            for (off, addr) in reads {
                let v = self.read_reg(d, addr)?;
                put_sat16(&mut m, off, v);
            }
            Ok(Some(m))
        } else {
            Ok(None)
        }
    }
}

/// A node id in double quotes at the start of `s` (ibsim's console
/// spelling): the id and what follows the closing quote.
pub fn quoted_id(s: &str) -> Result<(&str, &str)> {
    let body = s
        .strip_prefix('"')
        .ok_or_else(|| anyhow!("expected a quoted node id at {s:?}"))?;
    let end = body
        .find('"')
        .ok_or_else(|| anyhow!("unterminated node id at {s:?}"))?;
    Ok((&body[..end], &body[end + 1..]))
}

/// `"id"[port] "id" ...` → (id, port).
fn parse_console_args(s: &str) -> Result<Vec<(String, Option<u8>)>> {
    let mut out = Vec::new();
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        let (id, after) = quoted_id(rest)?;
        let id = id.to_string();
        rest = after.trim_start();
        let mut port = None;
        if let Some(b) = rest.strip_prefix('[') {
            let close = b
                .find(']')
                .ok_or_else(|| anyhow!("expected ']' after the port of \"{id}\""))?;
            let p: u8 = b[..close].trim().parse().map_err(|_| {
                anyhow!("port of \"{id}\": {:?} is not a number 0..255", &b[..close])
            })?;
            port = Some(p);
            rest = b[close + 1..].trim_start();
        }
        out.push((id, port));
    }
    Ok(out)
}
