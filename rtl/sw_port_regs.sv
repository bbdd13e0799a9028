// sw_port_regs: the registers of one external switch port, kept in its
// tile (docs/fabric.md "ib_switch_top register map"): its PortState and its
// SwNumCtrs 32-bit wrapping event counters. The register bus reaches every
// tile; this one answers the addresses of its own port (PORT_STATE[p],
// counters 16p..16p+15, CTR_CLEAR_SEL[p]) and CTR_CLEAR.
//
// PortState: resets to Init if the link is up, else Down; link_up_i falling
// sets Down, rising sets Init (a link edge wins over a write in the same
// cycle); a write of NoChange (0) changes nothing, any other value is
// stored. state_chg_o says that the state changes at the coming edge (for
// SwitchInfo.PortStateChange). A port above the runtime port count n_i
// reads as Down. Reads are combinational; rdata_o is 0 for an address that
// is not this port's.
//
// wake_o: a register write this port takes (PortState, CTR_CLEAR_SEL[p],
// CTR_CLEAR, a counter in simulation) is on the bus; the tile's clock gate
// opens for it.
//
// Test-only: in simulation (SYNTHESIS not defined) the counters are also
// writable, so that a testbench can preset them (an ibsim PerformanceSet): a
// register write of V to counter c's address (SwRegCtrBase + 16p + c) sets
// it to V. A clear in the same cycle wins over the write, and the write wins
// over an event of the same cycle (the counter holds exactly V after the
// edge). Synthesis sees read-only counters (the write enables are constant 0
// and the path optimizes away).
module sw_port_regs
  import ib_pkg::*;
(
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic [7:0]  port_i,        // this port's number, >= 1
  input  logic [7:0]  n_i,           // the runtime port count (NUM_PORTS)
  input  logic        link_up_i,
  // register bus (16-bit word addresses)
  input  logic        reg_we_i,
  input  logic [15:0] reg_addr_i,
  input  logic [31:0] reg_wdata_i,
  output logic [31:0] rdata_o,
  // counter increments of this port
  input  sw_ev_t      ev_i [SwNumCtrs],
  // state
  output logic [3:0]  state_o,       // effective PortState
  output logic        state_chg_o,   // the stored state changes at the coming edge
  output logic        link_edge_o,   // link_up_i differs from its last clocked value
  output logic        wake_o         // a register write of this port's is on the bus
);

  logic [3:0]  state_q, state_d;
  logic        link_q;
  logic [31:0] ctr_q [SwNumCtrs];

  logic [15:0] ps_addr, clr_addr;
  logic [11:0] ctr_page;  // the 16-word counter page of this port
  logic        ps_hit, ctr_hit, clr_hit, wr_clear;
  assign ps_addr  = SwRegPortState + 16'(port_i);
  assign ctr_page = SwRegCtrBase[15:4] + {4'd0, port_i};
  assign clr_addr = SwRegCtrClrSel + 16'(port_i);
  assign ps_hit   = reg_addr_i == ps_addr;
  assign ctr_hit  = reg_addr_i[15:4] == ctr_page;
  assign clr_hit  = reg_addr_i == clr_addr;
  assign wr_clear = reg_we_i && reg_addr_i == SwRegCtrClear;

  logic [SwNumCtrs-1:0] ctr_we;  // test-only: counter c takes reg_wdata_i (header)
`ifndef SYNTHESIS
  for (genvar c = 0; c < SwNumCtrs; c++) begin : gen_ctr_we
    assign ctr_we[c] = reg_we_i && ctr_hit && reg_addr_i[3:0] == 4'(c);
  end
`else
  assign ctr_we = '0;  // synthesis: read-only counters
`endif
  assign wake_o = (reg_we_i && (ps_hit || clr_hit || wr_clear)) || (|ctr_we);

  always_comb begin
    state_d = state_q;
    if (link_q && !link_up_i) begin
      state_d = PortStateDown;
    end else if (!link_q && link_up_i) begin
      state_d = PortStateInit;
    end else if (reg_we_i && ps_hit && reg_wdata_i[3:0] != PortStateNoChange) begin
      state_d = reg_wdata_i[3:0];
    end
  end
  assign state_chg_o = rst_ni && state_d != state_q;
  assign link_edge_o = link_q != link_up_i;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      link_q  <= link_up_i;
      state_q <= link_up_i ? PortStateInit : PortStateDown;
    end else begin
      link_q  <= link_up_i;
      state_q <= state_d;
    end
  end

  logic [SwNumCtrs-1:0][SwEvW-1:0] ev;
  for (genvar c = 0; c < SwNumCtrs; c++) begin : gen_ev
    assign ev[c] = ev_i[c];
  end

  ib_ctr_bank #(.N(SwNumCtrs), .AW(SwEvW)) u_ctrs (
    .clk_i,
    .rst_ni,
    .clear_i     (wr_clear),
    .clear_sel_i ((reg_we_i && clr_hit) ? reg_wdata_i[SwNumCtrs-1:0] : '0),
    .we_i        (ctr_we),
    .wdata_i     (reg_wdata_i),
    .inc_a_i     (ev),
    .inc_b_i     ('0),
    .inc_c_i     ('0),
    .ctr_o       (ctr_q)
  );

  assign state_o = (port_i > n_i) ? PortStateDown : state_q;

  always_comb begin
    rdata_o = '0;
    if (ps_hit) rdata_o = {28'h0, state_o};
    else if (ctr_hit) rdata_o = ctr_q[reg_addr_i[3:0]];
  end

  logic unused;
  assign unused = ^{reg_wdata_i[31:SwNumCtrs]};

  // ---------------------------------------------------------------------------
  // Cover points: every counter of an external port counts
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  // every cover point below samples at the clock edge, not in reset
  default clocking cov_clk @(posedge clk_i); endclocking
  default disable iff (!rst_ni);
  SW_CTR_rx_pkts:        cover property (ev_i[SwCtrRxPkts] != '0);
  SW_CTR_rx_vcrc_err:    cover property (ev_i[SwCtrRxVcrcErr] != '0);
  SW_CTR_rx_len_err:     cover property (ev_i[SwCtrRxLenErr] != '0);
  SW_CTR_rx_lver_err:    cover property (ev_i[SwCtrRxLverErr] != '0);
  SW_CTR_rx_lnh_err:     cover property (ev_i[SwCtrRxLnhErr] != '0);
  SW_CTR_vl15_dropped:   cover property (ev_i[SwCtrVl15Dropped] != '0);
  SW_CTR_data_dropped:   cover property (ev_i[SwCtrDataDropped] != '0);
  SW_CTR_link_down_drop: cover property (ev_i[SwCtrLinkDownDrop] != '0);
  SW_CTR_no_route:       cover property (ev_i[SwCtrNoRoute] != '0);
  SW_CTR_loop_drop:      cover property (ev_i[SwCtrLoopDrop] != '0);
  SW_CTR_state_drop:     cover property (ev_i[SwCtrStateDrop] != '0);
  SW_CTR_fwd_pkts:       cover property (ev_i[SwCtrFwdPkts] != '0);
  SW_CTR_tx_vl15_pkts:   cover property (ev_i[SwCtrTxVl15Pkts] != '0);
  SW_CTR_tx_data_pkts:   cover property (ev_i[SwCtrTxDataPkts] != '0);
  SW_CTR_rx_words:       cover property (ev_i[SwCtrRxWords] != '0);
  SW_CTR_tx_words:       cover property (ev_i[SwCtrTxWords] != '0);

  // PortState: its states and the arcs a port takes (docs/coverage.md, FSM
  // coverage): link up, Set Armed, Set Active, link down or Set Down. The
  // register takes what its SMA writes; the SMA decides which Sets are legal.
  FSM_S_Down:           cover property (state_q == PortStateDown);
  FSM_S_Init:           cover property (state_q == PortStateInit);
  FSM_S_Armed:          cover property (state_q == PortStateArmed);
  FSM_S_Active:         cover property (state_q == PortStateActive);
  FSM_A_Down_Init:      cover property (state_q == PortStateDown && state_d == PortStateInit);
  FSM_A_Init_Armed:     cover property (state_q == PortStateInit && state_d == PortStateArmed);
  FSM_A_Armed_Active:   cover property (state_q == PortStateArmed && state_d == PortStateActive);
  FSM_A_Init_Down:      cover property (state_q == PortStateInit && state_d == PortStateDown);
  FSM_A_Armed_Down:     cover property (state_q == PortStateArmed && state_d == PortStateDown);
  FSM_A_Active_Down:    cover property (state_q == PortStateActive && state_d == PortStateDown);
`endif

endmodule
