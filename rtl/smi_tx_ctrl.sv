// smi_tx_ctrl: source arbitration and send FSM of the SMI send engines
// (smi_sq, sw_smi_sq). Grants one of NumSrc MAD sources round-robin at
// packet boundaries, when the TX buffer has a free slot, and walks the
// packet's beats (TxIdle: first header beat, TxHdr, TxMad: the source's MAD
// beats, TxTail: the ICRC) into the TX buffer through smi_tx_emit, which
// builds each beat from the engine's header addressing and hop pointer
// rewrite. At the last beat the engine's verdict decides wr_ok_o, the events
// and the PSN step. What differs between a CA and a switch (the addressing of
// each source, the directed-route send rules, the verdict) stays in the
// engine: this module hands it the grant, the beat index and the selected
// source's beat (smi_tx_fields picks the MAD fields from them).
// DataW 8 (Lag = 1): MAD byte m goes out in beat HdrBeats + m, but is taken
// from the source a beat earlier (held in smi_tx_emit), so that the engine
// rewrites the hop pointer (MAD byte 6) with the hop count (byte 7) in hand;
// the ICRC then takes 4 beats.
module smi_tx_ctrl
  import ib_pkg::*;
#(
  parameter int unsigned DataW  = 64,  // stream width in bits: 8, 32, 64 or 128
  parameter int unsigned NumSrc = 3,   // MAD sources, 2..4
  localparam int unsigned DataB    = DataW / 8,
  localparam int unsigned PktBeats = SmpPktBytes / DataB,
  localparam int unsigned KW       = $clog2(PktBeats)
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,
  // MAD sources, source i at index i
  input  logic [NumSrc-1:0][DataW-1:0] src_tdata_i,
  input  logic [NumSrc-1:0]            src_tvalid_i,
  input  logic [NumSrc-1:0]            src_tlast_i,
  output logic [NumSrc-1:0]            src_tready_o,
  // a packet starts (its first header beat is written), from source grant_o
  output logic                         start_o,
  output logic [1:0]                   grant_o,
  // header addressing of source grant_o (taken at start_o)
  input  logic [15:0]                  dlid_new_i,
  input  logic [15:0]                  slid_new_i,
  input  logic [3:0]                   sl_new_i,
  // the FSM, the selected source's beat and whether it is taken
  output smi_tx_state_e                state_o,
  output logic [KW-1:0]                k_o,          // packet beat index
  output logic [15:0]                  dlid_o,       // the packet's LRH DLID
  output logic [DataW-1:0]             src_data_o,
  output logic                         take_o,
  // hop pointer rewrite (smi_tx_emit): class 0x81 with the send rules
  input  logic                         hp_dr_i,
  input  logic [7:0]                   hp_new_i,
  // the packet's fate at its last beat, one of three
  input  logic                         tail_ok_i,       // written, PSN + 1
  input  logic                         tail_discard_i,  // ev_dr_discard_o
  input  logic                         tail_local_i,    // ev_local_o
  // VL15 TX buffer write port
  output logic                         wr_valid_o,
  output logic [DataW-1:0]             wr_data_o,
  output logic [DataB-1:0]             wr_keep_o,
  output logic                         wr_end_o,
  output logic                         wr_ok_o,
  input  logic                         wr_slot_free_i,
  // event pulses (with wr_end_o)
  output logic                         ev_pkt_o,         // packet committed
  output logic                         ev_dr_discard_o,  // DR send rules said discard
  output logic                         ev_local_o        // DR SMP for the local node, not sent
);

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end
  if (NumSrc < 2 || NumSrc > 4) begin : gen_numsrc_check
    $fatal(1, "%m: NumSrc must be 2..4, got %0d", NumSrc);
  end

  // Packet beat k holds packet bytes k*DataB..; MAD byte i is packet byte
  // MadOffset+i, in packet beat HdrBeats + i / DataB (the beat layout:
  // smi_tx_emit).
  localparam int unsigned Lag      = (DataB == 1) ? 1 : 0;
  localparam int unsigned HdrBeats = MadOffset / DataB;
  localparam int unsigned MadBeats = MadBytes / DataB;
  localparam int unsigned MadEnd   = HdrBeats + MadBeats;  // first tail beat
  // more than one tail beat (DataW 8: the ICRC a byte a beat)
  localparam bit          TailMany = PktBeats - MadEnd > 1;

  smi_tx_state_e state_q, state_d;
  logic [1:0]    sel_q, sel_d;   // source of the current packet
  logic [1:0]    rr_q, rr_d;     // last source granted
  logic [KW-1:0] k_q, k_d;       // packet beat index
  logic [23:0]   psn_q, psn_d;
  logic [15:0]   dlid_q, dlid_d;
  logic [15:0]   slid_q, slid_d;
  logic [3:0]    sl_q, sl_d;

  // ---------------------------------------------------------------------------
  // Arbitration
  // ---------------------------------------------------------------------------
  // Round robin: the source after the last granted one goes first (after
  // reset rr_q = 2: source 3 if there is one, else source 0).
  logic grant_any;

  always_comb begin
    logic [1:0] order [NumSrc];
    order = '{default: 2'd0};
    for (int unsigned r = 0; r < 4; r++) begin
      if (32'(rr_q) == r) begin
        for (int unsigned i = 0; i < NumSrc; i++) begin
          order[i] = 2'(((r >= NumSrc - 1 ? 0 : r + 1) + i) % NumSrc);
        end
      end
    end
    grant_any = |src_tvalid_i;
    grant_o   = order[NumSrc-1];
    for (int i = NumSrc - 2; i >= 0; i--) begin
      if (src_tvalid_i[order[i]]) grant_o = order[i];
    end
  end

  assign start_o = (state_q == TxIdle) && grant_any && wr_slot_free_i;

  // ---------------------------------------------------------------------------
  // Selected source (sel_q beyond NumSrc - 1 never happens: the last one)
  // ---------------------------------------------------------------------------
  logic src_valid;
  logic src_last;

  always_comb begin
    src_data_o = src_tdata_i[NumSrc-1];
    src_valid  = src_tvalid_i[NumSrc-1];
    src_last   = src_tlast_i[NumSrc-1];
    for (int unsigned i = 0; i < NumSrc - 1; i++) begin
      if (32'(sel_q) == i) begin
        src_data_o = src_tdata_i[i];
        src_valid  = src_tvalid_i[i];
        src_last   = src_tlast_i[i];
      end
    end
  end

  logic in_mad;
  // A source beat is taken in TxMad (Lag = 1: from the last header beat to
  // the last MAD beat but one).
  if (Lag == 0) begin : gen_take_now
    assign in_mad = (state_q == TxMad);
  end else begin : gen_take_early
    assign in_mad = ((state_q == TxMad) && (32'(k_q) < MadEnd - 1)) ||
                    ((state_q == TxHdr) && (32'(k_q) == HdrBeats - 1));
  end
  assign take_o = in_mad && src_valid;

  for (genvar i = 0; i < NumSrc; i++) begin : gen_ready
    assign src_tready_o[i] = in_mad && (32'(sel_q) == i);
  end

  // ---------------------------------------------------------------------------
  // Output beat: header, realigned MAD, hop pointer rewrite, ICRC
  // ---------------------------------------------------------------------------
  logic wr_beat;  // a packet beat goes to the TX buffer (FSM)

  smi_tx_emit #(.DataW(DataW)) u_emit (
    .clk_i,
    .rst_ni,
    .state_i      (state_q),
    .k_i          (k_q),
    .wr_beat_i    (wr_beat),
    .wr_end_i     (wr_end_o),
    .dlid_new_i,
    .slid_new_i,
    .sl_new_i,
    .dlid_i       (dlid_q),
    .slid_i       (slid_q),
    .sl_i         (sl_q),
    .psn_i        (psn_q),
    .src_data_i   (src_data_o),
    .take_i       (take_o),
    .hp_dr_i,
    .hp_new_i,
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
    dlid_d   = dlid_q;
    slid_d   = slid_q;
    sl_d     = sl_q;
    wr_beat  = 1'b0;
    wr_end_o = 1'b0;
    wr_ok_o  = 1'b0;
    ev_pkt_o        = 1'b0;
    ev_dr_discard_o = 1'b0;
    ev_local_o      = 1'b0;

    unique case (state_q)
      TxIdle: begin
        if (start_o) begin
          wr_beat = 1'b1;
          sel_d   = grant_o;
          rr_d    = grant_o;
          dlid_d  = dlid_new_i;
          slid_d  = slid_new_i;
          sl_d    = sl_new_i;
          k_d     = KW'(1);
          state_d = (HdrBeats == 1) ? TxMad : TxHdr;
        end
      end
      TxHdr: begin
        // Lag = 1: the last header beat waits for the first MAD byte
        wr_beat = (Lag == 0) || !in_mad || src_valid;
        if (wr_beat) begin
          k_d = k_q + KW'(1);
          if (32'(k_q) == HdrBeats - 1) begin
            state_d = TxMad;
          end
        end
      end
      TxMad: begin
        // Lag = 1: the last MAD byte is already held
        if (src_valid || (Lag != 0 && !in_mad)) begin
          wr_beat = 1'b1;
          k_d     = k_q + KW'(1);
          if (32'(k_q) == MadEnd - 1) begin
            state_d = TxTail;
          end
        end
      end
      default: if (TailMany && 32'(k_q) < PktBeats - 1) begin  // TxTail, an ICRC beat but the last
        wr_beat = 1'b1;
        k_d     = k_q + KW'(1);
      end else begin  // TxTail
        wr_beat  = 1'b1;
        wr_end_o = 1'b1;
        wr_ok_o         = tail_ok_i;
        ev_pkt_o        = tail_ok_i;
        ev_dr_discard_o = tail_discard_i;
        ev_local_o      = tail_local_i;
        if (tail_ok_i) begin
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
      sel_q   <= 2'd0;
      rr_q    <= 2'd2;
      k_q     <= '0;
      psn_q   <= '0;
      dlid_q  <= '0;
      slid_q  <= '0;
      sl_q    <= '0;
    end else begin
      state_q <= state_d;
      sel_q   <= sel_d;
      rr_q    <= rr_d;
      k_q     <= k_d;
      psn_q   <= psn_d;
      dlid_q  <= dlid_d;
      slid_q  <= slid_d;
      sl_q    <= sl_d;
    end
  end

  assign state_o    = state_q;
  assign k_o        = k_q;
  assign dlid_o     = dlid_q;
  assign wr_valid_o = wr_beat;
  assign wr_keep_o  = '1;

  // ---------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------

  // ---------------------------------------------------------------------------
  // Cover points: the send engine commits an SMP, the DR send rules discard
  // one, and a DR SMP for the local node is not sent
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  // every cover point below samples at the clock edge, not in reset
  default clocking cov_clk @(posedge clk_i); endclocking
  default disable iff (!rst_ni);
  SMI_TX_sent:       cover property (ev_pkt_o);
  SMI_TX_dr_discard: cover property (ev_dr_discard_o);
  SMI_TX_local:      cover property (ev_local_o);
  // the FSM's states and arcs (docs/coverage.md: FSM coverage); TxIdle to
  // TxMad only with a one-beat header (DataW 128), TxIdle to TxHdr otherwise
  FSM_S_TxIdle:        cover property (state_q == TxIdle);
  FSM_S_TxHdr:         cover property (state_q == TxHdr);
  FSM_S_TxMad:         cover property (state_q == TxMad);
  FSM_S_TxTail:        cover property (state_q == TxTail);
  FSM_A_TxIdle_TxHdr:  cover property (state_q == TxIdle && state_d == TxHdr);
  FSM_A_TxIdle_TxMad:  cover property (state_q == TxIdle && state_d == TxMad);
  FSM_A_TxHdr_TxMad:   cover property (state_q == TxHdr  && state_d == TxMad);
  FSM_A_TxMad_TxTail:  cover property (state_q == TxMad  && state_d == TxTail);
  FSM_A_TxTail_TxIdle: cover property (state_q == TxTail && state_d == TxIdle);
  // every change of state is one of the arcs above
  always_ff @(posedge clk_i) begin
    if (rst_ni && state_d != state_q) begin
      assert ((state_q == TxIdle && state_d inside {TxHdr, TxMad}) ||
              (state_q == TxHdr  && state_d == TxMad) ||
              (state_q == TxMad  && state_d == TxTail) ||
              (state_q == TxTail && state_d == TxIdle))
        else $error("%m: send FSM arc %0d -> %0d is not in the arc list", state_q, state_d);
    end
  end
`endif

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && take_o) begin
      assert (src_last == (32'(k_q) == MadEnd - 1 - Lag))
        else $error("%m: source MAD of other than %0d beats", MadBeats);
    end
    if (rst_ni && wr_end_o) begin
      assert (32'(k_q) == PktBeats - 1)
        else $error("%m: packet of other than %0d beats", PktBeats);
      assert ($onehot({tail_ok_i, tail_discard_i, tail_local_i}))
        else $error("%m: packet verdict not exactly one of ok, discard, local");
    end
  end
`endif

endmodule
