// uart_tx: 8N1 UART transmitter. Takes a byte on a valid/ready handshake
// (ready while idle) and sends start bit, eight data bits LSB first and a
// stop bit, each ClkHz/Baud clocks long.
module uart_tx #(
  parameter int unsigned ClkHz = 48_000_000,  // clk_i frequency
  parameter int unsigned Baud  = 3_000_000    // bit rate; ClkHz/Baud >= 2
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic [7:0] data_i,
  input  logic       valid_i,
  output logic       ready_o,
  output logic       tx_o     // serial output, idle high (registered)
);

  localparam int unsigned ClksPerBit = (ClkHz + Baud / 2) / Baud;
  localparam int unsigned CntW       = $clog2(ClksPerBit + 1);

  if (ClksPerBit < 2) begin : gen_div_check
    $fatal(1, "%m: ClkHz/Baud must be >= 2, got %0d", ClksPerBit);
  end

  logic [9:0]      shift_q, shift_d;  // {stop, data, start}, LSB goes out first
  logic [3:0]      bits_q, bits_d;    // bits left to send, 0 = idle
  logic [CntW-1:0] cnt_q, cnt_d;
  logic            tx_d;

  assign ready_o = bits_q == 4'd0;

  always_comb begin
    shift_d = shift_q;
    bits_d  = bits_q;
    cnt_d   = cnt_q;
    tx_d    = tx_o;
    if (bits_q == 4'd0) begin
      tx_d = 1'b1;
      if (valid_i) begin
        shift_d = {1'b1, data_i, 1'b0};
        bits_d  = 4'd10;
        cnt_d   = '0;
      end
    end else begin
      tx_d  = shift_q[0];
      cnt_d = cnt_q + CntW'(1);
      if (32'(cnt_q) == ClksPerBit - 1) begin
        cnt_d   = '0;
        shift_d = {1'b1, shift_q[9:1]};
        bits_d  = bits_q - 4'd1;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      shift_q <= '1;
      bits_q  <= '0;
      cnt_q   <= '0;
      tx_o    <= 1'b1;
    end else begin
      shift_q <= shift_d;
      bits_q  <= bits_d;
      cnt_q   <= cnt_d;
      tx_o    <= tx_d;
    end
  end

endmodule
