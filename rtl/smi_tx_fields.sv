// smi_tx_fields: MAD field pick-up of the SMI send engines (smi_sq,
// sw_smi_sq). From the selected source's beats, as smi_tx_ctrl takes them,
// it keeps the MAD fields the directed-route send rules need
// (ib_pkg::smi_tx_mad_t): the class, D, hop pointer and hop count, DrSLID and
// DrDLID (whole and as 0xFF compare flags), InitialPath[1] as a compare flag
// with cmp_i, and one path byte at a MAD offset the engine computes from the
// fields taken before (path_moff_i, registered here: ReturnPath[hop_cnt] on
// a CA, the egress entry on a switch), as a byte and as a compare flag with
// cmp_i. Each engine reads what its rules need; synthesis drops the rest.
// MAD byte m arrives in lane m % DataB of packet beat
// HdrBeats + m / DataB - Lag (DataW 8, Lag = 1: a beat early, smi_tx_emit),
// so a field is picked by comparing the beat index with a constant.
module smi_tx_fields
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 8, 32, 64 or 128
  localparam int unsigned DataB    = DataW / 8,
  localparam int unsigned PktBeats = SmpPktBytes / DataB,
  localparam int unsigned KW       = $clog2(PktBeats)
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // the send FSM (smi_tx_ctrl)
  input  logic [KW-1:0]    k_i,          // packet beat index
  input  logic [DataW-1:0] src_data_i,   // the selected source's beat
  input  logic             take_i,       // ... is taken
  input  logic             clr_i,        // a packet starts: every field reads 0
  // the path byte: its MAD offset (from mad_q_o), and the compare port
  input  logic [8:0]       path_moff_i,
  input  logic [7:0]       cmp_i,
  // fields with the current beat (as taken at the end of the cycle), and
  // those taken before it
  output smi_tx_mad_t      mad_o,
  output smi_tx_mad_t      mad_q_o
);

  localparam int unsigned Lag      = (DataB == 1) ? 1 : 0;
  localparam int unsigned HdrBeats = MadOffset / DataB;

  // Returns {hit, byte} of MAD byte m in beat `beat`.
  function automatic logic [8:0] pick(logic [KW-1:0] beat, logic [DataW-1:0] data,
                                      int unsigned m);
    int unsigned lane;
    lane = m % DataB;
    return {32'(beat) == HdrBeats + m / DataB - Lag, data[8*lane +: 8]};
  endfunction

  smi_tx_mad_t   f_q;
  logic [KW-1:0] path_k_q;     // beat and lane of the path byte, from
  logic [7:0]    path_lane_q;  // path_moff_i, registered

  always_comb begin
    logic [8:0] p;
    mad_o = f_q;
    p = pick(k_i, src_data_i, MbMgmtClass);
    if (p[8]) mad_o.mgmt_class = p[7:0];
    p = pick(k_i, src_data_i, MbStatus);
    if (p[8]) mad_o.dir = p[7];
    p = pick(k_i, src_data_i, MbHopPtr);
    if (p[8]) mad_o.hop_ptr = p[7:0];
    p = pick(k_i, src_data_i, MbHopCnt);
    if (p[8]) mad_o.hop_cnt = p[7:0];
    p = pick(k_i, src_data_i, MbDrSlid);
    if (p[8]) {mad_o.dr_slid[15:8], mad_o.dr_slid_ff[1]} = {p[7:0], &p[7:0]};
    p = pick(k_i, src_data_i, MbDrSlid + 1);
    if (p[8]) {mad_o.dr_slid[7:0], mad_o.dr_slid_ff[0]} = {p[7:0], &p[7:0]};
    p = pick(k_i, src_data_i, MbDrDlid);
    if (p[8]) {mad_o.dr_dlid[15:8], mad_o.dr_dlid_ff[1]} = {p[7:0], &p[7:0]};
    p = pick(k_i, src_data_i, MbDrDlid + 1);
    if (p[8]) {mad_o.dr_dlid[7:0], mad_o.dr_dlid_ff[0]} = {p[7:0], &p[7:0]};
    p = pick(k_i, src_data_i, MbInitialPath + 1);
    if (p[8]) mad_o.ip1_port = p[7:0] == cmp_i;
    // the path byte; its offset comes from an earlier beat
    if (k_i == path_k_q) begin
      for (int unsigned j = 0; j < DataB; j++) begin
        if (32'(path_lane_q) == j) begin
          mad_o.path      = src_data_i[8*j +: 8];
          mad_o.path_port = src_data_i[8*j +: 8] == cmp_i;
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      path_k_q    <= '1;
      path_lane_q <= '0;
    end else begin
      path_k_q    <= KW'(HdrBeats - Lag) + KW'(path_moff_i / 9'(DataB));
      path_lane_q <= 8'(path_moff_i % 9'(DataB));
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      f_q <= '0;
    end else if (clr_i) begin
      f_q <= '0;
    end else if (take_i) begin
      f_q <= mad_o;
    end
  end

  assign mad_q_o = f_q;

endmodule
