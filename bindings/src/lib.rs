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
//! - Coverage: a build with `VL15_COVERAGE=1` in the environment counts
//!   Verilator's line, branch, expression, toggle, FSM and `cover property`
//!   points; with `VL15_COVERAGE_DIR` set, every model adds its counts to
//!   its thread's when it is dropped, and each thread (a test, a verb)
//!   writes one file there when it ends (`make coverage`, docs/coverage.md).
//! - Initial values: the model is built with `--x-initial unique`, so
//!   registers start random (reproducibly: seed `VL15_SEED`, default 1) until
//!   [`Ca::reset`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub mod dev;

pub use dev::{
    Changed, Dev, DevIn, DevKind, DevOut, PortIn, PortOut, DEV_DATA_WIDTHS, MAX_SWITCH_PORTS,
    SWITCH_LFT_DEPTH,
};
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
        fn coverage_write(self: Pin<&mut CaModel>, path: &str) -> Result<bool>;
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
    #[error("step: the model has {want} ports, got {ins} inputs")]
    Ports { want: usize, ins: usize },
    /// A multiport step named a changed port the model does not have.
    #[error("step: changed port index {index} of a {ports}-port model")]
    PortIndex { index: u8, ports: usize },
}

impl From<cxx::Exception> for Error {
    fn from(e: cxx::Exception) -> Self {
        Error::Sim(e)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Instances created so far with `VL15_TRACE` set (for unique dump names).
pub(crate) static ENV_TRACES: AtomicUsize = AtomicUsize::new(0);

/// Coverage files and scratch files made so far by this process (for
/// unique names).
static COVERAGE_FILES: AtomicUsize = AtomicUsize::new(0);

/// The coverage counts of the models a thread dropped, summed per point
/// (its `C '<keys>'` text), in first-seen order; written to `path` when the
/// thread ends. Summing per point keeps one file per run (a test, a verb),
/// whatever the number of devices it built.
#[derive(Default)]
struct CoverageAcc {
    path: Option<PathBuf>,
    index: std::collections::HashMap<String, usize>,
    points: Vec<(String, u64)>,
}

impl CoverageAcc {
    /// Add the points of one coverage file's text.
    fn add(&mut self, text: &str) {
        for l in text.lines().filter(|l| l.starts_with("C '")) {
            let Some((key, n)) = l.rsplit_once(' ') else {
                continue;
            };
            self.add_point(key, n.parse().unwrap_or(0));
        }
    }

    /// Add `n` to one point (its `C '<keys>'` text).
    fn add_point(&mut self, key: &str, n: u64) {
        match self.index.get(key) {
            Some(&i) => self.points[i].1 = self.points[i].1.saturating_add(n),
            None => {
                self.index.insert(key.to_string(), self.points.len());
                self.points.push((key.to_string(), n));
            }
        }
    }

    fn write(&self) -> std::io::Result<()> {
        let Some(p) = &self.path else {
            return Ok(());
        };
        let mut s = String::from("# SystemC::Coverage-3\n");
        for (k, n) in &self.points {
            s.push_str(k);
            s.push(' ');
            s.push_str(&n.to_string());
            s.push('\n');
        }
        std::fs::write(p, s)
    }
}

impl Drop for CoverageAcc {
    fn drop(&mut self) {
        if let Err(e) = self.write() {
            eprintln!("vl15: writing coverage: {e}");
        }
    }
}

thread_local! {
    static COVERAGE: std::cell::RefCell<CoverageAcc> =
        std::cell::RefCell::new(CoverageAcc::default());
}

/// The run a coverage file belongs to: the thread's name (under `cargo
/// test`, the test's) or else the program's, with `$VL15_COVERAGE_RUN.`
/// before it when that is set.
fn coverage_run() -> String {
    let thread = std::thread::current();
    let name = match thread.name() {
        Some(n) if n != "main" => n.to_string(),
        _ => std::env::current_exe()
            .ok()
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "run".to_string()),
    };
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    match std::env::var("VL15_COVERAGE_RUN") {
        Ok(r) if !r.is_empty() => format!("{r}.{clean}"),
        _ => clean,
    }
}

/// Add `n` to one point the host counts itself (the test bench's own
/// functional coverage): `key` is the point's `C '<keys>'` text, in the
/// form Verilator writes. It goes into the thread's coverage file with the
/// models' points. Nothing when `VL15_COVERAGE_DIR` is unset or empty.
pub fn coverage_add_host(key: &str, n: u64) {
    COVERAGE.with(|c| {
        let mut c = c.borrow_mut();
        if c.path.is_none() {
            let Some(dir) = coverage_dir() else {
                return;
            };
            let file = COVERAGE_FILES.fetch_add(1, Ordering::Relaxed);
            let pid = std::process::id();
            c.path = Some(dir.join(format!("{}.{pid}.{file}.dat", coverage_run())));
        }
        c.add_point(key, n);
    });
}

/// `$VL15_COVERAGE_DIR`, when set and not empty; made when it does not
/// exist yet.
fn coverage_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("VL15_COVERAGE_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)?;
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("vl15: coverage directory {}: {e}", dir.display());
    }
    Some(dir)
}

/// A model of a coverage build is being dropped: have it write its counts
/// (`write`, to a scratch file) and add them to the thread's sum, which is
/// written to `$VL15_COVERAGE_DIR/<run>.<pid>.<n>.dat` when the thread
/// ends. Nothing when `VL15_COVERAGE_DIR` is unset or empty, or the build
/// has no coverage (`write` returns false).
pub(crate) fn coverage_on_drop(write: impl FnOnce(&Path) -> Result<bool>) {
    let Some(dir) = coverage_dir() else {
        return;
    };
    let n = COVERAGE_FILES.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    let scratch = dir.join(format!(".scratch.{pid}.{n}.dat"));
    let res = write(&scratch)
        .map_err(|e| e.to_string())
        .and_then(|written| {
            if !written {
                return Ok(());
            }
            let text = std::fs::read_to_string(&scratch).map_err(|e| e.to_string());
            let _ = std::fs::remove_file(&scratch);
            let text = text?;
            COVERAGE.with(|c| {
                let mut c = c.borrow_mut();
                if c.path.is_none() {
                    c.path = Some(dir.join(format!("{}.{pid}.{n}.dat", coverage_run())));
                }
                c.add(&text);
            });
            Ok(())
        });
    if let Err(e) = res {
        eprintln!("vl15: coverage of a model into {}: {e}", dir.display());
    }
}

impl Drop for Ca {
    /// A coverage build adds the model's counts to the run's
    /// ([`coverage_on_drop`]).
    fn drop(&mut self) {
        coverage_on_drop(|p| self.coverage_write(p));
    }
}

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

    /// In a coverage build (`VL15_COVERAGE=1` when the crate was built),
    /// write the model's coverage counts so far to `path` and return true;
    /// otherwise false.
    pub fn coverage_write(&mut self, path: &Path) -> Result<bool> {
        let s = path
            .to_str()
            .ok_or_else(|| Error::Path(path.to_path_buf()))?;
        Ok(self.model.pin_mut().coverage_write(s)?)
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
