//! `vl15 serve`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;

use super::{default_threads, parse_fabric_width};

#[derive(ClapArgs)]
pub struct Args {
    /// Topology file (ibsim / ibnetdiscover format)
    #[arg(long)]
    topology: PathBuf,
    /// Socket base name (default: $IBSIM_SOCKNAME, else "sim")
    #[arg(long)]
    sockname: Option<String>,
    /// Link latency in cycles
    #[arg(long, default_value_t = 4)]
    link_latency: u64,
    /// Simulated cycles before a request with no response is returned
    /// to its client with status 110 (ETIMEDOUT)
    #[arg(long, default_value_t = 2_000_000)]
    timeout_cycles: u64,
    /// Threads that evaluate the devices with work in a cycle (default:
    /// the machine's cores); any count gives the same run
    #[arg(long, default_value_t = default_threads(), value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
    /// Data path width of every switch and CA in the fabric, in bits (64
    /// or 128): fewer beats a packet at 128
    #[arg(long, default_value_t = vl15::model::net::DEFAULT_DATA_W, value_parser = parse_fabric_width)]
    width: u32,
}

impl Args {
    pub fn run(self) -> Result<bool> {
        vl15::agents::serve::serve_file(
            &self.topology,
            self.sockname,
            super::net_options(self.link_latency, self.threads, self.width),
            self.timeout_cycles,
        )?;
        Ok(true)
    }
}
