//! Scenario files for `vl15 sim --scenario FILE` (TOML): a topology, the
//! SMs with their priorities, and timed events — cables going down and up
//! (ibsim's console words), SMs killed and SMs joining — run against the
//! RTL fabric.
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
//! [[sm]]                          # a second SM: election (ibspec §9)
//! node = "Hca2"
//! priority = 5
//! sm_key = "0x1234"               # SMInfo.SM_Key (ibspec §9), default 0
//! m_key = "0x99"                  # this SM's own M_Key (default: the file's)
//!
//! m_key = "0x0123456789abcdef"    # M_Key every SM uses and sets (default 0)
//! m_key_protect = 2               # M_KeyProtectBits it sets (0..3)
//! m_key_lease = 60                # M_KeyLeasePeriod it sets (seconds, 0 = none)
//! sm_key = "0x1234"               # default SM_Key of every SM
//!
//! poll_interval = 500000          # a Standby's SMInfo polls (cycles)
//! poll_retries = 4
//!
//! [[event]]
//! after = 3000000                 # cycles after bring-up
//! console = 'Unlink "Switch1"[5]'
//!
//! [[event]]
//! after = 9000000
//! console = 'ReLink "Switch1"[5]'
//!
//! [[event]]
//! after = 12000000
//! kill_sm = "Hca2"                # the SM process on Hca2 dies
//!
//! [[event]]
//! after = 20000000
//! start_sm = "Hca3"               # an SM joins (port, priority below)
//! priority = 9
//! ```
//!
//! `after` counts from the end of the first bring-up. After the last event
//! the fabric runs until every SM has settled; the scenario passes when
//! every cabled port is Active, exactly one live SM is Master, every other
//! is Standby (or NotActive), and every LID port (read from the RTL) has
//! MasterSMLID = the master's LID.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::agents::node_sma::Net;
use crate::agents::simrun::{bring_up_sms, dump_state, port_counts, start_sm, SimOptions, SmSpec};
use crate::agents::subnet_sm::{run_for, run_until_settled, SmState, SubnetManager};
use crate::proto::state::PortState;
use crate::proto::InputError;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub topology: PathBuf,
    #[serde(default)]
    pub lmc: u8,
    pub sweep_interval: Option<u64>,
    pub poll_interval: Option<u64>,
    pub poll_retries: Option<u32>,
    pub m_key: Option<Key>,
    #[serde(default)]
    pub m_key_protect: u8,
    #[serde(default)]
    pub m_key_lease: u16,
    pub sm_key: Option<Key>,
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
    pub sm_key: Option<Key>,
    pub m_key: Option<Key>,
}

/// A 64-bit key: a TOML integer, or a string (decimal or 0x-hexadecimal,
/// since TOML integers stop at 2^63 − 1).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Key {
    Int(u64),
    Text(String),
}

impl Key {
    pub fn value(&self) -> Result<u64> {
        match self {
            Key::Int(v) => Ok(*v),
            Key::Text(s) => crate::agents::simrun::parse_key(s).map_err(anyhow::Error::msg),
        }
    }
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
    /// Stop the SM on this node (it no longer answers or sweeps; its port
    /// loses IsSM).
    pub kill_sm: Option<String>,
    /// Start an SM on this CA (with `port` and `priority`).
    pub start_sm: Option<String>,
    pub port: Option<u8>,
    pub priority: Option<u8>,
}

impl ScenarioFile {
    /// Read and check a scenario file; every error is an [`InputError`]
    /// naming the file (and the line, for TOML errors).
    pub fn load(path: &Path) -> Result<ScenarioFile> {
        let bad = |msg: String| InputError(format!("{}: {msg}", path.display()));
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let mut s: ScenarioFile = toml::from_str(&text).map_err(|e: toml::de::Error| {
            let line = e
                .span()
                .map_or(String::new(), |sp| format!("{}:", line_of(&text, sp.start)));
            InputError(format!(
                "{}:{line} {}",
                path.display(),
                e.message().trim_end()
            ))
        })?;
        if s.topology.is_relative() {
            let base = path.parent().unwrap_or(Path::new("."));
            s.topology = base.join(&s.topology);
        }
        for (i, e) in s.event.iter().enumerate() {
            let kinds = [
                e.console.is_some(),
                e.kill_sm.is_some(),
                e.start_sm.is_some(),
            ];
            if kinds.iter().filter(|&&k| k).count() != 1 {
                return Err(bad(format!(
                    "event {}: give exactly one of console, kill_sm, start_sm",
                    i + 1
                ))
                .into());
            }
            if e.start_sm.is_none() && (e.port.is_some() || e.priority.is_some()) {
                return Err(bad(format!(
                    "event {}: port and priority belong to start_sm",
                    i + 1
                ))
                .into());
            }
        }
        let priorities = s.sm.iter().map(|m| Some(m.priority));
        for p in priorities
            .chain(s.event.iter().map(|e| e.priority))
            .flatten()
        {
            if p > 15 {
                return Err(bad(format!("SM priority {p} > 15")).into());
            }
        }
        if s.m_key_protect > 3 {
            return Err(bad(format!("m_key_protect {} > 3", s.m_key_protect)).into());
        }
        if s.lmc > 7 {
            return Err(bad(format!("lmc {} > 7", s.lmc)).into());
        }
        let key = |k: &Option<Key>, name: &str| match k {
            Some(k) => k
                .value()
                .map(|_| ())
                .map_err(|e| bad(format!("{name}: {e}"))),
            None => Ok(()),
        };
        key(&s.m_key, "m_key")?;
        key(&s.sm_key, "sm_key")?;
        for m in &s.sm {
            key(&m.m_key, "m_key")?;
            key(&m.sm_key, "sm_key")?;
        }
        Ok(s)
    }
}

/// The 1-based line of byte `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// A scenario run: the report, whether it passed, and the fabric and SMs
/// as the run left them (for `--dump-state`, `--verbose`).
pub struct Outcome {
    pub report: String,
    pub pass: bool,
    pub net: Net,
    pub sms: Vec<SubnetManager>,
}

/// Run the scenario: the report (one line per event and the summaries),
/// whether it passed (see the module documentation), and the fabric and
/// SMs as it ended. A mistake in the file, including an event the fabric
/// refuses, is an [`InputError`].
pub fn run(path: &Path) -> Result<Outcome> {
    run_with(path, crate::model::net::NetOptions::default())
}

/// [`run`] on a fabric with the options `net` (data path width, link
/// latency, threads, `--pcap`, `--wave`, which devices run as twins).
pub fn run_with(path: &Path, net: crate::model::net::NetOptions) -> Result<Outcome> {
    let sc = ScenarioFile::load(path)?;
    let mut opts = SimOptions {
        net,
        ..SimOptions::default()
    };
    opts.sm.lmc = sc.lmc;
    if let Some(i) = sc.sweep_interval {
        opts.sm.sweep_interval = i;
    }
    if let Some(i) = sc.poll_interval {
        opts.sm.poll_interval = i;
    }
    if let Some(n) = sc.poll_retries {
        opts.sm.poll_retries = n;
    }
    if let Some(k) = &sc.m_key {
        opts.sm.tx.m_key = k
            .value()
            .with_context(|| format!("{}: m_key", path.display()))?;
    }
    opts.sm.m_key_protect = sc.m_key_protect;
    opts.sm.m_key_lease = sc.m_key_lease;
    if let Some(k) = &sc.sm_key {
        opts.sm.sm_key = k
            .value()
            .with_context(|| format!("{}: sm_key", path.display()))?;
    }
    let key = |k: &Option<Key>| k.as_ref().map(Key::value).transpose();
    let mut specs: Vec<SmSpec> = Vec::new();
    for m in &sc.sm {
        specs.push(SmSpec {
            node: m.node.clone(),
            port: m.port,
            priority: m.priority,
            sm_key: key(&m.sm_key).with_context(|| format!("{}: sm_key", path.display()))?,
            m_key: key(&m.m_key).with_context(|| format!("{}: m_key", path.display()))?,
        });
    }
    if specs.is_empty() {
        specs.push(SmSpec {
            node: None,
            port: 1,
            priority: 0,
            ..SmSpec::default()
        });
    }
    let (mut net, mut sms, summary) = bring_up_sms(&sc.topology, &opts, &specs)?;
    let mut r = String::new();
    let _ = write!(r, "bring-up:\n{}", summary.text());
    let start = net.cycle;
    let mut next_index = sms.len() as u32;
    let mut events = sc.event.clone();
    events.sort_by_key(|e| e.after);
    for e in &events {
        let at = start + e.after;
        if at > net.cycle {
            let n = at - net.cycle;
            run_for(&mut net, &mut sms, n)?;
        }
        // An event the fabric refuses is a mistake in the file.
        let bad =
            |msg: String| InputError(format!("{}: event at +{}: {msg}", path.display(), e.after));
        if let Some(line) = &e.console {
            let out = net.console(line).map_err(|err| bad(format!("{err:#}")))?;
            let _ = write!(r, "+{} {line}: {out}", e.after);
        }
        if let Some(node) = &e.kill_sm {
            let Some(i) = sms.iter().position(|s| &s.name == node) else {
                return Err(bad(format!("no SM on {node:?}")).into());
            };
            // Its QP goes with it: the CA's receive WQEs are withdrawn, so
            // MADs for the SM there are dropped and counted from now on.
            let sm = sms.remove(i);
            net.detach_sm(sm.dev)?;
            let _ = writeln!(r, "+{} SM on {node} ({:?}) killed", e.after, sm.state);
        }
        if let Some(node) = &e.start_sm {
            let spec = SmSpec {
                node: Some(node.clone()),
                port: e.port.unwrap_or(1),
                priority: e.priority.unwrap_or(0),
                ..SmSpec::default()
            };
            let sm = start_sm(&mut net, &sc.topology, &opts, &spec, next_index)
                .map_err(|err| bad(format!("{err:#}")))?;
            next_index += 1;
            sms.push(sm);
            let _ = writeln!(
                r,
                "+{} SM on {node} started (priority {})",
                e.after, spec.priority
            );
        }
    }
    if !sms.is_empty() {
        run_until_settled(&mut net, &mut sms, opts.max_cycles)?;
    }
    let (linked, active) = port_counts(&net);
    let masters: Vec<&SubnetManager> = sms.iter().filter(|s| s.state == SmState::Master).collect();
    let others_ok = sms.iter().all(|s| {
        matches!(
            s.state,
            SmState::Master | SmState::Standby | SmState::NotActive
        )
    });
    let mut ok = active == linked && others_ok && (sms.is_empty() || masters.len() == 1);
    let _ = writeln!(
        r,
        "end (cycle {}): ports Active {active} of {linked} linked",
        net.cycle - start
    );
    for s in &sms {
        let _ = writeln!(
            r,
            "  SM {} priority {}: {:?}{}, heavy sweeps {}, light sweeps {}, traps {}, polls {} ({} answered), handovers sent {} taken {}",
            s.name,
            s.opts.priority,
            s.state,
            s.following
                .as_ref()
                .filter(|_| s.state == SmState::Standby)
                .map_or(String::new(), |f| format!(" following {:#x}", f.info.guid)),
            s.stats.heavy_sweeps,
            s.stats.light_sweeps,
            s.stats.traps,
            s.stats.polls,
            s.stats.polls_answered,
            s.stats.handovers_sent,
            s.stats.handovers_taken
        );
    }
    if let [m] = masters[..] {
        let lid = m.lid();
        let dump = dump_state(&mut net)?;
        let wrong: Vec<String> = dump
            .nodes
            .iter()
            .flat_map(|n| {
                n.ports
                    .iter()
                    .filter(|p| p.master_sm_lid.is_some_and(|l| l != lid))
                    .filter(|p| p.state == PortState::Active)
                    .map(move |p| format!("{}[{}]", n.id, p.port))
            })
            .collect();
        let _ = writeln!(
            r,
            "  master {} LID {lid}; Active LID ports with another MasterSMLID: {}",
            m.name,
            if wrong.is_empty() {
                "none".to_string()
            } else {
                wrong.join(" ")
            }
        );
        ok &= wrong.is_empty();
    } else if !sms.is_empty() {
        let _ = writeln!(r, "  {} Masters among the live SMs", masters.len());
    }
    Ok(Outcome {
        report: r,
        pass: ok,
        net,
        sms,
    })
}
