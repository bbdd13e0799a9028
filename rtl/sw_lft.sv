// sw_lft: the switch's linear forwarding table. LftDepth one-byte entries
// (LID -> egress port, 0xFF = no route) kept as 32-bit words of 4 entries
// (entry 4w in bits 7:0 of word w), written and read word-wise by the
// register interface (combinational read), and one lookup port shared by
// NumReq requesters: a round-robin arbiter grants one request per cycle
// (sel_o), the caller returns that requester's LID on sel_lid_i (a mux on
// its side: no copy of every requester's LID each cycle), the RAM is read
// synchronously (block-RAM style) and the entry comes back to the granted
// requester in the next cycle (rsp_valid_o). A word never written
// since reset reads as 0xFFFFFFFF (a valid bit per word, no clearing pass).
module sw_lft #(
  parameter int unsigned LftDepth = 4096,  // entries, a multiple of 64, <= 0xC000
  parameter int unsigned NumReq   = 2,     // lookup requesters
  parameter int unsigned RW       = (NumReq > 1) ? $clog2(NumReq) : 1  // requester index width
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // register access (word index)
  input  logic               we_i,
  input  logic [15:0]        waddr_i,
  input  logic [31:0]        wdata_i,
  input  logic [15:0]        raddr_i,
  output logic [31:0]        rdata_o,
  // lookups
  input  logic [NumReq-1:0]  req_i,
  output logic [RW-1:0]      sel_o,               // the requester granted (with gnt_o)
  input  logic [15:0]        sel_lid_i,           // its LID, < LftDepth
  output logic [NumReq-1:0]  gnt_o,               // request taken this cycle
  output logic [NumReq-1:0]  rsp_valid_o,         // entry for this requester on rsp_entry_o
  output logic [7:0]         rsp_entry_o,
  output logic               busy_o               // a lookup granted, its entry not yet out
);

  if (LftDepth < 64 || LftDepth % 64 != 0 || LftDepth > 32'hC000) begin : gen_depth_check
    $fatal(1, "%m: LftDepth must be a multiple of 64 in 64..49152, got %0d", LftDepth);
  end
  if (NumReq < 1) begin : gen_req_check
    $fatal(1, "%m: NumReq must be >= 1, got %0d", NumReq);
  end

  localparam int unsigned Words = LftDepth / 4;
  localparam int unsigned WW    = $clog2(Words);

  logic [31:0]      mem [Words];
  logic [Words-1:0] vld_q;

  always_ff @(posedge clk_i) begin
    if (we_i) begin
      mem[waddr_i[WW-1:0]] <= wdata_i;
    end
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      vld_q <= '0;
    end else if (we_i) begin
      vld_q[waddr_i[WW-1:0]] <= 1'b1;
    end
  end

  assign rdata_o = vld_q[raddr_i[WW-1:0]] ? mem[raddr_i[WW-1:0]] : 32'hFFFF_FFFF;

  // Round robin: the first requester after the last granted one.
  logic [RW-1:0] last_q;
  logic [RW-1:0] sel;
  logic          any;
  sw_rr_pick #(.N(NumReq), .W(RW)) u_pick (
    .req_i,
    .last_i (last_q),
    .sel_o  (sel),
    .any_o  (any)
  );
  always_comb begin
    gnt_o = '0;
    gnt_o[sel] = any;
  end

  logic          rsp_q;
  logic [RW-1:0] rsp_sel_q;
  assign busy_o = rsp_q;
  logic [31:0]   word_q;
  logic          word_vld_q;
  logic [1:0]    byte_q;
  logic [15:0]   lid;

  assign sel_o = sel;
  assign lid   = sel_lid_i;

  always_ff @(posedge clk_i) begin
    if (any) begin
      word_q     <= mem[lid[WW+1:2]];
      word_vld_q <= vld_q[lid[WW+1:2]];
      byte_q     <= lid[1:0];
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      last_q    <= RW'(NumReq - 1);
      rsp_q     <= 1'b0;
      rsp_sel_q <= '0;
    end else begin
      rsp_q <= any;
      if (any) begin
        last_q    <= sel;
        rsp_sel_q <= sel;
      end
    end
  end

  always_comb begin
    rsp_valid_o = '0;
    rsp_valid_o[rsp_sel_q] = rsp_q;
    rsp_entry_o = word_vld_q ? word_q[8*byte_q +: 8] : 8'hFF;
  end

  // lid bits above the table are never looked up (the requester checks)
  logic unused;
  assign unused = ^{waddr_i, raddr_i, lid};

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && any) begin
      assert (32'(lid) < LftDepth) else $error("%m: lookup of LID %0d >= LftDepth", lid);
    end
  end
`endif

endmodule
