//! `vl15 decode`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args as ClapArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// pcap file of raw IB packets
    input: PathBuf,
}

impl Args {
    pub fn run(self) -> Result<bool> {
        let lines = vl15::proto::decode::decode_pcap(&self.input)
            .with_context(|| format!("decoding {}", self.input.display()))?;
        for l in lines {
            outln!("{l}");
        }
        Ok(true)
    }
}
