// smi_sq: SMI send engine of a CA port. Arbitrates round-robin, at packet
// boundaries, between three MAD sources (SMA responses, SM requests, traps),
// builds LRH/BTH/DETH (VL15, UD SEND Only to QP0), prepends them to the MAD,
// runs the directed-route send rules of a CA (ibspec §5) with the new hop
// pointer written into MAD byte 6 on the fly, appends the ICRC and writes the
// 288-byte packet (LRH..ICRC) into the VL15 TX ib_pkt_fifo (arbitration, FSM
// and beats: smi_tx_ctrl with smi_tx_emit; MAD fields: smi_tx_fields; both
// shared with sw_smi_sq). The header's first beat is written in the cycle the chosen
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
  // smi_tx_emit). DataW 8 (Lag = 1): MAD byte m is taken from the source a
  // beat before it goes out (smi_tx_ctrl).
  localparam int unsigned Lag       = (DataB == 1) ? 1 : 0;
  localparam int unsigned HdrBeats = MadOffset / DataB;
  localparam int unsigned PktBeats = SmpPktBytes / DataB;
  localparam int unsigned KW       = $clog2(PktBeats);
  localparam int unsigned PbHopPtr = MadOffset + MbHopPtr;

  typedef enum logic [1:0] {
    SrcSma  = 2'd0,
    SrcSm   = 2'd1,
    SrcTrap = 2'd2
  } src_e;

  // The DR send rules read the MAD fields of smi_tx_fields (smi_tx_mad_t):
  // D, hop pointer, hop count and the compare flags DrSLID/DrDLID = 0xFFFF,
  // InitialPath[1] = this port, ReturnPath[hop_cnt] = this port (path_port).
  typedef struct packed {
    logic       discard;
    logic       local_smp;
    logic [7:0] hp_new;
  } dr_tx_t;

  // DR send rules of a CA (smi_handle_dr_smp_send, is_switch = 0), then the
  // originator's local check (handle_outgoing_dr_smp: smi_check_local_smp or
  // smi_check_local_returning_smp). hc = 0 with D = 0 is always local.
  // Waiver: the rules of a CA read the compare flags, not the whole bytes.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic dr_tx_t dr_send_ca(smi_tx_mad_t f);
  /* verilator lint_on UNUSEDSIGNAL */
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
        r.discard = !f.path_port;
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

  smi_tx_state_e    state;
  logic [KW-1:0]    k;           // packet beat index
  logic [DataW-1:0] src_data;    // the selected source's beat
  logic             take;        // ... is taken
  logic             start;       // a packet starts, from source grant
  logic [1:0]       grant;
  smi_tx_mad_t      f_cur, f_q;  // MAD fields with the current beat, before it
  logic             asis_q;      // LRH DLID not permissive: no send rules

  // ---------------------------------------------------------------------------
  // Header addressing of the granted source (used in the start cycle)
  // ---------------------------------------------------------------------------
  logic [15:0] dlid_new;
  logic [15:0] slid_new;
  logic [3:0]  sl_new;
  logic [6:0]  lmc_mask;

  always_comb begin
    lmc_mask = 7'(~(8'hFF << port_lmc_i));  // (1 << LMC) - 1, without a carry chain
    unique case (src_e'(grant))
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

  // LID-routed segment: an SM request to a real DLID (head), or a response
  // to a request that arrived at a real DLID (tail: the response's SLID
  // field is the request's DLID). A DR-part response goes to the
  // requester's SLID, which is a real LID when the SM's port has one: not
  // the test.
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      asis_q <= 1'b0;
    end else if (start) begin
      asis_q <= (src_e'(grant) == SrcSma) ? (slid_new != PermissiveLid)
                                          : (dlid_new != PermissiveLid);
    end
  end

  // ---------------------------------------------------------------------------
  // MAD fields (shared with sw_smi_sq); the path byte is ReturnPath[hop_cnt]
  // ---------------------------------------------------------------------------
  logic [8:0] rp_moff;  // MAD offset of ReturnPath[hop_cnt]
  assign rp_moff = 9'(MbReturnPath) + {1'b0, f_q.hop_cnt};

  smi_tx_fields #(.DataW(DataW)) u_fields (
    .clk_i,
    .rst_ni,
    .k_i         (k),
    .src_data_i  (src_data),
    .take_i      (take),
    .clr_i       (start),
    .path_moff_i (rp_moff),
    .cmp_i       (port_num_i),
    .mad_o       (f_cur),
    .mad_q_o     (f_q)
  );

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
  logic       wr_beat;     // a packet beat goes to the TX buffer
  logic       hp_dr;       // the hop pointer is rewritten: class 0x81, send rules
  logic [7:0] hp_new_cur;
  assign hp_dr = (f_cur.mgmt_class == ClassSubnDr) && !asis_q;
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
      if (rst_ni && state == TxMad && 32'(k) == PbHopPtr && hp_dr && wr_beat) begin
        assert (hp_new_cur == hp_new_ca(f_cur.dir, f_cur.hop_ptr, f_cur.hop_cnt))
          else $error("%m: DataW 8 hop pointer rule differs from hp_new_ca");
      end
    end
`endif
  end else begin : gen_dr_from_cur
    assign hp_new_cur = hp_new_ca(f_cur.dir, f_cur.hop_ptr, f_cur.hop_cnt);
  end

  // ---------------------------------------------------------------------------
  // The packet's fate at its last beat (wr_ok_o, the events, the PSN step)
  // ---------------------------------------------------------------------------
  logic is_dr;
  assign is_dr = (f_q.mgmt_class == ClassSubnDr);

  // (D ? DrDLID : DrSLID) = 0xFFFF: the send rules apply (MAD bytes 4, 32..35)
  logic own_perm;
  assign own_perm = f_q.dir ? (&f_q.dr_dlid_ff) : (&f_q.dr_slid_ff);

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
    smi_tx_mad_t f_rp_ok, f_rp_bad;
    dr_tx_t      fin_ok, fin_bad;
    tail_t       tail_ok_q, tail_bad_q;
    always_comb begin
      f_rp_ok           = f_q;
      f_rp_ok.path_port = 1'b1;
      f_rp_bad          = f_q;
      f_rp_bad.path_port = 1'b0;
      fin_ok            = dr_send_ca(f_rp_ok);
      fin_bad           = dr_send_ca(f_rp_bad);
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
    assign tail = f_q.path_port ? tail_ok_q : tail_bad_q;
    logic unused_fin;  // only the verdicts are used
    assign unused_fin = ^{fin_ok.hp_new, fin_bad.hp_new};
  end

  // A CA compares DrSLID/DrDLID and the path byte as flags only; the hop
  // fields with the current beat only at DataW 32 (8: in the check), the FSM
  // only in the DataW 8 check.
  logic [15:0] dlid_unused;  // the LRH DLID: a switch routes by it
  logic unused_mad;
  assign unused_mad = ^{dlid_unused, f_cur.dir, f_cur.hop_ptr, f_cur.hop_cnt, f_cur.dr_slid, f_cur.dr_dlid, f_cur.dr_slid_ff, f_cur.dr_dlid_ff,
                        f_cur.ip1_port, f_cur.path, f_cur.path_port,
                        f_q.dr_slid, f_q.dr_dlid, f_q.path, state, wr_beat};

  // ---------------------------------------------------------------------------
  // Arbitration, send FSM and beats (shared with sw_smi_sq)
  // ---------------------------------------------------------------------------
  smi_tx_ctrl #(.DataW(DataW), .NumSrc(3)) u_ctrl (
    .clk_i,
    .rst_ni,
    .src_tdata_i     ({trap_tx_tdata_i, sm_tx_tdata_i, sma_tx_tdata_i}),
    .src_tvalid_i    ({trap_tx_tvalid_i, sm_tx_tvalid_i, sma_tx_tvalid_i}),
    .src_tlast_i     ({trap_tx_tlast_i, sm_tx_tlast_i, sma_tx_tlast_i}),
    .src_tready_o    ({trap_tx_tready_o, sm_tx_tready_o, sma_tx_tready_o}),
    .start_o         (start),
    .grant_o         (grant),
    .dlid_new_i      (dlid_new),
    .slid_new_i      (slid_new),
    .sl_new_i        (sl_new),
    .state_o         (state),
    .k_o             (k),
    .dlid_o          (dlid_unused),
    .src_data_o      (src_data),
    .take_o          (take),
    .hp_dr_i         (hp_dr),
    .hp_new_i        (hp_new_cur),
    .tail_ok_i       (tail.ok),
    .tail_discard_i  (tail.discard),
    .tail_local_i    (tail.local_smp),
    .wr_valid_o,
    .wr_data_o,
    .wr_keep_o,
    .wr_end_o,
    .wr_ok_o,
    .wr_slot_free_i,
    .ev_pkt_o,
    .ev_dr_discard_o,
    .ev_local_o
  );
  assign wr_beat = wr_valid_o;

endmodule
