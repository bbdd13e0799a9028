//! `vl15 discover`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args as ClapArgs;

use super::{default_threads, parse_fabric_width};

#[derive(ClapArgs)]
pub struct Args {
    /// Topology file
    #[arg(long)]
    topology: PathBuf,
    /// Node id of the CA the SM runs on (default: the file's first CA)
    #[arg(long)]
    from: Option<String>,
    /// Port of that CA (default 1)
    #[arg(long)]
    port: Option<u8>,
    /// Write the topology text here instead of stdout
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Link latency in cycles
    #[arg(long, default_value_t = 4)]
    link_latency: u64,
    /// ibsim console command run on the fabric before the walk, e.g.
    /// 'Unlink "sw"[3]' (Link, Unlink, ReLink; repeatable, in order)
    #[arg(long, value_name = "COMMAND")]
    console: Vec<String>,
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
        let opts = super::net_options(self.link_latency, self.threads, self.width);
        let (text, net) = vl15::agents::discover::discover_topology(
            &self.topology,
            self.from.as_deref(),
            self.port,
            &self.console,
            opts,
        )?;
        match &self.output {
            Some(p) => {
                std::fs::write(p, &text).with_context(|| format!("writing {}", p.display()))?
            }
            None => out!("{text}"),
        }
        eprintln!(
            "discover: {} nodes, {} cycles, {} device evaluations",
            net.devs.len(),
            net.cycle,
            net.stats.ticks
        );
        Ok(true)
    }
}
