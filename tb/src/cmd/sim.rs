//! `vl15 sim`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// Topology file (ibnetdiscover / ibsim format)
    #[arg(long, required_unless_present = "scenario")]
    topology: Option<PathBuf>,
    /// Scenario file (TOML: topology, SMs with priorities, timed events
    /// such as 'Unlink "sw"[3]', SM kills and joins)
    #[arg(long, conflicts_with = "topology")]
    scenario: Option<PathBuf>,
    /// Node id of the CA the SM runs on (default: the file's first CA)
    #[arg(long)]
    sm: Option<String>,
    /// Port of that CA
    #[arg(long, default_value_t = 1)]
    sm_port: u8,
    /// LMC of every CA port (0..7)
    #[arg(long, default_value_t = 0)]
    lmc: u8,
    /// M_Key the SM uses in every SMP and sets on every port it brings
    /// up (decimal or 0x-hex)
    #[arg(long, value_parser = vl15::agents::simrun::parse_key, default_value = "0")]
    m_key: u64,
    /// M_KeyProtectBits the SM sets (0..3)
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
    m_key_protect: u8,
    /// M_KeyLeasePeriod the SM sets (seconds; 0 = never expires)
    #[arg(long, default_value_t = 0)]
    m_key_lease: u16,
    /// The SM's SMInfo.SM_Key (decimal or 0x-hex)
    #[arg(long, value_parser = vl15::agents::simrun::parse_key, default_value = "0")]
    sm_key: u64,
    /// SMPs outstanding at once (OpenSM --maxsmps)
    #[arg(long, default_value_t = 4)]
    max_smps: usize,
    /// Transaction timeout in cycles
    #[arg(long, default_value_t = 200_000)]
    timeout: u64,
    #[command(flatten)]
    fabric: super::FabricArgs,
    /// Write every node's GUID, description, type, ports (LID, LMC,
    /// PortState, neighbour) and every switch's LFT, read from the RTL, as JSON
    #[arg(long, value_name = "OUT.json")]
    dump_state: Option<PathBuf>,
    /// Print the SM's log (errors, traps, sweeps) to stderr
    #[arg(long)]
    verbose: bool,
}

impl Args {
    pub fn run(self) -> Result<bool> {
        if let Some(sc) = &self.scenario {
            let (r, all_active) = vl15::agents::simscenario::run(sc)?;
            out!("{r}");
            return Ok(all_active);
        }
        let Some(topology) = &self.topology else {
            bail!("give --topology or --scenario");
        };
        let mut opts = vl15::agents::simrun::SimOptions {
            sm_node: self.sm,
            sm_port: self.sm_port,
            net: self.fabric.net_options(),
            ..Default::default()
        };
        opts.sm.lmc = self.lmc;
        opts.sm.tx.m_key = self.m_key;
        opts.sm.m_key_protect = self.m_key_protect;
        opts.sm.m_key_lease = self.m_key_lease;
        opts.sm.sm_key = self.sm_key;
        opts.sm.tx.max_outstanding = self.max_smps;
        opts.sm.tx.timeout = self.timeout;
        let (mut net, sm, summary) = vl15::agents::simrun::bring_up(topology, &opts)?;
        if self.verbose {
            for l in &sm.log {
                eprintln!("sm: {l}");
            }
        }
        out!("{}", summary.text());
        if let Some(p) = &self.dump_state {
            let dump = vl15::agents::simrun::dump_state(&mut net)?;
            let text = serde_json::to_string_pretty(&dump)?;
            std::fs::write(p, text + "\n").with_context(|| format!("writing {}", p.display()))?;
        }
        Ok(summary.active_ports == summary.linked_ports)
    }
}
