// sw_smi_rq: SMI receive engine of a switch's port 0 (ib_switch_top). The
// same datapath as smi_rq (header pick-up, ICRC residue, header checks, MAD
// realigned into the RX ib_pkt_fifo, wr_end_o with the tlast beat:
// smi_rx_core), for packets that reach port 0 through the crossbar:
// port_num_i is the ingress port P and port_state_i its PortState (both
// stable for the whole packet), the LID check is against the port-0 LID
// without LMC, and the directed-route rules are those of a switch (ibspec §5, is_switch = 1, N = num_ports_i) plus the
// LID-routed segment rows of docs/fabric.md. The disposition is carried in
// the meta (sw_rx_meta_t): deliver to the SMA/SM (to_sm rule as smi_rq), or
// forward through the send engine (fwd; by the path, or by the LFT with the
// new LRH DLID/SLID). The input must carry at least one beat after the ICRC
// (the tlast beat): ib_switch_top appends a dummy VCRC beat.
module sw_smi_rq
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 32, 64 or 128
  localparam int unsigned DataB = DataW / 8
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // VL15 stream from ib_link_rx (no ready)
  input  logic [DataW-1:0]   vl15_tdata_i,
  input  logic [DataB-1:0]   vl15_tkeep_i,
  input  logic               vl15_tvalid_i,
  input  logic               vl15_tlast_i,
  input  logic               vl15_tuser_i,   // on tlast: link error, discard
  // port configuration
  input  logic [15:0]        port_lid_i,     // port-0 LID (no LMC)
  input  logic [3:0]         port_state_i,   // PortState of the ingress port
  input  logic [7:0]         port_num_i,     // ingress port P
  input  logic [7:0]         num_ports_i,    // N
  // VL15 RX buffer write port
  output logic               wr_valid_o,
  output logic [DataW-1:0]   wr_data_o,
  output logic [DataB-1:0]   wr_keep_o,
  output logic               wr_end_o,
  output logic               wr_ok_o,
  output sw_rx_meta_t        wr_meta_o,
  // event pulses (one per bad packet, highest precedence only)
  output logic               ev_port_down_o,
  output logic               ev_icrc_err_o,
  output logic               ev_bad_hdr_o,
  output logic               ev_lid_err_o,
  output logic               ev_dr_discard_o
);

  if (DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 32, 64 or 128, got %0d", DataW);
  end

  localparam int unsigned RpPos = MadOffset + MbReturnPath;  // ReturnPath[0]

  // the directed-route result (dr_recv_sw, below)
  typedef struct packed {
    logic       discard;
    logic       fwd;
    logic       fwd_lft;
    logic [7:0] hp_new;
    logic       rp_we;
    logic [5:0] rp_idx;
    dr_rule_e   rule;    // which rule decided (cover points only)
  } dr_rx_t;

  // ---------------------------------------------------------------------------
  // Header fields, ICRC, MAD realignment, header checks, verdict (shared with
  // smi_rq)
  // ---------------------------------------------------------------------------
  smi_rx_hdr_t          f_q;        // header fields taken so far
  logic [SmiRxPosW-1:0] pos_q;      // packet byte offset of the current beat
  logic                 is_dr;      // class 0x81, registered
  smi_rx_meta_t         meta_base;  // the meta a CA's would be
  dr_rx_t               dr;         // DR rules, at tlast (below)
  logic                 dr_judged;  // at tlast: the DR rules decide this SMP

  smi_rx_core #(.DataW(DataW)) u_core (
    .clk_i,
    .rst_ni,
    .vl15_tdata_i,
    .vl15_tkeep_i,
    .vl15_tvalid_i,
    .vl15_tlast_i,
    .vl15_tuser_i,
    .port_lid_i,
    .port_state_i,
    .port_num_i,
    .hdr_o          (f_q),
    .pos_o          (pos_q),
    .is_dr_o        (is_dr),
    .dlid_mine_i    (f_q.dlid == port_lid_i),  // no LMC
    .icrc_chk_i     ((f_q.lnh == LnhIbaLocal) && (&f_q.pktlen_ok)),
    .dr_discard_i   (dr.discard),
    .dr_hp_new_i    (dr.hp_new),
    .dr_rp_we_i     (dr.rp_we),
    .dr_rp_idx_i    (dr.rp_idx),
    .wr_valid_o,
    .wr_data_o,
    .wr_keep_o,
    .wr_end_o,
    .wr_ok_o,
    .wr_meta_o      (meta_base),
    .ev_port_down_o,
    .ev_icrc_err_o,
    .ev_bad_hdr_o,
    .ev_lid_err_o,
    .ev_dr_discard_o,
    .dr_judged_o    (dr_judged)
  );

  // The DR rules compare the ReturnPath[hop_cnt] byte with port_num_i at
  // tlast, and take DrSLID/DrDLID whole (the LID-routed segments' LRH
  // addresses): the compare flags are a CA's. The header checks and the meta
  // read the other fields in smi_rx_core.
  logic unused_hdr;
  assign unused_hdr = ^{f_q.rp_port, f_q.dr_slid_ff, f_q.dr_dlid_ff,
                        f_q.sl, f_q.slid, f_q.opcode_ok, f_q.tver_ok, f_q.destqp_zero,
                        f_q.base_ver_ok, f_q.mgmt_class, f_q.method, f_q.attr_sminfo};

  // ---------------------------------------------------------------------------
  // The next path entry (switch only): D=0 InitialPath[hop_ptr+1], D=1
  // ReturnPath[hop_ptr-1], at an offset from the captured hop pointer
  // (<= 474: below the offset's saturation), registered.
  // ---------------------------------------------------------------------------
  logic [7:0]           path_nx_q, path_nx_d;
  logic [SmiRxPosW-1:0] px_beat_q;  // offset of its beat,
  logic [7:0]           px_lane_q;  // and its lane

  always_comb begin
    path_nx_d = path_nx_q;
    if (vl15_tvalid_i && pos_q == px_beat_q) begin
      for (int unsigned j = 0; j < DataB; j++) begin
        if (32'(px_lane_q) == j && vl15_tkeep_i[j]) begin
          path_nx_d = vl15_tdata_i[8*j +: 8];
        end
      end
    end
  end

  logic [15:0] px_off;
  assign px_off = f_q.dir ? 16'(RpPos) + {8'h0, f_q.hop_ptr} - 16'd1
                          : 16'(MadOffset + MbInitialPath) + {8'h0, f_q.hop_ptr} + 16'd1;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      path_nx_q <= '0;
      px_beat_q <= '1;
      px_lane_q <= '0;
    end else begin
      path_nx_q <= path_nx_d;
      px_beat_q <= SmiRxPosW'(px_off & ~16'(DataB - 1));
      px_lane_q <= 8'(px_off & 16'(DataB - 1));
    end
  end

  // ---------------------------------------------------------------------------
  // Checks and directed-route receive processing (evaluated at tlast; every
  // field and the whole ICRC lie in earlier beats of a 290-byte packet)
  // ---------------------------------------------------------------------------
  // DR receive rules of a switch (smi_handle_dr_smp_recv, is_switch = 1),
  // the disposition (smi_check_forward_dr_smp / handle_ib_smi) and the
  // LID-routed segment rows of docs/fabric.md:
  //   deliver: to the SMA/SM with hop pointer hp_new (SEND: send rules run)
  //   fwd:     to the send engine, which runs the send rules of a switch and
  //            sends by the path (fwd_lft = 0, LRH 0xFFFF/0xFFFF) or by the
  //            LFT (fwd_lft = 1, LRH DLID = DrDLID (D=0) / DrSLID (D=1)).
  function automatic dr_rx_t dr_recv_sw(logic dir, logic [7:0] hp, logic [7:0] hc,
                                        logic dr_slid_perm, logic dr_dlid_perm,
                                        logic lid_routed, logic [7:0] rp_hc,
                                        logic [7:0] path_nx, logic [7:0] port,
                                        logic [7:0] n);
    dr_rx_t r;
    logic [8:0] hc1;
    r   = '{discard: 1'b0, fwd: 1'b0, fwd_lft: 1'b0, hp_new: hp, rp_we: 1'b0,
            rp_idx: hp[5:0], rule: DrRuleNone};
    hc1 = {1'b0, hc} + 9'd1;
    if (32'(hc) >= MaxPathHops) begin
      r.discard = 1'b1;                     // C14-6
      r.rule    = DrRuleC14_6;
    end else if (!dir) begin
      if (hc != 8'd0 && hp == 8'd0) begin
        r.rule    = DrRuleC14_9_1;
        // C14-9:1 discard, unless this switch starts the DR part after a
        // LID-routed head: send rule C14-9:1 (hp := 1), out IP[1]
        r.discard = !lid_routed;
        r.fwd     = lid_routed;
      end else if (hp < hc) begin
        // C14-9:2 intermediate hop: RP[hp] := P, accept iff IP[hp+1] <= N; FORWARD
        r.rule    = DrRuleC14_9_2;
        r.rp_we   = 1'b1;
        r.discard = (path_nx > n);
        r.fwd     = 1'b1;
      end else if (hp == hc) begin
        // C14-9:3 RP[hp] := P (hc != 0), accept (switch). DrDLID permissive:
        // SEND (hp := hc+1, local SMA); else LOCAL = the LID-routed tail:
        // send rule hp := hc+1, out by the LFT to DrDLID
        r.rule  = DrRuleC14_9_3;
        r.rp_we = (hc != 8'd0);
        if (dr_dlid_perm) begin
          r.hp_new = hp + 8'd1;
        end else begin
          r.fwd     = 1'b1;
          r.fwd_lft = 1'b1;
        end
      end else if ({1'b0, hp} == hc1) begin
        r.hp_new = hp;                      // C14-9:4 accept, SEND to the SMA
        r.rule   = DrRuleC14_9_4;
      end else begin
        r.discard = 1'b1;                   // C14-9:5
        r.rule    = DrRuleC14_9_5;
      end
    end else begin
      if (hc != 8'd0 && {1'b0, hp} == hc1) begin
        r.rule = DrRuleC14_13_1;
        if (lid_routed) begin
          // the return enters the DR part from the tail: send rule C14-13:1
          // (hp := hc) in the send engine, out RP[hc]
          r.fwd = 1'b1;
        end else begin
          // C14-13:1 hp := hc, accept iff RP[hc] = P; disposition with hp = hc
          r.hp_new  = hc;
          r.discard = (rp_hc != port);
          if (hc >= 8'd2) begin
            r.fwd = 1'b1;                   // FORWARD out RP[hc-1]
          end else if (!dr_slid_perm) begin
            r.fwd     = 1'b1;               // hp = 1, DrSLID real: SEND = head exit
            r.fwd_lft = 1'b1;
          end                               // else LOCAL: to the SM with hp 1
        end
      end else if (hp >= 8'd2 && hp <= hc) begin
        r.discard = (path_nx > n);          // C14-13:2 accept iff RP[hp-1] <= N
        r.fwd     = 1'b1;
        r.rule    = DrRuleC14_13_2;
      end else if (hp == 8'd1) begin
        r.rule = DrRuleC14_13_3;
        if (dr_slid_perm) begin
          r.hp_new = 8'd0;                  // C14-13:3 hp := 0, LOCAL (SM)
        end else begin
          r.fwd     = 1'b1;                 // switch accepts; SEND = head exit
          r.fwd_lft = 1'b1;
        end
      end else if (hp == 8'd0) begin
        r.hp_new = 8'd0;                    // C14-13:4 to the SM
        r.rule   = DrRuleC14_13_4;
      end else begin
        r.discard = 1'b1;                   // C14-13:5
        r.rule    = DrRuleC14_13_5;
      end
    end
    return r;
  endfunction

  always_comb begin
    dr = dr_recv_sw(f_q.dir, f_q.hop_ptr, f_q.hop_cnt,
                    f_q.dr_slid == PermissiveLid, f_q.dr_dlid == PermissiveLid,
                    f_q.dlid != PermissiveLid, f_q.rp_hc, path_nx_q,
                    port_num_i, num_ports_i);
  end

  always_comb begin
    wr_meta_o      = '0;
    wr_meta_o.base = meta_base;
    if (is_dr) begin
      wr_meta_o.fwd      = dr.fwd;
      wr_meta_o.fwd_lft  = dr.fwd_lft;
      wr_meta_o.fwd_dlid = !dr.fwd_lft ? PermissiveLid
                         : f_q.dir ? f_q.dr_slid : f_q.dr_dlid;
      wr_meta_o.fwd_slid = !dr.fwd_lft ? PermissiveLid
                         : (port_lid_i == 16'd0) ? PermissiveLid : port_lid_i;
    end
  end

  // ---------------------------------------------------------------------------
  // Cover points: every directed-route receive rule of a switch decides an SMP
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  // every cover point below samples at the clock edge, not in reset
  default clocking cov_clk @(posedge clk_i); endclocking
  default disable iff (!rst_ni);
  C14_6_sw_rx:    cover property (dr_judged && dr.rule == DrRuleC14_6);
  C14_9_1_sw_rx:  cover property (dr_judged && dr.rule == DrRuleC14_9_1);
  C14_9_2_sw_rx:  cover property (dr_judged && dr.rule == DrRuleC14_9_2);
  C14_9_3_sw_rx:  cover property (dr_judged && dr.rule == DrRuleC14_9_3);
  C14_9_4_sw_rx:  cover property (dr_judged && dr.rule == DrRuleC14_9_4);
  C14_9_5_sw_rx:  cover property (dr_judged && dr.rule == DrRuleC14_9_5);
  C14_13_1_sw_rx: cover property (dr_judged && dr.rule == DrRuleC14_13_1);
  C14_13_2_sw_rx: cover property (dr_judged && dr.rule == DrRuleC14_13_2);
  C14_13_3_sw_rx: cover property (dr_judged && dr.rule == DrRuleC14_13_3);
  C14_13_4_sw_rx: cover property (dr_judged && dr.rule == DrRuleC14_13_4);
  C14_13_5_sw_rx: cover property (dr_judged && dr.rule == DrRuleC14_13_5);
`endif

endmodule
