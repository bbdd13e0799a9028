// smi_sq: SMI send engine of a CA port. Arbitrates round-robin, at packet
// boundaries, between three MAD sources (SMA responses, SM requests, traps),
// builds LRH/BTH/DETH (VL15, UD SEND Only to QP0), prepends them to the MAD,
// runs the directed-route send rules of a CA (ibspec §5) with the new hop
// pointer written into MAD byte 6 on the fly, appends the ICRC (the beats:
// smi_tx_emit) and writes the 288-byte packet (LRH..ICRC) into the VL15 TX
// ib_pkt_fifo. The header's first beat is written in the cycle the chosen
// source's first MAD beat is valid; the DR accept check (needs bytes late
// in the MAD) decides wr_ok_o at the last beat. Originator rule
// (handle_outgoing_dr_smp, docs/fabric.md): a DR SMP with
// (D ? DrDLID : DrSLID) != 0xFFFF gets no send rules and goes out as is,
// LID-routed. DrDLID/DrSLID arrive after the hop pointer has been
// written, so the hop pointer rewrite follows the LRH addressing: an SM
// request's DLID, an SMA response's request DLID (0xFFFF: DR part, send
// rules; else LID-routed, as is); an SMP whose DrDLID/DrSLID disagrees with
// that is discarded (ev_dr_discard_o).
module smi_sq
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 8, 32, 64 or 128
  localparam int unsigned DataB = DataW / 8
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // port configuration
  input  logic [15:0]        port_lid_i,
  input  logic [2:0]         port_lmc_i,
  input  logic [7:0]         port_num_i,
  input  logic [15:0]        master_sm_lid_i,
  input  logic [3:0]         master_sm_sl_i,
  // SMA responses; meta = the request's RX meta
  input  logic [DataW-1:0]   sma_tx_tdata_i,
  input  logic               sma_tx_tvalid_i,
  input  logic               sma_tx_tlast_i,
  output logic               sma_tx_tready_o,
  input  logic [15:0]        sma_tx_slid_i,
  input  logic [15:0]        sma_tx_dlid_i,
  input  logic [3:0]         sma_tx_sl_i,
  // SM requests; meta = address handle
  input  logic [DataW-1:0]   sm_tx_tdata_i,
  input  logic               sm_tx_tvalid_i,
  input  logic               sm_tx_tlast_i,
  output logic               sm_tx_tready_o,
  input  logic [15:0]        sm_tx_dlid_i,
  input  logic [3:0]         sm_tx_sl_i,
  input  logic [6:0]         sm_tx_path_bits_i,
  // traps (to the master SM)
  input  logic [DataW-1:0]   trap_tx_tdata_i,
  input  logic               trap_tx_tvalid_i,
  input  logic               trap_tx_tlast_i,
  output logic               trap_tx_tready_o,
  // VL15 TX buffer write port
  output logic               wr_valid_o,
  output logic [DataW-1:0]   wr_data_o,
  output logic [DataB-1:0]   wr_keep_o,
  output logic               wr_end_o,
  output logic               wr_ok_o,
  input  logic               wr_slot_free_i,
  // event pulses (with wr_end_o)
  output logic               ev_pkt_o,         // packet committed
  output logic               ev_dr_discard_o,  // DR send rules said discard
  output logic               ev_local_o        // DR SMP for the local node, not sent
);

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end

  // Packet beat k holds packet bytes k*DataB..; MAD byte i is packet byte
  // MadOffset+i, in packet beat HdrBeats + i / DataB (the beat layout:
  // smi_tx_emit). DataW 8 (Lag = 1): MAD byte m goes out in beat
  // HdrBeats + m, but is taken from the source a beat earlier (held in
  // smi_tx_emit), so that the hop pointer (MAD byte 6) is rewritten with the
  // hop count (byte 7) in hand; the ICRC then takes 4 beats.
  localparam int unsigned Lag       = (DataB == 1) ? 1 : 0;
  localparam int unsigned HdrBeats = MadOffset / DataB;
  localparam int unsigned MadBeats = MadBytes / DataB;
  localparam int unsigned PktBeats = SmpPktBytes / DataB;
  localparam int unsigned MadEnd   = HdrBeats + MadBeats;  // first tail beat
  localparam int unsigned KW       = $clog2(PktBeats);
  localparam int unsigned PbHopPtr = MadOffset + MbHopPtr;

  typedef enum logic [1:0] {
    SrcSma  = 2'd0,
    SrcSm   = 2'd1,
    SrcTrap = 2'd2
  } src_e;

  // MAD fields the DR send rules need (those only compared with a constant
  // or the port number as compare flags, taken with their byte)
  typedef struct packed {
    logic        dir;
    logic [7:0]  hop_ptr;
    logic [7:0]  hop_cnt;
    logic [1:0]  dr_slid_ff;  // DrSLID bytes = 0xFF (permissive)
    logic [1:0]  dr_dlid_ff;  // DrDLID bytes = 0xFF
    logic        ip1_port;    // InitialPath[1] = this port
    logic        rp_port;     // ReturnPath[hop_cnt] = this port
  } fields_t;

  typedef struct packed {
    logic       discard;
    logic       local_smp;
    logic [7:0] hp_new;
  } dr_tx_t;

  // DR send rules of a CA (smi_handle_dr_smp_send, is_switch = 0), then the
  // originator's local check (handle_outgoing_dr_smp: smi_check_local_smp or
  // smi_check_local_returning_smp). hc = 0 with D = 0 is always local.
  function automatic dr_tx_t dr_send_ca(fields_t f);
    dr_tx_t     r;
    logic [8:0] hc1;
    logic       perm_dlid;
    logic       perm_slid;
    r         = '{discard: 1'b0, local_smp: 1'b0, hp_new: f.hop_ptr};
    hc1       = {1'b0, f.hop_cnt} + 9'd1;
    perm_dlid = &f.dr_dlid_ff;
    perm_slid = &f.dr_slid_ff;
    if (32'(f.hop_cnt) >= MaxPathHops) begin
      r.discard = 1'b1;                                   // C14-6
    end else if (!f.dir) begin
      if (f.hop_cnt != 8'd0 && f.hop_ptr == 8'd0) begin
        r.hp_new  = 8'd1;                                 // C14-9:1 originator
        r.discard = !f.ip1_port;
      end else if (f.hop_ptr != 8'd0 && f.hop_ptr < f.hop_cnt) begin
        r.discard = 1'b1;                                 // C14-9:2 switch only
      end else if (f.hop_ptr == f.hop_cnt) begin
        r.hp_new  = f.hop_ptr + 8'd1;                     // C14-9:3
        r.discard = !perm_dlid;
      end else if ({1'b0, f.hop_ptr} != hc1) begin
        r.discard = 1'b1;                                 // C14-9:5 (C14-9:4 passes)
      end
    end else begin
      if (f.hop_cnt != 8'd0 && {1'b0, f.hop_ptr} == hc1) begin
        r.hp_new  = f.hop_cnt;                            // C14-13:1 responder
        r.discard = !f.rp_port;
      end else if (f.hop_ptr >= 8'd2 && f.hop_ptr <= f.hop_cnt) begin
        r.discard = 1'b1;                                 // C14-13:2 switch only
      end else if (f.hop_ptr == 8'd1) begin
        r.hp_new  = 8'd0;                                 // C14-13:3
        r.discard = !perm_slid;
      end else if (f.hop_ptr != 8'd0) begin
        r.discard = 1'b1;                                 // C14-13:5 (C14-13:4 passes)
      end
    end
    if (32'(f.hop_cnt) < MaxPathHops && !f.dir && f.hop_cnt == 8'd0) begin
      r.local_smp = 1'b1;
      r.discard   = 1'b0;
    end else if (!r.discard) begin
      r.local_smp = f.dir ? (r.hp_new == 8'd0) : ({1'b0, r.hp_new} == hc1);
    end
    return r;
  endfunction

  smi_tx_state_e state_q, state_d;
  src_e         sel_q, sel_d;        // source of the current packet
  src_e         rr_q, rr_d;          // last source granted
  logic [KW-1:0] k_q, k_d;           // packet beat index
  logic [23:0]  psn_q, psn_d;
  fields_t      f_q, f_d, f_cur;
  logic [7:0]   cls_q, cls_d, cls_cur;   // MAD MgmtClass
  logic [15:0]  dlid_q, dlid_d;
  logic [15:0]  slid_q, slid_d;
  logic [3:0]   sl_q, sl_d;
  logic         asis_q, asis_d;      // LRH DLID not permissive: no send rules

  // ---------------------------------------------------------------------------
  // Arbitration
  // ---------------------------------------------------------------------------
  logic [2:0] req;
  logic       grant_any;
  src_e       grant;

  assign req = {trap_tx_tvalid_i, sm_tx_tvalid_i, sma_tx_tvalid_i};

  // Round robin: the source after the last granted one goes first.
  always_comb begin
    src_e order [3];
    unique case (rr_q)
      SrcSma:  order = '{SrcSm, SrcTrap, SrcSma};
      SrcSm:   order = '{SrcTrap, SrcSma, SrcSm};
      default: order = '{SrcSma, SrcSm, SrcTrap};
    endcase
    grant_any = |req;
    grant     = order[2];
    if (req[order[1]]) grant = order[1];
    if (req[order[0]]) grant = order[0];
  end

  logic start;
  assign start = (state_q == TxIdle) && grant_any && wr_slot_free_i;

  // Header addressing of the granted source (used in the start cycle).
  logic [15:0] dlid_new;
  logic [15:0] slid_new;
  logic [3:0]  sl_new;
  logic [6:0]  lmc_mask;

  always_comb begin
    lmc_mask = 7'(~(8'hFF << port_lmc_i));  // (1 << LMC) - 1, without a carry chain
    unique case (grant)
      SrcSma: begin
        dlid_new = sma_tx_slid_i;
        slid_new = sma_tx_dlid_i;
        sl_new   = sma_tx_sl_i;
      end
      SrcSm: begin
        dlid_new = sm_tx_dlid_i;
        slid_new = (port_lid_i == 16'd0) ? PermissiveLid
                 : (port_lid_i | {9'd0, sm_tx_path_bits_i & lmc_mask});
        sl_new   = sm_tx_sl_i;
      end
      default: begin
        dlid_new = master_sm_lid_i;
        slid_new = (port_lid_i == 16'd0) ? PermissiveLid : port_lid_i;
        sl_new   = master_sm_sl_i;
      end
    endcase
  end

  // ---------------------------------------------------------------------------
  // Selected source
  // ---------------------------------------------------------------------------
  logic [DataW-1:0] src_data;
  logic             src_valid;
  logic             src_last;

  always_comb begin
    unique case (sel_q)
      SrcSma: begin
        src_data  = sma_tx_tdata_i;
        src_valid = sma_tx_tvalid_i;
        src_last  = sma_tx_tlast_i;
      end
      SrcSm: begin
        src_data  = sm_tx_tdata_i;
        src_valid = sm_tx_tvalid_i;
        src_last  = sm_tx_tlast_i;
      end
      default: begin
        src_data  = trap_tx_tdata_i;
        src_valid = trap_tx_tvalid_i;
        src_last  = trap_tx_tlast_i;
      end
    endcase
  end

  logic in_mad;
  logic take;   // a source beat is consumed
  // A source beat is taken in TxMad (Lag = 1: from the last header beat to
  // the last MAD beat but one).
  if (Lag == 0) begin : gen_take_now
    assign in_mad = (state_q == TxMad);
  end else begin : gen_take_early
    assign in_mad = ((state_q == TxMad) && (32'(k_q) < MadEnd - 1)) ||
                    ((state_q == TxHdr) && (32'(k_q) == HdrBeats - 1));
  end
  assign take   = in_mad && src_valid;

  assign sma_tx_tready_o  = in_mad && (sel_q == SrcSma);
  assign sm_tx_tready_o   = in_mad && (sel_q == SrcSm);
  assign trap_tx_tready_o = in_mad && (sel_q == SrcTrap);

  // MAD fields including the current source beat. MAD byte m arrives in
  // lane m % DataB of packet beat HdrBeats + m / DataB - Lag: compare k_q
  // with a constant. Returns {hit, byte}.
  function automatic logic [8:0] pick(logic [KW-1:0] k, logic [DataW-1:0] data,
                                      int unsigned m);
    int unsigned lane;
    lane = m % DataB;
    return {32'(k) == HdrBeats + m / DataB - Lag, data[8*lane +: 8]};
  endfunction

  logic [KW-1:0] rp_k_q;     // beat and lane of ReturnPath[hop_cnt], from
  logic [7:0]    rp_lane_q;  // f_q.hop_cnt (MAD byte 7), registered

  always_comb begin
    logic [8:0] p;
    f_cur   = f_q;
    cls_cur = cls_q;
    p = pick(k_q, src_data, MbMgmtClass);
    if (p[8]) cls_cur = p[7:0];
    p = pick(k_q, src_data, MbStatus);
    if (p[8]) f_cur.dir = p[7];
    p = pick(k_q, src_data, MbHopPtr);
    if (p[8]) f_cur.hop_ptr = p[7:0];
    p = pick(k_q, src_data, MbHopCnt);
    if (p[8]) f_cur.hop_cnt = p[7:0];
    p = pick(k_q, src_data, MbDrSlid);
    if (p[8]) f_cur.dr_slid_ff[1] = &p[7:0];
    p = pick(k_q, src_data, MbDrSlid + 1);
    if (p[8]) f_cur.dr_slid_ff[0] = &p[7:0];
    p = pick(k_q, src_data, MbDrDlid);
    if (p[8]) f_cur.dr_dlid_ff[1] = &p[7:0];
    p = pick(k_q, src_data, MbDrDlid + 1);
    if (p[8]) f_cur.dr_dlid_ff[0] = &p[7:0];
    p = pick(k_q, src_data, MbInitialPath + 1);
    if (p[8]) f_cur.ip1_port = p[7:0] == port_num_i;
    // ReturnPath[hop_cnt]; hop_cnt (MAD byte 7) is in an earlier beat
    if (k_q == rp_k_q) begin
      for (int unsigned j = 0; j < DataB; j++) begin
        if (32'(rp_lane_q) == j) begin
          f_cur.rp_port = src_data[8*j +: 8] == port_num_i;
        end
      end
    end
  end

  logic [8:0] rp_moff;  // MAD offset of ReturnPath[hop_cnt]
  assign rp_moff = 9'(MbReturnPath) + {1'b0, f_q.hop_cnt};

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rp_k_q    <= '1;
      rp_lane_q <= '0;
    end else begin
      rp_k_q    <= KW'(HdrBeats - Lag) + KW'(rp_moff / 9'(DataB));
      rp_lane_q <= 8'(rp_moff % 9'(DataB));
    end
  end

  // The new hop pointer written into MAD byte 6, in the few equality tests it
  // needs. It equals dr_send_ca(...).hp_new for every SMP the send rules
  // accept (sent or local); for a discarded one the byte never leaves
  // (wr_ok_o = 0).
  //   D = 0: hp = 0 (originator, C14-9:1) or hp = hc (C14-9:3) -> hp + 1
  //   D = 1: hp = hc + 1 (C14-13:1) or hp = 1 (C14-13:3)       -> hp - 1
  function automatic logic [7:0] hp_new_ca(logic dir, logic [7:0] hp, logic [7:0] hc);
    if (!dir) begin
      return (hp == 8'd0 || hp == hc) ? hp + 8'd1 : hp;
    end
    return ({1'b0, hp} == {1'b0, hc} + 9'd1 || hp == 8'd1) ? hp - 8'd1 : hp;
  endfunction

  // The rewrite needs D, hop pointer and hop count (MAD bytes 4, 6, 7). When
  // the beat that carries them was taken before the hop pointer's packet beat
  // (DataW 64, 128: the pointer goes out from the held bytes), they are in
  // f_q already and the rule runs from registers; at DataW 32 they arrive in
  // the very beat that is rewritten.
  logic       wr_beat;     // a packet beat goes to the TX buffer (FSM)
  logic       hp_dr;       // the hop pointer is rewritten: class 0x81, send rules
  logic [7:0] hp_new_cur;
  assign hp_dr = (cls_cur == ClassSubnDr) && !asis_q;
  if (HdrBeats + MbHopCnt / DataB - Lag < PbHopPtr / DataB) begin : gen_dr_from_q
    assign hp_new_cur = hp_new_ca(f_q.dir, f_q.hop_ptr, f_q.hop_cnt);
  end else if (DataB == 1) begin : gen_dr_from_src
    // DataW 8: the hop pointer's beat takes the hop count (MAD byte 7) from
    // the source (a beat is only written with the source valid); D and the
    // hop pointer are registered. The same rule as hp_new_ca, with the
    // incoming byte only in equality compares (hp == hc + 1 as hp - 1 == hc,
    // hp != 0), not behind an adder: the iCE40's critical path.
    logic [7:0] hp, hc;
    logic       up, down;
    assign hp   = f_q.hop_ptr;
    assign hc   = src_data[7:0];
    assign up   = !f_q.dir && (hp == 8'd0 || hp == hc);
    assign down = f_q.dir && ((hp != 8'd0 && hp - 8'd1 == hc) || hp == 8'd1);
    assign hp_new_cur = up ? hp + 8'd1 : (down ? hp - 8'd1 : hp);
`ifndef SYNTHESIS
    always_ff @(posedge clk_i) begin
      // the rewrite beat (smi_tx_emit): the hop pointer's, class 0x81
      if (rst_ni && state_q == TxMad && 32'(k_q) == PbHopPtr && hp_dr && wr_beat) begin
        assert (hp_new_cur == hp_new_ca(f_cur.dir, f_cur.hop_ptr, f_cur.hop_cnt))
          else $error("%m: DataW 8 hop pointer rule differs from hp_new_ca");
      end
    end
`endif
  end else begin : gen_dr_from_cur
    assign hp_new_cur = hp_new_ca(f_cur.dir, f_cur.hop_ptr, f_cur.hop_cnt);
  end

  // ---------------------------------------------------------------------------
  // Output beat: header, realigned MAD, hop pointer rewrite, ICRC (shared
  // with sw_smi_sq)
  // ---------------------------------------------------------------------------
  smi_tx_emit #(.DataW(DataW)) u_emit (
    .clk_i,
    .rst_ni,
    .state_i      (state_q),
    .k_i          (k_q),
    .wr_beat_i    (wr_beat),
    .wr_end_i     (wr_end_o),
    .dlid_new_i   (dlid_new),
    .slid_new_i   (slid_new),
    .sl_new_i     (sl_new),
    .dlid_i       (dlid_q),
    .slid_i       (slid_q),
    .sl_i         (sl_q),
    .psn_i        (psn_q),
    .src_data_i   (src_data),
    .take_i       (take),
    .hp_dr_i      (hp_dr),
    .hp_new_i     (hp_new_cur),
    .beat_o       (wr_data_o)
  );

  // ---------------------------------------------------------------------------
  // FSM
  // ---------------------------------------------------------------------------
  logic is_dr;

  assign is_dr = (cls_q == ClassSubnDr);

  // (D ? DrDLID : DrSLID) = 0xFFFF: the send rules apply (MAD bytes 4, 32..35)
  logic own_perm;
  assign own_perm = f_q.dir ? (&f_q.dr_dlid_ff) : (&f_q.dr_slid_ff);

  // The packet's fate at its last beat (wr_ok_o, the events, the PSN step).
  typedef struct packed {
    logic ok;         // written: wr_ok_o, ev_pkt_o, PSN + 1
    logic discard;    // ev_dr_discard_o
    logic local_smp;  // ev_local_o
  } tail_t;

  function automatic tail_t tail_of(logic dr, logic perm, logic asis, logic fin_discard,
                                    logic fin_local);
    tail_t t;
    t = '0;
    if (dr && perm == asis) begin
      t.discard = 1'b1;     // DrDLID/DrSLID disagrees with the LRH DLID
    end else if (dr && !perm) begin
      t.ok = 1'b1;          // originator rule: sent as is
    end else if (dr && fin_discard) begin
      t.discard = 1'b1;
    end else if (dr && fin_local) begin
      t.local_smp = 1'b1;
    end else begin
      t.ok = 1'b1;
    end
    return t;
  endfunction

  // Every field it depends on but ReturnPath[hop_cnt] (MAD bytes <= 129, the
  // class, the LRH addressing) is registered beats before the last MAD beat,
  // so the verdict for both ReturnPath outcomes is computed from registers a
  // cycle ahead; the last beat only picks one with the captured flag
  // (DataW 8: the whole MAD is in f_q 4 beats before the last one: one
  // registered verdict).
  tail_t tail;
  if (DataB == 1) begin : gen_tail_one
    tail_t  tail_q;
    dr_tx_t fin;
    assign fin = dr_send_ca(f_q);
    logic unused_fin;  // only the verdict is used
    assign unused_fin = ^fin.hp_new;
    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        tail_q <= '0;
      end else begin
        tail_q <= tail_of(is_dr, own_perm, asis_q, fin.discard, fin.local_smp);
      end
    end
    assign tail = tail_q;
  end else begin : gen_tail_two
    fields_t f_rp_ok, f_rp_bad;
    dr_tx_t  fin_ok, fin_bad;
    tail_t   tail_ok_q, tail_bad_q;
    always_comb begin
      f_rp_ok          = f_q;
      f_rp_ok.rp_port  = 1'b1;
      f_rp_bad         = f_q;
      f_rp_bad.rp_port = 1'b0;
      fin_ok           = dr_send_ca(f_rp_ok);
      fin_bad          = dr_send_ca(f_rp_bad);
    end
    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        tail_ok_q  <= '0;
        tail_bad_q <= '0;
      end else begin
        tail_ok_q  <= tail_of(is_dr, own_perm, asis_q, fin_ok.discard, fin_ok.local_smp);
        tail_bad_q <= tail_of(is_dr, own_perm, asis_q, fin_bad.discard, fin_bad.local_smp);
      end
    end
    assign tail = f_q.rp_port ? tail_ok_q : tail_bad_q;
    logic unused_fin;  // only the verdicts are used
    assign unused_fin = ^{fin_ok.hp_new, fin_bad.hp_new};
  end

  always_comb begin
    state_d  = state_q;
    sel_d    = sel_q;
    rr_d     = rr_q;
    k_d      = k_q;
    psn_d    = psn_q;
    f_d      = f_q;
    cls_d    = cls_q;
    dlid_d   = dlid_q;
    slid_d   = slid_q;
    sl_d     = sl_q;
    asis_d   = asis_q;
    wr_beat  = 1'b0;
    wr_end_o = 1'b0;
    wr_ok_o  = 1'b0;
    ev_pkt_o        = 1'b0;
    ev_dr_discard_o = 1'b0;
    ev_local_o      = 1'b0;

    unique case (state_q)
      TxIdle: begin
        if (start) begin
          wr_beat = 1'b1;
          sel_d   = grant;
          rr_d    = grant;
          dlid_d  = dlid_new;
          slid_d  = slid_new;
          sl_d    = sl_new;
          // LID-routed segment: an SM request to a real DLID (head), or a
          // response to a request that arrived at a real DLID (tail: the
          // response's SLID field is the request's DLID). A DR-part
          // response goes to the requester's SLID, which is a real LID
          // when the SM's port has one: not the test.
          asis_d  = (grant == SrcSma) ? (slid_new != PermissiveLid)
                                      : (dlid_new != PermissiveLid);
          f_d     = '0;
          cls_d   = '0;
          k_d     = KW'(1);
          state_d = (HdrBeats == 1) ? TxMad : TxHdr;
        end
      end
      TxHdr: begin
        // Lag = 1: the last header beat waits for the first MAD byte
        wr_beat = !in_mad || src_valid;
        if (take) begin
          f_d   = f_cur;
          cls_d = cls_cur;
        end
        if (wr_beat) begin
          k_d = k_q + KW'(1);
          if (32'(k_q) == HdrBeats - 1) begin
            state_d = TxMad;
          end
        end
      end
      TxMad: begin
        // Lag = 1: the last MAD byte is already held
        if (src_valid || !in_mad) begin
          wr_beat = 1'b1;
          if (take) begin
            f_d   = f_cur;
            cls_d = cls_cur;
          end
          k_d     = k_q + KW'(1);
          if (32'(k_q) == MadEnd - 1) begin
            state_d = TxTail;
          end
        end
      end
      default: if (32'(k_q) < PktBeats - 1) begin  // TxTail, an ICRC beat but the last
        wr_beat = 1'b1;
        k_d     = k_q + KW'(1);
      end else begin  // TxTail
        wr_beat  = 1'b1;
        wr_end_o = 1'b1;
        wr_ok_o         = tail.ok;
        ev_pkt_o        = tail.ok;
        ev_dr_discard_o = tail.discard;
        ev_local_o      = tail.local_smp;
        if (tail.ok) begin
          psn_d = psn_q + 24'd1;
        end
        k_d     = '0;
        state_d = TxIdle;
      end
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= TxIdle;
      sel_q   <= SrcSma;
      rr_q    <= SrcTrap;   // SMA first after reset
      k_q     <= '0;
      psn_q   <= '0;
      f_q     <= '0;
      cls_q   <= '0;
      dlid_q  <= '0;
      slid_q  <= '0;
      sl_q    <= '0;
      asis_q  <= 1'b0;
    end else begin
      state_q <= state_d;
      sel_q   <= sel_d;
      rr_q    <= rr_d;
      k_q     <= k_d;
      psn_q   <= psn_d;
      f_q     <= f_d;
      cls_q   <= cls_d;
      dlid_q  <= dlid_d;
      slid_q  <= slid_d;
      sl_q    <= sl_d;
      asis_q  <= asis_d;
    end
  end

  assign wr_valid_o = wr_beat;
  assign wr_keep_o  = '1;

  // ---------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && take) begin
      assert (src_last == (32'(k_q) == MadEnd - 1 - Lag))
        else $error("%m: source MAD of other than %0d beats", MadBeats);
    end
    if (rst_ni && wr_end_o) begin
      assert (32'(k_q) == PktBeats - 1)
        else $error("%m: packet of other than %0d beats", PktBeats);
    end
  end
`endif

endmodule
