// ib_switch_top: an InfiniBand switch (docs/fabric.md), composed of port
// tiles: sw_mgmt_tile (port 0 and what the switch shares) and one
// sw_port_tile per external port, joined by the crossbar's wires below. The
// switch as a whole: external ports
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
  parameter int unsigned NumPorts      = 8,     // external ports 1..NumPorts (1..64)
  parameter int unsigned LftDepth      = 4096,  // LFT entries (LIDs 0..LftDepth-1), multiple of 64
  parameter int unsigned Vl15Depth     = 3,     // VL15 input slots per external port (288 B each); see docs/fabric.md
  parameter int unsigned DataDepth     = 2,     // data-VL input slots per external port
  parameter int unsigned DataSlotBytes = 4224,  // largest data packet LRH..ICRC
  parameter bit          ClkGate       = 1'b1,  // every port, 0 included, on its own gated clock (simulation)
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

  if (NumPorts < 1 || NumPorts > 64) begin : gen_ports_check
    $fatal(1, "%m: NumPorts must be 1..64, got %0d", NumPorts);
  end
  if (Vl15Depth < 1 || Vl15Depth > 255 || DataDepth < 1 || DataDepth > 255) begin : gen_depth_check
    $fatal(1, "%m: Vl15Depth and DataDepth must be 1..255, got %0d, %0d", Vl15Depth, DataDepth);
  end
  if (DataSlotBytes < SmpPktBytes) begin : gen_slot_check
    $fatal(1, "%m: DataSlotBytes must be >= %0d, got %0d", SmpPktBytes, DataSlotBytes);
  end

  localparam int unsigned NP = NumPorts + 1;  // ports 0..NumPorts
  localparam int unsigned IW = $clog2(NP);

  // ---------------------------------------------------------------------------
  // Crossbar wires, indexed by port 0..NumPorts (input i, output q). Every
  // connection between tiles is a wire: requests one-hot by egress
  // (x_reqv[i][q] -> ox_req[q][i]), the granted input's head to its output,
  // the output's one-hot "granted beat taken" back to the input
  // (x_sel[i] = ox_gnt_rdy[dest(i)][i]), and the register bus to every tile
  // with the addressed tile's read data back to port 0.
  // ---------------------------------------------------------------------------
  logic [DataW-1:0] v_tdata  [NP];
  logic [DataB-1:0] v_tkeep  [NP];
  logic             v_tvalid [NP];
  logic             v_tlast  [NP];
  logic [NP-1:0]    v_reqv   [NP];
  logic [7:0]       v_dest   [NP];
  logic             v_sel    [NP];
  logic [DataW-1:0] d_tdata  [NP];
  logic [DataB-1:0] d_tkeep  [NP];
  logic             d_tvalid [NP];
  logic             d_tlast  [NP];
  logic [NP-1:0]    d_reqv   [NP];
  logic [7:0]       d_dest   [NP];
  logic             d_sel    [NP];
  logic [15:0]      d_vcrc   [NP];
  logic [NP-1:0]    ov_req     [NP];
  logic             ov_locked  [NP];
  logic [IW-1:0]    ov_grant   [NP];
  logic [NP-1:0]    ov_gnt_rdy [NP];
  logic [NP-1:0]    od_req     [NP];
  logic             od_locked  [NP];
  logic [IW-1:0]    od_grant   [NP];
  logic [NP-1:0]    od_gnt_rdy [NP];

  for (genvar q = 0; q < NP; q++) begin : gen_xbar_q
    for (genvar i = 0; i < NP; i++) begin : gen_xbar_i
      assign ov_req[q][i] = v_reqv[i][q];
      assign od_req[q][i] = d_reqv[i][q];
    end
  end
  always_comb begin
    for (int i = 0; i < NP; i++) begin
      logic [IW-1:0] vq, dq;
      vq = IW'(v_dest[i]);
      dq = IW'(d_dest[i]);
      v_sel[i] = 32'(v_dest[i]) < NP && ov_gnt_rdy[vq][i];
      d_sel[i] = 32'(d_dest[i]) < NP && od_gnt_rdy[dq][i];
    end
  end

  // between port 0 and the tiles
  logic [15:0]       port0_lid, linear_top;
  logic [7:0]        n_run, reg_port;
  logic              reg_bcast;
  logic [3:0]        port_state [NP];
  logic [3:0]        tile_state [NumPorts];
  logic [NumPorts:1] tile_state_chg, tile_busy, tile_en;
  logic              mgmt_en;  // port 0's clock enable (its gate is inside u_mgmt)
  logic [31:0]       tile_rdata [NP];
  logic [2*NumPorts-1:0] lft_req, lft_gnt, lft_rsp;
  logic [15:0]       lft_lid [2*NumPorts];
  logic [7:0]        lft_entry;

  assign tile_rdata[0] = '0;

  // ---------------------------------------------------------------------------
  // Port 0 and the shared parts
  // ---------------------------------------------------------------------------
  sw_mgmt_tile #(
    .DataW        (DataW),
    .MaxPorts     (NumPorts),
    .LftDepth     (LftDepth),
    .Vl15Depth    (Vl15Depth),
    .DataDepth    (DataDepth),
    .DataSlotBytes(DataSlotBytes),
    .ClkGate      (ClkGate)
  ) u_mgmt (
    .clk_i,
    .rst_ni,
    .num_ports_i     (8'(NumPorts)),
    .port0_lid_o     (port0_lid),
    .linear_top_o    (linear_top),
    .n_o             (n_run),
    .port_state_all_o(port_state),
    .tile_state_i    (tile_state),
    .tile_state_chg_i(tile_state_chg),
    .tile_busy_i     (tile_busy),
    .reg_port_o      (reg_port),
    .reg_bcast_o     (reg_bcast),
    .port_rdata_i    (32'(NP) > 32'(reg_port) ? tile_rdata[IW'(reg_port)] : 32'd0),
    .tile_lft_req_i  (lft_req),
    .tile_lft_lid_i  (lft_lid),
    .tile_lft_gnt_o  (lft_gnt),
    .tile_lft_rsp_o  (lft_rsp),
    .lft_entry_o     (lft_entry),
    .v_tdata_o       (v_tdata[0]),
    .v_tkeep_o       (v_tkeep[0]),
    .v_tvalid_o      (v_tvalid[0]),
    .v_tlast_o       (v_tlast[0]),
    .v_reqv_o        (v_reqv[0]),
    .v_dest_o        (v_dest[0]),
    .v_sel_i         (v_sel[0]),
    .d_tdata_o       (d_tdata[0]),
    .d_tkeep_o       (d_tkeep[0]),
    .d_tvalid_o      (d_tvalid[0]),
    .d_tlast_o       (d_tlast[0]),
    .d_reqv_o        (d_reqv[0]),
    .d_dest_o        (d_dest[0]),
    .d_sel_i         (d_sel[0]),
    .ov_req_i        (ov_req[0]),
    .ov_locked_o     (ov_locked[0]),
    .ov_grant_o      (ov_grant[0]),
    .ov_tdata_i      (v_tdata[ov_grant[0]]),
    .ov_tkeep_i      (v_tkeep[ov_grant[0]]),
    .ov_tvalid_i     (v_tvalid[ov_grant[0]]),
    .ov_tlast_i      (v_tlast[ov_grant[0]]),
    .ov_gnt_rdy_o    (ov_gnt_rdy[0]),
    .od_req_i        (od_req[0]),
    .od_locked_o     (od_locked[0]),
    .od_grant_o      (od_grant[0]),
    .od_tdata_i      (d_tdata[od_grant[0]]),
    .od_tkeep_i      (d_tkeep[od_grant[0]]),
    .od_tvalid_i     (d_tvalid[od_grant[0]]),
    .od_tlast_i      (d_tlast[od_grant[0]]),
    .od_vcrc_i       (d_vcrc[od_grant[0]]),
    .od_gnt_rdy_o    (od_gnt_rdy[0]),
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
    .sma_rx_mkey_viol_o,
    .sma_rx_mkey_mask_o,
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
    .sm_tx_path_bits_i,
    .trap_tx_tdata_i,
    .trap_tx_tvalid_i,
    .trap_tx_tlast_i,
    .trap_tx_tready_o,
    .gmp_rx_tdata_o,
    .gmp_rx_tkeep_o,
    .gmp_rx_tvalid_o,
    .gmp_rx_tlast_o,
    .gmp_rx_tuser_o,
    .gmp_rx_reason_o,
    .gmp_tx_tdata_i,
    .gmp_tx_tkeep_i,
    .gmp_tx_tvalid_i,
    .gmp_tx_tlast_i,
    .gmp_tx_tready_o,
    .reg_we_i,
    .reg_addr_i,
    .reg_wdata_i,
    .reg_rdata_o,
    .port_state_o,
    .port_state_change_o,
    .mkey_prot_o,
    .mkey_viols_o,
    .idle_o,
    .clk_en_o        (mgmt_en)
  );
  assign d_vcrc[0] = '0;  // port 0's GMPs never go to port 0 (LFT 0 is a loop)

  // ---------------------------------------------------------------------------
  // External ports 1..NumPorts
  // ---------------------------------------------------------------------------
  for (genvar p = 1; p < NP; p++) begin : gen_port
    sw_port_tile #(
      .DataW        (DataW),
      .MaxPorts     (NumPorts),
      .LftDepth     (LftDepth),
      .Vl15Depth    (Vl15Depth),
      .DataDepth    (DataDepth),
      .DataSlotBytes(DataSlotBytes),
      .ClkGate      (ClkGate)
    ) u_tile (
      .clk_i,
      .rst_ni,
      .port_i      (8'(p)),
      .num_ports_i (8'(NumPorts)),
      .n_i         (n_run),
      .port0_lid_i (port0_lid),
      .linear_top_i(linear_top),
      .port_state_i(port_state),
      .reg_we_i,
      .reg_addr_i,
      .reg_wdata_i,
      .reg_rdata_o (tile_rdata[p]),
      .state_o     (tile_state[p-1]),
      .state_chg_o (tile_state_chg[p]),
      .link_up_i   (link_up_i[p-1]),
      .rx_tdata_i  (rx_tdata_i[(p-1)*DataW +: DataW]),
      .rx_tkeep_i  (rx_tkeep_i[(p-1)*DataB +: DataB]),
      .rx_tvalid_i (rx_tvalid_i[p-1]),
      .rx_tlast_i  (rx_tlast_i[p-1]),
      .tx_tdata_o  (tx_tdata_o[(p-1)*DataW +: DataW]),
      .tx_tkeep_o  (tx_tkeep_o[(p-1)*DataB +: DataB]),
      .tx_tvalid_o (tx_tvalid_o[p-1]),
      .tx_tlast_o  (tx_tlast_o[p-1]),
      .tx_tready_i (tx_tready_i[p-1]),
      .lft_req_o   (lft_req[2*(p-1) +: 2]),
      .lft_lid_o   (lft_lid[2*(p-1) +: 2]),
      .lft_gnt_i   (lft_gnt[2*(p-1) +: 2]),
      .lft_rsp_i   (lft_rsp[2*(p-1) +: 2]),
      .lft_entry_i (lft_entry),
      .v_tdata_o   (v_tdata[p]),
      .v_tkeep_o   (v_tkeep[p]),
      .v_tvalid_o  (v_tvalid[p]),
      .v_tlast_o   (v_tlast[p]),
      .v_reqv_o    (v_reqv[p]),
      .v_dest_o    (v_dest[p]),
      .v_sel_i     (v_sel[p]),
      .d_tdata_o   (d_tdata[p]),
      .d_tkeep_o   (d_tkeep[p]),
      .d_tvalid_o  (d_tvalid[p]),
      .d_tlast_o   (d_tlast[p]),
      .d_vcrc_o    (d_vcrc[p]),
      .d_reqv_o    (d_reqv[p]),
      .d_dest_o    (d_dest[p]),
      .d_sel_i     (d_sel[p]),
      .ov_req_i    (ov_req[p]),
      .ov_locked_o (ov_locked[p]),
      .ov_grant_o  (ov_grant[p]),
      .ov_tdata_i  (v_tdata[ov_grant[p]]),
      .ov_tkeep_i  (v_tkeep[ov_grant[p]]),
      .ov_tvalid_i (v_tvalid[ov_grant[p]]),
      .ov_tlast_i  (v_tlast[ov_grant[p]]),
      .ov_gnt_rdy_o(ov_gnt_rdy[p]),
      .od_req_i    (od_req[p]),
      .od_locked_o (od_locked[p]),
      .od_grant_o  (od_grant[p]),
      .od_tdata_i  (d_tdata[od_grant[p]]),
      .od_tkeep_i  (d_tkeep[od_grant[p]]),
      .od_tvalid_i (d_tvalid[od_grant[p]]),
      .od_tlast_i  (d_tlast[od_grant[p]]),
      .od_gnt_rdy_o(od_gnt_rdy[p]),
      .busy_o      (tile_busy[p]),
      .clk_en_o    (tile_en[p])
    );
  end

  // The tiles' clock enables, the arbiters' lock flags and the broadcast flag
  // of the register bus are for a host that evaluates the tiles itself
  // (sim/sw_tiles.h): it copies a granted head only while its output is
  // locked, and the bus to every tile only for CTR_CLEAR.
  logic unused;
  always_comb begin
    unused = ^{tile_en, mgmt_en, reg_bcast};
    for (int q = 0; q < NP; q++) unused ^= ov_locked[q] ^ od_locked[q];
  end

endmodule
