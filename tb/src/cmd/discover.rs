//! `vl15 discover`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;

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
    /// ibsim console command run on the fabric before the walk, e.g.
    /// 'Unlink "sw"[3]' (Link, Unlink, ReLink; repeatable, in order)
    #[arg(long, value_name = "COMMAND")]
    console: Vec<String>,
    #[command(flatten)]
    fabric: super::FabricArgs,
}

impl Args {
    pub fn run(self) -> Result<bool> {
        let rec = self.fabric.recording()?;
        let opts = rec.options(self.fabric.net_options());
        let bar = super::progress(None, "discover");
        let r = vl15::agents::discover::discover_topology_with(
            &self.topology,
            self.from.as_deref(),
            self.port,
            &self.console,
            opts,
            Some(bar.clone()),
        );
        bar.finish_and_clear();
        let (text, mut net) = r?;
        match &self.output {
            Some(p) => std::fs::write(p, &text).map_err(|e| {
                vl15::proto::InputError(format!("{}: cannot write: {e}", p.display()))
            })?,
            None => out!("{text}"),
        }
        eprintln!(
            "discover: {} nodes, {} cycles, {} device evaluations",
            net.devs.len(),
            net.cycle,
            net.stats.ticks
        );
        super::pcap_done(net.take_wire_log());
        super::waves_done(net.waves.as_ref());
        rec.finish(&mut net)
    }
}
