//! `vl15 bench`.

use anyhow::Result;
use clap::Args as ClapArgs;

use super::parse_tree;

#[derive(ClapArgs)]
pub struct Args {
    /// Cycles for the simulation-speed comparison
    #[arg(long, default_value_t = 2_000_000)]
    cycles: u64,
    /// Leave out the fabric benchmarks (702-node fat tree, idle cost, memory)
    #[arg(long)]
    skip_fabric: bool,
    /// Leave out `opensm -o` on vl15 serve vs ibsim (351- and 702-node
    /// fat trees, minutes)
    #[arg(long)]
    skip_serve: bool,
    /// Fat trees of the serve benchmark, as PORTSxLEAVES (36x18: 351
    /// nodes, 36x36: 702 nodes, 64x64: 96 switches and 2,048 CAs)
    #[arg(long, value_delimiter = ',', default_value = "36x18,36x36,64x64", value_parser = parse_tree)]
    serve_trees: Vec<(u8, u8)>,
}

impl Args {
    pub fn run(self) -> Result<bool> {
        out!("{}", vl15::run::bench::run(self.cycles)?);
        if !self.skip_fabric {
            out!(
                "\n== switch radix ==\n{}",
                vl15::run::netbench::radix_report(self.cycles.min(200_000))?
            );
            out!("\n== fabric ==\n{}", vl15::run::netbench::run()?);
        }
        if !self.skip_serve {
            out!(
                "\n== opensm -o on vl15 serve vs ibsim ==\n{}",
                vl15::run::netbench::serve_report(&self.serve_trees)?
            );
        }
        Ok(true)
    }
}
