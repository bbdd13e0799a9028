// Unit harness for ib_pkt_fifo against a cycle-level C++ model: random
// commit / abort / drop (no slot, over-long) sequences with random gaps,
// wr_end_i on or after the last beat, random limit_i (effective one cycle
// later) and random rd_tready_i.
// Checks every read beat, wr_drop_full_o, wr_slot_free_o, commit-to-valid
// <= 2 cycles and full read throughput.
#include <deque>
#include <memory>

#include "Vib_pkt_fifo.h"
#include "tb_util.h"
#include "verilated.h"

#if !defined(DEPTH) || !defined(SLOTW) || !defined(METAW)
#error "DEPTH, SLOTW and METAW must be defined"
#endif
static constexpr int kMetaB = (METAW + 7) / 8;

struct Pkt {
  std::vector<Bytes> beats;  // DataB bytes each, last one has `keep_n` valid bytes
  int keep_n;
  Bytes meta;
};

struct In {  // one cycle of write-side inputs
  bool valid = false, end = false, ok = false;
  Bytes data = Bytes(kDataB, 0);
  int keep_n = 0;
  Bytes meta = Bytes(kMetaB, 0);
};

static std::unique_ptr<Vib_pkt_fifo> top;
static uint64_t cycle = 0;
static std::deque<In> sched;
static int limit = DEPTH;
// limit_i as the FIFO uses it: registered, so the value of the previous cycle
// (Depth after reset).
static int limit_seen = DEPTH;
static int ready_pct = 50;

// model
static int m_cnt = 0;  // committed, not freed
static bool m_open = false, m_claim = false, m_nospace = false, m_ovf = false;
static Pkt m_cur;
static std::deque<Pkt> m_q;  // committed, in read order (front = being read)
static size_t rd_beat = 0;
static uint64_t expect_valid_at = 0;
static int n_commit = 0, n_drop_full = 0, n_read = 0, n_abort = 0, n_ovf = 0;

static int limit_eff() { return limit_seen < 1 ? 1 : (limit_seen > DEPTH ? DEPTH : limit_seen); }

static Bytes rand_bytes(size_t n) {
  Bytes b(n);
  for (auto& x : b) x = urand(256);
  return b;
}
static Bytes rand_meta() {
  Bytes m = rand_bytes(kMetaB);
  if (METAW % 8) m[kMetaB - 1] &= (1u << (METAW % 8)) - 1;
  return m;
}

static void tick() {
  In in;
  if (!sched.empty()) {
    in = sched.front();
    sched.pop_front();
  }
  top->wr_valid_i = in.valid;
  put_bytes(top->wr_data_i, in.data.data(), kDataB);
  top->wr_keep_i = keep_mask(in.keep_n);
  top->wr_end_i = in.end;
  top->wr_ok_i = in.ok;
  put_bytes(top->wr_meta_i, in.meta.data(), kMetaB);
  top->limit_i = limit;
  top->rd_tready_i = chance(ready_pct);
  top->clk_i = 0;
  top->eval();

  // ---- write side model
  CHECK(top->wr_slot_free_o == (m_cnt < limit_eff()), "wr_slot_free_o %d, model cnt %d limit %d at cycle %lu",
        top->wr_slot_free_o, m_cnt, limit_eff(), cycle);
  bool open_now = m_open || in.valid;
  if (!m_open && in.valid) {
    m_claim = m_cnt < limit_eff();
    m_nospace = !m_claim;
    m_ovf = false;
    m_cur = Pkt();
  }
  if (in.valid && m_claim && !m_ovf) {
    if ((int)m_cur.beats.size() == SLOTW) {
      m_ovf = true;
    } else {
      m_cur.beats.push_back(in.data);
      m_cur.keep_n = in.keep_n;
    }
  }
  m_open = open_now;
  bool exp_drop = in.end && in.ok && open_now && m_nospace;
  CHECK(top->wr_drop_full_o == exp_drop, "wr_drop_full_o %d expected %d at cycle %lu", top->wr_drop_full_o, exp_drop,
        cycle);
  n_drop_full += exp_drop;
  int cnt_next = m_cnt;
  if (in.end && open_now) {
    if (in.ok && m_claim && !m_ovf) {
      m_cur.meta = in.meta;
      if (m_q.empty() && !top->rd_tvalid_o) expect_valid_at = cycle + 2;
      m_q.push_back(m_cur);
      cnt_next++;
      n_commit++;
    } else if (m_ovf) {
      n_ovf++;
    } else if (!in.ok) {
      n_abort++;
    }
    m_open = m_claim = m_nospace = m_ovf = false;
  }

  // ---- read side
  if (expect_valid_at == cycle) {
    CHECK(top->rd_tvalid_o, "rd_tvalid_o not set 2 cycles after the commit (cycle %lu)", cycle);
    expect_valid_at = 0;
  }
  if (top->rd_tvalid_o && top->rd_tready_i) {
    CHECK(!m_q.empty(), "read beat from an empty model at cycle %lu", cycle);
    if (!m_q.empty()) {
      const Pkt& p = m_q.front();
      uint8_t b[16];
      get_bytes(top->rd_tdata_o, b, kDataB);
      bool exp_last = rd_beat + 1 == p.beats.size();
      int n = exp_last ? p.keep_n : kDataB;
      CHECK(top->rd_tlast_o == exp_last, "tlast %d at beat %zu of %zu", top->rd_tlast_o, rd_beat, p.beats.size());
      CHECK(top->rd_tkeep_o == keep_mask(n), "tkeep %x expected %x", top->rd_tkeep_o, keep_mask(n));
      CHECK(!std::memcmp(b, p.beats[rd_beat].data(), n), "data differs at beat %zu (packet %d)", rd_beat, n_read);
      uint8_t m[16];
      get_bytes(top->rd_meta_o, m, kMetaB);
      CHECK(!std::memcmp(m, p.meta.data(), kMetaB), "meta differs (packet %d)", n_read);
      rd_beat++;
      if (top->rd_tlast_o || rd_beat >= p.beats.size()) {
        m_q.pop_front();
        rd_beat = 0;
        cnt_next--;
        n_read++;
      }
    }
  }
  m_cnt = cnt_next;
  top->clk_i = 1;
  top->eval();
  limit_seen = limit;
  cycle++;
}

// Schedule one packet: len beats with gaps, wr_end_i on the last beat or later.
static void sched_pkt(int len, bool ok, int gap_pct, bool end_late) {
  for (int i = 0; i < len; i++) {
    while (chance(gap_pct)) sched.push_back(In());
    In c;
    c.valid = true;
    c.data = rand_bytes(kDataB);
    c.keep_n = (i + 1 == len) ? 1 + urand(kDataB) : kDataB;
    sched.push_back(c);
  }
  if (end_late) {
    int k = urand(3);
    for (int i = 0; i < k; i++) sched.push_back(In());
    In c;
    sched.push_back(c);
  }
  In& e = sched.back();
  e.end = true;
  e.ok = ok;
  e.meta = rand_meta();
}

static void run_sched() {
  while (!sched.empty()) tick();
}

static void drain(int ready) {
  ready_pct = ready;
  for (int i = 0; i < 100000 && !m_q.empty(); i++) tick();
  CHECK(m_q.empty(), "FIFO did not drain");
  for (int i = 0; i < 4; i++) tick();
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  Verilated::randReset(2);
  top = std::make_unique<Vib_pkt_fifo>();
  top->rst_ni = 0;
  for (int i = 0; i < 5; i++) {
    top->clk_i = 0;
    top->eval();
    top->clk_i = 1;
    top->eval();
  }
  top->rst_ni = 1;

  // 1. Single packets, one per slot shape, reader always ready: latency.
  ready_pct = 100;
  for (int len : {1, 2, SLOTW}) {
    sched_pkt(len, true, 0, false);
    run_sched();
    drain(100);
  }

  // 2. Fill every slot with the reader stopped, then the next packet is
  //    dropped for lack of space (pulse on commit, nothing stored).
  for (int rp : {100, 40}) {
    ready_pct = 0;
    limit = DEPTH;
    for (int i = 0; i < DEPTH; i++) {
      sched_pkt(1 + urand(SLOTW), true, 10, chance(50));
      run_sched();
    }
    tick();
    CHECK(!top->wr_slot_free_o, "wr_slot_free_o set with every slot used");
    int before = n_drop_full;
    sched_pkt(1 + urand(SLOTW), true, 0, false);
    run_sched();
    CHECK(n_drop_full == before + 1, "no wr_drop_full_o for a packet that found the FIFO full");
    // drain: with the reader always ready, valid must not drop until empty
    size_t total = 0;
    for (auto& p : m_q) total += p.beats.size();
    ready_pct = rp;
    size_t got = 0;
    uint64_t start = cycle;
    while (!m_q.empty() && cycle - start < 100000) {
      if (rp == 100) CHECK(top->rd_tvalid_o || cycle == start, "bubble in the read stream at cycle %lu", cycle);
      tick();
      got++;
    }
    if (rp == 100) CHECK(got == total, "read %zu beats in %zu cycles", total, got);
    drain(100);
  }

  // 3. limit_i: with limit L, exactly L packets fit.
  for (int L = 1; L <= DEPTH; L++) {
    limit = L;
    ready_pct = 0;
    int c0 = n_commit, d0 = n_drop_full;
    for (int i = 0; i < L + 1; i++) {
      sched_pkt(1 + urand(SLOTW), true, 0, false);
      run_sched();
    }
    CHECK(n_commit - c0 == L && n_drop_full - d0 == 1, "limit %d: %d commits, %d drops", L, n_commit - c0,
          n_drop_full - d0);
    drain(100);
  }
  limit = DEPTH;

  // 4. Random traffic: commits, aborts, over-long packets, lone wr_end_i,
  //    random limit and reader.
  for (int it = 0; it < 3000; it++) {
    if (chance(5)) limit = 1 + urand(DEPTH);
    if (chance(1)) limit = chance(50) ? 0 : DEPTH + 1 + urand(3);  // clamped values
    if (chance(10)) ready_pct = urand(101);
    if (chance(5)) {  // wr_end_i with no packet open: no-op
      In c;
      c.end = true;
      c.ok = chance(50);
      sched.push_back(c);
    }
    int len = chance(10) ? SLOTW + 1 + urand(3) : 1 + urand(SLOTW);
    sched_pkt(len, chance(80), urand(40), chance(50));
    run_sched();
    int idle = urand(4);
    for (int i = 0; i < idle; i++) tick();
  }
  limit = DEPTH;
  drain(100);
  CHECK(n_read == n_commit, "%d committed, %d read", n_commit, n_read);
  CHECK(n_commit > 500 && n_drop_full > 20 && n_abort > 100 && n_ovf > 50,
        "weak coverage: %d commits, %d full drops, %d aborts, %d overflows", n_commit, n_drop_full, n_abort, n_ovf);
  std::printf("  %d commits, %d full drops, %d aborts, %d overflows\n", n_commit, n_drop_full, n_abort, n_ovf);
  top->final();
  tb_coverage_write();
  top.reset();  // before static destruction (Verilator context)
  return finish("ib_pkt_fifo");
}
