// smi_rq: SMI receive engine of a CA port. Takes the VL15 stream of
// ib_link_rx (packets LRH..VCRC), picks the LRH/BTH/DETH/MAD header fields out
// of the beats by packet byte offset, checks the ICRC, validates the SMP
// (header, DLID/LMC), runs the directed-route receive rules and disposition of
// a CA (ibspec §5), and writes the 256 MAD bytes, realigned to beat 0 = MAD
// bytes 0..DataB-1, into the VL15 RX ib_pkt_fifo. Every packet ends with
// wr_end_o in the cycle of its tlast beat (no added latency); wr_ok_o = link
// good and every check passed. The DR result (new hop pointer, ReturnPath
// write) travels in the meta, the RAM holds the MAD as received.
module smi_rq
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 8, 32, 64 or 128
  localparam int unsigned DataB = DataW / 8
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // VL15 stream from ib_link_rx (no ready)
  input  logic [DataW-1:0]   vl15_tdata_i,
  input  logic [DataB-1:0]   vl15_tkeep_i,
  input  logic               vl15_tvalid_i,
  input  logic               vl15_tlast_i,
  input  logic               vl15_tuser_i,   // on tlast: link error, discard
  // port configuration
  input  logic [15:0]        port_lid_i,
  input  logic [2:0]         port_lmc_i,
  input  logic [3:0]         port_state_i,
  input  logic [7:0]         port_num_i,
  // VL15 RX buffer write port
  output logic               wr_valid_o,
  output logic [DataW-1:0]   wr_data_o,
  output logic [DataB-1:0]   wr_keep_o,
  output logic               wr_end_o,
  output logic               wr_ok_o,
  output smi_rx_meta_t       wr_meta_o,
  // event pulses (one per bad packet, highest precedence only)
  output logic               ev_port_down_o,
  output logic               ev_icrc_err_o,
  output logic               ev_bad_hdr_o,
  output logic               ev_lid_err_o,
  output logic               ev_dr_discard_o
);

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end

  // MAD byte i is packet byte MadOffset + i: it starts at lane Shift of beat
  // HdrBeats. With Shift != 0 each MAD beat is the upper DataB-Shift bytes of
  // one packet beat and the lower Shift bytes of the next.
  localparam int unsigned Shift    = MadOffset % DataB;
  localparam int unsigned HdrBeats = MadOffset / DataB;
  // Packet byte offset of the first packet beat that completes a MAD beat.
  localparam int unsigned EmitPos  = (Shift == 0) ? MadOffset : (HdrBeats + 1) * DataB;
  localparam int unsigned IcrcPos  = MadOffset + MadBytes;  // 284
  localparam int unsigned RpPos    = MadOffset + MbReturnPath;  // ReturnPath[0]

  // ---------------------------------------------------------------------------
  // Captured header fields
  // ---------------------------------------------------------------------------
  // Fields the checks only compare with a constant are kept as per-byte
  // compare flags, taken when their byte is (exactly as comparing the held
  // byte at tlast: a flag, like a byte, holds until its byte comes again).
  typedef struct packed {
    logic [3:0]  sl;
    logic [1:0]  lnh;
    logic [15:0] dlid;
    logic [1:0]  pktlen_ok;   // PktLen [10:8], [7:0] = SmpPktLen's
    logic [15:0] slid;
    logic        opcode_ok;   // BTH OpCode = UD SEND Only
    logic        tver_ok;     // BTH TVer = 0
    logic [2:0]  destqp_zero; // BTH DestQP bytes = 0
    logic        base_ver_ok; // MAD BaseVersion = 1
    logic [7:0]  mgmt_class;
    logic [7:0]  method;
    logic        dir;         // DR D bit (status bit 15)
    logic [7:0]  hop_ptr;
    logic [7:0]  hop_cnt;
    logic [1:0]  attr_sminfo; // AttributeID bytes = SMInfo's
    logic [1:0]  dr_slid_ff;  // DrSLID bytes = 0xFF (permissive)
    logic [1:0]  dr_dlid_ff;  // DrDLID bytes = 0xFF
    logic        rp_port;     // ReturnPath[hop_cnt] = this port
  } fields_t;

  // after reset every byte reads 0 (as the held bytes did): the flags of a
  // zero byte
  localparam fields_t FieldsReset = '{
    tver_ok:     1'b1,
    destqp_zero: 3'b111,
    attr_sminfo: {AttrSmInfo[15:8] == 8'd0, AttrSmInfo[7:0] == 8'd0},
    default:     '0
  };

  fields_t     f_q, f_d;
  // Packet byte offsets: 9 bits, saturating at PosMax, the last beat offset
  // below 512. Every offset compared (fields, ReturnPath[hop_cnt] <= 475,
  // the ICRC at 288, the MAD up to 292) is below PosMax (496 at DataB 16), so
  // a beat past it matches nothing, as it did not with 16-bit offsets.
  localparam int unsigned PosW   = 9;
  localparam int unsigned PosMax = (1 << PosW) - DataB;
  logic [PosW-1:0] pos_q, pos_d;   // packet byte offset of the current beat
  if (RpPos + 255 >= PosMax || EmitPos + MadBytes >= PosMax) begin : gen_pos_check
    $fatal(1, "%m: a compared offset reaches PosMax %0d", PosMax);
  end
  logic [31:0] crc_q, crc_d;   // running ICRC state (no final XOR)
  // crc_q == Crc32Residue, byte by byte, registered with crc_q (so at tlast
  // the ICRC verdict is one AND of four flags: the DataW 64 path from the
  // residue compare through wr_ok_o into the RX buffer was critical)
  logic [3:0]  res_eq_q;
  function automatic logic [3:0] res_eq_d(logic [31:0] c);
    for (int unsigned j = 0; j < 4; j++) begin
      res_eq_d[j] = c[8*j +: 8] == Crc32Residue[8*j +: 8];
    end
  endfunction
  logic [PosW-1:0] rp_beat_q;  // ReturnPath[hop_cnt]: offset of its beat,
  logic [7:0]  rp_lane_q;      // and its lane (from f_q.hop_cnt, a cycle late)

  logic beat;
  logic last;
  assign beat = vl15_tvalid_i;
  assign last = vl15_tvalid_i & vl15_tlast_i;

  // Every beat before the last is full (asserted below), so packet byte `off`
  // is lane off % DataB of the beat at offset off - off % DataB: a field is
  // picked up by comparing pos_q with a constant. Returns {hit, byte}.
  function automatic logic [8:0] pick(logic [PosW-1:0] pos, logic [DataW-1:0] data,
                                      logic [DataB-1:0] keep, int unsigned off);
    int unsigned lane;
    lane = off % DataB;
    return {pos == PosW'(off - lane) && keep[lane], data[8*lane +: 8]};
  endfunction

  // CRC coverage: bytes 0..CrcEnd-1, the ICRC's coverage and the ICRC
  // itself (LSB first): after a good ICRC the state is Crc32Residue (ibspec
  // §3.1 residue check), so the check is a compare with a constant at tlast
  // and the ICRC field need not be captured. Beats before IcrcBeat are
  // covered whole, the beat at IcrcBeat for its first IcrcTail bytes (none:
  // 288 is a multiple of every DataB), later beats not at all.
  localparam int unsigned CrcEnd    = IcrcPos + IcrcBytes;  // 288
  localparam int unsigned IcrcTail  = CrcEnd % DataB;
  localparam int unsigned IcrcBeat  = CrcEnd - IcrcTail;
  localparam int unsigned Resv8aBeat = PbBthResv8a - PbBthResv8a % DataB;
  localparam int unsigned Resv8aLane = PbBthResv8a % DataB;
  localparam crc32_mat_t  CrcFull   = crc32_mat(DataB);
  localparam crc32_mat_t  CrcTail   = crc32_mat(IcrcTail);

  logic [DataW-1:0] icrc_data;  // this beat with the ICRC's mask applied
  // Where the current beat is, registered from pos_d (keeps 16-bit compares
  // off the path into the CRC): first beat, beat of BTH.resv8a, beat
  // covered whole by the ICRC, beat with the ICRC's last covered bytes.
  logic             at_first_q, at_resv_q, cov_full_q, at_icrc_q;
  logic             in_mad_q;  // the beat completes a MAD beat (EmitPos..)

  always_comb begin
    icrc_data = vl15_tdata_i;
    if (at_first_q) begin
      icrc_data[8*PbLrhVlLver + 4 +: 4] = 4'hF;   // LRH.VL
    end
    if (at_resv_q) begin
      icrc_data[8*Resv8aLane +: 8] = 8'hFF;        // BTH.resv8a
    end
  end

  always_comb begin
    logic [8:0]  p;
    logic [31:0] crc_in;
    p      = '0;
    f_d    = f_q;
    crc_in = at_first_q ? Crc32Init : crc_q;
    crc_d  = crc_in;
    pos_d  = pos_q;
    if (beat) begin
      if (cov_full_q) begin
        crc_d = crc32_mul(CrcFull, crc_in, (8 * CrcMaxBytes)'(icrc_data));
      end else if (IcrcTail != 0 && at_icrc_q) begin
        crc_d = crc32_mul(CrcTail, crc_in, (8 * CrcMaxBytes)'(icrc_data));
      end
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, PbLrhSlLnh);
      if (p[8]) begin f_d.sl = p[7:4]; f_d.lnh = p[1:0]; end
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, PbLrhDlid);
      if (p[8]) f_d.dlid[15:8] = p[7:0];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, PbLrhDlid + 1);
      if (p[8]) f_d.dlid[7:0] = p[7:0];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, PbLrhPktLen);
      if (p[8]) f_d.pktlen_ok[1] = p[2:0] == 3'(SmpPktLen >> 8);
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, PbLrhPktLen + 1);
      if (p[8]) f_d.pktlen_ok[0] = p[7:0] == 8'(SmpPktLen);
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, PbLrhSlid);
      if (p[8]) f_d.slid[15:8] = p[7:0];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, PbLrhSlid + 1);
      if (p[8]) f_d.slid[7:0] = p[7:0];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, PbBthOpcode);
      if (p[8]) f_d.opcode_ok = p[7:0] == OpUdSendOnly;
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, PbBthFlags);
      if (p[8]) f_d.tver_ok = p[3:0] == 4'd0;
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, PbBthDestQp);
      if (p[8]) f_d.destqp_zero[2] = p[7:0] == 8'd0;
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, PbBthDestQp + 1);
      if (p[8]) f_d.destqp_zero[1] = p[7:0] == 8'd0;
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, PbBthDestQp + 2);
      if (p[8]) f_d.destqp_zero[0] = p[7:0] == 8'd0;
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, MadOffset + MbBaseVersion);
      if (p[8]) f_d.base_ver_ok = p[7:0] == MadBaseVersion;
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, MadOffset + MbMgmtClass);
      if (p[8]) f_d.mgmt_class = p[7:0];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, MadOffset + MbMethod);
      if (p[8]) f_d.method = p[7:0];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, MadOffset + MbStatus);
      if (p[8]) f_d.dir = p[7];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, MadOffset + MbHopPtr);
      if (p[8]) f_d.hop_ptr = p[7:0];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, MadOffset + MbHopCnt);
      if (p[8]) f_d.hop_cnt = p[7:0];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, MadOffset + MbAttrId);
      if (p[8]) f_d.attr_sminfo[1] = p[7:0] == AttrSmInfo[15:8];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, MadOffset + MbAttrId + 1);
      if (p[8]) f_d.attr_sminfo[0] = p[7:0] == AttrSmInfo[7:0];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, MadOffset + MbDrSlid);
      if (p[8]) f_d.dr_slid_ff[1] = &p[7:0];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, MadOffset + MbDrSlid + 1);
      if (p[8]) f_d.dr_slid_ff[0] = &p[7:0];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, MadOffset + MbDrDlid);
      if (p[8]) f_d.dr_dlid_ff[1] = &p[7:0];
      p = pick(pos_q, vl15_tdata_i, vl15_tkeep_i, MadOffset + MbDrDlid + 1);
      if (p[8]) f_d.dr_dlid_ff[0] = &p[7:0];
      // ReturnPath[hop_cnt]; hop_cnt (packet byte 35) is many beats earlier.
      if (pos_q == rp_beat_q) begin
        for (int unsigned j = 0; j < DataB; j++) begin
          if (32'(rp_lane_q) == j && vl15_tkeep_i[j]) begin
            f_d.rp_port = vl15_tdata_i[8*j +: 8] == port_num_i;
          end
        end
      end
      if (vl15_tlast_i) begin
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
      f_q       <= FieldsReset;
      pos_q     <= '0;
      at_first_q <= 1'b1;
      at_resv_q  <= Resv8aBeat == 0;
      cov_full_q <= 1'b1;
      at_icrc_q  <= 1'b0;
      in_mad_q   <= EmitPos == 0;
      crc_q     <= Crc32Init;
      res_eq_q  <= res_eq_d(Crc32Init);
      rp_beat_q <= '1;
      rp_lane_q <= '0;
    end else begin
      f_q       <= f_d;
      pos_q     <= pos_d;
      at_first_q <= pos_d == '0;
      at_resv_q  <= pos_d == PosW'(Resv8aBeat);
      cov_full_q <= 32'(pos_d) < IcrcBeat;
      at_icrc_q  <= 32'(pos_d) == IcrcBeat;
      in_mad_q   <= 32'(pos_d) >= EmitPos && 32'(pos_d) < EmitPos + MadBytes;
      crc_q     <= crc_d;
      res_eq_q  <= res_eq_d(crc_d);
      rp_beat_q <= PosW'(rp_off & ~16'(DataB - 1));
      rp_lane_q <= 8'(rp_off & 16'(DataB - 1));
    end
  end

  // ---------------------------------------------------------------------------
  // MAD realignment into the RX buffer
  // ---------------------------------------------------------------------------
  logic mad_emit;
  assign mad_emit = beat && in_mad_q;

  if (Shift == 0) begin : gen_aligned
    assign wr_data_o = vl15_tdata_i;
  end else begin : gen_shift
    // upper DataB-Shift bytes of the previous beat
    logic [(DataB-Shift)*8-1:0] held_q;
    always_ff @(posedge clk_i) begin
      if (beat) begin
        held_q <= vl15_tdata_i[DataW-1:Shift*8];
      end
    end
    assign wr_data_o = {vl15_tdata_i[Shift*8-1:0], held_q};
  end

  assign wr_valid_o = mad_emit;
  assign wr_keep_o  = '1;

  // ---------------------------------------------------------------------------
  // Checks and directed-route receive processing (evaluated at tlast; every
  // field and the whole ICRC lie in earlier beats of a 290-byte packet)
  // ---------------------------------------------------------------------------
  // DR receive rules of a CA (is_switch = 0, N = 1), then the disposition
  // (smi_check_forward_dr_smp / handle_ib_smi): SEND runs the send rules and
  // smi_check_local_smp, LOCAL hands the SMP up as is, FORWARD is a discard.
  typedef struct packed {
    logic       discard;
    logic [7:0] hp_new;
    logic       rp_we;
    logic [5:0] rp_idx;
  } dr_rx_t;

  function automatic dr_rx_t dr_recv_ca(logic dir, logic [7:0] hp, logic [7:0] hc,
                                        logic dr_slid_perm, logic dr_dlid_perm,
                                        logic rp_is_port);
    dr_rx_t r;
    logic [8:0] hc1;
    r   = '{discard: 1'b0, hp_new: hp, rp_we: 1'b0, rp_idx: hp[5:0]};
    hc1 = {1'b0, hc} + 9'd1;
    if (32'(hc) >= MaxPathHops) begin
      r.discard = 1'b1;                     // C14-6
    end else if (!dir) begin
      if (hc != 8'd0 && hp == 8'd0) begin
        r.discard = 1'b1;                   // C14-9:1 sender should have incremented
      end else if (hp != 8'd0 && hp < hc) begin
        r.discard = 1'b1;                   // C14-9:2 intermediate hop: switch only
      end else if (hp == hc) begin
        // C14-9:3 end of the DR segment: RP[hp] := P; accept iff DrDLID
        // permissive; disposition SEND (DrDLID permissive): send rules hp++,
        // then hp = hc+1 -> local SMA.
        if (!dr_dlid_perm) begin
          r.discard = 1'b1;
        end else begin
          r.rp_we  = (hc != 8'd0);
          r.hp_new = hp + 8'd1;
        end
      end else if ({1'b0, hp} == hc1) begin
        // C14-9:4 accept; disposition SEND, send rules keep hp, local SMA.
        r.hp_new = hp;
      end else begin
        r.discard = 1'b1;                   // C14-9:5
      end
    end else begin
      if (hc != 8'd0 && {1'b0, hp} == hc1) begin
        // C14-13:1 hp-- (= hc), accept iff RP[hc] = P. Disposition with hp = hc:
        // hc >= 2 -> FORWARD (discard on a CA); hc = 1 -> DrSLID != 0xFFFF ?
        // SEND (send rules hp 1 -> 0 need DrSLID permissive: discard) : LOCAL.
        r.hp_new = hc;
        if (!rp_is_port || hc >= 8'd2 || !dr_slid_perm) begin
          r.discard = 1'b1;
        end
      end else if (hp >= 8'd2 && hp <= hc) begin
        r.discard = 1'b1;                   // C14-13:2 switch only
      end else if (hp == 8'd1) begin
        // C14-13:3 DrSLID permissive: hp-- and to the SM (disposition LOCAL)
        if (dr_slid_perm) begin
          r.hp_new = 8'd0;
        end else begin
          r.discard = 1'b1;
        end
      end else if (hp == 8'd0) begin
        r.hp_new = 8'd0;                    // C14-13:4 to the SM
      end else begin
        r.discard = 1'b1;                   // C14-13:5
      end
    end
    return r;
  endfunction

  // Every field but the ICRC and ReturnPath[hop_cnt] lies at least two beats
  // before tlast (packet byte <= 63; the last two beats start at byte 272 or
  // later at every DataW), so the checks on them are computed from f_q a
  // cycle ahead and registered: the tlast cycle only combines a few bits.
  // The port configuration is sampled with them (a LID/LMC write takes
  // effect one cycle later). ReturnPath[hop_cnt] only decides the DR discard
  // of C14-13:1: both outcomes are registered and the tlast cycle picks one.
  typedef struct packed {
    logic   is_dr_class;
    logic   icrc_hdr_ok;        // LNH and PktLen of an SMP: the ICRC is checked
    logic   err_hdr;
    logic   err_lid;
    logic   to_sm;
    logic   dr_discard_rp_ok;   // DR discard if ReturnPath[hop_cnt] == port
    logic   dr_discard_rp_bad;  // ... if it is not
    dr_rx_t dr;                 // hop pointer / ReturnPath write (not rp-dependent)
  } chk_t;

  chk_t        chk_d, chk_q;
  logic        err_down;
  logic        err_icrc;
  logic        err_dr;

  always_comb begin
    logic        is_lid_class;
    logic [16:0] lid_hi;        // last LID of the port (17 bits: no wrap)
    logic        dlid_mine;
    dr_rx_t      dr_ok;
    // Only the verdict of the mismatching case is needed; its other fields
    // equal dr_ok's.
    /* verilator lint_off UNUSEDSIGNAL */
    dr_rx_t      dr_bad;
    /* verilator lint_on UNUSEDSIGNAL */
    is_lid_class      = (f_q.mgmt_class == ClassSubnLid);
    chk_d.is_dr_class = (f_q.mgmt_class == ClassSubnDr);
    lid_hi            = {1'b0, port_lid_i} + ((17'd1 << port_lmc_i) - 17'd1);
    dlid_mine         = (f_q.dlid >= port_lid_i) && ({1'b0, f_q.dlid} <= lid_hi);

    // DataW 8: ReturnPath[hop_cnt] (packet byte <= 283 for any hop count the
    // rules do not discard outright, C14-6) is taken 6 beats before tlast, so
    // both cases read the captured flag and are one and the same logic.
    dr_ok  = dr_recv_ca(f_q.dir, f_q.hop_ptr, f_q.hop_cnt, &f_q.dr_slid_ff, &f_q.dr_dlid_ff,
                        (DataB == 1) ? f_q.rp_port : 1'b1);
    dr_bad = dr_recv_ca(f_q.dir, f_q.hop_ptr, f_q.hop_cnt, &f_q.dr_slid_ff, &f_q.dr_dlid_ff,
                        (DataB == 1) ? f_q.rp_port : 1'b0);
    chk_d.dr                = dr_ok;
    chk_d.dr_discard_rp_ok  = dr_ok.discard;
    chk_d.dr_discard_rp_bad = dr_bad.discard;

    chk_d.icrc_hdr_ok = (f_q.lnh == LnhIbaLocal) && (&f_q.pktlen_ok);
    chk_d.err_hdr = (f_q.lnh != LnhIbaLocal) || !f_q.opcode_ok ||
                    !f_q.tver_ok || !(&f_q.destqp_zero) ||
                    !(&f_q.pktlen_ok) || !f_q.base_ver_ok ||
                    !(is_lid_class || chk_d.is_dr_class);
    chk_d.err_lid = is_lid_class ? (!dlid_mine || port_lid_i == 16'd0 ||
                                    f_q.slid == PermissiveLid)
                                 : (f_q.dlid != PermissiveLid && !dlid_mine);
    chk_d.to_sm   = f_q.method[7] || (f_q.method == MethodTrap) ||
                    ((&f_q.attr_sminfo) &&
                     (f_q.method == MethodGet || f_q.method == MethodSet));
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      chk_q <= '0;
    end else begin
      chk_q <= chk_d;
    end
  end

  always_comb begin
    err_down = (port_state_i == PortStateDown);
    err_icrc = chk_q.icrc_hdr_ok && !(&res_eq_q);
    err_dr   = chk_q.is_dr_class &&
               (f_q.rp_port ? chk_q.dr_discard_rp_ok : chk_q.dr_discard_rp_bad);
  end

  logic good_link;
  assign good_link = last && !vl15_tuser_i;

  assign ev_port_down_o  = good_link && err_down;
  assign ev_icrc_err_o   = good_link && !err_down && err_icrc;
  assign ev_bad_hdr_o    = good_link && !err_down && !err_icrc && chk_q.err_hdr;
  assign ev_lid_err_o    = good_link && !err_down && !err_icrc && !chk_q.err_hdr && chk_q.err_lid;
  assign ev_dr_discard_o = good_link && !err_down && !err_icrc && !chk_q.err_hdr &&
                           !chk_q.err_lid && err_dr;

  assign wr_end_o = last;
  assign wr_ok_o  = good_link &&
                    !(err_down || err_icrc || chk_q.err_hdr || chk_q.err_lid || err_dr);

  always_comb begin
    wr_meta_o            = '0;
    wr_meta_o.slid       = f_q.slid;
    wr_meta_o.dlid       = f_q.dlid;
    wr_meta_o.sl         = f_q.sl;
    wr_meta_o.port       = port_num_i;
    wr_meta_o.mgmt_class = f_q.mgmt_class;
    wr_meta_o.to_sm      = chk_q.to_sm;
    if (chk_q.is_dr_class) begin
      wr_meta_o.hop_ptr = chk_q.dr.hp_new[6:0];
      wr_meta_o.hop_cnt = f_q.hop_cnt[6:0];
      wr_meta_o.rp_we   = chk_q.dr.rp_we;
      wr_meta_o.rp_idx  = chk_q.dr.rp_idx;
      wr_meta_o.rp_val  = port_num_i;
    end
  end

  // ---------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      assert ((&res_eq_q) == (crc_q == Crc32Residue))
        else $error("%m: registered residue compare out of step with crc_q");
      if (vl15_tvalid_i && !vl15_tlast_i) begin
        assert (vl15_tkeep_i == '1)
          else $error("%m: partial tkeep on a beat without tlast");
      end
      if (wr_ok_o) begin
        // DR only: a LID-routed SMP's hop pointer is any byte, unused.
        assert (!chk_q.is_dr_class || (chk_q.dr.hp_new < 8'd128 && f_q.hop_cnt < 8'd64))
          else $error("%m: accepted DR SMP with out-of-range hop fields");
      end
    end
  end
`endif

endmodule
