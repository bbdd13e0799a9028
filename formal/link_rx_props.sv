// link_rx_props: formal harness of ib_link_rx (wire RX -> VL15 / data-VL
// streams, no backpressure). Free wire input (idle cycles anywhere, tkeep as
// ib_axis_checker requires: the rules ib_link_rx asserts on its input);
// reset in cycle 0, free after. Proven (bounded, yosys-smtbmc):
//   - every input beat comes out one cycle later on exactly one of the two
//     outputs, unchanged (tdata, tkeep, tlast): nothing lost, nothing made up;
//   - all beats of a packet leave on the same output (no partial packet on
//     either stream);
//   - tlast count: tlast in = VL15 tlast out + data tlast out + the one in
//     the register stage;
//   - ev_pkt_o exactly with each tlast out; tuser on a tlast beat exactly
//     when one error event (len, lver, lnh, vcrc) pulses, at most one does,
//     and none pulses without a tlast beat;
//   - both outputs obey ib_axis_checker (HasReady = 0: the tkeep rules) and
//     ib_link_rx's own assertions hold.
module link_rx_props #(
  parameter int unsigned DataW = 32,
  localparam int unsigned DataB = DataW / 8
) (
  input logic             clk_i,
  input logic             rst_ni,
  input logic [DataW-1:0] rx_tdata_i,
  input logic [DataB-1:0] rx_tkeep_i,
  input logic             rx_tvalid_i,
  input logic             rx_tlast_i
);

  localparam int unsigned CntW = 8;

  logic [DataW-1:0] v_tdata, d_tdata;
  logic [DataB-1:0] v_tkeep, d_tkeep;
  logic             v_tvalid, v_tlast, v_tuser, d_tvalid, d_tlast, d_tuser;
  logic             ev_pkt, ev_data_pkt, ev_len, ev_lver, ev_lnh, ev_vcrc;

  ib_link_rx #(.DataW(DataW)) u_dut (
    .clk_i,
    .rst_ni,
    .rx_tdata_i,
    .rx_tkeep_i,
    .rx_tvalid_i,
    .rx_tlast_i,
    .vl15_tdata_o (v_tdata),
    .vl15_tkeep_o (v_tkeep),
    .vl15_tvalid_o(v_tvalid),
    .vl15_tlast_o (v_tlast),
    .vl15_tuser_o (v_tuser),
    .data_tdata_o (d_tdata),
    .data_tkeep_o (d_tkeep),
    .data_tvalid_o(d_tvalid),
    .data_tlast_o (d_tlast),
    .data_tuser_o (d_tuser),
    .ev_pkt_o     (ev_pkt),
    .ev_data_pkt_o(ev_data_pkt),
    .ev_len_err_o (ev_len),
    .ev_lver_err_o(ev_lver),
    .ev_lnh_err_o (ev_lnh),
    .ev_vcrc_err_o(ev_vcrc)
  );

  ib_axis_checker #(.DataW(DataW), .HasReady(0)) u_v_check (
    .clk_i, .rst_ni, .tdata_i(v_tdata), .tkeep_i(v_tkeep), .tvalid_i(v_tvalid),
    .tready_i(1'b1), .tlast_i(v_tlast)
  );
  ib_axis_checker #(.DataW(DataW), .HasReady(0)) u_d_check (
    .clk_i, .rst_ni, .tdata_i(d_tdata), .tkeep_i(d_tkeep), .tvalid_i(d_tvalid),
    .tready_i(1'b1), .tlast_i(d_tlast)
  );

  // ---------------------------------------------------------------------------
  // Assumptions
  // ---------------------------------------------------------------------------
  logic init_q = 1'b1;
  always_ff @(posedge clk_i) init_q <= 1'b0;

  always_comb begin
    if (init_q) begin
      assume (!rst_ni);
    end
    if (rx_tvalid_i) begin
      assume (rx_tkeep_i != '0);
      assume ((rx_tkeep_i & (rx_tkeep_i + DataB'(1))) == '0);
      assume (rx_tlast_i || rx_tkeep_i == '1);
    end
  end

  // ---------------------------------------------------------------------------
  // Model: the input beat of the previous cycle, packet counts
  // ---------------------------------------------------------------------------
  logic             p_valid_q, p_last_q;
  logic [DataW-1:0] p_data_q;
  logic [DataB-1:0] p_keep_q;
  logic             o_mid_q;   // an output packet is open (beats out, no tlast yet)
  logic             o_vl15_q;  // ... on the VL15 output
  logic [CntW-1:0]  n_in_q, n_v_q, n_d_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      p_valid_q <= 1'b0;
      p_last_q  <= 1'b0;
      o_mid_q   <= 1'b0;
      n_in_q    <= '0;
      n_v_q     <= '0;
      n_d_q     <= '0;
    end else begin
      p_valid_q <= rx_tvalid_i;
      p_last_q  <= rx_tvalid_i & rx_tlast_i;
      if (rx_tvalid_i && rx_tlast_i) n_in_q <= n_in_q + CntW'(1);
      if (v_tvalid && v_tlast) n_v_q <= n_v_q + CntW'(1);
      if (d_tvalid && d_tlast) n_d_q <= n_d_q + CntW'(1);
      if (v_tvalid || d_tvalid) begin
        o_mid_q  <= ~(v_tvalid ? v_tlast : d_tlast);
        o_vl15_q <= v_tvalid;
      end
    end
    if (rx_tvalid_i) begin
      p_data_q <= rx_tdata_i;
      p_keep_q <= rx_tkeep_i;
    end
  end

  logic o_last;
  assign o_last = (v_tvalid & v_tlast) | (d_tvalid & d_tlast);

  always_comb begin
    if (!init_q && rst_ni) begin
      // each beat one cycle later on exactly one output, unchanged
      assert (!(v_tvalid && d_tvalid));
      assert ((v_tvalid || d_tvalid) == p_valid_q);
      if (v_tvalid) begin
        assert (v_tdata == p_data_q && v_tkeep == p_keep_q && v_tlast == p_last_q);
      end
      if (d_tvalid) begin
        assert (d_tdata == p_data_q && d_tkeep == p_keep_q && d_tlast == p_last_q);
      end
      // a packet's beats stay on one output
      if (o_mid_q && (v_tvalid || d_tvalid)) begin
        assert (v_tvalid == o_vl15_q);
      end
      // tlast count
      assert (n_in_q == n_v_q + n_d_q + CntW'(p_last_q));
      // events with the tlast beat; tuser = exactly one error event
      assert (ev_pkt == o_last);
      assert ($onehot0({ev_len, ev_lver, ev_lnh, ev_vcrc}));
      assert ((ev_len | ev_lver | ev_lnh | ev_vcrc) ==
              (o_last && (v_tvalid ? v_tuser : d_tuser)));
      assert (!ev_data_pkt || (d_tvalid && d_tlast && !d_tuser));
    end
  end

endmodule
