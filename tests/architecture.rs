//! docs/ARCHITECTURE.md is the truth about how the modules depend on each other and who owns
//! which table, and this test holds the code to it:
//! - "Who uses whom": each top-level module of `src/` names (`crate::…`) exactly the modules its
//!   row lists, so a new dependency is a line of the document, said and explained, not an
//!   accident;
//! - "Who writes each table": every Postgres table of `migrations/` has one module that writes it
//!   (`INSERT INTO`, `UPDATE`, `DELETE FROM`), and no other module does.
//!
//! Unit tests (`#[cfg(test)] mod tests`) are left out: they may reach anywhere to set a scene.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.as_ref().display()))
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// Each top-level module's production code, comments removed: `src/x.rs` and `src/x/**` are `x`.
fn modules() -> BTreeMap<String, String> {
    let src = Path::new(ROOT).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut modules: BTreeMap<String, String> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let module = first.to_string_lossy().trim_end_matches(".rs").to_string();
        if relative.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = read(&file);
        let production = match text.find("#[cfg(test)]\nmod tests") {
            Some(at) => &text[..at],
            None => &text[..],
        };
        let code: String = production
            .lines()
            .map(|line| match line.find("//") {
                Some(at) => &line[..at],
                None => line,
            })
            .collect::<Vec<_>>()
            .join("\n");
        modules.entry(module).or_default().push_str(&code);
    }
    modules
}

fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The top-level modules `code` names through `crate::` (or `videoapp::`, in the binary),
/// grouped imports (`crate::{a, b::c}`) included.
fn uses(code: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for prefix in ["crate::", "videoapp::"] {
        for (at, _) in code.match_indices(prefix) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &code[at + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let (mut depth, mut item_start) = (0, true);
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => item_start = true,
                        c if item_start && !c.is_whitespace() => {
                            used.insert(identifier(&group[i..]).to_string());
                            item_start = false;
                        }
                        _ => {}
                    }
                }
            } else {
                used.insert(identifier(rest).to_string());
            }
        }
    }
    used.retain(|m| !m.is_empty() && m != "self" && m != "super");
    used
}

/// The table under `heading` in docs/ARCHITECTURE.md: each backquoted name of a row's first
/// cell, with the backquoted names of its second.
fn table(heading: &str) -> BTreeMap<String, BTreeSet<String>> {
    let doc = read(Path::new(ROOT).join("docs/ARCHITECTURE.md"));
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("docs/ARCHITECTURE.md has no section {heading:?}"));
    let names = |cell: &str| -> BTreeSet<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .flat_map(|row| {
            let cells: Vec<&str> = row.split('|').collect();
            let second = names(cells[2]);
            names(cells[1])
                .into_iter()
                .map(move |first| (first, second.clone()))
        })
        .collect()
}

#[test]
fn each_module_uses_exactly_the_modules_its_row_allows() {
    let allowed = table("### Who uses whom");
    let mut problems = Vec::new();
    for (module, code) in modules() {
        let mut used = uses(&code);
        used.remove(&module);
        let Some(listed) = allowed.get(&module) else {
            problems.push(format!("`{module}` has no row"));
            continue;
        };
        for extra in used.difference(listed) {
            problems.push(format!(
                "`{module}` uses `{extra}`, which its row does not list: add it, saying why, \
                 or use what `{module}` may use"
            ));
        }
        for unused in listed.difference(&used) {
            problems.push(format!(
                "`{module}`'s row lists `{unused}`, which it no longer uses: remove it"
            ));
        }
    }
    for module in allowed.keys() {
        if !modules().contains_key(module) {
            problems.push(format!("the row of `{module}` names no module of src/"));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/ARCHITECTURE.md, \"Who uses whom\":\n{}",
        problems.join("\n")
    );
}

/// The tables the migrations create.
fn postgres_tables() -> BTreeSet<String> {
    let mut tables = BTreeSet::new();
    for entry in std::fs::read_dir(Path::new(ROOT).join("migrations")).unwrap() {
        let text = read(entry.unwrap().path());
        for (at, _) in text.match_indices("CREATE TABLE ") {
            let rest = text[at + "CREATE TABLE ".len()..].trim_start_matches("IF NOT EXISTS ");
            tables.insert(identifier(rest).to_string());
        }
    }
    tables
}

#[test]
fn each_table_is_written_by_its_owner_alone() {
    let tables = postgres_tables();
    let owners = table("### Who writes each table");
    let mut problems = Vec::new();
    for table in &tables {
        match owners.get(table).map(|o| o.len()) {
            Some(1) => {}
            _ => problems.push(format!("`{table}` needs a row naming its one owner")),
        }
    }
    for (module, code) in modules() {
        for verb in ["INSERT INTO ", "UPDATE ", "DELETE FROM "] {
            for (at, _) in code.match_indices(verb) {
                let table = identifier(code[at + verb.len()..].trim_start());
                if !tables.contains(table) {
                    continue;
                }
                if !owners.get(table).is_some_and(|o| o.contains(&module)) {
                    problems.push(format!(
                        "`{module}` writes `{table}` ({verb}…), which its owner should do"
                    ));
                }
            }
        }
    }
    problems.dedup();
    assert!(
        problems.is_empty(),
        "docs/ARCHITECTURE.md, \"Who writes each table\":\n{}",
        problems.join("\n")
    );
}

#[test]
fn grouped_and_nested_uses_are_read() {
    let code =
        "use crate::{a, b::{c, d}, e::f};\nlet x = crate::g::h(); videoapp::i::j; notcrate::k;";
    let expected: BTreeSet<String> = ["a", "b", "e", "g", "i"].map(String::from).into();
    assert_eq!(uses(code), expected);
}
