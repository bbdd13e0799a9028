// sw_regs: the switch-wide registers of ib_switch_top (map in
// docs/fabric.md and ib_pkg SwReg*): port-0 LID, master SM LID/SL, runtime
// port count N, LinearFDBTop, PortStateChange, port 0's 32-bit wrapping event
// counters (SwNumCtrs slots, and a second bank of SwNumCtrs for port 0's GMP
// path; +0..2047 per cycle; cleared by a write to SwRegCtrClear, selectively
// by a write of a bitmask to SwRegCtrClrSel), and the decode of LFT word
// writes (the LFT itself is in sw_lft; its word for reg_addr_i comes back on
// lft_rdata_i). The registers of external port p (its PortState and
// counters, sw_port_regs) are in its tile: reg_port_o names the port whose
// register the bus addresses (0: none of theirs) and its read data comes
// back on port_rdata_i; reg_bcast_o says the bus reaches every tile
// (CTR_CLEAR). Reads are combinational. Port 0 is Active and ignores
// writes; every change of an external port's state (state_chg_i) sets
// PortStateChange.
//
// Test-only: in simulation (SYNTHESIS not defined) port 0's counters are
// also writable, so that a testbench can preset them (an ibsim
// PerformanceSet): a register write of V to SwRegCtrBase + c (its SMI
// counters) or SwRegCtr0GBase + c (its GMP bank) sets that counter to V. A
// clear in the same cycle wins over the write, and the write wins over an
// event of the same cycle (the counter holds exactly V after the edge).
// Synthesis sees read-only counters (the write enables are constant 0 and
// the path optimizes away).
module sw_regs
  import ib_pkg::*;
#(
  parameter int unsigned MaxPorts = 8,     // most external ports (sizes state_chg_i)
  parameter int unsigned LftDepth = 4096   // LFT entries (reported, bounds the LFT window)
) (
  input  logic                              clk_i,
  input  logic                              rst_ni,
  input  logic [7:0]                        num_ports_i,    // the switch's external ports
  // register interface
  input  logic                              reg_we_i,
  input  logic [15:0]                       reg_addr_i,
  input  logic [31:0]                       reg_wdata_i,
  output logic [31:0]                       reg_rdata_o,
  // registers of the external ports (in their tiles)
  output logic [7:0]                        reg_port_o,     // 1..num_ports_i, 0: none
  output logic                              reg_bcast_o,    // every port's (CTR_CLEAR)
  input  logic [31:0]                       port_rdata_i,   // read data of port reg_port_o
  input  logic [MaxPorts:1]                 state_chg_i,    // port p's state changes
  // LFT word access (word index = reg_addr_i - SwRegLftBase)
  output logic                              lft_we_o,
  output logic [15:0]                       lft_waddr_o,
  output logic [31:0]                       lft_wdata_o,
  output logic [15:0]                       lft_raddr_o,
  input  logic [31:0]                       lft_rdata_i,
  // counter increments of port 0; port 0's GMP bank
  input  sw_ev_t                            ev_i [SwNumCtrs],
  input  sw_ev_t                            gev_i [SwNumCtrs],
  // configuration out
  output logic [15:0]                       port0_lid_o,
  output logic [15:0]                       master_sm_lid_o,
  output logic [3:0]                        master_sm_sl_o,
  output logic [7:0]                        num_ports_o,     // runtime N
  output logic [15:0]                       linear_top_o,
  output logic                              port_state_change_o
);

  if (MaxPorts < 1 || MaxPorts > 64) begin : gen_ports_check
    $fatal(1, "%m: MaxPorts must be 1..64, got %0d", MaxPorts);
  end

  logic [15:0] lid_q, sm_lid_q, top_q;
  logic [3:0]  sm_sl_q;
  logic [7:0]  n_q;
  logic        change_q;
  logic [31:0] ctr_q [SwNumCtrs];
  logic [31:0] gctr_q [SwNumCtrs];

  logic wr_clear;
  assign wr_clear = reg_we_i && (reg_addr_i == SwRegCtrClear);

  // Selective clear of port 0: a write to SwRegCtrClrSel clears counter c for
  // every set bit c of [15:0], and GMP-bank counter c for bit 16 + c.
  logic [SwNumCtrs-1:0] clr_sel, gclr_sel;
  assign clr_sel  = (reg_we_i && reg_addr_i == SwRegCtrClrSel) ? reg_wdata_i[SwNumCtrs-1:0] : '0;
  assign gclr_sel = (reg_we_i && reg_addr_i == SwRegCtrClrSel) ? reg_wdata_i[16 +: SwNumCtrs] : '0;

  // Test-only: counter c of port 0 / of its GMP bank takes reg_wdata_i (header)
  logic [SwNumCtrs-1:0] ctr_we, gctr_we;
`ifndef SYNTHESIS
  for (genvar c = 0; c < SwNumCtrs; c++) begin : gen_ctr_we
    assign ctr_we[c]  = reg_we_i && reg_addr_i == SwRegCtrBase + 16'(c);
    assign gctr_we[c] = reg_we_i && reg_addr_i == SwRegCtr0GBase + 16'(c);
  end
`else
  assign ctr_we  = '0;  // synthesis: read-only counters
  assign gctr_we = '0;
`endif

  // LFT window
  logic [15:0] lft_off;
  logic        lft_hit;
  assign lft_off     = reg_addr_i - SwRegLftBase;
  assign lft_hit     = (reg_addr_i >= SwRegLftBase) && (32'(lft_off) < LftDepth / 4);
  assign lft_we_o    = reg_we_i && lft_hit;
  assign lft_waddr_o = lft_off;
  assign lft_wdata_o = reg_wdata_i;
  assign lft_raddr_o = lft_off;

  // Port-state, counter and clear-select windows: port 0 here, ports
  // 1..num_ports_i in their tiles
  logic [15:0] ps_off, ctr_off, sel_off, gctr_off;
  assign ps_off   = reg_addr_i - SwRegPortState;
  assign ctr_off  = reg_addr_i - SwRegCtrBase;
  assign sel_off  = reg_addr_i - SwRegCtrClrSel;
  assign gctr_off = reg_addr_i - SwRegCtr0GBase;

  always_comb begin
    reg_port_o = '0;
    if (reg_addr_i >= SwRegPortState && ps_off <= 16'(num_ports_i)) begin
      reg_port_o = ps_off[7:0];
    end else if (reg_addr_i >= SwRegCtrBase && ctr_off[15:4] <= 12'(num_ports_i)) begin
      reg_port_o = ctr_off[11:4];
    end else if (reg_addr_i >= SwRegCtrClrSel && sel_off <= 16'(num_ports_i)) begin
      reg_port_o = sel_off[7:0];
    end
  end
  assign reg_bcast_o = wr_clear;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      lid_q    <= '0;
      sm_lid_q <= '0;
      sm_sl_q  <= '0;
      top_q    <= '0;
      n_q      <= num_ports_i;
      change_q <= 1'b0;
    end else begin
      if (reg_we_i) begin
        unique case (reg_addr_i)
          SwRegPort0Lid:    lid_q    <= reg_wdata_i[15:0];
          SwRegMasterSmLid: sm_lid_q <= reg_wdata_i[15:0];
          SwRegMasterSmSl:  sm_sl_q  <= reg_wdata_i[3:0];
          SwRegNumPorts:    n_q      <= (reg_wdata_i > 32'(num_ports_i)) ? num_ports_i
                                                                        : reg_wdata_i[7:0];
          SwRegLinearTop:   top_q    <= reg_wdata_i[15:0];
          default: ;  // read-only, w1c, windows or unmapped
        endcase
        if (reg_addr_i == SwRegPortChange && reg_wdata_i[0]) begin
          change_q <= 1'b0;
        end
      end
      if (|state_chg_i) change_q <= 1'b1;
    end
  end

  logic [SwNumCtrs-1:0][SwEvW-1:0] ev, gev;
  for (genvar c = 0; c < SwNumCtrs; c++) begin : gen_ev
    assign ev[c]  = ev_i[c];
    assign gev[c] = gev_i[c];
  end

  ib_ctr_bank #(.N(SwNumCtrs), .AW(SwEvW)) u_ctrs (
    .clk_i,
    .rst_ni,
    .clear_i     (wr_clear),
    .clear_sel_i (clr_sel),
    .we_i        (ctr_we),
    .wdata_i     (reg_wdata_i),
    .inc_a_i     (ev),
    .inc_b_i     ('0),
    .inc_c_i     ('0),
    .ctr_o       (ctr_q)
  );

  ib_ctr_bank #(.N(SwNumCtrs), .AW(SwEvW)) u_gctrs (
    .clk_i,
    .rst_ni,
    .clear_i     (wr_clear),
    .clear_sel_i (gclr_sel),
    .we_i        (gctr_we),
    .wdata_i     (reg_wdata_i),
    .inc_a_i     (gev),
    .inc_b_i     ('0),
    .inc_c_i     ('0),
    .ctr_o       (gctr_q)
  );

  always_comb begin
    reg_rdata_o = '0;
    unique case (reg_addr_i)
      SwRegId:          reg_rdata_o = SwRegIdValue;
      SwRegPort0Lid:    reg_rdata_o = {16'h0, lid_q};
      SwRegMasterSmLid: reg_rdata_o = {16'h0, sm_lid_q};
      SwRegMasterSmSl:  reg_rdata_o = {28'h0, sm_sl_q};
      SwRegNumPorts:    reg_rdata_o = {24'h0, n_q};
      SwRegNumPortsMax: reg_rdata_o = 32'(num_ports_i);
      SwRegLinearTop:   reg_rdata_o = {16'h0, top_q};
      SwRegPortChange:  reg_rdata_o = {31'h0, change_q};
      SwRegLftDepth:    reg_rdata_o = 32'(LftDepth);
      default: begin
        if (lft_hit) begin
          reg_rdata_o = lft_rdata_i;
        end else if (reg_port_o != '0) begin
          reg_rdata_o = port_rdata_i;
        end else if (reg_addr_i == SwRegPortState) begin
          reg_rdata_o = {28'h0, PortStateActive};
        end else if (reg_addr_i >= SwRegCtrBase && 32'(ctr_off) < SwNumCtrs) begin
          reg_rdata_o = ctr_q[ctr_off[3:0]];
        end else if (reg_addr_i >= SwRegCtr0GBase && 32'(gctr_off) < SwNumCtrs) begin
          reg_rdata_o = gctr_q[gctr_off[3:0]];
        end
      end
    endcase
  end

  assign port0_lid_o         = lid_q;
  assign master_sm_lid_o     = sm_lid_q;
  assign master_sm_sl_o      = sm_sl_q;
  assign num_ports_o         = n_q;
  assign linear_top_o        = top_q;
  assign port_state_change_o = change_q;

  logic unused;
  assign unused = ^{ps_off[15:8], sel_off[15:8], gctr_off[15:4]};

  // ---------------------------------------------------------------------------
  // Cover points: every counter of port 0 counts
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  // every cover point below samples at the clock edge, not in reset
  default clocking cov_clk @(posedge clk_i); endclocking
  default disable iff (!rst_ni);
  SW0_CTR_to_sma:        cover property (ev_i[SwCtr0ToSma] != '0);
  SW0_CTR_to_sm:         cover property (ev_i[SwCtr0ToSm] != '0);
  SW0_CTR_icrc_err:      cover property (ev_i[SwCtr0IcrcErr] != '0);
  SW0_CTR_bad_hdr:       cover property (ev_i[SwCtr0BadHdr] != '0);
  SW0_CTR_lid_err:       cover property (ev_i[SwCtr0LidErr] != '0);
  SW0_CTR_dr_discard:    cover property (ev_i[SwCtr0DrDiscard] != '0);
  SW0_CTR_dr_forwarded:  cover property (ev_i[SwCtr0DrForwarded] != '0);
  SW0_CTR_port_down:     cover property (ev_i[SwCtr0PortDown] != '0);
  SW0_CTR_vl15_dropped:  cover property (ev_i[SwCtr0Vl15Dropped] != '0);
  SW0_CTR_sq_pkts:       cover property (ev_i[SwCtr0SqPkts] != '0);
  SW0_CTR_sq_dr_discard: cover property (ev_i[SwCtr0SqDrDiscard] != '0);
  SW0_CTR_sq_local:      cover property (ev_i[SwCtr0SqLocal] != '0);
  SW0_CTR_no_route:      cover property (ev_i[SwCtr0NoRoute] != '0);
  SW0_CTR_loop_drop:     cover property (ev_i[SwCtr0LoopDrop] != '0);
  SW0_CTR_state_drop:    cover property (ev_i[SwCtr0StateDrop] != '0);
  SW0_CTR_mkey_viol:     cover property (ev_i[SwCtr0MkeyViol] != '0);
  SW0G_CTR_rx_pkts:      cover property (gev_i[SwCtr0gRxPkts] != '0);
  SW0G_CTR_icrc_err:     cover property (gev_i[SwCtr0gIcrcErr] != '0);
  SW0G_CTR_bad_hdr:      cover property (gev_i[SwCtr0gBadHdr] != '0);
  SW0G_CTR_gmps:         cover property (gev_i[SwCtr0gGmps] != '0);
  SW0G_CTR_tx_pkts:      cover property (gev_i[SwCtr0gTxPkts] != '0);
  SW0G_CTR_tx_drop:      cover property (gev_i[SwCtr0gTxDrop] != '0);
  SW0G_CTR_rx_words:     cover property (gev_i[SwCtr0gRxWords] != '0);
  SW0G_CTR_tx_words:     cover property (gev_i[SwCtr0gTxWords] != '0);
  SW0G_CTR_pkey_viol:    cover property (gev_i[SwCtr0gPkeyViol] != '0);
  SW0G_CTR_qkey_viol:    cover property (gev_i[SwCtr0gQkeyViol] != '0);
`endif

endmodule
