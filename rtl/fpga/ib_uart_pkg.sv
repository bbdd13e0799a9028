// ib_uart_pkg: constants of the vl15 board UART framing (docs/uart.md): sync
// byte, frame types, payload sizes, meta layouts and the board register map.
package ib_uart_pkg;

  // A catalogue: not every module uses every constant.
  /* verilator lint_off UNUSEDPARAM */

  // ---------------------------------------------------------------------------
  // Frame: SYNC TYPE LEN_LO LEN_HI PAYLOAD[LEN] CRC_LO CRC_HI
  // CRC = ib_pkg::crc16_byte (the VCRC CRC-16: poly 0x100B reflected, init
  // 0xFFFF, xorout 0xFFFF; check value 0x0A3D) over TYPE..PAYLOAD.
  // ---------------------------------------------------------------------------
  localparam logic [7:0]  FrameSync     = 8'hA5;
  localparam int unsigned MaxPayload    = 512;  // longest payload either way (a power of two)

  // Host -> board
  localparam logic [7:0]  FtWireRx      = 8'h01;  // wire packet into the port's link (LRH..VCRC)
  localparam logic [7:0]  FtSmaTx       = 8'h02;  // TX meta (8) + MAD (256): SMA response
  localparam logic [7:0]  FtSmTx        = 8'h03;  // TX meta (8) + MAD (256): SM request
  localparam logic [7:0]  FtTrapTx      = 8'h04;  // TX meta (8, ignored) + MAD (256): trap
  localparam logic [7:0]  FtRegWrite    = 8'h05;  // addr (1) + data (4, LE)
  localparam logic [7:0]  FtRegRead     = 8'h06;  // addr (1)
  // Board -> host
  localparam logic [7:0]  FtWireTx      = 8'h81;  // wire packet out of the port (LRH..VCRC)
  localparam logic [7:0]  FtSmaRx       = 8'h82;  // RX meta (12) + MAD (256) + M_Key verdict (1)
  localparam logic [7:0]  FtSmRx        = 8'h83;  // RX meta (12) + MAD (256)
  localparam logic [7:0]  FtRegReadResp = 8'h86;  // addr (1) + data (4, LE)

  localparam int unsigned TxMetaBytes   = 8;   // lid_a[2] lid_b[2] sl[1] path_bits[1] rsvd[2]
  localparam int unsigned RxMetaBytes   = 12;  // slid[2] dlid[2] sl port class hop_ptr hop_cnt rsvd[3]
  localparam int unsigned MadFrameLen   = TxMetaBytes + 256;
  localparam int unsigned RxMadFrameLen = RxMetaBytes + 256;
  // SMA_RX adds one trailer byte after the MAD: the M_Key check's verdict
  // (bit 0 violation: do not answer, send Trap 256; bit 1 masked Get), which
  // ib_ca_top gives only with the tlast beat, after the meta has gone out
  localparam int unsigned SmaRxFrameLen = RxMadFrameLen + 1;
  localparam int unsigned RegWriteLen   = 5;
  localparam int unsigned RegReadLen    = 1;

  // Is (type, len) a valid host -> board frame header?
  function automatic logic down_hdr_ok(logic [7:0] ftype, logic [15:0] len);
    logic ok;
    unique case (ftype)
      // 1..MaxPayload, as equality tests (MaxPayload is a power of two)
      FtWireRx:                  ok = (len != 16'd0) &&
                                      ((len >> $clog2(MaxPayload)) == 16'd0 ||
                                       32'(len) == MaxPayload);
      FtSmaTx, FtSmTx, FtTrapTx: ok = (32'(len) == MadFrameLen);
      FtRegWrite:                ok = (32'(len) == RegWriteLen);
      FtRegRead:                 ok = (32'(len) == RegReadLen);
      default:                   ok = 1'b0;
    endcase
    return ok;
  endfunction

  // Kind of a committed host -> board frame in the down buffer (its meta).
  typedef enum logic [1:0] {
    KindWireRx = 2'd0,
    KindSmaTx  = 2'd1,
    KindSmTx   = 2'd2,
    KindTrapTx = 2'd3
  } down_kind_e;

  // Down buffer meta: the frame kind and the TX meta fields.
  typedef struct packed {
    down_kind_e  kind;
    logic [15:0] lid_a;      // SMA TX: request SLID; SM TX: DLID
    logic [15:0] lid_b;      // SMA TX: request DLID
    logic [3:0]  sl;
    logic [6:0]  path_bits;  // SM TX
  } down_meta_t;

  // ---------------------------------------------------------------------------
  // Board registers (same 8-bit address space as ib_pkg's port registers;
  // addresses 0xC0..0xFF belong to the board)
  // ---------------------------------------------------------------------------
  localparam logic [7:0] RegBoardCtrl     = 8'hC0;  // RW bit 0: internal loopback (wire TX -> wire RX)
  localparam logic [7:0] RegBoardFramesOk = 8'hC1;  // RO good host -> board frames
  localparam logic [7:0] RegBoardCrcErr   = 8'hC2;  // RO frames dropped for a bad CRC
  localparam logic [7:0] RegBoardFrameErr = 8'hC3;  // RO bad type/length, idle timeout, UART stop bit
  localparam logic [7:0] RegBoardOverrun  = 8'hC4;  // RO good frames lost: buffer full, response pending
  localparam logic [7:0] RegBoardTxFrames = 8'hC5;  // RO board -> host frames sent
  localparam logic [7:0] RegBoardTxDrop   = 8'hC6;  // RO wire TX packets longer than MaxPayload
  localparam logic [7:0] RegBoardCaps     = 8'hC7;  // RO [15:0] clocks per bit, [31:16] MaxPayload
  localparam logic [7:0] RegBoardProfile  = 8'hC8;  // RO [7:0] DataW, [8] GSI receive checks present
  // A write to ib_pkg::RegCtrClear also clears the board counters.

  /* verilator lint_on UNUSEDPARAM */

endpackage
