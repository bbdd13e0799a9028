// uart_rx: 8N1 UART receiver. The line goes through a two-flop synchroniser;
// a start bit is a falling edge that is still low half a bit later; every
// data bit and the stop bit are the majority of three samples around the bit
// centre (clock-rate oversampling, ClkHz/Baud samples per bit). Emits each
// byte as a one-cycle pulse; a low stop bit gives err_o instead of a byte.
module uart_rx #(
  parameter int unsigned ClkHz = 48_000_000,  // clk_i frequency
  parameter int unsigned Baud  = 3_000_000    // bit rate; ClkHz/Baud >= 4, within 2 %
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic       rx_i,     // asynchronous serial input, idle high
  output logic [7:0] data_o,   // received byte, valid with valid_o
  output logic       valid_o,  // one-cycle pulse: a byte with a good stop bit
  output logic       err_o     // one-cycle pulse: framing error (stop bit low)
);

  localparam int unsigned ClksPerBit = (ClkHz + Baud / 2) / Baud;
  localparam int unsigned CntW       = $clog2(ClksPerBit + 1);
  localparam int unsigned HalfBit    = ClksPerBit / 2;

  // 4 clocks per bit is the least that keeps the three samples (bit centre
  // +- 1 clock, after an edge seen 0..1 clock late) inside the bit at equal
  // rates, with room for 1.5 % of drift over a frame (the unit harness's
  // host sends 1.5 % slow); the iCEBreaker runs 3 Mbaud at 12 MHz so.
  if (ClksPerBit < 4) begin : gen_div_check
    $fatal(1, "%m: ClkHz/Baud must be >= 4, got %0d", ClksPerBit);
  end
  if ((ClksPerBit * Baud > ClkHz ? ClksPerBit * Baud - ClkHz : ClkHz - ClksPerBit * Baud) * 50
      > ClkHz) begin : gen_err_check
    $fatal(1, "%m: Baud %0d is more than 2 %% off ClkHz %0d / %0d", Baud, ClkHz, ClksPerBit);
  end

  typedef enum logic [1:0] {
    Idle,
    Start,
    Data,
    Stop
  } state_e;

  // two-flop synchroniser (reset high: the idle line level)
  logic sync1_q, sync2_q, rx_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      sync1_q <= 1'b1;
      sync2_q <= 1'b1;
      rx_q    <= 1'b1;
    end else begin
      sync1_q <= rx_i;
      sync2_q <= sync1_q;
      rx_q    <= sync2_q;
    end
  end

  state_e          state_q, state_d;
  logic [CntW-1:0] cnt_q, cnt_d;    // clocks into the current bit
  logic [2:0]      bit_q, bit_d;    // data bit index
  logic [7:0]      shift_q, shift_d;
  logic [1:0]      votes_q, votes_d;  // ones among the samples of this bit
  logic            valid_d, err_d;

  // cnt_q runs one clock behind the line (the state changes a clock after
  // the start edge is seen), so the bit centre is at cnt_q = HalfBit - 1: the
  // three samples are taken at HalfBit - 2 .. HalfBit.
  logic sample_now, bit_done, vote;
  assign sample_now = (32'(cnt_q) + 2 >= HalfBit) && (32'(cnt_q) <= HalfBit);
  assign bit_done   = 32'(cnt_q) == ClksPerBit - 1;
  assign vote       = (votes_q + {1'b0, sample_now & rx_q}) >= 2'd2;

  always_comb begin
    state_d = state_q;
    cnt_d   = cnt_q + CntW'(1);
    bit_d   = bit_q;
    shift_d = shift_q;
    votes_d = votes_q + {1'b0, sample_now & rx_q};
    valid_d = 1'b0;
    err_d   = 1'b0;
    unique case (state_q)
      Idle: begin
        cnt_d   = '0;
        votes_d = '0;
        if (!rx_q) state_d = Start;
      end
      Start: begin
        // a glitch shorter than half a bit is not a start bit
        if (32'(cnt_q) == HalfBit - 1 && rx_q) begin
          state_d = Idle;
        end else if (bit_done) begin
          state_d = Data;
          cnt_d   = '0;
          votes_d = '0;
          bit_d   = '0;
        end
      end
      Data: begin
        if (bit_done) begin
          shift_d = {vote, shift_q[7:1]};  // LSB first
          cnt_d   = '0;
          votes_d = '0;
          bit_d   = bit_q + 3'd1;
          if (bit_q == 3'd7) state_d = Stop;
        end
      end
      Stop: begin
        // decide at the bit centre, so the next start edge is never missed
        if (32'(cnt_q) == HalfBit) begin
          valid_d = vote;
          err_d   = !vote;
          state_d = Idle;
        end
      end
      default: state_d = Idle;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= Idle;
      cnt_q   <= '0;
      bit_q   <= '0;
      shift_q <= '0;
      votes_q <= '0;
      valid_o <= 1'b0;
      err_o   <= 1'b0;
    end else begin
      state_q <= state_d;
      cnt_q   <= cnt_d;
      bit_q   <= bit_d;
      shift_q <= shift_d;
      votes_q <= votes_d;
      valid_o <= valid_d;
      err_o   <= err_d;
    end
  end

  assign data_o = shift_q;

endmodule
