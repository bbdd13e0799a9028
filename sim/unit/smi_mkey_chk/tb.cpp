// Unit harness for smi_mkey_chk (docs/arch.md "smi_mkey_chk"): the M_Key
// rules of IBA 14.2.4 as Linux qib check_mkey / qib_bad_mkey /
// subn_get_portinfo implement them, against an independent model:
//  - every M_KeyProtectBits level x method (Get, Set, TrapRepress, and
//    methods that are not checked) x key (port key 0, SMP key = / != port
//    key): viol_o (drop), mask_o (Get(PortInfo) returns M_Key 0) on the
//    tlast beat, ev_viol_o and M_KeyViolations;
//  - the lease: started by a violation when not running and the period is
//    not 0, stopped by a checked SMP with a valid key, expiring period x
//    MkeyTick cycles after the violation (protect := 0), period 0 never;
//  - M_KeyViolations saturates at 0xFFFF and is writable; the M_Key is
//    committed by the high-word write; reset values (TickReset);
//  - a random phase: random MADs with random valid gaps and backpressure,
//    register writes at random cycles (also mid-packet), the model stepped
//    every cycle.
#include <memory>

#include "Vsmi_mkey_chk.h"
#include "tb_util.h"
#include "verilated.h"

#ifndef TICKRESET
#error "TICKRESET must be defined"
#endif

enum : uint8_t { IdxLo = 0, IdxHi = 1, IdxProt = 2, IdxLease = 3, IdxTick = 4, IdxViols = 5, IdxSt = 6 };
enum : uint8_t { MGet = 0x01, MSet = 0x02, MSend = 0x03, MTrap = 0x05, MRepress = 0x07, MGetResp = 0x81 };
static constexpr int kBeats = 256 / kDataB;

static std::unique_ptr<Vsmi_mkey_chk> top;

// ---------------------------------------------------------------------------
// Independent model of the port's M_Key state (the rules in the header)
// ---------------------------------------------------------------------------
struct Model {
  uint64_t key = 0, stage = 0;
  uint32_t prot = 0, lease = 0, tick = TICKRESET, viols = 0;
  bool run = false;
  uint64_t cyc = 0;  // clock edges into the current lease second
  uint64_t sec = 0;  // whole lease seconds elapsed
  uint32_t tick_eff() const { return tick ? tick : 1; }
  static bool checked(uint8_t m) { return m == MGet || m == MSet || m == MRepress; }
  bool key_ok(uint64_t k) const { return key == 0 || k == key; }
  bool viol(uint8_t m, uint64_t k) const {
    return checked(m) && !key_ok(k) && (m != MGet || prot >= 2);
  }
  bool mask(uint8_t m, uint64_t k) const { return m == MGet && k != key && prot == 1; }
};
static Model md;

// One clock edge of the model: `last_hs` = a packet's tlast handshake with
// (method, key); `we`/`idx`/`wd` = a register write in the same cycle.
static void model_edge(bool last_hs, uint8_t m, uint64_t k, bool we, uint8_t idx, uint32_t wd) {
  const bool v = last_hs && md.viol(m, k);
  const bool start = v && !md.run && md.lease != 0;
  const bool stop = last_hs && Model::checked(m) && md.key_ok(k);
  // a lease second is MkeyTick edges (0 counts as 1); the lease expires at
  // the end of second number `lease` (if MkeyTick or the period change
  // meanwhile, at the end of the first second that reaches them)
  const bool sec_done = md.run && md.cyc + 1 >= md.tick_eff();
  const bool expire = sec_done && md.lease != 0 && md.sec + 1 >= md.lease;
  if (start || stop || expire) {
    md.run = start;
    md.cyc = 0;
    md.sec = 0;
  } else if (sec_done) {
    md.cyc = 0;
    md.sec = md.sec == 0xFFFF ? md.sec : md.sec + 1;
  } else if (md.run) {
    md.cyc++;
  }
  if (expire) md.prot = 0;
  if (v && md.viols != 0xFFFF) md.viols++;
  if (we) {
    switch (idx) {
      case IdxLo: md.stage = wd; break;
      case IdxHi: md.key = (uint64_t(wd) << 32) | md.stage; break;
      case IdxProt: md.prot = wd & 3; break;
      case IdxLease: md.lease = wd & 0xFFFF; break;
      case IdxTick: md.tick = wd; break;
      case IdxViols: md.viols = wd & 0xFFFF; break;
      default: break;
    }
  }
}

// ---------------------------------------------------------------------------
// Driving
// ---------------------------------------------------------------------------
static uint64_t cycle = 0;
static uint64_t viol_pulses = 0;

static uint32_t rd(uint8_t idx) {
  top->reg_idx_i = idx;
  top->eval();
  return top->reg_rdata_o;
}

// A MAD with method m and M_Key k; the other bytes random.
static Bytes make_mad(uint8_t m, uint64_t k) {
  Bytes b(256);
  for (auto& x : b) x = static_cast<uint8_t>(urand(256));
  b[3] = m;
  for (int j = 0; j < 8; j++) b[24 + j] = static_cast<uint8_t>(k >> (56 - 8 * j));
  return b;
}

struct Wr {
  bool we = false;
  uint8_t idx = 0;
  uint32_t wd = 0;
};

// One cycle: present `beat` (or nothing), ready, an optional write; check
// the verdict on a tlast handshake against the model; step both.
static void cycle_step(const Bytes* mad, int beat, bool valid, bool ready, Wr w, uint8_t m, uint64_t k) {
  if (valid) put_bytes(top->tdata_i, mad->data() + beat * kDataB, kDataB);
  top->tvalid_i = valid;
  top->tlast_i = valid && beat == kBeats - 1;
  top->tready_i = ready;
  top->reg_we_i = w.we;
  top->reg_idx_i = w.idx;
  top->reg_wdata_i = w.wd;
  top->eval();
  const bool last_hs = valid && ready && beat == kBeats - 1;
  if (valid && beat == kBeats - 1) {
    CHECK(top->viol_o == md.viol(m, k), "cycle %lu: viol_o %d, want %d (method 0x%02x key %016lx port key %016lx prot %u)",
          cycle, top->viol_o, md.viol(m, k), m, k, md.key, md.prot);
    CHECK(top->mask_o == md.mask(m, k), "cycle %lu: mask_o %d, want %d (method 0x%02x prot %u)", cycle, top->mask_o,
          md.mask(m, k), m, md.prot);
  } else {
    CHECK(!top->viol_o && !top->mask_o, "cycle %lu: verdict outside a tlast beat", cycle);
  }
  CHECK(top->ev_viol_o == (last_hs && md.viol(m, k)), "cycle %lu: ev_viol_o %d", cycle, top->ev_viol_o);
  viol_pulses += top->ev_viol_o;
  top->clk_i = 1;
  top->eval();
  top->clk_i = 0;
  top->eval();
  model_edge(last_hs, m, k, w.we, w.idx, w.wd);
  cycle++;
  top->reg_we_i = 0;
  CHECK(top->prot_o == md.prot, "cycle %lu: prot_o %u, want %u", cycle, top->prot_o, md.prot);
  CHECK(top->viols_o == md.viols, "cycle %lu: viols_o %u, want %u", cycle, top->viols_o, md.viols);
  CHECK(top->lease_run_o == md.run, "cycle %lu: lease_run_o %d, want %d", cycle, top->lease_run_o, md.run);
}

static void idle(int n = 1) {
  for (int i = 0; i < n; i++) cycle_step(nullptr, 0, false, true, {}, 0, 0);
}
static void wr(uint8_t idx, uint32_t d) { cycle_step(nullptr, 0, false, true, {true, idx, d}, 0, 0); }
static void set_key(uint64_t k) {
  wr(IdxLo, static_cast<uint32_t>(k));
  wr(IdxHi, static_cast<uint32_t>(k >> 32));
}

// Send one MAD; `stress`: random valid gaps and backpressure.
static void send(uint8_t m, uint64_t k, bool stress) {
  Bytes mad = make_mad(m, k);
  int beat = 0;
  while (beat < kBeats) {
    bool valid = !stress || chance(75);
    bool ready = !stress || chance(70);
    cycle_step(&mad, beat, valid, ready, {}, m, k);
    if (valid && ready) beat++;
  }
}

static void check_regs(const char* what) {
  CHECK(rd(IdxLo) == static_cast<uint32_t>(md.key) && rd(IdxHi) == static_cast<uint32_t>(md.key >> 32),
        "%s: M_Key reads %08x%08x, want %016lx", what, rd(IdxHi), rd(IdxLo), md.key);
  CHECK(rd(IdxProt) == md.prot, "%s: protect %u, want %u", what, rd(IdxProt), md.prot);
  CHECK(rd(IdxLease) == md.lease, "%s: lease %u, want %u", what, rd(IdxLease), md.lease);
  CHECK(rd(IdxTick) == md.tick, "%s: tick %u, want %u", what, rd(IdxTick), md.tick);
  CHECK(rd(IdxViols) == md.viols, "%s: violations %u, want %u", what, rd(IdxViols), md.viols);
  CHECK(((rd(IdxSt) >> 16) & 1) == md.run, "%s: lease running %u, want %d", what, (rd(IdxSt) >> 16) & 1, md.run);
  CHECK(rd(7) == 0, "%s: reserved register reads %08x", what, rd(7));
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  top = std::make_unique<Vsmi_mkey_chk>();
  top->clk_i = 0;
  top->rst_ni = 0;
  top->tvalid_i = 0;
  top->tready_i = 1;
  top->reg_we_i = 0;
  for (int i = 0; i < 4; i++) {
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
    top->eval();
  }
  top->rst_ni = 1;
  top->eval();

  // ---- reset values ---------------------------------------------------------
  check_regs("reset");
  CHECK(rd(IdxTick) == TICKRESET, "MkeyTick after reset %u, want %u", rd(IdxTick), TICKRESET);

  // ---- M_Key write: the low word is staged until the high word -------------
  wr(IdxLo, 0x89ABCDEF);
  CHECK(rd(IdxLo) == 0 && rd(IdxHi) == 0, "M_Key changed by the low-word write alone");
  wr(IdxHi, 0x01234567);
  check_regs("key commit");
  CHECK(md.key == 0x0123456789ABCDEFull, "model key");

  // ---- every protect level x method x key case (no lease) ------------------
  const uint8_t methods[] = {MGet, MSet, MRepress, MSend, MTrap, MGetResp, 0x00, 0x7F};
  const uint64_t K = 0x0123456789ABCDEFull;
  struct KeyCase {
    uint64_t port, smp;
  } keys[] = {{0, 0}, {0, K}, {K, K}, {K, K ^ 1}, {K, K ^ (1ull << 63)}, {K, 0}};
  uint64_t want_viols = 0;
  for (uint32_t prot = 0; prot < 4; prot++) {
    for (const auto& kc : keys) {
      set_key(kc.port);
      wr(IdxProt, prot);
      for (uint8_t m : methods) {
        for (int stress = 0; stress < 2; stress++) {
          // expectation written out from the rules, not from the model
          const bool checked = m == MGet || m == MSet || m == MRepress;
          const bool ok = kc.port == 0 || kc.smp == kc.port;
          const bool want_drop = checked && !ok && (m != MGet || prot >= 2);
          const bool want_mask = m == MGet && kc.smp != kc.port && prot == 1;
          CHECK(md.viol(m, kc.smp) == want_drop && md.mask(m, kc.smp) == want_mask,
                "model disagrees with the rule table: prot %u method %02x", prot, m);
          send(m, kc.smp, stress);
          want_viols += want_drop;
        }
      }
    }
  }
  CHECK(md.viols == want_viols && viol_pulses == want_viols, "violations %u pulses %lu, want %lu", md.viols,
        viol_pulses, want_viols);
  check_regs("matrix");

  // ---- saturation and write of M_KeyViolations -----------------------------
  set_key(K);
  wr(IdxProt, 2);
  wr(IdxViols, 0xFFFE);
  send(MSet, 5, false);
  CHECK(rd(IdxViols) == 0xFFFF, "violations %u after 0xFFFE + 1", rd(IdxViols));
  send(MSet, 5, true);
  CHECK(rd(IdxViols) == 0xFFFF, "violations %u: not saturated", rd(IdxViols));
  wr(IdxViols, 0);
  CHECK(rd(IdxViols) == 0, "violations not cleared by a write");

  // ---- lease -----------------------------------------------------------------
  // a lease second must outlast a stressed MAD (about 2 cycles a beat), so
  // that a valid method sent a second into the lease arrives before expiry
  const uint32_t tick = kBeats > 64 ? 1000 : 200, period = 3;
  wr(IdxTick, tick);
  wr(IdxLease, 0);
  // period 0: a violation does not start the timer
  send(MSet, 5, false);
  CHECK(!top->lease_run_o, "lease started with period 0");
  idle(50);
  CHECK(rd(IdxProt) == 2, "protect changed with period 0");
  wr(IdxLease, period);
  // a violation starts it; expiry exactly period x tick edges after the
  // violation's tlast handshake
  send(MSet, 5, false);
  CHECK(top->lease_run_o, "lease not started by a violation");
  idle(period * tick - 1);
  CHECK(rd(IdxProt) == 2 && top->lease_run_o, "lease expired early");
  CHECK((rd(IdxSt) & 0xFFFF) == period - 1, "seconds elapsed %u", rd(IdxSt) & 0xFFFF);
  idle(1);
  CHECK(rd(IdxProt) == 0 && !top->lease_run_o, "lease did not expire after %u cycles", period * tick);
  // a second violation while running does not restart it
  wr(IdxProt, 3);
  send(MTrap, 0, false);  // not a checked method: nothing
  CHECK(!top->lease_run_o, "unchecked method started the lease");
  send(MRepress, 5, false);
  CHECK(top->lease_run_o, "TrapRepress violation did not start the lease");
  idle(tick);
  send(MGet, 6, false);  // protect 3: a Get with a bad key is a violation
  idle(period * tick - tick - 1 - kBeats);
  CHECK(rd(IdxProt) == 3, "lease expired early after a second violation");
  idle(1);
  CHECK(rd(IdxProt) == 0, "second violation restarted the lease");
  // a valid Get/Set/TrapRepress stops it (protect stays)
  for (uint8_t m : {MGet, MSet, MRepress}) {
    wr(IdxProt, 2);
    send(MSet, 9, false);
    CHECK(top->lease_run_o, "lease not started");
    idle(tick);
    send(m, K, true);
    CHECK(!top->lease_run_o, "valid method 0x%02x did not stop the lease", m);
    idle(period * tick * 2);
    CHECK(rd(IdxProt) == 2, "protect cleared after a stopped lease");
  }
  // port key 0 makes every key valid: a Get stops the lease
  wr(IdxProt, 2);
  send(MSet, 9, false);
  set_key(0);
  send(MGet, 12345, false);
  CHECK(!top->lease_run_o, "key 0: Get did not stop the lease");
  // MkeyTick 0 counts as 1
  set_key(K);
  wr(IdxProt, 2);
  wr(IdxTick, 0);
  send(MSet, 9, false);
  idle(period - 1);
  CHECK(rd(IdxProt) == 2, "tick 0: expired early");
  idle(1);
  CHECK(rd(IdxProt) == 0, "tick 0: did not expire after %u cycles", period);
  check_regs("lease");

  // ---- random phase ------------------------------------------------------------
  const uint64_t keyset[] = {0, K, K ^ 0xFF00, 0xFFFFFFFFFFFFFFFFull};
  for (int n = 0; n < 600; n++) {
    const uint8_t m = methods[urand(sizeof(methods))];
    const uint64_t k = chance(50) ? md.key : keyset[urand(4)];
    CHECK(((rd(IdxSt) >> 16) & 1) == md.run && (rd(IdxSt) & 0xFFFF) == md.sec, "random: lease status %08x", rd(IdxSt));
    Bytes mad = make_mad(m, k);
    int beat = 0;
    while (beat < kBeats) {
      bool valid = chance(80);
      bool ready = chance(75);
      Wr w;
      if (chance(3)) {
        w.we = true;
        w.idx = static_cast<uint8_t>(urand(8));
        switch (w.idx) {
          case IdxLo: case IdxHi: w.wd = static_cast<uint32_t>(keyset[urand(4)] >> (w.idx == IdxHi ? 32 : 0)); break;
          case IdxProt: w.wd = urand(4); break;
          case IdxLease: w.wd = urand(4); break;
          case IdxTick: w.wd = urand(40); break;
          case IdxViols: w.wd = chance(50) ? 0xFFFD + urand(3) : urand(5); break;
          default: w.wd = static_cast<uint32_t>(rng()()); break;
        }
      }
      cycle_step(&mad, beat, valid, ready, w, m, k);
      if (valid && ready) beat++;
    }
    if (chance(20)) idle(urand(60));
  }
  check_regs("random");

  top->final();
  tb_coverage_write();
  top.reset();  // before static destruction (Verilator context)
  return finish("smi_mkey_chk");
}
