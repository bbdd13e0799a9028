//! Traces of a run: one pcap per link direction (LRH..VCRC, the cycle of the
//! first beat as the timestamp) and the one-line-per-packet text form.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::model::fabric::TraceEntry;
use crate::proto::decode::decode_line;
use crate::proto::pcap::{self, LinkType, PcapRecord};

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
