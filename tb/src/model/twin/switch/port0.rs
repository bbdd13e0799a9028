//! Port 0 of the switch twin (`rtl/sw_mgmt_tile.sv`): output 0's VL15
//! side (the SMI receive: `sw_smi_rq`, its buffer, the deliveries on
//! `sma_rx` / `sm_rx` and the forwards, `smi_mkey_chk`), the send queue
//! (`sw_smi_sq`: `sma_tx`, `sm_tx`, `trap_tx` and the forwards) into port
//! 0's VL15 input buffer, and that buffer's route; the GMP send path
//! (`sw_gmp_tx`: `gmp_tx` into port 0's data input buffer, and its route);
//! output 0's data side, the GMP receive path ([`super::gmp_rx`]).
//!
//! # Timing (a packet for port 0 whose last beat output 0 takes at `t`)
//! - output 0's VL15 arbiter (`rtl/sw_mgmt_tile.sv:375`) locks as a port
//!   tile's does; it takes a beat only while the SMI receive buffer has a
//!   free slot or the packet is open (`ov_tready0`, `:422`);
//! - `t+1`: the dummy VCRC beat (`extra_q`, `:439`) is `sw_smi_rq`'s
//!   tlast: the verdict and its counter events (`rtl/smi_rx_core.sv:
//!   161-173`, the DR rules of `rtl/sw_smi_rq.sv:165`, `dr_recv_sw`), and the
//!   MAD commits into the SMI receive buffer (`ib_pkt_fifo`, 4 slots);
//! - `t+3`: its first beat is on `sma_rx` / `sm_rx` (`smi_rx_dispatch`,
//!   combinational on the buffer's output register, `:518`), one beat
//!   per cycle while `tready`; a forward goes to the send queue instead
//!   (`u_fwd_dispatch`, `:593`), the hop pointer and ReturnPath patched
//!   on the way;
//! - the send queue (`rtl/smi_tx_ctrl.sv`) starts a packet when a source is
//!   valid and port 0's send buffer has a free slot (round robin SMA, SM,
//!   trap, forward), writes `HdrBeats` header beats, one beat per MAD beat
//!   taken and one tail beat with the verdict (`rtl/sw_smi_sq.sv:220-276`);
//!   the packet commits at the tail, and its head is valid two cycles later
//!   (`ib_pkt_fifo`, `rtl/sw_mgmt_tile.sv:694`), then routed by `sw_route`
//!   (`:311`, `Port0`: the DR egress without the LFT, else the LFT) like an
//!   external input's.
//!
//! A GMP whose last beat `gmp_tx` takes at `t` commits into the GMP send
//! buffer at the edge of `t` (`rtl/sw_gmp_tx.sv:58-61`, `ib_pkt_fifo`), its
//! head is valid at `t+2` and routed from there as a send-queue packet is
//! (`rtl/sw_mgmt_tile.sv:746-767`, `sw_route` with `IsVl15=0`).
//!
//! The state is the RTL's registers; a packet is a byte vector, judged once
//! when it is complete, and served by beat index.

use std::collections::VecDeque;

use vl15_bindings::{DevIn, DevOut};

use super::gmp_rx::{GmpRx, GmpRxCtx, OdHead};
use super::tile::{ps, Beat, OutArb, PktLenTap, Route, RouteCfg, RouteSt};
use crate::model::held;
use crate::model::regmap::swreg::ctr;
use crate::model::stream;
use crate::model::twin::ca::{pack, smp_packet};
use crate::model::twin::mkey::Mkey;
use crate::proto::crc;

const MAD_OFF: usize = 28;
const MAD_BYTES: usize = 256;
const SMP_PKT_BYTES: usize = 288;
const PERM: u16 = 0xFFFF;
const CLASS_LID: u8 = 0x01;
const CLASS_DR: u8 = 0x81;
/// SMI receive buffer slots (`SmiRxDepth`) and port-0 send slots
/// (`P0Depth`).
const RX_DEPTH: u32 = 4;
const P0_DEPTH: u32 = 2;
/// Port 0's GMP send buffer slots (`GmpDepth`, `rtl/sw_mgmt_tile.sv:183`).
const GMP_DEPTH: u32 = 2;
/// Sources of the send queue.
const SRC_SMA: u8 = 0;
const SRC_SM: u8 = 1;
const SRC_TRAP: u8 = 2;
const SRC_FWD: u8 = 3;

/// What the SMI receive buffer keeps per MAD (`sw_rx_meta_t`).
#[derive(Clone, Copy, Debug, Default)]
struct RxMeta {
    slid: u16,
    dlid: u16,
    sl: u8,
    port: u8,
    class: u8,
    to_sm: bool,
    hop_ptr: u8,
    hop_cnt: u8,
    fwd: bool,
    fwd_lft: bool,
    fwd_dlid: u16,
    fwd_slid: u16,
}

/// What port 0's send buffer keeps per packet (`sw_route_meta_t`).
#[derive(Clone, Copy, Debug, Default)]
struct RouteMeta {
    lft: bool,
    egress: u8,
    dlid: u16,
}

/// `ib_pkt_fifo` whose writer waits for a free slot: a packet enters whole
/// at its commit; the read side is the RTL's (issue, output register).
#[derive(Clone, Debug)]
struct Fifo<M: Copy + Default> {
    depth: u32,
    pkts: VecDeque<(Vec<u8>, M)>,
    cnt: u32,
    iss_cnt: u32,
    iss_beat: usize,
    slot_free: bool,
    out_valid: bool,
    out: Beat,
    out_meta: M,
}

impl<M: Copy + Default> Fifo<M> {
    fn new(depth: u32) -> Self {
        Fifo {
            depth,
            pkts: VecDeque::new(),
            cnt: 0,
            iss_cnt: 0,
            iss_beat: 0,
            slot_free: true,
            out_valid: false,
            out: Beat::default(),
            out_meta: M::default(),
        }
    }

    fn idle(&self) -> bool {
        self.cnt == 0 && !self.out_valid
    }

    /// Nothing to read: no head and none to issue.
    fn read_idle(&self) -> bool {
        !self.out_valid && self.iss_cnt == 0
    }

    /// Where the valid head is in its packet (the oldest one held): its
    /// beat index and the packet's beats.
    fn head_pos(&self, db: usize) -> Option<(u32, u32)> {
        let (bytes, _) = self.pkts.front().filter(|_| self.out_valid)?;
        let beats = bytes.len().div_ceil(db) as u32;
        let j = if self.cnt == self.iss_cnt {
            (self.iss_beat as u32).checked_sub(1)?
        } else {
            beats.checked_sub(1)?
        };
        Some((j, beats))
    }

    /// `m` edges in which the head is taken and is not its packet's last
    /// beat (nothing committed): the next beats issue.
    fn advance(&mut self, m: u64, db: usize) {
        for _ in 0..m {
            let Some((bytes, meta)) = self.pkts.get((self.cnt - self.iss_cnt) as usize) else {
                return;
            };
            let beats = bytes.len().div_ceil(db);
            let s = (self.iss_beat * db).min(bytes.len());
            let e = (s + db).min(bytes.len());
            let (w, keep) = pack(&bytes[s..e]);
            let last = self.iss_beat + 1 == beats;
            self.out = Beat::from_words(w, keep, last);
            self.out_meta = *meta;
            if last {
                self.iss_beat = 0;
                self.iss_cnt -= 1;
            } else {
                self.iss_beat += 1;
            }
        }
    }

    /// Beat `k` of the head's packet, as the buffer issues it.
    fn beat_at(&self, k: u32, db: usize) -> Beat {
        let Some((bytes, _)) = self.pkts.front() else {
            return Beat::default();
        };
        let beats = bytes.len().div_ceil(db);
        let s = (k as usize * db).min(bytes.len());
        let e = (s + db).min(bytes.len());
        let (w, keep) = pack(&bytes[s..e]);
        Beat::from_words(w, keep, k as usize + 1 == beats)
    }

    /// The edge: the output beat is taken when `tready`; `commit` enters.
    /// Returns whether a packet's last beat was taken.
    fn edge(&mut self, tready: bool, commit: Option<(Vec<u8>, M)>, db: usize) -> bool {
        let rd_take = self.out_valid && tready;
        let rd_issue = self.iss_cnt != 0 && (!self.out_valid || tready);
        let freed = rd_take && self.out.last;
        if rd_issue {
            let idx = (self.cnt - self.iss_cnt) as usize;
            let (bytes, meta) = &self.pkts[idx];
            let beats = bytes.len().div_ceil(db);
            let s = self.iss_beat * db;
            let e = (s + db).min(bytes.len());
            let (w, keep) = pack(&bytes[s..e]);
            let last = self.iss_beat + 1 == beats;
            self.out = Beat::from_words(w, keep, last);
            self.out_meta = *meta;
            self.out_valid = true;
            if last {
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
        if let Some(p) = commit {
            self.pkts.push_back(p);
            self.cnt += 1;
            self.iss_cnt += 1;
        }
        self.slot_free = self.cnt < self.depth;
        freed
    }
}

/// The send queue's packet in progress (`smi_tx_ctrl` registers).
#[derive(Clone, Debug)]
struct SqPkt {
    src: u8,
    k: usize,
    dlid: u16,
    slid: u16,
    sl: u8,
    asis: bool,
    lft: bool,
    mad: Vec<u8>,
}

/// What the switch gives port 0 for one edge.
pub struct P0Ctx<'a> {
    pub din: &'a DevIn,
    pub cfg: RouteCfg<'a>,
    /// The runtime port count (`sw_regs.num_ports`).
    pub n: u8,
    pub sm_lid: u16,
    pub sm_sl: u8,
    /// The head of the input output 0's VL15 arbiter grants (valid, beat).
    pub ov: (bool, Beat),
    /// Inputs requesting output 0's VL15 side (ascending).
    pub ov_req: &'a [u8],
    /// The egress granting port 0's VL15 head takes a beat if valid.
    pub v_sel: bool,
    pub lft_gnt: bool,
    pub lft_rsp: Option<u8>,
    /// The same for port 0's data input (the GMP send buffer).
    pub d_sel: bool,
    pub lft_gnt_d: bool,
    pub lft_rsp_d: Option<u8>,
    /// Output 0's data side: the requesting inputs (ascending) and the
    /// granted input's head.
    pub od_req: &'a [u8],
    pub od: OdHead,
    /// The P_Key table (written up to this cycle) and its last write:
    /// (cycle, index, old entry).
    pub pkey: &'a [u16],
    pub pkey_wr: Option<(u64, usize, u16)>,
    pub cycle: u64,
}

/// `sw_gmp_tx` (`rtl/sw_gmp_tx.sv`) and the `sw_pktlen_tap` on its stream.
#[derive(Clone, Debug, Default)]
struct GmpTx {
    open: bool,
    vl15: bool,
    beats: u32,
    dlid: u16,
    cur: Vec<u8>,
    tap: PktLenTap,
}

/// Port 0 of the switch.
pub struct Port0 {
    db: usize,
    pub oarb: OutArb,
    extra_q: bool,
    in_pkt_q: bool,
    /// Bytes output 0 has taken of the packet it receives.
    cur: Vec<u8>,
    /// The port-0 LID as the SMI receive saw it in its last cycle.
    lid_seen: u16,
    rxf: Fifo<RxMeta>,
    pub mkey: Mkey,
    sq: Option<SqPkt>,
    sq_rr: u8,
    sq_open: bool,
    psn: u32,
    p0: Fifo<RouteMeta>,
    pub route: Route,
    gtx: GmpTx,
    gbuf: Fifo<u16>,
    pub droute: Route,
    /// Output 0's data side and the GMP receive path ([`GmpRx`]).
    pub grx: GmpRx,
}

impl Port0 {
    pub fn new(data_w: u32) -> Self {
        Port0 {
            db: (data_w / 8) as usize,
            oarb: OutArb::default(),
            extra_q: false,
            in_pkt_q: false,
            cur: Vec::with_capacity(SMP_PKT_BYTES),
            lid_seen: 0,
            rxf: Fifo::new(RX_DEPTH),
            mkey: Mkey::new(),
            sq: None,
            sq_rr: SRC_TRAP,
            sq_open: false,
            psn: 0,
            p0: Fifo::new(P0_DEPTH),
            route: Route::default(),
            gtx: GmpTx::default(),
            gbuf: Fifo::new(GMP_DEPTH),
            droute: Route::default(),
            grx: GmpRx::new((data_w / 8) as usize),
        }
    }

    pub fn reset(&mut self) {
        let db = self.db;
        *self = Port0::new((db * 8) as u32);
    }

    fn hdr_beats(&self) -> usize {
        MAD_OFF / self.db
    }
    fn mad_end(&self) -> usize {
        self.hdr_beats() + MAD_BYTES / self.db
    }

    /// `ov_tready0`: output 0 takes a VL15 beat.
    pub fn ov_tready(&self) -> bool {
        !self.extra_q && (self.in_pkt_q || self.rxf.slot_free)
    }

    /// The send queue's source readies (`in_mad && sel == i`).
    fn src_ready(&self, src: u8) -> bool {
        match &self.sq {
            Some(q) => q.src == src && q.k >= self.hdr_beats() && q.k < self.mad_end(),
            None => false,
        }
    }

    fn fwd_valid(&self) -> bool {
        self.rxf.out_valid && self.rxf.out_meta.fwd
    }

    fn src_valid(&self, d: &DevIn) -> [bool; 4] {
        [
            d.sma_tx_tvalid,
            d.sm_tx_tvalid,
            d.trap_tx_tvalid,
            self.fwd_valid(),
        ]
    }

    /// Whether the send queue writes a beat this cycle (`txf_wr_valid`).
    fn sq_wr(&self, d: &DevIn) -> bool {
        match &self.sq {
            None => self.src_valid(d).iter().any(|&v| v) && self.p0.slot_free,
            Some(q) => {
                if q.k >= self.hdr_beats() && q.k < self.mad_end() {
                    self.src_valid(d)[usize::from(q.src)]
                } else {
                    true
                }
            }
        }
    }

    /// `gmp_tx_tready`: a packet is open or the GMP buffer has a free slot.
    pub fn gmp_tx_tready(&self) -> bool {
        self.gtx.open || self.gbuf.slot_free
    }

    /// Port 0's part of `idle_o`: `busy0` (`rtl/sw_mgmt_tile.sv:921-924`)
    /// and the M_Key lease timer running (`mkey_lease_run`, `:926`).
    pub fn busy(&self, d: &DevIn) -> bool {
        self.mkey.run.is_some()
            || self.grx.busy()
            || self.gtx.open
            || self.gbuf.cnt != 0
            || self.rxf.cnt != 0
            || self.p0.cnt != 0
            || self.sq_open
            || self.sq_wr(d)
            || self.extra_q
            || self.oarb.locked
    }

    /// Nothing to evaluate: no state that changes without an input.
    pub fn quiet(&self, d: &DevIn) -> bool {
        self.quiet_but_lease(d) && self.mkey.run.is_none()
    }

    /// [`Port0::quiet`] but for a running M_Key lease timer, which is
    /// kept as the cycle it started ([`Port0::skip_quiet`]).
    pub fn quiet_but_lease(&self, d: &DevIn) -> bool {
        !self.oarb.locked
            && !self.extra_q
            && self.rxf.idle()
            && self.sq.is_none()
            && self.p0.idle()
            && self.route.st == RouteSt::Idle
            && self.gbuf.idle()
            && self.droute.st == RouteSt::Idle
            && self.grx.quiet()
            && !d.gmp_tx_tvalid
            && !d.sma_tx_tvalid
            && !d.sm_tx_tvalid
            && !d.trap_tx_tvalid
    }

    /// The edges of cycles `from..to` with the inputs at rest, while
    /// [`Port0::quiet_but_lease`]: a running lease timer expires at its
    /// cycle (the edges evaluate port 0, which takes the port-0 LID `lid`).
    pub fn skip_quiet(&mut self, from: u64, to: u64, lid: u16) {
        if self.mkey.run.is_none() || to <= from {
            return;
        }
        self.lid_seen = lid;
        if let Some(x) = self.mkey.expiry().filter(|x| (from..to).contains(x)) {
            self.mkey.expire(x);
        }
    }

    /// Port 0's VL15 input (`vl15`: the send queue's buffer) or data
    /// input (the GMP send buffer): where its valid head is in its packet
    /// (beat index, beats), beat `k` of that packet, the packets held,
    /// whether there is nothing to read.
    pub fn head_pos(&self, vl15: bool) -> Option<(u32, u32)> {
        if vl15 {
            self.p0.head_pos(self.db)
        } else {
            self.gbuf.head_pos(self.db)
        }
    }
    pub fn beat_at(&self, vl15: bool, k: u32) -> Beat {
        if vl15 {
            self.p0.beat_at(k, self.db)
        } else {
            self.gbuf.beat_at(k, self.db)
        }
    }
    pub fn read_idle(&self, vl15: bool) -> bool {
        if vl15 {
            self.p0.read_idle()
        } else {
            self.gbuf.read_idle()
        }
    }

    /// `m` edges of port 0's VL15 input (`vl15`) or data input whose head
    /// is taken and is not its packet's last beat.
    pub fn advance(&mut self, vl15: bool, m: u64) {
        if vl15 {
            self.p0.advance(m, self.db);
        } else {
            self.gbuf.advance(m, self.db);
        }
    }

    /// Output 0's VL15 side takes `b`, a beat that is not its packet's
    /// last, into the SMI receive (an edge in the middle of a packet).
    pub fn ov_take_mid(&mut self, b: &Beat) {
        self.cur.extend_from_slice(&b.data[..self.db]);
    }

    /// How many edges from cycle `now` on port 0 can be jumped at once
    /// with its inputs at rest, and the send queue's stream that they
    /// move (`None`: not one; `u64::MAX`: no bound from port 0): nothing
    /// decides, the send queue copies a forwarded MAD up to the last beat
    /// before its last, the lease does not expire; output 0's VL15 side
    /// and port 0's inputs are the switch's to judge.
    ///
    /// `fed[src]`: host source `src` (SMA, SM, trap) holds a whole MAD
    /// offered from now on; the send queue copies it as a forward's.
    pub fn jump_bound(&self, now: u64, fed: [bool; 3]) -> Option<u64> {
        if self.extra_q || !self.grx.quiet() {
            return None;
        }
        let mut m = u64::MAX;
        if let (Some(_), Some(x)) = (self.mkey.run, self.mkey.expiry()) {
            if x >= now {
                m = m.min(x - now);
            }
        }
        let rx_calm = self.rxf.idle() || (self.rxf.out_valid && self.rxf.out_meta.fwd);
        if !rx_calm {
            return None;
        }
        let hb = self.hdr_beats();
        let me = self.mad_end();
        match &self.sq {
            None => {
                if (self.fwd_valid() || fed.contains(&true)) && self.p0.slot_free {
                    return None;
                }
            }
            Some(q) if q.src == SRC_FWD => {
                if !self.fwd_valid() || q.k + 1 >= me {
                    return None;
                }
                m = m.min((me - 1 - q.k) as u64);
            }
            Some(q) if fed.get(usize::from(q.src)) == Some(&true) => {
                if q.k + 1 >= me {
                    return None;
                }
                m = m.min((me - 1 - q.k) as u64);
            }
            Some(q) => {
                if q.k < hb {
                    return None;
                }
            }
        }
        Some(m)
    }

    /// The host source (SMA 0, SM 1, trap 2) the send queue is sending.
    pub fn sq_host_src(&self) -> Option<u8> {
        self.sq.as_ref().map(|q| q.src).filter(|&s| s != SRC_FWD)
    }

    /// `m` edges as [`Port0::jump_bound`] allows of a send queue that
    /// copies a host source's MAD held whole (`beats`, from beat `k0`):
    /// the beats taken, and the edge (of the `m`, from 0) that took the
    /// MAD's first, if one did.
    pub fn jump_fed(&mut self, m: u64, beats: &[stream::Beat], k0: usize) -> (usize, Option<u64>) {
        let hb = self.hdr_beats();
        let db = self.db;
        let Some(q) = self.sq.as_mut().filter(|q| q.src != SRC_FWD) else {
            return (0, None);
        };
        held::copy_through(&mut q.k, &mut q.mad, (hb, db), m, beats, k0)
    }

    /// `m` edges as [`Port0::jump_bound`] allows (the port-0 LID `lid`):
    /// the send queue copies on; output 0's VL15 side and port 0's inputs
    /// are moved by the switch.
    pub fn jump(&mut self, m: u64, lid: u16) {
        self.lid_seen = lid;
        let hb = self.hdr_beats();
        let db = self.db;
        let Some(q) = self.sq.as_mut().filter(|q| q.src == SRC_FWD) else {
            return;
        };
        for _ in 0..m {
            if q.k >= hb {
                let w = self.rxf.out.words();
                q.mad
                    .extend((0..db).map(|i| (w[i / 8] >> ((i % 8) * 8)) as u8));
                self.rxf.advance(1, db);
            }
            q.k += 1;
        }
    }

    /// Output 0's VL15 side takes a beat in every cycle from now on while
    /// its granted input presents one: a packet is open.
    pub fn ov_streaming(&self) -> bool {
        self.oarb.locked && self.in_pkt_q && !self.extra_q
    }

    /// Output 0's VL15 side takes a beat at the next edge if its granted
    /// input presents one (a packet's first beat).
    pub fn ov_ready(&self) -> bool {
        self.ov_tready()
    }

    /// Calm (inputs at rest from cycle `now` on): the first cycle at which
    /// port 0's SMI receive buffer, send queue, GMP receive path, dummy
    /// VCRC beat or M_Key lease decides something or changes an output
    /// (`now`: at once), or u64::MAX; its own inputs' and output 0's
    /// streams are the switch's to judge. Streams that are calm: the send
    /// queue's header beats and its copy of a forwarded MAD from the
    /// receive buffer, up to the tail beat (its verdict).
    ///
    /// `fed[src]`: host source `src` holds a whole MAD offered from now on
    /// ([`Port0::jump_bound`]): the queue runs through it to the step that
    /// takes its last beat; one waiting for the queue is stepped.
    pub fn calm_bound(&self, now: u64, fed: [bool; 3]) -> u64 {
        if self.extra_q || !self.grx.quiet() {
            return now;
        }
        let mut t = u64::MAX;
        if let (Some(_), Some(x)) = (self.mkey.run, self.mkey.expiry()) {
            // the lease expires at the edge of x: the outputs change after
            t = t.min(x.saturating_add(1));
        }
        let hb = self.hdr_beats();
        let me = self.mad_end();
        match &self.sq {
            None => {
                if fed.contains(&true) || (self.fwd_valid() && self.p0.slot_free) {
                    return now;
                }
            }
            Some(q) => {
                if q.k >= me {
                    return now;
                }
                if fed.get(usize::from(q.src)) == Some(&true) {
                    t = t.min(now + (me - 1 - q.k) as u64);
                } else if q.src == SRC_FWD {
                    // one header beat or MAD beat per cycle, the forwarded
                    // MAD's beats all in the receive buffer: the tail at
                    // now + me - k
                    if !self.fwd_valid() {
                        return now;
                    }
                    t = t.min(now + (me - q.k) as u64);
                } else if q.k < hb {
                    // the host source's ready rises at its MAD beats
                    t = t.min(now + (hb - q.k) as u64);
                }
            }
        }
        // the receive buffer: empty, or a forward the send queue copies or
        // will copy (a delivery to the SMA or SM is the host's stream)
        let rx_calm = self.rxf.idle() || (self.rxf.out_valid && self.rxf.out_meta.fwd);
        if !rx_calm {
            return now;
        }
        t
    }

    pub fn vhead(&self) -> (bool, &Beat) {
        (self.p0.out_valid, &self.p0.out)
    }
    pub fn v_request(&self) -> Option<u8> {
        (self.route.st == RouteSt::Req).then_some(self.route.dest)
    }
    pub fn v_lookup(&self) -> Option<u16> {
        (self.route.st == RouteSt::Lookup).then_some(self.p0.out_meta.dlid)
    }
    pub fn dhead(&self) -> (bool, &Beat) {
        (self.gbuf.out_valid, &self.gbuf.out)
    }
    pub fn d_request(&self) -> Option<u8> {
        (self.droute.st == RouteSt::Req).then_some(self.droute.dest)
    }
    pub fn d_lookup(&self) -> Option<u16> {
        (self.droute.st == RouteSt::Lookup).then_some(self.gbuf.out_meta)
    }

    /// The host-side outputs of this cycle.
    pub fn outputs(&self, o: &mut DevOut) {
        if self.rxf.out_valid && !self.rxf.out_meta.fwd {
            let m = &self.rxf.out_meta;
            let b = &self.rxf.out;
            let data = b.words();
            if m.to_sm {
                o.sm_rx_tdata = data;
                o.sm_rx_tvalid = true;
                o.sm_rx_tlast = b.last;
                o.sm_rx_slid = m.slid;
                o.sm_rx_dlid = m.dlid;
                o.sm_rx_sl = m.sl;
                o.sm_rx_port = m.port;
                o.sm_rx_mgmt_class = m.class;
                o.sm_rx_hop_ptr = m.hop_ptr;
                o.sm_rx_hop_cnt = m.hop_cnt;
            } else {
                o.sma_rx_tdata = data;
                o.sma_rx_tvalid = true;
                o.sma_rx_tlast = b.last;
                o.sma_rx_slid = m.slid;
                o.sma_rx_dlid = m.dlid;
                o.sma_rx_sl = m.sl;
                o.sma_rx_port = m.port;
                o.sma_rx_mgmt_class = m.class;
                o.sma_rx_hop_ptr = m.hop_ptr;
                o.sma_rx_hop_cnt = m.hop_cnt;
                if b.last {
                    let (viol, mask, _) = self.mkey.verdict(self.rx_head_mad());
                    o.sma_rx_mkey_viol = viol;
                    o.sma_rx_mkey_mask = mask;
                }
            }
        }
        o.sma_tx_tready = self.src_ready(SRC_SMA);
        o.sm_tx_tready = self.src_ready(SRC_SM);
        o.trap_tx_tready = self.src_ready(SRC_TRAP);
        o.port0_mkey_prot = self.mkey.prot;
        o.port0_mkey_viols = self.mkey.viols;
        self.grx.outputs(o);
    }

    /// The MAD at the head of the SMI receive buffer.
    fn rx_head_mad(&self) -> &[u8] {
        self.rxf.pkts.front().map_or(&[][..], |p| &p.0[..])
    }

    /// The clock edge; adds port 0's counter events to `ev`.
    pub fn edge(&mut self, c: &P0Ctx<'_>, ev: &mut [u32], gev: &mut [u32]) {
        let d = c.din;
        let db = self.db;
        let t = c.cycle;
        self.gmp_edge(c, ev, gev);
        self.grx.edge(
            &GmpRxCtx {
                req: c.od_req,
                head: c.od,
                pkey: c.pkey,
                pkey_wr: c.pkey_wr,
                cycle: t,
            },
            gev,
        );
        // ---- output 0 and the SMI receive ----
        let ov_tready = self.ov_tready();
        let ov_valid = self.oarb.locked && c.ov.0;
        let take = ov_valid && ov_tready;
        let mut rx_commit = None;
        if self.extra_q {
            rx_commit = self.smi_verdict(c, ev);
            self.cur.clear();
        }
        if take {
            let b = &c.ov.1;
            // sw_smi_rq sees full beats (`smi_tkeep`)
            self.cur.extend_from_slice(&b.data[..db]);
            self.in_pkt_q = !b.last;
        }
        let take_last = take && c.ov.1.last;
        self.extra_q = take_last;
        self.oarb.edge(c.ov_req, take_last);
        // ---- SMI receive buffer read side: dispatch, forwards ----
        let om = self.rxf.out_meta;
        let rx_tready = if om.fwd {
            self.src_ready(SRC_FWD)
        } else if om.to_sm {
            d.sm_rx_tready
        } else {
            d.sma_rx_tready
        };
        let rx_valid = self.rxf.out_valid;
        let rx_take_last = rx_valid && rx_tready && self.rxf.out.last;
        if rx_take_last {
            if om.fwd {
                ev[usize::from(ctr::P0_DR_FORWARDED)] += 1;
            } else if om.to_sm {
                ev[usize::from(ctr::P0_TO_SM)] += 1;
            } else {
                ev[usize::from(ctr::P0_TO_SMA)] += 1;
                let (viol, _, stop) = self.mkey.verdict(self.rx_head_mad());
                if viol {
                    ev[usize::from(ctr::P0_MKEY_VIOL)] += 1;
                }
                self.mkey.handshake(t, viol, stop);
            }
        }
        self.mkey.expire(t);
        // ---- the send queue ----
        let fwd_beat = self.rxf.out.words();
        let sq_commit = self.sq_edge(c, fwd_beat, ev);
        self.rxf.edge(rx_tready, rx_commit, db);
        // ---- port 0's send buffer and its route ----
        let v_tready =
            self.route.st == RouteSt::Drain || (self.route.st == RouteSt::Req && c.v_sel);
        let head = (self.p0.out_valid, self.p0.out.last, self.p0.out_meta);
        let fixed = (!head.2.lft).then_some(head.2.egress);
        let rev = self.route.edge(
            true,
            0,
            fixed,
            head.0,
            head.1,
            head.2.dlid,
            head.0 && v_tready,
            &c.cfg,
            c.lft_gnt,
            c.lft_rsp,
        );
        ev[usize::from(ctr::P0_NO_ROUTE)] += u32::from(rev.no_route);
        ev[usize::from(ctr::P0_LOOP_DROP)] += u32::from(rev.loop_);
        ev[usize::from(ctr::P0_STATE_DROP)] += u32::from(rev.state);
        self.p0.edge(v_tready, sq_commit, db);
        self.lid_seen = c.cfg.port0_lid;
    }

    /// The GMP send path: `sw_gmp_tx` writing `gmp_tx` into the GMP send
    /// buffer (a packet starts only with a free slot, `rtl/sw_gmp_tx.sv:
    /// 47`; VL15 or longer than a slot is dropped at its last beat, `:53-61`),
    /// the buffer (`rtl/sw_mgmt_tile.sv:746`) and its route (`sw_route`,
    /// `Port0`, data: the LFT). Counts GTxPkts, GTxDrop, GTxWords.
    fn gmp_edge(&mut self, c: &P0Ctx<'_>, ev: &mut [u32], gev: &mut [u32]) {
        let d = c.din;
        let db = self.db;
        let take = d.gmp_tx_tvalid && self.gmp_tx_tready();
        let mut commit = None;
        if take {
            let b = Beat::from_words(d.gmp_tx_tdata, d.gmp_tx_tkeep, d.gmp_tx_tlast);
            let g = &mut self.gtx;
            let first = !g.open;
            let vl15 = if first { b.data[0] >> 4 == 0xF } else { g.vl15 };
            let dlid = if first {
                u16::from_be_bytes([b.data[2], b.data[3]])
            } else {
                g.dlid
            };
            let ovf = g.beats as usize + 1 > SMP_PKT_BYTES / db;
            let n = d.gmp_tx_tkeep.count_ones() as usize;
            g.cur.extend_from_slice(&b.data[..n.min(db)]);
            let len = g.tap.beat(&b, db);
            if d.gmp_tx_tlast {
                g.open = false;
                g.beats = 0;
                let pkt = std::mem::take(&mut g.cur);
                if !vl15 && !ovf {
                    gev[usize::from(ctr::G_TX_PKTS)] += 1;
                    gev[usize::from(ctr::G_TX_WORDS)] += u32::from(len);
                    commit = Some((pkt, dlid));
                } else {
                    gev[usize::from(ctr::G_TX_DROP)] += 1;
                }
            } else {
                g.open = true;
                g.vl15 = vl15;
                g.dlid = dlid;
                g.beats = g.beats.saturating_add(1).min(0xFFFF);
            }
        }
        let d_tready =
            self.droute.st == RouteSt::Drain || (self.droute.st == RouteSt::Req && c.d_sel);
        let (hv, hl, dlid) = (self.gbuf.out_valid, self.gbuf.out.last, self.gbuf.out_meta);
        let rev = self.droute.edge(
            false,
            0,
            None,
            hv,
            hl,
            dlid,
            hv && d_tready,
            &c.cfg,
            c.lft_gnt_d,
            c.lft_rsp_d,
        );
        ev[usize::from(ctr::P0_NO_ROUTE)] += u32::from(rev.no_route);
        ev[usize::from(ctr::P0_LOOP_DROP)] += u32::from(rev.loop_);
        ev[usize::from(ctr::P0_STATE_DROP)] += u32::from(rev.state);
        self.gbuf.edge(d_tready, commit, db);
    }

    /// `sw_smi_rq` on the packet output 0 has taken, at its dummy tlast
    /// beat: the counter events and what the receive buffer commits.
    fn smi_verdict(&mut self, c: &P0Ctx<'_>, ev: &mut [u32]) -> Option<(Vec<u8>, RxMeta)> {
        let p = &self.cur;
        let at = |o: usize| p.get(o).copied().unwrap_or(0);
        let be16 = |o: usize| u16::from_be_bytes([at(o), at(o + 1)]);
        let port = self.oarb.grant;
        let port_state = c
            .cfg
            .state
            .get(usize::from(port))
            .copied()
            .unwrap_or(ps::DOWN);
        let lid = c.cfg.port0_lid;
        let lid_chk = self.lid_seen;
        let dlid = be16(2);
        let slid = be16(6);
        let lnh = at(1) & 3;
        let pktlen_ok = (at(4) & 7) == 0 && at(5) == 72;
        let class = at(MAD_OFF + 1);
        let is_lid = class == CLASS_LID;
        let is_dr = class == CLASS_DR;
        let err_hdr = lnh != 2
            || at(8) != 0x64
            || at(9) & 0xF != 0
            || at(13) != 0
            || at(14) != 0
            || at(15) != 0
            || !pktlen_ok
            || at(MAD_OFF) != 1
            || !(is_lid || is_dr);
        let mine = dlid == lid_chk;
        let err_lid = if is_lid {
            !mine || lid_chk == 0 || slid == PERM
        } else {
            dlid != PERM && !mine
        };
        let method = at(MAD_OFF + 3);
        let to_sm = crate::proto::mad::smi_to_sm(method, be16(MAD_OFF + 16));
        let icrc_chk = lnh == 2 && pktlen_ok;
        let n = p.len();
        let icrc_ok = n >= 4
            && crc::icrc(&p[..n - 4])
                == crc::icrc_from_wire([p[n - 4], p[n - 3], p[n - 2], p[n - 1]]);
        let dir = at(MAD_OFF + 4) & 0x80 != 0;
        let hp = at(MAD_OFF + 6);
        let hc = at(MAD_OFF + 7);
        let dr_slid = be16(MAD_OFF + 32);
        let dr_dlid = be16(MAD_OFF + 34);
        let rp_hc = at(MAD_OFF + 192 + usize::from(hc));
        let px_off = if dir {
            (MAD_OFF + 192 + usize::from(hp)).wrapping_sub(1)
        } else {
            MAD_OFF + 128 + usize::from(hp) + 1
        };
        let path_nx = at(px_off);
        let r = dr_recv_sw(
            dir,
            hp,
            hc,
            dr_slid == PERM,
            dr_dlid == PERM,
            dlid != PERM,
            rp_hc,
            path_nx,
            port,
            c.n,
        );
        if port_state == ps::DOWN {
            ev[usize::from(ctr::P0_PORT_DOWN)] += 1;
            return None;
        }
        if icrc_chk && !icrc_ok {
            ev[usize::from(ctr::P0_ICRC_ERR)] += 1;
            return None;
        }
        if err_hdr {
            ev[usize::from(ctr::P0_BAD_HDR)] += 1;
            return None;
        }
        if err_lid {
            ev[usize::from(ctr::P0_LID_ERR)] += 1;
            return None;
        }
        if is_dr && r.discard {
            ev[usize::from(ctr::P0_DR_DISCARD)] += 1;
            return None;
        }
        let mut mad: Vec<u8> = (0..MAD_BYTES).map(|i| at(MAD_OFF + i)).collect();
        let mut meta = RxMeta {
            slid,
            dlid,
            sl: at(1) >> 4,
            port,
            class,
            to_sm,
            ..RxMeta::default()
        };
        if is_dr {
            meta.hop_ptr = r.hp_new & 0x7F;
            meta.hop_cnt = hc & 0x7F;
            mad[6] = meta.hop_ptr;
            if r.rp_we {
                mad[192 + usize::from(hp & 0x3F)] = port;
            }
            meta.fwd = r.fwd;
            meta.fwd_lft = r.fwd_lft;
            meta.fwd_dlid = if !r.fwd_lft {
                PERM
            } else if dir {
                dr_slid
            } else {
                dr_dlid
            };
            meta.fwd_slid = if !r.fwd_lft || lid == 0 { PERM } else { lid };
        }
        Some((mad, meta))
    }

    /// One cycle of `sw_smi_sq`; returns the packet it commits.
    fn sq_edge(
        &mut self,
        c: &P0Ctx<'_>,
        fwd_beat: [u64; 2],
        ev: &mut [u32],
    ) -> Option<(Vec<u8>, RouteMeta)> {
        let d = c.din;
        let db = self.db;
        let hb = self.hdr_beats();
        let me = self.mad_end();
        let valid = self.src_valid(d);
        let wr = self.sq_wr(d);
        let mut commit = None;
        let mut end = false;
        match self.sq.take() {
            None => {
                if wr {
                    let r = self.sq_rr;
                    let base = if r >= 3 { 0 } else { r + 1 };
                    let order = [base, (base + 1) % 4, (base + 2) % 4, (base + 3) % 4];
                    let src = order
                        .iter()
                        .copied()
                        .find(|&s| valid[usize::from(s)])
                        .unwrap_or(order[3]);
                    let lid = c.cfg.port0_lid;
                    let fm = self.rxf.out_meta;
                    let (dlid, slid, sl) = match src {
                        SRC_SMA => (d.sma_tx_slid, d.sma_tx_dlid, d.sma_tx_sl),
                        SRC_SM => (
                            d.sm_tx_dlid,
                            if lid == 0 || d.sm_tx_dlid == PERM {
                                PERM
                            } else {
                                lid
                            },
                            d.sm_tx_sl,
                        ),
                        SRC_FWD => (fm.fwd_dlid, fm.fwd_slid, fm.sl),
                        _ => (c.sm_lid, if lid == 0 { PERM } else { lid }, c.sm_sl),
                    };
                    let asis = match src {
                        SRC_SMA => slid != PERM,
                        SRC_FWD => false,
                        _ => dlid != PERM,
                    };
                    self.sq_rr = src;
                    self.sq = Some(SqPkt {
                        src,
                        k: 1,
                        dlid,
                        slid,
                        sl: sl & 0xF,
                        asis,
                        lft: fm.fwd_lft && src == SRC_FWD,
                        mad: Vec::with_capacity(MAD_BYTES),
                    });
                }
            }
            Some(mut q) => {
                if q.k < hb {
                    q.k += 1;
                    self.sq = Some(q);
                } else if q.k < me {
                    if valid[usize::from(q.src)] {
                        let data = match q.src {
                            SRC_SMA => d.sma_tx_tdata,
                            SRC_SM => d.sm_tx_tdata,
                            SRC_TRAP => d.trap_tx_tdata,
                            _ => fwd_beat,
                        };
                        q.mad
                            .extend((0..db).map(|i| (data[i / 8] >> ((i % 8) * 8)) as u8));
                        q.k += 1;
                    }
                    self.sq = Some(q);
                } else {
                    end = true;
                    commit = self.sq_finish(&q, c, ev);
                }
            }
        }
        self.sq_open = if end { false } else { self.sq_open || wr };
        commit
    }

    /// `sw_smi_sq`'s verdict at the tail beat, and the packet.
    fn sq_finish(
        &mut self,
        q: &SqPkt,
        c: &P0Ctx<'_>,
        ev: &mut [u32],
    ) -> Option<(Vec<u8>, RouteMeta)> {
        let m = &q.mad;
        let at = |o: usize| m.get(o).copied().unwrap_or(0);
        let class = at(1);
        let dir = at(4) & 0x80 != 0;
        let hp = at(6);
        let hc = at(7);
        let hc1 = u16::from(hc) + 1;
        let dr_slid_perm = at(32) == 0xFF && at(33) == 0xFF;
        let dr_dlid_perm = at(34) == 0xFF && at(35) == 0xFF;
        let perm_own = if dir { dr_dlid_perm } else { dr_slid_perm };
        let hp_new = hp_new_sw(dir, hp, hc);
        let eg_moff = 128 + if dir { 64 } else { 0 } + usize::from(hp_new);
        let path = at(eg_moff);
        let eg_state = if (1..=64).contains(&path) {
            c.cfg
                .state
                .get(usize::from(path))
                .copied()
                .unwrap_or(ps::DOWN)
        } else {
            ps::DOWN
        };
        let path_ok = path != 0 && path <= c.n && eg_state != ps::DOWN;
        let fwd = q.src == SRC_FWD;
        let (mut discard, mut local, mut by_path) = (false, false, false);
        let mut meta = RouteMeta {
            lft: true,
            egress: 0,
            dlid: q.dlid,
        };
        if class == CLASS_DR {
            if hc >= 64 {
                discard = true;
            } else if fwd {
                by_path = !q.lft;
            } else if perm_own == q.asis {
                discard = true;
            } else if perm_own {
                if !dir {
                    if hc == 0 || hp == hc || u16::from(hp) == hc1 {
                        local = true;
                    } else if hp < hc {
                        by_path = true;
                    } else {
                        discard = true;
                    }
                } else if hp <= 1 {
                    local = true;
                } else if u16::from(hp) <= hc1 {
                    by_path = true;
                } else {
                    discard = true;
                }
            }
            if by_path {
                meta.lft = false;
                meta.egress = path;
                discard = !path_ok;
            }
        }
        if discard {
            ev[usize::from(ctr::P0_SQ_DR_DISCARD)] += 1;
            return None;
        }
        if local {
            ev[usize::from(ctr::P0_SQ_LOCAL)] += 1;
            return None;
        }
        ev[usize::from(ctr::P0_SQ_PKTS)] += 1;
        let mut mad = m.clone();
        mad.resize(MAD_BYTES, 0);
        if class == CLASS_DR && !q.asis {
            mad[6] = hp_new;
        }
        let pkt = smp_packet(q.sl, q.dlid, q.slid, self.psn, &mad);
        self.psn = (self.psn + 1) & 0xFF_FFFF;
        Some((pkt, meta))
    }
}

/// `sw_smi_sq`'s hop pointer of a DR SMP it sends.
fn hp_new_sw(dir: bool, hp: u8, hc: u8) -> u8 {
    if !dir {
        if hp <= hc {
            hp.wrapping_add(1)
        } else {
            hp
        }
    } else if hp != 0 && u16::from(hp) <= u16::from(hc) + 1 {
        hp - 1
    } else {
        hp
    }
}

/// What the switch's DR receive rules decide (`dr_rx_t`).
#[derive(Clone, Copy, Debug)]
struct DrRx {
    discard: bool,
    fwd: bool,
    fwd_lft: bool,
    hp_new: u8,
    rp_we: bool,
}

/// `sw_smi_rq`'s `dr_recv_sw` (rtl/sw_smi_rq.sv): the DR receive rules of
/// a switch (C14-6, C14-9, C14-13).
#[allow(clippy::too_many_arguments)]
fn dr_recv_sw(
    dir: bool,
    hp: u8,
    hc: u8,
    dr_slid_perm: bool,
    dr_dlid_perm: bool,
    lid_routed: bool,
    rp_hc: u8,
    path_nx: u8,
    port: u8,
    n: u8,
) -> DrRx {
    let mut r = DrRx {
        discard: false,
        fwd: false,
        fwd_lft: false,
        hp_new: hp,
        rp_we: false,
    };
    let hc1 = u16::from(hc) + 1;
    if hc >= 64 {
        r.discard = true;
    } else if !dir {
        if hc != 0 && hp == 0 {
            r.discard = !lid_routed;
            r.fwd = lid_routed;
        } else if hp < hc {
            r.rp_we = true;
            r.discard = path_nx > n;
            r.fwd = true;
        } else if hp == hc {
            r.rp_we = hc != 0;
            if dr_dlid_perm {
                r.hp_new = hp.wrapping_add(1);
            } else {
                r.fwd = true;
                r.fwd_lft = true;
            }
        } else if u16::from(hp) != hc1 {
            r.discard = true;
        }
    } else if hc != 0 && u16::from(hp) == hc1 {
        if lid_routed {
            r.fwd = true;
        } else {
            r.hp_new = hc;
            r.discard = rp_hc != port;
            if hc >= 2 {
                r.fwd = true;
            } else if !dr_slid_perm {
                r.fwd = true;
                r.fwd_lft = true;
            }
        }
    } else if hp >= 2 && hp <= hc {
        r.discard = path_nx > n;
        r.fwd = true;
    } else if hp == 1 {
        if dr_slid_perm {
            r.hp_new = 0;
        } else {
            r.fwd = true;
            r.fwd_lft = true;
        }
    } else if hp == 0 {
        r.hp_new = 0;
    } else {
        r.discard = true;
    }
    r
}
