// ice40_icebreaker_top: iCEBreaker (iCE40 UP5K, sg48) wrapper of ib_ca_board.
// The 12 MHz oscillator (pin 35) drives SB_PLL40_PAD up to 24 MHz, so the
// 3 Mbaud UART on the FTDI's second channel is exactly 8 clocks per bit (the
// receiver's minimum); the iCE40's slow fabric is why the clock is no higher. The
// reset is held until the PLL locks (plus 15 clocks). LEDs: green (LEDG_N,
// active low) and PMOD2 LED1 = link up, LED2 = SMP seen, red (LEDR_N) and
// LED3 = drop; LED4/LED5 show UART RX/TX line activity. The SB_PLL40_PAD
// primitive exists only under synthesis: Verilator lints ib_ca_board, and this
// wrapper is checked by yosys (make synth). Pins: constraints/icebreaker.pcf.
module ice40_icebreaker_top #(
  // port datapath width: a byte per clock, 24 Mbyte/s against the UART's
  // 0.3 Mbyte/s; DataW 32 takes 162 % of the UP5K's logic cells
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

  localparam int unsigned ClkHz = 24_000_000;

  logic clk, pll_lock;

`ifdef SYNTHESIS
  // 12 MHz * (DIVF + 1) / 2^DIVQ / (DIVR + 1) = 12 * 64 / 32 = 24 MHz,
  // VCO 768 MHz (the values `icepll -i 12 -o 24` prints; yowasp-icepll).
  SB_PLL40_PAD #(
    .FEEDBACK_PATH("SIMPLE"),
    .DIVR         (4'b0000),
    .DIVF         (7'b0111111),
    .DIVQ         (3'b101),
    .FILTER_RANGE (3'b001)
  ) u_pll (
    .PACKAGEPIN   (clk_12mhz_i),
    .PLLOUTCORE   (),
    .PLLOUTGLOBAL (clk),
    .EXTFEEDBACK  (1'b0),
    .DYNAMICDELAY (8'h00),
    .LOCK         (pll_lock),
    .BYPASS       (1'b0),
    .RESETB       (1'b1),
    .LATCHINPUTVALUE(1'b0),
    .SDO          (),
    .SDI          (1'b0),
    .SCLK         (1'b0)
  );
`else
  // Simulation / lint stand-in: no PLL (the clock is not 24 MHz here).
  assign clk      = clk_12mhz_i;
  assign pll_lock = 1'b1;
`endif

  // Power-on reset: flip-flops start at 0 after configuration.
  logic [3:0] rst_q;
  always_ff @(posedge clk) begin
    if (!pll_lock) rst_q <= '0;
    else           rst_q <= {rst_q[2:0], 1'b1};
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
