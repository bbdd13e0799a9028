//! Fuzzing of everything that reads untrusted input: packets (`packet`,
//! `decode`), pcap files (`pcap`), topology files (`topology`), the ibsim
//! wire messages (`ibsim::SimCtl`/`SimRequest`, the RMPP length fields
//! `serve` reads), the ibsim console commands (`Net::console`) and the node
//! SMAs behind a hop-count-0 directed-route SMP (`Net::local_smp`, what a
//! `vl15 serve` client reaches without the RTL).
//!
//! Structure-aware: every case starts from a valid input built with the
//! project's own builders (packets from `Packet::new`/`mad`, captures from
//! `encode_pcap`, the ibsim example topologies and generated fat trees,
//! `sim_ctl`/`sim_request` from their encoders) and mutates it: bit flips,
//! interesting bytes, truncation, insertion, deletion, duplication, huge
//! numbers in binary and in text, grammar tokens, bad UTF-8.
//!
//! Properties checked on every case: no panic, no hang (a watchdog), errors
//! are errors with context (non-empty, naming file and line where the
//! format has lines), decoded values re-encode to the same bytes (packets,
//! SMPs, attributes, `sim_ctl`, `sim_request`, pcap records), a built packet
//! decodes to the fields it was built from, a parsed topology is consistent
//! (links symmetric, ports in range, ids indexed) and parsing is
//! deterministic, an SMA answer to Get/Set is a GetResp with the request's
//! TID and attribute (ibspec §4).
//!
//! Runs: `vl15 fuzz --target T --seconds N --seed S` (time-bounded, prints
//! cases per target and the seed; a failing case prints its case seed, which
//! `--case-seed` replays alone); `make test` runs a few hundred cases per
//! target through proptest (`tests/fuzz.rs`).

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};

use crate::agents::gmp::{received_mad_len, rmpp_send_header};
use crate::agents::ibsim::{SimCtl, SimRequest, SIM_CTL_BYTES, SIM_MAGIC, SIM_REQUEST_BYTES};
use crate::agents::node_sma::Net;
use crate::model::net::NetOptions;
use crate::model::stream::Rng;
use crate::proto::crc;
use crate::proto::decode::decode_line;
use crate::proto::mad::{self, Mad};
use crate::proto::packet::consts::*;
use crate::proto::packet::{
    Bth, Deth, DrSmp, LidSmp, Lrh, MadHeader, NodeDescription, NodeInfo, Packet, PortInfo, Smp,
};
use crate::proto::pcap::{encode_pcap, parse_pcap, LinkType, PcapRecord};
use crate::proto::topology::{Topology, TopologyError};

/// The ibsim example topologies (`tests/topologies/`), the seeds of the
/// topology and console targets.
pub const EXAMPLES: &[(&str, &str)] = &[
    ("net", include_str!("../../../tests/topologies/net")),
    ("net.1", include_str!("../../../tests/topologies/net.1")),
    (
        "net.2sw2path",
        include_str!("../../../tests/topologies/net.2sw2path"),
    ),
    (
        "net.2sw2path4hca",
        include_str!("../../../tests/topologies/net.2sw2path4hca"),
    ),
    (
        "net.2sw2path4hca2port",
        include_str!("../../../tests/topologies/net.2sw2path4hca2port"),
    ),
];

/// What to fuzz.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// `Packet::parse`, the SMP and attribute decoders, `decode_line`.
    Decode,
    /// `parse_pcap`, `encode_pcap`.
    Pcap,
    /// `Topology::parse` (with `include`s of the examples).
    Topology,
    /// `SimCtl`/`SimRequest` decoding, the RMPP length fields.
    Ibsim,
    /// `Net::console` (Link/Unlink/ReLink) on a fabric.
    Console,
    /// The node SMAs of a fabric through `Net::local_smp`.
    Sma,
}

impl Target {
    pub const ALL: &'static [Target] = &[
        Target::Decode,
        Target::Pcap,
        Target::Topology,
        Target::Ibsim,
        Target::Console,
        Target::Sma,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Target::Decode => "decode",
            Target::Pcap => "pcap",
            Target::Topology => "topology",
            Target::Ibsim => "ibsim",
            Target::Console => "console",
            Target::Sma => "sma",
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Target {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Target> {
        Target::ALL
            .iter()
            .copied()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Target::ALL.iter().map(|t| t.name()).collect();
                anyhow!("unknown fuzz target {s:?} (targets: {})", names.join(", "))
            })
    }
}

// ---------------------------------------------------------------------------
// Mutations

/// Bytes worth trying at any position (edges of signed/unsigned fields).
const INTERESTING: &[u8] = &[
    0x00, 0x01, 0x02, 0x03, 0x0F, 0x3F, 0x40, 0x7F, 0x80, 0xFE, 0xFF,
];

/// Invalid UTF-8 sequences: stray continuation, truncated 2/3/4-byte
/// sequences, an overlong NUL, a surrogate, beyond U+10FFFF, bytes never
/// valid.
const BAD_UTF8: &[&[u8]] = &[
    b"\x80",
    b"\xC3",
    b"\xE2\x82",
    b"\xF0\x9F\x98",
    b"\xC0\x80",
    b"\xED\xA0\x80",
    b"\xF4\x90\x80\x80",
    b"\xFE",
    b"\xFF",
];

/// Numbers in text that do not fit the fields they land in.
const HUGE_TEXT: &[&str] = &[
    "0",
    "-1",
    "255",
    "256",
    "65535",
    "65536",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "0x",
    "0xFFFFFFFFFFFFFFFFFF",
    "1e9",
    "+5",
];

/// Grammar pieces of the topology and console formats.
const TOKENS: &[&str] = &[
    "Switch",
    "Hca",
    "Ca",
    "Rt",
    " ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "\"",
    "\"Switch1\"",
    "\"Hca1\"",
    "[",
    "]",
    "[1]",
    "[0]",
    "[3]",
    "[255]",
    "(",
    ")",
    "(0x1a2b)",
    "#",
    "# \"",
    "@",
    "@[1]",
    "\"@a\"",
    "lid ",
    "lmc ",
    "4xQDR",
    "12xEDR",
    "2xNDR",
    "w=",
    "s=",
    "e=",
    "=",
    "+",
    "switchguid=",
    "caguid=",
    "rtguid=",
    "vendid=",
    "devid=",
    "sysimgguid=",
    "width=",
    "speed=",
    "extspeed=",
    "module=\"m\"",
    "include \"net.1\"",
    "include \"net\"",
    "include \"fuzz.net\"",
    "do ",
    "enhanced port 0",
    "base port 0",
    "Link",
    "Unlink",
    "ReLink",
    "[ext 3]",
    "é",
    "\0",
];

/// Apply one random mutation to `b`. `text` adds the text-only kinds
/// (tokens, numbers, bad UTF-8).
pub fn mutate(rng: &mut Rng, b: &mut Vec<u8>, text: bool) {
    let kinds = if text { 13 } else { 10 };
    let at = rng.below(b.len() + 1);
    match rng.below(kinds) {
        0 if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] ^= 1 << rng.below(8);
        }
        1 if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] = *rng.pick(INTERESTING);
        }
        2 => b.truncate(at),
        3 => {
            let n = 1 + rng.below(16);
            let ins: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            b.splice(at..at, ins);
        }
        4 if !b.is_empty() => {
            let n = 1 + rng.below(32.min(b.len() - at.min(b.len() - 1)));
            let from = at.min(b.len() - 1);
            b.drain(from..(from + n).min(b.len()));
        }
        5 if !b.is_empty() => {
            let from = rng.below(b.len());
            let n = 1 + rng.below((b.len() - from).min(64));
            let piece = b[from..from + n].to_vec();
            b.splice(at..at, piece);
        }
        6 if b.len() >= 8 => {
            // A 16/32/64-bit field set to an edge value, either byte order.
            let w = *rng.pick(&[2usize, 4, 8]);
            let i = rng.below(b.len() - w + 1);
            let v: u64 = *rng.pick(&[0, u64::MAX, 0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000]);
            let bytes = if rng.chance(50) {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            };
            b[i..i + w].copy_from_slice(&bytes[..w]);
        }
        7 => {
            let n = rng.below(64);
            b.extend((0..n).map(|_| rng.next_u64() as u8));
        }
        8 if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] = rng.next_u64() as u8;
        }
        9 if b.len() > 1 => {
            // Swap two bytes.
            let i = rng.below(b.len());
            let j = rng.below(b.len());
            b.swap(i, j);
        }
        10 => {
            let t = rng.pick(TOKENS).as_bytes().to_vec();
            b.splice(at..at, t);
        }
        11 => {
            let t = rng.pick(HUGE_TEXT).as_bytes().to_vec();
            b.splice(at..at, t);
        }
        12 => {
            let t = rng.pick(BAD_UTF8).to_vec();
            b.splice(at..at, t);
        }
        _ => {
            let n = rng.below(8);
            b.extend((0..n).map(|_| rng.next_u64() as u8));
        }
    }
}

/// 0..=`max` mutations, none in about one case of four (the valid input
/// itself, so the success paths and round trips are exercised too).
fn mutate_some(rng: &mut Rng, b: &mut Vec<u8>, text: bool, max: usize) {
    if rng.chance(25) {
        return;
    }
    for _ in 0..1 + rng.below(max) {
        mutate(rng, b, text);
    }
}

// ---------------------------------------------------------------------------
// Generators of valid inputs

const ATTRS: &[u16] = &[
    ATTR_CLASS_PORT_INFO,
    ATTR_NOTICE,
    ATTR_INFORM_INFO,
    ATTR_NODE_DESC,
    ATTR_NODE_INFO,
    ATTR_SWITCH_INFO,
    ATTR_GUID_INFO,
    ATTR_PORT_INFO,
    ATTR_P_KEY_TABLE,
    ATTR_SL_TO_VL_TABLE,
    ATTR_VL_ARB_TABLE,
    ATTR_LINEAR_FWD_TABLE,
    ATTR_RANDOM_FWD_TABLE,
    ATTR_MCAST_FWD_TABLE,
    ATTR_SM_INFO,
    ATTR_VENDOR_DIAG,
    ATTR_LED_INFO,
    ATTR_MLNX_EXT_PORT_INFO,
];

const METHODS: &[u8] = &[
    METHOD_GET,
    METHOD_SET,
    METHOD_SEND,
    METHOD_TRAP,
    METHOD_REPORT,
    METHOD_TRAP_REPRESS,
    METHOD_GET_TABLE,
    METHOD_GET_RESP,
    METHOD_REPORT_RESP,
];

/// An attribute modifier: small (ports, blocks), edge, or random.
fn gen_modifier(rng: &mut Rng) -> u32 {
    match rng.below(4) {
        0 => rng.below(40) as u32,
        1 => *rng.pick(&[0xFF, 0x100, 0xFFFF, 0x8000_0000, 0x8000_00FF, u32::MAX]),
        2 => (rng.below(1536) as u32) | ((rng.below(2) as u32) << 31),
        _ => rng.next_u64() as u32,
    }
}

/// A MAD: an SMP (DR or LID-routed) of a known attribute, a PerfMgt or SA
/// GMP, or random bytes; data random or a valid PortInfo/NodeInfo.
pub fn gen_mad(rng: &mut Rng) -> Mad {
    let method = *rng.pick(METHODS);
    let attr = if rng.chance(85) {
        *rng.pick(ATTRS)
    } else {
        rng.next_u64() as u16
    };
    let modifier = gen_modifier(rng);
    let tid = rng.next_u64();
    let mut m = match rng.below(5) {
        0 | 1 => {
            let hops = if rng.chance(70) {
                rng.below(4)
            } else {
                rng.below(64)
            };
            let path: Vec<u8> = (0..hops).map(|_| rng.below(10) as u8).collect();
            let mut m = mad::dr_request(method, attr, modifier, tid, &path);
            if rng.chance(20) {
                m[mad::off::HOP_PTR] = rng.next_u64() as u8;
            }
            if rng.chance(10) {
                m[mad::off::HOP_CNT] = rng.next_u64() as u8;
            }
            m
        }
        2 => mad::request(CLASS_SUBN_LID, method, attr, modifier, tid),
        3 => mad::request(
            *rng.pick(&[CLASS_PERF, CLASS_SA, CLASS_DEV_MGT, 0x30, CLASS_CM]),
            method,
            attr,
            modifier,
            tid,
        ),
        _ => {
            let mut m = [0u8; 256];
            m.iter_mut().for_each(|x| *x = rng.next_u64() as u8);
            m
        }
    };
    match rng.below(4) {
        0 => {
            let pi = PortInfo {
                lid: rng.next_u64() as u16,
                master_sm_lid: rng.next_u64() as u16,
                port_state: rng.below(16) as u8,
                port_phys_state: rng.below(16) as u8,
                lmc: rng.below(8) as u8,
                m_key_protect_bits: rng.below(4) as u8,
                neighbor_mtu: rng.below(16) as u8,
                operational_vls: rng.below(16) as u8,
                link_width_enabled: rng.next_u64() as u8,
                link_speed_enabled: rng.below(16) as u8,
                local_port_num: rng.next_u64() as u8,
                ..PortInfo::default()
            };
            mad::data_mut(&mut m).copy_from_slice(&pi.encode());
        }
        1 => mad::data_mut(&mut m)
            .iter_mut()
            .for_each(|x| *x = rng.next_u64() as u8),
        _ => {}
    }
    m
}

/// A packet with every field random within its width; the structural
/// fields (LVer, LNH, TVer, opcode, PktLen) are right most of the time.
pub fn gen_packet(rng: &mut Rng) -> Packet {
    let r8 = |rng: &mut Rng| rng.next_u64() as u8;
    let lrh = Lrh {
        vl: r8(rng) & 0xF,
        lver: if rng.chance(90) { 0 } else { r8(rng) & 0xF },
        sl: r8(rng) & 0xF,
        resv2: r8(rng) & 0x3,
        lnh: if rng.chance(90) {
            LNH_IBA_LOCAL
        } else {
            r8(rng) & 0x3
        },
        dlid: rng.next_u64() as u16,
        resv5: r8(rng) & 0x1F,
        pkt_len: if rng.chance(90) {
            SMP_PKT_LEN
        } else {
            (rng.next_u64() as u16) & 0x7FF
        },
        slid: rng.next_u64() as u16,
    };
    let bth = Bth {
        opcode: if rng.chance(90) {
            OPCODE_UD_SEND_ONLY
        } else {
            r8(rng)
        },
        se: rng.chance(50),
        migreq: rng.chance(50),
        pad_cnt: r8(rng) & 0x3,
        tver: if rng.chance(90) { 0 } else { r8(rng) & 0xF },
        p_key: rng.next_u64() as u16,
        resv8a: r8(rng),
        dest_qp: (rng.next_u64() as u32) & 0xFF_FFFF,
        ack_req: rng.chance(50),
        resv7: r8(rng) & 0x7F,
        psn: (rng.next_u64() as u32) & 0xFF_FFFF,
    };
    let deth = Deth {
        q_key: rng.next_u64() as u32,
        resv8: r8(rng),
        src_qp: (rng.next_u64() as u32) & 0xFF_FFFF,
    };
    Packet::new(lrh, bth, deth, gen_mad(rng))
}

fn structurally_valid(p: &Packet) -> bool {
    p.lrh.lver == 0
        && p.lrh.lnh == LNH_IBA_LOCAL
        && p.lrh.pkt_len == SMP_PKT_LEN
        && p.bth.tver == 0
        && p.bth.opcode == OPCODE_UD_SEND_ONLY
}

// ---------------------------------------------------------------------------
// Properties

/// A property that failed (panics are caught by the runner).
pub type Check = std::result::Result<(), String>;

macro_rules! ensure_prop {
    ($c:expr, $($t:tt)*) => {
        if !$c {
            return Err(format!($($t)*));
        }
    };
}

/// Build → bytes → parse gives the same fields and good CRCs, when the
/// structure is one `Packet::parse` accepts; otherwise it is refused.
pub fn check_built_packet(p: &Packet) -> Check {
    let b = p.to_bytes();
    ensure_prop!(p.icrc_ok() && p.vcrc_ok(), "Packet::new left a bad CRC");
    ensure_prop!(
        crc::check_wire(&b) == Some((true, true)),
        "check_wire disagrees with Packet::new's CRCs"
    );
    match Packet::parse(&b) {
        Ok(q) => {
            ensure_prop!(structurally_valid(p), "accepted a bad structure: {p:?}");
            ensure_prop!(&q == p, "decoded fields differ: built {p:?}, decoded {q:?}");
        }
        Err(e) => {
            ensure_prop!(!structurally_valid(p), "refused a valid packet: {e}");
            ensure_prop!(!e.to_string().is_empty(), "empty error");
        }
    }
    check_packet(&b)
}

/// Any bytes as a packet: no panic; what parses re-encodes to the same
/// bytes (every wire bit is a field), as do the SMP and attribute views of
/// its MAD; what does not parse gives an error and an `ERR` trace line.
pub fn check_packet(b: &[u8]) -> Check {
    let line = decode_line(123, "RX", b);
    ensure_prop!(
        line.starts_with("c=000123 RX "),
        "trace line without cycle/dir: {line}"
    );
    ensure_prop!(line.contains("icrc="), "trace line without CRCs: {line}");
    match Packet::parse(b) {
        Ok(p) => {
            ensure_prop!(
                p.to_bytes() == b,
                "parse → to_bytes changed the bytes ({} bytes)",
                b.len()
            );
            ensure_prop!(!line.contains("| ERR "), "parsed but traced as ERR: {line}");
            check_mad(&p.mad)?;
        }
        Err(e) => {
            let msg = e.to_string();
            ensure_prop!(!msg.is_empty(), "empty error");
            ensure_prop!(
                line.contains(&format!("| ERR {msg} ({} bytes)", b.len())),
                "refused but the trace line does not say why: {line}"
            );
        }
    }
    // The header decoders at every offset: an error exactly when short.
    for o in [0, 1, LRH_BYTES, LRH_BYTES + BTH_BYTES, MAD_OFFSET] {
        let s = b.get(o..).unwrap_or(&[]);
        ensure_prop!(
            Lrh::decode(s).is_ok() == (s.len() >= LRH_BYTES),
            "Lrh::decode at {o}"
        );
        ensure_prop!(
            Bth::decode(s).is_ok() == (s.len() >= BTH_BYTES),
            "Bth::decode at {o}"
        );
        ensure_prop!(
            Deth::decode(s).is_ok() == (s.len() >= DETH_BYTES),
            "Deth::decode at {o}"
        );
        ensure_prop!(
            MadHeader::decode(s).is_ok() == (s.len() >= MadHeader::BYTES),
            "MadHeader::decode at {o}"
        );
        let _ = Smp::decode(s);
        let _ = NodeInfo::decode(s);
        let _ = PortInfo::decode(s);
        let _ = NodeDescription::decode(s);
    }
    if b.len() >= MAD_BYTES {
        let mut m = [0u8; MAD_BYTES];
        m.copy_from_slice(&b[..MAD_BYTES]);
        check_mad(&m)?;
    }
    Ok(())
}

/// The SMP and attribute views of a MAD re-encode to its bytes.
pub fn check_mad(m: &Mad) -> Check {
    match Smp::decode(m) {
        Ok(s) => {
            ensure_prop!(s.encode() == *m, "Smp decode → encode changed the MAD");
            match &s {
                Smp::Lid(l) => ensure_prop!(
                    LidSmp::decode(m).as_ref() == Ok(l),
                    "LidSmp::decode disagrees with Smp::decode"
                ),
                Smp::Dr(d) => ensure_prop!(
                    DrSmp::decode(m).as_ref() == Ok(d),
                    "DrSmp::decode disagrees with Smp::decode"
                ),
            }
        }
        Err(e) => ensure_prop!(
            !matches!(m[1], CLASS_SUBN_LID | CLASS_SUBN_DR),
            "an SMP class refused: {e}"
        ),
    }
    let d = mad::data(m);
    let pi = PortInfo::decode(d).map_err(|e| e.to_string())?;
    ensure_prop!(pi.encode()[..] == d[..], "PortInfo decode → encode");
    let ni = NodeInfo::decode(d).map_err(|e| e.to_string())?;
    ensure_prop!(ni.encode()[..40] == d[..40], "NodeInfo decode → encode");
    let nd = NodeDescription::decode(d).map_err(|e| e.to_string())?;
    ensure_prop!(nd.encode()[..] == d[..], "NodeDescription decode → encode");
    let _ = nd.text();
    Ok(())
}

/// A capture: random packets (and random byte strings) at random cycles.
pub fn gen_pcap(rng: &mut Rng) -> Vec<u8> {
    let n = rng.below(5);
    let records: Vec<PcapRecord> = (0..n)
        .map(|_| PcapRecord {
            cycle: if rng.chance(80) {
                rng.next_u64() % 1_000_000_000
            } else {
                rng.next_u64() % (u64::from(u32::MAX) * 1_000_000)
            },
            data: if rng.chance(80) {
                gen_packet(rng).to_bytes()
            } else {
                (0..rng.below(400)).map(|_| rng.next_u64() as u8).collect()
            },
            ..Default::default()
        })
        .collect();
    let lt = if rng.chance(50) {
        LinkType::Infiniband
    } else {
        LinkType::User0
    };
    let mut b = encode_pcap(lt, &records).unwrap_or_default();
    if rng.chance(20) && b.len() >= 4 {
        // The other magics: swapped byte order, nanosecond resolution.
        let m: u32 = *rng.pick(&[0xA1B2_C3D4, 0xA1B2_3C4D, 0xD4C3_B2A1, 0x4D3C_B2A1]);
        b[..4].copy_from_slice(&m.to_be_bytes());
    }
    b
}

/// Any bytes as a pcap file: no panic; errors have a message; a capture
/// that parses re-encodes and parses back to the same records; every
/// record traces.
pub fn check_pcap(b: &[u8]) -> Check {
    match parse_pcap(b) {
        Ok(cap) => {
            for r in &cap.records {
                let _ = decode_line(r.cycle, "--", &r.data);
            }
            if let Ok(again) = encode_pcap(cap.link_type, &cap.records) {
                let back = parse_pcap(&again).map_err(|e| format!("re-encoded capture: {e}"))?;
                ensure_prop!(
                    back == cap,
                    "pcap parse → encode → parse changed the capture"
                );
            }
        }
        Err(e) => ensure_prop!(!e.to_string().is_empty(), "empty pcap error"),
    }
    Ok(())
}

/// A topology text: an example, a generated fat tree or a token soup.
pub fn gen_topology(rng: &mut Rng) -> Vec<u8> {
    match rng.below(8) {
        0 => {
            let k = *rng.pick(&[2u8, 4]);
            crate::proto::fattree::two_level(k)
                .unwrap_or_default()
                .into_bytes()
        }
        1 => {
            let n = rng.below(60);
            (0..n)
                .flat_map(|_| rng.pick(TOKENS).as_bytes().to_vec())
                .collect()
        }
        _ => rng.pick(EXAMPLES).1.as_bytes().to_vec(),
    }
}

/// A directory holding the example topologies, so `include "net.1"` in a
/// fuzzed file reads a real file. One directory for every run (no litter
/// in /tmp); each file is written under a temporary name and renamed, so a
/// process reading it while another writes sees the whole file.
fn include_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join("vl15-fuzz-includes");
        let _ = std::fs::create_dir_all(&d);
        for (name, text) in EXAMPLES {
            let tmp = d.join(format!(".{name}.{}", std::process::id()));
            if std::fs::write(&tmp, text).is_ok() {
                let _ = std::fs::rename(&tmp, d.join(name));
            }
        }
        d
    })
}

/// Any bytes as a topology file (read as `Topology::load` reads it, invalid
/// UTF-8 replaced): no panic; an error names the file and a line that
/// exists; a parsed fabric is consistent and parsing it again gives the
/// same fabric.
pub fn check_topology(b: &[u8]) -> Check {
    let text = String::from_utf8_lossy(b);
    let origin = include_dir().join("fuzz.net");
    match Topology::parse(&text, &origin) {
        Ok(t) => {
            check_topology_consistent(&t)?;
            let again = Topology::parse(&text, &origin).map_err(|e| e.to_string())?;
            ensure_prop!(again == t, "parsing the same text twice differs");
        }
        Err(e) => {
            let msg = e.to_string();
            match &e {
                TopologyError::Syntax { file, line, .. } => {
                    ensure_prop!(
                        msg.starts_with(&format!("{}:{line}: ", file.display())),
                        "error does not start with file:line: {msg}"
                    );
                    ensure_prop!(*line >= 1, "error at line 0: {msg}");
                    if *file == origin {
                        let lines = text.split('\n').count();
                        ensure_prop!(*line <= lines, "error at line {line} of {lines}: {msg}");
                    }
                }
                TopologyError::Io { .. } => {
                    ensure_prop!(msg.contains(": "), "I/O error without a file: {msg}")
                }
            }
        }
    }
    Ok(())
}

/// Links symmetric and in range, every node found by its id.
pub fn check_topology_consistent(t: &Topology) -> Check {
    for (i, n) in t.nodes.iter().enumerate() {
        ensure_prop!(
            t.node_index(&n.id) == Some(i),
            "node {:?} not indexed at {i}",
            n.id
        );
        ensure_prop!(
            n.ports.len() == usize::from(n.nports),
            "{:?}: {} port records for {} ports",
            n.id,
            n.ports.len(),
            n.nports
        );
        for (k, p) in n.ports.iter().enumerate() {
            ensure_prop!(
                usize::from(p.num) == k + 1,
                "{:?}: port {k} numbered {}",
                n.id,
                p.num
            );
            if let Some((j, q)) = p.remote {
                let back = t.remote(j, q);
                ensure_prop!(
                    back == Some((i, p.num)),
                    "{:?}[{}] → ({j},{q}) but that port points to {back:?}",
                    n.id,
                    p.num
                );
                let l = p
                    .link
                    .and_then(|l| t.links.get(l))
                    .ok_or_else(|| format!("{:?}[{}] linked without a link", n.id, p.num))?;
                let ends = [l.a, l.b];
                ensure_prop!(
                    ends.contains(&(i, p.num)) && ends.contains(&(j, q)),
                    "{:?}[{}]: its link joins {ends:?}",
                    n.id,
                    p.num
                );
            }
        }
    }
    for (x, l) in t.links.iter().enumerate() {
        for (n, p) in [l.a, l.b] {
            let port = t
                .nodes
                .get(n)
                .and_then(|node| node.port(p))
                .ok_or_else(|| format!("link {x} ends at a missing port ({n},{p})"))?;
            ensure_prop!(
                port.link == Some(x),
                "link {x}: port ({n},{p}) names {:?}",
                port.link
            );
        }
    }
    Ok(())
}

/// A `sim_ctl` or `sim_request` as a client sends them.
pub fn gen_ibsim(rng: &mut Rng) -> Vec<u8> {
    if rng.chance(50) {
        let mut data = [0u8; 64];
        if rng.chance(50) {
            data.iter_mut().for_each(|x| *x = rng.next_u64() as u8);
        }
        SimCtl {
            magic: if rng.chance(90) {
                SIM_MAGIC
            } else {
                rng.next_u64() as u32
            },
            clientid: if rng.chance(70) {
                rng.below(12) as u32
            } else {
                rng.next_u64() as u32
            },
            kind: if rng.chance(80) {
                rng.below(12) as u32
            } else {
                rng.next_u64() as u32
            },
            len: rng.below(100) as u32,
            data,
        }
        .encode()
        .to_vec()
    } else {
        SimRequest {
            dlid: {
                let v = rng.next_u64() as u16;
                *rng.pick(&[0, 1, 2, 0xBFFF, 0xC000, PERMISSIVE_LID, v])
            },
            slid: rng.next_u64() as u16,
            dqp: *rng.pick(&[QP0, QP1, 2, u32::MAX]),
            sqp: rng.below(3) as u32,
            status: rng.below(200) as u32,
            length: {
                let v = rng.next_u64();
                *rng.pick(&[0, 1, 36, 100, 256, 257, u64::MAX, v])
            },
            mad: gen_mad(rng),
        }
        .encode()
        .to_vec()
    }
}

/// Any bytes as an ibsim message: decodes only at its exact size (and, for
/// `sim_ctl`, with the magic), and then re-encodes to the same bytes (but
/// for `sim_request`'s padding); the
/// MAD length the server reports is within 36..=256 and the RMPP header it
/// writes for a length gives that length back (clamped to 36..=256).
pub fn check_ibsim(b: &[u8]) -> Check {
    match SimCtl::decode(b) {
        Ok(c) => ensure_prop!(c.encode()[..] == b[..], "sim_ctl decode → encode"),
        Err(e) => {
            let magic_ok = b.len() >= 4 && b[..4] == SIM_MAGIC.to_ne_bytes();
            ensure_prop!(
                b.len() != SIM_CTL_BYTES || !magic_ok,
                "refused a well-formed sim_ctl: {e:#}"
            );
            ensure_prop!(!format!("{e:#}").is_empty(), "empty error");
        }
    }
    match SimRequest::decode(b) {
        Ok(r) => {
            // Bytes 2-3 and 6-7 (the high halves of the u32s holding the
            // htons() LIDs) and 20-23 (padding before the u64 length) carry
            // nothing: re-encoding writes them 0, the rest is kept.
            let mut want = b.to_vec();
            for i in [2, 3, 6, 7, 20, 21, 22, 23] {
                want[i] = 0;
            }
            ensure_prop!(r.encode()[..] == want[..], "sim_request decode → encode");
            let mut m = r.mad;
            let n = received_mad_len(&m);
            ensure_prop!((36..=256).contains(&n), "received_mad_len {n}");
            rmpp_send_header(&mut m, r.length);
            let after = received_mad_len(&m);
            if after != 256 || n != 256 {
                ensure_prop!(
                    after == r.length.clamp(36, 256),
                    "RMPP length {} read back as {after}",
                    r.length
                );
            }
        }
        Err(e) => {
            ensure_prop!(
                b.len() != SIM_REQUEST_BYTES,
                "refused a sim_request of the right size: {e:#}"
            );
        }
    }
    Ok(())
}

/// A console command line on `net.2sw2path4hca`'s node ids: every word
/// of ibsim's console, with node arguments and the numbers, attributes,
/// classes, seeds and counter fields its commands take.
pub fn gen_console(rng: &mut Rng) -> Vec<u8> {
    const IDS: &[&str] = &[
        "Switch1", "Switch2", "Hca1", "Hca2", "Hca3", "Hca4", "nobody", "",
    ];
    const WORDS: &[&str] = &[
        "Link",
        "Unlink",
        "ReLink",
        "unlink",
        "RELINK",
        "Clear",
        "Dump",
        "Route",
        "Guid",
        "Error",
        "Baselid",
        "PerformanceSet",
        "Verbose",
        "Attached",
        "X",
        "Help",
        "?",
        "Start",
        "Wait",
        "#",
        "Quit",
        "",
        "Frob",
    ];
    const TAILS: &[&str] = &[
        "0",
        "1",
        "50",
        "100",
        "101",
        "-1",
        "0x15",
        "017",
        "21",
        "0x11",
        "vcrc",
        "icrc",
        "truncate",
        "seed=7",
        "seed=x",
        "PortCounters.PortRcvErrors=5",
        "PortCounters.VL15Dropped=0x10",
        "PortCountersExtended.PortXmitData=99",
        "PortCounters.SymbolErrorCounter=1",
        "PortCounters.PortRcvPkts=4294967296",
        "PortVLOpData.PortVLOpData3=1",
        "Nope.Field=1",
        "PortCounters.PortXmitPkts=",
        "0x200000",
        "3 7",
        "49151",
        "65535",
    ];
    let mut s = rng.pick(WORDS).to_string();
    for _ in 0..rng.below(3) {
        s.push_str(&format!(" \"{}\"", rng.pick(IDS)));
        if rng.chance(80) {
            s.push_str(&format!("[{}]", rng.below(10)));
        }
    }
    for _ in 0..rng.below(4) {
        s.push(' ');
        let tail: &&str = rng.pick(TAILS);
        s.push_str(tail);
    }
    s.into_bytes()
}

/// A fabric for the console and SMA targets (`net.2sw2path4hca`).
pub fn fuzz_net() -> Result<Net> {
    let (_, text) = EXAMPLES[3];
    let topo = Topology::parse(text, Path::new("net.2sw2path4hca"))?;
    Net::new(topo, NetOptions::default())
}

/// A console line on `net` ([`crate::agents::console::execute`], which
/// runs the cable words through `Net::console`): no panic; an unknown
/// word is answered with ibsim's line; the fabric still runs afterwards.
pub fn check_console(net: &mut Net, b: &[u8]) -> Check {
    use crate::agents::console::{execute, split_word, ConsoleState, Done, HELP};
    let line = String::from_utf8_lossy(b);
    let mut st = ConsoleState::new(1);
    let done = execute(net, &mut st, &line);
    let (word, rest) = split_word(&line);
    let known = [
        "link",
        "unlink",
        "relink",
        "clear",
        "dump",
        "route",
        "guid",
        "error",
        "baselid",
        "performanceset",
        "verbose",
        "attached",
        "x",
        "help",
        "?",
        "start",
        "wait",
        "quit",
    ];
    match &done {
        Done::Text(t)
            if !rest.trim().is_empty()
                && !rest.starts_with('#')
                && !known.contains(&word.to_ascii_lowercase().as_str()) =>
        {
            ensure_prop!(
                t.starts_with("command '") && t.ends_with("' unknown - skipped\n"),
                "unknown word {word:?} answered {t:?}"
            );
        }
        Done::Text(t) if word.eq_ignore_ascii_case("help") => {
            ensure_prop!(t == HELP, "Help answered {t:?}")
        }
        _ => {}
    }
    if let Err(e) = net.run(64) {
        ensure_prop!(false, "the fabric fails after {line:?}: {e:#}");
    }
    Ok(())
}

/// A MAD to the SMA of device `dev` as arrived on `port`: no panic; an
/// answer to a Get or Set is a GetResp with the request's TID and
/// attribute (ibspec §4); an error says why.
pub fn check_sma(net: &mut Net, dev: usize, port: u8, m: &Mad) -> Check {
    match net.local_smp(dev, port, m) {
        Ok(Some(r)) => {
            if matches!(mad::method(m), METHOD_GET | METHOD_SET) {
                ensure_prop!(
                    mad::method(&r) == METHOD_GET_RESP,
                    "answer to method {:#04x} has method {:#04x}",
                    mad::method(m),
                    mad::method(&r)
                );
                ensure_prop!(mad::tid(&r) == mad::tid(m), "answer with another TID");
                ensure_prop!(
                    mad::attr_id(&r) == mad::attr_id(m),
                    "answer with another attribute"
                );
            }
        }
        Ok(None) => {}
        Err(e) => ensure_prop!(!format!("{e:#}").is_empty(), "empty SMA error"),
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Cases and the runner

/// Per-target state (the fabric of the console and SMA targets).
pub struct State {
    target: Target,
    net: Option<Net>,
}

impl State {
    pub fn new(target: Target) -> Self {
        State { target, net: None }
    }

    fn net(&mut self) -> Result<&mut Net, String> {
        if self.net.is_none() {
            self.net = Some(fuzz_net().map_err(|e| format!("building the fabric: {e:#}"))?);
        }
        Ok(self.net.as_mut().expect("just built"))
    }
}

/// The seed of case `i` of a run seeded `seed` (SplitMix64 of both).
pub fn case_seed(seed: u64, i: u64) -> u64 {
    let mut r = Rng::new(seed ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03));
    r.next_u64()
}

/// Run one case from its seed; `input` receives the mutated input before
/// it is checked (so a panic can be reported with it).
pub fn run_case(st: &mut State, seed: u64, input: &mut Vec<u8>) -> Check {
    let mut rng = Rng::new(seed);
    input.clear();
    match st.target {
        Target::Decode => {
            let p = gen_packet(&mut rng);
            check_built_packet(&p)?;
            let mut b = p.to_bytes();
            mutate_some(&mut rng, &mut b, false, 6);
            input.extend_from_slice(&b);
            check_packet(&b)
        }
        Target::Pcap => {
            let mut b = gen_pcap(&mut rng);
            mutate_some(&mut rng, &mut b, false, 6);
            input.extend_from_slice(&b);
            check_pcap(&b)
        }
        Target::Topology => {
            let mut b = gen_topology(&mut rng);
            mutate_some(&mut rng, &mut b, true, 8);
            input.extend_from_slice(&b);
            check_topology(&b)
        }
        Target::Ibsim => {
            let mut b = gen_ibsim(&mut rng);
            mutate_some(&mut rng, &mut b, false, 4);
            input.extend_from_slice(&b);
            check_ibsim(&b)
        }
        Target::Console => {
            let mut b = gen_console(&mut rng);
            mutate_some(&mut rng, &mut b, true, 4);
            input.extend_from_slice(&b);
            check_console(st.net()?, &b)
        }
        Target::Sma => {
            let mut m = gen_mad(&mut rng);
            // In-place mutations only: a MAD is always 256 bytes here.
            let mut v = m.to_vec();
            mutate_some(&mut rng, &mut v, false, 4);
            v.resize(MAD_BYTES, 0);
            m.copy_from_slice(&v[..MAD_BYTES]);
            let net = st.net()?;
            let dev = rng.below(net.devs.len());
            let nports = usize::from(net.devs[dev].nports);
            let port = rng.below(nports + 3) as u8;
            input.push(dev as u8);
            input.push(port);
            input.extend_from_slice(&m);
            check_sma(net, dev, port, &m)
        }
    }
}

/// A case that failed.
#[derive(Debug, Clone)]
pub struct Failure {
    pub case_seed: u64,
    /// What went wrong: a property, a panic message, or a hang.
    pub what: String,
    /// The (mutated) input of the case.
    pub input: Vec<u8>,
}

/// What one target's run did.
#[derive(Debug, Clone)]
pub struct Report {
    pub target: Target,
    pub seed: u64,
    pub cases: u64,
    pub elapsed: Duration,
    pub failures: Vec<Failure>,
}

impl Report {
    pub fn summary(&self) -> String {
        format!(
            "fuzz {:<8} seed {:#018x}: {} cases in {:.1} s ({:.0}/s), {} failures",
            self.target.name(),
            self.seed,
            self.cases,
            self.elapsed.as_secs_f64(),
            self.cases as f64 / self.elapsed.as_secs_f64().max(1e-9),
            self.failures.len()
        )
    }
}

/// Limits of a run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Stop after this long.
    pub time: Duration,
    /// Stop after this many cases.
    pub max_cases: u64,
    /// One case taking longer than this is a hang.
    pub hang: Duration,
    /// Stop at the first failure.
    pub stop_on_failure: bool,
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic".to_string()
    }
}

/// Run `target` for the limits, case seeds derived from `seed`. The cases
/// run in a worker thread; a watchdog ends the run when a case overruns
/// `limits.hang` (the run fails with that case; the stuck thread is left
/// behind, so a hang is the end of the process's fuzzing).
pub fn run(target: Target, seed: u64, limits: Limits) -> Result<Report> {
    let stop = Arc::new(AtomicBool::new(false));
    let cases = Arc::new(AtomicU64::new(0));
    // (case seed, start of the case in ms since `t0`) of the running case.
    let current = Arc::new(Mutex::new((0u64, 0u64)));
    let t0 = Instant::now();
    let worker = {
        let (stop, cases, current) = (stop.clone(), cases.clone(), current.clone());
        std::thread::Builder::new()
            .name(format!("fuzz-{target}"))
            .spawn(move || -> Vec<Failure> {
                let mut st = State::new(target);
                let mut failures = Vec::new();
                let mut input = Vec::new();
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) && i < limits.max_cases {
                    let cs = case_seed(seed, i);
                    if let Ok(mut c) = current.lock() {
                        *c = (cs, t0.elapsed().as_millis() as u64);
                    }
                    let r = catch_unwind(AssertUnwindSafe(|| run_case(&mut st, cs, &mut input)));
                    let what = match r {
                        Ok(Ok(())) => None,
                        Ok(Err(w)) => Some(w),
                        Err(p) => {
                            // The fabric may be half-updated: start afresh.
                            st.net = None;
                            Some(format!("panic: {}", panic_text(&*p)))
                        }
                    };
                    i += 1;
                    cases.store(i, Ordering::Relaxed);
                    if let Some(what) = what {
                        failures.push(Failure {
                            case_seed: cs,
                            what,
                            input: input.clone(),
                        });
                        if limits.stop_on_failure {
                            break;
                        }
                    }
                }
                failures
            })?
    };
    loop {
        std::thread::sleep(Duration::from_millis(20));
        if worker.is_finished() {
            break;
        }
        let now = t0.elapsed();
        if now >= limits.time {
            stop.store(true, Ordering::Relaxed);
        }
        let (cs, started) = current.lock().map(|c| *c).unwrap_or((0, 0));
        let running = now.saturating_sub(Duration::from_millis(started));
        if running > limits.hang {
            stop.store(true, Ordering::Relaxed);
            return Ok(Report {
                target,
                seed,
                cases: cases.load(Ordering::Relaxed),
                elapsed: now,
                failures: vec![Failure {
                    case_seed: cs,
                    what: format!("hang: one case ran for more than {:?}", limits.hang),
                    // Replay the case seed to get it (the input is still in use).
                    input: Vec::new(),
                }],
            });
        }
    }
    let failures = worker
        .join()
        .map_err(|_| anyhow!("the fuzz worker of {target} panicked outside a case"))?;
    Ok(Report {
        target,
        seed,
        cases: cases.load(Ordering::Relaxed),
        elapsed: t0.elapsed(),
        failures,
    })
}

/// Replay one case by its seed (what a failure report names).
pub fn replay(target: Target, case_seed: u64) -> Result<Vec<u8>> {
    let mut st = State::new(target);
    let mut input = Vec::new();
    match catch_unwind(AssertUnwindSafe(|| {
        run_case(&mut st, case_seed, &mut input)
    })) {
        Ok(Ok(())) => Ok(input),
        Ok(Err(w)) => bail!("case {case_seed:#x} of {target}: {w}"),
        Err(p) => bail!(
            "case {case_seed:#x} of {target}: panic: {}",
            panic_text(&*p)
        ),
    }
}

/// Hex of the first `max` bytes, for reports.
pub fn hex(b: &[u8], max: usize) -> String {
    let mut s: String = b.iter().take(max).map(|x| format!("{x:02x}")).collect();
    if b.len() > max {
        s.push_str(&format!("… ({} bytes)", b.len()));
    }
    s
}
