// sw_out_arb: the arbiter of one output port for one buffer class (VL15 or
// data). At a packet boundary it grants, round-robin (the input after the
// last granted one first), one of the inputs requesting this output, and
// holds the grant until that packet's last beat has been taken: a packet is
// never interleaved. The grant goes out a cycle after the request (a
// register), so the chosen input's buffer output feeds the output directly.
module sw_out_arb #(
  parameter int unsigned NumIn = 9  // inputs 0..NumIn-1
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic [NumIn-1:0]         req_i,      // input i has its head packet for this output
  input  logic                     take_last_i, // the granted packet's last beat is taken
  output logic                     locked_o,   // a grant is held
  output logic [$clog2(NumIn)-1:0] grant_o     // the granted input while locked_o
);

  localparam int unsigned IW = $clog2(NumIn);

  if (NumIn < 2) begin : gen_in_check
    $fatal(1, "%m: NumIn must be >= 2, got %0d", NumIn);
  end

  logic          locked_q;
  logic [IW-1:0] grant_q, last_q;
  logic [IW-1:0] sel;
  logic          any;

  // The first requester after the last granted one.
  sw_rr_pick #(.N(NumIn), .W(IW)) u_pick (
    .req_i,
    .last_i (last_q),
    .sel_o  (sel),
    .any_o  (any)
  );

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      locked_q <= 1'b0;
      grant_q  <= '0;
      last_q   <= IW'(NumIn - 1);
    end else if (locked_q) begin
      if (take_last_i) locked_q <= 1'b0;
    end else if (any) begin
      locked_q <= 1'b1;
      grant_q  <= sel;
      last_q   <= sel;
    end
  end

  assign locked_o = locked_q;
  assign grant_o  = grant_q;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && locked_q) begin
      assert (req_i[grant_q]) else $error("%m: granted input %0d dropped its request", grant_q);
    end
  end
`endif

endmodule
