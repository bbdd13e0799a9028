//! `vl15 check-rtl`: each twin of a recorded run ([`crate::model::record`])
//! replayed alone through its Verilated RTL, on a pool of workers.
//!
//! A device's replay feeds the RTL what the fabric gave the twin, in the
//! same cycles ([`RtlFeed`]), and compares the RTL's outputs with the
//! record in every cycle: in a cycle the twin was stepped, every output it
//! gave (the bytes on each port, the host streams, the registers, counters
//! and states); in a cycle it slept through, the beats of the packets and
//! MADs it had announced (their CRC over the burst), no beat where it had
//! none, and every other output as its last step left it. Devices share
//! nothing, so they spread over every core, and over machines as shards of
//! a Slurm array.

use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use vl15_bindings::{Changed, DevIn, DevOut, PortIn, PortOut};

use crate::model::dut::{rest_dev_in, Dut, HostIn, HostOut, HostTaken};
use crate::model::lockstep::{
    field_diff, visible_dev, visible_port, visible_port_eq, visible_port_eq_but_tx, RtlFeed,
};
use crate::model::record::{self, DeviceEntry, Lane, Manifest, Op, OpReader, Sent};
use crate::model::stream::Beat;
use crate::model::twin::{backend, glob_match, Fidelity};
use crate::proto::InputError;

/// The first difference found in one device's replay.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Mismatch {
    /// The port: where a packet left (1..N), or where a MAD to the host
    /// arrived (0: a switch's port 0); None: the device's management side
    /// as a whole.
    pub port: Option<usize>,
    /// The fabric's cycle.
    pub cycle: u64,
    /// What differed: each field, what the record has and what the RTL
    /// gave.
    pub what: String,
}

/// One device's replay.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceReport {
    pub index: usize,
    pub id: String,
    pub kind: String,
    pub nports: u8,
    pub data_w: u32,
    /// Cycles the RTL was stepped in, and recorded steps compared.
    pub rtl_cycles: u64,
    pub steps: u64,
    /// Packets the twin sent out of its ports, compared beat by beat
    /// (bytes, first and last cycle), and MADs to its host.
    pub packets: u64,
    pub host_mads: u64,
    pub mismatch: Option<Mismatch>,
    /// CPU seconds of this replay (not part of the comparison).
    pub secs: f64,
}

/// A whole check, or one shard of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub build: String,
    /// The devices the recording holds.
    pub recorded: usize,
    pub devices: Vec<DeviceReport>,
    /// Wall seconds and workers (for one run; a merge sums neither).
    pub wall: f64,
    pub workers: usize,
}

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Workers (≥ 1).
    pub jobs: usize,
    /// Devices whose node id or NodeDescription one of these matches
    /// (`*` any run); empty: every device.
    pub devices: Vec<String>,
    /// Shard `k` of `n` (1 ≤ k ≤ n).
    pub shard: Option<(usize, usize)>,
}

fn input(msg: String) -> anyhow::Error {
    InputError(msg).into()
}

/// The fields of `rtl` and `rec` (one struct as the RTL gave it and as
/// recorded) that differ: `name: a (RTL), recorded b`.
fn rtl_vs_record<T: std::fmt::Debug>(rtl: &T, rec: &T) -> String {
    field_diff(&format!("{rtl:?}"), &format!("{rec:?}")).replace("(RTL) vs", "(RTL), recorded")
}

/// The manifest of recording `dir`, checked against this build and its
/// data file.
pub fn open(dir: &Path) -> Result<Manifest> {
    let mpath = dir.join(record::MANIFEST);
    let text = std::fs::read_to_string(&mpath).map_err(|e| {
        input(format!(
            "{}: {e} (not a recording of --record)",
            mpath.display()
        ))
    })?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| {
        input(format!(
            "{}: not a manifest of --record: {e}",
            mpath.display()
        ))
    })?;
    if m.format != record::FORMAT {
        return Err(input(format!(
            "{}: format {:?}, this build reads {:?}",
            mpath.display(),
            m.format,
            record::FORMAT
        )));
    }
    let build = record::build_id()?;
    if m.build != build {
        return Err(input(format!(
            "{}: recorded by another build of vl15 (sources CRC {}, this one {build}): \
             replay it with the vl15 that recorded it",
            mpath.display(),
            m.build
        )));
    }
    let dpath = dir.join(record::DATA);
    let len = std::fs::metadata(&dpath)
        .map_err(|e| input(format!("{}: {e}", dpath.display())))?
        .len();
    if len < m.data_bytes {
        return Err(input(format!(
            "{}: truncated: {len} bytes, the manifest names {}",
            dpath.display(),
            m.data_bytes
        )));
    }
    for d in &m.devices {
        if record::spec_of(&d.kind, d.nports, d.data_w).is_none() {
            return Err(input(format!(
                "{}: device {:?}: {} of {} ports is no device this build models",
                mpath.display(),
                d.id,
                d.kind,
                d.nports
            )));
        }
        if let Some(&(o, l)) = d.chunks.iter().find(|&&(o, l)| o + l > m.data_bytes) {
            return Err(input(format!(
                "{}: device {:?} has bytes {o}..{} past the data's end {}",
                mpath.display(),
                d.id,
                o + l,
                m.data_bytes
            )));
        }
    }
    Ok(m)
}

/// The devices of `m` that `o` selects, each with the shard it falls in:
/// by recorded size, largest first, each to the shard with the fewest
/// bytes so far (the same for every run).
pub fn select<'m>(m: &'m Manifest, o: &CheckOptions) -> Result<Vec<&'m DeviceEntry>> {
    let names = |p: &str, d: &DeviceEntry| glob_match(p, &d.id) || glob_match(p, &d.description);
    let mut sel: Vec<&DeviceEntry> = m
        .devices
        .iter()
        .filter(|d| o.devices.is_empty() || o.devices.iter().any(|p| names(p, d)))
        .collect();
    for p in &o.devices {
        if !m.devices.iter().any(|d| names(p, d)) {
            return Err(input(format!("--device {p:?} names no recorded device")));
        }
    }
    if let Some((k, n)) = o.shard {
        sel.sort_by_key(|d| (std::cmp::Reverse(d.bytes), d.index));
        let mut load = vec![0u64; n];
        let mut mine = Vec::new();
        for d in sel {
            let s = (0..n).min_by_key(|&s| (load[s], s)).unwrap_or(0);
            load[s] += d.bytes.max(1);
            if s + 1 == k {
                mine.push(d);
            }
        }
        sel = mine;
    }
    Ok(sel)
}

/// Check the devices of recording `dir` that `o` selects.
pub fn check(dir: &Path, o: &CheckOptions) -> Result<Report> {
    let m = open(dir)?;
    let mut sel = select(&m, o)?;
    // the largest first, so that the busiest device starts at once
    sel.sort_by_key(|d| (std::cmp::Reverse(d.bytes), d.index));
    let data = dir.join(record::DATA);
    let file = std::fs::File::open(&data).with_context(|| format!("opening {}", data.display()))?;
    let jobs = o.jobs.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|k| format!("vl15-check-{k}"))
        .build()
        .context("starting the check's workers")?;
    let t0 = Instant::now();
    let results: Vec<Result<DeviceReport>> = pool.install(|| {
        sel.par_iter()
            .with_max_len(1)
            .map(|d| replay_device(&file, &data, d))
            .collect()
    });
    let wall = t0.elapsed().as_secs_f64();
    let mut devices = Vec::with_capacity(results.len());
    for r in results {
        devices.push(r?);
    }
    devices.sort_by_key(|d| d.index);
    Ok(Report {
        build: m.build,
        recorded: m.devices.len(),
        devices,
        wall,
        workers: jobs,
    })
}

fn read_stream(file: &std::fs::File, path: &Path, d: &DeviceEntry) -> Result<Vec<u8>> {
    let mut b = vec![0u8; usize::try_from(d.bytes).unwrap_or(0)];
    let mut at = 0usize;
    for &(off, len) in &d.chunks {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        let dst = b.get_mut(at..at + len).ok_or_else(|| {
            input(format!(
                "{}: device {:?}: chunks past its size",
                path.display(),
                d.id
            ))
        })?;
        file.read_exact_at(dst, off).map_err(|e| {
            input(format!(
                "{}: device {:?}: reading bytes {off}..{}: {e}",
                path.display(),
                d.id,
                off + len as u64
            ))
        })?;
        at += len;
    }
    Ok(b)
}

/// Replay one device; Err only where its recording cannot be read.
fn replay_device(file: &std::fs::File, path: &Path, d: &DeviceEntry) -> Result<DeviceReport> {
    let c0 = crate::model::thread_cpu_s().unwrap_or(0.0);
    let bytes = read_stream(file, path, d)?;
    let mut rep = DeviceReport {
        index: d.index,
        id: d.id.clone(),
        kind: d.kind.clone(),
        nports: d.nports,
        data_w: d.data_w,
        rtl_cycles: 0,
        steps: 0,
        packets: 0,
        host_mads: 0,
        mismatch: None,
        secs: 0.0,
    };
    let mut r = Replay::new(d, path)?;
    let mut ops = OpReader::new(&bytes, usize::from(d.nports), &path.display().to_string());
    match ops.next_op()? {
        Some(Op::Head {
            kind,
            nports,
            data_w,
        }) if kind == d.kind && nports == d.nports && data_w == d.data_w => {}
        Some(Op::Head {
            kind,
            nports,
            data_w,
        }) => {
            return Err(input(format!(
                "{}: device {:?} was recorded as {kind} of {nports} ports at DataW {data_w}, \
                 the manifest says {} of {} at DataW {}",
                path.display(),
                d.id,
                d.kind,
                d.nports,
                d.data_w
            )))
        }
        _ => {
            return Err(input(format!(
                "{}: device {:?}: its stream does not start with its header",
                path.display(),
                d.id
            )))
        }
    }
    while let Some(op) = ops.next_op()? {
        if let Err(m) = r.op(op, ops.pin(), ops.ports()) {
            rep.mismatch = Some(m);
            break;
        }
    }
    if rep.mismatch.is_none() {
        if let Err(m) = r.end() {
            rep.mismatch = Some(m);
        }
    }
    rep.rtl_cycles = r.rtl_cycles;
    rep.steps = r.steps;
    rep.packets = r.packets;
    rep.host_mads = r.host_mads;
    rep.secs = crate::model::thread_cpu_s().unwrap_or(0.0) - c0;
    Ok(rep)
}

/// One device's RTL driven by its record.
struct Replay {
    rtl: Box<dyn Dut>,
    /// The bursts the twin took ahead, fed to the RTL in their cycles.
    feed: RtlFeed,
    /// The outputs of the last recorded step: those the twin held while
    /// it slept (all but `idle`, the beats on `tx_*` and to the host, and
    /// the `tready` of a stream with a MAD held).
    held_out: DevOut,
    /// [`Replay::quiet`] of `held_out` for the [`Replay::held_mask`] it was
    /// made with.
    held_quiet: (u8, DevOut),
    held_ports: Vec<PortOut>,
    off: u64,
    w: u32,
    switch: bool,
    /// The port tag of the last MAD the host offered whole on each stream
    /// (`sma_tx`, `sm_tx`, `trap_tx`).
    held_tag: [u8; 3],
    /// The ports' inputs at rest after the last recorded step.
    rest_pin: Vec<PortIn>,
    /// Whether the next rest step must say every port changed.
    rest_all: bool,
    /// The RTL's last outputs.
    out: DevOut,
    /// Bursts the record has ahead, on the ports and to the host, with
    /// what the RTL showed in their cycles so far.
    exp: Vec<Expect>,
    /// The MADs held whole the RTL took since the record last said.
    taken: Vec<HostTaken>,
    rtl_cycles: u64,
    steps: u64,
    packets: u64,
    host_mads: u64,
}

impl Replay {
    fn new(d: &DeviceEntry, path: &Path) -> Result<Replay> {
        let spec = record::spec_of(&d.kind, d.nports, d.data_w).ok_or_else(|| {
            input(format!(
                "{}: device {:?}: unknown kind",
                path.display(),
                d.id
            ))
        })?;
        let rtl = backend(Fidelity::Rtl)
            .build(spec)
            .with_context(|| format!("building the RTL of {:?}", d.id))?;
        let n = usize::from(d.nports);
        Ok(Replay {
            rtl,
            feed: RtlFeed::new(n),
            held_out: DevOut::default(),
            held_quiet: (u8::MAX, DevOut::default()),
            held_ports: vec![PortOut::default(); n],
            off: d.offset,
            w: d.data_w,
            switch: d.kind == "switch",
            held_tag: [0; 3],
            rest_pin: vec![PortIn::default(); n],
            rest_all: true,
            out: DevOut::default(),
            exp: Vec::new(),
            taken: Vec::new(),
            rtl_cycles: 0,
            steps: 0,
            packets: 0,
            host_mads: 0,
        })
    }

    /// The port a host stream's tag `t` names: a switch's host side is its
    /// port 0; a CA's tag 0 names none.
    fn tag_port(&self, t: u8) -> Option<usize> {
        if self.switch {
            Some(0)
        } else {
            (t != 0).then_some(usize::from(t))
        }
    }

    /// The port of the host stream whose fields differ between `a` and
    /// `b` (its port tag; a switch's management side is its port 0).
    fn stream_port(&self, i: &DevIn, a: &DevOut, b: &DevOut) -> Option<usize> {
        let tag = |t: u8| self.tag_port(t);
        let sma_rx = |o: &DevOut| record::host_view(o, HostOut::SmaRx, self.w);
        let sm_rx = |o: &DevOut| record::host_view(o, HostOut::SmRx, self.w);
        if a.sma_tx_tready != b.sma_tx_tready {
            tag(i.sma_tx_port)
        } else if a.sm_tx_tready != b.sm_tx_tready {
            tag(i.sm_tx_port)
        } else if a.trap_tx_tready != b.trap_tx_tready {
            tag(i.trap_tx_port)
        } else if sma_rx(a) != sma_rx(b) {
            tag(a.sma_rx_port.max(b.sma_rx_port))
        } else if sm_rx(a) != sm_rx(b) {
            tag(a.sm_rx_port.max(b.sm_rx_port))
        } else if self.switch {
            Some(0)
        } else {
            None
        }
    }

    fn fabric(&self, c: u64) -> u64 {
        c.saturating_sub(self.off)
    }

    fn miss(&self, port: Option<usize>, c: u64, what: String) -> Mismatch {
        Mismatch {
            port,
            cycle: self.fabric(c),
            what,
        }
    }

    /// Op `op`; for a step, `pin` and `ports` its ports' inputs and
    /// outputs.
    fn op(&mut self, op: Op, pin: &[PortIn], ports: &[PortOut]) -> Result<(), Mismatch> {
        let now = self.rtl.cycle();
        match op {
            Op::Head { .. } => {}
            Op::Reset(c) => {
                self.feed.clear();
                self.rtl
                    .reset(c)
                    .map_err(|e| self.miss(None, now, format!("reset: {e:#}")))?;
                self.exp.clear();
                self.rest_all = true;
            }
            Op::Skip(n) => self.advance(n)?,
            Op::Step {
                cycle,
                i,
                all,
                changed,
                out,
            } => {
                if cycle != now {
                    return Err(self.miss(
                        None,
                        now,
                        format!("the record steps the device in its cycle {cycle}, the replay is at {now}"),
                    ));
                }
                let ch = if all {
                    Changed::All
                } else {
                    Changed::Ports(&changed)
                };
                let o = self
                    .feed
                    .step(self.rtl.as_mut(), &i, pin, ch)
                    .map_err(|e| self.miss(None, now, format!("{e:#}")))?;
                self.rtl_cycles += 1;
                self.steps += 1;
                self.out = o;
                let (vr, vo) = (visible_dev(&out, self.w), visible_dev(&o, self.w));
                if vr != vo {
                    // a register read names its register, and its port
                    let (port, reg) = if vr.reg_rdata == vo.reg_rdata {
                        (self.stream_port(&i, &vr, &vo), String::new())
                    } else {
                        (
                            crate::model::regmap::port_of_reg(self.switch, i.reg_addr)
                                .map(usize::from),
                            format!(" (register {:#06x} read)", i.reg_addr),
                        )
                    };
                    return Err(self.miss(
                        port,
                        now,
                        format!("record against RTL{reg}: {}", rtl_vs_record(&vo, &vr)),
                    ));
                }
                for (p, (a, b)) in self.rtl.ports_out().iter().zip(ports).enumerate() {
                    if !visible_port_eq(a, b) {
                        let (va, vb) = (visible_port(a), visible_port(b));
                        return Err(self.miss(
                            Some(p + 1),
                            now,
                            format!("record against RTL: {}", rtl_vs_record(&va, &vb)),
                        ));
                    }
                }
                self.collect(now, &o, &i)?;
                self.rest_pin.clear();
                self.rest_pin.extend_from_slice(pin);
                for p in &mut self.rest_pin {
                    p.rx_tvalid = false;
                    p.dtx_tvalid = false;
                    p.tx_tready = true;
                }
                self.rest_all = true;
                self.taken.extend_from_slice(&self.feed.taken);
                self.held_out = out;
                self.held_quiet.0 = u8::MAX;
                self.held_ports.clear();
                self.held_ports.extend_from_slice(ports);
            }
            Op::RxBurst { port, first, beats } => self.feed.rx_burst(port, first, &beats),
            Op::RxCut { port, from } => self.feed.rx_burst_cut(port, from),
            Op::HostBurst {
                stream,
                first,
                beats,
                side,
                held,
            } => {
                // held: the twin took it whole, the RTL gets it beat by
                // beat; else the host drove it in the recorded steps
                if held {
                    self.feed.hold(stream, first, &beats, &side);
                }
                self.held_tag[stream as usize] = crate::model::held::tag(stream, &side);
            }
            Op::Sent(v) => {
                for b in v {
                    if self.exp.iter().any(|e| e.sent.lane == b.lane) {
                        return Err(self.miss(
                            lane_port(b.lane),
                            now,
                            format!(
                                "the record announces a burst on {:?} over one with beats to come",
                                b.lane
                            ),
                        ));
                    }
                    self.exp.push(Expect {
                        sent: b,
                        tx: Vec::new(),
                        host: Vec::new(),
                    });
                }
            }
            Op::Void { lane, at, crc } => {
                let Some(k) = self.exp.iter().position(|e| e.sent.lane == lane) else {
                    return Err(self.miss(
                        lane_port(lane),
                        now,
                        format!("the record voids a burst on {lane:?} it does not have"),
                    ));
                };
                let mut e = self.exp.swap_remove(k);
                e.tx.retain(|(c, _)| *c < at);
                e.host.retain(|(c, _)| *c < at);
                self.done(&e, crc, at)?;
            }
            Op::Taken(v) => {
                if v != self.taken {
                    let s = v.first().or(self.taken.first()).map(|t| t.stream);
                    let port = s.and_then(|s| self.tag_port(self.held_tag[s as usize]));
                    return Err(self.miss(
                        port,
                        now,
                        format!(
                            "MADs held whole and taken: recorded {v:?}, the RTL took {:?}",
                            self.taken
                        ),
                    ));
                }
                self.taken.clear();
            }
        }
        Ok(())
    }

    /// `n` cycles with the inputs at rest, as the fabric gave the twin
    /// while it slept.
    fn advance(&mut self, n: u64) -> Result<(), Mismatch> {
        let end = self.rtl.cycle() + n;
        while self.rtl.cycle() < end {
            let now = self.rtl.cycle();
            if self.out.idle && self.exp.is_empty() && !self.feed.pending() {
                self.rtl.skip(end - now);
                break;
            }
            let i = rest_dev_in();
            let ch = if self.rest_all {
                Changed::All
            } else {
                Changed::Ports(&[])
            };
            let o = self
                .feed
                .step(self.rtl.as_mut(), &i, &self.rest_pin, ch)
                .map_err(|e| self.miss(None, now, format!("{e:#}")))?;
            self.rest_all = false;
            self.rtl_cycles += 1;
            self.out = o;
            self.unannounced(now, &o)?;
            self.steady(now, &o)?;
            self.collect(now, &o, &i)?;
            self.taken.extend_from_slice(&self.feed.taken);
        }
        Ok(())
    }

    /// In a cycle the twin slept through, the RTL shows no beat on a port
    /// or host stream where the record has no burst.
    fn unannounced(&self, now: u64, o: &DevOut) -> Result<(), Mismatch> {
        for (p, a) in self.rtl.ports_out().iter().enumerate() {
            if a.tx_tvalid && !self.exp.iter().any(|e| e.sent.lane == Lane::Tx(p)) {
                return Err(self.miss(
                    Some(p + 1),
                    now,
                    format!(
                        "the RTL sends a beat ({:?}) where the record has none",
                        visible_port(a)
                    ),
                ));
            }
        }
        for (s, valid) in [
            (HostOut::SmaRx, o.sma_rx_tvalid),
            (HostOut::SmRx, o.sm_rx_tvalid),
        ] {
            if valid && !self.exp.iter().any(|e| e.sent.lane == Lane::Host(s)) {
                return Err(self.miss(
                    None,
                    now,
                    format!("the RTL offers a beat to the host on {s:?} where the record has none"),
                ));
            }
        }
        Ok(())
    }

    /// In a cycle the twin slept through, the RTL's outputs but `idle`,
    /// the beats on `tx_*` and to the host, and the `tready` of a stream
    /// with a MAD held are those of the last recorded step.
    fn steady(&mut self, now: u64, o: &DevOut) -> Result<(), Mismatch> {
        let m = self.held_mask();
        let a = self.quiet(o, m);
        if self.held_quiet.0 != m {
            self.held_quiet = (m, self.quiet(&self.held_out, m));
        }
        if a != self.held_quiet.1 {
            let b = self.held_quiet.1;
            return Err(self.miss(
                None,
                now,
                format!(
                    "while the twin slept (its outputs those of its last step): {}",
                    rtl_vs_record(&a, &b)
                ),
            ));
        }
        for (p, (a, b)) in self
            .rtl
            .ports_out()
            .iter()
            .zip(&self.held_ports)
            .enumerate()
        {
            if !visible_port_eq_but_tx(a, b) {
                // (visible, with no beat on tx_*)
                let quiet = |p: &PortOut| {
                    visible_port(&PortOut {
                        tx_tvalid: false,
                        ..*p
                    })
                };
                let (va, vb) = (quiet(a), quiet(b));
                return Err(self.miss(
                    Some(p + 1),
                    now,
                    format!(
                        "while the twin slept (its outputs those of its last step): {}",
                        rtl_vs_record(&va, &vb)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The host streams with a MAD held whole, or taken in the last step
    /// (bit: [`HostIn`] as a number).
    fn held_mask(&self) -> u8 {
        let held = self.feed.host.iter().map(|h| h.stream);
        held.chain(self.feed.taken.iter().map(|t| t.stream))
            .fold(0, |m, s| m | (1 << s as u8))
    }

    /// What of `o` a twin asleep holds: all a consumer may look at but
    /// `idle`, the beats to the host, and the `tready` of the streams of
    /// `held` ([`Replay::held_mask`]).
    fn quiet(&self, o: &DevOut, held: u8) -> DevOut {
        let mut v = *o;
        v.idle = false;
        v.sma_rx_tvalid = false;
        v.sm_rx_tvalid = false;
        for s in [HostIn::SmaTx, HostIn::SmTx, HostIn::TrapTx] {
            if held & (1 << s as u8) != 0 {
                crate::model::dut::set_host_ready(&mut v, s, false);
            }
        }
        visible_dev(&v, self.w)
    }

    /// The RTL's outputs in cycle `now` (inputs `i`) go to the bursts the
    /// record has in that cycle; a burst whose last cycle it is is
    /// compared.
    fn collect(&mut self, now: u64, o: &DevOut, i: &DevIn) -> Result<(), Mismatch> {
        for po in self.rtl.ports_out() {
            if po.tx_tvalid && po.tx_tlast {
                self.packets += 1;
            }
        }
        if o.sma_rx_tvalid && o.sma_rx_tlast && i.sma_rx_tready {
            self.host_mads += 1;
        }
        if o.sm_rx_tvalid && o.sm_rx_tlast && i.sm_rx_tready {
            self.host_mads += 1;
        }
        let mut k = 0;
        while k < self.exp.len() {
            let e = &mut self.exp[k];
            let s = e.sent;
            if now < s.first {
                k += 1;
                continue;
            }
            let beat = now - s.first;
            match s.lane {
                Lane::Tx(p) => {
                    let a = self.rtl.ports_out()[p];
                    if !a.tx_tvalid {
                        let m = format!(
                            "beat {} of {} of a packet the twin sent from cycle {}: the RTL sends no beat",
                            beat + 1,
                            s.n,
                            self.fabric(s.first)
                        );
                        return Err(self.miss(Some(p + 1), now, m));
                    }
                    let v = visible_port(&a);
                    e.tx.push((
                        now,
                        Beat {
                            data: v.tx_tdata,
                            keep: v.tx_tkeep,
                            last: v.tx_tlast,
                        },
                    ));
                }
                Lane::Host(h) => {
                    let v = record::host_view(o, h, self.w);
                    let valid = match h {
                        HostOut::SmaRx => v.sma_rx_tvalid,
                        HostOut::SmRx => v.sm_rx_tvalid,
                    };
                    if !valid {
                        let m = format!(
                            "beat {} of {} of a MAD to the host ({h:?}) the twin gave from cycle {}: the RTL offers none",
                            beat + 1,
                            s.n,
                            self.fabric(s.first)
                        );
                        return Err(self.miss(Some(usize::from(s.port)), now, m));
                    }
                    e.host.push((now, v));
                }
            }
            if beat + 1 >= s.n {
                let e = self.exp.swap_remove(k);
                self.done(&e, e.sent.crc, now + 1)?;
            } else {
                k += 1;
            }
        }
        Ok(())
    }

    /// Burst `e` ended (or was void) before cycle `end`: what the RTL
    /// showed must have CRC `crc`.
    fn done(&self, e: &Expect, crc: u32, end: u64) -> Result<(), Mismatch> {
        let got = match e.sent.lane {
            Lane::Tx(_) => record::beats_crc(e.tx.iter().map(|(_, b)| b)),
            Lane::Host(_) => record::host_crc(e.host.iter().map(|(_, v)| v)),
        };
        if got == crc {
            return Ok(());
        }
        let what = match e.sent.lane {
            Lane::Tx(_) => {
                let bytes: Vec<String> =
                    e.tx.iter()
                        .flat_map(|(_, b)| b.bytes())
                        .map(|b| format!("{b:02x}"))
                        .collect();
                format!(
                    "the packet the twin sent in cycles {}..{} differs from the RTL's (CRC-32 \
                     recorded {crc:08x}, the RTL's {got:08x}); the RTL's {} bytes: {}",
                    self.fabric(e.sent.first),
                    self.fabric(end.saturating_sub(1)),
                    bytes.len(),
                    bytes.join("")
                )
            }
            Lane::Host(h) => format!(
                "the MAD to the host ({h:?}) the twin gave in cycles {}..{} differs from the \
                 RTL's (CRC-32 recorded {crc:08x}, the RTL's {got:08x})",
                self.fabric(e.sent.first),
                self.fabric(end.saturating_sub(1))
            ),
        };
        Err(self.miss(Some(usize::from(e.sent.port)), e.sent.first, what))
    }

    fn end(&mut self) -> Result<(), Mismatch> {
        if !self.taken.is_empty() {
            let now = self.rtl.cycle();
            return Err(self.miss(
                None,
                now,
                format!(
                    "the RTL took MADs held whole that the record does not have: {:?}",
                    self.taken
                ),
            ));
        }
        Ok(())
    }
}

/// A burst the record has, and what the RTL showed in its cycles.
struct Expect {
    sent: Sent,
    tx: Vec<(u64, Beat)>,
    host: Vec<(u64, DevOut)>,
}

/// The port (1..N) of a lane.
fn lane_port(l: Lane) -> Option<usize> {
    match l {
        Lane::Tx(p) => Some(p + 1),
        Lane::Host(_) => None,
    }
}

/// Reports of shards, one whole: every device once, by index.
pub fn merge(parts: &[(PathBuf, Report)]) -> Result<Report> {
    let mut devs: BTreeMap<usize, DeviceReport> = BTreeMap::new();
    let mut build = None::<String>;
    let mut recorded = 0;
    for (path, r) in parts {
        if let Some(b) = &build {
            if *b != r.build {
                return Err(input(format!(
                    "{}: a report of another build ({}, the others {b})",
                    path.display(),
                    r.build
                )));
            }
        }
        build = Some(r.build.clone());
        recorded = recorded.max(r.recorded);
        for d in &r.devices {
            if devs.insert(d.index, d.clone()).is_some() {
                return Err(input(format!(
                    "{}: device {:?} is in two reports",
                    path.display(),
                    d.id
                )));
            }
        }
    }
    Ok(Report {
        build: build.unwrap_or_default(),
        recorded,
        devices: devs.into_values().collect(),
        wall: parts.iter().map(|(_, r)| r.wall).fold(0.0, f64::max),
        workers: parts.iter().map(|(_, r)| r.workers).sum(),
    })
}

impl Report {
    /// Whether every device checked matched.
    pub fn ok(&self) -> bool {
        self.devices.iter().all(|d| d.mismatch.is_none())
    }

    /// The report's lines that do not depend on how it was run (workers,
    /// shards, times): one per mismatch, then the totals.
    pub fn content(&self) -> String {
        let mut s = String::new();
        for d in &self.devices {
            if let Some(m) = &d.mismatch {
                let port = m.port.map(|p| format!("port {p}, ")).unwrap_or_default();
                s += &format!(
                    "MISMATCH {} ({} {} ports, DataW {}): {port}cycle {}: {}\n",
                    d.id, d.kind, d.nports, d.data_w, m.cycle, m.what
                );
            }
        }
        let packets: u64 = self.devices.iter().map(|d| d.packets).sum();
        let mads: u64 = self.devices.iter().map(|d| d.host_mads).sum();
        let cycles: u64 = self.devices.iter().map(|d| d.rtl_cycles).sum();
        let bad = self.devices.iter().filter(|d| d.mismatch.is_some()).count();
        s += &format!(
            "{} of {} recorded devices checked: {} packets and {} MADs to hosts compared, \
             {} RTL cycles, {} mismatching\n",
            self.devices.len(),
            self.recorded,
            packets,
            mads,
            cycles,
            bad
        );
        s
    }

    /// [`Report::content`], then the time, the workers and the busiest
    /// device.
    pub fn text(&self) -> String {
        let mut s = self.content();
        let total: f64 = self.devices.iter().map(|d| d.secs).sum();
        if let Some(b) = self.devices.iter().max_by(|a, b| a.secs.total_cmp(&b.secs)) {
            s += &format!(
                "wall {:.2} s on {} worker(s); replays {:.2} CPU s, the busiest {} {:.2} s ({:.0} %)\n",
                self.wall,
                self.workers,
                total,
                b.id,
                b.secs,
                if total > 0.0 { 100.0 * b.secs / total } else { 0.0 }
            );
        }
        s
    }
}
