// ib_ca_top: one InfiniBand CA port's VL15/SMI datapath with flat ports (top
// of the simulation model). Wire RX -> ib_link_rx -> smi_rq -> VL15 RX ib_pkt_fifo ->
// smi_rx_dispatch -> SMA RX / SM RX; data VLs: ib_link_rx -> gsi_rx_check
// (ICRC, QP0/QP1 GMP checks, QP1 P_Key/Q_Key) -> data RX; SMA/SM/trap TX -> smi_sq -> VL15 TX
// ib_pkt_fifo -> ib_link_tx -> wire TX (data VLs pass beside it); the port
// registers and event counters in ib_port_regs (test-only: in simulation a
// register write presets a counter, see ib_port_regs); ib_axis_checker on every
// stream (simulation only). The physical link (link_up_i) drives PortState
// (Down when it falls, Init when it rises) and gates the wire TX at packet
// boundaries: while the link is down every packet that has not started on
// the wire is taken from ib_link_tx and discarded whole, a packet already
// started is finished. idle_o = nothing buffered or in flight in the port.
// The SM's receive queue: the host posts receive WQEs with a doorbell
// (sm_rq_*); a MAD for the SM that reaches smi_rx_dispatch while none is
// posted is discarded whole and counted in VL15Dropped, as hardware does.
module ib_ca_top
  import ib_pkg::*;
#(
  parameter int unsigned DataW       = 64,  // stream width in bits: 32, 64 or 128
  parameter int unsigned Vl15RxDepth = 4,   // VL15 RX buffer slots (SMPs)
  parameter int unsigned Vl15TxDepth = 2,   // VL15 TX buffer slots (SMPs)
  parameter int unsigned PortNum     = 1,   // this port's number
  parameter int unsigned PkeyEntries = 64,  // P_Key table entries (NodeInfo.PartitionCap of a CA)
  parameter bit          CtrRam      = 1'b0,  // counters in block RAM, reads with latency (ib_port_regs)
  parameter bit          PkeyRam     = 1'b0,  // P_Key table in block RAM (gsi_rx_check); needs CtrRam
  parameter bit          Vl15MetaRam = 1'b0,  // VL15 RX buffer's meta in block RAM (ib_pkt_fifo MetaRam)
  // 0: no GSI receive checks (a board without a data-VL path to its host):
  // data-VL packets are counted by ib_link_rx (RxPkts, RxDataPkts, RxWords)
  // and discarded there, drx_tvalid_o stays 0, the GSI counters (DataIcrcErr,
  // GsiBadHdr, GsiGmps, PkeyViol, QkeyViol) stay 0; the P_Key table
  // registers remain (storage only)
  parameter bit          GsiChk      = 1'b1,
  localparam int unsigned DataB      = DataW / 8
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // wire -> port (no ready)
  input  logic [DataW-1:0]   rx_tdata_i,
  input  logic [DataB-1:0]   rx_tkeep_i,
  input  logic               rx_tvalid_i,
  input  logic               rx_tlast_i,
  // port -> wire
  output logic [DataW-1:0]   tx_tdata_o,
  output logic [DataB-1:0]   tx_tkeep_o,
  output logic               tx_tvalid_o,
  output logic               tx_tlast_o,
  input  logic               tx_tready_i,
  // data VLs -> host (no ready; tuser on tlast = discard)
  output logic [DataW-1:0]   drx_tdata_o,
  output logic [DataB-1:0]   drx_tkeep_o,
  output logic               drx_tvalid_o,
  output logic               drx_tlast_o,
  output logic               drx_tuser_o,
  output logic [2:0]         drx_reason_o,   // on tlast: ib_pkg::gsi_reason_e
  // host -> data VLs (LRH..ICRC)
  input  logic [DataW-1:0]   dtx_tdata_i,
  input  logic [DataB-1:0]   dtx_tkeep_i,
  input  logic               dtx_tvalid_i,
  input  logic               dtx_tlast_i,
  output logic               dtx_tready_o,
  // SMA RX
  output logic [DataW-1:0]   sma_rx_tdata_o,
  output logic               sma_rx_tvalid_o,
  output logic               sma_rx_tlast_o,
  input  logic               sma_rx_tready_i,
  output logic [15:0]        sma_rx_slid_o,
  output logic [15:0]        sma_rx_dlid_o,
  output logic [3:0]         sma_rx_sl_o,
  output logic [7:0]         sma_rx_port_o,
  output logic [7:0]         sma_rx_mgmt_class_o,
  output logic [6:0]         sma_rx_hop_ptr_o,
  output logic [6:0]         sma_rx_hop_cnt_o,
  // M_Key check (smi_mkey_chk), valid with the sma_rx tlast beat: mkey_viol
  // = a bad M_Key (drop: no response; the host sends Trap 256 from the MAD),
  // mkey_mask = a Get with a bad key at protect 1 (PortInfo's M_Key reads 0)
  output logic               sma_rx_mkey_viol_o,
  output logic               sma_rx_mkey_mask_o,
  // SM RX
  output logic [DataW-1:0]   sm_rx_tdata_o,
  output logic               sm_rx_tvalid_o,
  output logic               sm_rx_tlast_o,
  input  logic               sm_rx_tready_i,
  output logic [15:0]        sm_rx_slid_o,
  output logic [15:0]        sm_rx_dlid_o,
  output logic [3:0]         sm_rx_sl_o,
  output logic [7:0]         sm_rx_port_o,
  output logic [7:0]         sm_rx_mgmt_class_o,
  output logic [6:0]         sm_rx_hop_ptr_o,
  output logic [6:0]         sm_rx_hop_cnt_o,
  // SM receive queue doorbell: sm_rq_post_i adds sm_rq_post_n_i receive WQEs
  // (0..255); sm_rq_clr_i withdraws every posted WQE first (the QP is reset),
  // so clear and post in one cycle leave exactly sm_rq_post_n_i. Each MAD that
  // starts on sm_rx uses one; with none posted, a MAD for the SM is discarded
  // whole and counted (VL15Dropped). 0 WQEs after reset; the count saturates
  // at 2^16-1. Requests for the SMA never wait for it.
  input  logic               sm_rq_post_i,
  input  logic [7:0]         sm_rq_post_n_i,
  input  logic               sm_rq_clr_i,
  // SMA TX (responses; meta = echo of the request)
  input  logic [DataW-1:0]   sma_tx_tdata_i,
  input  logic               sma_tx_tvalid_i,
  input  logic               sma_tx_tlast_i,
  output logic               sma_tx_tready_o,
  input  logic [15:0]        sma_tx_slid_i,
  input  logic [15:0]        sma_tx_dlid_i,
  input  logic [3:0]         sma_tx_sl_i,
  // SM TX (requests; meta = address handle)
  input  logic [DataW-1:0]   sm_tx_tdata_i,
  input  logic               sm_tx_tvalid_i,
  input  logic               sm_tx_tlast_i,
  output logic               sm_tx_tready_o,
  input  logic [15:0]        sm_tx_dlid_i,
  input  logic [3:0]         sm_tx_sl_i,
  input  logic [6:0]         sm_tx_path_bits_i,
  // trap TX
  input  logic [DataW-1:0]   trap_tx_tdata_i,
  input  logic               trap_tx_tvalid_i,
  input  logic               trap_tx_tlast_i,
  output logic               trap_tx_tready_o,
  // register interface; a read: reg_re_i held with reg_addr_i until the
  // cycle with reg_rvalid_o (at once with CtrRam = 0: then reg_rdata_o also
  // follows reg_addr_i without a request; ib_port_regs)
  input  logic               reg_we_i,
  input  logic               reg_re_i,
  input  logic [7:0]         reg_addr_i,
  input  logic [31:0]        reg_wdata_i,
  output logic [31:0]        reg_rdata_o,
  output logic               reg_rvalid_o,
  // observability: a beat from the SMI send engine enters the VL15 TX
  // buffer this cycle (for latency measurements; no function)
  output logic               sq_tx_beat_o,
  // physical link (1 = LinkUp), PortState, and "nothing buffered or in
  // flight": with idle_o = 1 and no input presented (no valid, no register
  // write, no doorbell, link_up_i unchanged) the port may go unclocked
  // without any change of behaviour
  input  logic               link_up_i,
  output logic [3:0]         port_state_o,
  // the port's M_KeyProtectBits and M_KeyViolations (registers 0x32, 0x35;
  // the lease expiry clears the protect bits, the check counts violations)
  output logic [1:0]         mkey_prot_o,
  output logic [15:0]        mkey_viols_o,
  // the counter events (index = ib_pkg::ctr_e) as the counters take them
  // this cycle: ev_q | ev2_q of "Counter events" below (an add_i amount
  // does not show); the FPGA board's drop LED watches some of them
  output logic [NumCtrs-1:0] ctr_ev_o,
  output logic               idle_o
);

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end
  // the RAM table answers a read a cycle late: only the handshake of CtrRam waits for it
  if (PkeyRam && !CtrRam) begin : gen_pkey_ram_check
    $fatal(1, "%m: PkeyRam needs CtrRam (register reads with latency)");
  end

  localparam int unsigned RxSlotWords = MadBytes / DataB;
  localparam int unsigned TxSlotWords = SmpPktBytes / DataB;
  localparam int unsigned RxMetaW     = $bits(smi_rx_meta_t);

  // ---------------------------------------------------------------------------
  // Port registers and counters
  // ---------------------------------------------------------------------------
  logic [NumCtrs-1:0] ev;
  logic [NumCtrs-1:0] ev2;       // a second event of the same counter
  logic [NumCtrs-1:0][CtrAddW-1:0] ctr_add;  // amounts (the word counters)
  // the same, one cycle later: the counters' inputs (see "Counter events")
  logic [NumCtrs-1:0] ev_q, ev2_q;
  logic [NumCtrs-1:0][CtrAddW-1:0] ctr_add_q;
  logic               ctr_pend;  // an event is registered and not yet counted
  logic [15:0]        port_lid;
  logic [2:0]         port_lmc;
  logic [15:0]        master_sm_lid;
  logic [3:0]         master_sm_sl;
  logic [3:0]         port_state;
  logic [7:0]         rx_depth;
  logic               link_q;    // link_up_i registered (ib_port_regs)
  logic               ctr_busy;    // a counter increment not yet in the counter RAM (CtrRam)
  logic [31:0]        mkey_rdata;  // smi_mkey_chk's read data (0x30..0x37)
  logic               mkey_sel;    // reg_addr_i names an M_Key register

  logic [7:0]  pkey_idx;
  logic [15:0] pkey_rdata;
  logic        pkey_we, pkey_sel;
  logic [31:0] pkey_regs_rdata;

  assign mkey_sel = reg_addr_i >= RegMkeyBase && reg_addr_i < RegMkeyEnd;

  ib_port_regs #(
    .DataW      (DataW),
    .Vl15RxDepth(Vl15RxDepth),
    .Vl15TxDepth(Vl15TxDepth),
    .PortNum    (PortNum),
    .CtrRam     (CtrRam),
    .CtrAddMask (NumCtrs'(1) << CtrRxWords | NumCtrs'(1) << CtrTxWords),
    .CtrEv2Mask (NumCtrs'(1) << CtrVl15Dropped)
  ) u_regs (
    .clk_i,
    .rst_ni,
    .reg_we_i,
    .reg_re_i,
    .reg_addr_i,
    .reg_wdata_i,
    .reg_rdata_o,
    .reg_rvalid_o,
    .ext_sel_i      (pkey_sel || mkey_sel),
    .ext_rdata_i    (pkey_sel ? pkey_regs_rdata : mkey_rdata),
    .ctr_busy_o     (ctr_busy),
    .ev_i           (ev_q),
    .ev2_i          (ev2_q),
    .add_i          (ctr_add_q),
    .port_lid_o     (port_lid),
    .port_lmc_o     (port_lmc),
    .master_sm_lid_o(master_sm_lid),
    .master_sm_sl_o (master_sm_sl),
    .port_state_o   (port_state),
    .rx_depth_o     (rx_depth),
    .link_up_i,
    .link_up_o      (link_q)
  );

  assign port_state_o = port_state;

  // P_Key table registers (the table itself is in gsi_rx_check)

  pkey_regs #(
    .AddrW    (8),
    .CapAddr  (RegPkeyCap),
    .IdxAddr  (RegPkeyIdx),
    .DataAddr (RegPkeyData),
    .Entries  (PkeyEntries)
  ) u_pkey_regs (
    .clk_i,
    .rst_ni,
    .reg_we_i,
    .reg_addr_i,
    .reg_wdata_i  (reg_wdata_i[7:0]),
    .sel_o        (pkey_sel),
    .rdata_o      (pkey_regs_rdata),
    .pkey_we_o    (pkey_we),
    .pkey_idx_o   (pkey_idx),
    .pkey_rdata_i (pkey_rdata)
  );

  // ---------------------------------------------------------------------------
  // Receive path
  // ---------------------------------------------------------------------------
  logic [DataW-1:0] vl15_rx_tdata;
  logic [DataB-1:0] vl15_rx_tkeep;
  logic             vl15_rx_tvalid;
  logic             vl15_rx_tlast;
  logic             vl15_rx_tuser;
  logic             ev_rx_pkt, ev_rx_data_pkt, ev_rx_len_err, ev_rx_lver_err;
  logic             ev_rx_lnh_err, ev_rx_vcrc_err;
  // ib_link_rx's data-VL output, into gsi_rx_check
  logic [DataW-1:0] ldrx_tdata;
  logic [DataB-1:0] ldrx_tkeep;
  logic             ldrx_tvalid;
  logic             ldrx_tlast;
  logic             ldrx_tuser;

  ib_link_rx #(.DataW(DataW)) u_link_rx (
    .clk_i,
    .rst_ni,
    .rx_tdata_i,
    .rx_tkeep_i,
    .rx_tvalid_i,
    .rx_tlast_i,
    .vl15_tdata_o (vl15_rx_tdata),
    .vl15_tkeep_o (vl15_rx_tkeep),
    .vl15_tvalid_o(vl15_rx_tvalid),
    .vl15_tlast_o (vl15_rx_tlast),
    .vl15_tuser_o (vl15_rx_tuser),
    .data_tdata_o (ldrx_tdata),
    .data_tkeep_o (ldrx_tkeep),
    .data_tvalid_o(ldrx_tvalid),
    .data_tlast_o (ldrx_tlast),
    .data_tuser_o (ldrx_tuser),
    .ev_pkt_o     (ev_rx_pkt),
    .ev_data_pkt_o(ev_rx_data_pkt),
    .ev_len_err_o (ev_rx_len_err),
    .ev_lver_err_o(ev_rx_lver_err),
    .ev_lnh_err_o (ev_rx_lnh_err),
    .ev_vcrc_err_o(ev_rx_vcrc_err)
  );

  // GSI receive checks on the data VLs (one cycle of latency)
  logic ev_gsi_icrc_err, ev_gsi_bad_hdr, ev_gsi_pkey_viol, ev_gsi_qkey_viol, ev_gsi_gmp;
  gsi_reason_e drx_reason;

  gsi_rx_check #(.DataW(DataW), .PkeyEntries(PkeyEntries), .PkeyRam(PkeyRam)) u_gsi_rx (
    .clk_i,
    .rst_ni,
    .in_tdata_i   (ldrx_tdata),
    .in_tkeep_i   (ldrx_tkeep),
    .in_tvalid_i  (GsiChk && ldrx_tvalid),
    .in_tlast_i   (ldrx_tlast),
    .in_tuser_i   (ldrx_tuser),
    .out_tdata_o  (drx_tdata_o),
    .out_tkeep_o  (drx_tkeep_o),
    .out_tvalid_o (drx_tvalid_o),
    .out_tlast_o  (drx_tlast_o),
    .out_tuser_o  (drx_tuser_o),
    .out_reason_o (drx_reason),
    .pkey_we_i    (pkey_we),
    .pkey_idx_i   (pkey_idx),
    .pkey_wdata_i (reg_wdata_i[15:0]),
    .pkey_rdata_o (pkey_rdata),
    .ev_icrc_err_o(ev_gsi_icrc_err),
    .ev_bad_hdr_o (ev_gsi_bad_hdr),
    .ev_pkey_viol_o(ev_gsi_pkey_viol),
    .ev_qkey_viol_o(ev_gsi_qkey_viol),
    .ev_gmp_o     (ev_gsi_gmp)
  );
  assign drx_reason_o = drx_reason;

  logic             rxf_wr_valid;
  logic [DataW-1:0] rxf_wr_data;
  logic [DataB-1:0] rxf_wr_keep;
  logic             rxf_wr_end;
  logic             rxf_wr_ok;
  smi_rx_meta_t     rxf_wr_meta;
  logic             rxf_drop_full;
  logic             rxf_slot_free;
  logic             ev_rq_port_down, ev_rq_icrc_err, ev_rq_bad_hdr, ev_rq_lid_err;
  logic             ev_rq_dr_discard;

  smi_rq #(.DataW(DataW)) u_smi_rq (
    .clk_i,
    .rst_ni,
    .vl15_tdata_i   (vl15_rx_tdata),
    .vl15_tkeep_i   (vl15_rx_tkeep),
    .vl15_tvalid_i  (vl15_rx_tvalid),
    .vl15_tlast_i   (vl15_rx_tlast),
    .vl15_tuser_i   (vl15_rx_tuser),
    .port_lid_i     (port_lid),
    .port_lmc_i     (port_lmc),
    .port_state_i   (port_state),
    .port_num_i     (8'(PortNum)),
    .wr_valid_o     (rxf_wr_valid),
    .wr_data_o      (rxf_wr_data),
    .wr_keep_o      (rxf_wr_keep),
    .wr_end_o       (rxf_wr_end),
    .wr_ok_o        (rxf_wr_ok),
    .wr_meta_o      (rxf_wr_meta),
    .ev_port_down_o (ev_rq_port_down),
    .ev_icrc_err_o  (ev_rq_icrc_err),
    .ev_bad_hdr_o   (ev_rq_bad_hdr),
    .ev_lid_err_o   (ev_rq_lid_err),
    .ev_dr_discard_o(ev_rq_dr_discard)
  );

  logic [DataW-1:0]   rxf_rd_tdata;
  logic [DataB-1:0]   rxf_rd_tkeep;
  logic               rxf_rd_tvalid;
  logic               rxf_rd_tlast;
  logic [RxMetaW-1:0] rxf_rd_meta;
  logic               rxf_rd_tready;

  ib_pkt_fifo #(
    .DataW    (DataW),
    .Depth    (Vl15RxDepth),
    .SlotWords(RxSlotWords),
    .MetaW    (RxMetaW),
    .MetaReg  (1),  // the dispatcher decides on rd_meta (to_sm) at once
    .MetaRam  (32'(Vl15MetaRam))  // the same port behaviour as MetaReg
  ) u_rx_fifo (
    .clk_i,
    .rst_ni,
    .limit_i       (rx_depth),
    .wr_valid_i    (rxf_wr_valid),
    .wr_data_i     (rxf_wr_data),
    .wr_keep_i     (rxf_wr_keep),
    .wr_end_i      (rxf_wr_end),
    .wr_ok_i       (rxf_wr_ok),
    .wr_meta_i     (rxf_wr_meta),
    .wr_drop_full_o(rxf_drop_full),
    .wr_slot_free_o(rxf_slot_free),
    .rd_tdata_o    (rxf_rd_tdata),
    .rd_tkeep_o    (rxf_rd_tkeep),
    .rd_tvalid_o   (rxf_rd_tvalid),
    .rd_tlast_o    (rxf_rd_tlast),
    .rd_meta_o     (rxf_rd_meta),
    .rd_tready_i   (rxf_rd_tready)
  );

  logic ev_to_sma, ev_to_sm, ev_sm_drop;
  logic sm_rq_avail, sm_rq_take;

  smi_rx_dispatch #(.DataW(DataW)) u_rx_dispatch (
    .clk_i,
    .rst_ni,
    .rd_tdata_i   (rxf_rd_tdata),
    .rd_tkeep_i   (rxf_rd_tkeep),
    .rd_tvalid_i  (rxf_rd_tvalid),
    .rd_tlast_i   (rxf_rd_tlast),
    .rd_meta_i    (smi_rx_meta_t'(rxf_rd_meta)),
    .rd_tready_o  (rxf_rd_tready),
    .sma_rx_tdata_o,
    .sma_rx_tvalid_o,
    .sma_rx_tlast_o,
    .sma_rx_tready_i,
    .sma_rx_slid_o,
    .sma_rx_dlid_o,
    .sma_rx_sl_o,
    .sma_rx_port_o,
    .sma_rx_mgmt_class_o,
    .sma_rx_hop_ptr_o,
    .sma_rx_hop_cnt_o,
    .sm_rx_tdata_o,
    .sm_rx_tvalid_o,
    .sm_rx_tlast_o,
    .sm_rx_tready_i,
    .sm_rx_slid_o,
    .sm_rx_dlid_o,
    .sm_rx_sl_o,
    .sm_rx_port_o,
    .sm_rx_mgmt_class_o,
    .sm_rx_hop_ptr_o,
    .sm_rx_hop_cnt_o,
    .sm_rq_avail_i(sm_rq_avail),
    .sm_rq_take_o (sm_rq_take),
    .ev_to_sma_o  (ev_to_sma),
    .ev_to_sm_o   (ev_to_sm),
    .ev_sm_drop_o (ev_sm_drop)
  );

  // ---------------------------------------------------------------------------
  // M_Key check on the SMA-bound stream (observes it; verdict with tlast)
  // ---------------------------------------------------------------------------
  logic ev_mkey_viol, mkey_lease_run;

  smi_mkey_chk #(.DataW(DataW)) u_mkey_chk (
    .clk_i,
    .rst_ni,
    .reg_we_i   (reg_we_i && mkey_sel),
    .reg_idx_i  (reg_addr_i[2:0]),
    .reg_wdata_i,
    .reg_rdata_o(mkey_rdata),
    .tdata_i    (sma_rx_tdata_o),
    .tvalid_i   (sma_rx_tvalid_o),
    .tready_i   (sma_rx_tready_i),
    .tlast_i    (sma_rx_tlast_o),
    .viol_o     (sma_rx_mkey_viol_o),
    .mask_o     (sma_rx_mkey_mask_o),
    .ev_viol_o  (ev_mkey_viol),
    .prot_o     (mkey_prot_o),
    .viols_o    (mkey_viols_o),
    .lease_run_o(mkey_lease_run)
  );

  // ---------------------------------------------------------------------------
  // SM receive queue: receive WQEs posted by the host and not yet used, a
  // saturating count. smi_rx_dispatch uses one per MAD it starts on sm_rx
  // (only while the count is not 0) and discards a MAD for the SM when it is
  // 0. A post or clear counts from the next cycle.
  // ---------------------------------------------------------------------------
  localparam int unsigned SmRqW = 16;

  logic [SmRqW-1:0] sm_rq_cnt_q, sm_rq_cnt_d;
  logic             sm_rq_avail_q, sm_rq_avail_d;  // sm_rq_cnt_q != 0

  // The next count with and without a MAD starting now, made in parallel
  // and picked by sm_rq_take (a late signal: the dispatcher's decision on
  // the RX buffer's output).
  always_comb begin
    logic [SmRqW-1:0] left0, left1;  // after the clear and (1) the MAD that started now
    logic [SmRqW:0]   sum0, sum1, post;
    post        = sm_rq_post_i ? (SmRqW + 1)'(sm_rq_post_n_i) : '0;
    left0       = sm_rq_clr_i ? '0 : sm_rq_cnt_q;
    left1       = sm_rq_clr_i ? '0 : sm_rq_cnt_q - SmRqW'(1);
    sum0        = {1'b0, left0} + post;
    sum1        = {1'b0, left1} + post;
    sm_rq_cnt_d = sm_rq_take ? (sum1[SmRqW] ? '1 : sum1[SmRqW-1:0])
                             : (sum0[SmRqW] ? '1 : sum0[SmRqW-1:0]);
    sm_rq_avail_d = sm_rq_take ? (sum1 != '0) : (sum0 != '0);
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      sm_rq_cnt_q   <= '0;
      sm_rq_avail_q <= 1'b0;
    end else begin
      sm_rq_cnt_q   <= sm_rq_cnt_d;
      sm_rq_avail_q <= sm_rq_avail_d;
    end
  end

  assign sm_rq_avail = sm_rq_avail_q;

  // ---------------------------------------------------------------------------
  // Send path
  // ---------------------------------------------------------------------------
  logic             txf_wr_valid;
  logic [DataW-1:0] txf_wr_data;
  logic [DataB-1:0] txf_wr_keep;
  logic             txf_wr_end;
  logic             txf_wr_ok;
  logic             txf_drop_full;
  logic             txf_slot_free;
  logic             ev_sq_pkt, ev_sq_dr_discard, ev_sq_local;

  smi_sq #(.DataW(DataW)) u_smi_sq (
    .clk_i,
    .rst_ni,
    .port_lid_i      (port_lid),
    .port_lmc_i      (port_lmc),
    .port_num_i      (8'(PortNum)),
    .master_sm_lid_i (master_sm_lid),
    .master_sm_sl_i  (master_sm_sl),
    .sma_tx_tdata_i,
    .sma_tx_tvalid_i,
    .sma_tx_tlast_i,
    .sma_tx_tready_o,
    .sma_tx_slid_i,
    .sma_tx_dlid_i,
    .sma_tx_sl_i,
    .sm_tx_tdata_i,
    .sm_tx_tvalid_i,
    .sm_tx_tlast_i,
    .sm_tx_tready_o,
    .sm_tx_dlid_i,
    .sm_tx_sl_i,
    .sm_tx_path_bits_i,
    .trap_tx_tdata_i,
    .trap_tx_tvalid_i,
    .trap_tx_tlast_i,
    .trap_tx_tready_o,
    .wr_valid_o      (txf_wr_valid),
    .wr_data_o       (txf_wr_data),
    .wr_keep_o       (txf_wr_keep),
    .wr_end_o        (txf_wr_end),
    .wr_ok_o         (txf_wr_ok),
    .wr_slot_free_i  (txf_slot_free),
    .ev_pkt_o        (ev_sq_pkt),
    .ev_dr_discard_o (ev_sq_dr_discard),
    .ev_local_o      (ev_sq_local)
  );

  logic [DataW-1:0] vl15_tx_tdata;
  logic [DataB-1:0] vl15_tx_tkeep;
  logic             vl15_tx_tvalid;
  logic             vl15_tx_tlast;
  logic             vl15_tx_tready;
  logic [0:0]       txf_rd_meta;

  ib_pkt_fifo #(
    .DataW    (DataW),
    .Depth    (Vl15TxDepth),
    .SlotWords(TxSlotWords),
    .MetaW    (1)
  ) u_tx_fifo (
    .clk_i,
    .rst_ni,
    .limit_i       (8'(Vl15TxDepth)),
    .wr_valid_i    (txf_wr_valid),
    .wr_data_i     (txf_wr_data),
    .wr_keep_i     (txf_wr_keep),
    .wr_end_i      (txf_wr_end),
    .wr_ok_i       (txf_wr_ok),
    .wr_meta_i     (1'b0),
    .wr_drop_full_o(txf_drop_full),
    .wr_slot_free_o(txf_slot_free),
    .rd_tdata_o    (vl15_tx_tdata),
    .rd_tkeep_o    (vl15_tx_tkeep),
    .rd_tvalid_o   (vl15_tx_tvalid),
    .rd_tlast_o    (vl15_tx_tlast),
    .rd_meta_o     (txf_rd_meta),
    .rd_tready_i   (vl15_tx_tready)
  );

  logic ev_tx_vl15_pkt, ev_tx_data_pkt;
  // ib_link_tx output, before the link gate
  logic [DataW-1:0] lt_tdata;
  logic [DataB-1:0] lt_tkeep;
  logic             lt_tvalid;
  logic             lt_tlast;
  logic             lt_tready;

  ib_link_tx #(.DataW(DataW)) u_link_tx (
    .clk_i,
    .rst_ni,
    .vl15_tdata_i (vl15_tx_tdata),
    .vl15_tkeep_i (vl15_tx_tkeep),
    .vl15_tvalid_i(vl15_tx_tvalid),
    .vl15_tlast_i (vl15_tx_tlast),
    .vl15_tready_o(vl15_tx_tready),
    .data_tdata_i (dtx_tdata_i),
    .data_tkeep_i (dtx_tkeep_i),
    .data_tvalid_i(dtx_tvalid_i),
    .data_tlast_i (dtx_tlast_i),
    .data_tready_o(dtx_tready_o),
    .tx_tdata_o   (lt_tdata),
    .tx_tkeep_o   (lt_tkeep),
    .tx_tvalid_o  (lt_tvalid),
    .tx_tlast_o   (lt_tlast),
    .tx_tready_i  (lt_tready),
    .ev_vl15_pkt_o(ev_tx_vl15_pkt),
    .ev_data_pkt_o(ev_tx_data_pkt)
  );

  // ---------------------------------------------------------------------------
  // Link gate on the wire TX. A packet is decided when its first beat is
  // first presented: link up (link_q) -> tx_tvalid_o rises and the packet
  // goes to the wire and is finished even if the link falls meanwhile (also
  // while that first beat waits for tx_tready_i: a valid is never taken
  // back); link down -> every beat is taken (ready 1) and discarded, up to
  // its tlast, even if the link rises meanwhile. Nothing is ever cut.
  // ---------------------------------------------------------------------------
  logic wire_pkt_q, wire_pkt_d;  // a packet has started on the wire
  logic drop_q, drop_d;          // the current packet is being discarded
  logic gate_pass;               // the current beat goes to the wire

  always_comb begin
    gate_pass  = wire_pkt_q || (link_q && !drop_q);
    lt_tready  = gate_pass ? tx_tready_i : 1'b1;
    wire_pkt_d = wire_pkt_q;
    drop_d     = drop_q;
    // a beat presented on the wire binds its packet to the wire
    if (lt_tvalid && gate_pass) begin
      wire_pkt_d = 1'b1;
    end
    if (lt_tvalid && lt_tready) begin
      if (gate_pass) begin
        wire_pkt_d = !lt_tlast;
      end else begin
        drop_d = !lt_tlast;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      wire_pkt_q <= 1'b0;
      drop_q     <= 1'b0;
    end else begin
      wire_pkt_q <= wire_pkt_d;
      drop_q     <= drop_d;
    end
  end

  assign tx_tdata_o  = lt_tdata;
  assign tx_tkeep_o  = lt_tkeep;
  assign tx_tvalid_o = lt_tvalid && gate_pass;
  assign tx_tlast_o  = lt_tlast;

  // ---------------------------------------------------------------------------
  // Idle: every stage between the port's inputs and outputs is empty. Each
  // term is tracked from the stage's own interface (a packet open on a
  // stream = a beat without tlast seen; the buffers = committed minus freed
  // packets), so that no submodule needs a status port.
  // ---------------------------------------------------------------------------
  localparam int unsigned RxCntW = $clog2(Vl15RxDepth + 1);
  localparam int unsigned TxCntW = $clog2(Vl15TxDepth + 1);

  // smi_rq (and the RX buffer's write side) is mid-packet only while its
  // input, ib_link_rx's output register (the wire RX one cycle later), is:
  // covered by rx_pkt_q and the output valid.
  logic              rx_pkt_q;   // wire RX: packet open (ib_link_rx mid-packet)
  // ib_link_tx is mid-packet only while a beat of that packet is in its
  // output register or the link gate has taken one and not yet the tlast
  // (wire_pkt_q, drop_q): no tracker of its own.
  logic              sq_pkt_q;   // smi_sq writing a packet (not in its idle state)
  logic [RxCntW-1:0] rx_cnt_q;   // packets in the VL15 RX buffer
  logic [TxCntW-1:0] tx_cnt_q;   // packets in the VL15 TX buffer
  logic              rx_commit, rx_free, tx_commit, tx_free;

  // A VL15 RX packet with wr_ok has exactly 290 bytes (link length check,
  // PktLen 72), so it fills its slot exactly: it is committed unless the
  // buffer had no slot (wr_drop_full). smi_sq starts a packet only into a
  // free slot and writes exactly one slot's beats.
  assign rx_commit = rxf_wr_end && rxf_wr_ok && !rxf_drop_full;
  assign rx_free   = rxf_rd_tvalid && rxf_rd_tready && rxf_rd_tlast;
  assign tx_commit = txf_wr_end && txf_wr_ok;
  assign tx_free   = vl15_tx_tvalid && vl15_tx_tready && vl15_tx_tlast;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rx_pkt_q <= 1'b0;
      sq_pkt_q <= 1'b0;
      rx_cnt_q <= '0;
      tx_cnt_q <= '0;
    end else begin
      if (rx_tvalid_i) begin
        rx_pkt_q <= !rx_tlast_i;
      end
      if (txf_wr_valid || txf_wr_end) begin
        sq_pkt_q <= !txf_wr_end;
      end
      rx_cnt_q <= rx_cnt_q + RxCntW'(rx_commit) - RxCntW'(rx_free);
      tx_cnt_q <= tx_cnt_q + TxCntW'(tx_commit) - TxCntW'(tx_free);
    end
  end

  assign idle_o = !mkey_lease_run && !ctr_pend && !ctr_busy &&
                  !rx_pkt_q && !vl15_rx_tvalid && !ldrx_tvalid && !drx_tvalid_o &&
                  (rx_cnt_q == '0) && !sq_pkt_q && (tx_cnt_q == '0) &&
                  !lt_tvalid && !wire_pkt_q && !drop_q && (link_q == link_up_i);

  // The SQ waits for a free slot at every packet start, the RX slot state is
  // only needed by writers that must not drop, and the TX meta is a dummy.
  logic unused;
  assign unused = ^{rxf_slot_free, txf_drop_full, txf_rd_meta};

  // ---------------------------------------------------------------------------
  // Word counters (IBA PortRcvData / PortXmitData): LRH.PktLen of each packet
  // that passed ib_link_rx's checks (its output, VL15 and data: one register,
  // so at most one beat a cycle), and of each packet that left on the wire
  // (tx_* handshakes, after the link gate). PktLen (packet bytes 4..5) lies
  // in beats PktLenBeat (byte 4) and PktLoBeat (byte 5; the same beat but at
  // DataW 8); each byte is taken from its beat, or registered from it when
  // the tlast beat is a later one.
  // ---------------------------------------------------------------------------
  localparam int unsigned PktLenBeat = PbLrhPktLen / DataB;
  localparam int unsigned PktLenLane = PbLrhPktLen % DataB;
  localparam int unsigned PktLoBeat  = (PbLrhPktLen + 1) / DataB;
  localparam int unsigned PktLoLane  = (PbLrhPktLen + 1) % DataB;
  // beat counters saturate at 2, or past PktLoBeat (DataW 8)
  localparam int unsigned WbMax      = (PktLoBeat >= 2) ? PktLoBeat + 1 : 2;
  localparam int unsigned WbW        = $clog2(WbMax + 1);

  logic             lrx_valid, lrx_last, lrx_user;
  logic [10:0]      lrx_pktlen;              // PktLen field of the current ib_link_rx beat
  logic [10:0]      tx_pktlen;               // ... of the current wire TX beat
  logic [WbW-1:0]   rxw_beat_q, txw_beat_q;  // beat of the packet, saturating at WbMax
  logic [10:0]      rxw_len_q, txw_len_q;
  logic [10:0]      rxw_len, txw_len;        // PktLen of the current packet
  logic             tx_hs;

  // ib_link_rx's VL15 and data outputs come from one register
  assign lrx_valid  = vl15_rx_tvalid || ldrx_tvalid;
  assign lrx_pktlen = vl15_rx_tvalid
      ? {vl15_rx_tdata[8*PktLenLane +: 3], vl15_rx_tdata[8*PktLoLane +: 8]}
      : {ldrx_tdata[8*PktLenLane +: 3], ldrx_tdata[8*PktLoLane +: 8]};
  assign tx_pktlen = {tx_tdata_o[8*PktLenLane +: 3], tx_tdata_o[8*PktLoLane +: 8]};
  assign lrx_last  = vl15_rx_tvalid ? vl15_rx_tlast : ldrx_tlast;
  assign lrx_user  = vl15_rx_tvalid ? vl15_rx_tuser : ldrx_tuser;
  assign rxw_len   = {(32'(rxw_beat_q) == PktLenBeat) ? lrx_pktlen[10:8] : rxw_len_q[10:8],
                      (32'(rxw_beat_q) == PktLoBeat) ? lrx_pktlen[7:0] : rxw_len_q[7:0]};
  assign tx_hs     = tx_tvalid_o && tx_tready_i;
  assign txw_len   = {(32'(txw_beat_q) == PktLenBeat) ? tx_pktlen[10:8] : txw_len_q[10:8],
                      (32'(txw_beat_q) == PktLoBeat) ? tx_pktlen[7:0] : txw_len_q[7:0]};

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rxw_beat_q <= '0;
      txw_beat_q <= '0;
      rxw_len_q  <= '0;
      txw_len_q  <= '0;
    end else begin
      if (lrx_valid) begin
        rxw_beat_q <= lrx_last ? '0 : (rxw_beat_q == WbW'(WbMax) ? rxw_beat_q : rxw_beat_q + WbW'(1));
        rxw_len_q  <= rxw_len;
      end
      if (tx_hs) begin
        txw_beat_q <= tx_tlast_o ? '0 : (txw_beat_q == WbW'(WbMax) ? txw_beat_q : txw_beat_q + WbW'(1));
        txw_len_q  <= txw_len;
      end
    end
  end

  always_comb begin
    ctr_add             = '0;
    ctr_add[CtrRxWords] = (lrx_valid && lrx_last && !lrx_user) ? rxw_len : '0;
    ctr_add[CtrTxWords] = (tx_hs && tx_tlast_o) ? txw_len : '0;
  end

  // ---------------------------------------------------------------------------
  // Counter events (index = ib_pkg::ctr_e)
  // ---------------------------------------------------------------------------
  // VL15Dropped has two sources that may fire in the same cycle: the RX
  // buffer full at a packet's end (write side) and a MAD for the SM with no
  // receive WQE (read side); the second counts through ev2.
  always_comb begin
    ev2                 = '0;
    ev2[CtrVl15Dropped] = ev_sm_drop;
    ev                  = '0;
    ev[CtrRxPkts]       = ev_rx_pkt;
    ev[CtrRxVcrcErr]    = ev_rx_vcrc_err;
    ev[CtrRxLverErr]    = ev_rx_lver_err;
    ev[CtrRxLnhErr]     = ev_rx_lnh_err;
    ev[CtrRxLenErr]     = ev_rx_len_err;
    ev[CtrRxDataPkts]   = ev_rx_data_pkt;
    ev[CtrVl15Dropped]  = rxf_drop_full;
    ev[CtrSmiIcrcErr]   = ev_rq_icrc_err;
    ev[CtrSmiBadHdr]    = ev_rq_bad_hdr;
    ev[CtrSmiLidErr]    = ev_rq_lid_err;
    ev[CtrSmiDrDiscard] = ev_rq_dr_discard;
    ev[CtrSmiPortDown]  = ev_rq_port_down;
    ev[CtrSmiToSma]     = ev_to_sma;
    ev[CtrSmiToSm]      = ev_to_sm;
    ev[CtrSqDrDiscard]  = ev_sq_dr_discard;
    ev[CtrSqLocal]      = ev_sq_local;
    ev[CtrSqPkts]       = ev_sq_pkt;
    ev[CtrTxVl15Pkts]   = ev_tx_vl15_pkt && gate_pass;  // on the wire, not discarded
    ev[CtrTxDataPkts]   = ev_tx_data_pkt && gate_pass;
    ev[CtrDataIcrcErr]  = ev_gsi_icrc_err;
    ev[CtrGsiBadHdr]    = ev_gsi_bad_hdr;
    ev[CtrGsiGmps]      = ev_gsi_gmp;
    ev[CtrMkeyViol]     = ev_mkey_viol;
    ev[CtrPkeyViol]     = ev_gsi_pkey_viol;
    ev[CtrQkeyViol]     = ev_gsi_qkey_viol;
  end

  // Every event reaches its counter one cycle later, through a register
  // (no path from the datapath's decisions into the counters' adders). A
  // counter clear (RegCtrClear, or RegCtrClearSel naming the counter) also
  // withdraws the event of its own cycle, so the count is as if the event
  // had counted at once and the clear won over it, as ib_port_regs does for
  // its inputs; a register read sees an event from the cycle after it, and
  // idle_o stays low while one is pending. The test-only counter write of
  // simulation builds (ib_port_regs, CtrRam = 0) withdraws its counter's
  // event the same way, so the counter holds exactly the value written.
  logic [NumCtrs-1:0] ctr_clr;  // counters cleared or written by this cycle's register write

  always_comb begin
    ctr_clr = '0;
    if (reg_we_i && reg_addr_i == RegCtrClear) begin
      ctr_clr = '1;
    end else if (reg_we_i && reg_addr_i == RegCtrClearSel) begin
      ctr_clr = reg_wdata_i[NumCtrs-1:0];
    end
`ifndef SYNTHESIS
    if (!CtrRam && reg_we_i && reg_addr_i >= RegCtrBase && 32'(reg_addr_i) < RegCtrEnd) begin
      ctr_clr[5'(reg_addr_i - RegCtrBase)] = 1'b1;
    end
`endif
  end

  // The amounts of the counters not cleared in this cycle (one assignment of
  // the whole vector: a simulator keeps one pending store, not one per
  // counter).
  function automatic logic [NumCtrs-1:0][CtrAddW-1:0] add_kept(
      logic [NumCtrs-1:0][CtrAddW-1:0] add, logic [NumCtrs-1:0] clr);
    logic [NumCtrs-1:0][CtrAddW-1:0] r;
    for (int unsigned i = 0; i < NumCtrs; i++) begin
      r[i] = clr[i] ? '0 : add[i];
    end
    return r;
  endfunction

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ev_q      <= '0;
      ev2_q     <= '0;
      ctr_add_q <= '0;
    end else begin
      ev_q  <= ev & ~ctr_clr;
      ev2_q <= ev2 & ~ctr_clr;
      ctr_add_q <= add_kept(ctr_add, ctr_clr);
    end
  end

  assign ctr_pend = (ev_q != '0) || (ev2_q != '0) || (ctr_add_q != '0);
  assign ctr_ev_o = ev_q | ev2_q;

  // ---------------------------------------------------------------------------
  // Stream checkers (simulation only; the checker body is empty in synthesis)
  // ---------------------------------------------------------------------------
  // wire RX and data RX: no ready
  ib_axis_checker #(.DataW(DataW), .HasReady(0)) u_chk_rx (
    .clk_i, .rst_ni,
    .tdata_i(rx_tdata_i), .tkeep_i(rx_tkeep_i), .tvalid_i(rx_tvalid_i),
    .tready_i(1'b1), .tlast_i(rx_tlast_i)
  );
  ib_axis_checker #(.DataW(DataW), .HasReady(0)) u_chk_drx (
    .clk_i, .rst_ni,
    .tdata_i(drx_tdata_o), .tkeep_i(drx_tkeep_o), .tvalid_i(drx_tvalid_o),
    .tready_i(1'b1), .tlast_i(drx_tlast_o)
  );
  ib_axis_checker #(.DataW(DataW), .HasReady(0)) u_chk_vl15_rx (
    .clk_i, .rst_ni,
    .tdata_i(vl15_rx_tdata), .tkeep_i(vl15_rx_tkeep), .tvalid_i(vl15_rx_tvalid),
    .tready_i(1'b1), .tlast_i(vl15_rx_tlast)
  );
  // streams with a ready
  ib_axis_checker #(.DataW(DataW)) u_chk_tx (
    .clk_i, .rst_ni,
    .tdata_i(tx_tdata_o), .tkeep_i(tx_tkeep_o), .tvalid_i(tx_tvalid_o),
    .tready_i(tx_tready_i), .tlast_i(tx_tlast_o)
  );
  ib_axis_checker #(.DataW(DataW)) u_chk_dtx (
    .clk_i, .rst_ni,
    .tdata_i(dtx_tdata_i), .tkeep_i(dtx_tkeep_i), .tvalid_i(dtx_tvalid_i),
    .tready_i(dtx_tready_o), .tlast_i(dtx_tlast_i)
  );
  ib_axis_checker #(.DataW(DataW)) u_chk_vl15_tx (
    .clk_i, .rst_ni,
    .tdata_i(vl15_tx_tdata), .tkeep_i(vl15_tx_tkeep), .tvalid_i(vl15_tx_tvalid),
    .tready_i(vl15_tx_tready), .tlast_i(vl15_tx_tlast)
  );
  ib_axis_checker #(.DataW(DataW)) u_chk_rxf (
    .clk_i, .rst_ni,
    .tdata_i(rxf_rd_tdata), .tkeep_i(rxf_rd_tkeep), .tvalid_i(rxf_rd_tvalid),
    .tready_i(rxf_rd_tready), .tlast_i(rxf_rd_tlast)
  );
  // MAD streams (no tkeep)
  ib_axis_checker #(.DataW(DataW), .KeepCheck(0)) u_chk_sma_rx (
    .clk_i, .rst_ni,
    .tdata_i(sma_rx_tdata_o), .tkeep_i('1), .tvalid_i(sma_rx_tvalid_o),
    .tready_i(sma_rx_tready_i), .tlast_i(sma_rx_tlast_o)
  );
  ib_axis_checker #(.DataW(DataW), .KeepCheck(0)) u_chk_sm_rx (
    .clk_i, .rst_ni,
    .tdata_i(sm_rx_tdata_o), .tkeep_i('1), .tvalid_i(sm_rx_tvalid_o),
    .tready_i(sm_rx_tready_i), .tlast_i(sm_rx_tlast_o)
  );
  ib_axis_checker #(.DataW(DataW), .KeepCheck(0)) u_chk_sma_tx (
    .clk_i, .rst_ni,
    .tdata_i(sma_tx_tdata_i), .tkeep_i('1), .tvalid_i(sma_tx_tvalid_i),
    .tready_i(sma_tx_tready_o), .tlast_i(sma_tx_tlast_i)
  );
  ib_axis_checker #(.DataW(DataW), .KeepCheck(0)) u_chk_sm_tx (
    .clk_i, .rst_ni,
    .tdata_i(sm_tx_tdata_i), .tkeep_i('1), .tvalid_i(sm_tx_tvalid_i),
    .tready_i(sm_tx_tready_o), .tlast_i(sm_tx_tlast_i)
  );
  ib_axis_checker #(.DataW(DataW), .KeepCheck(0)) u_chk_trap_tx (
    .clk_i, .rst_ni,
    .tdata_i(trap_tx_tdata_i), .tkeep_i('1), .tvalid_i(trap_tx_tvalid_i),
    .tready_i(trap_tx_tready_o), .tlast_i(trap_tx_tlast_i)
  );

  assign sq_tx_beat_o = txf_wr_valid;

`ifndef SYNTHESIS
  // The idle trackers against the submodules' own state (hierarchical
  // references, simulation only).
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      assert (32'(rx_cnt_q) == 32'(u_rx_fifo.cnt_q) && 32'(tx_cnt_q) == 32'(u_tx_fifo.cnt_q))
        else $error("%m: buffer trackers %0d/%0d, FIFOs hold %0d/%0d", rx_cnt_q, tx_cnt_q,
                    u_rx_fifo.cnt_q, u_tx_fifo.cnt_q);
      assert (rx_pkt_q == u_link_rx.in_pkt_q)
        else $error("%m: wire RX packet tracker differs from ib_link_rx");
      assert (!txf_drop_full)
        else $error("%m: smi_sq packet dropped by the VL15 TX buffer");
      if (idle_o) begin
        assert (!u_rx_fifo.open_q && !u_tx_fifo.open_q && 32'(u_link_tx.state_q) == 0 &&
                !u_rx_dispatch.open_q)
          else $error("%m: idle_o with a buffer, the dispatcher or ib_link_tx busy");
      end
      assert (sm_rq_avail_q == (sm_rq_cnt_q != '0))
        else $error("%m: SM receive WQE flag %0d with %0d posted", sm_rq_avail_q, sm_rq_cnt_q);
      // the SM receive queue never underflows: a WQE is used only when one
      // is posted
      assert (!sm_rq_take || sm_rq_cnt_q != '0)
        else $error("%m: SM receive WQE used with none posted");
      // a MAD for the SM goes to sm_rx only with a WQE; it is discarded
      // (taken at full rate, never stalling the SMA's requests behind it)
      if (rxf_rd_tvalid && u_rx_dispatch.drop) begin
        assert (rxf_rd_tready && !sm_rx_tvalid_o)
          else $error("%m: a discarded SM MAD stalled or reached sm_rx");
      end
    end
  end
`endif

endmodule
