// ib_axis_checker: simulation-only AXI-Stream protocol checker. Asserts that
// tdata/tkeep/tlast (and tvalid) hold while tvalid && !tready, that tkeep of a
// valid beat is non-zero and contiguous from bit 0, and that every beat but
// the tlast one is full. The whole body is left out under SYNTHESIS.
module ib_axis_checker #(
  parameter int unsigned DataW     = 64,  // tdata width in bits (multiple of 8)
  parameter int unsigned HasReady  = 1,   // 0: stream has no tready (tready_i ignored)
  parameter int unsigned KeepCheck = 1,   // 0: no tkeep checks (MAD streams without tkeep)
  localparam int unsigned DataB    = DataW / 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic [DataW-1:0] tdata_i,
  input  logic [DataB-1:0] tkeep_i,
  input  logic             tvalid_i,
  input  logic             tready_i,
  input  logic             tlast_i
);

`ifndef SYNTHESIS
  if (DataW < 8 || DataW % 8 != 0) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be a positive multiple of 8, got %0d", DataW);
  end

  logic             past_ok_q;     // one cycle out of reset has passed
  logic             past_stall_q;  // previous cycle: tvalid && !tready
  logic [DataW-1:0] past_data_q;
  logic [DataB-1:0] past_keep_q;
  logic             past_last_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      past_ok_q    <= 1'b0;
      past_stall_q <= 1'b0;
    end else begin
      past_ok_q    <= 1'b1;
      past_stall_q <= tvalid_i & ~tready_i;
    end
    past_data_q <= tdata_i;
    past_keep_q <= tkeep_i;
    past_last_q <= tlast_i;
  end

  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      if (HasReady != 0 && past_ok_q && past_stall_q) begin
        assert (tvalid_i)
          else $error("%m: tvalid dropped while tready was low");
        assert (tdata_i == past_data_q)
          else $error("%m: tdata changed while tvalid && !tready");
        assert (tlast_i == past_last_q)
          else $error("%m: tlast changed while tvalid && !tready");
        assert (KeepCheck == 0 || tkeep_i == past_keep_q)
          else $error("%m: tkeep changed while tvalid && !tready");
      end
      if (KeepCheck != 0 && tvalid_i) begin
        assert (tkeep_i != '0)
          else $error("%m: tkeep is zero on a valid beat");
        assert ((tkeep_i & (tkeep_i + DataB'(1))) == '0)
          else $error("%m: tkeep %h not contiguous from bit 0", tkeep_i);
        assert (tlast_i || tkeep_i == '1)
          else $error("%m: tkeep %h not all ones on a beat without tlast", tkeep_i);
      end
    end
  end
`else
  // Nothing to check in synthesis; keep the ports referenced.
  logic unused;
  assign unused = ^{clk_i, rst_ni, tdata_i, tkeep_i, tvalid_i, tready_i, tlast_i,
                   1'(HasReady), 1'(KeepCheck)};
`endif

endmodule
