// sw_rr_pick: the round-robin choice shared by the switch's arbiters
// (sw_out_arb per output, sw_lft between lookup requesters): the first
// requester after `last_i`, cyclically. Combinational; the caller keeps
// `last_i` (the previous grant).
//
// The requesters above last_i, if any, else all of them; of those the
// lowest: `x & -x` isolates it, and an OR over constant masks encodes it
// (bit b of the index is set where the one-hot bit's index has bit b). No
// loop over the requesters: a simulator evaluates a few word-wide
// operations, however many requesters there are.
module sw_rr_pick #(
  parameter int unsigned N = 2,                          // requesters 0..N-1
  parameter int unsigned W = (N > 1) ? $clog2(N) : 1     // index width
) (
  input  logic [N-1:0] req_i,
  input  logic [W-1:0] last_i,
  output logic [W-1:0] sel_o,   // the chosen requester (last_i if none)
  output logic         any_o    // some requester
);

  typedef logic [N-1:0] vec_t;

  // Bit b of every index 0..N-1, as a mask over the requesters.
  function automatic vec_t index_bit(int unsigned b);
    vec_t m = '0;
    for (int unsigned i = 0; i < N; i++) m[i] = ((i >> b) & 1) == 1;
    return m;
  endfunction

  vec_t above, pool, first;
  logic [W-1:0] idx;

  // Requesters last_i+1 .. N-1 (none when last_i is the top one).
  assign above = ~((vec_t'(1) << ((W+1)'(last_i) + (W+1)'(1))) - vec_t'(1));
  assign pool  = (|(req_i & above)) ? (req_i & above) : req_i;
  assign first = pool & (~pool + vec_t'(1));

  for (genvar b = 0; b < W; b++) begin : gen_enc
    localparam vec_t IndexBit = index_bit(b);
    assign idx[b] = |(first & IndexBit);
  end

  assign any_o = |req_i;
  assign sel_o = any_o ? idx : last_i;

endmodule
