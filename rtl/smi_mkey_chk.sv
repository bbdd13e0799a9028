// smi_mkey_chk: the M_Key check of one port (IBA 14.2.4; Linux qib
// check_mkey / qib_bad_mkey) on the SMA-bound MAD stream, and the port's
// M_Key state: M_Key, M_KeyProtectBits, M_KeyLeasePeriod, the lease timer
// and M_KeyViolations.
//
// The stream (the dispatcher's SMA RX output) is only observed, never
// changed or stalled. MAD byte 3 (method) and bytes 24..31 (M_Key, first byte
// most significant) are captured into registers as their beats are taken
// (at every width they lie in beats before the tlast beat); the verdict is
// decided from those registers alone (never from the beat on the stream, so
// the RX buffer's RAM output reaches only the capture registers) and is
// valid with the tlast beat (as drx_tuser_o flags a discard):
//   checked  = method is Get (0x01), Set (0x02) or TrapRepress (0x07)
//   key_ok   = port M_Key = 0 or SMP M_Key = port M_Key
//   viol_o   = checked, not key_ok, and (method is not Get or protect >= 2):
//              the host must not answer; it sends Trap 256 (security) from
//              the MAD it was given
//   mask_o   = method is Get, SMP M_Key != port M_Key and protect = 1: a
//              Get(PortInfo) returns the M_Key field as 0
// At the tlast handshake: a violation counts M_KeyViolations (16 bits,
// saturating at 0xFFFF), pulses ev_viol_o and starts the lease timer if it
// is not running and the lease period is not 0; a checked SMP with a valid
// key stops a running timer. The timer counts `tick` cycles per second and
// expires after `lease period` seconds: protect := 0 (a period of 0 never
// expires). Requests of other methods pass unchecked (the SMA answers them
// with a bad-method status).
//
// Registers (idx = address - the top's base; combinational read):
//   0 MkeyLo    [31:0]  M_Key[31:0]; a write is staged until the MkeyHi write
//   1 MkeyHi    [31:0]  M_Key[63:32]; a write commits {wdata, staged low word}
//   2 MkeyProt  [1:0]   M_KeyProtectBits (the lease expiry clears it)
//   3 MkeyLease [15:0]  M_KeyLeasePeriod in seconds
//   4 MkeyTick  [31:0]  clock cycles per lease second (0 counts as 1);
//                       reset TickReset
//   5 MkeyViols [15:0]  M_KeyViolations; a write stores the value
//   6 MkeyLeaseSt RO    [16] timer running, [15:0] whole seconds elapsed
//   7 reserved, reads 0
// A register write wins over the timer and the check in the same cycle.
module smi_mkey_chk
  import ib_pkg::*;
#(
  parameter int unsigned DataW     = 64,             // stream width in bits: 8, 32, 64 or 128
  parameter logic [31:0] TickReset = 32'd125000000,  // cycles per second after reset (125 MHz)
  localparam int unsigned DataB    = DataW / 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // register interface (the top decodes its base address)
  input  logic             reg_we_i,
  input  logic [2:0]       reg_idx_i,
  input  logic [31:0]      reg_wdata_i,
  output logic [31:0]      reg_rdata_o,
  // the SMA-bound MAD stream, observed
  input  logic [DataW-1:0] tdata_i,
  input  logic             tvalid_i,
  input  logic             tready_i,
  input  logic             tlast_i,
  // verdict, valid with the tlast beat
  output logic             viol_o,
  output logic             mask_o,
  // a violation at its tlast handshake (the port's CtrMkeyViol counter)
  output logic             ev_viol_o,
  // state, for the host's PortInfo and the top's idle_o
  output logic [1:0]       prot_o,
  output logic [15:0]      viols_o,
  output logic             lease_run_o
);

  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end

  localparam int unsigned Beats = MadBytes / DataB;
  localparam int unsigned BeatW = $clog2(Beats);

  // the verdict at the tlast beat reads only captured fields (and the key
  // compare, registered after the capture)
  if ((MbMkey + 7) / DataB >= Beats - 2 || MbMethod / DataB >= Beats - 1) begin : gen_beat_check
    $fatal(1, "%m: the method in the tlast beat or the M_Key in the two before it at DataW %0d", DataW);
  end

  // register indexes
  localparam logic [2:0] IdxMkeyLo    = 3'd0;
  localparam logic [2:0] IdxMkeyHi    = 3'd1;
  localparam logic [2:0] IdxMkeyProt  = 3'd2;
  localparam logic [2:0] IdxMkeyLease = 3'd3;
  localparam logic [2:0] IdxMkeyTick  = 3'd4;
  localparam logic [2:0] IdxMkeyViols = 3'd5;
  localparam logic [2:0] IdxLeaseSt   = 3'd6;

  logic [63:0]      mkey_q;
  logic [31:0]      lo_stage_q;
  logic [1:0]       prot_q;
  logic [15:0]      lease_q;
  logic [31:0]      tick_q;
  logic [15:0]      viols_q;
  logic             run_q;
  logic [31:0]      cyc_q;     // cycles into the current lease second
  logic [15:0]      sec_q;     // whole lease seconds elapsed

  logic [BeatW-1:0] beat_q;    // MAD beat index of the packet on the stream
  logic [7:0]       method_q;  // MAD method, captured from its beat
  logic [63:0]      smp_key_q; // SMP M_Key, captured from its beat(s)
  logic [31:0]      tick_m1_q; // max(MkeyTick, 1) - 1: the last cycle of a lease second
  logic [15:0]      lease_m1_q; // M_KeyLeasePeriod - 1 (the last second; unused at 0)

  logic [63:0]      mkey_d;      // mkey_q of the next cycle
  logic [63:0]      smp_key_d;   // smp_key_q of the next cycle
  logic [7:0]       key_eq_q;    // byte j of smp_key_q equals byte j of mkey_q
  logic             mkey_zero_q; // mkey_q == 0

  logic             hs, last_hs;
  logic             checked, key_ok, viol, stop, start;
  logic             sec_done, expire;

  assign hs      = tvalid_i && tready_i;
  assign last_hs = hs && tlast_i;

  // Capture: byte i of the MAD is byte i % DataB of beat i / DataB; the
  // method's and M_Key's beats come before the tlast beat at every width
  // (checked at elaboration), so at the tlast beat all of them are registered.
  assign checked = (method_q == MethodGet) || (method_q == MethodSet) ||
                   (method_q == MethodTrapRepress);
  // The 64-bit key compare is registered a byte at a time (timing: the
  // compare tree into the lease timer was the CA port's critical path at
  // DataW 64), from the port key's next value (so a register write is seen
  // in the same cycle as before) and the captured SMP key (one cycle late:
  // the M_Key's last beat comes at least two beats before tlast at every
  // width, checked at elaboration, so at tlast key_eq_q describes the
  // current smp_key_q and mkey_q exactly).
  assign key_ok  = mkey_zero_q || (&key_eq_q);
  assign viol    = checked && !key_ok && ((method_q != MethodGet) || prot_q[1]);
  assign viol_o  = tvalid_i && tlast_i && viol;
  assign mask_o  = tvalid_i && tlast_i && (method_q == MethodGet) && !(&key_eq_q) &&
                   (prot_q == 2'd1);
  assign stop    = last_hs && checked && key_ok;
  assign start   = last_hs && viol && !run_q && (lease_q != 16'd0);
  assign ev_viol_o = last_hs && viol;

  // cyc_q >= max(tick, 1) - 1 (>=: MkeyTick may be lowered meanwhile) and
  // sec_q + 1 >= lease, each against a register computed at the write
  assign sec_done = run_q && (cyc_q >= tick_m1_q);
  assign expire   = sec_done && (lease_q != 16'd0) && (sec_q >= lease_m1_q);

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      beat_q    <= '0;
    end else if (hs) begin
      beat_q    <= tlast_i ? '0 : beat_q + BeatW'(1);
    end
  end

  always_comb begin
    smp_key_d = smp_key_q;
    for (int unsigned j = 0; j < 8; j++) begin
      if (hs && beat_q == BeatW'((MbMkey + j) / DataB)) begin
        smp_key_d[8*(7-j) +: 8] = tdata_i[8*((MbMkey + j) % DataB) +: 8];
      end
    end
    mkey_d = (reg_we_i && reg_idx_i == IdxMkeyHi) ? {reg_wdata_i, lo_stage_q} : mkey_q;
  end

  always_ff @(posedge clk_i) begin
    if (hs && beat_q == BeatW'(MbMethod / DataB)) begin
      method_q <= tdata_i[8*(MbMethod % DataB) +: 8];
    end
    smp_key_q <= smp_key_d;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      key_eq_q    <= '0;
      mkey_zero_q <= 1'b1;  // mkey_q resets to 0
    end else begin
      for (int unsigned j = 0; j < 8; j++) begin
        key_eq_q[j] <= smp_key_q[8*j +: 8] == mkey_d[8*j +: 8];
      end
      mkey_zero_q <= mkey_d == 64'd0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      mkey_q     <= '0;
      lo_stage_q <= '0;
      prot_q     <= '0;
      lease_q    <= '0;
      tick_q     <= TickReset;
      tick_m1_q  <= (TickReset == 32'd0) ? 32'd0 : TickReset - 32'd1;
      lease_m1_q <= '1;
      viols_q    <= '0;
      run_q      <= 1'b0;
      cyc_q      <= '0;
      sec_q      <= '0;
    end else begin
      // the lease timer
      if (start) begin
        run_q <= 1'b1;
        cyc_q <= '0;
        sec_q <= '0;
      end else if (stop || expire) begin
        run_q <= 1'b0;
        cyc_q <= '0;
        sec_q <= '0;
      end else if (run_q) begin
        if (sec_done) begin
          cyc_q <= '0;
          sec_q <= (sec_q == 16'hFFFF) ? sec_q : sec_q + 16'd1;
        end else begin
          cyc_q <= cyc_q + 32'd1;
        end
      end
      if (expire) begin
        prot_q <= 2'd0;
      end
      if (last_hs && viol && viols_q != 16'hFFFF) begin
        viols_q <= viols_q + 16'd1;
      end
      // register writes win
      if (reg_we_i) begin
        unique case (reg_idx_i)
          IdxMkeyLo:    lo_stage_q <= reg_wdata_i;
          IdxMkeyHi:    mkey_q     <= {reg_wdata_i, lo_stage_q};
          IdxMkeyProt:  prot_q     <= reg_wdata_i[1:0];
          IdxMkeyLease: begin
            lease_q    <= reg_wdata_i[15:0];
            lease_m1_q <= reg_wdata_i[15:0] - 16'd1;
          end
          IdxMkeyTick: begin
            tick_q     <= reg_wdata_i;
            tick_m1_q  <= (reg_wdata_i == 32'd0) ? 32'd0 : reg_wdata_i - 32'd1;
          end
          IdxMkeyViols: viols_q    <= reg_wdata_i[15:0];
          default: ;  // read-only or reserved
        endcase
      end
    end
  end

  always_comb begin
    reg_rdata_o = '0;
    unique case (reg_idx_i)
      IdxMkeyLo:    reg_rdata_o = mkey_q[31:0];
      IdxMkeyHi:    reg_rdata_o = mkey_q[63:32];
      IdxMkeyProt:  reg_rdata_o = {30'h0, prot_q};
      IdxMkeyLease: reg_rdata_o = {16'h0, lease_q};
      IdxMkeyTick:  reg_rdata_o = tick_q;
      IdxMkeyViols: reg_rdata_o = {16'h0, viols_q};
      IdxLeaseSt:   reg_rdata_o = {15'h0, run_q, sec_q};
      default:      reg_rdata_o = '0;
    endcase
  end

  assign prot_o      = prot_q;
  assign viols_o     = viols_q;
  assign lease_run_o = run_q;

  // ---------------------------------------------------------------------------
  // Cover points: each M_KeyProtectBits level with each checked method,
  // matching key or not (IBA 14.2.4: a Get with a wrong key is answered at
  // levels 0 and 1, a violation at 2 and 3; a Set or TrapRepress with a
  // wrong key is a violation at every level)
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  // every cover point below samples at the clock edge, not in reset
  default clocking cov_clk @(posedge clk_i); endclocking
  default disable iff (!rst_ni);
  logic cov_hs, cov_get, cov_set, cov_tr;  // a checked SMP's verdict, by method
  assign cov_hs  = last_hs;
  assign cov_get = method_q == MethodGet;
  assign cov_set = method_q == MethodSet;
  assign cov_tr  = method_q == MethodTrapRepress;
  MKEY_P0_get_ok:            cover property (cov_hs && prot_q == 2'd0 && cov_get && key_ok);
  MKEY_P0_get_bad_key:       cover property (cov_hs && prot_q == 2'd0 && cov_get && !key_ok && !viol);
  MKEY_P0_set_ok:            cover property (cov_hs && prot_q == 2'd0 && cov_set && key_ok);
  MKEY_P0_set_viol:          cover property (cov_hs && prot_q == 2'd0 && cov_set && viol);
  MKEY_P0_trap_repress_ok:   cover property (cov_hs && prot_q == 2'd0 && cov_tr && key_ok);
  MKEY_P0_trap_repress_viol: cover property (cov_hs && prot_q == 2'd0 && cov_tr && viol);
  MKEY_P1_get_ok:            cover property (cov_hs && prot_q == 2'd1 && cov_get && key_ok);
  MKEY_P1_get_bad_key:       cover property (cov_hs && prot_q == 2'd1 && cov_get && !key_ok && !viol);
  MKEY_P1_set_ok:            cover property (cov_hs && prot_q == 2'd1 && cov_set && key_ok);
  MKEY_P1_set_viol:          cover property (cov_hs && prot_q == 2'd1 && cov_set && viol);
  MKEY_P1_trap_repress_ok:   cover property (cov_hs && prot_q == 2'd1 && cov_tr && key_ok);
  MKEY_P1_trap_repress_viol: cover property (cov_hs && prot_q == 2'd1 && cov_tr && viol);
  MKEY_P2_get_ok:            cover property (cov_hs && prot_q == 2'd2 && cov_get && key_ok);
  MKEY_P2_get_viol:          cover property (cov_hs && prot_q == 2'd2 && cov_get && viol);
  MKEY_P2_set_ok:            cover property (cov_hs && prot_q == 2'd2 && cov_set && key_ok);
  MKEY_P2_set_viol:          cover property (cov_hs && prot_q == 2'd2 && cov_set && viol);
  MKEY_P2_trap_repress_ok:   cover property (cov_hs && prot_q == 2'd2 && cov_tr && key_ok);
  MKEY_P2_trap_repress_viol: cover property (cov_hs && prot_q == 2'd2 && cov_tr && viol);
  MKEY_P3_get_ok:            cover property (cov_hs && prot_q == 2'd3 && cov_get && key_ok);
  MKEY_P3_get_viol:          cover property (cov_hs && prot_q == 2'd3 && cov_get && viol);
  MKEY_P3_set_ok:            cover property (cov_hs && prot_q == 2'd3 && cov_set && key_ok);
  MKEY_P3_set_viol:          cover property (cov_hs && prot_q == 2'd3 && cov_set && viol);
  MKEY_P3_trap_repress_ok:   cover property (cov_hs && prot_q == 2'd3 && cov_tr && key_ok);
  MKEY_P3_trap_repress_viol: cover property (cov_hs && prot_q == 2'd3 && cov_tr && viol);
`endif

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // a violation is never also "masked" (that is a Get that passes)
      assert (!(viol_o && mask_o))
        else $error("%m: violation and masked together at protect %0d", prot_q);
      assert (!viol_o || !key_ok)
        else $error("%m: violation with a valid key");
      assert (!(tvalid_i && tlast_i) || key_ok == ((mkey_q == 64'd0) || (smp_key_q == mkey_q)))
        else $error("%m: registered key compare out of step with the keys");
      assert (!run_q || lease_q != 16'd0 || !expire)
        else $error("%m: lease period 0 expired");
    end
  end
`endif

endmodule
