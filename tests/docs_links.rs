//! Every relative link in the documentation leads somewhere: a link in a Markdown file of the
//! repository (README.md, docs/, the clients', examples' and Python packages' READMEs, and any
//! other `.md` outside build output, installed packages and hidden folders) names a file or
//! folder that exists, and a `#anchor` names a heading of the target (or of the same file) by
//! GitHub's rules: the heading's text in lower case, inline markup dropped, every character but
//! letters, digits, spaces, `-` and `_` removed, spaces turned into `-`, and `-1`, `-2`... after
//! repeats.
//!
//! Links inside code (fenced blocks, `inline code`) are text, not links, and are not checked;
//! web addresses (`https://...`) are not followed.
#![allow(missing_docs)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository's root (this package's folder).
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every Markdown file of the repository, skipping build output, installed packages and hidden
/// folders (virtual environments, `.git`).
fn documents() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let skipped = name.starts_with('.')
                    || ["target", "node_modules", "__pycache__", "dist"].contains(&&*name);
                if !skipped {
                    walk(&path, found);
                }
            } else if name.ends_with(".md") {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(Path::new(ROOT), &mut found);
    found.sort();
    found
}

/// The lines of a Markdown text outside fenced code blocks, with their numbers (from 1).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<(char, usize)> = None;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |m| trimmed.chars().take_while(|c| *c == m).count());
        match (fence, marker) {
            (None, Some(m)) if run >= 3 => fence = Some((m, run)),
            (Some((m, open)), Some(c))
                if c == m && run >= open && trimmed[run..].trim().is_empty() =>
            {
                fence = None
            }
            (None, _) => lines.push((index + 1, line)),
            (Some(_), _) => {}
        }
    }
    lines
}

/// A line without its code spans (`` `code` ``, ``` `` co`de `` ```), whose content is text.
fn without_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|c| **c == '`').count();
        // The closing run: the next run of exactly as many backticks.
        let mut j = i + run;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let other = chars[j..].iter().take_while(|c| **c == '`').count();
                if other == run {
                    close = Some(j + other);
                    break;
                }
                j += other;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                out.push(' ');
                i = end;
            }
            None => {
                // An unmatched run is literal text.
                out.extend(&chars[i..i + run]);
                i += run;
            }
        }
    }
    out
}

/// The destinations of the inline links and images (`[text](dest)`, `![alt](dest "title")`) and
/// reference definitions (`[label]: dest`) of a Markdown text, with their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in prose_lines(text) {
        let line = without_code_spans(line);
        let trimmed = line.trim_start();
        if trimmed.starts_with('[')
            && let Some(end) = trimmed.find("]:")
            && !trimmed[..end].contains("](")
        {
            if let Some(dest) = trimmed[end + 2..].split_whitespace().next() {
                found.push((number, dest.trim_matches(['<', '>']).to_string()));
            }
            continue;
        }
        let mut rest = line.as_str();
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let dest = if let Some(angled) = after.strip_prefix('<') {
                angled.split('>').next().unwrap_or_default()
            } else {
                // Up to the closing parenthesis (balanced) or a title.
                let mut depth = 0usize;
                let mut end = after.len();
                for (k, c) in after.char_indices() {
                    match c {
                        '(' => depth += 1,
                        ')' if depth == 0 => {
                            end = k;
                            break;
                        }
                        ')' => depth -= 1,
                        ' ' => {
                            end = k;
                            break;
                        }
                        _ => {}
                    }
                }
                &after[..end]
            };
            found.push((number, dest.to_string()));
            rest = after;
        }
    }
    found
}

/// GitHub's anchor for a heading's text.
fn slug(heading: &str) -> String {
    // Inline markup first: a link or image shows its text, an HTML tag nothing.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(start) = rest.find('[') {
        let close = rest[start..].find("](").map(|k| start + k);
        let end = close.and_then(|c| rest[c..].find(')').map(|k| c + k));
        match (close, end) {
            (Some(close), Some(end)) => {
                text.push_str(rest[..start].trim_end_matches('!'));
                text.push_str(&rest[start + 1..close]);
                rest = &rest[end + 1..];
            }
            _ => break,
        }
    }
    text.push_str(rest);
    let mut plain = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => plain.push(c),
            _ => {}
        }
    }
    plain
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors a Markdown text has: one per heading (ATX `# ...` and setext, repeats numbered as
/// GitHub numbers them), and any HTML `id="..."` or `name="..."`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut headings = Vec::new();
    let mut previous: Option<&str> = None;
    for (_, line) in prose_lines(text) {
        let trimmed = line.trim();
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        let is_atx = (1..=6).contains(&hashes)
            && line.len() - line.trim_start().len() <= 3
            && trimmed[hashes..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace);
        if is_atx {
            let title = trimmed[hashes..].trim().trim_end_matches('#').trim();
            headings.push(title.to_string());
        } else if !trimmed.is_empty()
            && (trimmed.chars().all(|c| c == '=') || trimmed.chars().all(|c| c == '-'))
            && let Some(title) = previous.map(str::trim).filter(|p| {
                !p.is_empty() && !p.starts_with(['|', '#', '-', '*', '>']) && !p.contains("](")
            })
        {
            headings.push(title.to_string());
        }
        previous = Some(line);
        for attribute in ["id=\"", "name=\""] {
            let mut rest = line;
            while let Some(start) = rest.find(attribute) {
                let value = &rest[start + attribute.len()..];
                let end = value.find('"').unwrap_or(value.len());
                // An explicit anchor, kept as written (marked so it is not slugged).
                headings.push(format!("\u{0}{}", &value[..end]));
                rest = &value[end..];
            }
        }
    }
    let mut seen = BTreeSet::new();
    for heading in headings {
        if let Some(explicit) = heading.strip_prefix('\u{0}') {
            seen.insert(explicit.to_string());
            continue;
        }
        let base = slug(&heading);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// A link's destination with `%XX` escapes decoded.
fn decoded(dest: &str) -> String {
    let bytes = dest.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What is wrong with each relative link of `doc` (empty when every one resolves).
fn broken_links(doc: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(doc).unwrap_or_default();
    let name = doc.strip_prefix(ROOT).unwrap_or(doc).display().to_string();
    let mut broken = Vec::new();
    for (line, dest) in links(&text) {
        if dest.is_empty() || dest.contains("://") || dest.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match dest.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor)),
            None => (dest.as_str(), None),
        };
        let target = if path.is_empty() {
            doc.to_path_buf()
        } else if let Some(from_root) = path.strip_prefix('/') {
            Path::new(ROOT).join(decoded(from_root))
        } else {
            doc.parent().unwrap_or(Path::new(ROOT)).join(decoded(path))
        };
        if !target.exists() {
            broken.push(format!("{name}:{line}: `{dest}`: no such file or folder"));
            continue;
        }
        let Some(anchor) = anchor else { continue };
        if target.extension().is_some_and(|e| e == "md") {
            let target_text = std::fs::read_to_string(&target).unwrap_or_default();
            if !anchors(&target_text).contains(&decoded(anchor)) {
                broken.push(format!(
                    "{name}:{line}: `{dest}`: no heading with that anchor"
                ));
            }
        } else {
            // Anchors into source files are GitHub's line anchors: `#L10`, `#L10-L20`.
            let line_anchor = |a: &str| {
                a.strip_prefix('L')
                    .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            };
            let valid = match anchor.split_once('-') {
                Some((from, to)) => line_anchor(from) && line_anchor(to),
                None => line_anchor(anchor),
            };
            if !valid {
                broken.push(format!(
                    "{name}:{line}: `{dest}`: an anchor into a file that has no headings"
                ));
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_in_the_documentation_resolves() {
    let documents = documents();
    let names: Vec<String> = documents
        .iter()
        .map(|d| d.strip_prefix(ROOT).unwrap_or(d).display().to_string())
        .collect();
    for expected in [
        "README.md",
        "docs/PROTOCOL.md",
        "clients/README.md",
        "python/README.md",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    let broken: Vec<String> = documents.iter().flat_map(|d| broken_links(d)).collect();
    assert!(
        broken.is_empty(),
        "{} broken links:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

/// docs/ENGINE.md's example is the engine crate's own doctest, so `cargo test` runs it as shown.
#[test]
fn the_engine_page_shows_the_engines_doctest() {
    let page = std::fs::read_to_string(Path::new(ROOT).join("docs/ENGINE.md")).unwrap_or_default();
    let example = page
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap_or_default();
    assert!(
        example.lines().count() > 5,
        "docs/ENGINE.md has a Rust example"
    );
    let doctest: String = example
        .lines()
        .map(|line| {
            if line.is_empty() {
                "//!\n".to_string()
            } else {
                format!("//! {line}\n")
            }
        })
        .collect();
    let lib =
        std::fs::read_to_string(Path::new(ROOT).join("engine/src/lib.rs")).unwrap_or_default();
    assert!(
        lib.contains(&format!("//! ```\n{doctest}//! ```\n")),
        "docs/ENGINE.md's example is not engine/src/lib.rs's doctest:\n{example}"
    );
}

#[test]
fn anchors_follow_githubs_rules() {
    let text = "# Mau Mau Arena\n\n## Checking a bot: `maumau check-bot`\n\n\
                ### 4.2 Rulings of our own\n\n## The ladder's throughput (`maumau-loadgen ladder`)\n\n\
                ## Set up\n\n## Set up\n\n```sh\n# not a heading\n```\n\n## A [link](x.md) — and_more\n\n\
                Setext\n======\n";
    let found = anchors(text);
    let expected = [
        "mau-mau-arena",
        "checking-a-bot-maumau-check-bot",
        "42-rulings-of-our-own",
        "the-ladders-throughput-maumau-loadgen-ladder",
        "set-up",
        "set-up-1",
        "a-link--and_more",
        "setext",
    ];
    assert_eq!(
        found,
        expected.iter().map(|a| a.to_string()).collect(),
        "{found:?}"
    );
}

#[test]
fn links_in_code_are_not_links() {
    let text = "See [the rules](docs/RULES.md#2-the-profiles) and `[not](a-link.md)`.\n\n\
                ```md\n[neither](code.md)\n```\n\n[ref]: <docs/PROTOCOL.md> \"title\"\n\
                ![a picture](img/a%20b.png \"title\")\n";
    let found: Vec<String> = links(text).into_iter().map(|(_, d)| d).collect();
    assert_eq!(
        found,
        [
            "docs/RULES.md#2-the-profiles",
            "docs/PROTOCOL.md",
            "img/a%20b.png"
        ]
    );
    assert_eq!(decoded("img/a%20b.png"), "img/a b.png");
}
