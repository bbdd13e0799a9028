//! `gsi_rx_check` (rtl/gsi_rx_check.sv), shared by the CA twin (each
//! port's data-VL receive stream, `drx`) and port 0 of the switch twin
//! (the GMP receive stream, `gmp_rx`): the header fields the checks read,
//! the P_Key table match, and the verdict on a packet at its tlast beat.
//!
//! A twin keeps the packet whole (LRH..VCRC, as the check's input carries
//! it) and the cycles its beats were on the check's input; [`GsiRx::judge`]
//! gives, at the tlast beat, the reason the check's output shows on its
//! tlast beat a cycle later (rtl/gsi_rx_check.sv:543-653) and the event it
//! counts then.

use crate::model::regmap::gsi_reason as reason;
use crate::proto::crc;

const MAD_OFF: usize = 28;
const CLASS_LID: u8 = 0x01;
const CLASS_DR: u8 = 0x81;

/// The event pulse of a verdict (at most one per packet the link passed,
/// with the output's tlast beat): `ev_icrc_err_o` .. `ev_gmp_o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GsiEv {
    IcrcErr,
    BadHdr,
    PkeyViol,
    QkeyViol,
    Gmp,
}

/// The state `gsi_rx_check` carries from one packet to the next that a
/// verdict can read: the header fields (`f_q`) after the last packet.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GsiRx {
    prev: GsiFields,
}

impl GsiRx {
    /// The state after reset (`FieldsZero`).
    pub(crate) fn new() -> Self {
        GsiRx {
            prev: GsiFields::zero(),
        }
    }

    /// The verdict on `pkt` (LRH..VCRC, the bytes under `tkeep` of its
    /// beats at `db` bytes, every beat but the last full) whose tlast beat
    /// is on the check's input in cycle `g`: the reason (`gsi_reason_e`)
    /// and the event, both shown in cycle `g + 1`. `seen(c)`: how many of
    /// its beats were on the input before cycle `c`. The header checks read
    /// the fields of the beats before `g` (`f_q`, the last packet's if
    /// none); the P_Key match is the one registered at `g - 1`
    /// (`pkey_grp_q`): the fields before `g - 1` against the table of
    /// cycle `g - 1`, which is `table` (as written up to and including
    /// cycle `g - 1`) without `last_wr` (cycle, index, old entry) when that
    /// write was in cycle `g - 1`. `link_bad`: the link discarded it
    /// (`in_tuser_i`): no event.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn judge(
        &mut self,
        pkt: &[u8],
        db: usize,
        g: u64,
        seen: impl Fn(u64) -> usize,
        table: &[u16],
        last_wr: Option<(u64, usize, u16)>,
        link_bad: bool,
    ) -> (u8, Option<GsiEv>) {
        let prev = self.prev;
        let at = |limit: u64| -> GsiFields {
            let k = seen(limit);
            if k == 0 {
                prev
            } else {
                GsiFields::of(&pkt[..(k * db).min(pkt.len())])
            }
        };
        let f = at(g);
        let f1 = at(g.saturating_sub(1));
        let hit = table.iter().enumerate().any(|(i, &e)| {
            let e = match last_wr {
                Some((c, j, old)) if c + 1 == g && j == i => old,
                _ => e,
            };
            pkey_match(&[e], f1.pkey)
        });
        let (r, qp1) = gsi_verdict(pkt, link_bad, &f, hit);
        self.prev = GsiFields::of(pkt);
        if link_bad {
            return (r, None);
        }
        let ev = match r {
            reason::ICRC_ERR => Some(GsiEv::IcrcErr),
            reason::BAD_HDR => Some(GsiEv::BadHdr),
            reason::PKEY_VIOL => Some(GsiEv::PkeyViol),
            reason::QKEY_VIOL => Some(GsiEv::QkeyViol),
            _ if qp1 => Some(GsiEv::Gmp),
            _ => None,
        };
        (r, ev)
    }
}

/// Header fields as `gsi_rx_check` holds them (rtl/gsi_rx_check.sv
/// fields_t): compare flags, each "0 byte" default where the packet lacks
/// the byte (FieldsZero).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct GsiFields {
    lnh: u8,
    pktlen: u16,
    nxthdr_ok: bool,
    op_ok: bool,
    tver_ok: bool,
    pkey: u16,
    qp_zero: [bool; 3],
    qp_one: bool,
    qkey_ok: [bool; 4],
    bv_ok: bool,
    mc_lid: bool,
    mc_dr: bool,
}

const QP1_QKEY: [u8; 4] = [0x80, 0x01, 0x00, 0x00];
const GRH_BYTES: usize = 40;

impl GsiFields {
    fn zero() -> Self {
        GsiFields {
            lnh: 0,
            pktlen: 0,
            nxthdr_ok: false,
            op_ok: false,
            tver_ok: true,
            pkey: 0,
            qp_zero: [true; 3],
            qp_one: false,
            qkey_ok: [false, false, true, true],
            bv_ok: false,
            mc_lid: false,
            mc_dr: false,
        }
    }
    /// The fields after the bytes `b` of one packet (its first beats).
    fn of(b: &[u8]) -> Self {
        let mut f = GsiFields::zero();
        let grh = b.get(1).is_some_and(|x| x & 3 == 3);
        let g = if grh { GRH_BYTES } else { 0 };
        let at = |o: usize| b.get(o).copied();
        if let Some(x) = at(1) {
            f.lnh = x & 3;
        }
        if let Some(x) = at(4) {
            f.pktlen = (f.pktlen & 0xFF) | (u16::from(x & 7) << 8);
        }
        if let Some(x) = at(5) {
            f.pktlen = (f.pktlen & 0x700) | u16::from(x);
        }
        if let Some(x) = at(14) {
            f.nxthdr_ok = x == 0x1B;
        }
        if let Some(x) = at(8 + g) {
            f.op_ok = x == 0x64;
        }
        if let Some(x) = at(9 + g) {
            f.tver_ok = x & 0x3F == 0;
        }
        if let Some(x) = at(10 + g) {
            f.pkey = (f.pkey & 0xFF) | (u16::from(x) << 8);
        }
        if let Some(x) = at(11 + g) {
            f.pkey = (f.pkey & 0xFF00) | u16::from(x);
        }
        for i in 0..3 {
            if let Some(x) = at(13 + g + i) {
                f.qp_zero[i] = x == 0;
                if i == 2 {
                    f.qp_one = x == 1;
                }
            }
        }
        for (i, q) in QP1_QKEY.iter().enumerate() {
            if let Some(x) = at(20 + g + i) {
                f.qkey_ok[i] = x == *q;
            }
        }
        if let Some(x) = at(MAD_OFF + g) {
            f.bv_ok = x == 1;
        }
        if let Some(x) = at(MAD_OFF + 1 + g) {
            f.mc_lid = x == CLASS_LID;
            f.mc_dr = x == CLASS_DR;
        }
        f
    }
}

/// The ICRC of a packet (LRH..ICRC, `b`) with a GRH masked as ibspec §3.1
/// and rtl/gsi_rx_check.sv icrc_ones say, or local; true when it matches.
fn icrc_ok_any(b: &[u8], grh: bool) -> bool {
    if b.len() < 4 {
        return false;
    }
    let n = b.len() - 4;
    let field = u32::from_le_bytes([b[n], b[n + 1], b[n + 2], b[n + 3]]);
    if !grh {
        return crc::icrc(&b[..n]) == field;
    }
    let mut m = b[..n].to_vec();
    for (i, x) in m.iter_mut().enumerate() {
        let or = match i {
            0..=7 => 0xFF,
            8 => 0x0F,
            9..=11 | 15 => 0xFF,
            52 => 0xFF,
            _ => 0,
        };
        *x |= or;
    }
    let eng = ::crc::Crc::<u32>::new(&::crc::CRC_32_ISO_HDLC);
    eng.checksum(&m) == field
}

/// gsi_rx_check's verdict on a data-VL packet (rtl/gsi_rx_check.sv
/// reason_rest and the ICRC residue): the reason code (ib_pkg
/// gsi_reason_e) and whether it was for QP1. `f` holds the fields before
/// the tlast beat, `pkey_hit` the registered table match.
fn gsi_verdict(pkt: &[u8], link_bad: bool, f: &GsiFields, pkey_hit: bool) -> (u8, bool) {
    let global = f.lnh == 3;
    let grh_short = global && f.pktlen < 16;
    let is_qp1 = f.qp_zero[0] && f.qp_zero[1] && f.qp_one;
    let qp1_bad = !f.op_ok
        || !f.tver_ok
        || f.pktlen != if global { 82 } else { 72 }
        || !f.bv_ok
        || f.mc_lid
        || f.mc_dr;
    let err_hdr =
        grh_short || (global && !f.nxthdr_ok) || f.qp_zero == [true; 3] || (is_qp1 && qp1_bad);
    let rest = if link_bad {
        reason::LINK_DROP
    } else if err_hdr {
        reason::BAD_HDR
    } else if is_qp1 && !pkey_hit {
        reason::PKEY_VIOL
    } else if is_qp1 && f.qkey_ok != [true; 4] {
        reason::QKEY_VIOL
    } else {
        reason::OK
    };
    let icrc_chk = !link_bad && !grh_short;
    // the residue over the bytes before the VCRC
    let body = &pkt[..pkt.len().saturating_sub(2)];
    let grh_now = pkt.get(1).is_some_and(|x| x & 3 == 3);
    if icrc_chk && !icrc_ok_any(body, grh_now) {
        return (reason::ICRC_ERR, is_qp1);
    }
    (rest, is_qp1)
}

/// ibspec §2 (Linux rxe `pkey_match`, IBA 10.9.3): P_Key `p` of a packet
/// matches a port's table when some entry has the same low 15 bits (not 0)
/// and at least one of the two is a full member (bit 15).
pub fn pkey_match(table: &[u16], p: u16) -> bool {
    table
        .iter()
        .any(|&e| p & 0x7FFF != 0 && e & 0x7FFF == p & 0x7FFF && (e | p) & 0x8000 != 0)
}
