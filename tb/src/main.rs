//! `vl15`: drive real SMP traffic through the Verilated vl15 RTL.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Print to stdout; a closed pipe (`vl15 decode f | head`) ends the output
/// quietly instead of panicking.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let mut o = std::io::stdout().lock();
        if let Err(e) = write!(o, $($t)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }};
}
macro_rules! outln {
    ($($t:tt)*) => {{
        out!($($t)*);
        out!("\n");
    }};
}

mod cmd;

#[derive(Parser)]
#[command(
    name = "vl15",
    version,
    about = "Cycle-accurate InfiniBand SMI/VL15 RTL, driven from Rust",
    long_about = "Cycle-accurate InfiniBand SMI/VL15 RTL, driven from Rust.\n\n\
        Every packet crosses the Verilated SystemVerilog of a CA port (ib_ca_top): \
        link RX (VCRC), the VL15 RX buffer, the SMI receive engine (ICRC, SMP \
        validation, DLID/LMC, directed-route rules), a Rust SMA, the SMI send \
        engine (headers, DR send rules, ICRC), the VL15 TX buffer and link TX \
        (VCRC). Traces are pcap files of raw InfiniBand packets (LRH..VCRC) with \
        the simulation cycle as timestamp.",
    after_help = cmd::EXIT_CODES_HELP
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the RTL regression on the built-in topology (two CA ports on one link) and print a table
    Regress(cmd::regress::Args),
    /// Feed every packet of a pcap into one CA port at line rate; write what it transmits.
    ///
    /// By default the port is the Verilated RTL, cycle by cycle. With --serial
    /// it is a board (or `make board-sim`'s simulated board behind a
    /// pseudo-terminal) speaking the UART framing of docs/uart.md: packets go
    /// one at a time, the same Rust SMA answers, and the output pcap's
    /// timestamps are packet positions, not cycles.
    Replay(cmd::replay::Args),
    /// Print a pcap as text, one line per packet (the form the snapshots use)
    Decode(cmd::decode::Args),
    /// Walk a fabric of RTL switches and CAs with directed-route SMPs and print it as ibnetdiscover does.
    ///
    /// The topology file (ibnetdiscover / ibsim format; ibsim's net-examples
    /// load unchanged) becomes a fabric of Verilated devices: ib_switch_top for
    /// every switch, ib_ca_mp_top for every CA, each with the Rust SMA. An SM on
    /// one CA port walks it breadth first with DR Get(NodeInfo),
    /// Get(NodeDescription) and Get(PortInfo), every SMP processed hop by hop in
    /// the RTL, and prints the topology text ibnetdiscover prints, so the two can
    /// be diffed (run ibnetdiscover against ibsim on the same file).
    Discover(cmd::discover::Args),
    /// Serve a fabric of RTL devices over ibsim's wire protocol.
    ///
    /// Binds ibsim's abstract unix sockets (`<base>:ctl`, `<base>:out0..9`),
    /// so unmodified OpenSM and infiniband-diags run against the RTL with
    /// `LD_PRELOAD=<libumad2sim.so> IBSIM_SOCKNAME=<base> SIM_HOST=<node>`
    /// (the library's full path: Debian's libumad2sim0 puts it in
    /// /usr/lib/<arch>/umad2sim/, which ld.so does not search; the server
    /// prints the path it finds when it starts):
    /// every SMP they send crosses the Verilated devices hop by hop. Clients
    /// attach by node id or NodeDescription, as on ibsim: to a CA at port 1,
    /// to a switch at port 0 (its SMI's SM interface and its GMP path);
    /// SIM_HOST unset: the file's first node. QP1 GMPs cross the RTL on a
    /// data VL: PerfMgt (perfquery) is answered by each CA's and switch's
    /// PMA from its RTL counters, SA and other classes by the destination
    /// node's SM client (saquery against a running OpenSM).
    ///
    /// ibsim's console: commands on standard input (and from --script and
    /// `!FILE`) change the fabric under the clients between two simulated
    /// cycles: Dump, Route (from the RTL registers), Link, Unlink, ReLink,
    /// Clear (the cable's link_up_i: PortState, Trap 128), Guid, Baselid,
    /// PerformanceSet (the RTL counters), Error (a share of the packets into
    /// a port corrupted on its cable: bad VCRC, bad ICRC or truncated, with
    /// the seed printed), Verbose, Wait, Attached, X, Help, Quit. `Help`
    /// lists them. Runs until killed or until Quit.
    Serve(cmd::serve::Args),
    /// Bring a fabric of RTL switches and CAs up with the built-in SM.
    ///
    /// The SM runs on one CA port and talks only through that CA's QP0 in the
    /// RTL: directed-route discovery, LIDs (respecting --lmc), min-hop routes
    /// written block by block into the switches' LFTs, then every linked port
    /// to Armed and Active. Prints a summary: nodes, ports Active, LIDs, SMPs,
    /// simulated cycles, wall time.
    Sim(cmd::sim::Args),
    /// Write a two-level fat tree of k-port switches as a topology file (k = 36: 702 nodes)
    Fattree(cmd::fattree::Args),
    /// Good and faulted packets at line rate through the RTL, checked against the reference model.
    ///
    /// A seeded generator mixes good SMPs/GMPs with every fault class
    /// that applies to the device (bad CRCs, malformed headers, wrong
    /// DLIDs, directed-route errors, PortState Down, VL15 overflow, wire
    /// backpressure storms, reset and link down in the middle of a packet),
    /// back to back, with idle and backpressure patterns on every stream. A
    /// scoreboard checks every output packet byte for byte against the
    /// reference model and, at each checkpoint, the
    /// drain time and every counter (docs/arch.md, docs/fabric.md). Exit
    /// status 1 on any mismatch.
    Soak(cmd::soak::Args),
    /// Fuzz the parsers of untrusted input for a time bound (docs/fuzzing.md)
    ///
    /// Each target runs for --seconds: structure-aware mutations of valid
    /// inputs, checked for panics, hangs, errors without context and broken
    /// round trips. Prints cases per target and the seed; a failing case
    /// prints its case seed (replay it with --case-seed) and input. Exit 1
    /// on any failure.
    Fuzz(cmd::fuzz::Args),
    /// Latency, throughput and cxx-vs-C++ simulation speed, side by side
    Bench(cmd::bench::Args),
    /// Print switches' LFTs as ibroute does, or a path as ibtracert does, from a state file.
    ///
    /// Reads the JSON that `vl15 sim --dump-state` writes (the RTL's LIDs,
    /// PortStates, cables and LFTs). Without --path: every switch's linear
    /// forwarding table (or --switch NAME's) in ibroute's layout, each LID
    /// with its out port and the port that has it. With --path SRC DST: the
    /// hops LID routing takes from LID SRC to LID DST, through each switch's
    /// LFT entry for DST and the cables, in ibtracert's layout. Exit status
    /// 1 when the path fails (a LID no port has, an LFT entry with no port
    /// behind it, a loop, a port not Active), 2 for a file that cannot be
    /// read or a switch it does not have.
    Routes(cmd::routes::Args),
    /// Replay every twin of a recorded run through its RTL, on all cores, and compare.
    ///
    /// Reads a recording of --record (sim, discover, serve): for each twin,
    /// every call the fabric made on it with its inputs, and what it gave.
    /// Each device's Verilated RTL is driven alone with those inputs, in
    /// the same cycles, and its outputs are compared with the record: in a
    /// cycle the twin was stepped, every output it gave (the bytes on each
    /// port, the host streams, registers, counters and states); in a cycle
    /// it slept through, the beats of the packets and MADs it sent ahead,
    /// and every other output as it held it. Devices share nothing, so
    /// --jobs workers replay them at once, and --shard splits them over a
    /// Slurm array (--emit-slurm, then --merge). Prints the devices checked,
    /// the packets compared, the first mismatch of each device (port,
    /// fabric cycle, each field recorded and as the RTL gave it), the wall
    /// time, the workers and the busiest device. Exit 1 on a mismatch; 2
    /// for a recording that is damaged, truncated, or from another build.
    CheckRtl(cmd::check_rtl::Args),
    /// Merge the RTL coverage files of a coverage run and report them (make coverage).
    ///
    /// Reads every Verilator coverage file (`*.dat`) under the directories
    /// given, in path order, merges them per module (a point is covered when
    /// any run hit it in any instance at any width), and writes into --out:
    /// `summary.json` (per module and `total`: line, branch, toggle,
    /// fsm_states and fsm_arcs in percent, rules as hit and total),
    /// `coverage.info` (lcov, for genhtml), `cover_points.txt` (every SV
    /// cover point with its hits and the run that hit it first) and
    /// `uncovered.txt`. Prints the per-module table. Exit status 1 when a
    /// total is below its --min-* or a cover point listed in --baseline is
    /// no longer hit; 2 for a file that is not coverage data.
    Coverage(cmd::coverage::Args),
    /// Print shell completions for vl15 (bash, zsh, fish, elvish, powershell)
    #[command(hide = true)]
    Completions(cmd::completions::Args),
    /// Print the vl15(1) man page (roff), or write it and one page per verb into a directory
    #[command(hide = true)]
    Man(cmd::completions::ManArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return cmd::clap_failed(&e),
    };
    let res = match cli.cmd {
        Cmd::Regress(a) => a.run(),
        Cmd::Replay(a) => a.run(),
        Cmd::Decode(a) => a.run(),
        Cmd::Discover(a) => a.run(),
        Cmd::Serve(a) => a.run(),
        Cmd::Sim(a) => a.run(),
        Cmd::Fattree(a) => a.run(),
        Cmd::Soak(a) => a.run(),
        Cmd::Fuzz(a) => a.run(),
        Cmd::Bench(a) => a.run(),
        Cmd::Routes(a) => a.run(),
        Cmd::CheckRtl(a) => a.run(),
        Cmd::Coverage(a) => a.run(),
        Cmd::Completions(a) => a.run(Cli::command()),
        Cmd::Man(a) => a.run(Cli::command()),
    };
    match res {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(cmd::EXIT_FAILED),
        Err(e) => cmd::failed(&e),
    }
}
