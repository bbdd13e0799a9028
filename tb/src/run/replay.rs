//! `vl15 replay`: every packet of a pcap enters one CA port's RTL at line
//! rate (back to back, one beat per cycle); the Rust SMA answers; every packet
//! the port transmits is written to the output pcap with its cycle.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use crate::agents::node_sma::Net;
use crate::agents::sm::{Bench, PortSm};
use crate::agents::sma::{Sma, SmaConfig};
use crate::check::scenario::{MAX_CYCLES, QUIET};
use crate::model::device::CaPortModel;
use crate::model::regmap::reg;
use crate::proto::pcap::{self, LinkType, PcapRecord};

pub use crate::proto::InputError;

/// `--lid` and `--lmc` together: every LID the port owns (lid..lid +
/// 2^lmc − 1) must be unicast, below the multicast range at 0xC000.
pub fn check_lid_lmc(lid: u16, lmc: u8) -> Result<(), InputError> {
    let last = u32::from(lid) + (1u32 << lmc.min(7)) - 1;
    if lid != 0 && last > 0xBFFF {
        return Err(InputError(format!(
            "--lid {lid:#x} --lmc {lmc}: the port would own LIDs up to {last:#x}, past the \
             last unicast LID 0xbfff"
        )));
    }
    Ok(())
}

#[derive(Debug, Clone)]
pub struct Options {
    pub width: u32,
    pub lid: u16,
    pub lmc: u8,
    pub depth: Option<u32>,
    pub sma_latency: u64,
    pub linktype: LinkType,
    /// Also write every packet in and out of the port to this pcapng file
    /// (interface `ca[1]`), with this link type.
    pub pcap: Option<(std::path::PathBuf, LinkType)>,
    /// Dump the port's signals into `<dir>/ca.fst`.
    pub wave: Option<std::path::PathBuf>,
}

/// Run the replay; returns the report printed at the end.
pub fn replay(input: &Path, output: &Path, o: &Options) -> Result<String> {
    check_lid_lmc(o.lid, o.lmc)?;
    let cap = pcap::read_pcap(input)?;
    if ![32, 64, 128].contains(&o.width) {
        return Err(InputError(format!("--width must be 32, 64 or 128, not {}", o.width)).into());
    }
    let mut cfg = SmaConfig::vector_v2_ca();
    cfg.latency = o.sma_latency;
    let mut net = Net::bench();
    let ca =
        net.add_port::<Sma, PortSm>("ca", CaPortModel::Top, o.width, Some(Sma::new(cfg)), None)?;
    let waves = match &o.wave {
        Some(dir) => {
            let mut w = crate::model::trace::Waves::new(dir)?;
            w.open("ca", net.dut_mut(ca))?;
            Some(w)
        }
        None => None,
    };
    let Some(Bench {
        port,
        sma: Some(sma),
        ..
    }) = net.driver_mut::<Bench>(ca)
    else {
        anyhow::bail!("the replay's port has no SMA");
    };
    let port_num = port.port_num();
    sma.assign(port, port_num, o.lid, o.lmc, 0)
        .map_err(|e| InputError(format!("--lid {:#x} --lmc {}: {e}", o.lid, o.lmc)))?;
    if let Some(d) = o.depth {
        port.write_reg(reg::RX_DEPTH, d);
    }
    if let Some((path, lt)) = &o.pcap {
        net.log_wire(pcap::TraceFile::create(path, *lt)?);
    }
    // Let the register writes land before the first packet arrives.
    net.run(8)?;
    let mut skipped = 0;
    for r in &cap.records {
        if r.data.is_empty() {
            skipped += 1;
            continue;
        }
        port_of(&mut net, ca)?.wire_rx.push(&r.data, ());
    }
    let start = net.cycle;
    let cycles = net.run_until_quiet(QUIET, MAX_CYCLES.max(cap.records.len() as u64 * 400))?;
    let sent: Vec<PcapRecord> = net
        .trace
        .iter()
        .filter(|t| t.dir == "ca>tb")
        .map(|t| PcapRecord {
            cycle: t.cycle - start,
            data: t.bytes.clone(),
            ..Default::default()
        })
        .collect();
    pcap::write_pcap(output, o.linktype, &sent)?;
    let drx = &port_of(&mut net, ca)?.drx.packets;
    let data_rx = drx.iter().filter(|p| !p.bad).count();
    let data_bad = drx.len() - data_rx;
    let counters = net.port_counters(ca)?;

    let mut s = String::new();
    writeln!(
        s,
        "replay: {} packets in ({} empty skipped), {} out to {}, {} good data-VL packets to the host \
         (+{} flagged bad on the data RX port), {} cycles at DATA_W {}",
        cap.records.len() - skipped,
        skipped,
        sent.len(),
        output.display(),
        data_rx,
        data_bad,
        cycles,
        o.width
    )?;
    writeln!(s, "counters:")?;
    for (name, v) in &counters.0 {
        writeln!(s, "  {name:<16} {v}")?;
    }
    if let Some(log) = net.take_wire_log() {
        writeln!(s, "{}", log.summary())?;
    }
    if let Some(w) = waves {
        writeln!(s, "{}", w.summary())?;
    }
    Ok(s)
}

/// The replay's CA port.
fn port_of(net: &mut Net, ca: usize) -> Result<&mut crate::model::device::CaPort> {
    net.ca_port_mut(ca)
        .ok_or_else(|| anyhow::anyhow!("the replay's device is not a CA port"))
}
