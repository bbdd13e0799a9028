# ib_switch_top file list, repository-relative, in dependency order (package first).
rtl/ib_pkg.sv
rtl/ib_axis_checker.sv
rtl/ib_link_rx.sv
rtl/ib_link_tx.sv
rtl/ib_pkt_fifo.sv
rtl/smi_rx_dispatch.sv
rtl/sw_smi_rq.sv
rtl/sw_smi_sq.sv
rtl/sw_regs.sv
rtl/sw_rr_pick.sv
rtl/sw_lft.sv
rtl/sw_in_writer.sv
rtl/sw_gmp_tx.sv
rtl/sw_pktlen_tap.sv
rtl/sw_route.sv
rtl/sw_out_arb.sv
rtl/ib_switch_top.sv
