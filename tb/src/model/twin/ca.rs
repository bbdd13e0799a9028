//! The twin of one CA port, `ib_ca_top` (rtl/ib_ca_top.sv), at the
//! granularity of packets: a received packet is kept whole and judged when
//! its tlast beat arrives; a packet in a buffer is a byte vector with a beat
//! index; a sent packet is built from the source's MAD when its tail beat
//! is due. A step serves only what is due in its cycle (the beat of a
//! stream at its offset into a stored packet, a counter event that falls
//! in it); a port with nothing stored and no input costs a few comparisons,
//! and `skip` only counts cycles.
//!
//! The RTL's pipeline as cycles (a wire RX beat at cycle `c`, its tlast at
//! `T`). A counter event "at `e`" is visible to a register read from
//! `e + 2`: `ev_q` (rtl/ib_ca_top.sv:848) and the counter register
//! (rtl/ib_ctr_bank.sv:38-51); `idle` is low while `ev_q` holds one.
//! - `ib_link_rx`: one register stage (rtl/ib_link_rx.sv:212-257); a
//!   packet's beats reach the VL15 or data stream at `c + 1`, chosen by its
//!   byte 0; its link checks are events at `T + 1` (RxWords with them).
//! - `smi_rx_core` (rtl/smi_rx_core.sv:161-172): the verdict and SMI events
//!   at `V = T + 1`, from the header fields of the beats before `V - 1`
//!   (the registered `chk_q`; fields a packet lacks keep the last packet's,
//!   rtl/smi_rx_fields.sv), the LID as of `V - 1` and PortState as of `V`.
//! - VL15 RX buffer `ib_pkt_fifo`: a slot is claimed at the first MAD beat
//!   written (beat `EmitPos / DataB`, rtl/smi_mad_align.sv) if
//!   `slot_free_q` (rtl/ib_pkt_fifo.sv:265, the count of the cycle before
//!   against the RX depth register); full at `V` drops and counts
//!   (rtl/ib_pkt_fifo.sv:157); the packet commits at `V` and its first beat
//!   is presented at `V + 2` (issue, rtl/ib_pkt_fifo.sv:202, then the
//!   output register), back to back while the reader is ready.
//! - `smi_rx_dispatch` (rtl/smi_rx_dispatch.sv:80-149): combinational on
//!   the buffer's output: SMA or SM by `to_sm`; a MAD for the SM with no
//!   posted WQE (at its first beat) is taken at full rate and dropped.
//! - `smi_mkey_chk` (rtl/smi_mkey_chk.sv:133-143): the verdict on the
//!   sma_rx tlast beat against the M_Key state of that cycle; the lease
//!   timer is a base cycle and state, evaluated when read or due to expire.
//! - `gsi_rx_check` (rtl/gsi_rx_check.sv:566-615): one register stage more:
//!   data beats leave on drx at `c + 2`; the reason on the tlast beat from
//!   the fields before the tlast beat and the P_Key table match registered
//!   a cycle before; the GSI events at `T + 2`.
//! - `smi_sq` / `smi_tx_ctrl` (rtl/smi_tx_ctrl.sv:115-245): a packet starts
//!   when a source is valid and the TX buffer has a free slot (round robin
//!   SMA, SM, trap), writes `HdrBeats` header beats, one MAD beat per
//!   source beat taken (tready while in the MAD), and one tail beat with the
//!   verdict (commit and PSN + 1, DR discard, or local).
//! - VL15 TX buffer (2 slots) and `ib_link_tx` (rtl/ib_link_tx.sv:111-254):
//!   a committed packet is presented at commit + 2; ib_link_tx adds one
//!   output register stage and the VCRC (an extra beat after a packet that
//!   ends on a full beat: every SMP), VL15 chosen before data at each
//!   packet start.
//! - the link gate (rtl/ib_ca_top.sv:615-640) decides each packet at its
//!   first beat: to the wire, or taken and discarded while the link is down.

pub use super::gsi::pkey_match;
use super::gsi::{GsiEv, GsiRx};
use super::mkey::Mkey;
use crate::model::held;
use crate::model::stream::Beat;
use crate::proto::crc;
use vl15_bindings::{DevIn, PortIn};

/// Bytes of LRH + BTH + DETH before the MAD.
const MAD_OFF: usize = 28;
const MAD_BYTES: usize = 256;
/// LRH..ICRC of an SMP.
const SMP_PKT_BYTES: usize = 288;
const SMP_PKT_LEN: u16 = 72;
const PERM: u16 = 0xFFFF;
const CLASS_LID: u8 = 0x01;
const CLASS_DR: u8 = 0x81;
const NUM_CTRS: usize = 27;
const RX_DEPTH: u8 = 4;
const TX_DEPTH: u32 = 2;
const PORT_DOWN: u8 = 1;
const PORT_INIT: u8 = 2;

// counter indices (ib_pkg::ctr_e)
const C_RX_PKTS: usize = 0;
const C_RX_VCRC: usize = 1;
const C_RX_LVER: usize = 2;
const C_RX_LNH: usize = 3;
const C_RX_LEN: usize = 4;
const C_RX_DATA: usize = 5;
const C_VL15_DROP: usize = 6;
const C_SMI_ICRC: usize = 7;
const C_SMI_HDR: usize = 8;
const C_SMI_LID: usize = 9;
const C_SMI_DR: usize = 10;
const C_SMI_DOWN: usize = 11;
const C_TO_SMA: usize = 12;
const C_TO_SM: usize = 13;
const C_SQ_DR: usize = 14;
const C_SQ_LOCAL: usize = 15;
const C_SQ_PKTS: usize = 16;
const C_TX_VL15: usize = 17;
const C_TX_DATA: usize = 18;
const C_GSI_ICRC: usize = 19;
const C_GSI_HDR: usize = 20;
const C_GSI_GMP: usize = 21;
const C_RX_WORDS: usize = 22;
const C_TX_WORDS: usize = 23;
const C_MKEY_VIOL: usize = 24;
const C_GSI_PKEY: usize = 25;
const C_GSI_QKEY: usize = 26;

/// A beat of a stream: up to 16 bytes, byte 0 in bits 7:0 of word 0.
pub(crate) fn pack(bytes: &[u8]) -> ([u64; 2], u16) {
    let mut d = [0u64; 2];
    for (i, &b) in bytes.iter().enumerate() {
        d[i / 8] |= u64::from(b) << ((i % 8) * 8);
    }
    let keep = if bytes.len() >= 16 {
        0xFFFF
    } else {
        (1u16 << bytes.len()) - 1
    };
    (d, keep)
}

fn unpack(d: [u64; 2], n: usize) -> impl Iterator<Item = u8> {
    (0..n).map(move |i| (d[i / 8] >> ((i % 8) * 8)) as u8)
}

/// Header fields as `smi_rx_fields` holds them: each byte kept from the
/// last packet that had it (rtl/smi_rx_fields.sv).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RxFields {
    b: [u8; 64],
    /// ReturnPath[hop_cnt] == port of the last packet that had it.
    rp_port: bool,
}

/// Offsets `smi_rx_fields` picks.
const FIELD_OFFS: [usize; 28] = [
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    13,
    14,
    15,
    MAD_OFF,
    MAD_OFF + 1,
    MAD_OFF + 3,
    MAD_OFF + 4,
    MAD_OFF + 6,
    MAD_OFF + 7,
    MAD_OFF + 16,
    MAD_OFF + 17,
    MAD_OFF + 32,
    MAD_OFF + 33,
    MAD_OFF + 34,
    MAD_OFF + 35,
    0,
    0,
    0,
    0,
];

impl RxFields {
    fn new() -> Self {
        // after reset every byte reads 0
        RxFields {
            b: [0; 64],
            rp_port: false,
        }
    }
    /// Take the picked bytes of `bytes[..n]`.
    fn take(&mut self, bytes: &[u8], n: usize, port: u8) {
        for &o in &FIELD_OFFS[..24] {
            if o < n {
                self.b[o] = bytes[o];
            }
        }
        // ReturnPath[hop_cnt]: hop_cnt as held a cycle before its beat
        let hc = usize::from(self.b[MAD_OFF + 7]);
        let rp = MAD_OFF + 192 + hc;
        if rp < n {
            self.rp_port = bytes[rp] == port;
        }
    }
    fn at(&self, o: usize) -> u8 {
        self.b[o]
    }
    fn be16(&self, o: usize) -> u16 {
        u16::from_be_bytes([self.b[o], self.b[o + 1]])
    }
}

/// smi_rq's DR receive rules of a CA (rtl/smi_rq.sv dr_recv_ca): (discard,
/// new hop pointer, ReturnPath write).
fn dr_recv_ca(
    dir: bool,
    hp: u8,
    hc: u8,
    slid_perm: bool,
    dlid_perm: bool,
    rp_port: bool,
) -> (bool, u8, bool) {
    let hc1 = u16::from(hc) + 1;
    if hc >= 64 {
        return (true, hp, false);
    }
    if !dir {
        if (hc != 0 && hp == 0) || (hp != 0 && hp < hc) {
            // C14-9:1, C14-9:2
            (true, hp, false)
        } else if hp == hc {
            if !dlid_perm {
                (true, hp, false)
            } else {
                (false, hp.wrapping_add(1), hc != 0)
            }
        } else if u16::from(hp) == hc1 {
            (false, hp, false)
        } else {
            (true, hp, false)
        }
    } else if hc != 0 && u16::from(hp) == hc1 {
        (!rp_port || hc >= 2 || !slid_perm, hc, false)
    } else if hp >= 2 && hp <= hc {
        (true, hp, false)
    } else if hp == 1 {
        if slid_perm {
            (false, 0, false)
        } else {
            (true, hp, false)
        }
    } else if hp == 0 {
        (false, 0, false)
    } else {
        (true, hp, false)
    }
}

/// What the dispatcher presents of a packet in the RX buffer.
#[derive(Debug, Clone)]
struct RxSlot {
    /// The packets committed before it (an identity).
    id: u64,
    mad: Box<[u8; MAD_BYTES]>,
    to_sm: bool,
    slid: u16,
    dlid: u16,
    sl: u8,
    class: u8,
    hop_ptr: u8,
    hop_cnt: u8,
}

/// A packet being written by the send engine.
#[derive(Debug, Clone)]
struct SqPkt {
    src: usize,
    k: usize,
    dlid: u16,
    slid: u16,
    sl: u8,
    asis: bool,
    mad: Vec<u8>,
}

/// A packet on ib_link_tx's input or in its output register.
#[derive(Debug, Clone)]
struct TxBeat {
    data: [u64; 2],
    keep: u16,
    last: bool,
    vl15: bool,
    /// PktLen of the packet (the word counter).
    pkt_len: u16,
    /// The packet (ib_link_tx's count of packets started) and the beat's
    /// index in it: a beat's identity, for the bursts announced.
    seq: u64,
    idx: u32,
}

/// The transmit burst a port last announced: the beats of packet `seq`
/// from index `idx0` in the cycles `first..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BurstRec {
    first: u64,
    end: u64,
    seq: u64,
    idx0: u32,
}

/// What a port gives in one cycle, before the multiport mux.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RxStreamOut {
    pub valid: bool,
    pub last: bool,
    pub data: [u64; 2],
    pub slid: u16,
    pub dlid: u16,
    pub sl: u8,
    pub class: u8,
    pub hop_ptr: u8,
    pub hop_cnt: u8,
}

/// One `ib_ca_top` port.
pub(crate) struct CaPort {
    db: usize,
    port_num: u8,
    /// Current cycle (the one the next step evaluates).
    t: u64,
    // ib_port_regs
    lid: u16,
    lmc: u8,
    sm_lid: u16,
    sm_sl: u8,
    state: u8,
    rx_depth: u8,
    link_q: bool,
    lid_prev: (u16, u8),
    ctr: [u32; NUM_CTRS],
    /// Counter events of this cycle (amounts) and of the last (`ev_q`).
    ev: [u32; NUM_CTRS],
    ev_q: [u32; NUM_CTRS],
    ev_any: bool,
    ev_q_any: bool,
    pkey: Box<[u16; 64]>,
    pkey_idx: u8,
    mkey: Mkey,
    // wire RX
    rx_cur: Vec<u8>,
    rx_beats: Vec<u64>,
    rx_open: bool,
    /// The link RX output register: a beat presented this cycle (VL15?,
    /// beat index, last).
    lrx_out: Option<(bool, usize, bool)>,
    /// ... and its data and keep.
    lrx_beat: ([u64; 2], u16),
    /// gsi_rx_check's output register: (data, keep, last, reason).
    drx_out: Option<([u64; 2], u16, bool, u8)>,
    /// gsi_rx_check's state across packets (its fields after the last).
    gsi: GsiRx,
    /// The events of gsi_rx_check's verdict, due next cycle.
    gsi_ev: Option<usize>,
    /// The last P_Key table write: (cycle, index, old entry).
    pkey_wr: Option<(u64, usize, u16)>,
    /// The packet whose beats are on the link RX output.
    lrx_pkt: Vec<u8>,
    lrx_beat_cycles: Vec<u64>,
    lrx_vl15: bool,
    lrx_err: bool,
    /// The link checks' verdict on `lrx_pkt` (the counter of the first
    /// that fails), and its CRC checks (ICRC, VCRC) where they were made:
    /// judged once at its tlast, read again by the stages after.
    lrx_link: Option<usize>,
    lrx_crc: Option<Option<(bool, bool)>>,
    fields: RxFields,
    /// RX buffer write side: claimed / dropped for lack of a slot.
    rxw_open: bool,
    rxw_claim: bool,
    rx_cnt: u32,
    rx_slot_free: bool,
    rx_q: std::collections::VecDeque<RxSlot>,
    /// Committed packets not yet issued.
    rx_iss: u32,
    rx_iss_beat: usize,
    /// Output register of the RX buffer: (index into rx_q, beat, last).
    rx_out: Option<(usize, usize, bool)>,
    disp_open: bool,
    disp_drop: bool,
    sm_rq: u16,
    // send
    sq: Option<SqPkt>,
    sq_rr: usize,
    psn: u32,
    tx_cnt: u32,
    tx_slot_free: bool,
    tx_q: std::collections::VecDeque<Vec<u8>>,
    tx_iss: u32,
    tx_iss_beat: usize,
    tx_out: Option<(usize, usize, bool)>,
    // ib_link_tx
    lt_state: u8,
    lt_sel_vl15: bool,
    lt_out: Option<TxBeat>,
    lt_extra: Option<TxBeat>,
    lt_data: Vec<u8>,
    /// Packets started on ib_link_tx's output, and beats loaded of the
    /// current one.
    lt_seq: u64,
    lt_k: u32,
    /// The burst announced whose beats are still to come, if any.
    burst: Option<BurstRec>,
    wire_pkt: bool,
    drop_pkt: bool,
    sq_busy: bool,
    /// Beats taken ahead ([`CaPort::rx_burst`]): (cycle, beat), each
    /// arriving on `rx_*` in its cycle.
    rx_ahead: std::collections::VecDeque<(u64, Beat)>,
    /// Packets committed to the RX buffer so far.
    rx_ids: u64,
    /// The MAD of the RX buffer announced to the host
    /// ([`CaPort::note_host_burst`]): its id and the cycle of its first
    /// beat.
    host_rec: Option<(u64, u64)>,
}

/// The port's inputs of one cycle, after the multiport demux.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PortCtl {
    pub sma_rx_tready: bool,
    pub sm_rx_tready: bool,
    pub sma_tx_valid: bool,
    pub sm_tx_valid: bool,
    pub trap_tx_valid: bool,
    pub rq_post: bool,
    pub rq_clr: bool,
    pub reg_we: bool,
}

/// A port's outputs of one cycle.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PortOuts {
    pub sma: RxStreamOut,
    pub sm: RxStreamOut,
    pub mkey_viol: bool,
    pub mkey_mask: bool,
    pub sma_tx_tready: bool,
    pub sm_tx_tready: bool,
    pub trap_tx_tready: bool,
    pub reg_rdata: u32,
    pub idle: bool,
}

impl CaPort {
    pub(crate) fn new(data_w: u32, port_num: u8) -> Self {
        let mut pkey = Box::new([0u16; 64]);
        pkey[0] = 0xFFFF;
        CaPort {
            db: (data_w / 8) as usize,
            port_num,
            t: 0,
            lid: 0,
            lmc: 0,
            sm_lid: 0,
            sm_sl: 0,
            state: PORT_DOWN,
            rx_depth: RX_DEPTH,
            link_q: false,
            lid_prev: (0, 0),
            ctr: [0; NUM_CTRS],
            ev: [0; NUM_CTRS],
            ev_q: [0; NUM_CTRS],
            ev_any: false,
            ev_q_any: false,
            pkey,
            pkey_idx: 0,
            mkey: Mkey::new(),
            rx_cur: Vec::new(),
            rx_beats: Vec::new(),
            rx_open: false,
            lrx_out: None,
            lrx_beat: ([0; 2], 0),
            drx_out: None,
            gsi: GsiRx::new(),
            gsi_ev: None,
            pkey_wr: None,
            lrx_pkt: Vec::new(),
            lrx_beat_cycles: Vec::new(),
            lrx_vl15: false,
            lrx_err: false,
            lrx_link: None,
            lrx_crc: None,
            fields: RxFields::new(),
            rxw_open: false,
            rxw_claim: false,
            rx_cnt: 0,
            rx_slot_free: true,
            rx_q: Default::default(),
            rx_iss: 0,
            rx_iss_beat: 0,
            rx_out: None,
            disp_open: false,
            disp_drop: false,
            sm_rq: 0,
            sq: None,
            sq_rr: 2,
            psn: 0,
            tx_cnt: 0,
            tx_slot_free: true,
            tx_q: Default::default(),
            tx_iss: 0,
            tx_iss_beat: 0,
            tx_out: None,
            lt_state: 0,
            lt_sel_vl15: false,
            lt_out: None,
            lt_extra: None,
            lt_data: Vec::new(),
            lt_seq: 0,
            lt_k: 0,
            burst: None,
            wire_pkt: false,
            drop_pkt: false,
            sq_busy: false,
            rx_ahead: Default::default(),
            rx_ids: 0,
            host_rec: None,
        }
    }

    /// Where the RX buffer presents a MAD's first beat in the next cycle
    /// (`t`) that no burst announced holds: whether it is for the SM.
    pub(crate) fn host_mad_start(&self) -> Option<bool> {
        let (i, b, _) = self.rx_out?;
        let s = self.rx_q.get(i)?;
        (b == 0 && self.host_rec.map_or(true, |(id, _)| id != s.id)).then_some(s.to_sm)
    }

    /// The beats of the MAD [`CaPort::host_mad_start`] names, into `out`,
    /// and the M_Key verdict its last beat shows at rest (`sma_rx_mkey_viol`,
    /// `sma_rx_mkey_mask`): against the state of that cycle, a lease that
    /// expires before it expired.
    pub(crate) fn host_mad(&self, out: &mut Vec<Beat>) -> (bool, bool) {
        out.clear();
        let Some(s) = self.rx_out.and_then(|(i, _, _)| self.rx_q.get(i)) else {
            return (false, false);
        };
        let mb = self.mad_beats();
        for b in 0..mb {
            let (data, keep) = self.beat_of(&s.mad[..], b);
            out.push(Beat {
                data,
                keep,
                last: b + 1 == mb,
            });
        }
        let l = self.t + mb as u64 - 1;
        let mut m = self.mkey.clone();
        if let Some(e) = m.expiry().filter(|&e| e < l) {
            m.expire(e);
        }
        let (viol, mask, _) = m.verdict(&s.mad[..]);
        (viol, mask)
    }

    /// The MAD [`CaPort::host_mad_start`] names was announced from the next
    /// cycle on.
    pub(crate) fn note_host_burst(&mut self) {
        if let Some(s) = self.rx_out.and_then(|(i, _, _)| self.rx_q.get(i)) {
            self.host_rec = Some((s.id, self.t));
        }
    }

    /// Where the RX buffer's output moves on one beat a cycle at rest from
    /// `t`: a MAD dropped for the SM (not shown), or one announced to the
    /// host whose beat the announcement holds now; then the cycle after its
    /// last beat.
    fn rx_run_end(&self) -> Option<u64> {
        let (i, b, _) = self.rx_out?;
        let s = self.rx_q.get(i)?;
        let drop = if self.disp_open {
            self.disp_drop
        } else {
            s.to_sm && self.sm_rq == 0
        };
        let held = self
            .host_rec
            .is_some_and(|(id, first)| id == s.id && first + b as u64 == self.t);
        (drop || held).then(|| self.t + (self.mad_beats() - b) as u64)
    }

    /// Beats that arrive on `rx_*` one a cycle from `first`, taken ahead:
    /// each is this port's receive beat in its cycle (the caller drives
    /// none then); those of a cycle whose `link_up` is low, and after, are
    /// lost.
    pub(crate) fn rx_burst(&mut self, first: u64, beats: &[Beat]) {
        self.rx_ahead.extend((first..).zip(beats.iter().copied()));
    }

    /// The beats taken ahead of cycles from `from` on do not arrive.
    pub(crate) fn rx_burst_cut(&mut self, from: u64) {
        self.rx_ahead.retain(|(c, _)| *c < from);
    }

    /// Reset with `link_up` as the link's level: every register to its
    /// reset value (the cycle count goes on).
    pub(crate) fn reset(&mut self, link_up: bool) {
        let t = self.t;
        *self = CaPort::new(self.db as u32 * 8, self.port_num);
        self.t = t;
        self.state = if link_up { PORT_INIT } else { PORT_DOWN };
        self.link_q = link_up;
    }

    pub(crate) fn skip(&mut self, n: u64) {
        self.t += n;
    }

    /// Whether nothing of the port's state moves in a cycle at rest but
    /// the cycle count, the registers every cycle rewrites and the M_Key
    /// lease's expiry: no event to count, nothing in a pipeline stage or a
    /// buffer, the send engine idle or waiting for a source's beat.
    /// (`idle` implies it.) Up to the first beat taken ahead
    /// ([`CaPort::rx_next`]).
    pub(crate) fn settled(&self, link_up: bool) -> bool {
        self.quiet_but_sq(link_up) && self.sq.as_ref().map_or(true, |q| self.sq_waits(q))
    }

    /// [`CaPort::settled`] but for the send engine.
    pub(crate) fn quiet_but_sq(&self, link_up: bool) -> bool {
        !self.ev_any
            && !self.ev_q_any
            && self.lrx_out.is_none()
            && self.drx_out.is_none()
            && self.gsi_ev.is_none()
            && self.rx_out.is_none()
            && self.rx_iss == 0
            && self.tx_out.is_none()
            && self.tx_iss == 0
            && self.lt_out.is_none()
            && self.lt_state != 2
            && self.link_q == link_up
    }

    /// The cycle of the first beat taken ahead still to arrive, if any: a
    /// [`CaPort::settled`] port is settled up to it.
    pub(crate) fn rx_next(&self) -> Option<u64> {
        self.rx_ahead.front().map(|(c, _)| *c)
    }

    /// `n` cycles at rest of a [`CaPort::settled`] port at once, as `n`
    /// steps would move it.
    pub(crate) fn jump(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        if let Some(e) = self.mkey.expiry() {
            if e >= self.t && e < self.t + n {
                self.mkey.expire(e);
            }
        }
        self.lid_prev = (self.lid, self.lmc);
        self.rx_slot_free = self.rx_cnt < self.rx_lim();
        self.t += n;
    }

    /// The send engine in a packet's header or MAD: its source, and the
    /// cycles from now before the one that takes the MAD's last beat.
    pub(crate) fn sq_run(&self) -> Option<(usize, u64)> {
        let q = self.sq.as_ref()?;
        let end = self.hdr_beats() + self.mad_beats();
        (q.k < end).then(|| (q.src, (end - 1 - q.k) as u64))
    }

    /// `n` cycles at rest of a [`CaPort::quiet_but_sq`] port whose send
    /// engine runs through a header and a MAD ([`CaPort::sq_run`], `n` at
    /// most its cycles) with its source's MAD `beats` offered from beat
    /// `k0` on, as `n` steps would move it: the beats taken, and the cycle
    /// (of the `n`, from 0) the MAD's first was taken in, if in them.
    pub(crate) fn sq_jump(&mut self, n: u64, beats: &[Beat], k0: usize) -> (usize, Option<u64>) {
        let hb = self.hdr_beats();
        let db = self.db;
        let Some(q) = self.sq.as_mut() else {
            return (0, None);
        };
        let r = held::copy_through(&mut q.k, &mut q.mad, (hb, db), n, beats, k0);
        self.jump(n);
        r
    }

    /// Whether the RX buffer presents a beat to the dispatcher.
    pub(crate) fn rx_presents(&self) -> bool {
        self.rx_out.is_some()
    }

    /// The send engine is in the MAD and waits for its source's beat.
    fn sq_waits(&self, q: &SqPkt) -> bool {
        let hb = self.hdr_beats();
        q.k >= hb && q.k < hb + self.mad_beats()
    }

    /// Whether the burst announced holds beat `b` on the output in cycle
    /// `t`.
    fn burst_holds(&self, b: &TxBeat, t: u64) -> bool {
        self.burst.is_some_and(|r| {
            r.seq == b.seq
                && t >= r.first
                && t < r.end
                && u64::from(b.idx) == u64::from(r.idx0) + (t - r.first)
        })
    }

    /// After a step: where the beat on ib_link_tx's output in the next
    /// cycle leaves and the rest of its packet follows it at rest with no
    /// input (a VL15 packet; a data packet's last beat and its VCRC beat),
    /// and the burst last announced does not hold it, announce them: their
    /// first cycle, the beats into `out`.
    pub(crate) fn announce(&mut self, out: &mut Vec<Beat>) -> Option<u64> {
        let t = self.t;
        let b = self.lt_out.as_ref()?;
        if !self.gate_pass() || self.burst_holds(b, t) {
            return None;
        }
        let beat = |x: &TxBeat| Beat {
            data: x.data,
            keep: x.keep,
            last: x.last,
        };
        out.clear();
        out.push(beat(b));
        let bb = SMP_PKT_BYTES / self.db;
        let j = b.idx as usize;
        if b.vl15 && j + 1 < bb {
            // the packet is at the head of the TX buffer until its last
            // beat is loaded
            let pkt = self.tx_q.front()?;
            for k in j + 1..bb {
                let (data, keep) = self.beat_of(pkt, k);
                out.push(Beat {
                    data,
                    keep,
                    last: false,
                });
            }
            let (data, keep) = pack(&crc::vcrc_to_wire(crc::vcrc(pkt)));
            out.push(Beat {
                data,
                keep,
                last: true,
            });
        } else if (b.vl15 && j + 1 == bb) || (!b.vl15 && !b.last && self.lt_state == 2) {
            out.push(beat(self.lt_extra.as_ref()?));
        } else if !b.last {
            // a data packet's beat with more to come from dtx
            return None;
        }
        self.burst = Some(BurstRec {
            first: t,
            end: t + out.len() as u64,
            seq: b.seq,
            idx0: b.idx,
        });
        Some(t)
    }

    /// Calm: the first cycle from the next one (`t`) on in which this
    /// port's outputs, its inputs at rest (`link_up` as now), may differ
    /// from those of the cycle before, or a beat leaves that the burst
    /// announced does not hold (`t` itself: not calm).
    /// `fed[src]`: send source `src` (SMA, SM, trap) holds a whole MAD
    /// for this port ([`crate::model::dut::Dut::host_burst`]), a beat in
    /// every cycle from now: the engine runs through it to the last beat,
    /// which is taken in a step.
    pub(crate) fn calm_end(&self, link_up: bool, fed: [bool; 3]) -> u64 {
        let t = self.t;
        let mut u = u64::MAX;
        // receive: a beat on drx moves on; a MAD the RX buffer presents
        // moves on (where it runs one beat a cycle at rest, up to its end,
        // or its last beat where the next one follows: the step that
        // issues a MAD announces it); a VL15 packet's verdict now is
        // issued next cycle
        if self.drx_out.is_some() {
            u = t + 1;
        }
        if self.rx_out.is_some() {
            u = u.min(match self.rx_run_end() {
                Some(end) if self.rx_iss > 0 => end - 1,
                Some(end) => end,
                None => t + 1,
            });
        } else if self.rx_iss > 0 {
            u = t;
        }
        match self.lrx_out {
            Some((false, _, _)) => u = u.min(t + 1),
            Some((true, _, true)) => u = u.min(t + 1),
            _ => {}
        }
        u = u.min(self.rx_ahead_end());
        // send engine: tready rises at the MAD, the tail writes its beat;
        // a source held whole starts the engine now (it grants at a step)
        let mut waits = false;
        let mut runs_to = None;
        if let Some(q) = &self.sq {
            let hb = self.hdr_beats();
            let end = hb + self.mad_beats();
            if fed[q.src] && q.k < end {
                let last = t + (end - 1 - q.k) as u64;
                runs_to = Some(last);
                u = u.min(last);
            } else if q.k < hb {
                u = u.min(t + (hb - q.k) as u64);
            } else if self.sq_waits(q) {
                waits = true;
            } else {
                u = u.min(t + 1);
            }
        } else if fed.iter().any(|&f| f) {
            u = t;
        }
        // the lease's expiry clears the protect bits
        let expiry = self.mkey.expiry().map(|e| e.max(t) + 1);
        if let Some(e) = expiry {
            u = u.min(e);
        }
        let (tx_until, tx_idle) = self.tx_calm();
        u = u.min(tx_until);
        if !self.is_idle(link_up) {
            // idle rises no earlier than every reason it is low is gone
            let mut lb = tx_idle.max(t + 1);
            if self.mkey.run.is_some() {
                lb = lb.max(expiry.unwrap_or(u64::MAX));
            }
            if waits {
                lb = u64::MAX;
            }
            if let Some(last) = runs_to {
                // the engine is busy up to its tail, after the last beat
                lb = lb.max(last + 1);
            }
            if self.rx_cnt > 0 {
                // the RX buffer empties no earlier than its MAD's end
                lb = lb.max(self.rx_run_end().unwrap_or(t + 1));
            }
            if self.rx_open {
                // the open packet keeps idle low up to its last beat's
                // verdict: the link output at T + 1, the link's events
                // (ev_q) at T + 2
                lb = lb.max(
                    self.rx_ahead
                        .iter()
                        .find(|(_, b)| b.last)
                        .map_or(u64::MAX, |(c, _)| c + 3),
                );
            }
            u = u.min(lb);
        }
        u
    }

    /// The beats taken ahead at rest: the first cycle in which they may
    /// change an output or the model must be stepped. A packet starting
    /// at `c` lowers `idle` at `c + 1`; a data packet's beat of `c` leaves
    /// on drx at `c + 2`; a VL15 packet whose last beat arrives at `T` is
    /// judged at `T + 1`, and its MAD is issued at `T + 2` (the step that
    /// announces it), presented at `T + 3`.
    fn rx_ahead_end(&self) -> u64 {
        let Some(&(c0, _)) = self.rx_ahead.front() else {
            return u64::MAX;
        };
        if !self.rx_open {
            return c0 + 1;
        }
        // the packet's byte 0, which picks its stream
        let mut b0 = self.rx_cur.first().copied();
        for &(c, b) in &self.rx_ahead {
            if b0.is_none() && b.keep != 0 {
                b0 = Some(b.data[0] as u8);
            }
            if !b0.is_some_and(|x| x >> 4 == 0xF) {
                return c + 2;
            }
            if b.last {
                // (a next packet starts after it: no earlier than c + 2)
                return c + 2;
            }
        }
        u64::MAX
    }

    /// The transmit side at rest from `t`: (the first cycle in which
    /// `dtx_tready` may change or a beat leaves that the burst announced
    /// does not hold; the first in which it may no longer keep `idle`
    /// low).
    fn tx_calm(&self) -> (u64, u64) {
        let t = self.t;
        let Some(b) = &self.lt_out else {
            return if self.lt_state == 0 {
                if self.tx_out.is_some() || self.tx_iss > 0 {
                    // a packet's first beat is loaded or issued now
                    (t + 1, t + 1)
                } else if self.tx_cnt > 0 || self.wire_pkt || self.drop_pkt {
                    (t + 1, t + 1)
                } else {
                    (u64::MAX, t)
                }
            } else if self.lt_state == 1 && !self.lt_sel_vl15 {
                // a data packet waits for its next beat from dtx
                (u64::MAX, u64::MAX)
            } else {
                (t + 1, t + 1)
            };
        };
        let gp = self.gate_pass();
        let bb = (SMP_PKT_BYTES / self.db) as u32;
        // beats from t to the packet's last
        let rem = if b.vl15 {
            u64::from(bb.saturating_sub(b.idx)) + 1
        } else if b.last {
            1
        } else if self.lt_state == 2 {
            2
        } else {
            // a data packet's beat with more to come from dtx
            return if gp { (t, t) } else { (u64::MAX, u64::MAX) };
        };
        let x = t + rem - 1;
        if gp && !self.burst_holds(b, t) {
            return (t, t);
        }
        // a VL15 packet queued leaves right after this one: its first beat
        // is not announced
        let queued = if b.vl15 && b.idx + 1 < bb {
            self.tx_q.len() >= 2
        } else {
            !self.tx_q.is_empty()
        };
        if queued {
            return (x + 1, x + 1);
        }
        // dtx_tready is low up to the last beat, high from it; the
        // counters' events of a packet that left are counted at x + 1
        let until = if rem >= 2 { x } else { u64::MAX };
        (until, if gp { x + 2 } else { x + 1 })
    }

    /// Packets the RX buffer takes, by its depth register.
    fn rx_lim(&self) -> u32 {
        match self.rx_depth {
            0 => 1,
            n if n > RX_DEPTH => u32::from(RX_DEPTH),
            n => u32::from(n),
        }
    }

    fn hdr_beats(&self) -> usize {
        MAD_OFF / self.db
    }
    fn mad_beats(&self) -> usize {
        MAD_BYTES / self.db
    }
    fn emit_beat(&self) -> usize {
        if MAD_OFF % self.db == 0 {
            MAD_OFF / self.db
        } else {
            MAD_OFF / self.db + 1
        }
    }

    /// The identity of the beat ib_link_tx loads now: (packet, index), a
    /// new packet where none is under way.
    fn lt_next_beat(&mut self) -> (u64, u32) {
        if self.lt_state == 0 {
            self.lt_seq += 1;
            self.lt_k = 0;
        }
        let k = self.lt_k;
        self.lt_k += 1;
        (self.lt_seq, k)
    }

    fn event(&mut self, c: usize, n: u32) {
        self.ev[c] += n;
        self.ev_any = true;
    }

    /// The beat `b` of a stored byte vector.
    fn beat_of(&self, bytes: &[u8], b: usize) -> ([u64; 2], u16) {
        let s = b * self.db;
        let e = (s + self.db).min(bytes.len());
        pack(&bytes[s..e])
    }

    fn rx_slot_out(&self) -> Option<(&RxSlot, usize, bool)> {
        self.rx_out.map(|(i, b, l)| (&self.rx_q[i], b, l))
    }

    /// Outputs of this cycle that depend on the state only (and on the
    /// register address).
    pub(crate) fn outputs(&self, reg_addr: u8, link_up: bool) -> PortOuts {
        let mut o = PortOuts::default();
        if let Some((s, b, last)) = self.rx_slot_out() {
            let (data, _) = self.beat_of(&s.mad[..], b);
            let st = RxStreamOut {
                valid: true,
                last,
                data,
                slid: s.slid,
                dlid: s.dlid,
                sl: s.sl,
                class: s.class,
                hop_ptr: s.hop_ptr,
                hop_cnt: s.hop_cnt,
            };
            if s.to_sm {
                let drop = if self.disp_open {
                    self.disp_drop
                } else {
                    self.sm_rq == 0
                };
                if !drop {
                    o.sm = st;
                }
            } else {
                // (looked at on the last beat; shown on every beat, as a
                // MAD announced shows it)
                o.sma = st;
                let (viol, mask, _) = self.mkey.verdict(&s.mad[..]);
                o.mkey_viol = viol;
                o.mkey_mask = mask;
            }
        }
        if let Some(q) = &self.sq {
            let in_mad = q.k >= self.hdr_beats() && q.k < self.hdr_beats() + self.mad_beats();
            o.sma_tx_tready = in_mad && q.src == 0;
            o.sm_tx_tready = in_mad && q.src == 1;
            o.trap_tx_tready = in_mad && q.src == 2;
        }
        o.reg_rdata = self.reg_read(reg_addr);
        o.idle = self.is_idle(link_up);
        o
    }

    fn is_idle(&self, link_up: bool) -> bool {
        self.mkey.run.is_none()
            && !self.ev_q_any
            && !self.rx_open
            && self.lrx_out.is_none()
            && self.drx_out.is_none()
            && self.rx_cnt == 0
            && !self.sq_busy
            && self.tx_cnt == 0
            && self.lt_out.is_none()
            && !self.wire_pkt
            && !self.drop_pkt
            && self.link_q == link_up
    }

    fn reg_read(&self, a: u8) -> u32 {
        match a {
            0x30..=0x37 => self.mkey.read(a - 0x30, self.t),
            0x40 => 64,
            0x41 => u32::from(self.pkey_idx),
            0x42 => self
                .pkey
                .get(usize::from(self.pkey_idx))
                .map_or(0, |&e| u32::from(e)),
            0x10..=0x2A => self.ctr[usize::from(a - 0x10)],
            0x00 => 0x564C_3135,
            0x01 => u32::from(self.lid),
            0x02 => u32::from(self.lmc),
            0x03 => u32::from(self.sm_lid),
            0x04 => u32::from(self.sm_sl),
            0x05 => u32::from(self.state),
            0x06 => u32::from(self.port_num),
            0x07 => (TX_DEPTH << 16) | (u32::from(RX_DEPTH) << 8) | self.db as u32,
            0x08 => u32::from(self.rx_depth),
            _ => 0,
        }
    }

    /// The port state a reader sees.
    pub(crate) fn port_state(&self) -> u8 {
        self.state
    }
    pub(crate) fn mkey_prot(&self) -> u8 {
        self.mkey.prot
    }
    pub(crate) fn mkey_viols(&self) -> u16 {
        self.mkey.viols
    }
    /// The wire TX outputs of this cycle: (valid, data, keep, last).
    pub(crate) fn tx_out(&self) -> (bool, [u64; 2], u16, bool) {
        match &self.lt_out {
            Some(b) => (self.gate_pass(), b.data, b.keep, b.last),
            None => (false, [0; 2], 0, false),
        }
    }
    fn gate_pass(&self) -> bool {
        self.wire_pkt || (self.link_q && !self.drop_pkt)
    }
    /// Whether the send engine writes a beat into the TX buffer this cycle.
    pub(crate) fn sq_beat(&self, any_valid: bool, src_valid: [bool; 3]) -> bool {
        match &self.sq {
            None => any_valid && self.tx_slot_free,
            Some(q) => {
                let hb = self.hdr_beats();
                if q.k < hb || q.k >= hb + self.mad_beats() {
                    true
                } else {
                    src_valid[q.src]
                }
            }
        }
    }
    /// dtx_tready of this cycle.
    pub(crate) fn dtx_tready(&self, tx_tready: bool) -> bool {
        let load = self.lt_out.is_none() || self.lt_tready(tx_tready);
        let use_vl15 = if self.lt_state == 0 {
            self.tx_out.is_some()
        } else {
            self.lt_sel_vl15
        };
        load && self.lt_state != 2 && !use_vl15
    }
    fn lt_tready(&self, tx_tready: bool) -> bool {
        if self.gate_pass() {
            tx_tready
        } else {
            true
        }
    }

    /// Advance one cycle: `d` the device inputs (data of the send streams,
    /// the register bus, the doorbell count), `p` this port's wire inputs,
    /// `c` what reaches this port after the multiport demux.
    pub(crate) fn step(&mut self, d: &DevIn, p: &PortIn, c: &PortCtl) {
        let t = self.t;
        let db = self.db;
        let mut ahead;
        let p = if self.rx_ahead.is_empty() {
            p
        } else {
            // a beat taken ahead arrives now (as Lockstep feeds the RTL)
            ahead = *p;
            if !p.link_up {
                self.rx_ahead.clear();
            }
            while self.rx_ahead.front().is_some_and(|(c, _)| *c < t) {
                self.rx_ahead.pop_front();
            }
            if let Some((_, b)) = self.rx_ahead.front().filter(|(c, _)| *c == t) {
                ahead.rx_tdata = b.data;
                ahead.rx_tkeep = b.keep;
                ahead.rx_tlast = b.last;
                ahead.rx_tvalid = true;
                self.rx_ahead.pop_front();
            }
            &ahead
        };
        // ---------------- RX buffer read side and dispatch ----------------
        let mut take_sm_rq = false;
        let mut freed_rx = false;
        let mut rx_issue_ok = self.rx_out.is_none();
        if let Some((i, _, last)) = self.rx_out {
            let to_sm = self.rx_q[i].to_sm;
            let drop = if self.disp_open {
                self.disp_drop
            } else {
                to_sm && self.sm_rq == 0
            };
            if !self.disp_open && to_sm && !drop {
                take_sm_rq = true;
            }
            let ready = drop
                || if to_sm {
                    c.sm_rx_tready
                } else {
                    c.sma_rx_tready
                };
            if !to_sm && ready && last {
                // M_Key check on the SMA stream's last handshake
                let (viol, _, stop) = self.mkey.verdict(&self.rx_q[i].mad[..]);
                if viol {
                    self.event(C_MKEY_VIOL, 1);
                }
                self.mkey.handshake(t, viol, stop);
            }
            if ready {
                rx_issue_ok = true;
                if last {
                    freed_rx = true;
                    if drop {
                        self.event(C_VL15_DROP, 1);
                    } else if to_sm {
                        self.event(C_TO_SM, 1);
                    } else {
                        self.event(C_TO_SMA, 1);
                    }
                    self.disp_open = false;
                    self.disp_drop = false;
                } else {
                    self.disp_open = true;
                    self.disp_drop = drop;
                }
            } else {
                self.disp_open = true;
                self.disp_drop = drop;
            }
        }
        let mut next_rx_out = if rx_issue_ok { None } else { self.rx_out };
        if rx_issue_ok && self.rx_iss > 0 {
            // the next beat of the first packet with unissued beats
            let first_unissued = self.rx_q.len() - self.rx_iss as usize;
            let b = self.rx_iss_beat;
            let last = b + 1 == self.mad_beats();
            next_rx_out = Some((first_unissued, b, last));
            if last {
                self.rx_iss -= 1;
                self.rx_iss_beat = 0;
            } else {
                self.rx_iss_beat += 1;
            }
        }
        // ---------------- SM receive queue ----------------
        {
            let left: u32 = if c.rq_clr {
                0
            } else {
                u32::from(self.sm_rq) - u32::from(take_sm_rq)
            };
            let post = if c.rq_post {
                u32::from(d.sm_rq_post_n)
            } else {
                0
            };
            self.sm_rq = (left + post).min(0xFFFF) as u16;
        }
        // ---------------- link RX output stage (VL15 stream) ----------------
        let mut commit_rx: Option<RxSlot> = None;
        if let Some(k) = self.gsi_ev.take() {
            self.event(k, 1);
        }
        let mut next_drx = None;
        if let Some((vl15, _, last)) = self.lrx_out {
            if !vl15 {
                let (data, keep) = self.lrx_beat;
                let reason = if last { self.gsi_judge(t) } else { 0 };
                next_drx = Some((data, keep, last, reason));
            }
        }
        self.drx_out = next_drx;
        if let Some((vl15, bi, last)) = self.lrx_out {
            if vl15 {
                if bi == self.emit_beat() && !self.rxw_open {
                    self.rxw_open = true;
                    self.rxw_claim = self.rx_slot_free;
                }
                if last {
                    commit_rx = self.smi_verdict(t);
                    self.rxw_open = false;
                    self.rxw_claim = false;
                }
            }
            if last {
                if !self.lrx_err {
                    self.event(C_RX_WORDS, u32::from(pkt_len_of(&self.lrx_pkt)));
                }
                let pkt = std::mem::take(&mut self.lrx_pkt);
                self.link_events(&pkt);
                self.lrx_pkt = pkt;
            }
        }
        // ---------------- wire RX input ----------------
        let mut next_lrx = None;
        if p.rx_tvalid {
            if !self.rx_open {
                self.rx_cur.clear();
                self.rx_beats.clear();
            }
            let n = p.rx_tkeep.count_ones() as usize;
            let bi = self.rx_beats.len();
            self.rx_cur.extend(unpack(p.rx_tdata, n));
            self.rx_beats.push(t);
            if bi == 0 {
                self.lrx_pkt.clear();
                self.lrx_beat_cycles.clear();
            }
            let vl15 = self.rx_cur.first().is_some_and(|b| b >> 4 == 0xF);
            self.lrx_vl15 = vl15;
            if p.rx_tlast {
                let (err, crc) = link_check(&self.rx_cur, db);
                self.lrx_err = err.is_some();
                self.lrx_link = err;
                self.lrx_crc = crc;
                self.lrx_pkt = std::mem::take(&mut self.rx_cur);
                self.lrx_beat_cycles = std::mem::take(&mut self.rx_beats);
                self.rx_open = false;
            } else {
                self.rx_open = true;
            }
            next_lrx = Some((vl15, bi, p.rx_tlast));
            self.lrx_beat = (p.rx_tdata, p.rx_tkeep);
        }
        // ---------------- send engine ----------------
        let src_valid = [c.sma_tx_valid, c.sm_tx_valid, c.trap_tx_valid];
        let mut commit_tx: Option<Vec<u8>> = None;
        let sq_wr = self.sq_beat(src_valid.iter().any(|&v| v), src_valid);
        if sq_wr || self.sq.is_some() {
            self.sq_step(d, src_valid, &mut commit_tx);
        }
        // ---------------- TX buffer read side and ib_link_tx ----------------
        let lt_ready = self.lt_tready(p.tx_tready);
        let load = self.lt_out.is_none() || lt_ready;
        // the wire gate sees this cycle's output beat
        if let Some(b) = self.lt_out.clone() {
            let gp = self.gate_pass();
            let (wp, dp) = (self.wire_pkt, self.drop_pkt);
            let mut wire = wp;
            let mut drop = dp;
            if gp {
                wire = true;
            }
            if lt_ready {
                if gp {
                    wire = !b.last;
                } else {
                    drop = !b.last;
                }
                if b.last && gp {
                    self.event(if b.vl15 { C_TX_VL15 } else { C_TX_DATA }, 1);
                    if p.tx_tready {
                        self.event(C_TX_WORDS, u32::from(b.pkt_len));
                    }
                }
            }
            self.wire_pkt = wire;
            self.drop_pkt = drop;
        }
        let mut freed_tx = false;
        let mut tx_issue_ok = self.tx_out.is_none();
        let use_vl15 = if self.lt_state == 0 {
            self.tx_out.is_some()
        } else {
            self.lt_sel_vl15
        };
        let mut new_lt: Option<TxBeat> = None;
        if load {
            if self.lt_state == 2 {
                new_lt = self.lt_extra.take();
                self.lt_state = 0;
            } else if use_vl15 {
                if let Some((i, b, last)) = self.tx_out {
                    let (seq, idx) = self.lt_next_beat();
                    let (data, keep) = self.beat_of(&self.tx_q[i], b);
                    let pl = pkt_len_of(&self.tx_q[i]);
                    tx_issue_ok = true;
                    self.lt_sel_vl15 = true;
                    if last {
                        freed_tx = true;
                        // a VL15 packet ends on a full beat: the VCRC beat follows
                        let v = crc::vcrc_to_wire(crc::vcrc(&self.tx_q[i]));
                        let (vd, vk) = pack(&v);
                        self.lt_extra = Some(TxBeat {
                            data: vd,
                            keep: vk,
                            last: true,
                            vl15: true,
                            pkt_len: pl,
                            seq,
                            idx: idx + 1,
                        });
                        self.lt_state = 2;
                    } else {
                        self.lt_state = 1;
                    }
                    new_lt = Some(TxBeat {
                        data,
                        keep,
                        last: false,
                        vl15: true,
                        pkt_len: pl,
                        seq,
                        idx,
                    });
                }
            } else if p.dtx_tvalid {
                let n = p.dtx_tkeep.count_ones() as usize;
                let (seq, idx) = self.lt_next_beat();
                if self.lt_state == 0 {
                    self.lt_data.clear();
                }
                self.lt_sel_vl15 = false;
                self.lt_data.extend(unpack(p.dtx_tdata, n));
                let mut data = p.dtx_tdata;
                let mut keep = p.dtx_tkeep;
                let mut last = false;
                if p.dtx_tlast {
                    let v = crc::vcrc_to_wire(crc::vcrc(&self.lt_data));
                    let pl = pkt_len_of(&self.lt_data);
                    if n + 2 <= db {
                        let mut bytes: Vec<u8> = unpack(p.dtx_tdata, n).collect();
                        bytes.extend_from_slice(&v);
                        (data, keep) = pack(&bytes);
                        last = true;
                        self.lt_state = 0;
                    } else if n + 1 == db {
                        let mut bytes: Vec<u8> = unpack(p.dtx_tdata, n).collect();
                        bytes.push(v[0]);
                        (data, keep) = pack(&bytes);
                        let (vd, vk) = pack(&v[1..]);
                        self.lt_extra = Some(TxBeat {
                            data: vd,
                            keep: vk,
                            last: true,
                            vl15: false,
                            pkt_len: pl,
                            seq,
                            idx: idx + 1,
                        });
                        self.lt_state = 2;
                    } else {
                        let (vd, vk) = pack(&v);
                        self.lt_extra = Some(TxBeat {
                            data: vd,
                            keep: vk,
                            last: true,
                            vl15: false,
                            pkt_len: pl,
                            seq,
                            idx: idx + 1,
                        });
                        self.lt_state = 2;
                    }
                } else {
                    self.lt_state = 1;
                }
                let pl = pkt_len_of(&self.lt_data);
                new_lt = Some(TxBeat {
                    data,
                    keep,
                    last,
                    vl15: false,
                    pkt_len: pl,
                    seq,
                    idx,
                });
            }
            self.lt_out = new_lt;
        }
        let mut next_tx_out = if tx_issue_ok { None } else { self.tx_out };
        if tx_issue_ok && self.tx_iss > 0 {
            let first = self.tx_q.len() - self.tx_iss as usize;
            let b = self.tx_iss_beat;
            let last = b + 1 == SMP_PKT_BYTES / db;
            next_tx_out = Some((first, b, last));
            if last {
                self.tx_iss -= 1;
                self.tx_iss_beat = 0;
            } else {
                self.tx_iss_beat += 1;
            }
        }
        // ---------------- buffers: commits and frees ----------------
        if freed_rx {
            self.rx_q.pop_front();
            if let Some(x) = next_rx_out.as_mut() {
                x.0 -= 1;
            }
        }
        if let Some(mut s) = commit_rx {
            s.id = self.rx_ids;
            self.rx_ids += 1;
            self.rx_q.push_back(s);
            self.rx_iss += 1;
        }
        self.rx_out = next_rx_out;
        self.rx_cnt = self.rx_q.len() as u32;
        self.rx_slot_free = self.rx_cnt < self.rx_lim();
        if freed_tx {
            self.tx_q.pop_front();
            if let Some(x) = next_tx_out.as_mut() {
                x.0 -= 1;
            }
        }
        if let Some(pk) = commit_tx {
            self.tx_q.push_back(pk);
            self.tx_iss += 1;
        }
        self.tx_out = next_tx_out;
        self.tx_cnt = self.tx_q.len() as u32;
        self.tx_slot_free = self.tx_cnt < TX_DEPTH;
        self.lrx_out = next_lrx;
        // ---------------- M_Key lease expiry ----------------
        self.mkey.expire(t);
        // ---------------- registers and counters ----------------
        self.lid_prev = (self.lid, self.lmc);
        let mut clr = 0u32;
        let a = (d.reg_addr & 0xFF) as u8;
        let w = d.reg_wdata;
        if c.reg_we {
            match a {
                0x0F => clr = (1 << NUM_CTRS) - 1,
                0x0E => clr = w & ((1 << NUM_CTRS) - 1),
                0x10..=0x2A => clr = 1 << (a - 0x10),
                _ => {}
            }
        }
        // counters take last cycle's events
        for i in 0..NUM_CTRS {
            let bit = 1 << i;
            let wr_this = c.reg_we && (0x10..=0x2A).contains(&a) && usize::from(a - 0x10) == i;
            if c.reg_we && (a == 0x0F || (a == 0x0E && w & bit != 0)) {
                self.ctr[i] = 0;
            } else if wr_this {
                self.ctr[i] = w;
            } else if self.ev_q_any && self.ev_q[i] != 0 {
                self.ctr[i] = self.ctr[i].wrapping_add(self.ev_q[i]);
            }
        }
        if self.ev_any || self.ev_q_any {
            let mut any = false;
            for i in 0..NUM_CTRS {
                self.ev_q[i] = if clr & (1 << i) != 0 { 0 } else { self.ev[i] };
                any |= self.ev_q[i] != 0;
                self.ev[i] = 0;
            }
            self.ev_q_any = any;
            self.ev_any = false;
        }
        if c.reg_we {
            match a {
                0x01 => self.lid = w as u16,
                0x02 => self.lmc = (w & 7) as u8,
                0x03 => self.sm_lid = w as u16,
                0x04 => self.sm_sl = (w & 0xF) as u8,
                0x05 => self.state = (w & 0xF) as u8,
                0x08 => {
                    self.rx_depth = if w == 0 {
                        1
                    } else if w > u32::from(RX_DEPTH) {
                        RX_DEPTH
                    } else {
                        w as u8
                    }
                }
                0x30..=0x37 => self.mkey.write(a - 0x30, w, t),
                0x41 => self.pkey_idx = w as u8,
                0x42 => {
                    let i = usize::from(self.pkey_idx);
                    if i < 64 {
                        self.pkey_wr = Some((t, i, self.pkey[i]));
                        self.pkey[i] = w as u16;
                    }
                    self.pkey_idx = self.pkey_idx.wrapping_add(1);
                }
                _ => {}
            }
        }
        if self.link_q && !p.link_up {
            self.state = PORT_DOWN;
        } else if !self.link_q && p.link_up {
            self.state = PORT_INIT;
        }
        self.link_q = p.link_up;
        self.t += 1;
    }

    /// The link checks' events of a packet (at the cycle after its tlast;
    /// `lrx_link` is its verdict).
    fn link_events(&mut self, pkt: &[u8]) {
        self.event(C_RX_PKTS, 1);
        match self.lrx_link {
            Some(k) => self.event(k, 1),
            None => {
                if pkt.first().is_some_and(|b| b >> 4 != 0xF) {
                    self.event(C_RX_DATA, 1);
                }
            }
        }
    }

    /// gsi_rx_check's verdict on the data packet whose tlast is on its
    /// input in cycle `g`: the reason on the output's tlast beat (next
    /// cycle) and the event it counts.
    fn gsi_judge(&mut self, g: u64) -> u8 {
        let cycles = &self.lrx_beat_cycles;
        // a wire beat of cycle c is on gsi_rx_check's input at c + 1
        let seen = |limit: u64| cycles.iter().filter(|&&c| c + 1 < limit).count();
        let (reason, ev) = self.gsi.judge(
            &self.lrx_pkt,
            self.db,
            g,
            seen,
            &self.pkey[..],
            self.pkey_wr,
            self.lrx_err,
        );
        self.gsi_ev = ev.map(|e| match e {
            GsiEv::IcrcErr => C_GSI_ICRC,
            GsiEv::BadHdr => C_GSI_HDR,
            GsiEv::PkeyViol => C_GSI_PKEY,
            GsiEv::QkeyViol => C_GSI_QKEY,
            GsiEv::Gmp => C_GSI_GMP,
        });
        reason
    }

    /// gsi_rx_check's output of this cycle: (valid, data, keep, last,
    /// tuser, reason).
    pub(crate) fn drx(&self) -> (bool, [u64; 2], u16, bool, bool, u8) {
        match self.drx_out {
            Some((d, k, l, r)) => (true, d, k, l, r != 0, r),
            None => (false, [0; 2], 0, false, false, 0),
        }
    }

    /// smi_rx_core's verdict on the VL15 packet on the link output, at its
    /// tlast (cycle `v`): its events, and the slot to commit.
    fn smi_verdict(&mut self, v: u64) -> Option<RxSlot> {
        let pkt = std::mem::take(&mut self.lrx_pkt);
        let cycles = std::mem::take(&mut self.lrx_beat_cycles);
        let db = self.db;
        // beats on the link output one cycle after the input
        let seen_by = |limit: u64| -> usize {
            // bytes of the beats that reached the output before cycle `limit`
            let nb = cycles.iter().filter(|&&c| c + 1 < limit).count();
            (nb * db).min(pkt.len())
        };
        let port = self.port_num;
        let mut f_chk = self.fields;
        f_chk.take(&pkt, seen_by(v - 1), port);
        let mut f_now = f_chk;
        f_now.take(&pkt, seen_by(v), port);
        let mut f_all = f_now;
        f_all.take(&pkt, pkt.len(), port);
        self.fields = f_all;
        let out = (|| {
            if self.lrx_err {
                return None;
            }
            let (lid, lmc) = self.lid_prev;
            let f = &f_chk;
            let dlid = f.be16(2);
            let slid = f.be16(6);
            let lid_hi = u32::from(lid) + (1u32 << lmc) - 1;
            let mine = dlid >= lid && u32::from(dlid) <= lid_hi;
            let lnh = f.at(1) & 3;
            let pktlen_ok =
                (f.at(4) & 7) == (SMP_PKT_LEN >> 8) as u8 && f.at(5) == SMP_PKT_LEN as u8;
            let class = f.at(MAD_OFF + 1);
            let is_lid = class == CLASS_LID;
            let is_dr = class == CLASS_DR;
            let err_hdr = lnh != 2
                || f.at(8) != 0x64
                || f.at(9) & 0xF != 0
                || f.at(13) != 0
                || f.at(14) != 0
                || f.at(15) != 0
                || !pktlen_ok
                || f.at(MAD_OFF) != 1
                || !(is_lid || is_dr);
            let err_lid = if is_lid {
                !mine || lid == 0 || slid == PERM
            } else {
                dlid != PERM && !mine
            };
            let method = f.at(MAD_OFF + 3);
            let to_sm = crate::proto::mad::smi_to_sm(method, f.be16(MAD_OFF + 16));
            let icrc_chk = lnh == 2 && pktlen_ok;
            let crcs = match self.lrx_crc {
                Some(c) => c,
                None => crc::check_wire(&pkt),
            };
            let icrc_ok = crcs.is_some_and(|(i, _)| i);
            let dir = f.at(MAD_OFF + 4) & 0x80 != 0;
            let hp = f.at(MAD_OFF + 6);
            let hc = f.at(MAD_OFF + 7);
            let slid_perm = f.be16(MAD_OFF + 32) == PERM;
            let dlid_perm = f.be16(MAD_OFF + 34) == PERM;
            let rp_port = if db == 1 { f.rp_port } else { f_now.rp_port };
            let (dr_disc, hp_new, rp_we) = dr_recv_ca(dir, hp, hc, slid_perm, dlid_perm, rp_port);
            if self.state == PORT_DOWN {
                self.event(C_SMI_DOWN, 1);
                return None;
            }
            if icrc_chk && !icrc_ok {
                self.event(C_SMI_ICRC, 1);
                return None;
            }
            if err_hdr {
                self.event(C_SMI_HDR, 1);
                return None;
            }
            if err_lid {
                self.event(C_SMI_LID, 1);
                return None;
            }
            if is_dr && dr_disc {
                self.event(C_SMI_DR, 1);
                return None;
            }
            let mut mad = Box::new([0u8; MAD_BYTES]);
            for (i, m) in mad.iter_mut().enumerate() {
                *m = pkt.get(MAD_OFF + i).copied().unwrap_or(0);
            }
            let (hop_ptr, hop_cnt) = if is_dr {
                (hp_new & 0x7F, hc & 0x7F)
            } else {
                (0, 0)
            };
            if is_dr {
                mad[6] = hop_ptr;
                if rp_we {
                    mad[192 + usize::from(hp & 0x3F)] = port;
                }
            }
            Some(RxSlot {
                id: 0,
                mad,
                to_sm,
                slid: f.be16(6),
                dlid,
                sl: f.at(1) >> 4,
                class,
                hop_ptr,
                hop_cnt,
            })
        })();
        self.lrx_pkt = pkt;
        match out {
            Some(s) if self.rxw_open => {
                if self.rxw_claim {
                    Some(s)
                } else {
                    self.event(C_VL15_DROP, 1);
                    None
                }
            }
            _ => None,
        }
    }

    /// One cycle of the send engine, which writes a beat this cycle or is
    /// busy.
    fn sq_step(&mut self, d: &DevIn, src_valid: [bool; 3], commit: &mut Option<Vec<u8>>) {
        let db = self.db;
        let hb = self.hdr_beats();
        let mb = self.mad_beats();
        match self.sq.take() {
            None => {
                // grant: round robin after the last source granted
                let base = (self.sq_rr + 1) % 3;
                let order = [base, (base + 1) % 3, (base + 2) % 3];
                let src = order
                    .iter()
                    .copied()
                    .find(|&s| src_valid[s])
                    .unwrap_or(order[2]);
                let lmc_mask = !(0xFFu16 << self.lmc) & 0x7F;
                let (dlid, slid, sl) = match src {
                    0 => (d.sma_tx_slid, d.sma_tx_dlid, d.sma_tx_sl),
                    1 => (
                        d.sm_tx_dlid,
                        if self.lid == 0 {
                            PERM
                        } else {
                            self.lid | (u16::from(d.sm_tx_path_bits) & lmc_mask)
                        },
                        d.sm_tx_sl,
                    ),
                    _ => (
                        self.sm_lid,
                        if self.lid == 0 { PERM } else { self.lid },
                        self.sm_sl,
                    ),
                };
                let asis = if src == 0 { slid != PERM } else { dlid != PERM };
                self.sq_rr = src;
                self.sq_busy = true;
                self.sq = Some(SqPkt {
                    src,
                    k: 1,
                    dlid,
                    slid,
                    sl: sl & 0xF,
                    asis,
                    mad: Vec::with_capacity(MAD_BYTES),
                });
            }
            Some(mut q) => {
                if q.k < hb {
                    q.k += 1;
                    self.sq = Some(q);
                } else if q.k < hb + mb {
                    if src_valid[q.src] {
                        let data = match q.src {
                            0 => d.sma_tx_tdata,
                            1 => d.sm_tx_tdata,
                            _ => d.trap_tx_tdata,
                        };
                        q.mad.extend(unpack(data, db));
                        q.k += 1;
                    }
                    self.sq = Some(q);
                } else {
                    // tail: the verdict
                    self.sq_busy = false;
                    let (ok, disc, local, pkt) = self.sq_finish(&q);
                    if ok {
                        self.event(C_SQ_PKTS, 1);
                        self.psn = (self.psn + 1) & 0xFF_FFFF;
                        *commit = Some(pkt);
                    } else if disc {
                        self.event(C_SQ_DR, 1);
                    } else if local {
                        self.event(C_SQ_LOCAL, 1);
                    }
                }
            }
        }
    }

    /// smi_sq's verdict and the packet (LRH..ICRC) of a complete MAD.
    fn sq_finish(&self, q: &SqPkt) -> (bool, bool, bool, Vec<u8>) {
        let m = &q.mad;
        let port = self.port_num;
        let class = m[1];
        let dir = m[4] & 0x80 != 0;
        let hp = m[6];
        let hc = m[7];
        let slid_perm = m[32] == 0xFF && m[33] == 0xFF;
        let dlid_perm = m[34] == 0xFF && m[35] == 0xFF;
        let ip1_port = m[129] == port;
        let path_port = usize::from(hc) < 64 && m[192 + usize::from(hc)] == port;
        // dr_send_ca
        let hc1 = u16::from(hc) + 1;
        let (mut discard, mut hp_new) = (false, hp);
        if hc >= 64 {
            discard = true;
        } else if !dir {
            if hc != 0 && hp == 0 {
                hp_new = 1;
                discard = !ip1_port;
            } else if hp != 0 && hp < hc {
                discard = true;
            } else if hp == hc {
                hp_new = hp.wrapping_add(1);
                discard = !dlid_perm;
            } else if u16::from(hp) != hc1 {
                discard = true;
            }
        } else if hc != 0 && u16::from(hp) == hc1 {
            hp_new = hc;
            discard = !path_port;
        } else if hp >= 2 && hp <= hc {
            discard = true;
        } else if hp == 1 {
            hp_new = 0;
            discard = !slid_perm;
        } else if hp != 0 {
            discard = true;
        }
        let mut local = false;
        if hc < 64 && !dir && hc == 0 {
            local = true;
            discard = false;
        } else if !discard {
            local = if dir {
                hp_new == 0
            } else {
                u16::from(hp_new) == hc1
            };
        }
        let is_dr = class == CLASS_DR;
        let perm = if dir { dlid_perm } else { slid_perm };
        let (ok, disc, loc) = if is_dr && perm == q.asis {
            (false, true, false)
        } else if is_dr && !perm {
            (true, false, false)
        } else if is_dr && discard {
            (false, true, false)
        } else if is_dr && local {
            (false, false, true)
        } else {
            (true, false, false)
        };
        if !ok {
            return (false, disc, loc, Vec::new());
        }
        let mut mad = m.clone();
        if is_dr && !q.asis {
            // hp_new_ca
            mad[6] = if !dir {
                if hp == 0 || hp == hc {
                    hp.wrapping_add(1)
                } else {
                    hp
                }
            } else if u16::from(hp) == hc1 || hp == 1 {
                hp.wrapping_sub(1)
            } else {
                hp
            };
        }
        (
            true,
            false,
            false,
            smp_packet(q.sl, q.dlid, q.slid, self.psn, &mad),
        )
    }
}

/// The SMP `smi_tx_emit` writes (rtl/smi_tx_emit.sv): LRH (VL15, LNH
/// IBA local), BTH (SMP opcode, P_Key 0xFFFF, QP 0, `psn`), DETH (zero),
/// the MAD, the ICRC.
pub(crate) fn smp_packet(sl: u8, dlid: u16, slid: u16, psn: u32, mad: &[u8]) -> Vec<u8> {
    let mut pkt = Vec::with_capacity(SMP_PKT_BYTES);
    let [dh, dl] = dlid.to_be_bytes();
    let [sh, sl_] = slid.to_be_bytes();
    pkt.extend_from_slice(&[
        0xF0,
        (sl << 4) | 2,
        dh,
        dl,
        (SMP_PKT_LEN >> 8) as u8,
        SMP_PKT_LEN as u8,
        sh,
        sl_,
        0x64,
        0,
        0xFF,
        0xFF,
        0,
        0,
        0,
        0,
        0,
        (psn >> 16) as u8,
        (psn >> 8) as u8,
        psn as u8,
    ]);
    pkt.extend_from_slice(&[0; 8]);
    pkt.extend_from_slice(mad);
    crc::append_icrc(&mut pkt);
    pkt
}

/// PktLen of a packet (bytes 4..5), 0 where it is too short.
fn pkt_len_of(p: &[u8]) -> u16 {
    let b4 = p.get(4).copied().unwrap_or(0);
    let b5 = p.get(5).copied().unwrap_or(0);
    (u16::from(b4 & 7) << 8) | u16::from(b5)
}

/// ib_link_rx's checks of a whole packet: the counter of the first that
/// fails, in the RTL's order (length, LVer, LNH, VCRC); and the packet's
/// CRC checks ([`crc::check_wire`]) where they were made (the checks
/// before the VCRC passed).
fn link_check(p: &[u8], db: usize) -> (Option<usize>, Option<Option<(bool, bool)>>) {
    let n = p.len();
    let nb_last = if n % db == 0 { db.min(n) } else { n % db };
    let bcnt = n - nb_last;
    let pl = usize::from(pkt_len_of(p));
    let last_byte = pl * 4 + 1;
    let err_len = bcnt.min(0xFFFF) != (last_byte & !(db - 1))
        || nb_last != (last_byte & (db - 1)) + 1
        || pl < 5;
    if err_len {
        return (Some(C_RX_LEN), None);
    }
    if p.first().copied().unwrap_or(0) & 0xF != 0 {
        return (Some(C_RX_LVER), None);
    }
    let lnh = p.get(1).copied().unwrap_or(0) & 3;
    if lnh != 2 && lnh != 3 {
        return (Some(C_RX_LNH), None);
    }
    let crcs = crc::check_wire(p);
    if !crcs.is_some_and(|(_, v)| v) {
        return (Some(C_RX_VCRC), Some(crcs));
    }
    (None, Some(crcs))
}
