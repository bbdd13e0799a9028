//! ICRC and VCRC of InfiniBand packets (ibspec §3) and their wire byte order.
//!
//! ICRC: CRC-32 as zlib/Ethernet (poly 0x04C11DB7 reflected, init and final
//! XOR 0xFFFFFFFF) over LRH..end of payload with LRH.VL and BTH.resv8a
//! replaced by 1s; sent least-significant byte first (hardware-validated).
//! VCRC: CRC-16 poly 0x100B reflected, init 0xFFFF, final XOR 0xFFFF over
//! LRH..ICRC unmasked; byte order per `VCRC_LSB_FIRST` (not yet validated
//! against hardware, ibspec §12 item 1).

use ::crc::{Algorithm, Crc, Table, CRC_32_ISO_HDLC};

use crate::proto::packet::consts::{BTH_RESV8A_OFFSET, ICRC_BYTES, VCRC_BYTES};

/// VCRC byte order on the wire: true = least-significant byte first, like
/// the ICRC. Must match `ib_pkg::VcrcLsbFirst` in the RTL (ibspec §3.2, §12).
pub const VCRC_LSB_FIRST: bool = true;

/// The VCRC algorithm ([dagcrc] `dagcrc_infiniband_vcrc16_r`). It is not in
/// the CRC catalogue, so it is a custom `crc::Algorithm`: the `crc` crate is
/// the well-maintained Rust CRC engine that takes arbitrary polynomials
/// (table-driven, const-constructed). `check` is the ibspec §3.2 value;
/// `residue` (unreflected, before the final XOR) corresponds to the §3.2
/// constant 0xAA90 that the algorithm yields over LRH..ICRC||VCRC.
pub const IB_VCRC16: Algorithm<u16> = Algorithm {
    width: 16,
    poly: 0x100B,
    init: 0xFFFF,
    refin: true,
    refout: true,
    xorout: 0xFFFF,
    check: 0x0A3D,
    residue: 0xF6AA,
};

/// CRC-32/ISO-HDLC is zlib's CRC-32 (check 0xCBF43926). Both engines
/// take 16 bytes a step (slice-by-16 tables): every packet on every hop
/// is checked and sent with them.
const ICRC_ENGINE: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_ISO_HDLC);
const VCRC_ENGINE: Crc<u16, Table<16>> = Crc::<u16, Table<16>>::new(&IB_VCRC16);

/// ICRC of a local (no GRH) packet given LRH..end of payload (no CRCs):
/// CRC-32 with LRH.VL (byte 0 bits 7:4) and BTH.resv8a (byte 12) as 1s.
/// Shorter inputs are masked as far as they reach (never panics).
pub fn icrc(packet_without_crcs: &[u8]) -> u32 {
    let mut d = ICRC_ENGINE.digest();
    let b = packet_without_crcs;
    let masked_len = b.len().min(BTH_RESV8A_OFFSET + 1);
    let mut head = [0u8; BTH_RESV8A_OFFSET + 1];
    head[..masked_len].copy_from_slice(&b[..masked_len]);
    if masked_len > 0 {
        head[0] |= 0xF0;
    }
    if masked_len > BTH_RESV8A_OFFSET {
        head[BTH_RESV8A_OFFSET] = 0xFF;
    }
    d.update(&head[..masked_len]);
    d.update(&b[masked_len..]);
    d.finalize()
}

/// VCRC over `bytes` (LRH..ICRC, unmasked).
pub fn vcrc(bytes: &[u8]) -> u16 {
    VCRC_ENGINE.checksum(bytes)
}

/// ICRC wire bytes: least-significant byte first.
pub fn icrc_to_wire(v: u32) -> [u8; ICRC_BYTES] {
    v.to_le_bytes()
}

pub fn icrc_from_wire(b: [u8; ICRC_BYTES]) -> u32 {
    u32::from_le_bytes(b)
}

/// VCRC wire bytes in the order `VCRC_LSB_FIRST` says.
pub fn vcrc_to_wire(v: u16) -> [u8; VCRC_BYTES] {
    if VCRC_LSB_FIRST {
        v.to_le_bytes()
    } else {
        v.to_be_bytes()
    }
}

pub fn vcrc_from_wire(b: [u8; VCRC_BYTES]) -> u16 {
    if VCRC_LSB_FIRST {
        u16::from_le_bytes(b)
    } else {
        u16::from_be_bytes(b)
    }
}

/// Append the ICRC of `buf` (LRH..payload) to it.
pub fn append_icrc(buf: &mut Vec<u8>) {
    let c = icrc(buf);
    buf.extend_from_slice(&icrc_to_wire(c));
}

/// Append the VCRC of `buf` (LRH..ICRC) to it.
pub fn append_vcrc(buf: &mut Vec<u8>) {
    let c = vcrc(buf);
    buf.extend_from_slice(&vcrc_to_wire(c));
}

/// Append ICRC then VCRC: LRH..payload becomes a complete wire packet.
pub fn append_crcs(buf: &mut Vec<u8>) {
    append_icrc(buf);
    append_vcrc(buf);
}

/// CRC verdicts of a complete wire packet (LRH..VCRC): (ICRC ok, VCRC ok).
/// `None` when it is too short to hold both CRCs.
pub fn check_wire(b: &[u8]) -> Option<(bool, bool)> {
    let n = b.len();
    if n < ICRC_BYTES + VCRC_BYTES {
        return None;
    }
    let i = n - ICRC_BYTES - VCRC_BYTES;
    let v = n - VCRC_BYTES;
    let icrc_ok = icrc(&b[..i]) == icrc_from_wire([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let vcrc_ok = vcrc(&b[..v]) == vcrc_from_wire([b[v], b[v + 1]]);
    Some((icrc_ok, vcrc_ok))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values() {
        // ibspec §3.2: VCRC check over "123456789" = 0x0A3D; §3.1: ICRC is
        // zlib CRC-32, whose check value is 0xCBF43926.
        assert_eq!(vcrc(b"123456789"), 0x0A3D);
        assert_eq!(ICRC_ENGINE.checksum(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn icrc_seed_after_masked_lrh() {
        // ibspec §3.1: CRC state after 0xFFFFFFFF + 8×0xFF is 0xDEBB20E3,
        // i.e. CRC-32 of 8 bytes of 0xFF = !0xDEBB20E3.
        assert_eq!(ICRC_ENGINE.checksum(&[0xFF; 8]), !0xDEBB_20E3);
    }

    #[test]
    fn short_inputs_do_not_panic() {
        for n in 0..20 {
            let _ = icrc(&vec![0xAB; n]);
            let _ = check_wire(&vec![0xAB; n]);
        }
    }
}
