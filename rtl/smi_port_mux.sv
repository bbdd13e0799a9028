// smi_port_mux: joins the MAD streams (SMA RX or SM RX) of NumPorts CA ports
// into one shared stream. Round-robin between the ports at packet
// boundaries: the port after the last granted one goes first; a packet is
// never interleaved. The grant is combinational (no added latency, no
// buffering) and is held from the first cycle a packet's beat is presented
// until its tlast handshake, so the output (data and meta) is stable while
// tvalid && !tready whenever the inputs are. The meta (slid, dlid, ...,
// including the port number) travels unchanged with the data.
module smi_port_mux #(
  parameter int unsigned DataW    = 64,  // MAD stream width in bits: 32, 64 or 128
  parameter int unsigned NumPorts = 2,   // input streams, 1..254
  parameter int unsigned MetaW    = 66   // per-packet sideband bits
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  // port p-1 at index p-1 of each packed vector
  input  logic [NumPorts*DataW-1:0] in_tdata_i,
  input  logic [NumPorts*MetaW-1:0] in_meta_i,
  input  logic [NumPorts-1:0]       in_tvalid_i,
  input  logic [NumPorts-1:0]       in_tlast_i,
  output logic [NumPorts-1:0]       in_tready_o,
  // shared output
  output logic [DataW-1:0]          out_tdata_o,
  output logic [MetaW-1:0]          out_meta_o,
  output logic                      out_tvalid_o,
  output logic                      out_tlast_o,
  input  logic                      out_tready_i
);

  if (DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 32, 64 or 128, got %0d", DataW);
  end
  if (NumPorts < 1 || NumPorts > 254) begin : gen_ports_check
    $fatal(1, "%m: NumPorts must be 1..254, got %0d", NumPorts);
  end

  localparam int unsigned IdxW = (NumPorts > 1) ? $clog2(NumPorts) : 1;

  logic            lock_q, lock_d;  // a packet of port sel_q is being presented
  logic [IdxW-1:0] sel_q, sel_d;    // locked port
  logic [IdxW-1:0] rr_q, rr_d;      // last granted port
  logic [IdxW-1:0] grant;           // round-robin pick among the valid ports
  logic [IdxW-1:0] sel;             // port connected to the output this cycle

  // Round robin: the first valid port after rr_q (rr_q itself last).
  always_comb begin
    grant = rr_q;
    for (int unsigned k = NumPorts; k >= 1; k--) begin
      logic [IdxW-1:0] idx;
      idx = IdxW'((32'(rr_q) + k) % NumPorts);
      if (in_tvalid_i[idx]) begin
        grant = idx;
      end
    end
  end

  always_comb begin
    sel          = lock_q ? sel_q : grant;
    out_tdata_o  = in_tdata_i[32'(sel) * DataW +: DataW];
    out_meta_o   = in_meta_i[32'(sel) * MetaW +: MetaW];
    out_tvalid_o = in_tvalid_i[sel];
    out_tlast_o  = in_tlast_i[sel];
    in_tready_o  = '0;
    in_tready_o[sel] = out_tready_i;

    lock_d = lock_q;
    sel_d  = sel_q;
    rr_d   = rr_q;
    if (out_tvalid_o) begin
      if (!lock_q) begin
        rr_d  = sel;   // a new packet is granted
        sel_d = sel;
      end
      lock_d = !(out_tready_i && out_tlast_o);
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      lock_q <= 1'b0;
      sel_q  <= '0;
      rr_q   <= IdxW'(NumPorts - 1);  // port 1 first after reset
    end else begin
      lock_q <= lock_d;
      sel_q  <= sel_d;
      rr_q   <= rr_d;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      assert (32'(sel_q) < NumPorts && 32'(rr_q) < NumPorts)
        else $error("%m: port index out of range");
    end
  end
`endif

endmodule
