// sw_rr_pick: the round-robin choice shared by the switch's arbiters
// (sw_out_arb per output, sw_lft between lookup requesters): the first
// requester after `last_i`, cyclically. Combinational; the caller keeps
// `last_i` (the previous grant).
//
// Search from last_i + N down to last_i + 1 (mod N) and keep the last hit.
// last_i < N, so one conditional subtraction is the modulo. The search runs
// only when something requests: most arbiters are idle most of the time,
// and a simulator then skips it.
module sw_rr_pick #(
  parameter int unsigned N = 2,                          // requesters 0..N-1
  parameter int unsigned W = (N > 1) ? $clog2(N) : 1     // index width
) (
  input  logic [N-1:0] req_i,
  input  logic [W-1:0] last_i,
  output logic [W-1:0] sel_o,   // the chosen requester (last_i if none)
  output logic         any_o    // some requester
);

  logic [W:0] rr;  // candidate, before the modulo
  always_comb begin
    sel_o = last_i;
    any_o = 1'b0;
    rr    = '0;
    if (|req_i) begin
      for (int k = N; k >= 1; k--) begin
        rr = (W+1)'(last_i) + (W+1)'(k);
        if (rr >= (W+1)'(N)) rr = rr - (W+1)'(N);
        if (req_i[W'(rr)]) begin
          sel_o = W'(rr);
          any_o = 1'b1;
        end
      end
    end
  end

endmodule
