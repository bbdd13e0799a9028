//! Seeded fault generator for a CA port, and the soak that runs good and
//! faulted packets through the RTL under the scoreboard.
//!
//! Every fault class has a name, what it is, and the disposition and counter
//! the spec gives it ([`FaultClass::expect`]; ibspec §1–§7, §11 and the
//! documented counter order), independently of the reference model: the
//! generator checks the model against the class for every packet it makes,
//! and the scoreboard checks the RTL against the model.
//!
//! Packets go back to back at line rate (the wire RX source presents a beat
//! every cycle) unless a phase of the soak asks for idle cycles; every other
//! stream runs a seeded idle/backpressure pattern.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{bail, ensure, Result};

use crate::check::refmodel::ca::{PortConfig, RxEnv, RxOut};
use crate::check::refmodel::Ctr;
use crate::check::scoreboard::CaBench;
use crate::model::device::{AddressHandle, CaPortModel};
use crate::model::stream::{Pattern, Rng};
use crate::proto::mad::{self, Mad};
use crate::proto::packet::consts::*;
use crate::proto::packet::{Bth, Deth, Lrh, Packet};
use crate::proto::pcap::TraceFile;

/// What a fault class must lead to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A received packet: dropped (VL15) or on data RX with the discard flag
    /// (data VLs), counted once in this counter.
    Rx(Ctr),
    /// A MAD handed to the send engine that never reaches the wire.
    Tx(Ctr),
    /// An episode (a state change or a stream pattern), whose packets the
    /// model judges; the counter the episode must move (None: only that
    /// every packet is still handled as predicted).
    Episode(Option<Ctr>),
}

/// The fault classes that apply to a CA port ("egress port
/// out of range" is a switch fault).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultClass {
    BadVcrc,
    BadIcrc,
    LVer,
    GrhOnVl15,
    LnhNotIba,
    PktLenMismatch,
    Truncated,
    Oversized,
    Opcode,
    DestQpOnVl15,
    Vl15ToQp1,
    Qp0OnDataVl,
    Qp1BadPkey,
    Qp1BadQkey,
    Qp1BadIcrc,
    BaseVersion,
    ClassNotSmp,
    DlidNotOurs,
    PermissiveDlidLidRouted,
    HopCount64,
    HopPtrInconsistent,
    SmDrDiscard,
    SmLocal,
    PortDown,
    Vl15Overflow,
    TxBackpressureStorm,
    ResetMidPacket,
    LinkDownMidPacket,
}

impl FaultClass {
    pub const ALL: [FaultClass; 28] = [
        FaultClass::BadVcrc,
        FaultClass::BadIcrc,
        FaultClass::LVer,
        FaultClass::GrhOnVl15,
        FaultClass::LnhNotIba,
        FaultClass::PktLenMismatch,
        FaultClass::Truncated,
        FaultClass::Oversized,
        FaultClass::Opcode,
        FaultClass::DestQpOnVl15,
        FaultClass::Vl15ToQp1,
        FaultClass::Qp0OnDataVl,
        FaultClass::Qp1BadPkey,
        FaultClass::Qp1BadQkey,
        FaultClass::Qp1BadIcrc,
        FaultClass::BaseVersion,
        FaultClass::ClassNotSmp,
        FaultClass::DlidNotOurs,
        FaultClass::PermissiveDlidLidRouted,
        FaultClass::HopCount64,
        FaultClass::HopPtrInconsistent,
        FaultClass::SmDrDiscard,
        FaultClass::SmLocal,
        FaultClass::PortDown,
        FaultClass::Vl15Overflow,
        FaultClass::TxBackpressureStorm,
        FaultClass::ResetMidPacket,
        FaultClass::LinkDownMidPacket,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FaultClass::BadVcrc => "bad_vcrc",
            FaultClass::BadIcrc => "bad_icrc",
            FaultClass::LVer => "lver",
            FaultClass::GrhOnVl15 => "grh_on_vl15",
            FaultClass::LnhNotIba => "lnh_not_iba",
            FaultClass::PktLenMismatch => "pktlen_mismatch",
            FaultClass::Truncated => "truncated",
            FaultClass::Oversized => "oversized",
            FaultClass::Opcode => "opcode",
            FaultClass::DestQpOnVl15 => "destqp_on_vl15",
            FaultClass::Vl15ToQp1 => "vl15_to_qp1",
            FaultClass::Qp0OnDataVl => "qp0_on_data_vl",
            FaultClass::Qp1BadPkey => "qp1_bad_pkey",
            FaultClass::Qp1BadQkey => "qp1_bad_qkey",
            FaultClass::Qp1BadIcrc => "qp1_bad_icrc",
            FaultClass::BaseVersion => "base_version",
            FaultClass::ClassNotSmp => "class_not_smp",
            FaultClass::DlidNotOurs => "dlid_not_ours",
            FaultClass::PermissiveDlidLidRouted => "permissive_dlid_lid_routed",
            FaultClass::HopCount64 => "hop_count_64",
            FaultClass::HopPtrInconsistent => "hop_ptr_inconsistent",
            FaultClass::SmDrDiscard => "sm_dr_discard",
            FaultClass::SmLocal => "sm_local",
            FaultClass::PortDown => "port_down",
            FaultClass::Vl15Overflow => "vl15_overflow",
            FaultClass::TxBackpressureStorm => "tx_backpressure_storm",
            FaultClass::ResetMidPacket => "reset_mid_packet",
            FaultClass::LinkDownMidPacket => "link_down_mid_packet",
        }
    }

    /// What the class does to a packet, in one line (`vl15 soak --list`).
    pub fn meaning(self) -> &'static str {
        use FaultClass::*;
        match self {
            BadVcrc => "a bit flipped under the VCRC",
            BadIcrc => "an SMP whose ICRC does not match",
            LVer => "LRH link version not 0",
            GrhOnVl15 => "an SMP with a GRH (LNH 3) on VL15",
            LnhNotIba => "LRH LNH 0 or 1: no IBA transport header",
            PktLenMismatch => "LRH PktLen disagrees with the packet's length",
            Truncated => "the packet ends early",
            Oversized => "an SMP longer than 256 bytes of MAD",
            Opcode => "an SMP whose BTH opcode is not UD SEND Only",
            DestQpOnVl15 => "a VL15 packet to a QP other than 0",
            Vl15ToQp1 => "a VL15 packet to QP1",
            Qp0OnDataVl => "a QP0 packet on a data VL",
            Qp1BadPkey => "a QP1 GMP whose P_Key matches no table entry",
            Qp1BadQkey => "a QP1 GMP whose Q_Key is not 0x80010000",
            Qp1BadIcrc => "a QP1 GMP whose ICRC does not match",
            BaseVersion => "an SMP whose MAD BaseVersion is not 1",
            ClassNotSmp => "a VL15 MAD of a class other than 0x01 and 0x81",
            DlidNotOurs => "a LID-routed SMP to a LID the port does not own",
            PermissiveDlidLidRouted => "a LID-routed SMP (class 0x01) to the permissive LID",
            HopCount64 => "a directed-route SMP with hop count 64 or more",
            HopPtrInconsistent => "a directed-route SMP whose hop pointer breaks the receive rules",
            SmDrDiscard => "the SM sends a DR SMP whose path does not start at this port",
            SmLocal => "the SM sends a DR SMP that ends at this node: hop count 0, or its path done (processed locally)",
            PortDown => "SMPs while the port is Down",
            Vl15Overflow => "SMPs faster than the SMA drains the VL15 buffer",
            TxBackpressureStorm => "long backpressure on the wire transmit side",
            ResetMidPacket => "a reset in the middle of a packet",
            LinkDownMidPacket => "the link goes down in the middle of a packet",
        }
    }

    /// The disposition [`FaultClass::expect`] gives, in one line.
    pub fn outcome(self) -> String {
        match self.expect() {
            Expect::Rx(c) => format!("dropped, {} +1", c.name()),
            Expect::Tx(c) => format!("not sent, {} +1", c.name()),
            Expect::Episode(Some(c)) => {
                format!("every packet as the model says, {} moves", c.name())
            }
            Expect::Episode(None) => "every packet as the model says".to_string(),
        }
    }

    pub fn from_name(s: &str) -> Option<FaultClass> {
        FaultClass::ALL.iter().copied().find(|c| c.name() == s)
    }

    /// The disposition and counter the spec gives the class.
    pub fn expect(self) -> Expect {
        use FaultClass::*;
        match self {
            // ibspec §3.2: the VCRC covers LRH..ICRC, checked per link
            BadVcrc => Expect::Rx(Ctr::RxVcrcErr),
            // ibspec §3.1: ICRC checked end to end by the SMI
            BadIcrc => Expect::Rx(Ctr::SmiIcrcErr),
            // ibspec §1: LVer must be 0, receivers reject
            LVer => Expect::Rx(Ctr::RxLverErr),
            // ibspec §6: an SMP is a local packet (LNH 2); the link passes LNH 3
            GrhOnVl15 => Expect::Rx(Ctr::SmiBadHdr),
            // ibspec §1, §6 ([ud_header]): LNH ∉ {2,3} is no IBA transport packet
            LnhNotIba => Expect::Rx(Ctr::RxLnhErr),
            // ibspec §1: PktLen counts LRH..ICRC; a packet of another length is malformed
            PktLenMismatch | Truncated => Expect::Rx(Ctr::RxLenErr),
            // ibspec §6, §11: an SMP is 256 bytes of MAD, PktLen 72
            Oversized => Expect::Rx(Ctr::SmiBadHdr),
            // ibspec §6: OpCode UD SEND Only, DestQP 0, BaseVersion 1, class 0x01/0x81
            Opcode | DestQpOnVl15 | Vl15ToQp1 | BaseVersion | ClassNotSmp => {
                Expect::Rx(Ctr::SmiBadHdr)
            }
            // ibspec §6 GMP validation: QP0 only on VL15 ("only SMPs use VL15")
            Qp0OnDataVl => Expect::Rx(Ctr::GsiBadHdr),
            // ibspec §2 (rxe check_keys): a QP1 packet's P_Key must match an
            // entry of the port's table, its Q_Key must be 0x80010000
            Qp1BadPkey => Expect::Rx(Ctr::PkeyViol),
            Qp1BadQkey => Expect::Rx(Ctr::QkeyViol),
            // ibspec §3.1: the ICRC is checked end to end, data VLs too
            Qp1BadIcrc => Expect::Rx(Ctr::DataIcrcErr),
            // ibspec §1 (LMC), §2 ([qib_ud] permissive DLID only for class 0x81)
            DlidNotOurs | PermissiveDlidLidRouted => Expect::Rx(Ctr::SmiLidErr),
            // ibspec §5: C14-6 and the receive rules
            HopCount64 | HopPtrInconsistent => Expect::Rx(Ctr::SmiDrDiscard),
            // ibspec §5 send rules: IP[1] must be the sending port
            SmDrDiscard => Expect::Tx(Ctr::SqDrDiscard),
            // docs/decisions.md "Hop count 0": hop count 0 DR SMPs from the SM are processed locally
            SmLocal => Expect::Tx(Ctr::SqLocal),
            // ibspec §6: SMPs are received only in Init, Armed, Active
            PortDown => Expect::Episode(Some(Ctr::SmiPortDown)),
            // ibspec §11: an SMP arriving to a full VL15 buffer is discarded
            Vl15Overflow => Expect::Episode(Some(Ctr::Vl15Dropped)),
            TxBackpressureStorm | ResetMidPacket => Expect::Episode(None),
            // the cut packet and the next one reach the RTL as one packet of
            // the wrong length (the receive side does not see the link)
            LinkDownMidPacket => Expect::Episode(Some(Ctr::RxLenErr)),
        }
    }

    /// Classes that are one wire packet.
    pub fn is_rx(self) -> bool {
        matches!(self.expect(), Expect::Rx(_))
    }
}

/// The port the generator talks to.
#[derive(Debug, Clone, Copy)]
pub struct GenCfg {
    pub lid: u16,
    pub lmc: u8,
    /// The port the packets arrive on (a returning DR SMP names it in its
    /// ReturnPath).
    pub port: u8,
}

/// A good packet kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Good {
    /// LID-routed SubnGet to one of the port's LIDs → SMA.
    LidGet,
    /// Directed-route SubnGet at the end of its path (hp = hc, C14-9:3) →
    /// SMA.
    DrGet,
    /// Directed-route SubnGet one past the end of its path (hp = hc + 1,
    /// C14-9:4) → SMA; ReturnPath[hc] names this port, so that its
    /// response leaves by it.
    DrGetPast,
    /// A returning DR GetResp → SM: hp 1 (C14-13:3), hp 0 (C14-13:4), or
    /// hc 1, hp 2 and ReturnPath[1] this port (C14-13:1).
    DrResp,
    /// LID-routed GetResp, Trap or SMInfo Get → SM.
    LidToSm,
    /// A GMP on a data VL → data RX.
    Gmp,
    /// A UD packet to QP 2 on a data VL → data RX.
    Qp2,
}

/// The seeded generator.
pub struct Gen {
    pub rng: Rng,
    pub cfg: GenCfg,
    tid: u64,
}

impl Gen {
    pub fn new(seed: u64, cfg: GenCfg) -> Self {
        Gen {
            rng: Rng::new(seed),
            cfg,
            tid: seed << 32,
        }
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n.max(1)
    }

    fn tid(&mut self) -> u64 {
        self.tid = self.tid.wrapping_add(1);
        self.tid
    }

    fn our_lid(&mut self) -> u16 {
        self.cfg.lid + self.below(1 << self.cfg.lmc) as u16
    }

    fn other_lid(&mut self) -> u16 {
        loop {
            let l = 1 + self.below(0xBFFE) as u16;
            if !(l >= self.cfg.lid && l < self.cfg.lid + (1 << self.cfg.lmc)) {
                return l;
            }
        }
    }

    fn attr(&mut self) -> u16 {
        [
            ATTR_NODE_INFO,
            ATTR_PORT_INFO,
            ATTR_NODE_DESC,
            ATTR_GUID_INFO,
        ][self.below(4) as usize]
    }

    fn fill_data(&mut self, m: &mut Mad) {
        for b in mad::data_mut(m).iter_mut() {
            *b = self.rng.next_u64() as u8;
        }
    }

    /// A LID-routed SMP MAD.
    pub fn lid_mad(&mut self, method: u8, attr: u16) -> Mad {
        let tid = self.tid();
        let mut m = mad::request(CLASS_SUBN_LID, method, attr, 0, tid);
        self.fill_data(&mut m);
        m
    }

    /// A DR MAD at the end of its outbound path: hc hops, hp = hc, IP filled.
    pub fn dr_mad(&mut self, hc: u8) -> Mad {
        let tid = self.tid();
        let path: Vec<u8> = (0..hc).map(|_| 1 + self.below(36) as u8).collect();
        let attr = self.attr();
        let mut m = mad::dr_request(METHOD_GET, attr, 0, tid, &path);
        m[mad::off::HOP_PTR] = hc;
        // return path entries of the switches before us
        for i in 1..usize::from(hc) {
            m[mad::off::RETURN_PATH + i] = 1 + self.below(36) as u8;
        }
        self.fill_data(&mut m);
        m
    }

    fn wire(vl: u8, sl: u8, dlid: u16, slid: u16, dest_qp: u32, m: Mad) -> Packet {
        let (q_key, src_qp) = if dest_qp == QP1 {
            (QP1_Q_KEY, QP1)
        } else {
            (0, QP0)
        };
        Packet::new(
            Lrh::local(vl, sl, dlid, slid),
            Bth::ud_send(dest_qp, 0),
            Deth::new(q_key, src_qp),
            m,
        )
    }

    /// A good packet's wire form (fields a fault may edit).
    pub fn good_packet(&mut self, kind: Good) -> Packet {
        let sl = self.below(16) as u8;
        match kind {
            Good::LidGet => {
                let attr = self.attr();
                let m = self.lid_mad(METHOD_GET, attr);
                let (d, s) = (self.our_lid(), self.other_lid());
                Self::wire(VL15, sl, d, s, QP0, m)
            }
            Good::DrGet | Good::DrGetPast => {
                let hc = 1 + self.below(63) as u8;
                let mut m = self.dr_mad(hc);
                if kind == Good::DrGetPast {
                    m[mad::off::HOP_PTR] = hc + 1;
                    m[mad::off::RETURN_PATH + usize::from(hc)] = self.cfg.port;
                }
                Self::wire(VL15, sl, PERMISSIVE_LID, PERMISSIVE_LID, QP0, m)
            }
            Good::DrResp => {
                let hc = 1 + self.below(63) as u8;
                let mut m = self.dr_mad(hc);
                match self.below(4) {
                    0 => m[mad::off::HOP_PTR] = 0,
                    1 => {
                        m = self.dr_mad(1);
                        m[mad::off::HOP_PTR] = 2;
                        m[mad::off::RETURN_PATH + 1] = self.cfg.port;
                    }
                    _ => {
                        m[mad::off::HOP_PTR] = 1;
                        m[mad::off::RETURN_PATH + 1] = 1 + self.below(36) as u8;
                    }
                }
                mad::make_response(&mut m, 0);
                Self::wire(VL15, sl, PERMISSIVE_LID, PERMISSIVE_LID, QP0, m)
            }
            Good::LidToSm => {
                let m = match self.below(3) {
                    0 => {
                        let mut m = self.lid_mad(METHOD_GET, ATTR_NODE_INFO);
                        mad::make_response(&mut m, 0);
                        m
                    }
                    1 => self.lid_mad(METHOD_TRAP, ATTR_NOTICE),
                    _ => self.lid_mad(METHOD_GET, ATTR_SM_INFO),
                };
                let (d, s) = (self.our_lid(), self.other_lid());
                Self::wire(VL15, sl, d, s, QP0, m)
            }
            Good::Gmp | Good::Qp2 => {
                let tid = self.tid();
                let mut m = mad::request(CLASS_PERF, METHOD_GET, 1, 0, tid);
                self.fill_data(&mut m);
                let vl = self.below(15) as u8;
                let (d, s) = (self.our_lid(), self.other_lid());
                let qp = if kind == Good::Gmp {
                    QP1
                } else {
                    2 + self.below(0xFF_FFF0) as u32
                };
                Self::wire(vl, sl, d, s, qp, m)
            }
        }
    }

    pub fn good(&mut self) -> (Good, Vec<u8>) {
        let kind = match self.below(20) {
            0..=5 => Good::LidGet,
            6..=10 => Good::DrGet,
            11 => Good::DrGetPast,
            12..=13 => Good::DrResp,
            14..=15 => Good::LidToSm,
            16..=18 => Good::Gmp,
            _ => Good::Qp2,
        };
        (kind, self.good_packet(kind).to_bytes())
    }

    /// The wire bytes of one receive fault (`c.is_rx()`).
    pub fn rx_fault(&mut self, c: FaultClass) -> Vec<u8> {
        use FaultClass::*;
        let base = if self.below(2) == 0 {
            Good::LidGet
        } else {
            Good::DrGet
        };
        let mut p = self.good_packet(base);
        let flip = 1u8 << self.below(8);
        match c {
            BadVcrc => {
                let mut b = p.to_bytes();
                let n = b.len();
                b[n - 1 - self.below(2) as usize] ^= flip;
                return b;
            }
            BadIcrc => {
                p.icrc ^= u32::from(flip) << (8 * self.below(4));
                p.vcrc = p.computed_vcrc();
                return p.to_bytes();
            }
            LVer => p.lrh.lver = 1 + self.below(15) as u8,
            GrhOnVl15 => p.lrh.lnh = LNH_IBA_GLOBAL,
            LnhNotIba => p.lrh.lnh = self.below(2) as u8,
            PktLenMismatch => {
                let d = 1 + self.below(70) as u16;
                p.lrh.pkt_len = if self.below(2) == 0 {
                    SMP_PKT_LEN - d
                } else {
                    SMP_PKT_LEN + d
                };
            }
            Truncated => {
                let b = p.to_bytes();
                let n = 8 + self.below(b.len() as u64 - 9) as usize;
                return b[..n].to_vec();
            }
            Oversized => {
                let max = if self.below(8) == 0 { 400 } else { 16 };
                let words = 1 + self.below(max) as usize;
                p.lrh.pkt_len = SMP_PKT_LEN + words as u16;
                let mut b = p.header_and_mad();
                for _ in 0..4 * words {
                    b.push(self.rng.next_u64() as u8);
                }
                crate::proto::crc::append_crcs(&mut b);
                return b;
            }
            Opcode => {
                p.bth.opcode = loop {
                    let o = self.rng.next_u64() as u8;
                    if o != OPCODE_UD_SEND_ONLY {
                        break o;
                    }
                }
            }
            DestQpOnVl15 => p.bth.dest_qp = 2 + self.below(0xFF_FFFD) as u32,
            Vl15ToQp1 => {
                p.bth.dest_qp = QP1;
                p.deth = Deth::new(QP1_Q_KEY, QP1);
            }
            Qp0OnDataVl => p.lrh.vl = self.below(15) as u8,
            Qp1BadIcrc => {
                let mut q = self.good_packet(Good::Gmp);
                q.icrc ^= u32::from(flip) << (8 * self.below(4));
                q.vcrc = q.computed_vcrc();
                return q.to_bytes();
            }
            Qp1BadPkey => {
                // the default table holds only 0xFFFF: any other partition
                // number misses, whatever the membership bit
                let mut q = self.good_packet(Good::Gmp);
                q.bth.p_key = loop {
                    let k = self.rng.next_u64() as u16;
                    if k & 0x7FFF != 0x7FFF {
                        break k;
                    }
                };
                p = q;
            }
            Qp1BadQkey => {
                let mut q = self.good_packet(Good::Gmp);
                let k = loop {
                    let k = self.rng.next_u64() as u32;
                    if k != QP1_Q_KEY {
                        break k;
                    }
                };
                q.deth = Deth::new(k, QP1);
                p = q;
            }
            BaseVersion => {
                p.mad[0] = loop {
                    let v = self.rng.next_u64() as u8;
                    if v != BASE_VERSION {
                        break v;
                    }
                }
            }
            ClassNotSmp => {
                p.mad[1] = [
                    CLASS_SA,
                    CLASS_PERF,
                    CLASS_BM,
                    CLASS_DEV_MGT,
                    CLASS_CM,
                    0x02,
                ][self.below(6) as usize]
            }
            DlidNotOurs => {
                let mut q = self.good_packet(Good::LidGet);
                q.lrh.dlid = self.other_lid();
                p = q;
            }
            PermissiveDlidLidRouted => {
                let mut q = self.good_packet(Good::LidGet);
                q.lrh.dlid = PERMISSIVE_LID;
                p = q;
            }
            HopCount64 => {
                let mut q = self.good_packet(Good::DrGet);
                let hc = 64 + self.below(192) as u8;
                q.mad[mad::off::HOP_CNT] = hc;
                q.mad[mad::off::HOP_PTR] = if self.below(2) == 0 {
                    hc
                } else {
                    hc.wrapping_add(1)
                };
                p = q;
            }
            HopPtrInconsistent if self.below(4) == 0 => {
                // returning (D = 1): C14-13:1 past a CA (hc >= 2), C14-13:2
                // an intermediate hop, C14-13:5 past the end
                let mut q = self.good_packet(Good::DrGet);
                let hc = 2 + self.below(62) as u8;
                q.mad[mad::off::HOP_CNT] = hc;
                q.mad[mad::off::HOP_PTR] = match self.below(3) {
                    0 => hc + 1,
                    1 => 2 + self.below(u64::from(hc) - 1) as u8,
                    _ => hc + 2 + self.below(60) as u8,
                };
                mad::make_response(&mut q.mad, 0);
                p = q;
            }
            HopPtrInconsistent => {
                let mut q = self.good_packet(Good::DrGet);
                let hc = q.mad[mad::off::HOP_CNT];
                q.mad[mad::off::HOP_PTR] = match self.below(3) {
                    0 => 0,                                                  // sender did not increment
                    1 => hc + 2 + self.below(60) as u8,                      // past the end
                    _ if hc >= 2 => 1 + self.below(u64::from(hc) - 1) as u8, // intermediate: a CA does not forward
                    _ => 0,
                };
                p = q;
            }
            _ => unreachable!("{c:?} is not a receive fault"),
        }
        p.fix_crcs();
        p.to_bytes()
    }

    /// A good SM request for the send engine: DR out of port 1 (1..4 hops).
    pub fn sm_request(&mut self) -> (Mad, AddressHandle) {
        let hc = 1 + self.below(4) as usize;
        let mut path = vec![self.cfg.port];
        for _ in 1..hc {
            path.push(1 + self.below(36) as u8);
        }
        let tid = self.tid();
        let attr = self.attr();
        let m = mad::dr_request(METHOD_GET, attr, 0, tid, &path);
        let ah = AddressHandle {
            dlid: PERMISSIVE_LID,
            sl: self.below(16) as u8,
            path_bits: self.below(128) as u8,
            ..AddressHandle::default()
        };
        if self.below(3) == 0 {
            // LID-routed to some other port
            let m = self.lid_mad(METHOD_GET, attr);
            let dlid = self.other_lid();
            return (m, AddressHandle { dlid, ..ah });
        }
        (m, ah)
    }

    /// A send-side fault (`SmDrDiscard`, `SmLocal`).
    pub fn tx_fault(&mut self, c: FaultClass) -> (Mad, AddressHandle) {
        let tid = self.tid();
        let m = match c {
            FaultClass::SmDrDiscard => {
                // a DR SMP each send rule discards (ibspec §5, a CA)
                let hc = 2 + self.below(5) as u8;
                let path: Vec<u8> = (0..hc).map(|_| 1 + self.below(36) as u8).collect();
                let mut m = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, tid, &path);
                let other = loop {
                    let q = 1 + self.below(255) as u8;
                    if q != self.cfg.port {
                        break q;
                    }
                };
                let lid = self.other_lid().to_be_bytes();
                let k = self.below(8);
                if k >= 4 {
                    m[mad::off::STATUS] |= 0x80; // returning (D = 1)
                }
                let past = hc + 2 + self.below(50) as u8;
                match k {
                    // C14-9:1, the path does not start at this port
                    0 => m[mad::off::INITIAL_PATH + 1] = other,
                    // C14-9:2, an intermediate hop: a switch's
                    1 => m[mad::off::HOP_PTR] = 1 + self.below(u64::from(hc) - 1) as u8,
                    // C14-9:3, the end of the DR part with a LID-routed tail
                    2 => {
                        m[mad::off::HOP_PTR] = hc;
                        m[mad::off::DR_DLID..mad::off::DR_DLID + 2].copy_from_slice(&lid);
                    }
                    // C14-9:5 and C14-13:5, past the end
                    3 | 6 => m[mad::off::HOP_PTR] = past,
                    // C14-13:2, an intermediate hop back
                    4 => m[mad::off::HOP_PTR] = 2 + self.below(u64::from(hc) - 1) as u8,
                    // C14-13:3, into a LID-routed head
                    5 => {
                        m[mad::off::HOP_PTR] = 1;
                        m[mad::off::DR_SLID..mad::off::DR_SLID + 2].copy_from_slice(&lid);
                    }
                    // C14-13:1, the response does not leave by this port
                    _ => {
                        m[mad::off::HOP_PTR] = hc + 1;
                        m[mad::off::RETURN_PATH + usize::from(hc)] = other;
                    }
                }
                m
            }
            _ => {
                // SmLocal: hop count 0, or an SMP the send rules leave at this
                // node (ibspec §5, the originator's local check): outbound
                // with hp = hc (C14-9:3) or hc + 1 (C14-9:4), returning with
                // hp 1 (C14-13:3) or 0 (C14-13:4)
                let k = self.below(5);
                let hc = if k == 0 { 0 } else { 1 + self.below(6) as u8 };
                let path: Vec<u8> = (0..hc).map(|_| 1 + self.below(36) as u8).collect();
                let mut m = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, tid, &path);
                match k {
                    0 => {}
                    1 => m[mad::off::HOP_PTR] = hc,
                    2 => m[mad::off::HOP_PTR] = hc + 1,
                    _ => {
                        m[mad::off::STATUS] |= 0x80;
                        m[mad::off::HOP_PTR] = u8::from(k == 3);
                    }
                }
                m
            }
        };
        (m, AddressHandle::directed())
    }

    /// A GMP the host sends on a data VL (LRH..ICRC, for the data TX port).
    pub fn data_tx(&mut self) -> Vec<u8> {
        let mut p = self.good_packet(Good::Gmp);
        std::mem::swap(&mut p.lrh.dlid, &mut p.lrh.slid);
        p.fix_crcs();
        let mut b = p.to_bytes();
        b.truncate(b.len() - VCRC_BYTES);
        b
    }

    /// A trap MAD (SubnTrap(Notice)).
    pub fn trap(&mut self) -> Mad {
        self.lid_mad(METHOD_TRAP, ATTR_NOTICE)
    }
}

/// The SMA's answer to a request: GetResp, status 0, data replaced, the D
/// bit for a DR SMP (ibspec §5 "responder builds the reply from the request").
pub fn response(req: &Mad, rng: &mut Rng) -> Mad {
    let mut r = *req;
    for b in mad::data_mut(&mut r).iter_mut() {
        *b = rng.next_u64() as u8;
    }
    mad::make_response(&mut r, 0);
    r
}

/// Check the model against a class's declared disposition for one packet
/// (with room in the VL15 buffer and a WQE for the SM).
pub fn check_class(bench: &CaBench, c: FaultClass, bytes: &[u8]) -> Result<()> {
    let Expect::Rx(ctr) = c.expect() else {
        return Ok(());
    };
    let p = bench.sb.model.rx(bytes, &RxEnv::default());
    let ok = match &p.out {
        RxOut::Dropped => bytes[0] >> 4 == VL15,
        RxOut::Drx { discard, .. } => *discard,
        _ => false,
    };
    ensure!(
        ok && p.ctr.get(ctr) == 1,
        "the model disagrees with fault class {}: spec says {} ({:?}), model says {:?} verdict {} counters {}",
        c.name(),
        ctr.name(),
        c.expect(),
        p.out_kind(),
        p.verdict,
        p.ctr.nonzero()
    );
    Ok(())
}

trait OutKind {
    fn out_kind(&self) -> &'static str;
}
impl OutKind for crate::check::refmodel::ca::RxPrediction {
    fn out_kind(&self) -> &'static str {
        match self.out {
            RxOut::Sma { .. } => "SMA",
            RxOut::Sm { .. } => "SM",
            RxOut::Drx { discard: false, .. } => "data RX",
            RxOut::Drx { discard: true, .. } => "data RX, discard",
            RxOut::Dropped => "dropped",
        }
    }
}

/// Options of a soak run.
#[derive(Debug, Clone)]
pub struct SoakOpts {
    /// The port model under test.
    pub model: CaPortModel,
    pub width: u32,
    pub packets: u64,
    pub seed: u64,
    /// Percent of packets that are faults (wire faults, SM send faults, episodes).
    pub fault_percent: u32,
    /// Stop injecting, drain and check the counters every this many packets.
    pub checkpoint: u64,
    /// Only these classes (empty: all).
    pub classes: Vec<FaultClass>,
    /// Shows packets handed in and mismatches (a hidden bar draws nothing).
    pub progress: Option<indicatif::ProgressBar>,
    /// The port's model: the RTL, or the RTL and its twin in lockstep.
    pub fidelity: crate::model::twin::Fidelity,
}

impl SoakOpts {
    pub fn new(width: u32, packets: u64, seed: u64) -> Self {
        SoakOpts {
            model: CaPortModel::Top,
            width,
            packets,
            seed,
            fault_percent: 25,
            checkpoint: 2000,
            classes: Vec::new(),
            progress: None,
            fidelity: crate::model::twin::Fidelity::Rtl,
        }
    }
}

/// What a soak run measured.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SoakReport {
    /// The port under test, as `CaPort::describe` names it.
    pub device: String,
    pub width: u32,
    pub seed: u64,
    pub packets: u64,
    pub good: u64,
    pub faults: BTreeMap<String, u64>,
    pub mismatches: u64,
    pub errors: Vec<String>,
    pub max_drain: u64,
    pub drain_bound: u64,
    pub cycles: u64,
    /// With the twin in lockstep: the cycles it was calm, not stepped.
    pub twin_calm: Option<u64>,
    pub wall_s: f64,
    pub stats: crate::check::scoreboard::Stats,
    pub sma_answered: u64,
}

/// Beats of one SMP on the wire at `width`.
pub fn smp_beats(width: u32) -> u64 {
    (SMP_WIRE_BYTES as u64).div_ceil(u64::from(width / 8))
}

/// Cycles within which the port must drain once traffic stops and every
/// stream is ready: at most `MAX_TX_BACKLOG` responses waiting in the SMA's
/// send queue, a few SM requests and traps, 2 SMPs in the VL15 TX buffer, and
/// up to 6 SMPs on the receive side (4 buffer slots, the SMI receive engine,
/// the link stage), each of which needs at most a delivery and a send, i.e.
/// about 40 SMP times on the wire (the bottleneck: one beat per cycle). 64
/// SMP times (+ 64 cycles of pipeline) leave margin; a port that needs more
/// has lost a packet or locked up.
pub fn drain_bound(width: u32) -> u64 {
    64 * (smp_beats(width) + 2) + 64
}

/// Responses the soak's SMA lets wait in its send queue before it stops
/// taking requests (then the VL15 RX buffer fills and drops, as on hardware).
pub const MAX_TX_BACKLOG: usize = 8;

/// Run the soak on one width.
pub fn soak(o: &SoakOpts) -> Result<SoakReport> {
    soak_logged(o, &mut None, None)
}

/// [`soak`], writing every packet on the port's wire into `log` when there
/// is one, on interface `w<width>.ca[<port>]`.
pub fn soak_logged(
    o: &SoakOpts,
    log: &mut Option<TraceFile>,
    waves: Option<&mut crate::model::trace::Waves>,
) -> Result<SoakReport> {
    let t0 = Instant::now();
    let mut b = CaBench::on_as(o.model, o.width, o.fidelity)?;
    if let Some(w) = waves {
        let name = format!("w{}.ca{}", o.width, b.port().port_num());
        w.open(&name, b.dut_mut())?;
    }
    if let Some(l) = log.take() {
        b.log_wire(l, &format!("w{}.", o.width));
    }
    let mut g = Gen::new(
        o.seed,
        GenCfg {
            lid: 0x0040,
            lmc: 2,
            port: b.port().port_num(),
        },
    );
    let mut rng = Rng::new(o.seed ^ 0x5EED);
    let cfg = PortConfig {
        lid: g.cfg.lid,
        lmc: g.cfg.lmc,
        port_state: PORT_STATE_ACTIVE,
        master_sm_lid: 0x0001,
        master_sm_sl: 3,
        port_num: b.port().port_num(),
        ..PortConfig::default()
    };
    b.configure(cfg, 4)?;
    let start_cycle = b.cycle();
    let mut rep = SoakReport {
        device: b.port().describe(),
        width: o.width,
        seed: o.seed,
        drain_bound: drain_bound(o.width),
        ..SoakReport::default()
    };
    let classes: Vec<FaultClass> = if o.classes.is_empty() {
        FaultClass::ALL.to_vec()
    } else {
        o.classes.clone()
    };
    set_patterns(&mut b, &mut rng);
    let mut since_check = 0u64;
    while rep.packets < o.packets {
        // keep the wire RX source fed: packets back to back at line rate
        while b.port().wire_rx.pending() < 2 && rep.packets < o.packets {
            if rng.chance(o.fault_percent) {
                let c = classes[(rng.next_u64() % classes.len() as u64) as usize];
                *rep.faults.entry(c.name().to_string()).or_default() += 1;
                fault(&mut b, &mut g, &mut rng, c, cfg)?;
            } else {
                let (_, bytes) = g.good();
                b.inject(&bytes, "good");
                rep.good += 1;
            }
            rep.packets += 1;
            since_check += 1;
            if let Some(p) = &o.progress {
                p.set_position(rep.packets);
            }
            // now and then the SM sends a request, the SMA a trap
            if rng.chance(3) {
                let (m, ah) = g.sm_request();
                b.send_sm(&m, ah);
            }
            if rng.chance(1) {
                let m = g.trap();
                b.send_trap(&m);
            }
            // and the host sends GMPs on the data VLs (VL15 goes first at
            // packet boundaries; each stream keeps its order)
            if rng.chance(5) && b.port().dtx.pending() < 4 {
                let d = g.data_tx();
                b.send_data(&d);
            }
        }
        answer(&mut b, &mut rng);
        b.step()?;
        if since_check >= o.checkpoint || rep.packets >= o.packets {
            since_check = 0;
            checkpoint(&mut b, &mut rng, &mut rep)?;
            if let Some(p) = &o.progress {
                p.set_message(format!("{} mismatches", b.sb.stats.mismatches));
            }
            set_patterns(&mut b, &mut rng);
        }
    }
    checkpoint(&mut b, &mut rng, &mut rep)?;
    rep.cycles = b.cycle() - start_cycle;
    rep.twin_calm = b.dut_mut().calm_cycles();
    rep.wall_s = t0.elapsed().as_secs_f64();
    rep.mismatches = b.sb.stats.mismatches;
    rep.errors = b.sb.errors.clone();
    rep.stats = b.sb.stats.clone();
    *log = b.take_wire_log();
    Ok(rep)
}

/// The soak's SMA: answers every request it got, unless its send queue is
/// long (then it stops taking requests: `sma_rx` backpressure).
fn answer(b: &mut CaBench, rng: &mut Rng) {
    while let Some((meta, req, _)) = b.sb.requests.pop_front() {
        if mad::method(&req) == METHOD_TRAP_REPRESS {
            continue;
        }
        let r = response(&req, rng);
        b.send_sma(&r, meta);
    }
    let port = b.port_mut();
    port.sma_rx.hold = port.sma_tx.pending() >= MAX_TX_BACKLOG;
}

/// Random idle and backpressure patterns on every stream; the wire RX at
/// line rate most of the time.
fn set_patterns(b: &mut CaBench, rng: &mut Rng) {
    let mut pat = |lo: u64, always: u32| {
        if rng.chance(always) {
            Pattern::Always
        } else {
            Pattern::Random {
                percent: (lo + rng.next_u64() % (100 - lo)) as u32,
                seed: rng.next_u64(),
            }
        }
    };
    let p = b.port_mut();
    p.wire_rx.set_pattern(pat(50, 80));
    p.wire_tx.set_pattern(pat(50, 20));
    p.sma_rx.set_pattern(pat(30, 20));
    p.sm_rx.set_pattern(pat(30, 20));
    p.sma_tx.set_pattern(pat(30, 20));
    p.sm_tx.set_pattern(pat(30, 20));
    p.trap_tx.set_pattern(pat(30, 20));
    p.dtx.set_pattern(pat(30, 20));
}

/// Stop, let every stream run free, drain within the bound, check the counters.
fn checkpoint(b: &mut CaBench, rng: &mut Rng, rep: &mut SoakReport) -> Result<()> {
    let port = b.port_mut();
    for p in [
        &mut port.wire_rx as &mut dyn SetPat,
        &mut port.wire_tx,
        &mut port.sma_rx,
        &mut port.sm_rx,
        &mut port.sma_tx,
        &mut port.sm_tx,
        &mut port.trap_tx,
        &mut port.dtx,
    ] {
        p.set(Pattern::Always);
    }
    b.port_mut().sma_rx.hold = false;
    // the SMA keeps answering while the port drains
    let bound = drain_bound(b.port().data_w);
    let start = b.cycle();
    loop {
        answer(b, rng);
        b.port_mut().sma_rx.hold = false;
        b.step()?;
        if b.settled() && b.port().idle && b.sb.requests.is_empty() {
            break;
        }
        if b.cycle() - start > bound {
            b.drain(0)?; // reports what is left
        }
    }
    let d = b.drain(bound)? + (b.cycle() - start);
    rep.max_drain = rep.max_drain.max(d);
    b.check_counters()?;
    b.ok()?;
    // the next checkpoint checks the counters counted on from a preset
    b.preset_counters(b.cycle())?;
    b.check_counters()?;
    Ok(())
}

trait SetPat {
    fn set(&mut self, p: Pattern);
}
impl<M: Clone> SetPat for crate::model::stream::Source<M> {
    fn set(&mut self, p: Pattern) {
        self.set_pattern(p);
    }
}
impl<M> SetPat for crate::model::stream::Sink<M> {
    fn set(&mut self, p: Pattern) {
        self.set_pattern(p);
    }
}

/// One fault of class `c`: a faulted packet, an SM send fault, or an episode.
pub fn fault(
    b: &mut CaBench,
    g: &mut Gen,
    rng: &mut Rng,
    c: FaultClass,
    cfg: PortConfig,
) -> Result<()> {
    use FaultClass::*;
    match c {
        _ if c.is_rx() => {
            let bytes = g.rx_fault(c);
            check_class(b, c, &bytes)?;
            b.inject(&bytes, c.name());
        }
        SmDrDiscard | SmLocal => {
            let (m, ah) = g.tx_fault(c);
            b.send_sm(&m, ah);
            let (_, bytes) = g.good();
            b.inject(&bytes, "good");
        }
        PortDown => {
            settle_rx(b)?;
            if g.below(2) == 0 {
                // from Armed now and then (the PortState arc Armed to Down)
                b.set_port_state(PORT_STATE_ARMED)?;
            }
            b.set_port_state(PORT_STATE_DOWN)?;
            for _ in 0..1 + g.below(3) {
                let (_, bytes) = g.good();
                b.inject(&bytes, c.name());
            }
            settle_rx(b)?;
            b.set_port_state(cfg.port_state)?;
        }
        Vl15Overflow => {
            // the SMA stops taking requests while SMPs keep arriving
            b.port_mut().sma_rx.set_pattern(Pattern::Never);
            for i in 0..b.sb.depth + 2 + g.below(4) as usize {
                // once the buffer is full, now and then an SMP that an SMI
                // check rejects: counted by that check, not as VL15Dropped
                // (ibspec §6, [qib_ud]: validation before the resource drop)
                let p = if i > b.sb.depth && g.below(3) == 0 {
                    let k = [BadIcrc, DlidNotOurs, HopCount64, Opcode][g.below(4) as usize];
                    g.rx_fault(k)
                } else {
                    g.good_packet(Good::LidGet).to_bytes()
                };
                b.inject(&p, c.name());
            }
            while b.rx_backlog() > 0 {
                answer(b, rng);
                b.step()?;
            }
            b.port_mut().sma_rx.set_pattern(Pattern::Always);
        }
        TxBackpressureStorm => {
            b.port_mut().wire_tx.set_pattern(Pattern::Never);
            for _ in 0..50 + g.below(20 * smp_beats(b.port().data_w)) {
                answer(b, rng);
                b.step()?;
            }
            b.port_mut().wire_tx.set_pattern(Pattern::Always);
            let (_, bytes) = g.good();
            b.inject(&bytes, "good");
        }
        ResetMidPacket => {
            // a packet under way on the wire RX, reset somewhere inside it
            let (_, bytes) = g.good();
            b.inject(&bytes, c.name());
            let n = 1 + g.below(smp_beats(b.port().data_w) - 1);
            for _ in 0..n {
                answer(b, rng);
                b.step()?;
            }
            b.reset(1 + g.below(4) as u32)?;
            b.configure(cfg, 4)?;
            let (_, bytes) = g.good();
            b.inject(&bytes, "good");
        }
        LinkDownMidPacket => {
            let (_, bytes) = g.good();
            b.inject(&bytes, c.name());
            // the link falls inside this packet, at least DECIDE_SLACK
            // cycles after the one before it ended (so that one is judged
            // with the link up, as the model is told)
            let slack = crate::check::scoreboard::DECIDE_SLACK;
            let n = slack + g.below(smp_beats(b.port().data_w) - slack);
            for _ in 0..n {
                answer(b, rng);
                b.step()?;
            }
            b.set_link(false);
            for _ in 0..20 + g.below(200) {
                answer(b, rng);
                b.step()?;
            }
            b.set_link(true);
            for _ in 0..4 {
                b.step()?;
            }
            let (_, bytes) = g.good();
            b.inject(&bytes, "good");
            // bring the port back to the state the soak runs in
            settle_rx(b)?;
            b.set_port_state(cfg.port_state)?;
        }
        _ => bail!("fault class {c:?} not handled"),
    }
    Ok(())
}

/// Step until every injected packet has arrived and been judged.
fn settle_rx(b: &mut CaBench) -> Result<()> {
    while b.rx_backlog() > 0 {
        b.step()?;
    }
    for _ in 0..crate::check::scoreboard::DECIDE_SLACK + 2 {
        b.step()?;
    }
    Ok(())
}
