// pkt_fifo_props: formal harness of ib_pkt_fifo (the VL15 RX/TX buffers of
// the CA and the switch). Every input of the FIFO is free; a reference model
// written from the FIFO's contract (not from its internals) runs beside it:
// a packet is its beats from the first wr_valid_i to wr_end_i; it is admitted
// when wr_slot_free_o was high at its first beat; it is stored (committed)
// when wr_end_i comes with wr_ok_i, it was admitted and it has at most
// SlotWords beats; anything else is dropped. Proven with yosys-smtbmc
// (bounded; COUNT also by k-induction with the INDUCT invariants):
//   - no overflow: never more packets stored than Depth slots, and the FIFO
//     reports a free slot exactly when the model's stored count is below the
//     limit in force (clamp(limit_i of the previous cycle) to 1..Depth);
//   - wr_drop_full_o pulses exactly for a wr_ok_i packet that was refused;
//   - tlast count: packets ended (tlast in) = packets out (tlast out)
//     + dropped + stored, where "stored" is the FIFO's own occupancy counter
//     (also pinned through wr_slot_free_o against a free limit_i), so a
//     packet lost or made up inside the FIFO breaks the equation;
//   - no partial packet out: rd_tvalid_o only while a committed packet is
//     stored; the K-th packet out (K free) is the K-th one committed: same
//     length (tlast exactly on its last beat, so exactly once per packet),
//     same beat B (B free), same last-beat tkeep, same meta. Dropped packets
//     therefore never appear and packets come out whole and in order;
//   - the read side obeys the stream rules of ib_axis_checker (instantiated
//     on it, its assertions are proof obligations here), and the FIFO's own
//     simulation assertions hold.
// Input assumptions: reset in cycle 0 (free afterwards: the model restarts
// with it), wr_keep_i contiguous from bit 0 and all ones on a beat that is
// not the packet's last (the rules ib_axis_checker applies to every stream).
module pkt_fifo_props #(
  parameter int unsigned DataW     = 32,
  parameter int unsigned Depth     = 2,
  parameter int unsigned SlotWords = 4,
  parameter int unsigned MetaW     = 4,
  parameter int unsigned MetaRam   = 0,  // the FIFO's MetaRam (iCEBreaker board form)
  localparam int unsigned DataB    = DataW / 8
) (
  input logic               clk_i,
  input logic               rst_ni,
  input logic [7:0]         limit_i,
  input logic               wr_valid_i,
  input logic [DataW-1:0]   wr_data_i,
  input logic [DataB-1:0]   wr_keep_i,
  input logic               wr_end_i,
  input logic               wr_ok_i,
  input logic [MetaW-1:0]   wr_meta_i,
  input logic               rd_tready_i,
  // the watched packet (K-th committed since reset) and beat: free constants
  input logic [3:0]         k_pkt_i,
  input logic [7:0]         k_beat_i
);

  localparam int unsigned CntW = 8;  // model counters; the bounded depth keeps them far from wrapping

  logic               wr_drop_full;
  logic               wr_slot_free;
  logic [DataW-1:0]   rd_tdata;
  logic [DataB-1:0]   rd_tkeep;
  logic               rd_tvalid;
  logic               rd_tlast;
  logic [MetaW-1:0]   rd_meta;

  ib_pkt_fifo #(
    .DataW    (DataW),
    .Depth    (Depth),
    .SlotWords(SlotWords),
    .MetaW    (MetaW),
    .MetaRam  (MetaRam)
  ) u_dut (
    .clk_i,
    .rst_ni,
    .limit_i,
    .wr_valid_i,
    .wr_data_i,
    .wr_keep_i,
    .wr_end_i,
    .wr_ok_i,
    .wr_meta_i,
    .wr_drop_full_o(wr_drop_full),
    .wr_slot_free_o(wr_slot_free),
    .rd_tdata_o    (rd_tdata),
    .rd_tkeep_o    (rd_tkeep),
    .rd_tvalid_o   (rd_tvalid),
    .rd_tlast_o    (rd_tlast),
    .rd_meta_o     (rd_meta),
    .rd_tready_i
  );

  // The read side against the project's stream checker: its assertions
  // (tvalid held until tready, tdata/tkeep/tlast stable while stalled, tkeep
  // contiguous and full except on tlast) are proof obligations here.
  ib_axis_checker #(.DataW(DataW)) u_rd_check (
    .clk_i,
    .rst_ni,
    .tdata_i (rd_tdata),
    .tkeep_i (rd_tkeep),
    .tvalid_i(rd_tvalid),
    .tready_i(rd_tready_i),
    .tlast_i (rd_tlast)
  );

  // ---------------------------------------------------------------------------
  // Assumptions on the inputs
  // ---------------------------------------------------------------------------
  logic init_q = 1'b1;  // high in cycle 0 only
  logic [3:0]  k_pkt_q;
  logic [7:0]  k_beat_q;
  always_ff @(posedge clk_i) begin
    init_q   <= 1'b0;
    k_pkt_q  <= k_pkt_i;
    k_beat_q <= k_beat_i;
  end

  always_comb begin
    if (init_q) begin
      assume (!rst_ni);
    end else begin
      assume (k_pkt_i == k_pkt_q && k_beat_i == k_beat_q);
    end
    if (wr_valid_i) begin
      assume (wr_keep_i != '0);
      assume ((wr_keep_i & (wr_keep_i + DataB'(1))) == '0);
      assume (wr_end_i || wr_keep_i == '1);
    end
  end

  // ---------------------------------------------------------------------------
  // Reference model of the write side (from the contract, not the RTL)
  // ---------------------------------------------------------------------------
  logic            m_open_q;    // a packet has started (>= 1 beat)
  logic            m_admit_q;   // ... and wr_slot_free_o was high at its first beat
  logic [7:0]      m_beats_q;   // ... beats so far (saturating)
  logic [CntW-1:0] n_end_q;     // packets ended (tlast in)
  logic [CntW-1:0] n_commit_q;  // packets stored
  logic [CntW-1:0] n_drop_q;    // packets dropped (abort, no slot, too long)
  logic [CntW-1:0] n_out_q;     // packets read out (tlast out taken)
  logic [7:0]      out_beat_q;  // beat index within the packet on the read side
  logic [CntW-1:0] limit_eff_q; // clamp(limit_i) of the previous cycle

  logic            m_open_now, m_admit_now, pkt_end, pkt_commit, pkt_full_drop;
  logic [7:0]      m_beats_now;
  logic [CntW-1:0] stored;
  logic [CntW-1:0] limit_eff;

  always_comb begin
    m_open_now    = m_open_q | wr_valid_i;
    m_admit_now   = m_open_q ? m_admit_q : wr_slot_free;
    m_beats_now   = m_beats_q + ((wr_valid_i && m_beats_q != 8'hff) ? 8'd1 : 8'd0);
    pkt_end       = wr_end_i & m_open_now;
    pkt_commit    = pkt_end & wr_ok_i & m_admit_now & (32'(m_beats_now) <= SlotWords);
    pkt_full_drop = pkt_end & wr_ok_i & ~m_admit_now;
    stored        = n_commit_q - n_out_q;
    if (limit_i == 8'd0) begin
      limit_eff = CntW'(1);
    end else if (32'(limit_i) > Depth) begin
      limit_eff = CntW'(Depth);
    end else begin
      limit_eff = CntW'(limit_i);
    end
  end

  // the watched packet: beat k_beat of the k_pkt-th committed packet
  logic             cur_have_q;   // the current packet's beat k_beat was seen
  logic [DataW-1:0] cur_data_q;
  logic [DataB-1:0] cur_keep_q;   // tkeep of the current packet's last beat so far
  logic             k_have_q;     // the watched packet was committed
  logic [DataW-1:0] k_data_q;
  logic             k_data_ok_q;  // it has a beat k_beat
  logic [7:0]       k_len_q;
  logic [DataB-1:0] k_keep_q;
  logic [MetaW-1:0] k_meta_q;

  logic             cur_have_now;
  logic [DataW-1:0] cur_data_now;
  logic [DataB-1:0] cur_keep_now;
  always_comb begin
    cur_have_now = cur_have_q;
    cur_data_now = cur_data_q;
    cur_keep_now = wr_valid_i ? wr_keep_i : cur_keep_q;
    if (wr_valid_i && m_beats_q == k_beat_i) begin
      cur_have_now = 1'b1;
      cur_data_now = wr_data_i;
    end
  end

  logic rd_take;
  assign rd_take = rd_tvalid & rd_tready_i;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      m_open_q    <= 1'b0;
      m_admit_q   <= 1'b0;
      m_beats_q   <= '0;
      n_end_q     <= '0;
      n_commit_q  <= '0;
      n_drop_q    <= '0;
      n_out_q     <= '0;
      out_beat_q  <= '0;
      cur_have_q  <= 1'b0;
      k_have_q    <= 1'b0;
    end else begin
      m_open_q   <= m_open_now & ~wr_end_i;
      m_admit_q  <= m_admit_now;
      m_beats_q  <= wr_end_i ? 8'd0 : m_beats_now;
      cur_have_q <= cur_have_now & ~wr_end_i;
      cur_data_q <= cur_data_now;
      cur_keep_q <= cur_keep_now;
      if (pkt_end) begin
        n_end_q <= n_end_q + CntW'(1);
        if (pkt_commit) begin
          n_commit_q <= n_commit_q + CntW'(1);
        end else begin
          n_drop_q <= n_drop_q + CntW'(1);
        end
      end
      if (pkt_commit && n_commit_q == CntW'(k_pkt_i)) begin
        k_have_q    <= 1'b1;
        k_data_q    <= cur_data_now;
        k_data_ok_q <= cur_have_now;
        k_len_q     <= m_beats_now;
        k_keep_q    <= cur_keep_now;
        k_meta_q    <= wr_meta_i;
      end
      if (rd_take) begin
        out_beat_q <= rd_tlast ? 8'd0 : out_beat_q + 8'd1;
        if (rd_tlast) begin
          n_out_q <= n_out_q + CntW'(1);
        end
      end
    end
    limit_eff_q <= limit_eff;
  end

  // ---------------------------------------------------------------------------
  // Properties (checked in every cycle out of reset, from cycle 1 on)
  // ---------------------------------------------------------------------------
  // Four property sets, one per proof (a smaller cone each; the data RAM
  // is only in the cone of DATA and STREAM): COUNT (overflow, admission,
  // drop report, tlast count), ORDER (no partial packet, whole and in
  // order: length, tlast, tkeep, meta), DATA (the data of a packet's beat),
  // STREAM (the read side's stream rules and the FIFO's own assertions,
  // which formal/run.py keeps only in this set).
`ifdef COUNT
  always_comb begin
    if (!init_q && rst_ni) begin
      // no overflow: never more packets stored than slots (the model's count
      // and the FIFO's own occupancy counter)
      assert (stored <= CntW'(Depth));
      assert (CntW'(u_dut.cnt_q) == stored);
      // admission: a free slot is reported exactly when fewer packets than
      // the limit in force are stored (limit_i is free, so this also pins
      // the FIFO's occupancy to the model's count through its ports)
      assert (wr_slot_free == (stored < limit_eff_q));
      // a refused wr_ok_i packet is reported, nothing else is
      assert (wr_drop_full == pkt_full_drop);
      // tlast count: in = out + dropped + stored
      assert (n_end_q == n_out_q + n_drop_q + CntW'(u_dut.cnt_q));
    end
  end
`endif

`ifdef INDUCT
  // Strengthening for k-induction of COUNT (formal/run.py --induction): the
  // model's packet state against the FIFO's write-side and read-side
  // registers, so that an arbitrary start state of the induction step is one
  // the FIFO can reach.
  always_comb begin
    if (!init_q && rst_ni) begin
      assert (m_open_q == u_dut.open_q);
      assert (m_open_q == (m_beats_q != 8'd0));
      if (m_open_q) begin
        assert (u_dut.claim_q == m_admit_q && u_dut.nospace_q == !m_admit_q);
        if (m_admit_q) begin
          assert (stored < CntW'(Depth));  // the claimed slot is free
          assert (u_dut.ovf_q == (32'(m_beats_q) > SlotWords));
          if (32'(m_beats_q) <= SlotWords) begin
            assert (32'(u_dut.wcnt_q) == 32'(m_beats_q));
          end
        end
      end else begin
        assert (!u_dut.nospace_q && !u_dut.ovf_q && u_dut.wcnt_q == '0);
      end
      assert (u_dut.wfull_q == (32'(u_dut.wcnt_q) == SlotWords));
      assert (32'(u_dut.wcnt_q) <= SlotWords);
      assert (32'(u_dut.cnt_q) == 32'(u_dut.iss_cnt_q) +
              32'(u_dut.out_valid_q & u_dut.out_last_q));
      if (u_dut.out_valid_q && !u_dut.out_last_q) begin
        assert (u_dut.iss_cnt_q != '0);
      end
      assert (limit_eff_q >= CntW'(1) && limit_eff_q <= CntW'(Depth));
    end
  end
`endif

`ifdef ORDER
  always_comb begin
    if (!init_q && rst_ni) begin
      // no partial packet: output only while a committed packet is stored
      if (rd_tvalid) begin
        assert (stored != '0 && stored <= CntW'(Depth));
        assert (32'(out_beat_q) < SlotWords);
      end
      // the k-th packet out is the k-th packet committed, whole and unchanged
      if (rd_tvalid && n_out_q == CntW'(k_pkt_i)) begin
        assert (k_have_q);
        assert (rd_tlast == (out_beat_q == k_len_q - 8'd1));
        assert (rd_meta == k_meta_q);
        if (rd_tlast) begin
          assert (rd_tkeep == k_keep_q);
        end
      end
    end
  end
`endif

`ifdef DATA
  always_comb begin
    if (!init_q && rst_ni) begin
      // beat k_beat of the k-th packet out carries the data written as beat
      // k_beat of the k-th packet committed
      if (rd_tvalid && n_out_q == CntW'(k_pkt_i) && k_have_q && k_data_ok_q &&
          out_beat_q == k_beat_i) begin
        assert (rd_tdata == k_data_q);
      end
    end
  end
`endif

endmodule
