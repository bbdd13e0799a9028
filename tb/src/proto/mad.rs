//! Raw access to the MAD common header and the SMP header fields inside a
//! 256-byte MAD, by the byte offsets of ibspec §4. The typed views are in
//! `packet`; this is what agents use to read and patch a MAD in place.

use crate::proto::packet::consts::*;
use crate::proto::packet::smp::{be16, be32, be64};
use crate::proto::packet::MadHeader;

pub type Mad = [u8; 256];

/// Big-endian field writers (the readers are `packet::smp::be16/be32/be64`).
pub(crate) fn put16(m: &mut [u8], off: usize, v: u16) {
    m[off..off + 2].copy_from_slice(&v.to_be_bytes());
}
pub(crate) fn put32(m: &mut [u8], off: usize, v: u32) {
    m[off..off + 4].copy_from_slice(&v.to_be_bytes());
}

/// MAD-header field offsets (ibspec §4).
pub mod off {
    pub const BASE_VERSION: usize = 0;
    pub const MGMT_CLASS: usize = 1;
    pub const CLASS_VERSION: usize = 2;
    pub const METHOD: usize = 3;
    pub const STATUS: usize = 4;
    pub const HOP_PTR: usize = 6;
    pub const HOP_CNT: usize = 7;
    pub const TID: usize = 8;
    pub const ATTR_ID: usize = 16;
    pub const ATTR_MOD: usize = 20;
    pub const M_KEY: usize = 24;
    pub const DR_SLID: usize = 32;
    pub const DR_DLID: usize = 34;
    pub const DATA: usize = 64;
    pub const INITIAL_PATH: usize = 128;
    pub const RETURN_PATH: usize = 192;
}

pub fn class(m: &Mad) -> u8 {
    m[off::MGMT_CLASS]
}
pub fn method(m: &Mad) -> u8 {
    m[off::METHOD]
}
pub fn tid(m: &Mad) -> u64 {
    be64(m, off::TID)
}
pub fn set_tid(m: &mut Mad, tid: u64) {
    m[off::TID..off::TID + 8].copy_from_slice(&tid.to_be_bytes());
}
pub fn attr_id(m: &Mad) -> u16 {
    be16(m, off::ATTR_ID)
}
/// Whether the SMI gives a received SMP of `method` and AttributeID `attr`
/// to the SM interface rather than the SMA: responses, traps, and SMInfo
/// Get/Set (ibspec §6; `rtl/smi_rx_core.sv` `to_sm`).
pub fn smi_to_sm(method: u8, attr: u16) -> bool {
    method & METHOD_RESP_BIT != 0
        || method == METHOD_TRAP
        || (attr == ATTR_SM_INFO && matches!(method, METHOD_GET | METHOD_SET))
}

pub fn attr_mod(m: &Mad) -> u32 {
    be32(m, off::ATTR_MOD)
}
pub fn is_dr(m: &Mad) -> bool {
    class(m) == CLASS_SUBN_DR
}
/// The status as the requester reads it (for DR SMPs without the D bit).
pub fn status(m: &Mad) -> u16 {
    let s = be16(m, off::STATUS);
    if is_dr(m) {
        s & 0x7FFF
    } else {
        s
    }
}

/// A request header: SM class, BaseVersion 1, ClassVersion 1.
pub fn request(class: u8, method: u8, attr: u16, modifier: u32, tid: u64) -> Mad {
    let mut m = [0u8; 256];
    MadHeader {
        base_version: BASE_VERSION,
        mgmt_class: class,
        class_version: SM_CLASS_VERSION,
        method,
        tid,
        attr_id: attr,
        attr_mod: modifier,
        ..MadHeader::default()
    }
    .encode_into(&mut m);
    m
}

/// A directed-route request along `path` (InitialPath[1..=len]), as an SM
/// originates it: hop pointer 0, DrSLID = DrDLID = permissive.
pub fn dr_request(method: u8, attr: u16, modifier: u32, tid: u64, path: &[u8]) -> Mad {
    let mut m = request(CLASS_SUBN_DR, method, attr, modifier, tid);
    m[off::HOP_PTR] = 0;
    m[off::HOP_CNT] = path.len() as u8;
    put16(&mut m, off::DR_SLID, PERMISSIVE_LID);
    put16(&mut m, off::DR_DLID, PERMISSIVE_LID);
    for (i, p) in path.iter().enumerate() {
        m[off::INITIAL_PATH + 1 + i] = *p;
    }
    m
}

/// The SMP data area (64 bytes).
pub fn data(m: &Mad) -> &[u8] {
    &m[off::DATA..off::DATA + 64]
}
pub fn data_mut(m: &mut Mad) -> &mut [u8] {
    &mut m[off::DATA..off::DATA + 64]
}

/// Turn a request into its response in place: method GetResp, the given
/// status, and for DR SMPs the D bit set (ibspec §5, [osm] resp_make_resp_smp).
pub fn make_response(m: &mut Mad, status: u16) {
    m[off::METHOD] = METHOD_GET_RESP;
    let s = if is_dr(m) { status | 0x8000 } else { status };
    put16(m, off::STATUS, s);
}

/// M_Key of an SMP (bytes 24..31).
pub fn m_key(m: &Mad) -> u64 {
    be64(m, off::M_KEY)
}
pub fn set_m_key(m: &mut Mad, key: u64) {
    m[off::M_KEY..off::M_KEY + 8].copy_from_slice(&key.to_be_bytes());
}

/// Trap 256 DataDetails: bytes of the DR return path it carries (Notice
/// bytes 34..63).
pub const TRAP256_RETURN_PATH: usize = 30;
/// Notice byte 33: DRNotice, DRPathTruncated (with DRHopCount in 5:0).
pub const TRAP256_DR_NOTICE: u8 = 0x80;
pub const TRAP256_DR_TRUNC: u8 = 0x40;

/// Trap 256 (bad M_Key; ibspec §8 Notice) for the SMP `req` that violated
/// the M_Key of a port with LID `lid`: a LID-routed SubnTrap(Notice),
/// generic, type 2 (security), producer `producer` (1 CA, 2 switch),
/// IssuerLID and LID = `lid`, the request's Method, AttributeID,
/// AttributeModifier and M_Key, and for a directed-route SMP its DrSLID,
/// DRNotice, DRHopCount and the first 30 bytes of its ReturnPath
/// (DRPathTruncated when the hop count is larger), as Linux qib_bad_mkey
/// builds it.
pub fn trap256(req: &Mad, lid: u16, producer: u8, tid: u64) -> Mad {
    let mut m = request(CLASS_SUBN_LID, METHOD_TRAP, ATTR_NOTICE, 0, tid);
    let d = data_mut(&mut m);
    d[0] = 0x80 | 2; // IsGeneric, Type 2 (security)
    d[1..4].copy_from_slice(&[0, 0, producer]);
    d[4..6].copy_from_slice(&256u16.to_be_bytes());
    d[6..8].copy_from_slice(&lid.to_be_bytes()); // IssuerLID
    d[12..14].copy_from_slice(&lid.to_be_bytes());
    d[16] = method(req);
    d[18..20].copy_from_slice(&attr_id(req).to_be_bytes());
    d[20..24].copy_from_slice(&attr_mod(req).to_be_bytes());
    d[24..32].copy_from_slice(&m_key(req).to_be_bytes());
    if is_dr(req) {
        d[14..16].copy_from_slice(&req[off::DR_SLID..off::DR_SLID + 2]);
        let hc = usize::from(req[off::HOP_CNT]);
        let mut flags = TRAP256_DR_NOTICE;
        let n = if hc > TRAP256_RETURN_PATH {
            flags |= TRAP256_DR_TRUNC;
            TRAP256_RETURN_PATH
        } else {
            hc
        };
        d[33] = flags | n as u8;
        d[34..34 + n].copy_from_slice(&req[off::RETURN_PATH..off::RETURN_PATH + n]);
    }
    m
}
