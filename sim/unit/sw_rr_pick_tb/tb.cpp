// Unit harness for sw_rr_pick (through sw_rr_pick_tb, which instances it at
// N = 1, 2, 3, 9, 18, 65 and 130): against the rule itself, written here
// as a search, that the choice is the first requester after last_i,
// cyclically (last_i itself when it is the only one), with any_o when
// anything requests and sel_o = last_i when nothing does. Exhaustive for
// N <= 9 (every request vector, every last_i < N); random vectors of
// every density for the larger N.
#include <memory>
#include <vector>

#include "Vsw_rr_pick_tb.h"
#include "tb_util.h"
#include "verilated.h"

static std::unique_ptr<Vsw_rr_pick_tb> top;

// The rule: search last+1, last+2, ... cyclically.
static void expect_pick(const std::vector<bool>& req, unsigned last, unsigned& sel, bool& any) {
  const unsigned n = static_cast<unsigned>(req.size());
  for (unsigned k = 1; k <= n; ++k) {
    const unsigned i = (last + k) % n;
    if (req[i]) {
      sel = i;
      any = true;
      return;
    }
  }
  sel = last;
  any = false;
}

static const unsigned kNs[7] = {1, 2, 3, 9, 18, 65, 130};
static long checked = 0;

// Instance k (N = kNs[k]): request vector `req`, previous grant `last`.
static void check(unsigned k, const std::vector<bool>& req, unsigned last) {
  for (unsigned w = 0; w < 5; ++w) {
    uint32_t v = 0;
    for (unsigned i = w * 32; i < req.size() && i < w * 32 + 32; ++i) v |= uint32_t(req[i]) << (i - w * 32);
    top->req_i[k][w] = v;
  }
  top->last_i[k] = static_cast<uint8_t>(last);
  top->eval();
  unsigned es = 0;
  bool ea = false;
  expect_pick(req, last, es, ea);
  ++checked;
  const unsigned sel = top->sel_o[k];
  const bool any = (top->any_o >> k) & 1;
  if (sel != es || any != ea) {
    std::string bits;
    for (size_t i = req.size(); i-- > 0;) bits += req[i] ? '1' : '0';
    CHECK(false, "N=%u last=%u req=%s: sel %u any %d, expected sel %u any %d", kNs[k], last,
          bits.c_str(), sel, any, es, ea);
  }
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  top = std::make_unique<Vsw_rr_pick_tb>();
  for (unsigned k = 0; k < 7; ++k) {
    const unsigned n = kNs[k];
    std::vector<bool> req(n);
    if (n <= 9) {
      for (uint32_t v = 0; v < (1u << n); ++v) {
        for (unsigned i = 0; i < n; ++i) req[i] = (v >> i) & 1;
        for (unsigned last = 0; last < n; ++last) check(k, req, last);
      }
      continue;
    }
    // Densities from one requester in a hundred to all of them, and the
    // single-requester and no-requester vectors at every position.
    for (int t = 0; t < 40000 && g_errors < 10; ++t) {
      const uint32_t pct = t % 4 == 0 ? 1 + urand(3) : urand(101);
      for (unsigned i = 0; i < n; ++i) req[i] = chance(pct);
      check(k, req, urand(n));
    }
    for (unsigned one = 0; one < n; ++one) {
      for (unsigned i = 0; i < n; ++i) req[i] = i == one;
      for (unsigned last = 0; last < n; ++last) check(k, req, last);
    }
    std::fill(req.begin(), req.end(), false);
    for (unsigned last = 0; last < n; ++last) check(k, req, last);
  }
  std::printf("sw_rr_pick: %ld choices checked\n", checked);
  top->final();
  return finish("sw_rr_pick");
}
