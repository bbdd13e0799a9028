// sw_in_writer: writes one ib_link_rx output stream (packets LRH..VCRC, no
// ready) into an input ib_pkt_fifo as packets LRH..ICRC: the VCRC is cut off
// (the last beat's tkeep loses its two top bytes, or a last beat holding only
// the VCRC is not written). wr_ok at the end = the link found no error. The
// meta is the LRH DLID (packet bytes 2..3, in the first beat); wr_vcrc_o, with
// the tlast beat, the packet's two VCRC bytes as received ([7:0] first on the
// wire), so that port 0 can hand a packet on with the VCRC it arrived with
// (ib_switch_top, gmp_rx). A packet cut by
// the link going down (link_up_i low while a packet is open) is aborted.
// Events: buffer drop (no slot, or longer than SlotWords beats), link-down
// drop, and commit (for the occupancy count of the buffer).
module sw_in_writer
  import ib_pkg::*;
#(
  parameter int unsigned DataW     = 64,   // stream width in bits: 32, 64 or 128
  parameter int unsigned SlotWords = 36,   // beats per buffer slot
  localparam int unsigned DataB    = DataW / 8
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  input  logic               link_up_i,
  // from ib_link_rx
  input  logic [DataW-1:0]   s_tdata_i,
  input  logic [DataB-1:0]   s_tkeep_i,
  input  logic               s_tvalid_i,
  input  logic               s_tlast_i,
  input  logic               s_tuser_i,
  // to the ib_pkt_fifo write side
  output logic               wr_valid_o,
  output logic [DataW-1:0]   wr_data_o,
  output logic [DataB-1:0]   wr_keep_o,
  output logic               wr_end_o,
  output logic               wr_ok_o,
  output logic [15:0]        wr_meta_o,
  output logic [15:0]        wr_vcrc_o,
  input  logic               wr_drop_full_i,
  // events
  output logic               ev_buf_drop_o,   // good packet, no space
  output logic               ev_link_drop_o,  // packet cut by the link going down
  output logic               ev_commit_o,     // packet committed into the buffer
  output logic               busy_o           // a packet is open
);

  if (DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 32, 64 or 128, got %0d", DataW);
  end

  logic        open_q;
  logic [15:0] beats_q;     // beats written (saturating)
  logic [15:0] dlid_q;
  logic        first;
  logic [15:0] dlid;
  logic        vcrc_only;   // last beat holds only the VCRC
  logic        ovf;         // more beats than a slot holds
  logic        end_good;

  assign first     = s_tvalid_i && !open_q;
  assign dlid      = first ? {s_tdata_i[8*PbLrhDlid +: 8], s_tdata_i[8*(PbLrhDlid+1) +: 8]} : dlid_q;
  assign vcrc_only = (s_tkeep_i == DataB'(2'b11));

  always_comb begin
    wr_valid_o = s_tvalid_i && !(s_tlast_i && vcrc_only);
    wr_data_o  = s_tdata_i;
    wr_keep_o  = s_tlast_i ? (s_tkeep_i >> 2) : s_tkeep_i;
    ovf        = 32'(beats_q) + 32'(wr_valid_o) > SlotWords;
    end_good   = s_tvalid_i && s_tlast_i && !s_tuser_i;
    wr_end_o   = (s_tvalid_i && s_tlast_i) || (!link_up_i && open_q);
    wr_ok_o    = end_good && link_up_i;
    wr_meta_o  = dlid;
    // the VCRC: the last two bytes of a tlast beat of 4k + 2 bytes (any other
    // length is a link error, never committed)
    wr_vcrc_o  = '0;
    for (int unsigned k = 0; k < DataB / 4; k++) begin
      if (s_tkeep_i == DataB'((1 << (4 * k + 2)) - 1)) wr_vcrc_o = s_tdata_i[32*k +: 16];
    end
  end

  assign ev_buf_drop_o  = wr_drop_full_i || (end_good && link_up_i && ovf);
  assign ev_link_drop_o = !link_up_i && open_q;
  assign ev_commit_o    = end_good && link_up_i && !ovf && !wr_drop_full_i;
  assign busy_o         = open_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      open_q  <= 1'b0;
      beats_q <= '0;
      dlid_q  <= '0;
    end else begin
      if (wr_end_o) begin
        open_q  <= 1'b0;
        beats_q <= '0;
      end else if (s_tvalid_i) begin
        open_q  <= 1'b1;
        dlid_q  <= dlid;
        if (wr_valid_o && beats_q != 16'hFFFF) beats_q <= beats_q + 16'd1;
      end
    end
  end

endmodule
