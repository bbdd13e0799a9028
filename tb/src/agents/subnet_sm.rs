//! The built-in subnet manager. It runs on a CA port of the RTL fabric and
//! talks only through that CA's QP0 ([`crate::agents::qp0`]): every SMP it sends
//! crosses the fabric hop by hop in RTL, every answer comes back the same way.
//!
//! # A heavy sweep (bring-up, and after any change)
//!
//! 1. **Discover** by directed route, breadth first from the SM's port:
//!    NodeInfo of every node reached, then NodeDescription, SwitchInfo
//!    (switches; a set PortStateChange is cleared at once) and PortInfo of
//!    every switch port 0..N / of the CA port the SMP arrived on. A switch
//!    port whose PortInfo says LinkUp leads to the next NodeInfo. A node
//!    met again (same NodeGUID) only adds the link (and, for a CA, the port
//!    and its path).
//! 2. **LIDs**: port 0 of every switch gets one LID, every CA port an
//!    aligned block of 2^LMC. A port GUID keeps the LID it had in an
//!    earlier sweep; a LID a port already carries (aligned, unique) is kept;
//!    everything else is taken from the lowest free block. Every end port
//!    whose LID, LMC, MasterSMLID, MasterSMSL or GidPrefix differ gets a
//!    PortInfo Set (PortState NoChange).
//! 3. **Routes**: min-hop ([`crate::agents::routing`]); only the LFT blocks that
//!    differ from what this SM wrote before are Set, then SwitchInfo with
//!    LinearFDBTop = the highest LID.
//! 4. **Armed**, then **Active**: a PortInfo Set of every linked port in
//!    Init, then of every port in Armed — the order the PortState rules
//!    (ibspec §8) allow with both ends of a link moving together.
//!
//! # Afterwards
//!
//! Every `sweep_interval` cycles a **light sweep** reads SwitchInfo of every
//! switch and NodeInfo of every other CA: a set PortStateChange, a NodeInfo
//! that is not the node found before (GUID, ports, type) or a node that
//! does not answer starts a heavy sweep (discovery again from scratch; LIDs of ports seen before stay
//! the same). A Trap from an SMA is answered with TrapRepress and starts a
//! heavy sweep — except the security traps 257/258 (bad P_Key / Q_Key at
//! a port's QP1, ibspec §8), which say nothing about the topology: they are
//! repressed, logged and kept in [`SubnetManager::key_traps`].
//!
//! # Several SMs (ibspec §9)
//!
//! Every SM starts **Discovering**. Its discovery reads PortInfo of every
//! CA port; a port other than its own with CapabilityMask IsSM gets a
//! SubnGet(SMInfo). At the end of discovery (before anything is written):
//! a Master found, or a Discovering/Standby SM that is *higher* (greater
//! priority, or equal priority and lower GUID), makes this SM **Standby**;
//! otherwise it becomes (or stays) **Master** and configures the subnet.
//! A Master that is itself higher than a Master it finds stays Master.
//!
//! A Standby polls the SM it follows with SubnGet(SMInfo) every
//! `poll_interval` cycles. An answer with SMState Master resets the miss
//! count (the master's ActCount is recorded; [`SmStats::act_count_rises`]
//! counts the polls that saw it grow). When more than `poll_retries`
//! polls in a row go unanswered (or answered by a non-Master), the master is
//! declared dead and the Standby sweeps again as Discovering — with no
//! higher SM left it becomes Master. Bound: a master that dies is replaced
//! after at most `(poll_retries + 2) · poll_interval` cycles plus one
//! discovery.
//!
//! A Master that finds a higher SM in Standby or Discovering sends it
//! SubnSet(SMInfo, HANDOVER) once its sweep is done. The receiver answers,
//! sends SubnSet(SMInfo, ACKNOWLEDGE) back (its SMInfo still Standby, as
//! the legality rule wants), becomes Master and sweeps. The old master, on
//! the ACKNOWLEDGE, becomes Standby and polls the new one.
//!
//! SubnSet(SMInfo) control codes accepted: HANDOVER (in Standby or
//! Discovering), ACKNOWLEDGE (in Master, from the SM a HANDOVER went to),
//! DISABLE (Standby/Discovering → NotActive: polling stops), STANDBY
//! (NotActive → Standby: polling of the last master resumes, or a
//! discovery when there is none), DISCOVER (→ Discovering: a discovery,
//! then the decision above). ACKNOWLEDGE must carry SMState Standby, the
//! others SMState Master (OpenSM's `smi_rcv_check_set_req_legality`); an
//! illegal code or sender state is answered with status 0x001C (invalid
//! attribute value; OpenSM sends a raw 7, ibspec §12) and changes nothing.

use std::collections::{BTreeMap, HashMap};

use anyhow::{anyhow, bail, Result};
use serde::Serialize;

use crate::agents::node_sma::Net;
use crate::agents::node_sma::CAP_IS_SM;
use crate::agents::qp0::{Event, Transactions, TxOptions, TxStats};
use crate::agents::routing::{self, RNode, NO_ROUTE};
use crate::model::device::AddressHandle;
use crate::model::device::SmiMeta;
use crate::model::node_hw::{KeyViolation, TRAP_BAD_P_KEY, TRAP_BAD_Q_KEY};
use crate::proto::mad::{self, Mad};
use crate::proto::packet::consts::*;
use crate::proto::packet::{NodeInfo, PortInfo};

/// SMInfo.SMState (ibspec §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SmState {
    NotActive = 0,
    Discovering = 1,
    Standby = 2,
    Master = 3,
}

/// SubnSet(SMInfo) AttributeModifier control codes (ibspec §9).
pub mod control {
    pub const HANDOVER: u32 = 1;
    pub const ACKNOWLEDGE: u32 = 2;
    pub const DISABLE: u32 = 3;
    pub const STANDBY: u32 = 4;
    pub const DISCOVER: u32 = 5;
}

/// SMInfo as carried in the SMP data (ibspec §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SmInfo {
    pub guid: u64,
    pub sm_key: u64,
    pub act_count: u32,
    pub priority: u8,
    pub state: u8,
}

impl SmInfo {
    pub fn decode(d: &[u8]) -> SmInfo {
        let u64_at = |o: usize| u64::from_be_bytes(d[o..o + 8].try_into().unwrap_or([0; 8]));
        SmInfo {
            guid: u64_at(0),
            sm_key: u64_at(8),
            act_count: u32::from_be_bytes(d[16..20].try_into().unwrap_or([0; 4])),
            priority: d[20] >> 4,
            state: d[20] & 0x0F,
        }
    }
    pub fn encode(&self) -> [u8; 64] {
        let mut d = [0u8; 64];
        d[0..8].copy_from_slice(&self.guid.to_be_bytes());
        d[8..16].copy_from_slice(&self.sm_key.to_be_bytes());
        d[16..20].copy_from_slice(&self.act_count.to_be_bytes());
        d[20] = (self.priority & 0x0F) << 4 | (self.state & 0x0F);
        d
    }
    /// Whether the SM `self` describes is higher than `(priority, guid)`
    /// (ibspec §9: greater priority, or equal priority and lower GUID).
    pub fn higher_than(&self, priority: u8, guid: u64) -> bool {
        self.priority > priority || (self.priority == priority && self.guid < guid)
    }
}

/// Another SM as this one knows it: its SMInfo and a directed route to
/// its port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerSm {
    pub info: SmInfo,
    pub path: Vec<u8>,
}

/// PortState encodings (ibspec §8).
pub mod state {
    pub const DOWN: u8 = 1;
    pub const INIT: u8 = 2;
    pub const ARMED: u8 = 3;
    pub const ACTIVE: u8 = 4;
    /// PortPhysicalState LinkUp.
    pub const LINK_UP: u8 = 5;
}

/// Default subnet prefix (IBA: fe80::/64).
pub const DEFAULT_SUBNET_PREFIX: u64 = 0xfe80_0000_0000_0000;

#[derive(Debug, Clone, Copy)]
pub struct SmOptions {
    /// LMC of every CA port (0..=7).
    pub lmc: u8,
    pub priority: u8,
    pub subnet_prefix: u64,
    /// Cycles between light sweeps.
    pub sweep_interval: u64,
    /// Cycles between a Standby's polls of the master (OpenSM: 10 s).
    pub poll_interval: u64,
    /// Unanswered polls in a row tolerated before the master is declared
    /// dead (OpenSM `polling_retry_number`, 4).
    pub poll_retries: u32,
    /// `tx.m_key` is the M_Key this SM puts into every SMP and gives every
    /// port it brings up (CA ports, switch port 0), with these protect bits
    /// and lease period (seconds).
    pub tx: TxOptions,
    pub m_key_protect: u8,
    pub m_key_lease: u16,
    /// SMInfo.SM_Key (ibspec §9).
    pub sm_key: u64,
}

impl Default for SmOptions {
    fn default() -> Self {
        SmOptions {
            lmc: 0,
            priority: 0,
            subnet_prefix: DEFAULT_SUBNET_PREFIX,
            sweep_interval: 2_000_000,
            poll_interval: 1_000_000,
            poll_retries: 4,
            tx: TxOptions::default(),
            m_key_protect: 0,
            m_key_lease: 0,
            sm_key: 0,
        }
    }
}

/// What the SM knows of one port.
#[derive(Debug, Clone, Default)]
pub struct SPort {
    pub guid: u64,
    pub info: Option<PortInfo>,
    /// Far end of the cable, as discovery found it.
    pub remote: Option<(usize, u8)>,
    /// Directed route to the node through this port (CA ports; for a
    /// switch, the node's path).
    pub path: Option<Vec<u8>>,
}

impl SPort {
    fn linked(&self) -> bool {
        self.info
            .is_some_and(|i| i.port_phys_state == state::LINK_UP && i.port_state >= state::INIT)
    }
    fn state(&self) -> u8 {
        self.info.map_or(0, |i| i.port_state)
    }
}

/// What the SM knows of one node.
#[derive(Debug, Clone)]
pub struct SNode {
    pub guid: u64,
    pub switch: bool,
    pub nports: u8,
    pub desc: String,
    /// Directed route to the node (the first one found).
    pub path: Vec<u8>,
    /// Index p = port p (0 unused on CAs).
    pub ports: Vec<SPort>,
    pub switch_info: Option<[u8; 64]>,
}

/// The subnet as one sweep found it.
#[derive(Debug, Clone, Default)]
pub struct Subnet {
    pub nodes: Vec<SNode>,
    by_guid: HashMap<u64, usize>,
}

impl Subnet {
    /// Every port with its LID (switch port 0, CA ports), sorted by LID.
    pub fn lids(&self) -> Vec<(u16, usize, u8)> {
        let mut v: Vec<_> = self
            .nodes
            .iter()
            .enumerate()
            .flat_map(|(n, node)| {
                node.ports
                    .iter()
                    .enumerate()
                    .filter(move |(p, _)| (*p == 0) == node.switch)
                    .filter_map(move |(p, port)| {
                        port.info
                            .filter(|i| i.lid != 0)
                            .map(|i| (i.lid, n, p as u8))
                    })
            })
            .collect();
        v.sort_unstable();
        v
    }
}

#[derive(Debug, Clone)]
enum Ctx {
    NodeInfo {
        path: Vec<u8>,
        from: Option<(usize, u8)>,
    },
    NodeDesc(usize),
    SwitchInfo(usize),
    ClearPsc(usize),
    PortInfo(usize, u8),
    SetPortInfo(usize, u8),
    SetLft(usize, u16),
    SetSwitchInfo(usize),
    LightSwitchInfo(usize),
    /// Light sweep: NodeInfo of a CA, expected to be the same node.
    LightNodeInfo(usize),
    /// SubnGet(SMInfo) of an IsSM port found in discovery.
    PeerSmInfo(Vec<u8>),
    /// A Standby's poll of the SM it follows.
    Poll,
    /// SubnSet(SMInfo) with a control code, to the SM at this path.
    SmControl(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Phase {
    Discover,
    Lids,
    Routes,
    Arm,
    Activate,
    Up,
    LightSweep,
}

/// SM counters.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SmStats {
    pub heavy_sweeps: u64,
    pub light_sweeps: u64,
    pub traps: u64,
    /// Non-zero statuses and timeouts (see `log`).
    pub errors: u64,
    pub lft_blocks_set: u64,
    /// Cycle the first bring-up finished.
    pub up_cycle: Option<u64>,
    /// Polls sent as Standby, and those the master answered as Master.
    pub polls: u64,
    pub polls_answered: u64,
    /// Answered polls whose ActCount was greater than the one before.
    pub act_count_rises: u64,
    /// Cycle this SM last became Master.
    pub master_since: Option<u64>,
    /// HANDOVERs sent and taken.
    pub handovers_sent: u64,
    pub handovers_taken: u64,
    /// Trap 256 (bad M_Key) received and repressed.
    pub mkey_traps: u64,
    /// SMInfo responses ignored for a non-matching SM_Key, and SMInfo Gets
    /// not answered (protect > 1, M_Key mismatch).
    pub sm_key_ignored: u64,
    pub sm_info_refused: u64,
}

/// One SM on CA `dev`, port `port`.
pub struct SubnetManager {
    pub name: String,
    pub dev: usize,
    pub port: u8,
    pub opts: SmOptions,
    /// GUID of the SM's port (SMInfo.GUID).
    pub port_guid: u64,
    pub phase: Phase,
    pub state: SmState,
    pub subnet: Subnet,
    /// Other SMs the current heavy sweep found.
    pub peers: Vec<PeerSm>,
    /// Standby: the SM polled; NotActive: the one to poll again on STANDBY.
    pub following: Option<PeerSm>,
    /// Polls in a row without a Master answer.
    poll_misses: u32,
    next_poll: u64,
    last_act_count: Option<u32>,
    /// Master: the higher SM a HANDOVER went to, until its ACKNOWLEDGE.
    handover_to: Option<PeerSm>,
    tx: Transactions<Ctx>,
    /// LID of every port GUID ever assigned.
    guid_lid: BTreeMap<u64, u16>,
    /// LFT blocks last written, per switch NodeGUID.
    written: HashMap<u64, BTreeMap<u16, [u8; 64]>>,
    /// Heavy sweep wanted when the current work is done.
    dirty: bool,
    light_failed: bool,
    next_sweep: u64,
    pub stats: SmStats,
    /// Errors and events, one line each, with the cycle.
    pub log: Vec<String>,
    /// Trap 257/258 received (repeats of one not yet repressed included),
    /// in arrival order.
    pub key_traps: Vec<KeyTrap>,
}

/// A Trap 257 (bad P_Key) or 258 (bad Q_Key) the SM received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyTrap {
    pub cycle: u64,
    pub trap: u16,
    /// Notice: IsGeneric/Type byte, ProducerType, IssuerLID.
    pub generic_type: u8,
    pub producer: u32,
    pub issuer_lid: u16,
    /// LRH SLID of the trap (the issuing port's LID).
    pub slid: u16,
    pub tid: u64,
    pub details: KeyViolation,
}

fn dr(method: u8, attr: u16, modifier: u32, path: &[u8], data: Option<&[u8]>) -> Mad {
    let mut m = mad::dr_request(method, attr, modifier, 0, path);
    if let Some(d) = data {
        mad::data_mut(&mut m).copy_from_slice(&d[..64]);
    }
    m
}

impl SubnetManager {
    /// An SM on CA `dev` port `port` of `net` (attaches the SM host there).
    pub fn new(net: &mut Net, dev: usize, port: u8, index: u32, opts: SmOptions) -> Result<Self> {
        if opts.lmc > LMC_MAX {
            bail!("LMC {} > {LMC_MAX}", opts.lmc);
        }
        net.attach_sm(dev, port)?;
        let port_guid = net.devs[dev].agent().identity().port_guid(port);
        Ok(SubnetManager {
            port_guid,
            name: net.devs[dev].name.clone(),
            dev,
            port,
            opts,
            phase: Phase::Up,
            state: SmState::Discovering,
            subnet: Subnet::default(),
            peers: Vec::new(),
            following: None,
            poll_misses: 0,
            next_poll: 0,
            last_act_count: None,
            handover_to: None,
            tx: Transactions::new(dev, port, 0x5600 + index, opts.tx),
            guid_lid: BTreeMap::new(),
            written: HashMap::new(),
            dirty: true,
            light_failed: false,
            next_sweep: net.cycle,
            stats: SmStats::default(),
            log: Vec::new(),
            key_traps: Vec::new(),
        })
    }

    pub fn tx_stats(&self) -> TxStats {
        self.tx.stats
    }

    /// SMInfo.SMState (ibspec §9).
    pub fn sm_state(&self) -> u8 {
        self.state as u8
    }

    /// This SM's SMInfo (ActCount = QP0 MADs sent, as OpenSM fills it).
    pub fn sm_info(&self) -> SmInfo {
        SmInfo {
            guid: self.port_guid,
            sm_key: self.opts.sm_key,
            act_count: self.tx.stats.sent as u32,
            priority: self.opts.priority & 0x0F,
            state: self.sm_state(),
        }
    }

    /// The LID of the SM's own port (0 before the first sweep set it).
    pub fn lid(&self) -> u16 {
        self.subnet
            .nodes
            .first()
            .and_then(|n| n.ports.get(usize::from(self.port)))
            .and_then(|p| p.info)
            .map_or(0, |i| i.lid)
    }

    /// The first bring-up is done and nothing is pending.
    pub fn settled(&self) -> bool {
        self.phase == Phase::Up && !self.dirty && self.tx.pending() == 0
    }

    /// The next cycle at which the SM has something to do with an idle
    /// fabric (a timeout or a sweep), if any.
    pub fn next_wake(&self) -> Option<u64> {
        let up = self.phase == Phase::Up;
        let sweep = (up && self.state == SmState::Master).then_some(self.next_sweep);
        let poll = (up && self.state == SmState::Standby).then_some(self.next_poll);
        [self.tx.next_deadline(), sweep, poll]
            .into_iter()
            .flatten()
            .min()
    }

    fn note(&mut self, now: u64, s: String) {
        self.log.push(format!("[{now}] {s}"));
    }

    /// Do what is due at the current cycle. Call every cycle in which the
    /// fabric runs (cheap when nothing happened).
    pub fn step(&mut self, net: &mut Net) -> Result<()> {
        // Handling a response may queue requests the local SMA answers at
        // once (hop count 0): pump until nothing more happens.
        loop {
            let events = self.tx.pump(net)?;
            let had = !events.is_empty();
            for e in events {
                self.event(net, e)?;
            }
            if self.tx.pending() == 0 {
                self.advance(net)?;
            }
            if !had && !self.tx.can_send() {
                return Ok(());
            }
        }
    }

    /// The current phase's work is done: move on.
    fn advance(&mut self, net: &mut Net) -> Result<()> {
        let now = net.cycle;
        loop {
            match self.phase {
                Phase::Up => {
                    if self.dirty {
                        self.start_heavy();
                    } else {
                        match self.state {
                            SmState::Master if now >= self.next_sweep => self.start_light(),
                            SmState::Standby if now >= self.next_poll => self.poll(now),
                            _ => {}
                        }
                    }
                    return Ok(());
                }
                Phase::LightSweep => {
                    if self.light_failed {
                        self.dirty = true;
                    }
                    self.phase = Phase::Up;
                    self.next_sweep = now + self.opts.sweep_interval;
                    if !self.dirty {
                        return Ok(());
                    }
                }
                Phase::Discover => {
                    if self.state == SmState::NotActive || !self.elect(now) {
                        // Standby or NotActive: nothing of the subnet is written.
                        self.phase = Phase::Up;
                        return Ok(());
                    }
                    self.phase = Phase::Lids;
                    self.clear_port_state_change();
                    self.assign_lids()?;
                }
                Phase::Lids => {
                    self.phase = Phase::Routes;
                    self.route(now);
                }
                Phase::Routes => {
                    self.phase = Phase::Arm;
                    self.set_states(state::INIT, state::ARMED);
                }
                Phase::Arm => {
                    self.phase = Phase::Activate;
                    self.set_states(state::ARMED, state::ACTIVE);
                }
                Phase::Activate => {
                    self.phase = Phase::Up;
                    self.next_sweep = now + self.opts.sweep_interval;
                    if self.stats.up_cycle.is_none() {
                        self.stats.up_cycle = Some(now);
                    }
                    let active = self.count_active();
                    self.note(
                        now,
                        format!(
                            "heavy sweep {} done: {} nodes, {} ports Active",
                            self.stats.heavy_sweeps,
                            self.subnet.nodes.len(),
                            active
                        ),
                    );
                    self.offer_handover(now);
                    if !self.dirty {
                        return Ok(());
                    }
                }
            }
            if self.tx.pending() > 0 {
                return Ok(());
            }
        }
    }

    /// Ports Active in the SM's view (both ends of every link counted).
    pub fn count_active(&self) -> usize {
        self.subnet
            .nodes
            .iter()
            .flat_map(|n| n.ports.iter())
            .filter(|p| p.remote.is_some() && p.state() == state::ACTIVE)
            .count()
    }

    fn start_heavy(&mut self) {
        self.dirty = false;
        self.stats.heavy_sweeps += 1;
        self.phase = Phase::Discover;
        self.subnet = Subnet::default();
        self.peers.clear();
        self.tx.submit(
            AddressHandle::directed(),
            dr(METHOD_GET, ATTR_NODE_INFO, 0, &[], None),
            Ctx::NodeInfo {
                path: Vec::new(),
                from: None,
            },
        );
    }

    fn start_light(&mut self) {
        self.stats.light_sweeps += 1;
        self.phase = Phase::LightSweep;
        self.light_failed = false;
        for (n, node) in self.subnet.nodes.iter().enumerate() {
            if node.switch {
                self.tx.submit(
                    AddressHandle::directed(),
                    dr(METHOD_GET, ATTR_SWITCH_INFO, 0, &node.path, None),
                    Ctx::LightSwitchInfo(n),
                );
            } else if n != 0 {
                self.tx.submit(
                    AddressHandle::directed(),
                    dr(METHOD_GET, ATTR_NODE_INFO, 0, &node.path, None),
                    Ctx::LightNodeInfo(n),
                );
            }
        }
    }

    fn event(&mut self, net: &mut Net, e: Event<Ctx>) -> Result<()> {
        let now = net.cycle;
        match e {
            Event::Response { ctx, req, resp, .. } => {
                let st = mad::status(&resp);
                if st != 0 {
                    self.stats.errors += 1;
                    self.note(
                        now,
                        format!(
                            "status {st:#06x} for {ctx:?} (attr {:#06x} mod {:#x})",
                            mad::attr_id(&req),
                            mad::attr_mod(&req)
                        ),
                    );
                    match ctx {
                        Ctx::LightSwitchInfo(_) | Ctx::LightNodeInfo(_) => self.light_failed = true,
                        Ctx::SmControl(control::HANDOVER) => self.handover_to = None,
                        _ => {}
                    }
                    return Ok(());
                }
                self.response(ctx, &resp, now)
            }
            Event::Timeout { ctx, req } => {
                self.stats.errors += 1;
                self.note(
                    now,
                    format!(
                        "no response to {ctx:?} (attr {:#06x}) after {} retries",
                        mad::attr_id(&req),
                        self.opts.tx.retries
                    ),
                );
                match ctx {
                    Ctx::LightSwitchInfo(_) | Ctx::LightNodeInfo(_) => self.light_failed = true,
                    // An IsSM port whose SM does not answer is no SM; an
                    // unanswered poll is a miss already counted.
                    Ctx::PeerSmInfo(_) | Ctx::Poll => {}
                    Ctx::SmControl(code) => {
                        if code == control::HANDOVER {
                            // Offered again after the next heavy sweep.
                            self.handover_to = None;
                        }
                    }
                    // Something vanished mid-sweep: sweep again afterwards.
                    _ => self.dirty = true,
                }
                Ok(())
            }
            Event::Unsolicited { mad: m, meta } => self.unsolicited(net, &m, meta),
        }
    }

    fn unsolicited(&mut self, net: &mut Net, m: &Mad, meta: SmiMeta) -> Result<()> {
        let now = net.cycle;
        if mad::method(m) == METHOD_TRAP && mad::class(m) == CLASS_SUBN_LID {
            // Notice: 4–5 TrapNumber, 6–7 IssuerLID (ibspec §8).
            let d = mad::data(m);
            let trap = u16::from_be_bytes([d[4], d[5]]);
            let issuer = u16::from_be_bytes([d[6], d[7]]);
            self.stats.traps += 1;
            let security = trap == TRAP_BAD_P_KEY || trap == TRAP_BAD_Q_KEY;
            if trap == 256 {
                // Bad M_Key (ibspec §8): who tried what with which key.
                self.stats.mkey_traps += 1;
                self.note(
                    now,
                    format!(
                        "trap 256 (bad M_Key) from LID {issuer}: method {:#04x} attr {:#06x} M_Key {:#018x}",
                        d[16],
                        u16::from_be_bytes([d[18], d[19]]),
                        u64::from_be_bytes(d[24..32].try_into().unwrap_or([0; 8]))
                    ),
                );
            } else if security {
                let v = KeyViolation::decode(d);
                self.note(
                    now,
                    format!(
                        "trap {trap} ({}) from LID {issuer}: LID1 {} LID2 {} key {:#x} SL {} QP1 {:#x} QP2 {:#x}",
                        if trap == TRAP_BAD_P_KEY { "bad P_Key" } else { "bad Q_Key" },
                        v.lid1, v.lid2, v.key, v.sl, v.qp1, v.qp2
                    ),
                );
                self.key_traps.push(KeyTrap {
                    cycle: now,
                    trap,
                    generic_type: d[0],
                    producer: u32::from_be_bytes([0, d[1], d[2], d[3]]),
                    issuer_lid: issuer,
                    slid: meta.slid,
                    tid: mad::tid(m),
                    details: v,
                });
            } else {
                self.note(
                    now,
                    format!("trap {trap} from LID {issuer} (SLID {})", meta.slid),
                );
            }
            // TrapRepress: same TID, attribute and data, back to the sender.
            let mut r = *m;
            r[mad::off::METHOD] = METHOD_TRAP_REPRESS;
            self.tx
                .send_untracked(net, AddressHandle::lid_routed(meta.slid), &r)?;
            if self.state == SmState::Master && !security {
                self.dirty = true;
            }
            return Ok(());
        }
        let method = mad::method(m);
        if mad::attr_id(m) == ATTR_SM_INFO && (method == METHOD_GET || method == METHOD_SET) {
            // Another SM (or `sminfo`) asks about this one, or tells it
            // what to do: answer with our SMInfo (ibspec §8: GUID, SM_Key,
            // ActCount, Priority/SMState). The RTL delivered the request
            // with the receive rules applied; its send rules turn the D=1
            // response around.
            // SM_Key of a Get response (ibspec §9, OpenSM
            // osm_sminfo_rcv.c): given unless this SM's protect bits are 1
            // and the request's M_Key is not its own (then 0); protect > 1
            // and a mismatch: no reply.
            let mismatch = mad::m_key(m) != self.opts.tx.m_key;
            if method == METHOD_GET && mismatch && self.opts.m_key_protect > 1 {
                self.stats.sm_info_refused += 1;
                self.note(
                    now,
                    format!(
                        "SMInfo Get with a wrong M_Key from SLID {}: no reply",
                        meta.slid
                    ),
                );
                return Ok(());
            }
            let hide_key = method == METHOD_GET && mismatch && self.opts.m_key_protect == 1;
            let mut status = 0;
            let mut action = None;
            if method == METHOD_SET {
                let code = mad::attr_mod(m);
                let sender = SmInfo::decode(mad::data(m));
                let want = if code == control::ACKNOWLEDGE {
                    SmState::Standby
                } else {
                    SmState::Master
                };
                if (control::HANDOVER..=control::DISCOVER).contains(&code)
                    && sender.state == want as u8
                {
                    action = Some((code, sender));
                } else {
                    status = STATUS_INVALID_FIELD;
                    self.note(
                        now,
                        format!(
                            "illegal SubnSet(SMInfo) code {code} from {:#x} in state {}",
                            sender.guid, sender.state
                        ),
                    );
                }
            }
            let mut r = *m;
            mad::make_response(&mut r, status);
            let mut info = self.sm_info();
            if hide_key {
                info.sm_key = 0;
            }
            mad::data_mut(&mut r).copy_from_slice(&info.encode());
            let ah = if mad::is_dr(m) {
                AddressHandle::directed()
            } else {
                AddressHandle::lid_routed(meta.slid)
            };
            self.tx.send_untracked(net, ah, &r)?;
            if let Some((code, sender)) = action {
                self.control(now, code, sender);
            }
            return Ok(());
        }
        self.note(
            now,
            format!(
                "unsolicited MAD class {:#04x} method {:#04x} attr {:#06x} from SLID {}",
                mad::class(m),
                mad::method(m),
                mad::attr_id(m),
                meta.slid
            ),
        );
        Ok(())
    }

    /// A legal SubnSet(SMInfo) control code from the SM `sender`.
    fn control(&mut self, now: u64, code: u32, sender: SmInfo) {
        use SmState::*;
        self.note(
            now,
            format!(
                "SMInfo control {code} from {:#x} in state {:?}",
                sender.guid, self.state
            ),
        );
        match (code, self.state) {
            (control::HANDOVER, Standby | Discovering) => {
                self.stats.handovers_taken += 1;
                // ACKNOWLEDGE to the old master while still Standby, then
                // take over with a full sweep.
                let old = self.following.take().filter(|f| f.info.guid == sender.guid);
                match old {
                    Some(f) => self.send_control(control::ACKNOWLEDGE, &f.path),
                    None => self.note(now, "no route to the old master: no ACKNOWLEDGE".into()),
                }
                self.become_master(now);
            }
            (control::ACKNOWLEDGE, Master) => {
                let ours = self.handover_to.as_ref().map(|h| h.info.guid) == Some(sender.guid);
                if ours {
                    if let Some(to) = self.handover_to.take() {
                        self.become_standby(now, to);
                    }
                }
            }
            (control::DISABLE, Standby | Discovering) => {
                self.state = NotActive;
                self.dirty = false;
            }
            (control::STANDBY, NotActive) => match self.following.clone() {
                Some(f) => self.become_standby(now, f),
                None => {
                    self.state = Discovering;
                    self.dirty = true;
                }
            },
            (control::DISCOVER, _) => {
                self.state = Discovering;
                self.dirty = true;
            }
            _ => self.note(
                now,
                format!("control {code} ignored in state {:?}", self.state),
            ),
        }
    }

    /// Send SubnSet(SMInfo) with control `code` (and this SM's SMInfo) to
    /// the SM at directed route `path`.
    pub fn send_control(&mut self, code: u32, path: &[u8]) {
        let info = self.sm_info().encode();
        self.tx.submit(
            AddressHandle::directed(),
            dr(METHOD_SET, ATTR_SM_INFO, code, path, Some(&info)),
            Ctx::SmControl(code),
        );
    }

    fn become_master(&mut self, now: u64) {
        self.state = SmState::Master;
        self.following = None;
        self.stats.master_since = Some(now);
        self.dirty = true;
        self.note(now, "Master".into());
    }

    fn become_standby(&mut self, now: u64, master: PeerSm) {
        self.note(now, format!("Standby, polling {:#x}", master.info.guid));
        self.state = SmState::Standby;
        self.following = Some(master);
        self.handover_to = None;
        self.poll_misses = 0;
        self.last_act_count = None;
        self.next_poll = now;
    }

    /// Whether `p` outranks this SM (ibspec §9).
    fn outranked_by(&self, p: &PeerSm) -> bool {
        p.info
            .higher_than(self.opts.priority & 0x0F, self.port_guid)
    }

    /// A higher SM that is Discovering or Standby (not yet anyone's master).
    fn higher_contender(&self, p: &PeerSm) -> bool {
        (p.info.state == SmState::Discovering as u8 || p.info.state == SmState::Standby as u8)
            && self.outranked_by(p)
    }

    /// The end of discovery: Master (true) or Standby (false), ibspec §9.
    fn elect(&mut self, now: u64) -> bool {
        let master = SmState::Master as u8;
        let follow = match self.state {
            SmState::Master => self
                .peers
                .iter()
                .find(|p| p.info.state == master && self.outranked_by(p)),
            _ => self
                .peers
                .iter()
                .find(|p| p.info.state == master)
                .or_else(|| self.peers.iter().find(|p| self.higher_contender(p))),
        };
        if let Some(f) = follow.cloned() {
            self.become_standby(now, f);
            return false;
        }
        if self.state != SmState::Master {
            self.state = SmState::Master;
            self.stats.master_since = Some(now);
            self.note(now, "Master".into());
        }
        true
    }

    /// Master, after a sweep: HANDOVER to a higher SM found Standby or
    /// Discovering (one at a time).
    fn offer_handover(&mut self, now: u64) {
        if self.state != SmState::Master || self.handover_to.is_some() {
            return;
        }
        let Some(to) = self
            .peers
            .iter()
            .filter(|p| self.higher_contender(p))
            .min_by_key(|p| (std::cmp::Reverse(p.info.priority), p.info.guid))
            .cloned()
        else {
            return;
        };
        self.note(now, format!("HANDOVER to {:#x}", to.info.guid));
        self.stats.handovers_sent += 1;
        self.send_control(control::HANDOVER, &to.path);
        self.handover_to = Some(to);
    }

    /// Standby: poll the master, or declare it dead.
    fn poll(&mut self, now: u64) {
        let Some(f) = self.following.clone() else {
            self.state = SmState::Discovering;
            self.dirty = true;
            return;
        };
        if self.poll_misses > self.opts.poll_retries {
            self.note(
                now,
                format!(
                    "master {:#x} silent for {} polls: Discovering",
                    f.info.guid, self.poll_misses
                ),
            );
            self.following = None;
            self.state = SmState::Discovering;
            self.dirty = true;
            self.start_heavy();
            return;
        }
        self.poll_misses += 1;
        self.stats.polls += 1;
        self.next_poll = now + self.opts.poll_interval;
        // One try, answered before the next poll or counted as a miss.
        self.tx.submit_with(
            AddressHandle::directed(),
            dr(METHOD_GET, ATTR_SM_INFO, 0, &f.path, None),
            Ctx::Poll,
            self.opts.poll_interval.saturating_sub(1),
            0,
        );
    }

    /// Master: clear SwitchInfo.PortStateChange (write 1 to clear) where
    /// discovery saw it set.
    fn clear_port_state_change(&mut self) {
        let mut clears = Vec::new();
        for (n, node) in self.subnet.nodes.iter().enumerate() {
            if let Some(si) = node.switch_info.filter(|si| si[11] & 0x04 != 0) {
                clears.push((n, node.path.clone(), si));
            }
        }
        for (n, path, si) in clears {
            self.tx.submit(
                AddressHandle::directed(),
                dr(METHOD_SET, ATTR_SWITCH_INFO, 0, &path, Some(&si)),
                Ctx::ClearPsc(n),
            );
        }
    }

    fn response(&mut self, ctx: Ctx, resp: &Mad, now: u64) -> Result<()> {
        let data = mad::data(resp);
        match ctx {
            Ctx::NodeInfo { path, from } => {
                let ni = NodeInfo::decode(data).map_err(|e| anyhow!("NodeInfo: {e}"))?;
                self.node_info(ni, path, from);
            }
            Ctx::NodeDesc(n) => {
                let end = data.iter().position(|&b| b == 0).unwrap_or(64);
                self.subnet.nodes[n].desc = String::from_utf8_lossy(&data[..end]).into_owned();
            }
            Ctx::SwitchInfo(n) => {
                let mut si = [0u8; 64];
                si.copy_from_slice(data);
                self.subnet.nodes[n].switch_info = Some(si);
            }
            Ctx::PeerSmInfo(_) | Ctx::Poll if self.sm_key_mismatch(SmInfo::decode(data)) => {
                // ibspec §9: with an SM_Key of its own, an SM ignores SMInfo
                // responses that carry another one.
                self.stats.sm_key_ignored += 1;
                self.note(
                    now,
                    format!("SMInfo response with a wrong SM_Key ignored ({ctx:?})"),
                );
            }
            Ctx::PeerSmInfo(path) => {
                let info = SmInfo::decode(data);
                if info.guid != self.port_guid {
                    self.peers.push(PeerSm { info, path });
                }
            }
            Ctx::Poll => {
                let info = SmInfo::decode(data);
                if info.state == SmState::Master as u8 {
                    self.poll_misses = 0;
                    self.stats.polls_answered += 1;
                    if self.last_act_count.is_some_and(|a| info.act_count > a) {
                        self.stats.act_count_rises += 1;
                    }
                    self.last_act_count = Some(info.act_count);
                }
                if let Some(f) = self.following.as_mut() {
                    f.info = info;
                }
            }
            Ctx::SmControl(code) => {
                self.note(
                    now,
                    format!(
                        "SMInfo control {code} taken by {:#x}",
                        SmInfo::decode(data).guid
                    ),
                );
                if code == control::HANDOVER {
                    // An SM that takes over without ACKNOWLEDGE (OpenSM
                    // never sends one) is found Master by the next
                    // discovery, and this SM steps down then.
                    self.dirty = true;
                }
            }
            Ctx::ClearPsc(n) => {
                if let Some(si) = self.subnet.nodes[n].switch_info.as_mut() {
                    si[11] = data[11];
                }
            }
            Ctx::PortInfo(n, p) | Ctx::SetPortInfo(n, p) => {
                let pi = PortInfo::decode(data).map_err(|e| anyhow!("PortInfo: {e}"))?;
                let explore = matches!(ctx, Ctx::PortInfo(..));
                self.port_info(n, p, pi, explore);
            }
            Ctx::SetLft(n, block) => {
                let guid = self.subnet.nodes[n].guid;
                let mut b = [0u8; 64];
                b.copy_from_slice(data);
                self.written.entry(guid).or_default().insert(block, b);
            }
            Ctx::SetSwitchInfo(n) => {
                let mut si = [0u8; 64];
                si.copy_from_slice(data);
                self.subnet.nodes[n].switch_info = Some(si);
            }
            Ctx::LightNodeInfo(n) => {
                let ni = NodeInfo::decode(data).map_err(|e| anyhow!("NodeInfo: {e}"))?;
                let node = &self.subnet.nodes[n];
                if ni.node_guid != node.guid
                    || ni.num_ports != node.nports
                    || (ni.node_type == 2) != node.switch
                {
                    let msg = format!(
                        "light sweep: {:#x} is now {:#x} ({} ports, type {})",
                        node.guid, ni.node_guid, ni.num_ports, ni.node_type
                    );
                    self.note(now, msg);
                    self.light_failed = true;
                }
            }
            Ctx::LightSwitchInfo(n) => {
                if data[11] & 0x04 != 0 {
                    self.note(
                        now,
                        format!(
                            "light sweep: PortStateChange on {:#x}",
                            self.subnet.nodes[n].guid
                        ),
                    );
                    self.light_failed = true;
                }
            }
        }
        Ok(())
    }

    fn node_info(&mut self, ni: NodeInfo, path: Vec<u8>, from: Option<(usize, u8)>) {
        let lp = ni.local_port_num;
        let switch = ni.node_type == 2;
        let n = match self.subnet.by_guid.get(&ni.node_guid) {
            Some(&n) => n,
            None => {
                let n = self.subnet.nodes.len();
                self.subnet.nodes.push(SNode {
                    guid: ni.node_guid,
                    switch,
                    nports: ni.num_ports,
                    desc: String::new(),
                    path: path.clone(),
                    ports: vec![SPort::default(); usize::from(ni.num_ports) + 1],
                    switch_info: None,
                });
                self.subnet.by_guid.insert(ni.node_guid, n);
                self.tx.submit(
                    AddressHandle::directed(),
                    dr(METHOD_GET, ATTR_NODE_DESC, 0, &path, None),
                    Ctx::NodeDesc(n),
                );
                if switch {
                    self.tx.submit(
                        AddressHandle::directed(),
                        dr(METHOD_GET, ATTR_SWITCH_INFO, 0, &path, None),
                        Ctx::SwitchInfo(n),
                    );
                    for p in 0..=ni.num_ports {
                        self.subnet.nodes[n].ports[usize::from(p)].guid = ni.port_guid;
                        self.tx.submit(
                            AddressHandle::directed(),
                            dr(METHOD_GET, ATTR_PORT_INFO, u32::from(p), &path, None),
                            Ctx::PortInfo(n, p),
                        );
                    }
                }
                n
            }
        };
        let node = &mut self.subnet.nodes[n];
        if usize::from(lp) >= node.ports.len() {
            return;
        }
        if !switch && node.ports[usize::from(lp)].path.is_none() {
            node.ports[usize::from(lp)].guid = ni.port_guid;
            node.ports[usize::from(lp)].path = Some(path.clone());
            self.tx.submit(
                AddressHandle::directed(),
                dr(METHOD_GET, ATTR_PORT_INFO, u32::from(lp), &path, None),
                Ctx::PortInfo(n, lp),
            );
        }
        if let Some((a, ap)) = from {
            self.subnet.nodes[a].ports[usize::from(ap)].remote = Some((n, lp));
            self.subnet.nodes[n].ports[usize::from(lp)].remote = Some((a, ap));
        }
    }

    fn port_info(&mut self, n: usize, p: u8, pi: PortInfo, explore: bool) {
        let node = &mut self.subnet.nodes[n];
        let Some(port) = node.ports.get_mut(usize::from(p)) else {
            return;
        };
        port.info = Some(pi);
        if explore
            && !node.switch
            && pi.capability_mask & CAP_IS_SM != 0
            && !(n == 0 && p == self.port)
        {
            // Another SM's port: ask for its SMInfo.
            if let Some(path) = port.path.clone() {
                self.tx.submit(
                    AddressHandle::directed(),
                    dr(METHOD_GET, ATTR_SM_INFO, 0, &path, None),
                    Ctx::PeerSmInfo(path),
                );
            }
        }
        let node = &mut self.subnet.nodes[n];
        let port = &mut node.ports[usize::from(p)];
        if !explore || p == 0 || !port.linked() || port.remote.is_some() {
            return;
        }
        // Follow the cable: from a switch port, or from the SM's own CA port.
        let base = if node.switch {
            node.path.clone()
        } else if node.path.is_empty() && n == 0 && p == self.port {
            Vec::new()
        } else {
            return;
        };
        if base.len() >= 63 {
            return;
        }
        let mut path = base;
        path.push(p);
        self.tx.submit(
            AddressHandle::directed(),
            dr(METHOD_GET, ATTR_NODE_INFO, 0, &path, None),
            Ctx::NodeInfo {
                path,
                from: Some((n, p)),
            },
        );
    }

    /// The DR path and PortInfo modifier to reach port `p` of node `n`.
    fn port_route(&self, n: usize, p: u8) -> Option<Vec<u8>> {
        let node = &self.subnet.nodes[n];
        if node.switch {
            Some(node.path.clone())
        } else {
            node.ports[usize::from(p)].path.clone()
        }
    }

    fn end_ports(&self) -> Vec<(usize, u8)> {
        let mut v = Vec::new();
        for (n, node) in self.subnet.nodes.iter().enumerate() {
            if node.switch {
                if node.ports[0].info.is_some() {
                    v.push((n, 0));
                }
            } else {
                for (p, port) in node.ports.iter().enumerate().skip(1) {
                    if port.info.is_some() && port.path.is_some() {
                        v.push((n, p as u8));
                    }
                }
            }
        }
        v
    }

    fn assign_lids(&mut self) -> Result<()> {
        let ends = self.end_ports();
        let lmc_of = |sw: bool, lmc: u8| if sw { 0 } else { lmc };
        let mut used: BTreeMap<u16, u64> = BTreeMap::new();
        let mut want: Vec<(usize, u8, u16, u8)> = Vec::new();
        let mut missing = Vec::new();
        // 1. Remembered LIDs.
        for &(n, p) in &ends {
            let node = &self.subnet.nodes[n];
            let guid = node.ports[usize::from(p)].guid;
            let lmc = lmc_of(node.switch, self.opts.lmc);
            if let Some(&lid) = self.guid_lid.get(&guid) {
                if lid % (1 << lmc) == 0 && (0..1u16 << lmc).all(|o| !used.contains_key(&(lid + o)))
                {
                    for o in 0..1u16 << lmc {
                        used.insert(lid + o, guid);
                    }
                    want.push((n, p, lid, lmc));
                    continue;
                }
            }
            missing.push((n, p));
        }
        // 2. LIDs the ports carry already; 3. the lowest free blocks.
        let mut fresh = Vec::new();
        for &(n, p) in &missing {
            let node = &self.subnet.nodes[n];
            let guid = node.ports[usize::from(p)].guid;
            let lmc = lmc_of(node.switch, self.opts.lmc);
            let cur = node.ports[usize::from(p)].info.map_or(0, |i| i.lid);
            let block = 1u32 << lmc;
            if cur != 0
                && u32::from(cur) % block == 0
                && u32::from(cur) + block - 1 <= u32::from(UNICAST_LID_MAX)
                && (0..block).all(|o| !used.contains_key(&((u32::from(cur) + o) as u16)))
            {
                for o in 0..block {
                    used.insert((u32::from(cur) + o) as u16, guid);
                }
                want.push((n, p, cur, lmc));
            } else {
                fresh.push((n, p, lmc));
            }
        }
        for (n, p, lmc) in fresh {
            let guid = self.subnet.nodes[n].ports[usize::from(p)].guid;
            let block = 1u32 << lmc;
            let mut lid = block;
            while (0..block).any(|o| used.contains_key(&((lid + o) as u16))) {
                lid += block;
            }
            if lid + block - 1 > u32::from(UNICAST_LID_MAX) {
                bail!("out of unicast LIDs");
            }
            for o in 0..block {
                used.insert((lid + o) as u16, guid);
            }
            want.push((n, p, lid as u16, lmc));
        }
        let sm_lid = want
            .iter()
            .find(|&&(n, p, _, _)| n == 0 && p == self.port)
            .map(|w| w.2)
            .ok_or_else(|| anyhow!("the SM's own port was not discovered"))?;
        for (n, p, lid, lmc) in want {
            let node = &self.subnet.nodes[n];
            let guid = node.ports[usize::from(p)].guid;
            self.guid_lid.insert(guid, lid);
            let Some(mut pi) = node.ports[usize::from(p)].info else {
                continue;
            };
            if pi.lid == lid
                && pi.lmc == lmc
                && pi.master_sm_lid == sm_lid
                && pi.master_sm_sl == 0
                && pi.gid_prefix == self.opts.subnet_prefix
            {
                continue;
            }
            pi.lid = lid;
            pi.lmc = lmc;
            pi.master_sm_lid = sm_lid;
            pi.master_sm_sl = 0;
            pi.gid_prefix = self.opts.subnet_prefix;
            pi.port_state = 0;
            pi.port_phys_state = 0;
            self.set_port_info(n, p, &pi);
        }
        Ok(())
    }

    /// An SMInfo response whose SM_Key this SM must ignore.
    fn sm_key_mismatch(&self, info: SmInfo) -> bool {
        self.opts.sm_key != 0 && info.sm_key != self.opts.sm_key
    }

    /// PortInfo Set of port `p` of node `n` (PortInfo modifier = port),
    /// with this SM's M_Key, protect bits and lease period.
    fn set_port_info(&mut self, n: usize, p: u8, pi: &PortInfo) {
        let Some(path) = self.port_route(n, p) else {
            return;
        };
        let mut pi = *pi;
        pi.m_key = self.opts.tx.m_key;
        pi.m_key_protect_bits = self.opts.m_key_protect;
        pi.m_key_lease_period = self.opts.m_key_lease;
        let pi = &pi;
        let m = dr(
            METHOD_SET,
            ATTR_PORT_INFO,
            u32::from(p),
            &path,
            Some(&pi.encode()),
        );
        self.tx
            .submit(AddressHandle::directed(), m, Ctx::SetPortInfo(n, p));
    }

    /// The routing graph of the current subnet.
    pub fn routing_graph(&self) -> Vec<RNode> {
        self.subnet
            .nodes
            .iter()
            .map(|node| RNode {
                switch: node.switch,
                links: node
                    .ports
                    .iter()
                    .map(|p| p.remote.filter(|_| p.linked()))
                    .collect(),
                lids: node
                    .ports
                    .iter()
                    .enumerate()
                    .filter(|(p, _)| (*p == 0) == node.switch)
                    .filter_map(|(p, port)| {
                        port.info
                            .filter(|i| i.lid != 0)
                            .map(|i| (p as u8, i.lid, i.lmc))
                    })
                    .collect(),
            })
            .collect()
    }

    fn route(&mut self, now: u64) {
        let graph = self.routing_graph();
        let lfts = routing::min_hop(&graph);
        for (n, lft) in lfts.into_iter().enumerate() {
            let Some(lft) = lft else { continue };
            let node = &self.subnet.nodes[n];
            let Some(mut si) = node.switch_info else {
                continue;
            };
            let cap = u16::from_be_bytes([si[0], si[1]]);
            if lft.len() > usize::from(cap) {
                self.stats.errors += 1;
                let msg = format!(
                    "switch {:#x}: LIDs up to {} but LinearFDBCap {cap}",
                    node.guid,
                    lft.len() - 1
                );
                self.note(now, msg);
                continue;
            }
            let path = node.path.clone();
            let guid = node.guid;
            let written = self.written.entry(guid).or_default();
            let mut sets = Vec::new();
            for (b, chunk) in lft.chunks(64).enumerate() {
                let mut block = [NO_ROUTE; 64];
                block[..chunk.len()].copy_from_slice(chunk);
                if written.get(&(b as u16)) != Some(&block) {
                    sets.push((b as u16, block));
                }
            }
            for (b, block) in sets {
                self.stats.lft_blocks_set += 1;
                self.tx.submit(
                    AddressHandle::directed(),
                    dr(
                        METHOD_SET,
                        ATTR_LINEAR_FWD_TABLE,
                        u32::from(b),
                        &path,
                        Some(&block),
                    ),
                    Ctx::SetLft(n, b),
                );
            }
            let top = (lft.len() - 1) as u16;
            if u16::from_be_bytes([si[6], si[7]]) != top {
                si[6..8].copy_from_slice(&top.to_be_bytes());
                si[11] &= !0x04; // leave PortStateChange alone
                self.tx.submit(
                    AddressHandle::directed(),
                    dr(METHOD_SET, ATTR_SWITCH_INFO, 0, &path, Some(&si)),
                    Ctx::SetSwitchInfo(n),
                );
            }
        }
    }

    /// PortInfo Set of PortState `to` on every linked port now in `from`.
    fn set_states(&mut self, from: u8, to: u8) {
        let mut sets = Vec::new();
        for (n, node) in self.subnet.nodes.iter().enumerate() {
            for (p, port) in node.ports.iter().enumerate().skip(1) {
                if port.remote.is_none() || !port.linked() || port.state() != from {
                    continue;
                }
                let Some(mut pi) = port.info else { continue };
                pi.port_state = to;
                pi.port_phys_state = 0;
                sets.push((n, p as u8, pi));
            }
        }
        for (n, p, pi) in sets {
            self.set_port_info(n, p, &pi);
        }
    }
}

/// Run the fabric and its SMs until every SM has settled (bring-up and any
/// sweep it started are done), or fail after `max_cycles`.
pub fn run_until_settled(net: &mut Net, sms: &mut [SubnetManager], max_cycles: u64) -> Result<u64> {
    run_until_settled_with(net, sms, max_cycles, &mut |_, _| {})
}

/// [`run_until_settled`], calling `watch` after every step of the SMs
/// (a progress display).
pub fn run_until_settled_with(
    net: &mut Net,
    sms: &mut [SubnetManager],
    max_cycles: u64,
    watch: &mut dyn FnMut(&Net, &[SubnetManager]),
) -> Result<u64> {
    let start = net.cycle;
    loop {
        for sm in sms.iter_mut() {
            sm.step(net)?;
        }
        watch(net, sms);
        if sms.iter().all(|s| s.settled()) && net.idle() {
            return Ok(net.cycle - start);
        }
        if net.cycle - start > max_cycles {
            bail!(
                "SMs not settled after {max_cycles} cycles (phases {:?})",
                sms.iter().map(|s| s.phase).collect::<Vec<_>>()
            );
        }
        advance(net, sms)?;
    }
}

/// Run the fabric and its SMs for `cycles` cycles.
pub fn run_for(net: &mut Net, sms: &mut [SubnetManager], cycles: u64) -> Result<()> {
    let end = net.cycle + cycles;
    while net.cycle < end {
        for sm in sms.iter_mut() {
            sm.step(net)?;
        }
        advance_until(net, sms, end)?;
    }
    Ok(())
}

fn advance(net: &mut Net, sms: &[SubnetManager]) -> Result<()> {
    advance_until(net, sms, u64::MAX)
}

/// One cycle of the fabric, or, if nothing is in flight, a jump to the
/// next thing an SM or the fabric has scheduled (at most to `limit`).
fn advance_until(net: &mut Net, sms: &[SubnetManager], limit: u64) -> Result<()> {
    if net.quiet() {
        let next = sms
            .iter()
            .filter_map(|s| s.next_wake())
            .chain(net.next_wake())
            .min()
            .unwrap_or(limit)
            .min(limit);
        if next > net.cycle {
            net.cycle = next;
            return Ok(());
        }
    }
    net.step()
}
