// Unit harness for ib_link_rx: reference vectors V1..V4 and random packets
// with random idle gaps; error injection (VCRC, length, LVer, LNH) checks the
// tuser flag and the single event pulse with the precedence of docs/arch.md.
#include <deque>
#include <memory>

#include "Vib_link_rx.h"
#include "tb_util.h"
#include "verilated.h"

enum Err { kNone, kLen, kLver, kLnh, kVcrc };
static const char* kErrName[] = {"none", "len", "lver", "lnh", "vcrc"};

struct Expect {
  Bytes bytes;
  bool vl15;
  Err err;
};

static std::unique_ptr<Vib_link_rx> top;
static std::deque<Expect> expq;
static Bytes cur_vl15, cur_data;
static uint64_t cycle = 0;
static int pkts_seen = 0;

static void monitor() {
  // outputs are registered: sample before the clock edge
  if (!top->rst_ni) return;
  bool v15 = top->vl15_tvalid_o, vd = top->data_tvalid_o;
  CHECK(!(v15 && vd), "both outputs valid at cycle %lu", cycle);
  bool ev_any_err = top->ev_len_err_o || top->ev_lver_err_o || top->ev_lnh_err_o || top->ev_vcrc_err_o;
  bool out_last = (v15 && top->vl15_tlast_o) || (vd && top->data_tlast_o);
  if (!out_last) {
    CHECK(!top->ev_pkt_o && !top->ev_data_pkt_o && !ev_any_err, "event pulse without tlast at cycle %lu", cycle);
  }
  if (!v15 && !vd) return;
  uint8_t b[16];
  uint32_t keep;
  bool last, user;
  if (v15) {
    get_bytes(top->vl15_tdata_o, b, kDataB);
    keep = top->vl15_tkeep_o;
    last = top->vl15_tlast_o;
    user = top->vl15_tuser_o;
  } else {
    get_bytes(top->data_tdata_o, b, kDataB);
    keep = top->data_tkeep_o;
    last = top->data_tlast_o;
    user = top->data_tuser_o;
  }
  Bytes& cur = v15 ? cur_vl15 : cur_data;
  int n = popcount(keep);
  CHECK(keep == keep_mask(n), "tkeep %x not contiguous", keep);
  cur.insert(cur.end(), b, b + n);
  if (!last) return;
  CHECK(!expq.empty(), "unexpected packet out at cycle %lu", cycle);
  if (expq.empty()) return;
  Expect e = expq.front();
  expq.pop_front();
  pkts_seen++;
  CHECK(e.vl15 == v15, "packet %d on the %s output, expected %s", pkts_seen, v15 ? "VL15" : "data",
        e.vl15 ? "VL15" : "data");
  CHECK(cur == e.bytes, "packet %d bytes differ (%zu out, %zu in)", pkts_seen, cur.size(), e.bytes.size());
  cur.clear();
  CHECK(user == (e.err != kNone), "packet %d tuser %d, expected err %s", pkts_seen, user, kErrName[e.err]);
  CHECK(top->ev_pkt_o, "packet %d: no ev_pkt_o", pkts_seen);
  CHECK(top->ev_data_pkt_o == (e.err == kNone && !e.vl15), "packet %d: ev_data_pkt_o %d", pkts_seen,
        top->ev_data_pkt_o);
  CHECK(top->ev_len_err_o == (e.err == kLen), "packet %d: ev_len_err_o %d (expect %s)", pkts_seen, top->ev_len_err_o,
        kErrName[e.err]);
  CHECK(top->ev_lver_err_o == (e.err == kLver), "packet %d: ev_lver_err_o %d (expect %s)", pkts_seen,
        top->ev_lver_err_o, kErrName[e.err]);
  CHECK(top->ev_lnh_err_o == (e.err == kLnh), "packet %d: ev_lnh_err_o %d (expect %s)", pkts_seen, top->ev_lnh_err_o,
        kErrName[e.err]);
  CHECK(top->ev_vcrc_err_o == (e.err == kVcrc), "packet %d: ev_vcrc_err_o %d (expect %s)", pkts_seen,
        top->ev_vcrc_err_o, kErrName[e.err]);
}

static void tick() {
  top->clk_i = 0;
  top->eval();
  monitor();
  top->clk_i = 1;
  top->eval();
  cycle++;
}

static void idle(int n) {
  top->rx_tvalid_i = 0;
  for (int i = 0; i < n; i++) tick();
}

// Drive one packet with random idle gaps (gap_pct % chance before each beat).
static void send(const Bytes& p, bool vl15, Err err, int gap_pct) {
  expq.push_back({p, vl15, err});
  for (size_t off = 0; off < p.size(); off += kDataB) {
    while (chance(gap_pct)) idle(1 + urand(3));
    size_t n = std::min<size_t>(kDataB, p.size() - off);
    uint8_t b[16] = {0};
    for (size_t j = 0; j < kDataB; j++) b[j] = urand(256);  // junk in unused lanes
    std::memcpy(b, &p[off], n);
    put_bytes(top->rx_tdata_i, b, kDataB);
    top->rx_tkeep_i = keep_mask(n);
    top->rx_tlast_i = off + n == p.size();
    top->rx_tvalid_i = 1;
    tick();
  }
  top->rx_tvalid_i = 0;
  top->rx_tlast_i = 0;
}

// A random well-formed packet: LNH 2 or 3, LVer 0, given VL, PktLen words.
static Bytes random_pkt(int vl, int pktlen) {
  Bytes p(pktlen * 4 + 2);
  for (auto& b : p) b = urand(256);
  p[0] = (vl << 4);
  p[1] = (p[1] & 0xF0) | (chance(50) ? 2 : 3);
  p[4] = (p[4] & 0xF8) | ((pktlen >> 8) & 7);
  p[5] = pktlen & 0xFF;
  fix_vcrc(p);
  return p;
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  Verilated::randReset(2);
  std::string root = argc > 1 ? argv[1] : ".";
  top = std::make_unique<Vib_link_rx>();

  // The harness CRC engine against the CRC-16 catalogue check value.
  const char* chk = "123456789";
  CHECK(crc16(reinterpret_cast<const uint8_t*>(chk), 9) == 0x0A3D, "crc16 check value");

  auto vec = read_vectors(root);
  for (auto& v : vec) {
    CHECK(v.size() == 290, "vector size %zu", v.size());
    Bytes f = v;
    fix_vcrc(f);
    CHECK(f == v, "vector VCRC is not CRC-16 LSB first");
  }

  top->rst_ni = 0;
  top->rx_tvalid_i = 0;
  idle(5);
  top->rst_ni = 1;
  idle(2);

  // 1. Reference vectors back to back, then with random gaps.
  for (int gap : {0, 30, 70}) {
    for (int i = 0; i < 8; i++) {
      const Bytes& v = vec[urand(4)];
      send(v, (v[0] >> 4) == 15, kNone, gap);
    }
  }
  idle(3);

  // 2. Error injection on the vectors.
  for (int it = 0; it < 200; it++) {
    Bytes p = vec[urand(4)];
    bool vl15 = (p[0] >> 4) == 15;
    Err err;
    switch (urand(7)) {
      case 0: {  // flip a byte after the LRH (VCRC error only)
        p[8 + urand(p.size() - 8)] ^= 1 + urand(255);
        err = kVcrc;
        break;
      }
      case 1: {  // truncate
        p.resize(p.size() - 1 - urand(40));
        err = kLen;
        break;
      }
      case 2: {  // extra bytes
        size_t k = 1 + urand(9);
        for (size_t i = 0; i < k; i++) p.push_back(urand(256));
        err = kLen;
        break;
      }
      case 3: {  // LVer = 1, VCRC recomputed
        p[0] = (p[0] & 0xF0) | 1;
        fix_vcrc(p);
        err = kLver;
        break;
      }
      case 4: {  // LNH = 0 or 1, VCRC recomputed
        p[1] = (p[1] & 0xFC) | urand(2);
        fix_vcrc(p);
        err = kLnh;
        break;
      }
      case 5: {  // LVer and LNH bad and VCRC bad: LVer wins
        p[0] = (p[0] & 0xF0) | (1 + urand(15));
        p[1] = (p[1] & 0xFC);
        err = kLver;
        break;
      }
      default: {  // PktLen field wrong (length mismatch), VCRC recomputed
        p[5] ^= 1 + urand(255);
        fix_vcrc(p);
        err = kLen;
        break;
      }
    }
    send(p, vl15, err, 20);
    if (chance(30)) {  // a good packet in between
      const Bytes& v = vec[urand(4)];
      send(v, (v[0] >> 4) == 15, kNone, 20);
    }
  }

  // 3. Random packets of every length 6..80 words on random VLs.
  for (int it = 0; it < 300; it++) {
    int vl = urand(16);
    int len = 6 + urand(75);
    Bytes p = random_pkt(vl, len);
    Err err = kNone;
    if (chance(20)) {
      p[urand(p.size())] ^= 0x80;  // single-bit error: CRC-16 always detects it
      // classify the damage by precedence
      int b0 = p[0], b1 = p[1];
      int pl = ((p[4] & 7) << 8) | p[5];
      bool vlchg = (b0 >> 4) != vl;
      if (pl * 4 + 2 != (int)p.size() || pl < 6) err = kLen;
      else if ((b0 & 0xF) != 0) err = kLver;
      else if ((b1 & 3) < 2) err = kLnh;
      else err = kVcrc;
      if (vlchg) vl = b0 >> 4;
    }
    send(p, vl == 15, err, 25);
  }

  // 4. PktLen below the minimum with a self-consistent length and VCRC.
  for (int len = 1; len < 6; len++) {
    Bytes p = random_pkt(urand(16), len);
    send(p, (p[0] >> 4) == 15, kLen, 10);
  }
  // 5. Fewer than 2 bytes in the last beat (a 1-byte tail).
  {
    Bytes p = vec[2];
    p.resize(kDataB * 10 + 1);
    send(p, false, kLen, 10);
  }
  // 6. Reset in the middle of a packet leaves the next packet clean.
  {
    Bytes p = vec[0];
    for (size_t off = 0; off < 3 * kDataB; off += kDataB) {
      uint8_t b[16];
      std::memcpy(b, &p[off], kDataB);
      put_bytes(top->rx_tdata_i, b, kDataB);
      top->rx_tkeep_i = keep_mask(kDataB);
      top->rx_tlast_i = 0;
      top->rx_tvalid_i = 1;
      tick();
    }
    top->rx_tvalid_i = 0;
    tick();  // drain the output register of what was sent before
    top->rst_ni = 0;
    cur_vl15.clear();
    cur_data.clear();
    // the output register may show beats of the aborted packet: ignore them
    top->clk_i = 0;
    top->eval();
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
    top->eval();
    top->clk_i = 1;
    top->eval();
    top->rst_ni = 1;
    idle(2);
    send(vec[1], true, kNone, 10);
  }
  idle(4);
  CHECK(expq.empty(), "%zu packets never came out", expq.size());
  CHECK(pkts_seen > 500, "only %d packets checked", pkts_seen);
  top->final();
  tb_coverage_write();
  top.reset();  // before static destruction (Verilator context)
  return finish("ib_link_rx");
}
