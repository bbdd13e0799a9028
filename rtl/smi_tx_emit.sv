// smi_tx_emit: the packet beats of the SMI send engines (smi_sq, sw_smi_sq).
// For the engine's state and packet beat index it builds the beat that goes
// to the TX buffer: a header beat (LRH/BTH/DETH, ib_pkg::smp_hdr, from the
// granted source's addressing in TxIdle, from the registered one later), a
// MAD beat (the source beat, realigned behind the header), or a tail beat
// (the last MAD bytes and the ICRC); it rewrites the directed-route hop
// pointer (MAD byte 6) on the fly and folds every beat, as the ICRC sees
// it, into the running CRC a cycle later.
// Packet beat k holds packet bytes k*DataB..; MAD byte i is packet byte
// MadOffset+i. Beats 0..HdrBeats-1 are header only; beat HdrBeats+m
// (m = 0..MadBeats-1) carries MAD beat m in lanes Shift..DataB-1 and, in
// lanes 0..Shift-1, the header tail (m = 0) or the upper Shift bytes of MAD
// beat m-1; the last beat has the upper Shift bytes of the last MAD beat and
// the ICRC (Shift + 4 = DataB, or Shift = 0).
// DataW 8 (Lag = 1): MAD byte m goes out in beat HdrBeats + m as above, but
// is taken from the source a beat earlier (held here), so that the engine
// rewrites the hop pointer (MAD byte 6) with the hop count (byte 7) in hand;
// the ICRC then takes 4 beats.
module smi_tx_emit
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 8, 32, 64 or 128
  localparam int unsigned DataB    = DataW / 8,
  localparam int unsigned PktBeats = SmpPktBytes / DataB,
  localparam int unsigned KW       = $clog2(PktBeats)
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // the engine's FSM
  input  smi_tx_state_e    state_i,
  input  logic [KW-1:0]    k_i,           // packet beat index
  input  logic             wr_beat_i,     // a packet beat goes to the TX buffer
  input  logic             wr_end_i,      // ... the last one: the next CRC is Init
  // header addressing: of the granted source (TxIdle), registered (later)
  input  logic [15:0]      dlid_new_i,
  input  logic [15:0]      slid_new_i,
  input  logic [3:0]       sl_new_i,
  input  logic [15:0]      dlid_i,
  input  logic [15:0]      slid_i,
  input  logic [3:0]       sl_i,
  input  logic [23:0]      psn_i,
  // the selected source's MAD beat, and whether it is taken
  input  logic [DataW-1:0] src_data_i,
  input  logic             take_i,
  // hop pointer rewrite: the packet's is rewritten (class 0x81 with the
  // send rules), to hp_new_i
  input  logic             hp_dr_i,
  input  logic [7:0]       hp_new_i,
  // the beat
  output logic [DataW-1:0] beat_o
);

  localparam int unsigned Lag      = (DataB == 1) ? 1 : 0;
  localparam int unsigned Shift    = MadOffset % DataB;
  localparam int unsigned HdrBeats = MadOffset / DataB;
  localparam int unsigned MadBeats = MadBytes / DataB;
  localparam int unsigned MadEnd   = HdrBeats + MadBeats;  // first tail beat
  localparam int unsigned HdrPad   = (HdrBeats + 1) * DataB;  // header bytes, padded
  localparam int unsigned PbHopPtr = MadOffset + MbHopPtr;

  if (Shift != 0 && Shift + IcrcBytes != DataB) begin : gen_geom_check
    $fatal(1, "%m: unsupported beat geometry for DataW %0d", DataW);
  end
  if (HdrPad > SmpHdrPad) begin : gen_hdr_check
    $fatal(1, "%m: header of %0d bytes exceeds SmpHdrPad", HdrPad);
  end

  // ---------------------------------------------------------------------------
  // Header beat k_i: in TxIdle (k_i = 0) from the granted source's
  // addressing, later beats from the registered one.
  // ---------------------------------------------------------------------------
  logic [HdrPad*8-1:0] hdr;
  logic [DataW-1:0]    hdr_beat;
  if (DataB == 1) begin : gen_hdr_byte
    // DataW 8: the first beat (byte 0, VL/LVer) holds no addressing at all
    logic [DataW-1:0] hdr_new0;
    assign hdr_new0 = DataW'(smp_hdr(dlid_new_i, slid_new_i, sl_new_i, psn_i));
    assign hdr      = (HdrPad*8)'(smp_hdr(dlid_i, slid_i, sl_i, psn_i));
    assign hdr_beat = (state_i == TxIdle) ? hdr_new0 : hdr[32'(k_i) * DataW +: DataW];
  end else begin : gen_hdr_wide
    // the addressing picked before the beat select (the shallower path into
    // the TX buffer at DataW 64)
    logic idle;
    assign idle     = (state_i == TxIdle);
    assign hdr      = (HdrPad*8)'(smp_hdr(idle ? dlid_new_i : dlid_i,
                                          idle ? slid_new_i : slid_i,
                                          idle ? sl_new_i : sl_i, psn_i));
    assign hdr_beat = hdr[32'(k_i) * DataW +: DataW];
  end

  // ---------------------------------------------------------------------------
  // MAD and tail beats
  // ---------------------------------------------------------------------------
  logic [31:0]      crc_q, crc_d;
  logic [DataW-1:0] pend_q;      // beat waiting to be folded into crc_q
  logic             pend_vld_q;
  logic [DataW-1:0] beat_mad;   // beat in TxMad (before the hop pointer rewrite)
  logic [DataW-1:0] beat_tail;  // last beat: held MAD bytes and the ICRC
  logic [DataW-1:0] beat_raw;
  logic [31:0]      crc_fold;   // crc_q with the pending beat folded in

  if (Lag != 0) begin : gen_lag
    // the MAD byte taken a beat earlier; the ICRC byte k_i - MadEnd
    logic [DataW-1:0] held_q;
    logic [31:0]      icrc;
    always_ff @(posedge clk_i) begin
      if (take_i) begin
        held_q <= src_data_i;
      end
    end
    assign icrc      = crc_fold ^ Crc32XorOut;
    assign beat_mad  = held_q;
    assign beat_tail = DataW'(icrc >> (8 * (32'(k_i) - MadEnd)));
  end else if (Shift == 0) begin : gen_aligned
    logic unused_take;  // the source beat goes out as it is: nothing held
    assign unused_take = take_i;
    assign beat_mad  = src_data_i;
    assign beat_tail = DataW'(crc_fold ^ Crc32XorOut);
  end else begin : gen_shift
    logic [Shift*8-1:0] held_q;   // upper Shift bytes of the previous MAD beat
    logic [31:0]        icrc;
    always_ff @(posedge clk_i) begin
      if (take_i) begin
        held_q <= src_data_i[DataW-1:(DataB-Shift)*8];
      end
    end
    // The tail always follows the last MAD beat, still pending: fold it and
    // the held bytes in one matrix update (one XOR tree from registers).
    localparam crc32_mat_t CrcTailAll = crc32_mat(DataB + Shift);
    assign icrc = crc32_mul(CrcTailAll, DataB + Shift, crc_q, (8 * CrcMaxBytes)'({held_q, pend_q})) ^
                  Crc32XorOut;
    assign beat_mad  = {src_data_i[(DataB-Shift)*8-1:0],
                        (32'(k_i) == HdrBeats) ? hdr[HdrBeats*DataW +: Shift*8] : held_q};
    assign beat_tail = {icrc, held_q};
  end

  // ---------------------------------------------------------------------------
  // Hop pointer rewrite
  // ---------------------------------------------------------------------------
  // The hop pointer (packet byte PbHopPtr) is rewritten in lane HpLane of
  // beat HpBeat. The ICRC mask bytes (packet bytes 0 and 12) lie at fixed
  // beats and lanes too.
  localparam int unsigned HpBeat     = PbHopPtr / DataB;
  localparam int unsigned HpLane     = PbHopPtr % DataB;
  localparam int unsigned Resv8aBeat = PbBthResv8a / DataB;
  localparam int unsigned Resv8aLane = PbBthResv8a % DataB;
  localparam crc32_mat_t  CrcFull    = crc32_mat(DataB);

  logic             hp_rewrite;  // this beat carries a DR hop pointer to replace
  logic [7:0]       hp_delta;    // old ^ new hop pointer byte
  logic [DataW-1:0] icrc_raw;    // beat_raw as the ICRC sees it (mask applied)
  logic [DataW-1:0] icrc_delta;  // hop pointer change, in its lane

  always_comb begin
    unique case (state_i)
      TxIdle, TxHdr: beat_raw = hdr_beat;
      TxMad:         beat_raw = beat_mad;
      default:       beat_raw = beat_tail;  // TxTail
    endcase
    hp_rewrite = (32'(k_i) == HpBeat) && hp_dr_i && state_i == TxMad;
    hp_delta   = hp_rewrite ? (beat_raw[8*HpLane +: 8] ^ hp_new_i) : 8'h00;
    beat_o     = beat_raw;
    beat_o[8*HpLane +: 8] = beat_raw[8*HpLane +: 8] ^ hp_delta;
  end

  // ---------------------------------------------------------------------------
  // ICRC fold
  // ---------------------------------------------------------------------------
  // One cycle behind the beats: each written beat (all full, up to the last
  // MAD beat) is registered as the ICRC sees it (mask applied, new hop
  // pointer in) and folded into crc_q in the next cycle, so the wide XOR tree
  // runs from registers. The tail beat folds the last pending beat on the
  // fly. The hop pointer change enters the register as an XOR in its lane.
  always_comb begin
    // beat_raw without the tail beat (the tail is not covered)
    icrc_raw = (state_i == TxMad) ? beat_mad : hdr_beat;
    if (k_i == '0) begin
      icrc_raw[8*PbLrhVlLver + 4 +: 4] = 4'hF;   // LRH.VL
    end
    if (32'(k_i) == Resv8aBeat) begin
      icrc_raw[8*Resv8aLane +: 8] = 8'hFF;        // BTH.resv8a
    end
    icrc_delta = '0;
    icrc_delta[8*HpLane +: 8] = hp_delta;
  end

  assign crc_fold = pend_vld_q ? crc32_mul(CrcFull, DataB, crc_q, (8 * CrcMaxBytes)'(pend_q)) : crc_q;
  // the tail used the final CRC; the next packet starts from Init
  assign crc_d    = wr_end_i ? Crc32Init : crc_fold;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      pend_vld_q <= 1'b0;
      crc_q      <= Crc32Init;
    end else begin
      pend_vld_q <= wr_beat_i && state_i != TxTail;
      crc_q      <= crc_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (wr_beat_i && state_i != TxTail) begin
      pend_q <= icrc_raw ^ icrc_delta;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && state_i == TxTail && 32'(k_i) == MadEnd) begin
      assert (pend_vld_q)
        else $error("%m: tail without the last MAD beat pending");
    end
  end
`endif

endmodule
