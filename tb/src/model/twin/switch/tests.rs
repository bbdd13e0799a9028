//! The switch twin against the RTL in lockstep: seeded port-to-port
//! traffic (VL15 and data, good and faulty packets, idle gaps,
//! backpressure, links going down mid packet), register traffic (LFT,
//! LinearFDBTop, PortState, NUM_PORTS, MasterSM LID/SL, counter reads,
//! presets and clears, PORT_STATE_CHANGE), SMPs for port 0 (LID-routed to
//! the port-0 LID and directed route, some the other way round, some with
//! a bad ICRC, M_Keys right, wrong and 0) with the SMA taking them under
//! backpressure and answering on `sma_tx`, VL15 packets for port 0 that
//! are no SMP (shorter than one, a header field wrong, a PktLen not their
//! length), the SM's requests on `sm_tx` (LID-routed, directed route from
//! here or after a LID-routed head) and traps on `trap_tx`, with idle
//! cycles, the SM taking what `sm_rx` gives under backpressure, port 0's
//! M_Key state (key, protect bits 0..3, leases of a few short seconds that
//! expire or are stopped, M_KeyViolations) written while SMPs are
//! checked, data packets for port 0's GMP receive path (GMPs the GSI check
//! passes and ones it rejects for their ICRC, header, P_Key or Q_Key, with
//! and without a GRH, and packets for other QPs) with P_Key table writes,
//! GMPs from the host on `gmp_tx` (some on VL15, too long, or not whole
//! 4-byte words), and resets mid traffic. [`Lockstep`] fails the first
//! cycle in which any output differs; each soak then checks that every
//! class of event happened. Directed tests cover what random traffic hits
//! too rarely: the M_Key lease expiring in the cycle of a verdict, lease
//! and tick writes while it runs, VL15 packets of every length short of an
//! SMP, a P_Key write racing a GMP's verdict, unaligned host GMPs.

use std::collections::VecDeque;

use anyhow::{Context, Result};
use vl15_bindings::{Changed, DevIn, DevOut, PortIn};

use crate::model::dut::{inputs_at_rest, Dut, HostIn, HostTaken};
use crate::model::lockstep::Lockstep;
use crate::model::regmap::{reg, swreg};
use crate::model::stream;
use crate::model::twin::{backend, DeviceSpec, Fidelity};
use crate::model::twin::{Backend, RtlBackend, TwinBackend};
use crate::proto::crc;

/// xorshift64*: the test's seeded randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

/// LIDs the LFT routes; LID 1 is the port-0 LID.
const LIDS: u16 = 48;
const P0_LID: u16 = 1;

/// M_Keys the register traffic gives port 0, and most SMPs carry.
const MKEYS: [u64; 2] = [0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210];

/// TransactionID markers (MAD byte 8, its complement in byte 9) of the
/// SM's requests and of the traps, seen where they leave the switch; SMPs
/// from the wire carry 0 in byte 8.
const TID_SM: u8 = 0x5A;
const TID_TRAP: u8 = 0x7A;

/// The MAD of an SMP (256 bytes), class 0x81 (`dr`) or 0x01: a method
/// the SMI gives the SMA (Get, Set, TrapRepress, another) or the SM
/// (GetResp, Trap, SMInfo), hop pointer and count around short paths over
/// the switch's ports, an M_Key of [`MKEYS`], 0 or another, and DrSLID /
/// DrDLID permissive, a LID of the LFT or any.
fn smp_mad(r: &mut Rng, nports: u8, dr: bool) -> Vec<u8> {
    let mut m = vec![0u8; 256];
    for x in m.iter_mut() {
        *x = r.next() as u8;
    }
    m[0] = 1;
    m[1] = if dr { 0x81 } else { 0x01 };
    m[3] = [1, 1, 1, 2, 2, 7, 6, 0x81, 5][r.below(9) as usize];
    m[4] = if dr && r.chance(2) { 0x80 } else { 0 };
    m[6] = r.below(4) as u8;
    m[7] = r.below(3) as u8;
    m[8] = 0;
    let attr: u16 = [0x0011, 0x0015, 0x0020][r.below(3) as usize];
    m[16..18].copy_from_slice(&attr.to_be_bytes());
    let key = match r.below(8) {
        0..=2 => 0,
        3 | 4 => MKEYS[0],
        5 => MKEYS[1],
        _ => r.next(),
    };
    m[24..32].copy_from_slice(&key.to_be_bytes());
    for o in [32, 34] {
        let lid = match r.below(4) {
            0 | 1 => 0xFFFF,
            2 => 2 + r.below(u64::from(LIDS)) as u16,
            _ => r.next() as u16,
        };
        m[o..o + 2].copy_from_slice(&lid.to_be_bytes());
    }
    for o in (128..136).chain(192..200) {
        m[o] = r.below(u64::from(nports) + 2) as u8;
    }
    m
}

/// An SMP for port 0 (LRH..VCRC): LID-routed to the port-0 LID or
/// directed route to the permissive LID, some the other way round (a LID
/// check failure; a DR SMP with a LID-routed head), some from the
/// permissive SLID, some with a bad ICRC.
fn smp(r: &mut Rng, nports: u8) -> Vec<u8> {
    const M: usize = 28;
    let dr = r.chance(2);
    let swap = r.chance(8);
    let dlid = if dr != swap { 0xFFFF } else { P0_LID };
    let slid = if r.chance(16) {
        0xFFFF
    } else {
        2 + r.below(u64::from(LIDS)) as u16
    };
    let mut b = vec![0u8; M];
    b[0] = 0xF0;
    b[1] = (r.below(16) as u8) << 4 | 2;
    b[2..4].copy_from_slice(&dlid.to_be_bytes());
    b[5] = 72;
    b[6..8].copy_from_slice(&slid.to_be_bytes());
    b[8] = 0x64;
    b[10] = 0xFF;
    b[11] = 0xFF;
    b.extend(smp_mad(r, nports, dr));
    crc::append_icrc(&mut b);
    if r.chance(12) {
        b[M + 40] ^= 1; // a bad ICRC
    }
    b.extend_from_slice(&crc::vcrc(&b).to_le_bytes());
    b
}

/// A VL15 packet for port 0 that is no SMP (LRH..VCRC, the link passes
/// it): shorter than an SMP (24..284 bytes up to the ICRC, an SMP's
/// header as far as it reaches, a good ICRC), or an SMP's length with one
/// header field wrong (LNH 3, opcode, TVer, DestQP, BaseVersion, class),
/// or a PktLen that is not its length (the link drops it).
fn bad_smp(r: &mut Rng, nports: u8) -> Vec<u8> {
    let mut b = smp(r, nports);
    b.truncate(b.len() - 6);
    if r.chance(2) {
        let words = 6 + r.below(66) as usize; // 24..=284 bytes with the ICRC
        b.truncate(4 * words - 4);
        b[4] = (words >> 8) as u8;
        b[5] = words as u8;
    } else {
        match r.below(7) {
            0 => b[1] |= 3,
            1 => b[8] = [0x04, 0x65, 0x00][r.below(3) as usize],
            2 => b[9] |= 1 + r.below(15) as u8,
            3 => b[13 + r.below(3) as usize] = 1 + r.below(255) as u8,
            4 => b[28] = [0, 2][r.below(2) as usize],
            5 => b[29] = [0x00, 0x02, 0x04, 0x80, 0x83][r.below(5) as usize],
            _ => b[5] = 71,
        }
    }
    crc::append_icrc(&mut b);
    b.extend_from_slice(&crc::vcrc(&b).to_le_bytes());
    b
}

/// A request of the SM on port 0 (`sm_tx`: the MAD, DLID, SL): LID-routed
/// to a LID of the LFT (some to none: 0, permissive, multicast, the
/// port-0 LID), or directed route from here (DLID permissive) or with a
/// LID-routed head (a LID of the LFT).
fn sm_request(r: &mut Rng, nports: u8) -> (Vec<u8>, u16, u8) {
    let dr = r.chance(2);
    let mut m = smp_mad(r, nports, dr);
    m[8..10].copy_from_slice(&[TID_SM, !TID_SM]);
    if dr && !r.chance(4) {
        // outbound from here: D 0, hop pointer 0, DrSLID permissive
        m[4] &= 0x7F;
        m[6] = 0;
        m[32..34].fill(0xFF);
    }
    let lft_lid = 2 + r.below(u64::from(LIDS)) as u16;
    let dlid = if dr {
        if r.chance(4) {
            lft_lid
        } else {
            0xFFFF
        }
    } else {
        match r.below(12) {
            0 => 0,
            1 => 0xFFFF,
            2 => 0xC001,
            3 => P0_LID,
            _ => lft_lid,
        }
    };
    (m, dlid, r.below(16) as u8)
}

/// A trap of port 0's SMA (`trap_tx`, to the MasterSM LID/SL of the
/// registers): Trap(), mostly LID-routed.
fn trap_mad(r: &mut Rng, nports: u8) -> Vec<u8> {
    let dr = r.chance(8);
    let mut m = smp_mad(r, nports, dr);
    m[3] = if r.chance(8) { 0x07 } else { 0x05 };
    m[8..10].copy_from_slice(&[TID_TRAP, !TID_TRAP]);
    m
}
const TOP: u16 = 40;

/// P_Keys of the GMPs for port 0 and of the P_Key table writes: the
/// default full member, its partial twin, a pair of one partition, one the
/// table holds only after a write, the two that never match.
const PKEYS: [u16; 7] = [0xFFFF, 0x7FFF, 0x8001, 0x0001, 0x1234, 0x0000, 0x8000];

/// The ICRC of a packet with a GRH (LRH..payload): CRC-32 with the LRH,
/// GRH TClass, FlowLabel, HopLmt and BTH.resv8a as 1s (ibspec §3.1).
fn icrc_global(b: &[u8]) -> [u8; 4] {
    let mut m = b.to_vec();
    for (i, x) in m.iter_mut().enumerate() {
        *x |= match i {
            0..=7 | 9..=11 | 15 | 52 => 0xFF,
            8 => 0x0F,
            _ => 0,
        };
    }
    ::crc::Crc::<u32>::new(&::crc::CRC_32_ISO_HDLC)
        .checksum(&m)
        .to_le_bytes()
}

/// A data packet for port 0's GMP receive path (LRH..VCRC, to the
/// port-0 LID): a GMP (QP1, one MAD, sometimes after a GRH) that the GSI
/// check passes, or with one seeded fault it rejects (ICRC, a header
/// field, a P_Key the table lacks, the Q_Key), or for another QP.
fn gmp(r: &mut Rng) -> Vec<u8> {
    let grh = r.chance(5);
    let g = if grh { 40 } else { 0 };
    let mut b = vec![0u8; 8 + g + 12 + 8 + 256];
    for x in b[8..].iter_mut() {
        *x = r.next() as u8;
    }
    b[0] = (r.below(8) as u8) << 4;
    b[1] = (r.below(16) as u8) << 4 | if grh { 3 } else { 2 };
    b[2..4].copy_from_slice(&P0_LID.to_be_bytes());
    let pkt_len = (b.len() / 4 + 1) as u16;
    b[4] = (pkt_len >> 8) as u8;
    b[5] = pkt_len as u8;
    let slid = 2 + r.below(u64::from(LIDS)) as u16;
    b[6..8].copy_from_slice(&slid.to_be_bytes());
    if grh {
        b[8] = 0x60 | (b[8] & 0x0F);
        b[14] = 0x1B; // NxtHdr: IBA transport
    }
    let (bth, deth, mad) = (8 + g, 20 + g, 28 + g);
    b[bth] = 0x64; // UD Send-Only
    b[bth + 1] &= 0xC0; // PadCnt 0, TVer 0
    let pkey = if r.chance(2) {
        PKEYS[r.below(PKEYS.len() as u64) as usize]
    } else {
        0xFFFF
    };
    b[bth + 2..bth + 4].copy_from_slice(&pkey.to_be_bytes());
    b[bth + 5..bth + 8].copy_from_slice(&[0, 0, 1]);
    b[deth..deth + 4].copy_from_slice(&[0x80, 0x01, 0x00, 0x00]);
    b[mad] = 1;
    b[mad + 1] = [0x04, 0x04, 0x03, 0x06][r.below(4) as usize];
    match r.below(30) {
        0 => b[bth + 7] = [0, 2, 0x41][r.below(3) as usize], // QP0, other QPs
        1 => b[bth] = 0x04,                                  // not UD Send-Only
        2 => b[bth + 1] |= 1,                                // TVer
        3 => b[mad] = 2,                                     // BaseVersion
        4 => b[mad + 1] = [0x01, 0x81][r.below(2) as usize], // SMP classes
        5..=7 => b[deth + r.below(4) as usize] ^= 1,         // Q_Key
        8 if grh => b[14] = 0x1C,                            // NxtHdr
        _ => {}
    }
    if grh {
        let i = icrc_global(&b);
        b.extend_from_slice(&i);
    } else {
        crc::append_icrc(&mut b);
    }
    if r.chance(12) {
        let k = 8 + r.below(b.len() as u64 - 8) as usize;
        b[k] ^= 1 << r.below(8); // a bad ICRC
    }
    b.extend_from_slice(&crc::vcrc(&b).to_le_bytes());
    b
}

/// A packet on the wire (LRH..VCRC), good or with one seeded fault.
fn packet(r: &mut Rng, nports: u8) -> Vec<u8> {
    let vl15 = r.chance(2);
    // VL15 packets for port 0: a third, all of them at a small radix
    if vl15 && r.chance(if nports < 4 { 1 } else { 3 }) {
        return if r.chance(5) {
            bad_smp(r, nports)
        } else {
            smp(r, nports)
        };
    }
    // port 0's GMP receive path takes a packet per ~40 cycles: its share
    // falls with the radix
    if !vl15 && r.chance(4 + u64::from(nports) / 8) {
        return gmp(r);
    }
    let words = if vl15 {
        if r.chance(20) {
            80 // longer than a VL15 slot
        } else {
            64
        }
    } else {
        let max = if r.chance(30) { 1100 } else { 40 };
        r.below(max) as usize
    };
    let mut b = vec![0u8; 8 + 12 + 4 * words + 4];
    for x in b.iter_mut() {
        *x = r.next() as u8;
    }
    let vl: u8 = if vl15 { 15 } else { r.below(8) as u8 };
    b[0] = vl << 4;
    b[1] = (r.below(16) as u8) << 4 | 2 | (r.below(2) as u8);
    let dlid: u16 = match r.below(20) {
        0 => 0,
        1 => 0xC000 + r.below(10) as u16,
        2 => 4000,
        3 if !vl15 => P0_LID, // any data packet, to the GMP receive path
        _ => 2 + r.below(u64::from(LIDS)) as u16,
    };
    b[2..4].copy_from_slice(&dlid.to_be_bytes());
    let pkt_len = (b.len() / 4) as u16;
    b[4] = (pkt_len >> 8) as u8 & 7 | (r.next() as u8 & 0xF8);
    b[5] = pkt_len as u8;
    match r.below(40) {
        0 => b[0] |= 1,      // LVer
        1 => b[1] &= 0xFC,   // LNH
        2 => b[5] ^= 1,      // PktLen
        3 => b.truncate(26), // too short for its PktLen
        _ => {}
    }
    let mut v = crc::vcrc(&b).to_le_bytes();
    if r.chance(40) {
        v[0] ^= 0x10;
    }
    b.extend_from_slice(&v);
    b
}

/// The beats of `b` at `db` bytes: (data words, keep, last).
fn beats(b: &[u8], db: usize) -> Vec<([u64; 2], u16, bool)> {
    let n = b.len().div_ceil(db);
    (0..n)
        .map(|k| {
            let s = &b[k * db..((k + 1) * db).min(b.len())];
            let mut d = [0u64; 2];
            for (j, x) in s.iter().enumerate() {
                d[j / 8] |= u64::from(*x) << ((j % 8) * 8);
            }
            let keep = if s.len() >= 16 {
                0xFFFF
            } else {
                (1u16 << s.len()) - 1
            };
            (d, keep, k + 1 == n)
        })
        .collect()
}

/// One cycle with register bus `i`; returns the read data.
fn tick(d: &mut dyn Dut, i: &DevIn, pin: &[PortIn]) -> Result<u32> {
    Ok(d.step(i, pin, Changed::All)?.reg_rdata)
}

fn write(d: &mut dyn Dut, pin: &[PortIn], addr: u16, v: u32) -> Result<()> {
    let i = DevIn {
        reg_we: true,
        reg_addr: addr,
        reg_wdata: v,
        ..DevIn::default()
    };
    tick(d, &i, pin)?;
    Ok(())
}

/// The switch set up for forwarding: LFT, LinearFDBTop, most ports Active.
fn setup(d: &mut dyn Dut, r: &mut Rng, nports: u8, pin: &[PortIn]) -> Result<()> {
    for w in 0..(LIDS / 4 + 2) {
        let mut v = 0u32;
        for k in 0..4 {
            let e: u32 = match r.below(12) {
                0 => 0xFF,
                1 => u32::from(nports) + 1,
                _ => 1 + r.below(u64::from(nports)) as u32,
            };
            v |= e << (8 * k);
        }
        write(d, pin, swreg::LFT_BASE + w, v)?;
    }
    write(d, pin, swreg::LINEAR_FDB_TOP, u32::from(TOP))?;
    write(d, pin, swreg::PORT0_LID, u32::from(P0_LID))?;
    // the MasterSM the traps go to (the LFT routes its LID), and port 0's
    // M_Key, protected, with a lease of a few short seconds
    let sm_lid = 2 + r.below(u64::from(LIDS)) as u16;
    let e = 1 + r.below(u64::from(nports)) as u32;
    write(d, pin, swreg::LFT_BASE + sm_lid / 4, 0x0101_0101 * e)?;
    write(d, pin, swreg::MASTER_SM_LID, u32::from(sm_lid))?;
    write(d, pin, swreg::MASTER_SM_SL, r.below(16) as u32)?;
    write(d, pin, swreg::mkey(reg::MKEY_LO), MKEYS[0] as u32)?;
    write(d, pin, swreg::mkey(reg::MKEY_HI), (MKEYS[0] >> 32) as u32)?;
    write(
        d,
        pin,
        swreg::mkey(reg::MKEY_PROT),
        [1, 1, 2, 3][r.below(4) as usize],
    )?;
    write(d, pin, swreg::mkey(reg::MKEY_LEASE), 1 + r.below(3) as u32)?;
    write(
        d,
        pin,
        swreg::mkey(reg::MKEY_TICK),
        [20, 60, 150][r.below(3) as usize],
    )?;
    for p in 1..=nports {
        if p == 1 || !r.chance(6) {
            write(d, pin, swreg::PORT_STATE + u16::from(p), 3)?;
            write(d, pin, swreg::PORT_STATE + u16::from(p), 4)?;
        }
    }
    Ok(())
}

/// A counter bank (16 counters at `addr(c)`), read over the register bus.
fn bank(d: &mut dyn Dut, pin: &[PortIn], addr: fn(u8) -> u16) -> Result<[u32; 16]> {
    let mut b = [0u32; 16];
    for (c, v) in b.iter_mut().enumerate() {
        let i = DevIn {
            reg_addr: addr(c as u8),
            ..DevIn::default()
        };
        *v = tick(d, &i, pin)?;
    }
    Ok(b)
}

/// Port 0's GMP counter bank.
fn gmp_bank(d: &mut dyn Dut, pin: &[PortIn]) -> Result<[u32; 16]> {
    bank(d, pin, swreg::ctr0g)
}

/// Port 0's SMI counter bank.
fn p0_bank(d: &mut dyn Dut, pin: &[PortIn]) -> Result<[u32; 16]> {
    bank(d, pin, |c| swreg::ctr(0, c))
}

/// Per port: the beats still to send, link and ready patterns; the
/// beats of a packet given to the model whole ([`Dut::rx_burst`]) still
/// to arrive, one a cycle.
struct PortDrv {
    q: VecDeque<([u64; 2], u16, bool)>,
    burst: VecDeque<([u64; 2], u16, bool)>,
    gap: u32,
    down: u32,
    ready_pct: u64,
}

/// A MAD source of port 0's host side (`sm_tx`, `trap_tx`): the beats
/// still to give, and whether the beat presented was not taken (it stays,
/// AXI-Stream).
#[derive(Default)]
struct MadSrc {
    q: VecDeque<([u64; 2], bool)>,
    held: bool,
}

impl MadSrc {
    fn load(&mut self, mad: &[u8], db: usize) {
        self.q
            .extend(beats(mad, db).into_iter().map(|(w, _, l)| (w, l)));
    }
    /// The beat presented this cycle: always while one is held, else now
    /// and then an idle cycle when `gaps`.
    fn present(&self, r: &mut Rng, gaps: bool) -> Option<([u64; 2], bool)> {
        let b = *self.q.front()?;
        (self.held || !gaps || !r.chance(6)).then_some(b)
    }
    /// After the step: whether a beat was presented and taken; returns
    /// whether that was a MAD's last beat.
    fn step(&mut self, valid: bool, ready: bool) -> bool {
        self.held = valid && !ready;
        valid && ready && self.q.pop_front().is_some_and(|(_, l)| l)
    }
    fn clear(&mut self) {
        self.q.clear();
        self.held = false;
    }
}

/// What the soak saw on port 0's host side; each must have happened.
#[derive(Debug, Default)]
struct Seen {
    /// MADs taken from `sm_tx` and `trap_tx`.
    sm_sent: u64,
    trap_sent: u64,
    /// Packets of them seen leaving an external port (their TID marker).
    sm_out: u64,
    trap_out: u64,
    /// MADs the SM took from `sm_rx`.
    sm_rx: u64,
    /// SMA-bound MADs taken with the M_Key verdict a violation, masked.
    viol: u64,
    mask: u64,
    /// Protect bits cleared with no register write: the lease expired.
    expiry: u64,
}

/// A [`Lockstep`] that counts its calm cycles (the twin not stepped) in
/// which the switch was busy, and of those the ones with a beat leaving;
/// the receive bursts given, and the calm cycles in which one's beat
/// arrived.
#[derive(Default)]
struct Counts {
    busy: u64,
    tx: u64,
    rx_bursts: u64,
    rx_calm: u64,
    /// MADs held whole ([`Dut::host_burst`]), those still held, and the
    /// calm cycles in which one was.
    held: u64,
    holding: u64,
    held_calm: u64,
}

struct CalmProbe {
    ls: Lockstep,
    n: Counts,
    /// Per port, the cycles up to which its receive burst's beats arrive.
    rx_to: Vec<u64>,
}

impl CalmProbe {
    fn new(ls: Lockstep) -> Self {
        let n = ls.num_ports() as usize;
        CalmProbe {
            ls,
            n: Counts::default(),
            rx_to: vec![0; n],
        }
    }
}

impl Dut for CalmProbe {
    fn step(&mut self, i: &DevIn, pin: &[PortIn], changed: Changed<'_>) -> Result<DevOut> {
        let c0 = self.ls.calm_cycles();
        let now = self.ls.cycle();
        let o = self.ls.step(i, pin, changed)?;
        if self.ls.calm_cycles() > c0 {
            self.n.held_calm += u64::from(self.n.holding > 0);
            if !o.idle {
                self.n.busy += 1;
                self.n.tx += u64::from(self.ls.ports_out().iter().any(|p| p.tx_tvalid));
            }
            self.n.rx_calm += u64::from(
                self.rx_to
                    .iter()
                    .zip(pin)
                    .any(|(&to, p)| now < to && p.link_up),
            );
        }
        Ok(o)
    }
    fn takes_rx_bursts(&self) -> bool {
        self.ls.takes_rx_bursts()
    }
    fn rx_burst(&mut self, port: usize, first: u64, beats: &[stream::Beat]) {
        self.n.rx_bursts += 1;
        self.rx_to[port] = first + beats.len() as u64;
        self.ls.rx_burst(port, first, beats);
    }
    fn rx_burst_cut(&mut self, port: usize, from: u64) {
        self.rx_to[port] = self.rx_to[port].min(from);
        self.ls.rx_burst_cut(port, from);
    }
    fn host_burst(&mut self, s: HostIn, first: u64, beats: &[stream::Beat], side: &DevIn) -> bool {
        let held = self.ls.host_burst(s, first, beats, side);
        self.n.held += u64::from(held);
        self.n.holding += u64::from(held);
        held
    }
    fn take_host_taken(&mut self, out: &mut Vec<HostTaken>) {
        let n = out.len();
        self.ls.take_host_taken(out);
        self.n.holding -= (out.len() - n) as u64;
    }
    fn ports_out(&self) -> &[vl15_bindings::PortOut] {
        self.ls.ports_out()
    }
    fn skip(&mut self, n: u64) {
        self.ls.skip(n);
    }
    fn reset(&mut self, cycles: u32) -> Result<()> {
        self.n.holding = 0;
        self.ls.reset(cycles)
    }
    fn cycle(&self) -> u64 {
        self.ls.cycle()
    }
    fn num_ports(&self) -> u32 {
        self.ls.num_ports()
    }
    fn data_w(&self) -> u32 {
        self.ls.data_w()
    }
    fn describe(&self) -> String {
        self.ls.describe()
    }
    fn trace_open(&mut self, path: &std::path::Path) -> Result<()> {
        self.ls.trace_open(path)
    }
    fn trace_close(&mut self) {
        self.ls.trace_close();
    }
}

/// `cycles` cycles of seeded traffic through a switch of `nports` ports at
/// `data_w`, RTL and twin in lockstep; the twin must have been calm (not
/// stepped) in cycles in which the switch was busy, some with packets
/// leaving, and some without (port 0's streams).
fn soak(nports: u8, data_w: u32, seed: u64, cycles: u64) -> Result<()> {
    let spec = DeviceSpec::Switch { nports, data_w };
    let ls = Lockstep::new(RtlBackend.build(spec)?, TwinBackend.build(spec)?)?;
    let mut p = CalmProbe::new(ls);
    traffic(&mut p, nports, data_w, seed, cycles)?;
    let (calm, all) = (p.ls.calm_cycles(), p.ls.compared());
    let n = &p.n;
    eprintln!(
        "{nports} ports DataW {data_w} seed {seed}: twin calm in {calm} of {all} cycles, \
         {} of them busy, {} with a beat leaving; {} receive bursts, calm in {} cycles \
         of them; {} MADs held whole, calm in {} cycles while one was",
        n.busy, n.tx, n.rx_bursts, n.rx_calm, n.held, n.held_calm
    );
    anyhow::ensure!(
        n.held > 0 && n.held_calm > 0,
        "{} MADs held whole, the twin calm in {} cycles while one was",
        n.held,
        n.held_calm
    );
    anyhow::ensure!(
        n.busy > 0 && n.busy > n.tx && (nports == 1 || n.tx > 0),
        "the twin was calm in {calm} cycles, {} busy, {} with a beat leaving",
        n.busy,
        n.tx
    );
    anyhow::ensure!(
        n.rx_bursts > 0 && n.rx_calm > 0,
        "{} receive bursts, the twin calm in {} cycles of them",
        n.rx_bursts,
        n.rx_calm
    );
    Ok(())
}

/// [`soak`]'s traffic through the model `f` chooses.
fn run(f: Fidelity, nports: u8, data_w: u32, seed: u64, cycles: u64) -> Result<()> {
    let spec = DeviceSpec::Switch { nports, data_w };
    let mut d = backend(f).build(spec)?;
    traffic(d.as_mut(), nports, data_w, seed, cycles)
}

/// [`soak`]'s traffic through `d`: phases of traffic, now and then a
/// phase of some hundred cycles with every input at rest (no beat
/// arriving, every ready high, no register access or host beat but one
/// held).
fn traffic(d: &mut dyn Dut, nports: u8, data_w: u32, seed: u64, cycles: u64) -> Result<()> {
    let db = (data_w / 8) as usize;
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let n = usize::from(nports);
    let mut pin = vec![
        PortIn {
            link_up: true,
            tx_tready: true,
            ..PortIn::default()
        };
        n
    ];
    d.reset(4)?;
    setup(d, &mut r, nports, &pin)?;
    let mut drv: Vec<PortDrv> = (0..n)
        .map(|_| PortDrv {
            q: VecDeque::new(),
            burst: VecDeque::new(),
            gap: 0,
            down: 0,
            ready_pct: 100,
        })
        .collect();
    let mut cyc = 0u64;
    let mut sent = 0u64;
    let mut offered = 0u64;
    let mut prev = pin.clone();
    // the SMA: a MAD being received, the answers to send on sma_tx
    let mut rx_mad: Vec<u8> = Vec::new();
    let mut resp: VecDeque<([u64; 2], bool)> = VecDeque::new();
    let mut resp_meta = (0u16, 0u16, 0u8);
    let mut sma_ready = 100u64;
    // the SM's requests on sm_tx (with DLID, SL and path bits, which a
    // switch ignores) and the traps on trap_tx
    let mut sm = MadSrc::default();
    let mut sm_meta = (0u16, 0u8, 0u8);
    let mut trap = MadSrc::default();
    // the host's GMPs on gmp_tx (LRH..ICRC): data packets to the LFT's
    // LIDs, some on VL15 or longer than a slot (dropped)
    let mut gq: VecDeque<([u64; 2], u16, bool)> = VecDeque::new();
    // a beat presented stays until taken (AXI-Stream)
    let mut g_held = false;
    let mut resetup = false;
    // port 0's P_Key table index (entry 0 keeps the default P_Key, so
    // that most GMPs pass), the GMP and SMI banks when the last quarter
    // starts, and the verdicts gmp_rx gave (gsi_reason_e)
    let mut pkey_idx = 0u32;
    let mut gbank0 = [0u32; 16];
    // port 0's SMI counters as the last register write of them left them,
    // and which were read (or are at the end) other than that: which
    // counted
    let mut p0base = [0u32; 16];
    let mut p0moved = [false; 16];
    let mut verdicts = [0u64; 8];
    // register writes queued for the next cycles (M_Key high after low)
    // (a write, or with no value a read)
    let mut pend: VecDeque<(u16, Option<u32>)> = VecDeque::new();
    let mut seen = Seen::default();
    // port 0's protect bits in the last cycle, and whether a register
    // write of them came then
    let mut prot_prev: Option<(u8, bool)> = None;
    // cycles until the SM sets the protect bits again after an expiry
    let mut rearm: Option<u32> = None;
    // per port, the beat index of the packet leaving it and whether it
    // is on VL15; where the TID marker lies in a packet
    let mut txpos = vec![(0usize, false); n];
    let tid = (28 + 8) / db;
    let tid_lane = (28 + 8) % db;
    // cycles left of a phase at rest; a beat on sma_tx not taken
    let mut rest_left = 0u32;
    let mut resp_held = false;
    // the SMA's answer, the SM's request and the trap held whole by the
    // model (offered at once, as a fabric's host does), and a buffer for
    // those it took
    let mut in_model = [false; 3];
    let mut taken: Vec<HostTaken> = Vec::new();
    let mad_beats = 256 / db;
    let whole = |q: &mut dyn Iterator<Item = ([u64; 2], bool)>| -> Vec<stream::Beat> {
        q.map(|(data, last)| stream::Beat {
            data,
            keep: 0,
            last,
        })
        .collect()
    };
    // whether the last cycle's inputs were at rest, with the links before
    // it: a model that takes receive bursts is given a packet whole only
    // after a cycle that was not (as in a fabric, the step of its first
    // beat is then not skipped)
    let mut last_rest = true;
    let mut links = vec![true; n];
    while cyc < cycles {
        cyc += 1;
        let rest = rest_left > 0;
        if rest {
            rest_left -= 1;
        } else if r.chance(400) {
            rest_left = 20 + r.below(300) as u32;
        }
        // (its register writes step with no host stream valid: not while a
        // beat is held on sma_tx, sm_tx, trap_tx or gmp_tx)
        if !resetup
            && cyc >= cycles * 3 / 4
            && resp.is_empty()
            && !g_held
            && !sm.held
            && !trap.held
            && !in_model.contains(&true)
            && pend.is_empty()
        {
            resetup = true;
            // the last quarter starts from the set-up configuration
            write(d, &pin, swreg::NUM_PORTS, u32::from(nports))?;
            setup(d, &mut r, nports, &pin)?;
            gbank0 = gmp_bank(d, &pin)?;
            prot_prev = None;
        }
        if r.chance(20_000) && cyc < cycles * 3 / 4 {
            d.reset(1 + r.below(3) as u32)
                .context("reset mid traffic")?;
            rx_mad.clear();
            resp.clear();
            sm.clear();
            trap.clear();
            in_model = [false; 3];
            pend.clear();
            rearm = None;
            p0base = [0; 16];
            gq.clear();
            g_held = false;
            pkey_idx = 0;
            prot_prev = None;
            txpos.iter_mut().for_each(|t| *t = (0, false));
            for (k, (p, x)) in drv.iter_mut().zip(pin.iter_mut()).enumerate() {
                p.q.clear();
                if !p.burst.is_empty() {
                    // (the beats of a burst still to come do not arrive)
                    d.rx_burst_cut(k, d.cycle());
                    p.burst.clear();
                }
                p.down = 0;
                *x = PortIn {
                    link_up: true,
                    tx_tready: true,
                    ..PortIn::default()
                };
            }
            setup(d, &mut r, nports, &pin)?;
            continue;
        }
        let mut rest_from = None;
        for (k, p) in drv.iter_mut().enumerate() {
            let x = &mut pin[k];
            // a burst's beat arrives on its own (rx_tvalid low)
            let in_burst = p.burst.pop_front().is_some();
            if in_burst {
                x.rx_tvalid = false;
                if !rest && r.chance(40) && !p.burst.is_empty() {
                    // the cable takes the rest back and sends it again
                    // beat by beat
                    let j = r.below(p.burst.len() as u64) as usize;
                    d.rx_burst_cut(k, d.cycle() + 1 + j as u64);
                    while p.burst.len() > j {
                        let b = p.burst.pop_back().expect("non-empty");
                        p.q.push_front(b);
                    }
                }
            }
            if rest {
                x.tx_tready = true;
                x.rx_tvalid = false;
                continue;
            }
            if r.chance(500) {
                p.ready_pct = [100, 100, 50, 90, 10][r.below(5) as usize];
            }
            x.tx_tready = r.below(100) < p.ready_pct;
            if p.down > 0 {
                p.down -= 1;
                x.link_up = p.down == 0;
                x.rx_tvalid = false;
                continue;
            }
            if r.chance(8000) {
                p.down = 1 + r.below(40) as u32;
                x.link_up = false;
                x.rx_tvalid = false;
                p.q.clear(); // the packet on the wire is cut
                p.burst.clear();
                continue;
            }
            x.link_up = true;
            if in_burst || !p.burst.is_empty() {
                continue;
            }
            if p.q.is_empty() {
                if p.gap > 0 {
                    p.gap -= 1;
                    x.rx_tvalid = false;
                    continue;
                }
                let max = match (r.chance(4), nports < 4) {
                    (true, false) => 400,
                    (true, true) => 60,
                    _ => 20,
                };
                p.gap = r.below(max) as u32;
                p.q.extend(beats(&packet(&mut r, nports), db));
                if !last_rest && d.takes_rx_bursts() && !r.chance(3) {
                    // the whole packet, one beat a cycle from now
                    let bs: Vec<stream::Beat> =
                        p.q.iter()
                            .map(|&(data, keep, last)| stream::Beat { data, keep, last })
                            .collect();
                    d.rx_burst(k, d.cycle(), &bs);
                    p.burst.extend(p.q.drain(..).skip(1));
                    x.rx_tvalid = false;
                    if r.chance(3) {
                        // the rest of the switch at rest while it arrives
                        rest_from = Some(bs.len() as u32 + r.below(40) as u32);
                    }
                    continue;
                }
            }
            if r.chance(6) && !p.q.is_empty() {
                x.rx_tvalid = false; // an idle cycle inside a packet
                continue;
            }
            match p.q.pop_front() {
                Some((data, keep, last)) => {
                    x.rx_tvalid = true;
                    x.rx_tdata = data;
                    x.rx_tkeep = keep;
                    x.rx_tlast = last;
                }
                None => x.rx_tvalid = false,
            }
        }
        // register traffic
        let mut i = DevIn::default();
        let port = 1 + r.below(u64::from(nports)) as u16;
        i.reg_addr = match r.below(8) {
            0 => swreg::ctr(port as u8, r.below(16) as u8),
            1 => swreg::PORT_STATE + port,
            2 => swreg::ctr(0, r.below(16) as u8),
            3 => swreg::ctr0g(r.below(16) as u8),
            4 => [swreg::PKEY_IDX, swreg::PKEY_DATA][r.below(2) as usize],
            5 => swreg::MKEY_BASE + r.below(8) as u16,
            6 => [swreg::MASTER_SM_LID, swreg::MASTER_SM_SL][r.below(2) as usize],
            _ => swreg::LFT_BASE + r.below(u64::from(LIDS / 4 + 2)) as u16,
        };
        // the last quarter presets and clears no counter: the counters at
        // the end show that every class of traffic happened
        let quiet_regs = cyc > cycles * 3 / 4;
        if rest {
            i.reg_addr = 0;
        } else if let Some((a, v)) = pend.pop_front() {
            i.reg_we = v.is_some();
            i.reg_addr = a;
            i.reg_wdata = v.unwrap_or(0);
        } else if r.chance(300) && !quiet_regs {
            i.reg_we = true;
            let (a, v) = match r.below(13) {
                0 => (swreg::CTR_CLEAR, 1),
                1 => (
                    swreg::CTR_CLEAR_SEL + r.below(u64::from(nports) + 1) as u16,
                    r.next() as u32,
                ),
                2 => (
                    swreg::ctr(r.below(u64::from(nports) + 1) as u8, r.below(16) as u8),
                    r.next() as u32,
                ),
                // mostly back to Active, so that data keeps flowing
                3 => (
                    swreg::PORT_STATE + port,
                    [4, 4, 4, 3, 2, 1, 0][r.below(7) as usize],
                ),
                4 => (swreg::PORT_STATE_CHANGE, 1),
                5 => (
                    swreg::NUM_PORTS,
                    if r.chance(2) {
                        u32::from(nports)
                    } else {
                        r.below(u64::from(nports) + 2) as u32
                    },
                ),
                6 => (swreg::ctr0g(r.below(16) as u8), r.next() as u32),
                7 => (swreg::LINEAR_FDB_TOP, u32::from(TOP) - r.below(8) as u32),
                // port 0's P_Key table (8 entries; 9 and 10 are none)
                8 => {
                    pkey_idx = 1 + r.below(10) as u32;
                    (swreg::PKEY_IDX, pkey_idx)
                }
                9 => {
                    let v = if pkey_idx & 0xFF == 0 {
                        0xFFFF
                    } else {
                        PKEYS[r.below(PKEYS.len() as u64) as usize]
                    };
                    pkey_idx += 1;
                    (swreg::PKEY_DATA, u32::from(v))
                }
                // the traps' MasterSM: a LID of the LFT or none
                10 => (
                    swreg::MASTER_SM_LID,
                    match r.below(8) {
                        0 => 0,
                        1 => 0xFFFF,
                        2 => 0xC001,
                        3 => u32::from(P0_LID),
                        _ => 2 + r.below(u64::from(LIDS)) as u32,
                    },
                ),
                11 => (swreg::MASTER_SM_SL, r.next() as u32),
                _ => (
                    swreg::LFT_BASE + r.below(u64::from(LIDS / 4 + 2)) as u16,
                    0x0101_0101 * (1 + r.below(u64::from(nports)) as u32),
                ),
            };
            i.reg_addr = a;
            i.reg_wdata = v;
            if a == swreg::CTR_CLEAR
                || a == swreg::CTR_CLEAR_SEL
                || (swreg::ctr(0, 0)..swreg::ctr(1, 0)).contains(&a)
            {
                // port 0's SMI counters are read first (what they counted
                // since their last write), then written
                i.reg_we = false;
                i.reg_addr = swreg::ctr(0, 0);
                pend.extend((1..16).map(|c| (swreg::ctr(0, c), None)));
                pend.push_back((a, Some(v)));
            }
        } else if r.chance(250) {
            // port 0's M_Key state: the key (low word staged until the
            // high one), protect bits, lease period, tick (a few cycles
            // per lease second), M_KeyViolations (near its saturation),
            // the read-only and reserved registers
            i.reg_we = true;
            let m = |a: u8| swreg::mkey(a);
            let (a, v) = match r.below(10) {
                0 | 1 => {
                    let k = [MKEYS[0], MKEYS[0], MKEYS[1], 0][r.below(4) as usize];
                    if r.chance(8) {
                        (m(reg::MKEY_HI), r.next() as u32)
                    } else {
                        pend.push_back((m(reg::MKEY_HI), Some((k >> 32) as u32)));
                        (m(reg::MKEY_LO), k as u32)
                    }
                }
                2..=4 => (m(reg::MKEY_PROT), [0, 1, 1, 2, 3][r.below(5) as usize]),
                5 | 6 => (m(reg::MKEY_LEASE), [0, 1, 1, 2, 3][r.below(5) as usize]),
                7 | 8 => (
                    m(reg::MKEY_TICK),
                    [0, 1, 2, 7, 20, 60, 150, 1000][r.below(8) as usize],
                ),
                _ => (
                    m(
                        [reg::MKEY_VIOLS, reg::MKEY_LEASE_ST, reg::MKEY_LEASE_ST + 1]
                            [r.below(3) as usize],
                    ),
                    [0, 0xFFFE, r.next() as u32][r.below(3) as usize],
                ),
            };
            i.reg_addr = a;
            i.reg_wdata = v;
        }
        if i.reg_we {
            let (a, w) = (i.reg_addr, i.reg_wdata);
            for (c, b) in p0base.iter_mut().enumerate() {
                if a == swreg::CTR_CLEAR || a == swreg::CTR_CLEAR_SEL && w >> c & 1 != 0 {
                    *b = 0;
                } else if a == swreg::ctr(0, c as u8) {
                    *b = w;
                }
            }
        }
        // name only the ports whose inputs changed, as the fabric does
        let changed: Vec<u8> = (0..n)
            .filter(|&k| pin[k] != prev[k])
            .map(|k| k as u8)
            .collect();
        prev.clone_from(&pin);
        // the SMA's side of port 0
        if r.chance(500) {
            sma_ready = [100, 100, 50, 10, 0][r.below(5) as usize];
        }
        i.sma_rx_tready = rest || r.below(100) < sma_ready;
        i.sm_rx_tready = rest || r.below(100) < sma_ready;
        // an answer not begun offered whole, now and then
        if !in_model[0] && !resp_held && resp.len() == mad_beats && r.chance(2) {
            let side = DevIn {
                sma_tx_slid: resp_meta.0,
                sma_tx_dlid: resp_meta.1,
                sma_tx_sl: resp_meta.2,
                ..DevIn::default()
            };
            let b = whole(&mut resp.iter().copied());
            let first = d.cycle();
            if d.host_burst(HostIn::SmaTx, first, &b, &side) {
                in_model[0] = true;
                resp.clear();
            }
        }
        if let Some(&(data, last)) = resp.front().filter(|_| !rest || resp_held) {
            i.sma_tx_tvalid = true;
            i.sma_tx_tdata = data;
            i.sma_tx_tlast = last;
            (i.sma_tx_slid, i.sma_tx_dlid, i.sma_tx_sl) = resp_meta;
        }
        // the SM's requests and the traps; the SM receive doorbell, which
        // a switch does not have (its SM has no receive queue)
        if !rest && sm.q.is_empty() && !in_model[1] && r.chance(200) {
            let (mad, dlid, sl) = sm_request(&mut r, nports);
            sm.load(&mad, db);
            sm_meta = (dlid, sl, r.next() as u8);
        }
        if !in_model[1] && !sm.held && sm.q.len() == mad_beats && r.chance(2) {
            let side = DevIn {
                sm_tx_dlid: sm_meta.0,
                sm_tx_sl: sm_meta.1,
                sm_tx_path_bits: sm_meta.2,
                ..DevIn::default()
            };
            let b = whole(&mut sm.q.iter().copied());
            let first = d.cycle();
            if d.host_burst(HostIn::SmTx, first, &b, &side) {
                in_model[1] = true;
                sm.q.clear();
            }
        }
        if let Some((data, last)) = sm.present(&mut r, true).filter(|_| !rest || sm.held) {
            i.sm_tx_tvalid = true;
            i.sm_tx_tdata = data;
            i.sm_tx_tlast = last;
            (i.sm_tx_dlid, i.sm_tx_sl, i.sm_tx_path_bits) = sm_meta;
        }
        if !rest && trap.q.is_empty() && !in_model[2] && r.chance(400) {
            trap.load(&trap_mad(&mut r, nports), db);
        }
        if !in_model[2] && !trap.held && trap.q.len() == mad_beats && r.chance(2) {
            let b = whole(&mut trap.q.iter().copied());
            let first = d.cycle();
            if d.host_burst(HostIn::TrapTx, first, &b, &DevIn::default()) {
                in_model[2] = true;
                trap.q.clear();
            }
        }
        if let Some((data, last)) = trap.present(&mut r, true).filter(|_| !rest || trap.held) {
            i.trap_tx_tvalid = true;
            i.trap_tx_tdata = data;
            i.trap_tx_tlast = last;
        }
        if !rest && r.chance(100) {
            i.sm_rq_post = true;
            i.sm_rq_post_n = r.next() as u8;
            i.sm_rq_clr = r.chance(2);
            i.sm_rq_port = r.below(3) as u8;
        }
        if !rest && gq.is_empty() && r.chance(60) {
            let mut g = packet(&mut r, nports);
            // LRH..ICRC: whole 4-byte words, as the host builds them, or
            // not (the RTL sends those too, the VCRC over the whole words)
            let n = g.len().saturating_sub(2);
            let n = if r.chance(3) {
                n.saturating_sub(r.below(4) as usize).max(1)
            } else {
                (n & !3).max(4)
            };
            g.truncate(n);
            gq.extend(beats(&g, db));
        }
        if let Some(&(data, keep, last)) = gq.front() {
            if g_held || (!rest && !r.chance(5)) {
                i.gmp_tx_tvalid = true;
                i.gmp_tx_tdata = data;
                i.gmp_tx_tkeep = keep;
                i.gmp_tx_tlast = last;
            }
        }
        let o = d
            .step(&i, &pin, Changed::Ports(&changed))
            .with_context(|| format!("cycle {cyc} of the soak (seed {seed})"))?;
        last_rest = inputs_at_rest(&i, &pin, &links);
        links.clear();
        links.extend(pin.iter().map(|x| x.link_up));
        if let Some(m) = rest_from {
            rest_left = rest_left.max(m);
        }
        if i.sma_tx_tvalid && o.sma_tx_tready {
            resp.pop_front();
        }
        resp_held = i.sma_tx_tvalid && !o.sma_tx_tready;
        seen.sm_sent += u64::from(sm.step(i.sm_tx_tvalid, o.sm_tx_tready));
        seen.trap_sent += u64::from(trap.step(i.trap_tx_tvalid, o.trap_tx_tready));
        d.take_host_taken(&mut taken);
        for t in taken.drain(..) {
            in_model[t.stream as usize] = false;
            match t.stream {
                HostIn::SmaTx => {}
                HostIn::SmTx => seen.sm_sent += 1,
                HostIn::TrapTx => seen.trap_sent += 1,
            }
        }
        g_held = i.gmp_tx_tvalid && !o.gmp_tx_tready;
        if o.gmp_rx_tvalid && o.gmp_rx_tlast {
            verdicts[usize::from(o.gmp_rx_reason & 7)] += 1;
        }
        if i.gmp_tx_tvalid && o.gmp_tx_tready {
            gq.pop_front();
        }
        seen.sm_rx += u64::from(o.sm_rx_tvalid && o.sm_rx_tlast && i.sm_rx_tready);
        if o.sma_rx_tvalid && i.sma_rx_tready {
            rx_mad.extend((0..db).map(|j| (o.sma_rx_tdata[j / 8] >> ((j % 8) * 8)) as u8));
            if o.sma_rx_tlast {
                seen.viol += u64::from(o.sma_rx_mkey_viol);
                seen.mask += u64::from(o.sma_rx_mkey_mask);
                let mut mad = std::mem::take(&mut rx_mad);
                if resp.is_empty() && !in_model[0] && !o.sma_rx_mkey_viol {
                    // the answer: GetResp, back to the requester
                    mad[3] = 0x81;
                    resp.extend(beats(&mad, db).into_iter().map(|(w, _, l)| (w, l)));
                    resp_meta = (o.sma_rx_dlid, o.sma_rx_slid, o.sma_rx_sl);
                }
            }
        }
        let c0 = i.reg_addr.wrapping_sub(swreg::ctr(0, 0));
        if !i.reg_we && c0 < 16 {
            p0moved[usize::from(c0)] |= o.reg_rdata != p0base[usize::from(c0)];
        }
        // the lease expiring: the protect bits fall to 0 with no write
        // (the SM protects the port again a while later)
        if let Some((p, wrote)) = prot_prev {
            if p != 0 && o.port0_mkey_prot == 0 && !wrote {
                seen.expiry += 1;
                rearm = Some(r.below(200) as u32);
            }
        }
        match rearm {
            Some(0) if pend.is_empty() => {
                let p = [1, 1, 2, 3][r.below(4) as usize];
                pend.push_back((swreg::mkey(reg::MKEY_PROT), Some(p)));
                rearm = None;
            }
            Some(ref mut k) => *k = k.saturating_sub(1),
            None => {}
        }
        let prot_w = i.reg_we && i.reg_addr == swreg::mkey(reg::MKEY_PROT);
        prot_prev = Some((o.port0_mkey_prot, prot_w));
        offered += pin.iter().filter(|x| x.rx_tvalid && x.rx_tlast).count() as u64;
        for (k, o) in d.ports_out().iter().enumerate() {
            let x = &pin[k];
            if !x.link_up {
                txpos[k] = (0, false);
            }
            if !(o.tx_tvalid && x.tx_tready) {
                continue;
            }
            let (pos, vl15) = &mut txpos[k];
            if *pos == 0 {
                *vl15 = o.tx_tdata[0] as u8 >> 4 == 15;
            }
            if *vl15 && *pos == tid {
                let w = o.tx_tdata[tid_lane / 8] >> ((tid_lane % 8) * 8);
                match [w as u8, (w >> 8) as u8] {
                    [TID_SM, 0xA5] => seen.sm_out += 1,
                    [TID_TRAP, 0x85] => seen.trap_out += 1,
                    _ => {}
                }
            }
            *pos += 1;
            if o.tx_tlast {
                *pos = 0;
                sent += 1;
            }
        }
    }
    // finish the packets on the wires and drain (the lease ends: a period
    // of one second of one cycle), then every class of event must have
    // been counted
    pend.push_back((swreg::mkey(reg::MKEY_LEASE), Some(1)));
    pend.push_back((swreg::mkey(reg::MKEY_TICK), Some(1)));
    for _ in 0..20_000 {
        for (p, x) in drv.iter_mut().zip(pin.iter_mut()) {
            x.link_up = true;
            x.tx_tready = true;
            x.rx_tvalid = false;
            // a burst's beats arrive on their own first, then those the
            // cable took back, beat by beat
            if p.burst.pop_front().is_some() {
                continue;
            }
            if let Some((data, keep, last)) = p.q.pop_front() {
                x.rx_tvalid = true;
                x.rx_tdata = data;
                x.rx_tkeep = keep;
                x.rx_tlast = last;
            }
        }
        let mut i = DevIn {
            sma_rx_tready: true,
            sm_rx_tready: true,
            ..DevIn::default()
        };
        if let Some((a, v)) = pend.pop_front() {
            (i.reg_we, i.reg_addr, i.reg_wdata) = (v.is_some(), a, v.unwrap_or(0));
        }
        if let Some(&(data, last)) = resp.front() {
            i.sma_tx_tvalid = true;
            i.sma_tx_tdata = data;
            i.sma_tx_tlast = last;
            (i.sma_tx_slid, i.sma_tx_dlid, i.sma_tx_sl) = resp_meta;
        }
        if let Some((data, last)) = sm.present(&mut r, false) {
            i.sm_tx_tvalid = true;
            i.sm_tx_tdata = data;
            i.sm_tx_tlast = last;
            (i.sm_tx_dlid, i.sm_tx_sl, i.sm_tx_path_bits) = sm_meta;
        }
        if let Some((data, last)) = trap.present(&mut r, false) {
            i.trap_tx_tvalid = true;
            i.trap_tx_tdata = data;
            i.trap_tx_tlast = last;
        }
        if let Some(&(data, keep, last)) = gq.front() {
            i.gmp_tx_tvalid = true;
            i.gmp_tx_tdata = data;
            i.gmp_tx_tkeep = keep;
            i.gmp_tx_tlast = last;
        }
        let o = d.step(&i, &pin, Changed::All)?;
        if o.sma_tx_tready && i.sma_tx_tvalid {
            resp.pop_front();
        }
        seen.sm_sent += u64::from(sm.step(i.sm_tx_tvalid, o.sm_tx_tready));
        seen.trap_sent += u64::from(trap.step(i.trap_tx_tvalid, o.trap_tx_tready));
        if o.gmp_tx_tready && i.gmp_tx_tvalid {
            gq.pop_front();
        }
    }
    let mut sum = [0u64; 16];
    for p in 1..=nports {
        for (c, s) in sum.iter_mut().enumerate() {
            let i = DevIn {
                reg_addr: swreg::ctr(p, c as u8),
                ..DevIn::default()
            };
            *s += u64::from(tick(d, &i, &pin)?);
        }
    }
    let idle = d.step(&DevIn::default(), &pin, Changed::All)?.idle;
    anyhow::ensure!(
        idle,
        "the switch is not idle after the drain ({sent} sent, counters {sum:?})"
    );
    // port 0's host side: the SM's requests and the traps went out, the SM
    // took MADs, the M_Key check found violations and masked Gets, a lease
    // expired
    anyhow::ensure!(
        seen.sm_sent > 0
            && seen.trap_sent > 0
            && seen.sm_out > 0
            && seen.trap_out > 0
            && seen.sm_rx > 0
            && seen.viol > 0
            && seen.mask > 0
            && seen.expiry > 0,
        "port 0's host side missed a class of event: {seen:?}"
    );
    // port 0's SMI counters counting: deliveries,
    // each receive check discarding (ICRC, header: the short and malformed
    // VL15 packets, LID, DR rules), forwards, the send queue's packets,
    // DR discards and local SMPs, routes to nowhere, M_Key violations
    use swreg::ctr;
    let p0bank = p0_bank(d, &pin)?;
    for c in [
        ctr::P0_TO_SMA,
        ctr::P0_TO_SM,
        ctr::P0_ICRC_ERR,
        ctr::P0_BAD_HDR,
        ctr::P0_LID_ERR,
        ctr::P0_DR_DISCARD,
        ctr::P0_DR_FORWARDED,
        ctr::P0_SQ_PKTS,
        ctr::P0_SQ_DR_DISCARD,
        ctr::P0_SQ_LOCAL,
        ctr::P0_NO_ROUTE,
        ctr::P0_MKEY_VIOL,
    ] {
        let k = usize::from(c);
        anyhow::ensure!(
            p0moved[k] || p0bank[k] != p0base[k],
            "port-0 counter {} never counted: {p0bank:?} ({seen:?})",
            ctr::P0_NAMES[k]
        );
    }
    if nports == 1 {
        // every routed packet loops back: nothing leaves
        anyhow::ensure!(
            sum[usize::from(swreg::ctr::LOOP_DROP)] > 0,
            "no loop drop: {sum:?}"
        );
        return Ok(());
    }
    // (fewer ports: fewer routes to send on, longer gaps between packets)
    let floor = cycles / if nports < 4 { 400 } else { 200 };
    anyhow::ensure!(sent > floor, "only {sent} packets sent in {cycles} cycles");
    for c in [ctr::G_TX_PKTS, ctr::G_TX_DROP, ctr::G_TX_WORDS] {
        let i = DevIn {
            reg_addr: swreg::ctr0g(c),
            ..DevIn::default()
        };
        let v = tick(d, &i, &pin)?;
        anyhow::ensure!(v > 0, "GMP counter {c} never moved");
    }
    // port 0's GMP receive path: every verdict of the GSI check on
    // gmp_rx, and its counters moving in the last quarter
    use crate::model::regmap::gsi_reason as why;
    for v in [
        why::OK,
        why::ICRC_ERR,
        why::BAD_HDR,
        why::PKEY_VIOL,
        why::QKEY_VIOL,
    ] {
        anyhow::ensure!(
            verdicts[usize::from(v)] > 0,
            "gmp_rx never gave reason {v}: {verdicts:?}"
        );
    }
    let gbank = gmp_bank(d, &pin)?;
    for c in [ctr::G_RX_PKTS, ctr::G_RX_WORDS, ctr::G_GMPS] {
        let k = usize::from(c);
        anyhow::ensure!(
            gbank[k] != gbank0[k],
            "GMP counter {} did not move in the last quarter: {gbank0:?} then {gbank:?}",
            ctr::G_NAMES[k]
        );
    }
    for c in [
        ctr::RX_PKTS,
        ctr::FWD_PKTS,
        ctr::TX_VL15_PKTS,
        ctr::TX_DATA_PKTS,
        ctr::RX_WORDS,
        ctr::TX_WORDS,
        ctr::NO_ROUTE,
        ctr::STATE_DROP,
    ] {
        anyhow::ensure!(
            sum[usize::from(c)] > 0,
            "counter {} never moved: {sum:?} ({offered} offered, {sent} sent)",
            ctr::EXT_NAMES[usize::from(c)]
        );
    }
    Ok(())
}

/// A GMP from the host that is not whole 4-byte words (LRH..ICRC of
/// 4k + 1..3 bytes) leaves its port as the RTL sends it: every byte, then
/// the VCRC over the whole 4-byte words only (`rtl/ib_link_tx.sv`), RTL
/// and twin in lockstep.
#[test]
fn unaligned_host_gmp_leaves_as_the_rtl_sends_it() -> Result<()> {
    for data_w in [64u32, 128] {
        for len in [25usize, 26, 27, 29, 30, 31, 61, 62, 63] {
            let spec = DeviceSpec::Switch { nports: 2, data_w };
            let mut d = backend(Fidelity::Lockstep).build(spec)?;
            let d = d.as_mut();
            let db = (data_w / 8) as usize;
            let pin = two_ports();
            d.reset(4)?;
            // LIDs 0..3 to port 2
            write(d, &pin, swreg::LFT_BASE, 0x0202_0202)?;
            write(d, &pin, swreg::LINEAR_FDB_TOP, u32::from(TOP))?;
            write(d, &pin, swreg::PORT0_LID, u32::from(P0_LID))?;
            for v in [3, 4] {
                write(d, &pin, swreg::PORT_STATE + 2, v)?;
            }
            let mut g: Vec<u8> = (0..len).map(|k| (k * 37 + 5) as u8).collect();
            g[0] = 0x00;
            g[1] = 0x02;
            g[2..4].copy_from_slice(&2u16.to_be_bytes());
            g[4] = 0;
            g[5] = (len / 4) as u8;
            let mut q: VecDeque<_> = beats(&g, db).into();
            let mut out = Vec::new();
            let mut done = false;
            for _ in 0..200 {
                let mut i = DevIn::default();
                if let Some(&(data, keep, last)) = q.front() {
                    i.gmp_tx_tvalid = true;
                    i.gmp_tx_tdata = data;
                    i.gmp_tx_tkeep = keep;
                    i.gmp_tx_tlast = last;
                }
                let o = d.step(&i, &pin, Changed::All)?;
                if i.gmp_tx_tvalid && o.gmp_tx_tready {
                    q.pop_front();
                }
                let t = &d.ports_out()[1];
                if t.tx_tvalid {
                    let n = t.tx_tkeep.count_ones() as usize;
                    out.extend((0..n).map(|j| (t.tx_tdata[j / 8] >> ((j % 8) * 8)) as u8));
                    done |= t.tx_tlast;
                }
            }
            anyhow::ensure!(done, "DataW {data_w}, {len} bytes: nothing left port 2");
            let mut want = g.clone();
            want.extend_from_slice(&crc::vcrc(&g[..len & !3]).to_le_bytes());
            anyhow::ensure!(
                out == want,
                "DataW {data_w}, {len} bytes: port 2 sent {out:02x?}, want {want:02x?}"
            );
        }
    }
    Ok(())
}

/// Two ports, both links up and ready.
fn two_ports() -> Vec<PortIn> {
    vec![
        PortIn {
            link_up: true,
            tx_tready: true,
            ..PortIn::default()
        };
        2
    ]
}

/// A 2-port switch, RTL and twin in lockstep, reset, with the port-0 LID
/// and port 1 Active: the directed tests of port 0.
fn p0_switch(data_w: u32, pin: &[PortIn]) -> Result<Box<dyn Dut>> {
    let spec = DeviceSpec::Switch { nports: 2, data_w };
    let mut d = backend(Fidelity::Lockstep).build(spec)?;
    d.reset(4)?;
    write(d.as_mut(), pin, swreg::PORT0_LID, u32::from(P0_LID))?;
    for v in [3, 4] {
        write(d.as_mut(), pin, swreg::PORT_STATE + 1, v)?;
    }
    Ok(d)
}

/// An SMP for port 0's SMA (LRH..ICRC): `method` of PortInfo with M_Key
/// `key`, LID-routed to the port-0 LID or (`dr`) directed route with no
/// hops, to the permissive LID.
fn sma_smp(dr: bool, method: u8, key: u64) -> Vec<u8> {
    let mut b = vec![0u8; 28 + 256];
    let dlid = if dr { 0xFFFF } else { P0_LID };
    b[0] = 0xF0;
    b[1] = 2;
    b[2..4].copy_from_slice(&dlid.to_be_bytes());
    b[5] = 72;
    b[6..8].copy_from_slice(&2u16.to_be_bytes());
    b[8] = 0x64;
    b[10..12].fill(0xFF);
    let m = &mut b[28..];
    m[0] = 1;
    m[1] = if dr { 0x81 } else { 0x01 };
    m[2] = 1;
    m[3] = method;
    m[16..18].copy_from_slice(&0x0015u16.to_be_bytes());
    m[24..32].copy_from_slice(&key.to_be_bytes());
    m[32..36].fill(0xFF); // DrSLID, DrDLID permissive
    crc::append_icrc(&mut b);
    b
}

/// `b` (LRH..ICRC) with its VCRC, as beats on a port's wire.
fn wire(b: &[u8], db: usize) -> Vec<([u64; 2], u16, bool)> {
    let mut w = b.to_vec();
    w.extend_from_slice(&crc::vcrc(b).to_le_bytes());
    beats(&w, db)
}

/// One cycle of a directed test: port 1 sends the next beat of `q` (a
/// beat of no bytes is an idle cycle).
fn drive(
    d: &mut dyn Dut,
    pin: &mut [PortIn],
    q: &mut VecDeque<([u64; 2], u16, bool)>,
    i: &DevIn,
) -> Result<vl15_bindings::DevOut> {
    let x = &mut pin[0];
    x.rx_tvalid = false;
    if let Some((data, keep, last)) = q.pop_front().filter(|b| b.1 != 0) {
        x.rx_tvalid = true;
        x.rx_tdata = data;
        x.rx_tkeep = keep;
        x.rx_tlast = last;
    }
    d.step(i, pin, Changed::All)
}

/// Port 0's M_Key set up: key `MKEYS[0]`, protect bits `prot`, lease
/// period and tick.
fn mkey_setup(d: &mut dyn Dut, pin: &[PortIn], prot: u32, lease: u32, tick: u32) -> Result<()> {
    for (a, v) in [
        (reg::MKEY_LO, MKEYS[0] as u32),
        (reg::MKEY_HI, (MKEYS[0] >> 32) as u32),
        (reg::MKEY_PROT, prot),
        (reg::MKEY_LEASE, lease),
        (reg::MKEY_TICK, tick),
    ] {
        write(d, pin, swreg::mkey(a), v)?;
    }
    Ok(())
}

/// The M_Key lease expiring in the cycle of a verdict: a Set with a wrong
/// M_Key starts the lease (protect 2, two seconds of 50 cycles); the SMA
/// takes the last beat of a second SMP in every cycle from three before the
/// expiry to three after it: a Get with the right M_Key (it stops the
/// timer; in the expiry's cycle the protect bits are still cleared), or a
/// Set with a wrong one (a violation, which starts no lease while one runs
/// and starts one after the expiry). RTL and twin in lockstep, the lease
/// status read in every cycle; each sweep sees both ends, so it holds the
/// expiry's own cycle.
#[test]
fn mkey_lease_expiry_racing_a_verdict() -> Result<()> {
    const TICK: u32 = 50;
    const LEASE: u32 = 2;
    for data_w in [64u32, 128] {
        let db = (data_w / 8) as usize;
        let mad_beats = 256 / db;
        for set in [false, true] {
            let mut ends = Vec::new();
            for dx in -3i64..=3 {
                let mut pin = two_ports();
                let mut d = p0_switch(data_w, &pin)?;
                let d = d.as_mut();
                mkey_setup(d, &pin, 2, LEASE, TICK)?;
                let mut q: VecDeque<_> = wire(&sma_smp(false, 2, 0), db).into();
                let second = if set {
                    sma_smp(false, 2, MKEYS[1])
                } else {
                    sma_smp(false, 1, MKEYS[0])
                };
                q.extend(wire(&second, db));
                // the cycle of the first verdict, the beats taken of the
                // MAD on sma_rx, the cycle the second one's was taken
                let mut h0: Option<i64> = None;
                let mut taken = 0;
                let mut at = None;
                let mut end = (0, 0);
                for c in 0..300i64 {
                    let ready = match h0 {
                        Some(h) if taken + 1 == mad_beats => c >= h + i64::from(LEASE * TICK) + dx,
                        _ => true,
                    };
                    let i = DevIn {
                        sma_rx_tready: ready,
                        reg_addr: swreg::mkey(reg::MKEY_LEASE_ST),
                        ..DevIn::default()
                    };
                    let o = drive(d, &mut pin, &mut q, &i)
                        .with_context(|| format!("DataW {data_w}, set {set}, dx {dx}"))?;
                    if o.sma_rx_tvalid && ready {
                        taken += 1;
                        if o.sma_rx_tlast {
                            taken = 0;
                            match h0 {
                                None => {
                                    anyhow::ensure!(o.sma_rx_mkey_viol, "no violation");
                                    h0 = Some(c);
                                }
                                Some(h) => at = Some(c - h),
                            }
                        }
                    }
                    if at.is_some_and(|a| c == h0.unwrap_or(0) + a + 3) {
                        end = (o.port0_mkey_prot, o.reg_rdata >> 16);
                    }
                }
                let at = at.with_context(|| format!("DataW {data_w}: no second verdict"))?;
                anyhow::ensure!(
                    at == i64::from(LEASE * TICK) + dx,
                    "DataW {data_w}: the second verdict came {at} cycles after the first"
                );
                ends.push(end);
            }
            // (protect bits, lease running) 3 cycles after the second
            // verdict: a Get before the expiry stops the lease, one after
            // finds it expired; a Set after the expiry starts a new lease
            let want = if set {
                [(0, 0), (0, 1)]
            } else {
                [(2, 0), (0, 0)]
            };
            anyhow::ensure!(
                want.iter().all(|w| ends.contains(w)),
                "DataW {data_w}, set {set}: ends {ends:?}"
            );
        }
    }
    Ok(())
}

/// Writes of the lease period and the tick while the lease runs (protect
/// 3, three seconds of 20 cycles), in cycles spread over its run: a
/// period that has already passed ends it at the next second's end, a
/// period of 0 keeps it running, a tick of 1 or 0 ends it within three
/// cycles. RTL and twin in lockstep, the lease status read in every cycle.
#[test]
fn mkey_lease_and_tick_writes_while_the_lease_runs() -> Result<()> {
    for data_w in [64u32, 128] {
        let db = (data_w / 8) as usize;
        for (a, v, prot_end) in [
            (reg::MKEY_LEASE, 1, 0),
            (reg::MKEY_LEASE, 0, 3),
            (reg::MKEY_TICK, 1, 0),
            (reg::MKEY_TICK, 0, 0),
        ] {
            for k in (1..60i64).step_by(4) {
                let mut pin = two_ports();
                let mut d = p0_switch(data_w, &pin)?;
                let d = d.as_mut();
                mkey_setup(d, &pin, 3, 3, 20)?;
                let mut q: VecDeque<_> = wire(&sma_smp(true, 2, 0), db).into();
                let mut h0: Option<i64> = None;
                let mut o = None;
                for c in 0..200i64 {
                    let mut i = DevIn {
                        sma_rx_tready: true,
                        reg_addr: swreg::mkey(reg::MKEY_LEASE_ST),
                        ..DevIn::default()
                    };
                    if h0.is_some_and(|h| c == h + k) {
                        (i.reg_we, i.reg_addr, i.reg_wdata) = (true, swreg::mkey(a), v);
                    }
                    let x = drive(d, &mut pin, &mut q, &i)
                        .with_context(|| format!("DataW {data_w}, {a:#x} := {v} at {k}"))?;
                    if x.sma_rx_tvalid && x.sma_rx_tlast && h0.is_none() {
                        anyhow::ensure!(x.sma_rx_mkey_viol, "no violation");
                        h0 = Some(c);
                    }
                    o = Some(x);
                }
                let o = o.context("no cycle")?;
                anyhow::ensure!(
                    h0.is_some() && o.port0_mkey_prot == prot_end,
                    "DataW {data_w}, {a:#x} := {v} at {k}: protect bits {}, verdict at {h0:?}",
                    o.port0_mkey_prot
                );
            }
        }
    }
    Ok(())
}

/// VL15 packets for port 0 that are no SMP: shorter than one (LRH..ICRC
/// of every length from 24 to 284 bytes, LID-routed and directed route,
/// each with an SMP's header as far as it reaches and a good ICRC), each
/// right after an SMP whose header fields would pass were they kept, and
/// SMPs with one header field wrong. RTL and twin in lockstep; port 0
/// counts each BadHdr and delivers every SMP to the SMA.
#[test]
fn short_and_malformed_vl15_packets_to_port0() -> Result<()> {
    for data_w in [64u32, 128] {
        let db = (data_w / 8) as usize;
        let mut pin = two_ports();
        let mut d = p0_switch(data_w, &pin)?;
        let d = d.as_mut();
        let mut q = VecDeque::new();
        let (mut good, mut bad) = (0u32, 0u32);
        for words in 6..72usize {
            for dr in [false, true] {
                let smp = sma_smp(dr, 1, 0);
                q.extend(wire(&smp, db));
                let mut s = smp[..4 * words - 4].to_vec();
                s[4] = (words >> 8) as u8;
                s[5] = words as u8;
                crc::append_icrc(&mut s);
                q.extend(wire(&s, db));
                // (port 0 takes an SMP in about as many cycles as the SMA
                // takes its MAD: room for it, so that port 1 drops none)
                q.extend(std::iter::repeat_n(([0, 0], 0, false), 300 / db));
                good += 1;
                bad += 1;
            }
        }
        for fault in 0..6 {
            let mut s = sma_smp(fault % 2 == 0, 2, 0);
            s.truncate(s.len() - 4);
            match fault {
                0 => s[1] |= 3,    // LNH: a GRH
                1 => s[8] = 0x04,  // opcode
                2 => s[9] |= 1,    // TVer
                3 => s[15] = 1,    // DestQP
                4 => s[28] = 2,    // BaseVersion
                _ => s[29] = 0x04, // class
            }
            crc::append_icrc(&mut s);
            q.extend(wire(&s, db));
            bad += 1;
        }
        let i = DevIn {
            sma_rx_tready: true,
            ..DevIn::default()
        };
        for _ in 0..q.len() + 1000 {
            drive(d, &mut pin, &mut q, &i).with_context(|| format!("DataW {data_w}"))?;
        }
        let b = p0_bank(d, &pin)?;
        use swreg::ctr;
        anyhow::ensure!(
            b[usize::from(ctr::P0_BAD_HDR)] == bad && b[usize::from(ctr::P0_TO_SMA)] == good,
            "DataW {data_w}: {bad} malformed and {good} SMPs sent, port-0 counters {b:?}"
        );
    }
    Ok(())
}

/// A P_Key table write racing a GMP's verdict: the GMP's P_Key is in the
/// table only from the write on, which comes at every cycle around the
/// GMP's tlast; RTL and twin in lockstep give the same verdict each time
/// (the match is the one registered the cycle before tlast), and the
/// sweep sees both verdicts.
#[test]
fn pkey_write_racing_a_gmp_verdict() -> Result<()> {
    for data_w in [64u32, 128] {
        let db = (data_w / 8) as usize;
        let mut seen = Vec::new();
        for k in 0..90u32 {
            let mut pin = two_ports();
            let mut d = p0_switch(data_w, &pin)?;
            let d = d.as_mut();
            write(d, &pin, swreg::PKEY_IDX, 1)?;
            // a good GMP but for its P_Key
            let mut r = Rng(3);
            let mut g = loop {
                let g = gmp(&mut r);
                let mut s = crate::model::twin::gsi::GsiRx::new();
                if g[1] & 3 == 2 && s.judge(&g, db, 9, |_| 99, &[0xFFFF], None, false).0 == 0 {
                    break g;
                }
            };
            g[10..12].copy_from_slice(&0x1234u16.to_be_bytes());
            g.truncate(g.len() - 6);
            crc::append_icrc(&mut g);
            g.extend_from_slice(&crc::vcrc(&g).to_le_bytes());
            let mut q: VecDeque<_> = beats(&g, db).into();
            let mut verdict = None;
            for c in 0..160u32 {
                let x = &mut pin[0];
                x.rx_tvalid = false;
                if let Some((data, keep, last)) = q.pop_front() {
                    x.rx_tvalid = true;
                    x.rx_tdata = data;
                    x.rx_tkeep = keep;
                    x.rx_tlast = last;
                }
                let i = DevIn {
                    reg_we: c == k,
                    reg_addr: swreg::PKEY_DATA,
                    reg_wdata: 0x9234, // a full member of 0x1234
                    ..DevIn::default()
                };
                let o = d.step(&i, &pin, Changed::All)?;
                if o.gmp_rx_tvalid && o.gmp_rx_tlast {
                    verdict = Some(o.gmp_rx_reason);
                }
            }
            let v = verdict
                .with_context(|| format!("DataW {data_w}, write at {k}: no GMP on gmp_rx"))?;
            seen.push(v);
        }
        use crate::model::regmap::gsi_reason as why;
        anyhow::ensure!(
            seen.contains(&why::OK) && seen.contains(&why::PKEY_VIOL),
            "DataW {data_w}: verdicts {seen:?}"
        );
    }
    Ok(())
}

#[test]
fn lockstep_8_ports_w64() {
    soak(8, 64, 1, 60_000).unwrap();
}

#[test]
fn lockstep_8_ports_w128() {
    soak(8, 128, 2, 60_000).unwrap();
}

#[test]
fn lockstep_36_ports_w64() {
    soak(36, 64, 3, 20_000).unwrap();
}

#[test]
fn lockstep_64_ports_w128() {
    soak(64, 128, 4, 25_000).unwrap();
}

#[test]
fn lockstep_1_port_w64() {
    soak(1, 64, 5, 30_000).unwrap();
}

#[test]
fn lockstep_1_port_w128() {
    soak(1, 128, 6, 30_000).unwrap();
}

/// Longer soaks, several seeds at every radix and width the fabric builds
/// (run with `--ignored`).
#[test]
#[ignore]
fn lockstep_long() {
    for seed in 10..14 {
        soak(8, 64, seed, 400_000).unwrap();
        soak(8, 128, seed, 400_000).unwrap();
        soak(36, 64, seed, 100_000).unwrap();
        soak(64, 128, seed, 60_000).unwrap();
        soak(3, 128, seed, 200_000).unwrap();
    }
}

/// The cost of the twin against the RTL on the soak's traffic (run with
/// `--ignored --nocapture`): wall time of the same cycles through each.
#[test]
#[ignore]
fn cost_twin_vs_rtl() {
    for (nports, w, cycles) in [(8u8, 64u32, 200_000u64), (64, 128, 50_000)] {
        let mut t = [0f64; 2];
        for (k, f) in [Fidelity::Rtl, Fidelity::Twin].into_iter().enumerate() {
            let s = std::time::Instant::now();
            run(f, nports, w, 7, cycles).unwrap();
            t[k] = s.elapsed().as_secs_f64();
        }
        // an idle switch stepped with no input
        let mut idle = [0f64; 2];
        for (k, f) in [Fidelity::Rtl, Fidelity::Twin].into_iter().enumerate() {
            let mut d = backend(f)
                .build(DeviceSpec::Switch { nports, data_w: w })
                .unwrap();
            let pin = vec![
                PortIn {
                    link_up: true,
                    tx_tready: true,
                    ..PortIn::default()
                };
                usize::from(nports)
            ];
            d.reset(4).unwrap();
            d.step(&DevIn::default(), &pin, Changed::All).unwrap();
            let s = std::time::Instant::now();
            for _ in 0..1_000_000 {
                d.step(&DevIn::default(), &pin, Changed::Ports(&[]))
                    .unwrap();
            }
            idle[k] = s.elapsed().as_secs_f64() * 1e3;
        }
        eprintln!(
            "{nports} ports DataW {w}, idle step: RTL {:.1} ns, twin {:.1} ns",
            idle[0], idle[1]
        );
        eprintln!(
            "{nports} ports DataW {w}, {cycles} cycles: RTL {:.3} s ({:.0} ns/cycle), twin {:.3} s ({:.0} ns/cycle)",
            t[0],
            t[0] * 1e9 / cycles as f64,
            t[1],
            t[1] * 1e9 / cycles as f64
        );
    }
}

/// The twin calm through a switch hop (RTL and twin in lockstep, a
/// 3-port switch, the inputs at rest but for the beats arriving): a
/// LID-routed SMP from port 1 out of port 2, a directed-route SMP that port
/// 0 forwards from port 1 out of port 2, two of those back to back, and
/// two GMPs from the host out of port 2 (the GMP send buffer full, its
/// `gmp_tx_tready` rising when the first has left). Prints where the twin
/// is stepped (`R` a beat arriving, `s` stepped, `.` calm, `|` a beat
/// leaving port 2 in a calm cycle, `!` one in a stepped cycle; for a
/// packet given whole as a receive burst, `b` calm and `B` stepped while
/// its beats arrive, counted as steps) and bounds the steps per hop.
/// The SMPs of one hop through the 3-port switch of the calm tests
/// (LID 5 routed out of port 2): LID-routed to LID 5, and a directed
/// route at hop 1 of 2 out of port 2; LRH..VCRC with a new ICRC.
fn hop_smps() -> (Vec<u8>, Vec<u8>) {
    let mut lid = sma_smp(false, 1, 0);
    lid.truncate(lid.len() - 4);
    lid[2..4].copy_from_slice(&5u16.to_be_bytes());
    crc::append_icrc(&mut lid);
    let mut dr = sma_smp(true, 1, 0);
    dr.truncate(dr.len() - 4);
    dr[28 + 6] = 1;
    dr[28 + 7] = 2;
    dr[28 + 128 + 2] = 2;
    crc::append_icrc(&mut dr);
    (lid, dr)
}

#[test]
fn calm_through_a_hop() -> Result<()> {
    for data_w in [64u32, 128] {
        let db = (data_w / 8) as usize;
        let spec = DeviceSpec::Switch { nports: 3, data_w };
        let ls = Lockstep::new(RtlBackend.build(spec)?, TwinBackend.build(spec)?)?;
        let mut p = CalmProbe::new(ls);
        let mut pin = vec![
            PortIn {
                link_up: true,
                tx_tready: true,
                ..PortIn::default()
            };
            3
        ];
        p.reset(4)?;
        write(&mut p, &pin, swreg::PORT0_LID, u32::from(P0_LID))?;
        write(&mut p, &pin, swreg::LFT_BASE + 1, 0x0202_0202)?; // LIDs 4..7
        write(&mut p, &pin, swreg::LINEAR_FDB_TOP, u32::from(TOP))?;
        for port in 1..=3u16 {
            for v in [3, 4] {
                write(&mut p, &pin, swreg::PORT_STATE + port, v)?;
            }
        }
        let (lid, dr) = hop_smps();
        let mut gmp: Vec<u8> = (0..64usize).map(|k| (k * 37 + 5) as u8).collect();
        gmp[0] = 0x00;
        gmp[1] = 0x02;
        gmp[2..4].copy_from_slice(&5u16.to_be_bytes());
        gmp[4] = 0;
        gmp[5] = 16;
        let rest = crate::model::dut::rest_dev_in();
        for (name, wire_pkts, host, max_steps, burst) in [
            ("LID-routed SMP", vec![lid.clone()], 0, 4, false),
            ("DR SMP forwarded", vec![dr.clone()], 0, 9, false),
            (
                "2 DR SMPs forwarded",
                vec![dr.clone(), dr.clone()],
                0,
                15,
                false,
            ),
            ("2 GMPs from the host", vec![], 2, 6, false),
            ("LID-routed SMP, a burst", vec![lid.clone()], 0, 5, true),
            ("DR SMP forwarded, a burst", vec![dr.clone()], 0, 10, true),
        ] {
            let mut q: VecDeque<_> = wire_pkts.iter().flat_map(|b| wire(b, db)).collect();
            let mut arrive = 0;
            if burst {
                // the whole packet given at once, after a cycle not at
                // rest (as in a fabric, its first beat's cycle is stepped);
                // its cycles count as steps where the twin is stepped
                let mut i = rest;
                i.reg_addr = swreg::NUM_PORTS;
                drive(&mut p, &mut pin, &mut VecDeque::new(), &i)?;
                let bs: Vec<stream::Beat> = q
                    .drain(..)
                    .map(|(data, keep, last)| stream::Beat { data, keep, last })
                    .collect();
                arrive = bs.len();
                p.rx_burst(0, p.cycle(), &bs);
                anyhow::ensure!(p.takes_rx_bursts(), "the switch twin takes receive bursts");
            }
            let mut g: VecDeque<_> = (0..host).flat_map(|_| beats(&gmp, db)).collect();
            let mut line = String::new();
            let mut steps = 0;
            let mut quiet = 0;
            while quiet < 20 && line.len() < 2000 {
                let mut i = rest;
                if let Some(&(data, keep, last)) = g.front() {
                    (i.gmp_tx_tvalid, i.gmp_tx_tdata, i.gmp_tx_tkeep) = (true, data, keep);
                    i.gmp_tx_tlast = last;
                }
                let arriving = !q.is_empty() || i.gmp_tx_tvalid;
                let in_burst = arrive > 0;
                arrive = arrive.saturating_sub(1);
                let c0 = p.ls.calm_cycles();
                let o = drive(&mut p, &mut pin, &mut q, &i)
                    .with_context(|| format!("DataW {data_w}, {name}"))?;
                if i.gmp_tx_tvalid && o.gmp_tx_tready {
                    g.pop_front();
                }
                let calm = p.ls.calm_cycles() > c0;
                let out = p.ports_out()[1].tx_tvalid;
                line.push(match (arriving, calm, out) {
                    (false, true, _) if in_burst => 'b',
                    (false, false, _) if in_burst => 'B',
                    (true, _, _) => 'R',
                    (false, true, true) => '|',
                    (false, true, false) => '.',
                    (false, false, true) => '!',
                    (false, false, false) => 's',
                });
                steps += usize::from(!arriving && !calm);
                quiet = if o.idle && !arriving { quiet + 1 } else { 0 };
            }
            eprintln!("DataW {data_w}, {name}: {steps} steps after the arrival\n  {line}");
            if burst {
                anyhow::ensure!(
                    line.contains('b'),
                    "DataW {data_w}, {name}: never calm while the burst arrived: {line}"
                );
            }
            anyhow::ensure!(
                steps <= max_steps,
                "DataW {data_w}, {name}: stepped in {steps} cycles after the arrival: {line}"
            );
        }
    }
    Ok(())
}

/// The cost of the twin's calm periods (run with `--ignored --nocapture`):
/// a 3-port twin forwarding SMPs from port 1 out of port 2 (LID-routed
/// and directed route through port 0), stepped in every cycle, or stepped
/// only where it is not calm and skipped to there.
#[test]
#[ignore]
fn cost_calm_skip() -> Result<()> {
    for data_w in [64u32, 128] {
        let db = (data_w / 8) as usize;
        let (lid, dr) = hop_smps();
        for (name, pkt) in [("LID-routed", &lid), ("DR", &dr)] {
            let mut res = Vec::new();
            for calm in [false, true] {
                let spec = DeviceSpec::Switch { nports: 3, data_w };
                let mut d = TwinBackend.build(spec)?;
                let d = d.as_mut();
                let mut pin = vec![
                    PortIn {
                        link_up: true,
                        tx_tready: true,
                        ..PortIn::default()
                    };
                    3
                ];
                d.reset(4)?;
                write(d, &pin, swreg::PORT0_LID, u32::from(P0_LID))?;
                write(d, &pin, swreg::LFT_BASE + 1, 0x0202_0202)?;
                write(d, &pin, swreg::LINEAR_FDB_TOP, u32::from(TOP))?;
                let rest = crate::model::dut::rest_dev_in();
                let hops = 20_000;
                let (mut steps, mut bursts) = (0u64, Vec::new());
                let s = std::time::Instant::now();
                for _ in 0..hops {
                    let mut q: VecDeque<_> = wire(pkt, db).into();
                    let mut quiet = 0;
                    while quiet < 3 {
                        let arriving = !q.is_empty();
                        let o = drive(d, &mut pin, &mut q, &rest)?;
                        steps += 1;
                        bursts.clear();
                        d.take_tx_bursts(&mut bursts);
                        quiet = if o.idle { quiet + 1 } else { 0 };
                        if calm && !arriving && q.is_empty() {
                            if let Some(t) = d.calm_until() {
                                let n = t.min(d.cycle() + 10_000) - d.cycle();
                                d.skip(n);
                            }
                        }
                    }
                }
                let dt = s.elapsed().as_secs_f64();
                res.push(format!(
                    "{}: {:.0} ns/hop, {:.1} steps/hop",
                    if calm { "calm" } else { "every cycle" },
                    dt * 1e9 / f64::from(hops),
                    steps as f64 / f64::from(hops)
                ));
            }
            eprintln!("DataW {data_w}, {name} SMP: {}", res.join("; "));
        }
    }
    Ok(())
}
