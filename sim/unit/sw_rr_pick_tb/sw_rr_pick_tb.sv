// sw_rr_pick_tb: sw_rr_pick at the requester counts the switch uses (an
// 8-port switch's outputs: 9, its LFT: 18, the fabric's tiles at 64 ports:
// 65 and 130) and at small ones (1, 2, 3), side by side, so one harness
// drives them all: instance k takes the low Ns[k] bits of req_i[k] and the
// low bits of last_i[k]. Only wires.
module sw_rr_pick_tb #(
  // The unit runner sets DataW on every top; the arbiter has no data path.
  /* verilator lint_off UNUSEDPARAM */
  parameter int unsigned DataW = 64
  /* verilator lint_on UNUSEDPARAM */
) (
  input  logic [129:0] req_i  [7],
  input  logic [7:0]   last_i [7],
  output logic [7:0]   sel_o  [7],
  output logic [6:0]   any_o
);

  localparam int unsigned Ns [7] = '{1, 2, 3, 9, 18, 65, 130};

  for (genvar k = 0; k < 7; k++) begin : gen_pick
    localparam int unsigned N = Ns[k];
    localparam int unsigned W = (N > 1) ? $clog2(N) : 1;
    logic [W-1:0] sel;
    sw_rr_pick #(.N(N), .W(W)) u_pick (
      .req_i  (req_i[k][N-1:0]),
      .last_i (last_i[k][W-1:0]),
      .sel_o  (sel),
      .any_o  (any_o[k])
    );
    assign sel_o[k] = 8'(sel);
    // the bits above this instance's N and W
    logic unused;
    assign unused = ^{req_i[k], last_i[k]};
  end

endmodule
