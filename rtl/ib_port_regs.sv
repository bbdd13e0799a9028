// ib_port_regs: the port register file (map in ib_pkg: LID, LMC, MasterSMLID,
// MasterSMSL, PortState, VL15 RX depth, read-only ID/PortNum/Caps) and the
// 32-bit wrapping counters (one per ctr_e: +1 per ev_i pulse, +1 per ev2_i
// pulse, so +2 when both fire, plus add_i, an amount added every cycle, for
// the word counters; all cleared by a write to RegCtrClear, counter i by a
// write to RegCtrClearSel with bit i set; a clear wins over an event in the
// same cycle). PortState
// also follows the physical link: it resets to Init if link_up_i is 1, else
// Down; link_up_i falling sets Down, rising sets Init (a link edge wins over
// a PortState write in the same cycle).
//
// Reads: reg_re_i asks for a read of reg_addr_i and is held, with the same
// address and no reg_we_i, up to and including the cycle with reg_rvalid_o =
// 1, whose reg_rdata_o is the answer. ext_sel_i/ext_rdata_i are registers kept
// elsewhere (ib_ca_top: P_Key, M_Key) that answer through the same handshake.
// Two implementations of the counters (parameter CtrRam):
// - 0 (the Verilated CA port): counters in flip-flops, reads combinational:
//   reg_rvalid_o = reg_re_i, reg_rdata_o follows reg_addr_i in any cycle.
// - 1 (the FPGA boards): the 32-bit counter values in one block RAM
//   (ib_ctr_ram: a read-modify-write scanner visits one counter a cycle,
//   increments wait in narrow pending registers sized by CtrAddMask /
//   CtrEv2Mask). A counter read answers when the scanner writes that counter
//   (<= NumCtrs + 1 cycles after the request): the value the flip-flop
//   counter had in a cycle inside the request. Other registers answer in the
//   request's second cycle (the P_Key RAM's read latency). ctr_busy_o = an
//   increment may not be in the RAM yet (ib_ca_top keeps idle_o low then).
//
// Test-only: in simulation (SYNTHESIS not defined) the flip-flop counters
// (CtrRam = 0) are also writable, so that a testbench can preset them (an
// ibsim PerformanceSet): a register write of V to RegCtrBase + i sets
// counter i to V. A clear in the same cycle wins over the write, and the
// write wins over an event of the same cycle (the counter holds exactly V
// after the edge). Synthesis sees read-only counters (the write enables are
// constant 0 and the path optimizes away); the block-RAM counters (CtrRam =
// 1, ib_ctr_ram) are read-only in every build.
module ib_port_regs
  import ib_pkg::*;
#(
  parameter int unsigned DataW       = 64,  // datapath width, reported in RegCaps[7:0] as bytes
  parameter int unsigned Vl15RxDepth = 4,   // VL15 RX buffer slots (RegCaps[15:8], RegRxDepth max)
  parameter int unsigned Vl15TxDepth = 2,   // VL15 TX buffer slots (RegCaps[23:16])
  parameter int unsigned PortNum     = 1,   // this port's number (RegPortNum)
  parameter bit          CtrRam      = 1'b0,  // 1: counters in block RAM (above)
  // counters that may get add_i / ev2_i (CtrRam = 1 sizes their pending
  // registers for it; others must keep them 0, asserted)
  parameter logic [NumCtrs-1:0] CtrAddMask = '1,
  parameter logic [NumCtrs-1:0] CtrEv2Mask = '1
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // register interface
  input  logic               reg_we_i,
  input  logic               reg_re_i,
  input  logic [7:0]         reg_addr_i,
  input  logic [31:0]        reg_wdata_i,
  output logic [31:0]        reg_rdata_o,
  output logic               reg_rvalid_o,
  input  logic               ext_sel_i,     // reg_addr_i is an ext_rdata_i register
  input  logic [31:0]        ext_rdata_i,
  output logic               ctr_busy_o,
  // counter event pulses, indexed by ctr_e; ev2_i is a second event of the
  // same counter in the same cycle (a counter with two sources)
  input  logic [NumCtrs-1:0] ev_i,
  input  logic [NumCtrs-1:0] ev2_i,
  // amounts added to the counters every cycle (0 = none; the word counters)
  input  logic [NumCtrs-1:0][CtrAddW-1:0] add_i,
  // configuration out
  output logic [15:0]        port_lid_o,
  output logic [2:0]         port_lmc_o,
  output logic [15:0]        master_sm_lid_o,
  output logic [3:0]         master_sm_sl_o,
  output logic [3:0]         port_state_o,
  output logic [7:0]         rx_depth_o,     // VL15 RX slots in use, 1..Vl15RxDepth
  // physical link (1 = LinkUp) and its registered copy (the edge detector)
  input  logic               link_up_i,
  output logic               link_up_o
);

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end
  if (Vl15RxDepth < 1 || Vl15RxDepth > 255) begin : gen_rx_depth_check
    $fatal(1, "%m: Vl15RxDepth must be 1..255, got %0d", Vl15RxDepth);
  end
  if (Vl15TxDepth < 1 || Vl15TxDepth > 255) begin : gen_tx_depth_check
    $fatal(1, "%m: Vl15TxDepth must be 1..255, got %0d", Vl15TxDepth);
  end
  if (PortNum < 1 || PortNum > 254) begin : gen_port_num_check
    $fatal(1, "%m: PortNum must be 1..254, got %0d", PortNum);
  end
  // The counters end below the board's registers (0xC0, ib_ca_board) and one
  // RegCtrClearSel word names each of them.
  if (RegCtrEnd > 32'hC0 || NumCtrs > 32 || RegCtrClearSel >= RegCtrBase ||
      RegCtrClear >= RegCtrBase) begin : gen_ctr_map_check
    $fatal(1, "%m: counter map does not fit: %0d counters at 0x%0h", NumCtrs, RegCtrBase);
  end

  localparam logic [31:0] CapsValue = {8'h00, 8'(Vl15TxDepth), 8'(Vl15RxDepth), 8'(DataW / 8)};

  logic [15:0] lid_q;
  logic [2:0]  lmc_q;
  logic [15:0] sm_lid_q;
  logic [3:0]  sm_sl_q;
  logic [3:0]  state_q;
  logic [7:0]  rx_depth_q;
  logic        link_q;       // link_up_i of the previous cycle

  logic        wr_clear;
  logic [NumCtrs-1:0] wr_clear_sel;  // counters cleared by a RegCtrClearSel write
  logic [7:0]  rx_depth_wr;  // written RX depth, clamped to 1..Vl15RxDepth
  logic [7:0]  ctr_off;      // reg_addr_i - RegCtrBase

  assign ctr_off = reg_addr_i - RegCtrBase;

  assign wr_clear     = reg_we_i && (reg_addr_i == RegCtrClear);
  assign wr_clear_sel = (reg_we_i && (reg_addr_i == RegCtrClearSel)) ? reg_wdata_i[NumCtrs-1:0] : '0;

  always_comb begin
    if (reg_wdata_i == 32'd0) begin
      rx_depth_wr = 8'd1;
    end else if (reg_wdata_i > 32'(Vl15RxDepth)) begin
      rx_depth_wr = 8'(Vl15RxDepth);
    end else begin
      rx_depth_wr = reg_wdata_i[7:0];
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      lid_q      <= '0;
      lmc_q      <= '0;
      sm_lid_q   <= '0;
      sm_sl_q    <= '0;
      state_q    <= link_up_i ? PortStateInit : PortStateDown;
      rx_depth_q <= 8'(Vl15RxDepth);
      link_q     <= link_up_i;
    end else begin
      link_q <= link_up_i;
      if (reg_we_i) begin
        unique case (reg_addr_i)
          RegPortLid:     lid_q      <= reg_wdata_i[15:0];
          RegPortLmc:     lmc_q      <= reg_wdata_i[2:0];
          RegMasterSmLid: sm_lid_q   <= reg_wdata_i[15:0];
          RegMasterSmSl:  sm_sl_q    <= reg_wdata_i[3:0];
          RegPortState:   state_q    <= reg_wdata_i[3:0];
          RegRxDepth:     rx_depth_q <= rx_depth_wr;
          default: ;  // read-only, counters (below), counter clear or unmapped
        endcase
      end
      // hardware transitions of the physical link win over a write
      if (link_q && !link_up_i) begin
        state_q <= PortStateDown;
      end else if (!link_q && link_up_i) begin
        state_q <= PortStateInit;
      end
    end
  end

  logic [7:0] re_addr_q;
  logic       re_open_q;  // a read request is past its first cycle

  // Read data of everything but the counters
  logic [31:0] rdata_regs;
  logic        is_ctr;   // reg_addr_i names a counter
  assign is_ctr = !ext_sel_i && reg_addr_i >= RegCtrBase && 32'(ctr_off) < NumCtrs;

  always_comb begin
    rdata_regs = '0;
    unique case (reg_addr_i)
      RegId:          rdata_regs = RegIdValue;
      RegPortLid:     rdata_regs = {16'h0, lid_q};
      RegPortLmc:     rdata_regs = {29'h0, lmc_q};
      RegMasterSmLid: rdata_regs = {16'h0, sm_lid_q};
      RegMasterSmSl:  rdata_regs = {28'h0, sm_sl_q};
      RegPortState:   rdata_regs = {28'h0, state_q};
      RegPortNum:     rdata_regs = 32'(PortNum);
      RegCaps:        rdata_regs = CapsValue;
      RegRxDepth:     rdata_regs = {24'h0, rx_depth_q};
      default: ;
    endcase
    if (ext_sel_i) rdata_regs = ext_rdata_i;
  end

  if (!CtrRam) begin : gen_ctr_ff
    logic [31:0]        ctr_q [NumCtrs];
    logic [NumCtrs-1:0] ctr_we;  // test-only: counter i takes reg_wdata_i (header)
`ifndef SYNTHESIS
    for (genvar i = 0; i < NumCtrs; i++) begin : gen_ctr_we
      assign ctr_we[i] = reg_we_i && is_ctr && ctr_off == 8'(i);
    end
`else
    assign ctr_we = '0;  // synthesis: read-only counters
`endif
    ib_ctr_bank #(.N(NumCtrs), .AW(1), .BW(1), .CW(CtrAddW)) u_ctrs (
      .clk_i,
      .rst_ni,
      .clear_i     (wr_clear),
      .clear_sel_i (wr_clear_sel),
      .we_i        (ctr_we),
      .wdata_i     (reg_wdata_i),
      .inc_a_i     (ev_i),
      .inc_b_i     (ev2_i),
      .inc_c_i     (add_i),
      .ctr_o       (ctr_q)
    );
    assign reg_rdata_o  = is_ctr ? ctr_q[5'(ctr_off)] : rdata_regs;
    assign reg_rvalid_o = reg_re_i;
    assign ctr_busy_o   = 1'b0;
  end else begin : gen_ctr_ram
    localparam int unsigned SW = $clog2(NumCtrs);
    logic          ctr_wv;
    logic [SW-1:0] ctr_widx;
    logic [31:0]   ctr_wdata;

    ib_ctr_ram #(
      .N      (NumCtrs),
      .AddW   (CtrAddW),
      .AddMask(CtrAddMask),
      .Ev2Mask(CtrEv2Mask)
    ) u_ctr_ram (
      .clk_i,
      .rst_ni,
      .ev_i,
      .ev2_i,
      .add_i,
      .clr_i     ((wr_clear ? '1 : '0) | wr_clear_sel),
      .wr_valid_o(ctr_wv),
      .wr_idx_o  (ctr_widx),
      .wr_data_o (ctr_wdata),
      .busy_o    (ctr_busy_o)
    );

    // a counter answers when the scanner writes it, from the request's
    // second cycle on (the value written is the one the flip-flop counter
    // had in the write's previous cycle, so one inside the request); the
    // others then too
    assign reg_rdata_o  = is_ctr ? ctr_wdata : rdata_regs;
    assign reg_rvalid_o = reg_re_i && re_open_q &&
                          (!is_ctr || (ctr_wv && ctr_widx == SW'(ctr_off)));

`ifndef SYNTHESIS
    always_ff @(posedge clk_i) begin
      if (rst_ni) begin
        assert (!(reg_re_i && reg_we_i)) else $error("%m: register read and write in one cycle");
      end
    end
`endif
  end

  // the request is held with its address until answered
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      re_open_q <= 1'b0;
      re_addr_q <= '0;
    end else begin
      re_open_q <= reg_re_i && !reg_rvalid_o;
      re_addr_q <= reg_addr_i;
    end
  end

  // ---------------------------------------------------------------------------
  // Cover points: every counter counts
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  // every cover point below samples at the clock edge, not in reset
  default clocking cov_clk @(posedge clk_i); endclocking
  default disable iff (!rst_ni);
  logic [NumCtrs-1:0] cov_inc;  // counter c counts in this cycle (an event or words)
  for (genvar c = 0; c < NumCtrs; c++) begin : gen_cov_inc
    assign cov_inc[c] = ev_i[c] || ev2_i[c] || add_i[c] != '0;
  end
  CTR_rx_pkts:        cover property (cov_inc[CtrRxPkts]);
  CTR_rx_vcrc_err:    cover property (cov_inc[CtrRxVcrcErr]);
  CTR_rx_lver_err:    cover property (cov_inc[CtrRxLverErr]);
  CTR_rx_lnh_err:     cover property (cov_inc[CtrRxLnhErr]);
  CTR_rx_len_err:     cover property (cov_inc[CtrRxLenErr]);
  CTR_rx_data_pkts:   cover property (cov_inc[CtrRxDataPkts]);
  CTR_vl15_dropped:   cover property (cov_inc[CtrVl15Dropped]);
  CTR_smi_icrc_err:   cover property (cov_inc[CtrSmiIcrcErr]);
  CTR_smi_bad_hdr:    cover property (cov_inc[CtrSmiBadHdr]);
  CTR_smi_lid_err:    cover property (cov_inc[CtrSmiLidErr]);
  CTR_smi_dr_discard: cover property (cov_inc[CtrSmiDrDiscard]);
  CTR_smi_port_down:  cover property (cov_inc[CtrSmiPortDown]);
  CTR_smi_to_sma:     cover property (cov_inc[CtrSmiToSma]);
  CTR_smi_to_sm:      cover property (cov_inc[CtrSmiToSm]);
  CTR_sq_dr_discard:  cover property (cov_inc[CtrSqDrDiscard]);
  CTR_sq_local:       cover property (cov_inc[CtrSqLocal]);
  CTR_sq_pkts:        cover property (cov_inc[CtrSqPkts]);
  CTR_tx_vl15_pkts:   cover property (cov_inc[CtrTxVl15Pkts]);
  CTR_tx_data_pkts:   cover property (cov_inc[CtrTxDataPkts]);
  CTR_data_icrc_err:  cover property (cov_inc[CtrDataIcrcErr]);
  CTR_gsi_bad_hdr:    cover property (cov_inc[CtrGsiBadHdr]);
  CTR_gsi_gmps:       cover property (cov_inc[CtrGsiGmps]);
  CTR_rx_words:       cover property (cov_inc[CtrRxWords]);
  CTR_tx_words:       cover property (cov_inc[CtrTxWords]);
  CTR_mkey_viol:      cover property (cov_inc[CtrMkeyViol]);
  CTR_pkey_viol:      cover property (cov_inc[CtrPkeyViol]);
  CTR_qkey_viol:      cover property (cov_inc[CtrQkeyViol]);

  // PortState: its states and the arcs a port takes (docs/coverage.md, FSM
  // coverage): link up, Set Armed, Set Active, link down or Set Down. The
  // register takes what its SMA writes; the SMA decides which Sets are legal.
  logic [3:0] cov_ps_q;   // PortState a cycle ago
  logic       cov_ps_vld_q;
  always_ff @(posedge clk_i) begin
    cov_ps_q     <= state_q;
    cov_ps_vld_q <= rst_ni;
  end
  FSM_S_Down:           cover property (state_q == PortStateDown);
  FSM_S_Init:           cover property (state_q == PortStateInit);
  FSM_S_Armed:          cover property (state_q == PortStateArmed);
  FSM_S_Active:         cover property (state_q == PortStateActive);
  FSM_A_Down_Init:      cover property (cov_ps_vld_q && cov_ps_q == PortStateDown && state_q == PortStateInit);
  FSM_A_Init_Armed:     cover property (cov_ps_vld_q && cov_ps_q == PortStateInit && state_q == PortStateArmed);
  FSM_A_Armed_Active:   cover property (cov_ps_vld_q && cov_ps_q == PortStateArmed && state_q == PortStateActive);
  FSM_A_Init_Down:      cover property (cov_ps_vld_q && cov_ps_q == PortStateInit && state_q == PortStateDown);
  FSM_A_Armed_Down:     cover property (cov_ps_vld_q && cov_ps_q == PortStateArmed && state_q == PortStateDown);
  FSM_A_Active_Down:    cover property (cov_ps_vld_q && cov_ps_q == PortStateActive && state_q == PortStateDown);
`endif

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && re_open_q) begin
      assert (reg_re_i && reg_addr_i == re_addr_q && !reg_we_i)
        else $error("%m: read request dropped or changed before its answer");
    end
  end
`endif

  assign port_lid_o      = lid_q;
  assign port_lmc_o      = lmc_q;
  assign master_sm_lid_o = sm_lid_q;
  assign master_sm_sl_o  = sm_sl_q;
  assign port_state_o    = state_q;
  assign rx_depth_o      = rx_depth_q;
  assign link_up_o       = link_q;

endmodule
