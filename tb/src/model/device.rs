//! The testbench's side of one RTL channel adapter port ([`CaPort`]): a
//! stream driver on every interface of the port (the wire, the data-VL
//! host ports, the SMA and SM interfaces, traps and the register bus),
//! with idle and backpressure patterns, and what the port's host sees.
//! The net ([`crate::model::net::Net`]) clocks the model; the drivers set
//! its inputs and read its outputs every cycle.
//!
//! The port is one port of any CA kind of [`Dut`]: the single-port
//! `ib_ca_top` at DataW 32, 64 or 128 ([`CaTopDut`]), or a port of the
//! multiport `ib_ca_mp_top` at 64 or 128, whose other ports then have no
//! link. Everything built on [`CaPort`] (the bench of CA ports, the
//! scoreboard, the CA soak, the regression's scenarios) runs on either.

use std::collections::VecDeque;

use anyhow::{bail, Context, Result};
use vl15_bindings::dev::{DevIn, DevOut, PortIn, PortOut};

use crate::model::dut::{ca_mp_kind, Dut};
use crate::model::regmap::mpreg;
use crate::model::stream::{Beat, Pattern, Received, Sink, Source};
use crate::model::twin::{self, DeviceSpec, Fidelity};
use crate::proto::mad::Mad;

/// Sideband of the SMI receive interfaces (`sma_rx_*`, `sm_rx_*`) and of SMA
/// responses (`sma_tx_*`, where only slid, dlid and sl are read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct SmiMeta {
    pub slid: u16,
    pub dlid: u16,
    pub sl: u8,
    pub port: u8,
    pub mgmt_class: u8,
    pub hop_ptr: u8,
    pub hop_cnt: u8,
    /// SMA RX only: the RTL's M_Key check (`smi_mkey_chk`) found a bad
    /// M_Key: the SMA must not answer; it sends Trap 256 from the MAD.
    #[serde(default)]
    pub mkey_viol: bool,
    /// SMA RX only: a Get with a bad M_Key at protect 1: PortInfo's M_Key
    /// field is returned as 0.
    #[serde(default)]
    pub mkey_mask: bool,
}

/// The sideband of the MAD on a device's `sma_rx` stream (switch port 0, a
/// CA), with the M_Key verdict.
pub fn sma_rx_meta(o: &DevOut) -> SmiMeta {
    SmiMeta {
        slid: o.sma_rx_slid,
        dlid: o.sma_rx_dlid,
        sl: o.sma_rx_sl,
        port: o.sma_rx_port,
        mgmt_class: o.sma_rx_mgmt_class,
        hop_ptr: o.sma_rx_hop_ptr,
        hop_cnt: o.sma_rx_hop_cnt,
        mkey_viol: o.sma_rx_mkey_viol,
        mkey_mask: o.sma_rx_mkey_mask,
    }
}

/// The sideband of the MAD on a device's `sm_rx` stream (no M_Key check on
/// the SM's path).
pub fn sm_rx_meta(o: &DevOut) -> SmiMeta {
    SmiMeta {
        slid: o.sm_rx_slid,
        dlid: o.sm_rx_dlid,
        sl: o.sm_rx_sl,
        port: o.sm_rx_port,
        mgmt_class: o.sm_rx_mgmt_class,
        hop_ptr: o.sm_rx_hop_ptr,
        hop_cnt: o.sm_rx_hop_cnt,
        ..SmiMeta::default()
    }
}

/// The port-register write path the SMA uses (ib_pkg's register map). The
/// Verilated port queues the write for its next cycles; a board over a serial
/// line sends a REG_WRITE frame. One trait, so the same SMA code drives both.
pub trait PortRegisters {
    fn write_reg(&mut self, addr: u8, value: u32);
    /// The port's M_KeyProtectBits and M_KeyViolations as the RTL holds
    /// them now (the lease expiry clears the protect bits, the M_Key check
    /// counts violations), or None where they cannot be seen synchronously
    /// (the SMA then reports what it last wrote).
    fn mkey_state(&self) -> Option<(u8, u16)> {
        None
    }
    /// The port's PortState as the RTL holds it now, or None where it
    /// cannot be seen synchronously (the SMA then takes what it wrote).
    fn port_state(&self) -> Option<u8> {
        None
    }
    /// The port's physical link is up.
    fn link_up(&self) -> bool {
        true
    }
}

impl PortRegisters for CaPort {
    fn write_reg(&mut self, addr: u8, value: u32) {
        CaPort::write_reg(self, addr, value);
    }
    fn mkey_state(&self) -> Option<(u8, u16)> {
        Some((self.mkey_prot, self.mkey_viols))
    }
    fn port_state(&self) -> Option<u8> {
        Some(self.port_state)
    }
    fn link_up(&self) -> bool {
        self.link_up
    }
}

/// An agent on a port's host side (the SMA, an SM driver): served once a
/// cycle, after the port has stepped.
pub trait HostAgent {
    /// Do this cycle's work on `port` (take what it delivered, hand it what
    /// is due); whether anything moved.
    fn service(&mut self, port: &mut CaPort, now: u64) -> Result<bool>;
    /// Whether work is still queued on the agent's side.
    fn busy(&self) -> bool;
}

/// What a work completion of the SM's QP0 completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WcOpcode {
    Send,
    Recv,
}

/// A work completion.
#[derive(Debug, Clone)]
pub struct Wc {
    pub wr_id: u64,
    pub opcode: WcOpcode,
    /// The received MAD (receive completions).
    pub mad: Option<Box<Mad>>,
    /// What the RTL said about a received MAD (SLID, port, hop pointer …).
    pub meta: SmiMeta,
    /// Cycle of the completion.
    pub cycle: u64,
}

/// QP0 of an SM on one port, verbs style: what the SM's transaction layer
/// (`crate::agents::qp0::Transactions`) asks of it. A port of the fabric
/// (`crate::model::net::Net`) and a [`CaPort`] driven on its own both
/// provide it, so there is one SM stack.
pub trait SmQp {
    /// The current cycle.
    fn now(&self) -> u64;
    /// Hand `mad` to the RTL's SM send interface.
    fn post_send(&mut self, ah: &AddressHandle, mad: &Mad, wr_id: u64) -> Result<()>;
    /// Post `n` receive WQEs (the RTL's receive-queue doorbell).
    fn post_recv(&mut self, n: u64) -> Result<()>;
    /// Receive WQEs still posted, as the host counts them (None: the port
    /// takes everything and keeps no count).
    fn recv_posted(&self) -> Option<u64>;
    /// Up to `max` completions, oldest first.
    fn poll_cq(&mut self, max: usize) -> Result<Vec<Wc>>;
    /// A hop-count-0 directed-route SMP for the port's own SMA, answered
    /// by the host stack without touching the wire.
    fn local_smp(&mut self, req: &Mad) -> Result<Option<Mad>>;
    /// The port, for messages.
    fn describe(&self) -> String;
}

/// Only rate 0 is modelled: the RTL links run at one rate.
pub fn check_static_rate(ah: &AddressHandle) -> Result<()> {
    if ah.static_rate != 0 {
        anyhow::bail!(
            "static_rate {}: the RTL links run at one rate, only 0 is modelled",
            ah.static_rate
        );
    }
    Ok(())
}

/// The SM's QP0 on a CA port driven alone: sends go to `sm_tx`, the
/// packets `sm_rx` delivered are the receive completions (send
/// completions are not reported).
impl SmQp for CaPort {
    fn now(&self) -> u64 {
        self.cycle
    }
    fn post_send(&mut self, ah: &AddressHandle, mad: &Mad, _wr_id: u64) -> Result<()> {
        check_static_rate(ah)?;
        self.sm_tx.push(mad, *ah);
        Ok(())
    }
    fn post_recv(&mut self, n: u64) -> Result<()> {
        self.sm_rq.post(n);
        Ok(())
    }
    fn recv_posted(&self) -> Option<u64> {
        self.sm_rq.posted()
    }
    fn poll_cq(&mut self, max: usize) -> Result<Vec<Wc>> {
        let n = max.min(self.sm_rx.packets.len());
        Ok(self
            .sm_rx
            .packets
            .drain(..n)
            .map(|rx| {
                let mut m = [0u8; 256];
                let k = rx.bytes.len().min(256);
                m[..k].copy_from_slice(&rx.bytes[..k]);
                Wc {
                    wr_id: 0,
                    opcode: WcOpcode::Recv,
                    mad: Some(Box::new(m)),
                    meta: rx.meta,
                    cycle: rx.first_cycle,
                }
            })
            .collect())
    }
    fn local_smp(&mut self, _req: &Mad) -> Result<Option<Mad>> {
        anyhow::bail!(
            "{}: a hop-count-0 SMP needs the node's SMA, which a port driven alone does not reach",
            SmQp::describe(self)
        )
    }
    fn describe(&self) -> String {
        CaPort::describe(self)
    }
}

/// Address handle of an SM request (`sm_tx_*`), verbs style: the one the
/// spine's SM driver and QP0 (`crate::agents::qp0`) both post with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct AddressHandle {
    pub dlid: u16,
    pub sl: u8,
    pub path_bits: u8,
    /// Inter-packet delay class; the RTL links have one rate, so only 0
    /// (full rate) is accepted where a send is posted.
    #[serde(default)]
    pub static_rate: u8,
}

impl AddressHandle {
    /// A directed-route SMP's handle (the permissive DLID).
    pub fn directed() -> Self {
        AddressHandle {
            dlid: crate::proto::packet::consts::PERMISSIVE_LID,
            ..AddressHandle::default()
        }
    }

    /// A LID-routed SMP's handle, to `dlid`.
    pub fn lid_routed(dlid: u16) -> Self {
        AddressHandle {
            dlid,
            ..AddressHandle::default()
        }
    }
}

/// Receive WQEs the "take everything" mode keeps posted in the RTL. A port's
/// VL15 RX buffer holds a few MADs and one WQE is posted again per MAD
/// received, so the RTL's count never comes near 0.
pub const TAKE_ALL_WQES: u64 = 1024;

/// Most WQEs one doorbell can post (`sm_rq_post_n_i` is 8 bits).
const DOORBELL_MAX: u64 = 255;

/// One cycle's inputs of the SM receive-queue doorbell (`sm_rq_post_i`,
/// `sm_rq_post_n_i`, `sm_rq_clr_i`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Doorbell {
    pub post: bool,
    pub n: u8,
    pub clr: bool,
}

/// The host side of the SM's receive queue, whose count lives in the RTL
/// (`ib_ca_top`'s `sm_rq_*` doorbell): the RTL uses one WQE per MAD it
/// delivers on `sm_rx_*` and, with none posted, discards a MAD for the SM and
/// counts it in VL15Dropped, as hardware does. The host keeps its own view of
/// what is posted, and rings the doorbell once per clocked cycle with at most
/// 255 WQEs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecvQueue {
    /// WQEs posted and not yet used by a received MAD; None: "take
    /// everything" (tools that only collect): the RTL's count is kept
    /// topped up.
    posted: Option<u64>,
    /// WQEs still to be posted through the doorbell.
    ring: u64,
    /// A clear still to be rung (it withdraws what the RTL holds).
    clear: bool,
}

impl RecvQueue {
    /// No WQE posted: the RTL's state after reset.
    pub fn empty() -> Self {
        RecvQueue {
            posted: Some(0),
            ring: 0,
            clear: false,
        }
    }

    /// Take everything: [`TAKE_ALL_WQES`] posted (after a clear), and one
    /// posted again for every MAD received.
    pub fn take_all() -> Self {
        RecvQueue {
            posted: None,
            ring: TAKE_ALL_WQES,
            clear: true,
        }
    }

    /// Post `n` WQEs. The first post in "take everything" mode ends it: the
    /// WQEs that mode kept in the RTL are withdrawn (a clear), so from then
    /// on exactly what is posted is delivered.
    pub fn post(&mut self, n: u64) {
        match self.posted.as_mut() {
            Some(p) => {
                *p = p.saturating_add(n);
                self.ring = self.ring.saturating_add(n);
            }
            None => {
                self.posted = Some(n);
                self.ring = n;
                self.clear = true;
            }
        }
    }

    /// Withdraw every posted WQE (the QP is reset or destroyed).
    pub fn flush(&mut self) {
        self.posted = Some(0);
        self.ring = 0;
        self.clear = true;
    }

    /// A MAD was delivered: it used one WQE ("take everything": one more is
    /// posted).
    pub fn used(&mut self) {
        match self.posted.as_mut() {
            Some(p) => *p = p.saturating_sub(1),
            None => self.ring = self.ring.saturating_add(1),
        }
    }

    /// WQEs posted and not yet used (None: "take everything").
    pub fn posted(&self) -> Option<u64> {
        self.posted
    }

    /// The doorbell still has something to ring.
    pub fn pending(&self) -> bool {
        self.clear || self.ring > 0
    }

    /// This cycle's doorbell inputs (call once per clocked cycle).
    pub fn doorbell(&mut self) -> Doorbell {
        let n = self.ring.min(DOORBELL_MAX);
        self.ring -= n;
        Doorbell {
            post: n > 0,
            n: n as u8,
            clr: std::mem::take(&mut self.clear),
        }
    }
}

/// A snapshot of every counter, by name.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Counters(pub Vec<(&'static str, u32)>);

impl Counters {
    pub fn get(&self, name: &str) -> u32 {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("no counter named {name}"))
    }
    /// Only the non-zero counters, `name=value` separated by spaces.
    pub fn nonzero(&self) -> String {
        let v: Vec<String> = self
            .0
            .iter()
            .filter(|(_, v)| *v != 0)
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        v.join(" ")
    }
}

/// A packet seen on a wire or host port, with the cycle of its first beat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WirePacket {
    pub cycle: u64,
    pub bytes: Vec<u8>,
}

/// Which SMI send-engine input (or the data TX port) a beat entered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxPortIn {
    Sma,
    Sm,
    Trap,
    Data,
}

/// A copy of everything that crossed the port's boundary in the cycles since
/// it was last emptied, for a passive observer (`crate::check::scoreboard`) that
/// must not take packets away from the agents that consume them.
#[derive(Debug, Default)]
pub struct Tap {
    /// Wire RX beats (cycle, beat, from the testbench's `wire_rx` source).
    pub rx: Vec<(u64, Beat, bool)>,
    /// Beats the send engine or the data TX port took, with their sideband
    /// (the SMA response's request meta, the SM's address handle).
    pub tx_in: Vec<(TxPortIn, Beat, SmiMeta, AddressHandle)>,
    /// Register writes that reached the RTL (address, value).
    pub reg_writes: Vec<(u8, u32)>,
    /// Packets completed on each output.
    pub sma: Vec<Received<SmiMeta>>,
    pub sm: Vec<Received<SmiMeta>>,
    pub drx: Vec<Received<u8>>,
    pub wire: Vec<Received<()>>,
}

/// The testbench's drivers on one port of a CA model: a stream driver on
/// the wire (a driven link), the data-VL host ports, the SMA and SM
/// interfaces, traps and the register bus. The model itself is a device of
/// a [`crate::model::net::Net`], which clocks it: each cycle the net asks
/// [`CaPort::drive`] for the port's inputs and hands the outputs to
/// [`CaPort::observe`] (through [`crate::model::bench::PortBench`]).
pub struct CaPort {
    /// The port driven (1..=the model's ports).
    port: u8,
    /// "port 1 of ib_ca_top DataW 64", for messages.
    what: String,
    pub data_w: u32,
    /// Wire → port. No ready: beats go in whenever the source presents one.
    pub wire_rx: Source<()>,
    /// Port → wire.
    pub wire_tx: Sink<()>,
    /// Data VLs → host (no ready).
    /// Data-VL packets; meta = the discard reason on tlast (gsi_reason_e).
    pub drx: Sink<u8>,
    /// Host → data VLs.
    pub dtx: Source<()>,
    pub sma_rx: Sink<SmiMeta>,
    pub sm_rx: Sink<SmiMeta>,
    /// The SM's receive queue (its doorbell is rung in `drive`); "take
    /// everything" from `new`.
    pub sm_rq: RecvQueue,
    pub sma_tx: Source<SmiMeta>,
    pub sm_tx: Source<AddressHandle>,
    pub trap_tx: Source<()>,
    reg_writes: VecDeque<(u8, u32)>,
    /// The register read in the next cycle (none: address 0), and the
    /// register bus's read data of the last cycle.
    pub read_next: Option<u8>,
    pub reg_rdata: u32,
    /// What `drive` presented this cycle, for `observe`.
    presented: Presented,
    /// The wire beat taken from `wire_tx` this cycle (for links and traces).
    pub tx_beat: Option<Beat>,
    /// The wire beat that entered RX this cycle, and whether the testbench's
    /// `wire_rx` source (not a link) supplied it.
    pub rx_beat: Option<(Beat, bool)>,
    /// Cycle of each wire RX packet's last beat.
    pub rx_last_cycles: Vec<u64>,
    /// Cycle of the first beat of each SMP the SMI send engine wrote into
    /// the VL15 TX buffer (the top's `sq_tx_beat_o` observation port).
    pub sq_starts: Vec<u64>,
    sq_beats: usize,
    /// The next cycle: the model's cycle count.
    pub cycle: u64,
    /// Physical link of the port (`link_up_i`); true from `new`.
    pub link_up: bool,
    /// `idle_o` of the last cycle: nothing buffered or in flight in the port.
    pub idle: bool,
    /// A copy of the port's traffic for an observer; None (the default):
    /// nothing is copied.
    pub tap: Option<Box<Tap>>,
    /// The port's M_KeyProtectBits and M_KeyViolations outputs of the
    /// last cycle.
    pub mkey_prot: u8,
    pub mkey_viols: u16,
    /// The port's PortState output of the last cycle.
    pub port_state: u8,
}

/// The beats `CaPort::drive` put on the model's inputs in one cycle.
#[derive(Default)]
struct Presented {
    rx: Option<Beat>,
    from_link: bool,
    dtx: Option<Beat>,
    sma_tx: Option<(Beat, SmiMeta)>,
    sm_tx: Option<(Beat, AddressHandle)>,
    trap: Option<Beat>,
    reg_write: Option<(u8, u32)>,
    tx_tready: bool,
}

impl CaPort {
    /// Drivers on port `port` of `dut` (a CA kind, reset), every pattern
    /// `Always`. Its other ports get no link and no traffic.
    pub fn on(dut: &dyn Dut, port: u8) -> Result<Self> {
        let n = dut.num_ports();
        if port == 0 || u32::from(port) > n {
            bail!("{} has no port {port}", dut.describe());
        }
        let data_w = dut.data_w();
        Ok(CaPort {
            port,
            what: format!("port {port} of {}", dut.describe()),
            data_w,
            wire_rx: Source::new(data_w, Pattern::Always),
            wire_tx: Sink::new(Pattern::Always),
            drx: Sink::new(Pattern::Always),
            dtx: Source::new(data_w, Pattern::Always),
            sma_rx: Sink::new(Pattern::Always),
            sm_rx: Sink::new(Pattern::Always),
            sm_rq: RecvQueue::take_all(),
            sma_tx: Source::new(data_w, Pattern::Always),
            sm_tx: Source::new(data_w, Pattern::Always),
            trap_tx: Source::new(data_w, Pattern::Always),
            reg_writes: VecDeque::new(),
            read_next: None,
            reg_rdata: 0,
            presented: Presented::default(),
            tx_beat: None,
            rx_beat: None,
            rx_last_cycles: Vec::new(),
            sq_starts: Vec::new(),
            sq_beats: 0,
            cycle: dut.cycle(),
            link_up: true,
            idle: false,
            tap: None,
            mkey_prot: 0,
            mkey_viols: 0,
            port_state: 0,
        })
    }

    /// The RTL was reset in the middle of whatever it was doing: reset the
    /// testbench side of every stream with it. Every queued source packet
    /// is dropped (one under way is cut), half-received output packets are
    /// forgotten, queued register writes are dropped and the SM receive
    /// queue is back to "take everything" (the RTL's count is 0 after
    /// reset). `cycle` is the model's cycle after the reset. Returns the
    /// bytes of output packets cut by the reset (sum over the sinks), which
    /// the caller must not count as delivered.
    pub fn on_reset(&mut self, cycle: u64) -> usize {
        self.cycle = cycle;
        self.wire_rx.clear();
        self.dtx.clear();
        self.sma_tx.clear();
        self.sm_tx.clear();
        self.trap_tx.clear();
        self.reg_writes.clear();
        self.read_next = None;
        self.sm_rq = RecvQueue::take_all();
        self.sq_beats = 0;
        self.tx_beat = None;
        self.rx_beat = None;
        self.wire_tx.clear_partial()
            + self.drx.clear_partial()
            + self.sma_rx.clear_partial()
            + self.sm_rx.clear_partial()
    }

    /// The port's number: what its SMI reports as the arrival port.
    pub fn port_num(&self) -> u8 {
        self.port
    }

    /// What the port is: "port 2 of ib_ca_mp_top NumPorts=2 DataW 64".
    pub fn describe(&self) -> String {
        self.what.clone()
    }

    /// Queue a register write; writes go out one per cycle, in order.
    pub fn write_reg(&mut self, addr: u8, value: u32) {
        self.reg_writes.push_back((addr, value));
    }

    pub fn reg_writes_pending(&self) -> bool {
        !self.reg_writes.is_empty()
    }

    /// The model's inputs for the next cycle: the management side `d` and
    /// this port's entry of `pin`. `link_rx` is a wire beat arriving from a
    /// link, which takes the place of the `wire_rx` source; the register
    /// read is `read_next`, else none (address 0).
    pub fn drive(&mut self, link_rx: Option<Beat>, d: &mut DevIn, pin: &mut [PortIn]) {
        let mut p = PortIn::default();
        let port = self.port;
        let cyc = self.cycle;
        p.link_up = self.link_up;

        let rx = match link_rx {
            Some(b) => Some(b),
            None => self.wire_rx.present().map(|(b, _)| b),
        };
        if let Some(b) = rx {
            p.rx_tdata = b.data;
            p.rx_tkeep = b.keep;
            p.rx_tvalid = true;
            p.rx_tlast = b.last;
        }
        let dtx = self.dtx.present().map(|(b, _)| b);
        if let Some(b) = dtx {
            p.dtx_tdata = b.data;
            p.dtx_tkeep = b.keep;
            p.dtx_tvalid = true;
            p.dtx_tlast = b.last;
        }
        let sma_tx = self.sma_tx.present();
        self.sma_tx.mark_presented(cyc);
        if let Some((b, m)) = sma_tx {
            d.sma_tx_tdata = b.data;
            d.sma_tx_tvalid = true;
            d.sma_tx_tlast = b.last;
            d.sma_tx_slid = m.slid;
            d.sma_tx_dlid = m.dlid;
            d.sma_tx_sl = m.sl;
        }
        let sm_tx = self.sm_tx.present();
        if let Some((b, ah)) = sm_tx {
            d.sm_tx_tdata = b.data;
            d.sm_tx_tvalid = true;
            d.sm_tx_tlast = b.last;
            d.sm_tx_dlid = ah.dlid;
            d.sm_tx_sl = ah.sl;
            d.sm_tx_path_bits = ah.path_bits;
        }
        let trap = self.trap_tx.present().map(|(b, _)| b);
        if let Some(b) = trap {
            d.trap_tx_tdata = b.data;
            d.trap_tx_tvalid = true;
            d.trap_tx_tlast = b.last;
        }
        p.tx_tready = self.wire_tx.ready();
        d.sma_rx_tready = self.sma_rx.ready();
        d.sm_rx_tready = self.sm_rx.ready();
        let db = self.sm_rq.doorbell();
        d.sm_rq_post = db.post;
        d.sm_rq_post_n = db.n;
        d.sm_rq_clr = db.clr;
        self.drx.always();
        let reg_write = self.reg_writes.pop_front();
        if let Some((addr, value)) = reg_write {
            d.reg_we = true;
            d.reg_addr = mpreg::port(port, addr);
            d.reg_wdata = value;
        } else if let Some(a) = self.read_next.take() {
            d.reg_addr = mpreg::port(port, a);
        }
        // Every send and the doorbell are this port's (a tag is driven
        // with its valid: otherwise the inputs are at rest, as a fabric's).
        let tag = |on: bool| if on { port } else { 0 };
        d.sma_tx_port = tag(d.sma_tx_tvalid);
        d.sm_tx_port = tag(d.sm_tx_tvalid);
        d.trap_tx_port = tag(d.trap_tx_tvalid);
        d.sm_rq_port = tag(d.sm_rq_post || d.sm_rq_clr);
        self.presented = Presented {
            rx,
            from_link: link_rx.is_some(),
            dtx,
            sma_tx,
            sm_tx,
            trap,
            reg_write,
            tx_tready: p.tx_tready,
        };
        pin[usize::from(port) - 1] = p;
    }

    /// The model's outputs of the cycle `drive` set up; `cycle` is the
    /// model's cycle count after it.
    pub fn observe(&mut self, o: &DevOut, pout: &[PortOut], cycle: u64) {
        let cyc = self.cycle;
        let po = pout[usize::from(self.port) - 1];
        let Presented {
            rx,
            from_link,
            dtx,
            sma_tx,
            sm_tx,
            trap,
            reg_write,
            tx_tready,
        } = std::mem::take(&mut self.presented);
        if rx.is_some() && !from_link {
            self.wire_rx.taken(true, cyc);
        }
        self.rx_beat = rx.map(|b| (b, !from_link));
        if let Some(b) = rx {
            if b.last {
                self.rx_last_cycles.push(cyc);
            }
        }
        self.dtx.taken(po.dtx_tready, cyc);
        self.sma_tx.taken(o.sma_tx_tready, cyc);
        self.sm_tx.taken(o.sm_tx_tready, cyc);
        self.trap_tx.taken(o.trap_tx_tready, cyc);
        if let Some(t) = self.tap.as_mut() {
            if let Some(b) = rx {
                t.rx.push((cyc, b, !from_link));
            }
            let (m0, a0) = (SmiMeta::default(), AddressHandle::default());
            if let (Some(b), true) = (dtx, po.dtx_tready) {
                t.tx_in.push((TxPortIn::Data, b, m0, a0));
            }
            let keep = crate::model::stream::full_keep(self.data_w);
            if let (Some((b, m)), true) = (sma_tx, o.sma_tx_tready) {
                t.tx_in.push((TxPortIn::Sma, Beat { keep, ..b }, m, a0));
            }
            if let (Some((b, ah)), true) = (sm_tx, o.sm_tx_tready) {
                t.tx_in.push((TxPortIn::Sm, Beat { keep, ..b }, m0, ah));
            }
            if let (Some(b), true) = (trap, o.trap_tx_tready) {
                t.tx_in.push((TxPortIn::Trap, Beat { keep, ..b }, m0, a0));
            }
            if let Some(w) = reg_write {
                t.reg_writes.push(w);
            }
        }

        let tx = Beat {
            data: po.tx_tdata,
            keep: po.tx_tkeep,
            last: po.tx_tlast,
        };
        self.tx_beat = (po.tx_tvalid && tx_tready).then_some(tx);
        let n_wire = self.wire_tx.packets.len();
        self.wire_tx.observe(po.tx_tvalid, tx, false, cyc, || ());
        let drx = Beat {
            data: po.drx_tdata,
            keep: po.drx_tkeep,
            last: po.drx_tlast,
        };
        let n_drx = self.drx.packets.len();
        let reason = po.drx_reason;
        self.drx
            .observe(po.drx_tvalid, drx, po.drx_tuser, cyc, || reason);
        // MAD streams carry full beats only (no tkeep port).
        let keep = crate::model::stream::full_keep(self.data_w);
        let full = |data: [u64; 2], last: bool| Beat { data, keep, last };
        let sma_meta = sma_rx_meta(o);
        let b = full(o.sma_rx_tdata, o.sma_rx_tlast);
        let n_sma = self.sma_rx.packets.len();
        self.sma_rx
            .observe(o.sma_rx_tvalid, b, false, cyc, || sma_meta);
        let sm_meta = sm_rx_meta(o);
        let b = full(o.sm_rx_tdata, o.sm_rx_tlast);
        let received = self.sm_rx.packets.len();
        self.sm_rx
            .observe(o.sm_rx_tvalid, b, false, cyc, || sm_meta);
        if self.sm_rx.packets.len() > received {
            self.sm_rq.used();
        }
        if let Some(t) = self.tap.as_mut() {
            let grew = |len: usize, before: usize| len > before;
            if grew(self.wire_tx.packets.len(), n_wire) {
                t.wire.extend(self.wire_tx.packets.back().cloned());
            }
            if grew(self.drx.packets.len(), n_drx) {
                t.drx.extend(self.drx.packets.back().cloned());
            }
            if grew(self.sma_rx.packets.len(), n_sma) {
                t.sma.extend(self.sma_rx.packets.back().cloned());
            }
            if grew(self.sm_rx.packets.len(), received) {
                t.sm.extend(self.sm_rx.packets.back().cloned());
            }
        }

        if po.sq_tx_beat {
            if self.sq_beats % sq_packet_beats(self.data_w) == 0 {
                self.sq_starts.push(cyc);
            }
            self.sq_beats += 1;
        }
        self.mkey_prot = po.mkey_prot;
        self.mkey_viols = po.mkey_viols;
        self.port_state = po.port_state;
        self.cycle = cycle;
        self.idle = o.idle;
        self.reg_rdata = o.reg_rdata;
    }

    /// Nothing queued in any source and no packet half-received: the port
    /// has no work the testbench can see (the RTL may still hold packets).
    pub fn sources_idle(&self) -> bool {
        self.wire_rx.idle()
            && self.dtx.idle()
            && self.sma_tx.idle()
            && self.sm_tx.idle()
            && self.trap_tx.idle()
            && self.reg_writes.is_empty()
            && !self.sm_rq.pending()
    }
}

/// Beats of one SMP (LRH..ICRC, 288 bytes) at `data_w` bits.
fn sq_packet_beats(data_w: u32) -> usize {
    crate::proto::packet::consts::SMP_PKT_BYTES / (data_w / 8) as usize
}

/// Which CA model a bench of one CA port runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CaPortModel {
    /// The single-port `ib_ca_top` (DataW 32, 64, 128).
    #[default]
    Top,
    /// Port `port` of the multiport `ib_ca_mp_top` of `nports` ports (1
    /// or 2; DataW 64, 128).
    Mp { nports: u8, port: u8 },
}

impl CaPortModel {
    /// The model at `data_w`, reset, and the port a bench drives.
    pub fn dut(self, data_w: u32) -> Result<(Box<dyn Dut>, u8)> {
        self.dut_as(data_w, Fidelity::Rtl)
    }

    /// [`CaPortModel::dut`] with the model chosen by `f`: the RTL, the
    /// twin, or both in lockstep.
    pub fn dut_as(self, data_w: u32, f: Fidelity) -> Result<(Box<dyn Dut>, u8)> {
        let (mut dut, port): (Box<dyn Dut>, u8) = match self {
            CaPortModel::Top => (twin::backend(f).build(DeviceSpec::CaTop { data_w })?, 1),
            CaPortModel::Mp { nports, port } => {
                if ca_mp_kind(nports).is_none() {
                    bail!("the multiport CA is built with 1 or 2 ports, not {nports}");
                }
                let dev = twin::backend(f)
                    .build(DeviceSpec::CaMp { nports, data_w })
                    .with_context(|| {
                        format!("building ib_ca_mp_top NumPorts={nports} DataW={data_w}")
                    })?;
                (dev, port)
            }
        };
        if port == 0 || u32::from(port) > dut.num_ports() {
            bail!("{} has no port {port}", dut.describe());
        }
        dut.reset(4)
            .with_context(|| format!("reset of {}", dut.describe()))?;
        Ok((dut, port))
    }

    /// The widths the model is built at.
    pub fn widths(self) -> &'static [u32] {
        match self {
            CaPortModel::Top => &[32, 64, 128],
            CaPortModel::Mp { .. } => &vl15_bindings::dev::DEV_DATA_WIDTHS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring_all(q: &mut RecvQueue) -> Vec<Doorbell> {
        let mut v = Vec::new();
        while q.pending() {
            v.push(q.doorbell());
        }
        v
    }

    #[test]
    fn recv_queue_doorbells() {
        // Take everything: a clear, then TAKE_ALL_WQES in rings of at most 255.
        let mut q = RecvQueue::take_all();
        let v = ring_all(&mut q);
        assert!(v[0].clr && v[1..].iter().all(|d| !d.clr));
        assert!(v.iter().all(|d| d.post && d.n > 0));
        let total: u64 = v.iter().map(|d| u64::from(d.n)).sum();
        assert_eq!(total, TAKE_ALL_WQES);
        assert_eq!(q.posted(), None);
        // One posted again per MAD received.
        q.used();
        assert_eq!(
            ring_all(&mut q),
            [Doorbell {
                post: true,
                n: 1,
                clr: false
            }]
        );
        // The first post withdraws what "take everything" holds.
        q.post(600);
        assert_eq!(q.posted(), Some(600));
        let v = ring_all(&mut q);
        let n: Vec<u8> = v.iter().map(|d| d.n).collect();
        assert_eq!(n, [255, 255, 90]);
        assert!(v[0].clr && !v[1].clr && !v[2].clr);
        // Counted: used ones are not posted again, and never below 0.
        for _ in 0..601 {
            q.used();
        }
        assert!(!q.pending());
        assert_eq!(q.posted(), Some(0));
        q.post(2);
        assert_eq!(q.posted(), Some(2));
        assert_eq!(
            ring_all(&mut q),
            [Doorbell {
                post: true,
                n: 2,
                clr: false
            }]
        );
        // A flush: a clear, nothing posted.
        q.flush();
        assert_eq!(q.posted(), Some(0));
        assert_eq!(
            ring_all(&mut q),
            [Doorbell {
                post: false,
                n: 0,
                clr: true
            }]
        );
        // Nothing to ring: the doorbell is idle.
        assert_eq!(q.doorbell(), Doorbell::default());
        assert_eq!(RecvQueue::empty().doorbell(), Doorbell::default());
    }
}
