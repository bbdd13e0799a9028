//! The subnet management agent of a CA port, in Rust: it takes SMP requests
//! from the RTL's SMA receive interface, answers Get/Set of NodeInfo,
//! NodeDescription and PortInfo through the SMA send interface after a
//! service latency, and mirrors PortInfo's LID, LMC, MasterSMLID,
//! MasterSMSL and PortState into the RTL port registers.
//!
//! Statuses (ibspec §7): 0x0004 bad class version, 0x0008 method not
//! supported, 0x000C method/attribute combination not supported, 0x001C
//! invalid attribute field value. TrapRepress gets no response.
//!
//! M_Key (IBA 14.2.4): the RTL checks it (`smi_mkey_chk`) and flags each
//! request in its meta. A violation (`mkey_viol`) is never answered: the
//! SMA sends Trap 256 to MasterSMLID through the trap interface, again every
//! `trap_interval` cycles until a TrapRepress with its TID arrives. A Get
//! with a bad key at protect 1 (`mkey_mask`) returns PortInfo's M_Key as 0.
//! PortInfo's M_KeyProtectBits and M_KeyViolations are the RTL's (the lease
//! expiry clears the protect bits); a Set(PortInfo) writes M_Key,
//! M_KeyProtectBits and M_KeyLeasePeriod into the RTL registers, and clears
//! M_KeyViolations when it writes 0 there (as Linux qib does).

use std::collections::VecDeque;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::model::device::{CaPort, HostAgent, PortRegisters, SmiMeta};
use crate::model::regmap::reg;
use crate::proto::mad::{self, Mad};
use crate::proto::packet::consts::*;
use crate::proto::packet::{NodeInfo, PortInfo};

/// What the SMA reports about its node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmaConfig {
    pub node_info: NodeInfo,
    pub node_description: String,
    pub port_info: PortInfo,
    /// Cycles from a request's last beat to its response's first beat.
    pub latency: u64,
    /// The SMA takes no request before this cycle (a slow or busy host).
    pub stall_until: u64,
    /// Cycles between repeats of a trap not yet repressed.
    #[serde(default = "default_trap_interval")]
    pub trap_interval: u64,
}

fn default_trap_interval() -> u64 {
    20_000
}

/// TIDs of the traps this SMA originates: a fixed high word, a counter
/// below it.
const TRAP_TID_BASE: u64 = 0x5AA0_0000_0000_0000;

impl SmaConfig {
    /// The CA of reference vector V2 (ibspec §3.3): NodeGUID
    /// 0x0002c90300001230, PortGUID …1231, PartitionCap 128, DeviceID 0x1003,
    /// VendorID 0x0002C9, one port; every other NodeInfo field 0.
    pub fn vector_v2_ca() -> Self {
        let node_info = NodeInfo {
            base_version: 1,
            class_version: 1,
            node_type: 1,
            num_ports: 1,
            sys_guid: 0x0002_c903_0000_1230,
            node_guid: 0x0002_c903_0000_1230,
            port_guid: 0x0002_c903_0000_1231,
            partition_cap: 128,
            device_id: 0x1003,
            revision: 0,
            local_port_num: 1,
            vendor_id: 0x0002C9,
        };
        SmaConfig {
            node_info,
            node_description: "vl15 CA".to_string(),
            port_info: default_port_info(1),
            latency: 8,
            stall_until: 0,
            trap_interval: default_trap_interval(),
        }
    }

    /// A CA with the GUIDs ibsim would give the n-th CA (ibspec §10: from
    /// 0x100000, nports+1 GUIDs each).
    pub fn ca(n: u64, description: &str) -> Self {
        let mut c = Self::vector_v2_ca();
        let base = 0x10_0000 + n * 2;
        c.node_info.sys_guid = base;
        c.node_info.node_guid = base;
        c.node_info.port_guid = base + 1;
        c.node_description = description.to_string();
        c
    }
}

/// PortInfo of a freshly trained CA port with no LID (ibspec §8 encodings).
pub fn default_port_info(port: u8) -> PortInfo {
    PortInfo {
        gid_prefix: 0xfe80_0000_0000_0000,
        // IsTrapSupported, IsSLMapping, IsExtendedSpeeds,
        // IsCapabilityMask2, IsCapabilityMaskNotice: ibsim's CA default.
        capability_mask: 0x0040_C048,
        local_port_num: port,
        link_width_enabled: 2,
        link_width_supported: 2,
        link_width_active: 2,
        link_speed_supported: 1,
        port_state: PORT_STATE_INIT,
        port_phys_state: 5,
        link_down_default_state: 2,
        link_speed_active: 1,
        link_speed_enabled: 1,
        neighbor_mtu: 4,
        vl_cap: 4,
        mtu_cap: 4,
        operational_vls: 4,
        guid_cap: 1,
        subnet_timeout: 0x12,
        ..PortInfo::default()
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
}

impl Sma {
    pub fn new(cfg: SmaConfig) -> Self {
        Sma {
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

    /// Program the RTL port registers from the PortInfo the SMA holds
    /// (LID, LMC, MasterSMLID, MasterSMSL, PortState; M_Key,
    /// M_KeyProtectBits and M_KeyLeasePeriod unless they are the RTL's
    /// reset values, all 0).
    pub fn init_registers(&self, port: &mut impl PortRegisters) {
        let pi = &self.cfg.port_info;
        port.write_reg(reg::PORT_LID, u32::from(pi.lid));
        port.write_reg(reg::PORT_LMC, u32::from(pi.lmc));
        port.write_reg(reg::MASTER_SM_LID, u32::from(pi.master_sm_lid));
        port.write_reg(reg::MASTER_SM_SL, u32::from(pi.master_sm_sl));
        port.write_reg(reg::PORT_STATE, u32::from(pi.port_state));
        if pi.m_key != 0 || pi.m_key_protect_bits != 0 || pi.m_key_lease_period != 0 {
            write_mkey_regs(port, pi);
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

    /// Trap 256 for the violating request `req`, sent from the next
    /// service; none while the port has no LID or MasterSMLID (Linux
    /// qib_send_trap needs an SM LID; ibsim sends traps only with both). A
    /// new trap replaces one not yet repressed.
    fn bad_mkey(&mut self, req: &Mad) {
        self.mkey_violations += 1;
        let pi = &self.cfg.port_info;
        if pi.lid == 0 || pi.master_sm_lid == 0 {
            return;
        }
        self.trap_count += 1;
        let t = mad::trap256(
            req,
            pi.lid,
            NODE_TYPE_CA_PRODUCER,
            TRAP_TID_BASE | self.trap_count,
        );
        self.trap_pending = Some((t, 0));
    }

    /// The response to one request, or `None` when there is none to send.
    pub fn handle(
        &mut self,
        req: &Mad,
        meta: &SmiMeta,
        port: &mut impl PortRegisters,
    ) -> Option<Mad> {
        let method = mad::method(req);
        if meta.mkey_viol {
            self.bad_mkey(req);
            return None;
        }
        if method == METHOD_TRAP_REPRESS {
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
        if method & 0x80 != 0 {
            // A response never needs an answer (the RTL sends these to the SM).
            return None;
        }
        let mut resp = *req;
        if req[mad::off::CLASS_VERSION] != 1 {
            mad::make_response(&mut resp, STATUS_BAD_VERSION);
            return Some(resp);
        }
        let status = match method {
            METHOD_GET => self.get(&mut resp, meta, port),
            METHOD_SET => self.set(&mut resp, meta, port),
            _ => STATUS_METHOD_UNSUPPORTED,
        };
        mad::make_response(&mut resp, status);
        Some(resp)
    }

    /// PortInfo as reported: M_KeyProtectBits and M_KeyViolations from the
    /// RTL when it can be seen.
    fn port_info(&self, port: &impl PortRegisters) -> PortInfo {
        let mut pi = self.cfg.port_info;
        if let Some((prot, viols)) = port.mkey_state() {
            pi.m_key_protect_bits = prot;
            pi.m_key_violations = viols;
        }
        pi
    }

    fn get(&self, m: &mut Mad, meta: &SmiMeta, port: &impl PortRegisters) -> u16 {
        match mad::attr_id(m) {
            ATTR_NODE_INFO => {
                let mut ni = self.cfg.node_info;
                ni.local_port_num = meta.port;
                mad::data_mut(m).copy_from_slice(&ni.encode());
                0
            }
            ATTR_NODE_DESC => {
                let d = mad::data_mut(m);
                d.fill(0);
                let b = self.cfg.node_description.as_bytes();
                let n = b.len().min(64);
                d[..n].copy_from_slice(&b[..n]);
                0
            }
            ATTR_PORT_INFO => {
                let modifier = mad::attr_mod(m);
                // CA: modifier 0 means the port the SMP arrived on.
                if modifier != 0 && modifier != u32::from(meta.port) {
                    return STATUS_INVALID_FIELD;
                }
                let mut pi = self.port_info(port);
                if meta.mkey_mask {
                    // protect 1, key mismatch: the M_Key reads 0 (qib
                    // subn_get_portinfo)
                    pi.m_key = 0;
                }
                mad::data_mut(m).copy_from_slice(&pi.encode());
                0
            }
            _ => STATUS_ATTR_UNSUPPORTED,
        }
    }

    fn set(&mut self, m: &mut Mad, meta: &SmiMeta, port: &mut impl PortRegisters) -> u16 {
        match mad::attr_id(m) {
            ATTR_PORT_INFO => {
                let modifier = mad::attr_mod(m);
                let mut clear_viols = false;
                let status = if modifier != 0 && modifier != u32::from(meta.port) {
                    STATUS_INVALID_FIELD
                } else {
                    match PortInfo::decode(mad::data(m)) {
                        Ok(new) => {
                            let st = self.set_port_info(&new, port);
                            clear_viols = st == 0 && new.m_key_violations == 0;
                            st
                        }
                        Err(_) => STATUS_INVALID_FIELD,
                    }
                };
                // The response shows the values just written (the queued
                // register writes take effect after this cycle).
                let mut pi = self.port_info(port);
                pi.m_key_protect_bits = self.cfg.port_info.m_key_protect_bits;
                if clear_viols {
                    port.write_reg(reg::MKEY_VIOLS, 0);
                    pi.m_key_violations = 0;
                }
                mad::data_mut(m).copy_from_slice(&pi.encode());
                status
            }
            // NodeInfo and NodeDescription are read-only; the rest is not
            // implemented by this CA's SMA.
            _ => STATUS_ATTR_UNSUPPORTED,
        }
    }

    /// Apply the writable PortInfo fields; all or nothing.
    fn set_port_info(&mut self, new: &PortInfo, port: &mut impl PortRegisters) -> u16 {
        let cur = &self.cfg.port_info;
        // LIDs: unicast only (0x0001..0xBFFF), or 0 (unassigned).
        let unicast = |l: u16| l < 0xC000;
        if !unicast(new.lid) || !unicast(new.master_sm_lid) {
            return STATUS_INVALID_FIELD;
        }
        // PortState: NoChange, Down, or one step up Init → Armed → Active.
        let state = match new.port_state {
            PORT_STATE_NO_CHANGE => cur.port_state,
            PORT_STATE_DOWN => PORT_STATE_INIT, // the link retrains to Init
            PORT_STATE_ARMED if cur.port_state == PORT_STATE_INIT => PORT_STATE_ARMED,
            PORT_STATE_ACTIVE if cur.port_state == PORT_STATE_ARMED => PORT_STATE_ACTIVE,
            s if s == cur.port_state && s != PORT_STATE_INIT => s,
            _ => return STATUS_INVALID_FIELD,
        };
        let pi = &mut self.cfg.port_info;
        pi.m_key = new.m_key;
        pi.gid_prefix = new.gid_prefix;
        pi.lid = new.lid;
        pi.master_sm_lid = new.master_sm_lid;
        pi.lmc = new.lmc;
        pi.master_sm_sl = new.master_sm_sl;
        pi.m_key_lease_period = new.m_key_lease_period;
        pi.m_key_protect_bits = new.m_key_protect_bits;
        pi.subnet_timeout = new.subnet_timeout;
        pi.port_state = state;
        self.init_registers(port);
        write_mkey_regs(port, &self.cfg.port_info);
        0
    }
}

/// Notice ProducerType of a CA (ibspec §8).
const NODE_TYPE_CA_PRODUCER: u8 = 1;

/// Write M_Key, M_KeyProtectBits and M_KeyLeasePeriod of `pi` into the
/// RTL's M_Key registers (low word first: the high word commits the key).
pub fn write_mkey_regs(port: &mut impl PortRegisters, pi: &PortInfo) {
    port.write_reg(reg::MKEY_LO, pi.m_key as u32);
    port.write_reg(reg::MKEY_HI, (pi.m_key >> 32) as u32);
    port.write_reg(reg::MKEY_PROT, u32::from(pi.m_key_protect_bits));
    port.write_reg(reg::MKEY_LEASE, u32::from(pi.m_key_lease_period));
}

impl HostAgent for Sma {
    fn service(&mut self, port: &mut CaPort, now: u64) -> Result<bool> {
        Sma::service(self, port, now)
    }
    fn busy(&self) -> bool {
        Sma::busy(self)
    }
}
