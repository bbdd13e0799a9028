//! The `vl15` command line: replay, decode, sim and their errors; shell
//! completions and the man page.

use std::process::Command;

use vl15::check::scenario::vectors;
use vl15::proto::pcap::{read_pcap, write_pcap, LinkType, PcapRecord};

fn vl15() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vl15"))
}

fn vectors_pcap() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/ibvec.pcap").to_string()
}

/// ibvec.pcap holds V1..V4. A CA configured as in V2 answers V1 with exactly
/// V2 (ibspec §3.3) and hands the two GMPs (V3, V4) to the data RX port.
#[test]
fn replay_vectors_answers_v1_with_v2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.pcap");
    for w in ["32", "64", "128"] {
        let o = vl15()
            .args(["replay", &vectors_pcap(), "-o"])
            .arg(&out)
            .args(["--width", w])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let cap = read_pcap(&out).unwrap();
        assert_eq!(cap.link_type, LinkType::Infiniband);
        assert_eq!(cap.records.len(), 1, "{stdout}");
        assert_eq!(cap.records[0].data, vectors::V2);
        assert!(stdout.contains("rx_data_pkts     2"), "{stdout}");
        assert!(stdout.contains("smi_to_sma       1"), "{stdout}");
    }
}

/// --lid/--lmc: LID-routed Gets to LID and LID+1 are answered, LID+2 is not.
#[test]
fn replay_lid_and_lmc() {
    use vl15::proto::mad;
    use vl15::proto::packet::{consts::*, Packet};
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("in.pcap");
    let out = dir.path().join("out.pcap");
    let recs: Vec<PcapRecord> = [0x20u16, 0x21, 0x22]
        .iter()
        .enumerate()
        .map(|(i, dlid)| {
            let m = mad::request(
                CLASS_SUBN_LID,
                METHOD_GET,
                ATTR_NODE_INFO,
                0,
                0x100 + i as u64,
            );
            PcapRecord {
                cycle: i as u64,
                data: Packet::smp_bytes(VL15, 0, *dlid, 1, i as u32, m),
                ..Default::default()
            }
        })
        .collect();
    write_pcap(&inp, LinkType::User0, &recs).unwrap();
    let o = vl15()
        .arg("replay")
        .arg(&inp)
        .arg("-o")
        .arg(&out)
        .args(["--lid", "32", "--lmc", "1", "--linktype", "user0"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    let cap = read_pcap(&out).unwrap();
    assert_eq!(cap.link_type, LinkType::User0);
    let slids: Vec<u16> = cap
        .records
        .iter()
        .map(|r| Packet::parse(&r.data).unwrap().lrh.slid)
        .collect();
    assert_eq!(slids, [0x20, 0x21]);
    assert!(stdout.contains("smi_lid_err      1"), "{stdout}");
}

#[test]
fn replay_rejects_a_file_that_is_not_pcap() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pcap");
    std::fs::write(&bad, b"this is not a pcap file at all").unwrap();
    let o = vl15()
        .arg("replay")
        .arg(&bad)
        .arg("-o")
        .arg(dir.path().join("o.pcap"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.pcap"), "{err}");
    assert!(!dir.path().join("o.pcap").exists());
}

#[test]
fn replay_rejects_a_truncated_pcap() {
    let dir = tempfile::tempdir().unwrap();
    let full = std::fs::read(vectors_pcap()).unwrap();
    let cut = dir.path().join("cut.pcap");
    std::fs::write(&cut, &full[..full.len() - 100]).unwrap();
    let o = vl15()
        .arg("replay")
        .arg(&cut)
        .arg("-o")
        .arg(dir.path().join("o.pcap"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn decode_prints_one_line_per_packet() {
    let o = vl15().args(["decode", &vectors_pcap()]).output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].contains("NodeInfo"), "{}", lines[0]);
}

#[test]
fn decode_of_a_missing_file_fails_cleanly() {
    let o = vl15()
        .args(["decode", "/nonexistent/x.pcap"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("x.pcap"));
}

fn example(name: &str) -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/topologies/").to_string() + name
}

/// `vl15 sim` brings a fabric up, prints the summary and writes a JSON dump
/// of what the RTL holds.
#[test]
fn sim_brings_a_fabric_up_and_dumps_the_rtl_state() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("state.json");
    let o = vl15()
        .args([
            "sim",
            "--topology",
            &example("net.2sw2path4hca"),
            "--dump-state",
        ])
        .arg(&dump)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("nodes 6 (2 switches, 4 CAs); ports Active 12 of 12 linked; LIDs 6"),
        "{stdout}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 6);
    for n in nodes {
        assert!(n["type"] == "switch" || n["type"] == "ca", "{n}");
        for p in n["ports"].as_array().unwrap() {
            if !p["neighbour"].is_null() {
                // PortState by its IBA name (PortInfo, IBA 14.2.5.6).
                assert_eq!(p["state"], "Active", "{n}");
            }
        }
    }
}

/// `--width` picks the data path of every device in the fabric: the same
/// bring-up (the same SMPs) at 64 and 128 bits, in fewer cycles at 128 (an
/// SMP is 19 beats instead of 37); a width the models are not built at is
/// a usage error.
#[test]
fn sim_runs_the_fabric_at_either_width() {
    let field = |text: &str, key: &str| -> u64 {
        let at = text
            .find(key)
            .unwrap_or_else(|| panic!("no {key:?} in {text}"));
        text[at + key.len()..]
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{key:?} in {text}"))
    };
    let mut runs = Vec::new();
    for w in ["64", "128"] {
        let o = vl15()
            .args([
                "sim",
                "--topology",
                &example("net.2sw2path4hca"),
                "--width",
                w,
            ])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(o.status.success(), "--width {w}: {out}");
        assert!(
            out.contains("ports Active 12 of 12 linked"),
            "--width {w}: {out}"
        );
        runs.push((field(&out, "SMPs "), field(&out, "simulated cycles ")));
    }
    assert_eq!(runs[0].0, runs[1].0, "the same SMPs at both widths");
    assert!(runs[1].1 < runs[0].1, "cycles at 64 and 128: {runs:?}");
    let o = vl15()
        .args([
            "sim",
            "--topology",
            &example("net.2sw2path4hca"),
            "--width",
            "32",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("built at DataW 64 and 128"), "{err}");
}

#[test]
fn sim_errors_are_clear() {
    let cases: [(&[&str], &str); 3] = [
        (&["--lmc", "9"], "'--lmc <LMC>': 9 is not in 0..=7"),
        (&["--sm", "nosuch"], "no node \"nosuch\""),
        (&["--sm", "Switch1"], "the SM runs on a CA port"),
    ];
    for (args, want) in cases {
        let o = vl15()
            .args(["sim", "--topology", &example("net.2sw2path4hca")])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let o = vl15()
        .args(["sim", "--topology", "/nonexistent/topo"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/topo"));
}

/// A scenario file: a cable between the switches goes down and comes back.
/// Each edge makes both switches send Trap 128 once (repressed, so not
/// repeated): 4 traps; the fabric ends with every cabled port Active.
#[test]
fn sim_runs_a_scenario_file() {
    let sc = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/scenarios/link_flap.toml"
    );
    let o = vl15().args(["sim", "--scenario", sc]).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let end = stdout.lines().find(|l| l.starts_with("end")).unwrap();
    assert!(end.contains("ports Active 12 of 12 linked"), "{stdout}");
    let sm = stdout.lines().find(|l| l.contains("SM Hca1")).unwrap();
    assert!(sm.contains("Master"), "{stdout}");
    assert!(sm.contains("traps 4,"), "{stdout}");
}

#[test]
fn bad_scenario_files_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let topo = example("net.2sw2path4hca");
    let cases = [
        (
            format!("topology = {topo:?}\nbogus = 1\n"),
            "unknown field `bogus`",
        ),
        (
            format!("topology = {topo:?}\n[[sm]]\nnode = \"Hca1\"\n[[sm]]\nnode = \"Hca1\"\n"),
            "an SM runs there already",
        ),
        (
            format!("topology = {topo:?}\n[[sm]]\nnode = \"Hca1\"\npriority = 16\n"),
            "priority 16 > 15",
        ),
        (
            format!("topology = {topo:?}\n[[event]]\nafter = 5\n"),
            "exactly one of console, kill_sm, start_sm",
        ),
        (
            format!("topology = {topo:?}\n[[event]]\nafter = 5\nconsole = 'Unlink \"Switch1\"[5]'\npriority = 2\n"),
            "port and priority belong to start_sm",
        ),
        (
            format!("topology = {topo:?}\n[[event]]\nafter = 5\nkill_sm = \"Hca3\"\n"),
            "no SM on \"Hca3\"",
        ),
        (
            format!(
                "topology = {topo:?}\n[[event]]\nafter = 5\nconsole = 'Unlink \"nosuch\"[1]'\n"
            ),
            "no node",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("s{i}.toml"));
        std::fs::write(&f, text).unwrap();
        let o = vl15().args(["sim", "--scenario"]).arg(&f).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{text}");
        assert!(err.contains(want), "{text}: {err}");
    }
}

/// `vl15 fuzz` stops at its time bound and prints the seed and the cases of
/// each target; a case seed replays one case; an unknown target is an error
/// that lists the targets.
#[test]
fn fuzz_is_time_bounded_and_prints_cases_and_seed() {
    let t0 = std::time::Instant::now();
    let o = vl15()
        .args(["fuzz", "--target", "decode", "--target", "ibsim"])
        .args(["--seconds", "1", "--seed", "0x2a"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        t0.elapsed()
    );
    assert!(out.contains("seed 0x000000000000002a"), "{out}");
    for t in ["decode", "ibsim"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("fuzz {t} ")))
            .unwrap_or_else(|| panic!("no line for {t}: {out}"));
        let cases: u64 = line
            .split(": ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        assert!(cases > 0 && line.ends_with("0 failures"), "{line}");
    }
    let o = vl15()
        .args(["fuzz", "--target", "decode", "--case-seed", "0x1234"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("case 0x1234 of decode passes"));
    let o = vl15().args(["fuzz", "--target", "nope"]).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("serve, all"));
}

/// `vl15 soak --device switch --ports N` soaks an N-port switch; a count
/// outside 8..=64, or --ports with the CA, is a usage error.
#[test]
fn soak_switch_at_a_port_count() {
    let o = vl15()
        .args([
            "soak", "--device", "switch", "--ports", "36", "--width", "128",
        ])
        // seed 1 reaches all 36 ports in 400 packets (port 36 is the one
        // written Down: few packets go in on it)
        .args(["--packets", "400", "--checkpoint", "100", "--seed", "1"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("switch soak 36 ports DATA_W 128 seed 1"),
        "{out}"
    );
    assert!(out.contains(" 0 mismatches"), "{out}");
    assert!(out.contains("packets in on 36 of 36 ports"), "{out}");
    for bad in ["7", "65", "x"] {
        let o = vl15()
            .args([
                "soak",
                "--device",
                "switch",
                "--ports",
                bad,
                "--packets",
                "1",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--ports {bad}: {err}");
        assert!(err.contains("--ports"), "{err}");
    }
    let o = vl15()
        .args(["soak", "--device", "ca", "--ports", "36", "--packets", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("the CA has one port"), "{err}");
    let o = vl15().args(["soak", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(help.contains("--ports <N>"), "{help}");
}

/// `vl15 soak --device ca-mp` soaks each port of the multiport CA in turn
/// at the widths it is built at; ports and widths it does not have are
/// refused.
#[test]
fn soak_multiport_ca_each_port() {
    let o = vl15()
        .args(["soak", "--device", "ca-mp", "--width", "64"])
        .args(["--packets", "300", "--checkpoint", "100", "--seed", "4"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for p in [1, 2] {
        let head = format!("soak ca-mp port {p} of 2 DATA_W 64 seed 4: 300 packets");
        assert!(out.contains(&head), "{out}");
    }
    assert_eq!(out.matches(" 0 mismatches").count(), 2, "{out}");
    for bad in [
        &["--ports", "3"][..],
        &["--port", "3"],
        &["--ports", "1", "--port", "2"],
        &["--port", "0"],
    ] {
        let o = vl15()
            .args(["soak", "--device", "ca-mp", "--packets", "1"])
            .args(bad)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert!(err.contains("--port"), "{err}");
    }
    let o = vl15()
        .args([
            "soak",
            "--device",
            "ca-mp",
            "--width",
            "32",
            "--packets",
            "1",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--width 32: ca-mp port 1 of 2 is built at DATA_W [64, 128]"),
        "{err}"
    );
}

/// `sim --ca-top` runs the one-port CAs as ib_ca_top: the same bring-up,
/// the same SMPs, the same simulated cycles as ib_ca_mp_top with one port.
#[test]
fn sim_runs_one_port_cas_as_ib_ca_top() {
    let run = |extra: &[&str]| {
        let o = vl15()
            .args(["sim", "--topology", &example("net.2sw2path4hca")])
            .args(extra)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(o.status.success(), "{extra:?}: {out}");
        // Everything but the wall-clock times.
        out.lines()
            .map(|l| l.split("; wall:").next().unwrap_or(l).to_string())
            .collect::<Vec<_>>()
    };
    let mp = run(&[]);
    let top = run(&["--ca-top"]);
    assert!(
        mp.iter()
            .any(|l| l.contains("ports Active 12 of 12 linked")),
        "{mp:?}"
    );
    assert_eq!(mp, top);
    let o = vl15().args(["sim", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("--ca-top"));
}

/// `regress --ca-mp` runs the spine regression on port 1 of a one-port
/// ib_ca_mp_top, at the widths it is built at.
#[test]
fn regress_on_the_multiport_ca() {
    let o = vl15().args(["regress", "--ca-mp"]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let n = vl15::check::scenario::SCENARIOS.len();
    assert!(
        out.contains(&format!("{} passed, 0 failed", 2 * n)),
        "{out}"
    );
    assert!(
        !out.lines()
            .any(|l| l.split_whitespace().nth(1) == Some("32")),
        "{out}"
    );
    let o = vl15()
        .args(["regress", "--ca-mp", "--width", "32"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--width 32"), "{err}");
}

/// The verbs `vl15 --help` lists under "Commands:" (without `help`).
fn verbs() -> Vec<String> {
    let o = vl15().arg("--help").output().unwrap();
    assert!(o.status.success());
    let help = String::from_utf8(o.stdout).unwrap();
    let verbs: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|v| *v != "help")
        .map(String::from)
        .collect();
    for v in [
        "regress", "replay", "decode", "discover", "serve", "sim", "routes",
    ] {
        assert!(verbs.iter().any(|x| x == v), "{v} in\n{help}");
    }
    verbs
}

/// The bash completion offers every verb after `vl15`, and each verb's
/// own options (routes: --switch, --path).
#[test]
fn bash_completion_names_every_verb() {
    let o = vl15().args(["completions", "bash"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    // The words completed after `vl15`: the line `opts="..."` of the case
    // for the command itself.
    let top = text
        .split("vl15)")
        .nth(1)
        .and_then(|t| t.lines().find(|l| l.trim_start().starts_with("opts=")))
        .unwrap_or_else(|| panic!("no opts for vl15 in\n{text}"));
    let words: Vec<&str> = top
        .trim()
        .trim_start_matches("opts=\"")
        .trim_end_matches('"')
        .split_whitespace()
        .collect();
    for v in verbs() {
        assert!(
            words.contains(&v.as_str()),
            "{v} completes after vl15: {top}"
        );
    }
    assert!(
        text.contains("--switch") && text.contains("--path"),
        "routes' options"
    );
    for shell in ["zsh", "fish"] {
        let o = vl15().args(["completions", shell]).output().unwrap();
        let t = String::from_utf8(o.stdout).unwrap();
        assert!(o.status.success() && t.contains("routes"), "{shell}");
    }
    let o = vl15().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

/// `vl15 man` is roff with a NAME section naming vl15 and a SUBCOMMANDS
/// section naming every verb's page; `--out-dir` writes those pages, each
/// with its NAME section.
#[test]
fn man_page_has_a_name_section_and_every_verb() {
    let o = vl15().arg("man").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = String::from_utf8(o.stdout).unwrap();
    // roff writes '-' as '\-'.
    let name_of = |page: &str| -> String {
        let after = page
            .split("\n.SH NAME\n")
            .nth(1)
            .unwrap_or_else(|| panic!("no NAME section:\n{page}"));
        after.lines().next().unwrap().replace("\\-", "-")
    };
    assert!(page.contains("\n.TH vl15 1 "), "{page}");
    assert!(name_of(&page).starts_with("vl15 - "), "{page}");
    let subcommands: String = page
        .split("\n.SH SUBCOMMANDS\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no SUBCOMMANDS section:\n{page}"))
        .split("\n.SH ")
        .next()
        .unwrap()
        .replace("\\-", "-");
    let dir = tempfile::tempdir().unwrap();
    let o = vl15()
        .args(["man", "--out-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("vl15.1")).unwrap(),
        page
    );
    for v in verbs() {
        assert!(
            subcommands.lines().any(|l| l == format!("vl15-{v}(1)")),
            "vl15-{v}(1) in SUBCOMMANDS:\n{subcommands}"
        );
        let file = dir.path().join(format!("vl15-{v}.1"));
        let sub =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            name_of(&sub).starts_with(&format!("vl15-{v} - ")),
            "{}",
            file.display()
        );
    }
}
