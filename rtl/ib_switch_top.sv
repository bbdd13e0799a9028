// ib_switch_top: an InfiniBand switch (docs/fabric.md). External ports
// 1..NumPorts, each with ib_link_rx checks and store-and-forward input
// buffers (VL15 and data apart, packets LRH..ICRC), a crossbar whose outputs
// pick VL15 first and then round-robin among the inputs at packet boundaries,
// and ib_link_tx per output (new VCRC). Routing by the LFT (a RAM with one
// shared lookup port). Port 0 is the management port: its SMI (switch
// directed-route rules) receives VL15 packets for the switch and sends SMA
// responses, SM requests, traps and forwarded directed-route SMPs into the
// crossbar as input 0. Port 0 also has a GMP (QP1) path: data-VL packets for
// the port-0 LID leave the crossbar to the host on gmp_rx_* (no ready), and
// the host's GMPs on gmp_tx_* enter the crossbar as port 0's data input,
// routed by the LFT. Registers, PortStates and counters in sw_regs.
module ib_switch_top
  import ib_pkg::*;
#(
  parameter int unsigned DataW         = 64,    // stream width in bits: 32, 64 or 128
  parameter int unsigned NumPorts      = 8,     // external ports 1..NumPorts (1..36)
  parameter int unsigned LftDepth      = 4096,  // LFT entries (LIDs 0..LftDepth-1), multiple of 64
  parameter int unsigned Vl15Depth     = 3,     // VL15 input slots per external port (288 B each); see docs/fabric.md
  parameter int unsigned DataDepth     = 2,     // data-VL input slots per external port
  parameter int unsigned DataSlotBytes = 4224,  // largest data packet LRH..ICRC
  localparam int unsigned DataB        = DataW / 8
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,
  // wire -> switch (no ready); port p at index p-1
  input  logic [NumPorts*DataW-1:0]    rx_tdata_i,
  input  logic [NumPorts*DataB-1:0]    rx_tkeep_i,
  input  logic [NumPorts-1:0]          rx_tvalid_i,
  input  logic [NumPorts-1:0]          rx_tlast_i,
  // switch -> wire
  output logic [NumPorts*DataW-1:0]    tx_tdata_o,
  output logic [NumPorts*DataB-1:0]    tx_tkeep_o,
  output logic [NumPorts-1:0]          tx_tvalid_o,
  output logic [NumPorts-1:0]          tx_tlast_o,
  input  logic [NumPorts-1:0]          tx_tready_i,
  // physical link of each port (1 = LinkUp)
  input  logic [NumPorts-1:0]          link_up_i,
  // SMA RX (port = the external port the SMP arrived on)
  output logic [DataW-1:0]             sma_rx_tdata_o,
  output logic                         sma_rx_tvalid_o,
  output logic                         sma_rx_tlast_o,
  input  logic                         sma_rx_tready_i,
  output logic [15:0]                  sma_rx_slid_o,
  output logic [15:0]                  sma_rx_dlid_o,
  output logic [3:0]                   sma_rx_sl_o,
  output logic [7:0]                   sma_rx_port_o,
  output logic [7:0]                   sma_rx_mgmt_class_o,
  output logic [6:0]                   sma_rx_hop_ptr_o,
  output logic [6:0]                   sma_rx_hop_cnt_o,
  // M_Key check of port 0 (smi_mkey_chk), valid with the sma_rx tlast beat:
  // drop (Trap 256), or a bad-key Get at protect 1 (M_Key reads 0)
  output logic                         sma_rx_mkey_viol_o,
  output logic                         sma_rx_mkey_mask_o,
  // SM RX
  output logic [DataW-1:0]             sm_rx_tdata_o,
  output logic                         sm_rx_tvalid_o,
  output logic                         sm_rx_tlast_o,
  input  logic                         sm_rx_tready_i,
  output logic [15:0]                  sm_rx_slid_o,
  output logic [15:0]                  sm_rx_dlid_o,
  output logic [3:0]                   sm_rx_sl_o,
  output logic [7:0]                   sm_rx_port_o,
  output logic [7:0]                   sm_rx_mgmt_class_o,
  output logic [6:0]                   sm_rx_hop_ptr_o,
  output logic [6:0]                   sm_rx_hop_cnt_o,
  // SMA TX (responses; meta = echo of the request)
  input  logic [DataW-1:0]             sma_tx_tdata_i,
  input  logic                         sma_tx_tvalid_i,
  input  logic                         sma_tx_tlast_i,
  output logic                         sma_tx_tready_o,
  input  logic [15:0]                  sma_tx_slid_i,
  input  logic [15:0]                  sma_tx_dlid_i,
  input  logic [3:0]                   sma_tx_sl_i,
  // SM TX (requests; meta = address handle)
  input  logic [DataW-1:0]             sm_tx_tdata_i,
  input  logic                         sm_tx_tvalid_i,
  input  logic                         sm_tx_tlast_i,
  output logic                         sm_tx_tready_o,
  input  logic [15:0]                  sm_tx_dlid_i,
  input  logic [3:0]                   sm_tx_sl_i,
  input  logic [6:0]                   sm_tx_path_bits_i,
  // trap TX
  input  logic [DataW-1:0]             trap_tx_tdata_i,
  input  logic                         trap_tx_tvalid_i,
  input  logic                         trap_tx_tlast_i,
  output logic                         trap_tx_tready_o,
  // GMP RX: data-VL packets for the port-0 LID, LRH..ICRC (no VCRC), no
  // ready (the host takes every beat); tuser on tlast = discard
  output logic [DataW-1:0]             gmp_rx_tdata_o,
  output logic [DataB-1:0]             gmp_rx_tkeep_o,
  output logic                         gmp_rx_tvalid_o,
  output logic                         gmp_rx_tlast_o,
  output logic                         gmp_rx_tuser_o,
  output logic [2:0]                   gmp_rx_reason_o,  // on tlast: ib_pkg::gsi_reason_e
  // GMP TX: packets LRH..ICRC built by the host (data VL, SLID = port-0 LID),
  // routed by the LFT; at most 288 bytes
  input  logic [DataW-1:0]             gmp_tx_tdata_i,
  input  logic [DataB-1:0]             gmp_tx_tkeep_i,
  input  logic                         gmp_tx_tvalid_i,
  input  logic                         gmp_tx_tlast_i,
  output logic                         gmp_tx_tready_o,
  // register interface (16-bit word addresses, combinational read)
  input  logic                         reg_we_i,
  input  logic [15:0]                  reg_addr_i,
  input  logic [31:0]                  reg_wdata_i,
  output logic [31:0]                  reg_rdata_o,
  // status
  output logic [(NumPorts+1)*4-1:0]    port_state_o,         // PortState of port p at [4p +: 4]
  output logic                         port_state_change_o,  // SwitchInfo.PortStateChange
  output logic [1:0]                   mkey_prot_o,          // port 0's M_KeyProtectBits
  output logic [15:0]                  mkey_viols_o,         // port 0's M_KeyViolations
  output logic                         idle_o                // nothing buffered or in flight
);

  if (DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 32, 64 or 128, got %0d", DataW);
  end

  if (NumPorts < 1 || NumPorts > 36) begin : gen_ports_check
    $fatal(1, "%m: NumPorts must be 1..36, got %0d", NumPorts);
  end
  if (Vl15Depth < 1 || Vl15Depth > 255 || DataDepth < 1 || DataDepth > 255) begin : gen_depth_check
    $fatal(1, "%m: Vl15Depth and DataDepth must be 1..255, got %0d, %0d", Vl15Depth, DataDepth);
  end
  if (DataSlotBytes < SmpPktBytes) begin : gen_slot_check
    $fatal(1, "%m: DataSlotBytes must be >= %0d, got %0d", SmpPktBytes, DataSlotBytes);
  end

  localparam int unsigned NP        = NumPorts + 1;             // ports 0..NumPorts
  localparam int unsigned IW        = $clog2(NP);
  localparam int unsigned Vl15Words = SmpPktBytes / DataB;      // 288-byte VL15 slot
  localparam int unsigned DataWords = (DataSlotBytes + DataB - 1) / DataB;
  localparam int unsigned SmiRxDepth = 4;                       // SMI receive buffer slots
  localparam int unsigned P0Depth   = 2;                        // port-0 send buffer slots
  localparam int unsigned GmpDepth  = 2;                        // port-0 GMP send buffer slots
  localparam int unsigned RxMetaW   = $bits(sw_rx_meta_t);
  localparam int unsigned RouteW    = $bits(sw_route_meta_t);
  localparam int unsigned NumReq    = 2 * NP;                   // LFT requesters: 2i VL15, 2i+1 data

  // ---------------------------------------------------------------------------
  // Registers, PortStates, counters, LFT
  // ---------------------------------------------------------------------------
  sw_ev_t      ev [NP][SwNumCtrs];
  sw_ev_t      gev [SwNumCtrs];
  logic [15:0] port0_lid, master_sm_lid, linear_top;
  logic [3:0]  master_sm_sl;
  logic [7:0]  num_ports;
  logic [3:0]  port_state [NP];
  logic        lft_we;
  logic [15:0] lft_waddr, lft_raddr;
  logic [31:0] lft_wdata, lft_rdata;

  // port 0's M_Key registers (SwRegMkeyBase..+7) live in smi_mkey_chk, its
  // P_Key registers beside sw_regs
  logic [31:0] regs_rdata, mkey_rdata;
  logic        mkey_sel;
  assign mkey_sel = reg_addr_i >= SwRegMkeyBase && reg_addr_i < SwRegMkeyBase + 16'd8;

  sw_regs #(.NumPorts(NumPorts), .LftDepth(LftDepth)) u_regs (
    .clk_i,
    .rst_ni,
    .reg_we_i,
    .reg_addr_i,
    .reg_wdata_i,
    .reg_rdata_o        (regs_rdata),
    .lft_we_o           (lft_we),
    .lft_waddr_o        (lft_waddr),
    .lft_wdata_o        (lft_wdata),
    .lft_raddr_o        (lft_raddr),
    .lft_rdata_i        (lft_rdata),
    .ev_i               (ev),
    .gev_i              (gev),
    .link_up_i,
    .port0_lid_o        (port0_lid),
    .master_sm_lid_o    (master_sm_lid),
    .master_sm_sl_o     (master_sm_sl),
    .num_ports_o        (num_ports),
    .linear_top_o       (linear_top),
    .port_state_o       (port_state),
    .port_state_change_o
  );

  for (genvar p = 0; p < NP; p++) begin : gen_ps_out
    assign port_state_o[4*p +: 4] = port_state[p];
  end

  logic [NumReq-1:0] lft_req, lft_gnt, lft_rsp;
  logic [15:0]       lft_lid [NumReq];
  logic [7:0]        lft_entry;

  sw_lft #(.LftDepth(LftDepth), .NumReq(NumReq)) u_lft (
    .clk_i,
    .rst_ni,
    .we_i       (lft_we),
    .waddr_i    (lft_waddr),
    .wdata_i    (lft_wdata),
    .raddr_i    (lft_raddr),
    .rdata_o    (lft_rdata),
    .req_i      (lft_req),
    .req_lid_i  (lft_lid),
    .gnt_o      (lft_gnt),
    .rsp_valid_o(lft_rsp),
    .rsp_entry_o(lft_entry)
  );

  // ---------------------------------------------------------------------------
  // Input buffers (heads) and their routing, indexed by input port 0..NumPorts
  // ---------------------------------------------------------------------------
  // VL15 buffers (input 0: the SMI send queue)
  logic [DataW-1:0] v_tdata  [NP];
  logic [DataB-1:0] v_tkeep  [NP];
  logic             v_tvalid [NP];
  logic             v_tlast  [NP];
  logic             v_tready [NP];
  sw_route_meta_t   v_meta   [NP];
  logic             v_req    [NP];
  logic [7:0]       v_dest   [NP];
  logic             v_drain  [NP];
  // data buffers (input 0: the host's GMPs)
  logic [DataW-1:0] d_tdata  [NP];
  logic [DataB-1:0] d_tkeep  [NP];
  logic             d_tvalid [NP];
  logic             d_tlast  [NP];
  logic             d_tready [NP];
  sw_route_meta_t   d_meta   [NP];
  logic [15:0]      d_vcrc   [NP];  // the VCRC the head packet arrived with
  logic             d_req    [NP];
  logic [7:0]       d_dest   [NP];
  logic             d_drain  [NP];
  // route events per input: [0] VL15 buffer, [1] data buffer
  logic [1:0]       r_no_route [NP];
  logic [1:0]       r_loop     [NP];
  logic [1:0]       r_state    [NP];
  logic [1:0]       r_fwd      [NP];
  // idle tracking: a buffer holds or receives a packet
  logic [NP-1:0]    busy_in;

  // Output side, indexed by output port 0..NumPorts
  logic             ov_locked [NP];
  logic [IW-1:0]    ov_grant  [NP];
  logic [DataW-1:0] ov_tdata  [NP];
  logic [DataB-1:0] ov_tkeep  [NP];
  logic             ov_tvalid [NP];
  logic             ov_tlast  [NP];
  logic             ov_tready [NP];
  logic             od_locked [NP];
  logic [IW-1:0]    od_grant  [NP];
  logic [DataW-1:0] od_tdata  [NP];
  logic [DataB-1:0] od_tkeep  [NP];
  logic             od_tvalid [NP];
  logic             od_tlast  [NP];
  logic             od_tready [NP];

  // Input i's head beat is taken: drained, or granted at its egress port's
  // arbiter with the output ready. (Looked up at the egress, not searched
  // over all outputs: linear in the port count.)
  always_comb begin
    for (int i = 0; i < NP; i++) begin
      logic [IW-1:0] vq, dq;
      vq = IW'(v_dest[i]);
      dq = IW'(d_dest[i]);
      v_tready[i] = v_drain[i] ||
                    (v_req[i] && 32'(v_dest[i]) < NP && ov_locked[vq] &&
                     32'(ov_grant[vq]) == i && ov_tready[vq]);
      d_tready[i] = d_drain[i] ||
                    (d_req[i] && 32'(d_dest[i]) < NP && od_locked[dq] &&
                     32'(od_grant[dq]) == i && od_tready[dq]);
    end
  end

  for (genvar i = 0; i < NP; i++) begin : gen_route
    logic v_take, d_take;
    assign v_take = v_tvalid[i] && v_tready[i];
    assign d_take = d_tvalid[i] && d_tready[i];

    sw_route #(
      .NumPorts(NumPorts), .LftDepth(LftDepth), .InPort(i), .IsVl15(1'b1)
    ) u_route_vl15 (
      .clk_i,
      .rst_ni,
      .head_valid_i (v_tvalid[i]),
      .head_last_i  (v_tlast[i]),
      .head_meta_i  (v_meta[i]),
      .drain_o      (v_drain[i]),
      .take_i       (v_take),
      .port0_lid_i  (port0_lid),
      .linear_top_i (linear_top),
      .port_state_i (port_state),
      .lft_req_o    (lft_req[2*i]),
      .lft_lid_o    (lft_lid[2*i]),
      .lft_gnt_i    (lft_gnt[2*i]),
      .lft_rsp_i    (lft_rsp[2*i]),
      .lft_entry_i  (lft_entry),
      .req_o        (v_req[i]),
      .dest_o       (v_dest[i]),
      .ev_no_route_o(r_no_route[i][0]),
      .ev_loop_o    (r_loop[i][0]),
      .ev_state_o   (r_state[i][0]),
      .ev_fwd_o     (r_fwd[i][0])
    );

    sw_route #(
      .NumPorts(NumPorts), .LftDepth(LftDepth), .InPort(i), .IsVl15(1'b0)
    ) u_route_data (
      .clk_i,
      .rst_ni,
      .head_valid_i (d_tvalid[i]),
      .head_last_i  (d_tlast[i]),
      .head_meta_i  (d_meta[i]),
      .drain_o      (d_drain[i]),
      .take_i       (d_take),
      .port0_lid_i  (port0_lid),
      .linear_top_i (linear_top),
      .port_state_i (port_state),
      .lft_req_o    (lft_req[2*i+1]),
      .lft_lid_o    (lft_lid[2*i+1]),
      .lft_gnt_i    (lft_gnt[2*i+1]),
      .lft_rsp_i    (lft_rsp[2*i+1]),
      .lft_entry_i  (lft_entry),
      .req_o        (d_req[i]),
      .dest_o       (d_dest[i]),
      .ev_no_route_o(r_no_route[i][1]),
      .ev_loop_o    (r_loop[i][1]),
      .ev_state_o   (r_state[i][1]),
      .ev_fwd_o     (r_fwd[i][1])
    );
  end

  // Occupancy of a buffer: packets committed and not yet read out.
  function automatic logic [8:0] occ_next(logic [8:0] occ, logic commit, logic freed);
    return occ + 9'(commit) - 9'(freed);
  endfunction

  // ---------------------------------------------------------------------------
  // External ports: link checks and input buffers
  // ---------------------------------------------------------------------------
  for (genvar p = 1; p < NP; p++) begin : gen_in
    logic             link_rst_n;
    logic [DataW-1:0] lv_tdata, ld_tdata;
    logic [DataB-1:0] lv_tkeep, ld_tkeep;
    logic             lv_tvalid, ld_tvalid, lv_tlast, ld_tlast, lv_tuser, ld_tuser;
    logic             ev_pkt, ev_data_pkt, ev_len, ev_lver, ev_lnh, ev_vcrc;

    // the link layer restarts when the link comes up
    assign link_rst_n = rst_ni && link_up_i[p-1];

    ib_link_rx #(.DataW(DataW)) u_link_rx (
      .clk_i,
      .rst_ni       (link_rst_n),
      .rx_tdata_i   (rx_tdata_i[(p-1)*DataW +: DataW]),
      .rx_tkeep_i   (rx_tkeep_i[(p-1)*DataB +: DataB]),
      .rx_tvalid_i  (rx_tvalid_i[p-1] && link_up_i[p-1]),
      .rx_tlast_i   (rx_tlast_i[p-1]),
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

    sw_in_writer #(.DataW(DataW), .SlotWords(Vl15Words)) u_vl15_wr (
      .clk_i,
      .rst_ni,
      .link_up_i     (link_up_i[p-1]),
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
      .clk_i,
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
      .rd_tdata_o    (v_tdata[p]),
      .rd_tkeep_o    (v_tkeep[p]),
      .rd_tvalid_o   (v_tvalid[p]),
      .rd_tlast_o    (v_tlast[p]),
      .rd_meta_o     (vr_meta),
      .rd_tready_i   (v_tready[p])
    );
    assign v_meta[p] = '{lft: 1'b1, egress: 8'd0, dlid: vr_meta};

    // data buffer
    logic             dw_valid, dw_end, dw_ok, dw_drop_full, dw_slot_free;
    logic [DataW-1:0] dw_data;
    logic [DataB-1:0] dw_keep;
    logic [15:0]      dw_meta, dw_vcrc;
    logic [31:0]      dr_meta;
    logic             dw_ev_drop, dw_ev_link, dw_ev_commit, dw_busy;

    sw_in_writer #(.DataW(DataW), .SlotWords(DataWords)) u_data_wr (
      .clk_i,
      .rst_ni,
      .link_up_i     (link_up_i[p-1]),
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
      .clk_i,
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
      .rd_tdata_o    (d_tdata[p]),
      .rd_tkeep_o    (d_tkeep[p]),
      .rd_tvalid_o   (d_tvalid[p]),
      .rd_tlast_o    (d_tlast[p]),
      .rd_meta_o     (dr_meta),
      .rd_tready_i   (d_tready[p])
    );
    assign d_meta[p] = '{lft: 1'b1, egress: 8'd0, dlid: dr_meta[15:0]};
    assign d_vcrc[p] = dr_meta[31:16];

    logic [8:0] v_occ_q, d_occ_q;
    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        v_occ_q <= '0;
        d_occ_q <= '0;
      end else begin
        v_occ_q <= occ_next(v_occ_q, vw_ev_commit, v_tvalid[p] && v_tready[p] && v_tlast[p]);
        d_occ_q <= occ_next(d_occ_q, dw_ev_commit, d_tvalid[p] && d_tready[p] && d_tlast[p]);
      end
    end
    assign busy_in[p] = vw_busy || dw_busy || lv_tvalid || ld_tvalid ||
                        v_occ_q != '0 || d_occ_q != '0;

    // RxWords: PktLen of every packet that passed the link checks (the two
    // link_rx outputs share one data register and never overlap)
    sw_ev_t rx_words;
    sw_pktlen_tap #(.DataW(DataW)) u_rx_words (
      .clk_i,
      .rst_ni (link_rst_n),
      .beat_i (lv_tvalid || ld_tvalid),
      .tdata_i(lv_tdata),
      .tlast_i(lv_tvalid ? lv_tlast : ld_tlast),
      .ok_i   (!(lv_tvalid ? lv_tuser : ld_tuser)),
      .words_o(rx_words)
    );

    // slot-free flags: the link cannot wait, a packet without a slot is dropped
    logic unused_in;
    assign unused_in = ^{vw_slot_free, dw_slot_free, ev_data_pkt, vw_vcrc};

    // counters of port p
    always_comb begin
      for (int c = 0; c < SwNumCtrs; c++) ev[p][c] = '0;
      ev[p][SwCtrRxPkts]       = sw_ev_t'(ev_pkt);
      ev[p][SwCtrRxVcrcErr]    = sw_ev_t'(ev_vcrc);
      ev[p][SwCtrRxLenErr]     = sw_ev_t'(ev_len);
      ev[p][SwCtrRxLverErr]    = sw_ev_t'(ev_lver);
      ev[p][SwCtrRxLnhErr]     = sw_ev_t'(ev_lnh);
      ev[p][SwCtrVl15Dropped]  = sw_ev_t'(vw_ev_drop);
      ev[p][SwCtrDataDropped]  = sw_ev_t'(dw_ev_drop);
      ev[p][SwCtrLinkDownDrop] = sw_ev_t'(vw_ev_link) + sw_ev_t'(dw_ev_link);
      ev[p][SwCtrNoRoute]      = sw_ev_t'(r_no_route[p][0]) + sw_ev_t'(r_no_route[p][1]);
      ev[p][SwCtrLoopDrop]     = sw_ev_t'(r_loop[p][0]) + sw_ev_t'(r_loop[p][1]);
      ev[p][SwCtrStateDrop]    = sw_ev_t'(r_state[p][0]) + sw_ev_t'(r_state[p][1]);
      ev[p][SwCtrFwdPkts]      = sw_ev_t'(r_fwd[p][0]) + sw_ev_t'(r_fwd[p][1]);
      ev[p][SwCtrTxVl15Pkts]   = sw_ev_t'(gen_out[p].ev_tx_vl15);
      ev[p][SwCtrTxDataPkts]   = sw_ev_t'(gen_out[p].ev_tx_data);
      ev[p][SwCtrRxWords]      = rx_words;
      ev[p][SwCtrTxWords]      = gen_out[p].tx_words;
    end
  end

  // ---------------------------------------------------------------------------
  // Crossbar: per output a VL15 arbiter and a data arbiter
  // ---------------------------------------------------------------------------
  for (genvar q = 0; q < NP; q++) begin : gen_xbar
    logic [NP-1:0] vreq, dreq;
    always_comb begin
      for (int i = 0; i < NP; i++) begin
        vreq[i] = v_req[i] && 32'(v_dest[i]) == q;
        dreq[i] = d_req[i] && 32'(d_dest[i]) == q;
      end
    end

    sw_out_arb #(.NumIn(NP)) u_vl15_arb (
      .clk_i,
      .rst_ni,
      .req_i      (vreq),
      .take_last_i(ov_tvalid[q] && ov_tready[q] && ov_tlast[q]),
      .locked_o   (ov_locked[q]),
      .grant_o    (ov_grant[q])
    );
    // the granted input's head (the arbiter grants inputs 0..NumPorts only)
    always_comb begin
      ov_tdata[q]  = v_tdata[ov_grant[q]];
      ov_tkeep[q]  = v_tkeep[ov_grant[q]];
      ov_tvalid[q] = ov_locked[q] && v_tvalid[ov_grant[q]];
      ov_tlast[q]  = v_tlast[ov_grant[q]];
    end

    sw_out_arb #(.NumIn(NP)) u_data_arb (
      .clk_i,
      .rst_ni,
      .req_i      (dreq),
      .take_last_i(od_tvalid[q] && od_tready[q] && od_tlast[q]),
      .locked_o   (od_locked[q]),
      .grant_o    (od_grant[q])
    );
    always_comb begin
      od_tdata[q]  = d_tdata[od_grant[q]];
      od_tkeep[q]  = d_tkeep[od_grant[q]];
      od_tvalid[q] = od_locked[q] && d_tvalid[od_grant[q]];
      od_tlast[q]  = d_tlast[od_grant[q]];
    end
  end

  // ---------------------------------------------------------------------------
  // Outputs 1..NumPorts: link transmit (VL15 first at a packet boundary, new
  // VCRC). A port whose link is down swallows what was already sent to it.
  // ---------------------------------------------------------------------------
  logic [NP-1:0] busy_out;
  assign busy_out[0] = 1'b0;

  for (genvar q = 1; q < NP; q++) begin : gen_out
    logic ev_tx_vl15, ev_tx_data;
    logic tvalid;
    sw_ev_t tx_words;

    ib_link_tx #(.DataW(DataW), .Vl15FullBeats(1'b0)) u_link_tx (
      .clk_i,
      .rst_ni,
      .vl15_tdata_i (ov_tdata[q]),
      .vl15_tkeep_i (ov_tkeep[q]),
      .vl15_tvalid_i(ov_tvalid[q]),
      .vl15_tlast_i (ov_tlast[q]),
      .vl15_tready_o(ov_tready[q]),
      .data_tdata_i (od_tdata[q]),
      .data_tkeep_i (od_tkeep[q]),
      .data_tvalid_i(od_tvalid[q]),
      .data_tlast_i (od_tlast[q]),
      .data_tready_o(od_tready[q]),
      .tx_tdata_o   (tx_tdata_o[(q-1)*DataW +: DataW]),
      .tx_tkeep_o   (tx_tkeep_o[(q-1)*DataB +: DataB]),
      .tx_tvalid_o  (tvalid),
      .tx_tlast_o   (tx_tlast_o[q-1]),
      .tx_tready_i  (tx_tready_i[q-1] || !link_up_i[q-1]),
      .ev_vl15_pkt_o(ev_tx_vl15),
      .ev_data_pkt_o(ev_tx_data)
    );
    assign tx_tvalid_o[q-1] = tvalid && link_up_i[q-1];

    // TxWords: PktLen of every packet counted in TxVl15Pkts/TxDataPkts (the
    // handshake of ib_link_tx, which a down link completes by swallowing)
    sw_pktlen_tap #(.DataW(DataW)) u_tx_words (
      .clk_i,
      .rst_ni,
      .beat_i (tvalid && (tx_tready_i[q-1] || !link_up_i[q-1])),
      .tdata_i(tx_tdata_o[(q-1)*DataW +: DataW]),
      .tlast_i(tx_tlast_o[q-1]),
      .ok_i   (1'b1),
      .words_o(tx_words)
    );

`ifndef SYNTHESIS
    // crossbar outputs into ib_link_tx: stable while stalled, one tlast per packet
    ib_axis_checker #(.DataW(DataW)) u_chk_xv (
      .clk_i, .rst_ni,
      .tdata_i(ov_tdata[q]), .tkeep_i(ov_tkeep[q]), .tvalid_i(ov_tvalid[q]),
      .tready_i(ov_tready[q]), .tlast_i(ov_tlast[q])
    );
    ib_axis_checker #(.DataW(DataW)) u_chk_xd (
      .clk_i, .rst_ni,
      .tdata_i(od_tdata[q]), .tkeep_i(od_tkeep[q]), .tvalid_i(od_tvalid[q]),
      .tready_i(od_tready[q]), .tlast_i(od_tlast[q])
    );
`endif
    assign busy_out[q]      = tvalid || ov_locked[q] || od_locked[q];

`ifndef SYNTHESIS
    // Held in reset while the link is down, like u_chk_rx: the output then
    // drops tx_tvalid_o whatever tx_tready_i says (it swallows what was
    // granted to it), which is no stream to check.
    ib_axis_checker #(.DataW(DataW)) u_chk_tx (
      .clk_i, .rst_ni(rst_ni && link_up_i[q-1]),
      .tdata_i(tx_tdata_o[(q-1)*DataW +: DataW]), .tkeep_i(tx_tkeep_o[(q-1)*DataB +: DataB]),
      .tvalid_i(tx_tvalid_o[q-1]), .tready_i(tx_tready_i[q-1]), .tlast_i(tx_tlast_o[q-1])
    );
    ib_axis_checker #(.DataW(DataW), .HasReady(0)) u_chk_rx (
      .clk_i, .rst_ni(rst_ni && link_up_i[q-1]),
      .tdata_i(rx_tdata_i[(q-1)*DataW +: DataW]), .tkeep_i(rx_tkeep_i[(q-1)*DataB +: DataB]),
      .tvalid_i(rx_tvalid_i[q-1]), .tready_i(1'b1), .tlast_i(rx_tlast_i[q-1])
    );
`endif
  end

  // ---------------------------------------------------------------------------
  // Port 0: SMI receive (output 0 of the crossbar)
  // ---------------------------------------------------------------------------
  // The crossbar delivers LRH..ICRC; sw_smi_rq wants a beat after the ICRC
  // (its tlast beat), so a dummy two-byte VCRC beat is appended.
  logic             extra_q;
  logic [DataW-1:0] smi_tdata;
  logic [DataB-1:0] smi_tkeep;
  logic             smi_tvalid, smi_tlast;
  logic [7:0]       smi_port;
  logic [3:0]       smi_port_state;

  // A packet starts only when the SMI receive buffer has a free slot (the
  // crossbar waits; nothing is dropped behind the crossbar).
  logic smi_in_pkt_q;
  logic rxf_slot_free;  // the SMI receive buffer (u_rxf below) has a free slot
  assign ov_tready[0] = !extra_q && (smi_in_pkt_q || rxf_slot_free);
  assign smi_tdata    = extra_q ? '0 : ov_tdata[0];
  // A VL15 packet whose last beat is partial is no SMP (PktLen 72 ends with
  // a full beat at every DataW); it is shown with full beats so that only
  // the dummy beat is partial, and fails the header checks.
  assign smi_tkeep    = extra_q ? DataB'(2'b11) : '1;
  assign smi_tvalid   = extra_q || (ov_tvalid[0] && ov_tready[0]);  // sw_smi_rq has no ready
  assign smi_tlast    = extra_q;
  assign smi_port     = 8'(ov_grant[0]);   // held until the next packet's grant

  assign smi_port_state = port_state[ov_grant[0]];

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      extra_q      <= 1'b0;
      smi_in_pkt_q <= 1'b0;
    end else begin
      extra_q <= ov_tvalid[0] && ov_tready[0] && ov_tlast[0];
      if (ov_tvalid[0] && ov_tready[0]) begin
        smi_in_pkt_q <= !ov_tlast[0];
      end
    end
  end

  logic             rxf_wr_valid, rxf_wr_end, rxf_wr_ok, rxf_drop_full;
  logic [DataW-1:0] rxf_wr_data;
  logic [DataB-1:0] rxf_wr_keep;
  sw_rx_meta_t      rxf_wr_meta;
  logic             ev_rq_port_down, ev_rq_icrc, ev_rq_bad_hdr, ev_rq_lid, ev_rq_dr;

  sw_smi_rq #(.DataW(DataW)) u_smi_rq (
    .clk_i,
    .rst_ni,
    .vl15_tdata_i   (smi_tdata),
    .vl15_tkeep_i   (smi_tkeep),
    .vl15_tvalid_i  (smi_tvalid),
    .vl15_tlast_i   (smi_tlast),
    .vl15_tuser_i   (1'b0),
    .port_lid_i     (port0_lid),
    .port_state_i   (smi_port_state),
    .port_num_i     (smi_port),
    .num_ports_i    (num_ports),
    .wr_valid_o     (rxf_wr_valid),
    .wr_data_o      (rxf_wr_data),
    .wr_keep_o      (rxf_wr_keep),
    .wr_end_o       (rxf_wr_end),
    .wr_ok_o        (rxf_wr_ok),
    .wr_meta_o      (rxf_wr_meta),
    .ev_port_down_o (ev_rq_port_down),
    .ev_icrc_err_o  (ev_rq_icrc),
    .ev_bad_hdr_o   (ev_rq_bad_hdr),
    .ev_lid_err_o   (ev_rq_lid),
    .ev_dr_discard_o(ev_rq_dr)
  );

  logic [DataW-1:0]   rxf_rd_tdata;
  logic [DataB-1:0]   rxf_rd_tkeep;
  logic               rxf_rd_tvalid, rxf_rd_tlast, rxf_rd_tready;
  logic [RxMetaW-1:0] rxf_rd_meta_raw;
  sw_rx_meta_t        rxf_rd_meta;

  ib_pkt_fifo #(
    .DataW(DataW), .Depth(SmiRxDepth), .SlotWords(MadBytes / DataB), .MetaW(RxMetaW)
  ) u_smi_rx_buf (
    .clk_i,
    .rst_ni,
    .limit_i       (8'(SmiRxDepth)),
    .wr_valid_i    (rxf_wr_valid),
    .wr_data_i     (rxf_wr_data),
    .wr_keep_i     (rxf_wr_keep),
    .wr_end_i      (rxf_wr_end),
    .wr_ok_i       (rxf_wr_ok),
    .wr_meta_i     (rxf_wr_meta),
    .wr_drop_full_o(rxf_drop_full),
    .wr_slot_free_o(rxf_slot_free),
    .rd_tdata_o    (rxf_rd_tdata),
    .rd_tkeep_o    (rxf_rd_tkeep),
    .rd_tvalid_o   (rxf_rd_tvalid),
    .rd_tlast_o    (rxf_rd_tlast),
    .rd_meta_o     (rxf_rd_meta_raw),
    .rd_tready_i   (rxf_rd_tready)
  );
  assign rxf_rd_meta = sw_rx_meta_t'(rxf_rd_meta_raw);

  // Deliveries to the SMA/SM, and forwards to the send engine: two
  // smi_rx_dispatch (hop pointer / ReturnPath patch); the forward one uses
  // only its SMA output. The switch's SM interface has no receive queue
  // (flow control by sm_rx_tready_i alone): sm_rq_avail_i is tied to 1, so
  // nothing is ever discarded for want of a receive WQE.
  logic         loc_tready, fwd_rd_tready;
  smi_rx_meta_t fwd_base_meta;
  logic         ev_to_sma, ev_to_sm, ev_fwd, ev_fwd_sm_unused;
  logic         loc_rq_take, loc_sm_drop, fwd_rq_take, fwd_sm_drop;

  assign rxf_rd_tready = rxf_rd_meta.fwd ? fwd_rd_tready : loc_tready;

  smi_rx_dispatch #(.DataW(DataW)) u_rx_dispatch (
    .clk_i,
    .rst_ni,
    .rd_tdata_i   (rxf_rd_tdata),
    .rd_tkeep_i   (rxf_rd_tkeep),
    .rd_tvalid_i  (rxf_rd_tvalid && !rxf_rd_meta.fwd),
    .rd_tlast_i   (rxf_rd_tlast),
    .rd_meta_i    (rxf_rd_meta.base),
    .rd_tready_o  (loc_tready),
    .sma_rx_tdata_o,
    .sma_rx_tvalid_o,
    .sma_rx_tlast_o,
    .sma_rx_tready_i,
    .sma_rx_slid_o,
    .sma_rx_dlid_o,
    .sma_rx_sl_o,
    .sma_rx_port_o,
    .sma_rx_mgmt_class_o,
    .sma_rx_hop_ptr_o,
    .sma_rx_hop_cnt_o,
    .sm_rx_tdata_o,
    .sm_rx_tvalid_o,
    .sm_rx_tlast_o,
    .sm_rx_tready_i,
    .sm_rx_slid_o,
    .sm_rx_dlid_o,
    .sm_rx_sl_o,
    .sm_rx_port_o,
    .sm_rx_mgmt_class_o,
    .sm_rx_hop_ptr_o,
    .sm_rx_hop_cnt_o,
    .sm_rq_avail_i(1'b1),
    .sm_rq_take_o (loc_rq_take),
    .ev_to_sma_o  (ev_to_sma),
    .ev_to_sm_o   (ev_to_sm),
    .ev_sm_drop_o (loc_sm_drop)
  );

  // M_Key check of port 0 on the switch SMA's stream (observes it)
  logic ev_mkey_viol, mkey_lease_run;

  smi_mkey_chk #(.DataW(DataW)) u_mkey_chk (
    .clk_i,
    .rst_ni,
    .reg_we_i   (reg_we_i && mkey_sel),
    .reg_idx_i  (reg_addr_i[2:0]),
    .reg_wdata_i,
    .reg_rdata_o(mkey_rdata),
    .tdata_i    (sma_rx_tdata_o),
    .tvalid_i   (sma_rx_tvalid_o),
    .tready_i   (sma_rx_tready_i),
    .tlast_i    (sma_rx_tlast_o),
    .viol_o     (sma_rx_mkey_viol_o),
    .mask_o     (sma_rx_mkey_mask_o),
    .ev_viol_o  (ev_mkey_viol),
    .prot_o     (mkey_prot_o),
    .viols_o    (mkey_viols_o),
    .lease_run_o(mkey_lease_run)
  );

  always_comb begin
    fwd_base_meta       = rxf_rd_meta.base;
    fwd_base_meta.to_sm = 1'b0;
  end

  logic [DataW-1:0] fwd_tdata;
  logic             fwd_tvalid, fwd_tlast, fwd_tready;
  // the forward dispatch's SM side and meta outputs are not used
  logic [DataW-1:0] fx_sm_tdata;
  logic             fx_sm_tvalid, fx_sm_tlast;
  logic [15:0]      fx_slid, fx_dlid, fx_sm_slid, fx_sm_dlid;
  logic [3:0]       fx_sl, fx_sm_sl;
  logic [7:0]       fx_port, fx_cls, fx_sm_port, fx_sm_cls;
  logic [6:0]       fx_hp, fx_hc, fx_sm_hp, fx_sm_hc;

  smi_rx_dispatch #(.DataW(DataW)) u_fwd_dispatch (
    .clk_i,
    .rst_ni,
    .rd_tdata_i         (rxf_rd_tdata),
    .rd_tkeep_i         (rxf_rd_tkeep),
    .rd_tvalid_i        (rxf_rd_tvalid && rxf_rd_meta.fwd),
    .rd_tlast_i         (rxf_rd_tlast),
    .rd_meta_i          (fwd_base_meta),
    .rd_tready_o        (fwd_rd_tready),
    .sma_rx_tdata_o     (fwd_tdata),
    .sma_rx_tvalid_o    (fwd_tvalid),
    .sma_rx_tlast_o     (fwd_tlast),
    .sma_rx_tready_i    (fwd_tready),
    .sma_rx_slid_o      (fx_slid),
    .sma_rx_dlid_o      (fx_dlid),
    .sma_rx_sl_o        (fx_sl),
    .sma_rx_port_o      (fx_port),
    .sma_rx_mgmt_class_o(fx_cls),
    .sma_rx_hop_ptr_o   (fx_hp),
    .sma_rx_hop_cnt_o   (fx_hc),
    .sm_rx_tdata_o      (fx_sm_tdata),
    .sm_rx_tvalid_o     (fx_sm_tvalid),
    .sm_rx_tlast_o      (fx_sm_tlast),
    .sm_rx_tready_i     (1'b0),
    .sm_rx_slid_o       (fx_sm_slid),
    .sm_rx_dlid_o       (fx_sm_dlid),
    .sm_rx_sl_o         (fx_sm_sl),
    .sm_rx_port_o       (fx_sm_port),
    .sm_rx_mgmt_class_o (fx_sm_cls),
    .sm_rx_hop_ptr_o    (fx_sm_hp),
    .sm_rx_hop_cnt_o    (fx_sm_hc),
    .sm_rq_avail_i      (1'b1),
    .sm_rq_take_o       (fwd_rq_take),
    .ev_to_sma_o        (ev_fwd),
    .ev_to_sm_o         (ev_fwd_sm_unused),
    .ev_sm_drop_o       (fwd_sm_drop)
  );

  logic unused_fx;
  assign unused_fx = ^{fx_sm_tdata, fx_sm_tvalid, fx_sm_tlast, fx_slid, fx_dlid, fx_sl, fx_sm_slid,
                       fx_sm_dlid, fx_sm_sl, fx_port, fx_cls, fx_sm_port, fx_sm_cls, fx_hp, fx_hc,
                       fx_sm_hp, fx_sm_hc, ev_fwd_sm_unused, sm_tx_path_bits_i, loc_rq_take,
                       loc_sm_drop, fwd_rq_take, fwd_sm_drop};

  // ---------------------------------------------------------------------------
  // Port 0: SMI send engine into the port-0 input buffer (input 0)
  // ---------------------------------------------------------------------------
  logic             txf_wr_valid, txf_wr_end, txf_wr_ok, txf_drop_full, txf_slot_free;
  logic [DataW-1:0] txf_wr_data;
  logic [DataB-1:0] txf_wr_keep;
  sw_route_meta_t   txf_wr_meta;
  logic [RouteW-1:0] txf_rd_meta;
  logic             ev_sq_pkt, ev_sq_dr, ev_sq_local;

  sw_smi_sq #(.DataW(DataW), .NumPorts(NumPorts)) u_smi_sq (
    .clk_i,
    .rst_ni,
    .port_lid_i     (port0_lid),
    .num_ports_i    (num_ports),
    .port_state_i   (port_state),
    .master_sm_lid_i(master_sm_lid),
    .master_sm_sl_i (master_sm_sl),
    .sma_tx_tdata_i,
    .sma_tx_tvalid_i,
    .sma_tx_tlast_i,
    .sma_tx_tready_o,
    .sma_tx_slid_i,
    .sma_tx_dlid_i,
    .sma_tx_sl_i,
    .sm_tx_tdata_i,
    .sm_tx_tvalid_i,
    .sm_tx_tlast_i,
    .sm_tx_tready_o,
    .sm_tx_dlid_i,
    .sm_tx_sl_i,
    .trap_tx_tdata_i,
    .trap_tx_tvalid_i,
    .trap_tx_tlast_i,
    .trap_tx_tready_o,
    .fwd_tdata_i    (fwd_tdata),
    .fwd_tvalid_i   (fwd_tvalid),
    .fwd_tlast_i    (fwd_tlast),
    .fwd_tready_o   (fwd_tready),
    .fwd_dlid_i     (rxf_rd_meta.fwd_dlid),
    .fwd_slid_i     (rxf_rd_meta.fwd_slid),
    .fwd_sl_i       (rxf_rd_meta.base.sl),
    .fwd_lft_i      (rxf_rd_meta.fwd_lft),
    .wr_valid_o     (txf_wr_valid),
    .wr_data_o      (txf_wr_data),
    .wr_keep_o      (txf_wr_keep),
    .wr_end_o       (txf_wr_end),
    .wr_ok_o        (txf_wr_ok),
    .wr_meta_o      (txf_wr_meta),
    .wr_slot_free_i (txf_slot_free),
    .ev_pkt_o       (ev_sq_pkt),
    .ev_dr_discard_o(ev_sq_dr),
    .ev_local_o     (ev_sq_local)
  );

  ib_pkt_fifo #(
    .DataW(DataW), .Depth(P0Depth), .SlotWords(Vl15Words), .MetaW(RouteW)
  ) u_p0_buf (
    .clk_i,
    .rst_ni,
    .limit_i       (8'(P0Depth)),
    .wr_valid_i    (txf_wr_valid),
    .wr_data_i     (txf_wr_data),
    .wr_keep_i     (txf_wr_keep),
    .wr_end_i      (txf_wr_end),
    .wr_ok_i       (txf_wr_ok),
    .wr_meta_i     (txf_wr_meta),
    .wr_drop_full_o(txf_drop_full),
    .wr_slot_free_o(txf_slot_free),
    .rd_tdata_o    (v_tdata[0]),
    .rd_tkeep_o    (v_tkeep[0]),
    .rd_tvalid_o   (v_tvalid[0]),
    .rd_tlast_o    (v_tlast[0]),
    .rd_meta_o     (txf_rd_meta),
    .rd_tready_i   (v_tready[0])
  );
  assign v_meta[0]   = sw_route_meta_t'(txf_rd_meta);

  // ---------------------------------------------------------------------------
  // Port 0: GMP send (gmp_tx_*) into port 0's data input buffer (input 0's
  // data side, routed by the LFT like any data packet)
  // ---------------------------------------------------------------------------
  logic             gtx_wr_valid, gtx_wr_end, gtx_wr_ok, gtx_drop_full, gtx_slot_free;
  logic [DataW-1:0] gtx_wr_data;
  logic [DataB-1:0] gtx_wr_keep;
  logic [15:0]      gtx_wr_meta, gtx_rd_meta;
  logic             ev_gtx_pkt, ev_gtx_drop, gtx_busy;
  sw_ev_t           gtx_words, grx_words;

  sw_gmp_tx #(.DataW(DataW), .SlotWords(Vl15Words)) u_gmp_tx (
    .clk_i,
    .rst_ni,
    .s_tdata_i     (gmp_tx_tdata_i),
    .s_tkeep_i     (gmp_tx_tkeep_i),
    .s_tvalid_i    (gmp_tx_tvalid_i),
    .s_tlast_i     (gmp_tx_tlast_i),
    .s_tready_o    (gmp_tx_tready_o),
    .wr_valid_o    (gtx_wr_valid),
    .wr_data_o     (gtx_wr_data),
    .wr_keep_o     (gtx_wr_keep),
    .wr_end_o      (gtx_wr_end),
    .wr_ok_o       (gtx_wr_ok),
    .wr_meta_o     (gtx_wr_meta),
    .wr_slot_free_i(gtx_slot_free),
    .ev_commit_o   (ev_gtx_pkt),
    .ev_drop_o     (ev_gtx_drop),
    .busy_o        (gtx_busy)
  );

  ib_pkt_fifo #(
    .DataW(DataW), .Depth(GmpDepth), .SlotWords(Vl15Words), .MetaW(16)
  ) u_gmp_tx_buf (
    .clk_i,
    .rst_ni,
    .limit_i       (8'(GmpDepth)),
    .wr_valid_i    (gtx_wr_valid),
    .wr_data_i     (gtx_wr_data),
    .wr_keep_i     (gtx_wr_keep),
    .wr_end_i      (gtx_wr_end),
    .wr_ok_i       (gtx_wr_ok),
    .wr_meta_i     (gtx_wr_meta),
    .wr_drop_full_o(gtx_drop_full),
    .wr_slot_free_o(gtx_slot_free),
    .rd_tdata_o    (d_tdata[0]),
    .rd_tkeep_o    (d_tkeep[0]),
    .rd_tvalid_o   (d_tvalid[0]),
    .rd_tlast_o    (d_tlast[0]),
    .rd_meta_o     (gtx_rd_meta),
    .rd_tready_i   (d_tready[0])
  );
  assign d_meta[0] = '{lft: 1'b1, egress: 8'd0, dlid: gtx_rd_meta};
  assign d_vcrc[0] = '0;  // port 0's GMPs never go to port 0 (LFT 0 is a loop)

  sw_pktlen_tap #(.DataW(DataW)) u_gtx_words (
    .clk_i,
    .rst_ni,
    .beat_i (gmp_tx_tvalid_i && gmp_tx_tready_o),
    .tdata_i(gmp_tx_tdata_i),
    .tlast_i(gmp_tx_tlast_i),
    .ok_i   (ev_gtx_pkt),
    .words_o(gtx_words)
  );

  // ---------------------------------------------------------------------------
  // Port 0: GMP receive (output 0's data side). The crossbar delivers
  // LRH..ICRC; the host stream carries LRH..VCRC as a CA's drx does, with the
  // VCRC the packet arrived with (carried in the data buffer's meta): added to
  // a partial last beat, or as one more beat after a full one, while the
  // crossbar output waits a cycle (the grant of the next packet takes that
  // cycle anyway). One register stage, then gsi_rx_check (the GSI checks of
  // ibspec §6, latency 1) with no ready on its path: the crossbar output is
  // stalled only for that VCRC beat, so gmp_rx needs no ready.
  // ---------------------------------------------------------------------------
  logic [DataW-1:0] grx_tdata_q;
  logic [DataB-1:0] grx_tkeep_q;
  logic             grx_tvalid_q, grx_tlast_q, grx_extra_q;
  logic [15:0]      grx_vcrc_q, od_vcrc;
  logic             od_take;

  assign od_tready[0] = !grx_extra_q;
  assign od_take      = od_tvalid[0] && od_tready[0];
  assign od_vcrc      = d_vcrc[od_grant[0]];

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      grx_tvalid_q <= 1'b0;
      grx_extra_q  <= 1'b0;
    end else begin
      grx_tvalid_q <= od_take || grx_extra_q;
      grx_extra_q  <= od_take && od_tlast[0] && od_tkeep[0] == '1;
    end
  end
  always_ff @(posedge clk_i) begin
    if (grx_extra_q) begin
      grx_tdata_q <= DataW'(grx_vcrc_q);
      grx_tkeep_q <= DataB'(2'b11);
      grx_tlast_q <= 1'b1;
    end else if (od_take) begin
      grx_tdata_q <= od_tdata[0];
      grx_tkeep_q <= od_tkeep[0];
      grx_tlast_q <= od_tlast[0] && od_tkeep[0] != '1;
      grx_vcrc_q  <= od_vcrc;
      if (od_tlast[0]) begin
        // a partial last beat ends at a 4-byte boundary: the VCRC follows it
        for (int unsigned k = 1; k < DataB / 4; k++) begin
          if (od_tkeep[0] == DataB'((1 << (4 * k)) - 1)) begin
            grx_tdata_q[32*k +: 16] <= od_vcrc;
            grx_tkeep_q             <= DataB'((1 << (4 * k + 2)) - 1);
          end
        end
      end
    end
  end

  sw_pktlen_tap #(.DataW(DataW)) u_grx_words (
    .clk_i,
    .rst_ni,
    .beat_i (od_take),
    .tdata_i(od_tdata[0]),
    .tlast_i(od_tlast[0]),
    .ok_i   (1'b1),
    .words_o(grx_words)
  );

  logic ev_gsi_icrc, ev_gsi_bad_hdr, ev_gsi_pkey, ev_gsi_qkey, ev_gsi_gmp;
  gsi_reason_e gmp_rx_reason;

  // Port 0's P_Key table registers (the table is in gsi_rx_check), as a CA
  // port's (pkey_regs)
  logic [7:0]  pkey_idx;
  logic [15:0] pkey_rdata;
  logic        pkey_we, pkey_sel;
  logic [31:0] pkey_regs_rdata;

  pkey_regs #(
    .AddrW    (16),
    .CapAddr  (SwRegPkeyCap),
    .IdxAddr  (SwRegPkeyIdx),
    .DataAddr (SwRegPkeyData),
    .Entries  (SwPkeyEntries)
  ) u_pkey_regs (
    .clk_i,
    .rst_ni,
    .reg_we_i,
    .reg_addr_i,
    .reg_wdata_i  (reg_wdata_i[7:0]),
    .sel_o        (pkey_sel),
    .rdata_o      (pkey_regs_rdata),
    .pkey_we_o    (pkey_we),
    .pkey_idx_o   (pkey_idx),
    .pkey_rdata_i (pkey_rdata)
  );

  assign reg_rdata_o = pkey_sel ? pkey_regs_rdata : mkey_sel ? mkey_rdata : regs_rdata;

  gsi_rx_check #(.DataW(DataW), .PkeyEntries(SwPkeyEntries)) u_gsi_rx_check (
    .clk_i,
    .rst_ni,
    .in_tdata_i   (grx_tdata_q),
    .in_tkeep_i   (grx_tkeep_q),
    .in_tvalid_i  (grx_tvalid_q),
    .in_tlast_i   (grx_tlast_q),
    .in_tuser_i   (1'b0),  // the input buffers hold only packets the link passed
    .out_tdata_o  (gmp_rx_tdata_o),
    .out_tkeep_o  (gmp_rx_tkeep_o),
    .out_tvalid_o (gmp_rx_tvalid_o),
    .out_tlast_o  (gmp_rx_tlast_o),
    .out_tuser_o  (gmp_rx_tuser_o),
    .out_reason_o (gmp_rx_reason),
    .pkey_we_i    (pkey_we),
    .pkey_idx_i   (pkey_idx),
    .pkey_wdata_i (reg_wdata_i[15:0]),
    .pkey_rdata_o (pkey_rdata),
    .ev_icrc_err_o(ev_gsi_icrc),
    .ev_bad_hdr_o (ev_gsi_bad_hdr),
    .ev_pkey_viol_o(ev_gsi_pkey),
    .ev_qkey_viol_o(ev_gsi_qkey),
    .ev_gmp_o     (ev_gsi_gmp)
  );
  assign gmp_rx_reason_o = gmp_rx_reason;

  // idle tracking of port 0
  logic [8:0] rx_occ_q, p0_occ_q, gtx_occ_q;
  logic       sq_open_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rx_occ_q  <= '0;
      p0_occ_q  <= '0;
      gtx_occ_q <= '0;
      sq_open_q <= 1'b0;
    end else begin
      rx_occ_q  <= occ_next(rx_occ_q, rxf_wr_end && rxf_wr_ok && !rxf_drop_full,
                            rxf_rd_tvalid && rxf_rd_tready && rxf_rd_tlast);
      p0_occ_q  <= occ_next(p0_occ_q, txf_wr_end && txf_wr_ok && !txf_drop_full,
                            v_tvalid[0] && v_tready[0] && v_tlast[0]);
      gtx_occ_q <= occ_next(gtx_occ_q, ev_gtx_pkt, d_tvalid[0] && d_tready[0] && d_tlast[0]);
      sq_open_q <= txf_wr_end ? 1'b0 : (sq_open_q || txf_wr_valid);
    end
  end
  assign busy_in[0] = rx_occ_q != '0 || p0_occ_q != '0 || sq_open_q || txf_wr_valid ||
                      extra_q || ov_locked[0] || rxf_wr_valid ||
                      gtx_busy || gtx_occ_q != '0 || od_locked[0] || grx_tvalid_q ||
                      grx_extra_q || gmp_rx_tvalid_o;

  assign idle_o = !mkey_lease_run && !(|busy_in) && !(|busy_out);

  // counters of port 0
  always_comb begin
    for (int c = 0; c < SwNumCtrs; c++) ev[0][c] = '0;
    ev[0][SwCtr0ToSma]       = sw_ev_t'(ev_to_sma);
    ev[0][SwCtr0ToSm]        = sw_ev_t'(ev_to_sm);
    ev[0][SwCtr0IcrcErr]     = sw_ev_t'(ev_rq_icrc);
    ev[0][SwCtr0BadHdr]      = sw_ev_t'(ev_rq_bad_hdr);
    ev[0][SwCtr0LidErr]      = sw_ev_t'(ev_rq_lid);
    ev[0][SwCtr0DrDiscard]   = sw_ev_t'(ev_rq_dr);
    ev[0][SwCtr0DrForwarded] = sw_ev_t'(ev_fwd);
    ev[0][SwCtr0PortDown]    = sw_ev_t'(ev_rq_port_down);
    ev[0][SwCtr0Vl15Dropped] = sw_ev_t'(rxf_drop_full);
    ev[0][SwCtr0SqPkts]      = sw_ev_t'(ev_sq_pkt);
    ev[0][SwCtr0SqDrDiscard] = sw_ev_t'(ev_sq_dr);
    ev[0][SwCtr0SqLocal]     = sw_ev_t'(ev_sq_local);
    ev[0][SwCtr0NoRoute]     = sw_ev_t'(r_no_route[0][0]) + sw_ev_t'(r_no_route[0][1]);
    ev[0][SwCtr0LoopDrop]    = sw_ev_t'(r_loop[0][0]) + sw_ev_t'(r_loop[0][1]);
    ev[0][SwCtr0StateDrop]   = sw_ev_t'(r_state[0][0]) + sw_ev_t'(r_state[0][1]);
    ev[0][SwCtr0MkeyViol]    = sw_ev_t'(ev_mkey_viol);
  end

  // counters of port 0's GMP path (second bank)
  always_comb begin
    for (int c = 0; c < SwNumCtrs; c++) gev[c] = '0;
    gev[SwCtr0gRxPkts]  = sw_ev_t'(od_take && od_tlast[0]);
    gev[SwCtr0gIcrcErr] = sw_ev_t'(ev_gsi_icrc);
    gev[SwCtr0gBadHdr]  = sw_ev_t'(ev_gsi_bad_hdr);
    gev[SwCtr0gGmps]    = sw_ev_t'(ev_gsi_gmp);
    gev[SwCtr0gPkeyViol] = sw_ev_t'(ev_gsi_pkey);
    gev[SwCtr0gQkeyViol] = sw_ev_t'(ev_gsi_qkey);
    gev[SwCtr0gTxPkts]  = sw_ev_t'(ev_gtx_pkt);
    gev[SwCtr0gTxDrop]  = sw_ev_t'(ev_gtx_drop);
    gev[SwCtr0gRxWords] = grx_words;
    gev[SwCtr0gTxWords] = gtx_words;
  end

  logic unused_top;
  assign unused_top = ^{r_fwd[0][0], r_fwd[0][1], txf_drop_full, gtx_drop_full};

`ifndef SYNTHESIS
  // Stream checkers on the SMA/SM interfaces (MAD streams, no tkeep)
  ib_axis_checker #(.DataW(DataW), .KeepCheck(0)) u_chk_sma_rx (
    .clk_i, .rst_ni,
    .tdata_i(sma_rx_tdata_o), .tkeep_i('1), .tvalid_i(sma_rx_tvalid_o),
    .tready_i(sma_rx_tready_i), .tlast_i(sma_rx_tlast_o)
  );
  ib_axis_checker #(.DataW(DataW), .KeepCheck(0)) u_chk_sm_rx (
    .clk_i, .rst_ni,
    .tdata_i(sm_rx_tdata_o), .tkeep_i('1), .tvalid_i(sm_rx_tvalid_o),
    .tready_i(sm_rx_tready_i), .tlast_i(sm_rx_tlast_o)
  );
  ib_axis_checker #(.DataW(DataW), .KeepCheck(0)) u_chk_sma_tx (
    .clk_i, .rst_ni,
    .tdata_i(sma_tx_tdata_i), .tkeep_i('1), .tvalid_i(sma_tx_tvalid_i),
    .tready_i(sma_tx_tready_o), .tlast_i(sma_tx_tlast_i)
  );
  ib_axis_checker #(.DataW(DataW), .KeepCheck(0)) u_chk_sm_tx (
    .clk_i, .rst_ni,
    .tdata_i(sm_tx_tdata_i), .tkeep_i('1), .tvalid_i(sm_tx_tvalid_i),
    .tready_i(sm_tx_tready_o), .tlast_i(sm_tx_tlast_i)
  );
  ib_axis_checker #(.DataW(DataW), .KeepCheck(0)) u_chk_trap_tx (
    .clk_i, .rst_ni,
    .tdata_i(trap_tx_tdata_i), .tkeep_i('1), .tvalid_i(trap_tx_tvalid_i),
    .tready_i(trap_tx_tready_o), .tlast_i(trap_tx_tlast_i)
  );
  ib_axis_checker #(.DataW(DataW)) u_chk_smi_in (
    .clk_i, .rst_ni,
    .tdata_i(ov_tdata[0]), .tkeep_i(ov_tkeep[0]), .tvalid_i(ov_tvalid[0]),
    .tready_i(ov_tready[0]), .tlast_i(ov_tlast[0])
  );
  ib_axis_checker #(.DataW(DataW)) u_chk_gmp_tx (
    .clk_i, .rst_ni,
    .tdata_i(gmp_tx_tdata_i), .tkeep_i(gmp_tx_tkeep_i), .tvalid_i(gmp_tx_tvalid_i),
    .tready_i(gmp_tx_tready_o), .tlast_i(gmp_tx_tlast_i)
  );
  ib_axis_checker #(.DataW(DataW), .HasReady(0)) u_chk_gmp_rx (
    .clk_i, .rst_ni,
    .tdata_i(gmp_rx_tdata_o), .tkeep_i(gmp_rx_tkeep_o), .tvalid_i(gmp_rx_tvalid_o),
    .tready_i(1'b1), .tlast_i(gmp_rx_tlast_o)
  );
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // the send engines wait for a free slot: the port-0 buffers never drop
      assert (!txf_drop_full) else $error("%m: port-0 send buffer dropped a packet");
      assert (!gtx_drop_full) else $error("%m: port-0 GMP send buffer dropped a packet");
    end
  end
`endif

endmodule
