//! One external port of the switch twin (`rtl/sw_port_tile.sv`): the link
//! checks, the two input buffers with their writers and routing, the two
//! output arbiters, the link transmitter and the port's registers.
//!
//! Every piece keeps exactly the registers its RTL module keeps that a
//! consumer can tell apart, and nothing per byte lane: a packet entering
//! an input buffer is kept as one byte vector, and its VCRC is computed once,
//! on its last beat ([`LinkRx`]); an output computes the VCRC it appends once
//! per packet ([`LinkTx`]). The switch ([`super::SwitchTwin`]) steps a tile
//! only in cycles in which it has work or an input of it changed; a tile
//! with nothing buffered, nothing in flight and quiet inputs costs nothing.

use std::collections::VecDeque;

use crate::proto::crc;

/// Effective PortState encodings (ib_pkg `PortState*`).
pub mod ps {
    pub const NO_CHANGE: u8 = 0;
    pub const DOWN: u8 = 1;
    pub const INIT: u8 = 2;
    pub const ACTIVE: u8 = 4;
}

/// VL15 input slots (`Vl15Depth`) and data slots (`DataDepth`).
pub const VL15_DEPTH: u32 = 3;
pub const DATA_DEPTH: u32 = 2;
/// Bytes of a VL15 slot (`SmpPktBytes`) and of a data slot (`DataSlotBytes`).
const VL15_SLOT_BYTES: u32 = 288;
const DATA_SLOT_BYTES: u32 = 4224;
/// `ib_pkg::MinPktLen`: LRH + BTH + ICRC in words.
const MIN_PKT_LEN: u16 = 6;
/// Counters per port (`SwNumCtrs`) and their indices (`sw_ctr_e`).
pub const NUM_CTRS: usize = 16;
mod ctr {
    pub const RX_PKTS: usize = 0;
    pub const RX_VCRC_ERR: usize = 1;
    pub const RX_LEN_ERR: usize = 2;
    pub const RX_LVER_ERR: usize = 3;
    pub const RX_LNH_ERR: usize = 4;
    pub const VL15_DROPPED: usize = 5;
    pub const DATA_DROPPED: usize = 6;
    pub const LINK_DOWN_DROP: usize = 7;
    pub const NO_ROUTE: usize = 8;
    pub const LOOP_DROP: usize = 9;
    pub const STATE_DROP: usize = 10;
    pub const FWD_PKTS: usize = 11;
    pub const TX_VL15_PKTS: usize = 12;
    pub const TX_DATA_PKTS: usize = 13;
    pub const RX_WORDS: usize = 14;
    pub const TX_WORDS: usize = 15;
}

/// `sw_pktlen_tap` (`rtl/sw_pktlen_tap.sv`): the beat index (saturating
/// at 3) and the LRH.PktLen register of one packet stream.
#[derive(Clone, Copy, Debug, Default)]
pub struct PktLenTap {
    bidx: u8,
    len: u16,
}

impl PktLenTap {
    /// A beat of `db` bytes passes: the packet's PktLen as of this beat
    /// (`len_now`, what a counted tlast beat adds to a word counter).
    pub fn beat(&mut self, b: &Beat, db: usize) -> u16 {
        /// Byte offset of the LRH's PktLen (`PbLrhPktLen`).
        const LRH_PKTLEN: usize = 4;
        let hdr = usize::from(self.bidx) == LRH_PKTLEN / db;
        let len = if hdr {
            let o = LRH_PKTLEN % db;
            u16::from(b.data[o] & 7) << 8 | u16::from(b.data[o + 1])
        } else {
            self.len
        };
        if b.last {
            self.bidx = 0;
        } else if self.bidx != 3 {
            self.bidx += 1;
        }
        if hdr {
            self.len = len;
        }
        len
    }
}

/// One beat of a stream: bytes in lane order (byte 0 first on the wire),
/// keep, last.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Beat {
    pub data: [u8; 16],
    pub keep: u16,
    pub last: bool,
}

impl Beat {
    /// The beat as the bindings carry it (two little-endian words).
    pub fn words(&self) -> [u64; 2] {
        let mut w = [0u64; 2];
        for (j, b) in self.data.iter().enumerate() {
            w[j / 8] |= u64::from(*b) << ((j % 8) * 8);
        }
        w
    }
    pub fn from_words(d: [u64; 2], keep: u16, last: bool) -> Beat {
        let mut data = [0u8; 16];
        for (j, b) in data.iter_mut().enumerate() {
            *b = (d[j / 8] >> ((j % 8) * 8)) as u8;
        }
        Beat { data, keep, last }
    }
}

/// `tkeep` of `n` bytes from lane 0.
fn keep_of(n: u32) -> u16 {
    if n >= 16 {
        0xFFFF
    } else {
        (1u16 << n) - 1
    }
}

/// `sw_rr_pick`: the first requester after `last`, cyclically, of the
/// ascending `req` list; None if there is none.
pub fn rr_pick(req: &[u8], last: u8) -> Option<u8> {
    req.iter()
        .copied()
        .find(|&r| r > last)
        .or_else(|| req.first().copied())
}

/// `ib_link_rx`: the link checks (length, LVer, LNH, VCRC) and the one-cycle
/// register stage to the buffers. The VCRC is computed over the packet's
/// bytes once, on its last beat (`rtl/ib_link_rx.sv` folds it per beat).
#[derive(Clone, Debug, Default)]
struct LinkRx {
    in_pkt: bool,
    bcnt: u16,
    nbeat: u8,
    b0: u8,
    b1: u8,
    b4: u8,
    b5: u8,
    /// The bytes of the open packet's beats before this one.
    bytes: Vec<u8>,
    out_valid: bool,
    out_vl15: bool,
    out_user: bool,
    out: Beat,
    ev_pkt: bool,
    ev_len: bool,
    ev_lver: bool,
    ev_lnh: bool,
    ev_vcrc: bool,
}

impl LinkRx {
    fn reset(&mut self) {
        let out = self.out;
        *self = LinkRx {
            bytes: std::mem::take(&mut self.bytes),
            out,
            ..LinkRx::default()
        };
        self.bytes.clear();
    }

    fn idle(&self) -> bool {
        !self.in_pkt && !self.out_valid && !self.ev_pkt
    }

    /// Whether the edges to come with beats that are not a packet's last
    /// change nothing but what [`LinkRx::take_mid`] moves: inside a
    /// packet, past its header beats, a beat staged that is not its last.
    fn steady(&self) -> bool {
        self.in_pkt && self.nbeat == 2 && self.out_valid && !self.out.last && !self.ev_pkt
    }

    /// The edge of a [`LinkRx::steady`] receiver with beat `b`, not a
    /// packet's last, arriving: as [`LinkRx::edge`] moves it.
    fn take_mid(&mut self, b: &Beat, db: u32) {
        let nbytes = b.keep.count_ones();
        self.bcnt = if u32::from(self.bcnt) > 0xFFFF - db {
            0xFFFF
        } else {
            self.bcnt + nbytes as u16
        };
        self.bytes.extend_from_slice(&b.data[..db as usize]);
        self.out = *b;
    }

    /// The clock edge with beat `b` arriving (`valid`, already gated by the
    /// link) at width `db` bytes.
    fn edge(&mut self, valid: bool, b: &Beat, db: u32) {
        if !valid {
            self.out_valid = false;
            self.ev_pkt = false;
            self.ev_len = false;
            self.ev_lver = false;
            self.ev_lnh = false;
            self.ev_vcrc = false;
            return;
        }
        let nbytes = b.keep.count_ones();
        let total = if u32::from(self.bcnt) > 0xFFFF - db {
            0xFFFF
        } else {
            self.bcnt + nbytes as u16
        };
        let (mut b0, mut b1, mut b4, mut b5) = if self.in_pkt {
            (self.b0, self.b1, self.b4, self.b5)
        } else {
            (0, 0, 0, 0)
        };
        // DataW >= 64: bytes 0..5 lie in beat 0.
        if self.nbeat == 0 {
            if b.keep & 1 != 0 {
                b0 = b.data[0];
            }
            if b.keep & 2 != 0 {
                b1 = b.data[1];
            }
            if b.keep & 0x10 != 0 {
                b4 = b.data[4];
            }
            if b.keep & 0x20 != 0 {
                b5 = b.data[5];
            }
        }
        let pkt_len = (u16::from(b4 & 7) << 8) | u16::from(b5);
        let route_vl15 = b0 >> 4 == 0xF;
        let last_byte = (u32::from(pkt_len) << 2) | 1;
        let mut err_any = false;
        if b.last {
            let err_len = u32::from(self.bcnt) != (last_byte & !(db - 1))
                || nbytes != (last_byte & (db - 1)) + 1
                || pkt_len < MIN_PKT_LEN;
            let err_lver = b0 & 0xF != 0;
            let err_lnh = !matches!(b1 & 3, 2 | 3);
            let err_vcrc = if err_len || err_lver || err_lnh {
                false
            } else {
                let k = (nbytes >> 2) as usize * 4;
                self.bytes.extend_from_slice(&b.data[..k]);
                let rx = u16::from_le_bytes([b.data[k], b.data[k + 1]]);
                rx != crc::vcrc(&self.bytes)
            };
            err_any = err_len || err_lver || err_lnh || err_vcrc;
            self.ev_len = err_len;
            self.ev_lver = !err_len && err_lver;
            self.ev_lnh = !err_len && !err_lver && err_lnh;
            self.ev_vcrc = !err_len && !err_lver && !err_lnh && err_vcrc;
            self.bytes.clear();
        } else {
            self.ev_len = false;
            self.ev_lver = false;
            self.ev_lnh = false;
            self.ev_vcrc = false;
            self.bytes.extend_from_slice(&b.data[..db as usize]);
        }
        self.ev_pkt = b.last;
        self.in_pkt = !b.last;
        self.nbeat = if b.last { 0 } else { (self.nbeat + 1).min(2) };
        self.bcnt = if b.last { 0 } else { total };
        self.b0 = b0;
        self.b1 = b1;
        self.b4 = b4;
        self.b5 = b5;
        self.out_valid = true;
        self.out_vl15 = route_vl15;
        self.out_user = b.last && err_any;
        self.out = *b;
    }
}

/// A packet in an input buffer: LRH..ICRC, its beats, the LRH DLID and
/// the VCRC it arrived with (`wr_vcrc_o`, the data buffer's meta).
#[derive(Clone, Debug)]
struct Pkt {
    bytes: Vec<u8>,
    beats: u32,
    dlid: u16,
    vcrc: u16,
}

impl Pkt {
    fn beat(&self, k: u32, db: u32, last: bool) -> Beat {
        let s = (k * db) as usize;
        let e = (s + db as usize).min(self.bytes.len());
        let mut data = [0u8; 16];
        data[..e - s].copy_from_slice(&self.bytes[s..e]);
        Beat {
            data,
            keep: if last {
                keep_of((e - s) as u32)
            } else {
                keep_of(db)
            },
            last,
        }
    }
}

/// An input buffer: `sw_in_writer` and `ib_pkt_fifo` (slots `depth`,
/// `slot_words` beats each) with the occupancy count of the tile.
#[derive(Clone, Debug)]
pub(super) struct InBuf {
    depth: u32,
    slot_words: u32,
    // sw_in_writer
    w_open: bool,
    w_beats: u16,
    w_dlid: u16,
    // ib_pkt_fifo, write side
    f_open: bool,
    f_claim: bool,
    f_nospace: bool,
    f_ovf: bool,
    wcnt: u32,
    wfull: bool,
    slot_free: bool,
    cur: Vec<u8>,
    cnt: u32,
    iss_cnt: u32,
    iss_beat: u32,
    /// Committed packets not yet freed, oldest first.
    pkts: VecDeque<Pkt>,
    // the output register
    out_valid: bool,
    out: Beat,
    out_dlid: u16,
    out_vcrc: u16,
    /// `v_occ_q` / `d_occ_q` of the tile.
    occ: u32,
}

/// What an input buffer's write side does in one cycle.
#[derive(Clone, Copy, Debug, Default)]
struct WrEv {
    drop: bool,
    link_drop: bool,
}

impl InBuf {
    fn new(depth: u32, slot_bytes: u32, db: u32) -> Self {
        InBuf {
            depth,
            slot_words: slot_bytes.div_ceil(db),
            w_open: false,
            w_beats: 0,
            w_dlid: 0,
            f_open: false,
            f_claim: false,
            f_nospace: false,
            f_ovf: false,
            wcnt: 0,
            wfull: false,
            slot_free: true,
            cur: Vec::new(),
            cnt: 0,
            iss_cnt: 0,
            iss_beat: 0,
            pkts: VecDeque::new(),
            out_valid: false,
            out: Beat::default(),
            out_dlid: 0,
            out_vcrc: 0,
            occ: 0,
        }
    }

    fn reset(&mut self) {
        let mut cur = std::mem::take(&mut self.cur);
        cur.clear();
        let out = self.out;
        *self = InBuf {
            cur,
            out,
            out_dlid: self.out_dlid,
            out_vcrc: self.out_vcrc,
            ..InBuf::new(self.depth, 0, 8)
        }
        .with_slot_words(self.slot_words);
    }

    fn with_slot_words(mut self, w: u32) -> Self {
        self.slot_words = w;
        self
    }

    fn idle(&self) -> bool {
        !self.w_open && !self.f_open && self.cnt == 0 && !self.out_valid && self.occ == 0
    }

    /// The head beat as the buffer presents it (valid, beat).
    fn head(&self) -> (bool, &Beat) {
        (self.out_valid, &self.out)
    }

    /// Where the valid head is in its packet (the oldest one held): its
    /// beat index and the packet's beats.
    pub(super) fn head_pos(&self) -> Option<(u32, u32)> {
        let p = self.pkts.front().filter(|_| self.out_valid)?;
        let j = if self.cnt == self.iss_cnt {
            self.iss_beat.checked_sub(1)?
        } else {
            p.beats - 1
        };
        Some((j, p.beats))
    }

    /// Beat `k` of the head's packet, as the buffer issues it.
    pub(super) fn beat_at(&self, k: u32, db: u32) -> Beat {
        self.pkts
            .front()
            .map_or_else(Beat::default, |p| p.beat(k, db, k + 1 == p.beats))
    }

    /// The DLID of the packet the route sees next: the valid head's, or
    /// the oldest held one's.
    pub(super) fn next_dlid(&self) -> Option<u16> {
        if self.out_valid {
            Some(self.out_dlid)
        } else {
            self.pkts.front().map(|p| p.dlid)
        }
    }

    /// Packets held (committed, not yet freed).
    pub(super) fn held(&self) -> u32 {
        self.cnt
    }

    /// Nothing to read: no head and none to issue.
    pub(super) fn read_idle(&self) -> bool {
        !self.out_valid && self.iss_cnt == 0
    }

    /// A packet is being written (`sw_in_writer` open).
    pub(super) fn w_open(&self) -> bool {
        self.w_open
    }

    /// The tile's occupancy count of this buffer.
    pub(super) fn occ(&self) -> u32 {
        self.occ
    }

    /// How many edges from now the write side can take beats that are
    /// not a packet's last with nothing but [`InBuf::write_mid`] moving:
    /// a packet open, its slot not filling up (then `wfull` would rise).
    fn write_bound(&self) -> Option<u64> {
        if !(self.w_open && self.f_open) || self.wfull {
            return None;
        }
        if self.f_claim && !self.f_ovf {
            Some(u64::from((self.slot_words - 1).saturating_sub(self.wcnt)))
        } else {
            // (dropping it: nothing is written)
            Some(u64::MAX)
        }
    }

    /// The write side's edge with beat `s`, not its packet's last, as
    /// [`InBuf::edge`] moves it within [`InBuf::write_bound`].
    fn write_mid(&mut self, s: &Beat) {
        if self.f_claim && !self.f_ovf {
            let n = s.keep.count_ones() as usize;
            self.cur.extend_from_slice(&s.data[..n]);
            self.wcnt += 1;
        }
        self.w_beats = self.w_beats.saturating_add(1);
    }

    /// `m` edges in which the head is taken and is not its packet's last
    /// beat (nothing written): the next beats issue.
    pub(super) fn advance(&mut self, m: u64, db: u32) {
        for _ in 0..m {
            let Some(p) = self.pkts.get((self.cnt - self.iss_cnt) as usize) else {
                return;
            };
            let iss_last = self.iss_beat + 1 == p.beats;
            self.out = p.beat(self.iss_beat, db, iss_last);
            if iss_last {
                self.iss_beat = 0;
                self.iss_cnt -= 1;
            } else {
                self.iss_beat += 1;
            }
        }
    }

    /// The clock edge: beat `s` from the link (`s_valid`, `s_user` on its
    /// last beat) enters, and the head is taken when `tready`. Returns the
    /// write side's events and whether a packet was committed.
    fn edge(
        &mut self,
        s_valid: bool,
        s: &Beat,
        s_user: bool,
        link_up: bool,
        tready: bool,
        db: u32,
    ) -> (WrEv, bool) {
        // sw_in_writer
        let first = s_valid && !self.w_open;
        let dlid = if first {
            u16::from_be_bytes([s.data[2], s.data[3]])
        } else {
            self.w_dlid
        };
        let vcrc_only = s.keep == 0b11;
        let wr_valid = s_valid && !(s.last && vcrc_only);
        let wr_keep = if s.last { s.keep >> 2 } else { s.keep };
        let ovf_w = u32::from(self.w_beats) + u32::from(wr_valid) > self.slot_words;
        let end_good = s_valid && s.last && !s_user;
        let wr_end = (s_valid && s.last) || (!link_up && self.w_open);
        let wr_ok = end_good && link_up;
        // ib_pkt_fifo write side
        let open_now = self.f_open || wr_valid;
        let claim_now = if self.f_open {
            self.f_claim
        } else {
            self.slot_free
        };
        let nospace_now = if self.f_open {
            self.f_nospace
        } else {
            wr_valid && !self.slot_free
        };
        let ovf_now = self.f_ovf || (wr_valid && claim_now && self.wfull);
        let wr_beat = wr_valid && claim_now && !ovf_now;
        let commit = wr_end && wr_ok && open_now && claim_now && !ovf_now;
        let drop_full = wr_end && wr_ok && open_now && nospace_now;
        let ev = WrEv {
            drop: drop_full || (end_good && link_up && ovf_w),
            link_drop: !link_up && self.w_open,
        };
        let ev_commit = end_good && link_up && !ovf_w && !drop_full;
        // read side
        let rd_take = self.out_valid && tready;
        let rd_issue = self.iss_cnt != 0 && (!self.out_valid || tready);
        let freed = rd_take && self.out.last;
        let taken_last = rd_take && self.out.last;
        if rd_issue {
            let idx = (self.cnt - self.iss_cnt) as usize;
            let p = &self.pkts[idx];
            let iss_last = self.iss_beat + 1 == p.beats;
            self.out = p.beat(self.iss_beat, db, iss_last);
            self.out_dlid = p.dlid;
            self.out_vcrc = p.vcrc;
            self.out_valid = true;
            if iss_last {
                self.iss_beat = 0;
                self.iss_cnt -= 1;
            } else {
                self.iss_beat += 1;
            }
        } else if rd_take {
            self.out_valid = false;
        }
        if freed {
            self.pkts.pop_front();
            self.cnt -= 1;
        }
        // write side registers
        if wr_beat {
            let n = wr_keep.count_ones() as usize;
            self.cur.extend_from_slice(&s.data[..n]);
        }
        if commit {
            let beats = self.wcnt + u32::from(wr_beat);
            // the last two bytes of a tlast beat of 4k + 2 bytes
            // (rtl/sw_in_writer.sv:71-75)
            let vcrc = (0..db as usize / 4)
                .find(|&k| u32::from(s.keep) == (1u32 << (4 * k + 2)) - 1)
                .map_or(0, |k| {
                    u16::from_le_bytes([s.data[4 * k], s.data[4 * k + 1]])
                });
            self.pkts.push_back(Pkt {
                bytes: std::mem::take(&mut self.cur),
                beats,
                dlid,
                vcrc,
            });
            self.cnt += 1;
            self.iss_cnt += 1;
        }
        self.slot_free = self.cnt < self.depth;
        self.wfull = !wr_end
            && if wr_beat {
                self.wcnt == self.slot_words - 1
            } else {
                self.wfull
            };
        if wr_end {
            self.f_open = false;
            self.f_claim = false;
            self.f_nospace = false;
            self.f_ovf = false;
            self.wcnt = 0;
            self.cur.clear();
        } else {
            self.f_open = open_now;
            self.f_claim = claim_now;
            self.f_nospace = nospace_now;
            self.f_ovf = ovf_now;
            self.wcnt += u32::from(wr_beat);
        }
        if wr_end {
            self.w_open = false;
            self.w_beats = 0;
        } else if s_valid {
            self.w_open = true;
            self.w_dlid = dlid;
            if wr_valid && self.w_beats != 0xFFFF {
                self.w_beats += 1;
            }
        }
        self.occ = self.occ + u32::from(ev_commit) - u32::from(taken_last);
        (ev, commit)
    }
}

/// `sw_route` states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RouteSt {
    #[default]
    Idle,
    Lookup,
    Rsp,
    Check,
    Req,
    Drain,
}

/// `sw_route` of an external input (`Port0` = 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct Route {
    pub st: RouteSt,
    pub dest: u8,
}

/// The configuration the routes read.
pub struct RouteCfg<'a> {
    pub num_ports: u8,
    pub port0_lid: u16,
    pub linear_top: u16,
    /// Effective PortState of ports 0..=64.
    pub state: &'a [u8],
}

/// What a route did in one cycle (its counter events).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RouteEv {
    pub no_route: bool,
    pub loop_: bool,
    pub state: bool,
    pub fwd: bool,
}

impl Route {
    /// The edge: `head` valid/last, its DLID; `take`: a head beat is
    /// taken; the LFT's grant and response for this requester.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn edge(
        &mut self,
        vl15: bool,
        in_port: u8,
        fixed: Option<u8>,
        head_valid: bool,
        head_last: bool,
        dlid: u16,
        take: bool,
        cfg: &RouteCfg<'_>,
        lft_gnt: bool,
        lft_rsp: Option<u8>,
    ) -> RouteEv {
        let mut ev = RouteEv::default();
        let mut st = self.st;
        let mut cand = None;
        let (mut no_route, mut loop_, mut state_bad) = (false, false, false);
        let unicast = dlid != 0 && dlid < 0xC000;
        match self.st {
            RouteSt::Idle => {
                if head_valid {
                    // port 0: the SMI (VL15, permissive DLID or the port-0
                    // LID) or the GMP receive path (data, the port-0 LID)
                    if let Some(e) = fixed {
                        // port 0's send queue: the egress its DR rules chose
                        cand = Some(e);
                    } else if in_port != 0
                        && ((vl15 && dlid == 0xFFFF)
                            || (dlid == cfg.port0_lid && cfg.port0_lid != 0))
                    {
                        cand = Some(0);
                    } else if !unicast
                        || dlid >= vl15_bindings::SWITCH_LFT_DEPTH
                        || dlid > cfg.linear_top
                    {
                        no_route = true;
                    } else {
                        st = RouteSt::Lookup;
                    }
                }
            }
            RouteSt::Lookup => {
                if lft_gnt {
                    st = RouteSt::Rsp;
                }
            }
            RouteSt::Rsp => {
                if let Some(e) = lft_rsp {
                    if e == 0xFF || e > cfg.num_ports || (!vl15 && in_port != 0 && e == 0) {
                        no_route = true;
                    } else if e == in_port {
                        loop_ = true;
                    } else {
                        cand = Some(e);
                    }
                }
            }
            RouteSt::Check => {
                let eg = self.dest;
                let es = if eg <= cfg.num_ports {
                    cfg.state[usize::from(eg)]
                } else {
                    ps::DOWN
                };
                let ok = if vl15 {
                    es != ps::DOWN
                } else {
                    es == ps::ACTIVE
                        && in_port <= cfg.num_ports
                        && cfg.state[usize::from(in_port)] == ps::ACTIVE
                };
                if ok {
                    st = RouteSt::Req;
                    ev.fwd = true;
                } else {
                    state_bad = true;
                }
            }
            RouteSt::Req | RouteSt::Drain => {
                if take && head_last {
                    st = RouteSt::Idle;
                }
            }
        }
        if let Some(c) = cand {
            if c == in_port {
                loop_ = true;
            } else {
                self.dest = c;
                st = RouteSt::Check;
            }
        }
        if no_route || loop_ || state_bad {
            st = RouteSt::Drain;
            ev.no_route = no_route;
            ev.loop_ = loop_;
            ev.state = state_bad;
        }
        self.st = st;
        ev
    }
}

/// `sw_out_arb`: round-robin at packet boundaries over inputs 0..=64.
#[derive(Clone, Copy, Debug)]
pub struct OutArb {
    pub locked: bool,
    pub grant: u8,
    last: u8,
}

impl Default for OutArb {
    fn default() -> Self {
        OutArb {
            locked: false,
            grant: 0,
            last: 64,
        }
    }
}

impl OutArb {
    /// The edge with the requesting inputs `req` (ascending) and whether the
    /// granted packet's last beat is taken.
    pub(super) fn edge(&mut self, req: &[u8], take_last: bool) {
        if self.locked {
            if take_last {
                self.locked = false;
            }
        } else if let Some(s) = rr_pick(req, self.last) {
            self.locked = true;
            self.grant = s;
            self.last = s;
        }
    }
}

/// `ib_link_tx` states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) enum TxSt {
    #[default]
    Idle,
    Pkt,
    Extra,
}

/// `ib_link_tx` (`Vl15FullBeats` 0): VL15 first at a packet boundary, the
/// VCRC appended (computed once per packet over the bytes sent, a last
/// beat's trailing partial word aside).
#[derive(Clone, Debug, Default)]
pub struct LinkTx {
    pub(super) st: TxSt,
    pub(super) sel_vl15: bool,
    vcrc: u16,
    split: bool,
    bytes: Vec<u8>,
    pub out_valid: bool,
    out_vl15: bool,
    pub out: Beat,
    // the TxWords tap (sw_pktlen_tap)
    tap_bidx: u8,
    tap_len: u16,
}

/// The input side of an output for one cycle: the granted heads.
#[derive(Clone, Copy, Debug, Default)]
pub struct TxIn {
    pub v_valid: bool,
    pub v: Beat,
    pub d_valid: bool,
    pub d: Beat,
}

/// What an output decides from its registers and inputs in one cycle.
#[derive(Clone, Copy, Debug, Default)]
pub struct TxPlan {
    pub load: bool,
    pub use_vl15: bool,
    /// `vl15_tready_o` / `data_tready_o`: the granted input's beat would
    /// be taken (the arbiters' grant-ready).
    pub v_ready: bool,
    pub d_ready: bool,
    /// The VL15 / data head beat is taken.
    pub v_take: bool,
    pub d_take: bool,
}

impl LinkTx {
    fn reset(&mut self) {
        let mut bytes = std::mem::take(&mut self.bytes);
        bytes.clear();
        let out = self.out;
        *self = LinkTx {
            bytes,
            out,
            ..LinkTx::default()
        };
    }

    fn idle(&self) -> bool {
        self.st == TxSt::Idle && !self.out_valid
    }

    /// An edge in the middle of a packet with `tready`: the beat shown
    /// leaves, and `b`, a beat of the packet that is not its last, is
    /// taken from the VL15 (`vl15`) or data input.
    pub(super) fn take_mid(&mut self, b: &Beat, vl15: bool, db: u32) {
        if self.out_valid && self.tap_bidx != 3 {
            if self.tap_bidx == 0 {
                self.tap_len = (u16::from(self.out.data[4] & 7) << 8) | u16::from(self.out.data[5]);
            }
            self.tap_bidx += 1;
        }
        self.bytes.extend_from_slice(&b.data[..db as usize]);
        self.out = Beat {
            data: b.data,
            keep: b.keep,
            last: false,
        };
        self.out_valid = true;
        self.out_vl15 = vl15;
        self.sel_vl15 = vl15;
        self.st = TxSt::Pkt;
    }

    /// The readies of this cycle (`tready`: the wire's, or a down link).
    pub fn plan(&self, i: &TxIn, tready: bool) -> TxPlan {
        let load = !self.out_valid || tready;
        let use_vl15 = match self.st {
            TxSt::Idle => i.v_valid,
            _ => self.sel_vl15,
        };
        let not_extra = self.st != TxSt::Extra;
        let v_ready = load && not_extra && use_vl15;
        let d_ready = load && not_extra && !use_vl15;
        TxPlan {
            load,
            use_vl15,
            v_ready,
            d_ready,
            v_take: v_ready && i.v_valid,
            d_take: d_ready && i.d_valid,
        }
    }

    /// The edge; returns the (VL15, data) packet events and TxWords.
    pub(super) fn edge(
        &mut self,
        i: &TxIn,
        p: &TxPlan,
        tready: bool,
        db: u32,
    ) -> (bool, bool, u32) {
        // events and the tap see this cycle's output register
        let beat = self.out_valid && tready;
        let ev_v = beat && self.out.last && self.out_vl15;
        let ev_d = beat && self.out.last && !self.out_vl15;
        let mut words = 0;
        if beat {
            let hdr = self.tap_bidx == 0;
            let len_now = if hdr {
                (u16::from(self.out.data[4] & 7) << 8) | u16::from(self.out.data[5])
            } else {
                self.tap_len
            };
            if self.out.last {
                words = u32::from(len_now);
                self.tap_bidx = 0;
            } else if self.tap_bidx != 3 {
                self.tap_bidx += 1;
            }
            if hdr {
                self.tap_len = len_now;
            }
        }
        if !p.load {
            return (ev_v, ev_d, words);
        }
        let inb = if p.use_vl15 { &i.v } else { &i.d };
        let in_valid = self.st != TxSt::Extra && if p.use_vl15 { i.v_valid } else { i.d_valid };
        let mut nxt = Beat {
            data: inb.data,
            keep: inb.keep,
            last: false,
        };
        let mut nxt_valid = false;
        let mut st = self.st;
        if self.st == TxSt::Extra {
            nxt_valid = true;
            nxt.last = true;
            nxt.data = [0; 16];
            let v = self.vcrc.to_le_bytes();
            if self.split {
                nxt.data[0] = v[1];
                nxt.keep = 1;
            } else {
                nxt.data[0] = v[0];
                nxt.data[1] = v[1];
                nxt.keep = 0b11;
            }
            st = TxSt::Idle;
        } else if in_valid {
            nxt_valid = true;
            if inb.last {
                let nbytes = inb.keep.count_ones();
                let full_last = nbytes == db;
                let fits = !full_last && nbytes + 2 <= db;
                let one_free = !full_last && nbytes + 1 == db;
                // the VCRC covers the last beat's whole 4-byte words only:
                // the bytes of a trailing partial word (a host GMP that is
                // not whole words) are sent, not covered
                // (rtl/ib_link_tx.sv:138-162)
                self.bytes
                    .extend_from_slice(&inb.data[..(nbytes & !3) as usize]);
                let v = crc::vcrc(&self.bytes);
                self.bytes.clear();
                let vb = v.to_le_bytes();
                if one_free {
                    nxt.data[(db - 1) as usize] = vb[0];
                    nxt.keep = keep_of(db);
                }
                if fits {
                    nxt.last = true;
                    nxt.data[nbytes as usize] = vb[0];
                    nxt.data[nbytes as usize + 1] = vb[1];
                    nxt.keep |= 0b11 << nbytes;
                }
                self.sel_vl15 = p.use_vl15;
                if fits {
                    st = TxSt::Idle;
                } else {
                    st = TxSt::Extra;
                    self.vcrc = v;
                    self.split = one_free;
                }
            } else {
                self.sel_vl15 = p.use_vl15;
                self.bytes.extend_from_slice(&inb.data[..db as usize]);
                st = TxSt::Pkt;
            }
        }
        self.st = st;
        self.out_valid = nxt_valid;
        self.out_vl15 = p.use_vl15;
        self.out = nxt;
        (ev_v, ev_d, words)
    }
}

/// `sw_pktlen_tap` on the link receive side (RxWords).
#[derive(Clone, Copy, Debug, Default)]
struct RxTap {
    bidx: u8,
    len: u16,
}

/// `sw_port_regs`: PortState, the link's last value, the counters.
#[derive(Clone, Debug)]
pub struct PortRegs {
    pub state: u8,
    link: bool,
    pub ctr: [u32; NUM_CTRS],
}

/// The register bus as one tile sees it in a cycle.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bus {
    pub we: bool,
    pub addr: u16,
    pub wdata: u32,
}

const REG_PORT_STATE: u16 = 0x0100;
const REG_CTR_BASE: u16 = 0x0200;
const REG_CTR_CLEAR: u16 = 0x000F;
const REG_CTR_CLR_SEL: u16 = 0x0800;

/// One external port of the switch.
#[derive(Clone, Debug)]
pub struct Tile {
    pub port: u8,
    db: u32,
    rx: LinkRx,
    rx_tap: RxTap,
    vbuf: InBuf,
    dbuf: InBuf,
    pub vroute: Route,
    pub droute: Route,
    pub varb: OutArb,
    pub darb: OutArb,
    pub tx: LinkTx,
    pub regs: PortRegs,
    /// The wire inputs as last given.
    pub link_up: bool,
    pub tx_tready: bool,
    pub rx_valid: bool,
    pub rx_beat: Beat,
}

/// What a tile tells the switch after its edge.
#[derive(Clone, Copy, Debug, Default)]
pub struct TileEdge {
    /// The stored PortState changed (`state_chg_o`).
    pub state_chg: bool,
    /// The link transmitter took the first beat of a packet.
    pub tx_start: bool,
}

/// The cross-tile inputs of one tile's edge.
pub struct TileCtx<'a> {
    pub cfg: RouteCfg<'a>,
    pub bus: Bus,
    /// LFT grant / response (entry) for the VL15 and data requesters.
    pub lft_gnt: [bool; 2],
    pub lft_rsp: [Option<u8>; 2],
    /// The egresses take this tile's VL15 / data head beat.
    pub v_sel: bool,
    pub d_sel: bool,
    /// The output side: requests to this port's arbiters, the granted
    /// heads and the link's plan.
    pub v_req: &'a [u8],
    pub d_req: &'a [u8],
    pub txin: TxIn,
    pub plan: TxPlan,
}

impl Tile {
    pub fn new(port: u8, data_w: u32) -> Self {
        let db = data_w / 8;
        Tile {
            port,
            db,
            rx: LinkRx::default(),
            rx_tap: RxTap::default(),
            vbuf: InBuf::new(VL15_DEPTH, VL15_SLOT_BYTES, db),
            dbuf: InBuf::new(DATA_DEPTH, DATA_SLOT_BYTES, db),
            vroute: Route::default(),
            droute: Route::default(),
            varb: OutArb::default(),
            darb: OutArb::default(),
            tx: LinkTx::default(),
            regs: PortRegs {
                state: ps::INIT,
                link: true,
                ctr: [0; NUM_CTRS],
            },
            link_up: true,
            tx_tready: true,
            rx_valid: false,
            rx_beat: Beat::default(),
        }
    }

    /// Reset with the idle inputs (link up, ready, no beat).
    pub fn reset(&mut self) {
        self.rx.reset();
        self.rx_tap = RxTap::default();
        self.vbuf.reset();
        self.dbuf.reset();
        self.vroute = Route::default();
        self.droute = Route::default();
        self.varb = OutArb::default();
        self.darb = OutArb::default();
        self.tx.reset();
        self.link_up = true;
        self.tx_tready = true;
        self.rx_valid = false;
        self.regs = PortRegs {
            state: ps::INIT,
            link: true,
            ctr: [0; NUM_CTRS],
        };
    }

    /// `busy_o`: something buffered or in flight.
    pub fn busy(&self) -> bool {
        self.vbuf.w_open
            || self.dbuf.w_open
            || self.rx.out_valid
            || self.vbuf.occ != 0
            || self.dbuf.occ != 0
            || self.tx.out_valid
            || self.varb.locked
            || self.darb.locked
    }

    /// Nothing would change at an edge without new inputs (no work, no
    /// event to count, the link as last clocked).
    pub fn quiet(&self) -> bool {
        !self.busy()
            && self.rx.idle()
            && self.vbuf.idle()
            && self.dbuf.idle()
            && self.vroute.st == RouteSt::Idle
            && self.droute.st == RouteSt::Idle
            && self.tx.idle()
            && !self.rx_valid
            && self.link_up == self.regs.link
    }

    /// Effective PortState at runtime port count `n`.
    pub fn state_o(&self, n: u8) -> u8 {
        if self.port > n {
            ps::DOWN
        } else {
            self.regs.state
        }
    }

    /// The register read data of `addr` (0 unless it is this port's).
    pub fn rdata(&self, addr: u16, n: u8) -> u32 {
        if addr == REG_PORT_STATE + u16::from(self.port) {
            u32::from(self.state_o(n))
        } else if addr >> 4 == (REG_CTR_BASE >> 4) + u16::from(self.port) {
            self.regs.ctr[usize::from(addr & 15)]
        } else {
            0
        }
    }

    /// The VL15 and data heads: (valid, beat).
    pub fn vhead(&self) -> (bool, &Beat) {
        self.vbuf.head()
    }
    pub fn dhead(&self) -> (bool, &Beat) {
        self.dbuf.head()
    }
    /// The VCRC the data head's packet arrived with (`d_vcrc_o`,
    /// `rtl/sw_port_tile.sv:275`).
    pub fn dvcrc(&self) -> u16 {
        self.dbuf.out_vcrc
    }

    /// The head's requests this cycle: egress of the VL15 / data head.
    pub fn v_request(&self) -> Option<u8> {
        (self.vroute.st == RouteSt::Req).then_some(self.vroute.dest)
    }
    pub fn d_request(&self) -> Option<u8> {
        (self.droute.st == RouteSt::Req).then_some(self.droute.dest)
    }
    pub fn v_lookup(&self) -> Option<u16> {
        (self.vroute.st == RouteSt::Lookup).then_some(self.vbuf.out_dlid)
    }
    pub fn d_lookup(&self) -> Option<u16> {
        (self.droute.st == RouteSt::Lookup).then_some(self.dbuf.out_dlid)
    }
    /// The stored PortState at the coming edge differs (`state_chg_o`).
    fn state_next(&self, bus: &Bus) -> u8 {
        if self.regs.link && !self.link_up {
            ps::DOWN
        } else if !self.regs.link && self.link_up {
            ps::INIT
        } else if bus.we
            && bus.addr == REG_PORT_STATE + u16::from(self.port)
            && (bus.wdata & 0xF) as u8 != ps::NO_CHANGE
        {
            (bus.wdata & 0xF) as u8
        } else {
            self.regs.state
        }
    }

    /// The tx-side ready of the link (`tx_tready_i || !link_up_i`).
    pub fn tready_eff(&self) -> bool {
        self.tx_tready || !self.link_up
    }

    /// One clock edge of the tile.
    pub fn edge(&mut self, c: &TileCtx<'_>) -> TileEdge {
        let db = self.db;
        let mut ev = [0u32; NUM_CTRS];
        // link receive: its outputs of this cycle feed the buffers
        let (s_valid, s_vl15, s_user, s) = (
            self.rx.out_valid,
            self.rx.out_vl15,
            self.rx.out_user,
            self.rx.out,
        );
        ev[ctr::RX_PKTS] = u32::from(self.rx.ev_pkt);
        ev[ctr::RX_LEN_ERR] = u32::from(self.rx.ev_len);
        ev[ctr::RX_LVER_ERR] = u32::from(self.rx.ev_lver);
        ev[ctr::RX_LNH_ERR] = u32::from(self.rx.ev_lnh);
        ev[ctr::RX_VCRC_ERR] = u32::from(self.rx.ev_vcrc);
        // RxWords
        if s_valid {
            let hdr = self.rx_tap.bidx == 0;
            let len_now = if hdr {
                (u16::from(s.data[4] & 7) << 8) | u16::from(s.data[5])
            } else {
                self.rx_tap.len
            };
            if s.last && !s_user {
                ev[ctr::RX_WORDS] = u32::from(len_now);
            }
            if s.last {
                self.rx_tap.bidx = 0;
            } else if self.rx_tap.bidx != 3 {
                self.rx_tap.bidx += 1;
            }
            if hdr {
                self.rx_tap.len = len_now;
            }
        }
        // routes (their take uses this cycle's selects)
        let v_head = (self.vbuf.out_valid, self.vbuf.out.last, self.vbuf.out_dlid);
        let d_head = (self.dbuf.out_valid, self.dbuf.out.last, self.dbuf.out_dlid);
        let v_tready =
            self.vroute.st == RouteSt::Drain || (self.vroute.st == RouteSt::Req && c.v_sel);
        let d_tready =
            self.droute.st == RouteSt::Drain || (self.droute.st == RouteSt::Req && c.d_sel);
        let rv = self.vroute.edge(
            true,
            self.port,
            None,
            v_head.0,
            v_head.1,
            v_head.2,
            v_head.0 && v_tready,
            &c.cfg,
            c.lft_gnt[0],
            c.lft_rsp[0],
        );
        let rd = self.droute.edge(
            false,
            self.port,
            None,
            d_head.0,
            d_head.1,
            d_head.2,
            d_head.0 && d_tready,
            &c.cfg,
            c.lft_gnt[1],
            c.lft_rsp[1],
        );
        ev[ctr::NO_ROUTE] = u32::from(rv.no_route) + u32::from(rd.no_route);
        ev[ctr::LOOP_DROP] = u32::from(rv.loop_) + u32::from(rd.loop_);
        ev[ctr::STATE_DROP] = u32::from(rv.state) + u32::from(rd.state);
        ev[ctr::FWD_PKTS] = u32::from(rv.fwd) + u32::from(rd.fwd);
        // input buffers
        let (wv, _) = self
            .vbuf
            .edge(s_valid && s_vl15, &s, s_user, self.link_up, v_tready, db);
        let (wd, _) = self
            .dbuf
            .edge(s_valid && !s_vl15, &s, s_user, self.link_up, d_tready, db);
        ev[ctr::VL15_DROPPED] = u32::from(wv.drop);
        ev[ctr::DATA_DROPPED] = u32::from(wd.drop);
        ev[ctr::LINK_DOWN_DROP] = u32::from(wv.link_drop) + u32::from(wd.link_drop);
        // output side
        let ov_take_last = c.txin.v_valid && c.plan.v_take && c.txin.v.last;
        let od_take_last = c.txin.d_valid && c.plan.d_take && c.txin.d.last;
        let tready = self.tready_eff();
        let tx_start = self.tx.st == TxSt::Idle && (c.plan.v_take || c.plan.d_take);
        let (ev_v, ev_d, words) = self.tx.edge(&c.txin, &c.plan, tready, db);
        ev[ctr::TX_VL15_PKTS] = u32::from(ev_v);
        ev[ctr::TX_DATA_PKTS] = u32::from(ev_d);
        ev[ctr::TX_WORDS] = words;
        self.varb.edge(c.v_req, ov_take_last);
        self.darb.edge(c.d_req, od_take_last);
        // link receive register stage (reset while the link is down)
        if self.link_up {
            let b = self.rx_beat;
            self.rx.edge(self.rx_valid, &b, db);
        } else {
            self.rx.reset();
            self.rx_tap = RxTap::default();
        }
        // registers
        let state_d = self.state_next(&c.bus);
        let state_chg = state_d != self.regs.state;
        self.regs.state = state_d;
        self.regs.link = self.link_up;
        let b = &c.bus;
        let wr_clear = b.we && b.addr == REG_CTR_CLEAR;
        let clr_hit = b.we && b.addr == REG_CTR_CLR_SEL + u16::from(self.port);
        let ctr_hit = b.we && b.addr >> 4 == (REG_CTR_BASE >> 4) + u16::from(self.port);
        for (k, (r, e)) in self.regs.ctr.iter_mut().zip(ev).enumerate() {
            if wr_clear || (clr_hit && b.wdata >> k & 1 != 0) {
                *r = 0;
            } else if ctr_hit && usize::from(b.addr & 15) == k {
                *r = b.wdata;
            } else if e != 0 {
                *r = r.wrapping_add(e);
            }
        }
        TileEdge {
            state_chg,
            tx_start,
        }
    }

    /// The VL15 (`vl15`) or data input buffer.
    pub(super) fn buf(&self, vl15: bool) -> &InBuf {
        if vl15 {
            &self.vbuf
        } else {
            &self.dbuf
        }
    }

    pub(super) fn buf_mut(&mut self, vl15: bool) -> &mut InBuf {
        if vl15 {
            &mut self.vbuf
        } else {
            &mut self.dbuf
        }
    }

    /// The link receiver's register stage holds a beat (or its events).
    pub(super) fn rx_staged(&self) -> bool {
        self.rx.out_valid || self.rx.ev_pkt
    }

    /// How many edges from now beats arriving (none a packet's last) can
    /// be taken with nothing but [`Tile::rx_jump`] moving on the receive
    /// side: inside a packet past its header, the buffer it goes to
    /// writing it steadily (the read sides are the caller's).
    pub(super) fn rx_jump_bound(&self) -> Option<u64> {
        if !(self.link_up && self.rx_valid && self.rx.steady() && self.rx_tap.bidx == 3) {
            return None;
        }
        self.buf(self.rx.out_vl15).write_bound()
    }

    /// The edges with `beats` arriving within [`Tile::rx_jump_bound`]: the
    /// beat staged and all but the last of them go into the buffer, the
    /// last is staged (and is the wire input last given).
    pub(super) fn rx_jump(&mut self, beats: &[Beat]) {
        let Some(last) = beats.last() else {
            return;
        };
        let db = self.db;
        let vl15 = self.rx.out_vl15;
        let staged = self.rx.out;
        let buf = if vl15 { &mut self.vbuf } else { &mut self.dbuf };
        buf.write_mid(&staged);
        for b in &beats[..beats.len() - 1] {
            buf.write_mid(b);
        }
        for b in beats {
            self.rx.take_mid(b, db);
        }
        self.rx_beat = *last;
    }
}
