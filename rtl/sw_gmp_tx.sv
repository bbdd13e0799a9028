// sw_gmp_tx: writes the host's GMP send stream (packets LRH..ICRC built by
// the host, with a ready) into port 0's data-VL input buffer. A packet starts
// only when the buffer has a free slot (s_tready_o low until then); once
// started every beat is taken at once, so the buffer never drops for want of
// a slot. A packet on VL15 (the SMI's business: ibspec §6, GMPs never use
// VL15) or longer than a slot is taken whole and dropped (ev_drop_o). The meta
// is the LRH DLID (packet bytes 2..3, in the first beat at every width).
module sw_gmp_tx
  import ib_pkg::*;
#(
  parameter int unsigned DataW     = 64,  // stream width in bits: 32, 64 or 128
  parameter int unsigned SlotWords = 36,  // beats per buffer slot
  localparam int unsigned DataB    = DataW / 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // host stream
  input  logic [DataW-1:0] s_tdata_i,
  input  logic [DataB-1:0] s_tkeep_i,
  input  logic             s_tvalid_i,
  input  logic             s_tlast_i,
  output logic             s_tready_o,
  // to the ib_pkt_fifo write side
  output logic             wr_valid_o,
  output logic [DataW-1:0] wr_data_o,
  output logic [DataB-1:0] wr_keep_o,
  output logic             wr_end_o,
  output logic             wr_ok_o,
  output logic [15:0]      wr_meta_o,
  input  logic             wr_slot_free_i,
  // events, with the tlast beat
  output logic             ev_commit_o,  // packet committed into the buffer
  output logic             ev_drop_o,    // packet dropped (VL15, too long)
  output logic             busy_o        // a packet is open
);

  if (DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 32, 64 or 128, got %0d", DataW);
  end

  logic        open_q;
  logic        vl15_q;
  logic [15:0] beats_q;  // beats taken (saturating)
  logic [15:0] dlid_q;
  logic        take, first, vl15, ovf;
  logic [15:0] dlid;

  assign s_tready_o = open_q || wr_slot_free_i;
  assign take       = s_tvalid_i && s_tready_o;
  assign first      = !open_q;
  assign vl15       = first ? (s_tdata_i[8*PbLrhVlLver+4 +: 4] == Vl15) : vl15_q;
  assign dlid       = first ? {s_tdata_i[8*PbLrhDlid +: 8], s_tdata_i[8*(PbLrhDlid+1) +: 8]}
                            : dlid_q;
  assign ovf        = 32'(beats_q) + 1 > SlotWords;

  assign wr_valid_o  = take;
  assign wr_data_o   = s_tdata_i;
  assign wr_keep_o   = s_tkeep_i;
  assign wr_end_o    = take && s_tlast_i;
  assign wr_ok_o     = !vl15 && !ovf;
  assign wr_meta_o   = dlid;
  assign ev_commit_o = wr_end_o && wr_ok_o;
  assign ev_drop_o   = wr_end_o && !wr_ok_o;
  assign busy_o      = open_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      open_q  <= 1'b0;
      vl15_q  <= 1'b0;
      beats_q <= '0;
      dlid_q  <= '0;
    end else if (take) begin
      if (s_tlast_i) begin
        open_q  <= 1'b0;
        beats_q <= '0;
      end else begin
        open_q  <= 1'b1;
        vl15_q  <= vl15;
        dlid_q  <= dlid;
        if (beats_q != 16'hFFFF) beats_q <= beats_q + 16'd1;
      end
    end
  end

endmodule
