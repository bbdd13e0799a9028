// smi_port_demux: routes one shared MAD stream (SMA TX, SM TX or trap TX) to
// the send engine of port in_port_i (1..NumPorts) of a multiport CA. Only
// the handshake is switched (tvalid out, tready back): the caller broadcasts
// tdata and the meta to every port. A packet whose tag is out of range (0 or
// > NumPorts) is taken at full rate (tready 1) and dropped whole, with one
// ev_bad_port_o pulse at its tlast handshake. The tag, like the meta, must be
// stable for the whole packet (asserted).
module smi_port_demux #(
  parameter int unsigned NumPorts = 2   // output streams, 1..254
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  // shared input (handshake and tag)
  input  logic                in_tvalid_i,
  input  logic                in_tlast_i,
  output logic                in_tready_o,
  input  logic [7:0]          in_port_i,
  // port p at index p-1
  output logic [NumPorts-1:0] out_tvalid_o,
  input  logic [NumPorts-1:0] out_tready_i,
  // event pulse: a packet with an out-of-range tag was dropped
  output logic                ev_bad_port_o
);

  if (NumPorts < 1 || NumPorts > 254) begin : gen_ports_check
    $fatal(1, "%m: NumPorts must be 1..254, got %0d", NumPorts);
  end

  logic bad;  // tag out of range: drop

  always_comb begin
    bad          = (in_port_i == 8'd0) || (32'(in_port_i) > NumPorts);
    out_tvalid_o = '0;
    in_tready_o  = 1'b1;
    for (int unsigned p = 1; p <= NumPorts; p++) begin
      if (32'(in_port_i) == p) begin
        out_tvalid_o[p-1] = in_tvalid_i;
        in_tready_o       = out_tready_i[p-1];
      end
    end
  end

  assign ev_bad_port_o = in_tvalid_i && bad && in_tlast_i;  // tready is 1 when bad

`ifndef SYNTHESIS
  // The tag of a packet is fixed from its first beat to its tlast handshake
  // (beats may have idle cycles between them); a stalled beat stays valid.
  logic       pkt_q;    // a beat of the packet has been presented, tlast not taken
  logic       stall_q;  // previous cycle: tvalid && !tready
  logic [7:0] port_q;   // the packet's tag
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      pkt_q   <= 1'b0;
      stall_q <= 1'b0;
      port_q  <= '0;
    end else begin
      stall_q <= in_tvalid_i && !in_tready_o;
      if (in_tvalid_i) begin
        pkt_q  <= !(in_tready_o && in_tlast_i);
        port_q <= in_port_i;
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      if (stall_q) begin
        assert (in_tvalid_i)
          else $error("%m: tvalid dropped while stalled");
      end
      if (pkt_q && in_tvalid_i) begin
        assert (in_port_i == port_q)
          else $error("%m: port tag changed inside a packet (%0d -> %0d)", port_q, in_port_i);
      end
    end
  end
`endif

endmodule
