// Unit harness for ib_port_regs: reset values, read/write of every RW
// register, read-only registers, RX depth clamping, counters (+1 per pulse
// of ev_i, +1 per pulse of ev2_i, +2 when both fire in one cycle, + add_i
// every cycle (the word counters, up to 2047 = the largest PktLen),
// independent, cleared all by RegCtrClear, counter i by a
// RegCtrClearSel write with bit i set, a clear beating a same-cycle event;
// in simulation a write of V to counter i's address sets it to V (the
// test-only preset of the flip-flop counters: the others unchanged, events
// count on from V, the write beating a same-cycle event, reset beating the
// write; the block-RAM counters ignore it) against the map in ib_pkg; PortState
// against link_up_i (reset value, falling -> Down, rising -> Init, a link
// edge beats a same-cycle write; docs/arch.md ib_port_regs).
#include <memory>

#include "Vib_port_regs.h"
#include "tb_util.h"
#include "verilated.h"

#if !defined(RXD) || !defined(TXD) || !defined(PORTNUM)
#error "RXD, TXD and PORTNUM must be defined"
#endif
// CTR_RAM: the counters in block RAM (CtrRam = 1): reads wait for
// reg_rvalid_o; CTR_MASKS: add_i / ev2_i only on the counters ib_ca_top
// feeds (CtrAddMask / CtrEv2Mask as it passes them), else on every counter.
#ifndef CTR_RAM
#define CTR_RAM 0
#endif
#ifndef CTR_MASKS
#define CTR_MASKS 0
#endif

// Register map (rtl/ib_pkg.sv)
enum : uint8_t {
  RegId = 0x00, RegPortLid = 0x01, RegPortLmc = 0x02, RegMasterSmLid = 0x03, RegMasterSmSl = 0x04,
  RegPortState = 0x05, RegPortNum = 0x06, RegCaps = 0x07, RegRxDepth = 0x08, RegCtrClearSel = 0x0E,
  RegCtrClear = 0x0F, RegCtrBase = 0x10
};
static constexpr int kNumCtrs = 27;
static constexpr int kAddW = 11;  // add_i: one PktLen per counter

static std::unique_ptr<Vib_port_regs> top;
static constexpr int kRxWords = 22, kTxWords = 23, kVl15Dropped = 6;  // ib_pkg ctr_e
static bool has_add(int i) { return !CTR_MASKS || i == kRxWords || i == kTxWords; }
static bool has_ev2(int i) { return !CTR_MASKS || i == kVl15Dropped; }
static uint32_t ev2_mask() {
  uint32_t m = 0;
  for (int i = 0; i < kNumCtrs; i++) m |= uint32_t(has_ev2(i)) << i;
  return m;
}

// add_i[i] (packed [NumCtrs][CtrAddW]: counter i at bits 11i..11i+10)
static void set_add(int i, uint32_t v) {
  for (int b = 0; b < kAddW; b++) {
    int bit = kAddW * i + b;
    uint32_t& w = top->add_i[bit / 32];
    w = (w & ~(1u << (bit % 32))) | (((v >> b) & 1u) << (bit % 32));
  }
}
static void clear_add() {
  for (int i = 0; i < kNumCtrs; i++) set_add(i, 0);
}
static void tick() {
  top->clk_i = 0;
  top->eval();
  top->clk_i = 1;
  top->eval();
  top->reg_we_i = 0;
  top->ev_i = 0;
  top->ev2_i = 0;
  clear_add();
  top->clk_i = 0;
  top->eval();
}
// A register read through the handshake: reg_re_i held until reg_rvalid_o
// (the same cycle with CtrRam = 0: then reg_rdata_o is also checked to follow
// reg_addr_i without a request). No events meanwhile.
static int max_wait = 0;
static uint32_t rd(uint8_t a) {
  top->reg_addr_i = a;
  top->reg_re_i = 1;
  top->eval();
  int n = 0;
  while (!top->reg_rvalid_o) {
    CHECK(CTR_RAM && n < kNumCtrs + 3, "read of 0x%02x: no reg_rvalid_o after %d cycles", a, n);
    if (n >= kNumCtrs + 3) break;
    tick();
    top->reg_addr_i = a;
    top->reg_re_i = 1;
    top->eval();
    n++;
  }
  max_wait = std::max(max_wait, n);
  uint32_t v = top->reg_rdata_o;
  if (CTR_RAM) tick();  // the answer cycle
  top->reg_re_i = 0;
  top->eval();
  if (!CTR_RAM) {
    CHECK(top->reg_rdata_o == v, "read of 0x%02x without reg_re_i: %08x, with it %08x", a, top->reg_rdata_o, v);
  }
  return v;
}
static void wr(uint8_t a, uint32_t d) {
  top->reg_we_i = 1;
  top->reg_addr_i = a;
  top->reg_wdata_i = d;
  tick();
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  Verilated::randReset(2);
  top = std::make_unique<Vib_port_regs>();
  top->reg_we_i = 0;
  top->reg_re_i = 0;
  top->ext_sel_i = 0;
  top->ext_rdata_i = 0;
  top->ev_i = 0;
  top->ev2_i = 0;
  clear_add();
  top->link_up_i = 1;
  top->rst_ni = 0;
  for (int i = 0; i < 3; i++) tick();
  top->rst_ni = 1;

  // reset values
  CHECK(rd(RegId) == 0x564C3135, "RegId %08x", rd(RegId));
  CHECK(rd(RegPortLid) == 0 && rd(RegPortLmc) == 0 && rd(RegMasterSmLid) == 0 && rd(RegMasterSmSl) == 0,
        "RW registers not 0 after reset");
  CHECK(rd(RegPortState) == 2 && top->port_state_o == 2, "PortState not Init (2) after reset");
  CHECK(rd(RegPortNum) == PORTNUM, "RegPortNum %u", rd(RegPortNum));
  uint32_t caps = (uint32_t(TXD) << 16) | (uint32_t(RXD) << 8) | uint32_t(kDataB);
  CHECK(rd(RegCaps) == caps, "RegCaps %08x expected %08x", rd(RegCaps), caps);
  CHECK(rd(RegRxDepth) == RXD && top->rx_depth_o == RXD, "RegRxDepth %u after reset", rd(RegRxDepth));
  for (int i = 0; i < kNumCtrs; i++) CHECK(rd(RegCtrBase + i) == 0, "counter %d not 0 after reset", i);

  // RW registers: field widths and outputs
  wr(RegPortLid, 0xABCD1234);
  CHECK(rd(RegPortLid) == 0x1234 && top->port_lid_o == 0x1234, "PortLid");
  wr(RegPortLmc, 0xFFFFFFFD);
  CHECK(rd(RegPortLmc) == 5 && top->port_lmc_o == 5, "PortLmc");
  wr(RegMasterSmLid, 0x0001BEEF);
  CHECK(rd(RegMasterSmLid) == 0xBEEF && top->master_sm_lid_o == 0xBEEF, "MasterSmLid");
  wr(RegMasterSmSl, 0x3C);
  CHECK(rd(RegMasterSmSl) == 0xC && top->master_sm_sl_o == 0xC, "MasterSmSl");
  wr(RegPortState, 4);
  CHECK(rd(RegPortState) == 4 && top->port_state_o == 4, "PortState");
  // read-only registers ignore writes
  wr(RegId, 0);
  wr(RegPortNum, 0x55);
  wr(RegCaps, 0);
  CHECK(rd(RegId) == 0x564C3135 && rd(RegPortNum) == PORTNUM && rd(RegCaps) == caps, "RO register written");
  // RX depth clamped to 1..RXD
  for (uint32_t v : {0u, 1u, 2u, uint32_t(RXD), uint32_t(RXD) + 1, 255u, 0x100u, 0x10002u, 0xFFFFFFFFu}) {
    wr(RegRxDepth, v);
    uint32_t exp = v == 0 ? 1 : (v > RXD ? RXD : v);
    CHECK(rd(RegRxDepth) == exp && top->rx_depth_o == exp, "RxDepth write %u read %u expected %u", v,
          rd(RegRxDepth), exp);
  }
  // counters: counter i gets i+1 pulses
  for (int i = 0; i < kNumCtrs; i++) {
    for (int k = 0; k <= i; k++) {
      top->ev_i = 1u << i;
      tick();
    }
  }
  for (int i = 0; i < kNumCtrs; i++) CHECK(rd(RegCtrBase + i) == uint32_t(i + 1), "counter %d = %u", i, rd(RegCtrBase + i));
  // all at once
  top->ev_i = (1u << kNumCtrs) - 1;
  tick();
  for (int i = 0; i < kNumCtrs; i++) CHECK(rd(RegCtrBase + i) == uint32_t(i + 2), "counter %d = %u", i, rd(RegCtrBase + i));
  // the second event input: +1 alone, +2 together with ev_i (nothing lost
  // when a counter's two sources fire in the same cycle)
  // (only the counters with a second source, CTR_MASKS)
  for (int i = 0; i < kNumCtrs; i++) {
    if (!has_ev2(i)) continue;
    top->ev2_i = 1u << i;
    tick();
    top->ev_i = 1u << i;
    top->ev2_i = 1u << i;
    tick();
  }
  for (int i = 0; i < kNumCtrs; i++)
    CHECK(rd(RegCtrBase + i) == uint32_t(i + 2 + 3 * has_ev2(i)), "counter %d = %u after ev2_i", i,
          rd(RegCtrBase + i));
  top->ev_i = (1u << kNumCtrs) - 1;
  top->ev2_i = ev2_mask();
  tick();
  for (int i = 0; i < kNumCtrs; i++)
    CHECK(rd(RegCtrBase + i) == uint32_t(i + 3 + 4 * has_ev2(i)), "counter %d = %u", i, rd(RegCtrBase + i));
  CHECK(rd(RegCtrBase + kNumCtrs) == 0 && rd(0xFF) == 0 && rd(0x09) == 0, "unmapped address reads non-zero");
  // clear
  wr(RegCtrClear, 0);
  for (int i = 0; i < kNumCtrs; i++) CHECK(rd(RegCtrBase + i) == 0, "counter %d not cleared", i);
  CHECK(rd(RegPortLid) == 0x1234, "clear touched a config register");

  // Test-only counter write (simulation builds; ib_port_regs header): with
  // flip-flop counters a write of V to RegCtrBase + i sets counter i to V,
  // all 32 bits, and no other counter; later events count on from V (and
  // wrap); a write wins over every event of its own cycle. The block-RAM
  // counters (CtrRam = 1) are read-only: a write changes nothing.
  {
    const bool writable = !CTR_RAM;
    uint32_t want[kNumCtrs] = {};  // every counter is 0 after the clear above
    auto expect_all = [&](const char* what) {
      for (int i = 0; i < kNumCtrs; i++)
        CHECK(rd(RegCtrBase + i) == want[i], "counter write, %s: counter %d = %08x, expected %08x", what, i,
              rd(RegCtrBase + i), want[i]);
    };
    auto val = [](int i) { return 0x9E3779B9u * uint32_t(i + 1) ^ 0x80000001u; };  // distinct, both ends set
    for (int i = 0; i < kNumCtrs; i++) {
      wr(RegCtrBase + i, val(i));
      if (writable) want[i] = val(i);
      expect_all("one counter written");
    }
    // later events count on from V: ev_i, ev2_i and add_i on every counter
    for (int i = 0; i < kNumCtrs; i++) {
      uint32_t a = has_add(i) ? 100u + uint32_t(i) : 0u;
      set_add(i, a);
      want[i] += 1 + has_ev2(i) + a;
    }
    top->ev_i = (1u << kNumCtrs) - 1;
    top->ev2_i = ev2_mask();
    tick();
    expect_all("events after the write");
    // wrap: V = 0xFFFFFFFF, then one event
    wr(RegCtrBase + 3, 0xFFFFFFFFu);
    if (writable) want[3] = 0xFFFFFFFFu;
    top->ev_i = 1u << 3;
    tick();
    want[3] += 1;
    expect_all("wrap after the write");
    // a write wins over every event of its cycle: counter k holds exactly V
    // after the edge, every other counter counts its events
    for (int k : {0, kVl15Dropped, kRxWords, kTxWords, kNumCtrs - 1}) {
      const uint32_t v = 0xA5000000u | uint32_t(k) << 8;
      for (int i = 0; i < kNumCtrs; i++) {
        uint32_t a = has_add(i) ? 2047u : 0u;
        set_add(i, a);
        want[i] = (i == k && writable) ? v : want[i] + 1 + has_ev2(i) + a;
      }
      top->ev_i = (1u << kNumCtrs) - 1;
      top->ev2_i = ev2_mask();
      wr(RegCtrBase + k, v);
      expect_all("write beside events of the same cycle");
    }
    // an address past the last counter is no counter: nothing changes
    wr(RegCtrBase + kNumCtrs, 0x12345678u);
    CHECK(rd(RegCtrBase + kNumCtrs) == 0, "address after the counters reads %08x", rd(RegCtrBase + kNumCtrs));
    expect_all("write after the last counter");
    CHECK(rd(RegPortLid) == 0x1234, "a counter write touched a config register");
    wr(RegCtrClear, 0);
    for (uint32_t& w : want) w = 0;
    expect_all("RegCtrClear after counter writes");
  }

  // add_i: amounts, alone and with both event inputs, on every counter at
  // once; the harness keeps the expected values (mod 2^32).
  {
    uint32_t want[kNumCtrs] = {};
    auto expect_all = [&](const char* what) {
      for (int i = 0; i < kNumCtrs; i++)
        CHECK(rd(RegCtrBase + i) == want[i], "%s: counter %d = %u, expected %u", what, i, rd(RegCtrBase + i),
              want[i]);
    };
    for (int t = 0; t < 400; t++) {
      uint32_t ev = 0, ev2 = 0;
      for (int i = 0; i < kNumCtrs; i++) {
        uint32_t a = t < 4 ? (t == 0 ? 2047u : t == 1 ? 1u : t == 2 ? 72u : 0u) : urand(2048);
        if (chance(30) || !has_add(i)) a = 0;
        bool e = chance(40), e2 = chance(20) && has_ev2(i);
        set_add(i, a);
        ev |= uint32_t(e) << i;
        ev2 |= uint32_t(e2) << i;
        want[i] += a + e + e2;
      }
      top->ev_i = ev;
      top->ev2_i = ev2;
      tick();
    }
    expect_all("add_i");
    // RegCtrClearSel: exactly the selected counters, while every counter has
    // an event in the same cycle (the clear wins for the selected ones).
    for (int t = 0; t < 60; t++) {
      uint32_t sel = t == 0 ? 0u : t == 1 ? (1u << kNumCtrs) - 1 : t == 2 ? 0xFFFFFFFFu
                   : t < 2 + kNumCtrs + 1 ? 1u << (t - 3) : static_cast<uint32_t>(rng()());
      bool with_events = t % 2;
      for (int i = 0; i < kNumCtrs; i++) {
        uint32_t a = has_add(i) ? 5 : 0;
        if (with_events) set_add(i, a);
        if (sel >> i & 1) {
          want[i] = 0;
        } else if (with_events) {
          want[i] += 1 + a;
        }
      }
      if (with_events) top->ev_i = (1u << kNumCtrs) - 1;
      top->reg_we_i = 1;
      top->reg_addr_i = RegCtrClearSel;
      top->reg_wdata_i = sel;
      tick();
      expect_all("RegCtrClearSel");
      // refill some so that the next clear has something to clear
      for (int i = 0; i < kNumCtrs; i++) {
        uint32_t a = has_add(i) ? urand(2048) : 0;
        set_add(i, a);
        want[i] += a;
      }
      tick();
    }
    CHECK(rd(RegCtrClearSel) == 0 && rd(RegCtrClear) == 0, "clear registers read non-zero");
    wr(RegCtrClear, 0);
    for (int i = 0; i < kNumCtrs; i++) want[i] = 0;
    expect_all("RegCtrClear after adds");
    CHECK(rd(RegPortLid) == 0x1234, "clear-select touched a config register");
  }

  // Events every cycle (and max-rate bursts: every event input and add_i =
  // 2047 on every counter each cycle, the pending registers' worst case)
  // with reads in flight and clears between them, against a model of the
  // counters: a read must answer with the value its counter had in some
  // cycle from the request to the answer (CtrRam: the scanner's visit; FF
  // counters: the request cycle itself).
  {
    uint32_t want[kNumCtrs] = {};
    wr(RegCtrClear, 0);
    std::vector<uint32_t> window;
    bool re = false;
    int ci = 0, reads = 0;
    for (int t = 0; t < 30000; t++) {
      bool burst = (t / 2000) % 3 == 1;
      if (!re && chance(60)) {
        re = true;
        ci = urand(kNumCtrs);
        window.clear();
      }
      uint32_t ev = 0, ev2 = 0, sel = 0;
      bool clr = false, clr_all = false;
      if (!re && chance(3)) {
        clr = true;
        clr_all = chance(20);
        sel = clr_all ? 0xFFFFFFFFu : static_cast<uint32_t>(rng()());
        top->reg_we_i = 1;
        top->reg_addr_i = clr_all ? RegCtrClear : RegCtrClearSel;
        top->reg_wdata_i = sel;
      }
      uint32_t add[kNumCtrs];
      for (int i = 0; i < kNumCtrs; i++) {
        bool e = burst || chance(30), e2 = has_ev2(i) && (burst || chance(15));
        add[i] = !has_add(i) ? 0 : burst ? 2047u : chance(20) ? urand(2048) : 0;
        ev |= uint32_t(e) << i;
        ev2 |= uint32_t(e2) << i;
        set_add(i, add[i]);
      }
      top->ev_i = ev;
      top->ev2_i = ev2;
      if (re) {
        top->reg_re_i = 1;
        top->reg_addr_i = RegCtrBase + ci;
        window.push_back(want[ci]);
      }
      top->eval();
      if (re && top->reg_rvalid_o) {
        uint32_t v = top->reg_rdata_o;
        bool ok = false;
        for (uint32_t w : window) ok |= (w == v);
        CHECK(ok, "cycle %d: counter %d read %u, not a value it had during the %zu-cycle request (last %u)", t, ci,
              v, window.size(), window.back());
        CHECK(window.size() <= size_t(kNumCtrs) + 1, "counter read took %zu cycles", window.size());
        re = false;
        reads++;
      }
      for (int i = 0; i < kNumCtrs; i++) {
        if (clr && (clr_all || (sel >> i & 1))) {
          want[i] = 0;
        } else {
          want[i] += (ev >> i & 1) + (ev2 >> i & 1) + add[i];
        }
      }
      tick();
      top->reg_re_i = 0;
    }
    for (int n = 0; re && n < kNumCtrs + 3; n++) {  // let the open read finish
      top->reg_re_i = 1;
      top->eval();
      re = !top->reg_rvalid_o;
      tick();
      top->reg_re_i = 0;
    }
    CHECK(!re && reads > 1000, "only %d reads", reads);
    // one event: ctr_busy_o until the scanner has written it (CtrRam), never
    // with FF counters; then every counter reads its model value
    top->ev_i = 1;
    want[0]++;
    tick();
    top->eval();
    CHECK(top->ctr_busy_o == CTR_RAM, "ctr_busy_o %u after an event", top->ctr_busy_o);
    int n = 0;
    while (top->ctr_busy_o && n < 100) {
      tick();
      n++;
    }
    CHECK(n <= kNumCtrs + 1, "ctr_busy_o for %d cycles after the last event", n);
    for (int i = 0; i < kNumCtrs; i++)
      CHECK(rd(RegCtrBase + i) == want[i], "after the random run: counter %d = %u, expected %u", i,
            rd(RegCtrBase + i), want[i]);
    // ext_sel_i: the other registers' data through the same handshake
    top->ext_sel_i = 1;
    top->ext_rdata_i = 0xA5C3F00Du;
    CHECK(rd(RegCtrBase + 3) == 0xA5C3F00Du && rd(RegId) == 0xA5C3F00Du, "ext_sel_i read");
    top->ext_sel_i = 0;
    std::printf("ib_port_regs: %d concurrent counter reads, longest wait %d cycles\n", reads, max_wait);
  }

  // PortState follows the physical link (ibspec §8, docs/fabric.md):
  // falling -> Down (1), rising -> Init (2); a link edge wins over a write in
  // the same cycle; SMA writes still store any value while the link is steady.
  CHECK(rd(RegPortState) == 4 && top->link_up_o == 1, "PortState before the link tests");
  top->link_up_i = 0;
  if (!CTR_RAM) CHECK(rd(RegPortState) == 4, "PortState changed before the clock edge");  // a RAM-mode read clocks
  tick();
  CHECK(rd(RegPortState) == 1 && top->port_state_o == 1 && top->link_up_o == 0, "link down: PortState %u",
        rd(RegPortState));
  wr(RegPortState, 3);  // a write while the link stays down is stored
  CHECK(rd(RegPortState) == 3, "write while link down: %u", rd(RegPortState));
  top->link_up_i = 1;
  tick();
  CHECK(rd(RegPortState) == 2 && top->link_up_o == 1, "link up: PortState %u", rd(RegPortState));
  wr(RegPortState, 4);
  CHECK(rd(RegPortState) == 4, "write after link up");
  for (int k = 0; k < 5; k++) tick();  // a steady link changes nothing
  CHECK(rd(RegPortState) == 4, "steady link changed PortState");
  top->link_up_i = 0;
  wr(RegPortState, 4);  // same cycle as the falling edge: the edge wins
  CHECK(rd(RegPortState) == 1, "falling edge with a write: %u", rd(RegPortState));
  top->link_up_i = 1;
  wr(RegPortState, 3);  // same cycle as the rising edge: the edge wins
  CHECK(rd(RegPortState) == 2, "rising edge with a write: %u", rd(RegPortState));
  // reset with the link down: Down; with the link up: Init
  top->link_up_i = 0;
  top->rst_ni = 0;
  for (int i = 0; i < 2; i++) tick();
  top->rst_ni = 1;
  CHECK(rd(RegPortState) == 1 && top->link_up_o == 0, "reset with link down: PortState %u", rd(RegPortState));
  for (int i = 0; i < 3; i++) tick();
  CHECK(rd(RegPortState) == 1, "link held down after reset: PortState %u", rd(RegPortState));
  top->link_up_i = 1;
  tick();
  CHECK(rd(RegPortState) == 2, "link up after a down reset: PortState %u", rd(RegPortState));
  top->rst_ni = 0;
  for (int i = 0; i < 2; i++) tick();
  top->rst_ni = 1;
  CHECK(rd(RegPortState) == 2, "reset with link up: PortState %u", rd(RegPortState));

  // Reset, the one clear that can share a cycle with a counter write (the
  // clear registers are other addresses of the same bus), wins over it.
  wr(RegCtrBase + 5, 0x00C0FFEEu);
  CHECK(rd(RegCtrBase + 5) == (CTR_RAM ? 0u : 0x00C0FFEEu), "counter 5 after its write: %08x", rd(RegCtrBase + 5));
  top->rst_ni = 0;
  tick();
  wr(RegCtrBase + 5, 0x0BADF00Du);  // in the last reset cycle
  top->rst_ni = 1;
  CHECK(rd(RegCtrBase + 5) == 0, "a counter write in a reset cycle: counter 5 = %08x", rd(RegCtrBase + 5));

  top->final();
  tb_coverage_write();
  top.reset();  // before static destruction (Verilator context)
  return finish("ib_port_regs");
}
