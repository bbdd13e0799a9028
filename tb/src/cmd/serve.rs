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
    /// Run this file of ibsim console commands first (as `!FILE` would),
    /// then read the console on standard input
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// Do not read the console on standard input (the server still runs
    /// --script)
    #[arg(long)]
    no_console: bool,
    /// Seed of the random draws of the console's Error (each Error without
    /// seed=N takes the next seed derived from it, and prints it); default:
    /// from the clock
    #[arg(long, value_parser = super::parse_u64)]
    seed: Option<u64>,
    #[command(flatten)]
    fabric: super::FabricArgs,
}

/// A seed from the clock (nanoseconds since the epoch).
fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl Args {
    pub fn run(self) -> Result<bool> {
        self.fabric
            .check_timeout("--timeout-cycles", self.timeout_cycles);
        let rec = self.fabric.recording()?;
        let recorded = vl15::agents::serve::serve_file(
            &self.topology,
            self.sockname,
            rec.options(self.fabric.net_options()),
            self.timeout_cycles,
            vl15::agents::serve::ConsoleOptions {
                script: self.script,
                stdin: !self.no_console,
                seed: self.seed.unwrap_or_else(clock_seed),
            },
        )?;
        match recorded {
            Some(dir) => rec.done(&dir),
            None => Ok(true),
        }
    }
}
