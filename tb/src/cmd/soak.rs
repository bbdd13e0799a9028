//! `vl15 soak`.

use anyhow::{Context, Result};
use clap::{Args as ClapArgs, ValueEnum};

use vl15::model::device::CaPortModel;

use super::{model_widths, usage};

/// Devices `vl15 soak` can run.
#[derive(Clone, Copy, ValueEnum)]
pub enum Device {
    /// One CA port, ib_ca_top, at each --width
    Ca,
    /// The multiport CA, ib_ca_mp_top, one port at a time (--port, or
    /// each of its --ports in turn) against the same reference model and
    /// scoreboard as the CA port, at DATA_W 64 and 128
    CaMp,
    /// The switch (its tiles, as the fabric runs it; 8 ports unless --ports)
    /// at DATA_W 64 and 128
    Switch,
}

#[derive(ClapArgs)]
pub struct Args {
    /// The device under test
    #[arg(long, value_enum, default_value = "ca")]
    device: Device,
    /// Data path width in bits: 32, 64, 128, or all (the switch: 64,
    /// 128 or all)
    #[arg(long, default_value = "all")]
    width: String,
    /// Packets handed to the device per width
    #[arg(long, default_value_t = 1_000_000)]
    packets: u64,
    /// Seed of the generator and of every stream pattern
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Percent of packets that are faults
    #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u32).range(0..=100))]
    fault_percent: u32,
    /// Only these fault classes (repeatable; default all); see --list
    #[arg(long)]
    class: Vec<String>,
    /// List the fault classes with their expected disposition, then exit
    #[arg(long)]
    list: bool,
    /// Drain and check the counters every this many packets
    #[arg(long, default_value_t = 2000)]
    checkpoint: u64,
    /// External ports of the device: the switch 8 to 64 (default 8; ports
    /// 1 to N-2 Active, N-1 Init, N Down, the LFT and the traffic spread
    /// over all of them); the multiport CA 1 or 2 (default 2)
    #[arg(long, value_name = "N")]
    ports: Option<u32>,
    /// The multiport CA's port under test (default: each port in turn)
    #[arg(long, value_name = "P")]
    port: Option<u32>,
    /// What the device's outputs are checked against besides the
    /// reference model: nothing more (rtl), or its twin stepped beside
    /// the RTL with the same inputs (twin), every output compared in every
    /// cycle; the first cycle they differ in fails the soak
    #[arg(long, value_enum, default_value = "rtl")]
    against: Against,
    #[command(flatten)]
    pcap: super::CaptureArgs,
}

/// `--against`.
#[derive(Clone, Copy, ValueEnum)]
pub enum Against {
    /// The RTL against the reference model alone
    Rtl,
    /// The RTL and its twin in lockstep, as well
    Twin,
}

impl Against {
    fn fidelity(self) -> vl15::model::twin::Fidelity {
        match self {
            Against::Rtl => vl15::model::twin::Fidelity::Rtl,
            Against::Twin => vl15::model::twin::Fidelity::Lockstep,
        }
    }
}

impl Args {
    pub fn run(self) -> Result<bool> {
        self.check_ports();
        if !self.list {
            let mut log = self.pcap.trace_file()?;
            let mut waves = self.pcap.waves()?;
            let pass = match self.device {
                Device::Ca | Device::CaMp => self.soak_ca(&mut log, waves.as_mut()),
                Device::Switch => self.soak_switch(&mut log, waves.as_mut()),
            }?;
            super::pcap_done(log);
            super::waves_done(waves.as_ref());
            return Ok(pass);
        }
        match self.device {
            Device::Ca | Device::CaMp => {
                outln!("fault classes (--class NAME; default all): what the class sends, and what the port must do");
                for c in vl15::check::faults::FaultClass::ALL {
                    outln!("{:<28} {}; {}", c.name(), c.meaning(), c.outcome());
                }
            }
            Device::Switch => {
                use vl15::check::refmodel::switch::FaultClass;
                outln!("packet classes of the switch soak (it runs them all; --class is for --device ca and ca-mp)");
                for c in FaultClass::GOOD.iter().chain(&FaultClass::FAULTS) {
                    let kind = if c.is_good() { "good" } else { "fault" };
                    outln!("{:<28} {kind}: {}", c.name(), c.meaning());
                }
            }
        }
        Ok(true)
    }
}

/// Ports of the multiport CA unless `--ports` says otherwise.
const CA_MP_PORTS: u32 = 2;

impl Args {
    /// `--ports` and `--port` against the device they are given for.
    fn check_ports(&self) {
        match (self.device, self.ports, self.port) {
            (Device::Ca, Some(_), _) | (Device::Ca, _, Some(_)) => usage(
                "--ports and --port choose the switch's or the multiport CA's ports; the CA has one port",
            ),
            (Device::Switch, _, Some(_)) => {
                usage("--port picks the multiport CA's port under test (--device ca-mp)")
            }
            (Device::Switch, Some(n), _) if !(8..=64).contains(&n) => {
                usage(&format!("--ports {n}: the switch soak runs 8 to 64 ports"))
            }
            (Device::CaMp, Some(n), _) if !(1..=2).contains(&n) => usage(&format!(
                "--ports {n}: the multiport CA is built with 1 or 2 ports"
            )),
            (Device::CaMp, n, Some(p)) if p == 0 || p > n.unwrap_or(CA_MP_PORTS) => {
                let n = n.unwrap_or(CA_MP_PORTS);
                usage(&format!("--port {p}: the {n}-port CA has ports 1 to {n}"))
            }
            _ => {}
        }
    }

    /// `vl15 soak --device switch`: the switch's own generator and scoreboard
    /// (`refmodel::switch`), which has its own classes, at DATA_W 64 and 128,
    /// with `--ports` external ports (default 8).
    fn soak_switch(
        &self,
        log: &mut Option<vl15::proto::pcap::TraceFile>,
        mut waves: Option<&mut vl15::model::trace::Waves>,
    ) -> Result<bool> {
        use vl15::check::refmodel::switch;
        let (width, packets, seed) = (self.width.as_str(), self.packets, self.seed);
        let ws: Vec<u32> = match width {
            "all" => vl15_bindings::DEV_DATA_WIDTHS.to_vec(),
            "64" | "128" => vec![width.parse()?],
            _ => usage(&format!(
                "--width {width}: the switch is built at DATA_W 64 and 128 (--width 64, 128 or all)"
            )),
        };
        if !self.class.is_empty() {
            usage("--class selects CA fault classes; the switch soak runs every switch class");
        }
        let nports = self.ports.unwrap_or(u32::from(switch::NPORTS));
        let mut pass = true;
        for w in ws {
            let opt = switch::SoakOptions {
                phase_packets: self.checkpoint.max(1),
                fault_percent: self.fault_percent,
                data_w: w,
                fidelity: self.against.fidelity(),
                progress: Some(super::progress(
                    Some(packets),
                    &format!("soak switch {nports} ports DATA_W {w}"),
                )),
                ..switch::SoakOptions::with_ports(nports)
            };
            let r = switch::soak_logged(seed, packets, &opt, log, waves.as_deref_mut());
            if let Some(p) = &opt.progress {
                p.finish_and_clear();
            }
            let r = r.with_context(|| format!("switch soak, {nports} ports at DATA_W {w}"))?;
            out!("{r}");
            self.say_lockstep(r.cycles, r.twin_calm);
            pass &= r.mismatches == 0;
        }
        Ok(pass)
    }

    /// With `--against twin`, what the soak's passing means besides the
    /// reference model's verdicts.
    fn say_lockstep(&self, cycles: u64, calm: Option<u64>) {
        if let Against::Twin = self.against {
            let calm = calm.unwrap_or(0);
            outln!("  twin in lockstep: compared with the RTL in each of the {cycles} cycles, no output differed; it was calm (asleep, as in a fabric) in {calm} of them");
        }
    }

    /// The CA port models `--device ca` / `ca-mp` runs, with their names
    /// in the summary.
    fn ca_models(&self) -> Vec<(String, CaPortModel)> {
        // Ranges checked by `check_ports`.
        let n = self.ports.unwrap_or(CA_MP_PORTS) as u8;
        match self.device {
            Device::CaMp => {
                let ports: Vec<u8> = match self.port {
                    Some(p) => vec![p as u8],
                    None => (1..=n).collect(),
                };
                ports
                    .into_iter()
                    .map(|port| {
                        let m = CaPortModel::Mp { nports: n, port };
                        (format!("ca-mp port {port} of {n}"), m)
                    })
                    .collect()
            }
            _ => vec![("ca".to_string(), CaPortModel::Top)],
        }
    }

    /// `vl15 soak --device ca|ca-mp`: the CA port's generator and
    /// scoreboard (`faults`, `scoreboard`) at each width.
    fn soak_ca(
        &self,
        log: &mut Option<vl15::proto::pcap::TraceFile>,
        mut waves: Option<&mut vl15::model::trace::Waves>,
    ) -> Result<bool> {
        use vl15::check::faults::FaultClass;
        let classes = self
            .class
            .iter()
            .map(|n| {
                FaultClass::from_name(n).unwrap_or_else(|| {
                    usage(&format!(
                        "--class {n}: no such fault class (vl15 soak --list names them)"
                    ))
                })
            })
            .collect::<Vec<_>>();
        let mut pass = true;
        for (name, model) in self.ca_models() {
            for w in model_widths(&self.width, &name, model)? {
                pass &= self.soak_ca_once(&name, model, w, &classes, log, waves.as_deref_mut())?;
            }
        }
        Ok(pass)
    }

    /// One CA soak run and its summary.
    fn soak_ca_once(
        &self,
        name: &str,
        model: CaPortModel,
        w: u32,
        classes: &[vl15::check::faults::FaultClass],
        log: &mut Option<vl15::proto::pcap::TraceFile>,
        waves: Option<&mut vl15::model::trace::Waves>,
    ) -> Result<bool> {
        use vl15::check::faults;
        let (packets, seed) = (self.packets, self.seed);
        let mut o = faults::SoakOpts::new(w, packets, seed);
        o.model = model;
        o.fault_percent = self.fault_percent;
        o.classes = classes.to_vec();
        o.checkpoint = self.checkpoint.max(1);
        o.fidelity = self.against.fidelity();
        let bar = super::progress(Some(packets), &format!("soak {name} DATA_W {w}"));
        o.progress = Some(bar.clone());
        let r = faults::soak_logged(&o, log, waves);
        bar.finish_and_clear();
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                outln!("soak {name} DATA_W {w}: FAIL: {e:#}");
                return Ok(false);
            }
        };
        let faulted: u64 = r.faults.values().sum();
        outln!(
            "soak {name} DATA_W {w} seed {seed}: {} packets ({} good, {faulted} faults), {} mismatches, max drain {} cycles (bound {}), {} cycles, {:.1} s wall ({:.0} cycles/s)",
            r.packets,
            r.good,
            r.mismatches,
            r.max_drain,
            r.drain_bound,
            r.cycles,
            r.wall_s,
            r.cycles as f64 / r.wall_s.max(1e-9)
        );
        self.say_lockstep(r.cycles, r.twin_calm);
        let s = &r.stats;
        outln!(
            "  delivered: {} to SMA, {} to SM, {} to data RX, {} on the wire; VL15 buffer full for the whole arrival {}, full or not depending on the cycle {}; {} wire packets lost to link down, {} expectations to resets",
            s.to_sma, s.to_sm, s.to_drx, s.wire_tx, s.certain_full, s.ambiguous_full, s.tx_gated, s.lost_to_reset
        );
        outln!("  faults by class:");
        for (k, v) in &r.faults {
            outln!("    {k:<28} {v}");
        }
        outln!("  receive verdicts (the check that rejected, or accept):");
        for (k, v) in &s.by_verdict {
            outln!("    {k:<28} {v}");
        }
        for e in &r.errors {
            outln!("  MISMATCH {e}");
        }
        Ok(r.mismatches == 0)
    }
}
