//! A set of RTL ports joined by links, with the agents that sit on each
//! port's host side (an SMA and an SM driver, any [`HostAgent`]s: the
//! one-port CA's are `crate::agents::sma::Sma` and `crate::agents::sm::PortSm`, joined
//! as `crate::agents::sm::Fabric`), advanced together one cycle at a time.

use std::collections::VecDeque;

use anyhow::{bail, Context, Result};

use crate::model::device::{CaPort, Counters, HostAgent};
use crate::model::regmap::reg;
use crate::model::stream::Beat;
use crate::proto::pcap::{port_name, Direction, TraceFile};

/// One packet on a wire, for traces: the cycle of its first beat, which
/// direction it travelled, and its bytes (LRH..VCRC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEntry {
    pub cycle: u64,
    pub dir: String,
    pub bytes: Vec<u8>,
}

/// A checker of one port (the reference model's scoreboard,
/// `crate::check::scoreboard`): it sees the port after every cycle, and gives its
/// verdict with the port's counters at the end.
pub trait PortChecker {
    /// The port has just stepped a cycle.
    fn on_cycle(&mut self, port: &mut CaPort);
    /// The fabric is idle: everything predicted must have happened, and
    /// `counters` (read from the RTL now) must be as predicted.
    fn verdict(&mut self, counters: &Counters) -> Result<()>;
    /// The checker itself, for its owner to read back (its statistics).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A node: one RTL port with an optional SMA and SM driver on its host side.
pub struct Node<A, D> {
    pub name: String,
    pub port: CaPort,
    pub sma: Option<A>,
    pub sm: Option<D>,
    /// The port's checker, when opted in ([`Fabric::add_checker`]).
    pub checker: Option<Box<dyn PortChecker>>,
    rx_cur: Vec<u8>,
    rx_first: u64,
    tx_cur: Vec<u8>,
    tx_first: u64,
    /// Trace labels: "name>peer" (or "name>tb" with no link) and "tb>name".
    tx_dir: String,
    rx_dir: String,
}

/// A one-way link from one node's TX to another node's RX.
struct Link {
    from: usize,
    to: usize,
    latency: u64,
    pipe: VecDeque<(u64, Beat)>,
}

pub struct Fabric<A, D> {
    pub nodes: Vec<Node<A, D>>,
    links: Vec<Link>,
    pub trace: Vec<TraceEntry>,
    /// Every packet on every port, as a pcapng trace ([`Fabric::log_wire`]),
    /// and what its interface names start with.
    wire_log: Option<TraceFile>,
    log_prefix: String,
    /// Cycles since the last beat moved anywhere.
    quiet: u64,
}

impl<A: HostAgent, D: HostAgent> Fabric<A, D> {
    pub fn new() -> Self {
        Fabric {
            nodes: Vec::new(),
            links: Vec::new(),
            trace: Vec::new(),
            wire_log: None,
            log_prefix: String::new(),
            quiet: 0,
        }
    }

    /// Write every packet every port receives or sends from now on into
    /// `log`, as it completes, on interface `<prefix><node>[<port>]`.
    pub fn log_wire(&mut self, log: TraceFile, prefix: &str) {
        self.wire_log = Some(log);
        self.log_prefix = prefix.to_string();
    }

    /// The wire log, once the run is over.
    pub fn take_wire_log(&mut self) -> Option<TraceFile> {
        self.wire_log.take()
    }

    /// Add a CA port; returns its index.
    pub fn add_node(&mut self, name: &str, port: CaPort, sma: Option<A>, sm: Option<D>) -> usize {
        self.nodes.push(Node {
            name: name.to_string(),
            port,
            sma,
            sm,
            checker: None,
            rx_cur: Vec::new(),
            rx_first: 0,
            tx_cur: Vec::new(),
            tx_first: 0,
            tx_dir: format!("{name}>tb"),
            rx_dir: format!("tb>{name}"),
        });
        self.nodes.len() - 1
    }

    /// Check node `n`'s port with `checker` from now on (its scoreboard:
    /// `crate::check::scoreboard::attach_to`); call before the port has done
    /// anything.
    pub fn add_checker(&mut self, n: usize, checker: Box<dyn PortChecker>) {
        self.nodes[n].checker = Some(checker);
    }

    /// Let the fabric go idle, then ask every node's checker for its
    /// verdict: nothing predicted left undelivered, no mismatch, every
    /// counter as predicted.
    pub fn check_scoreboards(&mut self, quiet: u64, max_cycles: u64) -> Result<()> {
        if self.nodes.iter().all(|n| n.checker.is_none()) {
            return Ok(());
        }
        self.run_until_idle(quiet, max_cycles)?;
        for n in 0..self.nodes.len() {
            if self.nodes[n].checker.is_none() {
                continue;
            }
            let c = self.counters(n)?;
            let node = &mut self.nodes[n];
            let name = node.name.clone();
            node.checker
                .as_mut()
                .expect("checked")
                .verdict(&c)
                .map_err(|e| e.context(format!("scoreboard of node {name}")))?;
        }
        Ok(())
    }

    /// A full-duplex link between `a` and `b`, `latency` cycles each way (≥ 1).
    pub fn connect(&mut self, a: usize, b: usize, latency: u64) {
        let latency = latency.max(1);
        for (from, to) in [(a, b), (b, a)] {
            self.nodes[from].tx_dir = format!("{}>{}", self.nodes[from].name, self.nodes[to].name);
            self.links.push(Link {
                from,
                to,
                latency,
                pipe: VecDeque::new(),
            });
        }
    }

    pub fn cycle(&self) -> u64 {
        self.nodes.first().map_or(0, |n| n.port.cycle)
    }

    /// Advance every node one cycle. `read` is an optional (node, address)
    /// register read performed in this cycle; its value is returned.
    pub fn step(&mut self, read: Option<(usize, u8)>) -> Result<u32> {
        let now = self.cycle();
        let mut value = 0;
        let mut moved = false;
        for n in 0..self.nodes.len() {
            // A beat due from a link into this node, if any.
            let mut link_beat = None;
            for l in self.links.iter_mut().filter(|l| l.to == n) {
                if l.pipe.front().is_some_and(|(due, _)| *due <= now) {
                    link_beat = l.pipe.pop_front().map(|(_, b)| b);
                }
            }
            let addr = match read {
                Some((rn, a)) if rn == n => a,
                _ => reg::ID,
            };
            let node = &mut self.nodes[n];
            let v = node.port.step(link_beat, addr)?;
            if let Some(c) = node.checker.as_mut() {
                c.on_cycle(&mut node.port);
            }
            if read.is_some_and(|(rn, _)| rn == n) {
                value = v;
            }
            if let Some((b, injected)) = node.port.rx_beat {
                moved = true;
                if node.rx_cur.is_empty() {
                    node.rx_first = now;
                }
                node.rx_cur.extend(b.bytes());
                if b.last {
                    let bytes = std::mem::take(&mut node.rx_cur);
                    if let Some(log) = self.wire_log.as_mut() {
                        let name = port_name(
                            &format!("{}{}", self.log_prefix, node.name),
                            node.port.port_num(),
                        );
                        log.packet(&name, Direction::Inbound, node.rx_first, &bytes)
                            .context("the --pcap trace")?;
                    }
                    if injected {
                        // Injected by the testbench: trace it as "tb>name".
                        self.trace.push(TraceEntry {
                            cycle: node.rx_first,
                            dir: node.rx_dir.clone(),
                            bytes,
                        });
                    }
                }
            }
            if let Some(b) = node.port.tx_beat {
                moved = true;
                if node.tx_cur.is_empty() {
                    node.tx_first = now;
                }
                node.tx_cur.extend(b.bytes());
                if b.last {
                    let bytes = std::mem::take(&mut node.tx_cur);
                    if let Some(log) = self.wire_log.as_mut() {
                        let name = port_name(
                            &format!("{}{}", self.log_prefix, node.name),
                            node.port.port_num(),
                        );
                        log.packet(&name, Direction::Outbound, node.tx_first, &bytes)
                            .context("the --pcap trace")?;
                    }
                    self.trace.push(TraceEntry {
                        cycle: node.tx_first,
                        dir: node.tx_dir.clone(),
                        bytes,
                    });
                }
                for l in self.links.iter_mut().filter(|l| l.from == n) {
                    l.pipe.push_back((now + l.latency, b));
                }
            }
            let node = &mut self.nodes[n];
            if let Some(sma) = node.sma.as_mut() {
                moved |= sma.service(&mut node.port, now)?;
            }
            if let Some(sm) = node.sm.as_mut() {
                moved |= sm.service(&mut node.port, now)?;
            }
        }
        self.quiet = if moved { 0 } else { self.quiet + 1 };
        Ok(value)
    }

    /// Whether anything is still queued on the testbench side.
    fn tb_busy(&self) -> bool {
        self.links.iter().any(|l| !l.pipe.is_empty())
            || self.nodes.iter().any(|n| {
                !n.port.sources_idle()
                    || n.sma.as_ref().is_some_and(|s| s.busy())
                    || n.sm.as_ref().is_some_and(|s| s.busy())
            })
    }

    /// Run until the testbench has nothing queued and no beat has moved for
    /// `quiet` cycles (longer than any path through the RTL), or fail after
    /// `max_cycles`.
    pub fn run_until_idle(&mut self, quiet: u64, max_cycles: u64) -> Result<u64> {
        let start = self.cycle();
        self.quiet = 0;
        loop {
            self.step(None)?;
            if !self.tb_busy() && self.quiet >= quiet {
                return Ok(self.cycle() - start);
            }
            if self.cycle() - start > max_cycles {
                bail!(
                    "fabric not idle after {max_cycles} cycles (lockup?) at cycle {}",
                    self.cycle()
                );
            }
        }
    }

    /// Run exactly `n` cycles.
    pub fn run(&mut self, n: u64) -> Result<()> {
        for _ in 0..n {
            self.step(None)?;
        }
        Ok(())
    }

    /// Read one register of node `n` (takes one cycle of the whole fabric).
    pub fn read_reg(&mut self, n: usize, addr: u8) -> Result<u32> {
        // Let queued writes of this node reach the RTL first.
        while self.nodes[n].port.reg_writes_pending() {
            self.step(None)?;
        }
        self.step(Some((n, addr)))
    }

    /// Every counter of node `n`.
    pub fn counters(&mut self, n: usize) -> Result<Counters> {
        let mut v = Vec::new();
        for (i, name) in reg::COUNTERS.iter().enumerate() {
            v.push((*name, self.read_reg(n, reg::CTR_BASE + i as u8)?));
        }
        Ok(Counters(v))
    }
}

impl<A: HostAgent, D: HostAgent> Default for Fabric<A, D> {
    fn default() -> Self {
        Self::new()
    }
}
