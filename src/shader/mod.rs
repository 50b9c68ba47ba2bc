//! The WGSL include preprocessor and the composition of user shaders.
//!
//! Directives (a subset of naga_oil's, one per line, `#` first on the line):
//! `#include "path"`, `#define NAME`, `#ifdef NAME`, `#ifndef NAME`, `#else`, `#endif`.
//! Any other directive, a missing include or an unbalanced conditional is an error.
//!
//! `#include "x"` looks for `x` next to the including file (on disk, or in the library when
//! the includer is a library file), then among the sources registered with
//! [`Composer::add_source`], then in gpu-heap's built-in shader library. Each file is
//! included once; later includes of it are ignored. `enable` directives are hoisted to the
//! top of the composed text, since WGSL wants them before any declaration.
//!
//! Every line of the composed text remembers where it came from, so naga's parse and
//! validation errors are reported at the original file and line.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod composed;
mod library;
mod prefix;

pub use composed::{ComposedShader, ShaderError, SourceLocation};
use library::LIBRARY;
pub(crate) use prefix::prefixed;
pub(crate) use prefix::API;

/// Prefix under which library files appear in error messages.
const LIBRARY_PREFIX: &str = "gpu-heap/";

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum SourceId {
    Library(String),
    Registered(String),
    Disk(PathBuf),
}

impl SourceId {
    fn display(&self) -> String {
        match self {
            SourceId::Library(p) => format!("{LIBRARY_PREFIX}{p}"),
            SourceId::Registered(name) => name.clone(),
            SourceId::Disk(p) => p.display().to_string(),
        }
    }
}

/// Composes WGSL sources with `#include` and conditionals.
#[derive(Clone, Debug, Default)]
pub struct Composer {
    generated: HashMap<String, String>,
    registered: HashMap<String, String>,
    defines: HashSet<String>,
}

impl Composer {
    /// A composer with the built-in library only: it composes your own sources and library
    /// modules, but `alloc.wgsl` needs a heap's configuration, which
    /// [`crate::GpuHeap::composer`] and [`crate::composer`] add.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a library file generated at run time (the heap's configuration).
    pub(crate) fn with_generated(mut self, path: &str, text: String) -> Self {
        self.generated.insert(path.to_owned(), text);
        self
    }

    /// Registers an in-memory source that `#include "name"` finds.
    pub fn add_source(&mut self, name: impl Into<String>, text: impl Into<String>) -> &mut Self {
        self.registered.insert(name.into(), text.into());
        self
    }

    /// Defines a name for `#ifdef`, as `#define NAME` would.
    pub fn define(&mut self, name: impl Into<String>) -> &mut Self {
        self.defines.insert(name.into());
        self
    }

    /// Composes `text`, shown in errors as `name`; its includes resolve among the
    /// registered sources and the library (use [`Self::compose_file`] for includes on disk).
    pub fn compose_str(&self, name: &str, text: &str) -> Result<ComposedShader, ShaderError> {
        self.compose_root(SourceId::Registered(name.to_owned()), text.to_owned())
    }

    /// Composes the file at `path`; its includes resolve next to it first.
    pub fn compose_file(&self, path: impl AsRef<Path>) -> Result<ComposedShader, ShaderError> {
        let path = normalize_disk(path.as_ref());
        let text = read_disk(&path)?;
        self.compose_root(SourceId::Disk(path), text)
    }

    /// Composes a file of the built-in library (e.g. `alloc.wgsl`).
    pub fn compose_library(&self, path: &str) -> Result<ComposedShader, ShaderError> {
        let text = self
            .library_text(path)
            .ok_or_else(|| ShaderError::IncludeNotFound {
                at: SourceLocation {
                    file: "<gpu-heap>".into(),
                    line: 0,
                    column: 0,
                },
                path: path.to_owned(),
            })?;
        self.compose_root(SourceId::Library(path.to_owned()), text)
    }

    fn library_text(&self, path: &str) -> Option<String> {
        if path == crate::meta::SHARED_WGSL_PATH {
            return Some(crate::meta::shared_wgsl());
        }
        self.generated.get(path).cloned().or_else(|| {
            LIBRARY
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, t)| (*t).to_owned())
        })
    }

    fn compose_root(&self, id: SourceId, text: String) -> Result<ComposedShader, ShaderError> {
        let mut state = ComposeState {
            defines: self.defines.clone(),
            ..ComposeState::default()
        };
        state.included.insert(id.clone());
        self.expand(&id, &text, &mut state)?;
        let (mut lines, library): (Vec<String>, Vec<bool>) = state
            .body
            .iter()
            .map(|l| (l.text.clone(), l.library))
            .unzip();
        prefix::prefix_library_names(&mut lines, &library);
        let mut source = String::new();
        let mut origins = Vec::new();
        let enables = state.enables.iter().map(|(l, at)| (l, at));
        let body = lines.iter().zip(state.body.iter().map(|l| &l.at));
        for (line, at) in enables.chain(body) {
            source.push_str(line);
            source.push('\n');
            origins.push(at.clone());
        }
        Ok(ComposedShader { source, origins })
    }

    fn resolve(&self, from: &SourceId, path: &str) -> Option<(SourceId, String)> {
        match from {
            SourceId::Disk(p) => {
                let candidate = p.parent().unwrap_or(Path::new("")).join(path);
                if candidate.is_file() {
                    let text = std::fs::read_to_string(&candidate).ok()?;
                    return Some((SourceId::Disk(normalize_disk(&candidate)), text));
                }
            }
            SourceId::Library(p) => {
                let dir = p.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
                let joined = normalize_library(dir, path);
                if let Some(text) = self.library_text(&joined) {
                    return Some((SourceId::Library(joined), text));
                }
            }
            SourceId::Registered(_) => {}
        }
        if let Some(text) = self.registered.get(path) {
            return Some((SourceId::Registered(path.to_owned()), text.clone()));
        }
        let joined = normalize_library("", path);
        self.library_text(&joined)
            .map(|text| (SourceId::Library(joined), text))
    }

    fn expand(&self, id: &SourceId, text: &str, st: &mut ComposeState) -> Result<(), ShaderError> {
        let file: Arc<str> = id.display().into();
        let depth = st.conditions.len();
        for (index, raw) in text.lines().enumerate() {
            let at = SourceLocation {
                file: file.clone(),
                line: index as u32 + 1,
                column: 0,
            };
            let trimmed = raw.trim_start();
            let active = st.conditions.iter().all(|c| c.active);
            let Some(directive) = trimmed.strip_prefix('#') else {
                if active {
                    if is_enable(trimmed) {
                        if !st.enables.iter().any(|(l, _)| l.trim() == trimmed.trim()) {
                            st.enables.push((trimmed.trim().to_owned(), at));
                        }
                    } else {
                        st.body.push(BodyLine {
                            text: raw.to_owned(),
                            at,
                            library: matches!(id, SourceId::Library(_)),
                        });
                    }
                }
                continue;
            };
            let directive = strip_line_comment(directive).trim();
            let (word, arg) = directive
                .split_once(char::is_whitespace)
                .map(|(w, a)| (w, a.trim()))
                .unwrap_or((directive, ""));
            let error = |message: String| ShaderError::Directive {
                at: at.clone(),
                message,
            };
            match word {
                "ifdef" | "ifndef" => {
                    let name = single_name(arg).ok_or_else(|| {
                        error(format!("#{word} needs exactly one name, found \"{arg}\""))
                    })?;
                    let defined = st.defines.contains(name);
                    st.conditions.push(Condition {
                        active: defined == (word == "ifdef"),
                        seen_else: false,
                        opened_at: at.clone(),
                    });
                }
                "else" => {
                    if st.conditions.len() <= depth {
                        return Err(error("#else without #ifdef or #ifndef".into()));
                    }
                    let top = st.conditions.last_mut().expect("checked above");
                    if top.seen_else {
                        return Err(error("second #else for one #ifdef/#ifndef".into()));
                    }
                    top.seen_else = true;
                    top.active = !top.active;
                }
                "endif" => {
                    if st.conditions.len() <= depth {
                        return Err(error("#endif without #ifdef or #ifndef".into()));
                    }
                    st.conditions.pop();
                }
                "define" if active => {
                    let name = single_name(arg).ok_or_else(|| {
                        error(format!(
                            "#define takes one name (values are not supported), found \"{arg}\""
                        ))
                    })?;
                    st.defines.insert(name.to_owned());
                }
                "include" if active => {
                    let path = arg
                        .strip_prefix('"')
                        .and_then(|a| a.strip_suffix('"'))
                        .filter(|p| !p.is_empty())
                        .ok_or_else(|| {
                            error(format!("#include wants a quoted path, found \"{arg}\""))
                        })?;
                    let (child, child_text) = self.resolve(id, path).ok_or_else(|| {
                        if path.contains("generated/") && self.generated.is_empty() {
                            // alloc.wgsl without a heap: say where a heap's composer is.
                            error(format!(
                                "\"{path}\" is generated for a heap: compose alloc.wgsl with \
                                 GpuHeap::composer() or gpu_heap::composer(config, limits, \
                                 features); Composer::new() has the library only"
                            ))
                        } else {
                            ShaderError::IncludeNotFound {
                                at: at.clone(),
                                path: path.to_owned(),
                            }
                        }
                    })?;
                    if st.included.insert(child.clone()) {
                        self.expand(&child, &child_text, st)?;
                    }
                }
                "define" | "include" => {}
                _ => return Err(error(format!("unknown directive #{word}"))),
            }
        }
        if st.conditions.len() > depth {
            let open = st.conditions.last().expect("checked above");
            return Err(ShaderError::Directive {
                at: open.opened_at.clone(),
                message: "#ifdef/#ifndef without #endif in the same file".into(),
            });
        }
        Ok(())
    }
}

#[derive(Default)]
struct ComposeState {
    defines: HashSet<String>,
    included: HashSet<SourceId>,
    conditions: Vec<Condition>,
    enables: Vec<(String, SourceLocation)>,
    body: Vec<BodyLine>,
}

struct BodyLine {
    text: String,
    at: SourceLocation,
    /// From a file of the library (built in or generated), whose internal names are
    /// prefixed (prefix.rs).
    library: bool,
}

struct Condition {
    active: bool,
    seen_else: bool,
    opened_at: SourceLocation,
}

fn is_enable(line: &str) -> bool {
    line.strip_prefix("enable")
        .is_some_and(|rest| rest.starts_with(char::is_whitespace))
}

fn strip_line_comment(s: &str) -> &str {
    s.split_once("//").map(|(a, _)| a).unwrap_or(s)
}

fn single_name(arg: &str) -> Option<&str> {
    let valid = !arg.is_empty()
        && arg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !arg.starts_with(|c: char| c.is_ascii_digit());
    valid.then_some(arg)
}

fn read_disk(path: &Path) -> Result<String, ShaderError> {
    std::fs::read_to_string(path).map_err(|source| ShaderError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Resolves `.` and `..` lexically, so one file reached by two relative paths is included
/// once and errors show the path as the user wrote it, not an absolute one.
fn normalize_disk(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Joins a library path to a directory, resolving `.` and `..`.
fn normalize_library(dir: &str, path: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    #[test]
    fn alloc_without_a_heap_says_where_the_heaps_composer_is() {
        let err = Composer::new()
            .compose_str("user.wgsl", "#include \"alloc.wgsl\"\n")
            .unwrap_err();
        assert!(
            matches!(&err, ShaderError::Directive { message, .. } if message.contains("GpuHeap::composer()")),
            "{err}"
        );
    }

    use super::*;

    #[test]
    fn library_paths_normalize() {
        assert_eq!(normalize_library("core", "../alloc.wgsl"), "alloc.wgsl");
        assert_eq!(normalize_library("", "./core/hash.wgsl"), "core/hash.wgsl");
        assert_eq!(normalize_library("a/b", "c.wgsl"), "a/b/c.wgsl");
    }

    #[test]
    fn conditionals_select_lines_and_keep_origins() {
        let mut c = Composer::new();
        c.define("A");
        c.add_source("inc.wgsl", "const FROM_INC: u32 = 1u;\n");
        let text = "#ifdef A\nconst X: u32 = 1u;\n#else\nconst X: u32 = 2u;\n#endif\n\
                    #ifndef B\n#include \"inc.wgsl\"\n#endif\n#include \"inc.wgsl\"\n";
        let s = c.compose_str("main.wgsl", text).unwrap();
        assert_eq!(
            s.source(),
            "const X: u32 = 1u;\nconst FROM_INC: u32 = 1u;\n"
        );
        assert_eq!(s.origin(1).unwrap().to_string(), "main.wgsl:2");
        assert_eq!(s.origin(2).unwrap().to_string(), "inc.wgsl:1");
        s.validate().unwrap();
    }

    #[test]
    fn enables_are_hoisted_once() {
        let mut c = Composer::new();
        c.add_source("a.wgsl", "enable f16;\nconst A: f16 = 1h;\n");
        let s = c
            .compose_str(
                "m.wgsl",
                "const B: u32 = 1u;\n#include \"a.wgsl\"\nenable f16;\n",
            )
            .unwrap();
        assert!(s.source().starts_with("enable f16;\nconst B"));
        assert_eq!(s.source().matches("enable").count(), 1);
    }

    #[test]
    fn directive_errors_are_hard_errors() {
        let c = Composer::new();
        for (text, expected) in [
            ("#pragma once\n", "m.wgsl:1: unknown directive #pragma"),
            ("#endif\n", "m.wgsl:1: #endif without #ifdef or #ifndef"),
            (
                "\n#ifdef X\n",
                "m.wgsl:2: #ifdef/#ifndef without #endif in the same file",
            ),
            (
                "#define X 3\n",
                "m.wgsl:1: #define takes one name (values are not supported), found \"X 3\"",
            ),
            (
                "#include nope.wgsl\n",
                "m.wgsl:1: #include wants a quoted path, found \"nope.wgsl\"",
            ),
        ] {
            let e = c.compose_str("m.wgsl", text).unwrap_err();
            assert_eq!(e.to_string(), expected);
        }
        let e = c
            .compose_str("m.wgsl", "\n\n#include \"missing.wgsl\"\n")
            .unwrap_err();
        assert!(
            matches!(e, ShaderError::IncludeNotFound { ref at, .. } if at.line == 3),
            "{e}"
        );
    }
}
