# ib_ca_mp_top file list (multiport CA), repository-relative, in dependency
# order (package first): the ib_ca_top files, then the port mux/demux and the top.
rtl/ib_pkg.sv
rtl/ib_axis_checker.sv
rtl/ib_link_rx.sv
rtl/ib_link_tx.sv
rtl/ib_pkt_fifo.sv
rtl/ib_ctr_ram.sv
rtl/ib_ctr_bank.sv
rtl/ib_port_regs.sv
rtl/smi_rx_fields.sv
rtl/smi_icrc_chk.sv
rtl/smi_mad_align.sv
rtl/smi_rx_core.sv
rtl/smi_rq.sv
rtl/gsi_rx_check.sv
rtl/pkey_regs.sv
rtl/smi_rx_dispatch.sv
rtl/smi_mkey_chk.sv
rtl/smi_tx_emit.sv
rtl/smi_tx_fields.sv
rtl/smi_tx_ctrl.sv
rtl/smi_sq.sv
rtl/ib_ca_top.sv
rtl/smi_port_mux.sv
rtl/smi_port_demux.sv
rtl/ib_clk_gate.sv
rtl/ib_ca_mp_top.sv
