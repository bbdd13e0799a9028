//! `vl15 decode`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// pcap file of raw IB packets (a file cut short is refused, naming the
    /// last whole record)
    input: PathBuf,
}

impl Args {
    pub fn run(self) -> Result<bool> {
        let lines = vl15::proto::decode::decode_pcap(&self.input)?;
        for l in lines {
            outln!("{l}");
        }
        Ok(true)
    }
}
