//! The server's modules import one another one way: no cycle among the files of `src/` (a
//! module and its own children excepted, as `table` and `table/seat.rs`). An action's path then
//! reads in one direction (see the top of `src/lib.rs`), and a new import that closes a cycle
//! fails here, naming it.
//!
//! Imports are read from the code as text: `crate::a::b` and `super::x` paths outside comments
//! and outside the `#[cfg(test)]` module at a file's end.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on an unreadable source tree"
)]
#![allow(missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module (`table::seat`; the crate root is ``) and the source of its file.
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let name = rel.to_string_lossy().replace('/', "::");
            let name = match name.as_str() {
                "lib" => String::new(),
                n => n.strip_suffix("::mod").unwrap_or(n).to_string(),
            };
            out.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    out
}

/// The code of a file without comments and without its test module.
fn code(source: &str) -> String {
    let body = source.split("#[cfg(test)]").next().unwrap_or_default();
    body.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The longest module of `known` that `path` (`a::b::Item`) names, if any.
fn resolve(path: &[&str], known: &BTreeMap<String, String>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| known.contains_key(m))
}

/// The paths a file names after `prefix` (`crate::` or `super::`), including those inside a
/// `use crate::{a, b::c}` group.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for part in inner.split(',') {
                let part: Vec<String> = part
                    .trim()
                    .split("::")
                    .map(|s| s.trim().to_string())
                    .collect();
                out.push(part);
            }
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        out.push(rest[..end].split("::").map(str::to_string).collect());
    }
    out
}

/// Every file's imports of other modules, by the module each names.
fn imports(known: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges = BTreeMap::new();
    for (module, source) in known {
        let code = code(source);
        let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
        let mut to = BTreeSet::new();
        let mut add = |path: Vec<String>, base: &str| {
            let mut full: Vec<&str> = base.split("::").filter(|s| !s.is_empty()).collect();
            full.extend(path.iter().map(String::as_str));
            if let Some(target) = resolve(&full, known)
                && target != *module
                && !target.is_empty()
            {
                to.insert(target);
            }
        };
        for path in paths_after(&code, "crate::") {
            add(path, "");
        }
        for path in paths_after(&code, "super::") {
            add(path, parent);
        }
        edges.insert(module.clone(), to);
    }
    edges
}

/// The graph among the children of `parent` (`""`: the crate's top-level modules): a file
/// anywhere inside child `a` that imports anything inside child `b` is an edge `a -> b`.
/// Imports of `parent` itself or of what lies outside it are not edges here.
fn among_children(
    parent: &str,
    edges: &BTreeMap<String, BTreeSet<String>>,
) -> BTreeMap<String, BTreeSet<String>> {
    let child = |m: &str| -> Option<String> {
        let rest = match parent {
            "" => m,
            p => m.strip_prefix(p)?.strip_prefix("::")?,
        };
        let first = rest.split("::").next().filter(|f| !f.is_empty())?;
        Some(match parent {
            "" => first.to_string(),
            p => format!("{p}::{first}"),
        })
    };
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, tos) in edges {
        let Some(a) = child(from) else { continue };
        let entry = out.entry(a.clone()).or_default();
        for to in tos {
            if let Some(b) = child(to)
                && b != a
            {
                entry.insert(b);
            }
        }
    }
    out
}

/// A cycle through the import graph, if there is one, as the modules along it.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(m.to_string(), Mark::Open);
        path.push(m.to_string());
        for next in edges.get(m).into_iter().flatten() {
            match marks.get(next).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let start = path.iter().position(|p| p == next).unwrap_or(0);
                    let mut cycle = path[start..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(c) = visit(next, edges, marks, path) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        path.pop();
        marks.insert(m.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for m in edges.keys() {
        if marks.get(m).copied().unwrap_or(Mark::New) == Mark::New
            && let Some(c) = visit(m, edges, &mut marks, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_server_modules_import_one_another_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let known = modules(&src);
    assert!(
        known.contains_key("table::handle") && known.contains_key("play"),
        "the module map is read: {:?}",
        known.keys().collect::<Vec<_>>()
    );
    let edges = imports(&known);
    assert!(
        edges["play"].contains("registry") && edges["registry"].contains("table"),
        "imports are read: {edges:?}"
    );
    // The top-level modules (a module's children count as the module), then the children of
    // every module that has some, among themselves.
    let parents: BTreeSet<&str> = known
        .keys()
        .filter_map(|m| m.rsplit_once("::").map(|(p, _)| p))
        .chain([""])
        .collect();
    for parent in parents {
        if let Some(cycle) = find_cycle(&among_children(parent, &edges)) {
            panic!("an import cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn a_cycle_is_found() {
    let known: BTreeMap<String, String> = [
        ("", ""),
        ("a", "use crate::b::Thing;"),
        ("b", "use crate::{c, x::Y};"),
        ("c", "fn f() { crate::a::g() }"),
        ("x", "// crate::a::h is only a comment\n"),
        ("t", "mod s;"),
        ("t::s", "use super::Table;"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    let edges = imports(&known);
    let top = among_children("", &edges);
    assert_eq!(find_cycle(&top).map(|c| c.len()), Some(4), "{top:?}");
    assert!(edges["x"].is_empty(), "comments are not imports");
    let within_t = among_children("t", &edges);
    assert_eq!(find_cycle(&within_t), None, "a child may import its parent");
}

#[test]
fn a_cycle_through_a_child_is_found() {
    let known: BTreeMap<String, String> = [
        ("", ""),
        ("p", "use crate::t::Table;"),
        ("t", "mod s; mod u; use s::X;"),
        ("t::s", "use super::u::Y;"),
        ("t::u", "use super::s::Z; use crate::p::bearer;"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    let edges = imports(&known);
    let top = among_children("", &edges);
    assert!(
        find_cycle(&top).is_some(),
        "t (through t::u) -> p -> t: {top:?}"
    );
    let within_t = among_children("t", &edges);
    assert!(
        find_cycle(&within_t).is_some(),
        "t::s <-> t::u: {within_t:?}"
    );
}
