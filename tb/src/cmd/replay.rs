//! `vl15 replay`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;
use vl15::run::replay;

use super::Lt;

#[derive(ClapArgs)]
pub struct Args {
    /// Input pcap: raw IB packets, LRH..VCRC (link type 247 or 147)
    input: PathBuf,
    /// Output pcap of every packet the port transmits
    #[arg(short, long)]
    output: PathBuf,
    /// Data path width in bits (32, 64, 128)
    #[arg(long, default_value_t = 64, value_parser = super::parse_ca_width)]
    width: u32,
    /// The port's base LID, unicast 1..0xbfff (decimal or 0x hex; 0 =
    /// none: LID-routed SMPs are dropped)
    #[arg(long, default_value_t = 0, value_parser = super::parse_lid)]
    lid: u16,
    /// The port's LMC (0..7): it owns LIDs lid..lid+2^lmc-1
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=7))]
    lmc: u8,
    /// VL15 receive buffer depth in SMPs (1..4; default: all 4 slots)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4))]
    depth: Option<u32>,
    /// SMA service latency in cycles
    #[arg(long, default_value_t = 8)]
    sma_latency: u64,
    /// Link type of the output pcap
    #[arg(long, value_enum, default_value = "infiniband")]
    linktype: Lt,
    /// Serial port of a vl15 board (e.g. /dev/ttyUSB1); --width, --depth
    /// and --sma-latency do not apply
    #[arg(long)]
    serial: Option<String>,
    /// Bit rate of --serial (the boards run 3 Mbaud, 8N1)
    #[arg(long, default_value_t = 3_000_000)]
    baud: u32,
    /// With --serial: the replay ends after the board is silent this long (ms)
    #[arg(long, default_value_t = 500)]
    quiet_ms: u64,
    #[command(flatten)]
    pcap: super::CaptureArgs,
}

impl Args {
    pub fn run(self) -> Result<bool> {
        if self.serial.is_some() && (self.pcap.pcap.is_some() || self.pcap.wave.is_some()) {
            super::usage(
                "--pcap and --wave trace the Verilated port; with --serial the output pcap is the board's wire",
            );
        }
        replay::check_lid_lmc(self.lid, self.lmc)?;
        if let Some(path) = &self.serial {
            let o = vl15::run::board::SerialOptions {
                lid: self.lid,
                lmc: self.lmc,
                quiet: std::time::Duration::from_millis(self.quiet_ms),
                linktype: self.linktype.into(),
            };
            let line = vl15::run::board::open_serial(path, self.baud)?;
            let mut port = vl15::run::board::BoardPort::new(line);
            let report = vl15::run::board::replay_serial(&mut port, &self.input, &self.output, &o)?;
            out!("{report}");
            return Ok(true);
        }
        let opts = replay::Options {
            width: self.width,
            lid: self.lid,
            lmc: self.lmc,
            depth: self.depth,
            sma_latency: self.sma_latency,
            linktype: self.linktype.into(),
            pcap: self.pcap.target(),
            wave: self.pcap.wave.clone(),
        };
        let report = replay::replay(&self.input, &self.output, &opts)?;
        out!("{report}");
        Ok(true)
    }
}
