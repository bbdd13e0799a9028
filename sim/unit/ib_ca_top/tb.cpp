// Unit harness for ib_ca_top (the whole CA port). Expected values come from
// the reference vectors (tests/vectors) and ibspec: V1 in -> SMA RX gets V1's
// MAD with the DR receive result (hop pointer 2, ReturnPath[1] = port 1); the
// SMA's V2-style response -> exactly V2 on the wire; V2 in -> SM RX with hop
// pointer 0; an SM request built from V1's MAD -> exactly V1 on the wire.
// Bad VCRC / ICRC / DLID, DR discards, bad header, port Down are dropped and
// counted (read through the register interface). A stress phase runs SMA
// echo + SM requests with random idle gaps and random tready everywhere.
// link_up_i / port_state_o / idle_o (docs/fabric.md, docs/arch.md): PortState
// Down while the link is down (SMPs dropped, counted SmiPortDown), Init when
// it comes back; the wire TX discards whole packets that start while the link
// is down and finishes one already on the wire; idle_o = 1 exactly when
// nothing is in the port: checked against the harness's own bookkeeping, and
// proven safe by skipping clock edges whenever idle_o = 1 and no input is
// presented (every exact-packet and counter check runs with the skipping on).
// SM receive queue (docs/decisions.md: "a response that arrives with no receive
// WQE posted is dropped by the RTL and counted (VL15Dropped)"): the harness
// rings the sm_rq_* doorbell and keeps its own count of posted WQEs (0 after
// reset, +n per post, a clear first, saturating at 2^16-1, -1 per MAD that
// starts on SM RX): no MAD reaches SM RX without one; with none posted a MAD
// for the SM is discarded whole and counted once, even with SM RX never
// ready, and the SMA's requests behind it still arrive; a post of n lets
// exactly n through; both VL15Dropped sources firing at any relative time
// count every drop once.
// The test-only counter write of simulation builds (ib_port_regs, ib_ca_top's
// event stage): a write of V to a counter presets it; an event in the cycle
// before the write is overwritten, one in the write's own cycle loses to it
// (withdrawn, as by a clear), one after it counts on from V.
#include <deque>
#include <memory>

#include "Vib_ca_top.h"
#include "gsi_model.h"
#include "tb_util.h"
#include "verilated.h"

// ---------------------------------------------------------------------------
// Spec constants (ib_pkg register map, ctr_e)
// ---------------------------------------------------------------------------
enum : uint8_t {
  kRegId = 0x00,
  kRegPortLid = 0x01,
  kRegPortLmc = 0x02,
  kRegMasterSmLid = 0x03,
  kRegMasterSmSl = 0x04,
  kRegPortState = 0x05,
  kRegRxDepth = 0x08,
  kRegCtrClearSel = 0x0E,
  kRegCtrClear = 0x0F,
  kRegCtrBase = 0x10,
  kRegPkeyCap = 0x40,
  kRegPkeyIdx = 0x41,
  kRegPkeyData = 0x42,
};
enum Ctr {
  CtrRxPkts, CtrRxVcrcErr, CtrRxLverErr, CtrRxLnhErr, CtrRxLenErr, CtrRxDataPkts, CtrVl15Dropped,
  CtrSmiIcrcErr, CtrSmiBadHdr, CtrSmiLidErr, CtrSmiDrDiscard, CtrSmiPortDown, CtrSmiToSma, CtrSmiToSm,
  CtrSqDrDiscard, CtrSqLocal, CtrSqPkts, CtrTxVl15Pkts, CtrTxDataPkts, CtrDataIcrcErr, CtrGsiBadHdr,
  CtrGsiGmps, CtrRxWords, CtrTxWords, CtrMkeyViol, CtrPkeyViol, CtrQkeyViol, NumCtrs
};
static const char* kCtrName[] = {"RxPkts", "RxVcrcErr", "RxLverErr", "RxLnhErr", "RxLenErr", "RxDataPkts",
                                 "Vl15Dropped", "SmiIcrcErr", "SmiBadHdr", "SmiLidErr", "SmiDrDiscard",
                                 "SmiPortDown", "SmiToSma", "SmiToSm", "SqDrDiscard", "SqLocal", "SqPkts",
                                 "TxVl15Pkts", "TxDataPkts", "DataIcrcErr", "GsiBadHdr", "GsiGmps",
                                 "RxWords", "TxWords", "MkeyViol", "PkeyViol", "QkeyViol"};
static_assert(sizeof(kCtrName) / sizeof(kCtrName[0]) == NumCtrs, "counter names");
static constexpr int kMad = 28;         // packet byte of MAD byte 0
static constexpr int kMadBeats = 256 / kDataB;

// ICRC: CRC-32 (zlib) over LRH..MAD with LRH.VL and BTH.resv8a as 1s, LSB first.
static uint32_t crc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : (c >> 1);
  }
  return c ^ 0xFFFFFFFFu;
}
static uint32_t icrc_of(const Bytes& p) {
  Bytes m(p.begin(), p.begin() + 284);
  m[0] |= 0xF0;
  m[12] = 0xFF;
  return crc32(m.data(), m.size());
}
// Recompute ICRC and VCRC of a 290-byte packet.
static void fix_crcs(Bytes& p) {
  uint32_t c = icrc_of(p);
  for (int i = 0; i < 4; i++) p[284 + i] = (c >> (8 * i)) & 0xFF;
  fix_vcrc(p);
}
static Bytes mad_of(const Bytes& p) { return Bytes(p.begin() + kMad, p.begin() + kMad + 256); }

// ---------------------------------------------------------------------------
// Agents
// ---------------------------------------------------------------------------
static std::unique_ptr<Vib_ca_top> top;
static uint64_t cycle = 0;

struct RxMad {
  Bytes b;
  uint16_t slid, dlid;
  uint8_t sl, port, cls, hp, hc;
};
struct TxMad {
  Bytes b;            // 256 bytes
  uint16_t m0, m1;    // SMA: slid, dlid; SM: dlid, (unused)
  uint8_t sl, pb;     // SM: path bits
};

// The word counters as the spec defines them: the sum of PktLen of every
// packet the harness sent into wire RX that passes the link checks
// (gsi_model.h link_good), and of every packet that left on the wire;
// zeroed by reset and by the counter clears.
static uint64_t mw_rx = 0, mw_tx = 0;
// wire RX driver
static std::deque<Bytes> rx_q;
static Bytes rx_cur;
static size_t rx_off = 0;
static int rx_gap = 30;
static uint64_t rx_last_cycle = 0;
// TX sinks and MAD sinks
static int tx_ready_pct = 60, sma_ready_pct = 60, sm_ready_pct = 60;
static std::vector<Bytes> wire_out;
static Bytes wire_cur;
static std::vector<RxMad> sma_out, sm_out;
static RxMad sma_cur, sm_cur;
static std::vector<std::pair<Bytes, bool>> drx_out;
static std::vector<int> drx_reason_out;  // drx_reason_o with each drx_out packet's tlast
static Bytes drx_cur;
// MAD sources
struct Src {
  std::deque<TxMad> q;
  int beat = 0;
  bool presenting = false;
  int gap = 30;
};
static Src sma_src, sm_src, trap_src;
// SMA echo (stress): each SMA RX MAD -> a V2-style response
static bool sma_echo = false;
static Bytes echo_mad;
// latency: last wire RX beat of a packet -> first SMA/SM RX valid
static bool lat_armed = false;
static uint64_t lat_max = 0;
// data TX source (LRH..ICRC packets) and link
static std::deque<Bytes> dtx_q;
static size_t dtx_off = 0;
static int dtx_gap = 20;
static bool dtx_presenting = false;  // a beat once presented stays until taken
static uint8_t link_prev = 1;
// clock gating: skip the edge when idle_o = 1 and no input is presented
static bool gate_idle = true;
static uint64_t gated = 0;
// idle_o expectation: 0 whenever the harness knows a packet is inside
static bool expect_busy = false;
// SM receive queue: doorbells to ring, one per clocked cycle (n, clear);
// the count of WQEs posted and not used that the RTL must hold; an SM RX
// packet is open (its first beat has been presented)
struct Bell {
  uint8_t n;
  bool clr;
};
static std::deque<Bell> rq_bells;
static uint32_t rq_wqes = 0;
static constexpr uint32_t kRqMax = 0xFFFF;
static bool sm_open = false;
static int rq_bell_pct = 0;  // random doorbells: chance per cycle (0 = off)

static void drive_src(Src& s, auto& tdata, uint8_t& tvalid, uint8_t& tlast) {
  if (!s.presenting && !s.q.empty() && !chance(s.gap)) s.presenting = true;
  if (s.presenting) {
    put_bytes(tdata, &s.q.front().b[s.beat * kDataB], kDataB);
    tlast = s.beat == kMadBeats - 1;
  } else {
    uint8_t junk[16];
    for (auto& j : junk) j = urand(256);
    put_bytes(tdata, junk, kDataB);
    tlast = urand(2);
  }
  tvalid = s.presenting;
}
static void take_src(Src& s, bool ready) {
  if (s.presenting && ready) {
    s.presenting = false;
    if (++s.beat == kMadBeats) {
      s.beat = 0;
      s.q.pop_front();
    }
  }
}

template <typename T>
static void sink_mad(bool valid, bool ready, const T& tdata, bool tlast, RxMad meta, RxMad& cur,
                     std::vector<RxMad>& out, const char* name) {
  if (!(valid && ready)) return;
  uint8_t b[16];
  get_bytes(tdata, b, kDataB);
  if (cur.b.empty()) {
    cur = meta;
    cur.b.clear();
  } else {
    CHECK(meta.slid == cur.slid && meta.dlid == cur.dlid && meta.sl == cur.sl && meta.port == cur.port &&
              meta.cls == cur.cls && meta.hp == cur.hp && meta.hc == cur.hc,
          "%s meta changed inside a packet at cycle %lu", name, cycle);
  }
  cur.b.insert(cur.b.end(), b, b + kDataB);
  CHECK(tlast == (cur.b.size() == 256), "%s tlast at byte %zu", name, cur.b.size());
  if (tlast) {
    out.push_back(cur);
    cur = RxMad{};
  }
}

static void tick() {
  // ---- drive inputs for this cycle
  if (rx_cur.empty() && !rx_q.empty()) {
    rx_cur = rx_q.front();
    rx_q.pop_front();
    rx_off = 0;
  }
  uint8_t b[16];
  for (auto& j : b) j = urand(256);
  top->rx_tvalid_i = 0;
  top->rx_tlast_i = urand(2);
  top->rx_tkeep_i = keep_mask(1 + urand(kDataB));
  bool rx_last_beat = false;
  if (!rx_cur.empty() && !chance(rx_gap)) {
    size_t n = std::min<size_t>(kDataB, rx_cur.size() - rx_off);
    std::memcpy(b, &rx_cur[rx_off], n);
    top->rx_tkeep_i = keep_mask(n);
    top->rx_tlast_i = rx_off + n == rx_cur.size();
    top->rx_tvalid_i = 1;
    rx_last_beat = top->rx_tlast_i;
    rx_off += n;
    if (rx_off == rx_cur.size()) {
      if (link_good(rx_cur)) mw_rx += pktlen_of(rx_cur);  // IBA PortRcvData
      rx_cur.clear();
    }
  }
  put_bytes(top->rx_tdata_i, b, kDataB);

  top->tx_tready_i = chance(tx_ready_pct);
  top->sma_rx_tready_i = chance(sma_ready_pct);
  top->sm_rx_tready_i = chance(sm_ready_pct);
  if (rq_bell_pct > 0 && rq_bells.empty() && top->rst_ni && chance(rq_bell_pct)) {
    rq_bells.push_back(Bell{static_cast<uint8_t>(urand(4)), chance(10)});
  }
  top->sm_rq_post_i = 0;
  top->sm_rq_post_n_i = urand(256);  // ignored without sm_rq_post_i
  top->sm_rq_clr_i = 0;
  if (top->rst_ni && !rq_bells.empty()) {
    top->sm_rq_post_i = rq_bells.front().n > 0 || chance(20);  // a post of 0 is a no-op
    top->sm_rq_post_n_i = rq_bells.front().n;
    top->sm_rq_clr_i = rq_bells.front().clr;
    if (!top->sm_rq_post_i && !top->sm_rq_clr_i) rq_bells.pop_front();  // nothing to ring
  }
  top->dtx_tvalid_i = 0;
  top->dtx_tlast_i = 0;
  top->dtx_tkeep_i = keep_mask(kDataB);
  bool dtx_last = false;
  if (!dtx_q.empty() && !dtx_presenting && !chance(dtx_gap)) dtx_presenting = true;
  if (dtx_presenting) {
    const Bytes& d = dtx_q.front();
    size_t n = std::min<size_t>(kDataB, d.size() - dtx_off);
    uint8_t db[16] = {};
    std::memcpy(db, &d[dtx_off], n);
    put_bytes(top->dtx_tdata_i, db, kDataB);
    top->dtx_tkeep_i = keep_mask(n);
    top->dtx_tlast_i = dtx_last = dtx_off + n == d.size();
    top->dtx_tvalid_i = 1;
  }
  drive_src(sma_src, top->sma_tx_tdata_i, top->sma_tx_tvalid_i, top->sma_tx_tlast_i);
  drive_src(sm_src, top->sm_tx_tdata_i, top->sm_tx_tvalid_i, top->sm_tx_tlast_i);
  drive_src(trap_src, top->trap_tx_tdata_i, top->trap_tx_tvalid_i, top->trap_tx_tlast_i);
  if (!sma_src.q.empty()) {
    top->sma_tx_slid_i = sma_src.q.front().m0;
    top->sma_tx_dlid_i = sma_src.q.front().m1;
    top->sma_tx_sl_i = sma_src.q.front().sl;
  }
  if (!sm_src.q.empty()) {
    top->sm_tx_dlid_i = sm_src.q.front().m0;
    top->sm_tx_sl_i = sm_src.q.front().sl;
    top->sm_tx_path_bits_i = sm_src.q.front().pb;
  }

  top->clk_i = 0;
  top->eval();

  // ---- clock gating: idle and nothing presented -> this edge may be
  // skipped without any change of behaviour (idle_o's contract)
  bool no_input = !top->rx_tvalid_i && !top->dtx_tvalid_i && !top->sma_tx_tvalid_i && !top->sm_tx_tvalid_i &&
                  !top->trap_tx_tvalid_i && !top->reg_we_i && !top->sm_rq_post_i && !top->sm_rq_clr_i &&
                  top->link_up_i == link_prev;
  if (top->rst_ni && top->idle_o) {
    CHECK(!expect_busy, "idle_o = 1 at cycle %lu while a packet is in the port (rx %zu/%zu sma %zu wire %zu dtx %zu)", cycle, rx_off, rx_cur.size(), sma_out.size(), wire_out.size(), dtx_q.size());
    CHECK(!top->tx_tvalid_o && !top->sma_rx_tvalid_o && !top->sm_rx_tvalid_o && !top->drx_tvalid_o,
          "idle_o = 1 with an output valid at cycle %lu", cycle);
  }
  if (gate_idle && top->rst_ni && top->idle_o && no_input && chance(50)) {
    gated++;
    cycle++;
    return;
  }
  link_prev = top->link_up_i;

  // ---- sample handshakes (none in reset: until a clock edge has seen
  // rst_ni low, the outputs hold the model's random initial state)
  if (!top->rst_ni) {
    top->clk_i = 1;
    top->eval();
    cycle++;
    link_prev = top->link_up_i;
    return;
  }
  // SM receive queue: a MAD starts on SM RX only with a WQE posted, and uses
  // one; then this cycle's doorbell (a clear first, then the post).
  bool rq_take = false;
  if (top->sm_rx_tvalid_o && !sm_open) {
    CHECK(rq_wqes > 0, "a MAD started on SM RX at cycle %lu with no receive WQE posted", cycle);
    rq_take = true;
  }
  if (top->sm_rx_tvalid_o) sm_open = !(top->sm_rx_tready_i && top->sm_rx_tlast_o);
  {
    uint32_t left = top->sm_rq_clr_i ? 0 : rq_wqes - (rq_take && rq_wqes > 0 ? 1 : 0);
    uint32_t add = top->sm_rq_post_i ? top->sm_rq_post_n_i : 0;
    rq_wqes = std::min(kRqMax, left + add);
    if (top->sm_rq_post_i || top->sm_rq_clr_i) rq_bells.pop_front();
  }
  if (lat_armed && (top->sma_rx_tvalid_o || top->sm_rx_tvalid_o)) {
    lat_max = std::max(lat_max, cycle - rx_last_cycle);
    lat_armed = false;
  }
  if (top->tx_tvalid_o && top->tx_tready_i) {
    uint8_t o[16];
    get_bytes(top->tx_tdata_o, o, kDataB);
    int n = popcount(top->tx_tkeep_o);
    wire_cur.insert(wire_cur.end(), o, o + n);
    if (top->tx_tlast_o) {
      mw_tx += pktlen_of(wire_cur);  // IBA PortXmitData
      wire_out.push_back(wire_cur);
      wire_cur.clear();
    }
  }
  if (top->drx_tvalid_o) {
    uint8_t o[16];
    get_bytes(top->drx_tdata_o, o, kDataB);
    int n = popcount(top->drx_tkeep_o);
    drx_cur.insert(drx_cur.end(), o, o + n);
    if (top->drx_tlast_o) {
      drx_out.push_back({drx_cur, top->drx_tuser_o != 0});
      drx_reason_out.push_back(top->drx_reason_o);
      drx_cur.clear();
    }
  }
  sink_mad(top->sma_rx_tvalid_o, top->sma_rx_tready_i, top->sma_rx_tdata_o, top->sma_rx_tlast_o,
           RxMad{{}, top->sma_rx_slid_o, top->sma_rx_dlid_o, top->sma_rx_sl_o, top->sma_rx_port_o,
                 top->sma_rx_mgmt_class_o, top->sma_rx_hop_ptr_o, top->sma_rx_hop_cnt_o},
           sma_cur, sma_out, "SMA RX");
  sink_mad(top->sm_rx_tvalid_o, top->sm_rx_tready_i, top->sm_rx_tdata_o, top->sm_rx_tlast_o,
           RxMad{{}, top->sm_rx_slid_o, top->sm_rx_dlid_o, top->sm_rx_sl_o, top->sm_rx_port_o,
                 top->sm_rx_mgmt_class_o, top->sm_rx_hop_ptr_o, top->sm_rx_hop_cnt_o},
           sm_cur, sm_out, "SM RX");
  take_src(sma_src, top->sma_tx_tready_o);
  take_src(sm_src, top->sm_tx_tready_o);
  take_src(trap_src, top->trap_tx_tready_o);
  if (top->dtx_tvalid_i && top->dtx_tready_o) {
    dtx_off += popcount(top->dtx_tkeep_i);
    dtx_presenting = false;
    if (dtx_last) {
      dtx_q.pop_front();
      dtx_off = 0;
    }
  }
  if (rx_last_beat) {
    rx_last_cycle = cycle;
    lat_armed = true;
  }
  if (sma_echo && !sma_out.empty()) {
    for (auto& m : sma_out) {
      Bytes r = echo_mad;
      r[6] = m.b[6];
      sma_src.q.push_back(TxMad{r, m.slid, m.dlid, m.sl, 0});
    }
    sma_out.clear();
  }

  top->clk_i = 1;
  top->eval();
  cycle++;
}

static void run(int n) {
  for (int i = 0; i < n; i++) tick();
}
// Cycle budgets are written for DataW >= 32 (a 290-byte packet in <= 73
// beats); DataW 8 moves a byte a beat, so its budgets are 4x.
static constexpr int kTimeScale = kDataB < 4 ? 4 / kDataB : 1;
template <typename F>
static bool run_until(F done, int max) {
  max *= kTimeScale;
  for (int i = 0; i < max; i++) {
    if (done()) return true;
    tick();
  }
  return done();
}
static uint32_t reg_read(uint8_t a) {
  top->reg_we_i = 0;
  top->reg_addr_i = a;
  top->eval();
  return top->reg_rdata_o;
}
static void reg_write(uint8_t a, uint32_t v) {
  if (a == kRegCtrClear || (a == kRegCtrClearSel && (v >> CtrRxWords & 1))) mw_rx = 0;
  if (a == kRegCtrClear || (a == kRegCtrClearSel && (v >> CtrTxWords & 1))) mw_tx = 0;
  top->reg_we_i = 1;
  top->reg_addr_i = a;
  top->reg_wdata_i = v;
  tick();
  top->reg_we_i = 0;
}
// Reset; then post `wqes` receive WQEs for the SM (the phases that do not
// test the receive queue take every MAD).
static void reset(uint32_t wqes = 4096) {
  top->rst_ni = 0;
  mw_rx = mw_tx = 0;
  rq_bells.clear();
  rq_wqes = 0;
  sm_open = false;
  rq_bell_pct = 0;
  rx_q.clear();
  rx_cur.clear();
  rx_off = 0;
  dtx_q.clear();
  dtx_off = 0;
  dtx_presenting = false;
  sma_src = Src{};
  sm_src = Src{};
  trap_src = Src{};
  run(5);
  top->rst_ni = 1;
  wire_out.clear();
  wire_cur.clear();
  sma_out.clear();
  sm_out.clear();
  sma_cur = RxMad{};
  sm_cur = RxMad{};
  drx_out.clear();
  drx_cur.clear();
  lat_armed = false;
  for (uint32_t left = wqes; left > 0;) {
    uint8_t n = static_cast<uint8_t>(std::min<uint32_t>(left, 255));
    rq_bells.push_back(Bell{n, false});
    left -= n;
  }
  run(3);
  run_until([] { return rq_bells.empty(); }, 1000);
}
// Ring the doorbell: post n WQEs (clear first if clr) and wait until rung.
static void rq_post(uint32_t n, bool clr = false) {
  do {
    uint8_t k = static_cast<uint8_t>(std::min<uint32_t>(n, 255));
    rq_bells.push_back(Bell{k, clr});
    n -= k;
    clr = false;
  } while (n > 0);
  run_until([] { return rq_bells.empty(); }, 100000);
}
static bool quiet() {
  return rx_q.empty() && rx_cur.empty() && sma_src.q.empty() && sm_src.q.empty() && trap_src.q.empty() &&
         dtx_q.empty() && rq_bells.empty();
}
// Run until the sources are drained and the pipeline has settled.
static void settle() {
  run_until([] { return quiet() && top->idle_o; }, 20000);
  run(300);
}
// Every counter against `want`, but the word counters against mw_rx/mw_tx.
static void expect_ctrs(const uint32_t (&want)[NumCtrs], const char* step) {
  for (int i = 0; i < NumCtrs; i++) {
    uint32_t got = reg_read(kRegCtrBase + i);
    uint32_t w = i == CtrRxWords ? uint32_t(mw_rx) : i == CtrTxWords ? uint32_t(mw_tx) : want[i];
    CHECK(got == w, "%s: counter %s = %u, expected %u", step, kCtrName[i], got, w);
  }
}
static void check_mad(const RxMad& m, const Bytes& want, uint16_t slid, uint16_t dlid, uint8_t cls, uint8_t hp,
                      uint8_t hc, const char* what) {
  CHECK(m.b == want, "%s: MAD bytes differ", what);
  for (size_t i = 0; i < 256 && i < m.b.size(); i++) {
    if (m.b[i] != want[i]) {
      std::fprintf(stderr, "  MAD byte %zu: got %02x want %02x\n", i, m.b[i], want[i]);
      break;
    }
  }
  CHECK(m.slid == slid && m.dlid == dlid, "%s: meta slid %04x dlid %04x", what, m.slid, m.dlid);
  CHECK(m.sl == 0 && m.port == 1, "%s: meta sl %u port %u", what, m.sl, m.port);
  CHECK(m.cls == cls && m.hp == hp && m.hc == hc, "%s: meta class %02x hop_ptr %u hop_cnt %u", what, m.cls, m.hp,
        m.hc);
}
static void check_wire(const Bytes& got, const Bytes& want, const char* what) {
  CHECK(got == want, "%s: wire packet differs (%zu bytes)", what, got.size());
  for (size_t i = 0; i < got.size() && i < want.size(); i++) {
    if (got[i] != want[i]) {
      std::fprintf(stderr, "  wire byte %zu: got %02x want %02x\n", i, got[i], want[i]);
      break;
    }
  }
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  Verilated::randReset(2);
  std::string root = argc > 1 ? argv[1] : ".";
  top = std::make_unique<Vib_ca_top>();

  // Harness CRC engines against the catalogue check values and the vectors.
  const char* chk = "123456789";
  CHECK(crc32(reinterpret_cast<const uint8_t*>(chk), 9) == 0xCBF43926u, "crc32 check value");
  auto vec = read_vectors(root);
  for (auto& v : vec) {
    Bytes f = v;
    fix_crcs(f);
    CHECK(f == v, "vector ICRC/VCRC do not match the harness engines");
  }
  const Bytes& V1 = vec[0];
  const Bytes& V2 = vec[1];
  const Bytes& V3 = vec[2];

  top->reg_we_i = 0;
  top->reg_addr_i = 0;
  top->reg_wdata_i = 0;
  top->link_up_i = 1;
  reset();
  CHECK(reg_read(kRegId) == 0x564C3135u, "RegId");
  CHECK(reg_read(kRegPortState) == 2 && top->port_state_o == 2, "PortState after reset with the link up");
  CHECK(top->idle_o, "idle_o = 0 after reset");

  // ---- Phase 1: one port, step by step -----------------------------------
  uint32_t c[NumCtrs] = {};
  // V1 in: DR receive rules at a CA (hp = hc = 1, DrDLID permissive):
  // RP[1] := 1, send rules hp 1 -> 2 = hc+1 -> SMA.
  rx_q.push_back(V1);
  CHECK(run_until([] { return sma_out.size() == 1; }, 5000), "V1: nothing on SMA RX");
  if (sma_out.size() == 1) {
    Bytes want = mad_of(V1);
    want[6] = 2;
    want[192 + 1] = 1;
    check_mad(sma_out[0], want, 0xFFFF, 0xFFFF, 0x81, 2, 1, "V1 -> SMA");
  }
  CHECK(lat_max <= 4, "last wire beat -> first SMA RX beat took %lu cycles", lat_max);
  sma_out.clear();
  c[CtrRxPkts]++, c[CtrSmiToSma]++;

  // The SMA answers like V2 (hop pointer as received: 2) -> exactly V2.
  Bytes resp = mad_of(V2);
  resp[6] = 2;
  sma_src.q.push_back(TxMad{resp, 0xFFFF, 0xFFFF, 0, 0});
  CHECK(run_until([] { return wire_out.size() == 1; }, 5000), "V2 response: nothing on the wire");
  if (wire_out.size() == 1) check_wire(wire_out[0], V2, "SMA response -> V2");
  wire_out.clear();
  c[CtrSqPkts]++, c[CtrTxVl15Pkts]++;

  // V2 in (at the SM's CA): D = 1, hp = 1, DrSLID permissive -> hp 0, SM.
  rx_q.push_back(V2);
  CHECK(run_until([] { return sm_out.size() == 1; }, 5000), "V2: nothing on SM RX");
  if (sm_out.size() == 1) {
    Bytes want = mad_of(V2);
    want[6] = 0;
    check_mad(sm_out[0], want, 0xFFFF, 0xFFFF, 0x81, 0, 1, "V2 -> SM");
  }
  sm_out.clear();
  c[CtrRxPkts]++, c[CtrSmiToSm]++;

  // Data VL packet passes to drx.
  rx_q.push_back(V3);
  settle();
  CHECK(drx_out.size() == 1 && drx_out[0].first == V3 && !drx_out[0].second, "V3 on the data RX port");
  drx_out.clear();
  c[CtrRxPkts]++, c[CtrRxDataPkts]++, c[CtrGsiGmps]++;
  CHECK(mw_rx == 3 * 72 && mw_tx == 72, "word model: rx %lu tx %lu", mw_rx, mw_tx);

  // Bad VCRC (a MAD byte flipped, CRCs not fixed): link drops it.
  {
    Bytes p = V1;
    p[40] ^= 0x5A;
    rx_q.push_back(p);
    c[CtrRxPkts]++, c[CtrRxVcrcErr]++;
  }
  // Bad ICRC (VCRC recomputed): SMI drops it.
  {
    Bytes p = V1;
    p[40] ^= 0x5A;
    fix_vcrc(p);
    rx_q.push_back(p);
    c[CtrRxPkts]++, c[CtrSmiIcrcErr]++;
  }
  // Wrong DLID on a DR SMP (DLID 7, not permissive, port LID 0).
  {
    Bytes p = V1;
    p[2] = 0x00, p[3] = 0x07;
    fix_crcs(p);
    rx_q.push_back(p);
    c[CtrRxPkts]++, c[CtrSmiLidErr]++;
  }
  // Bad header: BaseVersion 2.
  {
    Bytes p = V1;
    p[kMad + 0] = 2;
    fix_crcs(p);
    rx_q.push_back(p);
    c[CtrRxPkts]++, c[CtrSmiBadHdr]++;
  }
  // DR receive discard: D = 0, hc = 1, hp = 0 (C14-9:1).
  {
    Bytes p = V1;
    p[kMad + 6] = 0;
    fix_crcs(p);
    rx_q.push_back(p);
    c[CtrRxPkts]++, c[CtrSmiDrDiscard]++;
  }
  // DR receive discard: returning SMP at hp = 1 with DrSLID not permissive.
  {
    Bytes p = V2;
    p[kMad + 32] = 0x00, p[kMad + 33] = 0x09;
    fix_crcs(p);
    rx_q.push_back(p);
    c[CtrRxPkts]++, c[CtrSmiDrDiscard]++;
  }
  settle();
  CHECK(sma_out.empty() && sm_out.empty() && wire_out.empty() && drx_out.empty(), "a bad packet was delivered");
  expect_ctrs(c, "bad packets");

  // Port Down: SMPs dropped and counted.
  reg_write(kRegPortState, 1);
  rx_q.push_back(V1);
  settle();
  c[CtrRxPkts]++, c[CtrSmiPortDown]++;
  reg_write(kRegPortState, 2);
  CHECK(sma_out.empty(), "SMP delivered while Down");
  expect_ctrs(c, "port down");

  // LID-routed SMP: LID 5, LMC 1 -> DLID 6 is ours; class 0x01, no DR patch.
  reg_write(kRegPortLid, 5);
  reg_write(kRegPortLmc, 1);
  {
    Bytes p = V1;
    p[2] = 0x00, p[3] = 0x06;   // DLID 6
    p[6] = 0x00, p[7] = 0x01;   // SLID 1
    p[kMad + 1] = 0x01;         // SubnLID
    fix_crcs(p);
    rx_q.push_back(p);
    CHECK(run_until([] { return sma_out.size() == 1; }, 5000), "LID-routed SMP: nothing on SMA RX");
    if (sma_out.size() == 1) check_mad(sma_out[0], mad_of(p), 0x0001, 0x0006, 0x01, 0, 0, "LID-routed -> SMA");
    sma_out.clear();
    c[CtrRxPkts]++, c[CtrSmiToSma]++;
    // DLID 7 is not ours (LID 5, LMC 1 -> 5..6).
    Bytes q = p;
    q[3] = 0x07;
    fix_crcs(q);
    rx_q.push_back(q);
    // Permissive SLID on a LID-routed SMP.
    Bytes r = p;
    r[6] = 0xFF, r[7] = 0xFF;
    fix_crcs(r);
    rx_q.push_back(r);
    settle();
    CHECK(sma_out.empty(), "bad LID-routed SMP delivered");
    c[CtrRxPkts] += 2, c[CtrSmiLidErr] += 2;
  }
  // LID-routed response: LRH DLID := request SLID (1), SLID := request DLID (6).
  {
    Bytes m = mad_of(V2);
    m[1] = 0x01;
    sma_src.q.push_back(TxMad{m, 0x0001, 0x0006, 0, 0});
    Bytes want = V2;
    want[2] = 0x00, want[3] = 0x01;
    want[6] = 0x00, want[7] = 0x06;
    want[19] = 1;  // PSN 1: second packet sent
    want[kMad + 1] = 0x01;
    fix_crcs(want);
    CHECK(run_until([] { return wire_out.size() == 1; }, 5000), "LID-routed response: nothing on the wire");
    if (wire_out.size() == 1) check_wire(wire_out[0], want, "LID-routed response");
    wire_out.clear();
    c[CtrSqPkts]++, c[CtrTxVl15Pkts]++;
  }
  // SQ: DR request whose InitialPath[1] is not this port -> discard.
  {
    Bytes m = mad_of(V1);
    m[6] = 0;
    m[128 + 1] = 2;
    sm_src.q.push_back(TxMad{m, 0xFFFF, 0, 0, 0});
    c[CtrSqDrDiscard]++;
  }
  // SQ: DR request with hop count 0 -> local, not sent.
  {
    Bytes m = mad_of(V1);
    m[6] = 0;
    m[7] = 0;
    sm_src.q.push_back(TxMad{m, 0xFFFF, 0, 0, 0});
    c[CtrSqLocal]++;
  }
  settle();
  CHECK(wire_out.empty(), "discarded/local SMP reached the wire");
  expect_ctrs(c, "sq discard/local");

  // Trap (class 0x01, method Trap) -> DLID MasterSMLID, SL MasterSMSL, SLID LID.
  reg_write(kRegMasterSmLid, 0x0003);
  reg_write(kRegMasterSmSl, 2);
  {
    Bytes m(256, 0);
    m[0] = 1, m[1] = 0x01, m[2] = 1, m[3] = 0x05;
    for (int i = 8; i < 16; i++) m[i] = 0x40 + i;
    m[16] = 0x00, m[17] = 0x02;  // Notice
    for (int i = 64; i < 128; i++) m[i] = i;
    trap_src.q.push_back(TxMad{m, 0, 0, 0, 0});
    Bytes want(290, 0);
    const uint8_t hdr[28] = {0xF0, 0x22, 0x00, 0x03, 0x00, 72, 0x00, 0x05,  // LRH
                             0x64, 0x00, 0xFF, 0xFF, 0x00, 0, 0, 0, 0, 0, 0, 2,  // BTH, PSN 2
                             0, 0, 0, 0, 0, 0, 0, 0};                         // DETH
    std::memcpy(want.data(), hdr, 28);
    std::memcpy(want.data() + kMad, m.data(), 256);
    fix_crcs(want);
    CHECK(run_until([] { return wire_out.size() == 1; }, 5000), "trap: nothing on the wire");
    if (wire_out.size() == 1) check_wire(wire_out[0], want, "trap");
    wire_out.clear();
    c[CtrSqPkts]++, c[CtrTxVl15Pkts]++;
  }
  settle();
  expect_ctrs(c, "phase 1");
  reg_write(kRegCtrClear, 1);
  for (int i = 0; i < NumCtrs; i++) CHECK(reg_read(kRegCtrBase + i) == 0, "counter %s not cleared", kCtrName[i]);

  // ---- Phase 1b: idle_o, link_up_i, port_state_o ---------------------------
  {
    reset();
    std::fill(std::begin(c), std::end(c), 0u);
    CHECK(top->idle_o, "idle_o = 0 after reset");
    Bytes resp2 = mad_of(V2);
    resp2[6] = 2;
    const Bytes data_pkt(V3.begin(), V3.end() - 2);  // LRH..ICRC; the port appends the VCRC
    auto v2_psn = [&](uint32_t psn) {
      Bytes w = V2;
      w[17] = (psn >> 16) & 0xFF, w[18] = (psn >> 8) & 0xFF, w[19] = psn & 0xFF;
      fix_crcs(w);
      return w;
    };
    uint32_t psn = 0;

    // RX: busy from the first clocked beat until the SMA took the MAD; the
    // MAD waits in the RX buffer (SMA RX not ready) with idle_o = 0.
    sma_ready_pct = 0;
    rx_q.push_back(V1);
    CHECK(run_until([] { return rx_off > 0 || (rx_cur.empty() && rx_q.empty()); }, 1000), "RX: no beat");
    expect_busy = true;
    run(400 * kTimeScale);
    CHECK(sma_out.empty() && top->sma_rx_tvalid_o && !top->idle_o, "RX: SMP not held in the buffer");
    sma_ready_pct = 100;
    CHECK(run_until([] { return sma_out.size() == 1; }, 1000), "RX: SMP not delivered");
    expect_busy = false;
    run(1);
    CHECK(top->idle_o, "RX: idle_o = 0 after the SMP left");
    sma_out.clear();
    c[CtrRxPkts]++, c[CtrSmiToSma]++;

    // TX: busy from the first MAD beat taken until the wire took the last beat.
    tx_ready_pct = 25;
    sma_src.q.push_back(TxMad{resp2, 0xFFFF, 0xFFFF, 0, 0});
    CHECK(run_until([] { return sma_src.beat > 0 || sma_src.q.empty(); }, 1000), "TX: no MAD beat taken");
    expect_busy = true;
    CHECK(run_until([] { return wire_out.size() == 1; }, 5000), "TX: nothing on the wire");
    expect_busy = false;
    run(1);
    CHECK(top->idle_o, "TX: idle_o = 0 after the packet left");
    if (wire_out.size() == 1) check_wire(wire_out[0], v2_psn(psn), "TX response");
    psn++;
    wire_out.clear();
    c[CtrSqPkts]++, c[CtrTxVl15Pkts]++;

    // Data TX: busy from its first beat until it is on the wire, also while
    // the host pauses inside the packet and the wire has taken every beat.
    tx_ready_pct = 100;
    dtx_gap = 60;
    for (int k = 0; k < 3; k++) {
      dtx_q.push_back(data_pkt);
      CHECK(run_until([] { return dtx_off > 0 || dtx_q.empty(); }, 1000), "DTX: no beat taken");
      expect_busy = true;
      CHECK(run_until([] { return wire_out.size() == 1; }, 5000), "DTX: nothing on the wire");
      expect_busy = false;
      run(1);
      CHECK(top->idle_o, "DTX: idle_o = 0 after the packet left");
      if (wire_out.size() == 1) check_wire(wire_out[0], V3, "data TX");
      wire_out.clear();
      c[CtrTxDataPkts]++;
    }
    dtx_gap = 20;
    tx_ready_pct = 60;
    expect_ctrs(c, "idle phase");

    // Link down: PortState Down at the next edge, SMPs dropped and counted;
    // whatever the port sends is discarded whole (nothing on the wire, not
    // counted as sent); the port drains to idle.
    top->link_up_i = 0;
    top->eval();
    CHECK(!top->idle_o, "idle_o = 1 with a link change presented");
    tick();
    CHECK(reg_read(kRegPortState) == 1 && top->port_state_o == 1, "link down: PortState %u", top->port_state_o);
    // a data packet discarded while the host pauses inside it: busy until
    // its last beat is taken
    tx_ready_pct = 100;
    dtx_gap = 60;
    dtx_q.push_back(data_pkt);
    CHECK(run_until([] { return dtx_off > 0 || dtx_q.empty(); }, 1000), "link down: no data beat taken");
    expect_busy = true;
    CHECK(run_until([] { return dtx_q.empty(); }, 5000), "link down: data packet not taken");
    expect_busy = false;
    CHECK(run_until([] { return top->idle_o != 0; }, 10), "link down: port not idle after the discard");
    CHECK(wire_out.empty() && wire_cur.empty(), "link down: data packet not discarded whole");
    dtx_gap = 20;
    tx_ready_pct = 60;
    rx_q.push_back(V1);
    sma_src.q.push_back(TxMad{resp2, 0xFFFF, 0xFFFF, 0, 0});
    dtx_q.push_back(data_pkt);
    settle();
    CHECK(sma_out.empty() && sm_out.empty(), "link down: SMP delivered");
    CHECK(wire_out.empty() && wire_cur.empty(), "link down: %zu packets on the wire", wire_out.size());
    CHECK(top->idle_o, "link down: port did not drain");
    psn++;  // the SMI send engine sent it into the dead link
    c[CtrRxPkts]++, c[CtrSmiPortDown]++, c[CtrSqPkts]++;
    expect_ctrs(c, "link down");
    // an SMA write of PortState still works while the link stays down
    reg_write(kRegPortState, 3);
    CHECK(reg_read(kRegPortState) == 3, "PortState write while link down");

    // Link up: Init; traffic flows again.
    top->link_up_i = 1;
    tick();
    CHECK(reg_read(kRegPortState) == 2 && top->port_state_o == 2, "link up: PortState %u", top->port_state_o);
    rx_q.push_back(V1);
    sma_src.q.push_back(TxMad{resp2, 0xFFFF, 0xFFFF, 0, 0});
    CHECK(run_until([] { return wire_out.size() == 1 && sma_out.size() == 1; }, 5000), "link up: no traffic");
    if (wire_out.size() == 1) check_wire(wire_out[0], v2_psn(psn), "link up response");
    psn++;
    wire_out.clear();
    sma_out.clear();
    c[CtrRxPkts]++, c[CtrSmiToSma]++, c[CtrSqPkts]++, c[CtrTxVl15Pkts]++;
    settle();

    // The link falls while a packet is on the wire: it is finished whole; the
    // next one (not started) is discarded whole.
    tx_ready_pct = 20;
    sma_src.q.push_back(TxMad{resp2, 0xFFFF, 0xFFFF, 0, 0});
    sma_src.q.push_back(TxMad{resp2, 0xFFFF, 0xFFFF, 0, 0});
    CHECK(run_until([] { return !wire_cur.empty(); }, 5000), "fall: first packet did not start");
    top->link_up_i = 0;
    settle();
    CHECK(wire_out.size() == 1 && wire_cur.empty(), "fall: %zu packets on the wire (%zu bytes pending) cycle %lu",
          wire_out.size(), wire_cur.size(), cycle);
    if (wire_out.size() == 1) check_wire(wire_out[0], v2_psn(psn), "packet finished across the link fall");
    psn += 2;
    wire_out.clear();
    c[CtrSqPkts] += 2, c[CtrTxVl15Pkts]++;
    CHECK(reg_read(kRegPortState) == 1, "fall: PortState %u", reg_read(kRegPortState));
    // The link rises while a packet is being discarded: that one stays
    // discarded (none is cut), the next goes out.
    sma_src.q.push_back(TxMad{resp2, 0xFFFF, 0xFFFF, 0, 0});
    // wait until the send engine has written it (the discard at the wire
    // starts ~3 cycles later and lasts one cycle per beat), then rise
    CHECK(run_until([] { return sma_src.q.empty(); }, 5000), "rise: MAD not taken");
    CHECK(run_until([] { return top->sq_tx_beat_o == 0; }, 100), "rise: SQ still writing");
    run(2 + urand(290 / kDataB / 2));
    CHECK(!top->idle_o && top->tx_tvalid_o == 0, "rise: packet not being discarded");
    top->link_up_i = 1;
    sma_src.q.push_back(TxMad{resp2, 0xFFFF, 0xFFFF, 0, 0});
    settle();
    for (auto& w : wire_out) {
      // every packet on the wire is whole and valid: PSN psn (the first was
      // discarded whole) or, had the rise come before its first wire beat, psn
      uint32_t got = (w.size() == 290) ? ((w[17] << 16) | (w[18] << 8) | w[19]) : ~0u;
      CHECK(got == psn || got == psn + 1, "rise: unexpected packet (%zu bytes, PSN %u)", w.size(), got);
      if (got == psn || got == psn + 1) check_wire(w, v2_psn(got), "rise: whole packet");
    }
    CHECK(!wire_out.empty() && wire_out.size() <= 2, "rise: %zu packets on the wire", wire_out.size());
    c[CtrSqPkts] += 2, c[CtrTxVl15Pkts] += wire_out.size();
    psn += 2;
    wire_out.clear();
    tx_ready_pct = 60;
    expect_ctrs(c, "link fall/rise");

    // Reset with the link down: Down; the link comes up: Init.
    top->link_up_i = 0;
    reset();
    CHECK(reg_read(kRegPortState) == 1 && top->port_state_o == 1, "reset with link down: PortState %u",
          top->port_state_o);
    CHECK(top->idle_o, "idle_o = 0 after a reset with the link down");
    top->link_up_i = 1;
    tick();
    CHECK(reg_read(kRegPortState) == 2, "link up after reset: PortState %u", reg_read(kRegPortState));
  }

  // ---- Phase 2: SM request built from V1's MAD -> exactly V1 ---------------
  reset();
  {
    Bytes m = mad_of(V1);
    m[6] = 0;  // originator: hp 0, the send rules make it 1
    sm_src.q.push_back(TxMad{m, 0xFFFF, 0, 0, static_cast<uint8_t>(urand(128))});
    CHECK(run_until([] { return wire_out.size() == 1; }, 5000), "SM request: nothing on the wire");
    if (wire_out.size() == 1) check_wire(wire_out[0], V1, "SM request -> V1");
    wire_out.clear();
  }

  // ---- Phase 3: stress: SMA echo + SM requests, small RX buffer ------------
  reset();
  reg_write(kRegRxDepth, 2);
  sma_echo = true;
  echo_mad = mad_of(V2);
  const int kReq = 40, kSm = 15;
  for (int i = 0; i < kReq; i++) rx_q.push_back(V1);
  {
    Bytes m = mad_of(V1);
    m[6] = 0;
    for (int i = 0; i < kSm; i++) sm_src.q.push_back(TxMad{m, 0xFFFF, 0, 0, static_cast<uint8_t>(urand(128))});
  }
  for (int phase = 0; phase < 3; phase++) {
    // vary the pressure: fast, slow consumers, slow wire
    rx_gap = phase == 0 ? 0 : 40;
    sma_ready_pct = phase == 1 ? 15 : 80;
    tx_ready_pct = phase == 2 ? 20 : 70;
    sma_src.gap = sm_src.gap = phase == 0 ? 0 : 40;
    run(3000);
  }
  rx_gap = 10, sma_ready_pct = 70, tx_ready_pct = 70;
  settle();
  sma_echo = false;
  uint32_t to_sma = reg_read(kRegCtrBase + CtrSmiToSma);
  uint32_t dropped = reg_read(kRegCtrBase + CtrVl15Dropped);
  CHECK(to_sma + dropped == kReq, "stress: %u to SMA + %u dropped != %d", to_sma, dropped, kReq);
  CHECK(wire_out.size() == to_sma + kSm, "stress: %zu wire packets, expected %u", wire_out.size(), to_sma + kSm);
  CHECK(reg_read(kRegCtrBase + CtrTxVl15Pkts) == wire_out.size(), "stress: TxVl15Pkts");
  CHECK(reg_read(kRegCtrBase + CtrSqPkts) == wire_out.size(), "stress: SqPkts");
  CHECK(reg_read(kRegCtrBase + CtrRxPkts) == kReq, "stress: RxPkts");
  int n_v1 = 0, n_v2 = 0;
  for (size_t i = 0; i < wire_out.size(); i++) {
    const Bytes& w = wire_out[i];
    CHECK(w.size() == 290, "stress packet %zu: %zu bytes", i, w.size());
    if (w.size() != 290) continue;
    uint32_t psn = (w[17] << 16) | (w[18] << 8) | w[19];
    CHECK(psn == i, "stress packet %zu: PSN %u", i, psn);
    bool is_v2 = w[kMad + 3] == 0x81;
    Bytes want = is_v2 ? V2 : V1;
    want[17] = (i >> 16) & 0xFF, want[18] = (i >> 8) & 0xFF, want[19] = i & 0xFF;
    fix_crcs(want);
    check_wire(w, want, is_v2 ? "stress response" : "stress SM request");
    (is_v2 ? n_v2 : n_v1)++;
  }
  CHECK(n_v1 == kSm && (uint32_t)n_v2 == to_sma, "stress: %d requests, %d responses", n_v1, n_v2);
  CHECK(to_sma > 0 && dropped > 0, "stress did not exercise both delivery (%u) and drops (%u)", to_sma, dropped);
  CHECK(gated > 1000, "clock edges skipped while idle: only %lu", gated);
  std::printf("ib_ca_top DataW=%d: stress %u to SMA, %u dropped, %zu on the wire, RX latency %lu, %lu idle edges skipped\n",
              DATAW, to_sma, dropped, wire_out.size(), lat_max, gated);

  // ---- Phase 4: SM receive queue, step by step -----------------------------
  // V2 arrives at the SM's CA (to the SM, hop pointer 0); each copy gets its
  // own TID (MAD byte 15) so that the order of delivery shows.
  auto v2_tid = [&](uint8_t k) {
    Bytes p = V2;
    p[kMad + 15] = k;
    fix_crcs(p);
    return p;
  };
  auto v2_mad = [&](uint8_t k) {
    Bytes m = mad_of(v2_tid(k));
    m[6] = 0;
    return m;
  };
  Bytes v1_mad = mad_of(V1);
  v1_mad[6] = 2;
  v1_mad[192 + 1] = 1;
  auto check_sm = [&](std::initializer_list<uint8_t> tids, const char* what) {
    CHECK(sm_out.size() == tids.size(), "%s: %zu MADs on SM RX, expected %zu", what, sm_out.size(), tids.size());
    size_t i = 0;
    for (uint8_t k : tids) {
      if (i < sm_out.size()) check_mad(sm_out[i], v2_mad(k), 0xFFFF, 0xFFFF, 0x81, 0, 1, what);
      i++;
    }
    sm_out.clear();
  };
  auto check_sma = [&](size_t n, const char* what) {
    CHECK(sma_out.size() == n, "%s: %zu MADs on SMA RX, expected %zu", what, sma_out.size(), n);
    for (auto& m : sma_out) check_mad(m, v1_mad, 0xFFFF, 0xFFFF, 0x81, 2, 1, what);
    sma_out.clear();
  };
  {
    reset(0);  // the count after reset: no WQE posted
    std::fill(std::begin(c), std::end(c), 0u);
    // Every stream with idle and backpressure, except that SM RX is never
    // ready: with no WQE the SM's MADs are discarded whole anyway (at full
    // rate), and the SMA's requests queued behind them arrive. The SMA sink
    // keeps up with the wire on average, so no packet finds the buffer full.
    rx_gap = 10, sma_ready_pct = 85, sm_ready_pct = 0;
    for (uint8_t k = 0; k < 6; k++) {
      rx_q.push_back(v2_tid(k));
      if (k % 2) rx_q.push_back(V1);
    }
    settle();
    check_sm({}, "no WQE");
    check_sma(3, "SMA requests behind SM MADs with no WQE");
    c[CtrRxPkts] += 9, c[CtrVl15Dropped] += 6, c[CtrSmiToSma] += 3;
    expect_ctrs(c, "no WQE");
    // VL15Dropped + 1 per discarded MAD, each followed by an SMA request that
    // is answered.
    sm_ready_pct = 60;
    for (uint8_t k = 6; k < 9; k++) {
      rx_q.push_back(v2_tid(k));
      rx_q.push_back(V1);
      settle();
      check_sm({}, "no WQE, one at a time");
      check_sma(1, "SMA request after a discarded SM MAD");
      c[CtrRxPkts] += 2, c[CtrVl15Dropped]++, c[CtrSmiToSma]++;
      expect_ctrs(c, "no WQE, one at a time");
    }
    // One WQE: exactly one MAD (the first) is delivered, the next is not.
    sm_ready_pct = 30;
    rq_post(1);
    rx_q.push_back(v2_tid(10));
    rx_q.push_back(v2_tid(11));
    rx_q.push_back(V1);
    rx_q.push_back(v2_tid(12));
    settle();
    check_sm({10}, "post 1");
    check_sma(1, "post 1");
    c[CtrRxPkts] += 4, c[CtrVl15Dropped] += 2, c[CtrSmiToSma]++, c[CtrSmiToSm]++;
    expect_ctrs(c, "post 1");
    CHECK(rq_wqes == 0, "post 1: %u WQEs left", rq_wqes);
    // Two: the first two.
    rq_post(2);
    for (uint8_t k = 20; k < 23; k++) rx_q.push_back(v2_tid(k));
    settle();
    check_sm({20, 21}, "post 2");
    c[CtrRxPkts] += 3, c[CtrVl15Dropped]++, c[CtrSmiToSm] += 2;
    expect_ctrs(c, "post 2");
    // A clear withdraws what is posted; with a post in the same cycle the
    // post counts after it.
    rq_post(5);
    rq_post(2, true);
    for (uint8_t k = 30; k < 34; k++) rx_q.push_back(v2_tid(k));
    settle();
    check_sm({30, 31}, "clear and post 2");
    c[CtrRxPkts] += 4, c[CtrVl15Dropped] += 2, c[CtrSmiToSm] += 2;
    expect_ctrs(c, "clear and post 2");
    rq_post(3);
    rq_post(0, true);
    rx_q.push_back(v2_tid(40));
    settle();
    check_sm({}, "clear");
    c[CtrRxPkts]++, c[CtrVl15Dropped]++;
    expect_ctrs(c, "clear");
    // The count saturates: 255 * 257 = 2^16 - 1 posted, then one more; a
    // 16-bit count that wrapped would hold 0 and discard the next MAD.
    rq_post(255 * 257);
    CHECK(rq_wqes == kRqMax, "saturation: harness count %u", rq_wqes);
    rq_post(1);
    rx_q.push_back(v2_tid(50));
    settle();
    check_sm({50}, "saturated count");
    c[CtrRxPkts]++, c[CtrSmiToSm]++;
    expect_ctrs(c, "saturated count");
  }

  // ---- Phase 5: both VL15Dropped sources at every relative time ------------
  // A (for the SMA, SMA RX not ready) and B (for the SM, no WQE, queued
  // behind A) are buffered; then the usable depth is set to 1, so C (for the
  // SMA) finds no slot as long as A or B is inside and is dropped at its end.
  // A is released r cycles after C's first beat: B is then discarded, its
  // last beat read out before, in the same cycle as, or after C's drop. The
  // VL15Dropped register is watched every cycle: every packet is counted
  // exactly once, and some run saw both drops counted in one cycle (+2).
  {
    int c_dropped = 0, both_at_once = 0;
    const int r_lo = -kMadBeats - 12, r_hi = 8;
    for (int r = r_lo; r <= r_hi; r++) {
      reset(0);
      rx_gap = 0, sma_ready_pct = 0, sm_ready_pct = 50;
      rx_q.push_back(V1);
      rx_q.push_back(v2_tid(60));
      CHECK(run_until([] { return rx_q.empty() && rx_cur.empty(); }, 5000), "sweep: A, B not sent");
      run(20);
      CHECK(top->sma_rx_tvalid_o && sma_out.empty(), "sweep: A not held at SMA RX");
      reg_write(kRegRxDepth, 1);
      top->reg_addr_i = kRegCtrBase + CtrVl15Dropped;  // watched from here on
      top->eval();
      uint32_t prev = top->reg_rdata_o, max_step = 0;
      CHECK(prev == 0, "sweep r=%d: VL15Dropped %u before C", r, prev);
      auto watch = [&] {
        uint32_t v = top->reg_rdata_o;
        max_step = std::max(max_step, v - prev);
        prev = v;
      };
      for (int t = std::min(0, r); t <= std::max(0, r); t++) {
        if (t == r) sma_ready_pct = 100;
        if (t == 0) rx_q.push_back(V1);
        tick();
        watch();
      }
      for (int t = 0; t < 4 * kMadBeats + 200; t++) {
        tick();
        watch();
      }
      CHECK(quiet() && top->idle_o, "sweep r=%d: did not drain", r);
      CHECK(sm_out.empty(), "sweep r=%d: the SM MAD was delivered with no WQE", r);
      CHECK(!sma_out.empty() && sma_out.size() <= 2, "sweep r=%d: %zu MADs on SMA RX", r, sma_out.size());
      uint32_t delivered = sma_out.size();
      c_dropped += delivered == 1;
      both_at_once += max_step == 2;
      sma_out.clear();
      uint32_t want[NumCtrs] = {};
      want[CtrRxPkts] = 3, want[CtrSmiToSma] = delivered, want[CtrVl15Dropped] = 3 - delivered;
      expect_ctrs(want, "sweep");
    }
    CHECK(c_dropped > 0 && both_at_once > 0, "sweep: %d runs with C dropped, %d with both drops in one cycle",
          c_dropped, both_at_once);
    std::printf("ib_ca_top DataW=%d: drop sweep: %d of %d runs dropped C, %d counted both drops in one cycle\n",
                DATAW, c_dropped, r_hi - r_lo + 1, both_at_once);
  }

  // ---- Phase 6: random doorbells against random traffic --------------------
  // Random posts (0..3, sometimes with a clear) while V1/V2 arrive with
  // random gaps and every sink has random backpressure. The harness's count
  // is checked at every MAD on SM RX; the RTL's count must equal it at the
  // end: with m left, m more MADs for the SM get through and one more does
  // not.
  {
    reset(0);
    const int kN = 120;
    int n_sm = 0;
    rq_bell_pct = 2;
    std::vector<uint8_t> sent_sm;
    for (int i = 0; i < kN; i++) {
      if (urand(2)) {
        uint8_t k = static_cast<uint8_t>(100 + n_sm++);
        rx_q.push_back(v2_tid(k));
        sent_sm.push_back(k);
      } else {
        rx_q.push_back(V1);
      }
    }
    for (int phase = 0; phase < 3; phase++) {
      rx_gap = phase == 0 ? 0 : 30;
      sm_ready_pct = phase == 1 ? 10 : 70;
      sma_ready_pct = phase == 2 ? 20 : 80;
      run(2500);
    }
    rx_gap = 10, sm_ready_pct = 70, sma_ready_pct = 80;
    run_until([] { return rx_q.empty() && rx_cur.empty(); }, 100000);
    rq_bell_pct = 0;
    settle();
    uint32_t to_sm = reg_read(kRegCtrBase + CtrSmiToSm), to_sma_r = reg_read(kRegCtrBase + CtrSmiToSma);
    uint32_t dropped_r = reg_read(kRegCtrBase + CtrVl15Dropped);
    CHECK(reg_read(kRegCtrBase + CtrRxPkts) == kN && to_sm + to_sma_r + dropped_r == kN,
          "random: %u to SM + %u to SMA + %u dropped != %d", to_sm, to_sma_r, dropped_r, kN);
    CHECK(sm_out.size() == to_sm && sma_out.size() == to_sma_r, "random: delivered %zu/%zu, counted %u/%u",
          sm_out.size(), sma_out.size(), to_sm, to_sma_r);
    // SM MADs arrive in order, each whole and patched
    size_t j = 0;
    for (auto& m : sm_out) {
      while (j < sent_sm.size() && m.b.size() == 256 && m.b[15] != sent_sm[j]) j++;
      CHECK(j < sent_sm.size(), "random: SM MAD out of order or unknown");
      if (j < sent_sm.size()) check_mad(m, v2_mad(sent_sm[j]), 0xFFFF, 0xFFFF, 0x81, 0, 1, "random SM MAD");
      j++;
    }
    for (auto& m : sma_out) check_mad(m, v1_mad, 0xFFFF, 0xFFFF, 0x81, 2, 1, "random SMA MAD");
    CHECK(to_sm > 0 && to_sm < static_cast<uint32_t>(n_sm), "random: %u of %d SM MADs delivered", to_sm, n_sm);
    // the RTL holds exactly the harness's count
    uint32_t m = rq_wqes;
    CHECK(m < 200, "random: %u WQEs left", m);
    sm_out.clear();
    sma_out.clear();
    sm_ready_pct = 100, rx_gap = 20;
    for (uint32_t i = 0; i <= m && i < 200; i++) rx_q.push_back(v2_tid(static_cast<uint8_t>(i)));
    settle();
    CHECK(sm_out.size() == m, "random: %zu of %u more MADs delivered, expected the %u WQEs left", sm_out.size(),
          m + 1, m);
    CHECK(reg_read(kRegCtrBase + CtrVl15Dropped) == dropped_r + 1, "random: the last MAD was not discarded");
    std::printf("ib_ca_top DataW=%d: receive queue: %u of %d SM MADs delivered, %u dropped, %u WQEs left\n",
                DATAW, to_sm, n_sm, dropped_r, m);
  }

  // ---- Phase 7: GSI receive checks, word counters, RegCtrClearSel ---------
  // Data-VL packets (good GMPs V3/V4, each bad field alone, QP 2 with good
  // and bad ICRC, a GRH GMP, a packet the link rejects) mixed with SMPs,
  // spaced and back to back: each reaches drx whole, with tuser on tlast =
  // the spec's discard (gsi_model.h), and is counted once in the spec's
  // counter. Then data TX packets of random lengths beside VL15 responses
  // under wire backpressure: TxWords = sum of PktLen on the wire. Then
  // RegCtrClearSel clears exactly the selected counters.
  {
    reset();
    std::fill(std::begin(c), std::end(c), 0u);
    std::vector<Bytes> dp;  // data-VL packets
    auto mod = [&](auto f) {
      Bytes p = V3;
      f(p);
      finish_pkt(p);
      dp.push_back(p);
    };
    dp.push_back(V3);
    dp.push_back(vec[3]);  // V4
    mod([](Bytes& p) { p[15] = 0; });                  // DestQP 0 on VL0
    mod([](Bytes& p) { p[8] = 0x65; });                // opcode
    mod([](Bytes& p) { p.erase(p.end() - 6, p.end() - 2); });  // payload 252
    mod([](Bytes& p) { p.insert(p.end() - 6, 4, 0); });        // payload 260
    mod([](Bytes& p) { p[21] = 0; });                  // Q_Key 0x80000000 (Q_KeyViolations)
    mod([](Bytes& p) { p[10] = 0x80, p[11] = 0x05; });  // P_Key 0x8005, not in the table (P_KeyViolations)
    mod([](Bytes& p) { p[10] = 0x7F; });               // P_Key 0x7FFF: limited, entry 0 0xFFFF full: a GMP
    mod([](Bytes& p) { p[28] = 2; });                  // BaseVersion 2
    mod([](Bytes& p) { p[29] = 0x01; });               // MgmtClass 0x01
    mod([](Bytes& p) { p[29] = 0x81; });               // MgmtClass 0x81
    mod([](Bytes& p) { p[15] = 2; });                  // QP 2, good ICRC
    {
      Bytes p = V3;
      p[15] = 2;
      finish_pkt(p);
      p[77] ^= 0x21;
      fix_vcrc(p);
      dp.push_back(p);                                 // QP 2, bad ICRC
      p = V3;
      p[200] ^= 0x08;
      fix_vcrc(p);
      dp.push_back(p);                                 // GMP, bad ICRC
      p = V3;
      p[100] ^= 0x08;
      dp.push_back(p);                                 // bad VCRC: the link discards it
      // the same GMP with a GRH (LNH 3, NxtHdr 0x1B)
      Bytes g(V3.begin(), V3.begin() + 8);
      g[1] |= 3;
      Bytes grh(40, 0);
      grh[0] = 0x60, grh[6] = 0x1B, grh[7] = 64;
      g.insert(g.end(), grh.begin(), grh.end());
      g.insert(g.end(), V3.begin() + 8, V3.end());
      finish_pkt(g);
      dp.push_back(g);
    }
    std::vector<std::pair<Bytes, bool>> want_drx;
    std::vector<int> want_reason;
    drx_reason_out.clear();
    uint64_t words = 0;
    for (int round = 0; round < 3; round++) {
      rx_gap = round == 0 ? 0 : round == 1 ? 30 : 80;
      sma_ready_pct = round == 1 ? 20 : 90;
      std::vector<Bytes> order = dp;
      for (size_t i = order.size(); i > 1; i--) std::swap(order[i - 1], order[urand(i)]);
      for (auto& p : order) {
        rx_q.push_back(p);
        c[CtrRxPkts]++;
        bool lg = link_good(p);
        Want w = lg ? model(p, false) : Want{true, EvNone, RsLinkDrop};
        want_drx.push_back({p, w.discard});
        want_reason.push_back(w.reason);
        if (!lg) {
          c[CtrRxVcrcErr]++;
          continue;
        }
        words += pktlen_of(p);
        c[CtrRxDataPkts]++;
        if (w.ev == EvIcrc) c[CtrDataIcrcErr]++;
        if (w.ev == EvHdr) c[CtrGsiBadHdr]++;
        if (w.ev == EvGmp) c[CtrGsiGmps]++;
        if (w.ev == EvPkey) c[CtrPkeyViol]++;
        if (w.ev == EvQkey) c[CtrQkeyViol]++;
        if (urand(3) == 0) {  // an SMP in between
          rx_q.push_back(V1);
          c[CtrRxPkts]++, c[CtrSmiToSma]++;
          words += 72;
        }
      }
      settle();
    }
    CHECK(drx_out.size() == want_drx.size(), "GSI: %zu packets on drx, expected %zu", drx_out.size(),
          want_drx.size());
    for (size_t i = 0; i < drx_out.size() && i < want_drx.size(); i++) {
      CHECK(drx_out[i].first == want_drx[i].first, "GSI: drx packet %zu differs", i);
      CHECK(drx_out[i].second == want_drx[i].second, "GSI: drx packet %zu tuser %u, expected %u", i,
            drx_out[i].second, want_drx[i].second);
      CHECK(drx_reason_out[i] == want_reason[i], "GSI: drx packet %zu reason %d, expected %d", i,
            drx_reason_out[i], want_reason[i]);
    }
    CHECK(c[CtrGsiGmps] == 3 * 4 && c[CtrDataIcrcErr] == 3 * 2 && c[CtrGsiBadHdr] == 3 * 7 &&
              c[CtrPkeyViol] == 3 * 1 && c[CtrQkeyViol] == 3 * 1,
          "GSI: case list changed (%u GMPs, %u ICRC, %u bad header, %u P_Key, %u Q_Key)", c[CtrGsiGmps],
          c[CtrDataIcrcErr], c[CtrGsiBadHdr], c[CtrPkeyViol], c[CtrQkeyViol]);
    CHECK(words == mw_rx, "GSI: words %lu, model %lu", words, mw_rx);
    drx_out.clear();
    sma_out.clear();
    expect_ctrs(c, "GSI checks");

    // The P_Key table registers: size 64 (a CA's NodeInfo.PartitionCap),
    // the reset table (entry 0 = 0xFFFF, every other 0), index + data with
    // the index stepping after a data write. Then, with entries 0 = 0x8005
    // (full) and 1 = 0x0006 (limited), GMPs are judged by the IBA rule
    // (gsi_model.h) and counted in P_KeyViolations / Q_KeyViolations.
    CHECK(reg_read(kRegPkeyCap) == 64, "RegPkeyCap %u, expected 64", reg_read(kRegPkeyCap));
    for (int i = 0; i < 64; i++) {
      reg_write(kRegPkeyIdx, i);
      uint32_t want = i == 0 ? 0xFFFF : 0;
      CHECK(reg_read(kRegPkeyData) == want, "reset P_Key entry %d = %04x, expected %04x", i, reg_read(kRegPkeyData),
            want);
    }
    PkeyTable t = default_pkeys(64);
    t[0] = 0x8005, t[1] = 0x0006;
    reg_write(kRegPkeyIdx, 0);
    reg_write(kRegPkeyData, t[0]);
    reg_write(kRegPkeyData, t[1]);
    CHECK(reg_read(kRegPkeyIdx) == 2, "RegPkeyIdx %u after two data writes, expected 2", reg_read(kRegPkeyIdx));
    for (int i = 0; i < 3; i++) {
      reg_write(kRegPkeyIdx, i);
      CHECK(reg_read(kRegPkeyData) == t[i], "P_Key entry %d = %04x, expected %04x", i, reg_read(kRegPkeyData), t[i]);
    }
    std::vector<std::pair<Bytes, Want>> pk;
    for (uint16_t k : {0x8005, 0x0005, 0x8006, 0x0006, 0xFFFF, 0x0000, 0x8000}) {
      Bytes p = V3;
      p[10] = k >> 8, p[11] = k & 0xFF;
      finish_pkt(p);
      pk.push_back({p, model(p, false, t)});
      p[21] = 0;  // and with a bad Q_Key: P_Key first
      finish_pkt(p);
      pk.push_back({p, model(p, false, t)});
    }
    drx_reason_out.clear();
    for (auto& [p, w] : pk) {
      rx_q.push_back(p);
      words += pktlen_of(p);
      c[CtrRxPkts]++, c[CtrRxDataPkts]++;
      if (w.ev == EvGmp) c[CtrGsiGmps]++;
      if (w.ev == EvPkey) c[CtrPkeyViol]++;
      if (w.ev == EvQkey) c[CtrQkeyViol]++;
    }
    settle();
    CHECK(drx_out.size() == pk.size(), "P_Key: %zu packets on drx, expected %zu", drx_out.size(), pk.size());
    for (size_t i = 0; i < drx_out.size() && i < pk.size(); i++) {
      CHECK(drx_out[i].first == pk[i].first && drx_out[i].second == pk[i].second.discard &&
                drx_reason_out[i] == pk[i].second.reason,
            "P_Key: drx packet %zu (P_Key %02x%02x): tuser %u reason %d, expected %u / %d", i, pk[i].first[10],
            pk[i].first[11], drx_out[i].second, drx_reason_out[i], pk[i].second.discard, pk[i].second.reason);
    }
    // 0x8005, 0x0005 (entry 0 full) and 0x8006 (full vs limited entry 1) pass
    // the P_Key check; 0x0006 (limited/limited), 0xFFFF, 0, 0x8000 fail it.
    CHECK(c[CtrGsiGmps] == 3 * 4 + 3 && c[CtrPkeyViol] == 3 + 4 * 2 && c[CtrQkeyViol] == 3 + 3,
          "P_Key: the rule's counts changed (%u GMPs, %u P_Key, %u Q_Key)", c[CtrGsiGmps], c[CtrPkeyViol],
          c[CtrQkeyViol]);
    CHECK(words == mw_rx, "P_Key: words %lu, model %lu", words, mw_rx);
    drx_out.clear();
    expect_ctrs(c, "P_Key table");
    reg_write(kRegPkeyIdx, 0);  // the default table again (V3 has P_Key 0xFFFF)
    reg_write(kRegPkeyData, 0xFFFF);
    reg_write(kRegPkeyData, 0x0000);

    // data TX under backpressure beside VL15 responses
    sma_echo = true;
    echo_mad = mad_of(V2);
    std::vector<Bytes> dtx_sent;
    uint64_t tx_words = 0;
    int n_req = 0;
    for (int round = 0; round < 3; round++) {
      tx_ready_pct = round == 0 ? 100 : round == 1 ? 40 : 10;
      dtx_gap = round == 2 ? 60 : 0;
      rx_gap = 20;
      for (int i = 0; i < 12; i++) {
        int pl = 6 + int(urand(120));
        Bytes d(size_t(pl) * 4);
        for (auto& b : d) b = urand(256);
        d[0] = urand(15) << 4;
        d[1] = (d[1] & 0xF0) | 2;
        d[4] = (pl >> 8) & 7, d[5] = pl & 0xFF;
        dtx_q.push_back(d);
        dtx_sent.push_back(d);
        tx_words += pl;
        c[CtrTxDataPkts]++;
        if (i % 3 == 0) {
          rx_q.push_back(V1);
          n_req++;
          c[CtrRxPkts]++, c[CtrSmiToSma]++, c[CtrSqPkts]++, c[CtrTxVl15Pkts]++;
          tx_words += 72;
        }
      }
      settle();
    }
    sma_echo = false;
    tx_ready_pct = 60, dtx_gap = 20, rx_gap = 30;
    std::vector<Bytes> data_wire;
    int n_vl15 = 0;
    for (auto& w : wire_out) {
      if ((w[0] >> 4) == 15) {
        n_vl15++;
      } else {
        data_wire.push_back(w);
      }
    }
    CHECK(n_vl15 == n_req && data_wire.size() == dtx_sent.size(), "DTX: %d VL15 and %zu data packets on the wire",
          n_vl15, data_wire.size());
    for (size_t i = 0; i < data_wire.size() && i < dtx_sent.size(); i++) {
      Bytes want = dtx_sent[i];
      want.resize(want.size() + 2);
      fix_vcrc(want);
      CHECK(data_wire[i] == want, "DTX: data packet %zu differs on the wire", i);
    }
    CHECK(tx_words == mw_tx, "DTX: words %lu, model %lu", tx_words, mw_tx);
    wire_out.clear();
    sma_out.clear();
    expect_ctrs(c, "data TX words");

    // RegCtrClearSel: exactly the selected counters, the others unchanged
    for (uint32_t sel : {0u, (1u << CtrRxWords) | (1u << CtrGsiGmps), (1u << CtrTxWords) | 1u,
                         static_cast<uint32_t>(rng()()) | (1u << CtrDataIcrcErr), 0xFFFFFFFFu}) {
      uint32_t before[NumCtrs];
      for (int i = 0; i < NumCtrs; i++) before[i] = reg_read(kRegCtrBase + i);
      reg_write(kRegCtrClearSel, sel);
      for (int i = 0; i < NumCtrs; i++) {
        uint32_t got = reg_read(kRegCtrBase + i);
        uint32_t w = (sel >> i & 1) ? 0 : before[i];
        CHECK(got == w, "RegCtrClearSel %08x: counter %s = %u, expected %u", sel, kCtrName[i], got, w);
        if (sel >> i & 1) c[i] = 0;
      }
      expect_ctrs(c, "RegCtrClearSel");
      // more traffic so that the next selection has counts to clear
      rx_q.push_back(V3);
      rx_q.push_back(V1);
      dtx_q.push_back(Bytes(V3.begin(), V3.end() - 2));
      settle();
      c[CtrRxPkts] += 2, c[CtrRxDataPkts]++, c[CtrGsiGmps]++, c[CtrSmiToSma]++, c[CtrTxDataPkts]++;
      sma_out.clear(), drx_out.clear(), wire_out.clear();
      expect_ctrs(c, "traffic after RegCtrClearSel");
    }
    std::printf("ib_ca_top DataW=%d: GSI 12 GMPs, 6 ICRC errors, 21 bad headers, 3 P_Key and 3 Q_Key "
                "violations, 3 link errors on drx; then the P_Key table: 14 packets (3 pass, 8 P_Key, 3 Q_Key); "
                "%lu RX words, %lu TX words (%d VL15 + %zu data packets)\n",
                DATAW, words, tx_words, n_vl15, data_wire.size());
  }

  // ---- Phase 8: the test-only counter write (simulation builds) -----------
  // A write of V to RegCtrBase + i sets counter i to V, the others unchanged.
  // Events reach the counters through a register; the write withdraws its
  // counter's event of the same cycle, so the count is as if every event
  // had counted at once and the write had won over an event of its cycle:
  // V1's RxPkts event one cycle before the write is overwritten (V), in the
  // write's cycle it loses (V), one cycle after it counts on (V + 1). The
  // event's cycle is found from ctr_ev_o (the events as the counters take
  // them) relative to V1's last beat on the wire. V1 goes in without gaps
  // (its last beat in a known cycle) and no edges are skipped, so that
  // cycles count edges.
  {
    reset();
    gate_idle = false;
    rx_gap = 0;
    const int64_t beats = int64_t((V1.size() + kDataB - 1) / kDataB);
    std::fill(std::begin(c), std::end(c), 0u);
    reg_write(kRegCtrBase + CtrSmiToSma, 0x12345678u);
    c[CtrSmiToSma] = 0x12345678u;
    expect_ctrs(c, "counter write");
    // V1 alone: the cycle of its RxPkts event after its last wire beat
    int64_t start = int64_t(cycle);
    rx_q.push_back(V1);
    int64_t ev_cycle = -1;
    for (int i = 0; i < 5000 * kTimeScale && ev_cycle < 0; i++) {
      tick();
      if (top->ctr_ev_o >> CtrRxPkts & 1) ev_cycle = int64_t(cycle) - 1;
    }
    const int64_t d = ev_cycle - int64_t(rx_last_cycle);
    CHECK(ev_cycle >= 0 && int64_t(rx_last_cycle) == start + beats - 1 && d >= 0,
          "V1: last beat at cycle %lu (from %ld, %ld beats), RxPkts event at %ld", rx_last_cycle, start, beats,
          ev_cycle);
    settle();
    sma_out.clear();
    c[CtrRxPkts]++, c[CtrSmiToSma]++;  // counted on from the written value
    expect_ctrs(c, "events after a counter write");
    for (int k : {-1, 0, 1}) {  // the write in the event's cycle + k
      const uint32_t v = 0xC0000000u | uint32_t(k + 1) << 12;
      start = int64_t(cycle);
      rx_q.push_back(V1);
      const int64_t w = start + beats - 1 + d + k;
      while (int64_t(cycle) < w) tick();
      reg_write(kRegCtrBase + CtrRxPkts, v);
      CHECK(int64_t(rx_last_cycle) == start + beats - 1, "V1's last beat at cycle %lu, expected %ld", rx_last_cycle,
            start + beats - 1);
      if (k == 0) {
        CHECK(!(top->ctr_ev_o >> CtrRxPkts & 1), "the RxPkts event of the write's cycle was not withdrawn");
      }
      settle();
      sma_out.clear();
      c[CtrRxPkts] = k < 0 ? v + 1 : v;
      c[CtrSmiToSma]++;
      char what[64];
      std::snprintf(what, sizeof what, "counter write in the RxPkts event's cycle %+d", k);
      expect_ctrs(c, what);
    }
    gate_idle = true;
    rx_gap = 30;
    std::printf("ib_ca_top DataW=%d: counter write: V1's RxPkts event %ld cycles after its last beat\n", DATAW, d);
  }

  top->final();
  int rc = finish("ib_ca_top");
  std::fflush(stdout);
  // Destroy the model before static destruction: the Verilator context may be
  // gone by then and ~VerilatedScope would block on its mutex.
  tb_coverage_write();
  top.reset();
  return rc;
}
