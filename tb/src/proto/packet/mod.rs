//! Typed InfiniBand packets for the testbench: LRH, BTH, DETH, the MAD/SMP
//! formats and the SMA attributes NodeInfo, NodeDescription and PortInfo
//! (ibspec §1-§4, §8), and the whole local UD packet `Packet` as it is on
//! the wire (LRH..VCRC). Every type encodes to bytes and decodes from bytes
//! with a `Result`; decoding never panics, whatever the input.

pub mod attr;
pub mod consts;
pub mod headers;
pub mod smp;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use attr::{NodeDescription, NodeInfo, PortInfo};
pub use headers::{Bth, Deth, Lrh};
pub use smp::{DrSmp, LidSmp, MadHeader, Smp};

use crate::proto::crc;
use consts::*;

/// Why bytes are not a packet (or not the structure asked for).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PacketError {
    #[error("{what} needs {need} bytes, got {got}")]
    TooShort {
        what: &'static str,
        need: usize,
        got: usize,
    },
    #[error("LRH.LVer = {0}, must be 0")]
    LVer(u8),
    #[error(
        "LRH.LNH = 3: the packet has a GRH (global route header); only LNH 2 (local) is supported"
    )]
    Grh,
    #[error("LRH.LNH = {0} ({}): no BTH follows; only LNH 2 (local) is supported", lnh_name(*.0))]
    Lnh(u8),
    #[error("packet is {bytes} bytes, LRH.PktLen = {pkt_len} words means {} (LRH..ICRC + 2-byte VCRC)", usize::from(*pkt_len) * 4 + VCRC_BYTES)]
    Length { pkt_len: u16, bytes: usize },
    #[error("BTH.TVer = {0}, must be 0")]
    TVer(u8),
    #[error("BTH.OpCode = {0:#04x}, only UD SEND Only (0x64) carries a MAD")]
    Opcode(u8),
    #[error("payload is {0} bytes, a MAD is 256")]
    PayloadLen(usize),
    #[error("MgmtClass {got:#04x}, expected {expected:#04x}")]
    WrongClass { expected: u8, got: u8 },
    #[error("MgmtClass {0:#04x} is not an SMP class (0x01 or 0x81)")]
    NotSmp(u8),
}

fn lnh_name(lnh: u8) -> &'static str {
    match lnh {
        LNH_RAW => "raw",
        LNH_IP_NON_IBA => "IP non-IBA",
        LNH_IBA_LOCAL => "IBA local",
        _ => "IBA global",
    }
}

/// Check that `b` holds at least `n` bytes for `what`.
pub(crate) fn need(what: &'static str, b: &[u8], n: usize) -> Result<(), PacketError> {
    if b.len() < n {
        Err(PacketError::TooShort {
            what,
            need: n,
            got: b.len(),
        })
    } else {
        Ok(())
    }
}

/// serde for byte arrays of any length (serde itself stops at 32): a
/// sequence of bytes; deserialising checks the length.
pub(crate) mod byte_array {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer, const N: usize>(a: &[u8; N], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(a.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>, const N: usize>(
        d: D,
    ) -> Result<[u8; N], D::Error> {
        let v = Vec::<u8>::deserialize(d)?;
        let n = v.len();
        v.try_into()
            .map_err(|_| D::Error::invalid_length(n, &"a byte array of the declared length"))
    }
}

/// A local (LNH 2) UD SEND Only packet carrying a 256-byte MAD, as on the
/// wire: LRH, BTH, DETH, MAD, ICRC, VCRC (290 bytes). `icrc` and `vcrc` are
/// the values found in (or to be written to) the packet; `icrc_ok()` /
/// `vcrc_ok()` recompute them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packet {
    pub lrh: Lrh,
    pub bth: Bth,
    pub deth: Deth,
    #[serde(with = "byte_array")]
    pub mad: [u8; MAD_BYTES],
    pub icrc: u32,
    pub vcrc: u16,
}

impl Packet {
    /// A packet from its headers and MAD, with ICRC and VCRC computed over
    /// them. PktLen is taken from `lrh` as given.
    pub fn new(lrh: Lrh, bth: Bth, deth: Deth, mad: [u8; MAD_BYTES]) -> Self {
        let mut p = Packet {
            lrh,
            bth,
            deth,
            mad,
            icrc: 0,
            vcrc: 0,
        };
        p.fix_crcs();
        p
    }

    /// Parse wire bytes (LRH..VCRC). Checks structure only (LVer, LNH,
    /// PktLen against the byte count, TVer, opcode, MAD size), not the CRCs.
    pub fn parse(b: &[u8]) -> Result<Packet, PacketError> {
        let lrh = Lrh::decode(b)?;
        if lrh.lver != 0 {
            return Err(PacketError::LVer(lrh.lver));
        }
        match lrh.lnh {
            LNH_IBA_LOCAL => {}
            LNH_IBA_GLOBAL => return Err(PacketError::Grh),
            l => return Err(PacketError::Lnh(l)),
        }
        if b.len() != usize::from(lrh.pkt_len) * 4 + VCRC_BYTES {
            return Err(PacketError::Length {
                pkt_len: lrh.pkt_len,
                bytes: b.len(),
            });
        }
        let bth = Bth::decode(&b[LRH_BYTES..])?;
        if bth.tver != 0 {
            return Err(PacketError::TVer(bth.tver));
        }
        if bth.opcode != OPCODE_UD_SEND_ONLY {
            return Err(PacketError::Opcode(bth.opcode));
        }
        let deth = Deth::decode(&b[LRH_BYTES + BTH_BYTES..])?;
        let payload = b
            .len()
            .checked_sub(MAD_OFFSET + ICRC_BYTES + VCRC_BYTES)
            .ok_or(PacketError::TooShort {
                what: "UD packet",
                need: MAD_OFFSET + ICRC_BYTES + VCRC_BYTES,
                got: b.len(),
            })?;
        if payload != MAD_BYTES {
            return Err(PacketError::PayloadLen(payload));
        }
        let mut mad = [0u8; MAD_BYTES];
        mad.copy_from_slice(&b[MAD_OFFSET..MAD_OFFSET + MAD_BYTES]);
        let i = MAD_OFFSET + MAD_BYTES;
        Ok(Packet {
            lrh,
            bth,
            deth,
            mad,
            icrc: crc::icrc_from_wire([b[i], b[i + 1], b[i + 2], b[i + 3]]),
            vcrc: crc::vcrc_from_wire([b[i + 4], b[i + 5]]),
        })
    }

    /// LRH..end of MAD (the ICRC's coverage, unmasked).
    pub fn header_and_mad(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(SMP_WIRE_BYTES);
        v.extend_from_slice(&self.lrh.encode());
        v.extend_from_slice(&self.bth.encode());
        v.extend_from_slice(&self.deth.encode());
        v.extend_from_slice(&self.mad);
        v
    }

    /// Wire bytes LRH..VCRC with the stored `icrc` and `vcrc`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = self.header_and_mad();
        v.extend_from_slice(&crc::icrc_to_wire(self.icrc));
        v.extend_from_slice(&crc::vcrc_to_wire(self.vcrc));
        v
    }

    /// The ICRC the headers and MAD call for.
    pub fn computed_icrc(&self) -> u32 {
        crc::icrc(&self.header_and_mad())
    }

    /// The VCRC that LRH..ICRC (with the stored ICRC) calls for.
    pub fn computed_vcrc(&self) -> u16 {
        let mut v = self.header_and_mad();
        v.extend_from_slice(&crc::icrc_to_wire(self.icrc));
        crc::vcrc(&v)
    }

    pub fn icrc_ok(&self) -> bool {
        self.icrc == self.computed_icrc()
    }

    pub fn vcrc_ok(&self) -> bool {
        self.vcrc == self.computed_vcrc()
    }

    /// Recompute both CRCs after editing a field.
    pub fn fix_crcs(&mut self) {
        self.icrc = self.computed_icrc();
        self.vcrc = self.computed_vcrc();
    }

    /// The MAD as an SMP, if its class is 0x01 or 0x81.
    pub fn decode_smp(&self) -> Result<Smp, PacketError> {
        Smp::decode(&self.mad)
    }

    /// The MAD common header.
    pub fn mad_header(&self) -> MadHeader {
        // 256 bytes always hold the 24-byte header.
        MadHeader::decode(&self.mad).unwrap_or_default()
    }

    /// Wire bytes of an SMP as a QP0 sender builds it: LRH (VL `vl`, SL
    /// `sl`, LNH 2, PktLen 72), BTH UD SEND Only, P_Key 0xFFFF, DestQP 0,
    /// PSN `psn`, DETH Q_Key 0, SrcQP 0; ICRC and VCRC computed.
    pub fn smp_bytes(
        vl: u8,
        sl: u8,
        dlid: u16,
        slid: u16,
        psn: u32,
        mad: [u8; MAD_BYTES],
    ) -> Vec<u8> {
        Packet::new(
            Lrh::local(vl, sl, dlid, slid),
            Bth::ud_send(QP0, psn),
            Deth::new(0, QP0),
            mad,
        )
        .to_bytes()
    }

    /// `smp_bytes` with PSN 0 (the form of reference vectors V1/V2).
    pub fn smp(vl: u8, sl: u8, dlid: u16, slid: u16, mad: [u8; MAD_BYTES]) -> Vec<u8> {
        Self::smp_bytes(vl, sl, dlid, slid, 0, mad)
    }

    /// Wire bytes of a GMP to QP1 (DestQP 1, SrcQP 1, Q_Key 0x80010000),
    /// the form of reference vectors V3/V4.
    pub fn gmp(vl: u8, sl: u8, dlid: u16, slid: u16, psn: u32, mad: [u8; MAD_BYTES]) -> Vec<u8> {
        Packet::new(
            Lrh::local(vl, sl, dlid, slid),
            Bth::ud_send(QP1, psn),
            Deth::new(QP1_Q_KEY, QP1),
            mad,
        )
        .to_bytes()
    }
}
