//! The soak of the switch: phases of generated traffic with changing idle
//! and backpressure patterns, the directed classes between them.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::model::stream::{Pattern, Rng};
use crate::model::twin::Fidelity;
use crate::proto::pcap::TraceFile;

use super::*;

/// Options of [`soak`].
#[derive(Clone, Debug)]
pub struct SoakOptions {
    /// Packets per phase (a phase ends with a drain and a counter check).
    pub phase_packets: u64,
    /// Share of faulted packets, percent.
    pub fault_percent: u32,
    /// Drain bound (cycles after the last input beat).
    pub drain_bound: u64,
    /// Run the directed classes (overflow, link down, reset) between phases.
    pub directed: bool,
    /// DataW of the switch model (64 or 128).
    pub data_w: u32,
    /// External ports of the switch, 8..=64 ([`Radix`]). Set
    /// `drain_bound` with it ([`SoakOptions::with_ports`] does).
    pub nports: u32,
    /// Shows packets handed in and mismatches (a hidden bar draws nothing).
    pub progress: Option<indicatif::ProgressBar>,
    /// The switch's model: the RTL, or the RTL and its twin in lockstep.
    pub fidelity: Fidelity,
}

impl Default for SoakOptions {
    fn default() -> Self {
        SoakOptions {
            phase_packets: 1000,
            fault_percent: 30,
            drain_bound: DRAIN_BOUND,
            directed: true,
            data_w: 64,
            nports: u32::from(NPORTS),
            progress: None,
            fidelity: Fidelity::Rtl,
        }
    }
}

impl SoakOptions {
    /// The defaults for a switch of `nports`, the drain bound its radix's
    /// ([`drain_bound`]). The port count is checked when the soak starts.
    pub fn with_ports(nports: u32) -> Self {
        SoakOptions {
            nports,
            drain_bound: drain_bound(nports.clamp(1, 255) as u8),
            ..SoakOptions::default()
        }
    }
}

/// The drain bound of a switch of `nports`, worst case: every input buffer
/// full (each port's 3 VL15 slots of 288 bytes and 2 data slots of 4224,
/// and port 0's 2 of 288) leaving through one output at the storm
/// pattern's duty of 64 cycles in 664, in beats of 8 bytes (DataW 64; at
/// 128 it is half), rounded up to a multiple of 100,000 cycles. At 8 ports:
/// about 9,400 beats, under 98,000 cycles, bound [`DRAIN_BOUND`]; at 36:
/// about 42,000 beats, 436,000 cycles, bound 500,000; at 64: about 74,600
/// beats, 774,000 cycles, bound 800,000. A longer drain is a lockup.
pub fn drain_bound(nports: u8) -> u64 {
    let slot_bytes = (VL15_DEPTH * VL15_SLOT_BYTES + DATA_DEPTH * DATA_SLOT_BYTES) as u64;
    let bytes = u64::from(nports) * slot_bytes + 2 * VL15_SLOT_BYTES as u64;
    let cycles = bytes.div_ceil(8) * 664 / 64;
    cycles.div_ceil(100_000) * 100_000
}

/// [`drain_bound`] of the 8-port switch.
pub const DRAIN_BOUND: u64 = 100_000;

/// What a soak run found.
#[derive(Clone, Debug, Default)]
pub struct SwitchSoakReport {
    pub seed: u64,
    /// DataW of the switch model.
    pub data_w: u32,
    /// External ports of the switch.
    pub nports: u8,
    pub packets: u64,
    pub good: u64,
    /// Faulted packets (and directed events) by class.
    pub faults: BTreeMap<String, u64>,
    pub matched: u64,
    pub mismatches: u64,
    pub mismatch_log: Vec<String>,
    pub counters_checked: u64,
    pub max_drain_cycles: u64,
    pub drain_bound: u64,
    pub resets: u64,
    pub lost_to_reset: u64,
    /// Packets sent into an output whose link fell (none may appear).
    pub egress_swallowed: u64,
    /// Packets put on each input wire, by port.
    pub wire_in: BTreeMap<u8, u64>,
    /// Packets that left each output wire as predicted, by port.
    pub wire_out: BTreeMap<u8, u64>,
    pub cycles: u64,
    /// With the twin in lockstep: the cycles it was calm, not stepped.
    pub twin_calm: Option<u64>,
    pub wall: Duration,
}

impl std::fmt::Display for SwitchSoakReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "switch soak {} ports DATA_W {} seed {}: {} packets ({} good), {} delivered as predicted, {} mismatches",
            self.nports, self.data_w, self.seed, self.packets, self.good, self.matched, self.mismatches
        )?;
        let top = |m: &BTreeMap<u8, u64>| m.keys().next_back().copied().unwrap_or(0);
        writeln!(
            f,
            "wires: packets in on {} of {} ports (highest {}), out of {} (highest {})",
            self.wire_in.len(),
            self.nports,
            top(&self.wire_in),
            self.wire_out.len(),
            top(&self.wire_out)
        )?;
        writeln!(
            f,
            "cycles {}, wall {:.2} s, max drain {} cycles (bound {}), {} counters checked, {} resets ({} packets lost to them), {} sent into a falling link",
            self.cycles,
            self.wall.as_secs_f64(),
            self.max_drain_cycles,
            self.drain_bound,
            self.counters_checked,
            self.resets,
            self.lost_to_reset,
            self.egress_swallowed
        )?;
        for (k, v) in &self.faults {
            writeln!(f, "  {k:<20} {v}")?;
        }
        for m in &self.mismatch_log {
            writeln!(f, "  MISMATCH {m}")?;
        }
        Ok(())
    }
}

/// Phase `k`'s patterns for a switch of `nports`: line rate; idle beats on
/// the wires; random backpressure; storms (outputs stalled for long
/// stretches).
pub fn phase_patterns(k: u64, nports: u8, rng: &mut Rng) -> Patterns {
    let n = usize::from(nports);
    let seed = rng.next_u64();
    match k % 4 {
        0 => Patterns::line_rate(nports),
        1 => Patterns {
            rx: Pattern::Random { percent: 60, seed },
            tx: vec![Pattern::Always; n],
            host: Pattern::Always,
        },
        2 => Patterns {
            rx: Pattern::Always,
            tx: (0..n)
                .map(|i| Pattern::Random {
                    percent: 30 + 10 * (i as u32 % 5),
                    seed: seed + i as u64,
                })
                .collect(),
            host: Pattern::Random {
                percent: 50,
                seed: seed ^ 1,
            },
        },
        _ => Patterns {
            rx: Pattern::Always,
            tx: (0..n)
                .map(|i| {
                    if (seed >> i) & 1 == 1 {
                        Pattern::Periodic { on: 64, off: 600 }
                    } else {
                        Pattern::Random {
                            percent: 70,
                            seed: seed + i as u64,
                        }
                    }
                })
                .collect(),
            host: Pattern::Periodic { on: 40, off: 200 },
        },
    }
}

/// Soak the switch (`opt.nports` ports, 8..=64): `packets` generated packets (good and faulted,
/// back to back on all inputs) against the model, in phases of changing
/// idle/backpressure patterns, each ending with a drain and a check of
/// every counter; between phases the directed classes (VL15 overflow, link
/// down mid-packet, reset mid-traffic).
pub fn soak(seed: u64, packets: u64, opt: &SoakOptions) -> Result<SwitchSoakReport> {
    soak_logged(seed, packets, opt, &mut None, None)
}

/// [`soak`], writing every packet on the external ports' wires into `log`
/// when there is one, on interfaces `w<width>.switch[<port>]`.
pub fn soak_logged(
    seed: u64,
    packets: u64,
    opt: &SoakOptions,
    log: &mut Option<TraceFile>,
    waves: Option<&mut crate::model::trace::Waves>,
) -> Result<SwitchSoakReport> {
    let t0 = Instant::now();
    let mut b = Bench::with_fidelity(seed, opt.data_w, opt.nports, opt.fidelity)?;
    if let Some(w) = waves {
        w.open(&format!("w{}.switch", opt.data_w), b.dut())?;
    }
    if let Some(l) = log.take() {
        b.log_wire(l, &format!("w{}.", opt.data_w));
    }
    let nports = b.radix().nports();
    let mut rng = Rng::new(seed);
    let mut phase = 0u64;
    while b.tally.injected < packets {
        let k = opt.phase_packets.min(packets - b.tally.injected).max(1);
        let pat = phase_patterns(phase, nports, &mut rng);
        b.set_patterns(&pat);
        for _ in 0..k {
            let g = b.gen(&mut rng, opt.fault_percent);
            b.push(g);
        }
        if let Some(p) = &opt.progress {
            p.set_position(b.tally.injected);
            p.set_message(format!("{} mismatches", b.tally.mismatches));
        }
        let reset_now = opt.directed && phase % 8 == 7;
        if reset_now {
            let at = range(&mut rng, 50, 3000);
            b.reset_mid_traffic(&mut rng, at)?;
        } else {
            b.drain(opt.drain_bound)?;
            b.set_patterns(&Patterns::line_rate(nports));
            if opt.directed {
                match phase % 8 {
                    1 | 5 => {
                        let extra = range(&mut rng, 1, 4) as usize;
                        b.vl15_overflow(&mut rng, extra)?;
                        b.drain(opt.drain_bound)?;
                        let extra = range(&mut rng, 1, 3) as usize;
                        b.data_overflow(&mut rng, extra)?;
                        b.drain(opt.drain_bound)?;
                    }
                    3 => {
                        b.link_down_mid_packet(&mut rng)?;
                        b.drain(opt.drain_bound)?;
                        b.egress_link_down(&mut rng)?;
                    }
                    _ => {}
                }
            }
            b.check_counters()?;
            b.preset_counters()?;
        }
        phase += 1;
    }
    // The last phase may have ended in a reset: one more drained check.
    b.drain(opt.drain_bound)?;
    b.check_counters()?;
    let t = &b.tally;
    let good: u64 = FaultClass::GOOD
        .iter()
        .map(|c| t.by_class.get(c.name()).copied().unwrap_or(0))
        .sum();
    let mut faults: BTreeMap<String, u64> = t
        .by_class
        .iter()
        .filter(|(k, _)| !k.starts_with("good_"))
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    faults.insert("reset".into(), t.resets);
    let wall = t0.elapsed();
    *log = b.take_wire_log();
    let t = &b.tally;
    Ok(SwitchSoakReport {
        data_w: opt.data_w,
        nports,
        seed,
        packets: t.injected,
        good,
        faults,
        matched: t.matched,
        mismatches: t.mismatches,
        mismatch_log: t.log.clone(),
        counters_checked: t.counters_checked,
        max_drain_cycles: t.max_drain,
        drain_bound: opt.drain_bound,
        resets: t.resets,
        lost_to_reset: t.lost_to_reset,
        egress_swallowed: t.egress_swallowed,
        wire_in: t.wire_in.clone(),
        wire_out: t.wire_out.clone(),
        cycles: b.cycle_count(),
        twin_calm: b.dut().calm_cycles(),
        wall,
    })
}
