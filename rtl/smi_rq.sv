// smi_rq: SMI receive engine of a CA port. Takes the VL15 stream of
// ib_link_rx (packets LRH..VCRC), picks the LRH/BTH/DETH/MAD header fields out
// of the beats by packet byte offset, checks the ICRC, validates the SMP
// (header, DLID/LMC), runs the directed-route receive rules and disposition
// of a CA (ibspec §5), and writes the 256 MAD bytes, realigned to beat 0 =
// MAD bytes 0..DataB-1, into the VL15 RX ib_pkt_fifo (all but the LMC range
// and the DR rules: smi_rx_core, shared with sw_smi_rq). Every packet ends
// with wr_end_o in the cycle of its tlast beat (no added latency); wr_ok_o =
// link good and every check passed. The DR result (new hop pointer, ReturnPath
// write) travels in the meta, the RAM holds the MAD as received.
module smi_rq
  import ib_pkg::*;
#(
  parameter int unsigned DataW = 64,  // stream width in bits: 8, 32, 64 or 128
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
  input  logic [15:0]        port_lid_i,
  input  logic [2:0]         port_lmc_i,
  input  logic [3:0]         port_state_i,
  input  logic [7:0]         port_num_i,
  // VL15 RX buffer write port
  output logic               wr_valid_o,
  output logic [DataW-1:0]   wr_data_o,
  output logic [DataB-1:0]   wr_keep_o,
  output logic               wr_end_o,
  output logic               wr_ok_o,
  output smi_rx_meta_t       wr_meta_o,
  // event pulses (one per bad packet, highest precedence only)
  output logic               ev_port_down_o,
  output logic               ev_icrc_err_o,
  output logic               ev_bad_hdr_o,
  output logic               ev_lid_err_o,
  output logic               ev_dr_discard_o
);

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end

  // ---------------------------------------------------------------------------
  // Header fields, ICRC, MAD realignment, header checks, verdict (shared with
  // sw_smi_rq)
  // ---------------------------------------------------------------------------
  smi_rx_hdr_t          f_q;         // header fields taken so far
  logic [SmiRxPosW-1:0] pos_unused;
  logic                 is_dr;       // class 0x81, registered
  logic                 dlid_mine;   // the DLID is one of the port's LIDs
  logic                 err_dr_cur;  // at tlast: DR rules say discard
  logic                 dr_judged;   // at tlast: the DR rules decide this SMP

  // registered checks (below)
  typedef struct packed {
    logic       discard;
    logic [7:0] hp_new;
    logic       rp_we;
    logic [5:0] rp_idx;
    dr_rule_e   rule;    // which rule decided (cover points only)
  } dr_rx_t;

  typedef struct packed {
    logic   icrc_hdr_ok;        // LNH and PktLen of an SMP: the ICRC is checked
    logic   dr_discard_rp_ok;   // DR discard if ReturnPath[hop_cnt] == port
    logic   dr_discard_rp_bad;  // ... if it is not
    dr_rx_t dr;                 // hop pointer / ReturnPath write (not rp-dependent)
  } chk_t;

  chk_t chk_d, chk_q;

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
    .pos_o          (pos_unused),
    .is_dr_o        (is_dr),
    .dlid_mine_i    (dlid_mine),
    .icrc_chk_i     (chk_q.icrc_hdr_ok),
    .dr_discard_i   (err_dr_cur),
    .dr_hp_new_i    (chk_q.dr.hp_new),
    .dr_rp_we_i     (chk_q.dr.rp_we),
    .dr_rp_idx_i    (chk_q.dr.rp_idx),
    .wr_valid_o,
    .wr_data_o,
    .wr_keep_o,
    .wr_end_o,
    .wr_ok_o,
    .wr_meta_o,
    .ev_port_down_o,
    .ev_icrc_err_o,
    .ev_bad_hdr_o,
    .ev_lid_err_o,
    .ev_dr_discard_o,
    .dr_judged_o    (dr_judged)
  );

  // A CA keeps DrSLID/DrDLID as compare flags and ReturnPath[hop_cnt] as a
  // compare flag with its port number; synthesis drops the captured bytes
  // (and the offset, which only sw_smi_rq reads). The header checks and the
  // meta read the other fields in smi_rx_core.
  logic unused_hdr;
  assign unused_hdr = ^{f_q.dr_slid, f_q.dr_dlid, f_q.rp_hc, pos_unused, is_dr,
                        f_q.sl, f_q.slid, f_q.opcode_ok, f_q.tver_ok, f_q.destqp_zero,
                        f_q.base_ver_ok, f_q.mgmt_class, f_q.method, f_q.attr_sminfo};

  // DLID within the port's LIDs (LMC)
  always_comb begin
    logic [16:0] lid_hi;        // last LID of the port (17 bits: no wrap)
    lid_hi    = {1'b0, port_lid_i} + ((17'd1 << port_lmc_i) - 17'd1);
    dlid_mine = (f_q.dlid >= port_lid_i) && ({1'b0, f_q.dlid} <= lid_hi);
  end

  // ---------------------------------------------------------------------------
  // Directed-route receive processing (evaluated at tlast)
  // ---------------------------------------------------------------------------
  // DR receive rules of a CA (is_switch = 0, N = 1), then the disposition
  // (smi_check_forward_dr_smp / handle_ib_smi): SEND runs the send rules and
  // smi_check_local_smp, LOCAL hands the SMP up as is, FORWARD is a discard.
  function automatic dr_rx_t dr_recv_ca(logic dir, logic [7:0] hp, logic [7:0] hc,
                                        logic dr_slid_perm, logic dr_dlid_perm,
                                        logic rp_is_port);
    dr_rx_t r;
    logic [8:0] hc1;
    r   = '{discard: 1'b0, hp_new: hp, rp_we: 1'b0, rp_idx: hp[5:0], rule: DrRuleNone};
    hc1 = {1'b0, hc} + 9'd1;
    if (32'(hc) >= MaxPathHops) begin
      r.discard = 1'b1;                     // C14-6
      r.rule    = DrRuleC14_6;
    end else if (!dir) begin
      if (hc != 8'd0 && hp == 8'd0) begin
        r.discard = 1'b1;                   // C14-9:1 sender should have incremented
        r.rule    = DrRuleC14_9_1;
      end else if (hp != 8'd0 && hp < hc) begin
        r.discard = 1'b1;                   // C14-9:2 intermediate hop: switch only
        r.rule    = DrRuleC14_9_2;
      end else if (hp == hc) begin
        // C14-9:3 end of the DR segment: RP[hp] := P; accept iff DrDLID
        // permissive; disposition SEND (DrDLID permissive): send rules hp++,
        // then hp = hc+1 -> local SMA.
        r.rule = DrRuleC14_9_3;
        if (!dr_dlid_perm) begin
          r.discard = 1'b1;
        end else begin
          r.rp_we  = (hc != 8'd0);
          r.hp_new = hp + 8'd1;
        end
      end else if ({1'b0, hp} == hc1) begin
        // C14-9:4 accept; disposition SEND, send rules keep hp, local SMA.
        r.hp_new = hp;
        r.rule   = DrRuleC14_9_4;
      end else begin
        r.discard = 1'b1;                   // C14-9:5
        r.rule    = DrRuleC14_9_5;
      end
    end else begin
      if (hc != 8'd0 && {1'b0, hp} == hc1) begin
        // C14-13:1 hp-- (= hc), accept iff RP[hc] = P. Disposition with hp = hc:
        // hc >= 2 -> FORWARD (discard on a CA); hc = 1 -> DrSLID != 0xFFFF ?
        // SEND (send rules hp 1 -> 0 need DrSLID permissive: discard) : LOCAL.
        r.hp_new = hc;
        r.rule   = DrRuleC14_13_1;
        if (!rp_is_port || hc >= 8'd2 || !dr_slid_perm) begin
          r.discard = 1'b1;
        end
      end else if (hp >= 8'd2 && hp <= hc) begin
        r.discard = 1'b1;                   // C14-13:2 switch only
        r.rule    = DrRuleC14_13_2;
      end else if (hp == 8'd1) begin
        // C14-13:3 DrSLID permissive: hp-- and to the SM (disposition LOCAL)
        r.rule = DrRuleC14_13_3;
        if (dr_slid_perm) begin
          r.hp_new = 8'd0;
        end else begin
          r.discard = 1'b1;
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

  // Every field but the ICRC and ReturnPath[hop_cnt] lies at least two beats
  // before tlast (packet byte <= 63; the last two beats start at byte 272 or
  // later at every DataW), so the rules on them are computed from f_q a
  // cycle ahead and registered (as smi_rx_core's header checks): the tlast
  // cycle only combines a few bits. ReturnPath[hop_cnt] only decides the DR
  // discard of C14-13:1: both outcomes are registered and the tlast cycle
  // picks one.
  always_comb begin
    dr_rx_t      dr_ok;
    // Only the verdict of the mismatching case is needed; its other fields
    // equal dr_ok's.
    /* verilator lint_off UNUSEDSIGNAL */
    dr_rx_t      dr_bad;
    /* verilator lint_on UNUSEDSIGNAL */
    // DataW 8: ReturnPath[hop_cnt] (packet byte <= 283 for any hop count the
    // rules do not discard outright, C14-6) is taken 6 beats before tlast, so
    // both cases read the captured flag and are one and the same logic.
    dr_ok  = dr_recv_ca(f_q.dir, f_q.hop_ptr, f_q.hop_cnt, &f_q.dr_slid_ff, &f_q.dr_dlid_ff,
                        (DataB == 1) ? f_q.rp_port : 1'b1);
    dr_bad = dr_recv_ca(f_q.dir, f_q.hop_ptr, f_q.hop_cnt, &f_q.dr_slid_ff, &f_q.dr_dlid_ff,
                        (DataB == 1) ? f_q.rp_port : 1'b0);
    chk_d.dr                = dr_ok;
    chk_d.dr_discard_rp_ok  = dr_ok.discard;
    chk_d.dr_discard_rp_bad = dr_bad.discard;
    chk_d.icrc_hdr_ok       = (f_q.lnh == LnhIbaLocal) && (&f_q.pktlen_ok);
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      chk_q <= '0;
    end else begin
      chk_q <= chk_d;
    end
  end

  assign err_dr_cur = f_q.rp_port ? chk_q.dr_discard_rp_ok : chk_q.dr_discard_rp_bad;

  // ---------------------------------------------------------------------------
  // Cover points: every directed-route receive rule of a CA decides an SMP
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  // every cover point below samples at the clock edge, not in reset
  default clocking cov_clk @(posedge clk_i); endclocking
  default disable iff (!rst_ni);
  dr_rule_e dr_rule;
  assign dr_rule = chk_q.dr.rule;
  C14_6_rx:    cover property (dr_judged && dr_rule == DrRuleC14_6);
  C14_9_1_rx:  cover property (dr_judged && dr_rule == DrRuleC14_9_1);
  C14_9_2_rx:  cover property (dr_judged && dr_rule == DrRuleC14_9_2);
  C14_9_3_rx:  cover property (dr_judged && dr_rule == DrRuleC14_9_3);
  C14_9_4_rx:  cover property (dr_judged && dr_rule == DrRuleC14_9_4);
  C14_9_5_rx:  cover property (dr_judged && dr_rule == DrRuleC14_9_5);
  C14_13_1_rx: cover property (dr_judged && dr_rule == DrRuleC14_13_1);
  C14_13_2_rx: cover property (dr_judged && dr_rule == DrRuleC14_13_2);
  C14_13_3_rx: cover property (dr_judged && dr_rule == DrRuleC14_13_3);
  C14_13_4_rx: cover property (dr_judged && dr_rule == DrRuleC14_13_4);
  C14_13_5_rx: cover property (dr_judged && dr_rule == DrRuleC14_13_5);
`endif

endmodule
