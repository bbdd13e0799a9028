// sw_smi_sq: SMI send engine of a switch's port 0 (ib_switch_top). The
// datapath of smi_sq (round-robin between sources at packet boundaries,
// LRH/BTH/DETH built and prepended, hop pointer rewritten on the fly, ICRC
// appended, 288-byte packet into a buffer, here the port-0 input buffer of
// the crossbar: smi_tx_ctrl with smi_tx_emit; MAD fields: smi_tx_fields)
// with a fourth source, the DR SMPs the receive engine
// forwards (fwd_*: the MAD with the receive rules applied, and the LRH
// addressing), and the send side of a switch (ibspec §5, is_switch = 1;
// docs/fabric.md):
//  - class 0x01: out by the LFT of the LRH DLID.
//  - class 0x81 from the SMA/SM/trap: the originator rule
//    (handle_outgoing_dr_smp): (D ? DrDLID : DrSLID) != 0xFFFF -> no send
//    rules, sent as is, out by the LFT of the LRH DLID. Otherwise the send
//    rules of a switch run; an SMP that is then local (D=0: hc = 0 or
//    hp = hc+1; D=1: hp = 0) is not sent (ev_local_o).
//    DrDLID/DrSLID lie after the hop pointer in the MAD, so whether the hop
//    pointer is rewritten is decided from the LRH DLID (0xFFFF: DR part,
//    send rules; else LID-routed, as is); an SMP whose DrDLID/DrSLID then
//    disagrees with its LRH DLID is discarded (ev_dr_discard_o).
//  - forwarded SMPs: the send rules' hop pointer step, out by the path or by
//    the LFT as the receive engine decided.
//  Out by the path: D=0 -> IP[hp], D=1 -> RP[hp] (hp after the send rules);
//  egress 0, > N or Down -> discarded (ev_dr_discard_o). Hop count >= 64 ->
//  discarded. The route (egress or LFT + DLID) goes out as the buffer meta.
// Addressing as smi_sq, but port 0 has no LMC (no path bits), and an SM
// request to DLID 0xFFFF (its DR part starts here) gets SLID 0xFFFF.
module sw_smi_sq
  import ib_pkg::*;
#(
  parameter int unsigned DataW    = 64,  // stream width in bits: 32, 64 or 128
  parameter int unsigned NumPorts = 8,   // external ports 1..NumPorts
  localparam int unsigned DataB   = DataW / 8
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // port configuration
  input  logic [15:0]        port_lid_i,     // port-0 LID (no LMC)
  input  logic [7:0]         num_ports_i,    // N
  input  logic [3:0]         port_state_i [NumPorts+1],
  input  logic [15:0]        master_sm_lid_i,
  input  logic [3:0]         master_sm_sl_i,
  // SMA responses; meta = the request's RX meta
  input  logic [DataW-1:0]   sma_tx_tdata_i,
  input  logic               sma_tx_tvalid_i,
  input  logic               sma_tx_tlast_i,
  output logic               sma_tx_tready_o,
  input  logic [15:0]        sma_tx_slid_i,
  input  logic [15:0]        sma_tx_dlid_i,
  input  logic [3:0]         sma_tx_sl_i,
  // SM requests; meta = address handle
  input  logic [DataW-1:0]   sm_tx_tdata_i,
  input  logic               sm_tx_tvalid_i,
  input  logic               sm_tx_tlast_i,
  output logic               sm_tx_tready_o,
  input  logic [15:0]        sm_tx_dlid_i,
  input  logic [3:0]         sm_tx_sl_i,
  // traps (to the master SM)
  input  logic [DataW-1:0]   trap_tx_tdata_i,
  input  logic               trap_tx_tvalid_i,
  input  logic               trap_tx_tlast_i,
  output logic               trap_tx_tready_o,
  // forwarded DR SMPs (from the receive engine)
  input  logic [DataW-1:0]   fwd_tdata_i,
  input  logic               fwd_tvalid_i,
  input  logic               fwd_tlast_i,
  output logic               fwd_tready_o,
  input  logic [15:0]        fwd_dlid_i,
  input  logic [15:0]        fwd_slid_i,
  input  logic [3:0]         fwd_sl_i,
  input  logic               fwd_lft_i,
  // VL15 TX buffer write port
  output logic               wr_valid_o,
  output logic [DataW-1:0]   wr_data_o,
  output logic [DataB-1:0]   wr_keep_o,
  output logic               wr_end_o,
  output logic               wr_ok_o,
  output sw_route_meta_t     wr_meta_o,
  input  logic               wr_slot_free_i,
  // event pulses (with wr_end_o)
  output logic               ev_pkt_o,         // packet committed
  output logic               ev_dr_discard_o,  // DR send rules said discard
  output logic               ev_local_o        // DR SMP for the local node, not sent
);

  if (DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 32, 64 or 128, got %0d", DataW);
  end

  // Packet beat k holds packet bytes k*DataB..; MAD byte i is packet byte
  // MadOffset+i, in packet beat HdrBeats + i / DataB (the beat layout:
  // smi_tx_emit).
  localparam int unsigned HdrBeats = MadOffset / DataB;
  localparam int unsigned PktBeats = SmpPktBytes / DataB;
  localparam int unsigned KW       = $clog2(PktBeats);
  localparam int unsigned PbHopPtr = MadOffset + MbHopPtr;

  typedef enum logic [1:0] {
    SrcSma  = 2'd0,
    SrcSm   = 2'd1,
    SrcTrap = 2'd2,
    SrcFwd  = 2'd3
  } src_e;

  logic [KW-1:0]    k;           // packet beat index
  logic [DataW-1:0] src_data;    // the selected source's beat
  logic             take;        // ... is taken
  logic             start;       // a packet starts, from source grant
  logic [1:0]       grant;
  logic [15:0]      dlid_q;      // the packet's LRH DLID (the LFT route)
  // MAD fields the DR send rules need, with the current beat and before it
  // (smi_tx_fields); the path byte is the egress entry at the new hop pointer
  smi_tx_mad_t      f_cur, f_q;

  // ---------------------------------------------------------------------------
  // Header addressing of the granted source (used in the start cycle)
  // ---------------------------------------------------------------------------
  logic [15:0] dlid_new;
  logic [15:0] slid_new;
  logic [3:0]  sl_new;
  always_comb begin
    unique case (src_e'(grant))
      SrcSma: begin
        dlid_new = sma_tx_slid_i;
        slid_new = sma_tx_dlid_i;
        sl_new   = sma_tx_sl_i;
      end
      SrcSm: begin
        dlid_new = sm_tx_dlid_i;
        // an SMP whose DR part starts here (DLID 0xFFFF) has SLID 0xFFFF
        slid_new = (port_lid_i == 16'd0 || sm_tx_dlid_i == PermissiveLid) ? PermissiveLid
                                                                            : port_lid_i;
        sl_new   = sm_tx_sl_i;
      end
      SrcFwd: begin
        dlid_new = fwd_dlid_i;
        slid_new = fwd_slid_i;
        sl_new   = fwd_sl_i;
      end
      default: begin
        dlid_new = master_sm_lid_i;
        slid_new = (port_lid_i == 16'd0) ? PermissiveLid : port_lid_i;
        sl_new   = master_sm_sl_i;
      end
    endcase
  end

  logic        lft_q;        // forwarded SMP: by the LFT
  logic        asis_pred_q;  // SMA/SM/trap SMP with a real LRH DLID: sent as is
  logic        fwd_q;        // the packet is a forwarded SMP

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      lft_q       <= 1'b0;
      asis_pred_q <= 1'b0;
      fwd_q       <= 1'b0;
    end else if (start) begin
      lft_q       <= fwd_lft_i && src_e'(grant) == SrcFwd;
      // SM request: its DLID; SMA response: the request's DLID (the
      // response's SLID field); see smi_sq.
      asis_pred_q <= (src_e'(grant) == SrcSma) ? (slid_new != PermissiveLid)
                   : (src_e'(grant) != SrcFwd) && (dlid_new != PermissiveLid);
      fwd_q       <= (src_e'(grant) == SrcFwd);
    end
  end

  // ---------------------------------------------------------------------------
  // MAD fields (shared with smi_sq)
  // ---------------------------------------------------------------------------
  // New hop pointer by the send rules of a switch, for every SMP they accept
  // (D=0: hp <= hc -> hp + 1; D=1: 1 <= hp <= hc + 1 -> hp - 1); the byte of
  // an SMP they discard or keep local never leaves the switch.
  function automatic logic [7:0] hp_new_sw(logic dir, logic [7:0] hp, logic [7:0] hc);
    if (!dir) begin
      return (hp <= hc) ? hp + 8'd1 : hp;
    end
    return (hp != 8'd0 && {1'b0, hp} <= {1'b0, hc} + 9'd1) ? hp - 8'd1 : hp;
  endfunction

  // The egress path entry: D=0 InitialPath[hp_new], D=1 ReturnPath[hp_new]
  // (MAD byte >= 128, long after bytes 4..7).
  logic [7:0] hp_new_q;
  logic [8:0] eg_moff;
  assign hp_new_q = hp_new_sw(f_q.dir, f_q.hop_ptr, f_q.hop_cnt);
  assign eg_moff  = 9'(MbInitialPath) + (f_q.dir ? 9'd64 : 9'd0) + {1'b0, hp_new_q};

  smi_tx_fields #(.DataW(DataW)) u_fields (
    .clk_i,
    .rst_ni,
    .k_i         (k),
    .src_data_i  (src_data),
    .take_i      (take),
    .clr_i       (start),
    .path_moff_i (eg_moff),
    .cmp_i       (8'd0),
    .mad_o       (f_cur),
    .mad_q_o     (f_q)
  );

  // As in smi_sq: the rewrite runs from f_q when D, hop pointer and hop count
  // arrived before the hop pointer's packet beat (DataW 64, 128), else from
  // the current beat (DataW 32).
  logic [7:0] hp_new_cur;
  if (HdrBeats + MbHopCnt / DataB < PbHopPtr / DataB) begin : gen_dr_from_q
    assign hp_new_cur = hp_new_q;
  end else begin : gen_dr_from_cur
    assign hp_new_cur = hp_new_sw(f_cur.dir, f_cur.hop_ptr, f_cur.hop_cnt);
  end

  logic hp_dr;  // the hop pointer is rewritten: class 0x81, not as is
  assign hp_dr = (f_cur.mgmt_class == ClassSubnDr) && !asis_pred_q;

  // Verdict and route at the tail (every field is in f_q by then).
  typedef struct packed {
    logic           discard;
    logic           local_smp;
    sw_route_meta_t route;
  } fin_t;
  fin_t fin;

  always_comb begin
    logic [7:0] hp;
    logic [7:0] hc;
    logic [8:0] hc1;
    logic       perm_own;   // (D ? DrDLID : DrSLID) = 0xFFFF: send rules apply
    logic       path_ok;
    logic       by_path;
    logic [3:0] eg_state;
    hp       = f_q.hop_ptr;
    hc       = f_q.hop_cnt;
    hc1      = {1'b0, hc} + 9'd1;
    perm_own = f_q.dir ? (f_q.dr_dlid == PermissiveLid) : (f_q.dr_slid == PermissiveLid);
    eg_state = PortStateDown;
    for (int unsigned e = 1; e <= NumPorts; e++) begin
      if (32'(f_q.path) == e) eg_state = port_state_i[e];
    end
    path_ok  = (f_q.path != 8'd0) && (f_q.path <= num_ports_i) &&
               (eg_state != PortStateDown);
    by_path  = 1'b0;
    fin      = '0;
    fin.route.lft  = 1'b1;
    fin.route.dlid = dlid_q;
    if (f_q.mgmt_class == ClassSubnDr) begin
      if (32'(hc) >= MaxPathHops) begin
        fin.discard = 1'b1;                              // C14-6
      end else if (fwd_q) begin
        by_path = !lft_q;
      end else if (perm_own == asis_pred_q) begin
        fin.discard = 1'b1;                              // DrDLID/DrSLID vs LRH DLID
      end else if (perm_own) begin
        if (!f_q.dir) begin
          if (hc == 8'd0 || hp == hc || {1'b0, hp} == hc1) begin
            fin.local_smp = 1'b1;                        // hc = 0, or hp = hc+1 after the rules
          end else if (hp < hc) begin
            by_path = 1'b1;                              // C14-9:1, C14-9:2 (switch)
          end else begin
            fin.discard = 1'b1;                          // C14-9:5
          end
        end else begin
          if (hp <= 8'd1) begin
            fin.local_smp = 1'b1;                        // hp = 0 after the rules
          end else if ({1'b0, hp} <= hc1) begin
            by_path = 1'b1;                              // C14-13:1, C14-13:2 (switch)
          end else begin
            fin.discard = 1'b1;                          // C14-13:5
          end
        end
      end
      if (by_path) begin
        fin.route.lft    = 1'b0;
        fin.route.egress = f_q.path;
        fin.discard      = !path_ok;
      end
    end
  end

  assign wr_meta_o = fin.route;

  // A switch takes DrSLID/DrDLID and the path byte whole: the compare flags
  // are a CA's; the hop fields with the current beat are read at DataW 32.
  logic unused_mad;
  assign unused_mad = ^{f_cur.dir, f_cur.hop_ptr, f_cur.hop_cnt, f_cur.dr_slid,
                        f_cur.dr_dlid, f_cur.dr_slid_ff, f_cur.dr_dlid_ff, f_cur.ip1_port,
                        f_cur.path, f_cur.path_port, f_q.dr_slid_ff, f_q.dr_dlid_ff,
                        f_q.ip1_port, f_q.path_port};

  // ---------------------------------------------------------------------------
  // Arbitration, send FSM and beats (shared with smi_sq)
  // ---------------------------------------------------------------------------
  smi_tx_state_e state_unused;

  smi_tx_ctrl #(.DataW(DataW), .NumSrc(4)) u_ctrl (
    .clk_i,
    .rst_ni,
    .src_tdata_i     ({fwd_tdata_i, trap_tx_tdata_i, sm_tx_tdata_i, sma_tx_tdata_i}),
    .src_tvalid_i    ({fwd_tvalid_i, trap_tx_tvalid_i, sm_tx_tvalid_i, sma_tx_tvalid_i}),
    .src_tlast_i     ({fwd_tlast_i, trap_tx_tlast_i, sm_tx_tlast_i, sma_tx_tlast_i}),
    .src_tready_o    ({fwd_tready_o, trap_tx_tready_o, sm_tx_tready_o, sma_tx_tready_o}),
    .start_o         (start),
    .grant_o         (grant),
    .dlid_new_i      (dlid_new),
    .slid_new_i      (slid_new),
    .sl_new_i        (sl_new),
    .state_o         (state_unused),
    .k_o             (k),
    .dlid_o          (dlid_q),
    .src_data_o      (src_data),
    .take_o          (take),
    .hp_dr_i         (hp_dr),
    .hp_new_i        (hp_new_cur),
    .tail_ok_i       (!fin.discard && !fin.local_smp),
    .tail_discard_i  (fin.discard),
    .tail_local_i    (!fin.discard && fin.local_smp),
    .wr_valid_o,
    .wr_data_o,
    .wr_keep_o,
    .wr_end_o,
    .wr_ok_o,
    .wr_slot_free_i,
    .ev_pkt_o,
    .ev_dr_discard_o,
    .ev_local_o
  );

  logic unused_state;
  assign unused_state = ^state_unused;

endmodule
