// ib_link_rx: link-layer receive checks. Takes wire packets (LRH..VCRC, no
// ready, idle cycles allowed between the beats of a packet), checks the
// length, LVer, LNH and VCRC, and forwards each packet unchanged, one register
// stage later, to the VL15 output (LRH.VL = 15) or the data-VL output. On the
// tlast beat tuser = 1 marks a packet with a link error, and exactly one event
// pulse names it (precedence len > lver > lnh > vcrc).
module ib_link_rx
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 8, 32, 64 or 128
  localparam int unsigned DataB = DataW / 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // wire in
  input  logic [DataW-1:0] rx_tdata_i,
  input  logic [DataB-1:0] rx_tkeep_i,
  input  logic             rx_tvalid_i,
  input  logic             rx_tlast_i,
  // VL15 packets out
  output logic [DataW-1:0] vl15_tdata_o,
  output logic [DataB-1:0] vl15_tkeep_o,
  output logic             vl15_tvalid_o,
  output logic             vl15_tlast_o,
  output logic             vl15_tuser_o,
  // data-VL packets out
  output logic [DataW-1:0] data_tdata_o,
  output logic [DataB-1:0] data_tkeep_o,
  output logic             data_tvalid_o,
  output logic             data_tlast_o,
  output logic             data_tuser_o,
  // event pulses, with the tlast output beat
  output logic             ev_pkt_o,
  output logic             ev_data_pkt_o,
  output logic             ev_len_err_o,
  output logic             ev_lver_err_o,
  output logic             ev_lnh_err_o,
  output logic             ev_vcrc_err_o
);

  localparam int unsigned NB    = $clog2(DataB + 1);  // holds 0..DataB
  localparam int unsigned LenW  = 16;                 // byte counter, saturating

  // Packet bytes 0, 1, 4, 5 lie in the beat that starts at these byte counts.
  localparam int unsigned BeatOf0 = PbLrhVlLver - PbLrhVlLver % DataB;
  localparam int unsigned BeatOf1 = PbLrhSlLnh - PbLrhSlLnh % DataB;
  localparam int unsigned BeatOf4 = PbLrhPktLen - PbLrhPktLen % DataB;
  localparam int unsigned BeatOf5 = (PbLrhPktLen + 1) - (PbLrhPktLen + 1) % DataB;
  // Beats counted (saturating): enough to see beat BeatOf5 / DataB, at
  // least 2 (DataW >= 32: 2 bits, as before; DataW 8: byte 5 is beat 5).
  localparam int unsigned NbMax   = (BeatOf5 / DataB >= 2) ? BeatOf5 / DataB + 1 : 2;
  localparam int unsigned NbW     = $clog2(NbMax + 1);
  // CRC-16 matrices: a whole beat, and the 4k-byte heads of a tlast beat
  // (DataW 8 has no 4-byte head: one placeholder entry, never selected).
  localparam int unsigned NTail   = (DataB >= 4) ? DataB / 4 : 1;
  localparam int unsigned CrcMaxB = 8 * CrcMaxBytes;
  localparam crc16_mat_t CrcFull  = crc16_mat(DataB);
  typedef crc16_mat_t [NTail-1:0] crc16_tails_t;
  function automatic crc16_tails_t crc16_tails();
    crc16_tails_t t;
    for (int unsigned k = 0; k < NTail; k++) begin
      t[k] = crc16_mat(4 * k);
    end
    return t;
  endfunction
  localparam crc16_tails_t CrcTail = crc16_tails();

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end

  // ---------------------------------------------------------------------------
  // Per-packet state (advances only on valid beats)
  // ---------------------------------------------------------------------------
  logic            in_pkt_q, in_pkt_d;    // a packet has started (>= 1 beat seen)
  logic [LenW-1:0] bcnt_q, bcnt_d;        // bytes seen before this beat
  logic [15:0]     crc_q, crc_d;          // CRC-16 state over the bytes seen
  logic [NbW-1:0]  nbeat_q, nbeat_d;      // beats of this packet seen, saturating at NbMax
  logic [7:0]      b0_q, b0_d;            // packet byte 0: VL, LVer
  logic [7:0]      b1_q, b1_d;            // packet byte 1: SL, LNH
  logic [7:0]      b4_q, b4_d;            // packet bytes 4..5: PktLen
  logic [7:0]      b5_q, b5_d;
  logic [7:0]      prev_q;                // DataW 8: the previous byte (the one before this beat)

  logic [NB-1:0]   nbytes;                // bytes in this beat
  logic [LenW-1:0] total;                 // bytes including this beat
  logic [15:0]     crc_beat;              // CRC after the covered bytes of this beat
  logic [15:0]     crc_in;                // CRC before this beat
  logic [15:0]     crc_full;              // ... after all DataB bytes
  logic [15:0]     crc_tail;              // ... after the 4k covered bytes of a tlast beat
  logic [NB-1:0]   tail_k;                // k of a tlast beat with nbytes = 4k + 2
  logic [7:0]      vcrc_lo, vcrc_hi;      // the two bytes after the 4k covered ones
  logic [15:0]     vcrc_rx;               // last two bytes of the packet
  logic [15:0]     rx_lo16;               // the beat's first two bytes (DataW 8: one, zero-extended)
  logic [15:0]     vcrc_calc;
  logic [10:0]     pkt_len;
  logic [12:0]     last_byte;             // offset of the packet's last byte per PktLen
  logic            route_vl15;
  logic            err_len, err_lver, err_lnh, err_vcrc, err_any;
  logic            end_pkt;

  assign rx_lo16 = 16'(rx_tdata_i);

  always_comb begin
    // bytes in this beat (tkeep is contiguous from bit 0)
    nbytes = '0;
    for (int j = 0; j < DataB; j++) begin
      nbytes = nbytes + NB'(rx_tkeep_i[j]);
    end
    total = (bcnt_q > {LenW{1'b1}} - LenW'(DataB)) ? {LenW{1'b1}} : bcnt_q + LenW'(nbytes);

    // Header bytes: start from zero at a new packet, pick up this beat's
    // bytes. Every beat but the last is full, so packet byte `off` is lane
    // off % DataB of beat off / DataB (0 or 1 for these bytes at DataW >= 32,
    // 0..5 at DataW 8).
    b0_d = in_pkt_q ? b0_q : 8'h00;
    b1_d = in_pkt_q ? b1_q : 8'h00;
    b4_d = in_pkt_q ? b4_q : 8'h00;
    b5_d = in_pkt_q ? b5_q : 8'h00;
    if (nbeat_q == NbW'(BeatOf0 / DataB) && rx_tkeep_i[PbLrhVlLver % DataB]) begin
      b0_d = rx_tdata_i[8*(PbLrhVlLver % DataB) +: 8];
    end
    if (nbeat_q == NbW'(BeatOf1 / DataB) && rx_tkeep_i[PbLrhSlLnh % DataB]) begin
      b1_d = rx_tdata_i[8*(PbLrhSlLnh % DataB) +: 8];
    end
    if (nbeat_q == NbW'(BeatOf4 / DataB) && rx_tkeep_i[PbLrhPktLen % DataB]) begin
      b4_d = rx_tdata_i[8*(PbLrhPktLen % DataB) +: 8];
    end
    if (nbeat_q == NbW'(BeatOf5 / DataB) && rx_tkeep_i[(PbLrhPktLen + 1) % DataB]) begin
      b5_d = rx_tdata_i[8*((PbLrhPktLen + 1) % DataB) +: 8];
    end

    // VCRC: a middle beat is covered whole; a tlast beat of a well-formed
    // packet (LRH..ICRC a multiple of 4 bytes) holds 4k covered bytes and
    // then the two VCRC bytes, nbytes = 4k + 2. Any other nbytes is a length
    // error, which takes precedence over the VCRC check, so only those DataB/4
    // cases need a CRC: one matrix update per k, selected by k.
    crc_in   = in_pkt_q ? crc_q : Crc16Init;
    if (DataB == 1) begin
      crc_full = in_pkt_q ? crc16_mul(CrcFull, DataB, crc_q, CrcMaxB'(prev_q)) : Crc16Init;
    end else begin
      crc_full = crc16_mul(CrcFull, DataB, crc_in, CrcMaxB'(rx_tdata_i));
    end
    tail_k   = NB'(32'(nbytes) >> 2);
    crc_tail = crc_in;
    if (DataB == 1) begin
      // Byte per beat: the VCRC is the previous byte and this one, and the
      // CRC state lags one byte (crc_q covers the bytes before prev_q), so
      // crc_in is already the CRC of the bytes before the VCRC.
      vcrc_lo = prev_q;
      vcrc_hi = rx_lo16[7:0];
    end else begin
      vcrc_lo = rx_lo16[7:0];
      vcrc_hi = rx_lo16[15:8];
    end
    for (int unsigned k = 1; k < NTail; k++) begin
      if (32'(tail_k) == k) begin
        crc_tail = crc16_mul(CrcTail[k], 4 * k, crc_in, CrcMaxB'(rx_tdata_i));
        vcrc_lo  = rx_tdata_i[32*k +: 8];
        vcrc_hi  = rx_tdata_i[32*k + 8 +: 8];
      end
    end
    crc_beat = rx_tlast_i ? crc_tail : crc_full;
    vcrc_rx  = VcrcLsbFirst ? {vcrc_hi, vcrc_lo} : {vcrc_lo, vcrc_hi};
    vcrc_calc = crc_beat ^ Crc16XorOut;

    // checks, valid on the tlast beat
    pkt_len    = {b4_d[2:0], b5_d};
    route_vl15 = (b0_d[7:4] == Vl15);
    // Length: the packet is 4 * PktLen + 2 bytes. Its last byte, number
    // {PktLen, 2'b01}, must sit in this tlast beat: the beat's first byte
    // count is that number with the lane bits cleared, and the beat holds
    // its lane + 1 bytes. Equal to "bytes seen == 4 * PktLen + 2" (earlier
    // beats are full) without an adder in the path.
    last_byte  = {pkt_len, 2'b01};
    err_len    = (bcnt_q != {3'b000, last_byte & ~13'(DataB - 1)}) ||
                 (nbytes != NB'(last_byte & 13'(DataB - 1)) + NB'(1)) ||
                 (pkt_len < 11'(MinPktLen));
    err_lver   = (b0_d[3:0] != 4'h0);
    err_lnh    = (b1_d[1:0] != LnhIbaLocal) && (b1_d[1:0] != LnhIbaGlobal);
    err_vcrc   = (vcrc_rx != vcrc_calc);
    err_any    = err_len | err_lver | err_lnh | err_vcrc;
    end_pkt    = rx_tvalid_i & rx_tlast_i;

    // next state
    in_pkt_d = in_pkt_q;
    nbeat_d  = nbeat_q;
    bcnt_d   = bcnt_q;
    crc_d    = crc_q;
    if (rx_tvalid_i) begin
      in_pkt_d = ~rx_tlast_i;
      nbeat_d  = rx_tlast_i ? '0 : (nbeat_q == NbW'(NbMax) ? nbeat_q : nbeat_q + NbW'(1));
      bcnt_d   = rx_tlast_i ? '0 : total;
      crc_d    = crc_beat;
    end
    if (!rx_tvalid_i) begin
      b0_d = b0_q;
      b1_d = b1_q;
      b4_d = b4_q;
      b5_d = b5_q;
    end
  end

  // ---------------------------------------------------------------------------
  // Output register stage
  // ---------------------------------------------------------------------------
  logic             out_valid_q, out_vl15_q, out_last_q, out_user_q;
  logic [DataW-1:0] out_data_q;
  logic [DataB-1:0] out_keep_q;
  logic             ev_pkt_q, ev_data_q, ev_len_q, ev_lver_q, ev_lnh_q, ev_vcrc_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      in_pkt_q    <= 1'b0;
      nbeat_q     <= '0;
      bcnt_q      <= '0;
      crc_q       <= Crc16Init;
      b0_q        <= '0;
      b1_q        <= '0;
      b4_q        <= '0;
      b5_q        <= '0;
      out_valid_q <= 1'b0;
      out_vl15_q  <= 1'b0;
      out_last_q  <= 1'b0;
      out_user_q  <= 1'b0;
      ev_pkt_q    <= 1'b0;
      ev_data_q   <= 1'b0;
      ev_len_q    <= 1'b0;
      ev_lver_q   <= 1'b0;
      ev_lnh_q    <= 1'b0;
      ev_vcrc_q   <= 1'b0;
    end else begin
      in_pkt_q    <= in_pkt_d;
      nbeat_q     <= nbeat_d;
      bcnt_q      <= bcnt_d;
      crc_q       <= crc_d;
      b0_q        <= b0_d;
      b1_q        <= b1_d;
      b4_q        <= b4_d;
      b5_q        <= b5_d;
      out_valid_q <= rx_tvalid_i;
      if (rx_tvalid_i) begin
        out_vl15_q <= route_vl15;
        out_last_q <= rx_tlast_i;
        out_user_q <= rx_tlast_i & err_any;
      end
      ev_pkt_q    <= end_pkt;
      ev_data_q   <= end_pkt & ~err_any & ~route_vl15;
      ev_len_q    <= end_pkt & err_len;
      ev_lver_q   <= end_pkt & ~err_len & err_lver;
      ev_lnh_q    <= end_pkt & ~err_len & ~err_lver & err_lnh;
      ev_vcrc_q   <= end_pkt & ~err_len & ~err_lver & ~err_lnh & err_vcrc;
    end
  end

  // DataW 8: the previous byte, for the VCRC and the lagging CRC (no reset:
  // read only when in_pkt_q says a beat of this packet was seen).
  if (DataB == 1) begin : gen_prev
    always_ff @(posedge clk_i) begin
      if (rx_tvalid_i) begin
        prev_q <= rx_tdata_i[7:0];
      end
    end
  end else begin : gen_no_prev
    assign prev_q = '0;
  end

  // Datapath register: no reset needed, qualified by out_valid_q.
  always_ff @(posedge clk_i) begin
    if (rx_tvalid_i) begin
      out_data_q <= rx_tdata_i;
      out_keep_q <= rx_tkeep_i;
    end
  end

  assign vl15_tdata_o  = out_data_q;
  assign vl15_tkeep_o  = out_keep_q;
  assign vl15_tvalid_o = out_valid_q & out_vl15_q;
  assign vl15_tlast_o  = out_last_q;
  assign vl15_tuser_o  = out_user_q;
  assign data_tdata_o  = out_data_q;
  assign data_tkeep_o  = out_keep_q;
  assign data_tvalid_o = out_valid_q & ~out_vl15_q;
  assign data_tlast_o  = out_last_q;
  assign data_tuser_o  = out_user_q;

  assign ev_pkt_o      = ev_pkt_q;
  assign ev_data_pkt_o = ev_data_q;
  assign ev_len_err_o  = ev_len_q;
  assign ev_lver_err_o = ev_lver_q;
  assign ev_lnh_err_o  = ev_lnh_q;
  assign ev_vcrc_err_o = ev_vcrc_q;

`ifndef SYNTHESIS
  // Wire-side sanity: a valid beat has a contiguous, non-empty tkeep and is
  // full unless it is the last one.
  always_ff @(posedge clk_i) begin
    if (rst_ni && rx_tvalid_i) begin
      assert (rx_tkeep_i != '0 && ((rx_tkeep_i & (rx_tkeep_i + DataB'(1))) == '0))
        else $error("%m: rx_tkeep_i %h not contiguous from bit 0", rx_tkeep_i);
      assert (rx_tlast_i || rx_tkeep_i == '1)
        else $error("%m: partial rx beat without tlast");
    end
  end
`endif

endmodule
