// smi_rx_core: the part of the SMI receive engines (smi_rq, sw_smi_rq) that
// does not depend on the node. On the VL15 stream (LRH..VCRC, no ready) it
// picks up the header fields (smi_rx_fields), checks the ICRC residue
// (smi_icrc_chk), writes the 256 MAD bytes realigned into the RX buffer
// (smi_mad_align), runs the header and LID checks a cycle ahead of tlast
// (fields at packet bytes <= 63, registered with the port configuration),
// ranks the packet's verdicts at tlast (port down, ICRC, header, LID, DR:
// one event, the highest) into wr_ok_o, and builds the meta a CA and a
// switch share. The engine gives what differs: whether the DLID is one of
// the port's (dlid_mine_i, from hdr_o), whether the ICRC counts
// (icrc_chk_i), and the directed-route verdict and result.
module smi_rx_core
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 8, 32, 64 or 128
  localparam int unsigned DataB = DataW / 8
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  // VL15 stream from ib_link_rx (no ready)
  input  logic [DataW-1:0]     vl15_tdata_i,
  input  logic [DataB-1:0]     vl15_tkeep_i,
  input  logic                 vl15_tvalid_i,
  input  logic                 vl15_tlast_i,
  input  logic                 vl15_tuser_i,   // on tlast: link error, discard
  // port configuration
  input  logic [15:0]          port_lid_i,
  input  logic [3:0]           port_state_i,
  input  logic [7:0]           port_num_i,     // also compared with ReturnPath[hop_cnt]
  // header fields taken so far, packet byte offset of the current beat
  output smi_rx_hdr_t          hdr_o,
  output logic [SmiRxPosW-1:0] pos_o,
  output logic                 is_dr_o,        // class 0x81 (registered, valid at tlast)
  // the engine's checks
  input  logic                 dlid_mine_i,    // hdr_o.dlid is one of the port's LIDs
  input  logic                 icrc_chk_i,     // at tlast: the ICRC counts (LNH, PktLen)
  input  logic                 dr_discard_i,   // at tlast: DR rules say discard
  input  logic [7:0]           dr_hp_new_i,    // at tlast: DR hop pointer
  input  logic                 dr_rp_we_i,     // ... ReturnPath write
  input  logic [5:0]           dr_rp_idx_i,
  // VL15 RX buffer write port
  output logic                 wr_valid_o,
  output logic [DataW-1:0]     wr_data_o,
  output logic [DataB-1:0]     wr_keep_o,
  output logic                 wr_end_o,
  output logic                 wr_ok_o,
  output smi_rx_meta_t         wr_meta_o,
  // event pulses (one per bad packet, highest precedence only)
  output logic                 ev_port_down_o,
  output logic                 ev_icrc_err_o,
  output logic                 ev_bad_hdr_o,
  output logic                 ev_lid_err_o,
  output logic                 ev_dr_discard_o,
  // at tlast: the directed-route rules decide this SMP (it passed every
  // earlier check): for the engines' rule cover points
  output logic                 dr_judged_o
);

  // ---------------------------------------------------------------------------
  // Header fields, ICRC, MAD realignment
  // ---------------------------------------------------------------------------
  smi_rx_hdr_t          f_q;       // header fields taken so far
  logic [SmiRxPosW-1:0] pos_next;  // packet byte offset of the next beat
  logic                 icrc_ok;   // residue check, from registers

  smi_rx_fields #(.DataW(DataW)) u_fields (
    .clk_i,
    .rst_ni,
    .tdata_i    (vl15_tdata_i),
    .tkeep_i    (vl15_tkeep_i),
    .tvalid_i   (vl15_tvalid_i),
    .tlast_i    (vl15_tlast_i),
    .rp_cmp_i   (port_num_i),
    .hdr_o      (f_q),
    .pos_o,
    .pos_next_o (pos_next)
  );

  smi_icrc_chk #(.DataW(DataW)) u_icrc (
    .clk_i,
    .rst_ni,
    .tdata_i    (vl15_tdata_i),
    .tvalid_i   (vl15_tvalid_i),
    .pos_next_i (pos_next),
    .icrc_ok_o  (icrc_ok)
  );

  smi_mad_align #(.DataW(DataW)) u_align (
    .clk_i,
    .rst_ni,
    .tdata_i    (vl15_tdata_i),
    .tvalid_i   (vl15_tvalid_i),
    .pos_next_i (pos_next),
    .wr_valid_o,
    .wr_data_o
  );

  assign hdr_o     = f_q;
  assign wr_keep_o = '1;

  logic last;
  assign last = vl15_tvalid_i & vl15_tlast_i;

  // ---------------------------------------------------------------------------
  // Header checks (evaluated at tlast; every field and the whole ICRC lie in
  // earlier beats of a 290-byte packet). The fields lie at packet bytes
  // <= 63, at least two beats before tlast at every DataW: computed a cycle
  // ahead and registered, with the port configuration (a LID/LMC write takes
  // effect one cycle later).
  // ---------------------------------------------------------------------------
  typedef struct packed {
    logic is_dr_class;
    logic err_hdr;
    logic err_lid;
    logic to_sm;
  } chk_t;

  chk_t chk_d, chk_q;
  logic err_down;
  logic err_icrc;
  logic err_dr;

  always_comb begin
    logic is_lid_class;
    is_lid_class      = (f_q.mgmt_class == ClassSubnLid);
    chk_d.is_dr_class = (f_q.mgmt_class == ClassSubnDr);
    chk_d.err_hdr = (f_q.lnh != LnhIbaLocal) || !f_q.opcode_ok ||
                    !f_q.tver_ok || !(&f_q.destqp_zero) ||
                    !(&f_q.pktlen_ok) || !f_q.base_ver_ok ||
                    !(is_lid_class || chk_d.is_dr_class);
    chk_d.err_lid = is_lid_class ? (!dlid_mine_i || port_lid_i == 16'd0 ||
                                    f_q.slid == PermissiveLid)
                                 : (f_q.dlid != PermissiveLid && !dlid_mine_i);
    chk_d.to_sm   = f_q.method[7] || (f_q.method == MethodTrap) ||
                    ((&f_q.attr_sminfo) &&
                     (f_q.method == MethodGet || f_q.method == MethodSet));
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      chk_q <= '0;
    end else begin
      chk_q <= chk_d;
    end
  end

  assign is_dr_o = chk_q.is_dr_class;

  always_comb begin
    err_down = (port_state_i == PortStateDown);
    err_icrc = icrc_chk_i && !icrc_ok;
    err_dr   = chk_q.is_dr_class && dr_discard_i;
  end

  // ---------------------------------------------------------------------------
  // Verdict, events, meta
  // ---------------------------------------------------------------------------
  logic good_link;
  assign good_link = last && !vl15_tuser_i;

  assign ev_port_down_o  = good_link && err_down;
  assign ev_icrc_err_o   = good_link && !err_down && err_icrc;
  assign ev_bad_hdr_o    = good_link && !err_down && !err_icrc && chk_q.err_hdr;
  assign ev_lid_err_o    = good_link && !err_down && !err_icrc && !chk_q.err_hdr && chk_q.err_lid;
  assign ev_dr_discard_o = good_link && !err_down && !err_icrc && !chk_q.err_hdr &&
                           !chk_q.err_lid && err_dr;

  assign dr_judged_o = good_link && !err_down && !err_icrc && !chk_q.err_hdr &&
                       !chk_q.err_lid && chk_q.is_dr_class;

  assign wr_end_o = last;
  assign wr_ok_o  = good_link &&
                    !(err_down || err_icrc || chk_q.err_hdr || chk_q.err_lid || err_dr);

  always_comb begin
    wr_meta_o            = '0;
    wr_meta_o.slid       = f_q.slid;
    wr_meta_o.dlid       = f_q.dlid;
    wr_meta_o.sl         = f_q.sl;
    wr_meta_o.port       = port_num_i;
    wr_meta_o.mgmt_class = f_q.mgmt_class;
    wr_meta_o.to_sm      = chk_q.to_sm;
    if (chk_q.is_dr_class) begin
      wr_meta_o.hop_ptr = dr_hp_new_i[6:0];
      wr_meta_o.hop_cnt = f_q.hop_cnt[6:0];
      wr_meta_o.rp_we   = dr_rp_we_i;
      wr_meta_o.rp_idx  = dr_rp_idx_i;
      wr_meta_o.rp_val  = port_num_i;
    end
  end

  // ---------------------------------------------------------------------------
  // Cover points: each SMI receive check discards a packet (ibspec §6, in
  // their order of precedence), and an SMP of each class and destination
  // is accepted
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  // every cover point below samples at the clock edge, not in reset
  default clocking cov_clk @(posedge clk_i); endclocking
  default disable iff (!rst_ni);
  SMI_RX_port_down:  cover property (ev_port_down_o);
  SMI_RX_icrc:       cover property (ev_icrc_err_o);
  SMI_RX_bad_hdr:    cover property (ev_bad_hdr_o);
  SMI_RX_lid:        cover property (ev_lid_err_o);
  SMI_RX_dr:         cover property (ev_dr_discard_o);
  SMI_RX_link_bad:   cover property (last && vl15_tuser_i);
  SMI_RX_lid_to_sma: cover property (wr_ok_o && !chk_q.is_dr_class && !chk_q.to_sm);
  SMI_RX_lid_to_sm:  cover property (wr_ok_o && !chk_q.is_dr_class && chk_q.to_sm);
  SMI_RX_dr_to_sma:  cover property (wr_ok_o && chk_q.is_dr_class && !chk_q.to_sm);
  SMI_RX_dr_to_sm:   cover property (wr_ok_o && chk_q.is_dr_class && chk_q.to_sm);
`endif

  // ---------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      if (wr_ok_o) begin
        // DR only: a LID-routed SMP's hop pointer is any byte, unused.
        assert (!chk_q.is_dr_class || (dr_hp_new_i < 8'd128 && f_q.hop_cnt < 8'd64))
          else $error("%m: accepted DR SMP with out-of-range hop fields");
      end
    end
  end
`endif

endmodule
