//! `vl15 routes`: a state file's LFTs as ibroute prints them and paths as
//! ibtracert prints them.
//!
//! - Against the real tools: the real `opensm -o` (LMC 0 and 2) brings
//!   net.2sw2path4hca up on `vl15 serve`; the test dumps the RTL's state and
//!   `vl15 routes` must print byte for byte what the real `ibroute` (with and
//!   without `-a`) and `ibtracert` print when they read the same LFTs
//!   through the RTL with SMPs.
//! - Against the JSON: on a `vl15 sim --lmc 2` dump, every switch's listing
//!   and every path between two LIDs match what a walk of the JSON written
//!   here (serde_json values, not the library's types) says, in the layout
//!   of infiniband-diags' ibroute.c and ibtracert.c.
//! - Failures: a missing file, a file that is not JSON or not a state file,
//!   a switch the file does not have (exit 2); a LID no port has, an LFT
//!   entry of 255, a port with no cable, a CA port not Active, a loop (exit
//!   1); each one line on stderr.
//!
//! The first needs ibsim-utils, libumad2sim0, infiniband-diags and opensm
//! (`make deps`).

mod common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{json, Value};
use vl15::agents::serve::{Background, ServeOptions};
use vl15::agents::simrun::dump_state;
use vl15::proto::topology::NodeKind;

fn vl15() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vl15"))
}

/// `vl15 routes ARGS`: (exit status, stdout, stderr).
fn routes(state: &Path, args: &[&str]) -> (i32, String, String) {
    let o = vl15().arg("routes").arg(state).args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

/// An infiniband-diags `tool` at Hca1 of server `sockname`, under
/// `timeout 20`; its stdout.
fn diag(sockname: &str, tool: &str, args: &[&str]) -> String {
    run_tool(diag_command(sockname, "Hca1", tool, args))
}

/// OpenSM routes the RTL fabric; `vl15 routes` on the RTL's dumped state
/// prints what ibroute and ibtracert print reading the same RTL registers
/// with SMPs.
#[test]
fn routes_print_what_the_real_ibroute_and_ibtracert_print() {
    for lmc in [0u8, 2] {
        let server = Background::start(&topo("net.2sw2path4hca"), ServeOptions::default())
            .unwrap_or_else(|e| panic!("{e:#}"));
        let sock = server.sockname.clone();
        let lmc_arg = lmc.to_string();
        opensm_once(&sock, "Hca1", &["-l", &lmc_arg]);
        let dump = server
            .prober
            .run(|net| dump_state(net).map_err(|e| format!("{e:#}")))
            .unwrap()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        std::fs::write(&state, serde_json::to_string_pretty(&dump).unwrap()).unwrap();

        let mut lids = Vec::new();
        for n in &dump.nodes {
            for p in n.ports.iter().filter(|p| p.lid.is_some_and(|l| l != 0)) {
                let base = p.lid.unwrap();
                lids.push(base);
                if n.kind == NodeKind::Switch {
                    let l = base.to_string();
                    for all in [false, true] {
                        let mut theirs: Vec<&str> = vec![&l];
                        let mut ours = vec!["--switch", n.id.as_str()];
                        if all {
                            theirs.insert(0, "-a");
                            ours.push("--all");
                        }
                        let want = diag(&sock, "ibroute", &theirs);
                        let (code, got, err) = routes(&state, &ours);
                        assert_eq!(code, 0, "{err}");
                        assert_eq!(got, want, "LMC {lmc}: ibroute {theirs:?}");
                    }
                }
            }
        }
        assert_eq!(lids.len(), 6, "two switches and four CAs have LIDs");
        // Every pair of base LIDs; with LMC 2 also the other LIDs of a CA.
        let mut pairs: Vec<(u16, u16)> = lids
            .iter()
            .flat_map(|&a| lids.iter().map(move |&b| (a, b)))
            .filter(|(a, b)| a != b)
            .collect();
        if lmc > 0 {
            let ca = dump.nodes.iter().find(|n| n.id == "Hca4").unwrap();
            let base = ca.ports[0].lid.unwrap();
            pairs.extend((1..4).map(|k| (lids[0], base + k)));
        }
        for (a, b) in pairs {
            let (a, b) = (a.to_string(), b.to_string());
            let want = diag(&sock, "ibtracert", &[&a, &b]);
            let (code, got, err) = routes(&state, &["--path", &a, &b]);
            assert_eq!(code, 0, "{err}");
            assert_eq!(got, want, "LMC {lmc}: ibtracert {a} {b}");
        }
        server.stop().unwrap();
    }
}

/// A `vl15 sim --lmc 2` dump of net.2sw2path4hca, made once for the tests
/// of this file.
fn sim_state() -> &'static Path {
    static STATE: OnceLock<PathBuf> = OnceLock::new();
    STATE.get_or_init(|| {
        let p = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("routes-sim-lmc2-{}.json", std::process::id()));
        let o = vl15()
            .args(["sim", "--lmc", "2", "--topology"])
            .arg(topo("net.2sw2path4hca"))
            .arg("--dump-state")
            .arg(&p)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        p
    })
}

fn load(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn guid(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// (node, port object) whose LID range holds `lid`.
fn owner(v: &Value, lid: u64) -> Option<(&Value, &Value)> {
    v["nodes"].as_array().unwrap().iter().find_map(|n| {
        n["ports"].as_array().unwrap().iter().find_map(|p| {
            let base = p["lid"].as_u64().filter(|&b| b != 0)?;
            let span = 1 << p["lmc"].as_u64().unwrap();
            (lid >= base && lid < base + span).then_some((n, p))
        })
    })
}

/// The node and port at the far end of `port`'s cable.
fn far_end<'a>(v: &'a Value, port: &Value) -> (&'a Value, &'a Value) {
    let nb = &port["neighbour"];
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|n| {
            let p = n["ports"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["guid"] == nb["guid"] && p["port"] == nb["port"])?;
            Some((n, p))
        })
        .unwrap_or_else(|| panic!("no far end of {port}"))
}

/// ibtracert's "lid B-L": a switch shows port 0's.
fn lid_range(n: &Value, p: &Value) -> String {
    let p = if n["type"] == "switch" {
        &n["ports"][0]
    } else {
        p
    };
    let base = p["lid"].as_u64().unwrap();
    format!("{base}-{}", base + (1 << p["lmc"].as_u64().unwrap()) - 1)
}

/// The path from `src` to `dst` by the JSON's LFTs and cables, in
/// ibtracert.c's format strings (dump_endnode, dump_route).
fn walk(v: &Value, src: u64, dst: u64) -> String {
    let (sn, sp) = owner(v, src).unwrap();
    let (tn, _) = owner(v, dst).unwrap();
    let endline = |prompt: &str, n: &Value, p: &Value| {
        let portnum = if n["type"] == "switch" {
            0
        } else {
            p["port"].as_u64().unwrap()
        };
        format!(
            "{prompt} {} {{{:#018x}}} portnum {portnum} lid {} \"{}\"\n",
            n["type"].as_str().unwrap(),
            guid(&n["guid"]),
            lid_range(n, p),
            n["description"].as_str().unwrap()
        )
    };
    let mut s = endline("From", sn, sp);
    let (mut n, mut p) = (sn, sp);
    for _ in 0..64 {
        let arrived = if tn["type"] == "switch" {
            n["guid"] == tn["guid"]
        } else {
            p["guid"] == owner(v, dst).unwrap().1["guid"]
        };
        if arrived {
            return s + &endline("To", n, p);
        }
        let out = if n["type"] == "switch" {
            n["lft"][dst as usize].as_u64().unwrap()
        } else {
            p["port"].as_u64().unwrap()
        };
        let port = n["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["port"] == out)
            .unwrap();
        let (nn, np) = far_end(v, port);
        // A switch answers NodeInfo with port 0's GUID.
        let shown = if nn["type"] == "switch" {
            &nn["ports"][0]["guid"]
        } else {
            &np["guid"]
        };
        s += &format!(
            "[{out}] -> {} port {{{:#018x}}}[{}] lid {} \"{}\"\n",
            nn["type"].as_str().unwrap(),
            guid(shown),
            np["port"],
            lid_range(nn, np),
            nn["description"].as_str().unwrap()
        );
        (n, p) = (nn, np);
    }
    panic!("{src} to {dst}: no end after 64 hops");
}

/// Every path between two LIDs (base LIDs and the other LIDs of LMC 2) of
/// a `vl15 sim` dump is the walk of its JSON.
#[test]
fn paths_follow_the_lfts_and_cables_of_the_dump() {
    let state = sim_state();
    let v = load(state);
    let mut lids = Vec::new();
    for n in v["nodes"].as_array().unwrap() {
        for p in n["ports"].as_array().unwrap() {
            if let Some(base) = p["lid"].as_u64().filter(|&b| b != 0) {
                lids.extend(base..base + (1 << p["lmc"].as_u64().unwrap()));
            }
        }
    }
    // Switch port 0 has LMC 0; each CA port 4 LIDs.
    assert_eq!(lids.len(), 2 + 4 * 4);
    for &a in &lids {
        for &b in &lids {
            let (code, got, err) = routes(state, &["--path", &a.to_string(), &b.to_string()]);
            assert_eq!(code, 0, "{a} to {b}: {err}");
            assert_eq!(got, walk(&v, a, b), "{a} to {b}");
        }
    }
}

/// Every switch's listing is its LFT, line by line in ibroute.c's format
/// (dump_unicast_tables, dump_lid): each valid entry with the port its LID
/// belongs to, the LIDs after an LMC port's base as "path #k out of 4".
#[test]
fn listings_are_the_lfts_of_the_dump() {
    let state = sim_state();
    let v = load(state);
    let (code, every, err) = routes(state, &[]);
    assert_eq!(code, 0, "{err}");
    let mut concatenated = String::new();
    for n in v["nodes"].as_array().unwrap() {
        if n["type"] != "switch" {
            continue;
        }
        let id = n["id"].as_str().unwrap();
        let nports = n["ports"].as_array().unwrap().len() as u64 - 1;
        let top = n["linear_fdb_top"].as_u64().unwrap();
        let mut want = vec![
            format!(
                "Unicast lids [0x0-{top:#x}] of switch Lid {} guid {:#018x} ({}):",
                n["ports"][0]["lid"],
                guid(&n["guid"]),
                n["description"].as_str().unwrap()
            ),
            "  Lid  Out   Destination".to_string(),
            "       Port     Info ".to_string(),
        ];
        let lft = n["lft"].as_array().unwrap();
        assert_eq!(lft.len() as u64, top + 1);
        for (lid, e) in lft.iter().enumerate() {
            let e = e.as_u64().unwrap();
            if e > nports {
                continue;
            }
            let (dn, dp) = owner(&v, lid as u64).unwrap_or_else(|| panic!("{id}: LID {lid}"));
            let base = dp["lid"].as_u64().unwrap();
            let pg = if dn["type"] == "switch" {
                guid(&dn["ports"][0]["guid"])
            } else {
                guid(&dp["guid"])
            };
            let info = if lid as u64 == base {
                let ty = if dn["type"] == "switch" {
                    "Switch"
                } else {
                    "Channel Adapter"
                };
                format!(
                    "({ty} portguid {pg:#018x}: '{}')",
                    dn["description"].as_str().unwrap()
                )
            } else {
                format!(
                    "(path #{} out of 4: portguid {pg:#018x})",
                    lid as u64 - base + 1
                )
            };
            want.push(format!("{lid:#06x} {e:03} : {info}"));
        }
        want.push(format!("{} valid lids dumped ", want.len() - 3));
        let want = want.join("\n") + "\n";
        let (code, got, err) = routes(state, &["--switch", id]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(got, want, "{id}");
        // By description too.
        let desc = n["description"].as_str().unwrap();
        assert_eq!(routes(state, &["--switch", desc]).1, want);
        concatenated += &want;
    }
    assert_eq!(every, concatenated, "every switch, in file order");
}

/// Two switches joined on port 3, CA A (LID 1) on switch 1 port 1, CA B
/// (LID 2) on switch 2 port 1, switch LIDs 3 and 4: every LID routed.
fn two_switches() -> Value {
    let port = |port: u8, guid: &str, lid: Option<u16>, nb: Option<(&str, u8)>| {
        json!({
            "port": port, "guid": guid, "lid": lid, "lmc": lid.map(|_| 0),
            "master_sm_lid": lid.map(|_| 1), "state": "Active",
            "neighbour": nb.map(|(g, p)| json!({"guid": g, "port": p})),
        })
    };
    let (s1, s2) = ("0x0000000000000010", "0x0000000000000020");
    let (a, b) = ("0x0000000000000001", "0x0000000000000002");
    let switch = |id: &str, g: &str, lid: u16, ca: (&str, u8), other: &str, lft: [u8; 5]| {
        json!({
            "id": id, "guid": g, "description": id, "type": "switch",
            "ports": [
                port(0, g, Some(lid), None),
                port(1, g, None, Some(ca)),
                port(2, g, None, None),
                port(3, g, None, Some((other, 3))),
            ],
            "linear_fdb_top": 4, "lft": lft,
        })
    };
    let ca = |id: &str, g: &str, lid: u16, sw: &str| {
        json!({
            "id": id, "guid": g, "description": format!("{id} HCA"), "type": "ca",
            "ports": [port(1, g, Some(lid), Some((sw, 1)))],
            "linear_fdb_top": null, "lft": null,
        })
    };
    json!({"nodes": [
        switch("S1", s1, 3, (a, 1), s2, [255, 1, 3, 0, 3]),
        switch("S2", s2, 4, (b, 1), s1, [255, 3, 1, 3, 0]),
        ca("A", a, 1, s1),
        ca("B", b, 2, s2),
    ]})
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    p
}

/// Exit status `code` and one line on stderr, "vl15: " and `what`.
fn fails(r: (i32, String, String), code: i32, what: &str) {
    let (c, out, err) = r;
    assert_eq!(c, code, "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("vl15: ") && err.contains(what), "{err}");
}

/// A hand-written state file: the path in ibtracert's layout; each failure
/// with its exit status and one line.
#[test]
fn a_path_through_two_switches_and_the_ways_one_fails() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", &two_switches());
    let (code, out, err) = routes(&good, &["--path", "1", "0x2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "From ca {0x0000000000000001} portnum 1 lid 1-1 \"A HCA\"\n\
         [1] -> switch port {0x0000000000000010}[1] lid 3-3 \"S1\"\n\
         [3] -> switch port {0x0000000000000020}[3] lid 4-4 \"S2\"\n\
         [1] -> ca port {0x0000000000000002}[1] lid 2-2 \"B HCA\"\n\
         To ca {0x0000000000000002} portnum 1 lid 2-2 \"B HCA\"\n"
    );
    let (code, out, _) = routes(&good, &["--path", "3", "4"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "From switch {0x0000000000000010} portnum 0 lid 3-3 \"S1\"\n\
         [3] -> switch port {0x0000000000000020}[3] lid 4-4 \"S2\"\n\
         To switch {0x0000000000000020} portnum 0 lid 4-4 \"S2\"\n"
    );

    // Bad input: exit 2.
    fails(routes(&dir.path().join("none.json"), &[]), 2, "none.json");
    let text = dir.path().join("text.json");
    std::fs::write(&text, "Unicast lids\n").unwrap();
    fails(routes(&text, &[]), 2, "not a state file");
    let shape = write(dir.path(), "shape.json", &json!({"nodes": 3}));
    fails(routes(&shape, &[]), 2, "not a state file");
    let mut v = two_switches();
    v["nodes"][0]["ports"][1]["state"] = json!("Up");
    let state = write(dir.path(), "state.json", &v);
    fails(routes(&state, &[]), 2, "PortState \"Up\"");
    let mut v = two_switches();
    v["nodes"][2]["ports"][0]["neighbour"]["port"] = json!(2);
    let one_sided = write(dir.path(), "one_sided.json", &v);
    fails(routes(&one_sided, &[]), 2, "names it back");
    let mut v = two_switches();
    v["nodes"][0]["lft"] = json!([255, 1]);
    let short = write(dir.path(), "short.json", &v);
    fails(routes(&short, &[]), 2, "linear_fdb_top 4");
    fails(routes(&good, &["--switch", "S9"]), 2, "\"S9\"");
    fails(routes(&good, &["--switch", "A"]), 2, "not a switch");
    let o = vl15()
        .arg("routes")
        .arg(&good)
        .args(["--path", "1", "x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "a LID that is no number: usage");

    // Paths that fail: exit 1.
    fails(routes(&good, &["--path", "1", "9"]), 1, "LID 9");
    fails(routes(&good, &["--path", "9", "1"]), 1, "LID 9");
    let mut v = two_switches();
    v["nodes"][1]["lft"][2] = json!(255);
    let hole = write(dir.path(), "hole.json", &v);
    fails(
        routes(&hole, &["--path", "1", "2"]),
        1,
        "LFT entry for LID 2 is 255",
    );
    let mut v = two_switches();
    v["nodes"][0]["lft"][2] = json!(2);
    let dark = write(dir.path(), "dark.json", &v);
    fails(
        routes(&dark, &["--path", "1", "2"]),
        1,
        "port 2 of \"S1\" has no cable",
    );
    let mut v = two_switches();
    v["nodes"][1]["lft"][2] = json!(3);
    let lp = write(dir.path(), "loop.json", &v);
    fails(routes(&lp, &["--path", "1", "2"]), 1, "routing loop");
    let mut v = two_switches();
    v["nodes"][3]["ports"][0]["state"] = json!("Armed");
    let armed = write(dir.path(), "armed.json", &v);
    fails(
        routes(&armed, &["--path", "1", "2"]),
        1,
        "is Armed, not Active",
    );
    // From switch S1 to B, sent into CA A instead.
    let mut v = two_switches();
    v["nodes"][0]["lft"][2] = json!(1);
    let astray = write(dir.path(), "astray.json", &v);
    fails(routes(&astray, &["--path", "3", "2"]), 1, "into CA \"A\"");
    // From A to B, sent back into A: a loop through S1.
    fails(routes(&astray, &["--path", "1", "2"]), 1, "routing loop");
}
