// ib_uart_up: picks the next board -> host frame and serialises its payload
// into a byte stream for uart_framer. Sources, in fixed priority at frame
// boundaries: a pending register read response (5 bytes from registers), SM
// RX and SMA RX (RxMetaBytes of meta, then the 256 MAD bytes of the DataW
// beats), wire TX packets from the capture FIFO (length from its meta, last
// beat's tkeep). A source beat is taken (tready) when its last byte is sent.
// SMA RX frames end with one more byte, the M_Key verdict (sma_mkey_i,
// valid with the tlast beat, latched when that beat is taken). A frame ends
// (m_tlast_o) at its source's end, which must agree with m_len_o (asserted):
// only the meta bytes are counted.
module ib_uart_up
  import ib_uart_pkg::*;
#(
  parameter int unsigned DataW = 32,  // beat width in bits: 8, 32, 64 or 128
  localparam int unsigned DataB = DataW / 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // register read response
  input  logic             resp_valid_i,  // held until resp_done_o
  input  logic [7:0]       resp_addr_i,
  input  logic [31:0]      resp_data_i,
  output logic             resp_done_o,   // one-cycle pulse: response sent
  // SMA RX and SM RX (MAD streams with their meta)
  input  logic [DataW-1:0] sma_tdata_i,
  input  logic             sma_tvalid_i,
  input  logic             sma_tlast_i,
  output logic             sma_tready_o,
  input  logic [8*RxMetaBytes-1:0] sma_meta_i,  // meta byte i in [8*i +: 8]
  input  logic [1:0]       sma_mkey_i,    // {mask, viol}, valid with the tlast beat
  input  logic [DataW-1:0] sm_tdata_i,
  input  logic             sm_tvalid_i,
  input  logic             sm_tlast_i,
  output logic             sm_tready_o,
  input  logic [8*RxMetaBytes-1:0] sm_meta_i,
  // wire TX packets (capture FIFO read side)
  input  logic [DataW-1:0] wtx_tdata_i,
  input  logic [DataB-1:0] wtx_tkeep_i,
  input  logic             wtx_tvalid_i,
  input  logic             wtx_tlast_i,
  output logic             wtx_tready_o,
  input  logic [15:0]      wtx_len_i,
  // payload bytes to uart_framer
  output logic [7:0]       m_tdata_o,
  output logic             m_tvalid_o,
  output logic             m_tlast_o,
  input  logic             m_tready_i,
  output logic [7:0]       m_type_o,
  output logic [15:0]      m_len_o
);

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end

  localparam int unsigned OffW = (DataB > 1) ? $clog2(DataB) : 1;  // DataW 8: stays 0

  typedef enum logic [2:0] {
    SelNone,
    SelResp,
    SelSm,
    SelSma,
    SelWtx
  } sel_e;

  // Only the meta bytes are counted (Resp: 5, SM/SMA RX: RxMetaBytes); the
  // end of a frame is the source's own end: the tlast beat's last byte (SM
  // RX, wire TX) or the verdict byte after it (SMA RX). The frame lengths of
  // m_len_o agree with those ends (docs/uart.md: the MAD streams carry 256
  // bytes, the capture FIFO's length is the sum of its tkeep; asserted below).
  localparam int unsigned IdxW = $clog2(RxMetaBytes + 1);

  sel_e            sel_q, sel_d;
  logic [IdxW-1:0] idx_q, idx_d;   // meta byte index; stops at RxMetaBytes
  logic [OffW-1:0] off_q, off_d;   // byte within the current source beat
  logic [7:0]      meta_byte;
  localparam int unsigned MetaPadW = 8 * (2 ** IdxW);
  logic [MetaPadW-1:0] rx_meta;  // zero above RxMetaBytes
  logic [DataW-1:0] beat;
  logic [DataB-1:0] keep;
  logic            beat_valid, beat_last, in_meta, beat_end, hs;
  logic            next_kept;      // the byte after off_q in the beat is kept
  logic            meta_q, meta_d; // SM/SMA RX: meta bytes still to send (== idx_q < RxMetaBytes)
  logic            trailer_q;      // SMA RX: the verdict byte after the MAD is next
  logic [1:0]      mkey_q;         // verdict of the SMA MAD being sent

  // SM RX and SMA RX carry the same meta layout (on the board the same nets)
  assign rx_meta = {(MetaPadW - 8 * RxMetaBytes)'(0),
                    (sel_q == SelSma) ? sma_meta_i : sm_meta_i};

  always_comb begin
    m_type_o   = FtWireTx;
    m_len_o    = wtx_len_i;
    in_meta    = 1'b0;
    meta_byte  = rx_meta[8*idx_q +: 8];
    beat       = wtx_tdata_i;
    keep       = wtx_tkeep_i;
    beat_valid = wtx_tvalid_i;
    beat_last  = wtx_tlast_i;
    unique case (sel_q)
      SelResp: begin
        m_type_o   = FtRegReadResp;
        m_len_o    = 16'(RegWriteLen);
        in_meta    = 1'b1;
        unique case (idx_q[2:0])
          3'd0:    meta_byte = resp_addr_i;
          3'd1:    meta_byte = resp_data_i[7:0];
          3'd2:    meta_byte = resp_data_i[15:8];
          3'd3:    meta_byte = resp_data_i[23:16];
          default: meta_byte = resp_data_i[31:24];
        endcase
        beat_valid = 1'b0;
        beat_last  = 1'b0;
      end
      SelSm: begin
        m_type_o   = FtSmRx;
        m_len_o    = 16'(RxMadFrameLen);
        in_meta    = meta_q;
        beat       = sm_tdata_i;
        keep       = '1;
        beat_valid = sm_tvalid_i;
        beat_last  = sm_tlast_i;
      end
      SelSma: begin
        m_type_o   = FtSmaRx;
        m_len_o    = 16'(SmaRxFrameLen);
        in_meta    = meta_q;
        beat       = sma_tdata_i;
        keep       = '1;
        beat_valid = sma_tvalid_i;
        beat_last  = 1'b0;  // the verdict byte ends the frame
      end
      SelWtx, SelNone: ;
      default: ;
    endcase
  end

  assign m_tdata_o  = in_meta ? meta_byte : (trailer_q ? {6'd0, mkey_q} : beat[8*off_q +: 8]);
  assign m_tvalid_o = sel_q != SelNone && (in_meta || trailer_q || beat_valid);
  // last byte of a beat: the beat is full, or the next byte is not kept
  assign beat_end   = !in_meta && !trailer_q &&
                      (32'(off_q) == DataB - 1 || !next_kept);
  assign m_tlast_o  = trailer_q || (sel_q == SelResp ? 32'(idx_q) == RegWriteLen - 1
                                                     : beat_end && beat_last);
  assign hs         = m_tvalid_o && m_tready_i;
  if (DataB > 1) begin : gen_next_kept
    assign next_kept = keep[off_q + OffW'(1)];
  end else begin : gen_one_lane
    // a one-byte beat ends at its byte
    assign next_kept = 1'b0;
    logic unused_keep;
    assign unused_keep = ^keep;
  end

  assign sma_tready_o = sel_q == SelSma && hs && beat_end;
  assign sm_tready_o  = sel_q == SelSm && hs && beat_end;
  assign wtx_tready_o = sel_q == SelWtx && hs && beat_end;
  assign resp_done_o  = sel_q == SelResp && hs && m_tlast_o;

  always_comb begin
    sel_d  = sel_q;
    idx_d  = idx_q;
    off_d  = off_q;
    meta_d = meta_q;
    if (sel_q == SelNone) begin
      idx_d  = '0;
      off_d  = '0;
      meta_d = 1'b1;
      if (resp_valid_i)      sel_d = SelResp;
      else if (sm_tvalid_i)  sel_d = SelSm;
      else if (sma_tvalid_i) sel_d = SelSma;
      else if (wtx_tvalid_i) sel_d = SelWtx;
    end else if (hs) begin
      if (in_meta) idx_d = idx_q + IdxW'(1);
      // a flag, not a compare of idx_q, on the path to the sources' tready
      if (32'(idx_q) == RxMetaBytes - 1) meta_d = 1'b0;
      if (!in_meta && !trailer_q) off_d = beat_end ? '0 : off_q + OffW'(1);
      if (m_tlast_o) sel_d = SelNone;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      sel_q     <= SelNone;
      idx_q     <= '0;
      off_q     <= '0;
      meta_q    <= 1'b0;
      trailer_q <= 1'b0;
      mkey_q    <= '0;
    end else begin
      sel_q <= sel_d;
      idx_q <= idx_d;
      off_q  <= off_d;
      meta_q <= meta_d;
      if (sma_tready_o && sma_tlast_i) begin
        trailer_q <= 1'b1;
        mkey_q    <= sma_mkey_i;
      end else if (hs && trailer_q) begin
        trailer_q <= 1'b0;
      end
    end
  end

`ifndef SYNTHESIS
  // The frame ends (m_tlast_o) at its byte m_len_o: the sources' packet ends
  // and the per-source lengths agree.
  logic [15:0] sent_q;  // payload bytes of this frame sent so far
  always_ff @(posedge clk_i) begin
    if (!rst_ni || sel_q == SelNone) begin
      sent_q <= '0;
    end else if (hs) begin
      sent_q <= sent_q + 16'd1;
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_ni && sel_q inside {SelSm, SelSma}) begin
      assert (meta_q == (32'(idx_q) < RxMetaBytes)) else $error("%m: meta flag vs index");
    end
    if (rst_ni && hs) begin
      assert (m_tlast_o == (sent_q == m_len_o - 16'd1))
        else $error("%m: source %0d ends at byte %0d, length %0d", sel_q, sent_q, m_len_o);
    end
  end
`endif

endmodule
