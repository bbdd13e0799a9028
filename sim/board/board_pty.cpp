// board_pty: the whole board top (ib_ca_board: CA port + UART framing) in
// Verilator, behind a pseudo-terminal, so host software talks to it exactly as
// to a board on /dev/ttyUSB0 (`vl15 replay --serial <pty>`). Prints the slave
// path on the first line of stdout, then runs until the slave side has been
// opened and closed again, or SIGTERM/SIGINT.
//
// The line between the pty and the model is 8N1 at CLK_HZ / BAUD clocks per
// bit, modelled here: host -> board bytes are shifted onto uart_rx_i (start
// bit, 8 data bits LSB first, stop bit); uart_tx_o is sampled at bit centres
// and every byte with a good stop bit goes back to the pty (a bad stop bit is
// counted and reported on stderr). The pty itself has no baud rate.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>

#include "Vib_ca_board.h"
#include "verilated.h"

#ifndef CLK_HZ
#error "CLK_HZ must be defined (the ClkHz the model was verilated with)"
#endif
#ifndef BAUD
#define BAUD 3000000
#endif

static constexpr int kClksPerBit = (CLK_HZ + BAUD / 2) / BAUD;
static volatile sig_atomic_t g_stop = 0;
static void on_signal(int) { g_stop = 1; }

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);

  int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) {
    std::perror("board_pty: posix_openpt");
    return 1;
  }
  termios t{};
  if (tcgetattr(m, &t) == 0) {
    cfmakeraw(&t);
    tcsetattr(m, TCSANOW, &t);
  }
  fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
  std::printf("%s\n", ptsname(m));
  std::fflush(stdout);

  auto ctx = std::make_unique<VerilatedContext>();
  auto top = std::make_unique<Vib_ca_board>(ctx.get());
  auto tick = [&]() {
    top->clk_i = 0;
    top->eval();
    top->clk_i = 1;
    top->eval();
  };
  top->uart_rx_i = 1;
  top->rst_ni = 0;
  for (int i = 0; i < 16; i++) tick();
  top->rst_ni = 1;

  std::deque<uint8_t> down;  // host -> board bytes not yet on the line
  int tx_bit = -1;           // bit being driven (0 start, 1..8 data, 9 stop), -1 idle
  int tx_clk = 0;
  uint8_t tx_byte = 0;
  int rx_clk = -1;  // clocks since the start edge of the byte being sampled, -1 idle
  uint8_t rx_byte = 0;
  int rx_prev = 1;
  uint64_t idle = 0, stop_errors = 0;
  bool opened = false;

  while (!g_stop) {
    // Host -> board: take pty bytes when the line is idle.
    if (tx_bit < 0 && down.empty()) {
      uint8_t buf[4096];
      ssize_t n = read(m, buf, sizeof buf);
      if (n > 0) {
        opened = true;
        down.insert(down.end(), buf, buf + n);
      } else if (n < 0 && errno == EIO && opened) {
        break;  // the slave side was closed
      }
    }
    if (tx_bit < 0 && !down.empty()) {
      tx_byte = down.front();
      down.pop_front();
      tx_bit = 0;
      tx_clk = 0;
    }
    if (tx_bit >= 0) {
      top->uart_rx_i = tx_bit == 0 ? 0 : tx_bit == 9 ? 1 : (tx_byte >> (tx_bit - 1)) & 1;
      if (++tx_clk == kClksPerBit) {
        tx_clk = 0;
        if (++tx_bit == 10) tx_bit = -1;
      }
    } else {
      top->uart_rx_i = 1;
    }

    tick();

    // Board -> host: sample uart_tx_o at bit centres.
    int lvl = top->uart_tx_o;
    if (rx_clk < 0) {
      if (rx_prev == 1 && lvl == 0) rx_clk = 0;
    } else {
      rx_clk++;
      int k = (rx_clk - kClksPerBit / 2) / kClksPerBit;  // bit index at its centre
      if ((rx_clk - kClksPerBit / 2) % kClksPerBit == 0) {
        if (k >= 1 && k <= 8) rx_byte = static_cast<uint8_t>((rx_byte >> 1) | (lvl << 7));
        if (k == 9) {
          if (lvl == 1) {
            while (write(m, &rx_byte, 1) < 0 && errno == EAGAIN) usleep(100);
          } else {
            stop_errors++;
          }
          rx_clk = -1;
        }
      }
    }
    rx_prev = lvl;

    // Nothing on either side for a while: wait for the host instead of spinning.
    bool quiet = tx_bit < 0 && down.empty() && rx_clk < 0 && lvl == 1;
    idle = quiet ? idle + 1 : 0;
    if (idle > 50u * 10u * kClksPerBit) {
      pollfd p{m, POLLIN, 0};
      poll(&p, 1, 5);
    }
  }
  if (stop_errors) std::fprintf(stderr, "board_pty: %lu bytes with a bad stop bit\n", stop_errors);
  top->final();
  return 0;
}
