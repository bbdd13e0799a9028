//! pcap files of raw InfiniBand packets (LRH..VCRC), read and written with
//! the `pcap-file` crate (it handles both header byte orders and nanosecond
//! files, writes any link type, and reports truncation as an error rather
//! than panicking); this module adds the testbench conventions and
//! readable errors.
//!
//! Timestamps carry the simulation cycle: a packet at cycle `c` is written
//! with seconds = c / 1_000_000 and microseconds = c % 1_000_000, i.e. one
//! cycle shows as one microsecond in Wireshark. Reading gives back
//! cycle = seconds · 10⁶ + microseconds (for nanosecond-resolution files,
//! + nanoseconds / 1000).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use std::collections::HashMap;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapParser, PcapWriter as PfWriter};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::{Block, PcapNgParser, PcapNgWriter};
use pcap_file::{DataLink, Endianness, PcapError as PfError, TsResolution};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Link types for IB packets starting with the LRH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LinkType {
    /// LINKTYPE_INFINIBAND (247), the registered type; Wireshark cannot
    /// read it (ibspec §11).
    #[default]
    Infiniband,
    /// LINKTYPE_USER0 (147): what tshark reads with a user-DLT mapping to
    /// the `infiniband` dissector (see `crate::proto::tshark`).
    User0,
}

impl LinkType {
    pub fn dlt(self) -> u32 {
        match self {
            LinkType::Infiniband => 247,
            LinkType::User0 => 147,
        }
    }

    pub fn from_dlt(dlt: u32) -> Option<Self> {
        match dlt {
            247 => Some(LinkType::Infiniband),
            147 => Some(LinkType::User0),
            _ => None,
        }
    }

    pub(crate) fn data_link(self) -> DataLink {
        match self {
            LinkType::Infiniband => DataLink::INFINIBAND,
            LinkType::User0 => DataLink::USER0,
        }
    }
}

/// One captured packet.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PcapRecord {
    /// Simulation cycle (the timestamp, see the module doc).
    pub cycle: u64,
    /// The packet, LRH..VCRC.
    pub data: Vec<u8>,
    /// pcapng: the interface (device port) it was captured on.
    #[serde(default)]
    pub port: Option<String>,
    /// pcapng: its direction there.
    #[serde(default)]
    pub dir: Option<Direction>,
}

/// tshark preference: DLT 147 (User 0) → `infiniband` dissector.
pub const USER0_INFINIBAND_UAT: &str =
    r#"uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0","""#;

/// A whole capture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcapCapture {
    pub link_type: LinkType,
    pub records: Vec<PcapRecord>,
}

#[derive(Debug, Error)]
pub enum PcapError {
    /// The file cannot be read or written (the message names it once: the
    /// I/O error is not a separate `source`, so `{:#}` does not repeat it).
    #[error("{}: {err}", .path.display())]
    Io { path: PathBuf, err: std::io::Error },
    /// A file's content is not a usable pcap: `{path}: {err}`.
    #[error("{}: {err}", .path.display())]
    File { path: PathBuf, err: Box<PcapError> },
    #[error("not a pcap file: magic number {0:#010x} (pcap magics are a1b2c3d4 / a1b23c4d in either byte order)")]
    NotPcap(u32),
    /// The file ends inside a header, a record or a block: `records`
    /// whole records come before the incomplete part.
    #[error("truncated after {}: {what} at byte offset {offset} is incomplete", after(*.records))]
    Truncated {
        what: String,
        offset: usize,
        records: usize,
    },
    #[error("unsupported pcap link type {0} (expected 247 INFINIBAND or 147 USER0)")]
    UnsupportedLinkType(u32),
    #[error("global header: {0}")]
    BadHeader(String),
    /// Record `index` (0-based; messages count from 1, as Wireshark's frames).
    #[error("record {} at byte offset {offset}: {msg}", .index + 1)]
    BadRecord {
        index: usize,
        offset: usize,
        msg: String,
    },
    #[error("cycle {0} does not fit a pcap timestamp (seconds = cycle / 10^6 must fit 32 bits)")]
    CycleTooLarge(u64),
    #[error("pcap write: {0}")]
    Write(String),
}

fn after(records: usize) -> String {
    match records {
        0 => "the global header".into(),
        1 => "record 1".into(),
        n => format!("record {n} (records 1 to {n} are whole)"),
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PcapError + '_ {
    move |err| PcapError::Io {
        path: path.to_path_buf(),
        err,
    }
}

/// Parse a pcap file held in memory.
pub fn parse_pcap(bytes: &[u8]) -> Result<PcapCapture, PcapError> {
    if bytes.len() >= 4 {
        let magic = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        match magic {
            0xA1B2_C3D4 | 0xA1B2_3C4D | 0xD4C3_B2A1 | 0x4D3C_B2A1 => {}
            0x0A0D_0D0A => return parse_ng(bytes),
            m => return Err(PcapError::NotPcap(m)),
        }
    }
    let (mut rest, parser) = PcapParser::new(bytes).map_err(|e| match e {
        PfError::IncompleteBuffer => PcapError::Truncated {
            what: "the 24-byte global header".into(),
            offset: 0,
            records: 0,
        },
        e => PcapError::BadHeader(e.to_string()),
    })?;
    let header = parser.header();
    let dlt = u32::from(header.datalink);
    let link_type = LinkType::from_dlt(dlt).ok_or(PcapError::UnsupportedLinkType(dlt))?;
    let mut records = Vec::new();
    while !rest.is_empty() {
        let offset = bytes.len() - rest.len();
        let index = records.len();
        let (next, pkt) = parser.next_packet(rest).map_err(|e| match e {
            PfError::IncompleteBuffer => PcapError::Truncated {
                what: if rest.len() < 16 {
                    format!("the header of record {}", index + 1)
                } else {
                    format!("the data of record {}", index + 1)
                },
                offset,
                records: index,
            },
            e => PcapError::BadRecord {
                index,
                offset,
                msg: e.to_string(),
            },
        })?;
        let ts = pkt.timestamp;
        records.push(PcapRecord {
            cycle: ts.as_secs() * 1_000_000 + u64::from(ts.subsec_micros()),
            data: pkt.data.into_owned(),
            ..Default::default()
        });
        rest = next;
    }
    Ok(PcapCapture { link_type, records })
}

/// Read a pcap file. Every error names the file once (`{path}: …`), so
/// callers add no context of their own.
pub fn read_pcap(path: impl AsRef<Path>) -> Result<PcapCapture, PcapError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    parse_pcap(&bytes).map_err(|err| PcapError::File {
        path: path.to_path_buf(),
        err: Box::new(err),
    })
}

fn timestamp(cycle: u64) -> Result<Duration, PcapError> {
    let secs = cycle / 1_000_000;
    if secs > u64::from(u32::MAX) {
        return Err(PcapError::CycleTooLarge(cycle));
    }
    // Sub-second part in nanoseconds; microsecond files keep nanos / 1000.
    let nanos = (cycle % 1_000_000) as u32 * 1000;
    Ok(Duration::new(secs, nanos))
}

fn pf_write_err(e: PfError) -> PcapError {
    PcapError::Write(e.to_string())
}

/// Streaming writer: header on creation, one record per `write`.
pub struct PcapWriter<W: Write> {
    inner: PfWriter<W>,
}

impl<W: Write> PcapWriter<W> {
    /// Microsecond resolution, little-endian headers, snaplen 65535.
    pub fn new(w: W, link_type: LinkType) -> Result<Self, PcapError> {
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: 65535,
            datalink: link_type.data_link(),
            ts_resolution: TsResolution::MicroSecond,
            endianness: Endianness::Little,
        };
        let inner = PfWriter::with_header(w, header).map_err(pf_write_err)?;
        Ok(PcapWriter { inner })
    }

    pub fn write(&mut self, cycle: u64, data: &[u8]) -> Result<(), PcapError> {
        let len = u32::try_from(data.len())
            .map_err(|_| PcapError::Write(format!("packet of {} bytes", data.len())))?;
        let pkt = PcapPacket::new(timestamp(cycle)?, len, data);
        self.inner.write_packet(&pkt).map_err(pf_write_err)?;
        Ok(())
    }

    pub fn into_inner(self) -> W {
        self.inner.into_writer()
    }
}

impl PcapWriter<std::io::BufWriter<std::fs::File>> {
    /// Create (truncate) a pcap file.
    pub fn create(path: impl AsRef<Path>, link_type: LinkType) -> Result<Self, PcapError> {
        let path = path.as_ref();
        let f = std::fs::File::create(path).map_err(io_err(path))?;
        Self::new(std::io::BufWriter::new(f), link_type)
    }

    /// Flush buffered records to the file.
    pub fn finish(self) -> Result<(), PcapError> {
        let mut w = self.into_inner();
        w.flush().map_err(|e| PcapError::Write(e.to_string()))
    }
}

/// A whole pcap file as bytes.
pub fn encode_pcap(link_type: LinkType, records: &[PcapRecord]) -> Result<Vec<u8>, PcapError> {
    let mut w = PcapWriter::new(Vec::new(), link_type)?;
    for r in records {
        w.write(r.cycle, &r.data)?;
    }
    Ok(w.into_inner())
}

/// Write a whole pcap file.
pub fn write_pcap(
    path: impl AsRef<Path>,
    link_type: LinkType,
    records: &[PcapRecord],
) -> Result<(), PcapError> {
    let path = path.as_ref();
    let bytes = encode_pcap(link_type, records)?;
    std::fs::write(path, bytes).map_err(io_err(path))
}

// ---------------------------------------------------------------------------
// pcapng traces of a whole run
//
// One interface per device port that carried traffic, named `<node
// id>[<port>]`; every packet (LRH..VCRC) on the interface of each port it
// crossed, its direction there in the packet's flags (inbound or outbound,
// pcapng `epb_flags` bits 1:0) and the cycle of its first beat as the
// timestamp (if_tsresol 10^-6: one cycle shows as one microsecond, as in
// the classic files above). The writer flushes after every packet, so a
// run that is killed leaves a file that reads up to its last packet. The
// link type is USER0 by default: the Wireshark Debian 12 ships (4.0) has
// no mapping for LINKTYPE_INFINIBAND (247) and refuses such a file, but
// reads USER0 as InfiniBand with a user-DLT entry ([`tshark_command`]).

/// Which way a packet crossed the port it was captured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Direction {
    /// Into the port (received from its link).
    Inbound,
    /// Out of the port (sent onto its link).
    Outbound,
}

impl Direction {
    /// pcapng `epb_flags` bits 1:0.
    fn flags(self) -> u32 {
        match self {
            Direction::Inbound => 0b01,
            Direction::Outbound => 0b10,
        }
    }

    fn from_flags(f: u32) -> Option<Self> {
        match f & 0b11 {
            0b01 => Some(Direction::Inbound),
            0b10 => Some(Direction::Outbound),
            _ => None,
        }
    }

    /// "in" or "out", as `vl15 decode` prints it.
    pub fn word(self) -> &'static str {
        match self {
            Direction::Inbound => "in",
            Direction::Outbound => "out",
        }
    }
}

/// The name of a device port's interface: `node[port]`.
pub fn port_name(node: &str, port: u8) -> String {
    format!("{node}[{port}]")
}

/// The tshark command that reads a trace written with link type USER0.
pub fn tshark_command(path: &Path) -> String {
    format!(
        "tshark -o '{USER0_INFINIBAND_UAT}' -r {}",
        shell_quote(&path.display().to_string())
    )
}

fn shell_quote(s: &str) -> String {
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A pcapng trace being written.
pub struct TraceWriter<W: Write> {
    w: PcapNgWriter<W>,
    link_type: LinkType,
    ifaces: HashMap<String, u32>,
    packets: u64,
    /// Where it goes, for messages.
    path: PathBuf,
}

fn write_err(path: &Path) -> impl Fn(PfError) -> PcapError + '_ {
    move |e| PcapError::Write(format!("{}: {e}", path.display()))
}

impl<W: Write> TraceWriter<W> {
    /// A trace of `link_type` into `w` (`path` names it in messages): the
    /// section header now, the interfaces as they first carry a packet.
    pub fn new(w: W, link_type: LinkType, path: &Path) -> Result<Self, PcapError> {
        let w = PcapNgWriter::new(w).map_err(write_err(path))?;
        Ok(TraceWriter {
            w,
            link_type,
            ifaces: HashMap::new(),
            packets: 0,
            path: path.to_path_buf(),
        })
    }

    /// Record `data` crossing interface `iface` (see [`port_name`]) in
    /// direction `dir` at `cycle`, and flush it.
    pub fn packet(
        &mut self,
        iface: &str,
        dir: Direction,
        cycle: u64,
        data: &[u8],
    ) -> Result<(), PcapError> {
        let id = match self.ifaces.get(iface) {
            Some(&id) => id,
            None => {
                let id = self.ifaces.len() as u32;
                let idb = InterfaceDescriptionBlock {
                    linktype: self.link_type.data_link(),
                    snaplen: 0,
                    options: vec![
                        InterfaceDescriptionOption::IfName(iface.to_string().into()),
                        // 10^-6: one timestamp unit, one cycle
                        InterfaceDescriptionOption::IfTsResol(6),
                    ],
                };
                self.w
                    .write_pcapng_block(idb)
                    .map_err(write_err(&self.path))?;
                self.ifaces.insert(iface.to_string(), id);
                id
            }
        };
        let len = u32::try_from(data.len())
            .map_err(|_| PcapError::Write(format!("packet of {} bytes", data.len())))?;
        let epb = EnhancedPacketBlock {
            interface_id: id,
            // The crate writes the timestamp in nanoseconds of the Duration:
            // with if_tsresol 6 the raw value is the cycle.
            timestamp: Duration::from_nanos(cycle),
            original_len: len,
            data: data.into(),
            options: vec![EnhancedPacketOption::Flags(dir.flags())],
        };
        self.w
            .write_pcapng_block(epb)
            .map_err(write_err(&self.path))?;
        self.w
            .get_mut()
            .flush()
            .map_err(|e| PcapError::Write(format!("{}: {e}", self.path.display())))?;
        self.packets += 1;
        Ok(())
    }

    /// Packets written so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Interfaces written so far, in order.
    pub fn interfaces(&self) -> Vec<String> {
        let mut v: Vec<(&String, &u32)> = self.ifaces.iter().collect();
        v.sort_by_key(|(_, id)| **id);
        v.into_iter().map(|(n, _)| n.clone()).collect()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A trace written to a file.
pub type TraceFile = TraceWriter<std::io::BufWriter<std::fs::File>>;

impl TraceFile {
    /// Create (truncate) `path`.
    pub fn create(path: impl AsRef<Path>, link_type: LinkType) -> Result<Self, PcapError> {
        let path = path.as_ref();
        let f = std::fs::File::create(path).map_err(io_err(path))?;
        Self::new(std::io::BufWriter::new(f), link_type, path)
    }

    /// The lines a verb prints once the trace is complete: what was
    /// written and how to read it.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "pcap: {} packets on {} ports in {}",
            self.packets,
            self.ifaces.len(),
            self.path.display()
        );
        s.push_str(&read_hint(&self.path, self.link_type));
        s
    }
}

/// How to read a trace at `path` of link type `lt`: the line with the
/// tshark command for USER0 ("" for INFINIBAND, which needs no mapping).
pub fn read_hint(path: &Path, lt: LinkType) -> String {
    match lt {
        LinkType::User0 => format!("\n  read it with: {}", tshark_command(path)),
        LinkType::Infiniband => String::new(),
    }
}

/// The timestamp of an enhanced packet block in microseconds (= cycles),
/// given its interface's if_tsresol (`None`: the default, 10^-6). The crate
/// hands the raw 64-bit value back as nanoseconds of a Duration.
fn cycles(raw: u128, tsresol: Option<u8>) -> Option<u64> {
    let r = tsresol.unwrap_or(6);
    let per_sec: u128 = if r & 0x80 == 0 {
        10u128.checked_pow(u32::from(r))?
    } else {
        1u128.checked_shl(u32::from(r & 0x7F))?
    };
    u64::try_from(raw.checked_mul(1_000_000)? / per_sec).ok()
}

/// Parse a pcapng file held in memory: its enhanced and simple packet
/// blocks, with the interface name and direction of each. Every interface
/// must have the same link type, INFINIBAND or USER0.
fn parse_ng(bytes: &[u8]) -> Result<PcapCapture, PcapError> {
    let bad =
        |index: usize, offset: usize, msg: String| PcapError::BadRecord { index, offset, msg };
    let (mut rest, mut parser) = PcapNgParser::new(bytes).map_err(|e| match e {
        PfError::IncompleteBuffer => PcapError::Truncated {
            what: "the section header block".into(),
            offset: 0,
            records: 0,
        },
        e => bad(0, 0, format!("section header: {e}")),
    })?;
    let mut link_type = None;
    let mut records = Vec::new();
    let mut block = 0usize;
    while !rest.is_empty() {
        let offset = bytes.len() - rest.len();
        block += 1;
        let (next, b) = parser.next_block(rest).map_err(|e| match e {
            PfError::IncompleteBuffer => PcapError::Truncated {
                what: format!("block {block}"),
                offset,
                records: records.len(),
            },
            e => bad(records.len(), offset, format!("block {block}: {e}")),
        })?;
        match b {
            Block::InterfaceDescription(idb) => {
                let dlt = u32::from(idb.linktype);
                let lt = LinkType::from_dlt(dlt).ok_or(PcapError::UnsupportedLinkType(dlt))?;
                if link_type.is_some_and(|l| l != lt) {
                    return Err(bad(
                        records.len(),
                        offset,
                        format!("interfaces of link types {} and {dlt}", lt.dlt()),
                    ));
                }
                link_type = Some(lt);
            }
            Block::EnhancedPacket(epb) => {
                let Some(idb) = parser.packet_interface(&epb) else {
                    return Err(bad(
                        records.len(),
                        offset,
                        format!("packet of interface {}, not described", epb.interface_id),
                    ));
                };
                let mut port = None;
                let mut tsresol = None;
                for o in &idb.options {
                    match o {
                        InterfaceDescriptionOption::IfName(n) => port = Some(n.to_string()),
                        InterfaceDescriptionOption::IfTsResol(r) => tsresol = Some(*r),
                        _ => {}
                    }
                }
                let dir = epb.options.iter().find_map(|o| match o {
                    EnhancedPacketOption::Flags(f) => Direction::from_flags(*f),
                    _ => None,
                });
                let cycle = cycles(epb.timestamp.as_nanos(), tsresol).ok_or_else(|| {
                    bad(records.len(), offset, "timestamp out of range".to_string())
                })?;
                records.push(PcapRecord {
                    cycle,
                    data: epb.data.into_owned(),
                    port,
                    dir,
                });
            }
            Block::SimplePacket(spb) => records.push(PcapRecord {
                cycle: 0,
                data: spb.data.into_owned(),
                port: None,
                dir: None,
            }),
            _ => {}
        }
        rest = next;
    }
    Ok(PcapCapture {
        link_type: link_type.unwrap_or_default(),
        records,
    })
}

#[cfg(test)]
mod ng_tests {
    use super::*;

    /// A trace round-trips: interfaces, directions, cycles, bytes.
    #[test]
    fn round_trip() {
        let path = Path::new("mem.pcapng");
        let mut w = TraceWriter::new(Vec::new(), LinkType::User0, path).unwrap();
        w.packet("sw1[3]", Direction::Outbound, 12, &[1, 2, 3])
            .unwrap();
        w.packet("Hca1[1]", Direction::Inbound, 16, &[1, 2, 3])
            .unwrap();
        w.packet("sw1[3]", Direction::Inbound, 4_000_000_123, &[9; 70])
            .unwrap();
        assert_eq!(w.interfaces(), ["sw1[3]", "Hca1[1]"]);
        let bytes = w.w.into_inner();
        let cap = parse_pcap(&bytes).unwrap();
        assert_eq!(cap.link_type, LinkType::User0);
        let got: Vec<_> = cap
            .records
            .iter()
            .map(|r| (r.port.as_deref(), r.dir, r.cycle, r.data.len()))
            .collect();
        assert_eq!(
            got,
            [
                (Some("sw1[3]"), Some(Direction::Outbound), 12, 3),
                (Some("Hca1[1]"), Some(Direction::Inbound), 16, 3),
                (Some("sw1[3]"), Some(Direction::Inbound), 4_000_000_123, 70),
            ]
        );
    }

    /// pcapng block layout (pcapng spec §4.2, §4.3): IDB type 1 with the
    /// link type at byte 8; EPB type 6, interface id at byte 8, timestamp
    /// high/low words at 12/16, the flags option (code 2, length 4).
    #[test]
    fn blocks_are_laid_out_as_the_spec_says() {
        let path = Path::new("mem.pcapng");
        let mut w = TraceWriter::new(Vec::new(), LinkType::User0, path).unwrap();
        w.packet("a[1]", Direction::Outbound, 0x1_0000_0002, &[0xAB; 4])
            .unwrap();
        let b = w.w.into_inner();
        let u32le = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let shb_len = u32le(4) as usize;
        assert_eq!(u32le(0), 0x0A0D_0D0A);
        let idb = shb_len;
        assert_eq!(u32le(idb), 1);
        assert_eq!(u32le(idb + 8) & 0xFFFF, 147);
        let epb = idb + u32le(idb + 4) as usize;
        assert_eq!(u32le(epb), 6);
        assert_eq!(u32le(epb + 8), 0);
        assert_eq!((u32le(epb + 12), u32le(epb + 16)), (1, 2));
        assert_eq!(u32le(epb + 20), 4); // captured length
        let opt = epb + 28 + 4;
        assert_eq!(u32le(opt), 2 | (4 << 16));
        assert_eq!(u32le(opt + 4), 0b10);
    }

    #[test]
    fn a_truncated_trace_is_an_error_naming_the_block() {
        let path = Path::new("mem.pcapng");
        let mut w = TraceWriter::new(Vec::new(), LinkType::User0, path).unwrap();
        w.packet("a[1]", Direction::Outbound, 5, &[1; 40]).unwrap();
        let b = w.w.into_inner();
        let e = parse_pcap(&b[..b.len() - 10]).unwrap_err();
        assert!(e.to_string().contains("block 2"), "{e}");
    }

    #[test]
    fn tshark_command_quotes_paths() {
        assert_eq!(
            tshark_command(Path::new("/tmp/run.pcapng")),
            format!("tshark -o '{USER0_INFINIBAND_UAT}' -r /tmp/run.pcapng")
        );
        assert!(tshark_command(Path::new("my run.pcapng")).ends_with("'my run.pcapng'"));
    }
}
