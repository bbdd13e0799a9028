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
    /// Output file (default: stdout)
    #[arg(short, long)]
    output: Option<PathBuf>,
}

impl Args {
    pub fn run(self) -> Result<bool> {
        let t =
            vl15::proto::fattree::two_level_leaves(self.ports, self.leaves.unwrap_or(self.ports))
                .map_err(|e| InputError(format!("{e:#}")))?;
        match &self.output {
            Some(p) => std::fs::write(p, &t)
                .map_err(|e| InputError(format!("{}: cannot write: {e}", p.display())))?,
            None => out!("{t}"),
        }
        Ok(true)
    }
}
