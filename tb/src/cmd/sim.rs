//! `vl15 sim`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;
use vl15::proto::InputError;

#[derive(ClapArgs)]
pub struct Args {
    /// Topology file (ibnetdiscover / ibsim format)
    #[arg(long, required_unless_present = "scenario")]
    topology: Option<PathBuf>,
    /// Scenario file (TOML: topology, SMs, timed events such as
    /// 'Unlink "sw"[3]'; the format is in docs/cli.md); --dump-state and
    /// --verbose apply to it as to --topology
    #[arg(long, conflicts_with = "topology")]
    scenario: Option<PathBuf>,
    /// Node id of the CA the SM runs on (default: the file's first CA)
    #[arg(long)]
    sm: Option<String>,
    /// Port of that CA (it must have a cable)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..))]
    sm_port: u8,
    /// LMC of every CA port (0..7)
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=7))]
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
    /// SMPs outstanding at once (OpenSM --maxsmps), at least 1
    #[arg(long, default_value_t = 4, value_parser = super::parse_count_usize)]
    max_smps: usize,
    /// Transaction timeout in cycles: at least 20000 (plus 126 per cycle
    /// of --link-latency above 4), an SMP's round trip on the longest
    /// directed route
    #[arg(long, default_value_t = 200_000, value_parser = super::parse_sm_timeout)]
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
        let rec = self.fabric.recording()?;
        if let Some(sc) = &self.scenario {
            let mut o =
                vl15::agents::simscenario::run_with(sc, rec.options(self.fabric.net_options()))?;
            if self.verbose {
                for sm in &o.sms {
                    for l in &sm.log {
                        eprintln!("sm {}: {l}", sm.name);
                    }
                }
            }
            out!("{}", o.report);
            super::pcap_done(o.net.take_wire_log());
            super::waves_done(o.net.waves.as_ref());
            self.dump(&mut o.net)?;
            let checked = rec.finish(&mut o.net)?;
            return Ok(o.pass && checked);
        }
        self.fabric.check_timeout("--timeout", self.timeout);
        let Some(topology) = &self.topology else {
            super::usage("give --topology or --scenario");
        };
        let mut opts = vl15::agents::simrun::SimOptions {
            sm_node: self.sm.clone(),
            sm_port: self.sm_port,
            net: rec.options(self.fabric.net_options()),
            ..Default::default()
        };
        opts.sm.lmc = self.lmc;
        opts.sm.tx.m_key = self.m_key;
        opts.sm.m_key_protect = self.m_key_protect;
        opts.sm.m_key_lease = self.m_key_lease;
        opts.sm.sm_key = self.sm_key;
        opts.sm.tx.max_outstanding = self.max_smps;
        opts.sm.tx.timeout = self.timeout;
        let bar = super::progress(None, "sim");
        opts.progress = Some(bar.clone());
        let r = vl15::agents::simrun::bring_up(topology, &opts);
        bar.finish_and_clear();
        let (mut net, sm, summary) = r?;
        if self.verbose {
            for l in &sm.log {
                eprintln!("sm: {l}");
            }
        }
        out!("{}", summary.text());
        super::pcap_done(net.take_wire_log());
        super::waves_done(net.waves.as_ref());
        self.dump(&mut net)?;
        let checked = rec.finish(&mut net)?;
        Ok(summary.active_ports == summary.linked_ports && checked)
    }

    /// `--dump-state`: the fabric's state, read from the RTL, as JSON.
    fn dump(&self, net: &mut vl15::agents::node_sma::Net) -> Result<()> {
        let Some(p) = &self.dump_state else {
            return Ok(());
        };
        let dump = vl15::agents::simrun::dump_state(net)?;
        let text = serde_json::to_string_pretty(&dump)?;
        std::fs::write(p, text + "\n")
            .map_err(|e| InputError(format!("{}: cannot write: {e}", p.display())))?;
        Ok(())
    }
}
