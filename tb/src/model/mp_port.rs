//! One port of the multiport CA (`ib_ca_mp_top`) behind `ib_ca_top`'s
//! boundary, so that [`CaPort`](crate::model::device::CaPort) and all
//! that runs on it (the scoreboard against the CA reference model, the CA
//! soak, the fabric of CA ports, the regression's scenarios) drive it as
//! they drive the single-port top.
//!
//! The port under test gets the wire, data-VL and link inputs; its SMA,
//! SM and trap sends carry its port tag through `smi_port_mux`, and what
//! the shared SMI outputs deliver comes through `smi_port_demux` with the
//! same tag. Register addresses go to the port's bank (`mpreg::port`). The
//! other ports have no link and no traffic: they stay in reset state,
//! Down, idle.

use anyhow::{bail, ensure, Context, Result};
use vl15_bindings::dev::{Dev, DevIn, DevKind, PortIn, PortOut};
use vl15_bindings::{CaIn, CaOut};

use crate::model::device::CaTop;
use crate::model::regmap::mpreg;

/// Port `port` of an `ib_ca_mp_top` of `nports` ports.
pub struct MpCaPort {
    dev: Dev,
    nports: u8,
    port: u8,
    pin: Vec<PortIn>,
    pout: Vec<PortOut>,
}

impl MpCaPort {
    /// The multiport CA models are built with 1 and 2 ports, at DataW 64
    /// and 128 (`vl15_bindings::dev::DEV_DATA_WIDTHS`).
    pub fn new(nports: u8, port: u8, data_w: u32) -> Result<Self> {
        let kind = match nports {
            1 => DevKind::CaMp1,
            2 => DevKind::CaMp2,
            _ => bail!("the multiport CA is built with 1 or 2 ports, not {nports}"),
        };
        ensure!(
            (1..=nports).contains(&port),
            "the {nports}-port CA has no port {port}"
        );
        let dev = Dev::new(kind, u32::from(nports), data_w)
            .with_context(|| format!("building ib_ca_mp_top NumPorts={nports} DataW={data_w}"))?;
        let n = usize::from(nports);
        Ok(MpCaPort {
            dev,
            nports,
            port,
            pin: vec![
                PortIn {
                    tx_tready: true,
                    ..PortIn::default()
                };
                n
            ],
            pout: vec![PortOut::default(); n],
        })
    }
}

impl CaTop for MpCaPort {
    fn step(&mut self, i: &CaIn) -> Result<CaOut> {
        let p = self.port;
        let k = usize::from(p) - 1;
        self.pin[k] = PortIn {
            rx_tdata: i.rx_tdata,
            rx_tkeep: i.rx_tkeep,
            rx_tvalid: i.rx_tvalid,
            rx_tlast: i.rx_tlast,
            tx_tready: i.tx_tready,
            link_up: i.link_up,
            dtx_tdata: i.dtx_tdata,
            dtx_tkeep: i.dtx_tkeep,
            dtx_tvalid: i.dtx_tvalid,
            dtx_tlast: i.dtx_tlast,
        };
        let d = DevIn {
            sma_rx_tready: i.sma_rx_tready,
            sm_rx_tready: i.sm_rx_tready,
            sm_rq_post: i.sm_rq_post,
            sm_rq_post_n: i.sm_rq_post_n,
            sm_rq_clr: i.sm_rq_clr,
            sm_rq_port: p,
            sma_tx_tdata: i.sma_tx_tdata,
            sma_tx_tvalid: i.sma_tx_tvalid,
            sma_tx_tlast: i.sma_tx_tlast,
            sma_tx_slid: i.sma_tx_slid,
            sma_tx_dlid: i.sma_tx_dlid,
            sma_tx_sl: i.sma_tx_sl,
            sma_tx_port: p,
            sm_tx_tdata: i.sm_tx_tdata,
            sm_tx_tvalid: i.sm_tx_tvalid,
            sm_tx_tlast: i.sm_tx_tlast,
            sm_tx_dlid: i.sm_tx_dlid,
            sm_tx_sl: i.sm_tx_sl,
            sm_tx_path_bits: i.sm_tx_path_bits,
            sm_tx_port: p,
            trap_tx_tdata: i.trap_tx_tdata,
            trap_tx_tvalid: i.trap_tx_tvalid,
            trap_tx_tlast: i.trap_tx_tlast,
            trap_tx_port: p,
            reg_we: i.reg_we,
            reg_addr: mpreg::port(p, i.reg_addr),
            reg_wdata: i.reg_wdata,
            ..DevIn::default()
        };
        let o = self.dev.step(&d, &self.pin, &mut self.pout)?;
        let po = &self.pout[k];
        // Only this port has traffic, so whatever the shared SMI outputs
        // deliver is its own; a tag naming another port is a fault of the
        // demux, which the caller sees as a wrong arrival port.
        Ok(CaOut {
            tx_tdata: po.tx_tdata,
            tx_tkeep: po.tx_tkeep,
            tx_tvalid: po.tx_tvalid,
            tx_tlast: po.tx_tlast,
            drx_tdata: po.drx_tdata,
            drx_tkeep: po.drx_tkeep,
            drx_tvalid: po.drx_tvalid,
            drx_tlast: po.drx_tlast,
            drx_tuser: po.drx_tuser,
            drx_reason: po.drx_reason,
            dtx_tready: po.dtx_tready,
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
            reg_rdata: o.reg_rdata,
            sq_tx_beat: po.sq_tx_beat,
            mkey_prot: po.mkey_prot,
            mkey_viols: po.mkey_viols,
            port_state: po.port_state,
            idle: o.idle,
        })
    }

    fn reset(&mut self, cycles: u32) -> Result<()> {
        Ok(self.dev.reset(cycles)?)
    }

    fn cycle(&self) -> u64 {
        self.dev.cycle()
    }

    fn data_w(&self) -> u32 {
        self.dev.data_w()
    }

    fn port_num(&self) -> u8 {
        self.port
    }

    fn describe(&self) -> String {
        format!(
            "ib_ca_mp_top port {} of {} DataW {}",
            self.port,
            self.nports,
            self.dev.data_w()
        )
    }
}

/// Which CA port model a bench of one CA port runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CaPortModel {
    /// The single-port `ib_ca_top` (DataW 32, 64, 128).
    #[default]
    Top,
    /// Port `port` of the multiport `ib_ca_mp_top` of `nports` ports
    /// (DataW 64, 128).
    Mp { nports: u8, port: u8 },
}

impl CaPortModel {
    /// The model at `data_w`, not yet reset.
    pub fn build(self, data_w: u32) -> Result<Box<dyn CaTop>> {
        Ok(match self {
            CaPortModel::Top => Box::new(
                vl15_bindings::Ca::new(data_w)
                    .with_context(|| format!("building ib_ca_top DataW={data_w}"))?,
            ),
            CaPortModel::Mp { nports, port } => Box::new(MpCaPort::new(nports, port, data_w)?),
        })
    }

    /// The widths the model is built at.
    pub fn widths(self) -> &'static [u32] {
        match self {
            CaPortModel::Top => &[32, 64, 128],
            CaPortModel::Mp { .. } => &vl15_bindings::dev::DEV_DATA_WIDTHS,
        }
    }
}
