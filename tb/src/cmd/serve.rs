//! `vl15 serve`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// Topology file (ibsim / ibnetdiscover format)
    #[arg(long)]
    topology: PathBuf,
    /// Socket base name (default: $IBSIM_SOCKNAME, else "sim")
    #[arg(long)]
    sockname: Option<String>,
    /// Simulated cycles before a request with no response is returned
    /// to its client with status 110 (ETIMEDOUT): at least 20000 (plus 126
    /// per cycle of --link-latency above 4), an SMP's round trip on the
    /// longest directed route
    #[arg(long, default_value_t = 2_000_000, value_parser = super::parse_sm_timeout)]
    timeout_cycles: u64,
    #[command(flatten)]
    fabric: super::FabricArgs,
}

impl Args {
    pub fn run(self) -> Result<bool> {
        self.fabric
            .check_timeout("--timeout-cycles", self.timeout_cycles);
        vl15::agents::serve::serve_file(
            &self.topology,
            self.sockname,
            self.fabric.net_options(),
            self.timeout_cycles,
        )?;
        Ok(true)
    }
}
