// Unit harness for gsi_rx_check: the GSI receive checks on the data VLs
// (ibspec §6 "GMP (QP1) checks", §3.1 ICRC; docs/arch.md gsi_rx_check).
// Expected verdicts come from a model (common/gsi_model.h), written from the spec,
// not from the RTL: the ICRC is recomputed over a masked copy of the packet
// (LNH 2: VL and resv8a as 1s; LNH 3: the LRH, GRH TClass/FlowLabel/HopLmt
// and resv8a as 1s) and compared with the 4 ICRC bytes; the header rules
// read the fields at their byte offsets (+40 after a GRH). Packets: the
// reference vectors V3/V4 (good GMPs on VL0/VL3; tests/vectors holds the
// same bytes as the ibspec reference vectors), each bad field alone,
// QP 2 with good and bad ICRC, GRH packets, random packets, and packets
// the link already flagged (in_tuser_i); QP1 P_Keys against the default
// table (entry 0 = 0xFFFF) and against a written one (full and limited
// members, P_Key 0 / 0x8000 invalid, the last entry), and the order of the
// checks (ICRC, header, P_Key, Q_Key) with two faults in one packet. The
// table is written through pkey_we_i and read back (pkey_rdata_o) while the
// input is idle. The input has no ready: random idle cycles inside and
// between packets, and long back-to-back runs. Checked: every output beat
// is the input beat one cycle later (fixed latency 1), out_tuser_o and
// out_reason_o on tlast = the model's discard and reason (0 on every other
// beat), and exactly the model's event, once, with the output tlast beat.
#include <deque>
#include <memory>

#include "Vgsi_rx_check.h"
#include "gsi_model.h"
#include "tb_util.h"
#include "verilated.h"

// ---------------------------------------------------------------------------
// Driver and monitor
// ---------------------------------------------------------------------------
static std::unique_ptr<Vgsi_rx_check> top;
static uint64_t cycle = 0;

struct InPkt {
  Bytes b;
  bool tuser;
  const char* what;
};
static std::deque<InPkt> in_q;
static size_t in_off = 0;
static int gap_pct = 20;
// what was presented last cycle (the expected output this cycle)
struct Beat {
  bool valid = false, last = false;
  uint8_t d[16] = {};
  uint32_t keep = 0;
};
static Beat prev_in;
// expected verdicts in packet order, and the packets seen
static std::deque<std::pair<Want, const char*>> expect_q;
static int n_pkts = 0, n_ev[NumEv] = {};
// the P_Key table the RTL holds (PkeyEntries; PKEY_RAM: PkeyRam = 1, the
// table in block RAM, read back one cycle after the index is set)
#ifndef PKEY_ENTRIES
#define PKEY_ENTRIES 64
#endif
#ifndef PKEY_RAM
#define PKEY_RAM 0
#endif
static constexpr int kPkeyEntries = PKEY_ENTRIES;
static PkeyTable pkeys = default_pkeys(kPkeyEntries);

static void tick() {
  Beat cur;
  uint8_t junk[16];
  for (auto& j : junk) j = urand(256);
  put_bytes(top->in_tdata_i, junk, kDataB);
  top->in_tkeep_i = keep_mask(1 + urand(kDataB));
  top->in_tlast_i = urand(2);
  top->in_tuser_i = urand(2);
  top->in_tvalid_i = 0;
  top->pkey_we_i = 0;
  top->pkey_idx_i = urand(256);
  top->pkey_wdata_i = urand(65536);
  if (!in_q.empty() && !chance(gap_pct) && top->rst_ni) {
    InPkt& p = in_q.front();
    size_t n = std::min<size_t>(kDataB, p.b.size() - in_off);
    std::memcpy(cur.d, &p.b[in_off], n);
    cur.valid = true;
    cur.keep = keep_mask(int(n));
    cur.last = in_off + n == p.b.size();
    put_bytes(top->in_tdata_i, cur.d, kDataB);
    top->in_tkeep_i = cur.keep;
    top->in_tlast_i = cur.last;
    top->in_tuser_i = cur.last ? p.tuser : urand(2);  // meaningful on tlast only
    top->in_tvalid_i = 1;
    in_off += n;
    if (cur.last) {
      expect_q.push_back({model(p.b, p.tuser, pkeys), p.what});
      in_q.pop_front();
      in_off = 0;
    }
  }
  top->clk_i = 0;
  top->eval();
  if (top->rst_ni) {
    // outputs now = the beat presented one cycle earlier
    CHECK(top->out_tvalid_o == prev_in.valid, "cycle %lu: out_tvalid %u, expected %u", cycle, top->out_tvalid_o,
          prev_in.valid);
    int nev = top->ev_icrc_err_o + top->ev_bad_hdr_o + top->ev_pkey_viol_o + top->ev_qkey_viol_o +
              top->ev_gmp_o;
    if (prev_in.valid) {
      uint8_t o[16];
      get_bytes(top->out_tdata_o, o, kDataB);
      CHECK(std::memcmp(o, prev_in.d, popcount(prev_in.keep)) == 0 && top->out_tkeep_o == prev_in.keep &&
                top->out_tlast_o == prev_in.last,
            "cycle %lu: output beat differs from the input beat", cycle);
      if (prev_in.last) {
        CHECK(!expect_q.empty(), "cycle %lu: tlast with no packet expected", cycle);
        if (!expect_q.empty()) {
          auto [w, what] = expect_q.front();
          expect_q.pop_front();
          Ev got = top->ev_icrc_err_o    ? EvIcrc
                   : top->ev_bad_hdr_o   ? EvHdr
                   : top->ev_pkey_viol_o ? EvPkey
                   : top->ev_qkey_viol_o ? EvQkey
                   : top->ev_gmp_o       ? EvGmp
                                         : EvNone;
          CHECK(top->out_tuser_o == w.discard, "%s: out_tuser %u, expected %u", what, top->out_tuser_o,
                w.discard);
          CHECK(top->out_reason_o == w.reason, "%s: out_reason %u, expected %u", what, top->out_reason_o,
                w.reason);
          CHECK(nev <= 1 && got == w.ev, "%s: event %s (%d pulses), expected %s", what, kEvName[got], nev,
                kEvName[w.ev]);
          n_pkts++;
          n_ev[got]++;
        }
      } else {
        CHECK(top->out_tuser_o == 0 && top->out_reason_o == 0 && nev == 0,
              "cycle %lu: tuser/reason/event on a beat without tlast", cycle);
      }
    } else {
      CHECK(nev == 0, "cycle %lu: event without an output beat", cycle);
    }
  }
  top->clk_i = 1;
  top->eval();
  prev_in = top->rst_ni ? cur : Beat{};
  cycle++;
}
static void run(int n) {
  for (int i = 0; i < n; i++) tick();
}
static void drain() {
  for (int i = 0; i < 1000000 && !in_q.empty(); i++) tick();  // a bound only (DataW 8 takes 4x the beats)
  run(4);
  CHECK(in_q.empty() && expect_q.empty(), "not drained: %zu in, %zu expected", in_q.size(), expect_q.size());
}

// Write the RTL's P_Key table (input idle), in random entry order, then read
// every entry back (and an index past the table: 0).
static void clock_idle() {
  top->in_tvalid_i = 0;
  top->clk_i = 0;
  top->eval();
  top->clk_i = 1;
  top->eval();
  cycle++;
}
static void set_pkeys(const PkeyTable& t) {
  drain();
  std::vector<int> order(kPkeyEntries);
  for (int i = 0; i < kPkeyEntries; i++) order[i] = i;
  for (int i = kPkeyEntries; i > 1; i--) std::swap(order[i - 1], order[urand(i)]);
  for (int i : order) {
    top->pkey_we_i = 1;
    top->pkey_idx_i = i;
    top->pkey_wdata_i = t[i];
    clock_idle();
  }
  top->pkey_we_i = 1;  // out of range: ignored
  top->pkey_idx_i = kPkeyEntries;
  top->pkey_wdata_i = 0xFFFF;
  clock_idle();
  top->pkey_we_i = 0;
  pkeys = t;
  for (int i = 0; i <= kPkeyEntries; i++) {
    top->pkey_idx_i = i;
    if (PKEY_RAM) {
      clock_idle();  // the RAM read: entry pkey_idx_i of the cycle before
      top->pkey_idx_i = urand(256);
    }
    top->eval();
    uint16_t want = i < kPkeyEntries ? t[i] : 0;
    CHECK(top->pkey_rdata_o == want, "P_Key entry %d reads %04x, expected %04x", i, top->pkey_rdata_o, want);
  }
  prev_in = Beat{};
  run(2);
}

// ---------------------------------------------------------------------------
// Packets
// ---------------------------------------------------------------------------
// A GMP from V3 with a GRH inserted (LNH 3, NxtHdr 0x1B), the variant
// fields random.
static Bytes with_grh(const Bytes& v) {
  Bytes g(v.begin(), v.begin() + 8);
  g[1] = (g[1] & 0xFC) | 3;
  Bytes grh(40);
  for (auto& b : grh) b = urand(256);
  grh[0] = 0x60 | (grh[0] & 0x0F);  // IPVer 6
  grh[4] = 0, grh[5] = 256 + 28 - 8 + 4;  // PayLen (not checked)
  grh[6] = 0x1B;
  g.insert(g.end(), grh.begin(), grh.end());
  g.insert(g.end(), v.begin() + 8, v.end());
  finish_pkt(g);
  return g;
}
// Random variant fields (VL / resv8a; with a GRH also the LRH, TClass,
// FlowLabel, HopLmt): the ICRC must not change.
static void shake_variant(Bytes& p) {
  if (lnh_of(p) == 3) {
    for (int i : {0, 2, 3, 6, 7}) p[i] = urand(256);
    p[0] &= 0xF0;  // LVer 0 (the link's rule; any VL but 15)
    if ((p[0] >> 4) == 15) p[0] = 0x10;
    p[1] = (p[1] & 0x03) | (urand(16) << 4);
    p[8] = (p[8] & 0xF0) | urand(16);
    p[9] = p[10] = p[11] = p[15] = urand(256);
    p[52] = urand(256);
  } else {
    p[0] = (urand(15) << 4);
    p[12] = urand(256);
  }
  fix_vcrc(p);
}
// A random data packet: PktLen from 6, random headers; DestQP 0/1/2/random.
static Bytes random_pkt(bool grh) {
  int hdr = grh ? 60 : 20;
  int pl = (hdr + 4) / 4 + int(urand(90));
  if (urand(4) == 0) pl = grh ? 82 : 72;
  Bytes p(size_t(pl) * 4 + 2);
  for (auto& b : p) b = urand(256);
  p[0] = urand(15) << 4;
  p[1] = (p[1] & 0xF0) | (grh ? 3 : 2);
  int o = grh ? 40 : 0;
  if (grh && urand(8)) p[14] = 0x1B;
  uint32_t qp = urand(4) == 0 ? urand(1u << 24) : urand(3);
  p[13 + o] = qp >> 16, p[14 + o] = (qp >> 8) & 0xFF, p[15 + o] = qp & 0xFF;
  if (urand(2)) p[8 + o] = 0x64, p[9 + o] &= 0xC0;
  {  // P_Key: mostly one of the table's entries (as limited or full member;
     // 0xFFFF for an empty one), else random
    uint16_t e = pkeys[urand(pkeys.size())];
    uint16_t k = urand(4) ? uint16_t((e ? e : 0xFFFF) ^ (urand(2) << 15)) : uint16_t(urand(65536));
    p[10 + o] = k >> 8, p[11 + o] = k & 0xFF;
  }
  if (urand(2) && p.size() > size_t(24 + o)) p[20 + o] = 0x80, p[21 + o] = 0x01, p[22 + o] = 0, p[23 + o] = 0;
  if (urand(2) && p.size() > size_t(30 + o)) p[28 + o] = 1;
  finish_pkt(p, urand(8) != 0);
  return p;
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  Verilated::randReset(2);
  std::string root = argc > 1 ? argv[1] : ".";
  top = std::make_unique<Vgsi_rx_check>();

  const char* chk = "123456789";
  CHECK(gsi_crc32(reinterpret_cast<const uint8_t*>(chk), 9) == 0xCBF43926u, "crc32 check value");
  auto vec = read_vectors(root);
  const Bytes V3 = vec[2], V4 = vec[3];
  for (const Bytes* v : {&V3, &V4}) {
    Bytes f = *v;
    finish_pkt(f);
    CHECK(f == *v, "the harness ICRC/VCRC do not reproduce a reference vector");
    CHECK(model(*v, false).ev == EvGmp, "the model does not call a reference vector a good GMP");
  }
  CHECK(model(vec[0], false).ev == EvHdr, "the model accepts V1 (QP0) on a data VL");

  top->rst_ni = 0;
  run(5);
  top->rst_ni = 1;

  // ---- each case alone, with idle gaps, then all of them back to back ----
  std::vector<InPkt> cases;
  auto add = [&](Bytes p, const char* what, bool tuser = false) { cases.push_back({p, tuser, what}); };
  add(V3, "V3 (GMP, VL0)");
  add(V4, "V4 (GMP, VL3)");
  {
    Bytes p = V3;
    shake_variant(p);
    add(p, "V3 with random VL and resv8a");
  }
  auto mod = [&](auto f, const char* what, bool fix = true) {
    Bytes p = V3;
    f(p);
    if (fix) finish_pkt(p);
    add(p, what);
  };
  mod([](Bytes& p) { p[15] = 0; }, "DestQP 0 on VL0");
  mod([](Bytes& p) { p[8] = 0x65; }, "opcode 0x65");
  mod([](Bytes& p) { p[8] = 0x04; }, "opcode 0x04 (RC)");
  mod([](Bytes& p) { p[9] = 0x10; }, "PadCnt 1");
  mod([](Bytes& p) { p[9] = 0x01; }, "TVer 1");
  mod([](Bytes& p) { p[9] = 0xC0; }, "SE and M set (allowed)");
  mod([](Bytes& p) { p.erase(p.end() - 6, p.end() - 2); }, "payload 252 (PktLen 71)");
  mod([](Bytes& p) { p.insert(p.end() - 6, 4, 0xA5); }, "payload 260 (PktLen 73)");
  mod([](Bytes& p) { p.insert(p.end() - 6, 256, 0x5A); }, "payload 512 (PktLen 136)");
  mod([](Bytes& p) { p.resize(28 + 4 + 2); }, "no payload (PktLen 8)");
  mod([](Bytes& p) { p[20] = 0; p[21] = 0; }, "Q_Key 0");
  mod([](Bytes& p) { p[21] = 0; }, "Q_Key 0x80000000");
  mod([](Bytes& p) { p[23] = 1; }, "Q_Key 0x80010001");
  mod([](Bytes& p) { p[28] = 2; }, "BaseVersion 2");
  mod([](Bytes& p) { p[28] = 0; }, "BaseVersion 0");
  mod([](Bytes& p) { p[29] = 0x01; }, "MgmtClass 0x01");
  mod([](Bytes& p) { p[29] = 0x81; }, "MgmtClass 0x81");
  mod([](Bytes& p) { p[29] = 0x03; }, "MgmtClass 0x03 (SA, good)");
  mod([](Bytes& p) { p[40] ^= 0x5A; fix_vcrc(p); }, "payload byte flipped (ICRC)", false);
  mod([](Bytes& p) { p[285] ^= 0x01; fix_vcrc(p); }, "ICRC byte flipped", false);
  mod([](Bytes& p) { p[15] = 0; p[40] ^= 1; fix_vcrc(p); }, "DestQP 0 and bad ICRC (ICRC first)", false);
  mod([](Bytes& p) { p[15] = 2; }, "QP 2, good ICRC");
  mod([](Bytes& p) { p[15] = 2; p[28] = 7; p[29] = 0x81; p[20] = 0; }, "QP 2, SMP-like MAD (passes)");
  mod([](Bytes& p) { p[15] = 2; finish_pkt(p); p[100] ^= 0x80; fix_vcrc(p); }, "QP 2, bad ICRC", false);
  mod([](Bytes& p) { p[13] = p[14] = p[15] = 0xFF; }, "QP 0xFFFFFF (multicast QP)");
  // P_Key (BTH bytes 2-3 = packet 10-11) against the default table {0xFFFF}
  mod([](Bytes& p) { p[10] = 0x7F; }, "P_Key 0x7FFF (limited; entry 0xFFFF full: match)");
  mod([](Bytes& p) { p[10] = 0x80; p[11] = 0x01; }, "P_Key 0x8001 (not in the table)");
  mod([](Bytes& p) { p[10] = 0x00; p[11] = 0x00; }, "P_Key 0x0000 (invalid)");
  mod([](Bytes& p) { p[10] = 0x80; p[11] = 0x00; }, "P_Key 0x8000 (invalid)");
  mod([](Bytes& p) { p[10] = 0x12; p[20] = 0; }, "P_Key 0x12FF and Q_Key 0x00010000 (P_Key first)");
  mod([](Bytes& p) { p[10] = 0x12; p[28] = 2; }, "P_Key 0x12FF and BaseVersion 2 (header first)");
  mod([](Bytes& p) { p[10] = 0x12; p[9] = 0x01; }, "P_Key 0x12FF and TVer 1 (header first)");
  mod([](Bytes& p) { p[10] = 0x12; p[40] ^= 1; fix_vcrc(p); }, "P_Key 0x12FF and bad ICRC (ICRC first)", false);
  mod([](Bytes& p) { p[20] = 0; p[40] ^= 1; fix_vcrc(p); }, "Q_Key 0 and bad ICRC (ICRC first)", false);
  mod([](Bytes& p) { p[20] = 0; p[29] = 0x81; }, "Q_Key 0 and MgmtClass 0x81 (header first)");
  mod([](Bytes& p) { p[15] = 2; p[10] = 0x12; p[20] = 0; }, "QP 2 with P_Key 0x12FF, Q_Key 0 (not checked)");
  mod([](Bytes& p) { p[15] = 0; p[10] = 0x12; }, "DestQP 0 with P_Key 0x12FF (header)");
  mod([](Bytes& p) { p[13] = 1; p[15] = 1; }, "QP 0x010001");
  add(V3, "V3 flagged by the link", true);
  {
    Bytes p = V3;
    p[15] = 0;
    add(p, "V3 with DestQP 0, flagged by the link", true);
    Bytes q(1 + urand(400), 0);
    for (auto& b : q) b = urand(256);
    add(q, "random bytes flagged by the link", true);
  }
  // GRH (LNH 3): fields 40 bytes later, ICRC per the global rule
  {
    Bytes g = with_grh(V3);
    add(g, "V3 with a GRH (good GMP)");
    Bytes s = g;
    shake_variant(s);
    add(s, "V3 with a GRH, random LRH/TClass/FlowLabel/HopLmt/resv8a");
    Bytes t = g;
    t[14] = 0x1C;
    finish_pkt(t);
    add(t, "GRH NxtHdr 0x1C");
    t = g;
    t[69] = 0x81;
    finish_pkt(t);
    add(t, "GRH, MgmtClass 0x81");
    t = g;
    t[55] = 0;
    finish_pkt(t);
    add(t, "GRH, DestQP 0");
    t = g;
    t[55] = 2;
    t[68] = 9;
    finish_pkt(t);
    add(t, "GRH, QP 2");
    t = g;
    t[61] = 0;
    finish_pkt(t);
    add(t, "GRH, Q_Key 0x80000000");
    t = g;
    t[50] = 0x80, t[51] = 0x02;
    finish_pkt(t);
    add(t, "GRH, P_Key 0x8002");
    t = g;
    t[50] = 0x7F;
    finish_pkt(t);
    add(t, "GRH, P_Key 0x7FFF (match)");
    t = g;
    t[10] = 0x80, t[11] = 0x02;  // GRH bytes where a local BTH.P_Key would be
    finish_pkt(t);
    add(t, "GRH, P_Key 0xFFFF, GRH bytes 2-3 0x8002 (read after the GRH)");
    t = g;
    t[100] ^= 4;
    fix_vcrc(t);
    add(t, "GRH, bad ICRC");
    t = g;
    t[12] ^= 0x40;  // GRH PayLen is invariant: covered by the ICRC
    fix_vcrc(t);
    add(t, "GRH, PayLen changed after the ICRC");
    t = Bytes(g.begin(), g.begin() + 48 + 8);  // LRH + GRH + 8 bytes, PktLen 14 (< 16)
    t[14] = 0x1B;
    t.resize(58);
    finish_pkt(t);
    add(t, "GRH with no room for a BTH (PktLen 14)");
    t = g;
    t[1] = (t[1] & 0xFC) | 2;  // a GRH packet read as local: fields at the wrong place
    finish_pkt(t);
    add(t, "GRH bytes, LNH 2");
  }
  for (auto& c : cases) {
    gap_pct = 30;
    in_q.push_back(c);
    drain();
    run(urand(5));
  }
  int singles = n_pkts;
  // back to back, no idle, every case 4 times in random order
  gap_pct = 0;
  for (int r = 0; r < 4; r++)
    for (size_t i = 0; i < cases.size(); i++) in_q.push_back(cases[urand(cases.size())]);
  drain();
  // random packets, mixed gaps, local and global
  for (int phase = 0; phase < 3; phase++) {
    gap_pct = phase == 0 ? 0 : phase == 1 ? 50 : 5;
    for (int i = 0; i < 300; i++) {
      static const char* kWhat = "random packet";
      if (urand(10) == 0) {
        in_q.push_back({cases[urand(cases.size())]});
      } else {
        in_q.push_back({random_pkt(urand(3) == 0), urand(10) == 0, kWhat});
      }
    }
    drain();
  }
  int default_pkey = n_ev[EvPkey], default_gmp = n_ev[EvGmp];

  // ---- a written P_Key table: full and limited members, invalid entries ----
  PkeyTable t(kPkeyEntries, 0);
  t[0] = 0x8001;                // full
  t[1] = 0x0002;                // limited
  t[7] = 0x8000;                // invalid (low bits 0): matches nothing
  t[kPkeyEntries - 1] = 0x9234; // full, the last entry
  set_pkeys(t);
  struct PkCase {
    uint16_t k;
    Ev ev;  // the rule's verdict, stated here from the IBA rule (and checked against the model)
    const char* what;
  };
  const PkCase pk_cases[] = {
      {0x8001, EvGmp, "table: P_Key 0x8001, entry 0x8001 (full/full)"},
      {0x0001, EvGmp, "table: P_Key 0x0001, entry 0x8001 (limited/full)"},
      {0x8002, EvGmp, "table: P_Key 0x8002, entry 0x0002 (full/limited)"},
      {0x0002, EvPkey, "table: P_Key 0x0002, entry 0x0002 (limited/limited)"},
      {0xFFFF, EvPkey, "table: P_Key 0xFFFF, no 0x7FFF entry"},
      {0x8000, EvPkey, "table: P_Key 0x8000, entry 0x8000 (invalid)"},
      {0x0000, EvPkey, "table: P_Key 0x0000 (zero entries never match)"},
      {0x1234, EvGmp, "table: P_Key 0x1234, last entry 0x9234"},
      {0x9234, EvGmp, "table: P_Key 0x9234, last entry 0x9234"},
      {0x8003, EvPkey, "table: P_Key 0x8003, no entry"},
  };
  std::vector<InPkt> pk;
  for (const PkCase& c : pk_cases) {
    Bytes p = V3;
    p[10] = c.k >> 8, p[11] = c.k & 0xFF;
    finish_pkt(p);
    CHECK(model(p, false, pkeys).ev == c.ev, "model disagrees with the rule: %s", c.what);
    pk.push_back({p, false, c.what});
    Bytes g = with_grh(p);
    CHECK(model(g, false, pkeys).ev == c.ev, "model disagrees with the rule (GRH): %s", c.what);
    pk.push_back({g, false, c.what});
  }
  for (auto& c : pk) {
    gap_pct = 30;
    in_q.push_back(c);
    drain();
  }
  gap_pct = 0;
  for (int r = 0; r < 4; r++) {
    for (size_t i = 0; i < pk.size(); i++) in_q.push_back(pk[urand(pk.size())]);
    for (size_t i = 0; i < cases.size(); i++) in_q.push_back(cases[urand(cases.size())]);
  }
  drain();
  gap_pct = 10;
  for (int i = 0; i < 300; i++) in_q.push_back({random_pkt(urand(3) == 0), urand(10) == 0, "random packet"});
  drain();
  // and back to the default table: 0xFFFF passes again
  set_pkeys(default_pkeys(kPkeyEntries));
  in_q.push_back({V3, false, "V3 after the default table is back"});
  drain();

  CHECK(n_ev[EvIcrc] > 50 && n_ev[EvHdr] > 100 && n_ev[EvGmp] > 50 && n_ev[EvNone] > 100 &&
            default_pkey > 20 && n_ev[EvPkey] - default_pkey > 40 && n_ev[EvQkey] > 10 &&
            n_ev[EvGmp] - default_gmp > 40,
        "coverage: %d none, %d icrc, %d hdr, %d pkey (%d default table), %d qkey, %d gmp", n_ev[EvNone],
        n_ev[EvIcrc], n_ev[EvHdr], n_ev[EvPkey], default_pkey, n_ev[EvQkey], n_ev[EvGmp]);
  std::printf("gsi_rx_check DataW=%d: %zu cases + %zu P_Key table cases, %d packets (%d single): %d passed "
              "without event, %d ICRC, %d bad header, %d P_Key violations, %d Q_Key violations, %d GMPs\n",
              DATAW, cases.size(), pk.size(), n_pkts, singles, n_ev[EvNone], n_ev[EvIcrc], n_ev[EvHdr],
              n_ev[EvPkey], n_ev[EvQkey], n_ev[EvGmp]);
  top->final();
  int rc = finish("gsi_rx_check");
  std::fflush(stdout);
  tb_coverage_write();
  top.reset();
  return rc;
}
