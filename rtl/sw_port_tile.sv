// sw_port_tile: one external port of ib_switch_top (docs/fabric.md "Port
// tiles"). Input side: ib_link_rx, the VL15 and data input buffers
// (sw_in_writer + ib_pkt_fifo) and their routing (sw_route, LFT lookups
// through the switch's shared port). Output side: the port's two crossbar
// arbiters (VL15, data), ib_link_tx and the TxWords tap. Registers: the
// port's PortState and counters (sw_port_regs), on the switch's register bus.
//
// Everything between tiles is a wire (the crossbar of ib_switch_top):
//   - each buffer head (x_t*_o) with a one-hot request x_reqv_o[q] for
//     egress q; output q receives the requests addressed to it as
//     ox_req_i[i] and, once its arbiter has granted input g, that input's
//     head on ox_t*_i;
//   - output q answers with ox_gnt_rdy_o, one-hot at g while the granted
//     beat is taken this cycle; input i reads bit i of its egress's vector
//     as x_sel_i.
// A tile has one gated clock (ib_clk_gate): it runs while the port may
// change (clk_en below): in reset, busy, a beat arriving, the link going up
// or down, a request for its output, an event still to be counted, or a
// register write to the port. port_state_i is read only while a packet is
// being routed (busy), so a change of it alone does not need the clock. With
// ClkGate = 0 (and in synthesis) the clock runs always; both builds behave
// the same cycle by cycle.
//
// The port number (port_i) and the switch's port counts (num_ports_i, n_i)
// are inputs, so every tile of every radix up to MaxPorts is the same module.
module sw_port_tile
  import ib_pkg::*;
#(
  parameter int unsigned DataW         = 64,    // stream width in bits: 32, 64 or 128
  parameter int unsigned MaxPorts      = 8,     // crossbar size: inputs/outputs 0..MaxPorts
  parameter int unsigned LftDepth      = 4096,  // LFT entries
  parameter int unsigned Vl15Depth     = 3,     // VL15 input slots
  parameter int unsigned DataDepth     = 2,     // data-VL input slots
  parameter int unsigned DataSlotBytes = 4224,  // largest data packet LRH..ICRC
  parameter bit          ClkGate       = 1'b1,  // gate this tile's clock in simulation
  localparam int unsigned DataB        = DataW / 8,
  localparam int unsigned NP           = MaxPorts + 1,
  localparam int unsigned IW           = $clog2(NP)
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // configuration (wires from the switch)
  input  logic [7:0]       port_i,        // this port's number, 1..num_ports_i
  input  logic [7:0]       num_ports_i,   // the switch's external ports (NumPorts)
  input  logic [7:0]       n_i,           // the runtime port count (NUM_PORTS register)
  input  logic [15:0]      port0_lid_i,
  input  logic [15:0]      linear_top_i,
  input  logic [3:0]       port_state_i [NP],  // effective PortState of ports 0..MaxPorts
  // register bus (16-bit word addresses; combinational read)
  input  logic             reg_we_i,
  input  logic [15:0]      reg_addr_i,
  input  logic [31:0]      reg_wdata_i,
  output logic [31:0]      reg_rdata_o,   // 0 unless reg_addr_i is this port's
  output logic [3:0]       state_o,       // this port's effective PortState
  output logic             state_chg_o,   // it changes at the coming edge
  // the wire
  input  logic             link_up_i,
  input  logic [DataW-1:0] rx_tdata_i,
  input  logic [DataB-1:0] rx_tkeep_i,
  input  logic             rx_tvalid_i,
  input  logic             rx_tlast_i,
  output logic [DataW-1:0] tx_tdata_o,
  output logic [DataB-1:0] tx_tkeep_o,
  output logic             tx_tvalid_o,
  output logic             tx_tlast_o,
  input  logic             tx_tready_i,
  // LFT lookups: [0] VL15 buffer, [1] data buffer
  output logic [1:0]       lft_req_o,
  output logic [15:0]      lft_lid_o [2],
  input  logic [1:0]       lft_gnt_i,
  input  logic [1:0]       lft_rsp_i,
  input  logic [7:0]       lft_entry_i,
  // crossbar, input side: VL15 buffer head
  output logic [DataW-1:0] v_tdata_o,
  output logic [DataB-1:0] v_tkeep_o,
  output logic             v_tvalid_o,
  output logic             v_tlast_o,
  output logic [NP-1:0]    v_reqv_o,      // one-hot: the head packet's egress
  output logic [7:0]       v_dest_o,      // that egress as a number
  input  logic             v_sel_i,       // the egress takes the head beat
  // crossbar, input side: data buffer head
  output logic [DataW-1:0] d_tdata_o,
  output logic [DataB-1:0] d_tkeep_o,
  output logic             d_tvalid_o,
  output logic             d_tlast_o,
  output logic [15:0]      d_vcrc_o,      // the VCRC the head packet arrived with
  output logic [NP-1:0]    d_reqv_o,
  output logic [7:0]       d_dest_o,
  input  logic             d_sel_i,
  // crossbar, output side: VL15 arbiter
  input  logic [NP-1:0]    ov_req_i,      // input i requests this output
  output logic             ov_locked_o,
  output logic [IW-1:0]    ov_grant_o,
  input  logic [DataW-1:0] ov_tdata_i,    // the granted input's head
  input  logic [DataB-1:0] ov_tkeep_i,
  input  logic             ov_tvalid_i,
  input  logic             ov_tlast_i,
  output logic [NP-1:0]    ov_gnt_rdy_o,  // one-hot at the grant: its beat is taken
  // crossbar, output side: data arbiter
  input  logic [NP-1:0]    od_req_i,
  output logic             od_locked_o,
  output logic [IW-1:0]    od_grant_o,
  input  logic [DataW-1:0] od_tdata_i,
  input  logic [DataB-1:0] od_tkeep_i,
  input  logic             od_tvalid_i,
  input  logic             od_tlast_i,
  output logic [NP-1:0]    od_gnt_rdy_o,
  // idle
  output logic             busy_o,        // something buffered or in flight
  output logic             clk_en_o       // the tile's clock runs this cycle
);

  localparam int unsigned Vl15Words = SmpPktBytes / DataB;      // 288-byte VL15 slot
  localparam int unsigned DataWords = (DataSlotBytes + DataB - 1) / DataB;

  // ---------------------------------------------------------------------------
  // The tile's clock
  // ---------------------------------------------------------------------------
  logic clk, clk_en, link_edge, reg_wake, ev_any, busy_in, busy_out;

  ib_clk_gate #(.Enable(ClkGate)) u_clk_gate (
    .clk_i,
    .en_i  (clk_en),
    .gclk_o(clk)
  );

  assign clk_en   = !rst_ni || busy_in || busy_out || rx_tvalid_i || link_edge || reg_wake ||
                    (|ov_req_i) || (|od_req_i) || ev_any;
  assign clk_en_o = clk_en;
  assign busy_o   = busy_in || busy_out;

  // ---------------------------------------------------------------------------
  // Input side: link checks, input buffers, routing
  // ---------------------------------------------------------------------------
  logic             link_rst_n;
  logic [DataW-1:0] lv_tdata, ld_tdata;
  logic [DataB-1:0] lv_tkeep, ld_tkeep;
  logic             lv_tvalid, ld_tvalid, lv_tlast, ld_tlast, lv_tuser, ld_tuser;
  logic             ev_pkt, ev_data_pkt, ev_len, ev_lver, ev_lnh, ev_vcrc;

  // the link layer restarts when the link comes up
  assign link_rst_n = rst_ni && link_up_i;

  ib_link_rx #(.DataW(DataW)) u_link_rx (
    .clk_i        (clk),
    .rst_ni       (link_rst_n),
    .rx_tdata_i,
    .rx_tkeep_i,
    .rx_tvalid_i  (rx_tvalid_i && link_up_i),
    .rx_tlast_i,
    .vl15_tdata_o (lv_tdata),
    .vl15_tkeep_o (lv_tkeep),
    .vl15_tvalid_o(lv_tvalid),
    .vl15_tlast_o (lv_tlast),
    .vl15_tuser_o (lv_tuser),
    .data_tdata_o (ld_tdata),
    .data_tkeep_o (ld_tkeep),
    .data_tvalid_o(ld_tvalid),
    .data_tlast_o (ld_tlast),
    .data_tuser_o (ld_tuser),
    .ev_pkt_o     (ev_pkt),
    .ev_data_pkt_o(ev_data_pkt),
    .ev_len_err_o (ev_len),
    .ev_lver_err_o(ev_lver),
    .ev_lnh_err_o (ev_lnh),
    .ev_vcrc_err_o(ev_vcrc)
  );

  // VL15 buffer
  logic             vw_valid, vw_end, vw_ok, vw_drop_full, vw_slot_free;
  logic [DataW-1:0] vw_data;
  logic [DataB-1:0] vw_keep;
  logic [15:0]      vw_meta, vr_meta, vw_vcrc;
  logic             vw_ev_drop, vw_ev_link, vw_ev_commit, vw_busy;
  logic             v_tready, v_drain, v_req;

  sw_in_writer #(.DataW(DataW), .SlotWords(Vl15Words)) u_vl15_wr (
    .clk_i         (clk),
    .rst_ni,
    .link_up_i,
    .s_tdata_i     (lv_tdata),
    .s_tkeep_i     (lv_tkeep),
    .s_tvalid_i    (lv_tvalid),
    .s_tlast_i     (lv_tlast),
    .s_tuser_i     (lv_tuser),
    .wr_valid_o    (vw_valid),
    .wr_data_o     (vw_data),
    .wr_keep_o     (vw_keep),
    .wr_end_o      (vw_end),
    .wr_ok_o       (vw_ok),
    .wr_meta_o     (vw_meta),
    .wr_vcrc_o     (vw_vcrc),
    .wr_drop_full_i(vw_drop_full),
    .ev_buf_drop_o (vw_ev_drop),
    .ev_link_drop_o(vw_ev_link),
    .ev_commit_o   (vw_ev_commit),
    .busy_o        (vw_busy)
  );

  ib_pkt_fifo #(
    .DataW(DataW), .Depth(Vl15Depth), .SlotWords(Vl15Words), .MetaW(16)
  ) u_vl15_buf (
    .clk_i         (clk),
    .rst_ni,
    .limit_i       (8'(Vl15Depth)),
    .wr_valid_i    (vw_valid),
    .wr_data_i     (vw_data),
    .wr_keep_i     (vw_keep),
    .wr_end_i      (vw_end),
    .wr_ok_i       (vw_ok),
    .wr_meta_i     (vw_meta),
    .wr_drop_full_o(vw_drop_full),
    .wr_slot_free_o(vw_slot_free),
    .rd_tdata_o    (v_tdata_o),
    .rd_tkeep_o    (v_tkeep_o),
    .rd_tvalid_o   (v_tvalid_o),
    .rd_tlast_o    (v_tlast_o),
    .rd_meta_o     (vr_meta),
    .rd_tready_i   (v_tready)
  );

  // data buffer
  logic             dw_valid, dw_end, dw_ok, dw_drop_full, dw_slot_free;
  logic [DataW-1:0] dw_data;
  logic [DataB-1:0] dw_keep;
  logic [15:0]      dw_meta, dw_vcrc;
  logic [31:0]      dr_meta;
  logic             dw_ev_drop, dw_ev_link, dw_ev_commit, dw_busy;
  logic             d_tready, d_drain, d_req;

  sw_in_writer #(.DataW(DataW), .SlotWords(DataWords)) u_data_wr (
    .clk_i         (clk),
    .rst_ni,
    .link_up_i,
    .s_tdata_i     (ld_tdata),
    .s_tkeep_i     (ld_tkeep),
    .s_tvalid_i    (ld_tvalid),
    .s_tlast_i     (ld_tlast),
    .s_tuser_i     (ld_tuser),
    .wr_valid_o    (dw_valid),
    .wr_data_o     (dw_data),
    .wr_keep_o     (dw_keep),
    .wr_end_o      (dw_end),
    .wr_ok_o       (dw_ok),
    .wr_meta_o     (dw_meta),
    .wr_vcrc_o     (dw_vcrc),
    .wr_drop_full_i(dw_drop_full),
    .ev_buf_drop_o (dw_ev_drop),
    .ev_link_drop_o(dw_ev_link),
    .ev_commit_o   (dw_ev_commit),
    .busy_o        (dw_busy)
  );

  ib_pkt_fifo #(
    .DataW(DataW), .Depth(DataDepth), .SlotWords(DataWords), .MetaW(32)
  ) u_data_buf (
    .clk_i         (clk),
    .rst_ni,
    .limit_i       (8'(DataDepth)),
    .wr_valid_i    (dw_valid),
    .wr_data_i     (dw_data),
    .wr_keep_i     (dw_keep),
    .wr_end_i      (dw_end),
    .wr_ok_i       (dw_ok),
    .wr_meta_i     ({dw_vcrc, dw_meta}),
    .wr_drop_full_o(dw_drop_full),
    .wr_slot_free_o(dw_slot_free),
    .rd_tdata_o    (d_tdata_o),
    .rd_tkeep_o    (d_tkeep_o),
    .rd_tvalid_o   (d_tvalid_o),
    .rd_tlast_o    (d_tlast_o),
    .rd_meta_o     (dr_meta),
    .rd_tready_i   (d_tready)
  );
  assign d_vcrc_o = dr_meta[31:16];

  // A head beat is taken: drained, or taken by its egress.
  assign v_tready = v_drain || (v_req && v_sel_i);
  assign d_tready = d_drain || (d_req && d_sel_i);

  logic [1:0] r_no_route, r_loop, r_state, r_fwd;

  sw_route #(
    .MaxPorts(MaxPorts), .LftDepth(LftDepth), .Port0(1'b0), .IsVl15(1'b1)
  ) u_route_vl15 (
    .clk_i        (clk),
    .rst_ni,
    .head_valid_i (v_tvalid_o),
    .head_last_i  (v_tlast_o),
    .head_meta_i  ('{lft: 1'b1, egress: 8'd0, dlid: vr_meta}),
    .drain_o      (v_drain),
    .take_i       (v_tvalid_o && v_tready),
    .in_port_i    (port_i),
    .num_ports_i,
    .port0_lid_i,
    .linear_top_i,
    .port_state_i,
    .lft_req_o    (lft_req_o[0]),
    .lft_lid_o    (lft_lid_o[0]),
    .lft_gnt_i    (lft_gnt_i[0]),
    .lft_rsp_i    (lft_rsp_i[0]),
    .lft_entry_i,
    .req_o        (v_req),
    .dest_o       (v_dest_o),
    .ev_no_route_o(r_no_route[0]),
    .ev_loop_o    (r_loop[0]),
    .ev_state_o   (r_state[0]),
    .ev_fwd_o     (r_fwd[0])
  );

  sw_route #(
    .MaxPorts(MaxPorts), .LftDepth(LftDepth), .Port0(1'b0), .IsVl15(1'b0)
  ) u_route_data (
    .clk_i        (clk),
    .rst_ni,
    .head_valid_i (d_tvalid_o),
    .head_last_i  (d_tlast_o),
    .head_meta_i  ('{lft: 1'b1, egress: 8'd0, dlid: dr_meta[15:0]}),
    .drain_o      (d_drain),
    .take_i       (d_tvalid_o && d_tready),
    .in_port_i    (port_i),
    .num_ports_i,
    .port0_lid_i,
    .linear_top_i,
    .port_state_i,
    .lft_req_o    (lft_req_o[1]),
    .lft_lid_o    (lft_lid_o[1]),
    .lft_gnt_i    (lft_gnt_i[1]),
    .lft_rsp_i    (lft_rsp_i[1]),
    .lft_entry_i,
    .req_o        (d_req),
    .dest_o       (d_dest_o),
    .ev_no_route_o(r_no_route[1]),
    .ev_loop_o    (r_loop[1]),
    .ev_state_o   (r_state[1]),
    .ev_fwd_o     (r_fwd[1])
  );

  // one-hot requests (sw_route's dest is at most num_ports_i <= MaxPorts;
  // a larger one would shift the bit out: no request)
  assign v_reqv_o = NP'(v_req) << v_dest_o;
  assign d_reqv_o = NP'(d_req) << d_dest_o;

  // Occupancy of a buffer: packets committed and not yet read out.
  logic [8:0] v_occ_q, d_occ_q;
  always_ff @(posedge clk) begin
    if (!rst_ni) begin
      v_occ_q <= '0;
      d_occ_q <= '0;
    end else begin
      v_occ_q <= v_occ_q + 9'(vw_ev_commit) - 9'(v_tvalid_o && v_tready && v_tlast_o);
      d_occ_q <= d_occ_q + 9'(dw_ev_commit) - 9'(d_tvalid_o && d_tready && d_tlast_o);
    end
  end
  assign busy_in = vw_busy || dw_busy || lv_tvalid || ld_tvalid ||
                   v_occ_q != '0 || d_occ_q != '0;

  // RxWords: PktLen of every packet that passed the link checks (the two
  // link_rx outputs share one data register and never overlap)
  sw_ev_t rx_words;
  sw_pktlen_tap #(.DataW(DataW)) u_rx_words (
    .clk_i  (clk),
    .rst_ni (link_rst_n),
    .beat_i (lv_tvalid || ld_tvalid),
    .tdata_i(lv_tdata),
    .tlast_i(lv_tvalid ? lv_tlast : ld_tlast),
    .ok_i   (!(lv_tvalid ? lv_tuser : ld_tuser)),
    .words_o(rx_words)
  );

  // ---------------------------------------------------------------------------
  // Output side: arbiters, link transmit (VL15 first at a packet boundary, new
  // VCRC). A port whose link is down swallows what was already sent to it.
  // ---------------------------------------------------------------------------
  logic             ov_tvalid, ov_tready, od_tvalid, od_tready;
  logic             ev_tx_vl15, ev_tx_data, tvalid;
  sw_ev_t           tx_words;

  sw_out_arb #(.NumIn(NP)) u_vl15_arb (
    .clk_i      (clk),
    .rst_ni,
    .req_i      (ov_req_i),
    .take_last_i(ov_tvalid && ov_tready && ov_tlast_i),
    .locked_o   (ov_locked_o),
    .grant_o    (ov_grant_o)
  );
  assign ov_tvalid = ov_locked_o && ov_tvalid_i;

  sw_out_arb #(.NumIn(NP)) u_data_arb (
    .clk_i      (clk),
    .rst_ni,
    .req_i      (od_req_i),
    .take_last_i(od_tvalid && od_tready && od_tlast_i),
    .locked_o   (od_locked_o),
    .grant_o    (od_grant_o)
  );
  assign od_tvalid = od_locked_o && od_tvalid_i;

  always_comb begin
    ov_gnt_rdy_o = '0;
    od_gnt_rdy_o = '0;
    ov_gnt_rdy_o[ov_grant_o] = ov_locked_o && ov_tready;
    od_gnt_rdy_o[od_grant_o] = od_locked_o && od_tready;
  end

  ib_link_tx #(.DataW(DataW), .Vl15FullBeats(1'b0)) u_link_tx (
    .clk_i        (clk),
    .rst_ni,
    .vl15_tdata_i (ov_tdata_i),
    .vl15_tkeep_i (ov_tkeep_i),
    .vl15_tvalid_i(ov_tvalid),
    .vl15_tlast_i (ov_tlast_i),
    .vl15_tready_o(ov_tready),
    .data_tdata_i (od_tdata_i),
    .data_tkeep_i (od_tkeep_i),
    .data_tvalid_i(od_tvalid),
    .data_tlast_i (od_tlast_i),
    .data_tready_o(od_tready),
    .tx_tdata_o,
    .tx_tkeep_o,
    .tx_tvalid_o  (tvalid),
    .tx_tlast_o,
    .tx_tready_i  (tx_tready_i || !link_up_i),
    .ev_vl15_pkt_o(ev_tx_vl15),
    .ev_data_pkt_o(ev_tx_data)
  );
  assign tx_tvalid_o = tvalid && link_up_i;

  // TxWords: PktLen of every packet counted in TxVl15Pkts/TxDataPkts (the
  // handshake of ib_link_tx, which a down link completes by swallowing)
  sw_pktlen_tap #(.DataW(DataW)) u_tx_words (
    .clk_i  (clk),
    .rst_ni,
    .beat_i (tvalid && (tx_tready_i || !link_up_i)),
    .tdata_i(tx_tdata_o),
    .tlast_i(tx_tlast_o),
    .ok_i   (1'b1),
    .words_o(tx_words)
  );

  assign busy_out = tvalid || ov_locked_o || od_locked_o;

  // ---------------------------------------------------------------------------
  // Registers and counters of this port
  // ---------------------------------------------------------------------------
  sw_ev_t ev [SwNumCtrs];

  sw_port_regs u_regs (
    .clk_i      (clk),
    .rst_ni,
    .port_i,
    .n_i,
    .link_up_i,
    .reg_we_i,
    .reg_addr_i,
    .reg_wdata_i,
    .rdata_o    (reg_rdata_o),
    .ev_i       (ev),
    .state_o,
    .state_chg_o,
    .link_edge_o(link_edge),
    .wake_o     (reg_wake)
  );

  always_comb begin
    for (int c = 0; c < SwNumCtrs; c++) ev[c] = '0;
    ev[SwCtrRxPkts]       = sw_ev_t'(ev_pkt);
    ev[SwCtrRxVcrcErr]    = sw_ev_t'(ev_vcrc);
    ev[SwCtrRxLenErr]     = sw_ev_t'(ev_len);
    ev[SwCtrRxLverErr]    = sw_ev_t'(ev_lver);
    ev[SwCtrRxLnhErr]     = sw_ev_t'(ev_lnh);
    ev[SwCtrVl15Dropped]  = sw_ev_t'(vw_ev_drop);
    ev[SwCtrDataDropped]  = sw_ev_t'(dw_ev_drop);
    ev[SwCtrLinkDownDrop] = sw_ev_t'(vw_ev_link) + sw_ev_t'(dw_ev_link);
    ev[SwCtrNoRoute]      = sw_ev_t'(r_no_route[0]) + sw_ev_t'(r_no_route[1]);
    ev[SwCtrLoopDrop]     = sw_ev_t'(r_loop[0]) + sw_ev_t'(r_loop[1]);
    ev[SwCtrStateDrop]    = sw_ev_t'(r_state[0]) + sw_ev_t'(r_state[1]);
    ev[SwCtrFwdPkts]      = sw_ev_t'(r_fwd[0]) + sw_ev_t'(r_fwd[1]);
    ev[SwCtrTxVl15Pkts]   = sw_ev_t'(ev_tx_vl15);
    ev[SwCtrTxDataPkts]   = sw_ev_t'(ev_tx_data);
    ev[SwCtrRxWords]      = rx_words;
    ev[SwCtrTxWords]      = tx_words;
  end
  always_comb begin
    ev_any = 1'b0;
    for (int c = 0; c < SwNumCtrs; c++) ev_any |= ev[c] != '0;
  end

  // slot-free flags: the link cannot wait, a packet without a slot is dropped
  logic unused;
  assign unused = ^{vw_slot_free, dw_slot_free, ev_data_pkt, vw_vcrc};

`ifndef SYNTHESIS
  // crossbar outputs into ib_link_tx: stable while stalled, one tlast per packet
  ib_axis_checker #(.DataW(DataW)) u_chk_xv (
    .clk_i(clk), .rst_ni,
    .tdata_i(ov_tdata_i), .tkeep_i(ov_tkeep_i), .tvalid_i(ov_tvalid),
    .tready_i(ov_tready), .tlast_i(ov_tlast_i)
  );
  ib_axis_checker #(.DataW(DataW)) u_chk_xd (
    .clk_i(clk), .rst_ni,
    .tdata_i(od_tdata_i), .tkeep_i(od_tkeep_i), .tvalid_i(od_tvalid),
    .tready_i(od_tready), .tlast_i(od_tlast_i)
  );
  // Held in reset while the link is down: the output then drops tx_tvalid_o
  // whatever tx_tready_i says (it swallows what was granted to it), which is
  // no stream to check.
  ib_axis_checker #(.DataW(DataW)) u_chk_tx (
    .clk_i(clk), .rst_ni(rst_ni && link_up_i),
    .tdata_i(tx_tdata_o), .tkeep_i(tx_tkeep_o),
    .tvalid_i(tx_tvalid_o), .tready_i(tx_tready_i), .tlast_i(tx_tlast_o)
  );
  ib_axis_checker #(.DataW(DataW), .HasReady(0)) u_chk_rx (
    .clk_i(clk), .rst_ni(rst_ni && link_up_i),
    .tdata_i(rx_tdata_i), .tkeep_i(rx_tkeep_i),
    .tvalid_i(rx_tvalid_i), .tready_i(1'b1), .tlast_i(rx_tlast_i)
  );
`endif

endmodule
