//! Keeps the library's internal names out of the user's namespace. Every name that a
//! library file declares at module scope, but for the documented API ([`API`]), is renamed
//! in the library's own lines with a `gpu_heap_` prefix ([`prefixed`]); comments and the
//! user's lines are left as they are. So a user shader that includes `alloc.wgsl` sees
//! `malloc`, `free`, `heap_load`, ... and nothing else, and its own `hash` or `walk_step`
//! cannot collide with the library's.
//!
//! Renamed in library lines: every identifier token that names a module-scope declaration
//! of the library, except after `.` or `@` (member accesses, attributes) and where a
//! library struct declares its members (members are not module-scope names).

use std::collections::HashSet;

/// The WGSL names a user shader may use: functions, the status variable and constants.
pub(crate) const API: &[&str] = &[
    "malloc",
    "free",
    "heap_load",
    "heap_store",
    "heap_status",
    "HEAP_NULL",
    "HEAP_OK",
    "HEAP_OUT_OF_MEMORY",
    "HEAP_CONTENTION",
    "HEAP_INVALID_REQUEST",
    "HEAP_INVALID_FREE",
    "HEAP_MAX_ALLOC",
];

/// The name under which a library declaration reaches the composed text: `heap_meta` is
/// `gpu_heap_meta`, `walk_step` `gpu_heap_walk_step`, `STAT_WORDS` `GPU_HEAP_STAT_WORDS`,
/// `BsemWait` `GpuHeapBsemWait`; API names and names that already carry the prefix are
/// unchanged.
pub(crate) fn prefixed(name: &str) -> String {
    let has_prefix = ["gpu_heap_", "GPU_HEAP_", "GpuHeap"]
        .iter()
        .any(|p| name.starts_with(p));
    if has_prefix || API.contains(&name) {
        return name.to_owned();
    }
    if let Some(rest) = name.strip_prefix("heap_") {
        return format!("gpu_heap_{rest}");
    }
    if let Some(rest) = name.strip_prefix("HEAP_") {
        return format!("GPU_HEAP_{rest}");
    }
    let upper = name
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if upper {
        format!("GPU_HEAP_{name}")
    } else if name.starts_with(|c: char| c.is_ascii_uppercase()) {
        format!("GpuHeap{name}")
    } else {
        format!("gpu_heap_{name}")
    }
}

/// Prefixes the library's internal names in `lines`, where `library[i]` says whether line
/// `i` came from a library file. Lines keep their count, so origins stay valid.
pub(super) fn prefix_library_names(lines: &mut [String], library: &[bool]) {
    let tokens = tokenize(lines, library);
    let declared = module_scope_names(lines, &tokens);
    if declared.is_empty() {
        return;
    }
    let mut in_struct = false;
    let mut renames: Vec<(usize, usize, usize, String)> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.kind == Kind::Close && t.depth == 0 {
            in_struct = false;
        }
        if t.kind != Kind::Ident {
            continue;
        }
        let text = &lines[t.line][t.start..t.end];
        if t.depth == 0 && text == "struct" {
            in_struct = true;
        }
        let after = |k: Kind| i > 0 && tokens[i - 1].kind == k;
        let member_decl =
            in_struct && t.depth == 1 && tokens.get(i + 1).is_some_and(|n| n.kind == Kind::Colon);
        if declared.contains(text) && !after(Kind::Dot) && !after(Kind::At) && !member_decl {
            renames.push((t.line, t.start, t.end, prefixed(text)));
        }
    }
    // From the last rename back, so that the byte offsets of earlier ones stay valid.
    for (line, start, end, name) in renames.into_iter().rev() {
        lines[line].replace_range(start..end, &name);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Ident,
    Open,
    Close,
    Dot,
    At,
    Colon,
    Less,
    Greater,
    Other,
}

struct Token {
    line: usize,
    start: usize,
    end: usize,
    kind: Kind,
    /// Braces open around the token (a brace counts as outside itself).
    depth: u32,
}

/// The tokens of the library lines that matter here (comments and literals skipped).
fn tokenize(lines: &[String], library: &[bool]) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut block_comments = 0u32;
    let mut depth = 0u32;
    for (line, text) in lines.iter().enumerate() {
        if !library[line] {
            continue;
        }
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            let next = bytes.get(i + 1).copied();
            if block_comments > 0 {
                if c == b'*' && next == Some(b'/') {
                    block_comments -= 1;
                    i += 2;
                } else if c == b'/' && next == Some(b'*') {
                    block_comments += 1;
                    i += 2;
                } else {
                    i += 1;
                }
                continue;
            }
            if c == b'/' && next == Some(b'/') {
                break;
            }
            if c == b'/' && next == Some(b'*') {
                block_comments += 1;
                i += 2;
                continue;
            }
            let start = i;
            let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
            if c.is_ascii_digit() {
                while i < bytes.len() && (word(bytes[i]) || bytes[i] == b'.') {
                    i += 1;
                }
                continue;
            }
            let kind = if word(c) {
                while i < bytes.len() && word(bytes[i]) {
                    i += 1;
                }
                Kind::Ident
            } else {
                i += 1;
                match c {
                    b'{' => Kind::Open,
                    b'}' => Kind::Close,
                    b'.' => Kind::Dot,
                    b'@' => Kind::At,
                    b':' => Kind::Colon,
                    b'<' => Kind::Less,
                    b'>' => Kind::Greater,
                    b if b.is_ascii_whitespace() => continue,
                    _ => Kind::Other,
                }
            };
            if kind == Kind::Close {
                depth = depth.saturating_sub(1);
            }
            tokens.push(Token {
                line,
                start,
                end: i,
                kind,
                depth,
            });
            if kind == Kind::Open {
                depth += 1;
            }
        }
    }
    tokens
}

/// Names declared at module scope: `fn`, `var` (with or without `<...>`), `const`,
/// `override`, `struct` and `alias` followed by a name, outside any braces.
fn module_scope_names(lines: &[String], tokens: &[Token]) -> HashSet<String> {
    let text = |t: &Token| &lines[t.line][t.start..t.end];
    let mut names = HashSet::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        i += 1;
        let keyword = ["fn", "var", "const", "override", "struct", "alias"];
        if t.kind != Kind::Ident || t.depth != 0 || !keyword.contains(&text(t)) {
            continue;
        }
        // var<storage, read_write> name: skip the address space and access mode.
        if tokens.get(i).is_some_and(|n| n.kind == Kind::Less) {
            while i < tokens.len() && tokens[i].kind != Kind::Greater {
                i += 1;
            }
            i += 1;
        }
        if let Some(name) = tokens.get(i).filter(|n| n.kind == Kind::Ident) {
            names.insert(text(name).to_owned());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix(library: &str, user: &str) -> String {
        let mut lines: Vec<String> = library
            .lines()
            .chain(user.lines())
            .map(String::from)
            .collect();
        let marks: Vec<bool> = (0..lines.len())
            .map(|i| i < library.lines().count())
            .collect();
        prefix_library_names(&mut lines, &marks);
        lines.join("\n")
    }

    #[test]
    fn names_get_the_prefix_once() {
        assert_eq!(prefixed("walk_step"), "gpu_heap_walk_step");
        assert_eq!(prefixed("heap_meta"), "gpu_heap_meta");
        assert_eq!(prefixed("STAT_WORDS"), "GPU_HEAP_STAT_WORDS");
        assert_eq!(prefixed("HEAP_COMMITTED"), "GPU_HEAP_COMMITTED");
        assert_eq!(prefixed("BsemWait"), "GpuHeapBsemWait");
        assert_eq!(prefixed("gpu_heap_init"), "gpu_heap_init");
        assert_eq!(prefixed("malloc"), "malloc");
        assert_eq!(prefixed("HEAP_OK"), "HEAP_OK");
    }

    #[test]
    fn library_declarations_are_renamed_in_library_lines_only() {
        let library = "\
const WORDS: u32 = 4u; // WORDS in a comment stays
@group(0) @binding(0) var<storage, read_write> heap_meta: array<atomic<u32>>;
struct Wait { phase: u32, hash: u32 }
fn hash(x: u32) -> u32 { let w = Wait(x, WORDS); return w.hash + w.phase + 0x1fu; }
/* hash */ fn malloc(size: u32) -> u32 { return hash(size) + atomicLoad(&heap_meta[0]); }";
        let user = "fn hash(x: u32) -> u32 { return malloc(x) + WORDS; }";
        let out = prefix(library, user);
        assert_eq!(
            out,
            "\
const GPU_HEAP_WORDS: u32 = 4u; // WORDS in a comment stays
@group(0) @binding(0) var<storage, read_write> gpu_heap_meta: array<atomic<u32>>;
struct GpuHeapWait { phase: u32, hash: u32 }
fn gpu_heap_hash(x: u32) -> u32 { let w = GpuHeapWait(x, GPU_HEAP_WORDS); return w.hash + w.phase + 0x1fu; }
/* hash */ fn malloc(size: u32) -> u32 { return gpu_heap_hash(size) + atomicLoad(&gpu_heap_meta[0]); }
fn hash(x: u32) -> u32 { return malloc(x) + WORDS; }"
        );
    }
}
