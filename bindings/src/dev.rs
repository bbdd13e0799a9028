//! cxx bindings to the Verilated multiport devices (docs/fabric.md): the
//! switch of any radix 1..64 (its tiles `sw_mgmt_tile` and `sw_port_tile`,
//! composed by `sim/sw_tiles.h` as `ib_switch_top` composes them) and the
//! multiport CA `ib_ca_mp_top` with 1 and 2 ports, each at DataW 64 and 128.
//! Only bits move here, as in the crate root: per external
//! port a [`PortIn`]/[`PortOut`] (port p = 1..N at index p−1), the rest of the
//! top in [`DevIn`]/[`DevOut`]. Encodings as [`crate::CaIn`] (stream data is
//! `[u64; 2]` little-endian words, `tkeep` a `u16`, narrow ports the smallest
//! unsigned integer).

use std::path::Path;
use std::sync::atomic::Ordering;

pub use ffi::{DevIn, DevKind, DevOut, PortIn, PortOut};

use crate::{Error, Result, ENV_TRACES};

#[cxx::bridge(namespace = "vl15")]
mod ffi {
    /// Which device (each at DataW 64 or 128).
    #[derive(Debug)]
    #[repr(u8)]
    enum DevKind {
        /// The switch, 1..=64 external ports ([`MAX_SWITCH_PORTS`]).
        Switch,
        /// `ib_ca_mp_top`, NumPorts 1.
        CaMp1,
        /// `ib_ca_mp_top`, NumPorts 2.
        CaMp2,
    }

    /// Inputs of one external port for one cycle.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    struct PortIn {
        rx_tdata: [u64; 2],
        rx_tkeep: u16,
        rx_tvalid: bool,
        rx_tlast: bool,
        tx_tready: bool,
        link_up: bool,
        /// Host → data VLs (CA only; ignored by a switch).
        dtx_tdata: [u64; 2],
        dtx_tkeep: u16,
        dtx_tvalid: bool,
        dtx_tlast: bool,
    }

    /// Outputs of one external port during one cycle.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    struct PortOut {
        tx_tdata: [u64; 2],
        tx_tkeep: u16,
        tx_tvalid: bool,
        tx_tlast: bool,
        /// Data VLs → host (CA only; 0 on a switch).
        drx_tdata: [u64; 2],
        drx_tkeep: u16,
        drx_tvalid: bool,
        drx_tlast: bool,
        drx_tuser: bool,
        /// On tlast: why gsi_rx_check discarded it (ib_pkg::gsi_reason_e).
        drx_reason: u8,
        dtx_tready: bool,
        /// PortState (4 bits).
        port_state: u8,
        /// M_KeyProtectBits and M_KeyViolations of the port (CA only; a
        /// switch has them for port 0 in `DevOut`).
        mkey_prot: u8,
        mkey_viols: u16,
        /// CA only: the port's SMI send engine put a beat into its VL15 TX
        /// buffer this cycle (`sq_tx_beat_o`; an observation, no function).
        sq_tx_beat: bool,
    }

    /// Inputs of the management side for one cycle.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    struct DevIn {
        sma_rx_tready: bool,
        sm_rx_tready: bool,
        /// SM receive-queue doorbell (CA only): add `sm_rq_post_n` receive
        /// WQEs to port `sm_rq_port`'s queue.
        sm_rq_post: bool,
        sm_rq_post_n: u8,
        /// Withdraw every WQE of port `sm_rq_port`'s queue first (CA only).
        sm_rq_clr: bool,
        /// Port tag of the doorbell (CA only).
        sm_rq_port: u8,
        sma_tx_tdata: [u64; 2],
        sma_tx_tvalid: bool,
        sma_tx_tlast: bool,
        sma_tx_slid: u16,
        sma_tx_dlid: u16,
        sma_tx_sl: u8,
        /// Port tag (CA only).
        sma_tx_port: u8,
        sm_tx_tdata: [u64; 2],
        sm_tx_tvalid: bool,
        sm_tx_tlast: bool,
        sm_tx_dlid: u16,
        sm_tx_sl: u8,
        sm_tx_path_bits: u8,
        /// Port tag (CA only).
        sm_tx_port: u8,
        trap_tx_tdata: [u64; 2],
        trap_tx_tvalid: bool,
        trap_tx_tlast: bool,
        /// Port tag (CA only).
        trap_tx_port: u8,
        /// Host → switch port 0's GMP send stream (switch only; LRH..ICRC).
        gmp_tx_tdata: [u64; 2],
        gmp_tx_tkeep: u16,
        gmp_tx_tvalid: bool,
        gmp_tx_tlast: bool,
        reg_we: bool,
        reg_addr: u16,
        reg_wdata: u32,
    }

    /// Outputs of the management side during one cycle.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    struct DevOut {
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
        /// (Trap 256), or a bad-key Get at protect 1 (M_Key reads 0).
        sma_rx_mkey_viol: bool,
        sma_rx_mkey_mask: bool,
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
        sma_tx_tready: bool,
        sm_tx_tready: bool,
        trap_tx_tready: bool,
        /// Switch port 0's GMP receive stream → host (switch only; LRH..VCRC,
        /// no ready, `gmp_rx_tuser` on tlast = discard).
        gmp_rx_tdata: [u64; 2],
        gmp_rx_tkeep: u16,
        gmp_rx_tvalid: bool,
        gmp_rx_tlast: bool,
        gmp_rx_tuser: bool,
        /// On tlast: why port 0's gsi_rx_check discarded it (gsi_reason_e).
        gmp_rx_reason: u8,
        gmp_tx_tready: bool,
        reg_rdata: u32,
        /// Nothing buffered or in flight anywhere in the device.
        idle: bool,
        /// SwitchInfo.PortStateChange (switch only).
        port_state_change: bool,
        /// PortState of switch port 0 (switch only).
        port0_state: u8,
        /// M_KeyProtectBits and M_KeyViolations of switch port 0 (switch only).
        port0_mkey_prot: u8,
        port0_mkey_viols: u16,
    }

    unsafe extern "C++" {
        include!("dev_shim.h");

        /// One Verilated multiport top (sim/dev_shim.h).
        type DevModel;

        fn new_dev_model(kind: DevKind, nports: u32, data_w: u32) -> Result<UniquePtr<DevModel>>;
        fn reset(self: Pin<&mut DevModel>, cycles: u32) -> Result<()>;
        fn step(
            self: Pin<&mut DevModel>,
            inp: &DevIn,
            ports_in: &[PortIn],
            changed: &[u8],
            all: bool,
        ) -> Result<DevOut>;
        fn ports_out(self: &DevModel) -> &[PortOut];
        fn skip(self: Pin<&mut DevModel>, n: u64);
        fn cycle(self: &DevModel) -> u64;
        fn num_ports(self: &DevModel) -> u32;
        fn data_w(self: &DevModel) -> u32;
        fn trace_open(self: Pin<&mut DevModel>, path: &str) -> Result<()>;
        fn trace_close(self: Pin<&mut DevModel>);
        fn coverage_write(self: Pin<&mut DevModel>, path: &str) -> Result<bool>;
    }
}

// SAFETY: as for `CaModel` (crate root): a DevModel owns its Verilated model,
// its own VerilatedContext and its FST writer, and the shim points the
// calling thread's Verilator context at the instance before every
// evaluation. Not Sync: every evaluating method takes `Pin<&mut _>`.
unsafe impl Send for ffi::DevModel {}

/// Which external ports' inputs may differ from the previous
/// [`Dev::step`]'s (indices: port p at p−1, any order). The first step
/// after [`Dev::new`] or [`Dev::reset`] reads every port whatever it says.
#[derive(Clone, Copy, Debug)]
pub enum Changed<'a> {
    /// Any port's.
    All,
    /// Only these ports'; every other port's `PortIn` is the one of the
    /// previous step.
    Ports(&'a [u8]),
}

/// One multiport-top simulation.
pub struct Dev {
    model: cxx::UniquePtr<ffi::DevModel>,
    kind: DevKind,
}

impl std::fmt::Debug for Dev {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dev")
            .field("kind", &self.kind)
            .field("cycle", &self.cycle())
            .finish()
    }
}

/// The most external ports of a switch.
pub const MAX_SWITCH_PORTS: u32 = 64;

/// LFT entries of the switch model (`LftDepth`, `build.rs`): LIDs
/// 0..16383, SwitchInfo.LinearFDBCap: room for a three-level fat tree of
/// 36-port switches (13,284 LIDs).
pub const SWITCH_LFT_DEPTH: u16 = 16384;

/// The DataW values the multiport devices are built at.
pub const DEV_DATA_WIDTHS: [u32; 2] = [64, 128];

impl Dev {
    /// A new model of `nports` external ports (a switch: 1..=64; the CA
    /// kinds: their own count) at DataW `data_w` ([`DEV_DATA_WIDTHS`]), not
    /// yet reset. Opens an FST dump when `VL15_TRACE` is set (numbered as
    /// [`crate::Ca::new`] does).
    pub fn new(kind: DevKind, nports: u32, data_w: u32) -> Result<Dev> {
        if !DEV_DATA_WIDTHS.contains(&data_w) {
            return Err(Error::DevWidth(data_w));
        }
        let model = ffi::new_dev_model(kind, nports, data_w)?;
        if model.is_null() {
            return Err(Error::Null);
        }
        let mut d = Dev { model, kind };
        if let Some(p) = std::env::var_os("VL15_TRACE").filter(|p| !p.is_empty()) {
            let n = ENV_TRACES.fetch_add(1, Ordering::Relaxed);
            let mut path = p;
            if n > 0 {
                path.push(format!(".{n}"));
            }
            d.trace_open(Path::new(&path))?;
        }
        Ok(d)
    }

    pub fn kind(&self) -> DevKind {
        self.kind
    }

    /// Hold `rst_ni` low for `cycles` cycles (links up, everything else idle).
    pub fn reset(&mut self, cycles: u32) -> Result<()> {
        Ok(self.model.pin_mut().reset(cycles)?)
    }

    /// One clock cycle: `ports_in` has [`Dev::num_ports`] elements, and
    /// `changed` says which of them may differ from the previous step's
    /// (the model reads only those: a wide switch with few busy ports costs
    /// what its busy ports cost). The ports' outputs are then in
    /// [`Dev::ports_out`].
    pub fn step(
        &mut self,
        inp: &DevIn,
        ports_in: &[PortIn],
        changed: Changed<'_>,
    ) -> Result<DevOut> {
        let n = self.num_ports() as usize;
        if ports_in.len() != n {
            return Err(Error::Ports {
                want: n,
                ins: ports_in.len(),
            });
        }
        let (list, all): (&[u8], bool) = match changed {
            Changed::All => (&[], true),
            Changed::Ports(l) => {
                if let Some(&k) = l.iter().find(|&&k| usize::from(k) >= n) {
                    return Err(Error::PortIndex { index: k, ports: n });
                }
                (l, false)
            }
        };
        Ok(self.model.pin_mut().step(inp, ports_in, list, all)?)
    }

    /// The external ports' outputs of the last [`Dev::step`] (port p at
    /// p−1), held by the model.
    pub fn ports_out(&self) -> &[PortOut] {
        self.model.ports_out()
    }

    /// Count `n` cycles without evaluating. Only sound while the model is
    /// idle (`DevOut::idle`) and gets no input: its state would not change.
    pub fn skip(&mut self, n: u64) {
        self.model.pin_mut().skip(n);
    }

    /// Cycles so far (reset and skipped cycles included).
    pub fn cycle(&self) -> u64 {
        self.model.cycle()
    }

    /// External ports N.
    pub fn num_ports(&self) -> u32 {
        self.model.num_ports()
    }

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

impl Drop for Dev {
    /// A coverage build adds the model's counts to the run's
    /// (`VL15_COVERAGE_DIR`).
    fn drop(&mut self) {
        crate::coverage_on_drop(|p| self.coverage_write(p));
    }
}
