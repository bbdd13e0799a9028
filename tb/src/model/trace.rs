//! Traces of a run: one pcap per link direction (LRH..VCRC, the cycle of the
//! first beat as the timestamp) and the one-line-per-packet text form.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::model::stream::{Beat, PacketAssembler};
use crate::proto::decode::decode_line;
use crate::proto::pcap::{self, Direction, LinkType, PcapRecord, TraceFile};

/// One packet on a wire, for traces: the cycle of its first beat, which
/// direction it travelled, and its bytes (LRH..VCRC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEntry {
    pub cycle: u64,
    pub dir: String,
    pub bytes: Vec<u8>,
}

/// The text form of a trace: one decoded line per packet, in cycle order.
pub fn text(trace: &[TraceEntry]) -> String {
    let mut v: Vec<&TraceEntry> = trace.iter().collect();
    v.sort_by_key(|t| t.cycle);
    let mut s = String::new();
    for t in v {
        s.push_str(&decode_line(t.cycle, &t.dir, &t.bytes));
        s.push('\n');
    }
    s
}

/// Write one pcap per direction into `dir` as `<stem>_<from>-<to>.pcap`;
/// returns the paths written.
pub fn write_pcaps(
    trace: &[TraceEntry],
    dir: &Path,
    stem: &str,
    lt: LinkType,
) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut by_dir: BTreeMap<&str, Vec<PcapRecord>> = BTreeMap::new();
    for t in trace {
        by_dir.entry(t.dir.as_str()).or_default().push(PcapRecord {
            cycle: t.cycle,
            data: t.bytes.clone(),
            ..Default::default()
        });
    }
    let mut out = Vec::new();
    for (d, mut pkts) in by_dir {
        pkts.sort_by_key(|r| r.cycle);
        let path = dir.join(format!("{stem}_{}.pcap", d.replace('>', "-")));
        pcap::write_pcap(&path, lt, &pkts)?;
        out.push(path);
    }
    Ok(out)
}

/// Waveform files of a run: one FST per device, named after it.
#[derive(Debug, Default, Clone)]
pub struct Waves {
    dir: PathBuf,
    /// (device, file), in the order they were opened.
    pub files: Vec<(String, PathBuf)>,
}

impl Waves {
    /// Waves into `dir` (created if missing).
    pub fn new(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Waves {
            dir: dir.to_path_buf(),
            files: Vec::new(),
        })
    }

    /// Open `dut`'s dump as `<dir>/<name>.fst`: every character of `name`
    /// other than letters, digits, '.', '-' and '_' becomes '_', and a name
    /// already taken gets `-2`, `-3` … appended.
    pub fn open(&mut self, name: &str, dut: &mut dyn crate::model::dut::Dut) -> Result<()> {
        let stem: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut path = self.dir.join(format!("{stem}.fst"));
        let mut k = 1;
        while self.files.iter().any(|(_, p)| *p == path) {
            k += 1;
            path = self.dir.join(format!("{stem}-{k}.fst"));
        }
        dut.trace_open(&path)
            .with_context(|| format!("opening the waveform {}", path.display()))?;
        self.files.push((name.to_string(), path));
        Ok(())
    }

    /// What a verb prints at the end: one line per file.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "wave: {} FST files in {}",
            self.files.len(),
            self.dir.display()
        );
        for (name, path) in &self.files {
            s.push_str(&format!("\n  {name}: {}", path.display()));
        }
        s
    }
}

/// A packet gathered from the wire: the cycle of its first beat, its bytes.
type Packet = (u64, Vec<u8>);

/// One port's wire in a pcapng trace, beat by beat: the packets gathered
/// in each direction, written on interface `name` as they end.
#[derive(Debug, Clone)]
pub struct PortLog {
    pub name: String,
    rx: PacketAssembler,
    tx: PacketAssembler,
}

impl PortLog {
    pub fn new(name: String) -> Self {
        PortLog {
            name,
            rx: PacketAssembler::default(),
            tx: PacketAssembler::default(),
        }
    }

    /// The beats that crossed the wire at cycle `now` into (`rx`) and out
    /// of (`tx`) the port. With the link down nothing is on the wire:
    /// what it carried of a packet before is written as it is.
    pub fn cycle(
        &mut self,
        file: &mut TraceFile,
        now: u64,
        link_up: bool,
        rx: Option<&Beat>,
        tx: Option<&Beat>,
    ) -> Result<()> {
        if !link_up {
            return self.cut(file);
        }
        let done = [
            rx.and_then(|b| self.rx.beat(now, b))
                .map(|p| (Direction::Inbound, p)),
            tx.and_then(|b| self.tx.beat(now, b))
                .map(|p| (Direction::Outbound, p)),
        ];
        self.write(file, done)
    }

    /// Write what the wire carried of packets that will not end (the link
    /// went down, the port was reset).
    pub fn cut(&mut self, file: &mut TraceFile) -> Result<()> {
        let done = [
            self.rx.cut().map(|p| (Direction::Inbound, p)),
            self.tx.cut().map(|p| (Direction::Outbound, p)),
        ];
        self.write(file, done)
    }

    fn write(&self, file: &mut TraceFile, done: [Option<(Direction, Packet)>; 2]) -> Result<()> {
        for (dir, (first, bytes)) in done.into_iter().flatten() {
            file.packet(&self.name, dir, first, &bytes)
                .context("the --pcap trace")?;
        }
        Ok(())
    }
}
