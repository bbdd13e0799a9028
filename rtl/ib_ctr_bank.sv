// ib_ctr_bank: N 32-bit wrapping counters in flip-flops, the one
// implementation of the counter rule the CA port (ib_port_regs) and the
// switch (sw_port_regs, sw_regs) share. In a cycle, counter i is cleared
// (clear_i: every counter; clear_sel_i[i]), else written (we_i[i], test-only
// presets: wdata_i), else advanced by inc_a_i[i] + inc_b_i[i] + inc_c_i[i]:
// a clear wins over a write, a write over a count. Reset clears every
// counter.
//
// One process, entered only in a cycle with something to clear, write or
// count (busy: implied by every branch inside), storing the new values by
// one assignment. The registers are the same as with a process per
// counter; a simulator then evaluates the counters only in those cycles,
// with one pending store instead of one per counter and branch.
module ib_ctr_bank #(
  parameter int unsigned N  = 8,  // counters, 1..32
  parameter int unsigned AW = 1,  // width of each increment input
  parameter int unsigned BW = 1,
  parameter int unsigned CW = 1
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 clear_i,
  input  logic [N-1:0]         clear_sel_i,
  input  logic [N-1:0]         we_i,
  input  logic [31:0]          wdata_i,
  input  logic [N-1:0][AW-1:0] inc_a_i,
  input  logic [N-1:0][BW-1:0] inc_b_i,
  input  logic [N-1:0][CW-1:0] inc_c_i,
  output logic [31:0]          ctr_o [N]
);

  logic [31:0] ctr_q [N];
  logic        busy;

  assign busy = !rst_ni || clear_i || (|clear_sel_i) || (|we_i) || (|inc_a_i) || (|inc_b_i) ||
                (|inc_c_i);

  always_ff @(posedge clk_i) begin
    if (busy) begin
      logic [31:0] nxt [N];
      nxt = ctr_q;
      for (int unsigned i = 0; i < N; i++) begin
        if (!rst_ni || clear_i || clear_sel_i[i]) begin
          nxt[i] = '0;
        end else if (we_i[i]) begin
          nxt[i] = wdata_i;
        end else if (inc_a_i[i] != '0 || inc_b_i[i] != '0 || inc_c_i[i] != '0) begin
          nxt[i] = ctr_q[i] + 32'(inc_a_i[i]) + 32'(inc_b_i[i]) + 32'(inc_c_i[i]);
        end
      end
      ctr_q <= nxt;
    end
  end

  assign ctr_o = ctr_q;

endmodule
