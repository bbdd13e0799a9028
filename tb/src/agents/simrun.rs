//! `vl15 sim`: build the RTL fabric of a topology file, bring it up with the
//! built-in SM ([`crate::agents::subnet_sm`]), print a summary, and dump what the
//! devices hold (read from the RTL registers, not from the SM's notes) so the
//! routes can be checked by anyone.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::agents::node_sma::Net;
use crate::agents::subnet_sm::{run_until_settled_with, SmOptions, SmState, SubnetManager};
use crate::model::net::NetOptions;
use crate::model::regmap::reg;
use crate::model::regmap::{mpreg, swreg};
use crate::proto::state::{Guid, Neighbour, NodeDump, PortDump, PortState, StateDump};
use crate::proto::topology::{NodeKind, Topology};
use crate::proto::InputError;

/// What `vl15 sim` was asked to do.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Node id of the CA the SM runs on (default: the file's first CA).
    pub sm_node: Option<String>,
    pub sm_port: u8,
    pub sm: SmOptions,
    pub net: NetOptions,
    /// Give up if bring-up takes longer (simulated cycles).
    pub max_cycles: u64,
    /// Shows SMPs sent and ports Active (a hidden bar draws nothing).
    pub progress: Option<indicatif::ProgressBar>,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            sm_node: None,
            sm_port: 1,
            sm: SmOptions::default(),
            net: NetOptions::default(),
            max_cycles: 500_000_000,
            progress: None,
        }
    }
}

/// The numbers `vl15 sim` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub nodes: usize,
    pub switches: usize,
    pub cas: usize,
    /// Port ends with a cable, and how many of them are Active in the RTL.
    pub linked_ports: usize,
    pub active_ports: usize,
    pub lids: usize,
    pub smps_sent: u64,
    pub smps_local: u64,
    pub retries: u64,
    pub timeouts: u64,
    pub sm_errors: u64,
    pub lft_blocks_set: u64,
    /// SMPs the RTL dropped at full VL15 buffers (its counters).
    pub vl15_dropped: u64,
    pub cycles: u64,
    pub device_evaluations: u64,
    pub build_s: f64,
    pub bring_up_s: f64,
    /// With several SMs: each one's node, priority and SMState.
    pub sms: Vec<String>,
}

impl Summary {
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "nodes {} ({} switches, {} CAs); ports Active {} of {} linked; LIDs {}",
            self.nodes, self.switches, self.cas, self.active_ports, self.linked_ports, self.lids
        );
        let _ = writeln!(
            s,
            "SMPs {} on the wire + {} local, {} retries, {} timeouts, {} SM errors, {} LFT blocks set, {} VL15 drops in the RTL",
            self.smps_sent,
            self.smps_local,
            self.retries,
            self.timeouts,
            self.sm_errors,
            self.lft_blocks_set,
            self.vl15_dropped
        );
        let _ = writeln!(
            s,
            "simulated cycles {} ({} device evaluations); wall: build {:.2} s, bring-up {:.2} s",
            self.cycles, self.device_evaluations, self.build_s, self.bring_up_s
        );
        if self.sms.len() > 1 {
            let _ = writeln!(s, "SMs: {}", self.sms.join(", "));
        }
        s
    }
}

/// Where one SM runs, its priority, and its keys.
#[derive(Debug, Clone, Default)]
pub struct SmSpec {
    /// Node id of the CA (None: the file's first CA).
    pub node: Option<String>,
    pub port: u8,
    pub priority: u8,
    /// SMInfo.SM_Key (None: `opts.sm.sm_key`).
    pub sm_key: Option<u64>,
    /// The M_Key this SM uses and sets (None: `opts.sm.tx.m_key`).
    pub m_key: Option<u64>,
}

/// An M_Key or SM_Key from the command line or a scenario file: decimal or
/// 0x-prefixed hexadecimal, 64 bits.
pub fn parse_key(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse::<u64>(),
    };
    r.map_err(|e| format!("key {s:?}: {e}"))
}

/// Build the fabric of `topology` and bring it up with one SM.
pub fn bring_up(topology: &Path, opts: &SimOptions) -> Result<(Net, SubnetManager, Summary)> {
    let spec = SmSpec {
        node: opts.sm_node.clone(),
        port: opts.sm_port,
        priority: opts.sm.priority,
        ..SmSpec::default()
    };
    let (net, mut sms, summary) = bring_up_sms(topology, opts, &[spec])?;
    Ok((net, sms.remove(0), summary))
}

/// Start SM `index` as `spec` says (options from `opts.sm`).
pub fn start_sm(
    net: &mut Net,
    topology: &Path,
    opts: &SimOptions,
    spec: &SmSpec,
    index: u32,
) -> Result<SubnetManager> {
    let d = net.sm_device(spec.node.as_deref(), topology)?;
    if net.devs[d].sm.is_some() {
        return Err(InputError(format!("{}: an SM runs there already", net.devs[d].name)).into());
    }
    // The port must exist and have a cable in the file: an SM on any other
    // port reaches nothing and the bring-up could only fail.
    let n = &net.topo.nodes[net.devs[d].node];
    let (at, p) = (net.topo.at(n.origin), spec.port);
    if p == 0 || p > n.nports {
        return Err(InputError(format!(
            "{at}: {:?} has ports 1 to {}; no port {p} to run the SM on",
            n.id, n.nports
        ))
        .into());
    }
    if net.topo.remote(net.devs[d].node, p).is_none() {
        return Err(InputError(format!(
            "{at}: port {p} of {:?} has no cable, so an SM there reaches nothing; \
             run it on a cabled port",
            n.id
        ))
        .into());
    }
    let mut o = opts.sm;
    o.priority = spec.priority;
    if let Some(k) = spec.sm_key {
        o.sm_key = k;
    }
    if let Some(k) = spec.m_key {
        o.tx.m_key = k;
    }
    SubnetManager::new(net, d, spec.port, index, o)
}

/// How often the bring-up's progress line is redrawn.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// Build the fabric of `topology`, start the SMs of `specs` (all at cycle
/// 0) and run until they have settled: one of them Master, the others
/// Standby.
pub fn bring_up_sms(
    topology: &Path,
    opts: &SimOptions,
    specs: &[SmSpec],
) -> Result<(Net, Vec<SubnetManager>, Summary)> {
    let t0 = Instant::now();
    let topo = Topology::load(topology)?;
    let mut net = Net::new(topo, opts.net.clone())?;
    let build_s = t0.elapsed().as_secs_f64();
    let mut sms = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        sms.push(start_sm(&mut net, topology, opts, spec, i as u32)?);
    }
    let c0 = net.cycle;
    let k0 = net.stats.ticks;
    let t1 = Instant::now();
    let mut steps = 0u64;
    let mut shown = t1;
    let mut watch = |net: &Net, sms: &[SubnetManager]| {
        steps += 1;
        let Some(p) = &opts.progress else { return };
        // Counting ports walks every device: at most a few times a second.
        if steps % 256 != 0 || shown.elapsed() < PROGRESS_EVERY {
            return;
        }
        shown = Instant::now();
        let (linked, active) = port_counts(net);
        let sent: u64 = sms.iter().map(|m| m.tx_stats().sent).sum();
        p.set_message(format!(
            "{sent} SMPs, ports Active {active} of {linked}, cycle {}",
            net.cycle
        ));
    };
    run_until_settled_with(&mut net, &mut sms, opts.max_cycles, &mut watch).context("bring-up")?;
    let bring_up_s = t1.elapsed().as_secs_f64();
    let mut summary = summarize(&mut net, &sms)?;
    summary.cycles = net.cycle - c0;
    summary.device_evaluations = net.stats.ticks - k0;
    summary.build_s = build_s;
    summary.bring_up_s = bring_up_s;
    Ok((net, sms, summary))
}

/// The master among `sms` (the first SM when none is Master).
pub fn master(sms: &[SubnetManager]) -> Option<&SubnetManager> {
    sms.iter()
        .find(|s| s.state == SmState::Master)
        .or(sms.first())
}

/// The fabric's counts and the SMs' counters (SMPs summed over the SMs;
/// LIDs and LFT blocks as the master has them). Cycles and times are left 0.
pub fn summarize(net: &mut Net, sms: &[SubnetManager]) -> Result<Summary> {
    let (linked, active) = port_counts(net);
    let mut s = Summary {
        nodes: net.devs.len(),
        switches: net.devs.iter().filter(|d| d.is_switch).count(),
        cas: net.devs.iter().filter(|d| !d.is_switch).count(),
        linked_ports: linked,
        active_ports: active,
        lids: master(sms).map_or(0, |m| m.subnet.lids().len()),
        smps_sent: 0,
        smps_local: 0,
        retries: 0,
        timeouts: 0,
        sm_errors: 0,
        lft_blocks_set: master(sms).map_or(0, |m| m.stats.lft_blocks_set),
        vl15_dropped: net.vl15_dropped()?,
        cycles: 0,
        device_evaluations: 0,
        build_s: 0.0,
        bring_up_s: 0.0,
        sms: sms
            .iter()
            .map(|m| format!("{} {:?} (priority {})", m.name, m.state, m.opts.priority))
            .collect(),
    };
    for m in sms {
        let tx = m.tx_stats();
        s.smps_sent += tx.sent;
        s.smps_local += tx.local;
        s.retries += tx.retries;
        s.timeouts += tx.timeouts;
        s.sm_errors += m.stats.errors;
    }
    Ok(s)
}

/// (port ends with an up cable, of which Active in the RTL).
pub fn port_counts(net: &Net) -> (usize, usize) {
    let mut linked = 0;
    let mut active = 0;
    for (d, dev) in net.devs.iter().enumerate() {
        for p in 1..=dev.nports {
            if net.link_at(d, p).is_some_and(|l| net.links[l].up) {
                linked += 1;
                if dev.port_state(p) == 4 {
                    active += 1;
                }
            }
        }
    }
    (linked, active)
}

/// Read every node's state from its RTL registers (LIDs, LMC, PortState,
/// LinearFDBTop, LFT) plus GUIDs, descriptions and cables: the state file
/// of [`crate::proto::state`].
pub fn dump_state(net: &mut Net) -> Result<StateDump> {
    let mut nodes = Vec::with_capacity(net.devs.len());
    for d in 0..net.devs.len() {
        let (is_switch, nports, name) = {
            let dev = &net.devs[d];
            (dev.is_switch, dev.nports, dev.name.clone())
        };
        let id = net.devs[d].agent().identity().clone();
        let mut ports = Vec::new();
        let first = if is_switch { 0 } else { 1 };
        for p in first..=nports {
            let (lid, lmc, sm_lid) = if is_switch && p == 0 {
                (
                    Some(net.read_reg(d, swreg::PORT0_LID)? as u16),
                    Some(0),
                    Some(net.read_reg(d, swreg::MASTER_SM_LID)? as u16),
                )
            } else if !is_switch {
                (
                    Some(net.read_reg(d, mpreg::port(p, reg::PORT_LID))? as u16),
                    Some(net.read_reg(d, mpreg::port(p, reg::PORT_LMC))? as u8),
                    Some(net.read_reg(d, mpreg::port(p, reg::MASTER_SM_LID))? as u16),
                )
            } else {
                (None, None, None)
            };
            let neighbour = net.link_at(d, p).and_then(|l| {
                let link = &net.links[l];
                if !link.up {
                    return None;
                }
                let (od, op) = if link.ends[0] == (d, p) {
                    link.ends[1]
                } else {
                    link.ends[0]
                };
                Some(Neighbour {
                    guid: Guid(net.devs[od].agent().identity().port_guid(op)),
                    port: op,
                })
            });
            ports.push(PortDump {
                port: p,
                guid: Guid(id.port_guid(p)),
                lid,
                lmc,
                master_sm_lid: sm_lid,
                state: PortState::from(net.devs[d].port_state(p)),
                neighbour,
            });
        }
        let (top, lft) = if is_switch {
            let top = net.read_reg(d, swreg::LINEAR_FDB_TOP)? as u16;
            let mut lft = Vec::with_capacity(usize::from(top) + 1);
            for w in 0..=(top / 4) {
                let v = net.read_reg(d, swreg::LFT_BASE + w)?;
                lft.extend_from_slice(&v.to_le_bytes());
            }
            lft.truncate(usize::from(top) + 1);
            (Some(top), Some(lft))
        } else {
            (None, None)
        };
        nodes.push(NodeDump {
            id: name,
            guid: Guid(id.node_guid),
            description: id.description.text(),
            kind: if is_switch {
                NodeKind::Switch
            } else {
                NodeKind::Ca
            },
            ports,
            linear_fdb_top: top,
            lft,
        });
    }
    Ok(StateDump { nodes })
}
