// sw_regs: register file of ib_switch_top (map in docs/fabric.md and ib_pkg
// SwReg*): port-0 LID, master SM LID/SL, runtime port count N, LinearFDBTop,
// the PortState of every port with the PortStateChange bit, the per-port
// 32-bit wrapping event counters (SwNumCtrs slots per port, and a second
// bank of SwNumCtrs for port 0's GMP path; +0..2047 per cycle; all cleared by
// a write to SwRegCtrClear, selectively by a write of a bitmask to
// SwRegCtrClrSel + p), and the decode of LFT word writes (the LFT itself
// is in sw_lft; its word for reg_addr_i comes back on lft_rdata_i). Reads are
// combinational. PortState: port 0 is Active and ignores writes; an external
// port resets to Init if its link is up, else Down; link_up_i falling sets
// Down, rising sets Init (a link edge wins over a write in the same cycle); a
// write of NoChange (0) changes nothing, any other value is stored; every
// change of an external port's state sets PortStateChange. Ports above N
// read as Down.
module sw_regs
  import ib_pkg::*;
#(
  parameter int unsigned NumPorts = 8,     // external ports 1..NumPorts
  parameter int unsigned LftDepth = 4096   // LFT entries (reported, bounds the LFT window)
) (
  input  logic                              clk_i,
  input  logic                              rst_ni,
  // register interface
  input  logic                              reg_we_i,
  input  logic [15:0]                       reg_addr_i,
  input  logic [31:0]                       reg_wdata_i,
  output logic [31:0]                       reg_rdata_o,
  // LFT word access (word index = reg_addr_i - SwRegLftBase)
  output logic                              lft_we_o,
  output logic [15:0]                       lft_waddr_o,
  output logic [31:0]                       lft_wdata_o,
  output logic [15:0]                       lft_raddr_o,
  input  logic [31:0]                       lft_rdata_i,
  // counter increments, port p slot c at [p][c]; port 0's GMP bank
  input  sw_ev_t                            ev_i [NumPorts+1][SwNumCtrs],
  input  sw_ev_t                            gev_i [SwNumCtrs],
  // physical links of ports 1..NumPorts (index p-1)
  input  logic [NumPorts-1:0]               link_up_i,
  // configuration out
  output logic [15:0]                       port0_lid_o,
  output logic [15:0]                       master_sm_lid_o,
  output logic [3:0]                        master_sm_sl_o,
  output logic [7:0]                        num_ports_o,     // runtime N
  output logic [15:0]                       linear_top_o,
  output logic [3:0]                        port_state_o [NumPorts+1],  // effective
  output logic                              port_state_change_o
);

  if (NumPorts < 1 || NumPorts > 36) begin : gen_ports_check
    $fatal(1, "%m: NumPorts must be 1..36, got %0d", NumPorts);
  end

  localparam int unsigned NP = NumPorts + 1;

  logic [15:0] lid_q, sm_lid_q, top_q;
  logic [3:0]  sm_sl_q;
  logic [7:0]  n_q;
  logic        change_q;
  logic [3:0]  state_q [NP];
  logic [NumPorts-1:0] link_q;
  logic [31:0] ctr_q [NP][SwNumCtrs];
  logic [31:0] gctr_q [SwNumCtrs];

  logic wr_clear;
  assign wr_clear = reg_we_i && (reg_addr_i == SwRegCtrClear);

  // Selective clear: a write to SwRegCtrClrSel + p clears counter c of port p
  // for every set bit c of [15:0]; for p = 0, bits [31:16] name the GMP bank.
  logic [15:0] sel_off;
  logic        sel_hit;
  logic [SwNumCtrs-1:0] clr_sel [NP];
  logic [SwNumCtrs-1:0] gclr_sel;
  assign sel_off = reg_addr_i - SwRegCtrClrSel;
  assign sel_hit = reg_we_i && reg_addr_i >= SwRegCtrClrSel && 32'(sel_off) < NP;
  always_comb begin
    for (int p = 0; p < NP; p++) begin
      clr_sel[p] = (sel_hit && 32'(sel_off) == p) ? reg_wdata_i[SwNumCtrs-1:0] : '0;
    end
    gclr_sel = (sel_hit && sel_off == 16'd0) ? reg_wdata_i[16 +: SwNumCtrs] : '0;
  end

  // LFT window
  logic [15:0] lft_off;
  logic        lft_hit;
  assign lft_off     = reg_addr_i - SwRegLftBase;
  assign lft_hit     = (reg_addr_i >= SwRegLftBase) && (32'(lft_off) < LftDepth / 4);
  assign lft_we_o    = reg_we_i && lft_hit;
  assign lft_waddr_o = lft_off;
  assign lft_wdata_o = reg_wdata_i;
  assign lft_raddr_o = lft_off;

  // Port-state and counter windows
  logic [15:0] ps_off, ctr_off, gctr_off;
  assign ps_off   = reg_addr_i - SwRegPortState;
  assign ctr_off  = reg_addr_i - SwRegCtrBase;
  assign gctr_off = reg_addr_i - SwRegCtr0GBase;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      lid_q    <= '0;
      sm_lid_q <= '0;
      sm_sl_q  <= '0;
      top_q    <= '0;
      n_q      <= 8'(NumPorts);
      change_q <= 1'b0;
      link_q   <= link_up_i;
      state_q[0] <= PortStateActive;
      for (int p = 1; p < NP; p++) begin
        state_q[p] <= link_up_i[p-1] ? PortStateInit : PortStateDown;
      end
    end else begin
      link_q <= link_up_i;
      if (reg_we_i) begin
        unique case (reg_addr_i)
          SwRegPort0Lid:    lid_q    <= reg_wdata_i[15:0];
          SwRegMasterSmLid: sm_lid_q <= reg_wdata_i[15:0];
          SwRegMasterSmSl:  sm_sl_q  <= reg_wdata_i[3:0];
          SwRegNumPorts:    n_q      <= (reg_wdata_i > 32'(NumPorts)) ? 8'(NumPorts)
                                                                     : reg_wdata_i[7:0];
          SwRegLinearTop:   top_q    <= reg_wdata_i[15:0];
          default: ;  // read-only, w1c, windows or unmapped
        endcase
        if (reg_addr_i == SwRegPortChange && reg_wdata_i[0]) begin
          change_q <= 1'b0;
        end
      end
      for (int p = 1; p < NP; p++) begin
        if (link_q[p-1] && !link_up_i[p-1]) begin
          state_q[p] <= PortStateDown;
          if (state_q[p] != PortStateDown) change_q <= 1'b1;
        end else if (!link_q[p-1] && link_up_i[p-1]) begin
          state_q[p] <= PortStateInit;
          if (state_q[p] != PortStateInit) change_q <= 1'b1;
        end else if (reg_we_i && 32'(ps_off) == p && reg_addr_i >= SwRegPortState &&
                     reg_wdata_i[3:0] != PortStateNoChange) begin
          state_q[p] <= reg_wdata_i[3:0];
          if (state_q[p] != reg_wdata_i[3:0]) change_q <= 1'b1;
        end
      end
    end
  end

  for (genvar p = 0; p < NP; p++) begin : gen_ctr_p
    for (genvar c = 0; c < SwNumCtrs; c++) begin : gen_ctr_c
      always_ff @(posedge clk_i) begin
        if (!rst_ni || wr_clear || clr_sel[p][c]) begin
          ctr_q[p][c] <= '0;
        end else if (ev_i[p][c] != '0) begin
          ctr_q[p][c] <= ctr_q[p][c] + 32'(ev_i[p][c]);
        end
      end
    end
  end

  for (genvar c = 0; c < SwNumCtrs; c++) begin : gen_gctr
    always_ff @(posedge clk_i) begin
      if (!rst_ni || wr_clear || gclr_sel[c]) begin
        gctr_q[c] <= '0;
      end else if (gev_i[c] != '0) begin
        gctr_q[c] <= gctr_q[c] + 32'(gev_i[c]);
      end
    end
  end

  always_comb begin
    port_state_o[0] = PortStateActive;
    for (int p = 1; p < NP; p++) begin
      port_state_o[p] = (p > 32'(n_q)) ? PortStateDown : state_q[p];
    end
  end

  always_comb begin
    reg_rdata_o = '0;
    unique case (reg_addr_i)
      SwRegId:          reg_rdata_o = SwRegIdValue;
      SwRegPort0Lid:    reg_rdata_o = {16'h0, lid_q};
      SwRegMasterSmLid: reg_rdata_o = {16'h0, sm_lid_q};
      SwRegMasterSmSl:  reg_rdata_o = {28'h0, sm_sl_q};
      SwRegNumPorts:    reg_rdata_o = {24'h0, n_q};
      SwRegNumPortsMax: reg_rdata_o = 32'(NumPorts);
      SwRegLinearTop:   reg_rdata_o = {16'h0, top_q};
      SwRegPortChange:  reg_rdata_o = {31'h0, change_q};
      SwRegLftDepth:    reg_rdata_o = 32'(LftDepth);
      default: begin
        if (lft_hit) begin
          reg_rdata_o = lft_rdata_i;
        end else if (reg_addr_i >= SwRegPortState && 32'(ps_off) < NP) begin
          for (int p = 0; p < NP; p++) begin
            if (32'(ps_off) == p) reg_rdata_o = {28'h0, port_state_o[p]};
          end
        end else if (reg_addr_i >= SwRegCtrBase && 32'(ctr_off) < NP * SwNumCtrs) begin
          for (int p = 0; p < NP; p++) begin
            if (32'(ctr_off[15:4]) == p) reg_rdata_o = ctr_q[p][ctr_off[3:0]];
          end
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

endmodule
