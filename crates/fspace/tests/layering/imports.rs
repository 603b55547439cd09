//! The import graph between the files of a crate's source tree, read
//! from the text: every `use` and every path in the code (`crate::`,
//! `super::`, `self::`, a child module's name, or a name brought in by a
//! `use`), resolved to the file that defines what it names, following
//! re-exports (`pub use`) and glob imports to the definition. A glob
//! import (`use super::*`) is an edge to the module it names: it takes
//! whatever that file defines. Declaring a module (`mod x;`) is not an
//! import. Paths that leave the crate (`std::`, `rustix::`) are no edge.
//!
//! The reader knows enough Rust for this crate's sources: comments,
//! strings (whose `crate::`/`super::`/`self::` paths are read, for
//! attributes like `serialize_with = "crate::units::ser_ms"`), raw
//! strings, character literals and lifetimes, inline modules, and
//! `#[path]` on a module declaration.

use std::collections::{BTreeMap, BTreeSet};

/// The files of a source tree: path relative to the tree's root (with `/`)
/// to its text. The crate root is `lib.rs` (`main.rs` for a binary).
pub type Tree = BTreeMap<String, String>;

/// One import: the line of `from` where it is, and the path as written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub line: usize,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
    /// `::`
    Sep,
    /// A string literal's contents.
    Str(String),
}

/// Tokens with their lines; comments, numbers, lifetimes and character
/// literals are dropped.
fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let b: Vec<char> = src.chars().collect();
    let mut out = vec![];
    let mut line = 1;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if c == '"' || ((c == 'r' || c == 'b') && raw_or_byte_string(&b, i)) {
            let start_line = line;
            let (text, next) = string(&b, i);
            line += text.matches('\n').count();
            out.push((Tok::Str(text), start_line));
            i = next;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if b.get(i + 1) == Some(&'\\') {
                // Past the escaped character, to the closing quote.
                i += 3;
                while i < b.len() && b[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            let word: String = b[start..i].iter().collect();
            // `r#type`: a raw identifier.
            let word = word.strip_prefix("r#").map(str::to_string).unwrap_or(word);
            out.push((Tok::Ident(word), line));
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_' || b[i] == '.') {
                if b[i] == '.' && !b.get(i + 1).is_some_and(char::is_ascii_digit) {
                    break;
                }
                i += 1;
            }
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            out.push((Tok::Sep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// Whether `b[i..]` starts a raw or byte string (`r"`, `r#"`, `b"`, `br"`)
/// rather than an identifier; `b'x'` is left to the character literal.
fn raw_or_byte_string(b: &[char], i: usize) -> bool {
    if i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_') {
        return false;
    }
    let mut j = i;
    if b[j] == 'b' {
        j += 1;
        if b.get(j) == Some(&'"') {
            return true;
        }
    }
    if b.get(j) != Some(&'r') {
        return false;
    }
    j += 1;
    while b.get(j) == Some(&'#') {
        j += 1;
    }
    b.get(j) == Some(&'"')
}

/// The contents of the string literal at `b[i..]` and the index after it.
fn string(b: &[char], mut i: usize) -> (String, usize) {
    let mut raw = false;
    while b[i] != '"' && b[i] != '#' {
        raw |= b[i] == 'r';
        i += 1;
    }
    let mut hashes = 0;
    while b[i] == '#' {
        hashes += 1;
        i += 1;
    }
    i += 1;
    let mut text = String::new();
    while i < b.len() {
        if !raw && b[i] == '\\' {
            text.push(b[i]);
            if let Some(&n) = b.get(i + 1) {
                text.push(n);
            }
            i += 2;
            continue;
        }
        if b[i] == '"' && (0..hashes).all(|k| b.get(i + 1 + k) == Some(&'#')) {
            return (text, i + 1 + hashes);
        }
        text.push(b[i]);
        i += 1;
    }
    (text, i)
}

/// A `use` binding: the name it brings in (`None` for a glob) and the
/// path it names, from the module it is written in.
#[derive(Debug, Clone)]
struct Use {
    name: Option<String>,
    path: Vec<String>,
    line: usize,
}

/// What a path names: a module, or an item of a module.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    Module(Vec<String>),
    Item(Vec<String>),
}

#[derive(Debug, Default)]
struct Module {
    file: String,
    /// Items defined here (functions, types, constants, traits, macros).
    items: BTreeSet<String>,
    children: BTreeMap<String, Vec<String>>,
    uses: Vec<Use>,
    /// Paths written in the code (not in a `use`), with their lines.
    paths: Vec<(Vec<String>, usize)>,
}

/// The crate's modules by path (`[]` is the root).
#[derive(Debug, Default)]
pub struct Crate {
    modules: BTreeMap<Vec<String>, Module>,
}

const ITEM_KEYWORDS: [&str; 8] = [
    "fn", "struct", "enum", "union", "const", "static", "type", "trait",
];

/// The file a `mod name;` in `file` refers to (`attr_path`: its `#[path]`).
fn child_file(tree: &Tree, file: &str, name: &str, attr_path: Option<&str>) -> Option<String> {
    let dir = match file.rfind('/') {
        Some(k) => &file[..k + 1],
        None => "",
    };
    let base = file.rsplit('/').next().unwrap_or(file);
    if let Some(p) = attr_path {
        return Some(format!("{dir}{p}"));
    }
    let sub = if base == "lib.rs" || base == "mod.rs" || base == "main.rs" {
        dir.to_string()
    } else {
        format!("{dir}{}/", base.trim_end_matches(".rs"))
    };
    [format!("{sub}{name}.rs"), format!("{sub}{name}/mod.rs")]
        .into_iter()
        .find(|f| tree.contains_key(f))
}

impl Crate {
    /// Reads the modules of `tree` from its root (`lib.rs`, or `main.rs`
    /// for a binary) down.
    pub fn read(tree: &Tree) -> Crate {
        let mut c = Crate::default();
        let root = if tree.contains_key("lib.rs") {
            "lib.rs"
        } else {
            "main.rs"
        };
        let mut todo = vec![(vec![], root.to_string())];
        while let Some((path, file)) = todo.pop() {
            let Some(src) = tree.get(&file) else {
                continue;
            };
            for (child, child_file) in c.read_file(tree, &file, src, path) {
                todo.push((child, child_file));
            }
        }
        c
    }

    /// Reads one file as module `base`; returns the file modules it declares.
    fn read_file(
        &mut self,
        tree: &Tree,
        file: &str,
        src: &str,
        base: Vec<String>,
    ) -> Vec<(Vec<String>, String)> {
        let toks = tokens(src);
        let mut declared = vec![];
        // Innermost module first: its path and the brace depth of its body.
        let mut scopes: Vec<(Vec<String>, usize)> = vec![(base.clone(), 0)];
        self.modules.entry(base.clone()).or_default().file = file.to_string();
        let mut depth = 0;
        let mut attr_path: Option<String> = None;
        let mut i = 0;
        let ident = |k: usize| match toks.get(k) {
            Some((Tok::Ident(s), _)) => Some(s.as_str()),
            _ => None,
        };
        while i < toks.len() {
            let (tok, line) = (&toks[i].0, toks[i].1);
            let (module, body) = scopes.last().cloned().expect("a scope");
            let item_level = depth == body;
            let prev_sep = i > 0 && toks[i - 1].0 == Tok::Sep;
            match tok {
                Tok::Punct('{') => {
                    depth += 1;
                    i += 1;
                    continue;
                }
                Tok::Punct('}') => {
                    depth -= 1;
                    if scopes.len() > 1 && depth < scopes.last().expect("a scope").1 {
                        scopes.pop();
                    }
                    i += 1;
                    continue;
                }
                Tok::Punct('#') if ident(i + 2) == Some("path") => {
                    // #[path = "x.rs"]
                    if let Some((Tok::Str(p), _)) = toks.get(i + 4) {
                        attr_path = Some(p.clone());
                    }
                }
                Tok::Str(s) => {
                    for p in paths_in_text(s) {
                        self.module(&module).paths.push((p, line));
                    }
                }
                Tok::Ident(w) if w == "mod" && !prev_sep => {
                    if let Some(name) = ident(i + 1) {
                        let child = [module.clone(), vec![name.to_string()]].concat();
                        match toks.get(i + 2).map(|t| &t.0) {
                            Some(Tok::Punct(';')) => {
                                let at = attr_path.take();
                                if let Some(f) = child_file(tree, file, name, at.as_deref()) {
                                    declared.push((child.clone(), f));
                                }
                                self.module(&module)
                                    .children
                                    .insert(name.to_string(), child);
                                i += 3;
                                continue;
                            }
                            Some(Tok::Punct('{')) => {
                                self.module(&module)
                                    .children
                                    .insert(name.to_string(), child.clone());
                                self.modules.entry(child.clone()).or_default().file =
                                    file.to_string();
                                depth += 1;
                                scopes.push((child, depth));
                                i += 3;
                                continue;
                            }
                            _ => {}
                        }
                    }
                }
                // `pub(in crate::a::b)` names a module for visibility: not an
                // import of it.
                Tok::Ident(w)
                    if w == "in"
                        && i >= 2
                        && toks[i - 1].0 == Tok::Punct('(')
                        && toks[i - 2].0 == Tok::Ident("pub".into()) =>
                {
                    i = (i..toks.len())
                        .find(|&k| toks[k].0 == Tok::Punct(')'))
                        .unwrap_or(toks.len());
                    continue;
                }
                Tok::Ident(w) if w == "use" && !prev_sep => {
                    let end = (i..toks.len())
                        .find(|&k| toks[k].0 == Tok::Punct(';'))
                        .unwrap_or(toks.len());
                    let mut uses = vec![];
                    use_tree(&toks[i + 1..end], &[], line, &mut uses);
                    self.module(&module).uses.extend(uses);
                    i = end + 1;
                    continue;
                }
                Tok::Ident(w) if w == "macro_rules" && item_level => {
                    if let Some(name) = ident(i + 2) {
                        self.module(&module).items.insert(name.to_string());
                    }
                }
                Tok::Ident(w) if ITEM_KEYWORDS.contains(&w.as_str()) && item_level => {
                    if let Some(name) = ident(i + 1).filter(|n| !ITEM_KEYWORDS.contains(n)) {
                        self.module(&module).items.insert(name.to_string());
                    }
                }
                Tok::Ident(w) if !prev_sep && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Sep) => {
                    let mut path = vec![w.clone()];
                    let mut k = i + 1;
                    while toks.get(k).map(|t| &t.0) == Some(&Tok::Sep) {
                        match ident(k + 1) {
                            Some(s) => path.push(s.to_string()),
                            None => break,
                        }
                        k += 2;
                    }
                    self.module(&module).paths.push((path, line));
                    i = k;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        declared
    }

    fn module(&mut self, path: &[String]) -> &mut Module {
        self.modules.entry(path.to_vec()).or_default()
    }

    /// The module `path` starts from, written in module `at`, and how many
    /// of its segments that took: `crate`, `super` (repeated), `self`;
    /// `None` for any other first segment.
    fn anchor(&self, at: &[String], path: &[String]) -> Option<(Vec<String>, usize)> {
        let mut cur = at.to_vec();
        let mut k = 0;
        match path.first().map(String::as_str) {
            Some("crate") => return Some((vec![], 1)),
            Some("self") => return Some((cur, 1)),
            _ => {}
        }
        while path.get(k).map(String::as_str) == Some("super") {
            cur.pop()?;
            k += 1;
        }
        (k > 0).then_some((cur, k))
    }

    /// Where `path`, written in module `at`, leads: the module it names or
    /// the module that defines the item it names; `None` outside the crate.
    fn resolve(&self, at: &[String], path: &[String], depth: usize) -> Option<Target> {
        if depth > 32 {
            return None;
        }
        let (mut cur, from) = match self.anchor(at, path) {
            Some(a) => a,
            // A name in scope in `at`: a child module, an item, or a use.
            None => (at.to_vec(), 0),
        };
        for (k, seg) in path.iter().enumerate().skip(from) {
            let m = self.modules.get(&cur)?;
            if let Some(child) = m.children.get(seg) {
                cur.clone_from(child);
                continue;
            }
            if m.items.contains(seg) {
                return Some(Target::Item(cur));
            }
            let found = match m.uses.iter().find(|u| u.name.as_deref() == Some(seg)) {
                // Named by a use: wherever that leads (`None`: another crate).
                Some(u) => Some(self.resolve(&cur, &u.path, depth + 1)),
                // Else through a glob import, if one has it.
                None => m
                    .uses
                    .iter()
                    .filter(|u| u.name.is_none())
                    .filter_map(|u| match self.resolve(&cur, &u.path, depth + 1) {
                        Some(Target::Module(g)) => self.lookup(&g, seg, depth + 1).map(Some),
                        _ => None,
                    })
                    .next(),
            };
            match found {
                Some(Some(Target::Module(m))) => cur = m,
                Some(Some(item)) => return Some(item),
                Some(None) => return None,
                // Not a name of the crate: another crate's path, or a
                // local; once inside the crate, the module reached.
                None if k == 0 => return None,
                None => return Some(Target::Module(cur)),
            }
        }
        Some(Target::Module(cur))
    }

    /// `name` as module `m` has it: a child, an item, a use or through a
    /// glob; `None` when `m` has no such name.
    fn lookup(&self, m: &[String], name: &str, depth: usize) -> Option<Target> {
        let module = self.modules.get(m)?;
        let has = module.children.contains_key(name)
            || module.items.contains(name)
            || module.uses.iter().any(|u| u.name.as_deref() == Some(name));
        if has {
            return self.resolve(m, &[name.to_string()], depth);
        }
        module
            .uses
            .iter()
            .filter(|u| u.name.is_none())
            .filter_map(|u| match self.resolve(m, &u.path, depth + 1) {
                Some(Target::Module(g)) if g.as_slice() != m => self.lookup(&g, name, depth + 1),
                _ => None,
            })
            .next()
    }

    /// Every import between two different files.
    pub fn edges(&self) -> Vec<Edge> {
        let mut out = BTreeSet::new();
        for (at, m) in &self.modules {
            let uses = m.uses.iter().map(|u| {
                // A glob takes the module it names, whatever it defines.
                (u.path.clone(), u.line, u.name.is_none())
            });
            let paths = m.paths.iter().map(|(p, l)| (p.clone(), *l, false));
            for (path, line, glob) in uses.chain(paths) {
                let Some(Target::Module(t) | Target::Item(t)) = self.resolve(at, &path, 0) else {
                    continue;
                };
                let Some(to) = self.modules.get(&t) else {
                    continue;
                };
                if to.file != m.file {
                    let mut written = path.join("::");
                    if glob {
                        written.push_str("::*");
                    }
                    out.insert(Edge {
                        from: m.file.clone(),
                        to: to.file.clone(),
                        line,
                        path: written,
                    });
                }
            }
        }
        out.into_iter().collect()
    }
}

/// `crate::`, `super::` and `self::` paths inside a string.
fn paths_in_text(s: &str) -> Vec<Vec<String>> {
    let mut out = vec![];
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(k) = s[from..].find(start) {
            let at = from + k;
            from = at + start.len();
            if s[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            {
                continue;
            }
            let text: String = s[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            out.push(
                text.split("::")
                    .filter(|x| !x.is_empty())
                    .map(str::to_string)
                    .collect(),
            );
        }
    }
    out
}

/// The bindings of a use tree (`a::b::{c, d as e, f::*, self}`).
fn use_tree(toks: &[(Tok, usize)], prefix: &[String], line: usize, out: &mut Vec<Use>) {
    let mut path = prefix.to_vec();
    let mut k = 0;
    if toks.first().map(|t| &t.0) == Some(&Tok::Sep) {
        k += 1;
    }
    while k < toks.len() {
        match &toks[k].0 {
            Tok::Ident(w) if w == "as" => {
                if let Some((Tok::Ident(alias), _)) = toks.get(k + 1) {
                    let path = trim_self(path);
                    out.push(Use {
                        name: Some(alias.clone()),
                        path,
                        line,
                    });
                }
                return;
            }
            Tok::Ident(w) => {
                path.push(w.clone());
                k += 1;
            }
            Tok::Sep => k += 1,
            Tok::Punct('*') => {
                out.push(Use {
                    name: None,
                    path,
                    line,
                });
                return;
            }
            Tok::Punct('{') => {
                // Split the group at its top-level commas.
                let mut depth = 0;
                let mut start = k + 1;
                for j in k + 1..toks.len() {
                    match toks[j].0 {
                        Tok::Punct('{') => depth += 1,
                        Tok::Punct('}') if depth == 0 => {
                            if start < j {
                                use_tree(&toks[start..j], &path, toks[start].1, out);
                            }
                            return;
                        }
                        Tok::Punct('}') => depth -= 1,
                        Tok::Punct(',') if depth == 0 => {
                            if start < j {
                                use_tree(&toks[start..j], &path, toks[start].1, out);
                            }
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            _ => k += 1,
        }
    }
    let path = trim_self(path);
    if let Some(name) = path.last().cloned() {
        out.push(Use {
            name: Some(name),
            path,
            line,
        });
    }
}

/// `a::b::self` names `a::b`.
fn trim_self(mut path: Vec<String>) -> Vec<String> {
    if path.len() > 1 && path.last().map(String::as_str) == Some("self") {
        path.pop();
    }
    path
}

/// The import circles of `edges`: each a set of two or more files that
/// reach each other (Tarjan's strongly connected components), with the
/// edges inside it.
pub fn circles(edges: &[Edge]) -> Vec<(Vec<String>, Vec<Edge>)> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in edges {
        next.entry(&e.from).or_default().insert(&e.to);
        next.entry(&e.to).or_default();
    }
    struct State<'a> {
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(v: &'a str, next: &BTreeMap<&'a str, BTreeSet<&'a str>>, s: &mut State<'a>) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for &w in &next[v] {
            if !s.index.contains_key(w) {
                visit(w, next, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = vec![];
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                scc.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                s.out.push(scc);
            }
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on: BTreeSet::new(),
        out: vec![],
    };
    for &v in next.keys() {
        if !s.index.contains_key(v) {
            visit(v, &next, &mut s);
        }
    }
    s.out.sort();
    s.out
        .into_iter()
        .map(|files| {
            let inside = edges
                .iter()
                .filter(|e| files.contains(&e.from) && files.contains(&e.to))
                .cloned()
                .collect();
            (files, inside)
        })
        .collect()
}
