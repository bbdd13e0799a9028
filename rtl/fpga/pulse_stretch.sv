// pulse_stretch: holds its output high after an input pulse (so a one-cycle
// event is visible on an LED) until Ticks tick_i pulses have passed since the
// last input pulse: with a tick every P clocks from a shared prescaler, for
// (Ticks - 1) * P .. Ticks * P clocks. A tick in the pulse's own cycle does
// not count.
module pulse_stretch #(
  parameter int unsigned Ticks = 16  // ticks the output stays high after a pulse, >= 1
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic tick_i,
  input  logic pulse_i,
  output logic out_o
);

  localparam int unsigned CntW = $clog2(Ticks + 1);

  if (Ticks < 1) begin : gen_ticks_check
    $fatal(1, "%m: Ticks must be >= 1, got %0d", Ticks);
  end

  logic [CntW-1:0] cnt_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cnt_q <= '0;
    end else if (pulse_i) begin
      cnt_q <= CntW'(Ticks);
    end else if (tick_i && cnt_q != '0) begin
      cnt_q <= cnt_q - CntW'(1);
    end
  end

  assign out_o = cnt_q != '0;

endmodule
