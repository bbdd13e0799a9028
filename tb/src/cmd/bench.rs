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
        // A spinner while each part runs (on a terminal), cleared before
        // the part's report is printed.
        let stage = |name: &str, f: &dyn Fn() -> Result<String>| -> Result<String> {
            let bar = super::progress(None, "bench");
            bar.set_message(name.to_string());
            let r = f();
            bar.finish_and_clear();
            r
        };
        out!(
            "{}",
            stage(
                "latency, throughput, cxx vs C++",
                &|| vl15::run::bench::run(self.cycles)
            )?
        );
        if !self.skip_fabric {
            let r = stage("switch radix", &|| {
                vl15::run::netbench::radix_report(self.cycles.min(200_000))
            })?;
            out!("\n== switch radix ==\n{r}");
            let r = stage("fabric", &vl15::run::netbench::run)?;
            out!("\n== fabric ==\n{r}");
        }
        if !self.skip_serve {
            let r = stage("opensm -o on vl15 serve and on ibsim", &|| {
                vl15::run::netbench::serve_report(&self.serve_trees)
            })?;
            out!("\n== opensm -o on vl15 serve vs ibsim ==\n{r}");
        }
        Ok(true)
    }
}
