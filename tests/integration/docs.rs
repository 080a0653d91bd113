//! The documents a user or an operator reads: README.md, ARCHITECTURE.md,
//! CHANGELOG.md, docs/*.md, deploy/README.md and the Markdown under
//! tests/load.
//!
//! They state today's facts, so they must not carry the project's working
//! history: no issue numbers (`issue 14`, `#14`), no branch names (`h-bfs`),
//! no paths of a build machine (`/work/…`, `/home/…`, `/root/…`) and no
//! "this session" talk. And every relative link in them must lead to a file
//! of the repository. Each check lists every offending line, so that one run
//! shows all that is left to fix.

use std::fmt;
use std::path::{Path, PathBuf};

/// One line of one document that breaks a rule.
struct Finding {
    file: String,
    line_number: usize,
    rule: &'static str,
    excerpt: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{}:{}: {}: {}",
            self.file, self.line_number, self.rule, self.excerpt
        )
    }
}

/// The repository's root: the parent of this package's directory.
fn repository_root() -> PathBuf {
    let tests_package = Path::new(env!("CARGO_MANIFEST_DIR"));
    tests_package
        .parent()
        .expect("the tests package lives inside the repository")
        .to_path_buf()
}

/// Every document the checks cover, relative to the repository's root.
fn documents() -> Vec<PathBuf> {
    let root = repository_root();
    let mut documents: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "CHANGELOG.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let docs_dir = root.join("docs");
    let mut in_docs: Vec<PathBuf> = std::fs::read_dir(&docs_dir)
        .expect("docs/ is readable")
        .map(|entry| entry.expect("docs/ lists its entries").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .map(|path| {
            path.strip_prefix(&root)
                .expect("docs/ is under the root")
                .to_path_buf()
        })
        .collect();
    in_docs.sort();
    documents.extend(in_docs);
    documents.push(PathBuf::from("deploy/README.md"));
    documents.extend(markdown_under(&root, Path::new("tests/load")));
    documents
}

/// Every Markdown file below `folder` (relative to `root`), sorted; the
/// packages npm installs (`node_modules`) are not ours to check.
fn markdown_under(root: &Path, folder: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(root.join(&folder))
            .unwrap_or_else(|error| panic!("{} is readable: {error}", folder.display()));
        for entry in entries {
            let entry = entry.expect("a folder lists its entries");
            let path = folder.join(entry.file_name());
            let is_folder = entry.file_type().is_ok_and(|kind| kind.is_dir());
            if is_folder && entry.file_name() != "node_modules" {
                folders.push(path);
            } else if !is_folder && path.extension().is_some_and(|extension| extension == "md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// `#14`, standing alone: not `#9s` (a card in the notation) nor `&#39;`.
fn has_hash_number(line: &str) -> bool {
    let bytes = line.as_bytes();
    bytes.iter().enumerate().any(|(index, &byte)| {
        if byte != b'#' {
            return false;
        }
        let before_ok = index == 0 || !(is_word_byte(bytes[index - 1]) || bytes[index - 1] == b'&');
        let digits = bytes[index + 1..]
            .iter()
            .take_while(|byte| byte.is_ascii_digit())
            .count();
        let after = index + 1 + digits;
        before_ok && digits > 0 && (after == bytes.len() || !is_word_byte(bytes[after]))
    })
}

/// `issue 12`, `Issue #14`, `issues 12 and 13`.
fn has_issue_number(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    lower.match_indices("issue").any(|(index, _)| {
        let before_ok = index == 0 || !is_word_byte(lower.as_bytes()[index - 1]);
        let rest = lower[index + "issue".len()..].trim_start_matches('s');
        let rest = rest.strip_prefix(' ').unwrap_or("");
        let rest = rest.strip_prefix('#').unwrap_or(rest);
        before_ok && rest.starts_with(|character: char| character.is_ascii_digit())
    })
}

/// A helper's branch name: `h-` and a lowercase word starting a word, as
/// `h-bfs` or `h-bot6`.
fn branch_name(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    line.match_indices("h-").find_map(|(index, _)| {
        let before_ok = index == 0 || !(is_word_byte(bytes[index - 1]) || bytes[index - 1] == b'-');
        let name_length = bytes[index + 2..]
            .iter()
            .take_while(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit())
            .count();
        let end = index + 2 + name_length;
        let after_ok = end == bytes.len() || !(is_word_byte(bytes[end]) || bytes[end] == b'-');
        (before_ok && name_length > 0 && after_ok).then(|| &line[index..end])
    })
}

/// A path of a build machine.
fn machine_path(line: &str) -> Option<&'static str> {
    ["/work/", "/home/", "/root/"]
        .into_iter()
        .find(|path| line.contains(path))
}

/// "session" used for a stretch of the project's own work, as in "this
/// session". A protocol's or a database's session ("the session
/// terminated") is a fact of today and allowed.
fn session_as_history(line: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    [
        "this", "next", "previous", "last", "earlier", "later", "these", "those", "another",
    ]
    .iter()
    .flat_map(|word| [format!("{word} session "), format!("{word} sessions")])
    .chain(
        [
            "this session.",
            "this session,",
            "this session)",
            "this session;",
        ]
        .map(String::from),
    )
    .find(|phrase| {
        lower
            .match_indices(phrase.as_str())
            .any(|(index, _)| index == 0 || !is_word_byte(lower.as_bytes()[index - 1]))
            || lower.ends_with(phrase.trim_end())
    })
}

/// Every relative link target of a Markdown line: `[text](target)`, with
/// any `#anchor` and title left off; web and mail links and same-page
/// anchors are not files.
fn relative_link_targets(line: &str) -> Vec<&str> {
    line.match_indices("](")
        .filter_map(|(index, _)| {
            let rest = &line[index + 2..];
            let target = &rest[..rest.find(')')?];
            let target = target.split_whitespace().next().unwrap_or("");
            let target = target.split('#').next().unwrap_or("");
            let is_external = target.contains("://") || target.starts_with("mailto:");
            (!target.is_empty() && !is_external).then_some(target)
        })
        .collect()
}

/// Runs every check over every document and returns what broke.
fn findings() -> Vec<Finding> {
    let root = repository_root();
    let mut findings = Vec::new();
    for document in documents() {
        let path = root.join(&document);
        let file = document.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) => {
                findings.push(Finding {
                    file,
                    line_number: 0,
                    rule: "cannot be read",
                    excerpt: error.to_string(),
                });
                continue;
            }
        };
        let directory = path.parent().unwrap_or(&root).to_path_buf();
        for (line_index, line) in text.lines().enumerate() {
            let mut found = |rule: &'static str, excerpt: &str| {
                findings.push(Finding {
                    file: file.clone(),
                    line_number: line_index + 1,
                    rule,
                    excerpt: excerpt.to_string(),
                })
            };
            if has_hash_number(line) || has_issue_number(line) {
                found("names an issue number", line.trim());
            }
            if let Some(name) = branch_name(line) {
                found("names a branch", name);
            }
            if let Some(machine) = machine_path(line) {
                found("names a path of a build machine", machine);
            }
            if let Some(phrase) = session_as_history(line) {
                found("tells the work's history (session)", phrase.trim());
            }
            for target in relative_link_targets(line) {
                if !directory.join(target).exists() {
                    found("links to a file that does not exist", target);
                }
            }
        }
    }
    findings
}

#[test]
fn the_documents_state_facts_and_their_links_resolve() {
    let findings = findings();
    assert!(
        findings.is_empty(),
        "{} lines of the documents break a rule of tests/integration/docs.rs:\n{}",
        findings.len(),
        findings
            .iter()
            .map(Finding::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Each rule on lines it must catch and lines it must let through, so that
/// a rule that matches nothing cannot pass unnoticed.
#[test]
fn each_rule_catches_what_it_names_and_nothing_else() {
    let issue_lines = [
        "Issue 12, third pass",
        "## Issue #14: a row's fillers",
        "as before (issue #13)",
        "see #14 above",
        "issues 12 and 13",
    ];
    for line in issue_lines {
        assert!(
            has_hash_number(line) || has_issue_number(line),
            "missed: {line}"
        );
    }
    let allowed_lines = [
        "8: #Kh #9s #2s 3d 4h",
        "an `&#39;` entity",
        "# Heading",
        "the issue of timing",
        "tissue 3",
    ];
    for line in allowed_lines {
        assert!(
            !(has_hash_number(line) || has_issue_number(line)),
            "flagged: {line}"
        );
    }

    assert_eq!(branch_name("(branch h-bfs below)"), Some("h-bfs"));
    assert_eq!(branch_name("`h-bot6`"), Some("h-bot6"));
    assert_eq!(branch_name("a high-water mark, each-h-x"), None);
    assert_eq!(branch_name("--bot-level h-"), None);

    assert_eq!(machine_path("cd /work/main && make"), Some("/work/"));
    assert_eq!(machine_path("/var/lib/patience"), None);

    assert!(session_as_history("measured in this session.").is_some());
    assert!(session_as_history("left for the next session").is_some());
    assert!(session_as_history("these sessions showed").is_some());
    assert!(session_as_history("the PostgreSQL session terminated").is_none());

    assert_eq!(
        relative_link_targets("[a](docs/GUIDE.md#keys) and [b](https://x.org) [c](#top)"),
        vec!["docs/GUIDE.md"]
    );
}
