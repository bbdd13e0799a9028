//! The SMA on the host side of one CA port driven on its own (the spine
//! regression, `vl15 replay`, the board over a serial line). Every answer
//! comes from [`NodeSma`], the one SMA of the testbench; this module is
//! only its host interface on a [`CaPort`]: it takes SMP requests from the
//! RTL's SMA receive interface, hands each to the agent with the port's
//! live state ([`NodeHw`] over the port registers), and sends the response
//! through the SMA send interface after a service latency.
//!
//! The CA it stands for is [`NodeIdentity::hca`]: the HCA of reference
//! vector V2, answering in the HCA dialect ([`Dialect::Hca`]; statuses,
//! ibspec §7).
//!
//! M_Key (IBA 14.2.4): the RTL checks it (`smi_mkey_chk`) and flags each
//! request in its meta. A violation (`mkey_viol`) is never answered: the
//! host sends the agent's Trap 256 to MasterSMLID through the trap
//! interface, again every `trap_interval` cycles until a TrapRepress with
//! its TID arrives. A Get with a bad key at protect 1 (`mkey_mask`) reads
//! PortInfo's M_Key as 0. M_KeyProtectBits and M_KeyViolations are the
//! RTL's (the lease expiry clears the protect bits).
//!
//! [`Dialect::Hca`]: crate::agents::node_sma::Dialect::Hca

use std::collections::VecDeque;

use anyhow::{bail, Result};

use crate::agents::node_sma::{NodeIdentity, NodeSma};
use crate::model::cells::{self, Outcome};
use crate::model::device::{CaPort, HostAgent, PortRegisters, SmiMeta};
use crate::model::node_hw::{ca_port_writes, HwWrite, NodeHw};
use crate::model::regmap::reg;
use crate::proto::mad::{self, Mad};
use crate::proto::packet::consts::*;
use crate::proto::packet::PortInfo;

/// The node the SMA answers for, and its host's timing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmaConfig {
    pub identity: NodeIdentity,
    /// Cycles from a request's last beat to its response's first beat.
    pub latency: u64,
    /// The SMA takes no request before this cycle (a slow or busy host).
    pub stall_until: u64,
    /// Cycles between repeats of a trap not yet repressed.
    pub trap_interval: u64,
}

/// Cycles between repeats of a trap not yet repressed, unless set.
pub const DEFAULT_TRAP_INTERVAL: u64 = 20_000;

/// TIDs of the traps this SMA originates: a fixed high word, a counter
/// below it.
const TRAP_TID_BASE: u64 = 0x5AA0_0000_0000_0000;

impl SmaConfig {
    /// The CA of reference vector V2 (ibspec §3.3): NodeGUID
    /// 0x0002c90300001230, PortGUID …1231, PartitionCap 128, DeviceID
    /// 0x1003, VendorID 0x0002C9, one port.
    pub fn vector_v2_ca() -> Self {
        Self::with(NodeIdentity::vector_v2_ca())
    }

    /// The same HCA with the GUIDs ibsim would give the n-th CA (ibspec
    /// §10: from 0x100000, nports+1 GUIDs each).
    pub fn ca(n: u64, description: &str) -> Self {
        Self::with(NodeIdentity::hca(0x10_0000 + n * 2, description))
    }

    fn with(identity: NodeIdentity) -> Self {
        SmaConfig {
            identity,
            latency: 8,
            stall_until: 0,
            trap_interval: DEFAULT_TRAP_INTERVAL,
        }
    }
}

/// A response waiting for its service latency to pass.
struct Pending {
    due: u64,
    mad: Mad,
    meta: SmiMeta,
}

pub struct Sma {
    pub cfg: SmaConfig,
    /// The agent that answers (built from `cfg.identity`).
    pub agent: NodeSma,
    pending: VecDeque<Pending>,
    /// TIDs of requests answered with no response (TrapRepress), for tests.
    pub repressed: Vec<u64>,
    /// (first, last) cycle of every request taken from the SMA RX interface.
    pub arrivals: Vec<(u64, u64)>,
    /// Requests served, and responses sent.
    pub requests: u64,
    pub responses: u64,
    /// Requests the RTL flagged as M_Key violations (never answered).
    pub mkey_violations: u64,
    /// Trap 256s sent (repeats included).
    pub traps_sent: u64,
    /// The trap waiting for its TrapRepress, and the cycle it goes out
    /// (again).
    trap_pending: Option<(Mad, u64)>,
    trap_count: u64,
    /// PortState as last written, for hardware whose state cannot be read
    /// at once (the board); the RTL resets a linked port to Init.
    state_written: u8,
}

/// The port as the agent sees it: live state where the port shows it,
/// register writes through its write path.
struct PortHw<'a, P: PortRegisters + ?Sized> {
    regs: &'a mut P,
    state_written: &'a mut u8,
}

impl<P: PortRegisters + ?Sized> NodeHw for PortHw<'_, P> {
    fn port_state(&self, _port: u8) -> u8 {
        self.regs.port_state().unwrap_or(*self.state_written)
    }
    fn link_up(&self, _port: u8) -> bool {
        self.regs.link_up()
    }
    /// A port driven on its own has no fabric behind it: no neighbour
    /// (the HCA dialect does not ask).
    fn neighbour_state(&self, _port: u8) -> Option<u8> {
        None
    }
    fn port_state_change(&self) -> bool {
        false
    }
    fn write(&mut self, w: HwWrite) {
        for (_, addr, value) in ca_port_writes(&w) {
            self.regs.write_reg(addr, value);
        }
        match w {
            HwWrite::PortState { state, .. } => *self.state_written = state,
            // No PHY to retrain: the port goes back to Init at once.
            HwWrite::RetrainLink { .. } => {
                self.regs
                    .write_reg(reg::PORT_STATE, u32::from(PORT_STATE_INIT));
                *self.state_written = PORT_STATE_INIT;
            }
            _ => {}
        }
    }
    fn mkey_state(&self, _port: u8) -> Option<(u8, u16)> {
        self.regs.mkey_state()
    }
}

impl Sma {
    pub fn new(cfg: SmaConfig) -> Self {
        Sma {
            agent: NodeSma::new(cfg.identity.clone()),
            cfg,
            pending: VecDeque::new(),
            repressed: Vec::new(),
            arrivals: Vec::new(),
            requests: 0,
            responses: 0,
            mkey_violations: 0,
            traps_sent: 0,
            trap_pending: None,
            trap_count: 0,
            state_written: PORT_STATE_INIT,
        }
    }

    /// A trap made since the last call and not yet sent (for hosts that
    /// send it themselves, as the board replay does: once, no repeats).
    pub fn take_new_trap(&mut self) -> Option<Mad> {
        match self.trap_pending.as_mut() {
            Some((t, due)) if *due == 0 => {
                *due = u64::MAX;
                self.traps_sent += 1;
                Some(*t)
            }
            _ => None,
        }
    }

    /// The trap not yet repressed, if any.
    pub fn trap_pending(&self) -> Option<&Mad> {
        self.trap_pending.as_ref().map(|(m, _)| m)
    }

    /// Put the port's registers in the agent's reset state.
    pub fn init_registers(&mut self, port: &mut impl PortRegisters) {
        let mut hw = PortHw {
            regs: port,
            state_written: &mut self.state_written,
        };
        for w in self.agent.init_writes() {
            hw.write(w);
        }
    }

    /// Give port `port_num` the LID, LMC and MasterSMLID an SM would, by a
    /// PortInfo Set through the agent (no PortState change), as if it had
    /// arrived on that port.
    pub fn assign(
        &mut self,
        port: &mut impl PortRegisters,
        port_num: u8,
        lid: u16,
        lmc: u8,
        master_sm_lid: u16,
    ) -> Result<()> {
        let mut hw = PortHw {
            regs: port,
            state_written: &mut self.state_written,
        };
        let get = mad::request(CLASS_SUBN_LID, METHOD_GET, ATTR_PORT_INFO, 0, 0);
        let Some(cur) = self.agent.handle(&get, port_num, &mut hw) else {
            bail!("the SMA has no port {port_num}");
        };
        let mut pi = PortInfo::decode(mad::data(&cur))?;
        pi.lid = lid;
        pi.lmc = lmc;
        pi.master_sm_lid = master_sm_lid;
        pi.port_state = PORT_STATE_NO_CHANGE;
        pi.port_phys_state = 0;
        let mut set = mad::request(CLASS_SUBN_LID, METHOD_SET, ATTR_PORT_INFO, 0, 0);
        mad::data_mut(&mut set).copy_from_slice(&pi.encode());
        let resp = self.agent.handle(&set, port_num, &mut hw);
        match resp.map(|r| mad::status(&r)) {
            Some(0) => Ok(()),
            s => bail!("PortInfo Set of LID {lid:#x} LMC {lmc} refused: status {s:?}"),
        }
    }

    /// PortInfo of `port_num` as the agent holds it, apart from the
    /// hardware: what its Sets stored (LIDs, M_Key fields, …), read with no
    /// live state (PortState 0, link up, no M_Key check to ask).
    pub fn stored_port_info(&mut self, port_num: u8) -> Result<PortInfo> {
        struct Stored;
        impl PortRegisters for Stored {
            fn write_reg(&mut self, _addr: u8, _value: u32) {}
            fn port_state(&self) -> Option<u8> {
                Some(0)
            }
        }
        let mut state = 0;
        let mut hw = PortHw {
            regs: &mut Stored,
            state_written: &mut state,
        };
        let get = mad::request(CLASS_SUBN_LID, METHOD_GET, ATTR_PORT_INFO, 0, 0);
        match self.agent.handle(&get, port_num, &mut hw) {
            Some(r) => Ok(PortInfo::decode(mad::data(&r))?),
            None => bail!("the SMA has no port {port_num}"),
        }
    }

    /// Responses to send, or a trap not yet sent once (a trap waiting for
    /// its TrapRepress is not work: it is only repeated).
    pub fn busy(&self) -> bool {
        !self.pending.is_empty() || self.trap_pending.as_ref().is_some_and(|(_, due)| *due == 0)
    }

    /// One cycle of host-side work: take received requests, release due
    /// responses. Returns whether anything happened.
    pub fn service(&mut self, port: &mut CaPort, now: u64) -> Result<bool> {
        let mut did = false;
        port.sma_rx.hold = now + 1 < self.cfg.stall_until;
        while let Some(rx) = port.sma_rx.packets.pop_front() {
            did = true;
            self.requests += 1;
            self.arrivals.push((rx.first_cycle, rx.last_cycle));
            let mut req = [0u8; 256];
            let n = rx.bytes.len().min(256);
            req[..n].copy_from_slice(&rx.bytes[..n]);
            if let Some(resp) = self.handle(&req, &rx.meta, port) {
                self.pending.push_back(Pending {
                    due: rx.last_cycle + self.cfg.latency,
                    mad: resp,
                    meta: rx.meta,
                });
            }
        }
        while self.pending.front().is_some_and(|p| p.due <= now) {
            let p = self.pending.pop_front().expect("checked");
            port.sma_tx.push(&p.mad, p.meta);
            self.responses += 1;
            did = true;
        }
        if let Some((trap, due)) = self.trap_pending.as_mut() {
            if *due <= now && port.trap_tx.idle() {
                port.trap_tx.push(trap, ());
                *due = now + self.cfg.trap_interval.max(1);
                self.traps_sent += 1;
                did = true;
            }
        }
        Ok(did)
    }

    /// The response to one request, or `None` when there is none to send.
    /// A request the RTL flagged as an M_Key violation makes the agent's
    /// Trap 256 (none while the port has no LID or MasterSMLID), sent from
    /// the next service; it replaces one not yet repressed.
    pub fn handle(
        &mut self,
        req: &Mad,
        meta: &SmiMeta,
        port: &mut impl PortRegisters,
    ) -> Option<Mad> {
        if meta.mkey_viol {
            self.mkey_violations += 1;
            let tid = TRAP_TID_BASE | (self.trap_count + 1);
            let trap = self.agent.trap256(req, meta.port, tid);
            cells::record(
                req,
                if trap.is_some() {
                    Outcome::Trap
                } else {
                    Outcome::Dropped
                },
            );
            if let Some(t) = trap {
                self.trap_count += 1;
                self.trap_pending = Some((t, 0));
            }
            return None;
        }
        if mad::method(req) == METHOD_TRAP_REPRESS {
            cells::record(req, Outcome::Dropped);
            let tid = mad::tid(req);
            self.repressed.push(tid);
            if self
                .trap_pending
                .as_ref()
                .is_some_and(|(t, _)| mad::tid(t) == tid)
            {
                self.trap_pending = None;
            }
            return None;
        }
        let mut hw = PortHw {
            regs: port,
            state_written: &mut self.state_written,
        };
        let resp = self
            .agent
            .handle_smp(req, meta.port, meta.mkey_mask, &mut hw);
        cells::record(
            req,
            if resp.is_some() {
                Outcome::Answered
            } else {
                Outcome::Dropped
            },
        );
        resp
    }
}

impl HostAgent for Sma {
    fn service(&mut self, port: &mut CaPort, now: u64) -> Result<bool> {
        Sma::service(self, port, now)
    }
    fn busy(&self) -> bool {
        Sma::busy(self)
    }
}
