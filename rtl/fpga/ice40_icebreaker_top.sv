// ice40_icebreaker_top: iCEBreaker (iCE40 UP5K, sg48) wrapper of ib_ca_board.
// The design runs on the board's 12 MHz oscillator (pin 35, no PLL), so the
// 3 Mbaud UART on the FTDI's second channel is exactly 4 clocks per bit.
// The reset is held for the first 4 clocks after configuration (the
// flip-flops start at 0). LEDs: green (LEDG_N, active low) and PMOD2 LED1 =
// link up, LED2 = SMP seen, red (LEDR_N) and LED3 = drop; LED4/LED5 show
// UART RX/TX line activity. Verilator lints ib_ca_board; this wrapper is
// checked by yosys (make synth). Pins: constraints/icebreaker.pcf.
module ice40_icebreaker_top #(
  // port datapath width: a byte per clock, 12 Mbyte/s against the UART's
  // 0.3 Mbyte/s; DataW 32 does not fit the UP5K
  parameter int unsigned DataW = 8,
  // GSI receive checks: off (the board frames no data-VL packets to the
  // host, they only feed the GSI counters; 635 logic cells)
  parameter bit          GsiChk = 1'b0
) (
  input  logic       clk_12mhz_i,  // pin 35
  input  logic       uart_rx_i,    // pin 6: FTDI -> FPGA
  output logic       uart_tx_o,    // pin 9: FPGA -> FTDI
  output logic       ledr_n_o,     // pin 11, red, active low
  output logic       ledg_n_o,     // pin 37, green, active low
  output logic [4:0] led_pmod_o    // PMOD2 LED1..LED5, active high
);

  // The design runs on the 12 MHz oscillator itself (a global buffer input):
  // 3 Mbaud is 4 clocks per bit (uart_rx's minimum), and the UP5K, nearly
  // full, does not close timing at 24 MHz (23.5-24 MHz Fmax, 1.2 x needs
  // 28.8).
  localparam int unsigned ClkHz = 12_000_000;

  logic clk;
  assign clk = clk_12mhz_i;

  // Power-on reset: the iCE40's flip-flops start at 0 after configuration;
  // the initial value says so to yosys (without it, an undefined start lets
  // it take rst_q as constant 1 and drop every reset). This register is the
  // reset itself, so it cannot have one: PROCASSINIT is waived for it.
  /* verilator lint_off PROCASSINIT */
  logic [3:0] rst_q = 4'b0000;
  /* verilator lint_on PROCASSINIT */
  always_ff @(posedge clk) begin
    rst_q <= {rst_q[2:0], 1'b1};
  end

  logic [2:0] led;

  ib_ca_board #(
    .ClkHz(ClkHz),
    .Baud  (3_000_000),
    .DataW (DataW),
    .GsiChk(GsiChk)
  ) u_board (
    .clk_i    (clk),
    .rst_ni   (rst_q[3]),
    .uart_rx_i,
    .uart_tx_o,
    .led_o    (led)
  );

  assign ledg_n_o   = !led[0];
  assign ledr_n_o   = !led[2];
  assign led_pmod_o = {!uart_tx_o, !uart_rx_i, led};

endmodule
