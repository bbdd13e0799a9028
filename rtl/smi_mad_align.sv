// smi_mad_align: MAD realignment of the SMI receive engines (smi_rq,
// sw_smi_rq). From the VL15 stream (LRH..VCRC, no ready) it writes the 256
// MAD bytes of an SMP into the RX buffer as full beats, beat 0 = MAD bytes
// 0..DataB-1, each in the cycle of the packet beat that completes it (no
// added latency).
module smi_mad_align
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 8, 32, 64 or 128
  localparam int unsigned DataB = DataW / 8
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic [DataW-1:0]     tdata_i,
  input  logic                 tvalid_i,
  input  logic [SmiRxPosW-1:0] pos_next_i,  // packet byte offset of the next beat
  // RX buffer write port (data beats; keep is all ones)
  output logic                 wr_valid_o,
  output logic [DataW-1:0]     wr_data_o
);

  // MAD byte i is packet byte MadOffset + i: it starts at lane Shift of beat
  // HdrBeats. With Shift != 0 each MAD beat is the upper DataB-Shift bytes of
  // one packet beat and the lower Shift bytes of the next.
  localparam int unsigned Shift    = MadOffset % DataB;
  localparam int unsigned HdrBeats = MadOffset / DataB;
  // Packet byte offset of the first packet beat that completes a MAD beat.
  localparam int unsigned EmitPos  = (Shift == 0) ? MadOffset : (HdrBeats + 1) * DataB;
  localparam int unsigned PosMax   = (1 << SmiRxPosW) - DataB;  // smi_rx_fields' saturation
  if (EmitPos + MadBytes >= PosMax) begin : gen_pos_check
    $fatal(1, "%m: a compared offset reaches PosMax %0d", PosMax);
  end

  logic in_mad_q;  // the beat completes a MAD beat (EmitPos..)

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      in_mad_q <= EmitPos == 0;
    end else begin
      in_mad_q <= 32'(pos_next_i) >= EmitPos && 32'(pos_next_i) < EmitPos + MadBytes;
    end
  end

  if (Shift == 0) begin : gen_aligned
    assign wr_data_o = tdata_i;
  end else begin : gen_shift
    // upper DataB-Shift bytes of the previous beat
    logic [(DataB-Shift)*8-1:0] held_q;
    always_ff @(posedge clk_i) begin
      if (tvalid_i) begin
        held_q <= tdata_i[DataW-1:Shift*8];
      end
    end
    assign wr_data_o = {tdata_i[Shift*8-1:0], held_q};
  end

  assign wr_valid_o = tvalid_i && in_mad_q;

endmodule
