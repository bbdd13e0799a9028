// crc_step_tb: ib_pkg's CRC-32 and CRC-16 steps in both forms: the table
// form simulation runs (crc32_tab(n, ...)) over every n = 0..CrcMaxBytes-1
// bytes, and the matrix form synthesis builds (crc32_xor(crc32_mat(n), ...))
// over the byte counts the modules use at DataW 8..128 (every 4k up to a
// beat, a beat, DataB + MadOffset % DataB) and a few others (each matrix
// costs seconds of elaboration, so not every n). Only wires; tb.cpp compares both with a byte-serial CRC of its own.
module crc_step_tb
  import ib_pkg::*;
#(
  // The unit runner sets DataW on every top; the CRC step has no data path.
  /* verilator lint_off UNUSEDPARAM */
  parameter int unsigned DataW = 64,
  /* verilator lint_on UNUSEDPARAM */
  // the byte counts of the matrix form (tb.cpp has the same list)
  localparam int unsigned NMat = 10,
  localparam int unsigned MatBytes [NMat] = '{0, 1, 2, 3, 4, 5, 8, 12, 16, 28}
) (
  input  logic [31:0]              s32_i,
  input  logic [15:0]              s16_i,
  input  logic [8*CrcMaxBytes-1:0] d_i,
  output logic [31:0]              tab32_o [CrcMaxBytes],
  output logic [15:0]              tab16_o [CrcMaxBytes],
  output logic [31:0]              xor32_o [NMat],
  output logic [15:0]              xor16_o [NMat]
);

  for (genvar n = 0; n < CrcMaxBytes; n++) begin : gen_tab
    assign tab32_o[n] = crc32_tab(n, s32_i, d_i);
    assign tab16_o[n] = crc16_tab(n, s16_i, d_i);
  end

  for (genvar k = 0; k < NMat; k++) begin : gen_mat
    localparam int unsigned N = MatBytes[k];
    localparam crc32_mat_t M32 = crc32_mat(N);
    localparam crc16_mat_t M16 = crc16_mat(N);
    assign xor32_o[k] = crc32_xor(M32, s32_i, d_i);
    assign xor16_o[k] = crc16_xor(M16, s16_i, d_i);
  end

endmodule
