//! Reference model, scoreboard and fault generator of the switch datapath
//! (`ib_switch_top`, docs/fabric.md), written from ibspec §1–§7 and §11 and
//! the decisions docs/fabric.md documents (drop rules, counters, the
//! directed-route rows), not from the RTL.
//!
//! * [`SwitchModel`]: packet level. Given a packet on input port p and the
//!   switch state (LFT, LinearFDBTop, PortState, port-0 LID) it predicts
//!   where the packet goes (an external output, the port-0 SMA or SM
//!   interface, the port-0 GMP receive path, or a drop), the bytes that
//!   leave, and the counter changes. Input-buffer occupancy is the
//!   scoreboard's business (it keeps the buffers from overflowing except in
//!   the directed overflow tests, where [`SwitchModel::buffer_full`] says
//!   what a full buffer does). [`SwitchModel::sma_send`], `sm_send`,
//!   `trap_send` and `gmp_send` predict what port 0's host sends.
//! * [`Bench`]: drives the Verilated 8-port switch (at DataW 64 or 128,
//!   the widths the fabric's models are built at) and checks it against the
//!   model transaction by transaction, byte for byte, in order per (input,
//!   output), and every counter through the register interface.
//! * [`FaultClass`] and [`gen_packet`]: a seeded generator of good packets
//!   and of every switch fault class with its expected disposition.
//! * [`soak`]: the library entry point behind `vl15 soak --device switch`.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use vl15_bindings::dev::{Dev, DevIn, DevKind, DevOut, PortIn, PortOut};

use crate::crc;
use crate::device::SmiMeta;
use crate::mad::{self, Mad};
use crate::packet::consts::*;
use crate::packet::{Bth, Deth, Lrh, Packet};
use crate::regmap::swreg;
use crate::stream::{beat_bytes, to_beats, Beat, Gate, Pattern, Rng, Sink, Source};

/// VL15 input slots per external port (`Vl15Depth`, docs/fabric.md).
pub const VL15_DEPTH: usize = 3;
/// Data-VL input slots per external port (`DataDepth`).
pub const DATA_DEPTH: usize = 2;
/// Largest VL15 packet an input slot holds (LRH..ICRC).
pub const VL15_SLOT_BYTES: usize = 288;
/// Largest data packet an input slot holds (`DataSlotBytes`).
pub const DATA_SLOT_BYTES: usize = 4224;
/// LFT entries of the model (`LftDepth`).
pub const LFT_DEPTH: usize = 4096;

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

/// Counter indices: the register map's, in [`crate::regmap::swreg::ctr`].
pub use crate::regmap::swreg::ctr;

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
    let method = m[mad::off::METHOD];
    method & METHOD_RESP_BIT != 0
        || method == METHOD_TRAP
        || (mad::attr_id(m) == ATTR_SM_INFO && (method == METHOD_GET || method == METHOD_SET))
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

// ===========================================================================
// The bench's switch set-up and the seeded packet generator
// ===========================================================================

/// External ports of the bench's switch (the 8-port binding).
pub const NPORTS: u8 = 8;
/// The switch's port-0 LID.
pub const PORT0_LID: u16 = 0x0001;
/// LinearFDBTop: LIDs above it have LFT entries that must not be used.
pub const LFT_TOP: u16 = 0x4F;
/// MasterSMLID (routed to port 3) and MasterSMSL the bench programs.
pub const MASTER_SM_LID: u16 = 0x12;
pub const MASTER_SM_SL: u8 = 5;
/// Ports 1..=6 are Active, 7 stays Init, 8 is written Down (link up).
pub const INIT_PORT: u8 = 7;
pub const DOWN_PORT: u8 = 8;

/// The LFT the bench programs: 0x10..=0x3F → port 1 + lid % 8; 0x40..=0x47
/// 0xFF; 0x48..=0x4B → 9..12 (> N); 0x4C, 0x4D → 0 (port 0); LID 1 → 0;
/// 0x50..=0x57 → a real port, but above LinearFDBTop. Everything else is
/// never written (reads 0xFF).
pub fn bench_lft() -> Vec<(u16, u8)> {
    let mut v = vec![(PORT0_LID, 0)];
    for lid in 0x10..=0x3Fu16 {
        v.push((lid, 1 + (lid % 8) as u8));
    }
    for lid in 0x40..=0x47u16 {
        v.push((lid, 0xFF));
    }
    for (i, lid) in (0x48..=0x4Bu16).enumerate() {
        v.push((lid, 9 + i as u8));
    }
    v.push((0x4C, 0));
    v.push((0x4D, 0));
    for lid in 0x50..=0x57u16 {
        v.push((lid, 1 + (lid % 6) as u8));
    }
    v
}

/// The bench's switch state after programming.
pub fn bench_state() -> SwitchState {
    let mut s = SwitchState::after_reset(NPORTS);
    s.port0_lid = PORT0_LID;
    s.lft_top = LFT_TOP;
    for (lid, e) in bench_lft() {
        s.lft[usize::from(lid)] = e;
    }
    for p in 1..=6 {
        s.state[p] = ps::ACTIVE;
    }
    s.state[usize::from(DOWN_PORT)] = ps::DOWN;
    s.master_sm_lid = MASTER_SM_LID;
    s.master_sm_sl = MASTER_SM_SL;
    s
}

/// A LID the bench's LFT routes to port `q` (1..=8).
pub fn lid_to(q: u8, rng: &mut Rng) -> u16 {
    0x10 + 8 * (rng.next_u64() % 6) as u16 + u16::from(q - 1)
}

/// The packet classes of the generator: good traffic, and every switch
/// fault with the disposition and counter the spec gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultClass {
    // Good traffic.
    /// LID-routed SMP (class 0x01) through the switch by the LFT.
    GoodLidSmp,
    /// LID-routed data packet (VL 0..7, any length) by the LFT.
    GoodData,
    /// Directed-route SMP passing through outbound (D = 0, FORWARD).
    GoodDrOut,
    /// Directed-route SMP passing through on its return (D = 1, FORWARD).
    GoodDrReturn,
    /// DR SMP whose path ends at the switch: to the SMA, answered.
    GoodDrToSma,
    /// LID-routed SMP to the port-0 LID: to the SMA, answered by the LFT.
    GoodLidToSma,
    /// DR GetResp ending at the switch: to the SM interface.
    GoodDrToSm,
    /// GMP to the port-0 LID on a data VL: to the GMP receive path.
    GoodGmp,
    /// The directed-route rows docs/fabric.md adds where a DR part meets a
    /// LID-routed segment: a DR part starting or re-entered at the switch
    /// (arriving LID-routed to the port-0 LID: out by the path), or ending
    /// at it with a real DrDLID/DrSLID (out by the LFT to that LID).
    GoodDrLidRows,
    /// Port 0's own sends: SM requests on `sm_tx` (DR from here, or
    /// LID-routed) and traps on `trap_tx` (to MasterSMLID).
    GoodSmSend,
    /// A GMP port 0's host sends on `gmp_tx` (its PMA answering).
    GoodGmpSend,
    // Faults.
    BadVcrc,
    /// Bad ICRC on a forwarded packet: a switch does not check the ICRC of
    /// what it forwards (ibspec §3: the ICRC is end to end; §11: transit
    /// discards are CRC = VCRC, LVer, length, DLID 0, VL): delivered unchanged.
    BadIcrcForwarded,
    /// Bad ICRC on an SMP for the switch itself: port-0 IcrcErr.
    BadIcrcSmi,
    /// Bad ICRC on a GMP to the switch LID: passed to the host flagged.
    BadIcrcGmp,
    /// GMP to the switch LID whose P_Key matches no port-0 table entry
    /// (limited members of the default partition, other partitions, the
    /// invalid 0x0000/0x8000): flagged, port-0 GMP PkeyViol.
    BadPkeyGmp,
    /// GMP to the switch LID with a Q_Key other than 0x80010000: flagged,
    /// port-0 GMP QkeyViol.
    BadQkeyGmp,
    LVer,
    Lnh,
    PktLen,
    Truncated,
    OversizedVl15,
    OversizedData,
    Opcode,
    BadSmpHdr,
    DlidNotOurs,
    NoRoute,
    Loop,
    HopCount,
    BadHopPtr,
    DrEgressRange,
    DownPort,
    /// Port 0's send path refuses: DR egress Down / 0 / > N, hop count 0
    /// (local), DrSLID not permissive in a DR part (SqDrDiscard, SqLocal);
    /// LID-routed to no route, to port 0 or to a Down port (port-0 NoRoute,
    /// LoopDrop, StateDrop).
    SendPathDiscard,
    /// `gmp_tx` refusals: VL15 or longer than 288 bytes (TxDrop), no route,
    /// to port 0 itself, to a port not Active.
    GmpSendDrop,
    // Directed (not produced by `gen_packet`; the bench runs them).
    Vl15Overflow,
    /// A data packet that finds both data slots of its input full.
    DataOverflow,
    LinkDown,
    /// An output's link falls with packets granted to it and waiting.
    EgressLinkDown,
    Reset,
}

impl FaultClass {
    pub const GOOD: [FaultClass; 11] = [
        FaultClass::GoodLidSmp,
        FaultClass::GoodData,
        FaultClass::GoodDrOut,
        FaultClass::GoodDrReturn,
        FaultClass::GoodDrToSma,
        FaultClass::GoodLidToSma,
        FaultClass::GoodDrToSm,
        FaultClass::GoodGmp,
        FaultClass::GoodDrLidRows,
        FaultClass::GoodSmSend,
        FaultClass::GoodGmpSend,
    ];
    pub const FAULTS: [FaultClass; 23] = [
        FaultClass::BadVcrc,
        FaultClass::BadIcrcForwarded,
        FaultClass::BadIcrcSmi,
        FaultClass::BadIcrcGmp,
        FaultClass::BadPkeyGmp,
        FaultClass::BadQkeyGmp,
        FaultClass::LVer,
        FaultClass::Lnh,
        FaultClass::PktLen,
        FaultClass::Truncated,
        FaultClass::OversizedVl15,
        FaultClass::OversizedData,
        FaultClass::Opcode,
        FaultClass::BadSmpHdr,
        FaultClass::DlidNotOurs,
        FaultClass::NoRoute,
        FaultClass::Loop,
        FaultClass::HopCount,
        FaultClass::BadHopPtr,
        FaultClass::DrEgressRange,
        FaultClass::DownPort,
        FaultClass::SendPathDiscard,
        FaultClass::GmpSendDrop,
    ];
    pub fn is_good(self) -> bool {
        Self::GOOD.contains(&self)
    }
    pub fn name(self) -> &'static str {
        match self {
            FaultClass::GoodLidSmp => "good_lid_smp",
            FaultClass::GoodData => "good_data",
            FaultClass::GoodDrOut => "good_dr_out",
            FaultClass::GoodDrReturn => "good_dr_return",
            FaultClass::GoodDrToSma => "good_dr_to_sma",
            FaultClass::GoodLidToSma => "good_lid_to_sma",
            FaultClass::GoodDrToSm => "good_dr_to_sm",
            FaultClass::GoodGmp => "good_gmp",
            FaultClass::GoodDrLidRows => "good_dr_lid_rows",
            FaultClass::GoodSmSend => "good_sm_send",
            FaultClass::GoodGmpSend => "good_gmp_send",
            FaultClass::BadVcrc => "bad_vcrc",
            FaultClass::BadIcrcForwarded => "bad_icrc_forwarded",
            FaultClass::BadIcrcSmi => "bad_icrc_smi",
            FaultClass::BadIcrcGmp => "bad_icrc_gmp",
            FaultClass::BadPkeyGmp => "bad_pkey_gmp",
            FaultClass::BadQkeyGmp => "bad_qkey_gmp",
            FaultClass::LVer => "lver",
            FaultClass::Lnh => "lnh",
            FaultClass::PktLen => "pktlen",
            FaultClass::Truncated => "truncated",
            FaultClass::OversizedVl15 => "oversized_vl15",
            FaultClass::OversizedData => "oversized_data",
            FaultClass::Opcode => "opcode",
            FaultClass::BadSmpHdr => "bad_smp_hdr",
            FaultClass::DlidNotOurs => "dlid_not_ours",
            FaultClass::NoRoute => "no_route",
            FaultClass::Loop => "loop",
            FaultClass::HopCount => "hop_count",
            FaultClass::BadHopPtr => "bad_hop_ptr",
            FaultClass::DrEgressRange => "dr_egress_range",
            FaultClass::DownPort => "down_port",
            FaultClass::SendPathDiscard => "send_path_discard",
            FaultClass::GmpSendDrop => "gmp_send_drop",
            FaultClass::Vl15Overflow => "vl15_overflow",
            FaultClass::DataOverflow => "data_overflow",
            FaultClass::LinkDown => "link_down",
            FaultClass::EgressLinkDown => "egress_link_down",
            FaultClass::Reset => "reset",
        }
    }
}

/// The disposition a generated packet must get, from the class definition
/// (written down apart from the model: the bench checks both agree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Leaves the switch (a wire, SMA, SM or the GMP path), no drop counter.
    Delivered,
    /// Disposed of and counted in this counter.
    Dropped(Bank, u8),
}

/// How port 0's host sends a MAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostSend {
    /// `sm_tx_*` with this address handle.
    Sm { dlid: u16, sl: u8 },
    /// `trap_tx_*`.
    Trap,
    /// `gmp_tx_*` (the bytes are LRH..VCRC; the VCRC is not sent).
    Gmp,
}

/// A generated packet: ingress port, wire bytes, the disposition it must
/// get. Port 0 with `host` set: a MAD the switch's host sends.
#[derive(Clone, Debug)]
pub struct GenPacket {
    pub class: FaultClass,
    pub port: u8,
    pub bytes: Vec<u8>,
    pub expect: Expect,
    pub host: Option<HostSend>,
}

fn pick<T: Copy>(rng: &mut Rng, v: &[T]) -> T {
    v[(rng.next_u64() % v.len() as u64) as usize]
}

fn range(rng: &mut Rng, lo: u64, hi: u64) -> u64 {
    lo + rng.next_u64() % (hi - lo + 1)
}

/// An Active port other than `not`.
fn active_other(rng: &mut Rng, not: u8) -> u8 {
    loop {
        let q = range(rng, 1, 6) as u8;
        if q != not {
            return q;
        }
    }
}

fn smp_wire(dlid: u16, slid: u16, m: &Mad, rng: &mut Rng) -> Vec<u8> {
    let psn = (rng.next_u64() & 0xFF_FFFF) as u32;
    let sl = (rng.next_u64() & 15) as u8;
    Packet::smp_bytes(VL15, sl, dlid, slid, psn, *m)
}

/// A data-VL packet with `payload` bytes after the DETH (LRH..VCRC).
fn data_wire(vl: u8, dlid: u16, slid: u16, dqp: u32, payload: usize, rng: &mut Rng) -> Vec<u8> {
    let pad = (4 - payload % 4) % 4;
    let body = LRH_BYTES + BTH_BYTES + DETH_BYTES + payload + pad + ICRC_BYTES;
    let mut lrh = Lrh::local(vl, (rng.next_u64() & 15) as u8, dlid, slid);
    lrh.pkt_len = (body / 4) as u16;
    let mut bth = Bth::ud_send(dqp, (rng.next_u64() & 0xFF_FFFF) as u32);
    bth.pad_cnt = pad as u8;
    let q_key = if dqp == QP1 { QP1_Q_KEY } else { 0x1234_5678 };
    let mut v = Vec::with_capacity(body + 2);
    v.extend_from_slice(&lrh.encode());
    v.extend_from_slice(&bth.encode());
    v.extend_from_slice(&Deth::new(q_key, (rng.next_u64() & 0xFF_FFFF) as u32).encode());
    for _ in 0..payload + pad {
        v.push(rng.next_u64() as u8);
    }
    crc::append_crcs(&mut v);
    v
}

fn random_mad(rng: &mut Rng, class: u8, method: u8, tid: u64) -> Mad {
    let attr = pick(
        rng,
        &[
            ATTR_NODE_INFO,
            ATTR_PORT_INFO,
            ATTR_NODE_DESC,
            ATTR_SWITCH_INFO,
        ],
    );
    let mut m = mad::request(class, method, attr, (rng.next_u64() & 0xFF) as u32, tid);
    for b in m[mad::off::DATA..mad::off::DATA + 64].iter_mut() {
        *b = rng.next_u64() as u8;
    }
    m
}

/// A DR SMP: hop count `hc`, hop pointer `hp`, direction `d`, random path
/// entries in 1..=N (the caller sets the ones that matter).
fn dr_mad(rng: &mut Rng, d: bool, hc: u8, hp: u8, method: u8, tid: u64) -> Mad {
    let mut m = random_mad(rng, CLASS_SUBN_DR, method, tid);
    if d {
        m[4] |= 0x80;
    }
    m[6] = hp;
    m[7] = hc;
    m[mad::off::DR_SLID..mad::off::DR_SLID + 4].fill(0xFF);
    for i in 1..64 {
        m[mad::off::INITIAL_PATH + i] = range(rng, 1, 8) as u8;
        m[mad::off::RETURN_PATH + i] = range(rng, 1, 8) as u8;
    }
    m
}

fn fix_vcrc(v: &mut Vec<u8>) {
    v.truncate(v.len() - VCRC_BYTES);
    crc::append_vcrc(v);
}

fn fix_crcs(v: &mut Vec<u8>) {
    v.truncate(v.len() - VCRC_BYTES - ICRC_BYTES);
    crc::append_crcs(v);
}

/// Generate one packet of `class` (not the directed classes), with its
/// ingress port and expected disposition. `tid` makes MADs distinct.
pub fn gen_packet(rng: &mut Rng, class: FaultClass, tid: u64) -> GenPacket {
    use FaultClass as F;
    if matches!(class, F::GoodSmSend | F::SendPathDiscard) {
        return gen_host(rng, class, tid);
    }
    if matches!(class, F::GoodGmpSend | F::GmpSendDrop) {
        return gen_gmp_send(rng, class, tid);
    }
    let e = |p: u8, c: u8| Expect::Dropped(Bank::Ext(p), c);
    let e0 = |c: u8| Expect::Dropped(Bank::Port0, c);
    // A port that carries VL15 traffic to the switch (Active or Init).
    let vl15_in = |rng: &mut Rng| range(rng, 1, 7) as u8;
    let fwd_smp = class == F::GoodLidSmp || (class == F::BadIcrcForwarded && rng.chance(60));
    let (port, bytes, expect) = match class {
        _ if fwd_smp => {
            let p = vl15_in(rng);
            let q = loop {
                let q = range(rng, 1, 7) as u8;
                if q != p {
                    break q;
                }
            };
            let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
            let mut v = smp_wire(lid_to(q, rng), lid_to(p, rng), &m, rng);
            if class == F::BadIcrcForwarded {
                v[284] ^= 0x5A;
                fix_vcrc(&mut v);
            }
            (p, v, Expect::Delivered)
        }
        F::GoodData | F::BadIcrcForwarded => {
            let p = range(rng, 1, 6) as u8;
            let q = active_other(rng, p);
            let len = if rng.chance(80) {
                range(rng, 0, 300)
            } else {
                range(rng, 300, 4100)
            } as usize;
            let mut v = data_wire(range(rng, 0, 7) as u8, lid_to(q, rng), 0x20, 2, len, rng);
            if class == F::BadIcrcForwarded {
                let i = v.len() - 6;
                v[i] ^= 0x01;
                fix_vcrc(&mut v);
            }
            (p, v, Expect::Delivered)
        }
        F::GoodDrOut => {
            let p = vl15_in(rng);
            let hc = range(rng, 2, 8) as u8;
            let hp = range(rng, 1, u64::from(hc) - 1) as u8;
            let mut m = dr_mad(rng, false, hc, hp, METHOD_GET, tid);
            m[mad::off::INITIAL_PATH + usize::from(hp) + 1] = range(rng, 1, 7) as u8;
            (
                p,
                smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng),
                Expect::Delivered,
            )
        }
        F::GoodDrReturn => {
            let p = vl15_in(rng);
            let hc = range(rng, 2, 8) as u8;
            let hp = range(rng, 2, u64::from(hc)) as u8;
            let mut m = dr_mad(rng, true, hc, hp, METHOD_GET_RESP, tid);
            m[mad::off::RETURN_PATH + usize::from(hp) - 1] = range(rng, 1, 7) as u8;
            (
                p,
                smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng),
                Expect::Delivered,
            )
        }
        F::GoodDrToSma | F::BadIcrcSmi | F::Opcode | F::BadSmpHdr => {
            let p = vl15_in(rng);
            let hc = range(rng, 1, 6) as u8;
            let m = dr_mad(rng, false, hc, hc, METHOD_GET, tid);
            let mut v = smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng);
            let expect = match class {
                F::BadIcrcSmi => {
                    v[285] ^= 0x80;
                    fix_vcrc(&mut v);
                    e0(ctr::P0_ICRC_ERR)
                }
                F::Opcode => {
                    v[8] = OPCODE_UD_SEND_ONLY_IMM;
                    fix_crcs(&mut v);
                    e0(ctr::P0_BAD_HDR)
                }
                F::BadSmpHdr => {
                    match rng.next_u64() % 6 {
                        0 => v[15] = 1,                           // DestQP 1 on VL15
                        1 => v[MAD_OFFSET] = 2,                   // BaseVersion 2
                        2 => v[MAD_OFFSET + 1] = CLASS_PERF,      // not an SMP class
                        3 => v[9] |= 1,                           // TVer 1
                        4 => v[1] = (v[1] & !3) | LNH_IBA_GLOBAL, // LNH 3 (GRH) on VL15
                        _ => {
                            // PktLen 40: a 128-byte "MAD", length consistent.
                            v.truncate(MAD_OFFSET + 128);
                            v[4] = 0;
                            v[5] = 40;
                            crc::append_crcs(&mut v);
                        }
                    }
                    fix_crcs(&mut v);
                    e0(ctr::P0_BAD_HDR)
                }
                _ => Expect::Delivered,
            };
            (p, v, expect)
        }
        F::GoodLidToSma => {
            let p = vl15_in(rng);
            let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
            let slid = lid_to(range(rng, 1, 7) as u8, rng);
            (p, smp_wire(PORT0_LID, slid, &m, rng), Expect::Delivered)
        }
        F::GoodDrLidRows => {
            let p = vl15_in(rng);
            let hc = range(rng, 1, 6) as u8;
            let q = range(rng, 1, 7) as u8;
            let slid = lid_to(range(rng, 1, 7) as u8, rng);
            let v = match rng.next_u64() % 4 {
                0 => {
                    // LID-routed head ends here: the DR part starts (C14-9:1).
                    let mut m = dr_mad(rng, false, hc, 0, METHOD_GET, tid);
                    m[mad::off::INITIAL_PATH + 1] = q;
                    m[mad::off::DR_SLID..mad::off::DR_SLID + 2]
                        .copy_from_slice(&slid.to_be_bytes());
                    smp_wire(PORT0_LID, slid, &m, rng)
                }
                1 => {
                    // The return re-enters the DR part from a LID-routed
                    // tail (C14-13:1).
                    let mut m = dr_mad(rng, true, hc, hc + 1, METHOD_GET_RESP, tid);
                    m[mad::off::RETURN_PATH + usize::from(hc)] = q;
                    m[mad::off::DR_DLID..mad::off::DR_DLID + 2]
                        .copy_from_slice(&slid.to_be_bytes());
                    smp_wire(PORT0_LID, slid, &m, rng)
                }
                2 => {
                    // The DR part ends here, a LID-routed tail to DrDLID (C14-9:3).
                    let mut m = dr_mad(rng, false, hc, hc, METHOD_GET, tid);
                    let dl = lid_to(q, rng);
                    m[mad::off::DR_DLID..mad::off::DR_DLID + 2].copy_from_slice(&dl.to_be_bytes());
                    smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng)
                }
                _ => {
                    // The return leaves the DR part to a LID-routed head at
                    // DrSLID (C14-13:3).
                    let mut m = dr_mad(rng, true, hc, 1, METHOD_GET_RESP, tid);
                    let sl = lid_to(q, rng);
                    m[mad::off::DR_SLID..mad::off::DR_SLID + 2].copy_from_slice(&sl.to_be_bytes());
                    smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng)
                }
            };
            (p, v, Expect::Delivered)
        }
        F::GoodDrToSm => {
            let p = vl15_in(rng);
            let hc = range(rng, 1, 6) as u8;
            let m = dr_mad(rng, true, hc, 1, METHOD_GET_RESP, tid);
            (
                p,
                smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng),
                Expect::Delivered,
            )
        }
        F::GoodGmp | F::BadIcrcGmp | F::BadPkeyGmp | F::BadQkeyGmp => {
            let p = range(rng, 1, 6) as u8;
            let mut m = random_mad(rng, CLASS_PERF, METHOD_GET, tid);
            m[2] = 1;
            let slid = lid_to(p, rng);
            let sl = (rng.next_u64() & 15) as u8;
            let psn = (rng.next_u64() & 0xFF_FFFF) as u32;
            let mut v = Packet::gmp(range(rng, 0, 7) as u8, sl, PORT0_LID, slid, psn, m);
            if class == F::BadIcrcGmp {
                v[286] ^= 0x10;
                fix_vcrc(&mut v);
                (p, v, Expect::Dropped(Bank::Gmp, ctr::G_ICRC_ERR))
            } else if class == F::BadPkeyGmp {
                // BTH.P_Key (wire bytes 10..12): another partition, full or
                // limited, or an invalid key (0x0000/0x8000). (A limited
                // member of the default partition matches the full 0xFFFF.)
                let pk = if rng.chance(67) {
                    range(rng, 1, 0x7FFE) as u16 | ((rng.next_u64() as u16) & 0x8000)
                } else {
                    (rng.next_u64() as u16) & 0x8000
                };
                v[10..12].copy_from_slice(&pk.to_be_bytes());
                fix_crcs(&mut v);
                (p, v, Expect::Dropped(Bank::Gmp, ctr::G_PKEY_VIOL))
            } else if class == F::BadQkeyGmp {
                let mut qk = rng.next_u64() as u32;
                if qk == QP1_Q_KEY {
                    qk ^= 1;
                }
                v[20..24].copy_from_slice(&qk.to_be_bytes());
                fix_crcs(&mut v);
                (p, v, Expect::Dropped(Bank::Gmp, ctr::G_QKEY_VIOL))
            } else {
                (p, v, Expect::Delivered)
            }
        }
        F::BadVcrc | F::LVer | F::Lnh | F::PktLen | F::Truncated => {
            let p = range(rng, 1, 8) as u8;
            let mut v = if rng.chance(50) {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                smp_wire(lid_to(active_other(rng, p), rng), 0x20, &m, rng)
            } else {
                let len = range(rng, 0, 600) as usize;
                data_wire(0, lid_to(active_other(rng, p), rng), 0x20, 2, len, rng)
            };
            let n = v.len();
            let c = match class {
                F::BadVcrc => {
                    v[n - 1 - (rng.next_u64() & 1) as usize] ^= 1 << (rng.next_u64() % 8);
                    ctr::RX_VCRC_ERR
                }
                F::LVer => {
                    v[0] = (v[0] & 0xF0) | range(rng, 1, 15) as u8;
                    fix_vcrc(&mut v);
                    ctr::RX_LVER_ERR
                }
                F::Lnh => {
                    v[1] = (v[1] & !3) | (rng.next_u64() & 1) as u8;
                    fix_vcrc(&mut v);
                    ctr::RX_LNH_ERR
                }
                F::PktLen => {
                    let pl = be16(&v, 4) & 0x7FF;
                    let d = range(rng, 1, 3) as u16;
                    let npl = if rng.chance(50) { pl + d } else { pl - d };
                    v[4] = (v[4] & 0xF8) | (npl >> 8) as u8;
                    v[5] = npl as u8;
                    fix_vcrc(&mut v);
                    ctr::RX_LEN_ERR
                }
                _ => {
                    let keep = range(rng, 8, n as u64 - 1) as usize;
                    v.truncate(keep);
                    ctr::RX_LEN_ERR
                }
            };
            (p, v, e(p, c))
        }
        F::OversizedVl15 => {
            let p = range(rng, 1, 7) as u8;
            // 320 bytes after the DETH: PktLen 88, consistent length and CRCs.
            let v = data_wire(VL15, lid_to(active_other(rng, p), rng), 0x20, 0, 320, rng);
            (p, v, e(p, ctr::VL15_DROPPED))
        }
        F::OversizedData => {
            let p = range(rng, 1, 6) as u8;
            let len = range(rng, 4200, 4400) as usize;
            let v = data_wire(1, lid_to(active_other(rng, p), rng), 0x20, 2, len, rng);
            (p, v, e(p, ctr::DATA_DROPPED))
        }
        F::DlidNotOurs => {
            let p = vl15_in(rng);
            let (m, dlid, slid) = match rng.next_u64() % 4 {
                0 => (
                    random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid),
                    pick(rng, &[0x4C, 0x4D]),
                    0x20,
                ),
                1 => {
                    let hc = range(rng, 1, 4) as u8;
                    (
                        dr_mad(rng, false, hc, hc, METHOD_GET, tid),
                        pick(rng, &[0x4C, 0x4D]),
                        0x20,
                    )
                }
                // Permissive DLID on a LID-routed SMP.
                2 => (
                    random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid),
                    PERMISSIVE_LID,
                    0x20,
                ),
                // Class 0x01 from the permissive SLID.
                _ => (
                    random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid),
                    PORT0_LID,
                    PERMISSIVE_LID,
                ),
            };
            (p, smp_wire(dlid, slid, &m, rng), e0(ctr::P0_LID_ERR))
        }
        F::NoRoute => {
            let p = range(rng, 1, 6) as u8;
            let dlid = match rng.next_u64() % 6 {
                0 => range(rng, 0x40, 0x47) as u16,
                1 => range(rng, 0x48, 0x4B) as u16,
                2 => range(rng, 0x50, 0x57) as u16,
                3 => 0,
                4 => range(rng, 0xC000, 0xFFFE) as u16,
                _ => range(rng, 0x60, 0x3FF) as u16,
            };
            let v = if rng.chance(50) {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                smp_wire(dlid, 0x20, &m, rng)
            } else {
                // A data packet to a LID the LFT sends to port 0 is no route too.
                let dlid = if rng.chance(20) { 0x4C } else { dlid };
                data_wire(2, dlid, 0x20, 2, range(rng, 0, 200) as usize, rng)
            };
            (p, v, e(p, ctr::NO_ROUTE))
        }
        F::Loop => {
            let p = range(rng, 1, 6) as u8;
            let v = if rng.chance(50) {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                smp_wire(lid_to(p, rng), 0x20, &m, rng)
            } else {
                data_wire(3, lid_to(p, rng), 0x20, 2, range(rng, 0, 200) as usize, rng)
            };
            (p, v, e(p, ctr::LOOP_DROP))
        }
        F::HopCount => {
            let p = vl15_in(rng);
            let hc = range(rng, 64, 255) as u8;
            let hp = (rng.next_u64() % 66) as u8;
            let d = rng.chance(50);
            let m = dr_mad(rng, d, hc, hp, METHOD_GET, tid);
            (
                p,
                smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng),
                e0(ctr::P0_DR_DISCARD),
            )
        }
        F::BadHopPtr => {
            let p = vl15_in(rng);
            let hc = range(rng, 1, 10) as u8;
            let over = hc + range(rng, 2, 20) as u8;
            let m = match rng.next_u64() % 3 {
                // The sender should have incremented it (C14-9:1).
                0 => dr_mad(rng, false, hc, 0, METHOD_GET, tid),
                // Beyond hc + 1 either way (C14-9:5, C14-13:5).
                1 => dr_mad(rng, false, hc, over, METHOD_GET, tid),
                _ => dr_mad(rng, true, hc, over, METHOD_GET_RESP, tid),
            };
            (
                p,
                smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng),
                e0(ctr::P0_DR_DISCARD),
            )
        }
        F::DrEgressRange => {
            let p = vl15_in(rng);
            let hc = range(rng, 2, 8) as u8;
            match rng.next_u64() % 3 {
                0 => {
                    // Outbound, next port > N: the receive rule rejects it.
                    let hp = range(rng, 1, u64::from(hc) - 1) as u8;
                    let mut m = dr_mad(rng, false, hc, hp, METHOD_GET, tid);
                    m[mad::off::INITIAL_PATH + usize::from(hp) + 1] = range(rng, 9, 255) as u8;
                    let v = smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng);
                    (p, v, e0(ctr::P0_DR_DISCARD))
                }
                1 => {
                    // Return, next port > N.
                    let hp = range(rng, 2, u64::from(hc)) as u8;
                    let mut m = dr_mad(rng, true, hc, hp, METHOD_GET_RESP, tid);
                    m[mad::off::RETURN_PATH + usize::from(hp) - 1] = range(rng, 9, 255) as u8;
                    let v = smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng);
                    (p, v, e0(ctr::P0_DR_DISCARD))
                }
                _ => {
                    // Outbound, next port 0: accepted on receive (0 ≤ N),
                    // the send side has nowhere to send it.
                    let hp = range(rng, 1, u64::from(hc) - 1) as u8;
                    let mut m = dr_mad(rng, false, hc, hp, METHOD_GET, tid);
                    m[mad::off::INITIAL_PATH + usize::from(hp) + 1] = 0;
                    let v = smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng);
                    (p, v, e0(ctr::P0_SQ_DR_DISCARD))
                }
            }
        }
        F::DownPort => match rng.next_u64() % 5 {
            0 => {
                // LID-routed SMP out of a Down port.
                let p = range(rng, 1, 7) as u8;
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                let v = smp_wire(lid_to(DOWN_PORT, rng), 0x20, &m, rng);
                (p, v, e(p, ctr::STATE_DROP))
            }
            1 => {
                // DR SMP forwarded to a Down port.
                let p = range(rng, 1, 7) as u8;
                let hc = range(rng, 2, 8) as u8;
                let hp = range(rng, 1, u64::from(hc) - 1) as u8;
                let mut m = dr_mad(rng, false, hc, hp, METHOD_GET, tid);
                m[mad::off::INITIAL_PATH + usize::from(hp) + 1] = DOWN_PORT;
                let v = smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng);
                (p, v, e0(ctr::P0_SQ_DR_DISCARD))
            }
            2 => {
                // An SMP for the switch arriving on a Down port.
                let hc = range(rng, 1, 4) as u8;
                let m = dr_mad(rng, false, hc, hc, METHOD_GET, tid);
                let v = smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng);
                (DOWN_PORT, v, e0(ctr::P0_PORT_DOWN))
            }
            3 => {
                // Data from a port that is not Active (Init or Down).
                let p = pick(rng, &[INIT_PORT, DOWN_PORT]);
                let v = data_wire(0, lid_to(range(rng, 1, 6) as u8, rng), 0x20, 2, 64, rng);
                (p, v, e(p, ctr::STATE_DROP))
            }
            _ => {
                // Data to a port that is not Active.
                let p = range(rng, 1, 6) as u8;
                let q = pick(rng, &[INIT_PORT, DOWN_PORT]);
                let v = data_wire(0, lid_to(q, rng), 0x20, 2, 64, rng);
                (p, v, e(p, ctr::STATE_DROP))
            }
        },
        F::GoodLidSmp
        | F::GoodSmSend
        | F::SendPathDiscard
        | F::GoodGmpSend
        | F::GmpSendDrop
        | F::Vl15Overflow
        | F::DataOverflow
        | F::LinkDown
        | F::EgressLinkDown
        | F::Reset => {
            // Directed classes: a good SMP the bench uses for them.
            let p = range(rng, 1, 6) as u8;
            let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
            let v = smp_wire(lid_to(active_other(rng, p), rng), 0x20, &m, rng);
            (p, v, Expect::Delivered)
        }
    };
    GenPacket {
        class,
        port,
        bytes,
        expect,
        host: None,
    }
}

/// A packet port 0's host sends on `gmp_tx` (`GoodGmpSend`, `GmpSendDrop`).
fn gen_gmp_send(rng: &mut Rng, class: FaultClass, tid: u64) -> GenPacket {
    let e0 = |c: u8| Expect::Dropped(Bank::Port0, c);
    let mut m = random_mad(rng, CLASS_PERF, METHOD_GET_RESP, tid);
    m[2] = 1;
    let sl = (rng.next_u64() & 15) as u8;
    let psn = (rng.next_u64() & 0xFF_FFFF) as u32;
    let vl = range(rng, 0, 7) as u8;
    let (bytes, expect) = if class == FaultClass::GoodGmpSend {
        let q = range(rng, 1, 6) as u8;
        let dlid = lid_to(q, rng);
        (
            Packet::gmp(vl, sl, dlid, PORT0_LID, psn, m),
            Expect::Delivered,
        )
    } else {
        let q = range(rng, 1, 6) as u8;
        match rng.next_u64() % 5 {
            0 => {
                let dlid = lid_to(q, rng);
                let v = Packet::gmp(VL15, sl, dlid, PORT0_LID, psn, m);
                (v, Expect::Dropped(Bank::Gmp, ctr::G_TX_DROP))
            }
            1 => {
                let dlid = lid_to(q, rng);
                let len = range(rng, 300, 600) as usize;
                let v = data_wire(vl, dlid, PORT0_LID, 1, len, rng);
                (v, Expect::Dropped(Bank::Gmp, ctr::G_TX_DROP))
            }
            2 => {
                let dlid = pick(rng, &[0x40, 0x49, 0x55, 0, 0xC000, 0x300]);
                let v = Packet::gmp(vl, sl, dlid, PORT0_LID, psn, m);
                (v, e0(ctr::P0_NO_ROUTE))
            }
            3 => {
                let dlid = pick(rng, &[PORT0_LID, 0x4C]);
                let v = Packet::gmp(vl, sl, dlid, PORT0_LID, psn, m);
                (v, e0(ctr::P0_LOOP_DROP))
            }
            _ => {
                let dlid = lid_to(pick(rng, &[INIT_PORT, DOWN_PORT]), rng);
                let v = Packet::gmp(vl, sl, dlid, PORT0_LID, psn, m);
                (v, e0(ctr::P0_STATE_DROP))
            }
        }
    };
    GenPacket {
        class,
        port: 0,
        bytes,
        expect,
        host: Some(HostSend::Gmp),
    }
}

/// A MAD port 0's host sends (`GoodSmSend`, `SendPathDiscard`).
fn gen_host(rng: &mut Rng, class: FaultClass, tid: u64) -> GenPacket {
    use FaultClass as F;
    let e0 = |c: u8| Expect::Dropped(Bank::Port0, c);
    let sl = (rng.next_u64() & 15) as u8;
    let dr = |hc: u8, first: u8, rng: &mut Rng| {
        let mut m = dr_mad(rng, false, hc, 0, METHOD_GET, tid);
        m[mad::off::INITIAL_PATH + 1] = first;
        m
    };
    let (m, host, expect) = if class == F::GoodSmSend {
        match rng.next_u64() % 3 {
            0 => {
                let hc = range(rng, 1, 8) as u8;
                let q = range(rng, 1, 7) as u8;
                let m = dr(hc, q, rng);
                let h = HostSend::Sm {
                    dlid: PERMISSIVE_LID,
                    sl,
                };
                (m, h, Expect::Delivered)
            }
            1 => {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                let dlid = lid_to(range(rng, 1, 7) as u8, rng);
                (m, HostSend::Sm { dlid, sl }, Expect::Delivered)
            }
            _ => {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_TRAP, tid);
                (m, HostSend::Trap, Expect::Delivered)
            }
        }
    } else {
        let h = HostSend::Sm {
            dlid: PERMISSIVE_LID,
            sl,
        };
        match rng.next_u64() % 7 {
            0 => (
                dr(range(rng, 1, 8) as u8, pick(rng, &[0, DOWN_PORT]), rng),
                h,
                e0(ctr::P0_SQ_DR_DISCARD),
            ),
            1 => {
                let first = range(rng, 9, 255) as u8;
                (
                    dr(range(rng, 1, 8) as u8, first, rng),
                    h,
                    e0(ctr::P0_SQ_DR_DISCARD),
                )
            }
            2 => (dr(0, 1, rng), h, e0(ctr::P0_SQ_LOCAL)),
            3 => {
                // A DR part whose DrSLID is a real LID.
                let mut m = dr(range(rng, 1, 8) as u8, 1, rng);
                m[mad::off::DR_SLID..mad::off::DR_SLID + 2].copy_from_slice(&0x20u16.to_be_bytes());
                (m, h, e0(ctr::P0_SQ_DR_DISCARD))
            }
            4 => {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                let dlid = range(rng, 0x40, 0x47) as u16;
                (m, HostSend::Sm { dlid, sl }, e0(ctr::P0_NO_ROUTE))
            }
            5 => {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                (m, HostSend::Sm { dlid: 0x4C, sl }, e0(ctr::P0_LOOP_DROP))
            }
            _ => {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                let dlid = lid_to(DOWN_PORT, rng);
                (m, HostSend::Sm { dlid, sl }, e0(ctr::P0_STATE_DROP))
            }
        }
    };
    GenPacket {
        class,
        port: 0,
        bytes: m.to_vec(),
        expect,
        host: Some(host),
    }
}

// ===========================================================================
// Scoreboard: the RTL switch against the model
// ===========================================================================

/// Where the scoreboard sees a packet leave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dest {
    Wire(u8),
    Sma,
    Sm,
    Gmp,
}

/// One expected packet.
#[derive(Clone, Debug)]
struct Exp {
    bytes: Vec<u8>,
    meta: Option<SmiMeta>,
    bad: bool,
    sq: bool,
    /// The input slot it held: (port, lane, sequence number).
    origin: Option<(u8, Lane, u64)>,
    class: FaultClass,
}

impl Exp {
    fn matches(&self, bytes: &[u8], meta: Option<SmiMeta>, bad: bool) -> bool {
        if self.meta != meta || self.bad != bad || self.bytes.len() != bytes.len() {
            return false;
        }
        if self.sq {
            bytes.len() > PSN_OFFSET + 3 && with_psn(&self.bytes, psn_of(bytes)) == bytes
        } else {
            self.bytes == bytes
        }
    }
}

fn psn_of(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[PSN_OFFSET], b[PSN_OFFSET + 1], b[PSN_OFFSET + 2]])
}

/// A packet queued on an input wire.
#[derive(Debug)]
struct Inj {
    beats: Vec<Beat>,
    bytes: Vec<u8>,
    class: FaultClass,
    expect: Expect,
    /// Bypass the slot limit and predict a full buffer (directed overflow).
    overflow: bool,
    /// Stop after this many beats (the link falls mid-packet).
    cut_at: Option<usize>,
    /// Its output's link will fall before it leaves: it is either sent into
    /// the falling link (swallowed) or dropped at its input (StateDrop);
    /// only the link counters are predicted, the rest is accounted after.
    gone: bool,
}

/// An input wire: queued packets at line rate, a gate for idle beats.
#[derive(Debug)]
struct Driver {
    q: VecDeque<Inj>,
    pos: usize,
    gate: Gate,
}

/// Patterns of one traffic phase.
#[derive(Clone, Debug)]
pub struct Patterns {
    /// Beats on each input wire (idle insertion; a wire has no ready).
    pub rx: Pattern,
    /// `tx_tready` of each output (backpressure), port p at index p−1.
    pub tx: Vec<Pattern>,
    /// `sma_rx_tready` / `sm_rx_tready`.
    pub host: Pattern,
}

impl Patterns {
    pub fn line_rate() -> Self {
        Patterns {
            rx: Pattern::Always,
            tx: vec![Pattern::Always; usize::from(NPORTS)],
            host: Pattern::Always,
        }
    }
}

/// What the scoreboard counted.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Packets put on the input wires.
    pub injected: u64,
    /// Generated packets by class name.
    pub by_class: BTreeMap<&'static str, u64>,
    /// Expected packets seen where and as predicted (SMA answers included).
    pub matched: u64,
    /// Mismatches of any kind (bytes, order, counters, drain, disposition).
    pub mismatches: u64,
    /// The first mismatches, described.
    pub log: Vec<String>,
    /// Counter read-backs compared.
    pub counters_checked: u64,
    /// Packets in flight when a reset came (lost by design).
    pub lost_to_reset: u64,
    pub resets: u64,
    pub max_drain: u64,
    /// Packets sent into an output whose link fell (egress link down).
    pub egress_swallowed: u64,
}

/// The Verilated 8-port switch under the scoreboard.
pub struct Bench {
    dev: Dev,
    pin: Vec<PortIn>,
    pout: Vec<PortOut>,
    dout: DevOut,
    pub model: SwitchModel,
    drv: Vec<Driver>,
    tx: Vec<Sink<()>>,
    sma_rx: Sink<SmiMeta>,
    sm_rx: Sink<SmiMeta>,
    gmp_rx: Sink<()>,
    sma_tx: Source<SmiMeta>,
    sm_tx: Source<(u16, u8)>,
    trap_tx: Source<()>,
    gmp_tx: Source<()>,
    exp: BTreeMap<Dest, BTreeMap<(u8, Lane), VecDeque<Exp>>>,
    ctr_exp: BTreeMap<(Bank, u8), u32>,
    /// Per (input, lane): packets holding a slot, oldest first.
    inflight: HashMap<(u8, Lane), VecDeque<u64>>,
    seq: HashMap<(u8, Lane), u64>,
    psns: HashSet<u32>,
    link_up: Vec<bool>,
    reg_w: Option<(u16, u32)>,
    reg_r: Option<u16>,
    read_val: u32,
    pub tally: Tally,
    /// Test hook: flip one byte of the next expected wire packet, so the
    /// scoreboard must report a mismatch.
    pub corrupt_next: bool,
    tid: u64,
}

const LOG_MAX: usize = 20;

impl Bench {
    /// A reset, programmed switch (ports 1..=6 Active, 7 Init, 8 Down) at
    /// DataW 64.
    pub fn new(seed: u64) -> Result<Bench> {
        Bench::with_width(seed, 64)
    }

    /// [`Bench::new`] at DataW `w` (64 or 128).
    pub fn with_width(seed: u64, w: u32) -> Result<Bench> {
        let mut dev =
            Dev::new(DevKind::Switch, u32::from(NPORTS), w).context("the 8-port switch model")?;
        if dev.num_ports() != u32::from(NPORTS) || dev.data_w() != w {
            bail!(
                "switch binding has {} ports at DataW {}",
                dev.num_ports(),
                dev.data_w()
            );
        }
        dev.reset(4)?;
        let n = usize::from(NPORTS);
        let self_w = w;
        let mut b = Bench {
            dev,
            pin: vec![PortIn::default(); n],
            pout: vec![PortOut::default(); n],
            dout: DevOut::default(),
            model: SwitchModel::new(SwitchState::after_reset(NPORTS)),
            drv: (0..n)
                .map(|_| Driver {
                    q: VecDeque::new(),
                    pos: 0,
                    gate: Gate::new(Pattern::Always),
                })
                .collect(),
            tx: (0..n).map(|_| Sink::new(Pattern::Always)).collect(),
            sma_rx: Sink::new(Pattern::Always),
            sm_rx: Sink::new(Pattern::Always),
            gmp_rx: Sink::new(Pattern::Always),
            sma_tx: Source::new(self_w, Pattern::Always),
            sm_tx: Source::new(self_w, Pattern::Always),
            trap_tx: Source::new(self_w, Pattern::Always),
            gmp_tx: Source::new(self_w, Pattern::Always),
            exp: BTreeMap::new(),
            ctr_exp: BTreeMap::new(),
            inflight: HashMap::new(),
            seq: HashMap::new(),
            psns: HashSet::new(),
            link_up: vec![true; n],
            reg_w: None,
            reg_r: None,
            read_val: 0,
            tally: Tally::default(),
            corrupt_next: false,
            tid: seed << 20,
        };
        b.program()?;
        Ok(b)
    }

    pub fn cycle_count(&self) -> u64 {
        self.dev.cycle()
    }

    fn mismatch(&mut self, s: String) {
        self.tally.mismatches += 1;
        if self.tally.log.len() < LOG_MAX {
            self.tally
                .log
                .push(format!("cycle {}: {s}", self.dev.cycle()));
        }
    }

    pub fn write_reg(&mut self, a: u16, v: u32) -> Result<()> {
        self.reg_w = Some((a, v));
        self.cycle()
    }

    pub fn read_reg(&mut self, a: u16) -> Result<u32> {
        self.reg_r = Some(a);
        self.cycle()?;
        Ok(self.read_val)
    }

    /// Program the bench's LFT, LinearFDBTop, LID and PortStates, and make
    /// the model's state the same.
    pub fn program(&mut self) -> Result<()> {
        let want = bench_state();
        self.write_reg(swreg::NUM_PORTS, u32::from(NPORTS))?;
        self.write_reg(swreg::PORT0_LID, u32::from(PORT0_LID))?;
        let mut words: BTreeMap<u16, [u8; 4]> = BTreeMap::new();
        for (lid, _) in bench_lft() {
            let w = lid / 4;
            let mut e = [0u8; 4];
            for (i, x) in e.iter_mut().enumerate() {
                *x = want.lft[usize::from(w * 4) + i];
            }
            words.insert(w, e);
        }
        for (w, e) in words {
            self.write_reg(swreg::LFT_BASE + w, u32::from_le_bytes(e))?;
        }
        self.write_reg(swreg::LINEAR_FDB_TOP, u32::from(LFT_TOP))?;
        self.write_reg(swreg::MASTER_SM_LID, u32::from(MASTER_SM_LID))?;
        self.write_reg(swreg::MASTER_SM_SL, u32::from(MASTER_SM_SL))?;
        for p in 1..=NPORTS {
            let st = want.state[usize::from(p)];
            if st != ps::INIT {
                self.write_reg(swreg::PORT_STATE + u16::from(p), u32::from(st))?;
            }
        }
        self.cycle()?;
        self.model.s = want;
        self.check_port_states();
        Ok(())
    }

    fn check_port_states(&mut self) {
        for p in 1..=NPORTS {
            let rtl = self.pout[usize::from(p) - 1].port_state;
            let m = self.model.s.state[usize::from(p)];
            if rtl != m {
                self.mismatch(format!("port {p} PortState: RTL {rtl}, model {m}"));
            }
        }
    }

    /// Set the traffic patterns of the wires and interfaces.
    pub fn set_patterns(&mut self, p: &Patterns) {
        for d in &mut self.drv {
            d.gate.set(p.rx.clone());
        }
        for (s, t) in self.tx.iter_mut().zip(&p.tx) {
            s.set_pattern(t.clone());
        }
        self.sma_rx.set_pattern(p.host.clone());
        self.sm_rx.set_pattern(p.host.clone());
    }

    /// Queue a generated packet on its input wire.
    pub fn push(&mut self, g: GenPacket) {
        self.push_inj(g, false, None);
    }

    fn push_inj(&mut self, g: GenPacket, overflow: bool, cut_at: Option<usize>) {
        self.push_full(g, overflow, cut_at, false);
    }

    fn push_full(&mut self, g: GenPacket, overflow: bool, cut_at: Option<usize>, gone: bool) {
        *self.tally.by_class.entry(g.class.name()).or_default() += 1;
        if let Some(h) = g.host {
            // Port 0's host: predicted now (its source keeps the order).
            let mad = <Mad>::try_from(&g.bytes[..]);
            let (pr, lane) = match (h, mad) {
                (HostSend::Gmp, _) => {
                    let w = &g.bytes[..g.bytes.len().saturating_sub(VCRC_BYTES)];
                    self.gmp_tx.push(w, ());
                    (self.model.gmp_send(w), Lane::GmpTx)
                }
                (HostSend::Sm { dlid, sl }, Ok(m)) => {
                    self.sm_tx.push(&m, (dlid, sl));
                    (self.model.sm_send(&m, dlid, sl), Lane::Sm)
                }
                (HostSend::Trap, Ok(m)) => {
                    self.trap_tx.push(&m, ());
                    (self.model.trap_send(&m), Lane::Trap)
                }
                (_, Err(_)) => {
                    let n = g.bytes.len();
                    self.mismatch(format!("{}: a MAD of {n} bytes", g.class.name()));
                    return;
                }
            };
            self.check_disposition(&pr, g.class, g.expect, 0);
            self.book(&pr, 0, lane, None, g.class);
            self.tally.injected += 1;
            return;
        }
        let d = &mut self.drv[usize::from(g.port) - 1];
        d.q.push_back(Inj {
            beats: to_beats(&g.bytes, beat_bytes(self.dev.data_w())),
            bytes: g.bytes,
            class: g.class,
            expect: g.expect,
            overflow,
            cut_at,
            gone,
        });
    }

    /// Generate a packet with the bench's generator (class by weight).
    pub fn gen(&mut self, rng: &mut Rng, fault_percent: u32) -> GenPacket {
        let class = if rng.chance(fault_percent) {
            pick(rng, &FaultClass::FAULTS)
        } else {
            pick(rng, &FaultClass::GOOD)
        };
        self.tid += 1;
        gen_packet(rng, class, self.tid)
    }

    pub fn gen_class(&mut self, rng: &mut Rng, class: FaultClass) -> GenPacket {
        self.tid += 1;
        gen_packet(rng, class, self.tid)
    }

    fn expect(&mut self, dest: Dest, key: (u8, Lane), mut e: Exp) {
        if self.corrupt_next && matches!(dest, Dest::Wire(_)) {
            self.corrupt_next = false;
            let i = e.bytes.len() / 2;
            e.bytes[i] ^= 0x01;
        }
        self.exp
            .entry(dest)
            .or_default()
            .entry(key)
            .or_default()
            .push_back(e);
    }

    /// The model's disposition must be the one the class definition gives.
    fn check_disposition(&mut self, pr: &Prediction, class: FaultClass, expect: Expect, p: u8) {
        let got = match pr.drop {
            Some((b, c)) => Expect::Dropped(b, c),
            None => Expect::Delivered,
        };
        if got != expect {
            self.mismatch(format!(
                "model disposition of {} on port {p}: {got:?}, the class says {expect:?}",
                class.name()
            ));
        }
    }

    /// Book a prediction: expected packets and counter changes.
    fn book(
        &mut self,
        pr: &Prediction,
        key_port: u8,
        sq_lane: Lane,
        origin: Option<(u8, Lane, u64)>,
        class: FaultClass,
    ) {
        for &(b, c, n) in &pr.ctrs {
            let v = self.ctr_exp.entry((b, c)).or_default();
            *v = v.wrapping_add(n);
        }
        for o in &pr.outs {
            let (dest, lane, bytes, meta, bad, sq) = match o {
                Out::Wire { port, bytes, sq } => {
                    let lane = match origin {
                        _ if *sq || key_port == 0 => sq_lane,
                        Some((_, l, _)) => l,
                        None => Lane::Vl15,
                    };
                    (Dest::Wire(*port), lane, bytes.clone(), None, false, *sq)
                }
                Out::Sma { mad, meta } => (
                    Dest::Sma,
                    Lane::Vl15,
                    mad.to_vec(),
                    Some(*meta),
                    false,
                    false,
                ),
                Out::Sm { mad, meta } => (
                    Dest::Sm,
                    Lane::Vl15,
                    mad.to_vec(),
                    Some(*meta),
                    false,
                    false,
                ),
                Out::Gmp { bytes, bad } => {
                    (Dest::Gmp, Lane::Data, bytes.clone(), None, *bad, false)
                }
            };
            self.expect(
                dest,
                (key_port, lane),
                Exp {
                    bytes,
                    meta,
                    bad,
                    sq,
                    origin,
                    class,
                },
            );
        }
    }

    fn release(&mut self, origin: Option<(u8, Lane, u64)>) {
        if let Some((p, l, s)) = origin {
            if let Some(q) = self.inflight.get_mut(&(p, l)) {
                while q.front().is_some_and(|&x| x <= s) {
                    q.pop_front();
                }
            }
        }
    }

    /// A packet seen at `dest`: it must be the next expected one of one of
    /// the queues for `dest`.
    fn observe(&mut self, dest: Dest, bytes: Vec<u8>, meta: Option<SmiMeta>, bad: bool) {
        let hit = self.exp.get(&dest).and_then(|qs| {
            qs.iter().find_map(|(k, q)| {
                q.front()
                    .filter(|e| e.matches(&bytes, meta, bad))
                    .map(|_| *k)
            })
        });
        let hit = hit.or_else(|| self.resync(dest, &bytes, meta, bad));
        let Some(k) = hit else {
            let heads: Vec<String> = self
                .exp
                .get(&dest)
                .map(|qs| {
                    qs.iter()
                        .filter_map(|(k, q)| {
                            q.front()
                                .map(|e| format!("{k:?}:{}({}B)", e.class.name(), e.bytes.len()))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let head: Vec<String> = bytes.iter().take(24).map(|b| format!("{b:02x}")).collect();
            self.mismatch(format!(
                "{dest:?}: unexpected packet of {} bytes (bad {bad}, meta {meta:?}) [{}], expected heads {heads:?}",
                bytes.len(),
                head.join("")
            ));
            return;
        };
        let e = self
            .exp
            .get_mut(&dest)
            .and_then(|qs| qs.get_mut(&k))
            .and_then(VecDeque::pop_front)
            .expect("matched head");
        self.tally.matched += 1;
        self.release(e.origin);
        if e.sq {
            let psn = psn_of(&bytes);
            if !self.psns.insert(psn) {
                self.mismatch(format!("{dest:?}: PSN {psn:#x} sent twice"));
            }
        }
        if dest == Dest::Sma {
            if let Some(meta) = meta {
                self.answer(&bytes, meta, e.class);
            }
        }
    }

    /// No queue's head matches: if the packet is deeper in a queue, the
    /// ones before it are missing or out of order — report them, drop them
    /// and match there (so one bad packet is one report, not a cascade).
    fn resync(
        &mut self,
        dest: Dest,
        bytes: &[u8],
        meta: Option<SmiMeta>,
        bad: bool,
    ) -> Option<(u8, Lane)> {
        let (k, i) = self.exp.get(&dest).and_then(|qs| {
            qs.iter().find_map(|(k, q)| {
                q.iter()
                    .position(|e| e.matches(bytes, meta, bad))
                    .map(|i| (*k, i))
            })
        })?;
        let skipped: Vec<Exp> = self
            .exp
            .get_mut(&dest)
            .and_then(|qs| qs.get_mut(&k))
            .map(|q| q.drain(..i).collect())
            .unwrap_or_default();
        self.mismatch(format!(
            "{dest:?} {k:?}: a packet arrived with {i} expected before it missing or out of order (first: {})",
            skipped[0].class.name()
        ));
        Some(k)
    }

    /// The port-0 host's SMA: answers every request as GetResp (status 0,
    /// data = the request's data inverted), handing the request's meta back.
    fn answer(&mut self, req: &[u8], meta: SmiMeta, class: FaultClass) {
        let mut m: Mad = [0; 256];
        m.copy_from_slice(req);
        mad::make_response(&mut m, 0);
        for b in mad::data_mut(&mut m) {
            *b = !*b;
        }
        let pr = self.model.sma_send(&m, &meta);
        self.book(&pr, 0, Lane::Sma, None, class);
        self.sma_tx.push(&m, meta);
    }

    fn busy_inputs(&self) -> bool {
        self.drv.iter().any(|d| !d.q.is_empty())
            || !self.sm_tx.idle()
            || !self.trap_tx.idle()
            || !self.gmp_tx.idle()
    }

    fn expected_left(&self) -> usize {
        self.exp
            .values()
            .flat_map(|qs| qs.values())
            .map(VecDeque::len)
            .sum()
    }

    /// One clock cycle of the switch with every driver and sink.
    pub fn cycle(&mut self) -> Result<()> {
        let now = self.dev.cycle();
        // Everything that held a slot has left once the switch is idle and
        // nothing is arriving.
        if self.dout.idle && self.drv.iter().all(|d| d.pos == 0) {
            for q in self.inflight.values_mut() {
                q.clear();
            }
        }
        // Input wires.
        for i in 0..self.drv.len() {
            let p = i as u8 + 1;
            let pi = &mut self.pin[i];
            pi.rx_tvalid = false;
            pi.rx_tlast = false;
            pi.link_up = self.link_up[i];
            pi.tx_tready = self.tx[i].ready();
            if self.drv[i].q.is_empty() || !self.drv[i].gate.open() {
                continue;
            }
            if self.drv[i].pos == 0 {
                // A new packet: predict it, unless its buffer is full.
                let inj = self.drv[i].q.front().expect("checked");
                let pr = if inj.overflow {
                    self.model.buffer_full(p, &inj.bytes)
                } else if inj.cut_at.is_some() {
                    let mut pr = Prediction::default();
                    pr.dropped(Bank::Ext(p), ctr::LINK_DOWN_DROP);
                    pr
                } else if inj.gone {
                    let mut pr = Prediction::default();
                    let w = &inj.bytes;
                    pr.add(Bank::Ext(p), ctr::RX_PKTS, 1);
                    pr.add(Bank::Ext(p), ctr::RX_WORDS, u32::from(be16(w, 4) & 0x7FF));
                    pr.slot = Some(if w[0] >> 4 == VL15 {
                        Lane::Vl15
                    } else {
                        Lane::Data
                    });
                    pr
                } else {
                    self.model.ingress(p, &inj.bytes)
                };
                let (class, expect) = (inj.class, inj.expect);
                if let Some(l) = pr.slot {
                    let depth = if l == Lane::Vl15 {
                        VL15_DEPTH
                    } else {
                        DATA_DEPTH
                    };
                    if self.inflight.get(&(p, l)).map_or(0, VecDeque::len) >= depth {
                        continue;
                    }
                }
                self.check_disposition(&pr, class, expect, p);
                let origin = pr.slot.map(|l| {
                    let s = self.seq.entry((p, l)).or_default();
                    *s += 1;
                    (p, l, *s)
                });
                if let Some((_, l, s)) = origin {
                    self.inflight.entry((p, l)).or_default().push_back(s);
                }
                self.book(&pr, p, Lane::Fwd, origin, class);
                self.tally.injected += 1;
            }
            let d = &mut self.drv[i];
            let inj = d.q.front().expect("checked");
            let b = inj.beats[d.pos];
            let cut = inj.cut_at;
            let pi = &mut self.pin[i];
            pi.rx_tdata = b.data;
            pi.rx_tkeep = b.keep;
            pi.rx_tvalid = true;
            pi.rx_tlast = b.last;
            d.pos += 1;
            if d.pos == d.q.front().map_or(0, |x| x.beats.len()) || cut == Some(d.pos) {
                d.q.pop_front();
                d.pos = 0;
            }
        }
        // Host side.
        let mut din = DevIn {
            sma_rx_tready: self.sma_rx.ready(),
            sm_rx_tready: self.sm_rx.ready(),
            ..DevIn::default()
        };
        self.gmp_rx.always();
        if let Some((b, m)) = self.sma_tx.present() {
            din.sma_tx_tdata = b.data;
            din.sma_tx_tvalid = true;
            din.sma_tx_tlast = b.last;
            din.sma_tx_slid = m.slid;
            din.sma_tx_dlid = m.dlid;
            din.sma_tx_sl = m.sl;
        }
        if let Some((b, (dlid, sl))) = self.sm_tx.present() {
            din.sm_tx_tdata = b.data;
            din.sm_tx_tvalid = true;
            din.sm_tx_tlast = b.last;
            din.sm_tx_dlid = dlid;
            din.sm_tx_sl = sl;
        }
        if let Some((b, ())) = self.trap_tx.present() {
            din.trap_tx_tdata = b.data;
            din.trap_tx_tvalid = true;
            din.trap_tx_tlast = b.last;
        }
        if let Some((b, ())) = self.gmp_tx.present() {
            din.gmp_tx_tdata = b.data;
            din.gmp_tx_tkeep = b.keep;
            din.gmp_tx_tvalid = true;
            din.gmp_tx_tlast = b.last;
        }
        if let Some((a, v)) = self.reg_w.take() {
            din.reg_we = true;
            din.reg_addr = a;
            din.reg_wdata = v;
        } else if let Some(a) = self.reg_r {
            din.reg_addr = a;
        }
        let o = self
            .dev
            .step(&din, &self.pin, &mut self.pout)
            .with_context(|| format!("switch at cycle {now} (an RTL assertion?)"))?;
        self.dout = o;
        if self.reg_r.take().is_some() {
            self.read_val = o.reg_rdata;
        }
        self.sma_tx.taken(o.sma_tx_tready, now);
        self.sm_tx.taken(o.sm_tx_tready, now);
        self.trap_tx.taken(o.trap_tx_tready, now);
        self.gmp_tx.taken(o.gmp_tx_tready, now);
        // Outputs.
        for i in 0..self.tx.len() {
            let po = self.pout[i];
            let ready = self.pin[i].tx_tready;
            if ready && !po.tx_tvalid && self.tx[i].in_packet() {
                self.mismatch(format!("port {}: idle cycle inside a packet", i + 1));
            }
            let b = Beat {
                data: po.tx_tdata,
                keep: po.tx_tkeep,
                last: po.tx_tlast,
            };
            self.tx[i].observe(po.tx_tvalid, b, false, now, || ());
            while let Some(r) = self.tx[i].packets.pop_front() {
                self.observe(Dest::Wire(i as u8 + 1), r.bytes, None, false);
            }
        }
        let full_keep = crate::stream::full_keep(self.dev.data_w());
        let full = |data: [u64; 2], last: bool| Beat {
            data,
            keep: full_keep,
            last,
        };
        // The RTL's sideband, M_Key verdict included: the models hold no
        // M_Key state (the soaks never set one), so they predict "no
        // violation, not masked", and a verdict the RTL raises at M_Key 0 is
        // a mismatch.
        let sma_meta = crate::net::sma_rx_meta(&o);
        self.sma_rx.observe(
            o.sma_rx_tvalid,
            full(o.sma_rx_tdata, o.sma_rx_tlast),
            false,
            now,
            || sma_meta,
        );
        while let Some(r) = self.sma_rx.packets.pop_front() {
            self.observe(Dest::Sma, r.bytes, Some(r.meta), false);
        }
        let sm_meta = crate::net::sm_rx_meta(&o);
        self.sm_rx.observe(
            o.sm_rx_tvalid,
            full(o.sm_rx_tdata, o.sm_rx_tlast),
            false,
            now,
            || sm_meta,
        );
        while let Some(r) = self.sm_rx.packets.pop_front() {
            self.observe(Dest::Sm, r.bytes, Some(r.meta), false);
        }
        let gb = Beat {
            data: o.gmp_rx_tdata,
            keep: o.gmp_rx_tkeep,
            last: o.gmp_rx_tlast,
        };
        self.gmp_rx
            .observe(o.gmp_rx_tvalid, gb, o.gmp_rx_tuser, now, || ());
        while let Some(r) = self.gmp_rx.packets.pop_front() {
            self.observe(Dest::Gmp, r.bytes, None, r.bad);
        }
        Ok(())
    }

    /// Run until every queued packet has entered the switch.
    pub fn run_inputs(&mut self, max_cycles: u64) -> Result<()> {
        let start = self.dev.cycle();
        while self.busy_inputs() {
            if self.dev.cycle() - start > max_cycles {
                bail!("inputs not taken within {max_cycles} cycles");
            }
            self.cycle()?;
        }
        Ok(())
    }

    /// After the last input beat: run until the switch is idle with nothing
    /// expected left (and the SMA's answers sent). Returns the drain time;
    /// a drain longer than `bound`, or expected packets that never came, are
    /// mismatches.
    pub fn drain(&mut self, bound: u64) -> Result<u64> {
        self.run_inputs(10_000_000)?;
        let start = self.dev.cycle();
        let mut idle_run = 0u64;
        loop {
            self.cycle()?;
            let t = self.dev.cycle() - start;
            let quiet = self.dout.idle
                && self.sma_tx.idle()
                && !self.tx.iter().any(Sink::in_packet)
                && !self.sma_rx.in_packet()
                && !self.sm_rx.in_packet()
                && !self.gmp_rx.in_packet();
            if quiet && self.expected_left() == 0 {
                self.tally.max_drain = self.tally.max_drain.max(t);
                if t > bound {
                    self.mismatch(format!("drain took {t} cycles, bound {bound}"));
                }
                return Ok(t);
            }
            idle_run = if quiet { idle_run + 1 } else { 0 };
            if idle_run > 64 || t > bound.max(1) * 4 {
                // Idle (or stuck) with packets still expected: they are lost.
                let mut lost = Vec::new();
                for (dest, qs) in &self.exp {
                    for (k, q) in qs {
                        for e in q {
                            lost.push(format!("{dest:?} {k:?} {}", e.class.name()));
                        }
                    }
                }
                let n = lost.len();
                lost.truncate(8);
                self.mismatch(format!(
                    "{n} expected packets never came (switch idle {}, after {t} cycles): {lost:?}",
                    self.dout.idle
                ));
                self.exp.clear();
                self.tally.max_drain = self.tally.max_drain.max(t);
                return Ok(t);
            }
        }
    }

    /// Read every counter back and compare with the model; check that every
    /// PSN the send engine used is below its packet count.
    pub fn check_counters(&mut self) -> Result<()> {
        let mut banks: Vec<Bank> = (1..=NPORTS).map(Bank::Ext).collect();
        banks.push(Bank::Port0);
        banks.push(Bank::Gmp);
        for b in banks {
            for c in 0..b.counters() {
                let v = self.read_reg(b.addr(c))?;
                let want = self.ctr_exp.get(&(b, c)).copied().unwrap_or(0);
                self.tally.counters_checked += 1;
                if v != want {
                    self.mismatch(format!("counter {}: RTL {v}, model {want}", b.name(c)));
                }
            }
        }
        let sq = self
            .ctr_exp
            .get(&(Bank::Port0, ctr::P0_SQ_PKTS))
            .copied()
            .unwrap_or(0);
        if let Some(&max) = self.psns.iter().max() {
            if max >= sq {
                self.mismatch(format!("PSN {max:#x} used, but only {sq} SMPs were sent"));
            }
        }
        Ok(())
    }

    /// Directed: stall output q, send more VL15 packets to it from one input
    /// than the input has slots: the first `VL15_DEPTH` wait and are
    /// delivered, the rest are dropped (Vl15Dropped).
    pub fn vl15_overflow(&mut self, rng: &mut Rng, extra: usize) -> Result<()> {
        self.overflow(rng, extra, false)
    }

    /// The same for the data buffer (`DATA_DEPTH` slots, DataDropped).
    pub fn data_overflow(&mut self, rng: &mut Rng, extra: usize) -> Result<()> {
        self.overflow(rng, extra, true)
    }

    fn overflow(&mut self, rng: &mut Rng, extra: usize, data: bool) -> Result<()> {
        let p = range(rng, 1, 6) as u8;
        let q = active_other(rng, p);
        let (depth, c) = if data {
            (DATA_DEPTH, ctr::DATA_DROPPED)
        } else {
            (VL15_DEPTH, ctr::VL15_DROPPED)
        };
        self.tx[usize::from(q) - 1].hold = true;
        for k in 0..depth + extra {
            self.tid += 1;
            let dlid = lid_to(q, rng);
            let bytes = if data {
                let len = range(rng, 0, 4000) as usize;
                data_wire(range(rng, 0, 7) as u8, dlid, 0x20, 2, len, rng)
            } else {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, self.tid);
                smp_wire(dlid, 0x20, &m, rng)
            };
            let over = k >= depth;
            let g = GenPacket {
                host: None,
                class: match (over, data) {
                    (false, false) => FaultClass::GoodLidSmp,
                    (false, true) => FaultClass::GoodData,
                    (true, false) => FaultClass::Vl15Overflow,
                    (true, true) => FaultClass::DataOverflow,
                },
                port: p,
                bytes,
                expect: if over {
                    Expect::Dropped(Bank::Ext(p), c)
                } else {
                    Expect::Delivered
                },
            };
            self.push_inj(g, over, None);
        }
        self.run_inputs(1_000_000)?;
        for _ in 0..200 {
            self.cycle()?;
        }
        self.tx[usize::from(q) - 1].hold = false;
        Ok(())
    }

    /// Directed: the link of an input falls in the middle of a packet; the
    /// packet is dropped whole (LinkDownDrop), PortState goes Down, then
    /// Init when the link returns (the SMA would then make it Active again:
    /// the bench writes it).
    pub fn link_down_mid_packet(&mut self, rng: &mut Rng) -> Result<()> {
        let g = self.gen_class(rng, FaultClass::LinkDown);
        let p = g.port;
        let beats = g.bytes.len().div_ceil(beat_bytes(self.dev.data_w()));
        let cut = range(rng, 1, beats as u64 - 1) as usize;
        let g = GenPacket {
            host: None,
            expect: Expect::Dropped(Bank::Ext(p), ctr::LINK_DOWN_DROP),
            ..g
        };
        self.push_inj(g, false, Some(cut));
        self.run_inputs(100_000)?;
        let i = usize::from(p) - 1;
        self.link_up[i] = false;
        self.model.s.state[usize::from(p)] = ps::DOWN;
        for _ in 0..range(rng, 2, 40) {
            self.cycle()?;
        }
        self.check_port_states();
        self.link_up[i] = true;
        self.model.s.state[usize::from(p)] = ps::INIT;
        for _ in 0..4 {
            self.cycle()?;
        }
        self.check_port_states();
        self.write_reg(swreg::PORT_STATE + u16::from(p), u32::from(ps::ACTIVE))?;
        self.cycle()?;
        self.model.s.state[usize::from(p)] = ps::ACTIVE;
        self.check_port_states();
        Ok(())
    }

    /// Directed: an output's link falls while packets for it wait (the
    /// output stalled): a packet already granted to it is sent into the
    /// dead link (swallowed, counted FwdPkts at its input), one decided
    /// after is dropped at its input (StateDrop); none may appear, whole or
    /// in part, on that output, then or after the link returns. Returns
    /// (packets, swallowed, of those counted in the output's Tx counters).
    pub fn egress_link_down(&mut self, rng: &mut Rng) -> Result<(u32, u32, u32)> {
        let q = range(rng, 1, 6) as u8;
        let qi = usize::from(q) - 1;
        self.tx[qi].hold = true;
        let mut per_in: BTreeMap<u8, u32> = BTreeMap::new();
        // At most a buffer's worth per input and lane: the output is
        // stalled, so nothing leaves before the link falls.
        let mut used: HashMap<(u8, bool), usize> = HashMap::new();
        let k = range(rng, 2, 10);
        for _ in 0..k {
            let vl15 = rng.chance(50);
            let depth = if vl15 { VL15_DEPTH } else { DATA_DEPTH };
            let p = loop {
                let p = active_other(rng, q);
                let u = used.entry((p, vl15)).or_default();
                if *u < depth {
                    *u += 1;
                    break p;
                }
            };
            self.tid += 1;
            let bytes = if vl15 {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, self.tid);
                let dl = lid_to(q, rng);
                smp_wire(dl, 0x20, &m, rng)
            } else {
                let vl = range(rng, 0, 7) as u8;
                let dl = lid_to(q, rng);
                let len = range(rng, 0, 500) as usize;
                data_wire(vl, dl, 0x20, 2, len, rng)
            };
            *per_in.entry(p).or_default() += 1;
            let g = GenPacket {
                host: None,
                class: FaultClass::EgressLinkDown,
                port: p,
                bytes,
                expect: Expect::Delivered,
            };
            self.push_full(g, false, None, true);
        }
        self.run_inputs(100_000)?;
        for _ in 0..range(rng, 0, 200) {
            self.cycle()?;
        }
        self.link_up[qi] = false;
        self.model.s.state[usize::from(q)] = ps::DOWN;
        for _ in 0..range(rng, 2, 50) {
            self.cycle()?;
        }
        // The wire is down: nothing may show, stalled or not.
        self.tx[qi].hold = false;
        for _ in 0..600 {
            self.cycle()?;
        }
        self.check_port_states();
        self.link_up[qi] = true;
        self.model.s.state[usize::from(q)] = ps::INIT;
        for _ in 0..4 {
            self.cycle()?;
        }
        self.write_reg(swreg::PORT_STATE + u16::from(q), u32::from(ps::ACTIVE))?;
        self.cycle()?;
        self.model.s.state[usize::from(q)] = ps::ACTIVE;
        self.check_port_states();
        self.drain(DRAIN_BOUND)?;
        // Account: each input forwarded or state-dropped each of its packets.
        let mut swallowed = 0u32;
        for (p, n) in per_in {
            let mut d = [0u32; 2];
            for (i, c) in [ctr::FWD_PKTS, ctr::STATE_DROP].into_iter().enumerate() {
                let v = self.read_reg(Bank::Ext(p).addr(c))?;
                let e = self.ctr_exp.entry((Bank::Ext(p), c)).or_default();
                d[i] = v.wrapping_sub(*e);
                *e = v;
            }
            if d[0].wrapping_add(d[1]) != n {
                self.mismatch(format!(
                    "egress link down on port {q}: input {p} sent {n} packets to it, FwdPkts +{} StateDrop +{}",
                    d[0], d[1]
                ));
            }
            swallowed = swallowed.wrapping_add(d[0]);
        }
        let mut tx_counted = 0u32;
        for c in [ctr::TX_VL15_PKTS, ctr::TX_DATA_PKTS, ctr::TX_WORDS] {
            let v = self.read_reg(Bank::Ext(q).addr(c))?;
            let e = self.ctr_exp.entry((Bank::Ext(q), c)).or_default();
            let d = v.wrapping_sub(*e);
            *e = v;
            if c != ctr::TX_WORDS {
                tx_counted = tx_counted.wrapping_add(d);
            }
        }
        if tx_counted > swallowed {
            self.mismatch(format!(
                "egress link down on port {q}: {tx_counted} packets counted sent, {swallowed} forwarded to it"
            ));
        }
        self.tally.egress_swallowed += u64::from(swallowed);
        Ok((k as u32, swallowed, tx_counted))
    }

    /// Directed: reset while packets are arriving and leaving. Whatever was
    /// in flight is lost; afterwards no output shows a beat, the switch is
    /// idle, every counter reads 0, and after programming it forwards again.
    pub fn reset_mid_traffic(&mut self, rng: &mut Rng, after_cycles: u64) -> Result<()> {
        for _ in 0..after_cycles {
            self.cycle()?;
        }
        self.tally.resets += 1;
        self.tally.lost_to_reset +=
            self.expected_left() as u64 + self.drv.iter().map(|d| d.q.len() as u64).sum::<u64>();
        for d in &mut self.drv {
            d.q.clear();
            d.pos = 0;
        }
        self.pin.iter_mut().for_each(|p| {
            p.rx_tvalid = false;
            p.rx_tlast = false;
        });
        self.dev.reset(range(rng, 1, 8) as u32)?;
        let self_w = self.dev.data_w();
        // Fresh host side: what was half received is gone with the wire.
        let pats: Vec<Pattern> = self.tx.iter().map(|_| Pattern::Always).collect();
        self.tx = pats.into_iter().map(Sink::new).collect();
        self.sma_rx = Sink::new(Pattern::Always);
        self.sm_rx = Sink::new(Pattern::Always);
        self.gmp_rx = Sink::new(Pattern::Always);
        self.sma_tx = Source::new(self_w, Pattern::Always);
        self.sm_tx = Source::new(self_w, Pattern::Always);
        self.trap_tx = Source::new(self_w, Pattern::Always);
        self.gmp_tx = Source::new(self_w, Pattern::Always);
        self.exp.clear();
        self.ctr_exp.clear();
        self.inflight.clear();
        self.psns.clear();
        self.model.s = SwitchState::after_reset(NPORTS);
        for _ in 0..300 {
            self.cycle()?;
            let o = self.dout;
            let any = self.pout.iter().any(|p| p.tx_tvalid)
                || o.sma_rx_tvalid
                || o.sm_rx_tvalid
                || o.gmp_rx_tvalid;
            if any {
                self.mismatch("a beat left the switch after reset with no input".into());
                break;
            }
        }
        if !self.dout.idle {
            self.mismatch("switch not idle 300 cycles after reset".into());
        }
        self.check_port_states();
        self.check_counters()?;
        self.program()
    }
}

// ===========================================================================
// The soak
// ===========================================================================

/// Options of [`soak`].
#[derive(Clone, Debug)]
pub struct SoakOptions {
    /// Packets per phase (a phase ends with a drain and a counter check).
    pub phase_packets: u64,
    /// Share of faulted packets, percent.
    pub fault_percent: u32,
    /// Drain bound (cycles after the last input beat).
    pub drain_bound: u64,
    /// Run the directed classes (overflow, link down, reset) between phases.
    pub directed: bool,
    /// DataW of the switch model (64 or 128).
    pub data_w: u32,
}

impl Default for SoakOptions {
    fn default() -> Self {
        SoakOptions {
            phase_packets: 1000,
            fault_percent: 30,
            drain_bound: DRAIN_BOUND,
            directed: true,
            data_w: 64,
        }
    }
}

/// The drain bound, worst case: every input buffer full (8 ports of 3
/// VL15 slots of 288 bytes and 2 data slots of 4224, and port 0's 2 of 288:
/// about 9,400 beats of 8 bytes) leaving through one output at the storm
/// pattern's duty of 64 cycles in 664: under 98,000 cycles. A longer drain
/// is a lockup.
pub const DRAIN_BOUND: u64 = 100_000;

/// What a soak run found.
#[derive(Clone, Debug, Default)]
pub struct SwitchSoakReport {
    pub seed: u64,
    /// DataW of the switch model.
    pub data_w: u32,
    pub packets: u64,
    pub good: u64,
    /// Faulted packets (and directed events) by class.
    pub faults: BTreeMap<String, u64>,
    pub matched: u64,
    pub mismatches: u64,
    pub mismatch_log: Vec<String>,
    pub counters_checked: u64,
    pub max_drain_cycles: u64,
    pub drain_bound: u64,
    pub resets: u64,
    pub lost_to_reset: u64,
    /// Packets sent into an output whose link fell (none may appear).
    pub egress_swallowed: u64,
    pub cycles: u64,
    pub wall: Duration,
}

impl std::fmt::Display for SwitchSoakReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "switch soak DATA_W {} seed {}: {} packets ({} good), {} delivered as predicted, {} mismatches",
            self.data_w, self.seed, self.packets, self.good, self.matched, self.mismatches
        )?;
        writeln!(
            f,
            "cycles {}, wall {:.2} s, max drain {} cycles (bound {}), {} counters checked, {} resets ({} packets lost to them), {} sent into a falling link",
            self.cycles,
            self.wall.as_secs_f64(),
            self.max_drain_cycles,
            self.drain_bound,
            self.counters_checked,
            self.resets,
            self.lost_to_reset,
            self.egress_swallowed
        )?;
        for (k, v) in &self.faults {
            writeln!(f, "  {k:<20} {v}")?;
        }
        for m in &self.mismatch_log {
            writeln!(f, "  MISMATCH {m}")?;
        }
        Ok(())
    }
}

/// Phase `k`'s patterns: line rate; idle beats on the wires; random
/// backpressure; storms (outputs stalled for long stretches).
pub fn phase_patterns(k: u64, rng: &mut Rng) -> Patterns {
    let n = usize::from(NPORTS);
    let seed = rng.next_u64();
    match k % 4 {
        0 => Patterns::line_rate(),
        1 => Patterns {
            rx: Pattern::Random { percent: 60, seed },
            tx: vec![Pattern::Always; n],
            host: Pattern::Always,
        },
        2 => Patterns {
            rx: Pattern::Always,
            tx: (0..n)
                .map(|i| Pattern::Random {
                    percent: 30 + 10 * (i as u32 % 5),
                    seed: seed + i as u64,
                })
                .collect(),
            host: Pattern::Random {
                percent: 50,
                seed: seed ^ 1,
            },
        },
        _ => Patterns {
            rx: Pattern::Always,
            tx: (0..n)
                .map(|i| {
                    if (seed >> i) & 1 == 1 {
                        Pattern::Periodic { on: 64, off: 600 }
                    } else {
                        Pattern::Random {
                            percent: 70,
                            seed: seed + i as u64,
                        }
                    }
                })
                .collect(),
            host: Pattern::Periodic { on: 40, off: 200 },
        },
    }
}

/// Soak the 8-port switch: `packets` generated packets (good and faulted,
/// back to back on all inputs) against the model, in phases of changing
/// idle/backpressure patterns, each ending with a drain and a check of
/// every counter; between phases the directed classes (VL15 overflow, link
/// down mid-packet, reset mid-traffic).
pub fn soak(seed: u64, packets: u64, opt: &SoakOptions) -> Result<SwitchSoakReport> {
    let t0 = Instant::now();
    let mut b = Bench::with_width(seed, opt.data_w)?;
    let mut rng = Rng::new(seed);
    let mut phase = 0u64;
    while b.tally.injected < packets {
        let k = opt.phase_packets.min(packets - b.tally.injected).max(1);
        let pat = phase_patterns(phase, &mut rng);
        b.set_patterns(&pat);
        for _ in 0..k {
            let g = b.gen(&mut rng, opt.fault_percent);
            b.push(g);
        }
        let reset_now = opt.directed && phase % 8 == 7;
        if reset_now {
            let at = range(&mut rng, 50, 3000);
            b.reset_mid_traffic(&mut rng, at)?;
        } else {
            b.drain(opt.drain_bound)?;
            b.set_patterns(&Patterns::line_rate());
            if opt.directed {
                match phase % 8 {
                    1 | 5 => {
                        let extra = range(&mut rng, 1, 4) as usize;
                        b.vl15_overflow(&mut rng, extra)?;
                        b.drain(opt.drain_bound)?;
                        let extra = range(&mut rng, 1, 3) as usize;
                        b.data_overflow(&mut rng, extra)?;
                        b.drain(opt.drain_bound)?;
                    }
                    3 => {
                        b.link_down_mid_packet(&mut rng)?;
                        b.drain(opt.drain_bound)?;
                        b.egress_link_down(&mut rng)?;
                    }
                    _ => {}
                }
            }
            b.check_counters()?;
        }
        phase += 1;
    }
    // The last phase may have ended in a reset: one more drained check.
    b.drain(opt.drain_bound)?;
    b.check_counters()?;
    let t = &b.tally;
    let good: u64 = FaultClass::GOOD
        .iter()
        .map(|c| t.by_class.get(c.name()).copied().unwrap_or(0))
        .sum();
    let mut faults: BTreeMap<String, u64> = t
        .by_class
        .iter()
        .filter(|(k, _)| !k.starts_with("good_"))
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    faults.insert("reset".into(), t.resets);
    Ok(SwitchSoakReport {
        data_w: opt.data_w,
        seed,
        packets: t.injected,
        good,
        faults,
        matched: t.matched,
        mismatches: t.mismatches,
        mismatch_log: t.log.clone(),
        counters_checked: t.counters_checked,
        max_drain_cycles: t.max_drain,
        drain_bound: opt.drain_bound,
        resets: t.resets,
        lost_to_reset: t.lost_to_reset,
        egress_swallowed: t.egress_swallowed,
        cycles: b.cycle_count(),
        wall: t0.elapsed(),
    })
}
