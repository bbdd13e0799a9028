// sw_smi_sq: SMI send engine of a switch's port 0 (ib_switch_top). The
// datapath of smi_sq (round-robin between sources at packet boundaries,
// LRH/BTH/DETH built and prepended, hop pointer rewritten on the fly, ICRC
// appended: smi_tx_emit; 288-byte packet into a buffer: here the port-0 input buffer of
// the crossbar) with a fourth source, the DR SMPs the receive engine
// forwards (fwd_*: the MAD with the receive rules applied, and the LRH
// addressing), and the send side of a switch (ibspec §5, is_switch = 1;
// docs/fabric.md):
//  - class 0x01: out by the LFT of the LRH DLID.
//  - class 0x81 from the SMA/SM/trap: the originator rule
//    (handle_outgoing_dr_smp): (D ? DrDLID : DrSLID) != 0xFFFF -> no send
//    rules, sent as is, out by the LFT of the LRH DLID. Otherwise the send
//    rules of a switch run; an SMP that is then local (D=0: hc = 0 or
//    hp = hc+1; D=1: hp = 0) is not sent (ev_local_o).
//    DrDLID/DrSLID lie after the hop pointer in the MAD, so whether the hop
//    pointer is rewritten is decided from the LRH DLID (0xFFFF: DR part,
//    send rules; else LID-routed, as is); an SMP whose DrDLID/DrSLID then
//    disagrees with its LRH DLID is discarded (ev_dr_discard_o).
//  - forwarded SMPs: the send rules' hop pointer step, out by the path or by
//    the LFT as the receive engine decided.
//  Out by the path: D=0 -> IP[hp], D=1 -> RP[hp] (hp after the send rules);
//  egress 0, > N or Down -> discarded (ev_dr_discard_o). Hop count >= 64 ->
//  discarded. The route (egress or LFT + DLID) goes out as the buffer meta.
// Addressing as smi_sq, but port 0 has no LMC (no path bits), and an SM
// request to DLID 0xFFFF (its DR part starts here) gets SLID 0xFFFF.
module sw_smi_sq
  import ib_pkg::*;
#(
  parameter int unsigned DataW    = 64,  // stream width in bits: 32, 64 or 128
  parameter int unsigned NumPorts = 8,   // external ports 1..NumPorts
  localparam int unsigned DataB   = DataW / 8
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // port configuration
  input  logic [15:0]        port_lid_i,     // port-0 LID (no LMC)
  input  logic [7:0]         num_ports_i,    // N
  input  logic [3:0]         port_state_i [NumPorts+1],
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
  // traps (to the master SM)
  input  logic [DataW-1:0]   trap_tx_tdata_i,
  input  logic               trap_tx_tvalid_i,
  input  logic               trap_tx_tlast_i,
  output logic               trap_tx_tready_o,
  // forwarded DR SMPs (from the receive engine)
  input  logic [DataW-1:0]   fwd_tdata_i,
  input  logic               fwd_tvalid_i,
  input  logic               fwd_tlast_i,
  output logic               fwd_tready_o,
  input  logic [15:0]        fwd_dlid_i,
  input  logic [15:0]        fwd_slid_i,
  input  logic [3:0]         fwd_sl_i,
  input  logic               fwd_lft_i,
  // VL15 TX buffer write port
  output logic               wr_valid_o,
  output logic [DataW-1:0]   wr_data_o,
  output logic [DataB-1:0]   wr_keep_o,
  output logic               wr_end_o,
  output logic               wr_ok_o,
  output sw_route_meta_t     wr_meta_o,
  input  logic               wr_slot_free_i,
  // event pulses (with wr_end_o)
  output logic               ev_pkt_o,         // packet committed
  output logic               ev_dr_discard_o,  // DR send rules said discard
  output logic               ev_local_o        // DR SMP for the local node, not sent
);

  if (DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 32, 64 or 128, got %0d", DataW);
  end

  // Packet beat k holds packet bytes k*DataB..; MAD byte i is packet byte
  // MadOffset+i, in packet beat HdrBeats + i / DataB (the beat layout:
  // smi_tx_emit).
  localparam int unsigned HdrBeats = MadOffset / DataB;
  localparam int unsigned MadBeats = MadBytes / DataB;
  localparam int unsigned PktBeats = SmpPktBytes / DataB;
  localparam int unsigned KW       = $clog2(PktBeats);
  localparam int unsigned PbHopPtr = MadOffset + MbHopPtr;

  typedef enum logic [1:0] {
    SrcSma  = 2'd0,
    SrcSm   = 2'd1,
    SrcTrap = 2'd2,
    SrcFwd  = 2'd3
  } src_e;

  // MAD fields the DR send rules need
  typedef struct packed {
    logic        dir;
    logic [7:0]  hop_ptr;
    logic [7:0]  hop_cnt;
    logic [15:0] dr_slid;
    logic [15:0] dr_dlid;
    logic [7:0]  egress;   // path entry at the new hop pointer
  } fields_t;

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
  logic         lft_q, lft_d;        // forwarded SMP: by the LFT

  // ---------------------------------------------------------------------------
  // Arbitration
  // ---------------------------------------------------------------------------
  logic [3:0] req;
  logic       grant_any;
  src_e       grant;

  assign req = {fwd_tvalid_i, trap_tx_tvalid_i, sm_tx_tvalid_i, sma_tx_tvalid_i};

  // Round robin: the source after the last granted one goes first.
  always_comb begin
    src_e order [4];
    unique case (rr_q)
      SrcSma:  order = '{SrcSm, SrcTrap, SrcFwd, SrcSma};
      SrcSm:   order = '{SrcTrap, SrcFwd, SrcSma, SrcSm};
      SrcTrap: order = '{SrcFwd, SrcSma, SrcSm, SrcTrap};
      default: order = '{SrcSma, SrcSm, SrcTrap, SrcFwd};
    endcase
    grant_any = |req;
    grant     = order[3];
    if (req[order[2]]) grant = order[2];
    if (req[order[1]]) grant = order[1];
    if (req[order[0]]) grant = order[0];
  end

  logic start;
  assign start = (state_q == TxIdle) && grant_any && wr_slot_free_i;

  // Header addressing of the granted source (used in the start cycle).
  logic [15:0] dlid_new;
  logic [15:0] slid_new;
  logic [3:0]  sl_new;
  always_comb begin
    unique case (grant)
      SrcSma: begin
        dlid_new = sma_tx_slid_i;
        slid_new = sma_tx_dlid_i;
        sl_new   = sma_tx_sl_i;
      end
      SrcSm: begin
        dlid_new = sm_tx_dlid_i;
        // an SMP whose DR part starts here (DLID 0xFFFF) has SLID 0xFFFF
        slid_new = (port_lid_i == 16'd0 || sm_tx_dlid_i == PermissiveLid) ? PermissiveLid
                                                                            : port_lid_i;
        sl_new   = sm_tx_sl_i;
      end
      SrcFwd: begin
        dlid_new = fwd_dlid_i;
        slid_new = fwd_slid_i;
        sl_new   = fwd_sl_i;
      end
      default: begin
        dlid_new = master_sm_lid_i;
        slid_new = (port_lid_i == 16'd0) ? PermissiveLid : port_lid_i;
        sl_new   = master_sm_sl_i;
      end
    endcase
  end

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
      SrcTrap: begin
        src_data  = trap_tx_tdata_i;
        src_valid = trap_tx_tvalid_i;
        src_last  = trap_tx_tlast_i;
      end
      default: begin
        src_data  = fwd_tdata_i;
        src_valid = fwd_tvalid_i;
        src_last  = fwd_tlast_i;
      end
    endcase
  end

  logic in_mad;
  logic take;   // a source beat is consumed
  assign in_mad = (state_q == TxMad);
  assign take   = in_mad && src_valid;

  assign sma_tx_tready_o  = in_mad && (sel_q == SrcSma);
  assign sm_tx_tready_o   = in_mad && (sel_q == SrcSm);
  assign trap_tx_tready_o = in_mad && (sel_q == SrcTrap);
  assign fwd_tready_o     = in_mad && (sel_q == SrcFwd);

  // MAD fields including the current source beat. MAD byte m arrives in
  // lane m % DataB of packet beat HdrBeats + m / DataB: compare k_q with a
  // constant. Returns {hit, byte}.
  function automatic logic [8:0] pick(logic [KW-1:0] k, logic [DataW-1:0] data,
                                      int unsigned m);
    int unsigned lane;
    lane = m % DataB;
    return {32'(k) == HdrBeats + m / DataB, data[8*lane +: 8]};
  endfunction

  logic [KW-1:0] eg_k_q;     // beat and lane of the path entry at the new
  logic [7:0]    eg_lane_q;  // hop pointer, from f_q (MAD bytes 4..7), registered

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
    if (p[8]) f_cur.dr_slid[15:8] = p[7:0];
    p = pick(k_q, src_data, MbDrSlid + 1);
    if (p[8]) f_cur.dr_slid[7:0] = p[7:0];
    p = pick(k_q, src_data, MbDrDlid);
    if (p[8]) f_cur.dr_dlid[15:8] = p[7:0];
    p = pick(k_q, src_data, MbDrDlid + 1);
    if (p[8]) f_cur.dr_dlid[7:0] = p[7:0];
    // the egress path entry; its offset comes from an earlier beat
    if (k_q == eg_k_q) begin
      for (int unsigned j = 0; j < DataB; j++) begin
        if (32'(eg_lane_q) == j) begin
          f_cur.egress = src_data[8*j +: 8];
        end
      end
    end
  end

  logic asis_pred_q, asis_pred_d;  // SMA/SM/trap SMP with a real LRH DLID: sent as is
  logic fwd_q, fwd_d;              // the packet is a forwarded SMP

  // New hop pointer by the send rules of a switch, for every SMP they accept
  // (D=0: hp <= hc -> hp + 1; D=1: 1 <= hp <= hc + 1 -> hp - 1); the byte of
  // an SMP they discard or keep local never leaves the switch.
  function automatic logic [7:0] hp_new_sw(logic dir, logic [7:0] hp, logic [7:0] hc);
    if (!dir) begin
      return (hp <= hc) ? hp + 8'd1 : hp;
    end
    return (hp != 8'd0 && {1'b0, hp} <= {1'b0, hc} + 9'd1) ? hp - 8'd1 : hp;
  endfunction

  // The egress path entry: D=0 InitialPath[hp_new], D=1 ReturnPath[hp_new]
  // (MAD byte >= 128, long after bytes 4..7).
  logic [7:0] hp_new_q;
  logic [8:0] eg_moff;
  assign hp_new_q = hp_new_sw(f_q.dir, f_q.hop_ptr, f_q.hop_cnt);
  assign eg_moff  = 9'(MbInitialPath) + (f_q.dir ? 9'd64 : 9'd0) + {1'b0, hp_new_q};

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      eg_k_q    <= '1;
      eg_lane_q <= '0;
    end else begin
      eg_k_q    <= KW'(HdrBeats) + KW'(eg_moff / 9'(DataB));
      eg_lane_q <= 8'(eg_moff % 9'(DataB));
    end
  end

  // As in smi_sq: the rewrite runs from f_q when D, hop pointer and hop count
  // arrived before the hop pointer's packet beat (DataW 64, 128), else from
  // the current beat (DataW 32).
  logic [7:0] hp_new_cur;
  if (HdrBeats + MbHopCnt / DataB < PbHopPtr / DataB) begin : gen_dr_from_q
    assign hp_new_cur = hp_new_q;
  end else begin : gen_dr_from_cur
    assign hp_new_cur = hp_new_sw(f_cur.dir, f_cur.hop_ptr, f_cur.hop_cnt);
  end

  // Verdict and route at the tail (every field is in f_q by then).
  typedef struct packed {
    logic           discard;
    logic           local_smp;
    sw_route_meta_t route;
  } fin_t;
  fin_t fin;

  always_comb begin
    logic [7:0] hp;
    logic [7:0] hc;
    logic [8:0] hc1;
    logic       perm_own;   // (D ? DrDLID : DrSLID) = 0xFFFF: send rules apply
    logic       path_ok;
    logic       by_path;
    logic [3:0] eg_state;
    hp       = f_q.hop_ptr;
    hc       = f_q.hop_cnt;
    hc1      = {1'b0, hc} + 9'd1;
    perm_own = f_q.dir ? (f_q.dr_dlid == PermissiveLid) : (f_q.dr_slid == PermissiveLid);
    eg_state = PortStateDown;
    for (int unsigned e = 1; e <= NumPorts; e++) begin
      if (32'(f_q.egress) == e) eg_state = port_state_i[e];
    end
    path_ok  = (f_q.egress != 8'd0) && (f_q.egress <= num_ports_i) &&
               (eg_state != PortStateDown);
    by_path  = 1'b0;
    fin      = '0;
    fin.route.lft  = 1'b1;
    fin.route.dlid = dlid_q;
    if (cls_q == ClassSubnDr) begin
      if (32'(hc) >= MaxPathHops) begin
        fin.discard = 1'b1;                              // C14-6
      end else if (fwd_q) begin
        by_path = !lft_q;
      end else if (perm_own == asis_pred_q) begin
        fin.discard = 1'b1;                              // DrDLID/DrSLID vs LRH DLID
      end else if (perm_own) begin
        if (!f_q.dir) begin
          if (hc == 8'd0 || hp == hc || {1'b0, hp} == hc1) begin
            fin.local_smp = 1'b1;                        // hc = 0, or hp = hc+1 after the rules
          end else if (hp < hc) begin
            by_path = 1'b1;                              // C14-9:1, C14-9:2 (switch)
          end else begin
            fin.discard = 1'b1;                          // C14-9:5
          end
        end else begin
          if (hp <= 8'd1) begin
            fin.local_smp = 1'b1;                        // hp = 0 after the rules
          end else if ({1'b0, hp} <= hc1) begin
            by_path = 1'b1;                              // C14-13:1, C14-13:2 (switch)
          end else begin
            fin.discard = 1'b1;                          // C14-13:5
          end
        end
      end
      if (by_path) begin
        fin.route.lft    = 1'b0;
        fin.route.egress = f_q.egress;
        fin.discard      = !path_ok;
      end
    end
  end


  // ---------------------------------------------------------------------------
  // Output beat: header, realigned MAD, hop pointer rewrite, ICRC (shared
  // with smi_sq)
  // ---------------------------------------------------------------------------
  logic wr_beat;  // a packet beat goes to the TX buffer (FSM)
  logic hp_dr;    // the hop pointer is rewritten: class 0x81, not as is
  assign hp_dr = (cls_cur == ClassSubnDr) && !asis_pred_q;

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
    lft_d    = lft_q;
    asis_pred_d = asis_pred_q;
    fwd_d    = fwd_q;
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
          lft_d   = fwd_lft_i && grant == SrcFwd;
          // SM request: its DLID; SMA response: the request's DLID (the
          // response's SLID field); see smi_sq.
          asis_pred_d = (grant == SrcSma) ? (slid_new != PermissiveLid)
                      : (grant != SrcFwd) && (dlid_new != PermissiveLid);
          fwd_d   = (grant == SrcFwd);
          f_d     = '0;
          cls_d   = '0;
          k_d     = KW'(1);
          state_d = (HdrBeats == 1) ? TxMad : TxHdr;
        end
      end
      TxHdr: begin
        wr_beat = 1'b1;
        k_d     = k_q + KW'(1);
        if (32'(k_q) == HdrBeats - 1) begin
          state_d = TxMad;
        end
      end
      TxMad: begin
        if (src_valid) begin
          wr_beat = 1'b1;
          f_d     = f_cur;
          cls_d   = cls_cur;
          k_d     = k_q + KW'(1);
          if (32'(k_q) == HdrBeats + MadBeats - 1) begin
            state_d = TxTail;
          end
        end
      end
      default: begin  // TxTail
        wr_beat  = 1'b1;
        wr_end_o = 1'b1;
        if (fin.discard) begin
          ev_dr_discard_o = 1'b1;
        end else if (fin.local_smp) begin
          ev_local_o = 1'b1;
        end else begin
          wr_ok_o  = 1'b1;
          ev_pkt_o = 1'b1;
          psn_d    = psn_q + 24'd1;
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
      lft_q   <= 1'b0;
      asis_pred_q <= 1'b0;
      fwd_q   <= 1'b0;
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
      lft_q   <= lft_d;
      asis_pred_q <= asis_pred_d;
      fwd_q   <= fwd_d;
    end
  end

  assign wr_valid_o = wr_beat;
  assign wr_keep_o  = '1;
  assign wr_meta_o  = fin.route;

  // ---------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && take) begin
      assert (src_last == (32'(k_q) == HdrBeats + MadBeats - 1))
        else $error("%m: source MAD of other than %0d beats", MadBeats);
    end
    if (rst_ni && wr_end_o) begin
      assert (32'(k_q) == PktBeats - 1)
        else $error("%m: packet of other than %0d beats", PktBeats);
    end
  end
`endif

endmodule
