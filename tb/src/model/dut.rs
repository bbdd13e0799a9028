//! Every Verilated top behind one interface, [`Dut`]: one cycle takes the
//! management side's inputs ([`DevIn`]) and each external port's
//! ([`PortIn`]), and gives theirs ([`DevOut`], [`PortOut`]). The switch
//! (its tiles) and the multiport CA are [`Dev`]s; the single-port
//! `ib_ca_top` is a [`CaTopDut`]. The fabric ([`crate::model::net::Net`])
//! schedules any of them; a CA port's drivers
//! ([`crate::model::device::CaPort`]) sit on one port of any CA kind.
//!
//! The management side is the multiport CA's: SMA, SM and trap sends and
//! the SM receive doorbell carry a port tag (1..=N), what the SMI delivers
//! carries the arrival port, and the register bus has 16-bit addresses
//! with port p's CA registers at `regmap::mpreg::port(p, a)`. The switch
//! has its own register map (`regmap::swreg`) and the GMP streams.

use anyhow::{bail, Context, Result};
use vl15_bindings::dev::{Changed, Dev, DevIn, DevKind, DevOut, PortIn, PortOut};
use vl15_bindings::{Ca, CaIn};

use crate::model::stream::Beat;

/// Beats a model will put on one port's `tx_*` in consecutive cycles,
/// announced before they leave (a twin whose transmitter holds the whole
/// packet knows them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxBurst {
    /// Port index (port p at p−1).
    pub port: usize,
    /// The cycle of the first beat ([`Dut::cycle`]'s count).
    pub first: u64,
    /// One beat per cycle from `first`; the last one has `last` set.
    pub beats: Vec<Beat>,
}

/// A management-side stream from the model to its host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostOut {
    /// `sma_rx_*`: MADs for the SMA.
    SmaRx,
    /// `sm_rx_*`: MADs for the SM.
    SmRx,
}

/// The beats a model will show on a stream to its host in consecutive
/// cycles while that stream's `tready` stays high, announced before
/// (a MAD it holds whole).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostBurst {
    pub stream: HostOut,
    /// The cycle of the first beat ([`Dut::cycle`]'s count).
    pub first: u64,
    /// One beat per cycle from `first` (`keep` unused); the last one has
    /// `last` set.
    pub beats: Vec<Beat>,
    /// The stream's sideband fields (`*_slid`, `*_dlid`, `*_sl`, `*_port`,
    /// `*_mgmt_class`, `*_hop_ptr`, `*_hop_cnt`, and on the last beat
    /// `sma_rx_mkey_viol`/`sma_rx_mkey_mask`) as they show with every beat
    /// of it; the other fields are not looked at.
    pub side: DevOut,
}

/// `o` showing beat `beat` of host burst `b` on its stream, with its
/// sideband: what a model calm in a burst's cycle shows.
pub fn show_host(o: &mut DevOut, b: &HostBurst, beat: &Beat) {
    let s = &b.side;
    match b.stream {
        HostOut::SmaRx => {
            o.sma_rx_tvalid = true;
            o.sma_rx_tdata = beat.data;
            o.sma_rx_tlast = beat.last;
            o.sma_rx_slid = s.sma_rx_slid;
            o.sma_rx_dlid = s.sma_rx_dlid;
            o.sma_rx_sl = s.sma_rx_sl;
            o.sma_rx_port = s.sma_rx_port;
            o.sma_rx_mgmt_class = s.sma_rx_mgmt_class;
            o.sma_rx_hop_ptr = s.sma_rx_hop_ptr;
            o.sma_rx_hop_cnt = s.sma_rx_hop_cnt;
            o.sma_rx_mkey_viol = s.sma_rx_mkey_viol;
            o.sma_rx_mkey_mask = s.sma_rx_mkey_mask;
        }
        HostOut::SmRx => {
            o.sm_rx_tvalid = true;
            o.sm_rx_tdata = beat.data;
            o.sm_rx_tlast = beat.last;
            o.sm_rx_slid = s.sm_rx_slid;
            o.sm_rx_dlid = s.sm_rx_dlid;
            o.sm_rx_sl = s.sm_rx_sl;
            o.sm_rx_port = s.sm_rx_port;
            o.sm_rx_mgmt_class = s.sm_rx_mgmt_class;
            o.sm_rx_hop_ptr = s.sm_rx_hop_ptr;
            o.sm_rx_hop_cnt = s.sm_rx_hop_cnt;
        }
    }
}

/// Whether port outputs `o` show burst beat `b` on `tx_*`: a step inside a
/// burst that does not makes the rest of it void.
pub fn shows_tx_beat(o: &PortOut, b: &Beat) -> bool {
    o.tx_tvalid && o.tx_tdata == b.data && o.tx_tkeep == b.keep && o.tx_tlast == b.last
}

/// Whether outputs `o` show beat `b` of a MAD to the host on stream `s`
/// (its data and `last`): a step inside such a burst that does not makes
/// the rest of it void.
pub fn shows_host_beat(o: &DevOut, s: HostOut, b: &Beat) -> bool {
    let (valid, data, last) = match s {
        HostOut::SmaRx => (o.sma_rx_tvalid, o.sma_rx_tdata, o.sma_rx_tlast),
        HostOut::SmRx => (o.sm_rx_tvalid, o.sm_rx_tdata, o.sm_rx_tlast),
    };
    valid && data == b.data && last == b.last
}

/// A management-side stream from the host to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostIn {
    /// `sma_tx_*`: the SMA's responses.
    SmaTx = 0,
    /// `sm_tx_*`: the SM's requests.
    SmTx = 1,
    /// `trap_tx_*`: traps.
    TrapTx = 2,
}

/// A MAD a model held ([`Dut::host_burst`]) and took whole: the cycles
/// ([`Dut::cycle`]'s count) in which it took its first and its last beat,
/// one beat a cycle between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostTaken {
    pub stream: HostIn,
    pub first: u64,
    pub last: u64,
}

/// `i` offering beat `b` of a MAD on host stream `s` with the sideband of
/// `side`: what a host drives.
pub fn drive_host(i: &mut DevIn, s: HostIn, b: &Beat, side: &DevIn) {
    match s {
        HostIn::SmaTx => {
            i.sma_tx_tvalid = true;
            i.sma_tx_tdata = b.data;
            i.sma_tx_tlast = b.last;
            i.sma_tx_slid = side.sma_tx_slid;
            i.sma_tx_dlid = side.sma_tx_dlid;
            i.sma_tx_sl = side.sma_tx_sl;
            i.sma_tx_port = side.sma_tx_port;
        }
        HostIn::SmTx => {
            i.sm_tx_tvalid = true;
            i.sm_tx_tdata = b.data;
            i.sm_tx_tlast = b.last;
            i.sm_tx_dlid = side.sm_tx_dlid;
            i.sm_tx_sl = side.sm_tx_sl;
            i.sm_tx_path_bits = side.sm_tx_path_bits;
            i.sm_tx_port = side.sm_tx_port;
        }
        HostIn::TrapTx => {
            i.trap_tx_tvalid = true;
            i.trap_tx_tdata = b.data;
            i.trap_tx_tlast = b.last;
            i.trap_tx_port = side.trap_tx_port;
        }
    }
}

/// A model's `tready` of host stream `s` in `o`.
pub fn host_ready(o: &DevOut, s: HostIn) -> bool {
    match s {
        HostIn::SmaTx => o.sma_tx_tready,
        HostIn::SmTx => o.sm_tx_tready,
        HostIn::TrapTx => o.trap_tx_tready,
    }
}

/// `o` with `tready` of host stream `s` set to `v`.
pub fn set_host_ready(o: &mut DevOut, s: HostIn, v: bool) {
    match s {
        HostIn::SmaTx => o.sma_tx_tready = v,
        HostIn::SmTx => o.sm_tx_tready = v,
        HostIn::TrapTx => o.trap_tx_tready = v,
    }
}

/// The management-side inputs at rest: no stream beat offered, no
/// register write, no doorbell, every receive stream ready, register
/// address 0 — what a fabric gives a device whose host side has no work.
pub fn rest_dev_in() -> DevIn {
    *REST_DEV_IN.get_or_init(|| DevIn {
        sma_rx_tready: true,
        sm_rx_tready: true,
        ..DevIn::default()
    })
}

/// [`rest_dev_in`], built once: the twins and `Net` ask for it several
/// times a step, and `DevIn::default` is not inlined across the bridge.
static REST_DEV_IN: std::sync::OnceLock<DevIn> = std::sync::OnceLock::new();

/// Whether `p` is a port's inputs at rest, with `link_up` as the model
/// last saw it: no beat arriving, no host data offered, `tx_tready`.
pub fn port_at_rest(p: &PortIn, link_up: bool) -> bool {
    !p.rx_tvalid && !p.dtx_tvalid && p.tx_tready && p.link_up == link_up
}

/// Whether a cycle's inputs are all at rest ([`rest_dev_in`],
/// [`port_at_rest`] against the `link_up`s of the step before).
pub fn inputs_at_rest(i: &DevIn, pin: &[PortIn], link_up: &[bool]) -> bool {
    *i == rest_dev_in()
        && pin.len() == link_up.len()
        && pin.iter().zip(link_up).all(|(p, &l)| port_at_rest(p, l))
}

/// What a step changed of a model's port outputs, as masks with bit p−1
/// for port p (models of at most 64 ports).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortsHint {
    /// Every port whose `PortOut` may differ from what `ports_out` gave
    /// before the step; the others' are as they were.
    pub changed: u64,
    /// Exactly the ports whose `tx_tvalid` is set.
    pub tx_valid: u64,
}

/// The set bits of a port or request mask, ascending (bit k: index k).
pub fn bits(m: impl Into<u128>) -> impl Iterator<Item = usize> {
    let mut m: u128 = m.into();
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let b = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(b)
        }
    })
}

/// A Verilated top as the testbench clocks it.
pub trait Dut: Send {
    /// One clock cycle; `pin` has [`Dut::num_ports`] elements, of which
    /// only those `changed` names may differ from the previous step's. The
    /// ports' outputs are then in [`Dut::ports_out`].
    fn step(&mut self, i: &DevIn, pin: &[PortIn], changed: Changed<'_>) -> Result<DevOut>;
    /// The ports' outputs of the last step ([`Dut::num_ports`] elements).
    fn ports_out(&self) -> &[PortOut];
    /// Which of [`Dut::ports_out`] the last step can have changed and
    /// which put a beat out, where the model knows (a caller then reads
    /// those ports alone); None: any port (the default).
    fn ports_hint(&self) -> Option<PortsHint> {
        None
    }
    /// Count `n` cycles without evaluating: while the model is idle
    /// (`DevOut::idle`) and gets no input, when its state would not change,
    /// or while it is calm (before [`Dut::calm_until`]) with its inputs at
    /// rest, when the model moves its state on by `n` cycles at once.
    fn skip(&mut self, n: u64);
    /// Calm: after a step whose own inputs were at rest (after any other
    /// step a caller steps the model in the next cycle, whatever this
    /// says), the first cycle in which the model must be
    /// stepped again if from the next cycle on its inputs are at rest
    /// ([`rest_dev_in`]; every port as [`port_at_rest`] says, with the
    /// last step's `link_up`). In every cycle before it, the model's
    /// outputs are the last step's, except `idle` ([`Dut::calm_idle`]),
    /// `tx_*`, `sma_rx_*` and `sm_rx_*`: a beat of a burst it announced ([`Dut::take_tx_bursts`],
    /// [`Dut::take_host_bursts`]) in that burst's cycles, no beat (`tvalid`
    /// 0) otherwise. A caller may then [`Dut::skip`] up to
    /// that cycle instead of stepping, and must step the model (after
    /// skipping to it) in any cycle in which an input is not at rest, and
    /// tell it every port changed. None (the default): the next cycle.
    fn calm_until(&self) -> Option<u64> {
        None
    }
    /// `idle` in the calm cycles after the last step, where it is not that
    /// step's (a packet arriving lowers it in the cycle after its first
    /// beat): one value for the whole calm period. None: the step's.
    fn calm_idle(&self) -> Option<bool> {
        None
    }
    /// Move the transmit bursts the last step announced into `out`. Each
    /// starts after that step's cycle, and holds what the model's `tx_*`
    /// show in those cycles if its inputs stay at rest; a step inside a
    /// burst shows its beat again, and where an input that is not at
    /// rest changes what leaves (a link going down), the step's `tx_*` are
    /// the truth and the rest of the burst is void.
    fn take_tx_bursts(&mut self, _out: &mut Vec<TxBurst>) {}
    /// For a model that checks another one beside it (lockstep): the
    /// cycles in which that one was calm and not stepped. None otherwise.
    fn calm_cycles(&self) -> Option<u64> {
        None
    }
    /// Whether the model takes the beats a port will receive ahead of
    /// their cycles ([`Dut::rx_burst`]).
    fn takes_rx_bursts(&self) -> bool {
        false
    }
    /// Beats that arrive on port index `port`'s `rx_*` one per cycle from
    /// `first` (the cycle of the next step), the last one with `last`.
    /// The model takes them in those cycles as if `rx_*` carried them; its
    /// callers drive no beat on that port then, so its inputs count as at
    /// rest there, and its calm may run through them. Beats of a cycle in
    /// which the port's `link_up` is low, and those after it, are lost (the
    /// cable dropped them). Only called where [`Dut::takes_rx_bursts`].
    fn rx_burst(&mut self, _port: usize, _first: u64, _beats: &[Beat]) {}
    /// The beats of cycles from `from` on of the receive bursts of port
    /// index `port` do not arrive after all (the cable takes them back to
    /// send them again, through a wire fault set since).
    fn rx_burst_cut(&mut self, _port: usize, _from: u64) {}
    /// Move the bursts to the host the last step announced into `out`:
    /// each starts after that step's cycle, and holds what the stream's
    /// fields show in those cycles if the inputs stay at rest (every
    /// `tready` high). In a calm cycle a stream with no burst beat shows
    /// `tvalid` 0. A step inside one shows its beat again.
    fn take_host_bursts(&mut self, _out: &mut Vec<HostBurst>) {}
    /// A whole MAD the host offers on stream `s` from cycle `first` (the
    /// cycle of the next step: its caller steps the model then), with the
    /// sideband of `side` (`*_slid`, `*_dlid`, `*_sl`, `*_path_bits`,
    /// `*_port` of that stream). True: the model holds it as the host
    /// would drive it, beat 0 offered from `first` and each beat held
    /// until the model takes it (`tready`), and says when it took them
    /// ([`Dut::take_host_taken`]); until then the host drives `tvalid` 0
    /// on `s` and its inputs count as at rest there, and the model's
    /// `*_tready` of `s` is not among the outputs its calm holds. Its calm
    /// runs to the cycle it takes the last beat at most, so it is stepped
    /// then. False (the default): the host drives it beat by beat.
    fn host_burst(&mut self, _s: HostIn, _first: u64, _beats: &[Beat], _side: &DevIn) -> bool {
        false
    }
    /// Move the MADs held ([`Dut::host_burst`]) whose last beat the last
    /// step took into `out`.
    fn take_host_taken(&mut self, _out: &mut Vec<HostTaken>) {}
    /// Hold `rst_ni` low for `cycles` cycles.
    fn reset(&mut self, cycles: u32) -> Result<()>;
    /// Cycles so far (reset and skipped cycles included).
    fn cycle(&self) -> u64;
    /// External ports.
    fn num_ports(&self) -> u32;
    fn data_w(&self) -> u32;
    /// What it is, for messages: "ib_ca_top DataW 64".
    fn describe(&self) -> String;
    /// Dump every signal to an FST file at `path` from now on, one sample
    /// per half cycle with the cycle count as time (closing any dump
    /// already open).
    fn trace_open(&mut self, path: &std::path::Path) -> Result<()>;
    /// Flush and close the dump, if any.
    fn trace_close(&mut self);
    /// Write out what the model keeps buffered for others (a recording's
    /// stream); nothing for most.
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
}

impl Dut for Dev {
    fn trace_open(&mut self, path: &std::path::Path) -> Result<()> {
        Ok(Dev::trace_open(self, path)?)
    }
    fn trace_close(&mut self) {
        Dev::trace_close(self);
    }
    fn step(&mut self, i: &DevIn, pin: &[PortIn], changed: Changed<'_>) -> Result<DevOut> {
        Ok(Dev::step(self, i, pin, changed)?)
    }
    fn ports_out(&self) -> &[PortOut] {
        Dev::ports_out(self)
    }
    fn skip(&mut self, n: u64) {
        Dev::skip(self, n);
    }
    fn reset(&mut self, cycles: u32) -> Result<()> {
        Ok(Dev::reset(self, cycles)?)
    }
    fn cycle(&self) -> u64 {
        Dev::cycle(self)
    }
    fn num_ports(&self) -> u32 {
        Dev::num_ports(self)
    }
    fn data_w(&self) -> u32 {
        Dev::data_w(self)
    }
    fn describe(&self) -> String {
        let top = match self.kind() {
            vl15_bindings::DevKind::Switch => "ib_switch_top",
            _ => "ib_ca_mp_top",
        };
        format!(
            "{top} NumPorts={} DataW {}",
            self.num_ports(),
            self.data_w()
        )
    }
}

/// `ib_ca_top` (DataW 32, 64 or 128) as a one-port device: port 1's wire
/// and data host side, the SMI streams with port tag 1, and its register
/// map at `mpreg::port(1, a)`. It has no multiport registers: other
/// addresses read 0 and take no write.
pub struct CaTopDut {
    ca: Ca,
    /// Cycles counted by [`Dut::skip`] (`Ca` counts only what it
    /// evaluates).
    skipped: u64,
    /// The port's outputs of the last step.
    pout: [PortOut; 1],
}

impl CaTopDut {
    /// A new `ib_ca_top` at `data_w`, not yet reset.
    pub fn new(data_w: u32) -> Result<Self> {
        let ca = Ca::new(data_w).with_context(|| format!("building ib_ca_top DataW={data_w}"))?;
        Ok(CaTopDut {
            ca,
            skipped: 0,
            pout: [PortOut::default()],
        })
    }
}

/// The multiport CA model of `nports` external ports, if it is built.
pub fn ca_mp_kind(nports: u8) -> Option<DevKind> {
    match nports {
        1 => Some(DevKind::CaMp1),
        2 => Some(DevKind::CaMp2),
        _ => None,
    }
}

impl Dut for CaTopDut {
    fn trace_open(&mut self, path: &std::path::Path) -> Result<()> {
        Ok(self.ca.trace_open(path)?)
    }
    fn trace_close(&mut self) {
        self.ca.trace_close();
    }
    fn ports_out(&self) -> &[PortOut] {
        &self.pout
    }
    fn step(&mut self, i: &DevIn, pin: &[PortIn], _changed: Changed<'_>) -> Result<DevOut> {
        let [p] = pin else {
            bail!("ib_ca_top has one port, not {}", pin.len());
        };
        for (what, valid, tag) in [
            ("SMA send", i.sma_tx_tvalid, i.sma_tx_port),
            ("SM send", i.sm_tx_tvalid, i.sm_tx_port),
            ("trap", i.trap_tx_tvalid, i.trap_tx_port),
            (
                "SM receive doorbell",
                i.sm_rq_post || i.sm_rq_clr,
                i.sm_rq_port,
            ),
        ] {
            if valid && tag != 1 {
                bail!("ib_ca_top has one port: a {what} tagged port {tag}");
            }
        }
        if i.gmp_tx_tvalid {
            bail!("ib_ca_top has no GMP send stream (a switch's port 0 has)");
        }
        let port_reg = i.reg_addr >> 8 == 1;
        let c = CaIn {
            rx_tdata: p.rx_tdata,
            rx_tkeep: p.rx_tkeep,
            rx_tvalid: p.rx_tvalid,
            rx_tlast: p.rx_tlast,
            tx_tready: p.tx_tready,
            dtx_tdata: p.dtx_tdata,
            dtx_tkeep: p.dtx_tkeep,
            dtx_tvalid: p.dtx_tvalid,
            dtx_tlast: p.dtx_tlast,
            sma_rx_tready: i.sma_rx_tready,
            sm_rx_tready: i.sm_rx_tready,
            sm_rq_post: i.sm_rq_post,
            sm_rq_post_n: i.sm_rq_post_n,
            sm_rq_clr: i.sm_rq_clr,
            sma_tx_tdata: i.sma_tx_tdata,
            sma_tx_tvalid: i.sma_tx_tvalid,
            sma_tx_tlast: i.sma_tx_tlast,
            sma_tx_slid: i.sma_tx_slid,
            sma_tx_dlid: i.sma_tx_dlid,
            sma_tx_sl: i.sma_tx_sl,
            sm_tx_tdata: i.sm_tx_tdata,
            sm_tx_tvalid: i.sm_tx_tvalid,
            sm_tx_tlast: i.sm_tx_tlast,
            sm_tx_dlid: i.sm_tx_dlid,
            sm_tx_sl: i.sm_tx_sl,
            sm_tx_path_bits: i.sm_tx_path_bits,
            trap_tx_tdata: i.trap_tx_tdata,
            trap_tx_tvalid: i.trap_tx_tvalid,
            trap_tx_tlast: i.trap_tx_tlast,
            reg_we: i.reg_we && port_reg,
            reg_addr: (i.reg_addr & 0xFF) as u8,
            reg_wdata: i.reg_wdata,
            link_up: p.link_up,
        };
        let o = self.ca.step(&c)?;
        self.pout[0] = PortOut {
            tx_tdata: o.tx_tdata,
            tx_tkeep: o.tx_tkeep,
            tx_tvalid: o.tx_tvalid,
            tx_tlast: o.tx_tlast,
            drx_tdata: o.drx_tdata,
            drx_tkeep: o.drx_tkeep,
            drx_tvalid: o.drx_tvalid,
            drx_tlast: o.drx_tlast,
            drx_tuser: o.drx_tuser,
            drx_reason: o.drx_reason,
            dtx_tready: o.dtx_tready,
            port_state: o.port_state,
            mkey_prot: o.mkey_prot,
            mkey_viols: o.mkey_viols,
            sq_tx_beat: o.sq_tx_beat,
        };
        Ok(DevOut {
            sma_rx_tdata: o.sma_rx_tdata,
            sma_rx_tvalid: o.sma_rx_tvalid,
            sma_rx_tlast: o.sma_rx_tlast,
            sma_rx_slid: o.sma_rx_slid,
            sma_rx_dlid: o.sma_rx_dlid,
            sma_rx_sl: o.sma_rx_sl,
            sma_rx_port: o.sma_rx_port,
            sma_rx_mgmt_class: o.sma_rx_mgmt_class,
            sma_rx_hop_ptr: o.sma_rx_hop_ptr,
            sma_rx_hop_cnt: o.sma_rx_hop_cnt,
            sma_rx_mkey_viol: o.sma_rx_mkey_viol,
            sma_rx_mkey_mask: o.sma_rx_mkey_mask,
            sm_rx_tdata: o.sm_rx_tdata,
            sm_rx_tvalid: o.sm_rx_tvalid,
            sm_rx_tlast: o.sm_rx_tlast,
            sm_rx_slid: o.sm_rx_slid,
            sm_rx_dlid: o.sm_rx_dlid,
            sm_rx_sl: o.sm_rx_sl,
            sm_rx_port: o.sm_rx_port,
            sm_rx_mgmt_class: o.sm_rx_mgmt_class,
            sm_rx_hop_ptr: o.sm_rx_hop_ptr,
            sm_rx_hop_cnt: o.sm_rx_hop_cnt,
            sma_tx_tready: o.sma_tx_tready,
            sm_tx_tready: o.sm_tx_tready,
            trap_tx_tready: o.trap_tx_tready,
            reg_rdata: if port_reg { o.reg_rdata } else { 0 },
            idle: o.idle,
            ..DevOut::default()
        })
    }

    fn skip(&mut self, n: u64) {
        self.skipped += n;
    }

    fn reset(&mut self, cycles: u32) -> Result<()> {
        Ok(self.ca.reset(cycles)?)
    }

    fn cycle(&self) -> u64 {
        self.ca.cycle() + self.skipped
    }

    fn num_ports(&self) -> u32 {
        1
    }

    fn data_w(&self) -> u32 {
        self.ca.data_w()
    }

    fn describe(&self) -> String {
        format!("ib_ca_top DataW {}", self.ca.data_w())
    }
}
