// smi_rx_dispatch: reads MADs out of the VL15 RX ib_pkt_fifo, applies the
// directed-route result carried in the meta (MAD byte 6 := hop_ptr for class
// 0x81, MAD byte 192+rp_idx := rp_val when rp_we) and hands the packet to the
// SMA (to_sm = 0) or the SM (to_sm = 1) interface. Patch and demux are
// combinational: no added latency. Pulses ev_to_sma_o / ev_to_sm_o on the
// tlast handshake.
//
// SM receive queue: a MAD for the SM is delivered only if a receive WQE is
// posted (sm_rq_avail_i), else it is read out at full rate (rd_tready_o 1,
// never a stall for the packets behind it) and discarded whole, with one
// ev_sm_drop_o pulse at its tlast handshake. The choice is made in the cycle
// a packet's first beat is first presented and held to its tlast: a packet
// that has started on sm_rx is finished, one being discarded stays
// discarded. sm_rq_take_o pulses in that first cycle for each MAD that will
// be delivered (it consumes one WQE). Tie sm_rq_avail_i to 1 for an SM
// interface without a receive queue (flow control by sm_rx_tready_i only).
module smi_rx_dispatch
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 8, 32, 64 or 128
  localparam int unsigned DataB = DataW / 8
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // VL15 RX buffer read side
  input  logic [DataW-1:0]   rd_tdata_i,
  input  logic [DataB-1:0]   rd_tkeep_i,     // always all ones (MAD beats are full)
  input  logic               rd_tvalid_i,
  input  logic               rd_tlast_i,
  input  smi_rx_meta_t       rd_meta_i,
  output logic               rd_tready_o,
  // SMA RX interface
  output logic [DataW-1:0]   sma_rx_tdata_o,
  output logic               sma_rx_tvalid_o,
  output logic               sma_rx_tlast_o,
  input  logic               sma_rx_tready_i,
  output logic [15:0]        sma_rx_slid_o,
  output logic [15:0]        sma_rx_dlid_o,
  output logic [3:0]         sma_rx_sl_o,
  output logic [7:0]         sma_rx_port_o,
  output logic [7:0]         sma_rx_mgmt_class_o,
  output logic [6:0]         sma_rx_hop_ptr_o,
  output logic [6:0]         sma_rx_hop_cnt_o,
  // SM RX interface
  output logic [DataW-1:0]   sm_rx_tdata_o,
  output logic               sm_rx_tvalid_o,
  output logic               sm_rx_tlast_o,
  input  logic               sm_rx_tready_i,
  output logic [15:0]        sm_rx_slid_o,
  output logic [15:0]        sm_rx_dlid_o,
  output logic [3:0]         sm_rx_sl_o,
  output logic [7:0]         sm_rx_port_o,
  output logic [7:0]         sm_rx_mgmt_class_o,
  output logic [6:0]         sm_rx_hop_ptr_o,
  output logic [6:0]         sm_rx_hop_cnt_o,
  // SM receive queue
  input  logic               sm_rq_avail_i,  // a receive WQE is posted for the SM
  output logic               sm_rq_take_o,   // pulse: a MAD starts on sm_rx, one WQE used
  // event pulses
  output logic               ev_to_sma_o,
  output logic               ev_to_sm_o,
  output logic               ev_sm_drop_o    // an SM MAD discarded, no WQE (its tlast)
);

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end

  localparam int unsigned Beats = MadBytes / DataB;
  localparam int unsigned BeatW = $clog2(Beats);

  logic [BeatW-1:0] beat_q, beat_d;  // MAD beat index within the packet
  logic             open_q, open_d;  // the packet's first beat has been presented
  logic             drop_q, drop_d;  // the open packet is being discarded
  logic             drop;            // the beat presented now is discarded
  logic             take;
  logic [DataW-1:0] data;

  // Decided when a packet's first beat is first presented, held to its tlast.
  assign drop        = open_q ? drop_q : (rd_meta_i.to_sm && !sm_rq_avail_i);
  assign rd_tready_o = drop || (rd_meta_i.to_sm ? sm_rx_tready_i : sma_rx_tready_i);
  assign take        = rd_tvalid_i && rd_tready_o;

  always_comb begin
    logic [8:0] off;
    off  = '0;
    data = rd_tdata_i;
    for (int unsigned j = 0; j < DataB; j++) begin
      off = 9'(32'(beat_q) * DataB + j);
      if (rd_meta_i.mgmt_class == ClassSubnDr && off == 9'(MbHopPtr)) begin
        data[8*j +: 8] = {1'b0, rd_meta_i.hop_ptr};
      end
      if (rd_meta_i.rp_we && off == 9'(MbReturnPath) + {3'b0, rd_meta_i.rp_idx}) begin
        data[8*j +: 8] = rd_meta_i.rp_val;
      end
    end
  end

  always_comb begin
    beat_d = beat_q;
    open_d = open_q;
    drop_d = drop_q;
    if (take) begin
      beat_d = rd_tlast_i ? '0 : beat_q + BeatW'(1);
    end
    if (take && rd_tlast_i) begin
      open_d = 1'b0;
      drop_d = 1'b0;
    end else if (rd_tvalid_i) begin
      open_d = 1'b1;
      drop_d = drop;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      beat_q <= '0;
      open_q <= 1'b0;
      drop_q <= 1'b0;
    end else begin
      beat_q <= beat_d;
      open_q <= open_d;
      drop_q <= drop_d;
    end
  end

  assign sma_rx_tdata_o      = data;
  assign sma_rx_tvalid_o     = rd_tvalid_i && !rd_meta_i.to_sm;
  assign sma_rx_tlast_o      = rd_tlast_i;
  assign sma_rx_slid_o       = rd_meta_i.slid;
  assign sma_rx_dlid_o       = rd_meta_i.dlid;
  assign sma_rx_sl_o         = rd_meta_i.sl;
  assign sma_rx_port_o       = rd_meta_i.port;
  assign sma_rx_mgmt_class_o = rd_meta_i.mgmt_class;
  assign sma_rx_hop_ptr_o    = rd_meta_i.hop_ptr;
  assign sma_rx_hop_cnt_o    = rd_meta_i.hop_cnt;

  assign sm_rx_tdata_o       = data;
  assign sm_rx_tvalid_o      = rd_tvalid_i && rd_meta_i.to_sm && !drop;
  assign sm_rx_tlast_o       = rd_tlast_i;
  assign sm_rx_slid_o        = rd_meta_i.slid;
  assign sm_rx_dlid_o        = rd_meta_i.dlid;
  assign sm_rx_sl_o          = rd_meta_i.sl;
  assign sm_rx_port_o        = rd_meta_i.port;
  assign sm_rx_mgmt_class_o  = rd_meta_i.mgmt_class;
  assign sm_rx_hop_ptr_o     = rd_meta_i.hop_ptr;
  assign sm_rx_hop_cnt_o     = rd_meta_i.hop_cnt;

  assign sm_rq_take_o = rd_tvalid_i && !open_q && rd_meta_i.to_sm && !drop;

  assign ev_to_sma_o  = take && rd_tlast_i && !rd_meta_i.to_sm;
  assign ev_to_sm_o   = take && rd_tlast_i && rd_meta_i.to_sm && !drop;
  assign ev_sm_drop_o = take && rd_tlast_i && drop;

`ifndef SYNTHESIS
  logic to_sm_q;  // destination of the packet presented last
  always_ff @(posedge clk_i) begin
    if (rd_tvalid_i) begin
      to_sm_q <= rd_meta_i.to_sm;
    end
  end

  always_ff @(posedge clk_i) begin
    if (rst_ni && rd_tvalid_i) begin
      assert (rd_tkeep_i == '1)
        else $error("%m: partial MAD beat from the RX buffer");
      assert (rd_tlast_i == (32'(beat_q) == Beats - 1))
        else $error("%m: MAD of other than %0d beats", Beats);
      // only SM-bound MADs are ever discarded, and a WQE is used only when
      // one is posted (the owner's credit cannot underflow)
      assert (!drop || rd_meta_i.to_sm)
        else $error("%m: discarding a MAD for the SMA");
      assert (!sm_rq_take_o || sm_rq_avail_i)
        else $error("%m: receive WQE used with none posted");
      // a packet keeps its destination from its first beat to its tlast
      if (open_q) begin
        assert (rd_meta_i.to_sm == to_sm_q)
          else $error("%m: destination changed inside a packet");
      end
    end
  end
`endif

endmodule
