//! Reference model of one channel-adapter port (`ib_ca_top`) at packet level.
//!
//! Written from `shared/reference/ibspec.md` (§1 LRH, §2 BTH/DETH, §3 CRCs,
//! §4 MAD/SMP, §5 directed-route rules, §6 SMI/GSI validation, §7 methods,
//! §11 VL15 buffers) and the design decisions the project documents
//! (`docs/decisions.md`, `docs/arch.md`): a packet is counted
//! once, at the first check it fails, in the order link checks → SMI checks
//! → VL15 buffer full → no SM receive WQE (see [`default_checks`]); the GSI
//! checks on the data VLs;
//! hop count 0 directed-route SMPs posted by the SM are local.
//!
//! Receive: [`CaModel::rx`] takes a wire packet (LRH..VCRC, exactly the bytes
//! between two `tlast`s) and the dynamic state the prediction depends on
//! ([`RxEnv`]) and returns where the packet goes (SMA, SM, data RX with or
//! without the discard flag, or nowhere) with the exact bytes and sideband,
//! and the counter changes. The checks are an ordered list of named
//! [`RxCheck`]s per path ([`Path::Vl15`], [`Path::Data`]); a later check
//! (M_Key, P_Key/Q_Key) is inserted by name with [`CaModel::insert_check`].
//!
//! Send: [`CaModel::tx`] takes what the SMA (response + the request's
//! addresses), the SM (request + address handle) or the trap source hands the
//! send engine and returns the wire packet (LRH..VCRC) or the reason it never
//! reaches the wire (directed-route discard, local hop-count-0 SMP).

use crate::model::device::{AddressHandle, SmiMeta};
use crate::proto::crc;
use crate::proto::mad::Mad;
use crate::proto::packet::consts::*;
use crate::proto::packet::{Bth, Deth, Lrh, Packet};

use super::{Ctr, CtrDelta};

/// The port configuration the RTL holds in its registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortConfig {
    pub lid: u16,
    pub lmc: u8,
    pub port_state: u8,
    pub master_sm_lid: u16,
    pub master_sm_sl: u8,
    /// The port's number (`ib_ca_top` PortNum, 1 for a one-port CA).
    pub port_num: u8,
    /// The port's P_Key table (PartitionCap entries) and the index the next
    /// entry write goes to.
    pub pkeys: [u16; PKEY_ENTRIES],
    pub pkey_idx: u8,
}

/// P_Key table size of a CA port: NodeInfo.PartitionCap
/// (`node_sma::CA_PARTITION_CAP`).
pub const PKEY_ENTRIES: usize = crate::agents::node_sma::CA_PARTITION_CAP as usize;

/// The default P_Key table: entry 0 the default partition 0xFFFF, the rest
/// 0 (ibspec §10 defaults; §2 default P_Key 0xFFFF).
const fn default_pkeys() -> [u16; PKEY_ENTRIES] {
    let mut t = [0; PKEY_ENTRIES];
    t[0] = 0xFFFF;
    t
}

impl Default for PortConfig {
    /// The state after reset with the link up: no LID, PortState Init.
    fn default() -> Self {
        PortConfig {
            lid: 0,
            lmc: 0,
            port_state: PORT_STATE_INIT,
            master_sm_lid: 0,
            master_sm_sl: 0,
            port_num: 1,
            pkeys: default_pkeys(),
            pkey_idx: 0,
        }
    }
}

impl PortConfig {
    /// DLID is one of the port's LIDs: base LID … base + 2^LMC − 1 (ibspec §1).
    pub fn owns(&self, dlid: u16) -> bool {
        let hi = u32::from(self.lid) + (1u32 << self.lmc.min(LMC_MAX)) - 1;
        u32::from(dlid) >= u32::from(self.lid) && u32::from(dlid) <= hi
    }
}

/// Dynamic state a receive prediction depends on, which only the timing of
/// the RTL decides (the scoreboard supplies it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxEnv {
    /// Every usable slot of the VL15 RX buffer is taken when the SMP arrives.
    pub vl15_full: bool,
    /// A receive WQE is posted for the SM when the MAD is dispatched.
    pub sm_wqe: bool,
}

impl Default for RxEnv {
    fn default() -> Self {
        RxEnv {
            vl15_full: false,
            sm_wqe: true,
        }
    }
}

/// Where a received packet goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RxOut {
    /// The SMA receive interface: the MAD (hop pointer and return path as
    /// the directed-route receive rules leave them) and its sideband.
    Sma { meta: SmiMeta, mad: Mad },
    /// The SM receive interface.
    Sm { meta: SmiMeta, mad: Mad },
    /// The data RX port, every byte as received; `discard` = `drx_tuser` on
    /// the last beat.
    Drx { bytes: Vec<u8>, discard: bool },
    /// Nothing comes out.
    Dropped,
}

/// The prediction for one received packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxPrediction {
    pub out: RxOut,
    pub ctr: CtrDelta,
    /// The check that rejected the packet (its name), or "accept".
    pub verdict: &'static str,
}

/// Which receive path a check belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// Every packet, before the VL split (the link layer).
    Link,
    /// LRH.VL = 15 (the SMI).
    Vl15,
    /// Every other VL (the GSI checks).
    Data,
}

/// A packet under receive: its bytes and the fields the checks read, plus
/// the directed-route results the DR check writes.
#[derive(Debug, Clone)]
pub struct RxCtx<'a> {
    pub bytes: &'a [u8],
    pub cfg: &'a PortConfig,
    pub env: &'a RxEnv,
    /// MAD as it will be delivered (hop pointer and return path patched).
    pub mad: Mad,
    pub hop_ptr: u8,
    pub to_sm: bool,
}

impl RxCtx<'_> {
    /// Byte `i`, 0 past the end ("fields a short packet lacks read as 0").
    pub fn b(&self, i: usize) -> u8 {
        self.bytes.get(i).copied().unwrap_or(0)
    }
    pub fn be16(&self, i: usize) -> u16 {
        u16::from_be_bytes([self.b(i), self.b(i + 1)])
    }
    pub fn be24(&self, i: usize) -> u32 {
        u32::from_be_bytes([0, self.b(i), self.b(i + 1), self.b(i + 2)])
    }
    pub fn be32(&self, i: usize) -> u32 {
        u32::from_be_bytes([self.b(i), self.b(i + 1), self.b(i + 2), self.b(i + 3)])
    }
    pub fn vl(&self) -> u8 {
        self.b(0) >> 4
    }
    pub fn lver(&self) -> u8 {
        self.b(0) & 0x0F
    }
    pub fn sl(&self) -> u8 {
        self.b(1) >> 4
    }
    pub fn lnh(&self) -> u8 {
        self.b(1) & 3
    }
    pub fn dlid(&self) -> u16 {
        self.be16(2)
    }
    pub fn pkt_len(&self) -> usize {
        usize::from(self.be16(4) & 0x07FF)
    }
    pub fn slid(&self) -> u16 {
        self.be16(6)
    }
    /// Offset of the BTH: after the LRH, and after a GRH with LNH 3.
    pub fn bth(&self) -> usize {
        if self.lnh() == LNH_IBA_GLOBAL {
            LRH_BYTES + GRH_BYTES
        } else {
            LRH_BYTES
        }
    }
    pub fn opcode(&self) -> u8 {
        self.b(self.bth())
    }
    pub fn pad_cnt(&self) -> u8 {
        (self.b(self.bth() + 1) >> 4) & 3
    }
    pub fn tver(&self) -> u8 {
        self.b(self.bth() + 1) & 0x0F
    }
    pub fn dest_qp(&self) -> u32 {
        self.be24(self.bth() + 5)
    }
    pub fn p_key(&self) -> u16 {
        self.be16(self.bth() + 2)
    }
    pub fn q_key(&self) -> u32 {
        self.be32(self.bth() + BTH_BYTES)
    }
    /// Offset of the MAD.
    pub fn mad_off(&self) -> usize {
        self.bth() + BTH_BYTES + DETH_BYTES
    }
    pub fn base_version(&self) -> u8 {
        self.b(self.mad_off())
    }
    pub fn mgmt_class(&self) -> u8 {
        self.b(self.mad_off() + 1)
    }
}

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Rejected: counted in this counter, nothing delivered (VL15) or
    /// delivered with the discard flag (data VLs).
    Fail(Ctr),
}

/// One named receive check.
#[derive(Clone, Copy)]
pub struct RxCheck {
    pub name: &'static str,
    pub path: Path,
    pub run: fn(&mut RxCtx) -> Verdict,
}

impl std::fmt::Debug for RxCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({:?})", self.name, self.path)
    }
}

const GRH_BYTES: usize = 40;
/// PktLen of a GMP behind a GRH (72 + 40/4).
const GMP_GRH_PKT_LEN: usize = 82;

fn fail_if(c: bool, ctr: Ctr) -> Verdict {
    if c {
        Verdict::Fail(ctr)
    } else {
        Verdict::Pass
    }
}

// ---- link layer (ibspec §1, §3.2; order: docs/arch.md ib_link_rx) ----

/// Length: the packet is LRH..ICRC (PktLen words) + the 2-byte VCRC, and at
/// least an LRH + BTH + ICRC (6 words). Truncated, oversized-for-its-PktLen
/// and wrong-PktLen packets fail here.
fn link_len(c: &mut RxCtx) -> Verdict {
    let pl = if c.bytes.len() >= 6 { c.pkt_len() } else { 0 };
    fail_if(
        c.bytes.len() != 4 * pl + VCRC_BYTES || pl < 6,
        Ctr::RxLenErr,
    )
}
fn link_lver(c: &mut RxCtx) -> Verdict {
    fail_if(c.lver() != 0, Ctr::RxLverErr)
}
fn link_lnh(c: &mut RxCtx) -> Verdict {
    fail_if(c.lnh() < LNH_IBA_LOCAL, Ctr::RxLnhErr)
}
fn link_vcrc(c: &mut RxCtx) -> Verdict {
    let n = c.bytes.len();
    let ok = crc::vcrc(&c.bytes[..n - VCRC_BYTES])
        == crc::vcrc_from_wire([c.bytes[n - 2], c.bytes[n - 1]]);
    fail_if(!ok, Ctr::RxVcrcErr)
}

// ---- VL15: buffer, SMI checks (ibspec §5, §6, §11; docs/arch.md smi_rq) ----

/// ibspec §11: an SMP arriving to a full VL15 buffer is discarded (VL15Dropped).
fn vl15_full(c: &mut RxCtx) -> Verdict {
    fail_if(c.env.vl15_full, Ctr::Vl15Dropped)
}
/// ibspec §6: SMPs are received in Init, Armed, Active only.
fn smi_port_down(c: &mut RxCtx) -> Verdict {
    fail_if(c.cfg.port_state == PORT_STATE_DOWN, Ctr::SmiPortDown)
}
/// ICRC of an SMP-shaped packet (LNH 2, PktLen 72); other shapes are
/// rejected by the header check.
fn smi_icrc(c: &mut RxCtx) -> Verdict {
    if c.lnh() != LNH_IBA_LOCAL || c.pkt_len() != usize::from(SMP_PKT_LEN) {
        return Verdict::Pass;
    }
    let i = SMP_PKT_BYTES - ICRC_BYTES;
    let want = crc::icrc(&c.bytes[..i]);
    let got = crc::icrc_from_wire([c.b(i), c.b(i + 1), c.b(i + 2), c.b(i + 3)]);
    fail_if(want != got, Ctr::SmiIcrcErr)
}
/// ibspec §6 SMP validation: local UD SEND Only to QP0 carrying one MAD of
/// BaseVersion 1 and an SM class.
fn smi_bad_hdr(c: &mut RxCtx) -> Verdict {
    let bad = c.lnh() != LNH_IBA_LOCAL
        || c.opcode() != OPCODE_UD_SEND_ONLY
        || c.tver() != 0
        || c.dest_qp() != QP0
        || c.pkt_len() != usize::from(SMP_PKT_LEN)
        || c.base_version() != BASE_VERSION
        || !matches!(c.mgmt_class(), CLASS_SUBN_LID | CLASS_SUBN_DR);
    fail_if(bad, Ctr::SmiBadHdr)
}
/// ibspec §1, §2 ([qib_ud]): a LID-routed SMP must be to one of the port's
/// LIDs, the port must have a LID, and its SLID must not be permissive; a
/// directed-route SMP to the permissive DLID or one of the port's LIDs.
fn smi_lid(c: &mut RxCtx) -> Verdict {
    let dlid = c.dlid();
    let bad = if c.mgmt_class() == CLASS_SUBN_LID {
        !c.cfg.owns(dlid) || c.cfg.lid == 0 || c.slid() == PERMISSIVE_LID
    } else {
        dlid != PERMISSIVE_LID && !c.cfg.owns(dlid)
    };
    fail_if(bad, Ctr::SmiLidErr)
}

/// Outcome of the directed-route rules at a CA.
enum Dr {
    Discard,
    /// Deliver with this hop pointer (and the return-path write, if any).
    Deliver(u8),
}

/// ibspec §5 receive rules (`smi_handle_dr_smp_recv`, is_switch = 0, N = 1)
/// followed by the disposition (`smi_check_forward_dr_smp`, then the send
/// rules and `smi_check_local_smp` for SEND); a CA never forwards.
fn dr_receive(m: &mut Mad, p: u8) -> Dr {
    let hc = m[7];
    let hp = m[6];
    let d = m[4] & 0x80 != 0;
    let dr_slid = u16::from_be_bytes([m[32], m[33]]);
    let dr_dlid = u16::from_be_bytes([m[34], m[35]]);
    if hc >= SMP_MAX_PATH_HOPS {
        return Dr::Discard; // C14-6
    }
    if !d {
        if (hc != 0 && hp == 0) || (hp > 0 && hp < hc) {
            // the sender should have incremented; an intermediate hop is
            // for switches only
            Dr::Discard
        } else if hp == hc {
            // receive: RP[hp] := P; accept iff DrDLID permissive (CA);
            // disposition SEND; send rule hp = hc: hp++; then hp = hc+1 → SMA.
            if dr_dlid != PERMISSIVE_LID {
                return Dr::Discard;
            }
            if hc != 0 {
                m[RETURN_PATH + usize::from(hp)] = p;
            }
            Dr::Deliver(hp + 1)
        } else if u16::from(hp) == u16::from(hc) + 1 {
            Dr::Deliver(hp) // SEND, send rule hp = hc+1: no change → SMA
        } else {
            Dr::Discard
        }
    } else if hc != 0 && u16::from(hp) == u16::from(hc) + 1 {
        // C14-13:1: hp−−, accept iff RP[hp] = P; then hp = hc: FORWARD when
        // hc ≥ 2 (a CA discards), hp = 1: DrSLID permissive → LOCAL, else
        // SEND, whose send rule (hp = 1, CA) needs DrSLID permissive → discard.
        let hp = hp - 1;
        if m[RETURN_PATH + usize::from(hp)] != p || hp >= 2 || dr_slid != PERMISSIVE_LID {
            return Dr::Discard;
        }
        Dr::Deliver(hp)
    } else if hp >= 2 && hp <= hc {
        Dr::Discard
    } else if hp == 1 {
        // C14-13:3: DrSLID permissive → hp−− and LOCAL; else switch only.
        if dr_slid == PERMISSIVE_LID {
            Dr::Deliver(0)
        } else {
            Dr::Discard
        }
    } else if hp == 0 {
        Dr::Deliver(0)
    } else {
        Dr::Discard
    }
}

const RETURN_PATH: usize = 192;
const INITIAL_PATH: usize = 128;

fn smi_dr(c: &mut RxCtx) -> Verdict {
    if c.mgmt_class() != CLASS_SUBN_DR {
        return Verdict::Pass;
    }
    let p = c.cfg.port_num;
    match dr_receive(&mut c.mad, p) {
        Dr::Discard => Verdict::Fail(Ctr::SmiDrDiscard),
        Dr::Deliver(hp) => {
            c.hop_ptr = hp;
            c.mad[6] = hp;
            Verdict::Pass
        }
    }
}
/// docs/decisions.md "The SM's receive queue": a MAD for the SM that finds no receive
/// WQE posted is discarded and counted in VL15Dropped.
fn sm_no_wqe(c: &mut RxCtx) -> Verdict {
    fail_if(c.to_sm && !c.env.sm_wqe, Ctr::Vl15Dropped)
}

// ---- data VLs: GSI checks (ibspec §2, §3.1, §6; docs/arch.md gsi_rx_check) ----

fn gsi_short_grh(c: &mut RxCtx) -> Verdict {
    fail_if(
        c.lnh() == LNH_IBA_GLOBAL && c.pkt_len() < 16,
        Ctr::GsiBadHdr,
    )
}
/// ICRC over LRH..payload with the variant fields as 1s (ibspec §3.1): with
/// a GRH the whole LRH, GRH TClass, FlowLabel and HopLmt, and BTH.resv8a.
fn data_icrc(c: &mut RxCtx) -> Verdict {
    let end = 4 * c.pkt_len() - ICRC_BYTES;
    let mut v = c.bytes[..end].to_vec();
    let got = crc::icrc_from_wire([c.b(end), c.b(end + 1), c.b(end + 2), c.b(end + 3)]);
    let want = if c.lnh() == LNH_IBA_GLOBAL {
        v[..LRH_BYTES].fill(0xFF);
        let g = LRH_BYTES;
        v[g] |= 0x0F; // TClass 7:4
        v[g + 1] = 0xFF; // TClass 3:0, FlowLabel 19:16
        v[g + 2] = 0xFF;
        v[g + 3] = 0xFF;
        v[g + 7] = 0xFF; // HopLmt
        if v.len() > g + GRH_BYTES + 4 {
            v[g + GRH_BYTES + 4] = 0xFF; // BTH.resv8a
        }
        // byte 12 is GRH.PayLen here, which crc::icrc would mask: the
        // global masks are applied above and the CRC taken unmasked.
        icrc_raw(&v)
    } else {
        crc::icrc(&v)
    };
    fail_if(want != got, Ctr::DataIcrcErr)
}
/// ibspec §6 GMP validation: QP0 only on VL15; QP1 takes one 256-byte MAD
/// in a UD SEND Only with BaseVersion 1 and a class other than the SM
/// classes (the keys are checked after: `gsi_pkey`, `gsi_qkey`).
fn gsi_bad_hdr(c: &mut RxCtx) -> Verdict {
    let glob = c.lnh() == LNH_IBA_GLOBAL;
    if glob && c.b(LRH_BYTES + 6) != 0x1B {
        return Verdict::Fail(Ctr::GsiBadHdr);
    }
    let qp = c.dest_qp();
    if qp == QP0 {
        return Verdict::Fail(Ctr::GsiBadHdr);
    }
    if qp == QP1 {
        let len = if glob {
            GMP_GRH_PKT_LEN
        } else {
            usize::from(SMP_PKT_LEN)
        };
        let bad = c.opcode() != OPCODE_UD_SEND_ONLY
            || c.tver() != 0
            || c.pad_cnt() != 0
            || c.pkt_len() != len
            || c.base_version() != BASE_VERSION
            || matches!(c.mgmt_class(), CLASS_SUBN_LID | CLASS_SUBN_DR);
        return fail_if(bad, Ctr::GsiBadHdr);
    }
    Verdict::Pass
}

/// ibspec §2 (Linux rxe `pkey_match`, IBA 10.9.3): a QP1 packet's P_Key
/// must match an entry of the port's table — the low 15 bits equal and not
/// 0, and at least one of the two a full member (bit 15); else P_KeyViolations.
fn gsi_pkey(c: &mut RxCtx) -> Verdict {
    if c.dest_qp() != QP1 {
        return Verdict::Pass;
    }
    fail_if(!super::pkey_match(&c.cfg.pkeys, c.p_key()), Ctr::PkeyViol)
}
/// ibspec §2: QP1 takes only the GSI Q_Key 0x80010000; else Q_KeyViolations.
fn gsi_qkey(c: &mut RxCtx) -> Verdict {
    fail_if(c.dest_qp() == QP1 && c.q_key() != QP1_Q_KEY, Ctr::QkeyViol)
}

/// CRC-32 (the ICRC engine) with no masking.
fn icrc_raw(b: &[u8]) -> u32 {
    const E: ::crc::Crc<u32> = ::crc::Crc::<u32>::new(&::crc::CRC_32_ISO_HDLC);
    E.checksum(b)
}

/// The checks of every path in order; a packet is counted once, at the
/// first check it fails. VL15: the link checks, then the SMI's validation,
/// then the resource checks (no free VL15 RX slot, no SM receive WQE), as
/// [qib_ud] `qib_ud_rcv` orders them (ibspec §6: validation drops first,
/// `n_vl15_dropped` only for an SMP it would otherwise have taken): an SMP
/// that fails a check counts in that check's counter even when the buffer is
/// full, and VL15Dropped counts only SMPs lost for lack of room.
pub fn default_checks() -> Vec<RxCheck> {
    let c = |name, path, run| RxCheck { name, path, run };
    vec![
        c("link_len", Path::Link, link_len),
        c("link_lver", Path::Link, link_lver),
        c("link_lnh", Path::Link, link_lnh),
        c("link_vcrc", Path::Link, link_vcrc),
        c("smi_port_down", Path::Vl15, smi_port_down),
        c("smi_icrc", Path::Vl15, smi_icrc),
        c("smi_bad_hdr", Path::Vl15, smi_bad_hdr),
        c("smi_lid", Path::Vl15, smi_lid),
        c("smi_dr", Path::Vl15, smi_dr),
        c("vl15_full", Path::Vl15, vl15_full),
        c("sm_no_wqe", Path::Vl15, sm_no_wqe),
        c("gsi_short_grh", Path::Data, gsi_short_grh),
        c("data_icrc", Path::Data, data_icrc),
        c("gsi_bad_hdr", Path::Data, gsi_bad_hdr),
        c("gsi_pkey", Path::Data, gsi_pkey),
        c("gsi_qkey", Path::Data, gsi_qkey),
    ]
}

/// Which source of the send engine a MAD comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxSource {
    Sma,
    Sm,
    Trap,
}

/// What a source hands the send engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxIn {
    pub source: TxSource,
    pub mad: Mad,
    /// SMA responses: the request's sideband (slid, dlid, sl are read).
    pub meta: SmiMeta,
    /// SM requests: the address handle.
    pub ah: AddressHandle,
}

/// Where a MAD handed to the send engine goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxOut {
    /// On the wire, LRH..VCRC.
    Wire(Vec<u8>),
    /// Discarded by the directed-route send rules.
    DrDiscard,
    /// A hop-count-0 directed-route SMP: processed by the host, never sent.
    Local,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxPrediction {
    pub out: TxOut,
    /// Counters of the send engine (SqPkts, SqDrDiscard, SqLocal) and, for a
    /// wire packet, of the link (TxVl15Pkts, TxWords).
    pub ctr: CtrDelta,
}

/// ibspec §5 send rules for a CA (`smi_handle_dr_smp_send`, is_switch = 0):
/// the new hop pointer, or None = discard.
fn dr_send(m: &Mad, p: u8) -> Option<u8> {
    let hc = m[7];
    let hp = m[6];
    let d = m[4] & 0x80 != 0;
    let dr_slid = u16::from_be_bytes([m[32], m[33]]);
    let dr_dlid = u16::from_be_bytes([m[34], m[35]]);
    if hc >= SMP_MAX_PATH_HOPS {
        return None;
    }
    if !d {
        if hc != 0 && hp == 0 {
            (m[INITIAL_PATH + 1] == p).then_some(1)
        } else if hp > 0 && hp < hc {
            None
        } else if hp == hc {
            (dr_dlid == PERMISSIVE_LID).then_some(hp + 1)
        } else if u16::from(hp) == u16::from(hc) + 1 {
            Some(hp)
        } else {
            None
        }
    } else if hc != 0 && u16::from(hp) == u16::from(hc) + 1 {
        (m[RETURN_PATH + usize::from(hp - 1)] == p).then_some(hp - 1)
    } else if hp >= 2 && hp <= hc {
        None
    } else if hp == 1 {
        (dr_slid == PERMISSIVE_LID).then_some(0)
    } else if hp == 0 {
        Some(0)
    } else {
        None
    }
}

/// The reference model of one CA port.
#[derive(Debug, Clone)]
pub struct CaModel {
    pub cfg: PortConfig,
    checks: Vec<RxCheck>,
}

impl Default for CaModel {
    fn default() -> Self {
        Self::new(PortConfig::default())
    }
}

impl CaModel {
    pub fn new(cfg: PortConfig) -> Self {
        CaModel {
            cfg,
            checks: default_checks(),
        }
    }

    /// The receive checks, in order.
    pub fn checks(&self) -> &[RxCheck] {
        &self.checks
    }

    /// Insert a check before the one named `before` (e.g. an M_Key check
    /// before "smi_dr", a P_Key/Q_Key check before "gsi_bad_hdr"); at the end
    /// when no check has that name.
    pub fn insert_check(&mut self, before: &str, check: RxCheck) {
        let i = self
            .checks
            .iter()
            .position(|c| c.name == before)
            .unwrap_or(self.checks.len());
        self.checks.insert(i, check);
    }

    /// Predict one received wire packet (LRH..VCRC).
    pub fn rx(&self, bytes: &[u8], env: &RxEnv) -> RxPrediction {
        let mut ctr = CtrDelta::one(Ctr::RxPkts);
        let mut c = RxCtx {
            bytes,
            cfg: &self.cfg,
            env,
            mad: [0; MAD_BYTES],
            hop_ptr: 0,
            to_sm: false,
        };
        let vl15 = c.vl() == VL15;
        let drx = |discard| RxOut::Drx {
            bytes: bytes.to_vec(),
            discard,
        };
        let fail = |ctr: &mut CtrDelta, k: Ctr, name| {
            ctr.add(k, 1);
            RxPrediction {
                out: if vl15 { RxOut::Dropped } else { drx(true) },
                ctr: *ctr,
                verdict: name,
            }
        };
        for chk in self.checks.iter().filter(|k| k.path == Path::Link) {
            if let Verdict::Fail(k) = (chk.run)(&mut c) {
                return fail(&mut ctr, k, chk.name);
            }
        }
        ctr.add(Ctr::RxWords, c.pkt_len() as u32);
        if vl15 {
            let o = c.mad_off();
            for (i, m) in c.mad.iter_mut().enumerate() {
                *m = bytes.get(o + i).copied().unwrap_or(0);
            }
            let method = c.mad[3];
            let attr = u16::from_be_bytes([c.mad[16], c.mad[17]]);
            c.to_sm = crate::proto::mad::smi_to_sm(method, attr);
        } else {
            ctr.add(Ctr::RxDataPkts, 1);
        }
        let path = if vl15 { Path::Vl15 } else { Path::Data };
        for chk in self.checks.iter().filter(|k| k.path == path) {
            if let Verdict::Fail(k) = (chk.run)(&mut c) {
                return fail(&mut ctr, k, chk.name);
            }
        }
        if !vl15 {
            if c.dest_qp() == QP1 {
                ctr.add(Ctr::GsiGmps, 1);
            }
            return RxPrediction {
                out: drx(false),
                ctr,
                verdict: "accept",
            };
        }
        let dr = c.mgmt_class() == CLASS_SUBN_DR;
        let meta = SmiMeta {
            slid: c.slid(),
            dlid: c.dlid(),
            sl: c.sl(),
            port: self.cfg.port_num,
            mgmt_class: c.mgmt_class(),
            hop_ptr: if dr { c.hop_ptr } else { 0 },
            hop_cnt: if dr { c.mad[7] } else { 0 },
            // the M_Key check passes every SMP while the port M_Key is 0 (reset;
            // the models hold no M_Key state: the soaks never set one)
            mkey_viol: false,
            mkey_mask: false,
        };
        let out = if c.to_sm {
            ctr.add(Ctr::SmiToSm, 1);
            RxOut::Sm { meta, mad: c.mad }
        } else {
            ctr.add(Ctr::SmiToSma, 1);
            RxOut::Sma { meta, mad: c.mad }
        };
        RxPrediction {
            out,
            ctr,
            verdict: "accept",
        }
    }

    /// Predict the send engine's handling of one MAD; `psn` is the PSN the
    /// packet gets if it is sent (the count of packets sent before it).
    pub fn tx(&self, t: &TxIn, psn: u32) -> TxPrediction {
        let mut mad = t.mad;
        let mut ctr = CtrDelta::default();
        if mad[1] == CLASS_SUBN_DR {
            let d = mad[4] & 0x80 != 0;
            let hc = mad[7];
            match dr_send(&mad, self.cfg.port_num) {
                None => {
                    ctr.add(Ctr::SqDrDiscard, 1);
                    return TxPrediction {
                        out: TxOut::DrDiscard,
                        ctr,
                    };
                }
                // ibspec §5, the originator: after the send rules,
                // smi_check_local_smp (D = 0, hp = hc + 1) or
                // smi_check_local_returning_smp (D = 1, hp = 0) hands the SMP
                // to the local node (hop count 0 among them)
                Some(hp) if (!d && u16::from(hp) == u16::from(hc) + 1) || (d && hp == 0) => {
                    ctr.add(Ctr::SqLocal, 1);
                    return TxPrediction {
                        out: TxOut::Local,
                        ctr,
                    };
                }
                Some(hp) => mad[6] = hp,
            }
        }
        let own = if self.cfg.lid == 0 {
            PERMISSIVE_LID
        } else {
            self.cfg.lid
        };
        let (dlid, slid, sl) = match t.source {
            // a response goes back where the request came from
            TxSource::Sma => (t.meta.slid, t.meta.dlid, t.meta.sl),
            TxSource::Sm => {
                let bits = u16::from(t.ah.path_bits) & ((1u16 << self.cfg.lmc.min(LMC_MAX)) - 1);
                let slid = if self.cfg.lid == 0 {
                    PERMISSIVE_LID
                } else {
                    self.cfg.lid | bits
                };
                (t.ah.dlid, slid, t.ah.sl)
            }
            TxSource::Trap => (self.cfg.master_sm_lid, own, self.cfg.master_sm_sl),
        };
        let bytes = Packet::new(
            Lrh::local(VL15, sl & 0x0F, dlid, slid),
            Bth::ud_send(QP0, psn & 0xFF_FFFF),
            Deth::new(0, QP0),
            mad,
        )
        .to_bytes();
        ctr.add(Ctr::SqPkts, 1);
        ctr.add(Ctr::TxVl15Pkts, 1);
        ctr.add(Ctr::TxWords, u32::from(SMP_PKT_LEN));
        TxPrediction {
            out: TxOut::Wire(bytes),
            ctr,
        }
    }
}

impl CaModel {
    /// A data-VL packet from the host's data TX port (LRH..ICRC) on the
    /// wire: unchanged, with the VCRC appended (ibspec §3.2: the VCRC covers
    /// LRH..ICRC and is made per link). Counts TxDataPkts and TxWords.
    pub fn tx_data(&self, bytes: &[u8]) -> TxPrediction {
        let mut w = bytes.to_vec();
        crc::append_vcrc(&mut w);
        let mut ctr = CtrDelta::one(Ctr::TxDataPkts);
        let pl = bytes
            .get(4..6)
            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]) & 0x07FF);
        ctr.add(Ctr::TxWords, u32::from(pl));
        TxPrediction {
            out: TxOut::Wire(w),
            ctr,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::scenario::vectors::{V1, V2, V3, V4};

    fn ca_cfg() -> PortConfig {
        PortConfig {
            lid: 5,
            lmc: 1,
            ..PortConfig::default()
        }
    }

    /// V1 (a DR Get(NodeInfo) with hp = hc = 1) reaches the SMA with the
    /// receive rules applied: hp 2 = hc + 1, ReturnPath[1] = 1 (ibspec §5 worked trace).
    #[test]
    fn v1_to_sma_with_dr_receive_rules() {
        let m = CaModel::new(ca_cfg());
        let p = m.rx(V1, &RxEnv::default());
        let RxOut::Sma { meta, mad } = &p.out else {
            panic!("{p:?}")
        };
        assert_eq!((meta.hop_ptr, meta.hop_cnt, meta.mgmt_class), (2, 1, 0x81));
        assert_eq!((meta.slid, meta.dlid, meta.port), (0xFFFF, 0xFFFF, 1));
        assert_eq!(mad[6], 2);
        assert_eq!(mad[192 + 1], 1);
        assert_eq!(&mad[..6], &V1[28..34]);
        assert_eq!(p.ctr.get(Ctr::SmiToSma), 1);
        assert_eq!(p.ctr.get(Ctr::RxPkts), 1);
        assert_eq!(p.ctr.get(Ctr::RxWords), 72);
    }

    /// The SMA's answer to V1 (its MAD as received, made a GetResp with the
    /// V2 NodeInfo) is V2 on the wire: hp 2 → 1 by the send rules, PSN 0.
    #[test]
    fn v2_is_the_response_on_the_wire() {
        let m = CaModel::new(ca_cfg());
        let mut mad = [0u8; 256];
        mad.copy_from_slice(&V2[28..284]);
        mad[6] = 2; // as the SMA got it from the receive rules
        let t = TxIn {
            source: TxSource::Sma,
            mad,
            meta: SmiMeta {
                slid: 0xFFFF,
                dlid: 0xFFFF,
                ..SmiMeta::default()
            },
            ah: AddressHandle::default(),
        };
        let p = m.tx(&t, 0);
        assert_eq!(p.out, TxOut::Wire(V2.to_vec()));
    }

    /// V2 (a returning DR response, hp 1, DrSLID permissive) goes to the SM
    /// with hp 0; V3/V4 (GMPs on VL0/VL3) pass the GSI checks.
    #[test]
    fn v2_to_sm_v3_v4_good_gmps() {
        let m = CaModel::new(ca_cfg());
        let p = m.rx(V2, &RxEnv::default());
        let RxOut::Sm { meta, .. } = &p.out else {
            panic!("{p:?}")
        };
        assert_eq!(meta.hop_ptr, 0);
        for v in [V3, V4] {
            let p = m.rx(v, &RxEnv::default());
            assert_eq!(
                p.out,
                RxOut::Drx {
                    bytes: v.to_vec(),
                    discard: false
                }
            );
            assert_eq!(p.ctr.get(Ctr::GsiGmps), 1);
            assert_eq!(p.ctr.get(Ctr::RxDataPkts), 1);
        }
        // no WQE: the SM's MAD is dropped and counted once
        let p = m.rx(
            V2,
            &RxEnv {
                sm_wqe: false,
                ..RxEnv::default()
            },
        );
        assert_eq!(p.out, RxOut::Dropped);
        assert_eq!(p.ctr.get(Ctr::Vl15Dropped), 1);
        assert_eq!(p.ctr.get(Ctr::SmiToSm), 0);
    }

    #[test]
    fn insert_check_by_name() {
        let mut m = CaModel::default();
        fn never(_: &mut RxCtx) -> Verdict {
            Verdict::Fail(Ctr::SmiBadHdr)
        }
        m.insert_check(
            "smi_dr",
            RxCheck {
                name: "m_key",
                path: Path::Vl15,
                run: never,
            },
        );
        let names: Vec<&str> = m.checks().iter().map(|c| c.name).collect();
        let i = names.iter().position(|n| *n == "m_key").unwrap();
        assert_eq!(names[i + 1], "smi_dr");
        assert_eq!(m.rx(V1, &RxEnv::default()).verdict, "m_key");
    }
}
