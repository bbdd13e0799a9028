// uart_framer: turns a payload byte stream into UART frames (docs/uart.md):
// SYNC, TYPE, LEN (16 bits, LSB first), the LEN payload bytes, CRC-16 (the
// VCRC CRC of ib_pkg over TYPE..payload, LSB first). Type and length must
// be valid from the first payload byte's s_tvalid_i until that byte is taken
// (they are sent before it: ib_uart_up holds them for the frame); the payload
// ends with s_tlast_i, which must come with byte LEN (asserted). Feeds
// uart_tx.
module uart_framer
  import ib_pkg::*;
  import ib_uart_pkg::*;
(
  input  logic        clk_i,
  input  logic        rst_ni,
  // payload bytes of one frame (LEN >= 1)
  input  logic [7:0]  s_tdata_i,
  input  logic        s_tvalid_i,
  input  logic        s_tlast_i,
  output logic        s_tready_o,
  input  logic [7:0]  s_type_i,   // frame type, valid with every payload byte
  input  logic [15:0] s_len_i,    // payload length, valid with every payload byte
  // bytes to the UART transmitter
  output logic [7:0]  tx_data_o,
  output logic        tx_valid_o,
  input  logic        tx_ready_i,
  // one-cycle pulse when a frame's last byte is handed to the transmitter
  output logic        ev_frame_o
);

  typedef enum logic [2:0] {
    Idle,
    Sync,
    Type,
    LenLo,
    LenHi,
    Payload,
    CrcLo,
    CrcHi
  } state_e;

  state_e      state_q, state_d;
  logic [15:0] crc_q, crc_d;
  logic [15:0] crc_out;
  logic        crc_take;  // tx_data_o is a CRC-covered byte and leaves this cycle

  assign crc_out = crc_q ^ Crc16XorOut;

  always_comb begin
    state_d    = state_q;
    crc_d      = crc_q;
    tx_data_o  = FrameSync;
    tx_valid_o = 1'b0;
    s_tready_o = 1'b0;
    ev_frame_o = 1'b0;
    crc_take   = 1'b0;
    unique case (state_q)
      Idle: begin
        if (s_tvalid_i) begin
          state_d = Sync;
          crc_d   = Crc16Init;
        end
      end
      Sync: begin
        tx_valid_o = 1'b1;
        tx_data_o  = FrameSync;
        if (tx_ready_i) state_d = Type;
      end
      Type: begin
        tx_valid_o = 1'b1;
        tx_data_o  = s_type_i;
        if (tx_ready_i) begin
          state_d  = LenLo;
          crc_take = 1'b1;
        end
      end
      LenLo: begin
        tx_valid_o = 1'b1;
        tx_data_o  = s_len_i[7:0];
        if (tx_ready_i) begin
          state_d  = LenHi;
          crc_take = 1'b1;
        end
      end
      LenHi: begin
        tx_valid_o = 1'b1;
        tx_data_o  = s_len_i[15:8];
        if (tx_ready_i) begin
          state_d  = Payload;
          crc_take = 1'b1;
        end
      end
      Payload: begin
        tx_valid_o = s_tvalid_i;
        tx_data_o  = s_tdata_i;
        s_tready_o = tx_ready_i;
        if (s_tvalid_i && tx_ready_i) begin
          crc_take = 1'b1;
          if (s_tlast_i) state_d = CrcLo;
        end
      end
      CrcLo: begin
        tx_valid_o = 1'b1;
        tx_data_o  = crc_out[7:0];
        if (tx_ready_i) state_d = CrcHi;
      end
      CrcHi: begin
        tx_valid_o = 1'b1;
        tx_data_o  = crc_out[15:8];
        if (tx_ready_i) begin
          state_d    = Idle;
          ev_frame_o = 1'b1;
        end
      end
      default: state_d = Idle;
    endcase
    // one CRC byte engine for TYPE, LEN and the payload
    if (crc_take) crc_d = crc16_byte(crc_q, tx_data_o);
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= Idle;
      crc_q   <= Crc16Init;
    end else begin
      state_q <= state_d;
      crc_q   <= crc_d;
    end
  end

`ifndef SYNTHESIS
  // Type and length hold from the frame's start until its payload; the
  // source's tlast marks exactly byte LEN; a frame has a payload.
  logic [7:0]  type_q;
  logic [15:0] len_q, left_q;  // payload bytes still to send
  always_ff @(posedge clk_i) begin
    if (state_q == Idle && s_tvalid_i) begin
      type_q <= s_type_i;
      len_q  <= s_len_i;
      left_q <= s_len_i;
    end else if (state_q == Payload && s_tvalid_i && tx_ready_i) begin
      left_q <= left_q - 16'd1;
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_ni && state_q inside {Type, LenLo, LenHi}) begin
      assert (s_type_i == type_q && s_len_i == len_q)
        else $error("%m: type or length changed before the payload");
    end
    if (rst_ni && state_q == Payload && s_tvalid_i && tx_ready_i) begin
      assert (s_tlast_i == (left_q == 16'd1))
        else $error("%m: payload tlast does not match LEN (%0d bytes left)", left_q);
    end
    if (rst_ni && state_q == Idle && s_tvalid_i) begin
      assert (s_len_i != 16'd0) else $error("%m: frame with an empty payload");
    end
  end
`endif

endmodule
