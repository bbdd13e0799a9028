# ib_ca_board file list (the board-independent FPGA top: ib_ca_top + UART),
# repository-relative, in dependency order (packages first). The vendor board
# wrappers (rtl/fpga/ice40_icebreaker_top.sv, rtl/fpga/ecp5_ulx3s_top.sv) are
# not listed: they need the vendor PLL primitives (synthesis only).
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
rtl/fpga/ib_uart_pkg.sv
rtl/fpga/uart_rx.sv
rtl/fpga/uart_tx.sv
rtl/fpga/uart_framer.sv
rtl/fpga/uart_deframer.sv
rtl/fpga/ib_uart_down.sv
rtl/fpga/ib_uart_up.sv
rtl/fpga/pulse_stretch.sv
rtl/fpga/ib_ca_board.sv
