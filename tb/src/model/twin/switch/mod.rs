//! The twin of `ib_switch_top` (the fabric's `Dev` of kind `Switch`, built
//! from `sw_mgmt_tile` and one `sw_port_tile` per external port): Rust that
//! gives the RTL's outputs cycle for cycle, without evaluating logic per
//! beat and per port in every cycle.
//!
//! # What it models
//! The external ports' datapath and the register map:
//! - per input port the link checks and their counters, the VL15 slots
//!   (Vl15Depth 3) and data slots (DataDepth 2), the routing of each
//!   buffer's head (LFT lookups through the shared LFT port, round-robin
//!   among requesters, PortState gating, NoRoute/Loop/State drops);
//! - per output port the two arbiters (round-robin at packet boundaries,
//!   inputs 0..=64), the link transmitter (VL15 first at a packet boundary,
//!   VCRC appended, `tx_tready` backpressure, a down link swallowing);
//! - the registers of `sw_regs` (port-0 LID, MasterSM LID/SL, NUM_PORTS,
//!   LinearFDBTop, PORT_STATE_CHANGE, LFT window, port-0 and GMP counter
//!   banks with CTR_CLEAR, CTR_CLEAR_SEL and the test-only counter writes)
//!   and of each port (`sw_port_regs`: PortState with the link edges,
//!   counters), reads combinational on `reg_addr`; `idle`;
//! - port 0 ([`port0`]): output 0's VL15 side (the SMI receive with the
//!   switch's DR rules, its buffer, `sma_rx` / `sm_rx` with `tready`, the
//!   forwards, the M_Key check and lease), the send queue (`sma_tx`,
//!   `sm_tx`, `trap_tx`, forwards; the DR send rules) into port 0's VL15
//!   input and its route, the port-0 counters, the M_Key and P_Key
//!   registers.
//!
//! - port 0's GMP send path ([`port0`]): `gmp_tx` through `sw_gmp_tx`
//!   into the GMP send buffer (port 0's data input, 2 slots), routed by the
//!   LFT like an external data input, with the GMP bank's TxPkts, TxDrop
//!   and TxWords; a GMP that is not whole 4-byte words leaves with the
//!   VCRC over its whole words, as `ib_link_tx` sends it;
//! - port 0's GMP receive path ([`gmp_rx`]): output 0's data arbiter
//!   (inputs 1..=64, round robin at packet boundaries), the register stage
//!   that puts back the VCRC the packet arrived with, `gsi_rx_check` (the
//!   shared `twin/gsi.rs`) with port 0's P_Key table, the
//!   `gmp_rx` stream (no ready) with its verdicts, and the GMP bank's
//!   RxPkts, RxWords, IcrcErr, BadHdr, Gmps, PkeyViol and QkeyViol.
//!
//! # Timing, stage by stage (a packet from port i to port e)
//! With `t` the cycle its last beat is on `rx_tvalid`:
//! - `t+1`: the beat leaves the link receiver's register stage
//!   (`rtl/ib_link_rx.sv:241-252`), its verdict (`out_user_q`) with it; the
//!   RxPkts/error events are registered there too (counted at the edge of
//!   `t+1`).
//! - `t+1`: the writer commits it into the slot (`rtl/sw_in_writer.sv:67,80`,
//!   `rtl/ib_pkt_fifo.sv:152`); `t+2`: the RAM read is issued
//!   (`rtl/ib_pkt_fifo.sv:202`); `t+3`: the head beat is valid
//!   (`out_valid_q`, `rtl/ib_pkt_fifo.sv:273`).
//! - the route (`rtl/sw_route.sv:101-150`): `Idle` sees the head at `t+3`,
//!   `Lookup` requests the LFT (`rtl/sw_lft.sv:74,102`, granted in the same
//!   cycle if the round-robin picks it), `Rsp` gets the entry a cycle after
//!   the grant, `Check` gates by PortState and counts FwdPkts, `Req`
//!   requests the egress until the last beat is taken.
//! - the egress arbiter (`rtl/sw_out_arb.sv:44`) locks a cycle after the
//!   request; its grant-ready is combinational with the link transmitter's
//!   ready (`rtl/ib_link_tx.sv:126`), so the first beat is taken in the
//!   locked cycle and appears on `tx_*` a cycle later (`out_*_q`).
//! - the VCRC rides on the last beat, or on an extra beat when the last
//!   one has fewer than two free bytes (`rtl/ib_link_tx.sv:180-209`).
//!
//! A packet for port 0 on a data VL (`e = 0`) goes, after the route, to
//! output 0's data arbiter (`rtl/sw_mgmt_tile.sv:383`), locked a cycle
//! after the request; a beat taken at `u` is in the VCRC register stage
//! at `u+1` (`:799-827`) and on `gmp_rx` at `u+2` (`gsi_rx_check`, `:871`),
//! with one more beat for the VCRC after a full last beat, in which
//! output 0 takes nothing.
//!
//! # How it is evaluated
//! Each tile's state is its RTL's registers, except that packets are byte
//! vectors (one per buffered packet, one per packet on the link) and CRCs
//! are computed once per packet. A step evaluates only the tiles that are
//! active: with work (a beat arriving or held, a packet buffered or being
//! routed or sent), an input that changed (link, ready), the register bus
//! addressing them, or a request for their output. A step with no active
//! tile only decodes the register address.

mod calm;
mod gmp_rx;
mod port0;
mod tile;

use std::collections::VecDeque;

use anyhow::{bail, Result};
use vl15_bindings::{Changed, DevIn, DevOut, PortIn, PortOut};

use crate::model::dut::{bits, Dut, HostIn, HostTaken, PortsHint, TxBurst};
use crate::model::held::{self, HeldMad};
use crate::model::stream;
use port0::{P0Ctx, Port0};
use tile::{ps, Beat, Bus, RouteCfg, Tile, TileCtx, TxIn, TxPlan, NUM_CTRS};

/// The most external ports (`MaxPorts` of the built tiles).
const MAX_PORTS: usize = 64;
/// LFT entries (`LftDepth`) and 32-bit LFT words.
const LFT_DEPTH: u32 = vl15_bindings::SWITCH_LFT_DEPTH as u32;
const LFT_WORDS: usize = (LFT_DEPTH / 4) as usize;
/// LFT requesters: 2i (VL15 of input i) and 2i+1 (data), inputs 0..=64.
const LFT_REQS: u8 = 2 * (MAX_PORTS as u8 + 1);
/// Port 0's P_Key table entries (`ib_pkg::SwPkeyEntries`).
const PKEY_ENTRIES: usize = 8;

/// Register addresses (`ib_pkg::SwReg*`, `crate::model::regmap::swreg`).
mod reg {
    pub use crate::model::regmap::swreg::*;
    pub const MKEY_END: u16 = MKEY_BASE + 8;
}

/// The twin of a switch of `nports` external ports at `data_w`.
pub struct SwitchTwin {
    radix: u8,
    data_w: u32,
    tiles: Vec<Tile>,
    pout: Vec<PortOut>,
    cycle: u64,
    // sw_regs
    lid: u16,
    sm_lid: u16,
    sm_sl: u8,
    n: u8,
    top: u16,
    change: bool,
    ctr0: [u32; NUM_CTRS],
    gctr: [u32; NUM_CTRS],
    // port 0: smi_mkey_chk, pkey_regs and gsi_rx_check's table
    p0: Port0,
    pkey: [u16; PKEY_ENTRIES],
    pkey_idx: u8,
    /// The table's last write: (cycle, index, old entry).
    pkey_wr: Option<(u64, usize, u16)>,
    // sw_lft
    lft_mem: Vec<u32>,
    lft_vld: Vec<bool>,
    lft_last: u8,
    /// The response registered at the last edge: (requester, entry).
    lft_rsp: Option<(u8, u8)>,
    /// Effective PortState of ports 0..=64 as of the last edge.
    eff: [u8; MAX_PORTS + 1],
    /// Tiles to evaluate (bit p-1 for port p).
    active: u64,
    /// Tiles clocked in the last step: their outputs are read again.
    refresh: u64,
    /// The next step reads every port's inputs (after new and reset).
    all_next: bool,
    /// Requests per output (VL15, data) collected in a step, and the
    /// outputs (bit e for output e) whose lists hold any: only those are
    /// cleared at the next step.
    vreq: Vec<Vec<u8>>,
    dreq: Vec<Vec<u8>>,
    req_used: u128,
    /// Buffers a step reuses: the LFT lookups (requester, LID), their
    /// requesters, and the outputs' plans.
    lft_reqs: Vec<(u8, u16)>,
    lft_ids: Vec<u8>,
    plans: Vec<(usize, TxIn, TxPlan)>,
    /// The ports whose `pout` the last step wrote, and those whose
    /// `tx_tvalid` is set (bit p-1 for port p): [`Dut::ports_hint`].
    touched: u64,
    tx_valid: u64,
    /// The outputs of the last step ([`Dut::calm_until`] holds them).
    last_o: DevOut,
    /// Ports whose packet leaving has its remaining beats announced
    /// ([`Dut::take_tx_bursts`]), valid while their inputs stay at rest.
    ann: u64,
    /// Ports whose stored inputs are not at rest: `tx_tready` low, a beat
    /// arriving; ports whose `link_up` changed in the last step.
    tready_low: u64,
    rx_on: u64,
    link_chg: u64,
    /// Ports [`Dut::skip`] evaluated: the next step's hint names them.
    skip_touch: u64,
    /// The streams a jump of [`Dut::skip`] moves: (output tile, input,
    /// VL15, the input's head beat index).
    jump_tx: Vec<(usize, u8, bool, u32)>,
    /// The ports whose receive bursts a jump takes beats of, and a buffer
    /// for those beats.
    jump_rx: Vec<usize>,
    rx_jump_beats: Vec<Beat>,
    /// Receive bursts ([`Dut::rx_burst`]) per port: (cycle, beat), the
    /// ports with beats queued, and those fed one at the last edge (their
    /// `rx_valid` falls at the next unless fed again).
    rx_q: Vec<VecDeque<(u64, Beat)>>,
    rx_pend: u64,
    rx_fed: u64,
    /// MADs held for port 0's send streams ([`Dut::host_burst`]), and
    /// those taken whole.
    held: Vec<HeldMad>,
    taken: Vec<HostTaken>,
}

impl SwitchTwin {
    /// A twin of a switch with `nports` (1..=64) external ports.
    pub fn new(nports: u8, data_w: u32) -> Result<Self> {
        if !(1..=MAX_PORTS as u8).contains(&nports) {
            bail!("a switch has 1..={MAX_PORTS} external ports, not {nports}");
        }
        if data_w != 64 && data_w != 128 {
            bail!("the switch twin is built at DataW 64 and 128, not {data_w}");
        }
        let mut t = SwitchTwin {
            radix: nports,
            data_w,
            tiles: (1..=nports).map(|p| Tile::new(p, data_w)).collect(),
            pout: vec![PortOut::default(); usize::from(nports)],
            cycle: 0,
            lid: 0,
            sm_lid: 0,
            sm_sl: 0,
            n: nports,
            top: 0,
            change: false,
            ctr0: [0; NUM_CTRS],
            gctr: [0; NUM_CTRS],
            p0: Port0::new(data_w),
            pkey: [0; PKEY_ENTRIES],
            pkey_idx: 0,
            pkey_wr: None,
            lft_mem: vec![0; LFT_WORDS],
            lft_vld: vec![false; LFT_WORDS],
            lft_last: LFT_REQS - 1,
            lft_rsp: None,
            eff: [ps::DOWN; MAX_PORTS + 1],
            active: 0,
            refresh: 0,
            all_next: true,
            vreq: vec![Vec::new(); MAX_PORTS + 1],
            dreq: vec![Vec::new(); MAX_PORTS + 1],
            req_used: 0,
            lft_reqs: Vec::with_capacity(usize::from(LFT_REQS)),
            lft_ids: Vec::with_capacity(usize::from(LFT_REQS)),
            plans: Vec::with_capacity(MAX_PORTS),
            touched: 0,
            tx_valid: 0,
            last_o: DevOut::default(),
            ann: 0,
            tready_low: 0,
            rx_on: 0,
            link_chg: 0,
            skip_touch: 0,
            jump_tx: Vec::with_capacity(MAX_PORTS),
            jump_rx: Vec::with_capacity(MAX_PORTS),
            rx_jump_beats: Vec::new(),
            rx_q: vec![VecDeque::new(); usize::from(nports)],
            rx_pend: 0,
            rx_fed: 0,
            held: Vec::new(),
            taken: Vec::new(),
        };
        t.reset_state();
        Ok(t)
    }

    fn all_mask(&self) -> u64 {
        if self.radix as usize == MAX_PORTS {
            u64::MAX
        } else {
            (1u64 << self.radix) - 1
        }
    }

    fn reset_state(&mut self) {
        for t in &mut self.tiles {
            t.reset();
        }
        self.lid = 0;
        self.sm_lid = 0;
        self.sm_sl = 0;
        self.n = self.radix;
        self.top = 0;
        self.change = false;
        self.ctr0 = [0; NUM_CTRS];
        self.gctr = [0; NUM_CTRS];
        self.p0.reset();
        self.pkey = [0; PKEY_ENTRIES];
        self.pkey[0] = 0xFFFF;
        self.pkey_idx = 0;
        self.pkey_wr = None;
        self.lft_vld.iter_mut().for_each(|v| *v = false);
        self.lft_last = LFT_REQS - 1;
        self.lft_rsp = None;
        self.refresh_eff();
        self.active = self.all_mask();
        self.refresh = self.all_mask();
        self.all_next = true;
        self.ann = 0;
        self.tready_low = 0;
        self.rx_on = 0;
        self.link_chg = 0;
        self.rx_fed = 0;
        self.skip_touch = self.all_mask();
    }

    /// The beats of receive bursts due in this cycle into the link
    /// receivers (as `rx_*` would carry them), once the wire inputs are
    /// in: a port fed at the last edge gets none unless fed again; a port
    /// whose link is down loses its queued beats.
    fn feed_rx(&mut self) {
        let now = self.cycle;
        for k in bits(std::mem::take(&mut self.rx_fed)) {
            if self.rx_on >> k & 1 == 0 {
                self.tiles[k].rx_valid = false;
            }
        }
        for k in bits(self.rx_pend) {
            let bit = 1u64 << k;
            let t = &mut self.tiles[k];
            let q = &mut self.rx_q[k];
            if !t.link_up {
                q.clear();
            }
            while q.front().is_some_and(|&(c, _)| c < now) {
                q.pop_front();
            }
            if let Some(&(c, b)) = q.front() {
                if c == now && !t.rx_valid {
                    t.rx_valid = true;
                    t.rx_beat = b;
                    self.rx_fed |= bit;
                    self.active |= bit;
                    q.pop_front();
                }
            }
            if q.is_empty() {
                self.rx_pend &= !bit;
            }
        }
    }

    /// The last cycle of port `k`'s queued receive beats.
    pub(super) fn rx_last(&self, k: usize) -> Option<u64> {
        self.rx_q[k].back().map(|&(c, _)| c)
    }

    /// Port `k`'s wire inputs of this cycle.
    fn apply(&mut self, k: usize, p: &PortIn) {
        let t = &mut self.tiles[k];
        let bit = 1u64 << k;
        if p.rx_tvalid {
            t.rx_beat = Beat::from_words(p.rx_tdata, p.rx_tkeep, p.rx_tlast);
        }
        if p.link_up != t.link_up {
            self.link_chg |= bit;
        }
        if p.rx_tvalid || t.rx_valid || p.tx_tready != t.tx_tready || p.link_up != t.link_up {
            self.active |= bit;
        }
        t.rx_valid = p.rx_tvalid;
        t.tx_tready = p.tx_tready;
        t.link_up = p.link_up;
        if p.rx_tvalid {
            self.rx_on |= bit;
        } else {
            self.rx_on &= !bit;
        }
        if p.tx_tready {
            self.tready_low &= !bit;
        } else {
            self.tready_low |= bit;
        }
    }

    fn refresh_eff(&mut self) {
        self.eff = [ps::DOWN; MAX_PORTS + 1];
        self.eff[0] = ps::ACTIVE;
        for t in &self.tiles {
            self.eff[usize::from(t.port)] = t.state_o(self.n);
        }
        // the ports show them from the next step on
        self.refresh = self.all_mask();
    }

    /// The port-0 counter bank, GMP bank, LFT or sw_regs register `a`.
    fn rdata(&self, a: u16) -> u32 {
        match a {
            reg::PKEY_CAP => PKEY_ENTRIES as u32,
            reg::PKEY_IDX => u32::from(self.pkey_idx),
            reg::PKEY_DATA => self
                .pkey
                .get(usize::from(self.pkey_idx))
                .map_or(0, |&e| u32::from(e)),
            reg::MKEY_BASE..reg::MKEY_END => {
                self.p0.mkey.read((a - reg::MKEY_BASE) as u8, self.cycle)
            }
            reg::ID => reg::ID_VALUE,
            reg::PORT0_LID => u32::from(self.lid),
            reg::MASTER_SM_LID => u32::from(self.sm_lid),
            reg::MASTER_SM_SL => u32::from(self.sm_sl),
            reg::NUM_PORTS => u32::from(self.n),
            reg::NUM_PORTS_MAX => u32::from(self.radix),
            reg::LINEAR_FDB_TOP => u32::from(self.top),
            reg::PORT_STATE_CHANGE => u32::from(self.change),
            reg::LFT_DEPTH => LFT_DEPTH,
            _ => {
                let lft_off = a.wrapping_sub(reg::LFT_BASE);
                if a >= reg::LFT_BASE && usize::from(lft_off) < LFT_WORDS {
                    let w = usize::from(lft_off);
                    return if self.lft_vld[w] {
                        self.lft_mem[w]
                    } else {
                        0xFFFF_FFFF
                    };
                }
                let port = self.reg_port(a);
                if port != 0 {
                    return self.tiles[usize::from(port) - 1].rdata(a, self.n);
                }
                if a == reg::PORT_STATE {
                    u32::from(ps::ACTIVE)
                } else if (reg::CTR_BASE..reg::CTR_BASE + 16).contains(&a) {
                    self.ctr0[usize::from(a - reg::CTR_BASE)]
                } else if (reg::CTR0G_BASE..reg::CTR0G_BASE + 16).contains(&a) {
                    self.gctr[usize::from(a - reg::CTR0G_BASE)]
                } else {
                    0
                }
            }
        }
    }

    /// `sw_regs.reg_port_o`: the external port whose tile a register
    /// address names (0: none).
    fn reg_port(&self, a: u16) -> u8 {
        let n = u16::from(self.radix);
        let ps_off = a.wrapping_sub(reg::PORT_STATE);
        let ctr_off = a.wrapping_sub(reg::CTR_BASE);
        let sel_off = a.wrapping_sub(reg::CTR_CLEAR_SEL);
        if a >= reg::PORT_STATE && ps_off <= n {
            ps_off as u8
        } else if a >= reg::CTR_BASE && ctr_off >> 4 <= n {
            (ctr_off >> 4) as u8
        } else if a >= reg::CTR_CLEAR_SEL && sel_off <= n {
            sel_off as u8
        } else {
            0
        }
    }

    /// The sw_regs / LFT edge.
    fn regs_edge(
        &mut self,
        i: &DevIn,
        state_chg: bool,
        ev0: &[u32; NUM_CTRS],
        gev: &[u32; NUM_CTRS],
    ) {
        if i.reg_we {
            let w = i.reg_wdata;
            match i.reg_addr {
                reg::PORT0_LID => self.lid = w as u16,
                reg::MASTER_SM_LID => self.sm_lid = w as u16,
                reg::MASTER_SM_SL => self.sm_sl = (w & 0xF) as u8,
                reg::NUM_PORTS => {
                    self.n = if w > u32::from(self.radix) {
                        self.radix
                    } else {
                        w as u8
                    }
                }
                reg::LINEAR_FDB_TOP => self.top = w as u16,
                reg::PKEY_IDX => self.pkey_idx = w as u8,
                reg::PKEY_DATA => {
                    let k = usize::from(self.pkey_idx);
                    if let Some(e) = self.pkey.get_mut(k) {
                        self.pkey_wr = Some((self.cycle, k, *e));
                        *e = w as u16;
                    }
                    self.pkey_idx = self.pkey_idx.wrapping_add(1);
                }
                a if (reg::MKEY_BASE..reg::MKEY_END).contains(&a) => {
                    self.p0
                        .mkey
                        .write((a - reg::MKEY_BASE) as u8, w, self.cycle)
                }
                _ => {}
            }
            if i.reg_addr == reg::PORT_STATE_CHANGE && w & 1 != 0 {
                self.change = false;
            }
            let a = i.reg_addr;
            let clear = a == reg::CTR_CLEAR;
            let sel = if a == reg::CTR_CLEAR_SEL { w } else { 0 };
            for (c, &e) in ev0.iter().enumerate() {
                if clear || sel >> c & 1 != 0 {
                    self.ctr0[c] = 0;
                } else if a == reg::CTR_BASE + c as u16 {
                    self.ctr0[c] = w;
                } else {
                    self.ctr0[c] = self.ctr0[c].wrapping_add(e);
                }
                if clear || sel >> (16 + c) & 1 != 0 {
                    self.gctr[c] = 0;
                } else if a == reg::CTR0G_BASE + c as u16 {
                    self.gctr[c] = w;
                } else {
                    self.gctr[c] = self.gctr[c].wrapping_add(gev[c]);
                }
            }
            let lft_off = a.wrapping_sub(reg::LFT_BASE);
            if a >= reg::LFT_BASE && usize::from(lft_off) < LFT_WORDS {
                self.lft_mem[usize::from(lft_off)] = w;
                self.lft_vld[usize::from(lft_off)] = true;
            }
        } else {
            for (c, e) in self.ctr0.iter_mut().zip(ev0) {
                *c = c.wrapping_add(*e);
            }
            for (c, e) in self.gctr.iter_mut().zip(gev) {
                *c = c.wrapping_add(*e);
            }
        }
        if state_chg {
            self.change = true;
        }
    }

    fn lft_entry(&self, lid: u16) -> u8 {
        let w = usize::from(lid >> 2) % LFT_WORDS;
        if self.lft_vld[w] {
            (self.lft_mem[w] >> (8 * (lid & 3))) as u8
        } else {
            0xFF
        }
    }

    /// The cycle once the wire inputs are in the tiles: the outputs, then
    /// the edges.
    /// [`SwitchTwin::core`] with the beats of the MADs held offered on
    /// their streams, noting those taken.
    fn core_held(&mut self, i: &DevIn) -> DevOut {
        if self.held.is_empty() {
            return self.core(i);
        }
        let c = self.cycle;
        let x = held::offer(i, c, &self.held);
        let o = self.core(&x);
        held::note_taken(&mut self.held, &o, c, &mut self.taken);
        o
    }

    fn core(&mut self, i: &DevIn) -> DevOut {
        // the register bus: the tile it addresses (every tile for CTR_CLEAR)
        let rport = self.reg_port(i.reg_addr);
        let bcast = i.reg_we && i.reg_addr == reg::CTR_CLEAR;
        if bcast {
            self.active |= self.all_mask();
        } else if i.reg_we && rport != 0 {
            self.active |= 1 << (rport - 1);
        }
        // outputs of this cycle (registers of the last edge)
        let mut busy = false;
        let touched = self.active | std::mem::take(&mut self.refresh);
        self.touched = touched;
        for k in bits(touched) {
            let t = &self.tiles[k];
            let o = &mut self.pout[k];
            o.tx_tvalid = t.tx.out_valid && t.link_up;
            if o.tx_tvalid {
                self.tx_valid |= 1 << k;
            } else {
                self.tx_valid &= !(1 << k);
            }
            o.tx_tdata = t.tx.out.words();
            o.tx_tkeep = t.tx.out.keep;
            o.tx_tlast = t.tx.out.last;
            o.port_state = t.state_o(self.n);
            busy |= t.busy();
        }
        busy |= self.p0.busy(i);
        let mut o = DevOut {
            reg_rdata: self.rdata(i.reg_addr),
            idle: !busy,
            port_state_change: self.change,
            port0_state: ps::ACTIVE,
            gmp_tx_tready: self.p0.gmp_tx_tready(),
            ..DevOut::default()
        };
        self.p0.outputs(&mut o);
        if self.active == 0 && !i.reg_we && self.p0.quiet(i) {
            self.cycle += 1;
            return o;
        }
        // requests for the outputs, LFT lookups
        for e in bits(std::mem::take(&mut self.req_used)) {
            self.vreq[e].clear();
            self.dreq[e].clear();
        }
        let mut req_used: u128 = 0;
        let mut lft_reqs = std::mem::take(&mut self.lft_reqs);
        lft_reqs.clear();
        let mut outs = self.active;
        // port 0's VL15 input (input 0: first in every request list)
        if let Some(e) = self.p0.v_request() {
            if e >= 1 {
                self.vreq[usize::from(e)].push(0);
                req_used |= 1 << e;
                outs |= 1 << (e - 1);
            }
        }
        if let Some(lid) = self.p0.v_lookup() {
            lft_reqs.push((0, lid));
        }
        // port 0's data input (the GMP send buffer)
        if let Some(e) = self.p0.d_request() {
            if e >= 1 {
                self.dreq[usize::from(e)].push(0);
                req_used |= 1 << e;
                outs |= 1 << (e - 1);
            }
        }
        if let Some(lid) = self.p0.d_lookup() {
            lft_reqs.push((1, lid));
        }
        for k in bits(self.active) {
            let t = &self.tiles[k];
            let p = t.port;
            if let Some(e) = t.v_request() {
                self.vreq[usize::from(e)].push(p);
                req_used |= 1 << e;
                if e != 0 {
                    outs |= 1 << (e - 1);
                }
            }
            if let Some(e) = t.d_request() {
                self.dreq[usize::from(e)].push(p);
                req_used |= 1 << e;
                if e != 0 {
                    outs |= 1 << (e - 1);
                }
            }
            if let Some(lid) = t.v_lookup() {
                lft_reqs.push((2 * p, lid));
            }
            if let Some(lid) = t.d_lookup() {
                lft_reqs.push((2 * p + 1, lid));
            }
        }
        self.req_used = req_used;
        let mut ids = std::mem::take(&mut self.lft_ids);
        ids.clear();
        ids.extend(lft_reqs.iter().map(|r| r.0));
        let lft_gnt = tile::rr_pick(&ids, self.lft_last);
        self.lft_ids = ids;
        // the outputs' plans and the grant-readies back to the inputs
        let mut plans = std::mem::take(&mut self.plans);
        plans.clear();
        let mut v_sel: u64 = 0;
        let mut d_sel: u64 = 0;
        let mut p0_sel = false;
        let mut p0_dsel = false;
        for k in bits(outs) {
            let t = &self.tiles[k];
            let mut ti = TxIn::default();
            if t.varb.locked {
                let (v, b) = if t.varb.grant >= 1 {
                    self.tiles[usize::from(t.varb.grant) - 1].vhead()
                } else {
                    self.p0.vhead()
                };
                ti.v_valid = v;
                ti.v = *b;
            }
            if t.darb.locked {
                let (v, b) = if t.darb.grant >= 1 {
                    self.tiles[usize::from(t.darb.grant) - 1].dhead()
                } else {
                    self.p0.dhead()
                };
                ti.d_valid = v;
                ti.d = *b;
            }
            let plan = t.tx.plan(&ti, t.tready_eff());
            if t.varb.locked && plan.v_ready {
                if t.varb.grant >= 1 {
                    v_sel |= 1 << (t.varb.grant - 1);
                } else {
                    p0_sel = true;
                }
            }
            if t.darb.locked && plan.d_ready {
                if t.darb.grant >= 1 {
                    d_sel |= 1 << (t.darb.grant - 1);
                } else {
                    p0_dsel = true;
                }
            }
            plans.push((k, ti, plan));
        }
        // output 0's VL15 side: the granted input's head and grant-ready
        let oa = self.p0.oarb;
        let mut ov = (false, Beat::default());
        if oa.locked && oa.grant >= 1 {
            let (v, b) = self.tiles[usize::from(oa.grant) - 1].vhead();
            ov = (v, *b);
            if self.p0.ov_tready() {
                v_sel |= 1 << (oa.grant - 1);
            }
        }
        // output 0's data side (`u_data_arb0`, rtl/sw_mgmt_tile.sv:383-403):
        // the granted input's head and VCRC, its grant-ready
        let da = self.p0.grx.arb;
        let mut od = (false, Beat::default(), 0u16);
        if da.locked && da.grant >= 1 {
            let t = &self.tiles[usize::from(da.grant) - 1];
            let (v, b) = t.dhead();
            od = (v, *b, t.dvcrc());
            if self.p0.grx.od_tready() {
                d_sel |= 1 << (da.grant - 1);
            }
        } else if da.locked {
            // input 0 (never granted: port 0's data input loops at its
            // route), with `d_vcrc[0] = 0` (rtl/ib_switch_top.sv:325)
            let (v, b) = self.p0.dhead();
            od = (v, *b, 0);
            p0_dsel |= self.p0.grx.od_tready();
        }
        // the edges
        let mut state_chg = false;
        let eff = self.eff;
        let bus_idle = Bus::default();
        let bus_on = Bus {
            we: i.reg_we,
            addr: i.reg_addr,
            wdata: i.reg_wdata,
        };
        for &(k, ti, plan) in &plans {
            let p = (k + 1) as u8;
            let on = bcast || u16::from(rport) == u16::from(p);
            let rsp = |r: u8| match self.lft_rsp {
                Some((s, e)) if s == r => Some(e),
                _ => None,
            };
            let ctx = TileCtx {
                cfg: RouteCfg {
                    num_ports: self.radix,
                    port0_lid: self.lid,
                    linear_top: self.top,
                    state: &eff,
                },
                bus: if on { bus_on } else { bus_idle },
                lft_gnt: [lft_gnt == Some(2 * p), lft_gnt == Some(2 * p + 1)],
                lft_rsp: [rsp(2 * p), rsp(2 * p + 1)],
                v_sel: v_sel >> k & 1 != 0,
                d_sel: d_sel >> k & 1 != 0,
                v_req: &self.vreq[usize::from(p)],
                d_req: &self.dreq[usize::from(p)],
                txin: ti,
                plan,
            };
            let te = self.tiles[k].edge(&ctx);
            state_chg |= te.state_chg;
            if te.tx_start {
                self.ann &= !(1 << k);
            }
        }
        self.plans = plans;
        // port 0
        let mut ev0 = [0u32; NUM_CTRS];
        let mut gev = [0u32; NUM_CTRS];
        let p0_rsp = match self.lft_rsp {
            Some((0, e)) => Some(e),
            _ => None,
        };
        let p0_rsp_d = match self.lft_rsp {
            Some((1, e)) => Some(e),
            _ => None,
        };
        let c0 = P0Ctx {
            din: i,
            cfg: RouteCfg {
                num_ports: self.radix,
                port0_lid: self.lid,
                linear_top: self.top,
                state: &eff,
            },
            n: self.n,
            sm_lid: self.sm_lid,
            sm_sl: self.sm_sl,
            ov,
            ov_req: &self.vreq[0],
            v_sel: p0_sel,
            lft_gnt: lft_gnt == Some(0),
            lft_rsp: p0_rsp,
            d_sel: p0_dsel,
            lft_gnt_d: lft_gnt == Some(1),
            lft_rsp_d: p0_rsp_d,
            od_req: &self.dreq[0],
            od,
            pkey: &self.pkey,
            pkey_wr: self.pkey_wr,
            cycle: self.cycle,
        };
        self.p0.edge(&c0, &mut ev0, &mut gev);
        // the LFT port
        match lft_gnt {
            Some(s) => {
                let lid = lft_reqs.iter().find(|r| r.0 == s).map(|r| r.1).unwrap_or(0);
                self.lft_rsp = Some((s, self.lft_entry(lid)));
                self.lft_last = s;
            }
            None => self.lft_rsp = None,
        }
        self.lft_reqs = lft_reqs;
        let n_before = self.n;
        self.regs_edge(i, state_chg, &ev0, &gev);
        if self.n != n_before {
            self.active |= self.all_mask();
        }
        // effective states, and which tiles stay active
        let mut next = 0u64;
        for k in bits(outs | self.active) {
            let t = &self.tiles[k];
            self.eff[k + 1] = t.state_o(self.n);
            if !t.quiet() {
                next |= 1 << k;
            }
        }
        // a tile clocked now shows its new outputs next cycle
        self.active = next;
        self.refresh = outs;
        if self.n != n_before {
            self.refresh_eff();
        }
        self.cycle += 1;
        o
    }
}

impl Dut for SwitchTwin {
    fn step(&mut self, i: &DevIn, pin: &[PortIn], changed: Changed<'_>) -> Result<DevOut> {
        if pin.len() != usize::from(self.radix) {
            bail!(
                "the switch twin has {} ports, given {} port inputs",
                self.radix,
                pin.len()
            );
        }
        // the wire inputs
        self.link_chg = 0;
        let changed = if std::mem::take(&mut self.all_next) {
            Changed::All
        } else {
            changed
        };
        match changed {
            Changed::All => {
                for (k, p) in pin.iter().enumerate() {
                    self.apply(k, p);
                }
            }
            Changed::Ports(l) => {
                for &k in l {
                    let k = usize::from(k);
                    if k >= pin.len() {
                        bail!("port index {k} of a {}-port switch", self.radix);
                    }
                    self.apply(k, &pin[k]);
                }
            }
        }
        // a port that stalls or whose link changes voids its announcement
        self.ann &= !(self.tready_low | self.link_chg);
        self.feed_rx();
        let o = self.core_held(i);
        self.last_o = o;
        self.touched |= std::mem::take(&mut self.skip_touch);
        Ok(o)
    }

    fn ports_out(&self) -> &[PortOut] {
        &self.pout
    }

    fn ports_hint(&self) -> Option<PortsHint> {
        Some(PortsHint {
            changed: self.touched,
            tx_valid: self.tx_valid,
        })
    }

    fn skip(&mut self, n: u64) {
        self.skip_rest(n);
    }

    fn calm_until(&self) -> Option<u64> {
        let t = self.calm_horizon();
        (t > self.cycle).then_some(t)
    }

    fn calm_idle(&self) -> Option<bool> {
        let idle = self.rest_out().idle;
        (idle != self.last_o.idle).then_some(idle)
    }

    fn take_tx_bursts(&mut self, out: &mut Vec<TxBurst>) {
        self.announce(out);
    }

    fn takes_rx_bursts(&self) -> bool {
        true
    }

    fn host_burst(&mut self, s: HostIn, first: u64, beats: &[stream::Beat], side: &DevIn) -> bool {
        let mad_beats = (2048 / self.data_w) as usize;
        if self.all_next || !held::can_hold(&self.held, s, first, self.cycle, beats, mad_beats) {
            return false;
        }
        self.held.push(HeldMad::new(s, first, beats, side, 0));
        true
    }

    fn take_host_taken(&mut self, out: &mut Vec<HostTaken>) {
        out.append(&mut self.taken);
    }

    fn rx_burst(&mut self, port: usize, first: u64, beats: &[stream::Beat]) {
        let Some(q) = self.rx_q.get_mut(port) else {
            return;
        };
        q.extend(
            (first..)
                .zip(beats)
                .map(|(c, b)| (c, Beat::from_words(b.data, b.keep, b.last))),
        );
        if !q.is_empty() {
            self.rx_pend |= 1 << port;
            self.active |= 1 << port;
        }
    }

    fn rx_burst_cut(&mut self, port: usize, from: u64) {
        let Some(q) = self.rx_q.get_mut(port) else {
            return;
        };
        q.retain(|&(c, _)| c < from);
        if q.is_empty() {
            self.rx_pend &= !(1 << port);
        }
    }

    fn reset(&mut self, cycles: u32) -> Result<()> {
        self.reset_state();
        self.held.clear();
        self.taken.clear();
        self.cycle += u64::from(cycles);
        Ok(())
    }

    fn cycle(&self) -> u64 {
        self.cycle
    }

    fn num_ports(&self) -> u32 {
        u32::from(self.radix)
    }

    fn data_w(&self) -> u32 {
        self.data_w
    }

    fn describe(&self) -> String {
        format!("switch twin NumPorts={} DataW {}", self.radix, self.data_w)
    }

    fn trace_open(&mut self, _path: &std::path::Path) -> Result<()> {
        bail!("the switch twin has no waveform to dump")
    }

    fn trace_close(&mut self) {}
}

#[cfg(test)]
mod tests;
