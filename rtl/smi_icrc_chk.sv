// smi_icrc_chk: ICRC check of an SMP on the VL15 stream of an SMI receive
// engine (smi_rq, sw_smi_rq), as the CRC residue (ibspec §3.1): the CRC-32
// of packet bytes 0..287 (the ICRC's coverage, VL and BTH.resv8a as 1s, and
// the ICRC itself, LSB first) equals Crc32Residue iff the ICRC is good, so
// the check is a compare with a constant and the ICRC field is not
// captured. The compare is registered a byte at a time with the CRC state:
// icrc_ok_o, from registers only, is the verdict in any beat after the ICRC
// (the tlast beat of a packet whose PktLen is an SMP's).
module smi_icrc_chk
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
  output logic                 icrc_ok_o
);

  localparam int unsigned PosW = SmiRxPosW;

  // CRC coverage: bytes 0..CrcEnd-1. Beats before IcrcBeat are covered
  // whole, the beat at IcrcBeat for its first IcrcTail bytes (none: 288 is a
  // multiple of every DataB), later beats not at all.
  localparam int unsigned CrcEnd     = MadOffset + MadBytes + IcrcBytes;  // 288
  localparam int unsigned IcrcTail   = CrcEnd % DataB;
  localparam int unsigned IcrcBeat   = CrcEnd - IcrcTail;
  localparam int unsigned Resv8aBeat = PbBthResv8a - PbBthResv8a % DataB;
  localparam int unsigned Resv8aLane = PbBthResv8a % DataB;
  localparam crc32_mat_t  CrcFull    = crc32_mat(DataB);
  localparam crc32_mat_t  CrcTail    = crc32_mat(IcrcTail);

  logic [31:0] crc_q, crc_d;   // running ICRC state (no final XOR)
  // crc_q == Crc32Residue, byte by byte, registered with crc_q (so at tlast
  // the ICRC verdict is one AND of four flags: the DataW 64 path from the
  // residue compare through wr_ok_o into the RX buffer was critical)
  logic [3:0]  res_eq_q;
  function automatic logic [3:0] res_eq_d(logic [31:0] c);
    for (int unsigned j = 0; j < 4; j++) begin
      res_eq_d[j] = c[8*j +: 8] == Crc32Residue[8*j +: 8];
    end
  endfunction

  logic [DataW-1:0] icrc_data;  // this beat with the ICRC's mask applied
  // Where the current beat is, registered from the next offset (keeps the
  // offset compares off the path into the CRC): first beat, beat of
  // BTH.resv8a, beat covered whole by the ICRC, beat with the ICRC's last
  // covered bytes.
  logic             at_first_q, at_resv_q, cov_full_q, at_icrc_q;

  always_comb begin
    icrc_data = tdata_i;
    if (at_first_q) begin
      icrc_data[8*PbLrhVlLver + 4 +: 4] = 4'hF;   // LRH.VL
    end
    if (at_resv_q) begin
      icrc_data[8*Resv8aLane +: 8] = 8'hFF;        // BTH.resv8a
    end
  end

  always_comb begin
    logic [31:0] crc_in;
    crc_in = at_first_q ? Crc32Init : crc_q;
    crc_d  = crc_in;
    if (tvalid_i) begin
      if (cov_full_q) begin
        crc_d = crc32_mul(CrcFull, DataB, crc_in, (8 * CrcMaxBytes)'(icrc_data));
      end else if (IcrcTail != 0 && at_icrc_q) begin
        crc_d = crc32_mul(CrcTail, IcrcTail, crc_in, (8 * CrcMaxBytes)'(icrc_data));
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      at_first_q <= 1'b1;
      at_resv_q  <= Resv8aBeat == 0;
      cov_full_q <= 1'b1;
      at_icrc_q  <= 1'b0;
      crc_q      <= Crc32Init;
      res_eq_q   <= res_eq_d(Crc32Init);
    end else begin
      at_first_q <= pos_next_i == '0;
      at_resv_q  <= pos_next_i == PosW'(Resv8aBeat);
      cov_full_q <= 32'(pos_next_i) < IcrcBeat;
      at_icrc_q  <= 32'(pos_next_i) == IcrcBeat;
      crc_q      <= crc_d;
      res_eq_q   <= res_eq_d(crc_d);
    end
  end

  assign icrc_ok_o = &res_eq_q;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      assert ((&res_eq_q) == (crc_q == Crc32Residue))
        else $error("%m: registered residue compare out of step with crc_q");
    end
  end
`endif

endmodule
