//! `vl15 routes`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use vl15::proto::routes::{ibroute_text, trace};
use vl15::proto::state::StateDump;
use vl15::proto::topology::NodeKind;

#[derive(ClapArgs)]
pub struct Args {
    /// State file written by `vl15 sim --dump-state`
    #[arg(value_name = "STATE.json")]
    state: PathBuf,
    /// Only this switch's LFT (its node id or description)
    #[arg(long, value_name = "NAME", conflicts_with = "path")]
    switch: Option<String>,
    /// Show invalid LFT entries too (ibroute -a)
    #[arg(long, conflicts_with = "path")]
    all: bool,
    /// Print the path from SRC_LID to DST_LID (decimal or 0x-hex) as ibtracert does
    #[arg(long, num_args = 2, value_names = ["SRC_LID", "DST_LID"], value_parser = parse_lid)]
    path: Option<Vec<u16>>,
}

/// A LID in decimal or 0x hex, as the diags take it.
fn parse_lid(s: &str) -> Result<u16, String> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u16::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|e| format!("{s:?} is not a LID: {e}"))
}

impl Args {
    pub fn run(self) -> Result<bool> {
        let d = StateDump::load(&self.state)?;
        if let Some([src, dst]) = self.path.as_deref() {
            let p = trace(&d, *src, *dst).with_context(|| format!("LID {src} to LID {dst}"))?;
            out!("{}", p.text());
            return Ok(true);
        }
        let switches: Vec<usize> = match &self.switch {
            Some(name) => vec![d.switch(&self.state, name)?],
            None => (0..d.nodes.len())
                .filter(|&i| d.nodes[i].kind == NodeKind::Switch)
                .collect(),
        };
        for i in switches {
            out!("{}", ibroute_text(&d, i, self.all));
        }
        Ok(true)
    }
}
