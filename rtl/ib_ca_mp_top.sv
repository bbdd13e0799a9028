// ib_ca_mp_top: a multiport InfiniBand CA (flat ports, top of the simulation
// model): NumPorts ib_ca_top ports (PortNum 1..NumPorts), each with its own
// link, wire, data VLs and SMI, behind one shared SMA interface and one shared
// SM interface. SMA RX and SM RX each join the ports' streams round-robin at
// packet boundaries (smi_port_mux; *_port_o = the port the SMP arrived on);
// SMA TX, SM TX and trap TX each go to the send engine of the port their
// *_port_i tag names (smi_port_demux; an out-of-range tag drops the packet
// whole and counts it in TX_BAD_PORT). The CA never forwards between its
// ports (each port's smi_rq discards a FORWARD disposition). Registers:
// 0x0000 ID, 0x0001 TX_BAD_PORT, 0x0100*p + a = register a of port p
// (docs/fabric.md).
//
// SM receive queue: one per port, not one per device. QP0 is per port in
// InfiniBand (an SM binds to one port and receives only that port's MADs),
// and each ib_ca_top keeps its own WQE count and counts its own discards in
// its VL15Dropped. The doorbell is shared and carries a port tag like the TX
// streams (sm_rq_port_i); the testbench's SM sits on one port of a device and
// posts to that port only, so a MAD for the SM that arrives on another port
// finds no WQE there and is discarded and counted on that port, never
// blocking it.
//
// Each port runs on its own gated clock (ib_clk_gate, ClkGate = 1; docs/
// fabric.md "Clock gating"), enabled by ib_ca_top's idle contract: while the
// port is not idle, in reset, or an input is presented to it (a beat from
// the wire or the host's data VLs, an SMA/SM/trap MAD for it, a register
// write, a doorbell, its link going up or down). ClkGate = 0 runs every port
// on clk_i; both behave the same in every cycle.
module ib_ca_mp_top
  import ib_pkg::*;
#(
  parameter int unsigned DataW       = 64,  // stream width in bits: 32, 64 or 128
  parameter int unsigned NumPorts    = 2,   // CA ports 1..NumPorts (1..254)
  parameter int unsigned Vl15RxDepth = 4,   // VL15 RX buffer slots per port
  parameter int unsigned Vl15TxDepth = 2,   // VL15 TX buffer slots per port
  parameter bit          ClkGate     = 1'b1, // each port on its own gated clock (simulation)
  localparam int unsigned DataB      = DataW / 8
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  // wire -> ports (no ready); port p at index p-1 of each packed vector
  input  logic [NumPorts*DataW-1:0] rx_tdata_i,
  input  logic [NumPorts*DataB-1:0] rx_tkeep_i,
  input  logic [NumPorts-1:0]       rx_tvalid_i,
  input  logic [NumPorts-1:0]       rx_tlast_i,
  // ports -> wire
  output logic [NumPorts*DataW-1:0] tx_tdata_o,
  output logic [NumPorts*DataB-1:0] tx_tkeep_o,
  output logic [NumPorts-1:0]       tx_tvalid_o,
  output logic [NumPorts-1:0]       tx_tlast_o,
  input  logic [NumPorts-1:0]       tx_tready_i,
  // physical link of each port (1 = LinkUp)
  input  logic [NumPorts-1:0]       link_up_i,
  // data VLs -> host (no ready; tuser on tlast = discard)
  output logic [NumPorts*DataW-1:0] drx_tdata_o,
  output logic [NumPorts*DataB-1:0] drx_tkeep_o,
  output logic [NumPorts-1:0]       drx_tvalid_o,
  output logic [NumPorts-1:0]       drx_tlast_o,
  output logic [NumPorts-1:0]       drx_tuser_o,
  output logic [NumPorts*3-1:0]     drx_reason_o,  // port p at [3(p-1) +: 3], on tlast (gsi_reason_e)
  // host -> data VLs (LRH..ICRC)
  input  logic [NumPorts*DataW-1:0] dtx_tdata_i,
  input  logic [NumPorts*DataB-1:0] dtx_tkeep_i,
  input  logic [NumPorts-1:0]       dtx_tvalid_i,
  input  logic [NumPorts-1:0]       dtx_tlast_i,
  output logic [NumPorts-1:0]       dtx_tready_o,
  // SMA RX (shared)
  output logic [DataW-1:0]          sma_rx_tdata_o,
  output logic                      sma_rx_tvalid_o,
  output logic                      sma_rx_tlast_o,
  input  logic                      sma_rx_tready_i,
  output logic [15:0]               sma_rx_slid_o,
  output logic [15:0]               sma_rx_dlid_o,
  output logic [3:0]                sma_rx_sl_o,
  output logic [7:0]                sma_rx_port_o,
  output logic [7:0]                sma_rx_mgmt_class_o,
  output logic [6:0]                sma_rx_hop_ptr_o,
  output logic [6:0]                sma_rx_hop_cnt_o,
  // M_Key verdict of the port the packet came from, with the tlast beat
  output logic                      sma_rx_mkey_viol_o,
  output logic                      sma_rx_mkey_mask_o,
  // SM RX (shared)
  output logic [DataW-1:0]          sm_rx_tdata_o,
  output logic                      sm_rx_tvalid_o,
  output logic                      sm_rx_tlast_o,
  input  logic                      sm_rx_tready_i,
  output logic [15:0]               sm_rx_slid_o,
  output logic [15:0]               sm_rx_dlid_o,
  output logic [3:0]                sm_rx_sl_o,
  output logic [7:0]                sm_rx_port_o,
  output logic [7:0]                sm_rx_mgmt_class_o,
  output logic [6:0]                sm_rx_hop_ptr_o,
  output logic [6:0]                sm_rx_hop_cnt_o,
  // SM receive queue doorbell (shared, port-tagged): as ib_ca_top's sm_rq_*
  // for port sm_rq_port_i's receive queue; a tag of 0 or > NumPorts is ignored
  input  logic                      sm_rq_post_i,
  input  logic [7:0]                sm_rq_post_n_i,
  input  logic                      sm_rq_clr_i,
  input  logic [7:0]                sm_rq_port_i,
  // SMA TX (shared; meta = echo of the request, port = the request's port)
  input  logic [DataW-1:0]          sma_tx_tdata_i,
  input  logic                      sma_tx_tvalid_i,
  input  logic                      sma_tx_tlast_i,
  output logic                      sma_tx_tready_o,
  input  logic [15:0]               sma_tx_slid_i,
  input  logic [15:0]               sma_tx_dlid_i,
  input  logic [3:0]                sma_tx_sl_i,
  input  logic [7:0]                sma_tx_port_i,
  // SM TX (shared; meta = address handle and the sending port)
  input  logic [DataW-1:0]          sm_tx_tdata_i,
  input  logic                      sm_tx_tvalid_i,
  input  logic                      sm_tx_tlast_i,
  output logic                      sm_tx_tready_o,
  input  logic [15:0]               sm_tx_dlid_i,
  input  logic [3:0]                sm_tx_sl_i,
  input  logic [6:0]                sm_tx_path_bits_i,
  input  logic [7:0]                sm_tx_port_i,
  // trap TX (shared)
  input  logic [DataW-1:0]          trap_tx_tdata_i,
  input  logic                      trap_tx_tvalid_i,
  input  logic                      trap_tx_tlast_i,
  output logic                      trap_tx_tready_o,
  input  logic [7:0]                trap_tx_port_i,
  // register interface (16-bit word addresses)
  input  logic                      reg_we_i,
  input  logic [15:0]               reg_addr_i,
  input  logic [31:0]               reg_wdata_i,
  output logic [31:0]               reg_rdata_o,
  // PortState of port p at [4(p-1) +: 4]; nothing buffered or in flight
  output logic [NumPorts*4-1:0]     port_state_o,
  // M_KeyProtectBits of port p at [2(p-1) +: 2], M_KeyViolations at [16(p-1) +: 16]
  output logic [NumPorts*2-1:0]     mkey_prot_o,
  output logic [NumPorts*16-1:0]    mkey_viols_o,
  // observability: port p's SMI send engine puts a beat into its VL15 TX
  // buffer this cycle, at [p-1] (ib_ca_top's sq_tx_beat_o; no function)
  output logic [NumPorts-1:0]       sq_tx_beat_o,
  output logic                      idle_o
);

  if (DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 32, 64 or 128, got %0d", DataW);
  end
  if (NumPorts < 1 || NumPorts > 254) begin : gen_ports_check
    $fatal(1, "%m: NumPorts must be 1..254, got %0d", NumPorts);
  end

  localparam logic [31:0] MpIdValue   = 32'h564C_4D50;  // "VLMP"
  localparam logic [15:0] RegMpId     = 16'h0000;
  localparam logic [15:0] RegMpBadTag = 16'h0001;       // TX_BAD_PORT
  // RX meta on the mux: slid, dlid, sl, port, mgmt_class, hop_ptr, hop_cnt
  localparam int unsigned RxMetaW     = 16 + 16 + 4 + 8 + 8 + 7 + 7;
  // the SMA's adds the M_Key verdict (mkey_viol, mkey_mask; valid with tlast)
  localparam int unsigned SmaMetaW    = RxMetaW + 2;

  // ---------------------------------------------------------------------------
  // Per-port signals
  // ---------------------------------------------------------------------------
  logic [NumPorts*DataW-1:0]   p_sma_rx_tdata, p_sm_rx_tdata;
  logic [NumPorts*SmaMetaW-1:0] p_sma_rx_meta;
  logic [NumPorts*RxMetaW-1:0] p_sm_rx_meta;
  logic [NumPorts-1:0]         p_sma_rx_tvalid, p_sma_rx_tlast, p_sma_rx_tready;
  logic [NumPorts-1:0]         p_sm_rx_tvalid, p_sm_rx_tlast, p_sm_rx_tready;
  logic [NumPorts-1:0]         p_sma_tx_tvalid, p_sma_tx_tready;
  logic [NumPorts-1:0]         p_sm_tx_tvalid, p_sm_tx_tready;
  logic [NumPorts-1:0]         p_trap_tx_tvalid, p_trap_tx_tready;
  logic [NumPorts-1:0]         p_reg_we;
  logic [NumPorts*32-1:0]      p_reg_rdata;
  logic [NumPorts-1:0]         p_reg_rvalid;  // unused: the ports' reads are combinational
  logic [NumPorts-1:0][NumCtrs-1:0] p_ctr_ev;  // unused: the counters are read instead
  logic [NumPorts-1:0]         p_idle;
  logic [NumPorts-1:0]         p_sm_rq_post, p_sm_rq_clr;

  // the doorbell goes to the tagged port only
  always_comb begin
    p_sm_rq_post = '0;
    p_sm_rq_clr  = '0;
    for (int unsigned p = 1; p <= NumPorts; p++) begin
      if (32'(sm_rq_port_i) == p) begin
        p_sm_rq_post[p-1] = sm_rq_post_i;
        p_sm_rq_clr[p-1]  = sm_rq_clr_i;
      end
    end
  end

  for (genvar i = 0; i < NumPorts; i++) begin : gen_port
    logic [15:0] sma_slid, sma_dlid, sm_slid, sm_dlid;
    logic [3:0]  sma_sl, sm_sl;
    logic [7:0]  sma_port, sma_cls, sm_port, sm_cls;
    logic [6:0]  sma_hp, sma_hc, sm_hp, sm_hc;
    logic        sma_mkey_viol, sma_mkey_mask;
    logic        port_clk, port_en, link_q;

    // The port may change: see the header.
    assign port_en = !rst_ni || !p_idle[i] || rx_tvalid_i[i] || dtx_tvalid_i[i] ||
                     p_sma_tx_tvalid[i] || p_sm_tx_tvalid[i] || p_trap_tx_tvalid[i] ||
                     p_reg_we[i] || p_sm_rq_post[i] || p_sm_rq_clr[i] || link_up_i[i] != link_q;

    ib_clk_gate #(.Enable(ClkGate)) u_clk_gate (
      .clk_i,
      .en_i  (port_en),
      .gclk_o(port_clk)
    );

    // link_up_i as of the port's last clock
    always_ff @(posedge port_clk) begin
      link_q <= link_up_i[i];
    end

    ib_ca_top #(
      .DataW      (DataW),
      .Vl15RxDepth(Vl15RxDepth),
      .Vl15TxDepth(Vl15TxDepth),
      .PortNum    (i + 1)
    ) u_port (
      .clk_i              (port_clk),
      .rst_ni,
      .rx_tdata_i         (rx_tdata_i[i*DataW +: DataW]),
      .rx_tkeep_i         (rx_tkeep_i[i*DataB +: DataB]),
      .rx_tvalid_i        (rx_tvalid_i[i]),
      .rx_tlast_i         (rx_tlast_i[i]),
      .tx_tdata_o         (tx_tdata_o[i*DataW +: DataW]),
      .tx_tkeep_o         (tx_tkeep_o[i*DataB +: DataB]),
      .tx_tvalid_o        (tx_tvalid_o[i]),
      .tx_tlast_o         (tx_tlast_o[i]),
      .tx_tready_i        (tx_tready_i[i]),
      .drx_tdata_o        (drx_tdata_o[i*DataW +: DataW]),
      .drx_tkeep_o        (drx_tkeep_o[i*DataB +: DataB]),
      .drx_tvalid_o       (drx_tvalid_o[i]),
      .drx_tlast_o        (drx_tlast_o[i]),
      .drx_tuser_o        (drx_tuser_o[i]),
      .drx_reason_o       (drx_reason_o[i*3 +: 3]),
      .dtx_tdata_i        (dtx_tdata_i[i*DataW +: DataW]),
      .dtx_tkeep_i        (dtx_tkeep_i[i*DataB +: DataB]),
      .dtx_tvalid_i       (dtx_tvalid_i[i]),
      .dtx_tlast_i        (dtx_tlast_i[i]),
      .dtx_tready_o       (dtx_tready_o[i]),
      .sma_rx_tdata_o     (p_sma_rx_tdata[i*DataW +: DataW]),
      .sma_rx_tvalid_o    (p_sma_rx_tvalid[i]),
      .sma_rx_tlast_o     (p_sma_rx_tlast[i]),
      .sma_rx_tready_i    (p_sma_rx_tready[i]),
      .sma_rx_slid_o      (sma_slid),
      .sma_rx_dlid_o      (sma_dlid),
      .sma_rx_sl_o        (sma_sl),
      .sma_rx_port_o      (sma_port),
      .sma_rx_mgmt_class_o(sma_cls),
      .sma_rx_hop_ptr_o   (sma_hp),
      .sma_rx_hop_cnt_o   (sma_hc),
      .sma_rx_mkey_viol_o (sma_mkey_viol),
      .sma_rx_mkey_mask_o (sma_mkey_mask),
      .sm_rx_tdata_o      (p_sm_rx_tdata[i*DataW +: DataW]),
      .sm_rx_tvalid_o     (p_sm_rx_tvalid[i]),
      .sm_rx_tlast_o      (p_sm_rx_tlast[i]),
      .sm_rx_tready_i     (p_sm_rx_tready[i]),
      .sm_rx_slid_o       (sm_slid),
      .sm_rx_dlid_o       (sm_dlid),
      .sm_rx_sl_o         (sm_sl),
      .sm_rx_port_o       (sm_port),
      .sm_rx_mgmt_class_o (sm_cls),
      .sm_rx_hop_ptr_o    (sm_hp),
      .sm_rx_hop_cnt_o    (sm_hc),
      .sm_rq_post_i       (p_sm_rq_post[i]),
      .sm_rq_post_n_i,
      .sm_rq_clr_i        (p_sm_rq_clr[i]),
      .sma_tx_tdata_i,
      .sma_tx_tvalid_i    (p_sma_tx_tvalid[i]),
      .sma_tx_tlast_i,
      .sma_tx_tready_o    (p_sma_tx_tready[i]),
      .sma_tx_slid_i,
      .sma_tx_dlid_i,
      .sma_tx_sl_i,
      .sm_tx_tdata_i,
      .sm_tx_tvalid_i     (p_sm_tx_tvalid[i]),
      .sm_tx_tlast_i,
      .sm_tx_tready_o     (p_sm_tx_tready[i]),
      .sm_tx_dlid_i,
      .sm_tx_sl_i,
      .sm_tx_path_bits_i,
      .trap_tx_tdata_i,
      .trap_tx_tvalid_i   (p_trap_tx_tvalid[i]),
      .trap_tx_tlast_i,
      .trap_tx_tready_o   (p_trap_tx_tready[i]),
      .reg_we_i           (p_reg_we[i]),
      .reg_re_i           (1'b0),  // CtrRam = 0: reads are combinational
      .reg_addr_i         (reg_addr_i[7:0]),
      .reg_wdata_i,
      .reg_rdata_o        (p_reg_rdata[i*32 +: 32]),
      .reg_rvalid_o       (p_reg_rvalid[i]),
      .sq_tx_beat_o       (sq_tx_beat_o[i]),
      .link_up_i          (link_up_i[i]),
      .port_state_o       (port_state_o[i*4 +: 4]),
      .mkey_prot_o        (mkey_prot_o[i*2 +: 2]),
      .mkey_viols_o       (mkey_viols_o[i*16 +: 16]),
      .ctr_ev_o           (p_ctr_ev[i]),
      .idle_o             (p_idle[i])
    );

    assign p_sma_rx_meta[i*SmaMetaW +: SmaMetaW] = {sma_slid, sma_dlid, sma_sl, sma_port, sma_cls,
                                                    sma_hp, sma_hc, sma_mkey_viol, sma_mkey_mask};
    assign p_sm_rx_meta[i*RxMetaW +: RxMetaW]  = {sm_slid, sm_dlid, sm_sl, sm_port, sm_cls,
                                                  sm_hp, sm_hc};
  end

  // ---------------------------------------------------------------------------
  // Shared SMA RX / SM RX: round-robin between the ports
  // ---------------------------------------------------------------------------
  smi_port_mux #(.DataW(DataW), .NumPorts(NumPorts), .MetaW(SmaMetaW)) u_sma_rx_mux (
    .clk_i,
    .rst_ni,
    .in_tdata_i  (p_sma_rx_tdata),
    .in_meta_i   (p_sma_rx_meta),
    .in_tvalid_i (p_sma_rx_tvalid),
    .in_tlast_i  (p_sma_rx_tlast),
    .in_tready_o (p_sma_rx_tready),
    .out_tdata_o (sma_rx_tdata_o),
    .out_meta_o  ({sma_rx_slid_o, sma_rx_dlid_o, sma_rx_sl_o, sma_rx_port_o, sma_rx_mgmt_class_o,
                   sma_rx_hop_ptr_o, sma_rx_hop_cnt_o, sma_rx_mkey_viol_o, sma_rx_mkey_mask_o}),
    .out_tvalid_o(sma_rx_tvalid_o),
    .out_tlast_o (sma_rx_tlast_o),
    .out_tready_i(sma_rx_tready_i)
  );

  smi_port_mux #(.DataW(DataW), .NumPorts(NumPorts), .MetaW(RxMetaW)) u_sm_rx_mux (
    .clk_i,
    .rst_ni,
    .in_tdata_i  (p_sm_rx_tdata),
    .in_meta_i   (p_sm_rx_meta),
    .in_tvalid_i (p_sm_rx_tvalid),
    .in_tlast_i  (p_sm_rx_tlast),
    .in_tready_o (p_sm_rx_tready),
    .out_tdata_o (sm_rx_tdata_o),
    .out_meta_o  ({sm_rx_slid_o, sm_rx_dlid_o, sm_rx_sl_o, sm_rx_port_o, sm_rx_mgmt_class_o,
                   sm_rx_hop_ptr_o, sm_rx_hop_cnt_o}),
    .out_tvalid_o(sm_rx_tvalid_o),
    .out_tlast_o (sm_rx_tlast_o),
    .out_tready_i(sm_rx_tready_i)
  );

  // ---------------------------------------------------------------------------
  // Shared SMA TX / SM TX / trap TX: to the tagged port's send engine
  // ---------------------------------------------------------------------------
  logic ev_bad_sma, ev_bad_sm, ev_bad_trap;

  smi_port_demux #(.NumPorts(NumPorts)) u_sma_tx_demux (
    .clk_i,
    .rst_ni,
    .in_tvalid_i  (sma_tx_tvalid_i),
    .in_tlast_i   (sma_tx_tlast_i),
    .in_tready_o  (sma_tx_tready_o),
    .in_port_i    (sma_tx_port_i),
    .out_tvalid_o (p_sma_tx_tvalid),
    .out_tready_i (p_sma_tx_tready),
    .ev_bad_port_o(ev_bad_sma)
  );

  smi_port_demux #(.NumPorts(NumPorts)) u_sm_tx_demux (
    .clk_i,
    .rst_ni,
    .in_tvalid_i  (sm_tx_tvalid_i),
    .in_tlast_i   (sm_tx_tlast_i),
    .in_tready_o  (sm_tx_tready_o),
    .in_port_i    (sm_tx_port_i),
    .out_tvalid_o (p_sm_tx_tvalid),
    .out_tready_i (p_sm_tx_tready),
    .ev_bad_port_o(ev_bad_sm)
  );

  smi_port_demux #(.NumPorts(NumPorts)) u_trap_tx_demux (
    .clk_i,
    .rst_ni,
    .in_tvalid_i  (trap_tx_tvalid_i),
    .in_tlast_i   (trap_tx_tlast_i),
    .in_tready_o  (trap_tx_tready_o),
    .in_port_i    (trap_tx_port_i),
    .out_tvalid_o (p_trap_tx_tvalid),
    .out_tready_i (p_trap_tx_tready),
    .ev_bad_port_o(ev_bad_trap)
  );

  // ---------------------------------------------------------------------------
  // Registers: 0x0000 ID, 0x0001 TX_BAD_PORT (packets dropped for an
  // out-of-range port tag, 32-bit wrapping, any write clears it),
  // 0x0100*p + a = register a of port p. Reads are combinational.
  // ---------------------------------------------------------------------------
  logic [31:0] bad_tag_q;
  logic [7:0]  reg_port;

  assign reg_port = reg_addr_i[15:8];

  always_comb begin
    p_reg_we = '0;
    for (int unsigned p = 1; p <= NumPorts; p++) begin
      if (32'(reg_port) == p) begin
        p_reg_we[p-1] = reg_we_i;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni || (reg_we_i && reg_addr_i == RegMpBadTag)) begin
      bad_tag_q <= '0;
    end else begin
      bad_tag_q <= bad_tag_q + 32'(ev_bad_sma) + 32'(ev_bad_sm) + 32'(ev_bad_trap);
    end
  end

  always_comb begin
    reg_rdata_o = '0;
    if (reg_addr_i == RegMpId) begin
      reg_rdata_o = MpIdValue;
    end else if (reg_addr_i == RegMpBadTag) begin
      reg_rdata_o = bad_tag_q;
    end
    for (int unsigned p = 1; p <= NumPorts; p++) begin
      if (32'(reg_port) == p) begin
        reg_rdata_o = p_reg_rdata[(p-1)*32 +: 32];
      end
    end
  end

  // The muxes hold state only while a port presents a packet (that port is
  // then not idle), the demuxes none: the CA is idle when every port is.
  assign idle_o = &p_idle;

  // Reads are combinational (CtrRam = 0); the counter events feed no
  // counter RAM here.
  logic unused;
  assign unused = ^{p_reg_rvalid, p_ctr_ev};

  // ---------------------------------------------------------------------------
  // Stream checkers on the shared MAD streams (simulation only); the meta is
  // checked with the data (stable while tvalid && !tready)
  // ---------------------------------------------------------------------------
  localparam int unsigned ChkW = DataW + 72;  // data + RX meta (66) padded to bytes

  ib_axis_checker #(.DataW(ChkW), .KeepCheck(0)) u_chk_sma_rx (
    .clk_i, .rst_ni,
    .tdata_i({6'd0, sma_rx_slid_o, sma_rx_dlid_o, sma_rx_sl_o, sma_rx_port_o, sma_rx_mgmt_class_o,
              sma_rx_hop_ptr_o, sma_rx_hop_cnt_o, sma_rx_tdata_o}),
    .tkeep_i('1), .tvalid_i(sma_rx_tvalid_o), .tready_i(sma_rx_tready_i), .tlast_i(sma_rx_tlast_o)
  );
  ib_axis_checker #(.DataW(ChkW), .KeepCheck(0)) u_chk_sm_rx (
    .clk_i, .rst_ni,
    .tdata_i({6'd0, sm_rx_slid_o, sm_rx_dlid_o, sm_rx_sl_o, sm_rx_port_o, sm_rx_mgmt_class_o,
              sm_rx_hop_ptr_o, sm_rx_hop_cnt_o, sm_rx_tdata_o}),
    .tkeep_i('1), .tvalid_i(sm_rx_tvalid_o), .tready_i(sm_rx_tready_i), .tlast_i(sm_rx_tlast_o)
  );
  ib_axis_checker #(.DataW(DataW + 48), .KeepCheck(0)) u_chk_sma_tx (
    .clk_i, .rst_ni,
    .tdata_i({4'd0, sma_tx_port_i, sma_tx_slid_i, sma_tx_dlid_i, sma_tx_sl_i, sma_tx_tdata_i}),
    .tkeep_i('1), .tvalid_i(sma_tx_tvalid_i), .tready_i(sma_tx_tready_o), .tlast_i(sma_tx_tlast_i)
  );
  ib_axis_checker #(.DataW(DataW + 40), .KeepCheck(0)) u_chk_sm_tx (
    .clk_i, .rst_ni,
    .tdata_i({5'd0, sm_tx_port_i, sm_tx_dlid_i, sm_tx_sl_i, sm_tx_path_bits_i, sm_tx_tdata_i}),
    .tkeep_i('1), .tvalid_i(sm_tx_tvalid_i), .tready_i(sm_tx_tready_o), .tlast_i(sm_tx_tlast_i)
  );
  ib_axis_checker #(.DataW(DataW + 8), .KeepCheck(0)) u_chk_trap_tx (
    .clk_i, .rst_ni,
    .tdata_i({trap_tx_port_i, trap_tx_tdata_i}),
    .tkeep_i('1), .tvalid_i(trap_tx_tvalid_i), .tready_i(trap_tx_tready_o), .tlast_i(trap_tx_tlast_i)
  );

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // the shared RX streams carry the number of the port the SMP came from
      if (sma_rx_tvalid_o) begin
        assert (sma_rx_port_o >= 8'd1 && 32'(sma_rx_port_o) <= NumPorts)
          else $error("%m: SMA RX port tag %0d out of range", sma_rx_port_o);
      end
      if (sm_rx_tvalid_o) begin
        assert (sm_rx_port_o >= 8'd1 && 32'(sm_rx_port_o) <= NumPorts)
          else $error("%m: SM RX port tag %0d out of range", sm_rx_port_o);
      end
    end
  end
`endif

endmodule
