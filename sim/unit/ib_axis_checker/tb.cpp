// Unit harness for ib_axis_checker: a legal stream with gaps and
// backpressure must pass; each protocol violation, run in a forked child,
// must stop the simulation (or pass, where the parameters disable that check).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <memory>

#include "Vib_axis_checker.h"
#include "tb_util.h"
#include "verilated.h"

#if !defined(HASREADY) || !defined(KEEPCHECK)
#error "HASREADY and KEEPCHECK must be defined"
#endif

static std::unique_ptr<Vib_axis_checker> top;

static void tick() {
  top->clk_i = 0;
  top->eval();
  top->clk_i = 1;
  top->eval();
}
static void beat(uint8_t fill, int n, bool valid, bool ready, bool last) {
  uint8_t b[16];
  std::memset(b, fill, sizeof b);
  put_bytes(top->tdata_i, b, kDataB);
  top->tkeep_i = keep_mask(n);
  top->tvalid_i = valid;
  top->tready_i = ready;
  top->tlast_i = last;
  tick();
}
static void reset() {
  top->rst_ni = 0;
  beat(0, 0, false, false, false);
  beat(0, 0, false, false, false);
  top->rst_ni = 1;
}

// Legal traffic: packets of random length, random gaps, random ready.
static void legal() {
  for (int p = 0; p < 200; p++) {
    int len = 1 + urand(10);
    for (int i = 0; i < len; i++) {
      bool last = i + 1 == len;
      int n = last ? 1 + urand(kDataB) : kDataB;
      uint8_t fill = urand(256);
      while (chance(30)) beat(urand(256), 1 + urand(kDataB), false, chance(50), chance(50));
      if (HASREADY) {
        while (chance(40)) beat(fill, n, true, false, last);  // stalled: hold everything
      }
      beat(fill, n, true, true, last);
    }
  }
}

// Run `f` in a child; return true if the child ended with a failure.
static bool child_fails(const std::function<void()>& f) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {  // expected assertion messages
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    reset();
    f();
    tick();
    std::fflush(nullptr);
    std::_Exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  Verilated::randReset(2);
  top = std::make_unique<Vib_axis_checker>();
  reset();
  legal();  // runs in this process: an assertion here fails the harness

  struct Case {
    const char* name;
    bool expect_fail;
    std::function<void()> f;
  };
  const Case cases[] = {
      {"legal traffic", false, legal},
      {"tdata changes while stalled", HASREADY != 0,
       [] {
         beat(0x11, kDataB, true, false, false);
         beat(0x22, kDataB, true, true, false);
       }},
      {"tvalid drops while stalled", HASREADY != 0,
       [] {
         beat(0x11, kDataB, true, false, false);
         beat(0x11, kDataB, false, true, false);
       }},
      {"tlast changes while stalled", HASREADY != 0,
       [] {
         beat(0x11, kDataB, true, false, false);
         beat(0x11, kDataB, true, true, true);
       }},
      {"tkeep changes while stalled", HASREADY != 0 && KEEPCHECK != 0,
       [] {
         beat(0x11, 1, true, false, true);
         beat(0x11, 2, true, true, true);
       }},
      {"tkeep zero", KEEPCHECK != 0, [] { beat(0x11, 0, true, true, true); }},
      {"tkeep not contiguous", KEEPCHECK != 0,
       [] {
         top->tkeep_i = 0;
         uint8_t b[16] = {0};
         put_bytes(top->tdata_i, b, kDataB);
         top->tkeep_i = 0x2;  // byte 1 without byte 0
         top->tvalid_i = 1;
         top->tready_i = 1;
         top->tlast_i = 1;
         tick();
       }},
      {"short beat without tlast", KEEPCHECK != 0, [] { beat(0x11, kDataB - 1, true, true, false); }},
  };
  for (const Case& c : cases) {
    bool failed = child_fails(c.f);
    CHECK(failed == c.expect_fail, "%s: checker %s, expected %s", c.name, failed ? "fired" : "silent",
          c.expect_fail ? "fire" : "silent");
  }
  top->final();
  tb_coverage_write();
  top.reset();  // before static destruction (Verilator context)
  return finish("ib_axis_checker");
}
