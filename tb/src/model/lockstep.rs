//! Two back ends of one device stepped side by side: the RTL (the truth)
//! and another model of it (a twin), given the same inputs in every cycle.
//! [`Lockstep`] is a [`Dut`] whose outputs are the RTL's; after every step
//! it compares the other model's outputs with them and fails the step at
//! the first cycle where they differ, naming each field that differs and
//! both values.
//!
//! What is compared is what a stream's consumer may look at (AXI-Stream):
//! a stream's data, keep, last and sideband fields only in a cycle where
//! its `tvalid` is 1, and data bytes only where `tkeep` is set; the
//! verdicts that ride on a last beat only on that beat. Every ready,
//! register read, state, counter output and `idle` is compared in every
//! cycle.
//!
//! The other model runs as it does in a fabric: where it says it is calm
//! ([`Dut::calm_until`]) and a cycle's inputs are at rest, it is not
//! stepped; its outputs in that cycle are those of its last step with the
//! beats of the bursts it announced ([`Dut::take_tx_bursts`]) on `tx_*`,
//! and they are compared with the RTL's all the same. In the first cycle
//! that is not calm it is skipped up to it and stepped.

use anyhow::{bail, ensure, Result};
use vl15_bindings::{Changed, DevIn, DevOut, PortIn, PortOut};

use std::collections::VecDeque;

use crate::model::dut::{
    host_ready, inputs_at_rest, set_host_ready, show_host, shows_tx_beat, Dut, HostBurst, HostIn,
    HostTaken, TxBurst,
};
use crate::model::held::{self, HeldMad};
use crate::model::stream::Beat;

/// What a model given bursts takes ahead (the beats of receive bursts,
/// MADs held whole from the host), fed to the RTL of the same device in
/// their cycles, as a fabric would drive them: beside a twin
/// ([`Lockstep`]), and in a replay of a twin's record (`vl15 check-rtl`).
pub struct RtlFeed {
    /// Per port index: the beats still to come, (cycle, beat).
    rx: Vec<VecDeque<(u64, Beat)>>,
    /// The RTL's port inputs in a cycle with such a beat.
    pin: Vec<PortIn>,
    /// MADs offered whole (`sma_tx`, `sm_tx`, `trap_tx`), given beat by
    /// beat, and those the RTL took whole in the last step.
    pub host: Vec<HeldMad>,
    pub taken: Vec<HostTaken>,
}

impl RtlFeed {
    pub fn new(nports: usize) -> Self {
        RtlFeed {
            rx: vec![VecDeque::new(); nports],
            pin: Vec::new(),
            host: Vec::new(),
            taken: Vec::new(),
        }
    }

    /// One cycle of `rtl` with `i` and `pin` and what is due in it.
    pub fn step(
        &mut self,
        rtl: &mut dyn Dut,
        i: &DevIn,
        pin: &[PortIn],
        changed: Changed<'_>,
    ) -> Result<DevOut> {
        let cycle = rtl.cycle();
        let ri = if self.host.is_empty() {
            *i
        } else {
            held::offer(i, cycle, &self.host)
        };
        let o = if self.rx.iter().all(VecDeque::is_empty) {
            rtl.step(&ri, pin, changed)?
        } else {
            self.pin.clear();
            self.pin.extend_from_slice(pin);
            for (q, p) in self.rx.iter_mut().zip(self.pin.iter_mut()) {
                if !p.link_up {
                    q.clear();
                }
                while q.front().is_some_and(|(c, _)| *c < cycle) {
                    q.pop_front();
                }
                if let Some((_, b)) = q.front().filter(|(c, _)| *c == cycle) {
                    p.rx_tdata = b.data;
                    p.rx_tkeep = b.keep;
                    p.rx_tlast = b.last;
                    p.rx_tvalid = true;
                    q.pop_front();
                }
            }
            rtl.step(&ri, &self.pin, Changed::All)?
        };
        self.taken.clear();
        if !self.host.is_empty() {
            held::note_taken(&mut self.host, &o, cycle, &mut self.taken);
        }
        Ok(o)
    }

    /// Beats that arrive on port index `port` one a cycle from `first`.
    pub fn rx_burst(&mut self, port: usize, first: u64, beats: &[Beat]) {
        if let Some(q) = self.rx.get_mut(port) {
            q.extend((first..).zip(beats.iter().copied()));
        }
    }

    /// Those beats of port index `port` from cycle `from` on do not come.
    pub fn rx_burst_cut(&mut self, port: usize, from: u64) {
        if let Some(q) = self.rx.get_mut(port) {
            q.retain(|(c, _)| *c < from);
        }
    }

    /// A MAD offered whole on `s` from `first`.
    pub fn hold(&mut self, s: HostIn, first: u64, beats: &[Beat], side: &DevIn) {
        self.host.push(HeldMad::new(s, first, beats, side, 0));
    }

    /// Whether anything is still to come.
    pub fn pending(&self) -> bool {
        !self.host.is_empty() || self.rx.iter().any(|q| !q.is_empty())
    }

    /// Nothing to come (a reset).
    pub fn clear(&mut self) {
        self.host.clear();
        self.taken.clear();
    }
}

/// The RTL and a second model of the same device, in lockstep.
pub struct Lockstep {
    rtl: Box<dyn Dut>,
    other: Box<dyn Dut>,
    /// Cycles compared.
    compared: u64,
    /// Cycles in which the other model was calm and not stepped.
    calm: u64,
    /// The other model's outputs of its last step, and the `link_up` of
    /// each port it saw.
    o_dev: DevOut,
    o_ports: Vec<PortOut>,
    o_link: Vec<bool>,
    /// Where the other model's last step left it calm (its inputs were at
    /// rest): the cycle it must be stepped again.
    o_calm: Option<u64>,
    /// The bursts it announced that have beats still to come.
    bursts: Vec<TxBurst>,
    /// Those its last step announced (a buffer reused).
    fresh: Vec<TxBurst>,
    /// Its port outputs in a calm cycle.
    view: Vec<PortOut>,
    /// What the other model took ahead (receive bursts, MADs held
    /// whole), which the RTL gets in their cycles.
    feed: RtlFeed,
    /// MADs the other model took whole, for the caller.
    o_taken: Vec<HostTaken>,
    taken_out: Vec<HostTaken>,
    /// MADs the other model announced to its host, with beats to come.
    host_out: Vec<HostBurst>,
    fresh_host: Vec<HostBurst>,
}

impl Lockstep {
    /// `rtl` and `other` must model the same device (ports, width), both
    /// not yet reset.
    pub fn new(rtl: Box<dyn Dut>, other: Box<dyn Dut>) -> Result<Self> {
        ensure!(
            rtl.num_ports() == other.num_ports() && rtl.data_w() == other.data_w(),
            "lockstep of two different devices: {} and {}",
            rtl.describe(),
            other.describe()
        );
        let n = rtl.num_ports() as usize;
        Ok(Lockstep {
            rtl,
            other,
            compared: 0,
            calm: 0,
            o_dev: DevOut::default(),
            o_ports: vec![PortOut::default(); n],
            o_link: vec![false; n],
            o_calm: None,
            bursts: Vec::new(),
            fresh: Vec::new(),
            view: vec![PortOut::default(); n],
            feed: RtlFeed::new(n),
            o_taken: Vec::new(),
            taken_out: Vec::new(),
            host_out: Vec::new(),
            fresh_host: Vec::new(),
        })
    }

    /// Cycles in which both models were compared.
    pub fn compared(&self) -> u64 {
        self.compared
    }

    /// Cycles of those in which the other model was calm: not stepped, its
    /// outputs those of its last step and its announced bursts.
    pub fn calm_cycles(&self) -> u64 {
        self.calm
    }

    /// The other model's outputs in `cycle`: stepped if it is not calm or
    /// an input is not at rest, else its last step's and its bursts'.
    fn other_step(
        &mut self,
        cycle: u64,
        i: &DevIn,
        pin: &[PortIn],
        changed: Changed<'_>,
    ) -> Result<(DevOut, bool)> {
        let calm = self.o_calm.is_some_and(|c| cycle < c)
            && self.other.cycle() <= cycle
            && inputs_at_rest(i, pin, &self.o_link);
        self.bursts
            .retain(|b| b.first + b.beats.len() as u64 > cycle);
        if calm {
            self.view.clone_from(&self.o_ports);
            for v in &mut self.view {
                v.tx_tvalid = false;
            }
            for b in &self.bursts {
                let Some(k) = cycle.checked_sub(b.first) else {
                    continue;
                };
                if let (Some(beat), Some(v)) = (b.beats.get(k as usize), self.view.get_mut(b.port))
                {
                    v.tx_tvalid = true;
                    v.tx_tdata = beat.data;
                    v.tx_tkeep = beat.keep;
                    v.tx_tlast = beat.last;
                }
            }
            let mut o = self.o_dev;
            o.sma_rx_tvalid = false;
            o.sm_rx_tvalid = false;
            if let Some(v) = self.other.calm_idle() {
                o.idle = v;
            }
            self.host_out
                .retain(|b| b.first + b.beats.len() as u64 > cycle);
            for b in &self.host_out {
                let Some(beat) = cycle
                    .checked_sub(b.first)
                    .and_then(|k| b.beats.get(k as usize))
                else {
                    continue;
                };
                show_host(&mut o, b, beat);
            }
            return Ok((o, true));
        }
        let lag = cycle.saturating_sub(self.other.cycle());
        let changed = if lag > 0 {
            self.other.skip(lag);
            Changed::All
        } else {
            changed
        };
        let at_rest = inputs_at_rest(i, pin, &self.o_link);
        let t = self.other.step(i, pin, changed)?;
        self.o_dev = t;
        self.o_ports.clear();
        self.o_ports.extend_from_slice(self.other.ports_out());
        self.o_link.clear();
        self.o_link.extend(pin.iter().map(|p| p.link_up));
        // A step inside a burst is the truth: a burst whose beat it does
        // not show is void from here on.
        let ports = &self.o_ports;
        self.bursts.retain(|b| {
            let k = (cycle - b.first.min(cycle)) as usize;
            cycle < b.first
                || b.beats
                    .get(k)
                    .is_some_and(|beat| ports.get(b.port).is_some_and(|o| shows_tx_beat(o, beat)))
        });
        // A burst announced again (after a stall) holds from its first
        // beat: it replaces what was announced on that port before.
        let mut new = std::mem::take(&mut self.fresh);
        self.other.take_tx_bursts(&mut new);
        for b in new.drain(..) {
            self.bursts.retain(|o| o.port != b.port);
            self.bursts.push(b);
        }
        self.fresh = new;
        // Host bursts likewise: a step inside shows the beat again, or the
        // rest is void.
        self.host_out.retain(|b| {
            let Some(k) = cycle.checked_sub(b.first) else {
                return true;
            };
            b.beats.get(k as usize).is_some_and(|beat| {
                let mut v = t;
                show_host(&mut v, b, beat);
                v == t
            })
        });
        let mut new = std::mem::take(&mut self.fresh_host);
        self.other.take_host_bursts(&mut new);
        for b in new.drain(..) {
            self.host_out.retain(|o| o.stream != b.stream);
            self.host_out.push(b);
        }
        self.fresh_host = new;
        self.o_calm = if at_rest {
            self.other.calm_until()
        } else {
            None
        };
        Ok((t, false))
    }
}

/// Per 8 bits of a `keep`, the mask of their bytes in a 64-bit word.
const BYTE_MASKS: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut k = 0;
    while k < 256 {
        let mut b = 0;
        while b < 8 {
            if k & (1 << b) != 0 {
                t[k] |= 0xFF << (8 * b);
            }
            b += 1;
        }
        k += 1;
    }
    t
};

/// Keep the bytes of `d` (two 64-bit words, byte 0 in bits 7:0) whose
/// `keep` bit is set.
fn mask_bytes(d: [u64; 2], keep: u16) -> [u64; 2] {
    [
        d[0] & BYTE_MASKS[usize::from(keep as u8)],
        d[1] & BYTE_MASKS[usize::from(keep >> 8)],
    ]
}

/// A stream of `w` bits carries all its bytes on every beat but the last
/// (which has `tkeep`): the keep of a stream without one.
fn full_keep(w: u32) -> u16 {
    if w >= 128 {
        0xFFFF
    } else {
        (1u16 << (w / 8)) - 1
    }
}

/// `o` with every field a consumer may not look at set to 0.
pub fn visible_dev(o: &DevOut, w: u32) -> DevOut {
    let mut v = *o;
    if !v.sma_rx_tvalid {
        v.sma_rx_tdata = [0; 2];
        v.sma_rx_tlast = false;
        v.sma_rx_slid = 0;
        v.sma_rx_dlid = 0;
        v.sma_rx_sl = 0;
        v.sma_rx_port = 0;
        v.sma_rx_mgmt_class = 0;
        v.sma_rx_hop_ptr = 0;
        v.sma_rx_hop_cnt = 0;
    } else {
        v.sma_rx_tdata = mask_bytes(v.sma_rx_tdata, full_keep(w));
    }
    if !(v.sma_rx_tvalid && v.sma_rx_tlast) {
        v.sma_rx_mkey_viol = false;
        v.sma_rx_mkey_mask = false;
    }
    if !v.sm_rx_tvalid {
        v.sm_rx_tdata = [0; 2];
        v.sm_rx_tlast = false;
        v.sm_rx_slid = 0;
        v.sm_rx_dlid = 0;
        v.sm_rx_sl = 0;
        v.sm_rx_port = 0;
        v.sm_rx_mgmt_class = 0;
        v.sm_rx_hop_ptr = 0;
        v.sm_rx_hop_cnt = 0;
    } else {
        v.sm_rx_tdata = mask_bytes(v.sm_rx_tdata, full_keep(w));
    }
    if !v.gmp_rx_tvalid {
        v.gmp_rx_tdata = [0; 2];
        v.gmp_rx_tkeep = 0;
        v.gmp_rx_tlast = false;
    } else {
        v.gmp_rx_tdata = mask_bytes(v.gmp_rx_tdata, v.gmp_rx_tkeep);
    }
    if !(v.gmp_rx_tvalid && v.gmp_rx_tlast) {
        v.gmp_rx_tuser = false;
        v.gmp_rx_reason = 0;
    }
    v
}

/// `o` with every field a consumer may not look at set to 0.
pub fn visible_port(o: &PortOut) -> PortOut {
    let mut v = *o;
    if !v.tx_tvalid {
        v.tx_tdata = [0; 2];
        v.tx_tkeep = 0;
        v.tx_tlast = false;
    } else {
        v.tx_tdata = mask_bytes(v.tx_tdata, v.tx_tkeep);
    }
    if !v.drx_tvalid {
        v.drx_tdata = [0; 2];
        v.drx_tkeep = 0;
        v.drx_tlast = false;
    } else {
        v.drx_tdata = mask_bytes(v.drx_tdata, v.drx_tkeep);
    }
    if !(v.drx_tvalid && v.drx_tlast) {
        v.drx_tuser = false;
        v.drx_reason = 0;
    }
    v
}

/// Whether a stream's beats are equal where a consumer looks: `tvalid`
/// (given equal), then keep, last and the kept bytes.
fn beat_eq(va: bool, a: ([u64; 2], u16, bool), b: ([u64; 2], u16, bool)) -> bool {
    !va || (a.1 == b.1 && a.2 == b.2 && mask_bytes(a.0, a.1) == mask_bytes(b.0, b.1))
}

/// `visible_port(a) == visible_port(b)`, without building either: what
/// a lockstep compares for every port in every cycle.
pub fn visible_port_eq(a: &PortOut, b: &PortOut) -> bool {
    a.tx_tvalid == b.tx_tvalid
        && beat_eq(
            a.tx_tvalid,
            (a.tx_tdata, a.tx_tkeep, a.tx_tlast),
            (b.tx_tdata, b.tx_tkeep, b.tx_tlast),
        )
        && visible_port_eq_but_tx(a, b)
}

/// [`visible_port_eq`] of every field but `tx_*`.
pub fn visible_port_eq_but_tx(a: &PortOut, b: &PortOut) -> bool {
    a.drx_tvalid == b.drx_tvalid
        && a.dtx_tready == b.dtx_tready
        && a.port_state == b.port_state
        && a.mkey_prot == b.mkey_prot
        && a.mkey_viols == b.mkey_viols
        && a.sq_tx_beat == b.sq_tx_beat
        && beat_eq(
            a.drx_tvalid,
            (a.drx_tdata, a.drx_tkeep, a.drx_tlast),
            (b.drx_tdata, b.drx_tkeep, b.drx_tlast),
        )
        && (!(a.drx_tvalid && a.drx_tlast)
            || (a.drx_tuser == b.drx_tuser && a.drx_reason == b.drx_reason))
}

/// The `name: value` fields of two `{:?}` forms of one struct that differ,
/// as `name: a (RTL) vs b`.
pub fn field_diff(a: &str, b: &str) -> String {
    fn fields(s: &str) -> Vec<&str> {
        let inner = s
            .find('{')
            .and_then(|i| s.rfind('}').map(|j| &s[i + 1..j]))
            .unwrap_or(s);
        // Values hold no ", " except inside arrays: split at ", " that
        // starts a new `name:` only.
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = inner.as_bytes();
        let mut depth = 0i32;
        for (i, &c) in bytes.iter().enumerate() {
            match c {
                b'[' => depth += 1,
                b']' => depth -= 1,
                b',' if depth == 0 => {
                    out.push(inner[start..i].trim());
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.push(inner[start..].trim());
        out
    }
    let (fa, fb) = (fields(a), fields(b));
    fa.iter()
        .zip(fb.iter())
        .filter(|(x, y)| x != y)
        .map(|(x, y)| {
            let v = y.split_once(':').map_or(*y, |(_, v)| v.trim());
            format!("{x} (RTL) vs {v}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Dut for Lockstep {
    fn step(&mut self, i: &DevIn, pin: &[PortIn], changed: Changed<'_>) -> Result<DevOut> {
        let cycle = self.rtl.cycle();
        let o = self.feed.step(self.rtl.as_mut(), i, pin, changed)?;
        let (mut t, calm) = self.other_step(cycle, i, pin, changed)?;
        // A MAD held whole is taken by both in the same cycles; the other
        // model is stepped in the cycle it takes the last beat.
        self.o_taken.clear();
        if !calm {
            self.other.take_host_taken(&mut self.o_taken);
        }
        if self.o_taken != self.feed.taken {
            bail!(
                "{} and {} differ in cycle {cycle}: the MADs held whole taken by the RTL: {:?}, \
                 by the twin: {:?}",
                self.rtl.describe(),
                self.other.describe(),
                self.feed.taken,
                self.o_taken
            );
        }
        self.taken_out.extend_from_slice(&self.o_taken);
        if calm {
            // the tready of a stream whose MAD is held is not held calm
            for h in &self.feed.host {
                set_host_ready(&mut t, h.stream, host_ready(&o, h.stream));
            }
            for h in &self.feed.taken {
                set_host_ready(&mut t, h.stream, host_ready(&o, h.stream));
            }
        }
        let w = self.rtl.data_w();
        let mut diffs = Vec::new();
        // (equal outputs are equal where a consumer looks: most cycles)
        let (vo, vt) = if o == t {
            (o, t)
        } else {
            (visible_dev(&o, w), visible_dev(&t, w))
        };
        if vo != vt {
            diffs.push(format!(
                "device: {}",
                field_diff(&format!("{vo:?}"), &format!("{vt:?}"))
            ));
        }
        let other_ports = if calm {
            &self.view[..]
        } else {
            &self.o_ports[..]
        };
        for (p, (a, b)) in self.rtl.ports_out().iter().zip(other_ports).enumerate() {
            if !visible_port_eq(a, b) {
                let (va, vb) = (visible_port(a), visible_port(b));
                diffs.push(format!(
                    "port {}: {}",
                    p + 1,
                    field_diff(&format!("{va:?}"), &format!("{vb:?}"))
                ));
            }
        }
        if !diffs.is_empty() {
            bail!(
                "{} and {} differ in cycle {cycle}{}: {}",
                self.rtl.describe(),
                self.other.describe(),
                if calm { " (the twin calm)" } else { "" },
                diffs.join("; ")
            );
        }
        self.compared += 1;
        self.calm += u64::from(calm);
        Ok(o)
    }

    fn ports_out(&self) -> &[PortOut] {
        self.rtl.ports_out()
    }

    fn calm_cycles(&self) -> Option<u64> {
        Some(self.calm)
    }

    fn takes_rx_bursts(&self) -> bool {
        self.other.takes_rx_bursts()
    }

    fn rx_burst(&mut self, port: usize, first: u64, beats: &[Beat]) {
        // Its calm was judged without these beats: it is stepped when the
        // first arrives, as in a fabric.
        self.o_calm = self.o_calm.map(|c| c.min(first));
        self.feed.rx_burst(port, first, beats);
        self.other.rx_burst(port, first, beats);
    }

    fn host_burst(&mut self, s: HostIn, first: u64, beats: &[Beat], side: &DevIn) -> bool {
        if !self.other.host_burst(s, first, beats, side) {
            return false;
        }
        // Its calm was judged without it: it is stepped in `first`.
        self.o_calm = self.o_calm.map(|c| c.min(first));
        self.feed.hold(s, first, beats, side);
        true
    }

    fn take_host_taken(&mut self, out: &mut Vec<HostTaken>) {
        out.append(&mut self.taken_out);
    }

    fn rx_burst_cut(&mut self, port: usize, from: u64) {
        self.feed.rx_burst_cut(port, from);
        self.other.rx_burst_cut(port, from);
    }

    fn skip(&mut self, n: u64) {
        // Only while idle: the other model catches up at its next step.
        self.rtl.skip(n);
    }

    fn reset(&mut self, cycles: u32) -> Result<()> {
        let lag = self.rtl.cycle().saturating_sub(self.other.cycle());
        if lag > 0 {
            self.other.skip(lag);
        }
        self.o_calm = None;
        self.bursts.clear();
        self.host_out.clear();
        self.feed.clear();
        self.taken_out.clear();
        self.rtl.reset(cycles)?;
        self.other.reset(cycles)
    }

    fn cycle(&self) -> u64 {
        self.rtl.cycle()
    }

    fn num_ports(&self) -> u32 {
        self.rtl.num_ports()
    }

    fn data_w(&self) -> u32 {
        self.rtl.data_w()
    }

    fn describe(&self) -> String {
        format!(
            "{} in lockstep with {}",
            self.rtl.describe(),
            self.other.describe()
        )
    }

    fn trace_open(&mut self, path: &std::path::Path) -> Result<()> {
        self.rtl.trace_open(path)
    }

    fn trace_close(&mut self) {
        self.rtl.trace_close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_diff_names_each_differing_field() {
        let a = "DevOut { a: 1, b: [1, 2], c: true }";
        let b = "DevOut { a: 1, b: [1, 3], c: false }";
        assert_eq!(
            field_diff(a, b),
            "b: [1, 2] (RTL) vs [1, 3], c: true (RTL) vs false"
        );
    }

    #[test]
    fn visible_port_eq_is_equality_of_visible_ports() {
        // every field drawn from a few values, so that pairs often agree
        let mut x: u64 = 0x1234_5678_9ABC_DEF1;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut draw = || PortOut {
            tx_tdata: [next(3), next(2) << 60],
            tx_tkeep: [0, 1, 0xFFFF, 0x8000][next(4) as usize],
            tx_tvalid: next(2) == 0,
            tx_tlast: next(2) == 0,
            drx_tdata: [next(2) << 8, next(2)],
            drx_tkeep: [0, 0x0002, 0xFFFF][next(3) as usize],
            drx_tvalid: next(2) == 0,
            drx_tlast: next(2) == 0,
            drx_tuser: next(2) == 0,
            drx_reason: next(2) as u8,
            dtx_tready: next(4) != 0,
            port_state: if next(8) == 0 { 2 } else { 4 },
            mkey_prot: if next(8) == 0 { 1 } else { 0 },
            mkey_viols: if next(8) == 0 { 1 } else { 0 },
            sq_tx_beat: next(8) == 0,
        };
        let (mut same, mut differ) = (0, 0);
        for _ in 0..20_000 {
            let (a, b) = (draw(), draw());
            let want = visible_port(&a) == visible_port(&b);
            assert_eq!(visible_port_eq(&a, &b), want, "{a:?} {b:?}");
            if want {
                same += 1;
            } else {
                differ += 1;
            }
        }
        assert!(same > 100 && differ > 100, "{same} {differ}");
    }

    #[test]
    fn invisible_fields_are_not_compared() {
        let mut a = PortOut {
            tx_tdata: [0x1122, 7],
            tx_tkeep: 0x0001,
            tx_tvalid: true,
            ..PortOut::default()
        };
        let mut b = a;
        b.tx_tdata[0] = 0x9922; // byte 1 is not kept
        b.tx_tdata[1] = 9;
        assert_eq!(visible_port(&a), visible_port(&b));
        b.tx_tdata[0] = 0x1123;
        assert_ne!(visible_port(&a), visible_port(&b));
        a.tx_tvalid = false;
        b.tx_tvalid = false;
        assert_eq!(visible_port(&a), visible_port(&b));
    }
}
