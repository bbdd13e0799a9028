//! The `vl15` command line on bad input: a table of inputs, each run
//! through the real binary and checked for its exit status (0 success, 1 a
//! run that failed its check, 2 bad input or usage; docs/cli.md) and its
//! one line on stderr. Then the help texts, `soak --list`, `sim --scenario`
//! with `--dump-state` and `--verbose`, and the client hint of `serve`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn vl15() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vl15"))
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// What a case's stderr line must be.
enum Want {
    /// Exactly this line.
    Line(String),
    /// A line starting with this.
    Prefix(&'static str),
}

struct Case {
    args: Vec<String>,
    code: i32,
    want: Want,
}

fn case(args: &[&str], code: i32, want: Want) -> Case {
    Case {
        args: args.iter().map(|s| s.to_string()).collect(),
        code,
        want,
    }
}

fn line(s: &str) -> Want {
    Want::Line(s.to_string())
}

/// The files the table's cases name, written into `dir` (the cases run
/// there, so messages show these relative names).
fn write_inputs(dir: &Path) -> String {
    let w = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();
    // A topology every case can name without a path, and bad ones.
    let net = std::fs::read(repo("tests/topologies/net.2sw2path4hca")).unwrap();
    w("net.2sw2path4hca", &net);
    w("g.topo", b"foo bar\n");
    w(
        "inrecord.topo",
        b"Switch 4 \"S\"\n[1] \"H\"[1]\nfoo\n\nHca 1 \"H\"\n[1] \"S\"[1]\n",
    );
    w(
        "radix.topo",
        b"Switch 70 \"S\"\n[1] \"H\"[1]\n\nHca 1 \"H\"\n[1] \"S\"[1]\n",
    );
    w(
        "ca3.topo",
        b"Switch 4 \"S\"\n[1] \"H\"[1]\n\nHca 3 \"H\"\n[1] \"S\"[1]\n",
    );
    // The vectors cut inside record 2: record 1 is whole.
    let pcap = std::fs::read(repo("tests/vectors/ibvec.pcap")).unwrap();
    let len1 = u32::from_le_bytes(pcap[32..36].try_into().unwrap()) as usize;
    let end1 = 24 + 16 + len1;
    w("cut.pcap", &pcap[..end1 + 16 + 10]);
    w("good.pcap", &pcap);
    w("bad.pcap", b"this is not a pcap file at all");
    // Coverage: a directory with no coverage file, and one with a bad one.
    std::fs::create_dir_all(dir.join("covempty")).unwrap();
    std::fs::create_dir_all(dir.join("covbad")).unwrap();
    w("covbad/x.dat", b"hello\n");
    w("bad.toml", b"topology = \"net.2sw2path4hca\"\nbogus = 1\n");
    w(
        "dup.toml",
        b"topology = \"net.2sw2path4hca\"\n[[sm]]\nnode = \"Hca1\"\n[[sm]]\nnode = \"Hca1\"\n",
    );
    format!(
        "vl15: cut.pcap: truncated after record 1: the data of record 2 at byte offset {end1} \
         is incomplete"
    )
}

fn table(cut: &str) -> Vec<Case> {
    let net = "net.2sw2path4hca";
    let sim = |extra: &[&str]| {
        let mut a = vec!["sim", "--topology", net];
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let sim_case = |extra: &[&str], code, want| Case {
        args: sim(extra),
        code,
        want,
    };
    let no_file = "No such file or directory (os error 2)";
    vec![
        // Files that cannot be read or parsed: named once, with the line.
        case(
            &["decode", "nonexist.pcap"],
            2,
            line(&format!("vl15: nonexist.pcap: {no_file}")),
        ),
        case(
            &["replay", "nonexist.pcap", "-o", "o.pcap"],
            2,
            line(&format!("vl15: nonexist.pcap: {no_file}")),
        ),
        case(&["decode", "cut.pcap"], 2, line(cut)),
        case(&["replay", "cut.pcap", "-o", "o.pcap"], 2, line(cut)),
        case(
            &["decode", "bad.pcap"],
            2,
            Want::Prefix("vl15: bad.pcap: not a pcap file: magic number 0x74686973"),
        ),
        case(
            &["sim", "--topology", "g.topo"],
            2,
            Want::Prefix("vl15: g.topo:1: \"foo bar\" is not a topology line: expected a node header"),
        ),
        case(
            &["discover", "--topology", "inrecord.topo"],
            2,
            Want::Prefix("vl15: inrecord.topo:3: \"foo\" is not a topology line"),
        ),
        case(
            &["sim", "--topology", "net.2sw2path4hca", "--twin", "nosuch*"],
            2,
            line("vl15: --twin \"nosuch*\": no device has that node id or NodeDescription"),
        ),
        case(
            &["discover", "--topology", "net.2sw2path4hca", "--rtl", "S*", "--twin", "*1"],
            2,
            line("vl15: --twin \"*1\" and --rtl \"S*\" both name \"Switch1\""),
        ),
        case(
            &["serve", "--topology", "net.2sw2path4hca", "--rtl", ","],
            2,
            line("vl15: --rtl: an empty pattern names no device"),
        ),
        case(
            &["sim", "--topology", "net.2sw2path4hca", "--fidelity", "fast"],
            2,
            Want::Prefix("vl15: invalid value 'fast' for '--fidelity <rtl|twin|lockstep>'"),
        ),
        case(
            &["sim", "--topology", "radix.topo"],
            2,
            line("vl15: radix.topo:1: switch \"S\" has 70 ports; the RTL switch has 1..64"),
        ),
        case(
            &["serve", "--topology", "ca3.topo"],
            2,
            line("vl15: ca3.topo:4: CA \"H\" has 3 ports; the RTL CA has 1 or 2"),
        ),
        case(
            &["sim", "--topology", "/nonexistent/topo"],
            2,
            line(&format!(
                "vl15: /nonexistent/topo: cannot read topology file: {no_file}"
            )),
        ),
        case(
            &["sim", "--scenario", "bad.toml"],
            2,
            Want::Prefix("vl15: bad.toml:2: unknown field `bogus`, expected one of `topology`"),
        ),
        case(
            &["sim", "--scenario", "dup.toml"],
            2,
            line("vl15: Hca1: an SM runs there already"),
        ),
        case(
            &["sim", "--scenario", "nosuch.toml"],
            2,
            line(&format!("vl15: nosuch.toml: {no_file}")),
        ),
        // Numbers out of range, checked before anything runs.
        sim_case(
            &["--timeout", "400"],
            2,
            line(
                "vl15: invalid value '400' for '--timeout <TIMEOUT>': 400 cycles is less than an \
                 SMP's round trip on the longest directed route (63 links out and back, about \
                 16,500 cycles at DataW 64); give at least 20000 (see --help)",
            ),
        ),
        sim_case(
            &["--timeout", "20000", "--link-latency", "100"],
            2,
            line(
                "vl15: --timeout 20000: at --link-latency 100 an SMP's round trip on the longest \
                 directed route (63 links out and back) takes up to 32096 cycles; give at least \
                 that",
            ),
        ),
        case(
            &["serve", "--topology", net, "--timeout-cycles", "999"],
            2,
            Want::Prefix("vl15: invalid value '999' for '--timeout-cycles <TIMEOUT_CYCLES>': 999 cycles is less than"),
        ),
        case(
            &["replay", "good.pcap", "-o", "o.pcap", "--lid", "0xc000"],
            2,
            line(
                "vl15: invalid value '0xc000' for '--lid <LID>': 0xc000 is a multicast LID \
                 (0xc000..0xfffe); a port's LID is unicast, 1..0xbfff (see --help)",
            ),
        ),
        case(
            &["replay", "good.pcap", "-o", "o.pcap", "--lid", "65535"],
            2,
            line(
                "vl15: invalid value '65535' for '--lid <LID>': 0xffff is the permissive LID; a \
                 port's LID is unicast, 1..0xbfff (see --help)",
            ),
        ),
        case(
            &["replay", "good.pcap", "-o", "o.pcap", "--lid", "0xbfff", "--lmc", "2"],
            2,
            line(
                "vl15: --lid 0xbfff --lmc 2: the port would own LIDs up to 0xc002, past the last \
                 unicast LID 0xbfff",
            ),
        ),
        case(
            &["replay", "good.pcap", "-o", "o.pcap", "--width", "48"],
            2,
            Want::Prefix("vl15: invalid value '48' for '--width <WIDTH>': the CA port is built at DataW 32, 64 and 128"),
        ),
        sim_case(
            &["--max-smps", "0"],
            2,
            line("vl15: invalid value '0' for '--max-smps <MAX_SMPS>': must be at least 1 (see --help)"),
        ),
        sim_case(
            &["--lmc", "9"],
            2,
            line("vl15: invalid value '9' for '--lmc <LMC>': 9 is not in 0..=7 (see --help)"),
        ),
        case(
            &["fuzz", "--max-cases", "0"],
            2,
            Want::Prefix("vl15: invalid value '0' for '--max-cases <MAX_CASES>': must be at least 1"),
        ),
        // Names and ports the fabric does not have.
        sim_case(
            &["--sm-port", "2"],
            2,
            line(
                "vl15: net.2sw2path4hca:33: port 2 of \"Hca1\" has no cable, so an SM there \
                 reaches nothing; run it on a cabled port",
            ),
        ),
        sim_case(
            &["--sm-port", "3"],
            2,
            line("vl15: net.2sw2path4hca:33: \"Hca1\" has ports 1 to 2; no port 3 to run the SM on"),
        ),
        sim_case(
            &["--sm", "Switch1"],
            2,
            line(
                "vl15: net.2sw2path4hca:21: \"Switch1\" is a switch; the SM runs on a CA port in \
                 this fabric",
            ),
        ),
        sim_case(
            &["--sm", "nosuch"],
            2,
            line("vl15: net.2sw2path4hca: no node \"nosuch\""),
        ),
        case(
            &["discover", "--topology", net, "--port", "3"],
            2,
            line("vl15: net.2sw2path4hca:33: --port 3: \"Hca1\" has ports 1 to 2"),
        ),
        case(
            &["discover", "--topology", net, "--console", "Unlink \"nosuch\"[1]"],
            2,
            line("vl15: --console \"Unlink \\\"nosuch\\\"[1]\": no node \"nosuch\""),
        ),
        // Usage.
        case(
            &["bogus"],
            2,
            Want::Prefix("vl15: unrecognized subcommand 'bogus'"),
        ),
        case(
            &["replay", "good.pcap"],
            2,
            line(
                "vl15: the following required arguments were not provided: --output <OUTPUT> \
                 (see --help)",
            ),
        ),
        case(
            &["sim", "--topology", net, "--bogus"],
            2,
            Want::Prefix("vl15: unexpected argument '--bogus' found"),
        ),
        case(
            &["fuzz", "--target", "nope"],
            2,
            line(
                "vl15: --target \"nope\": no such fuzz target (targets: decode, pcap, topology, \
                 ibsim, console, sma, serve, all)",
            ),
        ),
        case(
            &["fuzz", "--case-seed", "1"],
            2,
            Want::Prefix("vl15: --case-seed replays one case of one --target"),
        ),
        case(
            &["soak", "--class", "nope", "--packets", "1"],
            2,
            line("vl15: --class nope: no such fault class (vl15 soak --list names them)"),
        ),
        case(
            &["regress", "--width", "64", "--scenario", "nosuch"],
            2,
            line("vl15: --scenario nosuch: no such scenario (vl15 regress --list names them)"),
        ),
        case(
            &["regress", "--width", "48"],
            2,
            line("vl15: --width 48: give 32, 64, 128 or all"),
        ),
        case(
            &["fattree", "--ports", "7"],
            2,
            line("vl15: fat tree: switch port count must be even and 2..=64, got 7"),
        ),
        case(
            &["coverage", "nosuchdir"],
            2,
            line("vl15: nosuchdir: not a directory"),
        ),
        case(
            &["coverage", "covempty"],
            2,
            line("vl15: no coverage files (*.dat) in the directories given"),
        ),
        case(
            &["coverage", "covbad"],
            2,
            line(
                "vl15: covbad/x.dat:1: not a Verilator coverage file (no \"# SystemC::Coverage-\" header)",
            ),
        ),
        case(
            &["coverage", "--min-line", "120", "covbad"],
            2,
            Want::Prefix("vl15: invalid value '120' for '--min-line <PCT>'"),
        ),
        // A run that fails its check: status 1, and no error line.
    ]
}

fn run_in(dir: &Path, args: &[String]) -> Output {
    vl15().current_dir(dir).args(args).output().unwrap()
}

#[test]
fn bad_inputs_give_one_line_and_the_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let cut = write_inputs(dir.path());
    let mut bad = Vec::new();
    for c in table(&cut) {
        let o = run_in(dir.path(), &c.args);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        let lines: Vec<&str> = err.lines().collect();
        let ok_line = match (&c.want, lines.as_slice()) {
            (Want::Line(l), [got]) => got == l,
            (Want::Prefix(p), [got]) => got.starts_with(p),
            _ => false,
        };
        if o.status.code() != Some(c.code) || !ok_line || !o.stdout.is_empty() {
            let want = match &c.want {
                Want::Line(l) => format!("line {l:?}"),
                Want::Prefix(p) => format!("prefix {p:?}"),
            };
            bad.push(format!(
                "vl15 {}: status {:?} (want {}), stderr {err:?}, stdout {:?}; want {want}",
                c.args.join(" "),
                o.status.code(),
                c.code,
                String::from_utf8_lossy(&o.stdout)
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // A replay refused for its input writes no output file.
    assert!(!dir.path().join("o.pcap").exists());
}

/// A run that completes but fails its check exits 1 and prints no error
/// line: two subnets with no cable between them, so the SM on one cannot
/// bring the other's ports up.
#[test]
fn a_failed_check_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("split.topo");
    std::fs::write(
        &topo,
        "Switch 2 \"S1\"\n[1] \"H1\"[1]\n\nHca 1 \"H1\"\n[1] \"S1\"[1]\n\n\
         Switch 2 \"S2\"\n[1] \"H2\"[1]\n\nHca 1 \"H2\"\n[1] \"S2\"[1]\n",
    )
    .unwrap();
    let o = vl15()
        .args(["sim", "--topology"])
        .arg(&topo)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("ports Active 2 of 4 linked"), "{out}");
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `vl15 coverage` on coverage files: the reports are written, and the
/// run fails (status 1) below a threshold or when a baseline cover point is
/// not hit, naming which.
#[test]
fn coverage_reports_and_fails_below_its_thresholds() {
    let dir = tempfile::tempdir().unwrap();
    let dat = dir.path().join("dat");
    std::fs::create_dir_all(&dat).unwrap();
    let k = |kv: &[(&str, &str)]| -> String {
        kv.iter().map(|(a, b)| format!("\x01{a}\x02{b}")).collect()
    };
    let root = dir.path().display().to_string();
    let f = format!("{root}/rtl/m.sv");
    let text = format!(
        "# SystemC::Coverage-3\nC '{}' 3\nC '{}' 0\nC '{}' 0\n",
        k(&[
            ("f", &f),
            ("l", "3"),
            ("n", "1"),
            ("t", "line"),
            ("page", "v_line/m"),
            ("o", "block"),
            ("h", "TOP.m")
        ]),
        k(&[
            ("f", &f),
            ("l", "4"),
            ("n", "1"),
            ("t", "line"),
            ("page", "v_line/m"),
            ("o", "block"),
            ("h", "TOP.m")
        ]),
        k(&[
            ("f", &f),
            ("l", "9"),
            ("n", "1"),
            ("t", "user"),
            ("page", "v_user/m"),
            ("o", "RULE_X"),
            ("h", "TOP.m.RULE_X")
        ]),
    );
    std::fs::write(dat.join("run.dat"), text).unwrap();
    std::fs::write(dir.path().join("baseline"), "m RULE_X\n").unwrap();
    let out = dir.path().join("out");
    let o = vl15()
        .args(["coverage", "--min-line", "60", "--baseline"])
        .arg(dir.path().join("baseline"))
        .arg("--out")
        .arg(&out)
        .arg("--root")
        .arg(dir.path())
        .arg(&dat)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL: line coverage 50.00 % is below 60 %"),
        "{text}"
    );
    assert!(
        text.contains("FAIL: cover point RULE_X (m) was hit before and is not now"),
        "{text}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(j["m"]["line"], serde_json::json!(50.0));
    assert_eq!(
        j["total"]["rules"],
        serde_json::json!({"hit": 0, "total": 1})
    );
    let info = std::fs::read_to_string(out.join("coverage.info")).unwrap();
    assert!(info.contains("SF:rtl/m.sv\nDA:3,3\nDA:4,0\n"), "{info}");
    let unc = std::fs::read_to_string(out.join("uncovered.txt")).unwrap();
    assert!(unc.contains("rtl/m.sv:4 line block (m)"), "{unc}");
    // At thresholds it meets, with no baseline, it passes.
    let o = vl15()
        .args(["coverage", "--min-line", "50", "--out"])
        .arg(&out)
        .arg("--root")
        .arg(dir.path())
        .arg(&dat)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );

    // Waivers: line 4 and RULE_X, each with its reason. They leave the
    // percentages and are listed apart; the baseline still wants RULE_X hit.
    let rtl = dir.path().join("rtl");
    std::fs::create_dir_all(&rtl).unwrap();
    let src: String = (1..=9).map(|i| format!("  stmt{i};\n")).collect();
    std::fs::write(rtl.join("m.sv"), src).unwrap();
    let waivers = dir.path().join("waivers");
    std::fs::write(
        &waivers,
        "# reasons\nrtl/m.sv:4 | stmt4; | no test drives stmt4\ncover m RULE_X | unreachable here\nrtl/m.sv:8 | stmt8; | nothing there\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        vl15()
            .args(["coverage", "--min-line", "100", "--out"])
            .arg(&out)
            .arg("--root")
            .arg(dir.path())
            .args(extra)
            .arg(&dat)
            .output()
            .unwrap()
    };
    let o = run(&["--waivers", waivers.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("waived (not in the percentages above): 1 line, 0 branch, 0 FSM and 1 rule points; without waivers line 50.0 %"),
        "{text}"
    );
    assert!(
        text.contains("waived:  RULE_X (m): unreachable here"),
        "{text}"
    );
    assert!(text.contains(":4 waives nothing"), "{text}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(j["m"]["line"], serde_json::json!(100.0));
    assert_eq!(j["total"]["waived"]["line"], serde_json::json!(1));
    assert_eq!(j["total"]["waived"]["rules"], serde_json::json!(1));
    let unc = std::fs::read_to_string(out.join("uncovered.txt")).unwrap();
    let (open, waived) = unc.split_once("# waived").unwrap();
    assert!(!open.contains("rtl/m.sv:4"), "{unc}");
    assert!(
        waived.contains("rtl/m.sv:4 line block (m): no test drives stmt4 ("),
        "{unc}"
    );
    let info = std::fs::read_to_string(out.join("coverage.info")).unwrap();
    assert!(!info.contains("DA:4,"), "{info}");
    let o = run(&[
        "--waivers",
        waivers.to_str().unwrap(),
        "--baseline",
        dir.path().join("baseline").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    // A waiver whose line no longer reads its text stops the report.
    std::fs::write(&waivers, "rtl/m.sv:5 | stmt4; | moved\n").unwrap();
    let o = run(&["--waivers", waivers.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            ":1: rtl/m.sv:5 reads \"stmt5;\", not \"stmt4;\": the file changed, move the waiver"
        ),
        "{err}"
    );
}

const VERBS: [&str; 10] = [
    "regress", "replay", "decode", "discover", "serve", "sim", "fattree", "soak", "fuzz", "bench",
];

/// The help says what is: no source files, no issue numbers; the top help
/// gives the exit codes.
#[test]
fn help_points_at_docs_not_sources() {
    let o = vl15().arg("--help").output().unwrap();
    assert!(o.status.success());
    let top = String::from_utf8_lossy(&o.stdout);
    assert!(
        top.contains("Exit status: 0 success; 1 a run that failed its check"),
        "{top}"
    );
    assert!(top.contains("2 bad input or usage"), "{top}");
    let issue = names_an_issue;
    for v in VERBS {
        let o = vl15().args([v, "--help"]).output().unwrap();
        assert!(o.status.success(), "{v}");
        let h = String::from_utf8_lossy(&o.stdout);
        for bad in ["tb/src", ".rs", "refmodel", "18446744073709551615", "issue"] {
            assert!(!h.contains(bad), "vl15 {v} --help has {bad:?}:\n{h}");
        }
        assert!(!issue(&h), "vl15 {v} --help names an issue:\n{h}");
    }
    let o = vl15().args(["fuzz", "--help"]).output().unwrap();
    let h = String::from_utf8_lossy(&o.stdout);
    assert!(h.contains("default: no limit"), "{h}");
}

/// `#` followed by a digit: an issue or pull-request number.
fn names_an_issue(text: &str) -> bool {
    text.as_bytes()
        .windows(2)
        .any(|w| w[0] == b'#' && w[1].is_ascii_digit())
}

/// `soak --list`: the names `--class` takes, each with its meaning.
#[test]
fn soak_list_prints_the_names_a_user_types() {
    let o = vl15().args(["soak", "--list"]).output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let mut n = 0;
    for l in text.lines().skip(1) {
        let (name, meaning) = l.split_once(' ').unwrap();
        assert!(
            vl15::check::faults::FaultClass::from_name(name).is_some(),
            "{l}"
        );
        assert!(
            meaning.trim().len() > 10 && !meaning.contains("Rx(") && !meaning.contains("Episode"),
            "{l}"
        );
        n += 1;
    }
    assert_eq!(n, vl15::check::faults::FaultClass::ALL.len(), "{text}");
    // One class from the list runs.
    let o = vl15()
        .args(["soak", "--width", "64", "--class", "bad_vcrc"])
        .args(["--packets", "50", "--checkpoint", "50"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let o = vl15()
        .args(["soak", "--device", "switch", "--list"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("good_lid_smp ") && l.contains("good: a LID-routed SMP")),
        "{text}"
    );
}

/// `sim --scenario` honours `--dump-state` (the state after the last
/// event) and `--verbose` (every SM's log).
#[test]
fn scenario_writes_the_state_dump_and_the_sm_log() {
    let dir = tempfile::tempdir().unwrap();
    let topo = repo("tests/topologies/net.2sw2path4hca");
    let sc = dir.path().join("s.toml");
    std::fs::write(&sc, format!("topology = {topo:?}\n")).unwrap();
    let dump = dir.path().join("S.json");
    let o = vl15()
        .args(["sim", "--scenario"])
        .arg(&sc)
        .arg("--dump-state")
        .arg(&dump)
        .arg("--verbose")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("sm Hca1: ") && l.contains("Master")),
        "{err}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    assert_eq!(v["nodes"].as_array().unwrap().len(), 6);
}

/// `serve` prints an LD_PRELOAD that ld.so can load: the library's full
/// path as found on this machine (Debian's libumad2sim0, `make deps`).
#[test]
fn serve_hint_gives_a_preload_path_that_loads() {
    let sock = format!("vl15-hint-{}", std::process::id());
    let mut child = vl15()
        .args(["serve", "--topology"])
        .arg(repo("tests/topologies/net.2sw2path4hca"))
        .args(["--sockname", &sock])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        use std::io::BufRead;
        let stderr = child.stderr.take().unwrap();
        let _ = std::io::BufReader::new(stderr).read_line(&mut first);
    }
    let _ = child.kill();
    let _ = child.wait();
    let lib = first
        .split_whitespace()
        .find_map(|w| w.strip_prefix("LD_PRELOAD="))
        .unwrap_or_else(|| panic!("no LD_PRELOAD in {first:?}"));
    assert!(
        Path::new(lib).is_absolute() && Path::new(lib).is_file(),
        "{first}"
    );
    let o = Command::new("/bin/echo")
        .arg("ok")
        .env("LD_PRELOAD", lib)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("cannot be preloaded"), "{lib}: {err}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "ok\n");
}
