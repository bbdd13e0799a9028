// ib_pkt_fifo: commit/abort packet FIFO of Depth slots x SlotWords beats. A
// packet becomes visible to the reader only when committed (wr_end_i with
// wr_ok_i = 1); an aborted packet, or one dropped for lack of a slot or for
// overflowing its slot, leaves nothing. Each slot keeps the beat count, the
// last beat's tkeep and a meta word. Data sits in a synchronous-read RAM
// (block-RAM style); the RAM output register is the output register and is
// reloaded in the cycle it is taken, so the read side sustains one beat per
// cycle under any rd_tready_i pattern. wr_end_i in cycle t gives rd_tvalid_o
// in cycle t+2 when the FIFO was empty. MetaReg = 1 loads the meta word into
// a register with the beat (rd_meta_o from a flip-flop instead of the slot
// array read by the output's slot number; the same value while rd_tvalid_o).
// MetaRam = 1 (the iCE40 board, which has no LUT RAM) keeps the slots' meta
// words in block RAM instead of flip-flops: read with the beat into the RAM's
// output register, so rd_meta_o behaves as with MetaReg = 1; the last beat's
// tkeep goes into the same RAM words when it fits their 16-bit columns
// without another one (KeepRam), else stays in flip-flops.
module ib_pkt_fifo #(
  parameter int unsigned DataW     = 64,                  // stream width in bits: 8, 32, 64 or 128
  parameter int unsigned Depth     = 4,                   // number of packet slots, 1..255
  parameter int unsigned SlotWords = 256 / (DataW / 8),   // beats per slot
  parameter int unsigned MetaW     = 8,                   // width of the per-packet meta word
  parameter int unsigned MetaReg   = 0,                   // 1: rd_meta_o from a register
  parameter int unsigned MetaRam   = 0,                   // 1: meta in block RAM (as MetaReg = 1)
  localparam int unsigned DataB    = DataW / 8
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // runtime number of usable slots, 1..Depth (values outside are clamped);
  // a change takes effect one cycle later
  input  logic [7:0]         limit_i,
  // write side
  input  logic               wr_valid_i,
  input  logic [DataW-1:0]   wr_data_i,
  input  logic [DataB-1:0]   wr_keep_i,
  input  logic               wr_end_i,
  input  logic               wr_ok_i,
  input  logic [MetaW-1:0]   wr_meta_i,
  output logic               wr_drop_full_o,
  output logic               wr_slot_free_o,
  // read side
  output logic [DataW-1:0]   rd_tdata_o,
  output logic [DataB-1:0]   rd_tkeep_o,
  output logic               rd_tvalid_o,
  output logic               rd_tlast_o,
  output logic [MetaW-1:0]   rd_meta_o,
  input  logic               rd_tready_i
);

  localparam int unsigned SlotW = (Depth > 1) ? $clog2(Depth) : 1;
  localparam int unsigned CntW  = $clog2(Depth + 1);
  localparam int unsigned BeatW = $clog2(SlotWords + 1);  // holds 0..SlotWords
  localparam int unsigned AddrW = (Depth * SlotWords > 1) ? $clog2(Depth * SlotWords) : 1;
  // MetaRam: the last beat's tkeep rides in the meta RAM when that needs no
  // extra 16-bit column (the iCE40 SB_RAM40_4K's widest port)
  localparam bit          KeepRam = MetaRam != 0 &&
                                    (MetaW + DataB + 15) / 16 == (MetaW + 15) / 16;
  localparam int unsigned MkW     = KeepRam ? MetaW + DataB : MetaW;  // meta RAM word

  // ---------------------------------------------------------------------------
  // Elaboration-time parameter checks
  // ---------------------------------------------------------------------------
  if (DataW != 8 && DataW != 32 && DataW != 64 && DataW != 128) begin : gen_dataw_check
    $fatal(1, "%m: DataW must be 8, 32, 64 or 128, got %0d", DataW);
  end
  if (Depth < 1 || Depth > 255) begin : gen_depth_check
    $fatal(1, "%m: Depth must be 1..255, got %0d", Depth);
  end
  if (SlotWords < 1) begin : gen_slot_check
    $fatal(1, "%m: SlotWords must be >= 1, got %0d", SlotWords);
  end
  if (MetaW < 1) begin : gen_meta_check
    $fatal(1, "%m: MetaW must be >= 1, got %0d", MetaW);
  end

  // ---------------------------------------------------------------------------
  // Storage
  // ---------------------------------------------------------------------------
  // The RAM is never read at the word written in the same cycle (the reader
  // reads committed slots, the writer a claimed, free one; asserted below),
  // so no_rw_check tells yosys that the read-during-write result does not
  // matter: on the iCE40 it would otherwise delay every write by a cycle
  // and bypass it to the read port (DataW + AddrW + 1 flip-flops, a
  // DataW-wide mux and an address compare per FIFO).
  (* no_rw_check *) logic [DataW-1:0] mem [Depth*SlotWords];
  logic [BeatW-1:0] slot_len_q  [Depth];  // beats in the slot, 1..SlotWords
  // The slot's last tkeep and meta: in flip-flops (slot_keep_q, slot_meta_q)
  // or, with MetaRam, in block RAM (gen_mk_ram below).

  // Slot ring: committed slots are rd..rd+cnt-1 (mod Depth), the next packet
  // goes to wr_slot_q. iss_* is the next beat to read out of the RAM.
  logic [CntW-1:0]  cnt_q, cnt_d;          // committed slots not yet freed
  logic [CntW-1:0]  cnt_up, cnt_dn;
  logic             free_d;                // cnt_d < limit_eff_d
  logic [CntW-1:0]  iss_cnt_q, iss_cnt_d;  // committed slots with beats not yet read
  logic [SlotW-1:0] wr_slot_q, wr_slot_d;
  logic [SlotW-1:0] iss_slot_q, iss_slot_d;
  logic [BeatW-1:0] iss_beat_q, iss_beat_d;
  logic [BeatW-1:0] iss_beat_inc;          // iss_beat_q + 1

  function automatic logic [SlotW-1:0] slot_inc(logic [SlotW-1:0] s);
    return (32'(s) == Depth - 1) ? '0 : s + SlotW'(1);
  endfunction

  // Effective limit, clamped to 1..Depth. A new limit_i takes
  // effect one cycle later (it is a configuration register): slot_free_q is
  // cnt_q < (limit_i of the previous cycle, clamped), kept in a register so
  // that neither the clamp nor the compare is on the path from the writer's
  // start decision into the write side.
  logic [CntW-1:0] limit_eff_d;
  logic            slot_free_q;
  always_comb begin
    if (limit_i == 8'd0) begin
      limit_eff_d = CntW'(1);
    end else if (32'(limit_i) > Depth) begin
      limit_eff_d = CntW'(Depth);
    end else begin
      limit_eff_d = CntW'(limit_i);
    end
  end

  logic slot_free;
  assign slot_free      = slot_free_q;
  assign wr_slot_free_o = slot_free;

  // ---------------------------------------------------------------------------
  // Write side
  // ---------------------------------------------------------------------------
  logic             open_q, open_d;        // a packet is open (>= 1 beat seen)
  logic             claim_q, claim_d;      // ... and owns wr_slot_q
  logic             nospace_q, nospace_d;  // ... and was dropped for lack of a slot
  logic             ovf_q, ovf_d;          // ... and overflowed its slot
  logic [BeatW-1:0] wcnt_q, wcnt_d;        // beats written into the slot
  logic             wfull_q;               // wcnt_q == SlotWords
  logic [DataB-1:0] wkeep_q, wkeep_d;      // tkeep of the last beat written

  logic             open_now, claim_now, nospace_now, ovf_now;
  logic             wr_beat;               // wr_data_i goes into the RAM this cycle
  logic             commit;
  logic             slot_we;               // the slot's length, tkeep and meta are written
  logic [BeatW-1:0] len_now;
  logic [DataB-1:0] keep_now;
  logic [AddrW-1:0] wr_addr;

  always_comb begin
    open_now    = open_q | wr_valid_i;
    claim_now   = open_q ? claim_q : slot_free;
    nospace_now = open_q ? nospace_q : (wr_valid_i & ~slot_free);
    ovf_now     = ovf_q | (wr_valid_i & claim_now & wfull_q);
    wr_beat     = wr_valid_i & claim_now & ~ovf_now;
    len_now     = wr_beat ? wcnt_q + BeatW'(1) : wcnt_q;  // increment off the wr_beat path
    keep_now    = wr_beat ? wr_keep_i : wkeep_q;
    commit      = wr_end_i & wr_ok_i & open_now & claim_now & ~ovf_now;
    // The claimed slot is free, so its length/tkeep/meta may be written at
    // every end of a packet that holds it; only commit makes them visible.
    // This keeps wr_ok_i (the writer's late verdict) off the write enables.
    slot_we     = wr_end_i & open_now & claim_now;
    wr_drop_full_o = wr_end_i & wr_ok_i & open_now & nospace_now;
    wr_addr     = AddrW'(32'(wr_slot_q) * SlotWords + 32'(wcnt_q));

    open_d    = open_now;
    claim_d   = claim_now;
    nospace_d = nospace_now;
    ovf_d     = ovf_now;
    wcnt_d    = len_now;
    wkeep_d   = keep_now;
    wr_slot_d = commit ? slot_inc(wr_slot_q) : wr_slot_q;
    if (wr_end_i) begin
      open_d    = 1'b0;
      claim_d   = 1'b0;
      nospace_d = 1'b0;
      ovf_d     = 1'b0;
      wcnt_d    = '0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (wr_beat) begin
      mem[wr_addr] <= wr_data_i;
    end
    if (slot_we) begin
      slot_len_q[wr_slot_q]  <= len_now;
    end
  end

  // ---------------------------------------------------------------------------
  // Read side: the RAM output register is the output register.
  // ---------------------------------------------------------------------------
  logic             out_valid_q;
  logic             out_last_q;
  logic [SlotW-1:0] out_slot_q;
  logic [DataW-1:0] ram_q;

  logic             rd_take;   // output beat taken this cycle
  logic             rd_issue;  // RAM read this cycle, loads the output register
  logic             iss_last;
  logic             iss_done;  // last beat of a slot read out of the RAM
  logic             freed;
  logic [AddrW-1:0] rd_addr;

  always_comb begin
    rd_take    = out_valid_q & rd_tready_i;
    rd_issue   = (iss_cnt_q != '0) & (~out_valid_q | rd_tready_i);
    // the beat's successor is the slot's length: one incrementer for this
    // compare and the next beat number, no subtractor on the slot length
    iss_beat_inc = iss_beat_q + BeatW'(1);
    iss_last   = (iss_beat_inc == slot_len_q[iss_slot_q]);
    iss_done   = rd_issue & iss_last;
    freed      = rd_take & out_last_q;
    rd_addr    = AddrW'(32'(iss_slot_q) * SlotWords + 32'(iss_beat_q));

    iss_slot_d = iss_slot_q;
    iss_beat_d = iss_beat_q;
    if (rd_issue) begin
      if (iss_last) begin
        iss_slot_d = slot_inc(iss_slot_q);
        iss_beat_d = '0;
      end else begin
        iss_beat_d = iss_beat_inc;
      end
    end
    iss_cnt_d = iss_cnt_q + CntW'(commit) - CntW'(iss_done);
    // cnt_q +1 / -1 / 0 and its slot-free compare, each made from cnt_q in
    // parallel and picked by commit/freed (late signals of this cycle).
    cnt_up    = cnt_q + CntW'(1);
    cnt_dn    = cnt_q - CntW'(1);
    unique case ({commit, freed})
      2'b10:   begin cnt_d = cnt_up; free_d = cnt_up < limit_eff_d; end
      2'b01:   begin cnt_d = cnt_dn; free_d = cnt_dn < limit_eff_d; end
      default: begin cnt_d = cnt_q;  free_d = cnt_q < limit_eff_d;  end
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (rd_issue) begin
      ram_q <= mem[rd_addr];
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      open_q      <= 1'b0;
      claim_q     <= 1'b0;
      nospace_q   <= 1'b0;
      ovf_q       <= 1'b0;
      wcnt_q      <= '0;
      wfull_q     <= SlotWords == 0;
      slot_free_q <= 1'b1;
      wkeep_q     <= '0;
      wr_slot_q   <= '0;
      cnt_q       <= '0;
      iss_cnt_q   <= '0;
      iss_slot_q  <= '0;
      iss_beat_q  <= '0;
      out_valid_q <= 1'b0;
      out_last_q  <= 1'b0;
      out_slot_q  <= '0;
    end else begin
      open_q      <= open_d;
      claim_q     <= claim_d;
      nospace_q   <= nospace_d;
      ovf_q       <= ovf_d;
      wcnt_q      <= wcnt_d;
      // == (wcnt_d == SlotWords), from wcnt_q compares made in parallel
      wfull_q     <= !wr_end_i && (wr_beat ? 32'(wcnt_q) == SlotWords - 1 : wfull_q);
      slot_free_q <= free_d;
      wkeep_q     <= wkeep_d;
      wr_slot_q   <= wr_slot_d;
      cnt_q       <= cnt_d;
      iss_cnt_q   <= iss_cnt_d;
      iss_slot_q  <= iss_slot_d;
      iss_beat_q  <= iss_beat_d;
      if (rd_issue) begin
        out_valid_q <= 1'b1;
        out_last_q  <= iss_last;
        out_slot_q  <= iss_slot_q;
      end else if (rd_take) begin
        out_valid_q <= 1'b0;
      end
    end
  end

  assign rd_tdata_o  = ram_q;
  assign rd_tvalid_o = out_valid_q;
  assign rd_tlast_o  = out_last_q;
  // last tkeep, from flip-flops or from the meta RAM (KeepRam)
  logic [DataB-1:0] out_keep;
  assign rd_tkeep_o  = out_last_q ? out_keep : '1;
  if (!KeepRam) begin : gen_keep_ff
    logic [DataB-1:0] slot_keep_q [Depth];  // tkeep of the slot's last beat
    always_ff @(posedge clk_i) begin
      if (slot_we) begin
        slot_keep_q[wr_slot_q] <= keep_now;
      end
    end
    assign out_keep = slot_keep_q[out_slot_q];
  end
  if (MetaRam != 0) begin : gen_mk_ram
    // Written at the slot's wr_end_i, read at each rd_issue of one of its
    // beats into the RAM's output register (mk_q, the same value for every
    // beat of the slot). The slot written is a claimed, free one, the slot
    // read a committed one: never the same word in one cycle (asserted).
    logic [MkW-1:0] mk_wdata;
    (* ram_style = "block", no_rw_check *) logic [MkW-1:0] mk_mem [Depth];
    logic [MkW-1:0] mk_q;
    if (KeepRam) begin : gen_keep_ram
      assign mk_wdata = {wr_meta_i, keep_now};
      assign out_keep = mk_q[DataB-1:0];
      // the output's slot number only selects the tkeep flip-flops
      logic unused_out_slot;
      assign unused_out_slot = ^out_slot_q;
    end else begin : gen_meta_only
      assign mk_wdata = wr_meta_i;
    end
    always_ff @(posedge clk_i) begin
      if (slot_we) begin
        mk_mem[wr_slot_q] <= mk_wdata;
      end
    end
    always_ff @(posedge clk_i) begin
      if (rd_issue) begin
        mk_q <= mk_mem[iss_slot_q];
      end
    end
    assign rd_meta_o = mk_q[MkW-1 -: MetaW];
`ifndef SYNTHESIS
    always_ff @(posedge clk_i) begin
      if (rst_ni) begin
        assert (!(slot_we && rd_issue && wr_slot_q == iss_slot_q))
          else $error("%m: meta RAM read and write of slot %0d in one cycle", iss_slot_q);
      end
    end
`endif
  end else begin : gen_meta_ff
    logic [MetaW-1:0] slot_meta_q [Depth];
    always_ff @(posedge clk_i) begin
      if (slot_we) begin
        slot_meta_q[wr_slot_q] <= wr_meta_i;
      end
    end
    if (MetaReg != 0) begin : gen_meta_reg
      // loaded with the beat: the slot's meta is written only at its commit,
      // before its first beat is read, and stays until the slot is freed
      logic [MetaW-1:0] out_meta_q;
      always_ff @(posedge clk_i) begin
        if (rd_issue) begin
          out_meta_q <= slot_meta_q[iss_slot_q];
        end
      end
      assign rd_meta_o = out_meta_q;
    end else begin : gen_meta_rd
      assign rd_meta_o = slot_meta_q[out_slot_q];
    end
  end

  // ---------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  logic             past_valid_q;
  logic             past_stall_q;
  logic [DataW-1:0] past_data_q;
  logic [DataB-1:0] past_keep_q;
  logic             past_last_q;
  logic [MetaW-1:0] past_meta_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      past_valid_q <= 1'b0;
      past_stall_q <= 1'b0;
    end else begin
      past_valid_q <= 1'b1;
      past_stall_q <= rd_tvalid_o & ~rd_tready_i;
    end
    past_data_q <= rd_tdata_o;
    past_keep_q <= rd_tkeep_o;
    past_last_q <= rd_tlast_o;
    past_meta_q <= rd_meta_o;
  end

  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // no write into a slot that holds a committed packet (FIFO full)
      assert (!(wr_beat && cnt_q >= CntW'(Depth)))
        else $error("%m: write to a full FIFO");
      assert (!(commit && cnt_q >= CntW'(Depth)))
        else $error("%m: commit into a full FIFO");
      // no read of an empty FIFO
      assert (!(rd_issue && cnt_q == '0))
        else $error("%m: RAM read of an empty FIFO");
      // no read of the word written in this cycle (no_rw_check on mem)
      assert (!(wr_beat && rd_issue && wr_addr == rd_addr))
        else $error("%m: RAM read and write of word %0d in one cycle", rd_addr);
      assert (iss_cnt_q <= cnt_q)
        else $error("%m: issue count %0d > slot count %0d", iss_cnt_q, cnt_q);
      // output stable while valid and not ready
      if (past_valid_q && past_stall_q) begin
        assert (rd_tvalid_o)
          else $error("%m: rd_tvalid_o dropped while stalled");
        assert (rd_tdata_o == past_data_q && rd_tkeep_o == past_keep_q &&
                rd_tlast_o == past_last_q && rd_meta_o == past_meta_q)
          else $error("%m: read output changed while stalled");
      end
    end
  end
`endif

endmodule
