//! QP1 (the GSI) on the host side of every CA port and of every switch's
//! port 0 of a [`Net`]: general management packets (GMPs) as UD datagrams
//! on a data VL, a performance management agent (PMA) per CA port and per
//! switch answering from the RTL's own counters, and a GMP client that
//! follows one GSA redirect.
//!
//! * Sending ([`Gsi::send`]): the host builds the whole packet, LRH..ICRC
//!   (ibspec §1-§3): LRH VL = the port's SL2VL entry for the SL (VL 0 for
//!   SL 0 with the default and the SM's tables), LNH 2, DLID, SLID = the
//!   port's base LID; BTH UD SEND Only (0x64), P_Key 0xFFFF, DestQP; DETH
//!   Q_Key (0x80010000 for QP1, [ib_types] `IB_QP1_WELL_KNOWN_Q_KEY`),
//!   SrcQP; ICRC ([`crate::proto::crc`]) — and hands it to the CA port's data TX
//!   stream (`dtx`, [`Net::data_send`]). The port appends the VCRC; the RTL
//!   switches forward it LID-routed on its data VL. A GMP to one of the
//!   port's own LIDs never reaches the wire: the host loops it back, as an
//!   HCA does.
//! * Receiving ([`Gsi::poll`]): what the CA ports deliver on `drx`. A packet
//!   that comes with `tuser` on its last beat was discarded by the RTL and
//!   is dropped whole. The rest is checked as the kernel and the HCA driver
//!   check a UD receive (ibspec §6: [qib_ud] `qib_ud_rcv`, [mad.c]
//!   `validate_mad`): structure (LNH 2, UD SEND Only, 256-byte MAD), ICRC,
//!   VL ≠ 15, DLID one of the port's LIDs, BaseVersion 1, no SM class on a
//!   GSI QP, Q_Key 0x80010000 on QP1 (else dropped and counted in
//!   [`GsiStats`]). PerfMgt requests for a PMA are answered here; every other
//!   GMP (responses, SA and other classes, QPs > 1 no agent owns) goes to
//!   [`Gsi::inbox`] for the layer above (`vl15 serve`, [`GmpClient`]).
//!   When the RTL's GSI check (`gsi_rx_check`, ibspec §6) is in the CA, the
//!   bad GMPs it flags arrive with `tuser` set; the host checks then only
//!   repeat what the RTL did. The RTL also checks a QP1 packet's P_Key
//!   against the port's P_Key table and its Q_Key (ibspec §2) and says why
//!   it discarded a packet (`drx_reason`, `gmp_rx_reason`): for a P_Key or
//!   Q_Key violation the node's SMA sends Trap 257 / 258 to the port's
//!   MasterSMLID with the dropped packet's fields ([`key_violation_of`],
//!   [`Net::key_violation_trap`]); the violations are counted in the RTL
//!   (PortInfo P_KeyViolations / Q_KeyViolations).
//! * The PMA ([`Pma`]): PerfMgt (class 0x04, ClassVersion 1)
//!   Get(ClassPortInfo), Get/Set(PortCounters), Get/Set
//!   (PortCountersExtended), read through the register interface from the
//!   port's RTL counters (see [`PortCounters`] for the mapping and its
//!   sources). Set(PortCounters) clears the RTL counters behind the fields
//!   its CounterSelect names, in the RTL, with one write of their mask to
//!   the port's `RegCtrClearSel` (every reader of those counters sees them
//!   cleared, as on an HCA whose hardware counters are reset). Unsupported
//!   methods and attributes get the
//!   IBA status (ibspec §7): 0x0004 bad class version, 0x0008 method
//!   unsupported, 0x000C method/attribute unsupported, 0x001C invalid field.
//!   A PMA may be configured to redirect ([`Redirect`]): then it answers
//!   every QP1 request with status 0x0002 and a ClassPortInfo naming the
//!   redirect target, and serves on the redirect QP instead (with that QP's
//!   own Q_Key; QP > 1 packets pass the RTL with the ICRC check only).
//! * The client ([`GmpClient`]) sends a request and runs the fabric until
//!   its response; on status Redirect it re-sends once to the ClassPortInfo
//!   target (RedirectLID/QP/Q_Key/SL, as libibmad `mad_rpc`/`redirect_port`
//!   do) and refuses a second redirect (a loop).
//!
//! Switches: the host side of port 0 sends on the switch's `gmp_tx`
//! ([`Net::gmp_send`]: SLID = the port-0 LID, routed by the LFT) and
//! receives what the switch delivers on `gmp_rx` (data-VL packets for the
//! port-0 LID, after the RTL's `gsi_rx_check`; `tuser` = discard). The
//! port-0 LID (LMC 0) is the one the switch owns. Its PMA answers for
//! PortSelect 0..N and AllPortSelect (0xFF) from the switch's RTL counters
//! ([`switch_counters`] has the mapping), and Set(PortCounters) clears
//! them with the switch's `CTR_CLEAR_SEL + p` ([`switch_reset`]).
//!
//! Nothing here panics on what arrives from the wire.

use std::collections::VecDeque;

use anyhow::{anyhow, bail, Context, Result};

use crate::agents::node_sma::Net;
use crate::model::node_hw::{KeyViolation, TRAP_BAD_P_KEY, TRAP_BAD_Q_KEY};
use crate::model::regmap::mpreg;
use crate::model::regmap::{gsi_reason, reg};
use crate::proto::mad::{self, put16, put32, Mad};
use crate::proto::packet::consts::*;
use crate::proto::packet::smp::{be16, be32};
use crate::proto::packet::{Bth, Deth, Lrh, Packet};

/// ClassVersion of the PerfMgt class (IBA 1.2: 1).
pub const PMA_CLASS_VERSION: u8 = 1;
/// PerfMgt attributes ([ib_pma.h] `IB_PMA_PORT_COUNTERS`, `..._EXT`).
pub const ATTR_PORT_COUNTERS: u16 = 0x0012;
pub const ATTR_PORT_COUNTERS_EXT: u16 = 0x001D;
/// PerfMgt ClassPortInfo CapabilityMask bit 9: PortCountersExtended
/// supported; bit 10: ... without the unicast/multicast counters
/// (Linux `include/rdma/ib_pma.h` `IB_PMA_CLASS_CAP_EXT_WIDTH`,
/// `IB_PMA_CLASS_CAP_EXT_WIDTH_NOIETF`; perfquery tests both).
pub const PMA_CAP_EXT_WIDTH_NOIETF: u16 = 1 << 10;
/// PerfMgt ClassPortInfo CapabilityMask bit 8: AllPortSelect supported
/// (`IB_PMA_CLASS_CAP_ALLPORTSELECT`).
pub const PMA_CAP_ALL_PORT_SELECT: u16 = 1 << 8;
/// PortSelect of "every port of the node" (switches only).
pub const ALL_PORT_SELECT: u8 = 0xFF;
/// ClassPortInfo RespTimeValue the PMA reports (the qib driver's 18).
pub const PMA_RESP_TIME_VALUE: u8 = 18;
/// Offset of the GMP data area in a MAD (libibmad `IB_PC_DATA_OFFS` 64).
pub const GMP_DATA: usize = 64;

/// Where a GMP goes: the address handle and remote QP/Q_Key of a UD send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GmpDest {
    pub dlid: u16,
    pub sl: u8,
    pub qp: u32,
    pub qkey: u32,
    pub pkey: u16,
}

impl GmpDest {
    /// QP1 of the port at `dlid` (SL 0, default P_Key, the GSI Q_Key).
    pub fn qp1(dlid: u16) -> GmpDest {
        GmpDest {
            dlid,
            sl: 0,
            qp: QP1,
            qkey: QP1_Q_KEY,
            pkey: DEFAULT_P_KEY,
        }
    }
}

/// A GMP a CA port's host received and that no agent here consumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GmpRecv {
    /// Receiving device and port.
    pub dev: usize,
    pub port: u8,
    pub slid: u16,
    pub dlid: u16,
    pub sl: u8,
    pub src_qp: u32,
    pub dest_qp: u32,
    pub qkey: u32,
    pub mad: Mad,
    pub cycle: u64,
}

impl GmpRecv {
    pub fn is_response(&self) -> bool {
        mad::method(&self.mad) & METHOD_RESP_BIT != 0
    }
}

/// What the host GSI counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct GsiStats {
    /// GMPs handed to a port's data TX stream.
    pub sent: u64,
    /// GMPs to the sending port's own LID, looped back by the host.
    pub looped: u64,
    /// Packets taken from the ports' data RX streams.
    pub received: u64,
    /// Delivered with `tuser`: the RTL discarded them.
    pub rtl_discarded: u64,
    /// Not a local UD SEND Only packet with a 256-byte MAD.
    pub malformed: u64,
    pub icrc_err: u64,
    /// VL 15 on a data VL, DestQP 0, BaseVersion ≠ 1, an SM class on a GSI
    /// QP.
    pub bad_hdr: u64,
    /// DLID not one of the receiving port's LIDs.
    pub lid_err: u64,
    /// Q_Key not the one of the destination QP.
    pub qkey_err: u64,
    /// Of `rtl_discarded`: QP1 packets the RTL dropped for a P_Key matching
    /// no entry of the port's table / a Q_Key ≠ 0x80010000 (reason code
    /// with tlast).
    pub pkey_viol: u64,
    pub qkey_viol: u64,
    /// Trap 257/258 handed to the node's SMA (not sent while the port has
    /// no LID or MasterSMLID).
    pub key_traps: u64,
    /// Requests a PMA answered (redirects included).
    pub pma_answers: u64,
    /// GMPs left in the inbox for the layer above.
    pub to_inbox: u64,
}

/// Where a redirecting PMA sends its requesters (ClassPortInfo
/// RedirectLID/SL/P_Key/QP/Q_Key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redirect {
    /// 0: the port's own base LID (written into the ClassPortInfo, since
    /// libibmad refuses RedirectLID 0, "GID-based redirection").
    pub lid: u16,
    pub sl: u8,
    pub qp: u32,
    pub qkey: u32,
    pub pkey: u16,
}

/// The RTL counters of one CA port, as the PMA maps them to PortCounters.
///
/// The field layout is libibmad's (linux-rdma/rdma-core `libibmad/fields.c`,
/// `IB_PC_*_F`, offsets from the start of the GMP data area, MAD byte 64):
/// PortSelect `BITSOFFS(8,8)` → byte 1, CounterSelect `BITSOFFS(16,16)` →
/// 2..3, SymbolErrorCounter 4..5, LinkErrorRecoveryCounter 6,
/// LinkDownedCounter 7, PortRcvErrors `BITSOFFS(64,16)` → 8..9,
/// PortRcvRemotePhysicalErrors 10..11, PortRcvSwitchRelayErrors 12..13,
/// PortXmitDiscards 14..15, PortXmitConstraintErrors 16,
/// PortRcvConstraintErrors 17, CounterSelect2 18, LocalLinkIntegrityErrors
/// byte 19 bits 7:4, ExcessiveBufferOverrunErrors byte 19 bits 3:0,
/// VL15Dropped `BITSOFFS(176,16)` → 22..23, PortXmitData `{192,32}` →
/// 24..27, PortRcvData 28..31, PortXmitPkts 32..35, PortRcvPkts 36..39,
/// PortXmitWait 40..43. CounterSelect bits (Linux `include/rdma/ib_pma.h`
/// `IB_PMA_SEL_*`): 0x0008 PortRcvErrors, 0x0800 VL15Dropped, 0x1000
/// PortXmitData, 0x2000 PortRcvData, 0x4000 PortXmitPkts, 0x8000
/// PortRcvPkts.
///
/// Mapping to the RTL counters (`ib_pkg::ctr_e`, [`reg::COUNTERS`]):
/// - PortRcvErrors: packets received with an error, which the IBA counts
///   as local physical errors (ICRC, VCRC), malformed packets (LVer,
///   length, LNH) and buffer overruns — the qib driver sums the same kinds
///   (`qib_get_counters`: RXDROPPKT, RCVOVFL, ERR_RLEN, INVALIDRLEN,
///   ERRLINK, ERRICRC, ERRVCRC, ERRLPCRC, BADFORMAT, RXLOCALPHYERR,
///   RXVLERR) = `rx_vcrc_err + rx_lver_err + rx_lnh_err + rx_len_err +
///   smi_icrc_err + data_icrc_err`. SMP/GMP header validation failures are not link errors and
///   are not in it (the SMI/GSI discard them silently, ibspec §6).
/// - VL15Dropped: `vl15_dropped` (ibspec §11: an SMP dropped for want of a
///   VL15 buffer; the RTL also counts a MAD for the SM with no receive WQE).
/// - PortXmitPkts: every packet sent, `tx_vl15_pkts + tx_data_pkts`;
///   PortRcvPkts: every packet received, errors included, `rx_pkts` (IBA:
///   "including packets containing errors").
/// - PortXmitData / PortRcvData (words of 4 bytes, LRH to ICRC: the
///   LRH.PktLen unit): `tx_words` / `rx_words`.
/// - Every other field: 0 (the RTL models no PHY, no flow control, no
///   constraint checks).
///
/// IBA PortCounters fields saturate at their width (16/8/4 bits; the 32-bit
/// ones at 2^32 − 1); the RTL counters are 32-bit and wrap, so the PMA
/// reports min(value, field maximum). A 32-bit field cannot show that its
/// counter wrapped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortCounters {
    pub rcv_errors: u64,
    /// PortRcvSwitchRelayErrors (switch ports only; 0 on a CA).
    pub rcv_sw_relay_errors: u64,
    pub vl15_dropped: u64,
    pub xmit_data: u64,
    pub rcv_data: u64,
    pub xmit_pkts: u64,
    pub rcv_pkts: u64,
}

/// (CounterSelect bit, RTL counter names) of every PortCounters field the
/// RTL feeds.
const FIELDS: [(u16, &[&str]); 6] = [
    (
        0x0008,
        &[
            "rx_vcrc_err",
            "rx_lver_err",
            "rx_lnh_err",
            "rx_len_err",
            "smi_icrc_err",
            "data_icrc_err",
        ],
    ),
    (0x0800, &["vl15_dropped"]),
    (0x1000, &["tx_words"]),
    (0x2000, &["rx_words"]),
    (0x4000, &["tx_vl15_pkts", "tx_data_pkts"]),
    (0x8000, &["rx_pkts"]),
];

/// PortCountersExtended CounterSelect bits (`IB_PMA_SELX_*`) onto the
/// PortCounters bits of the same counters.
const EXT_SELECT: [(u16, u16); 4] = [
    (0x0001, 0x1000),
    (0x0002, 0x2000),
    (0x0004, 0x4000),
    (0x0008, 0x8000),
];

fn counter_index(name: &str) -> Option<u8> {
    reg::COUNTERS
        .iter()
        .position(|c| *c == name)
        .map(|i| i as u8)
}

/// The PMA of one CA port.
#[derive(Debug, Clone, Default)]
pub struct Pma {
    pub redirect: Option<Redirect>,
}

impl Pma {
    /// The PortCounters of CA `d` port `p` as this PMA reports them (the
    /// raw sums, unsaturated). Reads registers: simulates cycles.
    pub fn counters(&self, net: &mut Net, d: usize, p: u8) -> Result<PortCounters> {
        let mut v = [0u64; 6];
        for (k, (_, names)) in FIELDS.iter().enumerate() {
            for name in names.iter() {
                let i = counter_index(name)
                    .ok_or_else(|| anyhow!("the RTL register map has no counter {name}"))?;
                let raw = net.read_reg(d, mpreg::port(p, reg::CTR_BASE + i))?;
                v[k] += u64::from(raw);
            }
        }
        Ok(PortCounters {
            rcv_errors: v[0],
            rcv_sw_relay_errors: 0,
            vl15_dropped: v[1],
            xmit_data: v[2],
            rcv_data: v[3],
            xmit_pkts: v[4],
            rcv_pkts: v[5],
        })
    }

    /// Clear, in the RTL, the counters behind the PortCounters fields whose
    /// CounterSelect bits are set (one `RegCtrClearSel` write; it lands
    /// before any later register read of the device).
    pub fn reset(&mut self, net: &mut Net, d: usize, p: u8, select: u16) -> Result<()> {
        let mut mask = 0u32;
        for (bit, names) in FIELDS {
            if select & bit == 0 {
                continue;
            }
            for name in names {
                let i = counter_index(name)
                    .ok_or_else(|| anyhow!("the RTL register map has no counter {name}"))?;
                mask |= 1 << i;
            }
        }
        if mask != 0 {
            net.write_reg(d, mpreg::port(p, reg::CTR_CLEAR_SEL), mask);
        }
        Ok(())
    }
}

/// Where a switch PortCounters field comes from: counter `c` of an
/// external port (`swreg::ctr(p, c)`), of port 0's SMI bank
/// (`swreg::ctr(0, c)`) or of port 0's GMP bank (`swreg::ctr0g(c)`), times
/// a weight (PortRcvData/PortXmitData of the SMI: 72 words per SMP).
#[derive(Debug, Clone, Copy)]
enum SwSrc {
    Ext(u8),
    Smi(u8, u64),
    Gmp(u8),
}

/// CounterSelect bit of PortRcvSwitchRelayErrors (`IB_PMA_SEL_*`: 0x0020).
const SEL_RCV_SW_RELAY: u16 = 0x0020;

/// PktLen (4-byte words, LRH..ICRC) of every SMP: 8 + 12 + 8 + 256 + 4
/// bytes (ibspec §11).
const SMP_WORDS: u64 = 72;

/// The switch PortCounters fields (CounterSelect bit, field index in
/// [`PortCounters`] order: RcvErrors, RcvSwitchRelayErrors, VL15Dropped,
/// XmitData, RcvData, XmitPkts, RcvPkts) and their RTL counters, for an
/// external port (`port0` false) or port 0. See [`switch_counters`].
fn switch_fields(port0: bool) -> [(u16, Vec<SwSrc>); 7] {
    use crate::model::regmap::swreg as s;
    use SwSrc::*;
    if !port0 {
        // sw_ctr_e: 1 RxVcrcErr, 2 RxLenErr, 3 RxLverErr, 4 RxLnhErr,
        // 6 DataDropped, 7 LinkDownDrop, 8 NoRoute, 9 LoopDrop.
        [
            (0x0008, vec![Ext(1), Ext(2), Ext(3), Ext(4), Ext(6), Ext(7)]),
            (SEL_RCV_SW_RELAY, vec![Ext(8), Ext(9)]),
            (0x0800, vec![Ext(s::ctr::VL15_DROPPED)]),
            (0x1000, vec![Ext(s::ctr::TX_WORDS)]),
            (0x2000, vec![Ext(s::ctr::RX_WORDS)]),
            (0x4000, vec![Ext(12), Ext(s::ctr::TX_DATA_PKTS)]),
            (0x8000, vec![Ext(s::ctr::RX_PKTS)]),
        ]
    } else {
        // sw_ctr0_e: 0 ToSma, 1 ToSm, 2 IcrcErr, 6 DrForwarded,
        // 8 Vl15Dropped, 9 SqPkts, 12 NoRoute, 13 LoopDrop.
        [
            (0x0008, vec![Smi(2, 1), Gmp(s::ctr::G_ICRC_ERR)]),
            (SEL_RCV_SW_RELAY, vec![Smi(12, 1), Smi(13, 1)]),
            (0x0800, vec![Smi(s::ctr::P0_VL15_DROPPED, 1)]),
            (0x1000, vec![Smi(9, SMP_WORDS), Gmp(s::ctr::G_TX_WORDS)]),
            (
                0x2000,
                vec![
                    Smi(0, SMP_WORDS),
                    Smi(1, SMP_WORDS),
                    Smi(6, SMP_WORDS),
                    Gmp(s::ctr::G_RX_WORDS),
                ],
            ),
            (0x4000, vec![Smi(9, 1), Gmp(s::ctr::G_TX_PKTS)]),
            (
                0x8000,
                vec![Smi(0, 1), Smi(1, 1), Smi(6, 1), Gmp(s::ctr::G_RX_PKTS)],
            ),
        ]
    }
}

/// The PortCounters of switch `d` port `p` (0 = the management port) from
/// the switch's RTL counters, unsaturated. Reads registers: simulates
/// cycles.
///
/// External port p (`ib_pkg::sw_ctr_e`, counted at the port the packet came
/// in on), against the IBA PortCounters definitions (IBA 1.2.1 §16.1.3.5;
/// field layout and CounterSelect bits as for a CA, see [`PortCounters`]):
/// - PortRcvPkts = RxPkts ("including packets containing errors");
///   PortXmitPkts = TxVl15Pkts + TxDataPkts; PortRcvData/PortXmitData =
///   RxWords/TxWords (PktLen units: 4-byte words LRH..ICRC, as the IBA
///   counts data "divided by 4"); VL15Dropped = Vl15Dropped.
/// - PortRcvErrors = RxVcrcErr + RxLenErr + RxLverErr + RxLnhErr +
///   DataDropped + LinkDownDrop: the IBA lists local physical errors (VCRC),
///   malformed packets (LVer, length) and "packets discarded due to buffer
///   overrun" (DataDropped: a good data packet with no free input slot),
///   and a packet cut by its link going down is a physical receive error
///   (the BAD PACKET DISCARD of the receiver); qib sums the same kinds
///   (`qib_get_counters`: RCVOVFL, ERR_RLEN, ERRVCRC, BADFORMAT, ...).
/// - PortRcvSwitchRelayErrors = NoRoute + LoopDrop: the IBA's "packets
///   received on the port that were discarded because they could not be
///   forwarded by the switch relay", for DLID mapping (NoRoute) and
///   looping, output port = input port (LoopDrop).
/// - PortXmitDiscards: 0. The IBA counts there, at the *output* port,
///   packets discarded because that port is not Active (or congested,
///   MTU, lifetime); the RTL counts its StateDrop at the *input* port (and
///   it also holds drops for an input that is not Active), so putting it in
///   port p's PortXmitDiscards would report discards of packets port p never
///   tried to send. StateDrop stays readable as a register only.
///
/// Port 0 (the switch's management port: its SMI and its GMP path):
/// PortRcvPkts = ToSma + ToSm + DrForwarded (SMPs the SMI took in) + GMP
/// RxPkts; PortXmitPkts = SqPkts + GMP TxPkts; PortRcvData/PortXmitData =
/// 72 words per SMP + GMP RxWords/TxWords; PortRcvErrors = SMI IcrcErr +
/// GMP IcrcErr (validation failures are not link errors, as on a CA);
/// VL15Dropped = the SMI's Vl15Dropped; PortRcvSwitchRelayErrors = port 0's
/// NoRoute + LoopDrop. ibsim counts every MAD the switch sends or receives
/// at port 0 too (`pc_updated`); its PortSelect 0..N and 0xFF (the sum of
/// ports 0..N) are what this PMA accepts.
pub fn switch_counters(net: &mut Net, d: usize, p: u8) -> Result<PortCounters> {
    use crate::model::regmap::swreg as s;
    let mut v = [0u64; 7];
    for (k, (_, srcs)) in switch_fields(p == 0).iter().enumerate() {
        for src in srcs {
            let (addr, w) = match *src {
                SwSrc::Ext(c) => (s::ctr(p, c), 1),
                SwSrc::Smi(c, w) => (s::ctr(0, c), w),
                SwSrc::Gmp(c) => (s::ctr0g(c), 1),
            };
            v[k] += w * u64::from(net.read_reg(d, addr)?);
        }
    }
    Ok(PortCounters {
        rcv_errors: v[0],
        rcv_sw_relay_errors: v[1],
        vl15_dropped: v[2],
        xmit_data: v[3],
        rcv_data: v[4],
        xmit_pkts: v[5],
        rcv_pkts: v[6],
    })
}

/// Clear, in the RTL, the counters of switch `d` port `p` behind the
/// PortCounters fields whose CounterSelect bits are set: one write of
/// `CTR_CLEAR_SEL + p` (for port 0, bits 15:0 the SMI bank and 31:16 the
/// GMP bank).
pub fn switch_reset(net: &mut Net, d: usize, p: u8, select: u16) {
    let mut mask = 0u32;
    for (bit, srcs) in switch_fields(p == 0) {
        if select & bit == 0 {
            continue;
        }
        for src in srcs {
            mask |= match src {
                SwSrc::Ext(c) | SwSrc::Smi(c, _) => 1 << c,
                SwSrc::Gmp(c) => 1 << (16 + c),
            };
        }
    }
    if mask != 0 {
        net.write_reg(
            d,
            crate::model::regmap::swreg::CTR_CLEAR_SEL + u16::from(p),
            mask,
        );
    }
}

/// PortCounters fields by name (ibsim's `PerformanceSet` spelling, any
/// case) and their CounterSelect bits; every other field has no RTL
/// counter behind it and reads 0.
const FIELD_NAMES: [(&str, u16); 7] = [
    ("PortRcvErrors", 0x0008),
    ("PortRcvSwitchRelayErrors", SEL_RCV_SW_RELAY),
    ("VL15Dropped", 0x0800),
    ("PortXmitData", 0x1000),
    ("PortRcvData", 0x2000),
    ("PortXmitPkts", 0x4000),
    ("PortRcvPkts", 0x8000),
];

/// The fields of ibsim's PerformanceSet that vl15's PMA reports as 0 (no
/// RTL counter), by attribute.
const UNMODELLED: [(&str, &[&str]); 2] = [
    (
        "PortCounters",
        &[
            "SymbolErrorCounter",
            "LinkErrorRecoveryCounter",
            "LinkDownedCounter",
            "PortRcvRemotePhysicalErrors",
            "PortXmitDiscards",
            "PortXmitConstraintErrors",
            "PortRcvConstraintErrors",
            "LocalLinkIntegrityErrors",
            "ExcessiveBufferOverrunErrors",
            "PortXmitWait",
        ],
    ),
    (
        "PortCountersExtended",
        &[
            "PortUnicastXmitPkts",
            "PortUnicastRcvPkts",
            "PortMultiCastXmitPkts",
            "PortMultiCastRcvPkts",
        ],
    ),
];

/// ibsim's other PerformanceSet attributes: none has RTL counters.
const UNMODELLED_ATTRS: [&str; 8] = [
    "PortRcvErrorDetails",
    "PortXmitDiscardDetails",
    "PortOpRcvCounters",
    "PortFlowCtlCounters",
    "PortVLOpPackets",
    "PortVLOpData",
    "PortVLXmitFlowCtlUpdateErrors",
    "PortVLXmitWaitCounters",
];

/// The RTL counters (register address, weight) behind the PortCounters
/// field with CounterSelect bit `bit` of device `d` port `p`, each with
/// whether another field counts it too.
fn field_sources(net: &Net, d: usize, p: u8, bit: u16) -> Vec<(u16, u64, bool)> {
    use crate::model::regmap::swreg as s;
    if net.devs[d].is_switch {
        let fields = switch_fields(p == 0);
        let addr = |src: &SwSrc| match *src {
            SwSrc::Ext(c) => (s::ctr(p, c), 1),
            SwSrc::Smi(c, w) => (s::ctr(0, c), w),
            SwSrc::Gmp(c) => (s::ctr0g(c), 1),
        };
        let Some((_, srcs)) = fields.iter().find(|(b, _)| *b == bit) else {
            return Vec::new();
        };
        srcs.iter()
            .map(|src| {
                let (a, w) = addr(src);
                let shared = fields
                    .iter()
                    .filter(|(b, _)| *b != bit)
                    .any(|(_, o)| o.iter().any(|x| addr(x).0 == a));
                (a, w, shared)
            })
            .collect()
    } else {
        FIELDS
            .iter()
            .find(|(b, _)| *b == bit)
            .map(|(_, names)| {
                names
                    .iter()
                    .filter_map(|n| counter_index(n))
                    .map(|i| (mpreg::port(p, reg::CTR_BASE + i), 1, false))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// ibsim's console `PerformanceSet "node"[p] attr.field=value` on the RTL:
/// the field's RTL counters are written (their simulation-only write
/// path, docs/arch.md) so that the PMA reports `value`. A field that is a
/// sum of counters gets `value` in its first counter and 0 in the others,
/// but for counters it shares with another field (switch port 0's SMI
/// packet counters, which also give its data words): those keep their
/// value and the first counter gets the rest. The error is the line to
/// print.
pub fn set_counter(
    net: &mut Net,
    d: usize,
    p: u8,
    attr: &str,
    field: &str,
    value: u64,
) -> std::result::Result<(), String> {
    let ext = if attr.eq_ignore_ascii_case("PortCounters") {
        false
    } else if attr.eq_ignore_ascii_case("PortCountersExtended") {
        true
    } else if UNMODELLED_ATTRS
        .iter()
        .any(|a| a.eq_ignore_ascii_case(attr))
    {
        return Err(format!(
            "attribute {attr} has no counters in the RTL (vl15's PMA answers 0)"
        ));
    } else {
        return Err(format!("attribute {attr} not found"));
    };
    let known = FIELD_NAMES
        .iter()
        .filter(|(_, b)| !ext || [0x1000, 0x2000, 0x4000, 0x8000].contains(b))
        .find(|(n, _)| n.eq_ignore_ascii_case(field));
    let Some(&(_, bit)) = known else {
        let unmodelled = UNMODELLED
            .iter()
            .filter(|(a, _)| a.eq_ignore_ascii_case(attr))
            .any(|(_, fs)| fs.iter().any(|f| f.eq_ignore_ascii_case(field)));
        return Err(if unmodelled {
            format!("{attr}.{field} has no RTL counter (vl15's PMA answers 0)")
        } else {
            format!("field {field} cannot be found in attribute {attr}")
        });
    };
    let srcs = field_sources(net, d, p, bit);
    let Some(&(target, _, _)) = srcs.iter().find(|(_, w, shared)| *w == 1 && !shared) else {
        return Err(format!(
            "{attr}.{field} has no RTL counter at \"{}\"[{p}] (vl15's PMA answers 0)",
            net.devs[d].name
        ));
    };
    let mut kept = 0u64;
    for &(a, w, shared) in &srcs {
        if shared {
            let v = net.read_reg(d, a).map_err(|e| format!("{e:#}"))?;
            kept += w * u64::from(v);
        }
    }
    let rest = value.checked_sub(kept).ok_or_else(|| {
        format!(
            "{attr}.{field} of \"{}\"[{p}] can't go below {kept}: that much comes from counters it shares with other fields",
            net.devs[d].name
        )
    })?;
    let rest = u32::try_from(rest)
        .map_err(|_| format!("value {value} is over the RTL counter's 32 bits"))?;
    for &(a, _, shared) in &srcs {
        if a == target {
            net.write_reg(d, a, rest);
        } else if !shared {
            net.write_reg(d, a, 0);
        }
    }
    Ok(())
}

/// Field-wise sum of two PortCounters (AllPortSelect; the encoder
/// saturates each field at its width).
impl std::ops::Add for PortCounters {
    type Output = PortCounters;
    fn add(self, b: PortCounters) -> PortCounters {
        PortCounters {
            rcv_errors: self.rcv_errors + b.rcv_errors,
            rcv_sw_relay_errors: self.rcv_sw_relay_errors + b.rcv_sw_relay_errors,
            vl15_dropped: self.vl15_dropped + b.vl15_dropped,
            xmit_data: self.xmit_data + b.xmit_data,
            rcv_data: self.rcv_data + b.rcv_data,
            xmit_pkts: self.xmit_pkts + b.xmit_pkts,
            rcv_pkts: self.rcv_pkts + b.rcv_pkts,
        }
    }
}

impl std::ops::AddAssign for PortCounters {
    fn add_assign(&mut self, b: PortCounters) {
        *self = *self + b;
    }
}

fn sat(v: u64, bits: u32) -> u64 {
    v.min((1u64 << bits) - 1)
}

/// PortCounters data (192 bytes from MAD byte 64), saturated per field.
pub fn encode_port_counters(port_select: u8, c: &PortCounters) -> [u8; 192] {
    let mut d = [0u8; 192];
    d[1] = port_select;
    put16(&mut d, 8, sat(c.rcv_errors, 16) as u16);
    put16(&mut d, 12, sat(c.rcv_sw_relay_errors, 16) as u16);
    put16(&mut d, 22, sat(c.vl15_dropped, 16) as u16);
    put32(&mut d, 24, sat(c.xmit_data, 32) as u32);
    put32(&mut d, 28, sat(c.rcv_data, 32) as u32);
    put32(&mut d, 32, sat(c.xmit_pkts, 32) as u32);
    put32(&mut d, 36, sat(c.rcv_pkts, 32) as u32);
    d
}

/// PortCountersExtended data: PortSelect byte 1, PortXmitData 8..15,
/// PortRcvData 16..23, PortXmitPkts 24..31, PortRcvPkts 32..39 (fields.c
/// `IB_PC_EXT_*`: `{64,64}`, `{128,64}`, `{192,64}`, `{256,64}`).
pub fn encode_port_counters_ext(port_select: u8, c: &PortCounters) -> [u8; 192] {
    let mut d = [0u8; 192];
    d[1] = port_select;
    for (off, v) in [
        (8, c.xmit_data),
        (16, c.rcv_data),
        (24, c.xmit_pkts),
        (32, c.rcv_pkts),
    ] {
        d[off..off + 8].copy_from_slice(&v.to_be_bytes());
    }
    d
}

/// PortCounters as a requester reads them from a response's data area.
pub fn decode_port_counters(m: &Mad) -> PortCounters {
    let d = &m[GMP_DATA..];
    let g16 = |o: usize| u64::from(be16(d, o));
    let g32 = |o: usize| u64::from(be32(d, o));
    PortCounters {
        rcv_errors: g16(8),
        rcv_sw_relay_errors: g16(12),
        vl15_dropped: g16(22),
        xmit_data: g32(24),
        rcv_data: g32(28),
        xmit_pkts: g32(32),
        rcv_pkts: g32(36),
    }
}

/// ClassPortInfo (72 bytes at MAD byte 64). Layout: rdma-core
/// `libibmad/fields.c` `IB_CPI_*_F` / Linux `struct ib_class_port_info`
/// (`include/rdma/ib_mad.h`): 0 BaseVersion, 1 ClassVersion, 2..3
/// CapabilityMask, 4..7 CapabilityMask2 (27 bits) | RespTimeValue (5 bits),
/// 8..23 RedirectGID, 24 RedirectTC, 25 bits 7:4 RedirectSL, 25..27
/// RedirectFL (20 bits), 28..29 RedirectLID, 30..31 RedirectP_Key, 33..35
/// RedirectQP, 36..39 RedirectQ_Key, then the trap address (40..71).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClassPortInfo {
    pub base_version: u8,
    pub class_version: u8,
    pub cap_mask: u16,
    pub resp_time_value: u8,
    pub redirect_sl: u8,
    pub redirect_lid: u16,
    pub redirect_pkey: u16,
    pub redirect_qp: u32,
    pub redirect_qkey: u32,
}

impl ClassPortInfo {
    pub fn encode(&self) -> [u8; 72] {
        let mut d = [0u8; 72];
        d[0] = self.base_version;
        d[1] = self.class_version;
        put16(&mut d, 2, self.cap_mask);
        put32(&mut d, 4, u32::from(self.resp_time_value & 0x1F));
        d[25] = (self.redirect_sl & 0xF) << 4;
        put16(&mut d, 28, self.redirect_lid);
        put16(&mut d, 30, self.redirect_pkey);
        put32(&mut d, 32, self.redirect_qp & 0xFF_FFFF);
        put32(&mut d, 36, self.redirect_qkey);
        d
    }

    /// From a MAD's data area (MAD byte 64 on).
    pub fn decode(m: &Mad) -> ClassPortInfo {
        let d = &m[GMP_DATA..GMP_DATA + 72];
        ClassPortInfo {
            base_version: d[0],
            class_version: d[1],
            cap_mask: be16(d, 2),
            resp_time_value: d[7] & 0x1F,
            redirect_sl: d[25] >> 4,
            redirect_lid: be16(d, 28),
            redirect_pkey: be16(d, 30),
            redirect_qp: be32(d, 32) & 0xFF_FFFF,
            redirect_qkey: be32(d, 36),
        }
    }
}

/// The Trap 257/258 DataDetails of a packet (LRH..VCRC) the RTL discarded
/// for its P_Key (`trap` 257) or Q_Key (258): LID1 = SLID, LID2 = DLID,
/// Key = the BTH P_Key / the DETH Q_Key, SL = LRH.SL, QP1 = DETH.SrcQP,
/// QP2 = BTH.DestQP, GID1/GID2 = GRH SGID/DGID (LNH 3), else 0 (see
/// [`KeyViolation`]). None for a packet too short to hold them (the RTL
/// flags only well-formed GMPs this way).
pub fn key_violation_of(b: &[u8], trap: u16) -> Option<KeyViolation> {
    const LRH: usize = 8;
    const GRH: usize = 40;
    let grh = b.get(1)? & 3 == 3;
    let o = if grh { LRH + GRH } else { LRH };
    // BTH (12) and DETH (8) after the LRH (and GRH).
    if b.len() < o + 20 {
        return None;
    }
    let b24 = |i: usize| u32::from_be_bytes([0, b[i], b[i + 1], b[i + 2]]);
    let mut v = KeyViolation {
        lid1: be16(b, 6),
        lid2: be16(b, 2),
        key: if trap == TRAP_BAD_P_KEY {
            u32::from(be16(b, o + 2))
        } else {
            be32(b, o + 12)
        },
        sl: b[1] >> 4,
        qp1: b24(o + 17),
        qp2: b24(o + 5),
        ..KeyViolation::default()
    };
    if grh {
        v.gid1.copy_from_slice(&b[LRH + 8..LRH + 24]);
        v.gid2.copy_from_slice(&b[LRH + 24..LRH + 40]);
    }
    Some(v)
}

/// The host side of QP1 on every CA port of a fabric. See the module
/// documentation.
pub struct Gsi {
    /// The PMA of each GSI port: device index → CA port p at index p − 1;
    /// a switch has one, for its port 0, at index 0.
    pub pma: Vec<Vec<Pma>>,
    /// Device index → is a switch (its GSI is on port 0).
    switch: Vec<bool>,
    /// GMPs no agent here consumed, oldest first.
    pub inbox: VecDeque<GmpRecv>,
    /// Packets looped back by a host: (device, port, LRH..ICRC).
    loopback: VecDeque<(usize, u8, Vec<u8>)>,
    psn: u32,
    pub stats: GsiStats,
}

impl Gsi {
    pub fn new(net: &Net) -> Gsi {
        let pma = net
            .devs
            .iter()
            .map(|d| {
                if d.is_switch {
                    vec![Pma::default()]
                } else {
                    vec![Pma::default(); usize::from(d.nports)]
                }
            })
            .collect();
        Gsi {
            pma,
            switch: net.devs.iter().map(|d| d.is_switch).collect(),
            inbox: VecDeque::new(),
            loopback: VecDeque::new(),
            psn: 0,
            stats: GsiStats::default(),
        }
    }

    /// Nothing looped back waits to be received.
    pub fn idle(&self) -> bool {
        self.loopback.is_empty()
    }

    /// Index in `pma[d]` of the agent of port `p`: CA port p at p − 1,
    /// a switch's port 0 at 0; None for a port without a GSI.
    fn agent(&self, d: usize, p: u8) -> Option<usize> {
        let i = if *self.switch.get(d)? {
            (p == 0).then_some(0)?
        } else {
            usize::from(p).checked_sub(1)?
        };
        (i < self.pma.get(d)?.len()).then_some(i)
    }

    /// The PMA of CA `d` port `p`, or of switch `d` (port 0).
    pub fn pma_mut(&mut self, d: usize, p: u8) -> Result<&mut Pma> {
        let i = self
            .agent(d, p)
            .ok_or_else(|| anyhow!("device {d} has no GSI port {p}"))?;
        Ok(&mut self.pma[d][i])
    }

    /// (base LID, LMC) of CA `d` port `p`, or of switch `d`'s port 0 (LMC
    /// 0: the switch RTL delivers GMPs for the port-0 LID only), None
    /// while it has no LID or `p` has no GSI.
    fn port_lids(net: &Net, d: usize, p: u8) -> Option<(u16, u8)> {
        let dev = net.devs.get(d)?;
        if dev.is_switch != (p == 0) {
            return None;
        }
        let sma = dev.agent();
        let lid = sma.port_lid(p).filter(|&l| l != 0)?;
        let lmc = if dev.is_switch {
            0
        } else {
            sma.port_lmc(p).unwrap_or(0)
        };
        Some((lid, lmc))
    }

    fn owns(net: &Net, d: usize, p: u8, dlid: u16) -> bool {
        Self::port_lids(net, d, p)
            .is_some_and(|(lid, lmc)| u32::from(dlid).wrapping_sub(u32::from(lid)) < (1 << lmc))
    }

    /// Send `m` from QP `src_qp` of CA `d` port `p` (or switch `d` port
    /// 0) to `to`: the packet (LRH..ICRC) goes to the port's data TX stream
    /// (a switch's `gmp_tx`), or back to the port itself when `to.dlid` is
    /// one of its own LIDs.
    pub fn send(
        &mut self,
        net: &mut Net,
        d: usize,
        p: u8,
        to: &GmpDest,
        src_qp: u32,
        m: &Mad,
    ) -> Result<()> {
        let dev = net.devs.get(d).ok_or_else(|| anyhow!("no device {d}"))?;
        if dev.is_switch && p != 0 {
            bail!("{}: a switch sends GMPs from its port 0, not {p}", dev.name);
        }
        let (slid, _) = Self::port_lids(net, d, p)
            .ok_or_else(|| anyhow!("{} port {p} has no LID: it cannot send GMPs", dev.name))?;
        if to.dlid == 0 || to.dlid >= MULTICAST_LID_BASE {
            bail!(
                "{}: DLID {:#x} is not a unicast LID (a GMP is LID-routed)",
                dev.name,
                to.dlid
            );
        }
        let vl = dev.agent().sl_to_vl(p, to.sl);
        if vl == VL15 {
            bail!(
                "{} port {p}: SL {} maps to VL 15, which carries only SMPs",
                dev.name,
                to.sl
            );
        }
        let psn = self.psn;
        self.psn = (self.psn + 1) & 0xFF_FFFF;
        let mut bth = Bth::ud_send(to.qp & 0xFF_FFFF, psn);
        bth.p_key = to.pkey;
        let pkt = Packet::new(
            Lrh::local(vl, to.sl, to.dlid, slid),
            bth,
            Deth::new(to.qkey, src_qp & 0xFF_FFFF),
            *m,
        );
        let mut bytes = pkt.header_and_mad();
        crate::proto::crc::append_icrc(&mut bytes);
        if Self::owns(net, d, p, to.dlid) {
            self.stats.looped += 1;
            self.loopback.push_back((d, p, bytes));
            return Ok(());
        }
        if net.devs[d].is_switch {
            net.gmp_send(d, &bytes)?;
        } else {
            net.data_send(d, p, &bytes)?;
        }
        self.stats.sent += 1;
        Ok(())
    }

    /// Take what the CA ports received: check it, let the PMAs answer
    /// theirs, put the rest in [`Gsi::inbox`]. Returns how many GMPs went
    /// to the inbox. PMA answers read registers (simulate cycles); packets
    /// that arrive meanwhile wait for the next call.
    pub fn poll(&mut self, net: &mut Net) -> Result<usize> {
        let mut got: Vec<(usize, u8, Vec<u8>, bool, u8)> = Vec::new();
        for d in net.take_rx_pending() {
            let dev = &mut net.devs[d];
            if dev.is_switch {
                while let Some(r) = dev.gmp_rx.packets.pop_front() {
                    got.push((d, 0, r.bytes, r.bad, r.meta));
                }
                continue;
            }
            for (i, rx) in dev.data_rx.iter_mut().enumerate() {
                while let Some(r) = rx.packets.pop_front() {
                    got.push((d, i as u8 + 1, r.bytes, r.bad, r.meta));
                }
            }
        }
        while let Some((d, p, mut b)) = self.loopback.pop_front() {
            // The VCRC a port would append: the receive side parses whole
            // wire packets.
            crate::proto::crc::append_vcrc(&mut b);
            got.push((d, p, b, false, gsi_reason::OK));
        }
        let before = self.inbox.len();
        for (d, p, bytes, bad, reason) in got {
            self.stats.received += 1;
            if bad {
                self.stats.rtl_discarded += 1;
                let trap = match reason {
                    gsi_reason::PKEY_VIOL => {
                        self.stats.pkey_viol += 1;
                        TRAP_BAD_P_KEY
                    }
                    gsi_reason::QKEY_VIOL => {
                        self.stats.qkey_viol += 1;
                        TRAP_BAD_Q_KEY
                    }
                    _ => continue,
                };
                // The node's SMA reports it to the SM (ibspec §8).
                if let Some(v) = key_violation_of(&bytes, trap) {
                    if net.key_violation_trap(d, p, trap, &v) {
                        self.stats.key_traps += 1;
                    }
                }
                continue;
            }
            let Some(g) = self.check(net, d, p, &bytes) else {
                continue;
            };
            self.dispatch(net, g)?;
        }
        Ok(self.inbox.len() - before)
    }

    /// The receive checks of a UD GMP (ibspec §6); None = dropped (counted).
    fn check(&mut self, net: &Net, d: usize, p: u8, bytes: &[u8]) -> Option<GmpRecv> {
        let pkt = match Packet::parse(bytes) {
            Ok(pkt) => pkt,
            Err(_) => {
                self.stats.malformed += 1;
                return None;
            }
        };
        if !pkt.icrc_ok() {
            self.stats.icrc_err += 1;
            return None;
        }
        let class = pkt.mad[mad::off::MGMT_CLASS];
        if pkt.lrh.vl == VL15
            || pkt.bth.dest_qp == QP0
            || pkt.mad[mad::off::BASE_VERSION] != BASE_VERSION
            || class == CLASS_SUBN_LID
            || class == CLASS_SUBN_DR
        {
            self.stats.bad_hdr += 1;
            return None;
        }
        if !Self::owns(net, d, p, pkt.lrh.dlid) {
            self.stats.lid_err += 1;
            return None;
        }
        if pkt.bth.dest_qp == QP1 && pkt.deth.q_key != QP1_Q_KEY {
            self.stats.qkey_err += 1;
            return None;
        }
        Some(GmpRecv {
            dev: d,
            port: p,
            slid: pkt.lrh.slid,
            dlid: pkt.lrh.dlid,
            sl: pkt.lrh.sl,
            src_qp: pkt.deth.src_qp,
            dest_qp: pkt.bth.dest_qp,
            qkey: pkt.deth.q_key,
            mad: pkt.mad,
            cycle: net.cycle,
        })
    }

    fn dispatch(&mut self, net: &mut Net, g: GmpRecv) -> Result<()> {
        let Some(pma) = self
            .agent(g.dev, g.port)
            .and_then(|i| self.pma.get(g.dev)?.get(i))
        else {
            self.inbox.push_back(g);
            self.stats.to_inbox += 1;
            return Ok(());
        };
        let redirect = pma.redirect;
        let for_pma = if g.dest_qp == QP1 {
            mad::class(&g.mad) == CLASS_PERF && !g.is_response()
        } else if let Some(r) = redirect.filter(|r| r.qp == g.dest_qp) {
            if g.qkey != r.qkey {
                self.stats.qkey_err += 1;
                return Ok(());
            }
            mad::class(&g.mad) == CLASS_PERF && !g.is_response()
        } else {
            false
        };
        if !for_pma {
            self.inbox.push_back(g);
            self.stats.to_inbox += 1;
            return Ok(());
        }
        // Requests that expect no response (TrapRepress) get none.
        if mad::method(&g.mad) == METHOD_TRAP_REPRESS {
            return Ok(());
        }
        let resp = self.pma_answer(net, &g)?;
        self.stats.pma_answers += 1;
        let to = GmpDest {
            dlid: g.slid,
            sl: g.sl,
            qp: g.src_qp,
            qkey: if g.src_qp == QP1 { QP1_Q_KEY } else { g.qkey },
            pkey: DEFAULT_P_KEY,
        };
        if let Err(e) = self.send(net, g.dev, g.port, &to, g.dest_qp, &resp) {
            // The requester's address is not usable (e.g. SLID 0): drop.
            eprintln!(
                "vl15 gsi: {} port {}: PMA response not sent: {e:#}",
                net.devs[g.dev].name, g.port
            );
        }
        Ok(())
    }

    /// The PMA's response to request `g`.
    fn pma_answer(&mut self, net: &mut Net, g: &GmpRecv) -> Result<Mad> {
        let (d, p) = (g.dev, g.port);
        let mut r = g.mad;
        r[mad::off::METHOD] = METHOD_GET_RESP;
        r[GMP_DATA..].fill(0);
        let pma_idx = self
            .agent(d, p)
            .ok_or_else(|| anyhow!("device {d} port {p} has no PMA"))?;
        let redirect = self.pma[d][pma_idx].redirect;
        let nports = net.devs[d].nports;
        let is_switch = net.devs[d].is_switch;
        // ClassPortInfo CapabilityMask: a switch's PMA also takes
        // AllPortSelect (bit 8, `IB_PMA_CLASS_CAP_ALLPORTSELECT`), as
        // ibsim's switches report.
        let cap_mask = if is_switch {
            PMA_CAP_EXT_WIDTH_NOIETF | PMA_CAP_ALL_PORT_SELECT
        } else {
            PMA_CAP_EXT_WIDTH_NOIETF
        };
        let status = |r: &mut Mad, s: u16| put16(r, mad::off::STATUS, s);
        if g.dest_qp == QP1 {
            if let Some(rd) = redirect {
                let lid = if rd.lid == 0 {
                    Self::port_lids(net, d, p).map_or(0, |(l, _)| l)
                } else {
                    rd.lid
                };
                let cpi = ClassPortInfo {
                    base_version: BASE_VERSION,
                    class_version: PMA_CLASS_VERSION,
                    cap_mask,
                    resp_time_value: PMA_RESP_TIME_VALUE,
                    redirect_sl: rd.sl,
                    redirect_lid: lid,
                    redirect_pkey: rd.pkey,
                    redirect_qp: rd.qp,
                    redirect_qkey: rd.qkey,
                };
                r[GMP_DATA..GMP_DATA + 72].copy_from_slice(&cpi.encode());
                status(&mut r, STATUS_REDIRECT);
                return Ok(r);
            }
        }
        if g.mad[mad::off::CLASS_VERSION] != PMA_CLASS_VERSION {
            status(&mut r, STATUS_BAD_VERSION);
            return Ok(r);
        }
        let method = mad::method(&g.mad);
        if method != METHOD_GET && method != METHOD_SET {
            status(&mut r, STATUS_METHOD_UNSUPPORTED);
            return Ok(r);
        }
        let set = method == METHOD_SET;
        match mad::attr_id(&g.mad) {
            ATTR_CLASS_PORT_INFO if !set => {
                let cpi = ClassPortInfo {
                    base_version: BASE_VERSION,
                    class_version: PMA_CLASS_VERSION,
                    cap_mask,
                    resp_time_value: PMA_RESP_TIME_VALUE,
                    ..ClassPortInfo::default()
                };
                r[GMP_DATA..GMP_DATA + 72].copy_from_slice(&cpi.encode());
            }
            a @ (ATTR_PORT_COUNTERS | ATTR_PORT_COUNTERS_EXT) => {
                let ext = a == ATTR_PORT_COUNTERS_EXT;
                let port_select = g.mad[GMP_DATA + 1];
                // A CA's PMA serves every port of its node; AllPortSelect
                // (0xFF) is not supported there (ClassPortInfo bit 8
                // clear). A switch's serves ports 0..N and 0xFF = the sum
                // of ports 0..N (ibsim `do_portcounters`).
                let ok = if is_switch {
                    port_select <= nports || port_select == ALL_PORT_SELECT
                } else {
                    port_select != 0 && port_select <= nports
                };
                if !ok {
                    r[GMP_DATA + 1] = port_select;
                    status(&mut r, STATUS_INVALID_FIELD);
                    return Ok(r);
                }
                let ports: Vec<u8> = if port_select == ALL_PORT_SELECT {
                    (0..=nports).collect()
                } else {
                    vec![port_select]
                };
                let select = if set {
                    let cs = be16(&g.mad, GMP_DATA + 2);
                    if ext {
                        EXT_SELECT
                            .iter()
                            .filter(|(x, _)| cs & x != 0)
                            .fold(0, |a, (_, b)| a | b)
                    } else {
                        cs
                    }
                } else {
                    0
                };
                let mut c = PortCounters::default();
                for &ps in &ports {
                    let one = if is_switch {
                        if set {
                            switch_reset(net, d, ps, select);
                        }
                        switch_counters(net, d, ps)?
                    } else {
                        let sel = usize::from(ps) - 1;
                        if set {
                            let mut pma = std::mem::take(&mut self.pma[d][sel]);
                            let r2 = pma.reset(net, d, ps, select);
                            self.pma[d][sel] = pma;
                            r2?;
                        }
                        self.pma[d][sel].counters(net, d, ps)?
                    };
                    c += one;
                }
                let data = if ext {
                    encode_port_counters_ext(port_select, &c)
                } else {
                    encode_port_counters(port_select, &c)
                };
                r[GMP_DATA..].copy_from_slice(&data);
                // The response echoes the request's CounterSelect.
                r[GMP_DATA + 2..GMP_DATA + 4].copy_from_slice(&g.mad[GMP_DATA + 2..GMP_DATA + 4]);
            }
            _ => status(&mut r, STATUS_ATTR_UNSUPPORTED),
        }
        Ok(r)
    }

    /// Take the response to TID `tid` that reached CA `d` port `p`.
    pub fn take_response(&mut self, d: usize, p: u8, tid: u64) -> Option<GmpRecv> {
        let i = self.inbox.iter().position(|g| {
            g.dev == d && g.port == p && g.is_response() && mad::tid(&g.mad) == tid
        })?;
        self.inbox.remove(i)
    }
}

/// Why a [`GmpClient`] request failed.
#[derive(Debug, thiserror::Error)]
pub enum GmpError {
    #[error("no response from LID {lid} QP {qp:#x} within {cycles} cycles{via}")]
    Timeout {
        lid: u16,
        qp: u32,
        cycles: u64,
        /// ", redirected by LID x QP y" when the request followed a redirect.
        via: String,
    },
    #[error("LID {lid} QP {qp:#x} redirected again (to LID {to_lid} QP {to_qp:#x}) after a redirect: refusing a redirect loop")]
    RedirectLoop {
        lid: u16,
        qp: u32,
        to_lid: u16,
        to_qp: u32,
    },
    #[error("LID {lid} QP {qp:#x} redirected with RedirectLID 0 (GID-based redirection is not supported)")]
    RedirectGid { lid: u16, qp: u32 },
}

/// A GMP requester on QP1 of one CA port (what tests and tools use): one
/// request at a time, following at most one GSA redirect.
pub struct GmpClient {
    pub dev: usize,
    pub port: u8,
    /// Cycles one request (each leg of a redirect) may take.
    pub max_cycles: u64,
    next_tid: u64,
    /// Redirects followed.
    pub redirects: u64,
}

impl GmpClient {
    pub fn new(dev: usize, port: u8) -> GmpClient {
        GmpClient {
            dev,
            port,
            max_cycles: 200_000,
            next_tid: 0x6d70_0000_0000_0001,
            redirects: 0,
        }
    }

    pub fn tid(&mut self) -> u64 {
        let t = self.next_tid;
        self.next_tid += 1;
        t
    }

    /// Send one request and wait for its response (any status).
    fn once(&mut self, net: &mut Net, gsi: &mut Gsi, to: &GmpDest, req: &Mad) -> Result<Mad> {
        let tid = mad::tid(req);
        gsi.send(net, self.dev, self.port, to, QP1, req)?;
        let deadline = net.cycle + self.max_cycles;
        loop {
            gsi.poll(net)?;
            if let Some(g) = gsi.take_response(self.dev, self.port, tid) {
                return Ok(g.mad);
            }
            if net.cycle >= deadline {
                break;
            }
            if net.idle() && gsi.idle() {
                // Nothing is in flight anywhere: no response can come.
                net.cycle = deadline;
                break;
            }
            if net.quiet() {
                if let Some(w) = net.next_wake() {
                    net.cycle = net.cycle.max(w.min(deadline));
                }
            }
            net.step()?;
        }
        Err(GmpError::Timeout {
            lid: to.dlid,
            qp: to.qp,
            cycles: self.max_cycles,
            via: String::new(),
        }
        .into())
    }

    /// Send request `req` (its TID is replaced) to `to`; follow one
    /// Redirect. The response MAD (any other status is the caller's).
    pub fn rpc(&mut self, net: &mut Net, gsi: &mut Gsi, to: GmpDest, req: &Mad) -> Result<Mad> {
        let mut m = *req;
        let tid = self.tid();
        mad::set_tid(&mut m, tid);
        let r = self.once(net, gsi, &to, &m)?;
        if mad::status(&r) != STATUS_REDIRECT {
            return Ok(r);
        }
        let cpi = ClassPortInfo::decode(&r);
        if cpi.redirect_lid == 0 {
            return Err(GmpError::RedirectGid {
                lid: to.dlid,
                qp: to.qp,
            }
            .into());
        }
        let next = GmpDest {
            dlid: cpi.redirect_lid,
            sl: cpi.redirect_sl,
            qp: cpi.redirect_qp,
            qkey: cpi.redirect_qkey,
            pkey: if cpi.redirect_pkey == 0 {
                to.pkey
            } else {
                cpi.redirect_pkey
            },
        };
        self.redirects += 1;
        let tid = self.tid();
        mad::set_tid(&mut m, tid);
        let r = self
            .once(net, gsi, &next, &m)
            .map_err(|e| match e.downcast::<GmpError>() {
                Ok(GmpError::Timeout {
                    lid, qp, cycles, ..
                }) => GmpError::Timeout {
                    lid,
                    qp,
                    cycles,
                    via: format!(", redirected by LID {} QP {:#x}", to.dlid, to.qp),
                }
                .into(),
                Ok(other) => other.into(),
                Err(e) => e,
            })?;
        if mad::status(&r) == STATUS_REDIRECT {
            let again = ClassPortInfo::decode(&r);
            return Err(GmpError::RedirectLoop {
                lid: next.dlid,
                qp: next.qp,
                to_lid: again.redirect_lid,
                to_qp: again.redirect_qp,
            }
            .into());
        }
        Ok(r)
    }

    /// Get(PortCounters) of port `port_select` at LID `lid`.
    pub fn port_counters(
        &mut self,
        net: &mut Net,
        gsi: &mut Gsi,
        lid: u16,
        port_select: u8,
    ) -> Result<PortCounters> {
        let mut req = pma_request(METHOD_GET, ATTR_PORT_COUNTERS);
        req[GMP_DATA + 1] = port_select;
        let r = self
            .rpc(net, gsi, GmpDest::qp1(lid), &req)
            .with_context(|| format!("Get(PortCounters) of LID {lid} port {port_select}"))?;
        match mad::status(&r) {
            STATUS_OK => Ok(decode_port_counters(&r)),
            s => bail!("Get(PortCounters) of LID {lid} port {port_select}: status {s:#06x}"),
        }
    }
}

/// An RMPP-active MAD of an RMPP class (see [`received_mad_len`]).
fn rmpp_active(m: &Mad) -> bool {
    let class = mad::class(m);
    let rmpp_class = matches!(class, CLASS_SA | CLASS_DEV_MGT | CLASS_DEV_ADM | CLASS_BIS)
        || (0x30..=0x4F).contains(&class);
    rmpp_class && m[26] & 1 != 0
}

/// What a sending host's MAD layer writes into the RMPP header of a
/// one-segment RMPP transfer of `len` bytes (header included) that an
/// application handed it (Linux `mad_rmpp.c` `send_next_seg`: SegmentNumber
/// 1, flags First and Last, PayloadLength = segment payload − pad =
/// `len` − 36). An application using umad leaves these to the kernel;
/// umad2sim passes at most 256 bytes, so `len` is capped there (a longer
/// transfer is seen as its first, full segment). Other MADs are unchanged.
pub fn rmpp_send_header(m: &mut Mad, len: u64) {
    if !rmpp_active(m) {
        return;
    }
    let len = len.clamp(36, MAD_BYTES as u64) as u32;
    m[26] |= 0x6; // First | Last (Active is set)
    put32(m, 28, 1);
    put32(m, 32, len - 36);
}

/// The MAD length a receiving host's MAD layer reports for `m` (what
/// umad hands the application). Every MAD is 256 bytes on the wire; for an
/// RMPP-active MAD of an RMPP class the kernel derives the length from the
/// RMPP header instead (Linux `drivers/infiniband/core/mad_rmpp.c`
/// `get_mad_len`: header + segments × data − (220 − PayloadLength), i.e.
/// 36 + PayloadLength for one segment), which is how `saquery` learns how
/// many records a one-segment SA response holds. RMPP classes: SA, DevMgt,
/// DevAdm, BIS, vendor range 2 (Linux `include/rdma/ib_mad.h`
/// `ib_is_mad_class_rmpp`); RMPP header at MAD byte 24 (`struct
/// ib_rmpp_hdr`: flags in byte 26 bits 2:0, bit 0 Active; PayloadLength
/// bytes 32..35). Multi-segment transfers are not reassembled here (nor by
/// umad2sim): their first segment reads as 256 bytes.
pub fn received_mad_len(m: &Mad) -> u64 {
    if !rmpp_active(m) {
        return MAD_BYTES as u64;
    }
    let paylen = be32(m, 32);
    (36 + u64::from(paylen)).min(MAD_BYTES as u64)
}

/// A PerfMgt request header (BaseVersion 1, class 0x04, ClassVersion 1).
pub fn pma_request(method: u8, attr: u16) -> Mad {
    let mut m = mad::request(CLASS_PERF, method, attr, 0, 0);
    m[mad::off::CLASS_VERSION] = PMA_CLASS_VERSION;
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_counter_fields_sit_where_libibmad_reads_them() {
        let c = PortCounters {
            rcv_errors: 0x1_0005, // saturates at 16 bits
            rcv_sw_relay_errors: 0x0102,
            vl15_dropped: 7,
            xmit_data: 0x1_0000_0000, // saturates at 32 bits
            rcv_data: 3,
            xmit_pkts: 0x0102_0304,
            rcv_pkts: 0x0A0B_0C0D,
        };
        let d = encode_port_counters(2, &c);
        assert_eq!(d[1], 2);
        assert_eq!(&d[8..10], &[0xFF, 0xFF]);
        // PortRcvSwitchRelayErrors BITSOFFS(96,16): bytes 12..13.
        assert_eq!(&d[12..14], &[0x01, 0x02]);
        assert_eq!(&d[22..24], &[0, 7]);
        assert_eq!(&d[24..28], &[0xFF; 4]);
        assert_eq!(&d[32..36], &[1, 2, 3, 4]);
        assert_eq!(&d[36..40], &[0x0A, 0x0B, 0x0C, 0x0D]);
        let mut m = [0u8; 256];
        m[GMP_DATA..].copy_from_slice(&d);
        let back = decode_port_counters(&m);
        assert_eq!((back.vl15_dropped, back.xmit_pkts), (7, 0x0102_0304));
    }

    #[test]
    fn class_port_info_round_trips_and_sits_where_libibmad_reads_it() {
        let cpi = ClassPortInfo {
            base_version: 1,
            class_version: 1,
            cap_mask: 0x0400,
            resp_time_value: 18,
            redirect_sl: 3,
            redirect_lid: 0x1234,
            redirect_pkey: 0xFFFF,
            redirect_qp: 0x12,
            redirect_qkey: 0x0000_BEEF,
        };
        let e = cpi.encode();
        // fields.c: RedirectLID BITSOFFS(224,16) = bytes 28..29,
        // RedirectQP BITSOFFS(264,24) = bytes 33..35, RedirectQKey {288,32}
        // = bytes 36..39, RedirectSL BITSOFFS(200,4) = byte 25 bits 7:4.
        assert_eq!(&e[28..30], &[0x12, 0x34]);
        assert_eq!(&e[33..36], &[0, 0, 0x12]);
        assert_eq!(&e[36..40], &[0, 0, 0xBE, 0xEF]);
        assert_eq!(e[25], 0x30);
        let mut m = [0u8; 256];
        m[GMP_DATA..GMP_DATA + 72].copy_from_slice(&e);
        assert_eq!(ClassPortInfo::decode(&m), cpi);
    }
}
