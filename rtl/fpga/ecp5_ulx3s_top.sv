// ecp5_ulx3s_top: ULX3S (ECP5 LFE5U-85F, CABGA381) wrapper of ib_ca_board.
// The 25 MHz oscillator (G2) drives EHXPLLL up to 45 MHz, so the 3 Mbaud UART
// on the FT231X is exactly 15 clocks per bit. 45 MHz, not faster: the ULX3S
// carries the speed-6 part, where this board top places and routes at about
// 60 MHz, and the build must keep >= 20 % timing margin (make synth). Reset
// is held until the PLL locks. LEDs (active high): led[0] link up, led[1] SMP
// seen, led[2] drop. wifi_gpio0 is held high so the ESP32 does not take over
// the board. The EHXPLLL primitive exists only
// under synthesis: Verilator lints ib_ca_board, and this wrapper is checked by
// yosys (make synth). Pins: constraints/ulx3s.lpf.
module ecp5_ulx3s_top #(
  parameter int unsigned DataW = 32  // port datapath width
) (
  input  logic       clk_25mhz,   // G2
  input  logic       ftdi_txd,    // M1: FTDI -> FPGA
  output logic       ftdi_rxd,    // L4: FPGA -> FTDI
  output logic [7:0] led,         // B2 C2 C1 D2 D1 E2 E1 H3
  output logic       wifi_gpio0   // L2
);

  localparam int unsigned ClkHz = 45_000_000;

  logic clk, pll_lock;

`ifdef SYNTHESIS
  // 25 MHz / CLKI_DIV 5 = 5 MHz PFD; * CLKFB_DIV 9 = 45 MHz; VCO = 45 MHz *
  // CLKOP_DIV 13 = 585 MHz (400..800 MHz); CPHASE = (CLKOP_DIV - 1) / 2.
  // These are the values `ecppll -i 25 -o 45` writes (yowasp-ecppll).
  (* FREQUENCY_PIN_CLKI = "25" *)
  (* FREQUENCY_PIN_CLKOP = "45" *)
  (* ICP_CURRENT = "12" *) (* LPF_RESISTOR = "8" *) (* MFG_ENABLE_FILTEROPAMP = "1" *)
  (* MFG_GMCREF_SEL = "2" *)
  EHXPLLL #(
    .PLLRST_ENA      ("DISABLED"),
    .INTFB_WAKE      ("DISABLED"),
    .STDBY_ENABLE    ("DISABLED"),
    .DPHASE_SOURCE   ("DISABLED"),
    .OUTDIVIDER_MUXA ("DIVA"),
    .OUTDIVIDER_MUXB ("DIVB"),
    .OUTDIVIDER_MUXC ("DIVC"),
    .OUTDIVIDER_MUXD ("DIVD"),
    .CLKI_DIV        (5),
    .CLKOP_ENABLE    ("ENABLED"),
    .CLKOP_DIV       (13),
    .CLKOP_CPHASE    (6),
    .CLKOP_FPHASE    (0),
    .FEEDBK_PATH     ("CLKOP"),
    .CLKFB_DIV       (9)
  ) u_pll (
    .RST         (1'b0),
    .STDBY       (1'b0),
    .CLKI        (clk_25mhz),
    .CLKOP       (clk),
    .CLKFB       (clk),
    .CLKINTFB    (),
    .PHASESEL0   (1'b0),
    .PHASESEL1   (1'b0),
    .PHASEDIR    (1'b1),
    .PHASESTEP   (1'b1),
    .PHASELOADREG(1'b1),
    .PLLWAKESYNC (1'b0),
    .ENCLKOP     (1'b0),
    .LOCK        (pll_lock)
  );
`else
  // Simulation / lint stand-in: no PLL (the clock is not 45 MHz here).
  assign clk      = clk_25mhz;
  assign pll_lock = 1'b1;
`endif

  // Power-on reset: flip-flops start at 0 after configuration.
  logic [3:0] rst_q;
  always_ff @(posedge clk) begin
    if (!pll_lock) rst_q <= '0;
    else           rst_q <= {rst_q[2:0], 1'b1};
  end

  logic [2:0] board_led;

  ib_ca_board #(
    .ClkHz      (ClkHz),
    .Baud       (3_000_000),
    .DataW      (DataW),
    .FifoMetaRam(1'b0)  // LUT RAM: the block RAM's clock-to-out would limit Fmax
  ) u_board (
    .clk_i    (clk),
    .rst_ni   (rst_q[3]),
    .uart_rx_i(ftdi_txd),
    .uart_tx_o(ftdi_rxd),
    .led_o    (board_led)
  );

  assign led        = {5'b0, board_led};
  assign wifi_gpio0 = 1'b1;

endmodule
