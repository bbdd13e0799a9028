//! Calm periods of the switch twin ([`Dut::calm_until`], [`Dut::skip`],
//! [`Dut::take_tx_bursts`]): the cycles, with the inputs at rest, in which
//! no output changes but the beats of packets leaving, which the twin
//! announces whole when their first beat is taken.
//!
//! # What is calm
//! After a step the twin is calm up to the first cycle in which, with
//! every input at rest, something decides or an output changes. The
//! states that stay calm:
//! - a packet leaving an external port: its output's link transmitter
//!   streams it from the granted input's buffer (an external input's VL15
//!   or data buffer, port 0's send-queue buffer or GMP send buffer), one
//!   beat per cycle, the VCRC appended; announced as one burst, calm
//!   through its end unless something waits for the output (the other
//!   arbiter locked, another input's request) or the input holds another
//!   packet (then up to the cycle after its last beat is taken);
//! - an input draining a packet it drops (to the cycle after its last
//!   beat);
//! - output 0's VL15 side taking a packet into the SMI receive buffer (to
//!   the cycle of its dummy VCRC beat, the verdict);
//! - port 0's send queue writing a forwarded MAD from the SMI receive
//!   buffer into port 0's VL15 input (to its tail beat, the verdict);
//! - waiting: an input whose output takes another packet, a send queue or
//!   SMI receive buffer that waits for a slot, a host MAD paused on
//!   `sma_tx` / `sm_tx` / `trap_tx` or `gmp_tx`, a packet half received;
//! - the M_Key lease timer running (to the cycle after it expires).
//!
//! - a route deciding (the head seen, the LFT lookup, the PortState check,
//!   the arbiter locking): up to the first cycle in which its packet's
//!   first beat could be on `tx_*` (the step there shows it and announces
//!   the rest).
//!
//! Everything else is stepped: the SMI receive's verdict, the send
//! queue's, a MAD on `sma_rx` / `sm_rx`, the GMP receive path, a link
//! that is down, a beat in the link receiver's register stage, a beat
//! arriving. `idle` falls in the first cycle in which nothing is busy:
//! calm ends there too.
//!
//! # How a calm period is skipped
//! [`SwitchTwin::skip_rest`] moves the twin as its own edges would with
//! the inputs at rest: at once where nothing is active (a running lease
//! timer expires at its cycle); by a jump of many edges where every
//! stream is in the middle of its packet and nothing else moves (the
//! transmitters and output 0's VL15 side take their beats, the buffers
//! issue the next, the send queue copies its MAD: a few operations per
//! beat, [`SwitchTwin::jump_plan`]); else one edge of the active tiles
//! and port 0 (the step's own code, exact by construction): at a
//! packet's last beat, a route deciding, a transmitter's last beats.

use vl15_bindings::DevOut;

use super::tile::{ps, Beat, Route, RouteSt, TxIn, TxSt};
use super::{SwitchTwin, MAX_PORTS};
use crate::model::dut::{bits, rest_dev_in, set_host_ready, TxBurst};
use crate::model::held;
use crate::model::stream;

/// How an input's buffer and route stay with the inputs at rest.
enum InCalm {
    /// Nothing changes (empty, or waiting for an output).
    Static,
    /// Calm up to this cycle.
    Bound(u64),
    /// Its head packet leaves through an external output whose stream
    /// takes its last beat in this cycle.
    Streams(u64),
}

impl SwitchTwin {
    /// The route of input `g` (0: port 0) for VL15 or data.
    fn route_of(&self, g: u8, vl15: bool) -> Route {
        match (g, vl15) {
            (0, true) => self.p0.route,
            (0, false) => self.p0.droute,
            (_, true) => self.tiles[usize::from(g) - 1].vroute,
            (_, false) => self.tiles[usize::from(g) - 1].droute,
        }
    }

    /// Where input `g`'s valid VL15 or data head is in its packet.
    fn head_pos(&self, g: u8, vl15: bool) -> Option<(u32, u32)> {
        if g == 0 {
            self.p0.head_pos(vl15)
        } else {
            self.tiles[usize::from(g) - 1].buf(vl15).head_pos()
        }
    }

    /// Beat `k` of input `g`'s head packet.
    fn beat_at(&self, g: u8, vl15: bool, k: u32) -> Beat {
        if g == 0 {
            self.p0.beat_at(vl15, k)
        } else {
            self.tiles[usize::from(g) - 1]
                .buf(vl15)
                .beat_at(k, self.data_w / 8)
        }
    }

    fn head_valid(&self, g: u8, vl15: bool) -> bool {
        if g == 0 {
            self.p0.head_pos(vl15).is_some()
        } else {
            self.tiles[usize::from(g) - 1]
                .buf(vl15)
                .head_pos()
                .is_some()
        }
    }

    fn read_idle(&self, g: u8, vl15: bool) -> bool {
        if g == 0 {
            self.p0.read_idle(vl15)
        } else {
            self.tiles[usize::from(g) - 1].buf(vl15).read_idle()
        }
    }

    /// The device outputs of the coming cycle with the inputs at rest.
    pub(super) fn rest_out(&self) -> DevOut {
        let rest = self.rest_in();
        let busy = bits(self.active).any(|k| self.tiles[k].busy()) || self.p0.busy(&rest);
        let mut o = DevOut {
            reg_rdata: self.rdata(rest.reg_addr),
            idle: !busy,
            port_state_change: self.change,
            port0_state: ps::ACTIVE,
            gmp_tx_tready: self.p0.gmp_tx_tready(),
            ..DevOut::default()
        };
        self.p0.outputs(&mut o);
        o
    }

    /// Whether `r`, the outputs of the coming cycle at rest, are the last
    /// step's (but the `tready` of a stream whose MAD is held).
    fn rest_out_holds(&self, mut r: DevOut) -> bool {
        let mut l = self.last_o;
        // (idle may change once, in the first calm cycle: `calm_idle`)
        l.idle = r.idle;
        for h in &self.held {
            set_host_ready(&mut r, h.stream, false);
            set_host_ready(&mut l, h.stream, false);
        }
        r == l
    }

    /// The inputs of the coming cycle at rest, with the beats of the MADs
    /// held.
    pub(super) fn rest_in(&self) -> vl15_bindings::DevIn {
        held::offer(&rest_dev_in(), self.cycle, &self.held)
    }

    /// Per host source (SMA, SM, trap), whether it holds a MAD offered
    /// from the coming cycle on.
    pub(super) fn fed(&self) -> [bool; 3] {
        held::fed(&self.held, self.cycle, 0)
    }

    /// Whether external input `g`'s route `r` (Idle with a packet,
    /// Lookup, Rsp or Check) drops the packet it decides on, with the
    /// inputs at rest (the LFT, LinearFDBTop and PortStates as they are):
    /// its input then empties, and `idle` may rise, sooner than a packet
    /// forwarded could leave.
    fn route_drops(&self, g: u8, vl15: bool, r: Route) -> bool {
        let buf = self.tiles[usize::from(g) - 1].buf(vl15);
        let Some(dlid) = buf.next_dlid() else {
            return false;
        };
        let check = |e: u8| {
            let es = if e <= self.radix {
                self.eff[usize::from(e)]
            } else {
                ps::DOWN
            };
            if vl15 {
                es == ps::DOWN
            } else {
                es != ps::ACTIVE || self.eff[usize::from(g)] != ps::ACTIVE
            }
        };
        let lookup = || {
            let e = self.lft_entry(dlid);
            if e == 0xFF || e > self.radix || (!vl15 && e == 0) || e == g {
                true
            } else {
                check(e)
            }
        };
        match r.st {
            RouteSt::Idle => {
                let unicast = dlid != 0 && dlid < 0xC000;
                if (vl15 && dlid == 0xFFFF) || (dlid == self.lid && self.lid != 0) {
                    check(0)
                } else if !unicast || u32::from(dlid) >= super::LFT_DEPTH || dlid > self.top {
                    true
                } else {
                    lookup()
                }
            }
            RouteSt::Lookup | RouteSt::Rsp => lookup(),
            RouteSt::Check => check(r.dest),
            _ => false,
        }
    }

    /// How input `g`'s VL15 or data side (buffer and route `r`) stays
    /// calm from `now`, the external outputs' streams being `ends`
    /// (VL15, the cycle its last beat is taken); None: it decides now.
    fn input_calm(
        &self,
        g: u8,
        vl15: bool,
        r: Route,
        ends: &[Option<(bool, u64)>],
        now: u64,
    ) -> Option<InCalm> {
        // a route deciding: the earliest cycle in which its packet's first
        // beat can leave (Idle sees the head, Check, Req, the arbiter locks,
        // the take, the beat on tx_*: a step shows it and announces the
        // rest), the LFT lookup two cycles more
        if g != 0
            && matches!(
                r.st,
                RouteSt::Idle | RouteSt::Lookup | RouteSt::Rsp | RouteSt::Check
            )
            && !self.read_idle(g, vl15)
            && self.route_drops(g, vl15, r)
        {
            // a drop: stepped up to its drain
            return None;
        }
        match r.st {
            RouteSt::Idle if self.read_idle(g, vl15) => Some(InCalm::Static),
            RouteSt::Idle if self.head_valid(g, vl15) => Some(InCalm::Bound(now + 4)),
            RouteSt::Idle => Some(InCalm::Bound(now + 5)),
            RouteSt::Lookup => Some(InCalm::Bound(now + 5)),
            RouteSt::Rsp => Some(InCalm::Bound(now + 4)),
            RouteSt::Check => Some(InCalm::Bound(now + 3)),
            RouteSt::Drain => {
                let (j, b) = self.head_pos(g, vl15)?;
                Some(InCalm::Bound(now + u64::from(b - j)))
            }
            RouteSt::Req => {
                let e = usize::from(r.dest);
                if e == 0 {
                    // output 0's VL15 side; its data side takes the first
                    // beat a cycle after it locks, then is stepped
                    if g == 0 {
                        return None;
                    }
                    let oa = self.p0.oarb;
                    if !vl15 || !oa.locked {
                        return Some(InCalm::Bound(now + 2));
                    }
                    if oa.grant == g {
                        if self.p0.ov_streaming() {
                            let (j, b) = self.head_pos(g, vl15)?;
                            // the dummy VCRC beat, the verdict, after the last
                            return Some(InCalm::Bound(now + u64::from(b - j)));
                        }
                        if self.p0.ov_ready() {
                            return None;
                        }
                    }
                    // waiting for another input's packet or for a slot of
                    // the SMI receive buffer (which the send queue frees)
                    return Some(InCalm::Static);
                }
                if e > usize::from(self.radix) {
                    return None;
                }
                let ot = &self.tiles[e - 1];
                let arb = if vl15 { ot.varb } else { ot.darb };
                if !arb.locked {
                    // it locks now, takes the first beat next cycle, which
                    // leaves the cycle after
                    return Some(InCalm::Bound(now + 2));
                }
                match ends[e] {
                    Some((v, l)) if v == vl15 && arb.grant == g => Some(if g == 0 {
                        InCalm::Bound(l + 1)
                    } else {
                        InCalm::Streams(l)
                    }),
                    // waiting for the arbiter: it locks the cycle after the
                    // last beat is taken, takes the first beat the next;
                    // for the transmitter (the other VL's packet): it takes
                    // the first beat the cycle after the last one
                    Some((v, l)) if v == vl15 => Some(InCalm::Bound(l + 3)),
                    Some((_, l)) => Some(InCalm::Bound(l + 2)),
                    None if ot.tx.st == TxSt::Extra => Some(InCalm::Bound(now + 2)),
                    None => Some(InCalm::Bound(now + 1)),
                }
            }
        }
    }

    /// The first cycle from which the twin must be stepped with its inputs
    /// at rest (the current cycle: not calm).
    pub(super) fn calm_horizon(&self) -> u64 {
        let now = self.cycle;
        if self.all_next {
            return now;
        }
        let rest_o = self.rest_out();
        if !self.rest_out_holds(rest_o) {
            return now;
        }
        for k in bits(self.active | self.refresh) {
            if self.tiles[k].state_o(self.n) != self.pout[k].port_state {
                return now;
            }
        }
        let db = self.data_w / 8;
        let mut t = u64::MAX;
        // the first cycle in which no busy part stays busy, and whether one
        // stays busy through the period
        let mut xmax = now;
        let mut stays = false;
        // the external outputs: their streams
        let mut ends = [None::<(bool, u64)>; MAX_PORTS + 1];
        for k in bits(self.active | self.rx_pend) {
            let tl = &self.tiles[k];
            let e = k + 1;
            if !tl.link_up {
                return now;
            }
            // a receive burst: the link checks and the input writer take
            // its beats, which nothing shows before the last one's verdict
            // (the edge of the cycle after it commits or drops the packet)
            match self.rx_last(k) {
                Some(l) => {
                    t = t.min(l + 1);
                    stays = true;
                }
                None if tl.rx_staged() => return now,
                None => {}
            }
            let announced = self.ann >> k & 1 != 0;
            let tx = &tl.tx;
            match tx.st {
                TxSt::Pkt => {
                    let vl = tx.sel_vl15;
                    let (arb, other) = if vl {
                        (tl.varb, tl.darb)
                    } else {
                        (tl.darb, tl.varb)
                    };
                    if !arb.locked || !announced {
                        return now;
                    }
                    let g = arb.grant;
                    let r = self.route_of(g, vl);
                    if r.st != RouteSt::Req || usize::from(r.dest) != e {
                        return now;
                    }
                    let Some((j, b)) = self.head_pos(g, vl) else {
                        return now;
                    };
                    let l = now + u64::from(b - j) - 1;
                    let nb = self.beat_at(g, vl, b - 1).keep.count_ones();
                    let fits = nb != db && nb + 2 <= db;
                    xmax = xmax.max(l + if fits { 2 } else { 3 });
                    ends[e] = Some((vl, l));
                    if other.locked {
                        t = t.min(l + 2);
                        stays = true;
                    }
                }
                TxSt::Extra => {
                    if !announced {
                        return now;
                    }
                    xmax = xmax.max(now + 2);
                    if tl.varb.locked || tl.darb.locked {
                        t = t.min(now + 2);
                        stays = true;
                    }
                }
                TxSt::Idle => {
                    if tl.varb.locked || tl.darb.locked {
                        // a packet's first beat is taken now
                        t = t.min(now + 1);
                        stays = true;
                    }
                    if tx.out_valid {
                        if !announced {
                            return now;
                        }
                        xmax = xmax.max(now + 1);
                    }
                }
            }
        }
        // the external inputs
        for k in bits(self.active) {
            let tl = &self.tiles[k];
            let g = (k + 1) as u8;
            for vl in [true, false] {
                let buf = tl.buf(vl);
                let r = if vl { tl.vroute } else { tl.droute };
                stays |= buf.w_open();
                let occ = buf.occ();
                match self.input_calm(g, vl, r, &ends, now) {
                    None => return now,
                    Some(InCalm::Static) => stays |= occ != 0,
                    Some(InCalm::Bound(x)) => {
                        t = t.min(x);
                        stays |= occ != 0;
                    }
                    Some(InCalm::Streams(l)) => {
                        if buf.held() > 1 {
                            // the next packet's route starts
                            t = t.min(l + 1);
                        }
                        if occ == 1 && buf.held() == 1 {
                            xmax = xmax.max(l + 1);
                        } else {
                            stays |= occ != 0;
                        }
                    }
                }
            }
        }
        // port 0's inputs (a slot freed lets the send queue or gmp_tx on)
        for vl in [true, false] {
            let r = if vl { self.p0.route } else { self.p0.droute };
            match self.input_calm(0, vl, r, &ends, now) {
                None => return now,
                Some(InCalm::Static) => {}
                Some(InCalm::Bound(x)) => t = t.min(x),
                Some(InCalm::Streams(l)) => t = t.min(l + 1),
            }
        }
        t = t.min(self.p0.calm_bound(now, self.fed()));
        if t <= now {
            return now;
        }
        stays |= self.p0.busy(&self.rest_in());
        if !rest_o.idle && !stays {
            // idle rises when the last busy part is done
            t = t.min(xmax);
        }
        t.max(now)
    }

    /// The beats port `k` shows from the coming cycle on with its inputs
    /// at rest: the beat in its output register, the rest of the packet
    /// its transmitter streams, the VCRC; None if it is not streaming one.
    fn burst(&self, k: usize) -> Option<Vec<stream::Beat>> {
        let tl = &self.tiles[k];
        if !tl.link_up {
            return None;
        }
        let db = self.data_w / 8;
        let mut tx = tl.tx.clone();
        let mut out = Vec::new();
        let conv = |b: &Beat| stream::Beat {
            data: b.words(),
            keep: b.keep,
            last: b.last,
        };
        if tx.out_valid {
            out.push(conv(&tx.out));
        }
        let mut src = None;
        if tx.st == TxSt::Pkt {
            let vl = tx.sel_vl15;
            let arb = if vl { tl.varb } else { tl.darb };
            let r = self.route_of(arb.grant, vl);
            if !arb.locked || r.st != RouteSt::Req || usize::from(r.dest) != k + 1 {
                return None;
            }
            let (j, b) = self.head_pos(arb.grant, vl)?;
            src = Some((arb.grant, vl, j, b));
        }
        while tx.st != TxSt::Idle {
            let mut ti = TxIn::default();
            if tx.st == TxSt::Pkt {
                let (g, vl, j, b) = src.as_mut()?;
                if *j >= *b {
                    return None;
                }
                let beat = self.beat_at(*g, *vl, *j);
                *j += 1;
                if *vl {
                    ti.v_valid = true;
                    ti.v = beat;
                } else {
                    ti.d_valid = true;
                    ti.d = beat;
                }
            }
            let plan = tx.plan(&ti, true);
            tx.edge(&ti, &plan, true, db);
            if !tx.out_valid {
                return None;
            }
            out.push(conv(&tx.out));
        }
        (!out.is_empty()).then_some(out)
    }

    /// Announce the rest of every packet leaving a port that is not yet
    /// announced (its first beat taken, or a stall or link change voided
    /// its burst), where the port's inputs are at rest.
    pub(super) fn announce(&mut self, out: &mut Vec<TxBurst>) {
        let cand = self.active & !self.ann & !self.tready_low & !self.link_chg;
        for k in bits(cand) {
            let tx = &self.tiles[k].tx;
            if !tx.out_valid && tx.st == TxSt::Idle {
                continue;
            }
            if let Some(beats) = self.burst(k) {
                out.push(TxBurst {
                    port: k,
                    first: self.cycle,
                    beats,
                });
                self.ann |= 1 << k;
            }
        }
    }

    /// `n` cycles with the inputs at rest: the active tiles and port 0
    /// evaluated cycle by cycle, at once where nothing is active.
    pub(super) fn skip_rest(&mut self, n: u64) {
        if self.all_next {
            // reset and not yet stepped: nothing runs
            self.cycle += n;
            return;
        }
        let end = self.cycle.saturating_add(n);
        let mut tx = std::mem::take(&mut self.jump_tx);
        let mut rx = std::mem::take(&mut self.jump_rx);
        while self.cycle < end {
            if self.active | self.rx_pend == 0 && self.p0.quiet_but_lease(&self.rest_in()) {
                self.p0.skip_quiet(self.cycle, end, self.lid);
                self.cycle = end;
                break;
            }
            let (m, ov) = self.jump_plan(end - self.cycle, &mut tx, &mut rx);
            if m >= 2 {
                self.jump(m, &tx, ov, &rx);
            } else {
                self.rest_step();
            }
        }
        self.jump_tx = tx;
        self.jump_rx = rx;
    }

    /// How many edges from now (at most `left`) can be jumped at once: in
    /// each, every stream takes a beat that is not its packet's last
    /// (packets leaving external ports into `tx`, output 0's VL15 side
    /// from the input returned, port 0's send queue from the SMI receive
    /// buffer) and nothing else changes; 0 if not two.
    fn jump_plan(
        &self,
        left: u64,
        tx: &mut Vec<(usize, u8, bool, u32)>,
        rx: &mut Vec<usize>,
    ) -> (u64, Option<(u8, u32)>) {
        tx.clear();
        rx.clear();
        let mut ov = None;
        if self.tready_low | self.rx_on != 0 {
            return (0, None);
        }
        let Some(mut m) = self.p0.jump_bound(self.cycle, self.fed()) else {
            return (0, None);
        };
        m = m.min(left);
        // packets arriving as bursts: each cycle's beat queued, none a
        // last, the receiver and the buffer steady
        for k in bits(self.rx_pend | self.rx_fed) {
            if self.rx_fed >> k & 1 == 0 {
                // a burst to come: up to its first beat
                match self.rx_q[k].front() {
                    Some(&(c, _)) if c > self.cycle => {
                        m = m.min(c - self.cycle);
                        continue;
                    }
                    _ => return (0, None),
                }
            }
            if self.rx_pend >> k & 1 == 0 {
                return (0, None);
            }
            let Some(b) = self.tiles[k].rx_jump_bound() else {
                return (0, None);
            };
            let run = self.rx_q[k]
                .iter()
                .zip(self.cycle..)
                .take_while(|(&(c, ref beat), want)| c == *want && !beat.last)
                .count() as u64;
            m = m.min(b).min(run);
            rx.push(k);
        }
        for k in bits(self.active) {
            let tl = &self.tiles[k];
            if (tl.rx_staged() && !rx.contains(&k)) || !tl.link_up {
                return (0, None);
            }
            match tl.tx.st {
                TxSt::Pkt => {
                    let vl = tl.tx.sel_vl15;
                    let arb = if vl { tl.varb } else { tl.darb };
                    let r = self.route_of(arb.grant, vl);
                    if !arb.locked || r.st != RouteSt::Req || usize::from(r.dest) != k + 1 {
                        return (0, None);
                    }
                    let Some((j, b)) = self.head_pos(arb.grant, vl) else {
                        return (0, None);
                    };
                    m = m.min(u64::from(b - j - 1));
                    tx.push((k, arb.grant, vl, j));
                }
                TxSt::Idle if !tl.tx.out_valid && !tl.varb.locked && !tl.darb.locked => {}
                _ => return (0, None),
            }
        }
        // every input streams (above), waits for its output or is idle
        let inputs = std::iter::once(0u8).chain(bits(self.active).map(|k| (k + 1) as u8));
        for g in inputs {
            for vl in [true, false] {
                let r = self.route_of(g, vl);
                match r.st {
                    RouteSt::Idle if self.read_idle(g, vl) => {}
                    RouteSt::Req => {
                        let e = usize::from(r.dest);
                        if e == 0 {
                            let oa = self.p0.oarb;
                            if !vl || g == 0 || !oa.locked {
                                return (0, None);
                            }
                            if oa.grant == g {
                                if self.p0.ov_streaming() {
                                    let Some((j, b)) = self.head_pos(g, true) else {
                                        return (0, None);
                                    };
                                    m = m.min(u64::from(b - j - 1));
                                    ov = Some((g, j));
                                } else if self.p0.ov_ready() {
                                    return (0, None);
                                }
                            }
                        } else {
                            let Some(ot) = self.tiles.get(e - 1) else {
                                return (0, None);
                            };
                            let arb = if vl { ot.varb } else { ot.darb };
                            if !arb.locked {
                                return (0, None);
                            }
                            // granted: streaming, or waiting while the other
                            // VL's packet leaves
                            let other_vl = ot.tx.st == TxSt::Pkt && ot.tx.sel_vl15 != vl;
                            if arb.grant == g
                                && !other_vl
                                && !tx.iter().any(|s| s.0 == e - 1 && s.2 == vl)
                            {
                                return (0, None);
                            }
                        }
                    }
                    _ => return (0, None),
                }
            }
        }
        (m, ov)
    }

    /// `m` edges as [`SwitchTwin::jump_plan`] found them.
    fn jump(&mut self, m: u64, tx: &[(usize, u8, bool, u32)], ov: Option<(u8, u32)>, rx: &[usize]) {
        let db = self.data_w / 8;
        for &k in rx {
            let mut beats = std::mem::take(&mut self.rx_jump_beats);
            beats.clear();
            beats.extend(self.rx_q[k].drain(..m as usize).map(|(_, b)| b));
            self.tiles[k].rx_jump(&beats);
            self.rx_jump_beats = beats;
        }
        for &(k, g, vl, j) in tx {
            for i in 0..m as u32 {
                let b = self.beat_at(g, vl, j + i);
                self.tiles[k].tx.take_mid(&b, vl, db);
            }
            self.advance(g, vl, m);
        }
        if let Some((g, j)) = ov {
            for i in 0..m as u32 {
                let b = self.beat_at(g, true, j + i);
                self.p0.ov_take_mid(&b);
            }
            self.advance(g, true, m);
        }
        self.p0.jump(m, self.lid);
        let now = self.cycle;
        let src = self.p0.sq_host_src();
        if let Some(h) = self
            .held
            .iter_mut()
            .find(|h| Some(h.stream as u8) == src && now >= h.first)
        {
            let (taken, first) = self.p0.jump_fed(m, &h.beats, h.k);
            h.took(taken, now + first.unwrap_or(0));
        }
        self.lft_rsp = None;
        self.skip_touch |= self.active;
        self.cycle += m;
    }

    /// `m` edges of input `g`'s VL15 or data buffer taking its head.
    fn advance(&mut self, g: u8, vl15: bool, m: u64) {
        if g == 0 {
            self.p0.advance(vl15, m);
        } else {
            let db = self.data_w / 8;
            self.tiles[usize::from(g) - 1].buf_mut(vl15).advance(m, db);
        }
    }

    /// One cycle with every input at rest.
    fn rest_step(&mut self) {
        for k in bits(self.tready_low | self.rx_on) {
            let t = &mut self.tiles[k];
            t.rx_valid = false;
            t.tx_tready = true;
            self.active |= 1 << k;
        }
        self.tready_low = 0;
        self.rx_on = 0;
        self.link_chg = 0;
        self.feed_rx();
        self.last_o = self.core_held(&rest_dev_in());
        self.skip_touch |= self.touched;
    }
}
