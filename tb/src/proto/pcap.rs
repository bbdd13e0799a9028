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

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapParser, PcapWriter as PfWriter};
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

    fn data_link(self) -> DataLink {
        match self {
            LinkType::Infiniband => DataLink::INFINIBAND,
            LinkType::User0 => DataLink::USER0,
        }
    }
}

/// One captured packet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcapRecord {
    /// Simulation cycle (the timestamp, see the module doc).
    pub cycle: u64,
    /// The packet, LRH..VCRC.
    pub data: Vec<u8>,
}

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
    #[error("pcapng files are not supported; convert with `editcap -F pcap`")]
    Pcapng,
    /// The file ends inside the global header or a record: `records`
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
            0x0A0D_0D0A => return Err(PcapError::Pcapng),
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
