//! MAD common header and the two SMP formats (ibspec §4): LID-routed
//! (class 0x01) and directed-route (class 0x81). Reserved areas are fields,
//! so decode → encode reproduces all 256 bytes.

use serde::{Deserialize, Serialize};

use super::consts::*;
use super::{byte_array, need, PacketError};

/// Big-endian fields at byte offset `o` (also used by `crate::proto::mad`).
pub(crate) fn be16(b: &[u8], o: usize) -> u16 {
    u16::from_be_bytes([b[o], b[o + 1]])
}
pub(crate) fn be32(b: &[u8], o: usize) -> u32 {
    u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
pub(crate) fn be64(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_be_bytes(a)
}
fn arr<const N: usize>(b: &[u8], o: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[o..o + N]);
    a
}

/// MAD common header (24 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MadHeader {
    pub base_version: u8,
    pub mgmt_class: u8,
    pub class_version: u8,
    /// Byte 3 as a whole: bit 7 = R (response), bits 6:0 the method.
    pub method: u8,
    pub status: u16,
    pub class_specific: u16,
    pub tid: u64,
    pub attr_id: u16,
    /// Bytes 18–19, reserved.
    pub resv: u16,
    pub attr_mod: u32,
}

impl MadHeader {
    pub const BYTES: usize = 24;

    pub fn is_response(&self) -> bool {
        self.method & METHOD_RESP_BIT != 0
    }

    pub fn encode_into(&self, m: &mut [u8; MAD_BYTES]) {
        m[0] = self.base_version;
        m[1] = self.mgmt_class;
        m[2] = self.class_version;
        m[3] = self.method;
        m[4..6].copy_from_slice(&self.status.to_be_bytes());
        m[6..8].copy_from_slice(&self.class_specific.to_be_bytes());
        m[8..16].copy_from_slice(&self.tid.to_be_bytes());
        m[16..18].copy_from_slice(&self.attr_id.to_be_bytes());
        m[18..20].copy_from_slice(&self.resv.to_be_bytes());
        m[20..24].copy_from_slice(&self.attr_mod.to_be_bytes());
    }

    pub fn decode(b: &[u8]) -> Result<Self, PacketError> {
        need("MAD header", b, Self::BYTES)?;
        Ok(MadHeader {
            base_version: b[0],
            mgmt_class: b[1],
            class_version: b[2],
            method: b[3],
            status: be16(b, 4),
            class_specific: be16(b, 6),
            tid: be64(b, 8),
            attr_id: be16(b, 16),
            resv: be16(b, 18),
            attr_mod: be32(b, 20),
        })
    }
}

/// LID-routed SMP (class 0x01).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LidSmp {
    /// Bytes 0–23 (bytes 6–7 unused by the SM class, kept as found).
    pub hdr: MadHeader,
    pub m_key: u64,
    /// Bytes 32–63, reserved.
    #[serde(with = "byte_array")]
    pub resv32: [u8; 32],
    /// Bytes 64–127, the SMP data (attribute).
    #[serde(with = "byte_array")]
    pub data: [u8; 64],
    /// Bytes 128–255, reserved.
    #[serde(with = "byte_array")]
    pub resv128: [u8; 128],
}

impl LidSmp {
    pub fn encode(&self) -> [u8; MAD_BYTES] {
        let mut m = [0u8; MAD_BYTES];
        self.hdr.encode_into(&mut m);
        m[24..32].copy_from_slice(&self.m_key.to_be_bytes());
        m[32..64].copy_from_slice(&self.resv32);
        m[64..128].copy_from_slice(&self.data);
        m[128..256].copy_from_slice(&self.resv128);
        m
    }

    /// Decode a 256-byte MAD of class 0x01.
    pub fn decode(b: &[u8]) -> Result<Self, PacketError> {
        need("LID-routed SMP", b, MAD_BYTES)?;
        if b[1] != CLASS_SUBN_LID {
            return Err(PacketError::WrongClass {
                expected: CLASS_SUBN_LID,
                got: b[1],
            });
        }
        Ok(LidSmp {
            hdr: MadHeader::decode(b)?,
            m_key: be64(b, 24),
            resv32: arr(b, 32),
            data: arr(b, 64),
            resv128: arr(b, 128),
        })
    }
}

/// Directed-route SMP (class 0x81).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrSmp {
    pub base_version: u8,
    pub mgmt_class: u8,
    pub class_version: u8,
    /// Byte 3: R bit and method.
    pub method: u8,
    /// Status bit 15: 0 outbound, 1 returning.
    pub d: bool,
    /// Status bits 14:0.
    pub status: u16,
    pub hop_ptr: u8,
    pub hop_cnt: u8,
    pub tid: u64,
    pub attr_id: u16,
    /// Bytes 18–19, reserved.
    pub resv: u16,
    pub attr_mod: u32,
    pub m_key: u64,
    pub dr_slid: u16,
    pub dr_dlid: u16,
    /// Bytes 36–63, reserved.
    #[serde(with = "byte_array")]
    pub resv28: [u8; 28],
    /// Bytes 64–127, the SMP data (attribute).
    #[serde(with = "byte_array")]
    pub data: [u8; 64],
    /// Bytes 128–191; entry 0 unused, hop i uses entry i.
    #[serde(with = "byte_array")]
    pub initial_path: [u8; 64],
    /// Bytes 192–255.
    #[serde(with = "byte_array")]
    pub return_path: [u8; 64],
}

impl Default for DrSmp {
    fn default() -> Self {
        DrSmp {
            base_version: BASE_VERSION,
            mgmt_class: CLASS_SUBN_DR,
            class_version: SM_CLASS_VERSION,
            method: 0,
            d: false,
            status: 0,
            hop_ptr: 0,
            hop_cnt: 0,
            tid: 0,
            attr_id: 0,
            resv: 0,
            attr_mod: 0,
            m_key: 0,
            dr_slid: PERMISSIVE_LID,
            dr_dlid: PERMISSIVE_LID,
            resv28: [0; 28],
            data: [0; 64],
            initial_path: [0; 64],
            return_path: [0; 64],
        }
    }
}

impl DrSmp {
    pub fn encode(&self) -> [u8; MAD_BYTES] {
        let mut m = [0u8; MAD_BYTES];
        m[0] = self.base_version;
        m[1] = self.mgmt_class;
        m[2] = self.class_version;
        m[3] = self.method;
        let st = (if self.d { SMP_DIRECTION } else { 0 }) | (self.status & SMP_STATUS_MASK);
        m[4..6].copy_from_slice(&st.to_be_bytes());
        m[6] = self.hop_ptr;
        m[7] = self.hop_cnt;
        m[8..16].copy_from_slice(&self.tid.to_be_bytes());
        m[16..18].copy_from_slice(&self.attr_id.to_be_bytes());
        m[18..20].copy_from_slice(&self.resv.to_be_bytes());
        m[20..24].copy_from_slice(&self.attr_mod.to_be_bytes());
        m[24..32].copy_from_slice(&self.m_key.to_be_bytes());
        m[32..34].copy_from_slice(&self.dr_slid.to_be_bytes());
        m[34..36].copy_from_slice(&self.dr_dlid.to_be_bytes());
        m[36..64].copy_from_slice(&self.resv28);
        m[64..128].copy_from_slice(&self.data);
        m[128..192].copy_from_slice(&self.initial_path);
        m[192..256].copy_from_slice(&self.return_path);
        m
    }

    /// Decode a 256-byte MAD of class 0x81.
    pub fn decode(b: &[u8]) -> Result<Self, PacketError> {
        need("directed-route SMP", b, MAD_BYTES)?;
        if b[1] != CLASS_SUBN_DR {
            return Err(PacketError::WrongClass {
                expected: CLASS_SUBN_DR,
                got: b[1],
            });
        }
        let st = be16(b, 4);
        Ok(DrSmp {
            base_version: b[0],
            mgmt_class: b[1],
            class_version: b[2],
            method: b[3],
            d: st & SMP_DIRECTION != 0,
            status: st & SMP_STATUS_MASK,
            hop_ptr: b[6],
            hop_cnt: b[7],
            tid: be64(b, 8),
            attr_id: be16(b, 16),
            resv: be16(b, 18),
            attr_mod: be32(b, 20),
            m_key: be64(b, 24),
            dr_slid: be16(b, 32),
            dr_dlid: be16(b, 34),
            resv28: arr(b, 36),
            data: arr(b, 64),
            initial_path: arr(b, 128),
            return_path: arr(b, 192),
        })
    }
}

/// Either SMP format, chosen by MgmtClass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Smp {
    Lid(LidSmp),
    Dr(DrSmp),
}

impl Smp {
    pub fn decode(b: &[u8]) -> Result<Self, PacketError> {
        need("SMP", b, MAD_BYTES)?;
        match b[1] {
            CLASS_SUBN_LID => LidSmp::decode(b).map(Smp::Lid),
            CLASS_SUBN_DR => DrSmp::decode(b).map(Smp::Dr),
            c => Err(PacketError::NotSmp(c)),
        }
    }

    pub fn encode(&self) -> [u8; MAD_BYTES] {
        match self {
            Smp::Lid(s) => s.encode(),
            Smp::Dr(s) => s.encode(),
        }
    }

    /// The 64-byte attribute data.
    pub fn data(&self) -> &[u8; 64] {
        match self {
            Smp::Lid(s) => &s.data,
            Smp::Dr(s) => &s.data,
        }
    }
}
