//! The bench's switch set-up and the seeded generator of good packets and
//! of every switch fault class with its expected disposition.

use crate::model::stream::Rng;
use crate::proto::crc;
use crate::proto::mad::{self, Mad};
use crate::proto::packet::{Bth, Deth, Lrh, Packet};

use super::*;

/// External ports of the bench's default switch ([`Radix::DEFAULT`]).
pub const NPORTS: u8 = 8;
/// The switch's port-0 LID.
pub const PORT0_LID: u16 = 0x0001;
/// MasterSMLID (routed to port 3) and MasterSMSL the bench programs.
pub const MASTER_SM_LID: u16 = 0x12;
pub const MASTER_SM_SL: u8 = 5;

/// The radix of the bench's switch, N external ports (8..=64), and the
/// layout that follows from it: ports 1..=N−2 Active, N−1 Init, N Down;
/// the LFT of [`bench_lft`]. At N = 8 the layout and the generator's draws
/// are those of the fixed 8-port bench: a seed gives the same packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Radix {
    nports: u8,
}

impl Radix {
    /// The smallest radix the layout fits (six Active ports, Init, Down).
    pub const MIN: u8 = 8;
    /// The largest radix the switch model is built for (`MaxPorts`).
    pub const MAX: u8 = 64;
    /// 8 ports.
    pub const DEFAULT: Radix = Radix { nports: NPORTS };

    /// N external ports, 8..=64.
    pub fn new(nports: u32) -> anyhow::Result<Radix> {
        if !(u32::from(Self::MIN)..=u32::from(Self::MAX)).contains(&nports) {
            anyhow::bail!(
                "the switch bench runs {}..={} ports (six Active, one Init, one Down at least; the model's MaxPorts), not {nports}",
                Self::MIN,
                Self::MAX
            );
        }
        Ok(Radix {
            nports: nports as u8,
        })
    }
    /// N.
    pub fn nports(self) -> u8 {
        self.nports
    }
    /// The highest Active port (N − 2): ports 1..=`active()` are Active.
    pub fn active(self) -> u8 {
        self.nports - 2
    }
    /// The port left Init (N − 1): it carries VL15 only.
    pub fn init_port(self) -> u8 {
        self.nports - 1
    }
    /// The port written Down with its link up (N).
    pub fn down_port(self) -> u8 {
        self.nports
    }
    /// The routed LIDs: 0x10..=0x10 + 6N − 1, LID l to port
    /// 1 + (l − 0x10) % N.
    pub fn good_lids(self) -> std::ops::RangeInclusive<u16> {
        0x10..=self.g() - 1
    }
    /// G = 0x10 + 6N, the first LID after the routed ones (0x40 at N = 8).
    fn g(self) -> u16 {
        0x10 + 6 * u16::from(self.nports)
    }
    /// G..=G+7: LFT entry 0xFF (no route).
    pub fn unrouted_lids(self) -> std::ops::RangeInclusive<u16> {
        self.g()..=self.g() + 7
    }
    /// G+8..=G+11: LFT entries N+1..=N+4, ports the switch does not have.
    pub fn beyond_n_lids(self) -> std::ops::RangeInclusive<u16> {
        self.g() + 8..=self.g() + 11
    }
    /// G+12 and G+13: LFT entry 0 (port 0: no route for a packet from a
    /// wire, a loop for port 0's own sends).
    pub fn port0_lids(self) -> [u16; 2] {
        [self.g() + 12, self.g() + 13]
    }
    /// LinearFDBTop, G+15 (0x4F at N = 8).
    pub fn lft_top(self) -> u16 {
        self.g() + 15
    }
    /// G+16..=G+23: a real port in the LFT, but above LinearFDBTop.
    pub fn above_top_lids(self) -> std::ops::RangeInclusive<u16> {
        self.g() + 16..=self.g() + 23
    }
    /// The first of the LIDs above LinearFDBTop that are never written
    /// (G+32, 0x60 at N = 8).
    pub fn unwritten_above_top(self) -> u16 {
        self.g() + 32
    }
}

impl Default for Radix {
    fn default() -> Self {
        Radix::DEFAULT
    }
}

/// The LFT the bench programs at radix N, G = 0x10 + 6N: 0x10..G−1 → port
/// 1 + (lid − 0x10) % N; G..=G+7 0xFF; G+8..=G+11 → N+1..=N+4 (> N);
/// G+12, G+13 → 0 (port 0); LID 1 → 0; LinearFDBTop G+15; G+16..=G+23 →
/// a real port (1 + lid % 6, Active), but above LinearFDBTop. Everything
/// else is never written (reads 0xFF). At N = 8: 0x10..=0x3F → 1 + lid % 8,
/// 0x40..=0x47, 0x48..=0x4B → 9..12, 0x4C, 0x4D, top 0x4F, 0x50..=0x57.
/// The largest LID written, G+23, is 0x1A7 at N = 64: the LFT holds
/// `LFT_DEPTH` (4096) entries.
pub fn bench_lft(r: Radix) -> Vec<(u16, u8)> {
    let n = u16::from(r.nports);
    let mut v = vec![(PORT0_LID, 0)];
    for lid in r.good_lids() {
        v.push((lid, 1 + ((lid - 0x10) % n) as u8));
    }
    for lid in r.unrouted_lids() {
        v.push((lid, 0xFF));
    }
    for (i, lid) in r.beyond_n_lids().enumerate() {
        v.push((lid, r.nports + 1 + i as u8));
    }
    for lid in r.port0_lids() {
        v.push((lid, 0));
    }
    for lid in r.above_top_lids() {
        v.push((lid, 1 + (lid % 6) as u8));
    }
    v
}

/// The bench's switch state after programming.
pub fn bench_state(r: Radix) -> SwitchState {
    let mut s = SwitchState::after_reset(r.nports);
    s.port0_lid = PORT0_LID;
    s.lft_top = r.lft_top();
    for (lid, e) in bench_lft(r) {
        s.lft[usize::from(lid)] = e;
    }
    for p in 1..=r.active() {
        s.state[usize::from(p)] = ps::ACTIVE;
    }
    s.state[usize::from(r.down_port())] = ps::DOWN;
    s.master_sm_lid = MASTER_SM_LID;
    s.master_sm_sl = MASTER_SM_SL;
    s
}

/// A LID the bench's LFT routes to port `q` (1..=N): 0x10 + N·k + q − 1,
/// k in 0..6.
pub fn lid_to(r: Radix, q: u8, rng: &mut Rng) -> u16 {
    0x10 + u16::from(r.nports) * (rng.next_u64() % 6) as u16 + u16::from(q - 1)
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
    /// What the class sends the switch, in one line (`vl15 soak --list`).
    pub fn meaning(self) -> &'static str {
        use FaultClass::*;
        match self {
            GoodLidSmp => "a LID-routed SMP forwarded by the LFT",
            GoodData => "a LID-routed data packet forwarded by the LFT",
            GoodDrOut => "a directed-route SMP passing through outbound",
            GoodDrReturn => "a directed-route SMP passing through on its return",
            GoodDrToSma => "a DR SMP whose path ends at the switch: answered by its SMA",
            GoodLidToSma => "a LID-routed SMP to the port-0 LID: answered by its SMA",
            GoodDrToSm => "a DR GetResp ending at the switch: to its SM interface",
            GoodGmp => "a GMP to the port-0 LID: to the GMP receive path",
            GoodDrLidRows => "DR parts that meet LID-routed segments at the switch",
            GoodSmSend => "port 0 sends SM requests and traps",
            GoodGmpSend => "port 0's host sends a GMP",
            BadVcrc => "a bit flipped under the VCRC: dropped at the input",
            BadIcrcForwarded => "a bad ICRC on a forwarded packet: delivered unchanged",
            BadIcrcSmi => "a bad ICRC on an SMP for the switch: port-0 IcrcErr",
            BadIcrcGmp => "a bad ICRC on a GMP to the switch: passed to the host flagged",
            BadPkeyGmp => "a GMP to the switch with a P_Key it does not hold: flagged",
            BadQkeyGmp => "a GMP to the switch with a Q_Key other than 0x80010000: flagged",
            LVer => "LRH link version not 0: dropped",
            Lnh => "LRH LNH 0 or 1: dropped",
            PktLen => "LRH PktLen disagrees with the length: dropped",
            Truncated => "the packet ends early: dropped",
            OversizedVl15 => "a VL15 packet longer than an SMP: dropped",
            OversizedData => "a data packet longer than the MTU: dropped",
            Opcode => "an SMP for the switch with a wrong BTH opcode: dropped",
            BadSmpHdr => "an SMP for the switch with a bad MAD header: dropped",
            DlidNotOurs => "an SMP LID-routed to a LID the LFT does not route: dropped",
            NoRoute => "a packet to a LID with no LFT entry: dropped",
            Loop => "a packet routed back out of its input port: dropped",
            HopCount => "a directed-route SMP with hop count 64 or more: dropped",
            BadHopPtr => "a directed-route SMP whose hop pointer breaks the rules: dropped",
            DrEgressRange => "a DR SMP whose next hop is port 0 or beyond the last port: dropped",
            DownPort => "a packet routed to a port that is Down: dropped",
            SendPathDiscard => "port 0's sends its send path refuses",
            GmpSendDrop => "GMPs the host sends that the switch refuses",
            Vl15Overflow => "SMPs faster than the switch drains its VL15 buffers",
            DataOverflow => "a data packet finding both data slots of its input full",
            LinkDown => "a link goes down with traffic on it",
            EgressLinkDown => "an output's link falls with packets waiting for it",
            Reset => "a reset with traffic in flight",
        }
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

pub(super) fn pick<T: Copy>(rng: &mut Rng, v: &[T]) -> T {
    v[(rng.next_u64() % v.len() as u64) as usize]
}

pub(super) fn range(rng: &mut Rng, lo: u64, hi: u64) -> u64 {
    lo + rng.next_u64() % (hi - lo + 1)
}

/// A LID of `lids` (one draw, as `range`).
fn lid_in(rng: &mut Rng, lids: std::ops::RangeInclusive<u16>) -> u16 {
    range(rng, (*lids.start()).into(), (*lids.end()).into()) as u16
}

/// An Active port other than `not`.
pub(super) fn active_other(rng: &mut Rng, r: Radix, not: u8) -> u8 {
    loop {
        let q = range(rng, 1, r.active().into()) as u8;
        if q != not {
            return q;
        }
    }
}

pub(super) fn smp_wire(dlid: u16, slid: u16, m: &Mad, rng: &mut Rng) -> Vec<u8> {
    let psn = (rng.next_u64() & 0xFF_FFFF) as u32;
    let sl = (rng.next_u64() & 15) as u8;
    Packet::smp_bytes(VL15, sl, dlid, slid, psn, *m)
}

/// A data-VL packet with `payload` bytes after the DETH (LRH..VCRC).
pub(super) fn data_wire(
    vl: u8,
    dlid: u16,
    slid: u16,
    dqp: u32,
    payload: usize,
    rng: &mut Rng,
) -> Vec<u8> {
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

pub(super) fn random_mad(rng: &mut Rng, class: u8, method: u8, tid: u64) -> Mad {
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
fn dr_mad(rng: &mut Rng, r: Radix, d: bool, hc: u8, hp: u8, method: u8, tid: u64) -> Mad {
    let mut m = random_mad(rng, CLASS_SUBN_DR, method, tid);
    if d {
        m[4] |= 0x80;
    }
    m[6] = hp;
    m[7] = hc;
    m[mad::off::DR_SLID..mad::off::DR_SLID + 4].fill(0xFF);
    let n = u64::from(r.nports());
    for i in 1..64 {
        m[mad::off::INITIAL_PATH + i] = range(rng, 1, n) as u8;
        m[mad::off::RETURN_PATH + i] = range(rng, 1, n) as u8;
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
/// ingress port and expected disposition, for the bench's switch at
/// radix `r`. `tid` makes MADs distinct.
///
/// Port picks follow the radix: an Active port is 1..=N−2, a port that
/// carries VL15 (Active or Init) 1..=N−1, any port 1..=N, a port the
/// switch does not have N+1..=255. Hop counts, VLs, lengths and the choice
/// of a variant do not. Each pick draws once whatever N is, so at N = 8 the
/// draw sequence is the one of the 8-port bench.
pub fn gen_packet(rng: &mut Rng, r: Radix, class: FaultClass, tid: u64) -> GenPacket {
    use FaultClass as F;
    if matches!(class, F::GoodSmSend | F::SendPathDiscard) {
        return gen_host(rng, r, class, tid);
    }
    if matches!(class, F::GoodGmpSend | F::GmpSendDrop) {
        return gen_gmp_send(rng, r, class, tid);
    }
    let (n, act, vl15) = (
        u64::from(r.nports()),
        u64::from(r.active()),
        u64::from(r.init_port()),
    );
    let lid_to = |q: u8, rng: &mut Rng| lid_to(r, q, rng);
    let active_other = |rng: &mut Rng, not: u8| active_other(rng, r, not);
    let dr_mad = |rng: &mut Rng, d: bool, hc: u8, hp: u8, method: u8, tid: u64| {
        dr_mad(rng, r, d, hc, hp, method, tid)
    };
    let e = |p: u8, c: u8| Expect::Dropped(Bank::Ext(p), c);
    let e0 = |c: u8| Expect::Dropped(Bank::Port0, c);
    // A port that carries VL15 traffic to the switch (Active or Init).
    let vl15_in = |rng: &mut Rng| range(rng, 1, vl15) as u8;
    let fwd_smp = class == F::GoodLidSmp || (class == F::BadIcrcForwarded && rng.chance(60));
    let (port, bytes, expect) = match class {
        _ if fwd_smp => {
            let p = vl15_in(rng);
            let q = loop {
                let q = range(rng, 1, vl15) as u8;
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
            let p = range(rng, 1, act) as u8;
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
            m[mad::off::INITIAL_PATH + usize::from(hp) + 1] = range(rng, 1, vl15) as u8;
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
            m[mad::off::RETURN_PATH + usize::from(hp) - 1] = range(rng, 1, vl15) as u8;
            (
                p,
                smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng),
                Expect::Delivered,
            )
        }
        F::GoodDrToSma | F::BadIcrcSmi | F::Opcode | F::BadSmpHdr => {
            let p = vl15_in(rng);
            let hc = range(rng, 1, 6) as u8;
            // at the end of its path (C14-9:3), now and then one past it
            // (C14-9:4)
            let past = class == F::GoodDrToSma && rng.next_u64() % 4 == 0;
            let mut m = dr_mad(rng, false, hc, hc + u8::from(past), METHOD_GET, tid);
            if past {
                // the response leaves by the arrival port (send rule C14-13:1)
                m[mad::off::RETURN_PATH + usize::from(hc)] = p;
            }
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
            let slid = lid_to(range(rng, 1, vl15) as u8, rng);
            (p, smp_wire(PORT0_LID, slid, &m, rng), Expect::Delivered)
        }
        F::GoodDrLidRows => {
            let p = vl15_in(rng);
            let hc = range(rng, 1, 6) as u8;
            let q = range(rng, 1, vl15) as u8;
            let slid = lid_to(range(rng, 1, vl15) as u8, rng);
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
            // hp 1 (C14-13:3), now and then already 0 (C14-13:4)
            let hp = u8::from(rng.next_u64() % 4 != 0);
            let m = dr_mad(rng, true, hc, hp, METHOD_GET_RESP, tid);
            (
                p,
                smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng),
                Expect::Delivered,
            )
        }
        F::GoodGmp | F::BadIcrcGmp | F::BadPkeyGmp | F::BadQkeyGmp => {
            let p = range(rng, 1, act) as u8;
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
            let p = range(rng, 1, n) as u8;
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
            let p = range(rng, 1, vl15) as u8;
            // 320 bytes after the DETH: PktLen 88, consistent length and CRCs.
            let v = data_wire(VL15, lid_to(active_other(rng, p), rng), 0x20, 0, 320, rng);
            (p, v, e(p, ctr::VL15_DROPPED))
        }
        F::OversizedData => {
            let p = range(rng, 1, act) as u8;
            let len = range(rng, 4200, 4400) as usize;
            let v = data_wire(1, lid_to(active_other(rng, p), rng), 0x20, 2, len, rng);
            (p, v, e(p, ctr::DATA_DROPPED))
        }
        F::DlidNotOurs => {
            let p = vl15_in(rng);
            let (m, dlid, slid) = match rng.next_u64() % 4 {
                0 => (
                    random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid),
                    pick(rng, &r.port0_lids()),
                    0x20,
                ),
                1 => {
                    let hc = range(rng, 1, 4) as u8;
                    (
                        dr_mad(rng, false, hc, hc, METHOD_GET, tid),
                        pick(rng, &r.port0_lids()),
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
            let p = range(rng, 1, act) as u8;
            let dlid = match rng.next_u64() % 6 {
                0 => lid_in(rng, r.unrouted_lids()),
                1 => lid_in(rng, r.beyond_n_lids()),
                2 => lid_in(rng, r.above_top_lids()),
                3 => 0,
                4 => range(rng, 0xC000, 0xFFFE) as u16,
                _ => range(rng, r.unwritten_above_top().into(), 0x3FF) as u16,
            };
            let v = if rng.chance(50) {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                smp_wire(dlid, 0x20, &m, rng)
            } else {
                // A data packet to a LID the LFT sends to port 0 is no route too.
                let dlid = if rng.chance(20) {
                    r.port0_lids()[0]
                } else {
                    dlid
                };
                data_wire(2, dlid, 0x20, 2, range(rng, 0, 200) as usize, rng)
            };
            (p, v, e(p, ctr::NO_ROUTE))
        }
        F::Loop => {
            let p = range(rng, 1, act) as u8;
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
                    m[mad::off::INITIAL_PATH + usize::from(hp) + 1] = range(rng, n + 1, 255) as u8;
                    let v = smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng);
                    (p, v, e0(ctr::P0_DR_DISCARD))
                }
                1 => {
                    // Return, next port > N.
                    let hp = range(rng, 2, u64::from(hc)) as u8;
                    let mut m = dr_mad(rng, true, hc, hp, METHOD_GET_RESP, tid);
                    m[mad::off::RETURN_PATH + usize::from(hp) - 1] = range(rng, n + 1, 255) as u8;
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
                let p = range(rng, 1, vl15) as u8;
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                let v = smp_wire(lid_to(r.down_port(), rng), 0x20, &m, rng);
                (p, v, e(p, ctr::STATE_DROP))
            }
            1 => {
                // DR SMP forwarded to a Down port.
                let p = range(rng, 1, vl15) as u8;
                let hc = range(rng, 2, 8) as u8;
                let hp = range(rng, 1, u64::from(hc) - 1) as u8;
                let mut m = dr_mad(rng, false, hc, hp, METHOD_GET, tid);
                m[mad::off::INITIAL_PATH + usize::from(hp) + 1] = r.down_port();
                let v = smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng);
                (p, v, e0(ctr::P0_SQ_DR_DISCARD))
            }
            2 => {
                // An SMP for the switch arriving on a Down port.
                let hc = range(rng, 1, 4) as u8;
                let m = dr_mad(rng, false, hc, hc, METHOD_GET, tid);
                let v = smp_wire(PERMISSIVE_LID, PERMISSIVE_LID, &m, rng);
                (r.down_port(), v, e0(ctr::P0_PORT_DOWN))
            }
            3 => {
                // Data from a port that is not Active (Init or Down).
                let p = pick(rng, &[r.init_port(), r.down_port()]);
                let v = data_wire(0, lid_to(range(rng, 1, act) as u8, rng), 0x20, 2, 64, rng);
                (p, v, e(p, ctr::STATE_DROP))
            }
            _ => {
                // Data to a port that is not Active.
                let p = range(rng, 1, act) as u8;
                let q = pick(rng, &[r.init_port(), r.down_port()]);
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
            let p = range(rng, 1, act) as u8;
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
fn gen_gmp_send(rng: &mut Rng, r: Radix, class: FaultClass, tid: u64) -> GenPacket {
    let act = u64::from(r.active());
    let g = *r.unrouted_lids().start();
    let lid_to = |q: u8, rng: &mut Rng| lid_to(r, q, rng);
    let e0 = |c: u8| Expect::Dropped(Bank::Port0, c);
    let mut m = random_mad(rng, CLASS_PERF, METHOD_GET_RESP, tid);
    m[2] = 1;
    let sl = (rng.next_u64() & 15) as u8;
    let psn = (rng.next_u64() & 0xFF_FFFF) as u32;
    let vl = range(rng, 0, 7) as u8;
    let (bytes, expect) = if class == FaultClass::GoodGmpSend {
        let q = range(rng, 1, act) as u8;
        let dlid = lid_to(q, rng);
        (
            Packet::gmp(vl, sl, dlid, PORT0_LID, psn, m),
            Expect::Delivered,
        )
    } else {
        let q = range(rng, 1, act) as u8;
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
                let dlid = pick(rng, &[g, g + 9, g + 21, 0, 0xC000, 0x300]);
                let v = Packet::gmp(vl, sl, dlid, PORT0_LID, psn, m);
                (v, e0(ctr::P0_NO_ROUTE))
            }
            3 => {
                let dlid = pick(rng, &[PORT0_LID, r.port0_lids()[0]]);
                let v = Packet::gmp(vl, sl, dlid, PORT0_LID, psn, m);
                (v, e0(ctr::P0_LOOP_DROP))
            }
            _ => {
                let dlid = lid_to(pick(rng, &[r.init_port(), r.down_port()]), rng);
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
fn gen_host(rng: &mut Rng, r: Radix, class: FaultClass, tid: u64) -> GenPacket {
    let (n, vl15) = (u64::from(r.nports()), u64::from(r.init_port()));
    let lid_to = |q: u8, rng: &mut Rng| lid_to(r, q, rng);
    use FaultClass as F;
    let e0 = |c: u8| Expect::Dropped(Bank::Port0, c);
    let sl = (rng.next_u64() & 15) as u8;
    let dr = |hc: u8, first: u8, rng: &mut Rng| {
        let mut m = dr_mad(rng, r, false, hc, 0, METHOD_GET, tid);
        m[mad::off::INITIAL_PATH + 1] = first;
        m
    };
    let (m, host, expect) = if class == F::GoodSmSend {
        match rng.next_u64() % 3 {
            0 => {
                let hc = range(rng, 1, 8) as u8;
                let q = range(rng, 1, vl15) as u8;
                let m = dr(hc, q, rng);
                let h = HostSend::Sm {
                    dlid: PERMISSIVE_LID,
                    sl,
                };
                (m, h, Expect::Delivered)
            }
            1 => {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                let dlid = lid_to(range(rng, 1, vl15) as u8, rng);
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
        match rng.next_u64() % 11 {
            7 | 8 => {
                // Past the end of the path, outbound or returning (C14-9:5,
                // C14-13:5).
                let hc = range(rng, 1, 8) as u8;
                let mut m = dr(hc, 1, rng);
                m[mad::off::HOP_PTR] = hc + range(rng, 2, 40) as u8;
                if rng.chance(50) {
                    m[mad::off::STATUS] |= 0x80;
                }
                (m, h, e0(ctr::P0_SQ_DR_DISCARD))
            }
            9 | 10 => {
                // The send rules leave it at the switch: outbound at hp = hc
                // or hc + 1, returning at hp 1 or 0 (ibspec §5, the
                // originator's local check).
                let hc = range(rng, 1, 8) as u8;
                let mut m = dr(hc, 1, rng);
                let k = rng.next_u64() % 4;
                m[mad::off::HOP_PTR] = match k {
                    0 => hc,
                    1 => hc + 1,
                    _ => {
                        m[mad::off::STATUS] |= 0x80;
                        u8::from(k == 2)
                    }
                };
                (m, h, e0(ctr::P0_SQ_LOCAL))
            }
            0 => (
                dr(range(rng, 1, 8) as u8, pick(rng, &[0, r.down_port()]), rng),
                h,
                e0(ctr::P0_SQ_DR_DISCARD),
            ),
            1 => {
                let first = range(rng, n + 1, 255) as u8;
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
                let dlid = lid_in(rng, r.unrouted_lids());
                (m, HostSend::Sm { dlid, sl }, e0(ctr::P0_NO_ROUTE))
            }
            5 => {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                (
                    m,
                    HostSend::Sm {
                        dlid: r.port0_lids()[0],
                        sl,
                    },
                    e0(ctr::P0_LOOP_DROP),
                )
            }
            _ => {
                let m = random_mad(rng, CLASS_SUBN_LID, METHOD_GET, tid);
                let dlid = lid_to(r.down_port(), rng);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The 8-port table, row by row, as the bench programmed it before it
    /// took a radix: 0x10..=0x3F → 1 + lid % 8; 0x40..=0x47 0xFF;
    /// 0x48..=0x4B → 9..=12; 0x4C, 0x4D → 0; LID 1 → 0; 0x50..=0x57 →
    /// 1 + lid % 6; LinearFDBTop 0x4F.
    #[test]
    fn bench_lft_at_8_ports_is_the_fixed_table() {
        let mut want = vec![(0x0001u16, 0u8)];
        let good: [u8; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
        for (i, lid) in (0x10..=0x3Fu16).enumerate() {
            want.push((lid, good[i % 8]));
        }
        want.extend((0x40..=0x47u16).map(|l| (l, 0xFF)));
        want.extend([(0x48, 9), (0x49, 10), (0x4A, 11), (0x4B, 12)]);
        want.extend([(0x4C, 0), (0x4D, 0)]);
        want.extend([
            (0x50, 3),
            (0x51, 4),
            (0x52, 5),
            (0x53, 6),
            (0x54, 1),
            (0x55, 2),
            (0x56, 3),
            (0x57, 4),
        ]);
        let r = Radix::DEFAULT;
        assert_eq!(bench_lft(r), want);
        assert_eq!(r.lft_top(), 0x4F);
        assert_eq!((r.active(), r.init_port(), r.down_port()), (6, 7, 8));
        let s = bench_state(r);
        assert_eq!(s.lft[0x4E], 0xFF);
        assert_eq!(s.lft[0x58], 0xFF);
        assert_eq!(s.lft_top, 0x4F);
        let st: Vec<u8> = s.state[1..].to_vec();
        let a = ps::ACTIVE;
        assert_eq!(st, [a, a, a, a, a, a, ps::INIT, ps::DOWN]);
        // The drain bound the 8-port bench had, and the bigger radixes'.
        assert_eq!(drain_bound(8), DRAIN_BOUND);
        assert_eq!((drain_bound(36), drain_bound(64)), (500_000, 800_000));
    }

    /// At every radix: the rows fit the LFT, every routed LID reaches a
    /// port 1..=N, `lid_to(q)` reaches q, MasterSMLID reaches port 3, and
    /// the special rows are past the routed ones and in LinearFDBTop's order.
    #[test]
    fn bench_lft_at_every_radix() {
        assert!(Radix::new(7).is_err() && Radix::new(65).is_err());
        for n in 8..=64u8 {
            let r = Radix::new(n.into()).expect("radix");
            let s = bench_state(r);
            let lft = bench_lft(r);
            let max = lft.iter().map(|&(l, _)| l).max().unwrap_or(0);
            assert!(usize::from(max) < LFT_DEPTH, "N {n}: LID {max:#x}");
            assert_eq!(max, 0x10 + 6 * u16::from(n) + 23);
            let mut hit = vec![0u32; usize::from(n) + 1];
            for lid in r.good_lids() {
                let e = s.lft[usize::from(lid)];
                assert!((1..=n).contains(&e), "N {n}: LID {lid:#x} → {e}");
                hit[usize::from(e)] += 1;
            }
            assert!(hit[1..].iter().all(|&k| k == 6), "N {n}: {hit:?}");
            let mut rng = Rng::new(u64::from(n));
            for q in 1..=n {
                for _ in 0..12 {
                    let lid = lid_to(r, q, &mut rng);
                    assert!(r.good_lids().contains(&lid));
                    assert_eq!(s.lft[usize::from(lid)], q, "N {n}: lid_to({q})");
                }
            }
            assert_eq!(s.lft[usize::from(MASTER_SM_LID)], 3);
            assert!(r.unrouted_lids().all(|l| s.lft[usize::from(l)] == 0xFF));
            assert!(r.beyond_n_lids().all(|l| s.lft[usize::from(l)] > n));
            assert!(r.port0_lids().iter().all(|&l| s.lft[usize::from(l)] == 0));
            assert!(r
                .above_top_lids()
                .all(|l| l > r.lft_top() && (1..=r.active()).contains(&s.lft[usize::from(l)])));
            assert!(*r.beyond_n_lids().end() < r.lft_top());
            assert!(r.unwritten_above_top() > *r.above_top_lids().end());
            assert_eq!(s.state[usize::from(r.active())], ps::ACTIVE);
            assert_eq!(s.state[usize::from(r.init_port())], ps::INIT);
            assert_eq!(s.state[usize::from(r.down_port())], ps::DOWN);
        }
    }

    /// FNV-1a of what the generator makes at 8 ports: 3 seeds × 4000
    /// packets drawn as `Bench::gen` draws them (30 % faults), each class's
    /// packet once more, and the next draw of each stream after them.
    fn fingerprint(gen: impl Fn(&mut Rng, FaultClass, u64) -> GenPacket) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut eat = |b: &[u8]| {
            for &x in b {
                h ^= u64::from(x);
                h = h.wrapping_mul(0x100_0000_01b3);
            }
        };
        for seed in [1u64, 0x5EED_0006, 0xC1A5_5000] {
            let mut rng = Rng::new(seed);
            for tid in 0..4000u64 {
                let class = if rng.chance(30) {
                    pick(&mut rng, &FaultClass::FAULTS)
                } else {
                    pick(&mut rng, &FaultClass::GOOD)
                };
                let g = gen(&mut rng, class, tid);
                eat(&[g.port]);
                eat(&g.bytes);
                eat(format!("{:?} {:?}", g.expect, g.host).as_bytes());
            }
            let all = FaultClass::GOOD.iter().chain(&FaultClass::FAULTS);
            for (i, &c) in all.chain(&[FaultClass::LinkDown]).enumerate() {
                let g = gen(&mut rng, c, i as u64);
                eat(&[g.port]);
                eat(&g.bytes);
                eat(format!("{:?} {:?}", g.expect, g.host).as_bytes());
            }
            eat(&rng.next_u64().to_le_bytes());
        }
        h
    }

    /// At N = 8 the generator draws and makes what the fixed 8-port
    /// generator did, with the directed-route shapes added since (C14-9:4
    /// and C14-13:4 arrivals, port-0 sends past their path or left local):
    /// `GOLDEN_8` pins the draws, so that a change to them is a deliberate
    /// one.
    #[test]
    fn generator_at_8_ports_draws_as_before() {
        let fp = fingerprint(|rng, c, t| gen_packet(rng, Radix::DEFAULT, c, t));
        println!("fingerprint {fp:#018x}");
        assert_eq!(fp, GOLDEN_8);
    }

    const GOLDEN_8: u64 = 0x7ee4_4c1a_f935_084b;
}
