// ib_uart_down: host -> board frame payloads (from uart_deframer) to the
// board's internal interfaces. Wire RX and MAD frames (SMA/SM/trap TX) are
// packed into DataW beats (byte 0 of a beat in tdata[7:0]) and written to the
// down packet FIFO (ib_pkt_fifo write side), committed when the frame's CRC
// matched, with the frame kind and the TX meta (the first TxMetaBytes payload
// bytes of a MAD frame, not written as data) as the FIFO meta. Register
// frames become one-cycle register write / read requests after a good CRC.
module ib_uart_down
  import ib_uart_pkg::*;
#(
  parameter int unsigned DataW = 32,  // FIFO beat width in bits: 8, 32, 64 or 128
  localparam int unsigned DataB = DataW / 8,
  localparam int unsigned MetaW = $bits(down_meta_t)
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // from uart_deframer
  input  logic [7:0]       byte_data_i,
  input  logic             byte_valid_i,
  input  logic [15:0]      byte_idx_i,
  input  logic [7:0]       type_i,
  input  logic             end_i,
  input  logic             ok_i,
  // to the down ib_pkt_fifo
  output logic             wr_valid_o,
  output logic [DataW-1:0] wr_data_o,
  output logic [DataB-1:0] wr_keep_o,
  output logic             wr_end_o,
  output logic             wr_ok_o,
  output logic [MetaW-1:0] wr_meta_o,
  // register requests (one-cycle pulses)
  output logic             reg_we_o,
  output logic             reg_re_o,
  output logic [7:0]       reg_addr_o,
  output logic [31:0]      reg_wdata_o
);

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end

  localparam int unsigned OffW = (DataB > 1) ? $clog2(DataB) : 1;  // DataW 8: stays 0

  if (TxMetaBytes != 2 ** $clog2(TxMetaBytes)) begin : gen_meta_check
    $fatal(1, "%m: TxMetaBytes must be a power of two, got %0d", TxMetaBytes);
  end

  logic is_mad, is_stream, is_reg, to_meta, to_data;
  assign is_mad    = type_i inside {FtSmaTx, FtSmTx, FtTrapTx};
  assign is_stream = is_mad || type_i == FtWireRx;
  assign is_reg    = type_i inside {FtRegWrite, FtRegRead};
  // byte_idx_i < TxMetaBytes (a power of two: no compare chain)
  logic in_meta;
  assign in_meta   = byte_idx_i[15:$clog2(TxMetaBytes)] == '0;
  assign to_meta   = byte_valid_i && (is_mad || is_reg) && in_meta;
  assign to_data   = byte_valid_i && is_stream && !(is_mad && in_meta);

  down_kind_e kind;
  always_comb begin
    unique case (type_i)
      FtSmaTx:  kind = KindSmaTx;
      FtSmTx:   kind = KindSmTx;
      FtTrapTx: kind = KindTrapTx;
      default:  kind = KindWireRx;
    endcase
  end

  // meta bytes (MAD frames: TX meta; register frames: addr, data LE)
  logic [7:0]       meta_q [TxMetaBytes];
  // beat accumulator
  logic [DataW-1:0] acc_q, acc_d;
  logic [OffW-1:0]  off_q, off_d;     // bytes in acc_q
  logic             part_q, part_d;   // acc_q holds at least one byte
  logic             wr_valid_d, wr_end_d, wr_ok_d;
  logic [DataB-1:0] wr_keep_d;
  logic             reg_we_d, reg_re_d;

  always_comb begin
    acc_d      = acc_q;
    off_d      = off_q;
    part_d     = part_q;
    wr_valid_d = 1'b0;
    wr_keep_d  = '1;
    wr_end_d   = 1'b0;
    wr_ok_d    = 1'b0;
    reg_we_d   = 1'b0;
    reg_re_d   = 1'b0;
    if (to_data) begin
      acc_d[8*off_q +: 8] = byte_data_i;
      off_d  = (32'(off_q) == DataB - 1) ? '0 : off_q + OffW'(1);
      part_d = 1'b1;
      if (32'(off_q) == DataB - 1) begin
        wr_valid_d = 1'b1;
        part_d     = 1'b0;
      end
    end
    if (end_i) begin
      off_d  = '0;
      part_d = 1'b0;
      if (is_stream) begin
        // a partial last beat goes out with the end (tkeep = its bytes)
        wr_valid_d = part_q;
        wr_keep_d  = DataB'((1 << off_q) - 1);
        wr_end_d   = 1'b1;
        wr_ok_d    = ok_i;
      end
      reg_we_d = ok_i && type_i == FtRegWrite;
      reg_re_d = ok_i && type_i == FtRegRead;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      acc_q      <= '0;
      off_q      <= '0;
      part_q     <= 1'b0;
      wr_valid_o <= 1'b0;
      wr_keep_o  <= '0;
      wr_end_o   <= 1'b0;
      wr_ok_o    <= 1'b0;
      reg_we_o   <= 1'b0;
      reg_re_o   <= 1'b0;
    end else begin
      acc_q      <= acc_d;
      off_q      <= off_d;
      part_q     <= part_d;
      wr_valid_o <= wr_valid_d;
      wr_keep_o  <= wr_keep_d;
      wr_end_o   <= wr_end_d;
      wr_ok_o    <= wr_ok_d;
      reg_we_o   <= reg_we_d;
      reg_re_o   <= reg_re_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      for (int i = 0; i < TxMetaBytes; i++) meta_q[i] <= '0;
    end else if (to_meta) begin
      meta_q[byte_idx_i[$clog2(TxMetaBytes)-1:0]] <= byte_data_i;
    end
  end

  down_meta_t meta;
  always_comb begin
    meta.kind      = kind;
    meta.lid_a     = {meta_q[1], meta_q[0]};
    meta.lid_b     = {meta_q[3], meta_q[2]};
    meta.sl        = meta_q[4][3:0];
    meta.path_bits = meta_q[5][6:0];
  end
  // A beat is written the cycle after its last byte came (or after end_i for
  // a partial one), when acc_q holds it: no second register for it.
  assign wr_data_o = acc_q;

  // The meta is sampled by the FIFO with wr_end_o, a cycle after end_i: the
  // next frame's first payload byte is at least four UART bytes later.
  assign wr_meta_o = meta;

  assign reg_addr_o  = meta_q[0];
  assign reg_wdata_o = {meta_q[4], meta_q[3], meta_q[2], meta_q[1]};

  // meta bytes 6, 7 are reserved; the top bits of sl and path_bits unused
  logic unused;
  assign unused = ^{meta_q[4][7:4], meta_q[5][7], meta_q[6], meta_q[7]};

endmodule
