//! The twins of the CA tops: `ib_ca_top` as [`crate::model::dut::CaTopDut`]
//! presents it (one port, its registers at `mpreg::port(1, a)`), and
//! `ib_ca_mp_top` (rtl/ib_ca_mp_top.sv) with 1 or 2 ports. Both compose the
//! one-port twin [`super::ca::CaPort`]; the multiport top adds what
//! rtl/ib_ca_mp_top.sv adds around its ports, all combinational or one
//! register deep:
//! - `smi_port_mux` (rtl/smi_port_mux.sv:58) on sma_rx and sm_rx: a
//!   round-robin grant among the ports presenting a beat, locked for the
//!   packet, no added latency;
//! - `smi_port_demux` (rtl/smi_port_demux.sv:32) on the three send
//!   streams: the tag picks the port; a bad tag is taken and counted
//!   (TX_BAD_PORT, register 0x0001, one cycle later);
//! - the register bus: port p's registers at `p << 8 | a`, 0x0000 the id.
//!
//! The ports' gated clocks (rtl/ib_ca_mp_top.sv:193) change no behaviour: a
//! port is unclocked only while it is idle and gets no input.

use anyhow::Result;
use vl15_bindings::{Changed, DevIn, DevOut, PortIn, PortOut};

use super::ca::{CaPort, PortCtl, PortOuts};
use crate::model::dut::{
    port_at_rest, rest_dev_in, set_host_ready, show_host, Dut, HostBurst, HostIn, HostOut,
    HostTaken, TxBurst,
};
use crate::model::held::{self, HeldMad};
use crate::model::lockstep::visible_dev;
use crate::model::stream::Beat;

/// A round-robin packet mux of `smi_port_mux`.
#[derive(Debug, Clone)]
struct Mux {
    lock: bool,
    sel: usize,
    rr: usize,
}

impl Mux {
    fn new(n: usize) -> Self {
        Mux {
            lock: false,
            sel: 0,
            rr: n - 1,
        }
    }
    /// The port granted among `n`, of which `valid(i)` present a beat.
    fn pick(&self, n: usize, valid: impl Fn(usize) -> bool) -> usize {
        if self.lock {
            return self.sel;
        }
        (1..=n)
            .map(|k| (self.rr + k) % n)
            .find(|&i| valid(i))
            .unwrap_or(self.rr)
    }
    fn update(&mut self, sel: usize, valid: bool, ready: bool, last: bool) {
        if valid {
            if !self.lock {
                self.rr = sel;
                self.sel = sel;
            }
            self.lock = !(ready && last);
        }
    }
}

/// The twin of a CA top.
pub struct CaTwin {
    ports: Vec<CaPort>,
    /// `ib_ca_mp_top` (else `ib_ca_top` behind `CaTopDut`).
    mp: bool,
    data_w: u32,
    sma_mux: Mux,
    sm_mux: Mux,
    bad_tag: u32,
    pout: Vec<PortOut>,
    pin_last: Vec<PortIn>,
    /// The ports' outputs of the cycle being stepped (a buffer reused).
    outs: Vec<PortOuts>,
    cycle: u64,
    /// After a step at rest: the cycle it must be stepped again in
    /// ([`Dut::calm_until`]), and `idle` until then where it is not the
    /// step's ([`Dut::calm_idle`]).
    calm: Option<u64>,
    calm_idle: Option<bool>,
    /// The bursts the last step announced.
    bursts: Vec<TxBurst>,
    /// The MADs to the host the last step announced, and those announced
    /// with beats still to come (what a calm cycle shows on sma_rx, sm_rx).
    host_bursts: Vec<HostBurst>,
    host_live: Vec<HostBurst>,
    /// Buffers reused: the outputs of the next cycle at rest.
    rest_pin: Vec<PortIn>,
    rest_outs: Vec<PortOuts>,
    rest_pout: Vec<PortOut>,
    beats: Vec<Beat>,
    /// MADs held for the send streams, and those taken whole by the last
    /// step.
    held: Vec<HeldMad>,
    taken: Vec<HostTaken>,
}

impl CaTwin {
    /// The twin of `ib_ca_top` at `data_w`.
    pub fn ca_top(data_w: u32) -> Self {
        Self::new(1, data_w, false)
    }

    /// The twin of `ib_ca_mp_top` with `nports` ports at `data_w`.
    pub fn ca_mp(nports: u8, data_w: u32) -> Self {
        Self::new(usize::from(nports), data_w, true)
    }

    fn new(n: usize, data_w: u32, mp: bool) -> Self {
        CaTwin {
            ports: (0..n).map(|i| CaPort::new(data_w, (i + 1) as u8)).collect(),
            mp,
            data_w,
            sma_mux: Mux::new(n),
            sm_mux: Mux::new(n),
            bad_tag: 0,
            pout: vec![PortOut::default(); n],
            pin_last: vec![PortIn::default(); n],
            outs: Vec::with_capacity(n),
            cycle: 0,
            calm: None,
            calm_idle: None,
            bursts: Vec::new(),
            host_bursts: Vec::new(),
            host_live: Vec::new(),
            rest_pin: vec![PortIn::default(); n],
            rest_outs: Vec::with_capacity(n),
            rest_pout: vec![PortOut::default(); n],
            beats: Vec::new(),
            held: Vec::new(),
            taken: Vec::new(),
        }
    }

    /// The port a tag names, if any.
    fn tagged(&self, tag: u8) -> Option<usize> {
        if !self.mp {
            return Some(0);
        }
        let p = usize::from(tag);
        (p >= 1 && p <= self.ports.len()).then(|| p - 1)
    }
}

impl CaTwin {
    /// The outputs of the cycle about to be evaluated with inputs `i` and
    /// `pin`: the device's (returned), each port's (into `pout`), each
    /// port's before the muxes (into `outs`), and the ports the receive
    /// muxes grant (SMA, SM).
    fn present(
        &self,
        i: &DevIn,
        pin: &[PortIn],
        outs: &mut Vec<PortOuts>,
        pout: &mut [PortOut],
    ) -> (DevOut, usize, usize) {
        let n = self.ports.len();
        let reg_port = (i.reg_addr >> 8) as usize;
        let low = (i.reg_addr & 0xFF) as u8;
        outs.clear();
        outs.extend(
            self.ports
                .iter()
                .zip(pin)
                .map(|(p, pi)| p.outputs(low, pi.link_up)),
        );
        // the receive muxes
        let sma_sel = self.sma_mux.pick(n, |k| outs[k].sma.valid);
        let sm_sel = self.sm_mux.pick(n, |k| outs[k].sm.valid);
        // the send demuxes
        let sma_to = self.tagged(i.sma_tx_port);
        let sm_to = self.tagged(i.sm_tx_port);
        let trap_to = self.tagged(i.trap_tx_port);
        let mut o = DevOut::default();
        let s = &outs[sma_sel];
        o.sma_rx_tvalid = s.sma.valid;
        o.sma_rx_tdata = s.sma.data;
        o.sma_rx_tlast = s.sma.last;
        o.sma_rx_slid = s.sma.slid;
        o.sma_rx_dlid = s.sma.dlid;
        o.sma_rx_sl = s.sma.sl;
        o.sma_rx_port = (sma_sel + 1) as u8;
        o.sma_rx_mgmt_class = s.sma.class;
        o.sma_rx_hop_ptr = s.sma.hop_ptr;
        o.sma_rx_hop_cnt = s.sma.hop_cnt;
        o.sma_rx_mkey_viol = s.mkey_viol;
        o.sma_rx_mkey_mask = s.mkey_mask;
        let s = &outs[sm_sel];
        o.sm_rx_tvalid = s.sm.valid;
        o.sm_rx_tdata = s.sm.data;
        o.sm_rx_tlast = s.sm.last;
        o.sm_rx_slid = s.sm.slid;
        o.sm_rx_dlid = s.sm.dlid;
        o.sm_rx_sl = s.sm.sl;
        o.sm_rx_port = (sm_sel + 1) as u8;
        o.sm_rx_mgmt_class = s.sm.class;
        o.sm_rx_hop_ptr = s.sm.hop_ptr;
        o.sm_rx_hop_cnt = s.sm.hop_cnt;
        o.sma_tx_tready = sma_to.map_or(true, |p| outs[p].sma_tx_tready);
        o.sm_tx_tready = sm_to.map_or(true, |p| outs[p].sm_tx_tready);
        o.trap_tx_tready = trap_to.map_or(true, |p| outs[p].trap_tx_tready);
        o.idle = outs.iter().all(|x| x.idle);
        o.reg_rdata = if self.mp {
            let mut r = match i.reg_addr {
                0 => 0x564C_4D50,
                1 => self.bad_tag,
                _ => 0,
            };
            if reg_port >= 1 && reg_port <= n {
                r = outs[reg_port - 1].reg_rdata;
            }
            r
        } else if reg_port == 1 {
            outs[0].reg_rdata
        } else {
            0
        };
        if !self.mp {
            // ib_ca_top's streams carry no tag: CaTopDut reports port 1
            o.sma_rx_port = 1;
            o.sm_rx_port = 1;
        }
        // this cycle's port outputs
        for (k, p) in self.ports.iter().enumerate() {
            let (v, data, keep, last) = p.tx_out();
            let any = [
                sma_to == Some(k) && i.sma_tx_tvalid,
                sm_to == Some(k) && i.sm_tx_tvalid,
                trap_to == Some(k) && i.trap_tx_tvalid,
            ];
            let (dv, dd, dk, dl, du, dr) = p.drx();
            pout[k] = PortOut {
                drx_tvalid: dv,
                drx_tdata: dd,
                drx_tkeep: dk,
                drx_tlast: dl,
                drx_tuser: du,
                drx_reason: dr,
                tx_tdata: data,
                tx_tkeep: keep,
                tx_tvalid: v,
                tx_tlast: last,
                dtx_tready: p.dtx_tready(pin[k].tx_tready),
                port_state: p.port_state(),
                mkey_prot: p.mkey_prot(),
                mkey_viols: p.mkey_viols(),
                sq_tx_beat: p.sq_beat(any.iter().any(|&x| x), any),
            };
        }
        (o, sma_sel, sm_sel)
    }

    /// `i` with the beats of the MADs held offered on their streams in
    /// cycle `c`.
    fn with_held(&self, i: &DevIn, c: u64) -> DevIn {
        held::offer(i, c, &self.held)
    }

    /// Per send source (SMA, SM, trap), whether a MAD held for port `k` is
    /// offered from the next cycle on.
    fn fed(&self, k: usize) -> [bool; 3] {
        held::fed(&self.held, self.cycle, k)
    }

    /// Where one MAD is held and its port's send engine runs through it
    /// with nothing else moving: up to `left` cycles at rest at once, not
    /// the one taking its last beat (a step); how many.
    fn held_jump(&mut self, left: u64) -> Option<u64> {
        let [h] = &mut self.held[..] else {
            return None;
        };
        let (src, run) = self.ports[h.port].sq_run()?;
        if src != h.stream as usize || run == 0 || self.cycle < h.first {
            return None;
        }
        let quiet = self
            .ports
            .iter()
            .zip(&self.pin_last)
            .enumerate()
            .all(|(k, (p, pi))| {
                if k == h.port {
                    p.quiet_but_sq(pi.link_up)
                } else {
                    p.settled(pi.link_up)
                }
            });
        if !quiet {
            return None;
        }
        let n = self
            .ports
            .iter()
            .filter_map(CaPort::rx_next)
            .map(|c| c.saturating_sub(self.cycle))
            .fold(left.min(run), u64::min);
        if n == 0 {
            return None;
        }
        let (taken, first) = self.ports[h.port].sq_jump(n, &h.beats, h.k);
        h.took(taken, self.cycle + first.unwrap_or(0));
        for (k, p) in self.ports.iter_mut().enumerate() {
            if k != h.port {
                p.jump(n);
            }
        }
        self.cycle += n;
        Some(n)
    }

    /// One cycle with inputs `i` (and the MADs held) and `pin_last`: its
    /// outputs (the ports' into `pout`), then every port and mux moves on.
    fn eval(&mut self, i: &DevIn) -> DevOut {
        if self.held.is_empty() {
            return self.eval_with(i);
        }
        let c = self.cycle;
        let x = self.with_held(i, c);
        let o = self.eval_with(&x);
        held::note_taken(&mut self.held, &o, c, &mut self.taken);
        o
    }

    fn eval_with(&mut self, i: &DevIn) -> DevOut {
        let mut outs = std::mem::take(&mut self.outs);
        let mut pout = std::mem::take(&mut self.pout);
        let (o, sma_sel, sm_sel) = self.present(i, &self.pin_last, &mut outs, &mut pout);
        self.outs = outs;
        self.pout = pout;
        let reg_port = (i.reg_addr >> 8) as usize;
        let sma_to = self.tagged(i.sma_tx_port);
        let sm_to = self.tagged(i.sm_tx_port);
        let trap_to = self.tagged(i.trap_tx_port);
        let rq_to = self.tagged(i.sm_rq_port);
        for (k, pk) in self.pin_last.iter().enumerate() {
            let ctl = PortCtl {
                sma_rx_tready: sma_sel == k && i.sma_rx_tready,
                sm_rx_tready: sm_sel == k && i.sm_rx_tready,
                sma_tx_valid: sma_to == Some(k) && i.sma_tx_tvalid,
                sm_tx_valid: sm_to == Some(k) && i.sm_tx_tvalid,
                trap_tx_valid: trap_to == Some(k) && i.trap_tx_tvalid,
                rq_post: rq_to == Some(k) && i.sm_rq_post,
                rq_clr: rq_to == Some(k) && i.sm_rq_clr,
                reg_we: i.reg_we && reg_port == k + 1,
            };
            self.ports[k].step(i, pk, &ctl);
        }
        self.sma_mux
            .update(sma_sel, o.sma_rx_tvalid, i.sma_rx_tready, o.sma_rx_tlast);
        self.sm_mux
            .update(sm_sel, o.sm_rx_tvalid, i.sm_rx_tready, o.sm_rx_tlast);
        if self.mp {
            if i.reg_we && i.reg_addr == 1 {
                self.bad_tag = 0;
            } else {
                let bad = |v: bool, l: bool, to: Option<usize>| u32::from(v && l && to.is_none());
                self.bad_tag = self
                    .bad_tag
                    .wrapping_add(bad(i.sma_tx_tvalid, i.sma_tx_tlast, sma_to))
                    .wrapping_add(bad(i.sm_tx_tvalid, i.sm_tx_tlast, sm_to))
                    .wrapping_add(bad(i.trap_tx_tvalid, i.trap_tx_tlast, trap_to));
            }
        }
        self.cycle += 1;
        o
    }

    /// After a step with outputs `o`: the MADs announced before that it
    /// does not show the beat of are void; a MAD the RX buffer presents
    /// from the next cycle on, granted its stream at rest, is announced.
    fn host_announce(&mut self, o: &DevOut) {
        let c = self.cycle - 1;
        self.host_live.retain(|b| {
            let Some(k) = c.checked_sub(b.first) else {
                return true;
            };
            b.beats.get(k as usize).is_some_and(|beat| {
                let mut v = *o;
                show_host(&mut v, b, beat);
                v == *o
            }) && b.first + b.beats.len() as u64 > c + 1
        });
        self.host_bursts.clear();
        if self.ports.iter().all(|p| p.host_mad_start().is_none()) {
            return;
        }
        let t = self.cycle;
        let mut rest_pin = std::mem::take(&mut self.rest_pin);
        let mut outs = std::mem::take(&mut self.rest_outs);
        let mut pout = std::mem::take(&mut self.rest_pout);
        for (r, p) in rest_pin.iter_mut().zip(&self.pin_last) {
            *r = rest_port_in(p.link_up);
        }
        let (r, sma_sel, sm_sel) = self.present(&rest_dev_in(), &rest_pin, &mut outs, &mut pout);
        self.rest_pin = rest_pin;
        self.rest_outs = outs;
        self.rest_pout = pout;
        for (stream, sel, valid) in [
            (HostOut::SmaRx, sma_sel, r.sma_rx_tvalid),
            (HostOut::SmRx, sm_sel, r.sm_rx_tvalid),
        ] {
            let sm = stream == HostOut::SmRx;
            let Some(p) = self.ports.get_mut(sel) else {
                continue;
            };
            if !valid || p.host_mad_start() != Some(sm) {
                continue;
            }
            let (viol, mask) = p.host_mad(&mut self.beats);
            p.note_host_burst();
            let mut side = r;
            side.sma_rx_mkey_viol = viol;
            side.sma_rx_mkey_mask = mask;
            let b = HostBurst {
                stream,
                first: t,
                beats: self.beats.clone(),
                side,
            };
            self.host_live.retain(|x| x.stream != stream);
            self.host_live.push(b.clone());
            self.host_bursts.push(b);
        }
    }

    /// After a step at rest with outputs `o` (the ports' in `pout`): the
    /// first cycle it must be stepped again in if its inputs stay at rest,
    /// where that is after the next one.
    fn calm_after(&mut self, o: &DevOut) -> Option<u64> {
        let t = self.cycle;
        let u = self
            .ports
            .iter()
            .zip(&self.pin_last)
            .enumerate()
            .map(|(k, (p, pi))| p.calm_end(pi.link_up, self.fed(k)))
            .min()?;
        if u <= t {
            return None;
        }
        // the outputs of cycle t at rest are this step's (but tx_*)
        let mut rest_pin = std::mem::take(&mut self.rest_pin);
        let mut outs = std::mem::take(&mut self.rest_outs);
        let mut pout = std::mem::take(&mut self.rest_pout);
        for (r, p) in rest_pin.iter_mut().zip(&self.pin_last) {
            *r = rest_port_in(p.link_up);
        }
        let rest = self.with_held(&rest_dev_in(), t);
        let (mut r, _, _) = self.present(&rest, &rest_pin, &mut outs, &mut pout);
        // sma_rx and sm_rx show what the MADs announced show then, or no
        // beat; the tready of a stream whose MAD is held is not held
        let mut view = *o;
        for h in &self.held {
            set_host_ready(&mut r, h.stream, false);
            set_host_ready(&mut view, h.stream, false);
        }
        view.sma_rx_tvalid = false;
        view.sm_rx_tvalid = false;
        for b in &self.host_live {
            if let Some(beat) = t.checked_sub(b.first).and_then(|k| b.beats.get(k as usize)) {
                show_host(&mut view, b, beat);
            }
        }
        // idle may change once, in the first calm cycle (the ports' calm
        // ends no later than it changes again)
        self.calm_idle = (r.idle != view.idle).then_some(r.idle);
        view.idle = r.idle;
        let w = self.data_w;
        let same = visible_dev(&r, w) == visible_dev(&view, w)
            && r.reg_rdata == o.reg_rdata
            && pout.iter().zip(&self.pout).all(|(a, b)| same_but_tx(a, b));
        self.rest_pin = rest_pin;
        self.rest_outs = outs;
        self.rest_pout = pout;
        same.then_some(u)
    }
}

/// A port's inputs at rest with `link_up`.
fn rest_port_in(link_up: bool) -> PortIn {
    PortIn {
        link_up,
        tx_tready: true,
        ..PortIn::default()
    }
}

/// Whether two ports' outputs are the same but for `tx_*`.
fn same_but_tx(a: &PortOut, b: &PortOut) -> bool {
    let strip = |p: &PortOut| PortOut {
        tx_tdata: [0; 2],
        tx_tkeep: 0,
        tx_tvalid: false,
        tx_tlast: false,
        ..*p
    };
    strip(a) == strip(b)
}

impl Dut for CaTwin {
    fn step(&mut self, i: &DevIn, pin: &[PortIn], changed: Changed<'_>) -> Result<DevOut> {
        let n = self.ports.len();
        anyhow::ensure!(
            pin.len() == n,
            "{} has {n} ports, not {}",
            self.describe(),
            pin.len()
        );
        // inputs_at_rest, against the link_ups of the step before
        let at_rest = *i == rest_dev_in()
            && pin
                .iter()
                .zip(&self.pin_last)
                .all(|(p, l)| port_at_rest(p, l.link_up));
        match changed {
            Changed::All => self.pin_last.copy_from_slice(pin),
            Changed::Ports(ps) => {
                for &p in ps {
                    let p = usize::from(p);
                    if p < n {
                        self.pin_last[p] = pin[p];
                    }
                }
            }
        }
        let o = self.eval(i);
        self.host_announce(&o);
        self.bursts.clear();
        for (k, p) in self.ports.iter_mut().enumerate() {
            if let Some(first) = p.announce(&mut self.beats) {
                self.bursts.push(TxBurst {
                    port: k,
                    first,
                    beats: self.beats.clone(),
                });
            }
        }
        self.calm_idle = None;
        self.calm = if at_rest { self.calm_after(&o) } else { None };
        Ok(o)
    }

    fn calm_until(&self) -> Option<u64> {
        self.calm
    }

    fn calm_idle(&self) -> Option<bool> {
        self.calm_idle
    }

    fn take_tx_bursts(&mut self, out: &mut Vec<TxBurst>) {
        out.append(&mut self.bursts);
    }

    fn take_host_bursts(&mut self, out: &mut Vec<HostBurst>) {
        out.append(&mut self.host_bursts);
    }

    fn host_burst(&mut self, s: HostIn, first: u64, beats: &[Beat], side: &DevIn) -> bool {
        // a whole MAD for a port its tag names (a bad tag's beats are
        // taken and counted as they come), one at a time per stream
        let Some(port) = self.tagged(held::tag(s, side)) else {
            return false;
        };
        let mad_beats = (2048 / self.data_w) as usize;
        if !held::can_hold(&self.held, s, first, self.cycle, beats, mad_beats) {
            return false;
        }
        self.held.push(HeldMad::new(s, first, beats, side, port));
        // (its caller steps it in `first`)
        self.calm = self.calm.map(|c| c.min(first));
        true
    }

    fn take_host_taken(&mut self, out: &mut Vec<HostTaken>) {
        out.append(&mut self.taken);
    }

    fn takes_rx_bursts(&self) -> bool {
        true
    }

    fn rx_burst(&mut self, port: usize, first: u64, beats: &[Beat]) {
        if let Some(p) = self.ports.get_mut(port) {
            p.rx_burst(first, beats);
            // (its caller steps it in `first`)
            self.calm = self.calm.map(|c| c.min(first));
        }
    }

    fn rx_burst_cut(&mut self, port: usize, from: u64) {
        if let Some(p) = self.ports.get_mut(port) {
            p.rx_burst_cut(from);
        }
    }

    fn ports_out(&self) -> &[PortOut] {
        &self.pout
    }

    fn skip(&mut self, n: u64) {
        // cycles at rest, evaluated until nothing moves but the count
        let rest = rest_dev_in();
        let mut left = n;
        while left > 0 {
            if let Some(n) = self.held_jump(left) {
                left -= n;
                continue;
            }
            if self.held.is_empty()
                && self
                    .ports
                    .iter()
                    .zip(&self.pin_last)
                    .all(|(p, pi)| p.settled(pi.link_up))
            {
                // up to the first beat taken ahead
                let n = self
                    .ports
                    .iter()
                    .filter_map(CaPort::rx_next)
                    .min()
                    .map_or(left, |c| left.min(c.saturating_sub(self.cycle)));
                if n > 0 {
                    for p in &mut self.ports {
                        p.jump(n);
                    }
                    self.cycle += n;
                    left -= n;
                    continue;
                }
            }
            for pi in &mut self.pin_last {
                *pi = rest_port_in(pi.link_up);
            }
            if self.held.is_empty() && self.ports.iter().all(|p| !p.rx_presents()) {
                // no beat for the receive muxes: the ports alone move
                let ctl = PortCtl::default();
                for (p, pi) in self.ports.iter_mut().zip(&self.pin_last) {
                    p.step(&rest, pi, &ctl);
                }
                self.cycle += 1;
            } else {
                self.eval(&rest);
            }
            left -= 1;
        }
        self.calm = None;
    }

    fn reset(&mut self, cycles: u32) -> Result<()> {
        // the reset holds every input at 0 but, in the multiport shim
        // (sim/dev_shim.cpp idle_inputs), the links up
        let n = self.ports.len();
        let up = self.mp;
        for p in &mut self.ports {
            p.skip(u64::from(cycles));
            p.reset(up);
        }
        self.sma_mux = Mux::new(n);
        self.sm_mux = Mux::new(n);
        self.bad_tag = 0;
        self.pin_last = vec![
            PortIn {
                link_up: up,
                ..PortIn::default()
            };
            n
        ];
        self.pout = vec![PortOut::default(); n];
        self.cycle += u64::from(cycles);
        self.calm = None;
        self.bursts.clear();
        self.host_bursts.clear();
        self.host_live.clear();
        self.held.clear();
        self.taken.clear();
        Ok(())
    }

    fn cycle(&self) -> u64 {
        self.cycle
    }

    fn num_ports(&self) -> u32 {
        self.ports.len() as u32
    }

    fn data_w(&self) -> u32 {
        self.data_w
    }

    fn describe(&self) -> String {
        if self.mp {
            format!(
                "twin of ib_ca_mp_top NumPorts={} DataW {}",
                self.ports.len(),
                self.data_w
            )
        } else {
            format!("twin of ib_ca_top DataW {}", self.data_w)
        }
    }

    fn trace_open(&mut self, _path: &std::path::Path) -> Result<()> {
        anyhow::bail!("{} has no waveform", self.describe())
    }

    fn trace_close(&mut self) {}
}
