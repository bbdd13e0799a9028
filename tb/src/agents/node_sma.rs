//! The subnet management agent of a whole node (switch or multiport CA), as
//! pure logic: it answers every SMP the node's SMA receives exactly as
//! ibsim's SMA (`sim_mad.c`) answers it for the same topology, reading the
//! live port state from, and writing registers to, a small hardware trait
//! ([`NodeHw`]) that the fabric implements over the RTL. It is the
//! [`NodeAgent`] of every node of a [`crate::model::net::Net`].
//!
//! Reference: ibspec §4 (SMP layout), §7 (statuses), §8 (attribute layouts,
//! ibsim's PortInfo Set), §10 (ibsim defaults); ibsim source
//! linux-rdma/ibsim `ibsim/sim_mad.c` and `ibsim/sim_net.c` (v0.12 @db9c0e46
//! and tag ibsim-0.10). Every default below was also observed from the
//! Debian `ibsim-utils` 0.10 installed here with
//! `ibsim -s tests/topologies/net.2sw2path4hca` and
//! `LD_PRELOAD=libumad2sim.so smpdump -D <path> <attr> <mod>` /
//! `smpquery` / `ibportstate` (the dumps are the expected bytes of the unit
//! tests below).
//!
//! # What is answered
//!
//! | attribute | Get | Set | modifier |
//! |---|---|---|---|
//! | NodeDescription | yes | 0x0008 (data = the description) | ignored |
//! | NodeInfo | yes | 0x0008 (data = NodeInfo) | ignored |
//! | SwitchInfo (switch) | yes | LinearFDBTop, LifeTime, PortStateChange w1c | ignored |
//! | GUIDInfo | block 0 = the port GUID, other blocks 0 | 0x0008 | block |
//! | PortInfo | yes | see below | port (bit 31 ignored) |
//! | P_KeyTable | yes | yes (CA ports, switch port 0 → [`HwWrite::PkeyBlock`]) | 15:0 block, 31:16 port (switch) |
//! | SLtoVLMappingTable | yes | yes | 15:8 in port, 7:0 out port (switch) |
//! | VLArbitrationTable | yes | yes | 31:16 table 1..4, 15:0 port (switch) |
//! | LinearForwardingTable (switch) | yes | yes → [`HwWrite::LftBlock`] | block |
//! | MulticastForwardingTable (switch) | yes | yes (kept here) | 31:28 position, 8:0 block |
//! | MlnxExtPortInfo 0xFF90 | yes | yes (kept here) | port |
//! | SMInfo | — no response: the RTL routes SMInfo to the SM | | |
//! | anything else | 0x000C | 0x000C | |
//!
//! CA: a modifier naming a port of 0 means the arrival port; P_Key, SL2VL and
//! VLArb tables are those of the arrival port. Switch-only attributes on a CA
//! → 0x000C. A port number above NumPorts → 0x001C (ibsim reads past its
//! port array there; we refuse).
//!
//! # PortInfo Set (ibsim `do_portinfo`, in its order)
//!
//! 1. CA/router: a port other than the arrival port → 0x001C, nothing applied.
//! 2. LID, MasterSMLID, LMC, MasterSMSL, HOQLife and (if ≠ 0 and not the
//!    current value) PortPhysicalState are applied. On a CA port and on switch port 0 they
//!    go to the hardware ([`HwWrite::PortLid`] …); on an external switch
//!    port they are only kept here and read back (ibsim does the same; they
//!    route nothing).
//! 3. PortState, with the neighbour's state from [`NodeHw::neighbour_state`]:
//!    connected and 1 (Down) → [`HwWrite::RetrainLink`] (both ends go to
//!    Init); connected and 2 (Init) → nothing; connected and ≥ 3 → allowed
//!    iff |neighbour − new| ≤ 1 and |own − new| = 1 ([`HwWrite::PortState`]),
//!    else 0x001C; not connected (switch port 0 included) and ≥ 2 → 0x001C.
//! 4. OperationalVLs greater than the *request's* VLCap → 0x001C; else
//!    OperationalVLs and GidPrefix are stored.
//! 5. Only if PortState was 0 (NoChange) and the port is connected:
//!    LinkWidthEnabled / LinkSpeedEnabled / LinkSpeedExtEnabled values that
//!    ibsim recognises set the port's enabled and active width/speeds
//!    ([`HwWrite::LinkActive`], so the fabric can mirror the active values to
//!    the neighbour with [`NodeSma::set_link_active`]).
//!
//! An error in 3 or 4 leaves what 2 (and 3) applied, as ibsim does (observed:
//! a refused `ibportstate … active` still changed the port's LID). An error
//! response carries the request's data unchanged, as ibsim's.
//!
//! # Where this differs from ibsim (on purpose)
//!
//! * Attributes ibsim has no handler for (e.g. LedInfo) get 0x000C (Linux
//!   `generate_unmatched_resp`); ibsim drops them (requester times out).
//! * Methods other than Get/Set get 0x0008 with the request's data; ibsim
//!   answers most of them as a Get.
//! * MasterSMSL is stored and read back; ibsim ignores the written SL and
//!   always reads back its template's 0.
//! * Port numbers above NumPorts in P_Key/SL2VL/VLArb modifiers → 0x001C;
//!   LFT blocks at or beyond LinearFDBCap/64 → 0x001C (ibsim: > 767).
//! * PortPhysicalState reads Disabled (3) after a Set of 3
//!   ([`NodeHw::phys_disabled`]), else LinkUp (5) if [`NodeHw::link_up`],
//!   else Polling (2), and the template (connected or down) follows
//!   `link_up` too. A Set of 3 or 2 that changes it goes to the hardware
//!   ([`HwWrite::PortPhysState`]): the fabric takes the link down and
//!   keeps it down, or enables the port and trains its link. A Set of
//!   another value than 0, 2, 3 and the one it reads → 0x001C, nothing
//!   applied (ibsim stores any value and reads it back, and its link never
//!   trains again).
//! * Traps: 128 (switch link state), 144 (IsSM change) and 257/258 (a QP1
//!   packet with a bad P_Key / Q_Key, reported by the host GSI); none on
//!   width/speed changes (ibsim sends 144 then).
//! * PortInfo P_KeyViolations / Q_KeyViolations (bytes 46–49) are 0 here;
//!   the fabric ([`crate::model::net::Net`]) fills them from the RTL counters of
//!   the port (saturated at 0xFFFF) while the response waits for its
//!   service latency. A Set does not write them.
//! * FDR10 (MlnxExtPortInfo link speed fields) is not modelled.

use anyhow::{bail, Context, Result};

use crate::model::node_hw::{
    HwWrite, KeyViolation, NodeAgent, NodeHw, TRAP_BAD_P_KEY, TRAP_BAD_Q_KEY,
};
use crate::proto::mad::{self, Mad};
use crate::proto::packet::consts::*;
use crate::proto::packet::{NodeDescription, NodeInfo, PortInfo};
use crate::proto::topology::{speed, width, NodeKind, TNode, Topology};

// ---------------------------------------------------------------------------
// ibsim defaults

/// Which ibsim's defaults the SMA reproduces. They differ only in a few
/// PortInfo bits (ibsim git `ibsim-0.10..db9c0e46`, commits c7afabc and
/// a5152b7, and the NDR support).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IbsimVersion {
    /// Debian `ibsim-utils` 0.10, the ibsim installed here (observed):
    /// CA connected-port CapabilityMask 0x0050C048 (IsVendorClass, bit 20,
    /// set), CapabilityMask2 0x0030 on switch port 0 and CA ports,
    /// LinkSpeedExtSupported 7, no NDR.
    #[default]
    V0_10,
    /// ibsim v0.12 (the ibspec reference): CA CapabilityMask 0x0040C048,
    /// CapabilityMask2 0x0430 (IsLinkSpeedNDRSupported), ext-speeds
    /// supported 15, NDR.
    V0_12,
}

/// Whose SMA a node answers as. The attribute layouts, tables and traps are
/// the same; what differs is how a request the SMA refuses is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// ibsim's `sim_mad.c`, as the rest of this module describes.
    #[default]
    Ibsim,
    /// The SMA of a hardware HCA, as Linux qib answers (`qib_mad.c`,
    /// `process_subn`, `subn_set_portinfo`):
    /// * ClassVersion other than 1 → 0x0004 (ibsim drops > 2, answers 2);
    /// * a Set of NodeInfo, NodeDescription or GUIDInfo → 0x000C, the data
    ///   as it came;
    /// * a PortInfo Set is checked before anything of it is applied: LID
    ///   and MasterSMLID unicast or 0, PortState one step from the port's
    ///   own state (Down retrains to Init, Armed from Init, Active from
    ///   Armed, the same state again except Init), OperationalVLs at most
    ///   VLCap; no neighbour rule (the link layer enforces that in
    ///   silicon). A refused Set is answered with the port's current
    ///   PortInfo, as qib's `subn_get_portinfo` after its `err:` label;
    /// * GidPrefix starts at the default fe80::/64 and M_KeyLeasePeriod at 0
    ///   (the RTL's reset value).
    Hca,
}

/// The default GID prefix, fe80::/64 (IBA 4.1.1), a hardware HCA's
/// GidPrefix until an SM sets one.
pub const DEFAULT_GID_PREFIX: u64 = 0xfe80_0000_0000_0000;

/// PortInfo.CapabilityMask IsSM (bit 1): an SM runs on the port.
pub const CAP_IS_SM: u32 = 1 << 1;

/// NodeInfo.Revision of every ibsim node (`swnodeinfo`/`hcanodeinfo`
/// bytes 32..35; observed 0x000000a1).
pub const IBSIM_REVISION: u32 = 0xA1;
/// NodeInfo.PartitionCap of a switch (`swnodeinfo` bytes 28..29; observed 8).
pub const SWITCH_PARTITION_CAP: u16 = 8;
/// NodeInfo.PartitionCap of a CA/router (`hcanodeinfo`; observed 64).
pub const CA_PARTITION_CAP: u16 = 64;
/// SwitchInfo.PartitionEnforcementCap (`switchinfo` bytes 14..15; observed
/// 64): P_Key table size of external switch ports.
pub const PARTITION_ENFORCEMENT_CAP: u16 = 64;
/// SwitchInfo.MulticastFDBCap (ibsim `MAXMCASTCAP`; observed 1024).
pub const MCAST_FDB_CAP: u16 = 1024;
/// MFT blocks (32 MLIDs each) ibsim holds: 0..=31 (`LASTBLOCK32`).
const MCAST_BLOCKS: u32 = MCAST_FDB_CAP as u32 / 32;
/// Ports per MFT port mask (`MCASTMASKSIZE`).
const MCAST_MASK_PORTS: usize = 16;
/// SLtoVL table of every port (`default_sl2vl`; observed
/// `0123 4567 89ab cde7`: SL n → VL n, SL15 → VL7).
pub const DEFAULT_SL2VL: [u8; 8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xe7];
/// `default_vlarb_high`: (VL, weight) entries; the rest 0.
const VLARB_HIGH_DEFAULT: [(u8, u8); 15] = [
    (0, 4),
    (1, 0),
    (2, 0),
    (3, 0),
    (4, 0),
    (5, 0),
    (6, 0),
    (7, 0),
    (8, 0),
    (9, 0),
    (10, 0),
    (11, 0),
    (12, 0),
    (13, 0),
    (14, 0),
];
/// `default_vlarb_low`.
const VLARB_LOW_DEFAULT: [(u8, u8); 15] = [
    (0, 0),
    (1, 4),
    (2, 4),
    (3, 4),
    (4, 4),
    (5, 4),
    (6, 4),
    (7, 4),
    (8, 4),
    (9, 4),
    (10, 4),
    (11, 4),
    (12, 4),
    (13, 4),
    (14, 4),
];
/// PortInfo.LinkWidthSupported ibsim reports (`LINKWIDTH_1x_2x_4x_8x_12x`).
const LINK_WIDTH_SUPPORTED: u8 = 31;
/// PortInfo.LinkSpeedSupported ibsim reports (`LINKSPEED_SDR_DDR_QDR`).
const LINK_SPEED_SUPPORTED: u8 = 7;

/// PortInfo templates, ibsim v0.12 `sim_net.c` (`smaport`, `swport`,
/// `swport_down`, `hcaport`, `hcaport_down`). The dynamic fields (see
/// [`NodeSma`] `port_info_bytes`) are overwritten on every read, as ibsim's
/// `update_portinfo` does.
#[rustfmt::skip]
const SMAPORT: [u8; 64] = [
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xFE, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xC0, 0x48,
    0x00, 0x00, 0x0F, 0xF9, 0x00, 0x03, 0x03, 0x01,
    0x14, 0x52, 0x00, 0x11, 0x10, 0x40, 0x00, 0x08,
    0x08, 0x03, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x1F, 0x08, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x04, 0x30, 0x00, 0x00,
];
#[rustfmt::skip]
const SWPORT: [u8; 64] = [
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x03, 0x02,
    0x12, 0x52, 0x00, 0x11, 0x40, 0x40, 0x00, 0x08,
    0x08, 0x04, 0xFF, 0x10, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01,
];
#[rustfmt::skip]
const SWPORT_DOWN: [u8; 64] = [
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x03, 0x01,
    0x11, 0x22, 0x00, 0x11, 0x40, 0x40, 0x00, 0x08,
    0x08, 0x04, 0xE9, 0x40, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01,
];
#[rustfmt::skip]
const HCAPORT: [u8; 64] = [
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xFE, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x02, 0x00, 0x01, 0x00, 0x40, 0xC0, 0x48,
    0x00, 0x00, 0x0F, 0xF9, 0x01, 0x03, 0x03, 0x02,
    0x12, 0x52, 0x00, 0x11, 0x40, 0x40, 0x00, 0x08,
    0x08, 0x04, 0xFF, 0x10, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x20, 0x1F, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x04, 0x30, 0x01, 0x01,
];
#[rustfmt::skip]
const HCAPORT_DOWN: [u8; 64] = [
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xFE, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x02, 0x00, 0x01, 0x00, 0x10, 0xC0, 0x48,
    0x00, 0x00, 0x0F, 0xF9, 0x01, 0x03, 0x03, 0x01,
    0x11, 0x22, 0x00, 0x11, 0x40, 0x40, 0x00, 0x08,
    0x08, 0x04, 0xE9, 0x10, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x20, 0x1F, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x04, 0x30, 0x01, 0x01,
];
/// SwitchInfo template, ibsim `sim_net.c` `switchinfo`; LinearFDBCap,
/// MulticastFDBCap, LinearFDBTop, LifeTime, PortStateChange and
/// EnhancedPort0 are overwritten. Observed (0.10, cap 30720):
/// `7800 0000 0400 0000 0000 0004 0000 0040 3000 …`.
#[rustfmt::skip]
const SWITCHINFO: [u8; 64] = [
    0xC0, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x04,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,
    0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
];

// ---------------------------------------------------------------------------
// Identity

/// Width and speeds of one port (PortInfo encodings, ibspec §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortLink {
    pub width_enabled: u8,
    pub width_active: u8,
    pub speed_enabled: u8,
    pub speed_active: u8,
    pub speed_ext_enabled: u8,
    /// 0 = no extended speed (the ext fields then read 0).
    pub speed_ext_active: u8,
}

impl Default for PortLink {
    /// ibsim `init_ports` for a port without a link (and switch port 0):
    /// enabled = the file's defaults (4x, SDR, no ext), active 4x SDR.
    fn default() -> Self {
        PortLink {
            width_enabled: width::DEFAULT,
            width_active: width::W4X,
            speed_enabled: speed::DEFAULT,
            speed_active: speed::SDR,
            speed_ext_enabled: 0,
            speed_ext_active: 0,
        }
    }
}

/// What a node is: everything its SMA reports that does not change at run
/// time (plus the initial link widths/speeds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeIdentity {
    /// Switch, CA or router (a router answers like a CA, NodeType 3).
    pub kind: NodeKind,
    /// External ports 1..=nports.
    pub nports: u8,
    pub node_guid: u64,
    pub sys_image_guid: u64,
    pub description: NodeDescription,
    /// 24 bits.
    pub vendor_id: u32,
    pub device_id: u16,
    /// SwitchInfo.EnhancedPort0: `Some` when the topology says
    /// "enhanced"/"base" port 0 (ibsim leaves the bit 0 otherwise).
    pub enhanced_port0: Option<bool>,
    /// SwitchInfo.LinearFDBCap = the RTL's LFT depth (LIDs 0..lft_depth-1),
    /// a multiple of 64. Ignored on a CA.
    pub lft_depth: u16,
    /// `links[p - 1]` = port p.
    pub links: Vec<PortLink>,
    /// CA port GUIDs set apart from the NodeGUID (`port_guids[p - 1]`, the
    /// console's `Guid`); empty: NodeGUID + p.
    pub port_guids: Vec<u64>,
    pub ibsim: IbsimVersion,
    /// NodeInfo.PartitionCap; also the size of each P_Key table the SMA
    /// keeps for a CA port or switch port 0.
    pub partition_cap: u16,
    /// NodeInfo.Revision.
    pub revision: u32,
    pub dialect: Dialect,
}

impl NodeIdentity {
    /// A switch with ibsim's defaults (links 4x SDR).
    pub fn switch(nports: u8, node_guid: u64, description: &str, lft_depth: u16) -> Self {
        NodeIdentity {
            kind: NodeKind::Switch,
            nports,
            node_guid,
            sys_image_guid: node_guid,
            description: ibsim_description(description),
            vendor_id: 0,
            device_id: 0,
            enhanced_port0: None,
            lft_depth,
            links: vec![PortLink::default(); usize::from(nports)],
            port_guids: Vec::new(),
            ibsim: IbsimVersion::default(),
            partition_cap: SWITCH_PARTITION_CAP,
            revision: IBSIM_REVISION,
            dialect: Dialect::Ibsim,
        }
    }

    /// A CA with ibsim's defaults (links 4x SDR).
    pub fn ca(nports: u8, node_guid: u64, description: &str) -> Self {
        NodeIdentity {
            kind: NodeKind::Ca,
            lft_depth: 0,
            partition_cap: CA_PARTITION_CAP,
            ..Self::switch(nports, node_guid, description, 0)
        }
    }

    /// The one-port HCA of reference vector V2 (ibspec §3.3) with NodeGUID
    /// `node_guid` (SystemImageGUID the same, PortGUID + 1): PartitionCap
    /// 128, DeviceID 0x1003, VendorID 0x0002C9, Revision 0, answering in
    /// the [`Dialect::Hca`] dialect.
    pub fn hca(node_guid: u64, description: &str) -> Self {
        NodeIdentity {
            vendor_id: 0x0002C9,
            device_id: 0x1003,
            partition_cap: 128,
            revision: 0,
            dialect: Dialect::Hca,
            ..Self::ca(1, node_guid, description)
        }
    }

    /// The CA of reference vector V2 itself: NodeGUID 0x0002c90300001230,
    /// description "vl15 CA".
    pub fn vector_v2_ca() -> Self {
        Self::hca(0x0002_c903_0000_1230, "vl15 CA")
    }

    /// The identity ibsim gives `node` of `topo`; `lft_depth` is the
    /// switch RTL's LFT depth (SwitchInfo.LinearFDBCap; ignored for CAs).
    pub fn from_topology(node: &TNode, topo: &Topology, lft_depth: u16) -> Result<Self> {
        let ctx = || format!("node \"{}\" ({})", node.id, topo.at(node.origin));
        if node.ports.len() != usize::from(node.nports) {
            bail!(
                "{}: {} port records for {} ports",
                ctx(),
                node.ports.len(),
                node.nports
            );
        }
        let mut links = Vec::with_capacity(node.ports.len());
        for p in &node.ports {
            let mut l = PortLink {
                width_enabled: p.width_enabled,
                speed_enabled: p.speed_enabled,
                speed_ext_enabled: p.speed_ext_enabled,
                ..PortLink::default()
            };
            if let Some(i) = p.link {
                let t = topo
                    .links
                    .get(i)
                    .with_context(|| format!("{}: port {} names link {i}, absent", ctx(), p.num))?;
                l.width_active = t.width;
                l.speed_active = t.speed;
                l.speed_ext_active = t.speed_ext;
            }
            links.push(l);
        }
        let id = NodeIdentity {
            kind: node.kind,
            nports: node.nports,
            node_guid: node.node_guid,
            sys_image_guid: node.sys_image_guid,
            description: ibsim_description(&node.description),
            vendor_id: node.vendor_id & 0xFF_FFFF,
            device_id: node.device_id,
            enhanced_port0: node.port0.and_then(|p| p.enhanced),
            lft_depth,
            links,
            port_guids: Vec::new(),
            ibsim: IbsimVersion::default(),
            partition_cap: if node.kind == NodeKind::Switch {
                SWITCH_PARTITION_CAP
            } else {
                CA_PARTITION_CAP
            },
            revision: IBSIM_REVISION,
            dialect: Dialect::Ibsim,
        };
        id.check().with_context(ctx)?;
        Ok(id)
    }

    /// Consistency of a hand-made identity.
    pub fn check(&self) -> Result<()> {
        if self.links.len() != usize::from(self.nports) {
            bail!(
                "{} link records for {} ports",
                self.links.len(),
                self.nports
            );
        }
        if self.is_switch() && (self.lft_depth == 0 || self.lft_depth % 64 != 0) {
            bail!(
                "switch LFT depth {} is not a non-zero multiple of 64",
                self.lft_depth
            );
        }
        if !self.is_switch() && self.nports == 0 {
            bail!("a CA needs at least one port");
        }
        Ok(())
    }

    pub fn is_switch(&self) -> bool {
        self.kind == NodeKind::Switch
    }

    /// PortGUID of port `p`: a switch's is its NodeGUID, a CA port's
    /// NodeGUID + p (ibsim `init_ports`) unless set apart
    /// ([`NodeIdentity::port_guids`]).
    pub fn port_guid(&self, p: u8) -> u64 {
        if self.is_switch() {
            self.node_guid
        } else if let Some(&g) = self.port_guids.get(usize::from(p).wrapping_sub(1)) {
            g
        } else {
            self.node_guid.wrapping_add(u64::from(p))
        }
    }

    /// NodeInfo.PartitionCap.
    pub fn partition_cap(&self) -> u16 {
        self.partition_cap
    }

    fn node_type(&self) -> u8 {
        match self.kind {
            NodeKind::Switch => NODE_TYPE_SWITCH,
            NodeKind::Ca => NODE_TYPE_CA,
            NodeKind::Router => NODE_TYPE_ROUTER,
        }
    }
}

/// ibsim keeps at most 63 bytes of a description (`strncpy(…, 63)`).
fn ibsim_description(s: &str) -> NodeDescription {
    let mut end = s.len().min(63);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    NodeDescription::new(&s[..end])
}

// ---------------------------------------------------------------------------
// The agent

/// Per-port state ibsim keeps in its `Port`.
#[derive(Debug, Clone)]
struct PortSoft {
    lid: u16,
    master_sm_lid: u16,
    lmc: u8,
    master_sm_sl: u8,
    hoq_life: u8,
    op_vls: u8,
    gid_prefix: u64,
    /// An SM runs on this port: PortInfo.CapabilityMask IsSM (bit 1).
    is_sm: bool,
    link: PortLink,
    /// P_Keys in wire order, 2 bytes each.
    pkeys: Vec<u8>,
    /// Switch: the tables of this input port by output port 0..=nports.
    /// CA: one table.
    sl2vl: Vec<[u8; 8]>,
    /// 64 entries × (VL, weight).
    vlarb_high: [u8; 128],
    vlarb_low: [u8; 128],
    ext_port_info: [u8; 64],
    /// M_Key state as last written by a Set (CA ports, switch port 0).
    m_key: u64,
    m_key_prot: u8,
    m_key_lease: u16,
    m_key_viols: u16,
}

impl PortSoft {
    fn new(link: PortLink, pkey_entries: u16, sl2vl_tables: usize) -> Self {
        let mut pkeys = vec![0u8; usize::from(pkey_entries) * 2];
        if pkeys.len() >= 2 {
            // ibsim `init_ports`: entry 0 = 0xFFFF (default full member).
            pkeys[0] = 0xFF;
            pkeys[1] = 0xFF;
        }
        let vlarb = |t: &[(u8, u8)]| {
            let mut a = [0u8; 128];
            for (i, (vl, w)) in t.iter().enumerate() {
                a[2 * i] = *vl;
                a[2 * i + 1] = *w;
            }
            a
        };
        PortSoft {
            lid: 0,
            master_sm_lid: 0,
            lmc: 0,
            master_sm_sl: 0,
            hoq_life: 0,
            // ibsim `set_portinfo`: OperationalVLs starts at VLCap (4 in
            // every template).
            op_vls: 4,
            // ibsim keeps its own subnet prefix, 0 until set (observed
            // GidPrefix 0 on every port).
            gid_prefix: 0,
            is_sm: false,
            link,
            pkeys,
            sl2vl: vec![DEFAULT_SL2VL; sl2vl_tables],
            vlarb_high: vlarb(&VLARB_HIGH_DEFAULT),
            vlarb_low: vlarb(&VLARB_LOW_DEFAULT),
            ext_port_info: [0; 64],
            m_key: 0,
            m_key_prot: 0,
            m_key_lease: 0,
            m_key_viols: 0,
        }
    }
}

/// The RTL fabric with a [`NodeSma`] on every node: the fabric every
/// tool builds.
pub type Net = crate::model::net::Net<NodeSma>;

/// The SMA of one node. See the module documentation.
pub struct NodeSma {
    id: NodeIdentity,
    /// Index = port number (0..=nports; index 0 unused on a CA).
    ports: Vec<PortSoft>,
    lft: Vec<u8>,
    lft_top: u16,
    life_time: u8,
    /// MFT port masks, wire order: (block · masks + position) · 64 bytes.
    mft: Vec<u8>,
    mft_masks: u32,
}

impl NodeSma {
    pub fn new(id: NodeIdentity) -> Self {
        let sw = id.is_switch();
        let n = usize::from(id.nports);
        let ports = (0..=n)
            .map(|p| {
                let link = match p {
                    0 => PortLink::default(),
                    _ => id.links.get(p - 1).copied().unwrap_or_default(),
                };
                let pkey_entries = if sw && p != 0 {
                    PARTITION_ENFORCEMENT_CAP
                } else {
                    id.partition_cap()
                };
                PortSoft::new(link, pkey_entries, if sw { n + 1 } else { 1 })
            })
            .collect();
        // ibsim `new_switch`: numportmask = (nports + 16) / 16.
        let mft_masks = if sw {
            (u32::from(id.nports) + MCAST_MASK_PORTS as u32) / MCAST_MASK_PORTS as u32
        } else {
            0
        };
        let mut sma = NodeSma {
            lft: if sw {
                vec![0xFF; usize::from(id.lft_depth)]
            } else {
                Vec::new()
            },
            lft_top: 0,
            life_time: 0,
            mft: vec![0; (MCAST_BLOCKS * mft_masks) as usize * 64],
            mft_masks,
            ports,
            id,
        };
        if sma.id.dialect == Dialect::Hca {
            for ps in &mut sma.ports {
                ps.gid_prefix = DEFAULT_GID_PREFIX;
            }
            return sma;
        }
        // M_KeyLeasePeriod starts as ibsim's template has it (0x0FF9 s);
        // `init_writes` puts it into the hardware.
        for p in 0..=n as u8 {
            if sma.mkey_port(p) {
                let t = sma.port_template(p, true);
                sma.ports[usize::from(p)].m_key_lease = u16::from_be_bytes([t[26], t[27]]);
            }
        }
        sma
    }

    pub fn identity(&self) -> &NodeIdentity {
        &self.id
    }

    /// The writes that bring hardware just out of reset to the SMA's
    /// initial state: LIDs, LMC, MasterSMLID/SL 0 on the LID ports,
    /// LinearFDBTop 0 and every LFT block that is not all 0xFF (ibsim's
    /// initial entry). A switch's LFT needs no write for 0xFF: after reset
    /// no word is valid, and an invalid word reads 0xFF (`rtl/sw_lft.sv`,
    /// `vld_q`).
    pub fn init_writes(&self) -> Vec<HwWrite> {
        let mut w = Vec::new();
        for p in self.lid_ports() {
            w.push(HwWrite::PortLid { port: p, lid: 0 });
            w.push(HwWrite::PortLmc { port: p, lmc: 0 });
            w.push(HwWrite::MasterSmLid { port: p, lid: 0 });
            w.push(HwWrite::MasterSmSl { port: p, sl: 0 });
            let ps = &self.ports[usize::from(p)];
            w.push(HwWrite::Mkey {
                port: p,
                key: ps.m_key,
                prot: ps.m_key_prot,
                lease: ps.m_key_lease,
            });
        }
        if self.id.is_switch() {
            w.push(HwWrite::LinearFdbTop(self.lft_top));
            for (b, chunk) in self.lft.chunks_exact(64).enumerate() {
                if chunk.iter().all(|&e| e == 0xFF) {
                    continue;
                }
                let mut entries = [0u8; 64];
                entries.copy_from_slice(chunk);
                w.push(HwWrite::LftBlock {
                    block: b as u16,
                    entries,
                });
            }
        }
        w
    }

    /// Ports whose LID/LMC/MasterSMLID/SL live in hardware.
    fn lid_ports(&self) -> std::ops::RangeInclusive<u8> {
        if self.id.is_switch() {
            0..=0
        } else {
            1..=self.id.nports
        }
    }

    /// Active width and speeds of `port` as PortInfo reports them.
    pub fn port_link(&self, port: u8) -> Option<PortLink> {
        self.ports.get(usize::from(port)).map(|p| p.link)
    }

    /// NodeInfo.NodeGUID becomes `guid` (ibsim's console `Guid "node"`);
    /// a CA's port GUIDs keep their values, as in ibsim.
    pub fn set_node_guid(&mut self, guid: u64) {
        if !self.id.is_switch() && self.id.port_guids.is_empty() {
            self.id.port_guids = (1..=self.id.nports).map(|p| self.id.port_guid(p)).collect();
        }
        self.id.node_guid = guid;
    }

    /// CA port `port`'s PortGUID becomes `guid` (`Guid "node"[port]`);
    /// false for a switch or a port the node does not have.
    pub fn set_port_guid(&mut self, port: u8, guid: u64) -> bool {
        if self.id.is_switch() || port == 0 || port > self.id.nports {
            return false;
        }
        if self.id.port_guids.is_empty() {
            self.id.port_guids = (1..=self.id.nports).map(|p| self.id.port_guid(p)).collect();
        }
        self.id.port_guids[usize::from(port) - 1] = guid;
        true
    }

    /// Base LID (and LMC, if given) of a CA port or switch port 0 become
    /// `lid`/`lmc`, outside any SMP (ibsim's console `Baselid`); the
    /// hardware writes that carry it out. None for a port without a LID.
    pub fn set_port_lid(&mut self, port: u8, lid: u16, lmc: Option<u8>) -> Option<Vec<HwWrite>> {
        if !self.lid_ports().contains(&port) {
            return None;
        }
        let ps = &mut self.ports[usize::from(port)];
        ps.lid = lid;
        let mut w = vec![HwWrite::PortLid { port, lid }];
        if let Some(lmc) = lmc {
            ps.lmc = lmc & 7;
            w.push(HwWrite::PortLmc { port, lmc: lmc & 7 });
        }
        Some(w)
    }

    /// LID, LMC and MasterSMLID of `port` back to 0 (ibsim `reset_port`,
    /// the console's `Clear`); the hardware writes. None for a switch's
    /// external port (its state is the link's).
    pub fn reset_port_lids(&mut self, port: u8) -> Option<Vec<HwWrite>> {
        if !self.lid_ports().contains(&port) {
            return None;
        }
        let ps = &mut self.ports[usize::from(port)];
        ps.lid = 0;
        ps.lmc = 0;
        ps.master_sm_lid = 0;
        Some(vec![
            HwWrite::PortLid { port, lid: 0 },
            HwWrite::PortLmc { port, lmc: 0 },
            HwWrite::MasterSmLid { port, lid: 0 },
        ])
    }

    /// The LFT as the SMA holds it (entry = egress port, 0xFF = none).
    pub fn lft(&self) -> &[u8] {
        &self.lft
    }

    /// Base LID stored for `port`.
    pub fn port_lid(&self, port: u8) -> Option<u16> {
        self.ports.get(usize::from(port)).map(|p| p.lid)
    }

    /// LMC stored for `port`.
    pub fn port_lmc(&self, port: u8) -> Option<u8> {
        self.ports.get(usize::from(port)).map(|p| p.lmc)
    }

    /// The VL a CA port's SL2VL table gives `sl` (the table the SM
    /// programs; ibsim's default maps SL n to VL n). Switch ports: the
    /// table to port 0.
    pub fn sl_to_vl(&self, port: u8, sl: u8) -> u8 {
        let table = self
            .ports
            .get(usize::from(port))
            .and_then(|p| p.sl2vl.first())
            .copied()
            .unwrap_or(DEFAULT_SL2VL);
        let b = table[usize::from(sl & 0xF) / 2];
        if sl & 1 == 0 {
            b >> 4
        } else {
            b & 0xF
        }
    }

    /// MasterSMLID stored for `port`.
    pub fn master_sm_lid(&self, port: u8) -> Option<u16> {
        self.ports.get(usize::from(port)).map(|p| p.master_sm_lid)
    }

    /// Trap 128 (link state of a switch port changed; ibspec §8 Notice):
    /// a LID-routed SubnTrap(Notice) with TID `tid`, issued by port 0's
    /// LID. None on a CA or while port 0 has no LID or no MasterSMLID
    /// (ibsim sends traps only then).
    pub fn trap128(&self, tid: u64) -> Option<Mad> {
        if !self.id.is_switch() {
            return None;
        }
        let lid = self.port_lid(0).filter(|&l| l != 0)?;
        self.master_sm_lid(0).filter(|&l| l != 0)?;
        let mut m = mad::request(CLASS_SUBN_LID, METHOD_TRAP, ATTR_NOTICE, 0, tid);
        let d = mad::data_mut(&mut m);
        d[0] = 0x80 | 1; // IsGeneric, Type 1 (urgent)
        d[1..4].copy_from_slice(&[0, 0, 2]); // ProducerType: switch
        d[4..6].copy_from_slice(&128u16.to_be_bytes());
        d[6..8].copy_from_slice(&lid.to_be_bytes()); // IssuerLID
        d[10..12].copy_from_slice(&lid.to_be_bytes()); // LIDADDR
        Some(m)
    }

    /// Mark `port` as carrying an SM (PortInfo.CapabilityMask IsSM) or not,
    /// as opening/closing the issm device does. Returns Trap 144 (with TID
    /// `tid`) when the bit changed and the port may send traps (a LID and a
    /// MasterSMLID): ibsim sends it on every IsSM change.
    pub fn set_is_sm(&mut self, port: u8, on: bool, tid: u64) -> Option<Mad> {
        let lid_port = self.lid_ports().contains(&port);
        let ps = self.ports.get_mut(usize::from(port)).filter(|_| lid_port)?;
        if ps.is_sm == on {
            return None;
        }
        ps.is_sm = on;
        self.trap144(port, tid)
    }

    /// Whether `port` carries an SM (IsSM).
    pub fn is_sm(&self, port: u8) -> bool {
        self.ports.get(usize::from(port)).is_some_and(|p| p.is_sm)
    }

    /// Trap 144 (capability change; ibspec §8 Notice) of `port`: a
    /// LID-routed SubnTrap(Notice) with the port's new CapabilityMask and
    /// CapabilityMask2, issued by the port's LID. None while the port has
    /// no LID or no MasterSMLID.
    pub fn trap144(&self, port: u8, tid: u64) -> Option<Mad> {
        let lid = self.port_lid(port).filter(|&l| l != 0)?;
        self.master_sm_lid(port).filter(|&l| l != 0)?;
        let mut pi = PortInfo::decode(&self.port_template(port, true)).ok()?;
        if self.is_sm(port) {
            pi.capability_mask |= CAP_IS_SM;
        }
        let mut m = mad::request(CLASS_SUBN_LID, METHOD_TRAP, ATTR_NOTICE, 0, tid);
        let d = mad::data_mut(&mut m);
        d[0] = 0x80 | 4; // IsGeneric, Type 4 (informational)
        let producer: u8 = if self.id.is_switch() { 2 } else { 1 };
        d[1..4].copy_from_slice(&[0, 0, producer]);
        d[4..6].copy_from_slice(&144u16.to_be_bytes());
        d[6..8].copy_from_slice(&lid.to_be_bytes()); // IssuerLID
        d[12..14].copy_from_slice(&lid.to_be_bytes());
        d[16..20].copy_from_slice(&pi.capability_mask.to_be_bytes());
        // Change flags 20–21: none of LSE/LWE/NodeDesc (a CapabilityMask change).
        d[22..24].copy_from_slice(&pi.capability_mask2.to_be_bytes());
        Some(m)
    }

    /// Trap 257 (bad P_Key) or 258 (bad Q_Key) of `port` (ibspec §8
    /// Notice; IBA 14.2.5.1): a LID-routed SubnTrap(Notice), generic, type 2
    /// (security), producer = the node type, IssuerLID = the port's LID,
    /// DataDetails from the discarded packet `v`. None while the port has
    /// no LID or no MasterSMLID, or for another trap number.
    pub fn trap_key_violation(
        &self,
        port: u8,
        trap: u16,
        v: &KeyViolation,
        tid: u64,
    ) -> Option<Mad> {
        if trap != TRAP_BAD_P_KEY && trap != TRAP_BAD_Q_KEY {
            return None;
        }
        let lid = self.port_lid(port).filter(|&l| l != 0)?;
        self.master_sm_lid(port).filter(|&l| l != 0)?;
        let mut m = mad::request(CLASS_SUBN_LID, METHOD_TRAP, ATTR_NOTICE, 0, tid);
        let d = mad::data_mut(&mut m);
        d[0] = 0x80 | 2; // IsGeneric, Type 2 (security)
        let producer: u8 = if self.id.is_switch() { 2 } else { 1 };
        d[1..4].copy_from_slice(&[0, 0, producer]);
        d[4..6].copy_from_slice(&trap.to_be_bytes());
        d[6..8].copy_from_slice(&lid.to_be_bytes()); // IssuerLID
        v.encode(&mut d[12..60]);
        Some(m)
    }

    /// The neighbour's side of a LinkWidth/Speed change
    /// ([`HwWrite::LinkActive`] of the other end): set this port's active
    /// values. Ports out of range are ignored.
    pub fn set_link_active(&mut self, port: u8, width: u8, speed: u8, speed_ext: u8) {
        if port == 0 || port > self.id.nports {
            return;
        }
        if let Some(p) = self.ports.get_mut(usize::from(port)) {
            p.link.width_active = width;
            p.link.speed_active = speed;
            p.link.speed_ext_active = speed_ext;
        }
    }

    /// The response to one SMP that arrived on `arrival_port` (switch:
    /// 0..=nports, CA: 1..=nports; a LID-routed SMP at a switch is answered
    /// as arrived on port 0, as ibsim does), or `None` when there is none:
    /// not an SM class, BaseVersion ≠ 1 or ClassVersion > 2 (ibsim
    /// `decode_sim_MAD`), a response, TrapRepress, SMInfo (the SM's), or an
    /// arrival port the node does not have.
    pub fn handle(&mut self, req: &Mad, arrival_port: u8, hw: &mut dyn NodeHw) -> Option<Mad> {
        self.handle_smp(req, arrival_port, false, hw)
    }

    /// [`handle`](Self::handle) for a request the hardware's M_Key check
    /// passed; `mkey_mask`: a Get with a bad M_Key at protect 1, whose
    /// PortInfo M_Key reads 0 (the check's `mkey_mask`). A request the check
    /// flagged as a violation is not answered at all: the caller sends
    /// [`trap256`](Self::trap256) instead.
    pub fn handle_smp(
        &mut self,
        req: &Mad,
        arrival_port: u8,
        mkey_mask: bool,
        hw: &mut dyn NodeHw,
    ) -> Option<Mad> {
        let hca = self.id.dialect == Dialect::Hca;
        let class_version = req[mad::off::CLASS_VERSION];
        if req[mad::off::BASE_VERSION] != BASE_VERSION || (!hca && class_version > 2) {
            return None;
        }
        let class = mad::class(req);
        if class != CLASS_SUBN_LID && class != CLASS_SUBN_DR {
            return None;
        }
        let method = mad::method(req);
        if method & METHOD_RESP_BIT != 0 || method == METHOD_TRAP_REPRESS {
            return None;
        }
        if hca && class_version != 1 {
            let mut resp = *req;
            mad::make_response(&mut resp, STATUS_BAD_VERSION);
            return Some(resp);
        }
        let valid_arrival = if self.id.is_switch() {
            arrival_port <= self.id.nports
        } else {
            (1..=self.id.nports).contains(&arrival_port)
        };
        if !valid_arrival {
            return None;
        }
        let attr = mad::attr_id(req);
        if attr == ATTR_SM_INFO {
            return None;
        }
        // ibsim delivers a LID-routed SMP for a switch to port 0, the port
        // that owns the LID: NodeInfo/PortInfo LocalPortNum read 0 (observed
        // `smpquery nodeinfo 3` → LocalPort 0 after OpenSM), whatever
        // external port it came in by.
        let arrival_port = if self.id.is_switch() && class == CLASS_SUBN_LID {
            0
        } else {
            arrival_port
        };
        let mut data = [0u8; 64];
        data.copy_from_slice(mad::data(req));
        let read_only_attr = matches!(attr, ATTR_NODE_DESC | ATTR_NODE_INFO | ATTR_GUID_INFO);
        let status = if method != METHOD_GET && method != METHOD_SET {
            STATUS_METHOD_UNSUPPORTED
        } else if hca && method == METHOD_SET && read_only_attr {
            // qib has no Set handler for these: the SMP goes back as it
            // came, with 0x000C.
            STATUS_ATTR_UNSUPPORTED
        } else {
            let q = Query {
                set: method == METHOD_SET,
                modifier: mad::attr_mod(req),
                arrival: arrival_port,
                mkey_mask,
            };
            match attr {
                ATTR_NODE_DESC => self.node_desc(q, &mut data),
                ATTR_NODE_INFO => self.node_info(q, &mut data),
                ATTR_SWITCH_INFO => self.switch_info(q, &mut data, hw),
                ATTR_GUID_INFO => self.guid_info(q, &mut data),
                ATTR_PORT_INFO => self.port_info(q, &mut data, hw),
                ATTR_P_KEY_TABLE => self.pkey_table(q, &mut data, hw),
                ATTR_SL_TO_VL_TABLE => self.sl2vl(q, &mut data),
                ATTR_VL_ARB_TABLE => self.vlarb(q, &mut data),
                ATTR_LINEAR_FWD_TABLE => self.lft_block(q, &mut data, hw),
                ATTR_MCAST_FWD_TABLE => self.mft_block(q, &mut data),
                ATTR_MLNX_EXT_PORT_INFO => self.ext_port_info(q, &mut data),
                _ => STATUS_ATTR_UNSUPPORTED,
            }
        };
        let mut resp = *req;
        mad::data_mut(&mut resp).copy_from_slice(&data);
        mad::make_response(&mut resp, status);
        Some(resp)
    }

    // ---- attributes; each returns the status and leaves `data` as the
    // ---- response's SMP data (unchanged on an early error, as ibsim).

    fn node_desc(&self, q: Query, data: &mut [u8; 64]) -> u16 {
        *data = self.id.description.encode();
        read_only(q)
    }

    fn node_info(&self, q: Query, data: &mut [u8; 64]) -> u16 {
        *data = NodeInfo {
            base_version: 1,
            class_version: 1,
            node_type: self.id.node_type(),
            num_ports: self.id.nports,
            sys_guid: self.id.sys_image_guid,
            node_guid: self.id.node_guid,
            port_guid: self.id.port_guid(q.arrival),
            partition_cap: self.id.partition_cap(),
            device_id: self.id.device_id,
            revision: self.id.revision,
            local_port_num: q.arrival,
            vendor_id: self.id.vendor_id,
        }
        .encode();
        read_only(q)
    }

    fn guid_info(&self, q: Query, data: &mut [u8; 64]) -> u16 {
        data.fill(0);
        if q.modifier == 0 {
            data[..8].copy_from_slice(&self.id.port_guid(q.arrival).to_be_bytes());
        }
        read_only(q)
    }

    fn switch_info(&mut self, q: Query, data: &mut [u8; 64], hw: &mut dyn NodeHw) -> u16 {
        if !self.id.is_switch() {
            return STATUS_ATTR_UNSUPPORTED;
        }
        let mut cleared = false;
        if q.set {
            if data[11] & 0x04 != 0 {
                hw.write(HwWrite::ClearPortStateChange);
                cleared = true;
            }
            self.lft_top = u16::from_be_bytes([data[6], data[7]]);
            hw.write(HwWrite::LinearFdbTop(self.lft_top));
            self.life_time = data[11] >> 3;
        }
        *data = SWITCHINFO;
        data[0..2].copy_from_slice(&self.id.lft_depth.to_be_bytes());
        data[4..6].copy_from_slice(&MCAST_FDB_CAP.to_be_bytes());
        data[6..8].copy_from_slice(&self.lft_top.to_be_bytes());
        let psc = !cleared && hw.port_state_change();
        data[11] = (self.life_time << 3) | (u8::from(psc) << 2) | (data[11] & 0x03);
        if let Some(e) = self.id.enhanced_port0 {
            data[16] = (data[16] & !0x08) | (u8::from(e) << 3);
        }
        0
    }

    fn port_info(&mut self, q: Query, data: &mut [u8; 64], hw: &mut dyn NodeHw) -> u16 {
        let Some(port) = self.port_of(q.modifier & 0x7FFF_FFFF, q.arrival) else {
            return STATUS_INVALID_FIELD;
        };
        let mut state = None;
        let mut status = STATUS_OK;
        // a Set writing M_KeyViolations 0 clears it
        let clears_viols = q.set && data[44] == 0 && data[45] == 0;
        if q.set {
            if !self.id.is_switch() && port != q.arrival {
                // ibsim: a CA or router may only Set the port it is asked on.
                return STATUS_INVALID_FIELD;
            }
            match self.set_port_info(port, data, hw) {
                Ok(s) => state = s,
                // qib answers a refused Set with the current PortInfo
                Err(st) if self.id.dialect == Dialect::Hca => status = st,
                Err(st) => return st,
            }
        }
        let applied = q.set && status == STATUS_OK;
        *data = self.port_info_bytes(port, q.arrival, hw, state);
        if self.mkey_port(port) {
            // M_Key fields (CA ports, switch port 0): protect bits and
            // violations from the hardware, except right after a Set (its
            // register writes are not visible yet).
            let ps = &self.ports[usize::from(port)];
            let (prot, viols) = match hw.mkey_state(port) {
                Some((p, v)) if !applied => (p, v),
                Some((_, v)) => (ps.m_key_prot, if clears_viols { 0 } else { v }),
                None => (ps.m_key_prot, ps.m_key_viols),
            };
            let key = if q.mkey_mask { 0 } else { ps.m_key };
            data[0..8].copy_from_slice(&key.to_be_bytes());
            data[26..28].copy_from_slice(&ps.m_key_lease.to_be_bytes());
            data[34] = (data[34] & 0x3F) | (prot << 6);
            data[44..46].copy_from_slice(&viols.to_be_bytes());
        }
        status
    }

    /// Ports that hold an M_Key: every CA port, switch port 0.
    fn mkey_port(&self, port: u8) -> bool {
        (!self.id.is_switch() || port == 0) && usize::from(port) < self.ports.len()
    }

    /// Trap 256 (bad M_Key) for the request `req` that the hardware's M_Key
    /// check dropped at `port` (a CA port or switch port 0), with TID `tid`;
    /// None while the port has no LID or no MasterSMLID (traps need both).
    pub fn trap256(&self, req: &Mad, port: u8, tid: u64) -> Option<Mad> {
        let lid = self.port_lid(port).filter(|&l| l != 0)?;
        self.master_sm_lid(port).filter(|&l| l != 0)?;
        let producer: u8 = if self.id.is_switch() { 2 } else { 1 };
        Some(mad::trap256(req, lid, producer, tid))
    }

    /// The port a PortInfo-style modifier names: `None` above NumPorts;
    /// 0 on a CA means the arrival port.
    fn port_of(&self, modifier: u32, arrival: u8) -> Option<u8> {
        let p = u8::try_from(modifier)
            .ok()
            .filter(|p| *p <= self.id.nports)?;
        Some(if p == 0 && !self.id.is_switch() {
            arrival
        } else {
            p
        })
    }

    /// ibsim `do_portinfo` Set (module documentation). Returns the PortState
    /// the response must show when this Set changed it (the hardware may not
    /// show a write yet), or the error status.
    fn set_port_info(
        &mut self,
        port: u8,
        data: &[u8; 64],
        hw: &mut dyn NodeHw,
    ) -> Result<Option<u8>, u16> {
        // 64 bytes always decode.
        let new = PortInfo::decode(data).unwrap_or_default();
        let is_switch = self.id.is_switch();
        // PortPhysicalState as it reads now: a Set may leave it (0, or the
        // value it reads, as an SM echoing a Get writes it), or ask for
        // Polling or Disabled, nothing else (IBA PortInfo
        // PortPhysicalState); nothing is applied then.
        let phys_now = phys_state(hw, is_switch, port);
        if !matches!(
            new.port_phys_state,
            PHYS_STATE_NO_CHANGE | PHYS_STATE_POLLING | PHYS_STATE_DISABLED
        ) && new.port_phys_state != phys_now
        {
            return Err(STATUS_INVALID_FIELD);
        }
        let hca = self.id.dialect == Dialect::Hca;
        if hca {
            hca_check(&new, hw.port_state(port))?;
        }
        let lid_port = !is_switch || port == 0;
        let ps = self
            .ports
            .get_mut(usize::from(port))
            .ok_or(STATUS_INVALID_FIELD)?;
        ps.lid = new.lid;
        ps.master_sm_lid = new.master_sm_lid;
        ps.lmc = new.lmc;
        ps.master_sm_sl = new.master_sm_sl;
        ps.hoq_life = new.hoq_life;
        if lid_port {
            ps.m_key = new.m_key;
            ps.m_key_prot = new.m_key_protect_bits;
            ps.m_key_lease = new.m_key_lease_period;
            hw.write(HwWrite::Mkey {
                port,
                key: new.m_key,
                prot: new.m_key_protect_bits,
                lease: new.m_key_lease_period,
            });
            // qib subn_set_portinfo: writing 0 clears M_KeyViolations; any
            // other value leaves the count alone.
            if new.m_key_violations == 0 {
                ps.m_key_viols = 0;
                hw.write(HwWrite::MkeyViolations { port, value: 0 });
            }
            hw.write(HwWrite::PortLid { port, lid: new.lid });
            hw.write(HwWrite::PortLmc { port, lmc: new.lmc });
            hw.write(HwWrite::MasterSmLid {
                port,
                lid: new.master_sm_lid,
            });
            hw.write(HwWrite::MasterSmSl {
                port,
                sl: new.master_sm_sl,
            });
        }
        // ibsim stores any non-zero PortPhysicalState; here it reads back
        // from the hardware's link, so only a change is passed on (an SM
        // echoing the LinkUp it read writes nothing).
        if new.port_phys_state != PHYS_STATE_NO_CHANGE && new.port_phys_state != phys_now {
            hw.write(HwWrite::PortPhysState {
                port,
                state: new.port_phys_state,
            });
        }

        let neighbour = if is_switch && port == 0 {
            None
        } else {
            hw.neighbour_state(port)
        };
        let r = new.port_state;
        let mut state = None;
        // Whether the port has a link (width and speed writes act then).
        let connected = if hca {
            hw.link_up(port)
        } else {
            neighbour.is_some()
        };
        if hca {
            // Checked by `hca_check`: one step from the port's own state.
            if r == PORT_STATE_DOWN {
                hw.write(HwWrite::RetrainLink { port });
                state = Some(PORT_STATE_INIT);
            } else if r > PORT_STATE_INIT {
                hw.write(HwWrite::PortState { port, state: r });
                state = Some(r);
            }
        } else {
            match neighbour {
                Some(remote) if r != PORT_STATE_NO_CHANGE => {
                    if r == PORT_STATE_DOWN {
                        hw.write(HwWrite::RetrainLink { port });
                        state = Some(PORT_STATE_INIT);
                    } else if r > PORT_STATE_INIT {
                        let own = i16::from(hw.port_state(port));
                        let (r16, remote) = (i16::from(r), i16::from(remote));
                        if (remote - r16).abs() <= 1 && (own - r16).abs() == 1 {
                            hw.write(HwWrite::PortState { port, state: r });
                            state = Some(r);
                        } else {
                            return Err(STATUS_INVALID_FIELD);
                        }
                    }
                }
                None if r > PORT_STATE_DOWN => return Err(STATUS_INVALID_FIELD),
                _ => {}
            }
        }

        if new.operational_vls > new.vl_cap {
            return Err(STATUS_INVALID_FIELD);
        }
        ps.op_vls = new.operational_vls;
        ps.gid_prefix = new.gid_prefix;

        if r == PORT_STATE_NO_CHANGE && connected {
            let v12 = self.id.ibsim == IbsimVersion::V0_12;
            let mut touched = false;
            if let Some(a) = speed_from_enabled(new.link_speed_enabled) {
                ps.link.speed_active = a;
                ps.link.speed_enabled = new.link_speed_enabled;
                touched = true;
            }
            if let Some(a) = speed_ext_from_enabled(new.link_speed_ext_enabled, v12) {
                ps.link.speed_ext_active = a;
                ps.link.speed_ext_enabled = new.link_speed_ext_enabled;
                touched = true;
            }
            if let Some(a) = width_from_enabled(new.link_width_enabled) {
                ps.link.width_active = a;
                ps.link.width_enabled = new.link_width_enabled;
                touched = true;
            }
            if touched {
                hw.write(HwWrite::LinkActive {
                    port,
                    width: ps.link.width_active,
                    speed: ps.link.speed_active,
                    speed_ext: ps.link.speed_ext_active,
                });
            }
        }
        Ok(state)
    }

    /// ibsim's PortInfo template of `port` with the link up or down.
    fn port_template(&self, port: u8, up: bool) -> [u8; 64] {
        let sw = self.id.is_switch();
        let port0 = sw && port == 0;
        let mut t = match (sw, port0, up || port0) {
            (true, true, _) => SMAPORT,
            (true, false, true) => SWPORT,
            (true, false, false) => SWPORT_DOWN,
            (false, _, true) => HCAPORT,
            (false, _, false) => HCAPORT_DOWN,
        };
        if self.id.ibsim == IbsimVersion::V0_10 {
            if !sw && up {
                // 0.10: IsVendorClassSupported (bit 20) still set on CAs.
                t[21] |= 0x10;
            }
            // 0.10: no IsLinkSpeedNDRSupported in CapabilityMask2.
            t[60] &= !0x04;
        }
        t
    }

    /// PortInfo of `port` as ibsim's `update_portinfo` + `do_portinfo`
    /// build it.
    fn port_info_bytes(
        &self,
        port: u8,
        arrival: u8,
        hw: &dyn NodeHw,
        state: Option<u8>,
    ) -> [u8; 64] {
        let sw = self.id.is_switch();
        let up = (sw && port == 0) || hw.link_up(port);
        let v10 = self.id.ibsim == IbsimVersion::V0_10;
        let t = self.port_template(port, up);
        let default_soft;
        let ps = match self.ports.get(usize::from(port)) {
            Some(p) => p,
            None => {
                default_soft = PortSoft::new(PortLink::default(), 0, 0);
                &default_soft
            }
        };
        let mut pi = PortInfo::decode(&t).unwrap_or_default();
        // do_portinfo overwrites update_portinfo's LocalPortNum with the
        // arrival port.
        pi.local_port_num = arrival;
        pi.gid_prefix = ps.gid_prefix;
        pi.lid = ps.lid;
        pi.master_sm_lid = ps.master_sm_lid;
        pi.operational_vls = ps.op_vls;
        pi.link_width_enabled = ps.link.width_enabled;
        pi.link_width_supported = LINK_WIDTH_SUPPORTED;
        pi.link_width_active = ps.link.width_active;
        pi.link_speed_enabled = ps.link.speed_enabled;
        pi.link_speed_supported = LINK_SPEED_SUPPORTED;
        pi.link_speed_active = ps.link.speed_active;
        pi.lmc = ps.lmc;
        if ps.is_sm {
            pi.capability_mask |= CAP_IS_SM;
        }
        pi.master_sm_sl = ps.master_sm_sl;
        pi.hoq_life = ps.hoq_life;
        pi.port_phys_state = phys_state(hw, sw, port);
        pi.port_state = state.unwrap_or_else(|| hw.port_state(port));
        if ps.link.speed_ext_active != 0 {
            pi.link_speed_ext_enabled = ps.link.speed_ext_enabled;
            pi.link_speed_ext_supported = if v10 { 7 } else { 15 };
            pi.link_speed_ext_active = ps.link.speed_ext_active;
        } else {
            pi.link_speed_ext_enabled = 0;
            pi.link_speed_ext_supported = 0;
            pi.link_speed_ext_active = 0;
        }
        pi.encode()
    }

    fn pkey_table(&mut self, q: Query, data: &mut [u8; 64], hw: &mut dyn NodeHw) -> u16 {
        let sw = self.id.is_switch();
        let block = (q.modifier & 0xFFFF) as usize;
        let port = if sw {
            match u8::try_from(q.modifier >> 16) {
                Ok(p) if p <= self.id.nports => p,
                _ => return STATUS_INVALID_FIELD,
            }
        } else {
            q.arrival
        };
        let Some(ps) = self.ports.get_mut(usize::from(port)) else {
            return STATUS_INVALID_FIELD;
        };
        let size = ps.pkeys.len() / 2;
        if block * 32 >= size {
            return STATUS_INVALID_FIELD;
        }
        let n = (size - block * 32).min(32) * 2;
        let table = &mut ps.pkeys[block * 64..block * 64 + n];
        if q.set {
            table.copy_from_slice(&data[..n]);
            // The RTL's table (gsi_rx_check) of a port with a QP1 path.
            if !sw || port == 0 {
                let mut keys = [0u16; 32];
                for (k, c) in keys.iter_mut().zip(table.chunks(2)) {
                    *k = u16::from_be_bytes([c[0], c[1]]);
                }
                hw.write(HwWrite::PkeyBlock {
                    port,
                    block: block as u16,
                    keys,
                    n: (n / 2) as u8,
                });
            }
        } else {
            data.fill(0);
            data[..n].copy_from_slice(table);
        }
        0
    }

    fn sl2vl(&mut self, q: Query, data: &mut [u8; 64]) -> u16 {
        let nports = self.id.nports;
        let (inp, out) = if self.id.is_switch() {
            let inp = ((q.modifier >> 8) & 0xFF) as u8;
            let out = (q.modifier & 0xFF) as u8;
            if inp > nports || out > nports {
                return STATUS_INVALID_FIELD;
            }
            (inp, usize::from(out))
        } else {
            (q.arrival, 0)
        };
        let Some(table) = self
            .ports
            .get_mut(usize::from(inp))
            .and_then(|p| p.sl2vl.get_mut(out))
        else {
            return STATUS_INVALID_FIELD;
        };
        // ibsim copies 8 bytes either way; the other 56 are the request's.
        if q.set {
            table.copy_from_slice(&data[..8]);
        } else {
            data[..8].copy_from_slice(table);
        }
        0
    }

    fn vlarb(&mut self, q: Query, data: &mut [u8; 64]) -> u16 {
        let port = if self.id.is_switch() {
            match u8::try_from(q.modifier & 0xFFFF) {
                Ok(p) if p <= self.id.nports => p,
                _ => return STATUS_INVALID_FIELD,
            }
        } else {
            q.arrival
        };
        // Table 1 Low[0..31], 2 Low[32..63], 3 High[0..31], 4 High[32..63].
        let n = (q.modifier >> 16).wrapping_sub(1);
        if n > 3 {
            return STATUS_INVALID_FIELD;
        }
        let high = n / 2 == 1;
        let upper = n % 2 == 1;
        // VLArbitrationHighCap / LowCap of every ibsim template (bytes 39,
        // 40): 8 entries.
        let t = if self.id.is_switch() { SWPORT } else { HCAPORT };
        let mut size = usize::from(if high { t[39] } else { t[40] });
        if size == 0 || usize::from(upper) > size / 32 {
            return STATUS_INVALID_FIELD;
        }
        if size > 32 && upper {
            size %= 32;
        }
        let size = size.min(32) * 2;
        let Some(ps) = self.ports.get_mut(usize::from(port)) else {
            return STATUS_INVALID_FIELD;
        };
        let table = if high {
            &mut ps.vlarb_high
        } else {
            &mut ps.vlarb_low
        };
        let off = if upper { 64 } else { 0 };
        if q.set {
            table[off..off + size].copy_from_slice(&data[..size]);
        } else {
            data.fill(0);
            data[..size].copy_from_slice(&table[off..off + size]);
        }
        0
    }

    fn lft_block(&mut self, q: Query, data: &mut [u8; 64], hw: &mut dyn NodeHw) -> u16 {
        if !self.id.is_switch() {
            return STATUS_ATTR_UNSUPPORTED;
        }
        let blocks = self.lft.len() / 64;
        let block = match usize::try_from(q.modifier) {
            Ok(b) if b < blocks => b,
            _ => return STATUS_INVALID_FIELD,
        };
        let entries = &mut self.lft[block * 64..block * 64 + 64];
        if q.set {
            entries.copy_from_slice(data);
            hw.write(HwWrite::LftBlock {
                block: block as u16,
                entries: *data,
            });
        }
        data.copy_from_slice(entries);
        0
    }

    fn mft_block(&mut self, q: Query, data: &mut [u8; 64]) -> u16 {
        if !self.id.is_switch() {
            return STATUS_ATTR_UNSUPPORTED;
        }
        let position = q.modifier >> 28;
        let block = q.modifier & 0x1FF;
        if block >= MCAST_BLOCKS || position >= self.mft_masks {
            // ibsim: a zero block, status 0, nothing stored.
            data.fill(0);
            return 0;
        }
        let off = (block * self.mft_masks + position) as usize * 64;
        let Some(entries) = self.mft.get_mut(off..off + 64) else {
            return STATUS_INVALID_FIELD;
        };
        if q.set {
            entries.copy_from_slice(data);
        }
        data.copy_from_slice(entries);
        0
    }

    fn ext_port_info(&mut self, q: Query, data: &mut [u8; 64]) -> u16 {
        // ibsim `do_extportinfo`: no bit-31 mask here.
        let Some(port) = self.port_of(q.modifier, q.arrival) else {
            return STATUS_INVALID_FIELD;
        };
        let Some(ps) = self.ports.get_mut(usize::from(port)) else {
            return STATUS_INVALID_FIELD;
        };
        if q.set {
            ps.ext_port_info = *data;
        } else {
            *data = ps.ext_port_info;
        }
        0
    }
}

/// One request as the attribute handlers see it.
#[derive(Debug, Clone, Copy)]
struct Query {
    set: bool,
    modifier: u32,
    arrival: u8,
    /// PortInfo's M_Key reads 0 (a bad-key Get at protect 1).
    mkey_mask: bool,
}

/// The checks an HCA makes before applying any of a PortInfo Set
/// ([`Dialect::Hca`]): LIDs unicast or 0, PortState one step from `own`,
/// OperationalVLs at most the request's VLCap.
/// Status of a read-only attribute: a Set is answered with the data and
/// 0x0008 (ibsim `do_nodeinfo`, `do_nodedesc`, `do_guidinfo`).
fn read_only(q: Query) -> u16 {
    if q.set {
        STATUS_METHOD_UNSUPPORTED
    } else {
        STATUS_OK
    }
}

/// PortPhysicalState of `port` as the hardware holds it: LinkUp on a
/// switch's port 0; else Disabled after a Set of 3, LinkUp with a link,
/// Polling without.
fn phys_state(hw: &dyn NodeHw, switch: bool, port: u8) -> u8 {
    if switch && port == 0 {
        PHYS_STATE_LINK_UP
    } else if hw.phys_disabled(port) {
        PHYS_STATE_DISABLED
    } else if hw.link_up(port) {
        PHYS_STATE_LINK_UP
    } else {
        PHYS_STATE_POLLING
    }
}

fn hca_check(new: &PortInfo, own: u8) -> Result<(), u16> {
    let unicast = |l: u16| l < 0xC000;
    let state_ok = match new.port_state {
        PORT_STATE_NO_CHANGE | PORT_STATE_DOWN => true,
        PORT_STATE_ARMED => own == PORT_STATE_INIT || own == PORT_STATE_ARMED,
        PORT_STATE_ACTIVE => own == PORT_STATE_ARMED || own == PORT_STATE_ACTIVE,
        _ => false,
    };
    if unicast(new.lid)
        && unicast(new.master_sm_lid)
        && state_ok
        && new.operational_vls <= new.vl_cap
    {
        Ok(())
    } else {
        Err(STATUS_INVALID_FIELD)
    }
}

/// LinkSpeedActive for a LinkSpeedEnabled write (ibsim `do_portinfo`);
/// `None` = not a value ibsim acts on.
fn speed_from_enabled(v: u8) -> Option<u8> {
    match v {
        1 => Some(speed::SDR),
        3 => Some(speed::DDR),
        5 | 7 => Some(speed::QDR),
        _ => None,
    }
}

/// LinkSpeedExtActive for a LinkSpeedExtEnabled write; NDR only in v0.12.
fn speed_ext_from_enabled(v: u8, ndr: bool) -> Option<u8> {
    match v {
        1 => Some(1),
        2 | 3 => Some(2),
        4..=7 => Some(4),
        8..=15 if ndr => Some(8),
        _ => None,
    }
}

/// LinkWidthActive for a LinkWidthEnabled write (ibsim `do_portinfo`).
fn width_from_enabled(v: u8) -> Option<u8> {
    match v {
        1 => Some(width::W1X),
        2 | 3 | 18 | 19 => Some(width::W4X),
        4..=7 | 20..=23 => Some(width::W8X),
        8..=15 | 24..=31 => Some(width::W12X),
        16 | 17 => Some(width::W2X),
        _ => None,
    }
}

impl NodeAgent for NodeSma {
    fn for_node(node: &TNode, topo: &Topology, lft_depth: u16) -> Result<Self> {
        let id = NodeIdentity::from_topology(node, topo, lft_depth)
            .with_context(|| format!("SMA identity of {:?}", node.id))?;
        Ok(NodeSma::new(id))
    }
    fn init_writes(&self) -> Vec<HwWrite> {
        NodeSma::init_writes(self)
    }
    fn handle_smp(
        &mut self,
        req: &Mad,
        arrival_port: u8,
        mkey_mask: bool,
        hw: &mut dyn NodeHw,
    ) -> Option<Mad> {
        NodeSma::handle_smp(self, req, arrival_port, mkey_mask, hw)
    }
    fn set_link_active(&mut self, port: u8, width: u8, speed: u8, speed_ext: u8) {
        NodeSma::set_link_active(self, port, width, speed, speed_ext);
    }
    fn set_is_sm(&mut self, port: u8, on: bool, tid: u64) -> Option<Mad> {
        NodeSma::set_is_sm(self, port, on, tid)
    }
    fn trap128(&self, tid: u64) -> Option<Mad> {
        NodeSma::trap128(self, tid)
    }
    fn trap256(&self, req: &Mad, port: u8, tid: u64) -> Option<Mad> {
        NodeSma::trap256(self, req, port, tid)
    }
    fn trap_key_violation(&self, port: u8, trap: u16, v: &KeyViolation, tid: u64) -> Option<Mad> {
        NodeSma::trap_key_violation(self, port, trap, v, tid)
    }
}

#[cfg(test)]
mod tests {
    //! Expected bytes are written by hand: either ibsim 0.10's answers for
    //! tests/topologies/net.2sw2path4hca as `smpdump -D` printed them (16-bit
    //! groups, big-endian, copied verbatim), or values placed at the byte
    //! offsets of ibspec §8.
    use super::*;
    use std::path::PathBuf;

    /// 64 bytes from `smpdump`-style 16-bit hex groups; missing groups are 0.
    fn hex(s: &str) -> [u8; 64] {
        let mut d = [0u8; 64];
        for (i, g) in s.split_whitespace().enumerate() {
            let v = u16::from_str_radix(g, 16).expect("test hex");
            d[2 * i..2 * i + 2].copy_from_slice(&v.to_be_bytes());
        }
        d
    }

    #[derive(Debug)]
    struct FakeHw {
        state: Vec<u8>,
        up: Vec<bool>,
        neighbour: Vec<Option<u8>>,
        psc: bool,
        writes: Vec<HwWrite>,
    }

    impl FakeHw {
        /// Ports 0..=n; `linked` ports are up in Init with an Init
        /// neighbour, the rest Down; port 0 Active (switch).
        fn new(n: usize, linked: &[usize]) -> Self {
            let mut h = FakeHw {
                state: vec![PORT_STATE_DOWN; n + 1],
                up: vec![false; n + 1],
                neighbour: vec![None; n + 1],
                psc: true,
                writes: Vec::new(),
            };
            h.state[0] = PORT_STATE_ACTIVE;
            for &p in linked {
                h.state[p] = PORT_STATE_INIT;
                h.up[p] = true;
                h.neighbour[p] = Some(PORT_STATE_INIT);
            }
            h
        }
    }

    impl NodeHw for FakeHw {
        fn port_state(&self, port: u8) -> u8 {
            self.state[usize::from(port)]
        }
        fn link_up(&self, port: u8) -> bool {
            self.up[usize::from(port)]
        }
        fn neighbour_state(&self, port: u8) -> Option<u8> {
            self.neighbour[usize::from(port)]
        }
        fn port_state_change(&self) -> bool {
            self.psc
        }
        fn write(&mut self, w: HwWrite) {
            match w {
                HwWrite::PortState { port, state } => self.state[usize::from(port)] = state,
                HwWrite::RetrainLink { port } => {
                    self.state[usize::from(port)] = PORT_STATE_INIT;
                    self.neighbour[usize::from(port)] = Some(PORT_STATE_INIT);
                }
                HwWrite::ClearPortStateChange => self.psc = false,
                _ => {}
            }
            self.writes.push(w);
        }
    }

    fn topo() -> Topology {
        let p =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/topologies/net.2sw2path4hca");
        Topology::load(&p).expect("net.2sw2path4hca parses")
    }

    /// Switch1 with ibsim 0.10's LinearFDBCap (30720), links on 1, 2, 3, 5.
    fn switch1() -> (NodeSma, FakeHw) {
        let t = topo();
        let n = t.node("Switch1").expect("Switch1");
        let id = NodeIdentity::from_topology(n, &t, 30720).expect("identity");
        (NodeSma::new(id), FakeHw::new(8, &[1, 2, 3, 5]))
    }

    /// Hca1: port 1 linked to Switch1 port 1, port 2 unconnected.
    fn hca1() -> (NodeSma, FakeHw) {
        let t = topo();
        let n = t.node("Hca1").expect("Hca1");
        let id = NodeIdentity::from_topology(n, &t, 0).expect("identity");
        (NodeSma::new(id), FakeHw::new(2, &[1]))
    }

    fn get(attr: u16, modifier: u32) -> Mad {
        mad::dr_request(METHOD_GET, attr, modifier, 0x1122_3344, &[1, 3])
    }

    fn set(attr: u16, modifier: u32, data: &[u8; 64]) -> Mad {
        let mut m = mad::dr_request(METHOD_SET, attr, modifier, 0x5566, &[1]);
        mad::data_mut(&mut m).copy_from_slice(data);
        m
    }

    /// (status without the D bit, data).
    fn ask(sma: &mut NodeSma, hw: &mut FakeHw, req: &Mad, port: u8) -> (u16, [u8; 64]) {
        let r = sma.handle(req, port, hw).expect("a response");
        let mut d = [0u8; 64];
        d.copy_from_slice(mad::data(&r));
        (mad::status(&r), d)
    }

    /// The HCA of vector V2 on port 1 (linked, Init, no neighbour known:
    /// the HCA dialect does not ask for one).
    fn hca_v2() -> (NodeSma, FakeHw) {
        let mut hw = FakeHw::new(1, &[1]);
        hw.neighbour[1] = None;
        (NodeSma::new(NodeIdentity::vector_v2_ca()), hw)
    }

    #[test]
    fn hca_nodeinfo_is_reference_vector_v2() {
        // ibspec §3.3 V2: the DR GetResp(NodeInfo) from the CA. Its SMP data
        // starts at byte 64 of the MAD, which starts after LRH (8), BTH (12)
        // and DETH (8).
        let v2 = include_bytes!("../../../tests/vectors/V2_dr_getresp_nodeinfo.bin");
        let want = &v2[28 + 64..28 + 128];
        let (mut sma, mut hw) = hca_v2();
        let (st, d) = ask(&mut sma, &mut hw, &get(ATTR_NODE_INFO, 0), 1);
        assert_eq!(st, 0);
        assert_eq!(&d[..], want);
    }

    #[test]
    fn hca_dialect_statuses() {
        let (mut sma, mut hw) = hca_v2();
        // ClassVersion 2: bad class version (ibspec §7 status code 1 → 0x0004).
        let mut m = get(ATTR_NODE_INFO, 0);
        m[mad::off::CLASS_VERSION] = 2;
        assert_eq!(ask(&mut sma, &mut hw, &m, 1).0, STATUS_BAD_VERSION);
        // BaseVersion 2 is still not answered.
        let mut m = get(ATTR_NODE_INFO, 0);
        m[mad::off::BASE_VERSION] = 2;
        assert!(sma.handle(&m, 1, &mut hw).is_none());
        // A Set of a read-only attribute: method/attribute combination not
        // supported (0x000C), the data as it came.
        let data = [0x5Au8; 64];
        for attr in [ATTR_NODE_INFO, ATTR_NODE_DESC, ATTR_GUID_INFO] {
            let (st, d) = ask(&mut sma, &mut hw, &set(attr, 0, &data), 1);
            assert_eq!((st, d), (STATUS_ATTR_UNSUPPORTED, data), "attr {attr:#x}");
        }
        // Switch attributes on a CA: 0x000C as in the ibsim dialect.
        assert_eq!(
            ask(&mut sma, &mut hw, &get(ATTR_SWITCH_INFO, 0), 1).0,
            STATUS_ATTR_UNSUPPORTED
        );
    }

    #[test]
    fn hca_portinfo_set_is_checked_before_it_is_applied() {
        let (mut sma, mut hw) = hca_v2();
        let (_, cur) = ask(&mut sma, &mut hw, &get(ATTR_PORT_INFO, 0), 1);
        let cur = PortInfo::decode(&cur).unwrap();
        assert_eq!(cur.gid_prefix, DEFAULT_GID_PREFIX);
        assert_eq!(cur.m_key_lease_period, 0);
        let refused = |sma: &mut NodeSma, hw: &mut FakeHw, pi: PortInfo| {
            let (st, d) = ask(sma, hw, &set(ATTR_PORT_INFO, 0, &pi.encode()), 1);
            assert_eq!(st, STATUS_INVALID_FIELD, "{pi:?}");
            // answered with the port's current PortInfo, nothing applied
            let now = PortInfo::decode(&d).unwrap();
            assert_eq!((now.lid, now.port_state), (0, PORT_STATE_INIT));
            assert!(hw.writes.is_empty(), "{:?}", hw.writes);
        };
        // Init → Active skips Armed.
        let mut pi = cur;
        pi.lid = 7;
        pi.port_state = PORT_STATE_ACTIVE;
        refused(&mut sma, &mut hw, pi);
        // A multicast LID or MasterSMLID.
        let mut pi = cur;
        pi.lid = 0xC001;
        pi.port_state = PORT_STATE_NO_CHANGE;
        refused(&mut sma, &mut hw, pi);
        let mut pi = cur;
        pi.master_sm_lid = 0xFFFF;
        pi.port_state = PORT_STATE_NO_CHANGE;
        refused(&mut sma, &mut hw, pi);
        // Init again is not a step.
        let mut pi = cur;
        pi.port_state = PORT_STATE_INIT;
        refused(&mut sma, &mut hw, pi);
        // One step at a time goes through, with no neighbour to ask.
        for state in [PORT_STATE_ARMED, PORT_STATE_ACTIVE] {
            let mut pi = cur;
            pi.lid = 7;
            pi.port_state = state;
            let (st, d) = ask(&mut sma, &mut hw, &set(ATTR_PORT_INFO, 0, &pi.encode()), 1);
            assert_eq!(st, 0);
            let now = PortInfo::decode(&d).unwrap();
            assert_eq!((now.lid, now.port_state), (7, state));
            assert!(hw.writes.contains(&HwWrite::PortState { port: 1, state }));
        }
        // Down retrains the link: back to Init.
        let mut pi = cur;
        pi.lid = 7;
        pi.port_state = PORT_STATE_DOWN;
        let (st, d) = ask(&mut sma, &mut hw, &set(ATTR_PORT_INFO, 0, &pi.encode()), 1);
        assert_eq!(st, 0);
        assert_eq!(PortInfo::decode(&d).unwrap().port_state, PORT_STATE_INIT);
        assert!(hw.writes.contains(&HwWrite::RetrainLink { port: 1 }));
    }

    // ---- Get layouts: ibsim's observed answers ----

    #[test]
    fn nodeinfo_matches_ibsim() {
        let (mut sw, mut hw) = switch1();
        // smpdump -D 0 0x11 (Switch1, arrival port 0)
        let want = hex("0101 0208 0000 0000 0020 0000 0000 0000 \
                        0020 0000 0000 0000 0020 0000 0008 0000 0000 00a1 0000 0000");
        assert_eq!(ask(&mut sw, &mut hw, &get(ATTR_NODE_INFO, 0), 0), (0, want));
        // smpquery -D nodeinfo 0,3 (Switch2 entered by its port 3):
        // GUIDs 0x200001, LocalPort 3.
        let t = topo();
        let id = NodeIdentity::from_topology(t.node("Switch2").expect("Switch2"), &t, 30720)
            .expect("identity");
        let mut sw2 = NodeSma::new(id);
        let want = hex("0101 0208 0000 0000 0020 0001 0000 0000 \
                        0020 0001 0000 0000 0020 0001 0008 0000 0000 00a1 0300 0000");
        assert_eq!(
            ask(&mut sw2, &mut hw, &get(ATTR_NODE_INFO, 0), 3),
            (0, want)
        );
        // smpdump -D 0,1 0x11 (Hca1 by its port 1): PortGUID = NodeGUID + 1.
        let (mut ca, mut hw) = hca1();
        let want = hex("0101 0102 0000 0000 0010 0000 0000 0000 \
                        0010 0000 0000 0000 0010 0001 0040 0000 0000 00a1 0100 0000");
        assert_eq!(ask(&mut ca, &mut hw, &get(ATTR_NODE_INFO, 0), 1), (0, want));
    }

    #[test]
    fn nodeinfo_fields_at_spec_offsets() {
        // ibspec §8 NodeInfo offsets, with distinctive values.
        let mut id = NodeIdentity::ca(2, 0x0102_0304_0506_0708, "x");
        id.sys_image_guid = 0x1112_1314_1516_1718;
        id.vendor_id = 0x00AB_CDEF;
        id.device_id = 0x4321;
        let mut sma = NodeSma::new(id);
        let mut hw = FakeHw::new(2, &[1, 2]);
        let (st, d) = ask(&mut sma, &mut hw, &get(ATTR_NODE_INFO, 0), 2);
        assert_eq!(st, 0);
        assert_eq!(&d[0..4], &[1, 1, 1, 2]); // Base/ClassVersion, CA, 2 ports
        assert_eq!(&d[4..12], &[0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18]);
        assert_eq!(&d[12..20], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&d[20..28], &[1, 2, 3, 4, 5, 6, 7, 0x0A]); // + port 2
        assert_eq!(&d[28..30], &[0, 64]); // PartitionCap
        assert_eq!(&d[30..32], &[0x43, 0x21]); // DeviceID
        assert_eq!(&d[32..36], &[0, 0, 0, 0xA1]); // Revision
        assert_eq!(d[36], 2); // LocalPortNum
        assert_eq!(&d[37..40], &[0xAB, 0xCD, 0xEF]); // VendorID
        assert!(d[40..].iter().all(|&b| b == 0));
    }

    #[test]
    fn nodedesc_matches_ibsim() {
        let (mut sw, mut hw) = switch1();
        // smpdump -D 0 0x10: "Switch1" NUL-padded.
        let want = hex("5377 6974 6368 3100");
        assert_eq!(ask(&mut sw, &mut hw, &get(ATTR_NODE_DESC, 0), 0), (0, want));
        let (mut ca, mut hw) = hca1();
        assert_eq!(
            ask(&mut ca, &mut hw, &get(ATTR_NODE_DESC, 0), 1),
            (0, hex("4863 6131"))
        );
        // ibsim keeps 63 bytes of a description.
        let long = "d".repeat(80);
        let mut sma = NodeSma::new(NodeIdentity::ca(1, 1, &long));
        let mut hw = FakeHw::new(1, &[1]);
        let (_, d) = ask(&mut sma, &mut hw, &get(ATTR_NODE_DESC, 0), 1);
        assert!(d[..63].iter().all(|&b| b == b'd'));
        assert_eq!(d[63], 0);
    }

    #[test]
    fn switchinfo_matches_ibsim() {
        let (mut sw, mut hw) = switch1();
        // smpdump -D 0 0x12: LinearFDBCap 30720, MulticastFDBCap 1024,
        // PortStateChange 1, PartitionEnforcementCap 64, FilterRaw in/out.
        let want = hex("7800 0000 0400 0000 0000 0004 0000 0040 3000");
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_SWITCH_INFO, 0), 0),
            (0, want)
        );
    }

    #[test]
    fn switchinfo_set_and_enhanced_port0() {
        let (mut sw, mut hw) = switch1();
        let mut d = [0u8; 64];
        d[6..8].copy_from_slice(&0x00C0u16.to_be_bytes()); // LinearFDBTop
        d[11] = (0x12 << 3) | 0x04; // LifeTime 0x12, PortStateChange 1
        let (st, r) = ask(&mut sw, &mut hw, &set(ATTR_SWITCH_INFO, 0, &d), 0);
        assert_eq!(st, 0);
        assert_eq!(&r[0..2], &[0x78, 0x00]);
        assert_eq!(&r[6..8], &[0x00, 0xC0]);
        assert_eq!(r[11], 0x90); // LifeTime kept, PortStateChange cleared
        assert_eq!(
            hw.writes,
            vec![HwWrite::ClearPortStateChange, HwWrite::LinearFdbTop(0xC0)]
        );
        // A Set writing 0 does not clear; the flag reads from hardware.
        hw.psc = true;
        d[11] = 0x12 << 3;
        let (_, r) = ask(&mut sw, &mut hw, &set(ATTR_SWITCH_INFO, 0, &d), 0);
        assert_eq!(r[11], 0x94);
        assert!(hw.psc);

        let mut id = NodeIdentity::switch(16, 0x20_0000, "s", 4096);
        id.enhanced_port0 = Some(true);
        let mut sma = NodeSma::new(id);
        let mut hw = FakeHw::new(16, &[]);
        let (_, r) = ask(&mut sma, &mut hw, &get(ATTR_SWITCH_INFO, 0), 0);
        assert_eq!(&r[0..2], &[0x10, 0x00]); // LinearFDBCap 4096
        assert_eq!(r[16], 0x38); // FilterRaw in/out + EnhancedPort0 (bit 3)
    }

    const SW_PORT0: &str = "0000 0000 0000 0000 0000 0000 0000 0000 \
                            0000 0000 0000 c048 0000 0ff9 0002 1f02 \
                            7452 0011 1040 0008 0803 0040 0000 0000 \
                            0000 011f 0800 0000 0000 0000 0030 0000";
    const SW_PORT1: &str = "0000 0000 0000 0000 0000 0000 0000 0000 \
                            0000 0000 0000 0000 0000 0000 0002 1f02 \
                            7252 0011 4040 0008 0804 e040 0000 0000";
    const SW_PORT4: &str = "0000 0000 0000 0000 0000 0000 0000 0000 \
                            0000 0000 0000 0000 0000 0000 0002 1f02 \
                            7122 0011 4040 0008 0804 e040 0000 0000 \
                            0000 0000 0040 0000";
    const CA_PORT1: &str = "0000 0000 0000 0000 0000 0000 0000 0000 \
                            0000 0000 0050 c048 0000 0ff9 0102 1f02 \
                            7252 0011 4040 0008 0804 e040 0000 0000 \
                            0000 201f 0000 0000 0000 0000 0030 0000";
    const CA_PORT2: &str = "0000 0000 0000 0000 0000 0000 0000 0000 \
                            0000 0000 0010 c048 0000 0ff9 0102 1f02 \
                            7122 0011 4040 0008 0804 e040 0000 0000 \
                            0000 201f 0000 0000 0000 0000 0030 0000";

    #[test]
    fn portinfo_matches_ibsim() {
        let (mut sw, mut hw) = switch1();
        // smpdump -D 0 0x15 {0,1,4}: port 0 (smaport, Active), port 1
        // (linked, Init/LinkUp), port 4 (unconnected, Down/Polling).
        for (m, want) in [(0, SW_PORT0), (1, SW_PORT1), (4, SW_PORT4)] {
            let got = ask(&mut sw, &mut hw, &get(ATTR_PORT_INFO, m), 0);
            assert_eq!(got, (0, hex(want)), "switch port {m}");
        }
        // Bit 31 of the modifier is ignored.
        let got = ask(&mut sw, &mut hw, &get(ATTR_PORT_INFO, 0x8000_0001), 0);
        assert_eq!(got, (0, hex(SW_PORT1)));
        // smpdump -D 0,1 0x15 {0,2}: Hca1 asked on port 1; LocalPortNum is
        // the arrival port for both.
        let (mut ca, mut hw) = hca1();
        for (m, want) in [(0, CA_PORT1), (1, CA_PORT1), (2, CA_PORT2)] {
            let got = ask(&mut ca, &mut hw, &get(ATTR_PORT_INFO, m), 1);
            assert_eq!(got, (0, hex(want)), "CA port {m}");
        }
    }

    #[test]
    fn portinfo_after_opensm_matches_ibsim() {
        // `opensm -o` on ibsim, then smpdump -D 0 0x15 {0,1} and
        // -D 0,1 0x15 1: LIDs 1 (Switch1) and 2 (Hca1), MasterSMLID 1,
        // GidPrefix fe80::, HOQLife 0x10 on switch port 1, ports Active.
        let prefix = 0xFE80_0000_0000_0000u64.to_be_bytes();
        let (mut sw, mut hw) = switch1();
        let mut d = with_state(pi(&mut sw, &mut hw, 0, 0), PORT_STATE_NO_CHANGE);
        d[8..16].copy_from_slice(&prefix);
        d[16..20].copy_from_slice(&[0, 1, 0, 1]);
        assert_eq!(ask(&mut sw, &mut hw, &set(ATTR_PORT_INFO, 0, &d), 0).0, 0);
        let want = "0000 0000 0000 0000 fe80 0000 0000 0000 \
                    0001 0001 0000 c048 0000 0ff9 0002 1f02 \
                    7452 0011 1040 0008 0803 0040 0000 0000 \
                    0000 011f 0800 0000 0000 0000 0030 0000";
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_PORT_INFO, 0), 0),
            (0, hex(want))
        );
        let mut d = with_state(pi(&mut sw, &mut hw, 1, 0), PORT_STATE_NO_CHANGE);
        d[42] = (d[42] & 0xE0) | 0x10; // HOQLife, byte 42 bits 4:0
        assert_eq!(ask(&mut sw, &mut hw, &set(ATTR_PORT_INFO, 1, &d), 0).0, 0);
        hw.state[1] = PORT_STATE_ACTIVE;
        let want = "0000 0000 0000 0000 0000 0000 0000 0000 \
                    0000 0000 0000 0000 0000 0000 0002 1f02 \
                    7452 0011 4040 0008 0804 f040";
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_PORT_INFO, 1), 0),
            (0, hex(want))
        );
        let (mut ca, mut hw) = hca1();
        let mut d = with_state(pi(&mut ca, &mut hw, 1, 1), PORT_STATE_NO_CHANGE);
        d[8..16].copy_from_slice(&prefix);
        d[16..20].copy_from_slice(&[0, 2, 0, 1]);
        assert_eq!(ask(&mut ca, &mut hw, &set(ATTR_PORT_INFO, 1, &d), 1).0, 0);
        hw.state[1] = PORT_STATE_ACTIVE;
        let want = "0000 0000 0000 0000 fe80 0000 0000 0000 \
                    0002 0001 0050 c048 0000 0ff9 0102 1f02 \
                    7452 0011 4040 0008 0804 e040 0000 0000 \
                    0000 201f 0000 0000 0000 0000 0030 0000";
        assert_eq!(
            ask(&mut ca, &mut hw, &get(ATTR_PORT_INFO, 1), 1),
            (0, hex(want))
        );
    }

    #[test]
    fn portinfo_v012_capability_masks() {
        // ibspec §8: ibsim (v0.12) CA CapabilityMask 0x0040C048; v0.12
        // templates carry CapabilityMask2 0x0430.
        let (mut ca, mut hw) = hca1();
        let mut id = ca.identity().clone();
        id.ibsim = IbsimVersion::V0_12;
        ca = NodeSma::new(id);
        let (_, d) = ask(&mut ca, &mut hw, &get(ATTR_PORT_INFO, 1), 1);
        assert_eq!(&d[20..24], &[0x00, 0x40, 0xC0, 0x48]);
        assert_eq!(&d[60..62], &[0x04, 0x30]);
    }

    // ---- PortInfo Set ----

    /// The PortInfo of `port` as Get returns it, to edit into a Set.
    fn pi(sma: &mut NodeSma, hw: &mut FakeHw, port: u32, arrival: u8) -> [u8; 64] {
        ask(sma, hw, &get(ATTR_PORT_INFO, port), arrival).1
    }

    fn with_state(mut d: [u8; 64], s: u8) -> [u8; 64] {
        d[32] = (d[32] & 0xF0) | s; // PortState, byte 32 bits 3:0
        d
    }

    #[test]
    fn portinfo_set_lid_fields_go_to_hardware() {
        let (mut ca, mut hw) = hca1();
        let mut d = pi(&mut ca, &mut hw, 1, 1);
        d[16..18].copy_from_slice(&0x0012u16.to_be_bytes()); // LID
        d[18..20].copy_from_slice(&0x0001u16.to_be_bytes()); // MasterSMLID
        d[34] = 0x03; // LMC 3
        d[36] = (d[36] & 0xF0) | 0x05; // MasterSMSL 5
        d[8..16].copy_from_slice(&0xFE80_0000_0000_0000u64.to_be_bytes());
        let (st, r) = ask(&mut ca, &mut hw, &set(ATTR_PORT_INFO, 0, &d), 1);
        assert_eq!(st, 0);
        assert_eq!(&r[8..10], &[0xFE, 0x80]);
        assert_eq!(&r[16..20], &[0x00, 0x12, 0x00, 0x01]);
        assert_eq!(r[34] & 0x07, 3);
        assert_eq!(r[36] & 0x0F, 5);
        assert_eq!(
            hw.writes,
            vec![
                // the M_Key fields as written (M_Key 0, protect 0 in byte
                // 34's top bits, the lease period echoed from the Get);
                // M_KeyViolations written as 0 clears the count
                HwWrite::Mkey {
                    port: 1,
                    key: 0,
                    prot: 0,
                    lease: u16::from_be_bytes([d[26], d[27]]),
                },
                HwWrite::MkeyViolations { port: 1, value: 0 },
                HwWrite::PortLid { port: 1, lid: 0x12 },
                HwWrite::PortLmc { port: 1, lmc: 3 },
                HwWrite::MasterSmLid { port: 1, lid: 1 },
                HwWrite::MasterSmSl { port: 1, sl: 5 },
            ]
        );
        assert_eq!(ca.port_lid(1), Some(0x12));

        // Switch: port 0 carries the LID; an external port keeps what is
        // written (ibsim reads it back, observed 0x1234) but nothing goes to
        // hardware.
        let (mut sw, mut hw) = switch1();
        let mut d = with_state(pi(&mut sw, &mut hw, 0, 0), PORT_STATE_NO_CHANGE);
        d[16..18].copy_from_slice(&0x0007u16.to_be_bytes());
        assert_eq!(ask(&mut sw, &mut hw, &set(ATTR_PORT_INFO, 0, &d), 0).0, 0);
        assert!(hw.writes.contains(&HwWrite::PortLid { port: 0, lid: 7 }));
        hw.writes.clear();
        let mut d = pi(&mut sw, &mut hw, 2, 0);
        d[16..20].copy_from_slice(&[0x12, 0x34, 0x12, 0x34]);
        let (st, r) = ask(&mut sw, &mut hw, &set(ATTR_PORT_INFO, 2, &d), 0);
        assert_eq!(st, 0);
        assert_eq!(&r[16..20], &[0x12, 0x34, 0x12, 0x34]);
        assert!(!hw
            .writes
            .iter()
            .any(|w| matches!(w, HwWrite::PortLid { .. } | HwWrite::MasterSmLid { .. })));
    }

    #[test]
    fn portinfo_state_rules() {
        let (mut sw, mut hw) = switch1();
        let d = pi(&mut sw, &mut hw, 1, 0);
        // Init → Active: two steps → 0x001C, the request's data echoed.
        let req = with_state(d, PORT_STATE_ACTIVE);
        assert_eq!(
            ask(&mut sw, &mut hw, &set(ATTR_PORT_INFO, 1, &req), 0),
            (STATUS_INVALID_FIELD, req)
        );
        // Init → Armed with an Init neighbour.
        let (st, r) = ask(
            &mut sw,
            &mut hw,
            &set(ATTR_PORT_INFO, 1, &with_state(d, 3)),
            0,
        );
        assert_eq!((st, r[32] & 0x0F), (0, PORT_STATE_ARMED));
        assert_eq!(hw.writes, vec![HwWrite::PortState { port: 1, state: 3 }]);
        // Armed → Active while the neighbour is still Init: |2 − 4| > 1.
        let st = ask(
            &mut sw,
            &mut hw,
            &set(ATTR_PORT_INFO, 1, &with_state(d, 4)),
            0,
        )
        .0;
        assert_eq!(st, STATUS_INVALID_FIELD);
        // Neighbour Armed: allowed.
        hw.neighbour[1] = Some(PORT_STATE_ARMED);
        let (st, r) = ask(
            &mut sw,
            &mut hw,
            &set(ATTR_PORT_INFO, 1, &with_state(d, 4)),
            0,
        );
        assert_eq!((st, r[32] & 0x0F), (0, PORT_STATE_ACTIVE));
        // Writing Init changes nothing (ibsim acts on Down and ≥ Armed).
        hw.writes.clear();
        let (st, r) = ask(
            &mut sw,
            &mut hw,
            &set(ATTR_PORT_INFO, 1, &with_state(d, 2)),
            0,
        );
        assert_eq!((st, r[32] & 0x0F), (0, PORT_STATE_ACTIVE));
        assert!(hw.writes.is_empty());
        // Active → Armed is one step: ibsim allows it.
        hw.neighbour[1] = Some(PORT_STATE_ACTIVE);
        let (st, r) = ask(
            &mut sw,
            &mut hw,
            &set(ATTR_PORT_INFO, 1, &with_state(d, 3)),
            0,
        );
        assert_eq!((st, r[32] & 0x0F), (0, PORT_STATE_ARMED));
        // Down: the link retrains, both ends Init (observed after
        // `ibportstate -D 0 1 down`).
        hw.writes.clear();
        let (st, r) = ask(
            &mut sw,
            &mut hw,
            &set(ATTR_PORT_INFO, 1, &with_state(d, 1)),
            0,
        );
        assert_eq!((st, r[32] & 0x0F), (0, PORT_STATE_INIT));
        assert_eq!(hw.writes, vec![HwWrite::RetrainLink { port: 1 }]);
        // Unconnected port 4: Armed refused (observed), Down accepted and
        // without effect.
        let d4 = pi(&mut sw, &mut hw, 4, 0);
        hw.writes.clear();
        let st = ask(
            &mut sw,
            &mut hw,
            &set(ATTR_PORT_INFO, 4, &with_state(d4, 3)),
            0,
        )
        .0;
        assert_eq!(st, STATUS_INVALID_FIELD);
        let (st, r) = ask(
            &mut sw,
            &mut hw,
            &set(ATTR_PORT_INFO, 4, &with_state(d4, 1)),
            0,
        );
        assert_eq!((st, r[32] & 0x0F), (0, PORT_STATE_DOWN));
        assert!(hw.writes.is_empty());
        // Switch port 0 has no neighbour: any state ≥ Init is refused.
        let d0 = pi(&mut sw, &mut hw, 0, 0);
        let st = ask(
            &mut sw,
            &mut hw,
            &set(ATTR_PORT_INFO, 0, &with_state(d0, 4)),
            0,
        )
        .0;
        assert_eq!(st, STATUS_INVALID_FIELD);
    }

    #[test]
    fn portinfo_set_errors_keep_earlier_fields_like_ibsim() {
        // ibsim applies LID/SMLID/LMC before checking the state (observed:
        // a refused `ibportstate … active` left LID 0x1234 on the port).
        let (mut ca, mut hw) = hca1();
        let mut d = with_state(pi(&mut ca, &mut hw, 1, 1), PORT_STATE_ACTIVE);
        d[16..18].copy_from_slice(&0x1234u16.to_be_bytes());
        let (st, r) = ask(&mut ca, &mut hw, &set(ATTR_PORT_INFO, 1, &d), 1);
        assert_eq!((st, r), (STATUS_INVALID_FIELD, d));
        assert!(hw.writes.contains(&HwWrite::PortLid {
            port: 1,
            lid: 0x1234
        }));
        assert!(!hw
            .writes
            .iter()
            .any(|w| matches!(w, HwWrite::PortState { .. })));
        let r = pi(&mut ca, &mut hw, 1, 1);
        assert_eq!(
            (&r[16..18], r[32] & 0x0F),
            (&[0x12, 0x34][..], PORT_STATE_INIT)
        );
    }

    #[test]
    fn portinfo_set_operational_vls_and_ca_port_rules() {
        let (mut ca, mut hw) = hca1();
        let d = pi(&mut ca, &mut hw, 1, 1);
        // OperationalVLs (byte 43 bits 7:4) 5 > VLCap (byte 37 bits 7:4) 4.
        let mut bad = d;
        bad[43] = 0x50;
        let st = ask(&mut ca, &mut hw, &set(ATTR_PORT_INFO, 1, &bad), 1).0;
        assert_eq!(st, STATUS_INVALID_FIELD);
        let mut ok = d;
        ok[43] = 0x30;
        let (st, r) = ask(&mut ca, &mut hw, &set(ATTR_PORT_INFO, 1, &ok), 1);
        assert_eq!((st, r[43] >> 4), (0, 3));
        // A CA may Get its other port but only Set the arrival port.
        hw.writes.clear();
        let st = ask(&mut ca, &mut hw, &set(ATTR_PORT_INFO, 2, &d), 1).0;
        assert_eq!(st, STATUS_INVALID_FIELD);
        assert!(hw.writes.is_empty());
        // Ports above NumPorts (observed for Switch1 port 9, Hca1 port 3).
        let st = ask(&mut ca, &mut hw, &get(ATTR_PORT_INFO, 3), 1).0;
        assert_eq!(st, STATUS_INVALID_FIELD);
        let (mut sw, mut hw) = switch1();
        let st = ask(&mut sw, &mut hw, &get(ATTR_PORT_INFO, 9), 0).0;
        assert_eq!(st, STATUS_INVALID_FIELD);
    }

    #[test]
    fn portinfo_set_link_width_and_speed() {
        let (mut sw, mut hw) = switch1();
        // PortState NoChange: the width/speed fields are acted on.
        let mut d = with_state(pi(&mut sw, &mut hw, 1, 0), PORT_STATE_NO_CHANGE);
        d[29] = 0x1F; // LinkWidthEnabled = all supported → 12x (ibsim)
        d[35] = (d[35] & 0xF0) | 0x07; // LinkSpeedEnabled SDR|DDR|QDR → QDR
        let (st, r) = ask(&mut sw, &mut hw, &set(ATTR_PORT_INFO, 1, &d), 0);
        assert_eq!(st, 0);
        assert_eq!((r[29], r[31]), (0x1F, 0x08)); // enabled 31, active 12x
        assert_eq!(r[35], 0x47); // active QDR, enabled 7
        assert_eq!(
            hw.writes,
            vec![HwWrite::LinkActive {
                port: 1,
                width: 8,
                speed: 4,
                speed_ext: 0
            }]
        );
        // Not with a PortState in the same Set (ibsim skips it then).
        hw.writes.clear();
        let mut d = with_state(r, PORT_STATE_ARMED);
        d[29] = 0x01;
        let (st, r) = ask(&mut sw, &mut hw, &set(ATTR_PORT_INFO, 1, &d), 0);
        assert_eq!((st, r[29], r[31]), (0, 0x1F, 0x08));
        // The neighbour's side.
        sw.set_link_active(2, 1, 2, 0);
        let r = pi(&mut sw, &mut hw, 2, 0);
        assert_eq!((r[31], r[35] >> 4), (1, 2));
    }

    // ---- tables ----

    #[test]
    fn pkey_tables() {
        let (mut sw, mut hw) = switch1();
        let ffff = hex("ffff");
        // Port 0: PartitionCap 8 → block 0 only (observed 0x801c for 1).
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_P_KEY_TABLE, 0), 0),
            (0, ffff)
        );
        assert_eq!(ask(&mut sw, &mut hw, &get(ATTR_P_KEY_TABLE, 1), 0).0, 0x1C);
        // External port (mod 31:16): PartitionEnforcementCap 64.
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_P_KEY_TABLE, 0x4_0000), 0),
            (0, ffff)
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_P_KEY_TABLE, 0x4_0001), 0),
            (0, [0; 64])
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_P_KEY_TABLE, 0x4_0002), 0).0,
            0x1C
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_P_KEY_TABLE, 0x9_0000), 0).0,
            0x1C
        );
        // Set round trip; port 0's 8-entry table keeps only 8.
        let mut d = [0xA5u8; 64];
        d[0] = 0x80;
        assert_eq!(
            ask(&mut sw, &mut hw, &set(ATTR_P_KEY_TABLE, 0x3_0000, &d), 0),
            (0, d)
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_P_KEY_TABLE, 0x3_0000), 0),
            (0, d)
        );
        ask(&mut sw, &mut hw, &set(ATTR_P_KEY_TABLE, 0, &d), 0);
        let (_, r) = ask(&mut sw, &mut hw, &get(ATTR_P_KEY_TABLE, 0), 0);
        assert_eq!(&r[..16], &d[..16]);
        assert!(r[16..].iter().all(|&b| b == 0));
        // CA: PartitionCap 64, the arrival port's table, port bits ignored.
        let (mut ca, mut hw) = hca1();
        assert_eq!(
            ask(&mut ca, &mut hw, &get(ATTR_P_KEY_TABLE, 0), 1),
            (0, ffff)
        );
        assert_eq!(ask(&mut ca, &mut hw, &get(ATTR_P_KEY_TABLE, 1), 1).0, 0);
        assert_eq!(ask(&mut ca, &mut hw, &get(ATTR_P_KEY_TABLE, 2), 1).0, 0x1C);
    }

    #[test]
    fn p_key_table_sets_reach_the_rtl_tables_of_qp1_ports_only() {
        let pk = |w: &HwWrite| match *w {
            HwWrite::PkeyBlock {
                port,
                block,
                keys,
                n,
            } => Some((port, block, keys, n)),
            _ => None,
        };
        let mut d = [0u8; 64];
        d[..6].copy_from_slice(&[0xFF, 0xFF, 0x00, 0x06, 0x80, 0x07]);
        // CA block 1 (entries 32..63): all 32 keys, for the arrival port.
        let (mut ca, mut hw) = hca1();
        assert_eq!(ask(&mut ca, &mut hw, &set(ATTR_P_KEY_TABLE, 1, &d), 1).0, 0);
        let w: Vec<_> = hw.writes.iter().filter_map(pk).collect();
        assert_eq!(w.len(), 1);
        let (port, block, keys, n) = w[0];
        assert_eq!((port, block, n), (1, 1, 32));
        assert_eq!(&keys[..4], &[0xFFFF, 0x0006, 0x8007, 0]);
        // A Get writes nothing.
        hw.writes.clear();
        ask(&mut ca, &mut hw, &get(ATTR_P_KEY_TABLE, 1), 1);
        assert!(hw.writes.iter().all(|w| pk(w).is_none()));
        // Switch port 0: its 8 entries; an external port: no RTL table.
        let (mut sw, mut hw) = switch1();
        ask(&mut sw, &mut hw, &set(ATTR_P_KEY_TABLE, 0, &d), 0);
        ask(&mut sw, &mut hw, &set(ATTR_P_KEY_TABLE, 0x3_0000, &d), 0);
        let w: Vec<_> = hw.writes.iter().filter_map(pk).collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!((w[0].0, w[0].1, w[0].3), (0, 0, 8));
    }

    #[test]
    fn key_violation_traps_carry_the_notice_layout() {
        let (mut ca, mut hw) = hca1();
        let v = KeyViolation {
            lid1: 0x0102,
            lid2: 0x0304,
            key: 0x8005,
            sl: 0xA,
            qp1: 0x12_3456,
            qp2: 1,
            gid1: [0x11; 16],
            gid2: [0x22; 16],
        };
        // No LID and no MasterSMLID yet: none (as every trap here).
        assert!(ca.trap_key_violation(1, TRAP_BAD_P_KEY, &v, 7).is_none());
        let mut pi = [0u8; 64];
        pi[16..18].copy_from_slice(&2u16.to_be_bytes()); // LID 2
        pi[18..20].copy_from_slice(&1u16.to_be_bytes()); // MasterSMLID 1
        pi[32] = 0; // PortState no change
        ask(&mut ca, &mut hw, &set(ATTR_PORT_INFO, 1, &pi), 1);
        assert!(
            ca.trap_key_violation(1, 144, &v, 7).is_none(),
            "not a key trap"
        );
        let t = ca
            .trap_key_violation(1, TRAP_BAD_Q_KEY, &v, 7)
            .expect("trap");
        assert_eq!(mad::method(&t), METHOD_TRAP);
        assert_eq!(mad::attr_id(&t), ATTR_NOTICE);
        assert_eq!(mad::tid(&t), 7);
        let n = mad::data(&t);
        // ibspec §8: generic, type 2 (security), producer CA, trap 258,
        // IssuerLID 2; 12-13 LID1, 14-15 LID2, 16-19 Key, 20-23 SL/QP1,
        // 24-27 QP2, 28-43 GID1, 44-59 GID2 (SL in bits 31:28 of 20-23, QP1 in
        // 23:0, as qib_bad_pkey: (sl << 28) | qp1).
        assert_eq!(&n[0..8], &[0x82, 0, 0, 1, 0x01, 0x02, 0, 2]);
        assert_eq!(
            &n[12..28],
            &[1, 2, 3, 4, 0, 0, 0x80, 5, 0xA0, 0x12, 0x34, 0x56, 0, 0, 0, 1]
        );
        assert_eq!(&n[28..44], &[0x11; 16]);
        assert_eq!(&n[44..60], &[0x22; 16]);
        assert_eq!(KeyViolation::decode(n), v);
    }

    #[test]
    fn sl2vl_tables() {
        let (mut sw, mut hw) = switch1();
        let def = hex("0123 4567 89ab cde7");
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_SL_TO_VL_TABLE, 0x0102), 0),
            (0, def)
        );
        let mut d = [0u8; 64];
        d[..8].copy_from_slice(&[0x10, 0x32, 0x54, 0x76, 0, 0, 0, 0xFF]);
        assert_eq!(
            ask(&mut sw, &mut hw, &set(ATTR_SL_TO_VL_TABLE, 0x0305, &d), 0),
            (0, d)
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_SL_TO_VL_TABLE, 0x0305), 0),
            (0, d)
        );
        // Other (in, out) pairs keep the default.
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_SL_TO_VL_TABLE, 0x0503), 0),
            (0, def)
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_SL_TO_VL_TABLE, 0x0109), 0).0,
            0x1C
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_SL_TO_VL_TABLE, 0x0901), 0).0,
            0x1C
        );
        // CA: the modifier is ignored (observed mod 5 → status 0).
        let (mut ca, mut hw) = hca1();
        assert_eq!(
            ask(&mut ca, &mut hw, &get(ATTR_SL_TO_VL_TABLE, 5), 1),
            (0, def)
        );
    }

    #[test]
    fn vlarb_tables() {
        let (mut sw, mut hw) = switch1();
        // smpdump -D 0 0x18 0x10000 / 0x30000: 8 entries (the caps).
        let low = hex("0000 0104 0204 0304 0404 0504 0604 0704");
        let high = hex("0004 0100 0200 0300 0400 0500 0600 0700");
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_VL_ARB_TABLE, 0x1_0000), 0),
            (0, low)
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_VL_ARB_TABLE, 0x3_0001), 0),
            (0, high)
        );
        for m in [0, 0x2_0000, 0x4_0000, 0x5_0000, 0x1_0009] {
            let st = ask(&mut sw, &mut hw, &get(ATTR_VL_ARB_TABLE, m), 0).0;
            assert_eq!(st, STATUS_INVALID_FIELD, "mod {m:#x}");
        }
        let mut d = [0u8; 64];
        d[..4].copy_from_slice(&[0x01, 0x20, 0x02, 0x40]);
        d[20] = 0x77; // beyond the 8 entries: not stored
        assert_eq!(
            ask(&mut sw, &mut hw, &set(ATTR_VL_ARB_TABLE, 0x1_0002, &d), 0),
            (0, d)
        );
        // All 8 entries (16 bytes) are written, entry 10 is not.
        let (_, r) = ask(&mut sw, &mut hw, &get(ATTR_VL_ARB_TABLE, 0x1_0002), 0);
        assert_eq!(&r[..16], &d[..16]);
        assert!(r[16..].iter().all(|&b| b == 0));
        // Port 3 keeps the default.
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_VL_ARB_TABLE, 0x1_0003), 0),
            (0, low)
        );
        let (mut ca, mut hw) = hca1();
        assert_eq!(
            ask(&mut ca, &mut hw, &get(ATTR_VL_ARB_TABLE, 0x3_0005), 1),
            (0, high)
        );
    }

    #[test]
    fn guidinfo() {
        let (mut sw, mut hw) = switch1();
        // smpdump -D 0 0x14 0 / -D 0,1 0x14 0.
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_GUID_INFO, 0), 0),
            (0, hex("0000 0000 0020 0000"))
        );
        let (mut ca, mut hw) = hca1();
        assert_eq!(
            ask(&mut ca, &mut hw, &get(ATTR_GUID_INFO, 0), 1),
            (0, hex("0000 0000 0010 0001"))
        );
        assert_eq!(
            ask(&mut ca, &mut hw, &get(ATTR_GUID_INFO, 1), 1),
            (0, [0; 64])
        );
        assert_eq!(
            ask(&mut ca, &mut hw, &set(ATTR_GUID_INFO, 0, &[0x55; 64]), 1),
            (STATUS_METHOD_UNSUPPORTED, hex("0000 0000 0010 0001"))
        );
    }

    #[test]
    fn lft_blocks() {
        let (mut sw, mut hw) = switch1();
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_LINEAR_FWD_TABLE, 0), 0),
            (0, [0xFF; 64])
        );
        let mut e = [0xFFu8; 64];
        e[1] = 0; // LID 129 → port 0
        e[2] = 3; // LID 130 → port 3
        let (st, r) = ask(&mut sw, &mut hw, &set(ATTR_LINEAR_FWD_TABLE, 2, &e), 0);
        assert_eq!((st, r), (0, e));
        assert_eq!(
            hw.writes,
            vec![HwWrite::LftBlock {
                block: 2,
                entries: e
            }]
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_LINEAR_FWD_TABLE, 2), 0),
            (0, e)
        );
        assert_eq!((sw.lft()[129], sw.lft()[130]), (0, 3));
        // LinearFDBCap 30720 = 480 blocks.
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_LINEAR_FWD_TABLE, 479), 0).0,
            0
        );
        let st = ask(&mut sw, &mut hw, &set(ATTR_LINEAR_FWD_TABLE, 480, &e), 0).0;
        assert_eq!(st, STATUS_INVALID_FIELD);
        assert_eq!(hw.writes.len(), 1);
        // init_writes: port-0 registers (LID, LMC, MasterSMLID, SL, the
        // M_Key state), LinearFDBTop and the one block written; the 479
        // blocks of 0xFF are what the LFT reads after reset.
        let w = sw.init_writes();
        assert_eq!(w.len(), 5 + 1 + 1);
        assert!(w.contains(&HwWrite::LftBlock {
            block: 2,
            entries: e
        }));
    }

    #[test]
    fn mft_blocks() {
        let (mut sw, mut hw) = switch1();
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_MCAST_FWD_TABLE, 0), 0),
            (0, [0; 64])
        );
        let mut d = [0u8; 64];
        d[0..2].copy_from_slice(&0x0006u16.to_be_bytes()); // MLID 0xC020: ports 1, 2
        assert_eq!(
            ask(&mut sw, &mut hw, &set(ATTR_MCAST_FWD_TABLE, 1, &d), 0),
            (0, d)
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_MCAST_FWD_TABLE, 1), 0),
            (0, d)
        );
        // 8 ports: one port mask; position 1 or block ≥ 32 read as zero,
        // status 0, and are not stored (ibsim).
        let pos1 = 0x1000_0001;
        assert_eq!(
            ask(&mut sw, &mut hw, &set(ATTR_MCAST_FWD_TABLE, pos1, &d), 0),
            (0, [0; 64])
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_MCAST_FWD_TABLE, 32), 0),
            (0, [0; 64])
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_MCAST_FWD_TABLE, 1), 0),
            (0, d)
        );
        // 16 ports: two masks, stored apart.
        let mut big = NodeSma::new(NodeIdentity::switch(16, 0x20_0000, "s", 64));
        let mut hw = FakeHw::new(16, &[]);
        assert_eq!(
            ask(&mut big, &mut hw, &set(ATTR_MCAST_FWD_TABLE, pos1, &d), 0),
            (0, d)
        );
        assert_eq!(
            ask(&mut big, &mut hw, &get(ATTR_MCAST_FWD_TABLE, 1), 0),
            (0, [0; 64])
        );
        assert_eq!(
            ask(&mut big, &mut hw, &get(ATTR_MCAST_FWD_TABLE, pos1), 0),
            (0, d)
        );
    }

    #[test]
    fn mlnx_ext_port_info() {
        let (mut sw, mut hw) = switch1();
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_MLNX_EXT_PORT_INFO, 1), 0),
            (0, [0; 64])
        );
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_MLNX_EXT_PORT_INFO, 9), 0).0,
            0x1C
        );
        let d = [0x3Cu8; 64];
        ask(&mut sw, &mut hw, &set(ATTR_MLNX_EXT_PORT_INFO, 1, &d), 0);
        assert_eq!(
            ask(&mut sw, &mut hw, &get(ATTR_MLNX_EXT_PORT_INFO, 1), 0),
            (0, d)
        );
    }

    // ---- statuses, methods, headers ----

    #[test]
    fn error_statuses() {
        let (mut sw, mut hw) = switch1();
        // Set of a read-only attribute: 0x0008 with the attribute's data
        // (ibspec §6: observed Set NodeInfo → 0x0008).
        let (st, d) = ask(&mut sw, &mut hw, &set(ATTR_NODE_INFO, 0, &[0x55; 64]), 0);
        assert_eq!(st, STATUS_METHOD_UNSUPPORTED);
        assert_eq!(&d[12..20], &[0, 0, 0, 0, 0, 0x20, 0, 0]);
        let st = ask(&mut sw, &mut hw, &set(ATTR_NODE_DESC, 0, &[0x55; 64]), 0).0;
        assert_eq!(st, STATUS_METHOD_UNSUPPORTED);
        // Other methods.
        let send = mad::dr_request(METHOD_SEND, ATTR_PORT_INFO, 1, 1, &[1]);
        assert_eq!(ask(&mut sw, &mut hw, &send, 0).0, STATUS_METHOD_UNSUPPORTED);
        // Attributes the SMA does not have.
        for a in [ATTR_LED_INFO, ATTR_RANDOM_FWD_TABLE, ATTR_NOTICE, 0x1234] {
            let st = ask(&mut sw, &mut hw, &get(a, 0), 0).0;
            assert_eq!(st, STATUS_ATTR_UNSUPPORTED, "attr {a:#x}");
        }
        // Switch-only attributes on a CA (observed 0x800c).
        let (mut ca, mut hw) = hca1();
        for a in [
            ATTR_SWITCH_INFO,
            ATTR_LINEAR_FWD_TABLE,
            ATTR_MCAST_FWD_TABLE,
        ] {
            assert_eq!(
                ask(&mut ca, &mut hw, &get(a, 0), 1).0,
                STATUS_ATTR_UNSUPPORTED
            );
            let st = ask(&mut ca, &mut hw, &set(a, 0, &[0; 64]), 1).0;
            assert_eq!(st, STATUS_ATTR_UNSUPPORTED);
        }
        assert!(hw.writes.is_empty());
    }

    #[test]
    fn dropped_requests() {
        let (mut sw, mut hw) = switch1();
        let ok = get(ATTR_NODE_INFO, 0);
        let mut cases = Vec::new();
        let mut m = ok;
        m[mad::off::METHOD] = METHOD_TRAP_REPRESS;
        cases.push(("TrapRepress", m, 0));
        let mut m = ok;
        m[mad::off::METHOD] = METHOD_GET_RESP;
        cases.push(("GetResp", m, 0));
        let mut m = ok;
        m[mad::off::BASE_VERSION] = 2;
        cases.push(("BaseVersion 2", m, 0));
        let mut m = ok;
        m[mad::off::CLASS_VERSION] = 3;
        cases.push(("ClassVersion 3", m, 0));
        let mut m = ok;
        m[mad::off::MGMT_CLASS] = CLASS_PERF;
        cases.push(("PerfMgt class", m, 0));
        cases.push(("SMInfo", get(ATTR_SM_INFO, 0), 0));
        cases.push(("arrival port 9", ok, 9));
        for (what, m, port) in cases {
            assert!(sw.handle(&m, port, &mut hw).is_none(), "{what}");
        }
        // ibsim accepts ClassVersion ≤ 2.
        let mut m = ok;
        m[mad::off::CLASS_VERSION] = 2;
        assert!(sw.handle(&m, 0, &mut hw).is_some());
        // A CA has no port 0.
        let (mut ca, mut hw) = hca1();
        assert!(ca.handle(&ok, 0, &mut hw).is_none());
        assert!(ca.handle(&ok, 3, &mut hw).is_none());
    }

    #[test]
    fn response_headers() {
        let (mut sw, mut hw) = switch1();
        // Directed route: GetResp, D bit, TID, paths and hop fields kept.
        let mut req = get(ATTR_PORT_INFO, 9);
        req[mad::off::HOP_PTR] = 3;
        req[mad::off::RETURN_PATH + 1] = 4;
        req[mad::off::RETURN_PATH + 2] = 2;
        let r = sw.handle(&req, 0, &mut hw).expect("response");
        assert_eq!(r[mad::off::METHOD], METHOD_GET_RESP);
        assert_eq!(&r[4..6], &[0x80, 0x1C]); // observed "SMP status: 0x801c"
        assert_eq!(&r[6..64], &req[6..64]);
        assert_eq!(&r[128..], &req[128..]);
        // LID routed: no D bit.
        let req = mad::request(CLASS_SUBN_LID, METHOD_GET, ATTR_NODE_INFO, 0, 77);
        let r = sw.handle(&req, 3, &mut hw).expect("response");
        assert_eq!((r[3], &r[4..6]), (METHOD_GET_RESP, &[0u8, 0][..]));
        assert_eq!(mad::tid(&r), 77);
        // LocalPortNum: a LID-routed SMP reaches a switch's port 0 (observed
        // `smpquery nodeinfo 3` → LocalPort 0); a CA's is the arrival port.
        assert_eq!(r[64 + 36], 0);
        let (mut ca, mut hw) = hca1();
        let r = ca.handle(&req, 2, &mut hw).expect("response");
        assert_eq!((&r[4..6], r[64 + 36]), (&[0u8, 0][..], 2));
    }

    #[test]
    fn identity_errors_name_the_node() {
        let t = topo();
        let n = t.node("Switch1").expect("Switch1");
        let e = NodeIdentity::from_topology(n, &t, 100).expect_err("depth 100");
        let msg = format!("{e:#}");
        assert!(msg.contains("Switch1") && msg.contains("100"), "{msg}");
        let mut id = NodeIdentity::ca(2, 1, "c");
        id.links.pop();
        assert!(id.check().is_err());
    }

    #[test]
    fn garbage_never_panics() {
        // Every attribute × method × a spread of modifiers and data, on a
        // switch and a CA: a response or None, never a panic.
        let mods = [
            0,
            1,
            2,
            8,
            9,
            0xFF,
            0x100,
            0x1_0000,
            0x3_0000,
            0x9_0009,
            0x1000_0000,
            u32::MAX,
        ];
        for (mut sma, mut hw, arrival) in [
            {
                let (s, h) = switch1();
                (s, h, 0)
            },
            {
                let (s, h) = hca1();
                (s, h, 1)
            },
        ] {
            for attr in 0..0x40u16 {
                for method in [METHOD_GET, METHOD_SET, METHOD_TRAP, 0x7F] {
                    for &m in &mods {
                        let mut req = mad::dr_request(method, attr, m, 1, &[1]);
                        mad::data_mut(&mut req).fill((attr as u8).wrapping_mul(37));
                        let _ = sma.handle(&req, arrival, &mut hw);
                    }
                }
            }
        }
    }

    #[test]
    fn is_sm_shows_in_capability_mask_and_raises_trap_144() {
        let (mut ca, mut hw) = hca1();
        // No LID and no MasterSMLID yet: the bit changes, no trap (ibsim).
        assert!(ca.set_is_sm(1, true, 7).is_none());
        let d = pi(&mut ca, &mut hw, 1, 1);
        assert_eq!(d[23] & 0x02, 0x02, "IsSM (CapabilityMask bit 1)");
        assert!(ca.set_is_sm(1, false, 7).is_none());
        assert_eq!(pi(&mut ca, &mut hw, 1, 1)[23] & 0x02, 0);
        // LID 2, MasterSMLID 1: a change sends Trap 144; no change, none.
        let mut d = with_state(pi(&mut ca, &mut hw, 1, 1), PORT_STATE_NO_CHANGE);
        d[16..20].copy_from_slice(&[0, 2, 0, 1]);
        assert_eq!(ask(&mut ca, &mut hw, &set(ATTR_PORT_INFO, 1, &d), 1).0, 0);
        let t = ca.set_is_sm(1, true, 0x1234).expect("Trap 144");
        assert!(ca.set_is_sm(1, true, 0x1235).is_none());
        // ibspec §8: LID-routed SubnTrap(Notice); generic, type 4 (info),
        // producer CA (1), trap 144, IssuerLID 2; 12–13 LID, 16–19 the new
        // CapabilityMask (IsSM set), 22–23 CapabilityMask2.
        assert_eq!(mad::class(&t), CLASS_SUBN_LID);
        assert_eq!(mad::method(&t), METHOD_TRAP);
        assert_eq!(mad::attr_id(&t), ATTR_NOTICE);
        assert_eq!(mad::tid(&t), 0x1234);
        let n = mad::data(&t);
        let now = pi(&mut ca, &mut hw, 1, 1);
        assert_eq!(&n[0..8], &[0x84, 0, 0, 1, 0, 144, 0, 2]);
        assert_eq!(&n[12..14], &[0, 2]);
        assert_eq!(&n[16..20], &now[20..24]);
        assert_eq!(n[19] & 0x02, 0x02);
        assert_eq!(&n[20..22], &[0, 0]);
        assert_eq!(&n[22..24], &now[60..62]);
    }
}
