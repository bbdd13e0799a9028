//! One CA port on a bench: the port's drivers ([`CaPort`]) with the agents
//! on its host side (an SMA and an SM driver, any [`HostAgent`]s: the
//! one-port CA's are `crate::agents::sma::Sma` and
//! `crate::agents::sm::PortSm`) and an optional checker, as the [`Driver`]
//! of a device of a [`Net`]. Such ports joined by links are the spine
//! regression's fabric; one alone, with its wire driven by the testbench,
//! is the CA soak's bench. The net clocks them like any other device.

use std::any::Any;

use anyhow::Result;
use vl15_bindings::dev::{DevIn, DevOut, PortIn, PortOut};

use crate::model::device::{CaPort, CaPortModel, Counters, HostAgent};
use crate::model::net::{Driver, Net};
use crate::model::node_hw::NodeAgent;
use crate::model::regmap::reg;
use crate::model::stream::Beat;
use crate::model::twin::Fidelity;

/// A checker of one port (the reference model's scoreboard,
/// `crate::check::scoreboard`): it sees the port after every cycle, and
/// gives its verdict with the port's counters at the end.
pub trait PortChecker: Send {
    /// The port has just stepped a cycle.
    fn on_cycle(&mut self, port: &mut CaPort);
    /// The bench is idle: everything predicted must have happened, and
    /// `counters` (read from the RTL now) must be as predicted.
    fn verdict(&mut self, counters: &Counters) -> Result<()>;
    /// The checker itself, for its owner to read back (its statistics).
    fn as_any(&self) -> &dyn Any;
}

/// A CA port with its SMA and SM driver, if any, and its checker, if any:
/// each cycle the port's drivers set the model's inputs; after the model's
/// cycle the checker sees the port, then the SMA and the SM are served.
pub struct PortBench<A, D> {
    pub port: CaPort,
    pub sma: Option<A>,
    pub sm: Option<D>,
    /// The port's checker, when opted in.
    pub checker: Option<Box<dyn PortChecker>>,
}

impl<A, D> PortBench<A, D> {
    pub fn new(port: CaPort, sma: Option<A>, sm: Option<D>) -> Self {
        PortBench {
            port,
            sma,
            sm,
            checker: None,
        }
    }
}

impl<A, D> Driver for PortBench<A, D>
where
    A: HostAgent + Send + 'static,
    D: HostAgent + Send + 'static,
{
    fn drive(&mut self, _now: u64, link_rx: &[Option<Beat>], d: &mut DevIn, pin: &mut [PortIn]) {
        let k = usize::from(self.port.port_num()) - 1;
        let rx = link_rx.get(k).copied().flatten();
        self.port.drive(rx, d, pin);
    }

    fn observe(&mut self, now: u64, o: &DevOut, pout: &[PortOut], next: u64) -> Result<bool> {
        self.port.observe(o, pout, next);
        if let Some(c) = self.checker.as_mut() {
            c.on_cycle(&mut self.port);
        }
        let mut moved = false;
        if let Some(sma) = self.sma.as_mut() {
            moved |= sma.service(&mut self.port, now)?;
        }
        if let Some(sm) = self.sm.as_mut() {
            moved |= sm.service(&mut self.port, now)?;
        }
        Ok(moved)
    }

    fn busy(&self) -> bool {
        !self.port.sources_idle()
            || self.sma.as_ref().is_some_and(|s| s.busy())
            || self.sm.as_ref().is_some_and(|s| s.busy())
    }

    fn ca_port(&self) -> Option<&CaPort> {
        Some(&self.port)
    }

    fn ca_port_mut(&mut self) -> Option<&mut CaPort> {
        Some(&mut self.port)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl<S: NodeAgent> Net<S> {
    /// Add a CA port of `model` at `data_w` (reset) named `name`, with its
    /// SMA and SM driver, to the net; returns its device index.
    pub fn add_port<A, D>(
        &mut self,
        name: &str,
        model: CaPortModel,
        data_w: u32,
        sma: Option<A>,
        sm: Option<D>,
    ) -> Result<usize>
    where
        A: HostAgent + Send + 'static,
        D: HostAgent + Send + 'static,
    {
        self.add_port_as(name, model, data_w, Fidelity::Rtl, sma, sm)
    }

    /// [`Net::add_port`] with the port's model chosen by `f`.
    pub fn add_port_as<A, D>(
        &mut self,
        name: &str,
        model: CaPortModel,
        data_w: u32,
        f: Fidelity,
        sma: Option<A>,
        sm: Option<D>,
    ) -> Result<usize>
    where
        A: HostAgent + Send + 'static,
        D: HostAgent + Send + 'static,
    {
        let (dut, port) = model.dut_as(data_w, f)?;
        let port = CaPort::on(dut.as_ref(), port)?;
        Ok(self.add_driven(name, dut, Box::new(PortBench::new(port, sma, sm))))
    }

    /// The port of device `d` when its driver is a CA port's.
    pub fn ca_port(&self, d: usize) -> Option<&CaPort> {
        self.driven(d)?.ca_port()
    }

    pub fn ca_port_mut(&mut self, d: usize) -> Option<&mut CaPort> {
        self.driven_mut(d)?.ca_port_mut()
    }

    /// Read register `addr` of the CA port of device `d` (after its
    /// queued writes): one cycle of the whole net.
    pub fn read_port_reg(&mut self, d: usize, addr: u8) -> Result<u32> {
        let what = || anyhow::anyhow!("device {d} is not a CA port on a bench");
        while self.ca_port(d).ok_or_else(what)?.reg_writes_pending() {
            self.step()?;
        }
        self.ca_port_mut(d).ok_or_else(what)?.read_next = Some(addr);
        self.step()?;
        Ok(self.ca_port(d).ok_or_else(what)?.reg_rdata)
    }

    /// Every counter of the CA port of device `d`.
    pub fn port_counters(&mut self, d: usize) -> Result<Counters> {
        let mut v = Vec::new();
        for (i, name) in reg::COUNTERS.iter().enumerate() {
            v.push((*name, self.read_port_reg(d, reg::CTR_BASE + i as u8)?));
        }
        Ok(Counters(v))
    }

    /// Check device `d`'s port with `checker` from now on (its scoreboard:
    /// `crate::check::scoreboard::attach_to`); call before the port has done
    /// anything. `d` must be a `PortBench<A, D>`.
    pub fn add_checker<A: 'static, D: 'static>(
        &mut self,
        d: usize,
        checker: Box<dyn PortChecker>,
    ) -> Result<()> {
        let b = self
            .driver_mut::<PortBench<A, D>>(d)
            .ok_or_else(|| anyhow::anyhow!("device {d} is not a CA port on a bench"))?;
        b.checker = Some(checker);
        Ok(())
    }

    /// Let the net go quiet, then ask every checker of a `PortBench<A, D>`
    /// for its verdict: nothing predicted left undelivered, no mismatch,
    /// every counter as predicted.
    pub fn check_scoreboards<A: 'static, D: 'static>(
        &mut self,
        quiet: u64,
        max_cycles: u64,
    ) -> Result<()> {
        let checked: Vec<usize> = (0..self.devs.len())
            .filter(|&d| {
                self.driver::<PortBench<A, D>>(d)
                    .is_some_and(|b| b.checker.is_some())
            })
            .collect();
        if checked.is_empty() {
            return Ok(());
        }
        self.run_until_quiet(quiet, max_cycles)?;
        for d in checked {
            let c = self.port_counters(d)?;
            let name = self.devs[d].name.clone();
            if let Some(checker) = self
                .driver_mut::<PortBench<A, D>>(d)
                .and_then(|b| b.checker.as_mut())
            {
                checker
                    .verdict(&c)
                    .map_err(|e| e.context(format!("scoreboard of node {name}")))?;
            }
        }
        Ok(())
    }
}
