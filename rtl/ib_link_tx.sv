// ib_link_tx: link-layer transmit. Picks the next packet at a packet boundary
// (VL15 before data VLs), passes it to the wire through one output register
// (valid/ready, 1 beat per cycle) and appends the VCRC: in the last beat when
// it has >= 2 free bytes, else in one extra beat (with exactly 1 free byte the
// VCRC is split: first byte fills the last beat, second byte in the extra
// beat, so every non-last beat stays full; LRH..ICRC is a multiple of 4 bytes,
// so this only happens for malformed input, whose VCRC then covers only the
// whole 4-byte words: the CRC is one matrix update per word count, which
// keeps it off the byte-serial path). At DataW 8 every last beat is full and
// the VCRC takes two extra beats. The output holds while
// tx_tvalid_o && !tx_tready_i.
module ib_link_tx
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 8, 32, 64 or 128
  // 1: every VL15 packet ends with a full beat (smi_sq's 288-byte SMPs at
  // every DataW; asserted), so its VCRC always goes into an extra beat and
  // never has to be computed in the cycle its last beat arrives: the VL15
  // input (a block-RAM output) then feeds only registers.
  parameter bit          Vl15FullBeats = 1'b1,
  localparam int unsigned DataB = DataW / 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // VL15 packets (LRH..ICRC) from the VL15 TX buffer
  input  logic [DataW-1:0] vl15_tdata_i,
  input  logic [DataB-1:0] vl15_tkeep_i,
  input  logic             vl15_tvalid_i,
  input  logic             vl15_tlast_i,
  output logic             vl15_tready_o,
  // data-VL packets (LRH..ICRC) from the host
  input  logic [DataW-1:0] data_tdata_i,
  input  logic [DataB-1:0] data_tkeep_i,
  input  logic             data_tvalid_i,
  input  logic             data_tlast_i,
  output logic             data_tready_o,
  // wire out (LRH..VCRC)
  output logic [DataW-1:0] tx_tdata_o,
  output logic [DataB-1:0] tx_tkeep_o,
  output logic             tx_tvalid_o,
  output logic             tx_tlast_o,
  input  logic             tx_tready_i,
  // event pulses, with the tlast handshake on the wire
  output logic             ev_vl15_pkt_o,
  output logic             ev_data_pkt_o
);

  localparam int unsigned NB = $clog2(DataB + 1);  // holds 0..DataB

  // CRC-16 matrices for q = 1..NWords whole 4-byte words (CrcW[q-1]); at
  // DataW 8 the one byte of a beat (CrcW[NWords-1] is always a whole beat).
  localparam int unsigned NWords = (DataB >= 4) ? DataB / 4 : 1;
  // the bytes of q whole words (the beat's one byte at DataW 8)
  function automatic int unsigned WordBytes(int unsigned q);
    return (DataB >= 4) ? 4 * q : DataB;
  endfunction
  typedef crc16_mat_t [NWords-1:0] crc16_mats_t;
  function automatic crc16_mats_t crc16_mats();
    crc16_mats_t m;
    for (int unsigned q = 1; q <= NWords; q++) begin
      m[q-1] = crc16_mat(WordBytes(q));
    end
    return m;
  endfunction
  localparam crc16_mats_t CrcW = crc16_mats();

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end

  typedef enum logic [1:0] {
    StIdle,   // packet boundary: next source chosen at its first beat
    StPkt,    // inside a packet from the locked source
    StExtra   // source packet done, the VCRC beat(s) still to be loaded
  } state_e;

  state_e     state_q, state_d;
  logic       sel_vl15_q, sel_vl15_d;  // locked source while StPkt
  logic [15:0] crc_q, crc_d;            // CRC of the packet's beats before pend_q
  logic [DataW-1:0] pend_q, pend_d;     // last taken full beat, folded in a cycle later
  logic        pend_vld_q, pend_vld_d;
  logic [15:0] vcrc_q, vcrc_d;         // VCRC for the extra beat
  logic        split_q, split_d;       // extra beat holds only the second VCRC byte
                                       // (DataW 8: the second of the two extra beats)

  // output register
  logic             out_valid_q, out_last_q, out_vl15_q;
  logic [DataW-1:0] out_data_q;
  logic [DataB-1:0] out_keep_q;

  logic             load;      // output register takes a new beat
  logic             use_vl15;  // source of the current input beat
  logic [DataW-1:0] in_data;
  logic [DataB-1:0] in_keep;
  logic             in_valid, in_last, in_take;
  logic [NB-1:0]    nbytes;
  logic [DataB-1:0] nb_keep;
  logic [15:0]      crc_s, crc_in, crc_in_d, crc_dfull, crc_beat, vcrc, vcrc_ext;
  logic             full_last; // last beat is full: VCRC in an extra beat
  logic [DataW-1:0] crc_data;  // input of the same-cycle VCRC
  logic [DataB-1:0] crc_keep;
  logic [15:0]      crc_keep_w; // crc_keep zero-extended (DataW 8 has no lane 3)
  logic             fits;      // VCRC fits into the last beat
  logic             one_free;  // exactly one free byte in the last beat

  logic             nxt_valid, nxt_last;
  logic [DataW-1:0] nxt_data;
  logic [DataB-1:0] nxt_keep;

  always_comb begin
    load = ~out_valid_q | tx_tready_i;

    unique case (state_q)
      StIdle:  use_vl15 = vl15_tvalid_i;
      StPkt:   use_vl15 = sel_vl15_q;
      StExtra: use_vl15 = sel_vl15_q;
      default: use_vl15 = sel_vl15_q;
    endcase

    in_data  = use_vl15 ? vl15_tdata_i  : data_tdata_i;
    in_keep  = use_vl15 ? vl15_tkeep_i  : data_tkeep_i;
    in_last  = use_vl15 ? vl15_tlast_i  : data_tlast_i;
    in_valid = (state_q != StExtra) & (use_vl15 ? vl15_tvalid_i : data_tvalid_i);
    in_take  = in_valid & load;

    vl15_tready_o = load & (state_q != StExtra) & use_vl15;
    data_tready_o = load & (state_q != StExtra) & ~use_vl15;

    // Bytes in the beat: only needed where the VCRC can share the last beat,
    // which with Vl15FullBeats is the data input alone (the VL15 case is
    // forced to full_last below).
    nb_keep = Vl15FullBeats ? data_tkeep_i : in_keep;
    nbytes  = '0;
    for (int j = 0; j < DataB; j++) begin
      nbytes = nbytes + NB'(nb_keep[j]);
    end

    // VCRC. A taken beat that is not last, or a full last beat, is only
    // registered (pend_q) and folded into the CRC a cycle later, from
    // registers. The VCRC of a full last beat goes into the extra beat,
    // computed there from crc_q and pend_q. Only a last beat with room for
    // (part of) the VCRC needs its CRC in the cycle it arrives: over its kept
    // bytes (contiguous from lane 0) in whole 4-byte words, one matrix update
    // per word count q, picked by "word q-1 is the last one whose bytes are
    // all kept". Bytes of a trailing partial word (a malformed packet:
    // LRH..ICRC is a multiple of 4 bytes) are sent but not covered; a
    // receiver rejects such a packet for its length anyway.
    crc_s    = pend_vld_q ? crc16_mul(CrcW[NWords-1], WordBytes(NWords), crc_q, (8 * CrcMaxBytes)'(pend_q)) : crc_q;
    crc_in   = (state_q == StIdle) ? Crc16Init : crc_s;
    // With Vl15FullBeats the VL15 input never needs this, so it reads the
    // data input directly (no path from the VL15 RAM into the tree), and data
    // beats are folded into crc_q in the cycle they are taken (they are never
    // pending), so this tree starts from crc_q, not from the pending fold.
    crc_data  = Vl15FullBeats ? data_tdata_i : in_data;
    crc_keep  = Vl15FullBeats ? data_tkeep_i : in_keep;
    crc_in_d  = !Vl15FullBeats ? crc_in : (state_q == StIdle) ? Crc16Init : crc_q;
    crc_dfull = crc16_mul(CrcW[NWords-1], WordBytes(NWords), crc_in_d, (8 * CrcMaxBytes)'(crc_data));
    crc_keep_w = 16'(crc_keep);
    crc_beat  = crc_keep_w[3] ? '0 : crc_in_d;
    for (int unsigned q = 1; q <= NWords; q++) begin
      if (crc_keep_w[4*q-1] && (q == NWords || !crc_keep_w[(4*q+3) % DataB])) begin
        crc_beat = crc_beat | crc16_mul(CrcW[q-1], WordBytes(q), crc_in_d, (8 * CrcMaxBytes)'(crc_data));
      end
    end
    vcrc     = crc_beat ^ Crc16XorOut;
    vcrc_ext = crc_s ^ Crc16XorOut;
    if (!VcrcLsbFirst) begin
      vcrc     = {vcrc[7:0], vcrc[15:8]};
      vcrc_ext = {vcrc_ext[7:0], vcrc_ext[15:8]};
    end
    full_last = (32'(nbytes) == DataB) || (Vl15FullBeats && use_vl15);
    fits      = !full_last && (32'(nbytes) + 2 <= DataB);
    one_free  = !full_last && (32'(nbytes) + 1 == DataB);

    // next output beat (wire byte order: vcrc[7:0] first)
    nxt_valid = 1'b0;
    nxt_last  = 1'b0;
    nxt_data  = in_data;
    nxt_keep  = in_keep;
    if (state_q == StExtra) begin
      nxt_valid = 1'b1;
      nxt_last  = 1'b1;
      nxt_data  = '0;
      if (split_q) begin
        nxt_data[7:0] = vcrc_q[15:8];
        nxt_keep      = DataB'(1'b1);
      end else begin
        // DataW 8: the first VCRC byte alone, the second follows (split)
        nxt_data = DataW'(vcrc_ext);
        nxt_keep = DataB'(2'b11);
        nxt_last = (DataB > 1);
      end
    end else if (in_valid) begin
      nxt_valid = 1'b1;
      if (in_last && one_free) begin
        nxt_data[8*(DataB-1) +: 8] = vcrc[7:0];
        nxt_keep                   = '1;
      end
      if (in_last && fits) begin
        nxt_last = 1'b1;
        for (int j = 0; j < DataB; j++) begin
          if (j == 32'(nbytes)) begin
            nxt_data[8*j +: 8] = vcrc[7:0];
            nxt_keep[j]        = 1'b1;
          end
          if (j == 32'(nbytes) + 1) begin
            nxt_data[8*j +: 8] = vcrc[15:8];
            nxt_keep[j]        = 1'b1;
          end
        end
      end
    end

    // next state
    state_d    = state_q;
    sel_vl15_d = sel_vl15_q;
    crc_d      = crc_q;
    pend_d     = pend_q;
    pend_vld_d = pend_vld_q;
    vcrc_d     = vcrc_q;
    split_d    = split_q;
    unique case (state_q)
      StIdle, StPkt: begin
        if (in_take) begin
          sel_vl15_d = use_vl15;
          if ((!in_last || full_last) && Vl15FullBeats && !use_vl15) begin
            crc_d      = crc_dfull;   // a data beat, folded now
            pend_vld_d = 1'b0;
          end else if (!in_last || full_last) begin
            crc_d      = crc_in;
            pend_d     = in_data;
            pend_vld_d = 1'b1;
          end else begin
            pend_vld_d = 1'b0;
          end
          if (!in_last) begin
            state_d = StPkt;
          end else if (fits) begin
            state_d = StIdle;
          end else begin
            state_d = StExtra;
            vcrc_d  = vcrc;       // used by the split case only
            split_d = one_free;
          end
        end
      end
      StExtra: begin
        if (load) begin
          pend_vld_d = 1'b0;
          if (DataB == 1 && !split_q) begin
            vcrc_d  = vcrc_ext;   // its second byte goes into the next beat
            split_d = 1'b1;
          end else begin
            state_d = StIdle;
          end
        end
      end
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q     <= StIdle;
      sel_vl15_q  <= 1'b0;
      crc_q       <= Crc16Init;
      pend_vld_q  <= 1'b0;
      vcrc_q      <= '0;
      split_q     <= 1'b0;
      out_valid_q <= 1'b0;
      out_last_q  <= 1'b0;
      out_vl15_q  <= 1'b0;
    end else begin
      state_q    <= state_d;
      sel_vl15_q <= sel_vl15_d;
      crc_q      <= crc_d;
      pend_vld_q <= pend_vld_d;
      vcrc_q     <= vcrc_d;
      split_q    <= split_d;
      if (load) begin
        out_valid_q <= nxt_valid;
        out_last_q  <= nxt_last;
        out_vl15_q  <= use_vl15;
      end
    end
  end

  // Datapath registers: no reset needed, qualified by pend_vld_q/out_valid_q.
  always_ff @(posedge clk_i) begin
    pend_q <= pend_d;
  end

  always_ff @(posedge clk_i) begin
    if (load) begin
      out_data_q <= nxt_data;
      out_keep_q <= nxt_keep;
    end
  end

  assign tx_tdata_o    = out_data_q;
  assign tx_tkeep_o    = out_keep_q;
  assign tx_tvalid_o   = out_valid_q;
  assign tx_tlast_o    = out_last_q;
  assign ev_vl15_pkt_o = out_valid_q & tx_tready_i & out_last_q & out_vl15_q;
  assign ev_data_pkt_o = out_valid_q & tx_tready_i & out_last_q & ~out_vl15_q;

`ifndef SYNTHESIS
  // the FSM's states and arcs (docs/coverage.md: FSM coverage); StIdle to
  // StExtra is a one-beat packet whose VCRC does not fit its beat
  default clocking cov_clk @(posedge clk_i); endclocking
  default disable iff (!rst_ni);
  FSM_S_StIdle:          cover property (state_q == StIdle);
  FSM_S_StPkt:           cover property (state_q == StPkt);
  FSM_S_StExtra:         cover property (state_q == StExtra);
  FSM_A_StIdle_StPkt:    cover property (state_q == StIdle  && state_d == StPkt);
  FSM_A_StIdle_StExtra:  cover property (state_q == StIdle  && state_d == StExtra);
  FSM_A_StPkt_StIdle:    cover property (state_q == StPkt   && state_d == StIdle);
  FSM_A_StPkt_StExtra:   cover property (state_q == StPkt   && state_d == StExtra);
  FSM_A_StExtra_StIdle:  cover property (state_q == StExtra && state_d == StIdle);

  // every change of state is one of the arcs above
  always_ff @(posedge clk_i) begin
    if (rst_ni && state_d != state_q) begin
      assert ((state_q == StIdle && state_d inside {StPkt, StExtra}) ||
              (state_q == StPkt  && state_d inside {StIdle, StExtra}) ||
              (state_q == StExtra && state_d == StIdle))
        else $error("%m: FSM arc %0d -> %0d is not in the arc list", state_q, state_d);
    end
  end

  always_ff @(posedge clk_i) begin
    if (rst_ni && Vl15FullBeats && vl15_tvalid_i && vl15_tready_o && vl15_tlast_i) begin
      assert (vl15_tkeep_i == '1)
        else $error("%m: VL15 packet not ending on a full beat (Vl15FullBeats)");
    end
  end

  logic             past_valid_q, past_stall_q, past_last_q;
  logic [DataW-1:0] past_data_q;
  logic [DataB-1:0] past_keep_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      past_valid_q <= 1'b0;
      past_stall_q <= 1'b0;
    end else begin
      past_valid_q <= 1'b1;
      past_stall_q <= tx_tvalid_o & ~tx_tready_i;
    end
    past_data_q <= tx_tdata_o;
    past_keep_q <= tx_tkeep_o;
    past_last_q <= tx_tlast_o;
  end

  always_ff @(posedge clk_i) begin
    if (rst_ni && past_valid_q && past_stall_q) begin
      assert (tx_tvalid_o && tx_tdata_o == past_data_q && tx_tkeep_o == past_keep_q &&
              tx_tlast_o == past_last_q)
        else $error("%m: tx output changed while stalled");
    end
  end
`endif

endmodule
