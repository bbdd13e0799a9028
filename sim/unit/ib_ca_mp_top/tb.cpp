// Unit harness for ib_ca_mp_top (2-port CA, one shared SMA/SM interface).
// Expected values come from an independent packet model in this file: SMPs
// are built field by field (ibspec §1, §2, §4), ICRC/VCRC per §3, the CA's
// directed-route receive and send rules per §5 (is_switch = 0, P = the
// port). Checked:
//  - registers: ID "VLMP", TX_BAD_PORT, 0x0100*p + a reaches port p only;
//  - a DR Get arriving at port 2 reaches the shared SMA with port tag 2,
//    hop pointer hc+1 and ReturnPath[hc] = 2; at port 1 with tag 1;
//  - a response tagged port p leaves on port p's wire only, exactly the
//    model's packet (valid ICRC/VCRC, hop pointer hc, PSN of that port);
//  - SM requests tagged p leave on port p; a GetResp at port 2 reaches the
//    shared SM with tag 2 and hop pointer 0; traps per port;
//  - both ports receiving at once are both delivered, alternating (round
//    robin at packet boundaries);
//  - link_up_i low on a port: its PortState Down, SMPs dropped and counted,
//    its wire sends nothing (discarded whole), the other port unaffected;
//    high: Init;
//  - out-of-range port tags: packet dropped whole (no stall), counted;
//  - SM receive queue, one per port (the doorbell tagged with the port): a
//    MAD for the SM at a port with no receive WQE posted is discarded whole
//    and counted in that port's VL15Dropped, even with SM RX never ready,
//    and the SMA's requests behind it still arrive; WQEs posted to one port
//    let exactly that many through at that port only; a clear withdraws
//    them; an out-of-range tag posts nothing;
//  - idle_o: 1 after reset and when drained, 0 while a packet is anywhere;
//    clock edges are skipped at random whenever idle_o = 1 and no input is
//    presented, under every check;
//  - stress: both ports, SMA echo, SM requests, traps, random idle cycles on
//    every input and random backpressure on every ready, small RX buffers;
//    every packet accounted for (delivered or counted as dropped), PSNs
//    consecutive per port, every wire packet exactly as the model says.
#include <deque>
#include <map>
#include <memory>

#include "Vib_ca_mp_top.h"
#include "tb_util.h"
#include "verilated.h"

static constexpr int kPorts = 2;
static constexpr int kMadBeats = 256 / kDataB;
static constexpr int kMad = 28;

// Register map (docs/fabric.md, ib_pkg)
enum : uint16_t { kRegMpId = 0x0000, kRegMpBadTag = 0x0001 };
enum : uint8_t {
  kRegId = 0x00, kRegPortLid = 0x01, kRegMasterSmLid = 0x03, kRegMasterSmSl = 0x04, kRegPortState = 0x05,
  kRegPortNum = 0x06, kRegRxDepth = 0x08, kRegCtrClear = 0x0F, kRegCtrBase = 0x10,
};
enum Ctr {
  CtrRxPkts, CtrRxVcrcErr, CtrRxLverErr, CtrRxLnhErr, CtrRxLenErr, CtrRxDataPkts, CtrVl15Dropped,
  CtrSmiIcrcErr, CtrSmiBadHdr, CtrSmiLidErr, CtrSmiDrDiscard, CtrSmiPortDown, CtrSmiToSma, CtrSmiToSm,
  CtrSqDrDiscard, CtrSqLocal, CtrSqPkts, CtrTxVl15Pkts, CtrTxDataPkts, CtrDataIcrcErr, CtrGsiBadHdr,
  CtrGsiGmps, CtrRxWords, CtrTxWords, CtrMkeyViol, NumCtrs
};
static uint16_t preg(int port, uint8_t a) { return static_cast<uint16_t>(0x100 * port + a); }

// ---------------------------------------------------------------------------
// Independent packet model
// ---------------------------------------------------------------------------
static uint32_t crc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : (c >> 1);
  }
  return c ^ 0xFFFFFFFFu;
}
// ICRC over LRH..MAD with LRH.VL and BTH.resv8a as 1s (ibspec §3), LSB first.
static uint32_t icrc_of(const Bytes& p) {
  Bytes m(p.begin(), p.begin() + 284);
  m[0] |= 0xF0;
  m[12] = 0xFF;
  return crc32(m.data(), m.size());
}
static bool crcs_ok(const Bytes& p) {
  if (p.size() != 290) return false;
  uint32_t ic = icrc_of(p);
  for (int i = 0; i < 4; i++)
    if (p[284 + i] != ((ic >> (8 * i)) & 0xFF)) return false;
  uint16_t v = crc16(p.data(), 288);
  return p[288] == (v & 0xFF) && p[289] == (v >> 8);
}
// SMP on the wire: LRH (VL15, LVer 0, LNH 2 = IBA local, PktLen 72), BTH (UD
// SEND only to QP0, P_Key 0xFFFF), DETH (Q_Key 0, SrcQP 0), MAD, ICRC, VCRC.
static Bytes build_pkt(uint8_t sl, uint16_t dlid, uint16_t slid, uint32_t psn, const Bytes& mad) {
  Bytes p(290, 0);
  p[0] = 0xF0;
  p[1] = static_cast<uint8_t>((sl << 4) | 0x02);
  p[2] = dlid >> 8, p[3] = dlid & 0xFF;
  p[4] = 0, p[5] = 72;
  p[6] = slid >> 8, p[7] = slid & 0xFF;
  p[8] = 0x64;
  p[10] = 0xFF, p[11] = 0xFF;
  p[17] = (psn >> 16) & 0xFF, p[18] = (psn >> 8) & 0xFF, p[19] = psn & 0xFF;
  std::memcpy(&p[kMad], mad.data(), 256);
  uint32_t ic = icrc_of(p);
  for (int i = 0; i < 4; i++) p[284 + i] = (ic >> (8 * i)) & 0xFF;
  fix_vcrc(p);
  return p;
}
static uint64_t mad_tid(const Bytes& m) {
  uint64_t t = 0;
  for (int i = 8; i < 16; i++) t = (t << 8) | m[i];
  return t;
}
// A DR SMP MAD (ibspec §4, §5): class 0x81, D bit = status bit 15.
static Bytes dr_mad(uint8_t method, bool dir, uint8_t hp, uint8_t hc, uint64_t tid,
                    const std::vector<uint8_t>& ip) {
  Bytes m(256, 0);
  m[0] = 1, m[1] = 0x81, m[2] = 1, m[3] = method;
  m[4] = dir ? 0x80 : 0x00;
  m[6] = hp, m[7] = hc;
  for (int i = 0; i < 8; i++) m[8 + i] = (tid >> (56 - 8 * i)) & 0xFF;
  m[16] = 0x00, m[17] = 0x11;  // NodeInfo
  m[32] = m[33] = m[34] = m[35] = 0xFF;  // DrSLID, DrDLID permissive
  for (int i = 64; i < 128; i++) m[i] = static_cast<uint8_t>(tid * 7 + i);
  for (size_t i = 0; i < ip.size() && i < 64; i++) m[128 + i] = ip[i];
  return m;
}
static Bytes mad_of(const Bytes& p) { return Bytes(p.begin() + kMad, p.begin() + kMad + 256); }

// CA receive, D = 0, hp = hc, DrDLID permissive (C14-9:3, then send rules
// hp++): ReturnPath[hc] := P, hp := hc + 1, to the SMA.
static Bytes model_rx_dr_get(const Bytes& req_mad, int port) {
  Bytes m = req_mad;
  uint8_t hc = m[7];
  if (hc) m[192 + hc] = static_cast<uint8_t>(port);
  m[6] = static_cast<uint8_t>(hc + 1);
  return m;
}
// The SMA's response: GetResp, D = 1, hop pointer as received.
static Bytes sma_response(const Bytes& sma_mad) {
  Bytes r = sma_mad;
  r[3] = 0x81;
  r[4] |= 0x80;
  for (int i = 64; i < 128; i++) r[i] ^= 0x5A;
  return r;
}
// CA send, D = 1, hp = hc + 1 (C14-13:1): hp := hc, accepted iff RP[hc] = P.
static Bytes model_tx_resp_mad(const Bytes& resp) {
  Bytes m = resp;
  m[6] = m[7];
  return m;
}

// ---------------------------------------------------------------------------
// Agents
// ---------------------------------------------------------------------------
static std::unique_ptr<Vib_ca_mp_top> top;
static uint64_t cycle = 0;

struct RxMad {
  Bytes b;
  uint16_t slid = 0, dlid = 0;
  uint8_t sl = 0, port = 0, cls = 0, hp = 0, hc = 0;
};
struct TxMad {
  Bytes b;
  uint16_t m0 = 0, m1 = 0;  // SMA: slid, dlid; SM: dlid
  uint8_t sl = 0, pb = 0;
  uint8_t port = 1;          // port tag
};
struct WireRx {
  std::deque<Bytes> q;
  Bytes cur;
  size_t off = 0;
  int gap = 20;
};
struct Src {
  std::deque<TxMad> q;
  int beat = 0;
  bool presenting = false;
  int gap = 20;
};

static WireRx wrx[kPorts];
static int tx_ready_pct[kPorts] = {70, 70};
static std::vector<Bytes> wire_out[kPorts];
static Bytes wire_cur[kPorts];
static int sma_ready_pct = 70, sm_ready_pct = 70;
static std::vector<RxMad> sma_out, sm_out;
static RxMad sma_cur, sm_cur;
static Src sma_src, sm_src, trap_src;
static uint8_t link_bits = 0x3, link_prev = 0x3;
static bool gate_idle = true, expect_busy = false;
static uint64_t gated = 0;
static bool sma_echo = false;
// SM receive-queue doorbells to ring, one per clocked cycle
struct Bell {
  uint8_t n;
  bool clr;
  uint8_t port;
};
static std::deque<Bell> rq_bells;
static std::vector<RxMad> echo_seen;  // SMA RX MADs answered by the echo

static void drive_src(Src& s, auto& tdata, uint8_t& tvalid, uint8_t& tlast) {
  if (!s.presenting && !s.q.empty() && !chance(s.gap)) s.presenting = true;
  uint8_t b[16];
  if (s.presenting) {
    std::memcpy(b, &s.q.front().b[s.beat * kDataB], kDataB);
    tlast = s.beat == kMadBeats - 1;
  } else {
    for (auto& j : b) j = urand(256);
    tlast = urand(2);
  }
  put_bytes(tdata, b, kDataB);
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
static void sink_mad(bool valid, bool ready, const T& tdata, bool tlast, const RxMad& meta, RxMad& cur,
                     std::vector<RxMad>& out, const char* name) {
  if (!(valid && ready)) return;
  uint8_t b[16];
  get_bytes(tdata, b, kDataB);
  if (cur.b.empty()) {
    cur = meta;
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

// Every output in this cycle, qualified by its valid (Digest, tb_util.h):
// ClkGate = 0 and 1 must give the same digest.
static void digest_outputs() {
  Digest& d = g_digest;
  uint8_t txd[kPorts * 16] = {};
  get_bytes(top->tx_tdata_o, txd, kPorts * kDataB);
  uint64_t keep = 0;
  get_bytes(top->tx_tkeep_o, reinterpret_cast<uint8_t*>(&keep), sizeof keep);
  for (int p = 0; p < kPorts; p++) {
    const bool v = (top->tx_tvalid_o >> p) & 1;
    d.add_u64(v);
    if (v) {
      const uint64_t k = (keep >> (p * kDataB)) & keep_mask(kDataB);
      uint8_t b[16] = {};
      for (int j = 0; j < kDataB; j++) b[j] = ((k >> j) & 1) ? txd[p * kDataB + j] : 0;
      d.add(b, sizeof b);
      d.add_u64(k * 2 + ((top->tx_tlast_o >> p) & 1));
    }
  }
  d.add_u64(top->drx_tvalid_o);
  digest_mad_beat(top->sma_rx_tvalid_o, top->sma_rx_tdata_o, top->sma_rx_tlast_o, sma_rx_meta(*top));
  digest_mad_beat(top->sm_rx_tvalid_o, top->sm_rx_tdata_o, top->sm_rx_tlast_o, sm_rx_meta(*top));
  d.add_u64(top->sma_tx_tready_o * 16 + top->sm_tx_tready_o * 8 + top->trap_tx_tready_o * 4 +
            top->dtx_tready_o);
  d.add_u64((uint64_t(top->port_state_o) << 32) ^ (uint64_t(top->mkey_prot_o) << 24) ^
            (uint64_t(top->mkey_viols_o) << 1) ^ top->idle_o);
}

static void tick() {
  // ---- drive inputs
  uint8_t rxd[kPorts * 16];
  uint64_t rx_keep = 0;
  uint8_t rx_valid = 0, rx_last = 0;
  for (auto& j : rxd) j = urand(256);
  for (int p = 0; p < kPorts; p++) {
    WireRx& w = wrx[p];
    if (w.cur.empty() && !w.q.empty()) {
      w.cur = w.q.front();
      w.q.pop_front();
      w.off = 0;
    }
    uint64_t keep = keep_mask(1 + urand(kDataB));
    if (!w.cur.empty() && !chance(w.gap)) {
      size_t n = std::min<size_t>(kDataB, w.cur.size() - w.off);
      std::memcpy(&rxd[p * kDataB], &w.cur[w.off], n);
      keep = keep_mask(n);
      rx_valid |= 1 << p;
      if (w.off + n == w.cur.size()) rx_last |= 1 << p;
      w.off += n;
      if (w.off == w.cur.size()) w.cur.clear();
    } else if (urand(2)) {
      rx_last |= 1 << p;
    }
    rx_keep |= keep << (p * kDataB);
  }
  put_bytes(top->rx_tdata_i, rxd, kPorts * kDataB);
  put_bytes(top->rx_tkeep_i, reinterpret_cast<uint8_t*>(&rx_keep), sizeof rx_keep);
  top->rx_tvalid_i = rx_valid;
  top->rx_tlast_i = rx_last;
  uint8_t txr = 0;
  for (int p = 0; p < kPorts; p++)
    if (chance(tx_ready_pct[p])) txr |= 1 << p;
  top->tx_tready_i = txr;
  top->link_up_i = link_bits;
  top->dtx_tvalid_i = 0;
  top->sma_rx_tready_i = chance(sma_ready_pct);
  top->sm_rx_tready_i = chance(sm_ready_pct);
  top->sm_rq_post_i = 0;
  top->sm_rq_clr_i = 0;
  top->sm_rq_post_n_i = urand(256);  // ignored without a post
  top->sm_rq_port_i = urand(256);
  if (top->rst_ni && !rq_bells.empty()) {
    top->sm_rq_post_i = rq_bells.front().n > 0;
    top->sm_rq_post_n_i = rq_bells.front().n;
    top->sm_rq_clr_i = rq_bells.front().clr;
    top->sm_rq_port_i = rq_bells.front().port;
  }
  drive_src(sma_src, top->sma_tx_tdata_i, top->sma_tx_tvalid_i, top->sma_tx_tlast_i);
  drive_src(sm_src, top->sm_tx_tdata_i, top->sm_tx_tvalid_i, top->sm_tx_tlast_i);
  drive_src(trap_src, top->trap_tx_tdata_i, top->trap_tx_tvalid_i, top->trap_tx_tlast_i);
  if (!sma_src.q.empty()) {
    const TxMad& t = sma_src.q.front();
    top->sma_tx_slid_i = t.m0, top->sma_tx_dlid_i = t.m1, top->sma_tx_sl_i = t.sl;
    top->sma_tx_port_i = t.port;
  }
  if (!sm_src.q.empty()) {
    const TxMad& t = sm_src.q.front();
    top->sm_tx_dlid_i = t.m0, top->sm_tx_sl_i = t.sl, top->sm_tx_path_bits_i = t.pb;
    top->sm_tx_port_i = t.port;
  }
  if (!trap_src.q.empty()) top->trap_tx_port_i = trap_src.q.front().port;

  top->clk_i = 0;
  top->eval();

  if (!top->rst_ni) {
    top->clk_i = 1;
    top->eval();
    cycle++;
    link_prev = link_bits;
    return;
  }
  digest_outputs();
  // ---- idle_o: never while the harness knows a packet is inside; any
  // edge with idle_o = 1 and no input may be skipped
  bool no_input = !top->rx_tvalid_i && !top->sma_tx_tvalid_i && !top->sm_tx_tvalid_i && !top->trap_tx_tvalid_i &&
                  !top->reg_we_i && !top->sm_rq_post_i && !top->sm_rq_clr_i && link_bits == link_prev;
  if (top->idle_o) {
    CHECK(!expect_busy, "idle_o = 1 at cycle %lu while a packet is in the CA", cycle);
    CHECK(!top->tx_tvalid_o && !top->sma_rx_tvalid_o && !top->sm_rx_tvalid_o && !top->drx_tvalid_o,
          "idle_o = 1 with an output valid at cycle %lu", cycle);
  }
  if (gate_idle && top->idle_o && no_input && chance(50)) {
    gated++;
    cycle++;
    return;
  }
  link_prev = link_bits;

  // ---- sample handshakes
  {
    uint8_t txd[kPorts * 16];
    get_bytes(top->tx_tdata_o, txd, kPorts * kDataB);
    uint64_t keep = 0;
    get_bytes(top->tx_tkeep_o, reinterpret_cast<uint8_t*>(&keep), sizeof keep);
    for (int p = 0; p < kPorts; p++) {
      if (((top->tx_tvalid_o & txr) >> p) & 1) {
        int n = popcount(static_cast<uint32_t>((keep >> (p * kDataB)) & keep_mask(kDataB)));
        wire_cur[p].insert(wire_cur[p].end(), &txd[p * kDataB], &txd[p * kDataB] + n);
        if ((top->tx_tlast_o >> p) & 1) {
          wire_out[p].push_back(wire_cur[p]);
          wire_cur[p].clear();
        }
      }
    }
  }
  RxMad ma{{}, top->sma_rx_slid_o, top->sma_rx_dlid_o, top->sma_rx_sl_o, top->sma_rx_port_o,
           top->sma_rx_mgmt_class_o, top->sma_rx_hop_ptr_o, top->sma_rx_hop_cnt_o};
  sink_mad(top->sma_rx_tvalid_o, top->sma_rx_tready_i, top->sma_rx_tdata_o, top->sma_rx_tlast_o, ma, sma_cur,
           sma_out, "SMA RX");
  RxMad ms{{}, top->sm_rx_slid_o, top->sm_rx_dlid_o, top->sm_rx_sl_o, top->sm_rx_port_o,
           top->sm_rx_mgmt_class_o, top->sm_rx_hop_ptr_o, top->sm_rx_hop_cnt_o};
  sink_mad(top->sm_rx_tvalid_o, top->sm_rx_tready_i, top->sm_rx_tdata_o, top->sm_rx_tlast_o, ms, sm_cur, sm_out,
           "SM RX");
  take_src(sma_src, top->sma_tx_tready_o);
  take_src(sm_src, top->sm_tx_tready_o);
  take_src(trap_src, top->trap_tx_tready_o);
  if (!rq_bells.empty()) rq_bells.pop_front();  // rung at this edge
  if (sma_echo && !sma_out.empty()) {
    for (auto& m : sma_out) {
      sma_src.q.push_back(TxMad{sma_response(m.b), m.slid, m.dlid, m.sl, 0, m.port});
      echo_seen.push_back(m);
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
template <typename F>
static bool run_until(F done, int max) {
  for (int i = 0; i < max; i++) {
    if (done()) return true;
    tick();
  }
  return done();
}
static uint32_t reg_read(uint16_t a) {
  top->reg_we_i = 0;
  top->reg_addr_i = a;
  top->eval();
  g_digest.add_u64((uint64_t(a) << 32) | top->reg_rdata_o);
  return top->reg_rdata_o;
}
static void reg_write(uint16_t a, uint32_t v) {
  top->reg_we_i = 1;
  top->reg_addr_i = a;
  top->reg_wdata_i = v;
  tick();
  top->reg_we_i = 0;
}
static uint32_t ctr(int port, int c) { return reg_read(preg(port, kRegCtrBase + c)); }
static bool quiet() {
  for (auto& w : wrx)
    if (!w.q.empty() || !w.cur.empty()) return false;
  return sma_src.q.empty() && sm_src.q.empty() && trap_src.q.empty() && rq_bells.empty();
}
static void settle() {
  run_until([] { return quiet() && top->idle_o; }, 50000);
  run(200);
}
static void clear_outs() {
  for (int p = 0; p < kPorts; p++) wire_out[p].clear(), wire_cur[p].clear();
  sma_out.clear(), sm_out.clear();
  sma_cur = RxMad{}, sm_cur = RxMad{};
}
// Ring the doorbell of port `port`: post n WQEs (clear first if clr).
static void rq_post(int port, uint32_t n, bool clr = false) {
  do {
    uint8_t k = static_cast<uint8_t>(std::min<uint32_t>(n, 255));
    rq_bells.push_back(Bell{k, clr, static_cast<uint8_t>(port)});
    n -= k;
    clr = false;
  } while (n > 0);
  run_until([] { return rq_bells.empty(); }, 10000);
}
// Reset; then post `wqes` receive WQEs on every port (the checks that are not
// about the receive queue take every MAD for the SM).
static void reset(uint32_t wqes = 4096) {
  top->rst_ni = 0;
  for (auto& w : wrx) w = WireRx{};
  sma_src = Src{}, sm_src = Src{}, trap_src = Src{};
  rq_bells.clear();
  run(5);
  top->rst_ni = 1;
  clear_outs();
  run(3);
  if (wqes > 0) {
    for (int p = 1; p <= kPorts; p++) rq_post(p, wqes);
  }
}
static void check_bytes(const Bytes& got, const Bytes& want, const char* what) {
  CHECK(got == want, "%s: bytes differ (%zu vs %zu)", what, got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); i++) {
    if (got[i] != want[i]) {
      std::fprintf(stderr, "  byte %zu: got %02x want %02x\n", i, got[i], want[i]);
      break;
    }
  }
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  Verilated::randReset(2);
  top = std::make_unique<Vib_ca_mp_top>();

  // The model's CRC engines against the catalogue check values and the
  // reference vectors (tests/vectors, built independently).
  const char* chk = "123456789";
  CHECK(crc32(reinterpret_cast<const uint8_t*>(chk), 9) == 0xCBF43926u, "crc32 check value");
  std::string root = argc > 1 ? argv[1] : ".";
  auto vec = read_vectors(root);
  CHECK(crcs_ok(vec[0]) && crcs_ok(vec[1]), "model CRCs disagree with the reference vectors V1/V2");
  {
    // The model rebuilds V1 from its fields (DR Get NodeInfo, hp = hc = 1).
    const Bytes& v1 = vec[0];
    Bytes m = mad_of(v1);
    Bytes p = build_pkt(v1[1] >> 4, (v1[2] << 8) | v1[3], (v1[6] << 8) | v1[7],
                        (v1[17] << 16) | (v1[18] << 8) | v1[19], m);
    check_bytes(p, v1, "model rebuild of V1");
  }

  top->reg_we_i = 0;
  top->reg_addr_i = 0;
  top->reg_wdata_i = 0;
  link_bits = 0x3;
  reset();

  // ---- Registers -----------------------------------------------------------
  CHECK(reg_read(kRegMpId) == 0x564C4D50u, "ID %08x", reg_read(kRegMpId));
  CHECK(reg_read(kRegMpBadTag) == 0, "TX_BAD_PORT after reset");
  for (int p = 1; p <= kPorts; p++) {
    CHECK(reg_read(preg(p, kRegId)) == 0x564C3135u, "port %d ID", p);
    CHECK(reg_read(preg(p, kRegPortNum)) == uint32_t(p), "port %d PortNum %u", p, reg_read(preg(p, kRegPortNum)));
    CHECK(reg_read(preg(p, kRegPortState)) == 2, "port %d PortState after reset", p);
  }
  CHECK(top->port_state_o == 0x22, "port_state_o %02x after reset", top->port_state_o);
  CHECK(top->idle_o, "idle_o = 0 after reset");
  reg_write(preg(2, kRegPortLid), 0x1234);
  CHECK(reg_read(preg(2, kRegPortLid)) == 0x1234 && reg_read(preg(1, kRegPortLid)) == 0, "LID write reached the wrong port");
  reg_write(preg(2, kRegPortLid), 0);
  CHECK(reg_read(preg(3, kRegId)) == 0 && reg_read(0x0002) == 0 && reg_read(0x00FF) == 0, "unmapped address reads non-zero");
  reg_write(preg(3, kRegPortLid), 7);  // no port 3: ignored
  CHECK(reg_read(preg(1, kRegPortLid)) == 0 && reg_read(preg(2, kRegPortLid)) == 0, "write to port 3 landed");

  // ---- DR Get at port 2 -> SMA with tag 2; response -> port 2's wire -----
  uint32_t psn[kPorts] = {0, 0};
  for (int port : {2, 1}) {
    for (uint8_t hc : {1, 3}) {
      std::vector<uint8_t> ip = {0, 5, 9, 17};
      Bytes req = dr_mad(0x01, false, hc, hc, 0x1000 + port * 16 + hc, ip);
      wrx[port - 1].q.push_back(build_pkt(0, 0xFFFF, 0xFFFF, 0x77, req));
      CHECK(run_until([] { return sma_out.size() == 1; }, 5000), "DR Get at port %d: nothing on SMA RX", port);
      if (sma_out.size() != 1) continue;
      const RxMad& r = sma_out[0];
      Bytes want = model_rx_dr_get(req, port);
      check_bytes(r.b, want, "DR Get -> SMA");
      CHECK(r.port == port && r.cls == 0x81 && r.hp == hc + 1 && r.hc == hc && r.slid == 0xFFFF &&
                r.dlid == 0xFFFF && r.sl == 0,
            "DR Get at port %d hc %u: meta port %u class %02x hp %u hc %u", port, hc, r.port, r.cls, r.hp, r.hc);
      CHECK(r.b[192 + hc] == port, "ReturnPath[%u] = %u, expected %d", hc, r.b[192 + hc], port);
      // response tagged with the port it came from
      Bytes resp = sma_response(r.b);
      sma_out.clear();
      sma_src.q.push_back(TxMad{resp, r.slid, r.dlid, r.sl, 0, static_cast<uint8_t>(port)});
      CHECK(run_until([&] { return wire_out[port - 1].size() == 1; }, 5000), "response on port %d: nothing", port);
      settle();
      CHECK(wire_out[2 - port].empty(), "response for port %d left on port %d", port, 3 - port);
      if (wire_out[port - 1].size() == 1) {
        const Bytes& w = wire_out[port - 1][0];
        CHECK(crcs_ok(w), "response on port %d: bad ICRC/VCRC", port);
        check_bytes(w, build_pkt(0, 0xFFFF, 0xFFFF, psn[port - 1], model_tx_resp_mad(resp)), "response on the wire");
      }
      psn[port - 1]++;
      clear_outs();
    }
  }

  // ---- SM requests per port; GetResp at port 2 -> SM with tag 2 ----------
  for (int port : {1, 2}) {
    Bytes req = dr_mad(0x01, false, 0, 1, 0x2000 + port, {0, static_cast<uint8_t>(port)});
    sm_src.q.push_back(TxMad{req, 0xFFFF, 0, 0, 0, static_cast<uint8_t>(port)});
    CHECK(run_until([&] { return wire_out[port - 1].size() == 1; }, 5000), "SM request on port %d: nothing", port);
    settle();
    CHECK(wire_out[2 - port].empty(), "SM request for port %d left on the other port", port);
    Bytes m = req;
    m[6] = 1;  // C14-9:1 hp := 1, IP[1] = P
    if (wire_out[port - 1].size() == 1)
      check_bytes(wire_out[port - 1][0], build_pkt(0, 0xFFFF, 0xFFFF, psn[port - 1], m), "SM request on the wire");
    psn[port - 1]++;
    clear_outs();
  }
  {
    Bytes resp = dr_mad(0x81, true, 1, 1, 0x3000, {0, 2});
    wrx[1].q.push_back(build_pkt(0, 0xFFFF, 0xFFFF, 5, resp));
    CHECK(run_until([] { return sm_out.size() == 1; }, 5000), "GetResp at port 2: nothing on SM RX");
    if (sm_out.size() == 1) {
      Bytes want = resp;
      want[6] = 0;  // C14-13:3
      check_bytes(sm_out[0].b, want, "GetResp -> SM");
      CHECK(sm_out[0].port == 2 && sm_out[0].hp == 0 && sm_out[0].hc == 1, "GetResp meta port %u hp %u",
            sm_out[0].port, sm_out[0].hp);
    }
    settle();
    clear_outs();
  }

  // ---- Fairness: both ports receive at once --------------------------------
  {
    sma_ready_pct = 0;
    for (int k = 0; k < 4; k++)
      for (int port = 1; port <= kPorts; port++)
        wrx[port - 1].q.push_back(
            build_pkt(0, 0xFFFF, 0xFFFF, k, dr_mad(0x01, false, 1, 1, 0x4000 + port * 16 + k, {0, 1})));
    for (auto& w : wrx) w.gap = 0;
    run_until(quiet, 10000);
    expect_busy = true;
    run(100);
    CHECK(!top->idle_o, "idle_o with 8 SMPs buffered");
    sma_ready_pct = 100;
    CHECK(run_until([] { return sma_out.size() == 8; }, 10000), "fairness: %zu of 8 delivered", sma_out.size());
    expect_busy = false;
    run(1);
    CHECK(top->idle_o, "idle_o = 0 after the buffers drained");
    int seen[kPorts] = {0, 0};
    for (size_t i = 0; i < sma_out.size(); i++) {
      const RxMad& r = sma_out[i];
      if (r.port >= 1 && r.port <= kPorts) {
        int k = seen[r.port - 1]++;
        Bytes req = dr_mad(0x01, false, 1, 1, 0x4000 + r.port * 16 + k, {0, 1});
        check_bytes(r.b, model_rx_dr_get(req, r.port), "fairness: SMP (in port order)");
      }
      if (i > 0) CHECK(r.port != sma_out[i - 1].port, "fairness: port %u served twice in a row (%zu)", r.port, i);
    }
    CHECK(seen[0] == 4 && seen[1] == 4, "fairness: %d from port 1, %d from port 2", seen[0], seen[1]);
    for (auto& w : wrx) w.gap = 20;
    sma_ready_pct = 70;
    settle();
    clear_outs();
  }

  // ---- Link down on port 2 ---------------------------------------------------
  {
    reg_write(preg(1, kRegCtrClear), 1);
    reg_write(preg(2, kRegCtrClear), 1);
    link_bits = 0x1;
    tick();
    CHECK(reg_read(preg(2, kRegPortState)) == 1 && reg_read(preg(1, kRegPortState)) == 2 &&
              top->port_state_o == 0x12,
          "link 2 down: port_state_o %02x", top->port_state_o);
    Bytes req2 = dr_mad(0x01, false, 1, 1, 0x5002, {0, 1});
    Bytes req1 = dr_mad(0x01, false, 1, 1, 0x5001, {0, 1});
    wrx[1].q.push_back(build_pkt(0, 0xFFFF, 0xFFFF, 0, req2));
    wrx[0].q.push_back(build_pkt(0, 0xFFFF, 0xFFFF, 0, req1));
    // a response for port 2 (RP[1] = 2) while its link is down, and one for port 1
    Bytes r2 = sma_response(model_rx_dr_get(req2, 2));
    Bytes r1 = sma_response(model_rx_dr_get(req1, 1));
    sma_src.q.push_back(TxMad{r2, 0xFFFF, 0xFFFF, 0, 0, 2});
    sma_src.q.push_back(TxMad{r1, 0xFFFF, 0xFFFF, 0, 0, 1});
    settle();
    CHECK(sma_out.size() == 1 && sma_out[0].port == 1, "link 2 down: SMA got %zu SMPs", sma_out.size());
    CHECK(wire_out[1].empty() && wire_cur[1].empty(), "link 2 down: port 2 sent %zu packets", wire_out[1].size());
    CHECK(wire_out[0].size() == 1, "link 2 down: port 1 sent %zu packets", wire_out[0].size());
    if (wire_out[0].size() == 1)
      check_bytes(wire_out[0][0], build_pkt(0, 0xFFFF, 0xFFFF, psn[0], model_tx_resp_mad(r1)), "port 1 response");
    psn[0]++;
    psn[1]++;  // port 2's send engine sent it into the dead link
    CHECK(ctr(2, CtrSmiPortDown) == 1 && ctr(2, CtrSmiToSma) == 0 && ctr(2, CtrSqPkts) == 1 &&
              ctr(2, CtrTxVl15Pkts) == 0,
          "port 2 counters: PortDown %u ToSma %u SqPkts %u TxVl15 %u", ctr(2, CtrSmiPortDown), ctr(2, CtrSmiToSma),
          ctr(2, CtrSqPkts), ctr(2, CtrTxVl15Pkts));
    CHECK(ctr(1, CtrSmiPortDown) == 0 && ctr(1, CtrSmiToSma) == 1 && ctr(1, CtrTxVl15Pkts) == 1, "port 1 counters");
    clear_outs();
    link_bits = 0x3;
    tick();
    CHECK(reg_read(preg(2, kRegPortState)) == 2 && top->port_state_o == 0x22, "link 2 up: port_state_o %02x",
          top->port_state_o);
    wrx[1].q.push_back(build_pkt(0, 0xFFFF, 0xFFFF, 0, req2));
    CHECK(run_until([] { return sma_out.size() == 1; }, 5000) && sma_out[0].port == 2, "link 2 up: no SMP");
    settle();
    clear_outs();
  }

  // ---- Out-of-range port tags: dropped whole, counted, no stall -----------
  {
    sma_src.gap = 0;
    Bytes r = sma_response(model_rx_dr_get(dr_mad(0x01, false, 1, 1, 0x6000, {0, 1}), 1));
    sma_src.q.push_back(TxMad{r, 0xFFFF, 0xFFFF, 0, 0, 0});
    sma_src.q.push_back(TxMad{r, 0xFFFF, 0xFFFF, 0, 0, 3});
    uint64_t t0 = cycle;
    CHECK(run_until([] { return sma_src.q.empty(); }, 5000), "bad tags: source stalled");
    CHECK(cycle - t0 <= uint64_t(2 * kMadBeats + 2 * kMadBeats / 4 + 20), "bad tags: %lu cycles for 2 MADs",
          cycle - t0);
    trap_src.q.push_back(TxMad{r, 0, 0, 0, 0, 0xFF});
    sm_src.q.push_back(TxMad{r, 0xFFFF, 0, 0, 0, 0x80});
    settle();
    CHECK(wire_out[0].empty() && wire_out[1].empty(), "bad tags: a packet reached a wire");
    CHECK(reg_read(kRegMpBadTag) == 4, "TX_BAD_PORT = %u, expected 4", reg_read(kRegMpBadTag));
    CHECK(ctr(1, CtrSqPkts) == 1 && ctr(2, CtrSqPkts) == 1, "bad tags reached a send engine");
    reg_write(kRegMpBadTag, 0);
    CHECK(reg_read(kRegMpBadTag) == 0, "TX_BAD_PORT not cleared");
    sma_src.gap = 20;
    clear_outs();
  }

  // ---- SM receive queue, one per port -------------------------------------
  {
    reset(0);  // no WQE posted on any port
    // GetResp (to the SM) with its own TID, arriving at port p
    auto getresp = [&](int p, uint64_t tid) {
      return build_pkt(0, 0xFFFF, 0xFFFF, 0, dr_mad(0x81, true, 1, 1, tid, {0, static_cast<uint8_t>(p)}));
    };
    auto get = [&](int p, uint64_t tid) {
      return build_pkt(0, 0xFFFF, 0xFFFF, 0, dr_mad(0x01, false, 1, 1, tid, {0, 1}));
    };
    auto sm_tids = [&]() {
      std::vector<std::pair<uint64_t, int>> v;
      for (auto& m : sm_out) v.push_back({mad_tid(m.b), m.port});
      return v;
    };
    using Got = std::vector<std::pair<uint64_t, int>>;
    uint32_t drops[kPorts] = {0, 0}, to_sm[kPorts] = {0, 0}, to_sma[kPorts] = {0, 0};
    auto expect = [&](const char* what) {
      for (int p = 1; p <= kPorts; p++) {
        CHECK(ctr(p, CtrVl15Dropped) == drops[p - 1] && ctr(p, CtrSmiToSm) == to_sm[p - 1] &&
                  ctr(p, CtrSmiToSma) == to_sma[p - 1],
              "%s: port %d VL15Dropped %u ToSm %u ToSma %u, expected %u %u %u", what, p, ctr(p, CtrVl15Dropped),
              ctr(p, CtrSmiToSm), ctr(p, CtrSmiToSma), drops[p - 1], to_sm[p - 1], to_sma[p - 1]);
      }
    };
    // No WQE, SM RX never ready: every GetResp discarded and counted at its
    // port; the SMA's requests behind them arrive.
    sm_ready_pct = 0;
    sma_ready_pct = 85;
    for (int k = 0; k < 3; k++) {
      for (int p = 1; p <= kPorts; p++) {
        wrx[p - 1].q.push_back(getresp(p, 0x7000 + p * 16 + k));
        wrx[p - 1].q.push_back(get(p, 0x7100 + p * 16 + k));
      }
    }
    settle();
    CHECK(sm_out.empty(), "no WQE: %zu MADs on SM RX", sm_out.size());
    CHECK(sma_out.size() == 6, "no WQE: %zu of 6 SMA requests arrived", sma_out.size());
    for (int p = 1; p <= kPorts; p++) drops[p - 1] += 3, to_sma[p - 1] += 3;
    expect("no WQE");
    clear_outs();
    // One WQE on port 2: the first GetResp at port 2 is delivered (tag 2);
    // the one at port 1 and the second at port 2 are discarded.
    sm_ready_pct = 40;
    rq_post(2, 1);
    wrx[1].q.push_back(getresp(2, 0x7201));
    wrx[0].q.push_back(getresp(1, 0x7202));
    settle();
    wrx[1].q.push_back(getresp(2, 0x7203));
    settle();
    CHECK(sm_tids() == (Got{{0x7201, 2}}), "post 1 on port 2: %zu MADs on SM RX", sm_out.size());
    drops[0]++, drops[1]++, to_sm[1]++;
    expect("post 1 on port 2");
    clear_outs();
    // Out-of-range tags post nothing.
    rq_post(0, 5);
    rq_post(3, 5);
    rq_post(0xFF, 5);
    for (int p = 1; p <= kPorts; p++) wrx[p - 1].q.push_back(getresp(p, 0x7300 + p));
    settle();
    CHECK(sm_out.empty(), "out-of-range doorbell tags posted WQEs");
    drops[0]++, drops[1]++;
    expect("out-of-range doorbell tags");
    // Two on each port, then port 1 cleared: port 2 lets two through.
    rq_post(1, 2);
    rq_post(2, 2);
    rq_post(1, 0, true);
    for (int k = 0; k < 3; k++)
      for (int p = 1; p <= kPorts; p++) wrx[p - 1].q.push_back(getresp(p, 0x7400 + p * 16 + k));
    settle();
    CHECK(sm_tids() == (Got{{0x7420, 2}, {0x7421, 2}}), "clear on port 1: %zu MADs on SM RX", sm_out.size());
    drops[0] += 3, drops[1]++, to_sm[1] += 2;
    expect("clear on port 1");
    clear_outs();
    sm_ready_pct = 70;
    sma_ready_pct = 70;
  }

  // ---- Stress ------------------------------------------------------------------
  reset();
  for (int p = 1; p <= kPorts; p++) {
    reg_write(preg(p, kRegRxDepth), 2);
    reg_write(preg(p, kRegPortLid), 0x10 * p);
    reg_write(preg(p, kRegMasterSmLid), 0x100 + p);
    reg_write(preg(p, kRegMasterSmSl), p);
  }
  std::fill(std::begin(psn), std::end(psn), 0u);
  const int kReq = 40, kSm = 12, kTrap = 4;
  std::map<uint64_t, std::pair<Bytes, int>> reqs;  // TID -> request MAD, port
  std::map<uint64_t, Bytes> expect_tx[kPorts];      // TID -> MAD expected on the wire (PSN from position)
  std::map<uint64_t, std::pair<uint16_t, uint16_t>> expect_lid[kPorts];  // TID -> DLID, SLID
  std::map<uint64_t, uint8_t> expect_sl[kPorts];
  for (int k = 0; k < kReq; k++) {
    for (int p = 1; p <= kPorts; p++) {
      uint8_t hc = 1 + urand(5);
      std::vector<uint8_t> ip(hc + 1);
      for (auto& x : ip) x = urand(256);
      uint64_t tid = 0xA0000000ull + p * 0x10000 + k;
      Bytes req = dr_mad(0x01, false, hc, hc, tid, ip);
      reqs[tid] = {req, p};
      wrx[p - 1].q.push_back(build_pkt(0, 0xFFFF, 0xFFFF, k, req));
    }
  }
  for (int k = 0; k < kSm; k++) {
    for (int p = 1; p <= kPorts; p++) {
      uint64_t tid = 0xB0000000ull + p * 0x10000 + k;
      Bytes req = dr_mad(0x01, false, 0, 2, tid, {0, static_cast<uint8_t>(p), 4});
      sm_src.q.push_back(TxMad{req, 0xFFFF, 0, static_cast<uint8_t>(k & 0xF), static_cast<uint8_t>(urand(128)),
                               static_cast<uint8_t>(p)});
      Bytes m = req;
      m[6] = 1;
      expect_tx[p - 1][tid] = m;
      expect_lid[p - 1][tid] = {0xFFFF, static_cast<uint16_t>(0x10 * p)};  // SLID := LID (LMC 0)
      expect_sl[p - 1][tid] = k & 0xF;
    }
  }
  for (int k = 0; k < kTrap; k++) {
    for (int p = 1; p <= kPorts; p++) {
      uint64_t tid = 0xC0000000ull + p * 0x10000 + k;
      Bytes m(256, 0);
      m[0] = 1, m[1] = 0x01, m[2] = 1, m[3] = 0x05;
      for (int i = 0; i < 8; i++) m[8 + i] = (tid >> (56 - 8 * i)) & 0xFF;
      m[17] = 0x02;
      for (int i = 64; i < 128; i++) m[i] = static_cast<uint8_t>(i + k);
      trap_src.q.push_back(TxMad{m, 0, 0, 0, 0, static_cast<uint8_t>(p)});
      expect_tx[p - 1][tid] = m;
      expect_lid[p - 1][tid] = {static_cast<uint16_t>(0x100 + p), static_cast<uint16_t>(0x10 * p)};
      expect_sl[p - 1][tid] = p;
    }
  }
  sma_echo = true;
  echo_seen.clear();
  for (int phase = 0; phase < 4; phase++) {
    for (auto& w : wrx) w.gap = phase == 0 ? 0 : 40;
    sma_ready_pct = phase == 1 ? 15 : 80;
    sm_ready_pct = 60;
    tx_ready_pct[0] = phase == 2 ? 15 : 70;
    tx_ready_pct[1] = phase == 3 ? 15 : 70;
    sma_src.gap = sm_src.gap = trap_src.gap = phase == 0 ? 0 : 40;
    run(4000);
  }
  for (auto& w : wrx) w.gap = 10;
  sma_ready_pct = 70, tx_ready_pct[0] = tx_ready_pct[1] = 70;
  for (int i = 0; i < 20 && !(quiet() && top->idle_o); i++) settle();
  sma_echo = false;
  CHECK(quiet() && top->idle_o, "stress: did not drain");
  // SMA deliveries: each the model's MAD for its request, tagged with the port it arrived on
  uint32_t to_sma[kPorts] = {0, 0};
  for (const RxMad& r : echo_seen) {
    uint64_t tid = mad_tid(r.b);
    auto it = reqs.find(tid);
    CHECK(it != reqs.end(), "stress: SMA got an unknown TID %lx", tid);
    if (it == reqs.end()) continue;
    int p = it->second.second;
    CHECK(r.port == p, "stress: TID %lx sent on port %d, tagged %u", tid, p, r.port);
    check_bytes(r.b, model_rx_dr_get(it->second.first, p), "stress: SMA MAD");
    to_sma[p - 1]++;
    Bytes resp = sma_response(r.b);
    expect_tx[p - 1][tid] = model_tx_resp_mad(resp);
    expect_lid[p - 1][tid] = {0xFFFF, 0xFFFF};
    expect_sl[p - 1][tid] = 0;
    reqs.erase(it);
  }
  for (int p = 1; p <= kPorts; p++) {
    uint32_t dropped = ctr(p, CtrVl15Dropped);
    CHECK(ctr(p, CtrSmiToSma) == to_sma[p - 1], "stress port %d: ToSma %u, SMA saw %u", p, ctr(p, CtrSmiToSma),
          to_sma[p - 1]);
    CHECK(to_sma[p - 1] + dropped == uint32_t(kReq), "stress port %d: %u to SMA + %u dropped != %d", p,
          to_sma[p - 1], dropped, kReq);
    CHECK(to_sma[p - 1] > 0, "stress port %d: nothing delivered", p);
    CHECK(ctr(p, CtrRxPkts) == uint32_t(kReq), "stress port %d: RxPkts %u", p, ctr(p, CtrRxPkts));
    // every wire packet: PSN = position, exactly the model's packet
    const auto& wo = wire_out[p - 1];
    CHECK(wo.size() == expect_tx[p - 1].size(), "stress port %d: %zu wire packets, expected %zu", p, wo.size(),
          expect_tx[p - 1].size());
    CHECK(ctr(p, CtrTxVl15Pkts) == wo.size() && ctr(p, CtrSqPkts) == wo.size(), "stress port %d: TX counters", p);
    for (size_t i = 0; i < wo.size(); i++) {
      const Bytes& w = wo[i];
      CHECK(w.size() == 290 && crcs_ok(w), "stress port %d packet %zu: %zu bytes or bad CRCs", p, i, w.size());
      if (w.size() != 290) continue;
      uint64_t tid = mad_tid(mad_of(w));
      auto it = expect_tx[p - 1].find(tid);
      CHECK(it != expect_tx[p - 1].end(), "stress port %d packet %zu: unexpected TID %lx", p, i, tid);
      if (it == expect_tx[p - 1].end()) continue;
      auto [dlid, slid] = expect_lid[p - 1][tid];
      check_bytes(w, build_pkt(expect_sl[p - 1][tid], dlid, slid, static_cast<uint32_t>(i), it->second),
                  "stress wire packet");
      expect_tx[p - 1].erase(it);
    }
  }
  CHECK(gated > 1000, "clock edges skipped while idle: only %lu", gated);
  std::printf("ib_ca_mp_top DataW=%d: stress to SMA %u/%u, wire %zu/%zu, %lu idle edges skipped\n", DATAW,
              to_sma[0], to_sma[1], wire_out[0].size(), wire_out[1].size(), gated);

  top->final();
  int rc = finish("ib_ca_mp_top");
  std::fflush(stdout);
  tb_coverage_write();
  top.reset();
  return rc;
}
