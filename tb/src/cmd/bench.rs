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
    /// Fat trees of the serve benchmark, as PORTSxLEAVES for two levels
    /// (36x18: 351 nodes, 36x36: 702 nodes, 64x64: 96 switches and 2,048
    /// CAs) or PORTSL3 for three (36L3: 13,284 nodes)
    #[arg(long, value_delimiter = ',', default_value = "36x18,36x36,64x64", value_parser = parse_tree)]
    serve_trees: Vec<vl15::proto::fattree::Tree>,
    /// The model the served fabric's devices run as (rtl, twin; as on
    /// `vl15 serve`)
    #[arg(long, default_value = "rtl", value_name = "rtl|twin|lockstep")]
    fidelity: vl15::model::twin::Fidelity,
    /// Devices of the served fabric that run as RTL whatever --fidelity
    /// says (node ids or NodeDescriptions, `*` globs; as on `vl15 serve`)
    #[arg(long, value_name = "NODES", value_delimiter = ',')]
    rtl: Vec<String>,
    /// Devices of the served fabric that run as twins whatever --fidelity
    /// says
    #[arg(long, value_name = "NODES", value_delimiter = ',')]
    twin: Vec<String>,
    /// Leave out the RTL check of a twin run (`opensm -o` through `vl15
    /// serve --fidelity twin --check-rtl` against the all-RTL run, and
    /// the check at 1, 2, 4 … workers)
    #[arg(long)]
    skip_check: bool,
    /// Fat trees of the RTL check's benchmark (as --serve-trees)
    #[arg(long, value_delimiter = ',', default_value = "36x18", value_parser = parse_tree)]
    check_trees: Vec<vl15::proto::fattree::Tree>,
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
                vl15::run::netbench::serve_report(
                    &self.serve_trees,
                    &vl15::model::twin::FidelityChoice {
                        default: self.fidelity,
                        rtl: self.rtl.clone(),
                        twin: self.twin.clone(),
                    },
                )
            })?;
            out!("\n== opensm -o on vl15 serve vs ibsim ==\n{r}");
        }
        if !self.skip_check {
            let r = stage("the RTL check of a twin run", &|| {
                vl15::run::netbench::check_report(
                    &self.check_trees,
                    usize::from(super::default_threads()),
                )
            })?;
            out!("\n== the RTL check of a twin run (check-rtl) ==\n{r}");
        }
        Ok(true)
    }
}
