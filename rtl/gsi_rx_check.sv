// gsi_rx_check: the destination checks of a data-VL packet before it reaches
// the host (ibspec §2 QP0/QP1 key rules, §6 "GMP (QP1) checks", Linux
// qib_ud_rcv / validate_mad, rxe_recv check_keys). Takes the data-VL stream
// of ib_link_rx (one packet LRH..VCRC: ib_link_rx forwards the VCRC, so the
// packet is 4*PktLen + 2 bytes; no ready; in_tuser_i on tlast = the link
// layer already discarded it) and passes every beat through unchanged, one
// register stage later (latency 1 cycle), with out_tuser_o on the tlast beat
// = discard and out_reason_o on the tlast beat = why (gsi_reason_e).
//
// Checks, in this precedence, on a packet the link layer passed (one event
// pulse, with the output tlast beat; none for a packet with in_tuser_i):
// 0. LNH 3 with a PktLen too short for GRH + BTH + ICRC (< 16) -> ev_bad_hdr_o
//    (its ICRC is not checked: there is no BTH whose resv8a it would mask).
// 1. ICRC (every packet): CRC-32 over LRH..ICRC with the variant fields as 1s
//    must leave ib_pkg::Crc32Residue. Local (LNH 2): LRH.VL, BTH.resv8a.
//    Global (LNH 3): the whole LRH, GRH TClass, FlowLabel, HopLmt and
//    BTH.resv8a (ibspec §3.1, as Linux rxe_icrc). Mismatch -> ev_icrc_err_o.
// 2. Header -> ev_bad_hdr_o: LNH 3 with GRH.NxtHdr != 0x1B; BTH.DestQP = 0 (QP0 is
//    only reached on VL15: "only SMPs use VL15"); DestQP = 1 and any of:
//    OpCode != 0x64 (UD Send-Only), TVer != 0, PadCnt != 0 or PktLen != 72
//    (82 with a GRH) (the payload is not one 256-byte MAD), MAD BaseVersion
//    != 1, MgmtClass 0x01 or 0x81 (SMP classes are QP0's, validate_mad).
// 3. DestQP = 1: BTH.P_Key must match an entry of the port's P_Key table
//    (rxe pkey_match: low 15 bits equal and non-zero, and the packet's or the
//    entry's bit 15 (full member) set; so P_Key 0x0000/0x8000 never match)
//    -> else ev_pkey_viol_o (PortInfo P_KeyViolations, Trap 257).
// 4. DestQP = 1: DETH.Q_Key must be 0x80010000 -> else ev_qkey_viol_o
//    (PortInfo Q_KeyViolations, Trap 258).
// 5. DestQP = 1 and none of the above: a good GMP -> ev_gmp_o.
// Any other DestQP (a redirected GSA, any other QP of the host) is checked
// for its ICRC only. With LNH 3 every field is read 40 bytes later (after the
// GRH); LNH 0/1 never pass ib_link_rx.
//
// Why this order: a packet whose ICRC fails may have any header byte
// corrupted, so no header field of it is trusted (a flipped P_Key bit must
// count as an ICRC error, not as a P_Key violation blamed on the sender and
// reported to the SM); a packet failing 2 is not a GMP at all (its "P_Key"
// and "Q_Key" bytes need not be BTH/DETH fields); the P_Key (BTH, partition
// membership) is checked before the Q_Key (DETH, QP access) as the IBA's
// transport header validation and rxe check_keys do. The qib driver does no
// QP1 P_Key check (ibspec §12 item 3); this follows rxe and the IBA.
//
// The P_Key table: PkeyEntries 16-bit entries in registers (reset: entry 0 =
// 0xFFFF, the default full-member P_Key, every other 0 = invalid), written
// one entry per pkey_we_i; pkey_rdata_o = entry pkey_idx_i. The match against
// every group of 8 entries is registered (pkey_grp_q, from the packet's P_Key
// field and the table of the cycle before; their OR is the hit): a GMP's P_Key ends at packet byte 11 (51
// with a GRH), at least 15 beats before the tlast of its 290 (330) bytes at
// DataW 128, so the hit is settled at tlast; a shorter packet fails check 2.
//
// PkeyRam = 1 (the FPGA boards) keeps the table in block RAM instead: two
// copies (one read port each) written together, one read at pkey_idx_i for
// pkey_rdata_o (one cycle later: pkey_rdata_o is entry pkey_idx_i of the
// cycle before), one scanned one entry per cycle against the packet's P_Key
// from the cycle after its last byte was taken; the hit is settled
// PkeyEntries + 2 cycles later, which must be before tlast (elaboration
// check: PkeyEntries + 2 <= the beats between a GMP's P_Key and its tlast,
// 70 at DataW 32, so 64 entries fit there). A per-entry "written since reset"
// flag stands for the reset values (entry 0 = 0xFFFF, others 0). A table
// write during a scan may or may not take part in that packet's check (the
// flip-flop table uses the table of the cycle before tlast).
module gsi_rx_check
  import ib_pkg::*;
#(
  parameter int unsigned DataW       = 64,  // stream width in bits: 8, 32, 64 or 128
  parameter int unsigned PkeyEntries = 64,  // P_Key table size (NodeInfo.PartitionCap), 1..256
  parameter bit          PkeyRam     = 1'b0,  // 1: the table in block RAM, scanned (above)
  localparam int unsigned DataB      = DataW / 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // data-VL packets from ib_link_rx (LRH..VCRC, no ready)
  input  logic [DataW-1:0] in_tdata_i,
  input  logic [DataB-1:0] in_tkeep_i,
  input  logic             in_tvalid_i,
  input  logic             in_tlast_i,
  input  logic             in_tuser_i,    // on tlast: discarded upstream
  // the same packets to the host, one cycle later
  output logic [DataW-1:0] out_tdata_o,
  output logic [DataB-1:0] out_tkeep_o,
  output logic             out_tvalid_o,
  output logic             out_tlast_o,
  output logic             out_tuser_o,   // on tlast: discard
  output gsi_reason_e      out_reason_o,  // on tlast: why discarded (GsiOk if not)
  // P_Key table: write entry pkey_idx_i; read entry pkey_idx_i
  input  logic             pkey_we_i,
  input  logic [7:0]       pkey_idx_i,    // >= PkeyEntries: writes ignored, reads 0
  input  logic [15:0]      pkey_wdata_i,
  output logic [15:0]      pkey_rdata_o,
  // event pulses with the output tlast beat, at most one per packet
  output logic             ev_icrc_err_o,
  output logic             ev_bad_hdr_o,
  output logic             ev_pkey_viol_o,
  output logic             ev_qkey_viol_o,
  output logic             ev_gmp_o
);

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end
  if (PkeyEntries < 1 || PkeyEntries > 256) begin : gen_pkey_entries_check
    $fatal(1, "%m: PkeyEntries must be 1..256, got %0d", PkeyEntries);
  end

  localparam int unsigned GmpPktLen     = SmpPktLen;                       // 72
  localparam int unsigned GmpPktLenGrh  = SmpPktLen + GrhBytes / 4;        // 82
  // Shortest GRH packet with a BTH: LRH + GRH + BTH + ICRC.
  localparam int unsigned MinPktLenGrh  = MinPktLen + GrhBytes / 4;        // 16
  localparam int unsigned PkeyLastLocal = PbBthPkey + 1;                   // BTH.P_Key's last byte

  // ---------------------------------------------------------------------------
  // ICRC masks: the bits forced to 1 in each of the first MaskBeats beats
  // (they hold every variant byte, up to BTH.resv8a after a GRH), for a local
  // and a global packet. Built at elaboration.
  // ---------------------------------------------------------------------------
  localparam int unsigned MaskBeats = (PbBthResv8a + GrhBytes) / DataB + 1;
  localparam int unsigned HbW       = $clog2(MaskBeats + 1);

  typedef logic [MaskBeats-1:0][DataW-1:0] mask_tab_t;

  function automatic mask_tab_t icrc_ones(bit grh);
    mask_tab_t m;
    for (int unsigned b = 0; b < MaskBeats; b++) begin
      for (int unsigned j = 0; j < DataB; j++) begin
        int unsigned off;
        logic [7:0]  v;
        off = b * DataB + j;
        v   = 8'h00;
        if (!grh) begin
          if (off == PbLrhVlLver) v = 8'hF0;                         // LRH.VL
          if (off == PbBthResv8a) v = 8'hFF;
        end else begin
          if (off < LrhBytes) v = 8'hFF;                             // the LRH
          if (off == PbGrhVerTc) v = 8'h0F;                          // TClass[7:4]
          if (off == PbGrhTcFlow || off == PbGrhFlow || off == PbGrhFlow + 1 ||
              off == PbGrhHopLmt) v = 8'hFF;                         // TClass, FlowLabel, HopLmt
          if (off == PbBthResv8a + GrhBytes) v = 8'hFF;
        end
        m[b][8*j +: 8] = v;
      end
    end
    return m;
  endfunction

  localparam mask_tab_t OnesLocal  = icrc_ones(1'b0);
  localparam mask_tab_t OnesGlobal = icrc_ones(1'b1);

  // CRC-32 matrices: a whole beat, and the 4k covered bytes of a tlast beat
  // (a packet the link passed ends with 4k bytes of ICRC-covered data or
  // ICRC, then the 2 VCRC bytes: nbytes = 4k + 2, k < DataB/4). DataW 8 has
  // no 4-byte head (one placeholder entry): there the CRC lags a byte behind
  // (prev_q), so at tlast crc_q covers all but the two VCRC bytes.
  localparam int unsigned NTail   = (DataB >= 4) ? DataB / 4 : 1;
  localparam int unsigned CrcMaxB = 8 * CrcMaxBytes;
  localparam crc32_mat_t  CrcFull = crc32_mat(DataB);
  typedef crc32_mat_t [NTail-1:0] crc32_tails_t;
  function automatic crc32_tails_t crc32_tails();
    crc32_tails_t t;
    for (int unsigned k = 0; k < NTail; k++) begin
      t[k] = crc32_mat(4 * k);
    end
    return t;
  endfunction
  localparam crc32_tails_t CrcTail = crc32_tails();

  // ---------------------------------------------------------------------------
  // Header fields, picked by packet byte offset (every beat before tlast is
  // full, asserted below), local or 40 bytes later after a GRH
  // ---------------------------------------------------------------------------
  // Only LNH, PktLen and the P_Key are kept as values; every other field is
  // kept as the outcome of its compares, byte by byte as it arrives (a flag
  // per compared byte: fewer flip-flops than the field, the same verdict).
  typedef struct packed {
    logic [1:0]  lnh;
    logic [10:0] pktlen;
    logic        nxthdr_ok;   // GRH.NxtHdr == 0x1B (LNH 3 only)
    logic        op_ok;       // BTH.OpCode == UD Send-Only
    logic        tver_ok;     // BTH PadCnt and TVer (flags[5:0]) == 0
    logic [15:0] pkey;
    logic [2:0]  qp_zero;     // BTH.DestQP byte i (0 = first) == 0
    logic        qp_one;      // BTH.DestQP's last byte == 1
    logic [3:0]  qkey_ok;     // DETH.Q_Key byte i == Qp1Qkey's byte i
    logic        bv_ok;       // MAD BaseVersion == 1
    logic        mc_lid;      // MgmtClass == 0x01
    logic        mc_dr;       // MgmtClass == 0x81
  } fields_t;

  // The fields of a packet too short to hold them: every byte reads as 0.
  function automatic fields_t fields_zero();
    fields_t f;
    f           = '0;
    f.nxthdr_ok = GrhNxtHdrIba == 8'h00;
    f.op_ok     = OpUdSendOnly == 8'h00;
    f.tver_ok   = 1'b1;
    f.qp_zero   = '1;
    f.qp_one    = 1'b0;
    for (int unsigned i = 0; i < 4; i++) f.qkey_ok[i] = Qp1Qkey[8*(3-i) +: 8] == 8'h00;
    f.bv_ok     = MadBaseVersion == 8'h00;
    f.mc_lid    = ClassSubnLid == 8'h00;
    f.mc_dr     = ClassSubnDr == 8'h00;
    return f;
  endfunction
  localparam fields_t FieldsZero = fields_zero();

  fields_t          f_q, f_d;
  // The last header byte read (MgmtClass after a GRH, packet byte 69) lies
  // far below 2^PosW - DataB, so an offset that saturates there picks the
  // same bytes as an exact one.
  localparam int unsigned PosW = 8;
  if (MadOffset + MbMgmtClass + GrhBytes + DataB >= (1 << PosW)) begin : gen_pos_check
    $fatal(1, "%m: header offsets do not fit PosW");
  end
  logic [PosW-1:0]  pos_q, pos_d;   // packet byte offset of the current beat (saturating)
  logic [HbW-1:0]   hb_q, hb_d;     // beats seen in this packet, saturating at MaskBeats
  logic [31:0]      crc_q, crc_d;   // running CRC-32 state (no final XOR)
  logic             first;          // this beat is a packet's first
  logic             grh;            // this packet has a GRH (LNH 3)
  logic [DataW-1:0] icrc_data;      // the beat with the ICRC's ones applied
  logic [31:0]      crc_in, crc_tail;
  logic [$clog2(DataB+1)-1:0] nbytes;
  logic [DataW-1:0] prev_q;         // DataW 8: the previous beat as the ICRC sees it
  logic [DataW-1:0] fold_data;      // DataW 8: the byte folded into the CRC this beat

  // hb_q is 0 exactly at a packet's first beat (cleared at tlast, else
  // counting up to MaskBeats >= 1): a 2-3 bit compare instead of pos_q's 16
  // bits on the path into the CRC and the verdict (the DataW 64 critical
  // path, 109 MHz with pos_q).
  assign first = (hb_q == '0);
  // LNH is packet byte 1: in the first beat, but in the second at DataW 8
  // (whose first beat then takes the local mask; the global one's extra
  // bits of byte 0 are added when that byte is folded, a beat later).
  localparam int unsigned LnhBeat = PbLrhSlLnh / DataB;
  // (LnhBeat is 0 or 1: a first beat that is not LNH's is one before it.)
  if (LnhBeat == 0) begin : gen_grh_first
    // LNH in the first beat (the DataW 64 path into the CRC runs through
    // here: kept as it was before DataW 8)
    assign grh = first ? (in_tdata_i[8*PbLrhSlLnh +: 2] == LnhIbaGlobal)
                       : (f_q.lnh == LnhIbaGlobal);
  end else begin : gen_grh_second
    assign grh = (32'(hb_q) == LnhBeat) ?
                     (in_tdata_i[8*(PbLrhSlLnh % DataB) +: 2] == LnhIbaGlobal) :
                 first ? 1'b0 : (f_q.lnh == LnhIbaGlobal);
  end

  // Returns {hit, byte} for packet byte `off` (off + GrhBytes with a GRH).
  function automatic logic [8:0] pick(logic [PosW-1:0] pos, logic [DataW-1:0] data,
                                      logic [DataB-1:0] keep, bit with_grh, int unsigned off);
    int unsigned o;
    int unsigned lane;
    o    = with_grh ? off + GrhBytes : off;
    lane = o % DataB;
    return {pos == PosW'(o - lane) && keep[lane], data[8*lane +: 8]};
  endfunction

  always_comb begin
    logic [8:0] p;
    p      = '0;
    f_d    = f_q;
    pos_d  = pos_q;
    hb_d   = hb_q;
    crc_in = first ? Crc32Init : crc_q;
    crc_d  = crc_q;

    icrc_data = in_tdata_i;
    if (32'(hb_q) < MaskBeats) begin
      icrc_data = in_tdata_i | (grh ? OnesGlobal[hb_q] : OnesLocal[hb_q]);
    end
    nbytes = '0;
    for (int unsigned j = 0; j < DataB; j++) begin
      nbytes = nbytes + $bits(nbytes)'(in_tkeep_i[j]);
    end
    crc_tail = crc_in;
    for (int unsigned k = 1; k < NTail; k++) begin
      if ((32'(nbytes) >> 2) == k) begin
        crc_tail = crc32_mul(CrcTail[k], 4 * k, crc_in, CrcMaxB'(icrc_data));
      end
    end

    fold_data = (hb_q == HbW'(1) && grh) ? prev_q | OnesGlobal[0] : prev_q;

    if (in_tvalid_i) begin
      if (DataB == 1) begin
        crc_d = (in_tlast_i || first) ? crc_tail :
                crc32_mul(CrcFull, DataB, (hb_q == HbW'(1)) ? Crc32Init : crc_q, CrcMaxB'(fold_data));
      end else begin
        crc_d = in_tlast_i ? crc_tail : crc32_mul(CrcFull, DataB, crc_in, CrcMaxB'(icrc_data));
      end
      if (first) begin
        f_d = FieldsZero;  // fields a short packet lacks read as 0
      end
      // LRH (never moved by a GRH) and GRH.NxtHdr
      p = pick(pos_q, in_tdata_i, in_tkeep_i, 1'b0, PbLrhSlLnh);
      if (p[8]) f_d.lnh = p[1:0];
      p = pick(pos_q, in_tdata_i, in_tkeep_i, 1'b0, PbLrhPktLen);
      if (p[8]) f_d.pktlen[10:8] = p[2:0];
      p = pick(pos_q, in_tdata_i, in_tkeep_i, 1'b0, PbLrhPktLen + 1);
      if (p[8]) f_d.pktlen[7:0] = p[7:0];
      p = pick(pos_q, in_tdata_i, in_tkeep_i, 1'b0, PbGrhNxtHdr);
      if (p[8]) f_d.nxthdr_ok = p[7:0] == GrhNxtHdrIba;
      // BTH, DETH, MAD header: after the GRH if there is one
      p = pick(pos_q, in_tdata_i, in_tkeep_i, grh, PbBthOpcode);
      if (p[8]) f_d.op_ok = p[7:0] == OpUdSendOnly;
      p = pick(pos_q, in_tdata_i, in_tkeep_i, grh, PbBthFlags);
      if (p[8]) f_d.tver_ok = p[5:0] == 6'd0;
      p = pick(pos_q, in_tdata_i, in_tkeep_i, grh, PbBthPkey);
      if (p[8]) f_d.pkey[15:8] = p[7:0];
      p = pick(pos_q, in_tdata_i, in_tkeep_i, grh, PbBthPkey + 1);
      if (p[8]) f_d.pkey[7:0] = p[7:0];
      for (int unsigned i = 0; i < 3; i++) begin
        p = pick(pos_q, in_tdata_i, in_tkeep_i, grh, PbBthDestQp + i);
        if (p[8]) f_d.qp_zero[i] = p[7:0] == 8'h00;
        if (p[8] && i == 2) f_d.qp_one = p[7:0] == 8'h01;
      end
      for (int unsigned i = 0; i < 4; i++) begin
        p = pick(pos_q, in_tdata_i, in_tkeep_i, grh, PbDethQkey + i);
        if (p[8]) f_d.qkey_ok[i] = p[7:0] == Qp1Qkey[8*(3-i) +: 8];
      end
      p = pick(pos_q, in_tdata_i, in_tkeep_i, grh, MadOffset + MbBaseVersion);
      if (p[8]) f_d.bv_ok = p[7:0] == MadBaseVersion;
      p = pick(pos_q, in_tdata_i, in_tkeep_i, grh, MadOffset + MbMgmtClass);
      if (p[8]) begin
        f_d.mc_lid = p[7:0] == ClassSubnLid;
        f_d.mc_dr  = p[7:0] == ClassSubnDr;
      end

      if (in_tlast_i) begin
        pos_d = '0;
        hb_d  = '0;
      end else begin
        if (32'(pos_q) <= (1 << PosW) - 1 - DataB) begin
          pos_d = pos_q + PosW'(DataB);  // saturates: offsets that far never matter
        end
        if (32'(hb_q) < MaskBeats) begin
          hb_d = hb_q + HbW'(1);
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      f_q   <= FieldsZero;
      pos_q <= '0;
      hb_q  <= '0;
      crc_q <= Crc32Init;
    end else begin
      f_q   <= f_d;
      pos_q <= pos_d;
      hb_q  <= hb_d;
      crc_q <= crc_d;
    end
  end

  if (DataB == 1) begin : gen_prev
    always_ff @(posedge clk_i) begin
      if (in_tvalid_i) begin
        prev_q <= icrc_data;
      end
    end
  end else begin : gen_no_prev
    assign prev_q = '0;
    logic unused_fold;
    assign unused_fold = ^fold_data;
  end

  // ---------------------------------------------------------------------------
  // P_Key table and the registered match of the packet's P_Key (f_q.pkey)
  // ---------------------------------------------------------------------------
  logic pkey_hit;  // the packet's P_Key matches a table entry (settled before tlast)
  logic err_hdr, err_pkey, err_qkey, is_qp1, qp1_bad, global_q, grh_short;
  logic good_link;

  if (!PkeyRam) begin : gen_pkey_ff
    localparam int unsigned       PkeyGrps = (PkeyEntries + 7) / 8;
    logic [PkeyEntries-1:0][15:0] pkey_tab_q;
    logic [PkeyGrps-1:0]          pkey_grp_q;  // a match in entries 8g..8g+7

    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        pkey_tab_q    <= '0;
        pkey_tab_q[0] <= DefaultPkey;
      end else if (pkey_we_i && 32'(pkey_idx_i) < PkeyEntries) begin
        pkey_tab_q[pkey_idx_i] <= pkey_wdata_i;
      end
    end

    assign pkey_rdata_o = (32'(pkey_idx_i) < PkeyEntries) ? pkey_tab_q[pkey_idx_i] : 16'h0000;

    // rxe pkey_match(entry, packet): low 15 bits equal and non-zero, one of the
    // two a full member (bit 15). Registered per group of 8 entries (timing:
    // 64 comparators and one OR tree in one cycle were the CA port's critical
    // path); the groups are ORed at tlast.
    function automatic logic [PkeyGrps-1:0] pkey_match(
        logic [PkeyEntries-1:0][15:0] tab, logic [15:0] pkey);
      logic [PkeyGrps-1:0] g;
      g = '0;
      for (int unsigned i = 0; i < PkeyEntries; i++) begin
        if (tab[i][14:0] != 15'd0 && tab[i][14:0] == pkey[14:0] && (tab[i][15] || pkey[15])) begin
          g[i / 8] = 1'b1;
        end
      end
      return g;
    endfunction

    // The match changes only in the cycle after the packet's P_Key or the
    // table does (pkey_chg_q): only then is the register loaded, the same
    // value in every cycle as loading it always, and a simulator evaluates
    // the comparators only then.
    logic pkey_chg_q;

    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        pkey_grp_q <= '0;
        pkey_chg_q <= 1'b1;
      end else begin
        pkey_chg_q <= f_d.pkey != f_q.pkey || pkey_we_i;
        if (pkey_chg_q) begin
          pkey_grp_q <= pkey_match(pkey_tab_q, f_q.pkey);
        end
      end
    end

    assign pkey_hit = |pkey_grp_q;
  end else begin : gen_pkey_ram
    // Beats from the one holding a GMP's P_Key's last byte to its tlast (the
    // fewer of local and global; the GMP is 290 / 330 bytes).
    localparam int unsigned ScanBeatsL = (4 * GmpPktLen + 2 - 1) / DataB - (PkeyLastLocal / DataB);
    localparam int unsigned ScanBeatsG = (4 * GmpPktLenGrh + 2 - 1) / DataB -
                                         ((PkeyLastLocal + GrhBytes) / DataB);
    localparam int unsigned ScanBeats  = ScanBeatsL < ScanBeatsG ? ScanBeatsL : ScanBeatsG;
    localparam int unsigned EW         = PkeyEntries > 1 ? $clog2(PkeyEntries) : 1;
    if (PkeyEntries + 2 > ScanBeats) begin : gen_scan_check
      $fatal(1, "%m: PkeyRam scans %0d entries, only %0d beats at DataW %0d", PkeyEntries,
             ScanBeats, DataW);
    end

    (* ram_style = "block" *) logic [15:0] tab_scan [PkeyEntries];
    // tab_rd: a write and a read of one entry in one cycle happen only at a
    // RegPkeyData write (the index steps after it); that read's output is
    // never used (a register read request never comes with a write), so the
    // RAM needs no collision logic. tab_scan keeps it (a write during a
    // scan reads the old entry, never a mixed one).
    (* ram_style = "block", no_rw_check *) logic [15:0] tab_rd [PkeyEntries];
    logic [PkeyEntries-1:0] wr_q;         // entry written since reset
    logic                   we;
    logic [EW-1:0]          widx, ridx;
    logic [15:0]            scan_data_q, rd_data_q;
    logic                   scan_wr_q, scan_zero_q, rd_wr_q, rd_zero_q, rd_oor_q;
    logic [EW-1:0]          sc_idx_q;     // entry the scan reads this cycle
    logic                   sc_run_q;     // reading entries
    logic                   sc_cmp_q;     // the entry read last cycle is compared this cycle
    logic                   sc_last_q;    // ... and it is the last one
    logic                   sc_done_q;    // the scan has compared every entry
    logic                   cap;          // the P_Key's last byte is taken this beat
    logic [15:0]            entry;        // the entry compared this cycle
    logic [8:0]             pk;
    logic                   pkey_hit_q;   // a scanned entry matched

    assign we   = pkey_we_i && 32'(pkey_idx_i) < PkeyEntries;
    assign widx = EW'(pkey_idx_i);
    assign ridx = EW'(pkey_idx_i);

    always_ff @(posedge clk_i) begin
      if (we) begin
        tab_scan[widx] <= pkey_wdata_i;
        tab_rd[widx]   <= pkey_wdata_i;
      end
      scan_data_q <= tab_scan[sc_idx_q];
      rd_data_q   <= tab_rd[ridx];
    end

    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        wr_q <= '0;
      end else if (we) begin
        wr_q[widx] <= 1'b1;
      end
    end

    always_ff @(posedge clk_i) begin
      scan_wr_q   <= wr_q[sc_idx_q];
      scan_zero_q <= sc_idx_q == '0;
      rd_wr_q     <= wr_q[ridx];
      rd_zero_q   <= ridx == '0;
      rd_oor_q    <= 32'(pkey_idx_i) >= PkeyEntries;
    end

    assign pkey_rdata_o = rd_oor_q ? 16'h0000 : rd_wr_q ? rd_data_q :
                          rd_zero_q ? DefaultPkey : 16'h0000;
    assign entry        = scan_wr_q ? scan_data_q : scan_zero_q ? DefaultPkey : 16'h0000;

    always_comb begin
      pk  = pick(pos_q, in_tdata_i, in_tkeep_i, grh, PbBthPkey + 1);
      cap = in_tvalid_i && pk[8];
    end
    logic unused_pk;
    assign unused_pk = ^pk[7:0];  // only its "this beat" flag

    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        sc_idx_q   <= '0;
        sc_run_q   <= 1'b0;
        sc_cmp_q   <= 1'b0;
        sc_last_q  <= 1'b0;
        sc_done_q  <= 1'b0;
        pkey_hit_q <= 1'b0;
      end else begin
        sc_cmp_q  <= sc_run_q;
        sc_last_q <= sc_run_q && 32'(sc_idx_q) == PkeyEntries - 1;
        if (sc_run_q) begin
          sc_run_q <= 32'(sc_idx_q) != PkeyEntries - 1;
          sc_idx_q <= sc_idx_q + EW'(1);
        end
        if (sc_cmp_q) begin
          if (entry[14:0] != 15'd0 && entry[14:0] == f_q.pkey[14:0] &&
              (entry[15] || f_q.pkey[15])) begin
            pkey_hit_q <= 1'b1;
          end
          sc_done_q <= sc_last_q;
        end
        // a new P_Key (in f_q from the next cycle): start over
        if (cap) begin
          sc_idx_q   <= '0;
          sc_run_q   <= 1'b1;
          sc_cmp_q   <= 1'b0;
          sc_last_q  <= 1'b0;
          sc_done_q  <= 1'b0;
          pkey_hit_q <= 1'b0;
        end
      end
    end

`ifndef SYNTHESIS
    always_ff @(posedge clk_i) begin
      if (rst_ni && good_link && is_qp1 && !err_hdr) begin
        assert (sc_done_q) else $error("%m: P_Key verdict before the table scan finished");
      end
    end
`endif
    assign pkey_hit = pkey_hit_q;
  end

  // ---------------------------------------------------------------------------
  // Verdict at tlast. Every field the header checks read lies in an earlier
  // beat than tlast of any packet they could accept (a GMP is 290/330 bytes;
  // DestQP of a packet long enough for its BTH ends at least 10 bytes before
  // tlast), so they read f_q; the ICRC is decided by this beat's CRC, which
  // is registered (icrc_crc_q) and compared with the residue a cycle later,
  // at the output stage: every other check's verdict is registered with it
  // (out_rest_q) and the output's reason combines the two.
  // ---------------------------------------------------------------------------

  always_comb begin
    global_q  = (f_q.lnh == LnhIbaGlobal);
    grh_short = global_q && (32'(f_q.pktlen) < MinPktLenGrh);
    is_qp1   = f_q.qp_zero[0] && f_q.qp_zero[1] && f_q.qp_one;
    qp1_bad  = !f_q.op_ok || !f_q.tver_ok ||
               (32'(f_q.pktlen) != (global_q ? GmpPktLenGrh : GmpPktLen)) ||
               !f_q.bv_ok || f_q.mc_lid || f_q.mc_dr;
    err_hdr  = grh_short || (global_q && !f_q.nxthdr_ok) ||
               (f_q.qp_zero == 3'b111) || (is_qp1 && qp1_bad);
    err_pkey = is_qp1 && !pkey_hit;
    err_qkey = is_qp1 && (f_q.qkey_ok != 4'hF);
  end

  assign good_link = in_tvalid_i && in_tlast_i && !in_tuser_i;

  gsi_reason_e reason_rest;  // the first check but the ICRC the packet fails (on tlast)
  always_comb begin
    if (in_tuser_i) begin
      reason_rest = GsiLinkDrop;
    end else if (err_hdr) begin
      reason_rest = GsiBadHdr;
    end else if (err_pkey) begin
      reason_rest = GsiPkeyViol;
    end else if (err_qkey) begin
      reason_rest = GsiQkeyViol;
    end else begin
      reason_rest = GsiOk;
    end
  end

  // ---------------------------------------------------------------------------
  // Output register stage
  // ---------------------------------------------------------------------------
  logic             out_valid_q, out_last_q;
  logic             out_icrc_chk_q;  // the output's tlast beat: its ICRC is checked
  logic [31:0]      icrc_crc_q;      // ... and the CRC state after it
  gsi_reason_e      out_rest_q;      // ... and reason_rest (GsiOk on other beats)
  logic             ev_good_q;       // the output's tlast beat had a good link
  logic             out_qp1_q;       // ... and was for QP1
  logic             icrc_bad;
  logic             out_user;
  gsi_reason_e      out_reason;
  logic             ev_icrc, ev_hdr, ev_pkey, ev_qkey, ev_gmp;
  logic [DataW-1:0] out_data_q;
  logic [DataB-1:0] out_keep_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      out_valid_q    <= 1'b0;
      out_last_q     <= 1'b0;
      out_icrc_chk_q <= 1'b0;
      out_rest_q     <= GsiOk;
      ev_good_q      <= 1'b0;
      out_qp1_q      <= 1'b0;
    end else begin
      out_valid_q <= in_tvalid_i;
      if (in_tvalid_i) begin
        out_last_q     <= in_tlast_i;
        out_icrc_chk_q <= in_tlast_i && !in_tuser_i && !grh_short;
        out_rest_q     <= in_tlast_i ? reason_rest : GsiOk;
        out_qp1_q      <= is_qp1;
      end
      ev_good_q <= good_link;
    end
  end

  always_ff @(posedge clk_i) begin
    if (in_tvalid_i) begin
      icrc_crc_q <= crc_tail;
    end
  end

  // the ICRC comes after the link and before every other check
  assign icrc_bad   = out_icrc_chk_q && (icrc_crc_q != Crc32Residue);
  assign out_reason = icrc_bad ? GsiIcrcErr : out_rest_q;
  assign out_user   = out_reason != GsiOk;
  assign ev_icrc    = ev_good_q && (out_reason == GsiIcrcErr);
  assign ev_hdr     = ev_good_q && (out_reason == GsiBadHdr);
  assign ev_pkey    = ev_good_q && (out_reason == GsiPkeyViol);
  assign ev_qkey    = ev_good_q && (out_reason == GsiQkeyViol);
  assign ev_gmp     = ev_good_q && (out_reason == GsiOk) && out_qp1_q;

  // Datapath register: no reset needed, qualified by out_valid_q.
  always_ff @(posedge clk_i) begin
    if (in_tvalid_i) begin
      out_data_q <= in_tdata_i;
      out_keep_q <= in_tkeep_i;
    end
  end

  assign out_tdata_o   = out_data_q;
  assign out_tkeep_o   = out_keep_q;
  assign out_tvalid_o  = out_valid_q;
  assign out_tlast_o   = out_last_q;
  assign out_tuser_o    = out_user;
  assign out_reason_o   = out_reason;
  assign ev_icrc_err_o  = ev_icrc;
  assign ev_bad_hdr_o   = ev_hdr;
  assign ev_pkey_viol_o = ev_pkey;
  assign ev_qkey_viol_o = ev_qkey;
  assign ev_gmp_o       = ev_gmp;

  // ---------------------------------------------------------------------------
  // Cover points: each GSI check discards a data-VL packet (ibspec §6), and a
  // GMP for QP1 is accepted
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  // every cover point below samples at the clock edge, not in reset
  default clocking cov_clk @(posedge clk_i); endclocking
  default disable iff (!rst_ni);
  GSI_link_drop: cover property (out_valid_q && out_last_q && out_reason == GsiLinkDrop);
  GSI_icrc:      cover property (ev_icrc);
  GSI_bad_hdr:   cover property (ev_hdr);
  GSI_pkey:      cover property (ev_pkey);
  GSI_qkey:      cover property (ev_qkey);
  GSI_gmp_ok:    cover property (ev_gmp);
  GSI_data_ok:   cover property (ev_good_q && out_reason == GsiOk && !out_qp1_q);
`endif

  // ---------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      if (in_tvalid_i && !in_tlast_i) begin
        assert (in_tkeep_i == '1)
          else $error("%m: partial tkeep on a beat without tlast");
      end
      assert (32'(ev_icrc) + 32'(ev_hdr) + 32'(ev_pkey) + 32'(ev_qkey) +
              32'(ev_gmp) <= 1)
        else $error("%m: more than one event for a packet");
      if (ev_icrc || ev_hdr || ev_pkey || ev_qkey || ev_gmp) begin
        assert (out_valid_q && out_last_q)
          else $error("%m: event without the output tlast beat");
      end
      if (ev_icrc || ev_hdr || ev_pkey || ev_qkey) begin
        assert (out_user) else $error("%m: a packet with an error event not discarded");
      end
      if (out_valid_q && out_last_q) begin
        assert (out_user == (out_reason != GsiOk))
          else $error("%m: discard flag and reason disagree");
      end
      // A QP1 packet that reaches the P_Key verdict ends at least two beats
      // after the beat holding its P_Key's last byte, so pkey_hit is the
      // match of its own P_Key (captured into f_q, then registered).
      if (good_link && is_qp1 && !err_hdr) begin
        assert (32'(pos_q) >= ((global_q ? PkeyLastLocal + GrhBytes : PkeyLastLocal) / DataB + 2) *
                              DataB)
          else $error("%m: P_Key verdict before its match settled");
      end
      if (ev_gmp) begin
        assert (!out_user) else $error("%m: a good GMP discarded");
      end
    end
  end
`endif

endmodule
