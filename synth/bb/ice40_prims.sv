// Black-box declarations of the iCE40 primitives the board wrapper uses, for
// yosys's read_slang front end (synthesis only; never simulated). Parameter
// and port lists follow yosys's techlibs/ice40/cells_sim.v; the bodies are
// empty so read_slang --empty-blackboxes imports them as cells whose
// parameters reach nextpnr.
module SB_PLL40_PAD #(
  parameter        FEEDBACK_PATH                  = "SIMPLE",
  parameter        DELAY_ADJUSTMENT_MODE_FEEDBACK = "FIXED",
  parameter        DELAY_ADJUSTMENT_MODE_RELATIVE = "FIXED",
  parameter        SHIFTREG_DIV_MODE              = 1'b0,
  parameter        FDA_FEEDBACK                   = 4'b0000,
  parameter        FDA_RELATIVE                   = 4'b0000,
  parameter        PLLOUT_SELECT                  = "GENCLK",
  parameter [3:0]  DIVR                           = 4'b0000,
  parameter [6:0]  DIVF                           = 7'b0000000,
  parameter [2:0]  DIVQ                           = 3'b000,
  parameter [2:0]  FILTER_RANGE                   = 3'b000,
  parameter        ENABLE_ICEGATE                 = 1'b0,
  parameter        TEST_MODE                      = 1'b0,
  parameter        EXTERNAL_DIVIDE_FACTOR         = 1
) (
  input        PACKAGEPIN,
  output       PLLOUTCORE,
  output       PLLOUTGLOBAL,
  input        EXTFEEDBACK,
  input  [7:0] DYNAMICDELAY,
  output       LOCK,
  input        BYPASS,
  input        RESETB,
  input        LATCHINPUTVALUE,
  output       SDO,
  input        SDI,
  input        SCLK
);
endmodule
