//! The CA twins (`model::twin::ca`, `ca_mp`) against the RTL, cycle by
//! cycle: the seeded fault soak of the CA port with the twin in lockstep
//! (`Fidelity::Lockstep`: every output compared in every cycle, the first
//! difference fails) per device kind and width, and a fabric brought up by
//! the built-in SM with every CA in lockstep, whose trace and end state
//! are the same with the CAs as twins as with all RTL.

use std::path::PathBuf;
use std::process::Command;

use vl15::check::faults::{self, SoakOpts};
use vl15::model::device::CaPortModel;
use vl15::model::twin::Fidelity;

fn lockstep_soak(model: CaPortModel, width: u32, packets: u64, seed: u64) {
    let mut o = SoakOpts::new(width, packets, seed);
    o.model = model;
    o.fidelity = Fidelity::Lockstep;
    o.checkpoint = 500;
    let r = faults::soak(&o).expect("soak");
    eprintln!(
        "{}: {} packets ({} good), {} mismatches, {} cycles, {:.1} s",
        r.device, r.packets, r.good, r.mismatches, r.cycles, r.wall_s
    );
    assert_eq!(r.mismatches, 0, "{:#?}", r.errors);
    assert!(r.packets >= packets);
    assert!(r.stats.to_sma > 0 && r.stats.wire_tx > 0, "{:?}", r.stats);
}

#[test]
fn ca_top_w32_in_lockstep() {
    lockstep_soak(CaPortModel::Top, 32, 3_000, 0x7_0001);
}
#[test]
fn ca_top_w64_in_lockstep() {
    lockstep_soak(CaPortModel::Top, 64, 3_000, 0x7_0002);
}
#[test]
fn ca_top_w128_in_lockstep() {
    lockstep_soak(CaPortModel::Top, 128, 3_000, 0x7_0003);
}
#[test]
fn ca_mp1_in_lockstep() {
    for w in [64, 128] {
        lockstep_soak(CaPortModel::Mp { nports: 1, port: 1 }, w, 2_000, 0x7_0004);
    }
}
#[test]
fn ca_mp2_in_lockstep() {
    for (port, w) in [(1, 64), (2, 64), (1, 128), (2, 128)] {
        lockstep_soak(CaPortModel::Mp { nports: 2, port }, w, 1_500, 0x7_0005);
    }
}

fn topo(name: &str) -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/topologies/").to_string() + name
}

fn vl15(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_vl15"))
        .args(args)
        .output()
        .expect("run vl15");
    assert!(
        out.status.success(),
        "vl15 {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The fabric's CAs (`ib_ca_mp_top`, 2 ports, two of them linked on both)
/// in lockstep with their twins through the SM's bring-up, at both widths.
#[test]
fn fabric_cas_in_lockstep() {
    for w in ["64", "128"] {
        let t = topo("net.2sw2path4hca2port");
        vl15(&[
            "sim",
            "--topology",
            &t,
            "--width",
            w,
            "--fidelity",
            "lockstep",
            "--rtl",
            "Switch*",
        ]);
    }
}

/// The same bring-up with the CAs as twins gives the same trace (every
/// packet on every port at the same cycle) and the same end state as all
/// RTL.
#[test]
fn fabric_with_ca_twins_equals_rtl() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("twin_ca_fabric");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let t = topo("net.2sw2path4hca");
    let mut texts = Vec::new();
    for (tag, extra) in [("rtl", vec![]), ("twin", vec!["--twin", "Hca*"])] {
        let pcap = dir.join(format!("{tag}.pcapng"));
        let state = dir.join(format!("{tag}.state"));
        let mut args = vec![
            "sim",
            "--topology",
            &t,
            "--pcap",
            pcap.to_str().expect("path"),
            "--dump-state",
            state.to_str().expect("path"),
        ];
        args.extend(extra);
        vl15(&args);
        let trace = vl15(&["decode", pcap.to_str().expect("path")]);
        let st = std::fs::read_to_string(&state).expect("state");
        texts.push((trace, st));
    }
    assert!(texts[0].0.lines().count() > 50, "{}", texts[0].0);
    assert_eq!(texts[0].0, texts[1].0, "traces differ");
    assert_eq!(texts[0].1, texts[1].1, "end states differ");
}

/// The CA twins' calm periods (`Dut::calm_until`, `skip`, the transmit
/// bursts) against the RTL: the device's inputs are driven directly, at
/// rest (`rest_dev_in`, every port at rest) whenever the host side has
/// nothing to do, so that `Lockstep` leaves the twin unstepped wherever
/// it says it is calm and compares its frozen outputs and announced
/// beats with the RTL's in every cycle. Traffic: SMPs and faults on the
/// wire with gaps and back to back, the SMA answering after a latency,
/// SM sends, traps, data sends, doorbells, counter reads, M_Key leases
/// that expire at rest, link flaps, and phases of backpressure.
mod calm {
    use std::collections::VecDeque;

    use vl15::check::faults::{response, FaultClass, Gen, GenCfg};
    use vl15::model::dut::{inputs_at_rest, rest_dev_in, Dut, HostIn, HostTaken};
    use vl15::model::lockstep::Lockstep;
    use vl15::model::regmap::{mpreg, reg};
    use vl15::model::stream::{to_beats, Beat, Rng};
    use vl15::model::twin::{Backend, DeviceSpec, RtlBackend, TwinBackend};
    use vl15::proto::mad;
    use vl15_bindings::{Changed, DevIn, DevOut, PortIn, PortOut};

    /// A host stream source: packets of beats with their sideband.
    #[derive(Default)]
    struct Src<M> {
        q: VecDeque<(Vec<Beat>, M)>,
        k: usize,
        /// A beat offered stays offered until it is taken (AXI-Stream).
        offered: bool,
    }

    impl<M: Copy> Src<M> {
        fn push(&mut self, beats: Vec<Beat>, m: M) {
            self.q.push_back((beats, m));
        }
        /// The beat offered this cycle, if `go` or one is offered already.
        fn offer(&mut self, go: bool) -> Option<(Beat, M)> {
            let h = self.q.front().map(|(b, m)| (b[self.k], *m));
            self.offered = h.is_some() && (self.offered || go);
            h.filter(|_| self.offered)
        }
        /// The front MAD, where none of it is offered yet: it can be
        /// offered whole.
        fn whole(&self) -> Option<(&[Beat], M)> {
            if self.k > 0 || self.offered {
                return None;
            }
            self.q.front().map(|(b, m)| (b.as_slice(), *m))
        }
        /// The front MAD was taken whole.
        fn taken_whole(&mut self) {
            self.q.pop_front();
            self.k = 0;
            self.offered = false;
        }
        fn taken(&mut self) {
            let n = self.q.front().map_or(0, |(b, _)| b.len());
            self.offered = false;
            self.k += 1;
            if self.k == n {
                self.k = 0;
                self.q.pop_front();
            }
        }
    }

    /// Per phase: how often each source presents a beat it has and each
    /// sink is ready (percent).
    struct Phase {
        valid: u32,
        ready: u32,
        tx_ready: u32,
        rx_gap: u64,
    }

    /// How the device is run: the RTL and the twin in lockstep, or the
    /// twin alone, stepped in every cycle or as a fabric runs it (not in
    /// its calm cycles at rest).
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum Run {
        Lockstep,
        TwinEveryCycle,
        TwinCalm,
    }

    /// The device under `Run`: a cycle's outputs (the device's and port
    /// `pi`'s).
    enum Model {
        Ls(Box<Lockstep>),
        Twin(Box<TwinRun>),
    }

    /// The twin alone.
    struct TwinRun {
        dut: Box<dyn Dut>,
        calm_aware: bool,
        now: u64,
        calm: Option<u64>,
        frozen: (DevOut, PortOut),
        links: Vec<bool>,
        bursts: Vec<vl15::model::dut::TxBurst>,
        /// The MADs it announced to the host (what a calm cycle shows).
        host: Vec<vl15::model::dut::HostBurst>,
        steps: u64,
        calm_cycles: u64,
        /// Time in the twin's skip and step.
        busy: std::time::Duration,
    }

    impl Model {
        /// The beats port index `pi` receives one a cycle from the next
        /// cycle on, given ahead ([`Dut::rx_burst`]). As in a fabric, the
        /// caller steps the model in that cycle: Lockstep does where the
        /// inputs of the cycle before were not at rest.
        fn rx_burst(&mut self, pi: usize, beats: &[Beat]) {
            match self {
                Model::Ls(ls) => {
                    let first = ls.cycle();
                    ls.rx_burst(pi, first, beats);
                }
                Model::Twin(tw) => {
                    tw.dut.rx_burst(pi, tw.now, beats);
                    let now = tw.now;
                    tw.calm = tw.calm.map(|u| u.min(now));
                }
            }
        }

        /// A whole MAD offered on `s` from this cycle on
        /// ([`Dut::host_burst`]): whether the model holds it.
        fn host_burst(&mut self, s: HostIn, beats: &[Beat], side: &DevIn) -> bool {
            match self {
                Model::Ls(ls) => {
                    let first = ls.cycle();
                    ls.host_burst(s, first, beats, side)
                }
                Model::Twin(tw) => {
                    let now = tw.now;
                    let held = tw.dut.host_burst(s, now, beats, side);
                    if held {
                        tw.calm = tw.calm.map(|u| u.min(now));
                    }
                    held
                }
            }
        }

        /// The MADs held that were taken whole by the last cycle.
        fn host_taken(&mut self, out: &mut Vec<HostTaken>) {
            match self {
                Model::Ls(ls) => ls.take_host_taken(out),
                Model::Twin(tw) => tw.dut.take_host_taken(out),
            }
        }

        /// A cycle's outputs (the device's and port `pi`'s), and whether
        /// the twin was calm in it.
        fn cycle(&mut self, d: &DevIn, pin: &[PortIn], pi: usize) -> (DevOut, PortOut, bool) {
            match self {
                Model::Ls(ls) => {
                    let calm0 = ls.calm_cycles();
                    let o = ls
                        .step(d, pin, Changed::All)
                        .unwrap_or_else(|e| panic!("{e:#}"));
                    (o, ls.ports_out()[pi], ls.calm_cycles() > calm0)
                }
                Model::Twin(tw) => {
                    let TwinRun {
                        dut,
                        calm_aware,
                        now,
                        calm,
                        frozen,
                        links,
                        bursts,
                        host,
                        steps,
                        calm_cycles,
                        busy,
                    } = &mut **tw;
                    let c = *now;
                    *now += 1;
                    let at_rest = inputs_at_rest(d, pin, links);
                    if *calm_aware && at_rest && calm.is_some_and(|u| c < u) {
                        *calm_cycles += 1;
                        // sma_rx/sm_rx show the beats announced, or none
                        let mut o = frozen.0;
                        o.sma_rx_tvalid = false;
                        o.sm_rx_tvalid = false;
                        if let Some(v) = dut.calm_idle() {
                            o.idle = v;
                        }
                        for b in host.iter() {
                            let Some(beat) =
                                c.checked_sub(b.first).and_then(|k| b.beats.get(k as usize))
                            else {
                                continue;
                            };
                            vl15::model::dut::show_host(&mut o, b, beat);
                        }
                        return (o, frozen.1, true);
                    }
                    let t0 = std::time::Instant::now();
                    let lag = c - dut.cycle();
                    if lag > 0 {
                        dut.skip(lag);
                    }
                    let o = dut.step(d, pin, Changed::All).expect("twin step");
                    *busy += t0.elapsed();
                    *steps += 1;
                    *frozen = (o, dut.ports_out()[pi]);
                    links.clear();
                    links.extend(pin.iter().map(|p| p.link_up));
                    dut.take_tx_bursts(bursts);
                    bursts.clear();
                    let mut new = Vec::new();
                    dut.take_host_bursts(&mut new);
                    for b in new {
                        host.retain(|x| x.stream != b.stream);
                        host.push(b);
                    }
                    *calm = if at_rest { dut.calm_until() } else { None };
                    (frozen.0, frozen.1, false)
                }
            }
        }
    }

    pub struct Report {
        pub cycles: u64,
        pub calm: u64,
        /// Cycles whose inputs were at rest.
        pub rest: u64,
        pub answered: u64,
        pub sent: u64,
        /// Packets received as bursts given ahead, and the calm cycles in
        /// which a beat of one arrived.
        pub rx_bursts: u64,
        pub rx_burst_calm: u64,
        /// Cycles at rest in which a beat of one arrived.
        pub rx_burst_rest: u64,
        /// Calm cycles in which sma_rx or sm_rx showed a beat (of a MAD
        /// the twin announced), and the cycles at rest with such a beat.
        pub host_out_calm: u64,
        pub host_out_beats: u64,
        /// MADs offered whole and held ([`Dut::host_burst`]), and the calm
        /// cycles in which one was held.
        pub held: u64,
        pub held_calm: u64,
        /// The twin alone: its steps, the wall time, the time in the twin.
        pub steps: u64,
        pub wall_s: f64,
        pub twin_s: f64,
    }

    pub fn soak(spec: DeviceSpec, port: u8, cycles: u64, seed: u64, run: Run) -> Report {
        let mut twin = TwinBackend.build(spec).expect("twin");
        let n = twin.num_ports() as usize;
        let db = (twin.data_w() / 8) as usize;
        let mut m = if run == Run::Lockstep {
            let rtl = RtlBackend.build(spec).expect("RTL");
            let mut ls = Lockstep::new(rtl, twin).expect("lockstep");
            ls.reset(4).expect("reset");
            Model::Ls(Box::new(ls))
        } else {
            twin.reset(4).expect("reset");
            Model::Twin(Box::new(TwinRun {
                now: twin.cycle(),
                dut: twin,
                calm_aware: run == Run::TwinCalm,
                calm: None,
                frozen: Default::default(),
                links: vec![false; n],
                bursts: Vec::new(),
                host: Vec::new(),
                steps: 0,
                calm_cycles: 0,
                busy: Default::default(),
            }))
        };
        let t0 = std::time::Instant::now();
        let mp = matches!(spec, DeviceSpec::CaMp { .. });
        let pi = usize::from(port) - 1;
        let mut rng = Rng::new(seed);
        let mut g = Gen::new(
            seed ^ 0xC0FFEE,
            GenCfg {
                lid: 0x0040,
                lmc: 2,
                port,
            },
        );
        let mut links = vec![mp; n];
        links[pi] = true;
        let mut regs: VecDeque<(u8, u32)> = [
            (reg::PORT_LID, 0x40),
            (reg::PORT_LMC, 2),
            (reg::MASTER_SM_LID, 1),
            (reg::MASTER_SM_SL, 3),
            (reg::PORT_STATE, 4),
        ]
        .into_iter()
        .collect();
        let mut rx: VecDeque<Beat> = VecDeque::new();
        let mut next_rx = 0u64;
        // A packet received as a burst: its beats given ahead, the rest of
        // one whose first beat is driven now (given next cycle), and the
        // cycles (of `c`) its beats arrive in.
        let mut burst_rest: Option<Vec<Beat>> = None;
        let mut burst_at = 0..0u64;
        // The cycle before had inputs not at rest (Lockstep steps the twin
        // in this one), or a cycle to force one (a register read).
        let mut prev_rest = true;
        let mut force_step = false;
        let mut sma_rx: Vec<u8> = Vec::new();
        let mut answers: VecDeque<(u64, mad::Mad, (u16, u16, u8))> = VecDeque::new();
        let mut sma_tx: Src<(u16, u16, u8)> = Src::default();
        let mut sm_tx: Src<(u16, u8, u8)> = Src::default();
        let mut trap_tx: Src<()> = Src::default();
        let mut dtx: Src<()> = Src::default();
        let mut link_back: Option<u64> = None;
        // The streams (SMA, SM, trap) whose front MAD the model holds.
        let mut held = [false; 3];
        let mut taken: Vec<HostTaken> = Vec::new();
        let mut last_links = links.clone();
        let mut ph = Phase {
            valid: 100,
            ready: 100,
            tx_ready: 100,
            rx_gap: 200,
        };
        let mut rep = Report {
            cycles,
            calm: 0,
            rest: 0,
            answered: 0,
            sent: 0,
            rx_bursts: 0,
            rx_burst_calm: 0,
            rx_burst_rest: 0,
            host_out_calm: 0,
            host_out_beats: 0,
            held: 0,
            held_calm: 0,
            steps: 0,
            wall_s: 0.0,
            twin_s: 0.0,
        };
        for c in 0..cycles {
            if c % 3000 == 2999 {
                // a new phase: mostly free running, now and then backpressure
                let busy = rng.chance(30);
                ph = Phase {
                    valid: if busy { 40 + rng.below(60) as u32 } else { 100 },
                    ready: if busy { 40 + rng.below(60) as u32 } else { 100 },
                    tx_ready: if rng.chance(25) {
                        50 + rng.below(50) as u32
                    } else {
                        100
                    },
                    rx_gap: [0, 100, 400, 1500][rng.below(4)],
                };
                // the M_Key: a lease of a few short seconds that a
                // violation starts and that runs out at rest, or none
                if rng.chance(40) {
                    let key = rng.next_u64() | 1;
                    regs.extend([
                        (reg::MKEY_TICK, 20 + rng.below(200) as u32),
                        (reg::MKEY_LEASE, 1 + rng.below(3) as u32),
                        (reg::MKEY_LO, key as u32),
                        (reg::MKEY_HI, (key >> 32) as u32),
                        (reg::MKEY_PROT, 3),
                    ]);
                } else {
                    regs.extend([(reg::MKEY_LO, 0), (reg::MKEY_HI, 0), (reg::MKEY_PROT, 0)]);
                }
                if rng.chance(10) && link_back.is_none() {
                    links[pi] = false;
                    link_back = Some(c + 50 + rng.below(400) as u64);
                }
            }
            if link_back.is_some_and(|t| c >= t) {
                link_back = None;
                links[pi] = true;
                regs.push_back((reg::PORT_STATE, 4));
            }
            // traffic: wire packets, SM sends, traps, data sends
            if let Some(b) = burst_rest.take() {
                m.rx_burst(pi, &b);
            }
            if rx.is_empty() && c >= next_rx && c >= burst_at.end {
                let bytes = if rng.chance(15) {
                    let rx_classes: Vec<FaultClass> =
                        FaultClass::ALL.into_iter().filter(|f| f.is_rx()).collect();
                    g.rx_fault(*rng.pick(&rx_classes))
                } else {
                    g.good().1
                };
                let beats = to_beats(&bytes, db);
                next_rx = c + if rng.chance(15) {
                    0
                } else {
                    rng.below(ph.rx_gap as usize + 1) as u64
                };
                if rng.chance(70) {
                    // a burst from now on: where the twin would not be
                    // stepped now, a register read makes it so, or the
                    // first beat is driven and the rest given next cycle
                    rep.rx_bursts += 1;
                    burst_at = c..c + beats.len() as u64;
                    if prev_rest && rng.chance(50) && beats.len() > 1 {
                        rx.push_back(beats[0]);
                        burst_rest = Some(beats[1..].to_vec());
                        burst_at.start += 1;
                    } else {
                        force_step = prev_rest;
                        m.rx_burst(pi, &beats);
                    }
                } else {
                    rx.extend(beats);
                }
            }
            if c % 409 == 100 && sm_tx.q.len() < 2 {
                let (m, ah) = g.sm_request();
                sm_tx.push(to_beats(&m[..], db), (ah.dlid, ah.sl, ah.path_bits));
            }
            if c % 997 == 500 {
                trap_tx.push(to_beats(&g.trap()[..], db), ());
            }
            if c % 1499 == 700 && dtx.q.is_empty() {
                dtx.push(to_beats(&g.data_tx(), db), ());
            }
            while answers.front().is_some_and(|a| a.0 <= c) {
                let (_, r, meta) = answers.pop_front().expect("an answer");
                sma_tx.push(to_beats(&r[..], db), meta);
                rep.answered += 1;
            }
            // this cycle's inputs: at rest but for what has work
            let mut d = rest_dev_in();
            let mut pin: Vec<PortIn> = links
                .iter()
                .map(|&l| PortIn {
                    link_up: l,
                    tx_tready: true,
                    ..PortIn::default()
                })
                .collect();
            let p = &mut pin[pi];
            p.tx_tready = rng.chance(ph.tx_ready);
            // (a burst's first beat driven goes now)
            if !rx.is_empty()
                && (burst_rest.is_some() || rng.chance(if ph.valid == 100 { 100 } else { 90 }))
            {
                let b = rx.pop_front().expect("a beat");
                p.rx_tvalid = true;
                p.rx_tdata = b.data;
                p.rx_tkeep = b.keep;
                p.rx_tlast = b.last;
            }
            let go = rng.chance(ph.valid);
            let dtx_v = dtx.offer(go);
            if let Some((b, ())) = dtx_v {
                p.dtx_tvalid = true;
                p.dtx_tdata = b.data;
                p.dtx_tkeep = b.keep;
                p.dtx_tlast = b.last;
            }
            d.sma_rx_tready = rng.chance(ph.ready);
            d.sm_rx_tready = rng.chance(ph.ready);
            // a whole MAD offered at once, as a fabric's host does when
            // its stream runs free
            if ph.valid == 100 && rng.chance(60) {
                let mut side = rest_dev_in();
                if let Some((b, (slid, dlid, sl))) = sma_tx.whole().filter(|_| !held[0]) {
                    side.sma_tx_slid = slid;
                    side.sma_tx_dlid = dlid;
                    side.sma_tx_sl = sl;
                    side.sma_tx_port = port;
                    held[0] = m.host_burst(HostIn::SmaTx, b, &side);
                    rep.held += u64::from(held[0]);
                }
                if let Some((b, (dlid, sl, bits))) = sm_tx.whole().filter(|_| !held[1]) {
                    side.sm_tx_dlid = dlid;
                    side.sm_tx_sl = sl;
                    side.sm_tx_path_bits = bits;
                    side.sm_tx_port = port;
                    held[1] = m.host_burst(HostIn::SmTx, b, &side);
                    rep.held += u64::from(held[1]);
                }
                if let Some((b, ())) = trap_tx.whole().filter(|_| !held[2]) {
                    side.trap_tx_port = port;
                    held[2] = m.host_burst(HostIn::TrapTx, b, &side);
                    rep.held += u64::from(held[2]);
                }
            }
            let go = rng.chance(ph.valid);
            let sma_v = sma_tx.offer(go && !held[0]).filter(|_| !held[0]);
            if let Some((b, (slid, dlid, sl))) = sma_v {
                d.sma_tx_tvalid = true;
                d.sma_tx_tdata = b.data;
                d.sma_tx_tlast = b.last;
                d.sma_tx_slid = slid;
                d.sma_tx_dlid = dlid;
                d.sma_tx_sl = sl;
                d.sma_tx_port = port;
            }
            let go = rng.chance(ph.valid);
            let sm_v = sm_tx.offer(go && !held[1]).filter(|_| !held[1]);
            if let Some((b, (dlid, sl, bits))) = sm_v {
                d.sm_tx_tvalid = true;
                d.sm_tx_tdata = b.data;
                d.sm_tx_tlast = b.last;
                d.sm_tx_dlid = dlid;
                d.sm_tx_sl = sl;
                d.sm_tx_path_bits = bits;
                d.sm_tx_port = port;
            }
            let go = rng.chance(ph.valid);
            let trap_v = trap_tx.offer(go && !held[2]).filter(|_| !held[2]);
            if let Some((b, ())) = trap_v {
                d.trap_tx_tvalid = true;
                d.trap_tx_tdata = b.data;
                d.trap_tx_tlast = b.last;
                d.trap_tx_port = port;
            }
            if c % 701 == 300 {
                d.sm_rq_post = true;
                d.sm_rq_post_n = 1 + rng.below(3) as u8;
                d.sm_rq_port = port;
            }
            if let Some((a, w)) = regs.pop_front() {
                d.reg_we = true;
                d.reg_addr = mpreg::port(port, a);
                d.reg_wdata = w;
            } else if std::mem::take(&mut force_step) || rng.chance(1) {
                d.reg_addr = mpreg::port(port, reg::CTR_BASE + rng.below(27) as u8);
            }
            let at_rest = inputs_at_rest(&d, &pin, &last_links);
            rep.rest += u64::from(at_rest);
            prev_rest = at_rest;
            last_links.clone_from(&links);
            let (o, po, calm) = m.cycle(&d, &pin, pi);
            if held.iter().any(|&h| h) {
                rep.held_calm += u64::from(calm);
            }
            m.host_taken(&mut taken);
            for t in taken.drain(..) {
                held[t.stream as usize] = false;
                match t.stream {
                    HostIn::SmaTx => sma_tx.taken_whole(),
                    HostIn::SmTx => {
                        sm_tx.taken_whole();
                        rep.sent += t.last - t.first + 1;
                    }
                    HostIn::TrapTx => trap_tx.taken_whole(),
                }
            }
            if (o.sma_rx_tvalid || o.sm_rx_tvalid) && at_rest {
                rep.host_out_beats += 1;
                rep.host_out_calm += u64::from(calm);
            }
            if burst_at.contains(&c) {
                rep.rx_burst_calm += u64::from(calm);
                rep.rx_burst_rest += u64::from(at_rest);
            }
            // the host side takes what the device gave and took
            if o.sma_rx_tvalid && d.sma_rx_tready {
                sma_rx.extend((0..db).map(|j| (o.sma_rx_tdata[j / 8] >> (8 * (j % 8))) as u8));
                if o.sma_rx_tlast {
                    let mut req = [0u8; 256];
                    req.copy_from_slice(&sma_rx[..256]);
                    sma_rx.clear();
                    if mad::method(&req) != 0x07 && !o.sma_rx_mkey_viol {
                        let lat = rng.below(120) as u64;
                        let meta = (o.sma_rx_slid, o.sma_rx_dlid, o.sma_rx_sl);
                        answers.push_back((c + lat, response(&req, &mut rng), meta));
                    }
                }
            }
            if sma_v.is_some() && o.sma_tx_tready {
                sma_tx.taken();
            }
            if sm_v.is_some() && o.sm_tx_tready {
                sm_tx.taken();
                rep.sent += 1;
            }
            if trap_v.is_some() && o.trap_tx_tready {
                trap_tx.taken();
            }
            if dtx_v.is_some() && po.dtx_tready {
                dtx.taken();
            }
        }
        rep.wall_s = t0.elapsed().as_secs_f64();
        match m {
            Model::Ls(ls) => {
                rep.calm = ls.calm_cycles();
                rep.steps = ls.compared() - rep.calm;
            }
            Model::Twin(tw) => {
                rep.calm = tw.calm_cycles;
                rep.steps = tw.steps;
                rep.twin_s = tw.busy.as_secs_f64();
            }
        }
        rep
    }
}

fn calm_soak(spec: vl15::model::twin::DeviceSpec, port: u8, seed: u64) {
    let r = calm::soak(spec, port, 120_000, seed, calm::Run::Lockstep);
    eprintln!(
        "{spec:?} port {port}: {} cycles, {} at rest, {} calm ({:.0} % of those), {} answers, \
         {} SM beats, {} packets received as bursts, {} calm cycles in them of {} at rest, \
         {} of {} cycles with a beat on sma_rx/sm_rx calm, {} MADs held whole ({} calm cycles)",
        r.cycles,
        r.rest,
        r.calm,
        100.0 * r.calm as f64 / r.rest as f64,
        r.answered,
        r.sent,
        r.rx_bursts,
        r.rx_burst_calm,
        r.rx_burst_rest,
        r.host_out_calm,
        r.host_out_beats,
        r.held,
        r.held_calm
    );
    assert!(r.answered > 100, "the SMA answered {}", r.answered);
    // MADs were offered whole, and the twin was calm while it held them
    assert!(
        r.held > 50 && r.held_calm > 5 * r.held,
        "{} MADs held whole, {} calm cycles while one was",
        r.held,
        r.held_calm
    );
    // the receive bursts were given and the twin was calm through them
    assert!(
        r.rx_bursts > 100 && r.rx_burst_calm * 2 > r.rx_burst_rest,
        "{} receive bursts, {} calm cycles in them of {} at rest",
        r.rx_bursts,
        r.rx_burst_calm,
        r.rx_burst_rest
    );
    // and through the MADs it announced to the host
    assert!(
        r.host_out_calm * 2 > r.host_out_beats,
        "{} of {} cycles with a beat on sma_rx/sm_rx calm",
        r.host_out_calm,
        r.host_out_beats
    );
    // every cycle at rest but those of a stream's beats on sma_rx/sm_rx
    // and the steps that decide
    assert!(
        r.calm * 10 > r.cycles && r.calm * 2 > r.rest,
        "the twin was calm in {} of {} cycles, {} at rest",
        r.calm,
        r.cycles,
        r.rest
    );
}

#[test]
fn ca_top_calm_in_lockstep() {
    use vl15::model::twin::DeviceSpec::CaTop;
    for (w, seed) in [(32, 0xCA1_0001), (64, 0xCA1_0002), (128, 0xCA1_0003)] {
        calm_soak(CaTop { data_w: w }, 1, seed);
    }
}

#[test]
fn ca_mp_calm_in_lockstep() {
    use vl15::model::twin::DeviceSpec::CaMp;
    for (nports, port, w, seed) in [
        (1, 1, 64, 0xCA2_0001),
        (1, 1, 128, 0xCA2_0002),
        (2, 1, 64, 0xCA2_0003),
        (2, 2, 128, 0xCA2_0004),
    ] {
        calm_soak(CaMp { nports, data_w: w }, port, seed);
    }
}

/// What calm saves the twin alone on the calm soak's traffic: its steps
/// and wall time stepped in every cycle and as a fabric runs it.
/// `cargo test --release -p vl15 --test twin_ca -- --ignored --nocapture`
#[test]
#[ignore]
fn ca_twin_calm_cost() {
    use vl15::model::twin::DeviceSpec::{CaMp, CaTop};
    for (spec, port) in [
        (CaTop { data_w: 32 }, 1),
        (CaTop { data_w: 128 }, 1),
        (
            CaMp {
                nports: 2,
                data_w: 64,
            },
            2,
        ),
        (
            CaMp {
                nports: 2,
                data_w: 128,
            },
            1,
        ),
    ] {
        let cycles = 2_000_000;
        let every = calm::soak(spec, port, cycles, 0xC057, calm::Run::TwinEveryCycle);
        let calm = calm::soak(spec, port, cycles, 0xC057, calm::Run::TwinCalm);
        assert_eq!((every.answered, every.sent), (calm.answered, calm.sent));
        eprintln!(
            "{spec:?}: every cycle: {} steps, {:.3} s in the twin ({:.3} s in all); \
             calm: {} steps, {} calm cycles, {:.3} s in the twin ({:.3} s)",
            every.steps,
            every.twin_s,
            every.wall_s,
            calm.steps,
            calm.calm,
            calm.twin_s,
            calm.wall_s
        );
    }
}
