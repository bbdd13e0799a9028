// sw_pktlen_tap: watches one packet stream (LRH first) and, on the last beat
// of a packet that is to be counted, outputs its LRH.PktLen (11 bits: 4-byte
// words LRH..ICRC, ibspec §1) for a word counter; 0 in every other cycle.
// The stream may have idle cycles between beats; beat_i marks a beat that
// passes (valid and, where there is one, ready).
module sw_pktlen_tap
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 32, 64 or 128
  localparam int unsigned DataB = DataW / 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             beat_i,   // a beat of the stream passes
  input  logic [DataW-1:0] tdata_i,
  input  logic             tlast_i,
  input  logic             ok_i,     // with the tlast beat: count this packet
  output sw_ev_t           words_o   // PktLen on a counted tlast beat, else 0
);

  if (DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 32, 64 or 128, got %0d", DataW);
  end

  // Packet bytes 4 (PktLen[10:8] in bits 2:0) and 5 (PktLen[7:0]) lie in
  // beat HdrBeat, at these byte lanes.
  localparam int unsigned HdrBeat = PbLrhPktLen / DataB;
  localparam int unsigned Lane4   = PbLrhPktLen % DataB;
  localparam int unsigned Lane5   = (PbLrhPktLen + 1) % DataB;

  logic [1:0]  bidx_q;    // beat index within the packet, saturating at 3
  logic [10:0] len_q;     // PktLen, once its beat has passed
  logic        hdr;
  logic [10:0] len_now;

  assign hdr     = (32'(bidx_q) == HdrBeat);
  assign len_now = hdr ? {tdata_i[8*Lane4 +: 3], tdata_i[8*Lane5 +: 8]} : len_q;
  assign words_o = (beat_i && tlast_i && ok_i) ? sw_ev_t'(len_now) : '0;

  // only the PktLen bytes of the stream are read
  logic unused_data;
  assign unused_data = ^tdata_i;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      bidx_q <= '0;
      len_q  <= '0;
    end else if (beat_i) begin
      if (tlast_i) begin
        bidx_q <= '0;
      end else if (bidx_q != 2'd3) begin
        bidx_q <= bidx_q + 2'd1;
      end
      if (hdr) len_q <= len_now;
    end
  end

endmodule
