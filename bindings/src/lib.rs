//! cxx bindings to the Verilated `ib_ca_top` (docs/arch.md, "ib_ca_top") at
//! DataW = 32, 64 and 128. This crate only moves bits between Rust structs and
//! the model's ports: no protocol logic.
//!
//! - [`CaIn`] / [`CaOut`]: one field per top-level port except `clk_i` and
//!   `rst_ni`, named after the port without `_i`/`_o`. Stream data is
//!   `[u64; 2]`: 128 bits, little-endian words, so byte j of a beat is bits
//!   8j..8j+7 of the 128-bit value (`data[j / 8] >> (8 * (j % 8))`); bits at and
//!   above DataW are ignored on input and 0 on output. `tkeep` is a `u16` (bit
//!   j = byte j; bits at and above DataW/8 ignored), 1-bit ports are `bool`,
//!   others the smallest unsigned integer (unused upper bits ignored).
//! - [`Ca`]: one model instance with its own Verilator context; several
//!   instances in one process are independent.
//! - Clock: [`Ca::step`] is one cycle. Inputs are applied while the clock is
//!   low, the model is evaluated and the outputs captured (so they are the
//!   values during this cycle, combinational ones such as `*_tready` and
//!   `reg_rdata` for this cycle's `reg_addr` included), then the rising edge is
//!   evaluated and [`Ca::cycle`] goes up by one.
//! - Errors: a failing SV assertion, `$fatal`, `$stop` or `$finish` makes the
//!   call return [`Error::Sim`] instead of aborting the process; the instance
//!   then refuses further evaluation (its state is undefined).
//! - Tracing: [`Ca::trace_open`] / [`Ca::trace_close`] per instance, or the
//!   environment variable `VL15_TRACE=<path>`, which makes every [`Ca::new`]
//!   open an FST dump: the first instance in the process writes `<path>`, the
//!   n-th (n ≥ 1, counting from 0) `<path>.<n>`. The dump has one sample per
//!   half cycle with a 10 ns clock: cycle c is low at 10c ns and high at
//!   10c + 5 ns. Tracing slows the simulation by ~50×.
//! - Initial values: the model is built with `--x-initial unique`, so
//!   registers start random (reproducibly: seed `VL15_SEED`, default 1) until
//!   [`Ca::reset`].

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

pub mod dev;

pub use dev::{Dev, DevIn, DevKind, DevOut, PortIn, PortOut, DEV_DATA_WIDTHS, MAX_SWITCH_PORTS};
pub use ffi::{CaIn, CaOut};

#[cxx::bridge(namespace = "vl15")]
mod ffi {
    /// Inputs of `ib_ca_top` for one cycle (see the crate docs for the encoding).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    struct CaIn {
        // wire -> port
        rx_tdata: [u64; 2],
        rx_tkeep: u16,
        rx_tvalid: bool,
        rx_tlast: bool,
        // port -> wire
        tx_tready: bool,
        // host -> data VLs
        dtx_tdata: [u64; 2],
        dtx_tkeep: u16,
        dtx_tvalid: bool,
        dtx_tlast: bool,
        // SMA / SM RX readies
        sma_rx_tready: bool,
        sm_rx_tready: bool,
        /// SM receive-queue doorbell: add `sm_rq_post_n` receive WQEs
        sm_rq_post: bool,
        sm_rq_post_n: u8,
        /// withdraw every posted receive WQE (before this cycle's post)
        sm_rq_clr: bool,
        // SMA TX
        sma_tx_tdata: [u64; 2],
        sma_tx_tvalid: bool,
        sma_tx_tlast: bool,
        sma_tx_slid: u16,
        sma_tx_dlid: u16,
        /// 4 bits
        sma_tx_sl: u8,
        // SM TX
        sm_tx_tdata: [u64; 2],
        sm_tx_tvalid: bool,
        sm_tx_tlast: bool,
        sm_tx_dlid: u16,
        /// 4 bits
        sm_tx_sl: u8,
        /// 7 bits
        sm_tx_path_bits: u8,
        // trap TX
        trap_tx_tdata: [u64; 2],
        trap_tx_tvalid: bool,
        trap_tx_tlast: bool,
        // register interface
        reg_we: bool,
        reg_addr: u8,
        reg_wdata: u32,
        /// physical link (1 = LinkUp); false = link down (PortState Down,
        /// wire TX discards whole packets)
        link_up: bool,
    }

    /// Outputs of `ib_ca_top` during one cycle (see the crate docs).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    struct CaOut {
        // port -> wire
        tx_tdata: [u64; 2],
        tx_tkeep: u16,
        tx_tvalid: bool,
        tx_tlast: bool,
        // data VLs -> host
        drx_tdata: [u64; 2],
        drx_tkeep: u16,
        drx_tvalid: bool,
        drx_tlast: bool,
        drx_tuser: bool,
        /// On tlast: why gsi_rx_check discarded it (ib_pkg::gsi_reason_e).
        drx_reason: u8,
        dtx_tready: bool,
        // SMA RX
        sma_rx_tdata: [u64; 2],
        sma_rx_tvalid: bool,
        sma_rx_tlast: bool,
        sma_rx_slid: u16,
        sma_rx_dlid: u16,
        sma_rx_sl: u8,
        sma_rx_port: u8,
        sma_rx_mgmt_class: u8,
        sma_rx_hop_ptr: u8,
        sma_rx_hop_cnt: u8,
        /// M_Key check verdict, valid with the sma_rx tlast beat: drop
        /// (Trap 256), or a bad-key Get at protect 1 (M_Key reads 0)
        sma_rx_mkey_viol: bool,
        sma_rx_mkey_mask: bool,
        // SM RX
        sm_rx_tdata: [u64; 2],
        sm_rx_tvalid: bool,
        sm_rx_tlast: bool,
        sm_rx_slid: u16,
        sm_rx_dlid: u16,
        sm_rx_sl: u8,
        sm_rx_port: u8,
        sm_rx_mgmt_class: u8,
        sm_rx_hop_ptr: u8,
        sm_rx_hop_cnt: u8,
        // TX readies
        sma_tx_tready: bool,
        sm_tx_tready: bool,
        trap_tx_tready: bool,
        // register interface
        reg_rdata: u32,
        // observability: an SMI send-engine beat enters the VL15 TX buffer
        sq_tx_beat: bool,
        /// M_KeyProtectBits and M_KeyViolations of the port (smi_mkey_chk)
        mkey_prot: u8,
        mkey_viols: u16,
        /// PortState register (4 bits)
        port_state: u8,
        /// nothing buffered or in flight in the port
        idle: bool,
    }

    unsafe extern "C++" {
        include!("ca_shim.h");

        /// One Verilated `ib_ca_top` (sim/ca_shim.h).
        type CaModel;

        fn new_ca_model(data_w: u32) -> Result<UniquePtr<CaModel>>;
        fn reset(self: Pin<&mut CaModel>, cycles: u32) -> Result<()>;
        fn step(self: Pin<&mut CaModel>, inp: &CaIn) -> Result<CaOut>;
        fn step_batch(self: Pin<&mut CaModel>, ins: &[CaIn], outs: &mut [CaOut]) -> Result<()>;
        fn cycle(self: &CaModel) -> u64;
        fn trace_open(self: Pin<&mut CaModel>, path: &str) -> Result<()>;
        fn trace_close(self: Pin<&mut CaModel>);
        fn data_w(self: &CaModel) -> u32;
    }
}

// SAFETY: a CaModel owns everything it touches: its Verilated model, its own
// VerilatedContext and its FST writer (no worker threads: the model is built
// single-threaded and without --trace-threads). Before every evaluation the
// shim points the calling thread's Verilator context at the instance's own
// (CaModel::enter), so moving an instance to another thread between calls is
// sound. It is not Sync: every method that evaluates takes `Pin<&mut _>`.
unsafe impl Send for ffi::CaModel {}

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The width is not one the crate was built for.
    #[error("DataW must be 32, 64 or 128, got {0}")]
    Width(u32),
    /// A multiport device at a width it is not built for.
    #[error("the switch and multiport CA models are built at DataW 64 and 128, not {0}")]
    DevWidth(u32),
    /// The simulation stopped: SV assertion, $fatal, $stop, $finish, or the
    /// instance already stopped by an earlier one. The exception is the
    /// message, not a `source`: reporters that print the error chain
    /// (anyhow's `{:#}`) would otherwise print the same text twice.
    #[error("simulation error: {0}")]
    Sim(cxx::Exception),
    /// `step_batch` got fewer output slots than inputs.
    #[error("step_batch: {outs} output slots for {ins} inputs")]
    BatchLen { ins: usize, outs: usize },
    /// A trace path that is not UTF-8.
    #[error("trace path {0:?} is not valid UTF-8")]
    Path(std::path::PathBuf),
    /// The C++ side returned no model.
    #[error("the C++ shim returned no model")]
    Null,
    /// A multiport step got the wrong number of port structs.
    #[error("step: the model has {want} ports, got {ins} inputs and {outs} outputs")]
    Ports {
        want: usize,
        ins: usize,
        outs: usize,
    },
}

impl From<cxx::Exception> for Error {
    fn from(e: cxx::Exception) -> Self {
        Error::Sim(e)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Instances created so far with `VL15_TRACE` set (for unique dump names).
pub(crate) static ENV_TRACES: AtomicUsize = AtomicUsize::new(0);

/// One `ib_ca_top` simulation.
pub struct Ca {
    model: cxx::UniquePtr<ffi::CaModel>,
}

impl std::fmt::Debug for Ca {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ca")
            .field("data_w", &self.data_w())
            .field("cycle", &self.cycle())
            .finish()
    }
}

impl Ca {
    /// A new model of width `data_w` (32, 64 or 128), not yet reset. Opens an
    /// FST dump when `VL15_TRACE` is set (see the crate docs).
    pub fn new(data_w: u32) -> Result<Ca> {
        if !matches!(data_w, 32 | 64 | 128) {
            return Err(Error::Width(data_w));
        }
        let model = ffi::new_ca_model(data_w)?;
        if model.is_null() {
            return Err(Error::Null);
        }
        let mut ca = Ca { model };
        if let Some(p) = std::env::var_os("VL15_TRACE").filter(|p| !p.is_empty()) {
            let n = ENV_TRACES.fetch_add(1, Ordering::Relaxed);
            let mut path = p;
            if n > 0 {
                path.push(format!(".{n}"));
            }
            ca.trace_open(Path::new(&path))?;
        }
        Ok(ca)
    }

    /// Hold `rst_ni` low for `cycles` cycles with every input 0. Reset is
    /// released with the next [`Ca::step`].
    pub fn reset(&mut self, cycles: u32) -> Result<()> {
        Ok(self.model.pin_mut().reset(cycles)?)
    }

    /// One clock cycle (see the crate docs for the timing).
    pub fn step(&mut self, inp: &CaIn) -> Result<CaOut> {
        Ok(self.model.pin_mut().step(inp)?)
    }

    /// [`Ca::step`] for every element of `ins`, `outs[k]` receiving the
    /// outputs of cycle k; `outs` must be at least as long as `ins`.
    pub fn step_batch(&mut self, ins: &[CaIn], outs: &mut [CaOut]) -> Result<()> {
        if outs.len() < ins.len() {
            return Err(Error::BatchLen {
                ins: ins.len(),
                outs: outs.len(),
            });
        }
        Ok(self.model.pin_mut().step_batch(ins, outs)?)
    }

    /// Rising clock edges so far, reset cycles included.
    pub fn cycle(&self) -> u64 {
        self.model.cycle()
    }

    /// The model's DataW.
    pub fn data_w(&self) -> u32 {
        self.model.data_w()
    }

    /// Start an FST dump into `path` (closing the open one, if any).
    pub fn trace_open(&mut self, path: &Path) -> Result<()> {
        let s = path
            .to_str()
            .ok_or_else(|| Error::Path(path.to_path_buf()))?;
        Ok(self.model.pin_mut().trace_open(s)?)
    }

    /// Flush and close the FST dump, if one is open.
    pub fn trace_close(&mut self) {
        self.model.pin_mut().trace_close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_width_is_an_error() {
        assert!(matches!(Ca::new(16), Err(Error::Width(16))));
    }

    #[test]
    fn ca_is_send() {
        fn send<T: Send>() {}
        send::<Ca>();
    }
}
