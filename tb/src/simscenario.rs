//! Scenario files for `vl15 sim --scenario FILE` (TOML): a topology, the SM,
//! and timed events — cables going down and up (ibsim's console words) and
//! the SM being killed — run against the RTL fabric.
//!
//! ```toml
//! topology = "net.2sw2path4hca"   # relative to the scenario file
//! lmc = 0
//! sweep_interval = 2000000        # cycles between light sweeps
//!
//! [[sm]]
//! node = "Hca1"                   # a CA (default: the file's first CA)
//! port = 1
//! priority = 0
//!
//! [[event]]
//! after = 3000000                 # cycles after bring-up
//! console = 'Unlink "Switch1"[5]'
//!
//! [[event]]
//! after = 9000000
//! console = 'ReLink "Switch1"[5]'
//! ```
//!
//! After the last event the fabric runs until the SM has settled, and the
//! result must have every cabled port Active. Several `[[sm]]` entries are
//! refused for now: master/standby election is not implemented yet.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use serde::Deserialize;

use crate::simrun::{bring_up, port_counts, SimOptions};
use crate::subnet_sm::{run_for, run_until_settled};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub topology: PathBuf,
    #[serde(default)]
    pub lmc: u8,
    pub sweep_interval: Option<u64>,
    #[serde(default)]
    pub sm: Vec<SmEntry>,
    #[serde(default)]
    pub event: Vec<EventEntry>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmEntry {
    pub node: Option<String>,
    #[serde(default = "one")]
    pub port: u8,
    #[serde(default)]
    pub priority: u8,
}

fn one() -> u8 {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventEntry {
    /// Cycles after the bring-up finished.
    pub after: u64,
    /// An ibsim console word: Link, Unlink, ReLink.
    pub console: Option<String>,
    /// Stop the SM on this node (it no longer answers or sweeps).
    pub kill_sm: Option<String>,
}

impl ScenarioFile {
    pub fn load(path: &Path) -> Result<ScenarioFile> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut s: ScenarioFile =
            toml::from_str(&text).with_context(|| format!("{}", path.display()))?;
        if s.topology.is_relative() {
            let base = path.parent().unwrap_or(Path::new("."));
            s.topology = base.join(&s.topology);
        }
        ensure!(
            s.sm.len() <= 1,
            "{}: {} SMs: several SMs need master/standby election, which is not implemented yet",
            path.display(),
            s.sm.len()
        );
        for (i, e) in s.event.iter().enumerate() {
            ensure!(
                e.console.is_some() != e.kill_sm.is_some(),
                "{}: event {}: give exactly one of console, kill_sm",
                path.display(),
                i + 1
            );
        }
        Ok(s)
    }
}

/// Run the scenario: the report (one line per event and the summaries)
/// and whether every cabled port ended Active.
pub fn run(path: &Path) -> Result<(String, bool)> {
    let sc = ScenarioFile::load(path)?;
    let mut opts = SimOptions::default();
    opts.sm.lmc = sc.lmc;
    if let Some(i) = sc.sweep_interval {
        opts.sm.sweep_interval = i;
    }
    if let Some(sm) = sc.sm.first() {
        opts.sm_node = sm.node.clone();
        opts.sm_port = sm.port;
        opts.sm.priority = sm.priority;
    }
    let (mut net, sm, summary) = bring_up(&sc.topology, &opts)?;
    let mut r = String::new();
    let _ = write!(r, "bring-up:\n{}", summary.text());
    let mut sms = vec![sm];
    let start = net.cycle;
    let mut events = sc.event.clone();
    events.sort_by_key(|e| e.after);
    for e in &events {
        let at = start + e.after;
        if at > net.cycle {
            let n = at - net.cycle;
            run_for(&mut net, &mut sms, n)?;
        }
        if let Some(line) = &e.console {
            let out = net.console(line)?;
            let _ = write!(r, "+{} {line}: {out}", e.after);
        }
        if let Some(node) = &e.kill_sm {
            let Some(i) = sms.iter().position(|s| &s.name == node) else {
                bail!("event at +{}: no SM on {node:?}", e.after);
            };
            // Its QP goes with it: the CA's receive WQEs are withdrawn, so
            // MADs for the SM there are dropped and counted from now on.
            let dev = sms.remove(i).dev;
            net.detach_sm(dev)?;
            let _ = writeln!(r, "+{} SM on {node} killed", e.after);
        }
    }
    if !sms.is_empty() {
        run_until_settled(&mut net, &mut sms, opts.max_cycles)?;
    }
    let (linked, active) = port_counts(&net);
    let _ = writeln!(
        r,
        "end (cycle {}): ports Active {active} of {linked} linked; heavy sweeps {}, light sweeps {}, traps {}",
        net.cycle - start,
        sms.first().map_or(0, |s| s.stats.heavy_sweeps),
        sms.first().map_or(0, |s| s.stats.light_sweeps),
        sms.first().map_or(0, |s| s.stats.traps)
    );
    Ok((r, active == linked))
}
