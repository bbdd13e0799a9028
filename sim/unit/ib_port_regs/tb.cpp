// Unit harness for ib_port_regs: reset values, read/write of every RW
// register, read-only registers, RX depth clamping, counters (+1 per pulse
// of ev_i, +1 per pulse of ev2_i, +2 when both fire in one cycle, + add_i
// every cycle (the word counters, up to 2047 = the largest PktLen),
// independent, cleared all by RegCtrClear, counter i by a
// RegCtrClearSel write with bit i set, a clear beating a same-cycle event)
// against the map in ib_pkg; PortState
// against link_up_i (reset value, falling -> Down, rising -> Init, a link
// edge beats a same-cycle write; docs/arch.md ib_port_regs).
#include <memory>

#include "Vib_port_regs.h"
#include "tb_util.h"
#include "verilated.h"

#if !defined(RXD) || !defined(TXD) || !defined(PORTNUM)
#error "RXD, TXD and PORTNUM must be defined"
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
static uint32_t rd(uint8_t a) {
  top->reg_addr_i = a;
  top->eval();
  return top->reg_rdata_o;
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
  for (uint32_t v : {0u, 1u, 2u, uint32_t(RXD), uint32_t(RXD) + 1, 255u, 0x100u, 0xFFFFFFFFu}) {
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
  for (int i = 0; i < kNumCtrs; i++) {
    top->ev2_i = 1u << i;
    tick();
    top->ev_i = 1u << i;
    top->ev2_i = 1u << i;
    tick();
  }
  for (int i = 0; i < kNumCtrs; i++) CHECK(rd(RegCtrBase + i) == uint32_t(i + 5), "counter %d = %u after ev2_i", i, rd(RegCtrBase + i));
  top->ev_i = (1u << kNumCtrs) - 1;
  top->ev2_i = (1u << kNumCtrs) - 1;
  tick();
  for (int i = 0; i < kNumCtrs; i++) CHECK(rd(RegCtrBase + i) == uint32_t(i + 7), "counter %d = %u", i, rd(RegCtrBase + i));
  CHECK(rd(RegCtrBase + kNumCtrs) == 0 && rd(0xFF) == 0 && rd(0x09) == 0, "unmapped address reads non-zero");
  // clear
  wr(RegCtrClear, 0);
  for (int i = 0; i < kNumCtrs; i++) CHECK(rd(RegCtrBase + i) == 0, "counter %d not cleared", i);
  CHECK(rd(RegPortLid) == 0x1234, "clear touched a config register");

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
        if (chance(30)) a = 0;
        bool e = chance(40), e2 = chance(20);
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
        if (with_events) set_add(i, 5);
        if (sel >> i & 1) {
          want[i] = 0;
        } else if (with_events) {
          want[i] += 1 + 5;
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
        uint32_t a = urand(2048);
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

  // PortState follows the physical link (ibspec §8, docs/fabric.md):
  // falling -> Down (1), rising -> Init (2); a link edge wins over a write in
  // the same cycle; SMA writes still store any value while the link is steady.
  CHECK(rd(RegPortState) == 4 && top->link_up_o == 1, "PortState before the link tests");
  top->link_up_i = 0;
  CHECK(rd(RegPortState) == 4, "PortState changed before the clock edge");
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

  top->final();
  top.reset();  // before static destruction (Verilator context)
  return finish("ib_port_regs");
}
