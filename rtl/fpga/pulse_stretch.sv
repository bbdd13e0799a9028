// pulse_stretch: holds its output high for Cycles clocks after the last input
// pulse (so a one-cycle event is visible on an LED).
module pulse_stretch #(
  parameter int unsigned Cycles = 3_000_000  // output high time after a pulse, >= 1
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic pulse_i,
  output logic out_o
);

  localparam int unsigned CntW = $clog2(Cycles + 1);

  if (Cycles < 1) begin : gen_cycles_check
    $fatal(1, "%m: Cycles must be >= 1, got %0d", Cycles);
  end

  logic [CntW-1:0] cnt_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cnt_q <= '0;
    end else if (pulse_i) begin
      cnt_q <= CntW'(Cycles);
    end else if (cnt_q != '0) begin
      cnt_q <= cnt_q - CntW'(1);
    end
  end

  assign out_o = cnt_q != '0;

endmodule
