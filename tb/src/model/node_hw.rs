//! The boundary between a node's RTL and the software that manages it:
//! the register writes an SMA asks of the hardware ([`HwWrite`]), the live
//! state it reads ([`NodeHw`]), the key-violation details the QP1 receive
//! path reports ([`KeyViolation`]), and [`NodeAgent`], what
//! [`crate::model::net::Net`] runs on every node. `crate::agents::node_sma::NodeSma` is
//! the agent of every fabric; the fabric itself knows only this trait.

use anyhow::Result;

use crate::proto::mad::Mad;
use crate::proto::topology::{TNode, Topology};

/// Trap numbers of the QP1 key violations (ibspec §8 Notice table).
pub const TRAP_BAD_P_KEY: u16 = 257;
pub const TRAP_BAD_Q_KEY: u16 = 258;

/// The DataDetails of Trap 257/258, from the discarded packet (ibspec §8:
/// Notice bytes 12–13 LID1, 14–15 LID2, 16–19 Key, 20–23 SL(4)/QP1(24),
/// 24–27 QP2, 28–43 GID1, 44–59 GID2). As the qib driver fills them
/// (`qib_bad_pkey`, older `qib_bad_pqkey` for both traps, called from
/// `qib_ud_rcv` with `lrh[3]`, `lrh[1]`, SL, SrcQP, QP number): LID1 = the packet's
/// SLID, LID2 = its DLID, Key = the offending P_Key (in the low 16 bits) or
/// Q_Key, SL = LRH.SL, QP1 = DETH.SrcQP, QP2 = BTH.DestQP; GID1/GID2 = the
/// GRH's SGID/DGID when the packet has one, else 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyViolation {
    pub lid1: u16,
    pub lid2: u16,
    pub key: u32,
    pub sl: u8,
    pub qp1: u32,
    pub qp2: u32,
    pub gid1: [u8; 16],
    pub gid2: [u8; 16],
}

impl KeyViolation {
    /// Into Notice bytes 12..60 (`out` is those 48 bytes).
    pub fn encode(&self, out: &mut [u8]) {
        out[0..2].copy_from_slice(&self.lid1.to_be_bytes());
        out[2..4].copy_from_slice(&self.lid2.to_be_bytes());
        out[4..8].copy_from_slice(&self.key.to_be_bytes());
        let sl_qp1 = (u32::from(self.sl & 0xF) << 28) | (self.qp1 & 0xFF_FFFF);
        out[8..12].copy_from_slice(&sl_qp1.to_be_bytes());
        out[12..16].copy_from_slice(&(self.qp2 & 0xFF_FFFF).to_be_bytes());
        out[16..32].copy_from_slice(&self.gid1);
        out[32..48].copy_from_slice(&self.gid2);
    }

    /// From Notice data (SMP data bytes 0..64).
    pub fn decode(notice: &[u8]) -> KeyViolation {
        let d = &notice[12..60];
        let b32 = |o: usize| u32::from_be_bytes([d[o], d[o + 1], d[o + 2], d[o + 3]]);
        let mut gid1 = [0u8; 16];
        let mut gid2 = [0u8; 16];
        gid1.copy_from_slice(&d[16..32]);
        gid2.copy_from_slice(&d[32..48]);
        KeyViolation {
            lid1: u16::from_be_bytes([d[0], d[1]]),
            lid2: u16::from_be_bytes([d[2], d[3]]),
            key: b32(4),
            sl: (b32(8) >> 28) as u8,
            qp1: b32(8) & 0xFF_FFFF,
            qp2: b32(12) & 0xFF_FFFF,
            gid1,
            gid2,
        }
    }
}

/// A register write the SMA asks the node's hardware for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HwWrite {
    /// Base LID of a CA port or switch port 0.
    PortLid {
        port: u8,
        lid: u16,
    },
    /// LMC of a CA port or switch port 0 (a switch without an LMC register
    /// may ignore it for port 0; the SMA reads the value back itself).
    PortLmc {
        port: u8,
        lmc: u8,
    },
    MasterSmLid {
        port: u8,
        lid: u16,
    },
    MasterSmSl {
        port: u8,
        sl: u8,
    },
    /// Store PortState `state` (3 Armed, 4 Active, 5 ActDefer …); the SMA
    /// has checked the transition.
    PortState {
        port: u8,
        state: u8,
    },
    /// A PortState Set of Down: the link retrains, both ends go to Init
    /// (ibsim also sets the neighbour switch's PortStateChange).
    RetrainLink {
        port: u8,
    },
    /// A PortPhysicalState write that changes it: 3 Disabled (the link
    /// goes down at both ends and stays down) or 2 Polling (the port is
    /// enabled and its link trains); the SMA passes no other value.
    PortPhysState {
        port: u8,
        state: u8,
    },
    /// New active width/speeds of `port` after a LinkWidth/SpeedEnabled
    /// Set; ibsim changes the neighbour's active values too, which the
    /// fabric does with the neighbour's [`NodeAgent::set_link_active`].
    LinkActive {
        port: u8,
        width: u8,
        speed: u8,
        speed_ext: u8,
    },
    /// LFT entries for LIDs 64·block … 64·block+63.
    LftBlock {
        block: u16,
        entries: [u8; 64],
    },
    LinearFdbTop(u16),
    /// SwitchInfo Set with PortStateChange = 1 (write-1-to-clear).
    ClearPortStateChange,
    /// P_KeyTable Set of a port whose QP1 receive path checks P_Keys (a
    /// CA port, switch port 0): entries 32·block … 32·block + n − 1 are
    /// `keys[..n]`. (A switch's external ports have no P_Key check in the
    /// RTL: no write.)
    PkeyBlock {
        port: u8,
        block: u16,
        keys: [u16; 32],
        n: u8,
    },
    /// M_Key, M_KeyProtectBits and M_KeyLeasePeriod of a CA port or switch
    /// port 0 (a PortInfo Set the RTL's M_Key check accepted).
    Mkey {
        port: u8,
        key: u64,
        prot: u8,
        lease: u16,
    },
    /// M_KeyViolations of a CA port or switch port 0 := `value` (a PortInfo
    /// Set writing 0 clears it, as Linux qib does).
    MkeyViolations {
        port: u8,
        value: u16,
    },
}

/// The node's hardware as the SMA sees it (implemented over the RTL).
/// Port numbers are 0..=nports on a switch, 1..=nports on a CA.
pub trait NodeHw {
    /// Current PortState (1 Down … 4 Active), hardware link-down
    /// transitions included. Switch port 0 is Active.
    fn port_state(&self, port: u8) -> u8;
    /// Physical link of an external port is up.
    fn link_up(&self, port: u8) -> bool;
    /// PortState of the port at the other end of the cable, `None` when the
    /// port has no live link (and for switch port 0).
    fn neighbour_state(&self, port: u8) -> Option<u8>;
    /// SwitchInfo.PortStateChange (switches; CAs return false).
    fn port_state_change(&self) -> bool;
    /// PortPhysicalState of an external port was set to Disabled (and not
    /// enabled since).
    fn phys_disabled(&self, _port: u8) -> bool {
        false
    }
    fn write(&mut self, w: HwWrite);
    /// M_KeyProtectBits and M_KeyViolations of a CA port or switch port 0
    /// as the hardware holds them now (its M_Key check counts violations,
    /// the lease expiry clears the protect bits); None: hardware without an
    /// M_Key check (the SMA reports what it wrote).
    fn mkey_state(&self, _port: u8) -> Option<(u8, u16)> {
        None
    }
}

/// The software half of a node, as the fabric drives it: built from the
/// node's topology entry, it answers the SMPs the node's SMI hands it,
/// asks the hardware for register writes, and builds the traps the fabric
/// sends when a port or key event happens.
pub trait NodeAgent: Send {
    /// The agent of `node` in `topo`, whose switch LFT holds `lft_depth`
    /// entries.
    fn for_node(node: &TNode, topo: &Topology, lft_depth: u16) -> Result<Self>
    where
        Self: Sized;
    /// The register writes that put the hardware in the agent's reset
    /// state.
    fn init_writes(&self) -> Vec<HwWrite>;
    /// Answer `req`, which arrived on `arrival_port` (`mkey_mask`: the
    /// RTL's M_Key check asks for PortInfo's M_Key to read as 0). Writes
    /// go to `hw`; `None` is no answer.
    fn handle_smp(
        &mut self,
        req: &Mad,
        arrival_port: u8,
        mkey_mask: bool,
        hw: &mut dyn NodeHw,
    ) -> Option<Mad>;
    /// The other end of `port`'s link changed its active width and speeds
    /// ([`HwWrite::LinkActive`]): take the same.
    fn set_link_active(&mut self, port: u8, width: u8, speed: u8, speed_ext: u8);
    /// An SM starts (`on`) or stops running on `port`; the trap (144) to
    /// send, if any.
    fn set_is_sm(&mut self, port: u8, on: bool, tid: u64) -> Option<Mad>;
    /// Trap 128 (a port's state changed), if the node sends one.
    fn trap128(&self, tid: u64) -> Option<Mad>;
    /// Trap 256 (bad M_Key) for `req`, which arrived on `port`.
    fn trap256(&self, req: &Mad, port: u8, tid: u64) -> Option<Mad>;
    /// Trap 257/258 for a QP1 key violation on `port`.
    fn trap_key_violation(&self, port: u8, trap: u16, v: &KeyViolation, tid: u64) -> Option<Mad>;
}

/// The CA port register writes (`regmap::reg` addresses, in the order the
/// RTL needs them) that carry out `w` on a CA port, as (port, address,
/// value). Nothing for what a CA has not (LFT, SwitchInfo) or what is the
/// fabric's business (retraining a link, the neighbour's width and speeds,
/// PortPhysicalState: the RTL models no PHY). The multiport CA puts each
/// in the port's bank; a one-port CA's registers are the bank itself.
pub fn ca_port_writes(w: &HwWrite) -> Vec<(u8, u8, u32)> {
    use crate::model::regmap::reg;
    match *w {
        HwWrite::PortLid { port, lid } => vec![(port, reg::PORT_LID, lid.into())],
        HwWrite::PortLmc { port, lmc } => vec![(port, reg::PORT_LMC, lmc.into())],
        HwWrite::MasterSmLid { port, lid } => vec![(port, reg::MASTER_SM_LID, lid.into())],
        HwWrite::MasterSmSl { port, sl } => vec![(port, reg::MASTER_SM_SL, sl.into())],
        HwWrite::PortState { port, state } => vec![(port, reg::PORT_STATE, state.into())],
        HwWrite::Mkey {
            port,
            key,
            prot,
            lease,
        } => vec![
            // low word first: the high-word write commits the key
            (port, reg::MKEY_LO, key as u32),
            (port, reg::MKEY_HI, (key >> 32) as u32),
            (port, reg::MKEY_PROT, prot.into()),
            (port, reg::MKEY_LEASE, lease.into()),
        ],
        HwWrite::MkeyViolations { port, value } => vec![(port, reg::MKEY_VIOLS, value.into())],
        HwWrite::PkeyBlock {
            port,
            block,
            keys,
            n,
        } => {
            // The index, then one data write per entry (each steps the index).
            let mut v = vec![(port, reg::PKEY_IDX, u32::from(block) * 32)];
            v.extend(
                keys[..usize::from(n)]
                    .iter()
                    .map(|k| (port, reg::PKEY_DATA, u32::from(*k))),
            );
            v
        }
        HwWrite::LftBlock { .. }
        | HwWrite::LinearFdbTop(_)
        | HwWrite::ClearPortStateChange
        | HwWrite::RetrainLink { .. }
        | HwWrite::LinkActive { .. }
        | HwWrite::PortPhysState { .. } => Vec::new(),
    }
}
