// ib_ca_board: board-independent FPGA top of one vl15 CA port. ib_ca_top plus
// a UART (8N1) that carries framed packets, MADs and register accesses to and
// from a host (docs/uart.md), so the host's SMA/SM drive the SMI through a
// serial port. The host plays the link partner: its WIRE_RX frames go into
// the port's wire RX and the port's wire TX comes back as WIRE_TX frames;
// with RegBoardCtrl bit 0 set, an internal loopback joins wire TX to wire RX
// instead. LEDs (active high): [0] link up (PortState != Down), [1] an SMP
// was delivered to the SMA or SM (stretched), [2] something was dropped:
// a bad frame or a port drop counter event (stretched).
module ib_ca_board
  import ib_pkg::*;
  import ib_uart_pkg::*;
#(
  parameter int unsigned ClkHz         = 48_000_000,  // clk_i frequency
  parameter int unsigned Baud          = 3_000_000,   // UART bit rate
  parameter int unsigned DataW         = 32,          // port datapath width: 8, 32, 64 or 128
  parameter int unsigned IdleTimeoutUs = 10_000,      // idle time that abandons a half-received frame
  parameter int unsigned LedStretchMs  = 60,          // LED on-time after an event (within an eighth)
  // The port's counters in block RAM (ib_port_regs CtrRam): register reads
  // answer after up to 28 cycles, which the UART path does not notice.
  parameter bit          CtrRam        = 1'b1,
  // The P_Key table (64 entries) in block RAM, scanned while a packet
  // streams (gsi_rx_check PkeyRam; needs CtrRam). The scan needs 66 beats
  // between a GMP's P_Key and its tlast: only DataW 8 and 32 have them, so wider
  // builds keep the flip-flop table.
  parameter bit          PkeyRam       = 1'b1,
  // The GSI receive checks (ib_ca_top GsiChk). The board has no data-VL
  // path to the host (drx is not framed), so they only feed the GSI
  // counters; the iCEBreaker build leaves them out for area.
  parameter bit          GsiChk        = 1'b1,
  // The per-slot meta words of the VL15 RX buffer and of the down and wire
  // TX buffers in block RAM (ib_pkt_fifo MetaRam, ib_ca_top Vl15MetaRam),
  // for the iCE40, which has no LUT RAM (flip-flops and read muxes
  // otherwise). The ECP5 board sets 0 (LUT RAM): its block RAM's
  // clock-to-out on the RX buffer's meta would be its critical path.
  parameter bit          FifoMetaRam   = 1'b1
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic       uart_rx_i,
  output logic       uart_tx_o,
  output logic [2:0] led_o
);

  localparam int unsigned DataB       = DataW / 8;
  localparam int unsigned ClksPerBit  = (ClkHz + Baud / 2) / Baud;
  localparam int unsigned TimeoutClks = (ClkHz / 1_000_000) * IdleTimeoutUs;
  localparam int unsigned StretchClks = (ClkHz / 1000) * LedStretchMs;
  localparam int unsigned SlotWords   = (MaxPayload + DataB - 1) / DataB;
  localparam int unsigned DownMetaW   = $bits(down_meta_t);

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end
  if (ClkHz < 1_000_000) begin : gen_clk_check
    $fatal(1, "%m: ClkHz must be >= 1 MHz, got %0d", ClkHz);
  end

  // ---------------------------------------------------------------------------
  // Host -> board: UART RX, deframer, payload packer, down buffer
  // ---------------------------------------------------------------------------
  logic [7:0] urx_data;
  logic       urx_valid, urx_err;

  uart_rx #(.ClkHz(ClkHz), .Baud(Baud)) u_uart_rx (
    .clk_i,
    .rst_ni,
    .rx_i   (uart_rx_i),
    .data_o (urx_data),
    .valid_o(urx_valid),
    .err_o  (urx_err)
  );

  logic [7:0]  df_byte;
  logic        df_byte_valid;
  logic [15:0] df_idx;
  logic [7:0]  df_type;
  logic        df_end, df_ok;
  logic        ev_df_ok, ev_df_crc, ev_df_ferr;

  uart_deframer #(.TimeoutClks(TimeoutClks)) u_deframer (
    .clk_i,
    .rst_ni,
    .rx_data_i     (urx_data),
    .rx_valid_i    (urx_valid),
    .rx_err_i      (urx_err),
    .byte_data_o   (df_byte),
    .byte_valid_o  (df_byte_valid),
    .byte_idx_o    (df_idx),
    .type_o        (df_type),
    .end_o         (df_end),
    .ok_o          (df_ok),
    .ev_ok_o       (ev_df_ok),
    .ev_crc_err_o  (ev_df_crc),
    .ev_frame_err_o(ev_df_ferr)
  );

  logic                 dn_wr_valid, dn_wr_end, dn_wr_ok, dn_drop_full, dn_slot_free;
  logic [DataW-1:0]     dn_wr_data;
  logic [DataB-1:0]     dn_wr_keep;
  logic [DownMetaW-1:0] dn_wr_meta;
  logic                 ureg_we, ureg_re;
  logic [7:0]           ureg_addr;
  logic [31:0]          ureg_wdata;

  ib_uart_down #(.DataW(DataW)) u_down (
    .clk_i,
    .rst_ni,
    .byte_data_i (df_byte),
    .byte_valid_i(df_byte_valid),
    .byte_idx_i  (df_idx),
    .type_i      (df_type),
    .end_i       (df_end),
    .ok_i        (df_ok),
    .wr_valid_o  (dn_wr_valid),
    .wr_data_o   (dn_wr_data),
    .wr_keep_o   (dn_wr_keep),
    .wr_end_o    (dn_wr_end),
    .wr_ok_o     (dn_wr_ok),
    .wr_meta_o   (dn_wr_meta),
    .reg_we_o    (ureg_we),
    .reg_re_o    (ureg_re),
    .reg_addr_o  (ureg_addr),
    .reg_wdata_o (ureg_wdata)
  );

  logic [DataW-1:0]     dn_rd_tdata;
  logic [DataB-1:0]     dn_rd_tkeep;
  logic                 dn_rd_tvalid, dn_rd_tlast, dn_rd_tready;
  logic [DownMetaW-1:0] dn_rd_meta;

  ib_pkt_fifo #(
    .DataW    (DataW),
    .Depth    (2),
    .SlotWords(SlotWords),
    .MetaW    (DownMetaW),
    .MetaRam  (32'(FifoMetaRam))  // the demux and the TX meta use it only while valid
  ) u_down_fifo (
    .clk_i,
    .rst_ni,
    .limit_i       (8'd2),
    .wr_valid_i    (dn_wr_valid),
    .wr_data_i     (dn_wr_data),
    .wr_keep_i     (dn_wr_keep),
    .wr_end_i      (dn_wr_end),
    .wr_ok_i       (dn_wr_ok),
    .wr_meta_i     (dn_wr_meta),
    .wr_drop_full_o(dn_drop_full),
    .wr_slot_free_o(dn_slot_free),
    .rd_tdata_o    (dn_rd_tdata),
    .rd_tkeep_o    (dn_rd_tkeep),
    .rd_tvalid_o   (dn_rd_tvalid),
    .rd_tlast_o    (dn_rd_tlast),
    .rd_meta_o     (dn_rd_meta),
    .rd_tready_i   (dn_rd_tready)
  );

  down_meta_t dn_meta;
  assign dn_meta = down_meta_t'(dn_rd_meta);

  // ---------------------------------------------------------------------------
  // The CA port
  // ---------------------------------------------------------------------------
  logic             loopback_q;
  logic [DataW-1:0] rx_tdata, tx_tdata;
  logic [DataB-1:0] rx_tkeep, tx_tkeep;
  logic             rx_tvalid, rx_tlast, tx_tvalid, tx_tlast, tx_tready;
  logic             sma_tx_tvalid, sma_tx_tready, sm_tx_tvalid, sm_tx_tready;
  logic             trap_tx_tvalid, trap_tx_tready;
  logic [DataW-1:0] sma_rx_tdata, sm_rx_tdata;
  logic             sma_rx_tvalid, sma_rx_tlast, sma_rx_tready;
  logic             sm_rx_tvalid, sm_rx_tlast, sm_rx_tready;
  logic [15:0]      sma_rx_slid, sma_rx_dlid, sm_rx_slid, sm_rx_dlid;
  logic [3:0]       sma_rx_sl, sm_rx_sl;
  logic [7:0]       sma_rx_port, sma_rx_class, sm_rx_port, sm_rx_class;
  logic [6:0]       sma_rx_hp, sma_rx_hc, sm_rx_hp, sm_rx_hc;
  logic             sma_rx_mkey_viol, sma_rx_mkey_mask;  // M_Key verdict (with tlast)
  // the host reads the M_Key state through the registers (0x32, 0x35)
  logic [1:0]       mkey_prot;
  logic [15:0]      mkey_viols;
  logic             reg_we, reg_re, port_rvalid;
  // A UART register request waiting for the bus. Its address and data stay
  // in ib_uart_down's meta bytes (ureg_addr, ureg_wdata) until the next
  // frame's payload, at least four UART bytes (> 300 clocks) later.
  logic             uop_q, uop_we_q;
  logic [7:0]       reg_addr;
  logic [31:0]      port_rdata;
  logic [DataW-1:0] drx_tdata;
  logic [DataB-1:0] drx_tkeep;
  logic             drx_tvalid, drx_tlast, drx_tuser, dtx_tready, sq_tx_beat;
  logic [2:0]       drx_reason;
  logic [3:0]       port_state;  // for the link LED
  logic [NumCtrs-1:0] port_ctr_ev;  // the port's counter events (drop LED)
  logic             port_idle;

  // Down buffer demux: WIRE_RX frames feed wire RX (no ready: taken at once;
  // discarded in loopback), MAD frames the SMA/SM/trap TX inputs.
  always_comb begin
    dn_rd_tready   = 1'b0;
    sma_tx_tvalid  = 1'b0;
    sm_tx_tvalid   = 1'b0;
    trap_tx_tvalid = 1'b0;
    unique case (dn_meta.kind)
      KindWireRx: dn_rd_tready = 1'b1;
      KindSmaTx: begin
        sma_tx_tvalid = dn_rd_tvalid;
        dn_rd_tready  = sma_tx_tready;
      end
      KindSmTx: begin
        sm_tx_tvalid = dn_rd_tvalid;
        dn_rd_tready = sm_tx_tready;
      end
      KindTrapTx: begin
        trap_tx_tvalid = dn_rd_tvalid;
        dn_rd_tready   = trap_tx_tready;
      end
      default: ;
    endcase
  end

  // Wire RX: the host's packets, or the port's own wire TX in loopback.
  assign rx_tdata  = loopback_q ? tx_tdata : dn_rd_tdata;
  assign rx_tkeep  = loopback_q ? tx_tkeep : dn_rd_tkeep;
  assign rx_tlast  = loopback_q ? tx_tlast : dn_rd_tlast;
  assign rx_tvalid = loopback_q ? tx_tvalid
                                : (dn_rd_tvalid && dn_meta.kind == KindWireRx);

  ib_ca_top #(
    .DataW      (DataW),
    .CtrRam     (CtrRam),
    .PkeyRam    (PkeyRam && CtrRam && DataW <= 32),
    .Vl15MetaRam(FifoMetaRam),
    .GsiChk     (GsiChk)
  ) u_port (
    .clk_i,
    .rst_ni,
    .rx_tdata_i         (rx_tdata),
    .rx_tkeep_i         (rx_tkeep),
    .rx_tvalid_i        (rx_tvalid),
    .rx_tlast_i         (rx_tlast),
    .tx_tdata_o         (tx_tdata),
    .tx_tkeep_o         (tx_tkeep),
    .tx_tvalid_o        (tx_tvalid),
    .tx_tlast_o         (tx_tlast),
    .tx_tready_i        (tx_tready),
    .drx_tdata_o        (drx_tdata),
    .drx_tkeep_o        (drx_tkeep),
    .drx_tvalid_o       (drx_tvalid),
    .drx_tlast_o        (drx_tlast),
    .drx_tuser_o        (drx_tuser),
    .drx_reason_o       (drx_reason),
    .dtx_tdata_i        ('0),
    .dtx_tkeep_i        ('0),
    .dtx_tvalid_i       (1'b0),
    .dtx_tlast_i        (1'b0),
    .dtx_tready_o       (dtx_tready),
    .sma_rx_tdata_o     (sma_rx_tdata),
    .sma_rx_tvalid_o    (sma_rx_tvalid),
    .sma_rx_tlast_o     (sma_rx_tlast),
    .sma_rx_tready_i    (sma_rx_tready),
    .sma_rx_slid_o      (sma_rx_slid),
    .sma_rx_dlid_o      (sma_rx_dlid),
    .sma_rx_sl_o        (sma_rx_sl),
    .sma_rx_port_o      (sma_rx_port),
    .sma_rx_mgmt_class_o(sma_rx_class),
    .sma_rx_hop_ptr_o   (sma_rx_hp),
    .sma_rx_hop_cnt_o   (sma_rx_hc),
    .sma_rx_mkey_viol_o (sma_rx_mkey_viol),
    .sma_rx_mkey_mask_o (sma_rx_mkey_mask),
    .sm_rx_tdata_o      (sm_rx_tdata),
    .sm_rx_tvalid_o     (sm_rx_tvalid),
    .sm_rx_tlast_o      (sm_rx_tlast),
    .sm_rx_tready_i     (sm_rx_tready),
    .sm_rx_slid_o       (sm_rx_slid),
    .sm_rx_dlid_o       (sm_rx_dlid),
    .sm_rx_sl_o         (sm_rx_sl),
    .sm_rx_port_o       (sm_rx_port),
    .sm_rx_mgmt_class_o (sm_rx_class),
    .sm_rx_hop_ptr_o    (sm_rx_hp),
    .sm_rx_hop_cnt_o    (sm_rx_hc),
    // The UART host protocol has no receive-queue doorbell: the host takes
    // every SM_RX frame and paces them by the UART's own backpressure
    // (sm_rx_tready). So the board posts 255 WQEs every cycle: the count
    // saturates at 2^16-1 a few hundred cycles after reset and never comes
    // near 0 (a MAD takes one at most every MAD's worth of beats, and the
    // first one cannot reach the dispatcher before the count has been
    // posted), so nothing for the SM is discarded here.
    .sm_rq_post_i       (1'b1),
    .sm_rq_post_n_i     (8'hFF),
    .sm_rq_clr_i        (1'b0),
    .sma_tx_tdata_i     (dn_rd_tdata),
    .sma_tx_tvalid_i    (sma_tx_tvalid),
    .sma_tx_tlast_i     (dn_rd_tlast),
    .sma_tx_tready_o    (sma_tx_tready),
    .sma_tx_slid_i      (dn_meta.lid_a),
    .sma_tx_dlid_i      (dn_meta.lid_b),
    .sma_tx_sl_i        (dn_meta.sl),
    .sm_tx_tdata_i      (dn_rd_tdata),
    .sm_tx_tvalid_i     (sm_tx_tvalid),
    .sm_tx_tlast_i      (dn_rd_tlast),
    .sm_tx_tready_o     (sm_tx_tready),
    .sm_tx_dlid_i       (dn_meta.lid_a),
    .sm_tx_sl_i         (dn_meta.sl),
    .sm_tx_path_bits_i  (dn_meta.path_bits),
    .trap_tx_tdata_i    (dn_rd_tdata),
    .trap_tx_tvalid_i   (trap_tx_tvalid),
    .trap_tx_tlast_i    (dn_rd_tlast),
    .trap_tx_tready_o   (trap_tx_tready),
    .reg_we_i           (reg_we),
    .reg_re_i           (reg_re),
    .reg_addr_i         (reg_addr),
    .reg_wdata_i        (ureg_wdata),
    .reg_rdata_o        (port_rdata),
    .reg_rvalid_o       (port_rvalid),
    .sq_tx_beat_o       (sq_tx_beat),
    // the board has no physical link: always up (PortState resets to Init)
    .link_up_i          (1'b1),
    .port_state_o       (port_state),
    .mkey_prot_o        (mkey_prot),
    .mkey_viols_o       (mkey_viols),
    .ctr_ev_o           (port_ctr_ev),
    .idle_o             (port_idle)
  );

  // Data VLs are not carried over the UART (docs/uart.md).
  logic unused_port;
  assign unused_port = ^{mkey_prot, mkey_viols, drx_tdata, drx_tkeep, drx_tvalid, drx_tlast, drx_tuser, drx_reason, dtx_tready,
                         sq_tx_beat, port_idle, dn_slot_free, dn_rd_meta[DownMetaW-1:DownMetaW-2]};

  // ---------------------------------------------------------------------------
  // Wire TX capture (store and forward: a WIRE_TX frame needs its length first)
  // ---------------------------------------------------------------------------
  logic             cap_in_pkt_q, cap_slot_free, cap_wr_valid, cap_wr_end, cap_drop;
  logic [15:0]      cap_cnt_q, cap_len;
  logic [DataW-1:0] wtx_tdata;
  logic [DataB-1:0] wtx_tkeep;
  logic             wtx_tvalid, wtx_tlast, wtx_tready;
  logic [15:0]      wtx_len;

  function automatic logic [15:0] keep_bytes(logic [DataB-1:0] keep);
    logic [15:0] n;
    n = '0;
    for (int i = 0; i < DataB; i++) n += {15'd0, keep[i]};
    return n;
  endfunction

  // A packet starts only when a capture slot is free; in loopback the wire
  // RX side takes every beat.
  assign tx_tready    = loopback_q || cap_in_pkt_q || cap_slot_free;
  assign cap_wr_valid = !loopback_q && tx_tvalid && tx_tready;
  assign cap_wr_end   = cap_wr_valid && tx_tlast;
  assign cap_len      = cap_cnt_q + keep_bytes(tx_tkeep);

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cap_in_pkt_q <= 1'b0;
      cap_cnt_q    <= '0;
    end else if (cap_wr_valid) begin
      cap_in_pkt_q <= !tx_tlast;
      cap_cnt_q    <= tx_tlast ? '0 : cap_len;
    end
  end

  ib_pkt_fifo #(
    .DataW    (DataW),
    .Depth    (2),
    .SlotWords(SlotWords),
    .MetaW    (16),
    .MetaRam  (32'(FifoMetaRam))  // the length is read only while wtx_tvalid (ib_uart_up SelWtx)
  ) u_wtx_fifo (
    .clk_i,
    .rst_ni,
    .limit_i       (8'd2),
    .wr_valid_i    (cap_wr_valid),
    .wr_data_i     (tx_tdata),
    .wr_keep_i     (tx_tkeep),
    .wr_end_i      (cap_wr_end),
    .wr_ok_i       (1'b1),
    .wr_meta_i     (cap_len),
    .wr_drop_full_o(cap_drop),
    .wr_slot_free_o(cap_slot_free),
    .rd_tdata_o    (wtx_tdata),
    .rd_tkeep_o    (wtx_tkeep),
    .rd_tvalid_o   (wtx_tvalid),
    .rd_tlast_o    (wtx_tlast),
    .rd_meta_o     (wtx_len),
    .rd_tready_i   (wtx_tready)
  );

  // ---------------------------------------------------------------------------
  // Board -> host: frame source mux, framer, UART TX
  // ---------------------------------------------------------------------------
  logic             resp_pending_q, resp_done;
  logic [7:0]       resp_addr_q;
  logic [31:0]      resp_data_q;
  logic [7:0]       up_tdata, up_type;
  logic             up_tvalid, up_tlast, up_tready;
  logic [15:0]      up_len;
  logic [8*RxMetaBytes-1:0] sma_meta, sm_meta;

  // RX meta bytes (docs/uart.md): slid, dlid (LE), sl, port, class, hop_ptr,
  // hop_cnt, three reserved zero bytes; byte i in [8*i +: 8].
  assign sma_meta = {24'h0, {1'b0, sma_rx_hc}, {1'b0, sma_rx_hp}, sma_rx_class, sma_rx_port,
                     {4'h0, sma_rx_sl}, sma_rx_dlid, sma_rx_slid};
  assign sm_meta  = {24'h0, {1'b0, sm_rx_hc}, {1'b0, sm_rx_hp}, sm_rx_class, sm_rx_port,
                     {4'h0, sm_rx_sl}, sm_rx_dlid, sm_rx_slid};

  ib_uart_up #(.DataW(DataW)) u_up (
    .clk_i,
    .rst_ni,
    .resp_valid_i(resp_pending_q),
    .resp_addr_i (resp_addr_q),
    .resp_data_i (resp_data_q),
    .resp_done_o (resp_done),
    .sma_tdata_i (sma_rx_tdata),
    .sma_tvalid_i(sma_rx_tvalid),
    .sma_tlast_i (sma_rx_tlast),
    .sma_tready_o(sma_rx_tready),
    .sma_meta_i  (sma_meta),
    .sma_mkey_i  ({sma_rx_mkey_mask, sma_rx_mkey_viol}),
    .sm_tdata_i  (sm_rx_tdata),
    .sm_tvalid_i (sm_rx_tvalid),
    .sm_tlast_i  (sm_rx_tlast),
    .sm_tready_o (sm_rx_tready),
    .sm_meta_i   (sm_meta),
    .wtx_tdata_i (wtx_tdata),
    .wtx_tkeep_i (wtx_tkeep),
    .wtx_tvalid_i(wtx_tvalid),
    .wtx_tlast_i (wtx_tlast),
    .wtx_tready_o(wtx_tready),
    .wtx_len_i   (wtx_len),
    .m_tdata_o   (up_tdata),
    .m_tvalid_o  (up_tvalid),
    .m_tlast_o   (up_tlast),
    .m_tready_i  (up_tready),
    .m_type_o    (up_type),
    .m_len_o     (up_len)
  );

  logic [7:0] utx_data;
  logic       utx_valid, utx_ready, ev_tx_frame;

  uart_framer u_framer (
    .clk_i,
    .rst_ni,
    .s_tdata_i (up_tdata),
    .s_tvalid_i(up_tvalid),
    .s_tlast_i (up_tlast),
    .s_tready_o(up_tready),
    .s_type_i  (up_type),
    .s_len_i   (up_len),
    .tx_data_o (utx_data),
    .tx_valid_o(utx_valid),
    .tx_ready_i(utx_ready),
    .ev_frame_o(ev_tx_frame)
  );

  uart_tx #(.ClkHz(ClkHz), .Baud(Baud)) u_uart_tx (
    .clk_i,
    .rst_ni,
    .data_i (utx_data),
    .valid_i(utx_valid),
    .ready_o(utx_ready),
    .tx_o   (uart_tx_o)
  );

  // ---------------------------------------------------------------------------
  // Register bus: the UART's register requests, one at a time (the next one
  // comes a frame later). A request waits in uop_*_q while a read is still on
  // the bus; a read holds reg_re until its answer (the port's reg_rvalid, a
  // board counter's scanner write). The address stays on ureg_addr until the
  // next frame. Addresses 0xC0..0xFF are the board's.
  // ---------------------------------------------------------------------------
  localparam int unsigned NumBoardCtrs = 6;  // RegBoardFramesOk .. RegBoardTxDrop
  logic        board_sel, board_rvalid;
  logic [31:0] board_rdata, reg_rdata;
  logic        rd_q;                 // a read on the bus
  logic        rd_open_q;            // ... past its first cycle
  logic        rd_done;              // its answer is on reg_rdata this cycle
  logic        uop_wr;               // the waiting UART write runs this cycle
  logic        uop_start_rd;         // the waiting UART read takes the bus

  assign uop_wr       = !rd_q && uop_q && uop_we_q;
  assign uop_start_rd = !rd_q && uop_q && !uop_we_q;
  assign reg_addr     = ureg_addr;
  assign board_sel    = reg_addr[7:6] == 2'b11;
  assign reg_we       = uop_wr && !board_sel;
  assign reg_re       = rd_q && !board_sel;
  assign rd_done      = rd_q && (board_sel ? board_rvalid : port_rvalid);
  assign reg_rdata    = board_sel ? board_rdata : port_rdata;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      uop_q     <= 1'b0;
      uop_we_q  <= 1'b0;
      rd_q      <= 1'b0;
      rd_open_q <= 1'b0;
    end else begin
      if (uop_wr || uop_start_rd) begin
        uop_q <= 1'b0;
      end
      if (ureg_we || ureg_re) begin
        uop_q    <= 1'b1;
        uop_we_q <= ureg_we;
      end
      if (rd_done) begin
        rd_q <= 1'b0;
      end else if (uop_start_rd) begin
        rd_q <= 1'b1;
      end
      rd_open_q <= rd_q && !rd_done;
    end
  end

  // Register read responses: captured with the answer, sent as a frame. A
  // read answered while the previous response is still unsent is dropped
  // and counted as an overrun (the host retries after its timeout).
  logic ev_resp_overrun, resp_take;
  assign resp_take       = rd_done;
  assign ev_resp_overrun = resp_take && resp_pending_q && !resp_done;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      resp_pending_q <= 1'b0;
      resp_addr_q    <= '0;
      resp_data_q    <= '0;
    end else if (resp_take && !(resp_pending_q && !resp_done)) begin
      resp_pending_q <= 1'b1;
      resp_addr_q    <= reg_addr;
      resp_data_q    <= reg_rdata;
    end else if (resp_done) begin
      resp_pending_q <= 1'b0;
    end
  end

`ifndef SYNTHESIS
  // One UART request at a time: the next one arrives a frame later; its
  // address and data hold while it waits.
  logic [39:0] uop_hold_q;
  always_ff @(posedge clk_i) begin
    uop_hold_q <= {ureg_addr, ureg_wdata};
    if (rst_ni && (ureg_we || ureg_re)) begin
      assert (!uop_q) else $error("%m: a UART register request while the previous one waits");
    end
    if (rst_ni && uop_q && !(ureg_we || ureg_re)) begin
      assert ({ureg_addr, ureg_wdata} == uop_hold_q)
        else $error("%m: a waiting UART register request's address or data changed");
    end
  end
`endif

  // Board control and counters. The six counters are in block RAM
  // (ib_ctr_ram, as the port's with CtrRam): a read answers when the scanner
  // writes that counter, from the read's second cycle on (at most 7 cycles),
  // with a value the counter had during the read.
  localparam int unsigned BSW = $clog2(NumBoardCtrs);
  logic [NumBoardCtrs-1:0] bev;
  logic                    bclear;
  logic                    bctr_wv, bctr_busy;
  logic [BSW-1:0]          bctr_widx, bctr_ridx;
  logic [31:0]             bctr_wdata;
  logic                    bctr_sel;  // reg_addr names a board counter

  assign bev = {cap_drop, ev_tx_frame, dn_drop_full | ev_resp_overrun, ev_df_ferr, ev_df_crc,
                ev_df_ok};
  assign bclear = uop_wr && ureg_addr == RegCtrClear;

  ib_ctr_ram #(.N(NumBoardCtrs)) u_bctr (
    .clk_i,
    .rst_ni,
    .ev_i      (bev),
    .ev2_i     ('0),
    .add_i     ('0),
    .clr_i     ({NumBoardCtrs{bclear}}),
    .wr_valid_o(bctr_wv),
    .wr_idx_o  (bctr_widx),
    .wr_data_o (bctr_wdata),
    .busy_o    (bctr_busy)
  );
  logic unused_bctr;  // the board has no idle output
  assign unused_bctr = bctr_busy;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      loopback_q <= 1'b0;
    end else if (uop_wr && ureg_addr == RegBoardCtrl) begin
      loopback_q <= ureg_wdata[0];
    end
  end

  assign bctr_sel  = reg_addr >= RegBoardFramesOk && reg_addr <= RegBoardTxDrop;
  assign bctr_ridx = BSW'(reg_addr - RegBoardFramesOk);
  assign board_rvalid = !bctr_sel || (rd_open_q && bctr_wv && bctr_widx == bctr_ridx);

  always_comb begin
    board_rdata = '0;
    if (reg_addr == RegBoardCtrl) begin
      board_rdata = {31'd0, loopback_q};
    end else if (reg_addr == RegBoardCaps) begin
      board_rdata = {16'(MaxPayload), 16'(ClksPerBit)};
    end else if (reg_addr == RegBoardProfile) begin
      board_rdata = {23'd0, GsiChk, 8'(DataW)};
    end else if (bctr_sel) begin
      board_rdata = bctr_wdata;
    end
  end

  // ---------------------------------------------------------------------------
  // LEDs
  // ---------------------------------------------------------------------------
  // The drop LED watches the port's drop counters through their events
  // (ctr_ev_o), not their values: the counters a dropped packet moves.
  localparam logic [NumCtrs-1:0] DropCtrs =
      NumCtrs'(1) << CtrRxVcrcErr | NumCtrs'(1) << CtrRxLverErr | NumCtrs'(1) << CtrRxLnhErr |
      NumCtrs'(1) << CtrRxLenErr | NumCtrs'(1) << CtrVl15Dropped | NumCtrs'(1) << CtrSmiIcrcErr |
      NumCtrs'(1) << CtrSmiBadHdr | NumCtrs'(1) << CtrSmiLidErr | NumCtrs'(1) << CtrSmiDrDiscard |
      NumCtrs'(1) << CtrSmiPortDown | NumCtrs'(1) << CtrSqDrDiscard;
  // One prescaler for both LEDs: a tick every 2^TickW clocks, an eighth to a
  // sixteenth of the stretch; each LED stays on for StretchTicks ticks after
  // its last event, StretchClks within one tick (under 12.5 %; 24 MHz and
  // 12 MHz: 11 ticks of 5.5 ms, 54.6..60.1 ms).
  localparam int unsigned TickW        = $clog2(StretchClks) > 4 ? $clog2(StretchClks) - 4 : 1;
  localparam int unsigned StretchTicks = (StretchClks + (1 << TickW) - 1) >> TickW;
  logic [TickW-1:0] pre_q;
  logic             tick_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      pre_q  <= '0;
      tick_q <= 1'b0;
    end else begin
      {tick_q, pre_q} <= {1'b0, pre_q} + (TickW + 1)'(1);
    end
  end

  logic smp_seen, drop_seen, led_smp, led_drop;
  assign smp_seen  = (sma_rx_tvalid && sma_rx_tready && sma_rx_tlast)
                   || (sm_rx_tvalid && sm_rx_tready && sm_rx_tlast);
  assign drop_seen = (|(port_ctr_ev & DropCtrs)) || ev_df_crc || ev_df_ferr || dn_drop_full || cap_drop;

  pulse_stretch #(.Ticks(StretchTicks)) u_led_smp (
    .clk_i,
    .rst_ni,
    .tick_i (tick_q),
    .pulse_i(smp_seen),
    .out_o  (led_smp)
  );
  pulse_stretch #(.Ticks(StretchTicks)) u_led_drop (
    .clk_i,
    .rst_ni,
    .tick_i (tick_q),
    .pulse_i(drop_seen),
    .out_o  (led_drop)
  );

  assign led_o = {led_drop, led_smp, port_state != PortStateDown};

endmodule
