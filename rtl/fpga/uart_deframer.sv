// uart_deframer: parses host -> board UART frames (docs/uart.md) from the
// received byte pulses. Hunts for SYNC, reads TYPE and LEN, rejects a header
// that ib_uart_pkg::down_hdr_ok refuses (back to hunting), passes the payload
// bytes on as they arrive (with their index) and ends every frame that got
// past its header with end_o: ok_o = 1 when the CRC matched. A frame is
// abandoned (end_o with ok_o = 0) on a UART framing error or when the line is
// idle for TimeoutClks inside a frame: that is how the parser resynchronises
// after a lost byte. Exactly one event pulse per frame or rejected header.
// rx_data_i must hold its byte for the cycle after rx_valid_i (uart_rx's
// shift register does, for a whole bit): byte_data_o is rx_data_i then.
module uart_deframer
  import ib_pkg::*;
  import ib_uart_pkg::*;
#(
  parameter int unsigned TimeoutClks = 480_000  // idle clocks that abandon a frame (>= 2)
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  // from uart_rx
  input  logic [7:0]  rx_data_i,
  input  logic        rx_valid_i,
  input  logic        rx_err_i,
  // payload bytes (one-cycle pulses, idx counts from 0)
  output logic [7:0]  byte_data_o,
  output logic        byte_valid_o,
  output logic [15:0] byte_idx_o,
  output logic [7:0]  type_o,       // frame type, stable from the first payload byte to end_o
  output logic        end_o,        // one-cycle pulse: frame finished (after its CRC or abandoned)
  output logic        ok_o,         // with end_o: CRC matched
  // events (one-cycle pulses)
  output logic        ev_ok_o,         // good frame
  output logic        ev_crc_err_o,    // CRC mismatch: frame dropped
  output logic        ev_frame_err_o   // bad header, UART framing error or timeout inside a frame
);

  localparam int unsigned ToW  = $clog2(TimeoutClks + 1);
  // a payload has 1..MaxPayload bytes (down_hdr_ok): its length and index
  // need only these bits
  localparam int unsigned LenW = $clog2(MaxPayload + 1);

  if (FtWireRx > 8'h07 || FtSmaTx > 8'h07 || FtSmTx > 8'h07 || FtTrapTx > 8'h07 ||
      FtRegWrite > 8'h07 || FtRegRead > 8'h07) begin : gen_type_check
    $fatal(1, "%m: host -> board frame types must be below 8");
  end
  if (LenW < 8) begin : gen_len_check
    $fatal(1, "%m: LEN_LO is kept in len_q[7:0]: MaxPayload must be >= 128");
  end
  if (TimeoutClks < 2) begin : gen_to_check
    $fatal(1, "%m: TimeoutClks must be >= 2, got %0d", TimeoutClks);
  end

  typedef enum logic [2:0] {
    Hunt,
    Type,
    LenLo,
    LenHi,
    Payload,
    CrcLo,
    CrcHi
  } state_e;

  state_e         state_q, state_d;
  // TYPE: its low three bits and whether the upper five are zero (every
  // host -> board type is 0x01..0x06; checked below)
  logic [2:0]     type_q, type_d;
  logic           type_hi_q, type_hi_d;  // TYPE[7:3] != 0: refused
  logic [7:0]     hdr_type;
  // LEN_LO goes into len_q[7:0], LEN_HI's low bits above it
  logic [LenW-1:0] len_q, len_d;
  // index of the next payload byte; counts up in the cycle after each one
  // (byte_valid_o), so it is that byte's index while byte_valid_o is high
  logic [LenW-1:0] idx_q, idx_d, idx_inc;
  logic [15:0]    crc_q, crc_d;
  logic           crc_lo_ok_q, crc_lo_ok_d;  // CRC_LO matched
  logic [ToW-1:0] idle_q, idle_d;
  logic           end_d, ok_d, ev_ok_d, ev_crc_d, ev_ferr_d;
  logic           byte_valid_d;
  logic [15:0]    crc_fin;

  assign crc_fin = crc_q ^ Crc16XorOut;

  always_comb begin
    state_d      = state_q;
    type_d       = type_q;
    type_hi_d    = type_hi_q;
    len_d        = len_q;
    idx_d        = byte_valid_o ? idx_inc : idx_q;
    crc_d        = crc_q;
    crc_lo_ok_d  = crc_lo_ok_q;
    idle_d       = (state_q == Hunt || rx_valid_i) ? '0 : idle_q + ToW'(1);
    end_d        = 1'b0;
    ok_d         = 1'b0;
    ev_ok_d      = 1'b0;
    ev_crc_d     = 1'b0;
    ev_ferr_d    = 1'b0;
    byte_valid_d = 1'b0;

    if (state_q != Hunt && (rx_err_i || 32'(idle_q) >= TimeoutClks - 1)) begin
      // abandon the frame; a payload already passed on is ended as bad
      state_d   = Hunt;
      ev_ferr_d = 1'b1;
      end_d     = state_q inside {Payload, CrcLo, CrcHi};
    end else if (rx_valid_i) begin
      unique case (state_q)
        Hunt: begin
          if (rx_data_i == FrameSync) begin
            state_d = Type;
            crc_d   = Crc16Init;
          end
        end
        Type: begin
          type_d    = rx_data_i[2:0];
          type_hi_d = rx_data_i[7:3] != 5'd0;
          crc_d   = crc16_byte(crc_q, rx_data_i);
          state_d = LenLo;
        end
        LenLo: begin
          len_d    = LenW'(rx_data_i);
          crc_d    = crc16_byte(crc_q, rx_data_i);
          state_d  = LenHi;
        end
        LenHi: begin
          len_d   = LenW'({rx_data_i, len_q[7:0]});
          crc_d   = crc16_byte(crc_q, rx_data_i);
          idx_d   = '0;
          if (down_hdr_ok(hdr_type, {rx_data_i, len_q[7:0]})) begin
            state_d = Payload;
          end else begin
            state_d   = Hunt;
            ev_ferr_d = 1'b1;
          end
        end
        Payload: begin
          crc_d        = crc16_byte(crc_q, rx_data_i);
          byte_valid_d = 1'b1;
          if (idx_inc == len_q) state_d = CrcLo;
        end
        CrcLo: begin
          crc_lo_ok_d = rx_data_i == crc_fin[7:0];
          state_d     = CrcHi;
        end
        CrcHi: begin
          state_d = Hunt;
          end_d   = 1'b1;
          ok_d    = crc_lo_ok_q && rx_data_i == crc_fin[15:8];
          ev_ok_d = ok_d;
          ev_crc_d = !ok_d;
        end
        default: state_d = Hunt;
      endcase
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q        <= Hunt;
      type_q         <= '0;
      type_hi_q      <= 1'b0;
      len_q          <= '0;
      idx_q          <= '0;
      crc_q          <= Crc16Init;
      crc_lo_ok_q    <= 1'b0;
      idle_q         <= '0;
      end_o          <= 1'b0;
      ok_o           <= 1'b0;
      ev_ok_o        <= 1'b0;
      ev_crc_err_o   <= 1'b0;
      ev_frame_err_o <= 1'b0;
      byte_valid_o   <= 1'b0;
    end else begin
      state_q        <= state_d;
      type_q         <= type_d;
      type_hi_q      <= type_hi_d;
      len_q          <= len_d;
      idx_q          <= idx_d;
      crc_q          <= crc_d;
      crc_lo_ok_q    <= crc_lo_ok_d;
      idle_q         <= idle_d;
      end_o          <= end_d;
      ok_o           <= ok_d;
      ev_ok_o        <= ev_ok_d;
      ev_crc_err_o   <= ev_crc_d;
      ev_frame_err_o <= ev_ferr_d;
      byte_valid_o   <= byte_valid_d;
    end
  end

  assign idx_inc     = idx_q + LenW'(1);
  assign hdr_type    = type_hi_q ? 8'hFF : {5'd0, type_q};  // 0xFF: no host -> board type
  assign type_o      = {5'd0, type_q};
  assign byte_data_o = rx_data_i;
  assign byte_idx_o  = 16'(idx_q);

`ifndef SYNTHESIS
  logic [7:0] rx_data_q;
  always_ff @(posedge clk_i) rx_data_q <= rx_data_i;
  always_ff @(posedge clk_i) begin
    if (rst_ni && byte_valid_o) begin
      assert (rx_data_i == rx_data_q) else $error("%m: rx_data_i changed after rx_valid_i");
    end
  end
`endif

endmodule
