//! Port 0's GMP receive path (`rtl/sw_mgmt_tile.sv:779-895`): output 0's
//! data arbiter, the register stage that puts the VCRC back on the
//! packet, `gsi_rx_check` and the `gmp_rx` host stream, with the GMP
//! bank's RxPkts, RxWords and GSI counters.
//!
//! # Timing (a data packet the LFT routes to port 0)
//! - output 0's data arbiter (`u_data_arb0`, `rtl/sw_mgmt_tile.sv:383`,
//!   `sw_out_arb`) locks a cycle after the input's request, round robin
//!   at packet boundaries as every output's; its grant-ready is
//!   `od_tready0 = !grx_extra_q` (`:795`), so a beat is taken in every
//!   locked cycle the input presents one, but the one after a full last
//!   beat (`:391-404`);
//! - a beat taken at `t` is in the register stage at `t + 1`
//!   (`grx_*_q`, `:799-827`): the VCRC the packet arrived with (the input
//!   buffer's meta, `rtl/sw_in_writer.sv:71-75`, `rtl/sw_port_tile.sv:275`)
//!   goes after a partial last beat (which ends on a 4-byte boundary), or
//!   into one more beat after a full one (`grx_extra_q`);
//! - `gsi_rx_check` (`:871`, latency 1) shows each beat on `gmp_rx` at
//!   `t + 2`, the verdict (`gmp_rx_tuser`, `gmp_rx_reason`) on the tlast
//!   beat, and its event that cycle; `gmp_rx` has no ready.
//! - RxPkts counts at the last beat's take, RxWords (`u_grx_words`,
//!   `:830`) the packet's PktLen then; the GSI counters count in the cycle
//!   the tlast beat is on `gmp_rx` (`:960-973`).

use super::tile::{Beat, OutArb, PktLenTap};
use crate::model::regmap::swreg::ctr;
use crate::model::twin::gsi::{GsiEv, GsiRx};

/// The head beat of the input output 0's data arbiter grants, as the
/// crossbar presents it: (valid, beat, the VCRC its packet arrived with).
pub type OdHead = (bool, Beat, u16);

/// What the GMP receive path gets for one edge.
pub struct GmpRxCtx<'a> {
    /// Inputs requesting output 0's data side (ascending).
    pub req: &'a [u8],
    /// The granted input's head.
    pub head: OdHead,
    /// Port 0's P_Key table (`gsi_rx_check`'s, written up to this cycle)
    /// and its last write: (cycle, index, old entry).
    pub pkey: &'a [u16],
    pub pkey_wr: Option<(u64, usize, u16)>,
    pub cycle: u64,
}

/// Output 0's data side and the GMP receive stream.
#[derive(Clone, Debug)]
pub struct GmpRx {
    db: usize,
    /// `u_data_arb0`.
    pub arb: OutArb,
    // the register stage (grx_*_q)
    g_valid: bool,
    g_extra: bool,
    g_beat: Beat,
    g_vcrc: u16,
    // u_grx_words: beat index (saturating at 3) and PktLen
    tap: PktLenTap,
    // gsi_rx_check: the packet on its input so far (LRH..VCRC) and the
    // cycles its beats were there; its state across packets
    pkt: Vec<u8>,
    cycles: Vec<u64>,
    gsi: GsiRx,
    // gsi_rx_check's output register, and the event of its tlast beat
    out_valid: bool,
    out: Beat,
    out_reason: u8,
    out_ev: Option<GsiEv>,
}

impl GmpRx {
    pub fn new(db: usize) -> Self {
        GmpRx {
            db,
            arb: OutArb::default(),
            g_valid: false,
            g_extra: false,
            g_beat: Beat::default(),
            g_vcrc: 0,
            tap: PktLenTap::default(),
            pkt: Vec::new(),
            cycles: Vec::new(),
            gsi: GsiRx::new(),
            out_valid: false,
            out: Beat::default(),
            out_reason: 0,
            out_ev: None,
        }
    }

    /// `od_tready0`: output 0 takes the granted input's data beat.
    pub fn od_tready(&self) -> bool {
        !self.g_extra
    }

    /// Port 0's part of `busy0` from this path (`rtl/sw_mgmt_tile.sv:921-924`).
    pub fn busy(&self) -> bool {
        self.arb.locked || self.g_valid || self.g_extra || self.out_valid
    }

    /// Nothing changes at an edge without a request.
    pub fn quiet(&self) -> bool {
        !self.busy() && self.out_ev.is_none()
    }

    /// The `gmp_rx` outputs of this cycle (`gsi_rx_check`'s output
    /// register; the verdict with the tlast beat).
    pub fn outputs(&self, o: &mut vl15_bindings::DevOut) {
        o.gmp_rx_tdata = self.out.words();
        o.gmp_rx_tkeep = self.out.keep;
        o.gmp_rx_tvalid = self.out_valid;
        o.gmp_rx_tlast = self.out.last;
        o.gmp_rx_tuser = self.out_reason != 0;
        o.gmp_rx_reason = self.out_reason;
    }

    /// The clock edge; adds the GMP bank's events to `gev`.
    pub fn edge(&mut self, c: &GmpRxCtx<'_>, gev: &mut [u32]) {
        let db = self.db;
        let full = if db >= 16 { 0xFFFF } else { (1u16 << db) - 1 };
        // the GSI event of the tlast beat on gmp_rx now
        if self.out_valid && self.out.last {
            if let Some(e) = self.out_ev {
                let k = match e {
                    GsiEv::IcrcErr => ctr::G_ICRC_ERR,
                    GsiEv::BadHdr => ctr::G_BAD_HDR,
                    GsiEv::PkeyViol => ctr::G_PKEY_VIOL,
                    GsiEv::QkeyViol => ctr::G_QKEY_VIOL,
                    GsiEv::Gmp => ctr::G_GMPS,
                };
                gev[usize::from(k)] += 1;
            }
        }
        // output 0's data side: the granted input's beat
        let (hv, hb, hvcrc) = c.head;
        let take = self.arb.locked && hv && self.od_tready();
        let take_last = take && hb.last;
        if take {
            // RxPkts, and RxWords (sw_pktlen_tap, ok_i = 1)
            let len = self.tap.beat(&hb, db);
            if hb.last {
                gev[usize::from(ctr::G_RX_PKTS)] += 1;
                gev[usize::from(ctr::G_RX_WORDS)] += u32::from(len);
            }
        }
        // gsi_rx_check: the register stage's beat enters
        if self.g_valid {
            let b = self.g_beat;
            let n = (b.keep.count_ones() as usize).min(16);
            self.pkt.extend_from_slice(&b.data[..n]);
            self.cycles.push(c.cycle);
            self.out_reason = 0;
            self.out_ev = None;
            if b.last {
                let cycles = &self.cycles;
                let seen = |limit: u64| cycles.iter().filter(|&&t| t < limit).count();
                let (r, ev) = self
                    .gsi
                    .judge(&self.pkt, db, c.cycle, seen, c.pkey, c.pkey_wr, false);
                self.out_reason = r;
                self.out_ev = ev;
                self.pkt.clear();
                self.cycles.clear();
            }
            self.out = b;
            self.out_valid = true;
        } else {
            self.out_valid = false;
            self.out_ev = None;
        }
        // the register stage (rtl/sw_mgmt_tile.sv:799-827)
        if self.g_extra {
            let mut data = [0u8; 16];
            data[..2].copy_from_slice(&self.g_vcrc.to_le_bytes());
            self.g_beat = Beat {
                data,
                keep: 0b11,
                last: true,
            };
        } else if take {
            let mut b = hb;
            b.last = hb.last && hb.keep != full;
            if hb.last {
                // a partial last beat ends at a 4-byte boundary: the VCRC
                // follows it
                for k in 1..db / 4 {
                    if u32::from(hb.keep) == (1u32 << (4 * k)) - 1 {
                        b.data[4 * k..4 * k + 2].copy_from_slice(&hvcrc.to_le_bytes());
                        b.keep = ((1u32 << (4 * k + 2)) - 1) as u16;
                    }
                }
            }
            self.g_beat = b;
            self.g_vcrc = hvcrc;
        }
        self.g_valid = take || self.g_extra;
        self.g_extra = take_last && hb.keep == full;
        self.arb.edge(c.req, take_last);
    }
}
