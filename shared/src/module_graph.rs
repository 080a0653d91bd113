//! Test support: the graph of a crate's top-level modules, as its code
//! names them through `crate::`, and a cycle in it if there is one. The
//! server's and the client's tests hold "no module cycle" with it.
//!
//! It reads the crate's source files, so it is compiled only for tests
//! (the `test-support` feature), never into the pure library.

#![allow(
    clippy::disallowed_methods,
    reason = "test support (the test-support feature, never in a release build): it reads the crates' own sources"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module and the top-level modules it names; the crate
/// root (`lib.rs`, `main.rs`) is `crate`.
pub type ModuleGraph = BTreeMap<String, BTreeSet<String>>;

/// The graph of the crate whose sources are under `source` (its `src`).
/// A `crate::Name` starting with a capital names an item of the root,
/// unless `root_reexports` says which module it comes from (`("Config",
/// "config")`: the root re-exports `config::Config`). Comments are not
/// code: a `crate::` after `//` is no edge.
///
/// # Panics
/// If a file under `source` cannot be read: this is test support, and a
/// test that cannot read its own crate's sources should fail loudly.
pub fn module_graph(source: &Path, root_reexports: &[(&str, &str)]) -> ModuleGraph {
    let mut graph = ModuleGraph::new();
    let mut files: Vec<PathBuf> = vec![source.to_path_buf()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            let entries = std::fs::read_dir(&path).expect("the source directory reads");
            files.extend(entries.map(|entry| entry.expect("a directory entry").path()));
            continue;
        }
        if path.extension().is_none_or(|extension| extension != "rs") {
            continue;
        }
        let relative = path.strip_prefix(source).expect("a file under the source");
        let top = relative
            .components()
            .next()
            .and_then(|first| first.as_os_str().to_str())
            .map(|first| first.trim_end_matches(".rs").to_string())
            .expect("a file name");
        let module = if top == "lib" || top == "main" {
            "crate".to_string()
        } else {
            top
        };
        let text = std::fs::read_to_string(&path).expect("a source file reads");
        let edges = graph.entry(module.clone()).or_default();
        edges.extend(
            named_modules(&text, root_reexports)
                .into_iter()
                .filter(|target| *target != module),
        );
    }
    graph
}

/// The top-level modules `text` names through `crate::`.
fn named_modules(text: &str, root_reexports: &[(&str, &str)]) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        for (at, _) in code.match_indices("crate::") {
            let name: String = code[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let target = match root_reexports.iter().find(|(item, _)| *item == name) {
                Some((_, module)) => (*module).to_string(),
                None if name.starts_with(char::is_uppercase) => "crate".to_string(),
                None => name,
            };
            if !target.is_empty() {
                named.insert(target);
            }
        }
    }
    named
}

/// A cycle in `graph`, as the modules along it (the first again at the
/// end), if it has one (depth first).
pub fn cycle(graph: &ModuleGraph) -> Option<Vec<String>> {
    fn visit(
        graph: &ModuleGraph,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|seen| seen == node) {
            let mut found = path[start..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(graph, next, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(graph, node, &mut Vec::new(), &mut done))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> ModuleGraph {
        let mut graph = ModuleGraph::new();
        for (from, to) in edges {
            graph
                .entry((*from).to_string())
                .or_default()
                .insert((*to).to_string());
        }
        graph
    }

    fn check_cycle(edges: &[(&str, &str)], expected: Option<&[&str]>) {
        let found = cycle(&graph(edges));
        let expected = expected.map(|path| path.iter().map(|name| name.to_string()).collect());
        assert_eq!(found, expected, "{edges:?}");
    }

    #[test]
    fn cycles_are_found_and_a_layered_graph_has_none() {
        check_cycle(&[], None);
        check_cycle(&[("a", "b"), ("b", "c"), ("a", "c")], None);
        check_cycle(&[("a", "b"), ("b", "a")], Some(&["a", "b", "a"]));
        check_cycle(
            &[("a", "b"), ("b", "c"), ("c", "d"), ("d", "b")],
            Some(&["b", "c", "d", "b"]),
        );
    }

    #[test]
    fn names_in_code_are_edges_and_names_in_comments_are_not() {
        let text = "use crate::net::Connection;\n\
                    // crate::daily is only mentioned\n\
                    let x = crate::Config::default(); // crate::live\n\
                    crate::Other::new();\n";
        let named = named_modules(text, &[("Config", "config")]);
        let expected: BTreeSet<String> = ["net", "config", "crate"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(named, expected);
    }
}
