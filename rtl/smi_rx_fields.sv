// smi_rx_fields: header field pick-up of the SMI receive engines (smi_rq,
// sw_smi_rq). Tracks the packet byte offset of each beat of the VL15 stream
// and takes the LRH/BTH/MAD header fields the checks and the directed-route
// rules need (ib_pkg::smi_rx_hdr_t) when their byte passes, and
// ReturnPath[hop_cnt] from the hop count taken earlier: as a byte and as a
// compare flag with rp_cmp_i. Every field holds until its byte comes again.
module smi_rx_fields
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 8, 32, 64 or 128
  localparam int unsigned DataB = DataW / 8
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  // VL15 stream (no ready)
  input  logic [DataW-1:0]     tdata_i,
  input  logic [DataB-1:0]     tkeep_i,
  input  logic                 tvalid_i,
  input  logic                 tlast_i,
  // compared with ReturnPath[hop_cnt] when it is taken (rp_port)
  input  logic [7:0]           rp_cmp_i,
  // fields taken so far
  output smi_rx_hdr_t          hdr_o,
  // packet byte offset of the current beat, and of the next one
  output logic [SmiRxPosW-1:0] pos_o,
  output logic [SmiRxPosW-1:0] pos_next_o
);

  localparam int unsigned PosW   = SmiRxPosW;
  localparam int unsigned RpPos  = MadOffset + MbReturnPath;  // ReturnPath[0]
  // Offsets saturate at PosMax, the last beat offset below 512. Every offset
  // compared (fields, ReturnPath[hop_cnt] <= 475, the ICRC at 288, the MAD
  // up to 292) is below PosMax (496 at DataB 16), so a beat past it matches
  // nothing, as it did not with 16-bit offsets.
  localparam int unsigned PosMax = (1 << PosW) - DataB;
  if (RpPos + 255 >= PosMax) begin : gen_pos_check
    $fatal(1, "%m: a compared offset reaches PosMax %0d", PosMax);
  end

  smi_rx_hdr_t     f_q, f_d;
  logic [PosW-1:0] pos_q, pos_d;
  logic [PosW-1:0] rp_beat_q;  // ReturnPath[hop_cnt]: offset of its beat,
  logic [7:0]      rp_lane_q;  // and its lane (from f_q.hop_cnt, a cycle late)

  // Every beat before the last is full (asserted below), so packet byte `off`
  // is lane off % DataB of the beat at offset off - off % DataB: a field is
  // picked up by comparing pos_q with a constant. Returns {hit, byte}.
  // The last byte of a fixed field (DrDLID's low byte; every other is
  // earlier).
  localparam int unsigned FixedEnd = MadOffset + MbDrDlid + 1;

  function automatic logic [8:0] pick(logic [PosW-1:0] pos, logic [DataW-1:0] data,
                                      logic [DataB-1:0] keep, int unsigned off);
    int unsigned lane;
    lane = off % DataB;
    return {pos == PosW'(off - lane) && keep[lane], data[8*lane +: 8]};
  endfunction

  always_comb begin
    logic [8:0] p;
    p     = '0;
    f_d   = f_q;
    pos_d = pos_q;
    // (The fixed fields end at packet byte FixedEnd: a beat starting after it
    // holds none, and a simulator skips their comparisons there.)
    if (tvalid_i && 32'(pos_q) <= FixedEnd) begin
      p = pick(pos_q, tdata_i, tkeep_i, PbLrhSlLnh);
      if (p[8]) begin f_d.sl = p[7:4]; f_d.lnh = p[1:0]; end
      p = pick(pos_q, tdata_i, tkeep_i, PbLrhDlid);
      if (p[8]) f_d.dlid[15:8] = p[7:0];
      p = pick(pos_q, tdata_i, tkeep_i, PbLrhDlid + 1);
      if (p[8]) f_d.dlid[7:0] = p[7:0];
      p = pick(pos_q, tdata_i, tkeep_i, PbLrhPktLen);
      if (p[8]) f_d.pktlen_ok[1] = p[2:0] == 3'(SmpPktLen >> 8);
      p = pick(pos_q, tdata_i, tkeep_i, PbLrhPktLen + 1);
      if (p[8]) f_d.pktlen_ok[0] = p[7:0] == 8'(SmpPktLen);
      p = pick(pos_q, tdata_i, tkeep_i, PbLrhSlid);
      if (p[8]) f_d.slid[15:8] = p[7:0];
      p = pick(pos_q, tdata_i, tkeep_i, PbLrhSlid + 1);
      if (p[8]) f_d.slid[7:0] = p[7:0];
      p = pick(pos_q, tdata_i, tkeep_i, PbBthOpcode);
      if (p[8]) f_d.opcode_ok = p[7:0] == OpUdSendOnly;
      p = pick(pos_q, tdata_i, tkeep_i, PbBthFlags);
      if (p[8]) f_d.tver_ok = p[3:0] == 4'd0;
      p = pick(pos_q, tdata_i, tkeep_i, PbBthDestQp);
      if (p[8]) f_d.destqp_zero[2] = p[7:0] == 8'd0;
      p = pick(pos_q, tdata_i, tkeep_i, PbBthDestQp + 1);
      if (p[8]) f_d.destqp_zero[1] = p[7:0] == 8'd0;
      p = pick(pos_q, tdata_i, tkeep_i, PbBthDestQp + 2);
      if (p[8]) f_d.destqp_zero[0] = p[7:0] == 8'd0;
      p = pick(pos_q, tdata_i, tkeep_i, MadOffset + MbBaseVersion);
      if (p[8]) f_d.base_ver_ok = p[7:0] == MadBaseVersion;
      p = pick(pos_q, tdata_i, tkeep_i, MadOffset + MbMgmtClass);
      if (p[8]) f_d.mgmt_class = p[7:0];
      p = pick(pos_q, tdata_i, tkeep_i, MadOffset + MbMethod);
      if (p[8]) f_d.method = p[7:0];
      p = pick(pos_q, tdata_i, tkeep_i, MadOffset + MbStatus);
      if (p[8]) f_d.dir = p[7];
      p = pick(pos_q, tdata_i, tkeep_i, MadOffset + MbHopPtr);
      if (p[8]) f_d.hop_ptr = p[7:0];
      p = pick(pos_q, tdata_i, tkeep_i, MadOffset + MbHopCnt);
      if (p[8]) f_d.hop_cnt = p[7:0];
      p = pick(pos_q, tdata_i, tkeep_i, MadOffset + MbAttrId);
      if (p[8]) f_d.attr_sminfo[1] = p[7:0] == AttrSmInfo[15:8];
      p = pick(pos_q, tdata_i, tkeep_i, MadOffset + MbAttrId + 1);
      if (p[8]) f_d.attr_sminfo[0] = p[7:0] == AttrSmInfo[7:0];
      p = pick(pos_q, tdata_i, tkeep_i, MadOffset + MbDrSlid);
      if (p[8]) begin f_d.dr_slid[15:8] = p[7:0]; f_d.dr_slid_ff[1] = &p[7:0]; end
      p = pick(pos_q, tdata_i, tkeep_i, MadOffset + MbDrSlid + 1);
      if (p[8]) begin f_d.dr_slid[7:0] = p[7:0]; f_d.dr_slid_ff[0] = &p[7:0]; end
      p = pick(pos_q, tdata_i, tkeep_i, MadOffset + MbDrDlid);
      if (p[8]) begin f_d.dr_dlid[15:8] = p[7:0]; f_d.dr_dlid_ff[1] = &p[7:0]; end
      p = pick(pos_q, tdata_i, tkeep_i, MadOffset + MbDrDlid + 1);
      if (p[8]) begin f_d.dr_dlid[7:0] = p[7:0]; f_d.dr_dlid_ff[0] = &p[7:0]; end
    end
    if (tvalid_i) begin
      // ReturnPath[hop_cnt]; hop_cnt (packet byte 35) is many beats earlier.
      if (pos_q == rp_beat_q) begin
        for (int unsigned j = 0; j < DataB; j++) begin
          if (32'(rp_lane_q) == j && tkeep_i[j]) begin
            f_d.rp_hc   = tdata_i[8*j +: 8];
            f_d.rp_port = tdata_i[8*j +: 8] == rp_cmp_i;
          end
        end
      end
      if (tlast_i) begin
        pos_d = '0;
      end else if (32'(pos_q) < PosMax) begin
        pos_d = pos_q + PosW'(DataB);  // saturates at PosMax
      end
    end
  end

  // Offset of ReturnPath[hop_cnt] from the captured hop count; registered, as
  // it is needed no earlier than packet byte RpPos = 220.
  logic [15:0] rp_off;
  assign rp_off = 16'(RpPos) + {8'h0, f_q.hop_cnt};  // <= 475

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      f_q       <= SmiRxHdrReset;
      pos_q     <= '0;
      rp_beat_q <= '1;
      rp_lane_q <= '0;
    end else begin
      f_q       <= f_d;
      pos_q     <= pos_d;
      rp_beat_q <= PosW'(rp_off & ~16'(DataB - 1));
      rp_lane_q <= 8'(rp_off & 16'(DataB - 1));
    end
  end

  assign hdr_o      = f_q;
  assign pos_o      = pos_q;
  assign pos_next_o = pos_d;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && tvalid_i && !tlast_i) begin
      assert (tkeep_i == '1)
        else $error("%m: partial tkeep on a beat without tlast");
    end
  end
`endif

endmodule
