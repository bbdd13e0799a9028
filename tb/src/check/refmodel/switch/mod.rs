//! Reference model, scoreboard and fault generator of the switch datapath
//! (`ib_switch_top`, docs/fabric.md), written from ibspec §1–§7 and §11 and
//! the decisions docs/fabric.md documents (drop rules, counters, the
//! directed-route rows), not from the RTL.
//!
//! * [`SwitchModel`] (this file): packet level. Given a packet on input
//!   port p and the switch state (LFT, LinearFDBTop, PortState, port-0
//!   LID) it predicts where the packet goes (an external output, the
//!   port-0 SMA or SM interface, the port-0 GMP receive path, or a drop),
//!   the bytes that leave, and the counter changes. Input-buffer occupancy
//!   is the scoreboard's business (it keeps the buffers from overflowing
//!   except in the directed overflow tests, where
//!   [`SwitchModel::buffer_full`] says what a full buffer does).
//!   [`SwitchModel::sma_send`], `sm_send`, `trap_send` and `gmp_send`
//!   predict what port 0's host sends.
//! * [`Bench`] (`bench.rs`): drives the Verilated switch (8 to 64 ports,
//!   [`Radix`], at DataW 64 or 128, the widths the fabric's models are
//!   built at) and checks it against the model transaction by
//!   transaction, byte for byte, in order per (input, output), and every
//!   counter through the register interface.
//! * [`FaultClass`] and [`gen_packet`] (`gen.rs`, with the bench's switch
//!   set-up): a seeded generator of good packets and of every switch fault
//!   class with its expected disposition.
//! * [`soak`] (`soak.rs`): the library entry point behind `vl15 soak
//!   --device switch`.

use crate::model::device::SmiMeta;
use crate::model::regmap::swreg;
use crate::proto::crc;
use crate::proto::mad::{self, Mad};
use crate::proto::packet::consts::*;
use crate::proto::packet::{Bth, Deth, Lrh, Packet};

mod bench;
mod gen;
mod soak;

pub use bench::*;
pub use gen::*;
pub use soak::*;

/// VL15 input slots per external port (`Vl15Depth`, docs/fabric.md).
pub const VL15_DEPTH: usize = 3;
/// Data-VL input slots per external port (`DataDepth`).
pub const DATA_DEPTH: usize = 2;
/// Largest VL15 packet an input slot holds (LRH..ICRC).
pub const VL15_SLOT_BYTES: usize = 288;
/// Largest data packet an input slot holds (`DataSlotBytes`).
pub const DATA_SLOT_BYTES: usize = 4224;
/// LFT entries of the model (`LftDepth`).
pub const LFT_DEPTH: usize = vl15_bindings::SWITCH_LFT_DEPTH as usize;

/// PortState encodings (ibspec §8).
pub mod ps {
    pub const DOWN: u8 = 1;
    pub const INIT: u8 = 2;
    pub const ARMED: u8 = 3;
    pub const ACTIVE: u8 = 4;
}

/// Port 0's P_Key table as reset leaves it (docs/fabric.md: entry 0 =
/// 0xFFFF, the rest invalid); nothing here writes it.
pub const PORT0_PKEYS: [u16; 1] = [0xFFFF];

/// Counter indices: the register map's, in [`crate::model::regmap::swreg::ctr`].
pub use crate::model::regmap::swreg::ctr;

/// A counter bank: an external port's, port 0's SMI bank or port 0's GMP bank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bank {
    Ext(u8),
    Port0,
    Gmp,
}

impl Bank {
    /// Register address of counter `c` of this bank.
    pub fn addr(self, c: u8) -> u16 {
        match self {
            Bank::Ext(p) => swreg::ctr(p, c),
            Bank::Port0 => swreg::ctr(0, c),
            Bank::Gmp => swreg::ctr0g(c),
        }
    }
    /// Counters this bank has.
    pub fn counters(self) -> u8 {
        match self {
            Bank::Ext(_) => 16,
            Bank::Port0 => 16,
            Bank::Gmp => 10,
        }
    }
    pub fn name(self, c: u8) -> String {
        match self {
            Bank::Ext(p) => format!("port {p} {}", ctr::EXT_NAMES[usize::from(c & 15)]),
            Bank::Port0 => format!("port 0 {}", ctr::P0_NAMES[usize::from(c & 15)]),
            Bank::Gmp => format!(
                "GMP {}",
                ctr::G_NAMES.get(usize::from(c)).copied().unwrap_or("?")
            ),
        }
    }
}

/// The queue a predicted packet is ordered in: packets of one key leave in
/// the order they were predicted. External inputs keep their VL15 and data
/// buffers apart (VL15 overtakes data); what the send engine builds is
/// ordered per ingress port for forwards and in request order for SMA
/// responses (the send engine's sources are round-robin, so forwards and
/// responses may interleave either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lane {
    Vl15,
    Data,
    Fwd,
    Sma,
    Sm,
    Trap,
    GmpTx,
}

/// Where a predicted packet leaves the switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Out {
    /// On external port `port`'s wire, LRH..VCRC. `sq`: built by the
    /// port-0 send engine, whose PSN is the switch's own packet counter
    /// (the bytes carry PSN 0; the scoreboard takes the PSN it sees, checks
    /// it is new, and recomputes the CRCs before comparing).
    Wire { port: u8, bytes: Vec<u8>, sq: bool },
    /// To the port-0 SMA interface (`sma_rx_*`).
    Sma { mad: Mad, meta: SmiMeta },
    /// To the port-0 SM interface (`sm_rx_*`).
    Sm { mad: Mad, meta: SmiMeta },
    /// To the port-0 GMP receive path (`gmp_rx_*`): LRH..VCRC as received,
    /// `bad` = `gmp_rx_tuser` (the GSI checks said discard).
    Gmp { bytes: Vec<u8>, bad: bool },
}

/// What the model says happens to one packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prediction {
    pub outs: Vec<Out>,
    /// Counter increments (bank, counter, amount).
    pub ctrs: Vec<(Bank, u8, u32)>,
    /// The drop counter that disposed of the packet, if it was dropped.
    pub drop: Option<(Bank, u8)>,
    /// The input buffer the packet is committed to (and holds a slot of
    /// until it has left): None for packets the link layer rejects or that
    /// never fit a slot.
    pub slot: Option<Lane>,
}

impl Prediction {
    fn add(&mut self, b: Bank, c: u8, n: u32) {
        self.ctrs.push((b, c, n));
    }
    fn dropped(&mut self, b: Bank, c: u8) {
        self.add(b, c, 1);
        self.drop = Some((b, c));
    }
}

/// The switch state the model routes with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchState {
    /// Runtime port count N (NUM_PORTS).
    pub nports: u8,
    pub port0_lid: u16,
    /// LFT entries; 0xFF = no route.
    pub lft: Vec<u8>,
    pub lft_top: u16,
    /// PortState of ports 0..=N (port 0 is always Active).
    pub state: Vec<u8>,
    pub master_sm_lid: u16,
    pub master_sm_sl: u8,
}

impl SwitchState {
    /// The state after reset with every link up: LID 0, LFT empty, top 0,
    /// external ports Init.
    pub fn after_reset(nports: u8) -> Self {
        let mut state = vec![ps::INIT; usize::from(nports) + 1];
        state[0] = ps::ACTIVE;
        SwitchState {
            nports,
            port0_lid: 0,
            lft: vec![0xFF; LFT_DEPTH],
            lft_top: 0,
            state,
            master_sm_lid: 0,
            master_sm_sl: 0,
        }
    }
    fn st(&self, p: u8) -> u8 {
        if p > self.nports {
            ps::DOWN
        } else {
            self.state[usize::from(p)]
        }
    }
}

/// What the LFT says for a DLID (docs/fabric.md forwarding rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LftRoute {
    NoRoute,
    Port(u8),
}

/// The reference model of the switch datapath.
#[derive(Clone, Debug)]
pub struct SwitchModel {
    pub s: SwitchState,
}

fn be16(b: &[u8], o: usize) -> u16 {
    u16::from_be_bytes([b[o], b[o + 1]])
}

/// To the SM (1) or the SMA (0): responses, traps and SMInfo Get/Set go to
/// the SM (ibspec §6 / docs/arch.md `to_sm`).
pub fn to_sm(m: &Mad) -> bool {
    mad::smi_to_sm(mad::method(m), mad::attr_id(m))
}

/// An SMP built by the switch's send engine (docs/arch.md smi_sq headers,
/// docs/fabric.md: SL of the received SMP, P_Key 0xFFFF, QP 0, Q_Key 0),
/// PSN 0 (the scoreboard substitutes the switch's counter).
pub fn sq_packet(sl: u8, dlid: u16, slid: u16, m: &Mad) -> Vec<u8> {
    Packet::new(
        Lrh::local(VL15, sl, dlid, slid),
        Bth::ud_send(QP0, 0),
        Deth::new(0, QP0),
        *m,
    )
    .to_bytes()
}

/// Byte offset of the BTH PSN in a packet without GRH.
pub const PSN_OFFSET: usize = LRH_BYTES + 9;

/// `bytes` (an SMP from the send engine) with PSN `psn` and CRCs redone.
pub fn with_psn(bytes: &[u8], psn: u32) -> Vec<u8> {
    let mut v = bytes[..bytes.len() - ICRC_BYTES - VCRC_BYTES].to_vec();
    v[PSN_OFFSET..PSN_OFFSET + 3].copy_from_slice(&psn.to_be_bytes()[1..]);
    crc::append_crcs(&mut v);
    v
}

impl SwitchModel {
    pub fn new(s: SwitchState) -> Self {
        SwitchModel { s }
    }

    fn lft(&self, dlid: u16) -> LftRoute {
        if dlid == 0 || dlid >= MULTICAST_LID_BASE {
            return LftRoute::NoRoute;
        }
        if dlid > self.s.lft_top || usize::from(dlid) >= LFT_DEPTH {
            return LftRoute::NoRoute;
        }
        let e = self.s.lft[usize::from(dlid)];
        if e == 0xFF || e > self.s.nports {
            LftRoute::NoRoute
        } else {
            LftRoute::Port(e)
        }
    }

    fn tx(&self, pr: &mut Prediction, q: u8, bytes: Vec<u8>, sq: bool) {
        let words = u32::from(be16(&bytes, 4) & 0x7FF);
        let vl15 = bytes[0] >> 4 == VL15;
        pr.add(
            Bank::Ext(q),
            if vl15 {
                ctr::TX_VL15_PKTS
            } else {
                ctr::TX_DATA_PKTS
            },
            1,
        );
        pr.add(Bank::Ext(q), ctr::TX_WORDS, words);
        pr.outs.push(Out::Wire { port: q, bytes, sq });
    }

    /// A packet (LRH..VCRC, as on the wire) arriving whole on external port
    /// `p` (1..=N) while its input buffer has a free slot.
    pub fn ingress(&self, p: u8, w: &[u8]) -> Prediction {
        let mut pr = Prediction::default();
        let me = Bank::Ext(p);
        pr.add(me, ctr::RX_PKTS, 1);
        // Link checks (ib_link_rx precedence: length > LVer > LNH > VCRC).
        let n = w.len();
        let pkt_len = if n >= 6 { be16(w, 4) & 0x7FF } else { 0 };
        if n < LRH_BYTES || n != usize::from(pkt_len) * 4 + VCRC_BYTES || pkt_len < 6 {
            pr.dropped(me, ctr::RX_LEN_ERR);
            return pr;
        }
        if w[0] & 0x0F != 0 {
            pr.dropped(me, ctr::RX_LVER_ERR);
            return pr;
        }
        let lnh = w[1] & 3;
        if lnh != LNH_IBA_LOCAL && lnh != LNH_IBA_GLOBAL {
            pr.dropped(me, ctr::RX_LNH_ERR);
            return pr;
        }
        if crc::vcrc(&w[..n - 2]) != crc::vcrc_from_wire([w[n - 2], w[n - 1]]) {
            pr.dropped(me, ctr::RX_VCRC_ERR);
            return pr;
        }
        let words = u32::from(pkt_len);
        pr.add(me, ctr::RX_WORDS, words);
        let vl15 = w[0] >> 4 == VL15;
        let body = n - VCRC_BYTES;
        if vl15 && body > VL15_SLOT_BYTES {
            pr.dropped(me, ctr::VL15_DROPPED);
            return pr;
        }
        if !vl15 && body > DATA_SLOT_BYTES {
            pr.dropped(me, ctr::DATA_DROPPED);
            return pr;
        }
        pr.slot = Some(if vl15 { Lane::Vl15 } else { Lane::Data });
        let dlid = be16(w, 2);
        let lid = self.s.port0_lid;
        let ours = lid != 0 && dlid == lid;
        if vl15 {
            let egress = if dlid == PERMISSIVE_LID || ours {
                0
            } else {
                match self.lft(dlid) {
                    LftRoute::NoRoute => {
                        pr.dropped(me, ctr::NO_ROUTE);
                        return pr;
                    }
                    LftRoute::Port(e) => e,
                }
            };
            if egress == p {
                pr.dropped(me, ctr::LOOP_DROP);
                return pr;
            }
            if self.s.st(egress) == ps::DOWN {
                pr.dropped(me, ctr::STATE_DROP);
                return pr;
            }
            pr.add(me, ctr::FWD_PKTS, 1);
            if egress == 0 {
                self.smi_rx(&mut pr, p, w);
            } else {
                self.tx(&mut pr, egress, w.to_vec(), false);
            }
            return pr;
        }
        // Data VLs: by LID to port 0's GMP path, else by the LFT (LFT 0 is
        // no route for data); input and egress must be Active.
        let egress = if ours {
            0
        } else {
            match self.lft(dlid) {
                LftRoute::Port(e) if e != 0 => e,
                _ => {
                    pr.dropped(me, ctr::NO_ROUTE);
                    return pr;
                }
            }
        };
        if egress == p {
            pr.dropped(me, ctr::LOOP_DROP);
            return pr;
        }
        if self.s.st(p) != ps::ACTIVE || self.s.st(egress) != ps::ACTIVE {
            pr.dropped(me, ctr::STATE_DROP);
            return pr;
        }
        pr.add(me, ctr::FWD_PKTS, 1);
        if egress == 0 {
            self.gmp_rx(&mut pr, w);
        } else {
            self.tx(&mut pr, egress, w.to_vec(), false);
        }
        pr
    }

    /// A good packet that finds every slot of its input buffer (VL15 or
    /// data) full: it passed the link checks and is dropped whole (ibspec
    /// §11 for VL15; the data VLs of this model have no credits either,
    /// docs/fabric.md).
    pub fn buffer_full(&self, p: u8, w: &[u8]) -> Prediction {
        let mut pr = Prediction::default();
        pr.add(Bank::Ext(p), ctr::RX_PKTS, 1);
        pr.add(Bank::Ext(p), ctr::RX_WORDS, u32::from(be16(w, 4) & 0x7FF));
        let c = if w[0] >> 4 == VL15 {
            ctr::VL15_DROPPED
        } else {
            ctr::DATA_DROPPED
        };
        pr.dropped(Bank::Ext(p), c);
        pr
    }

    /// Port 0's GMP receive path: the ibspec §6 GSI checks in the RTL's
    /// documented order, ICRC > DestQP 0 or bad GMP header > P_Key (port
    /// 0's table, [`PORT0_PKEYS`]) > Q_Key > good GMP.
    fn gmp_rx(&self, pr: &mut Prediction, w: &[u8]) {
        let n = w.len();
        let pkt_len = be16(w, 4) & 0x7FF;
        pr.add(Bank::Gmp, ctr::G_RX_PKTS, 1);
        pr.add(Bank::Gmp, ctr::G_RX_WORDS, u32::from(pkt_len));
        let i = n - VCRC_BYTES - ICRC_BYTES;
        let icrc_ok = w[1] & 3 == LNH_IBA_LOCAL
            && crc::icrc(&w[..i]) == crc::icrc_from_wire([w[i], w[i + 1], w[i + 2], w[i + 3]]);
        let bad;
        if !icrc_ok {
            // (LNH 3 packets are not generated: their ICRC masks differ.)
            pr.dropped(Bank::Gmp, ctr::G_ICRC_ERR);
            bad = true;
        } else {
            let dqp = u32::from_be_bytes([0, w[13], w[14], w[15]]);
            let m = &w[MAD_OFFSET.min(n)..];
            let hdr_ok = w[8] == OPCODE_UD_SEND_ONLY
                && w[9] & 0x3F == 0
                && pkt_len == SMP_PKT_LEN
                && m.len() > 1
                && m[0] == BASE_VERSION
                && m[1] != CLASS_SUBN_LID
                && m[1] != CLASS_SUBN_DR;
            if dqp == QP0 || (dqp == QP1 && !hdr_ok) {
                pr.dropped(Bank::Gmp, ctr::G_BAD_HDR);
                bad = true;
            } else if dqp == QP1 && !super::pkey_match(&PORT0_PKEYS, be16(w, 10)) {
                pr.dropped(Bank::Gmp, ctr::G_PKEY_VIOL);
                bad = true;
            } else if dqp == QP1 && u32::from_be_bytes([w[20], w[21], w[22], w[23]]) != QP1_Q_KEY {
                pr.dropped(Bank::Gmp, ctr::G_QKEY_VIOL);
                bad = true;
            } else {
                if dqp == QP1 {
                    pr.add(Bank::Gmp, ctr::G_GMPS, 1);
                }
                bad = false;
            }
        }
        pr.outs.push(Out::Gmp {
            bytes: w.to_vec(),
            bad,
        });
    }

    /// Port 0's SMI receive side: a VL15 packet from external port `p`.
    fn smi_rx(&self, pr: &mut Prediction, p: u8, w: &[u8]) {
        let b0 = Bank::Port0;
        let n = w.len();
        let pkt_len = be16(w, 4) & 0x7FF;
        let lnh = w[1] & 3;
        if self.s.st(p) == ps::DOWN {
            pr.dropped(b0, ctr::P0_PORT_DOWN);
            return;
        }
        if lnh == LNH_IBA_LOCAL && pkt_len == SMP_PKT_LEN {
            let i = n - VCRC_BYTES - ICRC_BYTES;
            if crc::icrc(&w[..i]) != crc::icrc_from_wire([w[i], w[i + 1], w[i + 2], w[i + 3]]) {
                pr.dropped(b0, ctr::P0_ICRC_ERR);
                return;
            }
        }
        let hdr_ok = lnh == LNH_IBA_LOCAL
            && pkt_len == SMP_PKT_LEN
            && w[8] == OPCODE_UD_SEND_ONLY
            && w[9] & 0x0F == 0
            && w[13..16] == [0, 0, 0]
            && w[MAD_OFFSET] == BASE_VERSION
            && (w[MAD_OFFSET + 1] == CLASS_SUBN_LID || w[MAD_OFFSET + 1] == CLASS_SUBN_DR);
        if !hdr_ok {
            pr.dropped(b0, ctr::P0_BAD_HDR);
            return;
        }
        let dlid = be16(w, 2);
        let slid = be16(w, 6);
        let lid = self.s.port0_lid;
        let class = w[MAD_OFFSET + 1];
        let lid_ok = if class == CLASS_SUBN_LID {
            lid != 0 && dlid == lid && slid != PERMISSIVE_LID
        } else {
            dlid == PERMISSIVE_LID || (lid != 0 && dlid == lid)
        };
        if !lid_ok {
            pr.dropped(b0, ctr::P0_LID_ERR);
            return;
        }
        let mut m: Mad = [0; 256];
        m.copy_from_slice(&w[MAD_OFFSET..MAD_OFFSET + MAD_BYTES]);
        let sl = w[1] >> 4;
        let meta = SmiMeta {
            slid,
            dlid,
            sl,
            port: p,
            mgmt_class: class,
            hop_ptr: 0,
            hop_cnt: 0,
            // the M_Key check passes every SMP while the port M_Key is 0 (reset;
            // the models hold no M_Key state: the soaks never set one)
            mkey_viol: false,
            mkey_mask: false,
        };
        if class == CLASS_SUBN_LID {
            self.deliver(pr, m, meta);
        } else {
            self.dr_rx(pr, p, m, meta);
        }
    }

    fn deliver(&self, pr: &mut Prediction, m: Mad, meta: SmiMeta) {
        if to_sm(&m) {
            pr.add(Bank::Port0, ctr::P0_TO_SM, 1);
            pr.outs.push(Out::Sm { mad: m, meta });
        } else {
            pr.add(Bank::Port0, ctr::P0_TO_SMA, 1);
            pr.outs.push(Out::Sma { mad: m, meta });
        }
    }

    /// Directed route at the switch (ibspec §5 with is_switch = 1, P = the
    /// ingress port, N = NUM_PORTS, and the rows docs/fabric.md adds where
    /// the IBA spec hands over to a LID-routed segment).
    fn dr_rx(&self, pr: &mut Prediction, p: u8, mut m: Mad, mut meta: SmiMeta) {
        let b0 = Bank::Port0;
        let n = self.s.nports;
        let d = be16(&m, 4) & SMP_DIRECTION != 0;
        let hc = m[7];
        let mut hp = m[6];
        let dr_slid = be16(&m, mad::off::DR_SLID);
        let dr_dlid = be16(&m, mad::off::DR_DLID);
        let ip = |m: &Mad, i: u8| m[mad::off::INITIAL_PATH + usize::from(i & 63)];
        let rp = |m: &Mad, i: u8| m[mad::off::RETURN_PATH + usize::from(i & 63)];
        if hc >= SMP_MAX_PATH_HOPS {
            pr.dropped(b0, ctr::P0_DR_DISCARD);
            return;
        }
        let lid_routed = meta.dlid != PERMISSIVE_LID;
        let sl = meta.sl;
        if lid_routed && !d && hc != 0 && hp == 0 {
            // Start of the DR part after a LID-routed head (C14-9:1).
            pr.add(b0, ctr::P0_DR_FORWARDED, 1);
            m[6] = 1;
            let e = ip(&m, 1);
            self.sq_path(pr, sl, &m, e);
            return;
        }
        if lid_routed && d && hc != 0 && hp == hc + 1 {
            // The return enters the DR part from the tail (C14-13:1).
            pr.add(b0, ctr::P0_DR_FORWARDED, 1);
            m[6] = hc;
            let e = rp(&m, hc);
            self.sq_path(pr, sl, &m, e);
            return;
        }
        // Receive rules (smi_handle_dr_smp_recv, is_switch = 1).
        let accept = if !d {
            if hc != 0 && hp == 0 {
                false
            } else if hp != 0 && hp < hc {
                m[mad::off::RETURN_PATH + usize::from(hp)] = p;
                ip(&m, hp + 1) <= n
            } else if hp == hc {
                if hc != 0 {
                    m[mad::off::RETURN_PATH + usize::from(hp)] = p;
                }
                true
            } else {
                hp == hc + 1
            }
        } else if hc != 0 && hp == hc + 1 {
            hp -= 1;
            rp(&m, hp) == p
        } else if (2..=hc).contains(&hp) {
            rp(&m, hp - 1) <= n
        } else if hp == 1 {
            if dr_slid == PERMISSIVE_LID {
                hp = 0;
            }
            true
        } else {
            hp == 0
        };
        if !accept {
            pr.dropped(b0, ctr::P0_DR_DISCARD);
            return;
        }
        m[6] = hp;
        // Disposition (smi_check_forward_dr_smp) and what follows.
        if !d {
            if hp != 0 && hp < hc {
                // FORWARD out IP[hp+1], send rule C14-9:2 (hp++).
                pr.add(b0, ctr::P0_DR_FORWARDED, 1);
                m[6] = hp + 1;
                let e = ip(&m, hp + 1);
                self.sq_path(pr, sl, &m, e);
                return;
            }
            if hp == hc && dr_dlid != PERMISSIVE_LID {
                // End of the DR part, a LID-routed tail (C14-9:3).
                pr.add(b0, ctr::P0_DR_FORWARDED, 1);
                m[6] = hc + 1;
                self.sq_lft(pr, sl, dr_dlid, self.s.port0_lid, &m);
                return;
            }
            // SEND: hp = hc → hc+1, or already hc+1: for the local SMA/SM.
            m[6] = hc + 1;
        } else {
            if (2..=hc).contains(&hp) {
                // FORWARD out RP[hp−1], send rule C14-13:2 (hp−−).
                pr.add(b0, ctr::P0_DR_FORWARDED, 1);
                m[6] = hp - 1;
                let e = rp(&m, hp - 1);
                self.sq_path(pr, sl, &m, e);
                return;
            }
            if hp == 1 {
                // The return leaves the DR part to a LID-routed head (C14-13:3).
                pr.add(b0, ctr::P0_DR_FORWARDED, 1);
                m[6] = 0;
                self.sq_lft(pr, sl, dr_slid, self.s.port0_lid, &m);
                return;
            }
        }
        meta.hop_ptr = m[6];
        meta.hop_cnt = hc;
        self.deliver(pr, m, meta);
    }

    /// The send engine puts an SMP routed by a path entry into port 0's
    /// input buffer, or discards it (egress 0, > N or Down).
    fn sq_path(&self, pr: &mut Prediction, sl: u8, m: &Mad, egress: u8) {
        if egress == 0 || egress > self.s.nports || self.s.st(egress) == ps::DOWN {
            pr.dropped(Bank::Port0, ctr::P0_SQ_DR_DISCARD);
            return;
        }
        pr.add(Bank::Port0, ctr::P0_SQ_PKTS, 1);
        self.tx(
            pr,
            egress,
            sq_packet(sl, PERMISSIVE_LID, PERMISSIVE_LID, m),
            true,
        );
    }

    /// The send engine puts an SMP routed by the LFT into port 0's input
    /// buffer; port 0's route decision may drop it.
    fn sq_lft(&self, pr: &mut Prediction, sl: u8, dlid: u16, slid: u16, m: &Mad) {
        let b0 = Bank::Port0;
        pr.add(b0, ctr::P0_SQ_PKTS, 1);
        match self.lft(dlid) {
            LftRoute::NoRoute => pr.dropped(b0, ctr::P0_NO_ROUTE),
            LftRoute::Port(0) => pr.dropped(b0, ctr::P0_LOOP_DROP),
            LftRoute::Port(e) if self.s.st(e) == ps::DOWN => pr.dropped(b0, ctr::P0_STATE_DROP),
            LftRoute::Port(e) => self.tx(pr, e, sq_packet(sl, dlid, slid, m), true),
        }
    }

    /// A response the SMA hands to `sma_tx_*` with the request's meta
    /// (slid, dlid, sl echoed): LRH DLID := request SLID, SLID := request
    /// DLID. A DR response whose request came to the permissive DLID is in
    /// the DR part: send rules, out by its path; anything else by the LFT.
    pub fn sma_send(&self, resp: &Mad, meta: &SmiMeta) -> Prediction {
        self.sq_send(
            resp,
            meta.slid,
            meta.dlid,
            meta.sl,
            meta.dlid == PERMISSIVE_LID,
        )
    }

    /// A request the switch's SM hands to `sm_tx_*` with its address handle
    /// (DLID, SL): SLID := the port-0 LID, or 0xFFFF when the DLID is
    /// 0xFFFF (the DR part starts here) or the LID is 0.
    pub fn sm_send(&self, m: &Mad, dlid: u16, sl: u8) -> Prediction {
        let slid = if dlid == PERMISSIVE_LID || self.s.port0_lid == 0 {
            PERMISSIVE_LID
        } else {
            self.s.port0_lid
        };
        self.sq_send(m, dlid, slid, sl, dlid == PERMISSIVE_LID)
    }

    /// A packet (LRH..ICRC) port 0's host sends on `gmp_tx_*`: GMPs use a
    /// data VL and fit 288 bytes, else it is dropped (TxDrop); then it is
    /// input 0's data side: the LFT (LFT 0 is port 0 itself: LoopDrop),
    /// egress Active; out unchanged with a VCRC.
    pub fn gmp_send(&self, w: &[u8]) -> Prediction {
        let mut pr = Prediction::default();
        let b0 = Bank::Port0;
        if w[0] >> 4 == VL15 || w.len() > VL15_SLOT_BYTES {
            pr.dropped(Bank::Gmp, ctr::G_TX_DROP);
            return pr;
        }
        pr.add(Bank::Gmp, ctr::G_TX_PKTS, 1);
        pr.add(Bank::Gmp, ctr::G_TX_WORDS, u32::from(be16(w, 4) & 0x7FF));
        match self.lft(be16(w, 2)) {
            LftRoute::NoRoute => pr.dropped(b0, ctr::P0_NO_ROUTE),
            LftRoute::Port(0) => pr.dropped(b0, ctr::P0_LOOP_DROP),
            LftRoute::Port(e) if self.s.st(e) != ps::ACTIVE => pr.dropped(b0, ctr::P0_STATE_DROP),
            LftRoute::Port(e) => {
                let mut v = w.to_vec();
                crc::append_vcrc(&mut v);
                self.tx(&mut pr, e, v, false);
            }
        }
        pr
    }

    /// A trap on `trap_tx_*`: DLID := MasterSMLID, SL := MasterSMSL,
    /// SLID := the port-0 LID (0xFFFF if it is 0), by the LFT.
    pub fn trap_send(&self, m: &Mad) -> Prediction {
        let slid = if self.s.port0_lid == 0 {
            PERMISSIVE_LID
        } else {
            self.s.port0_lid
        };
        self.sq_send(m, self.s.master_sm_lid, slid, self.s.master_sm_sl, false)
    }

    /// The send engine: class 0x01 by the LFT; class 0x81 in the DR part
    /// (`dr_part`: the LRH DLID/SLID choice says so) by the send rules and
    /// the path, else as is by the LFT; the DR part must agree with
    /// (D ? DrDLID : DrSLID) = 0xFFFF, else it is discarded.
    fn sq_send(&self, m: &Mad, dlid: u16, slid: u16, sl: u8, dr_part: bool) -> Prediction {
        let mut pr = Prediction::default();
        let b0 = Bank::Port0;
        if mad::class(m) != CLASS_SUBN_DR {
            self.sq_lft(&mut pr, sl, dlid, slid, m);
            return pr;
        }
        let mut m = *m;
        let d = be16(&m, 4) & SMP_DIRECTION != 0;
        let hc = m[7];
        let hp = m[6];
        let cond = if d {
            be16(&m, mad::off::DR_DLID)
        } else {
            be16(&m, mad::off::DR_SLID)
        } != PERMISSIVE_LID;
        if hc >= SMP_MAX_PATH_HOPS || cond == dr_part {
            pr.dropped(b0, ctr::P0_SQ_DR_DISCARD);
            return pr;
        }
        if !dr_part {
            self.sq_lft(&mut pr, sl, dlid, slid, &m);
            return pr;
        }
        // Send rules (smi_handle_dr_smp_send, is_switch = 1; P is the
        // egress the new hop pointer names, so the port checks hold).
        let new_hp = if !d {
            if (hc != 0 && hp == 0) || (hp != 0 && hp < hc) || hp == hc {
                Some(hp + 1)
            } else if hp == hc + 1 {
                Some(hp)
            } else {
                None
            }
        } else if (hc != 0 && hp == hc + 1) || (2..=hc).contains(&hp) || hp == 1 {
            Some(hp - 1)
        } else if hp == 0 {
            Some(0)
        } else {
            None
        };
        let Some(hp) = new_hp else {
            pr.dropped(b0, ctr::P0_SQ_DR_DISCARD);
            return pr;
        };
        m[6] = hp;
        let local = if d { hp == 0 } else { hc == 0 || hp == hc + 1 };
        if local {
            pr.dropped(b0, ctr::P0_SQ_LOCAL);
            return pr;
        }
        let e = if d {
            m[mad::off::RETURN_PATH + usize::from(hp & 63)]
        } else {
            m[mad::off::INITIAL_PATH + usize::from(hp & 63)]
        };
        self.sq_path(&mut pr, sl, &m, e);
        pr
    }
}
