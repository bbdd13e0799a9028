//! `vl15 fattree`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;
use vl15::proto::InputError;

#[derive(ClapArgs)]
pub struct Args {
    /// Ports per switch (even, 2..64)
    #[arg(long, default_value_t = 36)]
    ports: u8,
    /// Leaf switches (even, dividing --ports; default --ports): fewer
    /// leaves, leaves/2 spines joined by --ports/leaves parallel links
    /// (36 ports, 18 leaves: 351 nodes)
    #[arg(long)]
    leaves: Option<u8>,
    /// Levels of switches: 2 (leaves and spines) or 3 (k pods of k/2
    /// edge and k/2 aggregation switches, (k/2)² cores: k³/4 CAs and
    /// 5k²/4 switches; 36 ports: 13,284 nodes)
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3))]
    levels: u8,
    /// Output file (default: stdout)
    #[arg(short, long)]
    output: Option<PathBuf>,
}

impl Args {
    pub fn run(self) -> Result<bool> {
        use vl15::proto::fattree;
        let t = match (self.levels, self.leaves) {
            (3, Some(_)) => return Err(InputError(
                "--leaves is for two levels; a three-level tree has k pods of k/2 edge switches"
                    .into(),
            )
            .into()),
            (3, None) => fattree::three_level(self.ports),
            _ => fattree::two_level_leaves(self.ports, self.leaves.unwrap_or(self.ports)),
        }
        .map_err(|e| InputError(format!("{e:#}")))?;
        match &self.output {
            Some(p) => std::fs::write(p, &t)
                .map_err(|e| InputError(format!("{}: cannot write: {e}", p.display())))?,
            None => out!("{t}"),
        }
        Ok(true)
    }
}
