// ib_ctr_ram: N 32-bit wrapping event counters kept in one block RAM (the
// FPGA boards: ib_port_regs with CtrRam, and ib_ca_board's own six). A
// read-modify-write scanner visits one counter a cycle, each exactly every N
// cycles: it reads counter s (cycle t), then writes RAM word + pending amount
// back (cycle t+1: wr_valid_o, wr_idx_o, wr_data_o). Between visits a
// counter's increments (+1 per ev_i pulse, +1 per ev2_i pulse for counters in
// Ev2Mask, + add_i for counters in AddMask, every cycle; other counters must
// keep ev2_i / add_i 0, asserted) add up in a pending register just wide
// enough for N cycles of its largest increment. clr_i[i] clears counter i (a
// clear wins over a same-cycle increment): its pending amount is zeroed and a
// flag makes the next visit ignore the stale RAM word, so the RAM needs no
// reset. wr_data_o is exactly the value a flip-flop counter with the same
// inputs would hold in the visit's read cycle (cycle t): a reader that waits
// for wr_idx_o from the second cycle of its request on gets a value its
// counter had while it waited. The inputs are not registered here: the
// port's events come from ib_ca_top's register stage (ev_q), the board's
// from its UART logic. busy_o = an increment may not be in the RAM yet
// (N + 1 cycles after the last one).
module ib_ctr_ram #(
  parameter int unsigned     N       = 8,   // counters, 2..256
  parameter int unsigned     AddW    = 1,   // width of add_i
  parameter logic [N-1:0]    AddMask = '0,  // counters that take add_i
  parameter logic [N-1:0]    Ev2Mask = '0,  // counters that take ev2_i
  localparam int unsigned    SW      = $clog2(N)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic [N-1:0]           ev_i,
  input  logic [N-1:0]           ev2_i,
  input  logic [N-1:0][AddW-1:0] add_i,
  input  logic [N-1:0]           clr_i,
  output logic                   wr_valid_o,  // the scanner writes counter wr_idx_o this cycle
  output logic [SW-1:0]          wr_idx_o,
  output logic [31:0]            wr_data_o,   // ... with this value
  output logic                   busy_o
);

  localparam int unsigned TW = 16;  // the widest pending amount (elaboration check below)

  if (N < 2 || N > 256) begin : gen_n_check
    $fatal(1, "%m: N must be 2..256, got %0d", N);
  end

  logic [N-1:0]         flag_q;    // cleared since the last visit: the RAM word is stale
  logic [N-1:0][TW-1:0] pend;      // pending amounts, zero-extended
  logic [SW:0]          busy_q;    // cycles until every increment so far is in the RAM
  logic [SW-1:0]        s_q;       // counter the scanner reads this cycle
  logic [N-1:0]         visit;     // the same, one-hot (a decode of s_q)
  logic [TW-1:0]        take_d;    // s_q's pending amount
  logic                 clr_now;   // s_q is cleared this cycle
  logic                 clr_d;     // s_q is flagged or cleared now
  logic [SW-1:0]        wa_q;      // counter it writes this cycle (read last cycle)
  logic                 wv_q;      // the write stage holds a visit
  logic [TW-1:0]        take_q;    // wa_q's pending amount, taken at the read
  logic                 clr_q;     // wa_q was flagged: ignore the RAM word
  logic [31:0]          ram_rdata;
  logic [31:0]          wdata;
  logic                 inc_any;   // some counter is incremented this cycle
  // The read and write addresses always differ (wa_q = s_q - 1): no collision logic.
  (* ram_style = "block", no_rw_check *) logic [31:0] ctr_ram [N];

  for (genvar i = 0; i < N; i++) begin : gen_pend
    localparam int unsigned MaxInc = 1 + 32'(Ev2Mask[i]) + (AddMask[i] ? (1 << AddW) - 1 : 0);
    localparam int unsigned PW     = $clog2(N * MaxInc + 1);
    if (PW > TW) begin : gen_pw_check
      $fatal(1, "%m: pending width %0d over %0d", PW, TW);
    end
    logic [PW-1:0] pend_q, inc;
    always_comb begin
      inc = PW'(ev_i[i]);
      if (Ev2Mask[i]) inc = inc + PW'(ev2_i[i]);
      if (AddMask[i]) inc = inc + PW'(add_i[i]);
    end
    // the visit takes pend_q (increments before this cycle); this cycle's
    // increments start the next amount
    always_ff @(posedge clk_i) begin
      if (!rst_ni || clr_i[i]) begin
        pend_q <= '0;
      end else if (visit[i]) begin
        pend_q <= inc;
      end else begin
        pend_q <= pend_q + inc;
      end
    end
    assign pend[i] = TW'(pend_q);
  end

  always_comb begin
    inc_any = (|ev_i) || (|(ev2_i & Ev2Mask));
    for (int i = 0; i < N; i++) begin
      if (AddMask[i] && add_i[i] != '0) inc_any = 1'b1;
    end
  end

  // the visited counter's amount and flag: AND-OR over the decoded visit,
  // not a mux tree on s_q (iCE40: 539 -> 515 LUT4 for the port's 27)
  assign visit = N'(1) << s_q;

  always_comb begin
    take_d  = '0;
    clr_now = 1'b0;
    clr_d   = 1'b0;
    for (int i = 0; i < N; i++) begin
      take_d  = take_d | (visit[i] ? pend[i] : '0);
      clr_now = clr_now || (visit[i] && clr_i[i]);
      clr_d   = clr_d || (visit[i] && flag_q[i]);
    end
    clr_d = clr_d || clr_now;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      s_q    <= '0;
      wa_q   <= '0;
      wv_q   <= 1'b0;
      take_q <= '0;
      clr_q  <= 1'b0;
      flag_q <= '1;
      busy_q <= '0;
    end else begin
      // an increment in this cycle is taken by the counter's next visit, at
      // most N cycles later, and written a cycle after that
      if (inc_any) begin
        busy_q <= (SW + 1)'(N + 1);
      end else if (busy_q != '0) begin
        busy_q <= busy_q - (SW + 1)'(1);
      end
      s_q    <= (32'(s_q) == N - 1) ? '0 : s_q + SW'(1);
      wa_q   <= s_q;
      wv_q   <= 1'b1;
      take_q <= clr_now ? '0 : take_d;
      clr_q  <= clr_d;
      flag_q <= clr_i | (flag_q & ~visit);
    end
  end

  // the mux after the adder (not a gate on ram_rdata before it): on the
  // iCE40 the sum and the mux fit one LUT4 beside the carry chain
  logic [31:0] wsum;
  assign wsum  = ram_rdata + 32'(take_q);
  assign wdata = clr_q ? 32'(take_q) : wsum;

  // one write port (the visit's write), one read port (the visit's read);
  // never the same word in one cycle (wa_q = s_q - 1)
  always_ff @(posedge clk_i) begin
    if (wv_q) begin
      ctr_ram[wa_q] <= wdata;
    end
    ram_rdata <= ctr_ram[s_q];
  end

  assign wr_valid_o = wv_q;
  assign wr_idx_o   = wa_q;
  assign wr_data_o  = wdata;
  assign busy_o     = inc_any || busy_q != '0;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      for (int i = 0; i < N; i++) begin
        if (!AddMask[i]) assert (add_i[i] == '0) else $error("%m: add_i[%0d] outside AddMask", i);
        if (!Ev2Mask[i]) assert (!ev2_i[i]) else $error("%m: ev2_i[%0d] outside Ev2Mask", i);
      end
    end
  end
`endif

endmodule
