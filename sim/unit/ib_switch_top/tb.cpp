// Unit harness for ib_switch_top (docs/fabric.md). Expected values come from
// a small reference written here from ibspec and docs/fabric.md: the CRCs,
// a packet builder, the directed-route rules of Linux smi.c (§5, written
// independently of the RTL), and an LFT shadow. Every external input gets
// idle cycles between beats and every output random tready unless a test
// needs a fixed pattern. Tests: registers and PortState; LFT forwarding of
// VL15 and data packets; every drop reason with its counter; VL15 overtaking
// queued data; round-robin between two inputs; the §5 worked trace (hc=2)
// through the switch and the switch as the target (SMA response from port
// 0); DR intermediate forward, hc 63 / 64, egress > N and 0; the LID-routed
// head/tail rows; link_up_i falling mid-packet; a random stress mix; the
// port-0 GMP path (gmp_rx from every port interleaved with VL15 and
// forwarded data, gmp_tx out by the LFT with backpressure, its drops), the
// word counters against the sum of PktLen, and the selective counter clear;
// the test-only counter write of simulation builds (an external port's
// counters, also in a clock-gated idle tile; port 0's SMI counters and its
// GMP bank).
#include <algorithm>
#include <deque>
#include <map>
#include <memory>

#include "Vib_switch_top.h"
#include "tb_util.h"
#include "verilated.h"

// The model under test: ib_switch_top, or (sim/unit/sw_mgmt_tile) a type
// derived from it that runs the tile composition beside it.
#ifndef SW_TOP_T
#define SW_TOP_T Vib_switch_top
#endif

#ifndef NPORTS
#error "NPORTS must be defined"
#endif
static constexpr int N = NPORTS;
static constexpr int kMadBeats = 256 / kDataB;
static constexpr int kMad = 28;
// Workload scale: NumPorts 36 runs fewer rounds (the model is 4-5x bigger).
static constexpr int kRounds = N > 8 ? 1 : 3;

// ---------------------------------------------------------------------------
// Spec constants (docs/fabric.md register map and counter table)
// ---------------------------------------------------------------------------
enum : uint16_t {
  kRegId = 0x0000, kRegPort0Lid = 0x0001, kRegMasterSmLid = 0x0003, kRegMasterSmSl = 0x0004,
  kRegNumPorts = 0x0006, kRegNumPortsMax = 0x0007, kRegLinearTop = 0x0008, kRegPortChange = 0x0009,
  kRegLftDepth = 0x000A, kRegCtrClear = 0x000F, kRegPortState = 0x0100, kRegCtrBase = 0x0200,
  kRegLftBase = 0x1000, kRegCtr0GBase = 0x0700, kRegCtrClrSel = 0x0800,
  kRegPkeyCap = 0x0020, kRegPkeyIdx = 0x0021, kRegPkeyData = 0x0022,
};
enum Ctr {  // external port p
  RxPkts, RxVcrcErr, RxLenErr, RxLverErr, RxLnhErr, Vl15Dropped, DataDropped, LinkDownDrop,
  NoRoute, LoopDrop, StateDrop, FwdPkts, TxVl15Pkts, TxDataPkts, RxWords, TxWords
};
enum Ctr0 {  // port 0
  ToSma, ToSm, IcrcErr, BadHdr, LidErr, DrDiscard, DrForwarded, PortDown, SmiVl15Dropped,
  SqPkts, SqDrDiscard, SqLocal, P0NoRoute, P0LoopDrop, P0StateDrop
};
enum Ctr0g {  // port 0, GMP bank (0x0700 + c)
  GRxPkts, GIcrcErr, GBadHdr, GGmps, GTxPkts, GTxDrop, GRxWords, GTxWords, GPkeyViol, GQkeyViol
};
// gsi_reason_e (ib_pkg)
enum { RsOk, RsLinkDrop, RsIcrc, RsHdr, RsPkey, RsQkey };
enum : uint8_t { Down = 1, Init = 2, Armed = 3, Active = 4 };

// ---------------------------------------------------------------------------
// Reference: CRCs and packet builder (ibspec §1-§4)
// ---------------------------------------------------------------------------
static uint32_t crc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : (c >> 1);
  }
  return c ^ 0xFFFFFFFFu;
}
// ICRC of a packet LRH..ICRC (VL and resv8a as 1s), over all but the last 4 bytes.
static uint32_t icrc_of(const Bytes& p) {
  Bytes m(p.begin(), p.end() - 4);
  m[0] |= 0xF0;
  m[12] = 0xFF;
  return crc32(m.data(), m.size());
}
static void set_icrc(Bytes& p) {
  uint32_t c = icrc_of(p);
  for (int i = 0; i < 4; i++) p[p.size() - 4 + i] = (c >> (8 * i)) & 0xFF;
}
static bool icrc_ok(const Bytes& p) {
  uint32_t c = icrc_of(p);
  for (int i = 0; i < 4; i++)
    if (p[p.size() - 4 + i] != ((c >> (8 * i)) & 0xFF)) return false;
  return true;
}
static Bytes with_vcrc(Bytes p) {
  p.resize(p.size() + 2);
  fix_vcrc(p);
  return p;
}
static uint16_t be16(const Bytes& p, size_t o) { return uint16_t(p[o] << 8 | p[o + 1]); }
static void put16(Bytes& p, size_t o, uint16_t v) { p[o] = v >> 8; p[o + 1] = v & 0xFF; }

// LRH + BTH (+ DETH for SMPs): packet LRH..ICRC with `payload` after the headers.
static Bytes build_pkt(uint8_t vl, uint8_t sl, uint16_t dlid, uint16_t slid, uint32_t psn, const Bytes& payload,
                       bool deth) {
  Bytes p(20 + (deth ? 8 : 0));
  p[0] = uint8_t(vl << 4);
  p[1] = uint8_t(sl << 4 | 2);
  put16(p, 2, dlid);
  put16(p, 6, slid);
  p[8] = 0x64;
  put16(p, 10, 0xFFFF);
  p[17] = (psn >> 16) & 0xFF; p[18] = (psn >> 8) & 0xFF; p[19] = psn & 0xFF;
  p.insert(p.end(), payload.begin(), payload.end());
  p.resize(p.size() + 4);
  size_t words = p.size() / 4;
  p[4] = (words >> 8) & 7;
  p[5] = words & 0xFF;
  set_icrc(p);
  return p;
}
static Bytes smp_pkt(uint8_t sl, uint16_t dlid, uint16_t slid, uint32_t psn, const Bytes& mad) {
  return build_pkt(15, sl, dlid, slid, psn, mad, true);
}
static Bytes data_pkt(uint8_t vl, uint16_t dlid, uint16_t slid, int payload_bytes, uint32_t tag) {
  Bytes pl(payload_bytes);
  for (int i = 0; i < payload_bytes; i++) pl[i] = uint8_t(tag * 31 + i * 7 + (tag >> 8));
  if (payload_bytes >= 4) { pl[0] = tag >> 24; pl[1] = tag >> 16; pl[2] = tag >> 8; pl[3] = tag; }
  return build_pkt(vl, 0, dlid, slid, tag & 0xFFFFFF, pl, false);
}

// DR SMP MAD (ibspec §4)
struct Dr {
  uint8_t method = 0x01;
  bool d = false;
  uint8_t hp = 0, hc = 0;
  uint16_t dr_slid = 0xFFFF, dr_dlid = 0xFFFF;
  uint32_t tid = 0;
  uint8_t ip[64] = {}, rp[64] = {};
};
static Bytes dr_mad(const Dr& r) {
  Bytes m(256, 0);
  m[0] = 1; m[1] = 0x81; m[2] = 1; m[3] = r.method;
  m[4] = r.d ? 0x80 : 0;
  m[6] = r.hp; m[7] = r.hc;
  m[8 + 4] = r.tid >> 24; m[8 + 5] = r.tid >> 16; m[8 + 6] = r.tid >> 8; m[8 + 7] = r.tid;
  put16(m, 16, 0x0011);  // NodeInfo
  put16(m, 32, r.dr_slid);
  put16(m, 34, r.dr_dlid);
  for (int i = 0; i < 64; i++) { m[128 + i] = r.ip[i]; m[192 + i] = r.rp[i]; }
  for (int i = 64; i < 128; i++) m[i] = uint8_t(r.tid + i);
  return m;
}
static Bytes lid_mad(uint8_t method, uint32_t tid) {
  Bytes m(256, 0);
  m[0] = 1; m[1] = 0x01; m[2] = 1; m[3] = method;
  m[12] = tid >> 24; m[13] = tid >> 16; m[14] = tid >> 8; m[15] = tid;
  put16(m, 16, 0x0015);
  for (int i = 64; i < 128; i++) m[i] = uint8_t(tid * 3 + i);
  return m;
}
// A GMP (ibspec §2, §4, vector V3's layout): PerfMgt Get on data VL `vl`,
// DestQP 1, Q_Key 0x80010000, SrcQP 1, TID = tag.
static Bytes gmp_pkt(uint8_t vl, uint16_t dlid, uint16_t slid, uint32_t tag) {
  Bytes m(256, 0);
  m[0] = 1; m[1] = 0x04; m[2] = 1; m[3] = 0x01;
  m[12] = tag >> 24; m[13] = tag >> 16; m[14] = tag >> 8; m[15] = tag;
  put16(m, 16, 0x0012);  // PortCounters
  for (int i = 64; i < 256; i++) m[i] = uint8_t(tag * 5 + i);
  Bytes p = build_pkt(vl, 0, dlid, slid, tag & 0xFFFFFF, m, true);
  p[15] = 1;                                            // DestQP 1
  p[20] = 0x80; p[21] = 0x01; p[22] = 0; p[23] = 0;     // Q_Key
  p[27] = 1;                                            // SrcQP 1
  set_icrc(p);
  return p;
}
static uint32_t pktlen(const Bytes& p) { return uint32_t(be16(p, 4) & 0x7FF); }
static Bytes mad_of(const Bytes& p) { return Bytes(p.begin() + kMad, p.begin() + kMad + 256); }

// ---------------------------------------------------------------------------
// Reference: Linux smi.c directed-route rules (ibspec §5), on a MAD
// ---------------------------------------------------------------------------
struct Smp {
  Bytes& m;
  bool d() const { return m[4] & 0x80; }
  uint8_t& hp() { return m[6]; }
  uint8_t hc() const { return m[7]; }
  uint8_t& ip(int i) { return m[128 + i]; }
  uint8_t& rp(int i) { return m[192 + i]; }
  uint16_t dr_slid() const { return be16(m, 32); }
  uint16_t dr_dlid() const { return be16(m, 34); }
};
enum { kDiscard = 0, kHandle = 1 };
static int smi_send(Smp s, bool sw, int port) {
  uint8_t hc = s.hc();
  if (hc >= 64) return kDiscard;
  if (!s.d()) {
    if (hc && s.hp() == 0) { s.hp()++; return s.ip(s.hp()) == port ? kHandle : kDiscard; }
    if (s.hp() && s.hp() < hc) { if (!sw) return kDiscard; s.hp()++; return s.ip(s.hp()) == port ? kHandle : kDiscard; }
    if (s.hp() == hc) { s.hp()++; return (sw || s.dr_dlid() == 0xFFFF) ? kHandle : kDiscard; }
    return s.hp() == hc + 1 ? kHandle : kDiscard;
  }
  if (hc && s.hp() == hc + 1) { s.hp()--; return s.rp(s.hp()) == port ? kHandle : kDiscard; }
  if (s.hp() >= 2 && s.hp() <= hc) { if (!sw) return kDiscard; s.hp()--; return s.rp(s.hp()) == port ? kHandle : kDiscard; }
  if (s.hp() == 1) { s.hp()--; return (sw || s.dr_slid() == 0xFFFF) ? kHandle : kDiscard; }
  return s.hp() == 0 ? kHandle : kDiscard;
}
static int smi_recv(Smp s, bool sw, int port, int n) {
  uint8_t hc = s.hc();
  if (hc >= 64) return kDiscard;
  if (!s.d()) {
    if (hc && s.hp() == 0) return kDiscard;
    if (s.hp() && s.hp() < hc) { if (!sw) return kDiscard; s.rp(s.hp()) = port; return s.ip(s.hp() + 1) <= n ? kHandle : kDiscard; }
    if (s.hp() == hc) { if (hc) s.rp(s.hp()) = port; return (sw || s.dr_dlid() == 0xFFFF) ? kHandle : kDiscard; }
    return s.hp() == hc + 1 ? kHandle : kDiscard;
  }
  if (hc && s.hp() == hc + 1) { s.hp()--; return s.rp(s.hp()) == port ? kHandle : kDiscard; }
  if (s.hp() >= 2 && s.hp() <= hc) { if (!sw) return kDiscard; return s.rp(s.hp() - 1) <= n ? kHandle : kDiscard; }
  if (s.hp() == 1) { if (s.dr_slid() == 0xFFFF) { s.hp()--; return kHandle; } return sw ? kHandle : kDiscard; }
  return s.hp() == 0 ? kHandle : kDiscard;
}
enum Disp { kLocal, kSend, kForward };
static Disp check_forward(Smp s) {
  uint8_t hc = s.hc();
  if (!s.d()) {
    if (s.hp() && s.hp() < hc) return kForward;
    if (s.hp() == hc) return s.dr_dlid() == 0xFFFF ? kSend : kLocal;
    if (s.hp() == hc + 1) return kSend;
    return kLocal;
  }
  if (s.hp() >= 2 && s.hp() <= hc) return kForward;
  if (s.hp() == 1) return s.dr_slid() != 0xFFFF ? kSend : kLocal;
  return kLocal;
}
// What the switch does with a DR SMP arriving at port P (docs/fabric.md).
struct SwOut {
  enum Kind { Drop, ToSma, ToSm, Out } kind = Drop;
  Bytes mad;
  int port = 0;         // Out: egress port (0 = by the LFT of dlid)
  uint16_t dlid = 0, slid = 0;
  bool by_lft = false;
};
static bool to_sm_rule(const Bytes& m) {
  return (m[3] & 0x80) || m[3] == 0x05 || (be16(m, 16) == 0x0020 && (m[3] == 1 || m[3] == 2));
}
static SwOut sw_expect(Bytes mad, int P, int n, bool lid_routed, uint16_t own_lid) {
  SwOut o;
  Smp s{mad};
  if (s.hc() >= 64) return o;
  auto path_out = [&](void) {
    // send rules with P = the egress port: fwd port first, then the step
    int eg = s.d() ? s.rp(s.hp() - 1) : s.ip(s.hp() + 1);
    if (smi_send(s, true, eg) != kHandle) return;
    if (eg == 0 || eg > n) return;
    o.kind = SwOut::Out; o.port = eg; o.dlid = o.slid = 0xFFFF; o.mad = mad;
  };
  auto lft_out = [&](uint16_t dlid) {
    if (smi_send(s, true, 0) != kHandle) return;
    o.kind = SwOut::Out; o.by_lft = true; o.dlid = dlid; o.slid = own_lid; o.mad = mad;
  };
  if (lid_routed && !s.d() && s.hc() && s.hp() == 0) { path_out(); return o; }       // head -> DR part
  if (lid_routed && s.d() && s.hc() && s.hp() == s.hc() + 1) { path_out(); return o; }  // tail -> DR part
  if (smi_recv(s, true, P, n) != kHandle) return o;
  Disp d = check_forward(s);
  if (d == kForward) { path_out(); return o; }
  if (d == kLocal) {
    if (!s.d() && s.hp() == s.hc() && s.dr_dlid() != 0xFFFF) { lft_out(s.dr_dlid()); return o; }  // tail
    o.kind = to_sm_rule(mad) ? SwOut::ToSm : SwOut::ToSma; o.mad = mad; return o;
  }
  // SEND
  if (s.d() && s.hp() == 1 && s.dr_slid() != 0xFFFF) { lft_out(s.dr_slid()); return o; }  // head exit
  if (smi_send(s, true, P) != kHandle) return o;
  if (!s.d() && s.hp() == s.hc() + 1) { o.kind = to_sm_rule(mad) ? SwOut::ToSm : SwOut::ToSma; o.mad = mad; }
  return o;
}

// ---------------------------------------------------------------------------
// Model and agents
// ---------------------------------------------------------------------------
static std::unique_ptr<SW_TOP_T> top;
static uint64_t cycle = 0;

template <typename T>
static void setbit(T& sig, int i, bool v) {
  uint8_t* p = reinterpret_cast<uint8_t*>(&sig);
  if (v) p[i / 8] |= uint8_t(1u << (i % 8)); else p[i / 8] &= uint8_t(~(1u << (i % 8)));
}
template <typename T>
static bool getbit(const T& sig, int i) {
  return (reinterpret_cast<const uint8_t*>(&sig)[i / 8] >> (i % 8)) & 1;
}
template <typename T>
static void setbytes(T& sig, int byteoff, const uint8_t* b, int n) {
  std::memcpy(reinterpret_cast<uint8_t*>(&sig) + byteoff, b, n);
}
template <typename T>
static void getbytes(const T& sig, int byteoff, uint8_t* b, int n) {
  std::memcpy(b, reinterpret_cast<const uint8_t*>(&sig) + byteoff, n);
}

struct RxPort {
  std::deque<Bytes> q;
  Bytes cur;
  size_t off = 0;
  int gap = 30;
  bool link = true;
  int cut_after = -1;  // beats: link goes down after this many beats of the next packet
};
struct TxPort {
  int ready_pct = 60;
  Bytes cur;
  std::vector<Bytes> out;       // LRH..ICRC (VCRC checked and removed)
  std::vector<uint64_t> t_end;  // cycle of each packet's last beat
};
static RxPort rxp[N + 1];
static TxPort txp[N + 1];

struct RxMad {
  Bytes b;
  uint16_t slid, dlid;
  uint8_t sl, port, cls, hp, hc;
};
static std::vector<RxMad> sma_out, sm_out;
static RxMad sma_cur, sm_cur;
static int sma_ready_pct = 70, sm_ready_pct = 70;
struct TxMad {
  Bytes b;
  uint16_t m0, m1;
  uint8_t sl;
};
struct Src {
  std::deque<TxMad> q;
  int beat = 0;
  bool presenting = false;
  int gap = 20;
};
static Src sma_src, sm_src, trap_src;

// Host GMP stream into gmp_tx (packets LRH..ICRC, any length), and the
// gmp_rx sink (no ready: every valid beat is taken).
struct PktSrc {
  std::deque<Bytes> q;
  size_t off = 0;
  bool presenting = false;
  int gap = 20;
  int n = 0;  // bytes in the beat presented
};
static PktSrc gtx_src;
struct GmpRx {
  Bytes b;
  bool tuser;
  int port_slid;
  int reason;  // gmp_rx_reason_o on tlast (ib_pkg::gsi_reason_e)
};
static std::vector<GmpRx> gmp_out;
static Bytes gmp_cur;

template <typename T>
static void drive_src(Src& s, T& tdata, uint8_t& tvalid, uint8_t& tlast) {
  if (!s.presenting && !s.q.empty() && !chance(s.gap)) s.presenting = true;
  uint8_t b[16];
  for (auto& j : b) j = urand(256);
  if (s.presenting) std::memcpy(b, &s.q.front().b[s.beat * kDataB], kDataB);
  put_bytes(tdata, b, kDataB);
  tlast = s.presenting ? s.beat == kMadBeats - 1 : urand(2);
  tvalid = s.presenting;
}
static void take_src(Src& s, bool ready) {
  if (s.presenting && ready) {
    s.presenting = false;
    if (++s.beat == kMadBeats) { s.beat = 0; s.q.pop_front(); }
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
  } else {
    CHECK(meta.slid == cur.slid && meta.dlid == cur.dlid && meta.port == cur.port && meta.hp == cur.hp,
          "%s meta changed inside a packet", name);
  }
  cur.b.insert(cur.b.end(), b, b + kDataB);
  CHECK(tlast == (cur.b.size() == 256), "%s tlast at byte %zu", name, cur.b.size());
  if (tlast) { out.push_back(cur); cur = RxMad{}; }
}

// Every output of the switch in this cycle, qualified by its valid (see
// Digest in tb_util.h): ClkGate = 0 and 1 must give the same digest.
static void digest_outputs() {
  Digest& d = g_digest;
  for (int p = 1; p <= N; p++) {
    bool v = getbit(top->tx_tvalid_o, p - 1);
    d.add_u64(v);
    if (v) {
      uint8_t o[16] = {};
      int n = 0;
      for (int j = 0; j < kDataB; j++) n += getbit(top->tx_tkeep_o, (p - 1) * kDataB + j);
      getbytes(top->tx_tdata_o, (p - 1) * kDataB, o, n);
      d.add(o, sizeof o);
      d.add_u64(n * 2 + getbit(top->tx_tlast_o, p - 1));
    }
  }
  digest_mad_beat(top->sma_rx_tvalid_o, top->sma_rx_tdata_o, top->sma_rx_tlast_o, sma_rx_meta(*top));
  digest_mad_beat(top->sm_rx_tvalid_o, top->sm_rx_tdata_o, top->sm_rx_tlast_o, sm_rx_meta(*top));
  d.add_u64(top->gmp_rx_tvalid_o);
  if (top->gmp_rx_tvalid_o) {
    uint8_t o[16] = {};
    int n = popcount(top->gmp_rx_tkeep_o);
    get_bytes(top->gmp_rx_tdata_o, o, n);
    d.add(o, sizeof o);
    d.add_u64(n * 2 + top->gmp_rx_tlast_o);
    if (top->gmp_rx_tlast_o) d.add_u64(top->gmp_rx_tuser_o * 8 + top->gmp_rx_reason_o);
  }
  d.add_u64(top->sma_tx_tready_o * 8 + top->sm_tx_tready_o * 4 + top->trap_tx_tready_o * 2 +
            top->gmp_tx_tready_o);
  uint8_t ps[((N + 1) * 4 + 7) / 8] = {};
  getbytes(top->port_state_o, 0, ps, sizeof ps);
  d.add(ps, sizeof ps);
  d.add_u64((uint64_t(top->mkey_viols_o) << 8) ^ (top->mkey_prot_o << 2) ^
            (top->port_state_change_o << 1) ^ top->idle_o);
}

static void tick() {
  for (int p = 1; p <= N; p++) {
    RxPort& r = rxp[p];
    if (r.cur.empty() && !r.q.empty()) { r.cur = r.q.front(); r.q.pop_front(); r.off = 0; }
    uint8_t b[16];
    for (auto& j : b) j = urand(256);
    bool v = false, last = urand(2);
    int n = 1 + urand(kDataB);
    if (!r.cur.empty() && !chance(r.gap)) {
      if (r.cut_after == 0) {  // the link goes down inside this packet
        r.link = false;
        r.cut_after = -1;
        r.cur.clear();
      } else {
        n = int(std::min<size_t>(kDataB, r.cur.size() - r.off));
        std::memcpy(b, &r.cur[r.off], n);
        v = true;
        last = r.off + n == r.cur.size();
        r.off += n;
        if (r.cut_after > 0 && r.off > 0) r.cut_after--;
        if (last) r.cur.clear();
      }
    }
    setbytes(top->rx_tdata_i, (p - 1) * kDataB, b, kDataB);
    for (int j = 0; j < kDataB; j++) setbit(top->rx_tkeep_i, (p - 1) * kDataB + j, j < n);
    setbit(top->rx_tvalid_i, p - 1, v);
    setbit(top->rx_tlast_i, p - 1, last);
    setbit(top->link_up_i, p - 1, r.link);
    setbit(top->tx_tready_i, p - 1, chance(txp[p].ready_pct));
  }
  top->sma_rx_tready_i = chance(sma_ready_pct);
  top->sm_rx_tready_i = chance(sm_ready_pct);
  drive_src(sma_src, top->sma_tx_tdata_i, top->sma_tx_tvalid_i, top->sma_tx_tlast_i);
  drive_src(sm_src, top->sm_tx_tdata_i, top->sm_tx_tvalid_i, top->sm_tx_tlast_i);
  drive_src(trap_src, top->trap_tx_tdata_i, top->trap_tx_tvalid_i, top->trap_tx_tlast_i);
  {
    PktSrc& g = gtx_src;
    if (!g.presenting && !g.q.empty() && !chance(g.gap)) g.presenting = true;
    uint8_t b[16];
    for (auto& j : b) j = urand(256);
    g.n = 1 + urand(kDataB);
    bool last = urand(2);
    if (g.presenting) {
      const Bytes& f = g.q.front();
      g.n = int(std::min<size_t>(kDataB, f.size() - g.off));
      std::memcpy(b, &f[g.off], g.n);
      last = g.off + g.n == f.size();
    }
    put_bytes(top->gmp_tx_tdata_i, b, kDataB);
    top->gmp_tx_tkeep_i = keep_mask(g.n);
    top->gmp_tx_tvalid_i = g.presenting;
    top->gmp_tx_tlast_i = last;
  }
  if (!sma_src.q.empty()) {
    top->sma_tx_slid_i = sma_src.q.front().m0;
    top->sma_tx_dlid_i = sma_src.q.front().m1;
    top->sma_tx_sl_i = sma_src.q.front().sl;
  }
  if (!sm_src.q.empty()) {
    top->sm_tx_dlid_i = sm_src.q.front().m0;
    top->sm_tx_sl_i = sm_src.q.front().sl;
    top->sm_tx_path_bits_i = 0;
  }
  top->clk_i = 0;
  top->eval();
  if (top->rst_ni) {
    digest_outputs();
    for (int p = 1; p <= N; p++) {
      if (getbit(top->tx_tvalid_o, p - 1) && getbit(top->tx_tready_i, p - 1)) {
        uint8_t o[16];
        getbytes(top->tx_tdata_o, (p - 1) * kDataB, o, kDataB);
        int n = 0;
        for (int j = 0; j < kDataB; j++) n += getbit(top->tx_tkeep_o, (p - 1) * kDataB + j);
        TxPort& t = txp[p];
        t.cur.insert(t.cur.end(), o, o + n);
        if (getbit(top->tx_tlast_o, p - 1)) {
          Bytes w = t.cur;
          t.cur.clear();
          CHECK(w.size() >= 26, "port %d: runt packet of %zu bytes", p, w.size());
          if (w.size() >= 26) {
            uint16_t v = crc16(w.data(), w.size() - 2);
            CHECK(w[w.size() - 2] == (v & 0xFF) && w[w.size() - 1] == (v >> 8), "port %d: bad VCRC", p);
            w.resize(w.size() - 2);
            CHECK(be16(w, 4) * 4u == w.size(), "port %d: PktLen %u vs %zu bytes", p, be16(w, 4), w.size());
          }
          t.out.push_back(w);
          t.t_end.push_back(cycle);
        }
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
    if (gtx_src.presenting && top->gmp_tx_tready_o) {
      gtx_src.presenting = false;
      gtx_src.off += gtx_src.n;
      if (gtx_src.off == gtx_src.q.front().size()) { gtx_src.off = 0; gtx_src.q.pop_front(); }
    }
    if (top->gmp_rx_tvalid_o) {
      uint8_t o[16];
      get_bytes(top->gmp_rx_tdata_o, o, kDataB);
      uint32_t k = top->gmp_rx_tkeep_o;
      int n = popcount(k);
      CHECK(k == keep_mask(n) && n > 0, "gmp_rx: tkeep %x not contiguous", k);
      CHECK(top->gmp_rx_tlast_o || n == kDataB, "gmp_rx: partial beat inside a packet");
      gmp_cur.insert(gmp_cur.end(), o, o + n);
      if (top->gmp_rx_tlast_o) {
        // LRH..VCRC, as on a CA's drx: the VCRC is the one the packet arrived with
        CHECK(gmp_cur.size() >= 26 && be16(gmp_cur, 4) * 4u + 2 == gmp_cur.size(), "gmp_rx: PktLen vs %zu bytes",
              gmp_cur.size());
        if (gmp_cur.size() >= 26) {
          uint16_t v = crc16(gmp_cur.data(), gmp_cur.size() - 2);
          CHECK(gmp_cur[gmp_cur.size() - 2] == (v & 0xFF) && gmp_cur[gmp_cur.size() - 1] == (v >> 8),
                "gmp_rx: bad VCRC");
          gmp_cur.resize(gmp_cur.size() - 2);
        }
        gmp_out.push_back(GmpRx{gmp_cur, bool(top->gmp_rx_tuser_o), gmp_cur.size() >= 8 ? be16(gmp_cur, 6) : 0,
                                int(top->gmp_rx_reason_o)});
        gmp_cur.clear();
      }
    }
  }
  top->clk_i = 1;
  top->eval();
  cycle++;
}
static void run(int n) { for (int i = 0; i < n; i++) tick(); }
static bool quiet() {
  for (int p = 1; p <= N; p++)
    if (!rxp[p].q.empty() || !rxp[p].cur.empty()) return false;
  return sma_src.q.empty() && sm_src.q.empty() && trap_src.q.empty() && gtx_src.q.empty();
}
// Until the sources are drained and the switch reports idle (with the SMA/SM
// sinks taking what they are offered).
static void settle(const char* what, int max = 400000) {
  int i = 0;
  while (i < max && !quiet()) { tick(); i++; }
  int idle_run = 0;
  while (i < max && idle_run < 40) { tick(); i++; idle_run = top->idle_o ? idle_run + 1 : 0; }
  CHECK(idle_run >= 40, "%s: switch not idle after %d cycles", what, i);
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
static uint32_t ctr(int p, int c) { return reg_read(kRegCtrBase + 16 * p + c); }
static uint32_t gctr(int c) { return reg_read(kRegCtr0GBase + c); }
static uint8_t lft_shadow[4096];
static void lft_set(uint16_t lid, uint8_t port) {
  lft_shadow[lid] = port;
  uint16_t w = lid / 4;
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= uint32_t(lft_shadow[4 * w + i]) << (8 * i);
  reg_write(kRegLftBase + w, v);
}
static void clear_outputs() {
  for (int p = 0; p <= N; p++) { txp[p].out.clear(); txp[p].t_end.clear(); }
  sma_out.clear();
  sm_out.clear();
  gmp_out.clear();
}

static constexpr uint16_t kSwLid = 0x0100;
static constexpr uint16_t kSmLid = 0x0001;
// Host LIDs: port p has a CA with LID 0x10 + p.
static uint16_t host_lid(int p) { return uint16_t(0x10 + p); }

static void reset() {
  top->rst_ni = 0;
  for (int p = 1; p <= N; p++) { rxp[p] = RxPort{}; txp[p] = TxPort{}; }
  sma_src = Src{}; sm_src = Src{}; trap_src = Src{};
  sma_cur = sm_cur = RxMad{};
  gtx_src = PktSrc{};
  gmp_cur.clear();
  run(4);
  top->rst_ni = 1;
  run(2);
  clear_outputs();
}
// Standard configuration: port-0 LID, master SM, LFT host_lid(p) -> p, every port Active.
static void configure() {
  std::memset(lft_shadow, 0xFF, sizeof lft_shadow);
  reg_write(kRegPort0Lid, kSwLid);
  reg_write(kRegMasterSmLid, kSmLid);
  reg_write(kRegMasterSmSl, 3);
  reg_write(kRegLinearTop, 0x3FF);
  for (int p = 1; p <= N; p++) lft_set(host_lid(p), p);
  lft_set(kSmLid, 1);
  lft_set(kSwLid, 0);
  for (int p = 1; p <= N; p++) reg_write(kRegPortState + p, Active);
  reg_write(kRegCtrClear, 1);
}

// Expected switch-built SMP: headers as the SQ builds them (PSN not compared).
static void check_smp(const Bytes& got, uint8_t sl, uint16_t dlid, uint16_t slid, const Bytes& mad,
                      const char* what) {
  CHECK(got.size() == 288, "%s: %zu bytes", what, got.size());
  if (got.size() != 288) return;
  Bytes want = smp_pkt(sl, dlid, slid, 0, mad);
  for (int i = 17; i < 20; i++) want[i] = got[i];
  set_icrc(want);
  CHECK(icrc_ok(got), "%s: bad ICRC", what);
  bool same = got == want;
  CHECK(same, "%s: packet differs", what);
  if (!same)
    for (size_t i = 0; i < 288; i++)
      if (got[i] != want[i]) { std::fprintf(stderr, "  byte %zu: got %02x want %02x\n", i, got[i], want[i]); break; }
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------
static void test_regs() {
  reset();
  CHECK(reg_read(kRegId) == 0x564C5357, "ID %08x", reg_read(kRegId));
  CHECK(reg_read(kRegNumPortsMax) == uint32_t(N), "NUM_PORTS_MAX");
  CHECK(reg_read(kRegNumPorts) == uint32_t(N), "NUM_PORTS reset");
  CHECK(reg_read(kRegLftDepth) == 4096, "LFT_DEPTH");
  CHECK(reg_read(kRegLinearTop) == 0, "LINEAR_FDB_TOP reset");
  CHECK(reg_read(kRegLftBase + 5) == 0xFFFFFFFF, "unwritten LFT word");
  reg_write(kRegLftBase + 5, 0x04030201);
  CHECK(reg_read(kRegLftBase + 5) == 0x04030201, "LFT word");
  CHECK(reg_read(kRegPortState + 0) == Active, "port 0 Active");
  reg_write(kRegPortState + 0, Down);
  CHECK(reg_read(kRegPortState + 0) == Active, "port 0 ignores writes");
  for (int p = 1; p <= N; p++) CHECK(reg_read(kRegPortState + p) == Init, "port %d resets to Init", p);
  CHECK(reg_read(kRegPortChange) == 0, "no change after reset");
  reg_write(kRegPortState + 2, 0);  // NoChange
  CHECK(reg_read(kRegPortState + 2) == Init && reg_read(kRegPortChange) == 0, "NoChange write");
  reg_write(kRegPortState + 2, Armed);
  CHECK(reg_read(kRegPortState + 2) == Armed && reg_read(kRegPortChange) == 1, "write Armed");
  reg_write(kRegPortChange, 1);
  CHECK(reg_read(kRegPortChange) == 0 && !top->port_state_change_o, "w1c");
  rxp[3].link = false;
  run(3);
  CHECK(reg_read(kRegPortState + 3) == Down && reg_read(kRegPortChange) == 1, "link down -> Down");
  CHECK(((getbit(top->port_state_o, 12)) | getbit(top->port_state_o, 13) << 1 | getbit(top->port_state_o, 14) << 2) == Down,
        "port_state_o[3]");
  rxp[3].link = true;
  run(3);
  CHECK(reg_read(kRegPortState + 3) == Init, "link up -> Init");
  reg_write(kRegNumPorts, 2);
  CHECK(reg_read(kRegPortState + 3) == Down, "port above N reads Down");
  reg_write(kRegNumPorts, N);
  CHECK(top->idle_o, "idle after reset");
}

// LFT forwarding of data and VL15 packets between every port pair used.
static void test_lft_forward() {
  reset();
  configure();
  // Rounds of at most two packets per input (the input buffers hold two of
  // each class, so nothing is dropped), all inputs at once.
  std::map<int, std::vector<Bytes>> want;
  uint32_t tag = 1;
  for (int round = 0; round < kRounds; round++) {
    for (int a = 1; a <= N; a++) {
      for (int k = 0; k < 2; k++) {
        int b = 1 + urand(N);
        if (a == b) b = a % N + 1;
        Bytes p;
        if (k == 0) p = smp_pkt(0, host_lid(b), host_lid(a), tag, lid_mad(1, tag));
        else p = data_pkt(urand(15), host_lid(b), host_lid(a), 4 * (1 + urand(300)), tag);
        tag++;
        rxp[a].q.push_back(with_vcrc(p));
        want[b].push_back(p);
      }
    }
    settle("lft_forward");
  }
  for (int b = 1; b <= N; b++) {
    auto g = txp[b].out, w = want[b];
    std::sort(g.begin(), g.end());
    std::sort(w.begin(), w.end());
    CHECK(g == w, "port %d: %zu packets out, %zu expected (or contents differ)", b, g.size(), w.size());
  }
  uint32_t fwd = 0, rx = 0;
  for (int p = 1; p <= N; p++) { fwd += ctr(p, FwdPkts); rx += ctr(p, RxPkts); }
  CHECK(fwd == uint32_t(2 * kRounds * N) && rx == uint32_t(2 * kRounds * N), "FwdPkts %u RxPkts %u", fwd, rx);
  uint32_t txv = 0, txd = 0;
  for (int p = 1; p <= N; p++) { txv += ctr(p, TxVl15Pkts); txd += ctr(p, TxDataPkts); }
  CHECK(txv == uint32_t(kRounds * N) && txd == uint32_t(kRounds * N), "TxVl15Pkts %u TxDataPkts %u", txv, txd);
}

// Drops: LFT 0xFF, DLID > LinearFDBTop, own port, Down egress, data to an
// Init port, data to port 0, DLID 0, multicast, bad VCRC, buffer full.
static void test_drops() {
  reset();
  configure();
  lft_set(0x200, 0xFF);
  lft_set(0x201, uint8_t(N + 1));
  lft_set(0x3FF, 2);
  lft_set(0x202, 0);  // LFT 0 for a data DLID that is not the port-0 LID
  reg_write(kRegLinearTop, 0x300);
  lft_set(0x301, 2);  // above LinearFDBTop
  int a = 1;
  // one at a time: a burst of short packets could overflow the two input slots
  auto send = [&](Bytes p) { rxp[a].q.push_back(with_vcrc(p)); settle("drops send"); };
  send(data_pkt(0, 0x200, 1, 64, 1));                  // LFT 0xFF
  send(data_pkt(0, 0x201, 1, 64, 2));                  // LFT > NumPorts
  send(data_pkt(0, 0x301, 1, 64, 3));                  // DLID > LinearFDBTop
  send(data_pkt(0, host_lid(a), 1, 64, 4));            // egress = input port
  send(data_pkt(0, 0x202, 1, 64, 5));                  // data, LFT 0, DLID not the port-0 LID
  send(data_pkt(0, 0, 1, 64, 6));                      // DLID 0
  send(data_pkt(0, 0xC001, 1, 64, 7));                 // multicast
  send(smp_pkt(0, 0x200, 1, 8, lid_mad(1, 8)));        // VL15, LFT 0xFF
  send(smp_pkt(0, host_lid(a), 1, 9, lid_mad(1, 9)));  // VL15 loop
  send(build_pkt(15, 0, 0xFFFF, 1, 16, Bytes(44, 0x5A), true));  // short VL15 packet to the SMI
  send(build_pkt(15, 0, kSwLid, 1, 17, Bytes(256, 0), false));   // VL15 to port 0 without DETH
  settle("drops 1");
  CHECK(ctr(a, NoRoute) == 7, "NoRoute %u", ctr(a, NoRoute));
  CHECK(gmp_out.empty() && gctr(GRxPkts) == 0, "gmp_rx got a dropped packet");
  CHECK(ctr(0, BadHdr) == 2, "port 0 BadHdr %u", ctr(0, BadHdr));
  CHECK(ctr(a, LoopDrop) == 2, "LoopDrop %u", ctr(a, LoopDrop));
  // Down egress (VL15 and data), data from/to a non-Active port
  rxp[4].link = false;
  run(4);
  reg_write(kRegPortState + 3, Init);
  send(smp_pkt(0, host_lid(4), 1, 10, lid_mad(1, 10)));  // VL15 to Down port
  send(data_pkt(0, host_lid(4), 1, 64, 11));             // data to Down port
  send(data_pkt(0, host_lid(3), 1, 64, 12));             // data to Init port
  send(smp_pkt(0, host_lid(3), 1, 13, lid_mad(1, 13)));  // VL15 to Init port: forwarded
  settle("drops 2");
  CHECK(ctr(a, StateDrop) == 3, "StateDrop %u", ctr(a, StateDrop));
  CHECK(txp[3].out.size() == 1 && txp[4].out.empty(), "port 3 got %zu, port 4 %zu", txp[3].out.size(),
        txp[4].out.size());
  reg_write(kRegPortState + 3, Active);
  a = 2;
  reg_write(kRegPortState + 2, Armed);
  send(data_pkt(0, host_lid(3), 2, 64, 14));  // data from an Armed input
  settle("drops 3");
  CHECK(ctr(2, StateDrop) == 1, "StateDrop (input not Active) %u", ctr(2, StateDrop));
  reg_write(kRegPortState + 2, Active);
  // bad VCRC and buffer overflow (output held: DataDepth 2 slots fill)
  Bytes bad = with_vcrc(data_pkt(0, host_lid(3), 2, 64, 15));
  bad.back() ^= 1;
  rxp[2].q.push_back(bad);
  settle("drops 4");
  CHECK(ctr(2, RxVcrcErr) == 1, "RxVcrcErr %u", ctr(2, RxVcrcErr));
  txp[3].ready_pct = 0;
  rxp[2].gap = 0;
  for (int i = 0; i < 5; i++) rxp[2].q.push_back(with_vcrc(data_pkt(0, host_lid(3), 2, 1000, 20 + i)));
  run(20000);
  CHECK(ctr(2, DataDropped) >= 1, "DataDropped %u", ctr(2, DataDropped));
  txp[3].ready_pct = 60;
  settle("drops 5");
  CHECK(ctr(2, DataDropped) + txp[3].out.size() - 1 == 5, "dropped %u + delivered %zu", ctr(2, DataDropped),
        txp[3].out.size() - 1);
  rxp[4].link = true;
}

// VL15 overtakes queued data at an output; round-robin between two inputs.
static void test_vl15_first_and_rr() {
  reset();
  configure();
  int q = 3, a = 1, b = 2;
  txp[q].ready_pct = 0;
  Bytes d1 = data_pkt(0, host_lid(q), 1, 400, 101), d2 = data_pkt(0, host_lid(q), 1, 400, 102);
  rxp[a].q.push_back(with_vcrc(d1));
  rxp[a].q.push_back(with_vcrc(d2));
  run(3000);
  Bytes v = smp_pkt(0, host_lid(q), 2, 103, lid_mad(1, 103));
  rxp[b].q.push_back(with_vcrc(v));
  run(3000);
  txp[q].ready_pct = 50;
  settle("vl15 first");
  CHECK(txp[q].out.size() == 3 && txp[q].out[0] == d1 && txp[q].out[1] == v && txp[q].out[2] == d2,
        "order at port %d (%zu packets): want d1, VL15, d2", q, txp[q].out.size());
  // round robin: three inputs, two packets each, queued while the output
  // waits: a fair arbiter serves them in rotation (a fixed-priority one would
  // serve an input again as soon as its next packet asks)
  clear_outputs();
  txp[q].ready_pct = 0;
  int c = 4;
  for (int i = 0; i < 2; i++) {
    rxp[a].q.push_back(with_vcrc(data_pkt(0, host_lid(q), host_lid(a), 200, 0xA00 + i)));
    rxp[b].q.push_back(with_vcrc(data_pkt(0, host_lid(q), host_lid(b), 200, 0xB00 + i)));
    rxp[c].q.push_back(with_vcrc(data_pkt(0, host_lid(q), host_lid(c), 200, 0xC00 + i)));
  }
  run(4000);
  txp[q].ready_pct = 70;
  settle("rr");
  CHECK(txp[q].out.size() == 6, "rr: %zu packets", txp[q].out.size());
  if (txp[q].out.size() == 6) {
    for (int i = 1; i < 6; i++) {
      uint16_t s0 = be16(txp[q].out[i], 6);
      CHECK(s0 != be16(txp[q].out[i - 1], 6) && (i < 2 || s0 != be16(txp[q].out[i - 2], 6)),
            "rr: inputs not served in rotation at packet %d", i);
    }
  }
}

// The ibspec §5 worked trace (hc=2) through this switch (in a, out q), and
// the switch as the target of an hc=1 SMP with its SMA's response.
static void test_dr_trace() {
  reset();
  configure();
  int a = 2, q = 5;
  // SM-CA port 1 sent hp 0 -> 1 (IP[1] = 1); on the wire: hp = 1
  Dr r;
  r.hc = 2; r.hp = 1; r.ip[1] = 1; r.ip[2] = uint8_t(q); r.tid = 0x1111;
  Bytes m = dr_mad(r);
  rxp[a].q.push_back(with_vcrc(smp_pkt(0, 0xFFFF, 0xFFFF, 7, m)));
  settle("trace out");
  CHECK(txp[q].out.size() == 1, "trace: %zu packets at port %d", txp[q].out.size(), q);
  Bytes w = m;
  w[6] = 2;            // hop pointer on the wire: 2
  w[192 + 1] = uint8_t(a);  // ReturnPath[1] = a
  if (txp[q].out.size() == 1) check_smp(txp[q].out[0], 0, 0xFFFF, 0xFFFF, w, "trace out");
  CHECK(ctr(0, DrForwarded) == 1 && ctr(0, SqPkts) == 1, "trace counters fwd %u sq %u", ctr(0, DrForwarded),
        ctr(0, SqPkts));
  // B replies: D=1, B did hp 3 -> 2 with RP[2] = b: on the wire hp = 2
  Bytes resp = w;
  resp[3] = 0x81; resp[4] |= 0x80; resp[6] = 2; resp[192 + 2] = 1;
  rxp[q].q.push_back(with_vcrc(smp_pkt(0, 0xFFFF, 0xFFFF, 9, resp)));
  settle("trace back");
  CHECK(txp[a].out.size() == 1, "trace back: %zu packets at port %d", txp[a].out.size(), a);
  Bytes wb = resp;
  wb[6] = 1;  // hop pointer on the wire: 1
  if (txp[a].out.size() == 1) check_smp(txp[a].out[0], 0, 0xFFFF, 0xFFFF, wb, "trace back");
  // the same through the reference rules
  SwOut o1 = sw_expect(m, a, N, false, kSwLid), o2 = sw_expect(resp, q, N, false, kSwLid);
  CHECK(o1.kind == SwOut::Out && o1.port == q && o1.mad == w, "reference disagrees (out)");
  CHECK(o2.kind == SwOut::Out && o2.port == a && o2.mad == wb, "reference disagrees (back)");

  // The switch as the target: hc = 1 from port a -> SMA with hp 2, RP[1] = a
  clear_outputs();
  Dr t;
  t.hc = 1; t.hp = 1; t.ip[1] = 1; t.tid = 0x2222;
  Bytes tm = dr_mad(t);
  rxp[a].q.push_back(with_vcrc(smp_pkt(2, 0xFFFF, 0xFFFF, 1, tm)));
  settle("to SMA");
  CHECK(sma_out.size() == 1, "SMA got %zu", sma_out.size());
  if (sma_out.size() == 1) {
    Bytes wm = tm;
    wm[6] = 2; wm[192 + 1] = uint8_t(a);
    RxMad& g = sma_out[0];
    CHECK(g.b == wm, "SMA MAD differs");
    CHECK(g.port == a && g.hp == 2 && g.hc == 1 && g.cls == 0x81 && g.slid == 0xFFFF && g.dlid == 0xFFFF &&
              g.sl == 2, "SMA meta port %u hp %u hc %u", g.port, g.hp, g.hc);
    // the SMA's response (D=1, hp = hc+1 = 2) leaves by RP[1] = a with hp 1
    Bytes rm = wm;
    rm[3] = 0x81; rm[4] = 0x80;
    sma_src.q.push_back(TxMad{rm, g.slid, g.dlid, g.sl});
    settle("SMA response");
    CHECK(txp[a].out.size() == 1, "SMA response: %zu packets at port %d", txp[a].out.size(), a);
    Bytes wr = rm;
    wr[6] = 1;
    if (txp[a].out.size() == 1) check_smp(txp[a].out[0], 2, 0xFFFF, 0xFFFF, wr, "SMA response");
  }
  CHECK(ctr(0, ToSma) == 1, "ToSma %u", ctr(0, ToSma));
  // an SM response arriving for the switch's SM (D=1, hp=1, DrSLID permissive) -> SM, hp 0
  Dr s;
  s.method = 0x81; s.d = true; s.hc = 1; s.hp = 1; s.rp[1] = uint8_t(a); s.tid = 0x3333;
  rxp[a].q.push_back(with_vcrc(smp_pkt(0, 0xFFFF, 0xFFFF, 2, dr_mad(s))));
  settle("to SM");
  CHECK(sm_out.size() == 1 && sm_out[0].hp == 0 && sm_out[0].b[6] == 0 && sm_out[0].port == a,
        "SM delivery (%zu)", sm_out.size());
  // an SM request from port 0: D=0 hp 0 -> 1, out IP[1]
  clear_outputs();
  Dr g;
  g.hc = 2; g.hp = 0; g.ip[1] = 4; g.ip[2] = 1; g.tid = 0x4444;
  sm_src.q.push_back(TxMad{dr_mad(g), 0xFFFF, 0, 5});
  settle("SM request");
  CHECK(txp[4].out.size() == 1, "SM request: %zu at port 4", txp[4].out.size());
  Bytes wg = dr_mad(g);
  wg[6] = 1;
  if (txp[4].out.size() == 1) check_smp(txp[4].out[0], 5, 0xFFFF, 0xFFFF, wg, "SM request");
  CHECK(ctr(0, SqLocal) == 0 && ctr(0, SqDrDiscard) == 0, "SM request counters");
}

// Hop counts, egress checks, intermediate forward with random paths.
static void test_dr_edges() {
  reset();
  configure();
  int a = 1;
  auto fwd_one = [&](uint8_t hc, uint8_t hp, uint8_t next, uint32_t tid) {
    Dr r;
    r.hc = hc; r.hp = hp; r.tid = tid;
    for (int i = 1; i < 64; i++) r.ip[i] = uint8_t(1 + urand(N));
    r.ip[hp + 1] = next;
    Bytes m = dr_mad(r);
    rxp[a].q.push_back(with_vcrc(smp_pkt(0, 0xFFFF, 0xFFFF, tid, m)));
    return m;
  };
  Bytes m63 = fwd_one(63, 1, 3, 1);
  settle("hc63");
  CHECK(txp[3].out.size() == 1, "hc 63: %zu", txp[3].out.size());
  SwOut o = sw_expect(m63, a, N, false, kSwLid);
  CHECK(o.kind == SwOut::Out && o.port == 3, "reference hc63");
  if (txp[3].out.size() == 1) check_smp(txp[3].out[0], 0, 0xFFFF, 0xFFFF, o.mad, "hc 63");
  fwd_one(64, 1, 3, 2);
  settle("hc64");
  CHECK(txp[3].out.size() == 1 && ctr(0, DrDiscard) == 1, "hc 64: out %zu DrDiscard %u", txp[3].out.size(),
        ctr(0, DrDiscard));
  fwd_one(5, 2, uint8_t(N + 1), 3);  // IP[hp+1] > N: receive rule discards
  settle("egress > N");
  CHECK(ctr(0, DrDiscard) == 2, "egress > N: DrDiscard %u", ctr(0, DrDiscard));
  fwd_one(5, 2, 0, 4);  // egress 0: forwarded, then discarded by the send side
  settle("egress 0");
  CHECK(ctr(0, SqDrDiscard) == 1, "egress 0: SqDrDiscard %u", ctr(0, SqDrDiscard));
  rxp[6 > N ? N : 6].link = false;
  run(4);
  fwd_one(5, 2, uint8_t(6 > N ? N : 6), 5);  // egress Down
  settle("egress Down");
  CHECK(ctr(0, SqDrDiscard) == 2, "egress Down: SqDrDiscard %u", ctr(0, SqDrDiscard));
  rxp[6 > N ? N : 6].link = true;
  run(4);
  reg_write(kRegPortState + (6 > N ? N : 6), Active);
  // random intermediate forwards against the reference, both directions
  clear_outputs();
  std::map<int, std::vector<Bytes>> want;
  for (int k = 0; k < (kRounds + 1) * N; k++) {
    if (k % N == 0) settle("dr random round");
    Dr r;
    r.hc = uint8_t(2 + urand(20));
    r.d = urand(2);
    r.hp = r.d ? uint8_t(2 + urand(r.hc - 1)) : uint8_t(1 + urand(r.hc - 1));
    r.tid = 0x500 + k;
    r.method = r.d ? 0x81 : 0x01;
    int in = 1 + k % N;
    for (int i = 0; i < 64; i++) { r.ip[i] = uint8_t(1 + urand(N)); r.rp[i] = uint8_t(1 + urand(N)); }
    if (!r.d && r.ip[r.hp + 1] == in) r.ip[r.hp + 1] = uint8_t(in % N + 1);
    if (r.d && r.rp[r.hp - 1] == in) r.rp[r.hp - 1] = uint8_t(in % N + 1);
    Bytes m = dr_mad(r);
    SwOut e = sw_expect(m, in, N, false, kSwLid);
    CHECK(e.kind == SwOut::Out, "reference: case %d not forwarded", k);
    rxp[in].q.push_back(with_vcrc(smp_pkt(urand(16), 0xFFFF, 0xFFFF, k, m)));
    want[e.port].push_back(e.mad);
  }
  settle("dr random");
  bool bad = false;
  for (int p = 1; p <= N; p++) {
    std::vector<Bytes> g;
    for (auto& x : txp[p].out) {
      CHECK(icrc_ok(x), "dr random: bad ICRC at port %d", p);
      g.push_back(mad_of(x));
    }
    auto w = want[p];
    std::sort(g.begin(), g.end());
    std::sort(w.begin(), w.end());
    if (g != w) bad = true;
  }
  if (bad) {  // where did they go
    std::fprintf(stderr, "dr random: MADs lost or changed; counters:\n");
    for (int c = 0; c < 16; c++) std::fprintf(stderr, "  port 0 counter %d = %u\n", c, ctr(0, c));
    for (int p = 1; p <= N; p++)
      for (int c = 0; c < 16; c++)
        if (c != RxPkts && c != FwdPkts && c != TxVl15Pkts && ctr(p, c))
          std::fprintf(stderr, "  port %d counter %d = %u\n", p, c, ctr(p, c));
  }
  for (int p = 1; p <= N; p++) {
    std::vector<Bytes> g;
    for (auto& x : txp[p].out) g.push_back(mad_of(x));
    auto w = want[p];
    std::sort(g.begin(), g.end());
    std::sort(w.begin(), w.end());
    CHECK(g == w, "dr random: port %d got %zu MADs, want %zu", p, g.size(), w.size());
  }
}

// LID-routed head and tail rows of docs/fabric.md.
static void test_lid_segments() {
  reset();
  configure();
  int a = 2, q = 4;
  uint16_t ca = host_lid(q);
  // tail: D=0 hp=hc=1 arriving DR, DrDLID = a CA LID -> hp 2, DLID := DrDLID, SLID := switch LID, LFT
  Dr t;
  t.hc = 1; t.hp = 1; t.ip[1] = 1; t.dr_dlid = ca; t.tid = 0x71;
  Bytes tm = dr_mad(t);
  rxp[a].q.push_back(with_vcrc(smp_pkt(1, 0xFFFF, 0xFFFF, 1, tm)));
  settle("tail");
  CHECK(txp[q].out.size() == 1, "tail: %zu at port %d", txp[q].out.size(), q);
  Bytes wt = tm;
  wt[6] = 2; wt[192 + 1] = uint8_t(a);
  if (txp[q].out.size() == 1) check_smp(txp[q].out[0], 1, ca, kSwLid, wt, "tail");
  SwOut ot = sw_expect(tm, a, N, false, kSwLid);
  CHECK(ot.kind == SwOut::Out && ot.by_lft && ot.dlid == ca && ot.mad == wt, "reference tail");
  // the return enters the DR part from the tail: LID-routed, D=1, hp = hc+1 = 2 -> hp 1, out RP[1] = a
  clear_outputs();
  Bytes rt = wt;
  rt[3] = 0x81; rt[4] = 0x80;
  rxp[q].q.push_back(with_vcrc(smp_pkt(1, kSwLid, ca, 2, rt)));
  settle("tail return");
  CHECK(txp[a].out.size() == 1, "tail return: %zu at port %d", txp[a].out.size(), a);
  Bytes wrt = rt;
  wrt[6] = 1;
  if (txp[a].out.size() == 1) check_smp(txp[a].out[0], 1, 0xFFFF, 0xFFFF, wrt, "tail return");
  // head: LID-routed to the switch, D=0, hc=1, hp=0, DrSLID = SM LID -> hp 1, LRH 0xFFFF, out IP[1]
  clear_outputs();
  Dr h;
  h.hc = 1; h.hp = 0; h.ip[1] = uint8_t(q); h.dr_slid = kSmLid; h.tid = 0x72;
  Bytes hm = dr_mad(h);
  rxp[1].q.push_back(with_vcrc(smp_pkt(0, kSwLid, kSmLid, 3, hm)));
  settle("head");
  CHECK(txp[q].out.size() == 1, "head: %zu at port %d", txp[q].out.size(), q);
  Bytes wh = hm;
  wh[6] = 1;
  if (txp[q].out.size() == 1) check_smp(txp[q].out[0], 0, 0xFFFF, 0xFFFF, wh, "head");
  // the return leaves the DR part to the head: D=1 hp=1 DrSLID = SM LID -> hp 0, DLID := DrSLID, LFT (port 1)
  clear_outputs();
  Bytes rh = wh;
  rh[3] = 0x81; rh[4] = 0x80; rh[192 + 1] = 1;
  rxp[q].q.push_back(with_vcrc(smp_pkt(0, 0xFFFF, 0xFFFF, 4, rh)));
  settle("head return");
  CHECK(txp[1].out.size() == 1, "head return: %zu at port 1", txp[1].out.size());
  Bytes wrh = rh;
  wrh[6] = 0;
  if (txp[1].out.size() == 1) check_smp(txp[1].out[0], 0, kSmLid, kSwLid, wrh, "head return");
  // class 0x01 to the switch -> SMA; its LID-routed response leaves by the LFT of the request SLID
  clear_outputs();
  Bytes lm = lid_mad(1, 0x73);
  rxp[a].q.push_back(with_vcrc(smp_pkt(3, kSwLid, host_lid(a), 5, lm)));
  settle("lid smp");
  CHECK(sma_out.size() == 1 && sma_out[0].cls == 0x01 && sma_out[0].port == a && sma_out[0].b == lm,
        "LID-routed SMP to SMA (%zu)", sma_out.size());
  if (sma_out.size() == 1) {
    Bytes lr = lm;
    lr[3] = 0x81;
    sma_src.q.push_back(TxMad{lr, sma_out[0].slid, sma_out[0].dlid, sma_out[0].sl});
    settle("lid response");
    CHECK(txp[a].out.size() == 1, "LID response: %zu at port %d", txp[a].out.size(), a);
    if (txp[a].out.size() == 1) check_smp(txp[a].out[0], 3, host_lid(a), kSwLid, lr, "LID response");
  }
  // a trap goes to the master SM by the LFT (SM LID -> port 1)
  clear_outputs();
  Bytes tr = lid_mad(5, 0x74);
  trap_src.q.push_back(TxMad{tr, 0, 0, 0});
  settle("trap");
  CHECK(txp[1].out.size() == 1, "trap: %zu at port 1", txp[1].out.size());
  if (txp[1].out.size() == 1) check_smp(txp[1].out[0], 3, kSmLid, kSwLid, tr, "trap");
  // originator rule at the switch SM: D=0 DrSLID = switch LID, LRH DLID = a CA LID -> as is, by the LFT
  clear_outputs();
  Dr o;
  o.hc = 1; o.hp = 0; o.ip[1] = 1; o.dr_slid = kSwLid; o.tid = 0x75;
  sm_src.q.push_back(TxMad{dr_mad(o), ca, 0, 0});
  settle("originator as is");
  CHECK(txp[q].out.size() == 1, "originator: %zu at port %d", txp[q].out.size(), q);
  if (txp[q].out.size() == 1) check_smp(txp[q].out[0], 0, ca, kSwLid, dr_mad(o), "originator as is");
}

// link_up_i falls inside a packet: nothing half-delivered, counted.
static void test_link_down() {
  reset();
  configure();
  int a = 3, q = 1;
  rxp[a].q.push_back(with_vcrc(data_pkt(0, host_lid(q), 3, 800, 0x900)));
  rxp[a].cut_after = 20;
  settle("link down");
  CHECK(txp[q].out.empty(), "half packet delivered");
  CHECK(ctr(a, LinkDownDrop) == 1, "LinkDownDrop %u", ctr(a, LinkDownDrop));
  CHECK(reg_read(kRegPortState + a) == Down, "port Down");
  rxp[a].link = true;
  run(3);
  CHECK(reg_read(kRegPortState + a) == Init, "port Init");
  reg_write(kRegPortState + a, Active);
  Bytes good = data_pkt(0, host_lid(q), 3, 100, 0x901);
  rxp[a].q.push_back(with_vcrc(good));
  settle("after link up");
  CHECK(txp[q].out.size() == 1 && txp[q].out[0] == good, "packet after link up");
  CHECK(ctr(a, RxPkts) == 1 && ctr(a, FwdPkts) == 1, "counters after link up: RxPkts %u", ctr(a, RxPkts));
}

// Random mix from every port with DR traffic to the SMA and SMA echo.
static void test_stress() {
  reset();
  configure();
  std::map<std::pair<int, int>, std::vector<Bytes>> want;  // (in, out) -> packets in order
  std::map<int, std::vector<Bytes>> want_gmp, want_gtx;     // by input / by output
  size_t ngtx = 0;
  gtx_src.gap = 40;
  uint32_t tag = 0x10000;
  for (int p = 1; p <= N; p++) { rxp[p].gap = urand(60); txp[p].ready_pct = 20 + urand(80); }
  int total = N > 8 ? 3 * N : 8 * N;
  for (int k = 0; k < total; k++) {
    int a = 1 + urand(N), b = 1 + urand(N);
    if (a == b) b = a % N + 1;
    int kind = urand(6);
    Bytes p = kind == 0 ? smp_pkt(0, host_lid(b), host_lid(a), tag, lid_mad(1, tag))
              : kind == 1 ? gmp_pkt(uint8_t(urand(15)), kSwLid, host_lid(a), tag)
                          : data_pkt(urand(15), host_lid(b), host_lid(a), 4 * (1 + urand(N > 8 ? 200 : 500)), tag);
    tag++;
    rxp[a].q.push_back(with_vcrc(p));
    if (kind == 1) want_gmp[a].push_back(p);
    else want[{a, b}].push_back(p);
    if (k % 4 == 0) {  // and the host sends a GMP
      Bytes g = gmp_pkt(uint8_t(urand(15)), host_lid(b), kSwLid, tag++);
      gtx_src.q.push_back(g);
      want_gtx[b].push_back(g);
      ngtx++;
    }
  }
  settle("stress", 2000000);
  // GMPs to the switch: in order per input (some may be dropped at full inputs)
  std::map<int, std::vector<Bytes>> got_gmp;
  for (auto& r : gmp_out) got_gmp[r.port_slid - 0x10].push_back(r.b);
  for (int a = 1; a <= N; a++) {
    size_t j = 0;
    for (auto& x : got_gmp[a]) {
      while (j < want_gmp[a].size() && want_gmp[a][j] != x) j++;
      CHECK(j < want_gmp[a].size(), "stress: GMP from %d not sent or out of order", a);
      if (j < want_gmp[a].size()) j++;
    }
  }
  // GMPs from the host wait for buffer space: every one arrives, in order
  for (int b = 1; b <= N; b++) {
    std::vector<Bytes> g;
    for (auto& x : txp[b].out)
      if (be16(x, 6) == kSwLid) g.push_back(x);
    CHECK(g == want_gtx[b], "stress: port %d got %zu host GMPs, want %zu", b, g.size(), want_gtx[b].size());
  }
  // per (input, output) and class, order is kept
  for (int b = 1; b <= N; b++) {
    std::map<int, std::vector<Bytes>> got;  // by input (SLID)
    for (auto& x : txp[b].out) got[be16(x, 6) - 0x10].push_back(x);
    for (int a = 1; a <= N; a++) {
      auto w = want[{a, b}];
      auto g = got[a];
      for (int vl15 = 0; vl15 < 2; vl15++) {
        std::vector<Bytes> gw, gg;
        for (auto& x : w) if (((x[0] >> 4) == 15) == bool(vl15)) gw.push_back(x);
        for (auto& x : g) if (((x[0] >> 4) == 15) == bool(vl15)) gg.push_back(x);
        // the wire cannot wait: a packet that finds its input buffer full is
        // dropped (and counted); what arrives is in order and unchanged
        size_t j = 0;
        for (auto& x : gg) {
          while (j < gw.size() && gw[j] != x) j++;
          CHECK(j < gw.size(), "stress %d->%d vl15=%d: packet not sent or out of order", a, b, vl15);
          if (j < gw.size()) j++;
        }
      }
    }
  }
  uint32_t sent = uint32_t(total), got = uint32_t(gmp_out.size()), dropped = 0;
  CHECK(gctr(GRxPkts) == gmp_out.size(), "stress: GmpRxPkts %u vs %zu", gctr(GRxPkts), gmp_out.size());
  CHECK(gctr(GTxPkts) == ngtx, "stress: GmpTxPkts %u vs %zu", gctr(GTxPkts), ngtx);
  for (int p = 1; p <= N; p++) {
    got += uint32_t(txp[p].out.size());
    for (auto& x : txp[p].out) got -= be16(x, 6) == kSwLid;
    dropped += ctr(p, DataDropped) + ctr(p, Vl15Dropped);
    CHECK(ctr(p, NoRoute) + ctr(p, LoopDrop) + ctr(p, StateDrop) + ctr(p, RxVcrcErr) == 0, "stress: port %d drops", p);
  }
  CHECK(got + dropped == sent, "stress: %u delivered + %u dropped != %u sent", got, dropped, sent);
  CHECK(got * 2 > sent, "stress: only %u of %u delivered", got, sent);
}


// ---------------------------------------------------------------------------
// Port 0's GMP path (docs/fabric.md "GMP path")
// ---------------------------------------------------------------------------
// Data packets for the port-0 LID leave on gmp_rx whole, unchanged (LRH..ICRC)
// and in order per input, from every external port, while VL15 SMPs for the
// SMA and forwarded data cross the switch at the same time. Word counters =
// sum of PktLen (ibspec §1: LRH..ICRC in 4-byte words).
static void test_gmp_rx() {
  reset();
  configure();
  for (int p = 1; p <= N; p++) { rxp[p].gap = urand(50); txp[p].ready_pct = 30 + urand(70); }
  sma_ready_pct = 50;
  std::map<int, std::vector<Bytes>> want_gmp;  // by input
  std::map<int, std::vector<Bytes>> want_out;  // by output
  uint64_t rx_words[N + 1] = {}, tx_words[N + 1] = {}, gmp_words = 0;
  size_t smps = 0, gmps = 0;
  uint32_t tag = 0x5000;
  for (int round = 0; round < kRounds + 1; round++) {
    for (int a = 1; a <= N; a++) {
      // per input and round: a GMP, a forwarded data packet (the two data
      // slots), an SMP for the SMA; in a random order
      int b = 1 + urand(N);
      if (b == a) b = a % N + 1;
      std::vector<Bytes> v;
      Bytes g = gmp_pkt(uint8_t(urand(15)), kSwLid, host_lid(a), tag++);
      Bytes d = data_pkt(uint8_t(urand(15)), host_lid(b), host_lid(a), 4 * (1 + urand(200)), tag++);
      Bytes m = smp_pkt(0, kSwLid, host_lid(a), tag, lid_mad(1, tag));
      tag++;
      v = {g, d, m};
      std::shuffle(v.begin(), v.end(), rng());
      for (auto& x : v) {
        rxp[a].q.push_back(with_vcrc(x));
        rx_words[a] += pktlen(x);
      }
      want_gmp[a].push_back(g);
      want_out[b].push_back(d);
      tx_words[b] += pktlen(d);
      gmp_words += pktlen(g);
      gmps++;
      smps++;
    }
    settle("gmp_rx round");
  }
  sma_ready_pct = 70;
  std::map<int, std::vector<Bytes>> got;
  for (auto& r : gmp_out) {
    CHECK(!r.tuser, "gmp_rx: tuser set");
    got[r.port_slid - 0x10].push_back(r.b);
  }
  CHECK(gmp_out.size() == gmps, "gmp_rx: %zu packets, want %zu", gmp_out.size(), gmps);
  for (int a = 1; a <= N; a++) CHECK(got[a] == want_gmp[a], "gmp_rx: packets from port %d differ or out of order", a);
  CHECK(sma_out.size() == smps, "SMA got %zu of %zu SMPs", sma_out.size(), smps);
  for (int b = 1; b <= N; b++) {
    auto g = txp[b].out, w = want_out[b];
    std::sort(g.begin(), g.end());
    std::sort(w.begin(), w.end());
    CHECK(g == w, "forwarded data at port %d differs", b);
  }
  CHECK(gctr(GRxPkts) == gmps, "GmpRxPkts %u", gctr(GRxPkts));
  CHECK(gctr(GGmps) == gmps && gctr(GIcrcErr) + gctr(GBadHdr) == 0, "GSI: Gmps %u IcrcErr %u BadHdr %u",
        gctr(GGmps), gctr(GIcrcErr), gctr(GBadHdr));
  CHECK(gctr(GRxWords) == gmp_words, "GmpRxWords %u want %llu", gctr(GRxWords), (unsigned long long)gmp_words);
  for (int p = 1; p <= N; p++) {
    CHECK(ctr(p, RxWords) == rx_words[p], "port %d RxWords %u want %llu", p, ctr(p, RxWords),
          (unsigned long long)rx_words[p]);
    CHECK(ctr(p, TxWords) == tx_words[p], "port %d TxWords %u want %llu", p, ctr(p, TxWords),
          (unsigned long long)tx_words[p]);
    CHECK(ctr(p, NoRoute) + ctr(p, StateDrop) + ctr(p, DataDropped) + ctr(p, Vl15Dropped) == 0, "port %d drops", p);
  }
}

// GMPs from gmp_tx leave by the LFT's port with a new VCRC (checked by the
// TX sink), in order, sharing the outputs with forwarded traffic; gmp_tx
// waits (tready low) while port 0's two GMP slots are full.
static void test_gmp_tx() {
  reset();
  configure();
  // backpressure: the output holds, two packets fill the buffer, the rest wait
  int q = 2;
  txp[q].ready_pct = 0;
  gtx_src.gap = 0;
  std::vector<Bytes> sent;
  for (int k = 0; k < 5; k++) {
    sent.push_back(gmp_pkt(uint8_t(k % 15), host_lid(q), kSwLid, 0x6000 + k));
    gtx_src.q.push_back(sent.back());
  }
  run(3000);
  CHECK(gctr(GTxPkts) == 2 && gtx_src.q.size() == 3 && !top->gmp_tx_tready_o,
        "gmp_tx backpressure: TxPkts %u, %zu waiting, tready %d", gctr(GTxPkts), gtx_src.q.size(),
        top->gmp_tx_tready_o);
  CHECK(txp[q].out.empty(), "gmp_tx: sent while the output holds");
  txp[q].ready_pct = 60;
  settle("gmp_tx backpressure");
  CHECK(txp[q].out == sent, "gmp_tx: port %d got %zu packets (want the 5, in order)", q, txp[q].out.size());
  // random GMPs to every port, with forwarded data and VL15 to the same outputs
  clear_outputs();
  reg_write(kRegCtrClear, 1);
  for (int p = 1; p <= N; p++) { rxp[p].gap = urand(50); txp[p].ready_pct = 20 + urand(80); }
  gtx_src.gap = 30;
  std::map<int, std::vector<Bytes>> want_gmp, want_fwd;
  uint64_t tx_words[N + 1] = {}, gwords = 0;
  uint32_t tag = 0x7000;
  size_t ng = 0;
  for (int round = 0; round < kRounds + 1; round++) {
    for (int k = 0; k < N; k++) {
      int b = 1 + urand(N);
      Bytes g = gmp_pkt(uint8_t(urand(15)), host_lid(b), kSwLid, tag++);
      gtx_src.q.push_back(g);
      want_gmp[b].push_back(g);
      tx_words[b] += pktlen(g);
      gwords += pktlen(g);
      ng++;
      int a = 1 + k % N, c = 1 + urand(N);
      if (c == a) c = a % N + 1;
      Bytes d = urand(2) ? data_pkt(uint8_t(urand(15)), host_lid(c), host_lid(a), 4 * (1 + urand(100)), tag++)
                         : smp_pkt(0, host_lid(c), host_lid(a), tag, lid_mad(1, tag));
      tag++;
      rxp[a].q.push_back(with_vcrc(d));
      want_fwd[c].push_back(d);
      tx_words[c] += pktlen(d);
    }
    settle("gmp_tx round");
  }
  for (int b = 1; b <= N; b++) {
    std::vector<Bytes> g, f;
    for (auto& x : txp[b].out) (be16(x, 6) == kSwLid ? g : f).push_back(x);
    CHECK(g == want_gmp[b], "gmp_tx: port %d got %zu GMPs, want %zu in order", b, g.size(), want_gmp[b].size());
    auto w = want_fwd[b];
    std::sort(f.begin(), f.end());
    std::sort(w.begin(), w.end());
    CHECK(f == w, "port %d: forwarded traffic differs", b);
    CHECK(ctr(b, TxWords) == tx_words[b], "port %d TxWords %u want %llu", b, ctr(b, TxWords),
          (unsigned long long)tx_words[b]);
  }
  CHECK(gctr(GTxPkts) == ng && gctr(GTxWords) == gwords && gctr(GTxDrop) == 0, "GmpTxPkts %u GmpTxWords %u",
        gctr(GTxPkts), gctr(GTxWords));
  CHECK(ctr(0, P0NoRoute) + ctr(0, P0LoopDrop) + ctr(0, P0StateDrop) == 0, "port-0 drops");
}

// Port-0 data that cannot go: every drop counted where docs/fabric.md says.
static void test_gmp_drops() {
  reset();
  configure();
  lft_set(0x200, 0xFF);
  lft_set(0x202, 0);
  reg_write(kRegPortState + 3, Init);
  auto tx = [&](Bytes p) { gtx_src.q.push_back(p); settle("gmp drops tx"); };
  tx(gmp_pkt(0, 0x200, kSwLid, 1));          // LFT 0xFF: no route
  tx(gmp_pkt(0, 0, kSwLid, 2));              // DLID 0: no route
  tx(gmp_pkt(0, 0xC001, kSwLid, 3));         // multicast: no route
  tx(gmp_pkt(0, 0x3FF + 1, kSwLid, 4));      // DLID > LinearFDBTop: no route
  tx(gmp_pkt(0, kSwLid, kSwLid, 5));         // LFT 0 = port 0: loop
  tx(gmp_pkt(0, 0x202, kSwLid, 6));          // LFT 0: loop
  tx(gmp_pkt(0, host_lid(3), kSwLid, 7));    // egress Init: state
  tx(gmp_pkt(15, host_lid(1), kSwLid, 8));   // VL15 on gmp_tx: dropped
  tx(data_pkt(0, host_lid(1), kSwLid, 300, 9));  // 332 bytes > 288: dropped
  for (int p = 1; p <= N; p++) CHECK(txp[p].out.empty(), "gmp drops: port %d sent %zu", p, txp[p].out.size());
  CHECK(ctr(0, P0NoRoute) == 4, "port-0 NoRoute %u", ctr(0, P0NoRoute));
  CHECK(ctr(0, P0LoopDrop) == 2, "port-0 LoopDrop %u", ctr(0, P0LoopDrop));
  CHECK(ctr(0, P0StateDrop) == 1, "port-0 StateDrop %u", ctr(0, P0StateDrop));
  CHECK(gctr(GTxDrop) == 2 && gctr(GTxPkts) == 7, "GmpTxDrop %u GmpTxPkts %u", gctr(GTxDrop), gctr(GTxPkts));
  // the buffer is free again: a good GMP still goes
  Bytes ok = gmp_pkt(0, host_lid(1), kSwLid, 10);
  tx(ok);
  CHECK(txp[1].out.size() == 1 && txp[1].out[0] == ok, "GMP after the drops");
  // GMPs for the switch that must not reach gmp_rx
  int a = 2;
  auto rx = [&](Bytes p) { rxp[a].q.push_back(with_vcrc(p)); settle("gmp drops rx"); };
  rx(gmp_pkt(0, 0x202, host_lid(a), 11));   // LFT 0 but not the port-0 LID: no route
  reg_write(kRegPortState + a, Armed);
  rx(gmp_pkt(0, kSwLid, host_lid(a), 12));  // input not Active: state
  reg_write(kRegPortState + a, Active);
  Bytes bad = with_vcrc(gmp_pkt(0, kSwLid, host_lid(a), 13));
  bad[40] ^= 1;                             // VCRC error: the link drops it
  rxp[a].q.push_back(bad);
  settle("gmp drops vcrc");
  CHECK(gmp_out.empty(), "gmp_rx got %zu dropped packets", gmp_out.size());
  CHECK(ctr(a, NoRoute) == 1 && ctr(a, StateDrop) == 1 && ctr(a, RxVcrcErr) == 1, "port %d NoRoute %u StateDrop %u",
        a, ctr(a, NoRoute), ctr(a, StateDrop));
  // RxWords counts what passed the link checks (the two routed drops), not the VCRC error
  CHECK(ctr(a, RxWords) == 2 * 72, "RxWords %u", ctr(a, RxWords));
  // the GSI checks (ibspec §6, §2 QP1 keys) on the switch's path: each
  // packet reaches gmp_rx whole, with tuser and the reason on its tlast, and
  // one counter names it. Port 0's P_Key table: 8 entries (a switch's
  // NodeInfo.PartitionCap), reset to entry 0 = 0xFFFF.
  CHECK(reg_read(kRegPkeyCap) == 8, "switch RegPkeyCap %u, expected 8", reg_read(kRegPkeyCap));
  for (int i = 0; i < 8; i++) {
    reg_write(kRegPkeyIdx, i);
    CHECK(reg_read(kRegPkeyData) == (i == 0 ? 0xFFFFu : 0u), "switch P_Key entry %d = %04x", i,
          reg_read(kRegPkeyData));
  }
  auto with_pkey = [](Bytes p, uint16_t k) {
    p[10] = k >> 8, p[11] = k & 0xFF;
    set_icrc(p);
    return p;
  };
  Bytes bi = gmp_pkt(2, kSwLid, host_lid(a), 15);
  bi[100] ^= 0x40;                          // ICRC no longer matches (VCRC made for it)
  Bytes bq = gmp_pkt(3, kSwLid, host_lid(a), 16);
  bq[23] = 1;                               // Q_Key != 0x80010000
  set_icrc(bq);
  Bytes b0 = data_pkt(0, kSwLid, host_lid(a), 64, 17);  // DestQP 0 on a data VL
  Bytes g1 = gmp_pkt(4, kSwLid, host_lid(a), 18);        // good
  Bytes bp = with_pkey(gmp_pkt(4, kSwLid, host_lid(a), 19), 0x8007);  // P_Key not in {0xFFFF}
  Bytes gl = with_pkey(gmp_pkt(4, kSwLid, host_lid(a), 20), 0x7FFF);  // limited vs full 0xFFFF: good
  for (auto* x : {&bi, &bq, &b0, &g1, &bp, &gl}) rx(*x);
  CHECK(gmp_out.size() == 6, "GSI: gmp_rx got %zu of 6", gmp_out.size());
  if (gmp_out.size() == 6) {
    CHECK(gmp_out[0].b == bi && gmp_out[1].b == bq && gmp_out[2].b == b0 && gmp_out[3].b == g1 &&
              gmp_out[4].b == bp && gmp_out[5].b == gl,
          "GSI: packets changed");
    const int want[6] = {RsIcrc, RsQkey, RsHdr, RsOk, RsPkey, RsOk};
    for (int i = 0; i < 6; i++) {
      CHECK(gmp_out[i].tuser == (want[i] != RsOk) && gmp_out[i].reason == want[i],
            "GSI: packet %d tuser %d reason %d, expected reason %d", i, gmp_out[i].tuser, gmp_out[i].reason,
            want[i]);
    }
  }
  CHECK(gctr(GIcrcErr) == 1 && gctr(GBadHdr) == 1 && gctr(GQkeyViol) == 1 && gctr(GPkeyViol) == 1 &&
            gctr(GGmps) == 2 && gctr(GRxPkts) == 6,
        "GSI counters: IcrcErr %u BadHdr %u QkeyViol %u PkeyViol %u Gmps %u RxPkts %u", gctr(GIcrcErr),
        gctr(GBadHdr), gctr(GQkeyViol), gctr(GPkeyViol), gctr(GGmps), gctr(GRxPkts));
  gmp_out.clear();
  // a written table: entry 0 = 0x0007 (limited), entry 7 (the last) = 0x8009;
  // the index steps after each data write
  reg_write(kRegPkeyIdx, 0);
  reg_write(kRegPkeyData, 0x0007);
  CHECK(reg_read(kRegPkeyIdx) == 1, "switch RegPkeyIdx %u after a data write", reg_read(kRegPkeyIdx));
  reg_write(kRegPkeyIdx, 7);
  reg_write(kRegPkeyData, 0x8009);
  reg_write(kRegPkeyIdx, 7);
  CHECK(reg_read(kRegPkeyData) == 0x8009, "switch P_Key entry 7 = %04x", reg_read(kRegPkeyData));
  // 0x8007 (full vs limited 0x0007): good; 0x0007 (limited/limited): bad;
  // 0x0009 (limited vs full 0x8009): good; 0xFFFF (no longer in): bad
  const uint16_t keys[4] = {0x8007, 0x0007, 0x0009, 0xFFFF};
  const int kwant[4] = {RsOk, RsPkey, RsOk, RsPkey};
  for (int i = 0; i < 4; i++) rx(with_pkey(gmp_pkt(4, kSwLid, host_lid(a), 21 + i), keys[i]));
  CHECK(gmp_out.size() == 4, "P_Key table: gmp_rx got %zu of 4", gmp_out.size());
  for (size_t i = 0; i < gmp_out.size() && i < 4; i++) {
    CHECK(gmp_out[i].reason == kwant[i] && gmp_out[i].tuser == (kwant[i] != RsOk),
          "P_Key table: P_Key %04x reason %d, expected %d", keys[i], gmp_out[i].reason, kwant[i]);
  }
  CHECK(gctr(GPkeyViol) == 3 && gctr(GGmps) == 4, "P_Key table: PkeyViol %u Gmps %u", gctr(GPkeyViol), gctr(GGmps));
  gmp_out.clear();
  reg_write(kRegPkeyIdx, 0);  // the default table again
  reg_write(kRegPkeyData, 0xFFFF);
  reg_write(kRegPkeyIdx, 7);
  reg_write(kRegPkeyData, 0x0000);
  // port 0 without a LID: data to LID 0 is no route, nothing reaches gmp_rx
  reg_write(kRegPort0Lid, 0);
  rx(gmp_pkt(0, 0, host_lid(a), 14));
  CHECK(gmp_out.empty() && ctr(a, NoRoute) == 2, "port-0 LID 0");
}

// CTR_CLEAR_SEL + p: the bits of the data name the counters of port p to
// clear; port 0's [31:16] name its GMP bank. Nothing else changes.
static void test_ctr_clear_sel() {
  reset();
  configure();
  for (int p = 1; p <= N; p++) {
    int b = p % N + 1;
    rxp[p].q.push_back(with_vcrc(data_pkt(0, host_lid(b), host_lid(p), 64, p)));
    rxp[p].q.push_back(with_vcrc(gmp_pkt(1, kSwLid, host_lid(p), 0x100 + p)));
  }
  gtx_src.q.push_back(gmp_pkt(0, host_lid(1), kSwLid, 0x200));
  settle("clear sel traffic");
  auto snap = [&](uint32_t (&c)[N + 1][16], uint32_t (&g)[16]) {
    for (int p = 0; p <= N; p++)
      for (int k = 0; k < 16; k++) c[p][k] = ctr(p, k);
    for (int k = 0; k < 16; k++) g[k] = gctr(k);
  };
  static uint32_t before[N + 1][16], after[N + 1][16];
  uint32_t gb[16], ga[16];
  snap(before, gb);
  int a = 1 + urand(N);
  uint32_t mask = (1u << RxPkts) | (1u << RxWords) | (1u << TxWords) | (1u << FwdPkts);
  CHECK(before[a][RxPkts] == 2 && before[a][RxWords] == 72 + pktlen(data_pkt(0, 1, 1, 64, 0)),
        "port %d before: RxPkts %u RxWords %u", a, before[a][RxPkts], before[a][RxWords]);
  reg_write(kRegCtrClrSel + a, mask);
  reg_write(kRegCtrClrSel + 0, (1u << GRxPkts | 1u << GTxWords) << 16 | (1u << SqPkts));
  reg_write(kRegCtrClrSel + N + 1, 0xFFFFFFFFu);  // no such port: nothing
  snap(after, ga);
  for (int p = 0; p <= N; p++)
    for (int k = 0; k < 16; k++) {
      bool cleared = (p == a && (mask >> k & 1)) || (p == 0 && k == SqPkts);
      CHECK(after[p][k] == (cleared ? 0 : before[p][k]), "clear sel: port %d counter %d %u -> %u", p, k,
            before[p][k], after[p][k]);
    }
  for (int k = 0; k < 16; k++) {
    bool cleared = k == GRxPkts || k == GTxWords;
    CHECK(ga[k] == (cleared ? 0 : gb[k]), "clear sel: GMP bank counter %d %u -> %u", k, gb[k], ga[k]);
  }
  CHECK(gb[GRxPkts] == uint32_t(N) && gb[GTxWords] == 72, "GMP bank before: RxPkts %u TxWords %u", gb[GRxPkts],
        gb[GTxWords]);
  // CTR_CLEAR clears the bank too
  reg_write(kRegCtrClear, 1);
  for (int k = 0; k < 16; k++) CHECK(gctr(k) == 0, "CTR_CLEAR: GMP bank counter %d", k);
}

// Test-only counter write (simulation builds, docs/fabric.md register map):
// a write of V to a counter's address sets that counter to V, all 32 bits,
// and no other; events count on from V (and wrap); a write wins over the
// events of its own cycle. External port counters (in the port's tile, which
// runs on a gated clock: a write to an idle tile must open its gate), port
// 0's SMI counters and its GMP bank. Reads of written values are held for a
// cycle so that the tile composition (sim/unit/sw_mgmt_tile) compares its
// read data too.
static uint32_t reg_read_held(uint16_t a) {
  uint32_t v = reg_read(a);
  run(1);
  return v;
}
// Writes counter `addr` in every cycle, a new value each time, until the
// switch is idle with its sources drained: in every cycle the counter reads
// the value written in the cycle before, whatever its events did in that
// cycle. Returns the last value written.
static uint32_t hold_ctr_write(uint16_t addr, uint32_t base, const char* what) {
  uint32_t last = 0;
  int idle_run = 0, bad = 0;
  top->reg_we_i = 0;
  top->reg_addr_i = addr;
  top->eval();
  for (int k = 0; k < 400000 && (!quiet() || idle_run < 40); k++) {
    // the read after the edge: the counter as the write of cycle k - 1 left it
    if (k > 0 && top->reg_rdata_o != last && bad++ < 5) {
      CHECK(false, "%s: cycle %d of the write: counter %04x = %08x, written %08x", what, k, addr,
            unsigned(top->reg_rdata_o), last);
    }
    last = base + 0x100u * uint32_t(k);
    top->reg_we_i = 1;
    top->reg_wdata_i = last;
    tick();
    idle_run = top->idle_o ? idle_run + 1 : 0;
  }
  top->reg_we_i = 0;
  CHECK(idle_run >= 40, "%s: switch not idle", what);
  return last;
}
static void test_ctr_write() {
  reset();
  configure();
  settle("ctr write: configured");
  static uint32_t want[N + 1][16];
  uint32_t gwant[16] = {};  // every counter is 0 after configure's CTR_CLEAR
  for (auto& w : want) std::fill(std::begin(w), std::end(w), 0u);
  auto expect_all = [&](const char* what) {
    for (int p = 0; p <= N; p++)
      for (int k = 0; k < 16; k++)
        CHECK(ctr(p, k) == want[p][k], "%s: port %d counter %d = %08x, expected %08x", what, p, k, ctr(p, k),
              want[p][k]);
    for (int k = 0; k < 16; k++)
      CHECK(gctr(k) == gwant[k], "%s: GMP bank counter %d = %08x, expected %08x", what, k, gctr(k), gwant[k]);
  };
  expect_all("ctr write: before");
  auto val = [](int p, int k) { return 0x80000001u ^ (0x9E3779B9u * uint32_t(16 * p + k + 1)); };
  // a clock-gated idle tile: every counter of port g, one write each
  const int g = N;
  for (int k = 0; k < 16; k++) {
    reg_write(kRegCtrBase + 16 * g + k, val(g, k));
    want[g][k] = val(g, k);
    CHECK(reg_read_held(kRegCtrBase + 16 * g + k) == val(g, k), "idle tile %d: counter %d not written", g, k);
  }
  expect_all("ctr write: idle tile");
  // external port a: its counters written, then a data packet a -> b counts
  // on from the written values (RxPkts from 0xFFFFFFFF: it wraps to 0)
  const int a = 1, b = 2;
  for (int k = 0; k < 16; k++) {
    uint32_t v = k == RxPkts ? 0xFFFFFFFFu : val(a, k);
    reg_write(kRegCtrBase + 16 * a + k, v);
    want[a][k] = v;
    CHECK(reg_read_held(kRegCtrBase + 16 * a + k) == v, "port %d: counter %d not written", a, k);
  }
  expect_all("ctr write: port a");
  Bytes d = data_pkt(0, host_lid(b), host_lid(a), 64, 0x5151);
  rxp[a].q.push_back(with_vcrc(d));
  settle("ctr write: data a -> b");
  CHECK(txp[b].out.size() == 1 && txp[b].out[0] == d, "ctr write: data packet not forwarded to port %d", b);
  want[a][RxPkts] += 1, want[a][FwdPkts] += 1, want[a][RxWords] += pktlen(d);
  want[b][TxDataPkts] += 1, want[b][TxWords] += pktlen(d);
  expect_all("ctr write: events after the write");
  // port 0's SMI counters; then a short VL15 packet to the SMI (BadHdr)
  for (int k = 0; k < 16; k++) {
    reg_write(kRegCtrBase + k, val(0, k));
    want[0][k] = val(0, k);
    CHECK(reg_read_held(kRegCtrBase + k) == val(0, k), "port 0: counter %d not written", k);
  }
  expect_all("ctr write: port 0");
  Bytes bad = build_pkt(15, 0, 0xFFFF, 1, 16, Bytes(44, 0x5A), true);
  rxp[a].q.push_back(with_vcrc(bad));
  settle("ctr write: bad SMP");
  want[0][BadHdr] += 1;
  want[a][RxPkts] += 1, want[a][FwdPkts] += 1, want[a][RxWords] += pktlen(bad);
  expect_all("ctr write: port 0 event after the write");
  // port 0's GMP bank; then a GMP for the switch LID from port a
  for (int k = 0; k < 16; k++) {
    reg_write(kRegCtr0GBase + k, val(N + 1, k));
    gwant[k] = val(N + 1, k);
    CHECK(reg_read_held(kRegCtr0GBase + k) == val(N + 1, k), "GMP bank: counter %d not written", k);
  }
  expect_all("ctr write: GMP bank");
  Bytes gmp = gmp_pkt(1, kSwLid, host_lid(a), 0x5252);
  rxp[a].q.push_back(with_vcrc(gmp));
  settle("ctr write: GMP");
  CHECK(gmp_out.size() == 1 && gmp_out[0].b == gmp && !gmp_out[0].tuser, "ctr write: GMP not delivered");
  gwant[GRxPkts] += 1, gwant[GGmps] += 1, gwant[GRxWords] += pktlen(gmp);
  want[a][RxPkts] += 1, want[a][FwdPkts] += 1, want[a][RxWords] += pktlen(gmp);
  expect_all("ctr write: GMP bank events after the write");
  // a write in every cycle while events arrive: the write wins each time
  clear_outputs();
  rxp[a].q.push_back(with_vcrc(d));
  want[a][RxWords] = hold_ctr_write(kRegCtrBase + 16 * a + RxWords, 0x40000000u, "port a RxWords held");
  want[a][RxPkts] += 1, want[a][FwdPkts] += 1;
  want[b][TxDataPkts] += 1, want[b][TxWords] += pktlen(d);
  CHECK(txp[b].out.size() == 1, "ctr write held: data packet not forwarded");
  rxp[a].q.push_back(with_vcrc(gmp));
  gwant[GRxWords] = hold_ctr_write(uint16_t(kRegCtr0GBase + int(GRxWords)), 0x50000000u, "GMP bank RxWords held");
  gwant[GRxPkts] += 1, gwant[GGmps] += 1;
  want[a][RxPkts] += 1, want[a][FwdPkts] += 1, want[a][RxWords] += pktlen(gmp);
  CHECK(gmp_out.size() == 1, "ctr write held: GMP not delivered");
  expect_all("ctr write: held writes");
  // the clears still clear written counters
  reg_write(kRegCtrClrSel + g, 0xFFFF);
  std::fill(std::begin(want[g]), std::end(want[g]), 0u);
  expect_all("ctr write: CTR_CLEAR_SEL");
  reg_write(kRegCtrClear, 1);
  for (auto& w : want) std::fill(std::begin(w), std::end(w), 0u);
  std::fill(std::begin(gwant), std::end(gwant), 0u);
  expect_all("ctr write: CTR_CLEAR");
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  Verilated::randReset(2);
  top = std::make_unique<SW_TOP_T>();
  if (const char* only = std::getenv("SW_ONLY")) {  // debugging: one test
    if (!std::strcmp(only, "dr_edges")) test_dr_edges();
    if (!std::strcmp(only, "stress")) test_stress();
    if (!std::strcmp(only, "gmp_rx")) test_gmp_rx();
    if (!std::strcmp(only, "gmp_tx")) test_gmp_tx();
    if (!std::strcmp(only, "gmp_drops")) test_gmp_drops();
    if (!std::strcmp(only, "clear_sel")) test_ctr_clear_sel();
    if (!std::strcmp(only, "ctr_write")) test_ctr_write();
    top->final();
    tb_coverage_write();
    std::fflush(nullptr);
    std::_Exit(finish("ib_switch_top (one test)"));
  }
  test_regs();
  test_lft_forward();
  test_drops();
  test_vl15_first_and_rr();
  test_dr_trace();
  test_dr_edges();
  test_lid_segments();
  test_link_down();
  test_gmp_rx();
  test_gmp_tx();
  test_gmp_drops();
  test_ctr_clear_sel();
  test_stress();
  // after the stress, so that the stress keeps the draws of urand it was
  // sized with (every cycle draws the data of idle beats)
  test_ctr_write();
  top->final();
  tb_coverage_write();
  char name[64];
  std::snprintf(name, sizeof name, "ib_switch_top NumPorts=%d", N);
  int rc = finish(name);
  std::fflush(nullptr);
  std::_Exit(rc);
}
