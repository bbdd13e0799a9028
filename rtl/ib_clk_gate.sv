// ib_clk_gate: the clock-gate cell of a port (docs/fabric.md "Clock
// gating"). In simulation it is the latch-and-AND cell of gated ASIC clock
// trees: en_i is sampled by a latch that is open while clk_i is low, so the
// gated clock gclk_o = clk_i & en_l can neither glitch nor clip a high
// phase, and a domain whose en_i was low in the low phase sees no edge.
// Enable = 0, and every synthesis (FPGA: no clock gating in the fabric's
// routing), build a pass-through: gclk_o = clk_i. This cell is the one
// place that decides; a gated and a pass-through build behave the same
// cycle by cycle as long as en_i is high in every cycle in which the domain
// would change (the callers' "may change" condition), which the unit
// harnesses check by running both.
module ib_clk_gate #(
  parameter bit Enable = 1'b1  // 1: gate in simulation, 0: pass-through
) (
  input  logic clk_i,
  input  logic en_i,   // the domain may change in this cycle
  output logic gclk_o
);

`ifdef SYNTHESIS
  assign gclk_o = clk_i;
  logic unused_en;
  assign unused_en = en_i;
`else
  if (Enable) begin : gen_gate
    logic en_l;
    // The one intended latch of the design: transparent while clk_i is low.
    /* verilator lint_off LATCH */
    always_latch begin
      if (!clk_i) en_l = en_i;
    end
    /* verilator lint_on LATCH */
    assign gclk_o = clk_i & en_l;
  end else begin : gen_pass
    assign gclk_o = clk_i;
    logic unused_en;
    assign unused_en = en_i;
  end
`endif

endmodule
