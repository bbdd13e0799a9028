//! Local Route Header, Base Transport Header and Datagram Extended Transport
//! Header (ibspec §1, §2). Every bit of the wire format, reserved bits
//! included, is a field, so decode → encode reproduces the bytes exactly.

use serde::{Deserialize, Serialize};

use super::consts::*;
use super::{need, PacketError};

/// Local Route Header (8 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Lrh {
    /// Virtual lane (4 bits).
    pub vl: u8,
    /// Link version (4 bits); receivers reject ≠ 0.
    pub lver: u8,
    /// Service level (4 bits).
    pub sl: u8,
    /// Byte 1 bits 3:2, reserved.
    pub resv2: u8,
    /// Link next header (2 bits): 2 = BTH follows, 3 = GRH follows.
    pub lnh: u8,
    pub dlid: u16,
    /// Byte 4 bits 7:3, reserved.
    pub resv5: u8,
    /// Packet length LRH..ICRC in 4-byte words (11 bits).
    pub pkt_len: u16,
    pub slid: u16,
}

impl Lrh {
    /// The LRH of an SMP/GMP without GRH: LVer 0, LNH 2, PktLen 72.
    pub fn local(vl: u8, sl: u8, dlid: u16, slid: u16) -> Self {
        Lrh {
            vl,
            sl,
            lnh: LNH_IBA_LOCAL,
            dlid,
            pkt_len: SMP_PKT_LEN,
            slid,
            ..Lrh::default()
        }
    }

    /// Wire bytes; fields wider than their bit width are truncated.
    pub fn encode(&self) -> [u8; LRH_BYTES] {
        let d = self.dlid.to_be_bytes();
        let s = self.slid.to_be_bytes();
        let w1 = (u16::from(self.resv5 & 0x1F) << 11) | (self.pkt_len & 0x07FF);
        let w = w1.to_be_bytes();
        [
            (self.vl << 4) | (self.lver & 0x0F),
            (self.sl << 4) | ((self.resv2 & 0x3) << 2) | (self.lnh & 0x3),
            d[0],
            d[1],
            w[0],
            w[1],
            s[0],
            s[1],
        ]
    }

    pub fn decode(b: &[u8]) -> Result<Self, PacketError> {
        need("LRH", b, LRH_BYTES)?;
        let w1 = u16::from_be_bytes([b[4], b[5]]);
        Ok(Lrh {
            vl: b[0] >> 4,
            lver: b[0] & 0x0F,
            sl: b[1] >> 4,
            resv2: (b[1] >> 2) & 0x3,
            lnh: b[1] & 0x3,
            dlid: u16::from_be_bytes([b[2], b[3]]),
            resv5: (w1 >> 11) as u8,
            pkt_len: w1 & 0x07FF,
            slid: u16::from_be_bytes([b[6], b[7]]),
        })
    }
}

/// Base Transport Header (12 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Bth {
    pub opcode: u8,
    /// Solicited event.
    pub se: bool,
    /// MigReq.
    pub migreq: bool,
    /// Pad count (2 bits).
    pub pad_cnt: u8,
    /// Transport header version (4 bits); must be 0.
    pub tver: u8,
    pub p_key: u16,
    /// Byte 4: variant reserved byte, masked to 1s in the ICRC.
    pub resv8a: u8,
    /// Destination QP (24 bits).
    pub dest_qp: u32,
    /// AckReq.
    pub ack_req: bool,
    /// Byte 8 bits 6:0, reserved.
    pub resv7: u8,
    /// Packet sequence number (24 bits).
    pub psn: u32,
}

impl Bth {
    /// UD SEND Only to `dest_qp` with the default P_Key.
    pub fn ud_send(dest_qp: u32, psn: u32) -> Self {
        Bth {
            opcode: OPCODE_UD_SEND_ONLY,
            p_key: DEFAULT_P_KEY,
            dest_qp,
            psn,
            ..Bth::default()
        }
    }

    pub fn encode(&self) -> [u8; BTH_BYTES] {
        let pk = self.p_key.to_be_bytes();
        let qp = self.dest_qp.to_be_bytes();
        let psn = self.psn.to_be_bytes();
        [
            self.opcode,
            (u8::from(self.se) << 7)
                | (u8::from(self.migreq) << 6)
                | ((self.pad_cnt & 0x3) << 4)
                | (self.tver & 0x0F),
            pk[0],
            pk[1],
            self.resv8a,
            qp[1],
            qp[2],
            qp[3],
            (u8::from(self.ack_req) << 7) | (self.resv7 & 0x7F),
            psn[1],
            psn[2],
            psn[3],
        ]
    }

    pub fn decode(b: &[u8]) -> Result<Self, PacketError> {
        need("BTH", b, BTH_BYTES)?;
        Ok(Bth {
            opcode: b[0],
            se: b[1] & 0x80 != 0,
            migreq: b[1] & 0x40 != 0,
            pad_cnt: (b[1] >> 4) & 0x3,
            tver: b[1] & 0x0F,
            p_key: u16::from_be_bytes([b[2], b[3]]),
            resv8a: b[4],
            dest_qp: u32::from_be_bytes([0, b[5], b[6], b[7]]),
            ack_req: b[8] & 0x80 != 0,
            resv7: b[8] & 0x7F,
            psn: u32::from_be_bytes([0, b[9], b[10], b[11]]),
        })
    }
}

/// Datagram Extended Transport Header (8 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Deth {
    pub q_key: u32,
    /// Byte 4, reserved.
    pub resv8: u8,
    /// Source QP (24 bits).
    pub src_qp: u32,
}

impl Deth {
    pub fn new(q_key: u32, src_qp: u32) -> Self {
        Deth {
            q_key,
            resv8: 0,
            src_qp,
        }
    }

    pub fn encode(&self) -> [u8; DETH_BYTES] {
        let q = self.q_key.to_be_bytes();
        let s = self.src_qp.to_be_bytes();
        [q[0], q[1], q[2], q[3], self.resv8, s[1], s[2], s[3]]
    }

    pub fn decode(b: &[u8]) -> Result<Self, PacketError> {
        need("DETH", b, DETH_BYTES)?;
        Ok(Deth {
            q_key: u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
            resv8: b[4],
            src_qp: u32::from_be_bytes([0, b[5], b[6], b[7]]),
        })
    }
}
