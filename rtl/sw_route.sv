// sw_route: routing decision for the packet at the head of one input buffer
// (docs/fabric.md "Forwarding"). From the head packet's meta it picks the
// egress port: VL15 with DLID 0xFFFF -> port 0 (the SMI); DLID = port-0 LID
// -> port 0 (VL15: the SMI; data VLs: the GMP receive path); a unicast DLID
// -> the LFT (looked up through sw_lft's shared port); port 0's own packets
// carry their egress or ask for an LFT lookup. No route (DLID 0, multicast,
// LFT 0xFF or > NumPorts, LFT 0 for a data packet from an external port,
// DLID > LinearFDBTop or >= LftDepth), egress = input port, and the
// PortState gating (VL15: egress not Down; data: input and egress Active)
// drop the packet: it is drained from the buffer and one event is pulsed.
// Otherwise the packet is requested from the egress port's arbiter
// (req_o/dest_o) until its last beat has been taken.
module sw_route
  import ib_pkg::*;
#(
  parameter int unsigned MaxPorts = 8,     // size of port_state_i: ports 0..MaxPorts
  parameter int unsigned LftDepth = 4096,  // LFT entries
  parameter bit          Port0    = 1'b0,  // input of port 0 (the SMI send queue / GMP send)
  parameter bit          IsVl15   = 1'b1   // buffer of VL15 (1) or data VLs (0)
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  // head of the input buffer
  input  logic                 head_valid_i,   // rd_tvalid_o of the buffer
  input  logic                 head_last_i,    // rd_tlast_o
  input  sw_route_meta_t       head_meta_i,    // external ports: lft = 1, dlid
  output logic                 drain_o,        // take beats: packet dropped
  input  logic                 take_i,         // a beat of this buffer is taken
  // configuration
  input  logic [7:0]           in_port_i,      // this input's port number (0 with Port0)
  input  logic [7:0]           num_ports_i,    // the switch's external ports (<= MaxPorts)
  input  logic [15:0]          port0_lid_i,
  input  logic [15:0]          linear_top_i,
  input  logic [3:0]           port_state_i [MaxPorts+1],
  // LFT lookup
  output logic                 lft_req_o,
  output logic [15:0]          lft_lid_o,
  input  logic                 lft_gnt_i,
  input  logic                 lft_rsp_i,
  input  logic [7:0]           lft_entry_i,
  // request to the output arbiters
  output logic                 req_o,
  output logic [7:0]           dest_o,
  // events (one per dropped packet) and the packet leaving towards an output
  output logic                 ev_no_route_o,
  output logic                 ev_loop_o,
  output logic                 ev_state_o,
  output logic                 ev_fwd_o
);

  localparam int unsigned PW = $clog2(MaxPorts + 1);  // indexes 0..MaxPorts

  typedef enum logic [2:0] {
    StIdle,
    StLookup,   // waiting for the LFT grant
    StRsp,      // waiting for the LFT entry
    StCheck,    // egress known: PortState gating
    StReq,      // requesting the egress port, until the last beat is taken
    StDrain     // dropping the packet
  } state_e;

  state_e     state_q, state_d;
  logic [7:0] dest_q, dest_d;
  logic       no_route, loop, state_bad;
  logic [7:0] cand;        // egress candidate in StIdle / StRsp
  logic       cand_vld;

  logic [15:0] dlid;
  logic        unicast;
  assign dlid    = head_meta_i.dlid;
  assign unicast = (dlid != 16'd0) && (dlid < MulticastBase);

  // PortState gating of a known egress
  function automatic logic state_ok(logic [7:0] eg, logic [7:0] in, logic [7:0] n,
                                    logic [3:0] ps [MaxPorts+1]);
    logic [3:0] es;
    es = (eg <= n) ? ps[PW'(eg)] : PortStateDown;
    if (IsVl15) begin
      return es != PortStateDown;
    end
    return es == PortStateActive && in <= n && ps[PW'(in)] == PortStateActive;
  endfunction

  always_comb begin
    state_d       = state_q;
    dest_d        = dest_q;
    lft_req_o     = 1'b0;
    drain_o       = 1'b0;
    req_o         = 1'b0;
    ev_no_route_o = 1'b0;
    ev_loop_o     = 1'b0;
    ev_state_o    = 1'b0;
    ev_fwd_o      = 1'b0;
    no_route      = 1'b0;
    loop          = 1'b0;
    state_bad     = 1'b0;
    cand          = '0;
    cand_vld      = 1'b0;

    unique case (state_q)
      StIdle: begin
        if (head_valid_i) begin
          if (Port0 && !head_meta_i.lft) begin
            cand = head_meta_i.egress;  cand_vld = 1'b1;
          end else if (!Port0 && IsVl15 && dlid == PermissiveLid) begin
            cand = 8'd0;  cand_vld = 1'b1;
          end else if (!Port0 && dlid == port0_lid_i && port0_lid_i != 16'd0) begin
            // port 0: the SMI (VL15) or the GMP receive path (data VLs)
            cand = 8'd0;  cand_vld = 1'b1;
          end else if (!unicast || 32'(dlid) >= LftDepth || dlid > linear_top_i) begin
            no_route = 1'b1;
          end else begin
            state_d = StLookup;
          end
        end
      end
      StLookup: begin
        lft_req_o = 1'b1;
        if (lft_gnt_i) state_d = StRsp;
      end
      StRsp: begin
        if (lft_rsp_i) begin
          // A data packet from an external port reaches port 0 only by the
          // port-0 LID (above); from port 0 itself, LFT 0 is a loop.
          if (lft_entry_i == 8'hFF || lft_entry_i > num_ports_i ||
              (!IsVl15 && !Port0 && lft_entry_i == 8'd0)) begin
            no_route = 1'b1;
          end else if (lft_entry_i == in_port_i) begin
            loop = 1'b1;
          end else begin
            cand = lft_entry_i;  cand_vld = 1'b1;
          end
        end
      end
      StCheck: begin
        if (state_ok(dest_q, in_port_i, num_ports_i, port_state_i)) begin
          state_d  = StReq;
          ev_fwd_o = 1'b1;
        end else begin
          state_bad = 1'b1;
        end
      end
      StReq: begin
        req_o = 1'b1;
        if (take_i && head_last_i) state_d = StIdle;
      end
      StDrain: begin
        drain_o = 1'b1;
        if (take_i && head_last_i) state_d = StIdle;
      end
      default: state_d = StIdle;
    endcase

    if (cand_vld) begin
      if (cand == in_port_i) begin
        loop = 1'b1;
      end else begin
        dest_d  = cand;
        state_d = StCheck;
      end
    end
    if (no_route || loop || state_bad) begin
      state_d       = StDrain;
      ev_no_route_o = no_route;
      ev_loop_o     = loop;
      ev_state_o    = state_bad;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      dest_q  <= '0;
    end else begin
      state_q <= state_d;
      dest_q  <= dest_d;
    end
  end

  assign lft_lid_o = dlid;
  assign dest_o    = dest_q;

`ifndef SYNTHESIS
  // the FSM's states and arcs (docs/coverage.md: FSM coverage)
  default clocking cov_clk @(posedge clk_i); endclocking
  default disable iff (!rst_ni);
  FSM_S_StIdle:          cover property (state_q == StIdle);
  FSM_S_StLookup:        cover property (state_q == StLookup);
  FSM_S_StRsp:           cover property (state_q == StRsp);
  FSM_S_StCheck:         cover property (state_q == StCheck);
  FSM_S_StReq:           cover property (state_q == StReq);
  FSM_S_StDrain:         cover property (state_q == StDrain);
  FSM_A_StIdle_StLookup: cover property (state_q == StIdle   && state_d == StLookup);
  FSM_A_StIdle_StCheck:  cover property (state_q == StIdle   && state_d == StCheck);
  FSM_A_StIdle_StDrain:  cover property (state_q == StIdle   && state_d == StDrain);
  FSM_A_StLookup_StRsp:  cover property (state_q == StLookup && state_d == StRsp);
  FSM_A_StRsp_StCheck:   cover property (state_q == StRsp    && state_d == StCheck);
  FSM_A_StRsp_StDrain:   cover property (state_q == StRsp    && state_d == StDrain);
  FSM_A_StCheck_StReq:   cover property (state_q == StCheck  && state_d == StReq);
  FSM_A_StCheck_StDrain: cover property (state_q == StCheck  && state_d == StDrain);
  FSM_A_StReq_StIdle:    cover property (state_q == StReq    && state_d == StIdle);
  FSM_A_StDrain_StIdle:  cover property (state_q == StDrain  && state_d == StIdle);

  // every change of state is one of the arcs above
  always_ff @(posedge clk_i) begin
    if (rst_ni && state_d != state_q) begin
      assert ((state_q == StIdle   && state_d inside {StLookup, StCheck, StDrain}) ||
              (state_q == StLookup && state_d == StRsp) ||
              (state_q == StRsp    && state_d inside {StCheck, StDrain}) ||
              (state_q == StCheck  && state_d inside {StReq, StDrain}) ||
              (state_q inside {StReq, StDrain} && state_d == StIdle))
        else $error("%m: route FSM arc %0d -> %0d is not in the arc list", state_q, state_d);
    end
  end
`endif

endmodule
